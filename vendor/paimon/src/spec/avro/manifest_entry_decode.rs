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

use super::cursor::AvroCursor;
use super::decode::{neg_count_to_usize, AvroRecordDecode};
use super::decode_helpers::{
    extract_record_schema, read_bytes_field, read_int_field, read_long_field, read_string_field,
    EMPTY_PARTITION,
};
use super::manifest_file_meta_decode::decode_nullable_binary_table_stats;
use super::schema::{skip_nullable_field, WriterSchema};
use crate::spec::manifest_common::FileKind;
use crate::spec::stats::BinaryTableStats;
use crate::spec::DataFileMeta;
use crate::spec::ManifestEntry;
use chrono::{DateTime, Utc};

impl AvroRecordDecode for ManifestEntry {
    fn decode(cursor: &mut AvroCursor, writer_schema: &WriterSchema) -> crate::Result<Self> {
        // The generic OCF decoder already consumed the top-level union.
        decode_manifest_entries_filtered(cursor, writer_schema, false, &mut |_, _, _, _| true)?
            .ok_or_else(missing_file_metadata)
    }
}

/// Decode ManifestEntry records with a filter applied on lightweight fields.
///
/// When the writer places the lightweight fields before _FILE, rejected entries
/// skip DataFileMeta decoding entirely. Otherwise, retain the entry conservatively.
pub(crate) fn decode_manifest_entries_filtered<F>(
    cursor: &mut AvroCursor,
    writer_schema: &WriterSchema,
    is_union_wrapped: bool,
    filter: &mut F,
) -> crate::Result<Option<ManifestEntry>>
where
    F: FnMut(FileKind, &[u8], i32, i32) -> bool,
{
    Ok(decode_manifest_entry_with(
        cursor,
        writer_schema,
        is_union_wrapped,
        filter,
        decode_data_file_meta,
    )?
    .map(|(fields, file)| {
        ManifestEntry::new(
            fields.kind.unwrap_or(FileKind::Add),
            fields.partition().to_vec(),
            fields.bucket.unwrap_or(0),
            fields.total_buckets.unwrap_or(0),
            file,
            fields.version,
        )
    }))
}

#[derive(Default)]
struct ManifestEntryFields<'a> {
    kind: Option<FileKind>,
    partition: Option<&'a [u8]>,
    bucket: Option<i32>,
    total_buckets: Option<i32>,
    version: i32,
}

impl<'a> ManifestEntryFields<'a> {
    fn partition(&self) -> &'a [u8] {
        self.partition
            .filter(|bytes| bytes.len() >= 4)
            .unwrap_or(EMPTY_PARTITION)
    }
}

