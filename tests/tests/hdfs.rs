//! HDFS, against a real one (Hadoop's MiniDFSCluster, `scripts/with-hdfs.sh`): a warehouse
//! written there by Paimon Java, read whole and then snapshot by snapshot, the consumer file
//! written there (read back by Paimon Java), `verify` reading it; and `hdfs:///path`, whose
//! namenode comes from the Hadoop configuration (`fs.defaultFS`).

mod common;

use common::*;
use pms_tests::config::SyncConfigBuilder;
use pms_tests::mysql::TestDb;
use pms_tests::paimon::Table;
use serde_json::json;

/// The test HDFS (`hdfs://127.0.0.1:PORT`).
fn hdfs() -> String {
    std::env::var("PMS_TEST_HDFS").expect(
        "PMS_TEST_HDFS is not set: run the tests under scripts/with-hdfs.sh (make test does), which starts an HDFS",
    )
}

fn orders_on_hdfs(name: &str) -> Table {
    let uri = format!("{}/{name}-{}", hdfs(), std::process::id());
    Table::create_in(
        &uri,
        orders_create(json!({"bucket": "2", "changelog-producer": "input"}), false),
    )
}

#[tokio::test]
async fn a_warehouse_on_hdfs_is_read_whole_then_by_snapshot_and_holds_the_consumer() {
    let t = orders_on_hdfs("wh");
    t.commits(vec![generate(1, 300, "+I", 0)]);
    let db = TestDb::new("hdfs").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).consumer_id("pms-hdfs").build();
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    let latest = t.commits(vec![generate(1, 100, "+U", 3), generate(201, 50, "-D", 0)]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    cfg.assert_verified();
    let consumers = t.consumers();
    assert_eq!(
        consumers.values().copied().max(),
        Some(latest),
        "Paimon Java reads the consumer file the worker wrote on HDFS (keeping the applied snapshot on): {consumers:?}"
    );
}

/// `hdfs:///path`: the namenode is `fs.defaultFS` of `$HADOOP_CONF_DIR/core-site.xml`; without
/// one the start fails naming what to set, before anything is written.
#[tokio::test]
async fn an_hdfs_warehouse_without_a_namenode_takes_the_default_file_system() {
    let t = orders_on_hdfs("default_fs");
    t.commits(vec![generate(1, 50, "+I", 0)]);
    let path = t
        .warehouse_location()
        .strip_prefix(&hdfs())
        .expect("the warehouse is on the test HDFS")
        .to_string();
    let db = TestDb::new("hdfs_default_fs").await;
    db.exec(ORDERS_DDL).await;
    let cfg =
        SyncConfigBuilder::new(format!("hdfs://{path}"), &t.database, &t.name, &db.url()).build();
    let conf = tempfile::tempdir().unwrap();
    let out = cfg
        .command(&["--once"])
        .env("HADOOP_CONF_DIR", conf.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("core-site.xml"),
        "names what to set: {}",
        stderr(&out)
    );
    assert_eq!(db.count("orders").await, 0);
    std::fs::write(
        conf.path().join("core-site.xml"),
        format!(
            "<configuration><property><name>fs.defaultFS</name><value>{}</value></property></configuration>",
            hdfs()
        ),
    )
    .unwrap();
    let out = cfg
        .command(&["--once"])
        .env("HADOOP_CONF_DIR", conf.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_synced(&t, &db, "orders", None).await;
}
