//! What a checkpoint belongs to (README "What a checkpoint belongs to"): a checkpoint of another
//! sync or table is refused with MySQL unchanged; another history (a rollback, a re-created
//! table, a failover, rows the target held before) ends with MySQL equal to the reference read.

mod common;

use std::time::{Duration, Instant};

use common::*;
use pms_tests::mysql::{OwnServer, TestDb};
use pms_tests::paimon::Table;
use serde_json::{json, Value as Json};

fn orders() -> Table {
    orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false)
}

/// A new database with the MySQL table `orders`.
async fn orders_db(test: &str) -> TestDb {
    let db = TestDb::new(test).await;
    db.exec(ORDERS_DDL).await;
    db
}

/// Runs `cfg` once: it must start over and end with MySQL equal to Paimon.
async fn runs_starting_over_to_exact(cfg: &SyncConfig, t: &Table, db: &TestDb) {
    let again = cfg.run_once(&[]);
    let log = stderr(&again);
    assert!(again.status.success(), "{log}");
    assert_synced(t, db, "orders", None).await;
    assert!(log.contains("starting over"), "{log}");
}

/// `pms-worker reset` with this config.
fn reset(cfg: &SyncConfig) {
    let out = cfg.subcommand("reset", &[]).output().expect("run reset");
    assert!(out.status.success(), "reset: {}", stderr(&out));
}

fn checkpoint(cfg: &SyncConfig) -> Json {
    serde_json::from_slice(&std::fs::read(cfg.checkpoint_path(0, 1)).expect("checkpoint file"))
        .expect("checkpoint JSON")
}

/// A refused run: exit non-zero, and its log says each of `says`.
fn refused(out: &std::process::Output, says: &[&str]) {
    let log = stderr(out);
    assert!(!out.status.success(), "must be refused: {log}");
    for s in says {
        assert!(log.contains(s), "the refusal says {s:?}: {log}");
    }
}

/// Rows Paimon never had, and a key it has with other values.
const FOREIGN_ROWS: &str = "INSERT INTO {t} (id, amount, status) VALUES (900001, 1, 'foreign'), \
                            (900002, 2, 'foreign'), (5, 9, 'stale')";

/// A copied config pointed at another MySQL table, sharing the first one's checkpoint file,
/// can't be told from a sync moved there: refused before anything is written. After `reset`,
/// the moved sync's first run fills its table exactly, removing the rows Paimon doesn't have.
#[tokio::test]
async fn a_copied_config_into_another_table_is_refused_until_reset() {
    let t = orders();
    t.commits(vec![generate(1, 300, "+I", 0)]);
    let db = orders_db("copied").await;
    db.exec(&ORDERS_DDL.replace("TABLE orders", "TABLE orders_b"))
        .await;
    db.exec(&FOREIGN_ROWS.replace("{t}", "orders_b")).await;
    let dir = tempfile::tempdir().unwrap();
    let a = SyncConfig::builder(&t, &db).write_sharing(dir.path(), "a", "shared.json");
    let b = SyncConfig::builder(&t, &db)
        .target_table("orders_b")
        .write_sharing(dir.path(), "b", "shared.json");
    a.sync_once(&[]);
    t.commits(vec![generate_step(1, 40, 3, "-D", 0)]);
    refused(
        &b.run_once(&[]),
        &["MySQL table", ".orders,", ".orders_b;", "pms-worker reset"],
    );
    assert_eq!(db.count("orders_b").await, 3, "nothing written");
    reset(&b);
    b.sync_once(&[]);
    assert_synced(&t, &db, "orders_b", None).await;
}

/// Another sync (another name), or a config reading another Paimon table, on the same
/// checkpoint: refused, naming both sides.
#[tokio::test]
async fn another_sync_or_another_paimon_table_on_a_checkpoint_is_refused() {
    let t = orders();
    t.commits(vec![generate(1, 100, "+I", 0)]);
    let other = orders();
    other.commits(vec![generate(1, 50, "+I", 1)]);
    let db = orders_db("foreign_cp").await;
    let dir = tempfile::tempdir().unwrap();
    let a = SyncConfig::builder(&t, &db).write_sharing(dir.path(), "a", "shared.json");
    a.sync_once(&[]);
    let before = checkpoint(&a);
    let renamed = a
        .command(&["--once"])
        .env("PMS_SYNC_NAME", "another-sync")
        .output()
        .unwrap();
    refused(
        &renamed,
        &["written by the sync \"db.t\"", "\"another-sync\""],
    );
    let b = SyncConfig::builder(&other, &db).write_sharing(dir.path(), "b", "shared.json");
    let wh = |t: &Table| t.warehouse().display().to_string();
    refused(
        &b.run_once(&[]),
        &["Paimon table db.t in", &wh(&t), &wh(&other)],
    );
    assert_eq!(
        checkpoint(&a),
        before,
        "a refused run leaves the checkpoint as it was"
    );
    assert_synced(&t, &db, "orders", None).await;
}

