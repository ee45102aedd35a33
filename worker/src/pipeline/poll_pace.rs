//! How long a caught-up worker waits before it looks for a new snapshot again.
//!
//! A table being written commits again soon, and the wait for the next look is most of a
//! commit's way into MySQL (the read and the write of a small snapshot take tens of ms). So
//! while snapshots keep coming (one arrived within the last two `pollInterval`s) the worker looks
//! five times as often, every `pollInterval / 5` (200 ms at the default 1 s); an idle table is
//! looked at every `pollInterval`, as configured, which bounds the requests an idle sync makes to
//! its storage (each look reads the `LATEST` hint and asks whether the next snapshot exists).

use std::time::{Duration, Instant};

/// How much more often an active table is looked at.
const ACTIVE_SPEEDUP: u32 = 5;
/// How many `pollInterval`s without a snapshot make a table idle again.
const ACTIVE_FOR_INTERVALS: u32 = 2;
/// The shortest wait, whatever the interval: a look is a request to the storage.
const MIN_WAIT: Duration = Duration::from_millis(10);

pub struct PollPace {
    interval: Duration,
    last_arrival: Option<Instant>,
}

impl PollPace {
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            last_arrival: None,
        }
    }

    /// A new snapshot was read at `now`.
    pub fn arrived(&mut self, now: Instant) {
        self.last_arrival = Some(now);
    }

    /// The wait before the next look, at `now`.
    pub fn wait(&self, now: Instant) -> Duration {
        let active = self
            .last_arrival
            .is_some_and(|at| now.duration_since(at) < self.interval * ACTIVE_FOR_INTERVALS);
        let wait = match active {
            true => self.interval / ACTIVE_SPEEDUP,
            false => self.interval,
        };
        wait.max(MIN_WAIT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_that_keeps_committing_is_looked_at_five_times_as_often_until_it_is_idle() {
        let t0 = Instant::now();
        let mut pace = PollPace::new(Duration::from_secs(1));
        assert_eq!(pace.wait(t0), Duration::from_secs(1), "nothing arrived yet");
        pace.arrived(t0);
        assert_eq!(pace.wait(t0), Duration::from_millis(200));
        assert_eq!(
            pace.wait(t0 + Duration::from_millis(1900)),
            Duration::from_millis(200)
        );
        assert_eq!(
            pace.wait(t0 + Duration::from_secs(2)),
            Duration::from_secs(1),
            "two intervals without a snapshot: idle"
        );
        let fast = PollPace::new(Duration::from_millis(20));
        assert_eq!(fast.wait(t0), Duration::from_millis(20));
        let mut fast = fast;
        fast.arrived(t0);
        assert_eq!(fast.wait(t0), MIN_WAIT, "never below the floor");
    }
}
