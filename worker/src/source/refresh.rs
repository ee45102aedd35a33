//! Tables whose changes don't say the merged row: `sequence.field` with changelog-producer
//! `none` or `input`. Paimon orders a key's records by the field, so a record written late
//! with a smaller value changes nothing, and a delete keeps a later insert with a smaller value
//! out, until a full compaction drops the delete and the insert is seen again. Which of them
//! shows depends on what compaction kept, which the changes don't tell. So a snapshot's
//! changes only name the keys it touched; their rows are read again from Paimon's merge of
//! their bucket at the snapshot (upserted, or deleted when the merge has none).

use std::collections::HashSet;

use paimon::table::IncrementalScanMode;

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
    pub(super) async fn plan_refresh(&self, snapshot_id: i64) -> Result<RefreshPlan> {
        // The delta files name every key the snapshot wrote, whatever the producer.
        let touched = self
            .plan_changes(snapshot_id, IncrementalScanMode::Delta)
            .await?;
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
}