/// Two syncs (two names, each its own checkpoint) into one MySQL table: the second is refused
/// before it writes, naming both; once the first is reset (its claim released), the second
/// takes the table over exactly.
#[tokio::test]
async fn a_second_sync_into_a_claimed_table_is_refused_until_the_first_is_reset() {
    let t = orders();
    t.commits(vec![generate(1, 200, "+I", 0)]);
    let other = orders();
    other.commits(vec![generate(1000, 50, "+I", 1)]);
    let db = orders_db("claimed").await;
    let dir = tempfile::tempdir().unwrap();
    let first = SyncConfig::builder(&t, &db).write_sharing(dir.path(), "first", "first.json");
    first.sync_once(&[]);
    let second =
        SyncConfig::builder(&other, &db).write_sharing(dir.path(), "second", "second.json");
    let out = second
        .command(&["--once"])
        .env("PMS_SYNC_NAME", "second")
        .output()
        .unwrap();
    refused(
        &out,
        &[
            "written by the sync \"db.t\"",
            "\"second\"",
            "pms-worker reset",
        ],
    );
    assert_synced(&t, &db, "orders", None).await;
    reset(&first);
    let out = second
        .command(&["--once"])
        .env("PMS_SYNC_NAME", "second")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_synced(&other, &db, "orders", None).await;
}

/// Two syncs of one Paimon table given the same `source.consumerId`: the second is refused
/// before it writes, naming both (one consumer moved by two syncs lets snapshots expire under
/// the one that lags).
#[tokio::test]
async fn a_second_sync_on_a_claimed_consumer_is_refused() {
    let t = orders();
    t.commits(vec![generate(1, 100, "+I", 0)]);
    let db = orders_db("consumer_claim").await;
    db.exec(&ORDERS_DDL.replace("TABLE orders", "TABLE orders_b"))
        .await;
    let dir = tempfile::tempdir().unwrap();
    let first = SyncConfig::builder(&t, &db)
        .consumer_id("shared")
        .write_sharing(dir.path(), "first", "first.json");
    first.sync_once(&[]);
    let second = SyncConfig::builder(&t, &db)
        .consumer_id("shared")
        .target_table("orders_b")
        .write_sharing(dir.path(), "second", "second.json");
    let out = second
        .command(&["--once"])
        .env("PMS_SYNC_NAME", "second")
        .output()
        .unwrap();
    refused(
        &out,
        &[
            "consumer \"shared\" is moved by the sync \"db.t\"",
            "\"second\"",
        ],
    );
    assert_eq!(db.count("orders_b").await, 0, "nothing written");
}

