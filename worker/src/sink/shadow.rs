//! The statements of a shadow-table rebuild (`rebuild/`): create the shadow like the target,
//! check that a RENAME carries everything the table has, swap the two atomically, and keep the
//! old table until its retention ends.

use mysql_async::prelude::*;

use super::MysqlConnection;
use crate::error::{Result, WorkerError};
use crate::mapping::quote_ident;

/// The comment the old table carries after the swap: when it was replaced (RFC 3339).
const REPLACED_AT: &str = "pms: replaced by a rebuild at ";

impl MysqlConnection {
    pub(super) fn admin_err(&self, what: &'static str, source: mysql_async::Error) -> WorkerError {
        WorkerError::Sink {
            action: what,
            table: self.target.clone(),
            key: String::new(),
            source: Box::new(source),
        }
    }

    pub(super) async fn admin_conn(&self, what: &'static str) -> Result<mysql_async::Conn> {
        self.pool
            .get_conn()
            .await
            .map_err(|e| self.admin_err(what, e))
    }

    async fn admin(&self, what: &'static str, sql: String) -> Result<()> {
        let mut conn = self.admin_conn(what).await?;
        conn.query_drop(sql)
            .await
            .map_err(|e| self.admin_err(what, e))
    }

    pub async fn table_exists(&self, table: &str) -> Result<bool> {
        Ok(self.table_comment(table).await?.is_some())
    }

    /// A table's comment; `None`: there is no such table.
    async fn table_comment(&self, table: &str) -> Result<Option<String>> {
        let mut conn = self.admin_conn("look up").await?;
        conn.exec_first(
            "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
            (table,),
        )
        .await
        .map_err(|e| self.admin_err("look up", e))
    }

    /// What a RENAME would not carry over to a table built beside this one: its triggers, and
    /// foreign keys from or to it.
    pub async fn rename_blockers(&self) -> Result<Vec<String>> {
        let mut conn = self.admin_conn("look up").await?;
        let found: Vec<(String, String)> = conn
            .exec(
                "SELECT 'trigger', TRIGGER_NAME FROM information_schema.TRIGGERS \
                   WHERE EVENT_OBJECT_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE = ? \
                 UNION ALL SELECT 'foreign key', CONCAT(TABLE_NAME, '.', CONSTRAINT_NAME) \
                   FROM information_schema.REFERENTIAL_CONSTRAINTS \
                   WHERE CONSTRAINT_SCHEMA = DATABASE() AND (TABLE_NAME = ? OR REFERENCED_TABLE_NAME = ?)",
                (&self.table, &self.table, &self.table),
            )
            .await
            .map_err(|e| self.admin_err("look up", e))?;
        Ok(found
            .into_iter()
            .map(|(kind, name)| format!("{kind} {name}"))
            .collect())
    }

    /// `CREATE TABLE shadow LIKE target`: the same columns, indexes, charset, collation and
    /// partitioning (foreign keys and triggers are refused before).
    pub async fn create_shadow(&self, shadow: &str) -> Result<()> {
        self.admin(
            "create the shadow table",
            format!(
                "CREATE TABLE {} LIKE {}",
                quote_ident(shadow),
                quote_ident(&self.table)
            ),
        )
        .await
    }

    pub async fn drop_table(&self, table: &str) -> Result<()> {
        self.admin(
            "drop",
            format!("DROP TABLE IF EXISTS {}", quote_ident(table)),
        )
        .await
    }

    /// One `RENAME TABLE target TO old, shadow TO target`: readers see one table or the other.
    pub async fn swap_in(&self, shadow: &str, old: &str) -> Result<()> {
        self.admin(
            "swap in the rebuilt table",
            format!(
                "RENAME TABLE {t} TO {o}, {s} TO {t}",
                t = quote_ident(&self.table),
                o = quote_ident(old),
                s = quote_ident(shadow)
            ),
        )
        .await?;
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        self.admin(
            "mark the replaced table",
            format!(
                "ALTER TABLE {} COMMENT = '{REPLACED_AT}{now}'",
                quote_ident(old)
            ),
        )
        .await
    }

    /// When the old table of a rebuild was replaced, from its comment (`None`: not ours).
    pub async fn replaced_at(&self, old: &str) -> Result<Option<chrono::DateTime<chrono::Utc>>> {
        Ok(self
            .table_comment(old)
            .await?
            .and_then(|c| c.strip_prefix(REPLACED_AT).map(str::to_string))
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())
            .map(|t| t.with_timezone(&chrono::Utc)))
    }

    /// The target's row count.
    pub async fn count_target(&self) -> Result<u64> {
        let mut conn = self.admin_conn("count").await?;
        let n: Option<u64> = conn
            .query_first(format!("SELECT COUNT(*) FROM {}", quote_ident(&self.table)))
            .await
            .map_err(|e| self.admin_err("count", e))?;
        Ok(n.unwrap_or(0))
    }

    /// Exactly-once: the new generation's progress rows become the sync's, in one transaction
    /// (see `progress_table::hand_over`).
    pub async fn hand_over_progress(
        &self,
        from: &str,
        to: &str,
        retarget: &dyn Fn(Option<String>) -> Option<String>,
    ) -> Result<bool> {
        let mut conn = self.admin_conn("hand over the progress rows").await?;
        super::progress_table::hand_over(&mut conn, from, to, retarget)
            .await
            .map_err(|e| self.admin_err("hand over the progress rows", e))
    }

    /// Exactly-once: every slot of `sync` at the end of `snapshot` (see `progress_table::set_all`).
    pub async fn set_progress(
        &self,
        sync: &str,
        slots: u32,
        snapshot: i64,
        belongs_to: Option<String>,
    ) -> Result<()> {
        let mut conn = self.admin_conn("set the progress rows").await?;
        super::progress_table::set_all(&mut conn, sync, slots, snapshot, belongs_to)
            .await
            .map_err(|e| self.admin_err("set the progress rows", e))
    }

    /// Exactly-once: forgets every slot's position (see `progress_table::remove`).
    pub async fn remove_progress(&self, sync: &str) -> Result<()> {
        let mut conn = self.admin_conn("remove the progress rows").await?;
        super::progress_table::remove(&mut conn, sync)
            .await
            .map_err(|e| self.admin_err("remove the progress rows", e))
    }

    /// Exactly-once: fences every running worker of `sync` (see `progress_table::fence`).
    pub async fn fence_progress(&self, sync: &str) -> Result<()> {
        let mut conn = self.admin_conn("fence the sync's workers").await?;
        super::progress_table::fence(&mut conn, sync)
            .await
            .map_err(|e| self.admin_err("fence the sync's workers", e))
    }
}
