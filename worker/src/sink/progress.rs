//! Exactly-once progress: one row per sync and slot in `_paimon_sync_progress`, in the target
//! database, updated inside every flush transaction. Committed rows and the position that
//! produced them become durable together, so a restart never applies a change twice.
//! Each start bumps the row's epoch; a flush only commits while the epoch is still its own,
//! so a zombie worker of the same slot is fenced off.

use mysql_async::prelude::*;
use mysql_async::{Conn, Params, Value};

use crate::checkpoint::{Checkpoint, Phase, Position};

pub const TABLE: &str = "_paimon_sync_progress";

const CREATE: &str = "CREATE TABLE IF NOT EXISTS `_paimon_sync_progress` (
  sync_name   VARCHAR(190) NOT NULL,
  slot        INT NOT NULL,
  slots       INT NOT NULL,
  snapshot_id BIGINT NOT NULL DEFAULT 0,
  phase       VARCHAR(16) NOT NULL DEFAULT 'none',
  split_index INT NULL,
  split_row   BIGINT NULL,
  epoch       BIGINT NOT NULL,
  updated_at  DATETIME(6) NOT NULL,
  PRIMARY KEY (sync_name, slot)
) DEFAULT CHARSET = utf8mb4";

/// Creates the table if needed, bumps this slot's epoch and returns (epoch, stored progress).
pub async fn claim(
    conn: &mut Conn,
    sync: &str,
    slot: u32,
    slots: u32,
) -> Result<(u64, Option<Checkpoint>), mysql_async::Error> {
    conn.query_drop(CREATE).await?;
    conn.exec_drop(
        "INSERT INTO `_paimon_sync_progress` (sync_name, slot, slots, epoch, updated_at) VALUES (?, ?, ?, 1, NOW(6)) \
         ON DUPLICATE KEY UPDATE epoch = epoch + 1",
        (sync, slot, slots),
    )
    .await?;
    type Row = (u32, i64, String, Option<u32>, Option<u64>, u64, String);
    let row: Option<Row> = conn
        .exec_first(
            "SELECT slots, snapshot_id, phase, split_index, split_row, epoch, DATE_FORMAT(updated_at, '%Y-%m-%dT%H:%i:%s.%fZ') \
             FROM `_paimon_sync_progress` WHERE sync_name = ? AND slot = ?",
            (sync, slot),
        )
        .await?;
    let Some((stored_slots, snapshot_id, phase, split, row, epoch, updated)) = row else {
        return Ok((1, None));
    };
    let phase = match phase.as_str() {
        "full" => Phase::Full,
        "incremental" => Phase::Incremental,
        _ => return Ok((epoch, None)),
    };
    let position = split.zip(row).map(|(split, row)| Position { split, row });
    let cp = Checkpoint {
        sync: sync.to_string(),
        slot,
        slots: stored_slots,
        snapshot_id,
        phase,
        position,
        epoch,
        updated,
        latest_snapshot: None,
        rescaled_from: None,
    };
    Ok((epoch, Some(cp)))
}

/// The statement and parameters that record `cp` while `epoch` still owns the slot.
pub fn update(cp: &Checkpoint) -> (&'static str, Params) {
    let phase = match cp.phase {
        Phase::Full => "full",
        Phase::Incremental => "incremental",
    };
    let params: Vec<Value> = vec![
        cp.slots.into(),
        cp.snapshot_id.into(),
        phase.into(),
        cp.position.map(|p| p.split).into(),
        cp.position.map(|p| p.row).into(),
        cp.sync.as_str().into(),
        cp.slot.into(),
        cp.epoch.into(),
    ];
    (
        "UPDATE `_paimon_sync_progress` SET slots = ?, snapshot_id = ?, phase = ?, split_index = ?, split_row = ?, \
         updated_at = NOW(6) WHERE sync_name = ? AND slot = ? AND epoch = ?",
        Params::Positional(params),
    )
}
