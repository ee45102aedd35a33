//! SQL of the exactly-once progress table `_paimon_sync_progress`: one row per sync and slot,
//! in the target database, updated inside every flush transaction, so committed rows and the
//! position that produced them become durable together. Each start bumps the row's epoch in
//! one statement; a flush commits only while the epoch is still its own *and* the row still
//! holds the position it started from (compare-and-set), so neither a zombie worker nor a
//! retry of a commit that did go through applies a flush twice. What the row means is the
//! checkpoint stage's business (`checkpoint/mysql.rs`).

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
  belongs_to  TEXT NULL,
  epoch       BIGINT NOT NULL,
  updated_at  DATETIME(6) NOT NULL,
  PRIMARY KEY (sync_name, slot)
) DEFAULT CHARSET = utf8mb4";

/// The position columns of a row. `phase` is `none` until the first flush.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    pub snapshot_id: i64,
    pub phase: String,
    pub split_index: Option<u32>,
    pub split_row: Option<u64>,
    /// The fingerprint of the split plan the position is in (`Position::plan`).
    pub split_plan: Option<u32>,
}

impl Default for Progress {
    fn default() -> Self {
        Self {
            snapshot_id: 0,
            phase: "none".into(),
            split_index: None,
            split_row: None,
            split_plan: None,
        }
    }
}

/// One slot's row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgressRow {
    pub sync: String,
    pub slot: u32,
    pub slots: u32,
    pub progress: Progress,
    /// What the position belongs to (JSON, `checkpoint/mysql.rs` says what); `NULL` in rows
    /// written before it was recorded.
    pub belongs_to: Option<String>,
    pub epoch: u64,
    /// RFC 3339, as stored (ignored when writing: the server's clock stamps the row).
    pub updated: String,
}

/// What a flush commits: `row`, provided the stored row still holds `expected`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgressUpdate {
    pub row: ProgressRow,
    pub expected: Progress,
}

/// Creates the table if needed; the slot counts of the sync's rows that have committed
/// something (a parallelism they were written with).
pub async fn slot_counts(conn: &mut Conn, sync: &str) -> Result<Vec<u32>, mysql_async::Error> {
    create(conn).await?;
    conn.exec(
        "SELECT DISTINCT slots FROM `_paimon_sync_progress` WHERE sync_name = ? AND phase <> 'none'",
        (sync,),
    )
    .await
}

/// Bumps this slot's epoch (creating its row) and returns the row with the epoch this claim
/// got: one statement sets and reports it (`LAST_INSERT_ID(expr)`), so two starts racing for
/// the slot never share an epoch.
pub async fn claim(
    conn: &mut Conn,
    sync: &str,
    slot: u32,
    slots: u32,
) -> Result<ProgressRow, mysql_async::Error> {
    conn.exec_drop(
        "INSERT INTO `_paimon_sync_progress` (sync_name, slot, slots, epoch, updated_at) \
         VALUES (?, ?, ?, LAST_INSERT_ID(1), NOW(6)) ON DUPLICATE KEY UPDATE epoch = LAST_INSERT_ID(epoch + 1)",
        (sync, slot, slots),
    )
    .await?;
    let epoch: u64 = conn
        .query_first("SELECT LAST_INSERT_ID()")
        .await?
        .unwrap_or(1);
    let row = read(conn, sync, slot).await?;
    Ok(ProgressRow {
        sync: sync.to_string(),
        slot,
        epoch,
        ..row.unwrap_or(ProgressRow {
            sync: String::new(),
            slot,
            slots,
            progress: Progress::default(),
            belongs_to: None,
            epoch,
            updated: String::new(),
        })
    })
}

/// The stored row of a slot.
pub async fn read(
    conn: &mut Conn,
    sync: &str,
    slot: u32,
) -> Result<Option<ProgressRow>, mysql_async::Error> {
    type Row = (
        u32,
        i64,
        String,
        Option<u32>,
        Option<u64>,
        Option<u32>,
        Option<String>,
        u64,
        String,
    );
    let row: Option<Row> = conn
        .exec_first(
            "SELECT slots, snapshot_id, phase, split_index, split_row, split_plan, belongs_to, epoch, \
             DATE_FORMAT(updated_at, '%Y-%m-%dT%H:%i:%s.%fZ') FROM `_paimon_sync_progress` WHERE sync_name = ? AND slot = ?",
            (sync, slot),
        )
        .await?;
    Ok(row.map(
        |(
            slots,
            snapshot_id,
            phase,
            split_index,
            split_row,
            split_plan,
            belongs_to,
            epoch,
            updated,
        )| {
            ProgressRow {
                sync: sync.to_string(),
                slot,
                slots,
                progress: Progress {
                    snapshot_id,
                    phase,
                    split_index,
                    split_row,
                    split_plan,
                },
                belongs_to,
                epoch,
                updated,
            }
        },
    ))
}

/// Creates the table, or adds to one an earlier release created the columns added since.
async fn create(conn: &mut Conn) -> Result<(), mysql_async::Error> {
    conn.query_drop(CREATE).await?;
    add_column(conn, "split_plan", "BIGINT NULL AFTER split_row").await?;
    add_column(conn, "belongs_to", "TEXT NULL AFTER split_plan").await
}

