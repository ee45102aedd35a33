//! Passes over the splits of one key group (a bucket of a partition, or a whole partition)
//! that compare the group's keys across reads: an OVERWRITE's difference (`overwrite.rs`) and
//! the keys a snapshot touched read again from Paimon's merge (`refresh.rs`). The keys of one
//! hash partition of the group are held at a time, within `sink.maxBufferBytes`.

use std::collections::HashSet;

use futures::StreamExt;
use pms_crds::contract::{Position, ReadPoint, RebuildReason};
use tracing::{info, warn};

use super::Pipeline;
use crate::error::{Result, WorkerError};
use crate::mapping::{decode_batch, ChangeKind};
use crate::source::{fnv1a, SnapshotPlan};

/// Where the passes over one snapshot stand, in the changes they handed to the buffer. Over
/// the same plans with the same buffer bound they hand out the same changes in the same order
/// on every run (keys go to hash partitions by a fixed hash, and a group outgrows the bound at
/// the same key), so the count is a position: each flush commits it as the read point inside
/// the snapshot, and a restart skips the changes a committed flush holds instead of writing
/// them again (exactly-once: no change applied twice, no trigger fired twice).
pub(super) struct Applying {
    snapshot_id: i64,
    /// Names the plans, the bound and the hash the count was taken over.
    tag: u32,
    handed: u64,
    skip: u64,
}

impl Applying {
    /// The read point after one more change, or `None` when a committed flush holds it.
    fn hand(&mut self) -> Option<ReadPoint> {
        self.handed += 1;
        (self.handed > self.skip).then(|| ReadPoint::Changes {
            next_snapshot: self.snapshot_id,
            at: Position::new(0, self.handed, self.tag),
        })
    }
}

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
    /// Starts the passes over snapshot `snapshot_id`'s `plans`, from `from`, the position an
    /// earlier run committed inside it. A count taken over other plans (another
    /// `sink.maxBufferBytes`, another release's hash) names other changes: at-least-once starts
    /// the snapshot again (its rows are the same), exactly-once stops, since that would apply
    /// some changes twice.
    pub(super) fn start_applying(
        &mut self,
        snapshot_id: i64,
        plans: &[&SnapshotPlan],
        from: Position,
    ) -> Result<()> {
        let mut named: Vec<Vec<u8>> = plans
            .iter()
            .map(|p| p.fingerprint().to_be_bytes().to_vec())
            .collect();
        named.push(self.cfg.spec.sink.max_buffer_bytes.to_be_bytes().to_vec());
        named.push(KeptKeys::hash_probe().to_be_bytes().to_vec());
        let tag = fnv1a(named.iter().map(Vec::as_slice));
        let skip = if from.is_start() {
            0
        } else if from.plan == Some(tag) {
            info!(
                snapshot_id,
                skipped = from.row,
                "resuming inside the snapshot: the changes a committed flush holds are skipped"
            );
            from.row
        } else if self.checkpointer.joins_transactions() {
            return Err(WorkerError::RebuildRequired {
                reason: RebuildReason::StartOver,
                message: format!(
                    "Paimon table {}: snapshot {snapshot_id} was partly applied by a run with another sink.maxBufferBytes \
                     (or another release), which splits it into other changes: with delivery exactly-once its rest can't \
                     be told apart from what was applied. Run with the earlier sink.maxBufferBytes until the snapshot is \
                     done, or rebuild (`pms-worker rebuild`, spec.rebuild under the operator)",
                    self.source.name()
                ),
            });
        } else {
            warn!(snapshot_id, ?from, "the checkpointed position inside the snapshot was counted over other passes: applying it from its start");
            0
        };
        self.applying = Some(Applying {
            snapshot_id,
            tag,
            handed: 0,
            skip,
        });
        Ok(())
    }

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
                    // A row the filter doesn't keep is, to every pass, not in the read.
                    if d.filtered_out || !pass.kept().owns(&d.key) {
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
                    if let Some(applying) = &mut self.applying {
                        match applying.hand() {
                            Some(point) => self.read_to = Some(point),
                            None => continue,
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

    /// Whether `key` falls in this partition (std's SipHash with fixed keys: the same on every
    /// run of one build, see [`KeptKeys::hash_probe`]).
    fn owns(&self, key: &[u8]) -> bool {
        self.parts == 1 || hash(key) % self.parts == self.part
    }

    /// The hash of a fixed key: another release whose std hashes otherwise tells by it.
    fn hash_probe() -> u64 {
        hash(b"paimon-mysql-sync")
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

fn hash(key: &[u8]) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(key)
}
