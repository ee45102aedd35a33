//! The checkpoint of one slot: how far its writes got. Written by the worker (file, ConfigMap
//! or the exactly-once progress row) only after the flush it covers committed; read back by the
//! worker to resume and by the operator for status.
//!
//! On the wire it is JSON with `snapshotId` + `phase` + `position`, whose snapshot id means
//! different things per phase; in code it is a [`ReadPoint`], whose variants say it.

use serde::{Deserialize, Serialize};

/// How far into one snapshot's ordered splits a slot got: `row` rows into split `split` of
/// the plan whose fingerprint is `plan`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    pub split: u32,
    pub row: u64,
    /// The fingerprint of the split list `split` indexes: another packing of the same snapshot
    /// (an option change, a reader upgrade) names other rows, so the read starts over.
    /// `None` at the start and in checkpoints written before fingerprints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<u32>,
}

impl Position {
    pub const START: Position = Position {
        split: 0,
        row: 0,
        plan: None,
    };

    /// `row` rows into split `split` of the plan with fingerprint `plan`.
    pub fn new(split: u32, row: u64, plan: u32) -> Self {
        Position {
            split,
            row,
            plan: Some(plan),
        }
    }

    pub fn is_start(&self) -> bool {
        self.split == 0 && self.row == 0
    }
}

/// Where a slot stands in the table's history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadPoint {
    /// A full read of `snapshot_id`: the rows before `at` are written. `at: None`: nothing of
    /// it is written yet, so a restart may start a full read of a newer snapshot instead.
    FullRead {
        snapshot_id: i64,
        at: Option<Position>,
    },
    /// Every change of the snapshots before `next_snapshot` is written, and of `next_snapshot`
    /// the changes before `at`.
    Changes { next_snapshot: i64, at: Position },
}

impl ReadPoint {
    /// The first snapshot whose changes are still (at least partly) to be written.
    pub fn next_snapshot(&self) -> i64 {
        match *self {
            ReadPoint::FullRead { snapshot_id, .. } => snapshot_id,
            ReadPoint::Changes { next_snapshot, .. } => next_snapshot,
        }
    }

    /// The last snapshot whose changes are all written (0: none yet).
    pub fn done_through(&self) -> Option<i64> {
        match *self {
            ReadPoint::FullRead { .. } => None,
            ReadPoint::Changes { next_snapshot, .. } => Some(next_snapshot - 1),
        }
    }

    pub fn is_full_read(&self) -> bool {
        matches!(self, ReadPoint::FullRead { .. })
    }

    /// The snapshot this point has applied through, or has applied part of (a full read's, or
    /// the snapshot a position inside it names): the one whose identity MySQL's rows depend on.
    /// A part of a snapshot that a rollback removed and a new commit took the id of again is
    /// another history, though the snapshot before it is unchanged.
    pub fn applied_snapshot(&self) -> Option<i64> {
        match *self {
            ReadPoint::FullRead { snapshot_id, at } => at.map(|_| snapshot_id),
            ReadPoint::Changes { next_snapshot, at } if !at.is_start() => Some(next_snapshot),
            ReadPoint::Changes { next_snapshot, .. } => {
                (next_snapshot > 1).then_some(next_snapshot - 1)
            }
        }
    }

    /// The first snapshot Paimon must keep for this point (its consumer's `nextSnapshot`): the
    /// applied one (never after the next), so that its identity can still be checked after a
    /// rollback and expiry.
    pub fn kept_from(&self) -> i64 {
        self.applied_snapshot().unwrap_or(self.next_snapshot())
    }

    /// The same point with any position inside a snapshot dropped: the whole snapshot is
    /// read again (replaying is idempotent).
    pub fn at_snapshot_start(self) -> ReadPoint {
        match self {
            ReadPoint::FullRead { snapshot_id, .. } => ReadPoint::FullRead {
                snapshot_id,
                at: None,
            },
            ReadPoint::Changes { next_snapshot, .. } => ReadPoint::Changes {
                next_snapshot,
                at: Position::START,
            },
        }
    }
}

/// Where every slot of a rescale started: kept in the new checkpoints so slots that start
/// later find it even after the old checkpoints were overwritten.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RescaleBase {
    /// The old number of slots.
    pub slots: u32,
    /// The consistent point for every key: the lowest point any old slot had reached.
    pub point: ReadPoint,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "wire::CheckpointJson", try_from = "wire::CheckpointJson")]
