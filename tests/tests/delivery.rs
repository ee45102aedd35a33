//! Delivery guarantees beyond Flink's JDBC sink: crash points on every delivery mode,
//! exactly-once counted by a trigger, snapshot-atomic visibility seen by a concurrent reader,
//! the sequence guard against stale replays, random kill -9, and a MariaDB restart mid-flush.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use mysql_async::prelude::*;
use pms_tests::mysql::{OwnServer, TestDb};
use pms_tests::paimon::Table;
use serde_json::{json, Value as Json};

/// Each applied change leaves one row in `audit`: a replayed change would leave two.
const AUDIT: &[&str] = &[
    "CREATE TABLE audit (n BIGINT AUTO_INCREMENT PRIMARY KEY, op CHAR(1), id BIGINT)",
    "CREATE TRIGGER audit_i AFTER INSERT ON orders FOR EACH ROW INSERT INTO audit (op, id) VALUES ('I', NEW.id)",
    "CREATE TRIGGER audit_u AFTER UPDATE ON orders FOR EACH ROW INSERT INTO audit (op, id) VALUES ('U', NEW.id)",
    "CREATE TRIGGER audit_d AFTER DELETE ON orders FOR EACH ROW INSERT INTO audit (op, id) VALUES ('D', OLD.id)",
];

async fn audited_target(name: &str) -> TestDb {
    let db = TestDb::new(name).await;
    db.exec(ORDERS_DDL).await;
    for sql in AUDIT {
        db.exec(sql).await;
    }
    db
}

/// 60 inserts, 30 updates, 10 deletes in three snapshots: 100 changes, each changing its row.
fn changes_table() -> Table {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![
        generate(1, 60, "+I", 0),
        generate_step(1, 30, 2, "+U", 1),
        generate_step(2, 10, 6, "-D", 0),
    ]);
    t
}

