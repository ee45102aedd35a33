//! Suggested DDL: the MySQL type that holds a Paimon type exactly, and a `CREATE TABLE` that
//! fits the Paimon table, offered in errors when the target is missing or a column is.

use paimon::spec::DataType;
use pms_crds::ColumnMapping;

use super::columns::mapped_name;
use super::type_fit::is_nested;
use crate::source::SourceColumn;

/// The MySQL column type that holds every value of a Paimon type exactly.
pub fn suggested_mysql_type(t: &DataType) -> String {
    let base = match t {
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
    };
    if t.is_nullable() {
        base
    } else {
        format!("{base} NOT NULL")
    }
}

/// The MySQL column type for a Paimon column: [`suggested_mysql_type`], and for a text key
/// column a collation that compares byte for byte, as Paimon's keys do (see `keys.rs`; MySQL 8:
/// utf8mb4_0900_bin).
pub fn suggested_column_type(c: &SourceColumn) -> String {
    let t = suggested_mysql_type(&c.data_type);
    if c.is_key {
        t.replacen(
            "CHARACTER SET utf8mb4",
            "CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin",
            1,
        )
    } else {
        t
    }
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
    let mut lines: Vec<String> = cols
        .iter()
        .map(|c| format!("  {} {}", name(c), suggested_column_type(c)))
        .collect();
    let keys: Vec<String> = cols.iter().filter(|c| c.is_key).map(|c| name(c)).collect();
    lines.push(format!("  PRIMARY KEY ({})", keys.join(", ")));
    format!(
        "CREATE TABLE {} (\n{}\n) DEFAULT CHARSET = utf8mb4",
        quote_ident(table),
        lines.join(",\n")
    )
}

pub fn quote_ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}
