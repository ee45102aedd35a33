//! The reduce buffer: the last change per primary key, bounded by input records and bytes.
//!
//! As in Flink's JDBC sink, many changes to one key between two flushes cost one write. Unlike
//! it, order is decided by the change's Paimon position `(snapshot, sequence)`, not by arrival,
//! so files read in any order still reduce to the newest change.
//!
//! Where keys move between partitions (cross-partition-update tables) a change is identified by
//! its key and partition: the move's delete (old partition) and insert (new one) come from
//! buckets whose sequence numbers can't be compared, so both are kept; the delete then names its
//! partition, and upserts are written in snapshot order so the newest partition's row wins. A key
//! that leaves a partition and comes back within one snapshot is deleted in one bucket of it and
//! inserted in another (Paimon places it in the first bucket with room): within a snapshot, two
//! buckets' changes of a key and partition compare by kind, not sequence, and the insert wins
//! (the key ends where its bucket's last change is an insert). The same holds across the flushes
//! of one snapshot: the keys upserted by its earlier flushes, and from which bucket, are kept.

use std::collections::HashMap;
use std::hash::BuildHasher;

use mysql_async::Value;

use crate::error::{Result, WorkerError};
use crate::mapping::{encode_key, Change, ChangeKind};

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
    /// A hash of each key it writes, where the buffer reduced by key: a later flush whose keys
    /// hash otherwise can't meet it (see `pipeline/writer.rs`).
    pub key_hashes: Vec<u64>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty() && self.deletes.is_empty()
    }
    pub fn len(&self) -> usize {
        self.upserts.len() + self.deletes.len()
    }
}

/// Keys hashed with foldhash, not SipHash: the buffer hashes every change read.
type KeyMap<V> = HashMap<Vec<u8>, V, foldhash::fast::RandomState>;

pub struct ChangeBuffer {
    changes: KeyMap<Change>,
    /// While a full read holds one row per key ([`Self::set_unique_keys`]): its changes, kept
    /// in arrival order without a key (nothing to reduce, so nothing is hashed).
    unique: Vec<Change>,
    unique_keys: bool,
    input_records: u64,
    bytes: usize,
    /// The record bound now: `changes_max_rows`, or during a full read `full_read_max_rows`.
    max_rows: u64,
    changes_max_rows: u64,
    full_read_max_rows: u64,
    max_bytes: usize,
    /// The key columns, when keys move between partitions (see the module note).
    moving_keys: Option<Vec<usize>>,
    /// Where keys move: the snapshot the last flush ended in, and the bucket each key (and
    /// partition) it upserted came from, while that snapshot may go on in the next flush.
    flushed: Flushed,
    /// Where keys move: the keys whose delete in this buffer follows their upsert from the same
    /// bucket and snapshot (a run that crashed may have written that upsert already).
    deleted_after_own_upsert: KeyMap<()>,
    /// A full read holds no deletes: nothing of its flushes is kept.
    full_read: bool,
}

/// The upserts of the snapshot a flush ended in (see [`ChangeBuffer::flushed`]).
#[derive(Default)]
struct Flushed {
    snapshot: i64,
    buckets: KeyMap<i32>,
    bytes: usize,
}

/// A bound of the buffer that was reached: the pipeline's flush policy decides what follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// `max_rows` input records (Flink's `sink.buffer-flush.max-rows`).
    Rows,
    /// The memory bound.
    Bytes,
}

impl ChangeBuffer {
    /// `max_rows` 0 turns the record bound off; the byte bound always holds.
    pub fn new(max_rows: u32, max_bytes: u64) -> Self {
        Self {
            changes: KeyMap::default(),
            unique: Vec::new(),
            unique_keys: false,
            input_records: 0,
            bytes: 0,
            max_rows: max_rows as u64,
            changes_max_rows: max_rows as u64,
            full_read_max_rows: max_rows as u64,
            max_bytes: max_bytes as usize,
            moving_keys: None,
            flushed: Flushed::default(),
            deleted_after_own_upsert: KeyMap::default(),
            full_read: false,
        }
    }

    /// The record bound while a full read is under way ([`Self::set_full_read`]); without
    /// this, the same as for changes.
    pub fn with_full_read_rows(mut self, max_rows: u32) -> Self {
        self.full_read_max_rows = max_rows as u64;
        self
    }