async fn add_column(
    conn: &mut Conn,
    name: &str,
    definition: &str,
) -> Result<(), mysql_async::Error> {
    let present: Option<u32> = conn
        .exec_first(
            "SELECT 1 FROM information_schema.columns WHERE table_schema = DATABASE() \
             AND table_name = '_paimon_sync_progress' AND column_name = ?",
            (name,),
        )
        .await?;
    if present.is_none() {
        match conn
            .query_drop(format!(
                "ALTER TABLE `_paimon_sync_progress` ADD COLUMN {name} {definition}"
            ))
            .await
        {
            // Another slot added it first (ER_DUP_FIELDNAME).
            Err(mysql_async::Error::Server(e)) if e.code == 1060 => {}
            other => other?,
        }
    }
    Ok(())
}

/// The statement and parameters that record `update.row` while its epoch still owns the slot
/// and the row still holds `update.expected` (`<=>`: the split columns may be NULL).
pub fn update(update: &ProgressUpdate) -> (&'static str, Params) {
    let (row, expected) = (&update.row, &update.expected);
    let params: Vec<Value> = vec![
        row.slots.into(),
        row.progress.snapshot_id.into(),
        row.progress.phase.as_str().into(),
        row.progress.split_index.into(),
        row.progress.split_row.into(),
        row.progress.split_plan.into(),
        row.belongs_to.clone().into(),
        row.sync.as_str().into(),
        row.slot.into(),
        row.epoch.into(),
        expected.snapshot_id.into(),
        expected.phase.as_str().into(),
        expected.split_index.into(),
        expected.split_row.into(),
        expected.split_plan.into(),
    ];
    (
        "UPDATE `_paimon_sync_progress` SET slots = ?, snapshot_id = ?, phase = ?, split_index = ?, split_row = ?, \
         split_plan = ?, belongs_to = ?, updated_at = NOW(6) WHERE sync_name = ? AND slot = ? AND epoch = ? AND snapshot_id = ? \
         AND phase = ? AND split_index <=> ? AND split_row <=> ? AND split_plan <=> ?",
        Params::Positional(params),
    )
}

