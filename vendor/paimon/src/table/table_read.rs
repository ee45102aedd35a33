// Licensed to the Apache Software Foundation (ASF) under one
// or more contributor license agreements.  See the NOTICE file
// distributed with this work for additional information
// regarding copyright ownership.  The ASF licenses this file
// to you under the Apache License, Version 2.0 (the
// "License"); you may not use this file except in compliance
// with the License.  You may obtain a copy of the License at
//
//   http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

use super::data_evolution_reader::DataEvolutionReader;
use super::data_file_reader::{DataFileReadTiming, DataFileReader};
use super::format_table_read::FormatTableRead;
use super::incremental_scan::{IncrementalPlan, IncrementalScanMode, IncrementalSplit};
use super::kv_file_reader::{KeyValueFileReader, KeyValueReadConfig};
use super::read_builder::split_scan_predicates;
use super::{ArrowRecordBatchStream, Table};
use crate::arrow::build_target_arrow_schema;
use crate::arrow::format::blob::DEFAULT_BLOB_READ_PARALLELISM;
use crate::arrow::format::MosaicPrefetchOptions;
use crate::arrow::ReadBudget;
use crate::resource::ResourceContext;
use crate::spec::{
    BigIntType, CoreOptions, DataField, DataType, MergeEngine, Predicate, TinyIntType,
    ROW_KIND_FIELD_ID, ROW_KIND_FIELD_NAME, SEQUENCE_NUMBER_FIELD_ID, SEQUENCE_NUMBER_FIELD_NAME,
    VALUE_KIND_FIELD_ID, VALUE_KIND_FIELD_NAME,
};
use crate::DataSplit;
use arrow_array::{
    builder::StringBuilder, Array, ArrayRef, FixedSizeListArray, ListArray, MapArray, RecordBatch,
    RecordBatchOptions, StringArray, StructArray, UInt32Array,
};
use arrow_schema::Schema as ArrowSchema;
use arrow_select::concat::concat as arrow_concat;
use arrow_select::take::take;
use futures::{stream, StreamExt};
use std::cmp::Ordering;
use std::sync::Arc;

#[path = "audit_log_table/read.rs"]
mod audit;
pub use audit::AuditLogRead;

const MAX_MERGE_INPUT_STREAMS: usize = 256;

/// Table read: reads data from splits (e.g. produced by [TableScan::plan]).
///
/// Reference: [pypaimon.read.table_read.TableRead](https://github.com/apache/paimon/blob/master/paimon-python/pypaimon/read/table_read.py)
#[derive(Debug, Clone)]
pub struct TableRead<'a>(TableReadKind<'a>);

#[derive(Debug, Clone)]
enum TableReadKind<'a> {
    Paimon(PaimonTableRead<'a>),
    Format(FormatTableRead<'a>),
}

pub(super) fn configured_parquet_read_budget(table: &Table) -> crate::Result<Arc<ReadBudget>> {
    let options = table.schema().core_options();
    Ok(Arc::new(ReadBudget::new(
        options.parquet_row_group_parallelism()?,
        options.parquet_row_group_max_inflight_bytes()?,
    )?))
}

pub(crate) fn configured_mosaic_prefetch(table: &Table) -> crate::Result<MosaicPrefetchOptions> {
    let options = table.schema().core_options();
    Ok(MosaicPrefetchOptions {
        row_groups: options.mosaic_read_prefetch_row_groups()?,
        max_bytes: usize::try_from(options.mosaic_read_prefetch_max_bytes()?).unwrap_or(usize::MAX),
    })
}

impl<'a> TableRead<'a> {
    /// Create a new TableRead with a specific read type (projected fields).
    pub fn new(
        table: &'a Table,
        read_type: Vec<DataField>,
        data_predicates: Vec<Predicate>,
    ) -> Self {
        if table.is_format_table() {
            Self::new_format(table, read_type, data_predicates, None)
        } else {
            Self(TableReadKind::Paimon(PaimonTableRead::new(
                table,
                read_type,
                data_predicates,
            )))
        }
    }

    pub(crate) fn new_format(
        table: &'a Table,
        read_type: Vec<DataField>,
        data_predicates: Vec<Predicate>,
        limit: Option<usize>,
    ) -> Self {
        Self(TableReadKind::Format(FormatTableRead::new(
            table,
            read_type,
            data_predicates,
            limit,
        )))
    }

    /// Schema (fields) that this read will produce.
    pub fn read_type(&self) -> &[DataField] {
        match &self.0 {
            TableReadKind::Paimon(read) => read.read_type(),
            TableReadKind::Format(read) => read.read_type(),
        }
    }

    /// Data predicates for read-side pruning.
    pub fn data_predicates(&self) -> &[Predicate] {
        match &self.0 {
            TableReadKind::Paimon(read) => read.data_predicates(),
            TableReadKind::Format(read) => read.data_predicates(),
        }
    }

    /// Table for this read.
    pub fn table(&self) -> &Table {
        match &self.0 {
            TableReadKind::Paimon(read) => read.table(),
            TableReadKind::Format(read) => read.table(),
        }
    }

    /// Share Parquet working-memory reservations with other consumers.
    ///
    /// Callers account for output batches they retain. Budget exhaustion is a
    /// terminal stream error. See [`ResourceContext`] for the accounting scope.
    pub fn with_resources(mut self, resources: ResourceContext) -> Self {
        match &mut self.0 {
            TableReadKind::Paimon(read) => read.resources = Some(resources),
            TableReadKind::Format(read) => read.with_resources(resources),
        }
        self
    }

    /// Set a filter predicate.
    pub fn with_filter(self, filter: Predicate) -> Self {
        match self.0 {
            TableReadKind::Paimon(read) => Self(TableReadKind::Paimon(read.with_filter(filter))),
            TableReadKind::Format(read) => Self(TableReadKind::Format(read.with_filter(filter))),
        }
    }

    /// Set the maximum number of concurrent BLOB range reads for this read.
    pub fn with_blob_parallelism(self, blob_parallelism: usize) -> crate::Result<Self> {
        if blob_parallelism == 0 {
            return Err(crate::Error::DataInvalid {
                message: "BLOB read parallelism must be greater than zero".to_string(),
                source: None,
            });
        }
        Ok(match self.0 {
            TableReadKind::Paimon(read) => Self(TableReadKind::Paimon(
                read.with_blob_parallelism(blob_parallelism),
            )),
            TableReadKind::Format(read) => Self(TableReadKind::Format(
                read.with_blob_parallelism(blob_parallelism),
            )),
        })
    }

    /// Pass the limit to Data Evolution and primary-key readers. These paths
    /// apply it after merging/filtering and before output BLOB resolution.
    pub(crate) fn with_limit(self, limit: Option<usize>) -> Self {
        match self.0 {
            TableReadKind::Paimon(mut read) => {
                read.limit = limit;
                Self(TableReadKind::Paimon(read))
            }
            TableReadKind::Format(read) => Self(TableReadKind::Format(read)),
        }
    }

    /// Attach an engine-specific Parquet decoder-filter factory.
    ///
    /// The hook is used only by schema-identical raw reads. Callers must still
    /// enforce the expression after the scan because an individual file may not
    /// be able to build a decoder filter.
    pub fn with_row_filter_factory(self, factory: Arc<dyn crate::arrow::RowFilterFactory>) -> Self {
        match self.0 {
            TableReadKind::Paimon(read) => {
                Self(TableReadKind::Paimon(read.with_row_filter_factory(factory)))
            }
            TableReadKind::Format(read) => {
                Self(TableReadKind::Format(read.with_row_filter_factory(factory)))
            }
        }
    }

    /// Override the Parquet resource budget shared by this read.
    #[doc(hidden)]
    pub fn with_parquet_read_budget(self, budget: Arc<ReadBudget>) -> Self {
        match self.0 {
            TableReadKind::Paimon(read) => {
                Self(TableReadKind::Paimon(read.with_parquet_read_budget(budget)))
            }
            TableReadKind::Format(read) => {
                Self(TableReadKind::Format(read.with_parquet_read_budget(budget)))
            }
        }
    }

    pub(crate) fn with_data_file_read_timing(self, timing: Arc<DataFileReadTiming>) -> Self {
        match self.0 {
            TableReadKind::Paimon(read) => Self(TableReadKind::Paimon(
                read.with_data_file_read_timing(timing),
            )),
            TableReadKind::Format(read) => Self(TableReadKind::Format(read)),
        }
    }

    /// Returns an [`ArrowRecordBatchStream`].
    ///
    /// A `query-auth.enabled` table reads only splits from this handle's plan;
    /// re-plan after a permission change.
    pub fn to_arrow(&self, data_splits: &[DataSplit]) -> crate::Result<ArrowRecordBatchStream> {
        match &self.0 {
            TableReadKind::Paimon(read) => read.to_arrow(data_splits),
            TableReadKind::Format(read) => read.to_arrow(data_splits),
        }
    }

    /// Returns rows with a leading `rowkind` column.
    ///
    /// Materialized snapshot rows are inserts (`+I`). Streaming primary-key
    /// splits retain their physical `_VALUE_KIND` values so change events are
    /// exposed as `+I`, `-U`, `+U`, or `-D` without merge reconciliation.
    pub fn to_arrow_with_row_kind(
        &self,
        data_splits: &[DataSplit],
    ) -> crate::Result<ArrowRecordBatchStream> {
        // Decided from the splits by the `to_arrow` each branch ends in.
        match &self.0 {
            TableReadKind::Paimon(read) => read.to_arrow_with_row_kind(data_splits),
            TableReadKind::Format(read) => {
                let schema = audit_schema_for_read_type(read.read_type(), false)?;
                prepend_insert_row_kind_stream(read.to_arrow(data_splits)?, schema)
            }
        }
    }

    /// Returns an [`ArrowRecordBatchStream`] for an incremental scan plan.
    ///
    /// Delta/Changelog use [`IncrementalSplit::Data`]. Diff uses
    /// [`IncrementalSplit::DiffPair`] and emits after-image rows only.
    pub fn to_incremental_arrow(
        &self,
        plan: &IncrementalPlan,
    ) -> crate::Result<ArrowRecordBatchStream> {
        self.ensure_query_auth_allowed(plan)?;
        plan.validate()?;
        match &self.0 {
            TableReadKind::Paimon(read) => read.to_incremental_arrow(plan),
            TableReadKind::Format(_) => Err(crate::Error::Unsupported {
                message: "Format tables do not support incremental batch read".to_string(),
            }),
        }
    }

    /// Returns an audit-log [`ArrowRecordBatchStream`] for an incremental plan.
    ///
    /// Output schema is `rowkind` (+ optional `_SEQUENCE_NUMBER`) followed by
    /// the projected user columns. Primary-key Delta and Changelog rows take
    /// kinds from `_VALUE_KIND`; append-only Delta rows are `+I`. Diff emits
    /// `+I`/`-U`/`+U`/`-D` from before/after image comparison.
    pub fn to_audit_log_arrow(
        &self,
        plan: &IncrementalPlan,
    ) -> crate::Result<ArrowRecordBatchStream> {
        self.ensure_query_auth_allowed(plan)?;
        plan.validate()?;
        match &self.0 {
            TableReadKind::Paimon(read) => read.to_audit_log_arrow(plan),
            TableReadKind::Format(_) => Err(crate::Error::Unsupported {
                message: "Format tables do not support audit log batch read".to_string(),
            }),
        }
    }

    /// The split's marker carries the plan's decision.
    fn ensure_query_auth_allowed(&self, plan: &IncrementalPlan) -> crate::Result<()> {
        let core_options = CoreOptions::new(self.table().schema().options());
        core_options.ensure_type_paimon_served(&self.table().identifier().full_name())?;
        // Diff pairs too, which `data_splits()` leaves out.
        let marked = plan.splits().iter().any(|split| match split {
            IncrementalSplit::Data(split) => split.query_auth_required(),
            IncrementalSplit::DiffPair { before, after } => before
                .iter()
                .chain(after)
                .any(DataSplit::query_auth_required),
        });
        if core_options.query_auth_enabled() || marked {
            return Err(super::query_auth::unsupported(
                "an incremental read cannot apply a row filter or column masking",
            ));
        }
        Ok(())
    }
}

/// Every leaf's column name, system columns included.
fn collect_leaf_column_names(predicate: &Predicate, out: &mut std::collections::HashSet<String>) {
    match predicate {
        Predicate::Leaf { column, .. } => {
            out.insert(column.clone());
        }
        Predicate::And(children) | Predicate::Or(children) => {
            children
                .iter()
                .for_each(|child| collect_leaf_column_names(child, out));
        }
        Predicate::Not(inner) => collect_leaf_column_names(inner, out),
        Predicate::AlwaysTrue | Predicate::AlwaysFalse => {}
    }
}

#[derive(Debug, Clone)]
struct PaimonTableRead<'a> {
    table: &'a Table,
    read_type: Vec<DataField>,
    data_predicates: Vec<Predicate>,
    row_filter_factory: Option<Arc<dyn crate::arrow::RowFilterFactory>>,
    parquet_read_budget: Option<Arc<ReadBudget>>,
    resources: Option<ResourceContext>,
    data_file_read_timing: Option<Arc<DataFileReadTiming>>,
    blob_parallelism: usize,
    limit: Option<usize>,
}

