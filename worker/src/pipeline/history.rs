//! Which history the slot is in: the identity (commit time) of each snapshot it has applied,
//! checked against the table at start and at every poll that finds the table moved, so a
//! rollback (`rollback_to`: later ids deleted, then taken again by new commits) or a table
//! dropped and created again is seen, not read on as if it followed what MySQL holds.

use std::collections::BTreeMap;

use pms_crds::contract::{Checkpoint, ReadPoint, SnapshotIdentity};

use crate::error::Result;
use crate::source::PaimonSource;

/// The identities of the snapshots the slot's checkpoints may still name.
#[derive(Default)]
pub(super) struct History {
    snapshots: BTreeMap<i64, SnapshotIdentity>,
}

impl History {
    /// Remembers snapshot `id` as the table has it now (one read of its file), for the
    /// checkpoints that reach it and the checks after it.
    pub async fn learn(&mut self, source: &PaimonSource, id: i64) -> Result<()> {
        if let Some(identity) = source.snapshot_identity(id).await? {
            self.snapshots.insert(id, identity);
        }
        Ok(())
    }

    /// The identity of the snapshot `point` applied through, when known.
    pub fn at(&self, point: ReadPoint) -> Option<SnapshotIdentity> {
        point
            .applied_snapshot()
            .and_then(|id| self.snapshots.get(&id).copied())
    }

    /// Forgets the snapshots before the committed point's (no checkpoint names them again).
    pub fn forget_before(&mut self, point: ReadPoint) {
        if let Some(id) = point.applied_snapshot() {
            self.snapshots = self.snapshots.split_off(&id);
        }
    }

    /// At start: why the resumed checkpoint's history is not the table's (the table's latest
    /// snapshot is before it, or its snapshot was committed again), if it isn't.
    pub async fn resumed_changed(
        &mut self,
        source: &PaimonSource,
        cp: &Checkpoint,
    ) -> Result<Option<String>> {
        let Some(applied) = cp.point.applied_snapshot() else {
            return Ok(None);
        };
        let stored = cp.belongs_to.as_ref().and_then(|b| b.snapshot);
        if let Some(s) = stored.filter(|s| s.id == applied) {
            self.snapshots.insert(applied, s);
            // The slot's consumer keeps it: gone while the next one is there means the consumer
            // was passed over (expired, removed), and a rollback and new commits may have been
            // expired with it. (With the next one gone too, the read stops with "has expired".)
            // (Only for a point between snapshots: a full read's, or one inside a snapshot,
            // names the snapshot it reads as the next.)
            let next = cp.point.next_snapshot();
            if next > applied
                && source.snapshot_identity(applied).await?.is_none()
                && source.snapshot_identity(next).await?.is_some()
            {
                return Ok(Some(format!(
                    "this slot applied {s}, which the table no longer has (its consumer was expired or removed): \
                     whether the table's history is still the one MySQL holds can't be checked"
                )));
            }
        }
        self.changed_at(source, applied).await
    }

    /// While following, before reading the snapshots after `applied`: the same question.
    pub async fn changed_at(
        &mut self,
        source: &PaimonSource,
        applied: i64,
    ) -> Result<Option<String>> {
        if applied < 1 {
            return Ok(None);
        }
        let Some(latest) = source.latest_snapshot().await? else {
            // No snapshot at all (dropped, or created again and not yet written): nothing to
            // start over from; the first snapshot it gets is compared then.
            return Ok(None);
        };
        if latest < applied {
            return Ok(Some(format!(
                "the table's latest snapshot is {latest}, and this slot has applied snapshot {applied}: the table was \
                 rolled back, or dropped and created again"
            )));
        }
        let Some(known) = self.snapshots.get(&applied).copied() else {
            // Not recorded (an older checkpoint, a start by scan mode): the table's is taken.
            self.learn(source, applied).await?;
            return Ok(None);
        };
        Ok(match source.snapshot_identity(applied).await? {
            // Expired: nothing left to compare with (the next one is checked when needed).
            None => None,
            Some(now) if now == known => None,
            Some(now) => Some(rewritten(known, now)),
        })
    }
}

fn rewritten(known: SnapshotIdentity, now: SnapshotIdentity) -> String {
    format!(
        "this slot applied {known}, and the table's {now}: the table was rolled back and written again (or dropped and \
         created again)"
    )
}
