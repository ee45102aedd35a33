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

use super::metadata_cache::FileMetadataCache;
use super::shredding::PhysicalFormatWriterFactory;
use super::{
    timestamp_millis_schema, FilePredicates, FormatFileReader, FormatFileWriter, FormatWriteResult,
    FormatWriterFactory,
};
use crate::arrow::filtering::{predicates_may_match_with_schema, StatsAccessor};
use crate::arrow::read_budget::ReadPermit;
use crate::arrow::shredding::map::MapShreddingReadPlan;
use crate::arrow::shredding::ShreddingReadPlan;
use crate::arrow::{ReadBudget, RowFilter, RowFilterContext};
use crate::io::{FileRead, OutputFile};
use crate::spec::stats::BinaryTableStats;
use crate::spec::{
    is_row_tracking_column, BinaryRowBuilder, CoreOptions, DataField, DataType, Datum,
    MetadataStatsMode, Predicate, PredicateOperator,
};
use crate::table::{ArrowRecordBatchStream, RowRange};
use crate::Error;
use arrow_array::{BooleanArray, RecordBatch};
use arrow_cast::cast;
use async_trait::async_trait;
use bytes::Bytes;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt, TryFutureExt, TryStreamExt};
use parquet::arrow::arrow_reader::{
    ArrowPredicate, ArrowPredicateFn, ArrowReaderMetadata, ArrowReaderOptions,
    RowFilter as ParquetRowFilter, RowSelection, RowSelector,
};
use parquet::arrow::async_reader::{AsyncFileReader, MetadataFetch};
use parquet::arrow::{AsyncArrowWriter, ParquetRecordBatchStreamBuilder, ProjectionMask};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::{
    KeyValue, PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader, RowGroupMetaData,
};
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::statistics::Statistics as ParquetStatistics;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

pub(crate) struct ParquetFormatReader {
    read_budget: Option<Arc<ReadBudget>>,
    page_index_enabled: bool,
    metadata_cache_enabled: bool,
}

impl Default for ParquetFormatReader {
    fn default() -> Self {
        Self {
            read_budget: None,
            page_index_enabled: true,
            metadata_cache_enabled: true,
        }
    }
}

impl ParquetFormatReader {
    pub(crate) fn with_options(
        options: &HashMap<String, String>,
        read_budget: Option<Arc<ReadBudget>>,
    ) -> crate::Result<Self> {
        let core_options = CoreOptions::new(options);
        Ok(Self {
            read_budget,
            page_index_enabled: core_options.parquet_filter_column_index_enabled()?,
            // Format-table files may be replaced in place.
            metadata_cache_enabled: !core_options.is_format_table(),
        })
    }

    #[cfg(test)]
    fn with_read_budget(read_budget: Arc<ReadBudget>) -> Self {
        Self {
            read_budget: Some(read_budget),
            ..Default::default()
        }
    }

    #[cfg(test)]
    fn with_page_index_enabled(mut self, enabled: bool) -> Self {
        self.page_index_enabled = enabled;
        self
    }
}

pub(crate) struct ParquetGranule {
    pub(crate) first_row: i64,
    pub(crate) row_count: i64,
    pub(crate) byte_ranges: Vec<Range<u64>>,
}

pub(crate) async fn parquet_granules(
    reader: Box<dyn FileRead>,
    file_size: u64,
    column_name: &str,
    page_index_enabled: bool,
) -> crate::Result<(Vec<ParquetGranule>, bool)> {
    let mut options = ArrowReaderOptions::new();
    if page_index_enabled {
        options = options.with_offset_index_policy(PageIndexPolicy::Optional);
    }
    let mut reader = ArrowFileReader::new(file_size, reader.into());
    let metadata = reader.get_metadata(Some(&options)).await?;
    let columns = metadata
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .enumerate()
        .filter_map(|(index, column)| {
            column
                .path()
                .parts()
                .first()
                .is_some_and(|part| part == column_name)
                .then_some(index)
        })
        .collect::<Vec<_>>();
    if columns.is_empty() {
        return Err(Error::DataInvalid {
            message: format!("Parquet column '{column_name}' not found"),
            source: None,
        });
    }
    let Some(offset_index) = metadata
        .offset_index()
        .filter(|index| index.len() == metadata.row_groups().len())
    else {
        return Ok((row_group_granules(&metadata, &columns), false));
    };

    let mut granules = Vec::new();
    let mut cursor = 0i64;
    for (row_group, indexes) in metadata.row_groups().iter().zip(offset_index) {
        let Ok(row_count) = usize::try_from(row_group.num_rows()) else {
            return Ok((row_group_granules(&metadata, &columns), false));
        };
        let Some(leaf_pages) = columns
            .iter()
            .map(|index| indexes.get(*index).map(|index| index.page_locations()))
            .collect::<Option<Vec<_>>>()
        else {
            return Ok((row_group_granules(&metadata, &columns), false));
        };
        let pages = leaf_pages[0];
        if pages.is_empty()
            || leaf_pages.iter().any(|other| {
                !page_boundaries_valid(other, row_count)
                    || other.len() != pages.len()
                    || other
                        .iter()
                        .zip(pages)
                        .any(|(a, b)| a.first_row_index != b.first_row_index)
            })
        {
            return Ok((row_group_granules(&metadata, &columns), false));
        }
        for (page_index, page) in pages.iter().enumerate() {
            let next = pages
                .get(page_index + 1)
                .map_or(row_group.num_rows(), |page| page.first_row_index);
            let mut byte_ranges = Vec::with_capacity(columns.len() * 2);
            for (column_index, pages) in columns.iter().zip(&leaf_pages) {
                let column = row_group.column(*column_index);
                let (column_start, _) = column.byte_range();
                if let Some(first) = pages.first() {
                    let Ok(first_page) = u64::try_from(first.offset) else {
                        return Ok((row_group_granules(&metadata, &columns), false));
                    };
                    if column_start < first_page {
                        byte_ranges.push(column_start..first_page);
                    }
                }
                let page = &pages[page_index];
                let (Ok(start), Ok(length)) = (
                    u64::try_from(page.offset),
                    u64::try_from(page.compressed_page_size),
                ) else {
                    return Ok((row_group_granules(&metadata, &columns), false));
                };
                let Some(end) = start.checked_add(length).filter(|end| *end <= file_size) else {
                    return Ok((row_group_granules(&metadata, &columns), false));
                };
                byte_ranges.push(start..end);
            }
            granules.push(ParquetGranule {
                first_row: cursor + page.first_row_index,
                row_count: next - page.first_row_index,
                byte_ranges,
            });
        }
        cursor += row_group.num_rows();
    }
    Ok((granules, true))
}

fn row_group_granules(metadata: &ParquetMetaData, columns: &[usize]) -> Vec<ParquetGranule> {
    let mut cursor = 0i64;
    metadata
        .row_groups()
        .iter()
        .map(|row_group| {
            let granule = ParquetGranule {
                first_row: cursor,
                row_count: row_group.num_rows(),
                byte_ranges: columns
                    .iter()
                    .map(|index| {
                        let (start, length) = row_group.column(*index).byte_range();
                        start..start + length
                    })
                    .collect(),
            };
            cursor += row_group.num_rows();
            granule
        })
        .collect()
}

enum ParquetRowGroupMessage {
    Batch(RecordBatch),
    Error(Error),
    Done,
}

struct ParquetRowFilterPredicate {
    inner: Box<dyn RowFilter>,
    projection: ProjectionMask,
}

impl ArrowPredicate for ParquetRowFilterPredicate {
    fn projection(&self) -> &ProjectionMask {
        &self.projection
    }

    fn evaluate(&mut self, batch: RecordBatch) -> Result<BooleanArray, arrow_schema::ArrowError> {
        self.inner.evaluate(batch)
    }
}

fn row_filter_required_bytes(
    projection: &ProjectionMask,
    parquet_schema: &parquet::schema::types::SchemaDescriptor,
    metadata: &ParquetMetaData,
) -> usize {
    (0..parquet_schema.num_columns())
        .filter(|leaf_index| projection.leaf_included(*leaf_index))
        .flat_map(|leaf_index| {
            metadata
                .row_groups()
                .iter()
                .map(move |row_group| row_group.column(leaf_index).compressed_size())
        })
        .filter_map(|size| usize::try_from(size).ok())
        .fold(0, usize::saturating_add)
}

/// Parquet implementation of [`FormatFileWriter`].
/// Streams data directly to storage via `AsyncArrowWriter` + opendal.
pub(crate) struct ParquetFormatWriter {
    inner: AsyncArrowWriter<Box<dyn crate::io::AsyncFileWrite>>,
    /// Logical Arrow schema accepted from the Paimon write path.
    input_schema: arrow_schema::SchemaRef,
    /// Physical Arrow schema the writer was created with; re-encoded with the
    /// shredding field metadata at close time.
    schema: arrow_schema::SchemaRef,
    write_fields: Option<Vec<DataField>>,
    stats_modes: Option<Vec<MetadataStatsMode>>,
    stats_dense_store: bool,
}

pub(crate) struct ParquetWriterFactory {
    schema: arrow_schema::SchemaRef,
    write_fields: Option<Vec<DataField>>,
    zstd_level: i32,
    format_options: HashMap<String, String>,
    stats_fields: Option<Vec<DataField>>,
}

impl ParquetWriterFactory {
    pub(crate) fn new(
        schema: arrow_schema::SchemaRef,
        write_fields: Option<Vec<DataField>>,
        zstd_level: i32,
        format_options: HashMap<String, String>,
        stats_fields: Option<Vec<DataField>>,
    ) -> Self {
        Self {
            schema,
            write_fields,
            zstd_level,
            format_options,
            stats_fields,
        }
    }
}

#[async_trait]
impl FormatWriterFactory for ParquetWriterFactory {
    async fn create_writer(
        &self,
        output: &OutputFile,
        compression: &str,
    ) -> crate::Result<Box<dyn FormatFileWriter>> {
        self.create_physical_writer(
            output,
            compression,
            self.schema.clone(),
            self.write_fields.as_deref(),
        )
        .await
    }
}

#[async_trait]
impl PhysicalFormatWriterFactory for ParquetWriterFactory {
    async fn create_physical_writer(
        &self,
        output: &OutputFile,
        compression: &str,
        schema: arrow_schema::SchemaRef,
        write_fields: Option<&[DataField]>,
    ) -> crate::Result<Box<dyn FormatFileWriter>> {
        Ok(Box::new(
            ParquetFormatWriter::new(
                output,
                schema,
                compression,
                self.zstd_level,
                self.stats_fields.as_deref().or(write_fields),
                &self.format_options,
            )
            .await?,
        ))
    }
}

impl ParquetFormatWriter {
    pub(crate) async fn new(
        output: &OutputFile,
        schema: arrow_schema::SchemaRef,
        compression: &str,
        zstd_level: i32,
        write_fields: Option<&[DataField]>,
        format_options: &HashMap<String, String>,
    ) -> crate::Result<Self> {
        // Reject a bad codec before allocating the writer.
        let codec = parse_compression(compression, zstd_level)?;
        let core_options = CoreOptions::new(format_options);
        let page_index_enabled = core_options.parquet_write_page_index_enabled()?;
        let props = parquet_writer_properties(codec, page_index_enabled, format_options)?;
        let async_write = output.async_writer().await?;
        let input_schema = schema;
        let schema = timestamp_millis_schema(&input_schema);
        let inner = create_parquet_arrow_writer(async_write, schema.clone(), props)?;
        let stats_modes = write_fields
            .map(|fields| core_options.metadata_stats_modes(fields.iter().map(DataField::name)))
            .transpose()?;
        Ok(Self {
            inner,
            input_schema,
            schema,
            write_fields: write_fields.map(|fields| fields.to_vec()),
            stats_modes,
            stats_dense_store: core_options.metadata_stats_dense_store(),
        })
    }
}

fn create_parquet_arrow_writer(
    async_write: Box<dyn crate::io::AsyncFileWrite>,
    schema: arrow_schema::SchemaRef,
    props: WriterProperties,
) -> crate::Result<AsyncArrowWriter<Box<dyn crate::io::AsyncFileWrite>>> {
    // Commit one final Arrow schema at close, after shredding metadata is known.
    let options = parquet::arrow::arrow_writer::ArrowWriterOptions::new()
        .with_properties(props)
        .with_skip_arrow_metadata(true);
    AsyncArrowWriter::try_new_with_options(async_write, schema, options).map_err(|e| {
        crate::Error::DataInvalid {
            message: format!("Failed to create parquet writer: {e}"),
            source: None,
        }
    })
}

fn parquet_writer_properties(
    codec: Compression,
    page_index_enabled: bool,
    options: &HashMap<String, String>,
) -> crate::Result<WriterProperties> {
    const DICTIONARY: &str = "parquet.enable.dictionary";
    const COLUMN_PREFIX: &str = "parquet.enable.dictionary#";
    let mut props = WriterProperties::builder()
        .set_compression(codec)
        .set_statistics_enabled(if page_index_enabled {
            EnabledStatistics::Page
        } else {
            EnabledStatistics::Chunk
        })
        .set_offset_index_disabled(!page_index_enabled);
    let parse = |key: &str, value: &str| match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(crate::Error::ConfigInvalid {
            message: format!("Option '{key}' must be true or false, got: {value}"),
        }),
    };
    if let Some(value) = options.get(DICTIONARY) {
        props = props.set_dictionary_enabled(parse(DICTIONARY, value)?);
    }
    for (key, value) in options {
        if let Some(path) = key.strip_prefix(COLUMN_PREFIX) {
            if path.split('.').any(str::is_empty) {
                return Err(crate::Error::ConfigInvalid {
                    message: format!("Option '{key}' requires a nonempty Parquet column path"),
                });
            }
            props = props.set_column_dictionary_enabled(
                parquet::schema::types::ColumnPath::new(
                    path.split('.').map(str::to_owned).collect(),
                ),
                parse(key, value)?,
            );
        }
    }
    Ok(props.build())
}

/// Every `file.compression` value a parquet write accepts.
///
/// `brotli` and `lzo` are left out on purpose, although parquet names both codecs:
/// `BrotliCodec` and `LzoCodec` are third-party classes absent from parquet-java and
/// Hadoop alike, so neither can be read back. `lzo` has no encoder in arrow-rs either,
/// and mapping it would panic in the column writer rather than fail here.
fn supported_compressions() -> Vec<&'static str> {
    vec![
        "none",
        "uncompressed",
        "snappy",
        "gzip",
        "gz",
        "lz4",
        "lz4_raw",
        "zstd",
    ]
}

/// Map Paimon `file.compression` value to parquet [`Compression`].
///
/// An unrecognized value is rejected instead of falling back to `UNCOMPRESSED`: no
/// later stage on the plain-parquet path re-checks it, so the fallback wrote raw pages
/// and recorded codec id 0 in the footer, leaving a typo indistinguishable from
/// `file.compression=none` in the finished file. Java rejects the same value at the
/// same point, when the per-file writer is built (`RowDataParquetBuilder#createWriter`
/// -> `CompressionCodecName#fromConf`).
///
/// The value is deliberately not trimmed, unlike the sibling block-compression options:
/// Java's `valueOf` rejects `"zstd "`, so trimming would accept a spelling that fails
/// on the Java side of the same table.
fn parse_compression(codec: &str, zstd_level: i32) -> crate::Result<Compression> {
    match codec.to_ascii_lowercase().as_str() {
        "zstd" => {
            let level = ZstdLevel::try_new(zstd_level).unwrap_or_default();
            Ok(Compression::ZSTD(level))
        }
        // Java splits these: `lz4` selects the Hadoop framing (thrift codec id 5) and
        // `lz4_raw` the bare blocks (id 7). Both remain readable on either side, and
        // LZ4_RAW is the encoding parquet recommends, so the two spellings share it.
        "lz4" | "lz4_raw" => Ok(Compression::LZ4_RAW),
        "snappy" => Ok(Compression::SNAPPY),
        // `gz` is an alias this writer has always taken; Java's `valueOf` knows `gzip`
        // only, so it is the one accepted spelling Java would refuse.
        "gzip" | "gz" => Ok(Compression::GZIP(Default::default())),
        "none" | "uncompressed" => Ok(Compression::UNCOMPRESSED),
        _ => Err(Error::DataInvalid {
            message: format!(
                "Option 'file.compression' must be one of {}, got: {codec:?}",
                supported_compressions().join(", ")
            ),
            source: None,
        }),
    }
}

#[async_trait]
impl FormatFileWriter for ParquetFormatWriter {
    async fn write(&mut self, batch: &RecordBatch) -> crate::Result<()> {
        if batch.schema().as_ref() != self.input_schema.as_ref() {
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "Parquet write batch schema {:?} does not match writer schema {:?}",
                    batch.schema(),
                    self.input_schema
                ),
                source: None,
            });
        }
        let physical_batch;
        let batch = if self.input_schema.as_ref() == self.schema.as_ref() {
            batch
        } else {
            physical_batch = cast_record_batch_to_schema(batch, &self.schema)?;
            &physical_batch
        };
        self.inner
            .write(batch)
            .await
            .map_err(|e| crate::Error::DataInvalid {
                message: format!("Failed to write parquet batch: {e}"),
                source: None,
            })
    }

    fn num_bytes(&self) -> usize {
        self.inner.bytes_written() + self.inner.in_progress_size()
    }

    fn in_progress_size(&self) -> usize {
        self.inner.in_progress_size()
    }

    fn pending_rows(&self) -> Option<usize> {
        Some(self.inner.in_progress_rows())
    }

    async fn flush(&mut self) -> crate::Result<()> {
        self.inner
            .flush()
            .await
            .map_err(|e| crate::Error::DataInvalid {
                message: format!("Failed to flush parquet writer: {e}"),
                source: None,
            })
    }

    fn commit_field_metadata(
        &mut self,
        field_metadata: &crate::arrow::shredding::FieldMetadata,
    ) -> crate::Result<()> {
        // Retain the updated physical schema until close. A second footer key
        // is ambiguous: PyArrow and arrow-rs resolve duplicate keys differently.
        let fields: Vec<arrow_schema::FieldRef> = self
            .schema
            .fields()
            .iter()
            .map(|field| {
                let Some(extra) = field_metadata.get(field.name()) else {
                    return field.clone();
                };
                let mut metadata = extra.clone();
                metadata.extend(
                    field
                        .metadata()
                        .iter()
                        .map(|(key, value)| (key.clone(), value.clone())),
                );
                Arc::new(field.as_ref().clone().with_metadata(metadata))
            })
            .collect();
        self.schema = Arc::new(arrow_schema::Schema::new_with_metadata(
            fields,
            self.schema.metadata().clone(),
        ));
        Ok(())
    }

    async fn close(mut self: Box<Self>) -> crate::Result<FormatWriteResult> {
        self.inner.append_key_value_metadata(KeyValue::new(
            parquet::arrow::ARROW_SCHEMA_META_KEY.to_string(),
            parquet::arrow::encode_arrow_schema(&self.schema),
        ));
        let metadata = self
            .inner
            .finish()
            .await
            .map_err(|e| crate::Error::DataInvalid {
                message: format!("Failed to close parquet writer: {e}"),
                source: None,
            })?;
        let file_size = self.inner.bytes_written() as u64;
        if let (Some(write_fields), Some(stats_modes)) = (&self.write_fields, &self.stats_modes) {
            let (value_stats, value_stats_cols) =
                extract_value_stats(&metadata, write_fields, stats_modes, self.stats_dense_store);
            Ok(FormatWriteResult::with_value_stats(
                file_size,
                value_stats,
                value_stats_cols,
            ))
        } else {
            Ok(FormatWriteResult::new(file_size))
        }
    }
}

fn cast_record_batch_to_schema(
    batch: &RecordBatch,
    target_schema: &arrow_schema::SchemaRef,
) -> crate::Result<RecordBatch> {
    if batch.num_columns() != target_schema.fields().len() {
        return Err(crate::Error::DataInvalid {
            message: format!(
                "Parquet write batch has {} columns, expected {}",
                batch.num_columns(),
                target_schema.fields().len()
            ),
            source: None,
        });
    }
    let columns = batch
        .columns()
        .iter()
        .zip(target_schema.fields())
        .map(|(column, field)| {
            if column.data_type() == field.data_type() {
                Ok(column.clone())
            } else {
                cast(column, field.data_type()).map_err(|error| crate::Error::DataInvalid {
                    message: format!(
                        "Failed to convert Parquet column '{}' from {:?} to {:?}: {error}",
                        field.name(),
                        column.data_type(),
                        field.data_type()
                    ),
                    source: Some(Box::new(error)),
                })
            }
        })
        .collect::<crate::Result<Vec<_>>>()?;
    RecordBatch::try_new(target_schema.clone(), columns).map_err(|error| {
        crate::Error::DataInvalid {
            message: format!("Failed to build Parquet physical batch: {error}"),
            source: Some(Box::new(error)),
        }
    })
}

/// Options for per-row-group readers; they keep the main reader's Variant metadata schema.
fn rebuilt_reader_options(variant_schema: &Option<arrow_schema::SchemaRef>) -> ArrowReaderOptions {
    match variant_schema {
        Some(schema) => ArrowReaderOptions::new().with_schema(Arc::clone(schema)),
        None => ArrowReaderOptions::new(),
    }
}

/// File schema with `metadata: Dictionary(Int32, Binary)` for plain Variant columns read for extraction.
fn dictionary_variant_metadata_schema(
    schema: &arrow_schema::SchemaRef,
    read_fields: &[DataField],
) -> Option<arrow_schema::SchemaRef> {
    let mut changed = false;
    let fields = schema
        .fields()
        .iter()
        .map(|field| {
            let extraction = read_fields.iter().any(|read| {
                read.name() == field.name()
                    && crate::spec::is_variant_extraction_row_type(read.data_type())
            });
            match field.data_type() {
                arrow_schema::DataType::Struct(children)
                    if extraction && crate::arrow::is_variant_arrow_fields(children) =>
                {
                    changed = true;
                    let mut children = children
                        .iter()
                        .map(|child| child.as_ref().clone())
                        .collect::<Vec<_>>();
                    children[1] =
                        children[1]
                            .clone()
                            .with_data_type(arrow_schema::DataType::Dictionary(
                                Box::new(arrow_schema::DataType::Int32),
                                Box::new(arrow_schema::DataType::Binary),
                            ));
                    Arc::new(
                        field
                            .as_ref()
                            .clone()
                            .with_data_type(arrow_schema::DataType::Struct(children.into())),
                    )
                }
                _ => Arc::clone(field),
            }
        })
        .collect::<Vec<_>>();
    changed.then(|| {
        Arc::new(arrow_schema::Schema::new_with_metadata(
            fields,
            schema.metadata().clone(),
        ))
    })
}

#[async_trait]
impl FormatFileReader for ParquetFormatReader {
    async fn read_batch_stream(
        &self,
        reader: Box<dyn FileRead>,
        file_size: u64,
        read_fields: &[DataField],
        predicates: Option<&FilePredicates>,
        batch_size: Option<usize>,
        row_selection: Option<Vec<RowRange>>,
    ) -> crate::Result<ArrowRecordBatchStream> {
        let shared_reader: Arc<dyn FileRead> = reader.into();
        let arrow_file_reader = ArrowFileReader::new(file_size, Arc::clone(&shared_reader))
            .with_metadata_cache_enabled(self.metadata_cache_enabled);

        let empty_predicates = Vec::new();
        let (preds, file_fields): (&[Predicate], &[DataField]) = match predicates {
            Some(fp) => (&fp.predicates, &fp.file_fields),
            None => (&empty_predicates, &[]),
        };
        let row_filter_factory = predicates.and_then(|fp| fp.row_filter_factory.as_deref());

        // Predicates need both indexes for page-stat pruning. Row selection only
        // needs OffsetIndex so arrow-rs can avoid fetching unselected pages.
        let mut arrow_options = ArrowReaderOptions::new();
        if self.page_index_enabled {
            if !preds.is_empty() {
                arrow_options = arrow_options.with_column_index_policy(PageIndexPolicy::Optional);
            }
            if !preds.is_empty() || row_selection.is_some() {
                arrow_options = arrow_options.with_offset_index_policy(PageIndexPolicy::Optional);
            }
        }
        let mut batch_stream_builder = ParquetRecordBatchStreamBuilder::new_with_options(
            arrow_file_reader,
            arrow_options.clone(),
        )
        .await?;
        // pms patch: INT96 timestamps outside the years 1677–2262 would read as other instants.
        refuse_int96_outside_nanoseconds(
            &shared_reader,
            file_size,
            Arc::clone(batch_stream_builder.metadata()),
            Arc::clone(batch_stream_builder.schema()),
            read_fields,
            row_selection.as_deref(),
        )
        .await?;
        // Variant columns read only for extraction keep their metadata dictionary-encoded.
        let variant_schema =
            dictionary_variant_metadata_schema(batch_stream_builder.schema(), read_fields);
        if let Some(schema) = variant_schema.clone() {
            let reader_metadata = ArrowReaderMetadata::try_new(
                Arc::clone(batch_stream_builder.metadata()),
                arrow_options.with_schema(schema),
            )?;
            let reader = ArrowFileReader::new(file_size, Arc::clone(&shared_reader))
                .with_metadata_cache_enabled(self.metadata_cache_enabled);
            batch_stream_builder =
                ParquetRecordBatchStreamBuilder::new_with_metadata(reader, reader_metadata);
        }

        let parquet_schema = batch_stream_builder.parquet_schema().clone();

        // Determine whether the Arrow row filter enforces every pushed-down
        // predicate exactly. It only accepts top-level supported leaves; `Or`,
        // `Not`, and unsupported leaves fall through to conservative pruning
        // only, which is NOT exact. When any predicate is not fully enforced we
        // add a row-level residual backstop over the decoded batch.
        //
        // Fast path (the common case, including all-AND-of-simple-leaves): every
        // predicate is fully enforced, so we decode exactly `read_fields`, skip
        // the residual pass entirely, and return the stream as before — zero
        // added overhead.
        let all_enforced = preds
            .iter()
            .all(|p| predicate_fully_enforced_by_row_filter(&parquet_schema, p, file_fields));

        // Residual branch must decode the predicate columns too, or the residual
        // pass could not see a predicate on a non-projected column (Gap A). The
        // projection MASK here (which columns to DECODE) is distinct from
        // `DataFileReader`'s by-name output projection applied downstream.
        let scan_fields: Vec<DataField> = if all_enforced {
            read_fields.to_vec()
        } else {
            crate::arrow::residual::widen_scan_fields(read_fields, predicates)
        };

        // Build the MAP plan before the projection mask: a selected-key MAP
        // can then decode only __field_mapping plus the direct/overflow
        // children which may contain the requested keys.
        let map_read_plan =
            MapShreddingReadPlan::create(&scan_fields, batch_stream_builder.schema())?
                .map(Arc::new);
        let mask = read_type_projection_mask(
            &parquet_schema,
            &scan_fields,
            map_read_plan.as_deref(),
            preds,
        );
        batch_stream_builder = batch_stream_builder.with_projection(mask.clone());

        let mut decoder_predicates = build_parquet_row_filter(&parquet_schema, preds, file_fields)?
            .map(ParquetRowFilter::into_predicates)
            .unwrap_or_default();

        if let Some(factory) = row_filter_factory {
            let file_schema = batch_stream_builder.schema();
            match factory.create(RowFilterContext { file_schema }) {
                Ok(filters) => {
                    let mut external_predicates = Vec::with_capacity(filters.len());
                    for filter in filters {
                        let root_indices = filter
                            .projection()
                            .fields()
                            .iter()
                            .map(|field| file_schema.index_of(field.name()))
                            .collect::<Result<Vec<_>, _>>();
                        let mut root_indices = match root_indices {
                            Ok(indices) => indices,
                            Err(error) => {
                                log::warn!(
                                    "external row-filter projection does not match Parquet schema: {error}"
                                );
                                continue;
                            }
                        };
                        root_indices.sort_unstable();
                        root_indices.dedup();
                        let projection = ProjectionMask::roots(&parquet_schema, root_indices);
                        let required_bytes = row_filter_required_bytes(
                            &projection,
                            &parquet_schema,
                            batch_stream_builder.metadata(),
                        );
                        external_predicates.push((
                            required_bytes,
                            ParquetRowFilterPredicate {
                                inner: filter,
                                projection,
                            },
                        ));
                    }
                    external_predicates.sort_by_key(|(required_bytes, _)| *required_bytes);
                    decoder_predicates.extend(
                        external_predicates
                            .into_iter()
                            .map(|(_, predicate)| Box::new(predicate) as Box<dyn ArrowPredicate>),
                    );
                }
                Err(error) => {
                    // The hook is an optimization. The integration keeps its
                    // exact post-filter, so a per-file adaptation failure is
                    // safe to fall back from.
                    log::warn!("failed to build external Parquet row filter: {error}");
                }
            }
        }

        let mut memory_mask = mask.clone();
        for predicate in &decoder_predicates {
            memory_mask.union(predicate.projection());
        }
        // Resource-aware sequential reads build one row-group stream at a time,
        // so admission precedes its data I/O. Preserve stateful decoder filters
        // across those streams instead of recreating the engine's factory.
        let shared_filters = if self.read_budget.as_ref().is_some_and(|b| b.has_resources()) {
            std::mem::take(&mut decoder_predicates)
                .into_iter()
                .map(SharedParquetPredicate::new)
                .collect::<Vec<_>>()
        } else {
            Vec::new()
        };
        if !decoder_predicates.is_empty() {
            batch_stream_builder =
                batch_stream_builder.with_row_filter(ParquetRowFilter::new(decoder_predicates));
        }

        let predicate_row_selection = build_predicate_row_selection(
            batch_stream_builder.metadata().row_groups(),
            preds,
            file_fields,
        )?;
        let mut combined_selection = predicate_row_selection;

        // Page-level selection. Returns `None` when ColumnIndex / OffsetIndex are
        // absent (page index not loaded, older files, writer without page index)
        // or when no page could be skipped, so intersecting is a no-op then.
        let page_selection = if self.page_index_enabled {
            build_predicate_page_selection(batch_stream_builder.metadata(), preds, file_fields)?
        } else {
            None
        };
        combined_selection = intersect_optional_row_selections(combined_selection, page_selection);

        if let Some(ref ranges) = row_selection {
            let range_selection =
                build_row_ranges_selection(batch_stream_builder.metadata().row_groups(), ranges);
            combined_selection =
                intersect_optional_row_selections(combined_selection, Some(range_selection));
        }
        if let Some(ref selection) = combined_selection {
            batch_stream_builder = batch_stream_builder.with_row_selection(selection.clone());
        }
        if let Some(size) = batch_size {
            batch_stream_builder = batch_stream_builder.with_batch_size(size);
        }

        // A normal Parquet stream fetches and decodes row groups one by one.
        // For remote object stores, a full scan of a compacted file can
        // therefore serialize dozens of independent range requests behind one
        // DataFusion partition. Build one stream per row group on the
        // predicate-free path and run a bounded number concurrently.
        //
        // Row-group receivers are consumed in order and buffer one batch each,
        // preserving positional `_ROW_ID`, sort order, and batch backpressure.
        // Reads with predicates stay sequential; resource-aware reads reserve
        // each row group before opening its decoder.
        let read_budget = self
            .read_budget
            .as_ref()
            .filter(|_| preds.is_empty() && row_filter_factory.is_none());
        let row_group_parallelism = read_budget
            .map(|budget| {
                budget
                    .parallelism()
                    .min(batch_stream_builder.metadata().num_row_groups())
            })
            .unwrap_or(1);
        let selected_row_groups = self
            .read_budget
            .as_ref()
            .filter(|budget| {
                row_group_parallelism > 1 || budget.diagnostics_enabled() || budget.has_resources()
            })
            .map(|budget| {
                let mut row_group_selection = combined_selection;
                let selected_row_groups = batch_stream_builder
                    .metadata()
                    .row_groups()
                    .iter()
                    .enumerate()
                    .filter_map(|(row_group_index, row_group)| {
                        let selection = row_group_selection
                            .as_mut()
                            .map(|selection| selection.split_off(row_group.num_rows() as usize));
                        if selection
                            .as_ref()
                            .is_some_and(|selection| !selection.selects_any())
                        {
                            return None;
                        }
                        let projection = if budget.has_resources() {
                            &memory_mask
                        } else {
                            &mask
                        };
                        let projected_bytes = projected_row_group_bytes(row_group, projection);
                        Some((row_group_index, selection, projected_bytes))
                    })
                    .collect::<Vec<_>>();
                let projected_bytes = selected_row_groups
                    .iter()
                    .map(|(_, _, projected_bytes)| *projected_bytes)
                    .collect::<Vec<_>>();
                budget.record_projected_row_groups(&projected_bytes);
                selected_row_groups
            });
        if row_group_parallelism > 1 {
            let selected_row_groups =
                selected_row_groups.expect("parallel row-group reads need a selection plan");
            let row_group_count = selected_row_groups.len();
            let reader_metadata = ArrowReaderMetadata::try_new(
                batch_stream_builder.metadata().clone(),
                rebuilt_reader_options(&variant_schema),
            )?;
            let read_budget = Arc::clone(read_budget.expect("checked above"));
            let (row_group_tx, mut row_group_rx) = mpsc::channel(row_group_parallelism);
            tokio::spawn(async move {
                for (row_group_index, selection, projected_bytes) in selected_row_groups {
                    let Ok(slot) = row_group_tx.reserve().await else {
                        return;
                    };
                    let (batch_tx, batch_rx) = mpsc::channel(1);
                    let (demand_tx, demand_rx) = oneshot::channel();
                    slot.send((batch_rx, demand_tx));
                    let admitted = tokio::select! {
                        _ = row_group_tx.closed() => return,
                        permit = read_budget.acquire(projected_bytes) => permit,
                    };
                    let admitted = match admitted {
                        Err(Error::ResourceExhausted { .. }) => {
                            // Speculative prefetch must not fail a read merely
                            // because an earlier group is still decoding. Retry
                            // once this group is actually requested, after the
                            // consumer has drained its predecessors. Never wait
                            // for the caller to drop retained output buffers.
                            tokio::select! {
                                _ = row_group_tx.closed() => return,
                                _ = demand_rx => {},
                            }
                            tokio::select! {
                                _ = row_group_tx.closed() => return,
                                permit = read_budget.acquire(projected_bytes) => permit,
                            }
                        }
                        other => other,
                    };
                    let permit = match admitted {
                        Ok(permit) => permit,
                        Err(error) => {
                            let _ = batch_tx.send(ParquetRowGroupMessage::Error(error)).await;
                            return;
                        }
                    };
                    let row_group_reader = Arc::clone(&shared_reader);
                    let row_group_metadata = reader_metadata.clone();
                    let row_group_mask = mask.clone();
                    tokio::spawn(read_row_group(
                        row_group_reader,
                        file_size,
                        row_group_metadata,
                        row_group_mask,
                        row_group_index,
                        batch_size,
                        selection,
                        permit,
                        batch_tx,
                    ));
                }
            });
            let stream = async_stream::try_stream! {
                for _ in 0..row_group_count {
                    let (mut batches, demand) = row_group_rx.recv().await.ok_or_else(|| {
                        Error::UnexpectedError {
                            message: "Parquet row-group coordinator stopped early".to_string(),
                            source: None,
                        }
                    })?;
                    let _ = demand.send(());
                    let mut completed = false;
                    while let Some(message) = batches.recv().await {
                        match message {
                            ParquetRowGroupMessage::Batch(batch) => {
                                yield match &map_read_plan {
                                    Some(plan) => plan.assemble_batch(&batch)?,
                                    None => batch,
                                };
                            }
                            ParquetRowGroupMessage::Error(error) => Err(error)?,
                            ParquetRowGroupMessage::Done => {
                                completed = true;
                                break;
                            }
                        }
                    }
                    if !completed {
                        Err(Error::UnexpectedError {
                            message: "Parquet row-group reader stopped early".to_string(),
                            source: None,
                        })?;
                    }
                }
            };
            return Ok(stream.boxed());
        }

        if let Some(budget) = self.read_budget.as_ref().filter(|b| b.has_resources()) {
            let budget = Arc::clone(budget);
            let selected = selected_row_groups.expect("resource-aware reads need a selection plan");
            let metadata = ArrowReaderMetadata::try_new(
                batch_stream_builder.metadata().clone(),
                rebuilt_reader_options(&variant_schema),
            )?;
            let residual = (!all_enforced).then(|| FilePredicates {
                predicates: preds.to_vec(),
                row_filter_factory: None,
                file_fields: file_fields.to_vec(),
            });
            return Ok(async_stream::try_stream! {
                for (index, selection, estimated_bytes) in selected {
                    // Foreground and merge reads only try memory admission. They
                    // never hold a shared scheduling slot while awaiting another
                    // merge input, nor wait for output buffers owned downstream.
                    let _permit = budget.reserve_memory(estimated_bytes)?;
                    let mut stream = build_row_group_stream(
                        Arc::clone(&shared_reader), file_size, metadata.clone(), mask.clone(),
                        index, batch_size, selection, shared_filters.clone(),
                    )?;
                    while let Some(batch) = stream.next().await {
                        let batch = batch.map_err(Error::from)?;
                        let batch = match &map_read_plan {
                            Some(plan) => plan.assemble_batch(&batch)?,
                            None => batch,
                        };
                        let batch = match &residual {
                            Some(predicates) => crate::arrow::residual::filter_record_batch_by_predicates(
                                batch, predicates, &scan_fields,
                            )?,
                            None => batch,
                        };
                        yield batch;
                    }
                }
            }.boxed());
        }

        let batch_stream = batch_stream_builder.build()?;

        if all_enforced {
            // Fast path: the row filter enforced every predicate exactly during
            // decode. Return the stream directly — no residual pass.
            let stream = batch_stream.map(|r| r.map_err(Error::from));
            return Ok(match &map_read_plan {
                Some(plan) => {
                    let plan = plan.clone();
                    stream
                        .map(move |r| r.and_then(|batch| plan.assemble_batch(&batch)))
                        .boxed()
                }
                None => stream.boxed(),
            });
        }

        // Residual backstop: at least one predicate (`Or`/`Not`/unsupported leaf)
        // was not fully enforced by the row filter, so apply the exact residual
        // filter per batch over the widened `scan_fields`. The row filter (for
        // whatever leaves it accepted) still ran during decode for I/O pruning;
        // double-filtering an accepted leaf is idempotent. `DataFileReader`
        // projects the filtered batch to `read_fields` by name.
        let residual_predicates = FilePredicates {
            predicates: preds.to_vec(),
            row_filter_factory: None,
            file_fields: file_fields.to_vec(),
        };
        let stream = batch_stream.map(move |result| {
            let batch = result.map_err(Error::from)?;
            let batch = match &map_read_plan {
                Some(plan) => plan.assemble_batch(&batch)?,
                None => batch,
            };
            crate::arrow::residual::filter_record_batch_by_predicates(
                batch,
                &residual_predicates,
                &scan_fields,
            )
        });
        Ok(stream.boxed())
    }
}

