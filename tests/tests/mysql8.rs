//! The worker against a MySQL 8 dialect server (`tests/mysql8`: go-mysql-server, the engine of
//! Dolt; README "MySQL 8"): MySQL 8's row-alias upsert (`AS new`), its collations and
//! `information_schema`, the bulk path, deletes and the slot lock, through a full read and the
//! changes after it.

mod common;

use common::*;
use pms_tests::compare::assert_same_rows;
use pms_tests::mysql::{Mysql8Server, TestDb};
use pms_tests::paimon::Table;
use serde_json::json;

#[tokio::test]
async fn a_sync_into_a_mysql_8_server_is_exact() {
    let server = Mysql8Server::start();
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 200, "+I", 0)]);
    let db = TestDb::attach(server.port, "app");
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder_for_url(&t, &db.url()).build();
    let out = cfg.run_once(&[]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("dialect=RowAlias"), "MySQL 8's upsert: {log}");
    assert!(
        log.contains("bulk=true") && !log.contains("using upserts"),
        "the full read loads in bulk: {log}"
    );
    assert_synced_mysql8(&t, &db).await;
    t.commits(vec![
        generate_step(1, 90, 3, "+U", 2),
        generate_step(2, 60, 5, "-D", 0),
        generate(500, 30, "+I", 3),
    ]);
    cfg.sync_once(&[]);
    assert_synced_mysql8(&t, &db).await;
}

/// [`assert_synced`] for this server, which prints a DATETIME(3) whose fraction is zero without
/// it (`…:01`, where MySQL 8 prints `…:01.000`): the same value, read as MySQL prints it.
async fn assert_synced_mysql8(t: &Table, db: &TestDb) {
    let columns = t.compare_columns();
    let mysql: Vec<Vec<serde_json::Value>> = db
        .rows("orders", &columns, &t.primary_keys)
        .await
        .into_iter()
        .map(|row| {
            row.into_iter()
                .map(|v| match v.as_str() {
                    Some(s) if is_whole_second(s) => json!(format!("{s}.000")),
                    _ => v,
                })
                .collect()
        })
        .collect();
    assert_same_rows("MySQL 8 orders", &columns, &t.read(None), &mysql);
}

/// `YYYY-MM-DD HH:MM:SS`, nothing after.
fn is_whole_second(s: &str) -> bool {
    s.len() == 19
        && s.as_bytes()[10] == b' '
        && s.as_bytes()[13] == b':'
        && s.as_bytes()[16] == b':'
}

/// What the worker suggests names the binary NO PAD collation MySQL 8 has
/// (`utf8mb4_0900_bin`; MariaDB's `utf8mb4_nopad_bin` does not exist there).
#[tokio::test]
async fn suggested_ddl_names_the_collation_mysql_8_has() {
    let server = Mysql8Server::start();
    let t = Table::create(json!({
        "columns": [{"name": "code", "type": "VARCHAR(16) NOT NULL"}, {"name": "v", "type": "INT"}],
        "primaryKeys": ["code"],
        "options": {"bucket": "1"},
    }));
    t.commit(&[("+I", json!(["a", 1]))]);
    let db = TestDb::attach(server.port, "app");
    let cfg = SyncConfig::builder_for_url(&t, &db.url()).build();
    let out = cfg.run_once(&[]);
    let log = stderr(&out);
    assert!(!out.status.success(), "{log}");
    assert!(
        log.contains("COLLATE utf8mb4_0900_bin") && !log.contains("utf8mb4_nopad_bin"),
        "{log}"
    );
}
