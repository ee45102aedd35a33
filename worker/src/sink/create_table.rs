//! `sink.createTable`: a missing target is created from the Paimon schema before the sync
//! validates it (so the usual checks still run on what was created).

use mysql_async::prelude::Queryable;
use tracing::info;

use super::MysqlConnection;
use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};
use crate::mapping::{create_table_statement, on_server};
use crate::source::PaimonSource;

/// Creates the target when `sink.createTable` is on and it does not exist; returns the
/// statement it ran. Every slot may race here: `IF NOT EXISTS` makes the losers no-ops.
pub async fn ensure(
    cfg: &WorkerConfig,
    shared: Option<&super::SharedPool>,
) -> Result<Option<String>> {
    if !cfg.spec.sink.create_table {
        return Ok(None);
    }
    let mysql = MysqlConnection::open_in(cfg, shared).await?;
    let created = create_if_missing(cfg, &mysql).await;
    mysql.close().await;
    created
}

async fn create_if_missing(cfg: &WorkerConfig, mysql: &MysqlConnection) -> Result<Option<String>> {
    if mysql.describe_target().await?.is_some() {
        return Ok(None);
    }
    let source = PaimonSource::open(&cfg.spec.source, cfg.slot).await?;
    let sink = &cfg.spec.sink;
    let ddl = on_server(
        &create_table_statement(&sink.table, source.columns(), &sink.columns),
        &mysql.server().binary_no_pad,
    );
    let mut conn = mysql.probe_conn().await?;
    conn.query_drop(&ddl).await.map_err(|e| WorkerError::Validation {
        table: cfg.target_name(),
        problems: vec![format!(
            "sink.createTable: the table is missing and creating it failed ({e}); the statement was:\n{ddl}"
        )],
    })?;
    info!(target = %cfg.target_name(), statement = %ddl, "created the MySQL table from the Paimon schema (sink.createTable)");
    Ok(Some(ddl))
}
