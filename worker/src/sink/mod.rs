//! The MySQL sink, in the manner of Vector's sinks: it owns every statement run against the
//! target (`sql.rs`, `progress_table.rs`, `probe.rs`), turns a [`WriteRequest`] into one
//! transaction (`transaction.rs`), and retries a transient failure by running the whole
//! attempt again (`retry.rs`). It keeps no state of the pipeline's: what to write, how, and
//! with which progress row comes with each request.

mod add_column;
mod bulk;
mod connect;
pub mod create_table;
mod literal;
mod privileges;
mod probe;
pub mod progress_table;
mod request;
mod retry;
mod scan;
mod shadow;
mod shared_pool;
mod slot_lock;
mod sql;
mod target_claim;
mod tls;
mod transaction;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use mysql_async::prelude::*;
use mysql_async::{Conn, Pool};
use tracing::{info, warn};

use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};
use crate::mapping::{Layout, TargetTable};
use crate::metrics::Metrics;
pub use connect::ServerInfo;
pub use progress_table::{Progress, ProgressRow, ProgressUpdate};
pub use request::{WriteMode, WriteRequest};
use retry::Failure;
pub use shared_pool::SharedPool;
use slot_lock::SlotLock;
pub use sql::Dialect;
use sql::{Statements, Template};

/// Writes of disjoint keys the pipeline keeps in flight at most, each on a connection of its
/// own. Two keep the server busy while the next batch is decoded; more only queue on a 2-core
/// machine.
pub const MAX_WRITES_IN_FLIGHT: usize = 2;

/// A connection to the target database, before the layout is known.
pub struct MysqlConnection {
    pool: Pool,
    /// The pool is a pooled worker's, shared with its other tables: never closed here.
    shared: bool,
    opts: mysql_async::Opts,
    server: ServerInfo,
    /// `db.table`, for messages.
    target: String,
    table: String,
    redacted_url: String,
}

impl MysqlConnection {
    pub async fn open(cfg: &WorkerConfig) -> Result<Self> {
        Self::open_in(cfg, None).await
    }

    /// Through `shared` when given (a pooled worker's pool, which is never closed here).
    pub async fn open_in(cfg: &WorkerConfig, shared: Option<&SharedPool>) -> Result<Self> {
        let (pool, opts, server) = match shared {
            Some(shared) => shared.get(&cfg.mysql).await?,
            // One connection for each write in flight, one for the checkpoint's reads.
            None => connect::connect(&cfg.mysql, 1 + MAX_WRITES_IN_FLIGHT).await?,
        };
        let redacted_url = cfg.mysql.redacted_url();
        Ok(Self {
            pool,
            shared: shared.is_some(),
            opts,
            server,
            target: cfg.target_name(),
            table: cfg.spec.sink.table.clone(),
            redacted_url,
        })
    }

    /// A connection for read-only probes (the target's description, `check`).
    pub async fn probe_conn(&self) -> Result<mysql_async::Conn> {
        self.pool.get_conn().await.map_err(|e| self.read_failed(e))
    }

    pub fn server(&self) -> &ServerInfo {
        &self.server
    }

    /// The target table as `information_schema` describes it; `None` when it does not exist.
    pub async fn describe_target(&self) -> Result<Option<TargetTable>> {
        let mut conn = self.probe_conn().await?;
        probe::describe_table(&mut conn, &self.table)
            .await
            .map_err(|e| self.read_failed(e))
    }

    pub async fn close(self) {
        close_pool(self.pool, self.shared).await
    }

    /// A read of the target that failed, naming the server.
    pub(crate) fn read_failed(&self, source: mysql_async::Error) -> WorkerError {
        WorkerError::Connect {
            url: self.redacted_url.clone(),
            source: Box::new(source),
        }
    }
}

pub struct MysqlSink {
    pool: Pool,
    shared: bool,
    opts: mysql_async::Opts,
    /// At-least-once: the named lock that says this run owns its slot (see `slot_lock.rs`).
    slot_lock: Option<SlotLock>,
    target: String,
    key_positions: Vec<usize>,
    /// The columns a delete names: the key, then the partition of a key that can move.
    delete_positions: Vec<usize>,
    statements: Statements,
    upsert: Template,
    delete: Template,
    guarded: bool,
    /// The server refused `LOAD DATA LOCAL` once: every later bulk request uses upserts.
    bulk_refused: AtomicBool,
    /// The last successful attempt was a bulk load (the metrics count its rows as `bulk`).
    wrote_bulk: AtomicBool,
    max_rows_per_statement: usize,
    max_statement_bytes: usize,
    max_retries: u32,
    metrics: Metrics,
    /// `SELECT VERSION()` at connect time (how the server tells its identity).
    server_version: String,
    /// The identity of the server this run started on (see `connect::server_identity`).
    started_on: String,
}

