//! The benchmark's row-width case: the `wide` shape of the Java generator (30 columns, with
//! 200-character strings and 64-byte BYTES), mirrored here for the check after a run.

use serde_json::json;

use super::chrono_free_utc;
use crate::paimon::Table;

/// The Paimon types by position, as `Generator.WIDE_TYPES` checks them; the names say the kind.
fn columns() -> Vec<(String, &'static str)> {
    (0..30)
        .map(|k| match k {
            0 => ("id".to_string(), "BIGINT NOT NULL"),
            1..=6 => (format!("i{k}"), "INT"),
            7..=10 => (format!("b{k}"), "BIGINT"),
            11..=14 => (format!("d{k}"), "DECIMAL(18, 4)"),
            15..=20 => (format!("s{k}"), "STRING"),
            21..=23 => (format!("t{k}"), "STRING"),
            24 | 25 => (format!("y{k}"), "BYTES"),
            26 => ("ts26".into(), "TIMESTAMP(3)"),
            27 => ("dt27".into(), "DATE"),
            28 => ("f28".into(), "BOOLEAN"),
            _ => ("n29".into(), "STRING"),
        })
        .collect()
}

/// The Paimon table of the `wide` shape, key `id`.
pub fn table(options: serde_json::Value) -> Table {
    let columns: Vec<_> = columns()
        .into_iter()
        .map(|(name, ty)| json!({"name": name, "type": ty}))
        .collect();
    Table::create(
        json!({"columns": columns, "primaryKeys": ["id"], "partitionKeys": [], "options": options}),
    )
}

/// The MySQL table (named `orders`, like every benchmark target) that fits [`table`].
pub fn ddl() -> String {
    let columns: Vec<String> = columns()
        .into_iter()
        .map(|(name, ty)| {
            let mysql = match ty {
                "BIGINT NOT NULL" => "BIGINT NOT NULL PRIMARY KEY",
                "INT" => "INT",
                "BIGINT" => "BIGINT",
                "DECIMAL(18, 4)" => "DECIMAL(18,4)",
                "BYTES" => "BLOB",
                "TIMESTAMP(3)" => "DATETIME(3)",
                "DATE" => "DATE",
                "BOOLEAN" => "BOOLEAN",
                _ if name.starts_with('t') => "TEXT",
                _ => "VARCHAR(32)",
            };
            format!("{name} {mysql}")
        })
        .collect();
    format!(
        "CREATE TABLE orders ({}) DEFAULT CHARSET = utf8mb4",
        columns.join(", ")
    )
}

/// `CONCAT_WS('|', every column)` of the synced table, for its CRC32.
pub fn concat_sql() -> String {
    let names: Vec<String> = columns().into_iter().map(|(n, _)| n).collect();
    format!("CONCAT_WS('|', {})", names.join(", "))
}

/// What MariaDB's `CONCAT_WS('|', …)` gives for the generator's row `id` at `salt` (NULLs are
/// skipped with their separator, BYTES go as they are).
pub fn row_bytes(id: i64, salt: i64) -> Vec<u8> {
    const LOREM: &str = "lorem ipsum dolor sit amet ";
    let mut parts: Vec<Vec<u8>> = vec![id.to_string().into_bytes()];
    for k in 1..30i64 {
        let part = match k {
            1..=6 => (id * 31 + k * 7 + salt).rem_euclid(1_000_000).to_string(),
            7..=10 => (id * 1000 + k + salt).to_string(),
            11..=14 => {
                let u = (id * 7919 + k * 13 + salt * 104_729).rem_euclid(1_000_000_000_000);
                format!("{}.{:04}", u / 10_000, u % 10_000)
            }
            15..=20 => format!("s{k}-{}", (id + salt).rem_euclid(9973)),
            21..=23 => {
                let mut s = format!("{id}:{k}:{salt}:");
                while s.len() < 200 {
                    s.push_str(LOREM);
                }
                s.truncate(200);
                s
            }
            24 | 25 => {
                parts.push(
                    (0..64i64)
                        .map(|j| (id + j * k + salt).rem_euclid(256) as u8)
                        .collect(),
                );
                continue;
            }
            26 => chrono_free_utc(1_704_067_200 + id + salt * 60),
            27 => chrono_free_utc((10_957 + id.rem_euclid(10_000)) * 86_400)[..10].to_string(),
            28 => u8::from((id + salt).rem_euclid(2) == 0).to_string(),
            _ if id.rem_euclid(5) == 0 => continue,
            _ => format!("n{id}"),
        };
        parts.push(part.into_bytes());
    }
    parts.join(&b'|')
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_mirror_writes_what_concat_ws_prints() {
        let row = super::row_bytes(5, 0);
        let text = String::from_utf8_lossy(&row);
        assert!(
            text.starts_with("5|162|169|176|183|190|197|5007|5008|5009|5010|3.9738|"),
            "{text}"
        );
        // id 5: n29 is NULL, so the row ends with the boolean (5 is odd: 0) and no separator.
        assert!(
            text.ends_with("2024-01-01 00:00:05.000|2000-01-06|0"),
            "{text}"
        );
        assert_eq!(super::ddl().matches(", ").count(), 29, "30 columns");
    }
}
