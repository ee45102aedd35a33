//! The key check: MySQL must have a PRIMARY KEY or UNIQUE key on exactly the Paimon key, whose
//! text columns tell apart every two keys Paimon tells apart, and the sequence-guard column must
//! be a column of its own.

use super::layout::{Layout, MappedColumn};
use super::names::quote_ident;
use super::target::{TargetColumn, TargetTable};
use crate::source::SourceColumn;

/// The target needs a PRIMARY KEY or UNIQUE key on exactly the (mapped) Paimon key columns,
/// or `ON DUPLICATE KEY UPDATE` would insert duplicates or update the wrong row. A key column
/// without a MySQL column is reported where columns are mapped; the key is then not compared.
pub(super) fn check_keys(
    source: &[SourceColumn],
    mapped: &[MappedColumn],
    target: &TargetTable,
    allow_extra_unique_keys: bool,
    problems: &mut Vec<String>,
    warnings: &mut Vec<String>,
) {
    let mut key: Vec<String> = mapped
        .iter()
        .filter(|c| c.is_key)
        .map(|c| c.mysql.to_lowercase())
        .collect();
    let paimon_key = source.iter().filter(|c| c.is_key).count();
    if paimon_key == 0 {
        problems.push(
            "the Paimon table has no primary key; only primary-key tables can be synced".into(),
        );
    }
    if paimon_key == 0 || key.len() < paimon_key {
        return;
    }
    key.sort();
    for column in mapped.iter().filter(|c| c.is_key) {
        if let Some(problem) = target.column(&column.mysql).and_then(key_collation_problem) {
            problems.push(problem);
        }
    }
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
        // A table that has a PRIMARY KEY on other columns must drop it first.
        let drop = if unique
            .iter()
            .any(|i| i.name.eq_ignore_ascii_case("PRIMARY"))
        {
            "DROP PRIMARY KEY, "
        } else {
            ""
        };
        problems.push(format!(
            "the MySQL table needs a PRIMARY KEY (or UNIQUE key) on exactly the Paimon key ({cols}), but {found}; \
             without it upserts would insert duplicates: `ALTER TABLE … {drop}ADD PRIMARY KEY ({cols})`"
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

/// Paimon compares keys byte for byte. A case- or accent-insensitive collation on a text key
/// column makes `'a'` and `'A'` one MySQL key, and a PAD SPACE one (every `_bin` collation of
/// MariaDB and MySQL 5.7, and MySQL 8's `utf8mb4_bin`) `'x'` and `'x '`: one key's upsert would
/// overwrite another's row, a delete remove it. CHAR columns drop trailing spaces anyway, so
/// any binary collation does for them.
fn key_collation_problem(column: &TargetColumn) -> Option<String> {
    let collation = column.collation.as_deref()?;
    let binary = collation == "binary" || collation.ends_with("_bin");
    let no_pad = collation == "binary"
        || collation.contains("nopad_bin")
        || collation.ends_with("_0900_bin");
    let fits = if column.data_type == "char" {
        binary
    } else {
        binary && no_pad
    };
    (!fits).then(|| {
        format!(
            "key column {:?} has collation {collation}, under which distinct Paimon keys are one MySQL key \
             ('a' = 'A'{}): one key's upsert would overwrite another's row. Give it a binary NO PAD collation: \
             `ALTER TABLE … MODIFY {} {} COLLATE utf8mb4_nopad_bin` (MariaDB) or `utf8mb4_0900_bin` (MySQL 8)",
            column.name,
            if column.data_type == "char" { "" } else { ", 'x' = 'x '" },
            quote_ident(&column.name),
            column.column_type.to_uppercase()
        )
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn text(data_type: &str, collation: &str) -> TargetColumn {
        TargetColumn {
            name: "code".into(),
            data_type: data_type.into(),
            column_type: format!("{data_type}(16)"),
            collation: Some(collation.into()),
            ..Default::default()
        }
    }

    #[test]
    fn text_keys_need_a_binary_no_pad_collation() {
        for ok in [
            "utf8mb4_nopad_bin",
            "utf8mb4_0900_bin",
            "binary",
            "latin1_nopad_bin",
        ] {
            assert_eq!(key_collation_problem(&text("varchar", ok)), None, "{ok}");
        }
        for refused in [
            "utf8mb4_general_ci",
            "utf8mb4_unicode_ci",
            "utf8mb4_bin",
            "utf8mb4_0900_ai_ci",
            "utf8mb4_nopad_general_ci",
        ] {
            let problem = key_collation_problem(&text("varchar", refused)).expect(refused);
            assert!(
                problem.contains("MODIFY `code` VARCHAR(16) COLLATE utf8mb4_nopad_bin"),
                "{problem}"
            );
        }
        // CHAR drops trailing spaces whatever the collation: binary is enough.
        assert_eq!(key_collation_problem(&text("char", "utf8mb4_bin")), None);
        assert!(key_collation_problem(&text("char", "utf8mb4_general_ci")).is_some());
        let mut number = text("bigint", "");
        number.collation = None;
        assert_eq!(key_collation_problem(&number), None);
    }
}
