//! The column mapping: which Paimon column goes to which MySQL column and how it is encoded,
//! checked before anything is written. Every problem is listed (not just the first), each
//! with what to change.

use pms_crds::ColumnMapping;

use super::convert::Precision;
use super::ddl::suggested_column_type;
use super::keys::check_keys;
use super::layout::{ColumnPlan, Layout, MappedColumn};
use super::names::{mapped_name, quote_ident};
use super::target::TargetTable;
use super::type_fit::{check_type, declared_precision, text_limit};
use super::value_checks::ValueChecks;
use crate::source::SourceColumn;

/// Builds the layout or lists every problem found (not just the first).
pub fn plan_layout(
    source: &[SourceColumn],
    mapping: &ColumnMapping,
    target: &TargetTable,
    allow_extra_unique_keys: bool,
) -> Result<Layout, Vec<String>> {
    let mut problems = unknown_names(source, mapping);
    problems.extend(colliding_names(source, mapping));
    let mut warnings = Vec::new();
    let mut columns = Vec::new();
    for col in source {
        match map_column(col, mapping, target, &mut warnings) {
            Ok(Some(plan)) => columns.push(plan),
            Ok(None) => {}
            Err(problem) => problems.push(problem),
        }
    }
    // The MySQL columns the Paimon columns name, whether or not their types fit: the NOT NULL
    // and key checks judge the mapping (a column that does not fit is reported once, above).
    let mapped: Vec<MappedColumn> = source
        .iter()
        .filter_map(|c| {
            let target_col = target.column(&mapped_name(c, mapping)?)?;
            Some(MappedColumn {
                mysql: target_col.name.clone(),
                is_key: c.is_key,
            })
        })
        .collect();
    problems.extend(unfilled_not_null(&mapped, target));
    check_keys(
        source,
        &mapped,
        target,
        allow_extra_unique_keys,
        &mut problems,
        &mut warnings,
    );
    if !problems.is_empty() {
        return Err(problems);
    }
    let key_positions = columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.is_key)
        .map(|(i, _)| i)
        .collect();
    let delete_qualifiers = source
        .iter()
        .filter(|s| s.qualifies_deletes)
        .filter_map(|s| columns.iter().position(|c| c.paimon == s.name))
        .collect();
    Ok(Layout {
        columns,
        key_positions,
        delete_qualifiers,
        warnings,
        filter: None,
    })
}

/// Names in `sink.columns` that the Paimon table does not have.
fn unknown_names(source: &[SourceColumn], mapping: &ColumnMapping) -> Vec<String> {
    mapping
        .include
        .iter()
        .flatten()
        .chain(&mapping.exclude)
        .chain(mapping.rename.keys())
        .filter(|name| !source.iter().any(|c| &c.name == *name))
        .map(|name| {
            format!("sink.columns names {name:?}, which is not a column of the Paimon table")
        })
        .collect()
}

/// Two Paimon columns that `sink.columns.rename` maps onto one MySQL column (MySQL names are
/// case-insensitive): each write would name that column twice.
fn colliding_names(source: &[SourceColumn], mapping: &ColumnMapping) -> Vec<String> {
    let mut seen: Vec<(String, &str)> = Vec::new();
    let mut problems = Vec::new();
    for c in source {
        let Some(mysql) = mapped_name(c, mapping) else {
            continue;
        };
        match seen.iter().find(|(m, _)| m.eq_ignore_ascii_case(&mysql)) {
            Some((_, first)) => problems.push(format!(
                "sink.columns.rename maps Paimon columns {first:?} and {:?} onto one MySQL column {mysql:?}: \
                 rename one of them to another name, or leave one out with sink.columns.exclude",
                c.name
            )),
            None => seen.push((mysql, &c.name)),
        }
    }
    problems
}

