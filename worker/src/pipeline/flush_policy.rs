//! When to flush, in one place: the buffer's bounds, the flush interval, the ends of
//! snapshots, and the checkpoint interval, for both visibility modes.
//!
//! - `visibility: batch`: a bound or the interval flushes at once, mid-snapshot or not.
//! - `visibility: snapshot`: flushes happen at snapshot ends; only the memory bound or
//!   `maxTransactionRows` may split a snapshot (logged and counted by the caller).
//!
//! Time comes from a [`Clock`], so the interval rules are unit-tested without waiting.

use std::time::{Duration, Instant};

use pms_crds::{PaimonMysqlSyncSpec, Visibility};

use crate::buffer::{Bound, ChangeBuffer};

/// Why the buffer is flushed (the `reason` label of `pms_flushes_total`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlushReason {
    MaxRows,
    MaxBytes,
    Interval,
    /// No newer snapshot to read: write what we have rather than wait for the interval.
    CaughtUp,
    Checkpoint,
    Close,
}

impl FlushReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            FlushReason::MaxRows => "max_rows",
            FlushReason::MaxBytes => "max_bytes",
            FlushReason::Interval => "interval",
            FlushReason::CaughtUp => "caught_up",
            FlushReason::Checkpoint => "checkpoint",
            FlushReason::Close => "close",
        }
    }

    fn of(bound: Bound) -> Self {
        match bound {
            Bound::Rows => FlushReason::MaxRows,
            Bound::Bytes => FlushReason::MaxBytes,
        }
    }
}

pub trait Clock: Send + Sync {
    fn now(&self) -> Instant;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// What to do when the buffer reached a bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnBound {
    Flush(FlushReason),
    /// Snapshot visibility, but the snapshot is too large for one transaction: commit it in
    /// parts (the caller warns and counts `pms_visibility_fallbacks_total`).
    FlushPart(FlushReason),
    /// Snapshot visibility: keep buffering until the snapshot ends.
    Wait,
}

pub struct FlushPolicy<C: Clock = SystemClock> {
    snapshot_visibility: bool,
    flush_interval: Duration,
    max_transaction_rows: u64,
    checkpoint_interval: Duration,
    /// When the oldest change still in the buffer arrived.
    oldest_buffered: Option<Instant>,
    last_checkpoint: Instant,
    clock: C,
}

impl FlushPolicy<SystemClock> {
    pub fn new(spec: &PaimonMysqlSyncSpec) -> Self {
        Self::with_clock(spec, SystemClock)
    }
}

impl<C: Clock> FlushPolicy<C> {
    pub fn with_clock(spec: &PaimonMysqlSyncSpec, clock: C) -> Self {
        Self {
            snapshot_visibility: spec.sink.visibility == Visibility::Snapshot,
            flush_interval: spec.sink.flush_interval.0,
            max_transaction_rows: spec.sink.max_transaction_rows,
            checkpoint_interval: spec.checkpoint.interval.0,
            oldest_buffered: None,
            last_checkpoint: clock.now(),
            clock,
        }
    }

    /// Whether a flush may be a bulk load (no transaction spans a snapshot then).
    pub fn allows_bulk(&self) -> bool {
        !self.snapshot_visibility
    }

    /// A change entered the buffer.
    pub fn buffered(&mut self) {
        if self.oldest_buffered.is_none() {
            self.oldest_buffered = Some(self.clock.now());
        }
    }

    /// The buffer was handed to the writer.
    pub fn flushed(&mut self) {
        self.oldest_buffered = None;
    }

    pub fn checkpointed(&mut self) {
        self.last_checkpoint = self.clock.now();
    }

    pub fn checkpoint_due(&self) -> bool {
        self.clock.now() - self.last_checkpoint >= self.checkpoint_interval
    }

    pub fn on_bound(&self, bound: Bound, buffer: &ChangeBuffer) -> OnBound {
        if !self.snapshot_visibility {
            return OnBound::Flush(FlushReason::of(bound));
        }
        // Not `bound`: once maxRows is reached it is reported first, for every record.
        if buffer.bytes_reached() || buffer.input_records() >= self.max_transaction_rows {
            OnBound::FlushPart(FlushReason::of(bound))
        } else {
            OnBound::Wait
        }
    }

    /// After a batch of records was buffered (batch visibility: the interval may flush).
    pub fn after_batch(&self) -> Option<FlushReason> {
        (!self.snapshot_visibility && self.interval_elapsed()).then_some(FlushReason::Interval)
    }

