//! Resume, crash and stop: the final state always equals the reference read.

mod common;

use std::time::{Duration, Instant};

use common::*;
use pms_tests::mysql::TestDb;
use pms_tests::paimon::Table;
use serde_json::json;

fn records_read(stderr: &str) -> u64 {
    let line = stderr
        .lines()
        .rev()
        .find(|l| l.contains("records_read"))
        .expect("summary line");
    let value = line.split("records_read=").nth(1).expect("records_read=N");
    value
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn resume_after_once_reads_only_new_snapshots() {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 300, "+I", 0)]);
    let db = TestDb::new("resume").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    let first = cfg.run_once(&[]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(records_read(&stderr(&first)), 300);
    // Nothing new: nothing read, nothing changes.
    let idle = cfg.run_once(&[]);
    assert_eq!(records_read(&stderr(&idle)), 0, "{}", stderr(&idle));
    t.commits(vec![
        generate_step(1, 10, 3, "+U", 1),
        generate_step(2, 5, 7, "-D", 0),
    ]);
    let second = cfg.run_once(&[]);
    assert!(second.status.success());
    assert_eq!(
        records_read(&stderr(&second)),
        15,
        "only the two new snapshots are read"
    );
    assert_synced(&t, &db, "orders", None).await;
    let cp: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cfg.checkpoint_path(0, 1)).unwrap()).unwrap();
    assert_eq!(cp["epoch"], 3, "every start bumps the epoch");
}

/// kill -9 while a continuous run is writing, more commits, then resume: same final state.
#[tokio::test]
async fn kill_9_during_a_continuous_run_then_resume() {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 2000, "+I", 0)]);
    let db = TestDb::new("kill9").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db)
        .max_rows(50)
        .checkpoint_interval(Duration::from_millis(200))
        .build();
    let mut child = cfg.spawn(&[]);
    // Commit while the worker runs, then kill it in the middle of the work.
    for salt in 1..=3 {
        t.commits(vec![
            generate_step(salt, 400, 5, "+U", salt),
            generate_step(salt + 10, 50, 37, "-D", 0),
        ]);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    child.kill().expect("kill -9");
    child.wait().unwrap();
    t.commits(vec![
        generate(5000, 100, "+I", 0),
        generate_step(1, 20, 1, "-D", 0),
    ]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
}

/// SIGTERM: flush, checkpoint the latest snapshot, exit 0.
#[tokio::test]
async fn sigterm_flushes_checkpoints_and_exits_cleanly() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 100, "+I", 0)]);
    let db = TestDb::new("sigterm").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db)
        .flush_interval(Duration::from_secs(3600))
        .max_rows(0)
        .build();
    let mut child = cfg.spawn(&["--admin-addr", "127.0.0.1:0"]);
    let latest = t.commits(vec![generate_step(1, 30, 2, "+U", 9)]);
    // Wait until the run has seen the latest snapshot (it flushes when caught up).
    let deadline = Instant::now() + Duration::from_secs(60);
    while db.count("orders").await < 100 {
        assert!(
            Instant::now() < deadline,
            "the continuous run did not catch up"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let status = stop_with_sigterm(&mut child).await;
    assert!(status.success(), "a stop on SIGTERM exits 0");
    let cp: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cfg.checkpoint_path(0, 1)).unwrap()).unwrap();
    assert_eq!(cp["snapshotId"], latest);
    assert_synced(&t, &db, "orders", None).await;
}