    /// For a table whose keys move between partitions; `key_positions` are the row's key columns.
    pub fn with_moving_keys(mut self, key_positions: Vec<usize>) -> Self {
        self.moving_keys = Some(key_positions);
        self
    }

    /// Whether every key comes at most once until this is turned off (a full read that holds
    /// one row per key): changes are then kept as they come, and `push` ignores its key.
    /// Turned on or off only while the buffer is empty.
    pub fn set_unique_keys(&mut self, unique: bool) {
        debug_assert!(self.is_empty());
        self.unique_keys = unique;
    }

    /// Whether a full read is under way (a merged snapshot: no deletes to reduce).
    pub fn set_full_read(&mut self, full_read: bool) {
        self.full_read = full_read;
        self.max_rows = if full_read {
            self.full_read_max_rows
        } else {
            self.changes_max_rows
        };
        self.bytes -= std::mem::take(&mut self.flushed).bytes;
    }

    pub fn unique_keys(&self) -> bool {
        self.unique_keys
    }

    /// Adds a change; returns the bound it reached, if any.
    pub fn push(&mut self, key: Vec<u8>, change: Change) -> Option<Bound> {
        self.input_records += 1;
        let size = row_bytes(&change.row) + key.len();
        if self.unique_keys {
            self.bytes += size + UNIQUE_ENTRY_OVERHEAD;
            self.unique.push(change);
            return self.bound();
        }
        let moving = self.moving_keys.is_some();
        if moving
            && change.kind == ChangeKind::Delete
            && self.flushed.upserted_elsewhere(&key, &change)
        {
            // An earlier flush of this snapshot wrote the key's row in this partition from
            // another bucket: the key came back, and this delete is of where it was.
            return self.bound();
        }
        match self.changes.get_mut(&key) {
            Some(existing) if !replaces(&change, existing, moving) => {}
            Some(existing) => {
                if moving
                    && change.kind == ChangeKind::Delete
                    && existing.kind == ChangeKind::Upsert
                    && (existing.order.0, existing.bucket) == (change.order.0, change.bucket)
                {
                    self.bytes += key.len() + ENTRY_OVERHEAD;
                    self.deleted_after_own_upsert.insert(key.clone(), ());
                }
                self.bytes = self.bytes + size - (row_bytes(&existing.row) + key.len());
                *existing = change;
            }
            None => {
                self.bytes += size + ENTRY_OVERHEAD;
                self.changes.insert(key, change);
            }
        }
        self.bound()
    }

