//! Reading Paimon with the `paimon` crate: the full merge-on-read of one snapshot and the
//! changes of each later snapshot, restricted to this slot's buckets.

mod column;
mod consumer;
mod evolve;
pub mod filter;
mod flink_consumer;
mod hdfs;
mod kerberos;
mod options;
mod overwrite;
mod plan;
mod postpone;
mod refresh;
mod schema_history;
mod shape;
mod shape_change;

use std::collections::HashMap;

use paimon::table::{DataSplit, IncrementalPlan, IncrementalScanMode, IncrementalSplit, Table};
use paimon::{CatalogFactory, CatalogOptions, Options};
use pms_crds::{Freshness, SourceSpec};
use tracing::{debug, info};

use pms_crds::contract::{
    ReadPoint, Slot, SnapshotIdentity, ENV_AWS_ACCESS_KEY_ID, ENV_AWS_SECRET_ACCESS_KEY,
    ENV_AWS_SESSION_TOKEN,
};

use crate::error::{Result, WorkerError};
use plan::{split_order, upper_levels_oldest_first, Splits};

pub use column::SourceColumn;
pub use overwrite::OverwritePlan;
pub use plan::{fnv1a, FullReadRows, SnapshotPlan};
pub use refresh::RefreshPlan;
pub use schema_history::{readded, SchemaHistory};
pub use shape::TableShape;

/// Options of every read: the sequence number with every change, so the buffer can order
/// changes of one key.
fn read_options() -> HashMap<String, String> {
    HashMap::from([(
        "table-read.sequence-number.enabled".to_string(),
        "true".to_string(),
    )])
}

/// A schema's fields as `(field id, name)`.
fn fields(schema: &paimon::spec::TableSchema) -> Vec<(i32, String)> {
    schema
        .fields()
        .iter()
        .map(|f| (f.id(), f.name().to_string()))
        .collect()
}

/// What one snapshot changed, ready to read.
pub enum SnapshotChanges {
    Changes(SnapshotPlan),
    Overwrite(OverwritePlan),
    /// Keys whose rows are read again from Paimon's merge (see `refresh.rs`).
    Refresh(RefreshPlan),
    /// The snapshot can't be applied from what it holds; the slot starts over (why): an
    /// OVERWRITE of a table read above level 0 whose changes are its delta files, while level-0
    /// files are in its buckets (see [`TableShape::full_read_needs_level_0_compacted`]).
    StartOver(String),
    /// The snapshot was committed under a newer schema than this source was opened with: it
    /// must be read by a source (and checked against MySQL) opened anew. `columns_changed` is
    /// false when only options changed (e.g. the bucket count of a rescale).
    NewSchema {
        from: i64,
        to: i64,
        columns_changed: bool,
    },
}

/// What a snapshot is, before it is read.
enum SnapshotKind {
    /// Read in this mode (`Auto`: the table's producer decides).
    Changes(IncrementalScanMode),
    Overwrite,
    /// A compaction that gives a postpone-bucket table's rows their buckets, whose changes
    /// are those rows (see `postpone.rs`).
    PostponeAssigned,
    /// A compaction of a table whose changes only name keys: the keys of the deletes it took
    /// are read again (see `refresh.rs`).
    CompactionOfNamedKeys,
    NewSchema(i64),
}

/// What `check` tells of a snapshot.
pub struct SnapshotInfo {
    pub id: i64,
    pub time_millis: i64,
    pub total_records: Option<i64>,
}

/// An open Paimon table, seen by one slot.
pub struct PaimonSource {
    table: Table,
    name: String,
    slot: Slot,
    shape: TableShape,
    columns: Vec<SourceColumn>,
    unknown_options: Vec<String>,
    /// `source.filter`, typed by this schema.
    filter: Option<std::sync::Arc<filter::RowFilter>>,
    /// `source.freshness`, and whether it changed how this table is read.
    freshness: Freshness,
    reads_at_commit: bool,
}

