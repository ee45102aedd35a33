//! The exactly-once checkpoint store: the slot's row in the progress table, committed inside
//! every flush transaction (the sink runs the SQL; this file says what the row means).

use pms_crds::contract::{from_wire_columns, wire_columns, Checkpoint, Position, Slot};

use crate::error::{Result, WorkerError};
use crate::sink::{progress_table, MysqlSink, ProgressRow};

pub struct MysqlCheckpointStore {
    sync: String,
    slot: Slot,
    epoch: u64,
}

impl MysqlCheckpointStore {
    /// Takes the slot over (a new epoch) and returns the checkpoint committed by earlier runs.
    pub async fn claim(
        sink: &MysqlSink,
        sync: &str,
        slot: Slot,
    ) -> Result<(Self, Option<Checkpoint>)> {
        let row = sink
            .claim_progress_row(sync, slot.index, slot.count)
            .await?;
        let store = Self {
            sync: sync.to_string(),
            slot,
            epoch: row.epoch,
        };
        let plan = row.split_plan;
        let position = row
            .split_index
            .zip(row.split_row)
            .map(|(split, row)| Position { split, row, plan });
        let Some(point) = from_wire_columns(row.snapshot_id, &row.phase, position) else {
            return Ok((store, None)); // claimed, nothing committed yet
        };
        let stored_slot = Slot::new(row.slot, row.slots).map_err(|e| WorkerError::Checkpoint {
            location: format!("MySQL table {}", progress_table::TABLE),
            message: format!(
                "the row of slot {} is corrupt ({e}); delete it to start over",
                row.slot
            ),
        })?;
        let checkpoint = Checkpoint {
            sync: row.sync,
            slot: stored_slot,
            point,
            epoch: row.epoch,
            updated: row.updated,
            latest_snapshot: None,
            rescaled_from: None,
        };
        Ok((store, Some(checkpoint)))
    }

    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The row that records `cp` while this run's epoch still owns the slot.
    pub fn row_for(&self, cp: &Checkpoint) -> ProgressRow {
        let (snapshot_id, phase, position) = wire_columns(cp.point);
        ProgressRow {
            sync: self.sync.clone(),
            slot: self.slot.index,
            slots: self.slot.count,
            snapshot_id,
            phase: phase.to_string(),
            split_index: position.map(|p| p.split),
            split_row: position.map(|p| p.row),
            split_plan: position.and_then(|p| p.plan),
            epoch: self.epoch,
            updated: String::new(),
        }
    }
}
