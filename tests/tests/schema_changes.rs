//! Schema changes of the Paimon table while a sync runs, by `source.schemaChanges`: `fail`
//! stops before the first snapshot of a new schema, `apply` adds new columns to MySQL and goes
//! on, `ignore` goes on without them; renames and drops MySQL has not followed are never synced
//! silently stale.

mod common;

use std::time::{Duration, Instant};

use common::*;
use pms_tests::mysql::TestDb;
use pms_tests::paimon::Table;
use serde_json::{json, Value as Json};

/// `ADD COLUMN` while running: the continuous worker stops before the first snapshot of the new
/// schema (never dropping the new column silently); restarted, it checks MySQL against the new
/// schema and, once MySQL has the column, applies the rest, old files decoded under the new one.
#[tokio::test]
async fn a_schema_change_stops_the_sync_and_a_restart_applies_it() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    let before = t.commits(vec![generate(1, 20, "+I", 0)]);
    let db = TestDb::new("schema_change").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db)
        .poll_interval(Duration::from_millis(100))
        .build();
    let mut child = cfg.spawn(&[]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while db.count("orders").await < 20 {
        assert!(
            Instant::now() < deadline,
            "the continuous run did not catch up"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut row = order(100, "100.00", "NOTED");
    row.as_array_mut().unwrap().push(json!("hello"));
    let changed = t.commits(vec![
        json!({"addColumn": {"name": "note", "type": "STRING"}}),
        json!({"rows": [{"kind": "+I", "values": row}]}),
    ]);
    let status = wait_for_exit(&mut child, Duration::from_secs(60), || {
        format!("the worker went on past the schema change:\n{}", cfg.log())
    })
    .await;
    let log = cfg.log();
    assert!(!status.success(), "{log}");
    assert!(
        log.contains(&format!("schema changed at snapshot {changed}")),
        "{log}"
    );
    assert_synced(&t, &db, "orders", Some(before)).await;
    // Restarted, it reads the new schema and asks for the column first.
    let out = cfg.run_once(&[]);
    assert!(
        !out.status.success() && stderr(&out).contains("\"note\" has no MySQL column"),
        "{}",
        stderr(&out)
    );
    db.exec("ALTER TABLE orders ADD COLUMN note VARCHAR(64) NULL")
        .await;
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    let notes = db
        .query_strings("SELECT note FROM orders WHERE id IN (1, 100) ORDER BY id")
        .await;
    assert_eq!(notes, [vec![None], vec![Some("hello".to_string())]]);
}

/// An order row with a trailing `note`.
fn noted(kind: &str, id: i64, note: &str) -> Json {
    let mut row = order(id, &format!("{id}.00"), "NOTED");
    row.as_array_mut().unwrap().push(json!(note));
    json!({"kind": kind, "values": row})
}

/// Polls until `sql` returns `expected`, failing after a minute.
async fn wait_for(db: &TestDb, sql: &str, expected: Vec<Vec<Option<String>>>, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let got = db.query_strings(sql).await;
        if got == expected {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: {sql} gave {got:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn some(v: &[&str]) -> Vec<Vec<Option<String>>> {
    v.iter().map(|s| vec![Some(s.to_string())]).collect()
}

/// `apply`: a new Paimon column is added to MySQL by the running worker (no restart), with
/// its values from the first snapshot of the new schema on; a later rename stops the sync
/// before anything of it is written, naming both names.
#[tokio::test]
async fn apply_adds_new_columns_and_a_rename_stops_the_sync() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 20, "+I", 0)]);
    let db = TestDb::new("schema_apply").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db)
        .schema_changes(SchemaChanges::Apply)
        .build();
    let mut child = cfg.spawn(&[]);
    // The column comes while the worker runs (not before its first read).
    wait_for(
        &db,
        "SELECT COUNT(*) FROM orders",
        some(&["20"]),
        "the first snapshot",
    )
    .await;
    let added = t.commits(vec![
        json!({"addColumn": {"name": "note", "type": "STRING"}}),
        json!({"rows": [noted("+I", 100, "hello"), noted("+U", 1, "later")]}),
    ]);
    wait_for(
        &db,
        "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = DATABASE() \
         AND table_name = 'orders' AND column_name = 'note'",
        some(&["1"]),
        "the new column",
    )
    .await;
    wait_for(
        &db,
        "SELECT note FROM orders WHERE id IN (1, 100) ORDER BY id",
        some(&["later", "hello"]),
        "the new column and its values",
    )
    .await;
    assert!(
        child.try_wait().unwrap().is_none(),
        "the worker went on running"
    );
    assert_synced(&t, &db, "orders", Some(added)).await;
    assert_eq!(
        db.query_strings(
            "SELECT column_type FROM information_schema.columns WHERE table_schema = DATABASE() \
             AND table_name = 'orders' AND column_name = 'note'"
        )
        .await,
        some(&["longtext"])
    );
    t.commits(vec![
        json!({"renameColumn": {"from": "note", "to": "remark"}}),
        json!({"rows": [noted("+I", 101, "renamed")]}),
    ]);
    let status = wait_for_exit(&mut child, Duration::from_secs(60), || {
        format!("the worker went on past a rename:\n{}", cfg.log())
    })
    .await;
    let log = cfg.log();
    assert!(!status.success(), "{log}");
    assert!(
        log.contains(
            "Paimon column \"note\" was renamed to \"remark\", and MySQL still has \"note\""
        ),
        "{log}"
    );
    assert_eq!(
        db.count("orders").await,
        21,
        "nothing of the renamed schema was written"
    );
}

