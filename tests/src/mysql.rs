//! A fresh database per test on the run's MariaDB server.

use std::sync::atomic::{AtomicU32, Ordering};

use mysql_async::prelude::*;
use mysql_async::{Opts, OptsBuilder, Pool, Row, SslOpts};
use serde_json::Value as Json;

use crate::compare::ColumnType;

pub struct TestDb {
    pub name: String,
    pub port: u16,
    /// The server takes TCP clients over TLS only (`require_secure_transport`).
    tls: bool,
    pool: Pool,
}

/// The port of the MariaDB server started by `scripts/with-mariadb.sh`.
pub fn server_port() -> u16 {
    let port = std::env::var("PMS_TEST_MYSQL_PORT").unwrap_or_else(|_| {
        panic!(
            "PMS_TEST_MYSQL_PORT is not set: these tests need a real MariaDB server. \
             Run them with `make test` (or `scripts/with-mariadb.sh cargo test`), which starts one."
        )
    });
    port.parse().expect("PMS_TEST_MYSQL_PORT is a port number")
}

/// `tls`: encrypted, the certificate not checked (the harness only needs a connection).
fn opts(port: u16, db: Option<&str>, tls: bool) -> Opts {
    if tls {
        pms_runtime::install_tls_provider();
    }
    let ssl = tls.then(|| SslOpts::default().with_danger_accept_invalid_certs(true));
    OptsBuilder::default()
        .prefer_socket(false)
        .ssl_opts(ssl)
        .ip_or_hostname("127.0.0.1")
        .tcp_port(port)
        .user(Some("pms"))
        .pass(Some("pms"))
        .db_name(db)
        // `setup` runs again after the pool resets a connection; `init` would not.
        .setup(vec![
            "SET NAMES utf8mb4",
            "SET SESSION time_zone = '+00:00'",
        ])
        .into()
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A MariaDB server of one test's own, started with server options the shared one must not
/// have (a global time zone, an SQL mode, a charset); stopped when dropped.
pub struct OwnServer {
    dir: std::path::PathBuf,
    pub port: u16,
}

impl OwnServer {
    /// `scripts/mariadb.sh start` with `options` (e.g. `--default-time-zone=+05:00`).
    pub fn start(options: &[&str]) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "pms-own-mariadb-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        ));
        let out = std::process::Command::new(crate::repo_root().join("scripts/mariadb.sh"))
            .args(["start", dir.to_str().expect("a UTF-8 temp dir")])
            .env("PMS_MARIADB_ARGS", options.join(" "))
            .output()
            .expect("run scripts/mariadb.sh");
        assert!(
            out.status.success(),
            "starting a MariaDB server with {options:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("mariadb.sh prints the port");
        Self { dir, port }
    }
}

impl OwnServer {
    /// kill -9 the server, then start it again on the same port and data `downtime_secs` later.
    pub fn crash_restart(&self, downtime_secs: u32) {
        let out = std::process::Command::new(crate::repo_root().join("scripts/mariadb.sh"))
            .args(["crash-restart", &self.dir.display().to_string()])
            .env("PMS_RESTART_DOWNTIME", downtime_secs.to_string())
            .output()
            .expect("run scripts/mariadb.sh");
        assert!(
            out.status.success(),
            "restarting MariaDB failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        let _ = std::process::Command::new(crate::repo_root().join("scripts/mariadb.sh"))
            .args(["stop", &self.dir.display().to_string()])
            .status();
    }
}

impl TestDb {
    /// Creates `pms_<test>_<pid>_<n>`, so no two tests (or runs) share a database.
    pub async fn new(test: &str) -> Self {
        Self::on(server_port(), test).await
    }

    /// The same on the server at `port` (e.g. an [`OwnServer`]).
    pub async fn on(port: u16, test: &str) -> Self {
        Self::create(port, test, false).await
    }

    /// The same on a server that requires TLS.
    pub async fn on_tls(port: u16, test: &str) -> Self {
        Self::create(port, test, true).await
    }

    async fn create(port: u16, test: &str, tls: bool) -> Self {
        let name = format!(
            "pms_{}_{}_{}",
            test,
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        );
        let admin = Pool::new(opts(port, None, tls));
        let mut conn = admin
            .get_conn()
            .await
            .unwrap_or_else(|e| panic!("can't reach MariaDB on port {port}: {e}"));
        conn.query_drop(format!("CREATE DATABASE `{name}` CHARACTER SET utf8mb4"))
            .await
            .expect("create database");
        drop(conn);
        admin.disconnect().await.ok();
        Self {
            pool: Pool::new(opts(port, Some(&name), tls)),
            name,
            port,
            tls,
        }
    }

    /// The database `name` on the server at `port`, made elsewhere (e.g. replicated there).
    pub fn attach(port: u16, name: &str) -> TestDb {
        TestDb {
            pool: Pool::new(opts(port, Some(name), false)),
            name: name.to_string(),
            port,
            tls: false,
        }
    }

    /// A new pool on the same database (after its server restarted, the old pool's
    /// connections are dead).
    pub fn reopen(&self) -> TestDb {
        TestDb {
            pool: Pool::new(opts(self.port, Some(&self.name), self.tls)),
            name: self.name.clone(),
            port: self.port,
            tls: self.tls,
        }
    }

    /// A sink URL with credentials, as a standalone user would write it.
    pub fn url(&self) -> String {
        format!("mysql://pms:pms@127.0.0.1:{}/{}", self.port, self.name)
    }

    /// A connection of its own (e.g. to hold `LOCK TABLES` while the test goes on).
    pub async fn conn(&self) -> mysql_async::Conn {
        self.pool.get_conn().await.expect("connect")
    }

    pub async fn exec(&self, sql: &str) {
        let mut conn = self.pool.get_conn().await.expect("connect");
        conn.query_drop(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    pub async fn count(&self, table: &str) -> i64 {
        let mut conn = self.pool.get_conn().await.expect("connect");
        conn.query_first(format!("SELECT COUNT(*) FROM `{table}`"))
            .await
            .expect("count")
            .unwrap_or(0)
    }

    pub async fn query_strings(&self, sql: &str) -> Vec<Vec<Option<String>>> {
        let mut conn = self.pool.get_conn().await.expect("connect");
        let rows: Vec<Row> = conn
            .query(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        rows.into_iter()
            .map(|r| {
                (0..r.len())
                    .map(|i| match r.as_ref(i) {
                        Some(mysql_async::Value::NULL) | None => None,
                        Some(mysql_async::Value::Bytes(b)) => {
                            Some(String::from_utf8_lossy(b).into_owned())
                        }
                        Some(v) => Some(v.as_sql(true).trim_matches('\'').to_string()),
                    })
                    .collect()
            })
            .collect()
    }

    /// The table's rows in the reference encoding (see `compare`), ordered by the key columns.
    pub async fn rows(
        &self,
        table: &str,
        columns: &[(String, ColumnType)],
        key: &[String],
    ) -> Vec<Vec<Json>> {
        let select: Vec<String> = columns
            .iter()
            .map(|(name, ty)| ty.select_expr(&format!("`{name}`")))
            .collect();
        let order: Vec<String> = key.iter().map(|k| format!("`{k}`")).collect();
        let sql = format!(
            "SELECT {} FROM `{table}` ORDER BY {}",
            select.join(", "),
            order.join(", ")
        );
        let mut conn = self.pool.get_conn().await.expect("connect");
        let rows: Vec<Row> = conn
            .query(&sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        rows.into_iter()
            .map(|r| {
                columns
                    .iter()
                    .enumerate()
                    .map(|(i, (_, ty))| match r.as_ref(i) {
                        Some(mysql_async::Value::NULL) | None => Json::Null,
                        Some(mysql_async::Value::Bytes(b)) => ty.from_mysql_text(b),
                        Some(other) => panic!("text protocol returned {other:?}"),
                    })
                    .collect()
            })
            .collect()
    }
}

/// The MySQL 8 dialect server (`tests/mysql8`, go-mysql-server) of one test, on a free port;
/// stopped when dropped. `PMS_MYSQL8_BIN` names the binary (`make test` builds it with
/// `scripts/mysql8-server.sh`).
pub struct Mysql8Server {
    child: std::process::Child,
    pub port: u16,
}

impl Mysql8Server {
    pub fn start() -> Self {
        let bin = std::env::var("PMS_MYSQL8_BIN").unwrap_or_else(|_| {
            panic!(
                "PMS_MYSQL8_BIN is not set: the MySQL 8 tests need the MySQL 8 dialect server. Run them with \
                 `make test`, or `PMS_MYSQL8_BIN=$(scripts/mysql8-server.sh) cargo test`"
            )
        });
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = std::process::Command::new(&bin)
            .arg(port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {bin}: {e}"));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "{bin} did not listen on port {port} within 30 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Self { child, port }
    }
}

impl Drop for Mysql8Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
