//! Transient MySQL failures are retried with backoff; with no retries left the error names the table.

mod common;

use std::time::Duration;

use common::*;
use mysql_async::prelude::*;
use pms_tests::mysql::TestDb;
use serde_json::json;

/// Holds a row lock for `hold` on another connection, so the worker's flush hits lock wait timeouts (1205).
async fn hold_lock(db: &TestDb, hold: Duration) -> tokio::task::JoinHandle<()> {
    let pool = mysql_async::Pool::new(
        mysql_async::OptsBuilder::default()
            .ip_or_hostname("127.0.0.1")
            .tcp_port(db.port)
            .user(Some("pms"))
            .pass(Some("pms"))
            .db_name(Some(db.name.clone())),
    );
    let mut conn = pool.get_conn().await.unwrap();
    conn.query_drop("BEGIN").await.unwrap();
    conn.query_drop("SELECT * FROM orders WHERE id = 1 FOR UPDATE")
        .await
        .unwrap();
    tokio::spawn(async move {
        tokio::time::sleep(hold).await;
        conn.query_drop("ROLLBACK").await.unwrap();
        drop(conn);
        pool.disconnect().await.ok();
    })
}

// Multi-threaded: the lock holder's task must run while this thread waits for the worker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_wait_timeouts_are_retried_then_fail_fast_without_retries() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 10, "+I", 0)]);
    let db = TestDb::new("retry").await;
    db.exec(ORDERS_DDL).await;
    // The worker's sessions wait at most 1 s for a lock (only this test's database is locked).
    db.exec("SET GLOBAL innodb_lock_wait_timeout = 1").await;
    let cfg = SyncConfig::builder(&t, &db).max_retries(5).build();
    cfg.sync_once(&[]);
    t.commits(vec![generate_step(1, 5, 1, "+U", 3)]);

    let lock = hold_lock(&db, Duration::from_millis(2500)).await;
    let out = cfg.run_once(&[]);
    lock.await.unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("retrying the flush") && err.contains("1205"),
        "a lock wait timeout is retried:\n{err}"
    );
    assert_synced(&t, &db, "orders", None).await;

    t.commits(vec![generate_step(1, 5, 1, "+U", 4)]);
    let no_retries = SyncConfig::builder(&t, &db).max_retries(0).build();
    std::fs::copy(cfg.checkpoint_path(0, 1), no_retries.checkpoint_path(0, 1)).unwrap();
    let lock = hold_lock(&db, Duration::from_millis(2500)).await;
    let out = no_retries.run_once(&[]);
    lock.await.unwrap();
    db.exec("SET GLOBAL innodb_lock_wait_timeout = 50").await;
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains(&format!("MySQL upsert on {}.orders failed", db.name))
            && err.contains("Lock wait timeout"),
        "{err}"
    );
    // The failed flush advanced nothing: the checkpoint still points before the last snapshot.
    let cp: serde_json::Value =
        serde_json::from_slice(&std::fs::read(no_retries.checkpoint_path(0, 1)).unwrap()).unwrap();
    assert_eq!(cp["snapshotId"], t.latest() - 1);
}

/// A data error names the table and the key of the row MySQL refused.
#[tokio::test]
async fn a_value_mysql_refuses_names_its_key() {
    let t = orders_table(json!({"bucket": "1"}), false);
    t.commits(vec![generate(1, 10, "+I", 0)]);
    let db = TestDb::new("data_error").await;
    // A CHECK constraint the data violates for one key: a permanent error, no retry.
    db.exec("CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, amount DECIMAL(10,2), status VARCHAR(64), updated_at DATETIME(3), CONSTRAINT no_seven CHECK (id <> 7))").await;
    let cfg = SyncConfig::builder(&t, &db).build();
    let out = cfg.run_once(&[]);
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("for key (7)") && err.contains("no_seven"),
        "{err}"
    );
    assert!(
        !err.contains("retrying"),
        "a data error is not retried:\n{err}"
    );
    assert_eq!(
        db.count("orders").await,
        0,
        "the failed flush is rolled back whole"
    );
}

/// The bulk path of a full read falls back to upserts when the server refuses LOCAL INFILE
/// (MySQL 8 ships with `local_infile=OFF`).
#[tokio::test]
async fn bulk_load_refused_falls_back_to_upserts() {
    let t = orders_table(json!({"bucket": "1"}), false);
    t.commits(vec![generate(1, 500, "+I", 0)]);
    let db = TestDb::new("no_local_infile").await;
    db.exec(ORDERS_DDL).await;
    db.exec("SET GLOBAL local_infile = 0").await;
    let out = SyncConfig::builder(&t, &db).build().run_once(&[]);
    db.exec("SET GLOBAL local_infile = 1").await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("LOAD DATA LOCAL INFILE is refused"),
        "{}",
        stderr(&out)
    );
    assert_synced(&t, &db, "orders", None).await;
}
