//! The Paimon table's schema changes as they meet the MySQL table, by `source.schemaChanges`:
//! new columns are added (`apply`), left out (`ignore`) or asked for (`fail`); a column MySQL
//! still has under a name Paimon renamed or dropped is never synced silently stale.

use pms_crds::{ColumnMapping, SchemaChanges};

use super::ddl::suggested_mysql_type;
use super::names::mapped_name;
use super::names::quote_ident;
use super::target::TargetTable;
use crate::source::{SchemaHistory, SourceColumn};

/// A mapped Paimon column MySQL lacks.
#[derive(Debug, PartialEq, Eq)]
pub struct NewColumn {
    pub paimon: String,
    pub mysql: String,
    /// A MySQL type that holds every value (`suggested_mysql_type`).
    pub mysql_type: String,
}

/// Mapped non-key Paimon columns MySQL lacks and that are new (not a rename of a column MySQL
/// has): to add under `apply`, or to leave out under `ignore`.
pub fn new_columns(
    source: &[SourceColumn],
    mapping: &ColumnMapping,
    target: &TargetTable,
    history: &SchemaHistory,
) -> Vec<NewColumn> {
    source
        .iter()
        .filter(|c| !c.is_key && renamed_from(c, target, history).is_none())
        .filter_map(|c| Some((c, mapped_name(c, mapping)?)))
        .filter(|(_, name)| target.column(name).is_none())
        .map(|(c, mysql)| NewColumn {
            paimon: c.name.clone(),
            mysql,
            mysql_type: suggested_mysql_type(&c.data_type),
        })
        .collect()
}

/// The earlier name of `col` that MySQL still has a column of, if Paimon renamed it.
fn renamed_from<'a>(
    col: &SourceColumn,
    target: &TargetTable,
    history: &'a SchemaHistory,
) -> Option<&'a String> {
    history
        .renamed
        .get(&col.name)?
        .iter()
        .find(|old| target.column(old).is_some())
}

/// Renames and drops MySQL has not followed: problems, or warnings under `ignore` (drops only:
/// a rename would leave the old column stale and the new one empty).
pub fn check_history(
    source: &[SourceColumn],
    mapping: &ColumnMapping,
    target: &TargetTable,
    history: &SchemaHistory,
    policy: SchemaChanges,
    problems: &mut Vec<String>,
    warnings: &mut Vec<String>,
) {
    for col in source {
        if let Some(old) = renamed_from(col, target, history) {
            if mapped_name(col, mapping).is_some_and(|name| target.column(&name).is_none()) {
                problems.push(format!(
                    "Paimon column {old:?} was renamed to {:?}, and MySQL still has {old:?}: rename it there \
                     (`ALTER TABLE … RENAME COLUMN {} TO {}`) or map it with sink.columns.rename; the sync does not \
                     follow renames",
                    col.name,
                    quote_ident(old),
                    quote_ident(&col.name)
                ));
            }
        }
    }
    let mapped: Vec<String> = source
        .iter()
        .filter_map(|c| mapped_name(c, mapping))
        .collect();
    for name in &history.dropped {
        let Some(column) = target.column(name) else {
            continue;
        };
        if mapped.iter().any(|m| m.eq_ignore_ascii_case(&column.name)) {
            continue;
        }
        let what = format!(
            "Paimon column {name:?} was dropped from the table, and MySQL column {:?} keeps the values it had",
            column.name
        );
        match policy {
            SchemaChanges::Ignore => warnings.push(format!("{what} (source.schemaChanges: ignore)")),
            SchemaChanges::Fail | SchemaChanges::Apply => problems.push(format!(
                "{what}: drop it from MySQL (`ALTER TABLE … DROP COLUMN {}`), rebuild the target, or set \
                 source.schemaChanges: ignore to keep it as it is",
                quote_ident(&column.name)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::TargetColumn;
    use paimon::spec::{BigIntType, DataType, VarCharType};

    fn source(names: &[&str]) -> Vec<SourceColumn> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| SourceColumn {
                name: n.to_string(),
                data_type: if i == 0 {
                    DataType::BigInt(BigIntType::with_nullable(false))
                } else {
                    DataType::VarChar(VarCharType::new(10).unwrap())
                },
                is_key: i == 0,
                qualifies_deletes: false,
            })
            .collect()
    }

    fn target(names: &[&str]) -> TargetTable {
        TargetTable {
            columns: names
                .iter()
                .map(|n| TargetColumn {
                    name: n.to_string(),
                    nullable: true,
                    ..Default::default()
                })
                .collect(),
            indexes: vec![],
        }
    }

    #[test]
    fn new_renamed_and_dropped_columns() {
        let history = SchemaHistory::new(
            &[(0, "id".into()), (1, "remark".into()), (3, "tag".into())],
            &[vec![
                (0, "id".into()),
                (1, "note".into()),
                (2, "old".into()),
            ]],
        );
        let src = source(&["id", "remark", "tag"]);
        let t = target(&["id", "note", "old"]);
        let mapping = ColumnMapping::default();
        let new = new_columns(&src, &mapping, &t, &history);
        assert_eq!(
            new.iter().map(|c| c.mysql.as_str()).collect::<Vec<_>>(),
            ["tag"],
            "a rename is not a new column"
        );
        assert_eq!(new[0].mysql_type, "VARCHAR(10) CHARACTER SET utf8mb4");
        for (policy, problems_expected, warnings_expected) in [
            (SchemaChanges::Apply, 2, 0),
            (SchemaChanges::Fail, 2, 0),
            (SchemaChanges::Ignore, 1, 1),
        ] {
            let (mut problems, mut warnings) = (vec![], vec![]);
            check_history(
                &src,
                &mapping,
                &t,
                &history,
                policy,
                &mut problems,
                &mut warnings,
            );
            assert_eq!(
                problems.len(),
                problems_expected,
                "{policy:?}: {problems:?}"
            );
            assert_eq!(
                warnings.len(),
                warnings_expected,
                "{policy:?}: {warnings:?}"
            );
            assert!(
                problems[0].contains("\"note\" was renamed to \"remark\""),
                "{problems:?}"
            );
        }
        let mut renamed = ColumnMapping::default();
        renamed.rename.insert("remark".into(), "note".into());
        let (mut problems, mut warnings) = (vec![], vec![]);
        check_history(
            &src,
            &renamed,
            &t,
            &history,
            SchemaChanges::Fail,
            &mut problems,
            &mut warnings,
        );
        assert_eq!(
            problems.len(),
            1,
            "mapped back onto the old name, only the drop is left: {problems:?}"
        );
    }
}