    /// At the end of a snapshot (snapshot visibility: the bounds and the interval flush here).
    pub fn at_snapshot_end(&self, buffer: &ChangeBuffer) -> Option<FlushReason> {
        if !self.snapshot_visibility {
            None
        } else if buffer.rows_reached() {
            Some(FlushReason::MaxRows)
        } else if self.interval_elapsed() {
            Some(FlushReason::Interval)
        } else {
            None
        }
    }

    fn interval_elapsed(&self) -> bool {
        !self.flush_interval.is_zero()
            && self
                .oldest_buffered
                .is_some_and(|t| self.clock.now() - t >= self.flush_interval)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::mapping::{encode_key, Change, ChangeKind};
    use mysql_async::Value;

    #[derive(Clone)]
    struct FakeClock(Arc<Mutex<Instant>>);

    impl FakeClock {
        fn advance(&self, d: Duration) {
            *self.0.lock().unwrap() += d;
        }
    }

    impl Clock for FakeClock {
        fn now(&self) -> Instant {
            *self.0.lock().unwrap()
        }
    }

    fn policy(visibility: &str) -> (FlushPolicy<FakeClock>, FakeClock) {
        let yaml = format!(
            "source: {{warehouse: /w, database: d, table: t}}\n\
             sink: {{url: 'mysql://h/db', table: t, flushInterval: 1s, maxTransactionRows: 3, visibility: {visibility}}}\n\
             checkpoint: {{interval: 10s}}"
        );
        let spec: PaimonMysqlSyncSpec = serde_yaml::from_str(&yaml).unwrap();
        let clock = FakeClock(Arc::new(Mutex::new(Instant::now())));
        (FlushPolicy::with_clock(&spec, clock.clone()), clock)
    }

    fn push(buffer: &mut ChangeBuffer, id: i64) -> Option<Bound> {
        let mut key = Vec::new();
        encode_key(&[&Value::Int(id)], &mut key);
        let row = vec![Value::Int(id)];
        buffer.push(
            key,
            Change {
                kind: ChangeKind::Upsert,
                row,
                order: (1, id),
                bucket: 0,
            },
        )
    }

    #[test]
    fn batch_visibility_flushes_on_bounds_and_after_the_interval() {
        let (mut p, clock) = policy("batch");
        let buffer = ChangeBuffer::new(2, 1 << 20);
        assert_eq!(
            p.on_bound(Bound::Rows, &buffer),
            OnBound::Flush(FlushReason::MaxRows)
        );
        assert_eq!(p.after_batch(), None, "nothing buffered yet");
        p.buffered();
        clock.advance(Duration::from_millis(999));
        assert_eq!(p.after_batch(), None);
        clock.advance(Duration::from_millis(1));
        assert_eq!(p.after_batch(), Some(FlushReason::Interval));
        assert_eq!(
            p.at_snapshot_end(&buffer),
            None,
            "snapshot ends mean nothing here"
        );
        p.flushed();
        assert_eq!(p.after_batch(), None);
    }

    #[test]
    fn snapshot_visibility_waits_for_the_snapshot_end_unless_it_is_too_large() {
        let (mut p, clock) = policy("snapshot");
        let mut buffer = ChangeBuffer::new(2, 1 << 20);
        push(&mut buffer, 1);
        let bound = push(&mut buffer, 2).unwrap();
        assert_eq!(
            p.on_bound(bound, &buffer),
            OnBound::Wait,
            "maxRows alone never splits a snapshot"
        );
        assert_eq!(p.at_snapshot_end(&buffer), Some(FlushReason::MaxRows));
        let bound = push(&mut buffer, 3).unwrap();
        assert_eq!(
            p.on_bound(bound, &buffer),
            OnBound::FlushPart(FlushReason::MaxRows),
            "maxTransactionRows (3) splits it"
        );
        let mut small = ChangeBuffer::new(0, 1 << 20);
        push(&mut small, 1);
        p.buffered();
        clock.advance(Duration::from_secs(2));
        assert_eq!(
            p.after_batch(),
            None,
            "the interval waits for the snapshot end"
        );
        assert_eq!(p.at_snapshot_end(&small), Some(FlushReason::Interval));
        assert!(!p.allows_bulk());
    }

    #[test]
    fn checkpoints_follow_their_interval() {
        let (mut p, clock) = policy("batch");
        assert!(!p.checkpoint_due());
        clock.advance(Duration::from_secs(10));
        assert!(p.checkpoint_due());
        p.checkpointed();
        assert!(!p.checkpoint_due());
    }
}
