//! Maps Paimon columns onto the MySQL table and checks, before anything is written, that the
//! target can hold every value: the seed's pitfalls (no matching key, narrower types) become
//! errors that say what to change.

use paimon::spec::DataType;
use pms_crds::ColumnMapping;

use super::target_schema::{TargetColumn, TargetTable};
use crate::convert::{Encoding, Precision};

/// A Paimon column as the validation needs it.
#[derive(Clone, Debug)]
pub struct SourceColumn {
    pub name: String,
    pub data_type: DataType,
    pub is_key: bool,
}

/// One mapped column: where it comes from, where it goes, how it is encoded.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnPlan {
    pub paimon: String,
    pub mysql: String,
    pub encoding: Encoding,
    pub precision: Precision,
    pub is_key: bool,
}

/// The validated mapping; `key_positions` index into `columns`.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub columns: Vec<ColumnPlan>,
    pub key_positions: Vec<usize>,
    pub warnings: Vec<String>,
}

/// Builds the layout or lists every problem found (not just the first).
pub fn plan_layout(
    source: &[SourceColumn],
    mapping: &ColumnMapping,
    target: &TargetTable,
    allow_extra_unique_keys: bool,
) -> Result<Layout, Vec<String>> {
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    for name in mapping
        .include
        .iter()
        .flatten()
        .chain(&mapping.exclude)
        .chain(mapping.rename.keys())
    {
        if !source.iter().any(|c| &c.name == name) {
            problems.push(format!(
                "sink.columns names {name:?}, which is not a column of the Paimon table"
            ));
        }
    }
    let mut columns = Vec::new();
    for col in source {
        let included = mapping
            .include
            .as_ref()
            .is_none_or(|inc| inc.contains(&col.name));
        let excluded = mapping.exclude.contains(&col.name);
        if col.is_key && (!included || excluded) {
            problems.push(format!(
                "key column {:?} can't be left out by sink.columns",
                col.name
            ));
            continue;
        }
        if !included || excluded {
            continue;
        }
        let mysql = mapping
            .rename
            .get(&col.name)
            .cloned()
            .unwrap_or_else(|| col.name.clone());
        let Some(target_col) = target.column(&mysql) else {
            let hint = if mysql == col.name {
                String::new()
            } else {
                format!(" (renamed from {:?})", col.name)
            };
            problems.push(format!(
                "Paimon column {mysql:?}{hint} has no MySQL column: add it (e.g. `ALTER TABLE … ADD COLUMN {} {}`), \
                 or leave it out with sink.columns.exclude",
                quote_ident(&mysql),
                suggested_mysql_type(&col.data_type)
            ));
            continue;
        };
        match check_type(&col.data_type, target_col) {
            Ok((encoding, warning)) => {
                if let Some(w) = warning {
                    warnings.push(format!("column {:?}: {w}", target_col.name));
                }
                if col.data_type.is_nullable() && !target_col.nullable && !col.is_key {
                    warnings.push(format!(
                        "column {:?} is NOT NULL in MySQL but nullable in Paimon: a NULL value will stop the sync",
                        target_col.name
                    ));
                }
                columns.push(ColumnPlan {
                    paimon: col.name.clone(),
                    mysql: target_col.name.clone(),
                    encoding,
                    precision: Precision(declared_precision(&col.data_type)),
                    is_key: col.is_key,
                });
            }
            Err(why) => problems.push(format!(
                "column {:?}: Paimon {} does not fit MySQL {}: {why}",
                target_col.name, col.data_type, target_col.column_type
            )),
        }
    }
    for t in &target.columns {
        if !t.nullable
            && !t.fills_itself
            && !columns
                .iter()
                .any(|c| c.mysql.eq_ignore_ascii_case(&t.name))
        {
            problems.push(format!(
                "MySQL column {:?} is NOT NULL without a default and no Paimon column maps to it: \
                 give it a default, make it nullable, or map a column to it with sink.columns.rename",
                t.name
            ));
        }
    }
    check_keys(
        source,
        &columns,
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
    Ok(Layout {
        columns,
        key_positions,
        warnings,
    })
}

/// The target needs a PRIMARY KEY or UNIQUE key on exactly the (mapped) Paimon key columns,
/// or `ON DUPLICATE KEY UPDATE` would insert duplicates or update the wrong row.
fn check_keys(
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

fn declared_precision(t: &DataType) -> Option<u32> {
    match t {
        DataType::Timestamp(t) => Some(t.precision()),
        DataType::LocalZonedTimestamp(t) => Some(t.precision()),
        DataType::Time(t) => Some(t.precision()),
        _ => None,
    }
}

/// Integer byte widths, signed range assumed.
fn int_width(mysql_type: &str) -> Option<u32> {
    Some(match mysql_type {
        "tinyint" => 1,
        "smallint" => 2,
        "mediumint" => 3,
        "int" | "integer" => 4,
        "bigint" => 8,
        _ => return None,
    })
}

const STRING_TYPES: &[&str] = &[
    "char",
    "varchar",
    "tinytext",
    "text",
    "mediumtext",
    "longtext",
    "json",
];
const BINARY_TYPES: &[&str] = &[
    "binary",
    "varbinary",
    "tinyblob",
    "blob",
    "mediumblob",
    "longblob",
];

/// Longest text a value of this type can need, in characters (None: unbounded).
fn max_text_len(t: &DataType) -> Option<u64> {
    Some(match t {
        DataType::Boolean(_) => 5,
        DataType::TinyInt(_) => 4,
        DataType::SmallInt(_) => 6,
        DataType::Int(_) => 11,
        DataType::BigInt(_) => 20,
        DataType::Decimal(d) => d.precision() as u64 + 2,
        DataType::Date(_) => 10,
        DataType::Time(t) => 8 + frac_len(t.precision()),
        DataType::Timestamp(t) => 19 + frac_len(t.precision()),
        DataType::LocalZonedTimestamp(t) => 19 + frac_len(t.precision()),
        DataType::Char(c) => c.length() as u64,
        DataType::VarChar(v) if v.length() < i32::MAX as u32 => v.length() as u64,
        DataType::Binary(b) => 2 * b.length() as u64,
        DataType::VarBinary(v) if v.length() < i32::MAX as u32 => 2 * v.length() as u64,
        _ => return None,
    })
}

fn frac_len(p: u32) -> u64 {
    if p == 0 {
        0
    } else {
        p as u64 + 1
    }
}

/// Text column capacity in characters (TEXT types are sized in bytes; utf8mb4 is 4 per char).
fn text_capacity(t: &TargetColumn) -> Option<u64> {
    match t.data_type.as_str() {
        "char" | "varchar" => t.char_max_length,
        "json" | "longtext" | "mediumtext" => None,
        _ => t.char_max_length.map(|bytes| bytes / 4),
    }
}

/// Decides the encoding of one column, or says why the MySQL column can't hold the values.
fn check_type(src: &DataType, t: &TargetColumn) -> Result<(Encoding, Option<String>), String> {
    let ty = t.data_type.as_str();
    let native = |w: Option<String>| Ok((Encoding::Native, w));
    // Any scalar may go to a text column as its canonical text, if it is long enough.
    let as_text = || -> Result<(Encoding, Option<String>), String> {
        if is_nested(src) {
            return Ok((Encoding::Json, None));
        }
        match (max_text_len(src), text_capacity(t)) {
            (Some(need), Some(have)) if need > have => Err(format!(
                "values need up to {need} characters, the column holds {have}"
            )),
            (None, Some(have)) => Ok((
                Encoding::Text,
                Some(format!(
                    "unbounded values into {have} characters: a longer value will stop the sync"
                )),
            )),
            _ => Ok((Encoding::Text, None)),
        }
    };
    let is_text_target = STRING_TYPES.contains(&ty);
    match src {
        _ if is_text_target && !is_string(src) => {
            if !is_nested(src) && ty == "json" {
                return Err("only ARRAY, MAP and ROW go to JSON columns".into());
            }
            as_text()
        }
        DataType::Char(_) | DataType::VarChar(_) if is_text_target => {
            if matches!(
                t.charset.as_deref(),
                Some("utf8") | Some("utf8mb3") | Some("latin1") | Some("ascii")
            ) {
                return Err(format!(
                    "character set {} can't store every Unicode character (4-byte UTF-8 such as emoji); use utf8mb4",
                    t.charset.as_deref().unwrap_or("?")
                ));
            }
            as_text()
        }
        DataType::Boolean(_) if int_width(ty).is_some() || ty == "bit" => native(None),
        DataType::TinyInt(_) | DataType::SmallInt(_) | DataType::Int(_) | DataType::BigInt(_) => {
            let need = match src {
                DataType::TinyInt(_) => 1,
                DataType::SmallInt(_) => 2,
                DataType::Int(_) => 4,
                _ => 8,
            };
            match int_width(ty) {
                Some(_) if t.unsigned() => {
                    Err("the column is UNSIGNED and Paimon integers are signed".into())
                }
                Some(w) if w >= need => native(None),
                Some(_) => Err(format!("needs an integer of at least {need} bytes")),
                None if ty == "decimal" => {
                    let digits = [3u64, 5, 0, 10, 0, 0, 0, 19][need as usize - 1];
                    let int_digits =
                        t.numeric_precision.unwrap_or(0) - t.numeric_scale.unwrap_or(0);
                    if int_digits >= digits {
                        native(None)
                    } else {
                        Err(format!("needs DECIMAL with {digits} integer digits"))
                    }
                }
                None => Err("use an integer column".into()),
            }
        }
        DataType::Float(_) if ty == "float" || ty == "double" => native(None),
        DataType::Double(_) if ty == "double" => native(None),
        DataType::Float(_) | DataType::Double(_) => {
            Err("use FLOAT or DOUBLE (DOUBLE for Paimon DOUBLE)".into())
        }
        DataType::Decimal(d) if ty == "decimal" => {
            let (p, s) = (d.precision() as u64, d.scale() as u64);
            let (tp, ts) = (
                t.numeric_precision.unwrap_or(10),
                t.numeric_scale.unwrap_or(0),
            );
            if ts < s {
                Err(format!(
                    "scale {ts} < {s} would round values; use DECIMAL({}, {s}) or wider",
                    tp.max(p)
                ))
            } else if tp - ts < p - s {
                Err(format!(
                    "{} integer digits < {}; use DECIMAL({}, {ts}) or wider",
                    tp - ts,
                    p - s,
                    p - s + ts
                ))
            } else {
                native(None)
            }
        }
        DataType::Binary(_) | DataType::VarBinary(_) if BINARY_TYPES.contains(&ty) => {
            let need = match src {
                DataType::Binary(b) => Some(b.length() as u64),
                DataType::VarBinary(v) if v.length() < i32::MAX as u32 => Some(v.length() as u64),
                _ => None,
            };
            let have = t.char_max_length;
            match (need, have) {
                (Some(n), Some(h)) if n > h => {
                    Err(format!("values need up to {n} bytes, the column holds {h}"))
                }
                (None, Some(h)) if h < (1 << 24) => native(Some(format!(
                    "unbounded BYTES into {h} bytes: a longer value will stop the sync"
                ))),
                _ => native(None),
            }
        }
        DataType::Date(_) if ty == "date" || ty == "datetime" => native(None),
        DataType::Time(p) if ty == "time" => {
            fraction_fits(p.precision(), t).map(|_| (Encoding::Native, None))
        }
        DataType::Timestamp(p) if ty == "datetime" => {
            fraction_fits(p.precision(), t).map(|_| (Encoding::Native, None))
        }
        DataType::Timestamp(p) if ty == "timestamp" => fraction_fits(p.precision(), t).map(|_| {
            (
                Encoding::Native,
                Some(
                    "MySQL TIMESTAMP only holds 1970–2038; DATETIME holds every Paimon TIMESTAMP"
                        .into(),
                ),
            )
        }),
        DataType::LocalZonedTimestamp(p) if ty == "timestamp" || ty == "datetime" => {
            fraction_fits(p.precision(), t).map(|_| (Encoding::Native, None))
        }
        _ => Err(format!("use {}", suggested_mysql_type(src))),
    }
}

fn fraction_fits(paimon_precision: u32, t: &TargetColumn) -> Result<(), String> {
    let have = t.datetime_precision.unwrap_or(0) as u32;
    if paimon_precision > 6 {
        Err(format!(
            "MySQL keeps at most microseconds, Paimon has {paimon_precision} fraction digits; \
             use a VARCHAR({}) column to keep them exactly",
            19 + paimon_precision + 1
        ))
    } else if have < paimon_precision {
        Err(format!(
            "fraction digits {have} < {paimon_precision}; use precision ({paimon_precision})"
        ))
    } else {
        Ok(())
    }
}

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Char(_) | DataType::VarChar(_))
}

