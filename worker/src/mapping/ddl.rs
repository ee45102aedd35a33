//! Suggested DDL: the MySQL type that holds a Paimon type exactly, and a `CREATE TABLE` that
//! fits the Paimon table, offered in errors when the target is missing or a column is.

use paimon::spec::DataType;
use pms_crds::ColumnMapping;

use super::names::{mapped_name, quote_ident};
use crate::source::SourceColumn;

/// The MySQL column type that holds every value of a Paimon type exactly.
pub fn suggested_mysql_type(t: &DataType) -> String {
    with_nullability(base_mysql_type(t), t)
}

fn with_nullability(base: String, t: &DataType) -> String {
    if t.is_nullable() {
        base
    } else {
        format!("{base} NOT NULL")
    }
}

fn base_mysql_type(t: &DataType) -> String {
    match t {
        DataType::Boolean(_) => "BOOLEAN".to_string(),
        DataType::TinyInt(_) => "TINYINT".into(),
        DataType::SmallInt(_) => "SMALLINT".into(),
        DataType::Int(_) => "INT".into(),
        DataType::BigInt(_) => "BIGINT".into(),
        DataType::Float(_) => "FLOAT".into(),
        DataType::Double(_) => "DOUBLE".into(),
        DataType::Decimal(d) => format!("DECIMAL({}, {})", d.precision(), d.scale()),
        DataType::Char(c) => format!("CHAR({}) CHARACTER SET utf8mb4", c.length()),
        DataType::VarChar(v) if v.length() <= 16383 => {
            format!("VARCHAR({}) CHARACTER SET utf8mb4", v.length())
        }
        DataType::VarChar(_) => "LONGTEXT CHARACTER SET utf8mb4".into(),
        DataType::Binary(b) => format!("BINARY({})", b.length()),
        DataType::VarBinary(v) if v.length() <= 65535 => format!("VARBINARY({})", v.length()),
        DataType::VarBinary(_) => "LONGBLOB".into(),
        DataType::Date(_) => "DATE".into(),
        DataType::Time(p) => format!("TIME({})", p.precision()),
        DataType::Timestamp(p) if p.precision() > 6 => format!("VARCHAR({})", 20 + p.precision()),
        DataType::Timestamp(p) => format!("DATETIME({})", p.precision()),
        DataType::LocalZonedTimestamp(p) if p.precision() > 6 => {
            format!("VARCHAR({})", 20 + p.precision())
        }
        DataType::LocalZonedTimestamp(p) => format!("DATETIME({})", p.precision()),
        _ if is_nested(t) => "JSON".into(),
        _ => "LONGTEXT".into(),
    }
}

/// The MySQL column type for a Paimon column: [`suggested_mysql_type`], and for a text key
/// column a collation that compares byte for byte, as Paimon's keys do (see `keys.rs`; MySQL 8:
/// utf8mb4_0900_bin).
pub fn suggested_column_type(c: &SourceColumn) -> String {
    key_column_type(c, MAX_KEY_BYTES)
}

/// [`suggested_column_type`] where the key's long text and bytes columns share `budget` bytes.
fn key_column_type(c: &SourceColumn, budget: u32) -> String {
    if !c.is_key {
        return suggested_mysql_type(&c.data_type);
    }
    // A key is indexed: InnoDB keys hold 3072 bytes, so long text and bytes are capped to
    // their share of it (a longer value then fails its write, loudly; TEXT and BLOB can't be
    // keys at all).
    // CHAR and BINARY would pad or trim keys into one another (see `keys.rs`).
    let base = match &c.data_type {
        DataType::VarChar(v) if v.length() > budget / 4 => {
            format!("VARCHAR({}) CHARACTER SET utf8mb4", budget / 4)
        }
        DataType::VarBinary(v) if v.length() > budget => format!("VARBINARY({budget})"),
        DataType::Char(t) => format!("VARCHAR({}) CHARACTER SET utf8mb4", t.length()),
        DataType::Binary(t) => format!("VARBINARY({})", t.length()),
        t => base_mysql_type(t),
    };
    with_nullability(base, &c.data_type).replacen(
        "CHARACTER SET utf8mb4",
        &format!("CHARACTER SET utf8mb4 COLLATE {NOPAD_BIN}"),
        1,
    )
}