/// A first start into a table holding rows (a migration from another pipeline), and a start
/// after the checkpoint was lost: the full read ends by removing the rows Paimon doesn't have.
#[tokio::test]
async fn a_start_without_a_checkpoint_into_a_filled_table_ends_exact() {
    let t = orders();
    t.commits(vec![generate(1, 300, "+I", 0)]);
    let db = orders_db("filled").await;
    db.exec(&FOREIGN_ROWS.replace("{t}", "orders")).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    let first = cfg.run_once(&[]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(stderr(&first).contains("removed the rows the snapshot doesn't have"));
    assert_synced(&t, &db, "orders", None).await;
    // The checkpoint is lost; meanwhile keys are deleted in Paimon.
    t.commits(vec![generate_step(2, 60, 4, "-D", 0)]);
    std::fs::remove_file(cfg.checkpoint_path(0, 1)).unwrap();
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
}

/// `rollback_to` between two runs, then new commits that take the rolled-back ids again:
/// the second run sees another history and starts over, exactly (both deliveries).
#[tokio::test]
async fn a_rollback_between_runs_is_followed_exactly() {
    for delivery in [Delivery::AtLeastOnce, Delivery::ExactlyOnce] {
        let t = orders();
        t.commits(vec![generate(1, 300, "+I", 0)]);
        let kept = t.latest();
        t.commits(vec![
            generate_step(1, 50, 2, "+U", 1),
            generate_step(3, 40, 5, "-D", 0),
        ]);
        let db = TestDb::new("rollback").await;
        db.exec(ORDERS_DDL).await;
        let cfg = SyncConfig::builder(&t, &db).delivery(delivery).build();
        cfg.sync_once(&[]);
        let applied = t.latest();
        t.rollback_to(kept);
        t.commits(vec![
            generate_step(2, 30, 7, "-D", 0),
            generate(5000, 20, "+I", 3),
            generate_step(4, 30, 3, "+U", 9),
        ]);
        assert!(t.latest() > applied, "the new history reuses the ids");
        let again = cfg.run_once(&[]);
        assert!(again.status.success(), "{}", stderr(&again));
        assert!(
            stderr(&again).contains("rolled back"),
            "{delivery:?}: {}",
            stderr(&again)
        );
        assert_synced(&t, &db, "orders", None).await;
    }
}

/// A running worker waiting for the next snapshot: the table is rolled back and written past
/// where the worker was; it notices and starts over, exactly.
#[tokio::test]
async fn a_rollback_while_running_is_followed_exactly() {
    let t = orders();
    t.commits(vec![generate(1, 300, "+I", 0)]);
    let kept = t.latest();
    t.commits(vec![generate_step(1, 60, 2, "-D", 0)]);
    let db = orders_db("rollback_live").await;
    let cfg = SyncConfig::builder(&t, &db)
        .checkpoint_interval(Duration::ZERO)
        .build();
    let mut child = cfg.spawn(&[]);
    wait_for_checkpoint_at(&cfg, t.latest()).await;
    t.rollback_to(kept);
    t.commits(vec![
        generate_step(2, 40, 3, "+U", 4),
        generate(7000, 30, "+I", 2),
        generate_step(5, 20, 9, "-D", 0),
    ]);
    wait_for_checkpoint_at(&cfg, t.latest()).await;
    let status = stop_with_sigterm(&mut child).await;
    assert!(status.success());
    assert!(cfg.log().contains("rolled back"), "{}", cfg.log());
    assert_synced(&t, &db, "orders", None).await;
}

/// A Paimon table dropped and created again under the same name, with more snapshots than
/// the checkpoint's, then with fewer: each time the next run starts over, exactly.
#[tokio::test]
async fn a_table_dropped_and_created_again_is_followed_exactly() {
    let options = json!({"bucket": "2", "changelog-producer": "input"});
    let t = orders_table(options.clone(), false);
    t.commits(vec![
        generate(1, 200, "+I", 0),
        generate_step(1, 20, 3, "+U", 1),
    ]);
    let db = orders_db("recreated").await;
    let cfg = SyncConfig::builder(&t, &db).build();
    cfg.sync_once(&[]);
    t.drop_and_create(orders_create(options.clone(), false));
    t.commits(vec![
        generate(100, 150, "+I", 5),
        generate_step(100, 30, 2, "+U", 6),
        generate_step(101, 30, 4, "-D", 0),
        generate(1, 10, "+I", 7),
    ]);
    let again = cfg.run_once(&[]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(stderr(&again).contains("dropped and created again"));
    assert_synced(&t, &db, "orders", None).await;
    t.drop_and_create(orders_create(options, false));
    t.commits(vec![generate(40, 25, "+I", 8)]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
}

/// `--stop-at-snapshot S` from a checkpoint inside snapshot S+1: refused (part of S+1 is
/// applied, so no cut at S can be reported).
#[tokio::test]
async fn stop_at_a_snapshot_the_slot_is_past_inside_is_refused() {
    let t = orders();
    t.commits(vec![generate(1, 100, "+I", 0)]);
    let db = orders_db("stop_mid").await;
    let cfg = SyncConfig::builder(&t, &db).build();
    cfg.sync_once(&[]);
    let cut = t.latest();
    t.commits(vec![generate_step(1, 30, 2, "+U", 1)]);
    let mut cp = checkpoint(&cfg);
    cp["snapshotId"] = json!(cut + 1);
    cp["position"] = json!({"split": 0, "row": 1});
    std::fs::write(cfg.checkpoint_path(0, 1), cp.to_string()).unwrap();
    refused(
        &cfg.run_once(&["--stop-at-snapshot", &cut.to_string()]),
        &[&format!("snapshot {} partly applied", cut + 1)],
    );
}

/// A failover to a replica that lags: MariaDB primary and replica (async replication on
/// loopback), the replica's SQL thread held back while the sync writes the last changes to
/// the primary, then the replica promoted and `sink.url` switched to it while Paimon commits.
/// At-least-once sees another server and starts over; exactly-once resumes from its progress
/// row, which lags with the data. Both end exact.
#[tokio::test]
async fn a_failover_to_a_lagging_replica_ends_exact() {
    for delivery in [Delivery::AtLeastOnce, Delivery::ExactlyOnce] {
        let (primary, replica, replica_admin) = primary_and_replica().await;
        let db = orders_db_on(primary.port, "failover").await;
        let t = orders();
        t.commits(vec![generate(1, 400, "+I", 0)]);
        let dir = tempfile::tempdir().unwrap();
        let on_primary = SyncConfig::builder(&t, &db)
            .delivery(delivery)
            .write_sharing(dir.path(), "primary", "cp.json");
        on_primary.sync_once(&[]);
        let on_replica_db = TestDb::attach(replica.port, &db.name);
        wait_for_rows(&on_replica_db, db.count("orders").await).await;
        // The replica stops applying; the sync writes more to the primary.
        replica_admin.exec("STOP SLAVE SQL_THREAD").await;
        t.commits(vec![
            generate_step(1, 100, 3, "+U", 2),
            generate_step(2, 80, 5, "-D", 0),
            generate(9000, 50, "+I", 4),
        ]);
        on_primary.sync_once(&[]);
        // Failover: the replica, without those changes, becomes the target.
        replica_admin.exec("STOP SLAVE").await;
        replica_admin.exec("RESET SLAVE ALL").await;
        let on_replica = SyncConfig::builder(&t, &db)
            .sink_url(&on_replica_db.url())
            .delivery(delivery)
            .write_sharing(dir.path(), "replica", "cp.json");
        t.commits(vec![generate_step(3, 60, 7, "+U", 5)]);
        let after = on_replica.run_once(&[]);
        assert!(after.status.success(), "{delivery:?}: {}", stderr(&after));
        if delivery == Delivery::AtLeastOnce {
            assert!(
                stderr(&after).contains("is another one"),
                "{}",
                stderr(&after)
            );
        }
        assert_synced(&t, &on_replica_db, "orders", None).await;
    }
}

async fn wait_for_rows(db: &TestDb, rows: i64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while db.count("orders").await != rows {
        assert!(Instant::now() < deadline, "the replica did not catch up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A failover behind one address while a worker runs: its connections go through a proxy
/// that is switched from the primary to the promoted, lagging replica. The worker stops,
/// naming the failover whichever check meets it first (the server's identity before a
/// checkpoint, the slot lock gone with the old server, or, exactly-once, the progress row the
/// replica holds at an older position), never as another worker of the slot. At-least-once,
/// the next start starts over; exactly-once, it resumes from the replica's progress row, which
/// moved with its rows. Both end exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failover_behind_the_same_address_stops_a_running_worker_and_the_restart_ends_exact() {
    for delivery in [Delivery::AtLeastOnce, Delivery::ExactlyOnce] {
        let (primary, replica, replica_admin) = primary_and_replica().await;
        let proxy = SwitchingProxy::start(primary.port).await;
        let db = orders_db_on(primary.port, "failover_live").await;
        let t = orders();
        t.commits(vec![generate(1, 300, "+I", 0)]);
        let url = format!("mysql://pms:pms@127.0.0.1:{}/{}", proxy.port, db.name);
        let cfg = SyncConfig::builder_for_url(&t, &url)
            .checkpoint_interval(Duration::ZERO)
            .delivery(delivery)
            .build();
        let mut worker = cfg.spawn(&[]);
        wait_for_checkpoint_at(&cfg, t.latest()).await;
        let on_replica = TestDb::attach(replica.port, &db.name);
        wait_for_rows(&on_replica, db.count("orders").await).await;
        replica_admin.exec("STOP SLAVE SQL_THREAD").await;
        t.commits(vec![
            generate_step(1, 90, 3, "+U", 2),
            generate_step(2, 60, 5, "-D", 0),
        ]);
        wait_for_checkpoint_at(&cfg, t.latest()).await;
        replica_admin.exec("STOP SLAVE").await;
        replica_admin.exec("RESET SLAVE ALL").await;
        proxy.switch_to(replica.port);
        t.commits(vec![generate(7000, 20, "+I", 3)]);
        let status = wait_for_exit(&mut worker, Duration::from_secs(60), || {
            format!("{delivery:?}: the worker must stop:\n{}", cfg.log())
        })
        .await;
        let log = cfg.log();
        assert!(!status.success(), "{delivery:?}: {log}");
        assert!(
            log.contains("a failover")
                && !log.contains("took the slot over")
                && !log.contains("took it over"),
            "{delivery:?}: {log}"
        );
        let again = cfg.run_once(&[]);
        let restart = stderr(&again);
        assert!(again.status.success(), "{delivery:?}: {restart}");
        if delivery == Delivery::AtLeastOnce {
            assert!(restart.contains("is another one"), "{restart}");
        }
        assert_synced(&t, &on_replica, "orders", None).await;
    }
}

/// A MariaDB primary (binary log on) and a replica applying it from its current position; the
/// replica's admin connection. The replica starts first, as a standby running before the
/// primary's last restart would: a worker switched to it can't take it for its own server
/// restarted (which re-takes the slot lock), and meets the slot lock's fence.
async fn primary_and_replica() -> (OwnServer, OwnServer, TestDb) {
    let replica = OwnServer::start(&["--server-id=2"]);
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let primary = OwnServer::start(&["--server-id=1", "--log-bin=pms-bin", "--binlog-format=ROW"]);
    let status = TestDb::attach(primary.port, "mysql")
        .query_strings("SHOW MASTER STATUS")
        .await;
    let (file, pos) = (
        status[0][0].clone().expect("binlog file"),
        status[0][1].clone().expect("binlog position"),
    );
    let replica_admin = TestDb::attach(replica.port, "mysql");
    replica_admin
        .exec(&format!(
            "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='pms', \
             MASTER_PASSWORD='pms', MASTER_LOG_FILE='{file}', MASTER_LOG_POS={pos}",
            primary.port
        ))
        .await;
    replica_admin.exec("START SLAVE").await;
    (primary, replica, replica_admin)
}

/// A new database with the MySQL table `orders` on the server at `port`.
async fn orders_db_on(port: u16, test: &str) -> TestDb {
    let db = TestDb::on(port, test).await;
    db.exec(ORDERS_DDL).await;
    db
}

/// A TCP proxy on loopback whose upstream can be switched: one address, another server behind
/// it (what a DNS or VIP failover looks like to a client). A switch ends every open connection.
struct SwitchingProxy {
    port: u16,
    /// The upstream port and how many switches there were, read together: a connection
    /// opened at a switch must not reach the new server and count as opened before it.
    upstream: std::sync::Arc<std::sync::Mutex<(u16, u64)>>,
}

impl SwitchingProxy {
    async fn start(upstream: u16) -> Self {
        use std::sync::{Arc, Mutex};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = Arc::new(Mutex::new((upstream, 0u64)));
        let up2 = up.clone();
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let up = up2.clone();
                tokio::spawn(async move {
                    let (port, opened_at) = *up.lock().unwrap();
                    let Ok(mut server) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await
                    else {
                        return;
                    };
                    let switched = async {
                        while up.lock().unwrap().1 == opened_at {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = switched => {}
                    }
                });
            }
        });
        Self { port, upstream: up }
    }

    fn switch_to(&self, port: u16) {
        let mut up = self.upstream.lock().unwrap();
        *up = (port, up.1 + 1);
    }
}

/// A full read interrupted, then its snapshot gone (its consumer expired, the snapshot with it)
/// while keys it had written were deleted: the next start reads the latest snapshot in full
/// and removes what that doesn't have.
#[tokio::test]
async fn a_full_read_whose_snapshot_is_gone_starts_again_and_ends_exact() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 300, "+I", 0)]);
    let db = orders_db("full_read_gone").await;
    let cfg = SyncConfig::builder(&t, &db).max_rows(50).build();
    let crashed = cfg
        .command(&["--once"])
        .env("PMS_FAILPOINT", "before-transaction@4")
        .output()
        .unwrap();
    assert!(!crashed.status.success(), "{}", stderr(&crashed));
    assert_eq!(checkpoint(&cfg)["phase"], "full");
    assert!(
        db.count("orders").await > 0,
        "part of the full read is written"
    );
    t.commits(vec![
        generate_step(1, 100, 3, "-D", 0),
        generate(1000, 10, "+I", 1),
    ]);
    // The consumer expired (`consumer.expiration-time`): nothing pins the snapshot any more.
    std::fs::remove_file(t.table_dir().join("consumer/consumer-pms-db-t")).unwrap();
    t.expire(1);
    let again = cfg.run_once(&[]);
    let log = stderr(&again);
    assert!(again.status.success(), "{log}");
    assert!(
        log.contains("removed the rows the snapshot doesn't have"),
        "{log}"
    );
    assert_synced(&t, &db, "orders", None).await;
}

