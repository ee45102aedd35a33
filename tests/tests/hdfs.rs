//! HDFS, against a real one (Hadoop's MiniDFSCluster, `scripts/with-hdfs.sh`): a warehouse
//! written there by Paimon Java, read whole and then snapshot by snapshot, the consumer file
//! written there (read back by Paimon Java), `verify` reading it; `hdfs:///path`, whose
//! namenode comes from the Hadoop configuration (`fs.defaultFS`); and `hdfs://NAMESERVICE/path`
//! on an HA pair of namenodes (`hdfs-site.xml`), failed over while a worker follows it; a table
//! named by its `hdfs:///…` path.

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
    orders_in(&hdfs(), name)
}

/// The table's warehouse on the test HDFS as `hdfs://` names it without a namenode: its path.
fn without_namenode(t: &Table) -> String {
    t.warehouse_location()
        .strip_prefix(&hdfs())
        .expect("the warehouse is on the test HDFS")
        .to_string()
}

fn orders_in(file_system: &str, name: &str) -> Table {
    let uri = format!("{file_system}/{name}-{}", std::process::id());
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
    let path = without_namenode(&t);
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
    write_default_fs(conf.path());
    let out = cfg
        .command(&["--once"])
        .env("HADOOP_CONF_DIR", conf.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_synced(&t, &db, "orders", None).await;
}

/// `$HADOOP_CONF_DIR/core-site.xml` naming the test HDFS as `fs.defaultFS`.
fn write_default_fs(conf: &std::path::Path) {
    std::fs::write(
        conf.join("core-site.xml"),
        format!(
            "<configuration><property><name>fs.defaultFS</name><value>{}</value></property></configuration>",
            hdfs()
        ),
    )
    .unwrap();
}

/// The original design's table: Flink created it with `'path' = 'hdfs:///warehouse/orders'`, so
/// `source.path` names it by that directory (its namenode from `fs.defaultFS`), without a catalog.
#[tokio::test]
async fn a_table_on_hdfs_named_by_its_path_is_synced() {
    let t = orders_on_hdfs("by_path");
    t.commits(vec![generate(1, 80, "+I", 0)]);
    let warehouse = without_namenode(&t);
    let db = TestDb::new("hdfs_by_path").await;
    db.exec(ORDERS_DDL).await;
    let table_path = format!("hdfs://{warehouse}/{}.db/{}", t.database, t.name);
    let cfg = SyncConfig::builder(&t, &db)
        .source_path(&table_path, "flink_default", "orders")
        .build();
    let conf = tempfile::tempdir().unwrap();
    write_default_fs(conf.path());
    let run = || {
        let out = cfg
            .command(&["--once"])
            .env("HADOOP_CONF_DIR", conf.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    };
    run();
    assert_synced(&t, &db, "orders", None).await;
    t.commits(vec![generate(10, 40, "+U", 1), generate(1, 5, "-D", 0)]);
    run();
    assert_synced(&t, &db, "orders", None).await;
}

/// The test HDFS's HA pair (`hdfs://pms-ha`, its namenodes in `$HADOOP_CONF_DIR/hdfs-site.xml`).
fn ha_nameservice() -> String {
    std::env::var("PMS_TEST_HDFS_HA").expect(
        "PMS_TEST_HDFS_HA is not set: run the tests under scripts/with-hdfs.sh (make test does), which starts an HA pair",
    )
}

/// Makes the HA pair's standby namenode active (the active one goes standby first), as
/// `hdfs haadmin -failover` does; returns once it has. Only one test fails the pair over.
async fn fail_over() -> String {
    let events =
        std::env::var("PMS_TEST_HDFS_EVENTS").expect("PMS_TEST_HDFS_EVENTS (scripts/with-hdfs.sh)");
    let failovers = || {
        std::fs::read_to_string(&events)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with("failover "))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let before = failovers().len();
    let control = std::env::var("PMS_TEST_HDFS_CONTROL")
        .expect("PMS_TEST_HDFS_CONTROL (scripts/with-hdfs.sh)");
    let mut fifo = std::fs::OpenOptions::new()
        .write(true)
        .open(&control)
        .expect("open the HDFS control pipe");
    std::io::Write::write_all(&mut fifo, b"failover\n").expect("ask for a failover");
    drop(fifo);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Some(done) = failovers().get(before) {
            return done.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the HA pair did not fail over within 60 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// A warehouse on an HA nameservice (`hdfs://pms-ha/…`, as a company's Flink writes it): the
/// worker takes the namenodes from `hdfs-site.xml`, reads the table whole, and goes on following
/// it through a failover of the namenodes while it runs (the Paimon Java writer commits through
/// the new active one); MySQL ends equal to Paimon, and the consumer file is on the pair.
#[tokio::test]
async fn a_warehouse_on_an_ha_nameservice_is_followed_through_a_namenode_failover() {
    let t = orders_in(&ha_nameservice(), "ha");
    t.commits(vec![generate(1, 300, "+I", 0)]);
    let db = TestDb::new("hdfs_ha").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).consumer_id("pms-ha").build();
    let mut worker = cfg.spawn(&[]);
    wait_for_checkpoint_at(&cfg, t.latest()).await;
    t.commits(vec![generate_step(1, 100, 3, "+U", 1)]);
    let failover = fail_over().await;
    assert!(failover.ends_with("active=nn2"), "{failover}");
    let latest = t.commits(vec![
        generate(301, 100, "+I", 0),
        generate_step(2, 50, 5, "-D", 0),
    ]);
    wait_for_checkpoint_at(&cfg, latest).await;
    assert_synced(&t, &db, "orders", None).await;
    // And back: the worker follows nn1 again.
    let latest = t.commits(vec![generate_step(1, 60, 7, "+U", 2)]);
    assert!(fail_over().await.ends_with("active=nn1"));
    wait_for_checkpoint_at(&cfg, latest).await;
    assert!(
        stop_with_sigterm(&mut worker).await.success(),
        "{}",
        cfg.log()
    );
    assert_synced(&t, &db, "orders", None).await;
    assert_eq!(
        t.consumers().get("pms-ha").copied(),
        Some(latest),
        "{:?}",
        t.consumers()
    );
}

/// `hdfs://NAME/…` without a port that no `hdfs-site.xml` names as a nameservice: refused before
/// anything is written, naming the properties to set.
#[tokio::test]
async fn a_nameservice_the_hadoop_configuration_lacks_is_refused_naming_it() {
    let t = orders_in(&ha_nameservice(), "ha_unknown");
    t.commits(vec![generate(1, 20, "+I", 0)]);
    let db = TestDb::new("hdfs_ha_unknown").await;
    db.exec(ORDERS_DDL).await;
    let path = t
        .warehouse_location()
        .strip_prefix(&ha_nameservice())
        .unwrap()
        .to_string();
    let cfg = SyncConfigBuilder::new(
        format!("hdfs://nowhere{path}"),
        &t.database,
        &t.name,
        &db.url(),
    )
    .build();
    let out = cfg.command(&["--once"]).output().unwrap();
    assert!(!out.status.success());
    let log = stderr(&out);
    assert!(
        log.contains("dfs.ha.namenodes.nowhere") && log.contains("hdfs-site.xml"),
        "{log}"
    );
    assert_eq!(db.count("orders").await, 0);
}

/// The Kerberized test HDFS (`scripts/with-hdfs.sh`): what a client needs to log in.
struct Kerberized {
    uri: String,
    principal: String,
    keytab: String,
    krb5_conf: String,
    hadoop_conf: String,
}

fn kerberized() -> Kerberized {
    let var = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| {
            panic!("{name} is not set: run the tests under scripts/with-hdfs.sh (make test does), which starts a Kerberized HDFS and its KDC")
        })
    };
    Kerberized {
        uri: var("PMS_TEST_KERBEROS_HDFS"),
        principal: var("PMS_TEST_KERBEROS_PRINCIPAL"),
        keytab: var("PMS_TEST_KERBEROS_KEYTAB"),
        krb5_conf: var("PMS_TEST_KERBEROS_KRB5_CONF"),
        hadoop_conf: var("PMS_TEST_KERBEROS_CONF_DIR"),
    }
}

impl Kerberized {
    /// Copies the local warehouse of `t` to `path` on the Kerberized HDFS (file by file, so the
    /// consumer file the worker wrote there stays), as its superuser: Paimon Java writes the table
    /// on the local disk, as the test harness's other clients are not logged in to this cluster.
    async fn put(&self, t: &Table, path: &str) {
        let events = std::env::var("PMS_TEST_KERBEROS_EVENTS").expect("PMS_TEST_KERBEROS_EVENTS");
        let puts = || {
            std::fs::read_to_string(&events)
                .unwrap_or_default()
                .lines()
                .filter(|l| l.starts_with("put "))
                .count()
        };
        let before = puts();
        let control =
            std::env::var("PMS_TEST_KERBEROS_CONTROL").expect("PMS_TEST_KERBEROS_CONTROL");
        let mut fifo = std::fs::OpenOptions::new()
            .write(true)
            .open(&control)
            .expect("open the Kerberized HDFS's control pipe");
        let line = format!("put {} {path}\n", t.warehouse().display());
        std::io::Write::write_all(&mut fifo, line.as_bytes()).expect("ask for a copy");
        drop(fifo);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while puts() == before {
            assert!(
                std::time::Instant::now() < deadline,
                "the copy to the Kerberized HDFS did not finish within 60 s"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// The worker's login: the keytab, krb5.conf and the Hadoop configuration that asks for
    /// Kerberos, in the Kerberos library's and Hadoop's own variables.
    fn login(&self, cmd: &mut std::process::Command) {
        cmd.env("HADOOP_CONF_DIR", &self.hadoop_conf)
            .env("KRB5_CONFIG", &self.krb5_conf)
            .env("KRB5_CLIENT_KTNAME", &self.keytab)
            .env("KRB5CCNAME", "MEMORY:pms-test");
    }
}

/// A Kerberized HDFS (a real KDC, namenode and datanodes accepting only Kerberos, SASL on data
/// transfer): the worker logs in from a keytab as `source.kerberos.principal`, reads the table
/// whole, then its next snapshots, and writes its consumer file there. Without the keytab, with
/// a keytab of another principal, or with a Hadoop configuration that doesn't ask for Kerberos,
/// the start is refused naming what is missing, before anything is written.
#[tokio::test]
async fn a_kerberized_hdfs_is_read_after_a_keytab_login() {
    let k = kerberized();
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 200, "+I", 0)]);
    let path = format!("/kerberized-{}", std::process::id());
    k.put(&t, &path).await;
    let db = TestDb::new("hdfs_kerberos").await;
    db.exec(ORDERS_DDL).await;
    let builder = || {
        SyncConfigBuilder::new(format!("{}{path}", k.uri), &t.database, &t.name, &db.url())
            .consumer_id("pms-kerberos")
    };
    let cfg = builder().kerberos(&k.principal).build();
    let run = |cfg: &SyncConfig, login: &dyn Fn(&mut std::process::Command)| {
        let mut cmd = cfg.command(&["--once"]);
        login(&mut cmd);
        cmd.output().unwrap()
    };
    let refused = |out: std::process::Output, names: &[&str]| {
        assert!(!out.status.success(), "refused");
        let log = stderr(&out);
        for n in names {
            assert!(log.contains(n), "names {n}: {log}");
        }
    };
    // Refusals first: MySQL stays empty.
    refused(
        run(&cfg, &|c| {
            k.login(c);
            c.env_remove("KRB5_CLIENT_KTNAME");
        }),
        &["KRB5_CLIENT_KTNAME", &k.principal],
    );
    let other = builder().kerberos("someone@EXAMPLE.COM").build();
    refused(
        run(&other, &|c| k.login(c)),
        &["someone@EXAMPLE.COM", &k.principal],
    );
    refused(
        run(&cfg, &|c| {
            k.login(c);
            c.env(
                "HADOOP_CONF_DIR",
                std::env::var("PMS_TEST_HDFS_CONF_DIR").unwrap(),
            );
        }),
        &["hadoop.security.authentication"],
    );
    assert_eq!(db.count("orders").await, 0);
    // Logged in: full read, then the next snapshots.
    let out = run(&cfg, &|c| k.login(c));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_synced(&t, &db, "orders", None).await;
    t.commits(vec![
        generate_step(1, 80, 3, "+U", 1),
        generate_step(2, 40, 5, "-D", 0),
    ]);
    k.put(&t, &path).await;
    let out = run(&cfg, &|c| k.login(c));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_synced(&t, &db, "orders", None).await;
}
