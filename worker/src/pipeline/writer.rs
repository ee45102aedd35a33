//! The flushes being written while the next batch is read. A flush whose keys may meet an
//! earlier one's waits for every write in flight, so changes of one key commit in order; flushes
//! of disjoint keys (the full read: one row per key) overlap, up to [`MAX_WRITES_IN_FLIGHT`], each in
//! its own transaction on its own connection, so the server never waits for the next batch.
//! `committed` follows the writes in the order they were sent: it is what MySQL holds for sure.

use std::collections::VecDeque;
use std::sync::Arc;

use pms_crds::contract::ReadPoint;

use super::flush_policy::FlushReason;
use crate::error::{Result, WorkerError};
use crate::failpoint;
use crate::metrics::Metrics;
use crate::sink::{MysqlSink, WriteRequest, MAX_WRITES_IN_FLIGHT};

struct InFlight {
    task: tokio::task::JoinHandle<Result<()>>,
    /// The read point this write brings MySQL to.
    point: Option<ReadPoint>,
    reason: FlushReason,
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
    /// them, unless its keys are `disjoint` from theirs (then only as many as keep
    /// [`MAX_WRITES_IN_FLIGHT`]).
    pub async fn send(
        &mut self,
        request: WriteRequest,
        point: Option<ReadPoint>,
        reason: FlushReason,
        disjoint: bool,
    ) -> Result<()> {
        let room = if disjoint {
            MAX_WRITES_IN_FLIGHT - 1
        } else {
            0
        };
        while self.in_flight.len() > room {
            self.wait_oldest().await?;
        }
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