fn run_with(cfg: &SyncConfig, envs: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = cfg.command(&["--once"]);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// Every crash point, on both delivery modes: the process dies there, a restart finishes and
/// MySQL equals the reference read. Exactly-once leaves the same audit trail (one trigger row
/// per written change) as a run that never crashed; at-least-once may leave more.
#[tokio::test]
async fn every_crash_point_on_every_delivery_mode() {
    let table = changes_table();
    // Small flushes of one-row statements, a checkpoint after each: every point is reached often.
    let config = |db: &TestDb, delivery: Delivery| {
        SyncConfig::builder(&table, db)
            .max_rows(4)
            .max_rows_per_statement(1)
            .delivery(delivery)
            .from_snapshot(1)
            .checkpoint_interval(Duration::ZERO)
            .build()
    };
    for delivery in [Delivery::AtLeastOnce, Delivery::ExactlyOnce] {
        let clean_db = audited_target("crash_free").await;
        let clean = config(&clean_db, delivery);
        assert!(run_with(&clean, &[]).status.success());
        let expected_audit = clean_db.count("audit").await;
        assert!(
            expected_audit >= 90,
            "the crash-free run wrote {expected_audit} changes"
        );
        for point in pms_worker::failpoint::POINTS {
            let db = audited_target(&format!("crash_{}", point.replace('-', "_"))).await;
            let cfg = config(&db, delivery);
            let crashed = run_with(&cfg, &[("PMS_FAILPOINT", &format!("{point}@7"))]);
            assert!(
                !crashed.status.success(),
                "{delivery:?}/{point}: the failpoint must kill the run"
            );
            assert!(
                stderr(&crashed).contains(&format!("failpoint {point} reached")),
                "{}",
                stderr(&crashed)
            );
            let resumed = run_with(&cfg, &[]);
            assert!(
                resumed.status.success(),
                "{delivery:?}/{point}: {}",
                stderr(&resumed)
            );
            assert_synced(&table, &db, "orders", None).await;
            let audit = db.count("audit").await;
            if delivery == Delivery::ExactlyOnce {
                assert_eq!(
                    audit, expected_audit,
                    "{delivery:?}/{point}: each change applied exactly once"
                );
            } else {
                assert!(
                    audit >= expected_audit,
                    "{delivery:?}/{point}: at least once"
                );
            }
        }
    }
}

/// The README's example: order 1001 deleted and re-inserted in one snapshot. With snapshot
/// visibility a concurrent reader never sees it missing, nor the two halves of a transfer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_visibility_never_shows_a_half_applied_snapshot() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    let row = |kind: &str, id: i64, amount: i64| json!({"kind": kind, "values": order(id, &format!("{amount}.00"), "PAID")});
    t.commits(vec![
        json!({"rows": (1001..=1010).map(|id| row("+I", id, 100)).collect::<Vec<_>>()}),
    ]);
    let db = TestDb::new("visibility").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db)
        .max_rows(1)
        .visibility(Visibility::Snapshot)
        .build();
    cfg.sync_once(&[]);
    // 20 snapshots, each: 1001 deleted and re-inserted, 10 moved from one order to another.
    let mut commits = Vec::new();
    let mut amounts = [100i64; 10];
    for i in 0..20 {
        let (from, to) = (i % 10, (i + 3) % 10);
        amounts[from] -= 10;
        amounts[to] += 10;
        commits.push(json!({"rows": [
            row("-D", 1001, amounts[0]), row("+I", 1001, amounts[0]),
            row("+U", 1001 + from as i64, amounts[from]), row("+U", 1001 + to as i64, amounts[to]),
        ]}));
    }
    t.commits(commits);
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (stop, port, name) = (stop.clone(), db.port, db.name.clone());
        tokio::spawn(async move {
            let pool = mysql_async::Pool::new(
                mysql_async::OptsBuilder::default()
                    .ip_or_hostname("127.0.0.1")
                    .tcp_port(port)
                    .user(Some("pms"))
                    .pass(Some("pms"))
                    .db_name(Some(name)),
            );
            let mut conn = pool.get_conn().await.unwrap();
            let mut polls = 0u64;
            while !stop.load(Ordering::SeqCst) {
                let (count, sum): (i64, String) = conn
                    .query_first("SELECT COUNT(*), CAST(SUM(amount) AS CHAR) FROM orders")
                    .await
                    .unwrap()
                    .unwrap();
                assert_eq!(
                    (count, sum.as_str()),
                    (10, "1000.00"),
                    "a reader saw a half-applied snapshot after {polls} polls"
                );
                polls += 1;
            }
            polls
        })
    };
    let out = cfg.run_once(&[]);
    stop.store(true, Ordering::SeqCst);
    let polls = watcher.await.expect("the reader saw only whole snapshots");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        polls > 10,
        "the reader polled during the run ({polls} polls)"
    );
    assert_synced(&t, &db, "orders", None).await;

    // A snapshot larger than maxTransactionRows is committed in parts, and says so.
    t.commits(vec![generate(2000, 50, "+I", 0)]);
    let small = SyncConfig::builder(&t, &db)
        .max_rows(1)
        .visibility(Visibility::Snapshot)
        .max_transaction_rows(20)
        .build();
    std::fs::copy(cfg.checkpoint_path(0, 1), small.checkpoint_path(0, 1)).unwrap();
    let out = small.run_once(&[]);
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("committing it in parts"),
        "{}",
        stderr(&out)
    );
    assert_synced(&t, &db, "orders", None).await;
}

/// The README's concurrent writer: another system sets REFUNDED. A replay of older snapshots
/// (a rebuilt checkpoint, a restore) must not overwrite nor delete what it wrote.
#[tokio::test]
async fn sequence_guard_keeps_newer_writes_from_stale_replays() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    t.commits(vec![
        generate(1, 20, "+I", 0),
        generate_step(1, 10, 2, "+U", 4),
        generate_step(2, 5, 2, "-D", 0),
    ]);
    let db = TestDb::new("guard").await;
    db.exec("CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, amount DECIMAL(10,2), status VARCHAR(64), updated_at DATETIME(3), pms_snapshot BIGINT NULL)").await;
    let cfg = SyncConfig::builder(&t, &db)
        .sequence_guard("pms_snapshot")
        .build();
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    // Another writer updates order 3 and re-creates deleted order 4, stamping a newer version.
    db.exec("UPDATE orders SET status = 'REFUNDED', pms_snapshot = 1000 WHERE id = 3")
        .await;
    db.exec(
        "INSERT INTO orders (id, amount, status, pms_snapshot) VALUES (4, 1.00, 'MANUAL', 1000)",
    )
    .await;
    // A replay of every snapshot from the first (no checkpoint, reading changes from snapshot 1).
    let replay = SyncConfig::builder(&t, &db)
        .sequence_guard("pms_snapshot")
        .from_snapshot(1)
        .consumer_id("replay")
        .build();
    replay.sync_once(&[]);
    let rows = db
        .query_strings("SELECT id, status FROM orders WHERE id IN (3, 4) ORDER BY id")
        .await;
    assert_eq!(
        rows,
        vec![
            vec![Some("3".into()), Some("REFUNDED".into())],
            vec![Some("4".into()), Some("MANUAL".into())]
        ]
    );
    // Everything else still equals the reference read.
    let others = db
        .query_strings("SELECT COUNT(*) FROM orders WHERE pms_snapshot < 1000")
        .await;
    assert_eq!(
        others[0][0].as_deref(),
        Some(&*(t.read(None).len() - 1).to_string())
    );
    // Unguarded, the same replay regresses order 3 (the gap the guard closes).
    let unguarded = SyncConfig::builder(&t, &db)
        .from_snapshot(1)
        .consumer_id("unguarded")
        .build();
    unguarded.sync_once(&[]);
    let rows = db
        .query_strings("SELECT status FROM orders WHERE id = 3")
        .await;
    assert_ne!(rows[0][0].as_deref(), Some("REFUNDED"));
}