pub struct Checkpoint {
    pub sync: String,
    pub slot: crate::contract::Slot,
    pub point: ReadPoint,
    /// Bumped by every start of the slot; fences older writers.
    pub epoch: u64,
    /// RFC 3339 time of the write, for status and humans.
    pub updated: String,
    /// The latest Paimon snapshot seen when this was written (for lag in status).
    pub latest_snapshot: Option<i64>,
    pub rescaled_from: Option<RescaleBase>,
    /// The slot is paused at this point (the end of a snapshot) for this pause request
    /// (see `control.rs`).
    pub paused_for: Option<String>,
    /// What this checkpoint describes (`None` in checkpoints written before it was recorded).
    pub belongs_to: Option<crate::contract::BelongsTo>,
    /// The full read under way ends by removing the target's rows the snapshot doesn't have
    /// (it began on a table that held rows, or began again at a newer snapshot).
    pub sweep: bool,
    /// How far the full read under way got, in rows (for people: status and `kubectl pms
    /// status`; a resume goes by `point`).
    pub full_read: Option<FullReadProgress>,
}

/// Rows of a full read written, and the rows its snapshot's files hold (before merging, so
/// the count may end below it).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct FullReadProgress {
    /// Rows written so far.
    pub rows: i64,
    /// Rows the snapshot's files hold.
    pub expected_rows: i64,
}

impl Checkpoint {
    /// The first snapshot whose changes are still (at least partly) to be written.
    pub fn next_snapshot(&self) -> i64 {
        self.point.next_snapshot()
    }
}

/// The JSON layout, unchanged since the first release (ConfigMaps and files in the field).
mod wire {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum Phase {
        /// The full read of `snapshotId` has started but not finished.
        Full,
        /// Every change up to `snapshotId` is written (or, with a position, up to that
        /// position inside `snapshotId`).
        Incremental,
    }

    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CheckpointJson {
        sync: String,
        slot: u32,
        slots: u32,
        snapshot_id: i64,
        phase: Phase,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        position: Option<Position>,
        epoch: u64,
        updated: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        latest_snapshot: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rescaled_from: Option<RescaleBaseJson>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        paused_for: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        belongs_to: Option<crate::contract::BelongsTo>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        sweep: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        full_read: Option<FullReadProgress>,
    }

    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct RescaleBaseJson {
        slots: u32,
        snapshot_id: i64,
        phase: Phase,
    }

    /// `(snapshotId, phase, position)` of a point.
    pub fn split(point: ReadPoint) -> (i64, Phase, Option<Position>) {
        match point {
            ReadPoint::FullRead { snapshot_id, at } => (snapshot_id, Phase::Full, at),
            ReadPoint::Changes { next_snapshot, at } if at.is_start() => {
                (next_snapshot - 1, Phase::Incremental, None)
            }
            ReadPoint::Changes { next_snapshot, at } => {
                (next_snapshot, Phase::Incremental, Some(at))
            }
        }
    }

    pub fn join(snapshot_id: i64, phase: Phase, position: Option<Position>) -> ReadPoint {
        match (phase, position) {
            (Phase::Full, at) => ReadPoint::FullRead { snapshot_id, at },
            (Phase::Incremental, None) => ReadPoint::Changes {
                next_snapshot: snapshot_id + 1,
                at: Position::START,
            },
            (Phase::Incremental, Some(at)) => ReadPoint::Changes {
                next_snapshot: snapshot_id,
                at,
            },
        }
    }

    impl From<Checkpoint> for CheckpointJson {
        fn from(c: Checkpoint) -> Self {
            let (snapshot_id, phase, position) = split(c.point);
            CheckpointJson {
                sync: c.sync,
                slot: c.slot.index,
                slots: c.slot.count,
                snapshot_id,
                phase,
                position,
                epoch: c.epoch,
                updated: c.updated,
                latest_snapshot: c.latest_snapshot,
                rescaled_from: c.rescaled_from.map(|b| {
                    let (snapshot_id, phase, _) = split(b.point.at_snapshot_start());
                    RescaleBaseJson {
                        slots: b.slots,
                        snapshot_id,
                        phase,
                    }
                }),
                paused_for: c.paused_for,
                belongs_to: c.belongs_to,
                sweep: c.sweep,
                full_read: c.full_read,
            }
        }
    }

    impl TryFrom<CheckpointJson> for Checkpoint {
        type Error = crate::contract::SlotError;