/// With several slots a start-over can't be done in place (each slot's full read would be of
/// another snapshot): refused with MySQL unchanged, and the way out, a rebuild, ends exact.
#[tokio::test]
async fn with_several_slots_a_rollback_is_refused_and_a_rebuild_ends_exact() {
    let t = orders();
    t.commits(vec![generate(1, 200, "+I", 0)]);
    let kept = t.latest();
    t.commits(vec![generate_step(1, 30, 2, "+U", 1)]);
    let db = orders_db("rollback_slots").await;
    let cfg = SyncConfig::builder(&t, &db).parallelism(2).build();
    for slot in ["0", "1"] {
        cfg.sync_once(&["--slot", slot]);
    }
    t.rollback_to(kept);
    t.commits(vec![
        generate_step(2, 30, 3, "-D", 0),
        generate(900, 10, "+I", 2),
    ]);
    let before = db.count("orders").await;
    refused(
        &cfg.run_once(&["--slot", "0"]),
        &[
            "rolled back",
            "can't start over in place",
            "pms-worker rebuild",
        ],
    );
    assert_eq!(db.count("orders").await, before, "nothing written");
    let rebuilt = cfg.rebuild(None);
    assert!(rebuilt.status.success(), "{}", stderr(&rebuilt));
    assert_synced(&t, &db, "orders", None).await;
}

