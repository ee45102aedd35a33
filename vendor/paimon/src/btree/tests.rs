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

use crate::btree::block::BlockCompressionType;
use crate::btree::bloom_filter::BloomFilter;
use crate::btree::footer::{BTreeFileFooter, BTREE_FOOTER_ENCODED_LENGTH};
use crate::btree::meta::BTreeIndexMeta;
use crate::btree::query::IndexQuery;
use crate::btree::reader::BTreeIndexReader;
use crate::btree::test_util::{BytesFileRead, VecFileWrite};
use crate::btree::writer::BTreeIndexWriter;
use crate::btree::BTreeDataBlockCache;
use crate::io::FileRead;
use crate::spec::murmur_hash::hash_bytes;
use crate::spec::{DataType, Datum, PredicateOperator, VarCharType};
use bytes::Bytes;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex};

#[derive(Clone)]
struct RecordingFileRead {
    data: Bytes,
    ranges: Arc<Mutex<Vec<Range<u64>>>>,
}

#[async_trait::async_trait]
impl FileRead for RecordingFileRead {
    async fn read(&self, range: Range<u64>) -> crate::Result<Bytes> {
        self.ranges.lock().unwrap().push(range.clone());
        Ok(self.data.slice(range.start as usize..range.end as usize))
    }
}

fn int_key(v: i32) -> Vec<u8> {
    v.to_be_bytes().to_vec()
}

fn int_cmp(a: &[u8], b: &[u8]) -> crate::Result<std::cmp::Ordering> {
    let a_val = i32::from_be_bytes(a.try_into().unwrap());
    let b_val = i32::from_be_bytes(b.try_into().unwrap());
    Ok(a_val.cmp(&b_val))
}

/// Helper: write entries, finish, then open a reader from the in-memory bytes.
async fn write_and_open<F: Fn(&[u8], &[u8]) -> crate::Result<std::cmp::Ordering>>(
    buf: &VecFileWrite,
    result: &crate::btree::writer::BTreeWriteResult,
    cmp: F,
) -> BTreeIndexReader<F> {
    let data = Bytes::from(buf.to_vec());
    let file_size = data.len() as u64;
    let reader: Box<dyn crate::io::FileRead> = Box::new(BytesFileRead(data));
    BTreeIndexReader::open(reader, file_size, &result.meta, cmp)
        .await
        .unwrap()
}

#[tokio::test]
async fn test_write_read_roundtrip() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 64, BlockCompressionType::None);

    for i in 0..100 {
        let key = int_key(i);
        writer.write(Some(&key), i as i64).await.unwrap();
    }

    let result = writer.finish().await.unwrap();
    assert_eq!(result.row_count, 100);
    assert!(!result.meta.has_nulls);

    let reader = write_and_open(&buf, &result, int_cmp).await;

    // Spot check via queries
    let bm = reader.query_equal(&int_key(0)).await.unwrap();
    assert!(bm.contains(0));
    let bm = reader.query_equal(&int_key(99)).await.unwrap();
    assert!(bm.contains(99));
    let all = reader.all_non_null_rows().await.unwrap();
    assert_eq!(all.len(), 100);
}

#[tokio::test]
async fn test_tightest_bounds_across_key_types_and_versions() {
    use crate::btree::query::extract_between;
    use crate::btree::{make_key_comparator, serialize_datum};
    use crate::spec::*;
    let cases = vec![
        (
            DataType::TinyInt(TinyIntType::new()),
            (0..6).map(Datum::TinyInt).collect::<Vec<_>>(),
        ),
        (
            DataType::SmallInt(SmallIntType::new()),
            (0..6).map(Datum::SmallInt).collect(),
        ),
        (
            DataType::Int(IntType::new()),
            (0..6).map(Datum::Int).collect(),
        ),
        (
            DataType::BigInt(BigIntType::new()),
            (0..6).map(Datum::Long).collect(),
        ),
        (
            DataType::Float(FloatType::new()),
            (0..6).map(|v| Datum::Float(v as f32)).collect(),
        ),
        (
            DataType::Double(DoubleType::new()),
            (0..6).map(|v| Datum::Double(v as f64)).collect(),
        ),
        (
            DataType::VarChar(VarCharType::string_type()),
            (0..6).map(|v| Datum::String(v.to_string())).collect(),
        ),
        (
            DataType::Date(DateType::new()),
            (0..6).map(Datum::Date).collect(),
        ),
        (
            DataType::Time(TimeType::new(3).unwrap()),
            (0..6).map(Datum::Time).collect(),
        ),
        (
            DataType::Timestamp(TimestampType::new(9).unwrap()),
            (0..6)
                .map(|v| Datum::Timestamp {
                    millis: 0,
                    nanos: v,
                })
                .collect(),
        ),
        (
            DataType::Decimal(DecimalType::new(10, 0).unwrap()),
            (0..6)
                .map(|v| Datum::Decimal {
                    unscaled: v,
                    precision: 10,
                    scale: 0,
                })
                .collect(),
        ),
        (
            DataType::Decimal(DecimalType::new(30, 0).unwrap()),
            (0..6)
                .map(|v| Datum::Decimal {
                    unscaled: v,
                    precision: 30,
                    scale: 0,
                })
                .collect(),
        ),
    ];
    for (ty, values) in cases {
        for version in [1, 2] {
            let buf = VecFileWrite::new();
            let mut writer =
                BTreeIndexWriter::new(Box::new(buf.clone()), 64, BlockCompressionType::None)
                    .with_file_version(version)
                    .unwrap();
            writer.write(None, 6).await.unwrap();
            for (row, value) in values.iter().enumerate() {
                writer
                    .write(Some(&serialize_datum(value, &ty)), row as i64)
                    .await
                    .unwrap();
            }
            let result = writer.finish().await.unwrap();
            let reader = write_and_open(&buf, &result, make_key_comparator(&ty)).await;
            for reverse in [false, true] {
                // A native Between plus multiple pairs, with strictness ties.
                let native = vec![values[0].clone(), values[5].clone()];
                let mut predicates = vec![
                    (PredicateOperator::Between, native.as_slice(), &ty),
                    (PredicateOperator::GtEq, &values[1..2], &ty),
                    (PredicateOperator::LtEq, &values[4..5], &ty),
                    (PredicateOperator::Gt, &values[1..2], &ty),
                    (PredicateOperator::Lt, &values[4..5], &ty),
                    (PredicateOperator::IsNotNull, &values[0..0], &ty),
                ];
                if reverse {
                    predicates.reverse();
                }
                let (range, remaining) = extract_between(&predicates);
                assert_eq!(remaining.len(), 1);
                assert_eq!(remaining[0].0, PredicateOperator::IsNotNull);
                let range = range.unwrap();
                assert!(!range.is_empty());
                let actual = reader
                    .range_query(
                        &serialize_datum(range.from, &ty),
                        &serialize_datum(range.to, &ty),
                        range.from_inclusive,
                        range.to_inclusive,
                    )
                    .await
                    .unwrap();
                assert_eq!(
                    actual.iter().collect::<Vec<_>>(),
                    vec![2, 3],
                    "{ty:?}, V{version}"
                );
            }
        }
    }
}

