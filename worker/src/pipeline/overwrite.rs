//! Applying an OVERWRITE snapshot: the rows of the overwritten partitions after it are
//! upserted, and the keys they held before it and no longer hold are deleted. Both are ordered
//! as changes of that snapshot, so they win over every earlier change of the same key.
//!
//! The read point stays at the snapshot's start until it is done: a flush in the middle
//! commits part of it, and a restart applies it again from the start (idempotent, which is
//! why exactly-once delivery refuses it).

use std::collections::HashSet;

use futures::StreamExt;
use tracing::{info, warn};

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
        // One group (a bucket of a partition, or a whole partition when keys may change
        // bucket) at a time: only its keys are held, not every key of the overwrite.
        for group in plan.groups() {
            let mut kept = KeptKeys::default();
            let current = plan.splits_in(&plan.current, &group);
            self.overwrite_pass(
                plan.snapshot_id,
                &plan.current,
                &current,
                Pass::Upsert(&mut kept),
            )
            .await?;
            if self.stopping() {
                return Ok(());
            }
            let previous = plan.splits_in(&plan.previous, &group);
            self.overwrite_pass(
                plan.snapshot_id,
                &plan.previous,
                &previous,
                Pass::DeleteAbsent(&kept),
            )
            .await?;
            if self.stopping() {
                return Ok(());
            }
        }
        Ok(())
    }

    async fn overwrite_pass(
        &mut self,
        snapshot_id: i64,
        plan: &SnapshotPlan,
        splits: &[usize],
        mut pass: Pass<'_>,
    ) -> Result<()> {
        for &split in splits {
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
                            kept.insert(&d.key, self.cfg.spec.sink.max_buffer_bytes)
                        }
                        Pass::DeleteAbsent(kept) if kept.keys.contains(&d.key) => continue,
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

/// The keys one group holds after the snapshot, and their size.
#[derive(Default)]
struct KeptKeys {
    keys: HashSet<Vec<u8>>,
    bytes: u64,
    warned: bool,
}

impl KeptKeys {
    fn insert(&mut self, key: &[u8], budget: u64) {
        if self.keys.insert(key.to_vec()) {
            // The key, its Vec and the set's slot.
            self.bytes += key.len() as u64 + 48;
        }
        if self.bytes > budget && !self.warned {
            self.warned = true;
            warn!(keys = self.keys.len(), bytes = self.bytes, max_buffer_bytes = budget,
                  "the keys of one bucket (or partition) of an OVERWRITE snapshot outgrow sink.maxBufferBytes: \
                   they are held until it is done (more buckets, or a rebuild, bound them)");
        }
    }
}

/// The upsert pass collects the keys the partitions hold after the snapshot; the delete pass
/// deletes the keys they held before it and no longer hold.
enum Pass<'a> {
    Upsert(&'a mut KeptKeys),
    DeleteAbsent(&'a KeptKeys),
}
