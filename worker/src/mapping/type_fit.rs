//! Whether a MySQL column can hold every value of a Paimon type, and how values are encoded
//! for it (natively, as canonical text, or as JSON).

use paimon::spec::DataType;

use super::convert::Encoding;
use super::ddl::{is_nested, suggested_mysql_type};
use super::target::TargetColumn;
use super::value_checks::MaxLen;

pub(super) fn declared_precision(t: &DataType) -> Option<u32> {
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

pub(super) const STRING_TYPES: &[&str] = &[
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

/// The length a text column holds, when a value of `src` as text may be longer (checked by
/// the worker: MySQL would cut excess trailing spaces off without an error).
pub(super) fn text_limit(src: &DataType, t: &TargetColumn) -> Option<MaxLen> {
    let limit = match t.data_type.as_str() {
        "char" | "varchar" => MaxLen::Chars(t.char_max_length?),
        "tinytext" | "text" => MaxLen::Bytes(t.char_max_length?),
        _ => return None,
    };
    let have = text_capacity(t)?;
    (is_nested(src) || max_text_len(src).is_none_or(|need| need > have)).then_some(limit)
}

/// Why a Paimon timestamp into a MySQL `TIMESTAMP` gets a warning: its range is narrower.
const TIMESTAMP_RANGE: &str =
    "MySQL TIMESTAMP only holds 1970-01-01 00:00:01 to 2038-01-19 03:14:07 UTC (a value \
                               outside stops the sync); DATETIME holds every Paimon TIMESTAMP";

/// An encoding, and a warning about values that may still not fit; or why none fits.
type Fit = Result<(Encoding, Option<String>), String>;

fn native(warning: Option<String>) -> Fit {
    Ok((Encoding::Native, warning))
}

/// Decides the encoding of one column, or says why the MySQL column can't hold the values.
pub(super) fn check_type(src: &DataType, t: &TargetColumn) -> Fit {
    let ty = t.data_type.as_str();
    let is_text_target = STRING_TYPES.contains(&ty);
    match src {
        _ if is_text_target && !is_string(src) => {
            if !is_nested(src) && ty == "json" {
                return Err("only ARRAY, MAP and ROW go to JSON columns".into());
            }
            as_text(src, t)
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
            as_text(src, t)
        }
        DataType::Boolean(_) if int_width(ty).is_some() || ty == "bit" => native(None),
        DataType::TinyInt(_) | DataType::SmallInt(_) | DataType::Int(_) | DataType::BigInt(_) => {
            integer_fits(src, t)
        }
        DataType::Float(_) if ty == "float" || ty == "double" => native(None),
        DataType::Double(_) if ty == "double" => native(None),
        DataType::Float(_) | DataType::Double(_) => {
            Err("use FLOAT or DOUBLE (DOUBLE for Paimon DOUBLE)".into())
        }
        DataType::Decimal(d) if ty == "decimal" => {
            decimal_fits(d.precision() as u64, d.scale() as u64, t)
        }
        DataType::Binary(_) | DataType::VarBinary(_) if BINARY_TYPES.contains(&ty) => {
            binary_fits(src, t)
        }
        DataType::Date(_) if ty == "date" || ty == "datetime" => native(None),
        DataType::Time(p) if ty == "time" => fraction_fits(p.precision(), t).and(native(None)),
        DataType::Timestamp(p) if ty == "datetime" => {
            fraction_fits(p.precision(), t).and(native(None))
        }
        DataType::Timestamp(p) if ty == "timestamp" => {
            fraction_fits(p.precision(), t).and(native(Some(TIMESTAMP_RANGE.into())))
        }
        DataType::LocalZonedTimestamp(p) if ty == "timestamp" => {
            fraction_fits(p.precision(), t).and(native(Some(TIMESTAMP_RANGE.into())))
        }
        DataType::LocalZonedTimestamp(p) if ty == "datetime" => {
            fraction_fits(p.precision(), t).and(native(None))
        }
        _ => Err(format!("use {}", suggested_mysql_type(src))),
    }
}

/// Any scalar may go to a text column as its canonical text, if it is long enough.
fn as_text(src: &DataType, t: &TargetColumn) -> Fit {
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
}

fn integer_fits(src: &DataType, t: &TargetColumn) -> Fit {
    let need = match src {
        DataType::TinyInt(_) => 1,
        DataType::SmallInt(_) => 2,
        DataType::Int(_) => 4,
        _ => 8,
    };
    match int_width(&t.data_type) {
        Some(_) if t.unsigned() => {
            Err("the column is UNSIGNED and Paimon integers are signed".into())
        }
        Some(w) if w >= need => native(None),
        Some(_) => Err(format!("needs an integer of at least {need} bytes")),
        None if t.data_type == "decimal" => {
            let digits = [3u64, 5, 0, 10, 0, 0, 0, 19][need as usize - 1];
            let int_digits = t.numeric_precision.unwrap_or(0) - t.numeric_scale.unwrap_or(0);
            if int_digits >= digits {
                native(None)
            } else {
                Err(format!("needs DECIMAL with {digits} integer digits"))
            }
        }
        None => Err("use an integer column".into()),
    }
}

/// Paimon DECIMAL(p, s) into the target's DECIMAL: no rounding, no overflow.
fn decimal_fits(p: u64, s: u64, t: &TargetColumn) -> Fit {
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

fn binary_fits(src: &DataType, t: &TargetColumn) -> Fit {
    let need = match src {
        DataType::Binary(b) => Some(b.length() as u64),
        DataType::VarBinary(v) if v.length() < i32::MAX as u32 => Some(v.length() as u64),
        _ => None,
    };
    match (need, t.char_max_length) {
        (Some(n), Some(h)) if n > h => {
            Err(format!("values need up to {n} bytes, the column holds {h}"))
        }
        (None, Some(h)) if h < (1 << 24) => native(Some(format!(
            "unbounded BYTES into {h} bytes: a longer value will stop the sync"
        ))),
        _ => native(None),
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

#[cfg(test)]
mod tests {
    use super::*;
    use paimon::spec::{LocalZonedTimestampType, TimestampType};

    #[test]
    fn a_timestamp_into_mysql_timestamp_warns_of_its_range_with_or_without_a_zone() {
        let target = |ty: &str| TargetColumn {
            name: "ts".into(),
            data_type: ty.into(),
            column_type: format!("{ty}(3)"),
            datetime_precision: Some(3),
            ..Default::default()
        };
        let sources = [
            DataType::Timestamp(TimestampType::new(3).unwrap()),
            DataType::LocalZonedTimestamp(LocalZonedTimestampType::new(3).unwrap()),
        ];
        for src in &sources {
            let (_, warning) = check_type(src, &target("timestamp")).unwrap();
            assert!(warning.is_some_and(|w| w.contains("2038")), "{src:?}");
            let (_, warning) = check_type(src, &target("datetime")).unwrap();
            assert!(warning.is_none(), "{src:?}");
        }
    }
}
