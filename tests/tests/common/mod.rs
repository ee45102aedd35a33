//! Shared steps of the scenario tests (a module of each test file, not a test target).
#![allow(dead_code, unused_imports)]

use pms_tests::compare::assert_same_rows;
use pms_tests::mysql::TestDb;
use std::time::{Duration, Instant};

use pms_tests::paimon::{Database, Table};
use serde_json::Value as Json;

pub use pms_tests::config::{Columns, Delivery, ScanMode, SchemaChanges, SyncState, Visibility};
pub use pms_tests::fixtures::*;
pub use pms_tests::worker::SyncConfig;

/// The core check: MySQL equals the reference read of `snapshot` (default latest).
pub async fn assert_synced(table: &Table, db: &TestDb, target: &str, snapshot: Option<i64>) {
    let at = snapshot.map_or("latest".into(), |s| s.to_string());
    assert_reference_rows(table, db, target, snapshot, &at, |_| true).await;
}

/// [`assert_synced`] for a sync with a `source.filter`: MySQL equals the reference rows
/// `keep` keeps (the test's own statement of the filter).
pub async fn assert_synced_where(
    table: &Table,
    db: &TestDb,
    target: &str,
    keep: impl Fn(&[Json]) -> bool,
) {
    assert_reference_rows(table, db, target, None, "latest, filtered", keep).await;
}

/// MySQL's `target` equals the rows of the reference read of `snapshot` that `keep` keeps;
/// `at` names the read in a failure.
async fn assert_reference_rows(
    table: &Table,
    db: &TestDb,
    target: &str,
    snapshot: Option<i64>,
    at: &str,
    keep: impl Fn(&[Json]) -> bool,
) {
    let reference: Vec<Vec<Json>> = table
        .read(snapshot)
        .into_iter()
        .filter(|r| keep(r))
        .collect();
    let columns = table.compare_columns();
    let mysql = db.rows(target, &columns, &table.primary_keys).await;
    let what = format!("{}.{} → {at}", db.name, target);
    assert_same_rows(&what, &columns, &reference, &mysql);
}

/// The run's log (the worker logs to stderr).
pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `verify ARGS` that must find differences (exit 3): its report.
pub fn divergent(cfg: &SyncConfig, args: &[&str]) -> String {
    let out = cfg.verify_with(args);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Waits for a worker process to exit on its own, failing the test after `within` with
/// `what()` (which may read the worker's log as it is then).
pub async fn wait_for_exit(
    child: &mut std::process::Child,
    within: std::time::Duration,
    what: impl Fn() -> String,
) -> std::process::ExitStatus {
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        assert!(started.elapsed() < within, "{}", what());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Sends SIGTERM (what Kubernetes and Ctrl-C send) and waits for the exit.
pub async fn stop_with_sigterm(child: &mut std::process::Child) -> std::process::ExitStatus {
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill -TERM");
    wait_for_exit(child, std::time::Duration::from_secs(20), || {
        "SIGTERM did not stop the worker".to_string()
    })
    .await
}

pub async fn mysql_rows(db: &TestDb, t: &Table) -> Vec<Vec<Json>> {
    db.rows(
        &format!("{}_rt", t.name),
        &t.compare_columns(),
        &t.primary_keys,
    )
    .await
}

/// Waits until every table's MySQL rows (`<table>_rt`) equal its reference read (one Java read
/// of them all, MySQL polled), then asserts it row by row; `diagnose` says what to print on a
/// failure (a worker's log).
pub async fn assert_all_synced(
    wh: &Database,
    db: &TestDb,
    tables: &[&Table],
    diagnose: impl Fn() -> String,
) {
    let reference = wh.read_tables(tables);
    let deadline = Instant::now() + Duration::from_secs(120);
    for t in tables {
        let columns = t.compare_columns();
        let expected: Vec<Vec<Json>> = reference[&t.name]
            .iter()
            .map(|r| {
                r.iter()
                    .zip(&columns)
                    .map(|(v, (_, ty))| ty.from_reference(v))
                    .collect()
            })
            .collect();
        while !table_exists(db, &format!("{}_rt", t.name)).await
            || mysql_rows(db, t).await != expected
        {
            if Instant::now() > deadline {
                eprintln!("{}", diagnose());
                assert_same_rows(
                    &t.name,
                    &columns,
                    &reference[&t.name],
                    &mysql_rows(db, t).await,
                );
                panic!("{}: MySQL did not reach the reference read", t.name);
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        assert_same_rows(
            &t.name,
            &columns,
            &reference[&t.name],
            &mysql_rows(db, t).await,
        );
    }
}

pub async fn table_exists(db: &TestDb, table: &str) -> bool {
    !db.query_strings(&format!(
        "SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '{table}'"
    ))
    .await
    .is_empty()
}

/// Waits until the checkpoint says every change through `snapshot` is applied.
pub async fn wait_for_checkpoint_at(cfg: &SyncConfig, snapshot: i64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let cp: Option<Json> = std::fs::read(cfg.checkpoint_path(0, 1))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        if cp.as_ref().is_some_and(|c| {
            c["phase"] == "incremental"
                && c["snapshotId"] == snapshot
                && c.get("position").is_none()
        }) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no checkpoint at snapshot {snapshot}: {cp:?}\n{}",
            cfg.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
