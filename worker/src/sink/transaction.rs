//! One attempt at writing a request: the bulk load where it applies, else one transaction of
//! deletes (they may free unique values the upserts need), upserts and the progress row.

use std::sync::atomic::Ordering;

use futures::StreamExt;
use mysql_async::prelude::*;
use mysql_async::{Params, Transaction, TxOpts, Value};
use tracing::warn;

use super::chunks::{chunk_ranges, wire_bytes};
use super::retry::{is_transient, Failure};
use super::{bulk, progress_table, MysqlSink, WriteMode, WriteRequest};
use crate::failpoint;

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
        let guard = |snapshot: i64| self.guarded.then_some(Value::Int(snapshot));
        let keys: Vec<(Vec<&Value>, Option<Value>)> = batch
            .deletes
            .iter()
            .zip(&batch.delete_snapshots)
            .map(|(r, &s)| {
                (
                    self.delete_positions.iter().map(|&i| &r[i]).collect(),
                    guard(s),
                )
            })
            .collect();
        self.run_chunks(&mut tx, Statement::Delete, &keys).await?;
        let rows: Vec<(Vec<&Value>, Option<Value>)> = batch
            .upserts
            .iter()
            .zip(&batch.upsert_snapshots)
            .map(|(r, &s)| (r.iter().collect(), guard(s)))
            .collect();
        self.run_chunks(&mut tx, Statement::Upsert, &rows).await?;
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
                return Err(Failure::new(
                    "progress update",
                    mysql_async::Error::Other(fenced.into()),
                ));
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
        let data = bytes::Bytes::from(data);
        conn.set_infile_handler(async move {
            Ok(futures::stream::once(async move { Ok(data) }).boxed())
        });
        // LOCAL turns data errors into warnings even in strict mode: the load runs in a
        // transaction that any warning rolls back, and the upserts (strict) then name the row.
        let failed = |e| Failure::new("bulk load", e);
        conn.query_drop("START TRANSACTION").await.map_err(failed)?;
        conn.query_drop(self.statements.load_data())
            .await
            .map_err(failed)?;
        if conn.get_warnings() > 0 {
            let first: Option<(String, u32, String)> = conn
                .query_first("SHOW WARNINGS LIMIT 1")
                .await
                .map_err(failed)?;
            conn.query_drop("ROLLBACK").await.map_err(failed)?;
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
        if let Err(fenced) = self.check_slot(&mut conn).await {
            conn.query_drop("ROLLBACK").await.map_err(failed)?;
            return Err(fenced);
        }
        conn.query_drop("COMMIT").await.map_err(failed)
    }

    /// Runs statements of up to `sink.maxRowsPerStatement` rows; each row is its values and,
    /// with a sequence guard, the guard value appended.
    async fn run_chunks(
        &self,
        tx: &mut Transaction<'_>,
        statement: Statement,
        rows: &[(Vec<&Value>, Option<Value>)],
    ) -> Result<(), Failure> {
        let params_per_row = match statement {
            Statement::Upsert => self.statements.upsert_params(),
            Statement::Delete => self.statements.delete_params(),
        };
        let ranges = chunk_ranges(
            rows.len(),
            params_per_row,
            self.max_rows_per_statement,
            self.max_statement_bytes,
            |i| rows[i].0.iter().map(|v| wire_bytes(v)).sum(),
        );
        for (n, range) in ranges.into_iter().enumerate() {
            if n == 1 {
                failpoint::hit("mid-chunk");
            }
            let chunk = &rows[range];
            let params: Vec<Value> = chunk
                .iter()
                .flat_map(|(r, g)| r.iter().map(|v| (*v).clone()).chain(g.clone()))
                .collect();
            let sql = self.sql(statement, chunk.len());
            if let Err(error) = tx.exec_drop(sql, Params::Positional(params)).await {
                let key = if is_transient(&error) {
                    None
                } else {
                    self.locate_failing_row(tx, statement, chunk).await
                };
                return Err(Failure {
                    action: statement.action(),
                    error,
                    key,
                });
            }
        }
        Ok(())
    }

    fn sql(&self, statement: Statement, rows: usize) -> String {
        match statement {
            Statement::Upsert => self.statements.upsert(rows),
            Statement::Delete => self.statements.delete(rows),
        }
    }

    /// After a data error in a multi-row statement, finds the row that fails, so the error
    /// can name its key. The transaction is rolled back afterwards anyway.
    async fn locate_failing_row(
        &self,
        tx: &mut Transaction<'_>,
        statement: Statement,
        chunk: &[(Vec<&Value>, Option<Value>)],
    ) -> Option<String> {
        let sql = self.sql(statement, 1);
        for (row, _) in chunk {
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
                let key: Vec<String> = match statement {
                    Statement::Delete => row.iter().map(|v| v.as_sql(false)).collect(),
                    Statement::Upsert => self
                        .key_positions
                        .iter()
                        .map(|&i| row[i].as_sql(false))
                        .collect(),
                };
                return Some(key.join(", "));
            }
        }
        None
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
