//! One value as both sides can state it exactly: the value the worker writes for a Paimon
//! value, and the value MySQL gives back for that column over the binary protocol, come out
//! as the same bytes when MySQL holds what was written. What differs in form but not in
//! value is made equal here, per MySQL column type: a DECIMAL's trailing zeros, a FLOAT
//! written as a double, a CHAR's trailing spaces (MySQL drops them on read), a BINARY's zero
//! padding, JSON's key order and spacing (MySQL 8 normalizes its JSON type).

use mysql_async::Value;

use crate::mapping::TargetColumn;

/// Appends the canonical form of `v`, stored in (or written to) `column`, to `out`: a tag,
/// then a length-prefixed body, so no two values of a row run into each other.
pub fn append(v: &Value, column: &TargetColumn, out: &mut Vec<u8>) {
    if *v == Value::NULL {
        out.push(0);
        return;
    }
    let (tag, body): (u8, Vec<u8>) = match column.data_type.as_str() {
        "tinyint" | "smallint" | "mediumint" | "int" | "integer" | "bigint" | "year" => (
            1,
            integer(v).map_or_else(|| text(v), |i| i.to_le_bytes().to_vec()),
        ),
        "decimal" | "numeric" => (2, decimal(&text(v)).into_bytes()),
        // A FLOAT column holds single precision: what was written as a double is rounded.
        "float" => (
            3,
            float(v).map_or_else(|| text(v), |f| (f as f32).to_bits().to_le_bytes().to_vec()),
        ),
        "double" | "real" => (
            3,
            float(v).map_or_else(|| text(v), |f| f.to_bits().to_le_bytes().to_vec()),
        ),
        "date" | "datetime" | "timestamp" => (4, datetime(v).unwrap_or_else(|| text(v))),
        "time" => (
            5,
            time(v).map_or_else(|| text(v), |us| us.to_le_bytes().to_vec()),
        ),
        "char" => {
            let mut t = text(v);
            while t.last() == Some(&b' ') {
                t.pop();
            }
            (6, t)
        }
        "binary" => {
            let mut t = text(v);
            let width = column.char_max_length.unwrap_or(0) as usize;
            if t.len() < width {
                t.resize(width, 0);
            }
            (6, t)
        }
        "json" => (7, json(&text(v))),
        _ => (6, text(v)),
    };
    out.push(tag);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&body);
}

/// The bytes of a value as text: a string's own bytes, a number's digits.
fn text(v: &Value) -> Vec<u8> {
    match v {
        Value::Bytes(b) => b.clone(),
        Value::Int(i) => i.to_string().into_bytes(),
        Value::UInt(u) => u.to_string().into_bytes(),
        Value::Float(f) => f.to_string().into_bytes(),
        Value::Double(d) => d.to_string().into_bytes(),
        other => other.as_sql(true).into_bytes(),
    }
}

fn integer(v: &Value) -> Option<i128> {
    match v {
        Value::Int(i) => Some(*i as i128),
        Value::UInt(u) => Some(*u as i128),
        Value::Bytes(b) => std::str::from_utf8(b).ok()?.trim().parse().ok(),
        _ => None,
    }
}