impl<'a> PaimonTableRead<'a> {
    /// Create a new TableRead with a specific read type (projected fields).
    pub fn new(
        table: &'a Table,
        read_type: Vec<DataField>,
        data_predicates: Vec<Predicate>,
    ) -> Self {
        Self {
            table,
            read_type,
            data_predicates,
            row_filter_factory: None,
            parquet_read_budget: None,
            resources: None,
            data_file_read_timing: None,
            blob_parallelism: DEFAULT_BLOB_READ_PARALLELISM,
            limit: None,
        }
    }

    /// Schema (fields) that this read will produce.
    pub fn read_type(&self) -> &[DataField] {
        &self.read_type
    }

    /// Data predicates for read-side pruning.
    pub fn data_predicates(&self) -> &[Predicate] {
        &self.data_predicates
    }

    /// Table for this read.
    pub fn table(&self) -> &Table {
        self.table
    }

    /// Set a filter predicate. Used conservatively for read-side pruning and
    /// enforced exactly by residual filtering on append, data-evolution, and
    /// primary-key merge read paths (see
    /// [`ReadBuilder::with_filter`](crate::table::ReadBuilder::with_filter)
    /// for per-format exceptions).
    pub fn with_filter(mut self, filter: Predicate) -> Self {
        let (_, data_predicates) = split_scan_predicates(self.table, filter);
        // Keep the FULL data predicate (including `And`/`Or`/`Not`). Native
        // pushdown / stats pruning skip compound nodes they cannot use, and the
        // residual pass applies the full predicate exactly. Pruning here would
        // drop compound predicates before the residual could enforce them.
        self.data_predicates = data_predicates;
        self
    }

    fn with_row_filter_factory(mut self, factory: Arc<dyn crate::arrow::RowFilterFactory>) -> Self {
        self.row_filter_factory = Some(factory);
        self
    }

    fn with_parquet_read_budget(mut self, budget: Arc<ReadBudget>) -> Self {
        self.parquet_read_budget = Some(budget);
        self
    }

    fn with_data_file_read_timing(mut self, timing: Arc<DataFileReadTiming>) -> Self {
        self.data_file_read_timing = Some(timing);
        self
    }

    fn with_blob_parallelism(mut self, blob_parallelism: usize) -> Self {
        self.blob_parallelism = blob_parallelism;
        self
    }

    fn parquet_read_budget(&self) -> crate::Result<Arc<ReadBudget>> {
        let budget = match &self.parquet_read_budget {
            Some(budget) => Arc::clone(budget),
            None => configured_parquet_read_budget(self.table)?,
        };
        Ok(match &self.resources {
            Some(resources) => Arc::new(budget.with_resources(resources.clone())),
            None => budget,
        })
    }

    /// Returns an [`ArrowRecordBatchStream`] for an incremental scan plan.
    pub fn to_incremental_arrow(
        &self,
        plan: &IncrementalPlan,
    ) -> crate::Result<ArrowRecordBatchStream> {
        if plan.mode() == IncrementalScanMode::Diff {
            return self.to_incremental_diff_arrow(plan);
        }

        let mut data_splits = Vec::new();
        for split in plan.splits() {
            match split {
                IncrementalSplit::Data(data) => data_splits.push(data.clone()),
                IncrementalSplit::DiffPair { .. } => {
                    return Err(crate::Error::UnexpectedError {
                        message: "DiffPair appeared in non-Diff incremental plan".to_string(),
                        source: None,
                    });
                }
            }
        }
        // Delta / Changelog rows are read as-is from planned files (no full-table
        // merge against historical base versions).
        self.new_data_file_reader()?.read(&data_splits)
    }

    fn to_incremental_diff_arrow(
        &self,
        plan: &IncrementalPlan,
    ) -> crate::Result<ArrowRecordBatchStream> {
        let pairs = diff_pairs(plan)?;
        let parallel = CoreOptions::new(self.table.schema().options()).diff_parallelism();
        let table = self.table.clone();
        let read_type = self.read_type.clone();
        let data_predicates = self.data_predicates.clone();
        let parquet_read_budget = self.parquet_read_budget()?;
        let blob_parallelism = self.blob_parallelism;

        Ok(Box::pin(async_stream::try_stream! {
            let mut workers = stream::iter(pairs.into_iter().map(|(before, after)| {
                let table = table.clone();
                let read_type = read_type.clone();
                let data_predicates = data_predicates.clone();
                let parquet_read_budget = Arc::clone(&parquet_read_budget);
                let worker: ArrowRecordBatchStream = Box::pin(async_stream::try_stream! {
                    let pair_read = PaimonTableRead::new(&table, read_type, data_predicates)
                        .with_parquet_read_budget(parquet_read_budget)
                        .with_blob_parallelism(blob_parallelism);
                    let mut pair_stream = pair_read.to_diff_after_image_stream(&before, &after)?;
                    while let Some(batch) = pair_stream.next().await {
                        yield batch?;
                    }
                });
                worker
            }))
            .flatten_unordered(parallel);
            while let Some(batch) = workers.next().await {
                yield batch?;
            }
        }))
    }

    /// Returns an audit-log stream for a planned incremental scan.
    pub fn to_audit_log_arrow(
        &self,
        plan: &IncrementalPlan,
    ) -> crate::Result<ArrowRecordBatchStream> {
        match plan.mode() {
            IncrementalScanMode::Diff => self.audit_diff_stream(plan),
            IncrementalScanMode::Delta => {
                self.audit_raw_stream(plan, !self.table.schema().primary_keys().is_empty())
            }
            IncrementalScanMode::Changelog => self.audit_raw_stream(plan, true),
            IncrementalScanMode::Auto => Err(crate::Error::DataInvalid {
                message: "Incremental plan mode Auto must be resolved before consumption"
                    .to_string(),
                source: None,
            }),
        }
    }

    fn to_arrow_with_row_kind(
        &self,
        data_splits: &[DataSplit],
    ) -> crate::Result<ArrowRecordBatchStream> {
        // Streaming primary-key splits are read raw below, so decide here for all.
        self.ensure_authorized_by_splits(&self.table.schema.core_options(), data_splits)?;
        let schema = audit_schema_for_read_type(&self.read_type, false)?;
        let (streaming, materialized): (Vec<_>, Vec<_>) = data_splits
            .iter()
            .cloned()
            .partition(DataSplit::is_streaming);
        if self.limit.is_some() && !streaming.is_empty() && !materialized.is_empty() {
            return self.limited_mixed_row_kind_stream(materialized, streaming);
        }
        let mut streams = Vec::with_capacity(2);
        if !materialized.is_empty() {
            streams.push(prepend_insert_row_kind_stream(
                self.to_arrow(&materialized)?,
                Arc::clone(&schema),
            )?);
        }
        if !streaming.is_empty() {
            if self.table.schema().primary_keys().is_empty() {
                streams.push(prepend_insert_row_kind_stream(
                    self.to_arrow(&streaming)?,
                    Arc::clone(&schema),
                )?);
            } else {
                streams.push(self.audit_raw_data_splits(&streaming, true, false)?);
            }
        }
        Ok(Box::pin(stream::select_all(streams)))
    }

    /// Open each kind of split only after the preceding group consumed its
    /// quota. Truncating two independently limited streams afterward could
    /// fetch BLOB payloads from a group whose rows will never be returned.
    fn limited_mixed_row_kind_stream(
        &self,
        materialized: Vec<DataSplit>,
        streaming: Vec<DataSplit>,
    ) -> crate::Result<ArrowRecordBatchStream> {
        let table = self.table.clone();
        let read_type = self.read_type.clone();
        let data_predicates = self.data_predicates.clone();
        let row_filter_factory = self.row_filter_factory.clone();
        let parquet_read_budget = self.parquet_read_budget()?;
        let resources = self.resources.clone();
        let data_file_read_timing = self.data_file_read_timing.clone();
        let blob_parallelism = self.blob_parallelism;
        let limit = self.limit;
        Ok(Box::pin(async_stream::try_stream! {
            let mut remaining = limit;
            for group in [materialized, streaming] {
                if remaining == Some(0) { break; }
                let read = PaimonTableRead {
                    table: &table,
                    read_type: read_type.clone(),
                    data_predicates: data_predicates.clone(),
                    row_filter_factory: row_filter_factory.clone(),
                    parquet_read_budget: Some(parquet_read_budget.clone()),
                    resources: resources.clone(),
                    data_file_read_timing: data_file_read_timing.clone(),
                    blob_parallelism,
                    limit: remaining,
                };
                let mut stream = read.to_arrow_with_row_kind(&group)?;
                while remaining != Some(0) {
                    let Some(batch) = stream.next().await else { break };
                    yield super::read_limit::take_limited_batch(batch?, &mut remaining);
                }
            }
        }))
    }

    fn audit_raw_stream(
        &self,
        plan: &IncrementalPlan,
        has_value_kind: bool,
    ) -> crate::Result<ArrowRecordBatchStream> {
        plan.validate()?;
        let data_splits = plan.data_splits();
        self.audit_raw_data_splits(
            &data_splits,
            has_value_kind,
            audit_sequence_number_enabled(self.table),
        )
    }

    fn audit_raw_data_splits(
        &self,
        data_splits: &[DataSplit],
        has_value_kind: bool,
        include_sequence: bool,
    ) -> crate::Result<ArrowRecordBatchStream> {
        use super::managed_blob_reader::{resolve_primary_key_blob_stream, ManagedBlobReadPlan};

        let core_options = self.table.schema().core_options();
        let user_read_type = self.read_type.clone();
        let audit_schema = audit_schema_for_read_type(&user_read_type, include_sequence)?;

        let mut read_type = user_read_type.clone();
        if include_sequence {
            read_type.insert(
                0,
                DataField::new(
                    SEQUENCE_NUMBER_FIELD_ID,
                    SEQUENCE_NUMBER_FIELD_NAME.to_string(),
                    DataType::BigInt(BigIntType::new()),
                ),
            );
        }
        if has_value_kind {
            read_type.push(DataField::new(
                VALUE_KIND_FIELD_ID,
                VALUE_KIND_FIELD_NAME.to_string(),
                DataType::TinyInt(TinyIntType::new()),
            ));
        }

        let primary_key = !self.table.schema().primary_keys().is_empty();
        let blob_plan = primary_key
            .then(|| {
                ManagedBlobReadPlan::new(
                    &read_type,
                    &self.data_predicates,
                    self.table.schema().fields(),
                    &core_options,
                )
            })
            .flatten();
        let scan_type = blob_plan
            .as_ref()
            .map_or_else(|| read_type.clone(), |plan| plan.scan_fields().to_vec());
        let predicates = if blob_plan.is_some() {
            Vec::new()
        } else {
            self.data_predicates.clone()
        };
        let reader = DataFileReader::new(
            self.table.file_io.clone(),
            self.table.schema_manager().clone(),
            self.table.schema().id(),
            self.table.schema.fields().to_vec(),
            scan_type,
            predicates,
        )
        .with_blob_as_descriptor(primary_key)
        .with_file_index_read_enabled(core_options.file_index_read_enabled())
        .with_batch_size(Some(core_options.read_batch_size()?))
        .with_blob_parallelism(self.blob_parallelism)
        .with_parquet_read_budget(Some(self.parquet_read_budget()?))
        .with_table_options(self.table.schema().options().clone())
        .with_mosaic_prefetch(configured_mosaic_prefetch(self.table)?);
        let raw_stream = reader.read(data_splits)?;
        let raw_stream = if let Some(plan) = blob_plan {
            plan.finish(
                raw_stream,
                &core_options,
                self.table.file_io.clone(),
                self.blob_parallelism,
                self.limit,
            )
        } else if primary_key {
            resolve_primary_key_blob_stream(
                raw_stream,
                &read_type,
                &core_options,
                self.table.file_io.clone(),
                self.blob_parallelism,
                self.limit,
            )
        } else {
            raw_stream
        };

        Ok(Box::pin(async_stream::try_stream! {
            futures::pin_mut!(raw_stream);
            while let Some(batch) = raw_stream.next().await {
                let batch = batch?;
                let rowkind_col: ArrayRef = if has_value_kind {
                    let col = batch
                        .column_by_name(VALUE_KIND_FIELD_NAME)
                        .ok_or_else(|| crate::Error::DataInvalid {
                            message: "Changelog audit read missing _VALUE_KIND column".to_string(),
                            source: None,
                        })?;
                    Arc::new(rowkind_array_from_column(col)?)
                } else {
                    let inserts: Vec<&'static str> = (0..batch.num_rows()).map(|_| "+I").collect();
                    Arc::new(StringArray::from(inserts))
                };

                let mut columns: Vec<ArrayRef> = vec![rowkind_col];
                if include_sequence {
                    let seq_col = batch
                        .column_by_name(SEQUENCE_NUMBER_FIELD_NAME)
                        .ok_or_else(|| crate::Error::DataInvalid {
                            message: "Audit read missing _SEQUENCE_NUMBER column".to_string(),
                            source: None,
                        })?;
                    columns.push(seq_col.clone());
                }
                for field in &user_read_type {
                    let col = batch
                        .column_by_name(field.name())
                        .ok_or_else(|| crate::Error::DataInvalid {
                            message: format!(
                                "Audit read missing column '{}'",
                                field.name()
                            ),
                            source: None,
                        })?;
                    columns.push(col.clone());
                }
                yield RecordBatch::try_new(audit_schema.clone(), columns).map_err(|e| {
                    crate::Error::UnexpectedError {
                        message: format!("Failed to build audit log batch: {e}"),
                        source: Some(Box::new(e)),
                    }
                })?;
            }
        }))
    }