/// kill -9 at random moments of continuous exactly-once runs while snapshots keep coming.
/// `PMS_SOAK_ITERATIONS` (default 3; `make soak` runs many) and `PMS_SOAK_SEED` reproduce a run.
#[tokio::test]
async fn random_kill_9_loop_exactly_once() {
    let iterations: u64 = std::env::var("PMS_SOAK_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let seed: u64 = std::env::var("PMS_SOAK_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    println!("random kill loop: PMS_SOAK_SEED={seed} PMS_SOAK_ITERATIONS={iterations}");
    let mut rng = seed;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    let db = audited_target("soak").await;
    let cfg = SyncConfig::builder(&t, &db)
        .max_rows(1)
        .delivery(Delivery::ExactlyOnce)
        .from_snapshot(1)
        .checkpoint_interval(Duration::from_millis(100))
        .build();
    let mut changes = 0i64;
    for i in 0..iterations {
        let base = 1 + i as i64 * 40;
        t.commits(vec![
            generate(base, 40, "+I", 0),
            generate_step(base, 10, 3, "+U", 1 + i as i64),
            generate_step(base + 1, 5, 7, "-D", 0),
        ]);
        changes += 55;
        let mut child = cfg.spawn(&[]);
        tokio::time::sleep(Duration::from_millis(50 + next(700))).await;
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let out = cfg.run_once(&[]);
    assert!(out.status.success(), "seed {seed}: {}", stderr(&out));
    assert_synced(&t, &db, "orders", None).await;
    assert_eq!(
        db.count("audit").await,
        changes,
        "seed {seed}: every change exactly once"
    );
}

/// MariaDB killed (kill -9) and restarted at random moments while a continuous worker syncs
/// snapshot after snapshot, in each delivery mode: the worker waits, reconnects and goes on (it
/// never exits), MySQL ends equal to the reference, and with exactly-once no write was applied
/// twice (an audit trigger records every row version written). `PMS_SOAK_RESTARTS` restarts per
/// mode (default 1; `make soak` runs 20), `PMS_SOAK_SEED` reproduces the timing.
#[tokio::test]
async fn mariadb_restarts_while_syncing() {
    let restarts: u32 = std::env::var("PMS_SOAK_RESTARTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let seed: u64 = std::env::var("PMS_SOAK_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::process::id() as u64);
    eprintln!("mariadb_restarts_while_syncing: {restarts} restarts per mode, PMS_SOAK_SEED={seed}");
    let mut state = seed;
    let mut pause = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        Duration::from_millis((state >> 33) % 600)
    };
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 20000, "+I", 0)]);
    for delivery in [Delivery::AtLeastOnce, Delivery::ExactlyOnce] {
        // A server of its own: restarting the shared one would disturb the other tests.
        let server = OwnServer::start(&[]);
        let db = TestDb::on(server.port, "restarts").await;
        db.exec(ORDERS_DDL).await;
        db.exec(
            "CREATE TABLE writes (op CHAR(1), id BIGINT, amount DECIMAL(10,2), status VARCHAR(64))",
        )
        .await;
        for (name, op) in [("writes_i", "INSERT"), ("writes_u", "UPDATE")] {
            db.exec(&format!(
                "CREATE TRIGGER {name} AFTER {op} ON orders FOR EACH ROW \
                 INSERT INTO writes VALUES ('{}', NEW.id, NEW.amount, NEW.status)",
                &op[..1]
            ))
            .await;
        }
        let cfg = SyncConfig::builder(&t, &db)
            .max_rows(100)
            .delivery(delivery)
            .checkpoint_interval(Duration::from_secs(1))
            .build();
        // Its log goes to a file: a pipe nobody reads would fill up and stall the worker.
        let log = tempfile::NamedTempFile::new().unwrap();
        let mut child = cfg
            .command(&[])
            .stdout(std::process::Stdio::null())
            .stderr(log.reopen().unwrap())
            .spawn()
            .unwrap();
        // Running (past its start, which fails fast on an unreachable server) before the first kill.
        wait_caught_up(&cfg, t.latest(), &mut child).await;
        for i in 0..restarts as i64 {
            tokio::time::sleep(pause()).await;
            // Down for 3 s, while a new snapshot (2 s to commit) waits to be written.
            std::thread::scope(|s| {
                s.spawn(|| server.crash_restart(3));
                t.commits(vec![generate(1 + 700 * (i % 20), 3000, "+U", i + 1)]);
            });
            if let Some(status) = child.try_wait().unwrap() {
                let log = std::fs::read_to_string(log.path()).unwrap();
                panic!("{delivery:?}: the worker exited ({status}) at restart {i} instead of waiting:\n{log}");
            }
        }
        let end = t.latest();
        wait_caught_up(&cfg, end, &mut child).await;
        let db = db.reopen();
        let stopped = stop_with_sigterm(&mut child).await;
        let log = std::fs::read_to_string(log.path()).unwrap();
        assert!(stopped.success(), "{delivery:?}: {log}");
        // A restart the worker ran into: a write retried, or its slot lock taken again. (A
        // restart over before the next write goes unnoticed: the commit may outlast the downtime.)
        let noticed = log.matches("transient MySQL failure, retrying").count()
            + log.matches("released the slot lock: took it again").count();
        eprintln!("{delivery:?}: {restarts} restarts, {noticed} retries or lock re-takes");
        if restarts >= 5 {
            assert!(noticed > 0, "{delivery:?}: no restart was run into:\n{log}");
        }
        assert_synced(&t, &db, "orders", Some(end)).await;
        if delivery == Delivery::ExactlyOnce {
            let twice = db
                .query_strings(
                    "SELECT COUNT(*) FROM (SELECT COUNT(*) AS n FROM writes GROUP BY op, id, amount, status \
                     HAVING n > 1) AS d",
                )
                .await;
            assert_eq!(
                twice,
                [vec![Some("0".to_string())]],
                "no write applied twice"
            );
        }
    }
}