fn float(v: &Value) -> Option<f64> {
    match v {
        Value::Float(f) => Some(*f as f64),
        Value::Double(d) => Some(*d),
        Value::Int(i) => Some(*i as f64),
        Value::Bytes(b) => std::str::from_utf8(b).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// `-012.3400` → `-12.34`, `5.00` → `5`, `-0.0` → `0`.
fn decimal(text: &[u8]) -> String {
    let s = String::from_utf8_lossy(text);
    let s = s.trim();
    let (negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    let body = if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    };
    if negative && body != "0" {
        format!("-{body}")
    } else {
        body
    }
}

fn datetime(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::Date(y, mo, d, h, mi, s, us) => {
            let mut out = y.to_le_bytes().to_vec();
            out.extend_from_slice(&[*mo, *d, *h, *mi, *s]);
            out.extend_from_slice(&us.to_le_bytes());
            Some(out)
        }
        _ => None,
    }
}

/// Signed microseconds (the protocol splits days from hours; writes put all in hours).
fn time(v: &Value) -> Option<i64> {
    match v {
        Value::Time(negative, days, h, m, s, us) => {
            let total = (((*days as i64 * 24 + *h as i64) * 60 + *m as i64) * 60 + *s as i64)
                * 1_000_000
                + *us as i64;
            Some(if *negative { -total } else { total })
        }
        _ => None,
    }
}

/// JSON with object keys sorted and no spacing; text that isn't JSON stays as it is.
fn json(text: &[u8]) -> Vec<u8> {
    fn sorted(v: serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(map) => {
                let mut entries: Vec<_> = map.into_iter().collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                serde_json::Value::Object(
                    entries.into_iter().map(|(k, v)| (k, sorted(v))).collect(),
                )
            }
            serde_json::Value::Array(items) => {
                serde_json::Value::Array(items.into_iter().map(sorted).collect())
            }
            other => other,
        }
    }
    match serde_json::from_slice::<serde_json::Value>(text) {
        Ok(v) => sorted(v).to_string().into_bytes(),
        Err(_) => text.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(data_type: &str, width: Option<u64>) -> TargetColumn {
        TargetColumn {
            name: "c".into(),
            data_type: data_type.into(),
            column_type: data_type.into(),
            nullable: true,
            fills_itself: false,
            char_max_length: width,
            numeric_precision: None,
            numeric_scale: None,
            datetime_precision: None,
            charset: None,
            collation: None,
        }
    }

    fn same(written: Value, stored: Value, data_type: &str, width: Option<u64>) -> bool {
        let c = column(data_type, width);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        append(&written, &c, &mut a);
        append(&stored, &c, &mut b);
        a == b
    }

    #[test]
    fn forms_of_one_value_are_equal() {
        assert!(same(
            Value::Bytes(b"12.5".to_vec()),
            Value::Bytes(b"12.5000".to_vec()),
            "decimal",
            None
        ));
        assert!(same(
            Value::Int(5),
            Value::Bytes(b"5.00".to_vec()),
            "decimal",
            None
        ));
        assert!(same(
            Value::Bytes(b"-0.00".to_vec()),
            Value::Bytes(b"0.0".to_vec()),
            "decimal",
            None
        ));
        assert!(same(
            Value::Double(0.1f32 as f64),
            Value::Float(0.1),
            "float",
            None
        ));
        assert!(same(Value::Int(7), Value::UInt(7), "bigint", None));
        assert!(same(
            Value::Bytes(b"ab  ".to_vec()),
            Value::Bytes(b"ab".to_vec()),
            "char",
            None
        ));
        assert!(same(
            Value::Bytes(vec![1]),
            Value::Bytes(vec![1, 0, 0]),
            "binary",
            Some(3)
        ));
        assert!(same(
            Value::Time(false, 0, 30, 0, 0, 5),
            Value::Time(false, 1, 6, 0, 0, 5),
            "time",
            None
        ));
        assert!(same(
            Value::Bytes(br#"{"b":1,"a":[1,{"y":2,"x":1}]}"#.to_vec()),
            Value::Bytes(br#"{"a": [1, {"x": 1, "y": 2}], "b": 1}"#.to_vec()),
            "json",
            None
        ));
    }

    #[test]
    fn different_values_differ() {
        assert!(!same(
            Value::Bytes(b"12.5".to_vec()),
            Value::Bytes(b"12.05".to_vec()),
            "decimal",
            None
        ));
        assert!(!same(
            Value::Double(0.1),
            Value::Double(0.1000001),
            "double",
            None
        ));
        assert!(!same(
            Value::Bytes(b"a".to_vec()),
            Value::Bytes(b"A".to_vec()),
            "varchar",
            None
        ));
        assert!(!same(
            Value::Bytes(b"x ".to_vec()),
            Value::Bytes(b"x".to_vec()),
            "varchar",
            None
        ));
        assert!(!same(
            Value::NULL,
            Value::Bytes(Vec::new()),
            "varchar",
            None
        ));
        assert!(!same(
            Value::Date(2024, 1, 2, 3, 4, 5, 6),
            Value::Date(2024, 1, 2, 3, 4, 5, 7),
            "datetime",
            None
        ));
        assert!(!same(
            Value::Bytes(b"[1,2]".to_vec()),
            Value::Bytes(b"[2,1]".to_vec()),
            "json",
            None
        ));
    }
}
