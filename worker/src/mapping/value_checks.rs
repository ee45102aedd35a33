//! What the worker checks of each value itself, before MySQL sees it, where MySQL would not
//! refuse it but store something else:
//! - a NULL into a NOT NULL column: a legacy `TIMESTAMP NOT NULL` (`explicit_defaults_for_timestamp`
//!   off, MySQL 5.7 and MariaDB ≤ 10.9) stores the current time instead, without an error;
//! - text longer than its column: MySQL cuts excess *trailing spaces* off with only a note, even
//!   in strict mode, so `'ab  '` into VARCHAR(3) would be stored as `'ab '`.

use mysql_async::Value;

/// How long a value may be in its MySQL column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxLen {
    /// CHAR(n) and VARCHAR(n): characters.
    Chars(u64),
    /// TINYTEXT and TEXT: bytes.
    Bytes(u64),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ValueChecks {
    /// The MySQL column is NOT NULL and the Paimon column nullable.
    pub not_null: bool,
    /// The Paimon type allows longer values than the column holds.
    pub max_len: Option<MaxLen>,
}

impl ValueChecks {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Why MySQL would not hold `value` as it is, if it would not.
    pub fn problem(&self, value: &Value) -> Option<String> {
        match (value, self.max_len) {
            (Value::NULL, _) if self.not_null => {
                Some("NULL, and its MySQL column is NOT NULL".into())
            }
            (Value::Bytes(b), Some(MaxLen::Chars(max))) => {
                let chars = String::from_utf8_lossy(b).chars().count() as u64;
                (chars > max).then(|| {
                    format!("a text of {chars} characters, and its MySQL column holds {max}")
                })
            }
            (Value::Bytes(b), Some(MaxLen::Bytes(max))) => (b.len() as u64 > max).then(|| {
                format!(
                    "a text of {} bytes, and its MySQL column holds {max}",
                    b.len()
                )
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nulls_and_long_texts_are_told() {
        let checks = ValueChecks {
            not_null: true,
            max_len: Some(MaxLen::Chars(3)),
        };
        assert!(checks.problem(&Value::NULL).is_some());
        assert_eq!(checks.problem(&Value::Bytes("äöü".into())), None);
        assert!(checks
            .problem(&Value::Bytes("ab  ".into()))
            .is_some_and(|p| p.contains("4 characters")));
        let bytes = ValueChecks {
            not_null: false,
            max_len: Some(MaxLen::Bytes(3)),
        };
        assert_eq!(bytes.problem(&Value::NULL), None);
        assert!(bytes.problem(&Value::Bytes("äö".into())).is_some());
    }
}
