//! Passes over the splits of one key group (a bucket of a partition, or a whole partition)
//! that compare the group's keys across reads: an OVERWRITE's difference (`overwrite.rs`) and
//! the keys a snapshot touched read again from Paimon's merge (`refresh.rs`). The keys of one
//! hash partition of the group are held at a time, within `sink.maxBufferBytes`.

use std::collections::HashSet;

use futures::StreamExt;
use tracing::warn;

use super::Pipeline;
use crate::error::Result;
use crate::mapping::{decode_batch, ChangeKind};
use crate::source::SnapshotPlan;

/// What a pass does with each record of its hash partition.
pub(super) enum Pass<'a> {
    /// Upserts every row, and keeps its key (an OVERWRITE's rows after it).
    UpsertAndKeep(&'a mut KeptKeys),
    /// Deletes the keys not kept (an OVERWRITE's rows before it).
    DeleteAbsent(&'a KeptKeys),
    /// Keeps the keys, writes nothing (the keys a snapshot touched).
    Keep(&'a mut KeptKeys),
    /// Upserts the rows of kept keys, once each, and forgets them (their merged rows).
    UpsertKept(&'a mut KeptKeys),
    /// Deletes the kept keys still there, once each (those the merge no longer has).
    DeleteKept(&'a mut KeptKeys),
}

impl Pass<'_> {
    fn kept(&self) -> &KeptKeys {
        match self {
            Pass::UpsertAndKeep(kept)
            | Pass::Keep(kept)
            | Pass::UpsertKept(kept)
            | Pass::DeleteKept(kept) => kept,
            Pass::DeleteAbsent(kept) => kept,
        }
    }
}

impl Pipeline {
    /// Reads `splits` of `plan` as changes of `snapshot_id`, doing `pass` with each record
    /// whose key falls in the pass's hash partition; returns early when the kept keys outgrow
    /// their bound (see [`KeptKeys::outgrown`]) or a stop is asked for.
    pub(super) async fn key_pass(
        &mut self,
        snapshot_id: i64,
        plan: &SnapshotPlan,
        splits: &[usize],
        mut pass: Pass<'_>,
    ) -> Result<()> {
        for &split in splits {
            let bucket = plan.bucket(split);
            let mut batches = self.source.read_split(plan, split).await?;
            while let Some(batch) = batches.next().await {
                let batch = batch?;
                for mut d in
                    decode_batch(&batch, &self.layout, snapshot_id, self.source.name(), true)?
                {
                    if !pass.kept().owns(&d.key) {
                        continue;
                    }
                    self.count_read(d.kind);
                    d.change.bucket = bucket;
                    match &mut pass {
                        Pass::UpsertAndKeep(kept) | Pass::Keep(kept) => {
                            kept.insert(&d.key);
                            if kept.outgrown() {
                                return Ok(());
                            }
                            if matches!(pass, Pass::Keep(_)) {
                                continue;
                            }
                        }
                        Pass::DeleteAbsent(kept) if kept.keys.contains(&d.key) => continue,
                        Pass::DeleteAbsent(_) => d.change.kind = ChangeKind::Delete,
                        Pass::UpsertKept(kept) => {
                            if !kept.keys.remove(&d.key) {
                                continue;
                            }
                        }
                        Pass::DeleteKept(kept) => {
                            if !kept.keys.remove(&d.key) {
                                continue;
                            }
                            d.change.kind = ChangeKind::Delete;
                        }
                    }
                    self.buffer_change(d.key, d.change).await?;
                }
                self.batch_consumed().await?;
                if self.stopping() {
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

/// The keys one hash partition of one group holds, and their size.
pub(super) struct KeptKeys {
    keys: HashSet<Vec<u8>>,
    bytes: u64,
    /// This partition, of how many.
    part: u64,
    parts: u64,
    budget: u64,
}

/// At most this many hash partitions of one group: one still over the bound past it is held
/// whatever its size (the sync warns, and goes on).
pub(super) const MAX_PARTS: u64 = 1 << 12;

impl KeptKeys {
    pub(super) fn new(part: u64, parts: u64, budget: u64) -> Self {
        Self {
            keys: HashSet::new(),
            bytes: 0,
            part,
            parts,
            budget,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether `key` falls in this partition (a hash fixed for the process).
    fn owns(&self, key: &[u8]) -> bool {
        use std::hash::{BuildHasher, BuildHasherDefault};
        let hasher = BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default;
        self.parts == 1 || hasher().hash_one(key) % self.parts == self.part
    }

    fn insert(&mut self, key: &[u8]) {
        if !self.keys.insert(key.to_vec()) {
            return;
        }
        // The key, its Vec and the set's slot.
        let was = self.bytes;
        self.bytes += key.len() as u64 + 48;
        if was <= self.budget && self.bytes > self.budget && self.parts >= MAX_PARTS {
            warn!(keys = self.keys.len(), bytes = self.bytes, max_buffer_bytes = self.budget, parts = self.parts,
                  "one hash partition of a key group still outgrows sink.maxBufferBytes: held until it is done");
        }
    }

    /// Past the budget, and more partitions would help.
    pub(super) fn outgrown(&self) -> bool {
        self.bytes > self.budget && self.parts < MAX_PARTS
    }
}
