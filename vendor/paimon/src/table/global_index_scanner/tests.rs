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

use super::entry::*;
use super::evaluator::try_fold_bounded;
use super::predicates::*;
use super::row_ranges::*;
use super::*;
use crate::btree::test_util::VecFileWrite;
use crate::btree::{
    make_key_comparator, serialize_datum, BTreeFileFooter, BTreeIndexWriter, BlockCompressionType,
};
use crate::fm_index::{FMGlobalIndexWriter, FMWriteOptions};
use crate::spec::{DataType, Datum, IndexFileMeta, PredicateOperator};
use crate::table::bitmap_global_index_format::{
    make_bitmap_key_comparator, serialize_bitmap_datum,
};
use crate::table::bitmap_global_index_writer::BitmapGlobalIndexWriter;
use roaring::RoaringTreemap;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Arc;

#[tokio::test]
async fn test_try_fold_bounded_respects_concurrency_limit() {
    for limit in [1, 3] {
        let active = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let futures = (0..9usize).map(|value| {
            let active = Arc::clone(&active);
            let peak = Arc::clone(&peak);
            async move {
                let current = active.fetch_add(1, AtomicOrdering::SeqCst) + 1;
                peak.fetch_max(current, AtomicOrdering::SeqCst);
                tokio::task::yield_now().await;
                active.fetch_sub(1, AtomicOrdering::SeqCst);
                Ok::<_, crate::Error>(value)
            }
        });

        let mut values = try_fold_bounded(futures, limit, Vec::new(), |values, value| {
            values.push(value)
        })
        .await
        .unwrap();
        values.sort_unstable();

        assert_eq!(values, (0..9).collect::<Vec<_>>());
        assert_eq!(peak.load(AtomicOrdering::SeqCst), limit);
    }
}

#[test]
fn test_bitmap_to_ranges() {
    assert_eq!(
        bitmap_to_ranges(&RoaringTreemap::new()),
        Vec::<RowRange>::new()
    );

    let mut bm = RoaringTreemap::new();
    bm.insert(5);
    assert_eq!(bitmap_to_ranges(&bm), vec![RowRange::new(5, 5)]);

    let mut bm = RoaringTreemap::new();
    for id in [1, 2, 3, 5, 6, 10] {
        bm.insert(id);
    }
    assert_eq!(
        bitmap_to_ranges(&bm),
        vec![
            RowRange::new(1, 3),
            RowRange::new(5, 6),
            RowRange::new(10, 10),
        ]
    );
}

#[test]
fn test_intersect_sorted_ranges() {
    let a = vec![RowRange::new(0, 10), RowRange::new(20, 30)];
    let b = vec![RowRange::new(5, 25)];
    let result = intersect_sorted_ranges(&a, &b);
    assert_eq!(result, vec![RowRange::new(5, 10), RowRange::new(20, 25)]);
}

#[test]
fn test_bitmap_ranges_across_containers_and_high_keys() {
    for run in [1u64, 9, 31, 64, 256, 65536] {
        let start = (1u64 << 32) - 10000;
        let expected: Vec<_> = (0..100)
            .map(|i| {
                let from = start + i * (run + 1);
                RowRange::new(from as i64, (from + run - 1) as i64)
            })
            .collect();
        let mut bitmap = RoaringTreemap::new();
        for range in &expected {
            bitmap.insert_range(range.from() as u64..=range.to() as u64);
        }
        assert_eq!(bitmap_to_ranges(&bitmap), expected);
        bitmap.optimize();
        assert_eq!(bitmap_to_ranges(&bitmap), expected);
    }
    let mut bitmap = RoaringTreemap::new();
    bitmap.insert_range((1u64 << 32) - 10..=(1u64 << 32) + 10);
    bitmap.insert(i64::MAX as u64);
    assert_eq!(
        bitmap_to_ranges(&bitmap),
        vec![
            RowRange::new((1i64 << 32) - 10, (1i64 << 32) + 10),
            RowRange::new(i64::MAX, i64::MAX),
        ]
    );
}

#[test]
#[ignore = "manual release benchmark; no wall-clock assertions"]
fn benchmark_bitmap_range_transport() {
    use std::hint::black_box;
    use std::time::Instant;
    fn baseline(bitmap: &RoaringTreemap, offset: u64) -> Vec<RowRange> {
        let mut shifted = RoaringTreemap::new();
        for id in bitmap {
            shifted.insert(id + offset);
        }
        let mut ranges = Vec::new();
        let mut current: Option<(i64, i64)> = None;
        for id in shifted {
            let id = id as i64;
            match current {
                Some((start, end)) if id == end + 1 => current = Some((start, id)),
                Some((start, end)) => {
                    ranges.push(RowRange::new(start, end));
                    current = Some((id, id));
                }
                None => current = Some((id, id)),
            }
        }
        if let Some((start, end)) = current {
            ranges.push(RowRange::new(start, end));
        }
        ranges
    }
    fn optimized(bitmap: &RoaringTreemap, offset: u64) -> Vec<RowRange> {
        crate::table::merge_row_ranges(
            bitmap_to_ranges(bitmap)
                .into_iter()
                .map(|r| RowRange::new(r.from() + offset as i64, r.to() + offset as i64))
                .collect(),
        )
    }
    for (name, count, run) in [
        ("continuous", 12_000_000u64, 12_000_000),
        ("nine-hit-one-gap", 1_200_000, 9),
        ("singletons", 1_200_000, 1),
    ] {
        let mut bitmap = RoaringTreemap::new();
        let step = if run == 1 { 10 } else { run + 1 };
        for start in (0..count).step_by(step as usize) {
            bitmap.insert_range(start..(start + run).min(count));
        }
        bitmap.optimize();
        let offset = (1u64 << 32) - 10000;
        let expected = baseline(&bitmap, offset);
        assert_eq!(optimized(&bitmap, offset), expected);
        for _ in 0..3 {
            black_box(baseline(&bitmap, offset));
            black_box(optimized(&bitmap, offset));
        }
        let mut times = [Vec::new(), Vec::new()];
        for round in 0..7 {
            for index in [round % 2, 1 - round % 2] {
                let started = Instant::now();
                black_box(if index == 0 {
                    baseline(&bitmap, offset)
                } else {
                    optimized(&bitmap, offset)
                });
                times[index].push(started.elapsed().as_secs_f64() * 1000.0);
            }
        }
        for samples in &mut times {
            samples.sort_by(f64::total_cmp);
        }
        println!(
            "RANGE_BENCH {name} rows={} ranges={} before_ms={:.3} after_ms={:.3}",
            bitmap.len(),
            expected.len(),
            times[0][3],
            times[1][3]
        );
    }
}

#[test]
fn test_intersect_no_overlap() {
    let a = vec![RowRange::new(0, 5)];
    let b = vec![RowRange::new(10, 20)];
    assert!(intersect_sorted_ranges(&a, &b).is_empty());
}

#[test]
fn test_serialize_datum_int() {
    let key = serialize_datum(&Datum::Int(42), &DataType::Int(crate::spec::IntType::new()));
    assert_eq!(key, 42i32.to_le_bytes().to_vec());
}

#[test]
fn test_serialize_datum_string() {
    let key = serialize_datum(
        &Datum::String("hello".to_string()),
        &DataType::VarChar(crate::spec::VarCharType::new(100).unwrap()),
    );
    assert_eq!(key, b"hello".to_vec());
}

fn assert_bitmap_floating_meta_policy(
    data_type: DataType,
    min: Datum,
    max: Datum,
    outside: Datum,
    nan: Datum,
) {
    let cmp = make_bitmap_key_comparator(&data_type);
    let min_key = serialize_bitmap_datum(&min, &data_type);
    let max_key = serialize_bitmap_datum(&max, &data_type);
    let outside_key = serialize_bitmap_datum(&outside, &data_type);
    let nan_key = serialize_bitmap_datum(&nan, &data_type);
    let meta = BTreeIndexMeta::new(Some(min_key.clone()), Some(max_key), false);

    assert!(!bitmap_meta_may_match(
        &meta,
        PredicateOperator::Eq,
        &data_type,
        std::slice::from_ref(&outside_key),
        cmp.as_ref(),
    ));
    assert!(!bitmap_meta_may_match(
        &meta,
        PredicateOperator::In,
        &data_type,
        std::slice::from_ref(&outside_key),
        cmp.as_ref(),
    ));
    assert!(!bitmap_meta_may_match(
        &meta,
        PredicateOperator::IsNull,
        &data_type,
        &[],
        cmp.as_ref(),
    ));
    assert!(bitmap_meta_may_match(
        &meta,
        PredicateOperator::IsNotNull,
        &data_type,
        &[],
        cmp.as_ref(),
    ));

    let nan_meta = BTreeIndexMeta::new(Some(min_key), Some(nan_key.clone()), false);
    assert!(bitmap_meta_may_match(
        &nan_meta,
        PredicateOperator::Eq,
        &data_type,
        std::slice::from_ref(&nan_key),
        cmp.as_ref(),
    ));
    assert!(bitmap_meta_may_match(
        &nan_meta,
        PredicateOperator::In,
        &data_type,
        std::slice::from_ref(&nan_key),
        cmp.as_ref(),
    ));

    assert!(bitmap_meta_may_match(
        &meta,
        PredicateOperator::Gt,
        &data_type,
        std::slice::from_ref(&outside_key),
        cmp.as_ref(),
    ));
    assert!(bitmap_meta_may_match_between(
        &meta,
        &data_type,
        &outside_key,
        &outside_key,
        cmp.as_ref(),
    ));

    let only_nulls = BTreeIndexMeta::new(None, None, true);
    assert!(bitmap_meta_may_match(
        &only_nulls,
        PredicateOperator::IsNull,
        &data_type,
        &[],
        cmp.as_ref(),
    ));
    assert!(!bitmap_meta_may_match(
        &only_nulls,
        PredicateOperator::IsNotNull,
        &data_type,
        &[],
        cmp.as_ref(),
    ));
    assert!(!bitmap_meta_may_match(
        &only_nulls,
        PredicateOperator::NotEq,
        &data_type,
        std::slice::from_ref(&outside_key),
        cmp.as_ref(),
    ));
    assert!(!bitmap_meta_may_match_between(
        &only_nulls,
        &data_type,
        &outside_key,
        &outside_key,
        cmp.as_ref(),
    ));
}

#[test]
fn test_bitmap_floating_meta_prunes_equality_and_fails_open_for_ranges() {
    assert_bitmap_floating_meta_policy(
        DataType::Float(crate::spec::FloatType::new()),
        Datum::Float(-1.0),
        Datum::Float(1.0),
        Datum::Float(2.0),
        Datum::Float(f32::NAN),
    );
    assert_bitmap_floating_meta_policy(
        DataType::Double(crate::spec::DoubleType::new()),
        Datum::Double(-1.0),
        Datum::Double(1.0),
        Datum::Double(2.0),
        Datum::Double(f64::NAN),
    );
}

#[test]
fn test_row_range_index_merges_overlapping() {
    let idx = RowRangeIndex::create(vec![
        RowRange::new(0, 5),
        RowRange::new(3, 10),
        RowRange::new(20, 30),
    ]);
    assert_eq!(idx.ranges().len(), 2);
    assert_eq!(idx.ranges()[0], RowRange::new(0, 10));
    assert_eq!(idx.ranges()[1], RowRange::new(20, 30));
}

#[test]
fn test_row_range_index_merges_adjacent() {
    let idx = RowRangeIndex::create(vec![RowRange::new(0, 5), RowRange::new(6, 10)]);
    assert_eq!(idx.ranges().len(), 1);
    assert_eq!(idx.ranges()[0], RowRange::new(0, 10));
}

#[test]
fn test_row_range_index_intersects() {
    let idx = RowRangeIndex::create(vec![RowRange::new(10, 20), RowRange::new(30, 40)]);
    assert!(idx.intersects(15, 25));
    assert!(idx.intersects(5, 10));
    assert!(idx.intersects(20, 30));
    assert!(!idx.intersects(0, 9));
    assert!(!idx.intersects(21, 29));
    assert!(!idx.intersects(41, 50));
}

#[test]
fn test_row_range_index_intersected_ranges() {
    let idx = RowRangeIndex::create(vec![
        RowRange::new(10, 20),
        RowRange::new(30, 40),
        RowRange::new(50, 60),
    ]);
    let result = idx.intersected_ranges(15, 55);
    assert_eq!(
        result,
        vec![
            RowRange::new(15, 20),
            RowRange::new(30, 40),
            RowRange::new(50, 55),
        ]
    );
}

#[test]
fn test_row_range_index_intersection_row_count() {
    let idx = RowRangeIndex::create(vec![
        RowRange::new(10, 20),
        RowRange::new(30, 40),
        RowRange::new(50, 60),
    ]);

    assert_eq!(idx.intersection_row_count(15, 55), 23);
    assert_eq!(idx.intersection_row_count(21, 29), 0);
    assert_eq!(idx.intersection_row_count(55, 15), 0);
}

#[test]
fn test_search_limit_with_deleted_rows_expands_and_caps() {
    let idx = RowRangeIndex::create(vec![RowRange::new(2, 4), RowRange::new(8, 10)]);

    assert_eq!(search_limit_with_deleted_rows(5, 0, 19, Some(&idx)), 11);
    assert_eq!(search_limit_with_deleted_rows(18, 0, 19, Some(&idx)), 20);
    assert_eq!(search_limit_with_deleted_rows(5, 0, 19, None), 5);
}

#[test]
fn test_row_range_index_empty() {
    let idx = RowRangeIndex::create(Vec::new());
    assert!(!idx.intersects(0, 100));
    assert!(idx.intersected_ranges(0, 100).is_empty());
}

fn le_int_key(v: i32) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