/// The admin endpoint serves Prometheus metrics and health while the worker runs.
#[tokio::test]
async fn metrics_and_health_endpoint() {
    let t = orders_table(json!({"bucket": "1"}), false);
    let latest = t.commits(vec![
        generate(1, 50, "+I", 0),
        generate_step(1, 10, 1, "+U", 1),
    ]);
    let db = TestDb::new("metrics").await;
    db.exec(ORDERS_DDL).await;
    let port = pms_tests::http::free_port();
    let cfg = SyncConfig::builder(&t, &db).build();
    let mut child = cfg.spawn(&["--admin-addr", &format!("127.0.0.1:{port}")]);
    let deadline = Instant::now() + Duration::from_secs(60);
    let metrics = loop {
        let body = pms_tests::http::get(port, "/metrics");
        let current = body.as_deref().and_then(|b| {
            b.lines()
                .find(|l| l.starts_with("pms_current_snapshot{"))
                .and_then(|l| l.rsplit(' ').next()?.parse::<i64>().ok())
        });
        let ready = pms_tests::http::get(port, "/readyz").is_some_and(|r| r.contains("200 OK"));
        if current == Some(latest) && ready {
            break body.unwrap();
        }
        assert!(Instant::now() < deadline, "no metrics: {body:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(pms_tests::http::get(port, "/healthz")
        .unwrap()
        .contains("ok"));
    child.kill().unwrap();
    child.wait().unwrap();
    for needle in [
        "pms_records_read_total{kind=\"+I\"",
        "pms_rows_written_total{op=\"bulk\"",
        "pms_flush_duration_seconds_bucket",
        "pms_snapshots_behind",
        "pms_reduce_ratio",
    ] {
        assert!(metrics.contains(needle), "missing {needle} in:\n{metrics}");
    }
}

/// Liveness tied to progress: a worker whose write to MySQL hangs (another session holds
/// `LOCK TABLES … WRITE`, so the write waits for the table's lock without end) answers `/healthz`
/// with 503 once `PMS_STALL_AFTER` has passed, which makes the kubelet restart it; once the lock
/// goes, the write goes through and it is healthy again.
#[tokio::test]
async fn a_write_that_hangs_fails_the_liveness_check() {
    use mysql_async::prelude::Queryable;
    let t = orders_table(json!({"bucket": "1"}), false);
    t.commits(vec![generate(1, 20, "+I", 0)]);
    let db = TestDb::new("stall").await;
    db.exec(ORDERS_DDL).await;
    let port = pms_tests::http::free_port();
    let cfg = SyncConfig::builder(&t, &db)
        .poll_interval(Duration::from_millis(200))
        .build();
    let mut child = cfg.start(
        cfg.command(&["--admin-addr", &format!("127.0.0.1:{port}")])
            .env("PMS_STALL_AFTER", "2"),
    );
    let health = || pms_tests::http::get(port, "/healthz").unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(60);
    while db.count("orders").await < 20 || !health().contains("200 OK") {
        assert!(
            Instant::now() < deadline,
            "the worker did not catch up: {}",
            health()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Idle past the threshold: polling is progress.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(health().contains("200 OK"), "{}", health());
    let mut lock = db.conn().await;
    lock.query_drop("LOCK TABLES orders WRITE").await.unwrap();
    t.commits(vec![generate(21, 10, "+I", 0)]);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let answer = health();
        if answer.contains("503") {
            assert!(
                answer.contains("a write to MySQL has been in flight for"),
                "{answer}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "no stall seen: {answer}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    lock.query_drop("UNLOCK TABLES").await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while db.count("orders").await < 30 || !health().contains("200 OK") {
        assert!(Instant::now() < deadline, "not healthy again: {}", health());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_synced(&t, &db, "orders", None).await;
}

/// A 2-bucket table of `rows` orders, its empty MySQL target, and a config that flushes every
/// `max_rows` records and checkpoints after each flush (so a full read shows its position).
async fn large_full_read(name: &str, rows: i64, max_rows: u32) -> (Table, TestDb, SyncConfig) {
    let t = orders_table(json!({"bucket": "2"}), false);
    t.commits(vec![generate(1, rows, "+I", 0)]);
    let db = TestDb::new(name).await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db)
        .max_rows(max_rows)
        .checkpoint_interval(Duration::ZERO)
        .build();
    (t, db, cfg)
}

/// A crash in the middle of a large full read resumes at the checkpointed position inside the
/// snapshot instead of reading it all again.
#[tokio::test]
async fn a_full_read_resumes_where_it_stopped() {
    let (t, db, cfg) = large_full_read("resume_position", 3000, 200).await;
    let crashed = cfg
        .command(&["--once"])
        .env("PMS_FAILPOINT", "before-transaction@8")
        .output()
        .unwrap();
    assert!(!crashed.status.success());
    let cp: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cfg.checkpoint_path(0, 1)).unwrap()).unwrap();
    assert_eq!(cp["phase"], "full");
    assert!(
        cp["position"]["row"].as_u64().unwrap() > 0,
        "a position inside the snapshot: {cp}"
    );
    // For people (status, `kubectl pms status`): the rows of the flushes it covers, of 3000.
    let rows = cp["fullRead"]["rows"].as_i64().unwrap_or(0);
    assert!(
        cp["fullRead"]["expectedRows"] == 3000 && rows > 0 && rows <= 7 * 200 && rows % 200 == 0,
        "the full read's rows beside its position: {cp}"
    );
    let resumed = cfg.run_once(&[]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let done: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cfg.checkpoint_path(0, 1)).unwrap()).unwrap();
    assert!(
        done.get("fullRead").is_none(),
        "no full read under way: {done}"
    );
    let read = records_read(&stderr(&resumed));
    assert!(
        read <= 3000 - 7 * 200,
        "the resumed run read {read} of 3000 rows"
    );
    assert_synced(&t, &db, "orders", None).await;
}

/// A position is taken in one split plan of a snapshot; restarted after an option change packs
/// the snapshot's files into other splits, the worker reads the snapshot from its start instead
/// of skipping "n rows into split k" of a different list.
#[tokio::test]
async fn a_position_in_another_split_plan_reads_the_snapshot_from_its_start() {
    // Six files of disjoint keys, never compacted: with a 1 kb target each is its own split.
    let t = orders_table(
        json!({"bucket": "1", "write-only": "true", "source.split.target-size": "1 kb"}),
        false,
    );
    t.commits((0..6).map(|i| generate(1 + 50 * i, 50, "+I", 0)).collect());
    let db = TestDb::new("split_plan").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db)
        .max_rows(20)
        .checkpoint_interval(Duration::ZERO)
        .build();
    let crashed = cfg
        .command(&["--once"])
        .env("PMS_FAILPOINT", "before-transaction@9")
        .output()
        .unwrap();
    assert!(!crashed.status.success());
    let cp: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cfg.checkpoint_path(0, 1)).unwrap()).unwrap();
    assert!(
        cp["phase"] == "full" && cp["position"]["split"].as_u64() > Some(1),
        "a position a few splits into the full read: {cp}"
    );
    assert!(cp["position"]["plan"].is_u64(), "{cp}");
    // One split now: "split 2" of the old plan does not exist in the new one.
    t.commits(vec![
        json!({"setOption": {"key": "source.split.target-size", "value": "128 mb"}}),
    ]);
    let resumed = cfg.run_once(&[]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(db.count("orders").await, 300);
    assert_synced(&t, &db, "orders", None).await;
    assert!(
        stderr(&resumed).contains("another split plan of this snapshot"),
        "{}",
        stderr(&resumed)
    );
}

