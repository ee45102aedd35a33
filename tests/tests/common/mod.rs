//! Shared steps of the scenario tests (a module of each test file, not a test target).
#![allow(dead_code, unused_imports)]

use pms_tests::compare::assert_same_rows;
use pms_tests::mysql::TestDb;
use pms_tests::paimon::Table;

pub use pms_tests::config::{Columns, Delivery, ScanMode, SchemaChanges, SyncState, Visibility};
pub use pms_tests::fixtures::*;
pub use pms_tests::worker::SyncConfig;

/// The core check: MySQL equals the reference read of `snapshot` (default latest).
pub async fn assert_synced(table: &Table, db: &TestDb, target: &str, snapshot: Option<i64>) {
    let reference = table.read(snapshot);
    let columns = table.compare_columns();
    let mysql = db.rows(target, &columns, &table.primary_keys).await;
    assert_same_rows(
        &format!(
            "{}.{} → {}",
            db.name,
            target,
            snapshot.map_or("latest".into(), |s| s.to_string())
        ),
        &columns,
        &reference,
        &mysql,
    );
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
