//! The connection pool to the target, with the session settings every write relies on and
//! the transport (`tls.rs`) decided at the first connection.

use mysql_async::prelude::*;
use mysql_async::{Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts};
use tracing::{info, warn};

use super::sql::Dialect;
use super::tls::{self, Transport};
use crate::config::MysqlTarget;
use crate::error::WorkerError;

/// What the server told us at connect time.
#[derive(Clone, Debug)]
pub struct ServerInfo {
    pub version: String,
    pub dialect: Dialect,
    pub max_allowed_packet: u64,
    /// Statement-based binary logging refuses writes under READ COMMITTED.
    pub statement_binlog: bool,
    /// Which server this is (see [`server_identity`]).
    pub identity: String,
    /// Its binary NO PAD collation of utf8mb4, for suggested DDL: `utf8mb4_nopad_bin`
    /// (MariaDB) or `utf8mb4_0900_bin` (MySQL 8).
    pub binary_no_pad: String,
}

/// The session every statement of the sink runs in, whatever the server's globals are.
/// - `time_zone`: values are computed in UTC and must be stored as such (a `TIMESTAMP` column
///   converts from the session zone).
/// - `sql_mode`: strict, so a value that doesn't fit is an error, not a silently truncated row;
///   `NO_AUTO_VALUE_ON_ZERO` (what mysqldump sets for the same reason), so a Paimon key 0 into
///   an AUTO_INCREMENT column stays 0 instead of becoming the next value; and without
///   `NO_BACKSLASH_ESCAPES`, which would change what the bulk path's file means.
/// - `NAMES utf8mb4`: the bytes we send are UTF-8, whatever the server's default charset.
/// - `autocommit`: statements outside an explicit transaction commit on their own.
/// - `READ COMMITTED`: upserts and deletes by key take no gap locks, so slots writing
///   neighbouring keys do not deadlock each other (REPEATABLE READ locks the gaps).
const SESSION_SETTINGS: [&str; 2] = [
    "SET NAMES utf8mb4 COLLATE utf8mb4_bin",
    "SET SESSION time_zone = '+00:00', \
     SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION,NO_AUTO_VALUE_ON_ZERO', SESSION autocommit = 1",
];
const READ_COMMITTED: &str = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED";

/// A pool of at most `max_connections` whose connections all run in [`SESSION_SETTINGS`] over
/// the transport the first connection settled on, with what the server said.
pub async fn connect(
    m: &MysqlTarget,
    max_connections: usize,
) -> Result<(Pool, Opts, ServerInfo), WorkerError> {
    let failed = |transport: &Transport, source: mysql_async::Error| match tls::advice(
        &m.tls, transport, &m.host, &source,
    ) {
        Some(advice) => WorkerError::ConnectAdvice {
            url: m.redacted_url(),
            advice,
            source: Box::new(source),
        },
        None => WorkerError::Connect {
            url: m.redacted_url(),
            source: Box::new(source),
        },
    };
    let mut transport = Transport::initial(&m.tls);
    let (pool, server) = loop {
        let pool = Pool::new(opts(m, &transport, true, max_connections));
        match server_info(&pool).await {
            Ok(server) => break (pool, server),
            Err(e) => {
                pool.disconnect().await.ok();
                let Some(next) = transport.fallback(&m.tls, &e) else {
                    return Err(failed(&transport, e));
                };
                match &next {
                    Transport::Plain => warn!(url = %m.redacted_url(),
                        "the server offers no TLS: connecting in plaintext (sink.tls.mode preferred; set required to refuse)"),
                    Transport::Tls { name } => {
                        info!(url = %m.redacted_url(), name = name.as_deref().unwrap_or_default(),
                        "verify-ca: checking the certificate's chain under a name it carries")
                    }
                }
                transport = next;
            }
        }
    };
    info!(url = %m.redacted_url(), tls = matches!(transport, Transport::Tls { .. }), server = %server.version, "connected to MySQL");
    if !server.statement_binlog {
        return Ok((pool, opts(m, &transport, true, max_connections), server));
    }
    warn!(url = %m.redacted_url(), "the server logs statements (binlog_format = STATEMENT), which refuses writes under \
          READ COMMITTED: writing under its own isolation level (slots writing neighbouring keys may then deadlock \
          and retry)");
    pool.disconnect().await.map_err(|e| failed(&transport, e))?;
    let opts = opts(m, &transport, false, max_connections);
    Ok((Pool::new(opts.clone()), opts, server))
}