fn read_type_projection_mask(
    parquet_schema: &parquet::schema::types::SchemaDescriptor,
    read_fields: &[DataField],
    map_plan: Option<&MapShreddingReadPlan>,
    predicates: &[Predicate],
) -> ProjectionMask {
    fn requested_paths(
        field: &DataField,
        physical: &parquet::schema::types::Type,
        path: &mut Vec<String>,
        output: &mut std::collections::HashSet<Vec<String>>,
    ) {
        if crate::spec::is_map_selected_keys_field(field) {
            // Selected-key ROW children name logical MAP keys, not physical
            // Parquet children. Shared MAPs use their read plan above; other
            // MAPs must remain complete for the core's key-to-ROW assembly.
            super::variant_projection::all_leaves(physical, path, output);
            return;
        }
        let data_type = field.data_type();
        if let DataType::Row(row) = data_type {
            if crate::spec::is_variant_extraction_row_type(data_type) {
                output.extend(
                    super::variant_projection::projected_paths(row, physical)
                        .into_iter()
                        .map(|parts| {
                            let mut full = path.clone();
                            full.extend(parts);
                            full
                        }),
                );
                return;
            }
            if !physical.is_primitive() {
                for field in row.fields() {
                    if let Some(child) = physical
                        .get_fields()
                        .iter()
                        .find(|child| child.name() == field.name())
                    {
                        path.push(child.name().to_string());
                        requested_paths(field, child, path, output);
                        path.pop();
                    }
                }
                return;
            }
        }
        super::variant_projection::all_leaves(physical, path, output);
    }
    let mut predicate_refs = Vec::new();
    for predicate in predicates {
        crate::arrow::residual::collect_predicate_leaf_refs(predicate, &mut predicate_refs);
    }
    let roots = parquet_schema.root_schema().get_fields();
    let mut selected = std::collections::HashSet::new();
    for field in read_fields {
        let Some(root) = roots.iter().find(|root| root.name() == field.name()) else {
            continue;
        };
        let mut path = vec![root.name().to_string()];
        if predicate_refs
            .iter()
            .any(|(column, _)| *column == field.name())
        {
            super::variant_projection::all_leaves(root, &mut path, &mut selected);
        } else if let Some(children) =
            map_plan.and_then(|plan| plan.projected_physical_children(field.name()))
        {
            for child in root
                .get_fields()
                .iter()
                .filter(|child| children.contains(child.name()))
            {
                path.push(child.name().to_string());
                super::variant_projection::all_leaves(child, &mut path, &mut selected);
                path.pop();
            }
        } else {
            requested_paths(field, root, &mut path, &mut selected);
        }
    }
    let leaves = (0..parquet_schema.num_columns())
        .filter(|&leaf| selected.contains(parquet_schema.column(leaf).path().parts()));
    ProjectionMask::leaves(parquet_schema, leaves)
}

fn projected_row_group_bytes(row_group: &RowGroupMetaData, projection: &ProjectionMask) -> u64 {
    row_group
        .columns()
        .iter()
        .enumerate()
        .filter(|(leaf_index, _)| projection.leaf_included(*leaf_index))
        .filter_map(|(_, column)| u64::try_from(column.uncompressed_size()).ok())
        .fold(0u64, u64::saturating_add)
}

#[allow(clippy::too_many_arguments)]
async fn read_row_group(
    reader: Arc<dyn FileRead>,
    file_size: u64,
    reader_metadata: ArrowReaderMetadata,
    projection: ProjectionMask,
    row_group_index: usize,
    batch_size: Option<usize>,
    selection: Option<RowSelection>,
    permit: ReadPermit,
    sender: mpsc::Sender<ParquetRowGroupMessage>,
) {
    let stream = match build_row_group_stream(
        reader,
        file_size,
        reader_metadata,
        projection,
        row_group_index,
        batch_size,
        selection,
        Vec::new(),
    ) {
        Ok(stream) => stream,
        Err(error) => {
            drop(permit);
            let _ = sender.send(ParquetRowGroupMessage::Error(error)).await;
            return;
        }
    };
    forward_row_group_batches(stream, sender, Some(permit)).await;
}

#[derive(Clone)]
struct SharedParquetPredicate {
    projection: ProjectionMask,
    inner: Arc<Mutex<Box<dyn ArrowPredicate>>>,
}

impl SharedParquetPredicate {
    fn new(predicate: Box<dyn ArrowPredicate>) -> Self {
        Self {
            projection: predicate.projection().clone(),
            inner: Arc::new(Mutex::new(predicate)),
        }
    }
}

impl ArrowPredicate for SharedParquetPredicate {
    fn projection(&self) -> &ProjectionMask {
        &self.projection
    }

    fn evaluate(&mut self, batch: RecordBatch) -> Result<BooleanArray, arrow_schema::ArrowError> {
        self.inner
            .lock()
            .map_err(|_| {
                arrow_schema::ArrowError::ComputeError(
                    "Parquet row predicate mutex was poisoned".into(),
                )
            })?
            .evaluate(batch)
    }
}

#[allow(clippy::too_many_arguments)]
fn build_row_group_stream(
    reader: Arc<dyn FileRead>,
    file_size: u64,
    metadata: ArrowReaderMetadata,
    projection: ProjectionMask,
    index: usize,
    batch_size: Option<usize>,
    selection: Option<RowSelection>,
    predicates: Vec<SharedParquetPredicate>,
) -> crate::Result<parquet::arrow::async_reader::ParquetRecordBatchStream<ArrowFileReader>> {
    let mut builder = ParquetRecordBatchStreamBuilder::new_with_metadata(
        ArrowFileReader::new(file_size, reader),
        metadata,
    )
    .with_projection(projection)
    .with_row_groups(vec![index]);
    if let Some(selection) = selection {
        builder = builder.with_row_selection(selection);
    }
    if let Some(size) = batch_size {
        builder = builder.with_batch_size(size);
    }
    if !predicates.is_empty() {
        builder = builder.with_row_filter(ParquetRowFilter::new(
            predicates
                .into_iter()
                .map(|p| Box::new(p) as Box<dyn ArrowPredicate>)
                .collect(),
        ));
    }
    builder.build().map_err(Error::from)
}