/// Shared wire walk; collectors choose full or borrowed _FILE decoding.
fn decode_manifest_entry_with<'a, T>(
    cursor: &mut AvroCursor<'a>,
    writer_schema: &WriterSchema,
    is_union_wrapped: bool,
    filter: &mut impl FnMut(FileKind, &[u8], i32, i32) -> bool,
    mut decode_file: impl FnMut(&mut AvroCursor<'a>, &WriterSchema) -> crate::Result<T>,
) -> crate::Result<Option<(ManifestEntryFields<'a>, T)>> {
    if is_union_wrapped && cursor.read_union_index()? == 0 {
        return Err(crate::Error::UnexpectedError {
            message: "avro decode: unexpected null in top-level union".into(),
            source: None,
        });
    }
    let mut fields = ManifestEntryFields::default();
    let mut file = None;
    let mut file_skipped = false;
    for field in &writer_schema.fields {
        match field.name.as_str() {
            "_KIND" => {
                fields.kind = Some(match read_int_field(cursor, field.nullable)? {
                    0 => FileKind::Add,
                    1 => FileKind::Delete,
                    v => {
                        return Err(crate::Error::UnexpectedError {
                            message: format!("unknown FileKind: {v}"),
                            source: None,
                        })
                    }
                });
            }
            "_PARTITION" => {
                fields.partition =
                    Some(decode_nullable_bytes_ref(cursor, field.nullable)?.unwrap_or(&[]))
            }
            "_BUCKET" => fields.bucket = Some(read_int_field(cursor, field.nullable)?),
            "_TOTAL_BUCKETS" => {
                fields.total_buckets = Some(read_int_field(cursor, field.nullable)?)
            }
            "_FILE" => {
                if let (Some(kind), Some(partition), Some(bucket), Some(total_buckets)) = (
                    fields.kind,
                    fields.partition,
                    fields.bucket,
                    fields.total_buckets,
                ) {
                    if !filter(kind, partition, bucket, total_buckets) {
                        skip_nullable_field(cursor, &field.schema, field.nullable)?;
                        file_skipped = true;
                        continue;
                    }
                }
                file = if field.nullable && cursor.read_union_index()? == 0 {
                    None
                } else {
                    let schema = extract_record_schema(&field.schema).ok_or_else(|| {
                        crate::Error::UnexpectedError {
                            message: "avro decode: _FILE field is not a record".into(),
                            source: None,
                        }
                    })?;
                    Some(decode_file(cursor, schema)?)
                };
            }
            "_VERSION" => fields.version = read_int_field(cursor, field.nullable)?,
            _ => skip_nullable_field(cursor, &field.schema, field.nullable)?,
        }
    }
    if file_skipped {
        return Ok(None);
    }
    Ok(Some((fields, file.ok_or_else(missing_file_metadata)?)))
}

/// Borrowed view of the manifest-entry fields needed to count rows per partition.
/// Everything else (key/value stats, min/max keys, ...) is skipped in place, so
/// decoding never materializes the per-file statistics that dominate manifest size.
/// Ordinary files allocate nothing; files with `extra_files` allocate only that list.
#[derive(Debug)]
pub(crate) struct SlimManifestEntry<'a> {
    pub kind: FileKind,
    pub partition: &'a [u8],
    pub bucket: i32,
    pub level: i32,
    pub file_name: &'a str,
    pub row_count: i64,
    pub first_row_id: Option<i64>,
    pub extra_files: Vec<&'a str>,
    pub embedded_index: Option<&'a [u8]>,
    pub external_path: Option<&'a str>,
}

/// Decode one manifest entry as a [`SlimManifestEntry`] borrowing from the block.
pub(crate) fn decode_slim_manifest_entry<'a>(
    cursor: &mut AvroCursor<'a>,
    writer_schema: &WriterSchema,
    is_union_wrapped: bool,
) -> crate::Result<SlimManifestEntry<'a>> {
    let (fields, mut entry) = decode_manifest_entry_with(
        cursor,
        writer_schema,
        is_union_wrapped,
        &mut |_, _, _, _| true,
        decode_slim_data_file,
    )?
    .ok_or_else(missing_file_metadata)?;
    entry.kind = fields.kind.unwrap_or(FileKind::Add);
    entry.partition = fields.partition();
    entry.bucket = fields.bucket.unwrap_or(0);
    Ok(entry)
}

fn decode_slim_data_file<'a>(
    cursor: &mut AvroCursor<'a>,
    writer_schema: &WriterSchema,
) -> crate::Result<SlimManifestEntry<'a>> {
    let mut entry = SlimManifestEntry {
        kind: FileKind::Add,
        partition: EMPTY_PARTITION,
        bucket: 0,
        level: 0,
        file_name: "",
        row_count: DataFileMeta::ROW_COUNT_UNKNOWN,
        first_row_id: None,
        extra_files: Vec::new(),
        embedded_index: None,
        external_path: None,
    };
    for file_field in &writer_schema.fields {
        match file_field.name.as_str() {
            "_FILE_NAME" => {
                if !file_field.nullable || cursor.read_union_index()? != 0 {
                    entry.file_name = cursor.read_string()?;
                }
            }
            "_ROW_COUNT" => {
                entry.row_count = decode_nullable_long(cursor, file_field.nullable)?
                    .unwrap_or(DataFileMeta::ROW_COUNT_UNKNOWN)
            }
            "_LEVEL" => entry.level = read_int_field(cursor, file_field.nullable)?,
            "_EXTRA_FILES" => {
                entry.extra_files = decode_borrowed_string_array(cursor, file_field.nullable)?
            }
            "_EMBEDDED_FILE_INDEX" => {
                entry.embedded_index = decode_nullable_bytes_ref(cursor, file_field.nullable)?
            }
            "_EXTERNAL_PATH" => {
                entry.external_path = decode_nullable_string_ref(cursor, file_field.nullable)?
            }
            "_FIRST_ROW_ID" => {
                entry.first_row_id = decode_nullable_long(cursor, file_field.nullable)?
            }
            _ => skip_nullable_field(cursor, &file_field.schema, file_field.nullable)?,
        }
    }
    Ok(entry)
}