/// The binary NO PAD collation of utf8mb4 in suggested DDL, as MariaDB names it; MySQL 8
/// names it otherwise ([`on_server`]).
pub const NOPAD_BIN: &str = "utf8mb4_nopad_bin";

/// Suggested DDL (or a message that holds some) for the server at hand: [`NOPAD_BIN`] is
/// `binary_no_pad`, the collation that server has.
pub fn on_server(text: &str, binary_no_pad: &str) -> String {
    text.replace(NOPAD_BIN, binary_no_pad)
}

/// The longest key InnoDB indexes, in bytes (a utf8mb4 character counts 4).
const MAX_KEY_BYTES: u32 = 3072;

/// The bytes each long text or bytes key column may take: what the other key columns leave
/// of [`MAX_KEY_BYTES`] (counted generously), shared evenly.
fn long_key_budget(keys: &[&SourceColumn]) -> u32 {
    let long = |c: &&&SourceColumn| match &c.data_type {
        DataType::VarChar(v) => v.length() > MAX_KEY_BYTES / 4 / keys.len() as u32,
        DataType::VarBinary(v) => v.length() > MAX_KEY_BYTES / keys.len() as u32,
        _ => false,
    };
    let fixed: u32 = keys
        .iter()
        .filter(|c| !long(c))
        .map(|c| match &c.data_type {
            DataType::Char(t) => 4 * t.length() as u32,
            DataType::VarChar(t) => 4 * t.length() + 2,
            DataType::Binary(t) => t.length() as u32,
            DataType::VarBinary(t) => t.length() + 2,
            _ => 17,
        })
        .sum();
    let count = keys.iter().filter(long).count().max(1) as u32;
    // Whole characters, a multiple of 4.
    MAX_KEY_BYTES.saturating_sub(fixed) / count / 4 * 4
}

/// What `sink.createTable` runs: [`suggested_create_table`], a no-op when the table exists.
pub fn create_table_statement(
    table: &str,
    source: &[SourceColumn],
    mapping: &ColumnMapping,
) -> String {
    suggested_create_table(table, source, mapping).replacen(
        "CREATE TABLE",
        "CREATE TABLE IF NOT EXISTS",
        1,
    )
}

/// A `CREATE TABLE` that fits the Paimon table, offered when the target is missing.
pub fn suggested_create_table(
    table: &str,
    source: &[SourceColumn],
    mapping: &ColumnMapping,
) -> String {
    let cols: Vec<&SourceColumn> = source
        .iter()
        .filter(|c| c.is_key || mapped_name(c, mapping).is_some())
        .collect();
    let name = |c: &SourceColumn| quote_ident(mapping.rename.get(&c.name).unwrap_or(&c.name));
    let key_columns: Vec<&SourceColumn> = cols.iter().copied().filter(|c| c.is_key).collect();
    let budget = long_key_budget(&key_columns);
    let mut lines: Vec<String> = cols
        .iter()
        .map(|c| format!("  {} {}", name(c), key_column_type(c, budget)))
        .collect();
    let keys: Vec<String> = cols.iter().filter(|c| c.is_key).map(|c| name(c)).collect();
    lines.push(format!("  PRIMARY KEY ({})", keys.join(", ")));
    format!(
        "CREATE TABLE {} (\n{}\n) DEFAULT CHARSET = utf8mb4",
        quote_ident(table),
        lines.join(",\n")
    )
}

/// Whether `t` is a nested type (ARRAY, MAP, ROW, MULTISET): JSON in MySQL.
pub(super) fn is_nested(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Array(_) | DataType::Map(_) | DataType::Row(_) | DataType::Multiset(_)
    )
}
