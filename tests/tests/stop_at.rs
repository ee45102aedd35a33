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