/// Waits until a continuous worker's checkpoint covers snapshot `end`, failing if it exits.
async fn wait_caught_up(cfg: &SyncConfig, end: i64, child: &mut std::process::Child) {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let cp: Option<serde_json::Value> = std::fs::read(cfg.checkpoint_path(0, 1))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        if cp.as_ref().is_some_and(|cp| {
            cp["phase"] == "incremental"
                && cp["snapshotId"].as_i64() >= Some(end)
                && cp.get("position").is_none()
        }) {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the worker exited ({status}) instead of catching up");
        }
        assert!(
            Instant::now() < deadline,
            "not caught up with snapshot {end}: {cp:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// One large snapshot in flushes of 100 changes, at-least-once: its parts whose keys differ
/// are written side by side (the trigger sees another connection writing), and a key that comes again
/// later in the snapshot waits for its earlier part, so it ends at its last value. Exactly-once
/// (each transaction's progress row follows the one before) writes one part at a time.
#[tokio::test]
async fn the_parts_of_one_large_snapshot_go_side_by_side_where_their_keys_differ() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 3000, "+I", 0)]);
    let mut rows: Vec<(&str, Json)> = (1..=3000)
        .map(|id| ("+U", order(id, "1.00", "first")))
        .collect();
    rows.extend(
        (1..=3000)
            .step_by(7)
            .map(|id| ("+U", order(id, "2.00", "again"))),
    );
    rows.extend(
        (1..=3000)
            .step_by(11)
            .map(|id| ("-D", order(id, "2.00", "again"))),
    );
    let last = t.commit(&rows);
    for delivery in [Delivery::AtLeastOnce, Delivery::ExactlyOnce] {
        let db = TestDb::new(&format!("side_by_side_{delivery:?}").to_lowercase()).await;
        db.exec(ORDERS_DDL).await;
        // Each row written notes how many other connections were writing `orders` then.
        db.exec("CREATE TABLE audit (n BIGINT AUTO_INCREMENT PRIMARY KEY, op VARCHAR(6), id BIGINT, others INT)")
            .await;
        for (event, row) in [("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD")] {
            db.exec(&format!(
                "CREATE TRIGGER audit_{event} AFTER {event} ON orders FOR EACH ROW INSERT INTO audit (op, id, others) \
                 VALUES ('{event}', {row}.id, (SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND DB = DATABASE() \
                 AND (INFO LIKE 'INSERT INTO %orders%' OR INFO LIKE 'DELETE FROM %orders%')))"
            ))
            .await;
        }
        let cfg = SyncConfig::builder(&t, &db)
            .max_rows(100)
            .delivery(delivery)
            .from_snapshot(1)
            .build();
        let out = run_with(&cfg, &[]);
        assert!(out.status.success(), "{delivery:?}: {}", stderr(&out));
        assert_synced(&t, &db, "orders", Some(last)).await;
        let beside = db
            .query_strings(
                "SELECT COUNT(*) FROM audit WHERE others > 0 AND op IN ('UPDATE', 'DELETE')",
            )
            .await;
        let beside: i64 = beside[0][0].as_deref().unwrap().parse().unwrap();
        if delivery == Delivery::AtLeastOnce {
            assert!(beside > 0, "no part was written beside another");
        } else {
            assert_eq!(beside, 0, "exactly-once writes one part at a time");
        }
    }
}

