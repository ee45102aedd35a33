//! Every Paimon type, with NULLs and extremes, arrives value for value (process TZ irrelevant).

mod common;

use common::*;
use pms_tests::mysql::{OwnServer, TestDb};
use pms_tests::paimon::Table;
use serde_json::json;

const COLUMNS: &[(&str, &str, &str)] = &[
    ("id", "BIGINT NOT NULL", "BIGINT NOT NULL PRIMARY KEY"),
    ("b", "BOOLEAN", "BOOLEAN"),
    ("ti", "TINYINT", "TINYINT"),
    ("si", "SMALLINT", "SMALLINT"),
    ("i", "INT", "INT"),
    ("bi", "BIGINT", "BIGINT"),
    ("f", "FLOAT", "FLOAT"),
    ("d", "DOUBLE", "DOUBLE"),
    ("dec38", "DECIMAL(38, 10)", "DECIMAL(38,10)"),
    ("dec5", "DECIMAL(5, 2)", "DECIMAL(5,2)"),
    ("c", "CHAR(5)", "CHAR(5)"),
    ("vc", "VARCHAR(20)", "VARCHAR(20)"),
    ("s", "STRING", "LONGTEXT"),
    ("bin", "BINARY(4)", "BINARY(4)"),
    ("vb", "VARBINARY(10)", "VARBINARY(10)"),
    ("by", "BYTES", "LONGBLOB"),
    ("dt", "DATE", "DATE"),
    ("tm", "TIME(3)", "TIME(3)"),
    ("ts0", "TIMESTAMP(0)", "DATETIME"),
    ("ts3", "TIMESTAMP(3)", "DATETIME(3)"),
    ("ts6", "TIMESTAMP(6)", "DATETIME(6)"),
    ("ts9", "TIMESTAMP(9)", "VARCHAR(29)"),
    ("ltz", "TIMESTAMP(6) WITH LOCAL TIME ZONE", "DATETIME(6)"),
    ("arr", "ARRAY<INT>", "JSON"),
    ("m", "MAP<STRING, INT>", "JSON"),
    ("r", "ROW<x INT, y STRING>", "JSON"),
];

/// MySQL `TIMESTAMP` columns (1970–2038 only), converted from the session time zone: the
/// worker's session must be in UTC whatever the server's global zone is.
const TIMESTAMP_COLUMNS: &[(&str, &str, &str)] = &[
    ("ts_mysql", "TIMESTAMP(3)", "TIMESTAMP(3) NULL"),
    (
        "ltz_mysql",
        "TIMESTAMP(3) WITH LOCAL TIME ZONE",
        "TIMESTAMP(3) NULL",
    ),
];

#[tokio::test]
async fn every_type_with_nulls_and_extremes() {
    round_trip(TestDb::new("types").await).await;
}

/// The same on a server whose globals differ from what the worker needs: a time zone five hours
/// from UTC, a non-strict SQL mode with `NO_BACKSLASH_ESCAPES`, latin1 as the default charset.
/// The pool resets a connection each time it is returned, so these globals come back on every
/// reused connection unless the session settings are applied again.
#[tokio::test]
async fn every_type_on_a_server_with_other_global_settings() {
    let server = OwnServer::start(&[
        "--default-time-zone=+05:00",
        "--sql-mode=NO_BACKSLASH_ESCAPES",
        "--character-set-server=latin1",
        "--collation-server=latin1_swedish_ci",
    ]);
    let db = TestDb::on(server.port, "odd_globals").await;
    assert_eq!(
        db.query_strings(
            "SELECT @@GLOBAL.time_zone, @@GLOBAL.sql_mode, @@GLOBAL.character_set_server"
        )
        .await,
        [vec![
            Some("+05:00".to_string()),
            Some("NO_BACKSLASH_ESCAPES".to_string()),
            Some("latin1".to_string())
        ]]
    );
    round_trip(db).await;
}