fn forward_row_group_batches<S, E>(
    stream: S,
    sender: mpsc::Sender<ParquetRowGroupMessage>,
    permit: Option<ReadPermit>,
) -> impl std::future::Future<Output = ()>
where
    S: futures::Stream<Item = std::result::Result<RecordBatch, E>> + Unpin,
    E: Into<Error>,
{
    // Struct fields drop in declaration order, even if the future is cancelled
    // before its first poll. Keep the working reservation until the decoder drops.
    struct ReservedDecoder<S> {
        stream: S,
        _permit: Option<ReadPermit>,
    }
    let mut decoder = ReservedDecoder {
        stream,
        _permit: permit,
    };
    async move {
        loop {
            let Ok(slot) = sender.reserve().await else {
                return;
            };
            let next = tokio::select! {
                _ = sender.closed() => return,
                next = decoder.stream.next() => next,
            };
            match next {
                Some(Ok(batch)) => {
                    slot.send(ParquetRowGroupMessage::Batch(batch));
                }
                Some(Err(error)) => {
                    drop(decoder);
                    slot.send(ParquetRowGroupMessage::Error(error.into()));
                    return;
                }
                None => {
                    // Release decoder buffers and their working estimate before
                    // the next demanded group retries.
                    drop(decoder);
                    slot.send(ParquetRowGroupMessage::Done);
                    return;
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Parquet row-filter helpers
// ---------------------------------------------------------------------------

fn build_parquet_row_filter(
    parquet_schema: &parquet::schema::types::SchemaDescriptor,
    predicates: &[Predicate],
    file_fields: &[DataField],
) -> crate::Result<Option<ParquetRowFilter>> {
    if predicates.is_empty() {
        return Ok(None);
    }

    let mut filters: Vec<Box<dyn ArrowPredicate>> = Vec::new();

    for predicate in predicates {
        if let Some(filter) = build_parquet_arrow_predicate(parquet_schema, predicate, file_fields)?
        {
            filters.push(filter);
        }
    }

    if filters.is_empty() {
        Ok(None)
    } else {
        Ok(Some(ParquetRowFilter::new(filters)))
    }
}

fn build_parquet_arrow_predicate(
    parquet_schema: &parquet::schema::types::SchemaDescriptor,
    predicate: &Predicate,
    file_fields: &[DataField],
) -> crate::Result<Option<Box<dyn ArrowPredicate>>> {
    if !parquet_predicate_row_filter_accepted(parquet_schema, predicate, file_fields)? {
        return Ok(None);
    }

    if let Predicate::Leaf {
        index,
        op,
        literals,
        ..
    } = predicate
    {
        // Keep the allocation-minimal single-column fast path for a leaf.
        let file_field = &file_fields[*index];
        let root_index = parquet_root_index(parquet_schema, file_field.name())
            .expect("root index resolvable for accepted leaf");
        let projection = ProjectionMask::roots(parquet_schema, [root_index]);
        let op = *op;
        let data_type = file_field.data_type().clone();
        let literals = literals.to_vec();
        return Ok(Some(Box::new(ArrowPredicateFn::new(
            projection,
            move |batch: RecordBatch| {
                let Some(column) = batch.columns().first() else {
                    return Ok(BooleanArray::new_null(batch.num_rows()));
                };
                crate::arrow::residual::evaluate_exact_leaf_predicate(
                    column, &data_type, op, &literals,
                )
            },
        ))));
    }

    // Evaluate a compound predicate as one decoder predicate. Its projection is
    // the union of referenced Parquet roots, ordered exactly as the projected
    // RecordBatch. This preserves OR/NOT semantics; splitting it into leaf
    // RowFilters would incorrectly turn the expression into a conjunction.
    let mut leaf_refs = Vec::new();
    crate::arrow::residual::collect_predicate_leaf_refs(predicate, &mut leaf_refs);
    let mut projected = leaf_refs
        .into_iter()
        .filter_map(|(_, index)| {
            let field = file_fields.get(index)?;
            parquet_root_index(parquet_schema, field.name()).map(|root| (root, field.clone()))
        })
        .collect::<Vec<_>>();
    projected.sort_unstable_by_key(|(root, _)| *root);
    projected.dedup_by_key(|(root, _)| *root);

    let projection = ProjectionMask::roots(parquet_schema, projected.iter().map(|(root, _)| *root));
    let scan_fields = projected
        .into_iter()
        .map(|(_, field)| field)
        .collect::<Vec<_>>();
    let predicate = predicate.clone();
    let file_fields = file_fields.to_vec();
    Ok(Some(Box::new(ArrowPredicateFn::new(
        projection,
        move |batch: RecordBatch| {
            let mask = crate::arrow::residual::evaluate_predicates_mask(
                &batch,
                std::slice::from_ref(&predicate),
                &file_fields,
                &scan_fields,
            )
            .map_err(|e| arrow_schema::ArrowError::ComputeError(e.to_string()))?;
            Ok(mask.unwrap_or_else(|| BooleanArray::from(vec![true; batch.num_rows()])))
        },
    ))))
}

/// `true` iff [`build_parquet_arrow_predicate`] would return `Some` for
/// `predicate` — i.e. it is a `Leaf` with a supported operator, resolvable
/// column, and a literal set the Arrow row filter can enforce. Such a predicate
/// is applied exactly during decode by the [`RowFilter`], so it needs no
/// residual backstop.
///
/// Shares the recursive acceptance test with `build_parquet_arrow_predicate` so
/// the two cannot drift: a compound expression is exact only when all leaves
/// can be evaluated by the decoder predicate.
fn predicate_fully_enforced_by_row_filter(
    parquet_schema: &parquet::schema::types::SchemaDescriptor,
    predicate: &Predicate,
    file_fields: &[DataField],
) -> bool {
    parquet_predicate_row_filter_accepted(parquet_schema, predicate, file_fields).unwrap_or(false)
}

fn parquet_predicate_row_filter_accepted(
    parquet_schema: &parquet::schema::types::SchemaDescriptor,
    predicate: &Predicate,
    file_fields: &[DataField],
) -> crate::Result<bool> {
    match predicate {
        Predicate::AlwaysTrue | Predicate::AlwaysFalse => Ok(true),
        Predicate::Leaf {
            column,
            index,
            op,
            literals,
            ..
        } => parquet_leaf_row_filter_accepted(
            parquet_schema,
            column,
            *index,
            *op,
            literals,
            file_fields,
        ),
        Predicate::And(children) | Predicate::Or(children) => {
            for child in children {
                if !parquet_predicate_row_filter_accepted(parquet_schema, child, file_fields)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        Predicate::Not(inner) => {
            parquet_predicate_row_filter_accepted(parquet_schema, inner, file_fields)
        }
    }
}

/// Shared leaf-acceptance test for the Parquet Arrow row filter: a leaf is
/// accepted iff its operator is supported, its column resolves to a root parquet
/// column, and its literals are representable for the Arrow filter.
///
/// Returning an error only propagates a genuine failure from literal conversion;
/// an unsupported (but well-formed) leaf yields `Ok(false)`.
fn parquet_leaf_row_filter_accepted(
    parquet_schema: &parquet::schema::types::SchemaDescriptor,
    column: &str,
    index: usize,
    op: PredicateOperator,
    literals: &[Datum],
    file_fields: &[DataField],
) -> crate::Result<bool> {
    if !predicate_supported_for_parquet_row_filter(op) {
        return Ok(false);
    }
    // Not in the file, so the decoder cannot evaluate it. Rejecting the leaf
    // rejects any enclosing predicate too, leaving it to the post-scan residual.
    if is_row_tracking_column(column) {
        return Ok(false);
    }
    let Some(file_field) = file_fields.get(index) else {
        return Ok(false);
    };
    if parquet_root_index(parquet_schema, file_field.name()).is_none() {
        return Ok(false);
    }
    parquet_row_filter_literals_supported(op, literals, file_field.data_type())
}

fn predicate_supported_for_parquet_row_filter(op: PredicateOperator) -> bool {
    matches!(
        op,
        PredicateOperator::IsNull
            | PredicateOperator::IsNotNull
            | PredicateOperator::Eq
            | PredicateOperator::NotEq
            | PredicateOperator::Lt
            | PredicateOperator::LtEq
            | PredicateOperator::Gt
            | PredicateOperator::GtEq
            | PredicateOperator::In
            | PredicateOperator::NotIn
            | PredicateOperator::StartsWith
            | PredicateOperator::EndsWith
            | PredicateOperator::Contains
            | PredicateOperator::Like
            | PredicateOperator::Between
            | PredicateOperator::NotBetween
            | PredicateOperator::ArrayContains
            | PredicateOperator::ArraysOverlap
            | PredicateOperator::ArrayContainsAll
    )
}

fn parquet_row_filter_literals_supported(
    op: PredicateOperator,
    literals: &[Datum],
    file_data_type: &DataType,
) -> crate::Result<bool> {
    match op {
        PredicateOperator::IsNull | PredicateOperator::IsNotNull => Ok(true),
        PredicateOperator::Eq
        | PredicateOperator::NotEq
        | PredicateOperator::Lt
        | PredicateOperator::LtEq
        | PredicateOperator::Gt
        | PredicateOperator::GtEq => {
            let Some(literal) = literals.first() else {
                return Ok(false);
            };
            Ok(
                crate::arrow::residual::literal_scalar_for_arrow_filter(literal, file_data_type)?
                    .is_some(),
            )
        }
        PredicateOperator::In | PredicateOperator::NotIn => {
            for literal in literals {
                if crate::arrow::residual::literal_scalar_for_arrow_filter(literal, file_data_type)?
                    .is_none()
                {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        PredicateOperator::StartsWith
        | PredicateOperator::EndsWith
        | PredicateOperator::Contains
        | PredicateOperator::Like => {
            // Substring kernels only run against string-typed columns; reject
            // non-string file types early so the filter falls back to stats
            // pruning + residual evaluation.
            if !matches!(file_data_type, DataType::Char(_) | DataType::VarChar(_)) {
                return Ok(false);
            }
            let Some(literal) = literals.first() else {
                return Ok(false);
            };
            Ok(
                crate::arrow::residual::literal_scalar_for_arrow_filter(literal, file_data_type)?
                    .is_some(),
            )
        }
        PredicateOperator::Between | PredicateOperator::NotBetween => {
            if literals.len() != 2 {
                return Ok(false);
            }
            for literal in literals {
                if crate::arrow::residual::literal_scalar_for_arrow_filter(literal, file_data_type)?
                    .is_none()
                {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        PredicateOperator::ArrayContains
        | PredicateOperator::ArraysOverlap
        | PredicateOperator::ArrayContainsAll => {
            let DataType::Array(array_type) = file_data_type else {
                return Ok(false);
            };
            if matches!(op, PredicateOperator::ArrayContains) && literals.len() != 1 {
                return Ok(false);
            }
            for literal in literals {
                if crate::arrow::residual::literal_scalar_for_arrow_filter(
                    literal,
                    array_type.element_type(),
                )?
                .is_none()
                {
                    return Ok(false);
                }
            }
            Ok(true)
        }
    }
}

fn parquet_root_index(
    parquet_schema: &parquet::schema::types::SchemaDescriptor,
    root_name: &str,
) -> Option<usize> {
    parquet_schema
        .root_schema()
        .get_fields()
        .iter()
        .position(|field| field.name() == root_name)
}

// ---------------------------------------------------------------------------
// Row-group statistics pruning
// ---------------------------------------------------------------------------

struct ParquetRowGroupStats<'a> {
    row_group: &'a RowGroupMetaData,
    column_indices: &'a [Option<usize>],
}

impl StatsAccessor for ParquetRowGroupStats<'_> {
    fn row_count(&self) -> i64 {
        self.row_group.num_rows()
    }

    fn null_count(&self, index: usize) -> Option<i64> {
        let _ = index;
        None
    }

    fn min_value(&self, index: usize, data_type: &DataType) -> Option<Datum> {
        let column_index = self.column_indices.get(index).copied().flatten()?;
        parquet_stats_to_datum(
            self.row_group.column(column_index).statistics()?,
            data_type,
            true,
        )
    }

    fn max_value(&self, index: usize, data_type: &DataType) -> Option<Datum> {
        let column_index = self.column_indices.get(index).copied().flatten()?;
        parquet_stats_to_datum(
            self.row_group.column(column_index).statistics()?,
            data_type,
            false,
        )
    }

    fn supports_in_min_max_pruning(&self) -> bool {
        true
    }
}

fn build_predicate_row_selection(
    row_groups: &[RowGroupMetaData],
    predicates: &[Predicate],
    file_fields: &[DataField],
) -> crate::Result<Option<RowSelection>> {
    if predicates.is_empty() || row_groups.is_empty() {
        return Ok(None);
    }

    // Predicates have already been remapped to file-level indices by the caller
    // (remap_predicates_to_file in reader.rs), so we use an identity mapping here.
    let identity_mapping: Vec<Option<usize>> = (0..file_fields.len()).map(Some).collect();
    let column_indices = build_row_group_column_indices(row_groups[0].columns(), file_fields);
    let mut selectors = Vec::with_capacity(row_groups.len());
    let mut all_selected = true;

    for row_group in row_groups {
        let stats = ParquetRowGroupStats {
            row_group,
            column_indices: &column_indices,
        };
        let may_match =
            predicates_may_match_with_schema(predicates, &stats, &identity_mapping, file_fields);
        if !may_match {
            all_selected = false;
        }
        selectors.push(if may_match {
            RowSelector::select(row_group.num_rows() as usize)
        } else {
            RowSelector::skip(row_group.num_rows() as usize)
        });
    }

    if all_selected {
        Ok(None)
    } else {
        Ok(Some(selectors.into()))
    }
}

fn build_row_group_column_indices(
    columns: &[parquet::file::metadata::ColumnChunkMetaData],
    file_fields: &[DataField],
) -> Vec<Option<usize>> {
    let mut by_root_name: HashMap<&str, Option<usize>> = HashMap::new();
    for (column_index, column) in columns.iter().enumerate() {
        // Only a top-level, non-repeated leaf has row-level statistics for its
        // logical field. Nested leaf null counts (e.g. payload.child) and
        // repeated element counts cannot describe their parent column.
        if column.column_path().parts().len() != 1 || column.column_descr().max_rep_level() != 0 {
            continue;
        }
        let Some(root_name) = column.column_path().parts().first() else {
            continue;
        };
        let entry = by_root_name
            .entry(root_name.as_str())
            .or_insert(Some(column_index));
        if entry.is_some() && *entry != Some(column_index) {
            *entry = None;
        }
    }

    file_fields
        .iter()
        .map(|field| by_root_name.get(field.name()).copied().flatten())
        .collect()
}

fn extract_value_stats(
    metadata: &ParquetMetaData,
    write_fields: &[DataField],
    stats_modes: &[MetadataStatsMode],
    stats_dense_store: bool,
) -> (BinaryTableStats, Option<Vec<String>>) {
    debug_assert_eq!(write_fields.len(), stats_modes.len());
    let row_groups = metadata.row_groups();
    let column_indices = row_groups
        .first()
        .map(|row_group| build_row_group_column_indices(row_group.columns(), write_fields))
        .unwrap_or_else(|| vec![None; write_fields.len()]);
    let mut column_names = Vec::new();
    let mut column_types = Vec::new();
    let mut min_datums = Vec::new();
    let mut max_datums = Vec::new();
    let mut null_counts = Vec::new();

    for (field_idx, field) in write_fields.iter().enumerate() {
        let mode = stats_modes
            .get(field_idx)
            .copied()
            .unwrap_or(MetadataStatsMode::None);
        let column_stats = if mode == MetadataStatsMode::None {
            None
        } else {
            column_indices
                .get(field_idx)
                .copied()
                .flatten()
                .and_then(|column_idx| {
                    extract_column_value_stats(row_groups, column_idx, field.data_type(), mode)
                })
        };

        // Non-dense stats stay aligned with write_fields, including unavailable stats.
        match column_stats {
            Some((min_datum, max_datum, null_count)) => {
                if stats_dense_store {
                    column_names.push(field.name().to_string());
                }
                column_types.push(field.data_type().clone());
                min_datums.push(min_datum);
                max_datums.push(max_datum);
                null_counts.push(null_count);
            }
            None if !stats_dense_store => {
                column_types.push(field.data_type().clone());
                min_datums.push(None);
                max_datums.push(None);
                null_counts.push(None);
            }
            None => {}
        }
    }

    let stats = if column_types.is_empty() {
        BinaryTableStats::empty()
    } else {
        binary_table_stats_from_datums(&column_types, &min_datums, &max_datums, null_counts)
    };
    // Java omits the dense mapping when stats already cover every write field.
    let value_stats_cols = if stats_dense_store && column_types.len() != write_fields.len() {
        Some(column_names)
    } else {
        None
    };
    (stats, value_stats_cols)
}

fn extract_column_value_stats(
    row_groups: &[RowGroupMetaData],
    column_idx: usize,
    data_type: &DataType,
    mode: MetadataStatsMode,
) -> Option<(Option<Datum>, Option<Datum>, Option<i64>)> {
    let collect_min_max = matches!(
        mode,
        MetadataStatsMode::Full | MetadataStatsMode::Truncate(_)
    ) && supports_manifest_min_max(data_type);
    let mut min_datum: Option<Datum> = None;
    let mut max_datum: Option<Datum> = None;
    let mut min_complete = true;
    let mut max_complete = true;
    let mut null_count = Some(0_i64);
    let mut has_stats = false;

    for row_group in row_groups {
        let Some(stats) = row_group.column(column_idx).statistics() else {
            min_complete = false;
            max_complete = false;
            null_count = None;
            continue;
        };
        has_stats = true;

        match stats
            .null_count_opt()
            .and_then(|count| i64::try_from(count).ok())
        {
            Some(count) => {
                if let Some(total) = null_count.as_mut() {
                    *total += count;
                }
            }
            None => null_count = None,
        }

        let row_group_all_null = stats.null_count_opt() == Some(row_group.num_rows().max(0) as u64);
        if !collect_min_max || row_group_all_null {
            continue;
        }

        match parquet_stats_to_datum(stats, data_type, true) {
            Some(candidate) => {
                if let Some(current) = &min_datum {
                    match candidate.partial_cmp(current) {
                        Some(Ordering::Less) => min_datum = Some(candidate),
                        Some(Ordering::Equal | Ordering::Greater) => {}
                        None => min_complete = false,
                    }
                } else {
                    min_datum = Some(candidate);
                }
            }
            None => min_complete = false,
        }

        match parquet_stats_to_datum(stats, data_type, false) {
            Some(candidate) => {
                if let Some(current) = &max_datum {
                    match candidate.partial_cmp(current) {
                        Some(Ordering::Greater) => max_datum = Some(candidate),
                        Some(Ordering::Less | Ordering::Equal) => {}
                        None => max_complete = false,
                    }
                } else {
                    max_datum = Some(candidate);
                }
            }
            None => max_complete = false,
        }
    }

    if !has_stats {
        return None;
    }
    if !min_complete {
        min_datum = None;
    }
    if !max_complete {
        max_datum = None;
    }
    let (min_datum, max_datum) = apply_stats_mode(data_type, mode, min_datum, max_datum);
    if min_datum.is_none() && max_datum.is_none() && null_count.is_none() {
        None
    } else {
        Some((min_datum, max_datum, null_count))
    }
}

fn supports_manifest_min_max(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Boolean(_)
            | DataType::TinyInt(_)
            | DataType::SmallInt(_)
            | DataType::Int(_)
            | DataType::BigInt(_)
            | DataType::Char(_)
            | DataType::VarChar(_)
            | DataType::Binary(_)
            | DataType::VarBinary(_)
            | DataType::Decimal(_)
            | DataType::Double(_)
            | DataType::Float(_)
            | DataType::Date(_)
            | DataType::Time(_)
            | DataType::LocalZonedTimestamp(_)
            | DataType::Timestamp(_)
    )
}

fn apply_stats_mode(
    data_type: &DataType,
    mode: MetadataStatsMode,
    min_datum: Option<Datum>,
    max_datum: Option<Datum>,
) -> (Option<Datum>, Option<Datum>) {
    let MetadataStatsMode::Truncate(length) = mode else {
        return (min_datum, max_datum);
    };
    match data_type {
        DataType::Char(_) | DataType::VarChar(_) | DataType::Binary(_) | DataType::VarBinary(_) => {
            let min = min_datum.map(|datum| truncate_min_datum(datum, length));
            let max = match max_datum {
                Some(datum) => match truncate_max_datum(datum, length) {
                    Some(max) => Some(max),
                    None => return (None, None),
                },
                None => None,
            };
            (min, max)
        }
        _ => (min_datum, max_datum),
    }
}

fn truncate_min_datum(datum: Datum, length: usize) -> Datum {
    match datum {
        Datum::String(value) => Datum::String(truncate_string_min(&value, length)),
        Datum::Bytes(value) => Datum::Bytes(value.into_iter().take(length).collect()),
        other => other,
    }
}

fn truncate_max_datum(datum: Datum, length: usize) -> Option<Datum> {
    match datum {
        Datum::String(value) => truncate_string_max(&value, length).map(Datum::String),
        Datum::Bytes(value) => truncate_binary_max(&value, length).map(Datum::Bytes),
        other => Some(other),
    }
}

fn truncate_binary_max(value: &[u8], length: usize) -> Option<Vec<u8>> {
    if value.len() <= length {
        return Some(value.to_vec());
    }
    let mut prefix = value[..length].to_vec();
    for idx in (0..prefix.len()).rev() {
        if prefix[idx] != u8::MAX {
            prefix[idx] += 1;
            prefix.truncate(idx + 1);
            return Some(prefix);
        }
    }
    None
}

fn truncate_string_min(value: &str, length: usize) -> String {
    value.chars().take(length).collect()
}

fn truncate_string_max(value: &str, length: usize) -> Option<String> {
    let char_count = value.chars().count();
    if char_count <= length {
        return Some(value.to_string());
    }

    let mut chars: Vec<char> = value.chars().take(length).collect();
    for idx in (0..chars.len()).rev() {
        if let Some(next) = char::from_u32(chars[idx] as u32 + 1) {
            chars.truncate(idx);
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

fn binary_table_stats_from_datums(
    column_types: &[DataType],
    min_datums: &[Option<Datum>],
    max_datums: &[Option<Datum>],
    null_counts: Vec<Option<i64>>,
) -> BinaryTableStats {
    let mut min_builder = BinaryRowBuilder::new(column_types.len() as i32);
    let mut max_builder = BinaryRowBuilder::new(column_types.len() as i32);
    for (pos, data_type) in column_types.iter().enumerate() {
        match &min_datums[pos] {
            Some(datum) => min_builder.write_datum(pos, datum, data_type),
            None => min_builder.set_null_at(pos),
        }
        match &max_datums[pos] {
            Some(datum) => max_builder.write_datum(pos, datum, data_type),
            None => max_builder.set_null_at(pos),
        }
    }
    BinaryTableStats::new(
        min_builder.build_serialized(),
        max_builder.build_serialized(),
        null_counts,
    )
}

// ---------------------------------------------------------------------------
// Page-index (ColumnIndex / OffsetIndex) pruning
// ---------------------------------------------------------------------------

/// Stats view over one data page of a **single** column, backed by the Parquet
/// ColumnIndex. Plugs into the same [`StatsAccessor`] evaluator as row-group
/// pruning so both layers share identical fail-open semantics.
///
/// Only `target_index` is exposed; every other column reports no stats so its
/// leaves fail open. Parquet pages are laid out per column chunk (different
/// columns may have different page counts and boundaries), so each column must
/// be pruned against its own page layout — see [`build_predicate_page_selection`].
struct ParquetPageStats<'a> {
    /// File-field index this page belongs to.
    target_index: usize,
    /// ColumnIndex of the target column for the current row group.
    column_index: &'a ColumnIndexMetaData,
    page_idx: usize,
    page_row_count: i64,
}

impl StatsAccessor for ParquetPageStats<'_> {
    fn row_count(&self) -> i64 {
        self.page_row_count
    }

    fn null_count(&self, index: usize) -> Option<i64> {
        if index != self.target_index {
            return None;
        }
        self.column_index.null_count(self.page_idx)
    }

    fn min_value(&self, index: usize, data_type: &DataType) -> Option<Datum> {
        if index != self.target_index {
            return None;
        }
        page_index_value_to_datum(self.column_index, self.page_idx, data_type, true)
    }

    fn max_value(&self, index: usize, data_type: &DataType) -> Option<Datum> {
        if index != self.target_index {
            return None;
        }
        page_index_value_to_datum(self.column_index, self.page_idx, data_type, false)
    }

    fn supports_in_min_max_pruning(&self) -> bool {
        true
    }
}

/// Decode a per-page min/max from a [`ColumnIndexMetaData`] into a [`Datum`].
///
/// Returns `None` (fail-open: keep the page) for null pages, missing values, or
/// any type that the footer-side path also excludes (decimals, sub-millisecond
/// timestamps).
fn page_index_value_to_datum(
    column_index: &ColumnIndexMetaData,
    page_idx: usize,
    data_type: &DataType,
    is_min: bool,
) -> Option<Datum> {
    if column_index.is_null_page(page_idx) {
        return None;
    }
    macro_rules! primitive {
        ($idx:expr) => {
            if is_min {
                $idx.min_values().get(page_idx)
            } else {
                $idx.max_values().get(page_idx)
            }
        };
    }
    macro_rules! bytes {
        ($idx:expr) => {
            if is_min {
                $idx.min_value(page_idx)
            } else {
                $idx.max_value(page_idx)
            }
        };
    }
    match (column_index, data_type) {
        (ColumnIndexMetaData::BOOLEAN(idx), DataType::Boolean(_)) => {
            primitive!(idx).copied().map(Datum::Bool)
        }
        (ColumnIndexMetaData::INT32(idx), DataType::TinyInt(_)) => primitive!(idx)
            .and_then(|v| i8::try_from(*v).ok())
            .map(Datum::TinyInt),
        (ColumnIndexMetaData::INT32(idx), DataType::SmallInt(_)) => primitive!(idx)
            .and_then(|v| i16::try_from(*v).ok())
            .map(Datum::SmallInt),
        (ColumnIndexMetaData::INT32(idx), DataType::Int(_)) => {
            primitive!(idx).copied().map(Datum::Int)
        }
        (ColumnIndexMetaData::INT32(idx), DataType::Date(_)) => {
            primitive!(idx).copied().map(Datum::Date)
        }
        (ColumnIndexMetaData::INT32(idx), DataType::Time(_)) => {
            primitive!(idx).copied().map(Datum::Time)
        }
        (ColumnIndexMetaData::INT64(idx), DataType::BigInt(_)) => {
            primitive!(idx).copied().map(Datum::Long)
        }
        (ColumnIndexMetaData::INT64(idx), DataType::Timestamp(ts)) if ts.precision() <= 3 => {
            primitive!(idx)
                .copied()
                .map(|millis| Datum::Timestamp { millis, nanos: 0 })
        }
        (ColumnIndexMetaData::INT64(idx), DataType::LocalZonedTimestamp(ts))
            if ts.precision() <= 3 =>
        {
            primitive!(idx)
                .copied()
                .map(|millis| Datum::LocalZonedTimestamp { millis, nanos: 0 })
        }
        (ColumnIndexMetaData::FLOAT(idx), DataType::Float(_)) => {
            primitive!(idx).copied().map(Datum::Float)
        }
        (ColumnIndexMetaData::DOUBLE(idx), DataType::Double(_)) => {
            primitive!(idx).copied().map(Datum::Double)
        }
        (ColumnIndexMetaData::BYTE_ARRAY(idx), DataType::Char(_))
        | (ColumnIndexMetaData::BYTE_ARRAY(idx), DataType::VarChar(_)) => bytes!(idx)
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
            .map(|s| Datum::String(s.to_string())),
        (ColumnIndexMetaData::BYTE_ARRAY(idx), DataType::Binary(_))
        | (ColumnIndexMetaData::BYTE_ARRAY(idx), DataType::VarBinary(_)) => {
            bytes!(idx).map(|bytes| Datum::Bytes(bytes.to_vec()))
        }
        (ColumnIndexMetaData::FIXED_LEN_BYTE_ARRAY(idx), DataType::Binary(_))
        | (ColumnIndexMetaData::FIXED_LEN_BYTE_ARRAY(idx), DataType::VarBinary(_)) => {
            bytes!(idx).map(|bytes| Datum::Bytes(bytes.to_vec()))
        }
        _ => None,
    }
}

/// Build a page-granular [`RowSelection`] from the Parquet ColumnIndex /
/// OffsetIndex by pruning each predicate column against **its own** page layout,
/// then intersecting the per-column selections.
///
/// Parquet splits pages per column chunk, so different columns in a row group
/// may have different page counts and boundaries. Each column is therefore
/// evaluated over its own `OffsetIndex` pages, exposing only that column to the
/// stats evaluator (every other column fails open). Because the top-level
/// predicate list is a conjunction, intersecting the per-column selections is
/// sound.
///
/// Returns `None` when the page index is absent or when no page could be skipped
/// (so the caller leaves the coarser row-group selection untouched). A page is
/// kept whenever its stats are unavailable or the predicate cannot be decided
/// from them — pruning never drops a page it is unsure about.
fn build_predicate_page_selection(
    metadata: &ParquetMetaData,
    predicates: &[Predicate],
    file_fields: &[DataField],
) -> crate::Result<Option<RowSelection>> {
    if predicates.is_empty() {
        return Ok(None);
    }
    let (Some(column_index), Some(offset_index)) =
        (metadata.column_index(), metadata.offset_index())
    else {
        return Ok(None);
    };
    let row_groups = metadata.row_groups();
    if row_groups.is_empty() {
        return Ok(None);
    }

    // Predicates are already remapped to file-level indices by the caller, so an
    // identity mapping suffices (same convention as row-group pruning).
    let identity_mapping: Vec<Option<usize>> = (0..file_fields.len()).map(Some).collect();
    let column_lookup = build_row_group_column_indices(row_groups[0].columns(), file_fields);
    let total_rows: usize = row_groups.iter().map(|rg| rg.num_rows() as usize).sum();

    let mut referenced_fields = Vec::new();
    for predicate in predicates {
        collect_leaf_field_indices(predicate, &mut referenced_fields);
    }
    referenced_fields.sort_unstable();
    referenced_fields.dedup();

    let mut combined: Option<RowSelection> = None;
    for field_index in referenced_fields {
        // The column must resolve to a single parquet column present in the file.
        let Some(parquet_col) = column_lookup.get(field_index).copied().flatten() else {
            continue;
        };

        let mut ranges: Vec<Range<usize>> = Vec::new();
        let mut rg_base = 0usize;
        let mut any_skipped = false;

        for (rg_idx, row_group) in row_groups.iter().enumerate() {
            let rg_rows = row_group.num_rows() as usize;
            let base = rg_base;
            rg_base += rg_rows;

            // Missing page index for this column/row group: keep the whole group
            // (row-group pruning still applied).
            let (Some(col_index), Some(col_offset)) = (
                column_index.get(rg_idx).and_then(|rg| rg.get(parquet_col)),
                offset_index.get(rg_idx).and_then(|rg| rg.get(parquet_col)),
            ) else {
                ranges.push(base..base + rg_rows);
                continue;
            };
            let pages = col_offset.page_locations();
            // Fail open when the column index is absent for this chunk
            // (`ColumnIndexMetaData::NONE` — its accessors panic rather than
            // return `None`), when the two indexes disagree on the page count,
            // or when the page row boundaries are malformed. Either way we
            // cannot safely map page stats to row ranges.
            if pages.is_empty()
                || matches!(col_index, ColumnIndexMetaData::NONE)
                || col_index.num_pages() as usize != pages.len()
                || !page_boundaries_valid(pages, rg_rows)
            {
                ranges.push(base..base + rg_rows);
                continue;
            }

            for (page_idx, page) in pages.iter().enumerate() {
                let page_start = page.first_row_index as usize;
                let page_end = pages
                    .get(page_idx + 1)
                    .map_or(rg_rows, |next| next.first_row_index as usize);
                if page_end <= page_start {
                    continue;
                }
                let stats = ParquetPageStats {
                    target_index: field_index,
                    column_index: col_index,
                    page_idx,
                    page_row_count: (page_end - page_start) as i64,
                };
                if predicates_may_match_with_schema(
                    predicates,
                    &stats,
                    &identity_mapping,
                    file_fields,
                ) {
                    ranges.push(base + page_start..base + page_end);
                } else {
                    any_skipped = true;
                }
            }
        }

        if !any_skipped {
            continue;
        }
        let selection = RowSelection::from_consecutive_ranges(ranges.into_iter(), total_rows);
        combined = Some(match combined {
            Some(prev) => prev.intersection(&selection),
            None => selection,
        });
    }

    Ok(combined)
}

/// Collect the file-field indices referenced by leaf predicates (recursing
/// through compound nodes). Indices are already file-level (see caller).
fn collect_leaf_field_indices(predicate: &Predicate, out: &mut Vec<usize>) {
    match predicate {
        Predicate::Leaf { index, .. } => out.push(*index),
        Predicate::And(children) | Predicate::Or(children) => {
            for child in children {
                collect_leaf_field_indices(child, out);
            }
        }
        Predicate::Not(child) => collect_leaf_field_indices(child, out),
        Predicate::AlwaysTrue | Predicate::AlwaysFalse => {}
    }
}

/// Validate that an OffsetIndex's page row boundaries are well-formed for a row
/// group of `rg_rows` rows: the first page starts at row 0, `first_row_index`
/// is strictly increasing, and every value stays within `[0, rg_rows]`.
///
/// Malformed metadata (negative, non-monotonic, or out-of-range boundaries)
/// would otherwise produce invalid row ranges — huge values from `i64 as usize`
/// underflow, or ranges past the row group — that panic
/// `RowSelection::from_consecutive_ranges`. Callers fail open when this returns
/// `false`.
fn page_boundaries_valid(
    pages: &[parquet::file::page_index::offset_index::PageLocation],
    rg_rows: usize,
) -> bool {
    let rg_rows = rg_rows as i64;
    let mut prev: i64 = -1;
    for (page_idx, page) in pages.iter().enumerate() {
        let first_row = page.first_row_index;
        if page_idx == 0 && first_row != 0 {
            return false;
        }
        if first_row <= prev || first_row > rg_rows {
            return false;
        }
        prev = first_row;
    }
    true
}

// ---------------------------------------------------------------------------
// Parquet statistics → Datum conversion
// ---------------------------------------------------------------------------

fn parquet_stats_to_datum(
    stats: &ParquetStatistics,
    data_type: &DataType,
    is_min: bool,
) -> Option<Datum> {
    let exact = if is_min {
        stats.min_is_exact()
    } else {
        stats.max_is_exact()
    };
    if !exact {
        return None;
    }

    match (stats, data_type) {
        (ParquetStatistics::Boolean(stats), DataType::Boolean(_)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .copied()
                .map(Datum::Bool)
        }
        (ParquetStatistics::Int32(stats), DataType::TinyInt(_)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .and_then(|value| i8::try_from(*value).ok())
                .map(Datum::TinyInt)
        }
        (ParquetStatistics::Int32(stats), DataType::SmallInt(_)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .and_then(|value| i16::try_from(*value).ok())
                .map(Datum::SmallInt)
        }
        (ParquetStatistics::Int32(stats), DataType::Int(_)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .copied()
                .map(Datum::Int)
        }
        (ParquetStatistics::Int32(stats), DataType::Date(_)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .copied()
                .map(Datum::Date)
        }
        (ParquetStatistics::Int32(stats), DataType::Time(_)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .copied()
                .map(Datum::Time)
        }
        (ParquetStatistics::Int64(stats), DataType::BigInt(_)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .copied()
                .map(Datum::Long)
        }
        (ParquetStatistics::Int32(stats), DataType::Decimal(d)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .copied()
                .map(|unscaled| Datum::Decimal {
                    unscaled: unscaled as i128,
                    precision: d.precision(),
                    scale: d.scale(),
                })
        }
        (ParquetStatistics::Int64(stats), DataType::Decimal(d)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .copied()
                .map(|unscaled| Datum::Decimal {
                    unscaled: unscaled as i128,
                    precision: d.precision(),
                    scale: d.scale(),
                })
        }
        (ParquetStatistics::Int64(stats), DataType::Timestamp(ts)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .copied()
                .and_then(|value| timestamp_datum_from_parquet_i64(value, ts.precision(), false))
        }
        (ParquetStatistics::Int64(stats), DataType::LocalZonedTimestamp(ts)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .copied()
                .and_then(|value| timestamp_datum_from_parquet_i64(value, ts.precision(), true))
        }
        (ParquetStatistics::Float(stats), DataType::Float(_)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .copied()
                .map(Datum::Float)
        }
        (ParquetStatistics::Double(stats), DataType::Double(_)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .copied()
                .map(Datum::Double)
        }
        (ParquetStatistics::ByteArray(stats), DataType::Char(_))
        | (ParquetStatistics::ByteArray(stats), DataType::VarChar(_)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .and_then(|value| std::str::from_utf8(value.data()).ok())
                .map(|value| Datum::String(value.to_string()))
        }
        (ParquetStatistics::ByteArray(stats), DataType::Binary(_))
        | (ParquetStatistics::ByteArray(stats), DataType::VarBinary(_)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .map(|value| Datum::Bytes(value.data().to_vec()))
        }
        (ParquetStatistics::FixedLenByteArray(stats), DataType::Binary(_))
        | (ParquetStatistics::FixedLenByteArray(stats), DataType::VarBinary(_)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .map(|value| Datum::Bytes(value.data().to_vec()))
        }
        (ParquetStatistics::ByteArray(stats), DataType::Decimal(d)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .and_then(|value| signed_be_bytes_to_i128(value.data()))
                .map(|unscaled| Datum::Decimal {
                    unscaled,
                    precision: d.precision(),
                    scale: d.scale(),
                })
        }
        (ParquetStatistics::FixedLenByteArray(stats), DataType::Decimal(d)) => {
            exact_parquet_value(is_min, stats.min_opt(), stats.max_opt())
                .and_then(|value| signed_be_bytes_to_i128(value.data()))
                .map(|unscaled| Datum::Decimal {
                    unscaled,
                    precision: d.precision(),
                    scale: d.scale(),
                })
        }
        _ => None,
    }
}

fn timestamp_datum_from_parquet_i64(
    value: i64,
    precision: u32,
    local_zoned: bool,
) -> Option<Datum> {
    let (millis, nanos) = match precision {
        0..=3 => (value, 0),
        4..=6 => (
            value.div_euclid(1_000),
            (value.rem_euclid(1_000) * 1_000) as i32,
        ),
        _ => return None,
    };
    if local_zoned {
        Some(Datum::LocalZonedTimestamp { millis, nanos })
    } else {
        Some(Datum::Timestamp { millis, nanos })
    }
}

fn signed_be_bytes_to_i128(bytes: &[u8]) -> Option<i128> {
    if bytes.is_empty() || bytes.len() > 16 {
        return None;
    }
    let sign_extend = if bytes[0] & 0x80 == 0 { 0 } else { 0xff };
    let mut padded = [sign_extend; 16];
    padded[16 - bytes.len()..].copy_from_slice(bytes);
    Some(i128::from_be_bytes(padded))
}

fn exact_parquet_value<'a, T>(
    is_min: bool,
    min: Option<&'a T>,
    max: Option<&'a T>,
) -> Option<&'a T> {
    if is_min {
        min
    } else {
        max
    }
}

// ---------------------------------------------------------------------------
// Row selection helpers (DV, row ranges)
// ---------------------------------------------------------------------------

fn intersect_optional_row_selections(
    left: Option<RowSelection>,
    right: Option<RowSelection>,
) -> Option<RowSelection> {
    match (left, right) {
        (Some(left), Some(right)) => Some(left.intersection(&right)),
        (Some(selection), None) | (None, Some(selection)) => Some(selection),
        (None, None) => None,
    }
}

/// pms patch. Arrow reads Parquet INT96 (Paimon Java's TIMESTAMP(7..9)) as nanoseconds since
/// the epoch, which span only the years 1677–2262: a value outside them wraps around into
/// another instant, silently. Java writes no min/max statistics for INT96, so the values of the
/// read's INT96 columns are read once more as microseconds (which span every year) and a value
/// the nanoseconds can't hold fails the read, naming it. (Rows a merge would drop are looked at
/// too: such a file fails even when the value would not be read.)
async fn refuse_int96_outside_nanoseconds(
    shared_reader: &Arc<dyn FileRead>,
    file_size: u64,
    file_metadata: Arc<parquet::file::metadata::ParquetMetaData>,
    schema: arrow_schema::SchemaRef,
    read_fields: &[DataField],
    row_ranges: Option<&[RowRange]>,
) -> crate::Result<()> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::TimestampMicrosecondType;
    use arrow_schema::{DataType as ArrowType, Field, Schema, TimeUnit};
    let descr = file_metadata.file_metadata().schema_descr_ptr();
    // The read's top-level INT96 columns: their leaves, and their names.
    let (leaves, names): (Vec<usize>, Vec<&str>) = descr
        .columns()
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            c.physical_type() == parquet::basic::Type::INT96 && c.path().parts().len() == 1
        })
        .filter(|(_, c)| read_fields.iter().any(|r| r.name() == c.name()))
        .map(|(leaf, c)| (leaf, c.name()))
        .unzip();
    if leaves.is_empty() {
        return Ok(());
    }
    let hinted: Vec<Arc<Field>> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            ArrowType::Timestamp(TimeUnit::Nanosecond, tz) if names.contains(&f.name().as_str()) => {
                Arc::new(
                    f.as_ref()
                        .clone()
                        .with_data_type(ArrowType::Timestamp(TimeUnit::Microsecond, tz.clone())),
                )
            }
            _ => Arc::clone(f),
        })
        .collect();
    let hint = Arc::new(Schema::new_with_metadata(hinted, schema.metadata().clone()));
    let metadata = ArrowReaderMetadata::try_new(
        Arc::clone(&file_metadata),
        ArrowReaderOptions::new().with_schema(hint),
    )?;
    let reader = ArrowFileReader::new(file_size, Arc::clone(shared_reader));
    let mut check = ParquetRecordBatchStreamBuilder::new_with_metadata(reader, metadata)
        .with_projection(ProjectionMask::leaves(&descr, leaves));
    if let Some(ranges) = row_ranges {
        check = check.with_row_selection(build_row_ranges_selection(
            file_metadata.row_groups(),
            ranges,
        ));
    }
    let mut batches = check.build()?;
    // Microseconds that nanoseconds in an i64 can hold.
    let (lowest, highest) = (i64::MIN / 1000, i64::MAX / 1000);
    while let Some(batch) = batches.next().await {
        let batch = batch?;
        for (column, field) in batch.columns().iter().zip(batch.schema().fields()) {
            let Some(values) = column.as_primitive_opt::<TimestampMicrosecondType>() else {
                continue;
            };
            if let Some(micros) = values
                .iter()
                .flatten()
                .find(|m| *m < lowest || *m > highest)
            {
                let shown = chrono::DateTime::from_timestamp_micros(micros)
                    .map(|t| t.naive_utc().to_string())
                    .unwrap_or_else(|| format!("{micros} µs since 1970"));
                return Err(Error::DataInvalid {
                    message: format!(
                        "column {}: the TIMESTAMP(7..9) value {shown} is outside the years 1677–2262, which this \
                         reader holds to the nanosecond (as Arrow nanoseconds); it would be read as another instant, \
                         so the read stops",
                        field.name()
                    ),
                    source: None,
                });
            }
        }
    }
    Ok(())
}

/// Build a Parquet [RowSelection] from inclusive `[from, to]` file-local row ranges (0-based).
fn build_row_ranges_selection(
    row_group_metadata_list: &[RowGroupMetaData],
    row_ranges: &[RowRange],
) -> RowSelection {
    let total_rows: i64 = row_group_metadata_list.iter().map(|rg| rg.num_rows()).sum();
    if total_rows == 0 {
        return vec![].into();
    }

    let file_end = total_rows - 1;
    let mut local_ranges: Vec<(usize, usize)> = row_ranges
        .iter()
        .filter_map(|r| {
            if r.to() < 0 || r.from() > file_end {
                return None;
            }
            let local_start = r.from().max(0) as usize;
            let local_end = (r.to().min(file_end) + 1) as usize;
            Some((local_start, local_end))
        })
        .collect();
    local_ranges.sort_by_key(|&(s, _)| s);

    let mut selectors: Vec<RowSelector> = Vec::new();
    let mut cursor: usize = 0;
    for (start, end) in &local_ranges {
        if *start > cursor {
            selectors.push(RowSelector::skip(*start - cursor));
        }
        let select_start = (*start).max(cursor);
        if *end > select_start {
            selectors.push(RowSelector::select(*end - select_start));
        }
        cursor = cursor.max(*end);
    }
    let total = total_rows as usize;
    if cursor < total {
        selectors.push(RowSelector::skip(total - cursor));
    }
    selectors.into()
}

// ---------------------------------------------------------------------------
// ArrowFileReader — async Parquet IO adapter
// ---------------------------------------------------------------------------

const PARQUET_METADATA_CACHE_MAX_ENTRIES: usize = 4096;
const PARQUET_METADATA_CACHE_MIN_ENTRY_BYTES: usize = 8 * 1024;

#[derive(Clone, Debug, Eq, Hash, PartialEq)]
struct ParquetMetadataCacheKey {
    file: String,
    size: u64,
    column_index: u8,
    offset_index: u8,
}

struct ParquetMetadataCache {
    inner: FileMetadataCache<ParquetMetadataCacheKey, ParquetMetaData>,
}

impl ParquetMetadataCache {
    fn new(max_bytes: usize) -> Self {
        Self {
            inner: FileMetadataCache::new(max_bytes, PARQUET_METADATA_CACHE_MAX_ENTRIES),
        }
    }

    async fn load(
        &self,
        reader: &mut ArrowFileReader,
        options: Option<&ArrowReaderOptions>,
    ) -> parquet::errors::Result<Arc<ParquetMetaData>> {
        let column_index = options.map_or(PageIndexPolicy::Skip, |o| o.column_index_policy());
        let offset_index = options.map_or(PageIndexPolicy::Skip, |o| o.offset_index_policy());
        let key = reader
            .r
            .cache_key()
            .filter(|key| !key.is_empty())
            .map(|file| ParquetMetadataCacheKey {
                file: file.to_string(),
                // Paimon data files are immutable; size separates supported replacements.
                size: reader.file_size,
                column_index: page_index_policy_tag(column_index),
                offset_index: page_index_policy_tag(offset_index),
            });
        let key_heap_bytes = key.as_ref().map_or(0, |key| key.file.capacity());
        self.inner
            .get_or_try_insert_with(
                key,
                key_heap_bytes,
                || reader.load_metadata(options),
                |metadata| {
                    metadata
                        .memory_size()
                        .max(PARQUET_METADATA_CACHE_MIN_ENTRY_BYTES)
                },
            )
            .await
    }
}

fn page_index_policy_tag(policy: PageIndexPolicy) -> u8 {
    match policy {
        PageIndexPolicy::Skip => 0,
        PageIndexPolicy::Optional => 1,
        PageIndexPolicy::Required => 2,
    }
}

/// ArrowFileReader is a wrapper around a FileRead that impls parquets AsyncFileReader.
///
/// # TODO
///
/// [ParquetObjectReader](https://docs.rs/parquet/latest/src/parquet/arrow/async_reader/store.rs.html#64)
/// contains the following hints to speed up metadata loading, similar to iceberg, we can consider adding them to this struct:
///
/// - `metadata_size_hint`: Provide a hint as to the size of the parquet file's footer.
/// - `preload_column_index`: Load the Column Index  as part of [`Self::get_metadata`].
/// - `preload_offset_index`: Load the Offset Index as part of [`Self::get_metadata`].
struct ArrowFileReader {
    file_size: u64,
    r: Arc<dyn FileRead>,
    metadata_cache_enabled: bool,
}

/// coalesce threshold: 1 MiB.
const RANGE_COALESCE_BYTES: u64 = 1024 * 1024;
/// concurrent range fetches.
const RANGE_FETCH_CONCURRENCY: usize = 10;
/// metadata prefetch hint: 512 KiB.
const METADATA_SIZE_HINT: usize = 512 * 1024;
/// Minimum range size for splitting: 4 MiB.
/// The block size used for split alignment and as the minimum split
/// granularity.  Ranges smaller than this will not be split further to
/// avoid excessive small IO requests whose per-request overhead dominates.
const IO_BLOCK_SIZE: u64 = 4 * 1024 * 1024;

/// Rows in a Parquet file, read from its footer alone.
pub(crate) async fn read_row_count(
    reader: Box<dyn FileRead>,
    file_size: u64,
) -> crate::Result<i64> {
    let mut reader =
        ArrowFileReader::new(file_size, Arc::from(reader)).with_metadata_cache_enabled(false);
    let metadata = reader.get_metadata(None).await.map_err(|error| {
        Error::from_parquet_with_context(error, "Failed to read the Parquet footer")
    })?;
    Ok(metadata.file_metadata().num_rows())
}

impl ArrowFileReader {
    fn new(file_size: u64, r: Arc<dyn FileRead>) -> Self {
        Self {
            file_size,
            r,
            metadata_cache_enabled: true,
        }
    }

    fn with_metadata_cache_enabled(mut self, enabled: bool) -> Self {
        self.metadata_cache_enabled = enabled;
        self
    }

    fn read_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        Box::pin(
            self.r
                .read(range.start..range.end)
                .map_err(|error| parquet::errors::ParquetError::External(Box::new(error))),
        )
    }

    async fn load_metadata(
        &mut self,
        options: Option<&ArrowReaderOptions>,
    ) -> parquet::errors::Result<Arc<ParquetMetaData>> {
        let metadata_opts = options.map(|o| o.metadata_options().clone());
        let column_index_policy = options.map(|o| o.column_index_policy());
        let offset_index_policy = options.map(|o| o.offset_index_policy());
        let file_size = self.file_size;
        let mut reader = ParquetMetaDataReader::new()
            .with_prefetch_hint(Some(METADATA_SIZE_HINT))
            .with_metadata_options(metadata_opts);
        if let Some(policy) = column_index_policy {
            reader = reader.with_column_index_policy(policy);
        }
        if let Some(policy) = offset_index_policy {
            reader = reader.with_offset_index_policy(policy);
        }
        Ok(Arc::new(reader.load_and_finish(self, file_size).await?))
    }
}

impl MetadataFetch for ArrowFileReader {
    fn fetch(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        self.read_bytes(range)
    }
}

impl AsyncFileReader for ArrowFileReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        self.read_bytes(range)
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        let coalesce_bytes = RANGE_COALESCE_BYTES;
        let concurrency = RANGE_FETCH_CONCURRENCY;

        async move {
            if ranges.is_empty() {
                return Ok(vec![]);
            }

            // Two-phase range optimization:
            // Phase 1: Merge nearby ranges based on coalesce threshold.
            let coalesced = merge_byte_ranges(&ranges, coalesce_bytes);
            // Phase 2: Split large merged ranges to utilize concurrency,
            // but only at original range boundaries.
            let fetch_ranges = split_ranges_for_concurrency(coalesced, concurrency);

            // Fetch merged ranges concurrently.
            let r = &self.r;
            let fetched: Vec<Bytes> = if fetch_ranges.len() <= concurrency {
                // All ranges fit within the concurrency limit — fire them all at once.
                futures::future::try_join_all(fetch_ranges.iter().map(|range| {
                    r.read(range.clone())
                        .map_err(|error| parquet::errors::ParquetError::External(Box::new(error)))
                }))
                .await?
            } else {
                // More ranges than concurrency slots — use buffered stream.
                futures::stream::iter(fetch_ranges.iter().cloned())
                    .map(|range| async move {
                        r.read(range).await.map_err(|error| {
                            parquet::errors::ParquetError::External(Box::new(error))
                        })
                    })
                    .buffered(concurrency)
                    .try_collect()
                    .await?
            };

            // Slice the fetched data back into the originally requested
            // ranges.  A single original range may span multiple fetch
            // chunks, so we copy from as many chunks as needed.
            let result: parquet::errors::Result<Vec<Bytes>> = ranges
                .iter()
                .map(|range| {
                    // Find the first fetch chunk whose end is past range.start.
                    let first = fetch_ranges.partition_point(|v| v.end <= range.start);
                    if first >= fetch_ranges.len() {
                        return Err(parquet::errors::ParquetError::General(format!(
                            "No fetch range covers requested range {}..{}",
                            range.start, range.end
                        )));
                    }

                    let need = (range.end - range.start) as usize;

                    // Fast path: the original range fits entirely within one
                    // fetch chunk — zero-copy slice.
                    let fr = &fetch_ranges[first];
                    if range.end <= fr.end {
                        let start = (range.start - fr.start) as usize;
                        let end = (range.end - fr.start) as usize;
                        return Ok(fetched[first].slice(start..end));
                    }

                    // Slow path: the original range spans multiple fetch
                    // chunks — copy pieces into a new buffer (mirrors Java's
                    // copyMultiBytesToBytes).
                    let mut buf = Vec::with_capacity(need);
                    let mut pos = range.start;
                    for i in first..fetch_ranges.len() {
                        if pos >= range.end {
                            break;
                        }
                        let fr = &fetch_ranges[i];
                        let chunk = &fetched[i];
                        let src_start = (pos - fr.start) as usize;
                        let src_end = ((range.end.min(fr.end)) - fr.start) as usize;
                        if src_end > chunk.len() {
                            return Err(parquet::errors::ParquetError::General(format!(
                                "Fetched data too short for range {}..{}: \
                                 chunk {}..{} has {} bytes, need up to offset {}",
                                range.start,
                                range.end,
                                fr.start,
                                fr.end,
                                chunk.len(),
                                src_end,
                            )));
                        }
                        buf.extend_from_slice(&chunk[src_start..src_end]);
                        pos = fr.end;
                    }
                    if buf.len() != need {
                        return Err(parquet::errors::ParquetError::General(format!(
                            "Assembled {} bytes for range {}..{}, expected {}",
                            buf.len(),
                            range.start,
                            range.end,
                            need,
                        )));
                    }
                    Ok(Bytes::from(buf))
                })
                .collect();
            result
        }
        .boxed()
    }

    fn get_metadata(
        &mut self,
        options: Option<&ArrowReaderOptions>,
    ) -> BoxFuture<'_, parquet::errors::Result<Arc<ParquetMetaData>>> {
        let options = options.cloned();
        let metadata_cache_enabled = self.metadata_cache_enabled;
        Box::pin(async move {
            if !metadata_cache_enabled {
                return self.load_metadata(options.as_ref()).await;
            }
            let Some(context) = self.r.file_format_metadata_cache().and_then(|cache| {
                cache.downcast_ref::<crate::io::FileFormatMetadataCacheContext>()
            }) else {
                return self.load_metadata(options.as_ref()).await;
            };
            if context.max_bytes() == 0 {
                return self.load_metadata(options.as_ref()).await;
            }
            context
                .get_or_init(ParquetMetadataCache::new)
                .load(self, options.as_ref())
                .await
        })
    }
}

