//! The MySQL sink: validates the target once, then writes each flush as one transaction of
//! multi-row deletes and upserts, retrying what is transient.

mod bulk;
pub mod layout;
mod progress;
mod retry;
pub mod statements;
pub mod target_schema;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use futures::StreamExt;

use mysql_async::prelude::*;
use mysql_async::{Conn, OptsBuilder, Params, Pool, PoolConstraints, PoolOpts, TxOpts, Value};
use tracing::{info, warn};

use crate::buffer::Batch;
use crate::checkpoint::Checkpoint;
use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};
use crate::failpoint;
use crate::metrics::Metrics;
use layout::{plan_layout, suggested_create_table, Layout, SourceColumn};
use statements::{chunk_ranges, wire_bytes, Dialect, Statements};
use target_schema::TargetTable;

pub struct MysqlSink {
    pool: Pool,
    target: String,
    layout: Layout,
    statements: Statements,
    guarded: bool,
    /// Write upserts with `LOAD DATA LOCAL INFILE` (a full read into an empty table).
    bulk: AtomicBool,
    bulk_statement: String,
    /// The target, quoted for SQL.
    table_sql: String,
    max_rows_per_statement: usize,
    max_statement_bytes: usize,
    max_retries: u32,
    metrics: Metrics,
}

/// With `delivery: exactly-once`, what `open` claimed: this run's epoch and the stored progress.
pub struct Claim {
    pub epoch: u64,
    pub progress: Option<Checkpoint>,
}