#[tokio::test]
async fn test_empty_range_does_not_read_data_blocks() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 64, BlockCompressionType::None);
    for row in 0..100 {
        writer.write(Some(&int_key(row)), row as i64).await.unwrap();
    }
    let result = writer.finish().await.unwrap();
    let data = Bytes::from(buf.to_vec());
    let reads = Arc::new(Mutex::new(Vec::new()));
    let reader = BTreeIndexReader::open(
        Box::new(RecordingFileRead {
            data: data.clone(),
            ranges: reads.clone(),
        }),
        data.len() as u64,
        &result.meta,
        int_cmp,
    )
    .await
    .unwrap();
    reads.lock().unwrap().clear();
    for (from, to, lower, upper) in [
        (50, 40, true, true),
        (50, 50, false, true),
        (50, 50, true, false),
        (50, 50, false, false),
    ] {
        assert!(reader
            .range_query(&int_key(from), &int_key(to), lower, upper)
            .await
            .unwrap()
            .is_empty());
    }
    assert!(reads.lock().unwrap().is_empty());
}

fn read_footer(data: &[u8]) -> BTreeFileFooter {
    BTreeFileFooter::read_footer(&data[data.len() - BTREE_FOOTER_ENCODED_LENGTH..]).unwrap()
}

#[tokio::test]
async fn test_null_bitmap_is_loaded_on_demand() {
    let data_type = DataType::Int(crate::spec::IntType::new());
    let key = |value| crate::btree::serialize_datum(&Datum::Int(value), &data_type);

    for version in [1, 2] {
        for (has_nulls, has_non_nulls) in [(true, true), (false, true), (true, false)] {
            let buf = VecFileWrite::new();
            let mut writer = BTreeIndexWriter::with_comparator(
                Box::new(buf.clone()),
                256,
                BlockCompressionType::None,
                crate::btree::make_key_comparator(&data_type),
            )
            .with_file_version(version)
            .unwrap();
            if has_nulls {
                writer.write(None, 10).await.unwrap();
                writer.write(None, 30).await.unwrap();
            }
            if has_non_nulls {
                writer.write(Some(&key(1)), 20).await.unwrap();
                writer.write(Some(&key(2)), 40).await.unwrap();
            }
            let result = writer.finish().await.unwrap();
            let data = Bytes::from(buf.to_vec());
            let footer = read_footer(&data);
            let null_range = footer
                .null_bitmap_handle
                .map(|handle| handle.offset..handle.offset + u64::from(handle.size) + 4);
            assert_eq!(null_range.is_some(), has_nulls);
            let ranges = Arc::new(Mutex::new(Vec::new()));
            let reader = BTreeIndexReader::open(
                Box::new(RecordingFileRead {
                    data: data.clone(),
                    ranges: ranges.clone(),
                }),
                data.len() as u64,
                &result.meta,
                crate::btree::make_key_comparator(&data_type),
            )
            .await
            .unwrap();

            let index = footer.index_block_handle;
            let expected_open_ranges = vec![
                data.len() as u64 - BTREE_FOOTER_ENCODED_LENGTH as u64..data.len() as u64,
                index.offset..index.offset + index.full_block_size() as u64,
            ];
            assert_eq!(*ranges.lock().unwrap(), expected_open_ranges);
            let null_reads = || {
                ranges
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|range| null_range.as_ref() == Some(*range))
                    .count()
            };
            assert_eq!(null_reads(), 0);

            let expected_equal = if has_non_nulls { vec![20] } else { vec![] };
            let expected_non_null = if has_non_nulls { vec![20, 40] } else { vec![] };
            for (op, literals, expected) in [
                (PredicateOperator::Eq, vec![Datum::Int(1)], expected_equal),
                (
                    PredicateOperator::Between,
                    vec![Datum::Int(1), Datum::Int(2)],
                    expected_non_null.clone(),
                ),
                (PredicateOperator::IsNotNull, vec![], expected_non_null),
            ] {
                let rows = reader.query(op, &literals, &data_type).await.unwrap();
                assert_eq!(rows.iter().collect::<Vec<_>>(), expected, "{op:?}");
                assert_eq!(null_reads(), 0, "{op:?}");
            }

            let mut expected_reads = ranges.lock().unwrap().clone();
            let expected_null = if has_nulls { vec![10, 30] } else { vec![] };
            let rows = reader
                .query(PredicateOperator::IsNull, &[], &data_type)
                .await
                .unwrap();
            assert_eq!(rows.iter().collect::<Vec<_>>(), expected_null);
            if let Some(range) = &null_range {
                expected_reads.push(range.clone());
            }
            assert_eq!(*ranges.lock().unwrap(), expected_reads);
            assert_eq!(null_reads(), usize::from(has_nulls));
            for _ in 0..2 {
                let rows = reader
                    .query(PredicateOperator::IsNull, &[], &data_type)
                    .await
                    .unwrap();
                assert_eq!(rows.iter().collect::<Vec<_>>(), expected_null);
            }
            let (left, right) = tokio::join!(
                reader.query(PredicateOperator::IsNull, &[], &data_type),
                reader.query(PredicateOperator::IsNull, &[], &data_type),
            );
            assert_eq!(left.unwrap().iter().collect::<Vec<_>>(), expected_null);
            assert_eq!(right.unwrap().iter().collect::<Vec<_>>(), expected_null);
            assert_eq!(*ranges.lock().unwrap(), expected_reads);
        }
    }
}

#[tokio::test]
async fn test_null_bitmap_corruption_is_reported_on_access() {
    for version in [1, 2] {
        for corrupt_crc in [true, false] {
            let buf = VecFileWrite::new();
            let mut writer =
                BTreeIndexWriter::new(Box::new(buf.clone()), 256, BlockCompressionType::None)
                    .with_file_version(version)
                    .unwrap();
            writer.write(None, 10).await.unwrap();
            writer.write(Some(&int_key(1)), 20).await.unwrap();
            let result = writer.finish().await.unwrap();
            let mut data = buf.to_vec();
            let footer = read_footer(&data);
            let handle = footer.null_bitmap_handle.unwrap();
            let bitmap_start = handle.offset as usize;
            let crc_start = bitmap_start + handle.size as usize;
            if corrupt_crc {
                data[crc_start] ^= 1;
            } else {
                // The first bitmap cookie follows the u64 map count and u32 key.
                let cookie_start = bitmap_start + 12;
                data[cookie_start..cookie_start + 4].fill(0);
                let crc = crc32fast::hash(&data[bitmap_start..crc_start]);
                data[crc_start..crc_start + 4].copy_from_slice(&crc.to_le_bytes());
                assert!(
                    roaring::RoaringTreemap::deserialize_from(&data[bitmap_start..crc_start])
                        .is_err()
                );
            }
            let data = Bytes::from(data);
            let ranges = Arc::new(Mutex::new(Vec::new()));
            let reader = BTreeIndexReader::open(
                Box::new(RecordingFileRead {
                    data: data.clone(),
                    ranges: ranges.clone(),
                }),
                data.len() as u64,
                &result.meta,
                int_cmp,
            )
            .await
            .expect("null bitmap corruption must not prevent opening the reader");
            assert_eq!(ranges.lock().unwrap().len(), 2);
            assert_eq!(
                reader
                    .query_equal(&int_key(1))
                    .await
                    .unwrap()
                    .iter()
                    .collect::<Vec<_>>(),
                vec![20],
            );
            let null_range = handle.offset..handle.offset + u64::from(handle.size) + 4;
            assert!(!ranges.lock().unwrap().contains(&null_range));

            let data_type = DataType::Int(crate::spec::IntType::new());
            for _ in 0..2 {
                let error = reader
                    .query(PredicateOperator::IsNull, &[], &data_type)
                    .await
                    .expect_err("null bitmap corruption must not produce an empty result");
                assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
                if corrupt_crc {
                    assert!(error.to_string().contains("Null bitmap CRC mismatch"));
                } else {
                    assert!(error.to_string().contains("unknown cookie value"));
                }
            }
            assert_eq!(
                ranges
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|range| **range == null_range)
                    .count(),
                2,
                "failed initialization must not be cached",
            );
        }
    }
}