impl MysqlSink {
    /// The sink for a validated layout; writes nothing yet.
    pub fn new(
        conn: MysqlConnection,
        layout: &Layout,
        cfg: &WorkerConfig,
        metrics: Metrics,
    ) -> Self {
        let sink = &cfg.spec.sink;
        let guard = sink.sequence_guard.as_ref().map(|g| g.column.as_str());
        for w in &layout.warnings {
            warn!(table = %conn.target, "{w}");
        }
        info!(table = %conn.target, server = %conn.server.version, dialect = ?conn.server.dialect,
              max_allowed_packet = conn.server.max_allowed_packet, columns = layout.columns.len(), "MySQL target validated");
        let statements = Statements::new(&sink.table, layout, conn.server.dialect, guard);
        Self {
            upsert: statements.upsert(),
            delete: statements.delete(),
            statements,
            key_positions: layout.key_positions.clone(),
            delete_positions: layout.delete_positions().collect(),
            guarded: guard.is_some(),
            bulk_refused: AtomicBool::new(false),
            wrote_bulk: AtomicBool::new(false),
            max_rows_per_statement: sink.max_rows_per_statement as usize,
            // Leave room for the SQL text and protocol framing.
            max_statement_bytes: (conn.server.max_allowed_packet as usize)
                .saturating_sub(64 * 1024)
                .clamp(64 * 1024, 16 << 20),
            max_retries: sink.max_retries,
            metrics,
            pool: conn.pool,
            shared: conn.shared,
            opts: conn.opts,
            slot_lock: None,
            target: conn.target,
            server_version: conn.server.version,
            started_on: conn.server.identity,
        }
    }

    /// The failure of a fence that fired (`fenced`): when the server `conn` reaches is another
    /// one than this run started on, it is a failover behind the URL (the new server holds no
    /// lock of this run, or an older progress row), not another worker, and says so, with
    /// what the next start does.
    async fn fence_failure(
        &self,
        conn: &mut impl Queryable,
        action: &'static str,
        fenced: String,
        next_start: &str,
    ) -> Failure {
        let message = match connect::server_identity(conn, &self.server_version).await {
            Ok(now) if now != self.started_on => format!(
                "the MySQL server behind {} is another one since this run started ({now}, was {}): a failover, \
                 so this worker stops without committing; {next_start}",
                self.target, self.started_on
            ),
            _ => fenced,
        };
        Failure::new(action, mysql_async::Error::Other(message.into()))
    }

    /// The identity of the server the pool reaches now (`connect::server_identity`): after a
    /// reconnect it may be another one behind the same URL (a failover). A lost connection is
    /// retried as a flush's is: right after a failover the pool still holds connections the
    /// switch ended, and the question must reach the server that is there now.
    pub async fn server_identity(&self) -> Result<String> {
        let ask = || async {
            let failed = |e| Failure::new("read the server's identity", e);
            let mut conn = self.pool.get_conn().await.map_err(failed)?;
            connect::server_identity(&mut conn, &self.server_version)
                .await
                .map_err(failed)
        };
        retry::with_retries(self.max_retries, ask, |attempt, failure, wait| {
            warn!(table = %self.target, attempt, wait_ms = wait.as_millis() as u64, error = %failure.error,
                  "could not ask the MySQL server who it is, asking again");
        })
        .await
        .map_err(|f| self.error(f))
    }

    /// Whether the target table has no rows (so a full read may bulk-load it).
    pub async fn target_is_empty(&self) -> Result<bool> {
        let mut conn = self.conn().await?;
        let row: Option<i64> = conn
            .query_first(self.statements.any_row())
            .await
            .map_err(|e| self.error(Failure::new("look at", e)))?;
        Ok(row.is_none())
    }

    /// Exactly-once: the slot counts the sync's progress rows were committed with (creating
    /// the progress table if needed).
    pub async fn progress_slot_counts(&self, sync: &str) -> Result<Vec<u32>> {
        let mut conn = self.conn().await?;
        progress_table::slot_counts(&mut conn, sync)
            .await
            .map_err(progress_error)
    }

