//! S3, against a real S3-protocol server (versitygw, `scripts/with-s3.sh`): a Paimon warehouse
//! on S3 (written by Paimon Java, uploaded) read whole and then snapshot by snapshot, with the
//! consumer file written there; checkpoints on S3 resumed from, and a zombie writer of a slot
//! fenced by a conditional write.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::*;
use pms_tests::config::SyncConfigBuilder;
use pms_tests::mysql::TestDb;
use pms_tests::s3;
use serde_json::json;

fn run_once(cfg: &SyncConfig) -> std::process::Output {
    cfg.command(&["--once"]).envs(s3::env()).output().unwrap()
}

#[tokio::test]
async fn a_warehouse_on_s3_is_read_whole_then_by_snapshot_and_holds_the_consumer() {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 500, "+I", 0)]);
    let prefix = format!("wh-{}", std::process::id());
    s3::upload_dir(t.warehouse(), &prefix);
    let db = TestDb::new("s3_warehouse").await;
    db.exec(ORDERS_DDL).await;
    let warehouse = format!("s3://{}/{prefix}", s3::BUCKET);
    let cfg = SyncConfigBuilder::new(warehouse, &t.database, &t.name, &db.url())
        .source_s3(s3::settings())
        .consumer_id("pms-s3-test")
        .build();
    let out = run_once(&cfg);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_synced(&t, &db, "orders", None).await;

    t.commits(vec![
        generate_step(1, 100, 3, "+U", 4),
        generate(401, 50, "-D", 0),
    ]);
    s3::upload_dir(t.warehouse(), &prefix);
    let out = run_once(&cfg);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("full read of snapshot"),
        "incremental: {}",
        stderr(&out)
    );
    assert_synced(&t, &db, "orders", None).await;

    let consumer = format!(
        "{prefix}/{}.db/{}/consumer/consumer-pms-s3-test",
        t.database, t.name
    );
    let body = s3::get(&consumer).expect("the consumer file on S3");
    assert!(
        body.contains(&format!("\"nextSnapshot\":{}", t.latest() + 1)),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_on_s3_resume_and_fence_a_zombie_writer() {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 300, "+I", 0)]);
    let db = TestDb::new("s3_checkpoint").await;
    db.exec(ORDERS_DDL).await;
    let prefix = format!("cp-{}", std::process::id());
    let mut settings = s3::settings();
    settings["bucket"] = json!(s3::BUCKET);
    settings["prefix"] = json!(prefix);
    let cfg = SyncConfig::builder(&t, &db)
        .checkpoint_s3(settings)
        .checkpoint_interval(Duration::ZERO)
        .build();
    let out = run_once(&cfg);
    assert!(out.status.success(), "{}", stderr(&out));
    let key = format!("{prefix}/{}.{}-checkpoint-0.json", t.database, t.name);
    let stored = s3::get(&key).expect("the checkpoint on S3");
    assert!(
        stored.contains(&format!("\"snapshotId\": {}", t.latest())),
        "{stored}"
    );
    assert!(
        !cfg.checkpoint_path(0, 1).exists(),
        "no local checkpoint file"
    );

    t.commits(vec![generate(301, 40, "+I", 0)]);
    let out = run_once(&cfg);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("full read of snapshot"),
        "resumed: {}",
        stderr(&out)
    );
    assert_synced(&t, &db, "orders", None).await;

    // A zombie: another writer replaces the slot's checkpoint behind a running worker's back;
    // the worker's next (conditional) write is refused, and it stops instead of overwriting it.
    let mut worker = cfg
        .command(&[])
        .envs(s3::env())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let newer = s3::get(&key)
        .unwrap()
        .replace("\"epoch\": ", "\"epoch\": 1000");
    s3::put(&key, &newer);
    t.commits(vec![generate(401, 10, "+I", 0)]);
    let status = wait_for_exit(&mut worker, Duration::from_secs(60), "the zombie must stop").await;
    let mut log = String::new();
    std::io::Read::read_to_string(worker.stderr.as_mut().unwrap(), &mut log).unwrap();
    assert!(!status.success(), "{log}");
    assert!(
        log.contains("another worker wrote this slot's checkpoint"),
        "{log}"
    );
    assert_eq!(s3::get(&key).unwrap(), newer, "the newer checkpoint stays");
}