impl MysqlSink {
    /// Connects and validates the target table against the Paimon columns; writes nothing.
    pub async fn open(
        cfg: &WorkerConfig,
        source: &[SourceColumn],
        metrics: Metrics,
    ) -> Result<Self> {
        let target = cfg.target_name();
        let m = &cfg.mysql;
        let opts = OptsBuilder::default()
            .ip_or_hostname(m.host.clone())
            .tcp_port(m.port)
            .user(Some(m.user.clone()))
            .pass(m.password.clone())
            .db_name(Some(m.database.clone()))
            .stmt_cache_size(64)
            // Values are computed in UTC and must be stored as such; strict mode turns a value
            // that doesn't fit into an error instead of a silently truncated row.
            .init(vec![
                "SET SESSION time_zone = '+00:00'",
                "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'",
            ])
            .pool_opts(
                PoolOpts::default().with_constraints(PoolConstraints::new(1, 2).expect("1 <= 2")),
            );
        let pool = Pool::new(opts);
        let connect_err = |source| WorkerError::Connect {
            url: m.redacted_url(),
            source: Box::new(source),
        };
        let mut conn = pool.get_conn().await.map_err(connect_err)?;
        let (version, max_packet): (String, u64) = conn
            .query_first("SELECT VERSION(), @@max_allowed_packet")
            .await
            .map_err(connect_err)?
            .unwrap_or_default();
        let dialect = Dialect::from_version(&version);
        let table = TargetTable::load(&mut conn, &cfg.spec.sink.table)
            .await
            .map_err(connect_err)?;
        let Some(table) = table else {
            return Err(WorkerError::Validation {
                table: target,
                problems: vec![format!(
                    "the table does not exist in database {:?}; create it first, for example:\n{}",
                    m.database,
                    suggested_create_table(&cfg.spec.sink.table, source, &cfg.spec.sink.columns)
                )],
            });
        };
        let guard = cfg
            .spec
            .sink
            .sequence_guard
            .as_ref()
            .map(|g| g.column.as_str());
        let layout = plan_layout(
            source,
            &cfg.spec.sink.columns,
            &table,
            cfg.spec.sink.allow_extra_unique_keys,
        )
        .and_then(|layout| match guard {
            Some(g) => layout::check_guard_column(&layout, &table, g).map(|()| layout),
            None => Ok(layout),
        })
        .map_err(|problems| WorkerError::Validation {
            table: target.clone(),
            problems,
        })?;
        for w in &layout.warnings {
            warn!(table = %target, "{w}");
        }
        info!(table = %target, server = %version, ?dialect, max_allowed_packet = max_packet, columns = layout.columns.len(), "MySQL target validated");
        let statements = Statements::new(&cfg.spec.sink.table, &layout, dialect, guard);
        let bulk_statement = bulk::statement(
            &layout::quote_ident(&cfg.spec.sink.table),
            &layout
                .columns
                .iter()
                .map(|c| layout::quote_ident(&c.mysql))
                .collect::<Vec<_>>(),
        );
        Ok(Self {
            pool,
            target,
            layout,
            statements,
            guarded: guard.is_some(),
            bulk: AtomicBool::new(false),
            bulk_statement,
            table_sql: layout::quote_ident(&cfg.spec.sink.table),
            max_rows_per_statement: cfg.spec.sink.max_rows_per_statement as usize,
            // Leave room for the SQL text and protocol framing.
            max_statement_bytes: (max_packet as usize)
                .saturating_sub(64 * 1024)
                .clamp(64 * 1024, 16 << 20),
            max_retries: cfg.spec.sink.max_retries,
            metrics,
        })
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Turns the bulk path on or off (it applies to upsert-only flushes without a progress row
    /// or sequence guard).
    pub fn set_bulk(&self, on: bool) {
        self.bulk.store(on && !self.guarded, Ordering::Relaxed);
    }

    /// Whether the target table has no rows (so a full read may bulk-load it).
    pub async fn target_is_empty(&self) -> Result<bool> {
        let mut conn = self.conn().await?;
        let row: Option<i64> = conn
            .query_first(format!("SELECT 1 FROM {} LIMIT 1", self.table_sql))
            .await
            .map_err(|source| WorkerError::Sink {
                action: "look at",
                table: self.target.clone(),
                key: String::new(),
                source: Box::new(source),
            })?;
        Ok(row.is_none())
    }

    async fn bulk_write(&self, batch: &Batch) -> std::result::Result<(), Failure> {
        let mut data = Vec::with_capacity(batch.upserts.len() * 64);
        for row in &batch.upserts {
            bulk::encode_row(&row.iter().collect::<Vec<_>>(), &mut data);
        }
        let mut conn = self
            .pool
            .get_conn()
            .await
            .map_err(|e| Failure::new("connect", e))?;
        let data = bytes::Bytes::from(data);
        conn.set_infile_handler(async move {
            Ok(futures::stream::once(async move { Ok(data) }).boxed())
        });
        conn.query_drop(self.bulk_statement.as_str())
            .await
            .map_err(|e| Failure::new("bulk load", e))
    }

    /// Exactly-once: creates the progress table if needed, takes this slot over (a new epoch)
    /// and returns the progress committed by earlier runs.
    pub async fn claim(&self, cfg: &WorkerConfig) -> Result<Claim> {
        let mut conn = self.conn().await?;
        let (epoch, progress) =
            progress::claim(&mut conn, &cfg.sync_name, cfg.slot.slot, cfg.slot.slots)
                .await
                .map_err(|source| WorkerError::Sink {
                    action: "claim progress",
                    table: progress::TABLE.into(),
                    key: String::new(),
                    source: Box::new(source),
                })?;
        Ok(Claim { epoch, progress })
    }

    /// Writes one flush in one transaction: deletes first (they may free unique values the
    /// upserts need), then upserts, then (exactly-once) the progress row. Transient failures
    /// retry the whole transaction.
    pub async fn write(&self, batch: &Batch, progress: Option<&Checkpoint>) -> Result<()> {
        if batch.is_empty() && progress.is_none() {
            return Ok(());
        }
        let started = Instant::now();
        let mut attempt = 0;
        loop {
            match self.try_write(batch, progress).await {
                Ok(()) => break,
                Err(failure)
                    if retry::is_transient(&failure.error) && attempt < self.max_retries =>
                {
                    attempt += 1;
                    self.metrics.retries.inc();
                    let wait = retry::backoff(attempt);
                    warn!(table = %self.target, attempt, max_retries = self.max_retries, wait_ms = wait.as_millis() as u64, error = %failure.error, "transient MySQL failure, retrying the flush");
                    tokio::time::sleep(wait).await;
                }
                Err(failure) => {
                    return Err(WorkerError::Sink {
                        action: failure.action,
                        table: self.target.clone(),
                        key: failure
                            .key
                            .map(|k| format!(" for key ({k})"))
                            .unwrap_or_default(),
                        source: Box::new(failure.error),
                    })
                }
            }
        }
        self.metrics.observe_flush(batch, started.elapsed());
        Ok(())
    }

    async fn try_write(
        &self,
        batch: &Batch,
        progress: Option<&Checkpoint>,
    ) -> std::result::Result<(), Failure> {
        failpoint::hit("before-transaction");
        if self.bulk.load(Ordering::Relaxed) && batch.deletes.is_empty() && progress.is_none() {
            match self.bulk_write(batch).await {
                Ok(()) => return Ok(()),
                Err(f) if bulk::is_refused(&f.error) => {
                    warn!(table = %self.target, error = %f.error, "LOAD DATA LOCAL INFILE is refused (local_infile off?): using upserts");
                    self.bulk.store(false, Ordering::Relaxed);
                }
                Err(f) if retry::is_transient(&f.error) => return Err(f),
                // A row the server refuses: the upserts below find it and name its key.
                Err(_) => {}
            }
        }
        let mut conn = self
            .pool
            .get_conn()
            .await
            .map_err(|e| Failure::new("connect", e))?;
        let mut tx = conn
            .start_transaction(TxOpts::default())
            .await
            .map_err(|e| Failure::new("begin", e))?;
        let guard = |snapshots: &[i64], i: usize| self.guarded.then(|| Value::Int(snapshots[i]));
        let key_rows: Vec<Vec<&Value>> = batch
            .deletes
            .iter()
            .map(|r| self.layout.key_positions.iter().map(|&i| &r[i]).collect())
            .collect();
        let delete_guards: Vec<Option<Value>> = (0..batch.deletes.len())
            .map(|i| guard(&batch.delete_snapshots, i))
            .collect();
        let per_row = self.statements.delete_params();
        self.run_chunks(&mut tx, "delete", &key_rows, &delete_guards, per_row, |n| {
            self.statements.delete(n)
        })
        .await?;
        let rows: Vec<Vec<&Value>> = batch.upserts.iter().map(|r| r.iter().collect()).collect();
        let upsert_guards: Vec<Option<Value>> = (0..batch.upserts.len())
            .map(|i| guard(&batch.upsert_snapshots, i))
            .collect();
        let per_row = self.statements.upsert_params();
        self.run_chunks(&mut tx, "upsert", &rows, &upsert_guards, per_row, |n| {
            self.statements.upsert(n)
        })
        .await?;
        if let Some(cp) = progress {
            let (sql, params) = progress::update(cp);
            tx.exec_drop(sql, params)
                .await
                .map_err(|e| Failure::new("progress update", e))?;
            if tx.affected_rows() == 0 {
                // Dropping the transaction rolls it back: nothing of this flush is written.
                return Err(Failure::new(
                    "progress update",
                    mysql_async::Error::Other(
                        format!(
                            "fenced: slot {} of sync {} was taken over by a newer worker (epoch > {}); this one stops without committing",
                            cp.slot, cp.sync, cp.epoch
                        )
                        .into(),
                    ),
                ));
            }
        }
        failpoint::hit("after-batch-before-commit");
        tx.commit().await.map_err(|e| Failure::new("commit", e))
    }

    /// Runs statements of up to `sink.maxRowsPerStatement` rows. `guards[i]`, when set, is
    /// appended to row i's parameters (the sequence guard's value).
    async fn run_chunks(
        &self,
        tx: &mut mysql_async::Transaction<'_>,
        action: &'static str,
        rows: &[Vec<&Value>],
        guards: &[Option<Value>],
        params_per_row: usize,
        sql_for: impl Fn(usize) -> String,
    ) -> std::result::Result<(), Failure> {
        let ranges = chunk_ranges(
            rows.len(),
            params_per_row,
            self.max_rows_per_statement,
            self.max_statement_bytes,
            |i| rows[i].iter().map(|v| wire_bytes(v)).sum(),
        );
        for (n, range) in ranges.into_iter().enumerate() {
            if n == 1 {
                failpoint::hit("mid-chunk");
            }
            let chunk = &rows[range.clone()];
            let params: Vec<Value> = chunk
                .iter()
                .zip(&guards[range])
                .flat_map(|(r, g)| r.iter().map(|v| (*v).clone()).chain(g.clone()))
                .collect();
            if let Err(error) = tx
                .exec_drop(sql_for(chunk.len()), Params::Positional(params))
                .await
            {
                let key = if retry::is_transient(&error) {
                    None
                } else {
                    self.locate_failing_row(tx, chunk, &sql_for).await
                };
                return Err(Failure { action, error, key });
            }
        }
        Ok(())
    }

    /// After a data error in a multi-row statement, finds the row that fails, so the error
    /// can name its key. The transaction is rolled back afterwards anyway.
    async fn locate_failing_row(
        &self,
        tx: &mut mysql_async::Transaction<'_>,
        chunk: &[Vec<&Value>],
        sql_for: &impl Fn(usize) -> String,
    ) -> Option<String> {
        let sql = sql_for(1);
        let is_delete = sql.starts_with("DELETE");
        for row in chunk {
            let mut params: Vec<Value> = row.iter().map(|v| (*v).clone()).collect();
            // The highest guard value: the row's own values are on trial, not its age.
            if self.guarded {
                params.push(Value::Int(i64::MAX));
            }
            if tx
                .exec_drop(sql.as_str(), Params::Positional(params))
                .await
                .is_err()
            {
                let key: Vec<String> = if is_delete {
                    row.iter().map(|v| v.as_sql(false)).collect()
                } else {
                    self.layout
                        .key_positions
                        .iter()
                        .map(|&i| row[i].as_sql(false))
                        .collect()
                };
                return Some(key.join(", "));
            }
        }
        None
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
        if let Err(e) = self.pool.disconnect().await {
            warn!(error = %e, "closing the MySQL pool");
        }
    }
}

struct Failure {
    action: &'static str,
    error: mysql_async::Error,
    key: Option<String>,
}

impl Failure {
    fn new(action: &'static str, error: mysql_async::Error) -> Self {
        Self {
            action,
            error,
            key: None,
        }
    }
}