    /// Exactly-once rescale at a consistent cut (see `progress_table::rescale_at_cut`).
    pub async fn rescale_progress_at_cut(
        &self,
        sync: &str,
        slots: u32,
    ) -> Result<progress_table::Rescale> {
        let mut conn = self.conn().await?;
        progress_table::rescale_at_cut(&mut conn, sync, slots)
            .await
            .map_err(progress_error)
    }

    /// Takes the slot over with a new epoch (see `progress_table::claim`).
    /// Exactly-once: the rows of `legacy` become `name`'s, unless `name` has rows already
    /// (see `progress_table::adopt`); whether any moved.
    pub async fn adopt_progress_rows(&self, legacy: &str, name: &str) -> Result<bool> {
        let mut conn = self.conn().await?;
        progress_table::adopt(&mut conn, legacy, name)
            .await
            .map_err(|e| self.error(Failure::new("rename the progress rows", e)))
    }

    pub async fn claim_progress_row(
        &self,
        sync: &str,
        slot: u32,
        slots: u32,
    ) -> Result<ProgressRow> {
        let mut conn = self.conn().await?;
        progress_table::claim(&mut conn, sync, slot, slots)
            .await
            .map_err(progress_error)
    }

    /// Writes one flush in one transaction; a transient failure runs the whole attempt again.
    pub async fn write(&self, request: &WriteRequest) -> Result<()> {
        if request.is_empty() {
            return Ok(());
        }
        let started = Instant::now();
        let first = AtomicBool::new(true);
        retry::with_retries(
            self.max_retries,
            || self.attempt(request, !first.swap(false, Ordering::Relaxed)),
            |attempt, failure, wait| {
                self.metrics.retries.inc();
                self.metrics.error(crate::metrics::ErrorReason::MysqlTransient);
                warn!(table = %self.target, attempt, max_retries = self.max_retries, wait_ms = wait.as_millis() as u64,
                      error = %failure.error, "transient MySQL failure, retrying the flush");
            },
        )
        .await
        .map_err(|f| self.error(f))?;
        let bulk = self.wrote_bulk.swap(false, Ordering::Relaxed);
        self.metrics
            .observe_flush(&request.batch, started.elapsed(), bulk);
        Ok(())
    }

    /// After a failed attempt of an exactly-once flush: whether its commit went through anyway
    /// (the acknowledgement was lost), told by the progress row holding the flush's position.
    async fn already_committed(&self, update: &ProgressUpdate) -> Result<bool, Failure> {
        let mut conn = self
            .pool
            .get_conn()
            .await
            .map_err(|e| Failure::new("connect", e))?;
        let stored = progress_table::read(&mut conn, &update.row.sync, update.row.slot)
            .await
            .map_err(|e| Failure::new("progress read", e))?;
        Ok(
            stored
                .is_some_and(|r| r.epoch == update.row.epoch && r.progress == update.row.progress),
        )
    }

    fn error(&self, failure: Failure) -> WorkerError {
        WorkerError::Sink {
            action: failure.action,
            table: self.target.clone(),
            key: failure
                .key
                .map(|k| format!(" for key ({k})"))
                .unwrap_or_default(),
            source: Box::new(failure.error),
        }
    }

    async fn conn(&self) -> Result<Conn> {
        self.pool
            .get_conn()
            .await
            .map_err(|source| WorkerError::Connect {
                url: self.target.clone(),
                source: Box::new(source),
            })
    }

    pub async fn close(self) {
        close_pool(self.pool, self.shared).await
    }
}

async fn close_pool(pool: Pool, shared: bool) {
    if shared {
        return;
    }
    if let Err(e) = pool.disconnect().await {
        warn!(error = %e, "closing the MySQL pool");
    }
}

fn progress_error(source: mysql_async::Error) -> WorkerError {
    if matches!(&source, mysql_async::Error::Server(e) if matches!(e.code, 1142 | 1143 | 1044)) {
        return WorkerError::Validation {
            table: progress_table::TABLE.into(),
            problems: vec![format!(
                "{source}: with delivery exactly-once the MySQL user also needs `GRANT CREATE, SELECT, INSERT, \
                 UPDATE, ALTER ON <database>.{} TO …` (or create the table first: see docs/standalone.md)",
                progress_table::TABLE
            )],
        };
    }
    WorkerError::Sink {
        action: "claim progress",
        table: progress_table::TABLE.into(),
        key: String::new(),
        source: Box::new(source),
    }
}
