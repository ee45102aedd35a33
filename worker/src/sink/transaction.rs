//! One attempt at writing a request: the bulk load where it applies, else one transaction of
//! deletes (they may free unique values the upserts need), upserts and the progress row.

use std::sync::atomic::Ordering;

use futures::StreamExt;
use mysql_async::prelude::*;
use mysql_async::{Transaction, TxOpts, Value};
use tracing::warn;

use super::retry::{is_transient, Failure};
use super::sql::Template;
use super::{bulk, progress_table, MysqlSink, WriteMode, WriteRequest};
use crate::failpoint;

/// The size of the pieces a bulk load's data is sent in.
const INFILE_PIECE: usize = 256 * 1024;

impl MysqlSink {
    /// One attempt; a `retry` of an exactly-once flush first checks whether the previous
    /// attempt's commit went through (its acknowledgement lost), and then writes nothing.
    pub(super) async fn attempt(&self, request: &WriteRequest, retry: bool) -> Result<(), Failure> {
        if let Some(update) = request.progress_row.as_ref().filter(|_| retry) {
            if self.already_committed(update).await? {
                warn!(table = %self.target, "the previous attempt committed although its acknowledgement was lost: not writing it again");
                return Ok(());
            }
        }
        failpoint::hit("before-transaction");
        let batch = &request.batch;
        let bulk_applies = request.mode == WriteMode::Bulk
            && batch.deletes.is_empty()
            && request.progress_row.is_none()
            && !self.guarded
            && !self.bulk_refused.load(Ordering::Relaxed);
        if bulk_applies {
            match self.bulk_load(request).await {
                Ok(()) => {
                    self.wrote_bulk.store(true, Ordering::Relaxed);
                    return Ok(());
                }
                Err(f) if bulk::is_refused(&f.error) => {
                    warn!(table = %self.target, error = %f.error, "LOAD DATA LOCAL INFILE is refused (local_infile off?): using upserts");
                    self.bulk_refused.store(true, Ordering::Relaxed);
                }
                Err(f) if is_transient(&f.error) => return Err(f),
                // A row the server refuses (or warns about): the upserts below find it and name its key.
                Err(f) => {
                    warn!(table = %self.target, error = %f.error, "the bulk load failed: writing this batch with upserts")
                }
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
        let mut sql = Vec::new();
        // Deletes first: they may free unique values the upserts need.
        let deletes = Rows {
            rows: &batch.deletes,
            positions: Some(&self.delete_positions),
            snapshots: self.guarded.then_some(&batch.delete_snapshots[..]),
        };
        self.run_statements(&mut tx, Statement::Delete, &deletes, &mut sql)
            .await?;
        let upserts = Rows {
            rows: &batch.upserts,
            positions: None,
            snapshots: self.guarded.then_some(&batch.upsert_snapshots[..]),
        };
        self.run_statements(&mut tx, Statement::Upsert, &upserts, &mut sql)
            .await?;
        if let Some(update) = &request.progress_row {
            let (sql, params) = progress_table::update(update);
            tx.exec_drop(sql, params)
                .await
                .map_err(|e| Failure::new("progress update", e))?;
            if tx.affected_rows() == 0 {
                // Dropping the transaction rolls it back: nothing of this flush is written.
                let row = &update.row;
                let fenced = format!(
                    "fenced: the progress row of slot {} of sync {} is no longer at epoch {} and the position this \
                     flush started from: another worker took the slot over, so this one stops without committing",
                    row.slot, row.sync, row.epoch
                );
                let next = "the next start resumes from the progress row the new server holds, which moved with its rows";
                return Err(self
                    .fence_failure(&mut tx, "progress update", fenced, next)
                    .await);
            }
        }
        self.check_slot(&mut tx).await?;
        failpoint::hit("after-batch-before-commit");
        tx.commit().await.map_err(|e| Failure::new("commit", e))?;
        if failpoint::fail("commit-ack-lost") {
            // The server committed; the client never hears of it, as when the connection drops.
            let lost = std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "failpoint commit-ack-lost",
            );
            return Err(Failure::new("commit", mysql_async::Error::Io(lost.into())));
        }
        Ok(())
    }

    async fn bulk_load(&self, request: &WriteRequest) -> Result<(), Failure> {
        let mut data = Vec::with_capacity(request.batch.upserts.len() * 64);
        for row in &request.batch.upserts {
            bulk::encode_row(row, &mut data);
        }
        let mut conn = self
            .pool
            .get_conn()
            .await
            .map_err(|e| Failure::new("connect", e))?;
        // Handed over in slices (no copy): the connection's write buffers grow to the largest
        // piece they are given and keep that size, so one whole batch would stay allocated
        // per connection (hundreds of MiB for wide rows) beyond maxBufferBytes.
        let data = bytes::Bytes::from(data);
        let pieces: Vec<std::io::Result<bytes::Bytes>> = (0..data.len())
            .step_by(INFILE_PIECE)
            .map(|at| Ok(data.slice(at..(at + INFILE_PIECE).min(data.len()))))
            .collect();
        conn.set_infile_handler(async move { Ok(futures::stream::iter(pieces).boxed()) });
        // LOCAL turns data errors into warnings even in strict mode: the load runs in a
        // transaction that any warning rolls back, and the upserts (strict) then name the row.
        // The driver's transaction: one that ends in an error rolls back before the pool hands
        // its connection out again.
        let failed = |e| Failure::new("bulk load", e);
        let mut tx = conn
            .start_transaction(TxOpts::default())
            .await
            .map_err(failed)?;
        tx.query_drop(self.statements.load_data())
            .await
            .map_err(failed)?;
        if tx.get_warnings() > 0 {
            let first: Option<(String, u32, String)> = tx
                .query_first("SHOW WARNINGS LIMIT 1")
                .await
                .map_err(failed)?;
            tx.rollback().await.map_err(failed)?;
            let (_, code, message) = first.unwrap_or_default();
            return Err(failed(mysql_async::Error::Server(
                mysql_async::ServerError {
                    code: code as u16,
                    message: format!(
                        "the bulk load raised warnings and was rolled back: {message}"
                    ),
                    state: "01000".into(),
                },
            )));
        }
        self.check_slot(&mut tx).await?;
        tx.commit().await.map_err(failed)
    }

    /// Runs statements of up to `sink.maxRowsPerStatement` rows and about `max_statement_bytes`
    /// of text, built in `sql` (reused from statement to statement).
    async fn run_statements(
        &self,
        tx: &mut Transaction<'_>,
        statement: Statement,
        rows: &Rows<'_>,
        sql: &mut Vec<u8>,
    ) -> Result<(), Failure> {
        let template = self.template(statement);
        let mut start = 0;
        while start < rows.len() {
            if start > 0 {
                failpoint::hit("mid-chunk");
            }
            template.begin(sql);
            let mut end = start;
            while end < rows.len() && end - start < self.max_rows_per_statement {
                let before = sql.len();
                rows.push(template, sql, end == start, end);
                // A row that takes the statement past the budget goes into the next one
                // (alone, if it is that big).
                if end > start && sql.len() > self.max_statement_bytes {
                    sql.truncate(before);
                    break;
                }
                end += 1;
            }
            template.finish(sql);
            if let Err(error) = tx.query_drop(&*sql).await {
                let key = if is_transient(&error) {
                    None
                } else {
                    self.locate_failing_row(tx, statement, rows, start..end)
                        .await
                };
                return Err(Failure {
                    action: statement.action(),
                    error,
                    key,
                });
            }
            start = end;
        }
        Ok(())
    }

    /// After a data error in a multi-row statement, finds the row that fails, so the error
    /// can name its key. The transaction is rolled back afterwards anyway.
    async fn locate_failing_row(
        &self,
        tx: &mut Transaction<'_>,
        statement: Statement,
        rows: &Rows<'_>,
        range: std::ops::Range<usize>,
    ) -> Option<String> {
        let template = self.template(statement);
        let mut sql = Vec::new();
        // The highest guard value: the row's own values are on trial, not its age.
        let guard = self.guarded.then_some(i64::MAX);
        for i in range {
            template.begin(&mut sql);
            rows.push_guarded(template, &mut sql, true, i, guard);
            template.finish(&mut sql);
            if tx.query_drop(&sql).await.is_err() {
                // A delete's values are its key (and partition); an upsert's key is in its row.
                return Some(rows.describe(i, &self.key_positions));
            }
        }
        None
    }

    fn template(&self, statement: Statement) -> &Template {
        match statement {
            Statement::Upsert => &self.upsert,
            Statement::Delete => &self.delete,
        }
    }
}

/// The rows of one kind of statement: each row's values (all of them, or those at
/// `positions`), then its snapshot as the guard value when the sink is guarded.
struct Rows<'a> {
    rows: &'a [Vec<Value>],
    positions: Option<&'a [usize]>,
    snapshots: Option<&'a [i64]>,
}