/// Set up a temp dir with `index/{file_name}` containing the btree testdata file,
/// and return (FileIO, table_path, file_name, _tmp_dir).
fn setup_testdata_table(testdata_name: &str) -> (FileIO, String, String, tempfile::TempDir) {
    let src = format!(
        "{}/testdata/btree/{testdata_name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let tmp = tempfile::tempdir().unwrap();
    let index_dir = tmp.path().join("index");
    std::fs::create_dir_all(&index_dir).unwrap();
    std::fs::copy(&src, index_dir.join(testdata_name)).unwrap();

    let table_path = format!("file://{}", tmp.path().display());
    let file_io = crate::io::FileIOBuilder::new("file").build().unwrap();
    (file_io, table_path, testdata_name.to_string(), tmp)
}

type BitmapTestdataTable = (FileIO, String, String, BTreeIndexMeta, tempfile::TempDir);

fn setup_bitmap_testdata_table(file_name: &str) -> BitmapTestdataTable {
    let src = format!("{}/testdata/bitmap/{file_name}", env!("CARGO_MANIFEST_DIR"));
    let meta_src = format!(
        "{}/testdata/bitmap/{file_name}.meta",
        env!("CARGO_MANIFEST_DIR")
    );
    let tmp = tempfile::tempdir().unwrap();
    let index_dir = tmp.path().join("index");
    std::fs::create_dir_all(&index_dir).unwrap();
    std::fs::copy(&src, index_dir.join(file_name)).unwrap();
    let meta = BTreeIndexMeta::deserialize(&std::fs::read(meta_src).unwrap()).unwrap();

    let table_path = format!("file://{}", tmp.path().display());
    let file_io = crate::io::FileIOBuilder::new("file").build().unwrap();
    (file_io, table_path, file_name.to_string(), meta, tmp)
}

fn setup_java_bitmap_testdata_table() -> BitmapTestdataTable {
    setup_bitmap_testdata_table("bitmap_varchar_java.index")
}

fn make_global_index_entry(
    file_name: &str,
    field_id: i32,
    row_range_start: i64,
    row_range_end: i64,
    meta: &BTreeIndexMeta,
) -> crate::spec::IndexManifestEntry {
    make_global_index_entry_with_type(
        BTREE_GLOBAL_INDEX_TYPE,
        file_name,
        field_id,
        row_range_start,
        row_range_end,
        meta,
    )
}

fn make_global_index_entry_with_type(
    index_type: &str,
    file_name: &str,
    field_id: i32,
    row_range_start: i64,
    row_range_end: i64,
    meta: &BTreeIndexMeta,
) -> crate::spec::IndexManifestEntry {
    use crate::spec::{GlobalIndexMeta, IndexFileMeta};
    IndexManifestEntry {
        version: 1,
        kind: FileKind::Add,
        partition: vec![],
        bucket: 0,
        index_file: IndexFileMeta {
            index_type: index_type.to_string(),
            file_name: file_name.to_string(),
            file_size: 0,
            row_count: 0,
            deletion_vectors_ranges: None,
            external_path: None,
            global_index_meta: Some(GlobalIndexMeta {
                row_range_start,
                row_range_end,
                index_field_id: field_id,
                extra_field_ids: None,
                source_meta: None,
                index_meta: Some(meta.serialize()),
            }),
        },
    }
}

async fn make_fm_index_entry(
    file_name: &str,
    field_id: i32,
    row_range_start: i64,
    row_range_end: i64,
    first_row_id: u64,
    row_count: u64,
) -> IndexManifestEntry {
    let output = VecFileWrite::new();
    let mut writer = FMGlobalIndexWriter::new(
        Box::new(output.clone()),
        FMWriteOptions {
            compression: BlockCompressionType::None,
            ..FMWriteOptions::default()
        },
    )
    .unwrap();
    for row_id in first_row_id..first_row_id + row_count {
        writer.write(Some(b"value"), row_id).await.unwrap();
    }
    let result = writer.finish().await.unwrap();
    IndexManifestEntry {
        version: 1,
        kind: FileKind::Add,
        partition: vec![],
        bucket: 0,
        index_file: IndexFileMeta {
            index_type: FM_GLOBAL_INDEX_TYPE.to_string(),
            file_name: file_name.to_string(),
            file_size: output.to_vec().len() as i64,
            row_count: result.row_count as i64,
            deletion_vectors_ranges: None,
            external_path: None,
            global_index_meta: Some(crate::spec::GlobalIndexMeta {
                row_range_start,
                row_range_end,
                index_field_id: field_id,
                extra_field_ids: None,
                source_meta: None,
                index_meta: Some(result.index_meta),
            }),
        },
    }
}

#[tokio::test]
async fn test_fm_file_set_must_exactly_cover_source_range() {
    let file_io = crate::io::FileIOBuilder::new("memory").build().unwrap();
    let first = make_fm_index_entry("first.fm", 1, 10, 13, 0, 2).await;
    let error = match GlobalIndexScanner::create(
        &file_io,
        "memory:/table",
        1,
        i64::MAX,
        i64::MAX,
        std::slice::from_ref(&first),
        &string_schema_fields(),
    ) {
        Err(error) => error,
        Ok(_) => panic!("a partial Java FM file set must fail closed"),
    };
    assert!(
        matches!(error, Error::DataInvalid { message, .. } if message.contains("cover 2 rows, expected 4"))
    );

    let second = make_fm_index_entry("second.fm", 1, 10, 13, 2, 2).await;
    assert!(GlobalIndexScanner::create(
        &file_io,
        "memory:/table",
        1,
        i64::MAX,
        i64::MAX,
        &[first, second],
        &string_schema_fields(),
    )
    .unwrap()
    .is_some());
}

#[test]
fn test_mixed_fm_and_btree_select_compatible_index_family() {
    let btree = GlobalIndexEntry {
        file_name: "name.btree".to_string(),
        index_type: GlobalIndexFileKind::BTree,
        file_size: 1,
        row_count: 10,
        row_range_start: 0,
        row_range_end: 9,
        external_path: None,
        meta: GlobalIndexEntryMeta::Sorted(BTreeIndexMeta::new(None, None, false)),
    };
    let fm = GlobalIndexEntry {
        file_name: "name.fm".to_string(),
        index_type: GlobalIndexFileKind::FM,
        file_size: 1,
        row_count: 10,
        row_range_start: 0,
        row_range_end: 9,
        external_path: None,
        meta: GlobalIndexEntryMeta::FM {
            bytes: Vec::new(),
            first_row_id: 0,
            row_count: 10,
        },
    };
    let entries = [btree, fm];
    let data_type = DataType::VarChar(crate::spec::VarCharType::string_type());
    let literal = [Datum::String("needle".to_string())];

    let contains = [(PredicateOperator::Contains, literal.as_slice(), &data_type)];
    let selected = select_entries_for_predicates(&entries, &contains);
    assert_eq!(selected.len(), 1);
    assert_eq!(selected[0].index_type, GlobalIndexFileKind::FM);

    let equals = [(PredicateOperator::Eq, literal.as_slice(), &data_type)];
    let selected = select_entries_for_predicates(&entries, &equals);
    assert_eq!(selected.len(), 1);
    assert_eq!(selected[0].index_type, GlobalIndexFileKind::BTree);
}

fn int_schema_fields() -> Vec<DataField> {
    vec![DataField::new(
        1,
        "id".to_string(),
        DataType::Int(crate::spec::IntType::new()),
    )]
}

fn string_schema_fields() -> Vec<DataField> {
    vec![DataField::new(
        1,
        "name".to_string(),
        DataType::VarChar(crate::spec::VarCharType::string_type()),
    )]
}

async fn evaluate_global_index_fast(
    file_io: &FileIO,
    table_path: &str,
    entries: &[IndexManifestEntry],
    predicates: &[Predicate],
    fields: &[DataField],
) -> Result<Option<Vec<RowRange>>> {
    evaluate_global_index_fast_with_fallback_size(
        file_io,
        table_path,
        entries,
        predicates,
        fields,
        i64::MAX,
        i64::MAX,
    )
    .await
}

async fn evaluate_global_index_fast_with_fallback_size(
    file_io: &FileIO,
    table_path: &str,
    entries: &[IndexManifestEntry],
    predicates: &[Predicate],
    fields: &[DataField],
    btree_fallback_scan_max_size: i64,
    bitmap_fallback_scan_max_size: i64,
) -> Result<Option<Vec<RowRange>>> {
    super::evaluate_global_index(super::GlobalIndexEvaluation {
        file_io,
        table_path,
        index_entries: entries,
        predicates,
        schema_fields: fields,
        search_mode: GlobalIndexSearchMode::Fast,
        global_index_thread_num: 32,
        btree_fallback_scan_max_size,
        btree_data_block_cache_size: 128 * 1024 * 1024,
        bitmap_fallback_scan_max_size,
        fm_read_options: FMReadOptions::default(),
        next_row_id: None,
        data_ranges: &[],
    })
    .await
}

fn two_field_schema_fields() -> Vec<DataField> {
    vec![
        DataField::new(
            1,
            "id".to_string(),
            DataType::Int(crate::spec::IntType::new()),
        ),
        DataField::new(
            2,
            "value".to_string(),
            DataType::Int(crate::spec::IntType::new()),
        ),
    ]
}

fn int_eq(column: &str, index: usize, value: i32) -> Predicate {
    Predicate::Leaf {
        column: column.to_string(),
        index,
        data_type: DataType::Int(crate::spec::IntType::new()),
        op: PredicateOperator::Eq,
        literals: vec![Datum::Int(value)],
    }
}

#[tokio::test]
async fn test_btree_all_match_without_index_io() {
    let io = crate::io::FileIOBuilder::new("memory").build().unwrap();
    let fields = int_schema_fields();
    let meta = BTreeIndexMeta::new(
        Some(7i32.to_le_bytes().to_vec()),
        Some(7i32.to_le_bytes().to_vec()),
        false,
    );
    let mut entry = make_global_index_entry("not-created.index", 1, 100, 109, &meta);
    entry.index_file.row_count = 10;
    entry.index_file.file_size = i64::MAX;
    for (op, values) in [
        (PredicateOperator::Eq, vec![7]),
        (PredicateOperator::Lt, vec![8]),
        (PredicateOperator::LtEq, vec![7]),
        (PredicateOperator::Gt, vec![6]),
        (PredicateOperator::GtEq, vec![7]),
        (PredicateOperator::Between, vec![7, 7]),
    ] {
        let predicate = Predicate::Leaf {
            column: "id".into(),
            index: 0,
            data_type: fields[0].data_type().clone(),
            op,
            literals: values.into_iter().map(Datum::Int).collect(),
        };
        let ranges = evaluate_global_index_fast_with_fallback_size(
            &io,
            "memory:/absent",
            std::slice::from_ref(&entry),
            &[predicate],
            &fields,
            0,
            0,
        )
        .await
        .unwrap();
        assert_eq!(ranges, Some(vec![RowRange::new(100, 109)]), "{op}");
    }
    for ops in [
        vec![PredicateOperator::Lt],
        vec![PredicateOperator::Gt],
        vec![PredicateOperator::Eq, PredicateOperator::Gt],
    ] {
        let predicates = ops
            .into_iter()
            .map(|op| Predicate::Leaf {
                column: "id".into(),
                index: 0,
                data_type: fields[0].data_type().clone(),
                op,
                literals: vec![Datum::Int(7)],
            })
            .collect();
        assert_eq!(
            evaluate_global_index_fast(
                &io,
                "memory:/absent",
                std::slice::from_ref(&entry),
                &[Predicate::and(predicates)],
                &fields,
            )
            .await
            .unwrap(),
            Some(vec![])
        );
    }
    // Matching value bounds alone must not invent rows for incomplete/unknown coverage.
    for count in [-1, 0, 9, 11] {
        entry.index_file.row_count = count;
        assert!(evaluate_global_index_fast(
            &io,
            "memory:/absent",
            std::slice::from_ref(&entry),
            &[int_eq("id", 0, 7)],
            &fields
        )
        .await
        .is_err());
    }
}

#[tokio::test]
async fn test_all_match_does_not_hide_partial_shard_over_budget() {
    let (io, path, file, tmp) = setup_testdata_table("btree_int_100_no_compress.bin");
    let fields = int_schema_fields();
    let mut all = make_global_index_entry(
        "absent.index",
        1,
        100,
        199,
        &BTreeIndexMeta::new(Some(le_int_key(7)), Some(le_int_key(7)), false),
    );
    all.index_file.row_count = 100;
    all.index_file.file_size = i64::MAX;
    let mut partial = make_global_index_entry(
        &file,
        1,
        300,
        399,
        &BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false),
    );
    let size = std::fs::metadata(tmp.path().join("index").join(&file))
        .unwrap()
        .len() as i64;
    partial.index_file.file_size = size;
    partial.index_file.row_count = 100;
    let entries = vec![all, partial];
    for between in [false, true] {
        let mut predicates = vec![Predicate::Leaf {
            column: "id".into(),
            index: 0,
            data_type: fields[0].data_type().clone(),
            op: PredicateOperator::Lt,
            literals: vec![Datum::Int(11)],
        }];
        if between {
            predicates.push(Predicate::Leaf {
                column: "id".into(),
                index: 0,
                data_type: fields[0].data_type().clone(),
                op: PredicateOperator::Gt,
                literals: vec![Datum::Int(2)],
            });
        }
        for budget in [size, size - 1] {
            let actual = evaluate_global_index_fast_with_fallback_size(
                &io,
                &path,
                &entries,
                &[Predicate::and(predicates.clone())],
                &fields,
                budget,
                i64::MAX,
            )
            .await
            .unwrap();
            let expected = (budget == size).then(|| {
                vec![
                    RowRange::new(100, 199),
                    RowRange::new(if between { 302 } else { 300 }, 305),
                ]
            });
            assert_eq!(actual, expected, "between={between}, budget={budget}");
        }
    }
}

#[tokio::test]
async fn test_all_match_requires_every_key_shard() {
    let io = crate::io::FileIOBuilder::new("memory").build().unwrap();
    let path = "memory:/all_match_key_shards";
    let mut entries = Vec::new();
    for (key, rows) in [(7, 0..40), (9, 40..100)] {
        let name = format!("key-{key}.index");
        let buf = VecFileWrite::new();
        let mut writer =
            BTreeIndexWriter::new(Box::new(buf.clone()), 64, BlockCompressionType::None);
        for id in rows {
            writer.write(Some(&le_int_key(key)), id).await.unwrap();
        }
        let result = writer.finish().await.unwrap();
        io.new_output(&format!("{path}/index/{name}"))
            .unwrap()
            .write(bytes::Bytes::from(buf.to_vec()))
            .await
            .unwrap();
        let mut entry = make_global_index_entry(&name, 1, 100, 199, &result.meta);
        entry.index_file.row_count = result.row_count as i64;
        entries.push(entry);
    }
    assert_eq!(
        evaluate_global_index_fast(
            &io,
            path,
            &entries,
            &[int_eq("id", 0, 7)],
            &int_schema_fields()
        )
        .await
        .unwrap(),
        Some(vec![RowRange::new(100, 139)])
    );
}

#[tokio::test]
async fn test_btree_all_match_coverage_nulls_and_boolean_siblings() {
    let (io, path, file, _tmp) = setup_testdata_table("btree_int_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(le_int_key(7)), Some(le_int_key(7)), false);
    let mut all = make_global_index_entry("absent.index", 1, 100, 199, &meta);
    all.index_file.row_count = 100;
    let selective = make_global_index_entry(
        &file,
        2,
        100,
        199,
        &BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false),
    );
    let fields = two_field_schema_fields();
    let predicates = vec![int_eq("id", 0, 7), int_eq("value", 1, 18)];
    let entries = vec![all.clone(), selective];
    assert_eq!(
        evaluate_global_index_fast(
            &io,
            &path,
            &entries,
            &[Predicate::and(predicates.clone())],
            &fields
        )
        .await
        .unwrap(),
        Some(vec![RowRange::new(109, 109)])
    );
    assert_eq!(
        evaluate_global_index_fast(&io, &path, &entries, &[Predicate::or(predicates)], &fields)
            .await
            .unwrap(),
        Some(vec![RowRange::new(100, 199)])
    );

    for (mode, expected) in [
        (GlobalIndexSearchMode::Fast, vec![RowRange::new(100, 199)]),
        (GlobalIndexSearchMode::Full, vec![RowRange::new(0, 219)]),
        (GlobalIndexSearchMode::Detail, vec![RowRange::new(100, 209)]),
    ] {
        let actual = evaluate_global_index(GlobalIndexEvaluation {
            file_io: &io,
            table_path: &path,
            index_entries: std::slice::from_ref(&all),
            predicates: &[int_eq("id", 0, 7)],
            schema_fields: &fields,
            search_mode: mode,
            global_index_thread_num: 2,
            btree_fallback_scan_max_size: 0,
            btree_data_block_cache_size: 128 * 1024 * 1024,
            bitmap_fallback_scan_max_size: 0,
            fm_read_options: FMReadOptions::default(),
            next_row_id: Some(220),
            data_ranges: &[RowRange::new(100, 209)],
        })
        .await
        .unwrap();
        assert_eq!(actual, Some(expected));
    }

    // Two key-partitioned files share a source domain; neither alone is complete.
    let mut first = all.clone();
    first.index_file.row_count = 40;
    let mut second = all.clone();
    second.index_file.file_name = "also-absent.index".into();
    second.index_file.row_count = 60;
    assert_eq!(
        evaluate_global_index_fast(
            &io,
            &path,
            &[first.clone(), second.clone()],
            &[int_eq("id", 0, 7)],
            &fields
        )
        .await
        .unwrap(),
        Some(vec![RowRange::new(100, 199)])
    );
    assert!(
        evaluate_global_index_fast(&io, &path, &[first], &[int_eq("id", 0, 7)], &fields)
            .await
            .is_err()
    );
    let nullable = BTreeIndexMeta::new(Some(le_int_key(7)), Some(le_int_key(7)), true);
    all.index_file
        .global_index_meta
        .as_mut()
        .unwrap()
        .index_meta = Some(nullable.serialize());
    assert!(
        evaluate_global_index_fast(&io, &path, &[all], &[int_eq("id", 0, 7)], &fields)
            .await
            .is_err()
    );
}

