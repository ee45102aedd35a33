//! The bulk path for a full read into an empty table: rows streamed from memory to
//! `LOAD DATA LOCAL INFILE … REPLACE` (see `sql.rs`) as tab-separated text with MySQL's
//! default escaping. Faster than multi-row upserts because the server parses no SQL per row.

use mysql_async::Value;

use super::literal;

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
    match v {
        Value::NULL => out.extend_from_slice(b"\\N"),
        Value::Bytes(bytes) => literal::push_escaped(out, bytes, |b| match b {
            b'\t' => Some(b"\\t"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            _ => None,
        }),
        Value::Date(..) | Value::Time(..) => literal::push_temporal(out, v),
        // Numbers as their SQL literals.
        _ => literal::push(out, v),
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
