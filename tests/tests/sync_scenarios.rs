//! Scenarios of the standalone worker on real MariaDB and tables written by Paimon Java:
//! every changelog producer, partitions, buckets and slots, composite keys, deletes.

mod common;

use common::*;
use pms_tests::mysql::TestDb;
use pms_tests::paimon::Table;
use serde_json::json;

/// Full read, then updates/deletes/re-inserts read as changes, for one changelog producer.
async fn producer_scenario(producer: &str, extra: serde_json::Value) {
    let mut options = json!({"bucket": "2", "changelog-producer": producer});
    for (k, v) in extra.as_object().unwrap() {
        options[k] = v.clone();
    }
    let table = orders_table(options, false);
    table.commits(vec![generate(1, 500, "+I", 0)]);
    if producer == "full-compaction" {
        // Its changes only become visible (as changelog) with a full compaction.
        table.compact();
    }
    let db = TestDb::new(&format!("producer_{}", producer.replace('-', "_"))).await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&table, &db).max_rows(100).build();
    cfg.sync_once(&[]);
    assert_synced(&table, &db, "orders", None).await;

    // Updates, deletes, a delete then re-insert of one key, in separate commits.
    table.commits(vec![
        generate_step(1, 100, 5, "+U", 7),
        generate_step(3, 50, 10, "-D", 0),
        json!({"rows": [{"kind": "-D", "values": order(250, "1.00", "X")}]}),
        json!({"rows": [{"kind": "+I", "values": order(250, "1001.00", "REINSERTED")}, {"kind": "+I", "values": order(9001, "5.50", "NEW")}]}),
    ]);
    if producer == "full-compaction" {
        table.compact();
    }
    let latest = table.latest();
    cfg.sync_once(&[]);
    assert_synced(&table, &db, "orders", Some(latest)).await;
    assert_eq!(db.count("orders").await, 500 - 50 + 1);
    let cp: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cfg.checkpoint_path(0, 1)).unwrap()).unwrap();
    assert_eq!(
        cp["snapshotId"], latest,
        "the checkpoint covers the latest snapshot"
    );
    assert_eq!(cp["phase"], "incremental");
    let consumer = std::fs::read_to_string(table.table_dir().join("consumer/consumer-pms-db-t"))
        .expect("consumer file");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&consumer).unwrap()["nextSnapshot"],
        latest,
        "the consumer keeps the applied snapshot (its identity is checked at the next start) on"
    );

    // A second sync reading only changes from snapshot 1 reaches the same state.
    {
        let db2 = TestDb::new("from_snapshot").await;
        db2.exec(ORDERS_DDL).await;
        if producer == "full-compaction" {
            // Its changelog only exists for compacted snapshots; a fresh full compaction covers all.
            table.compact();
        }
        let cfg2 = SyncConfig::builder(&table, &db2)
            .from_snapshot(1)
            .consumer_id("second")
            .build();
        cfg2.sync_once(&[]);
        assert_synced(&table, &db2, "orders", None).await;
    }
}

#[tokio::test]
async fn changelog_producer_none() {
    producer_scenario("none", json!({})).await;
}

#[tokio::test]
async fn changelog_producer_input() {
    producer_scenario("input", json!({})).await;
}

#[tokio::test]
async fn changelog_producer_lookup() {
    producer_scenario("lookup", json!({})).await;
}

#[tokio::test]
async fn changelog_producer_full_compaction() {
    producer_scenario("full-compaction", json!({})).await;
}

#[tokio::test]
async fn deletion_vectors_with_lookup() {
    producer_scenario("lookup", json!({"deletion-vectors.enabled": "true"})).await;
}

#[tokio::test]
async fn dynamic_bucket_table() {
    producer_scenario("input", json!({"bucket": "-1"})).await;
}

