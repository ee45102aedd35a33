//! Read-only questions to the server before the first write: its version and packet limit,
//! what the target table looks like, whether it is empty.

use mysql_async::prelude::*;
use mysql_async::Conn;

use crate::mapping::{IndexPart, TargetColumn, TargetIndex, TargetTable};

/// `None` when the table does not exist.
pub async fn describe_table(
    conn: &mut Conn,
    table: &str,
) -> Result<Option<TargetTable>, mysql_async::Error> {
    type ColumnRow = (
        String,
        String,
        String,
        String,
        Option<String>,
        String,
        Option<u64>,
        Option<u64>,
        Option<u64>,
        Option<u64>,
        Option<String>,
        Option<String>,
    );
    let rows: Vec<ColumnRow> = conn
        .exec(
            "SELECT COLUMN_NAME, LOWER(DATA_TYPE), LOWER(COLUMN_TYPE), IS_NULLABLE, COLUMN_DEFAULT, EXTRA, \
             CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION, CHARACTER_SET_NAME, \
             COLLATION_NAME \
             FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? \
             ORDER BY ORDINAL_POSITION",
            (table,),
        )
        .await?;
    if rows.is_empty() {
        return Ok(None);
    }
    let columns = rows
        .into_iter()
        .map(
            |(
                name,
                data_type,
                column_type,
                nullable,
                default,
                extra,
                clen,
                np,
                ns,
                dp,
                cs,
                collation,
            )| {
                let extra = extra.to_lowercase();
                // MariaDB reports a missing default as NULL or the string 'NULL' for nullable columns.
                let has_default = default.is_some();
                TargetColumn {
                    name,
                    data_type,
                    column_type,
                    nullable: nullable == "YES",
                    fills_itself: has_default
                        || extra.contains("auto_increment")
                        || extra.contains("generated")
                        || extra.contains("virtual")
                        || extra.contains("stored"),
                    char_max_length: clen,
                    numeric_precision: np,
                    numeric_scale: ns,
                    datetime_precision: dp,
                    charset: cs.map(|c| c.to_lowercase()),
                    collation: collation.map(|c| c.to_lowercase()),
                }
            },
        )
        .collect();
    // COLUMN_NAME is NULL for a part of a functional index (MySQL 8), SUB_PART the length of a
    // prefix part (`code(191)`).
    let stats: Vec<(String, i64, Option<String>, Option<u64>)> = conn
        .exec(
            "SELECT INDEX_NAME, NON_UNIQUE, COLUMN_NAME, SUB_PART FROM information_schema.STATISTICS \
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY INDEX_NAME, SEQ_IN_INDEX",
            (table,),
        )
        .await?;
    let mut indexes: Vec<TargetIndex> = Vec::new();
    for (name, non_unique, column, prefix) in stats {
        let part = IndexPart { column, prefix };
        match indexes.last_mut() {
            Some(last) if last.name == name => last.parts.push(part),
            _ => indexes.push(TargetIndex {
                name,
                unique: non_unique == 0,
                parts: vec![part],
            }),
        }
    }
    Ok(Some(TargetTable { columns, indexes }))
}
