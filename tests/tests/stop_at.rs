//! `run --stop-at-snapshot S`: a consistent cut. Each slot applies exactly the snapshots
//! through S, though Paimon has committed past it, flushes, checkpoints and exits 0; MySQL then
//! equals the reference read of S. A cut behind a slot is refused; `--stop-at latest` stops at
//! the snapshot that was the latest when the run started.

mod common;

use common::*;
use pms_tests::mysql::TestDb;
use serde_json::json;

#[tokio::test]
async fn every_slot_stops_at_the_end_of_the_same_snapshot() {
    let t = orders_table(json!({"bucket": "4", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 600, "+I", 0)]);
    let db = TestDb::new("stop_at").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).parallelism(2).build();
    let slot = |k: &'static str| ["--slot", k];
    for k in ["0", "1"] {
        cfg.sync_once(&slot(k));
    }
    t.commits(vec![generate(1, 100, "+U", 3)]);
    t.commits(vec![generate(201, 50, "-D", 0)]);
    let cut = t.latest();
    // Past the cut.
    t.commits(vec![generate(1, 300, "+U", 9), generate(601, 20, "+I", 0)]);
    t.commits(vec![generate(301, 10, "-D", 0)]);
    let cut_arg = cut.to_string();
    for k in ["0", "1"] {
        let mut args = vec!["--stop-at-snapshot", cut_arg.as_str()];
        args.extend(slot(k));
        let out = cfg.command(&args).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("stopped at the end of the requested snapshot"),
            "{}",
            stderr(&out)
        );
    }
    assert_synced(&t, &db, "orders", Some(cut)).await;
    let out = cfg.verify_with(&["--snapshot", &cut_arg]);
    assert!(
        out.status.success(),
        "verify at the cut: {}",
        String::from_utf8_lossy(&out.stdout)
    );

    // Behind a slot: refused before anything is written.
    let mut args = vec!["--stop-at-snapshot", "1"];
    args.extend(slot("0"));
    let out = cfg.command(&args).output().unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("starts past it"), "{}", stderr(&out));

    // `--stop-at latest`: the rest.
    for k in ["0", "1"] {
        let mut args = vec!["--stop-at", "latest"];
        args.extend(slot(k));
        let out = cfg.command(&args).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_synced(&t, &db, "orders", None).await;
}

/// `scanMode: from-snapshot-full` (Flink's): a full read of `startSnapshot`, though later
/// snapshots exist, then their changes. With a cut at that snapshot MySQL equals its reference
/// read (a full read of the latest would be past the cut and refused); a snapshot that doesn't
/// exist is refused before anything is written.
#[tokio::test]
async fn from_snapshot_full_reads_the_named_snapshot_whole_then_its_successors() {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 200, "+I", 0)]);
    t.commits(vec![
        generate_step(1, 100, 2, "+U", 1),
        generate(150, 20, "-D", 0),
    ]);
    let named = t.latest();
    t.commits(vec![
        generate(201, 50, "+I", 0),
        generate_step(2, 80, 3, "+U", 2),
    ]);
    let db = TestDb::new("from_snapshot_full").await;
    db.exec(ORDERS_DDL).await;
    let build = |snapshot: i64| {
        SyncConfig::builder(&t, &db)
            .from_snapshot_full(snapshot)
            .build()
    };
    let missing = build(t.latest() + 5);
    let out = missing.command(&["--once"]).output().unwrap();
    assert!(!out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
    assert_eq!(db.count("orders").await, 0);

    let cfg = build(named);
    let cut = named.to_string();
    let out = cfg
        .command(&["--once", "--stop-at-snapshot", &cut])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("full read of snapshot {named}")),
        "{}",
        stderr(&out)
    );
    assert_synced(&t, &db, "orders", Some(named)).await;
    let out = cfg.command(&["--once"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_synced(&t, &db, "orders", None).await;
}

/// `scanMode: from-timestamp`, the instant given as RFC 3339 or as Flink's
/// `scan.timestamp-millis`: the changes of the first snapshot committed then or later, and of
/// every later one; none of the snapshots before.
#[tokio::test]
async fn from_timestamp_starts_at_the_first_snapshot_committed_then() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    // Keys 1–10, 11–20, 21–30.
    for first in [1, 11, 21] {
        t.commits(vec![generate(first, 10, "+I", 0)]);
    }
    let snapshot = |id: i64| -> serde_json::Value {
        let text = std::fs::read(t.table_dir().join(format!("snapshot/snapshot-{id}"))).unwrap();
        serde_json::from_slice(&text).unwrap()
    };
    let second = snapshot(2)["timeMillis"].as_i64().unwrap();
    let rfc3339 = chrono::DateTime::from_timestamp_millis(second)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    for (name, at) in [("millis", second.to_string()), ("rfc3339", rfc3339)] {
        let db = TestDb::new(&format!("from_ts_{name}")).await;
        db.exec(ORDERS_DDL).await;
        SyncConfig::builder(&t, &db)
            .from_timestamp(&at)
            .consumer_id(name)
            .build()
            .sync_once(&[]);
        let ids = db
            .query_strings("SELECT MIN(id), MAX(id), COUNT(*) FROM orders")
            .await;
        assert_eq!(
            ids[0],
            vec![Some("11".into()), Some("30".into()), Some("20".into())],
            "{name} {at}: snapshots 2 and 3 only"
        );
    }
}