/// Partitions and 3 buckets, synced by three slot workers in parallel: same final state.
#[tokio::test]
async fn partitions_with_three_slots() {
    let table = orders_table(json!({"bucket": "3", "changelog-producer": "input"}), true);
    let rows = |from: i64, kind: &'static str, tag: &'static str| -> Vec<serde_json::Value> {
        (from..from + 60)
            .map(|id| {
                let region = ["eu", "us", "apac"][(id % 3) as usize];
                let mut v = order(id, &format!("{id}.25"), tag);
                v.as_array_mut().unwrap().push(json!(region));
                json!({"kind": kind, "values": v})
            })
            .collect()
    };
    table.commits(vec![json!({"rows": rows(1, "+I", "NEW")})]);
    let db = TestDb::new("slots").await;
    db.exec(ORDERS_PARTITIONED_DDL).await;
    let cfg = SyncConfig::builder(&table, &db).parallelism(3).build();
    let run_slots = || {
        let children: Vec<_> = (0..3)
            .map(|k| cfg.command(&["--once", "--slot", &k.to_string()]).output())
            .collect();
        for out in children {
            let out = out.expect("run slot");
            assert!(out.status.success(), "{}", stderr(&out));
        }
    };
    run_slots();
    assert_synced(&table, &db, "orders", None).await;
    table.commits(vec![
        json!({"rows": rows(31, "+U", "PAID")}),
        json!({"rows": rows(1, "-D", "NEW")[..20].to_vec()}),
    ]);
    // The three slots in parallel this time.
    let children: Vec<_> = (0..3)
        .map(|k| {
            cfg.command(&["--once", "--slot", &k.to_string()])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    assert_synced(&table, &db, "orders", None).await;
    assert_eq!(db.count("orders").await, 70);
    for k in 0..3 {
        assert!(
            cfg.checkpoint_path(k, 3).exists(),
            "slot {k} has its own checkpoint"
        );
    }
}

/// A composite key and a -D/+I of the same key inside one flush and across flushes.
#[tokio::test]
async fn composite_key_and_delete_reinsert() {
    let table = Table::create(json!({
        "columns": [
            {"name": "tenant", "type": "STRING NOT NULL"},
            {"name": "order_no", "type": "INT NOT NULL"},
            {"name": "note", "type": "STRING"}
        ],
        "primaryKeys": ["tenant", "order_no"], "partitionKeys": [],
        "options": {"bucket": "2", "changelog-producer": "input"}
    }));
    let row = |k: &str, t: &str, n: i64, note: &str| json!({"kind": k, "values": [t, n, note]});
    table.commits(vec![json!({"rows": [row("+I", "acme", 1001, "first"), row("+I", "acme", 1002, "x"), row("+I", "globex", 1001, "other tenant")]})]);
    let db = TestDb::new("composite").await;
    db.exec("CREATE TABLE t (tenant VARCHAR(32) COLLATE utf8mb4_nopad_bin NOT NULL, order_no INT NOT NULL, note TEXT, PRIMARY KEY (tenant, order_no)) DEFAULT CHARSET = utf8mb4").await;
    // maxRows 1: every record is its own flush, so the -D and +I below land in two transactions.
    let across = SyncConfig::builder(&table, &db)
        .target_table("t")
        .max_rows(1)
        .build();
    across.sync_once(&[]);
    assert_synced(&table, &db, "t", None).await;
    // Order 1001 deleted and re-inserted in one commit: -D then +I of the same key.
    table.commits(vec![json!({"rows": [row("-D", "acme", 1001, "first"), row("+I", "acme", 1001, "re-inserted"), row("-D", "acme", 1002, "x")]})]);
    across.sync_once(&[]);
    assert_synced(&table, &db, "t", None).await;

    // The same changes reduced inside one flush (default maxRows) on a second target.
    let db2 = TestDb::new("composite_one_flush").await;
    db2.exec("CREATE TABLE t (tenant VARCHAR(32) COLLATE utf8mb4_nopad_bin NOT NULL, order_no INT NOT NULL, note TEXT, PRIMARY KEY (tenant, order_no)) DEFAULT CHARSET = utf8mb4").await;
    let within = SyncConfig::builder(&table, &db2)
        .target_table("t")
        .from_snapshot(1)
        .build();
    within.sync_once(&[]);
    assert_synced(&table, &db2, "t", None).await;
    assert_eq!(db2.count("t").await, 2);
}

/// Flink's gap with `changelog-producer=full-compaction`: a latest-full read of uncompacted
/// rows, then a delete before the next full compaction, leaves the row in MySQL for good
/// (the compaction's changelog never saw it). Here the row is gone after the compaction.
#[tokio::test]
async fn full_compaction_producer_never_misses_a_delete() {
    let table = orders_table(
        json!({"bucket": "1", "changelog-producer": "full-compaction"}),
        false,
    );
    table.commits(vec![generate(1, 10, "+I", 0)]);
    table.compact();
    table.commits(vec![generate(100, 10, "+I", 0)]);
    let db = TestDb::new("full_compaction_gap").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&table, &db).build();
    cfg.sync_once(&[]);
    // Rows 100..109 are not compacted yet: MySQL shows the last fully compacted state.
    assert_eq!(db.count("orders").await, 10);
    table.commits(vec![
        generate_step(100, 5, 2, "-D", 0),
        generate_step(1, 3, 1, "-D", 0),
    ]);
    table.compact();
    cfg.sync_once(&[]);
    assert_synced(&table, &db, "orders", None).await;
    assert_eq!(db.count("orders").await, 10 + 10 - 5 - 3);
}

/// A table written by pypaimon (deletes through its `rowkind.field`), read by us and by Paimon Java.
#[tokio::test]
async fn pypaimon_written_table() {
    use pms_tests::paimon::Writer;
    let table = Table::create_with(
        Writer::PyPaimon,
        json!({
            "columns": [
                {"name": "id", "type": "BIGINT NOT NULL"}, {"name": "amount", "type": "DECIMAL(12, 3)"},
                {"name": "name", "type": "STRING"}, {"name": "day", "type": "DATE"},
                {"name": "at", "type": "TIMESTAMP(6)"}, {"name": "flag", "type": "BOOLEAN"},
                {"name": "payload", "type": "BYTES"}, {"name": "op", "type": "STRING"}
            ],
            "primaryKeys": ["id"], "partitionKeys": [],
            "options": {"bucket": "3", "changelog-producer": "input", "rowkind.field": "op"}
        }),
    );
    let row = |kind: &str, id: i64, name: &str| json!({"kind": kind, "values": [id, format!("{id}.125"), name, "2024-02-29", "2024-02-29 12:34:56.654321", id % 2 == 0, "00ff10", kind]});
    table.commits(vec![
        json!({"rows": (1..=30).map(|i| row("+I", i, "først 😀")).collect::<Vec<_>>()}),
    ]);
    let db = TestDb::new("pypaimon").await;
    db.exec("CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, amount DECIMAL(12,3), name TEXT, day DATE, at DATETIME(6), \
             flag BOOLEAN, payload BLOB, op VARCHAR(2)) DEFAULT CHARSET = utf8mb4").await;
    let cfg = SyncConfig::builder(&table, &db).target_table("t").build();
    cfg.sync_once(&[]);
    assert_synced(&table, &db, "t", None).await;
    table.commits(vec![json!({"rows": (1..=10).map(|i| row(if i % 2 == 0 { "-D" } else { "+U" }, i, "updated")).collect::<Vec<_>>()})]);
    cfg.sync_once(&[]);
    assert_synced(&table, &db, "t", None).await;
    assert_eq!(db.count("t").await, 25);
}

/// `source.filter`, the Flink job's `WHERE`, exact under updates: a row updated out of the
/// filter is deleted from MySQL, one updated into it inserted, a delete of a row that never
/// passed removes nothing; a full read leaves the rows out; `verify` compares with the filtered
/// read; a filter over the partition column prunes the full read; changing the filter starts
/// over (one slot) or is refused (several).
#[tokio::test]
async fn a_filter_keeps_exactly_the_rows_it_passes_through_updates_and_deletes() {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), true);
    let row = |kind: &str, id: i64, amount: i64, status: &str| {
        let region = if id % 2 == 0 { "EU" } else { "US" };
        json!({"kind": kind, "values": [id, format!("{amount}.00"), status, "2024-01-01 00:00:00.000", region]})
    };
    let statuses = ["NEW", "PAID", "SHIPPED"];
    t.commits(vec![json!({"rows": (1..=12)
        .map(|id| row("+I", id, id * 5, statuses[(id % 3) as usize]))
        .collect::<Vec<_>>()})]);
    let amount = |r: &[serde_json::Value]| -> f64 {
        r[1].as_str()
            .map_or_else(|| r[1].as_f64().unwrap(), |s| s.parse().unwrap())
    };
    let paid_20 = |r: &[serde_json::Value]| {
        ["PAID", "SHIPPED"].contains(&r[2].as_str().unwrap_or("")) && amount(r) >= 20.0
    };
    const PAID_20: &str = "status IN ('PAID', 'SHIPPED') AND amount >= 20";
    let db = TestDb::new("filter").await;
    db.exec(ORDERS_PARTITIONED_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).filter(PAID_20).build();
    cfg.sync_once(&[]);
    assert_synced_where(&t, &db, "orders", paid_20).await;
    let kept = db.count("orders").await;
    assert!(kept > 0 && kept < 12, "some rows pass, some don't: {kept}");
    // Key 4 (PAID, 20) leaves the filter, key 3 (NEW, 15) enters it, key 6 (NEW) that never
    // passed is deleted, key 7 (PAID, 35) is deleted, key 11 (SHIPPED, 55) stays in with a new
    // amount, key 13 arrives failing and key 14 passing.
    t.commits(vec![json!({"rows": [
        row("+U", 4, 20, "NEW"),
        row("+U", 3, 100, "PAID"),
        row("-D", 6, 30, "NEW"),
        row("-D", 7, 35, "PAID"),
        row("+U", 11, 60, "SHIPPED"),
        row("+I", 13, 5, "PAID"),
        row("+I", 14, 70, "SHIPPED"),
    ]})]);
    cfg.sync_once(&[]);
    assert_synced_where(&t, &db, "orders", paid_20).await;
    cfg.assert_verified();

    // A filter over the partition column: the full read reads only the partitions it keeps.
    let eu = |r: &[serde_json::Value]| r[4] == "EU";
    let by_region = TestDb::new("filter_region").await;
    by_region.exec(ORDERS_PARTITIONED_DDL).await;
    let region_cfg = SyncConfig::builder(&t, &by_region)
        .filter("region = 'EU'")
        .consumer_id("by-region")
        .build();
    let out = region_cfg.run_once(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("prunes the full read"),
        "{}",
        stderr(&out)
    );
    assert_synced_where(&t, &by_region, "orders", eu).await;
    t.commits(vec![
        json!({"rows": [row("+U", 2, 1, "NEW"), row("+U", 1, 1, "NEW")]}),
    ]);
    region_cfg.sync_once(&[]);
    assert_synced_where(&t, &by_region, "orders", eu).await;

    // Another filter: the slot starts over (a full read, then the rows it doesn't keep go).
    let paid = |r: &[serde_json::Value]| r[2] == "PAID";
    // (The same config file and checkpoint, rewritten.)
    SyncConfig::builder(&t, &db)
        .filter("status = 'PAID'")
        .write_sharing(cfg.path.parent().unwrap(), "sync", "checkpoint.json");
    let out = cfg.run_once(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("source.filter changed"),
        "{}",
        stderr(&out)
    );
    assert_synced_where(&t, &db, "orders", paid).await;

    // Several slots can't start over in place: refused before anything is written.
    let slots = TestDb::new("filter_slots").await;
    slots.exec(ORDERS_PARTITIONED_DDL).await;
    let dir = tempfile::tempdir().unwrap();
    let two = |filter: &str| {
        SyncConfig::builder(&t, &slots)
            .filter(filter)
            .parallelism(2)
            .consumer_id("two")
            .write_in(dir.path(), "two")
    };
    for slot in ["0", "1"] {
        two(PAID_20).sync_once(&["--slot", slot]);
    }
    assert_synced_where(&t, &slots, "orders", paid_20).await;
    let out = two("status = 'PAID'").run_once(&["--slot", "0"]);
    assert!(!out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("source.filter changed") && stderr(&out).contains("2 slots"),
        "{}",
        stderr(&out)
    );
    assert_synced_where(&t, &slots, "orders", paid_20).await;
}

/// A table named by its directory (`source.path`), as a Flink table's `'path'` option names
/// one: read without a catalog, whatever `database` and `table` say; a directory that holds no
/// table is refused before anything is written.
#[tokio::test]
async fn a_table_named_by_its_path_is_synced() {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 50, "+I", 0)]);
    let db = TestDb::new("by_path").await;
    db.exec(ORDERS_DDL).await;
    let dir = t.table_dir().display().to_string();
    let cfg = SyncConfig::builder(&t, &db)
        .source_path(&dir, "flink_default", "orders")
        .build();
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    t.commits(vec![generate(10, 60, "+U", 1), generate(1, 5, "-D", 0)]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    let empty = TestDb::new("by_path_none").await;
    empty.exec(ORDERS_DDL).await;
    let warehouse = t.warehouse().display().to_string();
    let out = SyncConfig::builder(&t, &empty)
        .source_path(&warehouse, "flink_default", "orders")
        .build()
        .run_once(&[]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("holds no Paimon table"),
        "{}",
        stderr(&out)
    );
    assert_eq!(empty.count("orders").await, 0);
}