/// One Paimon column's plan; `None` when `sink.columns` leaves it out.
fn map_column(
    col: &SourceColumn,
    mapping: &ColumnMapping,
    target: &TargetTable,
    warnings: &mut Vec<String>,
) -> Result<Option<ColumnPlan>, String> {
    let Some(mysql) = mapped_name(col, mapping) else {
        return if col.is_key {
            Err(format!(
                "key column {:?} can't be left out by sink.columns",
                col.name
            ))
        } else if col.qualifies_deletes {
            Err(format!(
                "partition column {:?} can't be left out by sink.columns: keys of this cross-partition-update \
                 table move between partitions, and a delete must name the partition it comes from",
                col.name
            ))
        } else {
            Ok(None)
        };
    };
    let Some(target_col) = target.column(&mysql) else {
        let hint = if mysql == col.name {
            String::new()
        } else {
            format!(" (renamed from {:?})", col.name)
        };
        return Err(format!(
            "Paimon column {mysql:?}{hint} has no MySQL column: add it (e.g. `ALTER TABLE … ADD COLUMN {} {}`), \
             or leave it out with sink.columns.exclude",
            quote_ident(&mysql),
            suggested_column_type(col)
        ));
    };
    let (encoding, warning) = check_type(&col.data_type, target_col).map_err(|why| {
        format!(
            "column {:?}: Paimon {} does not fit MySQL {}: {why}; change the column: \
             `ALTER TABLE … MODIFY {} {}`",
            target_col.name,
            col.data_type,
            target_col.column_type,
            quote_ident(&target_col.name),
            suggested_column_type(col)
        )
    })?;
    if let Some(w) = warning {
        warnings.push(format!("column {:?}: {w}", target_col.name));
    }
    let not_null = col.data_type.is_nullable() && !target_col.nullable && !col.is_key;
    if not_null {
        warnings.push(format!(
            "column {:?} is NOT NULL in MySQL but nullable in Paimon: a NULL value will stop the sync",
            target_col.name
        ));
    }
    Ok(Some(ColumnPlan {
        paimon: col.name.clone(),
        mysql: target_col.name.clone(),
        encoding,
        precision: Precision(declared_precision(&col.data_type)),
        is_key: col.is_key,
        checks: ValueChecks {
            not_null,
            max_len: text_limit(&col.data_type, target_col),
        },
    }))
}

