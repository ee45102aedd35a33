//! The reduce buffer: the last change per primary key, bounded by input records and bytes.
//!
//! As in Flink's JDBC sink, many changes to one key between two flushes cost one write. Unlike
//! it, order is decided by the change's Paimon position `(snapshot, sequence)`, not by arrival,
//! so files read in any order still reduce to the newest change.

use std::collections::HashMap;
use std::time::Instant;

use mysql_async::Value;

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
}

/// The rows of one flush, deletes and upserts on disjoint keys.
#[derive(Debug, Default)]
pub struct Batch {
    pub upserts: Vec<Vec<Value>>,
    pub deletes: Vec<Vec<Value>>,
    /// The Paimon snapshot of each upsert / delete (for the sequence guard).
    pub upsert_snapshots: Vec<i64>,
    pub delete_snapshots: Vec<i64>,
    /// Input records reduced into this batch (for the reduce ratio).
    pub input_records: u64,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty() && self.deletes.is_empty()
    }
    pub fn len(&self) -> usize {
        self.upserts.len() + self.deletes.len()
    }
}

pub struct ChangeBuffer {
    changes: HashMap<Vec<u8>, Change>,
    input_records: u64,
    bytes: usize,
    max_rows: u64,
    max_bytes: usize,
    oldest: Option<Instant>,
}

/// Why a buffer wants to be flushed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlushReason {
    MaxRows,
    MaxBytes,
    Interval,
    /// No newer snapshot to read: write what we have rather than wait for the interval.
    CaughtUp,
    Checkpoint,
    Close,
}

impl FlushReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            FlushReason::MaxRows => "max_rows",
            FlushReason::MaxBytes => "max_bytes",
            FlushReason::Interval => "interval",
            FlushReason::CaughtUp => "caught_up",
            FlushReason::Checkpoint => "checkpoint",
            FlushReason::Close => "close",
        }
    }
}

impl ChangeBuffer {
    /// `max_rows` 0 turns the record bound off; the byte bound always holds.
    pub fn new(max_rows: u32, max_bytes: u64) -> Self {
        Self {
            changes: HashMap::new(),
            input_records: 0,
            bytes: 0,
            max_rows: max_rows as u64,
            max_bytes: max_bytes as usize,
            oldest: None,
        }
    }

    /// Adds a change; returns a reason when a bound was reached and the caller must flush.
    pub fn push(&mut self, key: Vec<u8>, change: Change) -> Option<FlushReason> {
        self.input_records += 1;
        self.oldest.get_or_insert_with(Instant::now);
        let size = row_bytes(&change.row) + key.len();
        match self.changes.get_mut(&key) {
            Some(existing) if existing.order > change.order => {}
            Some(existing) => {
                self.bytes = self.bytes + size - (row_bytes(&existing.row) + key.len());
                *existing = change;
            }
            None => {
                self.bytes += size + ENTRY_OVERHEAD;
                self.changes.insert(key, change);
            }
        }
        if self.max_rows > 0 && self.input_records >= self.max_rows {
            Some(FlushReason::MaxRows)
        } else if self.bytes >= self.max_bytes {
            Some(FlushReason::MaxBytes)
        } else {
            None
        }
    }

    pub fn is_empty(&self) -> bool {
        self.input_records == 0
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Input records since the last drain.
    pub fn input_records(&self) -> u64 {
        self.input_records
    }

    /// Whether the memory bound is reached.
    pub fn bytes_reached(&self) -> bool {
        self.bytes >= self.max_bytes
    }

    /// Whether `max_rows` input records are buffered (0 = never).
    pub fn rows_reached(&self) -> bool {
        self.max_rows > 0 && self.input_records >= self.max_rows
    }

    /// How long the oldest unflushed change has waited.
    pub fn oldest_age(&self) -> Option<std::time::Duration> {
        self.oldest.map(|t| t.elapsed())
    }

    /// Empties the buffer into a batch.
    pub fn drain(&mut self) -> Batch {
        let mut batch = Batch {
            input_records: self.input_records,
            ..Default::default()
        };
        for (_, change) in self.changes.drain() {
            match change.kind {
                ChangeKind::Upsert => {
                    batch.upserts.push(change.row);
                    batch.upsert_snapshots.push(change.order.0);
                }
                ChangeKind::Delete => {
                    batch.deletes.push(change.row);
                    batch.delete_snapshots.push(change.order.0);
                }
            }
        }
        self.input_records = 0;
        self.bytes = 0;
        self.oldest = None;
        batch
    }
}

/// Cost of a hash map entry beyond its payload: the slot, the key's and the row's Vec headers.
const ENTRY_OVERHEAD: usize = 112;

pub fn row_bytes(row: &[Value]) -> usize {
    row.iter().map(value_bytes).sum::<usize>() + std::mem::size_of::<Vec<Value>>()
}

fn value_bytes(v: &Value) -> usize {
    // A heap allocation costs its length plus the allocator's bookkeeping.
    std::mem::size_of::<Value>()
        + if let Value::Bytes(b) = v {
            b.len() + 16
        } else {
            0
        }
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

    fn key(i: i64) -> Vec<u8> {
        let mut k = Vec::new();
        encode_key(&[&Value::Int(i)], &mut k);
        k
    }

    fn change(kind: ChangeKind, id: i64, v: &str, order: (i64, i64)) -> Change {
        Change {
            kind,
            row: vec![Value::Int(id), Value::Bytes(v.into())],
            order,
        }
    }

    #[test]
    fn last_change_per_key_wins_by_paimon_order() {
        let mut b = ChangeBuffer::new(0, 1 << 20);
        b.push(key(1), change(ChangeKind::Upsert, 1, "a", (5, 1)));
        b.push(key(1), change(ChangeKind::Delete, 1, "a", (5, 2)));
        b.push(key(1), change(ChangeKind::Upsert, 1, "b", (5, 3)));
        // An older change read late must not win.
        b.push(key(1), change(ChangeKind::Delete, 1, "x", (5, 0)));
        b.push(key(2), change(ChangeKind::Upsert, 2, "c", (5, 4)));
        b.push(key(2), change(ChangeKind::Delete, 2, "c", (6, 0)));
        let batch = b.drain();
        assert_eq!(batch.input_records, 6);
        assert_eq!(
            batch.upserts,
            vec![vec![Value::Int(1), Value::Bytes("b".into())]]
        );
        assert_eq!(batch.deletes.len(), 1);
        assert_eq!(batch.deletes[0][0], Value::Int(2));
        assert!(b.is_empty());
    }

    #[test]
    fn bounds_ask_for_a_flush() {
        let mut b = ChangeBuffer::new(3, 1 << 20);
        assert_eq!(
            b.push(key(1), change(ChangeKind::Upsert, 1, "a", (1, 1))),
            None
        );
        assert_eq!(
            b.push(key(1), change(ChangeKind::Upsert, 1, "a", (1, 2))),
            None
        );
        // max_rows counts input records, not distinct keys (Flink's semantics).
        assert_eq!(
            b.push(key(1), change(ChangeKind::Upsert, 1, "a", (1, 3))),
            Some(FlushReason::MaxRows)
        );
        let mut small = ChangeBuffer::new(0, 300);
        let big = "x".repeat(400);
        assert_eq!(
            small.push(key(1), change(ChangeKind::Upsert, 1, &big, (1, 1))),
            Some(FlushReason::MaxBytes)
        );
    }

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
