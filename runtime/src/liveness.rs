//! Liveness tied to progress: `/healthz` answers 503 once the process has made no progress for
//! `PMS_STALL_AFTER` (seconds, default 600): its loop has not ticked, or a write to MySQL has
//! been in flight, for that long (a lock that is never released, a hung connection). The
//! kubelet's liveness probe then restarts the worker, which resumes from its checkpoint. A
//! process that never beats (the operator) is always live.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The environment variable of the stall threshold, in seconds.
pub const ENV_STALL_AFTER: &str = "PMS_STALL_AFTER";
const DEFAULT_STALL_AFTER: Duration = Duration::from_secs(600);

/// Unix ms of the last tick (0: never).
static LAST_BEAT: AtomicU64 = AtomicU64::new(0);
/// The writes in flight: id → Unix ms of their start.
static WRITES: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());
static NEXT_WRITE: AtomicU64 = AtomicU64::new(0);

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Progress: a poll, a batch read, a write done.
pub fn beat() {
    LAST_BEAT.store(now_ms(), Ordering::Relaxed);
}

/// A write to MySQL in flight until the guard is dropped (done, failed or aborted).
pub struct WriteInFlight(u64);

pub fn write_started() -> WriteInFlight {
    let id = NEXT_WRITE.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut w) = WRITES.lock() {
        w.insert(id, now_ms());
    }
    WriteInFlight(id)
}

impl Drop for WriteInFlight {
    fn drop(&mut self) {
        if let Ok(mut w) = WRITES.lock() {
            w.remove(&self.0);
        }
        beat();
    }
}

fn stall_after() -> Duration {
    static AFTER: OnceLock<Duration> = OnceLock::new();
    *AFTER.get_or_init(|| {
        std::env::var(ENV_STALL_AFTER)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|s| *s > 0)
            .map_or(DEFAULT_STALL_AFTER, Duration::from_secs)
    })
}

/// Why the process counts as stalled, if it does.
pub fn stalled() -> Option<String> {
    stalled_at(
        now_ms(),
        LAST_BEAT.load(Ordering::Relaxed),
        WRITES
            .lock()
            .ok()
            .and_then(|w| w.values().min().copied())
            .unwrap_or(0),
        stall_after(),
    )
}

fn stalled_at(now: u64, last_beat: u64, write_since: u64, after: Duration) -> Option<String> {
    let limit = after.as_millis() as u64;
    let age = |t: u64| now.saturating_sub(t);
    if write_since > 0 && age(write_since) > limit {
        return Some(format!(
            "stalled: a write to MySQL has been in flight for {} s (more than {ENV_STALL_AFTER} = {} s)",
            age(write_since) / 1000,
            after.as_secs()
        ));
    }
    if last_beat > 0 && age(last_beat) > limit {
        return Some(format!(
            "stalled: no progress for {} s (more than {ENV_STALL_AFTER} = {} s)",
            age(last_beat) / 1000,
            after.as_secs()
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalled_when_the_loop_or_a_write_stands_still_longer_than_the_limit() {
        let after = Duration::from_secs(10);
        assert_eq!(stalled_at(100_000, 0, 0, after), None, "never beat: live");
        assert_eq!(stalled_at(100_000, 95_000, 0, after), None);
        let why = stalled_at(100_000, 80_000, 0, after).unwrap();
        assert!(why.contains("no progress for 20 s"), "{why}");
        let why = stalled_at(100_000, 99_000, 85_000, after).unwrap();
        assert!(
            why.contains("a write to MySQL has been in flight for 15 s"),
            "{why}"
        );
        assert_eq!(stalled_at(100_000, 99_000, 95_000, after), None);
    }
}