/// The connection options; `read_committed` false keeps the server's isolation level
/// (statement binlogs).
fn opts(m: &MysqlTarget, transport: &Transport, read_committed: bool, max: usize) -> Opts {
    let mut setup = SESSION_SETTINGS.to_vec();
    if read_committed {
        setup.push(READ_COMMITTED);
    }
    let ssl = transport.ssl_opts(&m.tls);
    let opts = OptsBuilder::default()
        .ip_or_hostname(m.host.clone())
        .tcp_port(m.port)
        .user(Some(m.user.clone()))
        .pass(m.password.clone())
        .db_name(Some(m.database.clone()))
        .stmt_cache_size(64)
        // Never the Unix socket the server names (the driver's default for 127.0.0.1 and
        // localhost): behind a local proxy (a sidecar, a failover VIP) that path is another
        // server's or none, and a socket is never encrypted. The URL's address is the server.
        .prefer_socket(false)
        .ssl_opts(ssl)
        // Run on each new connection. The pool doesn't reset a connection each time it comes
        // back (COM_RESET_CONNECTION, then these settings again, and every statement prepared
        // again: five round trips per flush): nothing here changes a session's state beyond
        // these settings, and the driver rolls back a transaction left open.
        .setup(setup)
        .pool_opts(
            PoolOpts::default()
                .with_constraints(PoolConstraints::new(1, max.max(1)).unwrap_or_default())
                .with_reset_connection(false),
        );
    opts.into()
}

async fn server_info(pool: &Pool) -> Result<ServerInfo, mysql_async::Error> {
    let mut conn = pool.get_conn().await?;
    let (version, max_allowed_packet, log_bin, binlog_format): (String, u64, bool, String) = conn
        .query_first("SELECT VERSION(), @@max_allowed_packet, @@log_bin, @@binlog_format")
        .await?
        .unwrap_or_default();
    let binary_no_pad: Option<String> = conn
        .query_first(
            "SELECT COLLATION_NAME FROM information_schema.COLLATIONS \
             WHERE COLLATION_NAME IN ('utf8mb4_nopad_bin', 'utf8mb4_0900_bin') ORDER BY COLLATION_NAME DESC",
        )
        .await?;
    Ok(ServerInfo {
        identity: server_identity(&mut conn, &version).await?,
        binary_no_pad: binary_no_pad.unwrap_or_else(|| crate::mapping::NOPAD_BIN.into()),
        dialect: Dialect::from_version(&version),
        version,
        max_allowed_packet,
        statement_binlog: log_bin && binlog_format.eq_ignore_ascii_case("STATEMENT"),
    })
}

/// What tells this server from another behind the same URL (a promoted replica, a restored
/// copy): MySQL's `@@server_uuid`, made at the data directory's creation. MariaDB has none:
/// its server id (distinct within a replication topology), host, port and data directory.
pub(super) async fn server_identity(
    conn: &mut impl mysql_async::prelude::Queryable,
    version: &str,
) -> Result<String, mysql_async::Error> {
    let sql = if version.to_ascii_lowercase().contains("mariadb") {
        "SELECT CONCAT('server_id=', @@server_id, ' host=', @@hostname, ':', @@port, ' datadir=', @@datadir)"
    } else {
        "SELECT CONCAT('server_uuid=', @@server_uuid)"
    };
    Ok(conn
        .query_first::<String, _>(sql)
        .await?
        .unwrap_or_default())
}