fn decode_borrowed_string_array<'a>(
    cursor: &mut AvroCursor<'a>,
    nullable: bool,
) -> crate::Result<Vec<&'a str>> {
    if nullable && cursor.read_union_index()? == 0 {
        return Ok(Vec::new());
    }
    let mut values = Vec::new();
    loop {
        let count = cursor.read_long()?;
        if count == 0 {
            break;
        }
        let count = if count < 0 {
            cursor.skip_long()?;
            neg_count_to_usize(count)?
        } else {
            count as usize
        };
        values.reserve(count.min(cursor.remaining()));
        for _ in 0..count {
            values.push(cursor.read_string()?);
        }
    }
    Ok(values)
}

fn decode_nullable_bytes_ref<'a>(
    cursor: &mut AvroCursor<'a>,
    nullable: bool,
) -> crate::Result<Option<&'a [u8]>> {
    if nullable && cursor.read_union_index()? == 0 {
        return Ok(None);
    }
    cursor.read_bytes().map(Some)
}

fn decode_nullable_string_ref<'a>(
    cursor: &mut AvroCursor<'a>,
    nullable: bool,
) -> crate::Result<Option<&'a str>> {
    if nullable && cursor.read_union_index()? == 0 {
        return Ok(None);
    }
    cursor.read_string().map(Some)
}

/// Read string array, handling both `{"type":"array",...}` and `["null", {"type":"array",...}]`.
fn read_string_array_field(cursor: &mut AvroCursor, nullable: bool) -> crate::Result<Vec<String>> {
    if nullable {
        let idx = cursor.read_union_index()?;
        if idx == 0 {
            return Ok(vec![]);
        }
    }
    decode_string_array(cursor)
}

