//! The key check: MySQL must have a PRIMARY KEY or UNIQUE key on exactly the Paimon key, whose
//! text columns tell apart every two keys Paimon tells apart, and the sequence-guard column must
//! be a column of its own.

use super::ddl::NOPAD_BIN;
use super::layout::{Layout, MappedColumn};
use super::names::quote_ident;
use super::target::{TargetColumn, TargetIndex, TargetTable};
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
        if let Some(problem) = target.column(&column.mysql).and_then(key_column_problem) {
            problems.push(problem);
        }
    }
    // Only whole columns tell keys apart: a prefix part (`code(191)`) makes keys that share
    // the prefix one row, and an expression part is no column at all.
    let on_key = |i: &TargetIndex| {
        let mut c: Vec<String> = i
            .parts
            .iter()
            .map(|p| p.whole_column().map(str::to_lowercase))
            .collect::<Option<_>>()
            .unwrap_or_default();
        c.sort();
        c == key
    };
    let unique: Vec<_> = target.indexes.iter().filter(|i| i.unique).collect();
    if !unique.iter().any(|i| on_key(i)) {
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
                    .map(|i| i.describe())
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        };
        let prefixed: Vec<String> = unique
            .iter()
            .flat_map(|i| &i.parts)
            .filter(|p| p.prefix.is_some())
            .map(|p| p.to_string())
            .collect();
        let prefix_note = if prefixed.is_empty() {
            String::new()
        } else {
            format!(
                " (a prefix part such as {} indexes only the first characters, and keys that share them would be \
                 one row: index the whole column, as VARCHAR short enough for a key or VARBINARY)",
                prefixed.join(", ")
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
            "the MySQL table needs a PRIMARY KEY (or UNIQUE key) on exactly the Paimon key ({cols}), but {found}{prefix_note}; \
             without it upserts would insert duplicates: `ALTER TABLE … {drop}ADD PRIMARY KEY ({cols})`"
        ));
        return;
    }
    for extra in unique.iter().filter(|i| !on_key(i)) {
        let msg = format!(
            "UNIQUE key {} is not the Paimon key: an upsert that collides on it would update another row",
            extra.describe()
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

/// Paimon compares keys byte for byte; a MySQL key column must too, or distinct Paimon keys
/// become one row (one key's upsert overwrites another's row, its delete removes it):
/// - a case- or accent-insensitive collation makes `'a'` and `'A'` one key, a PAD SPACE one
///   (every `_bin` collation of MariaDB and MySQL 5.7, and MySQL 8's `utf8mb4_bin`) `'x'` and
///   `'x '`;
/// - CHAR drops trailing spaces whatever the collation, BINARY pads with zero bytes (`b"a"` is
///   `b"a\0"`): VARCHAR and VARBINARY keep a value as it is.
fn key_column_problem(column: &TargetColumn) -> Option<String> {
    let modify = |ty: String| format!("`ALTER TABLE … MODIFY {} {ty}`", quote_ident(&column.name));
    let length = column.char_max_length.unwrap_or(0);
    match column.data_type.as_str() {
        "char" => {
            return Some(format!(
                "key column {:?} is CHAR, which drops trailing spaces: 'x' and 'x ' would be one MySQL key, and one \
                 key's upsert would overwrite another's row. Use VARCHAR: {}",
                column.name,
                modify(format!("VARCHAR({length}) CHARACTER SET utf8mb4 COLLATE {NOPAD_BIN} NOT NULL"))
            ))
        }
        "binary" => {
            return Some(format!(
                "key column {:?} is BINARY, which pads values with zero bytes: b'a' and b'a\\0' would be one MySQL \
                 key. Use VARBINARY: {}",
                column.name,
                modify(format!("VARBINARY({length}) NOT NULL"))
            ))
        }
        _ => {}
    }
    let collation = column.collation.as_deref()?;
    let binary_no_pad = collation == "binary"
        || collation.contains("nopad_bin")
        || collation.ends_with("_0900_bin");
    (!binary_no_pad).then(|| {
        format!(
            "key column {:?} has collation {collation}, under which distinct Paimon keys are one MySQL key \
             ('a' = 'A', 'x' = 'x '): one key's upsert would overwrite another's row. Give it a binary NO PAD \
             collation: {}",
            column.name,
            modify(format!("{} COLLATE {NOPAD_BIN}", column.column_type.to_uppercase()))
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
            assert_eq!(key_column_problem(&text("varchar", ok)), None, "{ok}");
        }
        for refused in [
            "utf8mb4_general_ci",
            "utf8mb4_unicode_ci",
            "utf8mb4_bin",
            "utf8mb4_0900_ai_ci",
            "utf8mb4_nopad_general_ci",
        ] {
            let problem = key_column_problem(&text("varchar", refused)).expect(refused);
            assert!(
                problem.contains("MODIFY `code` VARCHAR(16) COLLATE utf8mb4_nopad_bin"),
                "{problem}"
            );
        }
        let mut number = text("bigint", "");
        number.collation = None;
        assert_eq!(key_column_problem(&number), None);
    }

    #[test]
    fn padded_key_columns_are_refused() {
        let mut char_key = text("char", "utf8mb4_nopad_bin");
        char_key.char_max_length = Some(8);
        let problem = key_column_problem(&char_key).expect("CHAR");
        assert!(problem.contains("drops trailing spaces"), "{problem}");
        assert!(problem.contains("MODIFY `code` VARCHAR(8)"), "{problem}");
        let mut binary_key = text("binary", "");
        binary_key.collation = None;
        binary_key.char_max_length = Some(4);
        let problem = key_column_problem(&binary_key).expect("BINARY");
        assert!(problem.contains("MODIFY `code` VARBINARY(4)"), "{problem}");
    }
}
