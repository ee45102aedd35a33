//! Which sync writes a MySQL table: one row per table in `_paimon_sync_targets` (in the
//! target's database), claimed at a sync's first start and kept. A start of another sync (another
//! external name) into the table is refused before it writes, naming both: two syncs writing one
//! table overwrite each other's rows and delete each other's keys. `pms-worker reset` releases
//! the sync's claim. Creating the table needs CREATE on the database (as the exactly-once progress
//! table does); a user without it is not checked, with a warning.

use mysql_async::prelude::*;
use mysql_async::Conn;

pub const TABLE: &str = "_paimon_sync_targets";

const CREATE: &str = "CREATE TABLE IF NOT EXISTS `_paimon_sync_targets` (
  target_table VARCHAR(190) NOT NULL PRIMARY KEY,
  sync_name    VARCHAR(190) NOT NULL,
  source       VARCHAR(1024) NOT NULL,
  claimed_at   DATETIME(6) NOT NULL
) DEFAULT CHARSET = utf8mb4";

/// What a claim found.
#[derive(Debug, PartialEq, Eq)]
pub enum Claim {
    /// The table is this sync's (now, or since an earlier start).
    Ours,
    /// Another sync claimed it first.
    Theirs {
        sync: String,
        source: String,
        claimed_at: String,
    },
    /// The claim table can't be created by this user (why).
    Unchecked(String),
}

/// Claims `table` for `sync` (reading `source`), unless another sync has; a claim under
/// `legacy` (the sync's name in an earlier release) becomes `sync`'s.
pub async fn claim(
    conn: &mut Conn,
    table: &str,
    sync: &str,
    legacy: Option<&str>,
    source: &str,
) -> Result<Claim, mysql_async::Error> {
    match claim_with_rights(conn, table, sync, legacy, source).await {
        // ER_TABLEACCESS_DENIED_ERROR, ER_DBACCESS_DENIED_ERROR: the user's grants leave the
        // claim table out (e.g. rights on the target table alone).
        Err(mysql_async::Error::Server(e)) if e.code == 1142 || e.code == 1044 => {
            Ok(Claim::Unchecked(e.message))
        }
        other => other,
    }
}

async fn claim_with_rights(
    conn: &mut Conn,
    table: &str,
    sync: &str,
    legacy: Option<&str>,
    source: &str,
) -> Result<Claim, mysql_async::Error> {
    conn.query_drop(CREATE).await?;
    if let Some(legacy) = legacy {
        conn.exec_drop(
            "UPDATE `_paimon_sync_targets` SET sync_name = ? WHERE target_table = ? AND sync_name = ?",
            (sync, table, legacy),
        )
        .await?;
    }
    conn.exec_drop(
        "INSERT IGNORE INTO `_paimon_sync_targets` (target_table, sync_name, source, claimed_at) \
         VALUES (?, ?, ?, NOW(6))",
        (table, sync, source),
    )
    .await?;
    let owner: Option<(String, String, String)> = conn
        .exec_first(
            "SELECT sync_name, source, DATE_FORMAT(claimed_at, '%Y-%m-%dT%H:%i:%sZ') \
             FROM `_paimon_sync_targets` WHERE target_table = ?",
            (table,),
        )
        .await?;
    Ok(match owner {
        Some((owner, source, claimed_at)) if owner != sync => Claim::Theirs {
            sync: owner,
            source,
            claimed_at,
        },
        _ => Claim::Ours,
    })
}

/// Gives up `sync`'s claim of `table` (`pms-worker reset`). A database without the claim table
/// has none.
pub async fn release(conn: &mut Conn, table: &str, sync: &str) -> Result<(), mysql_async::Error> {
    super::progress_table::ok_without_table(
        conn.exec_drop(
            "DELETE FROM `_paimon_sync_targets` WHERE target_table = ? AND sync_name = ?",
            (table, sync),
        )
        .await,
    )
}

impl super::MysqlConnection {
    /// Claims the target table for `cfg`'s sync; another sync's claim is an error, before
    /// anything is written.
    pub async fn claim_target(
        &self,
        cfg: &crate::config::WorkerConfig,
    ) -> crate::error::Result<()> {
        let mut conn = self.admin_conn("claim the target table").await?;
        let src = &cfg.spec.source;
        let source = format!("{}.{} in {}", src.database, src.table, src.warehouse);
        let sync = cfg.external_name();
        let legacy = cfg.legacy_external_name();
        let claim = claim(&mut conn, &self.table, &sync, legacy.as_deref(), &source)
            .await
            .map_err(|e| self.admin_err("claim the target table", e))?;
        match claim {
            Claim::Ours => Ok(()),
            Claim::Unchecked(why) => {
                tracing::warn!(%why, "can't create {TABLE}: whether another sync writes this table is not checked");
                Ok(())
            }
            Claim::Theirs {
                sync: owner,
                source: theirs,
                claimed_at,
            } => Err(crate::error::WorkerError::Validation {
                table: self.target.clone(),
                problems: vec![format!(
                    "it is written by the sync {owner:?} (of Paimon table {theirs}, since {claimed_at}), and this is \
                     the sync {sync:?}: two syncs writing one table overwrite each other's rows. Give this sync its \
                     own table; or, if {owner:?} is gone for good, `pms-worker reset` with its config (or `DELETE FROM \
                     {TABLE} WHERE target_table = '{}'`) releases the table",
                    self.table
                )],
            }),
        }
    }

    /// Gives up `cfg`'s sync's claim of its table (`pms-worker reset`; a rebuild's new
    /// generation, of the shadow table it wrote, after the swap).
    pub async fn release_target(
        &self,
        cfg: &crate::config::WorkerConfig,
    ) -> crate::error::Result<()> {
        let mut conn = self.admin_conn("release the target table").await?;
        release(&mut conn, &cfg.spec.sink.table, &cfg.external_name())
            .await
            .map_err(|e| self.admin_err("release the target table", e))
    }
}