fn decode_data_file_meta(
    cursor: &mut AvroCursor,
    writer_schema: &WriterSchema,
) -> crate::Result<DataFileMeta> {
    let mut file_name: Option<String> = None;
    let mut file_size: Option<i64> = None;
    let mut row_count: Option<i64> = None;
    let mut min_key: Option<Vec<u8>> = None;
    let mut max_key: Option<Vec<u8>> = None;
    let mut key_stats: Option<BinaryTableStats> = None;
    let mut value_stats: Option<BinaryTableStats> = None;
    let mut min_sequence_number: Option<i64> = None;
    let mut max_sequence_number: Option<i64> = None;
    let mut schema_id: Option<i64> = None;
    let mut level: Option<i32> = None;
    let mut extra_files: Option<Vec<String>> = None;
    let mut creation_time: Option<DateTime<Utc>> = None;
    let mut delete_row_count: Option<i64> = None;
    let mut embedded_index: Option<Vec<u8>> = None;
    let mut file_source: Option<i32> = None;
    let mut value_stats_cols: Option<Vec<String>> = None;
    let mut external_path: Option<String> = None;
    let mut first_row_id: Option<i64> = None;
    let mut write_cols: Option<Vec<String>> = None;
    let mut column_max_sequence_numbers: Option<Vec<i64>> = None;

    for field in &writer_schema.fields {
        match field.name.as_str() {
            "_FILE_NAME" => file_name = Some(read_string_field(cursor, field.nullable)?),
            "_FILE_SIZE" => file_size = Some(read_long_field(cursor, field.nullable)?),
            "_ROW_COUNT" => row_count = decode_nullable_long(cursor, field.nullable)?,
            "_MIN_KEY" => min_key = Some(read_bytes_field(cursor, field.nullable)?),
            "_MAX_KEY" => max_key = Some(read_bytes_field(cursor, field.nullable)?),
            "_KEY_STATS" => {
                key_stats =
                    decode_nullable_binary_table_stats(cursor, &field.schema, field.nullable)?
            }
            "_VALUE_STATS" => {
                value_stats =
                    decode_nullable_binary_table_stats(cursor, &field.schema, field.nullable)?
            }
            "_MIN_SEQUENCE_NUMBER" => {
                min_sequence_number = Some(read_long_field(cursor, field.nullable)?)
            }
            "_MAX_SEQUENCE_NUMBER" => {
                max_sequence_number = Some(read_long_field(cursor, field.nullable)?)
            }
            "_SCHEMA_ID" => schema_id = Some(read_long_field(cursor, field.nullable)?),
            "_LEVEL" => level = Some(read_int_field(cursor, field.nullable)?),
            "_EXTRA_FILES" => extra_files = Some(read_string_array_field(cursor, field.nullable)?),
            "_CREATION_TIME" => {
                creation_time = decode_nullable_timestamp_millis(cursor, field.nullable)?
            }
            "_DELETE_ROW_COUNT" => delete_row_count = decode_nullable_long(cursor, field.nullable)?,
            "_EMBEDDED_FILE_INDEX" => {
                embedded_index = decode_nullable_bytes(cursor, field.nullable)?
            }
            "_FILE_SOURCE" => file_source = decode_nullable_int(cursor, field.nullable)?,
            "_VALUE_STATS_COLS" => {
                value_stats_cols = decode_nullable_string_array(cursor, field.nullable)?
            }
            "_EXTERNAL_PATH" => external_path = decode_nullable_string(cursor, field.nullable)?,
            "_FIRST_ROW_ID" => first_row_id = decode_nullable_long(cursor, field.nullable)?,
            "_WRITE_COLS" => write_cols = decode_nullable_string_array(cursor, field.nullable)?,
            "_WRITE_COLS_SEQUENCES" => {
                column_max_sequence_numbers = decode_nullable_long_array(cursor, field.nullable)?
            }
            _ => skip_nullable_field(cursor, &field.schema, field.nullable)?,
        }
    }

    Ok(DataFileMeta {
        file_name: file_name.unwrap_or_default(),
        file_size: file_size.unwrap_or(0),
        row_count: row_count.unwrap_or(DataFileMeta::ROW_COUNT_UNKNOWN),
        min_key: min_key.unwrap_or_default(),
        max_key: max_key.unwrap_or_default(),
        key_stats: key_stats.unwrap_or_else(BinaryTableStats::empty),
        value_stats: value_stats.unwrap_or_else(BinaryTableStats::empty),
        min_sequence_number: min_sequence_number.unwrap_or(0),
        max_sequence_number: max_sequence_number.unwrap_or(0),
        schema_id: schema_id.unwrap_or(0),
        level: level.unwrap_or(0),
        extra_files: extra_files.unwrap_or_default(),
        creation_time,
        delete_row_count,
        embedded_index,
        file_source,
        value_stats_cols,
        external_path,
        first_row_id,
        write_cols,
        column_max_sequence_numbers,
    })
}

fn decode_string_array(cursor: &mut AvroCursor) -> crate::Result<Vec<String>> {
    let mut result = Vec::new();
    loop {
        let count = cursor.read_long()?;
        if count == 0 {
            break;
        }
        let count = if count < 0 {
            cursor.skip_long()?;
            neg_count_to_usize(count)?
        } else {
            count as usize
        };
        result.reserve(count);
        for _ in 0..count {
            result.push(cursor.read_string()?.to_string());
        }
    }
    Ok(result)
}

