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

/// How long a lost server is waited for (reconnecting with backoff) before the flush fails: a
/// restart or failover takes seconds to minutes, and exiting would only restart the worker.
pub const MAX_OUTAGE: Duration = Duration::from_secs(300);

/// Runs `attempt` until it succeeds or fails permanently. Lock conflicts are retried
/// `max_retries` times; a lost connection is retried (reconnecting) for up to [`MAX_OUTAGE`].
/// `on_retry(attempt, failure, wait)` is told before each wait.
pub async fn with_retries<T, Fut>(
    max_retries: u32,
    mut attempt: impl FnMut() -> Fut,
    on_retry: impl Fn(u32, &Failure, Duration),
) -> Result<T, Failure>
where
    Fut: Future<Output = Result<T, Failure>>,
{
    let (mut lock_retries, mut attempts) = (0, 0);
    let mut outage: Option<std::time::Instant> = None;
    loop {
        let failure = match attempt().await {
            Ok(v) => return Ok(v),
            Err(failure) => failure,
        };
        let retry = match transient_kind(&failure.error) {
            Some(Transient::ConnectionLost) => {
                outage.get_or_insert_with(std::time::Instant::now).elapsed() < MAX_OUTAGE
            }
            Some(Transient::Conflict) => {
                lock_retries += 1;
                lock_retries <= max_retries
            }
            None => false,
        };
        if !retry {
            return Err(failure);
        }
        attempts += 1;
        let wait = backoff(attempts);
        on_retry(attempts, &failure, wait);
        tokio::time::sleep(wait).await;
    }
}

/// Why a failure may pass with a retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transient {
    /// Deadlock, lock wait timeout: another transaction was in the way.
    Conflict,
    /// The server went away or is restarting.
    ConnectionLost,
}

/// Deadlock (1213), lock wait timeout (1205), a server shutting down or killing the connection
/// (1053, 1927) and a lost connection pass with a retry; everything else (bad data, missing
/// privileges, …) fails fast. "Gone away" and "lost connection during query" (2006, 2013) are
/// client-side codes that `mysql_async` never reports as server errors: they arrive as I/O
/// errors or a closed connection.
pub fn is_transient(err: &mysql_async::Error) -> bool {
    transient_kind(err).is_some()
}

pub fn transient_kind(err: &mysql_async::Error) -> Option<Transient> {
    match err {
        mysql_async::Error::Server(e) => match e.code {
            1205 | 1213 => Some(Transient::Conflict),
            1927 | 1053 => Some(Transient::ConnectionLost),
            _ => None,
        },
        mysql_async::Error::Io(_) => Some(Transient::ConnectionLost),
        mysql_async::Error::Driver(
            mysql_async::DriverError::ConnectionClosed | mysql_async::DriverError::PoolDisconnected,
        ) => Some(Transient::ConnectionLost),
        _ => None,
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
        let reset = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
        assert!(
            is_transient(&mysql_async::Error::Io(reset.into())),
            "a lost connection"
        );
        assert!(is_transient(&mysql_async::Error::Driver(
            mysql_async::DriverError::ConnectionClosed
        )));
        assert!(backoff(0) < backoff(1) && backoff(20) == Duration::from_secs(5));
    }
}
