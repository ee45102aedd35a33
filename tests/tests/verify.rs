//! `pms-worker verify`: silent on an equal table, and on a damaged one names every kind of
//! difference (a missing row, an extra row, a row with another value), exiting 3.

mod common;

use common::*;
use pms_tests::mysql::TestDb;
use serde_json::json;

#[tokio::test]
async fn verify_finds_missing_extra_and_different_rows_and_nothing_on_an_equal_table() {
    let t = orders_table(json!({"bucket": "4", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 3000, "+I", 0)]);
    t.commits(vec![
        generate(1, 500, "+U", 7),
        generate(2001, 100, "-D", 0),
    ]);
    let db = TestDb::new("verify").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    cfg.assert_verified();

    // Against an older snapshot, the changes after it are differences.
    let text = divergent(&cfg, &["--snapshot", "1"]);
    assert!(
        text.contains("100 missing from MySQL, 0 extra in MySQL, 500 different"),
        "{text}"
    );
    // The same within the smallest `maxBufferBytes`: what the second pass holds of 3,000 rows
    // doesn't fit in 64 KiB, so their chunks are read again in several groups.
    let small = SyncConfig::builder(&t, &db).max_buffer_bytes(65536).build();
    let out = small.verify_with(&["--snapshot", "1"]);
    let (text, log) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert_eq!(out.status.code(), Some(3), "{log}");
    assert!(
        text.contains("100 missing from MySQL, 0 extra in MySQL, 500 different"),
        "{text}"
    );
    assert!(
        log.contains("read again in groups that fit in memory"),
        "{log}"
    );

    db.exec("DELETE FROM orders WHERE id = 17").await;
    db.exec("UPDATE orders SET amount = amount + 1 WHERE id = 2500")
        .await;
    db.exec("INSERT INTO orders SELECT 99999, amount, status, updated_at FROM orders WHERE id = 1")
        .await;
    let text = divergent(&cfg, &[]);
    for line in [
        "Paimon 2900 rows, MySQL 2900 rows",
        "1 missing from MySQL, 1 extra in MySQL, 1 different",
        "missing: id=17",
        "extra: id=99999",
        "different: id=2500 (columns amount)",
    ] {
        assert!(text.contains(line), "expected {line:?} in:\n{text}");
    }
}

/// `verify --repair` reconciles in place: after a sync that missed deletes (its checkpoint lost
/// and rebuilt from a later full read, the orphan case), and with rows damaged by hand, it
/// deletes the orphans, rewrites the damaged rows, and a second verify finds nothing.
#[tokio::test]
async fn verify_repair_removes_orphans_and_rewrites_damaged_rows() {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 1000, "+I", 0)]);
    let db = TestDb::new("verify_repair").await;
    db.exec(ORDERS_DDL).await;
    let again = SyncConfig::builder(&t, &db).build();
    again.sync_once(&[]);
    t.commits(vec![generate(101, 50, "-D", 0), generate(1, 10, "+U", 3)]);
    again.sync_once(&[]);
    // Written behind the sync's back: the 50 deleted keys back (orphans), two rows damaged.
    db.exec(
        "INSERT INTO orders (id, amount, status) SELECT seq, 1.00, 'orphan' FROM seq_101_to_150",
    )
    .await;
    db.exec("UPDATE orders SET status = 'damaged' WHERE id IN (500, 501)")
        .await;
    let text = divergent(&again, &[]);
    assert!(
        text.contains("0 missing from MySQL, 50 extra in MySQL, 2 different"),
        "{text}"
    );

    // At most 20 rows in memory: the 52 rows are found and written over several reads.
    let out = again.verify_with(&["--repair", "--rows-per-pass", "20"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains("repaired: 52 rows written; verified again:"),
        "{text}"
    );
    assert_synced(&t, &db, "orders", None).await;
    again.assert_verified();
}

/// `verify --live` on a sync that is behind: the first comparison also sees the changes the
/// sync has not applied yet; once it has applied them, later rounds compare again, and only the
/// row damaged by hand, different in every round, is reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_live_reports_only_what_stays_different_after_the_sync_applied_it() {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 1000, "+I", 0)]);
    let db = TestDb::new("verify_live").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    cfg.sync_once(&[]);
    db.exec("UPDATE orders SET amount = amount + 1 WHERE id = 900")
        .await;
    // In flight: committed in Paimon, not applied yet.
    t.commits(vec![generate(1, 200, "+U", 3), generate(501, 50, "-D", 0)]);
    let verify = cfg
        .subcommand("verify", &["--live"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Its first round (1000 rows, well under a second) is over when the sync catches up.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    cfg.sync_once(&[]);
    let out = verify.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(3), "{text}{}", stderr(&out));
    let log = stderr(&out);
    let first = log
        .lines()
        .find(|l| l.contains("round=1") && l.contains("comparing them again"))
        .unwrap_or_else(|| panic!("no first round in:\n{log}"));
    assert!(
        !first.contains("divergent=1 "),
        "the first round saw the changes in flight too: {first}"
    );
    for line in [
        "0 missing from MySQL, 0 extra in MySQL, 1 different",
        "different: id=900 (columns amount)",
        "3 rounds",
    ] {
        assert!(text.contains(line), "expected {line:?} in:\n{text}");
    }
}
