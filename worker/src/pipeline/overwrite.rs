//! Applying an OVERWRITE snapshot: the rows of the overwritten partitions after it are
//! upserted, and the keys they held before it and no longer hold are deleted. Both are ordered
//! as changes of that snapshot, so they win over every earlier change of the same key.
//!
//! The read point stays at the snapshot's start until it is done: a flush in the middle
//! commits part of it, and a restart applies it again from the start (idempotent, which is
//! why exactly-once delivery refuses it).

use std::collections::HashSet;

use futures::StreamExt;
use tracing::info;

use super::Pipeline;
use crate::error::{Result, WorkerError};
use crate::mapping::{decode_batch, ChangeKind};
use crate::source::{OverwritePlan, SnapshotPlan};

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
        let mut kept = HashSet::new();
        self.overwrite_pass(plan.snapshot_id, &plan.current, Pass::Upsert(&mut kept))
            .await?;
        if !self.stopping() {
            self.overwrite_pass(plan.snapshot_id, &plan.previous, Pass::DeleteAbsent(&kept))
                .await?;
        }
        Ok(())
    }

    async fn overwrite_pass(
        &mut self,
        snapshot_id: i64,
        plan: &SnapshotPlan,
        mut pass: Pass<'_>,
    ) -> Result<()> {
        for split in 0..plan.len() {
            let bucket = plan.bucket(split);
            let mut batches = self.source.read_split(plan, split).await?;
            while let Some(batch) = batches.next().await {
                let batch = batch?;
                for mut d in
                    decode_batch(&batch, &self.layout, snapshot_id, self.source.name(), true)?
                {
                    self.count_read(d.kind);
                    d.change.bucket = bucket;
                    match &mut pass {
                        Pass::Upsert(kept) => {
                            kept.insert(d.key.clone());
                        }
                        Pass::DeleteAbsent(kept) if kept.contains(&d.key) => continue,
                        Pass::DeleteAbsent(_) => d.change.kind = ChangeKind::Delete,
                    }
                    self.buffer_change(d.key, d.change).await?;
                }
                self.batch_consumed().await?;
                if self.stopping() {
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

/// The upsert pass collects the keys the partitions hold after the snapshot; the delete pass
/// deletes the keys they held before it and no longer hold.
enum Pass<'a> {
    Upsert(&'a mut HashSet<Vec<u8>>),
    DeleteAbsent(&'a HashSet<Vec<u8>>),
}