#[tokio::test]
async fn test_null_bitmap_read_failure_can_be_retried() {
    struct FailingNullBitmapRead {
        inner: RecordingFileRead,
        null_range: Range<u64>,
        null_reads: AtomicUsize,
    }

    #[async_trait::async_trait]
    impl FileRead for FailingNullBitmapRead {
        async fn read(&self, range: Range<u64>) -> crate::Result<Bytes> {
            if range == self.null_range && self.null_reads.fetch_add(1, AtomicOrdering::SeqCst) == 0
            {
                self.inner.ranges.lock().unwrap().push(range);
                return Err(crate::Error::UnexpectedError {
                    message: "Injected null bitmap read failure".to_string(),
                    source: None,
                });
            }
            self.inner.read(range).await
        }
    }

    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 256, BlockCompressionType::None);
    writer.write(None, 10).await.unwrap();
    writer.write(Some(&int_key(1)), 20).await.unwrap();
    let result = writer.finish().await.unwrap();
    let data = Bytes::from(buf.to_vec());
    let handle = read_footer(&data).null_bitmap_handle.unwrap();
    let null_range = handle.offset..handle.offset + u64::from(handle.size) + 4;
    let ranges = Arc::new(Mutex::new(Vec::new()));
    let reader = BTreeIndexReader::open(
        Box::new(FailingNullBitmapRead {
            inner: RecordingFileRead {
                data: data.clone(),
                ranges: ranges.clone(),
            },
            null_range: null_range.clone(),
            null_reads: AtomicUsize::new(0),
        }),
        data.len() as u64,
        &result.meta,
        int_cmp,
    )
    .await
    .expect("opening must not read the null bitmap");
    assert_eq!(ranges.lock().unwrap().len(), 2);
    let data_type = DataType::Int(crate::spec::IntType::new());
    let error = reader
        .query(PredicateOperator::IsNull, &[], &data_type)
        .await
        .expect_err("the first null bitmap load must return the injected I/O error");
    assert_eq!(error.kind(), std::io::ErrorKind::Other);
    assert!(error
        .to_string()
        .contains("Injected null bitmap read failure"));
    assert_eq!(ranges.lock().unwrap().len(), 3);
    assert_eq!(ranges.lock().unwrap().last(), Some(&null_range));
    assert_eq!(
        reader
            .query_equal(&int_key(1))
            .await
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        vec![20],
    );
    let rows = reader
        .query(PredicateOperator::IsNull, &[], &data_type)
        .await
        .expect("a failed load must allow a successful retry");
    assert_eq!(rows.iter().collect::<Vec<_>>(), vec![10]);
    assert_eq!(
        ranges
            .lock()
            .unwrap()
            .iter()
            .filter(|range| **range == null_range)
            .count(),
        2,
    );
    let reads_after_success = ranges.lock().unwrap().clone();
    assert_eq!(reader.null_bitmap().await.unwrap(), &rows);
    assert_eq!(*ranges.lock().unwrap(), reads_after_success);
}

#[tokio::test]
async fn test_null_bitmap_concurrent_first_queries_share_one_read() {
    struct YieldingFileRead(RecordingFileRead);

    #[async_trait::async_trait]
    impl FileRead for YieldingFileRead {
        async fn read(&self, range: Range<u64>) -> crate::Result<Bytes> {
            let bytes = self.0.read(range).await?;
            tokio::task::yield_now().await;
            Ok(bytes)
        }
    }

    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 256, BlockCompressionType::None);
    writer.write(None, 10).await.unwrap();
    writer.write(None, 30).await.unwrap();
    let result = writer.finish().await.unwrap();
    let data = Bytes::from(buf.to_vec());
    let handle = read_footer(&data).null_bitmap_handle.unwrap();
    let null_range = handle.offset..handle.offset + u64::from(handle.size) + 4;
    let ranges = Arc::new(Mutex::new(Vec::new()));
    let reader = BTreeIndexReader::open(
        Box::new(YieldingFileRead(RecordingFileRead {
            data: data.clone(),
            ranges: ranges.clone(),
        })),
        data.len() as u64,
        &result.meta,
        int_cmp,
    )
    .await
    .unwrap();
    assert_eq!(ranges.lock().unwrap().len(), 2);
    let data_type = DataType::Int(crate::spec::IntType::new());
    let (left, right) = tokio::join!(
        reader.query(PredicateOperator::IsNull, &[], &data_type),
        reader.query(PredicateOperator::IsNull, &[], &data_type),
    );
    assert_eq!(left.unwrap().iter().collect::<Vec<_>>(), vec![10, 30]);
    assert_eq!(right.unwrap().iter().collect::<Vec<_>>(), vec![10, 30]);
    assert_eq!(ranges.lock().unwrap().len(), 3);
    assert_eq!(ranges.lock().unwrap().last(), Some(&null_range));
}

#[tokio::test]
async fn test_java_v2_posting_encodings() {
    // Existing low-level tests use arbitrary big-endian keys. Java's INT key
    // serializer uses little-endian bytes, so use the production codec here.
    let data_type = DataType::Int(crate::spec::IntType::new());
    let int_key = |v| crate::btree::serialize_datum(&Datum::Int(v), &data_type);
    for fixture in [
        include_bytes!("../../testdata/btree/btree_v2_java_none.bin").as_slice(),
        include_bytes!("../../testdata/btree/btree_v2_java_lz4.bin").as_slice(),
    ] {
        let reader = BTreeIndexReader::open(
            Box::new(BytesFileRead(Bytes::copy_from_slice(fixture))),
            fixture.len() as u64,
            &BTreeIndexMeta::new(Some(int_key(0)), Some(int_key(5)), true),
            crate::btree::make_key_comparator(&data_type),
        )
        .await
        .unwrap();
        let expected = [
            [7].into_iter().collect::<roaring::RoaringTreemap>(),
            [2, 130, 65538, (1u64 << 32) + 5].into_iter().collect(),
            (60000..140000).collect(),
            ((1u64 << 32) - 10..(1u64 << 32) + 10000).collect(),
            [i64::MAX as u64].into_iter().collect(),
            (0..4096).map(|id| (1u64 << 40) + id * 128).collect(),
        ];
        for (key, rows) in expected.iter().enumerate() {
            assert_eq!(
                reader.query_equal(&int_key(key as i32)).await.unwrap(),
                *rows
            );
        }
        assert_eq!(
            reader
                .null_bitmap()
                .await
                .unwrap()
                .iter()
                .collect::<Vec<_>>(),
            vec![4, (1u64 << 32) + 20000]
        );
        assert_eq!(
            reader.query_in(&[&int_key(1), &int_key(3)]).await.unwrap(),
            &expected[1] | &expected[3]
        );
        assert_eq!(
            reader
                .range_query(&int_key(1), &int_key(3), false, false)
                .await
                .unwrap(),
            expected[2]
        );
        assert_eq!(
            reader.scan_entries(|key| key == int_key(2)).await.unwrap(),
            expected[2]
        );
    }
}