/// A progress table made by an earlier release (no `split_plan` column) gets the column, and
/// the exactly-once sync runs as on a new one.
#[tokio::test]
async fn an_older_progress_table_is_migrated() {
    let t = orders_table(json!({"bucket": "2"}), false);
    t.commits(vec![generate(1, 30, "+I", 0)]);
    let db = TestDb::new("progress_migration").await;
    db.exec(ORDERS_DDL).await;
    db.exec(
        "CREATE TABLE `_paimon_sync_progress` (sync_name VARCHAR(190) NOT NULL, slot INT NOT NULL, \
         slots INT NOT NULL, snapshot_id BIGINT NOT NULL DEFAULT 0, phase VARCHAR(16) NOT NULL DEFAULT 'none', \
         split_index INT NULL, split_row BIGINT NULL, epoch BIGINT NOT NULL, updated_at DATETIME(6) NOT NULL, \
         PRIMARY KEY (sync_name, slot)) DEFAULT CHARSET = utf8mb4",
    )
    .await;
    let cfg = SyncConfig::builder(&t, &db)
        .delivery(Delivery::ExactlyOnce)
        .build();
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    let columns = db
        .query_strings(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() \
             AND table_name = '_paimon_sync_progress' AND column_name = 'split_plan'",
        )
        .await;
    assert_eq!(columns, [vec![Some("split_plan".to_string())]]);
}

/// A commit whose acknowledgement is lost (the server committed, the client saw the connection
/// drop) is retried; with exactly-once the retry finds the progress row already at the flush's
/// position and writes nothing again: the audit trail equals a clean run's. At-least-once
/// writes it again (idempotent rows, a second audit row).
#[tokio::test]
async fn a_lost_commit_acknowledgement_is_not_applied_twice() {
    let table = changes_table();
    let config = |db: &TestDb, delivery: Delivery| {
        SyncConfig::builder(&table, db)
            .max_rows(4)
            .delivery(delivery)
            .from_snapshot(1)
            .checkpoint_interval(Duration::ZERO)
            .build()
    };
    let clean_db = audited_target("ack_clean").await;
    assert!(run_with(&config(&clean_db, Delivery::ExactlyOnce), &[])
        .status
        .success());
    let expected_audit = clean_db.count("audit").await;
    for delivery in [Delivery::ExactlyOnce, Delivery::AtLeastOnce] {
        let db = audited_target(&format!("ack_lost_{delivery:?}").to_lowercase()).await;
        let out = run_with(
            &config(&db, delivery),
            &[("PMS_FAILPOINT", "commit-ack-lost@5")],
        );
        let log = stderr(&out);
        assert!(out.status.success(), "{delivery:?}: {log}");
        assert!(log.contains("failpoint commit-ack-lost reached"), "{log}");
        assert_synced(&table, &db, "orders", None).await;
        let audit = db.count("audit").await;
        if delivery == Delivery::ExactlyOnce {
            assert!(
                log.contains("committed although its acknowledgement was lost"),
                "{log}"
            );
            assert_eq!(
                audit, expected_audit,
                "each change applied exactly once: {log}"
            );
        } else {
            assert!(
                audit > expected_audit,
                "at-least-once wrote the flush again"
            );
        }
    }
}