fn is_nested(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Array(_) | DataType::Map(_) | DataType::Row(_) | DataType::Multiset(_)
    )
}

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

/// A `CREATE TABLE` that fits the Paimon table, offered when the target is missing.
pub fn suggested_create_table(
    table: &str,
    source: &[SourceColumn],
    mapping: &ColumnMapping,
) -> String {
    let cols: Vec<&SourceColumn> = source
        .iter()
        .filter(|c| {
            c.is_key
                || (mapping.include.as_ref().is_none_or(|i| i.contains(&c.name))
                    && !mapping.exclude.contains(&c.name))
        })
        .collect();
    let name = |c: &SourceColumn| quote_ident(mapping.rename.get(&c.name).unwrap_or(&c.name));
    let mut lines: Vec<String> = cols
        .iter()
        .map(|c| format!("  {} {}", name(c), suggested_mysql_type(&c.data_type)))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::target_schema::TargetIndex;
    use paimon::spec::{BigIntType, DecimalType, TimestampType, VarCharType};

    fn src() -> Vec<SourceColumn> {
        vec![
            SourceColumn {
                name: "id".into(),
                data_type: DataType::BigInt(BigIntType::with_nullable(false)),
                is_key: true,
            },
            SourceColumn {
                name: "amount".into(),
                data_type: DataType::Decimal(DecimalType::new(10, 2).unwrap()),
                is_key: false,
            },
            SourceColumn {
                name: "note".into(),
                data_type: DataType::VarChar(VarCharType::new(20).unwrap()),
                is_key: false,
            },
            SourceColumn {
                name: "ts".into(),
                data_type: DataType::Timestamp(TimestampType::new(9).unwrap()),
                is_key: false,
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
            indexes: vec![TargetIndex {
                name: "PRIMARY".into(),
                unique: true,
                columns: vec!["id".into()],
            }],
        }
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
        t.indexes.push(TargetIndex {
            name: "uk_note".into(),
            unique: true,
            columns: vec!["note".into()],
        });
        assert!(
            plan_layout(&src(), &ColumnMapping::default(), &t, false).unwrap_err()[0]
                .contains("uk_note")
        );
        let layout = plan_layout(&src(), &ColumnMapping::default(), &t, true).unwrap();
        assert!(layout.warnings.iter().any(|w| w.contains("uk_note")));
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