/// A slot whose checkpoint was lost (a deleted file, a ConfigMap made again empty, an S3 object
/// gone) while its Paimon consumer says it applied changes (issue 44, item 6): it used to start
/// afresh, keeping the keys deleted meanwhile (`latest-full`) or skipping the changes since its
/// last checkpoint (`latest`). One slot starts over and ends exact, under either scan mode;
/// with several slots the slot that lost it is refused (`rebuildRequired`), writing nothing.
#[tokio::test]
async fn a_slot_whose_checkpoint_was_lost_starts_over_or_is_refused() {
    for mode in [ScanMode::LatestFull, ScanMode::Latest] {
        let t = orders();
        let db = orders_db(&format!("lost_checkpoint_{mode:?}").to_lowercase()).await;
        let cfg = SyncConfig::builder(&t, &db).scan_mode(mode).build();
        // Started before the first commit: `latest` follows every snapshot too.
        cfg.sync_once(&[]);
        t.commits(vec![generate(1, 100, "+I", 0)]);
        cfg.sync_once(&[]);
        t.commits(vec![generate_step(2, 20, 4, "-D", 0)]);
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "orders", None).await;
        t.commits(vec![
            generate_step(3, 20, 4, "-D", 0),
            generate(1, 10, "+U", 4),
        ]);
        std::fs::remove_file(cfg.checkpoint_path(0, 1)).unwrap();
        let out = cfg.run_once(&[]);
        let log = stderr(&out);
        assert!(out.status.success(), "{mode:?}: {log}");
        assert_synced(&t, &db, "orders", None).await;
        assert!(
            log.contains("checkpoint") && log.contains("is gone") && log.contains("starting over"),
            "{mode:?}: {log}"
        );
    }
    let t = orders();
    t.commits(vec![generate(1, 100, "+I", 0)]);
    let db = orders_db("lost_checkpoint_slots").await;
    let cfg = SyncConfig::builder(&t, &db).parallelism(2).build();
    for slot in ["0", "1"] {
        cfg.sync_once(&["--slot", slot]);
    }
    t.commits(vec![generate_step(2, 20, 4, "-D", 0)]);
    std::fs::remove_file(cfg.checkpoint_path(1, 2)).unwrap();
    let before = db.count("orders").await;
    let out = cfg.run_once(&["--slot", "1"]);
    let log = stderr(&out);
    assert!(!out.status.success(), "{log}");
    assert!(log.contains("is gone") && log.contains("rebuild"), "{log}");
    assert_eq!(db.count("orders").await, before, "nothing written");
}

