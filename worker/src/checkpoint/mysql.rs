//! The exactly-once checkpoint store: the slot's row in the progress table, committed inside
//! every flush transaction (the sink runs the SQL; this file says what the row means).

use pms_crds::contract::{from_wire_columns, wire_columns, BelongsTo, Checkpoint, Position, Slot};
use serde::{Deserialize, Serialize};

use crate::error::{Result, WorkerError};
use crate::sink::progress_table::Rescale;
use crate::sink::{progress_table, MysqlSink, Progress, ProgressRow, ProgressUpdate};
use tracing::info;

/// The row's `belongs_to` column: what the position belongs to, and whether the full read
/// under way sweeps (the two checkpoint fields the position columns don't hold).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RowNote {
    belongs_to: BelongsTo,
    #[serde(default)]
    sweep: bool,
}

pub struct MysqlCheckpointStore {
    sync: String,
    slot: Slot,
    epoch: u64,
    /// What the row holds once the flushes handed out so far committed: the next flush's
    /// update starts from it (compare-and-set).
    progress: Progress,
}

impl MysqlCheckpointStore {
    fn not_at_cut(sync: &str, other: u32, slot: Slot) -> WorkerError {
        WorkerError::RebuildRequired {
            reason: pms_crds::contract::RebuildReason::ExactlyOnceRescale,
            message: format!(
                "checkpoint MySQL table {}: sync {sync} committed with {other} slots, and this worker is slot {slot}: with delivery \
                 exactly-once a different parallelism needs every old slot at the end of one snapshot (the \
                 operator pauses them there before a rescale; standalone: `run --stop-at-snapshot S` for every \
                 old slot) or `pms-worker rebuild` with the new parallelism, not a plain restart",
                progress_table::TABLE
            ),
        }
    }

    /// Takes the slot over (a new epoch) and returns the checkpoint committed by earlier runs.
    /// Rows committed with another parallelism are replaced when every old slot is at the end
    /// of one snapshot (a cut); otherwise refused, by every slot, old or new: its slots would
    /// start from points that are not one consistent snapshot.
    pub async fn claim(
        sink: &MysqlSink,
        cfg: &crate::config::WorkerConfig,
        slot: Slot,
    ) -> Result<(Self, Option<Checkpoint>)> {
        let sync = cfg.external_name();
        let sync = sync.as_str();
        if let Some(legacy) = cfg.legacy_external_name() {
            if sink.adopt_progress_rows(&legacy, sync).await? {
                info!(from = %legacy, to = sync, "progress rows renamed to the sync's external name (its namespace is part of it)");
            }
        }
        let counts = sink.progress_slot_counts(sync).await?;
        if let Some(other) = counts.iter().find(|&&n| n != slot.count) {
            match sink.rescale_progress_at_cut(sync, slot.count).await? {
                Rescale::AtCut(snapshot) => info!(sync, from_slots = other, to_slots = slot.count, snapshot,
                    "exactly-once rescale at a consistent cut: every old slot was at the end of this snapshot; \
                     progress rows replaced in one transaction"),
                Rescale::Done => {}
                Rescale::NotAtCut => return Err(Self::not_at_cut(sync, *other, slot)),
            }
        }
        let row = sink
            .claim_progress_row(sync, slot.index, slot.count)
            .await?;
        let store = Self {
            sync: sync.to_string(),
            slot,
            epoch: row.epoch,
            progress: row.progress.clone(),
        };
        let p = &row.progress;
        let position = p.split_index.zip(p.split_row).map(|(split, row)| Position {
            split,
            row,
            plan: p.split_plan,
        });
        let Some(point) = from_wire_columns(p.snapshot_id, &p.phase, position) else {
            return Ok((store, None)); // claimed, nothing committed yet
        };
        let stored_slot = Slot::new(row.slot, row.slots).map_err(|e| WorkerError::Checkpoint {
            location: format!("MySQL table {}", progress_table::TABLE),
            message: format!(
                "the row of slot {} is corrupt ({e}); delete it to start over",
                row.slot
            ),
        })?;
        // A note that doesn't parse is treated as absent (an older release's row).
        let note: Option<RowNote> = row
            .belongs_to
            .as_deref()
            .and_then(|text| serde_json::from_str(text).ok());
        let checkpoint = Checkpoint {
            // The row is keyed by the external name; the checkpoint names the sync.
            sync: cfg.sync_name.clone(),
            slot: stored_slot,
            point,
            epoch: row.epoch,
            updated: row.updated,
            latest_snapshot: None,
            rescaled_from: None,
            paused_for: None,
            sweep: note.as_ref().is_some_and(|n| n.sweep),
            full_read: None,
            belongs_to: note.map(|n| n.belongs_to),
        };
        Ok((store, Some(checkpoint)))
    }

    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The update that records `cp` while this run's epoch still owns the slot and the row
    /// holds what the previous flush recorded.
    pub fn update_for(&mut self, cp: &Checkpoint) -> ProgressUpdate {
        let (snapshot_id, phase, position) = wire_columns(cp.point);
        let progress = Progress {
            snapshot_id,
            phase: phase.to_string(),
            split_index: position.map(|p| p.split),
            split_row: position.map(|p| p.row),
            split_plan: position.and_then(|p| p.plan),
        };
        let expected = std::mem::replace(&mut self.progress, progress.clone());
        ProgressUpdate {
            row: ProgressRow {
                sync: self.sync.clone(),
                slot: self.slot.index,
                slots: self.slot.count,
                progress,
                belongs_to: row_note(cp),
                epoch: self.epoch,
                updated: String::new(),
            },
            expected,
        }
    }
}

/// The `belongs_to` column recording `cp`'s identity and sweep.
pub fn row_note(cp: &Checkpoint) -> Option<String> {
    let note = RowNote {
        belongs_to: cp.belongs_to.clone()?,
        sweep: cp.sweep,
    };
    serde_json::to_string(&note).ok()
}

/// A new generation's `belongs_to` column once its table is swapped in (see
/// `belongs_to::swapped_in`); an unreadable one stays as it is.
pub fn swapped_in_note(note: Option<String>, cfg: &crate::config::WorkerConfig) -> Option<String> {
    let text = note?;
    match serde_json::from_str::<RowNote>(&text) {
        Ok(mut n) => {
            n.belongs_to = super::belongs_to::swapped_in(n.belongs_to, cfg);
            serde_json::to_string(&n).ok()
        }
        Err(_) => Some(text),
    }
}