#[tokio::test]
async fn test_v2_writer_matches_java_fixture() {
    let data_type = DataType::Int(crate::spec::IntType::new());
    let int_key = |v| crate::btree::serialize_datum(&Datum::Int(v), &data_type);
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::with_comparator(
        Box::new(buf.clone()),
        64,
        BlockCompressionType::None,
        crate::btree::make_key_comparator(&data_type),
    )
    .with_file_version(2)
    .unwrap();
    writer.write(Some(&int_key(0)), 7).await.unwrap();
    for row in [2, 130, 65538, (1i64 << 32) + 5] {
        writer.write(Some(&int_key(1)), row).await.unwrap();
    }
    for row in 60000..140000 {
        writer.write(Some(&int_key(2)), row).await.unwrap();
    }
    for row in (1i64 << 32) - 10..(1i64 << 32) + 10000 {
        writer.write(Some(&int_key(3)), row).await.unwrap();
    }
    writer.write(Some(&int_key(4)), i64::MAX).await.unwrap();
    for id in 0..4096 {
        writer
            .write(Some(&int_key(5)), (1i64 << 40) + id * 128)
            .await
            .unwrap();
    }
    writer.write(None, 4).await.unwrap();
    writer.write(None, (1i64 << 32) + 20000).await.unwrap();
    writer.finish().await.unwrap();
    assert_eq!(
        buf.to_vec(),
        include_bytes!("../../testdata/btree/btree_v2_java_none.bin")
    );
    assert!(
        include_bytes!("../../testdata/btree/btree_v2_java_lz4.bin").len()
            < include_bytes!("../../testdata/btree/btree_v2_java_none.bin").len()
    );
}

#[test]
fn test_unsupported_version_is_rejected() {
    for version in [0u32, 3, u32::MAX] {
        let mut bytes = include_bytes!("../../testdata/btree/btree_v2_java_none.bin").to_vec();
        let pos = bytes.len() - 8;
        bytes[pos..pos + 4].copy_from_slice(&version.to_le_bytes());
        assert!(BTreeFileFooter::read_footer(&bytes[bytes.len() - 52..]).is_err());
        assert!(BTreeIndexWriter::new(
            Box::new(VecFileWrite::new()),
            64,
            BlockCompressionType::None
        )
        .with_file_version(version)
        .is_err());
    }
}

#[tokio::test]
#[ignore = "manual release benchmark; no wall-clock assertions"]
async fn benchmark_btree_v1_v2_postings() {
    use std::hint::black_box;
    use std::time::Instant;
    let count = 1_200_000;
    let mut readers = Vec::new();
    for version in [1, 2] {
        let buf = VecFileWrite::new();
        let mut writer =
            BTreeIndexWriter::new(Box::new(buf.clone()), 64 * 1024, BlockCompressionType::None)
                .with_file_version(version)
                .unwrap();
        for key in [0, 1] {
            for id in 0..count {
                if (id % 10 != 0) as i32 == key {
                    writer.write(Some(&int_key(key)), id).await.unwrap();
                }
            }
        }
        writer.write(Some(&int_key(2)), count).await.unwrap();
        let result = writer.finish().await.unwrap();
        let reader = write_and_open(&buf, &result, int_cmp).await;
        println!(
            "BTREE_BENCH version={version} file_bytes={}",
            buf.to_vec().len()
        );
        readers.push(reader);
    }
    for (key, expected) in [(0, count / 10), (1, count * 9 / 10), (2, 1)] {
        for reader in &readers {
            for _ in 0..3 {
                assert_eq!(
                    reader.query_equal(&int_key(key)).await.unwrap().len(),
                    expected as u64
                );
            }
        }
        let mut times = [Vec::new(), Vec::new()];
        for round in 0..7 {
            for version in [round % 2, 1 - round % 2] {
                let start = Instant::now();
                let rows = readers[version].query_equal(&int_key(key)).await.unwrap();
                let elapsed = start.elapsed().as_secs_f64() * 1000.0;
                assert_eq!(rows.len(), expected as u64);
                black_box(rows);
                times[version].push(elapsed);
            }
        }
        for samples in &mut times {
            samples.sort_by(f64::total_cmp);
        }
        println!(
            "BTREE_BENCH key={key} rows={expected} v1_ms={:.3} v2_ms={:.3}",
            times[0][3], times[1][3]
        );
    }
}

#[tokio::test]
async fn test_bloom_filter_is_disabled_by_default() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 64, BlockCompressionType::None);
    writer.write(Some(&int_key(1)), 0).await.unwrap();
    writer.finish().await.unwrap();

    assert!(read_footer(&buf.to_vec()).bloom_filter_handle.is_none());
}

#[tokio::test]
async fn test_bloom_filter_skips_missing_point_lookup_data_reads() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::with_comparator_and_options(
        Box::new(buf.clone()),
        64,
        BlockCompressionType::None,
        1,
        true,
        int_cmp,
    );
    for i in 0..1000 {
        let key = int_key(i * 2);
        writer.write(Some(&key), i as i64).await.unwrap();
        if i == 4 {
            writer.write(Some(&key), 1000).await.unwrap();
        }
    }
    let write_result = writer.finish().await.unwrap();
    let data = Bytes::from(buf.to_vec());
    let footer = read_footer(&data);
    let handle = footer
        .bloom_filter_handle
        .expect("enabled non-empty index must write a Bloom filter");
    assert_eq!(handle.expected_entries, 1000, "one entry per distinct key");

    let bloom = BloomFilter::from_bytes(
        handle.expected_entries,
        data.slice(handle.offset as usize..handle.offset as usize + handle.size as usize),
    )
    .unwrap();
    let missing_key = (1..2000)
        .step_by(2)
        .map(int_key)
        .find(|key| !bloom.test_hash(hash_bytes(key)))
        .expect("test data should contain a Bloom-negative missing key");

    for use_in in [false, true] {
        let ranges = Arc::new(Mutex::new(Vec::new()));
        let reader = BTreeIndexReader::open(
            Box::new(RecordingFileRead {
                data: data.clone(),
                ranges: ranges.clone(),
            }),
            data.len() as u64,
            &write_result.meta,
            int_cmp,
        )
        .await
        .unwrap();
        ranges.lock().unwrap().clear();

        let rows = if use_in {
            reader.query_in(&[missing_key.as_slice()]).await.unwrap()
        } else {
            reader.query_equal(&missing_key).await.unwrap()
        };
        assert!(rows.is_empty());
        assert_eq!(
            *ranges.lock().unwrap(),
            vec![handle.offset..handle.offset + u64::from(handle.size)]
        );
    }

    let ranges = Arc::new(Mutex::new(Vec::new()));
    let reader = BTreeIndexReader::open(
        Box::new(RecordingFileRead {
            data: data.clone(),
            ranges: ranges.clone(),
        }),
        data.len() as u64,
        &write_result.meta,
        int_cmp,
    )
    .await
    .unwrap();
    ranges.lock().unwrap().clear();
    let in_keys = [missing_key.as_slice()];
    let (equal_rows, in_rows) =
        tokio::join!(reader.query_equal(&missing_key), reader.query_in(&in_keys));
    assert!(equal_rows.unwrap().is_empty());
    assert!(in_rows.unwrap().is_empty());
    assert_eq!(
        *ranges.lock().unwrap(),
        vec![handle.offset..handle.offset + u64::from(handle.size)],
        "concurrent point lookups should share one lazy Bloom read"
    );

    let reader = write_and_open(&buf, &write_result, int_cmp).await;
    assert_eq!(
        reader
            .query_equal(&int_key(8))
            .await
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        vec![4, 1000]
    );
}

