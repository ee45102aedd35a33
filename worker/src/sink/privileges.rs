//! The privileges a sync needs on its table, checked before the first write. Each kind of
//! statement the sink runs is `EXPLAIN`ed, which the server checks like the statement itself
//! without running it, so every missing privilege is named up front, not at the first flush.

use mysql_async::prelude::*;

use super::{Failure, MysqlSink};
use crate::error::{Result, WorkerError};

/// `ER_TABLEACCESS_DENIED_ERROR`, `ER_COLUMNACCESS_DENIED_ERROR`.
const DENIED: [u16; 2] = [1142, 1143];

impl MysqlSink {
    pub async fn check_privileges(&self) -> Result<()> {
        let mut conn = self.conn().await?;
        let mut missing = Vec::new();
        for (privilege, sql) in self.statements.privilege_probes() {
            match conn.query_drop(format!("EXPLAIN {sql}")).await {
                Ok(()) => {}
                Err(mysql_async::Error::Server(e)) if DENIED.contains(&e.code) => {
                    missing.push(privilege)
                }
                Err(e) => return Err(self.error(Failure::new("check privileges", e))),
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        Err(WorkerError::Validation {
            table: self.target.clone(),
            problems: vec![format!(
                "the MySQL user lacks {} on it (a sync reads, inserts, updates and deletes its rows): \
                 `GRANT SELECT, INSERT, UPDATE, DELETE ON {} TO …`",
                missing.join(", "),
                self.statements.table()
            )],
        })
    }
}