// ---------------------------------------------------------------------------
// Range coalescing
// ---------------------------------------------------------------------------

/// Merge nearby byte ranges to reduce the number of requests.
///
/// Ranges whose gap is ≤ `coalesce` bytes are merged into a single range.
/// The input does not need to be sorted.
fn merge_byte_ranges(ranges: &[Range<u64>], coalesce: u64) -> Vec<Range<u64>> {
    if ranges.is_empty() {
        return vec![];
    }

    let mut sorted = ranges.to_vec();
    sorted.sort_unstable_by_key(|r| r.start);

    let mut merged = Vec::with_capacity(sorted.len());
    let mut start_idx = 0;
    let mut end_idx = 1;

    while start_idx != sorted.len() {
        let mut range_end = sorted[start_idx].end;

        while end_idx != sorted.len()
            && sorted[end_idx]
                .start
                .checked_sub(range_end)
                .map(|delta| delta <= coalesce)
                .unwrap_or(true)
        {
            range_end = range_end.max(sorted[end_idx].end);
            end_idx += 1;
        }

        merged.push(sorted[start_idx].start..range_end);
        start_idx = end_idx;
        end_idx += 1;
    }

    merged
}

pub(crate) fn coalesced_parquet_range_bytes(ranges: &[Range<u64>]) -> u64 {
    merge_byte_ranges(ranges, RANGE_COALESCE_BYTES)
        .into_iter()
        .map(|range| range.end - range.start)
        .sum()
}

