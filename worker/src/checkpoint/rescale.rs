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
pub async fn resolve<F, Fut>(
    sync: &str,
    slot: Slot,
    own: Option<Checkpoint>,
    read: F,
    err: impl Fn(String) -> crate::error::WorkerError,
) -> Result<Option<Checkpoint>>
where
    F: Fn(u32) -> Fut,
    Fut: Future<Output = Result<Option<Checkpoint>>>,
{
    let old_slots = match &own {
        Some(cp) if cp.slot.count == slot.count => return Ok(own),
        Some(cp) => cp.slot.count,
        // A slot without a checkpoint: is a rescale under way? Ask the first other slot.
        None => {
            let mut first_other = None;
            for j in (0..slot.count).filter(|&j| j != slot.index) {
                if let Some(cp) = read(j).await? {
                    first_other = Some(cp);
                    break;
                }
            }
            match first_other {
                Some(cp) if cp.slot.count != slot.count => cp.slot.count,
                Some(Checkpoint {
                    rescaled_from: Some(base),
                    belongs_to,
                    ..
                }) => return Ok(Some(rescaled(sync, slot, base, belongs_to))),
                _ => return Ok(None),
            }
        }
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
    // The old slots' tables; their snapshots are learned again at start.
    let belongs_to = old.iter().flatten().find_map(|c| c.belongs_to.clone());
    Ok(Some(rescaled(sync, slot, base, belongs_to)))
}

fn rescaled(
    sync: &str,
    slot: Slot,
    base: pms_crds::contract::RescaleBase,
    belongs_to: Option<pms_crds::contract::BelongsTo>,
) -> Checkpoint {
    info!(from_slots = base.slots, to_slots = slot.count, point = ?base.point,
          "rescaled: resuming from the lowest point of the old slots");
    Checkpoint {
        sync: sync.to_string(),
        slot,
        point: base.point,
        epoch: 0,
        updated: String::new(),
        latest_snapshot: None,
        rescaled_from: Some(base),
        paused_for: None,
        belongs_to: belongs_to.map(|b| pms_crds::contract::BelongsTo {
            snapshot: None,
            ..b
        }),
        sweep: false,
    }
}