#[tokio::test]
async fn test_duplicate_keys() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 256, BlockCompressionType::None);

    let key = int_key(42);
    writer.write(Some(&key), 100).await.unwrap();
    writer.write(Some(&key), 200).await.unwrap();
    writer.write(Some(&key), 300).await.unwrap();

    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, int_cmp).await;

    let bm = reader.query_equal(&int_key(42)).await.unwrap();
    assert_eq!(bm.len(), 3);
    assert!(bm.contains(100));
    assert!(bm.contains(200));
    assert!(bm.contains(300));
}

#[tokio::test]
async fn test_null_keys() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 256, BlockCompressionType::None);

    writer.write(None, 10).await.unwrap();
    writer.write(Some(&int_key(1)), 20).await.unwrap();
    writer.write(None, 30).await.unwrap();
    writer.write(Some(&int_key(2)), 40).await.unwrap();

    let result = writer.finish().await.unwrap();
    assert_eq!(result.row_count, 4);
    assert!(result.meta.has_nulls);

    let reader = write_and_open(&buf, &result, int_cmp).await;

    let null_bm = reader.null_bitmap().await.unwrap();
    assert!(null_bm.contains(10));
    assert!(null_bm.contains(30));
    assert!(!null_bm.contains(20));
    assert!(!null_bm.contains(40));

    let all = reader.all_non_null_rows().await.unwrap();
    assert_eq!(all.len(), 2);
}

#[tokio::test]
async fn test_only_nulls() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 256, BlockCompressionType::None);

    writer.write(None, 1).await.unwrap();
    writer.write(None, 2).await.unwrap();
    writer.write(None, 3).await.unwrap();

    let result = writer.finish().await.unwrap();
    assert!(result.meta.only_nulls());
    assert!(result.meta.has_nulls);

    let reader = write_and_open(&buf, &result, int_cmp).await;
    let null_bm = reader.null_bitmap().await.unwrap();
    assert_eq!(null_bm.len(), 3);
}

#[tokio::test]
async fn test_equal_query() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 64, BlockCompressionType::None);

    for i in 0..50 {
        writer.write(Some(&int_key(i)), i as i64).await.unwrap();
    }

    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, int_cmp).await;

    let bm = reader.query_equal(&int_key(25)).await.unwrap();
    assert_eq!(bm.len(), 1);
    assert!(bm.contains(25));

    let bm = reader.query_equal(&int_key(999)).await.unwrap();
    assert_eq!(bm.len(), 0);
}

#[tokio::test]
async fn test_range_queries() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 64, BlockCompressionType::None);

    for i in 0..20 {
        writer
            .write(Some(&int_key(i * 10)), i as i64)
            .await
            .unwrap();
    }

    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, int_cmp).await;

    let bm = reader.query_less_than(&int_key(50)).await.unwrap();
    assert_eq!(bm.len(), 5);

    let bm = reader.query_greater_or_equal(&int_key(150)).await.unwrap();
    assert_eq!(bm.len(), 5);

    let bm = reader
        .query_between(&int_key(30), &int_key(70))
        .await
        .unwrap();
    assert_eq!(bm.len(), 5);
}

#[tokio::test]
async fn test_prefix_query() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 64, BlockCompressionType::None);

    let keys = ["apple", "apply", "apricot", "banana", "band", "bee"];
    for (i, k) in keys.iter().enumerate() {
        writer.write(Some(k.as_bytes()), i as i64).await.unwrap();
    }

    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, |a: &[u8], b: &[u8]| Ok(a.cmp(b))).await;

    let bm = reader.query_prefix(b"ap").await.unwrap();
    assert_eq!(bm.len(), 3);
    assert!(bm.contains(0) && bm.contains(1) && bm.contains(2));

    let bm = reader.query_prefix(b"app").await.unwrap();
    assert_eq!(bm.len(), 2);
    assert!(bm.contains(0) && bm.contains(1));

    let bm = reader.query_prefix(b"ban").await.unwrap();
    assert_eq!(bm.len(), 2);
    assert!(bm.contains(3) && bm.contains(4));

    let bm = reader.query_prefix(b"b").await.unwrap();
    assert_eq!(bm.len(), 3);

    let bm = reader.query_prefix(b"z").await.unwrap();
    assert_eq!(bm.len(), 0);
    let bm = reader.query_prefix(b"").await.unwrap();
    assert_eq!(bm.len(), keys.len() as u64);
}

#[tokio::test]
async fn test_string_fallback_scan_query() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 32, BlockCompressionType::None);

    writer.write(None, 99).await.unwrap();
    let keys = [
        ("alice", 0),
        ("alpine", 1),
        ("bob", 2),
        ("carol", 3),
        ("malice", 4),
        ("office", 5),
    ];
    for (key, row_id) in keys {
        writer.write(Some(key.as_bytes()), row_id).await.unwrap();
    }

    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, |a: &[u8], b: &[u8]| Ok(a.cmp(b))).await;
    let data_type = DataType::VarChar(VarCharType::string_type());

    let ends_with = reader
        .query(
            PredicateOperator::EndsWith,
            &[Datum::String("ice".to_string())],
            &data_type,
        )
        .await
        .unwrap();
    assert_eq!(ends_with.iter().collect::<Vec<_>>(), vec![0, 4, 5]);

    let contains = reader
        .query(
            PredicateOperator::Contains,
            &[Datum::String("o".to_string())],
            &data_type,
        )
        .await
        .unwrap();
    assert_eq!(contains.iter().collect::<Vec<_>>(), vec![2, 3, 5]);

    let like = reader
        .query(
            PredicateOperator::Like,
            &[Datum::String("a%c_".to_string())],
            &data_type,
        )
        .await
        .unwrap();
    assert_eq!(like.iter().collect::<Vec<_>>(), vec![0]);
}

#[tokio::test]
async fn test_not_equal_query() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 256, BlockCompressionType::None);

    for i in 0..5 {
        writer.write(Some(&int_key(i)), i as i64).await.unwrap();
    }

    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, int_cmp).await;

    let bm = reader.query_not_equal(&int_key(2)).await.unwrap();
    assert_eq!(bm.len(), 4);
    assert!(!bm.contains(2));
}

#[tokio::test]
async fn test_in_query() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 64, BlockCompressionType::None);

    for i in 0..10 {
        writer.write(Some(&int_key(i)), i as i64).await.unwrap();
    }

    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, int_cmp).await;

    let keys: Vec<Vec<u8>> = vec![int_key(2), int_key(5), int_key(8)];
    let key_refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
    let bm = reader.query_in(&key_refs).await.unwrap();
    assert_eq!(bm.len(), 3);
    assert!(bm.contains(2));
    assert!(bm.contains(5));
    assert!(bm.contains(8));
}