/// `ignore`: a new column is left out and a dropped one keeps its values in MySQL, with
/// warnings, and the sync goes on; under `fail` the same dropped column stops a restart.
#[tokio::test]
async fn ignore_goes_on_without_new_and_dropped_columns() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    t.commits(vec![
        json!({"addColumn": {"name": "note", "type": "STRING"}}),
        json!({"rows": [noted("+I", 1, "first"), noted("+I", 2, "first")]}),
    ]);
    let db = TestDb::new("schema_ignore").await;
    db.exec(ORDERS_DDL).await;
    db.exec("ALTER TABLE orders ADD COLUMN note VARCHAR(64) NULL")
        .await;
    let cfg = SyncConfig::builder(&t, &db)
        .schema_changes(SchemaChanges::Ignore)
        .build();
    let mut child = cfg.spawn(&[]);
    wait_for(
        &db,
        "SELECT COUNT(*) FROM orders",
        some(&["2"]),
        "the first rows",
    )
    .await;
    let dropped = t.commits(vec![
        json!({"dropColumn": "note"}),
        json!({"addColumn": {"name": "tag", "type": "STRING"}}),
        json!({"rows": [
            {"kind": "+I", "values": [3, "3.00", "NEW", "2024-01-01 00:00:03.003", "t3"]},
            {"kind": "+U", "values": [1, "9.00", "PAID", "2024-01-01 00:00:01.001", "t1"]},
        ]}),
    ]);
    wait_for(
        &db,
        "SELECT status FROM orders WHERE id = 1",
        some(&["PAID"]),
        "the update after the drop",
    )
    .await;
    assert!(
        child.try_wait().unwrap().is_none(),
        "the worker went on running"
    );
    stop_with_sigterm(&mut child).await;
    assert_synced(&t, &db, "orders", Some(dropped)).await;
    assert_eq!(
        db.query_strings("SELECT COALESCE(note, '-') FROM orders ORDER BY id")
            .await,
        some(&["first", "first", "-"]),
        "the dropped column keeps what it had"
    );
    let fail = SyncConfig::builder(&t, &db).consumer_id("fail").build();
    let out = fail.run_once(&[]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(
            "Paimon column \"note\" was dropped from the table, and MySQL column \"note\" keeps"
        ),
        "{}",
        stderr(&out)
    );
}

/// A worker stopped before a schema change reads the snapshots written under the older schema
/// under the new one (the column added since reads as NULL, as in Paimon), then the rest; with
/// delta files and with a lookup changelog.
#[tokio::test]
async fn a_lagging_restart_reads_snapshots_of_an_older_schema() {
    for producer in ["input", "lookup"] {
        let t = orders_table(
            json!({"bucket": "2", "changelog-producer": producer}),
            false,
        );
        t.commits(vec![generate(1, 20, "+I", 0)]);
        let db = TestDb::new(&format!("lagging_{producer}")).await;
        db.exec(ORDERS_DDL).await;
        db.exec("ALTER TABLE orders ADD COLUMN note VARCHAR(64) NULL")
            .await;
        let cfg = SyncConfig::builder(&t, &db).build();
        cfg.sync_once(&[]);
        t.commits(vec![
            generate(5, 10, "+U", 1),
            json!({"rows": [{"kind": "-D", "values": order(2, "1.00", "NEW")}]}),
            json!({"addColumn": {"name": "note", "type": "STRING"}}),
            json!({"rows": [noted("+I", 100, "hello"), noted("+U", 6, "later")]}),
        ]);
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "orders", None).await;
        assert_eq!(
            db.query_strings(
                "SELECT COALESCE(note, '-') FROM orders WHERE id IN (5, 6, 100) ORDER BY id"
            )
            .await,
            some(&["-", "later", "hello"]),
            "{producer}"
        );
    }
}

