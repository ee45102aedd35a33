//! Reading a plan's splits into the buffer: decode (mapping), reduce (buffer), and flush
//! whenever the flush policy says so. The read point follows the last record read.

use arrow_array::RecordBatch;
use futures::StreamExt;
use pms_crds::contract::Position;
use tracing::warn;

use super::flush_policy::OnBound;
use super::Pipeline;
use crate::error::Result;
use crate::eta::EtaLine;
use crate::mapping::{decode_batch, Change, RowKind};
use crate::source::SnapshotPlan;

impl Pipeline {
    /// Reads a plan's splits in order from `from` (the rows before it were written by an
    /// earlier run), returning early when a stop is asked for.
    pub(super) async fn read_plan(
        &mut self,
        plan: &SnapshotPlan,
        from: Position,
        mut eta: Option<&mut EtaLine>,
    ) -> Result<()> {
        let from = plan.resume_at(from);
        for split in from.split as usize..plan.len() {
            let mut skip = if split == from.split as usize {
                from.row
            } else {
                0
            };
            let mut position = Position {
                split: split as u32,
                row: skip,
                ..Position::START
            };
            self.read_to = Some(plan.point_at(position));
            let bucket = plan.bucket(split);
            let mut batches = self.source.read_split(plan, split).await?;
            while let Some(batch) = batches.next().await {
                let mut batch = batch?;
                if skip > 0 {
                    let n = (skip as usize).min(batch.num_rows());
                    batch = batch.slice(n, batch.num_rows() - n);
                    skip -= n as u64;
                }
                if let Some(eta) = eta.as_deref_mut() {
                    eta.add(batch.num_rows() as u64);
                    self.metrics.full_read_rows.add(batch.num_rows() as i64);
                }
                self.consume(&batch, plan, bucket, &mut position).await?;
                if self.stopping() {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Decodes a batch into the buffer, flushing whenever a bound or the interval says so.
    async fn consume(
        &mut self,
        batch: &RecordBatch,
        plan: &SnapshotPlan,
        bucket: i32,
        position: &mut Position,
    ) -> Result<()> {
        let keyed = !self.buffer.unique_keys();
        let decoded = decode_batch(
            batch,
            &self.layout,
            plan.snapshot_id,
            self.source.name(),
            keyed,
        )?;
        for mut d in decoded {
            d.change.bucket = bucket;
            d.change.order.1 = plan.sequence_at(*position, d.change.order.1);
            position.row += 1;
            self.read_to = Some(plan.point_at(*position));
            self.count_read(d.kind);
            // `-U` is the before-image of an update; the `+U` that follows carries the new row.
            // A merged full read leaves out the rows the filter doesn't keep (its sweep, if
            // any, removes those MySQL holds).
            let left_out = d.filtered_out && plan.is_full_read() && !plan.holds_versions();
            if d.kind != RowKind::UpdateBefore && !left_out {
                self.buffer_change(d.key, d.change).await?;
            }
        }
        self.batch_consumed().await
    }

    pub(super) fn count_read(&mut self, kind: RowKind) {
        self.records_read[kind.index()].inc();
        self.summary.records_read += 1;
    }

    /// Puts one change into the buffer; a bound it reaches may flush.
    pub(super) async fn buffer_change(&mut self, key: Vec<u8>, change: Change) -> Result<()> {
        self.policy.buffered();
        match self.buffer.push(key, change) {
            Some(bound) => self.bound_reached(bound).await,
            None => Ok(()),
        }
    }

    /// After a record batch: the flush interval may flush.
    pub(super) async fn batch_consumed(&mut self) -> Result<()> {
        pms_runtime::liveness::beat();
        if let Some(reason) = self.policy.after_batch() {
            self.flush(reason).await?;
        }
        self.metrics.buffer_bytes.set(self.buffer.bytes() as i64);
        Ok(())
    }

    async fn bound_reached(&mut self, bound: crate::buffer::Bound) -> Result<()> {
        let reason = match self.policy.on_bound(bound, &self.buffer) {
            OnBound::Wait => return Ok(()),
            OnBound::Flush(reason) => reason,
            OnBound::FlushPart(reason) => {
                warn!(read_to = ?self.read_to, input_records = self.buffer.input_records(), buffer_bytes = self.buffer.bytes(),
                      "snapshot too large for one transaction (sink.maxTransactionRows / maxBufferBytes): committing it in parts");
                self.metrics.visibility_fallbacks.inc();
                reason
            }
        };
        self.flush(reason).await?;
        if self.policy.checkpoint_due() {
            self.checkpoint().await?;
        }
        Ok(())
    }
}
