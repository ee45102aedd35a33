//! Reading the target table back whole, for `verify`: one streamed `SELECT` of the mapped
//! columns over the binary protocol, so every value arrives typed (a FLOAT as a float, not
//! the server's six-digit text).

use mysql_async::prelude::*;
use mysql_async::Value;

use super::MysqlConnection;
use crate::error::Result;
use crate::mapping::quote_ident;

impl MysqlConnection {
    /// Calls `each` with every row of the target's `columns`, in no particular order; returns
    /// the number of rows read.
    pub async fn scan(
        &self,
        columns: &[&str],
        mut each: impl FnMut(Vec<Value>) -> Result<()>,
    ) -> Result<u64> {
        let sql = format!(
            "SELECT {} FROM {}",
            columns
                .iter()
                .map(|c| quote_ident(c))
                .collect::<Vec<_>>()
                .join(", "),
            quote_ident(&self.table)
        );
        let mut conn = self
            .pool
            .get_conn()
            .await
            .map_err(|e| self.read_failed(e))?;
        let mut result = conn
            .exec_iter(sql, ())
            .await
            .map_err(|e| self.read_failed(e))?;
        let mut rows = 0;
        let mut error = None;
        result
            .for_each(|row: mysql_async::Row| {
                if error.is_none() {
                    rows += 1;
                    // `Row::unwrap` hands over the row's values.
                    if let Err(e) = each(row.unwrap()) {
                        error = Some(e);
                    }
                }
            })
            .await
            .map_err(|e| self.read_failed(e))?;
        match error {
            Some(e) => Err(e),
            None => Ok(rows),
        }
    }
}
