//! An OVERWRITE snapshot (`INSERT OVERWRITE` of a partition or the table, `TRUNCATE`, `DROP
//! PARTITION`) replaces files instead of adding changes, so it has no changes to read. It is
//! applied as the difference of the partitions it touched: every row of them at the snapshot is
//! upserted, and every key they held just before it and no longer hold is deleted.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::{PaimonSource, SnapshotPlan};
use crate::error::{Result, WorkerError};

/// The overwritten partitions of this slot, after (`current`) and just before (`previous`)
/// the OVERWRITE snapshot.
pub struct OverwritePlan {
    pub snapshot_id: i64,
    pub current: SnapshotPlan,
    pub previous: SnapshotPlan,
    pub partitions: usize,
    /// A key stays in its bucket across the snapshot (fixed buckets, none rescaled): the
    /// difference can be taken one bucket at a time instead of one partition at a time.
    by_bucket: bool,
}

/// A partition (serialized) and, when keys stay in their bucket, a bucket of it.
pub type KeyGroup = (Vec<u8>, Option<i32>);

impl OverwritePlan {
    /// The groups the overwrite touches, each holding keys no other group holds, so that the
    /// difference is taken group by group: only one group's keys are held at once.
    pub fn groups(&self) -> Vec<KeyGroup> {
        let groups: BTreeSet<KeyGroup> = [&self.current, &self.previous]
            .into_iter()
            .flat_map(|plan| (0..plan.len()).map(|i| plan.key_group(i, self.by_bucket)))
            .collect();
        groups.into_iter().collect()
    }

    /// The splits of `plan` (`current` or `previous`) in `group`.
    pub fn splits_in(&self, plan: &SnapshotPlan, group: &KeyGroup) -> Vec<usize> {
        (0..plan.len())
            .filter(|&i| &plan.key_group(i, self.by_bucket) == group)
            .collect()
    }
}

/// Per partition (its serialized key): the data files and the bucket counts of its splits.
type PartitionFiles = HashMap<Vec<u8>, (BTreeSet<String>, BTreeSet<i32>)>;

impl PaimonSource {
    pub(super) async fn plan_overwrite(&self, snapshot_id: i64) -> Result<OverwritePlan> {
        let refuse = |why: String| {
            WorkerError::Source {
            table: self.name.clone(),
            message: format!(
                "snapshot {snapshot_id} is an OVERWRITE commit, and {why}; the sync stops before applying it. \
                 Rebuild the target from a full read of the latest snapshot (delete the checkpoint and run with \
                 scanMode latest-full into an emptied table)"
            ),
        }
        };
        if self.shape.full_compaction_max_level().is_some() {
            return Err(refuse(
                "with changelog-producer = full-compaction MySQL follows the last full compaction, which an \
                 overwrite bypasses"
                    .into(),
            ));
        }
        let mut current = self.plan_full(Some(snapshot_id)).await?;
        let mut previous = self.plan_full(Some(snapshot_id - 1)).await.map_err(|e| {
            refuse(format!(
                "the snapshot before it, needed for the difference, can't be read ({e})"
            ))
        })?;
        let (after, before) = (files_by_partition(&current), files_by_partition(&previous));
        let touched: HashSet<Vec<u8>> = after
            .keys()
            .chain(before.keys())
            .filter(|p| after.get(*p).map(|f| &f.0) != before.get(*p).map(|f| &f.0))
            .cloned()
            .collect();
        // A key can change bucket (a bucket rescale, or dynamic buckets): with several slots its
        // delete and its upsert could then land in two slots, in no order.
        let rebucketed = touched
            .iter()
            .any(|p| after.get(p).map(|f| &f.1) != before.get(p).map(|f| &f.1));
        if self.slot.count > 1 && (rebucketed || self.shape.bucket < 0) {
            return Err(refuse(format!(
                "it may move keys between buckets (bucket = {}), which several slots can't apply in order; \
                 run one slot for it",
                self.shape.bucket
            )));
        }
        current.retain_partitions(&touched);
        previous.retain_partitions(&touched);
        Ok(OverwritePlan {
            snapshot_id,
            current,
            previous,
            partitions: touched.len(),
            by_bucket: self.shape.bucket > 0 && !rebucketed,
        })
    }
}

fn files_by_partition(plan: &SnapshotPlan) -> PartitionFiles {
    let mut out = PartitionFiles::new();
    for split in plan.full_splits() {
        let entry = out.entry(split.partition().data().to_vec()).or_default();
        entry
            .0
            .extend(split.data_files().iter().map(|f| f.file_name.clone()));
        entry.1.insert(split.total_buckets());
    }
    out
}
