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
                    ..
                }) => return Ok(Some(rescaled(sync, slot, base))),
                _ => return Ok(None),
            }
        }
    };
    let mut old = Vec::with_capacity(old_slots as usize);
    for j in 0..old_slots {
        old.push(read(j).await?);
    }
    let base = rescale_base(old_slots, slot.count, &old).map_err(|e| err(e.to_string()))?;
    Ok(Some(rescaled(sync, slot, base)))
}

fn rescaled(sync: &str, slot: Slot, base: pms_crds::contract::RescaleBase) -> Checkpoint {
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
    }
}
