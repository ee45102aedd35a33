//! Applying a snapshot whose changes only name the keys it touched (`sequence.field` without
//! a full-row changelog, see `source/refresh.rs`): per touched bucket, the keys are collected
//! from its delta files, their rows are upserted from Paimon's merge of the bucket at the
//! snapshot, and the keys the merge no longer has are deleted. Each key gets one change of the
//! snapshot, so it wins over every earlier one.
//!
//! As for an OVERWRITE, a restart goes through the same passes and skips the changes a
//! committed flush holds (`key_pass.rs`).

use tracing::info;

use super::key_pass::{KeptKeys, Pass};
use super::Pipeline;
use crate::error::Result;
use crate::source::RefreshPlan;

impl Pipeline {
    pub(super) async fn apply_refresh(&mut self, plan: &RefreshPlan) -> Result<()> {
        for group in plan.groups() {
            let touched = plan.splits_in(&plan.touched, &group);
            let merged = plan.splits_in(&plan.merged, &group);
            let mut parts = 1;
            while let Some(more) = self.refresh_group(plan, (&touched, &merged), parts).await? {
                parts = more;
            }
            if self.stopping() {
                return Ok(());
            }
        }
        Ok(())
    }

    /// One bucket in `parts` hash partitions of its keys; `Some(more)` when one partition's
    /// keys outgrew sink.maxBufferBytes and the bucket is to be done again in `more`.
    async fn refresh_group(
        &mut self,
        plan: &RefreshPlan,
        (touched, merged): (&[usize], &[usize]),
        parts: u64,
    ) -> Result<Option<u64>> {
        let (snapshot_id, budget) = (plan.snapshot_id, self.cfg.spec.sink.max_buffer_bytes);
        for part in 0..parts {
            let mut kept = KeptKeys::new(part, parts, budget);
            self.key_pass(snapshot_id, &plan.touched, touched, Pass::Keep(&mut kept))
                .await?;
            if kept.outgrown() {
                info!(snapshot_id, parts = parts * 2, keys = kept.len(),
                      "the keys a snapshot touched in one bucket outgrow sink.maxBufferBytes: reading it again in more hash partitions");
                return Ok(Some(parts * 2));
            }
            if self.stopping() {
                return Ok(None);
            }
            self.key_pass(
                snapshot_id,
                &plan.merged,
                merged,
                Pass::UpsertKept(&mut kept),
            )
            .await?;
            if self.stopping() {
                return Ok(None);
            }
            self.key_pass(
                snapshot_id,
                &plan.touched,
                touched,
                Pass::DeleteKept(&mut kept),
            )
            .await?;
        }
        Ok(None)
    }
}