    fn bound(&self) -> Option<Bound> {
        if self.max_rows > 0 && self.input_records >= self.max_rows {
            Some(Bound::Rows)
        } else if self.bytes >= self.max_bytes {
            Some(Bound::Bytes)
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

    /// Empties the buffer into a batch.
    pub fn drain(&mut self) -> Result<Batch> {
        let mut batch = Batch {
            input_records: self.input_records,
            ..Default::default()
        };
        self.input_records = 0;
        let mut upserts = Vec::with_capacity(self.changes.len() + self.unique.len());
        let unique = self.unique.drain(..);
        let moving = self.moving_keys.is_some();
        let mut flushed_upserts = Vec::new();
        let mut newest = i64::MIN;
        let hasher = self.changes.hasher().clone();
        batch.key_hashes.reserve(self.changes.len());
        // In key order (for integer keys the table's order): the server then walks its index
        // pages in order, as for a full read, not at random.
        let mut changes: Vec<_> = self.changes.drain().collect();
        changes.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for (key, change) in changes {
            batch.key_hashes.push(hasher.hash_one(&key));
            newest = newest.max(change.order.0);
            match change.kind {
                ChangeKind::Upsert => {
                    if moving && !self.full_read {
                        flushed_upserts.push((key, change.order.0, change.bucket));
                    }
                    upserts.push(change);
                }
                ChangeKind::Delete => {
                    // Several slots guard their writes by snapshot: where keys move, a delete of
                    // snapshot N spares a row of N (another bucket's, where the key came back),
                    // unless this slot upserted the key from the delete's own bucket in N (in an
                    // earlier flush, or in this buffer: a crashed run may have written it).
                    let spares_own = moving
                        && !self.flushed.upserted_from(&key, &change)
                        && !self.deleted_after_own_upsert.contains_key(&key);
                    let guard = change.order.0 - i64::from(spares_own);
                    batch.deletes.push(change.row);
                    batch.delete_snapshots.push(guard);
                }
            }
        }
        for change in unique {
            match change.kind {
                ChangeKind::Upsert => upserts.push(change),
                ChangeKind::Delete => {
                    batch.deletes.push(change.row);
                    batch.delete_snapshots.push(change.order.0);
                }
            }
        }
        self.deleted_after_own_upsert.clear();
        if moving && !self.full_read && newest > i64::MIN {
            self.flushed.replace(newest, flushed_upserts);
        }
        self.bytes = self.flushed.bytes;
        if let Some(key_positions) = &self.moving_keys {
            // A key upserted in two partitions: the newer snapshot's row is written last.
            upserts.sort_unstable_by_key(|c| c.order);
            one_upsert_per_key_and_snapshot(&upserts, key_positions)?;
        }
        for change in upserts {
            batch.upserts.push(change.row);
            batch.upsert_snapshots.push(change.order.0);
        }
        Ok(batch)
    }
}

/// Whether `change` replaces `existing`, a change of the same key (and partition, where keys
/// move): the newer one does; where keys move, of one snapshot's changes from two buckets the
/// upsert does (see the module note).
fn replaces(change: &Change, existing: &Change, moving: bool) -> bool {
    if moving && change.order.0 == existing.order.0 && change.bucket != existing.bucket {
        return change.kind == ChangeKind::Upsert;
    }
    change.order >= existing.order
}

impl Flushed {
    /// Keeps the upserts `(key, snapshot, bucket)` of a flush's `newest` snapshot (with those
    /// of the flushes before it, when that snapshot goes on from them).
    fn replace(&mut self, newest: i64, upserts: Vec<(Vec<u8>, i64, i32)>) {
        if newest != self.snapshot {
            *self = Flushed {
                snapshot: newest,
                ..Flushed::default()
            };
        }
        for (key, _, bucket) in upserts.into_iter().filter(|u| u.1 == newest) {
            self.bytes += key.len() + ENTRY_OVERHEAD;
            self.buckets.insert(key, bucket);
        }
    }

    /// Whether an earlier flush upserted `key` in `change`'s snapshot from another bucket.
    fn upserted_elsewhere(&self, key: &[u8], change: &Change) -> bool {
        change.order.0 == self.snapshot
            && self.buckets.get(key).is_some_and(|&b| b != change.bucket)
    }

    /// Whether an earlier flush upserted `key` in `change`'s snapshot from its bucket.
    fn upserted_from(&self, key: &[u8], change: &Change) -> bool {
        change.order.0 == self.snapshot && self.buckets.get(key) == Some(&change.bucket)
    }
}

/// Within one snapshot a key lives in one partition: two upserts of a key from one snapshot
/// can't be ordered (their sequence numbers count in different buckets), so that is an error.
fn one_upsert_per_key_and_snapshot(upserts: &[Change], key_positions: &[usize]) -> Result<()> {
    let mut seen: KeyMap<i64> = KeyMap::with_capacity_and_hasher(upserts.len(), Default::default());
    for change in upserts {
        let key: Vec<&Value> = key_positions.iter().map(|&p| &change.row[p]).collect();
        let mut encoded = Vec::new();
        encode_key(&key, &mut encoded);
        if seen.insert(encoded, change.order.0) == Some(change.order.0) {
            let key: Vec<String> = key.iter().map(|v| v.as_sql(false)).collect();
            return Err(WorkerError::Data(format!(
                "snapshot {} upserts key ({}) in two partitions, and which one is newer can't be told from the part \
                 of the snapshot in this flush; the sync stops before writing it. Raise sink.maxRows and \
                 sink.maxBufferBytes so that the snapshot fits in one flush",
                change.order.0,
                key.join(", ")
            )));
        }
    }
    Ok(())
}

/// Cost of a hash map entry beyond its payload: the slot, the key's and the row's Vec headers.
const ENTRY_OVERHEAD: usize = 112;
/// Cost of a kept change without a key: its slot in the Vec.
const UNIQUE_ENTRY_OVERHEAD: usize = std::mem::size_of::<Change>();

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::encode_key;

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
            bucket: 0,
        }
    }

    #[test]
    fn a_read_of_unique_keys_keeps_rows_as_they_come_under_the_same_bounds() {
        let mut b = ChangeBuffer::new(3, 1 << 20);
        b.set_unique_keys(true);
        assert_eq!(
            b.push(Vec::new(), change(ChangeKind::Upsert, 2, "b", (5, 0))),
            None
        );
        assert_eq!(
            b.push(Vec::new(), change(ChangeKind::Upsert, 1, "a", (5, 0))),
            None
        );
        assert!(b.bytes() > 0);
        let bound = b.push(Vec::new(), change(ChangeKind::Upsert, 3, "c", (5, 0)));
        assert_eq!(bound, Some(Bound::Rows));
        let batch = b.drain().unwrap();
        let ids: Vec<_> = batch.upserts.iter().map(|r| r[0].clone()).collect();
        assert_eq!(ids, [Value::Int(2), Value::Int(1), Value::Int(3)]);
        assert_eq!((batch.input_records, b.bytes()), (3, 0));
        b.set_unique_keys(false);
        assert!(!b.unique_keys());
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
        let batch = b.drain().unwrap();
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
    fn a_full_read_has_its_own_record_bound() {
        let mut b = ChangeBuffer::new(2, 1 << 20).with_full_read_rows(4);
        b.set_full_read(true);
        for i in 0..3 {
            assert_eq!(
                b.push(key(i), change(ChangeKind::Upsert, i, "a", (1, 0))),
                None
            );
        }
        assert_eq!(
            b.push(key(3), change(ChangeKind::Upsert, 3, "a", (1, 0))),
            Some(Bound::Rows)
        );
        b.drain().unwrap();
        b.set_full_read(false);
        b.push(key(1), change(ChangeKind::Upsert, 1, "a", (2, 0)));
        assert_eq!(
            b.push(key(2), change(ChangeKind::Upsert, 2, "a", (2, 1))),
            Some(Bound::Rows),
            "changes: maxRows again"
        );
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
            Some(Bound::Rows)
        );
        let mut small = ChangeBuffer::new(0, 300);
        let big = "x".repeat(400);
        assert_eq!(
            small.push(key(1), change(ChangeKind::Upsert, 1, &big, (1, 1))),
            Some(Bound::Bytes)
        );
    }

    fn moved(kind: ChangeKind, id: i64, region: &str, order: (i64, i64)) -> (Vec<u8>, Change) {
        moved_in(kind, id, region, order, 0)
    }

    fn moved_in(
        kind: ChangeKind,
        id: i64,
        region: &str,
        order: (i64, i64),
        bucket: i32,
    ) -> (Vec<u8>, Change) {
        let row = vec![Value::Int(id), Value::Bytes(region.into())];
        let mut k = Vec::new();
        encode_key(&[&row[0], &row[1]], &mut k);
        let change = Change {
            kind,
            row,
            order,
            bucket,
        };
        (k, change)
    }

    #[test]
    fn a_key_back_in_its_partition_within_a_snapshot_keeps_the_insert_of_its_new_bucket() {
        use ChangeKind::{Delete, Upsert};
        // Key 1 left EU's bucket 0 (sequence 9 there) and came back into bucket 3 (sequence 1
        // there), in either read order; key 2 left bucket 3 for good.
        for back_first in [false, true] {
            let mut b = ChangeBuffer::new(0, 1 << 20).with_moving_keys(vec![0]);
            let mut changes = vec![
                moved_in(Delete, 1, "EU", (5, 9), 0),
                moved_in(Upsert, 1, "EU", (5, 1), 3),
            ];
            if back_first {
                changes.reverse();
            }
            changes.push(moved_in(Upsert, 2, "EU", (5, 1), 3));
            changes.push(moved_in(Delete, 2, "EU", (5, 2), 3));
            for (k, c) in changes {
                b.push(k, c);
            }
            let batch = b.drain().unwrap();
            assert_eq!(
                batch.upserts,
                vec![vec![Value::Int(1), Value::Bytes("EU".into())]]
            );
            assert_eq!(
                batch.deletes,
                vec![vec![Value::Int(2), Value::Bytes("EU".into())]]
            );
        }
    }

    #[test]
    fn a_snapshot_in_several_flushes_keeps_the_bucket_of_each_key_it_upserted() {
        use ChangeKind::{Delete, Upsert};
        let mut b = ChangeBuffer::new(0, 1 << 20).with_moving_keys(vec![0]);
        for (k, c) in [
            moved_in(Upsert, 1, "EU", (5, 1), 3),
            moved_in(Upsert, 2, "EU", (5, 2), 3),
        ] {
            b.push(k, c);
        }
        assert_eq!(b.drain().unwrap().upserts.len(), 2);
        assert!(b.bytes() > 0, "the flushed keys count in the memory bound");
        for (k, c) in [
            // Where key 1 was before it came back into bucket 3: the delete is dropped.
            moved_in(Delete, 1, "EU", (5, 9), 0),
            // Key 2 deleted later in its own bucket, key 3 never upserted here.
            moved_in(Delete, 2, "EU", (5, 3), 3),
            moved_in(Delete, 3, "EU", (5, 4), 0),
        ] {
            b.push(k, c);
        }
        let batch = b.drain().unwrap();
        let mut deletes: Vec<(Value, i64)> = batch
            .deletes
            .iter()
            .map(|r| r[0].clone())
            .zip(batch.delete_snapshots.iter().copied())
            .collect();
        deletes.sort_by_key(|(id, _)| id.as_sql(false));
        assert_eq!(
            deletes,
            [(Value::Int(2), 5), (Value::Int(3), 4)],
            "a guarded delete spares the snapshot's rows of other buckets, not its own bucket's"
        );
        // Key 4 inserted and deleted in bucket 0 within snapshot 5, in one flush: a run that
        // crashed may have written the insert, so the delete takes a row of snapshot 5.
        for (k, c) in [
            moved_in(Upsert, 4, "EU", (5, 11), 0),
            moved_in(Delete, 4, "EU", (5, 12), 0),
        ] {
            b.push(k, c);
        }
        assert_eq!(b.drain().unwrap().delete_snapshots, [5]);
        // The next snapshot's flush forgets snapshot 5's keys.
        let (k, c) = moved_in(Upsert, 9, "US", (6, 1), 0);
        b.push(k, c);
        b.drain().unwrap();
        let (k, c) = moved_in(Delete, 1, "EU", (5, 10), 0);
        b.push(k, c);
        assert_eq!(b.drain().unwrap().deletes.len(), 1);
    }

    #[test]
    fn keys_that_move_keep_one_change_per_partition_and_the_newest_upsert_last() {
        let mut b = ChangeBuffer::new(0, 1 << 20).with_moving_keys(vec![0]);
        for (k, c) in [
            moved(ChangeKind::Upsert, 1, "EU", (5, 3)),
            // Key 1 moves to US in snapshot 6: the delete's sequence number is not comparable
            // to the insert's, and both must survive.
            moved(ChangeKind::Upsert, 1, "US", (6, 1)),
            moved(ChangeKind::Delete, 1, "EU", (6, 8)),
            moved(ChangeKind::Upsert, 2, "EU", (7, 1)),
            moved(ChangeKind::Upsert, 2, "US", (6, 9)),
        ] {
            b.push(k, c);
        }
        let batch = b.drain().unwrap();
        assert_eq!(
            batch.deletes,
            vec![vec![Value::Int(1), Value::Bytes("EU".into())]]
        );
        let upserts: Vec<&Value> = batch.upserts.iter().map(|r| &r[1]).collect();
        assert_eq!(
            upserts,
            [
                &Value::Bytes("US".into()),
                &Value::Bytes("US".into()),
                &Value::Bytes("EU".into())
            ],
            "in snapshot order: key 2's EU row (snapshot 7) is written after its US row"
        );
        assert_eq!(batch.upsert_snapshots, [6, 6, 7]);
        for (k, c) in [
            moved(ChangeKind::Upsert, 3, "EU", (8, 1)),
            moved(ChangeKind::Upsert, 3, "US", (8, 2)),
        ] {
            b.push(k, c);
        }
        let err = b.drain().unwrap_err().to_string();
        assert!(
            err.contains("snapshot 8 upserts key (3) in two partitions"),
            "{err}"
        );
    }
}