#[tokio::test]
async fn test_sparse_in_query_reads_only_target_blocks_once() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 64, BlockCompressionType::None);

    for i in 0..1000 {
        writer.write(Some(&int_key(i * 2)), i as i64).await.unwrap();
    }

    let write_result = writer.finish().await.unwrap();
    let data = Bytes::from(buf.to_vec());
    let file_size = data.len() as u64;
    let ranges = Arc::new(Mutex::new(Vec::new()));
    let reader = BTreeIndexReader::open(
        Box::new(RecordingFileRead {
            data,
            ranges: ranges.clone(),
        }),
        file_size,
        &write_result.meta,
        int_cmp,
    )
    .await
    .unwrap();
    ranges.lock().unwrap().clear();

    // Unsorted, duplicate, missing, and out-of-bounds keys exercise filtering as well as lookup.
    // Each nearby group belongs to one target block, with large gaps between the groups.
    let keys = [1998, -2, 2, 1000, 3, 1001, 1002, 4, 1996, 2001, 1000]
        .into_iter()
        .map(int_key)
        .collect::<Vec<_>>();
    let key_refs = keys.iter().map(Vec::as_slice).collect::<Vec<_>>();
    let rows = reader.query_in(&key_refs).await.unwrap();

    assert_eq!(
        rows.iter().collect::<Vec<_>>(),
        vec![1, 2, 500, 501, 998, 999]
    );
    assert_eq!(ranges.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn test_repeated_equal_queries_reuse_data_block() {
    let buf = VecFileWrite::new();
    let mut writer =
        BTreeIndexWriter::new(Box::new(buf.clone()), 1_000_000, BlockCompressionType::None);
    for i in 0..100 {
        writer.write(Some(&int_key(i)), i as i64).await.unwrap();
    }

    let write_result = writer.finish().await.unwrap();
    let data = Bytes::from(buf.to_vec());
    let file_size = data.len() as u64;

    let uncached_ranges = Arc::new(Mutex::new(Vec::new()));
    let uncached = BTreeIndexReader::open_with_data_block_cache(
        Box::new(RecordingFileRead {
            data: data.clone(),
            ranges: Arc::clone(&uncached_ranges),
        }),
        file_size,
        &write_result.meta,
        int_cmp,
        Arc::new(BTreeDataBlockCache::new(0)),
        Arc::from("memory:/uncached.btree"),
    )
    .await
    .unwrap();
    uncached_ranges.lock().unwrap().clear();
    for key in [1, 2, 3] {
        uncached.query_equal(&int_key(key)).await.unwrap();
    }
    assert_eq!(uncached_ranges.lock().unwrap().len(), 3);

    let ranges = Arc::new(Mutex::new(Vec::new()));
    let reader = BTreeIndexReader::open_with_data_block_cache(
        Box::new(RecordingFileRead {
            data,
            ranges: Arc::clone(&ranges),
        }),
        file_size,
        &write_result.meta,
        int_cmp,
        Arc::new(BTreeDataBlockCache::new(1024 * 1024)),
        Arc::from("memory:/first.btree"),
    )
    .await
    .unwrap();
    ranges.lock().unwrap().clear();

    for key in [1, 2, 3] {
        let rows = reader.query_equal(&int_key(key)).await.unwrap();
        assert_eq!(rows.iter().collect::<Vec<_>>(), vec![key as u64]);
    }
    assert_eq!(ranges.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn test_data_block_cache_is_bounded_and_file_scoped() {
    async fn write_file(row_id: i64) -> (Bytes, crate::btree::writer::BTreeWriteResult) {
        let buf = VecFileWrite::new();
        let mut writer =
            BTreeIndexWriter::new(Box::new(buf.clone()), 1_000_000, BlockCompressionType::None);
        writer.write(Some(&int_key(1)), row_id).await.unwrap();
        let result = writer.finish().await.unwrap();
        (Bytes::from(buf.to_vec()), result)
    }

    let cache = Arc::new(BTreeDataBlockCache::new(1024 * 1024));
    let (first_data, first_result) = write_file(1).await;
    let first_ranges = Arc::new(Mutex::new(Vec::new()));
    let first = BTreeIndexReader::open_with_data_block_cache(
        Box::new(RecordingFileRead {
            data: first_data.clone(),
            ranges: Arc::clone(&first_ranges),
        }),
        first_data.len() as u64,
        &first_result.meta,
        int_cmp,
        Arc::clone(&cache),
        Arc::from("memory:/first.btree"),
    )
    .await
    .unwrap();

    let (second_data, second_result) = write_file(2).await;
    let second_ranges = Arc::new(Mutex::new(Vec::new()));
    let second = BTreeIndexReader::open_with_data_block_cache(
        Box::new(RecordingFileRead {
            data: second_data.clone(),
            ranges: Arc::clone(&second_ranges),
        }),
        second_data.len() as u64,
        &second_result.meta,
        int_cmp,
        Arc::clone(&cache),
        Arc::from("memory:/second.btree"),
    )
    .await
    .unwrap();
    first_ranges.lock().unwrap().clear();
    second_ranges.lock().unwrap().clear();

    assert_eq!(
        first
            .query_equal(&int_key(1))
            .await
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        vec![1]
    );
    assert_eq!(
        second
            .query_equal(&int_key(1))
            .await
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        vec![2]
    );
    assert_eq!(first_ranges.lock().unwrap().len(), 1);
    assert_eq!(second_ranges.lock().unwrap().len(), 1);

    let two_file_bytes = cache.retained_bytes();
    assert!(two_file_bytes > 1);
    let bounded_cache = Arc::new(BTreeDataBlockCache::new(two_file_bytes - 1));
    let bounded_first_ranges = Arc::new(Mutex::new(Vec::new()));
    let bounded_first = BTreeIndexReader::open_with_data_block_cache(
        Box::new(RecordingFileRead {
            data: first_data.clone(),
            ranges: Arc::clone(&bounded_first_ranges),
        }),
        first_data.len() as u64,
        &first_result.meta,
        int_cmp,
        Arc::clone(&bounded_cache),
        Arc::from("memory:/bounded-first.btree"),
    )
    .await
    .unwrap();
    let bounded_second_ranges = Arc::new(Mutex::new(Vec::new()));
    let bounded_second = BTreeIndexReader::open_with_data_block_cache(
        Box::new(RecordingFileRead {
            data: second_data.clone(),
            ranges: Arc::clone(&bounded_second_ranges),
        }),
        second_data.len() as u64,
        &second_result.meta,
        int_cmp,
        Arc::clone(&bounded_cache),
        Arc::from("memory:/bounded-second.btree"),
    )
    .await
    .unwrap();
    bounded_first_ranges.lock().unwrap().clear();
    bounded_second_ranges.lock().unwrap().clear();

    bounded_first.query_equal(&int_key(1)).await.unwrap();
    bounded_second.query_equal(&int_key(1)).await.unwrap();
    bounded_first.query_equal(&int_key(1)).await.unwrap();
    assert_eq!(bounded_first_ranges.lock().unwrap().len(), 2);
    assert_eq!(bounded_second_ranges.lock().unwrap().len(), 1);
    assert!(bounded_cache.retained_bytes() < two_file_bytes);

    let ranges = Arc::new(Mutex::new(Vec::new()));
    let uncached = BTreeIndexReader::open_with_data_block_cache(
        Box::new(RecordingFileRead {
            data: first_data.clone(),
            ranges: Arc::clone(&ranges),
        }),
        first_data.len() as u64,
        &first_result.meta,
        int_cmp,
        Arc::new(BTreeDataBlockCache::new(0)),
        Arc::from("memory:/uncached.btree"),
    )
    .await
    .unwrap();
    ranges.lock().unwrap().clear();
    uncached.query_equal(&int_key(1)).await.unwrap();
    uncached.query_equal(&int_key(1)).await.unwrap();
    assert_eq!(ranges.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn test_data_block_cache_evicts_by_decoded_bytes() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 64, BlockCompressionType::None);
    for i in 0..100 {
        writer.write(Some(&int_key(i)), i as i64).await.unwrap();
    }
    let write_result = writer.finish().await.unwrap();
    let data = Bytes::from(buf.to_vec());
    let file_size = data.len() as u64;

    let measuring_cache = Arc::new(BTreeDataBlockCache::new(usize::MAX));
    let measuring_reader = BTreeIndexReader::open_with_data_block_cache(
        Box::new(BytesFileRead(data.clone())),
        file_size,
        &write_result.meta,
        int_cmp,
        Arc::clone(&measuring_cache),
        Arc::from("memory:/measuring.btree"),
    )
    .await
    .unwrap();
    measuring_reader.query_equal(&int_key(0)).await.unwrap();
    measuring_reader.query_equal(&int_key(99)).await.unwrap();
    let two_block_bytes = measuring_cache.retained_bytes();
    assert!(two_block_bytes > 2);

    let ranges = Arc::new(Mutex::new(Vec::new()));
    let reader = BTreeIndexReader::open_with_data_block_cache(
        Box::new(RecordingFileRead {
            data,
            ranges: Arc::clone(&ranges),
        }),
        file_size,
        &write_result.meta,
        int_cmp,
        Arc::new(BTreeDataBlockCache::new(two_block_bytes - 1)),
        Arc::from("memory:/bounded.btree"),
    )
    .await
    .unwrap();
    ranges.lock().unwrap().clear();

    reader.query_equal(&int_key(0)).await.unwrap();
    reader.query_equal(&int_key(99)).await.unwrap();
    reader.query_equal(&int_key(0)).await.unwrap();
    assert_eq!(ranges.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn test_sparse_in_query_seeks_each_key_within_target_block() {
    let buf = VecFileWrite::new();
    let mut writer =
        BTreeIndexWriter::new(Box::new(buf.clone()), 1_000_000, BlockCompressionType::None);

    for i in 0..4096 {
        writer.write(Some(&int_key(i)), i as i64).await.unwrap();
    }

    let write_result = writer.finish().await.unwrap();
    let data = Bytes::from(buf.to_vec());
    let file_size = data.len() as u64;
    let comparisons = Arc::new(AtomicUsize::new(0));
    let query_comparisons = comparisons.clone();
    let reader = BTreeIndexReader::open(
        Box::new(BytesFileRead(data)),
        file_size,
        &write_result.meta,
        move |a, b| {
            query_comparisons.fetch_add(1, AtomicOrdering::Relaxed);
            int_cmp(a, b)
        },
    )
    .await
    .unwrap();
    comparisons.store(0, AtomicOrdering::Relaxed);

    let keys = [int_key(1), int_key(4094)];
    let key_refs = keys.iter().map(Vec::as_slice).collect::<Vec<_>>();
    let rows = reader.query_in(&key_refs).await.unwrap();

    assert_eq!(rows.iter().collect::<Vec<_>>(), vec![1, 4094]);
    let comparison_count = comparisons.load(AtomicOrdering::Relaxed);
    assert!(
        comparison_count < 100,
        "sparse IN should seek target keys instead of scanning the block; comparisons: {comparison_count}"
    );
}

#[tokio::test]
async fn test_string_keys() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 64, BlockCompressionType::None);

    let keys = ["apple", "banana", "cherry", "date", "elderberry"];
    for (i, k) in keys.iter().enumerate() {
        writer.write(Some(k.as_bytes()), i as i64).await.unwrap();
    }

    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, |a: &[u8], b: &[u8]| Ok(a.cmp(b))).await;

    let bm = reader.query_equal(b"apple").await.unwrap();
    assert!(bm.contains(0));
    let bm = reader.query_equal(b"elderberry").await.unwrap();
    assert!(bm.contains(4));
}

#[tokio::test]
async fn test_string_keys_query() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 64, BlockCompressionType::None);

    let keys = ["apple", "banana", "cherry", "date", "elderberry"];
    for (i, k) in keys.iter().enumerate() {
        writer.write(Some(k.as_bytes()), i as i64).await.unwrap();
    }

    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, |a: &[u8], b: &[u8]| Ok(a.cmp(b))).await;

    let bm = reader.query_equal(b"cherry").await.unwrap();
    assert_eq!(bm.len(), 1);
    assert!(bm.contains(2));
}