    fn audit_diff_stream(&self, plan: &IncrementalPlan) -> crate::Result<ArrowRecordBatchStream> {
        let pairs = diff_pairs(plan)?;
        let parallel = CoreOptions::new(self.table.schema().options()).diff_parallelism();
        let table = self.table.clone();
        let read_type = self.read_type.clone();
        let data_predicates = self.data_predicates.clone();
        let parquet_read_budget = self.parquet_read_budget()?;
        let blob_parallelism = self.blob_parallelism;

        Ok(Box::pin(async_stream::try_stream! {
            let mut workers = stream::iter(pairs.into_iter().map(|(before, after)| {
                let table = table.clone();
                let read_type = read_type.clone();
                let data_predicates = data_predicates.clone();
                let parquet_read_budget = Arc::clone(&parquet_read_budget);
                let worker: ArrowRecordBatchStream = Box::pin(async_stream::try_stream! {
                    let pair_read = PaimonTableRead::new(&table, read_type, data_predicates)
                        .with_parquet_read_budget(parquet_read_budget)
                        .with_blob_parallelism(blob_parallelism);
                    let mut pair_stream =
                        pair_read.to_audit_log_arrow_for_diff(&before, &after)?;
                    while let Some(batch) = pair_stream.next().await {
                        yield batch?;
                    }
                });
                worker
            }))
            .flatten_unordered(parallel);
            while let Some(batch) = workers.next().await {
                yield batch?;
            }
        }))
    }

    fn to_audit_log_arrow_for_diff(
        &self,
        before: &[DataSplit],
        after: &[DataSplit],
    ) -> crate::Result<ArrowRecordBatchStream> {
        let include_sequence = audit_sequence_number_enabled(self.table);
        let audit_schema = audit_schema_for_read_type(&self.read_type, include_sequence)?;

        let mut diff_read_type = self.table.schema().fields().to_vec();
        let key_indices = primary_key_indices(self.table, &diff_read_type)?;
        ensure_diff_supported_read_type(&diff_read_type, &key_indices)?;
        if include_sequence {
            diff_read_type.insert(
                0,
                DataField::new(
                    SEQUENCE_NUMBER_FIELD_ID,
                    SEQUENCE_NUMBER_FIELD_NAME.to_string(),
                    DataType::BigInt(BigIntType::new()),
                ),
            );
        }

        let key_indices = primary_key_indices(self.table, &diff_read_type)?;
        let value_indices = value_indices_for_diff(self.table, &diff_read_type);

        let before = before.to_vec();
        let after = after.to_vec();
        let table = self.table.clone();
        let read_type_for_output = self.read_type.clone();
        let data_predicates = self.data_predicates.clone();
        let parquet_read_budget = self.parquet_read_budget()?;
        let blob_parallelism = self.blob_parallelism;

        Ok(Box::pin(async_stream::try_stream! {
            let core_options = CoreOptions::new(table.schema().options());
            let pair_read = PaimonTableRead::new(&table, diff_read_type.clone(), data_predicates)
                .with_parquet_read_budget(parquet_read_budget)
                .with_blob_parallelism(blob_parallelism);
            let before_stream =
                pair_read.read_pk_sorted_for_diff_with_type(&before, &core_options, &diff_read_type)?;
            let after_stream =
                pair_read.read_pk_sorted_for_diff_with_type(&after, &core_options, &diff_read_type)?;
            let mut bc = ArrowCursor::new(before_stream).await?;
            let mut ac = ArrowCursor::new(after_stream).await?;
            let mut data_col_indices: Option<Vec<usize>> = None;
            let mut builder = AuditBatchBuilder::new(audit_schema.clone());

            while bc.alive() || ac.alive() {
                let indices = data_col_indices.get_or_insert_with(|| {
                    let sample = if bc.alive() {
                        bc.batch()
                    } else {
                        ac.batch()
                    };
                    diff_output_col_indices(sample, &read_type_for_output, include_sequence)
                        .expect("diff output column indices")
                });
                if !builder.has_data_columns() {
                    builder.set_data_col_indices(indices.clone());
                }
                match cursor_cmp(&bc, &ac, &key_indices, &value_indices)? {
                    CursorOrd::BeforeOnly => {
                        builder.push("-D", bc.batch(), bc.row());
                        bc.advance().await?;
                    }
                    CursorOrd::AfterOnly => {
                        builder.push("+I", ac.batch(), ac.row());
                        ac.advance().await?;
                    }
                    CursorOrd::EqualSame => {
                        bc.advance().await?;
                        ac.advance().await?;
                    }
                    CursorOrd::EqualDiff => {
                        builder.push("-U", bc.batch(), bc.row());
                        builder.push("+U", ac.batch(), ac.row());
                        bc.advance().await?;
                        ac.advance().await?;
                    }
                }
                if builder.len() >= DIFF_BATCH_SIZE {
                    yield builder.flush()?;
                }
            }
            if builder.len() > 0 {
                yield builder.flush()?;
            }
        }))
    }

    fn to_diff_after_image_stream(
        &self,
        before: &[DataSplit],
        after: &[DataSplit],
    ) -> crate::Result<ArrowRecordBatchStream> {
        let diff_read_type = self.table.schema().fields().to_vec();
        let key_indices = primary_key_indices(self.table, &diff_read_type)?;
        ensure_diff_supported_read_type(&diff_read_type, &key_indices)?;
        let value_indices = value_indices_for_diff(self.table, &diff_read_type);
        let output_schema = build_target_arrow_schema(&self.read_type)?;
        let output_col_indices = self
            .read_type
            .iter()
            .map(|field| {
                diff_read_type
                    .iter()
                    .position(|candidate| candidate.id() == field.id())
                    .ok_or_else(|| crate::Error::DataInvalid {
                        message: format!("Diff read missing projected column '{}'", field.name()),
                        source: None,
                    })
            })
            .collect::<crate::Result<Vec<_>>>()?;

        let table = self.table.clone();
        let data_predicates = self.data_predicates.clone();
        let before = before.to_vec();
        let after = after.to_vec();
        let parquet_read_budget = self.parquet_read_budget()?;
        let blob_parallelism = self.blob_parallelism;

        Ok(Box::pin(async_stream::try_stream! {
            let core_options = CoreOptions::new(table.schema().options());
            let pair_read = PaimonTableRead::new(&table, diff_read_type.clone(), data_predicates)
                .with_parquet_read_budget(parquet_read_budget)
                .with_blob_parallelism(blob_parallelism);
            let before_stream = pair_read.read_pk_sorted_for_diff_with_type(
                &before,
                &core_options,
                &diff_read_type,
            )?;
            let after_stream = pair_read.read_pk_sorted_for_diff_with_type(
                &after,
                &core_options,
                &diff_read_type,
            )?;
            let mut bc = ArrowCursor::new(before_stream).await?;
            let mut ac = ArrowCursor::new(after_stream).await?;
            let mut builder =
                DiffAfterImageBatchBuilder::new(output_schema.clone(), output_col_indices.clone());

            while bc.alive() || ac.alive() {
                match cursor_cmp(&bc, &ac, &key_indices, &value_indices)? {
                    CursorOrd::BeforeOnly => {
                        bc.advance().await?;
                    }
                    CursorOrd::AfterOnly => {
                        builder.push(ac.batch(), ac.row());
                        ac.advance().await?;
                    }
                    CursorOrd::EqualSame => {
                        bc.advance().await?;
                        ac.advance().await?;
                    }
                    CursorOrd::EqualDiff => {
                        builder.push(ac.batch(), ac.row());
                        bc.advance().await?;
                        ac.advance().await?;
                    }
                }
                if builder.len() >= DIFF_BATCH_SIZE {
                    yield builder.flush()?;
                }
            }
            if builder.len() > 0 {
                yield builder.flush()?;
            }
        }))
    }

    fn read_pk_sorted_for_diff_with_type(
        &self,
        splits: &[DataSplit],
        core_options: &CoreOptions,
        read_type: &[DataField],
    ) -> crate::Result<ArrowRecordBatchStream> {
        if splits.is_empty() {
            return Ok(Box::pin(futures::stream::empty()));
        }
        let budget = self.parquet_read_budget()?;
        let parquet_read_budget = budget
            .has_resources()
            .then(|| Arc::new(budget.without_prefetch()));
        let reader = KeyValueFileReader::new(
            self.table.file_io.clone(),
            KeyValueReadConfig {
                table_name: self.table.identifier().full_name(),
                table_options: self.table.schema().options().clone(),
                schema_manager: self.table.schema_manager().clone(),
                table_schema_id: self.table.schema().id(),
                table_fields: self.table.schema.fields().to_vec(),
                read_type: read_type.to_vec(),
                predicates: self.data_predicates.clone(),
                primary_keys: self.table.schema.trimmed_primary_keys(),
                table_primary_keys: self.table.schema.primary_keys().to_vec(),
                merge_engine: core_options.merge_engine()?,
                sequence_fields: core_options
                    .sequence_fields()
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                read_batch_size: core_options.read_batch_size()?,
                merge_splits: true,
                max_merge_input_streams: Some(MAX_MERGE_INPUT_STREAMS),
                // Diff advances before/after in lockstep. Disable prefetch so
                // neither side waits on shared slots, but keep memory admission.
                parquet_read_budget,
                mosaic_prefetch: configured_mosaic_prefetch(self.table)?,
            },
        );
        reader.read(splits)
    }

    /// Reads only splits carrying a grant that the server imposed nothing;
    /// nothing is fetched here, so a split without one fails closed.
    fn ensure_authorized_by_splits(
        &self,
        core_options: &CoreOptions,
        data_splits: &[DataSplit],
    ) -> crate::Result<()> {
        // Unconditional: unrelated to query-auth.
        core_options.ensure_type_paimon_served(&self.table.identifier().full_name())?;
        // Decided at plan time, as in Java: a split predating the option, or built
        // by hand, carries neither flag and is read on the caller's word.
        let required = core_options.query_auth_enabled()
            || data_splits.iter().any(|s| s.query_auth_required());
        if !required {
            return Ok(());
        }
        // Only the catalog mints a session, so a handle without one holds no grant.
        if self.table.query_auth_session().is_none() {
            return Err(super::query_auth::unsupported(
                "this table handle was assembled rather than loaded",
            ));
        }
        // The read's own scope: a caller can plan clean, then read differently.
        let mut filter_columns = std::collections::HashSet::new();
        for predicate in &self.data_predicates {
            collect_leaf_column_names(predicate, &mut filter_columns);
        }
        super::query_auth::reject_system_columns(
            self.read_type
                .iter()
                .map(|f| f.name())
                .chain(filter_columns.iter().map(String::as_str)),
        )?;
        // By id and name: older files resolve by id, so a dropped field passed
        // to `with_read_type` would read an uncovered column.
        super::query_auth::reject_noncanonical_fields(
            &self.read_type,
            self.table.schema().fields(),
        )?;
        // Per split, as Java binds one `QueryAuthSplit` each.
        for split in data_splits {
            let Some(grant) = split.query_auth_grant() else {
                return Err(super::query_auth::unsupported(
                    "the split carries no authorization; it was built directly, or serialized, \
                     which drops the grant — re-plan the scan",
                ));
            };
            if !grant.matches_table(self.table) {
                return Err(super::query_auth::unsupported(
                    "the grant was issued for a different table, schema or session; re-plan the \
                     scan",
                ));
            }
            if !grant.is_unrestricted() {
                return Err(super::query_auth::unsupported(
                    "this client cannot apply a row filter or column masking, so it refuses \
                     rather than return unfiltered rows",
                ));
            }
        }
        Ok(())
    }

