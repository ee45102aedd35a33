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

use std::collections::{HashMap, HashSet};

use crate::spec::TableType;

const DELETION_VECTORS_ENABLED_OPTION: &str = "deletion-vectors.enabled";
const DELETION_VECTORS_MERGE_ON_READ_OPTION: &str = "deletion-vectors.merge-on-read";
pub(crate) const QUERY_AUTH_ENABLED_OPTION: &str = "query-auth.enabled";
const DATA_EVOLUTION_ENABLED_OPTION: &str = "data-evolution.enabled";
const DATA_EVOLUTION_NESTED_FIELD_ENABLED_OPTION: &str = "data-evolution.nested-field.enabled";
const FILE_INDEX_READ_ENABLED_OPTION: &str = "file-index.read.enabled";
const GLOBAL_INDEX_ENABLED_OPTION: &str = "global-index.enabled";
const GLOBAL_INDEX_SEARCH_MODE_OPTION: &str = "global-index.search-mode";
const SCALAR_INDEX_SEARCH_MODE_OPTION: &str = "scalar-index.search-mode";
const VECTOR_INDEX_SEARCH_MODE_OPTION: &str = "vector-index.search-mode";
const FULL_TEXT_INDEX_SEARCH_MODE_OPTION: &str = "full-text-index.search-mode";
const GLOBAL_INDEX_ROW_COUNT_PER_SHARD_OPTION: &str = "global-index.row-count-per-shard";
const GLOBAL_INDEX_THREAD_NUM_OPTION: &str = "global-index.thread-num";
const GLOBAL_INDEX_VINDEX_READ_THREAD_NUM_OPTION: &str = "global-index.vindex.read-thread-num";
const GLOBAL_INDEX_COLUMN_UPDATE_ACTION_OPTION: &str = "global-index.column-update-action";
pub(crate) const INDEX_FILE_IN_DATA_FILE_DIR_OPTION: &str = "index-file-in-data-file-dir";
const SORTED_INDEX_RECORDS_PER_RANGE_OPTION: &str = "sorted-index.records-per-range";
const BTREE_INDEX_RECORDS_PER_RANGE_OPTION: &str = "btree-index.records-per-range";
const BTREE_INDEX_CACHE_SIZE_OPTION: &str = "btree-index.cache-size";
const BTREE_INDEX_HIGH_PRIORITY_POOL_RATIO_OPTION: &str = "btree-index.high-priority-pool-ratio";
const BTREE_INDEX_FALLBACK_SCAN_MAX_SIZE_OPTION: &str = "btree-index.fallback-scan-max-size";
const BITMAP_INDEX_FALLBACK_SCAN_MAX_SIZE_OPTION: &str = "bitmap-index.fallback-scan-max-size";
const SOURCE_SPLIT_TARGET_SIZE_OPTION: &str = "source.split.target-size";
const SOURCE_SPLIT_OPEN_FILE_COST_OPTION: &str = "source.split.open-file-cost";
const PARTITION_DEFAULT_NAME_OPTION: &str = "partition.default-name";
const PARTITION_LEGACY_NAME_OPTION: &str = "partition.legacy-name";
const FORMAT_TABLE_PARTITION_PATH_ONLY_VALUE_OPTION: &str =
    "format-table.partition-path-only-value";
const METASTORE_PARTITIONED_TABLE_OPTION: &str = "metastore.partitioned-table";
const FORMAT_TABLE_IMPLEMENTATION_OPTION: &str = "format-table.implementation";
const FORMAT_TABLE_SCAN_LIST_PARALLELISM_OPTION: &str = "format-table.scan.list-parallelism";
const DEFAULT_FORMAT_TABLE_SCAN_LIST_PARALLELISM: usize = 64;
const MAX_FORMAT_TABLE_SCAN_LIST_PARALLELISM: i64 = 1000;
pub(crate) const BUCKET_KEY_OPTION: &str = "bucket-key";
const BUCKET_FUNCTION_TYPE_OPTION: &str = "bucket-function.type";
const BUCKET_OPTION: &str = "bucket";
const DEFAULT_BUCKET: i32 = -1;
/// Postpone bucket mode: data is written to `bucket-postpone` directory
/// and is invisible to readers until compaction assigns real bucket numbers.
pub const POSTPONE_BUCKET: i32 = -2;
/// Directory name for postpone bucket files.
pub const POSTPONE_BUCKET_DIR: &str = "bucket-postpone";
const COMMIT_MAX_RETRIES_OPTION: &str = "commit.max-retries";
const COMMIT_TIMEOUT_OPTION: &str = "commit.timeout";
const COMMIT_MIN_RETRY_WAIT_OPTION: &str = "commit.min-retry-wait";
const COMMIT_MAX_RETRY_WAIT_OPTION: &str = "commit.max-retry-wait";
const FILE_COMPRESSION_OPTION: &str = "file.compression";
const FILE_COMPRESSION_ZSTD_LEVEL_OPTION: &str = "file.compression.zstd-level";
const FILE_FORMAT_OPTION: &str = "file.format";
const DATA_FILE_PREFIX_OPTION: &str = "data-file.prefix";
const VECTOR_FILE_FORMAT_OPTION: &str = "vector.file.format";
const VECTOR_TARGET_FILE_SIZE_OPTION: &str = "vector.target-file-size";
const CHANGELOG_FILE_PREFIX_OPTION: &str = "changelog-file.prefix";
const CHANGELOG_FILE_FORMAT_OPTION: &str = "changelog-file.format";
const CHANGELOG_FILE_COMPRESSION_OPTION: &str = "changelog-file.compression";
const CHANGELOG_FILE_STATS_MODE_OPTION: &str = "changelog-file.stats-mode";
const METADATA_STATS_MODE_OPTION: &str = "metadata.stats-mode";
const METADATA_STATS_MODE_PER_LEVEL_OPTION: &str = "metadata.stats-mode.per.level";
const METADATA_STATS_DENSE_STORE_OPTION: &str = "metadata.stats-dense-store";
const METADATA_STATS_KEEP_FIRST_N_COLUMNS_OPTION: &str = "metadata.stats-keep-first-n-columns";
const DEFAULT_METADATA_STATS_MODE: &str = "truncate(16)";
const DEFAULT_METADATA_STATS_DENSE_STORE: bool = true;
const DEFAULT_METADATA_STATS_KEEP_FIRST_N_COLUMNS: i32 = -1;
const FIELDS_PREFIX: &str = "fields";
const STATS_MODE_SUFFIX: &str = "stats-mode";
const ROW_TRACKING_ENABLED_OPTION: &str = "row-tracking.enabled";
const ROW_TRACKING_PARTITION_GROUP_ON_COMMIT_OPTION: &str =
    "row-tracking.partition-group-on-commit";
const CLUSTERING_INCREMENTAL_OPTION: &str = "clustering.incremental";
pub(crate) const TABLE_TYPE_OPTION: &str = "type";

pub(crate) const PATH_OPTION: &str = "path";
const MANIFEST_COMPRESSION_OPTION: &str = "manifest.compression";
const MANIFEST_TARGET_FILE_SIZE_OPTION: &str = "manifest.target-file-size";
const MANIFEST_TARGET_SIZE_OPTION: &str = "manifest.target-size";
const MANIFEST_SIDECAR_ENABLED_OPTION: &str = "manifest.sidecar.enabled";
const MANIFEST_SORT_ENABLED_OPTION: &str = "manifest-sort.enabled";
const SCAN_MANIFEST_PARALLELISM_OPTION: &str = "scan.manifest.parallelism";
const WRITE_PARQUET_BUFFER_SIZE_OPTION: &str = "write.parquet-buffer-size";
const READ_BATCH_SIZE_OPTION: &str = "read.batch-size";
const PARQUET_FILTER_COLUMN_INDEX_ENABLED_OPTION: &str = "parquet.filter.columnindex.enabled";
const PARQUET_WRITE_PAGE_INDEX_ENABLED_OPTION: &str = "parquet.write-page-index.enabled";
const PARQUET_ROW_GROUP_PARALLELISM_OPTION: &str = "read.parquet.row-group.parallelism";
pub(crate) const PARQUET_ROW_GROUP_MAX_INFLIGHT_BYTES_OPTION: &str =
    "read.parquet.row-group.max-inflight-bytes";
const MOSAIC_READ_PREFETCH_ROW_GROUPS_OPTION: &str = "mosaic.read.prefetch-row-groups";
pub(crate) const MOSAIC_READ_PREFETCH_MAX_BYTES_OPTION: &str = "mosaic.read.prefetch-max-bytes";
pub(crate) const TABLE_READ_SEQUENCE_NUMBER_ENABLED_OPTION: &str =
    "table-read.sequence-number.enabled";
pub(crate) const SEQUENCE_FIELD_OPTION: &str = "sequence.field";
const SEQUENCE_FIELD_SORT_ORDER_OPTION: &str = "sequence.field.sort-order";
pub(crate) const DISABLE_EXPLICIT_TYPE_CASTING_OPTION: &str = "disable-explicit-type-casting";
pub(crate) const DISABLE_ALTER_COLUMN_NULL_TO_NOT_NULL_OPTION: &str =
    "alter-column-null-to-not-null.disabled";
const MERGE_ENGINE_OPTION: &str = "merge-engine";
pub(crate) const CHANGELOG_PRODUCER_OPTION: &str = "changelog-producer";
const ROWKIND_FIELD_OPTION: &str = "rowkind.field";
const IGNORE_DELETE_OPTION: &str = "ignore-delete";
const IGNORE_UPDATE_BEFORE_OPTION: &str = "ignore-update-before";
pub(super) const IGNORE_DELETE_FALLBACK_KEYS: &[&str] = &[
    "first-row.ignore-delete",
    "deduplicate.ignore-delete",
    "partial-update.ignore-delete",
];
const DIFF_PARALLELISM_OPTION: &str = "diff.parallelism";
const DEFAULT_DIFF_PARALLELISM: usize = 4;
const DEFAULT_COMMIT_MAX_RETRIES: u32 = 10;
/// Java types `commit.timeout` as a duration with no default and treats an
/// absent value as `Long.MAX_VALUE`, i.e. the retry budget alone bounds the
/// loop. `u64::MAX` is the equivalent sentinel here: the value is only ever
/// compared against elapsed time, never used in arithmetic.
const DEFAULT_COMMIT_TIMEOUT_MS: u64 = u64::MAX;
const DEFAULT_COMMIT_MIN_RETRY_WAIT_MS: u64 = 10;
const DEFAULT_COMMIT_MAX_RETRY_WAIT_MS: u64 = 10_000;
pub const SCAN_TIMESTAMP_MILLIS_OPTION: &str = "scan.timestamp-millis";
/// Local date/time string used for snapshot time travel, matching Java Paimon.
pub const SCAN_TIMESTAMP_OPTION: &str = "scan.timestamp";
pub const SCAN_VERSION_OPTION: &str = "scan.version";
pub const SCAN_SNAPSHOT_ID_OPTION: &str = "scan.snapshot-id";
pub const SCAN_TAG_NAME_OPTION: &str = "scan.tag-name";
const INCREMENTAL_BETWEEN_OPTION: &str = "incremental-between";
const INCREMENTAL_BETWEEN_TIMESTAMP_OPTION: &str = "incremental-between-timestamp";
const INCREMENTAL_BETWEEN_SCAN_MODE_OPTION: &str = "incremental-between-scan-mode";
pub const SCAN_WATERMARK_OPTION: &str = "scan.watermark";
const SCAN_MODE_OPTION: &str = "scan.mode";
const DEFAULT_SOURCE_SPLIT_TARGET_SIZE: i64 = 128 * 1024 * 1024;
const DEFAULT_SOURCE_SPLIT_OPEN_FILE_COST: i64 = 4 * 1024 * 1024;
const DEFAULT_MANIFEST_COMPRESSION: &str = "zstd";
const DEFAULT_MANIFEST_TARGET_FILE_SIZE: i64 = 8 * 1024 * 1024;
const DEFAULT_PARTITION_DEFAULT_NAME: &str = "__DEFAULT_PARTITION__";
const DEFAULT_CHANGELOG_FILE_PREFIX: &str = "changelog-";
const DEFAULT_TARGET_FILE_SIZE: i64 = 256 * 1024 * 1024;
const DEFAULT_WRITE_PARQUET_BUFFER_SIZE: i64 = 256 * 1024 * 1024;
const DEFAULT_READ_BATCH_SIZE: usize = 1024;
const DEFAULT_PARQUET_ROW_GROUP_PARALLELISM: usize = 8;
const DEFAULT_PARQUET_ROW_GROUP_MAX_INFLIGHT_BYTES: i64 = 256 * 1024 * 1024;
const DEFAULT_MOSAIC_READ_PREFETCH_ROW_GROUPS: usize = 8;
const DEFAULT_MOSAIC_READ_PREFETCH_MAX_BYTES: i64 = 64 * 1024 * 1024;
const DYNAMIC_BUCKET_TARGET_ROW_NUM_OPTION: &str = "dynamic-bucket.target-row-num";
const DEFAULT_DYNAMIC_BUCKET_TARGET_ROW_NUM: i64 = 2_000_000;
pub(crate) const MAX_DYNAMIC_BUCKETS: i32 = 32768;
const DYNAMIC_BUCKET_MAX_BUCKETS_OPTION: &str = "dynamic-bucket.max-buckets";
const DEFAULT_GLOBAL_INDEX_ROW_COUNT_PER_SHARD: i64 = 100_000;
const DEFAULT_GLOBAL_INDEX_THREAD_NUM: i64 = 32;
pub(crate) const DEFAULT_GLOBAL_INDEX_VINDEX_READ_THREAD_NUM: usize = 64;
const MAX_GLOBAL_INDEX_VINDEX_READ_THREAD_NUM: i64 = tokio::sync::Semaphore::MAX_PERMITS as i64;
const MAX_GLOBAL_INDEX_THREAD_NUM: i64 = {
    let tokio_max = (usize::MAX >> 3) as u64;
    let i32_max = i32::MAX as u64;
    if tokio_max < i32_max {
        tokio_max as i64
    } else {
        i32_max as i64
    }
};
const DEFAULT_GLOBAL_INDEX_FALLBACK_SCAN_MAX_SIZE: i64 = 256 * 1024 * 1024;
const DEFAULT_BTREE_INDEX_CACHE_SIZE: i64 = 128 * 1024 * 1024;
const DEFAULT_BTREE_INDEX_HIGH_PRIORITY_POOL_RATIO: f64 = 0.1;
const BLOB_AS_DESCRIPTOR_OPTION: &str = "blob-as-descriptor";
pub(crate) const BLOB_FIELD_OPTION: &str = "blob-field";
pub(crate) const BLOB_DESCRIPTOR_FIELD_OPTION: &str = "blob-descriptor-field";
pub(crate) const BLOB_DESCRIPTOR_FIELD_FALLBACK: &str = "blob.stored-descriptor-fields";
pub(crate) const BLOB_VIEW_FIELD_OPTION: &str = "blob-view-field";
pub(crate) const VIDEO_FRAME_FIELD_OPTION: &str = "video-frame-field";
pub const BLOB_VIEW_RESOLVE_ENABLED_OPTION: &str = "blob-view.resolve.enabled";
const PK_VECTOR_INDEX_COLUMNS_OPTION: &str = "pk-vector.index.columns";
const PK_FULL_TEXT_INDEX_COLUMNS_OPTION: &str = "pk-full-text.index.columns";

/// Merge engine for primary-key tables.
///
/// Reference: Java `CoreOptions.MergeEngine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeEngine {
    /// Keep the row with the highest sequence number (default).
    Deduplicate,
    /// Merge same-key rows field-by-field, usually keeping non-null updates.
    PartialUpdate,
    /// Keep the first row for each key (ignore later updates).
    FirstRow,
    /// Apply per-field aggregate functions across rows sharing the same key.
    Aggregation,
}

/// Changelog producer for table writes.
///
/// Reference: Java `CoreOptions.ChangelogProducer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangelogProducer {
    /// No changelog file.
    None,
    /// Double write input rows to changelog files.
    Input,
    /// Generate changelog files during full compaction.
    FullCompaction,
    /// Generate changelog files through lookup compaction.
    Lookup,
}

/// Action when a partial-column update touches globally indexed columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlobalIndexColumnUpdateAction {
    ThrowError,
    DropPartitionIndex,
    /// Preserve existing indexes. As in Java, the caller must refresh affected
    /// index ranges separately before relying on their updated values.
    Ignore,
}

/// Search mode for global index queries.
///
/// Reference: Java `CoreOptions.GlobalIndexSearchMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlobalIndexSearchMode {
    /// Only search indexed data.
    Fast,
    /// Use snapshot `next_row_id` and global index coverage to detect missing row IDs.
    Full,
    /// Use actual data-file row ID ranges to detect exact missing row IDs.
    Detail,
}

/// Metadata stats collection mode.
///
/// Reference: Java `SimpleColStatsCollector.from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MetadataStatsMode {
    None,
    Counts,
    Full,
    Truncate(usize),
}

impl MetadataStatsMode {
    pub(crate) fn parse(option_name: &str, value: &str) -> crate::Result<Self> {
        let value = value.trim();
        let upper = value.to_ascii_uppercase();
        match upper.as_str() {
            "NONE" => Ok(Self::None),
            "COUNTS" => Ok(Self::Counts),
            "FULL" => Ok(Self::Full),
            _ => {
                let Some(length) = upper
                    .strip_prefix("TRUNCATE(")
                    .and_then(|value| value.strip_suffix(')'))
                else {
                    return Err(crate::Error::Unsupported {
                        message: format!("Unsupported {option_name}: '{value}'"),
                    });
                };
                let length = length
                    .parse::<usize>()
                    .map_err(|e| crate::Error::DataInvalid {
                        message: format!(
                            "Option '{option_name}' must use truncate(N) with a positive integer, got: {value}"
                        ),
                        source: Some(Box::new(e)),
                    })?;
                if length == 0 {
                    return Err(crate::Error::DataInvalid {
                        message: format!(
                            "Option '{option_name}' must use truncate(N) with N > 0, got: {value}"
                        ),
                        source: None,
                    });
                }
                Ok(Self::Truncate(length))
            }
        }
    }
}

/// Bucket function used to map bucket keys to fixed bucket ids.
///
/// Reference: Java `CoreOptions.BucketFunctionType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BucketFunctionType {
    Default,
    Mod,
    Hive,
}

impl BucketFunctionType {
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::Mod => "mod",
            Self::Hive => "hive",
        }
    }
}

impl ChangelogProducer {
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Input => "input",
            Self::FullCompaction => "full-compaction",
            Self::Lookup => "lookup",
        }
    }
}

pub(crate) fn first_row_supports_changelog_producer(producer: ChangelogProducer) -> bool {
    matches!(
        producer,
        ChangelogProducer::None | ChangelogProducer::Lookup
    )
}

/// Format the bucket directory name for a given bucket number.
/// Returns `"bucket-postpone"` for `POSTPONE_BUCKET` (-2), otherwise `"bucket-{N}"`.
pub fn bucket_dir_name(bucket: i32) -> String {
    if bucket == POSTPONE_BUCKET {
        POSTPONE_BUCKET_DIR.to_string()
    } else {
        format!("bucket-{bucket}")
    }
}

