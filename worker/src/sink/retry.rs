//! Retry as a wrapper around one attempt: which MySQL failures are worth retrying, and how
//! long to wait before the next try. An attempt is a whole transaction, so a retry never
//! re-runs half of one.

use std::future::Future;
use std::time::Duration;

/// A failed attempt: what was being done, the error, and the key of the failing row if known.
#[derive(Debug)]
pub struct Failure {
    pub action: &'static str,
    pub error: mysql_async::Error,
    pub key: Option<String>,
}

impl Failure {
    pub fn new(action: &'static str, error: mysql_async::Error) -> Self {
        Self {
            action,
            error,
            key: None,
        }
    }
}

/// Runs `attempt` until it succeeds, fails permanently, or `max_retries` retries of transient
/// failures are used up. `on_retry(attempt, failure, wait)` is told before each wait.
pub async fn with_retries<T, Fut>(
    max_retries: u32,
    mut attempt: impl FnMut() -> Fut,
    on_retry: impl Fn(u32, &Failure, Duration),
) -> Result<T, Failure>
where
    Fut: Future<Output = Result<T, Failure>>,
{
    let mut retries = 0;
    loop {
        match attempt().await {
            Err(failure) if is_transient(&failure.error) && retries < max_retries => {
                retries += 1;
                let wait = backoff(retries);
                on_retry(retries, &failure, wait);
                tokio::time::sleep(wait).await;
            }
            result => return result,
        }
    }
}

/// Deadlock (1213), lock wait timeout (1205) and a lost or gone connection (2006, 2013, I/O)
/// pass with a retry; everything else (bad data, missing privileges, …) fails fast.
pub fn is_transient(err: &mysql_async::Error) -> bool {
    match err {
        mysql_async::Error::Server(e) => matches!(e.code, 1205 | 1213 | 2006 | 2013 | 1927 | 1053),
        mysql_async::Error::Io(_) => true,
        mysql_async::Error::Driver(d) => matches!(
            d,
            mysql_async::DriverError::ConnectionClosed | mysql_async::DriverError::PoolDisconnected
        ),
        _ => false,
    }
}

/// Exponential backoff from 100 ms, capped at 5 s.
pub fn backoff(attempt: u32) -> Duration {
    Duration::from_millis((100u64 << attempt.min(6)).min(5_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(code: u16) -> mysql_async::Error {
        mysql_async::Error::Server(mysql_async::ServerError {
            code,
            message: String::new(),
            state: String::new(),
        })
    }

    #[test]
    fn classification() {
        assert!(is_transient(&server(1213)));
        assert!(is_transient(&server(1205)));
        assert!(!is_transient(&server(1264)), "out of range is a data error");
        assert!(!is_transient(&server(1045)), "access denied is permanent");
        assert!(backoff(0) < backoff(1) && backoff(20) == Duration::from_secs(5));
    }
}