/// MySQL columns that must get a value but nothing maps to.
fn unfilled_not_null(mapped: &[MappedColumn], target: &TargetTable) -> Vec<String> {
    target
        .columns
        .iter()
        .filter(|t| !t.nullable && !t.fills_itself)
        .filter(|t| !mapped.iter().any(|c| c.mysql.eq_ignore_ascii_case(&t.name)))
        .map(|t| {
            format!(
                "MySQL column {:?} is NOT NULL without a default and no Paimon column maps to it: \
                 give it a default, make it nullable, or map a column to it with sink.columns.rename",
                t.name
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::convert::Encoding;
    use crate::mapping::suggested_create_table;
    use crate::mapping::target::{IndexPart, TargetColumn, TargetIndex};
    use crate::mapping::type_fit::STRING_TYPES;
    use paimon::spec::{BigIntType, DataType, DecimalType, TimestampType, VarCharType};

    fn src() -> Vec<SourceColumn> {
        vec![
            SourceColumn {
                name: "id".into(),
                data_type: DataType::BigInt(BigIntType::with_nullable(false)),
                is_key: true,
                qualifies_deletes: false,
            },
            SourceColumn {
                name: "amount".into(),
                data_type: DataType::Decimal(DecimalType::new(10, 2).unwrap()),
                is_key: false,
                qualifies_deletes: false,
            },
            SourceColumn {
                name: "note".into(),
                data_type: DataType::VarChar(VarCharType::new(20).unwrap()),
                is_key: false,
                qualifies_deletes: false,
            },
            SourceColumn {
                name: "ts".into(),
                data_type: DataType::Timestamp(TimestampType::new(9).unwrap()),
                is_key: false,
                qualifies_deletes: false,
            },
        ]
    }

    fn col(name: &str, ty: &str, column_type: &str) -> TargetColumn {
        TargetColumn {
            name: name.into(),
            data_type: ty.into(),
            column_type: column_type.into(),
            nullable: true,
            charset: STRING_TYPES.contains(&ty).then(|| "utf8mb4".into()),
            ..Default::default()
        }
    }

    fn good_target() -> TargetTable {
        let mut amount = col("amount", "decimal", "decimal(12,2)");
        amount.numeric_precision = Some(12);
        amount.numeric_scale = Some(2);
        let mut note = col("note", "varchar", "varchar(20)");
        note.char_max_length = Some(20);
        let mut ts = col("ts", "varchar", "varchar(29)");
        ts.char_max_length = Some(29);
        TargetTable {
            columns: vec![col("id", "bigint", "bigint(20)"), amount, note, ts],
            indexes: vec![TargetIndex::on("PRIMARY", true, &["id"])],
        }
    }

    #[test]
    fn a_rename_onto_another_columns_name_is_refused() {
        let mut mapping = ColumnMapping::default();
        mapping.rename.insert("note".into(), "AMOUNT".into());
        let problems = plan_layout(&src(), &mapping, &good_target(), false).unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.contains("\"amount\" and \"note\" onto one MySQL column \"AMOUNT\"")),
            "{problems:?}"
        );
    }

    #[test]
    fn a_fitting_table_is_accepted_with_text_for_nanoseconds() {
        let layout = plan_layout(&src(), &ColumnMapping::default(), &good_target(), false).unwrap();
        assert_eq!(layout.key_positions, vec![0]);
        assert_eq!(layout.columns[3].encoding, Encoding::Text);
        assert_eq!(layout.columns[1].encoding, Encoding::Native);
    }

    #[test]
    fn missing_key_narrow_types_and_bad_charset_are_all_reported() {
        let mut t = good_target();
        t.indexes.clear();
        t.columns[1].numeric_scale = Some(1);
        t.columns[2].charset = Some("utf8mb3".into());
        t.columns[3] = col("ts", "datetime", "datetime(6)");
        t.columns[3].datetime_precision = Some(6);
        let problems = plan_layout(&src(), &ColumnMapping::default(), &t, false).unwrap_err();
        let all = problems.join("\n");
        assert!(all.contains("PRIMARY KEY"), "{all}");
        assert!(all.contains("scale 1 < 2"), "{all}");
        assert!(all.contains("utf8mb4"), "{all}");
        assert!(all.contains("at most microseconds"), "{all}");
        assert_eq!(problems.len(), 4, "{all}");
    }

    #[test]
    fn extra_unique_key_is_refused_unless_allowed() {
        let mut t = good_target();
        t.indexes.push(TargetIndex::on("uk_note", true, &["note"]));
        assert!(
            plan_layout(&src(), &ColumnMapping::default(), &t, false).unwrap_err()[0]
                .contains("uk_note")
        );
        let layout = plan_layout(&src(), &ColumnMapping::default(), &t, true).unwrap();
        assert!(layout.warnings.iter().any(|w| w.contains("uk_note")));
    }

    /// MySQL 8 reports a functional key part with no column (`COLUMN_NAME` NULL): a unique
    /// index with one is another unique key, never the Paimon key.
    #[test]
    fn a_functional_unique_key_is_another_unique_key() {
        let expression = IndexPart {
            column: None,
            prefix: None,
        };
        let mut t = good_target();
        t.indexes.push(TargetIndex {
            name: "uk_lower_note".into(),
            unique: true,
            parts: vec![expression.clone()],
        });
        let problems = plan_layout(&src(), &ColumnMapping::default(), &t, false).unwrap_err();
        assert!(
            problems[0].contains("UNIQUE key uk_lower_note((an expression)) is not the Paimon key"),
            "{problems:?}"
        );
        t.indexes[0].parts = vec![expression];
        let problems = plan_layout(&src(), &ColumnMapping::default(), &t, true).unwrap_err();
        assert!(
            problems[0].contains("its unique keys are PRIMARY((an expression))"),
            "{problems:?}"
        );
    }

    #[test]
    fn mapping_renames_excludes_and_catches_unmapped_not_null() {
        let mut t = good_target();
        t.columns[2].name = "comment".into();
        let mut extra = col("required", "int", "int(11)");
        extra.nullable = false;
        t.columns.push(extra);
        let mapping = ColumnMapping {
            exclude: vec!["ts".into()],
            rename: [("note".to_string(), "comment".to_string())].into(),
            ..Default::default()
        };
        let problems = plan_layout(&src(), &mapping, &t, false).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("\"required\""));
        t.columns.pop();
        let layout = plan_layout(&src(), &mapping, &t, false).unwrap();
        assert_eq!(
            layout
                .columns
                .iter()
                .map(|c| c.mysql.as_str())
                .collect::<Vec<_>>(),
            ["id", "amount", "comment"]
        );
    }

    #[test]
    fn a_text_key_that_does_not_fit_is_offered_a_type_with_a_binary_collation() {
        let mut source = src();
        source[2].is_key = true; // note VARCHAR(20), part of the key
        let mut t = good_target();
        t.columns[2].char_max_length = Some(8);
        t.columns[2].column_type = "varchar(8)".into();
        t.indexes[0].parts.push(IndexPart::whole("note"));
        let problems = plan_layout(&source, &ColumnMapping::default(), &t, false).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].contains(
                "MODIFY `note` VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin`"
            ),
            "{problems:?}"
        );
    }

    #[test]
    fn suggested_ddl_names_the_key() {
        let ddl = suggested_create_table("orders", &src(), &ColumnMapping::default());
        assert!(
            ddl.contains("`id` BIGINT NOT NULL")
                && ddl.contains("PRIMARY KEY (`id`)")
                && ddl.contains("VARCHAR(29)"),
            "{ddl}"
        );
    }
}