#[tokio::test]
async fn test_large_dataset() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 4096, BlockCompressionType::None);

    let n = 10000;
    for i in 0..n {
        writer.write(Some(&int_key(i)), i as i64).await.unwrap();
    }

    let result = writer.finish().await.unwrap();
    assert_eq!(result.row_count, n as u64);

    let reader = write_and_open(&buf, &result, int_cmp).await;

    let bm = reader.query_equal(&int_key(5000)).await.unwrap();
    assert_eq!(bm.len(), 1);
    assert!(bm.contains(5000));

    let bm = reader
        .query_between(&int_key(100), &int_key(199))
        .await
        .unwrap();
    assert_eq!(bm.len(), 100);
}

#[test]
fn test_meta_serialization() {
    let meta = BTreeIndexMeta::new(Some(int_key(0)), Some(int_key(99)), false);
    let bytes = meta.serialize();
    let decoded = BTreeIndexMeta::deserialize(&bytes).unwrap();
    assert_eq!(decoded.first_key, Some(int_key(0)));
    assert_eq!(decoded.last_key, Some(int_key(99)));
    assert!(!decoded.has_nulls);
}

#[tokio::test]
async fn test_supported_compressions() {
    for compression_type in [
        BlockCompressionType::Zstd,
        BlockCompressionType::Lz4,
        BlockCompressionType::Lzo,
    ] {
        let buf = VecFileWrite::new();
        let mut writer = BTreeIndexWriter::with_compression_level(
            Box::new(buf.clone()),
            64,
            compression_type,
            7,
        );

        for i in 0..100 {
            writer.write(Some(&int_key(i)), i as i64).await.unwrap();
        }

        let result = writer.finish().await.unwrap();
        let reader = write_and_open(&buf, &result, int_cmp).await;

        let all = reader.all_non_null_rows().await.unwrap();
        assert_eq!(all.len(), 100, "{compression_type:?}");

        let bm = reader.query_equal(&int_key(50)).await.unwrap();
        assert_eq!(bm.len(), 1, "{compression_type:?}");
        assert!(bm.contains(50), "{compression_type:?}");
    }
}

#[tokio::test]
async fn test_single_entry() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 256, BlockCompressionType::None);
    writer.write(Some(&int_key(42)), 99).await.unwrap();

    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, int_cmp).await;

    let bm = reader.query_equal(&int_key(42)).await.unwrap();
    assert_eq!(bm.len(), 1);
    assert!(bm.contains(99));

    let all = reader.all_non_null_rows().await.unwrap();
    assert_eq!(all.len(), 1);
}

#[tokio::test]
async fn test_boundary_queries() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 256, BlockCompressionType::None);
    for i in 10..20 {
        writer.write(Some(&int_key(i)), i as i64).await.unwrap();
    }
    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, int_cmp).await;

    let bm = reader.query_less_than(&int_key(10)).await.unwrap();
    assert_eq!(bm.len(), 0);

    let bm = reader.query_greater_than(&int_key(19)).await.unwrap();
    assert_eq!(bm.len(), 0);

    let bm = reader.query_equal(&int_key(10)).await.unwrap();
    assert_eq!(bm.len(), 1);

    let bm = reader.query_equal(&int_key(19)).await.unwrap();
    assert_eq!(bm.len(), 1);

    let bm = reader.query_less_or_equal(&int_key(10)).await.unwrap();
    assert_eq!(bm.len(), 1);

    let bm = reader.query_greater_or_equal(&int_key(19)).await.unwrap();
    assert_eq!(bm.len(), 1);
}

