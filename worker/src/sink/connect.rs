//! The connection pool to the target, with the session settings every write relies on.

use mysql_async::prelude::*;
use mysql_async::{Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts};

use super::sql::Dialect;
use crate::config::MysqlTarget;

/// What the server told us at connect time.
#[derive(Clone, Debug)]
pub struct ServerInfo {
    pub version: String,
    pub dialect: Dialect,
    pub max_allowed_packet: u64,
    /// Statement-based binary logging refuses writes under READ COMMITTED.
    pub statement_binlog: bool,
}

/// The session every statement of the sink runs in, whatever the server's globals are.
/// - `time_zone`: values are computed in UTC and must be stored as such (a `TIMESTAMP` column
///   converts from the session zone).
/// - `sql_mode`: strict, so a value that doesn't fit is an error, not a silently truncated row;
///   and without `NO_BACKSLASH_ESCAPES`, which would change what the bulk path's file means.
/// - `NAMES utf8mb4`: the bytes we send are UTF-8, whatever the server's default charset.
/// - `autocommit`: statements outside an explicit transaction commit on their own.
/// - `READ COMMITTED`: upserts and deletes by key take no gap locks, so slots writing
///   neighbouring keys do not deadlock each other (REPEATABLE READ locks the gaps).
const SESSION_SETTINGS: [&str; 2] = [
    "SET NAMES utf8mb4 COLLATE utf8mb4_bin",
    "SET SESSION time_zone = '+00:00', SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION', \
     SESSION autocommit = 1",
];
const READ_COMMITTED: &str = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED";

/// The connection options; `read_committed` false keeps the server's isolation level
/// (statement binlogs).
pub fn opts(m: &MysqlTarget, read_committed: bool) -> Opts {
    let mut setup = SESSION_SETTINGS.to_vec();
    if read_committed {
        setup.push(READ_COMMITTED);
    }
    let opts = OptsBuilder::default()
        .ip_or_hostname(m.host.clone())
        .tcp_port(m.port)
        .user(Some(m.user.clone()))
        .pass(m.password.clone())
        .db_name(Some(m.database.clone()))
        .stmt_cache_size(64)
        // `setup`, not `init`: the pool resets a connection (COM_RESET_CONNECTION) each time
        // it comes back, which restores the server's global settings; `setup` runs again after
        // every reset, `init` only once per connection.
        .setup(setup)
        .pool_opts(
            PoolOpts::default().with_constraints(PoolConstraints::new(1, 2).unwrap_or_default()),
        );
    opts.into()
}

pub async fn server_info(pool: &Pool) -> Result<ServerInfo, mysql_async::Error> {
    let mut conn = pool.get_conn().await?;
    let (version, max_allowed_packet, log_bin, binlog_format): (String, u64, bool, String) = conn
        .query_first("SELECT VERSION(), @@max_allowed_packet, @@log_bin, @@binlog_format")
        .await?
        .unwrap_or_default();
    Ok(ServerInfo {
        dialect: Dialect::from_version(&version),
        version,
        max_allowed_packet,
        statement_binlog: log_bin && binlog_format.eq_ignore_ascii_case("STATEMENT"),
    })
}
