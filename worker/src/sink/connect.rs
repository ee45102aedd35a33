//! The connection pool to the target, with the session settings every write relies on.

use mysql_async::prelude::*;
use mysql_async::{OptsBuilder, Pool, PoolConstraints, PoolOpts};

use super::sql::Dialect;
use crate::config::MysqlTarget;

/// What the server told us at connect time.
#[derive(Clone, Debug)]
pub struct ServerInfo {
    pub version: String,
    pub dialect: Dialect,
    pub max_allowed_packet: u64,
}

pub fn pool(m: &MysqlTarget) -> Pool {
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
            PoolOpts::default().with_constraints(PoolConstraints::new(1, 2).unwrap_or_default()),
        );
    Pool::new(opts)
}

pub async fn server_info(pool: &Pool) -> Result<ServerInfo, mysql_async::Error> {
    let mut conn = pool.get_conn().await?;
    let (version, max_allowed_packet): (String, u64) = conn
        .query_first("SELECT VERSION(), @@max_allowed_packet")
        .await?
        .unwrap_or_default();
    Ok(ServerInfo {
        dialect: Dialect::from_version(&version),
        version,
        max_allowed_packet,
    })
}