    /// Returns an [`ArrowRecordBatchStream`].
    pub fn to_arrow(&self, data_splits: &[DataSplit]) -> crate::Result<ArrowRecordBatchStream> {
        let has_primary_keys = !self.table.schema.primary_keys().is_empty();
        let core_options = self.table.schema.core_options();
        self.ensure_authorized_by_splits(&core_options, data_splits)?;
        let merge_engine = core_options.merge_engine()?;

        // Route supported PK merge engines through the split-aware reader.
        // Deduplicate and first-row may mix raw and KV splits. Partial-update and aggregation
        // use KV reads normally, but fully materialized DV plans can read raw.
        if has_primary_keys
            && matches!(
                merge_engine,
                MergeEngine::Deduplicate
                    | MergeEngine::FirstRow
                    | MergeEngine::PartialUpdate
                    | MergeEngine::Aggregation
            )
        {
            return self.read_pk_with_blob(data_splits, &core_options);
        }

        if core_options.data_evolution_enabled() {
            self.read_with_evolution(data_splits, &core_options)
        } else {
            self.read_raw(data_splits)
        }
    }

    fn read_pk_with_blob(
        &self,
        data_splits: &[DataSplit],
        core_options: &CoreOptions<'_>,
    ) -> crate::Result<ArrowRecordBatchStream> {
        use super::managed_blob_reader::{resolve_primary_key_blob_stream, ManagedBlobReadPlan};

        if let Some(plan) = ManagedBlobReadPlan::new(
            self.read_type(),
            &self.data_predicates,
            self.table.schema().fields(),
            core_options,
        ) {
            let mut inner = self.clone();
            inner.read_type = plan.scan_fields().to_vec();
            inner.data_predicates.clear();
            let stream = inner.read_pk(data_splits, core_options)?;
            return Ok(plan.finish(
                stream,
                core_options,
                self.table.file_io.clone(),
                self.blob_parallelism,
                self.limit,
            ));
        }

        let stream = self.read_pk(data_splits, core_options)?;
        Ok(resolve_primary_key_blob_stream(
            stream,
            self.read_type(),
            core_options,
            self.table.file_io.clone(),
            self.blob_parallelism,
            self.limit,
        ))
    }

    /// Read PK table. For `Deduplicate` and `FirstRow`, raw-convertible splits from scan
    /// planning (mirrors Java `DataSplit#convertToRawFiles`) use the faster
    /// DataFileReader; the rest go through KeyValueFileReader for sort-merge
    /// dedup. Deletion-vector splits for any merge engine are read raw only
    /// when their rows are fully materialized; otherwise the per-file DVs are
    /// applied before the key merge.
    fn read_pk(
        &self,
        data_splits: &[DataSplit],
        core_options: &CoreOptions,
    ) -> crate::Result<ArrowRecordBatchStream> {
        if data_splits.iter().any(DataSplit::is_streaming) {
            let streams = data_splits
                .iter()
                .map(|split| {
                    if split.is_streaming() {
                        self.read_raw(std::slice::from_ref(split))
                    } else {
                        self.read_pk(std::slice::from_ref(split), core_options)
                    }
                })
                .collect::<crate::Result<Vec<_>>>()?;
            return Ok(Box::pin(futures::stream::select_all(streams)));
        }
        let merge_engine = core_options.merge_engine()?;
        let dv_enabled = core_options.deletion_vectors_enabled();
        if matches!(
            merge_engine,
            MergeEngine::PartialUpdate | MergeEngine::Aggregation
        ) && !dv_enabled
        {
            return self.read_kv(data_splits, core_options);
        }

        // Fully materialized deletion-vector splits read raw: their stale
        // versions are masked directly by DVs. Other splits go through the key
        // merge; KeyValueFileReader applies any attached per-file DVs first.
        let mut kv_splits = Vec::new();
        let mut raw_splits = Vec::new();
        for split in data_splits {
            if pk_split_needs_merge(split, dv_enabled) {
                kv_splits.push(split.clone());
            } else {
                raw_splits.push(split.clone());
            }
        }

        if raw_splits.is_empty() {
            return self.read_kv(&kv_splits, core_options);
        }
        if kv_splits.is_empty() {
            return self.read_raw(&raw_splits);
        }

        let kv_stream = self.read_kv(&kv_splits, core_options)?;
        let raw_stream = self.read_raw(&raw_splits)?;
        Ok(Box::pin(futures::stream::select_all([
            kv_stream, raw_stream,
        ])))
    }

    /// Read splits via KeyValueFileReader (sort-merge dedup).
    fn read_kv(
        &self,
        splits: &[DataSplit],
        core_options: &CoreOptions,
    ) -> crate::Result<ArrowRecordBatchStream> {
        let reader = KeyValueFileReader::new(
            self.table.file_io.clone(),
            KeyValueReadConfig {
                table_name: self.table.identifier().full_name(),
                table_options: self.table.schema().options().clone(),
                schema_manager: self.table.schema_manager().clone(),
                table_schema_id: self.table.schema().id(),
                table_fields: self.table.schema.fields().to_vec(),
                read_type: self.read_type().to_vec(),
                predicates: self.data_predicates.clone(),
                primary_keys: self.table.schema.trimmed_primary_keys(),
                table_primary_keys: self.table.schema.primary_keys().to_vec(),
                merge_engine: core_options.merge_engine()?,
                sequence_fields: core_options
                    .sequence_fields()
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                read_batch_size: core_options.read_batch_size()?,
                merge_splits: false,
                max_merge_input_streams: (core_options.deletion_vectors_enabled()
                    && core_options.deletion_vectors_merge_on_read())
                .then_some(MAX_MERGE_INPUT_STREAMS),
                parquet_read_budget: Some(self.parquet_read_budget()?),
                mosaic_prefetch: configured_mosaic_prefetch(self.table)?,
            },
        );
        reader.read(splits)
    }

    /// Read with data-evolution support.
    fn read_with_evolution(
        &self,
        data_splits: &[DataSplit],
        core_options: &CoreOptions,
    ) -> crate::Result<ArrowRecordBatchStream> {
        let reader = DataEvolutionReader::new(
            self.table.file_io.clone(),
            self.table.schema_manager().clone(),
            self.table.schema().id(),
            self.table.schema.fields().to_vec(),
            self.read_type().to_vec(),
            self.data_predicates.clone(),
            core_options.blob_as_descriptor(),
            core_options.blob_descriptor_fields(),
            core_options.blob_view_fields(),
            core_options.blob_view_resolve_enabled(),
            self.table.rest_env().cloned(),
        )?
        .with_batch_size(Some(core_options.read_batch_size()?))
        .with_limit(self.limit)
        .with_blob_parallelism(self.blob_parallelism)
        .with_parquet_read_budget(Some(self.parquet_read_budget()?))
        .with_table_options(self.table.schema().options().clone())
        .with_mosaic_prefetch(configured_mosaic_prefetch(self.table)?)
        .with_read_timing(self.data_file_read_timing.clone());
        reader.read(data_splits)
    }

    /// Read raw data files without dedup or evolution.
    fn read_raw(&self, data_splits: &[DataSplit]) -> crate::Result<ArrowRecordBatchStream> {
        self.new_data_file_reader()?.read(data_splits)
    }

    fn new_data_file_reader(&self) -> crate::Result<DataFileReader> {
        let core_options = self.table.schema().core_options();
        let mut reader = DataFileReader::new(
            self.table.file_io.clone(),
            self.table.schema_manager().clone(),
            self.table.schema().id(),
            self.table.schema.fields().to_vec(),
            self.read_type().to_vec(),
            self.data_predicates.clone(),
        )
        .with_file_index_read_enabled(core_options.file_index_read_enabled())
        .with_batch_size(Some(core_options.read_batch_size()?))
        .with_blob_parallelism(self.blob_parallelism)
        .with_parquet_read_budget(Some(self.parquet_read_budget()?))
        .with_table_options(self.table.schema().options().clone())
        .with_mosaic_prefetch(configured_mosaic_prefetch(self.table)?)
        .with_read_timing(self.data_file_read_timing.clone());
        // The engine decoder filter is safe only on the plain append/raw path.
        // This constructor is also used by raw-convertible primary-key splits,
        // where positional merge semantics must remain untouched.
        if self.table.schema().primary_keys().is_empty() {
            if let Some(factory) = &self.row_filter_factory {
                reader = reader.with_row_filter_factory(Arc::clone(factory));
            }
        }
        Ok(reader)
    }
}

fn prepend_insert_row_kind_stream(
    stream: ArrowRecordBatchStream,
    schema: Arc<ArrowSchema>,
) -> crate::Result<ArrowRecordBatchStream> {
    Ok(Box::pin(async_stream::try_stream! {
        futures::pin_mut!(stream);
        while let Some(batch) = stream.next().await {
            yield prepend_insert_row_kind(batch?, Arc::clone(&schema))?;
        }
    }))
}

fn prepend_insert_row_kind(
    batch: RecordBatch,
    schema: Arc<ArrowSchema>,
) -> crate::Result<RecordBatch> {
    let mut columns = Vec::with_capacity(batch.num_columns() + 1);
    columns.push(Arc::new(StringArray::from(vec!["+I"; batch.num_rows()])) as ArrayRef);
    columns.extend(batch.columns().iter().cloned());
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(schema, columns, &options).map_err(|error| {
        crate::Error::UnexpectedError {
            message: format!("Failed to prepend row kind column: {error}"),
            source: Some(Box::new(error)),
        }
    })
}

fn audit_schema_for_read_type(
    read_type: &[DataField],
    include_sequence: bool,
) -> crate::Result<Arc<ArrowSchema>> {
    let mut fields = Vec::with_capacity(read_type.len() + 2);
    fields.push(DataField::new(
        ROW_KIND_FIELD_ID,
        ROW_KIND_FIELD_NAME.to_string(),
        DataType::VarChar(crate::spec::VarCharType::string_type()),
    ));
    if include_sequence {
        fields.push(DataField::new(
            SEQUENCE_NUMBER_FIELD_ID,
            SEQUENCE_NUMBER_FIELD_NAME.to_string(),
            DataType::BigInt(BigIntType::new()),
        ));
    }
    fields.extend(read_type.iter().cloned());
    build_target_arrow_schema(&fields)
}

