//! `pms-worker rebuild`: a sync stopped on an expired snapshot recovers with one command, ends
//! equal to Paimon with no orphans, and readers only ever see the old complete table or the new
//! one; a kill -9 at each step is finished by running `rebuild` again.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use pms_tests::mysql::TestDb;
use pms_tests::paimon::Table;
use serde_json::json;

/// Snapshot 1: 2000 rows. The sync reads it; then deletes, updates and inserts land in later
/// snapshots and every snapshot before the newest two expires.
fn table_with_a_gap() -> Table {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 2000, "+I", 0)]);
    t
}

fn make_gap(t: &Table) {
    t.commits(vec![
        generate(101, 150, "-D", 0),
        generate(1, 40, "+U", 5),
        generate(3001, 60, "+I", 0),
        generate(5001, 5, "+I", 0),
    ]);
    for consumer in std::fs::read_dir(t.table_dir().join("consumer")).unwrap() {
        std::fs::remove_file(consumer.unwrap().path()).unwrap();
    }
    t.expire(2);
}

// Multi-threaded: the reader polls while the test thread waits for the rebuild process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rebuild_after_an_expired_snapshot_leaves_no_orphans_and_no_partial_table_for_readers() {
    let t = table_with_a_gap();
    let db = TestDb::new("rebuild").await;
    db.exec(ORDERS_DDL).await;
    // Two slots: the new generation loads them in parallel and installs each one's checkpoint.
    let cfg = SyncConfig::builder(&t, &db).parallelism(2).build();
    let slots = [["--slot", "0"], ["--slot", "1"]];
    for slot in &slots {
        cfg.sync_once(slot);
    }
    make_gap(&t);
    let out = cfg.run_once(&slots[0]);
    assert!(stderr(&out).contains("has expired"), "{}", stderr(&out));
    let old_state = state(&db).await;

    // A reader polls the table through the whole rebuild.
    let stop = Arc::new(AtomicBool::new(false));
    let polls = Arc::new(AtomicU64::new(0));
    let reader = {
        let (db, stop, polls) = (db.reopen(), stop.clone(), polls.clone());
        tokio::spawn(async move {
            let mut seen = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                polls.fetch_add(1, Ordering::Relaxed);
                let s = state(&db).await;
                if seen.last() != Some(&s) {
                    seen.push(s);
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            seen
        })
    };
    let out = cfg.rebuild(None);
    assert!(out.status.success(), "rebuild failed: {}", stderr(&out));
    // The new generation's claim of the shadow table it wrote went with the swap; the sync's
    // own claim of its table stays.
    let claims = db
        .query_strings("SELECT target_table FROM _paimon_sync_targets ORDER BY target_table")
        .await;
    assert_eq!(
        claims,
        vec![vec![Some("orders".to_string())]],
        "claims after the rebuild"
    );
    // The reader ran while the rebuild did (however fast the build makes the rebuild).
    let polls_during = polls.load(Ordering::Relaxed);
    assert!(
        polls_during >= 10,
        "the reader polled only {polls_during} times during the rebuild"
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    stop.store(true, Ordering::Relaxed);
    let seen = reader.await.unwrap();
    let new_state = state(&db).await;
    assert_eq!(
        seen,
        vec![old_state, new_state],
        "readers saw something besides the old and the new complete table"
    );

    assert_synced(&t, &db, "orders", None).await;
    assert_eq!(db.count("orders").await, 2000 - 150 + 65, "no orphans");
    assert_eq!(
        db.count("orders__pms_old").await,
        2000,
        "the replaced table is kept"
    );
    cfg.assert_verified();
    // The sync goes on from the new generation's checkpoint.
    t.commits(vec![generate(7001, 10, "+I", 0), generate(1, 5, "-D", 0)]);
    for slot in &slots {
        cfg.sync_once(slot);
    }
    assert_synced(&t, &db, "orders", None).await;
}

/// Row count and an order-independent checksum, as a reader sees the table.
async fn state(db: &TestDb) -> (String, String) {
    let rows = db
        .query_strings("SELECT COUNT(*), COALESCE(SUM(CRC32(CONCAT_WS('|', id, amount, status))), 0) FROM orders")
        .await;
    (
        rows[0][0].clone().unwrap_or_default(),
        rows[0][1].clone().unwrap_or_default(),
    )
}

/// In each delivery mode (exactly-once hands over progress rows too).
#[tokio::test]
async fn a_rebuild_killed_at_each_step_is_finished_by_running_it_again() {
    let t = table_with_a_gap();
    let mut stuck = Vec::new();
    for delivery in [Delivery::AtLeastOnce, Delivery::ExactlyOnce] {
        for point in pms_worker::failpoint::REBUILD_POINTS {
            let db = TestDb::new("rebuild_kill").await;
            db.exec(ORDERS_DDL).await;
            let cfg = SyncConfig::builder(&t, &db).delivery(delivery).build();
            cfg.sync_once(&[]);
            stuck.push((point, db, cfg));
        }
    }
    make_gap(&t);
    for (point, db, cfg) in &stuck {
        let out = cfg.rebuild(Some(point));
        assert!(
            !out.status.success(),
            "{point}: the failpoint must abort the rebuild"
        );
        assert!(
            stderr(&out).contains(&format!("failpoint {point} reached")),
            "{point}: {}",
            stderr(&out)
        );
        if **point != "rebuild-after-create" {
            // A rebuild in progress: the old generation must not write.
            let out = cfg.run_once(&[]);
            assert!(
                stderr(&out).contains("a rebuild of this sync is in progress"),
                "{point}: {}",
                stderr(&out)
            );
        }
        let out = cfg.rebuild(None);
        assert!(
            out.status.success(),
            "{point}: the second rebuild failed: {}",
            stderr(&out)
        );
        assert_synced(&t, db, "orders", None).await;
        cfg.sync_once(&[]);
        cfg.assert_verified();
    }
}

#[tokio::test]
async fn rebuild_refuses_a_table_with_triggers_and_a_running_sync_and_drops_the_old_table_after_retention(
) {
    let t = orders_table(json!({"bucket": "1"}), false);
    t.commits(vec![generate(1, 50, "+I", 0)]);
    let db = TestDb::new("rebuild_refused").await;
    db.exec(ORDERS_DDL).await;
    db.exec("CREATE TABLE audit (id BIGINT)").await;
    db.exec("CREATE TRIGGER orders_audit AFTER UPDATE ON orders FOR EACH ROW INSERT INTO audit VALUES (NEW.id)")
        .await;
    let cfg = SyncConfig::builder(&t, &db)
        .retain_old(Duration::ZERO)
        .build();
    cfg.sync_once(&[]);
    let out = cfg.rebuild(None);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("has trigger orders_audit, which a RENAME TABLE does not carry")
            && stderr(&out).contains("verify --repair"),
        "{}",
        stderr(&out)
    );
    db.exec("DROP TRIGGER orders_audit").await;

    let mut running = cfg.spawn(&[]);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let out = cfg.rebuild(None);
    stop_with_sigterm(&mut running).await;
    assert!(
        stderr(&out).contains("is running (it holds its slot lock): stop the sync"),
        "{}",
        stderr(&out)
    );

    let out = cfg.rebuild(None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(db.count("orders__pms_old").await, 50);
    // retainOld 0: the next run drops the replaced table.
    cfg.sync_once(&[]);
    let left = db
        .query_strings("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders__pms_old'")
        .await;
    assert_eq!(left[0][0].as_deref(), Some("0"));
    assert_synced(&t, &db, "orders", None).await;
}

/// An exactly-once sync can't restart with another parallelism (its progress rows are of
/// one); a rebuild with the new parallelism hands its own rows over in one transaction.
#[tokio::test]
async fn an_exactly_once_sync_changes_its_parallelism_by_a_rebuild() {
    let t = orders_table(json!({"bucket": "4", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 400, "+I", 0)]);
    let db = TestDb::new("rebuild_eo").await;
    db.exec(ORDERS_DDL).await;
    let one = SyncConfig::builder(&t, &db)
        .delivery(Delivery::ExactlyOnce)
        .max_rows(100)
        .build();
    // Stopped inside its full read: not at the end of a snapshot, so no rescale in place.
    let out = one
        .command(&["--once"])
        .env("PMS_FAILPOINT", "after-commit-before-checkpoint@2")
        .output()
        .unwrap();
    assert!(!out.status.success());
    t.commits(vec![generate(1, 50, "-D", 0), generate(1000, 20, "+I", 0)]);
    let two = SyncConfig::builder(&t, &db)
        .delivery(Delivery::ExactlyOnce)
        .parallelism(2)
        .build();
    let slots = [["--slot", "0"], ["--slot", "1"]];
    let out = two.run_once(&slots[1]);
    assert!(
        stderr(&out).contains("`pms-worker rebuild` with the new parallelism"),
        "{}",
        stderr(&out)
    );

    // A worker of the old generation still running: the rebuild fences it (epochs bumped), so
    // it stops at its next commit instead of writing into the new table.
    let mut old = one.spawn(&[]);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let out = two.rebuild(None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_synced(&t, &db, "orders", None).await;
    t.commits(vec![generate(3000, 10, "+I", 0)]);
    let status = wait_for_exit(&mut old, Duration::from_secs(30), || {
        format!("the old generation's worker must be fenced:\n{}", one.log())
    })
    .await;
    let log = one.log();
    assert!(!status.success() && log.contains("fenced"), "{log}");
    let rows = db
        .query_strings("SELECT sync_name, slots, COUNT(*) FROM _paimon_sync_progress GROUP BY sync_name, slots")
        .await;
    assert_eq!(
        rows,
        [vec![
            Some("db.t".to_string()),
            Some("2".into()),
            Some("2".into())
        ]]
    );
    t.commits(vec![generate(2000, 30, "+I", 0)]);
    for slot in &slots {
        two.sync_once(slot);
    }
    assert_synced(&t, &db, "orders", None).await;
    two.assert_verified();
}
