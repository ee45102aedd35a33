//! The flush being written while the next batch is read. At most one is in flight, so commits
//! keep their order; `committed` is what MySQL holds for sure.

use std::sync::Arc;

use pms_crds::contract::ReadPoint;

use super::flush_policy::FlushReason;
use crate::error::{Result, WorkerError};
use crate::failpoint;
use crate::metrics::Metrics;
use crate::sink::{MysqlSink, WriteRequest};

struct InFlight {
    task: tokio::task::JoinHandle<Result<()>>,
    /// The read point this write brings MySQL to.
    point: Option<ReadPoint>,
    reason: FlushReason,
}

pub struct Writer {
    sink: Arc<MysqlSink>,
    in_flight: Option<InFlight>,
    committed: Option<ReadPoint>,
    metrics: Metrics,
}

impl Writer {
    /// `committed`: what MySQL held when this run started (the resumed checkpoint's point).
    pub fn new(sink: MysqlSink, committed: Option<ReadPoint>, metrics: Metrics) -> Self {
        Self {
            sink: Arc::new(sink),
            in_flight: None,
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

    /// Waits for the previous write, then starts this one in the background.
    pub async fn send(
        &mut self,
        request: WriteRequest,
        point: Option<ReadPoint>,
        reason: FlushReason,
    ) -> Result<()> {
        self.wait().await?;
        let sink = self.sink.clone();
        let task = tokio::spawn(async move {
            sink.write(&request).await?;
            failpoint::hit("after-commit-before-checkpoint");
            Ok(())
        });
        self.in_flight = Some(InFlight {
            task,
            point,
            reason,
        });
        Ok(())
    }

    /// Waits for the write in flight, if any: afterwards `committed` is what MySQL holds.
    pub async fn wait(&mut self) -> Result<()> {
        if let Some(f) = self.in_flight.take() {
            f.task
                .await
                .map_err(|e| WorkerError::Data(format!("the MySQL writer task failed: {e}")))??;
            self.committed = f.point;
            self.metrics
                .flushes
                .with_label_values(&[f.reason.as_str()])
                .inc();
        }
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
