//! Taking over from the Flink job users run today (bench/flink's FlinkPeer in `--mode job`: a
//! Paimon source with `scan.mode = latest-full` and a `consumer-id`, a JDBC sink into MariaDB,
//! a checkpoint every second), as the guide's "Migrate from Flink" says: the job stopped with a
//! savepoint in the middle of a stream of commits, the worker started with
//! `source.startFrom.flinkConsumer` into the same live table. No full read, MySQL equal to
//! Paimon, the Flink consumer removed; refused while the job runs and for a consumer that
//! doesn't exist, before anything is written. Then the way back: a Flink job from the snapshot
//! after the sync's checkpoint.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use pms_tests::bench::flink::{self, FlinkJob};
use pms_tests::mysql::TestDb;
use pms_tests::paimon::Table;
use serde_json::json;

const CONSUMER: &str = "mysql-orders-v1";

/// Waits until MySQL holds what Paimon's latest snapshot does (the Flink job caught up).
async fn wait_until_flink_caught_up(t: &Table, db: &TestDb) {
    let reference = t.read(None);
    let columns = t.compare_columns();
    let deadline = Instant::now() + Duration::from_secs(180);
    while db.rows("orders", &columns, &t.primary_keys).await.len() != reference.len()
        || db.rows("orders", &columns, &t.primary_keys).await != reference
    {
        assert!(
            Instant::now() < deadline,
            "the Flink job did not catch up within 180 s"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_flink_job_is_taken_over_without_a_full_read_and_its_consumer_removed() {
    // Paimon refuses a consumer-id on a table without consumer.expiration-time.
    let t = orders_table(
        json!({"bucket": "2", "changelog-producer": "input", "consumer.expiration-time": "1 d"}),
        false,
    );
    t.commits(vec![generate(1, 300, "+I", 0)]);
    let db = TestDb::new("flink_takeover").await;
    db.exec(ORDERS_DDL).await;
    let job = FlinkJob::start(&t, db.port, &db.name, "orders", CONSUMER);
    wait_until_flink_caught_up(&t, &db).await;
    // Its consumer is written when a checkpoint completes after its first read.
    let deadline = Instant::now() + Duration::from_secs(60);
    let consumer = t.table_dir().join(format!("consumer/consumer-{CONSUMER}"));
    while !consumer.exists() {
        assert!(Instant::now() < deadline, "no Flink consumer after 60 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // While the job runs, its consumer moves at each checkpoint: the take-over is refused.
    let cfg = SyncConfig::builder(&t, &db)
        .start_from_flink(CONSUMER, "3s")
        .build();
    let running = cfg
        .command(&["--once"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    t.commits(vec![generate_step(1, 100, 3, "+U", 1)]);
    let out = running.wait_with_output().unwrap();
    let log = stderr(&out);
    assert!(!out.status.success(), "refused while Flink runs: {log}");
    assert!(log.contains("still running"), "{log}");
    assert!(!cfg.checkpoint_path(0, 1).exists(), "no checkpoint: {log}");

    // Commits, and at once the job stops with a savepoint (Flink may be inside them), then
    // more commits that only the worker will see.
    t.commits(vec![generate(301, 60, "+I", 0), generate(250, 20, "-D", 0)]);
    let savepoints = tempfile::tempdir().unwrap();
    let savepoint = job.stop_with_savepoint(savepoints.path());
    assert!(
        savepoint.contains(&savepoints.path().display().to_string()),
        "{savepoint}"
    );
    t.commits(vec![
        generate_step(2, 120, 5, "+U", 2),
        generate(361, 30, "+I", 0),
        generate(10, 15, "-D", 0),
    ]);

    // A consumer id that isn't the job's: refused, naming the ones there are.
    let wrong = SyncConfig::builder(&t, &db)
        .start_from_flink("mysql-orders-v2", "3s")
        .build();
    let out = wrong.command(&["--once"]).output().unwrap();
    let log = stderr(&out);
    assert!(!out.status.success(), "{log}");
    assert!(
        log.contains("mysql-orders-v2") && log.contains(CONSUMER),
        "{log}"
    );

    // The take-over: from the job's consumer (as Paimon Java reads it), into the live table,
    // no full read.
    let next = t.consumers()[CONSUMER];
    assert!(next > 1, "the job got past its first snapshot: {next}");
    let out = cfg.command(&["--once"]).output().unwrap();
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(
        !log.contains("full read of snapshot"),
        "no full read: {log}"
    );
    assert!(
        log.contains("took over from the Flink job") && log.contains(&format!("snapshot={next}")),
        "from snapshot {next}: {log}"
    );
    assert_synced(&t, &db, "orders", None).await;
    let consumers = t.consumer_files();
    assert!(
        !consumers.contains(&format!("consumer-{CONSUMER}")),
        "the Flink consumer is removed: {consumers:?}"
    );

    // And it goes on from its own checkpoint.
    t.commits(vec![
        generate_step(3, 90, 7, "+U", 3),
        generate(400, 10, "+I", 0),
    ]);
    let out = cfg.command(&["--once"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_synced(&t, &db, "orders", None).await;

    // The way back, as the guide says: a Flink job reading from the snapshot after the one the
    // sync's checkpoint names as applied, with more commits meanwhile, ends exact too.
    let text = std::fs::read_to_string(cfg.checkpoint_path(0, 1)).unwrap();
    let cp: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(
        cp["phase"] == "incremental" && cp["position"].is_null(),
        "a whole snapshot applied: {cp}"
    );
    let applied = cp["snapshotId"].as_i64().unwrap();
    t.commits(vec![
        generate_step(5, 60, 4, "+U", 4),
        generate(20, 10, "-D", 0),
    ]);
    let reference = t.read(None);
    let columns = t.compare_columns();
    let handle = tokio::runtime::Handle::current();
    tokio::task::block_in_place(|| {
        flink::incremental(&t, db.port, &db.name, "orders", 100, applied + 1, || {
            handle.block_on(db.rows("orders", &columns, &t.primary_keys)) == reference
        })
    });
    assert_synced(&t, &db, "orders", None).await;
}