/// Every type, a max, a min and an all-NULL row: a full read (the bulk path into an empty
/// table), then the same values as changes (upserts), each read in a far-from-UTC process zone.
async fn round_trip(db: TestDb) {
    let columns: Vec<&(&str, &str, &str)> = COLUMNS.iter().chain(TIMESTAMP_COLUMNS).collect();
    let table = Table::create(json!({
        "columns": columns.iter().map(|(n, t, _)| json!({"name": n, "type": t})).collect::<Vec<_>>(),
        "primaryKeys": ["id"], "partitionKeys": [],
        "options": {"bucket": "1", "changelog-producer": "input"}
    }));
    let max = json!([1, true, 127, 32767, 2147483647i64, i64::MAX, 3.4028235e38, 1.7976931348623157e308,
        "9999999999999999999999999999.9999999999", "999.99", "abcde", "ＵＮＩＣＯＤＥ✓", "emoji 😀 𝄞 中文",
        "ffffffff", "00ff00ff00ff00ff00ff", "deadbeef", "9999-12-31", "23:59:59.999",
        "9999-12-31 23:59:59", "9999-12-31 23:59:59.999", "9999-12-31 23:59:59.999999", "2024-01-02 03:04:05.123456789",
        "2038-01-19 03:14:07.999999", [1, null, 3], {"a": 1, "ключ": null}, {"x": 7, "y": "nested 😀"}]);
    let min = json!([2, false, -128, -32768, -2147483648i64, i64::MIN, -1.17549435e-38, -2.2250738585072014e-308,
        "-9999999999999999999999999999.9999999999", "-999.99", "", "", "",
        "00000000", "", "", "1000-01-01", "00:00:00.000",
        "1000-01-01 00:00:00", "1000-01-01 00:00:00.001", "1000-01-01 00:00:00.000001",
        // TIMESTAMP(7..9) is read as Arrow nanoseconds, which only span 1677..2262 (see README, limits).
        "1700-01-01 00:00:00.000000001",
        "1970-01-01 00:00:00.000001", [], {}, {"x": null, "y": null}]);
    let mut max = max;
    let mut min = min;
    max.as_array_mut().unwrap().extend([
        json!("2038-01-19 03:14:07.999"),
        json!("2038-01-19 03:14:07.999"),
    ]);
    min.as_array_mut().unwrap().extend([
        json!("1970-01-01 00:00:01.001"),
        json!("1970-01-01 05:00:00.001"),
    ]);
    let nulls: Vec<serde_json::Value> = std::iter::once(json!(3))
        .chain((1..columns.len()).map(|_| serde_json::Value::Null))
        .collect();
    table.commits(vec![json!({"rows": [{"kind": "+I", "values": max}, {"kind": "+I", "values": min}, {"kind": "+I", "values": nulls}]})]);
    let ddl: Vec<String> = columns
        .iter()
        .map(|(n, _, m)| format!("`{n}` {m}"))
        .collect();
    db.exec(&format!(
        "CREATE TABLE t ({}) DEFAULT CHARSET = utf8mb4",
        ddl.join(", ")
    ))
    .await;
    let cfg = SyncConfig::builder(&table, &db).target_table("t").build();
    // A far-from-UTC process time zone must not shift any value.
    let out = cfg
        .command(&["--once"])
        .env("TZ", "Pacific/Kiritimati")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_synced(&table, &db, "t", None).await;
    // verify agrees: every type's stored form counts as the value written.
    cfg.assert_verified();

    // The same values arriving as changes (+U of every row, from the changelog).
    let mut updated = table.read(None);
    for row in &mut updated {
        row[1] = json!(row[1].as_bool().map(|b| !b));
    }
    table.commits(vec![json!({"rows": updated.iter().map(|v| json!({"kind": "+U", "values": v})).collect::<Vec<_>>()})]);
    let out = cfg
        .command(&["--once"])
        .env("TZ", "America/St_Johns")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_synced(&table, &db, "t", None).await;
    cfg.assert_verified();
    // ...and is not blind to a small change of a float or a time.
    db.exec("UPDATE t SET f = f / 2, ts6 = ts6 + INTERVAL 1 MICROSECOND WHERE id = 2")
        .await;
    let report = divergent(&cfg, &[]);
    assert!(
        report.contains("different: id=2 (columns f, ts6)"),
        "{report}"
    );
}

/// The usual serving table has `id BIGINT AUTO_INCREMENT PRIMARY KEY`. A Paimon key 0 is row
/// 0 there, through the full read's bulk path and the upserts and deletes of changes alike
/// (without `NO_AUTO_VALUE_ON_ZERO` MySQL would turn the 0 into the next AUTO_INCREMENT value).
#[tokio::test]
async fn a_key_0_into_an_auto_increment_column_stays_0() {
    let t = Table::create(json!({
        "columns": [{"name": "id", "type": "BIGINT NOT NULL"}, {"name": "v", "type": "INT"}],
        "primaryKeys": ["id"],
        "options": {"bucket": "1", "changelog-producer": "input"},
    }));
    t.commit(&[("+I", json!([0, 1])), ("+I", json!([1, 2]))]);
    let db = TestDb::new("auto_increment_0").await;
    db.exec("CREATE TABLE orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, v INT)")
        .await;
    let cfg = SyncConfig::builder(&t, &db).build();
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    t.commit(&[("-D", json!([0, 1])), ("+I", json!([2, 3]))]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    t.commit(&[("+I", json!([0, 4]))]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    assert_eq!(db.count("orders").await, 3);
}

/// TIMESTAMP(7..9) is read as Arrow nanoseconds, which hold only the years 1677–2262. A value
/// outside them (Paimon holds years 1–9999) stops the sync, naming the column and the value,
/// before anything of its file is written, in changes and in a full read; inside them every
/// digit arrives.
#[tokio::test]
async fn a_timestamp_9_outside_what_nanoseconds_hold_stops_the_sync() {
    for far in [
        "0001-01-01 00:00:00.000000001",
        "9999-12-31 23:59:59.999999999",
    ] {
        let t = Table::create(json!({
            "columns": [{"name": "id", "type": "BIGINT NOT NULL"}, {"name": "ts9", "type": "TIMESTAMP(9)"}],
            "primaryKeys": ["id"],
            "options": {"bucket": "1", "changelog-producer": "input"},
        }));
        t.commit(&[
            ("+I", json!([1, "1677-09-22 00:00:00.000000001"])),
            ("+I", json!([2, "2262-04-11 00:00:00.999999999"])),
        ]);
        let ddl = "CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, ts9 VARCHAR(29))";
        let db = TestDb::new("ts9_range").await;
        db.exec(ddl).await;
        let cfg = SyncConfig::builder(&t, &db).build();
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "orders", None).await;
        t.commit(&[("+I", json!([3, far]))]);
        let refused = |out: std::process::Output| {
            let log = stderr(&out);
            assert!(!out.status.success(), "{far}: {log}");
            assert!(
                log.contains("column ts9") && log.contains(&far[..19]) && log.contains("1677–2262"),
                "{far}: {log}"
            );
        };
        refused(cfg.run_once(&[]));
        assert_eq!(db.count("orders").await, 2, "nothing of it is written");
        let fresh = TestDb::new("ts9_range_full").await;
        fresh.exec(ddl).await;
        refused(SyncConfig::builder(&t, &fresh).build().run_once(&[]));
        assert_eq!(fresh.count("orders").await, 0);
    }
}