        fn try_from(j: CheckpointJson) -> Result<Self, Self::Error> {
            Ok(Checkpoint {
                sync: j.sync,
                slot: crate::contract::Slot::new(j.slot, j.slots)?,
                point: join(j.snapshot_id, j.phase, j.position),
                epoch: j.epoch,
                updated: j.updated,
                latest_snapshot: j.latest_snapshot,
                rescaled_from: j.rescaled_from.map(|b| RescaleBase {
                    slots: b.slots,
                    point: join(b.snapshot_id, b.phase, None),
                }),
                paused_for: j.paused_for,
                belongs_to: j.belongs_to,
                sweep: j.sweep,
                full_read: j.full_read,
            })
        }
    }
}

/// The stored phase name (`full` / `incremental`) of a point, for the exactly-once progress
/// row, which keeps the same three columns as the JSON.
pub fn wire_columns(point: ReadPoint) -> (i64, &'static str, Option<Position>) {
    let (snapshot_id, phase, position) = wire::split(point);
    let phase = match phase {
        wire::Phase::Full => "full",
        wire::Phase::Incremental => "incremental",
    };
    (snapshot_id, phase, position)
}

/// The inverse of [`wire_columns`]; `None` for an unknown phase name.
pub fn from_wire_columns(
    snapshot_id: i64,
    phase: &str,
    position: Option<Position>,
) -> Option<ReadPoint> {
    let phase = match phase {
        "full" => wire::Phase::Full,
        "incremental" => wire::Phase::Incremental,
        _ => return None,
    };
    Some(wire::join(snapshot_id, phase, position))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Slot;

    fn cp(point: ReadPoint) -> Checkpoint {
        Checkpoint {
            sync: "s".into(),
            slot: Slot::new(1, 3).unwrap(),
            point,
            epoch: 2,
            updated: "2026-11-30T00:00:00Z".into(),
            latest_snapshot: Some(9),
            rescaled_from: Some(RescaleBase {
                slots: 2,
                point: ReadPoint::Changes {
                    next_snapshot: 5,
                    at: Position::START,
                },
            }),
            paused_for: None,
            belongs_to: None,
            sweep: false,
            full_read: None,
        }
    }

    #[test]
    fn the_json_layout_is_stable_and_round_trips() {
        let done_through_7 = cp(ReadPoint::Changes {
            next_snapshot: 8,
            at: Position::START,
        });
        let json = serde_json::to_value(&done_through_7).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"sync": "s", "slot": 1, "slots": 3, "snapshotId": 7, "phase": "incremental",
                "epoch": 2, "updated": "2026-11-30T00:00:00Z", "latestSnapshot": 9,
                "rescaledFrom": {"slots": 2, "snapshotId": 4, "phase": "incremental"}})
        );
        for point in [
            ReadPoint::FullRead {
                snapshot_id: 3,
                at: None,
            },
            ReadPoint::FullRead {
                snapshot_id: 3,
                at: Some(Position::new(2, 10, 0xfeed)),
            },
            ReadPoint::Changes {
                next_snapshot: 8,
                at: Position::new(1, 4, 7),
            },
            ReadPoint::Changes {
                next_snapshot: 8,
                at: Position {
                    split: 1,
                    row: 4,
                    plan: None,
                },
            },
        ] {
            let text = serde_json::to_string(&cp(point)).unwrap();
            let back: Checkpoint = serde_json::from_str(&text).unwrap();
            assert_eq!(back, cp(point), "{text}");
        }
    }

    #[test]
    fn a_full_read_s_progress_is_kept_beside_its_point() {
        let mut c = cp(ReadPoint::FullRead {
            snapshot_id: 3,
            at: Some(Position::new(2, 10, 0xfeed)),
        });
        c.full_read = Some(FullReadProgress {
            rows: 1200,
            expected_rows: 5000,
        });
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(
            json["fullRead"],
            serde_json::json!({"rows": 1200, "expectedRows": 5000})
        );
        assert_eq!(serde_json::from_value::<Checkpoint>(json).unwrap(), c);
    }

    #[test]
    fn a_position_carries_its_plan_and_older_ones_read_without() {
        let with = serde_json::to_value(Position::new(1, 4, 7)).unwrap();
        assert_eq!(with, serde_json::json!({"split": 1, "row": 4, "plan": 7}));
        let old: Position = serde_json::from_str(r#"{"split": 1, "row": 4}"#).unwrap();
        assert_eq!(old.plan, None);
    }

    #[test]
    fn a_checkpoint_with_an_impossible_slot_is_refused() {
        let text = r#"{"sync":"s","slot":3,"slots":3,"snapshotId":1,"phase":"full","epoch":1,"updated":""}"#;
        assert!(serde_json::from_str::<Checkpoint>(text).is_err());
    }
}