/// An aggregation table's full read takes its files as stored; after `ADD COLUMN` a bucket
/// holds files of both schemas, each read with its own and evolved to the new one.
#[tokio::test]
async fn a_full_read_over_files_of_two_schemas() {
    let t = Table::create(json!({
        "columns": [
            {"name": "id", "type": "BIGINT NOT NULL"},
            {"name": "total", "type": "BIGINT"},
        ],
        "primaryKeys": ["id"],
        "options": {"bucket": "1", "merge-engine": "aggregation",
                    "fields.total.aggregate-function": "sum", "changelog-producer": "lookup"},
    }));
    t.commits(vec![
        rows((1..=10).map(|id| json!([id, id])).collect()),
        json!({"compact": "full"}),
        rows((1..=5).map(|id| json!([id, 100])).collect()),
        json!({"addColumn": {"name": "extra", "type": "BIGINT"}}),
        rows((3..=8).map(|id| json!([id, 1000, id * 2])).collect()),
    ]);
    let db = TestDb::new("two_schemas").await;
    db.exec("CREATE TABLE totals (id BIGINT NOT NULL PRIMARY KEY, total BIGINT, extra BIGINT)")
        .await;
    let cfg = SyncConfig::builder(&t, &db).target_table("totals").build();
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "totals", None).await;
    assert_eq!(
        db.query_strings(
            "SELECT total, COALESCE(extra, -1) FROM totals WHERE id IN (1, 4) ORDER BY id"
        )
        .await,
        [
            vec![Some("101".into()), Some("-1".into())],
            vec![Some("1104".into()), Some("8".into())],
        ]
    );
}

/// `apply` adds a column only where the running worker saw it appear (every row written before
/// predates it). At a cold start the rows already in MySQL may lack values Paimon has for a
/// column MySQL lacks (left out before, or added while the sync was down), so that column is
/// refused as under `fail`, not added empty.
#[tokio::test]
async fn apply_does_not_add_a_column_at_a_cold_start() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    t.commits(vec![
        json!({"addColumn": {"name": "note", "type": "STRING"}}),
        json!({"rows": [noted("+I", 1, "kept")]}),
    ]);
    let db = TestDb::new("apply_cold").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db)
        .schema_changes(SchemaChanges::Apply)
        .build();
    let out = cfg.run_once(&[]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("\"note\" has no MySQL column"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        db.query_strings(
            "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = DATABASE() \
             AND table_name = 'orders' AND column_name = 'note'"
        )
        .await,
        some(&["0"])
    );
    assert_eq!(db.count("orders").await, 0);
}

/// A table `(id BIGINT key, column type)`, one bucket, input changelog.
fn keyed_table(column: &str, column_type: &str) -> Table {
    Table::create(json!({
        "columns": [
            {"name": "id", "type": "BIGINT NOT NULL"},
            {"name": column, "type": column_type},
        ],
        "primaryKeys": ["id"],
        "options": {"bucket": "1", "changelog-producer": "input"},
    }))
}

/// A commit step inserting `values` (each a row's values).
fn rows(values: Vec<Json>) -> Json {
    json!({"rows": values.into_iter().map(|v| json!({"kind": "+I", "values": v})).collect::<Vec<_>>()})
}

