//! What the MySQL target table looks like, read from `information_schema`.

use mysql_async::prelude::*;
use mysql_async::Conn;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TargetColumn {
    pub name: String,
    /// `DATA_TYPE`, lower case: `int`, `varchar`, `datetime`, …
    pub data_type: String,
    /// `COLUMN_TYPE`, lower case: `int(11) unsigned`, `decimal(10,2)`, …
    pub column_type: String,
    pub nullable: bool,
    /// Has a default, is generated or auto-increments: may be left out of the INSERT.
    pub fills_itself: bool,
    pub char_max_length: Option<u64>,
    pub numeric_precision: Option<u64>,
    pub numeric_scale: Option<u64>,
    pub datetime_precision: Option<u64>,
    pub charset: Option<String>,
}

impl TargetColumn {
    pub fn unsigned(&self) -> bool {
        self.column_type.contains("unsigned")
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TargetIndex {
    pub name: String,
    pub unique: bool,
    pub columns: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct TargetTable {
    pub columns: Vec<TargetColumn>,
    pub indexes: Vec<TargetIndex>,
}

impl TargetTable {
    /// `None` when the table does not exist.
    pub async fn load(conn: &mut Conn, table: &str) -> Result<Option<Self>, mysql_async::Error> {
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
        );
        let rows: Vec<ColumnRow> = conn
            .exec(
                "SELECT COLUMN_NAME, LOWER(DATA_TYPE), LOWER(COLUMN_TYPE), IS_NULLABLE, COLUMN_DEFAULT, EXTRA, \
                 CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION, CHARACTER_SET_NAME \
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
                |(name, data_type, column_type, nullable, default, extra, clen, np, ns, dp, cs)| {
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
                    }
                },
            )
            .collect();
        let stats: Vec<(String, i64, String)> = conn
            .exec(
                "SELECT INDEX_NAME, NON_UNIQUE, COLUMN_NAME FROM information_schema.STATISTICS \
                 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY INDEX_NAME, SEQ_IN_INDEX",
                (table,),
            )
            .await?;
        let mut indexes: Vec<TargetIndex> = Vec::new();
        for (name, non_unique, column) in stats {
            match indexes.last_mut() {
                Some(last) if last.name == name => last.columns.push(column),
                _ => indexes.push(TargetIndex {
                    name,
                    unique: non_unique == 0,
                    columns: vec![column],
                }),
            }
        }
        Ok(Some(Self { columns, indexes }))
    }

    pub fn column(&self, name: &str) -> Option<&TargetColumn> {
        self.columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }
}