/// Decode an Avro `array<long>` whose items are plain (non-union) longs, mirroring
/// [`decode_string_array`]. Paimon declares `_WRITE_COLS_SEQUENCES` as
/// `array<bigint not null>`, so items carry no per-element union index.
fn decode_long_array(cursor: &mut AvroCursor) -> crate::Result<Vec<i64>> {
    let mut result = Vec::new();
    loop {
        let count = cursor.read_long()?;
        if count == 0 {
            break;
        }
        let count = if count < 0 {
            cursor.skip_long()?;
            neg_count_to_usize(count)?
        } else {
            count as usize
        };
        // A zigzag long is at least one byte, so the remaining input bounds how many
        // elements can really follow. Reserving the declared count instead would let a
        // corrupt manifest ask for an arbitrary allocation before the first read fails.
        result.reserve(count.min(cursor.remaining()));
        for _ in 0..count {
            result.push(cursor.read_long()?);
        }
    }
    Ok(result)
}

fn decode_nullable_long_array(
    cursor: &mut AvroCursor,
    nullable: bool,
) -> crate::Result<Option<Vec<i64>>> {
    if nullable {
        // A two-branch `["null", array]` union only ever encodes 0 or 1. Anything else
        // means the stream is not where the schema says it is, so stop rather than read
        // the following bytes as an array.
        match cursor.read_union_index()? {
            0 => return Ok(None),
            1 => {}
            other => {
                return Err(crate::Error::DataInvalid {
                    message: format!("invalid union index {other} for _WRITE_COLS_SEQUENCES"),
                    source: None,
                })
            }
        }
    }
    Ok(Some(decode_long_array(cursor)?))
}

fn decode_nullable_long(cursor: &mut AvroCursor, nullable: bool) -> crate::Result<Option<i64>> {
    if nullable {
        let idx = cursor.read_union_index()?;
        if idx == 0 {
            return Ok(None);
        }
    }
    Ok(Some(cursor.read_long()?))
}

fn decode_nullable_int(cursor: &mut AvroCursor, nullable: bool) -> crate::Result<Option<i32>> {
    if nullable {
        let idx = cursor.read_union_index()?;
        if idx == 0 {
            return Ok(None);
        }
    }
    Ok(Some(cursor.read_int()?))
}

fn decode_nullable_bytes(
    cursor: &mut AvroCursor,
    nullable: bool,
) -> crate::Result<Option<Vec<u8>>> {
    if nullable {
        let idx = cursor.read_union_index()?;
        if idx == 0 {
            return Ok(None);
        }
    }
    Ok(Some(cursor.read_bytes()?.to_vec()))
}

fn decode_nullable_string(
    cursor: &mut AvroCursor,
    nullable: bool,
) -> crate::Result<Option<String>> {
    if nullable {
        let idx = cursor.read_union_index()?;
        if idx == 0 {
            return Ok(None);
        }
    }
    Ok(Some(cursor.read_string()?.to_string()))
}

pub(super) fn decode_nullable_string_array(
    cursor: &mut AvroCursor,
    nullable: bool,
) -> crate::Result<Option<Vec<String>>> {
    if nullable {
        let idx = cursor.read_union_index()?;
        if idx == 0 {
            return Ok(None);
        }
    }
    Ok(Some(decode_string_array(cursor)?))
}

fn decode_nullable_timestamp_millis(
    cursor: &mut AvroCursor,
    nullable: bool,
) -> crate::Result<Option<DateTime<Utc>>> {
    if nullable {
        let idx = cursor.read_union_index()?;
        if idx == 0 {
            return Ok(None);
        }
    }
    let millis = cursor.read_long()?;
    let secs = millis.div_euclid(1000);
    let nanos = (millis.rem_euclid(1000) * 1_000_000) as u32;
    Ok(DateTime::from_timestamp(secs, nanos))
}

fn missing_file_metadata() -> crate::Error {
    crate::Error::DataInvalid {
        message: "manifest entry is missing non-null _FILE metadata".into(),
        source: None,
    }
}
