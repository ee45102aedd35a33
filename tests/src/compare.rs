//! One encoding for both sides of the core check: the reference reader's JSON (see
//! `tests/paimon-java/README.md`) and MySQL's text results become the same canonical JSON.

use serde_json::Value as Json;

/// The Paimon type of a column, coarse enough to choose how to compare it.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnType {
    Boolean,
    Integer,
    Float,
    Double,
    /// DECIMAL, CHAR/VARCHAR/STRING, DATE, TIME, TIMESTAMP*: compared as exact text.
    Text,
    Binary,
    /// ARRAY, MAP, ROW: compared as parsed JSON.
    Nested,
}

impl ColumnType {
    /// From a Paimon SQL type string such as `DECIMAL(10, 2) NOT NULL`.
    pub fn parse(paimon_type: &str) -> Self {
        let t = paimon_type.trim().to_ascii_uppercase();
        let head = t.split(['(', '<', ' ']).next().unwrap_or_default();
        match head {
            "BOOLEAN" => ColumnType::Boolean,
            "TINYINT" | "SMALLINT" | "INT" | "INTEGER" | "BIGINT" => ColumnType::Integer,
            "FLOAT" => ColumnType::Float,
            "DOUBLE" => ColumnType::Double,
            "BINARY" | "VARBINARY" | "BYTES" => ColumnType::Binary,
            "ARRAY" | "MAP" | "ROW" | "MULTISET" => ColumnType::Nested,
            _ => ColumnType::Text,
        }
    }

    /// The SELECT expression that makes MySQL print the value exactly.
    pub fn select_expr(&self, col: &str) -> String {
        match self {
            // FLOAT prints with 6 digits; as DOUBLE it prints the exact stored value.
            ColumnType::Float => format!("CAST({col} AS DOUBLE)"),
            ColumnType::Binary => format!("LOWER(HEX({col}))"),
            _ => col.to_string(),
        }
    }

    pub fn from_mysql_text(&self, bytes: &[u8]) -> Json {
        let s = String::from_utf8_lossy(bytes).into_owned();
        match self {
            ColumnType::Boolean => Json::Bool(s != "0"),
            ColumnType::Integer => Json::from(
                s.parse::<i64>()
                    .unwrap_or_else(|_| panic!("integer from MySQL: {s}")),
            ),
            ColumnType::Float => float_key(s.parse::<f64>().expect("float") as f32 as f64),
            ColumnType::Double => float_key(s.parse::<f64>().expect("double")),
            ColumnType::Nested => {
                serde_json::from_str(&s).unwrap_or_else(|e| panic!("JSON from MySQL {s}: {e}"))
            }
            ColumnType::Text | ColumnType::Binary => Json::String(s),
        }
    }

    pub fn from_reference(&self, v: &Json) -> Json {
        if v.is_null() {
            return Json::Null;
        }
        match self {
            ColumnType::Float => float_key(v.as_f64().expect("float") as f32 as f64),
            ColumnType::Double => float_key(v.as_f64().expect("double")),
            ColumnType::Binary => Json::String(v.as_str().expect("hex").to_ascii_lowercase()),
            _ => v.clone(),
        }
    }
}

fn float_key(f: f64) -> Json {
    Json::String(format!("{f:?}"))
}

/// Asserts row-by-row equality and says where the first difference is.
pub fn assert_same_rows(
    what: &str,
    columns: &[(String, ColumnType)],
    reference: &[Vec<Json>],
    mysql: &[Vec<Json>],
) {
    let expected: Vec<Vec<Json>> = reference
        .iter()
        .map(|row| {
            row.iter()
                .zip(columns)
                .map(|(v, (_, ty))| ty.from_reference(v))
                .collect()
        })
        .collect();
    for (i, (e, a)) in expected.iter().zip(mysql).enumerate() {
        if e != a {
            let diffs: Vec<String> = columns
                .iter()
                .zip(e.iter().zip(a))
                .filter(|(_, (x, y))| x != y)
                .map(|((name, _), (x, y))| format!("{name}: reference {x} vs MySQL {y}"))
                .collect();
            panic!(
                "{what}: row {i} differs ({})\n reference: {e:?}\n MySQL:     {a:?}",
                diffs.join("; ")
            );
        }
    }
    assert_eq!(
        expected.len(),
        mysql.len(),
        "{what}: the reference read has {} rows, MySQL has {} (first extra: {:?})",
        expected.len(),
        mysql.len(),
        if expected.len() > mysql.len() {
            expected.get(mysql.len())
        } else {
            mysql.get(expected.len())
        }
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_and_binary_normalization() {
        assert_eq!(
            ColumnType::parse("DECIMAL(10, 2) NOT NULL"),
            ColumnType::Text
        );
        assert_eq!(ColumnType::parse("ARRAY<INT>"), ColumnType::Nested);
        let f = ColumnType::Float;
        assert_eq!(
            f.from_mysql_text(b"3.4028234663852886e38"),
            f.from_reference(&serde_json::json!(3.4028235e38))
        );
        assert_eq!(
            ColumnType::Binary.from_reference(&serde_json::json!("00FF")),
            Json::String("00ff".into())
        );
    }

    #[test]
    #[should_panic(expected = "row 0 differs")]
    fn a_difference_fails() {
        let cols = vec![("id".to_string(), ColumnType::Integer)];
        assert_same_rows(
            "t",
            &cols,
            &[vec![serde_json::json!(1)]],
            &[vec![serde_json::json!(2)]],
        );
    }
}