/// Typed accessors for common table options.
///
/// This mirrors pypaimon's `CoreOptions` pattern while staying lightweight.
#[derive(Debug, Clone, Copy)]
pub struct CoreOptions<'a> {
    options: &'a HashMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TimeTravelSelector<'a> {
    TimestampMillis(i64),
    /// `scan.watermark`: batch time travel to the earliest snapshot whose
    /// watermark is greater than or equal to the value (millis).
    Watermark(i64),
    /// `scan.version` (SQL `VERSION AS OF`): ambiguous by design. Resolved at
    /// scan time as tag name (if a tag exists) → `watermark-<value>` → snapshot
    /// id (if parseable) → error. `option_name` is kept for error attribution.
    Version {
        value: &'a str,
        option_name: &'static str,
    },
    /// `scan.snapshot-id`: an explicit snapshot id. Resolved strictly by
    /// parsing `value` as an id — never falls back to a tag lookup.
    SnapshotId {
        value: &'a str,
        option_name: &'static str,
    },
    /// `scan.tag-name`: an explicit tag name. Resolved strictly by tag lookup —
    /// never falls back to a snapshot id.
    TagName {
        value: &'a str,
        option_name: &'static str,
    },
}

impl<'a> CoreOptions<'a> {
    pub fn new(options: &'a HashMap<String, String>) -> Self {
        Self { options }
    }