impl<'a> Rows<'a> {
    fn len(&self) -> usize {
        self.rows.len()
    }

    /// Appends row `i` to the statement `template` is building in `out`.
    fn push(&self, template: &Template, out: &mut Vec<u8>, first: bool, i: usize) {
        self.push_guarded(template, out, first, i, self.snapshots.map(|s| s[i]));
    }

    /// Appends row `i` with `guard` as its guard value.
    fn push_guarded(
        &self,
        template: &Template,
        out: &mut Vec<u8>,
        first: bool,
        i: usize,
        guard: Option<i64>,
    ) {
        let row = &self.rows[i];
        match self.positions {
            Some(positions) => {
                template.push_row(out, first, positions.iter().map(|&p| &row[p]), guard)
            }
            None => template.push_row(out, first, row.iter(), guard),
        }
    }

    /// Row `i`'s values (without the guard), as SQL, for an error message.
    fn describe(&self, i: usize, positions: &[usize]) -> String {
        let row = &self.rows[i];
        let picked: Vec<String> = match self.positions {
            Some(p) => p.iter().map(|&p| row[p].as_sql(false)).collect(),
            None => positions.iter().map(|&p| row[p].as_sql(false)).collect(),
        };
        picked.join(", ")
    }
}

#[derive(Clone, Copy)]
enum Statement {
    Upsert,
    Delete,
}

impl Statement {
    fn action(self) -> &'static str {
        match self {
            Statement::Upsert => "upsert",
            Statement::Delete => "delete",
        }
    }
}
