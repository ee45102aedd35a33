//! The flushes being written while the next batch is read. A flush whose keys may meet an
//! earlier one's waits for every write in flight, so changes of one key commit in order. Flushes
//! that can't meet overlap, up to [`MAX_WRITES_IN_FLIGHT`], each in its own transaction on its own
//! connection, so the server never waits for the next batch: a full read's (one row per key), and
//! the parts of one large snapshot whose keys differ (checked against the keys in flight).
//! `committed` follows the writes in the order they were sent: it is what MySQL holds for sure.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use pms_crds::contract::ReadPoint;

use super::flush_policy::FlushReason;
use crate::error::{Result, WorkerError};
use crate::failpoint;
use crate::metrics::Metrics;
use crate::sink::{MysqlSink, WriteRequest, MAX_WRITES_IN_FLIGHT};

/// Whether a write may go to MySQL while earlier ones are still in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlap {
    /// It waits for every write in flight.
    None,
    /// One row per key across these writes (a full read's): beside other such writes.
    Disjoint,
    /// Its changes all belong to this snapshot: beside the writes in flight of the same
    /// snapshot whose keys it doesn't share (readers see a state within that snapshot, as a
    /// flush of part of it shows already).
    WithinSnapshot(i64),
}

struct InFlight {
    task: tokio::task::JoinHandle<Result<()>>,
    /// The read point this write brings MySQL to.
    point: Option<ReadPoint>,
    reason: FlushReason,
    overlap: Overlap,
    /// Its key hashes, for a write `WithinSnapshot` (a collision only makes the next one wait).
    keys: HashSet<u64, foldhash::fast::RandomState>,
}

impl InFlight {
    /// Whether a write of `overlap` with these key hashes may be written beside this one.
    fn allows(&self, overlap: Overlap, keys: &[u64]) -> bool {
        match (overlap, self.overlap) {
            (Overlap::Disjoint, Overlap::Disjoint) => true,
            (Overlap::WithinSnapshot(a), Overlap::WithinSnapshot(b)) if a == b => {
                !keys.iter().any(|k| self.keys.contains(k))
            }
            _ => false,
        }
    }
}

pub struct Writer {
    sink: Arc<MysqlSink>,
    /// Oldest first.
    in_flight: VecDeque<InFlight>,
    committed: Option<ReadPoint>,
    metrics: Metrics,
}

impl Writer {
    /// `committed`: what MySQL held when this run started (the resumed checkpoint's point).
    pub fn new(sink: MysqlSink, committed: Option<ReadPoint>, metrics: Metrics) -> Self {
        Self {
            sink: Arc::new(sink),
            in_flight: VecDeque::new(),
            committed,
            metrics,
        }
    }

    pub fn sink(&self) -> &MysqlSink {
        &self.sink
    }

    pub fn committed(&self) -> Option<ReadPoint> {
        self.committed
    }

    /// A point that needs no write of its own to be true: the start of a full read (nothing
    /// of it yet), or a read point reached without a change to write (callers wait first).
    pub fn mark_committed(&mut self, point: ReadPoint) {
        self.committed = Some(point);
    }

    /// Starts this write in the background once the writes it must follow are done: all of
    /// them, unless its `overlap` allows it beside them (then only as many as keep
    /// [`MAX_WRITES_IN_FLIGHT`]).
    pub async fn send(
        &mut self,
        request: WriteRequest,
        point: Option<ReadPoint>,
        reason: FlushReason,
        overlap: Overlap,
    ) -> Result<()> {
        let keys = &request.batch.key_hashes;
        while self.in_flight.len() >= MAX_WRITES_IN_FLIGHT
            || !self.in_flight.iter().all(|f| f.allows(overlap, keys))
        {
            self.wait_oldest().await?;
        }
        let keys = match overlap {
            Overlap::WithinSnapshot(_) => keys.iter().copied().collect(),
            _ => HashSet::default(),
        };
        let sink = self.sink.clone();
        let in_flight = pms_runtime::liveness::write_started();
        let task = tokio::spawn(async move {
            // In flight for liveness until this task ends (done, failed or aborted).
            let _in_flight = in_flight;
            sink.write(&request).await?;
            failpoint::hit("after-commit-before-checkpoint");
            Ok(())
        });
        self.in_flight.push_back(InFlight {
            task,
            point,
            reason,
            overlap,
            keys,
        });
        Ok(())
    }

    /// Waits for every write in flight: afterwards `committed` is what MySQL holds.
    pub async fn wait(&mut self) -> Result<()> {
        while !self.in_flight.is_empty() {
            self.wait_oldest().await?;
        }
        Ok(())
    }

    /// Waits for the oldest write. When it failed, the later ones are stopped (their
    /// transactions roll back with their connections): a retry starts from `committed`.
    async fn wait_oldest(&mut self) -> Result<()> {
        let Some(f) = self.in_flight.pop_front() else {
            return Ok(());
        };
        let done = f
            .task
            .await
            .map_err(|e| WorkerError::Data(format!("the MySQL writer task failed: {e}")))
            .and_then(|r| r);
        if let Err(e) = done {
            for later in self.in_flight.drain(..) {
                later.task.abort();
            }
            return Err(e);
        }
        self.committed = f.point;
        self.metrics
            .flushes
            .with_label_values(&[f.reason.as_str()])
            .inc();
        Ok(())
    }

    pub async fn close(mut self) -> Result<()> {
        self.wait().await?;
        if let Ok(sink) = Arc::try_unwrap(self.sink) {
            sink.close().await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_flight(overlap: Overlap, keys: &[u64]) -> InFlight {
        InFlight {
            task: tokio::spawn(async { Ok(()) }),
            point: None,
            reason: FlushReason::MaxRows,
            overlap,
            keys: keys.iter().copied().collect(),
        }
    }

    #[tokio::test]
    async fn a_write_goes_beside_another_only_where_their_keys_cannot_meet() {
        let full_read = in_flight(Overlap::Disjoint, &[]);
        assert!(full_read.allows(Overlap::Disjoint, &[]));
        assert!(!full_read.allows(Overlap::WithinSnapshot(5), &[1]));
        assert!(!full_read.allows(Overlap::None, &[]));

        let part = in_flight(Overlap::WithinSnapshot(5), &[1, 2, 3]);
        assert!(part.allows(Overlap::WithinSnapshot(5), &[4, 5]));
        assert!(
            !part.allows(Overlap::WithinSnapshot(5), &[4, 3]),
            "key 3 meets"
        );
        assert!(
            !part.allows(Overlap::WithinSnapshot(6), &[4]),
            "another snapshot"
        );
        assert!(!part.allows(Overlap::Disjoint, &[]));
        assert!(!part.allows(Overlap::None, &[]));

        let changes = in_flight(Overlap::None, &[]);
        assert!(!changes.allows(Overlap::WithinSnapshot(5), &[9]));
        assert!(!changes.allows(Overlap::Disjoint, &[]));
    }
}