    /// Preferred number of rows emitted by file-format readers.
    ///
    /// Mirrors Java Paimon's `CoreOptions.READ_BATCH_SIZE`.
    pub fn read_batch_size(&self) -> crate::Result<usize> {
        let Some(raw) = self.options.get(READ_BATCH_SIZE_OPTION) else {
            return Ok(DEFAULT_READ_BATCH_SIZE);
        };
        let value = raw
            .parse::<i32>()
            .map_err(|error| crate::Error::DataInvalid {
                message: format!(
                    "Option '{READ_BATCH_SIZE_OPTION}' must be a positive integer, got: {raw}"
                ),
                source: Some(Box::new(error)),
            })?;
        if value <= 0 {
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "Option '{READ_BATCH_SIZE_OPTION}' must be greater than 0, got: {value}"
                ),
                source: None,
            });
        }
        Ok(value as usize)
    }

    /// Maximum concurrent Parquet row-group reads per scan. Set to `1` to disable.
    pub fn parquet_row_group_parallelism(&self) -> crate::Result<usize> {
        let Some(raw) = self.options.get(PARQUET_ROW_GROUP_PARALLELISM_OPTION) else {
            return Ok(DEFAULT_PARQUET_ROW_GROUP_PARALLELISM);
        };
        let value = raw
            .parse::<usize>()
            .map_err(|error| crate::Error::DataInvalid {
                message: format!(
                    "Option '{PARQUET_ROW_GROUP_PARALLELISM_OPTION}' must be a positive integer, got: {raw}"
                ),
                source: Some(Box::new(error)),
            })?;
        if value == 0 {
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "Option '{PARQUET_ROW_GROUP_PARALLELISM_OPTION}' must be greater than 0"
                ),
                source: None,
            });
        }
        Ok(value)
    }

    /// Maximum concurrent manifest reads during scan planning.
    ///
    /// Matches Java Paimon's `scan.manifest.parallelism`: when unset, use the
    /// number of processors available to this process.
    pub fn scan_manifest_parallelism(&self) -> crate::Result<usize> {
        let Some(raw) = self.options.get(SCAN_MANIFEST_PARALLELISM_OPTION) else {
            return Ok(std::thread::available_parallelism()
                .map(|value| value.get())
                .unwrap_or(1));
        };
        let value = raw
            .parse::<usize>()
            .map_err(|error| crate::Error::DataInvalid {
                message: format!(
                    "Option '{SCAN_MANIFEST_PARALLELISM_OPTION}' must be a positive integer, got: {raw}"
                ),
                source: Some(Box::new(error)),
            })?;
        if value == 0 {
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "Option '{SCAN_MANIFEST_PARALLELISM_OPTION}' must be greater than 0"
                ),
                source: None,
            });
        }
        Ok(value)
    }

    /// Mosaic row groups kept opening ahead of the consumer per file; `0` disables prefetch.
    pub fn mosaic_read_prefetch_row_groups(&self) -> crate::Result<usize> {
        let Some(raw) = self.options.get(MOSAIC_READ_PREFETCH_ROW_GROUPS_OPTION) else {
            return Ok(DEFAULT_MOSAIC_READ_PREFETCH_ROW_GROUPS);
        };
        raw.parse::<usize>().map_err(|error| crate::Error::DataInvalid {
            message: format!(
                "Option '{MOSAIC_READ_PREFETCH_ROW_GROUPS_OPTION}' must be a non-negative integer, got: {raw}"
            ),
            source: Some(Box::new(error)),
        })
    }

    /// Estimated decoded bytes a Mosaic file may hold in flight beyond the head row group.
    pub fn mosaic_read_prefetch_max_bytes(&self) -> crate::Result<u64> {
        let value = match self.options.get(MOSAIC_READ_PREFETCH_MAX_BYTES_OPTION) {
            Some(raw) => parse_memory_size(raw).ok_or_else(|| crate::Error::DataInvalid {
                message: format!(
                    "Option '{MOSAIC_READ_PREFETCH_MAX_BYTES_OPTION}' must be a valid memory size, got: {raw}"
                ),
                source: None,
            })?,
            None => DEFAULT_MOSAIC_READ_PREFETCH_MAX_BYTES,
        };
        u64::try_from(value)
            .ok()
            .filter(|value| *value > 0)
            .ok_or_else(|| crate::Error::DataInvalid {
                message: format!(
                    "Option '{MOSAIC_READ_PREFETCH_MAX_BYTES_OPTION}' must be greater than 0, got: {value}"
                ),
                source: None,
            })
    }

    /// Scan-wide projected uncompressed bytes for concurrent Parquet row groups.
    pub fn parquet_row_group_max_inflight_bytes(&self) -> crate::Result<u64> {
        let value = match self
            .options
            .get(PARQUET_ROW_GROUP_MAX_INFLIGHT_BYTES_OPTION)
        {
            Some(raw) => parse_memory_size(raw).ok_or_else(|| crate::Error::DataInvalid {
                message: format!(
                    "Option '{PARQUET_ROW_GROUP_MAX_INFLIGHT_BYTES_OPTION}' must be a valid memory size, got: {raw}"
                ),
                source: None,
            })?,
            None => DEFAULT_PARQUET_ROW_GROUP_MAX_INFLIGHT_BYTES,
        };
        u64::try_from(value)
            .ok()
            .filter(|value| *value > 0)
            .ok_or_else(|| crate::Error::DataInvalid {
                message: format!(
                    "Option '{PARQUET_ROW_GROUP_MAX_INFLIGHT_BYTES_OPTION}' must be greater than 0, got: {value}"
                ),
                source: None,
            })
    }

    /// Reject scan options whose semantics the Rust core does not yet implement.
    ///
    /// These are not malformed input — they are unimplemented scan modes — so
    /// they surface as `Error::Unsupported` (mapped to `NotImplementedError` at
    /// the Python boundary). Explicit `scan.mode=from-snapshot` /
    /// `from-timestamp` are the modes Java's `CoreOptions.setDefaultValues()`
    /// writes next to the corresponding selector, so they are accepted when
    /// that selector is present (the batch-read semantics are identical to
    /// leaving the mode at `default`); an explicit mode without its selector
    /// is malformed input (`Error::DataInvalid`), mirroring Java's
    /// `SchemaValidation`. All other non-default modes are unimplemented.
    pub fn validate_scan_options(&self) -> crate::Result<()> {
        for key in [
            INCREMENTAL_BETWEEN_OPTION,
            INCREMENTAL_BETWEEN_TIMESTAMP_OPTION,
            INCREMENTAL_BETWEEN_SCAN_MODE_OPTION,
        ] {
            if self.options.contains_key(key) {
                return Err(crate::Error::Unsupported {
                    message: format!("Scan option '{key}' is not supported by the Rust reader yet"),
                });
            }
        }
        if let Some(mode) = self.options.get(SCAN_MODE_OPTION) {
            let selector_keys: &[&str] = if mode.eq_ignore_ascii_case("default") {
                return Ok(());
            } else if mode.eq_ignore_ascii_case("from-snapshot") {
                &[
                    SCAN_SNAPSHOT_ID_OPTION,
                    SCAN_TAG_NAME_OPTION,
                    SCAN_VERSION_OPTION,
                    SCAN_WATERMARK_OPTION,
                ]
            } else if mode.eq_ignore_ascii_case("from-timestamp") {
                &[SCAN_TIMESTAMP_MILLIS_OPTION, SCAN_TIMESTAMP_OPTION]
            } else {
                return Err(crate::Error::Unsupported {
                    message: format!(
                        "Scan option 'scan.mode={mode}' is not supported by the Rust reader yet"
                    ),
                });
            };
            if !selector_keys
                .iter()
                .any(|key| self.options.contains_key(*key))
            {
                return Err(crate::Error::DataInvalid {
                    message: format!(
                        "Scan option 'scan.mode={mode}' requires one of {} to be set",
                        selector_keys.join(", ")
                    ),
                    source: None,
                });
            }
        }
        Ok(())
    }

    pub fn deletion_vectors_enabled(&self) -> bool {
        self.options
            .get(DELETION_VECTORS_ENABLED_OPTION)
            .map(|value| value.eq_ignore_ascii_case("true"))
            .unwrap_or(false)
    }

    /// Whether reads expose the `_SEQUENCE_NUMBER` system column
    /// (`table-read.sequence-number.enabled`, default `false`).
    ///
    /// Only meaningful for primary-key tables: the sequence number lives in the
    /// merge key, so an append table has no such column to project.
    pub fn table_read_sequence_number_enabled(&self) -> bool {
        self.options
            .get(TABLE_READ_SEQUENCE_NUMBER_ENABLED_OPTION)
            .map(|value| value.eq_ignore_ascii_case("true"))
            .unwrap_or(false)
    }

    /// Whether `deletion-vectors.merge-on-read` is set (default `false`, matching
    /// Java `CoreOptions.DELETION_VECTORS_MERGE_ON_READ`). When true, uncompacted
    /// (level-0) data is made visible by merging on read; when false, deletion
    /// vectors alone determine live rows over the compacted files.
    pub fn deletion_vectors_merge_on_read(&self) -> bool {
        self.options
            .get(DELETION_VECTORS_MERGE_ON_READ_OPTION)
            .map(|value| value.eq_ignore_ascii_case("true"))
            .unwrap_or(false)
    }

    /// Whether `query-auth.enabled` is set.
    ///
    /// When set, the server enforces a per-user row filter / column masking that this client
    /// can't yet apply, so read paths fail closed (see `ensure_read_authorized`).
    pub fn query_auth_enabled(&self) -> bool {
        self.options
            .get(QUERY_AUTH_ENABLED_OPTION)
            .map(|value| value.eq_ignore_ascii_case("true"))
            .unwrap_or(false)
    }

    /// Fail closed at every storage boundary (build, plan, materialize): refuses a
    /// `query-auth.enabled` table — this client can't enforce its row filter / column
    /// masking — and a table whose declared type needs an engine of its own, which
    /// this client would misread as Paimon.
    pub fn ensure_read_authorized(&self) -> crate::Result<()> {
        self.ensure_query_auth_absent()?;
        let declared = self.table_type()?;
        if declared.requires_table_engine() {
            return Err(crate::Error::Unsupported {
                message: format!(
                    "a table declared '{declared}' cannot be served as a Paimon table"
                ),
            });
        }
        Ok(())
    }

    /// Type-only half of [`Self::ensure_read_authorized`], for paths that must
    /// not touch an engine-served table's storage but stay usable under
    /// `query-auth` (e.g. best-effort cleanup).
    pub(crate) fn ensure_type_paimon_served(&self, full_name: &str) -> crate::Result<()> {
        let declared = self.table_type()?;
        if declared.requires_table_engine() {
            return Err(crate::Error::Unsupported {
                message: format!(
                    "table '{full_name}' is declared '{declared}' and cannot be served as a Paimon table"
                ),
            });
        }
        Ok(())
    }

    fn ensure_query_auth_absent(&self) -> crate::Result<()> {
        if self.query_auth_enabled() {
            return Err(crate::Error::Unsupported {
                message: "reading a table with 'query-auth.enabled' = true is not supported: \
                          the Rust client cannot yet enforce its row-level auth filter / column \
                          masking, so it refuses to read to avoid returning unfiltered data"
                    .to_string(),
            });
        }
        Ok(())
    }

    /// Returns the user-specified sequence field names, if configured.
    /// When set, the values of these columns are used as `_SEQUENCE_NUMBER` instead of auto-increment.
    /// Multiple fields can be comma-separated (e.g. `"col_a,col_b"`).
    pub fn sequence_fields(&self) -> Vec<&str> {
        self.options
            .get(SEQUENCE_FIELD_OPTION)
            .map(|s| s.split(',').map(str::trim).collect())
            .unwrap_or_default()
    }

    /// User sequence fields sort ascending unless explicitly configured descending.
    /// Null sequences remain smaller than non-null sequences in either order.
    pub fn sequence_field_sort_order_is_ascending(&self) -> bool {
        !self
            .options
            .get(SEQUENCE_FIELD_SORT_ORDER_OPTION)
            .is_some_and(|order| order.eq_ignore_ascii_case("descending"))
    }

    /// Merge engine for primary-key tables. Default is `Deduplicate`.
    pub fn merge_engine(&self) -> crate::Result<MergeEngine> {
        match self.options.get(MERGE_ENGINE_OPTION) {
            None => Ok(MergeEngine::Deduplicate),
            Some(v) => match v.to_ascii_lowercase().as_str() {
                "deduplicate" => Ok(MergeEngine::Deduplicate),
                "partial-update" => Ok(MergeEngine::PartialUpdate),
                "first-row" => Ok(MergeEngine::FirstRow),
                "aggregation" => Ok(MergeEngine::Aggregation),
                other => Err(crate::Error::Unsupported {
                    message: format!("Unsupported merge-engine: '{other}'"),
                }),
            },
        }
    }

    /// Raw changelog producer setting. Default is `"none"`.
    pub fn changelog_producer(&self) -> &str {
        self.options
            .get(CHANGELOG_PRODUCER_OPTION)
            .map(String::as_str)
            .unwrap_or("none")
    }

    /// Typed changelog producer setting. Default is `None`.
    pub fn try_changelog_producer(&self) -> crate::Result<ChangelogProducer> {
        match self.options.get(CHANGELOG_PRODUCER_OPTION) {
            None => Ok(ChangelogProducer::None),
            Some(v) => match v.to_ascii_lowercase().as_str() {
                "none" => Ok(ChangelogProducer::None),
                "input" => Ok(ChangelogProducer::Input),
                "full-compaction" => Ok(ChangelogProducer::FullCompaction),
                "lookup" => Ok(ChangelogProducer::Lookup),
                other => Err(crate::Error::Unsupported {
                    message: format!("Unsupported changelog-producer: '{other}'"),
                }),
            },
        }
    }

    /// The `rowkind.field` option: a user column whose value encodes the row kind.
    pub fn rowkind_field(&self) -> Option<&str> {
        self.options.get(ROWKIND_FIELD_OPTION).map(String::as_str)
    }

    /// Whether to ignore delete records (and all retracts when used by `RowKindFilter`).
    pub fn ignore_delete(&self) -> bool {
        for key in
            std::iter::once(IGNORE_DELETE_OPTION).chain(IGNORE_DELETE_FALLBACK_KEYS.iter().copied())
        {
            if let Some(v) = self.options.get(key) {
                return v.eq_ignore_ascii_case("true");
            }
        }
        false
    }

    /// Whether to ignore update-before records at write time.
    pub fn ignore_update_before(&self) -> bool {
        self.options
            .get(IGNORE_UPDATE_BEFORE_OPTION)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }

    /// Parallelism for batch incremental Diff pair reads (`diff.parallelism`).
    ///
    /// Default is 4; values below 1 are clamped to 1.
    pub fn diff_parallelism(&self) -> usize {
        self.options
            .get(DIFF_PARALLELISM_OPTION)
            .and_then(|s| s.parse().ok())
            .unwrap_or(DEFAULT_DIFF_PARALLELISM)
            .max(1)
    }

    /// How many partition directories a Format Table scan lists at once
    /// (`format-table.scan.list-parallelism`).
    ///
    /// Default is 64; values are clamped to `[1, 1000]`, as Java clamps them.
    pub fn format_table_scan_list_parallelism(&self) -> usize {
        self.options
            .get(FORMAT_TABLE_SCAN_LIST_PARALLELISM_OPTION)
            .and_then(|value| value.trim().parse::<i64>().ok())
            .map(|value| value.clamp(1, MAX_FORMAT_TABLE_SCAN_LIST_PARALLELISM) as usize)
            .unwrap_or(DEFAULT_FORMAT_TABLE_SCAN_LIST_PARALLELISM)
    }

    pub fn data_evolution_enabled(&self) -> bool {
        self.options
            .get(DATA_EVOLUTION_ENABLED_OPTION)
            .map(|value| value.eq_ignore_ascii_case("true"))
            .unwrap_or(false)
    }

    /// Whether normal Data Evolution files also write an aligned ROW sidecar.
    pub fn data_evolution_row_sidecar_enabled(&self) -> crate::Result<bool> {
        match self.options.get("data-evolution.row-sidecar.enabled") {
            None => Ok(false),
            Some(value) if value.eq_ignore_ascii_case("true") => Ok(true),
            Some(value) if value.eq_ignore_ascii_case("false") => Ok(false),
            Some(value) => Err(crate::Error::ConfigInvalid {
                message: format!(
                    "data-evolution.row-sidecar.enabled must be true or false, got {value}"
                ),
            }),
        }
    }

    /// Largest sparse selection served by a ROW sidecar. Java defaults to 4096.
    pub fn data_evolution_row_sidecar_max_selected_rows(&self) -> crate::Result<i64> {
        let option = "data-evolution.row-sidecar.max-selected-rows";
        let rows = self.parse_i64_option(option)?.unwrap_or(4096);
        if rows <= 0 {
            return Err(crate::Error::ConfigInvalid {
                message: format!("{option} must be positive, got {rows}"),
            });
        }
        Ok(rows)
    }

    /// Largest fraction of a file served by a ROW sidecar. Java defaults to 0.05.
    pub fn data_evolution_row_sidecar_max_selection_ratio(&self) -> crate::Result<f64> {
        let option = "data-evolution.row-sidecar.max-selection-ratio";
        let ratio = match self.options.get(option) {
            Some(raw) => raw
                .trim()
                .parse::<f64>()
                .map_err(|_| crate::Error::ConfigInvalid {
                    message: format!("Invalid {option}: {raw}"),
                })?,
            None => 0.05,
        };
        if !(ratio > 0.0 && ratio <= 1.0) {
            return Err(crate::Error::ConfigInvalid {
                message: format!("{option} must be in (0, 1], got {ratio}"),
            });
        }
        Ok(ratio)
    }

    pub fn data_evolution_write_cols_optimization_enabled(&self) -> bool {
        self.options
            .get("data-evolution.write-cols-optimization.enabled")
            .map(|value| value.eq_ignore_ascii_case("true"))
            .unwrap_or(false)
    }

    pub fn data_evolution_nested_field_enabled(&self) -> bool {
        self.options
            .get(DATA_EVOLUTION_NESTED_FIELD_ENABLED_OPTION)
            .map(|value| value.eq_ignore_ascii_case("true"))
            .unwrap_or(false)
    }

    /// Maximum complete FileIndex size stored in the manifest. Default is 500 bytes.
    pub(crate) fn file_index_in_manifest_threshold(&self) -> crate::Result<i64> {
        match self.options.get("file-index.in-manifest-threshold") {
            None => Ok(500),
            Some(raw) => parse_memory_size(raw).ok_or_else(|| crate::Error::ConfigInvalid {
                message: format!("Invalid file-index.in-manifest-threshold: {raw}"),
            }),
        }
    }

    /// Whether raw data-file reads use FileIndex pruning. Default is true.
    pub fn file_index_read_enabled(&self) -> bool {
        self.options
            .get(FILE_INDEX_READ_ENABLED_OPTION)
            .map(|value| value.eq_ignore_ascii_case("true"))
            .unwrap_or(true)
    }

    /// Whether Parquet page indexes are used for page pruning. Default is true.
    pub fn parquet_filter_column_index_enabled(&self) -> crate::Result<bool> {
        let Some(raw) = self.options.get(PARQUET_FILTER_COLUMN_INDEX_ENABLED_OPTION) else {
            return Ok(true);
        };
        match raw.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(crate::Error::ConfigInvalid {
                message: format!(
                    "Option '{PARQUET_FILTER_COLUMN_INDEX_ENABLED_OPTION}' must be true or false, got: {raw}"
                ),
            }),
        }
    }

    /// Whether newly written Parquet files include page indexes. Default is true.
    pub fn parquet_write_page_index_enabled(&self) -> crate::Result<bool> {
        let Some(raw) = self.options.get(PARQUET_WRITE_PAGE_INDEX_ENABLED_OPTION) else {
            return Ok(true);
        };
        match raw.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(crate::Error::ConfigInvalid {
                message: format!(
                    "Option '{PARQUET_WRITE_PAGE_INDEX_ENABLED_OPTION}' must be true or false, got: {raw}"
                ),
            }),
        }
    }

    /// The declared [`TableType`], defaulting to [`TableType::Table`].
    /// Fails on a value this client does not know.
    pub fn table_type(&self) -> crate::Result<TableType> {
        match self.options.get(TABLE_TYPE_OPTION) {
            Some(value) => value.parse(),
            None => Ok(TableType::default()),
        }
    }

    pub fn is_format_table(&self) -> bool {
        matches!(self.table_type(), Ok(TableType::FormatTable))
    }

    pub fn path(&self) -> Option<&str> {
        self.options.get(PATH_OPTION).map(String::as_str)
    }

    pub fn format_table_partition_only_value_in_path(&self) -> bool {
        self.options
            .get(FORMAT_TABLE_PARTITION_PATH_ONLY_VALUE_OPTION)
            .map(|value| value.eq_ignore_ascii_case("true"))
            .unwrap_or(false)
    }

    /// Whether the catalog manages this Format Table's partitions (`metastore.partitioned-table`).
    pub(crate) fn partitioned_table_in_metastore(&self) -> bool {
        self.options
            .get(METASTORE_PARTITIONED_TABLE_OPTION)
            .map(|value| value.eq_ignore_ascii_case("true"))
            .unwrap_or(false)
    }

    /// Whether the engine's own file source reads this Format Table instead of Paimon's reader
    /// (`format-table.implementation=engine`).
    pub(crate) fn format_table_implementation_is_engine(&self) -> bool {
        self.options
            .get(FORMAT_TABLE_IMPLEMENTATION_OPTION)
            .is_some_and(|value| value.eq_ignore_ascii_case("engine"))
    }

    pub fn global_index_enabled(&self) -> bool {
        self.options
            .get(GLOBAL_INDEX_ENABLED_OPTION)
            .map(|value| value.eq_ignore_ascii_case("true"))
            .unwrap_or(true)
    }

    /// Whether index files are stored in the bucket data-file directory rather
    /// than the table `index/` directory (option `index-file-in-data-file-dir`,
    /// default false).
    pub fn index_file_in_data_file_dir(&self) -> bool {
        self.options
            .get(INDEX_FILE_IN_DATA_FILE_DIR_OPTION)
            .map(|value| value.eq_ignore_ascii_case("true"))
            .unwrap_or(false)
    }

    pub fn global_index_search_mode(&self) -> crate::Result<GlobalIndexSearchMode> {
        self.index_search_mode(GLOBAL_INDEX_SEARCH_MODE_OPTION)
    }

    pub fn scalar_index_search_mode(&self) -> crate::Result<GlobalIndexSearchMode> {
        self.index_search_mode(SCALAR_INDEX_SEARCH_MODE_OPTION)
    }

    pub fn vector_index_search_mode(&self) -> crate::Result<GlobalIndexSearchMode> {
        self.index_search_mode(VECTOR_INDEX_SEARCH_MODE_OPTION)
    }

    pub fn full_text_index_search_mode(&self) -> crate::Result<GlobalIndexSearchMode> {
        self.index_search_mode(FULL_TEXT_INDEX_SEARCH_MODE_OPTION)
    }

    fn index_search_mode(&self, family_option: &str) -> crate::Result<GlobalIndexSearchMode> {
        let (option, value) = if let Some(value) = self.options.get(family_option) {
            (family_option, value)
        } else if let Some(value) = self.options.get(GLOBAL_INDEX_SEARCH_MODE_OPTION) {
            (GLOBAL_INDEX_SEARCH_MODE_OPTION, value)
        } else {
            return Ok(GlobalIndexSearchMode::Fast);
        };

        match value.to_ascii_lowercase().as_str() {
            "fast" => Ok(GlobalIndexSearchMode::Fast),
            "full" => Ok(GlobalIndexSearchMode::Full),
            "detail" => Ok(GlobalIndexSearchMode::Detail),
            other => Err(crate::Error::ConfigInvalid {
                message: format!("Unsupported {option}: {other}"),
            }),
        }
    }

    pub fn global_index_row_count_per_shard(&self) -> crate::Result<i64> {
        let value = self
            .parse_i64_option(GLOBAL_INDEX_ROW_COUNT_PER_SHARD_OPTION)?
            .unwrap_or(DEFAULT_GLOBAL_INDEX_ROW_COUNT_PER_SHARD);
        if value <= 0 {
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "Option '{}' must be greater than 0, got: {}",
                    GLOBAL_INDEX_ROW_COUNT_PER_SHARD_OPTION, value
                ),
                source: None,
            });
        }
        Ok(value)
    }

    /// Maximum number of concurrent global-index search tasks, mirroring Java
    /// `CoreOptions.GLOBAL_INDEX_THREAD_NUM` (key `global-index.thread-num`,
    /// default 32). Used as the per-operation fan-out limit for sorted BTree and
    /// bitmap shard reads, global-index vector search, and primary-key vector
    /// search. Vindex file range reads use
    /// [`Self::global_index_vindex_read_thread_num`] instead. A value of `1`
    /// makes these search tasks sequential, but does not serialize Vindex range
    /// reads. A non-positive value, or one above [`MAX_GLOBAL_INDEX_THREAD_NUM`],
    /// is a misconfiguration and fails loud rather than being silently clamped.
    pub fn global_index_thread_num(&self) -> crate::Result<usize> {
        let value = self
            .parse_i64_option(GLOBAL_INDEX_THREAD_NUM_OPTION)?
            .unwrap_or(DEFAULT_GLOBAL_INDEX_THREAD_NUM);
        if value <= 0 {
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "Option '{}' must be greater than 0, got: {}",
                    GLOBAL_INDEX_THREAD_NUM_OPTION, value
                ),
                source: None,
            });
        }
        if value > MAX_GLOBAL_INDEX_THREAD_NUM {
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "Option '{}' must not exceed {}, got: {}",
                    GLOBAL_INDEX_THREAD_NUM_OPTION, MAX_GLOBAL_INDEX_THREAD_NUM, value
                ),
                source: None,
            });
        }
        Ok(value as usize)
    }

    /// Maximum number of concurrent range reads shared by Vindex readers in one
    /// search operation (key `global-index.vindex.read-thread-num`, default 64).
    /// This is independent of [`Self::global_index_thread_num`].
    pub fn global_index_vindex_read_thread_num(&self) -> crate::Result<usize> {
        let value = self
            .parse_i64_option(GLOBAL_INDEX_VINDEX_READ_THREAD_NUM_OPTION)?
            .unwrap_or(DEFAULT_GLOBAL_INDEX_VINDEX_READ_THREAD_NUM as i64);
        if value <= 0 {
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "Option '{}' must be greater than 0, got: {}",
                    GLOBAL_INDEX_VINDEX_READ_THREAD_NUM_OPTION, value
                ),
                source: None,
            });
        }
        if value > MAX_GLOBAL_INDEX_VINDEX_READ_THREAD_NUM {
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "Option '{}' must not exceed {}, got: {}",
                    GLOBAL_INDEX_VINDEX_READ_THREAD_NUM_OPTION,
                    MAX_GLOBAL_INDEX_VINDEX_READ_THREAD_NUM,
                    value
                ),
                source: None,
            });
        }
        Ok(value as usize)
    }

    pub fn sorted_index_records_per_range(&self) -> crate::Result<i64> {
        let option = if self
            .options
            .contains_key(SORTED_INDEX_RECORDS_PER_RANGE_OPTION)
        {
            SORTED_INDEX_RECORDS_PER_RANGE_OPTION
        } else {
            BTREE_INDEX_RECORDS_PER_RANGE_OPTION
        };
        let value = self
            .parse_i64_option(option)?
            .unwrap_or(DEFAULT_GLOBAL_INDEX_ROW_COUNT_PER_SHARD);
        if value <= 0 {
            return Err(crate::Error::DataInvalid {
                message: format!("Option '{}' must be greater than 0, got: {}", option, value),
                source: None,
            });
        }
        Ok(value)
    }

    pub fn btree_index_fallback_scan_max_size(&self) -> crate::Result<i64> {
        self.fallback_scan_max_size(BTREE_INDEX_FALLBACK_SCAN_MAX_SIZE_OPTION)
    }

    pub fn btree_index_cache_size(&self) -> crate::Result<usize> {
        let value = match self.options.get(BTREE_INDEX_CACHE_SIZE_OPTION) {
            Some(raw) => parse_memory_size(raw).ok_or_else(|| crate::Error::DataInvalid {
                message: format!(
                    "Option '{}' must be a valid memory size, got: {}",
                    BTREE_INDEX_CACHE_SIZE_OPTION, raw
                ),
                source: None,
            })?,
            None => DEFAULT_BTREE_INDEX_CACHE_SIZE,
        };
        if value < 0 {
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "Option '{}' must be greater than or equal to 0, got: {}",
                    BTREE_INDEX_CACHE_SIZE_OPTION, value
                ),
                source: None,
            });
        }
        usize::try_from(value).map_err(|_| crate::Error::DataInvalid {
            message: format!(
                "Option '{}' is too large: {}",
                BTREE_INDEX_CACHE_SIZE_OPTION, value
            ),
            source: None,
        })
    }

    pub fn btree_index_high_priority_pool_ratio(&self) -> crate::Result<f64> {
        let value = match self
            .options
            .get(BTREE_INDEX_HIGH_PRIORITY_POOL_RATIO_OPTION)
        {
            Some(raw) => raw
                .trim()
                .parse::<f64>()
                .map_err(|_| crate::Error::DataInvalid {
                    message: format!(
                        "Option '{}' must be a valid number, got: {}",
                        BTREE_INDEX_HIGH_PRIORITY_POOL_RATIO_OPTION, raw
                    ),
                    source: None,
                })?,
            None => DEFAULT_BTREE_INDEX_HIGH_PRIORITY_POOL_RATIO,
        };
        if !(0.0..1.0).contains(&value) {
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "Option '{}' must be in the range [0, 1), got: {}",
                    BTREE_INDEX_HIGH_PRIORITY_POOL_RATIO_OPTION, value
                ),
                source: None,
            });
        }
        Ok(value)
    }

    pub fn btree_index_data_block_cache_size(&self) -> crate::Result<usize> {
        let total = self.btree_index_cache_size()?;
        let high_priority_ratio = self.btree_index_high_priority_pool_ratio()?;
        Ok((total as f64 * (1.0 - high_priority_ratio)) as usize)
    }

    pub fn bitmap_index_fallback_scan_max_size(&self) -> crate::Result<i64> {
        self.fallback_scan_max_size(BITMAP_INDEX_FALLBACK_SCAN_MAX_SIZE_OPTION)
    }

    fn fallback_scan_max_size(&self, option_name: &'static str) -> crate::Result<i64> {
        let value = match self.options.get(option_name) {
            Some(raw) => parse_memory_size(raw).ok_or_else(|| crate::Error::DataInvalid {
                message: format!(
                    "Option '{}' must be a valid memory size, got: {}",
                    option_name, raw
                ),
                source: None,
            })?,
            None => DEFAULT_GLOBAL_INDEX_FALLBACK_SCAN_MAX_SIZE,
        };
        if value < 0 {
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "Option '{}' must be greater than or equal to 0, got: {}",
                    option_name, value
                ),
                source: None,
            });
        }
        Ok(value)
    }

    pub fn global_index_column_update_action(
        &self,
    ) -> crate::Result<GlobalIndexColumnUpdateAction> {
        match self
            .options
            .get(GLOBAL_INDEX_COLUMN_UPDATE_ACTION_OPTION)
            .map(|v| v.to_ascii_uppercase())
            .as_deref()
            .unwrap_or("THROW_ERROR")
        {
            "THROW_ERROR" => Ok(GlobalIndexColumnUpdateAction::ThrowError),
            "DROP_PARTITION_INDEX" => Ok(GlobalIndexColumnUpdateAction::DropPartitionIndex),
            "IGNORE" => Ok(GlobalIndexColumnUpdateAction::Ignore),
            other => Err(crate::Error::ConfigInvalid {
                message: format!("Unsupported global-index.column-update-action: {other}"),
            }),
        }
    }

    pub fn source_split_target_size(&self) -> i64 {
        self.options
            .get(SOURCE_SPLIT_TARGET_SIZE_OPTION)
            .and_then(|value| parse_memory_size(value))
            .unwrap_or(DEFAULT_SOURCE_SPLIT_TARGET_SIZE)
    }

    pub fn source_split_open_file_cost(&self) -> i64 {
        self.options
            .get(SOURCE_SPLIT_OPEN_FILE_COST_OPTION)
            .and_then(|value| parse_memory_size(value))
            .unwrap_or(DEFAULT_SOURCE_SPLIT_OPEN_FILE_COST)
    }

    /// The default partition name for null/blank partition values.
    ///
    /// Corresponds to Java `CoreOptions.PARTITION_DEFAULT_NAME`.
    pub fn partition_default_name(&self) -> &str {
        self.options
            .get(PARTITION_DEFAULT_NAME_OPTION)
            .map(String::as_str)
            .unwrap_or(DEFAULT_PARTITION_DEFAULT_NAME)
    }

    /// Whether to use legacy partition name formatting (toString semantics).
    ///
    /// Corresponds to Java `CoreOptions.PARTITION_GENERATE_LEGACY_NAME`.
    /// Default: `true` to match Java Paimon.
    pub fn legacy_partition_name(&self) -> bool {
        self.options
            .get(PARTITION_LEGACY_NAME_OPTION)
            .map(|v| v.eq_ignore_ascii_case("true"))
            .unwrap_or(true)
    }

    fn parse_i64_option(&self, option_name: &'static str) -> crate::Result<Option<i64>> {
        match self.options.get(option_name) {
            Some(value) => value
                .parse::<i64>()
                .map(Some)
                .map_err(|e| crate::Error::DataInvalid {
                    message: format!("Invalid value for {option_name}: '{value}'"),
                    source: Some(Box::new(e)),
                }),
            None => Ok(None),
        }
    }

    /// Raw timestamp accessor for `scan.timestamp-millis`.
    ///
    /// This compatibility accessor is lossy: it returns `None` for absent or
    /// invalid values and does not validate selector conflicts. Internal
    /// time-travel planning should use `try_time_travel_selector`.
    pub fn scan_timestamp_millis(&self) -> Option<i64> {
        self.options
            .get(SCAN_TIMESTAMP_MILLIS_OPTION)
            .and_then(|v| v.parse().ok())
    }

    pub(crate) fn configured_time_travel_selectors(&self) -> Vec<&'static str> {
        let mut selectors = Vec::with_capacity(6);
        if self.options.contains_key(SCAN_TIMESTAMP_MILLIS_OPTION) {
            selectors.push(SCAN_TIMESTAMP_MILLIS_OPTION);
        }
        if self.options.contains_key(SCAN_TIMESTAMP_OPTION) {
            selectors.push(SCAN_TIMESTAMP_OPTION);
        }
        if self.options.contains_key(SCAN_WATERMARK_OPTION) {
            selectors.push(SCAN_WATERMARK_OPTION);
        }
        if self.options.contains_key(SCAN_VERSION_OPTION) {
            selectors.push(SCAN_VERSION_OPTION);
        }
        if self.options.contains_key(SCAN_SNAPSHOT_ID_OPTION) {
            selectors.push(SCAN_SNAPSHOT_ID_OPTION);
        }
        if self.options.contains_key(SCAN_TAG_NAME_OPTION) {
            selectors.push(SCAN_TAG_NAME_OPTION);
        }
        selectors
    }

    /// Validates and normalizes the internal time-travel selector.
    ///
    /// This is the semantic owner for selector mutual exclusion and strict
    /// numeric parsing.
    /// Fails when these options forbid the read outright, or ask for
    /// something a table engine cannot honor: a scan option this client does
    /// not support, or a historical state. Dropping any of them would answer
    /// with unfiltered or current data instead.
    ///
    /// Both the table's stored options and a session's options go through
    /// here, so neither source can skip a check the other applies.
    pub fn ensure_engine_can_serve(&self, full_name: &str) -> crate::Result<()> {
        self.ensure_query_auth_absent()?;
        self.validate_scan_options()?;
        if self.has_time_travel_selector() {
            return Err(crate::Error::Unsupported {
                message: format!(
                    "time travel is not supported for engine-served table '{full_name}'"
                ),
            });
        }
        Ok(())
    }

    /// Whether these options ask for a historical state of the table. A
    /// malformed selector counts too, so callers that cannot honor time
    /// travel reject rather than answer from the current state.
    pub fn has_time_travel_selector(&self) -> bool {
        !matches!(self.try_time_travel_selector(), Ok(None))
    }

    pub(crate) fn try_time_travel_selector(&self) -> crate::Result<Option<TimeTravelSelector<'a>>> {
        let selectors = self.configured_time_travel_selectors();
        if selectors.len() > 1 {
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "Only one time-travel selector may be set, found: {}",
                    selectors.join(", ")
                ),
                source: None,
            });
        }

        if let Some(ts) = self.parse_i64_option(SCAN_TIMESTAMP_MILLIS_OPTION)? {
            Ok(Some(TimeTravelSelector::TimestampMillis(ts)))
        } else if let Some(value) = self.options.get(SCAN_TIMESTAMP_OPTION) {
            Ok(Some(TimeTravelSelector::TimestampMillis(
                parse_scan_timestamp(value, &jiff::tz::TimeZone::system())?,
            )))
        } else if let Some(watermark) = self.parse_i64_option(SCAN_WATERMARK_OPTION)? {
            Ok(Some(TimeTravelSelector::Watermark(watermark)))
        } else if let Some(value) = self.options.get(SCAN_VERSION_OPTION).map(String::as_str) {
            Ok(Some(TimeTravelSelector::Version {
                value,
                option_name: SCAN_VERSION_OPTION,
            }))
        } else if let Some(value) = self
            .options
            .get(SCAN_SNAPSHOT_ID_OPTION)
            .map(String::as_str)
        {
            Ok(Some(TimeTravelSelector::SnapshotId {
                value,
                option_name: SCAN_SNAPSHOT_ID_OPTION,
            }))
        } else if let Some(value) = self.options.get(SCAN_TAG_NAME_OPTION).map(String::as_str) {
            Ok(Some(TimeTravelSelector::TagName {
                value,
                option_name: SCAN_TAG_NAME_OPTION,
            }))
        } else {
            Ok(None)
        }
    }

    /// Explicit bucket key columns. If not set, defaults to primary keys for PK tables.
    ///
    /// Blank entries are dropped and an all-blank option resolves to `None`,
    /// mirroring Java `TableSchema#originalBucketKeys`, so callers fall back to
    /// the primary keys instead of treating `""` as a column name.
    pub fn bucket_key(&self) -> Option<Vec<String>> {
        let keys: Vec<String> = self
            .options
            .get(BUCKET_KEY_OPTION)?
            .split(',')
            .map(str::trim)
            .filter(|key| !key.is_empty())
            .map(str::to_string)
            .collect();
        (!keys.is_empty()).then_some(keys)
    }

    pub fn commit_max_retries(&self) -> u32 {
        self.options
            .get(COMMIT_MAX_RETRIES_OPTION)
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_COMMIT_MAX_RETRIES)
    }

    /// Commit timeout (`commit.timeout`), in milliseconds.
    ///
    /// Defaults to unbounded, matching Java: with no timeout configured, only
    /// `commit.max-retries` bounds the commit retry loop.
    pub fn commit_timeout_ms(&self) -> u64 {
        self.options
            .get(COMMIT_TIMEOUT_OPTION)
            .and_then(|v| parse_duration_millis(v))
            .unwrap_or(DEFAULT_COMMIT_TIMEOUT_MS)
    }

    /// Initial backoff before the first commit retry (`commit.min-retry-wait`),
    /// in milliseconds. Doubles per retry up to [`Self::commit_max_retry_wait_ms`].
    pub fn commit_min_retry_wait_ms(&self) -> u64 {
        self.options
            .get(COMMIT_MIN_RETRY_WAIT_OPTION)
            .and_then(|v| parse_duration_millis(v))
            .unwrap_or(DEFAULT_COMMIT_MIN_RETRY_WAIT_MS)
    }

    /// Backoff ceiling between commit retries (`commit.max-retry-wait`), in
    /// milliseconds.
    pub fn commit_max_retry_wait_ms(&self) -> u64 {
        self.options
            .get(COMMIT_MAX_RETRY_WAIT_OPTION)
            .and_then(|v| parse_duration_millis(v))
            .unwrap_or(DEFAULT_COMMIT_MAX_RETRY_WAIT_MS)
    }

    pub fn row_tracking_enabled(&self) -> bool {
        self.options
            .get(ROW_TRACKING_ENABLED_OPTION)
            .map(|v| v.eq_ignore_ascii_case("true"))
            .unwrap_or(false)
    }

    /// Group new file metadata by partition before assigning row IDs. Defaults
    /// to true, matching Java, so each partition receives contiguous row IDs.
    pub fn row_tracking_partition_group_on_commit(&self) -> bool {
        self.options
            .get(ROW_TRACKING_PARTITION_GROUP_ON_COMMIT_OPTION)
            .map(|v| v.eq_ignore_ascii_case("true"))
            .unwrap_or(true)
    }

    /// Whether incremental clustering is enabled. Default is false.
    pub fn clustering_incremental_enabled(&self) -> bool {
        self.options
            .get(CLUSTERING_INCREMENTAL_OPTION)
            .map(|v| v.eq_ignore_ascii_case("true"))
            .unwrap_or(false)
    }

    /// Suggested target size for a manifest file. Default is 8 MiB.
    ///
    /// `manifest.target-file-size` is the Java/Python option. The shorter
    /// `manifest.target-size` alias is accepted for older Rust callers that
    /// used the name from early parity discussions.
    pub fn manifest_target_size(&self) -> i64 {
        self.options
            .get(MANIFEST_TARGET_FILE_SIZE_OPTION)
            .or_else(|| self.options.get(MANIFEST_TARGET_SIZE_OPTION))
            .and_then(|v| parse_memory_size(v))
            .unwrap_or(DEFAULT_MANIFEST_TARGET_FILE_SIZE)
    }

    /// Whether manifest block sidecars are read and written.
    ///
    /// An explicit `manifest.sidecar.enabled` value wins. When it is absent,
    /// this follows Java Paimon's `manifest-sort.enabled` compatibility rule.
    pub fn manifest_sidecar_enabled(&self) -> bool {
        self.options
            .get(MANIFEST_SIDECAR_ENABLED_OPTION)
            .or_else(|| self.options.get(MANIFEST_SORT_ENABLED_OPTION))
            .map(|value| value.eq_ignore_ascii_case("true"))
            .unwrap_or(false)
    }

    /// Number of buckets for the table. Default is -1 (dynamic bucket).
    pub fn bucket(&self) -> i32 {
        self.options
            .get(BUCKET_OPTION)
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_BUCKET)
    }

    /// Bucket function type. Defaults to Java-compatible Paimon hash.
    pub fn bucket_function_type(&self) -> crate::Result<BucketFunctionType> {
        match self
            .options
            .get(BUCKET_FUNCTION_TYPE_OPTION)
            .map(|v| v.to_ascii_lowercase())
            .as_deref()
            .unwrap_or("default")
        {
            "default" => Ok(BucketFunctionType::Default),
            "mod" => Ok(BucketFunctionType::Mod),
            "hive" => Ok(BucketFunctionType::Hive),
            other => Err(crate::Error::ConfigInvalid {
                message: format!("Unsupported bucket-function.type: {other}"),
            }),
        }
    }

    /// Target file size for data files. Default is 256MB.
    ///
    /// Java leaves `target-file-size` without a default and documents 128 MB for
    /// primary-key tables and 256 MB for append tables; this returns the append
    /// value for both.
    /// Java's exact default for postpone partitions without an existing layout.
    /// Unlike inferred counts this is not capped or rounded to a power of two.
    pub fn postpone_default_bucket_num(&self) -> crate::Result<Option<i32>> {
        self.options.get("postpone.default-bucket-num").map(|raw| {
            raw.parse::<i32>().ok().filter(|count| *count > 0).ok_or_else(|| {
                crate::Error::ConfigInvalid {
                    message: format!("postpone.default-bucket-num must be a positive 32-bit integer, got '{raw}'"),
                }
            })
        }).transpose()
    }

    pub fn target_file_size(&self) -> i64 {
        self.options
            .get("target-file-size")
            .and_then(|v| parse_memory_size(v))
            .unwrap_or(DEFAULT_TARGET_FILE_SIZE)
    }

    /// Maximum rows in a newly written data file. Java defaults to `Long.MAX_VALUE`.
    pub fn target_file_row_num(&self) -> crate::Result<i64> {
        let Some(raw) = self.options.get("target-file-row-num") else {
            return Ok(i64::MAX);
        };
        let rows = raw
            .parse::<i64>()
            .map_err(|_| crate::Error::ConfigInvalid {
                message: format!("target-file-row-num must be a positive integer, got '{raw}'"),
            })?;
        if rows <= 0 {
            return Err(crate::Error::ConfigInvalid {
                message: format!("target-file-row-num must be positive, got {rows}"),
            });
        }
        Ok(rows)
    }

    /// Explicit `file.block-size`, in bytes. Formats choose their own default.
    pub(crate) fn file_block_size(&self) -> crate::Result<Option<i64>> {
        self.options
            .get("file.block-size")
            .map(|raw| {
                parse_memory_size(raw).ok_or_else(|| crate::Error::ConfigInvalid {
                    message: format!("Invalid file.block-size: {raw}"),
                })
            })
            .transpose()
    }

    pub fn blob_target_file_size(&self) -> i64 {
        self.options
            .get("blob.target-file-size")
            .and_then(|v| parse_memory_size(v))
            .unwrap_or_else(|| self.target_file_size())
    }

    /// Java's BlobFormatWriter copies through a positive, int-sized buffer.
    pub fn blob_copy_buffer_size(&self) -> crate::Result<usize> {
        let raw = self.options.get("blob.copy-buffer-size");
        let bytes = raw
            .map(|value| parse_memory_size(value))
            .unwrap_or(Some(4 * 1024))
            .filter(|size| (1..=i64::from(i32::MAX)).contains(size))
            .ok_or_else(|| crate::Error::ConfigInvalid {
                message: format!(
                    "blob.copy-buffer-size must be between 1 and {} bytes, got {raw:?}",
                    i32::MAX
                ),
            })?;
        Ok(bytes as usize)
    }

    /// Dedicated vector-store file format, if configured.
    ///
    /// Java leaves this unset by default. When present, vector columns are
    /// written to files named `*.vector.<format>`.
    /// Dedicated vector file format, normalized to lowercase.
    ///
    /// Mirrors Java `CoreOptions.normalizeFileFormat`, which lowercases every
    /// file-format option so the value can be used directly in a file name.
    pub fn vector_file_format(&self) -> Option<String> {
        self.options
            .get(VECTOR_FILE_FORMAT_OPTION)
            .map(|format| format.trim().to_ascii_lowercase())
            .filter(|format| !format.is_empty())
    }

    pub fn vector_target_file_size(&self) -> i64 {
        self.options
            .get(VECTOR_TARGET_FILE_SIZE_OPTION)
            .and_then(|v| parse_memory_size(v))
            .unwrap_or_else(|| self.target_file_size())
    }

    /// File format for data files (e.g. "parquet", "orc", "avro", "vortex").
    /// Default is "parquet".
    pub fn file_format(&self) -> String {
        self.options
            .get(FILE_FORMAT_OPTION)
            .map(|format| format.trim().to_ascii_lowercase())
            .filter(|format| !format.is_empty())
            .unwrap_or_else(|| "parquet".to_string())
    }

    /// File compression codec (e.g. "lz4", "zstd", "snappy", "none").
    /// Default is "zstd".
    pub fn file_compression(&self) -> &str {
        self.options
            .get(FILE_COMPRESSION_OPTION)
            .map(String::as_str)
            .unwrap_or("zstd")
    }

    /// Zstd compression level. Only meaningful when `file.compression` is `"zstd"`.
    /// Default is 1 (matching Paimon Java).
    pub fn file_compression_zstd_level(&self) -> i32 {
        self.options
            .get(FILE_COMPRESSION_ZSTD_LEVEL_OPTION)
            .and_then(|v| v.parse().ok())
            .unwrap_or(1)
    }

    pub(crate) fn validate_data_file_path_directory(&self) -> crate::Result<()> {
        if self.data_file_path_directory() == Some("") {
            return Err(crate::Error::ConfigInvalid {
                message: "data-file.path-directory must not be empty".into(),
            });
        }
        Ok(())
    }

    /// Directory containing bucket data, resolved against the table location.
    /// Supports relative paths, absolute paths, and URIs, like Java `Path`.
    pub fn data_file_path_directory(&self) -> Option<&str> {
        self.options
            .get("data-file.path-directory")
            .map(String::as_str)
    }

    /// File name prefix for data files. Default is `"data-"`.
    pub fn data_file_prefix(&self) -> &str {
        self.options
            .get(DATA_FILE_PREFIX_OPTION)
            .map(String::as_str)
            .unwrap_or("data-")
    }

    /// File name prefix for changelog files. Default is `"changelog-"`.
    pub fn changelog_file_prefix(&self) -> &str {
        self.options
            .get(CHANGELOG_FILE_PREFIX_OPTION)
            .map(String::as_str)
            .unwrap_or(DEFAULT_CHANGELOG_FILE_PREFIX)
    }

    /// Effective file format for changelog files.
    ///
    /// When `changelog-file.format` is not configured, Java Paimon falls back
    /// to the table `file.format`.
    pub fn changelog_file_format(&self) -> String {
        self.options
            .get(CHANGELOG_FILE_FORMAT_OPTION)
            .map(|format| format.trim().to_ascii_lowercase())
            .filter(|format| !format.is_empty())
            .unwrap_or_else(|| self.file_format())
    }

    /// Effective compression codec for changelog files.
    ///
    /// When `changelog-file.compression` is not configured, Java Paimon falls
    /// back to the table `file.compression`.
    pub fn changelog_file_compression(&self) -> &str {
        self.options
            .get(CHANGELOG_FILE_COMPRESSION_OPTION)
            .map(String::as_str)
            .unwrap_or_else(|| self.file_compression())
    }

    /// Metadata stats collection mode for changelog files, if configured.
    pub fn changelog_file_stats_mode(&self) -> Option<&str> {
        self.options
            .get(CHANGELOG_FILE_STATS_MODE_OPTION)
            .map(String::as_str)
    }

    /// Whether metadata stats should omit columns without collected stats.
    pub(crate) fn metadata_stats_dense_store(&self) -> bool {
        self.options
            .get(METADATA_STATS_DENSE_STORE_OPTION)
            .map(|value| value.eq_ignore_ascii_case("true"))
            .unwrap_or(DEFAULT_METADATA_STATS_DENSE_STORE)
    }

    /// Table-wide metadata stats mode.
    pub(crate) fn metadata_stats_mode(&self) -> crate::Result<MetadataStatsMode> {
        let value = self
            .options
            .get(METADATA_STATS_MODE_OPTION)
            .map(String::as_str)
            .unwrap_or(DEFAULT_METADATA_STATS_MODE);
        MetadataStatsMode::parse(METADATA_STATS_MODE_OPTION, value)
    }

    /// Match Java's PK file stats precedence: changelog override, level, table.
    pub(crate) fn pk_file_metadata_stats_mode(
        &self,
        level: i32,
        is_changelog: bool,
    ) -> crate::Result<&str> {
        let mut level_mode = None;
        if let Some(raw) = self.options.get(METADATA_STATS_MODE_PER_LEVEL_OPTION) {
            for entry in raw
                .split(',')
                .map(str::trim)
                .filter(|entry| !entry.is_empty())
            {
                let (key, value) =
                    entry
                        .split_once(':')
                        .ok_or_else(|| crate::Error::DataInvalid {
                            message: format!(
                                "Invalid {METADATA_STATS_MODE_PER_LEVEL_OPTION} entry: '{entry}'"
                            ),
                            source: None,
                        })?;
                let parsed_level =
                    key.trim()
                        .parse::<i32>()
                        .map_err(|error| crate::Error::DataInvalid {
                            message: format!(
                                "Invalid level in {METADATA_STATS_MODE_PER_LEVEL_OPTION}: '{key}'"
                            ),
                            source: Some(Box::new(error)),
                        })?;
                if parsed_level == level {
                    level_mode = Some(value.trim());
                }
            }
        }
        Ok(if is_changelog {
            self.changelog_file_stats_mode().or(level_mode)
        } else {
            level_mode
        }
        .unwrap_or_else(|| {
            self.options
                .get(METADATA_STATS_MODE_OPTION)
                .map(String::as_str)
                .unwrap_or(DEFAULT_METADATA_STATS_MODE)
        }))
    }

    /// Number of leading columns whose stats should be kept.
    ///
    /// A negative value means the option is ignored, matching Java Paimon.
    pub(crate) fn metadata_stats_keep_first_n_columns(&self) -> crate::Result<i32> {
        self.options
            .get(METADATA_STATS_KEEP_FIRST_N_COLUMNS_OPTION)
            .map(|value| {
                value.parse::<i32>().map_err(|e| crate::Error::DataInvalid {
                    message: format!(
                        "Invalid value for {METADATA_STATS_KEEP_FIRST_N_COLUMNS_OPTION}: '{value}'"
                    ),
                    source: Some(Box::new(e)),
                })
            })
            .transpose()
            .map(|value| value.unwrap_or(DEFAULT_METADATA_STATS_KEEP_FIRST_N_COLUMNS))
    }

    /// Per-field metadata stats mode.
    pub(crate) fn field_metadata_stats_mode(
        &self,
        field_name: &str,
    ) -> crate::Result<Option<MetadataStatsMode>> {
        let option_name = format!("{FIELDS_PREFIX}.{field_name}.{STATS_MODE_SUFFIX}");
        self.options
            .get(&option_name)
            .map(|value| MetadataStatsMode::parse(&option_name, value))
            .transpose()
    }

    /// Resolve metadata stats modes for fields using Java's priority:
    /// field override > keep-first-n > table-wide mode.
    pub(crate) fn metadata_stats_modes<'b, I>(
        &self,
        field_names: I,
    ) -> crate::Result<Vec<MetadataStatsMode>>
    where
        I: IntoIterator<Item = &'b str>,
    {
        let table_mode = self.metadata_stats_mode()?;
        let keep_first_n = self.metadata_stats_keep_first_n_columns()?;
        let mut modes = Vec::new();
        for (column_count, field_name) in field_names.into_iter().enumerate() {
            let mode = if let Some(field_mode) = self.field_metadata_stats_mode(field_name)? {
                field_mode
            } else if keep_first_n >= 0 && column_count >= keep_first_n as usize {
                MetadataStatsMode::None
            } else {
                table_mode
            };
            modes.push(mode);
        }
        Ok(modes)
    }

    /// Avro compression codec for manifest, manifest-list and index-manifest files.
    /// Default is `"zstd"`, matching Java Paimon `CoreOptions.MANIFEST_COMPRESSION`.
    pub fn manifest_compression(&self) -> &str {
        self.options
            .get(MANIFEST_COMPRESSION_OPTION)
            .map(String::as_str)
            .unwrap_or(DEFAULT_MANIFEST_COMPRESSION)
    }

    /// Parquet writer in-progress buffer size limit. Default is 256MB.
    /// When the buffered data exceeds this, the writer flushes the current row group.
    pub fn write_parquet_buffer_size(&self) -> i64 {
        self.options
            .get(WRITE_PARQUET_BUFFER_SIZE_OPTION)
            .and_then(|v| parse_memory_size(v))
            .unwrap_or(DEFAULT_WRITE_PARQUET_BUFFER_SIZE)
    }

    /// Target row number per bucket for dynamic bucket mode (bucket=-1).
    /// When a bucket reaches this number, a new bucket is created.
    /// Default is 2,000,000, matching Java Paimon.
    pub fn dynamic_bucket_target_row_num(&self) -> i64 {
        self.options
            .get(DYNAMIC_BUCKET_TARGET_ROW_NUM_OPTION)
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_DYNAMIC_BUCKET_TARGET_ROW_NUM)
    }

    /// Maximum number of dynamic buckets in each partition. `-1` grows up to
    /// Java's signed-short bucket id limit; an explicit limit reuses full buckets.
    pub fn dynamic_bucket_max_buckets(&self) -> crate::Result<i32> {
        let value = self
            .parse_i64_option(DYNAMIC_BUCKET_MAX_BUCKETS_OPTION)?
            .unwrap_or(-1);
        if value != -1 && !(1..=i64::from(MAX_DYNAMIC_BUCKETS)).contains(&value) {
            return Err(crate::Error::ConfigInvalid {
                message: format!("'{DYNAMIC_BUCKET_MAX_BUCKETS_OPTION}' must be -1 or between 1 and {MAX_DYNAMIC_BUCKETS}, but was {value}"),
            });
        }
        Ok(value as i32)
    }

    /// When true, blob field reads return serialized BlobDescriptor bytes
    /// instead of actual blob bytes. Default is false.
    pub fn blob_as_descriptor(&self) -> bool {
        self.options
            .get(BLOB_AS_DESCRIPTOR_OPTION)
            .map(|v| v.eq_ignore_ascii_case("true"))
            .unwrap_or(false)
    }

    /// Comma-separated BLOB field names stored in dedicated `.blob` files.
    ///
    /// Fields listed in `blob-descriptor-field` or `blob-view-field` are also
    /// treated as BLOB fields, matching Java Paimon's `blob-field` semantics.
    pub fn blob_fields(&self) -> HashSet<String> {
        let mut fields = self.parse_csv_set(BLOB_FIELD_OPTION);
        fields.extend(self.blob_descriptor_fields());
        fields.extend(self.blob_view_fields());
        fields.extend(self.video_frame_fields());
        fields
    }

    /// Scalar BLOB columns stored as logical frame runs in packed `.video` files.
    pub fn video_frame_fields(&self) -> HashSet<String> {
        self.parse_csv_set(VIDEO_FRAME_FIELD_OPTION)
    }

    /// Comma-separated BLOB field names stored as serialized BlobDescriptor
    /// bytes inline in normal data files (no .blob files for these fields).
    pub fn blob_descriptor_fields(&self) -> HashSet<String> {
        // Java ConfigOption.withFallbackKeys: presence of the canonical key,
        // including an empty value, takes precedence over the fallback key.
        Self::parse_csv_value(
            self.options
                .get(BLOB_DESCRIPTOR_FIELD_OPTION)
                .or_else(|| self.options.get(BLOB_DESCRIPTOR_FIELD_FALLBACK)),
        )
    }

    /// Comma-separated BLOB field names stored as serialized BlobViewStruct
    /// bytes inline in normal data files.
    pub fn blob_view_fields(&self) -> HashSet<String> {
        self.parse_csv_set(BLOB_VIEW_FIELD_OPTION)
    }

    /// Whether blob-view fields should resolve upstream BLOB values on reads.
    /// Default is true, matching Java `CoreOptions.BLOB_VIEW_RESOLVE_ENABLED`.
    pub fn blob_view_resolve_enabled(&self) -> bool {
        self.options
            .get(BLOB_VIEW_RESOLVE_ENABLED_OPTION)
            .map(|v| v.eq_ignore_ascii_case("true"))
            .unwrap_or(true)
    }

    /// BLOB fields stored inline in normal data files: descriptor fields plus
    /// view fields. Non-inline BLOB fields are written to dedicated `.blob`
    /// files.
    pub fn blob_inline_fields(&self) -> HashSet<String> {
        let mut fields = self.blob_descriptor_fields();
        fields.extend(self.blob_view_fields());
        fields
    }

    fn parse_csv_set(&self, option_name: &'static str) -> HashSet<String> {
        Self::parse_csv_value(self.options.get(option_name))
    }

    fn parse_csv_value(value: Option<&String>) -> HashSet<String> {
        value
            .map(|s| {
                s.split(',')
                    .map(str::trim)
                    .filter(|f| !f.is_empty())
                    .map(ToString::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// True when the PK-vector index column option key is present (regardless of value).
    pub fn primary_key_vector_index_enabled(&self) -> bool {
        self.options.contains_key(PK_VECTOR_INDEX_COLUMNS_OPTION)
    }

    /// The configured PK-vector index columns, split on ',' and trimmed. Blank tokens
    /// are preserved so schema validation can reject malformed column lists.
    pub fn primary_key_vector_index_columns(&self) -> crate::Result<Vec<String>> {
        let raw = self
            .options
            .get(PK_VECTOR_INDEX_COLUMNS_OPTION)
            .ok_or_else(|| crate::Error::ConfigInvalid {
                message: "pk-vector.index.columns is not set".to_string(),
            })?;
        Ok(raw.split(',').map(|c| c.trim().to_string()).collect())
    }

    /// The single PK-vector index column. The first release supports exactly one.
    pub fn primary_key_vector_index_column(&self) -> crate::Result<String> {
        let mut columns = self.primary_key_vector_index_columns()?;
        if columns.len() != 1 {
            return Err(crate::Error::ConfigInvalid {
                message: format!(
                    "pk-vector.index.columns must name exactly one column, got {}",
                    columns.len()
                ),
            });
        }
        Ok(columns.remove(0))
    }

    /// The index type for a PK-vector column. Required — planning and the index reader
    /// both need it, so an absent value is a hard error rather than a guessed default.
    pub fn primary_key_vector_index_type(&self, col: &str) -> crate::Result<String> {
        self.options
            .get(&format!("fields.{col}.pk-vector.index.type"))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .ok_or_else(|| crate::Error::ConfigInvalid {
                message: format!("fields.{col}.pk-vector.index.type is required but not set"),
            })
    }

    /// The distance metric name for a PK-vector column, defaulting to inner_product.
    /// Validated against the supported metrics; an unknown value is a hard error.
    pub fn primary_key_vector_distance_metric(&self, col: &str) -> crate::Result<String> {
        let raw = self
            .options
            .get(&format!("fields.{col}.pk-vector.distance.metric"))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| "inner_product".to_string());
        // Validate now (fail-loud) without exposing the crate-private metric enum.
        crate::vindex::pkvector::metric::VectorSearchMetric::parse(&raw)?;
        Ok(raw)
    }

    /// True when the PK full-text index column option key is present (any value).
    pub fn primary_key_full_text_index_enabled(&self) -> bool {
        self.options.contains_key(PK_FULL_TEXT_INDEX_COLUMNS_OPTION)
    }

    /// Configured PK full-text index columns: split on ',' and trim each token,
    /// mirroring Java `split(",",-1).map(trim)`. Blank tokens are PRESERVED (do NOT
    /// filter them) so parsing matches Java exactly; `[]` only when the key is
    /// absent. Never returns a `Result`, never errors (do not copy the fail-loud
    /// shape of `primary_key_vector_index_columns`).
    pub fn primary_key_full_text_index_columns(&self) -> Vec<String> {
        match self.options.get(PK_FULL_TEXT_INDEX_COLUMNS_OPTION) {
            None => Vec::new(),
            Some(raw) => raw.split(',').map(|c| c.trim().to_string()).collect(),
        }
    }
}

/// Java DateTimeUtils accepts a date, a space-separated timestamp, or an ISO
/// local timestamp (whose seconds are optional). It truncates to milliseconds
/// and resolves the date/time in the process's default time zone.
fn parse_scan_timestamp(value: &str, zone: &jiff::tz::TimeZone) -> crate::Result<i64> {
    use chrono::{Datelike, NaiveDate, NaiveDateTime, Timelike};

    let datetime = NaiveDateTime::parse_from_str(value, "%Y-%m-%d %H:%M:%S%.f")
        .or_else(|_| NaiveDateTime::parse_from_str(value, "%Y-%m-%dT%H:%M:%S%.f"))
        .or_else(|_| NaiveDateTime::parse_from_str(value, "%Y-%m-%dT%H:%M"))
        .or_else(|_| {
            NaiveDate::parse_from_str(value, "%Y-%m-%d")
                .map(|date| date.and_hms_opt(0, 0, 0).unwrap())
        })
        .map_err(|error| crate::Error::DataInvalid {
            message: format!("Invalid value for {SCAN_TIMESTAMP_OPTION}: '{value}'"),
            source: Some(Box::new(error)),
        })?;
    // Chrono also accepts leap seconds and fractions longer than nanoseconds;
    // Java's local timestamp parser does not.
    if datetime.nanosecond() >= 1_000_000_000
        || value
            .rsplit_once('.')
            .is_some_and(|(_, fraction)| fraction.len() > 9)
    {
        return Err(crate::Error::DataInvalid {
            message: format!("Invalid value for {SCAN_TIMESTAMP_OPTION}: '{value}'"),
            source: None,
        });
    }
    // Java parses with precision 3 before applying the system time zone.
    // Truncating here also preserves the correct millisecond for instants
    // immediately before the Unix epoch.
    let year = i16::try_from(datetime.year()).map_err(|error| crate::Error::DataInvalid {
        message: format!("Invalid value for {SCAN_TIMESTAMP_OPTION}: '{value}'"),
        source: Some(Box::new(error)),
    })?;
    let civil = jiff::civil::DateTime::new(
        year,
        datetime.month() as i8,
        datetime.day() as i8,
        datetime.hour() as i8,
        datetime.minute() as i8,
        datetime.second() as i8,
        (datetime.nanosecond() / 1_000_000 * 1_000_000) as i32,
    )
    .map_err(|error| crate::Error::DataInvalid {
        message: format!("Invalid value for {SCAN_TIMESTAMP_OPTION}: '{value}'"),
        source: Some(Box::new(error)),
    })?;
    // Jiff's compatible disambiguation matches Java LocalDateTime.atZone:
    // the earlier instant in a fold, and the later local time in a gap.
    zone.to_ambiguous_timestamp(civil)
        .compatible()
        .map(|timestamp| timestamp.as_millisecond())
        .map_err(|error| crate::Error::DataInvalid {
            message: format!("Invalid local time for {SCAN_TIMESTAMP_OPTION}: '{value}'"),
            source: Some(Box::new(error)),
        })
}

/// Parse a memory size string to bytes using binary (1024-based) semantics,
/// mirroring Java Paimon's `MemorySize.parseBytes`.
///
/// Accepts every unit spelling Java accepts — short (`b`, `k`, `kb`, `m`, `mb`,
/// `g`, `gb`, `t`, `tb`) and long (`bytes`, `kibibytes`, `mebibytes`,
/// `gibibytes`, `tebibytes`) — plus a bare number, which is interpreted as
/// bytes. Returns `None` for an empty string, a missing or non-numeric number,
/// an unrecognized unit, or a value that would overflow `i64`, matching the
/// inputs on which Java throws.
fn parse_memory_size(value: &str) -> Option<i64> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }

    let pos = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    let (num_str, unit_str) = value.split_at(pos);
    let num: i64 = num_str.trim().parse().ok()?;
    let multiplier = match unit_str.trim().to_ascii_lowercase().as_str() {
        "" | "b" | "bytes" => 1,
        "k" | "kb" | "kibibytes" => 1024,
        "m" | "mb" | "mebibytes" => 1024 * 1024,
        "g" | "gb" | "gibibytes" => 1024 * 1024 * 1024,
        "t" | "tb" | "tebibytes" => 1024 * 1024 * 1024 * 1024,
        _ => return None,
    };
    num.checked_mul(multiplier)
}

