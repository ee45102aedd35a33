//! Applying an OVERWRITE snapshot: the rows of the overwritten partitions after it are
//! upserted, and the keys they held before it and no longer hold are deleted. Both are ordered
//! as changes of that snapshot, so they win over every earlier change of the same key.
//!
//! The read point stays at the snapshot's start until it is done: a flush in the middle
//! commits part of it, and a restart applies it again from the start (idempotent, which is
//! why exactly-once delivery refuses it).

use std::collections::HashSet;

use futures::StreamExt;
use tracing::{info, warn};

use super::Pipeline;
use crate::error::{Result, WorkerError};
use crate::mapping::{decode_batch, ChangeKind};
use crate::source::{OverwritePlan, SnapshotPlan};

impl Pipeline {
    pub(super) async fn apply_overwrite(&mut self, plan: &OverwritePlan) -> Result<()> {
        if self.checkpointer.joins_transactions() {
            // Parts of it committed before a crash would be applied again from the start.
            return Err(WorkerError::RebuildRequired {
                reason: pms_crds::contract::RebuildReason::Overwrite,
                message: format!(
                    "Paimon table {}: snapshot {} is an OVERWRITE commit; with delivery exactly-once it can't be applied without a \
                     part of it possibly applied twice after a crash, so the sync stops before applying it. \
                     Rebuild the target from a full read of the latest snapshot (`pms-worker rebuild`, or \
                     spec.rebuild under the operator), or sync with at-least-once",
                    self.source.name(),
                    plan.snapshot_id
                ),
            });
        }
        info!(
            snapshot_id = plan.snapshot_id,
            partitions = plan.partitions,
            rows_after = plan.current.expected_rows,
            rows_before = plan.previous.expected_rows,
            "applying an OVERWRITE snapshot as the difference of its partitions"
        );
        // One group (a bucket of a partition, or a whole partition when keys may change
        // bucket) at a time, and within it one hash partition of its keys at a time: only
        // those keys are held, within sink.maxBufferBytes. A group whose keys outgrow it is
        // done again in twice as many partitions (what was written is written again: the same
        // rows of the same snapshot).
        for group in plan.groups() {
            let current = plan.splits_in(&plan.current, &group);
            let previous = plan.splits_in(&plan.previous, &group);
            let mut parts = 1;
            while let Some(more) = self
                .overwrite_group(plan, (&current, &previous), parts)
                .await?
            {
                parts = more;
            }
            if self.stopping() {
                return Ok(());
            }
        }
        Ok(())
    }

    /// One group in `parts` hash partitions of its keys; `Some(more)` when one partition's
    /// keys outgrew sink.maxBufferBytes and the group is to be done again in `more`.
    async fn overwrite_group(
        &mut self,
        plan: &OverwritePlan,
        (current, previous): (&[usize], &[usize]),
        parts: u64,
    ) -> Result<Option<u64>> {
        let (snapshot_id, budget) = (plan.snapshot_id, self.cfg.spec.sink.max_buffer_bytes);
        for part in 0..parts {
            let mut kept = KeptKeys::new(part, parts, budget);
            let pass = Pass::Upsert(&mut kept);
            self.overwrite_pass(snapshot_id, &plan.current, current, pass)
                .await?;
            if self.stopping() {
                return Ok(None);
            }
            if kept.outgrown() {
                info!(snapshot_id, parts = parts * 2, keys = kept.keys.len(),
                      "the keys of an OVERWRITE group outgrow sink.maxBufferBytes: reading it again in more hash partitions");
                return Ok(Some(parts * 2));
            }
            let pass = Pass::DeleteAbsent(&kept);
            self.overwrite_pass(snapshot_id, &plan.previous, previous, pass)
                .await?;
            if self.stopping() {
                return Ok(None);
            }
        }
        Ok(None)
    }

    async fn overwrite_pass(
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
                        Pass::Upsert(kept) => {
                            kept.insert(&d.key);
                            if kept.outgrown() {
                                // Read again in more partitions (see apply_overwrite).
                                return Ok(());
                            }
                        }
                        Pass::DeleteAbsent(kept) if kept.keys.contains(&d.key) => continue,
                        Pass::DeleteAbsent(_) => d.change.kind = ChangeKind::Delete,
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

/// The keys one hash partition of one group holds after the snapshot, and their size.
struct KeptKeys {
    keys: HashSet<Vec<u8>>,
    bytes: u64,
    /// This partition, of how many.
    part: u64,
    parts: u64,
    budget: u64,
}

/// At most this many hash partitions of one group: one still over the bound past it is held
/// whatever its size (the sync warns, and goes on).
const MAX_PARTS: u64 = 1 << 12;

impl KeptKeys {
    fn new(part: u64, parts: u64, budget: u64) -> Self {
        Self {
            keys: HashSet::new(),
            bytes: 0,
            part,
            parts,
            budget,
        }
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
                  "one hash partition of an OVERWRITE group still outgrows sink.maxBufferBytes: held until it is done");
        }
    }

    /// Past the budget, and more partitions would help.
    fn outgrown(&self) -> bool {
        self.bytes > self.budget && self.parts < MAX_PARTS
    }
}

/// The upsert pass collects the keys the partitions hold after the snapshot; the delete pass
/// deletes the keys they held before it and no longer hold.
enum Pass<'a> {
    Upsert(&'a mut KeptKeys),
    DeleteAbsent(&'a KeptKeys),
}

impl Pass<'_> {
    fn kept(&self) -> &KeptKeys {
        match self {
            Pass::Upsert(kept) => kept,
            Pass::DeleteAbsent(kept) => kept,
        }
    }
}