/// Exactly-once and a new parallelism: refused while the old slot stopped inside a snapshot (a
/// crash in the middle of its full read), done once every old slot is at the end of one
/// snapshot (a cut): the progress rows go to the new slots in one transaction, and the audit
/// trail equals that of a sync that never changed its parallelism.
#[tokio::test]
async fn exactly_once_rescales_only_at_a_cut() {
    let table = changes_table();
    let clean = audited_target("eo_rescale_clean").await;
    let db = audited_target("eo_rescale").await;
    let builder = |db: &TestDb| {
        SyncConfig::builder(&table, db)
            .delivery(Delivery::ExactlyOnce)
            .max_rows(10)
    };
    let clean_cfg = builder(&clean).build();
    // The sync with one slot, then two: configs sharing the checkpoint files.
    let dir = tempfile::tempdir().unwrap();
    let cfg = builder(&db).write_sharing(dir.path(), "one", "cp.json");
    let two = builder(&db)
        .parallelism(2)
        .write_sharing(dir.path(), "two", "cp.json");
    clean_cfg.sync_once(&[]);
    let out = run_with(
        &cfg,
        &[("PMS_FAILPOINT", "after-commit-before-checkpoint@2")],
    );
    assert!(!out.status.success(), "killed inside the full read");
    let audit = db.count("audit").await;
    for slot in ["0", "1"] {
        let out = two.run_once(&["--slot", slot]);
        assert!(!out.status.success());
        // Refused by the checkpoint files (a slot's full read is unfinished) before the
        // progress rows (not at a cut) are even looked at.
        assert!(
            stderr(&out).contains("while a slot's full read is unfinished"),
            "{}",
            stderr(&out)
        );
    }
    assert_eq!(db.count("audit").await, audit, "nothing written");
    // One slot finishes: every old slot is at the end of one snapshot.
    cfg.sync_once(&[]);
    table.commits(vec![
        generate_step(1, 40, 3, "+U", 7),
        generate(201, 20, "+I", 0),
    ]);
    clean_cfg.sync_once(&[]);
    let logs: Vec<String> = ["0", "1"]
        .map(|slot| {
            let out = two.run_once(&["--slot", slot]);
            assert!(out.status.success(), "{}", stderr(&out));
            stderr(&out)
        })
        .to_vec();
    assert!(
        logs.iter()
            .any(|l| l.contains("exactly-once rescale at a consistent cut")),
        "{logs:?}"
    );
    assert_synced(&table, &db, "orders", None).await;
    assert_eq!(
        db.count("audit").await,
        clean.count("audit").await,
        "each change applied once, across the rescale"
    );
}

/// Two workers of one slot with at-least-once delivery (a restarted pod whose old pod has not
/// died yet): the newer one takes the slot's lock over; the older one stops at its next
/// commit without committing it, and the newer one syncs on.
#[tokio::test]
async fn a_newer_worker_of_the_same_slot_fences_the_older_one() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 20, "+I", 0)]);
    let db = TestDb::new("fencing").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    let holder_sql = format!(
        "SELECT IS_USED_LOCK('pms:{}.orders:{}.{}:0')",
        db.name, t.database, t.name
    );
    let holder = || async { db.query_strings(&holder_sql).await[0][0].clone() };
    let wait_until = |what: &'static str| {
        let deadline = Instant::now() + Duration::from_secs(60);
        move |done: bool| {
            assert!(Instant::now() < deadline, "{what}");
            done
        }
    };
    let mut older = cfg.spawn(&[]);
    let waiting = wait_until("the older worker never took the slot and synced");
    while !waiting(holder().await.is_some() && db.count("orders").await == 20) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let older_holder = holder().await;
    let mut newer = cfg.spawn(&[]);
    let waiting = wait_until("the newer worker never took the slot over");
    while !waiting(holder().await.is_some_and(|h| Some(h) != older_holder)) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let end = t.commits(vec![generate(21, 10, "+I", 0)]);
    let status = wait_for_exit(&mut older, Duration::from_secs(60), || {
        format!("the older worker went on:\n{}", cfg.log())
    })
    .await;
    let log = cfg.log();
    assert!(
        !status.success() && log.contains("fenced: slot lock"),
        "{log}"
    );
    let waiting = wait_until("the newer worker did not sync the new snapshot");
    while !waiting(db.count("orders").await == 30) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(stop_with_sigterm(&mut newer).await.success());
    assert_synced(&t, &db, "orders", Some(end)).await;
}