/// Parse a duration string to milliseconds, mirroring Java Paimon's
/// `TimeUtils.parseDuration`.
///
/// Accepts every unit label Java accepts — `d`/`day(s)`, `h`/`hour(s)`,
/// `min`/`m`/`minute(s)`, `s`/`sec(s)`/`second(s)`, `ms`/`milli(s)`/
/// `millisecond(s)`, `µs`/`micro(s)`/`microsecond(s)`, `ns`/`nano(s)`/
/// `nanosecond(s)` — plus a bare number, which Java reads as milliseconds.
/// Sub-millisecond units are truncated towards zero, as `Duration.toMillis()`
/// does. Returns `None` for an empty string, a missing or non-numeric number,
/// an unrecognized unit, or a value that would overflow `u64`, matching the
/// inputs on which Java throws.
fn parse_duration_millis(value: &str) -> Option<u64> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }

    let pos = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    let (num_str, unit_str) = value.split_at(pos);
    let num: u64 = num_str.trim().parse().ok()?;
    match unit_str.trim().to_ascii_lowercase().as_str() {
        "d" | "day" | "days" => num.checked_mul(24 * 60 * 60 * 1000),
        "h" | "hour" | "hours" => num.checked_mul(60 * 60 * 1000),
        "min" | "m" | "minute" | "minutes" => num.checked_mul(60 * 1000),
        "s" | "sec" | "secs" | "second" | "seconds" => num.checked_mul(1000),
        "" | "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => Some(num),
        "µs" | "micro" | "micros" | "microsecond" | "microseconds" => Some(num / 1_000),
        "ns" | "nano" | "nanos" | "nanosecond" | "nanoseconds" => Some(num / 1_000_000),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_read_batch_size() {
        let options = HashMap::new();
        assert_eq!(CoreOptions::new(&options).read_batch_size().unwrap(), 1024);

        let options = HashMap::from([("read.batch-size".to_string(), "8192".to_string())]);
        assert_eq!(CoreOptions::new(&options).read_batch_size().unwrap(), 8192);

        for value in ["0", "-1", "invalid"] {
            let options = HashMap::from([("read.batch-size".to_string(), value.to_string())]);
            assert!(CoreOptions::new(&options).read_batch_size().is_err());
        }
    }

    #[test]
    fn test_file_index_read_enabled() {
        let options = HashMap::new();
        assert!(CoreOptions::new(&options).file_index_read_enabled());

        let options = HashMap::from([(
            FILE_INDEX_READ_ENABLED_OPTION.to_string(),
            "false".to_string(),
        )]);
        assert!(!CoreOptions::new(&options).file_index_read_enabled());
    }

    #[test]
    fn test_mosaic_read_prefetch_options() {
        let options = HashMap::new();
        let core = CoreOptions::new(&options);
        assert_eq!(core.mosaic_read_prefetch_row_groups().unwrap(), 8);
        assert_eq!(
            core.mosaic_read_prefetch_max_bytes().unwrap(),
            64 * 1024 * 1024
        );

        let options = HashMap::from([
            (
                MOSAIC_READ_PREFETCH_ROW_GROUPS_OPTION.to_string(),
                "0".to_string(),
            ),
            (
                MOSAIC_READ_PREFETCH_MAX_BYTES_OPTION.to_string(),
                "16 mb".to_string(),
            ),
        ]);
        let core = CoreOptions::new(&options);
        assert_eq!(core.mosaic_read_prefetch_row_groups().unwrap(), 0);
        assert_eq!(
            core.mosaic_read_prefetch_max_bytes().unwrap(),
            16 * 1024 * 1024
        );

        for value in ["-1", "invalid", "1.5"] {
            let options = HashMap::from([(
                MOSAIC_READ_PREFETCH_ROW_GROUPS_OPTION.to_string(),
                value.to_string(),
            )]);
            assert!(CoreOptions::new(&options)
                .mosaic_read_prefetch_row_groups()
                .is_err());
        }
        for value in ["0", "-1", "invalid", "9223372036854775807 tb"] {
            let options = HashMap::from([(
                MOSAIC_READ_PREFETCH_MAX_BYTES_OPTION.to_string(),
                value.to_string(),
            )]);
            assert!(CoreOptions::new(&options)
                .mosaic_read_prefetch_max_bytes()
                .is_err());
        }
    }

    #[test]
    fn test_parquet_row_group_read_budget_options() {
        let options = HashMap::new();
        let core = CoreOptions::new(&options);
        assert_eq!(core.parquet_row_group_parallelism().unwrap(), 8);
        assert_eq!(
            core.parquet_row_group_max_inflight_bytes().unwrap(),
            256 * 1024 * 1024
        );

        let options = HashMap::from([
            (
                PARQUET_ROW_GROUP_PARALLELISM_OPTION.to_string(),
                "3".to_string(),
            ),
            (
                PARQUET_ROW_GROUP_MAX_INFLIGHT_BYTES_OPTION.to_string(),
                "64 mb".to_string(),
            ),
        ]);
        let core = CoreOptions::new(&options);
        assert_eq!(core.parquet_row_group_parallelism().unwrap(), 3);
        assert_eq!(
            core.parquet_row_group_max_inflight_bytes().unwrap(),
            64 * 1024 * 1024
        );

        for value in ["0", "-1", "invalid"] {
            let options = HashMap::from([(
                PARQUET_ROW_GROUP_PARALLELISM_OPTION.to_string(),
                value.to_string(),
            )]);
            assert!(CoreOptions::new(&options)
                .parquet_row_group_parallelism()
                .is_err());
        }
        for value in ["0", "-1", "invalid", "9223372036854775807 tb"] {
            let options = HashMap::from([(
                PARQUET_ROW_GROUP_MAX_INFLIGHT_BYTES_OPTION.to_string(),
                value.to_string(),
            )]);
            assert!(CoreOptions::new(&options)
                .parquet_row_group_max_inflight_bytes()
                .is_err());
        }
    }

    #[test]
    fn test_parquet_filter_column_index_enabled() {
        let options = HashMap::new();
        assert!(CoreOptions::new(&options)
            .parquet_filter_column_index_enabled()
            .unwrap());

        for (value, expected) in [("true", true), ("false", false), (" FALSE ", false)] {
            let options = HashMap::from([(
                PARQUET_FILTER_COLUMN_INDEX_ENABLED_OPTION.to_string(),
                value.to_string(),
            )]);
            assert_eq!(
                CoreOptions::new(&options)
                    .parquet_filter_column_index_enabled()
                    .unwrap(),
                expected
            );
        }

        let options = HashMap::from([(
            PARQUET_FILTER_COLUMN_INDEX_ENABLED_OPTION.to_string(),
            "invalid".to_string(),
        )]);
        let error = CoreOptions::new(&options)
            .parquet_filter_column_index_enabled()
            .unwrap_err();
        assert!(error
            .to_string()
            .contains("parquet.filter.columnindex.enabled"));
    }

    #[test]
    fn test_source_split_defaults() {
        let options = HashMap::new();
        let core_options = CoreOptions::new(&options);

        assert_eq!(core_options.source_split_target_size(), 128 * 1024 * 1024);
        assert_eq!(core_options.source_split_open_file_cost(), 4 * 1024 * 1024);
        assert_eq!(
            core_options.global_index_row_count_per_shard().unwrap(),
            100_000
        );
        assert_eq!(core_options.global_index_thread_num().unwrap(), 32);
        assert_eq!(
            core_options.global_index_vindex_read_thread_num().unwrap(),
            64
        );
        assert_eq!(
            core_options.sorted_index_records_per_range().unwrap(),
            100_000
        );
        assert_eq!(
            core_options.btree_index_fallback_scan_max_size().unwrap(),
            256 * 1024 * 1024
        );
        assert_eq!(
            core_options.bitmap_index_fallback_scan_max_size().unwrap(),
            256 * 1024 * 1024
        );
        assert_eq!(
            core_options.global_index_column_update_action().unwrap(),
            GlobalIndexColumnUpdateAction::ThrowError
        );
        assert_eq!(
            core_options.global_index_search_mode().unwrap(),
            GlobalIndexSearchMode::Fast
        );
    }

    #[test]
    fn test_source_split_custom_values() {
        let options = HashMap::from([
            (
                SOURCE_SPLIT_TARGET_SIZE_OPTION.to_string(),
                "256 mb".to_string(),
            ),
            (
                SOURCE_SPLIT_OPEN_FILE_COST_OPTION.to_string(),
                "8 mb".to_string(),
            ),
            (
                GLOBAL_INDEX_ROW_COUNT_PER_SHARD_OPTION.to_string(),
                "2048".to_string(),
            ),
            (
                SORTED_INDEX_RECORDS_PER_RANGE_OPTION.to_string(),
                "4096".to_string(),
            ),
            (
                BTREE_INDEX_FALLBACK_SCAN_MAX_SIZE_OPTION.to_string(),
                "4 mb".to_string(),
            ),
            (
                BITMAP_INDEX_FALLBACK_SCAN_MAX_SIZE_OPTION.to_string(),
                "8 mb".to_string(),
            ),
            (
                GLOBAL_INDEX_COLUMN_UPDATE_ACTION_OPTION.to_string(),
                "DROP_PARTITION_INDEX".to_string(),
            ),
            (
                GLOBAL_INDEX_SEARCH_MODE_OPTION.to_string(),
                "detail".to_string(),
            ),
        ]);
        let core_options = CoreOptions::new(&options);

        assert_eq!(core_options.source_split_target_size(), 256 * 1024 * 1024);
        assert_eq!(core_options.source_split_open_file_cost(), 8 * 1024 * 1024);
        assert_eq!(
            core_options.global_index_row_count_per_shard().unwrap(),
            2048
        );
        assert_eq!(core_options.sorted_index_records_per_range().unwrap(), 4096);
        assert_eq!(
            core_options.btree_index_fallback_scan_max_size().unwrap(),
            4 * 1024 * 1024
        );
        assert_eq!(
            core_options.bitmap_index_fallback_scan_max_size().unwrap(),
            8 * 1024 * 1024
        );
        assert_eq!(
            core_options.global_index_column_update_action().unwrap(),
            GlobalIndexColumnUpdateAction::DropPartitionIndex
        );
        assert_eq!(
            core_options.global_index_search_mode().unwrap(),
            GlobalIndexSearchMode::Detail
        );
    }

    #[test]
    fn test_global_index_search_mode_values() {
        for (raw, expected) in [
            ("fast", GlobalIndexSearchMode::Fast),
            ("FAST", GlobalIndexSearchMode::Fast),
            ("full", GlobalIndexSearchMode::Full),
            ("detail", GlobalIndexSearchMode::Detail),
        ] {
            let options =
                HashMap::from([(GLOBAL_INDEX_SEARCH_MODE_OPTION.to_string(), raw.to_string())]);
            let core = CoreOptions::new(&options);
            assert_eq!(core.global_index_search_mode().unwrap(), expected);
        }
    }

    #[test]
    fn test_family_index_search_mode_precedence() {
        let legacy = HashMap::from([(
            GLOBAL_INDEX_SEARCH_MODE_OPTION.to_string(),
            "full".to_string(),
        )]);
        let legacy_core = CoreOptions::new(&legacy);
        for actual in [
            legacy_core.scalar_index_search_mode().unwrap(),
            legacy_core.vector_index_search_mode().unwrap(),
            legacy_core.full_text_index_search_mode().unwrap(),
        ] {
            assert_eq!(actual, GlobalIndexSearchMode::Full);
        }

        let family = HashMap::from([
            (
                GLOBAL_INDEX_SEARCH_MODE_OPTION.to_string(),
                "full".to_string(),
            ),
            (
                SCALAR_INDEX_SEARCH_MODE_OPTION.to_string(),
                "fast".to_string(),
            ),
            (
                VECTOR_INDEX_SEARCH_MODE_OPTION.to_string(),
                "detail".to_string(),
            ),
            (
                FULL_TEXT_INDEX_SEARCH_MODE_OPTION.to_string(),
                "fast".to_string(),
            ),
        ]);
        let family_core = CoreOptions::new(&family);
        assert_eq!(
            family_core.scalar_index_search_mode().unwrap(),
            GlobalIndexSearchMode::Fast
        );
        assert_eq!(
            family_core.vector_index_search_mode().unwrap(),
            GlobalIndexSearchMode::Detail
        );
        assert_eq!(
            family_core.full_text_index_search_mode().unwrap(),
            GlobalIndexSearchMode::Fast
        );
    }

    #[test]
    fn test_global_index_enabled_defaults_and_overrides() {
        assert!(CoreOptions::new(&HashMap::new()).global_index_enabled());

        for (raw, expected) in [("true", true), ("false", false)] {
            let options =
                HashMap::from([(GLOBAL_INDEX_ENABLED_OPTION.to_string(), raw.to_string())]);
            assert_eq!(CoreOptions::new(&options).global_index_enabled(), expected);
        }
    }

    #[test]
    fn test_global_index_search_mode_rejects_invalid_value() {
        let options = HashMap::from([(
            GLOBAL_INDEX_SEARCH_MODE_OPTION.to_string(),
            "slow".to_string(),
        )]);
        let core = CoreOptions::new(&options);

        let err = core.global_index_search_mode().expect_err("invalid mode");
        assert!(matches!(err, crate::Error::ConfigInvalid { message }
                if message.contains(GLOBAL_INDEX_SEARCH_MODE_OPTION)));
    }

    #[test]
    fn test_global_index_row_count_per_shard_rejects_invalid_values() {
        for value in ["0", "-1", "abc"] {
            let options = HashMap::from([(
                GLOBAL_INDEX_ROW_COUNT_PER_SHARD_OPTION.to_string(),
                value.to_string(),
            )]);
            let core = CoreOptions::new(&options);

            let err = core
                .global_index_row_count_per_shard()
                .expect_err("invalid rows-per-shard should fail");
            assert!(matches!(err, crate::Error::DataInvalid { message, .. }
                    if message.contains(GLOBAL_INDEX_ROW_COUNT_PER_SHARD_OPTION)));
        }
    }

    #[test]
    fn test_global_index_thread_num_default_and_custom() {
        // Default mirrors Java (32) when unset.
        let empty = HashMap::new();
        let core = CoreOptions::new(&empty);
        assert_eq!(core.global_index_thread_num().unwrap(), 32);

        // Explicit value is read back verbatim.
        let options =
            HashMap::from([(GLOBAL_INDEX_THREAD_NUM_OPTION.to_string(), "8".to_string())]);
        let core = CoreOptions::new(&options);
        assert_eq!(core.global_index_thread_num().unwrap(), 8);
    }

    #[test]
    fn test_global_index_thread_num_rejects_invalid_values() {
        // Non-positive values are a misconfiguration and must fail loud (never
        // clamped to 1); an unparsable value is likewise rejected.
        for value in ["0", "-1", "abc"] {
            let options = HashMap::from([(
                GLOBAL_INDEX_THREAD_NUM_OPTION.to_string(),
                value.to_string(),
            )]);
            let core = CoreOptions::new(&options);

            let err = core
                .global_index_thread_num()
                .expect_err("invalid thread-num should fail");
            assert!(matches!(err, crate::Error::DataInvalid { message, .. }
                    if message.contains(GLOBAL_INDEX_THREAD_NUM_OPTION)));
        }
    }

    #[test]
    fn test_global_index_thread_num_rejects_values_above_max() {
        assert!(MAX_GLOBAL_INDEX_THREAD_NUM as usize <= tokio::sync::Semaphore::MAX_PERMITS);

        let too_big = (MAX_GLOBAL_INDEX_THREAD_NUM + 1).to_string();
        let options = HashMap::from([(GLOBAL_INDEX_THREAD_NUM_OPTION.to_string(), too_big)]);
        let err = CoreOptions::new(&options)
            .global_index_thread_num()
            .expect_err("thread-num above maximum should fail");
        assert!(matches!(err, crate::Error::DataInvalid { message, .. }
                if message.contains("must not exceed")));

        let at_max = HashMap::from([(
            GLOBAL_INDEX_THREAD_NUM_OPTION.to_string(),
            MAX_GLOBAL_INDEX_THREAD_NUM.to_string(),
        )]);
        assert_eq!(
            CoreOptions::new(&at_max).global_index_thread_num().unwrap(),
            MAX_GLOBAL_INDEX_THREAD_NUM as usize
        );
    }

    #[test]
    fn test_global_index_vindex_read_thread_num_default_and_custom() {
        assert_eq!(
            CoreOptions::new(&HashMap::new())
                .global_index_vindex_read_thread_num()
                .unwrap(),
            64
        );

        for value in [32, 64] {
            let options = HashMap::from([(
                GLOBAL_INDEX_VINDEX_READ_THREAD_NUM_OPTION.to_string(),
                value.to_string(),
            )]);
            assert_eq!(
                CoreOptions::new(&options)
                    .global_index_vindex_read_thread_num()
                    .unwrap(),
                value
            );
        }
    }

    #[test]
    fn test_global_index_vindex_read_thread_num_rejects_invalid_values() {
        for value in [
            "0".to_string(),
            "abc".to_string(),
            (MAX_GLOBAL_INDEX_VINDEX_READ_THREAD_NUM + 1).to_string(),
        ] {
            let options = HashMap::from([(
                GLOBAL_INDEX_VINDEX_READ_THREAD_NUM_OPTION.to_string(),
                value,
            )]);
            let err = CoreOptions::new(&options)
                .global_index_vindex_read_thread_num()
                .expect_err("invalid vindex.read-thread-num should fail");
            assert!(matches!(err, crate::Error::DataInvalid { message, .. }
                    if message.contains(GLOBAL_INDEX_VINDEX_READ_THREAD_NUM_OPTION)));
        }
    }

    #[test]
    fn test_sorted_index_records_per_range_rejects_invalid_values() {
        for option in [
            SORTED_INDEX_RECORDS_PER_RANGE_OPTION,
            BTREE_INDEX_RECORDS_PER_RANGE_OPTION,
        ] {
            for value in ["0", "-1", "abc"] {
                let options = HashMap::from([(option.to_string(), value.to_string())]);
                let core = CoreOptions::new(&options);

                let err = core
                    .sorted_index_records_per_range()
                    .expect_err("invalid records-per-range should fail");
                assert!(matches!(err, crate::Error::DataInvalid { message, .. }
                        if message.contains(option)));
            }
        }
    }

    #[test]
    fn test_sorted_index_records_per_range_prefers_primary_over_fallback() {
        let options = HashMap::from([
            (
                SORTED_INDEX_RECORDS_PER_RANGE_OPTION.to_string(),
                "20".to_string(),
            ),
            (
                BTREE_INDEX_RECORDS_PER_RANGE_OPTION.to_string(),
                "10".to_string(),
            ),
        ]);
        assert_eq!(
            CoreOptions::new(&options)
                .sorted_index_records_per_range()
                .unwrap(),
            20
        );

        let fallback = HashMap::from([(
            BTREE_INDEX_RECORDS_PER_RANGE_OPTION.to_string(),
            "10".to_string(),
        )]);
        assert_eq!(
            CoreOptions::new(&fallback)
                .sorted_index_records_per_range()
                .unwrap(),
            10
        );
    }

    #[test]
    fn test_global_index_fallback_scan_max_size_values() {
        for option_name in [
            BTREE_INDEX_FALLBACK_SCAN_MAX_SIZE_OPTION,
            BITMAP_INDEX_FALLBACK_SCAN_MAX_SIZE_OPTION,
        ] {
            let options = HashMap::from([(option_name.to_string(), "0".to_string())]);
            let core = CoreOptions::new(&options);
            let value = match option_name {
                BTREE_INDEX_FALLBACK_SCAN_MAX_SIZE_OPTION => {
                    core.btree_index_fallback_scan_max_size()
                }
                BITMAP_INDEX_FALLBACK_SCAN_MAX_SIZE_OPTION => {
                    core.bitmap_index_fallback_scan_max_size()
                }
                _ => unreachable!(),
            };
            assert_eq!(value.unwrap(), 0);

            for value in ["-1", "abc"] {
                let options = HashMap::from([(option_name.to_string(), value.to_string())]);
                let core = CoreOptions::new(&options);

                let err = match option_name {
                    BTREE_INDEX_FALLBACK_SCAN_MAX_SIZE_OPTION => {
                        core.btree_index_fallback_scan_max_size()
                    }
                    BITMAP_INDEX_FALLBACK_SCAN_MAX_SIZE_OPTION => {
                        core.bitmap_index_fallback_scan_max_size()
                    }
                    _ => unreachable!(),
                }
                .expect_err("invalid fallback scan max size should fail");
                assert!(matches!(err, crate::Error::DataInvalid { message, .. }
                    if message.contains(option_name)));
            }
        }
    }

    #[test]
    fn test_btree_index_cache_size_matches_java_default_and_validates_values() {
        assert_eq!(
            CoreOptions::new(&HashMap::new())
                .btree_index_cache_size()
                .unwrap(),
            128 * 1024 * 1024
        );

        let disabled =
            HashMap::from([(BTREE_INDEX_CACHE_SIZE_OPTION.to_string(), "0".to_string())]);
        assert_eq!(
            CoreOptions::new(&disabled)
                .btree_index_cache_size()
                .unwrap(),
            0
        );

        for value in ["-1", "invalid"] {
            let options =
                HashMap::from([(BTREE_INDEX_CACHE_SIZE_OPTION.to_string(), value.to_string())]);
            let error = CoreOptions::new(&options)
                .btree_index_cache_size()
                .expect_err("invalid BTree cache size should fail");
            assert!(error.to_string().contains(BTREE_INDEX_CACHE_SIZE_OPTION));
        }
    }

    #[test]
    fn test_btree_index_data_block_cache_size_matches_java_pool_split() {
        let empty = HashMap::new();
        let defaults = CoreOptions::new(&empty);
        assert_eq!(
            defaults.btree_index_data_block_cache_size().unwrap(),
            (128.0 * 1024.0 * 1024.0 * 0.9) as usize
        );

        let options = HashMap::from([
            (
                BTREE_INDEX_CACHE_SIZE_OPTION.to_string(),
                (128 * 1024 * 1024).to_string(),
            ),
            (
                BTREE_INDEX_HIGH_PRIORITY_POOL_RATIO_OPTION.to_string(),
                "0.9".to_string(),
            ),
        ]);
        assert_eq!(
            CoreOptions::new(&options)
                .btree_index_data_block_cache_size()
                .unwrap(),
            (128.0 * 1024.0 * 1024.0 * 0.1) as usize
        );

        for value in ["-0.1", "1", "NaN", "invalid"] {
            let options = HashMap::from([(
                BTREE_INDEX_HIGH_PRIORITY_POOL_RATIO_OPTION.to_string(),
                value.to_string(),
            )]);
            let error = CoreOptions::new(&options)
                .btree_index_data_block_cache_size()
                .expect_err("invalid BTree cache ratio should fail");
            assert!(error
                .to_string()
                .contains(BTREE_INDEX_HIGH_PRIORITY_POOL_RATIO_OPTION));
        }
    }

    #[test]
    fn test_file_formats_are_normalized_to_lowercase() {
        // Java routes every file-format option through
        // `CoreOptions.normalizeFileFormat`, which lowercases it. The value ends
        // up in the data file name, so an uppercase option would otherwise write
        // `data-<uuid>-0.PARQUET` where Java writes `.parquet`.
        for raw in ["PARQUET", "Parquet", " parquet ", "parquet"] {
            let options = HashMap::from([(FILE_FORMAT_OPTION.to_string(), raw.to_string())]);
            assert_eq!(
                CoreOptions::new(&options).file_format(),
                "parquet",
                "file.format = {raw:?} should normalize to \"parquet\""
            );
        }

        let options = HashMap::from([(
            CHANGELOG_FILE_FORMAT_OPTION.to_string(),
            " AVRO ".to_string(),
        )]);
        assert_eq!(CoreOptions::new(&options).changelog_file_format(), "avro");

        let options =
            HashMap::from([(VECTOR_FILE_FORMAT_OPTION.to_string(), "VORTEX".to_string())]);
        assert_eq!(
            CoreOptions::new(&options).vector_file_format().as_deref(),
            Some("vortex")
        );
    }

    #[test]
    fn test_file_format_defaults_and_blank_handling() {
        let empty = HashMap::new();
        assert_eq!(CoreOptions::new(&empty).file_format(), "parquet");
        // `changelog-file.format` falls back to `file.format`, still normalized.
        let options = HashMap::from([(FILE_FORMAT_OPTION.to_string(), "ORC".to_string())]);
        assert_eq!(CoreOptions::new(&options).changelog_file_format(), "orc");

        // A blank value is not a format: fall back rather than return "".
        for raw in ["", "   "] {
            let options = HashMap::from([(FILE_FORMAT_OPTION.to_string(), raw.to_string())]);
            assert_eq!(CoreOptions::new(&options).file_format(), "parquet");
            let options = HashMap::from([(VECTOR_FILE_FORMAT_OPTION.to_string(), raw.to_string())]);
            assert_eq!(CoreOptions::new(&options).vector_file_format(), None);
        }
    }

    #[test]
    fn test_parse_memory_size() {
        assert_eq!(parse_memory_size("1024"), Some(1024));
        assert_eq!(parse_memory_size("128 mb"), Some(128 * 1024 * 1024));
        assert_eq!(parse_memory_size("128mb"), Some(128 * 1024 * 1024));
        assert_eq!(parse_memory_size("4MB"), Some(4 * 1024 * 1024));
        assert_eq!(parse_memory_size("1 gb"), Some(1024 * 1024 * 1024));
        assert_eq!(parse_memory_size("1024 kb"), Some(1024 * 1024));
        assert_eq!(parse_memory_size("100 b"), Some(100));
        assert_eq!(parse_memory_size(""), None);
        assert_eq!(parse_memory_size("abc"), None);
    }

    #[test]
    fn file_block_size_reports_invalid_input_and_preserves_format_default() {
        let empty = HashMap::new();
        assert_eq!(CoreOptions::new(&empty).file_block_size().unwrap(), None);
        let valid = HashMap::from([("file.block-size".into(), "64 kb".into())]);
        assert_eq!(
            CoreOptions::new(&valid).file_block_size().unwrap(),
            Some(65_536)
        );
        let invalid = HashMap::from([("file.block-size".into(), "nope".into())]);
        assert!(CoreOptions::new(&invalid)
            .file_block_size()
            .unwrap_err()
            .to_string()
            .contains("file.block-size"));
    }

    #[test]
    fn test_parse_memory_size_accepts_every_java_unit_spelling() {
        // Every alias in Java `MemorySize.MemoryUnit`, which lists three
        // spellings per unit (e.g. `m`, `mb`, `mebibytes`).
        for (unit, multiplier) in [
            ("b", 1_i64),
            ("bytes", 1),
            ("k", 1024),
            ("kb", 1024),
            ("kibibytes", 1024),
            ("m", 1024 * 1024),
            ("mb", 1024 * 1024),
            ("mebibytes", 1024 * 1024),
            ("g", 1024 * 1024 * 1024),
            ("gb", 1024 * 1024 * 1024),
            ("gibibytes", 1024 * 1024 * 1024),
            ("t", 1024_i64 * 1024 * 1024 * 1024),
            ("tb", 1024_i64 * 1024 * 1024 * 1024),
            ("tebibytes", 1024_i64 * 1024 * 1024 * 1024),
        ] {
            assert_eq!(
                parse_memory_size(&format!("3{unit}")),
                Some(3 * multiplier),
                "unit '{unit}' should parse as {multiplier} bytes"
            );
            // Java lower-cases the unit and trims the gap, so these are equal.
            assert_eq!(
                parse_memory_size(&format!("3 {}", unit.to_uppercase())),
                Some(3 * multiplier),
                "unit '{unit}' should parse case-insensitively with a space"
            );
        }

        for unit in ["kib", "mib", "gib", "tib"] {
            assert_eq!(parse_memory_size(&format!("3{unit}")), None);
        }
    }

    #[test]
    fn test_parse_memory_size_rejects_overflow_instead_of_wrapping() {
        // Java raises "numeric overflow" for these; returning `None` lets the
        // callers fall back to their default rather than wrap to a negative
        // size (a debug build would panic on the multiplication).
        assert_eq!(parse_memory_size("9007199254740993 kb"), None);
        assert_eq!(parse_memory_size("9223372036854775807 tb"), None);
        // The largest representable value still parses.
        assert_eq!(
            parse_memory_size("8589934591 gb"),
            Some(8589934591 * 1024 * 1024 * 1024)
        );
    }

    #[test]
    fn test_parse_memory_size_rejects_unknown_and_malformed_units() {
        assert_eq!(parse_memory_size("128 zb"), None);
        assert_eq!(parse_memory_size("128 megabytes"), None);
        assert_eq!(parse_memory_size("mb"), None);
        assert_eq!(parse_memory_size("-1"), None);
    }

    #[test]
    fn test_parse_duration_millis_accepts_every_java_unit_spelling() {
        // Every label in Java `TimeUtils.TimeUnit`, plus the bare number that
        // Java reads as milliseconds.
        for (input, expected) in [
            ("60000", 60_000),
            ("2 d", 2 * 24 * 60 * 60 * 1000),
            ("2 day", 2 * 24 * 60 * 60 * 1000),
            ("2 days", 2 * 24 * 60 * 60 * 1000),
            ("3 h", 3 * 60 * 60 * 1000),
            ("3 hour", 3 * 60 * 60 * 1000),
            ("3 hours", 3 * 60 * 60 * 1000),
            ("2 min", 120_000),
            ("2 m", 120_000),
            ("2 minute", 120_000),
            ("2 minutes", 120_000),
            ("30 s", 30_000),
            ("30 sec", 30_000),
            ("30 secs", 30_000),
            ("30 second", 30_000),
            ("30 seconds", 30_000),
            ("500 ms", 500),
            ("500 milli", 500),
            ("500 millis", 500),
            ("500 millisecond", 500),
            ("500 milliseconds", 500),
            ("1500 µs", 1),
            ("1500 micros", 1),
            ("1500000 ns", 1),
            ("1500000 nanoseconds", 1),
        ] {
            assert_eq!(
                parse_duration_millis(input),
                Some(expected),
                "unexpected result for {input}"
            );
        }
    }

    #[test]
    fn test_parse_duration_millis_is_case_and_space_insensitive() {
        // Java lowercases the unit label and trims around it.
        assert_eq!(parse_duration_millis("2MIN"), Some(120_000));
        assert_eq!(parse_duration_millis("  30   S  "), Some(30_000));
    }

    #[test]
    fn test_parse_duration_millis_rejects_unknown_and_malformed_input() {
        assert_eq!(parse_duration_millis("2 weeks"), None);
        assert_eq!(parse_duration_millis("min"), None);
        assert_eq!(parse_duration_millis(""), None);
        assert_eq!(parse_duration_millis("-5"), None);
        // Java raises "numeric overflow" here; `None` lets callers fall back to
        // their default instead of wrapping.
        assert_eq!(parse_duration_millis("9223372036854775807 d"), None);
    }

    #[test]
    fn test_commit_wait_options_accept_java_duration_strings() {
        let options = HashMap::from([
            (COMMIT_TIMEOUT_OPTION.to_string(), "2 min".to_string()),
            (COMMIT_MIN_RETRY_WAIT_OPTION.to_string(), "1 s".to_string()),
            (COMMIT_MAX_RETRY_WAIT_OPTION.to_string(), "30 s".to_string()),
        ]);
        let core = CoreOptions::new(&options);
        assert_eq!(core.commit_timeout_ms(), 120_000);
        assert_eq!(core.commit_min_retry_wait_ms(), 1_000);
        assert_eq!(core.commit_max_retry_wait_ms(), 30_000);
    }

    #[test]
    fn test_partition_options_defaults() {
        let options = HashMap::new();
        let core = CoreOptions::new(&options);
        assert_eq!(core.partition_default_name(), "__DEFAULT_PARTITION__");
        assert!(core.legacy_partition_name());
    }

    #[test]
    fn test_partition_options_custom() {
        let options = HashMap::from([
            (
                PARTITION_DEFAULT_NAME_OPTION.to_string(),
                "NULL_PART".to_string(),
            ),
            (
                PARTITION_LEGACY_NAME_OPTION.to_string(),
                "false".to_string(),
            ),
        ]);
        let core = CoreOptions::new(&options);
        assert_eq!(core.partition_default_name(), "NULL_PART");
        assert!(!core.legacy_partition_name());
    }

    #[test]
    fn test_format_table_partition_only_value_in_path() {
        let options = HashMap::from([(
            FORMAT_TABLE_PARTITION_PATH_ONLY_VALUE_OPTION.to_string(),
            "true".to_string(),
        )]);
        let core = CoreOptions::new(&options);
        assert!(core.format_table_partition_only_value_in_path());
    }

    #[test]
    fn test_catalog_managed_format_table_options() {
        let empty = HashMap::new();
        let core = CoreOptions::new(&empty);
        assert!(!core.partitioned_table_in_metastore());
        assert!(!core.format_table_implementation_is_engine());

        let options = HashMap::from([
            (
                METASTORE_PARTITIONED_TABLE_OPTION.to_string(),
                "TrUe".to_string(),
            ),
            (
                FORMAT_TABLE_IMPLEMENTATION_OPTION.to_string(),
                "ENGINE".to_string(),
            ),
        ]);
        let core = CoreOptions::new(&options);
        assert!(core.partitioned_table_in_metastore());
        assert!(core.format_table_implementation_is_engine());
    }

    #[test]
    fn test_format_table_scan_list_parallelism() {
        let parallelism = |value: Option<&str>| {
            let options = value
                .map(|value| {
                    HashMap::from([(
                        FORMAT_TABLE_SCAN_LIST_PARALLELISM_OPTION.to_string(),
                        value.to_string(),
                    )])
                })
                .unwrap_or_default();
            CoreOptions::new(&options).format_table_scan_list_parallelism()
        };

        assert_eq!(parallelism(None), 64);
        assert_eq!(parallelism(Some("8")), 8);
        assert_eq!(parallelism(Some("0")), 1);
        assert_eq!(parallelism(Some("-3")), 1);
        assert_eq!(parallelism(Some("5000")), 1000);
        assert_eq!(parallelism(Some("many")), 64);
    }

    #[test]
    fn test_scan_manifest_parallelism() {
        let parallelism = |value: Option<&str>| {
            let options = value
                .map(|value| {
                    HashMap::from([(
                        SCAN_MANIFEST_PARALLELISM_OPTION.to_string(),
                        value.to_string(),
                    )])
                })
                .unwrap_or_default();
            CoreOptions::new(&options).scan_manifest_parallelism()
        };

        assert_eq!(
            parallelism(None).unwrap(),
            std::thread::available_parallelism()
                .map(|value| value.get())
                .unwrap_or(1)
        );
        assert_eq!(parallelism(Some("8")).unwrap(), 8);
        assert!(parallelism(Some("0")).is_err());
        assert!(parallelism(Some("many")).is_err());
    }

    #[test]
    fn test_scan_timestamp_parses_local_time_and_truncates_to_millis() {
        let zone = jiff::tz::db().get("Asia/Shanghai").unwrap();
        let midnight = 1_704_124_800_000_i64; // 2024-01-01T16:00:00Z
        let noon = 1_704_168_184_000_i64; // 2024-01-02T04:03:04Z
        for (value, expected) in [
            ("2024-01-02", midnight),
            ("2024-1-2 12:3:4", noon),
            ("2024-01-02 12:03:04", noon),
            ("2024-01-02 12:03:04.123456789", noon + 123),
            ("2024-01-02T12:03:04.9", noon + 900),
            ("2024-01-02T12:03", noon - 4000),
        ] {
            assert_eq!(
                parse_scan_timestamp(value, &zone).unwrap(),
                expected,
                "{value}"
            );
        }
    }

    #[test]
    fn test_scan_timestamp_matches_java_zone_transitions() {
        for (zone, value, expected) in [
            (
                "America/New_York",
                "2024-11-03 01:30:00",
                "2024-11-03T05:30:00Z",
            ),
            (
                "America/New_York",
                "2024-11-03 02:00:00",
                "2024-11-03T07:00:00Z",
            ),
            (
                "America/New_York",
                "2024-11-03 02:00:00.999",
                "2024-11-03T07:00:00.999Z",
            ),
            (
                "America/New_York",
                "2024-03-10 02:30:00",
                "2024-03-10T07:30:00Z",
            ),
            (
                "Australia/Lord_Howe",
                "2024-10-06 02:15:00",
                "2024-10-05T15:45:00Z",
            ),
            (
                "Pacific/Apia",
                "2011-12-30 12:00:00",
                "2011-12-30T22:00:00Z",
            ),
            (
                "UTC",
                "1969-12-31 23:59:59.999999999",
                "1969-12-31T23:59:59.999Z",
            ),
        ] {
            let zone = jiff::tz::db().get(zone).unwrap();
            assert_eq!(
                parse_scan_timestamp(value, &zone).unwrap(),
                chrono::DateTime::parse_from_rfc3339(expected)
                    .unwrap()
                    .timestamp_millis(),
                "{value} in {zone:?}"
            );
        }
    }

    #[test]
    fn test_scan_timestamp_local_overlap_uses_earlier_instant() {
        const CHILD: &str = "PAIMON_SCAN_TIMESTAMP_OVERLAP_CHILD";
        if std::env::var_os(CHILD).is_some() {
            // Resolve the system zone in a fresh process, including on Windows.
            let actual =
                parse_scan_timestamp("2024-11-03 01:30:00", &jiff::tz::TimeZone::system()).unwrap();
            assert_eq!(actual, 1_730_611_800_000); // 2024-11-03T05:30:00Z
            let overlap_end =
                parse_scan_timestamp("2024-11-03 02:00:00", &jiff::tz::TimeZone::system()).unwrap();
            assert_eq!(overlap_end, 1_730_617_200_000); // 2024-11-03T07:00:00Z
            let gap =
                parse_scan_timestamp("2024-03-10 02:30:00", &jiff::tz::TimeZone::system()).unwrap();
            assert_eq!(gap, 1_710_055_800_000); // 2024-03-10T07:30:00Z
            return;
        }
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "spec::core_options::tests::test_scan_timestamp_local_overlap_uses_earlier_instant",
            ])
            .env("TZ", "America/New_York")
            .env(CHILD, "1")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "child failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    #[test]
    fn test_scan_timestamp_rejects_invalid_values_and_conflicts() {
        for value in [
            "",
            "invalid",
            "1700000000000",
            "2024-13-01",
            "2024-01-01 25:00:00",
            "2024-01-01T00:00:00Z",
            "2024-01-01 23:59:60",
            "2024-01-01 00:00:00.1234567890",
        ] {
            let options = HashMap::from([("scan.timestamp".to_string(), value.to_string())]);
            let core = CoreOptions::new(&options);
            assert!(core.has_time_travel_selector());
            let err = core.try_time_travel_selector().unwrap_err();
            assert!(
                matches!(err, crate::Error::DataInvalid { message, .. } if message.contains("scan.timestamp")),
                "{value}"
            );
        }
        for selector in [
            SCAN_TIMESTAMP_MILLIS_OPTION,
            SCAN_WATERMARK_OPTION,
            SCAN_VERSION_OPTION,
            SCAN_SNAPSHOT_ID_OPTION,
            SCAN_TAG_NAME_OPTION,
        ] {
            let options = HashMap::from([
                ("scan.timestamp".to_string(), "2024-01-02".to_string()),
                (selector.to_string(), "1".to_string()),
            ]);
            let err = CoreOptions::new(&options)
                .try_time_travel_selector()
                .unwrap_err();
            assert!(
                matches!(err, crate::Error::DataInvalid { message, .. } if message.contains("Only one") && message.contains("scan.timestamp") && message.contains(selector))
            );
        }
        let options = HashMap::from([
            ("scan.timestamp".to_string(), "2024-01-02".to_string()),
            ("scan.mode".to_string(), "from-timestamp".to_string()),
        ]);
        assert!(CoreOptions::new(&options).validate_scan_options().is_ok());
    }

    #[test]
    fn test_try_time_travel_selector_rejects_conflicting_selectors() {
        let options = HashMap::from([
            (SCAN_VERSION_OPTION.to_string(), "tag1".to_string()),
            (SCAN_TIMESTAMP_MILLIS_OPTION.to_string(), "1234".to_string()),
        ]);
        let core = CoreOptions::new(&options);

        let err = core
            .try_time_travel_selector()
            .expect_err("conflicting selectors should fail");
        match err {
            crate::Error::DataInvalid { message, .. } => {
                assert!(message.contains("Only one time-travel selector may be set"));
                assert!(message.contains(SCAN_VERSION_OPTION));
                assert!(message.contains(SCAN_TIMESTAMP_MILLIS_OPTION));
            }
            other => panic!("unexpected error: {other:?}"),
        }
    }

    #[test]
    fn test_try_time_travel_selector_rejects_invalid_numeric_values() {
        let timestamp_options =
            HashMap::from([(SCAN_TIMESTAMP_MILLIS_OPTION.to_string(), "xyz".to_string())]);
        let timestamp_core = CoreOptions::new(&timestamp_options);

        let timestamp_err = timestamp_core
            .try_time_travel_selector()
            .expect_err("invalid timestamp millis should fail");
        match timestamp_err {
            crate::Error::DataInvalid { message, .. } => {
                assert!(message.contains(SCAN_TIMESTAMP_MILLIS_OPTION));
            }
            other => panic!("unexpected error: {other:?}"),
        }
    }

    #[test]
    fn test_merge_engine_accepts_partial_update() {
        let options = HashMap::from([(MERGE_ENGINE_OPTION.to_string(), "partial-update".into())]);
        let core = CoreOptions::new(&options);

        assert_eq!(core.merge_engine().unwrap(), MergeEngine::PartialUpdate);
    }

    #[test]
    fn test_merge_engine_accepts_aggregation() {
        let options = HashMap::from([(MERGE_ENGINE_OPTION.to_string(), "aggregation".into())]);
        let core = CoreOptions::new(&options);

        assert_eq!(core.merge_engine().unwrap(), MergeEngine::Aggregation);
    }

    #[test]
    fn test_changelog_producer_defaults_to_none() {
        let options = HashMap::new();
        let core = CoreOptions::new(&options);

        assert_eq!(core.changelog_producer(), "none");
        assert_eq!(
            core.try_changelog_producer().unwrap(),
            ChangelogProducer::None
        );
    }

    #[test]
    fn test_diff_parallelism_defaults() {
        let options = HashMap::new();
        let core = CoreOptions::new(&options);
        assert_eq!(core.diff_parallelism(), 4);

        let options = HashMap::from([(DIFF_PARALLELISM_OPTION.to_string(), "0".into())]);
        let core = CoreOptions::new(&options);
        assert_eq!(core.diff_parallelism(), 1);

        let options = HashMap::from([(DIFF_PARALLELISM_OPTION.to_string(), "8".into())]);
        let core = CoreOptions::new(&options);
        assert_eq!(core.diff_parallelism(), 8);
    }

    #[test]
    fn test_changelog_producer_accepts_known_values() {
        for (value, expected) in [
            ("none", ChangelogProducer::None),
            ("input", ChangelogProducer::Input),
            ("full-compaction", ChangelogProducer::FullCompaction),
            ("lookup", ChangelogProducer::Lookup),
            ("INPUT", ChangelogProducer::Input),
        ] {
            let options = HashMap::from([(CHANGELOG_PRODUCER_OPTION.to_string(), value.into())]);
            let core = CoreOptions::new(&options);

            assert_eq!(core.try_changelog_producer().unwrap(), expected);
        }
    }

    #[test]
    fn test_changelog_producer_rejects_unknown_values() {
        let options = HashMap::from([(CHANGELOG_PRODUCER_OPTION.to_string(), "other".into())]);
        let core = CoreOptions::new(&options);

        let err = core
            .try_changelog_producer()
            .expect_err("unknown producer should fail");
        assert!(
            matches!(err, crate::Error::Unsupported { message } if message.contains("Unsupported changelog-producer"))
        );
    }

    #[test]
    fn test_changelog_file_options_defaults_and_overrides() {
        let default_options = HashMap::from([
            (FILE_FORMAT_OPTION.to_string(), "avro".to_string()),
            (FILE_COMPRESSION_OPTION.to_string(), "snappy".to_string()),
        ]);
        let default_core = CoreOptions::new(&default_options);

        assert_eq!(default_core.data_file_prefix(), "data-");
        assert_eq!(default_core.changelog_file_prefix(), "changelog-");
        assert_eq!(default_core.changelog_file_format(), "avro");
        assert_eq!(default_core.changelog_file_compression(), "snappy");
        assert_eq!(default_core.changelog_file_stats_mode(), None);

        let custom_options = HashMap::from([
            (DATA_FILE_PREFIX_OPTION.to_string(), "files-".to_string()),
            (
                CHANGELOG_FILE_PREFIX_OPTION.to_string(),
                "custom-".to_string(),
            ),
            (
                CHANGELOG_FILE_FORMAT_OPTION.to_string(),
                "parquet".to_string(),
            ),
            (
                CHANGELOG_FILE_COMPRESSION_OPTION.to_string(),
                "zstd".to_string(),
            ),
            (
                CHANGELOG_FILE_STATS_MODE_OPTION.to_string(),
                "counts".to_string(),
            ),
        ]);
        let custom_core = CoreOptions::new(&custom_options);

        assert_eq!(custom_core.data_file_prefix(), "files-");
        assert_eq!(custom_core.changelog_file_prefix(), "custom-");
        assert_eq!(custom_core.changelog_file_format(), "parquet");
        assert_eq!(custom_core.changelog_file_compression(), "zstd");
        assert_eq!(custom_core.changelog_file_stats_mode(), Some("counts"));
    }

    #[test]
    fn test_metadata_stats_modes_follow_java_priority() {
        let options = HashMap::from([
            (METADATA_STATS_MODE_OPTION.to_string(), "counts".to_string()),
            (
                METADATA_STATS_KEEP_FIRST_N_COLUMNS_OPTION.to_string(),
                "2".to_string(),
            ),
            ("fields.name.stats-mode".to_string(), "full".to_string()),
            (
                "fields.payload.stats-mode".to_string(),
                "truncate(8)".to_string(),
            ),
        ]);
        let core = CoreOptions::new(&options);

        assert_eq!(
            core.metadata_stats_modes(["id", "name", "payload", "extra"])
                .unwrap(),
            vec![
                MetadataStatsMode::Counts,
                MetadataStatsMode::Full,
                MetadataStatsMode::Truncate(8),
                MetadataStatsMode::None,
            ]
        );
    }

    #[test]
    fn test_pk_file_metadata_stats_mode_follows_java_precedence() {
        let options = HashMap::from([
            (METADATA_STATS_MODE_OPTION.to_string(), "none".to_string()),
            (
                METADATA_STATS_MODE_PER_LEVEL_OPTION.to_string(),
                "0:counts,1:truncate(8)".to_string(),
            ),
            (
                CHANGELOG_FILE_STATS_MODE_OPTION.to_string(),
                "full".to_string(),
            ),
        ]);
        let core = CoreOptions::new(&options);
        assert_eq!(
            core.pk_file_metadata_stats_mode(0, false).unwrap(),
            "counts"
        );
        assert_eq!(
            core.pk_file_metadata_stats_mode(1, false).unwrap(),
            "truncate(8)"
        );
        assert_eq!(core.pk_file_metadata_stats_mode(2, false).unwrap(), "none");
        assert_eq!(core.pk_file_metadata_stats_mode(0, true).unwrap(), "full");

        let invalid = HashMap::from([(
            METADATA_STATS_MODE_PER_LEVEL_OPTION.to_string(),
            "x:counts".to_string(),
        )]);
        assert!(CoreOptions::new(&invalid)
            .pk_file_metadata_stats_mode(0, false)
            .is_err());
    }

    #[test]
    fn test_metadata_stats_mode_rejects_invalid_values() {
        let options = HashMap::from([(
            METADATA_STATS_MODE_OPTION.to_string(),
            "truncate(0)".to_string(),
        )]);
        let core = CoreOptions::new(&options);

        let err = core
            .metadata_stats_mode()
            .expect_err("zero truncate length should fail");
        assert!(matches!(err, crate::Error::DataInvalid { message, .. }
            if message.contains(METADATA_STATS_MODE_OPTION)));
    }

    #[test]
    fn test_vector_file_options_defaults_and_overrides() {
        let default_options =
            HashMap::from([("target-file-size".to_string(), "32 mb".to_string())]);
        let default_core = CoreOptions::new(&default_options);
        assert_eq!(default_core.vector_file_format(), None);
        assert_eq!(default_core.vector_target_file_size(), 32 * 1024 * 1024);

        let custom_options = HashMap::from([
            (VECTOR_FILE_FORMAT_OPTION.to_string(), "vortex".to_string()),
            (
                VECTOR_TARGET_FILE_SIZE_OPTION.to_string(),
                "64 mb".to_string(),
            ),
        ]);
        let custom_core = CoreOptions::new(&custom_options);
        assert_eq!(custom_core.vector_file_format().as_deref(), Some("vortex"));
        assert_eq!(custom_core.vector_target_file_size(), 64 * 1024 * 1024);
    }

    #[test]
    fn test_commit_options_defaults() {
        let options = HashMap::new();
        let core = CoreOptions::new(&options);
        assert_eq!(core.bucket(), -1);
        assert_eq!(core.commit_max_retries(), 10);
        assert_eq!(core.commit_timeout_ms(), u64::MAX);
        assert_eq!(core.commit_min_retry_wait_ms(), 10);
        assert_eq!(core.commit_max_retry_wait_ms(), 10_000);
        assert!(!core.row_tracking_enabled());
        assert_eq!(core.manifest_compression(), "zstd");
        assert_eq!(core.manifest_target_size(), 8 * 1024 * 1024);
        assert!(!core.manifest_sidecar_enabled());
    }

    #[test]
    fn test_commit_options_custom() {
        let options = HashMap::from([
            (BUCKET_OPTION.to_string(), "4".to_string()),
            (COMMIT_MAX_RETRIES_OPTION.to_string(), "20".to_string()),
            (COMMIT_TIMEOUT_OPTION.to_string(), "60000".to_string()),
            (COMMIT_MIN_RETRY_WAIT_OPTION.to_string(), "500".to_string()),
            (COMMIT_MAX_RETRY_WAIT_OPTION.to_string(), "5000".to_string()),
            (ROW_TRACKING_ENABLED_OPTION.to_string(), "true".to_string()),
            (
                MANIFEST_TARGET_FILE_SIZE_OPTION.to_string(),
                "1kb".to_string(),
            ),
            (MANIFEST_COMPRESSION_OPTION.to_string(), "null".to_string()),
        ]);
        let core = CoreOptions::new(&options);
        assert_eq!(core.bucket(), 4);
        assert_eq!(core.commit_max_retries(), 20);
        assert_eq!(core.commit_timeout_ms(), 60_000);
        assert_eq!(core.commit_min_retry_wait_ms(), 500);
        assert_eq!(core.commit_max_retry_wait_ms(), 5_000);
        assert!(core.row_tracking_enabled());
        assert_eq!(core.manifest_compression(), "null");
        assert_eq!(core.manifest_target_size(), 1024);
    }

    #[test]
    fn test_manifest_target_size_accepts_compat_alias() {
        let options = HashMap::from([(MANIFEST_TARGET_SIZE_OPTION.to_string(), "2kb".into())]);
        let core = CoreOptions::new(&options);

        assert_eq!(core.manifest_target_size(), 2 * 1024);
    }

    #[test]
    fn test_manifest_sidecar_defaults_to_sort_with_explicit_override() {
        for (sort, sidecar, expected) in [
            (None, None, false),
            (Some("true"), None, true),
            (Some("false"), None, false),
            (Some("true"), Some("false"), false),
            (Some("false"), Some("true"), true),
        ] {
            let mut options = HashMap::new();
            if let Some(sort) = sort {
                options.insert(MANIFEST_SORT_ENABLED_OPTION.to_string(), sort.to_string());
            }
            if let Some(sidecar) = sidecar {
                options.insert(
                    MANIFEST_SIDECAR_ENABLED_OPTION.to_string(),
                    sidecar.to_string(),
                );
            }
            assert_eq!(
                CoreOptions::new(&options).manifest_sidecar_enabled(),
                expected
            );
        }
    }

    #[test]
    fn test_try_time_travel_selector_normalizes_valid_selector() {
        let timestamp_options =
            HashMap::from([(SCAN_TIMESTAMP_MILLIS_OPTION.to_string(), "1234".to_string())]);
        let timestamp_core = CoreOptions::new(&timestamp_options);
        assert_eq!(
            timestamp_core
                .try_time_travel_selector()
                .expect("timestamp selector"),
            Some(TimeTravelSelector::TimestampMillis(1234))
        );

        let version_options =
            HashMap::from([(SCAN_VERSION_OPTION.to_string(), "my-tag".to_string())]);
        let version_core = CoreOptions::new(&version_options);
        assert_eq!(
            version_core
                .try_time_travel_selector()
                .expect("version selector"),
            Some(TimeTravelSelector::Version {
                value: "my-tag",
                option_name: SCAN_VERSION_OPTION
            })
        );

        let version_num_options =
            HashMap::from([(SCAN_VERSION_OPTION.to_string(), "3".to_string())]);
        let version_num_core = CoreOptions::new(&version_num_options);
        assert_eq!(
            version_num_core
                .try_time_travel_selector()
                .expect("version numeric selector"),
            Some(TimeTravelSelector::Version {
                value: "3",
                option_name: SCAN_VERSION_OPTION
            })
        );
    }

    #[test]
    fn test_snapshot_id_and_tag_name_map_to_distinct_selectors() {
        let snap = HashMap::from([(SCAN_SNAPSHOT_ID_OPTION.to_string(), "2".to_string())]);
        assert_eq!(
            CoreOptions::new(&snap).try_time_travel_selector().unwrap(),
            Some(TimeTravelSelector::SnapshotId {
                value: "2",
                option_name: SCAN_SNAPSHOT_ID_OPTION
            })
        );
        let tag = HashMap::from([(SCAN_TAG_NAME_OPTION.to_string(), "t1".to_string())]);
        assert_eq!(
            CoreOptions::new(&tag).try_time_travel_selector().unwrap(),
            Some(TimeTravelSelector::TagName {
                value: "t1",
                option_name: SCAN_TAG_NAME_OPTION
            })
        );
    }

    #[test]
    fn test_watermark_maps_to_watermark_selector() {
        let options = HashMap::from([(SCAN_WATERMARK_OPTION.to_string(), "1234".to_string())]);
        assert_eq!(
            CoreOptions::new(&options)
                .try_time_travel_selector()
                .unwrap(),
            Some(TimeTravelSelector::Watermark(1234))
        );

        // Strict numeric parsing, like scan.timestamp-millis.
        let options = HashMap::from([(SCAN_WATERMARK_OPTION.to_string(), "abc".to_string())]);
        assert!(CoreOptions::new(&options)
            .try_time_travel_selector()
            .is_err());
    }

    #[test]
    fn test_watermark_conflicts_with_other_selectors() {
        let options = HashMap::from([
            (SCAN_WATERMARK_OPTION.to_string(), "1".to_string()),
            (SCAN_TIMESTAMP_MILLIS_OPTION.to_string(), "2".to_string()),
        ]);
        let err = CoreOptions::new(&options)
            .try_time_travel_selector()
            .unwrap_err();
        match err {
            crate::Error::DataInvalid { message, .. } => {
                assert!(message.contains(SCAN_WATERMARK_OPTION));
                assert!(message.contains(SCAN_TIMESTAMP_MILLIS_OPTION));
            }
            other => panic!("unexpected: {other:?}"),
        }
    }

    #[test]
    fn test_snapshot_id_conflicts_with_version_lists_original_keys() {
        let options = HashMap::from([
            (SCAN_SNAPSHOT_ID_OPTION.to_string(), "1".to_string()),
            (SCAN_TAG_NAME_OPTION.to_string(), "t".to_string()),
        ]);
        let err = CoreOptions::new(&options)
            .try_time_travel_selector()
            .unwrap_err();
        match err {
            crate::Error::DataInvalid { message, .. } => {
                assert!(message.contains(SCAN_SNAPSHOT_ID_OPTION));
                assert!(message.contains(SCAN_TAG_NAME_OPTION));
            }
            other => panic!("unexpected: {other:?}"),
        }
    }

    #[test]
    fn test_write_options_defaults() {
        let options = HashMap::new();
        let core = CoreOptions::new(&options);
        assert_eq!(core.write_parquet_buffer_size(), 256 * 1024 * 1024);
    }

    #[test]
    fn test_write_options_custom() {
        let options = HashMap::from([(
            WRITE_PARQUET_BUFFER_SIZE_OPTION.to_string(),
            "32mb".to_string(),
        )]);
        let core = CoreOptions::new(&options);
        assert_eq!(core.write_parquet_buffer_size(), 32 * 1024 * 1024);
    }

    #[test]
    fn test_blob_view_options() {
        let options = HashMap::from([
            (BLOB_FIELD_OPTION.to_string(), "raw".to_string()),
            (
                BLOB_DESCRIPTOR_FIELD_OPTION.to_string(),
                "thumb, payload".to_string(),
            ),
            (
                BLOB_VIEW_FIELD_OPTION.to_string(),
                "image, video".to_string(),
            ),
        ]);
        let core = CoreOptions::new(&options);

        assert_eq!(
            core.blob_fields(),
            HashSet::from([
                "raw".to_string(),
                "thumb".to_string(),
                "payload".to_string(),
                "image".to_string(),
                "video".to_string()
            ])
        );
        assert_eq!(
            core.blob_descriptor_fields(),
            HashSet::from(["thumb".to_string(), "payload".to_string()])
        );
        assert_eq!(
            core.blob_view_fields(),
            HashSet::from(["image".to_string(), "video".to_string()])
        );
        assert_eq!(
            core.blob_inline_fields(),
            HashSet::from([
                "thumb".to_string(),
                "payload".to_string(),
                "image".to_string(),
                "video".to_string()
            ])
        );
        assert!(core.blob_view_resolve_enabled());

        let disabled = HashMap::from([(
            BLOB_VIEW_RESOLVE_ENABLED_OPTION.to_string(),
            "false".to_string(),
        )]);
        assert!(!CoreOptions::new(&disabled).blob_view_resolve_enabled());
    }

    #[test]
    fn blob_descriptor_fallback_obeys_canonical_presence() {
        for (canonical, expected) in [
            (None, vec!["a", "b"]),
            (Some("current"), vec!["current"]),
            (Some(""), vec![]),
            (Some(" , "), vec![]),
        ] {
            let mut options = HashMap::from([
                ("blob.stored-descriptor-fields".into(), " a, b,a, ".into()),
                ("blob-view-field".into(), "view".into()),
            ]);
            if let Some(value) = canonical {
                options.insert("blob-descriptor-field".into(), value.into());
            }
            let core = CoreOptions::new(&options);
            let descriptors = expected
                .into_iter()
                .map(String::from)
                .collect::<HashSet<_>>();
            assert_eq!(core.blob_descriptor_fields(), descriptors);
            let mut inline = descriptors;
            inline.insert("view".into());
            assert_eq!(core.blob_inline_fields(), inline);
            assert_eq!(core.blob_fields(), inline);
        }
    }

    #[test]
    fn test_validate_scan_options_rejects_unsupported() {
        for key in [
            "incremental-between",
            "incremental-between-timestamp",
            "incremental-between-scan-mode",
        ] {
            let options = HashMap::from([(key.to_string(), "x".to_string())]);
            let err = CoreOptions::new(&options)
                .validate_scan_options()
                .unwrap_err();
            assert!(matches!(err, crate::Error::Unsupported { message } if message.contains(key)));
        }
    }

    #[test]
    fn test_validate_scan_options_scan_mode_whitelist() {
        // absent OK
        assert!(CoreOptions::new(&HashMap::new())
            .validate_scan_options()
            .is_ok());
        // default OK
        let ok = HashMap::from([("scan.mode".to_string(), "default".to_string())]);
        assert!(CoreOptions::new(&ok).validate_scan_options().is_ok());
        // unimplemented modes Unsupported
        for mode in ["compacted-full", "incremental", "latest", "latest-full"] {
            let bad = HashMap::from([("scan.mode".to_string(), mode.to_string())]);
            let err = CoreOptions::new(&bad).validate_scan_options().unwrap_err();
            assert!(
                matches!(err, crate::Error::Unsupported { message } if message.contains("scan.mode")),
                "scan.mode={mode} should be Unsupported"
            );
        }
    }

    #[test]
    fn test_validate_scan_options_explicit_mode_with_matching_selector() {
        // Java's CoreOptions.setDefaultValues() writes scan.mode=from-snapshot
        // next to scan.snapshot-id, so these combinations are standard input.
        for selector in [
            SCAN_SNAPSHOT_ID_OPTION,
            SCAN_TAG_NAME_OPTION,
            SCAN_VERSION_OPTION,
            SCAN_WATERMARK_OPTION,
        ] {
            let options = HashMap::from([
                ("scan.mode".to_string(), "from-snapshot".to_string()),
                (selector.to_string(), "1".to_string()),
            ]);
            assert!(
                CoreOptions::new(&options).validate_scan_options().is_ok(),
                "scan.mode=from-snapshot with {selector} should be accepted"
            );
        }
        let options = HashMap::from([
            ("scan.mode".to_string(), "from-timestamp".to_string()),
            (SCAN_TIMESTAMP_MILLIS_OPTION.to_string(), "1".to_string()),
        ]);
        assert!(CoreOptions::new(&options).validate_scan_options().is_ok());
    }

    #[test]
    fn test_validate_scan_options_explicit_mode_without_selector() {
        // An explicit mode missing its selector must fail loudly instead of
        // silently reading latest (mirrors Java SchemaValidation).
        let options = HashMap::from([("scan.mode".to_string(), "from-snapshot".to_string())]);
        let err = CoreOptions::new(&options)
            .validate_scan_options()
            .unwrap_err();
        assert!(
            matches!(err, crate::Error::DataInvalid { ref message, .. } if message.contains("from-snapshot")),
            "got {err:?}"
        );

        let options = HashMap::from([("scan.mode".to_string(), "from-timestamp".to_string())]);
        let err = CoreOptions::new(&options)
            .validate_scan_options()
            .unwrap_err();
        assert!(
            matches!(err, crate::Error::DataInvalid { ref message, .. } if message.contains("from-timestamp")),
            "got {err:?}"
        );

        // A mismatched selector doesn't satisfy the mode either.
        let options = HashMap::from([
            ("scan.mode".to_string(), "from-timestamp".to_string()),
            (SCAN_SNAPSHOT_ID_OPTION.to_string(), "1".to_string()),
        ]);
        assert!(CoreOptions::new(&options).validate_scan_options().is_err());
    }

    #[test]
    fn test_validate_scan_options_allows_supported_selectors() {
        let options = HashMap::from([(SCAN_SNAPSHOT_ID_OPTION.to_string(), "1".to_string())]);
        assert!(CoreOptions::new(&options).validate_scan_options().is_ok());
    }

    #[test]
    fn ignore_delete_reads_primary_and_fallback_keys() {
        let fallback =
            HashMap::from([("deduplicate.ignore-delete".to_string(), "true".to_string())]);
        let opts = CoreOptions::new(&fallback);
        assert!(opts.ignore_delete());

        let partial_update = HashMap::from([(
            "partial-update.ignore-delete".to_string(),
            "true".to_string(),
        )]);
        let opts = CoreOptions::new(&partial_update);
        assert!(opts.ignore_delete());

        let primary = HashMap::from([("ignore-delete".to_string(), "true".to_string())]);
        let opts = CoreOptions::new(&primary);
        assert!(opts.ignore_delete());

        let primary_precedence = HashMap::from([
            ("ignore-delete".to_string(), "false".to_string()),
            (
                "partial-update.ignore-delete".to_string(),
                "true".to_string(),
            ),
        ]);
        let opts = CoreOptions::new(&primary_precedence);
        assert!(!opts.ignore_delete());
    }

    #[test]
    fn ignore_update_before_defaults_false() {
        let options = HashMap::new();
        let opts = CoreOptions::new(&options);
        assert!(!opts.ignore_update_before());
    }

    #[test]
    fn test_pk_vector_index_disabled_by_default() {
        let opts = HashMap::new();
        assert!(!CoreOptions::new(&opts).primary_key_vector_index_enabled());
    }

    #[test]
    fn test_pk_vector_single_column_and_type_and_metric() {
        let opts = HashMap::from([
            (
                "pk-vector.index.columns".to_string(),
                " embedding ".to_string(),
            ),
            (
                "fields.embedding.pk-vector.index.type".to_string(),
                "ivf-flat".to_string(),
            ),
            (
                "fields.embedding.pk-vector.distance.metric".to_string(),
                "Inner-Product".to_string(),
            ),
        ]);
        let co = CoreOptions::new(&opts);
        assert!(co.primary_key_vector_index_enabled());
        assert_eq!(co.primary_key_vector_index_column().unwrap(), "embedding");
        assert_eq!(
            co.primary_key_vector_index_type("embedding").unwrap(),
            "ivf-flat"
        );
        assert_eq!(
            co.primary_key_vector_distance_metric("embedding").unwrap(),
            "Inner-Product"
        );
    }

    #[test]
    fn test_pk_vector_metric_defaults_to_inner_product() {
        let opts = HashMap::from([("pk-vector.index.columns".to_string(), "e".to_string())]);
        assert_eq!(
            CoreOptions::new(&opts)
                .primary_key_vector_distance_metric("e")
                .unwrap(),
            "inner_product"
        );
    }

    #[test]
    fn test_pk_vector_unknown_metric_errors() {
        let opts = HashMap::from([
            ("pk-vector.index.columns".to_string(), "e".to_string()),
            (
                "fields.e.pk-vector.distance.metric".to_string(),
                "manhattan".to_string(),
            ),
        ]);
        assert!(CoreOptions::new(&opts)
            .primary_key_vector_distance_metric("e")
            .is_err());
    }

    #[test]
    fn test_pk_vector_index_columns_preserve_blank_tokens() {
        for (value, expected) in [
            ("embedding,", vec!["embedding", ""]),
            (",embedding", vec!["", "embedding"]),
            ("embedding,,", vec!["embedding", "", ""]),
            (" ", vec![""]),
        ] {
            let opts = HashMap::from([("pk-vector.index.columns".to_string(), value.to_string())]);
            assert_eq!(
                CoreOptions::new(&opts)
                    .primary_key_vector_index_columns()
                    .unwrap(),
                expected
            );
        }
    }

    #[test]
    fn test_pk_vector_multiple_columns_unsupported() {
        let opts = HashMap::from([("pk-vector.index.columns".to_string(), "a,b".to_string())]);
        assert!(CoreOptions::new(&opts)
            .primary_key_vector_index_column()
            .is_err());
    }

    #[test]
    fn test_pk_vector_index_type_absent_errors() {
        let opts = HashMap::from([("pk-vector.index.columns".to_string(), "e".to_string())]);
        assert!(CoreOptions::new(&opts)
            .primary_key_vector_index_type("e")
            .is_err());
    }

    #[test]
    fn test_pk_full_text_index_absent_is_disabled_and_empty() {
        let opts = HashMap::new();
        let co = CoreOptions::new(&opts);
        assert!(!co.primary_key_full_text_index_enabled());
        assert_eq!(
            co.primary_key_full_text_index_columns(),
            Vec::<String>::new()
        );
    }

    #[test]
    fn test_pk_full_text_index_columns_split_and_trim() {
        let opts = HashMap::from([(
            "pk-full-text.index.columns".to_string(),
            "a, b ,c".to_string(),
        )]);
        let co = CoreOptions::new(&opts);
        assert!(co.primary_key_full_text_index_enabled());
        assert_eq!(
            co.primary_key_full_text_index_columns(),
            vec!["a".to_string(), "b".to_string(), "c".to_string()]
        );
    }

    #[test]
    fn test_pk_full_text_index_columns_preserve_blank_tokens() {
        // Java `split(",",-1).map(trim)` keeps empty tokens, so "a,,b" yields
        // three columns with a blank in the middle.
        let opts = HashMap::from([("pk-full-text.index.columns".to_string(), "a,,b".to_string())]);
        let co = CoreOptions::new(&opts);
        assert!(co.primary_key_full_text_index_enabled());
        assert_eq!(
            co.primary_key_full_text_index_columns(),
            vec!["a".to_string(), "".to_string(), "b".to_string()]
        );
    }

    #[test]
    fn test_pk_full_text_index_blank_value_is_enabled_but_empty_no_error() {
        // key present but only blanks: enabled (key exists), NO error (lenient,
        // unlike vector). Blank tokens are PRESERVED to match Java's
        // `split(",",-1).map(trim)`, so " , " yields two empty tokens (NOT []).
        let opts = HashMap::from([("pk-full-text.index.columns".to_string(), " , ".to_string())]);
        let co = CoreOptions::new(&opts);
        assert!(co.primary_key_full_text_index_enabled());
        assert_eq!(
            co.primary_key_full_text_index_columns(),
            vec!["".to_string(), "".to_string()]
        );
    }
}