/// Split merged ranges into fixed-size batches to utilize concurrency,
/// Each merged range is divided into chunks of `expected_size`,
/// with the last chunk taking whatever remains.
/// Ranges smaller than `2 * IO_BLOCK_SIZE` are kept as-is to
/// avoid excessive small IO requests.
fn split_ranges_for_concurrency(merged: Vec<Range<u64>>, concurrency: usize) -> Vec<Range<u64>> {
    if merged.is_empty() || concurrency <= 1 {
        return merged;
    }

    let mut result = Vec::with_capacity(merged.len());

    for range in &merged {
        let length = range.end - range.start;
        let raw_size = IO_BLOCK_SIZE.max(length.div_ceil(concurrency as u64));
        // Round up to the nearest multiple of IO_BLOCK_SIZE (4 MB) so that
        // every split boundary is 4 MB-aligned relative to the range start.
        let expected_size = raw_size.div_ceil(IO_BLOCK_SIZE) * IO_BLOCK_SIZE;
        let min_tail_size = expected_size.max(IO_BLOCK_SIZE * 2);

        let mut offset = range.start;
        let end = range.end;

        // Align the first split boundary: if `offset` is not 4 MB-aligned,
        // emit a short head chunk so that all subsequent chunks start on a
        // 4 MB boundary.
        let misalign = offset % IO_BLOCK_SIZE;
        if misalign != 0 {
            let first_end = (offset - misalign + IO_BLOCK_SIZE).min(end);
            result.push(offset..first_end);
            offset = first_end;
        }

        loop {
            if offset >= end {
                break;
            }
            if end - offset < min_tail_size {
                result.push(offset..end);
                break;
            } else {
                result.push(offset..offset + expected_size);
                offset += expected_size;
            }
        }
    }

    result
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
#[allow(clippy::type_complexity)] // test row literals use nested Option<Vec<(&str, Option<i64>)>>
mod tests {
    use super::{build_parquet_row_filter, parquet_writer_properties};
    use super::{
        forward_row_group_batches, parquet_granules, parse_compression, supported_compressions,
        FilePredicates, ParquetFormatReader, ParquetFormatWriter, ParquetRowGroupMessage,
    };
    use super::{
        AsyncArrowWriter, Bytes, PageIndexPolicy, ParquetMetaDataReader, Predicate,
        PredicateOperator, RowSelection,
    };
    use crate::arrow::format::{
        create_format_reader, create_format_writer, with_write_resources, FormatFileReader,
        FormatFileWriter,
    };
    use crate::arrow::{build_target_arrow_schema, variant_arrow_type, ReadBudget};
    use crate::io::FileIOBuilder;
    use crate::resource::ResourceContext;
    use crate::spec::{
        ArrayType, BigIntType, DataField, DataType, Datum, IntType, LocalZonedTimestampType,
        MapType, PredicateBuilder, TimestampType, VarCharType, VariantType,
    };
    use crate::table::RowRange;
    use crate::variant::GenericVariant;
    use crate::Error;
    use arrow_array::{
        Array, BinaryArray, Int32Array, Int64Array, MapArray, RecordBatch, StringArray,
        StructArray, TimestampMillisecondArray, TimestampSecondArray,
    };
    use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
    use arrow_schema::{DataType as ArrowDataType, Field as ArrowField, Schema as ArrowSchema};
    use futures::{StreamExt, TryStreamExt};
    use parquet::arrow::async_reader::AsyncFileReader;
    use parquet::basic::{Compression, GzipLevel, ZstdLevel};
    use parquet::file::properties::{EnabledStatistics, WriterProperties};
    use parquet::file::statistics::Statistics as ParquetStatistics;
    use parquet::schema::{parser::parse_message_type, types::SchemaDescriptor};
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
    use std::sync::Arc;
    use std::time::Duration;
    use tokio::sync::mpsc;

    #[test]
    fn selected_map_rows_keep_all_map_leaves_without_a_shredding_plan() {
        use crate::spec::RowType;
        let descriptor = SchemaDescriptor::new(Arc::new(
            parse_message_type(
                "message schema {
                optional group attrs (MAP) { repeated group key_value {
                    required binary key (STRING); optional int32 value;
                } }
                optional group profile {
                    optional group attrs (MAP) { repeated group key_value {
                        required binary key (STRING); optional int32 value;
                    } }
                    optional int32 unused;
                }
                optional int32 unused;
            }",
            )
            .unwrap(),
        ));
        let map_type = DataType::Map(MapType::new(
            DataType::VarChar(VarCharType::string_type()),
            DataType::Int(IntType::new()),
        ));
        let top = crate::spec::map_selected_keys_field(
            &DataField::new(10, "attrs".into(), map_type.clone()),
            &["wanted".into()],
        )
        .unwrap();
        // A literal key can even collide with a Parquet layout field name.
        let nested = crate::spec::map_selected_keys_field(
            &DataField::new(21, "attrs".into(), map_type),
            &["key_value".into()],
        )
        .unwrap();
        let fields = vec![
            top,
            DataField::new(
                20,
                "profile".into(),
                DataType::Row(RowType::new(vec![nested])),
            ),
        ];
        let mask = super::read_type_projection_mask(&descriptor, &fields, None, &[]);
        for index in 0..4 {
            assert!(mask.leaf_included(index), "Missing MAP leaf {index}");
        }
        assert!(!mask.leaf_included(4));
        assert!(!mask.leaf_included(5));
    }

    #[test]
    fn nested_read_type_masks_physical_leaves_and_keeps_predicate_inputs() {
        use crate::spec::RowType;
        let descriptor = SchemaDescriptor::new(Arc::new(parse_message_type(
            "message schema { optional group profile { optional int32 score; optional binary unused; } optional int32 id; }"
        ).unwrap()));
        let fields = vec![
            DataField::new(
                10,
                "profile".into(),
                DataType::Row(RowType::new(vec![
                    DataField::new(11, "score".into(), DataType::Int(IntType::new())),
                    DataField::new(
                        12,
                        "unused".into(),
                        DataType::VarChar(VarCharType::string_type()),
                    ),
                ])),
            ),
            DataField::new(20, "id".into(), DataType::Int(IntType::new())),
        ];
        let selected =
            crate::spec::project_read_type(&fields, &[vec!["profile".into(), "score".into()]])
                .unwrap();
        let mask = super::read_type_projection_mask(&descriptor, &selected, None, &[]);
        assert!(mask.leaf_included(0));
        assert!(!mask.leaf_included(1));
        assert!(!mask.leaf_included(2));
        let predicate = PredicateBuilder::new(&fields).is_null("profile").unwrap();
        let widened = super::read_type_projection_mask(&descriptor, &selected, None, &[predicate]);
        assert!(widened.leaf_included(0));
        assert!(widened.leaf_included(1));
        assert!(!widened.leaf_included(2));
    }

    fn test_fields() -> Vec<DataField> {
        vec![
            DataField::new(0, "id".to_string(), DataType::Int(IntType::new())),
            DataField::new(1, "score".to_string(), DataType::Int(IntType::new())),
        ]
    }

    #[test]
    fn test_truncate_binary_stats_matches_java_unsigned_upper_bound() {
        use crate::spec::MetadataStatsMode;

        let binary = DataType::VarBinary(crate::spec::VarBinaryType::new(8).unwrap());
        let (min, max) = super::apply_stats_mode(
            &binary,
            MetadataStatsMode::Truncate(2),
            Some(Datum::Bytes(vec![0x12, 0xff, 0x01])),
            Some(Datum::Bytes(vec![0x12, 0xff, 0xfe])),
        );
        assert_eq!(min, Some(Datum::Bytes(vec![0x12, 0xff])));
        assert_eq!(max, Some(Datum::Bytes(vec![0x13])));

        let (min, max) = super::apply_stats_mode(
            &binary,
            MetadataStatsMode::Truncate(1),
            Some(Datum::Bytes(vec![0xfe, 0x01])),
            Some(Datum::Bytes(vec![0xff, 0x01])),
        );
        assert_eq!((min, max), (None, None));
    }

    fn test_parquet_schema() -> SchemaDescriptor {
        SchemaDescriptor::new(Arc::new(
            parse_message_type(
                "
                message test_schema {
                  OPTIONAL INT32 id;
                  OPTIONAL INT32 score;
                }
                ",
            )
            .expect("test schema should parse"),
        ))
    }

    #[test]
    fn test_build_parquet_row_filter_supports_null_and_membership_predicates() {
        let fields = test_fields();
        let builder = PredicateBuilder::new(&fields);
        let predicates = vec![
            builder
                .is_null("id")
                .expect("is null predicate should build"),
            builder
                .is_in("score", vec![Datum::Int(7)])
                .expect("in predicate should build"),
            builder
                .is_not_in("score", vec![Datum::Int(9)])
                .expect("not in predicate should build"),
        ];

        let row_filter = build_parquet_row_filter(&test_parquet_schema(), &predicates, &fields)
            .expect("parquet row filter should build");

        assert!(row_filter.is_some());
    }

    #[test]
    fn test_row_id_predicate_builds_no_decoder_row_filter() {
        let fields = test_fields();
        let schema = test_parquet_schema();
        assert!(build_parquet_row_filter(
            &schema,
            &[crate::spec::row_id_leaf(
                super::PredicateOperator::Eq,
                vec![Datum::Long(1)]
            )],
            &fields
        )
        .expect("row filter should build")
        .is_none());

        let mixed = Predicate::or(vec![
            crate::spec::row_id_leaf(super::PredicateOperator::Eq, vec![Datum::Long(1)]),
            PredicateBuilder::new(&fields)
                .equal("score", Datum::Int(7))
                .expect("leaf should build"),
        ]);
        assert!(build_parquet_row_filter(&schema, &[mixed], &fields)
            .expect("row filter should build")
            .is_none());
    }

    // -----------------------------------------------------------------------
    // String predicate tests (StartsWith / EndsWith / Contains)
    // -----------------------------------------------------------------------

    fn run_string_op(
        op: super::PredicateOperator,
        column: arrow_array::ArrayRef,
        pattern: &str,
    ) -> arrow_array::BooleanArray {
        use crate::spec::VarCharType;
        let dt = DataType::VarChar(VarCharType::default());
        crate::arrow::residual::evaluate_exact_leaf_predicate(
            &column,
            &dt,
            op,
            &[Datum::String(pattern.to_string())],
        )
        .expect("string op should evaluate")
    }

    #[test]
    fn test_evaluate_starts_with_string_array() {
        use arrow_array::StringArray;
        let arr: arrow_array::ArrayRef = Arc::new(StringArray::from(vec![
            Some("foo"),
            Some("foobar"),
            Some("baz"),
            None,
        ]));
        let mask = run_string_op(super::PredicateOperator::StartsWith, arr, "foo");
        let expected = arrow_array::BooleanArray::from(vec![true, true, false, false]);
        assert_eq!(mask, expected);
    }

    #[test]
    fn test_evaluate_ends_with_large_string_array() {
        use arrow_array::LargeStringArray;
        let arr: arrow_array::ArrayRef = Arc::new(LargeStringArray::from(vec![
            Some("hello"),
            Some("world"),
            Some("ello"),
            None,
        ]));
        let mask = run_string_op(super::PredicateOperator::EndsWith, arr, "ello");
        let expected = arrow_array::BooleanArray::from(vec![true, false, true, false]);
        assert_eq!(mask, expected);
    }

    #[test]
    fn test_evaluate_contains_string_view_array() {
        use arrow_array::StringViewArray;
        let arr: arrow_array::ArrayRef = Arc::new(StringViewArray::from(vec![
            Some("apple pie"),
            Some("banana"),
            Some("crab apple"),
            None,
        ]));
        let mask = run_string_op(super::PredicateOperator::Contains, arr, "apple");
        let expected = arrow_array::BooleanArray::from(vec![true, false, true, false]);
        assert_eq!(mask, expected);
    }

    #[test]
    fn test_evaluate_string_view_comparison_families() {
        use crate::spec::VarCharType;
        use arrow_array::{ArrayRef, BooleanArray, StringViewArray};

        let column: ArrayRef = Arc::new(StringViewArray::from(vec![
            Some("a"),
            Some("b"),
            Some("c"),
            None,
        ]));
        let data_type = DataType::VarChar(VarCharType::default());
        let cases = [
            (
                super::PredicateOperator::Eq,
                vec![Datum::String("b".to_string())],
                vec![false, true, false, false],
            ),
            (
                super::PredicateOperator::NotEq,
                vec![Datum::String("b".to_string())],
                vec![true, false, true, false],
            ),
            (
                super::PredicateOperator::Lt,
                vec![Datum::String("b".to_string())],
                vec![true, false, false, false],
            ),
            (
                super::PredicateOperator::LtEq,
                vec![Datum::String("b".to_string())],
                vec![true, true, false, false],
            ),
            (
                super::PredicateOperator::Gt,
                vec![Datum::String("b".to_string())],
                vec![false, false, true, false],
            ),
            (
                super::PredicateOperator::GtEq,
                vec![Datum::String("b".to_string())],
                vec![false, true, true, false],
            ),
            (
                super::PredicateOperator::In,
                vec![
                    Datum::String("a".to_string()),
                    Datum::String("c".to_string()),
                ],
                vec![true, false, true, false],
            ),
            (
                super::PredicateOperator::NotIn,
                vec![
                    Datum::String("a".to_string()),
                    Datum::String("c".to_string()),
                ],
                vec![false, true, false, false],
            ),
            (
                super::PredicateOperator::Between,
                vec![
                    Datum::String("a".to_string()),
                    Datum::String("b".to_string()),
                ],
                vec![true, true, false, false],
            ),
            (
                super::PredicateOperator::NotBetween,
                vec![
                    Datum::String("a".to_string()),
                    Datum::String("b".to_string()),
                ],
                vec![false, false, true, false],
            ),
        ];

        for (op, literals, expected) in cases {
            let mask = crate::arrow::residual::evaluate_exact_leaf_predicate(
                &column, &data_type, op, &literals,
            )
            .unwrap_or_else(|error| panic!("{op:?} should evaluate: {error}"));
            assert_eq!(mask, BooleanArray::from(expected), "operator {op:?}");
        }
    }

    #[test]
    fn test_evaluate_like_pattern_with_underscore_and_percent() {
        use arrow_array::StringArray;
        let arr: arrow_array::ArrayRef = Arc::new(StringArray::from(vec![
            Some("foobar"),
            Some("foox"),
            Some("zoobar"),
            None,
        ]));
        // f_o% matches "foobar" (f-o-o then anything) and "foox" (f-o-o then x)
        // but not "zoobar".
        let mask = run_string_op(super::PredicateOperator::Like, arr, "f_o%");
        let expected = arrow_array::BooleanArray::from(vec![true, true, false, false]);
        assert_eq!(mask, expected);
    }

    #[test]
    fn test_evaluate_like_escaped_percent_treated_literally() {
        use arrow_array::StringArray;
        let arr: arrow_array::ArrayRef =
            Arc::new(StringArray::from(vec![Some("100%"), Some("1000"), None]));
        let mask = run_string_op(super::PredicateOperator::Like, arr, r"100\%");
        let expected = arrow_array::BooleanArray::from(vec![true, false, false]);
        assert_eq!(mask, expected);
    }

    // -----------------------------------------------------------------------
    // BETWEEN / NOT BETWEEN row-filter tests
    // -----------------------------------------------------------------------

    fn run_between(
        op: super::PredicateOperator,
        column: arrow_array::ArrayRef,
        low: i32,
        high: i32,
    ) -> arrow_array::BooleanArray {
        let dt = DataType::Int(IntType::new());
        crate::arrow::residual::evaluate_exact_leaf_predicate(
            &column,
            &dt,
            op,
            &[Datum::Int(low), Datum::Int(high)],
        )
        .expect("BETWEEN should evaluate")
    }

    #[test]
    fn test_evaluate_between_int_array() {
        let arr: arrow_array::ArrayRef = Arc::new(Int32Array::from(vec![
            Some(1),
            Some(5),
            Some(10),
            Some(11),
            None,
        ]));
        let mask = run_between(super::PredicateOperator::Between, arr, 5, 10);
        let expected = arrow_array::BooleanArray::from(vec![false, true, true, false, false]);
        assert_eq!(mask, expected);
    }

    #[test]
    fn test_evaluate_not_between_treats_null_as_false() {
        let arr: arrow_array::ArrayRef = Arc::new(Int32Array::from(vec![
            Some(1),
            Some(5),
            Some(10),
            Some(11),
            None,
        ]));
        let mask = run_between(super::PredicateOperator::NotBetween, arr, 5, 10);
        // NULL → false (residual filter convention; matches sanitize_filter_mask).
        let expected = arrow_array::BooleanArray::from(vec![true, false, false, true, false]);
        assert_eq!(mask, expected);
    }

    // -----------------------------------------------------------------------
    // merge_byte_ranges tests
    // -----------------------------------------------------------------------

    #[test]
    fn test_merge_byte_ranges_empty() {
        assert_eq!(
            super::merge_byte_ranges(&[], 1024),
            Vec::<std::ops::Range<u64>>::new()
        );
    }

    #[test]
    fn test_merge_byte_ranges_no_coalesce() {
        // Ranges far apart should not be merged
        let ranges = vec![0..100, 1_000_000..1_000_100];
        let merged = super::merge_byte_ranges(&ranges, 1024);
        assert_eq!(merged, vec![0..100, 1_000_000..1_000_100]);
    }

    #[test]
    fn test_merge_byte_ranges_coalesce() {
        // Ranges within the gap threshold should be merged
        let ranges = vec![0..100, 200..300, 500..600];
        let merged = super::merge_byte_ranges(&ranges, 1024);
        assert_eq!(merged, vec![0..600]);
    }

    #[test]
    fn test_merge_byte_ranges_zero_coalesce_gap() {
        // With coalesce=0, ranges with a 1-byte gap should NOT merge
        let ranges = vec![0..100, 101..200];
        let merged = super::merge_byte_ranges(&ranges, 0);
        assert_eq!(merged, vec![0..100, 101..200]);
    }

    // -----------------------------------------------------------------------
    // split_ranges_for_concurrency tests
    // -----------------------------------------------------------------------

    #[test]
    fn test_split_aligned_range_0_to_20mb() {
        // 0..20MB, concurrency=4:
        //   raw_size = max(4MB, 5MB+1) = 5MB+1
        //   expected_size = ceil((5MB+1)/4MB)*4MB = 8MB
        //   min_tail_size = max(8MB, 8MB) = 8MB
        //   No misalign. Chunks: [0..8, 8..16, 16..20]
        let mb = 1024 * 1024u64;
        #[allow(clippy::single_range_in_vec_init)]
        let merged = vec![0..20 * mb];
        let result = super::split_ranges_for_concurrency(merged, 4);
        assert_eq!(result, vec![0..8 * mb, 8 * mb..16 * mb, 16 * mb..20 * mb]);
    }

    #[test]
    fn test_split_unaligned_start_6_to_14mb() {
        // 6MB..14MB, concurrency=4:
        //   raw_size = max(4MB, 2MB+1) = 4MB
        //   expected_size = 4MB, min_tail_size = 8MB
        //   Head: 6..8MB. Loop: 8+8=16 > 14 → tail 8..14.
        //   Result: [6..8, 8..14]
        let mb = 1024 * 1024u64;
        #[allow(clippy::single_range_in_vec_init)]
        let merged = vec![6 * mb..14 * mb];
        let result = super::split_ranges_for_concurrency(merged, 4);
        assert_eq!(result, vec![6 * mb..8 * mb, 8 * mb..14 * mb]);
    }

    #[test]
    fn test_split_unaligned_start_6_to_22mb() {
        // 6MB..22MB, concurrency=4:
        //   raw_size = max(4MB, ceil(16MB/4)) = 4MB
        //   expected_size = ceil(4MB/4MB)*4MB = 4MB
        //   min_tail_size = max(4MB, 8MB) = 8MB
        //   Head: 6..8MB (misalign=2MB).
        //   Loop: 22-8=14≥8 → 8..12; 22-12=10≥8 → 12..16; 22-16=6<8 → tail 16..22.
        //   Result: [6..8, 8..12, 12..16, 16..22]
        let mb = 1024 * 1024u64;
        #[allow(clippy::single_range_in_vec_init)]
        let merged = vec![6 * mb..22 * mb];
        let result = super::split_ranges_for_concurrency(merged, 4);
        assert_eq!(
            result,
            vec![
                6 * mb..8 * mb,
                8 * mb..12 * mb,
                12 * mb..16 * mb,
                16 * mb..22 * mb,
            ]
        );
    }

    #[test]
    fn test_split_already_aligned_8_to_24mb() {
        // 8MB..24MB, concurrency=4:
        //   raw_size = max(4MB, ceil(16MB/4)) = 4MB
        //   expected_size = 4MB, min_tail_size = 8MB
        //   No misalign.
        //   Loop: 24-8=16≥8 → 8..12; 24-12=12≥8 → 12..16; 24-16=8≥8 → 16..20; 24-20=4<8 → tail 20..24.
        //   Result: [8..12, 12..16, 16..20, 20..24]
        let mb = 1024 * 1024u64;
        #[allow(clippy::single_range_in_vec_init)]
        let merged = vec![8 * mb..24 * mb];
        let result = super::split_ranges_for_concurrency(merged, 4);
        assert_eq!(
            result,
            vec![
                8 * mb..12 * mb,
                12 * mb..16 * mb,
                16 * mb..20 * mb,
                20 * mb..24 * mb,
            ]
        );
    }

    #[test]
    fn test_split_multiple_ranges() {
        // [0..20MB, 24..44MB], concurrency=4:
        //   Range 0..20MB → [0..8, 8..16, 16..20] (same as test above)
        //   Range 24..44MB (20MB): expected_size=8MB, min_tail_size=8MB, no misalign.
        //     24+8=32 ≤ 44 → 24..32; 32+8=40 ≤ 44 → 32..40; 40+8=48 > 44 → tail 40..44.
        //   Result: [0..8, 8..16, 16..20, 24..32, 32..40, 40..44]
        let mb = 1024 * 1024u64;
        let merged = vec![0..20 * mb, 24 * mb..44 * mb];
        let result = super::split_ranges_for_concurrency(merged, 4);
        assert_eq!(
            result,
            vec![
                0..8 * mb,
                8 * mb..16 * mb,
                16 * mb..20 * mb,
                24 * mb..32 * mb,
                32 * mb..40 * mb,
                40 * mb..44 * mb,
            ]
        );
    }

    #[test]
    fn test_split_empty() {
        let merged: Vec<std::ops::Range<u64>> = vec![];
        let result = super::split_ranges_for_concurrency(merged, 4);
        assert!(result.is_empty());
    }

    fn writer_arrow_schema() -> Arc<ArrowSchema> {
        Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, false),
            ArrowField::new("value", ArrowDataType::Int32, false),
        ]))
    }

    fn writer_test_batch(
        schema: &Arc<ArrowSchema>,
        ids: Vec<i32>,
        values: Vec<i32>,
    ) -> RecordBatch {
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from(ids)),
                Arc::new(Int32Array::from(values)),
            ],
        )
        .unwrap()
    }

    struct ForkFailingFileRead;

    #[async_trait::async_trait]
    impl crate::io::FileRead for ForkFailingFileRead {
        async fn read(&self, _range: std::ops::Range<u64>) -> crate::Result<Bytes> {
            Err(Error::ProcessForkUnsupported {
                message: crate::error::JINDO_FORK_ERROR.to_string(),
            })
        }
    }

    #[tokio::test]
    async fn parquet_read_paths_preserve_fork_safety_error() {
        let fields = vec![DataField::new(
            0,
            "id".to_string(),
            DataType::Int(IntType::new()),
        )];
        let error = match ParquetFormatReader::default()
            .read_batch_stream(Box::new(ForkFailingFileRead), 8, &fields, None, None, None)
            .await
        {
            Ok(_) => panic!("Parquet reader should propagate the storage error"),
            Err(error) => error,
        };
        assert!(matches!(error, Error::ProcessForkUnsupported { .. }));

        let error = super::read_row_count(Box::new(ForkFailingFileRead), 8)
            .await
            .unwrap_err();
        assert!(matches!(error, Error::ProcessForkUnsupported { .. }));

        for count in [2, super::RANGE_FETCH_CONCURRENCY + 1] {
            let step = super::RANGE_COALESCE_BYTES + 2;
            let ranges = (0..count)
                .map(|index| {
                    let start = index as u64 * step;
                    start..start + 1
                })
                .collect::<Vec<_>>();
            let mut reader =
                super::ArrowFileReader::new(count as u64 * step + 1, Arc::new(ForkFailingFileRead));
            let error = reader.get_byte_ranges(ranges).await.unwrap_err();
            let error = Error::from(error);
            assert!(matches!(error, Error::ProcessForkUnsupported { .. }));
        }
    }

    #[derive(Clone)]
    struct ConcurrentTrackingFileRead {
        data: Bytes,
        in_flight: Arc<AtomicUsize>,
        max_in_flight: Arc<AtomicUsize>,
    }

    #[async_trait::async_trait]
    impl crate::io::FileRead for ConcurrentTrackingFileRead {
        async fn read(&self, range: std::ops::Range<u64>) -> crate::Result<Bytes> {
            let current = self.in_flight.fetch_add(1, AtomicOrdering::SeqCst) + 1;
            self.max_in_flight
                .fetch_max(current, AtomicOrdering::SeqCst);
            tokio::time::sleep(Duration::from_millis(10)).await;
            self.in_flight.fetch_sub(1, AtomicOrdering::SeqCst);
            Ok(self.data.slice(range.start as usize..range.end as usize))
        }
    }

    #[tokio::test]
    async fn test_parquet_reader_reads_row_groups_concurrently_in_order() {
        const ROWS: i32 = 512;
        let schema = writer_arrow_schema();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(64))
            .set_dictionary_enabled(false)
            .build();
        let mut data = Vec::new();
        let mut writer = AsyncArrowWriter::try_new(&mut data, schema.clone(), Some(props)).unwrap();
        let ids = (0..ROWS).collect::<Vec<_>>();
        writer
            .write(&writer_test_batch(
                &schema,
                ids.clone(),
                ids.iter().map(|id| id * 10).collect(),
            ))
            .await
            .unwrap();
        writer.close().await.unwrap();

        let in_flight = Arc::new(AtomicUsize::new(0));
        let max_in_flight = Arc::new(AtomicUsize::new(0));
        let file_reader = ConcurrentTrackingFileRead {
            data: Bytes::from(data),
            in_flight,
            max_in_flight: Arc::clone(&max_in_flight),
        };
        let file_size = file_reader.data.len() as u64;
        let fields = vec![DataField::new(
            0,
            "id".to_string(),
            DataType::Int(IntType::new()),
        )];
        let batches = ParquetFormatReader::with_read_budget(Arc::new(
            ReadBudget::new(8, 256 * 1024 * 1024).unwrap(),
        ))
        .read_batch_stream(
            Box::new(file_reader),
            file_size,
            &fields,
            None,
            Some(32),
            None,
        )
        .await
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap();
        let actual = batches
            .iter()
            .flat_map(|batch| {
                batch
                    .column(0)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .values()
                    .iter()
                    .copied()
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>();

        assert_eq!(actual, ids);
        assert!(
            max_in_flight.load(AtomicOrdering::SeqCst) > 1,
            "row-group reads should overlap"
        );
    }

    #[tokio::test]
    async fn test_sparse_row_groups_preserve_selection_order_and_budget() {
        let data = write_multi_row_group_parquet(64, 384, EnabledStatistics::Chunk, false).await;
        let in_flight = Arc::new(AtomicUsize::new(0));
        let max_in_flight = Arc::new(AtomicUsize::new(0));
        let file_reader = ConcurrentTrackingFileRead {
            data: Bytes::from(data),
            in_flight,
            max_in_flight,
        };
        let file_size = file_reader.data.len() as u64;
        let ranges = vec![
            RowRange::new(60, 68),
            RowRange::new(130, 135),
            RowRange::new(258, 263),
            RowRange::new(380, 383),
        ];
        let budget = Arc::new(ReadBudget::new(2, 256 * 1024 * 1024).unwrap());
        budget.enable_diagnostics();

        let batches = ParquetFormatReader::with_read_budget(Arc::clone(&budget))
            .read_batch_stream(
                Box::new(file_reader),
                file_size,
                &[int_field("id")],
                None,
                Some(32),
                Some(ranges.clone()),
            )
            .await
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        let actual = batches
            .iter()
            .flat_map(|batch| {
                batch
                    .column(0)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .values()
                    .iter()
                    .copied()
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>();
        let expected = ranges
            .iter()
            .flat_map(|range| range.from() as i32..=range.to() as i32)
            .collect::<Vec<_>>();

        assert_eq!(actual, expected);
        let diagnostics = budget.diagnostics();
        assert_eq!(diagnostics.row_group_count, 5);
        assert_eq!(diagnostics.peak_inflight, 2);
        assert_eq!(diagnostics.current_inflight, 0);
    }

    #[tokio::test]
    async fn test_sparse_page_budget_charges_full_projected_row_group() {
        const MIB: i64 = 1024 * 1024;

        let bytes = write_multi_page_parquet(10, 80).await;
        let metadata = load_metadata_with_page_index(&bytes, true);
        let offset_index = &metadata.offset_index().unwrap()[0];
        let page_locations = offset_index[0].page_locations();
        let compressed_bytes = page_locations
            .iter()
            .map(|page| i64::from(page.compressed_page_size))
            .sum();
        let mut row_group = metadata.row_groups()[0].clone();
        let column = row_group
            .column(0)
            .clone()
            .into_builder()
            .set_total_compressed_size(compressed_bytes)
            .set_total_uncompressed_size(308 * MIB)
            .set_data_page_offset(page_locations[0].offset)
            .set_dictionary_page_offset(None)
            .build()
            .unwrap();
        row_group.columns_mut()[0] = column;

        let projection = super::ProjectionMask::roots(row_group.schema_descr(), [0]);
        let projected_bytes = super::projected_row_group_bytes(&row_group, &projection);

        assert_eq!(projected_bytes, 308 * MIB as u64);
        let budget = ReadBudget::new(8, 256 * MIB as u64).unwrap();
        budget.enable_diagnostics();
        let permit = budget.acquire(projected_bytes).await.unwrap();
        assert!(
            tokio::time::timeout(Duration::from_millis(20), budget.acquire(1))
                .await
                .is_err()
        );
        drop(permit);
        let permit = tokio::time::timeout(Duration::from_secs(1), budget.acquire(projected_bytes))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(budget.diagnostics().peak_inflight, 1);
        drop(permit);
        assert_eq!(budget.diagnostics().current_inflight, 0);
    }

    #[tokio::test]
    async fn test_parquet_read_budget_is_shared_across_readers() {
        const ROWS: i32 = 256;
        let schema = writer_arrow_schema();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(32))
            .set_dictionary_enabled(false)
            .build();
        let mut data = Vec::new();
        let mut writer = AsyncArrowWriter::try_new(&mut data, schema.clone(), Some(props)).unwrap();
        let ids = (0..ROWS).collect::<Vec<_>>();
        writer
            .write(&writer_test_batch(
                &schema,
                ids.clone(),
                ids.iter().map(|id| id * 10).collect(),
            ))
            .await
            .unwrap();
        writer.close().await.unwrap();

        let data = Bytes::from(data);
        let in_flight = Arc::new(AtomicUsize::new(0));
        let max_in_flight = Arc::new(AtomicUsize::new(0));
        let new_file_reader = || ConcurrentTrackingFileRead {
            data: data.clone(),
            in_flight: Arc::clone(&in_flight),
            max_in_flight: Arc::clone(&max_in_flight),
        };
        let file_size = data.len() as u64;
        let fields = vec![DataField::new(
            0,
            "id".to_string(),
            DataType::Int(IntType::new()),
        )];
        let budget = Arc::new(ReadBudget::new(2, 256 * 1024 * 1024).unwrap());
        let first = ParquetFormatReader::with_read_budget(Arc::clone(&budget))
            .read_batch_stream(
                Box::new(new_file_reader()),
                file_size,
                &fields,
                None,
                Some(32),
                None,
            )
            .await
            .unwrap();
        let second = ParquetFormatReader::with_read_budget(budget)
            .read_batch_stream(
                Box::new(new_file_reader()),
                file_size,
                &fields,
                None,
                Some(32),
                None,
            )
            .await
            .unwrap();

        max_in_flight.store(0, AtomicOrdering::SeqCst);
        let (first, second) = tokio::join!(
            first.try_collect::<Vec<_>>(),
            second.try_collect::<Vec<_>>()
        );
        assert_eq!(
            first
                .unwrap()
                .iter()
                .map(RecordBatch::num_rows)
                .sum::<usize>(),
            ROWS as usize
        );
        assert_eq!(
            second
                .unwrap()
                .iter()
                .map(RecordBatch::num_rows)
                .sum::<usize>(),
            ROWS as usize
        );
        let observed = max_in_flight.load(AtomicOrdering::SeqCst);
        assert_eq!(
            observed, 2,
            "two readers must share the same row-group budget"
        );
    }

    #[tokio::test]
    async fn test_parquet_diagnostics_include_reads_with_row_selection() {
        let data = write_multi_row_group_parquet(32, 64, EnabledStatistics::Chunk, false).await;
        let budget = Arc::new(ReadBudget::new(8, 256 * 1024 * 1024).unwrap());
        budget.enable_diagnostics();
        let file_size = data.len() as u64;
        let fields = vec![int_field("id")];
        let batches = ParquetFormatReader::with_read_budget(Arc::clone(&budget))
            .read_batch_stream(
                Box::new(TrackingFileRead::new(Bytes::from(data))),
                file_size,
                &fields,
                None,
                Some(32),
                Some(vec![RowRange::new(0, 9)]),
            )
            .await
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();

        assert_eq!(batches.iter().map(RecordBatch::num_rows).sum::<usize>(), 10);
        let diagnostics = budget.diagnostics();
        assert_eq!(diagnostics.row_group_count, 1);
        assert!(diagnostics.projected_bytes_total > 0);
        assert_eq!(diagnostics.peak_inflight, 1);
    }

    #[tokio::test]
    async fn test_row_group_batch_forwarding_applies_backpressure() {
        let schema = Arc::new(ArrowSchema::empty());
        let batch = RecordBatch::try_new_with_options(
            Arc::clone(&schema),
            Vec::new(),
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(1)),
        )
        .unwrap();
        let polls = Arc::new(AtomicUsize::new(0));
        let tracked_polls = Arc::clone(&polls);
        let stream =
            futures::stream::iter(vec![Ok::<_, Error>(batch.clone()), Ok::<_, Error>(batch)])
                .inspect(move |_| {
                    tracked_polls.fetch_add(1, AtomicOrdering::SeqCst);
                });
        let (tx, mut rx) = mpsc::channel(1);
        let task = tokio::spawn(forward_row_group_batches(stream, tx, None));

        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(
            polls.load(AtomicOrdering::SeqCst),
            1,
            "a full output channel must stop polling and decoding the source stream"
        );
        assert!(matches!(
            rx.recv().await,
            Some(ParquetRowGroupMessage::Batch(_))
        ));

        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(polls.load(AtomicOrdering::SeqCst), 2);
        drop(rx);
        task.await.unwrap();
    }

    #[tokio::test]
    async fn cancelled_row_group_drops_decoder_before_returning_memory() {
        use crate::resource::ResourceContext;

        struct Decoder {
            resources: ResourceContext,
            charge_at_drop: Arc<AtomicUsize>,
        }
        impl futures::Stream for Decoder {
            type Item = Result<RecordBatch, Error>;

            fn poll_next(
                self: std::pin::Pin<&mut Self>,
                _: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Option<Self::Item>> {
                std::task::Poll::Pending
            }
        }
        impl Drop for Decoder {
            fn drop(&mut self) {
                self.charge_at_drop.store(
                    self.resources.metrics().reserved_memory_bytes,
                    AtomicOrdering::SeqCst,
                );
            }
        }

        for mode in 0..3 {
            let resources = ResourceContext::builder().memory_limit(8).build().unwrap();
            let budget = ReadBudget::default().with_resources(resources.clone());
            let permit = budget.reserve_memory(8).unwrap();
            let charge_at_drop = Arc::new(AtomicUsize::new(usize::MAX));
            let decoder = Decoder {
                resources: resources.clone(),
                charge_at_drop: charge_at_drop.clone(),
            };
            let (tx, rx) = mpsc::channel(1);
            let mut forwarding = Box::pin(forward_row_group_batches(decoder, tx, Some(permit)));
            if mode > 0 {
                assert!(futures::poll!(&mut forwarding).is_pending());
            }
            if mode == 2 {
                drop(rx);
                forwarding.as_mut().await;
            }
            // Cover an unpolled future, cancellation during I/O, and a closed receiver.
            drop(forwarding);
            assert_eq!(
                charge_at_drop.load(AtomicOrdering::SeqCst),
                8,
                "mode {mode}"
            );
            assert_eq!(resources.metrics().reserved_memory_bytes, 0);
        }
    }

    #[tokio::test]
    async fn test_row_group_batch_forwarding_stops_during_pending_io() {
        let (polled_tx, polled_rx) = tokio::sync::oneshot::channel();
        let mut polled_tx = Some(polled_tx);
        let stream = futures::stream::poll_fn(move |_| {
            if let Some(tx) = polled_tx.take() {
                let _ = tx.send(());
            }
            std::task::Poll::Pending::<Option<Result<RecordBatch, Error>>>
        });
        let (tx, rx) = mpsc::channel(1);
        let task = tokio::spawn(forward_row_group_batches(stream, tx, None));

        polled_rx.await.unwrap();
        drop(rx);
        tokio::time::timeout(Duration::from_millis(100), task)
            .await
            .expect("dropping the receiver must cancel a pending row-group read")
            .unwrap();
    }

    #[tokio::test]
    async fn test_resource_charge_releases_auto_flushed_row_group_with_tail() {
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let path = "memory:/test_parquet_writer_resource_auto_flush.parquet";
        let output = file_io.new_output(path).unwrap();
        let schema = writer_arrow_schema();
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(4))
            .build();
        let inner = AsyncArrowWriter::try_new(
            output.async_writer().await.unwrap(),
            schema.clone(),
            Some(props),
        )
        .unwrap();
        let first = writer_test_batch(&schema, vec![1, 2, 3, 4, 5], vec![10, 20, 30, 40, 50]);
        let second = writer_test_batch(&schema, vec![6, 7, 8, 9], vec![60, 70, 80, 90]);
        let first_bytes = first.get_array_memory_size();
        let second_bytes = second.get_array_memory_size();
        let resources = ResourceContext::builder()
            .memory_limit(first_bytes + second_bytes / 2)
            .build()
            .unwrap();
        let mut writer = with_write_resources(
            Box::new(ParquetFormatWriter {
                inner,
                input_schema: schema.clone(),
                schema,
                write_fields: None,
                stats_modes: None,
                stats_dense_store: false,
            }),
            Some(&resources),
        );

        writer.write(&first).await.unwrap();
        assert!(writer.in_progress_size() > 0);
        assert_eq!(
            resources.metrics().reserved_memory_bytes,
            first_bytes.div_ceil(5)
        );
        writer.write(&second).await.unwrap();
        assert_eq!(
            resources.metrics().reserved_memory_bytes,
            second_bytes.div_ceil(4)
        );
        writer.close().await.unwrap();
        assert_eq!(resources.metrics().reserved_memory_bytes, 0);

        let bytes = file_io.new_input(path).unwrap().read().await.unwrap();
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(bytes, 1024).unwrap();
        let total_rows: usize = reader
            .into_iter()
            .map(|batch| batch.unwrap().num_rows())
            .sum();
        assert_eq!(total_rows, 9);
    }

    #[tokio::test]
    async fn test_parquet_writer_dictionary_options() {
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        use parquet::schema::types::ColumnPath;

        for global in [true, false] {
            let options = HashMap::from([
                ("parquet.enable.dictionary".to_owned(), global.to_string()),
                (
                    "parquet.enable.dictionary#value".to_owned(),
                    (!global).to_string(),
                ),
                (
                    "parquet.enable.dictionary#nested.value".to_owned(),
                    "false".to_owned(),
                ),
            ]);
            let props =
                parquet_writer_properties(Compression::UNCOMPRESSED, true, &options).unwrap();
            assert_eq!(props.dictionary_enabled(&ColumnPath::from("id")), global);
            assert_eq!(
                props.dictionary_enabled(&ColumnPath::from("value")),
                !global
            );
            assert!(
                !props.dictionary_enabled(&ColumnPath::new(vec!["nested".into(), "value".into()]))
            );
            let file_io = FileIOBuilder::new("memory").build().unwrap();
            let path = "memory:/dictionary_options.parquet";
            let schema = writer_arrow_schema();
            let batch = writer_test_batch(&schema, vec![1, 1, 1], vec![10, 10, 10]);
            let mut writer = ParquetFormatWriter::new(
                &file_io.new_output(path).unwrap(),
                schema,
                "zstd",
                1,
                None,
                &options,
            )
            .await
            .unwrap();
            writer.write(&batch).await.unwrap();
            Box::new(writer).close().await.unwrap();
            let bytes = file_io.new_input(path).unwrap().read().await.unwrap();
            let reader = ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
            let columns = reader.metadata().row_group(0).columns();
            assert_eq!(columns[0].dictionary_page_offset().is_some(), global);
            assert_eq!(columns[1].dictionary_page_offset().is_some(), !global);
            let actual = reader.build().unwrap().next().unwrap().unwrap();
            assert_eq!(actual, batch);
        }
        let props =
            parquet_writer_properties(Compression::UNCOMPRESSED, true, &HashMap::new()).unwrap();
        assert!(props.dictionary_enabled(&ColumnPath::from("id")));
    }

    #[tokio::test]
    async fn test_parquet_writer_nested_dictionary_option() {
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

        let child = Arc::new(ArrowField::new("value", ArrowDataType::Int32, false));
        let fields: arrow_schema::Fields = vec![child].into();
        let schema = Arc::new(ArrowSchema::new(vec![ArrowField::new(
            "nested",
            ArrowDataType::Struct(fields.clone()),
            false,
        )]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(StructArray::new(
                fields,
                vec![Arc::new(Int32Array::from(vec![7, 7, 7]))],
                None,
            ))],
        )
        .unwrap();
        for enabled in [true, false] {
            let file_io = FileIOBuilder::new("memory").build().unwrap();
            let path = "memory:/nested_dictionary.parquet";
            let options = HashMap::from([(
                "parquet.enable.dictionary#nested.value".to_owned(),
                enabled.to_string(),
            )]);
            let mut writer = ParquetFormatWriter::new(
                &file_io.new_output(path).unwrap(),
                schema.clone(),
                "zstd",
                1,
                None,
                &options,
            )
            .await
            .unwrap();
            writer.write(&batch).await.unwrap();
            Box::new(writer).close().await.unwrap();
            let bytes = file_io.new_input(path).unwrap().read().await.unwrap();
            let reader = ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
            assert_eq!(
                reader
                    .metadata()
                    .row_group(0)
                    .column(0)
                    .dictionary_page_offset()
                    .is_some(),
                enabled
            );
            assert_eq!(reader.build().unwrap().next().unwrap().unwrap(), batch);
        }
    }

    #[tokio::test]
    async fn test_parquet_writer_invalid_dictionary_options_create_no_file() {
        for (key, value) in [
            ("parquet.enable.dictionary", "invalid"),
            ("parquet.enable.dictionary#value", "invalid"),
            ("parquet.enable.dictionary#", "false"),
            ("parquet.enable.dictionary#a..b", "false"),
        ] {
            let file_io = FileIOBuilder::new("memory").build().unwrap();
            let path = "memory:/invalid_dictionary.parquet";
            let options = HashMap::from([(key.to_owned(), value.to_owned())]);
            let result = ParquetFormatWriter::new(
                &file_io.new_output(path).unwrap(),
                writer_arrow_schema(),
                "zstd",
                1,
                None,
                &options,
            )
            .await;
            assert!(matches!(result, Err(crate::Error::ConfigInvalid { .. })));
            assert!(!file_io.exists(path).await.unwrap());
        }
    }

    #[tokio::test]
    async fn test_parquet_writer_write_and_close() {
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let path = "memory:/test_parquet_writer_write_close.parquet";
        let output = file_io.new_output(path).unwrap();
        let schema = writer_arrow_schema();

        let mut writer: Box<dyn FormatFileWriter> = Box::new(
            ParquetFormatWriter::new(&output, schema.clone(), "zstd", 1, None, &HashMap::new())
                .await
                .unwrap(),
        );

        let batch = writer_test_batch(&schema, vec![1, 2, 3], vec![10, 20, 30]);
        writer.write(&batch).await.unwrap();
        let _ = writer.close().await.unwrap();

        // Verify valid parquet by reading back
        let bytes = file_io.new_input(path).unwrap().read().await.unwrap();
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(bytes, 1024).unwrap();
        let total_rows: usize = reader.into_iter().map(|r| r.unwrap().num_rows()).sum();
        assert_eq!(total_rows, 3);
    }

    #[tokio::test]
    async fn test_parquet_writer_invalid_page_index_option_creates_no_file() {
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let path = "memory:/invalid_page_index_option.parquet";
        let output = file_io.new_output(path).unwrap();
        let options = HashMap::from([(
            "parquet.write-page-index.enabled".to_string(),
            "invalid".to_string(),
        )]);
        let result =
            ParquetFormatWriter::new(&output, writer_arrow_schema(), "zstd", 1, None, &options)
                .await;
        assert!(
            matches!(result, Err(crate::Error::ConfigInvalid { message })
            if message.contains("parquet.write-page-index.enabled"))
        );
        assert!(!file_io.exists(path).await.unwrap());
    }

    #[tokio::test]
    async fn test_parquet_writer_multiple_batches() {
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let path = "memory:/test_parquet_writer_multi.parquet";
        let output = file_io.new_output(path).unwrap();
        let schema = writer_arrow_schema();

        let mut writer: Box<dyn FormatFileWriter> = Box::new(
            ParquetFormatWriter::new(&output, schema.clone(), "zstd", 1, None, &HashMap::new())
                .await
                .unwrap(),
        );

        writer
            .write(&writer_test_batch(&schema, vec![1, 2], vec![10, 20]))
            .await
            .unwrap();
        writer
            .write(&writer_test_batch(&schema, vec![3, 4, 5], vec![30, 40, 50]))
            .await
            .unwrap();
        let _ = writer.close().await.unwrap();

        let bytes = file_io.new_input(path).unwrap().read().await.unwrap();
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(bytes, 1024).unwrap();
        let total_rows: usize = reader.into_iter().map(|r| r.unwrap().num_rows()).sum();
        assert_eq!(total_rows, 5);
    }

    fn timestamp_zero_fields() -> Vec<DataField> {
        vec![
            DataField::new(
                0,
                "ts".to_string(),
                DataType::Timestamp(TimestampType::new(0).unwrap()),
            ),
            DataField::new(
                1,
                "ts_ltz".to_string(),
                DataType::LocalZonedTimestamp(LocalZonedTimestampType::new(0).unwrap()),
            ),
        ]
    }

    async fn assert_timestamp_zero_filters(bytes: Bytes, fields: &[DataField]) {
        let cases = [
            (
                "ts",
                Datum::Timestamp {
                    millis: 2_000,
                    nanos: 0,
                },
            ),
            (
                "ts_ltz",
                Datum::LocalZonedTimestamp {
                    millis: 2_000,
                    nanos: 0,
                },
            ),
        ];
        for (column, literal) in cases {
            let predicate = PredicateBuilder::new(fields)
                .equal(column, literal)
                .unwrap();
            let predicates = FilePredicates {
                predicates: vec![predicate],
                row_filter_factory: None,
                file_fields: fields.to_vec(),
            };
            let batches = ParquetFormatReader::default()
                .read_batch_stream(
                    Box::new(TrackingFileRead::new(bytes.clone())),
                    bytes.len() as u64,
                    fields,
                    Some(&predicates),
                    None,
                    None,
                )
                .await
                .unwrap()
                .try_collect::<Vec<_>>()
                .await
                .unwrap();
            assert_eq!(
                batches.iter().map(RecordBatch::num_rows).sum::<usize>(),
                1,
                "filter on {column}"
            );
            let array = batches[0]
                .column_by_name(column)
                .unwrap()
                .as_any()
                .downcast_ref::<TimestampMillisecondArray>()
                .unwrap();
            assert_eq!(array.value(0), 2_000, "filter on {column}");
        }
    }

    #[tokio::test]
    async fn test_timestamp_zero_parquet_write_preserves_millis_encoding_and_filters() {
        let fields = timestamp_zero_fields();
        let schema = build_target_arrow_schema(&fields).unwrap();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(TimestampSecondArray::from(vec![-1, 2, 3])),
                Arc::new(TimestampSecondArray::from(vec![-1, 2, 3]).with_timezone("UTC")),
            ],
        )
        .unwrap();
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let path = "memory:/timestamp_zero_millis_encoding.parquet";
        let output = file_io.new_output(path).unwrap();
        let mut writer: Box<dyn FormatFileWriter> = Box::new(
            ParquetFormatWriter::new(&output, schema, "zstd", 1, Some(&fields), &HashMap::new())
                .await
                .unwrap(),
        );
        writer.write(&batch).await.unwrap();
        writer.close().await.unwrap();

        let bytes = file_io.new_input(path).unwrap().read().await.unwrap();
        let metadata = load_metadata_with_page_index(&bytes, false);
        for (index, adjusted_to_utc) in [(0, false), (1, true)] {
            let column = metadata.file_metadata().schema_descr().column(index);
            assert_eq!(column.physical_type(), parquet::basic::Type::INT64);
            assert_eq!(
                column.logical_type_ref(),
                Some(&parquet::basic::LogicalType::Timestamp {
                    is_adjusted_to_u_t_c: adjusted_to_utc,
                    unit: parquet::basic::TimeUnit::MILLIS,
                })
            );
            let ParquetStatistics::Int64(stats) =
                metadata.row_group(0).column(index).statistics().unwrap()
            else {
                panic!("timestamp column must have INT64 statistics");
            };
            assert_eq!(stats.min_opt(), Some(&-1_000));
            assert_eq!(stats.max_opt(), Some(&3_000));
        }
        assert_timestamp_zero_filters(bytes, &fields).await;
    }

    #[tokio::test]
    async fn test_existing_millis_timestamp_zero_parquet_filters() {
        let fields = timestamp_zero_fields();
        let schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new(
                "ts",
                ArrowDataType::Timestamp(arrow_schema::TimeUnit::Millisecond, None),
                true,
            ),
            ArrowField::new(
                "ts_ltz",
                ArrowDataType::Timestamp(arrow_schema::TimeUnit::Millisecond, Some("UTC".into())),
                true,
            ),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(TimestampMillisecondArray::from(vec![-1_000, 2_000, 3_000])),
                Arc::new(
                    TimestampMillisecondArray::from(vec![-1_000, 2_000, 3_000])
                        .with_timezone("UTC"),
                ),
            ],
        )
        .unwrap();
        let mut bytes = Vec::new();
        let mut writer = AsyncArrowWriter::try_new(&mut bytes, schema, None).unwrap();
        writer.write(&batch).await.unwrap();
        writer.close().await.unwrap();

        assert_timestamp_zero_filters(Bytes::from(bytes), &fields).await;
    }

    #[tokio::test]
    async fn test_parquet_inline_fixed_size_list_roundtrip() {
        use arrow_array::builder::{FixedSizeListBuilder, Float32Builder};
        use arrow_array::{Array, FixedSizeListArray, Float32Array};

        // Build a FixedSizeList<Float32, 2> column: row 0 = [1.0, 2.0], row 1 = null.
        let mut builder = FixedSizeListBuilder::new(Float32Builder::new(), 2).with_field(Arc::new(
            ArrowField::new("element", ArrowDataType::Float32, true),
        ));
        builder.values().append_value(1.0);
        builder.values().append_value(2.0);
        builder.append(true);
        builder.values().append_value(0.0);
        builder.values().append_value(0.0);
        builder.append(false); // null vector row
        let vec_array = builder.finish();

        let schema = Arc::new(ArrowSchema::new(vec![ArrowField::new(
            "embedding",
            ArrowDataType::FixedSizeList(
                Arc::new(ArrowField::new("element", ArrowDataType::Float32, true)),
                2,
            ),
            true,
        )]));
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(vec_array)]).unwrap();

        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let path = "memory:/test_parquet_inline_vector.parquet";
        let output = file_io.new_output(path).unwrap();
        let mut writer: Box<dyn FormatFileWriter> = Box::new(
            ParquetFormatWriter::new(&output, schema.clone(), "zstd", 1, None, &HashMap::new())
                .await
                .unwrap(),
        );
        writer.write(&batch).await.unwrap();
        let _ = writer.close().await.unwrap();

        let bytes = file_io.new_input(path).unwrap().read().await.unwrap();
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(bytes, 1024).unwrap();
        let batches: Vec<RecordBatch> = reader.into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 2);

        let col = batches[0].column(0);
        let fsl = col
            .as_any()
            .downcast_ref::<FixedSizeListArray>()
            .expect("column should be FixedSizeListArray");
        assert_eq!(fsl.value_length(), 2);
        assert!(fsl.is_valid(0));
        assert!(fsl.is_null(1)); // null vector row preserved

        let row0 = fsl.value(0);
        let floats = row0
            .as_any()
            .downcast_ref::<Float32Array>()
            .expect("child should be Float32Array");
        assert_eq!(floats.values(), &[1.0, 2.0]);
    }

    #[tokio::test]
    async fn test_parquet_variant_shredding_write_read_roundtrip() {
        let fields = vec![
            DataField::new(0, "id".to_string(), DataType::Int(IntType::new())),
            DataField::new(1, "v".to_string(), DataType::Variant(VariantType::new())),
        ];
        let options = HashMap::from([(
            "parquet.variant.shreddingSchema".to_string(),
            r#"{"type":"ROW","fields":[{"name":"v","type":{"type":"ROW","fields":[{"name":"age","type":"BIGINT"},{"name":"city","type":"STRING"}]}}]}"#.to_string(),
        )]);
        let variants = [
            GenericVariant::parse_json(r#"{"age":27,"city":"Beijing"}"#).unwrap(),
            GenericVariant::parse_json(r#"{"age":27}"#).unwrap(),
            GenericVariant::parse_json(r#"{"city":"Beijing","other":"xxx"}"#).unwrap(),
            GenericVariant::parse_json(r#"{"age":"27"}"#).unwrap(),
        ];
        let value_items = variants
            .iter()
            .map(|variant| Some(variant.value()))
            .collect::<Vec<_>>();
        let metadata_items = variants
            .iter()
            .map(|variant| Some(variant.metadata()))
            .collect::<Vec<_>>();
        let variant_fields = match variant_arrow_type() {
            arrow_schema::DataType::Struct(fields) => fields,
            _ => unreachable!("variant_arrow_type is a struct"),
        };
        let variant_column = StructArray::try_new(
            variant_fields,
            vec![
                Arc::new(BinaryArray::from(value_items)),
                Arc::new(BinaryArray::from(metadata_items)),
            ],
            None,
        )
        .unwrap();
        let logical_schema = build_target_arrow_schema(&fields).unwrap();
        let batch = RecordBatch::try_new(
            logical_schema.clone(),
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3, 4])),
                Arc::new(variant_column),
            ],
        )
        .unwrap();

        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let path = format!("memory:/variant_shredding_{}.parquet", uuid::Uuid::new_v4());
        let output = file_io.new_output(&path).unwrap();
        let mut writer = create_format_writer(
            &output,
            logical_schema,
            "zstd",
            1,
            None,
            Some(&fields),
            Some(&options),
        )
        .await
        .unwrap();
        writer.write(&batch).await.unwrap();
        let file_size = writer.close().await.unwrap().file_size;

        let raw_bytes = file_io.new_input(&path).unwrap().read().await.unwrap();
        let raw_batches =
            parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(raw_bytes, 1024)
                .unwrap()
                .collect::<std::result::Result<Vec<_>, _>>()
                .unwrap();
        let raw_variant_column = raw_batches[0].column_by_name("v").unwrap();
        let arrow_schema::DataType::Struct(raw_variant_fields) = raw_variant_column.data_type()
        else {
            panic!("expected physical variant column to be a struct");
        };
        assert!(raw_variant_fields
            .iter()
            .any(|field| field.name() == "typed_value"));

        let input = file_io.new_input(&path).unwrap();
        let file_reader = input.reader().await.unwrap();
        let reader = create_format_reader(&path, false, &fields).unwrap();
        let batches = reader
            .read_batch_stream(Box::new(file_reader), file_size, &fields, None, None, None)
            .await
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        assert_eq!(batches.len(), 1);
        let payload = batches[0]
            .column_by_name("v")
            .unwrap()
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap();
        let values = payload
            .column_by_name("value")
            .unwrap()
            .as_any()
            .downcast_ref::<BinaryArray>()
            .unwrap();
        let metadata = payload
            .column_by_name("metadata")
            .unwrap()
            .as_any()
            .downcast_ref::<BinaryArray>()
            .unwrap();
        for (idx, expected) in variants.iter().enumerate() {
            let actual = GenericVariant::from_parts(
                values.value(idx).to_vec(),
                metadata.value(idx).to_vec(),
            )
            .unwrap();
            assert_eq!(actual.to_json().unwrap(), expected.to_json().unwrap());
        }
    }

    #[tokio::test]
    async fn test_parquet_variant_infer_shredding_write_read_roundtrip() {
        let fields = vec![
            DataField::new(0, "id".to_string(), DataType::Int(IntType::new())),
            DataField::new(1, "v".to_string(), DataType::Variant(VariantType::new())),
        ];
        let options = HashMap::from([
            (
                "variant.inferShreddingSchema".to_string(),
                "true".to_string(),
            ),
            (
                "variant.shredding.maxInferBufferRow".to_string(),
                "2".to_string(),
            ),
        ]);
        let first_variants = vec![
            GenericVariant::parse_json(r#"{"age":27,"city":"Beijing"}"#).unwrap(),
            GenericVariant::parse_json(r#"{"age":28,"city":"Hangzhou"}"#).unwrap(),
        ];
        let late_variants =
            vec![GenericVariant::parse_json(r#"{"age":"old","city":"Shanghai"}"#).unwrap()];
        let logical_schema = build_target_arrow_schema(&fields).unwrap();
        let make_batch = |ids: Vec<i32>, variants: &[GenericVariant]| {
            let value_items = variants
                .iter()
                .map(|variant| Some(variant.value()))
                .collect::<Vec<_>>();
            let metadata_items = variants
                .iter()
                .map(|variant| Some(variant.metadata()))
                .collect::<Vec<_>>();
            let variant_fields = match variant_arrow_type() {
                arrow_schema::DataType::Struct(fields) => fields,
                _ => unreachable!("variant_arrow_type is a struct"),
            };
            let variant_column = StructArray::try_new(
                variant_fields,
                vec![
                    Arc::new(BinaryArray::from(value_items)),
                    Arc::new(BinaryArray::from(metadata_items)),
                ],
                None,
            )
            .unwrap();
            RecordBatch::try_new(
                logical_schema.clone(),
                vec![Arc::new(Int32Array::from(ids)), Arc::new(variant_column)],
            )
            .unwrap()
        };

        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let path = format!(
            "memory:/variant_infer_shredding_{}.parquet",
            uuid::Uuid::new_v4()
        );
        let output = file_io.new_output(&path).unwrap();
        let factory = super::super::create_format_writer_factory(
            "parquet",
            logical_schema.clone(),
            1,
            None,
            Some(&fields),
            Some(&options),
            None,
        )
        .unwrap();
        assert!(!factory.needs_completed_file_stats());
        let mut writer = factory.create_writer(&output, "zstd").await.unwrap();
        writer
            .write(&make_batch(vec![1, 2], &first_variants))
            .await
            .unwrap();
        writer
            .write(&make_batch(vec![3], &late_variants))
            .await
            .unwrap();
        let file_size = writer.close().await.unwrap().file_size;

        let raw_bytes = file_io.new_input(&path).unwrap().read().await.unwrap();
        let raw_batches =
            parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(raw_bytes, 1024)
                .unwrap()
                .collect::<std::result::Result<Vec<_>, _>>()
                .unwrap();
        let raw_variant_column = raw_batches[0].column_by_name("v").unwrap();
        let arrow_schema::DataType::Struct(raw_variant_fields) = raw_variant_column.data_type()
        else {
            panic!("expected physical variant column to be a struct");
        };
        assert!(raw_variant_fields
            .iter()
            .any(|field| field.name() == "typed_value"));

        let input = file_io.new_input(&path).unwrap();
        let file_reader = input.reader().await.unwrap();
        let reader = create_format_reader(&path, false, &fields).unwrap();
        let batches = reader
            .read_batch_stream(Box::new(file_reader), file_size, &fields, None, None, None)
            .await
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        assert_eq!(batches.len(), 1);
        let payload = batches[0]
            .column_by_name("v")
            .unwrap()
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap();
        let values = payload
            .column_by_name("value")
            .unwrap()
            .as_any()
            .downcast_ref::<BinaryArray>()
            .unwrap();
        let metadata = payload
            .column_by_name("metadata")
            .unwrap()
            .as_any()
            .downcast_ref::<BinaryArray>()
            .unwrap();
        let expected = first_variants
            .iter()
            .chain(late_variants.iter())
            .collect::<Vec<_>>();
        for (idx, expected) in expected.iter().enumerate() {
            let actual = GenericVariant::from_parts(
                values.value(idx).to_vec(),
                metadata.value(idx).to_vec(),
            )
            .unwrap();
            assert_eq!(actual.to_json().unwrap(), expected.to_json().unwrap());
        }

        // Reusing the factory must infer each file from that file's rows.
        // This short file also exercises finalizing inference from close().
        let second_path = format!("memory:/variant_second_{}.parquet", uuid::Uuid::new_v4());
        let output = file_io.new_output(&second_path).unwrap();
        let mut writer = factory.create_writer(&output, "zstd").await.unwrap();
        writer
            .write(&make_batch(
                vec![4],
                &[GenericVariant::parse_json(r#"{"fresh":42}"#).unwrap()],
            ))
            .await
            .unwrap();
        writer.close().await.unwrap();
        let bytes = file_io
            .new_input(&second_path)
            .unwrap()
            .read()
            .await
            .unwrap();
        let raw =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
        let arrow_schema::DataType::Struct(variant_fields) =
            raw.schema().field_with_name("v").unwrap().data_type()
        else {
            panic!("expected variant struct")
        };
        let typed = variant_fields
            .iter()
            .find(|field| field.name() == "typed_value")
            .unwrap();
        let arrow_schema::DataType::Struct(object_fields) = typed.data_type() else {
            panic!("expected object")
        };
        assert_eq!(
            object_fields
                .iter()
                .map(|field| field.name().as_str())
                .collect::<Vec<_>>(),
            ["fresh"]
        );
    }

    // -----------------------------------------------------------------------
    // Row-group statistics pruning
    // -----------------------------------------------------------------------

    async fn write_multi_row_group_parquet(
        row_group_rows: usize,
        total_rows: i32,
        statistics: EnabledStatistics,
        offset_index_disabled: bool,
    ) -> Vec<u8> {
        let schema = writer_arrow_schema();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(row_group_rows))
            .set_statistics_enabled(statistics)
            .set_offset_index_disabled(offset_index_disabled)
            .build();
        let mut buf = Vec::new();
        let mut writer = AsyncArrowWriter::try_new(&mut buf, schema.clone(), Some(props)).unwrap();
        let ids = (0..total_rows).collect::<Vec<_>>();
        let values = ids.iter().map(|value| value * 10).collect::<Vec<_>>();
        writer
            .write(&writer_test_batch(&schema, ids, values))
            .await
            .unwrap();
        writer.close().await.unwrap();
        buf
    }

    #[tokio::test]
    async fn test_row_group_selection_in_uses_min_max_without_page_index() {
        let bytes = write_multi_row_group_parquet(10, 20, EnabledStatistics::Chunk, false).await;
        let metadata = load_metadata_with_page_index(&bytes, false);
        assert_eq!(metadata.row_groups().len(), 2);
        assert!(metadata.column_index().is_none());
        assert!(metadata.offset_index().is_none());
        let fields = vec![int_field("id"), int_field("value")];

        let outside = vec![id_leaf(
            PredicateOperator::In,
            vec![Datum::Int(-1), Datum::Int(30)],
        )];
        let selection =
            super::build_predicate_row_selection(metadata.row_groups(), &outside, &fields)
                .unwrap()
                .expect("all row groups should be skipped");
        assert_eq!(selection.row_count(), 0);

        let overlapping = vec![id_leaf(
            PredicateOperator::In,
            vec![Datum::Int(5), Datum::Int(30)],
        )];
        let selection =
            super::build_predicate_row_selection(metadata.row_groups(), &overlapping, &fields)
                .unwrap()
                .expect("only the first row group should be kept");
        assert_eq!(selection.row_count(), 10);
    }

    #[tokio::test]
    async fn test_row_group_selection_in_fails_open_on_unusable_stats() {
        let fields = vec![int_field("id"), int_field("value")];
        let predicates = vec![id_leaf(PredicateOperator::In, vec![Datum::Int(100)])];

        let bytes = write_multi_row_group_parquet(10, 10, EnabledStatistics::None, false).await;
        let metadata = load_metadata_with_page_index(&bytes, false);
        let selection =
            super::build_predicate_row_selection(metadata.row_groups(), &predicates, &fields)
                .unwrap();
        assert!(selection.is_none(), "missing stats must fail open");

        let bytes = write_multi_row_group_parquet(10, 10, EnabledStatistics::Chunk, false).await;
        let metadata = load_metadata_with_page_index(&bytes, false);
        let mut damaged_row_group = metadata.row_groups()[0].clone();
        let damaged_id_column = damaged_row_group
            .column(0)
            .clone()
            .into_builder()
            .set_statistics(ParquetStatistics::new::<i32>(
                Some(20),
                Some(10),
                None,
                Some(0),
                false,
            ))
            .build()
            .unwrap();
        damaged_row_group.columns_mut()[0] = damaged_id_column;
        let selection =
            super::build_predicate_row_selection(&[damaged_row_group], &predicates, &fields)
                .unwrap();
        assert!(selection.is_none(), "inverted stats must fail open");

        let varchar_type = DataType::VarChar(VarCharType::new(20).unwrap());
        let varchar_fields = vec![DataField::new(0, "id".to_string(), varchar_type)];
        let varchar_predicates = vec![PredicateBuilder::new(&varchar_fields)
            .is_in("id", vec![Datum::String("100".to_string())])
            .unwrap()];
        let selection = super::build_predicate_row_selection(
            metadata.row_groups(),
            &varchar_predicates,
            &varchar_fields,
        )
        .unwrap();
        assert!(selection.is_none(), "incomparable stats must fail open");
    }

    // -----------------------------------------------------------------------
    // Page-index (ColumnIndex / OffsetIndex) pruning
    // -----------------------------------------------------------------------

    /// Write a single row group split into `total_rows / page_row_limit` data
    /// pages. `id` runs 0..total_rows so page `p` covers ids
    /// `[p*page_row_limit, (p+1)*page_row_limit)`.
    async fn write_multi_page_parquet(page_row_limit: usize, total_rows: i32) -> Vec<u8> {
        let schema = writer_arrow_schema();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_data_page_row_count_limit(page_row_limit)
            .set_write_batch_size(page_row_limit)
            .set_max_row_group_row_count(Some(total_rows as usize))
            .build();
        let mut buf: Vec<u8> = Vec::new();
        {
            let mut writer =
                AsyncArrowWriter::try_new(&mut buf, schema.clone(), Some(props)).unwrap();
            let ids: Vec<i32> = (0..total_rows).collect();
            let values: Vec<i32> = ids.iter().map(|v| v * 10).collect();
            writer
                .write(&writer_test_batch(&schema, ids, values))
                .await
                .unwrap();
            let _ = writer.close().await.unwrap();
        }
        buf
    }

    #[tokio::test]
    async fn test_parquet_granules_prefers_pages_and_falls_back_to_row_groups() {
        let bytes = Bytes::from(write_multi_page_parquet(10, 80).await);
        let (granules, page_level) = parquet_granules(
            Box::new(TrackingFileRead::new(bytes.clone())),
            bytes.len() as u64,
            "value",
            true,
        )
        .await
        .unwrap();
        assert!(page_level);
        assert!(granules.len() > 1);
        assert_eq!(
            granules
                .iter()
                .map(|granule| granule.row_count)
                .sum::<i64>(),
            80
        );
        assert!(granules
            .iter()
            .all(|granule| !granule.byte_ranges.is_empty()));

        let bytes = Bytes::from(
            write_multi_row_group_parquet(10, 30, EnabledStatistics::Chunk, true).await,
        );
        let (granules, page_level) = parquet_granules(
            Box::new(TrackingFileRead::new(bytes.clone())),
            bytes.len() as u64,
            "value",
            true,
        )
        .await
        .unwrap();
        assert!(!page_level);
        assert_eq!(granules.len(), 3);
        assert_eq!(
            granules
                .iter()
                .map(|granule| granule.row_count)
                .sum::<i64>(),
            30
        );
    }

    #[tokio::test]
    async fn test_parquet_granules_uses_row_groups_when_page_index_disabled() {
        let bytes = Bytes::from(write_multi_page_parquet(10, 80).await);
        let metadata = load_metadata_with_page_index(&bytes, true);
        assert!(metadata.offset_index().is_some());
        let (granules, page_level) = parquet_granules(
            Box::new(TrackingFileRead::new(bytes.clone())),
            bytes.len() as u64,
            "value",
            false,
        )
        .await
        .unwrap();

        assert!(!page_level);
        assert_eq!(granules.len(), 1);
        assert_eq!(granules[0].first_row, 0);
        assert_eq!(granules[0].row_count, 80);
        // Charge the complete projected column chunk, not individual selected pages.
        let (start, length) = metadata.row_group(0).column(1).byte_range();
        assert_eq!(
            granules[0].byte_ranges,
            std::iter::once(start..start + length).collect::<Vec<_>>()
        );
    }

    async fn write_page_pruning_io_parquet() -> Vec<u8> {
        const ROWS: i32 = 1024;
        let schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, false),
            ArrowField::new("payload", ArrowDataType::Utf8, false),
        ]));
        let payloads = (0..ROWS)
            .map(|row| format!("{row:04}-{}", "x".repeat(4096)))
            .collect::<Vec<_>>();
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(Int32Array::from_iter_values(0..ROWS)),
                Arc::new(StringArray::from(payloads)),
            ],
        )
        .unwrap();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_compression(Compression::UNCOMPRESSED)
            .set_dictionary_enabled(false)
            .set_data_page_row_count_limit(64)
            .set_write_batch_size(64)
            .set_max_row_group_row_count(Some(ROWS as usize))
            .build();
        let mut buf = Vec::new();
        let mut writer = AsyncArrowWriter::try_new(&mut buf, schema, Some(props)).unwrap();
        writer.write(&batch).await.unwrap();
        writer.close().await.unwrap();
        buf
    }

    async fn read_page_pruning_io(data: Bytes, page_index_enabled: bool) -> (Vec<String>, u64) {
        let file_size = data.len() as u64;
        let file_read = TrackingFileRead::new(data);
        let tracker = file_read.clone();
        let fields = vec![
            int_field("id"),
            DataField::new(
                1,
                "payload".to_string(),
                DataType::VarChar(VarCharType::string_type()),
            ),
        ];
        let predicates = FilePredicates {
            predicates: vec![id_leaf(PredicateOperator::Eq, vec![Datum::Int(1)])],
            row_filter_factory: None,
            file_fields: fields.clone(),
        };
        let stream = ParquetFormatReader::default()
            .with_page_index_enabled(page_index_enabled)
            .read_batch_stream(
                Box::new(file_read),
                file_size,
                &fields[1..],
                Some(&predicates),
                Some(64),
                None,
            )
            .await
            .unwrap();
        tracker.reset();
        let batches = stream.try_collect::<Vec<_>>().await.unwrap();
        let payloads = batches
            .iter()
            .flat_map(|batch| {
                let values = batch
                    .column_by_name("payload")
                    .unwrap()
                    .as_any()
                    .downcast_ref::<StringArray>()
                    .unwrap();
                (0..values.len())
                    .map(|index| values.value(index).to_string())
                    .collect::<Vec<_>>()
            })
            .collect();
        (payloads, tracker.bytes_read())
    }

    #[tokio::test]
    async fn test_predicate_page_pruning_option_controls_io_not_results() {
        let data = Bytes::from(write_page_pruning_io_parquet().await);
        let (enabled_rows, enabled_bytes) = read_page_pruning_io(data.clone(), true).await;
        let (disabled_rows, disabled_bytes) = read_page_pruning_io(data, false).await;

        assert_eq!(enabled_rows, disabled_rows);
        assert_eq!(enabled_rows.len(), 1);
        assert!(
            enabled_bytes * 2 < disabled_bytes,
            "page-index read used {enabled_bytes} bytes; disabled read used {disabled_bytes} bytes"
        );
    }

    #[derive(Clone)]
    struct TrackingFileRead {
        data: Bytes,
        ranges: Arc<std::sync::Mutex<Vec<std::ops::Range<u64>>>>,
        resident_bytes: Arc<AtomicUsize>,
        peak_resident_bytes: Arc<AtomicUsize>,
        cache_key: Option<Arc<str>>,
        metadata_cache: Option<Arc<crate::io::FileFormatMetadataCacheContext>>,
    }

    struct TrackedReadBuffer {
        data: Box<[u8]>,
        resident_bytes: Arc<AtomicUsize>,
    }

    impl AsRef<[u8]> for TrackedReadBuffer {
        fn as_ref(&self) -> &[u8] {
            &self.data
        }
    }

    impl Drop for TrackedReadBuffer {
        fn drop(&mut self) {
            self.resident_bytes
                .fetch_sub(self.data.len(), AtomicOrdering::SeqCst);
        }
    }

    impl TrackingFileRead {
        fn new(data: Bytes) -> Self {
            Self {
                data,
                ranges: Arc::new(std::sync::Mutex::new(Vec::new())),
                resident_bytes: Arc::new(AtomicUsize::new(0)),
                peak_resident_bytes: Arc::new(AtomicUsize::new(0)),
                cache_key: None,
                metadata_cache: None,
            }
        }

        fn with_cache_key(mut self, cache_key: &str) -> Self {
            self.cache_key = Some(Arc::from(cache_key));
            if self.metadata_cache.is_none() {
                self.metadata_cache = Some(
                    crate::io::FileFormatMetadataCacheContext::from_props(&HashMap::new()).unwrap(),
                );
            }
            self
        }

        fn with_metadata_cache_max_bytes(mut self, max_bytes: usize) -> Self {
            self.metadata_cache = Some(
                crate::io::FileFormatMetadataCacheContext::from_props(&HashMap::from([(
                    crate::common::CatalogOptions::FILE_FORMAT_METADATA_CACHE_MAX_SIZE.to_string(),
                    max_bytes.to_string(),
                )]))
                .unwrap(),
            );
            self
        }

        fn with_metadata_cache(
            mut self,
            cache: Arc<crate::io::FileFormatMetadataCacheContext>,
        ) -> Self {
            self.metadata_cache = Some(cache);
            self
        }

        fn read_count(&self) -> usize {
            self.ranges.lock().unwrap().len()
        }

        fn bytes_read(&self) -> u64 {
            self.ranges
                .lock()
                .unwrap()
                .iter()
                .map(|range| range.end - range.start)
                .sum()
        }

        fn reset(&self) {
            self.ranges.lock().unwrap().clear();
        }
    }

    #[async_trait::async_trait]
    impl crate::io::FileRead for TrackingFileRead {
        async fn read(&self, range: std::ops::Range<u64>) -> crate::Result<Bytes> {
            self.ranges.lock().unwrap().push(range.clone());
            // Count each source allocation until its last slice is dropped, not slice lengths.
            let data = self.data[range.start as usize..range.end as usize]
                .to_vec()
                .into_boxed_slice();
            let current = self
                .resident_bytes
                .fetch_add(data.len(), AtomicOrdering::SeqCst)
                + data.len();
            self.peak_resident_bytes
                .fetch_max(current, AtomicOrdering::SeqCst);
            Ok(Bytes::from_owner(TrackedReadBuffer {
                data,
                resident_bytes: Arc::clone(&self.resident_bytes),
            }))
        }

        fn cache_key(&self) -> Option<&str> {
            self.cache_key.as_deref()
        }

        fn file_format_metadata_cache(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
            self.metadata_cache
                .as_ref()
                .map(|cache| cache.as_ref() as &(dyn std::any::Any + Send + Sync))
        }
    }

    #[tokio::test]
    async fn parquet_metadata_cache_reuses_metadata_across_readers() {
        let data = Bytes::from(
            write_multi_row_group_parquet(8, 64, EnabledStatistics::Chunk, false).await,
        );
        let tracker = TrackingFileRead::new(data.clone()).with_cache_key("storage-a\0data.parquet");

        for _ in 0..10 {
            let mut reader =
                super::ArrowFileReader::new(data.len() as u64, Arc::new(tracker.clone()));
            reader.get_metadata(None).await.unwrap();
        }

        assert_eq!(tracker.read_count(), 1);
    }

    #[cfg(feature = "storage-fs")]
    #[tokio::test]
    async fn parquet_metadata_cache_reuses_metadata_across_file_io_instances() {
        let data = Bytes::from(
            write_multi_row_group_parquet(8, 64, EnabledStatistics::Chunk, false).await,
        );
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("data.parquet");
        std::fs::write(&path, &data).unwrap();
        let path = path.to_string_lossy().into_owned();
        let context =
            crate::io::FileFormatMetadataCacheContext::from_props(&HashMap::new()).unwrap();
        let first = crate::io::FileIO::from_path(&path)
            .unwrap()
            .with_file_format_metadata_cache(context.clone())
            .build()
            .unwrap();
        let second = crate::io::FileIO::from_path(&path)
            .unwrap()
            .with_file_format_metadata_cache(context)
            .build()
            .unwrap();

        let mut first_reader = super::ArrowFileReader::new(
            data.len() as u64,
            Arc::new(first.new_input(&path).unwrap().reader().await.unwrap()),
        );
        let first_metadata = first_reader.get_metadata(None).await.unwrap();
        let mut second_reader = super::ArrowFileReader::new(
            data.len() as u64,
            Arc::new(second.new_input(&path).unwrap().reader().await.unwrap()),
        );
        let second_metadata = second_reader.get_metadata(None).await.unwrap();

        assert!(Arc::ptr_eq(&first_metadata, &second_metadata));
    }

    #[tokio::test]
    async fn parquet_metadata_cache_can_be_bypassed() {
        let data = Bytes::from(
            write_multi_row_group_parquet(8, 64, EnabledStatistics::Chunk, false).await,
        );
        let tracker = TrackingFileRead::new(data.clone()).with_cache_key("storage-a\0data.parquet");
        let unidentified = TrackingFileRead::new(data.clone());

        for _ in 0..2 {
            let mut reader =
                super::ArrowFileReader::new(data.len() as u64, Arc::new(tracker.clone()))
                    .with_metadata_cache_enabled(false);
            reader.get_metadata(None).await.unwrap();
            let mut reader =
                super::ArrowFileReader::new(data.len() as u64, Arc::new(unidentified.clone()));
            reader.get_metadata(None).await.unwrap();
        }

        assert_eq!(tracker.read_count(), 2);
        assert_eq!(unidentified.read_count(), 2);
    }

    #[tokio::test]
    async fn format_table_parquet_metadata_bypasses_cache() {
        let data = Bytes::from(
            write_multi_row_group_parquet(8, 64, EnabledStatistics::Chunk, false).await,
        );
        let tracker = TrackingFileRead::new(data.clone()).with_cache_key("format-table.parquet");
        let reader = super::ParquetFormatReader::with_options(
            &HashMap::from([("type".to_string(), "format-table".to_string())]),
            None,
        )
        .unwrap();

        for _ in 0..2 {
            let mut file_reader =
                super::ArrowFileReader::new(data.len() as u64, Arc::new(tracker.clone()));
            file_reader.metadata_cache_enabled = reader.metadata_cache_enabled;
            file_reader.get_metadata(None).await.unwrap();
        }

        assert_eq!(tracker.read_count(), 2);
    }

    #[tokio::test]
    async fn parquet_row_count_bypasses_metadata_cache() {
        let data = Bytes::from(
            write_multi_row_group_parquet(8, 64, EnabledStatistics::Chunk, false).await,
        );
        let tracker = TrackingFileRead::new(data.clone()).with_cache_key("row-count.parquet");

        for _ in 0..2 {
            super::read_row_count(Box::new(tracker.clone()), data.len() as u64)
                .await
                .unwrap();
        }

        assert_eq!(tracker.read_count(), 2);
    }

    #[tokio::test]
    async fn parquet_metadata_cache_zero_does_not_affect_other_contexts() {
        let data = Bytes::from(
            write_multi_row_group_parquet(8, 64, EnabledStatistics::Chunk, false).await,
        );
        let tracker = TrackingFileRead::new(data.clone()).with_cache_key("storage-a\0data.parquet");

        let mut reader = super::ArrowFileReader::new(data.len() as u64, Arc::new(tracker.clone()));
        reader.get_metadata(None).await.unwrap();

        let disabled = tracker.clone().with_metadata_cache_max_bytes(0);
        let mut reader = super::ArrowFileReader::new(data.len() as u64, Arc::new(disabled));
        reader.get_metadata(None).await.unwrap();

        let mut reader = super::ArrowFileReader::new(data.len() as u64, Arc::new(tracker.clone()));
        reader.get_metadata(None).await.unwrap();

        assert_eq!(tracker.read_count(), 2);
    }

    #[tokio::test]
    async fn parquet_metadata_cache_coalesces_concurrent_loads() {
        let data = Bytes::from(
            write_multi_row_group_parquet(8, 64, EnabledStatistics::Chunk, false).await,
        );
        let tracker = TrackingFileRead::new(data.clone()).with_cache_key("storage-a\0data.parquet");
        let loads = (0..10).map(|_| {
            let tracker = tracker.clone();
            let data = data.clone();
            async move {
                let mut reader = super::ArrowFileReader::new(data.len() as u64, Arc::new(tracker));
                reader.get_metadata(None).await
            }
        });

        futures::future::try_join_all(loads).await.unwrap();

        assert_eq!(tracker.read_count(), 1);
    }

    #[tokio::test]
    async fn parquet_metadata_cache_separates_storage_and_page_index_policy() {
        let data = Bytes::from(
            write_multi_row_group_parquet(8, 64, EnabledStatistics::Chunk, false).await,
        );
        let cache = crate::io::FileFormatMetadataCacheContext::from_props(&HashMap::new()).unwrap();
        let first = TrackingFileRead::new(data.clone())
            .with_cache_key("storage-a\0data.parquet")
            .with_metadata_cache(cache.clone());
        let second = TrackingFileRead::new(data.clone())
            .with_cache_key("storage-b\0data.parquet")
            .with_metadata_cache(cache);

        let mut reader = super::ArrowFileReader::new(data.len() as u64, Arc::new(first.clone()));
        reader.get_metadata(None).await.unwrap();
        let options =
            super::ArrowReaderOptions::new().with_offset_index_policy(PageIndexPolicy::Optional);
        let mut reader = super::ArrowFileReader::new(data.len() as u64, Arc::new(first.clone()));
        reader.get_metadata(Some(&options)).await.unwrap();
        let mut reader = super::ArrowFileReader::new(data.len() as u64, Arc::new(second.clone()));
        reader.get_metadata(None).await.unwrap();

        assert_eq!(first.read_count(), 2);
        assert_eq!(second.read_count(), 1);
    }

    #[tokio::test]
    async fn resource_admission_precedes_data_reads_on_all_parquet_paths() {
        use crate::resource::ResourceContext;
        for (group_rows, parallelism, filtered) in [
            (16, 4, false),
            (64, 4, false),
            (16, 1, false),
            (16, 4, true),
        ] {
            let data = Bytes::from(
                write_multi_row_group_parquet(group_rows, 64, EnabledStatistics::None, true).await,
            );
            let tracker = TrackingFileRead::new(data.clone());
            let resources = ResourceContext::builder().memory_limit(0).build().unwrap();
            let budget = Arc::new(
                ReadBudget::new(parallelism, 1024 * 1024)
                    .unwrap()
                    .with_resources(resources.clone()),
            );
            let fields = vec![int_field("id"), int_field("value")];
            let predicates = filtered.then(|| FilePredicates {
                predicates: vec![PredicateBuilder::new(&fields)
                    .greater_than("value", Datum::Int(10))
                    .unwrap()],
                row_filter_factory: None,
                file_fields: fields.clone(),
            });
            let mut stream = ParquetFormatReader::with_read_budget(budget)
                .read_batch_stream(
                    Box::new(tracker.clone()),
                    data.len() as u64,
                    &fields[..1],
                    predicates.as_ref(),
                    Some(16),
                    None,
                )
                .await
                .unwrap();
            tracker.reset();
            assert!(matches!(
                stream.next().await.unwrap(),
                Err(Error::ResourceExhausted { .. })
            ));
            assert!(stream.next().await.is_none());
            assert_eq!(
                tracker.bytes_read(),
                0,
                "rejected work must not start data I/O"
            );
            assert_eq!(resources.metrics().reserved_memory_bytes, 0);
        }
    }

    #[tokio::test]
    async fn shared_memory_pressure_reduces_prefetch_without_failing_the_read() {
        use crate::resource::ResourceContext;
        let data = Bytes::from(
            write_multi_row_group_parquet(64, 256, EnabledStatistics::Chunk, false).await,
        );
        let metadata = load_metadata_with_page_index(&data, true);
        let mask = super::ProjectionMask::roots(metadata.file_metadata().schema_descr(), [0]);
        let limit = metadata
            .row_groups()
            .iter()
            .map(|rg| super::projected_row_group_bytes(rg, &mask))
            .max()
            .unwrap() as usize;
        // Only one row group fits; the consumer owns its output batches.
        let resources = ResourceContext::builder()
            .memory_limit(limit)
            .build()
            .unwrap();
        let budget = Arc::new(
            ReadBudget::new(8, 256 * 1024 * 1024)
                .unwrap()
                .with_resources(resources.clone()),
        );
        budget.enable_diagnostics();
        let mut stream = ParquetFormatReader::with_read_budget(budget.clone())
            .read_batch_stream(
                Box::new(TrackingFileRead::new(data.clone())),
                data.len() as u64,
                &[int_field("id")],
                None,
                Some(16),
                None,
            )
            .await
            .unwrap();
        let mut ids = Vec::new();
        while let Some(batch) = tokio::time::timeout(Duration::from_secs(2), stream.try_next())
            .await
            .unwrap()
            .unwrap()
        {
            ids.extend_from_slice(
                batch
                    .column(0)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .values(),
            );
        }
        assert_eq!(ids, (0..256).collect::<Vec<_>>());
        assert_eq!(resources.metrics().reserved_memory_bytes, 0);
        assert!(resources.metrics().peak_reserved_memory_bytes <= limit);
        assert_eq!(budget.diagnostics().peak_inflight, 1);
    }

    #[tokio::test]
    async fn cancelling_shared_budget_prefetch_releases_memory_with_escaped_output() {
        use crate::resource::ResourceContext;
        let data = Bytes::from(
            write_multi_row_group_parquet(64, 256, EnabledStatistics::Chunk, false).await,
        );
        let resources = ResourceContext::builder()
            .memory_limit(1024 * 1024)
            .build()
            .unwrap();
        let budget = Arc::new(
            ReadBudget::new(4, 256 * 1024 * 1024)
                .unwrap()
                .with_resources(resources.clone()),
        );
        budget.enable_diagnostics();
        let mut stream = ParquetFormatReader::with_read_budget(budget.clone())
            .read_batch_stream(
                Box::new(TrackingFileRead::new(data.clone())),
                data.len() as u64,
                &[int_field("id")],
                None,
                Some(16),
                None,
            )
            .await
            .unwrap();
        let batch = stream.try_next().await.unwrap().unwrap();
        let escaped = batch.column(0).slice(0, 1);
        drop(batch);
        drop(stream);
        tokio::time::timeout(Duration::from_secs(2), async {
            while budget.diagnostics().current_inflight != 0 {
                tokio::task::yield_now().await;
            }
        })
        .await
        .unwrap();
        assert_eq!(resources.metrics().reserved_memory_bytes, 0);
        assert_eq!(
            escaped
                .as_any()
                .downcast_ref::<Int32Array>()
                .unwrap()
                .value(0),
            0
        );
        drop(escaped);
        assert_eq!(resources.metrics().reserved_memory_bytes, 0);
    }

    #[tokio::test]
    async fn filtered_resource_reads_reserve_predicate_columns_and_preserve_row_selection() {
        use crate::resource::ResourceContext;
        let data =
            Bytes::from(write_multi_row_group_parquet(16, 64, EnabledStatistics::None, true).await);
        let metadata = load_metadata_with_page_index(&data, false);
        let mask = super::ProjectionMask::roots(metadata.file_metadata().schema_descr(), [0]);
        let id_only = super::projected_row_group_bytes(&metadata.row_groups()[0], &mask) as usize;
        let fields = vec![int_field("id"), int_field("value")];
        let predicates = FilePredicates {
            predicates: vec![PredicateBuilder::new(&fields)
                .greater_or_equal("value", Datum::Int(250))
                .unwrap()],
            row_filter_factory: None,
            file_fields: fields.clone(),
        };
        for limit in [id_only, 1024 * 1024] {
            let resources = ResourceContext::builder()
                .memory_limit(limit)
                .build()
                .unwrap();
            let budget = Arc::new(
                ReadBudget::new(4, 1024 * 1024)
                    .unwrap()
                    .with_resources(resources.clone()),
            );
            let mut stream = ParquetFormatReader::with_read_budget(budget)
                .read_batch_stream(
                    Box::new(TrackingFileRead::new(data.clone())),
                    data.len() as u64,
                    &fields[..1],
                    Some(&predicates),
                    Some(8),
                    Some(vec![RowRange::new(10, 54)]),
                )
                .await
                .unwrap();
            if limit == id_only {
                assert!(matches!(
                    stream.next().await.unwrap(),
                    Err(Error::ResourceExhausted { .. })
                ));
                assert!(stream.next().await.is_none());
            } else {
                let mut ids = Vec::new();
                while let Some(batch) = stream.try_next().await.unwrap() {
                    ids.extend_from_slice(
                        batch
                            .column(0)
                            .as_any()
                            .downcast_ref::<Int32Array>()
                            .unwrap()
                            .values(),
                    );
                }
                assert_eq!(ids, (25..=54).collect::<Vec<_>>());
            }
            assert_eq!(resources.metrics().reserved_memory_bytes, 0);
        }
    }

    #[tokio::test]
    async fn test_sparse_read_buffer_owners_and_cancellation() {
        use crate::io::FileRead;
        use rand::{RngCore, SeedableRng};

        const MIB: usize = 1024 * 1024;
        const GROUP_ROWS: usize = 2 * MIB;
        const PAGE_ROWS: usize = 64 * 1024;
        const BUDGET: usize = 20 * MIB;

        let schema = Arc::new(ArrowSchema::new(vec![ArrowField::new(
            "id",
            ArrowDataType::Int32,
            false,
        )]));
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(GROUP_ROWS))
            .set_data_page_size_limit(usize::MAX)
            .set_data_page_row_count_limit(PAGE_ROWS)
            .set_write_batch_size(PAGE_ROWS)
            .set_dictionary_enabled(false)
            .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
            .build();
        let mut data = Vec::new();
        let mut writer =
            AsyncArrowWriter::try_new(&mut data, Arc::clone(&schema), Some(props)).unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(42);
        for _ in 0..4 {
            let values = Int32Array::from_iter_values((0..GROUP_ROWS).map(|row| {
                if (row / PAGE_ROWS).is_multiple_of(2) {
                    0
                } else {
                    rng.next_u32() as i32
                }
            }));
            writer
                .write(&RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(values)]).unwrap())
                .await
                .unwrap();
        }
        writer.close().await.unwrap();
        let metadata = load_metadata_with_page_index(&data, true);
        assert_eq!(metadata.num_row_groups(), 4);
        let pages = metadata.offset_index().unwrap()[0][0].page_locations();
        assert!(
            pages[1].compressed_page_size > pages[0].compressed_page_size * 100,
            "adjacent equal-row-count pages must have very different compression ratios"
        );
        let projection = super::ProjectionMask::all();
        let projected = super::projected_row_group_bytes(&metadata.row_groups()[0], &projection);
        assert!(projected > 8 * MIB as u64 && projected < 9 * MIB as u64);

        let data = Bytes::from(data);
        let tracker = TrackingFileRead::new(data.clone());
        let buffer = tracker.read(0..1024).await.unwrap();
        let slice = buffer.slice(0..1);
        drop(buffer);
        assert_eq!(tracker.resident_bytes.load(AtomicOrdering::SeqCst), 1024);
        drop(slice);
        assert_eq!(tracker.resident_bytes.load(AtomicOrdering::SeqCst), 0);

        let ranges = (0..4)
            .flat_map(|group| {
                (1..GROUP_ROWS / PAGE_ROWS).step_by(2).map(move |page| {
                    let start = (group * GROUP_ROWS + page * PAGE_ROWS) as i64;
                    RowRange::new(start, start + 255)
                })
            })
            .collect::<Vec<_>>();
        for cancel in [false, true] {
            let tracker = TrackingFileRead::new(data.clone());
            let budget = Arc::new(ReadBudget::new(8, BUDGET as u64).unwrap());
            budget.enable_diagnostics();
            let mut stream = ParquetFormatReader::with_read_budget(Arc::clone(&budget))
                .read_batch_stream(
                    Box::new(tracker.clone()),
                    data.len() as u64,
                    &[int_field("id")],
                    None,
                    Some(128),
                    Some(ranges.clone()),
                )
                .await
                .unwrap();
            let mut rows = stream.try_next().await.unwrap().unwrap().num_rows();
            if !cancel {
                while let Some(batch) = stream.try_next().await.unwrap() {
                    rows += batch.num_rows();
                }
                assert_eq!(rows as i64, ranges.iter().map(RowRange::count).sum::<i64>());
            }
            drop(stream);
            tokio::time::timeout(Duration::from_secs(2), async {
                while budget.diagnostics().current_inflight != 0
                    || tracker.resident_bytes.load(AtomicOrdering::SeqCst) != 0
                {
                    tokio::task::yield_now().await;
                }
            })
            .await
            .expect("all buffer owners and row-group permits must be released");
            let peak = tracker.peak_resident_bytes.load(AtomicOrdering::SeqCst);
            assert!(
                peak > MIB && peak <= BUDGET,
                "resident source buffers: {peak}"
            );
            assert_eq!(budget.diagnostics().peak_inflight, 2);
            let _permit =
                tokio::time::timeout(Duration::from_secs(1), budget.acquire(BUDGET as u64))
                    .await
                    .unwrap()
                    .unwrap();
        }
    }

    async fn write_nested_multi_page_parquet() -> Vec<u8> {
        use arrow_array::builder::{Int32Builder, ListBuilder};

        const ROWS: usize = 1024;
        const VALUES_PER_ROW: usize = 1024;

        let element = Arc::new(ArrowField::new("element", ArrowDataType::Int32, false));
        let mut values = ListBuilder::new(Int32Builder::new()).with_field(element.clone());
        for row in 0..ROWS {
            for value in 0..VALUES_PER_ROW {
                values
                    .values()
                    .append_value((row * VALUES_PER_ROW + value) as i32);
            }
            values.append(true);
        }

        let schema = Arc::new(ArrowSchema::new(vec![ArrowField::new(
            "items",
            ArrowDataType::List(element),
            false,
        )]));
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(values.finish())]).unwrap();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_data_page_row_count_limit(128)
            .set_write_batch_size(128)
            .set_max_row_group_row_count(Some(ROWS))
            .set_dictionary_enabled(false)
            .build();

        let mut buf = Vec::new();
        let mut writer = AsyncArrowWriter::try_new(&mut buf, schema, Some(props)).unwrap();
        writer.write(&batch).await.unwrap();
        writer.close().await.unwrap();
        buf
    }

    async fn read_nested_rows(
        data: Bytes,
        row_selection: Option<Vec<RowRange>>,
        page_index_enabled: Option<bool>,
    ) -> (usize, u64) {
        let file_size = data.len() as u64;
        let file_read = TrackingFileRead::new(data);
        let tracker = file_read.clone();
        let fields = vec![DataField::new(
            0,
            "items".to_string(),
            DataType::Array(ArrayType::new(DataType::Int(IntType::new()))),
        )];
        let reader = match page_index_enabled {
            Some(enabled) => ParquetFormatReader::default().with_page_index_enabled(enabled),
            None => ParquetFormatReader::default(),
        };
        let stream = reader
            .read_batch_stream(
                Box::new(file_read),
                file_size,
                &fields,
                None,
                Some(128),
                row_selection,
            )
            .await
            .unwrap();
        tracker.reset();
        let rows = stream
            .try_fold(
                0usize,
                |rows, batch| async move { Ok(rows + batch.num_rows()) },
            )
            .await
            .unwrap();
        (rows, tracker.bytes_read())
    }

    #[tokio::test]
    async fn test_row_selection_prunes_nested_page_io() {
        let data = Bytes::from(write_nested_multi_page_parquet().await);
        let (all_rows, all_bytes) = read_nested_rows(data.clone(), None, None).await;
        let selection = Some(vec![RowRange::new(0, 0)]);
        let (default_rows, default_bytes) =
            read_nested_rows(data.clone(), selection.clone(), None).await;
        let (enabled_rows, enabled_bytes) =
            read_nested_rows(data.clone(), selection.clone(), Some(true)).await;
        let (disabled_rows, disabled_bytes) = read_nested_rows(data, selection, Some(false)).await;

        assert_eq!(all_rows, 1024);
        assert_eq!(default_rows, 1);
        assert_eq!(enabled_rows, 1);
        assert_eq!(disabled_rows, 1);
        assert_eq!(default_bytes, enabled_bytes);
        assert!(
            enabled_bytes * 2 < disabled_bytes,
            "page-index read used {enabled_bytes} bytes; disabled read used {disabled_bytes} bytes"
        );
        assert!(
            enabled_bytes * 2 < all_bytes,
            "selected read used {enabled_bytes} bytes; full read used {all_bytes} bytes"
        );
    }

    /// Parse metadata from in-memory parquet bytes, optionally loading the page
    /// index — mirrors what the reader does via `with_page_index_policy`.
    fn load_metadata_with_page_index(
        bytes: &[u8],
        page_index: bool,
    ) -> Arc<parquet::file::metadata::ParquetMetaData> {
        let mut reader = ParquetMetaDataReader::new();
        if page_index {
            reader = reader
                .with_column_index_policy(PageIndexPolicy::Optional)
                .with_offset_index_policy(PageIndexPolicy::Optional);
        }
        let owned: bytes::Bytes = bytes.to_vec().into();
        Arc::new(reader.parse_and_finish(&owned).unwrap())
    }

    fn int_field(name: &str) -> DataField {
        DataField::new(0, name.to_string(), DataType::Int(IntType::new()))
    }

    fn id_leaf(op: PredicateOperator, literals: Vec<Datum>) -> Predicate {
        Predicate::Leaf {
            column: "id".to_string(),
            index: 0,
            data_type: DataType::Int(IntType::new()),
            op,
            literals,
        }
    }

    #[tokio::test]
    async fn test_page_selection_eq_keeps_only_matching_page() {
        // 80 rows / 10 per page = 8 pages; page p covers ids [p*10, p*10+10).
        let bytes = write_multi_page_parquet(10, 80).await;
        let metadata = load_metadata_with_page_index(&bytes, true);
        let fields = vec![int_field("id"), int_field("value")];

        // Eq(35) falls only in page 3 ([30, 40)).
        let predicates = vec![id_leaf(PredicateOperator::Eq, vec![Datum::Int(35)])];
        let sel = super::build_predicate_page_selection(&metadata, &predicates, &fields)
            .unwrap()
            .expect("a page should be skipped");
        assert_eq!(sel.row_count(), 10);
    }

    #[tokio::test]
    async fn test_page_selection_eq_outside_all_pages_skips_everything() {
        let bytes = write_multi_page_parquet(10, 80).await;
        let metadata = load_metadata_with_page_index(&bytes, true);
        let fields = vec![int_field("id"), int_field("value")];

        // 1000 is past every page's max (79).
        let predicates = vec![id_leaf(PredicateOperator::Eq, vec![Datum::Int(1000)])];
        let sel = super::build_predicate_page_selection(&metadata, &predicates, &fields)
            .unwrap()
            .expect("all pages should be skipped");
        assert_eq!(sel.row_count(), 0);
    }

    #[tokio::test]
    async fn test_page_selection_in_keeps_only_matching_page() {
        let bytes = write_multi_page_parquet(10, 80).await;
        let metadata = load_metadata_with_page_index(&bytes, true);
        let fields = vec![int_field("id"), int_field("value")];

        let predicates = vec![id_leaf(
            PredicateOperator::In,
            vec![Datum::Int(35), Datum::Int(1000)],
        )];
        let sel = super::build_predicate_page_selection(&metadata, &predicates, &fields)
            .unwrap()
            .expect("non-matching pages should be skipped");
        assert_eq!(sel.row_count(), 10);
    }

    #[tokio::test]
    async fn test_page_selection_range_keeps_overlapping_pages() {
        let bytes = write_multi_page_parquet(10, 80).await;
        let metadata = load_metadata_with_page_index(&bytes, true);
        let fields = vec![int_field("id"), int_field("value")];

        // Lt(25) overlaps pages 0 ([0,10)), 1 ([10,20)), 2 ([20,30)) — 30 rows.
        let predicates = vec![id_leaf(PredicateOperator::Lt, vec![Datum::Int(25)])];
        let sel = super::build_predicate_page_selection(&metadata, &predicates, &fields)
            .unwrap()
            .expect("some pages should be skipped");
        assert_eq!(sel.row_count(), 30);
    }

    #[tokio::test]
    async fn test_page_selection_neq_falls_open() {
        let bytes = write_multi_page_parquet(10, 80).await;
        let metadata = load_metadata_with_page_index(&bytes, true);
        let fields = vec![int_field("id"), int_field("value")];

        // NotEq is conservative under stats: every page holds other values, so
        // no page can be excluded → helper returns None (selection unchanged).
        let predicates = vec![id_leaf(PredicateOperator::NotEq, vec![Datum::Int(35)])];
        let sel = super::build_predicate_page_selection(&metadata, &predicates, &fields).unwrap();
        assert!(sel.is_none(), "NotEq must not skip any page (got {sel:?})");
    }

    #[tokio::test]
    async fn test_page_selection_returns_none_without_page_index() {
        let bytes = write_multi_page_parquet(10, 80).await;
        // Metadata parsed without the page index → helper must fall open.
        let metadata = load_metadata_with_page_index(&bytes, false);
        let fields = vec![int_field("id"), int_field("value")];

        let predicates = vec![id_leaf(PredicateOperator::Eq, vec![Datum::Int(35)])];
        let sel = super::build_predicate_page_selection(&metadata, &predicates, &fields).unwrap();
        assert!(
            sel.is_none(),
            "missing page index must fall open (got {sel:?})"
        );
    }

    /// Expand a [`RowSelection`] into the set of selected 0-based row indices.
    fn selected_rows(sel: &RowSelection) -> Vec<usize> {
        let mut rows = Vec::new();
        let mut pos = 0usize;
        for selector in sel.iter() {
            if !selector.skip {
                rows.extend(pos..pos + selector.row_count);
            }
            pos += selector.row_count;
        }
        rows
    }

    /// Write two columns whose page layouts differ: `id` is a single page while
    /// `value` is forced into ~10-row pages via a per-column byte-size limit.
    /// This is the layout that exposes the "borrow another column's page rows"
    /// bug — the driver column's pages must not be reused for `value`'s stats.
    async fn write_divergent_page_layout_parquet(total_rows: i32) -> Vec<u8> {
        use parquet::schema::types::ColumnPath;
        let schema = writer_arrow_schema();
        let props = parquet::file::properties::WriterProperties::builder()
            // `value` (4 bytes/row): ~40-byte pages ≈ 10 rows per page.
            .set_column_data_page_size_limit(ColumnPath::from("value"), 40)
            .set_write_batch_size(10)
            // `id` keeps the default large page limit → a single page.
            .set_max_row_group_row_count(Some(total_rows as usize))
            .build();
        let mut buf: Vec<u8> = Vec::new();
        {
            let mut writer =
                AsyncArrowWriter::try_new(&mut buf, schema.clone(), Some(props)).unwrap();
            let ids: Vec<i32> = (0..total_rows).collect();
            let values: Vec<i32> = ids.iter().map(|v| v * 10).collect();
            writer
                .write(&writer_test_batch(&schema, ids, values))
                .await
                .unwrap();
            let _ = writer.close().await.unwrap();
        }
        buf
    }

    #[tokio::test]
    async fn test_page_selection_predicate_on_non_driver_column() {
        // Regression: pruning must use each column's own page boundaries. Here
        // `value` has many pages while `id` has one; a predicate on `value`
        // must never drop rows that actually match.
        let bytes = write_divergent_page_layout_parquet(80).await;
        let metadata = load_metadata_with_page_index(&bytes, true);
        let fields = vec![int_field("id"), int_field("value")];

        // value == 350 (i.e. id == 35). Predicate is on the second field.
        let predicates = vec![Predicate::Leaf {
            column: "value".to_string(),
            index: 1,
            data_type: DataType::Int(IntType::new()),
            op: PredicateOperator::Eq,
            literals: vec![Datum::Int(350)],
        }];
        let sel = super::build_predicate_page_selection(&metadata, &predicates, &fields)
            .unwrap()
            .expect("value pages should be prunable");

        // The matching row (index 35) must survive; pruning is still effective
        // (not every row is kept).
        let rows = selected_rows(&sel);
        assert!(rows.contains(&35), "matching row 35 must be kept: {rows:?}");
        assert!(
            sel.row_count() < 80,
            "some non-matching pages should be skipped (kept {} rows)",
            sel.row_count()
        );
    }

    #[tokio::test]
    async fn test_page_selection_fails_open_on_missing_column_index() {
        // A column with only chunk-level statistics has no ColumnIndex
        // (`ColumnIndexMetaData::NONE`) but still gets an OffsetIndex. Its
        // accessors panic rather than return None, so pruning must fail open
        // for that column instead of touching the index.
        use parquet::schema::types::ColumnPath;

        let schema = writer_arrow_schema();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_data_page_row_count_limit(10)
            .set_write_batch_size(10)
            .set_max_row_group_row_count(Some(80))
            // `value` keeps chunk stats only → no column index, but an offset
            // index is still written.
            .set_column_statistics_enabled(ColumnPath::from("value"), EnabledStatistics::Chunk)
            .build();
        let mut buf: Vec<u8> = Vec::new();
        {
            let mut writer =
                AsyncArrowWriter::try_new(&mut buf, schema.clone(), Some(props)).unwrap();
            let ids: Vec<i32> = (0..80).collect();
            let values: Vec<i32> = ids.iter().map(|v| v * 10).collect();
            writer
                .write(&writer_test_batch(&schema, ids, values))
                .await
                .unwrap();
            let _ = writer.close().await.unwrap();
        }
        let metadata = load_metadata_with_page_index(&buf, true);
        let fields = vec![int_field("id"), int_field("value")];

        // Predicate on the column without a column index must not panic; it
        // falls open (kept whole), so no page is skipped for it.
        let predicates = vec![Predicate::Leaf {
            column: "value".to_string(),
            index: 1,
            data_type: DataType::Int(IntType::new()),
            op: PredicateOperator::Eq,
            literals: vec![Datum::Int(350)],
        }];
        let sel = super::build_predicate_page_selection(&metadata, &predicates, &fields).unwrap();
        assert!(
            sel.is_none(),
            "column without a ColumnIndex must fall open (got {sel:?})"
        );
    }

    // -----------------------------------------------------------------------
    // Residual backstop for compound / unsupported-leaf predicates (Gap B)
    // -----------------------------------------------------------------------

    /// Write a single-row-group parquet file with columns `(id, name, age)`:
    /// `id=[1..=5]`, `name=[a,b,c,d,e]`, `age=[10,20,30,40,50]`. One row group so
    /// row-group / page pruning cannot exclude the non-matching rows — the only
    /// way to return exact rows is the row-level residual filter.
    async fn write_id_name_age_parquet() -> Vec<u8> {
        let schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, true),
            ArrowField::new("name", ArrowDataType::Utf8, true),
            ArrowField::new("age", ArrowDataType::Int32, true),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3, 4, 5])),
                Arc::new(arrow_array::StringArray::from(vec![
                    "a", "b", "c", "d", "e",
                ])),
                Arc::new(Int32Array::from(vec![10, 20, 30, 40, 50])),
            ],
        )
        .unwrap();

        // Single row group covering every row so no row-group pruning is possible.
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(5))
            .build();
        let mut buf: Vec<u8> = Vec::new();
        {
            let mut writer =
                AsyncArrowWriter::try_new(&mut buf, schema.clone(), Some(props)).unwrap();
            writer.write(&batch).await.unwrap();
            let _ = writer.close().await.unwrap();
        }
        buf
    }

    fn residual_test_field(index: i32, name: &str, data_type: DataType) -> DataField {
        DataField::new(index, name.to_string(), data_type)
    }

    fn residual_leaf(
        column: &str,
        index: usize,
        data_type: DataType,
        op: PredicateOperator,
        literals: Vec<Datum>,
    ) -> Predicate {
        Predicate::Leaf {
            column: column.to_string(),
            index,
            data_type,
            op,
            literals,
        }
    }

    /// File-level schema `(id, name, age)` used to resolve predicate indices.
    fn id_name_age_file_fields() -> Vec<DataField> {
        use crate::spec::VarCharType;
        vec![
            residual_test_field(0, "id", DataType::Int(IntType::new())),
            residual_test_field(1, "name", DataType::VarChar(VarCharType::string_type())),
            residual_test_field(2, "age", DataType::Int(IntType::new())),
        ]
    }

    #[tokio::test]
    async fn test_external_row_filter_projection_failure_falls_back() {
        #[derive(Debug)]
        struct InvalidProjectionFactory;

        struct InvalidProjectionFilter {
            projection: Arc<ArrowSchema>,
        }

        impl crate::arrow::RowFilter for InvalidProjectionFilter {
            fn projection(&self) -> &Arc<ArrowSchema> {
                &self.projection
            }

            fn evaluate(
                &mut self,
                batch: RecordBatch,
            ) -> Result<arrow_array::BooleanArray, arrow_schema::ArrowError> {
                Ok(arrow_array::BooleanArray::from(vec![
                    true;
                    batch.num_rows()
                ]))
            }
        }

        impl crate::arrow::RowFilterFactory for InvalidProjectionFactory {
            fn create(
                &self,
                _context: crate::arrow::RowFilterContext<'_>,
            ) -> crate::Result<Vec<Box<dyn crate::arrow::RowFilter>>> {
                Ok(vec![Box::new(InvalidProjectionFilter {
                    projection: Arc::new(ArrowSchema::new(vec![ArrowField::new(
                        "missing",
                        ArrowDataType::Int32,
                        true,
                    )])),
                })])
            }
        }

        let bytes = write_id_name_age_parquet().await;
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let path = "memory:/test_invalid_external_row_filter_projection.parquet";
        file_io
            .new_output(path)
            .unwrap()
            .write(Bytes::from(bytes))
            .await
            .unwrap();
        let input = file_io.new_input(path).unwrap();
        let file_size = input.metadata().await.unwrap().size;
        let fields = id_name_age_file_fields();
        let predicates = FilePredicates {
            predicates: Vec::new(),
            row_filter_factory: Some(Arc::new(InvalidProjectionFactory)),
            file_fields: fields.clone(),
        };

        let batches = ParquetFormatReader::default()
            .read_batch_stream(
                Box::new(input.reader().await.unwrap()),
                file_size,
                &fields[..1],
                Some(&predicates),
                None,
                None,
            )
            .await
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();

        let ids = batches
            .iter()
            .flat_map(|batch| {
                batch
                    .column(0)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .values()
                    .iter()
                    .copied()
            })
            .collect::<Vec<_>>();
        assert_eq!(ids, vec![1, 2, 3, 4, 5]);
    }

    #[tokio::test]
    async fn test_external_row_filters_are_ordered_by_parquet_cost() {
        use std::sync::Mutex;

        #[derive(Debug)]
        struct RecordingFactory {
            order: Arc<Mutex<Vec<&'static str>>>,
        }

        struct RecordingFilter {
            name: &'static str,
            order: Arc<Mutex<Vec<&'static str>>>,
            projection: Arc<ArrowSchema>,
        }

        impl crate::arrow::RowFilter for RecordingFilter {
            fn projection(&self) -> &Arc<ArrowSchema> {
                &self.projection
            }

            fn evaluate(
                &mut self,
                batch: RecordBatch,
            ) -> Result<arrow_array::BooleanArray, arrow_schema::ArrowError> {
                self.order.lock().unwrap().push(self.name);
                Ok(arrow_array::BooleanArray::from(vec![
                    true;
                    batch.num_rows()
                ]))
            }
        }

        impl crate::arrow::RowFilterFactory for RecordingFactory {
            fn create(
                &self,
                context: crate::arrow::RowFilterContext<'_>,
            ) -> crate::Result<Vec<Box<dyn crate::arrow::RowFilter>>> {
                let filter = |name, index| {
                    Box::new(RecordingFilter {
                        name,
                        order: Arc::clone(&self.order),
                        projection: Arc::new(context.file_schema.project(&[index]).unwrap()),
                    }) as Box<dyn crate::arrow::RowFilter>
                };
                Ok(vec![filter("large", 1), filter("small", 0)])
            }
        }

        let schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("small", ArrowDataType::Int32, false),
            ArrowField::new("large", ArrowDataType::Utf8, false),
        ]));
        let large_values = (0..32)
            .map(|index| format!("{index:04}-{}", "x".repeat(4096)))
            .collect::<Vec<_>>();
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(Int32Array::from_iter_values(0..32)),
                Arc::new(StringArray::from(large_values)),
            ],
        )
        .unwrap();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_compression(parquet::basic::Compression::UNCOMPRESSED)
            .set_max_row_group_row_count(Some(16))
            .build();
        let mut bytes = Vec::new();
        {
            let mut writer =
                AsyncArrowWriter::try_new(&mut bytes, Arc::clone(&schema), Some(props)).unwrap();
            writer.write(&batch).await.unwrap();
            writer.close().await.unwrap();
        }

        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let path = "memory:/test_external_row_filter_cost_order.parquet";
        file_io
            .new_output(path)
            .unwrap()
            .write(Bytes::from(bytes))
            .await
            .unwrap();
        let input = file_io.new_input(path).unwrap();
        let file_size = input.metadata().await.unwrap().size;
        let order = Arc::new(Mutex::new(Vec::new()));
        let fields = vec![
            residual_test_field(0, "small", DataType::Int(IntType::new())),
            residual_test_field(1, "large", DataType::VarChar(VarCharType::string_type())),
        ];
        let predicates = FilePredicates {
            predicates: Vec::new(),
            row_filter_factory: Some(Arc::new(RecordingFactory {
                order: Arc::clone(&order),
            })),
            file_fields: fields.clone(),
        };

        let resources = crate::resource::ResourceContext::builder()
            .memory_limit(1024 * 1024)
            .build()
            .unwrap();
        for reader in [
            ParquetFormatReader::default(),
            ParquetFormatReader::with_read_budget(Arc::new(
                ReadBudget::default().with_resources(resources.clone()),
            )),
        ] {
            order.lock().unwrap().clear();
            reader
                .read_batch_stream(
                    Box::new(input.reader().await.unwrap()),
                    file_size,
                    &fields[..1],
                    Some(&predicates),
                    None,
                    None,
                )
                .await
                .unwrap()
                .try_collect::<Vec<_>>()
                .await
                .unwrap();

            assert_eq!(
                *order.lock().unwrap(),
                vec!["small", "large", "small", "large"]
            );
            assert_eq!(resources.metrics().reserved_memory_bytes, 0);
        }
    }

    /// Read `[name]` from the `(id, name, age)` parquet file under `predicates`
    /// and collect the surviving `name` values in row order. The reader-level
    /// batch may include extra (predicate) columns — we look `name` up by name.
    async fn read_names_under_predicate(
        read_fields: &[DataField],
        predicate: Predicate,
    ) -> Vec<String> {
        use crate::io::FileIOBuilder;
        use futures::StreamExt;

        let bytes = write_id_name_age_parquet().await;

        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let path = "memory:/test_parquet_residual_backstop.parquet";
        let output = file_io.new_output(path).unwrap();
        output.write(Bytes::from(bytes)).await.unwrap();

        let input = file_io.new_input(path).unwrap();
        let file_size = input.metadata().await.unwrap().size;
        let reader_input = input.reader().await.unwrap();

        let predicates = FilePredicates {
            predicates: vec![predicate],
            row_filter_factory: None,
            file_fields: id_name_age_file_fields(),
        };

        let reader = ParquetFormatReader::default();
        let mut stream = reader
            .read_batch_stream(
                Box::new(reader_input),
                file_size,
                read_fields,
                Some(&predicates),
                None,
                None,
            )
            .await
            .unwrap();

        let mut names: Vec<String> = Vec::new();
        while let Some(result) = stream.next().await {
            let batch = result.unwrap();
            let name_idx = batch.schema().index_of("name").unwrap();
            let col = batch
                .column(name_idx)
                .as_any()
                .downcast_ref::<arrow_array::StringArray>()
                .unwrap();
            names.extend((0..col.len()).map(|i| col.value(i).to_string()));
        }
        names
    }

    #[tokio::test]
    async fn test_parquet_or_predicate_returns_exact_rows() {
        use crate::spec::VarCharType;
        // Read only [name]; predicate `age > 25 OR name = 'a'`.
        // age>25 -> c,d,e (rows 3,4,5); name='a' -> a (row 1). Union: a,c,d,e.
        // Or is not accepted by the row filter, so before the fix it falls
        // through to pruning only (single row group -> all 5 rows returned).
        let read_fields = vec![residual_test_field(
            1,
            "name",
            DataType::VarChar(VarCharType::string_type()),
        )];
        let predicate = Predicate::Or(vec![
            residual_leaf(
                "age",
                2,
                DataType::Int(IntType::new()),
                PredicateOperator::Gt,
                vec![Datum::Int(25)],
            ),
            residual_leaf(
                "name",
                1,
                DataType::VarChar(VarCharType::string_type()),
                PredicateOperator::Eq,
                vec![Datum::String("a".to_string())],
            ),
        ]);
        let names = read_names_under_predicate(&read_fields, predicate).await;
        assert_eq!(names, vec!["a", "c", "d", "e"]);
    }

    #[tokio::test]
    async fn test_parquet_not_predicate_returns_exact_complement() {
        use crate::spec::VarCharType;
        // `NOT (age > 25)` -> age <= 25 -> a,b (rows 1,2).
        let read_fields = vec![residual_test_field(
            1,
            "name",
            DataType::VarChar(VarCharType::string_type()),
        )];
        let predicate = Predicate::Not(Box::new(residual_leaf(
            "age",
            2,
            DataType::Int(IntType::new()),
            PredicateOperator::Gt,
            vec![Datum::Int(25)],
        )));
        let names = read_names_under_predicate(&read_fields, predicate).await;
        assert_eq!(names, vec!["a", "b"]);
    }

    #[test]
    fn test_supported_compound_predicate_is_enforced_by_row_filter() {
        let parquet_schema = SchemaDescriptor::new(Arc::new(
            parse_message_type(
                "
                message test_schema {
                  OPTIONAL INT32 id;
                  OPTIONAL BYTE_ARRAY name (UTF8);
                  OPTIONAL INT32 age;
                }
                ",
            )
            .expect("test schema should parse"),
        ));
        let file_fields = id_name_age_file_fields();
        let predicate = Predicate::Or(vec![
            residual_leaf(
                "age",
                2,
                DataType::Int(IntType::new()),
                PredicateOperator::Gt,
                vec![Datum::Int(25)],
            ),
            Predicate::Not(Box::new(residual_leaf(
                "id",
                0,
                DataType::Int(IntType::new()),
                PredicateOperator::Eq,
                vec![Datum::Int(2)],
            ))),
        ]);

        assert!(super::predicate_fully_enforced_by_row_filter(
            &parquet_schema,
            &predicate,
            &file_fields,
        ));
    }

    #[tokio::test]
    async fn test_parquet_and_of_supported_leaves_takes_fast_path() {
        use crate::spec::VarCharType;
        // Fast-path guard: a top-level AND of two supported leaves stays on the
        // row-filter fast path (no residual pass) and still returns exact rows.
        // `age > 15 AND age < 45` -> b,c,d (rows 2,3,4).
        let read_fields = vec![residual_test_field(
            1,
            "name",
            DataType::VarChar(VarCharType::string_type()),
        )];

        // Both leaves must be fully enforced by the row filter -> fast path taken.
        let parquet_schema = SchemaDescriptor::new(Arc::new(
            parse_message_type(
                "
                message test_schema {
                  OPTIONAL INT32 id;
                  OPTIONAL BYTE_ARRAY name (UTF8);
                  OPTIONAL INT32 age;
                }
                ",
            )
            .expect("test schema should parse"),
        ));
        let file_fields = id_name_age_file_fields();
        let leaf_gt = residual_leaf(
            "age",
            2,
            DataType::Int(IntType::new()),
            PredicateOperator::Gt,
            vec![Datum::Int(15)],
        );
        let leaf_lt = residual_leaf(
            "age",
            2,
            DataType::Int(IntType::new()),
            PredicateOperator::Lt,
            vec![Datum::Int(45)],
        );
        assert!(super::predicate_fully_enforced_by_row_filter(
            &parquet_schema,
            &leaf_gt,
            &file_fields
        ));
        assert!(super::predicate_fully_enforced_by_row_filter(
            &parquet_schema,
            &leaf_lt,
            &file_fields
        ));
        // A supported OR is evaluated as one decoder predicate, preserving its
        // compound semantics without a residual pass.
        let or_pred = Predicate::Or(vec![leaf_gt.clone(), leaf_lt.clone()]);
        assert!(super::predicate_fully_enforced_by_row_filter(
            &parquet_schema,
            &or_pred,
            &file_fields
        ));

        // Both leaves reach the reader split into the top-level predicate list
        // (split_and flattens AND), so we pass them as two separate predicates.
        use crate::io::FileIOBuilder;
        use futures::StreamExt;
        let bytes = write_id_name_age_parquet().await;
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let path = "memory:/test_parquet_fast_path_and.parquet";
        let output = file_io.new_output(path).unwrap();
        output.write(Bytes::from(bytes)).await.unwrap();
        let input = file_io.new_input(path).unwrap();
        let file_size = input.metadata().await.unwrap().size;
        let reader_input = input.reader().await.unwrap();
        let predicates = FilePredicates {
            predicates: vec![leaf_gt, leaf_lt],
            row_filter_factory: None,
            file_fields,
        };
        let reader = ParquetFormatReader::default();
        let mut stream = reader
            .read_batch_stream(
                Box::new(reader_input),
                file_size,
                &read_fields,
                Some(&predicates),
                None,
                None,
            )
            .await
            .unwrap();
        let mut names: Vec<String> = Vec::new();
        while let Some(result) = stream.next().await {
            let batch = result.unwrap();
            let name_idx = batch.schema().index_of("name").unwrap();
            let col = batch
                .column(name_idx)
                .as_any()
                .downcast_ref::<arrow_array::StringArray>()
                .unwrap();
            names.extend((0..col.len()).map(|i| col.value(i).to_string()));
        }
        assert_eq!(names, vec!["b", "c", "d"]);
    }

    #[test]
    fn test_page_boundaries_valid() {
        use parquet::file::page_index::offset_index::PageLocation;
        let page = |first_row_index: i64| PageLocation {
            offset: 0,
            compressed_page_size: 0,
            first_row_index,
        };

        // Well-formed: starts at 0, strictly increasing, within [0, rg_rows].
        assert!(super::page_boundaries_valid(
            &[page(0), page(10), page(20)],
            30
        ));
        // Single page starting at 0.
        assert!(super::page_boundaries_valid(&[page(0)], 10));

        // First page not at row 0.
        assert!(!super::page_boundaries_valid(&[page(5), page(10)], 30));
        // Negative first_row_index (would cast to a huge usize).
        assert!(!super::page_boundaries_valid(&[page(0), page(-1)], 30));
        // Non-monotonic.
        assert!(!super::page_boundaries_valid(
            &[page(0), page(20), page(10)],
            30
        ));
        // Duplicate (not strictly increasing).
        assert!(!super::page_boundaries_valid(
            &[page(0), page(10), page(10)],
            30
        ));
        // Beyond the row group.
        assert!(!super::page_boundaries_valid(&[page(0), page(40)], 30));
    }

    // -----------------------------------------------------------------------
    // MAP shared-shredding end-to-end (mirrors Java's
    // MapSharedShreddingTableTest read/write semantics).
    // -----------------------------------------------------------------------

    fn map_shredding_fields() -> Vec<DataField> {
        vec![
            DataField::new(0, "id".to_string(), DataType::Int(IntType::new())),
            DataField::new(
                1,
                "tags".to_string(),
                DataType::Map(MapType::new(
                    DataType::VarChar(VarCharType::new(VarCharType::MAX_LENGTH).unwrap()),
                    DataType::BigInt(BigIntType::new()),
                )),
            ),
        ]
    }

    fn build_int64_map_array(rows: &[Option<Vec<(&str, Option<i64>)>>]) -> MapArray {
        let map_type = DataType::Map(MapType::new(
            DataType::VarChar(VarCharType::new(VarCharType::MAX_LENGTH).unwrap()),
            DataType::BigInt(BigIntType::new()),
        ));
        let ArrowDataType::Map(entries_field, ordered) =
            crate::arrow::paimon_type_to_arrow(&map_type).unwrap()
        else {
            panic!("map type must convert to Arrow Map")
        };
        let ArrowDataType::Struct(entry_fields) = entries_field.data_type().clone() else {
            panic!("map entries must be Struct")
        };
        let mut keys = Vec::new();
        let mut values = Vec::new();
        let mut offsets = vec![0i32];
        let mut validity = Vec::new();
        for row in rows {
            match row {
                None => {
                    validity.push(false);
                    offsets.push(*offsets.last().unwrap());
                }
                Some(entries) => {
                    validity.push(true);
                    for (key, value) in entries {
                        keys.push(*key);
                        values.push(*value);
                    }
                    offsets.push(*offsets.last().unwrap() + entries.len() as i32);
                }
            }
        }
        let entries = StructArray::try_new(
            entry_fields,
            vec![
                Arc::new(StringArray::from(keys)) as Arc<dyn Array>,
                Arc::new(Int64Array::from(values)),
            ],
            None,
        )
        .unwrap();
        MapArray::new(
            entries_field,
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            entries,
            Some(NullBuffer::from(validity)),
            ordered,
        )
    }

    fn assert_int64_map_rows(map: &MapArray, rows: &[Option<Vec<(&str, Option<i64>)>>]) {
        let keys = map.keys().as_any().downcast_ref::<StringArray>().unwrap();
        let values = map.values().as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(map.len(), rows.len());
        for (row, expected) in rows.iter().enumerate() {
            match expected {
                None => assert!(map.is_null(row), "row {row} must be null"),
                Some(entries) => {
                    assert!(!map.is_null(row), "row {row} must be non-null");
                    let start = map.offsets()[row] as usize;
                    let end = map.offsets()[row + 1] as usize;
                    assert_eq!(end - start, entries.len(), "row {row} entry count");
                    for (j, (key, value)) in entries.iter().enumerate() {
                        assert_eq!(keys.value(start + j), *key, "row {row} key {j}");
                        assert_eq!(
                            values.is_null(start + j),
                            value.is_none(),
                            "row {row} value {j} nullness"
                        );
                        if let Some(v) = value {
                            assert_eq!(values.value(start + j), *v, "row {row} value {j}");
                        }
                    }
                }
            }
        }
    }

    async fn write_map_shredding_file(
        rows: &[Option<Vec<(&str, Option<i64>)>>],
        ids: &[i32],
        max_columns: usize,
    ) -> (String, crate::io::FileIO, u64, Vec<DataField>) {
        write_map_shredding_file_with_compression(rows, ids, max_columns, "zstd").await
    }

    async fn write_map_shredding_file_with_compression(
        rows: &[Option<Vec<(&str, Option<i64>)>>],
        ids: &[i32],
        max_columns: usize,
        compression: &str,
    ) -> (String, crate::io::FileIO, u64, Vec<DataField>) {
        let fields = map_shredding_fields();
        let options = HashMap::from([
            (
                "fields.tags.map.shared-shredding.column-placement-policy".to_string(),
                "plain".to_string(),
            ),
            (
                "fields.tags.map.storage-layout".to_string(),
                "shared-shredding".to_string(),
            ),
            (
                "fields.tags.map.shared-shredding.max-columns".to_string(),
                max_columns.to_string(),
            ),
        ]);
        let logical_schema = build_target_arrow_schema(&fields).unwrap();
        let batch = RecordBatch::try_new(
            logical_schema.clone(),
            vec![
                Arc::new(Int32Array::from(ids.to_vec())),
                Arc::new(build_int64_map_array(rows)),
            ],
        )
        .unwrap();

        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let path = format!("memory:/map_shredding_{}.parquet", uuid::Uuid::new_v4());
        let output = file_io.new_output(&path).unwrap();
        let mut writer = create_format_writer(
            &output,
            logical_schema,
            compression,
            1,
            None,
            Some(&fields),
            Some(&options),
        )
        .await
        .unwrap();
        writer.write(&batch).await.unwrap();
        let file_size = writer.close().await.unwrap().file_size;
        (path, file_io, file_size, fields)
    }

    #[tokio::test]
    async fn selected_map_rows_decode_complete_maps_before_core_assembly() {
        use crate::spec::RowType;
        let map_type = map_shredding_fields()[1].data_type().clone();
        let fields = vec![
            DataField::new(10, "attrs".into(), map_type.clone()),
            DataField::new(
                20,
                "profile".into(),
                DataType::Row(RowType::new(vec![
                    DataField::new(21, "attrs".into(), map_type),
                    DataField::new(22, "unused".into(), DataType::Int(IntType::new())),
                ])),
            ),
        ];
        let rows = vec![
            Some(vec![("wanted", Some(10)), ("key_value", Some(11))]),
            None,
            Some(vec![]),
            Some(vec![
                ("wanted", Some(40)),
                ("wanted", Some(50)),
                ("key_value", Some(41)),
            ]),
        ];
        let schema = build_target_arrow_schema(&fields).unwrap();
        let ArrowDataType::Struct(profile_fields) = schema.field(1).data_type() else {
            panic!("profile must be ROW");
        };
        let profile = StructArray::new(
            profile_fields.clone(),
            vec![
                Arc::new(build_int64_map_array(&rows)),
                Arc::new(Int32Array::from(vec![1, 2, 3, 4])),
            ],
            Some(NullBuffer::from(vec![true, false, true, true])),
        );
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(build_int64_map_array(&rows)), Arc::new(profile)],
        )
        .unwrap();
        let requested = crate::spec::project_read_type(
            &fields,
            &[
                vec!["attrs".into(), "wanted".into()],
                vec!["attrs".into(), "missing".into()],
                vec!["profile".into(), "attrs".into(), "key_value".into()],
            ],
        )
        .unwrap();
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let path = "memory:/selected_map_complete_fallback.parquet";
        let output = file_io.new_output(path).unwrap();
        let mut writer =
            create_format_writer(&output, schema, "zstd", 1, None, Some(&fields), None)
                .await
                .unwrap();
        writer.write(&batch).await.unwrap();
        let file_size = writer.close().await.unwrap().file_size;
        let batches = create_format_reader(path, false, &requested)
            .unwrap()
            .read_batch_stream(
                Box::new(file_io.new_input(path).unwrap().reader().await.unwrap()),
                file_size,
                &requested,
                None,
                None,
                None,
            )
            .await
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        assert_eq!(batches.len(), 1);
        assert_int64_map_rows(
            batches[0]
                .column(0)
                .as_any()
                .downcast_ref::<MapArray>()
                .unwrap(),
            &rows,
        );
        let top = crate::arrow::nested_evolution::evolve_field(
            batches[0].column(0),
            &fields[0],
            &requested[0],
        )
        .unwrap();
        let top = top.as_any().downcast_ref::<StructArray>().unwrap();
        assert!(top.is_null(1));
        assert_eq!(
            top.column(0).as_any().downcast_ref::<Int64Array>().unwrap(),
            &Int64Array::from(vec![Some(10), None, None, Some(40)]),
        );
        assert_eq!(top.column(1).null_count(), 4);
        let profile = crate::arrow::nested_evolution::evolve_field(
            batches[0].column(1),
            &fields[1],
            &requested[1],
        )
        .unwrap();
        let profile = profile.as_any().downcast_ref::<StructArray>().unwrap();
        assert!(profile.is_null(1));
        assert_eq!(profile.num_columns(), 1);
        let attrs = profile
            .column(0)
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap();
        assert_eq!(
            attrs
                .column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap(),
            &Int64Array::from(vec![Some(11), None, None, Some(41)]),
        );
    }

    #[tokio::test]
    async fn test_parquet_map_shredding_write_read_roundtrip() {
        let rows: Vec<Option<Vec<(&str, Option<i64>)>>> = vec![
            Some(vec![("a", Some(10)), ("b", None), ("c", Some(30))]), // c overflows
            None,                                                      // null map
            Some(vec![]),                                              // empty map
            Some(vec![("b", Some(40)), ("a", Some(50))]),
        ];
        let ids = vec![1, 2, 3, 4];
        let (path, file_io, file_size, fields) = write_map_shredding_file(&rows, &ids, 2).await;

        // Raw physical layout: "tags" is a struct with the shared-shredding
        // child columns, proving the writer applied the plan.
        let raw_bytes = file_io.new_input(&path).unwrap().read().await.unwrap();
        let raw_batches = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(
            raw_bytes.clone(),
            1024,
        )
        .unwrap()
        .collect::<std::result::Result<Vec<_>, _>>()
        .unwrap();
        let raw_tags = raw_batches[0].column_by_name("tags").unwrap();
        let ArrowDataType::Struct(raw_fields) = raw_tags.data_type() else {
            panic!("physical tags column must be a struct")
        };
        let names: Vec<&str> = raw_fields.iter().map(|f| f.name().as_str()).collect();
        assert_eq!(
            names,
            vec!["__field_mapping", "__col_0", "__col_1", "__overflow"]
        );

        // A single schema entry is unambiguous for Java, PyArrow and arrow-rs.
        let metadata = load_metadata_with_page_index(&raw_bytes, false);
        let kv = metadata
            .file_metadata()
            .key_value_metadata()
            .expect("footer must carry key-value metadata");
        let arrow_schema_entries = kv
            .iter()
            .filter(|kv| kv.key == parquet::arrow::ARROW_SCHEMA_META_KEY)
            .count();
        assert_eq!(
            arrow_schema_entries, 1,
            "close must publish exactly one ARROW:schema with shredding metadata"
        );

        // The format reader surfaces the logical MAP column back.
        let input = file_io.new_input(&path).unwrap();
        let file_reader = input.reader().await.unwrap();
        let reader = create_format_reader(&path, false, &fields).unwrap();
        let batches = reader
            .read_batch_stream(Box::new(file_reader), file_size, &fields, None, None, None)
            .await
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        assert_eq!(batches.len(), 1);
        let id = batches[0]
            .column_by_name("id")
            .unwrap()
            .as_any()
            .downcast_ref::<Int32Array>()
            .unwrap();
        assert_eq!(
            id.iter().collect::<Vec<_>>(),
            vec![Some(1), Some(2), Some(3), Some(4)]
        );
        let tags = batches[0]
            .column_by_name("tags")
            .unwrap()
            .as_any()
            .downcast_ref::<MapArray>()
            .unwrap();
        assert_int64_map_rows(tags, &rows);
    }

    #[tokio::test]
    async fn test_parquet_map_shredding_selected_key_prunes_and_assembles() {
        let rows: Vec<Option<Vec<(&str, Option<i64>)>>> = vec![
            Some(vec![("a", Some(10)), ("b", None), ("c", Some(30))]),
            None,
            Some(vec![]),
            Some(vec![("b", Some(40)), ("a", Some(50))]),
        ];
        let ids = vec![1, 2, 3, 4];
        let (path, file_io, file_size, fields) = write_map_shredding_file(&rows, &ids, 2).await;
        let selected_fields = vec![
            fields[0].clone(),
            fields[1].clone().with_description(Some(format!(
                "{}c",
                crate::arrow::shredding::map::SELECTED_KEYS_PREFIX
            ))),
        ];

        let input = file_io.new_input(&path).unwrap();
        let file_reader = input.reader().await.unwrap();
        let reader = create_format_reader(&path, false, &selected_fields).unwrap();
        let batches = reader
            .read_batch_stream(
                Box::new(file_reader),
                file_size,
                &selected_fields,
                None,
                None,
                None,
            )
            .await
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();

        let tags = batches[0]
            .column_by_name("tags")
            .unwrap()
            .as_any()
            .downcast_ref::<MapArray>()
            .unwrap();
        assert_int64_map_rows(
            tags,
            &[
                Some(vec![("c", Some(30))]),
                None,
                Some(vec![]),
                Some(vec![]),
            ],
        );

        let missing_fields = vec![fields[1].clone().with_description(Some(format!(
            "{}missing",
            crate::arrow::shredding::map::SELECTED_KEYS_PREFIX
        )))];
        let missing_reader = file_io.new_input(&path).unwrap().reader().await.unwrap();
        let missing = create_format_reader(&path, false, &missing_fields)
            .unwrap()
            .read_batch_stream(
                Box::new(missing_reader),
                file_size,
                &missing_fields,
                None,
                None,
                None,
            )
            .await
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        assert_int64_map_rows(
            missing[0]
                .column_by_name("tags")
                .unwrap()
                .as_any()
                .downcast_ref::<MapArray>()
                .unwrap(),
            &[Some(vec![]), None, Some(vec![]), Some(vec![])],
        );

        // An empty encoded suffix is the selected-key protocol's encoding for
        // the valid empty-string key, not an empty key set.
        let empty_key_rows = vec![Some(vec![("", Some(10)), ("other", Some(11))])];
        let (empty_path, empty_file_io, empty_file_size, empty_fields) =
            write_map_shredding_file(&empty_key_rows, &[1], 2).await;
        let selected_empty_fields = vec![empty_fields[1].clone().with_description(Some(
            crate::arrow::shredding::map::SELECTED_KEYS_PREFIX.to_string(),
        ))];
        let empty_key_reader = empty_file_io
            .new_input(&empty_path)
            .unwrap()
            .reader()
            .await
            .unwrap();
        let empty_key = create_format_reader(&empty_path, false, &selected_empty_fields)
            .unwrap()
            .read_batch_stream(
                Box::new(empty_key_reader),
                empty_file_size,
                &selected_empty_fields,
                None,
                None,
                None,
            )
            .await
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        assert_int64_map_rows(
            empty_key[0]
                .column_by_name("tags")
                .unwrap()
                .as_any()
                .downcast_ref::<MapArray>()
                .unwrap(),
            &[Some(vec![("", Some(10))])],
        );
    }

    #[tokio::test]
    async fn test_parquet_map_shredding_selected_key_reduces_data_io() {
        const ROWS: usize = 100_000;
        let rows = (0..ROWS)
            .map(|row| {
                Some(vec![
                    ("a", Some((row as i64).wrapping_mul(982_451_653))),
                    ("b", Some((row as i64).wrapping_mul(961_748_941))),
                ])
            })
            .collect::<Vec<_>>();
        let ids = (0..ROWS as i32).collect::<Vec<_>>();
        let (path, file_io, file_size, fields) =
            write_map_shredding_file_with_compression(&rows, &ids, 2, "none").await;
        let data = file_io.new_input(&path).unwrap().read().await.unwrap();

        let selected_fields = vec![fields[1].clone().with_description(Some(format!(
            "{}a",
            crate::arrow::shredding::map::SELECTED_KEYS_PREFIX
        )))];
        let selected_reader = TrackingFileRead::new(data.clone());
        let selected_tracker = selected_reader.clone();
        let selected_stream = ParquetFormatReader::default()
            .read_batch_stream(
                Box::new(selected_reader),
                file_size,
                &selected_fields,
                None,
                None,
                None,
            )
            .await
            .unwrap();
        selected_tracker.reset();
        let selected_rows = selected_stream
            .try_fold(0usize, |count, batch| async move {
                Ok(count + batch.num_rows())
            })
            .await
            .unwrap();
        let selected_bytes = selected_tracker.bytes_read();

        let full_reader = TrackingFileRead::new(data);
        let full_tracker = full_reader.clone();
        let full_stream = ParquetFormatReader::default()
            .read_batch_stream(
                Box::new(full_reader),
                file_size,
                &fields[1..],
                None,
                None,
                None,
            )
            .await
            .unwrap();
        full_tracker.reset();
        let full_rows = full_stream
            .try_fold(0usize, |count, batch| async move {
                Ok(count + batch.num_rows())
            })
            .await
            .unwrap();
        let full_bytes = full_tracker.bytes_read();

        assert_eq!(selected_rows, ROWS);
        assert_eq!(full_rows, ROWS);
        assert!(
            selected_bytes * 5 < full_bytes * 4,
            "selected-key read used {selected_bytes} bytes; full MAP read used {full_bytes} bytes"
        );
    }

    #[tokio::test]
    async fn test_parquet_map_shredding_residual_path_assembles_before_filter() {
        // An `Or` predicate is not fully enforced by the parquet row filter, so
        // the reader takes the residual branch: the shredded MAP column must be
        // assembled back to its logical type *before* the residual filter runs,
        // and only matching rows survive.
        let rows: Vec<Option<Vec<(&str, Option<i64>)>>> = vec![
            Some(vec![("a", Some(10))]),
            Some(vec![("b", Some(20))]),
            Some(vec![("c", Some(30))]),
            Some(vec![("d", Some(40))]),
        ];
        let ids = vec![1, 2, 3, 4];
        let (path, file_io, file_size, fields) = write_map_shredding_file(&rows, &ids, 2).await;

        let predicates = vec![Predicate::Or(vec![
            Predicate::Leaf {
                column: "id".to_string(),
                index: 0,
                data_type: DataType::Int(IntType::new()),
                op: super::PredicateOperator::Eq,
                literals: vec![Datum::Int(2)],
            },
            Predicate::Leaf {
                column: "id".to_string(),
                index: 0,
                data_type: DataType::Int(IntType::new()),
                op: super::PredicateOperator::Eq,
                literals: vec![Datum::Int(4)],
            },
        ])];
        let file_predicates = FilePredicates {
            predicates,
            row_filter_factory: None,
            file_fields: fields.clone(),
        };

        let input = file_io.new_input(&path).unwrap();
        let file_reader = input.reader().await.unwrap();
        let reader = create_format_reader(&path, false, &fields).unwrap();
        let batches = reader
            .read_batch_stream(
                Box::new(file_reader),
                file_size,
                &fields,
                Some(&file_predicates),
                None,
                None,
            )
            .await
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        assert_eq!(batches.len(), 1);
        let id = batches[0]
            .column_by_name("id")
            .unwrap()
            .as_any()
            .downcast_ref::<Int32Array>()
            .unwrap();
        assert_eq!(id.iter().collect::<Vec<_>>(), vec![Some(2), Some(4)]);
        let tags = batches[0]
            .column_by_name("tags")
            .unwrap()
            .as_any()
            .downcast_ref::<MapArray>()
            .unwrap();
        assert_int64_map_rows(tags, &[rows[1].clone(), rows[3].clone()]);
    }

    #[test]
    fn test_parse_compression_maps_every_supported_spelling() {
        for codec in ["none", "NONE", "uncompressed"] {
            let compression = parse_compression(codec, 1).unwrap();
            assert_eq!(compression, Compression::UNCOMPRESSED, "codec: {codec}");
        }
        for codec in ["snappy", "Snappy"] {
            let compression = parse_compression(codec, 1).unwrap();
            assert_eq!(compression, Compression::SNAPPY, "codec: {codec}");
        }
        for codec in ["gzip", "gz", "GZip"] {
            let compression = parse_compression(codec, 1).unwrap();
            let expected = Compression::GZIP(GzipLevel::default());
            assert_eq!(compression, expected, "codec: {codec}");
        }
        for codec in ["lz4", "lz4_raw", "LZ4_Raw"] {
            let compression = parse_compression(codec, 1).unwrap();
            assert_eq!(compression, Compression::LZ4_RAW, "codec: {codec}");
        }
        let compression = parse_compression("ZSTD", 1).unwrap();
        let expected = Compression::ZSTD(ZstdLevel::try_new(1).unwrap());
        assert_eq!(compression, expected);

        // Every name the error advertises has to be a name this writer accepts.
        for codec in supported_compressions() {
            assert!(
                parse_compression(codec, 1).is_ok(),
                "{codec} is listed as supported but rejected"
            );
        }
    }

    #[test]
    fn test_parse_compression_threads_the_zstd_level() {
        let compression = parse_compression("zstd", 9).unwrap();
        let expected = Compression::ZSTD(ZstdLevel::try_new(9).unwrap());
        assert_eq!(compression, expected);

        // An out-of-range level still falls back to arrow-rs' default instead of
        // erroring: `1..=22` is a parquet implementation detail, not a Paimon contract,
        // and `file.compression.zstd-level` carries no range check of its own on the
        // Java side. Pinned so the omission stays deliberate.
        let compression = parse_compression("zstd", 99).unwrap();
        assert_eq!(compression, Compression::ZSTD(ZstdLevel::default()));
    }

    #[test]
    fn test_parse_compression_rejects_unknown_codecs_and_names_the_accepted_ones() {
        // `brotli` and `lzo` are parquet codecs with no Java implementation to read them
        // back, `zstandard` and `deflate` are the Avro spellings, and `zstd ` is the
        // untrimmed typo this rejection exists for.
        for codec in [
            "gzip2",
            "",
            "brotli",
            "lzo",
            "zstandard",
            "deflate",
            "zstd ",
        ] {
            let err = match parse_compression(codec, 1) {
                Ok(compression) => panic!("{codec:?} parsed as {compression:?}"),
                Err(err) => err,
            };
            let Error::DataInvalid { message, .. } = err else {
                panic!("expected DataInvalid for {codec:?}, got {err:?}");
            };
            assert!(
                message.contains(&format!("{codec:?}")),
                "error does not quote the rejected value: {message}"
            );
            for supported in supported_compressions() {
                assert!(
                    message.contains(supported),
                    "{supported} missing from compression error: {message}"
                );
            }
        }
    }

    #[tokio::test]
    async fn test_create_format_writer_rejects_an_unknown_compression() {
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let output = file_io
            .new_output("memory:/bad-compression/data.parquet")
            .unwrap();
        let schema = Arc::new(ArrowSchema::new(vec![ArrowField::new(
            "id",
            ArrowDataType::Int32,
            false,
        )]));

        let err = match create_format_writer(&output, schema, "gzip2", 1, None, None, None).await {
            Ok(_) => panic!("gzip2 is not a parquet compression codec"),
            Err(err) => err,
        };
        let Error::DataInvalid { message, .. } = err else {
            panic!("expected DataInvalid, got {err:?}");
        };
        assert!(message.contains("file.compression"), "message: {message}");
    }

    #[tokio::test]
    async fn variant_extraction_reads_metadata_as_dictionary() {
        let rows = [r#"{"x":1,"y":2.5}"#, r#"{"y":-1,"x":4}"#, r#"{"x":6}"#];
        let variants = rows
            .iter()
            .map(|json| GenericVariant::parse_json(json).unwrap())
            .collect::<Vec<_>>();
        let ArrowDataType::Struct(variant_fields) = variant_arrow_type() else {
            unreachable!()
        };
        let column = StructArray::new(
            variant_fields.clone(),
            vec![
                Arc::new(BinaryArray::from_iter_values(
                    variants.iter().map(|v| v.value()),
                )),
                Arc::new(BinaryArray::from_iter_values(
                    variants.iter().map(|v| v.metadata()),
                )),
            ],
            None,
        );
        let schema = Arc::new(ArrowSchema::new(vec![ArrowField::new(
            "v",
            ArrowDataType::Struct(variant_fields),
            true,
        )]));
        let batch =
            RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(column.clone())]).unwrap();
        let mut buf = Vec::new();
        let mut writer = AsyncArrowWriter::try_new(&mut buf, schema, None).unwrap();
        writer.write(&batch).await.unwrap();
        writer.close().await.unwrap();

        let float = || DataType::Float(crate::spec::FloatType::new());
        let row_type = crate::spec::variant_extraction_row(
            true,
            vec![
                (float(), "$.x".to_string(), false, "UTC".to_string()),
                (float(), "$.y".to_string(), false, "UTC".to_string()),
            ],
        )
        .unwrap();
        let fields = vec![DataField::new(
            0,
            "v".to_string(),
            DataType::Row(row_type.clone()),
        )];
        let data = Bytes::from(buf);
        let batches = ParquetFormatReader::default()
            .read_batch_stream(
                Box::new(TrackingFileRead::new(data.clone())),
                data.len() as u64,
                &fields,
                None,
                None,
                None,
            )
            .await
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        let read = batches[0]
            .column_by_name("v")
            .unwrap()
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap();
        assert!(matches!(
            read.column(1).data_type(),
            ArrowDataType::Dictionary(key, value)
                if key.as_ref() == &ArrowDataType::Int32 && value.as_ref() == &ArrowDataType::Binary
        ));
        let expected =
            crate::arrow::shredding::variant::assemble_variant_extraction_array(&column, &row_type)
                .unwrap();
        let actual =
            crate::arrow::shredding::variant::assemble_variant_extraction_array(read, &row_type)
                .unwrap();
        assert_eq!(actual.as_ref(), expected.as_ref());
    }
}
