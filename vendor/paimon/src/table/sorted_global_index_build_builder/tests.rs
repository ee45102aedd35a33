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

use super::*;
use crate::btree::{BTreeFileFooter, BTreeIndexMeta};
use crate::catalog::Identifier;
use crate::io::FileIOBuilder;
use crate::spec::stats::BinaryTableStats;
use crate::spec::{
    ArrayType, BinaryRow, BinaryRowBuilder, BinaryType, DataField, DataFileMeta, DoubleType,
    FileKind, FloatType, GlobalIndexMeta, GlobalIndexSearchMode, IndexFileMeta, IndexManifest,
    IntType, ManifestEntry, Predicate, PredicateBuilder, PredicateOperator, Schema, TableSchema,
    TimeType, VarBinaryType, VarCharType, ROW_ID_FIELD_NAME,
};
use crate::table::global_index_scanner::{evaluate_global_index, GlobalIndexEvaluation};
use crate::table::global_index_types::MULTIVALUE_GLOBAL_INDEX_TYPE;
use crate::table::{merge_row_ranges, SnapshotManager, TableCommit, TableWrite};
use arrow_array::builder::{Int32Builder, ListBuilder, Time32MillisecondBuilder};
use arrow_array::{
    Array, ArrayRef, Float32Array, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use arrow_schema::{DataType as ArrowDataType, Field as ArrowField, Schema as ArrowSchema};
use chrono::{DateTime, Utc};
use futures::TryStreamExt;
use std::sync::Arc;

/// A row range wider than `i32::MAX` yields the full count instead of being
/// rejected, and an inverted or overflowing range is still an error.
#[test]
fn checked_row_count_spans_beyond_i32() {
    let start = 0;
    let end = i64::from(i32::MAX) + 10;
    assert_eq!(
        super::checked_row_count(start, end).unwrap(),
        i64::from(i32::MAX) + 11
    );
    assert!(super::checked_row_count(5, 4).is_err());
    assert!(super::checked_row_count(i64::MIN, i64::MAX).is_err());
}

fn data_file(name: &str, first_row_id: Option<i64>, row_count: i64) -> DataFileMeta {
    DataFileMeta {
        file_name: name.to_string(),
        file_size: 128,
        row_count,
        min_key: vec![],
        max_key: vec![],
        key_stats: BinaryTableStats::new(vec![], vec![], vec![]),
        value_stats: BinaryTableStats::new(vec![], vec![], vec![]),
        min_sequence_number: 0,
        max_sequence_number: 0,
        schema_id: 0,
        level: 0,
        extra_files: vec![],
        creation_time: Some(
            "2024-09-06T07:45:55.039+00:00"
                .parse::<DateTime<Utc>>()
                .unwrap(),
        ),
        delete_row_count: None,
        embedded_index: None,
        first_row_id,
        write_cols: None,
        external_path: None,
        file_source: None,
        value_stats_cols: None,
        column_max_sequence_numbers: None,
    }
}

fn partial_file(name: &str, first_row_id: Option<i64>, row_count: i64) -> DataFileMeta {
    let mut file = data_file(name, first_row_id, row_count);
    file.write_cols = Some(vec!["name".to_string()]);
    file
}

fn manifest_entry(file: DataFileMeta) -> ManifestEntry {
    manifest_entry_with_bucket(file, 0, 1)
}

fn manifest_entry_with_bucket(
    file: DataFileMeta,
    bucket: i32,
    total_buckets: i32,
) -> ManifestEntry {
    ManifestEntry::new(FileKind::Add, vec![], bucket, total_buckets, file, 2)
}

fn table_options(records_per_range: &str) -> HashMap<String, String> {
    HashMap::from([
        ("row-tracking.enabled".to_string(), "true".to_string()),
        ("data-evolution.enabled".to_string(), "true".to_string()),
        ("global-index.enabled".to_string(), "true".to_string()),
        (
            "sorted-index.records-per-range".to_string(),
            records_per_range.to_string(),
        ),
    ])
}

fn test_table(options: HashMap<String, String>) -> Table {
    test_table_with_path("memory:/test_btree_global_index_builder", options)
}

fn test_table_with_path(table_path: &str, options: HashMap<String, String>) -> Table {
    let schema = Schema::builder()
        .column("id", DataType::Int(IntType::new()))
        .column("name", DataType::VarChar(VarCharType::string_type()))
        .options(options)
        .build()
        .unwrap();
    Table::new(
        FileIOBuilder::new("memory").build().unwrap(),
        Identifier::new("default", "test_table"),
        table_path.to_string(),
        TableSchema::new(0, &schema),
        None,
    )
}

fn multivalue_table(table_path: &str) -> Table {
    let schema = Schema::builder()
        .column("id", DataType::Int(IntType::new()))
        .column(
            "items",
            DataType::Array(ArrayType::new(DataType::Int(IntType::new()))),
        )
        .options(table_options("10"))
        .build()
        .unwrap();
    Table::new(
        FileIOBuilder::new("memory").build().unwrap(),
        Identifier::new("default", "test_multivalue_table"),
        table_path.to_string(),
        TableSchema::new(0, &schema),
        None,
    )
}

fn plan(
    entries: Vec<ManifestEntry>,
    records_per_range: i64,
) -> Result<Vec<SortedGlobalIndexShard>> {
    let table = test_table(table_options(&records_per_range.to_string()));
    let core = CoreOptions::new(table.schema().options());
    plan_sorted_index_shards(
        table.location(),
        table.schema().partition_keys(),
        table.schema().fields(),
        &core,
        1,
        entries,
        records_per_range,
        &[],
    )
}

#[test]
fn test_planner_splits_single_file_across_ranges() {
    let shards = plan(vec![manifest_entry(data_file("a", Some(0), 25))], 10).unwrap();

    assert_eq!(
        shards
            .iter()
            .map(|s| (s.row_range_start, s.row_range_end))
            .collect::<Vec<_>>(),
        vec![(0, 9), (10, 19), (20, 24)]
    );
}

#[test]
fn test_planner_merges_contiguous_normal_files() {
    let shards = plan(
        vec![
            manifest_entry(data_file("a", Some(0), 5)),
            manifest_entry(data_file("b", Some(5), 5)),
        ],
        20,
    )
    .unwrap();

    assert_eq!(shards.len(), 1);
    assert_eq!((shards[0].row_range_start, shards[0].row_range_end), (0, 9));
}

#[test]
fn test_planner_splits_row_id_gap_into_separate_shards() {
    let shards = plan(
        vec![
            manifest_entry(data_file("a", Some(0), 5)),
            manifest_entry(data_file("b", Some(10), 5)),
        ],
        20,
    )
    .unwrap();

    assert_eq!(
        shards
            .iter()
            .map(|s| (s.row_range_start, s.row_range_end))
            .collect::<Vec<_>>(),
        vec![(0, 4), (10, 14)]
    );
}

#[test]
fn test_planner_rejects_missing_first_row_id() {
    let err = plan(vec![manifest_entry(data_file("a", None, 5))], 10)
        .expect_err("missing first_row_id should fail");
    assert!(
        matches!(err, Error::DataInvalid { message, .. } if message.contains("missing first_row_id"))
    );
}

#[test]
fn test_planner_keeps_buckets_separate() {
    let shards = plan(
        vec![
            manifest_entry_with_bucket(data_file("a", Some(0), 5), 0, 2),
            manifest_entry_with_bucket(data_file("b", Some(5), 5), 1, 2),
        ],
        20,
    )
    .unwrap();

    assert_eq!(
        shards
            .iter()
            .map(|s| (
                s.source_bucket,
                s.total_buckets,
                s.row_range_start,
                s.row_range_end
            ))
            .collect::<Vec<_>>(),
        vec![(0, 2, 0, 4), (1, 2, 5, 9)]
    );
}

#[test]
fn test_planner_keeps_partial_file_in_read_group_without_expanding_coverage() {
    let shards = plan(
        vec![
            manifest_entry(data_file("base", Some(0), 5)),
            manifest_entry(partial_file("partial", Some(0), 5)),
        ],
        20,
    )
    .unwrap();

    assert_eq!(shards.len(), 1);
    assert_eq!((shards[0].row_range_start, shards[0].row_range_end), (0, 4));
    assert_eq!(shards[0].files.len(), 2);
}

#[test]
fn test_build_read_splits_groups_only_overlapping_partial_files() {
    let shards = plan(
        vec![
            manifest_entry(data_file("a", Some(0), 5)),
            manifest_entry(data_file("b", Some(5), 5)),
            manifest_entry(partial_file("partial", Some(0), 5)),
        ],
        20,
    )
    .unwrap();
    assert_eq!(shards.len(), 1);

    let splits = build_read_splits_for_shard(&shards[0]).unwrap();

    assert_eq!(splits.len(), 2);
    assert_eq!(
        splits[0]
            .data_files()
            .iter()
            .map(|file| file.file_name.as_str())
            .collect::<Vec<_>>(),
        vec!["a", "partial"]
    );
    assert_eq!(splits[0].row_ranges(), Some(&[RowRange::new(0, 4)][..]));
    assert!(!splits[0].raw_convertible());

    assert_eq!(
        splits[1]
            .data_files()
            .iter()
            .map(|file| file.file_name.as_str())
            .collect::<Vec<_>>(),
        vec!["b"]
    );
    assert_eq!(splits[1].row_ranges(), Some(&[RowRange::new(5, 9)][..]));
    assert!(splits[1].raw_convertible());
}

#[test]
fn test_validate_btree_field_rejects_complex_type() {
    let field = DataField::new(
        0,
        "items".to_string(),
        DataType::Array(crate::spec::ArrayType::new(DataType::Int(IntType::new()))),
    );
    let err = validate_btree_field(&field).expect_err("array should be rejected");
    assert!(matches!(err, Error::Unsupported { message } if message.contains("scalar")));
}

#[test]
fn test_validate_btree_field_rejects_binary_types() {
    for data_type in [
        DataType::Binary(BinaryType::new(4).unwrap()),
        DataType::VarBinary(VarBinaryType::try_new(true, 4).unwrap()),
    ] {
        let field = DataField::new(0, "bytes".to_string(), data_type);
        let err = validate_btree_field(&field).expect_err("binary should be rejected");
        assert!(matches!(err, Error::Unsupported { message } if message.contains("scalar")));
    }
}

fn index_batch(values: Vec<Option<i32>>, row_ids: Vec<Option<i64>>) -> RecordBatch {
    let schema = Arc::new(ArrowSchema::new(vec![
        ArrowField::new("id", ArrowDataType::Int32, true),
        ArrowField::new(ROW_ID_FIELD_NAME, ArrowDataType::Int64, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int32Array::from(values)) as ArrayRef,
            Arc::new(Int64Array::from(row_ids)) as ArrayRef,
        ],
    )
    .unwrap()
}

#[test]
fn test_extract_index_rows_serializes_keys_and_local_row_ids() {
    let batch = index_batch(
        vec![Some(10), None, Some(30)],
        vec![Some(5), Some(6), Some(7)],
    );
    let rows = extract_index_rows_from_batches(
        &[batch],
        "id",
        &DataType::Int(IntType::new()),
        5,
        3,
        serialize_datum,
    )
    .unwrap();

    assert_eq!(
        rows,
        vec![
            (Some(10i32.to_le_bytes().to_vec()), 0),
            (None, 1),
            (Some(30i32.to_le_bytes().to_vec()), 2),
        ]
    );
}

#[test]
fn test_extract_multivalue_rows_skips_null_arrays_and_elements() {
    let element = Arc::new(ArrowField::new("element", ArrowDataType::Int32, true));
    let mut items = ListBuilder::new(Int32Builder::new()).with_field(element.clone());
    items.values().append_value(10);
    items.values().append_null();
    items.values().append_value(10);
    items.append(true);
    items.append(true); // empty array
    items.append(false); // null array
    items.values().append_value(30);
    items.append(true);
    let schema = Arc::new(ArrowSchema::new(vec![
        ArrowField::new("items", ArrowDataType::List(element), true),
        ArrowField::new(ROW_ID_FIELD_NAME, ArrowDataType::Int64, false),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(items.finish()) as ArrayRef,
            Arc::new(Int64Array::from_iter_values(5..9)) as ArrayRef,
        ],
    )
    .unwrap();

    let rows = extract_multivalue_index_rows_from_batches(
        &[batch],
        "items",
        &DataType::Int(IntType::new()),
        5,
        4,
        serialize_bitmap_datum,
    )
    .unwrap();

    assert_eq!(
        rows,
        vec![
            (Some(10i32.to_le_bytes().to_vec()), 0),
            (Some(10i32.to_le_bytes().to_vec()), 0),
            (Some(30i32.to_le_bytes().to_vec()), 3),
        ]
    );
}

#[test]
fn test_extract_multivalue_time_rows_matches_java_int_serializer() {
    let element = Arc::new(ArrowField::new(
        "element",
        ArrowDataType::Time32(arrow_schema::TimeUnit::Millisecond),
        true,
    ));
    let mut items = ListBuilder::new(Time32MillisecondBuilder::new()).with_field(element.clone());
    items.values().append_value(12_345);
    items.values().append_null();
    items.append(true);
    items.values().append_value(86_399_999);
    items.append(true);
    let schema = Arc::new(ArrowSchema::new(vec![
        ArrowField::new("items", ArrowDataType::List(element), true),
        ArrowField::new(ROW_ID_FIELD_NAME, ArrowDataType::Int64, false),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(items.finish()) as ArrayRef,
            Arc::new(Int64Array::from_iter_values(7..9)) as ArrayRef,
        ],
    )
    .unwrap();
    let time_type = DataType::Time(TimeType::new(3).unwrap());

    let rows = extract_multivalue_index_rows_from_batches(
        &[batch],
        "items",
        &time_type,
        7,
        2,
        serialize_bitmap_datum,
    )
    .unwrap();

    assert_eq!(
        rows,
        vec![
            (Some(12_345i32.to_le_bytes().to_vec()), 0),
            (Some(86_399_999i32.to_le_bytes().to_vec()), 1),
        ]
    );
}

#[test]
fn test_index_key_codec_scopes_java_nan_semantics_to_bitmap() {
    fn assert_codec(
        data_type: DataType,
        negative_nan: Datum,
        raw_nan_key: Vec<u8>,
        canonical_nan_key: Vec<u8>,
        zero: Datum,
    ) {
        let (btree_cmp, btree_serialize) =
            make_index_key_codec(BTREE_GLOBAL_INDEX_TYPE, &data_type);
        let btree_nan_key = btree_serialize(&negative_nan, &data_type);
        let zero_key = btree_serialize(&zero, &data_type);
        assert_eq!(btree_nan_key, raw_nan_key);
        assert!(btree_cmp(&btree_nan_key, &zero_key).unwrap().is_lt());

        let (bitmap_cmp, bitmap_serialize) =
            make_index_key_codec(BITMAP_GLOBAL_INDEX_TYPE, &data_type);
        let bitmap_nan_key = bitmap_serialize(&negative_nan, &data_type);
        assert_eq!(bitmap_nan_key, canonical_nan_key);
        assert!(bitmap_cmp(&bitmap_nan_key, &zero_key).unwrap().is_gt());
    }

    assert_codec(
        DataType::Float(FloatType::new()),
        Datum::Float(f32::from_bits(0xffc0_0001)),
        0xffc0_0001u32.to_le_bytes().to_vec(),
        0x7fc0_0000u32.to_le_bytes().to_vec(),
        Datum::Float(0.0),
    );
    assert_codec(
        DataType::Double(DoubleType::new()),
        Datum::Double(f64::from_bits(0xfff8_0000_0000_0001)),
        0xfff8_0000_0000_0001u64.to_le_bytes().to_vec(),
        0x7ff8_0000_0000_0000u64.to_le_bytes().to_vec(),
        Datum::Double(0.0),
    );
}

#[test]
fn test_extract_index_rows_rejects_row_id_gap() {
    let batch = index_batch(vec![Some(10), Some(30)], vec![Some(5), Some(7)]);
    let err = extract_index_rows_from_batches(
        &[batch],
        "id",
        &DataType::Int(IntType::new()),
        5,
        2,
        serialize_datum,
    )
    .expect_err("row-id gap should fail");

    assert!(
        matches!(err, Error::DataInvalid { message, .. } if message.contains("expected _ROW_ID"))
    );
}

#[test]
fn test_sort_index_rows_orders_nulls_then_keys() {
    let mut rows = vec![
        (Some(3i32.to_le_bytes().to_vec()), 0),
        (None, 1),
        (Some(1i32.to_le_bytes().to_vec()), 2),
        (Some(1i32.to_le_bytes().to_vec()), 3),
    ];
    let cmp = make_key_comparator(&DataType::Int(IntType::new()));

    sort_index_rows(&mut rows, &cmp).unwrap();

    assert_eq!(
        rows,
        vec![
            (None, 1),
            (Some(1i32.to_le_bytes().to_vec()), 2),
            (Some(1i32.to_le_bytes().to_vec()), 3),
            (Some(3i32.to_le_bytes().to_vec()), 0),
        ]
    );
}

#[test]
fn test_extract_index_rows_accepts_string_column() {
    let schema = Arc::new(ArrowSchema::new(vec![
        ArrowField::new("name", ArrowDataType::Utf8, true),
        ArrowField::new(ROW_ID_FIELD_NAME, ArrowDataType::Int64, true),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(vec![Some("alice"), None])) as ArrayRef,
            Arc::new(Int64Array::from(vec![Some(10), Some(11)])) as ArrayRef,
        ],
    )
    .unwrap();

    let rows = extract_index_rows_from_batches(
        &[batch],
        "name",
        &DataType::VarChar(VarCharType::string_type()),
        10,
        2,
        serialize_datum,
    )
    .unwrap();

    assert_eq!(rows, vec![(Some(b"alice".to_vec()), 0), (None, 1)]);
}

fn data_batch(ids: Vec<i32>, names: Vec<&str>) -> RecordBatch {
    let schema = Arc::new(ArrowSchema::new(vec![
        ArrowField::new("id", ArrowDataType::Int32, false),
        ArrowField::new("name", ArrowDataType::Utf8, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int32Array::from(ids)) as ArrayRef,
            Arc::new(StringArray::from(names)) as ArrayRef,
        ],
    )
    .unwrap()
}

fn nullable_name_batch(ids: Vec<i32>, names: Vec<Option<&str>>) -> RecordBatch {
    let schema = Arc::new(ArrowSchema::new(vec![
        ArrowField::new("id", ArrowDataType::Int32, false),
        ArrowField::new("name", ArrowDataType::Utf8, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int32Array::from(ids)) as ArrayRef,
            Arc::new(StringArray::from(names)) as ArrayRef,
        ],
    )
    .unwrap()
}

fn multivalue_batch() -> RecordBatch {
    let element = Arc::new(ArrowField::new("element", ArrowDataType::Int32, true));
    let mut items = ListBuilder::new(Int32Builder::new()).with_field(element.clone());

    items.values().append_value(10);
    items.values().append_null();
    items.values().append_value(10);
    items.append(true);

    items.append(true); // empty array
    items.append(false); // null array

    items.values().append_value(10);
    items.values().append_value(30);
    items.append(true);

    items.values().append_value(30);
    items.values().append_value(40);
    items.append(true);

    let schema = Arc::new(ArrowSchema::new(vec![
        ArrowField::new("id", ArrowDataType::Int32, false),
        ArrowField::new("items", ArrowDataType::List(element), true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int32Array::from_iter_values(1..=5)) as ArrayRef,
            Arc::new(items.finish()) as ArrayRef,
        ],
    )
    .unwrap()
}

async fn setup_dirs(table: &Table) {
    table
        .file_io()
        .mkdirs(&format!("{}/snapshot/", table.location()))
        .await
        .unwrap();
    table
        .file_io()
        .mkdirs(&format!("{}/manifest/", table.location()))
        .await
        .unwrap();
}

async fn scan_ids(table: &Table, predicate: Predicate) -> Vec<i32> {
    let mut builder = table.new_read_builder();
    builder.with_filter(predicate);
    let plan = builder.new_scan().plan().await.unwrap();
    let read = builder.new_read().unwrap();
    let batches = read
        .to_arrow(plan.splits())
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap();
    // The column-group fixture must merge payloads by RowID, not just return
    // the right number of rows from the indexed key/flag group.
    for batch in &batches {
        if let Some(payload) = batch.column_by_name("payload") {
            let ids = batch
                .column(0)
                .as_any()
                .downcast_ref::<Int32Array>()
                .unwrap();
            let payload = payload.as_any().downcast_ref::<Int64Array>().unwrap();
            assert_eq!(payload.null_count(), 0);
            for row in 0..batch.num_rows() {
                assert_eq!(payload.value(row), i64::from(ids.value(row)) * 17);
            }
        }
    }
    let mut ids = batches
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
    ids.sort_unstable();
    ids
}

#[tokio::test]
async fn test_execute_writes_btree_index_manifest_and_file() {
    for version in [1, 2] {
        assert_btree_build_version(version).await;
    }
}

async fn assert_btree_build_version(version: u32) {
    let table_path = "memory:/test_btree_global_index_builder_e2e";
    let mut options = table_options("10");
    options.insert("btree-index.file-version".into(), version.to_string());
    options.insert(
        "btree-index.bloom-filter.enabled".to_string(),
        "true".to_string(),
    );
    let table = test_table_with_path(table_path, options);
    setup_dirs(&table).await;

    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write
        .write_arrow_batch(&data_batch(vec![1, 2, 3], vec!["alice", "bob", "alice"]))
        .await
        .unwrap();
    let messages = table_write.prepare_commit().await.unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(messages)
        .await
        .unwrap();

    let shard_count = table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .execute()
        .await
        .unwrap();
    assert_eq!(shard_count, 1);

    let snapshot_manager =
        SnapshotManager::new(table.file_io().clone(), table.location().to_string());
    let snapshot = snapshot_manager
        .get_latest_snapshot()
        .await
        .unwrap()
        .unwrap();
    let index_manifest = snapshot.index_manifest().expect("index manifest");
    let index_entries = IndexManifest::read(
        table.file_io(),
        &format!("{table_path}/manifest/{index_manifest}"),
    )
    .await
    .unwrap();
    assert_eq!(index_entries.len(), 1);

    let index_file = &index_entries[0].index_file;
    assert_eq!(index_file.index_type, BTREE_GLOBAL_INDEX_TYPE);
    assert!(index_file.file_name.starts_with("btree-global-index-"));
    assert_eq!(index_file.row_count, 3);
    assert!(index_file.file_size > 0);

    let index_path = format!("{table_path}/index/{}", index_file.file_name);
    let index_bytes = table
        .file_io()
        .new_input(&index_path)
        .unwrap()
        .read()
        .await
        .unwrap();
    let footer = BTreeFileFooter::read_footer(
        &index_bytes[index_bytes.len() - BTreeFileFooter::ENCODED_LENGTH..],
    )
    .unwrap();
    let bloom_handle = footer
        .bloom_filter_handle
        .expect("enabled BTree build must write a Bloom filter");
    assert_eq!(bloom_handle.expected_entries, 2);
    assert_eq!(footer.version, version);

    let global_meta = index_file
        .global_index_meta
        .as_ref()
        .expect("global index meta");
    assert_eq!(global_meta.row_range_start, 0);
    assert_eq!(global_meta.row_range_end, 2);
    assert_eq!(global_meta.index_field_id, 1);
    let btree_meta =
        crate::btree::BTreeIndexMeta::deserialize(global_meta.index_meta.as_ref().unwrap())
            .unwrap();
    assert_eq!(btree_meta.first_key, Some(b"alice".to_vec()));
    assert_eq!(btree_meta.last_key, Some(b"bob".to_vec()));
    assert!(!btree_meta.has_nulls);

    let predicate = PredicateBuilder::new(table.schema().fields())
        .equal("name", crate::spec::Datum::String("alice".to_string()))
        .unwrap();
    let row_ranges = evaluate_global_index(GlobalIndexEvaluation {
        file_io: table.file_io(),
        table_path: table.location(),
        index_entries: &index_entries,
        predicates: &[predicate],
        schema_fields: table.schema().fields(),
        search_mode: GlobalIndexSearchMode::Fast,
        global_index_thread_num: 32,
        btree_fallback_scan_max_size: i64::MAX,
        btree_data_block_cache_size: 128 * 1024 * 1024,
        bitmap_fallback_scan_max_size: i64::MAX,
        fm_read_options: crate::fm_index::FMReadOptions::default(),
        next_row_id: snapshot.next_row_id(),
        data_ranges: &[],
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(row_ranges, vec![RowRange::new(0, 0), RowRange::new(2, 2)]);

    // Reopen the same table without an explicit global-index override and
    // verify that the regular scan path still uses the committed index.
    let mut options = table.schema().options().clone();
    assert_eq!(
        options.remove("global-index.enabled"),
        Some("true".to_string())
    );
    let scan_table = Table::new(
        table.file_io().clone(),
        table.identifier().clone(),
        table.location().to_string(),
        table.schema().copy_with_replaced_options(options),
        None,
    );
    let predicate = PredicateBuilder::new(scan_table.schema().fields())
        .equal("name", crate::spec::Datum::String("alice".to_string()))
        .unwrap();
    let mut read_builder = scan_table.new_read_builder();
    read_builder.with_filter(predicate);
    let plan = read_builder.new_scan().plan().await.unwrap();

    assert_eq!(plan.splits().len(), 1);
    assert_eq!(
        plan.splits()[0].row_ranges(),
        Some(&[RowRange::new(0, 0), RowRange::new(2, 2)][..])
    );
    let predicate = PredicateBuilder::new(scan_table.schema().fields())
        .equal("name", crate::spec::Datum::String("alice".to_string()))
        .unwrap();
    assert_eq!(scan_ids(&scan_table, predicate).await, vec![1, 3]);
}

async fn column_group_btree_table(rows: i32, version: u32) -> Table {
    use crate::table::data_evolution_writer::DataEvolutionPartialWriter;
    let mut options = table_options("2000000");
    options.insert("btree-index.file-version".into(), version.to_string());
    let schema = Schema::builder()
        .column("id", DataType::Int(IntType::new()))
        .column("name", DataType::VarChar(VarCharType::string_type()))
        .column("payload", DataType::BigInt(crate::spec::BigIntType::new()))
        .options(options)
        .build()
        .unwrap();
    let table = Table::new(
        FileIOBuilder::new("memory").build().unwrap(),
        Identifier::new("default", "column_groups"),
        format!("memory:/btree_column_groups_v{version}"),
        TableSchema::new(0, &schema),
        None,
    );
    setup_dirs(&table).await;
    let batch = data_batch(
        (0..rows).collect(),
        (0..rows)
            .map(|id| if id % 10 == 0 { "miss" } else { "hit" })
            .collect(),
    );
    let mut write =
        DataEvolutionPartialWriter::new(&table, vec!["id".into(), "name".into()]).unwrap();
    write
        .write_partial_batch(
            crate::spec::EMPTY_BINARY_ROW.to_serialized_bytes(),
            0,
            0,
            0,
            batch,
        )
        .await
        .unwrap();
    let mut messages = write.prepare_commit().await.unwrap();
    // Seed an append column group: normal commit allocates its RowIDs.
    // Subsequent partial-column writes reuse that committed RowID domain.
    for message in &mut messages {
        message.check_from_snapshot = None;
        for file in &mut message.new_files {
            file.first_row_id = None;
        }
    }
    TableCommit::new(table.clone(), "bench".into())
        .commit(messages)
        .await
        .unwrap();
    let batch = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![ArrowField::new(
            "payload",
            ArrowDataType::Int64,
            true,
        )])),
        vec![Arc::new(Int64Array::from(
            (0..rows).map(|id| i64::from(id) * 17).collect::<Vec<_>>(),
        ))],
    )
    .unwrap();
    let mut payload = DataEvolutionPartialWriter::new(&table, vec!["payload".into()]).unwrap();
    payload
        .write_partial_batch(
            crate::spec::EMPTY_BINARY_ROW.to_serialized_bytes(),
            0,
            0,
            1,
            batch,
        )
        .await
        .unwrap();
    TableCommit::new(table.clone(), "payload".into())
        .commit(payload.prepare_commit().await.unwrap())
        .await
        .unwrap();
    let plan = table.new_read_builder().new_scan().plan().await.unwrap();
    let files: Vec<_> = plan
        .splits()
        .iter()
        .flat_map(|split| split.data_files())
        .collect();
    assert_eq!(files.len(), 2);
    for file in &files {
        assert!(file.file_name.ends_with(".parquet"));
        assert_eq!(file.first_row_id, Some(0));
        assert_eq!(file.row_count, i64::from(rows));
    }
    assert!(files
        .iter()
        .any(|file| file.write_cols.as_deref() == Some(&["id".into(), "name".into()])));
    assert!(files
        .iter()
        .any(|file| file.write_cols.as_deref() == Some(&["payload".into()])));
    for column in ["id", "name"] {
        table
            .new_btree_global_index_build_builder()
            .with_index_column(column)
            .execute()
            .await
            .unwrap();
    }
    table
}

#[tokio::test]
async fn test_scalar_column_group_reads() {
    for version in [1, 2] {
        let table = column_group_btree_table(4096, version).await;
        let builder = PredicateBuilder::new(table.schema().fields());
        for (predicate, expected) in [
            (
                builder.equal("name", Datum::String("miss".into())).unwrap(),
                (0..4096).step_by(10).collect(),
            ),
            (
                Predicate::and(vec![
                    builder.greater_or_equal("id", Datum::Int(0)).unwrap(),
                    builder.equal("id", Datum::Int(1)).unwrap(),
                ]),
                vec![1],
            ),
        ] {
            assert_eq!(scan_ids(&table, predicate).await, expected);
        }
    }
}

#[tokio::test]
#[ignore = "manual release benchmark; default Parquet, column groups, planning and full reads"]
async fn benchmark_btree_data_evolution_read() {
    use crate::spec::Datum;
    use std::time::Instant;
    let rows = 1_200_000;
    for version in [1, 2] {
        let table = column_group_btree_table(rows, version).await;
        let mut options = table.schema().options().clone();
        options.insert("global-index.enabled".into(), "false".into());
        let no_index = Table::new(
            table.file_io().clone(),
            table.identifier().clone(),
            table.location().to_string(),
            table.schema().copy_with_replaced_options(options),
            None,
        );
        let builder = PredicateBuilder::new(table.schema().fields());
        let point = builder.equal("id", Datum::Int(1)).unwrap();
        let dense = builder.equal("name", Datum::String("hit".into())).unwrap();
        let sparse = builder.equal("name", Datum::String("miss".into())).unwrap();
        let all = builder
            .less_than("name", Datum::String("z".into()))
            .unwrap();
        let bounded = Predicate::and(vec![
            builder.greater_than("id", Datum::Int(rows / 2)).unwrap(),
            builder.less_than("id", Datum::Int(rows / 2 + 100)).unwrap(),
        ]);
        let point_with_full_bound = Predicate::and(vec![
            builder.greater_or_equal("id", Datum::Int(0)).unwrap(),
            point.clone(),
        ]);
        let multiple_bounds = Predicate::and(vec![
            builder.greater_or_equal("id", Datum::Int(0)).unwrap(),
            builder.less_than("id", Datum::Int(rows)).unwrap(),
            bounded.clone(),
        ]);
        for (name, predicate, expected) in [
            (
                "90pct",
                dense.clone(),
                (0..rows).filter(|id| id % 10 != 0).collect::<Vec<_>>(),
            ),
            (
                "10pct",
                sparse,
                (0..rows).filter(|id| id % 10 == 0).collect(),
            ),
            ("point", point.clone(), vec![1]),
            ("point_and_full_same_field", point_with_full_bound, vec![1]),
            (
                "multiple_bounds",
                multiple_bounds,
                (rows / 2 + 1..rows / 2 + 100).collect(),
            ),
            (
                "point_and_90pct",
                Predicate::and(vec![point, dense]),
                vec![1],
            ),
            ("all_match", all, (0..rows).collect()),
            ("bounded", bounded, (rows / 2 + 1..rows / 2 + 100).collect()),
        ] {
            for source in [&table, &no_index] {
                for _ in 0..3 {
                    assert_eq!(scan_ids(source, predicate.clone()).await, expected);
                }
            }
            let sources = [&table, &no_index];
            let mut samples = [Vec::new(), Vec::new()];
            for round in 0..7 {
                for i in [round % 2, 1 - round % 2] {
                    let start = Instant::now();
                    let actual = scan_ids(sources[i], predicate.clone()).await;
                    let elapsed = start.elapsed().as_secs_f64() * 1000.0;
                    assert_eq!(actual, expected);
                    samples[i].push(elapsed);
                }
            }
            for times in &mut samples {
                times.sort_by(f64::total_cmp);
            }
            println!(
                "TABLE_BENCH version={version} case={name} rows={} index_ms={:.3} scan_ms={:.3}",
                expected.len(),
                samples[0][3],
                samples[1][3]
            );
        }
    }
}

#[tokio::test]
async fn test_execute_writes_and_queries_fm_index() {
    let table_path = "memory:/test_fm_global_index_builder_e2e";
    let mut options = table_options("10");
    options.insert("fm-index.sa-sample-rate".to_string(), "1".to_string());
    options.insert("fm-index.locate-cost-ratio".to_string(), "1".to_string());
    options.insert("fm-index.compression".to_string(), "none".to_string());
    let table = test_table_with_path(table_path, options);
    setup_dirs(&table).await;

    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write
        .write_arrow_batch(&nullable_name_batch(
            vec![1, 2, 3, 4],
            vec![Some("banana"), Some("bandana"), None, Some("")],
        ))
        .await
        .unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(table_write.prepare_commit().await.unwrap())
        .await
        .unwrap();

    assert_eq!(
        table
            .new_sorted_global_index_build_builder()
            .with_index_column("name")
            .with_index_type(FM_GLOBAL_INDEX_TYPE)
            .execute()
            .await
            .unwrap(),
        1
    );

    let snapshot = table
        .snapshot_manager()
        .get_latest_snapshot()
        .await
        .unwrap()
        .unwrap();
    let index_entries = IndexManifest::read(
        table.file_io(),
        &format!(
            "{table_path}/manifest/{}",
            snapshot.index_manifest().expect("index manifest")
        ),
    )
    .await
    .unwrap();
    assert_eq!(index_entries.len(), 1);
    let index_file = &index_entries[0].index_file;
    assert_eq!(index_file.index_type, FM_GLOBAL_INDEX_TYPE);
    assert!(index_file.file_name.starts_with("fm-global-index-"));
    assert_eq!(index_file.row_count, 4);
    crate::fm_index::validate_manifest_meta(
        index_file
            .global_index_meta
            .as_ref()
            .unwrap()
            .index_meta
            .as_ref()
            .unwrap(),
    )
    .unwrap();

    let predicates = PredicateBuilder::new(table.schema().fields());
    assert_eq!(
        scan_ids(
            &table,
            predicates
                .contains("name", Datum::String("ana".to_string()))
                .unwrap(),
        )
        .await,
        vec![1, 2]
    );
    assert_eq!(
        scan_ids(&table, predicates.is_null("name").unwrap()).await,
        vec![3]
    );
    assert_eq!(
        scan_ids(
            &table,
            predicates
                .contains("name", Datum::String(String::new()))
                .unwrap(),
        )
        .await,
        vec![1, 2, 4]
    );

    // A dense match that exceeds the FM locate budget must decline the
    // index and let the normal row filter scan the source, never produce
    // a false empty result.
    let mut fallback_options = table.schema().options().clone();
    fallback_options.insert(
        "fm-index.locate-cost-ratio".to_string(),
        "0.000001".to_string(),
    );
    let fallback_table = Table::new(
        table.file_io().clone(),
        table.identifier().clone(),
        table.location().to_string(),
        table.schema().copy_with_replaced_options(fallback_options),
        None,
    );
    let predicate = PredicateBuilder::new(fallback_table.schema().fields())
        .contains("name", Datum::String("a".to_string()))
        .unwrap();
    assert_eq!(scan_ids(&fallback_table, predicate).await, vec![1, 2]);
}

#[tokio::test]
async fn test_failed_fm_build_removes_partial_index_file() {
    let table_path = "memory:/test_failed_fm_build_cleanup";
    let table = test_table_with_path(table_path, table_options("3"));
    setup_dirs(&table).await;

    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write
        .write_arrow_batch(&data_batch(
            vec![1, 2, 3, 4, 5, 6],
            vec!["one", "two", "six", "red", "blue", "value-too-long"],
        ))
        .await
        .unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(table_write.prepare_commit().await.unwrap())
        .await
        .unwrap();

    let mut options = HashMap::new();
    options.insert("fm-index.partition-size".to_string(), "8".to_string());
    options.insert("fm-index.partition-row-count".to_string(), "1".to_string());
    options.insert("fm-index.compression".to_string(), "none".to_string());
    let error = table
        .new_sorted_global_index_build_builder()
        .with_index_column("name")
        .with_index_type(FM_GLOBAL_INDEX_TYPE)
        .with_options(options)
        .execute()
        .await
        .expect_err("the oversized FM value must fail the build");
    assert!(matches!(error, Error::DataInvalid { .. }));

    let files = table
        .file_io()
        .list_status(&format!("{table_path}/index"))
        .await
        .unwrap();
    assert!(
        files
            .iter()
            .all(|file| !file.path.contains("fm-global-index-")),
        "failed FM build left a partial index file: {files:?}"
    );
}

#[tokio::test]
async fn test_global_index_prunes_during_manifest_read() {
    for (search_mode, expected_manifest_pruned, expected_entries_read) in
        [("fast", 1, 1), ("full", 1, 1)]
    {
        let table_path = format!("memory:/test_global_index_manifest_pruning_{search_mode}");
        let mut options = table_options("2");
        options.insert(
            "global-index.search-mode".to_string(),
            search_mode.to_string(),
        );
        let table = test_table_with_path(&table_path, options);
        setup_dirs(&table).await;

        for (user, ids, names) in [
            ("writer-1", vec![1, 2], vec!["alice", "bob"]),
            ("writer-2", vec![3, 4], vec!["carol", "dave"]),
        ] {
            let mut table_write = TableWrite::new(&table, user.to_string()).unwrap();
            table_write
                .write_arrow_batch(&data_batch(ids, names))
                .await
                .unwrap();
            TableCommit::new(table.clone(), user.to_string())
                .commit(table_write.prepare_commit().await.unwrap())
                .await
                .unwrap();
        }

        table
            .new_btree_global_index_build_builder()
            .with_index_column("name")
            .execute()
            .await
            .unwrap();

        let predicate = PredicateBuilder::new(table.schema().fields())
            .equal("name", crate::spec::Datum::String("alice".to_string()))
            .unwrap();
        let mut read_builder = table.new_read_builder();
        read_builder.with_filter(predicate);
        let (plan, trace) = read_builder.new_scan().plan_with_trace().await.unwrap();

        assert_eq!(
            plan.splits()
                .iter()
                .flat_map(|split| split.data_files())
                .count(),
            1
        );
        assert_eq!(
            trace.manifest_files_pruned_by_row_ranges,
            expected_manifest_pruned
        );
        assert_eq!(trace.manifest_entries_read, expected_entries_read);
        assert_eq!(trace.manifest_entries_pruned_by_row_ranges, 0);
        assert_eq!(
            trace.manifest_entries_after_manifest_filters,
            expected_entries_read
        );
    }
}

#[tokio::test]
async fn test_scalar_full_search_includes_unindexed_rows() {
    let mut options = table_options("2");
    options.insert("scalar-index.search-mode".to_string(), "full".to_string());
    let table = test_table_with_path(
        "memory:/test_scalar_full_search_includes_unindexed_rows",
        options,
    );
    setup_dirs(&table).await;

    let mut first_write = TableWrite::new(&table, "writer-1".to_string()).unwrap();
    first_write
        .write_arrow_batch(&data_batch(vec![1, 2], vec!["alice", "bob"]))
        .await
        .unwrap();
    TableCommit::new(table.clone(), "writer-1".to_string())
        .commit(first_write.prepare_commit().await.unwrap())
        .await
        .unwrap();
    table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .execute()
        .await
        .unwrap();

    let mut second_write = TableWrite::new(&table, "writer-2".to_string()).unwrap();
    second_write
        .write_arrow_batch(&data_batch(vec![3, 4], vec!["alice", "dave"]))
        .await
        .unwrap();
    TableCommit::new(table.clone(), "writer-2".to_string())
        .commit(second_write.prepare_commit().await.unwrap())
        .await
        .unwrap();

    let predicate = PredicateBuilder::new(table.schema().fields())
        .equal("name", crate::spec::Datum::String("alice".to_string()))
        .unwrap();
    let mut read_builder = table.new_read_builder();
    read_builder.with_filter(predicate);
    let plan = read_builder.new_scan().plan().await.unwrap();
    let planned_ranges = merge_row_ranges(
        plan.splits()
            .iter()
            .flat_map(|split| split.row_ranges().unwrap_or_default())
            .cloned()
            .collect(),
    );

    assert_eq!(
        planned_ranges,
        vec![RowRange::new(0, 0), RowRange::new(2, 3)]
    );
    assert_eq!(
        scan_ids(
            &table,
            PredicateBuilder::new(table.schema().fields())
                .equal("name", crate::spec::Datum::String("alice".to_string()))
                .unwrap(),
        )
        .await,
        vec![1, 3]
    );
}

#[tokio::test]
async fn test_empty_global_index_ranges_skip_legacy_manifests() {
    for search_mode in ["fast", "full"] {
        let table_path = format!("memory:/test_empty_global_index_ranges_{search_mode}");
        let mut options = table_options("10");
        options.insert(
            "global-index.search-mode".to_string(),
            search_mode.to_string(),
        );
        let table = test_table_with_path(&table_path, options);
        setup_dirs(&table).await;

        let mut table_write = TableWrite::new(&table, "writer".to_string()).unwrap();
        table_write
            .write_arrow_batch(&data_batch(vec![1, 2], vec!["alice", "bob"]))
            .await
            .unwrap();
        TableCommit::new(table.clone(), "writer".to_string())
            .commit(table_write.prepare_commit().await.unwrap())
            .await
            .unwrap();
        table
            .new_btree_global_index_build_builder()
            .with_index_column("name")
            .execute()
            .await
            .unwrap();

        let mut legacy_file = data_file("legacy.parquet", None, 2);
        legacy_file.level = 1;
        legacy_file.file_source = Some(1); // FileSource.COMPACT
        TableCommit::new(table.clone(), "legacy-writer".to_string())
            .commit(vec![CommitMessage::new(
                BinaryRowBuilder::new(0).build_serialized(),
                0,
                vec![legacy_file],
            )])
            .await
            .unwrap();

        let snapshot = table
            .snapshot_manager()
            .get_latest_snapshot()
            .await
            .unwrap()
            .unwrap();
        assert_eq!(snapshot.next_row_id(), Some(2));

        let predicate = PredicateBuilder::new(table.schema().fields())
            .equal(
                "name",
                crate::spec::Datum::String("not-present".to_string()),
            )
            .unwrap();
        let mut read_builder = table.new_read_builder();
        read_builder.with_filter(predicate);

        let plan = read_builder.new_scan().plan().await.unwrap();
        assert!(plan.splits().is_empty());

        let (traced_plan, trace) = read_builder.new_scan().plan_with_trace().await.unwrap();
        let delta_error = read_builder
            .new_scan()
            .plan_snapshot_delta(&snapshot)
            .await
            .unwrap_err();

        assert!(traced_plan.splits().is_empty());
        assert_eq!(trace.manifest_entries_read, 0);
        assert_eq!(trace.final_splits, 0);
        assert_eq!(trace.final_files, 0);
        // A snapshot index may short-circuit a batch read, but cannot hide
        // an invalid historical event file from incremental planning.
        assert!(
            matches!(delta_error, crate::Error::DataInvalid { ref message, .. }
            if message.contains("First row id"))
        );
    }
}

#[tokio::test]
async fn test_detail_mode_defers_manifest_pruning_for_unindexed_ranges() {
    let table_path = "memory:/test_detail_manifest_pruning";
    let mut options = table_options("2");
    options.insert("global-index.search-mode".to_string(), "detail".to_string());
    let table = test_table_with_path(table_path, options);
    setup_dirs(&table).await;

    let mut table_write = TableWrite::new(&table, "writer-1".to_string()).unwrap();
    table_write
        .write_arrow_batch(&data_batch(vec![1, 2], vec!["alice", "bob"]))
        .await
        .unwrap();
    TableCommit::new(table.clone(), "writer-1".to_string())
        .commit(table_write.prepare_commit().await.unwrap())
        .await
        .unwrap();
    table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .execute()
        .await
        .unwrap();

    let mut table_write = TableWrite::new(&table, "writer-2".to_string()).unwrap();
    table_write
        .write_arrow_batch(&data_batch(vec![3, 4], vec!["alice", "dave"]))
        .await
        .unwrap();
    TableCommit::new(table.clone(), "writer-2".to_string())
        .commit(table_write.prepare_commit().await.unwrap())
        .await
        .unwrap();

    let predicate = PredicateBuilder::new(table.schema().fields())
        .equal("name", crate::spec::Datum::String("alice".to_string()))
        .unwrap();
    let mut read_builder = table.new_read_builder();
    read_builder.with_filter(predicate);
    let (plan, trace) = read_builder.new_scan().plan_with_trace().await.unwrap();
    let planned_ranges = merge_row_ranges(
        plan.splits()
            .iter()
            .flat_map(|split| split.row_ranges().unwrap_or_default())
            .cloned()
            .collect(),
    );

    assert_eq!(
        plan.splits()
            .iter()
            .flat_map(|split| split.data_files())
            .count(),
        2
    );
    assert_eq!(
        planned_ranges,
        vec![RowRange::new(0, 0), RowRange::new(2, 3)]
    );
    assert_eq!(trace.manifest_files_pruned_by_row_ranges, 0);
    assert_eq!(trace.manifest_entries_read, 2);
}

#[tokio::test]
async fn test_execute_writes_bitmap_index_manifest_and_java_file() {
    let table_path = "memory:/test_bitmap_global_index_builder_e2e";
    let table = test_table_with_path(table_path, table_options("10"));
    setup_dirs(&table).await;

    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write
        .write_arrow_batch(&data_batch(vec![1, 2, 3], vec!["alice", "bob", "alice"]))
        .await
        .unwrap();
    let messages = table_write.prepare_commit().await.unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(messages)
        .await
        .unwrap();

    let shard_count = table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .with_index_type(BITMAP_GLOBAL_INDEX_TYPE)
        .execute()
        .await
        .unwrap();
    assert_eq!(shard_count, 1);

    let snapshot_manager =
        SnapshotManager::new(table.file_io().clone(), table.location().to_string());
    let snapshot = snapshot_manager
        .get_latest_snapshot()
        .await
        .unwrap()
        .unwrap();
    let index_manifest = snapshot.index_manifest().expect("index manifest");
    let index_entries = IndexManifest::read(
        table.file_io(),
        &format!("{table_path}/manifest/{index_manifest}"),
    )
    .await
    .unwrap();
    assert_eq!(index_entries.len(), 1);

    let index_file = &index_entries[0].index_file;
    assert_eq!(index_file.index_type, BITMAP_GLOBAL_INDEX_TYPE);
    assert!(index_file.file_name.starts_with("bitmap-global-index-"));
    assert_eq!(index_file.row_count, 3);
    assert!(index_file.file_size > 0);

    let global_meta = index_file
        .global_index_meta
        .as_ref()
        .expect("global index meta");
    let bitmap_meta =
        crate::btree::BTreeIndexMeta::deserialize(global_meta.index_meta.as_ref().unwrap())
            .unwrap();
    assert_eq!(bitmap_meta.first_key, Some(b"alice".to_vec()));
    assert_eq!(bitmap_meta.last_key, Some(b"bob".to_vec()));
    assert!(!bitmap_meta.has_nulls);

    let index_path = format!("{table_path}/index/{}", index_file.file_name);
    let input = table.file_io().new_input(&index_path).unwrap();
    let file_size = input.metadata().await.unwrap().size;
    let reader = input.reader().await.unwrap();
    let bitmap_reader = crate::table::bitmap_global_index_reader::BitmapGlobalIndexReader::open(
        Box::new(reader),
        file_size,
    )
    .await
    .unwrap();
    let bitmap = bitmap_reader
        .query(
            crate::spec::PredicateOperator::Eq,
            &[crate::spec::Datum::String("alice".to_string())],
            table.schema().fields()[1].data_type(),
        )
        .await
        .unwrap();
    assert_eq!(bitmap.iter().collect::<Vec<_>>(), vec![0, 2]);

    let predicate = PredicateBuilder::new(table.schema().fields())
        .equal("name", crate::spec::Datum::String("alice".to_string()))
        .unwrap();
    let row_ranges = evaluate_global_index(GlobalIndexEvaluation {
        file_io: table.file_io(),
        table_path: table.location(),
        index_entries: &index_entries,
        predicates: &[predicate],
        schema_fields: table.schema().fields(),
        search_mode: GlobalIndexSearchMode::Fast,
        global_index_thread_num: 32,
        btree_fallback_scan_max_size: i64::MAX,
        btree_data_block_cache_size: 128 * 1024 * 1024,
        bitmap_fallback_scan_max_size: i64::MAX,
        fm_read_options: crate::fm_index::FMReadOptions::default(),
        next_row_id: snapshot.next_row_id(),
        data_ranges: &[],
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(row_ranges, vec![RowRange::new(0, 0), RowRange::new(2, 2)]);
}

#[tokio::test]
async fn test_execute_multivalue_index_and_array_queries_end_to_end() {
    let table_path = "memory:/test_multivalue_global_index_builder_e2e";
    let table = multivalue_table(table_path);
    setup_dirs(&table).await;

    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write
        .write_arrow_batch(&multivalue_batch())
        .await
        .unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(table_write.prepare_commit().await.unwrap())
        .await
        .unwrap();

    let shard_count = table
        .new_btree_global_index_build_builder()
        .with_index_column("items")
        .with_index_type(MULTIVALUE_GLOBAL_INDEX_TYPE)
        .execute()
        .await
        .unwrap();
    assert_eq!(shard_count, 1);

    let snapshot = SnapshotManager::new(table.file_io().clone(), table.location().to_string())
        .get_latest_snapshot()
        .await
        .unwrap()
        .unwrap();
    let index_manifest = snapshot.index_manifest().expect("index manifest");
    let index_entries = IndexManifest::read(
        table.file_io(),
        &format!("{table_path}/manifest/{index_manifest}"),
    )
    .await
    .unwrap();
    assert_eq!(index_entries.len(), 1);

    let index_file = &index_entries[0].index_file;
    assert_eq!(index_file.index_type, MULTIVALUE_GLOBAL_INDEX_TYPE);
    assert_eq!(index_file.row_count, 5, "source rows, not postings");
    let global_meta = index_file.global_index_meta.as_ref().unwrap();
    let serialized_meta = global_meta.index_meta.as_deref().unwrap();
    let sorted_meta = BTreeIndexMeta::deserialize(serialized_meta).unwrap();
    assert_eq!(serialized_meta, sorted_meta.serialize());
    let element_type = DataType::Int(IntType::new());

    let index_path = format!("{table_path}/index/{}", index_file.file_name);
    let input = table.file_io().new_input(&index_path).unwrap();
    let file_size = input.metadata().await.unwrap().size;
    let reader = input.reader().await.unwrap();
    let bitmap_reader = crate::table::bitmap_global_index_reader::BitmapGlobalIndexReader::open(
        Box::new(reader),
        file_size,
    )
    .await
    .unwrap();
    let contains = bitmap_reader
        .query(
            PredicateOperator::ArrayContains,
            &[Datum::Int(10)],
            &element_type,
        )
        .await
        .unwrap();
    assert_eq!(contains.iter().collect::<Vec<_>>(), vec![0, 3]);
    let overlap = bitmap_reader
        .query(
            PredicateOperator::ArraysOverlap,
            &[Datum::Int(40), Datum::Int(10), Datum::Int(10)],
            &element_type,
        )
        .await
        .unwrap();
    assert_eq!(overlap.iter().collect::<Vec<_>>(), vec![0, 3, 4]);
    let contains_all = bitmap_reader
        .query(
            PredicateOperator::ArrayContainsAll,
            &[Datum::Int(10), Datum::Int(30), Datum::Int(10)],
            &element_type,
        )
        .await
        .unwrap();
    assert_eq!(contains_all.iter().collect::<Vec<_>>(), vec![3]);

    let fields = table.schema().fields();
    let contains_all_predicate = PredicateBuilder::new(fields)
        .array_contains_all(
            "items",
            vec![Datum::Int(10), Datum::Int(30), Datum::Int(10)],
        )
        .unwrap();
    let ranges = evaluate_global_index(GlobalIndexEvaluation {
        file_io: table.file_io(),
        table_path: table.location(),
        index_entries: &index_entries,
        predicates: std::slice::from_ref(&contains_all_predicate),
        schema_fields: fields,
        search_mode: GlobalIndexSearchMode::Fast,
        global_index_thread_num: 32,
        btree_fallback_scan_max_size: i64::MAX,
        btree_data_block_cache_size: 128 * 1024 * 1024,
        bitmap_fallback_scan_max_size: i64::MAX,
        fm_read_options: crate::fm_index::FMReadOptions::default(),
        next_row_id: snapshot.next_row_id(),
        data_ranges: &[],
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(ranges, vec![RowRange::new(3, 3)]);

    assert_eq!(scan_ids(&table, contains_all_predicate).await, vec![4]);
    let empty_contains_all = PredicateBuilder::new(fields)
        .array_contains_all("items", vec![])
        .unwrap();
    assert_eq!(
        scan_ids(&table, empty_contains_all).await,
        vec![1, 2, 4, 5],
        "empty contains-all matches every non-null array and must fall back"
    );
}

#[tokio::test]
async fn test_bitmap_floating_candidates_preserve_residual_results() {
    let table_path = "memory:/test_bitmap_floating_residual_candidates";
    let schema = Schema::builder()
        .column("id", DataType::Int(IntType::new()))
        .column("f", DataType::Float(FloatType::new()))
        .column("d", DataType::Double(DoubleType::new()))
        .options(table_options("100"))
        .build()
        .unwrap();
    let table = Table::new(
        FileIOBuilder::new("memory").build().unwrap(),
        Identifier::new("default", "test_bitmap_floating_residual_candidates"),
        table_path.to_string(),
        TableSchema::new(0, &schema),
        None,
    );
    setup_dirs(&table).await;

    let float_negative_nan = f32::from_bits(0xffc0_0001);
    let double_negative_nan = f64::from_bits(0xfff8_0000_0000_0001);
    let arrow_schema = Arc::new(ArrowSchema::new(vec![
        ArrowField::new("id", ArrowDataType::Int32, false),
        ArrowField::new("f", ArrowDataType::Float32, true),
        ArrowField::new("d", ArrowDataType::Float64, true),
    ]));
    let batch = RecordBatch::try_new(
        arrow_schema,
        vec![
            Arc::new(Int32Array::from_iter_values(0..9)) as ArrayRef,
            Arc::new(Float32Array::from(vec![
                Some(float_negative_nan),
                Some(f32::from_bits(0xffff_1234)),
                Some(f32::NAN),
                Some(f32::from_bits(0x7fc0_0010)),
                Some(-1.0),
                Some(-0.0),
                Some(0.0),
                Some(1.0),
                None,
            ])) as ArrayRef,
            Arc::new(Float64Array::from(vec![
                Some(double_negative_nan),
                Some(f64::from_bits(0xffff_1234_5678_9abc)),
                Some(f64::NAN),
                Some(f64::from_bits(0x7ff8_0000_0000_0010)),
                Some(-1.0),
                Some(-0.0),
                Some(0.0),
                Some(1.0),
                None,
            ])) as ArrayRef,
        ],
    )
    .unwrap();
    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write.write_arrow_batch(&batch).await.unwrap();
    let messages = table_write.prepare_commit().await.unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(messages)
        .await
        .unwrap();

    for column in ["f", "d"] {
        let shard_count = table
            .new_btree_global_index_build_builder()
            .with_index_column(column)
            .with_index_type(BITMAP_GLOBAL_INDEX_TYPE)
            .execute()
            .await
            .unwrap();
        assert_eq!(shard_count, 1);
    }

    let mut disabled_options = table.schema().options().clone();
    disabled_options.insert("global-index.enabled".to_string(), "false".to_string());
    let table_without_index = Table::new(
        table.file_io().clone(),
        table.identifier().clone(),
        table.location().to_string(),
        table.schema().copy_with_replaced_options(disabled_options),
        None,
    );

    let predicates = PredicateBuilder::new(table.schema().fields());
    let cases = [
        (
            "Float < 0",
            predicates.less_than("f", Datum::Float(0.0)).unwrap(),
            vec![0, 1, 4, 5],
        ),
        (
            "Double < 0",
            predicates.less_than("d", Datum::Double(0.0)).unwrap(),
            vec![0, 1, 4, 5],
        ),
        (
            "Float = canonical NaN",
            predicates.equal("f", Datum::Float(f32::NAN)).unwrap(),
            vec![2],
        ),
        (
            "Double = canonical NaN",
            predicates.equal("d", Datum::Double(f64::NAN)).unwrap(),
            vec![2],
        ),
        (
            "Float = negative NaN",
            predicates
                .equal("f", Datum::Float(float_negative_nan))
                .unwrap(),
            vec![0],
        ),
        (
            "Double = negative NaN",
            predicates
                .equal("d", Datum::Double(double_negative_nan))
                .unwrap(),
            vec![0],
        ),
        (
            "Float IN NaNs",
            predicates
                .is_in(
                    "f",
                    vec![Datum::Float(float_negative_nan), Datum::Float(f32::NAN)],
                )
                .unwrap(),
            vec![0, 2],
        ),
        (
            "Double IN NaNs",
            predicates
                .is_in(
                    "d",
                    vec![Datum::Double(double_negative_nan), Datum::Double(f64::NAN)],
                )
                .unwrap(),
            vec![0, 2],
        ),
        (
            "Float != canonical NaN",
            predicates.not_equal("f", Datum::Float(f32::NAN)).unwrap(),
            vec![0, 1, 3, 4, 5, 6, 7],
        ),
        (
            "Double != canonical NaN",
            predicates.not_equal("d", Datum::Double(f64::NAN)).unwrap(),
            vec![0, 1, 3, 4, 5, 6, 7],
        ),
        (
            "Float NOT IN",
            predicates
                .is_not_in("f", vec![Datum::Float(f32::NAN), Datum::Float(0.0)])
                .unwrap(),
            vec![0, 1, 3, 4, 5, 7],
        ),
        (
            "Double NOT IN",
            predicates
                .is_not_in("d", vec![Datum::Double(f64::NAN), Datum::Double(0.0)])
                .unwrap(),
            vec![0, 1, 3, 4, 5, 7],
        ),
        (
            "Float combined range",
            Predicate::and(vec![
                predicates
                    .greater_or_equal("f", Datum::Float(float_negative_nan))
                    .unwrap(),
                predicates.less_or_equal("f", Datum::Float(0.0)).unwrap(),
            ]),
            vec![0, 4, 5, 6],
        ),
        (
            "Double combined range",
            Predicate::and(vec![
                predicates
                    .greater_or_equal("d", Datum::Double(double_negative_nan))
                    .unwrap(),
                predicates.less_or_equal("d", Datum::Double(0.0)).unwrap(),
            ]),
            vec![0, 4, 5, 6],
        ),
    ];

    for (name, predicate, expected) in cases {
        let without_index = scan_ids(&table_without_index, predicate.clone()).await;
        assert_eq!(without_index, expected, "{name}: residual baseline");
        let with_index = scan_ids(&table, predicate).await;
        assert_eq!(
            with_index, without_index,
            "{name}: global index changed rows"
        );
    }
}

/// Bitmap is built through the same sorted builder; a second build with no
/// new data must be a no-op keyed on the bitmap coverage — not error, and
/// not be confused by any btree coverage of the same field.
#[tokio::test]
async fn bitmap_second_build_without_new_data_is_noop() {
    let table_path = "memory:/test_bitmap_global_index_second_build_noop";
    let table = test_table_with_path(table_path, table_options("10"));
    setup_dirs(&table).await;

    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write
        .write_arrow_batch(&data_batch(vec![1, 2, 3], vec!["alice", "bob", "carol"]))
        .await
        .unwrap();
    let messages = table_write.prepare_commit().await.unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(messages)
        .await
        .unwrap();

    let first_built = table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .with_index_type(BITMAP_GLOBAL_INDEX_TYPE)
        .execute()
        .await
        .unwrap();
    assert!(
        first_built > 0,
        "first bitmap build must index initial rows"
    );

    let files_after_first = latest_bitmap_index_files(&table).await;
    assert!(!files_after_first.is_empty());

    let built = table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .with_index_type(BITMAP_GLOBAL_INDEX_TYPE)
        .execute()
        .await
        .unwrap();
    assert_eq!(
        built, 0,
        "fully-indexed bitmap table must build nothing on re-run"
    );

    let names_first = files_after_first
        .iter()
        .map(|f| f.file_name.clone())
        .collect::<std::collections::BTreeSet<_>>();
    let names_second = latest_bitmap_index_files(&table)
        .await
        .iter()
        .map(|f| f.file_name.clone())
        .collect::<std::collections::BTreeSet<_>>();
    assert_eq!(names_first, names_second, "re-run must not change entries");
}

/// A btree index over the SAME field must NOT count as bitmap coverage: a
/// bitmap build after a btree build over identical rows must still produce a
/// bitmap index (regression guard for the index_type-keyed gap computation —
/// the merge-residual bug hard-coded btree here, which would have skipped
/// these rows for a bitmap build).
#[tokio::test]
async fn bitmap_build_after_btree_on_same_field_still_indexes() {
    let table_path = "memory:/test_bitmap_after_btree_same_field";
    let table = test_table_with_path(table_path, table_options("10"));
    setup_dirs(&table).await;

    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write
        .write_arrow_batch(&data_batch(vec![1, 2, 3], vec!["alice", "bob", "carol"]))
        .await
        .unwrap();
    let messages = table_write.prepare_commit().await.unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(messages)
        .await
        .unwrap();

    let btree_built = table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .execute()
        .await
        .unwrap();
    assert!(btree_built > 0);

    let bitmap_built = table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .with_index_type(BITMAP_GLOBAL_INDEX_TYPE)
        .execute()
        .await
        .unwrap();
    assert!(
        bitmap_built > 0,
        "bitmap build must index rows even when a btree index already covers the same field"
    );

    let bitmap_files = latest_bitmap_index_files(&table).await;
    assert!(
        !bitmap_files.is_empty(),
        "a bitmap index file must be written"
    );
    let coverage = data_row_id_coverage(&table).await;
    let bitmap_start = bitmap_files
        .iter()
        .filter_map(|f| f.global_index_meta.as_ref())
        .map(|m| m.row_range_start)
        .min()
        .unwrap();
    assert_eq!(
        bitmap_start,
        coverage[0].from(),
        "bitmap coverage must span from the first data row, not skip btree-covered rows"
    );
}

/// Bitmap incremental: build, append, build again → only the appended range
/// gets a new bitmap file; the first bitmap file is retained (append-only).
#[tokio::test]
async fn bitmap_incremental_build_indexes_only_new_rows() {
    let table_path = "memory:/test_bitmap_global_index_incremental";
    let table = test_table_with_path(table_path, table_options("10"));
    setup_dirs(&table).await;

    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write
        .write_arrow_batch(&data_batch(vec![1, 2, 3], vec!["alice", "bob", "carol"]))
        .await
        .unwrap();
    let messages = table_write.prepare_commit().await.unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(messages)
        .await
        .unwrap();

    let first_built = table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .with_index_type(BITMAP_GLOBAL_INDEX_TYPE)
        .execute()
        .await
        .unwrap();
    assert!(first_built > 0);
    let first_names = latest_bitmap_index_files(&table)
        .await
        .iter()
        .map(|f| f.file_name.clone())
        .collect::<std::collections::BTreeSet<_>>();
    let n: i64 = 3;

    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write
        .write_arrow_batch(&data_batch(vec![4, 5, 6], vec!["dave", "erin", "frank"]))
        .await
        .unwrap();
    let messages = table_write.prepare_commit().await.unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(messages)
        .await
        .unwrap();

    let second_built = table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .with_index_type(BITMAP_GLOBAL_INDEX_TYPE)
        .execute()
        .await
        .unwrap();
    assert!(second_built > 0, "appended rows must be indexed");

    let all_files = latest_bitmap_index_files(&table).await;
    let all_names = all_files
        .iter()
        .map(|f| f.file_name.clone())
        .collect::<std::collections::BTreeSet<_>>();
    assert!(
        first_names.iter().all(|name| all_names.contains(name)),
        "build #1 bitmap files must be retained untouched"
    );
    let new_files = all_files
        .iter()
        .filter(|f| !first_names.contains(&f.file_name))
        .collect::<Vec<_>>();
    assert!(!new_files.is_empty(), "build #2 must add new bitmap files");
    for file in new_files {
        let meta = file
            .global_index_meta
            .as_ref()
            .expect("global index meta on new bitmap file");
        assert!(
            meta.row_range_start >= n,
            "new bitmap file range must start at or after {}, got [{}, {}]",
            n,
            meta.row_range_start,
            meta.row_range_end
        );
    }
}

async fn latest_bitmap_index_files(table: &Table) -> Vec<IndexFileMeta> {
    let snapshot_manager =
        SnapshotManager::new(table.file_io().clone(), table.location().to_string());
    let snapshot = snapshot_manager
        .get_latest_snapshot()
        .await
        .unwrap()
        .unwrap();
    let Some(index_manifest_name) = snapshot.index_manifest() else {
        return Vec::new();
    };
    IndexManifest::read(
        table.file_io(),
        &snapshot_manager.manifest_path(index_manifest_name),
    )
    .await
    .unwrap()
    .into_iter()
    .filter(|entry| {
        entry.kind == FileKind::Add && entry.index_file.index_type == BITMAP_GLOBAL_INDEX_TYPE
    })
    .map(|entry| entry.index_file)
    .collect()
}

async fn latest_btree_index_files(table: &Table) -> Vec<IndexFileMeta> {
    let snapshot_manager =
        SnapshotManager::new(table.file_io().clone(), table.location().to_string());
    let snapshot = snapshot_manager
        .get_latest_snapshot()
        .await
        .unwrap()
        .unwrap();
    let Some(index_manifest_name) = snapshot.index_manifest() else {
        return Vec::new();
    };
    IndexManifest::read(
        table.file_io(),
        &snapshot_manager.manifest_path(index_manifest_name),
    )
    .await
    .unwrap()
    .into_iter()
    .filter(|entry| {
        entry.kind == FileKind::Add && entry.index_file.index_type == BTREE_GLOBAL_INDEX_TYPE
    })
    .map(|entry| entry.index_file)
    .collect()
}

/// Row-id coverage of the committed data files, read back from the data
/// manifest (never hard-coded) and merged into contiguous ranges. Mirrors
/// how `execute` gathers `manifest_entries` so tests observe the exact
/// row-ids the writer assigned.
async fn data_row_id_coverage(table: &Table) -> Vec<RowRange> {
    let snapshot_manager =
        SnapshotManager::new(table.file_io().clone(), table.location().to_string());
    let snapshot = snapshot_manager
        .get_latest_snapshot()
        .await
        .unwrap()
        .unwrap();
    let entries = table
        .new_read_builder()
        .new_scan()
        .with_scan_all_files()
        .plan_manifest_entries(&snapshot)
        .await
        .unwrap();
    let ranges = entries
        .iter()
        .filter(|entry| *entry.kind() == FileKind::Add)
        .filter_map(|entry| {
            entry
                .file()
                .row_id_range()
                .map(|(start, end)| RowRange::new(start, end))
        })
        .collect::<Vec<_>>();
    merge_row_ranges(ranges)
}

/// Second build with no new data must be a clean no-op (returns 0), not an
/// overlap error. This is the core bug fix: today the second call errors.
#[tokio::test]
async fn second_build_without_new_data_is_noop() {
    let table_path = "memory:/test_btree_global_index_second_build_noop";
    let table = test_table_with_path(table_path, table_options("10"));
    setup_dirs(&table).await;

    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write
        .write_arrow_batch(&data_batch(vec![1, 2, 3], vec!["alice", "bob", "carol"]))
        .await
        .unwrap();
    let messages = table_write.prepare_commit().await.unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(messages)
        .await
        .unwrap();

    let first_built = table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .execute()
        .await
        .unwrap();
    assert!(first_built > 0, "first build must index the initial rows");

    let files_after_first = latest_btree_index_files(&table).await;
    assert!(!files_after_first.is_empty());

    let built = table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .execute()
        .await
        .unwrap();
    assert_eq!(built, 0, "fully-indexed table must build nothing on re-run");

    let files_after_second = latest_btree_index_files(&table).await;
    let names_first = files_after_first
        .iter()
        .map(|f| f.file_name.clone())
        .collect::<std::collections::BTreeSet<_>>();
    let names_second = files_after_second
        .iter()
        .map(|f| f.file_name.clone())
        .collect::<std::collections::BTreeSet<_>>();
    assert_eq!(
        names_first, names_second,
        "re-run must not add or remove index manifest entries"
    );
}

/// Build, append new rows, build again -> only the appended row range is
/// indexed; the first build's index files are retained untouched (append-only).
#[tokio::test]
async fn incremental_build_indexes_only_new_rows() {
    let table_path = "memory:/test_btree_global_index_incremental";
    let table = test_table_with_path(table_path, table_options("10"));
    setup_dirs(&table).await;

    // Build #1 over rows [0..3).
    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write
        .write_arrow_batch(&data_batch(vec![1, 2, 3], vec!["alice", "bob", "carol"]))
        .await
        .unwrap();
    let messages = table_write.prepare_commit().await.unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(messages)
        .await
        .unwrap();

    let first_built = table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .execute()
        .await
        .unwrap();
    assert!(first_built > 0);

    let first_files = latest_btree_index_files(&table).await;
    let first_names = first_files
        .iter()
        .map(|f| f.file_name.clone())
        .collect::<std::collections::BTreeSet<_>>();
    let n: i64 = 3;

    // Append a second batch (new row-ids [3..6)).
    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write
        .write_arrow_batch(&data_batch(vec![4, 5, 6], vec!["dave", "erin", "frank"]))
        .await
        .unwrap();
    let messages = table_write.prepare_commit().await.unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(messages)
        .await
        .unwrap();

    let second_built = table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .execute()
        .await
        .unwrap();
    assert!(second_built > 0, "appended rows must be indexed");

    let all_files = latest_btree_index_files(&table).await;
    let all_names = all_files
        .iter()
        .map(|f| f.file_name.clone())
        .collect::<std::collections::BTreeSet<_>>();

    // Every build-#1 file is still present (append-only, no rewrite/delete).
    assert!(
        first_names.iter().all(|name| all_names.contains(name)),
        "build #1 index files must be retained untouched"
    );

    // Every build-#2 file covers only the appended range [N, ..].
    let new_files = all_files
        .iter()
        .filter(|f| !first_names.contains(&f.file_name))
        .collect::<Vec<_>>();
    assert!(!new_files.is_empty(), "build #2 must add new index files");
    for file in new_files {
        let meta = file
            .global_index_meta
            .as_ref()
            .expect("global index meta on new btree file");
        assert!(
            meta.row_range_start >= n,
            "new index file range must start at or after {}, got [{}, {}]",
            n,
            meta.row_range_start,
            meta.row_range_end
        );
    }
}

/// Regression: first build (no existing index) must equal the pre-change
/// full build -- subtraction with empty `indexed` = full coverage.
#[tokio::test]
async fn first_build_indexes_full_coverage() {
    let table_path = "memory:/test_btree_global_index_first_full_coverage";
    let table = test_table_with_path(table_path, table_options("10"));
    setup_dirs(&table).await;

    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write
        .write_arrow_batch(&data_batch(vec![1, 2, 3], vec!["alice", "bob", "carol"]))
        .await
        .unwrap();
    let messages = table_write.prepare_commit().await.unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(messages)
        .await
        .unwrap();

    let built = table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .execute()
        .await
        .unwrap();
    assert_eq!(
        built, 1,
        "first build must index the full coverage in one shard"
    );

    let files = latest_btree_index_files(&table).await;
    assert_eq!(files.len(), 1);
    let meta = files[0]
        .global_index_meta
        .as_ref()
        .expect("global index meta");
    assert_eq!(meta.row_range_start, 0);
    assert_eq!(meta.row_range_end, 2);
}

/// Grid boundary (spec edge 4): with `records-per-range = 4`, an appended
/// gap that spans several grid cells must be split so each new index file's
/// range stays inside one cell, the ranges are contiguous, and together
/// they exactly cover the gap. Row-ids are read back from the manifests,
/// never hard-coded.
#[tokio::test]
async fn incremental_build_splits_gap_across_records_per_range_grid() {
    const RPR: i64 = 4;
    let table_path = "memory:/test_btree_global_index_grid_boundary";
    let table = test_table_with_path(table_path, table_options("4"));
    setup_dirs(&table).await;

    // Build #1 over an initial batch (row-ids the writer assigns).
    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write
        .write_arrow_batch(&data_batch(vec![1, 2, 3], vec!["alice", "bob", "carol"]))
        .await
        .unwrap();
    let messages = table_write.prepare_commit().await.unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(messages)
        .await
        .unwrap();

    let first_built = table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .execute()
        .await
        .unwrap();
    assert!(first_built > 0, "first build must index the initial rows");

    // Row range already covered by build #1 (read back, not hard-coded).
    let first_index_files = latest_btree_index_files(&table).await;
    let indexed_before = merge_row_ranges(
        first_index_files
            .iter()
            .filter_map(|f| f.global_index_meta.as_ref())
            .map(|m| RowRange::new(m.row_range_start, m.row_range_end))
            .collect(),
    );
    assert_eq!(
        indexed_before.len(),
        1,
        "build #1 should cover one contiguous range"
    );
    let gap_start = indexed_before[0].to() + 1;
    let before_names = first_index_files
        .iter()
        .map(|f| f.file_name.clone())
        .collect::<std::collections::BTreeSet<_>>();

    // Append rows so the new gap crosses records_per_range (=4) boundaries.
    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write
        .write_arrow_batch(&data_batch(
            vec![4, 5, 6, 7, 8, 9, 10],
            vec!["d", "e", "f", "g", "h", "i", "j"],
        ))
        .await
        .unwrap();
    let messages = table_write.prepare_commit().await.unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(messages)
        .await
        .unwrap();

    // Total data coverage read back from the data manifest.
    let coverage = data_row_id_coverage(&table).await;
    assert_eq!(
        coverage.len(),
        1,
        "appended data must be contiguous with build #1"
    );
    let gap_end = coverage[0].to();
    assert!(
        gap_end - gap_start + 1 > RPR,
        "gap [{gap_start}, {gap_end}] must span more than one records_per_range cell"
    );

    let second_built = table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .execute()
        .await
        .unwrap();
    assert!(second_built > 0, "appended rows must be indexed");

    // Only the newly written index files (build #1 files are retained).
    let mut new_metas = latest_btree_index_files(&table)
        .await
        .into_iter()
        .filter(|f| !before_names.contains(&f.file_name))
        .filter_map(|f| f.global_index_meta)
        .map(|m| (m.row_range_start, m.row_range_end))
        .collect::<Vec<_>>();
    new_metas.sort();
    assert!(!new_metas.is_empty(), "build #2 must add new index files");

    // (a) Each range lies within a single grid cell: no multiple of RPR is
    //     strictly interior, i.e. start and end share the same cell index.
    for (start, end) in &new_metas {
        assert!(end >= start, "range must be non-empty: [{start}, {end}]");
        assert_eq!(
            start / RPR,
            end / RPR,
            "range [{start}, {end}] straddles a records_per_range boundary"
        );
    }
    // (b) Contiguous with no gaps or overlaps.
    for pair in new_metas.windows(2) {
        assert_eq!(
            pair[1].0,
            pair[0].1 + 1,
            "ranges must be contiguous: {:?} then {:?}",
            pair[0],
            pair[1]
        );
    }
    // (c) Together they exactly cover the appended gap [gap_start, gap_end].
    assert_eq!(
        new_metas.first().unwrap().0,
        gap_start,
        "coverage must start at the gap start"
    );
    assert_eq!(
        new_metas.last().unwrap().1,
        gap_end,
        "coverage must end at the gap end"
    );
}

/// Hole splitting (spec edge 5) at build level: a mid-coverage indexed range
/// (constructed directly, as the drop-builder tests build `GlobalIndexMeta`
/// entries) must carve the data coverage into two build segments, one on
/// each side, and the hole itself must not be re-indexed.
#[tokio::test]
async fn incremental_build_splits_gap_around_mid_coverage_indexed_hole() {
    let table_path = "memory:/test_btree_global_index_mid_hole";
    // records-per-range large so the grid never splits: the only split is
    // the hole itself.
    let table = test_table_with_path(table_path, table_options("100"));
    setup_dirs(&table).await;

    // Real data spanning row-ids [0, 9].
    let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
    table_write
        .write_arrow_batch(&data_batch(
            (1..=10).collect(),
            vec!["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"],
        ))
        .await
        .unwrap();
    let messages = table_write.prepare_commit().await.unwrap();
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(messages)
        .await
        .unwrap();

    let coverage = data_row_id_coverage(&table).await;
    assert_eq!(coverage.len(), 1, "data must be one contiguous range");
    assert_eq!(coverage[0].from(), 0);
    let last_row = coverage[0].to();
    assert!(last_row >= 9, "need at least 10 rows for a mid hole");

    // Inject a mid-coverage indexed range [hole_start, hole_end] for the
    // `name` field directly into the index manifest.
    let name_field_id = find_index_field(&table, "name").unwrap().id();
    let hole_start = 4;
    let hole_end = 6;
    let synthetic = IndexFileMeta {
        index_type: BTREE_GLOBAL_INDEX_TYPE.to_string(),
        file_name: "btree-synthetic-hole.index".to_string(),
        file_size: 1,
        row_count: (hole_end - hole_start + 1),
        deletion_vectors_ranges: None,
        external_path: None,
        global_index_meta: Some(GlobalIndexMeta {
            row_range_start: hole_start,
            row_range_end: hole_end,
            index_field_id: name_field_id,
            extra_field_ids: None,
            source_meta: None,
            index_meta: None,
        }),
    };
    let mut message = CommitMessage::new(BinaryRow::new(0).to_serialized_bytes(), 0, vec![]);
    message.new_index_files = vec![synthetic];
    TableCommit::new(table.clone(), "test-user".to_string())
        .commit(vec![message])
        .await
        .unwrap();

    let before_names = latest_btree_index_files(&table)
        .await
        .into_iter()
        .map(|f| f.file_name)
        .collect::<std::collections::BTreeSet<_>>();

    // Build: gap = coverage minus the hole = [0, hole_start-1] and
    // [hole_end+1, last_row]; two shards since the grid does not split here.
    let built = table
        .new_btree_global_index_build_builder()
        .with_index_column("name")
        .execute()
        .await
        .unwrap();
    assert_eq!(
        built, 2,
        "mid-coverage hole must split the gap into two shards"
    );

    let mut new_metas = latest_btree_index_files(&table)
        .await
        .into_iter()
        .filter(|f| !before_names.contains(&f.file_name))
        .filter_map(|f| f.global_index_meta)
        .map(|m| (m.row_range_start, m.row_range_end))
        .collect::<Vec<_>>();
    new_metas.sort();

    assert_eq!(
        new_metas,
        vec![(0, hole_start - 1), (hole_end + 1, last_row)],
        "new shards must fill the coverage on both sides of the indexed hole"
    );
    for (start, end) in &new_metas {
        assert!(
            *end < hole_start || *start > hole_end,
            "new shard [{start}, {end}] must not overlap indexed hole [{hole_start}, {hole_end}]"
        );
    }
}

async fn composite_entries(
    table: &Table,
) -> (crate::spec::Snapshot, Vec<crate::spec::IndexManifestEntry>) {
    let manager = SnapshotManager::new(table.file_io().clone(), table.location().into());
    let snapshot = manager.get_latest_snapshot().await.unwrap().unwrap();
    let entries = IndexManifest::read(
        table.file_io(),
        &manager.manifest_path(snapshot.index_manifest().unwrap()),
    )
    .await
    .unwrap();
    (snapshot, entries)
}

async fn composite_ranges(
    table: &Table,
    predicates: &[Predicate],
    budget: i64,
    mode: GlobalIndexSearchMode,
) -> Option<Vec<RowRange>> {
    let (snapshot, entries) = composite_entries(table).await;
    evaluate_global_index(GlobalIndexEvaluation {
        file_io: table.file_io(),
        table_path: table.location(),
        index_entries: &entries,
        predicates,
        schema_fields: table.schema().fields(),
        search_mode: mode,
        global_index_thread_num: 2,
        btree_fallback_scan_max_size: budget,
        btree_data_block_cache_size: 1024 * 1024,
        bitmap_fallback_scan_max_size: budget,
        fm_read_options: crate::fm_index::FMReadOptions::default(),
        next_row_id: snapshot.next_row_id(),
        data_ranges: &[RowRange::new(0, snapshot.next_row_id().unwrap() - 1)],
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn test_composite_btree_build_query_coverage_and_drop() {
    for version in [1, 2] {
        let mut options = table_options("2");
        options.insert("btree-index.file-version".into(), version.to_string());
        options.insert("btree-index.bloom-filter.enabled".into(), "true".into());
        let table =
            test_table_with_path(&format!("memory:/composite_btree_e2e_v{version}"), options);
        setup_dirs(&table).await;
        let mut writer = TableWrite::new(&table, "composite-test".into()).unwrap();
        writer
            .write_arrow_batch(&data_batch(
                vec![1, 2, 3, 1, 4, 5],
                vec!["a", "a", "b", "a", "b", "c"],
            ))
            .await
            .unwrap();
        TableCommit::new(table.clone(), "composite-test".into())
            .commit(writer.prepare_commit().await.unwrap())
            .await
            .unwrap();
        assert_eq!(
            table
                .new_btree_global_index_build_builder()
                .with_index_columns(&["name", "id"])
                .execute()
                .await
                .unwrap(),
            3
        );
        assert_eq!(
            table
                .new_btree_global_index_build_builder()
                .with_index_column(" name , id ")
                .execute()
                .await
                .unwrap(),
            0
        );
        let b = PredicateBuilder::new(table.schema().fields());
        let point = Predicate::and(vec![
            b.equal("id", Datum::Int(1)).unwrap(),
            b.equal("name", Datum::String("a".into())).unwrap(),
        ]);
        assert_eq!(
            composite_ranges(
                &table,
                std::slice::from_ref(&point),
                0,
                GlobalIndexSearchMode::Fast
            )
            .await
            .unwrap(),
            vec![RowRange::new(0, 0), RowRange::new(3, 3)]
        );
        assert_eq!(scan_ids(&table, point.clone()).await, vec![1, 1]);
        let prefix = b.equal("name", Datum::String("a".into())).unwrap();
        assert!(composite_ranges(
            &table,
            std::slice::from_ref(&prefix),
            0,
            GlobalIndexSearchMode::Fast
        )
        .await
        .is_none());
        let range = Predicate::and(vec![
            prefix.clone(),
            b.greater_than("id", Datum::Int(1)).unwrap(),
        ]);
        assert_eq!(
            composite_ranges(
                &table,
                std::slice::from_ref(&range),
                i64::MAX,
                GlobalIndexSearchMode::Fast
            )
            .await
            .unwrap(),
            vec![RowRange::new(1, 1)]
        );
        assert_eq!(scan_ids(&table, range.clone()).await, vec![2]);
        let suffix = b.equal("id", Datum::Int(1)).unwrap();
        assert!(
            composite_ranges(&table, &[suffix], i64::MAX, GlobalIndexSearchMode::Fast)
                .await
                .is_none()
        );
        let disjunction = Predicate::or(vec![
            point.clone(),
            Predicate::and(vec![
                b.equal("name", Datum::String("b".into())).unwrap(),
                b.equal("id", Datum::Int(4)).unwrap(),
            ]),
        ]);
        assert_eq!(
            composite_ranges(&table, &[disjunction], 0, GlobalIndexSearchMode::Fast)
                .await
                .unwrap(),
            vec![RowRange::new(0, 0), RowRange::new(3, 4)]
        );
        let (_, entries) = composite_entries(&table).await;
        let max_size = entries
            .iter()
            .map(|entry| entry.index_file.file_size)
            .max()
            .unwrap();
        assert!(
            composite_ranges(
                &table,
                std::slice::from_ref(&prefix),
                max_size,
                GlobalIndexSearchMode::Fast
            )
            .await
            .is_some(),
            "budget is per row-range group, not summed across all shards"
        );
        assert!(entries.iter().all(|entry| entry
            .index_file
            .global_index_meta
            .as_ref()
            .unwrap()
            .extra_field_ids
            == Some(vec![0])));
        // Append outside the composite coverage. FULL and DETAIL must retain
        // those rows for residual data filtering; FAST uses indexed coverage.
        let mut writer = TableWrite::new(&table, "append-test".into()).unwrap();
        writer
            .write_arrow_batch(&data_batch(vec![6], vec!["a"]))
            .await
            .unwrap();
        TableCommit::new(table.clone(), "append-test".into())
            .commit(writer.prepare_commit().await.unwrap())
            .await
            .unwrap();
        for mode in [GlobalIndexSearchMode::Full, GlobalIndexSearchMode::Detail] {
            assert_eq!(
                composite_ranges(&table, std::slice::from_ref(&point), 0, mode)
                    .await
                    .unwrap(),
                vec![
                    RowRange::new(0, 0),
                    RowRange::new(3, 3),
                    RowRange::new(6, 6)
                ]
            );
        }
        assert_eq!(scan_ids(&table, point).await, vec![1, 1]);
        assert_eq!(
            table
                .new_btree_global_index_build_builder()
                .with_index_columns(&["name", "id"])
                .execute()
                .await
                .unwrap(),
            1
        );
        // Independent scalar and reversed tuple definitions coexist.
        assert!(
            table
                .new_btree_global_index_build_builder()
                .with_index_column("name")
                .execute()
                .await
                .unwrap()
                > 0
        );
        assert!(
            table
                .new_btree_global_index_build_builder()
                .with_index_columns(&["id", "name"])
                .execute()
                .await
                .unwrap()
                > 0
        );
        let (_, entries) = composite_entries(&table).await;
        let target_count = entries
            .iter()
            .filter(|entry| {
                let meta = entry.index_file.global_index_meta.as_ref().unwrap();
                meta.index_field_id == 1 && meta.extra_field_ids == Some(vec![0])
            })
            .count();
        assert_eq!(
            table
                .new_global_index_drop_builder()
                .with_index_columns(&["name", "id"])
                .execute()
                .await
                .unwrap(),
            target_count
        );
        let (_, retained) = composite_entries(&table).await;
        assert!(retained.iter().any(|entry| {
            let meta = entry.index_file.global_index_meta.as_ref().unwrap();
            meta.index_field_id == 1 && meta.extra_field_ids.is_none()
        }));
        assert!(retained.iter().any(|entry| entry
            .index_file
            .global_index_meta
            .as_ref()
            .unwrap()
            .extra_field_ids
            == Some(vec![1])));
        assert_eq!(
            table
                .new_global_index_drop_builder()
                .with_index_columns(&["name", "id"])
                .execute()
                .await
                .unwrap(),
            0
        );
    }
}

#[tokio::test]
async fn test_composite_btree_column_validation() {
    let table = test_table(table_options("10"));
    for columns in ["", "name,", "name,name", "name,missing"] {
        assert!(table
            .new_btree_global_index_build_builder()
            .with_index_column(columns)
            .execute()
            .await
            .is_err());
        assert!(table
            .new_global_index_drop_builder()
            .with_index_column(columns)
            .execute()
            .await
            .is_err());
    }
    for index_type in ["bitmap", "multivalue", "fm"] {
        assert!(matches!(
            table
                .new_btree_global_index_build_builder()
                .with_index_columns(&["name", "id"])
                .with_index_type(index_type)
                .execute()
                .await
                .unwrap_err(),
            Error::Unsupported { .. }
        ));
    }
}

#[tokio::test]
async fn test_composite_btree_all_null_tuple_and_residual_filter() {
    let table = test_table_with_path("memory:/composite_null_tuple", table_options("10"));
    setup_dirs(&table).await;
    let batch = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, true),
            ArrowField::new("name", ArrowDataType::Utf8, true),
        ])),
        vec![
            Arc::new(Int32Array::from(vec![None, Some(1), Some(2)])) as ArrayRef,
            Arc::new(StringArray::from(vec![None, Some("a"), None])) as ArrayRef,
        ],
    )
    .unwrap();
    let mut writer = TableWrite::new(&table, "null-test".into()).unwrap();
    writer.write_arrow_batch(&batch).await.unwrap();
    TableCommit::new(table.clone(), "null-test".into())
        .commit(writer.prepare_commit().await.unwrap())
        .await
        .unwrap();
    table
        .new_btree_global_index_build_builder()
        .with_index_columns(&["name", "id"])
        .execute()
        .await
        .unwrap();
    let b = PredicateBuilder::new(table.schema().fields());
    let all_null = Predicate::and(vec![b.is_null("name").unwrap(), b.is_null("id").unwrap()]);
    assert_eq!(
        composite_ranges(&table, &[all_null], 0, GlobalIndexSearchMode::Fast)
            .await
            .unwrap(),
        vec![RowRange::new(0, 0)]
    );
    let null_range = Predicate::and(vec![
        b.is_null("name").unwrap(),
        b.greater_than("id", Datum::Int(0)).unwrap(),
    ]);
    assert_eq!(
        composite_ranges(&table, &[null_range], i64::MAX, GlobalIndexSearchMode::Fast)
            .await
            .unwrap(),
        vec![RowRange::new(2, 2)]
    );
    // A constraint after the first range is a data filter, so the candidate
    // includes row 1, while the ordinary reader rejects it.
    let residual = Predicate::and(vec![
        b.is_not_null("name").unwrap(),
        b.equal("id", Datum::Int(2)).unwrap(),
    ]);
    assert_eq!(
        composite_ranges(
            &table,
            std::slice::from_ref(&residual),
            i64::MAX,
            GlobalIndexSearchMode::Fast
        )
        .await
        .unwrap(),
        vec![RowRange::new(1, 1)]
    );
    assert!(scan_ids(&table, residual).await.is_empty());
}

#[tokio::test]
async fn test_composite_btree_literal_precision_preserves_scan_results() {
    use crate::spec::{DecimalType, TimestampType};
    use arrow_array::{Decimal128Array, TimestampMillisecondArray};

    let schema = Schema::builder()
        .column("id", DataType::Int(IntType::new()))
        .column("d", DataType::Decimal(DecimalType::new(10, 2).unwrap()))
        .column("ts", DataType::Timestamp(TimestampType::new(3).unwrap()))
        .options(table_options("10"))
        .build()
        .unwrap();
    let table = Table::new(
        FileIOBuilder::new("memory").build().unwrap(),
        Identifier::new("default", "literal_precision"),
        "memory:/composite_literal_precision".into(),
        TableSchema::new(0, &schema),
        None,
    );
    setup_dirs(&table).await;
    let batch = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, false),
            ArrowField::new("d", ArrowDataType::Decimal128(10, 2), false),
            ArrowField::new(
                "ts",
                ArrowDataType::Timestamp(arrow_schema::TimeUnit::Millisecond, None),
                false,
            ),
        ])),
        vec![
            Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef,
            Arc::new(
                Decimal128Array::from(vec![100, 200, 50])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
            Arc::new(TimestampMillisecondArray::from(vec![1000, 2000, 3000])),
        ],
    )
    .unwrap();
    let mut writer = TableWrite::new(&table, "precision-test".into()).unwrap();
    writer.write_arrow_batch(&batch).await.unwrap();
    TableCommit::new(table.clone(), "precision-test".into())
        .commit(writer.prepare_commit().await.unwrap())
        .await
        .unwrap();
    let b = PredicateBuilder::new(table.schema().fields());
    let decimal = |unscaled, scale| Datum::Decimal {
        unscaled,
        precision: 10,
        scale,
    };
    let queries = vec![
        (
            Predicate::and(vec![
                b.equal("d", decimal(10, 1)).unwrap(),
                b.equal("id", Datum::Int(1)).unwrap(),
            ]),
            vec![1],
        ),
        (b.less_than("d", decimal(10, 1)).unwrap(), vec![3]),
        (b.less_than("d", decimal(1005, 3)).unwrap(), vec![1, 3]),
        (
            Predicate::and(vec![
                b.equal("d", decimal(500, 3)).unwrap(),
                b.equal("id", Datum::Int(3)).unwrap(),
            ]),
            vec![3],
        ),
        (
            b.less_than(
                "ts",
                Datum::Timestamp {
                    millis: 1000,
                    nanos: 1,
                },
            )
            .unwrap(),
            vec![1],
        ),
        (
            b.is_in("d", vec![decimal(1, 0), decimal(500, 3), decimal(10, 1)])
                .unwrap(),
            vec![1, 3],
        ),
        (
            b.between("d", decimal(5, 1), decimal(1000, 3)).unwrap(),
            vec![1, 3],
        ),
    ];
    for (predicate, expected) in &queries {
        assert_eq!(scan_ids(&table, predicate.clone()).await, *expected);
    }
    for columns in [["d", "id"], ["ts", "id"]] {
        table
            .new_btree_global_index_build_builder()
            .with_index_columns(&columns)
            .execute()
            .await
            .unwrap();
    }
    for (predicate, expected) in &queries {
        assert_eq!(
            scan_ids(&table, predicate.clone()).await,
            *expected,
            "{predicate:?}"
        );
    }
    // Exact rescaling retains point lookups even with a zero range-scan budget.
    assert_eq!(
        composite_ranges(
            &table,
            &[queries[0].0.clone()],
            0,
            GlobalIndexSearchMode::Fast
        )
        .await
        .unwrap(),
        vec![RowRange::new(0, 0)]
    );
    for index in [2, 4] {
        assert!(composite_ranges(
            &table,
            &[queries[index].0.clone()],
            i64::MAX,
            GlobalIndexSearchMode::Fast
        )
        .await
        .is_none());
    }
    // A fully covering scalar index is preferred for a leading-only query.
    // That path must preserve the same literal values as the tuple query.
    for index_type in ["btree", "bitmap"] {
        for column in ["d", "ts"] {
            table
                .new_btree_global_index_build_builder()
                .with_index_column(column)
                .with_index_type(index_type)
                .execute()
                .await
                .unwrap();
        }
        for (predicate, expected) in &queries {
            assert_eq!(
                scan_ids(&table, predicate.clone()).await,
                *expected,
                "{index_type}: {predicate:?}"
            );
        }
        for column in ["d", "ts"] {
            table
                .new_global_index_drop_builder()
                .with_index_column(column)
                .with_index_type(index_type)
                .execute()
                .await
                .unwrap();
        }
    }
}

#[tokio::test]
async fn test_composite_btree_intersects_independent_indexes() {
    let schema = Schema::builder()
        .column("id", DataType::Int(IntType::new()))
        .column("name", DataType::VarChar(VarCharType::string_type()))
        .column("flag", DataType::Int(IntType::new()))
        .options(table_options("10"))
        .build()
        .unwrap();
    let table = Table::new(
        FileIOBuilder::new("memory").build().unwrap(),
        Identifier::new("default", "independent_indexes"),
        "memory:/composite_independent_indexes".into(),
        TableSchema::new(0, &schema),
        None,
    );
    setup_dirs(&table).await;
    let batch = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, false),
            ArrowField::new("name", ArrowDataType::Utf8, false),
            ArrowField::new("flag", ArrowDataType::Int32, false),
        ])),
        vec![
            Arc::new(Int32Array::from(vec![1, 2, 3, 4])) as ArrayRef,
            Arc::new(StringArray::from(vec!["a", "a", "b", "a"])),
            Arc::new(Int32Array::from(vec![1, 0, 1, 1])),
        ],
    )
    .unwrap();
    let mut writer = TableWrite::new(&table, "intersection-test".into()).unwrap();
    writer.write_arrow_batch(&batch).await.unwrap();
    TableCommit::new(table.clone(), "intersection-test".into())
        .commit(writer.prepare_commit().await.unwrap())
        .await
        .unwrap();
    table
        .new_btree_global_index_build_builder()
        .with_index_type("bitmap")
        .with_index_column("flag")
        .execute()
        .await
        .unwrap();
    table
        .new_btree_global_index_build_builder()
        .with_index_columns(&["name", "id"])
        .execute()
        .await
        .unwrap();
    let b = PredicateBuilder::new(table.schema().fields());
    let predicate = Predicate::And(vec![
        b.equal("name", Datum::String("a".into())).unwrap(),
        Predicate::And(vec![
            b.greater_than("id", Datum::Int(1)).unwrap(),
            b.equal("flag", Datum::Int(1)).unwrap(),
        ]),
    ]);
    for _ in 0..2 {
        assert_eq!(
            composite_ranges(
                &table,
                std::slice::from_ref(&predicate),
                i64::MAX,
                GlobalIndexSearchMode::Fast
            )
            .await
            .unwrap(),
            vec![RowRange::new(3, 3)]
        );
        assert_eq!(scan_ids(&table, predicate.clone()).await, vec![4]);
        // Repeat with a second composite definition instead of the scalar bitmap.
        table
            .new_global_index_drop_builder()
            .with_index_column("flag")
            .with_index_type("bitmap")
            .execute()
            .await
            .unwrap();
        table
            .new_btree_global_index_build_builder()
            .with_index_columns(&["flag", "id"])
            .execute()
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn test_composite_btree_combines_different_index_coverage() {
    for independent_type in ["bitmap", "composite"] {
        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("name", DataType::VarChar(VarCharType::string_type()))
            .column("flag", DataType::Int(IntType::new()))
            .options(table_options("2"))
            .build()
            .unwrap();
        let table = Table::new(
            FileIOBuilder::new("memory").build().unwrap(),
            Identifier::new("default", independent_type),
            format!("memory:/composite_partial_coverage_{independent_type}"),
            TableSchema::new(0, &schema),
            None,
        );
        setup_dirs(&table).await;
        let batch = RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![
                ArrowField::new("id", ArrowDataType::Int32, false),
                ArrowField::new("name", ArrowDataType::Utf8, false),
                ArrowField::new("flag", ArrowDataType::Int32, false),
            ])),
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3, 4, 5, 6])) as ArrayRef,
                Arc::new(StringArray::from(vec!["a", "b", "a", "b", "a", "b"])),
                Arc::new(Int32Array::from(vec![1, 0, 0, 1, 0, 1])),
            ],
        )
        .unwrap();
        let mut writer = TableWrite::new(&table, "coverage-test".into()).unwrap();
        writer.write_arrow_batch(&batch).await.unwrap();
        TableCommit::new(table.clone(), "coverage-test".into())
            .commit(writer.prepare_commit().await.unwrap())
            .await
            .unwrap();
        table
            .new_btree_global_index_build_builder()
            .with_index_columns(&["name", "id"])
            .execute()
            .await
            .unwrap();
        let mut independent = table.new_btree_global_index_build_builder();
        if independent_type == "bitmap" {
            independent
                .with_index_type("bitmap")
                .with_index_column("flag");
        } else {
            independent.with_index_columns(&["flag", "id"]);
        }
        independent.execute().await.unwrap();
        // Keep real persisted files, with (name,id) covering [0,3] and the
        // independent flag definition covering [2,5]. Neither covers the table.
        let (snapshot, entries) = composite_entries(&table).await;
        let mut deletions = HashMap::<_, Vec<IndexFileMeta>>::new();
        for entry in entries {
            let meta = entry.index_file.global_index_meta.as_ref().unwrap();
            if (meta.index_field_id == 1 && meta.row_range_start == 4)
                || (meta.index_field_id == 2 && meta.row_range_start == 0)
            {
                deletions
                    .entry((entry.partition, entry.bucket))
                    .or_default()
                    .push(entry.index_file);
            }
        }
        assert_eq!(deletions.values().map(Vec::len).sum::<usize>(), 2);
        let messages = deletions
            .into_iter()
            .map(|((partition, bucket), files)| {
                let mut message = crate::table::CommitMessage::new(partition, bucket, vec![]);
                message.deleted_index_files = files;
                message
            })
            .collect();
        TableCommit::new(table.clone(), "partial-coverage-test".into())
            .commit_if_latest_snapshot(messages, snapshot.id())
            .await
            .unwrap();
        let (_, entries) = composite_entries(&table).await;
        for (field_id, expected) in [(1, RowRange::new(0, 3)), (2, RowRange::new(2, 5))] {
            let ranges = entries
                .iter()
                .filter_map(|entry| {
                    let meta = entry.index_file.global_index_meta.as_ref().unwrap();
                    (meta.index_field_id == field_id)
                        .then(|| RowRange::new(meta.row_range_start, meta.row_range_end))
                })
                .collect();
            assert_eq!(merge_row_ranges(ranges), vec![expected]);
        }
        let b = PredicateBuilder::new(table.schema().fields());
        let tuple = Predicate::and(vec![
            b.equal("name", Datum::String("a".into())).unwrap(),
            b.greater_than("id", Datum::Int(0)).unwrap(),
        ]);
        let flag = b.equal("flag", Datum::Int(1)).unwrap();
        let ordinary = table.copy_with_options(HashMap::from([(
            "global-index.enabled".into(),
            "false".into(),
        )]));
        for (predicate, fast_ranges, complete_ranges, fast_ids, complete_ids) in [
            (
                Predicate::and(vec![tuple.clone(), flag.clone()]),
                vec![],
                vec![RowRange::new(0, 1), RowRange::new(4, 5)],
                vec![],
                vec![1],
            ),
            (
                Predicate::or(vec![tuple, flag]),
                vec![
                    RowRange::new(0, 0),
                    RowRange::new(2, 3),
                    RowRange::new(5, 5),
                ],
                vec![RowRange::new(0, 5)],
                vec![1, 3, 4, 6],
                vec![1, 3, 4, 5, 6],
            ),
        ] {
            assert_eq!(scan_ids(&ordinary, predicate.clone()).await, complete_ids);
            for (mode, option) in [
                (GlobalIndexSearchMode::Fast, "fast"),
                (GlobalIndexSearchMode::Full, "full"),
                (GlobalIndexSearchMode::Detail, "detail"),
            ] {
                let (ranges, ids) = if mode == GlobalIndexSearchMode::Fast {
                    (&fast_ranges, &fast_ids)
                } else {
                    (&complete_ranges, &complete_ids)
                };
                assert_eq!(
                    composite_ranges(&table, std::slice::from_ref(&predicate), i64::MAX, mode)
                        .await
                        .unwrap(),
                    *ranges,
                    "{independent_type}, {option}, {predicate:?}"
                );
                let indexed = table.copy_with_options(HashMap::from([(
                    "global-index.search-mode".into(),
                    option.into(),
                )]));
                assert_eq!(
                    scan_ids(&indexed, predicate.clone()).await,
                    *ids,
                    "{independent_type}, {option}, {predicate:?}"
                );
            }
        }
    }
}

