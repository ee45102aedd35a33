//! Applying an OVERWRITE snapshot: the rows of the overwritten partitions after it are
//! upserted, and the keys they held before it and no longer hold are deleted. Both are ordered
//! as changes of that snapshot, so they win over every earlier change of the same key.
//!
//! A flush in the middle commits the count of changes handed out so far as the read point
//! inside the snapshot; a restart goes through the same passes and skips those (`key_pass.rs`).

use tracing::info;

use super::key_pass::{KeptKeys, Pass};
use super::Pipeline;
use crate::error::Result;
use crate::source::OverwritePlan;

impl Pipeline {
    pub(super) async fn apply_overwrite(&mut self, plan: &OverwritePlan) -> Result<()> {
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
