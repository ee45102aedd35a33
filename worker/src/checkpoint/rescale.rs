//! A slot's checkpoint after a rescale, whatever store holds the slots' checkpoints: when the
//! stored checkpoints were written for another number of slots, every new slot starts from the
//! rescale base (see `rescale_base`). Slots of one rescale start at different times and
//! overwrite old checkpoints, so the base is also kept in the new checkpoints (`rescaledFrom`)
//! for the slots that start later.

use std::future::Future;

use pms_crds::contract::{rescale_base, Checkpoint, Slot};
use tracing::info;

use crate::error::Result;

/// `own`: what the store holds for `slot`; `read(j)`: slot j's stored checkpoint; `err`: the
/// store's error for a rescale that has no consistent base.
///
/// A checkpoint of this slot count is the slot's own only while no other slot wrote a newer
/// one of another layout or another rescale (its `rescaledFrom`) since: after 3 → 2 → 3 slots,
/// slot 2's checkpoint of the first 3-slot layout is stale (ahead of or behind what the 2-slot
/// layout wrote for its keys), and the new layout starts from the 2 slots' base instead.
pub async fn resolve<F, Fut>(
    slot: Slot,
    own: Option<Checkpoint>,
    read: F,
    err: impl Fn(String) -> crate::error::WorkerError,
) -> Result<Option<Checkpoint>>
where
    F: Fn(u32) -> Fut,
    Fut: Future<Output = Result<Option<Checkpoint>>>,
{
    let mut siblings = Vec::new();
    for j in (0..slot.count).filter(|&j| j != slot.index) {
        siblings.extend(read(j).await?);
    }
    let newer_layout = |cp: &Checkpoint| {
        siblings.iter().find(|s| {
            s.updated > cp.updated
                && (s.slot.count != cp.slot.count || s.rescaled_from != cp.rescaled_from)
        })
    };
    let old_slots = match own {
        Some(cp) if cp.slot.count == slot.count => match newer_layout(&cp) {
            None => return Ok(Some(cp)),
            Some(s) if s.slot.count != slot.count => s.slot.count,
            // This layout began again since (another rescale into it, or a reset).
            Some(s) => return Ok(s.rescaled_from.map(|base| rescaled(s, slot, base))),
        },
        Some(cp) => cp.slot.count,
        // A slot without a checkpoint: is a rescale under way? The newest other slot says.
        None => match siblings.iter().max_by(|a, b| a.updated.cmp(&b.updated)) {
            Some(s) if s.slot.count != slot.count => s.slot.count,
            Some(
                s @ Checkpoint {
                    rescaled_from: Some(base),
                    ..
                },
            ) => return Ok(Some(rescaled(s, slot, *base))),
            _ => return Ok(None),
        },
    };
    let mut old = Vec::with_capacity(old_slots as usize);
    for j in 0..old_slots {
        old.push(read(j).await?);
    }
    let base = rescale_base(old_slots, slot.count, &old).map_err(|e| err(e.to_string()))?;
    if base.point.is_full_read() {
        // The new slots would each begin a full read, of another snapshot than the rows the
        // old ones wrote, with no slot able to tell which rows to remove.
        return Err(err(format!(
            "a rescale from {old_slots} to {} slots while a slot's full read is unfinished can't go on exactly: \
             go back to {old_slots} slots until every full read is done (the status's slots say), or run \
             `pms-worker rebuild` with the new parallelism",
            slot.count
        )));
    }
    let any_old = old
        .iter()
        .flatten()
        .next()
        .ok_or_else(|| err("no old slot's checkpoint".into()))?;
    Ok(Some(rescaled(any_old, slot, base)))
}

/// Slot `slot`'s checkpoint at `base`, of the sync and tables of `old` (another slot's; the
/// snapshots are learned again at start).
fn rescaled(old: &Checkpoint, slot: Slot, base: pms_crds::contract::RescaleBase) -> Checkpoint {
    info!(from_slots = base.slots, to_slots = slot.count, point = ?base.point,
          "rescaled: resuming from the lowest point of the old slots");
    Checkpoint {
        sync: old.sync.clone(),
        slot,
        point: base.point,
        epoch: 0,
        updated: String::new(),
        latest_snapshot: None,
        rescaled_from: Some(base),
        paused_for: None,
        belongs_to: old
            .belongs_to
            .clone()
            .map(|b| pms_crds::contract::BelongsTo {
                snapshot: None,
                ..b
            }),
        sweep: false,
        full_read: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pms_crds::contract::{Position, ReadPoint, RescaleBase};

    fn at(slot: Slot, next: i64, updated: &str, from: Option<RescaleBase>) -> Option<Checkpoint> {
        Some(Checkpoint {
            sync: "s".into(),
            slot,
            point: ReadPoint::Changes {
                next_snapshot: next,
                at: Position::START,
            },
            epoch: 1,
            updated: updated.into(),
            latest_snapshot: None,
            rescaled_from: from,
            paused_for: None,
            belongs_to: None,
            sweep: false,
            full_read: None,
        })
    }

    fn slot(k: u32, n: u32) -> Slot {
        Slot::new(k, n).unwrap()
    }

    async fn resolved(k: u32, n: u32, stored: Vec<Option<Checkpoint>>) -> Option<Checkpoint> {
        let stored = &stored;
        let read = |j: u32| async move { Ok(stored.get(j as usize).cloned().flatten()) };
        let own = stored.get(k as usize).cloned().flatten();
        resolve(slot(k, n), own, read, crate::error::WorkerError::Config)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_slot_of_an_earlier_layout_of_the_same_size_is_not_resumed() {
        // 3 slots, then 2 (which went on to snapshot 20), then 3 again: slot 2's checkpoint
        // (ahead, at 30) is of the first layout; every slot starts from the 2 slots' base.
        let stored = vec![
            at(slot(0, 2), 20, "2026-12-02T02:00:00.000Z", None),
            at(slot(1, 2), 25, "2026-12-02T02:00:01.000Z", None),
            at(slot(2, 3), 30, "2026-12-02T01:00:00.000Z", None),
        ];
        let cp = resolved(2, 3, stored.clone()).await.unwrap();
        assert_eq!(cp.point.next_snapshot(), 20);
        assert_eq!(cp.rescaled_from.map(|b| b.slots), Some(2));
        // Once slots 0 and 1 took the new layout, slot 2 takes their base, not its own.
        let base = cp.rescaled_from;
        let newer = vec![
            at(slot(0, 3), 22, "2026-12-02T03:00:00.000Z", base),
            at(slot(1, 3), 23, "2026-12-02T03:00:00.000Z", base),
            stored[2].clone(),
        ];
        assert_eq!(
            resolved(2, 3, newer.clone())
                .await
                .unwrap()
                .point
                .next_snapshot(),
            20
        );
        // And a slot of the current layout resumes its own.
        assert_eq!(
            resolved(0, 3, newer).await.unwrap().point.next_snapshot(),
            22
        );
    }
}