#[tokio::test]
async fn test_large_row_ids() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 256, BlockCompressionType::None);

    let large_ids: Vec<i64> = vec![0, i32::MAX as i64, i64::MAX / 2];
    for (i, &id) in large_ids.iter().enumerate() {
        writer.write(Some(&int_key(i as i32)), id).await.unwrap();
    }

    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, int_cmp).await;

    let bm = reader.query_equal(&int_key(0)).await.unwrap();
    assert!(bm.contains(0));
    let bm = reader.query_equal(&int_key(1)).await.unwrap();
    assert!(bm.contains(i32::MAX as u64));
    let bm = reader.query_equal(&int_key(2)).await.unwrap();
    assert!(bm.contains((i64::MAX / 2) as u64));
}

#[tokio::test]
async fn test_many_duplicate_keys() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 256, BlockCompressionType::None);

    for i in 0..100 {
        writer.write(Some(&int_key(1)), i).await.unwrap();
    }

    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, int_cmp).await;

    let bm = reader.query_equal(&int_key(1)).await.unwrap();
    assert_eq!(bm.len(), 100);
}

#[tokio::test]
async fn test_nulls_with_range_query() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 256, BlockCompressionType::None);

    writer.write(None, 0).await.unwrap();
    for i in 1..=5 {
        writer.write(Some(&int_key(i)), i as i64).await.unwrap();
    }
    writer.write(None, 100).await.unwrap();

    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, int_cmp).await;

    let all = reader.all_non_null_rows().await.unwrap();
    assert_eq!(all.len(), 5);
    assert!(!all.contains(0));
    assert!(!all.contains(100));

    let nulls = reader.null_bitmap().await.unwrap();
    assert_eq!(nulls.len(), 2);
    assert!(nulls.contains(0));
    assert!(nulls.contains(100));
}

#[tokio::test]
async fn test_seek_before_all_keys() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 64, BlockCompressionType::None);
    for i in 100..110 {
        writer.write(Some(&int_key(i)), i as i64).await.unwrap();
    }
    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, int_cmp).await;

    let bm = reader.query_greater_or_equal(&int_key(0)).await.unwrap();
    assert_eq!(bm.len(), 10);
}

#[tokio::test]
async fn test_seek_after_all_keys() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 64, BlockCompressionType::None);
    for i in 0..10 {
        writer.write(Some(&int_key(i)), i as i64).await.unwrap();
    }
    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, int_cmp).await;

    let bm = reader.query_equal(&int_key(999)).await.unwrap();
    assert_eq!(bm.len(), 0);

    let bm = reader.query_greater_or_equal(&int_key(999)).await.unwrap();
    assert_eq!(bm.len(), 0);
}

#[tokio::test]
async fn test_multiple_blocks_range_query() {
    let buf = VecFileWrite::new();
    let mut writer = BTreeIndexWriter::new(Box::new(buf.clone()), 16, BlockCompressionType::None);
    for i in 0..50 {
        writer.write(Some(&int_key(i * 2)), i as i64).await.unwrap();
    }
    let result = writer.finish().await.unwrap();
    let reader = write_and_open(&buf, &result, int_cmp).await;

    let bm = reader
        .query_between(&int_key(20), &int_key(40))
        .await
        .unwrap();
    assert_eq!(bm.len(), 11);

    let bm = reader.query_equal(&int_key(3)).await.unwrap();
    assert_eq!(bm.len(), 0);
}

// ============================================================
// Java compatibility tests — read files generated by Java Paimon
// ============================================================

fn le_int_key(v: i32) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

fn le_int_cmp(a: &[u8], b: &[u8]) -> crate::Result<std::cmp::Ordering> {
    let a_val = i32::from_le_bytes(a.try_into().unwrap());
    let b_val = i32::from_le_bytes(b.try_into().unwrap());
    Ok(a_val.cmp(&b_val))
}

fn load_testdata(name: &str) -> Vec<u8> {
    let path = format!("{}/testdata/btree/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("Failed to read {path}: {e}"))
}

async fn open_testdata<F: Fn(&[u8], &[u8]) -> crate::Result<std::cmp::Ordering>>(
    name: &str,
    meta: &BTreeIndexMeta,
    cmp: F,
) -> BTreeIndexReader<F> {
    let data = Bytes::from(load_testdata(name));
    let file_size = data.len() as u64;
    let reader: Box<dyn crate::io::FileRead> = Box::new(BytesFileRead(data));
    BTreeIndexReader::open(reader, file_size, meta, cmp)
        .await
        .unwrap()
}

#[tokio::test]
async fn test_java_compat_int_no_compress() {
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let reader = open_testdata("btree_int_100_no_compress.bin", &meta, le_int_cmp).await;

    let all = reader.all_non_null_rows().await.unwrap();
    assert_eq!(all.len(), 100);

    let bm = reader.query_equal(&le_int_key(50)).await.unwrap();
    assert_eq!(bm.len(), 1);
    assert!(bm.contains(25));

    let bm = reader
        .query_between(&le_int_key(10), &le_int_key(20))
        .await
        .unwrap();
    assert_eq!(bm.len(), 6);

    let bm = reader.query_equal(&le_int_key(1)).await.unwrap();
    assert_eq!(bm.len(), 0);
}

#[tokio::test]
async fn test_java_compat_int_zstd() {
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let reader = open_testdata("btree_int_100_zstd.bin", &meta, le_int_cmp).await;

    let all = reader.all_non_null_rows().await.unwrap();
    assert_eq!(all.len(), 100);

    let bm = reader.query_equal(&le_int_key(100)).await.unwrap();
    assert_eq!(bm.len(), 1);
    assert!(bm.contains(50));
}

#[tokio::test]
async fn test_java_compat_int_with_nulls() {
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), true);
    let reader = open_testdata("btree_int_100_with_nulls.bin", &meta, le_int_cmp).await;

    let null_bm = reader.null_bitmap().await.unwrap();
    assert!(!null_bm.is_empty());

    let all = reader.all_non_null_rows().await.unwrap();
    assert!(!all.is_empty());

    let total = null_bm.len() + all.len();
    assert!(total > 0);

    let bm = reader.query_equal(&le_int_key(0)).await.unwrap();
    assert_eq!(bm.len(), 1);

    for null_id in null_bm.iter() {
        assert!(!all.contains(null_id));
    }
}

#[tokio::test]
async fn test_java_compat_varchar_no_compress() {
    let meta = BTreeIndexMeta::new(Some(b"a".to_vec()), Some(b"yyyy".to_vec()), false);
    let reader = open_testdata(
        "btree_varchar_100_no_compress.bin",
        &meta,
        |a: &[u8], b: &[u8]| Ok(a.cmp(b)),
    )
    .await;

    let all = reader.all_non_null_rows().await.unwrap();
    assert_eq!(all.len(), 100);

    let bm = reader.query_equal(b"a").await.unwrap();
    assert_eq!(bm.len(), 1);
}

#[tokio::test]
async fn test_java_compat_int_lz4() {
    let meta = BTreeIndexMeta::new(Some(le_int_key(0)), Some(le_int_key(198)), false);
    let reader = open_testdata("btree_int_100_lz4.bin", &meta, le_int_cmp).await;

    let all = reader.all_non_null_rows().await.unwrap();
    assert_eq!(all.len(), 100);

    let bm = reader.query_equal(&le_int_key(100)).await.unwrap();
    assert_eq!(bm.len(), 1);
    assert!(bm.contains(50));
}