#[tokio::test]
async fn test_composite_btree_preserves_exact_column_names() {
    let schema = Schema::builder()
        .column("id", DataType::Int(IntType::new()))
        .column("a,b", DataType::VarChar(VarCharType::string_type()))
        .column(" c ", DataType::Int(IntType::new()))
        .options(table_options("10"))
        .build()
        .unwrap();
    let table = Table::new(
        FileIOBuilder::new("memory").build().unwrap(),
        Identifier::new("default", "exact_names"),
        "memory:/composite_exact_names".into(),
        TableSchema::new(0, &schema),
        None,
    );
    setup_dirs(&table).await;
    let batch = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, false),
            ArrowField::new("a,b", ArrowDataType::Utf8, false),
            ArrowField::new(" c ", ArrowDataType::Int32, false),
        ])),
        vec![
            Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
            Arc::new(StringArray::from(vec!["x", "y"])),
            Arc::new(Int32Array::from(vec![10, 20])),
        ],
    )
    .unwrap();
    let mut writer = TableWrite::new(&table, "name-test".into()).unwrap();
    writer.write_arrow_batch(&batch).await.unwrap();
    TableCommit::new(table.clone(), "name-test".into())
        .commit(writer.prepare_commit().await.unwrap())
        .await
        .unwrap();
    assert_eq!(
        table
            .new_btree_global_index_build_builder()
            .with_index_columns(&["a,b", " c "])
            .execute()
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        table
            .new_btree_global_index_build_builder()
            .with_index_column("a,b")
            .execute()
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        table
            .new_btree_global_index_build_builder()
            .with_index_column(" c ")
            .execute()
            .await
            .unwrap(),
        1
    );
    let b = PredicateBuilder::new(table.schema().fields());
    let point = Predicate::and(vec![
        b.equal("a,b", Datum::String("x".into())).unwrap(),
        b.equal(" c ", Datum::Int(10)).unwrap(),
    ]);
    assert_eq!(scan_ids(&table, point).await, vec![1]);
    assert_eq!(
        table
            .new_global_index_drop_builder()
            .with_index_columns(&["a,b", " c "])
            .execute()
            .await
            .unwrap(),
        1
    );
    let (_, entries) = composite_entries(&table).await;
    assert_eq!(entries.len(), 2);
    assert!(entries.iter().all(|entry| entry
        .index_file
        .global_index_meta
        .as_ref()
        .unwrap()
        .extra_field_ids
        .is_none()));
    assert_eq!(
        table
            .new_global_index_drop_builder()
            .with_index_column("a,b")
            .execute()
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        table
            .new_global_index_drop_builder()
            .with_index_column(" c ")
            .execute()
            .await
            .unwrap(),
        1
    );
    assert!(table
        .new_btree_global_index_build_builder()
        .with_index_columns(&[])
        .execute()
        .await
        .is_err());
    assert!(table
        .new_global_index_drop_builder()
        .with_index_columns(&[])
        .execute()
        .await
        .is_err());
}
