//! `source.schemaChanges: apply`: a column the Paimon table gained is added to MySQL before
//! anything is written under the new schema, without copying the table.

use mysql_async::prelude::*;
use tracing::info;

use super::MysqlConnection;
use crate::error::{Result, WorkerError};
use crate::mapping::{quote_ident, NewColumn};

/// Server errors that mean "not with this algorithm" (`ER_ALTER_OPERATION_NOT_SUPPORTED`,
/// `…_REASON`) or, for `INSTANT` on an older server, an unknown algorithm (a syntax error).
const NOT_WITH_THIS_ALGORITHM: [u16; 3] = [1845, 1846, 1064];
/// `ER_DUP_FIELDNAME`: another slot added it first.
const ALREADY_THERE: u16 = 1060;

impl MysqlConnection {
    /// `ALTER TABLE … ADD COLUMN … NULL` with `ALGORITHM=INSTANT`, else `INPLACE` (no lock); a
    /// server that could only copy the table is refused, with the statement to run by hand.
    pub async fn add_column(&self, column: &NewColumn) -> Result<()> {
        let statement = format!(
            "ALTER TABLE {} ADD COLUMN {} {}",
            quote_ident(&self.table),
            quote_ident(&column.mysql),
            column.mysql_type
        );
        let failed = |source| WorkerError::Sink {
            action: "ALTER TABLE … ADD COLUMN",
            table: self.target.clone(),
            key: String::new(),
            source: Box::new(source),
        };
        let mut conn = self.pool.get_conn().await.map_err(failed)?;
        let mut refused = Vec::new();
        for algorithm in ["INSTANT", "INPLACE, LOCK=NONE"] {
            match conn
                .query_drop(format!("{statement}, ALGORITHM={algorithm}"))
                .await
            {
                Ok(()) => {
                    info!(table = %self.target, column = %column.mysql, column_type = %column.mysql_type, %algorithm,
                          paimon_column = %column.paimon, "added the new Paimon column to MySQL (source.schemaChanges: apply)");
                    return Ok(());
                }
                Err(mysql_async::Error::Server(e)) if e.code == ALREADY_THERE => return Ok(()),
                Err(mysql_async::Error::Server(e)) if NOT_WITH_THIS_ALGORITHM.contains(&e.code) => {
                    refused.push(format!("ALGORITHM={algorithm}: {}", e.message));
                }
                Err(e) => return Err(failed(e)),
            }
        }
        Err(WorkerError::Validation {
            table: self.target.clone(),
            problems: vec![format!(
                "adding the new Paimon column {:?} would copy the table on this server ({}); run `{statement}` \
                 yourself when it suits, or set source.schemaChanges: ignore",
                column.paimon,
                refused.join("; ")
            )],
        })
    }
}
