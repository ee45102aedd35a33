//! Applying an OVERWRITE snapshot: the rows of the overwritten partitions after it are
//! upserted, and the keys they held before it and no longer hold are deleted. Both are ordered
//! as changes of that snapshot, so they win over every earlier change of the same key.
//!
//! The read point stays at the snapshot's start until it is done: a flush in the middle
//! commits part of it, and a restart applies it again from the start (idempotent, which is
//! why exactly-once delivery refuses it).

use tracing::info;

use super::key_pass::{KeptKeys, Pass};
use super::Pipeline;
use crate::error::{Result, WorkerError};
use crate::source::OverwritePlan;

impl Pipeline {
    pub(super) async fn apply_overwrite(&mut self, plan: &OverwritePlan) -> Result<()> {
        if self.checkpointer.joins_transactions() {
            // Parts of it committed before a crash would be applied again from the start.
            return Err(WorkerError::RebuildRequired {
                reason: pms_crds::contract::RebuildReason::Overwrite,
                message: format!(
                    "Paimon table {}: snapshot {} is an OVERWRITE commit; with delivery exactly-once it can't be applied without a \
                     part of it possibly applied twice after a crash, so the sync stops before applying it. \
                     Rebuild the target from a full read of the latest snapshot (`pms-worker rebuild`, or \
                     spec.rebuild under the operator), or sync with at-least-once",
                    self.source.name(),
                    plan.snapshot_id
                ),
            });
        }
        info!(
            snapshot_id = plan.snapshot_id,
            partitions = plan.partitions,
            rows_after = plan.current.expected_rows,
            rows_before = plan.previous.expected_rows,
            "applying an OVERWRITE snapshot as the difference of its partitions"
        );
        // One group (a bucket of a partition, or a whole partition when keys may change
        // bucket) at a time, and within it one hash partition of its keys at a time: only
        // those keys are held, within sink.maxBufferBytes. A group whose keys outgrow it is
        // done again in twice as many partitions (what was written is written again: the same
        // rows of the same snapshot).
        for group in plan.groups() {
            let current = plan.splits_in(&plan.current, &group);
            let previous = plan.splits_in(&plan.previous, &group);
            let mut parts = 1;
            while let Some(more) = self
                .overwrite_group(plan, (&current, &previous), parts)
                .await?
            {
                parts = more;
            }
            if self.stopping() {
                return Ok(());
            }
        }
        Ok(())
    }

    /// One group in `parts` hash partitions of its keys; `Some(more)` when one partition's
    /// keys outgrew sink.maxBufferBytes and the group is to be done again in `more`.
    async fn overwrite_group(
        &mut self,
        plan: &OverwritePlan,
        (current, previous): (&[usize], &[usize]),
        parts: u64,
    ) -> Result<Option<u64>> {
        let (snapshot_id, budget) = (plan.snapshot_id, self.cfg.spec.sink.max_buffer_bytes);
        for part in 0..parts {
            let mut kept = KeptKeys::new(part, parts, budget);
            let pass = Pass::UpsertAndKeep(&mut kept);
            self.key_pass(snapshot_id, &plan.current, current, pass)
                .await?;
            if self.stopping() {
                return Ok(None);
            }
            if kept.outgrown() {
                info!(snapshot_id, parts = parts * 2, keys = kept.len(),
                      "the keys of an OVERWRITE group outgrow sink.maxBufferBytes: reading it again in more hash partitions");
                return Ok(Some(parts * 2));
            }
            let pass = Pass::DeleteAbsent(&kept);
            self.key_pass(snapshot_id, &plan.previous, previous, pass)
                .await?;
            if self.stopping() {
                return Ok(None);
            }
        }
        Ok(None)
    }
}
