//! Rescaling from ConfigMap checkpoints: every new slot starts from the lowest point any old
//! slot had reached. That point is consistent for every key (each key's changes before it are
//! written by whichever old slot owned it), and replaying the changes after it is idempotent.

use super::{Checkpoint, Position, ReadPoint, RescaleBase};

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum RescaleError {
    #[error(
        "rescaling from {old_slots} slots, but the checkpoint of old slot {missing} is missing; \
         without it there is no consistent snapshot to resume from: rebuild the target"
    )]
    MissingSlot { old_slots: u32, missing: u32 },
    #[error("rescaling from 0 slots")]
    NoSlots,
}

/// The rescale point of a move to `new_slots` slots, from the checkpoints of the old slots
/// (`old[j]` is old slot j's, `None` when missing). An old checkpoint that a new slot already
/// overwrote contributes the rescale point it recorded.
pub fn rescale_base(
    old_slots: u32,
    new_slots: u32,
    old: &[Option<Checkpoint>],
) -> Result<RescaleBase, RescaleError> {
    let mut lowest: Option<ReadPoint> = None;
    for j in 0..old_slots {
        let Some(cp) = old.get(j as usize).and_then(Option::as_ref) else {
            return Err(RescaleError::MissingSlot {
                old_slots,
                missing: j,
            });
        };
        let point = match cp.rescaled_from {
            Some(b) if cp.slot.count == new_slots => b.point,
            _ => cp.point,
        }
        .at_snapshot_start();
        lowest = Some(match lowest {
            None => point,
            Some(l) => lower(l, point),
        });
    }
    lowest
        .map(|point| RescaleBase {
            slots: old_slots,
            point,
        })
        .ok_or(RescaleError::NoSlots)
}

/// The earlier of two points: a full read not finished anywhere means a new full read.
fn lower(a: ReadPoint, b: ReadPoint) -> ReadPoint {
    match (a, b) {
        (
            ReadPoint::FullRead { snapshot_id: x, .. },
            ReadPoint::FullRead { snapshot_id: y, .. },
        ) => ReadPoint::FullRead {
            snapshot_id: x.min(y),
            at: None,
        },
        (f @ ReadPoint::FullRead { .. }, _) | (_, f @ ReadPoint::FullRead { .. }) => f,
        (a, b) => ReadPoint::Changes {
            next_snapshot: a.next_snapshot().min(b.next_snapshot()),
            at: Position::START,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Slot;

    fn cp(slot: Slot, point: ReadPoint, rescaled_from: Option<RescaleBase>) -> Option<Checkpoint> {
        Some(Checkpoint {
            sync: "s".into(),
            slot,
            point,
            epoch: 1,
            updated: String::new(),
            latest_snapshot: None,
            rescaled_from,
            paused_for: None,
            belongs_to: None,
            sweep: false,
            full_read: None,
        })
    }
    fn changes(next_snapshot: i64, row: u64) -> ReadPoint {
        ReadPoint::Changes {
            next_snapshot,
            at: Position {
                split: 0,
                row,
                ..Position::START
            },
        }
    }

    #[test]
    fn the_lowest_old_point_at_a_snapshot_start() {
        let two = |k| Slot::new(k, 2).unwrap();
        let base = rescale_base(
            2,
            3,
            &[
                cp(two(0), changes(9, 0), None),
                cp(two(1), changes(7, 5), None),
            ],
        )
        .unwrap();
        // Slot 1 was inside snapshot 7: snapshot 7 is read again whole.
        assert_eq!(
            base,
            RescaleBase {
                slots: 2,
                point: changes(7, 0)
            }
        );
    }

    #[test]
    fn an_unfinished_full_read_anywhere_means_a_new_full_read() {
        let two = |k| Slot::new(k, 2).unwrap();
        let full = ReadPoint::FullRead {
            snapshot_id: 4,
            at: Some(Position {
                split: 1,
                row: 2,
                ..Position::START
            }),
        };
        let base = rescale_base(
            2,
            1,
            &[cp(two(0), changes(9, 0), None), cp(two(1), full, None)],
        )
        .unwrap();
        assert_eq!(
            base.point,
            ReadPoint::FullRead {
                snapshot_id: 4,
                at: None
            }
        );
    }

    #[test]
    fn a_slot_already_rescaled_contributes_its_recorded_point_and_a_missing_one_fails() {
        let three = |k| Slot::new(k, 3).unwrap();
        let recorded = RescaleBase {
            slots: 2,
            point: changes(5, 0),
        };
        let old = [
            cp(three(0), changes(12, 0), Some(recorded)),
            cp(Slot::new(1, 2).unwrap(), changes(8, 0), None),
        ];
        assert_eq!(rescale_base(2, 3, &old).unwrap().point, changes(5, 0));
        assert_eq!(
            rescale_base(2, 3, &old[..1]),
            Err(RescaleError::MissingSlot {
                old_slots: 2,
                missing: 1
            })
        );
    }
}