/// At-least-once, a crash in the middle of snapshot S (its checkpoint inside S), then
/// `rollback_to` S - 1 and another commit that takes the id S again (issue 44, item 5): the
/// snapshot before is the same, but the rows of the lost S already in MySQL are another
/// history's. The checkpoint names S's identity, so the restart starts over and ends exact
/// (it used to read the new S from its start and keep the lost one's rows).
#[tokio::test]
async fn a_rollback_into_a_partly_applied_snapshot_is_followed_exactly() {
    let t = orders();
    t.commits(vec![generate(1, 100, "+I", 0)]);
    let kept = t.latest();
    let db = orders_db("rollback_partly_applied").await;
    let cfg = SyncConfig::builder(&t, &db)
        .max_rows(10)
        .checkpoint_interval(Duration::ZERO)
        .build();
    cfg.sync_once(&[]);
    t.commits(vec![generate(1000, 100, "+I", 0)]);
    let crashed = cfg
        .command(&["--once"])
        .env("PMS_FAILPOINT", "before-transaction@5")
        .output()
        .unwrap();
    assert!(!crashed.status.success(), "{}", stderr(&crashed));
    let cp = checkpoint(&cfg);
    assert!(
        cp["snapshotId"] == kept + 1 && cp.get("position").is_some(),
        "the checkpoint is inside the snapshot after {kept}: {cp}"
    );
    assert!(db.count("orders").await > 100, "part of it is in MySQL");
    t.rollback_to(kept);
    t.commits(vec![generate(1, 10, "+U", 3)]);
    assert_eq!(t.latest(), kept + 1, "the new commit takes the id again");
    runs_starting_over_to_exact(&cfg, &t, &db).await;
}