/// A stop in the middle of a full read is not a failure: the worker flushes, checkpoints the
/// position inside the snapshot, exits 0, and the next run resumes there.
#[tokio::test]
async fn sigterm_during_a_full_read_checkpoints_inside_it_and_exits_0() {
    // Small flushes, each checkpointed, so the full read takes a while and shows its position.
    let (t, db, cfg) = large_full_read("sigterm_full_read", 40_000, 20).await;
    let mut child = cfg.spawn(&[]);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let cp: Option<serde_json::Value> = std::fs::read(cfg.checkpoint_path(0, 1))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        if cp
            .as_ref()
            .is_some_and(|cp| cp["phase"] == "full" && cp["position"]["row"].as_u64() > Some(0))
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the full read never checkpointed a position: {cp:?}"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the worker ended before the test could stop it"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let status = stop_with_sigterm(&mut child).await;
    assert!(
        status.success(),
        "a stop during the full read exits 0, not {status}"
    );
    let cp: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cfg.checkpoint_path(0, 1)).unwrap()).unwrap();
    assert_eq!(cp["phase"], "full", "stopped inside the full read: {cp}");
    let written = db.count("orders").await;
    assert!(
        written > 0 && written < 40_000,
        "part of the snapshot is written: {written}"
    );
    let resumed = cfg.run_once(&[]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert!(
        records_read(&stderr(&resumed)) < 40_000,
        "the next run resumes inside the snapshot"
    );
    assert_synced(&t, &db, "orders", None).await;
}