/// Snapshots applied in passes over their keys, not as changes: an `INSERT OVERWRITE` (as a
/// partition expiry and a bucket rescale are too), and with `sequence.field` and no changelog
/// producer the keys a snapshot touched read again from Paimon's merge. They were refused with
/// exactly-once (a restart applied them again from their start), which a pooled database,
/// always exactly-once, runs into at its first expiry. Each flush now commits how many of the
/// passes' changes it holds; a crash at every point and a lost acknowledgement inside them end
/// exact, with the audit trail of a run that never crashed.
#[tokio::test]
async fn snapshots_applied_in_passes_are_exactly_once_across_crashes() {
    let late = |kind: &str, id: i64, second: u32| {
        json!({"kind": kind, "values": [
            id, format!("{id}.00"), "LATE", format!("2024-01-01 00:00:{second:02}.000")
        ]})
    };
    let overwrite: Vec<serde_json::Value> = (21..=60)
        .map(|id| json!({"kind": "+I", "values": order(id, "9.99", "REWRITTEN")}))
        .collect();
    let cases = [
        (
            "overwrite",
            json!({"bucket": "2", "changelog-producer": "input"}),
            json!({ "overwrite": overwrite }),
        ),
        (
            "refresh",
            json!({"bucket": "2", "sequence.field": "updated_at"}),
            json!({"rows": (1..=30).map(|id| late(if id % 3 == 0 { "-D" } else { "+U" }, id, 59)).collect::<Vec<_>>()}),
        ),
    ];
    for (name, options, step) in cases {
        let t = orders_table(options, false);
        t.commits(vec![generate(1, 40, "+I", 0)]);
        let config = |db: &TestDb| {
            SyncConfig::builder(&t, db)
                .max_rows(4)
                .max_rows_per_statement(1)
                .delivery(Delivery::ExactlyOnce)
                .checkpoint_interval(Duration::ZERO)
                .build()
        };
        let mut targets = Vec::new();
        for run in ["clean", "ack"]
            .into_iter()
            .chain(pms_worker::failpoint::POINTS.iter().copied())
        {
            let db = audited_target(&format!("passes_{name}_{}", run.replace('-', "_"))).await;
            assert!(run_with(&config(&db), &[]).status.success());
            targets.push((run, db));
        }
        let s = t.commits(vec![step.clone()]);
        let (_, clean_db) = &targets[0];
        let clean = run_with(&config(clean_db), &[]);
        assert!(clean.status.success(), "{}", stderr(&clean));
        assert_synced(&t, clean_db, "orders", Some(s)).await;
        let expected_audit = clean_db.count("audit").await;
        assert!(expected_audit > 60, "{name}: {expected_audit} audit rows");
        for (run, db) in &targets[1..] {
            let cfg = config(db);
            if *run == "ack" {
                let out = run_with(&cfg, &[("PMS_FAILPOINT", "commit-ack-lost@4")]);
                let log = stderr(&out);
                assert!(out.status.success(), "{name}: {log}");
                assert!(
                    log.contains("committed although its acknowledgement was lost"),
                    "{log}"
                );
            } else {
                let crashed = run_with(&cfg, &[("PMS_FAILPOINT", &format!("{run}@4"))]);
                let log = stderr(&crashed);
                assert!(!crashed.status.success(), "{name}/{run}: {log}");
                assert!(log.contains(&format!("failpoint {run} reached")), "{log}");
                let resumed = run_with(&cfg, &[]);
                assert!(
                    resumed.status.success(),
                    "{name}/{run}: {}",
                    stderr(&resumed)
                );
            }
            assert_synced(&t, db, "orders", Some(s)).await;
            assert_eq!(
                db.count("audit").await,
                expected_audit,
                "{name}/{run}: each change of the snapshot applied exactly once"
            );
        }
    }
}