/// A start-over's sweep overtaken by a newer owner of the slot (issue 44, item 2): process A
/// (exactly-once) ends its full read into a table with rows the snapshot lacks and has found
/// them, then pauses before deleting; a key among them is committed to Paimon; process B of the
/// same slot resumes from the progress row, sweeps, and applies that commit. When A goes on, its
/// delete of the key would set MySQL back: it is fenced by the progress row's epoch and stops,
/// writing nothing, and MySQL stays equal to Paimon.
#[tokio::test]
async fn a_sweep_overtaken_by_a_newer_owner_of_the_slot_is_fenced() {
    let t = orders();
    t.commits(vec![generate(1, 50, "+I", 0)]);
    let db = orders_db("sweep_overtaken").await;
    db.exec(&FOREIGN_ROWS.replace("{t}", "orders")).await;
    let cfg = SyncConfig::builder(&t, &db)
        .delivery(Delivery::ExactlyOnce)
        .build();
    let release = tempfile::NamedTempFile::new().unwrap().into_temp_path();
    let release_path = release.to_path_buf();
    drop(release);
    let mut a = cfg.start(
        cfg.command(&["--once"])
            .env("PMS_FAILPOINT", "before-repair-write")
            .env("PMS_FAILPOINT_RELEASE", &release_path),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cfg.log().contains("failpoint before-repair-write reached") {
        assert!(
            Instant::now() < deadline,
            "A never reached its sweep: {}",
            cfg.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let s = t.commit(&[("+I", order(900001, "1.00", "NEW"))]);
    let b = cfg.run_once(&[]);
    assert!(b.status.success(), "{}", stderr(&b));
    assert_synced(&t, &db, "orders", Some(s)).await;
    std::fs::write(&release_path, b"go").unwrap();
    let a_exit = wait_for_exit(&mut a, Duration::from_secs(60), || cfg.log()).await;
    assert!(!a_exit.success(), "A is fenced: {}", cfg.log());
    assert!(cfg.log().contains("fenced"), "{}", cfg.log());
    assert_synced(&t, &db, "orders", Some(s)).await;
}

/// A rollback past expiry (issue 44, item 4): the sync applied snapshot S and stopped; the
/// table was rolled back to before S, written again past S, and expired down to what the
/// slot's consumer protects. The consumer protected S + 1 only, so the new history's S expired
/// and the checkpoint's identity could not be checked: the sync went on in the new history with
/// the rows only the old one wrote. It now protects S itself, whose new commit is seen: start
/// over, exact.
#[tokio::test]
async fn a_rollback_past_expiry_is_seen() {
    let t = orders();
    t.commits(vec![generate(1, 10, "+I", 0)]);
    let kept = t.latest();
    t.commits(vec![generate(100, 10, "+I", 0), generate(200, 10, "+I", 0)]);
    let db = orders_db("rollback_past_expiry").await;
    let cfg = SyncConfig::builder(&t, &db).build();
    cfg.sync_once(&[]);
    let applied = t.latest();
    t.rollback_to(kept);
    t.commits(vec![
        generate(1, 5, "+U", 3),
        generate(300, 5, "+I", 0),
        generate(400, 5, "+I", 0),
    ]);
    assert!(t.latest() > applied, "the new history is past S");
    t.expire(1);
    runs_starting_over_to_exact(&cfg, &t, &db).await;
}

/// A sync deleted and made again under its name into another MySQL table (its checkpoints went
/// with it; its Paimon consumers, claimed under the name, stay) is a first start there, not a
/// lost checkpoint: with two slots it used to be refused (the operator e2e's S3 sync).
#[tokio::test]
async fn a_sync_made_again_under_its_name_into_another_table_is_a_first_start() {
    let t = orders();
    t.commits(vec![generate(1, 100, "+I", 0)]);
    let db = orders_db("made_again").await;
    let first = SyncConfig::builder(&t, &db).parallelism(2).build();
    for slot in ["0", "1"] {
        first.sync_once(&["--slot", slot]);
    }
    db.exec(&ORDERS_DDL.replace("TABLE orders", "TABLE orders_again"))
        .await;
    let again = SyncConfig::builder(&t, &db)
        .parallelism(2)
        .target_table("orders_again")
        .build();
    t.commits(vec![generate_step(2, 20, 4, "-D", 0)]);
    for slot in ["0", "1"] {
        again.sync_once(&["--slot", slot]);
    }
    assert_synced(&t, &db, "orders_again", None).await;
}

/// The warehouse named another way (`file:///wh/` for `/wh`; alike, `hdfs:///wh` for
/// `hdfs://nn:8020/wh` or `s3://b/wh/` for `s3://b/wh`) or reached through another mount
/// point: the same Paimon table (its first schema written at the same millisecond), so the
/// checkpoint is resumed, neither refused as another table's nor started over.
#[tokio::test]
async fn a_warehouse_named_another_way_is_the_same_table() {
    let t = orders();
    t.commits(vec![generate(1, 50, "+I", 0)]);
    let db = orders_db("warehouse_named_otherwise").await;
    let dir = tempfile::tempdir().unwrap();
    SyncConfig::builder(&t, &db)
        .write_sharing(dir.path(), "a", "shared.json")
        .sync_once(&[]);
    let mount = dir.path().join("another-mount");
    std::os::unix::fs::symlink(t.warehouse(), &mount).unwrap();
    let path = t.warehouse().display().to_string();
    for (n, warehouse) in [format!("file://{path}/"), mount.display().to_string()]
        .into_iter()
        .enumerate()
    {
        let s = t.commits(vec![
            generate(100 + 10 * n as i64, 5, "+I", 0),
            generate(2 + n as i64, 1, "-D", 0),
        ]);
        let cfg = pms_tests::config::SyncConfigBuilder::new(
            warehouse.clone(),
            &t.database,
            &t.name,
            &db.url(),
        )
        .write_sharing(dir.path(), &format!("b{n}"), "shared.json");
        let out = cfg.run_once(&[]);
        let log = stderr(&out);
        assert!(out.status.success(), "{warehouse}: {log}");
        assert!(!log.contains("starting over"), "{warehouse}: {log}");
        assert_synced(&t, &db, "orders", Some(s)).await;
    }
}