/// Makes `from`'s rows (a rebuild's new generation) the rows of `to`, in one transaction: the
/// old rows of `to` (any parallelism) go, `from`'s are renamed to `to` with an epoch above
/// every epoch either had, so no worker of either generation can commit on them. Does nothing
/// when `from` has no rows (handed over already). `retarget` rewrites each row's
/// `belongs_to` for its new owner. Returns whether it moved rows.
pub async fn hand_over(
    conn: &mut Conn,
    from: &str,
    to: &str,
    retarget: &dyn Fn(Option<String>) -> Option<String>,
) -> Result<bool, mysql_async::Error> {
    let mut tx = conn.start_transaction(Default::default()).await?;
    let (rows, epoch): (u64, u64) = tx
        .exec_first(
            "SELECT SUM(sync_name = ?), COALESCE(MAX(epoch), 0) FROM `_paimon_sync_progress` \
             WHERE sync_name IN (?, ?) FOR UPDATE",
            (from, from, to),
        )
        .await?
        .map(|(rows, epoch): (Option<u64>, u64)| (rows.unwrap_or(0), epoch))
        .unwrap_or((0, 0));
    if rows == 0 {
        tx.rollback().await?;
        return Ok(false);
    }
    tx.exec_drop(
        "DELETE FROM `_paimon_sync_progress` WHERE sync_name = ?",
        (to,),
    )
    .await?;
    let notes: Vec<(u32, Option<String>)> = tx
        .exec(
            "SELECT slot, belongs_to FROM `_paimon_sync_progress` WHERE sync_name = ?",
            (from,),
        )
        .await?;
    for (slot, note) in notes {
        tx.exec_drop(
            "UPDATE `_paimon_sync_progress` SET sync_name = ?, belongs_to = ?, epoch = ?, updated_at = NOW(6) \
             WHERE sync_name = ? AND slot = ?",
            (to, retarget(note), epoch + 1, from, slot),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(true)
}

/// What [`rescale_at_cut`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rescale {
    /// The rows of the old parallelism were all at the end of this snapshot and are replaced.
    AtCut(i64),
    /// Another slot of the new parallelism did it first.
    Done,
    /// Not every old slot is at the end of one snapshot: a rescale would lose or repeat changes.
    NotAtCut,
}

/// Replaces the sync's rows of another parallelism by `slots` rows at the same point, in one
/// transaction, when every old row sits at the end of the same snapshot (a savepoint's cut):
/// each key's changes through it are applied, none after, whatever slot owned it.
pub async fn rescale_at_cut(
    conn: &mut Conn,
    sync: &str,
    slots: u32,
) -> Result<Rescale, mysql_async::Error> {
    let mut tx = conn.start_transaction(Default::default()).await?;
    type Row = (u32, u32, i64, String, Option<u32>, u64, Option<String>);
    let rows: Vec<Row> = tx
        .exec(
            "SELECT slot, slots, snapshot_id, phase, split_index, epoch, belongs_to FROM `_paimon_sync_progress` \
             WHERE sync_name = ? FOR UPDATE",
            (sync,),
        )
        .await?;
    let old: Vec<&Row> = rows.iter().filter(|r| r.1 != slots).collect();
    if old.is_empty() {
        tx.rollback().await?;
        return Ok(Rescale::Done);
    }
    let old_slots = old[0].1;
    let snapshot = old[0].2;
    let at_cut = old.len() == old_slots as usize
        && old
            .iter()
            .all(|r| r.1 == old_slots && r.2 == snapshot && r.3 == "incremental" && r.4.is_none());
    if !at_cut {
        tx.rollback().await?;
        return Ok(Rescale::NotAtCut);
    }
    let epoch = rows.iter().map(|r| r.5).max().unwrap_or(0) + 1;
    // Every old row is at the end of `snapshot`: what one of them belongs to is every new one's.
    let belongs_to = old[0].6.clone();
    replace_rows(&mut tx, sync, slots, snapshot, epoch, belongs_to).await?;
    tx.commit().await?;
    Ok(Rescale::AtCut(snapshot))
}

/// Every slot of `sync` (any parallelism before) at the end of `snapshot`, in one transaction,
/// at an epoch above any the rows had (a restore).
pub async fn set_all(
    conn: &mut Conn,
    sync: &str,
    slots: u32,
    snapshot: i64,
    belongs_to: Option<String>,
) -> Result<(), mysql_async::Error> {
    create(conn).await?;
    let mut tx = conn.start_transaction(Default::default()).await?;
    let epoch: u64 = tx
        .exec_first(
            "SELECT COALESCE(MAX(epoch), 0) FROM `_paimon_sync_progress` WHERE sync_name = ? FOR UPDATE",
            (sync,),
        )
        .await?
        .unwrap_or(0);
    replace_rows(&mut tx, sync, slots, snapshot, epoch + 1, belongs_to).await?;
    tx.commit().await
}

async fn replace_rows(
    tx: &mut mysql_async::Transaction<'_>,
    sync: &str,
    slots: u32,
    snapshot: i64,
    epoch: u64,
    belongs_to: Option<String>,
) -> Result<(), mysql_async::Error> {
    tx.exec_drop(
        "DELETE FROM `_paimon_sync_progress` WHERE sync_name = ?",
        (sync,),
    )
    .await?;
    for slot in 0..slots {
        tx.exec_drop(
            "INSERT INTO `_paimon_sync_progress` (sync_name, slot, slots, snapshot_id, phase, belongs_to, epoch, \
             updated_at) VALUES (?, ?, ?, ?, 'incremental', ?, ?, NOW(6))",
            (sync, slot, slots, snapshot, belongs_to.as_deref(), epoch),
        )
        .await?;
    }
    Ok(())
}

/// Bumps the epoch of every row of `sync`, so none of its running workers can commit again
/// (a rebuild about to swap tables). A database without the table has no such workers.
pub async fn fence(conn: &mut Conn, sync: &str) -> Result<(), mysql_async::Error> {
    ok_without_table(
        conn.exec_drop(
            "UPDATE `_paimon_sync_progress` SET epoch = epoch + 1 WHERE sync_name = ?",
            (sync,),
        )
        .await,
    )
}

/// Deletes every row of `sync` (`pms-worker reset`). A database without the table has none.
pub async fn remove(conn: &mut Conn, sync: &str) -> Result<(), mysql_async::Error> {
    ok_without_table(
        conn.exec_drop(
            "DELETE FROM `_paimon_sync_progress` WHERE sync_name = ?",
            (sync,),
        )
        .await,
    )
}

/// Renames the rows of `legacy` (the name an earlier release used) to `name`, in one
/// transaction, when `name` has none; returns whether rows moved.
pub async fn adopt(conn: &mut Conn, legacy: &str, name: &str) -> Result<bool, mysql_async::Error> {
    create(conn).await?;
    let mut tx = conn.start_transaction(Default::default()).await?;
    let existing: Option<u64> = tx
        .exec_first(
            "SELECT COUNT(*) FROM `_paimon_sync_progress` WHERE sync_name = ? FOR UPDATE",
            (name,),
        )
        .await?;
    if existing.unwrap_or(0) > 0 {
        tx.rollback().await?;
        return Ok(false);
    }
    tx.exec_drop(
        "UPDATE `_paimon_sync_progress` SET sync_name = ? WHERE sync_name = ?",
        (name, legacy),
    )
    .await?;
    let moved = tx.affected_rows() > 0;
    tx.commit().await?;
    Ok(moved)
}

/// A statement's result, `Ok` also when its table does not exist (ER_NO_SUCH_TABLE): a
/// database without the table has nothing to change.
pub(super) fn ok_without_table(
    result: Result<(), mysql_async::Error>,
) -> Result<(), mysql_async::Error> {
    match result {
        Err(mysql_async::Error::Server(e)) if e.code == 1146 => Ok(()),
        other => other,
    }
}
