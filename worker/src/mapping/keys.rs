//! The key check: MySQL must have a PRIMARY KEY or UNIQUE key on exactly the Paimon key, and
//! the sequence-guard column must be a column of its own.

use super::columns::{ColumnPlan, Layout};
use super::ddl::quote_ident;
use super::target::TargetTable;
use crate::source::SourceColumn;

/// The target needs a PRIMARY KEY or UNIQUE key on exactly the (mapped) Paimon key columns,
/// or `ON DUPLICATE KEY UPDATE` would insert duplicates or update the wrong row.
pub(super) fn check_keys(
    source: &[SourceColumn],
    columns: &[ColumnPlan],
    target: &TargetTable,
    allow_extra_unique_keys: bool,
    problems: &mut Vec<String>,
    warnings: &mut Vec<String>,
) {
    let mut key: Vec<String> = columns
        .iter()
        .filter(|c| c.is_key)
        .map(|c| c.mysql.to_lowercase())
        .collect();
    if key.is_empty() {
        if !source.iter().any(|c| c.is_key) {
            problems.push(
                "the Paimon table has no primary key; only primary-key tables can be synced".into(),
            );
        }
        return;
    }
    key.sort();
    let same_columns = |cols: &[String]| {
        let mut c: Vec<String> = cols.iter().map(|s| s.to_lowercase()).collect();
        c.sort();
        c == key
    };
    let unique: Vec<_> = target.indexes.iter().filter(|i| i.unique).collect();
    if !unique.iter().any(|i| same_columns(&i.columns)) {
        let cols = key
            .iter()
            .map(|k| quote_ident(k))
            .collect::<Vec<_>>()
            .join(", ");
        let found = if unique.is_empty() {
            "it has no PRIMARY KEY or UNIQUE key".to_string()
        } else {
            format!(
                "its unique keys are {}",
                unique
                    .iter()
                    .map(|i| format!("{}({})", i.name, i.columns.join(", ")))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        };
        problems.push(format!(
            "the MySQL table needs a PRIMARY KEY (or UNIQUE key) on exactly the Paimon key ({cols}), but {found}; \
             without it upserts would insert duplicates: `ALTER TABLE … ADD PRIMARY KEY ({cols})`"
        ));
        return;
    }
    for extra in unique.iter().filter(|i| !same_columns(&i.columns)) {
        let msg = format!(
            "UNIQUE key {}({}) is not the Paimon key: an upsert that collides on it would update another row",
            extra.name,
            extra.columns.join(", ")
        );
        if allow_extra_unique_keys {
            warnings.push(msg);
        } else {
            problems.push(format!(
                "{msg}; drop it or make it non-unique, or accept the risk with sink.allowExtraUniqueKeys: true"
            ));
        }
    }
}

/// The sequence-guard column must be a BIGINT of the target that no Paimon column maps to.
pub fn check_guard_column(
    layout: &Layout,
    target: &TargetTable,
    column: &str,
) -> Result<(), Vec<String>> {
    let problem = match target.column(column) {
        None => format!(
            "sink.sequenceGuard.column {column:?} does not exist: `ALTER TABLE … ADD COLUMN {} BIGINT NULL`",
            quote_ident(column)
        ),
        Some(c) if layout.columns.iter().any(|p| p.mysql.eq_ignore_ascii_case(column)) => {
            format!("sink.sequenceGuard.column {:?} is also a mapped Paimon column; use a column of its own", c.name)
        }
        Some(c) if c.data_type != "bigint" => format!("sink.sequenceGuard.column {:?} must be BIGINT, not {}", c.name, c.column_type),
        Some(_) => return Ok(()),
    };
    Err(vec![problem])
}
