//! A change as the later stages see it: a key, an upsert or delete of a row in the MySQL
//! column order, and its place in Paimon's order.

use mysql_async::Value;

/// Row kinds as Paimon names them; `-U` (the before-image of an update) is ignored because
/// the `+U` that follows carries the new row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    Insert,
    UpdateBefore,
    UpdateAfter,
    Delete,
}

impl RowKind {
    pub(super) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "+I" => RowKind::Insert,
            "-U" => RowKind::UpdateBefore,
            "+U" => RowKind::UpdateAfter,
            "-D" => RowKind::Delete,
            _ => return None,
        })
    }

    /// Position in `Metrics::records_read_counters`.
    pub fn index(&self) -> usize {
        match self {
            RowKind::Insert => 0,
            RowKind::UpdateBefore => 1,
            RowKind::UpdateAfter => 2,
            RowKind::Delete => 3,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Upsert,
    Delete,
}

/// One change of one key. `row` holds every mapped column (key columns included).
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub kind: ChangeKind,
    pub row: Vec<Value>,
    /// Paimon order: snapshot id, then sequence number within it.
    pub order: (i64, i64),
    /// The bucket it was read from: sequence numbers count per bucket, so two changes of one
    /// snapshot compare by sequence only within a bucket.
    pub bucket: i32,
}

/// An unambiguous byte encoding of key values, for hashing.
pub fn encode_key(values: &[&Value], out: &mut Vec<u8>) {
    out.clear();
    for v in values {
        match v {
            Value::NULL => out.push(0),
            Value::Int(i) => {
                out.push(1);
                out.extend_from_slice(&i.to_be_bytes());
            }
            Value::UInt(u) => {
                out.push(2);
                out.extend_from_slice(&u.to_be_bytes());
            }
            Value::Bytes(b) => {
                out.push(3);
                out.extend_from_slice(&(b.len() as u32).to_be_bytes());
                out.extend_from_slice(b);
            }
            Value::Float(f) => {
                out.push(4);
                out.extend_from_slice(&f.to_bits().to_be_bytes());
            }
            Value::Double(f) => {
                out.push(5);
                out.extend_from_slice(&f.to_bits().to_be_bytes());
            }
            Value::Date(y, mo, d, h, mi, s, us) => {
                out.push(6);
                out.extend_from_slice(&y.to_be_bytes());
                out.extend_from_slice(&[*mo, *d, *h, *mi, *s]);
                out.extend_from_slice(&us.to_be_bytes());
            }
            Value::Time(neg, d, h, mi, s, us) => {
                out.push(7);
                out.push(*neg as u8);
                out.extend_from_slice(&d.to_be_bytes());
                out.extend_from_slice(&[*h, *mi, *s]);
                out.extend_from_slice(&us.to_be_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_encoding_is_unambiguous() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        encode_key(
            &[&Value::Bytes(b"ab".to_vec()), &Value::Bytes(b"c".to_vec())],
            &mut a,
        );
        encode_key(
            &[&Value::Bytes(b"a".to_vec()), &Value::Bytes(b"bc".to_vec())],
            &mut b,
        );
        assert_ne!(a, b);
    }
}
