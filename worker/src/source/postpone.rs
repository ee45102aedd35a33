//! Postpone-bucket tables (`bucket = -2`): a writer puts rows in each partition's
//! `bucket-postpone` directory, unsorted and unmerged, and no reader sees them (Paimon's batch
//! read takes real buckets only) until a compaction replays them, oldest file first, into the
//! partition's real buckets and removes them, in one COMPACT snapshot (Paimon 1.3's Flink
//! compact action). With a changelog producer that compaction writes their changelog, read as
//! any other. Without one (`none`) it writes no changes: the rows it gave buckets are the
//! postpone files it removed, read here in the order the compaction replays them.

use std::collections::BTreeMap;

use paimon::spec::DataFileMeta;
use paimon::table::{DataSplit, IncrementalScanMode, IncrementalSplit};

use super::plan::{self, SnapshotPlan, Splits};
use super::PaimonSource;
use crate::error::{Result, WorkerError};

/// The bucket id of the postpone files (`BucketMode.POSTPONE_BUCKET`).
pub const POSTPONE_BUCKET: i32 = -2;

/// Per partition (serialized): a split of it to build on, and its postpone files.
type PostponeFiles = BTreeMap<Vec<u8>, (DataSplit, Vec<DataFileMeta>)>;

impl PaimonSource {
    /// The rows compaction snapshot `snapshot_id` gave buckets: the postpone files it removed,
    /// per partition in creation order, one split each, ordered by their place in that read
    /// (the order it replayed them, so that of two versions of a key the later one wins).
    pub(super) async fn plan_postpone_assigned(&self, snapshot_id: i64) -> Result<SnapshotPlan> {
        if self.existing_snapshot(snapshot_id - 1).await?.is_none() {
            return Err(WorkerError::Source {
                table: self.name.clone(),
                message: format!(
                    "snapshot {snapshot_id} is the compaction that gave pending rows their buckets, and the \
                     snapshot before it, which says which rows, has expired; the sync stops before applying it. \
                     Rebuild the target from a full read of the latest snapshot (`pms-worker rebuild`, or \
                     spec.rebuild under the operator)"
                ),
            });
        }
        let before = self.postpone_files(snapshot_id - 1).await?;
        let after = self.postpone_files(snapshot_id).await?;
        let mut splits = Vec::new();
        for (partition, (template, mut files)) in before {
            let kept = after.get(&partition).map(|(_, f)| f);
            files.retain(|f| !kept.is_some_and(|k| k.iter().any(|a| a.file_name == f.file_name)));
            files.sort_by(|a, b| {
                (a.creation_time, &a.file_name).cmp(&(b.creation_time, &b.file_name))
            });
            // One split per file, read in this order, each row after the one before it: as the
            // compaction replays them, whatever their sequence numbers (each writer numbers its
            // rows from 0, so a later write of a key may carry a lower number).
            for file in files {
                let split = plan::like(&template)
                    .with_data_files(vec![file])
                    .build()
                    .map_err(|e| self.err(e))?;
                splits.push(IncrementalSplit::Data(split));
            }
        }
        let expected_rows = plan::rows_of(&splits);
        tracing::debug!(table = %self.name, snapshot_id, splits = splits.len(), expected_rows,
                        "planned the rows a compaction gave buckets");
        Ok(SnapshotPlan::new(
            snapshot_id,
            expected_rows,
            Splits::Changes(IncrementalScanMode::Delta, splits),
        )
        .in_read_order())
    }

    /// The postpone files snapshot `snapshot_id` holds, per partition.
    async fn postpone_files(&self, snapshot_id: i64) -> Result<PostponeFiles> {
        let plan = self
            .plan_all_files(&self.pinned(snapshot_id).await?)
            .await?;
        let mut out = PostponeFiles::new();
        for split in plan
            .splits()
            .iter()
            .filter(|s| s.bucket() == POSTPONE_BUCKET)
        {
            let entry = out
                .entry(split.partition().data().to_vec())
                .or_insert_with(|| (split.clone(), Vec::new()));
            entry.1.extend(split.data_files().iter().cloned());
        }
        Ok(out)
    }
}