#[tokio::test]
async fn test_bounded_range_all_endpoints_and_predicate_orders() {
    let (io, path, file, _tmp) = setup_testdata_table("btree_int_100_no_compress.bin");
    let fields = int_schema_fields();
    let entries = vec![make_global_index_entry(
        &file,
        1,
        100,
        199,
        &BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false),
    )];
    for (low, low_inclusive) in [
        (PredicateOperator::Gt, false),
        (PredicateOperator::GtEq, true),
    ] {
        for (high, high_inclusive) in [
            (PredicateOperator::Lt, false),
            (PredicateOperator::LtEq, true),
        ] {
            for (lower, upper) in [(30, 40), (30, 30), (40, 30)] {
                for reverse in [false, true] {
                    let mut predicates: Vec<_> = [(low, lower), (high, upper)]
                        .into_iter()
                        .map(|(op, v)| Predicate::Leaf {
                            column: "id".into(),
                            index: 0,
                            data_type: fields[0].data_type().clone(),
                            op,
                            literals: vec![Datum::Int(v)],
                        })
                        .collect();
                    if reverse {
                        predicates.reverse();
                    }
                    let actual = evaluate_global_index_fast(
                        &io,
                        &path,
                        &entries,
                        &[Predicate::and(predicates)],
                        &fields,
                    )
                    .await
                    .unwrap()
                    .unwrap();
                    let expected: Vec<_> = (0..100)
                        .filter(|id| {
                            let key = *id * 2;
                            (key > lower || low_inclusive && key == lower)
                                && (key < upper || high_inclusive && key == upper)
                        })
                        .map(|id| id as i64 + 100)
                        .collect();
                    let actual: Vec<_> = actual.iter().flat_map(|r| r.from()..=r.to()).collect();
                    assert_eq!(actual, expected);
                }
            }
        }
    }
}

#[tokio::test]
async fn test_btree_equality_skips_redundant_not_null() {
    let (io, path, file, tmp) = setup_testdata_table("btree_int_100_with_nulls.bin");
    let fields = two_field_schema_fields();
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), true);
    let data = std::fs::read(tmp.path().join("index").join(&file)).unwrap();
    let size = data.len() as u64;
    let reader = crate::btree::BTreeIndexReader::open(
        Box::new(crate::btree::test_util::BytesFileRead(data.into())),
        size,
        &meta,
        make_key_comparator(fields[0].data_type()),
    )
    .await
    .unwrap();
    let nulls = reader.null_bitmap().await.unwrap();
    let non_nulls = reader.all_non_null_rows().await.unwrap();
    let hits = reader.query_equal(&le_int_key(42)).await.unwrap();
    assert!(!nulls.is_empty());
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|id| !nulls.contains(id)));
    assert!(reader
        .query_equal(&le_int_key(43))
        .await
        .unwrap()
        .is_empty());
    let all_rows = nulls | &non_nulls;
    let count = all_rows.len() as i64;
    assert_eq!(all_rows.min(), Some(0));
    assert_eq!(all_rows.max(), Some(count as u64 - 1));
    let mut entry = make_global_index_entry(&file, 1, 0, count - 1, &meta);
    entry.index_file.file_size = size as i64;
    entry.index_file.row_count = count;
    let mut other = entry.clone();
    other
        .index_file
        .global_index_meta
        .as_mut()
        .unwrap()
        .index_field_id = 2;
    // Shift the second field's row mapping so the cross-field filter is observable.
    other
        .index_file
        .global_index_meta
        .as_mut()
        .unwrap()
        .row_range_start = count;
    other
        .index_file
        .global_index_meta
        .as_mut()
        .unwrap()
        .row_range_end = 2 * count - 1;
    let null_leaf = |column: &str, index, op| Predicate::Leaf {
        column: column.into(),
        index,
        data_type: fields[index].data_type().clone(),
        op,
        literals: vec![],
    };
    let not_null = null_leaf("id", 0, PredicateOperator::IsNotNull);
    let hit_ranges = bitmap_to_ranges(&hits);
    for (name, children, is_or, expected, queries) in [
        (
            "hit",
            vec![int_eq("id", 0, 42), not_null.clone()],
            false,
            hit_ranges.clone(),
            1,
        ),
        (
            "missing_key",
            vec![int_eq("id", 0, 43), not_null.clone()],
            false,
            vec![],
            1,
        ),
        (
            "outside_metadata",
            vec![int_eq("id", 0, 999), not_null.clone()],
            false,
            vec![],
            0,
        ),
        (
            "null_contradiction",
            vec![
                null_leaf("id", 0, PredicateOperator::IsNull),
                not_null.clone(),
            ],
            false,
            vec![],
            2,
        ),
        (
            "different_fields",
            vec![
                int_eq("id", 0, 42),
                null_leaf("value", 1, PredicateOperator::IsNotNull),
            ],
            false,
            vec![],
            2,
        ),
        (
            "or",
            vec![int_eq("id", 0, 42), not_null.clone()],
            true,
            bitmap_to_ranges(&non_nulls),
            2,
        ),
        (
            "equality_only",
            vec![int_eq("id", 0, 42)],
            false,
            hit_ranges.clone(),
            1,
        ),
        (
            "not_equal",
            vec![
                Predicate::Leaf {
                    column: "id".into(),
                    index: 0,
                    data_type: fields[0].data_type().clone(),
                    op: PredicateOperator::NotEq,
                    literals: vec![Datum::Int(42)],
                },
                not_null.clone(),
            ],
            false,
            bitmap_to_ranges(&(&non_nulls - &hits)),
            2,
        ),
    ] {
        for reverse in [false, true] {
            let mut children = children.clone();
            if reverse {
                children.reverse();
            }
            let predicate = if is_or {
                Predicate::Or(children)
            } else {
                Predicate::and(children)
            };
            let entries = [entry.clone(), other.clone()];
            let mut scanner =
                GlobalIndexScanner::create(&io, &path, 2, i64::MAX, i64::MAX, &entries, &fields)
                    .unwrap()
                    .unwrap();
            let probe = Arc::new(QueryIoProbe::default());
            scanner.query_io_probe = Some(probe.clone());
            let result = scanner.evaluate(&predicate).await.unwrap().unwrap();
            assert_eq!(result.row_ranges, expected, "{name}, reverse={reverse}");
            assert_eq!(
                probe.predicate_queries.load(TestOrdering::SeqCst),
                queries,
                "{name}, reverse={reverse}"
            );
            assert_eq!(probe.range_queries.load(TestOrdering::SeqCst), 0);
            if name != "different_fields" {
                assert_eq!(result.indexed_coverage, vec![RowRange::new(0, count - 1)]);
                assert_eq!(result.evaluated_field_ids, HashSet::from([1]));
            }
        }
    }

    for reverse in [false, true] {
        let mut children = vec![int_eq("id", 0, 42), not_null.clone()];
        if reverse {
            children.reverse();
        }
        let predicates = [Predicate::and(children)];
        let entries = [entry.clone()];
        let result = super::evaluate_global_index(super::GlobalIndexEvaluation {
            file_io: &io,
            table_path: &path,
            index_entries: &entries,
            predicates: &predicates,
            schema_fields: &fields,
            search_mode: GlobalIndexSearchMode::Full,
            global_index_thread_num: 2,
            btree_fallback_scan_max_size: i64::MAX,
            btree_data_block_cache_size: 0,
            bitmap_fallback_scan_max_size: i64::MAX,
            fm_read_options: FMReadOptions::default(),
            next_row_id: Some(count + 10),
            data_ranges: &[],
        })
        .await
        .unwrap()
        .unwrap();
        let mut expected = hit_ranges.clone();
        expected.push(RowRange::new(count, count + 9));
        assert_eq!(result, expected);
    }

    // Simulate INT -> BIGINT evolution against the unchanged INT index keys.
    let big_type = DataType::BigInt(crate::spec::BigIntType::new());
    let big_fields = [DataField::new(1, "id".into(), big_type.clone())];
    for reverse in [false, true] {
        let mut children = vec![
            Predicate::Leaf {
                column: "id".into(),
                index: 0,
                data_type: big_type.clone(),
                op: PredicateOperator::Eq,
                literals: vec![Datum::Long(42)],
            },
            Predicate::Leaf {
                column: "id".into(),
                index: 0,
                data_type: big_type.clone(),
                op: PredicateOperator::IsNotNull,
                literals: vec![],
            },
        ];
        if reverse {
            children.reverse();
        }
        let mut scanner = GlobalIndexScanner::create(
            &io,
            &path,
            2,
            i64::MAX,
            i64::MAX,
            std::slice::from_ref(&entry),
            &big_fields,
        )
        .unwrap()
        .unwrap();
        let probe = Arc::new(QueryIoProbe::default());
        scanner.query_io_probe = Some(probe.clone());
        assert!(scanner
            .evaluate(&Predicate::and(children))
            .await
            .unwrap()
            .is_none());
        assert_eq!(probe.predicate_queries.load(TestOrdering::SeqCst), 1);
    }
}

#[tokio::test]
async fn test_bitmap_equality_keeps_not_null_query() {
    let (io, path, file, meta, _tmp) = setup_java_bitmap_testdata_table();
    let fields = string_schema_fields();
    let entry =
        make_global_index_entry_with_type(BITMAP_GLOBAL_INDEX_TYPE, &file, 1, 100, 109, &meta);
    for reverse in [false, true] {
        let mut children = vec![
            Predicate::Leaf {
                column: "name".into(),
                index: 0,
                data_type: fields[0].data_type().clone(),
                op: PredicateOperator::Eq,
                literals: vec![Datum::String("k2".into())],
            },
            Predicate::Leaf {
                column: "name".into(),
                index: 0,
                data_type: fields[0].data_type().clone(),
                op: PredicateOperator::IsNotNull,
                literals: vec![],
            },
        ];
        if reverse {
            children.reverse();
        }
        let mut scanner = GlobalIndexScanner::create(
            &io,
            &path,
            2,
            i64::MAX,
            i64::MAX,
            std::slice::from_ref(&entry),
            &fields,
        )
        .unwrap()
        .unwrap();
        let probe = Arc::new(QueryIoProbe::default());
        scanner.query_io_probe = Some(probe.clone());
        let result = scanner
            .evaluate(&Predicate::and(children))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(result.row_ranges, vec![RowRange::new(105, 106)]);
        assert_eq!(result.indexed_coverage, vec![RowRange::new(100, 109)]);
        assert_eq!(probe.predicate_queries.load(TestOrdering::SeqCst), 2);
    }
}

#[tokio::test]
async fn test_scalar_optimization_query_counts() {
    let (io, path, file, _tmp) = setup_testdata_table("btree_int_100_no_compress.bin");
    let fields = int_schema_fields();
    let mut entry = make_global_index_entry(
        &file,
        1,
        100,
        199,
        &BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false),
    );
    entry.index_file.row_count = 100;
    let leaf = |op, value| Predicate::Leaf {
        column: "id".into(),
        index: 0,
        data_type: fields[0].data_type().clone(),
        op,
        literals: vec![Datum::Int(value)],
    };
    for (conditions, expected, query_counts) in [
        (
            vec![
                leaf(PredicateOperator::GtEq, 0),
                leaf(PredicateOperator::Eq, 50),
            ],
            vec![RowRange::new(125, 125)],
            (1, 0),
        ),
        (
            vec![
                leaf(PredicateOperator::GtEq, 10),
                leaf(PredicateOperator::LtEq, 180),
                leaf(PredicateOperator::Gt, 30),
                leaf(PredicateOperator::Lt, 40),
            ],
            vec![RowRange::new(116, 119)],
            (0, 1),
        ),
        (
            vec![
                leaf(PredicateOperator::Gt, 40),
                leaf(PredicateOperator::Lt, 30),
            ],
            vec![],
            (0, 0),
        ),
        (
            vec![
                leaf(PredicateOperator::Gt, 30),
                leaf(PredicateOperator::LtEq, 30),
            ],
            vec![],
            (0, 0),
        ),
    ] {
        for reverse in [false, true] {
            let mut conditions = conditions.clone();
            if reverse {
                conditions.reverse();
            }
            let mut scanner = GlobalIndexScanner::create(
                &io,
                &path,
                2,
                i64::MAX,
                i64::MAX,
                std::slice::from_ref(&entry),
                &fields,
            )
            .unwrap()
            .unwrap();
            let probe = Arc::new(QueryIoProbe::default());
            scanner.query_io_probe = Some(probe.clone());
            let result = scanner
                .evaluate(&Predicate::and(conditions))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(result.row_ranges, expected);
            assert_eq!(
                (
                    probe.predicate_queries.load(TestOrdering::SeqCst),
                    probe.range_queries.load(TestOrdering::SeqCst)
                ),
                query_counts
            );
            if query_counts == (0, 0) {
                assert_eq!(probe.peak(), 0);
            }
        }
    }
}

#[tokio::test]
async fn test_scalar_optimization_empty_range_never_opens_index() {
    let io = crate::io::FileIOBuilder::new("memory").build().unwrap();
    let fields = int_schema_fields();
    let entry = make_global_index_entry(
        "must-not-open.index",
        1,
        100,
        199,
        &BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false),
    );
    for (from, to) in [(40, 30), (30, 30)] {
        let predicates: Vec<_> = [(PredicateOperator::Gt, from), (PredicateOperator::LtEq, to)]
            .into_iter()
            .map(|(op, v)| Predicate::Leaf {
                column: "id".into(),
                index: 0,
                data_type: fields[0].data_type().clone(),
                op,
                literals: vec![Datum::Int(v)],
            })
            .collect();
        for (mode, expected) in [
            (GlobalIndexSearchMode::Fast, vec![]),
            (
                GlobalIndexSearchMode::Full,
                vec![RowRange::new(0, 99), RowRange::new(200, 219)],
            ),
            (GlobalIndexSearchMode::Detail, vec![RowRange::new(200, 209)]),
        ] {
            let actual = evaluate_global_index(GlobalIndexEvaluation {
                file_io: &io,
                table_path: "memory:/absent",
                index_entries: std::slice::from_ref(&entry),
                predicates: &[Predicate::and(predicates.clone())],
                schema_fields: &fields,
                search_mode: mode,
                global_index_thread_num: 2,
                btree_fallback_scan_max_size: 0,
                btree_data_block_cache_size: 128 * 1024 * 1024,
                bitmap_fallback_scan_max_size: 0,
                fm_read_options: FMReadOptions::default(),
                next_row_id: Some(220),
                data_ranges: &[RowRange::new(100, 209)],
            })
            .await
            .unwrap();
            assert_eq!(actual, Some(expected));
        }
    }
}

#[tokio::test]
async fn test_all_matching_conjunct_keeps_domain_when_other_conjunct_declines() {
    let io = crate::io::FileIOBuilder::new("memory").build().unwrap();
    let fields = string_schema_fields();
    let mut entry = make_global_index_entry(
        "must-not-open.index",
        1,
        100,
        109,
        &BTreeIndexMeta::new(Some(b"hit".to_vec()), Some(b"miss".to_vec()), false),
    );
    entry.index_file.row_count = 10;
    entry.index_file.file_size = 100;
    let predicates = [
        (PredicateOperator::Lt, "z"),
        (PredicateOperator::Contains, "hit"),
    ]
    .into_iter()
    .map(|(op, value)| Predicate::Leaf {
        column: "name".into(),
        index: 0,
        data_type: fields[0].data_type().clone(),
        op,
        literals: vec![Datum::String(value.into())],
    })
    .collect();
    let actual = evaluate_global_index_fast_with_fallback_size(
        &io,
        "memory:/absent",
        &[entry],
        &[Predicate::and(predicates)],
        &fields,
        0,
        0,
    )
    .await
    .unwrap();
    assert_eq!(
        actual,
        Some(vec![RowRange::new(100, 109)]),
        "retain candidates for residual filtering, not empty"
    );
}