/// A column's type narrowed by `ALTER TABLE … MODIFY` is read in older files as Paimon Java
/// reads it: a BIGINT narrowed to INT wraps (Java's `intValue()`), where a `safe` Arrow cast
/// read NULL; in the full read (the crate's evolution) and in changes (ours).
#[tokio::test]
async fn a_narrowed_integer_reads_as_java_reads_it() {
    let t = keyed_table("v", "BIGINT");
    t.commits(vec![rows(vec![
        json!([1, 1]),
        json!([2, 5_000_000_000i64]),
    ])]);
    let lagging = TestDb::new("narrowed_changes").await;
    let cold = TestDb::new("narrowed_full").await;
    for db in [&lagging, &cold] {
        db.exec("CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, v BIGINT)")
            .await;
    }
    let changes = SyncConfig::builder(&t, &lagging)
        .target_table("t")
        .from_snapshot(1)
        .build();
    t.commits(vec![
        rows(vec![json!([3, 6_000_000_000i64])]),
        json!({"updateColumnType": {"name": "v", "type": "INT"}}),
        rows(vec![json!([4, 7])]),
    ]);
    changes.sync_once(&[]);
    assert_synced(&t, &lagging, "t", None).await;
    SyncConfig::builder(&t, &cold)
        .target_table("t")
        .build()
        .sync_once(&[]);
    assert_synced(&t, &cold, "t", None).await;
    assert_eq!(
        cold.query_strings("SELECT v FROM t WHERE id = 2").await,
        [vec![Some("705032704".to_string())]]
    );
}

/// A STRING column retyped to INT whose older files hold a value that is no number: Paimon Java
/// fails the read, and so does the sync, naming the column, before it writes anything (a
/// `safe` Arrow cast read NULL and wrote it).
#[tokio::test]
async fn a_value_that_does_not_cast_to_the_new_type_stops_the_sync() {
    let t = keyed_table("s", "STRING");
    t.commits(vec![
        rows(vec![json!([1, "12"]), json!([2, "x"])]),
        json!({"updateColumnType": {"name": "s", "type": "INT"}}),
        rows(vec![json!([3, 5])]),
    ]);
    let db = TestDb::new("not_castable").await;
    db.exec("CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, s INT)")
        .await;
    let out = SyncConfig::builder(&t, &db)
        .target_table("t")
        .build()
        .run_once(&[]);
    let log = stderr(&out);
    assert!(!out.status.success(), "{log}");
    assert!(
        log.contains("'s'") || log.contains("\"s\""),
        "the column is named: {log}"
    );
    assert_eq!(db.count("t").await, 0, "nothing was written");
}

/// `DROP COLUMN note` then `ADD COLUMN note`: a new Paimon field under the old name, NULL in
/// every row written before. A sync resumed over rows holding the old column's values stops
/// before writing, under each policy, naming the column; after `reset` the next run starts over
/// and ends exact (it kept the old values, exit 0).
#[tokio::test]
async fn a_column_dropped_and_added_again_is_not_synced_stale() {
    for policy in [
        SchemaChanges::Fail,
        SchemaChanges::Apply,
        SchemaChanges::Ignore,
    ] {
        let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
        t.commits(vec![
            json!({"addColumn": {"name": "note", "type": "STRING"}}),
            json!({"rows": (1..=6).map(|id| noted("+I", id, "old")).collect::<Vec<_>>()}),
        ]);
        let db = TestDb::new(&format!("readded_{policy:?}")).await;
        db.exec(ORDERS_DDL).await;
        db.exec("ALTER TABLE orders ADD COLUMN note VARCHAR(64) NULL")
            .await;
        let cfg = SyncConfig::builder(&t, &db).schema_changes(policy).build();
        cfg.sync_once(&[]);
        t.commits(vec![
            json!({"dropColumn": "note"}),
            json!({"addColumn": {"name": "note", "type": "STRING"}}),
            json!({"rows": [noted("+U", 2, "new")]}),
        ]);
        let out = cfg.run_once(&[]);
        let log = stderr(&out);
        assert!(!out.status.success(), "{policy:?}: {log}");
        assert!(
            log.contains("[\"note\"] were dropped and added again"),
            "{policy:?}: {log}"
        );
        assert_eq!(
            db.query_strings("SELECT COUNT(*) FROM orders WHERE note = 'old'")
                .await,
            [vec![Some("6".to_string())]],
            "{policy:?}: nothing was written"
        );
        let reset = cfg.subcommand("reset", &[]).output().unwrap();
        assert!(reset.status.success(), "{}", stderr(&reset));
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "orders", None).await;
        assert_eq!(
            db.query_strings(
                "SELECT COALESCE(note, '-') FROM orders WHERE id IN (1, 2) ORDER BY id"
            )
            .await,
            some(&["-", "new"]),
            "{policy:?}"
        );
    }
}
