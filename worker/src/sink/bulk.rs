//! The bulk path for a full read into an empty table: rows streamed from memory to
//! `LOAD DATA LOCAL INFILE … REPLACE` (see `sql.rs`) as tab-separated text with MySQL's
//! default escaping. Faster than multi-row upserts because the server parses no SQL per row.

use mysql_async::Value;

/// Appends one row as a line of tab-separated fields.
pub fn encode_row(row: &[Value], out: &mut Vec<u8>) {
    for (i, v) in row.iter().enumerate() {
        if i > 0 {
            out.push(b'\t');
        }
        encode_value(v, out);
    }
    out.push(b'\n');
}

fn encode_value(v: &Value, out: &mut Vec<u8>) {
    use std::io::Write;
    match v {
        Value::NULL => out.extend_from_slice(b"\\N"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::UInt(u) => {
            let _ = write!(out, "{u}");
        }
        // The float's exact value: its shortest text can round past FLOAT's range.
        Value::Float(f) => {
            let _ = write!(out, "{:e}", *f as f64);
        }
        Value::Double(f) => {
            let _ = write!(out, "{f:e}");
        }
        Value::Bytes(bytes) => {
            for &b in bytes {
                match b {
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    b'\t' => out.extend_from_slice(b"\\t"),
                    b'\n' => out.extend_from_slice(b"\\n"),
                    b'\r' => out.extend_from_slice(b"\\r"),
                    0 => out.extend_from_slice(b"\\0"),
                    0x1a => out.extend_from_slice(b"\\Z"),
                    _ => out.push(b),
                }
            }
        }
        Value::Date(y, mo, d, h, mi, s, us) => {
            let _ = write!(out, "{y:04}-{mo:02}-{d:02}");
            if (*h, *mi, *s, *us) != (0, 0, 0, 0) {
                let _ = write!(out, " {h:02}:{mi:02}:{s:02}.{us:06}");
            }
        }
        Value::Time(neg, days, h, mi, s, us) => {
            let hours = *days * 24 + u32::from(*h);
            let _ = write!(
                out,
                "{}{hours:02}:{mi:02}:{s:02}.{us:06}",
                if *neg { "-" } else { "" }
            );
        }
    }
}

/// The server or the client refuses LOCAL INFILE (MySQL 1148/3948, client 2068, MariaDB 4166).
pub fn is_refused(err: &mysql_async::Error) -> bool {
    matches!(err, mysql_async::Error::Server(e) if matches!(e.code, 1148 | 3948 | 2068 | 4166))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_nulls() {
        let mut out = Vec::new();
        let tab = Value::Bytes(b"a\tb\\c\nd".to_vec());
        encode_row(
            &[
                Value::Int(7),
                Value::NULL,
                tab,
                Value::Date(2024, 2, 29, 0, 0, 0, 0),
                Value::Date(2024, 2, 29, 1, 2, 3, 4),
            ],
            &mut out,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "7\t\\N\ta\\tb\\\\c\\nd\t2024-02-29\t2024-02-29 01:02:03.000004\n"
        );
    }
}