#[test]
fn test_unindexed_ranges_fast_mode_empty() {
    let file_io = crate::io::FileIOBuilder::new("memory").build().unwrap();
    let meta = BTreeIndexMeta::new(None, None, false);
    let entries = vec![make_global_index_entry("idx", 1, 0, 49, &meta)];
    let fields = int_schema_fields();
    let scanner = GlobalIndexScanner::create(
        &file_io,
        "memory:/t",
        32,
        i64::MAX,
        i64::MAX,
        &entries,
        &fields,
    )
    .expect("create scanner")
    .expect("scanner");

    let ranges = scanner
        .unindexed_ranges(
            &int_eq("id", 0, 7),
            GlobalIndexSearchMode::Fast,
            Some(100),
            &[RowRange::new(50, 99)],
        )
        .unwrap();
    assert!(ranges.is_empty());
}

#[test]
fn test_unindexed_ranges_full_uses_snapshot_next_row_id() {
    let file_io = crate::io::FileIOBuilder::new("memory").build().unwrap();
    let meta = BTreeIndexMeta::new(None, None, false);
    let entries = vec![make_global_index_entry("idx", 1, 0, 49, &meta)];
    let fields = int_schema_fields();
    let scanner = GlobalIndexScanner::create(
        &file_io,
        "memory:/t",
        32,
        i64::MAX,
        i64::MAX,
        &entries,
        &fields,
    )
    .expect("create scanner")
    .expect("scanner");

    let ranges = scanner
        .unindexed_ranges(
            &int_eq("id", 0, 7),
            GlobalIndexSearchMode::Full,
            Some(100),
            &[],
        )
        .unwrap();
    assert_eq!(ranges, vec![RowRange::new(50, 99)]);
}

#[test]
fn test_unindexed_ranges_detail_uses_data_file_ranges() {
    let file_io = crate::io::FileIOBuilder::new("memory").build().unwrap();
    let meta = BTreeIndexMeta::new(None, None, false);
    let entries = vec![make_global_index_entry("idx", 1, 0, 49, &meta)];
    let fields = int_schema_fields();
    let scanner = GlobalIndexScanner::create(
        &file_io,
        "memory:/t",
        32,
        i64::MAX,
        i64::MAX,
        &entries,
        &fields,
    )
    .expect("create scanner")
    .expect("scanner");

    let ranges = scanner
        .unindexed_ranges(
            &int_eq("id", 0, 7),
            GlobalIndexSearchMode::Detail,
            Some(100),
            &[
                RowRange::new(0, 10),
                RowRange::new(40, 60),
                RowRange::new(80, 90),
            ],
        )
        .unwrap();
    assert_eq!(ranges, vec![RowRange::new(50, 60), RowRange::new(80, 90)]);
}

#[test]
fn test_unindexed_ranges_uses_all_predicate_field_coverage() {
    let file_io = crate::io::FileIOBuilder::new("memory").build().unwrap();
    let meta = BTreeIndexMeta::new(None, None, false);
    let entries = vec![
        make_global_index_entry("idx_id", 1, 0, 49, &meta),
        make_global_index_entry("idx_value", 2, 0, 99, &meta),
    ];
    let fields = two_field_schema_fields();
    let scanner = GlobalIndexScanner::create(
        &file_io,
        "memory:/t",
        32,
        i64::MAX,
        i64::MAX,
        &entries,
        &fields,
    )
    .expect("create scanner")
    .expect("scanner");
    let predicate = Predicate::and(vec![int_eq("id", 0, 7), int_eq("value", 1, 8)]);

    let ranges = scanner
        .unindexed_ranges(&predicate, GlobalIndexSearchMode::Full, Some(100), &[])
        .unwrap();
    assert_eq!(ranges, vec![RowRange::new(50, 99)]);
}

#[test]
fn test_unindexed_ranges_missing_field_coverage_reads_all_data_ranges() {
    let file_io = crate::io::FileIOBuilder::new("memory").build().unwrap();
    let meta = BTreeIndexMeta::new(None, None, false);
    let entries = vec![make_global_index_entry("idx_id", 1, 0, 49, &meta)];
    let fields = two_field_schema_fields();
    let scanner = GlobalIndexScanner::create(
        &file_io,
        "memory:/t",
        32,
        i64::MAX,
        i64::MAX,
        &entries,
        &fields,
    )
    .expect("create scanner")
    .expect("scanner");
    let predicate = Predicate::and(vec![int_eq("id", 0, 7), int_eq("value", 1, 8)]);

    let ranges = scanner
        .unindexed_ranges(&predicate, GlobalIndexSearchMode::Full, Some(100), &[])
        .unwrap();
    assert_eq!(ranges, vec![RowRange::new(0, 99)]);
}

#[test]
fn test_unindexed_ranges_counts_extra_field_coverage() {
    let file_io = crate::io::FileIOBuilder::new("memory").build().unwrap();
    let meta = BTreeIndexMeta::new(None, None, false);
    let mut entry = make_global_index_entry("idx_id_value", 1, 0, 99, &meta);
    entry
        .index_file
        .global_index_meta
        .as_mut()
        .unwrap()
        .extra_field_ids = Some(vec![2]);
    let fields = two_field_schema_fields();
    let scanner = GlobalIndexScanner::create(
        &file_io,
        "memory:/t",
        32,
        i64::MAX,
        i64::MAX,
        &[entry],
        &fields,
    )
    .expect("create scanner")
    .expect("scanner");

    let ranges = scanner
        .unindexed_ranges(
            &int_eq("value", 1, 8),
            GlobalIndexSearchMode::Full,
            Some(100),
            &[],
        )
        .unwrap();
    assert!(ranges.is_empty());
}