impl PaimonSource {
    pub async fn open(spec: &SourceSpec, slot: Slot) -> Result<Self> {
        let name = format!("{}.{}", spec.database, spec.table);
        let table = match &spec.path {
            Some(path) => table_at_path(spec, path, &name).await?,
            None => catalog(spec, &name)
                .await?
                .get_table(&paimon::catalog::Identifier::new(spec.database.clone(), spec.table.clone()))
                .await
                .map_err(|e| WorkerError::Source {
                    table: name.clone(),
                    message: format!("can't open the table in warehouse {} ({e}); check source.warehouse, database and table", spec.warehouse),
                })?,
        };
        let table = table.copy_with_options(read_options());
        let schema = table.schema();
        // The full primary key (partition fields included) is what identifies a row in MySQL.
        let keys: Vec<String> = schema.primary_keys().to_vec();
        if schema.primary_keys().is_empty() {
            return Err(WorkerError::Source {
                table: name,
                message: "has no primary key; only primary-key tables can be synced to MySQL"
                    .into(),
            });
        }
        let judged = options::judge(schema.options());
        let freshness = spec.freshness.unwrap_or_default();
        let (shape, reads_at_commit) = shape::read_shape(schema.options(), freshness)
            .map_err(|why| why.join("\n  - "))
            .and_then(|(shape, at_commit)| {
                let mut refused = shape::check_shape(&shape).err().unwrap_or_default();
                refused.extend(shape::check_slots(&shape, slot.count));
                refused.extend(shape::check_moving_keys(
                    &shape,
                    &keys,
                    schema.partition_keys(),
                ));
                refused.extend(judged.refused);
                if refused.is_empty() {
                    Ok((shape, at_commit))
                } else {
                    Err(refused.join("\n  - "))
                }
            })
            .map_err(|why| WorkerError::Source {
                table: name.clone(),
                message: format!(
                    "this table's shape can't be synced exactly, so nothing is written:\n  - {why}"
                ),
            })?;
        debug!(table = %name, ?shape, "table shape");
        if !judged.unknown.is_empty() {
            tracing::warn!(table = %name, options = ?judged.unknown,
                           "table options unknown to this worker (none of them changes what a reader must do, by its family)");
        }
        let moving = shape.moving_partition_fields(&keys, schema.partition_keys());
        let columns = schema
            .fields()
            .iter()
            .map(|f| SourceColumn {
                name: f.name().to_string(),
                data_type: f.data_type().clone(),
                is_key: keys.iter().any(|k| k == f.name()),
                qualifies_deletes: moving.iter().any(|p| *p == f.name()),
            })
            .collect();
        let filter = spec
            .filter
            .as_deref()
            .map(|text| filter::RowFilter::new(text, schema.fields(), schema.partition_keys()))
            .transpose()
            .map_err(|message| WorkerError::Source {
                table: name.clone(),
                message: format!("{message}; nothing is written"),
            })?
            .map(std::sync::Arc::new);
        Ok(Self {
            table,
            name,
            slot,
            shape,
            columns,
            unknown_options: judged.unknown,
            filter,
            freshness,
            reads_at_commit,
        })
    }

    /// Whether `source.freshness: commit` reads this table otherwise than its producer would
    /// (each commit's level-0 files): MySQL then holds what another freshness wouldn't.
    pub fn reads_at_commit(&self) -> bool {
        self.reads_at_commit
    }

    /// `source.filter`, if the sync has one.
    pub fn filter(&self) -> Option<&std::sync::Arc<filter::RowFilter>> {
        self.filter.as_ref()
    }