fn audit_sequence_number_enabled(table: &Table) -> bool {
    table
        .schema()
        .options()
        .get("table-read.sequence-number.enabled")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

fn rowkind_array_from_column(column: &dyn arrow_array::Array) -> crate::Result<StringArray> {
    let values = column
        .as_any()
        .downcast_ref::<arrow_array::Int8Array>()
        .ok_or_else(|| crate::Error::DataInvalid {
            message: "AuditLogTable _VALUE_KIND column must be Int8".to_string(),
            source: None,
        })?;
    let mut strings = Vec::with_capacity(values.len());
    for idx in 0..values.len() {
        if values.is_null(idx) {
            return Err(crate::Error::DataInvalid {
                message: format!("AuditLogTable _VALUE_KIND is null at row {idx}"),
                source: None,
            });
        }
        let rowkind = match values.value(idx) {
            0 => "+I",
            1 => "-U",
            2 => "+U",
            3 => "-D",
            value => {
                return Err(crate::Error::DataInvalid {
                    message: format!(
                        "AuditLogTable _VALUE_KIND has invalid value {value} at row {idx}"
                    ),
                    source: None,
                });
            }
        };
        strings.push(rowkind);
    }
    Ok(StringArray::from(strings))
}

const DIFF_BATCH_SIZE: usize = 8192;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CursorOrd {
    BeforeOnly,
    AfterOnly,
    EqualSame,
    EqualDiff,
}

struct ArrowCursor {
    stream: ArrowRecordBatchStream,
    batch: Option<RecordBatch>,
    row: usize,
}

impl ArrowCursor {
    async fn new(stream: ArrowRecordBatchStream) -> crate::Result<Self> {
        let mut cursor = Self {
            stream,
            batch: None,
            row: 0,
        };
        cursor.advance().await?;
        Ok(cursor)
    }

    fn alive(&self) -> bool {
        self.batch.is_some()
    }

    fn batch(&self) -> &RecordBatch {
        self.batch.as_ref().expect("cursor must be alive")
    }

    fn row(&self) -> usize {
        self.row
    }

    async fn advance(&mut self) -> crate::Result<()> {
        loop {
            if let Some(ref batch) = self.batch {
                if self.row + 1 < batch.num_rows() {
                    self.row += 1;
                    return Ok(());
                }
            }
            match self.stream.next().await {
                Some(Ok(batch)) if batch.num_rows() > 0 => {
                    self.batch = Some(batch);
                    self.row = 0;
                    return Ok(());
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(e),
                None => {
                    self.batch = None;
                    return Ok(());
                }
            }
        }
    }
}

struct AuditBatchBuilder {
    schema: Arc<ArrowSchema>,
    rowkind: StringBuilder,
    row_indices: Vec<(usize, usize)>,
    pinned_batches: Vec<RecordBatch>,
    data_col_indices: Vec<usize>,
    len: usize,
}

impl AuditBatchBuilder {
    fn new(schema: Arc<ArrowSchema>) -> Self {
        Self {
            schema,
            rowkind: StringBuilder::new(),
            row_indices: Vec::new(),
            pinned_batches: Vec::new(),
            data_col_indices: Vec::new(),
            len: 0,
        }
    }

    fn has_data_columns(&self) -> bool {
        !self.data_col_indices.is_empty()
    }

    fn set_data_col_indices(&mut self, indices: Vec<usize>) {
        self.data_col_indices = indices;
    }

    fn len(&self) -> usize {
        self.len
    }

    fn push(&mut self, kind: &str, batch: &RecordBatch, row: usize) {
        self.rowkind.append_value(kind);
        let batch_id = self.pin_batch(batch);
        self.row_indices.push((batch_id, row));
        self.len += 1;
    }

    fn pin_batch(&mut self, batch: &RecordBatch) -> usize {
        if let Some(last) = self.pinned_batches.last() {
            if std::ptr::eq(batch, last) {
                return self.pinned_batches.len() - 1;
            }
        }
        let batch_id = self.pinned_batches.len();
        self.pinned_batches.push(batch.clone());
        batch_id
    }

    fn flush(&mut self) -> crate::Result<RecordBatch> {
        let mut columns: Vec<ArrayRef> = vec![Arc::new(self.rowkind.finish())];
        self.rowkind = StringBuilder::new();
        for &col_idx in &self.data_col_indices {
            let taken: Vec<ArrayRef> = self
                .row_indices
                .iter()
                .map(|(batch_id, row)| {
                    take(
                        self.pinned_batches[*batch_id].column(col_idx).as_ref(),
                        &UInt32Array::from(vec![*row as u32]),
                        None,
                    )
                    .map_err(|e| crate::Error::UnexpectedError {
                        message: format!("Failed to take audit diff column: {e}"),
                        source: Some(Box::new(e)),
                    })
                })
                .collect::<crate::Result<Vec<_>>>()?;
            let refs: Vec<&dyn Array> = taken.iter().map(|array| array.as_ref()).collect();
            columns.push(
                arrow_concat(&refs).map_err(|e| crate::Error::UnexpectedError {
                    message: format!("Failed to concat audit diff column: {e}"),
                    source: Some(Box::new(e)),
                })?,
            );
        }
        self.row_indices.clear();
        self.pinned_batches.clear();
        self.len = 0;
        RecordBatch::try_new(self.schema.clone(), columns).map_err(|e| {
            crate::Error::UnexpectedError {
                message: format!("Failed to build audit diff batch: {e}"),
                source: Some(Box::new(e)),
            }
        })
    }
}

struct DiffAfterImageBatchBuilder {
    schema: Arc<ArrowSchema>,
    row_indices: Vec<(usize, usize)>,
    pinned_batches: Vec<RecordBatch>,
    col_indices: Vec<usize>,
    len: usize,
}

impl DiffAfterImageBatchBuilder {
    fn new(schema: Arc<ArrowSchema>, col_indices: Vec<usize>) -> Self {
        Self {
            schema,
            row_indices: Vec::new(),
            pinned_batches: Vec::new(),
            col_indices,
            len: 0,
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn push(&mut self, batch: &RecordBatch, row: usize) {
        let batch_id = self.pin_batch(batch);
        self.row_indices.push((batch_id, row));
        self.len += 1;
    }

    fn pin_batch(&mut self, batch: &RecordBatch) -> usize {
        if let Some(last) = self.pinned_batches.last() {
            if std::ptr::eq(batch, last) {
                return self.pinned_batches.len() - 1;
            }
        }
        let batch_id = self.pinned_batches.len();
        self.pinned_batches.push(batch.clone());
        batch_id
    }

    fn flush(&mut self) -> crate::Result<RecordBatch> {
        let row_count = self.len;
        let mut columns = Vec::with_capacity(self.col_indices.len());
        for &col_idx in &self.col_indices {
            let taken: Vec<ArrayRef> = self
                .row_indices
                .iter()
                .map(|(batch_id, row)| {
                    take(
                        self.pinned_batches[*batch_id].column(col_idx).as_ref(),
                        &UInt32Array::from(vec![*row as u32]),
                        None,
                    )
                    .map_err(|e| crate::Error::UnexpectedError {
                        message: format!("Failed to take diff after-image column: {e}"),
                        source: Some(Box::new(e)),
                    })
                })
                .collect::<crate::Result<Vec<_>>>()?;
            let refs: Vec<&dyn Array> = taken.iter().map(|array| array.as_ref()).collect();
            columns.push(
                arrow_concat(&refs).map_err(|e| crate::Error::UnexpectedError {
                    message: format!("Failed to concat diff after-image column: {e}"),
                    source: Some(Box::new(e)),
                })?,
            );
        }
        self.row_indices.clear();
        self.pinned_batches.clear();
        self.len = 0;
        let options = RecordBatchOptions::new().with_row_count(Some(row_count));
        RecordBatch::try_new_with_options(self.schema.clone(), columns, &options).map_err(|e| {
            crate::Error::UnexpectedError {
                message: format!("Failed to build diff after-image batch: {e}"),
                source: Some(Box::new(e)),
            }
        })
    }
}

fn diff_pairs(plan: &IncrementalPlan) -> crate::Result<Vec<(Vec<DataSplit>, Vec<DataSplit>)>> {
    plan.validate()?;
    if plan.mode() != IncrementalScanMode::Diff {
        return Err(crate::Error::DataInvalid {
            message: "Diff reader requires a Diff incremental plan".to_string(),
            source: None,
        });
    }
    plan.splits()
        .iter()
        .map(|split| match split {
            IncrementalSplit::DiffPair { before, after } => Ok((before.clone(), after.clone())),
            IncrementalSplit::Data(_) => Err(crate::Error::DataInvalid {
                message: "Diff incremental plan contains a Data split".to_string(),
                source: None,
            }),
        })
        .collect()
}

fn diff_output_col_indices(
    batch: &RecordBatch,
    read_type: &[DataField],
    include_sequence: bool,
) -> crate::Result<Vec<usize>> {
    let mut indices = Vec::with_capacity(read_type.len() + usize::from(include_sequence));
    if include_sequence {
        indices.push(
            batch
                .schema()
                .index_of(SEQUENCE_NUMBER_FIELD_NAME)
                .map_err(|e| crate::Error::DataInvalid {
                    message: format!("Diff read missing _SEQUENCE_NUMBER: {e}"),
                    source: None,
                })?,
        );
    }
    for field in read_type {
        indices.push(batch.schema().index_of(field.name()).map_err(|e| {
            crate::Error::DataInvalid {
                message: format!("Diff read missing column '{}': {e}", field.name()),
                source: None,
            }
        })?);
    }
    Ok(indices)
}

fn value_indices_for_diff(table: &Table, fields: &[DataField]) -> Vec<usize> {
    let primary_key_names = table.schema().trimmed_primary_keys();
    let primary_keys: std::collections::HashSet<&str> =
        primary_key_names.iter().map(|key| key.as_str()).collect();
    fields
        .iter()
        .enumerate()
        .filter(|(_, field)| {
            field.name() != SEQUENCE_NUMBER_FIELD_NAME && !primary_keys.contains(field.name())
        })
        .map(|(index, _)| index)
        .collect()
}

fn primary_key_indices(table: &Table, read_type: &[DataField]) -> crate::Result<Vec<usize>> {
    let mut indices = Vec::new();
    for pk in table.schema().trimmed_primary_keys() {
        let idx = read_type
            .iter()
            .position(|field| field.name() == pk)
            .ok_or_else(|| crate::Error::DataInvalid {
                message: format!("Primary key column '{pk}' missing from Diff comparison schema"),
                source: None,
            })?;
        indices.push(idx);
    }
    Ok(indices)
}

fn ensure_diff_supported_read_type(
    read_type: &[DataField],
    key_indices: &[usize],
) -> crate::Result<()> {
    for (index, field) in read_type.iter().enumerate() {
        let supported = if key_indices.contains(&index) {
            is_diff_supported_scalar_type(field.data_type())
        } else {
            is_diff_supported_value_type(field.data_type())
        };
        if !supported {
            return Err(crate::Error::Unsupported {
                message: format!(
                    "Batch incremental Diff does not support column '{}' of type {:?}",
                    field.name(),
                    field.data_type()
                ),
            });
        }
    }
    Ok(())
}

fn is_diff_supported_value_type(data_type: &DataType) -> bool {
    match data_type {
        DataType::Row(row) => row
            .fields()
            .iter()
            .all(|field| is_diff_supported_value_type(field.data_type())),
        DataType::Array(array) => is_diff_supported_value_type(array.element_type()),
        DataType::Map(map) => {
            is_diff_supported_value_type(map.key_type())
                && is_diff_supported_value_type(map.value_type())
        }
        DataType::Multiset(multiset) => is_diff_supported_value_type(multiset.element_type()),
        DataType::Vector(vector) => is_diff_supported_scalar_type(vector.element_type()),
        _ => is_diff_supported_scalar_type(data_type),
    }
}

fn is_diff_supported_scalar_type(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Boolean(_)
            | DataType::TinyInt(_)
            | DataType::SmallInt(_)
            | DataType::Int(_)
            | DataType::BigInt(_)
            | DataType::Float(_)
            | DataType::Double(_)
            | DataType::Char(_)
            | DataType::VarChar(_)
            | DataType::Date(_)
            | DataType::Binary(_)
            | DataType::VarBinary(_)
            | DataType::Decimal(_)
            | DataType::Time(_)
            | DataType::Timestamp(_)
            | DataType::LocalZonedTimestamp(_)
    )
}

fn cursor_cmp(
    bc: &ArrowCursor,
    ac: &ArrowCursor,
    key_indices: &[usize],
    value_indices: &[usize],
) -> crate::Result<CursorOrd> {
    match (bc.alive(), ac.alive()) {
        (false, false) => unreachable!("cursor_cmp called with both streams exhausted"),
        (false, true) => return Ok(CursorOrd::AfterOnly),
        (true, false) => return Ok(CursorOrd::BeforeOnly),
        (true, true) => {}
    }
    match compare_pk(bc, ac, key_indices)? {
        Ordering::Less => Ok(CursorOrd::BeforeOnly),
        Ordering::Greater => Ok(CursorOrd::AfterOnly),
        Ordering::Equal => {
            if rows_equal_at(bc.batch(), bc.row(), ac.batch(), ac.row(), value_indices)? {
                Ok(CursorOrd::EqualSame)
            } else {
                Ok(CursorOrd::EqualDiff)
            }
        }
    }
}

fn compare_pk(
    bc: &ArrowCursor,
    ac: &ArrowCursor,
    key_indices: &[usize],
) -> crate::Result<Ordering> {
    for &idx in key_indices {
        let ord = scalar_compare(
            bc.batch().column(idx),
            bc.row(),
            ac.batch().column(idx),
            ac.row(),
        )?;
        if ord != Ordering::Equal {
            return Ok(ord);
        }
    }
    Ok(Ordering::Equal)
}

fn rows_equal_at(
    left_batch: &RecordBatch,
    left_row: usize,
    right_batch: &RecordBatch,
    right_row: usize,
    indices: &[usize],
) -> crate::Result<bool> {
    for &idx in indices {
        if !value_equal_at(
            left_batch.column(idx),
            left_row,
            right_batch.column(idx),
            right_row,
        )? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Compare logical values, ignoring unused children beneath NULL parents.
/// Scalar comparisons also preserve Java's NaN and signed-zero behavior.
fn value_equal_at(
    left: &dyn Array,
    left_row: usize,
    right: &dyn Array,
    right_row: usize,
) -> crate::Result<bool> {
    match (left.is_null(left_row), right.is_null(right_row)) {
        (true, true) => return Ok(true),
        (true, false) | (false, true) => return Ok(false),
        (false, false) => {}
    }

    if let (Some(left), Some(right)) = (
        left.as_any().downcast_ref::<StructArray>(),
        right.as_any().downcast_ref::<StructArray>(),
    ) {
        if left.num_columns() != right.num_columns() {
            return Ok(false);
        }
        for (left_child, right_child) in left.columns().iter().zip(right.columns()) {
            if !value_equal_at(
                left_child.as_ref(),
                left_row,
                right_child.as_ref(),
                right_row,
            )? {
                return Ok(false);
            }
        }
        return Ok(true);
    }

    if let (Some(left), Some(right)) = (
        left.as_any().downcast_ref::<ListArray>(),
        right.as_any().downcast_ref::<ListArray>(),
    ) {
        let left_offsets = left.value_offsets();
        let right_offsets = right.value_offsets();
        let (left_start, left_end) = (left_offsets[left_row], left_offsets[left_row + 1]);
        let (right_start, right_end) = (right_offsets[right_row], right_offsets[right_row + 1]);
        if left_end - left_start != right_end - right_start {
            return Ok(false);
        }
        for offset in 0..(left_end - left_start) {
            if !value_equal_at(
                left.values().as_ref(),
                (left_start + offset) as usize,
                right.values().as_ref(),
                (right_start + offset) as usize,
            )? {
                return Ok(false);
            }
        }
        return Ok(true);
    }

    if let (Some(left), Some(right)) = (
        left.as_any().downcast_ref::<MapArray>(),
        right.as_any().downcast_ref::<MapArray>(),
    ) {
        let left_offsets = left.value_offsets();
        let right_offsets = right.value_offsets();
        let (left_start, left_end) = (left_offsets[left_row], left_offsets[left_row + 1]);
        let (right_start, right_end) = (right_offsets[right_row], right_offsets[right_row + 1]);
        if left_end - left_start != right_end - right_start {
            return Ok(false);
        }
        for offset in 0..(left_end - left_start) {
            if !value_equal_at(
                left.entries(),
                (left_start + offset) as usize,
                right.entries(),
                (right_start + offset) as usize,
            )? {
                return Ok(false);
            }
        }
        return Ok(true);
    }

    if let (Some(left), Some(right)) = (
        left.as_any().downcast_ref::<FixedSizeListArray>(),
        right.as_any().downcast_ref::<FixedSizeListArray>(),
    ) {
        if left.value_length() != right.value_length() {
            return Ok(false);
        }
        for offset in 0..left.value_length() {
            if !value_equal_at(
                left.values().as_ref(),
                (left.value_offset(left_row) + offset) as usize,
                right.values().as_ref(),
                (right.value_offset(right_row) + offset) as usize,
            )? {
                return Ok(false);
            }
        }
        return Ok(true);
    }

    Ok(scalar_compare(left, left_row, right, right_row)? == Ordering::Equal)
}

fn scalar_compare(
    left: &dyn Array,
    left_row: usize,
    right: &dyn Array,
    right_row: usize,
) -> crate::Result<Ordering> {
    use arrow_array::{
        BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array,
        Int16Array, Int32Array, Int64Array, Int8Array, StringArray, Time32MillisecondArray,
        Time32SecondArray, Time64MicrosecondArray, Time64NanosecondArray,
        TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray,
        TimestampSecondArray, UInt16Array, UInt32Array, UInt64Array, UInt8Array,
    };

    match (left.is_null(left_row), right.is_null(right_row)) {
        (true, true) => return Ok(Ordering::Equal),
        (true, false) => return Ok(Ordering::Less),
        (false, true) => return Ok(Ordering::Greater),
        (false, false) => {}
    }

    macro_rules! compare {
        ($ty:ty, $getter:expr) => {
            if let (Some(a), Some(b)) = (
                left.as_any().downcast_ref::<$ty>(),
                right.as_any().downcast_ref::<$ty>(),
            ) {
                return Ok($getter(a, left_row).cmp(&$getter(b, right_row)));
            }
        };
    }

    compare!(Int8Array, |a: &Int8Array, r| a.value(r));
    compare!(Int16Array, |a: &Int16Array, r| a.value(r));
    compare!(Int32Array, |a: &Int32Array, r| a.value(r));
    compare!(Int64Array, |a: &Int64Array, r| a.value(r));
    compare!(UInt8Array, |a: &UInt8Array, r| a.value(r));
    compare!(UInt16Array, |a: &UInt16Array, r| a.value(r));
    compare!(UInt32Array, |a: &UInt32Array, r| a.value(r));
    compare!(UInt64Array, |a: &UInt64Array, r| a.value(r));
    compare!(BooleanArray, |a: &BooleanArray, r| a.value(r));
    compare!(Date32Array, |a: &Date32Array, r| a.value(r));
    compare!(Decimal128Array, |a: &Decimal128Array, r| a.value(r));
    compare!(Time32SecondArray, |a: &Time32SecondArray, r| a.value(r));
    compare!(Time32MillisecondArray, |a: &Time32MillisecondArray, r| a
        .value(r));
    compare!(Time64MicrosecondArray, |a: &Time64MicrosecondArray, r| a
        .value(r));
    compare!(Time64NanosecondArray, |a: &Time64NanosecondArray, r| a
        .value(r));
    compare!(TimestampSecondArray, |a: &TimestampSecondArray, r| a
        .value(r));
    compare!(
        TimestampMillisecondArray,
        |a: &TimestampMillisecondArray, r| a.value(r)
    );
    compare!(
        TimestampMicrosecondArray,
        |a: &TimestampMicrosecondArray, r| a.value(r)
    );
    compare!(
        TimestampNanosecondArray,
        |a: &TimestampNanosecondArray, r| a.value(r)
    );

    if let (Some(a), Some(b)) = (
        left.as_any().downcast_ref::<BinaryArray>(),
        right.as_any().downcast_ref::<BinaryArray>(),
    ) {
        return Ok(a.value(left_row).cmp(b.value(right_row)));
    }

    if let (Some(a), Some(b)) = (
        left.as_any().downcast_ref::<StringArray>(),
        right.as_any().downcast_ref::<StringArray>(),
    ) {
        return Ok(a.value(left_row).cmp(b.value(right_row)));
    }

    if let (Some(a), Some(b)) = (
        left.as_any().downcast_ref::<Float32Array>(),
        right.as_any().downcast_ref::<Float32Array>(),
    ) {
        let (left, right) = (a.value(left_row), b.value(right_row));
        return Ok(if left.is_nan() && right.is_nan() {
            Ordering::Equal
        } else {
            left.total_cmp(&right)
        });
    }
    if let (Some(a), Some(b)) = (
        left.as_any().downcast_ref::<Float64Array>(),
        right.as_any().downcast_ref::<Float64Array>(),
    ) {
        let (left, right) = (a.value(left_row), b.value(right_row));
        return Ok(if left.is_nan() && right.is_nan() {
            Ordering::Equal
        } else {
            left.total_cmp(&right)
        });
    }

    Err(crate::Error::Unsupported {
        message: format!(
            "Batch incremental Diff does not support comparing column type {:?}",
            left.data_type()
        ),
    })
}

/// Whether a primary-key split must go through the sort-merge reader.
///
/// Mirrors Java `PrimaryKeyTableRawFileSplitReadProvider#match`: a raw read
/// needs the split marked raw convertible AND a known `delete_row_count` on
/// every file. Legacy files without the stat may hide delete rows — scan
/// planning treats the missing stat as "no deletes" for compatibility, so the
/// read side must fall back to the merge reader, which drops them.
///
/// Deletion-vector tables also merge any split that is not fully materialized,
/// including level-0 data and legacy or retract-containing compacted files.
/// The merge reader applies attached DVs before reconciling key versions.
fn pk_split_needs_merge(split: &DataSplit, dv_enabled: bool) -> bool {
    if dv_enabled {
        return !split.is_fully_materialized_pk_dv();
    }
    !split.raw_convertible()
        || split
            .data_files()
            .iter()
            .any(|f| f.delete_row_count.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Identifier;
    use crate::common::Options;
    use crate::file_index::file_indexer_factory::{FileIndexerFactory, BITMAP_INDEX};
    use crate::file_index::write_column_indexes;
    use crate::io::FileIOBuilder;
    use crate::spec::stats::BinaryTableStats;
    use crate::spec::{
        BinaryRow, DataFileMeta, DataType, Datum, IntType, PredicateBuilder, Schema, TableSchema,
    };
    use crate::table::query_auth_table;
    use crate::table::source::DataSplitBuilder;
    use futures::TryStreamExt;

    #[test]
    fn test_prepend_insert_row_kind_preserves_zero_column_row_count() {
        let batch = RecordBatch::try_new_with_options(
            Arc::new(ArrowSchema::empty()),
            vec![],
            &RecordBatchOptions::new().with_row_count(Some(3)),
        )
        .unwrap();

        let actual =
            prepend_insert_row_kind(batch, audit_schema_for_read_type(&[], false).unwrap())
                .unwrap();

        assert_eq!(actual.num_rows(), 3);
        assert_eq!(actual.schema().fields()[0].name(), ROW_KIND_FIELD_NAME);
        let kinds = actual
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(
            kinds.iter().collect::<Vec<_>>(),
            vec![Some("+I"), Some("+I"), Some("+I")]
        );
    }

    pub(super) fn file(name: &str, level: i32, delete_row_count: Option<i64>) -> DataFileMeta {
        DataFileMeta {
            file_name: name.to_string(),
            file_size: 128,
            row_count: 10,
            min_key: Vec::new(),
            max_key: Vec::new(),
            key_stats: BinaryTableStats::new(Vec::new(), Vec::new(), Vec::new()),
            value_stats: BinaryTableStats::new(Vec::new(), Vec::new(), Vec::new()),
            min_sequence_number: 0,
            max_sequence_number: 0,
            schema_id: 0,
            level,
            extra_files: Vec::new(),
            creation_time: None,
            delete_row_count,
            embedded_index: None,
            first_row_id: None,
            write_cols: None,
            external_path: None,
            file_source: None,
            value_stats_cols: None,
            column_max_sequence_numbers: None,
        }
    }

    pub(super) fn split(files: Vec<DataFileMeta>, raw_convertible: bool) -> DataSplit {
        DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path("file:/tmp/bucket-0".to_string())
            .with_total_buckets(1)
            .with_data_files(files)
            .with_raw_convertible(raw_convertible)
            .build()
            .unwrap()
    }

    fn table_with_invalid_parquet_budget(format_table: bool) -> Table {
        let mut schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .option("read.parquet.row-group.parallelism", "0");
        if format_table {
            schema = schema.option("type", "format-table");
        }
        Table::new(
            FileIOBuilder::new("memory").build().unwrap(),
            Identifier::new("default", "budget_t"),
            "memory:/budget_t".to_string(),
            TableSchema::new(0, &schema.build().unwrap()),
            None,
        )
    }

    async fn embedded_bitmap_index() -> Vec<u8> {
        let mut writer = FileIndexerFactory::create_writer(
            BITMAP_INDEX,
            DataType::Int(IntType::new()),
            &Options::new(),
        )
        .unwrap();
        writer.write(Some(&Datum::Int(1))).unwrap();
        let indexes = std::collections::HashMap::from([(
            "id".to_string(),
            std::collections::HashMap::from([(
                BITMAP_INDEX.to_string(),
                Some(writer.serialized_bytes().unwrap()),
            )]),
        )]);
        write_column_indexes("memory:/table_read_file_index_source", indexes)
            .await
            .unwrap()
            .to_input_file()
            .read()
            .await
            .unwrap()
            .to_vec()
    }

    fn file_index_table(path: &str, enabled: Option<bool>, primary_key: bool) -> Table {
        let mut builder = Schema::builder().column("id", DataType::Int(IntType::new()));
        if let Some(enabled) = enabled {
            builder = builder.option("file-index.read.enabled", enabled.to_string());
        }
        if primary_key {
            builder = builder.primary_key(["id"]).option("bucket", "1");
        }
        Table::new(
            FileIOBuilder::new("memory").build().unwrap(),
            Identifier::new("default", "file_index_t"),
            path.to_string(),
            TableSchema::new(0, &builder.build().unwrap()),
            None,
        )
    }

    #[tokio::test]
    async fn test_raw_table_read_paths_honor_file_index_read_option() {
        let mut indexed_file = file("missing.mosaic", 5, Some(0));
        indexed_file.row_count = 1;
        indexed_file.embedded_index = Some(embedded_bitmap_index().await);
        let split = split(vec![indexed_file], true);
        let table = file_index_table("memory:/table_read_file_index", None, false);
        let fields = table.schema().fields().to_vec();
        let predicate = PredicateBuilder::new(&fields)
            .equal("id", Datum::Int(99))
            .unwrap();
        let read = TableRead::new(&table, fields, vec![predicate]);

        let normal = read
            .to_arrow(std::slice::from_ref(&split))
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        assert!(normal.is_empty());

        let plan = IncrementalPlan::new(
            IncrementalScanMode::Delta,
            vec![IncrementalSplit::Data(split.clone())],
        );
        let incremental = read
            .to_incremental_arrow(&plan)
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        assert!(incremental.is_empty());
        let audit = read
            .to_audit_log_arrow(&plan)
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        assert!(audit.is_empty());

        let pk_table = file_index_table("memory:/table_read_audit_file_index", None, true);
        let pk_fields = pk_table.schema().fields().to_vec();
        let pk_predicate = PredicateBuilder::new(&pk_fields)
            .equal("id", Datum::Int(99))
            .unwrap();
        let pk_read = TableRead::new(&pk_table, pk_fields, vec![pk_predicate]);
        let splits = vec![split.clone()];
        let current_audit = AuditLogRead::new(pk_read)
            .unwrap()
            .to_arrow(&splits)
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        assert!(current_audit.is_empty());

        let disabled_table =
            file_index_table("memory:/table_read_file_index_disabled", Some(false), false);
        let disabled_fields = disabled_table.schema().fields().to_vec();
        let disabled_predicate = PredicateBuilder::new(&disabled_fields)
            .equal("id", Datum::Int(99))
            .unwrap();
        let disabled_read =
            TableRead::new(&disabled_table, disabled_fields, vec![disabled_predicate]);
        let disabled = disabled_read
            .to_arrow(&[split])
            .unwrap()
            .try_collect::<Vec<_>>()
            .await;
        assert!(disabled.is_err());
    }

    #[test]
    fn test_pk_split_needs_merge_routing() {
        // Raw convertible with known delete counts: raw read.
        let raw = split(vec![file("a", 5, Some(0))], true);
        assert!(!pk_split_needs_merge(&raw, false));

        // Not raw convertible: merge read.
        let merge = split(vec![file("a", 5, Some(0))], false);
        assert!(pk_split_needs_merge(&merge, false));

        // Raw convertible but a legacy file lacks delete_row_count: the file
        // may hide delete rows, so it must go through the merge reader.
        let legacy = split(vec![file("a", 5, None)], true);
        assert!(pk_split_needs_merge(&legacy, false));

        // DV reads can only bypass the merge when the split is known to hold
        // fully materialized rows. Level, raw-convertibility and retract-row
        // metadata all matter, including for caller-constructed splits.
        let dv_l0 = split(vec![file("a", 0, None)], false);
        assert!(pk_split_needs_merge(&dv_l0, true));
        let dv_non_raw = split(vec![file("a", 5, Some(0))], false);
        assert!(pk_split_needs_merge(&dv_non_raw, true));
        let dv_legacy = split(vec![file("a", 5, None)], true);
        assert!(pk_split_needs_merge(&dv_legacy, true));
        let dv_retracts = split(vec![file("a", 5, Some(1))], true);
        assert!(pk_split_needs_merge(&dv_retracts, true));
        let dv_compacted = split(vec![file("a", 5, Some(0))], true);
        assert!(!pk_split_needs_merge(&dv_compacted, true));
    }

    #[test]
    fn test_rowkind_rejects_null_value_kind() {
        let values = arrow_array::Int8Array::from(vec![Some(0), None]);
        assert!(matches!(
            rowkind_array_from_column(&values),
            Err(crate::Error::DataInvalid { ref message, .. }) if message.contains("null at row 1")
        ));
    }

    #[test]
    fn test_rowkind_rejects_invalid_value_kind() {
        let values = arrow_array::Int8Array::from(vec![4]);
        assert!(matches!(
            rowkind_array_from_column(&values),
            Err(crate::Error::DataInvalid { ref message, .. })
                if message.contains("invalid value 4 at row 0")
        ));
    }

    #[test]
    fn test_an_audit_log_read_refuses_a_query_auth_table() {
        let table = query_auth_table();
        let read = TableRead::new(&table, table.schema.fields().to_vec(), Vec::new());
        let audit =
            AuditLogRead::new(read).expect("the decision is per split, not at construction");
        // An empty split list reads as empty; a split without a grant does not.
        let Err(err) = audit.to_arrow(&[split_with_grant(None)]) else {
            panic!("an audit read must refuse a query-auth.enabled table")
        };
        assert!(
            matches!(err, crate::Error::Unsupported { ref message }
                if message.contains("query-auth.enabled")),
            "{err:?}"
        );
    }

    #[test]
    fn test_an_audit_log_read_checks_marked_splits_on_a_primary_key_table() {
        // The primary-key path builds its readers itself, so it must not skip
        // the split-carried decision `PaimonTableRead::to_arrow` makes.
        let table = file_index_table("memory:/table_read_audit_marked_split", None, true);
        let read = TableRead::new(&table, table.schema().fields().to_vec(), Vec::new());
        let audit = AuditLogRead::new(read).unwrap();
        let Err(err) = audit.to_arrow(&[split_with_grant(None)]) else {
            panic!("a marked split without a grant must be refused")
        };
        assert!(
            matches!(err, crate::Error::Unsupported { ref message }
                if message.contains("query-auth.enabled")),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn test_an_assembled_query_auth_handle_refuses_even_an_empty_read() {
        // A handle no catalog minted a session for cannot be authorized, so an
        // empty split list is not an empty result but a refusal.
        let table = query_auth_table();
        let read = TableRead::new(&table, table.schema.fields().to_vec(), Vec::new());
        let Err(err) = read.to_arrow(&[]) else {
            panic!("an assembled query-auth handle must refuse")
        };
        assert!(
            matches!(err, crate::Error::Unsupported { ref message }
                if message.contains("query-auth.enabled")),
            "{err:?}"
        );
        // A loaded handle with an empty plan still reads as empty.
        let loaded = crate::table::rest_query_auth_table().await;
        let read = TableRead::new(&loaded, loaded.schema.fields().to_vec(), Vec::new());
        assert!(read.to_arrow(&[]).is_ok());
    }

    #[test]
    fn test_a_marked_split_refuses_the_row_kind_read() {
        // A streaming split of a primary-key table is the path that reads raw.
        let paimon = file_index_table("memory:/table_read_row_kind_marked", None, true);
        let read = TableRead::new(&paimon, paimon.schema().fields().to_vec(), Vec::new());
        let marked = crate::table::DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(crate::spec::BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path("memory:/t/bucket-0".to_string())
            .with_total_buckets(1)
            .with_data_files(Vec::new())
            .with_streaming(true)
            .build()
            .unwrap()
            .planned(None);
        let Err(err) = read.to_arrow_with_row_kind(&[marked]) else {
            panic!("a marked split must refuse a row-kind read")
        };
        assert!(
            matches!(err, crate::Error::Unsupported { ref message }
                if message.contains("query-auth.enabled")),
            "{err:?}"
        );
    }

    fn stale_handle(name: &str, options: &[(&str, &str)]) -> Table {
        let mut builder = crate::spec::Schema::builder().column(
            "id",
            crate::spec::DataType::Int(crate::spec::IntType::new()),
        );
        for (key, value) in options {
            builder = builder.option(*key, *value);
        }
        Table::new(
            FileIOBuilder::new("file").build().unwrap(),
            Identifier::new("default", name),
            format!("/tmp/test-{name}"),
            crate::spec::TableSchema::new(0, &builder.build().unwrap()),
            None,
        )
    }

    #[test]
    fn test_a_marked_split_refuses_the_format_and_incremental_reads() {
        let stamped = split_with_grant(None);

        let format = stale_handle(
            "fmt",
            &[("type", "format-table"), ("file.format", "parquet")],
        );
        let read =
            TableRead::new_format(&format, format.schema().fields().to_vec(), Vec::new(), None);
        let Err(err) = read.to_arrow(std::slice::from_ref(&stamped)) else {
            panic!("a marked split must refuse a format read")
        };
        assert!(
            matches!(err, crate::Error::Unsupported { ref message }
                if message.contains("query-auth.enabled")),
            "{err:?}"
        );

        let paimon = stale_handle("inc", &[]);
        let read = TableRead::new(&paimon, paimon.schema().fields().to_vec(), Vec::new());
        let plan = IncrementalPlan::new(
            IncrementalScanMode::Delta,
            vec![IncrementalSplit::Data(stamped)],
        );
        let Err(err) = read.to_incremental_arrow(&plan) else {
            panic!("a marked split must refuse an incremental read")
        };
        assert!(
            matches!(err, crate::Error::Unsupported { ref message }
                if message.contains("query-auth.enabled")),
            "{err:?}"
        );
    }

    fn split_with_grant(
        grant: Option<crate::table::query_auth::QueryAuthGrant>,
    ) -> crate::table::DataSplit {
        crate::table::DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(crate::spec::BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path("memory:/t/bucket-0".to_string())
            .with_total_buckets(1)
            .with_data_files(Vec::new())
            .build()
            .unwrap()
            .planned(grant.map(std::sync::Arc::new))
    }

    fn grant_for(table: &Table, restricted: bool) -> crate::table::query_auth::QueryAuthGrant {
        crate::table::query_auth::QueryAuthGrant::new(
            crate::api::AuthTableQueryResponse {
                filter: restricted.then(|| vec!["{}".to_string()]),
                column_masking: None,
            },
            table
                .query_auth_session()
                .expect("a catalog-loaded table has a session"),
        )
    }

    #[tokio::test]
    async fn test_one_unrestricted_grant_does_not_cover_the_other_splits() {
        let table = crate::table::rest_query_auth_table().await;
        let read = TableRead::new(&table, table.schema.fields().to_vec(), Vec::new());
        let allowed = split_with_grant(Some(grant_for(&table, false)));
        for other in [
            split_with_grant(Some(grant_for(&table, true))),
            split_with_grant(None),
        ] {
            assert!(
                read.to_arrow(&[allowed.clone(), other]).is_err(),
                "every split must be authorized on its own"
            );
        }
    }

    #[test]
    fn test_engine_served_table_is_refused_at_the_read_boundary() {
        let schema = crate::spec::Schema::builder()
            .column(
                "id",
                crate::spec::DataType::Int(crate::spec::IntType::new()),
            )
            .option("type", "iceberg-table")
            .build()
            .unwrap();
        let table = Table::new(
            crate::io::FileIOBuilder::new("file").build().unwrap(),
            crate::catalog::Identifier::new("default", "ice_t"),
            "/tmp/test-engine-served-read".to_string(),
            crate::spec::TableSchema::new(0, &schema),
            None,
        );
        let read = TableRead::new(&table, table.schema.fields().to_vec(), Vec::new());
        let err = match read.to_arrow(&[split_with_grant(None)]) {
            Ok(_) => panic!("an engine-served table must not be read as Paimon"),
            Err(err) => err,
        };
        assert!(
            matches!(err, crate::Error::Unsupported { ref message }
                if message.contains("cannot be served as a Paimon table")),
            "got {err:?}"
        );
    }

    #[tokio::test]
    async fn test_a_row_id_filter_configured_on_the_read_is_refused() {
        let table = crate::table::rest_query_auth_table().await;
        let row_id = Predicate::Leaf {
            index: 0,
            column: crate::spec::ROW_ID_FIELD_NAME.to_string(),
            data_type: crate::spec::DataType::BigInt(crate::spec::BigIntType::new()),
            op: crate::spec::PredicateOperator::GtEq,
            literals: vec![crate::spec::Datum::Long(1)],
        };
        let read = TableRead::new(&table, table.schema.fields().to_vec(), vec![row_id]);
        let split = split_with_grant(Some(grant_for(&table, false)));
        let err = match read.to_arrow(&[split]) {
            Ok(_) => panic!("a system-column filter must be refused"),
            Err(err) => err,
        };
        assert!(
            matches!(err, crate::Error::Unsupported { ref message }
                if message.contains("system column '_ROW_ID'")),
            "got {err:?}"
        );
    }

    #[tokio::test]
    async fn test_a_field_outside_the_current_schema_is_refused() {
        let table = crate::table::rest_query_auth_table().await;
        let dropped = crate::spec::DataField::new(
            999,
            "dropped".to_string(),
            crate::spec::DataType::Int(crate::spec::IntType::new()),
        );
        let real = table.schema().fields()[0].clone();
        let reshaped = crate::spec::DataField::new(
            real.id(),
            real.name().to_string(),
            crate::spec::DataType::Row(crate::spec::RowType::new(vec![
                crate::spec::DataField::new(
                    1,
                    "hidden".to_string(),
                    crate::spec::DataType::Int(crate::spec::IntType::new()),
                ),
            ])),
        );

        for field in [dropped, reshaped] {
            let read = TableRead::new(&table, vec![field], Vec::new());
            let split = split_with_grant(Some(grant_for(&table, false)));
            let err = match read.to_arrow(&[split]) {
                Ok(_) => panic!("a field outside the current schema must be refused"),
                Err(err) => err,
            };
            assert!(
                matches!(err, crate::Error::Unsupported { ref message }
                    if message.contains("not a column of the current schema")),
                "got {err:?}"
            );
        }
    }

    #[test]
    fn test_a_serialized_split_still_demands_authorization() {
        let stamped = split_with_grant(None);
        let bytes = serde_json::to_vec(&stamped).unwrap();
        let restored: crate::table::DataSplit = serde_json::from_slice(&bytes).unwrap();
        assert!(
            restored.query_auth_grant().is_none(),
            "the grant is dropped"
        );
        assert!(
            restored.query_auth_required(),
            "but the demand for authorization survives"
        );

        let stale = Table::new(
            crate::io::FileIOBuilder::new("file").build().unwrap(),
            crate::catalog::Identifier::new("default", "stale"),
            "/tmp/test-stale-handle".to_string(),
            crate::spec::TableSchema::new(
                0,
                &crate::spec::Schema::builder()
                    .column(
                        "id",
                        crate::spec::DataType::Int(crate::spec::IntType::new()),
                    )
                    .build()
                    .unwrap(),
            ),
            None,
        );
        assert!(!stale.schema().core_options().query_auth_enabled());
        let read = TableRead::new(&stale, stale.schema().fields().to_vec(), Vec::new());
        assert!(
            read.to_arrow(&[restored]).is_err(),
            "a round-tripped split must fail closed even on a handle that predates the option"
        );
    }

    #[tokio::test]
    async fn test_a_grant_from_another_handle_refuses_the_read() {
        let table = crate::table::rest_query_auth_table().await;
        let other = crate::table::rest_query_auth_table().await;
        let read = TableRead::new(&table, table.schema.fields().to_vec(), Vec::new());
        let err = match read.to_arrow(&[split_with_grant(Some(grant_for(&other, false)))]) {
            Ok(_) => panic!("a grant obtained elsewhere must not authorize this read"),
            Err(err) => err,
        };
        assert!(
            matches!(err, crate::Error::Unsupported { ref message }
                if message.contains("different table, schema or session")),
            "got {err:?}"
        );
    }

    #[tokio::test]
    async fn test_restricted_grant_on_a_split_refuses_the_read() {
        let table = crate::table::rest_query_auth_table().await;
        let read = TableRead::new(&table, table.schema.fields().to_vec(), Vec::new());
        let split = split_with_grant(Some(grant_for(&table, true)));
        assert!(
            matches!(
                read.to_arrow(&[split]),
                Err(crate::Error::Unsupported { ref message }) if message.contains("query-auth.enabled")
            ),
            "a row filter this client cannot apply must refuse the read"
        );
    }

    #[tokio::test]
    async fn test_unrestricted_grant_on_a_split_allows_the_read() {
        let table = crate::table::rest_query_auth_table().await;
        let read = TableRead::new(&table, table.schema.fields().to_vec(), Vec::new());
        let split = split_with_grant(Some(grant_for(&table, false)));
        assert!(
            read.to_arrow(&[split]).is_ok(),
            "an unrestricted grant must let the read through"
        );
    }

    #[test]
    fn test_direct_table_read_fails_closed_when_query_auth_enabled() {
        let table = query_auth_table();
        let read = TableRead::new(&table, table.schema.fields().to_vec(), Vec::new());
        let split = crate::table::DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(crate::spec::BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path("memory:/t/bucket-0".to_string())
            .with_total_buckets(1)
            .with_data_files(Vec::new())
            .build()
            .unwrap();
        assert!(
            matches!(
                read.to_arrow(&[split]),
                Err(crate::Error::Unsupported { ref message }) if message.contains("query-auth.enabled")
            ),
            "directly-constructed read of a query-auth.enabled table must fail closed"
        );
    }

    #[test]
    fn test_direct_table_read_validates_and_can_override_parquet_budget() {
        for format_table in [false, true] {
            let table = table_with_invalid_parquet_budget(format_table);
            let read = TableRead::new(&table, table.schema.fields().to_vec(), Vec::new());
            assert!(matches!(
                read.to_arrow(&[]),
                Err(crate::Error::DataInvalid { ref message, .. })
                    if message.contains("row-group.parallelism")
            ));

            let read = TableRead::new(&table, table.schema.fields().to_vec(), Vec::new())
                .with_parquet_read_budget(Arc::new(ReadBudget::default()));
            assert!(read.to_arrow(&[]).is_ok());
        }
    }

    fn table_with_mosaic_prefetch_options(row_groups: &str, max_bytes: &str) -> Table {
        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .option("mosaic.read.prefetch-row-groups", row_groups)
            .option("mosaic.read.prefetch-max-bytes", max_bytes);
        Table::new(
            FileIOBuilder::new("memory").build().unwrap(),
            Identifier::new("default", "mosaic_prefetch_t"),
            "memory:/mosaic_prefetch_t".to_string(),
            TableSchema::new(0, &schema.build().unwrap()),
            None,
        )
    }

    #[test]
    fn test_mosaic_prefetch_options_come_from_table_options() {
        let table = table_with_mosaic_prefetch_options("0", "16 mb");
        assert_eq!(
            configured_mosaic_prefetch(&table).unwrap(),
            MosaicPrefetchOptions {
                row_groups: 0,
                max_bytes: 16 * 1024 * 1024,
            }
        );
        let read = TableRead::new(&table, table.schema.fields().to_vec(), Vec::new());
        assert!(read.to_arrow(&[]).is_ok());

        for (row_groups, max_bytes) in [("-1", "64 mb"), ("8", "0")] {
            let table = table_with_mosaic_prefetch_options(row_groups, max_bytes);
            let read = TableRead::new(&table, table.schema.fields().to_vec(), Vec::new());
            assert!(matches!(
                read.to_arrow(&[]),
                Err(crate::Error::DataInvalid { ref message, .. })
                    if message.contains("mosaic.read.prefetch")
            ));
        }
    }

    #[test]
    fn test_direct_incremental_read_fails_closed_when_query_auth_enabled() {
        let table = query_auth_table();
        let read = TableRead::new(&table, table.schema.fields().to_vec(), Vec::new());
        let plan = IncrementalPlan::new(IncrementalScanMode::Delta, Vec::new());
        assert!(
            matches!(
                read.to_incremental_arrow(&plan),
                Err(crate::Error::Unsupported { ref message }) if message.contains("query-auth.enabled")
            ),
            "directly-constructed incremental read of a query-auth.enabled table must fail closed"
        );
    }

    #[test]
    fn test_direct_audit_log_read_fails_closed_when_query_auth_enabled() {
        let table = query_auth_table();
        let read = TableRead::new(&table, table.schema.fields().to_vec(), Vec::new());
        let plan = IncrementalPlan::new(IncrementalScanMode::Delta, Vec::new());
        assert!(
            matches!(
                read.to_audit_log_arrow(&plan),
                Err(crate::Error::Unsupported { ref message }) if message.contains("query-auth.enabled")
            ),
            "directly-constructed audit-log read of a query-auth.enabled table must fail closed"
        );
    }

    #[test]
    fn test_diff_accepts_nested_values_but_not_nested_keys() {
        use crate::spec::{
            ArrayType, BinaryType, BlobType, DecimalType, IntType, MapType, MultisetType, RowType,
            TimeType, TimestampType, VarCharType,
        };

        let decimal = DataField::new(
            1,
            "amount".to_string(),
            DataType::Decimal(DecimalType::new(10, 2).unwrap()),
        );
        let nested = DataField::new(
            2,
            "tags".to_string(),
            DataType::Array(ArrayType::new(DataType::Int(IntType::new()))),
        );
        let timestamp = DataField::new(
            3,
            "created_at".to_string(),
            DataType::Timestamp(TimestampType::new(6).unwrap()),
        );
        let binary = DataField::new(
            4,
            "payload".to_string(),
            DataType::Binary(BinaryType::new(8).unwrap()),
        );
        let time = DataField::new(
            5,
            "time".to_string(),
            DataType::Time(TimeType::new(3).unwrap()),
        );
        ensure_diff_supported_read_type(&[decimal, timestamp, binary, time], &[0]).unwrap();
        ensure_diff_supported_read_type(std::slice::from_ref(&nested), &[]).unwrap();
        assert!(matches!(
            ensure_diff_supported_read_type(&[nested], &[0]),
            Err(crate::Error::Unsupported { message }) if message.contains("tags")
        ));

        let complex = DataField::new(
            6,
            "complex".to_string(),
            DataType::Array(ArrayType::new(DataType::Row(RowType::new(vec![
                DataField::new(
                    7,
                    "counts".to_string(),
                    DataType::Map(MapType::new(
                        DataType::VarChar(VarCharType::string_type()),
                        DataType::Multiset(MultisetType::new(DataType::Int(IntType::new()))),
                    )),
                ),
            ])))),
        );
        ensure_diff_supported_read_type(&[complex], &[]).unwrap();

        let unsupported = DataField::new(
            8,
            "blobs".to_string(),
            DataType::Array(ArrayType::new(DataType::Blob(BlobType::new()))),
        );
        assert!(matches!(
            ensure_diff_supported_read_type(&[unsupported], &[]),
            Err(crate::Error::Unsupported { message }) if message.contains("blobs")
        ));
    }

    #[test]
    fn test_diff_nested_struct_ignores_children_of_null_parent() {
        use arrow_array::{Int32Array, StructArray};
        use arrow_buffer::NullBuffer;
        use arrow_schema::{DataType as ArrowDataType, Field};

        let field = Arc::new(Field::new("child", ArrowDataType::Int32, true));
        let left = StructArray::try_new(
            vec![Arc::clone(&field)].into(),
            vec![Arc::new(Int32Array::from(vec![Some(10), Some(20), None]))],
            Some(NullBuffer::from(vec![false, true, true])),
        )
        .unwrap();
        let right = StructArray::try_new(
            vec![field].into(),
            vec![Arc::new(Int32Array::from(vec![Some(99), Some(21), None]))],
            Some(NullBuffer::from(vec![false, true, true])),
        )
        .unwrap();
        assert!(value_equal_at(&left, 0, &right, 0).unwrap());
        assert!(!value_equal_at(&left, 1, &right, 1).unwrap());
        assert!(value_equal_at(&left, 2, &right, 2).unwrap());
        assert!(!value_equal_at(&left, 0, &right, 1).unwrap());
    }

    #[test]
    fn test_diff_nested_list_compares_sliced_values_and_null_elements() {
        use arrow_array::{Float32Array, ListArray};
        use arrow_buffer::{OffsetBuffer, ScalarBuffer};
        use arrow_schema::{DataType as ArrowDataType, Field};

        let element = Arc::new(Field::new("element", ArrowDataType::Float32, true));
        let left = ListArray::new(
            Arc::clone(&element),
            OffsetBuffer::new(ScalarBuffer::from(vec![0, 1, 3, 4, 5])),
            Arc::new(Float32Array::from(vec![
                Some(9.0),
                Some(f32::NAN),
                None,
                Some(-0.0),
                Some(8.0),
            ])),
            None,
        );
        let right = ListArray::new(
            element,
            OffsetBuffer::new(ScalarBuffer::from(vec![0, 1, 3, 4, 5])),
            Arc::new(Float32Array::from(vec![
                Some(7.0),
                Some(f32::from_bits(0xffc0_0001)),
                None,
                Some(0.0),
                Some(6.0),
            ])),
            None,
        );
        let left_slice = left.slice(1, 2);
        let right_slice = right.slice(1, 2);
        assert!(value_equal_at(&left_slice, 0, &right_slice, 0).unwrap());
        assert!(!value_equal_at(&left_slice, 1, &right_slice, 1).unwrap());
        assert!(!value_equal_at(&left, 0, &right, 0).unwrap());
    }

    #[test]
    fn test_diff_scalar_compare_distinguishes_null_and_nan_values() {
        use arrow_array::{Float32Array, Int32Array};

        let null = Int32Array::from(vec![None]);
        let zero = Int32Array::from(vec![Some(0)]);
        assert_eq!(
            scalar_compare(&null, 0, &zero, 0).unwrap(),
            Ordering::Less,
            "NULL -> 0 must be reported as a changed value"
        );

        let nan = Float32Array::from(vec![f32::NAN]);
        let one = Float32Array::from(vec![1.0]);
        assert_ne!(
            scalar_compare(&nan, 0, &one, 0).unwrap(),
            Ordering::Equal,
            "NaN must not hide a change to a finite value"
        );

        let negative_nan = Float32Array::from(vec![f32::from_bits(0xffc0_0001)]);
        assert_eq!(
            scalar_compare(&nan, 0, &negative_nan, 0).unwrap(),
            Ordering::Equal,
            "all NaN representations must compare equal like Java Float.compare"
        );

        let negative_zero = Float32Array::from(vec![-0.0]);
        let positive_zero = Float32Array::from(vec![0.0]);
        assert_ne!(
            scalar_compare(&negative_zero, 0, &positive_zero, 0).unwrap(),
            Ordering::Equal,
            "signed zero must remain distinguishable like Java Float.compare"
        );
    }
}
