//! Tables whose changes don't say the merged row: `sequence.field` with changelog-producer
//! `none` or `input`. Paimon orders a key's records by the field, so a record written late
//! with a smaller value changes nothing, and a delete keeps a later insert with a smaller value
//! out, until a full compaction drops the delete and the insert is seen again. Which of them
//! shows depends on what compaction kept, which the changes don't tell. So a snapshot's
//! changes only name the keys it touched; their rows are read again from Paimon's merge of
//! their bucket at the snapshot (upserted, or deleted when the merge has none).
//!
//! A COMPACT snapshot writes no change, yet it can change what shows: a compaction that took
//! `+I K @10` and `-D K @20` drops the delete at the highest level, and an insert `+I K @15`
//! committed while it ran (outside its files) is seen again. A compaction keeps every other
//! key's winning record, so only the keys of the deletes it took can change: those are read
//! again from Paimon's merge at it.

use std::collections::HashSet;

use paimon::table::{IncrementalScanMode, IncrementalSplit};

use super::plan::{files_where, rows_of, split_order, Splits};
use super::{PaimonSource, SnapshotPlan};
use crate::error::Result;

/// The keys one snapshot touched (its delta files) and the merge, at that snapshot, of the
/// buckets that hold them, both this slot's only.
pub struct RefreshPlan {
    pub snapshot_id: i64,
    pub touched: SnapshotPlan,
    pub merged: SnapshotPlan,
}

/// A partition (serialized) and a bucket of it: keys stay in their bucket.
pub type BucketGroup = (Vec<u8>, i32);

impl RefreshPlan {
    /// The buckets the snapshot touched, each read on its own: only its keys are held at once.
    pub fn groups(&self) -> Vec<BucketGroup> {
        let mut groups: Vec<BucketGroup> = (0..self.touched.len())
            .filter_map(|i| self.touched.partition_bucket(i))
            .collect();
        groups.sort();
        groups.dedup();
        groups
    }

    /// The splits of `plan` (`touched` or `merged`) in `group`.
    pub fn splits_in(&self, plan: &SnapshotPlan, group: &BucketGroup) -> Vec<usize> {
        (0..plan.len())
            .filter(|&i| plan.partition_bucket(i).as_ref() == Some(group))
            .collect()
    }
}

impl PaimonSource {
    /// The refresh of snapshot `snapshot_id`, whose `touched` plan names the keys.
    pub(super) async fn plan_refresh(
        &self,
        snapshot_id: i64,
        touched: SnapshotPlan,
    ) -> Result<RefreshPlan> {
        let buckets: HashSet<BucketGroup> = (0..touched.len())
            .filter_map(|i| touched.partition_bucket(i))
            .collect();
        let mut merged = self.plan_full(Some(snapshot_id)).await?;
        merged.retain_buckets(&buckets);
        Ok(RefreshPlan {
            snapshot_id,
            touched,
            merged,
        })
    }

    /// The files compaction `snapshot_id` took away that hold deletes (by their statistics; a
    /// file without them counts), this slot's buckets, read as changes: their keys are the
    /// ones the compaction may have changed.
    pub(super) async fn plan_compacted_deletes(&self, snapshot_id: i64) -> Result<SnapshotPlan> {
        let before = self
            .plan_all_files(&self.pinned(snapshot_id - 1).await?)
            .await?;
        let after = self
            .plan_all_files(&self.pinned(snapshot_id).await?)
            .await?;
        let kept: HashSet<&str> = after
            .splits()
            .iter()
            .flat_map(|s| s.data_files().iter().map(|f| f.file_name.as_str()))
            .collect();
        let mut splits = Vec::new();
        for split in before
            .splits()
            .iter()
            .filter(|s| self.slot.owns_bucket(s.bucket()))
        {
            let taken = files_where(split, |f| {
                !kept.contains(f.file_name.as_str()) && f.delete_row_count != Some(0)
            })
            .map_err(|e| self.err(e))?;
            if !taken.data_files().is_empty() {
                splits.push(taken);
            }
        }
        splits.sort_by_key(split_order);
        let splits: Vec<IncrementalSplit> =
            splits.into_iter().map(IncrementalSplit::Data).collect();
        Ok(SnapshotPlan::new(
            snapshot_id,
            rows_of(&splits),
            Splits::Changes(IncrementalScanMode::Delta, splits),
        ))
    }
}