    /// The table's options this worker doesn't know (outside the families that change reads).
    pub fn unknown_options(&self) -> &[String] {
        &self.unknown_options
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn columns(&self) -> &[SourceColumn] {
        &self.columns
    }

    fn err(&self, source: paimon::Error) -> WorkerError {
        WorkerError::Paimon {
            table: self.name.clone(),
            source: Box::new(source),
        }
    }

    pub async fn latest_snapshot(&self) -> Result<Option<i64>> {
        self.table
            .snapshot_manager()
            .get_latest_snapshot_id()
            .await
            .map_err(|e| self.err(e))
    }

    pub async fn earliest_snapshot(&self) -> Result<Option<i64>> {
        self.table
            .snapshot_manager()
            .earliest_snapshot_id()
            .await
            .map_err(|e| self.err(e))
    }

    pub fn shape(&self) -> &TableShape {
        &self.shape
    }

    /// The table's options (retention, consumer expiration, …).
    pub fn options(&self) -> &HashMap<String, String> {
        self.table.schema().options()
    }

    /// The latest snapshot's id, commit time and record count (before merging), if any.
    pub async fn latest_snapshot_info(&self) -> Result<Option<SnapshotInfo>> {
        let latest = self
            .table
            .snapshot_manager()
            .get_latest_snapshot()
            .await
            .map_err(|e| self.err(e))?;
        Ok(latest.map(|s| SnapshotInfo {
            id: s.id(),
            time_millis: s.time_millis() as i64,
            total_records: s.total_record_count(),
        }))
    }

    /// When snapshot `id` was committed (Unix ms).
    pub async fn snapshot_time_millis(&self, id: i64) -> Result<i64> {
        let snapshot = self.snapshot(id).await?;
        Ok(snapshot.time_millis() as i64)
    }

    /// Snapshot `id` as committed; `None` when it does not exist (not yet, expired, or rolled
    /// back).
    pub async fn snapshot_identity(&self, id: i64) -> Result<Option<SnapshotIdentity>> {
        Ok(self.existing_snapshot(id).await?.map(|s| SnapshotIdentity {
            id,
            time_millis: s.time_millis() as i64,
        }))
    }

    /// Snapshot `id`, read once; `None` when it does not exist (not yet, expired, or rolled
    /// back).
    async fn existing_snapshot(&self, id: i64) -> Result<Option<paimon::spec::Snapshot>> {
        let manager = self.table.snapshot_manager();
        let earliest = manager
            .earliest_snapshot_id()
            .await
            .map_err(|e| self.err(e))?;
        let latest = manager
            .get_latest_snapshot_id()
            .await
            .map_err(|e| self.err(e))?;
        if !(earliest.is_some_and(|e| e <= id) && latest.is_some_and(|l| id <= l)) {
            return Ok(None);
        }
        let snapshot = manager.get_snapshot(id).await.map_err(|e| self.err(e))?;
        Ok(Some(snapshot))
    }

    /// When the table's first schema was written (Unix ms): a table dropped and created again
    /// under the same name has another. `None` when that schema can't be read.
    pub async fn created_millis(&self) -> Option<i64> {
        let first = self.table.schema_manager().schema(0).await;
        first.ok().map(|s| s.time_millis())
    }

    /// The first snapshot committed at or after `millis` since the epoch.
    pub async fn snapshot_at_or_after(&self, millis: i64) -> Result<Option<i64>> {
        let snapshot = self
            .table
            .snapshot_manager()
            .later_or_equal_time_millis(millis)
            .await
            .map_err(|e| self.err(e))?;
        Ok(snapshot.map(|s| s.id()))
    }

    /// Snapshot `id` (an error when it does not exist).
    async fn snapshot(&self, id: i64) -> Result<paimon::spec::Snapshot> {
        self.table
            .snapshot_manager()
            .get_snapshot(id)
            .await
            .map_err(|e| self.err(e))
    }

    /// The table as of snapshot `id`.
    async fn pinned(&self, id: i64) -> Result<Table> {
        let snapshot = self.snapshot(id).await?;
        Ok(self.table.copy_with_pinned_snapshot(&snapshot))
    }

    /// Every file of `table`'s snapshot, level 0 and postpone buckets included (splits as the
    /// crate packs them, every bucket).
    async fn plan_all_files(&self, table: &Table) -> Result<paimon::table::Plan> {
        table
            .new_read_builder()
            .new_scan()
            .with_scan_all_files()
            .plan()
            .await
            .map_err(|e| self.err(e))
    }

    /// Merge-on-read of one snapshot (default: the latest), this slot's buckets only.
    pub async fn plan_full(&self, snapshot: Option<i64>) -> Result<SnapshotPlan> {
        let table = match snapshot {
            Some(id) => self.pinned(id).await?,
            None => self.table.clone(),
        };
        let mut read = table.new_read_builder();
        // A filter over partition columns only: the partitions it leaves out are not read.
        if let Some(predicate) = self.filter.as_ref().and_then(|f| f.partition_predicate()) {
            info!(table = %self.name, "source.filter names partition columns only: it prunes the full read's partitions");
            read.with_filter(predicate);
        }
        let plan = read.new_scan().plan().await.map_err(|e| self.err(e))?;
        let snapshot_id = plan.snapshot_id().ok_or_else(|| WorkerError::Source {
            table: self.name.clone(),
            message: "the full read found no snapshot".into(),
        })?;
        if let SnapshotKind::NewSchema(to) = self.snapshot_kind(snapshot_id).await? {
            // Committed after this source was opened: open it again (a restart) to read it.
            return Err(WorkerError::Source {
                table: self.name.clone(),
                message: format!(
                    "snapshot {snapshot_id} has schema {to}, newer than the one read at start; restart the worker"
                ),
            });
        }
        let mut splits: Vec<DataSplit> = plan
            .splits()
            .iter()
            .filter(|s| self.slot.owns_bucket(s.bucket()))
            .cloned()
            .collect();
        if let Some(max_level) = self.shape.full_compaction_max_level() {
            splits = splits
                .iter()
                .map(|s| plan::files_where(s, |f| f.level == max_level))
                .collect::<paimon::Result<_>>()
                .map_err(|e| self.err(e))?;
        }
        let as_stored = self.shape.full_read_as_stored();
        if as_stored {
            splits = splits
                .iter()
                .map(upper_levels_oldest_first)
                .collect::<paimon::Result<_>>()
                .map_err(|e| self.err(e))?;
        } else if self.shape.reads_above_level_0() {
            if self.shape.full_read_needs_level_0_compacted() {
                // The crate's scan leaves level 0 out of a deletion-vector table: look again.
                let all = self.plan_all_files(&table).await?;
                let owned: Vec<DataSplit> = all
                    .splits()
                    .iter()
                    .filter(|s| self.slot.owns_bucket(s.bucket()))
                    .cloned()
                    .collect();
                self.refuse_level_0(snapshot_id, &owned)?;
            }
            splits = splits
                .iter()
                .map(|s| plan::files_where(s, |f| f.level > 0))
                .collect::<paimon::Result<_>>()
                .map_err(|e| self.err(e))?;
        }
        splits.retain(|s| !s.data_files().is_empty());
        splits.sort_by_key(split_order);
        let expected_rows = splits.iter().map(|s| s.row_count().max(0) as u64).sum();
        debug!(table = %self.name, snapshot_id, splits = splits.len(), expected_rows, "planned full read");
        let splits = if as_stored {
            Splits::FullAsStored(splits)
        } else {
            Splits::Full(splits)
        };
        Ok(SnapshotPlan::new(snapshot_id, expected_rows, splits))
    }

    /// An error naming the buckets of `splits` that hold level-0 files (see
    /// [`TableShape::full_read_needs_level_0_compacted`]).
    fn refuse_level_0(&self, snapshot_id: i64, splits: &[DataSplit]) -> Result<()> {
        let buckets = level_0_buckets(splits);
        if buckets.is_empty() {
            return Ok(());
        }
        Err(WorkerError::Source {
            table: self.name.clone(),
            message: format!(
                "snapshot {snapshot_id} holds files not compacted yet (level 0) in bucket(s) {buckets:?}: with \
                 changelog-producer = {} the full read can't take them (Paimon doesn't read them either) and no later \
                 snapshot brings their rows again, so nothing is written. Run again after the next compaction (Paimon's \
                 default writer compacts level 0 at each commit; a write-only writer needs its compaction job), or set \
                 changelog-producer = lookup",
                self.shape.changelog_producer
            ),
        })
    }

    /// This slot's buckets of snapshot `id` that hold level-0 files.
    async fn owned_level_0_buckets(&self, id: i64) -> Result<Vec<i32>> {
        let all = self.plan_all_files(&self.pinned(id).await?).await?;
        let owned: Vec<DataSplit> = all
            .splits()
            .iter()
            .filter(|s| self.slot.owns_bucket(s.bucket()))
            .cloned()
            .collect();
        Ok(level_0_buckets(&owned))
    }

    /// Why OVERWRITE snapshot `id` can't be applied as the difference of its partitions, if it
    /// can't: a table read above level 0 whose changes are its delta files (deletion vectors or
    /// `force-lookup` with producer `none` / `input`) with level-0 files in this slot's buckets
    /// at it or just before it. Paimon doesn't read those files yet, so neither side of the
    /// difference can be read; and the snapshot never changes, so waiting can't help. A start
    /// over reads the latest snapshot instead (once its level 0 is compacted).
    async fn level_0_before_overwrite(&self, id: i64) -> Result<Option<String>> {
        if !self.shape.full_read_needs_level_0_compacted() {
            return Ok(None);
        }
        for at in [id, id - 1] {
            let buckets = self.owned_level_0_buckets(at).await?;
            if !buckets.is_empty() {
                return Ok(Some(format!(
                    "snapshot {id} is an OVERWRITE, and snapshot {at} holds files not compacted yet (level 0) in \
                     bucket(s) {buckets:?}: with deletion vectors (or force-lookup) and changelog-producer = {} \
                     neither side of the overwrite can be read as Paimon reads it",
                    self.shape.changelog_producer
                )));
            }
        }
        Ok(None)
    }

    /// What one snapshot changed, this slot's buckets only: its changes (delta files for
    /// `changelog-producer=none`, changelog files otherwise), or, for an OVERWRITE, the
    /// overwritten partitions before and after it.
    pub async fn plan_snapshot(&self, snapshot_id: i64) -> Result<SnapshotChanges> {
        Ok(match self.snapshot_kind(snapshot_id).await? {
            SnapshotKind::Overwrite => match self.level_0_before_overwrite(snapshot_id).await? {
                Some(why) => SnapshotChanges::StartOver(why),
                None => SnapshotChanges::Overwrite(self.plan_overwrite(snapshot_id).await?),
            },
            SnapshotKind::Changes(_) if self.shape.changes_name_keys_only() => {
                // The delta files name every key the snapshot wrote, whatever the producer.
                let touched = self
                    .plan_changes(snapshot_id, IncrementalScanMode::Delta)
                    .await?;
                SnapshotChanges::Refresh(self.plan_refresh(snapshot_id, touched).await?)
            }
            SnapshotKind::CompactionOfNamedKeys => {
                let touched = self.plan_compacted_deletes(snapshot_id).await?;
                SnapshotChanges::Refresh(self.plan_refresh(snapshot_id, touched).await?)
            }
            SnapshotKind::Changes(mode) => {
                SnapshotChanges::Changes(self.plan_changes(snapshot_id, mode).await?)
            }
            SnapshotKind::PostponeAssigned => {
                SnapshotChanges::Changes(self.plan_postpone_assigned(snapshot_id).await?)
            }
            SnapshotKind::NewSchema(to) => SnapshotChanges::NewSchema {
                from: self.table.schema().id(),
                to,
                columns_changed: self.columns_changed(to).await?,
            },
        })
    }

    /// The changes of one snapshot: `Auto` reads the changelog when there is a producer,
    /// `Delta` the delta files.
    async fn plan_changes(
        &self,
        snapshot_id: i64,
        mode: IncrementalScanMode,
    ) -> Result<SnapshotPlan> {
        let plan = self
            .table
            .new_read_builder()
            .new_incremental_scan(mode, snapshot_id - 1, snapshot_id)
            .plan()
            .await
            .map_err(|e| self.err(e))?;
        let mut splits: Vec<IncrementalSplit> = plan
            .splits()
            .iter()
            .filter(|s| match s {
                IncrementalSplit::Data(d) => self.slot.owns_bucket(d.bucket()),
                IncrementalSplit::DiffPair { .. } => true,
            })
            .cloned()
            .collect();
        splits.sort_by_key(|s| match s {
            IncrementalSplit::Data(d) => split_order(d),
            IncrementalSplit::DiffPair { .. } => (i32::MAX, String::new()),
        });
        let expected_rows = plan::rows_of(&splits);
        debug!(table = %self.name, snapshot_id, mode = ?plan.mode(), splits = splits.len(), "planned snapshot changes");
        Ok(SnapshotPlan::new(
            snapshot_id,
            expected_rows,
            Splits::Changes(plan.mode(), splits),
        ))
    }

    async fn snapshot_kind(&self, snapshot_id: i64) -> Result<SnapshotKind> {
        let snapshot = self.snapshot(snapshot_id).await?;
        Ok(if snapshot.schema_id() > self.table.schema().id() {
            SnapshotKind::NewSchema(snapshot.schema_id())
        } else if *snapshot.commit_kind() == paimon::spec::CommitKind::OVERWRITE {
            SnapshotKind::Overwrite
        } else if *snapshot.commit_kind() == paimon::spec::CommitKind::COMPACT
            && self.shape.postpone_rows_arrive_by_compaction()
        {
            SnapshotKind::PostponeAssigned
        } else if *snapshot.commit_kind() == paimon::spec::CommitKind::COMPACT
            && self.shape.changes_name_keys_only()
        {
            SnapshotKind::CompactionOfNamedKeys
        } else if *snapshot.commit_kind() == paimon::spec::CommitKind::APPEND
            && self.shape.reads_delta_without_changelog()
            && shape_change::without_changelog(&snapshot)
        {
            debug!(table = %self.name, snapshot_id, "an APPEND snapshot without a changelog: read by its delta");
            SnapshotKind::Changes(IncrementalScanMode::Delta)
        } else if self.reads_at_commit {
            // The crate's `Auto` follows the table's producer; this shape reads without one.
            SnapshotKind::Changes(IncrementalScanMode::Delta)
        } else {
            SnapshotKind::Changes(IncrementalScanMode::Auto)
        })
    }

    /// Whether schema `to` has other columns (names, types, order) than this source's.
    async fn columns_changed(&self, to: i64) -> Result<bool> {
        let to = self
            .table
            .schema_manager()
            .schema(to)
            .await
            .map_err(|e| self.err(e))?;
        Ok(to.fields() != self.table.schema().fields())
    }

    /// Renames and drops of columns since the table's first schema.
    pub async fn schema_history(&self) -> Result<SchemaHistory> {
        let current = self.table.schema();
        let earlier: Vec<Vec<(i32, String)>> = self
            .table
            .schema_manager()
            .list_all()
            .await
            .map_err(|e| self.err(e))?
            .iter()
            .filter(|s| s.id() < current.id())
            .map(|s| fields(s))
            .collect();
        Ok(SchemaHistory::new(&fields(current), &earlier))
    }

    /// The fields `(id, name)` of the schema this source reads with.
    pub fn fields(&self) -> Vec<(i32, String)> {
        fields(self.table.schema())
    }

    /// The fields `(id, name)` of the schema snapshot `id` was committed with; `None` when the
    /// snapshot is gone.
    pub async fn fields_at(&self, id: i64) -> Result<Option<Vec<(i32, String)>>> {
        let Some(snapshot) = self.existing_snapshot(id).await? else {
            return Ok(None);
        };
        let schema = self
            .table
            .schema_manager()
            .schema(snapshot.schema_id())
            .await
            .map_err(|e| self.err(e))?;
        Ok(Some(fields(&schema)))
    }

    /// The field id of column `name` in the schema this source reads with.
    pub fn field_id(&self, name: &str) -> Option<i32> {
        fields(self.table.schema())
            .into_iter()
            .find_map(|(id, n)| (n == name).then_some(id))
    }

    /// The rows of split `index` of a plan (a read error names the table).
    pub async fn read_split(
        &self,
        plan: &SnapshotPlan,
        index: usize,
    ) -> Result<impl futures::Stream<Item = Result<arrow_array::RecordBatch>> + use<>> {
        let batches = match plan.splits() {
            Splits::Full(splits) => {
                let read = self
                    .table
                    .new_read_builder()
                    .new_read()
                    .map_err(|e| self.err(e))?;
                read.to_arrow(&splits[index..=index])
                    .map_err(|e| self.err(e))?
            }
            Splits::FullAsStored(splits) => {
                let split = IncrementalSplit::Data(splits[index].clone());
                self.read_changes(IncrementalScanMode::Delta, split).await?
            }
            Splits::Changes(mode, splits) => {
                self.read_changes(*mode, splits[index].clone()).await?
            }
        };
        let table = self.name.clone();
        Ok(futures::StreamExt::map(batches, move |batch| {
            batch.map_err(|source| WorkerError::Paimon {
                table: table.clone(),
                source: Box::new(source),
            })
        }))
    }

    /// A split's records with their kind and sequence number, its files of an older schema
    /// read with that schema and evolved to this source's (see `evolve.rs`).
    async fn read_changes(
        &self,
        mode: IncrementalScanMode,
        split: IncrementalSplit,
    ) -> Result<paimon::table::ArrowRecordBatchStream> {
        let audit = |table: &Table, split: IncrementalSplit| {
            let read = table.new_read_builder().new_read()?;
            read.to_audit_log_arrow(&IncrementalPlan::new(mode, vec![split]))
        };
        let current = self.table.schema();
        let IncrementalSplit::Data(data) = &split else {
            return audit(&self.table, split).map_err(|e| self.err(e));
        };
        let runs = evolve::schema_runs(data.data_files());
        if runs.iter().all(|(id, _)| *id == current.id()) {
            return audit(&self.table, split).map_err(|e| self.err(e));
        }
        let mut streams = Vec::new();
        for (schema_id, files) in runs {
            let part =
                IncrementalSplit::Data(plan::with_files(data, &files).map_err(|e| self.err(e))?);
            if schema_id == current.id() {
                streams.push(audit(&self.table, part).map_err(|e| self.err(e))?);
                continue;
            }
            let older = self
                .table
                .schema_manager()
                .schema(schema_id)
                .await
                .map_err(|e| self.err(e))?;
            let table = self
                .table
                .copy_with_resolved_schema((*older).clone(), "main")
                .map_err(|e| self.err(e))?
                .copy_with_options(read_options());
            let (from, to) = (older.fields().to_vec(), current.fields().to_vec());
            let batches = audit(&table, part).map_err(|e| self.err(e))?;
            streams.push(Box::pin(futures::StreamExt::map(batches, move |batch| {
                batch.and_then(|b| evolve::evolve(b, &from, &to))
            })));
        }
        Ok(Box::pin(futures::StreamExt::flatten(
            futures::stream::iter(streams),
        )))
    }

    /// Removes the consumers of `base_id` (the sync's consumer id without a slot suffix) that
    /// no slot of `slots` owns; returns their ids.
    pub async fn remove_stale_consumers(&self, base_id: &str, slots: u32) -> Result<Vec<String>> {
        consumer::remove_stale(&self.table, base_id, slots)
            .await
            .map_err(|e| self.err(e))
    }

    /// Removes every consumer of `base_id` (a finished rebuild's); returns their ids.
    pub async fn remove_consumers(&self, base_id: &str) -> Result<Vec<String>> {
        consumer::remove_all(&self.table, base_id)
            .await
            .map_err(|e| self.err(e))
    }

    /// Claims consumer `consumer_id` for the sync `sync` (external name; `legacy`: its name in
    /// an earlier release); another sync's claim is an error, naming both.
    pub async fn claim_consumer(
        &self,
        consumer_id: &str,
        sync: &str,
        target: &str,
        legacy: Option<&str>,
    ) -> Result<()> {
        match consumer::claim(&self.table, consumer_id, sync, target, legacy).await {
            Ok(None) => Ok(()),
            Ok(Some(owner)) => Err(WorkerError::Source {
                table: self.name.clone(),
                message: format!(
                    "its Paimon consumer {consumer_id:?} is moved by the sync {owner:?}, and this is the sync \
                     {sync:?}: two syncs moving one consumer let snapshots expire under the one that lags. Give \
                     this sync its own source.consumerId; or, if {owner:?} is gone for good, `pms-worker reset` \
                     with its config releases the consumer"
                ),
            }),
            Err(e) => Err(self.err(e)),
        }
    }

    /// What consumer `consumer_id` tells of an earlier run of the sync `sync` (external name)
    /// into MySQL table `target`: the first snapshot it keeps, when the consumer exists and
    /// `sync` claimed it for `target` (or, in an earlier release, for no named table). A slot
    /// that finds this but no checkpoint lost its checkpoint: it had applied changes, and what
    /// MySQL holds is not known to be any snapshot's.
    pub async fn earlier_run(
        &self,
        consumer_id: &str,
        sync: &str,
        target: &str,
    ) -> Result<Option<i64>> {
        let owner = consumer::owner(&self.table, consumer_id)
            .await
            .map_err(|e| self.err(e))?;
        if !owner.is_some_and(|o| o.claims_for(sync, target)) {
            return Ok(None);
        }
        consumer::read(&self.table, consumer_id)
            .await
            .map_err(|e| self.err(e))
    }

    /// Gives up the sync's claim of consumer `consumer_id`.
    pub async fn release_consumer(&self, consumer_id: &str, sync: &str) -> Result<()> {
        consumer::release(&self.table, consumer_id, sync)
            .await
            .map_err(|e| self.err(e))
    }

    /// Removes consumer `consumer_id` of `sync` (its sync deleted with its checkpoints).
    pub async fn remove_consumer(&self, consumer_id: &str, sync: &str) -> Result<()> {
        consumer::remove(&self.table, consumer_id, sync)
            .await
            .map_err(|e| self.err(e))
    }

    /// Tells Paimon's snapshot expiration which snapshots consumer `consumer_id`'s slot, at
    /// `point`, still needs: the applied one (its identity is checked at the next start) on.
    pub async fn write_consumer(&self, consumer_id: &str, point: ReadPoint) -> Result<()> {
        consumer::write(&self.table, consumer_id, point.kept_from())
            .await
            .map_err(|e| self.err(e))
    }
}

/// The buckets of `splits` that hold level-0 files, sorted.
fn level_0_buckets(splits: &[DataSplit]) -> Vec<i32> {
    let mut buckets: Vec<i32> = splits
        .iter()
        .filter(|s| s.data_files().iter().any(|f| f.level == 0))
        .map(|s| s.bucket())
        .collect();
    buckets.sort_unstable();
    buckets.dedup();
    buckets
}

/// The warehouse's catalog (`file:///path`, `/path`, `s3://…`, `hdfs://…`); `name` is what
/// errors name.
/// `location` (the warehouse, or `source.path`) as the storage client names it (an
/// `hdfs:///` URI resolved by `fs.defaultFS`), and the options that reach it (an HA
/// nameservice's namenodes, S3's settings); Kerberos checked first.
fn storage(spec: &SourceSpec, location: &str, name: &str) -> Result<(String, Options)> {
    let failed = |message| WorkerError::Source {
        table: name.to_string(),
        message,
    };
    let mut options = Options::new();
    let (uri, name_nodes) = hdfs::warehouse_uri(location).map_err(failed)?;
    if let Some(k) = &spec.kerberos {
        kerberos::check(k, &uri).map_err(failed)?;
    }
    if let Some(name_nodes) = name_nodes {
        // The HDFS client's own form of an HA nameservice (it fails over between them).
        options.set("hdfs.name-node", name_nodes);
    }
    if let Some(s3) = &spec.s3 {
        for (k, v) in s3_options(s3) {
            options.set(k, v);
        }
    }
    Ok((uri, options))
}

/// The table at `source.path`, as Flink's `'path'` option names one: read from its directory
/// without a catalog (`database` and `table` name it in messages and checkpoints).
async fn table_at_path(spec: &SourceSpec, path: &str, name: &str) -> Result<Table> {
    let (location, options) = storage(spec, path, name)?;
    let failed = |e: paimon::Error| WorkerError::Source {
        table: name.to_string(),
        message: format!(
            "can't read source.path {path} ({e}); check the path and the storage settings"
        ),
    };
    let file_io = paimon::io::FileIO::from_path(&location)
        .and_then(|b| b.with_props(options.to_map().iter()).build())
        .map_err(failed)?;
    let schema = paimon::table::SchemaManager::new(file_io.clone(), location.clone())
        .latest()
        .await
        .map_err(failed)?
        .ok_or_else(|| WorkerError::Source {
            table: name.to_string(),
            message: format!(
                "source.path {path} holds no Paimon table (no schema in {location}/schema); give the directory \
                 of the table itself, as the Flink table's 'path' option does"
            ),
        })?;
    let id = paimon::catalog::Identifier::new(spec.database.clone(), spec.table.clone());
    Ok(Table::new(file_io, id, location, (*schema).clone(), None))
}

async fn catalog(
    spec: &SourceSpec,
    name: &str,
) -> Result<std::sync::Arc<dyn paimon::catalog::Catalog>> {
    let (warehouse, mut options) = storage(spec, &spec.warehouse, name)?;
    options.set(CatalogOptions::WAREHOUSE, warehouse);
    // One catalog per warehouse and options in the process: its tables then share one FileIO,
    // whose reader keeps a pool of read buffers (up to 16 × 2 MiB with a local warehouse) that
    // a catalog per table held for each table (≈ 3 MiB each, `make footprint`). The catalog
    // reads each table's schema from the warehouse on every `get_table`: nothing is cached
    // but the I/O.
    static CATALOGS: std::sync::OnceLock<
        tokio::sync::Mutex<HashMap<String, std::sync::Arc<dyn paimon::catalog::Catalog>>>,
    > = std::sync::OnceLock::new();
    let key = format!(
        "{:?}",
        options
            .to_map()
            .iter()
            .collect::<std::collections::BTreeMap<_, _>>()
    );
    let mut catalogs = CATALOGS.get_or_init(Default::default).lock().await;
    if let Some(catalog) = catalogs.get(&key) {
        return Ok(catalog.clone());
    }
    let catalog = CatalogFactory::create(options)
        .await
        .map_err(|source| WorkerError::Paimon {
            table: name.to_string(),
            source: Box::new(source),
        })?;
    catalogs.insert(key, catalog.clone());
    Ok(catalog)
}

/// Every table of `spec.database` (its `table` is not used).
pub async fn list_tables(spec: &SourceSpec) -> Result<Vec<String>> {
    let catalog = catalog(spec, &spec.database).await?;
    catalog
        .list_tables(&spec.database)
        .await
        .map_err(|e| WorkerError::Source {
            table: spec.database.clone(),
            message: format!(
                "can't list the tables of database {} in warehouse {} ({e}); check source.warehouse and database",
                spec.database, spec.warehouse
            ),
        })
}

/// The catalog options for an S3 warehouse; keys come from env (`AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), which the operator fills from the referenced
/// Secret. Without keys the S3 client takes the AWS credential chain itself (a web identity
/// token file with `AWS_ROLE_ARN`, container credentials, `AWS_PROFILE`, IMDS).
fn s3_options(s3: &pms_crds::S3Spec) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(e) = &s3.endpoint {
        out.push(("s3.endpoint".to_string(), e.clone()));
    }
    if let Some(r) = &s3.region {
        out.push(("s3.region".to_string(), r.clone()));
    }
    if s3.path_style {
        out.push(("s3.path.style.access".to_string(), "true".to_string()));
    }
    if let Ok(k) = std::env::var(ENV_AWS_ACCESS_KEY_ID) {
        out.push(("s3.access-key".to_string(), k));
    }
    if let Ok(k) = std::env::var(ENV_AWS_SECRET_ACCESS_KEY) {
        out.push(("s3.secret-key".to_string(), k));
        // Temporary keys carry a session token.
        if let Ok(t) = std::env::var(ENV_AWS_SESSION_TOKEN) {
            out.push(("s3.session.token".to_string(), t));
        }
    }
    out
}
