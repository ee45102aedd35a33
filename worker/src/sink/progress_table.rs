//! SQL of the exactly-once progress table `_paimon_sync_progress`: one row per sync and slot,
//! in the target database, updated inside every flush transaction, so committed rows and the
//! position that produced them become durable together. Each start bumps the row's epoch; a
//! flush only commits while the epoch is still its own, so a zombie worker is fenced off.
//! What the row means is the checkpoint stage's business (`checkpoint/mysql.rs`).

use mysql_async::prelude::*;
use mysql_async::{Conn, Params, Value};

pub const TABLE: &str = "_paimon_sync_progress";

const CREATE: &str = "CREATE TABLE IF NOT EXISTS `_paimon_sync_progress` (
  sync_name   VARCHAR(190) NOT NULL,
  slot        INT NOT NULL,
  slots       INT NOT NULL,
  snapshot_id BIGINT NOT NULL DEFAULT 0,
  phase       VARCHAR(16) NOT NULL DEFAULT 'none',
  split_index INT NULL,
  split_row   BIGINT NULL,
  split_plan  BIGINT NULL,
  epoch       BIGINT NOT NULL,
  updated_at  DATETIME(6) NOT NULL,
  PRIMARY KEY (sync_name, slot)
) DEFAULT CHARSET = utf8mb4";

/// One slot's row. `phase` is `none` until the first flush.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgressRow {
    pub sync: String,
    pub slot: u32,
    pub slots: u32,
    pub snapshot_id: i64,
    pub phase: String,
    pub split_index: Option<u32>,
    pub split_row: Option<u64>,
    /// The fingerprint of the split plan the position is in (`Position::plan`).
    pub split_plan: Option<u32>,
    pub epoch: u64,
    /// RFC 3339, as stored (ignored when writing: the server's clock stamps the row).
    pub updated: String,
}

/// Creates the table if needed, bumps this slot's epoch and returns the row as it is now.
pub async fn claim(
    conn: &mut Conn,
    sync: &str,
    slot: u32,
    slots: u32,
) -> Result<ProgressRow, mysql_async::Error> {
    conn.query_drop(CREATE).await?;
    add_split_plan_column(conn).await?;
    conn.exec_drop(
        "INSERT INTO `_paimon_sync_progress` (sync_name, slot, slots, epoch, updated_at) VALUES (?, ?, ?, 1, NOW(6)) \
         ON DUPLICATE KEY UPDATE epoch = epoch + 1",
        (sync, slot, slots),
    )
    .await?;
    type Row = (
        u32,
        i64,
        String,
        Option<u32>,
        Option<u64>,
        Option<u32>,
        u64,
        String,
    );
    let row: Option<Row> = conn
        .exec_first(
            "SELECT slots, snapshot_id, phase, split_index, split_row, split_plan, epoch, \
             DATE_FORMAT(updated_at, '%Y-%m-%dT%H:%i:%s.%fZ') FROM `_paimon_sync_progress` WHERE sync_name = ? AND slot = ?",
            (sync, slot),
        )
        .await?;
    let (slots, snapshot_id, phase, split_index, split_row, split_plan, epoch, updated) =
        row.unwrap_or((slots, 0, "none".into(), None, None, None, 1, String::new()));
    Ok(ProgressRow {
        sync: sync.to_string(),
        slot,
        slots,
        snapshot_id,
        phase,
        split_index,
        split_row,
        split_plan,
        epoch,
        updated,
    })
}

/// Tables created before positions carried a plan fingerprint get the column.
async fn add_split_plan_column(conn: &mut Conn) -> Result<(), mysql_async::Error> {
    let present: Option<u32> = conn
        .query_first(
            "SELECT 1 FROM information_schema.columns WHERE table_schema = DATABASE() \
             AND table_name = '_paimon_sync_progress' AND column_name = 'split_plan'",
        )
        .await?;
    if present.is_none() {
        match conn
            .query_drop("ALTER TABLE `_paimon_sync_progress` ADD COLUMN split_plan BIGINT NULL AFTER split_row")
            .await
        {
            // Another slot added it first (ER_DUP_FIELDNAME).
            Err(mysql_async::Error::Server(e)) if e.code == 1060 => {}
            other => other?,
        }
    }
    Ok(())
}

/// The statement and parameters that record `row` while its epoch still owns the slot.
pub fn update(row: &ProgressRow) -> (&'static str, Params) {
    let params: Vec<Value> = vec![
        row.slots.into(),
        row.snapshot_id.into(),
        row.phase.as_str().into(),
        row.split_index.into(),
        row.split_row.into(),
        row.split_plan.into(),
        row.sync.as_str().into(),
        row.slot.into(),
        row.epoch.into(),
    ];
    (
        "UPDATE `_paimon_sync_progress` SET slots = ?, snapshot_id = ?, phase = ?, split_index = ?, split_row = ?, \
         split_plan = ?, updated_at = NOW(6) WHERE sync_name = ? AND slot = ? AND epoch = ?",
        Params::Positional(params),
    )
}