#[tokio::test]
async fn test_evaluate_composite_extra_field_only_without_left_prefix_falls_back() {
    let (file_io, table_path, file_name, _tmp) =
        setup_testdata_table("btree_int_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let mut entry = make_global_index_entry(&file_name, 1, 0, 99, &meta);
    entry
        .index_file
        .global_index_meta
        .as_mut()
        .unwrap()
        .extra_field_ids = Some(vec![2]);
    let fields = two_field_schema_fields();
    let predicates = vec![int_eq("value", 1, 50)];

    let result = evaluate_global_index_fast(&file_io, &table_path, &[entry], &predicates, &fields)
        .await
        .unwrap();
    assert!(
        result.is_none(),
        "extra-field-only predicates must fall back without a constrained left prefix"
    );
}

#[tokio::test]
async fn test_evaluate_global_index_eq() {
    let (file_io, table_path, file_name, tmp) =
        setup_testdata_table("btree_int_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let mut entry = make_global_index_entry(&file_name, 1, 0, 99, &meta);
    entry.index_file.file_size = std::fs::metadata(tmp.path().join("index").join(&file_name))
        .unwrap()
        .len() as i64;
    let entries = vec![entry];
    let fields = int_schema_fields();

    // key=50 -> row_id=25, offset by row_range_start=0 -> global row_id=25
    let predicates = vec![Predicate::Leaf {
        column: "id".to_string(),
        index: 0,
        data_type: DataType::Int(crate::spec::IntType::new()),
        op: PredicateOperator::Eq,
        literals: vec![Datum::Int(50)],
    }];

    let result = evaluate_global_index_fast(&file_io, &table_path, &entries, &predicates, &fields)
        .await
        .unwrap();
    let ranges = result.unwrap();
    assert_eq!(ranges, vec![RowRange::new(25, 25)]);
}

#[tokio::test]
async fn test_evaluate_btree_null_bitmap_and_deferred_crc_error() {
    let data_type = DataType::Int(crate::spec::IntType::new());
    for version in [1, 2] {
        for corrupt_crc in [false, true] {
            let buf = VecFileWrite::new();
            let mut writer = BTreeIndexWriter::with_comparator(
                Box::new(buf.clone()),
                256,
                BlockCompressionType::None,
                make_key_comparator(&data_type),
            )
            .with_file_version(version)
            .unwrap();
            writer.write(None, 0).await.unwrap();
            writer.write(Some(&le_int_key(1)), 1).await.unwrap();
            writer.write(Some(&le_int_key(2)), 2).await.unwrap();
            writer.write(None, 3).await.unwrap();
            let result = writer.finish().await.unwrap();
            let mut data = buf.to_vec();
            if corrupt_crc {
                let footer = BTreeFileFooter::read_footer(
                    &data[data.len() - BTreeFileFooter::ENCODED_LENGTH..],
                )
                .unwrap();
                let handle = footer.null_bitmap_handle.unwrap();
                data[handle.offset as usize + handle.size as usize] ^= 1;
            }
            let file_io = crate::io::FileIOBuilder::new("memory").build().unwrap();
            let table_path = "memory:/table";
            let file_name = "nullable.btree";
            let mut entry = make_global_index_entry(file_name, 1, 100, 103, &result.meta);
            entry.index_file.file_size = data.len() as i64;
            entry.index_file.row_count = result.row_count as i64;
            file_io
                .new_output(&format!("{table_path}/index/{file_name}"))
                .unwrap()
                .write(bytes::Bytes::from(data))
                .await
                .unwrap();
            let entries = [entry];
            let fields = int_schema_fields();

            for (op, literals, expected) in [
                (
                    PredicateOperator::Eq,
                    vec![Datum::Int(1)],
                    vec![RowRange::new(101, 101)],
                ),
                (
                    PredicateOperator::Between,
                    vec![Datum::Int(1), Datum::Int(2)],
                    vec![RowRange::new(101, 102)],
                ),
                (
                    PredicateOperator::IsNotNull,
                    vec![],
                    vec![RowRange::new(101, 102)],
                ),
            ] {
                let predicate = Predicate::Leaf {
                    column: "id".to_string(),
                    index: 0,
                    data_type: data_type.clone(),
                    op,
                    literals,
                };
                let rows = evaluate_global_index_fast(
                    &file_io,
                    table_path,
                    &entries,
                    &[predicate],
                    &fields,
                )
                .await
                .unwrap();
                assert_eq!(
                    rows,
                    Some(expected),
                    "{op:?}, V{version}, CRC={corrupt_crc}"
                );
            }

            let predicate = Predicate::Leaf {
                column: "id".to_string(),
                index: 0,
                data_type: data_type.clone(),
                op: PredicateOperator::IsNull,
                literals: vec![],
            };
            let rows =
                evaluate_global_index_fast(&file_io, table_path, &entries, &[predicate], &fields)
                    .await;
            if corrupt_crc {
                let error = rows.expect_err("a corrupt null bitmap must fail the IS NULL scan");
                let Error::DataInvalid {
                    message,
                    source: Some(source),
                } = error
                else {
                    panic!("expected a global index query error with its I/O source");
                };
                assert!(message.contains("Global index query failed"));
                assert!(message.contains(file_name));
                assert!(source.to_string().contains("Null bitmap CRC mismatch"));
            } else {
                assert_eq!(
                    rows.unwrap(),
                    Some(vec![RowRange::new(100, 100), RowRange::new(103, 103)]),
                );
            }
        }
    }
}

#[tokio::test]
async fn test_evaluate_global_index_uses_known_file_size() {
    let (file_io, table_path, file_name, _tmp) =
        setup_testdata_table("btree_int_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let mut entry = make_global_index_entry(&file_name, 1, 0, 99, &meta);
    entry.index_file.file_size = 1;

    let error = evaluate_global_index_fast(
        &file_io,
        &table_path,
        &[entry],
        &[int_eq("id", 0, 50)],
        &int_schema_fields(),
    )
    .await
    .expect_err("the known file size should be used without a metadata lookup");

    assert!(matches!(
        error,
        crate::Error::DataInvalid { message, .. }
            if message.contains("Failed to open BTree index file")
    ));
}

#[tokio::test]
async fn test_missing_index_meta_returns_error() {
    let (file_io, table_path, file_name, tmp) =
        setup_testdata_table("btree_int_100_no_compress.bin");
    let second_file_name = "btree_int_100_no_compress_2.bin";
    std::fs::copy(
        tmp.path().join("index").join(&file_name),
        tmp.path().join("index").join(second_file_name),
    )
    .unwrap();
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let valid_entry = make_global_index_entry(&file_name, 1, 0, 99, &meta);
    let mut invalid_entry = make_global_index_entry(second_file_name, 1, 100, 199, &meta);
    invalid_entry
        .index_file
        .global_index_meta
        .as_mut()
        .unwrap()
        .index_meta = None;

    let error = evaluate_global_index_fast(
        &file_io,
        &table_path,
        &[valid_entry, invalid_entry],
        &[int_eq("id", 0, 50)],
        &int_schema_fields(),
    )
    .await
    .expect_err("missing sorted index metadata must fail the scan");

    assert!(matches!(
        error,
        crate::Error::DataInvalid { message, .. }
            if message.contains(second_file_name)
    ));
}

#[tokio::test]
async fn test_invalid_index_meta_returns_error() {
    let (file_io, table_path, file_name, tmp) =
        setup_testdata_table("btree_int_100_no_compress.bin");
    let second_file_name = "btree_int_100_no_compress_2.bin";
    std::fs::copy(
        tmp.path().join("index").join(&file_name),
        tmp.path().join("index").join(second_file_name),
    )
    .unwrap();
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let valid_entry = make_global_index_entry(&file_name, 1, 0, 99, &meta);
    let mut invalid_entry = make_global_index_entry(second_file_name, 1, 100, 199, &meta);
    let mut invalid_meta = vec![0; 9];
    invalid_meta[..4].copy_from_slice(&10i32.to_le_bytes());
    invalid_entry
        .index_file
        .global_index_meta
        .as_mut()
        .unwrap()
        .index_meta = Some(invalid_meta);

    let error = evaluate_global_index_fast(
        &file_io,
        &table_path,
        &[valid_entry, invalid_entry],
        &[int_eq("id", 0, 50)],
        &int_schema_fields(),
    )
    .await
    .expect_err("invalid sorted index metadata must fail the scan");

    assert!(matches!(
        error,
        crate::Error::DataInvalid {
            message,
            source: Some(_),
        } if message.contains(second_file_name)
    ));
}

#[tokio::test]
async fn test_missing_global_index_meta_returns_error() {
    let (file_io, table_path, file_name, tmp) =
        setup_testdata_table("btree_int_100_no_compress.bin");
    let second_file_name = "btree_int_100_no_compress_2.bin";
    std::fs::copy(
        tmp.path().join("index").join(&file_name),
        tmp.path().join("index").join(second_file_name),
    )
    .unwrap();
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let valid_entry = make_global_index_entry(&file_name, 1, 0, 99, &meta);
    let mut invalid_entry = make_global_index_entry(second_file_name, 1, 100, 199, &meta);
    invalid_entry.index_file.global_index_meta = None;

    let error = evaluate_global_index_fast(
        &file_io,
        &table_path,
        &[valid_entry, invalid_entry],
        &[int_eq("id", 0, 50)],
        &int_schema_fields(),
    )
    .await
    .expect_err("missing global index metadata must fail the scan");

    assert!(matches!(
        error,
        crate::Error::DataInvalid { message, .. }
            if message.contains(second_file_name)
    ));
}

#[tokio::test]
async fn test_evaluate_java_bitmap_golden_index_eq_and_null() {
    let data_type = DataType::VarChar(crate::spec::VarCharType::string_type());
    let (file_io, table_path, file_name, meta, tmp) = setup_java_bitmap_testdata_table();
    let mut entry =
        make_global_index_entry_with_type(BITMAP_GLOBAL_INDEX_TYPE, &file_name, 1, 100, 109, &meta);
    entry.index_file.file_size = std::fs::metadata(tmp.path().join("index").join(&file_name))
        .unwrap()
        .len() as i64;
    let entries = vec![entry];
    let fields = string_schema_fields();
    assert_eq!(meta.first_key, Some(b"alpha".to_vec()));
    assert_eq!(meta.last_key, Some(b"office".to_vec()));
    assert!(meta.has_nulls);

    let eq_predicates = vec![Predicate::Leaf {
        column: "name".to_string(),
        index: 0,
        data_type: data_type.clone(),
        op: PredicateOperator::Eq,
        literals: vec![Datum::String("k2".to_string())],
    }];
    let eq_result =
        evaluate_global_index_fast(&file_io, &table_path, &entries, &eq_predicates, &fields)
            .await
            .unwrap();
    assert_eq!(eq_result.unwrap(), vec![RowRange::new(105, 106)]);

    let null_predicates = vec![Predicate::Leaf {
        column: "name".to_string(),
        index: 0,
        data_type,
        op: PredicateOperator::IsNull,
        literals: vec![],
    }];
    let null_result =
        evaluate_global_index_fast(&file_io, &table_path, &entries, &null_predicates, &fields)
            .await
            .unwrap();
    assert_eq!(null_result.unwrap(), vec![RowRange::new(104, 104)]);
}

#[tokio::test]
async fn test_composite_prefers_fully_covering_leading_bitmap() {
    let (file_io, table_path, file_name, meta, _tmp) = setup_java_bitmap_testdata_table();
    let mut fields = string_schema_fields();
    fields.push(DataField::new(
        2,
        "id".into(),
        DataType::Int(crate::spec::IntType::new()),
    ));
    let key = |name: &str, id| {
        crate::btree::serialize_composite_key(
            &[Some(Datum::String(name.into())), Some(Datum::Int(id))],
            &fields,
        )
        .unwrap()
    };
    let composite_meta = BTreeIndexMeta::new(Some(key("alpha", 0)), Some(key("office", 9)), false);
    let mut composite =
        make_global_index_entry("missing_composite.btree", 1, 100, 109, &composite_meta);
    composite
        .index_file
        .global_index_meta
        .as_mut()
        .unwrap()
        .extra_field_ids = Some(vec![2]);
    let bitmap =
        make_global_index_entry_with_type(BITMAP_GLOBAL_INDEX_TYPE, &file_name, 1, 100, 109, &meta);
    let predicates = [Predicate::Leaf {
        column: "name".into(),
        index: 0,
        data_type: fields[0].data_type().clone(),
        op: PredicateOperator::Eq,
        literals: vec![Datum::String("k2".into())],
    }];
    let result = evaluate_global_index_fast(
        &file_io,
        &table_path,
        &[composite, bitmap],
        &predicates,
        &fields,
    )
    .await
    .unwrap();
    assert_eq!(result.unwrap(), vec![RowRange::new(105, 106)]);
}

async fn assert_bitmap_int_fixture(file_name: &str) {
    let data_type = DataType::Int(crate::spec::IntType::new());
    let (file_io, table_path, file_name, meta, _tmp) = setup_bitmap_testdata_table(file_name);
    let entries = vec![make_global_index_entry_with_type(
        BITMAP_GLOBAL_INDEX_TYPE,
        &file_name,
        1,
        100,
        105,
        &meta,
    )];
    let fields = int_schema_fields();
    assert_eq!(meta.first_key, Some(le_int_key(-1)));
    assert_eq!(meta.last_key, Some(le_int_key(256)));
    assert!(meta.has_nulls);

    let cases = [
        (
            PredicateOperator::Eq,
            vec![Datum::Int(0)],
            vec![RowRange::new(101, 102)],
        ),
        (
            PredicateOperator::Eq,
            vec![Datum::Int(256)],
            vec![RowRange::new(104, 104)],
        ),
        (
            PredicateOperator::In,
            vec![Datum::Int(-1), Datum::Int(1), Datum::Int(256)],
            vec![RowRange::new(100, 100), RowRange::new(103, 104)],
        ),
        (
            PredicateOperator::NotEq,
            vec![Datum::Int(0)],
            vec![RowRange::new(100, 100), RowRange::new(103, 104)],
        ),
        (
            PredicateOperator::NotIn,
            vec![Datum::Int(-1), Datum::Int(1), Datum::Int(256)],
            vec![RowRange::new(101, 102)],
        ),
        (
            PredicateOperator::IsNull,
            vec![],
            vec![RowRange::new(105, 105)],
        ),
    ];

    for (op, literals, expected) in cases {
        let predicates = vec![Predicate::Leaf {
            column: "id".to_string(),
            index: 0,
            data_type: data_type.clone(),
            op,
            literals,
        }];
        let result =
            evaluate_global_index_fast(&file_io, &table_path, &entries, &predicates, &fields)
                .await
                .unwrap()
                .unwrap();
        assert_eq!(result, expected, "{file_name}: {op}");
    }
}

#[tokio::test]
async fn test_evaluate_java_logical_order_bitmap_int_fixture() {
    assert_bitmap_int_fixture("bitmap_int_logical_java.index").await;
}

async fn assert_bitmap_nan_equality_uses_direct_lookup(
    data_type: DataType,
    nan_literals: [Datum; 3],
    zero: Datum,
) {
    let output = VecFileWrite::new();
    let captured = output.clone();
    let mut writer = BitmapGlobalIndexWriter::new(
        Box::new(output),
        1,
        BlockCompressionType::None,
        make_bitmap_key_comparator(&data_type),
    );
    for (row_id, literal) in nan_literals.iter().enumerate() {
        let key = serialize_bitmap_datum(literal, &data_type);
        writer.write(Some(&key), row_id as i64).unwrap();
    }
    let zero_key = serialize_bitmap_datum(&zero, &data_type);
    writer.write(Some(&zero_key), 3).unwrap();
    let write_result = writer.finish().await.unwrap();
    let bytes = captured.to_vec();

    let tmp = tempfile::tempdir().unwrap();
    let index_dir = tmp.path().join("index");
    std::fs::create_dir_all(&index_dir).unwrap();
    let file_name = "bitmap-current.index";
    std::fs::write(index_dir.join(file_name), &bytes).unwrap();
    let table_path = format!("file://{}", tmp.path().display());
    let file_io = crate::io::FileIOBuilder::new("file").build().unwrap();

    let mut entry = make_global_index_entry_with_type(
        BITMAP_GLOBAL_INDEX_TYPE,
        file_name,
        1,
        100,
        103,
        &write_result.meta,
    );
    entry.index_file.file_size = bytes.len() as i64;
    let entries = vec![entry];
    let fields = vec![DataField::new(1, "id".to_string(), data_type.clone())];
    let cases = [
        (PredicateOperator::Eq, vec![nan_literals[0].clone()]),
        (
            PredicateOperator::In,
            vec![nan_literals[1].clone(), nan_literals[2].clone()],
        ),
    ];

    for (op, literals) in cases {
        let predicates = vec![Predicate::Leaf {
            column: "id".to_string(),
            index: 0,
            data_type: data_type.clone(),
            op,
            literals,
        }];
        let result = evaluate_global_index_fast_with_fallback_size(
            &file_io,
            &table_path,
            &entries,
            &predicates,
            &fields,
            i64::MAX,
            0,
        )
        .await
        .unwrap()
        .unwrap();
        assert_eq!(result, vec![RowRange::new(100, 102)], "{data_type:?}: {op}");
    }
}

#[tokio::test]
async fn test_bitmap_nan_equality_uses_direct_lookup_with_fallback_scan_disabled() {
    assert_bitmap_nan_equality_uses_direct_lookup(
        DataType::Float(crate::spec::FloatType::new()),
        [
            Datum::Float(f32::from_bits(0xffc0_0001)),
            Datum::Float(f32::from_bits(0x7fc0_0010)),
            Datum::Float(f32::NAN),
        ],
        Datum::Float(0.0),
    )
    .await;
    assert_bitmap_nan_equality_uses_direct_lookup(
        DataType::Double(crate::spec::DoubleType::new()),
        [
            Datum::Double(f64::from_bits(0xfff8_0000_0000_0001)),
            Datum::Double(f64::from_bits(0x7ff8_0000_0000_0010)),
            Datum::Double(f64::NAN),
        ],
        Datum::Double(0.0),
    )
    .await;
}

#[tokio::test]
async fn test_bitmap_floating_bound_fusion_preserves_candidates_and_fallback() {
    for (ty, low, high, zero, minus_one) in [
        (
            DataType::Float(crate::spec::FloatType::new()),
            Datum::Float(f32::from_bits(0xffc0_0001)),
            Datum::Float(f32::from_bits(0x7fc0_0001)),
            Datum::Float(0.0),
            Datum::Float(-1.0),
        ),
        (
            DataType::Double(crate::spec::DoubleType::new()),
            Datum::Double(f64::from_bits(0xfff8_0000_0000_0001)),
            Datum::Double(f64::from_bits(0x7ff8_0000_0000_0001)),
            Datum::Double(0.0),
            Datum::Double(-1.0),
        ),
    ] {
        let output = VecFileWrite::new();
        let mut writer = BitmapGlobalIndexWriter::new(
            Box::new(output.clone()),
            1,
            BlockCompressionType::None,
            make_bitmap_key_comparator(&ty),
        );
        writer
            .write(Some(&serialize_bitmap_datum(&zero, &ty)), 0)
            .unwrap();
        writer.write(None, 1).unwrap();
        let result = writer.finish().await.unwrap();
        let bytes = output.to_vec();
        let io = crate::io::FileIOBuilder::new("memory").build().unwrap();
        let path = "memory:/bitmap_bound_fusion";
        io.new_output(&format!("{path}/index/bitmap.index"))
            .unwrap()
            .write(bytes::Bytes::from(bytes.clone()))
            .await
            .unwrap();
        let mut entry = make_global_index_entry_with_type(
            BITMAP_GLOBAL_INDEX_TYPE,
            "bitmap.index",
            1,
            100,
            101,
            &result.meta,
        );
        entry.index_file.file_size = bytes.len() as i64;
        let fields = vec![DataField::new(1, "id".into(), ty.clone())];
        let leaf = |op, value: Datum| Predicate::Leaf {
            column: "id".into(),
            index: 0,
            data_type: ty.clone(),
            op,
            literals: vec![value],
        };
        for extra_bound in [false, true] {
            for reverse in [false, true] {
                let mut conditions = vec![
                    leaf(PredicateOperator::Gt, low.clone()),
                    leaf(PredicateOperator::Lt, high.clone()),
                ];
                if extra_bound {
                    conditions.push(leaf(PredicateOperator::Gt, minus_one.clone()));
                }
                if reverse {
                    conditions.reverse();
                }
                for budget in [i64::MAX, 0] {
                    let actual = evaluate_global_index_fast_with_fallback_size(
                        &io,
                        path,
                        std::slice::from_ref(&entry),
                        &[Predicate::and(conditions.clone())],
                        &fields,
                        0,
                        budget,
                    )
                    .await
                    .unwrap();
                    assert_eq!(
                        actual,
                        if budget == 0 {
                            None
                        } else {
                            Some(vec![RowRange::new(100, 100)])
                        }
                    );
                }
            }
        }
    }
}

fn legacy_floating_comparator(data_type: &DataType) -> BoxedCmp {
    match data_type {
        DataType::Float(_) => Box::new(|left, right| {
            let left = f32::from_le_bytes(left.try_into().unwrap());
            let right = f32::from_le_bytes(right.try_into().unwrap());
            Ok(left.total_cmp(&right))
        }),
        DataType::Double(_) => Box::new(|left, right| {
            let left = f64::from_le_bytes(left.try_into().unwrap());
            let right = f64::from_le_bytes(right.try_into().unwrap());
            Ok(left.total_cmp(&right))
        }),
        _ => unreachable!("legacy floating comparator requires Float or Double"),
    }
}

async fn assert_legacy_floating_btree(
    file_name: &str,
    data_type: DataType,
    nan_keys: Vec<Vec<u8>>,
    nan_literals: Vec<Datum>,
    zero_key: Vec<u8>,
    zero_literal: Datum,
) {
    let mut rows = nan_keys
        .into_iter()
        .enumerate()
        .map(|(row_id, key)| (key, row_id as i64))
        .collect::<Vec<_>>();
    rows.push((zero_key, 3));
    let cmp = legacy_floating_comparator(&data_type);
    rows.sort_by(|left, right| cmp(&left.0, &right.0).unwrap());
    let expected_first_key = rows.first().unwrap().0.clone();
    let expected_last_key = rows.last().unwrap().0.clone();

    let output = VecFileWrite::new();
    let captured = output.clone();
    let mut writer =
        BTreeIndexWriter::with_comparator(Box::new(output), 1, BlockCompressionType::None, cmp);
    for (key, row_id) in rows {
        writer.write(Some(&key), row_id).await.unwrap();
    }
    let write_result = writer.finish().await.unwrap();
    assert_eq!(write_result.meta.first_key, Some(expected_first_key));
    assert_eq!(write_result.meta.last_key, Some(expected_last_key));

    let tmp = tempfile::tempdir().unwrap();
    let index_dir = tmp.path().join("index");
    std::fs::create_dir_all(&index_dir).unwrap();
    std::fs::write(index_dir.join(file_name), captured.to_vec()).unwrap();
    let table_path = format!("file://{}", tmp.path().display());
    let file_io = crate::io::FileIOBuilder::new("file").build().unwrap();
    let entries = vec![make_global_index_entry(
        file_name,
        1,
        100,
        103,
        &write_result.meta,
    )];
    let fields = vec![DataField::new(1, "id".to_string(), data_type.clone())];
    let cases = [
        (
            PredicateOperator::Eq,
            vec![zero_literal.clone()],
            vec![RowRange::new(103, 103)],
        ),
        (
            PredicateOperator::Eq,
            vec![nan_literals[0].clone()],
            vec![RowRange::new(100, 100)],
        ),
        (
            PredicateOperator::In,
            vec![
                nan_literals[0].clone(),
                nan_literals[1].clone(),
                zero_literal,
            ],
            vec![RowRange::new(100, 101), RowRange::new(103, 103)],
        ),
    ];

    for (op, literals, expected) in cases {
        let predicates = vec![Predicate::Leaf {
            column: "id".to_string(),
            index: 0,
            data_type: data_type.clone(),
            op,
            literals,
        }];
        let result =
            evaluate_global_index_fast(&file_io, &table_path, &entries, &predicates, &fields)
                .await
                .unwrap()
                .unwrap();
        assert_eq!(result, expected, "{file_name}: {op}");
    }
}

#[tokio::test]
async fn test_evaluate_legacy_float_btree() {
    let nan_bits = [0xffc0_0001u32, 0xffc0_0010, 0xffff_1234];
    assert_legacy_floating_btree(
        "btree_float_legacy_rust.index",
        DataType::Float(crate::spec::FloatType::new()),
        nan_bits
            .iter()
            .map(|bits| bits.to_le_bytes().to_vec())
            .collect(),
        nan_bits
            .iter()
            .map(|bits| Datum::Float(f32::from_bits(*bits)))
            .collect(),
        0.0f32.to_le_bytes().to_vec(),
        Datum::Float(0.0),
    )
    .await;
}

#[tokio::test]
async fn test_evaluate_legacy_double_btree() {
    let nan_bits = [
        0xfff8_0000_0000_0001u64,
        0xfff8_0000_0000_0010,
        0xffff_1234_5678_9abc,
    ];
    assert_legacy_floating_btree(
        "btree_double_legacy_rust.index",
        DataType::Double(crate::spec::DoubleType::new()),
        nan_bits
            .iter()
            .map(|bits| bits.to_le_bytes().to_vec())
            .collect(),
        nan_bits
            .iter()
            .map(|bits| Datum::Double(f64::from_bits(*bits)))
            .collect(),
        0.0f64.to_le_bytes().to_vec(),
        Datum::Double(0.0),
    )
    .await;
}

#[tokio::test]
async fn test_evaluate_java_bitmap_golden_index_string_fallback_scan() {
    let data_type = DataType::VarChar(crate::spec::VarCharType::string_type());
    let (file_io, table_path, file_name, meta, tmp) = setup_java_bitmap_testdata_table();
    let file_size = std::fs::metadata(tmp.path().join("index").join(&file_name))
        .unwrap()
        .len() as i64;
    let mut entry =
        make_global_index_entry_with_type(BITMAP_GLOBAL_INDEX_TYPE, &file_name, 1, 100, 109, &meta);
    entry.index_file.file_size = file_size;
    let entries = vec![entry];
    let fields = string_schema_fields();

    let ends_with_predicates = vec![Predicate::Leaf {
        column: "name".to_string(),
        index: 0,
        data_type: data_type.clone(),
        op: PredicateOperator::EndsWith,
        literals: vec![Datum::String("ta".to_string())],
    }];
    let ends_with_result = evaluate_global_index_fast(
        &file_io,
        &table_path,
        &entries,
        &ends_with_predicates,
        &fields,
    )
    .await
    .unwrap();
    assert_eq!(
        ends_with_result.unwrap(),
        vec![RowRange::new(101, 101), RowRange::new(103, 103)]
    );

    let contains_predicates = vec![Predicate::Leaf {
        column: "name".to_string(),
        index: 0,
        data_type: data_type.clone(),
        op: PredicateOperator::Contains,
        literals: vec![Datum::String("ph".to_string())],
    }];
    let contains_result = evaluate_global_index_fast(
        &file_io,
        &table_path,
        &entries,
        &contains_predicates,
        &fields,
    )
    .await
    .unwrap();
    assert_eq!(
        contains_result.unwrap(),
        vec![RowRange::new(100, 100), RowRange::new(102, 102)]
    );

    let like_predicates = vec![Predicate::Leaf {
        column: "name".to_string(),
        index: 0,
        data_type: data_type.clone(),
        op: PredicateOperator::Like,
        literals: vec![Datum::String("%ha%".to_string())],
    }];
    let like_result =
        evaluate_global_index_fast(&file_io, &table_path, &entries, &like_predicates, &fields)
            .await
            .unwrap();
    assert_eq!(
        like_result.unwrap(),
        vec![RowRange::new(100, 100), RowRange::new(102, 102)]
    );

    let less_than_predicates = vec![Predicate::Leaf {
        column: "name".to_string(),
        index: 0,
        data_type: data_type.clone(),
        op: PredicateOperator::Lt,
        literals: vec![Datum::String("delta".to_string())],
    }];
    let less_than_result = evaluate_global_index_fast(
        &file_io,
        &table_path,
        &entries,
        &less_than_predicates,
        &fields,
    )
    .await
    .unwrap();
    assert_eq!(less_than_result.unwrap(), vec![RowRange::new(100, 102)]);

    let mut over_limit_entry =
        make_global_index_entry_with_type(BITMAP_GLOBAL_INDEX_TYPE, &file_name, 1, 100, 109, &meta);
    over_limit_entry.index_file.file_size = file_size;
    let over_limit_entries = vec![over_limit_entry];
    let over_limit_less_than = evaluate_global_index_fast_with_fallback_size(
        &file_io,
        &table_path,
        &over_limit_entries,
        &less_than_predicates,
        &fields,
        i64::MAX,
        file_size - 1,
    )
    .await
    .unwrap();
    assert!(
        over_limit_less_than.is_none(),
        "range predicates require fallback dictionary scans and should be unsupported over budget"
    );

    let no_match_contains = vec![Predicate::Leaf {
        column: "name".to_string(),
        index: 0,
        data_type: data_type.clone(),
        op: PredicateOperator::Contains,
        literals: vec![Datum::String("zz".to_string())],
    }];
    let over_limit_result = evaluate_global_index_fast_with_fallback_size(
        &file_io,
        &table_path,
        &over_limit_entries,
        &no_match_contains,
        &fields,
        i64::MAX,
        file_size - 1,
    )
    .await
    .unwrap();
    assert!(
        over_limit_result.is_none(),
        "fallback scans over budget should be unsupported instead of returning full coverage"
    );

    let direct_with_over_limit_fallback = vec![Predicate::and(vec![
        Predicate::Leaf {
            column: "name".to_string(),
            index: 0,
            data_type: data_type.clone(),
            op: PredicateOperator::Eq,
            literals: vec![Datum::String("k2".to_string())],
        },
        Predicate::Leaf {
            column: "name".to_string(),
            index: 0,
            data_type,
            op: PredicateOperator::Contains,
            literals: vec![Datum::String("zz".to_string())],
        },
    ])];
    let direct_result = evaluate_global_index_fast_with_fallback_size(
        &file_io,
        &table_path,
        &over_limit_entries,
        &direct_with_over_limit_fallback,
        &fields,
        i64::MAX,
        file_size - 1,
    )
    .await
    .unwrap();
    assert_eq!(direct_result.unwrap(), vec![RowRange::new(105, 106)]);
}

#[tokio::test]
async fn test_btree_fallback_scan_over_limit_is_unsupported() {
    let (file_io, table_path, file_name, tmp) =
        setup_testdata_table("btree_varchar_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(b"a".to_vec()), Some(b"yyyy".to_vec()), false);
    let fields = string_schema_fields();
    let data_type = DataType::VarChar(crate::spec::VarCharType::string_type());
    let predicates = vec![Predicate::Leaf {
        column: "name".to_string(),
        index: 0,
        data_type,
        op: PredicateOperator::Contains,
        literals: vec![Datum::String("not-present".to_string())],
    }];

    let entries = vec![make_global_index_entry(&file_name, 1, 0, 99, &meta)];
    let exact_result = evaluate_global_index_fast_with_fallback_size(
        &file_io,
        &table_path,
        &entries,
        &predicates,
        &fields,
        i64::MAX,
        i64::MAX,
    )
    .await
    .unwrap();
    assert_eq!(exact_result.unwrap(), Vec::<RowRange>::new());

    let mut over_limit_entries = vec![make_global_index_entry(&file_name, 1, 0, 99, &meta)];
    over_limit_entries[0].index_file.file_size = 2;
    let over_limit_result = evaluate_global_index_fast_with_fallback_size(
        &file_io,
        &table_path,
        &over_limit_entries,
        &predicates,
        &fields,
        1,
        i64::MAX,
    )
    .await
    .unwrap();
    assert!(
        over_limit_result.is_none(),
        "fallback scans over budget should be unsupported instead of returning full coverage"
    );

    let second_file_name = "btree_varchar_100_no_compress_2.bin";
    std::fs::copy(
        tmp.path().join("index").join(&file_name),
        tmp.path().join("index").join(second_file_name),
    )
    .unwrap();
    let mut first = make_global_index_entry(&file_name, 1, 0, 99, &meta);
    first.index_file.file_size = 1;
    let mut second = make_global_index_entry(second_file_name, 1, 100, 199, &meta);
    second.index_file.file_size = 1;
    let total_over_limit_result = evaluate_global_index_fast_with_fallback_size(
        &file_io,
        &table_path,
        &[first, second],
        &predicates,
        &fields,
        1,
        i64::MAX,
    )
    .await
    .unwrap();
    assert!(
        total_over_limit_result.is_none(),
        "fallback budget should use selected files' total size, not per-file size"
    );
}

#[tokio::test]
async fn test_fallback_scan_over_limit_with_mixed_index_kinds_is_unsupported() {
    let (file_io, table_path, file_name, _tmp) =
        setup_testdata_table("btree_varchar_100_no_compress.bin");
    let btree_meta = BTreeIndexMeta::new(Some(b"a".to_vec()), Some(b"yyyy".to_vec()), false);
    let bitmap_meta = BTreeIndexMeta::new(Some(b"m".to_vec()), Some(b"z".to_vec()), false);
    let fields = string_schema_fields();
    let predicates = vec![Predicate::Leaf {
        column: "name".to_string(),
        index: 0,
        data_type: DataType::VarChar(crate::spec::VarCharType::string_type()),
        op: PredicateOperator::Lt,
        literals: vec![Datum::String("delta".to_string())],
    }];

    let mut btree = make_global_index_entry_with_type(
        BTREE_GLOBAL_INDEX_TYPE,
        &file_name,
        1,
        0,
        99,
        &btree_meta,
    );
    btree.index_file.file_size = 2;
    let mut bitmap = make_global_index_entry_with_type(
        BITMAP_GLOBAL_INDEX_TYPE,
        "bitmap-no-match.index",
        1,
        100,
        199,
        &bitmap_meta,
    );
    bitmap.index_file.file_size = 1;

    let result = evaluate_global_index_fast_with_fallback_size(
        &file_io,
        &table_path,
        &[btree, bitmap],
        &predicates,
        &fields,
        1,
        i64::MAX,
    )
    .await
    .unwrap();
    assert!(
            result.is_none(),
            "an over-budget selected BTree file must stay unsupported even if bitmap files are pruned by metadata"
        );
}

#[tokio::test]
async fn test_fallback_preflight_happens_before_shard_io() {
    let file_io = crate::io::FileIOBuilder::new("memory").build().unwrap();
    let table_path = "memory:/missing-index-files";
    let meta = BTreeIndexMeta::new(Some(b"a".to_vec()), Some(b"z".to_vec()), false);
    let fields = string_schema_fields();
    let predicates = vec![Predicate::Leaf {
        column: "name".to_string(),
        index: 0,
        data_type: DataType::VarChar(crate::spec::VarCharType::string_type()),
        op: PredicateOperator::Contains,
        literals: vec![Datum::String("middle".to_string())],
    }];

    let mut btree = make_global_index_entry_with_type(
        BTREE_GLOBAL_INDEX_TYPE,
        "missing-btree.index",
        1,
        0,
        99,
        &meta,
    );
    btree.index_file.file_size = 1;
    let mut bitmap = make_global_index_entry_with_type(
        BITMAP_GLOBAL_INDEX_TYPE,
        "missing-bitmap.index",
        1,
        100,
        199,
        &meta,
    );
    bitmap.index_file.file_size = 1;

    let result = evaluate_global_index_fast_with_fallback_size(
        &file_io,
        table_path,
        &[btree, bitmap],
        &predicates,
        &fields,
        1,
        0,
    )
    .await
    .expect("fallback must be decided before opening an earlier shard");

    assert!(result.is_none());
}

#[tokio::test]
async fn test_evaluate_global_index_full_mode_includes_unindexed_tail() {
    let (file_io, table_path, file_name, _tmp) =
        setup_testdata_table("btree_int_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let entries = vec![make_global_index_entry(&file_name, 1, 0, 99, &meta)];
    let fields = int_schema_fields();
    let predicates = vec![int_eq("id", 0, 50)];

    let result = super::evaluate_global_index(super::GlobalIndexEvaluation {
        file_io: &file_io,
        table_path: &table_path,
        index_entries: &entries,
        predicates: &predicates,
        schema_fields: &fields,
        search_mode: GlobalIndexSearchMode::Full,
        global_index_thread_num: 32,
        btree_fallback_scan_max_size: i64::MAX,
        btree_data_block_cache_size: 128 * 1024 * 1024,
        bitmap_fallback_scan_max_size: i64::MAX,
        fm_read_options: FMReadOptions::default(),
        next_row_id: Some(150),
        data_ranges: &[],
    })
    .await
    .unwrap();

    assert_eq!(
        result.unwrap(),
        vec![RowRange::new(25, 25), RowRange::new(100, 149)]
    );
}

#[tokio::test]
async fn test_evaluate_global_index_and_uses_evaluated_field_coverage_for_raw_fallback() {
    let src = format!(
        "{}/testdata/btree/btree_int_100_no_compress.bin",
        env!("CARGO_MANIFEST_DIR")
    );
    let tmp = tempfile::tempdir().unwrap();
    let index_dir = tmp.path().join("index");
    std::fs::create_dir_all(&index_dir).unwrap();
    std::fs::copy(&src, index_dir.join("index_part1.bin")).unwrap();
    std::fs::copy(&src, index_dir.join("index_part2.bin")).unwrap();

    let table_path = format!("file://{}", tmp.path().display());
    let file_io = crate::io::FileIOBuilder::new("file").build().unwrap();
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);

    let first = make_global_index_entry("index_part1.bin", 1, 0, 49, &meta);
    // A separate tuple definition has narrower coverage and incompatible
    // metadata. It must be declined without reading its keys as scalar INTs,
    // and must not alter the coverage of the evaluated scalar definition.
    let mut composite = make_global_index_entry("missing_composite.bin", 1, 0, 49, &meta);
    composite
        .index_file
        .global_index_meta
        .as_mut()
        .unwrap()
        .extra_field_ids = Some(vec![2]);
    let second = make_global_index_entry("index_part2.bin", 1, 50, 99, &meta);
    let entries = vec![first, second, composite];
    let fields = two_field_schema_fields();

    let predicates = vec![Predicate::and(vec![
        int_eq("id", 0, 50),
        int_eq("value", 1, 8),
    ])];
    let result = super::evaluate_global_index(super::GlobalIndexEvaluation {
        file_io: &file_io,
        table_path: &table_path,
        index_entries: &entries,
        predicates: &predicates,
        schema_fields: &fields,
        search_mode: GlobalIndexSearchMode::Full,
        global_index_thread_num: 32,
        btree_fallback_scan_max_size: i64::MAX,
        btree_data_block_cache_size: 128 * 1024 * 1024,
        bitmap_fallback_scan_max_size: i64::MAX,
        fm_read_options: FMReadOptions::default(),
        next_row_id: Some(100),
        data_ranges: &[],
    })
    .await
    .unwrap();

    assert_eq!(
        result.unwrap(),
        vec![RowRange::new(25, 25), RowRange::new(75, 75)],
        "raw fallback should use only the id field that was actually evaluated; \
             the unevaluated extra field must not widen or narrow fallback coverage"
    );
}

#[tokio::test]
async fn test_evaluate_global_index_detail_mode_uses_data_ranges() {
    let (file_io, table_path, file_name, _tmp) =
        setup_testdata_table("btree_int_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let entries = vec![make_global_index_entry(&file_name, 1, 0, 99, &meta)];
    let fields = int_schema_fields();
    let predicates = vec![int_eq("id", 0, 50)];

    let data_ranges = [RowRange::new(90, 120), RowRange::new(140, 145)];
    let result = super::evaluate_global_index(super::GlobalIndexEvaluation {
        file_io: &file_io,
        table_path: &table_path,
        index_entries: &entries,
        predicates: &predicates,
        schema_fields: &fields,
        search_mode: GlobalIndexSearchMode::Detail,
        global_index_thread_num: 32,
        btree_fallback_scan_max_size: i64::MAX,
        btree_data_block_cache_size: 128 * 1024 * 1024,
        bitmap_fallback_scan_max_size: i64::MAX,
        fm_read_options: FMReadOptions::default(),
        next_row_id: Some(150),
        data_ranges: &data_ranges,
    })
    .await
    .unwrap();

    assert_eq!(
        result.unwrap(),
        vec![
            RowRange::new(25, 25),
            RowRange::new(100, 120),
            RowRange::new(140, 145),
        ]
    );
}

#[tokio::test]
async fn test_evaluate_global_index_range() {
    let (file_io, table_path, file_name, _tmp) =
        setup_testdata_table("btree_int_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let entries = vec![make_global_index_entry(&file_name, 1, 0, 99, &meta)];
    let fields = int_schema_fields();

    // keys 10..=20 -> keys 10,12,14,16,18,20 -> row_ids 5,6,7,8,9,10
    let predicates = vec![
        Predicate::Leaf {
            column: "id".to_string(),
            index: 0,
            data_type: DataType::Int(crate::spec::IntType::new()),
            op: PredicateOperator::GtEq,
            literals: vec![Datum::Int(10)],
        },
        Predicate::Leaf {
            column: "id".to_string(),
            index: 0,
            data_type: DataType::Int(crate::spec::IntType::new()),
            op: PredicateOperator::LtEq,
            literals: vec![Datum::Int(20)],
        },
    ];

    let result = evaluate_global_index_fast(&file_io, &table_path, &entries, &predicates, &fields)
        .await
        .unwrap();
    let ranges = result.unwrap();
    assert_eq!(ranges, vec![RowRange::new(5, 10)]);

    let mut over_limit_entries = vec![make_global_index_entry(&file_name, 1, 0, 99, &meta)];
    over_limit_entries[0].index_file.file_size = 2;
    let over_limit_result = evaluate_global_index_fast_with_fallback_size(
        &file_io,
        &table_path,
        &over_limit_entries,
        &predicates,
        &fields,
        1,
        i64::MAX,
    )
    .await
    .unwrap();
    assert!(
        over_limit_result.is_none(),
        "between/range predicates require fallback scans and should be unsupported over budget"
    );
}

#[tokio::test]
async fn test_evaluate_global_index_in() {
    let (file_io, table_path, file_name, _tmp) =
        setup_testdata_table("btree_int_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let entries = vec![make_global_index_entry(&file_name, 1, 0, 99, &meta)];
    let fields = int_schema_fields();

    // IN(0, 50, 198) -> row_ids 0, 25, 99
    let predicates = vec![Predicate::Leaf {
        column: "id".to_string(),
        index: 0,
        data_type: DataType::Int(crate::spec::IntType::new()),
        op: PredicateOperator::In,
        literals: vec![Datum::Int(0), Datum::Int(50), Datum::Int(198)],
    }];

    let result = evaluate_global_index_fast(&file_io, &table_path, &entries, &predicates, &fields)
        .await
        .unwrap();
    let ranges = result.unwrap();
    assert_eq!(
        ranges,
        vec![
            RowRange::new(0, 0),
            RowRange::new(25, 25),
            RowRange::new(99, 99)
        ]
    );
}

#[tokio::test]
async fn test_evaluate_global_index_no_match() {
    let (file_io, table_path, file_name, _tmp) =
        setup_testdata_table("btree_int_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let entries = vec![make_global_index_entry(&file_name, 1, 0, 99, &meta)];
    let fields = int_schema_fields();

    // key=999 doesn't exist
    let predicates = vec![Predicate::Leaf {
        column: "id".to_string(),
        index: 0,
        data_type: DataType::Int(crate::spec::IntType::new()),
        op: PredicateOperator::Eq,
        literals: vec![Datum::Int(999)],
    }];

    let result = evaluate_global_index_fast(&file_io, &table_path, &entries, &predicates, &fields)
        .await
        .unwrap();
    let ranges = result.unwrap();
    assert!(ranges.is_empty());
}

#[tokio::test]
async fn test_evaluate_global_index_with_row_offset() {
    let (file_io, table_path, file_name, _tmp) =
        setup_testdata_table("btree_int_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    // row_range_start=1000 simulates an offset
    let entries = vec![make_global_index_entry(&file_name, 1, 1000, 1099, &meta)];
    let fields = int_schema_fields();

    // key=50 -> local row_id=25, offset -> global row_id=1025
    let predicates = vec![Predicate::Leaf {
        column: "id".to_string(),
        index: 0,
        data_type: DataType::Int(crate::spec::IntType::new()),
        op: PredicateOperator::Eq,
        literals: vec![Datum::Int(50)],
    }];

    let result = evaluate_global_index_fast(&file_io, &table_path, &entries, &predicates, &fields)
        .await
        .unwrap();
    let ranges = result.unwrap();
    assert_eq!(ranges, vec![RowRange::new(1025, 1025)]);
}

#[tokio::test]
async fn test_evaluate_global_index_unknown_column() {
    let (file_io, table_path, file_name, _tmp) =
        setup_testdata_table("btree_int_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let entries = vec![make_global_index_entry(&file_name, 1, 0, 99, &meta)];
    let fields = int_schema_fields();

    // Column "unknown" not in schema -> None (can't evaluate)
    let predicates = vec![Predicate::Leaf {
        column: "unknown".to_string(),
        index: 0,
        data_type: DataType::Int(crate::spec::IntType::new()),
        op: PredicateOperator::Eq,
        literals: vec![Datum::Int(50)],
    }];

    let result = evaluate_global_index_fast(&file_io, &table_path, &entries, &predicates, &fields)
        .await
        .unwrap();
    assert!(result.is_none());
}

#[tokio::test]
async fn test_evaluate_global_index_multi_field_and() {
    // Two fields, each with its own btree index file (same data, different field_id).
    // btree_int_100_no_compress.bin: keys 0,2,4,...,198 -> row_ids 0,1,...,99
    let src = format!(
        "{}/testdata/btree/btree_int_100_no_compress.bin",
        env!("CARGO_MANIFEST_DIR")
    );
    let tmp = tempfile::tempdir().unwrap();
    let index_dir = tmp.path().join("index");
    std::fs::create_dir_all(&index_dir).unwrap();
    std::fs::copy(&src, index_dir.join("index_field1.bin")).unwrap();
    std::fs::copy(&src, index_dir.join("index_field2.bin")).unwrap();

    let table_path = format!("file://{}", tmp.path().display());
    let file_io = crate::io::FileIOBuilder::new("file").build().unwrap();

    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);

    let fields = vec![
        DataField::new(
            1,
            "id".to_string(),
            DataType::Int(crate::spec::IntType::new()),
        ),
        DataField::new(
            2,
            "value".to_string(),
            DataType::Int(crate::spec::IntType::new()),
        ),
    ];

    let entries = vec![
        make_global_index_entry("index_field1.bin", 1, 0, 99, &meta),
        make_global_index_entry("index_field2.bin", 2, 0, 99, &meta),
    ];

    // id >= 40 AND id <= 60 → keys 40,42,...,60 → row_ids 20..30
    // value >= 44 AND value <= 52 → keys 44,46,48,50,52 → row_ids 22..26
    // AND → intersect [20..30] and [22..26] = [22..26]
    let predicates = vec![
        Predicate::Leaf {
            column: "id".to_string(),
            index: 0,
            data_type: DataType::Int(crate::spec::IntType::new()),
            op: PredicateOperator::GtEq,
            literals: vec![Datum::Int(40)],
        },
        Predicate::Leaf {
            column: "id".to_string(),
            index: 0,
            data_type: DataType::Int(crate::spec::IntType::new()),
            op: PredicateOperator::LtEq,
            literals: vec![Datum::Int(60)],
        },
        Predicate::Leaf {
            column: "value".to_string(),
            index: 1,
            data_type: DataType::Int(crate::spec::IntType::new()),
            op: PredicateOperator::GtEq,
            literals: vec![Datum::Int(44)],
        },
        Predicate::Leaf {
            column: "value".to_string(),
            index: 1,
            data_type: DataType::Int(crate::spec::IntType::new()),
            op: PredicateOperator::LtEq,
            literals: vec![Datum::Int(52)],
        },
    ];

    let result = evaluate_global_index_fast(&file_io, &table_path, &entries, &predicates, &fields)
        .await
        .unwrap();
    let ranges = result.unwrap();
    assert_eq!(ranges, vec![RowRange::new(22, 26)]);
}

#[tokio::test]
async fn test_multi_field_and_shares_query_concurrency_budget() {
    let src = format!(
        "{}/testdata/btree/btree_int_100_no_compress.bin",
        env!("CARGO_MANIFEST_DIR")
    );
    let tmp = tempfile::tempdir().unwrap();
    let index_dir = tmp.path().join("index");
    std::fs::create_dir_all(&index_dir).unwrap();
    let file_names: Vec<_> = (1..=4)
        .map(|field_id| {
            let file_name = format!("index_field{field_id}.bin");
            std::fs::copy(&src, index_dir.join(&file_name)).unwrap();
            file_name
        })
        .collect();

    let table_path = format!("file://{}", tmp.path().display());
    let file_io = crate::io::FileIOBuilder::new("file").build().unwrap();
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let fields: Vec<_> = (0..4)
        .map(|index| {
            let field_id = index + 1;
            DataField::new(
                field_id,
                format!("field{field_id}"),
                DataType::Int(crate::spec::IntType::new()),
            )
        })
        .collect();
    let entries: Vec<_> = file_names
        .iter()
        .enumerate()
        .map(|(index, file_name)| {
            make_global_index_entry(file_name, index as i32 + 1, 0, 99, &meta)
        })
        .collect();
    let predicate = Predicate::and(
        (0..4)
            .map(|index| int_eq(&format!("field{}", index + 1), index, 50))
            .collect(),
    );

    for (thread_num, expected_peak) in [(1, 1), (2, 2)] {
        let mut scanner = GlobalIndexScanner::create(
            &file_io,
            &table_path,
            thread_num,
            i64::MAX,
            i64::MAX,
            &entries,
            &fields,
        )
        .unwrap()
        .unwrap();
        let probe = Arc::new(QueryIoProbe::default());
        scanner.query_io_probe = Some(Arc::clone(&probe));

        let result = scanner.evaluate(&predicate).await.unwrap().unwrap();

        assert_eq!(result.row_ranges, vec![RowRange::new(25, 25)]);
        assert_eq!(result.evaluated_field_ids, HashSet::from([1, 2, 3, 4]));
        assert_eq!(probe.peak(), expected_peak);
    }
}

#[tokio::test]
async fn test_or_and_nested_predicates_share_query_budget() {
    let src = format!(
        "{}/testdata/btree/btree_int_100_no_compress.bin",
        env!("CARGO_MANIFEST_DIR")
    );
    let tmp = tempfile::tempdir().unwrap();
    let index_dir = tmp.path().join("index");
    std::fs::create_dir_all(&index_dir).unwrap();
    let table_path = format!("file://{}", tmp.path().display());
    let file_io = crate::io::FileIOBuilder::new("file").build().unwrap();
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let fields: Vec<_> = (0..4)
        .map(|index| {
            DataField::new(
                index + 1,
                format!("field{}", index + 1),
                DataType::Int(crate::spec::IntType::new()),
            )
        })
        .collect();
    let entries: Vec<_> = (0..4)
        .map(|index| {
            let name = format!("index_field{index}.bin");
            std::fs::copy(&src, index_dir.join(&name)).unwrap();
            make_global_index_entry(&name, index + 1, 0, 99, &meta)
        })
        .collect();
    let leaves: Vec<_> = (0..4)
        .map(|index| int_eq(&format!("field{}", index + 1), index as usize, 50))
        .collect();
    let predicates = [
        Predicate::or(leaves.clone()),
        Predicate::or(vec![
            Predicate::and(leaves[..2].to_vec()),
            Predicate::and(leaves[2..].to_vec()),
        ]),
    ];

    for predicate in &predicates {
        for limit in [1, 2, 4] {
            let mut scanner = GlobalIndexScanner::create(
                &file_io,
                &table_path,
                limit,
                i64::MAX,
                i64::MAX,
                &entries,
                &fields,
            )
            .unwrap()
            .unwrap();
            let probe = Arc::new(QueryIoProbe::default());
            scanner.query_io_probe = Some(Arc::clone(&probe));

            let result = scanner.evaluate(predicate).await.unwrap().unwrap();
            assert_eq!(result.row_ranges, vec![RowRange::new(25, 25)]);
            assert_eq!(result.indexed_coverage, vec![RowRange::new(0, 99)]);
            assert_eq!(result.evaluated_field_ids, HashSet::from([1, 2, 3, 4]));
            assert_eq!(probe.peak(), limit);
            assert_eq!(probe.btree_opens.load(TestOrdering::SeqCst), 4);
        }
    }
}

#[tokio::test]
async fn test_or_reuses_one_btree_reader_for_same_file() {
    let (io, path, name, _tmp) = setup_testdata_table("btree_int_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let entries = vec![make_global_index_entry(&name, 1, 0, 99, &meta)];
    let mut scanner = GlobalIndexScanner::create(
        &io,
        &path,
        4,
        i64::MAX,
        i64::MAX,
        &entries,
        &int_schema_fields(),
    )
    .unwrap()
    .unwrap();
    let probe = Arc::new(QueryIoProbe::default());
    scanner.query_io_probe = Some(Arc::clone(&probe));
    let predicate = Predicate::or(
        [10, 20, 30, 40]
            .map(|value| int_eq("id", 0, value))
            .to_vec(),
    );

    let result = scanner.evaluate(&predicate).await.unwrap().unwrap();
    assert_eq!(
        result.row_ranges,
        [5, 10, 15, 20].map(|row| RowRange::new(row, row)).to_vec()
    );
    assert_eq!(probe.peak(), 1);
    assert_eq!(probe.btree_opens.load(TestOrdering::SeqCst), 1);
}

#[tokio::test]
async fn test_wide_or_fallback_creates_only_bounded_child_futures() {
    let (io, path, name, _tmp) = setup_testdata_table("btree_int_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let entries = vec![make_global_index_entry(&name, 1, 0, 99, &meta)];
    let mut scanner = GlobalIndexScanner::create(
        &io,
        &path,
        4,
        i64::MAX,
        i64::MAX,
        &entries,
        &int_schema_fields(),
    )
    .unwrap()
    .unwrap();
    let probe = Arc::new(QueryIoProbe::default());
    scanner.query_io_probe = Some(Arc::clone(&probe));

    let mut children = vec![int_eq("missing", 1, 50)];
    children.extend((0..1024).map(|_| int_eq("id", 0, 50)));
    assert!(scanner
        .evaluate(&Predicate::or(children))
        .await
        .unwrap()
        .is_none());
    assert!(probe.evaluate_futures.load(TestOrdering::SeqCst) <= 5);
}

#[tokio::test]
async fn test_or_fallback_and_cancel_leave_reader_usable() {
    let (io, path, name, _tmp) = setup_testdata_table("btree_int_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let entries = vec![make_global_index_entry(&name, 1, 0, 99, &meta)];
    let mut scanner = GlobalIndexScanner::create(
        &io,
        &path,
        2,
        i64::MAX,
        i64::MAX,
        &entries,
        &int_schema_fields(),
    )
    .unwrap()
    .unwrap();
    let probe = Arc::new(QueryIoProbe::default());
    scanner.query_io_probe = Some(Arc::clone(&probe));
    let scanner = Arc::new(scanner);
    let valid = int_eq("id", 0, 50);
    let unsupported = int_eq("missing", 1, 50);

    for position in 0..3 {
        let mut children = vec![valid.clone(), valid.clone()];
        children.insert(position, unsupported.clone());
        assert!(scanner
            .evaluate(&Predicate::or(children))
            .await
            .unwrap()
            .is_none());
    }

    probe.pause_on_enter.store(true, TestOrdering::SeqCst);
    let entered = probe.entered.notified();
    let cancelled_scanner = Arc::clone(&scanner);
    let cancelled_predicate = Predicate::or(vec![valid.clone(), valid.clone()]);
    let task = tokio::spawn(async move { cancelled_scanner.evaluate(&cancelled_predicate).await });
    tokio::time::timeout(std::time::Duration::from_secs(5), entered)
        .await
        .unwrap();
    task.abort();
    assert!(matches!(task.await, Err(error) if error.is_cancelled()));
    probe.pause_on_enter.store(false, TestOrdering::SeqCst);

    let result = tokio::time::timeout(std::time::Duration::from_secs(5), scanner.evaluate(&valid))
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(result.row_ranges, vec![RowRange::new(25, 25)]);
}

#[tokio::test]
async fn test_or_index_open_error_releases_file_lock_and_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let index_dir = tmp.path().join("index");
    std::fs::create_dir_all(&index_dir).unwrap();
    let table_path = format!("file://{}", tmp.path().display());
    let file_io = crate::io::FileIOBuilder::new("file").build().unwrap();
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let entries = vec![make_global_index_entry("late.bin", 1, 0, 99, &meta)];
    let scanner = GlobalIndexScanner::create(
        &file_io,
        &table_path,
        2,
        i64::MAX,
        i64::MAX,
        &entries,
        &int_schema_fields(),
    )
    .unwrap()
    .unwrap();
    let predicate = Predicate::or(vec![int_eq("id", 0, 50), int_eq("id", 0, 60)]);
    let unsupported = int_eq("unindexed", 1, 50);

    assert!(scanner
        .evaluate(&Predicate::or(vec![
            unsupported.clone(),
            int_eq("id", 0, 50)
        ]))
        .await
        .unwrap()
        .is_none());
    assert!(scanner
        .evaluate(&Predicate::or(vec![int_eq("id", 0, 50), unsupported]))
        .await
        .is_err());

    assert!(scanner.evaluate(&predicate).await.is_err());
    let src = format!(
        "{}/testdata/btree/btree_int_100_no_compress.bin",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::copy(src, index_dir.join("late.bin")).unwrap();
    let result = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        scanner.evaluate(&predicate),
    )
    .await
    .unwrap()
    .unwrap()
    .unwrap();
    assert_eq!(
        result.row_ranges,
        vec![RowRange::new(25, 25), RowRange::new(30, 30)]
    );
}

fn setup_compound_and_scanner(
    limit: usize,
) -> (GlobalIndexScanner, Arc<QueryIoProbe>, tempfile::TempDir) {
    let src = format!(
        "{}/testdata/btree/btree_int_100_no_compress.bin",
        env!("CARGO_MANIFEST_DIR")
    );
    let tmp = tempfile::tempdir().unwrap();
    let index_dir = tmp.path().join("index");
    std::fs::create_dir_all(&index_dir).unwrap();
    let table_path = format!("file://{}", tmp.path().display());
    let file_io = crate::io::FileIOBuilder::new("file").build().unwrap();
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let fields: Vec<_> = (0..4)
        .map(|index| {
            DataField::new(
                index + 1,
                format!("field{}", index + 1),
                DataType::Int(crate::spec::IntType::new()),
            )
        })
        .collect();
    let entries: Vec<_> = (0..4)
        .map(|index| {
            let name = format!("field{}.bin", index + 1);
            std::fs::copy(&src, index_dir.join(&name)).unwrap();
            let start = i64::from(index) * 10;
            make_global_index_entry(&name, index + 1, start, start + 99, &meta)
        })
        .collect();
    let mut scanner = GlobalIndexScanner::create(
        &file_io,
        &table_path,
        limit,
        i64::MAX,
        i64::MAX,
        &entries,
        &fields,
    )
    .unwrap()
    .unwrap();
    let probe = Arc::new(QueryIoProbe::default());
    scanner.query_io_probe = Some(Arc::clone(&probe));
    (scanner, probe, tmp)
}

fn compound_and_children() -> Vec<Predicate> {
    vec![
        Predicate::or(vec![int_eq("field1", 0, 50), int_eq("field2", 1, 50)]),
        Predicate::or(vec![int_eq("field3", 2, 30), int_eq("field4", 3, 50)]),
    ]
}

fn compound_and_with_leaf_group() -> Predicate {
    let mut children = compound_and_children();
    for (op, value) in [
        (PredicateOperator::GtEq, 40),
        (PredicateOperator::LtEq, 100),
    ] {
        children.push(Predicate::Leaf {
            column: "field1".to_string(),
            index: 0,
            data_type: DataType::Int(crate::spec::IntType::new()),
            op,
            literals: vec![Datum::Int(value)],
        });
    }
    Predicate::and(children)
}

#[tokio::test]
async fn test_compound_and_preserves_serial_results() {
    for predicate in [
        Predicate::and(compound_and_children()),
        compound_and_with_leaf_group(),
    ] {
        for limit in [1, 2, 4] {
            let (scanner, _probe, _tmp) = setup_compound_and_scanner(limit);
            let result = scanner.evaluate(&predicate).await.unwrap().unwrap();
            assert_eq!(result.row_ranges, vec![RowRange::new(35, 35)]);
            assert_eq!(result.indexed_coverage, vec![RowRange::new(30, 99)]);
            assert_eq!(result.evaluated_field_ids, HashSet::from([1, 2, 3, 4]));
        }
    }
}

#[tokio::test]
async fn test_compound_and_uses_idle_query_budget() {
    for predicate in [
        Predicate::and(compound_and_children()),
        compound_and_with_leaf_group(),
    ] {
        for limit in [1, 2, 4] {
            let (scanner, probe, _tmp) = setup_compound_and_scanner(limit);
            scanner.evaluate(&predicate).await.unwrap().unwrap();
            assert_eq!(probe.peak(), limit, "query budget {limit}");
            assert_eq!(probe.active.load(TestOrdering::SeqCst), 0);
            assert_eq!(scanner.query_semaphore.available_permits(), limit);
            assert_eq!(probe.btree_opens.load(TestOrdering::SeqCst), 4);
        }
    }
}

#[tokio::test]
async fn test_compound_and_finishes_leaf_groups_before_starting_branches() {
    let (scanner, probe, _tmp) = setup_compound_and_scanner(4);
    let scanner = Arc::new(scanner);
    let predicate = compound_and_with_leaf_group();
    probe.pause_on_enter.store(true, TestOrdering::SeqCst);
    let entered = probe.entered.notified();
    let task_scanner = Arc::clone(&scanner);
    let task = tokio::spawn(async move { task_scanner.evaluate(&predicate).await });
    tokio::time::timeout(std::time::Duration::from_secs(5), entered)
        .await
        .unwrap();
    assert_eq!(probe.active.load(TestOrdering::SeqCst), 1);
    assert_eq!(probe.evaluate_futures.load(TestOrdering::SeqCst), 1);
    assert_eq!(probe.btree_opens.load(TestOrdering::SeqCst), 0);
    probe.pause_on_enter.store(false, TestOrdering::SeqCst);
    probe.resume.notify_one();

    let result = tokio::time::timeout(std::time::Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(result.row_ranges, vec![RowRange::new(35, 35)]);
    assert_eq!(result.indexed_coverage, vec![RowRange::new(30, 99)]);
    assert_eq!(result.evaluated_field_ids, HashSet::from([1, 2, 3, 4]));
    assert_eq!(probe.range_queries.load(TestOrdering::SeqCst), 1);
    assert_eq!(probe.predicate_queries.load(TestOrdering::SeqCst), 4);
    assert_eq!(probe.btree_opens.load(TestOrdering::SeqCst), 4);
    assert_eq!(scanner.reader_cache.lock().unwrap().len(), 4);
}

#[tokio::test]
async fn test_compound_and_ignores_unsupported_children_and_keeps_empty_results() {
    let (scanner, _probe, _tmp) = setup_compound_and_scanner(4);
    let predicate = Predicate::and(vec![
        Predicate::or(vec![int_eq("field1", 0, 50), int_eq("missing", 4, 50)]),
        compound_and_children().remove(1),
        int_eq("missing", 4, 50),
    ]);
    let result = scanner.evaluate(&predicate).await.unwrap().unwrap();
    assert_eq!(
        result.row_ranges,
        vec![RowRange::new(35, 35), RowRange::new(55, 55)]
    );
    assert_eq!(result.indexed_coverage, vec![RowRange::new(30, 119)]);
    assert_eq!(result.evaluated_field_ids, HashSet::from([3, 4]));
    assert!(scanner
        .evaluate(&Predicate::and(vec![
            Predicate::or(vec![int_eq("missing", 4, 50), int_eq("unknown", 5, 50),]),
            int_eq("missing", 4, 50),
        ]))
        .await
        .unwrap()
        .is_none());

    let (scanner, probe, _tmp) = setup_compound_and_scanner(4);
    let predicate = Predicate::and(vec![
        Predicate::or(vec![int_eq("field1", 0, 51), int_eq("field2", 1, 51)]),
        compound_and_children().remove(1),
    ]);
    let result = scanner.evaluate(&predicate).await.unwrap().unwrap();
    assert!(result.row_ranges.is_empty());
    assert_eq!(result.indexed_coverage, vec![RowRange::new(30, 99)]);
    assert_eq!(result.evaluated_field_ids, HashSet::from([1, 2, 3, 4]));
    assert_eq!(probe.predicate_queries.load(TestOrdering::SeqCst), 4);
}

#[tokio::test]
async fn test_compound_and_reuses_one_reader_for_same_file() {
    let (io, path, name, _tmp) = setup_testdata_table("btree_int_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let entries = vec![make_global_index_entry(&name, 1, 0, 99, &meta)];
    let mut scanner = GlobalIndexScanner::create(
        &io,
        &path,
        4,
        i64::MAX,
        i64::MAX,
        &entries,
        &int_schema_fields(),
    )
    .unwrap()
    .unwrap();
    let probe = Arc::new(QueryIoProbe::default());
    scanner.query_io_probe = Some(Arc::clone(&probe));
    let predicate = Predicate::and(vec![
        Predicate::or(vec![int_eq("id", 0, 10), int_eq("id", 0, 20)]),
        Predicate::or(vec![int_eq("id", 0, 20), int_eq("id", 0, 30)]),
    ]);
    let result = scanner.evaluate(&predicate).await.unwrap().unwrap();
    assert_eq!(result.row_ranges, vec![RowRange::new(10, 10)]);
    assert_eq!(result.indexed_coverage, vec![RowRange::new(0, 99)]);
    assert_eq!(result.evaluated_field_ids, HashSet::from([1]));
    assert_eq!(probe.peak(), 1);
    assert_eq!(probe.btree_opens.load(TestOrdering::SeqCst), 1);
    assert_eq!(scanner.reader_cache.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn test_compound_and_reports_errors_in_child_order() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("index")).unwrap();
    let path = format!("file://{}", tmp.path().display());
    let io = crate::io::FileIOBuilder::new("file").build().unwrap();
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let entries = vec![
        make_global_index_entry("first-missing.bin", 1, 0, 99, &meta),
        make_global_index_entry("second-missing.bin", 2, 0, 99, &meta),
    ];
    let mut scanner = GlobalIndexScanner::create(
        &io,
        &path,
        2,
        i64::MAX,
        i64::MAX,
        &entries,
        &two_field_schema_fields(),
    )
    .unwrap()
    .unwrap();
    let probe = Arc::new(QueryIoProbe::default());
    scanner.query_io_probe = Some(Arc::clone(&probe));
    let scanner = Arc::new(scanner);
    let first_entry = &scanner
        .entries_by_field
        .iter()
        .find(|(field_id, _)| *field_id == 1)
        .unwrap()
        .1[0];
    let first_lock = scanner.btree_file_lock(first_entry);
    let first_guard = first_lock.lock_owned().await;
    let predicate = Predicate::and(vec![
        Predicate::or(vec![int_eq("id", 0, 50), int_eq("id", 0, 60)]),
        Predicate::or(vec![int_eq("value", 1, 50), int_eq("value", 1, 60)]),
    ]);
    probe.pause_on_enter.store(true, TestOrdering::SeqCst);
    let entered = probe.entered.notified();
    let task_scanner = Arc::clone(&scanner);
    let task = tokio::spawn(async move { task_scanner.evaluate(&predicate).await });
    tokio::time::timeout(std::time::Duration::from_secs(5), entered)
        .await
        .unwrap();
    probe.pause_on_enter.store(false, TestOrdering::SeqCst);
    probe.resume.notify_one();
    tokio::time::timeout(std::time::Duration::from_secs(5), async {
        while probe.btree_opens.load(TestOrdering::SeqCst) == 0
            || probe.active.load(TestOrdering::SeqCst) != 0
        {
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap();
    assert!(
        !task.is_finished(),
        "a later error must wait for the first child"
    );
    assert_eq!(scanner.query_semaphore.available_permits(), 2);
    drop(first_guard);
    let error = tokio::time::timeout(std::time::Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap()
        .err()
        .expect("the first child must report its missing index file");
    assert!(error.to_string().contains("first-missing.bin"));
    assert_eq!(probe.active.load(TestOrdering::SeqCst), 0);
    assert_eq!(scanner.query_semaphore.available_permits(), 2);
    for lock in scanner.btree_file_locks.lock().unwrap().values() {
        assert!(lock.try_lock().is_ok());
    }
}

#[tokio::test]
async fn test_compound_and_bounds_future_creation_and_releases_cancelled_queries() {
    let (io, path, name, _tmp) = setup_testdata_table("btree_int_100_no_compress.bin");
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let entries = vec![make_global_index_entry(&name, 1, 0, 99, &meta)];
    let mut scanner = GlobalIndexScanner::create(
        &io,
        &path,
        2,
        i64::MAX,
        i64::MAX,
        &entries,
        &int_schema_fields(),
    )
    .unwrap()
    .unwrap();
    let probe = Arc::new(QueryIoProbe::default());
    scanner.query_io_probe = Some(Arc::clone(&probe));
    let scanner = Arc::new(scanner);
    let branch = Predicate::or(vec![int_eq("id", 0, 50), int_eq("id", 0, 60)]);
    let predicate = Predicate::and(vec![branch.clone(); 1024]);
    probe.pause_on_enter.store(true, TestOrdering::SeqCst);
    let entered = probe.entered.notified();
    let task_scanner = Arc::clone(&scanner);
    let task = tokio::spawn(async move { task_scanner.evaluate(&predicate).await });
    tokio::time::timeout(std::time::Duration::from_secs(5), entered)
        .await
        .unwrap();
    // One root, at most two OR branches, and at most two leaves per OR.
    assert!(probe.evaluate_futures.load(TestOrdering::SeqCst) <= 7);
    task.abort();
    assert!(matches!(task.await, Err(error) if error.is_cancelled()));
    probe.pause_on_enter.store(false, TestOrdering::SeqCst);
    assert_eq!(probe.active.load(TestOrdering::SeqCst), 0);
    assert_eq!(scanner.query_semaphore.available_permits(), 2);
    for lock in scanner.btree_file_locks.lock().unwrap().values() {
        assert!(lock.try_lock().is_ok());
    }
    let predicate = Predicate::and(vec![branch.clone(), branch]);
    let result = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        scanner.evaluate(&predicate),
    )
    .await
    .unwrap()
    .unwrap()
    .unwrap();
    assert_eq!(
        result.row_ranges,
        vec![RowRange::new(25, 25), RowRange::new(30, 30)]
    );
    assert_eq!(probe.btree_opens.load(TestOrdering::SeqCst), 1);
}

/// Regression for the Between+remaining bug in `evaluate_leaf`. When a
/// native `Between` leaf is paired with another conjunct (e.g. `id >= 0`),
/// and the file's b-tree key range falls **outside** the Between range
/// but is still matched by the remaining predicate, the whole AND must
/// produce zero rows. Before the fix, `file_result` was initialized from
/// the remaining predicate's bitmap and the Between conjunct was silently
/// dropped — the test would observe the file's full row id set instead of
/// the empty set.
#[tokio::test]
async fn test_between_unmatched_file_drops_remaining_match() {
    let (file_io, table_path, file_name, _tmp) =
        setup_testdata_table("btree_int_100_no_compress.bin");
    // File covers keys [0, 198] (row_ids 0..99). Pick a Between range
    // entirely below 0 so `may_match_between` is false, and a `>= 0`
    // conjunct that would otherwise scoop up every row in the file.
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let entries = vec![make_global_index_entry(&file_name, 1, 0, 99, &meta)];
    let fields = int_schema_fields();

    let predicates = vec![Predicate::and(vec![
        Predicate::Leaf {
            column: "id".to_string(),
            index: 0,
            data_type: DataType::Int(crate::spec::IntType::new()),
            op: PredicateOperator::Between,
            literals: vec![Datum::Int(-100), Datum::Int(-50)],
        },
        Predicate::Leaf {
            column: "id".to_string(),
            index: 0,
            data_type: DataType::Int(crate::spec::IntType::new()),
            op: PredicateOperator::GtEq,
            literals: vec![Datum::Int(0)],
        },
    ])];

    let result = evaluate_global_index_fast(&file_io, &table_path, &entries, &predicates, &fields)
        .await
        .unwrap();
    let ranges = result.unwrap();
    assert!(
        ranges.is_empty(),
        "Between(-100..-50) AND id>=0 must produce zero rows on a file \
             whose key range is [0, 198] — got {ranges:?}"
    );
}
