//! Bad input stops the worker before its first write, with a message that says what to do.

mod common;

use common::*;
use pms_tests::mysql::TestDb;
use pms_tests::paimon::Table;
use serde_json::json;

fn orders() -> Table {
    let t = orders_table(json!({"bucket": "1"}), false);
    t.commits(vec![generate(1, 20, "+I", 0)]);
    t
}

/// Runs `--once` against a target created by `ddl`; expects failure naming every `needles`, and an empty table.
async fn refused(table: &Table, name: &str, ddl: Option<&str>, needles: &[&str]) -> String {
    let db = TestDb::new(name).await;
    if let Some(ddl) = ddl {
        db.exec(ddl).await;
    }
    let cfg = SyncConfig::builder(table, &db).build();
    let out = cfg.run_once(&[]);
    let err = stderr(&out);
    assert!(
        !out.status.success(),
        "{name}: expected a refusal, got success:\n{err}"
    );
    for n in needles {
        assert!(
            err.contains(n),
            "{name}: the error should mention {n:?}:\n{err}"
        );
    }
    if ddl.is_some() {
        assert_eq!(
            db.count("orders").await,
            0,
            "{name}: nothing may be written"
        );
    }
    assert!(!err.contains(":pms@"), "the password must never be logged");
    err
}

#[tokio::test]
async fn every_unfit_target_is_refused_before_writing() {
    let t = orders();
    refused(
        &t,
        "missing_table",
        None,
        &[
            "does not exist",
            "CREATE TABLE `orders`",
            "PRIMARY KEY (`id`)",
        ],
    )
    .await;
    refused(
        &t,
        "no_key",
        Some("CREATE TABLE orders (id BIGINT NOT NULL, amount DECIMAL(10,2), status VARCHAR(64), updated_at DATETIME(3))"),
        &["needs a PRIMARY KEY", "no PRIMARY KEY or UNIQUE key"],
    )
    .await;
    refused(
        &t,
        "wrong_key",
        Some("CREATE TABLE orders (id BIGINT NOT NULL, amount DECIMAL(10,2), status VARCHAR(64), updated_at DATETIME(3), PRIMARY KEY (id, status))"),
        &["exactly the Paimon key (`id`)", "PRIMARY(id, status)"],
    )
    .await;
    refused(
        &t,
        "extra_unique",
        Some("CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, amount DECIMAL(10,2), status VARCHAR(64), updated_at DATETIME(3), UNIQUE KEY uk_status (status))"),
        &["uk_status", "allowExtraUniqueKeys"],
    )
    .await;
    refused(
        &t,
        "missing_column",
        Some("CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, amount DECIMAL(10,2), updated_at DATETIME(3))"),
        &["\"status\" has no MySQL column", "sink.columns.exclude"],
    )
    .await;
    refused(
        &t,
        "unmapped_not_null",
        Some("CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, amount DECIMAL(10,2), status VARCHAR(64), updated_at DATETIME(3), owner VARCHAR(10) NOT NULL)"),
        &["\"owner\" is NOT NULL without a default"],
    )
    .await;
    refused(
        &t,
        "narrow_types",
        Some("CREATE TABLE orders (id INT NOT NULL PRIMARY KEY, amount DECIMAL(6,1), status VARCHAR(64) CHARACTER SET utf8mb3, updated_at DATETIME)"),
        &["\"id\": Paimon BIGINT", "\"amount\"", "scale 1 < 2", "utf8mb4", "fraction digits 0 < 3"],
    )
    .await;
}

#[tokio::test]
async fn extra_unique_key_can_be_accepted_explicitly() {
    let t = orders();
    let db = TestDb::new("extra_unique_ok").await;
    db.exec("CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, amount DECIMAL(10,2), status VARCHAR(64), updated_at DATETIME(3), UNIQUE KEY uk_upd (updated_at))").await;
    let cfg = SyncConfig::builder(&t, &db)
        .allow_extra_unique_keys(true)
        .build();
    let out = cfg.run_once(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("uk_upd"),
        "the risk is still logged as a warning"
    );
    assert_synced(&t, &db, "orders", None).await;
}

#[tokio::test]
async fn columns_can_be_renamed_and_excluded() {
    let t = orders();
    let db = TestDb::new("mapping").await;
    db.exec("CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, amount_usd DECIMAL(10,2), updated_at DATETIME(3))").await;
    let cfg = SyncConfig::builder(&t, &db)
        .columns(
            Columns::default()
                .exclude(&["status"])
                .rename("amount", "amount_usd"),
        )
        .build();
    cfg.sync_once(&[]);
    let reference = t.read(None);
    let mysql = db
        .query_strings("SELECT id, amount_usd FROM orders ORDER BY id")
        .await;
    assert_eq!(mysql.len(), reference.len());
    for (r, m) in reference.iter().zip(&mysql) {
        assert_eq!(m[0].as_deref(), Some(r[0].to_string().as_str()));
        assert_eq!(m[1].as_deref(), r[1].as_str());
    }
}

#[tokio::test]
async fn bad_credentials_are_reported_without_the_password() {
    let t = orders();
    let db = TestDb::new("bad_credentials").await;
    db.exec(ORDERS_DDL).await;
    let url = db.url().replace("pms:pms@", "pms:wrong-secret@");
    let cfg = SyncConfig::builder(&t, &db).sink_url(&url).build();
    let out = cfg.run_once(&[]);
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("Access denied") && err.contains("mysql://pms@127.0.0.1"),
        "{err}"
    );
    assert!(
        !err.contains("wrong-secret"),
        "the password must never be logged:\n{err}"
    );
    // MYSQL_PASSWORD from the environment wins over the URL's.
    let out = cfg
        .command(&["--once"])
        .env("MYSQL_PASSWORD", "pms")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_synced(&t, &db, "orders", None).await;
}

#[tokio::test]
async fn expired_resume_snapshot_is_an_error_that_names_it() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 20, "+I", 0)]);
    let db = TestDb::new("expired").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    cfg.sync_once(&[]);
    // Four more snapshots, then expire all but the newest two.
    for i in 0..4 {
        t.commits(vec![generate(100 + i * 10, 5, "+I", 0)]);
    }
    // The worker's consumer file (nextSnapshot = 1, the applied snapshot) keeps Paimon from expiring what it still needs.
    t.expire(2);
    assert!(
        t.table_dir().join("snapshot/snapshot-2").exists(),
        "the consumer file must protect snapshot 2"
    );
    // Without it (e.g. after consumer.expiration-time), snapshot 2 expires: the next read must fail loudly.
    std::fs::remove_file(t.table_dir().join("consumer/consumer-pms-db-t")).unwrap();
    t.expire(2);
    assert!(!t.table_dir().join("snapshot/snapshot-2").exists());
    let before = db.count("orders").await;
    let out = cfg.run_once(&[]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("snapshot 2 of db.t has expired") && err.contains("rebuild"),
        "{err}"
    );
    assert_eq!(
        db.count("orders").await,
        before,
        "nothing is written past an expired snapshot"
    );
}

#[tokio::test]
async fn corrupt_checkpoint_and_corrupt_data_file_stop_with_context() {
    let t = orders();
    let db = TestDb::new("corrupt").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    std::fs::write(cfg.checkpoint_path(0, 1), b"{\"snapshotId\": ").unwrap();
    let out = cfg.run_once(&[]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("is corrupt") && stderr(&out).contains("checkpoint.json"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_file(cfg.checkpoint_path(0, 1)).unwrap();

    // Truncate every data file: the read fails, nothing is written, no checkpoint advances.
    for entry in walk(&t.table_dir()) {
        if entry.extension().is_some_and(|e| e == "parquet") {
            let bytes = std::fs::read(&entry).unwrap();
            std::fs::write(&entry, &bytes[..bytes.len() / 2]).unwrap();
        }
    }
    let out = cfg.run_once(&[]);
    assert!(
        !out.status.success(),
        "a corrupt data file must fail the run"
    );
    assert!(stderr(&out).contains("db.t"), "{}", stderr(&out));
    assert_eq!(db.count("orders").await, 0);
    let cp = std::fs::read_to_string(cfg.checkpoint_path(0, 1)).unwrap_or_default();
    assert!(
        !cp.contains("incremental"),
        "no checkpoint may claim the failed read: {cp}"
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A text key column must tell apart every two keys Paimon tells apart: a case-insensitive or
/// PAD SPACE collation is refused (naming the collation to use), a binary NO PAD one syncs
/// `'a'`, `'A'`, `'x'` and `'x '` as four rows.
#[tokio::test]
async fn text_keys_need_a_binary_no_pad_collation() {
    let t = Table::create(json!({
        "columns": [{"name": "code", "type": "VARCHAR(16) NOT NULL"}, {"name": "v", "type": "INT"}],
        "primaryKeys": ["code"],
        "options": {"bucket": "1"},
    }));
    t.commit(&[
        ("+I", json!(["a", 1])),
        ("+I", json!(["A", 2])),
        ("+I", json!(["x", 3])),
        ("+I", json!(["x ", 4])),
    ]);
    let ddl = |collation: &str| {
        format!("CREATE TABLE orders (code VARCHAR(16) CHARACTER SET utf8mb4 {collation} NOT NULL PRIMARY KEY, v INT)")
    };
    refused(
        &t,
        "key_ci",
        Some(&ddl("COLLATE utf8mb4_general_ci")),
        &["collation utf8mb4_general_ci", "utf8mb4_nopad_bin"],
    )
    .await;
    refused(
        &t,
        "key_pad",
        Some(&ddl("COLLATE utf8mb4_bin")),
        &["collation utf8mb4_bin", "'x' = 'x '"],
    )
    .await;
    let db = TestDb::new("key_nopad").await;
    db.exec(&ddl("COLLATE utf8mb4_nopad_bin")).await;
    SyncConfig::builder(&t, &db).build().sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    assert_eq!(db.count("orders").await, 4);
}

/// `LOAD DATA LOCAL` turns data errors into warnings even in strict mode (a row a CHECK
/// constraint refuses is skipped). The bulk load runs in a transaction that a warning rolls
/// back; the upserts then refuse the row, naming its key, and nothing of the batch is written.
#[tokio::test]
async fn a_bulk_load_with_warnings_is_rolled_back_not_kept() {
    let t = orders_table(json!({"bucket": "1"}), false);
    t.commit(&[
        ("+I", order(1, "1.00", "NEW")),
        ("+I", order(2, "2.00", "BAD")),
    ]);
    let db = TestDb::new("bulk_warnings").await;
    db.exec("CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, amount DECIMAL(10,2), status VARCHAR(64), updated_at DATETIME(3), CONSTRAINT no_bad CHECK (status <> 'BAD'))")
        .await;
    let out = SyncConfig::builder(&t, &db).build().run_once(&[]);
    let log = stderr(&out);
    assert!(!out.status.success(), "{log}");
    assert!(
        log.contains("the bulk load failed: writing this batch with upserts"),
        "{log}"
    );
    assert!(log.contains("for key (2)"), "{log}");
    assert_eq!(db.count("orders").await, 0, "nothing of the batch is kept");
}

/// A least-privilege user: each privilege the sync needs on its table is checked before the
/// first write and the missing ones are named; exactly-once also needs the progress table.
#[tokio::test]
async fn missing_privileges_are_named_before_any_write() {
    let t = orders();
    let db = TestDb::new("privileges").await;
    db.exec(ORDERS_DDL).await;
    let user = format!("least{}", std::process::id());
    db.exec(&format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'"))
        .await;
    let grant =
        |what: &str, on: &str| format!("GRANT {what} ON `{}`.{on} TO '{user}'@'%'", db.name);
    db.exec(&grant("SELECT, INSERT", "`orders`")).await;
    let url = format!("mysql://{user}:pw@127.0.0.1:{}/{}", db.port, db.name);
    let cfg = SyncConfig::builder_for_url(&t, &url).build();
    let out = cfg.run_once(&[]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("the MySQL user lacks UPDATE, DELETE on it"),
        "{}",
        stderr(&out)
    );
    assert_eq!(db.count("orders").await, 0, "nothing written");
    db.exec(&grant("UPDATE, DELETE", "`orders`")).await;
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    let exactly_once = SyncConfig::builder_for_url(&t, &url)
        .delivery(Delivery::ExactlyOnce)
        .consumer_id("eo")
        .build();
    let out = exactly_once.run_once(&[]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(
            "GRANT CREATE, SELECT, INSERT, UPDATE, ALTER ON <database>._paimon_sync_progress"
        ),
        "{}",
        stderr(&out)
    );
    db.exec(&grant("CREATE, SELECT, INSERT, UPDATE, ALTER", "*"))
        .await;
    exactly_once.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
}

/// A key column must hold every Paimon key distinctly. Refused before any write, each naming
/// the fix: a key on a column prefix (`code(4)`, the utf8mb4 workaround, any TEXT key), a CHAR
/// column (drops trailing spaces: `'x'` = `'x '`), a BINARY one (pads with zero bytes).
/// VARCHAR with a binary NO PAD collation and VARBINARY keep them apart.
#[tokio::test]
async fn keys_that_mysql_would_make_one_row_are_refused() {
    let text = Table::create(json!({
        "columns": [{"name": "code", "type": "VARCHAR(16) NOT NULL"}, {"name": "v", "type": "INT"}],
        "primaryKeys": ["code"],
        "options": {"bucket": "1"},
    }));
    text.commit(&[
        ("+I", json!(["abcd1", 1])),
        ("+I", json!(["abcd2", 2])),
        ("+I", json!(["x", 3])),
        ("+I", json!(["x ", 4])),
    ]);
    let ddl = |column: &str, key: &str| {
        format!("CREATE TABLE orders ({column}, v INT, PRIMARY KEY ({key}))")
    };
    refused(
        &text,
        "key_prefix",
        Some(&ddl(
            "code VARCHAR(300) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL",
            "code(4)",
        )),
        &["PRIMARY(code(4))", "prefix part such as code(4)"],
    )
    .await;
    refused(
        &text,
        "key_text",
        Some(&ddl(
            "code TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL",
            "code(16)",
        )),
        &["PRIMARY(code(16))"],
    )
    .await;
    refused(
        &text,
        "key_char",
        Some(&ddl(
            "code CHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL",
            "code",
        )),
        &[
            "is CHAR, which drops trailing spaces",
            "MODIFY `code` VARCHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin",
        ],
    )
    .await;

    let bytes = Table::create(json!({
        "columns": [{"name": "k", "type": "VARBINARY(4) NOT NULL"}, {"name": "v", "type": "INT"}],
        "primaryKeys": ["k"],
        "options": {"bucket": "1"},
    }));
    bytes.commit(&[("+I", json!(["61", 1])), ("+I", json!(["6100", 2]))]);
    refused(
        &bytes,
        "key_binary",
        Some(&ddl("k BINARY(4) NOT NULL", "k")),
        &[
            "is BINARY, which pads values with zero bytes",
            "MODIFY `k` VARBINARY(4)",
        ],
    )
    .await;
    let db = TestDb::new("key_varbinary").await;
    db.exec(&ddl("k VARBINARY(4) NOT NULL", "k")).await;
    SyncConfig::builder(&bytes, &db).build().sync_once(&[]);
    assert_synced(&bytes, &db, "orders", None).await;
    assert_eq!(db.count("orders").await, 2);
}

/// Values MySQL would store as something else without an error stop the sync, naming the key
/// and the column, before anything of their batch is written: a NULL into `TIMESTAMP NOT NULL`
/// (MariaDB stores the current time), and text longer than its VARCHAR by trailing spaces
/// (cut off with only a note, even in strict mode), in a value or a key column.
#[tokio::test]
async fn values_mysql_would_store_otherwise_stop_the_sync() {
    let t = orders_table(json!({"bucket": "1"}), false);
    t.commit(&[
        ("+I", order(1, "1.00", "NEW")),
        ("+I", json!([2, "2.00", "NEW", null])),
    ]);
    refused(
        &t,
        "null_timestamp",
        Some("CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, amount DECIMAL(10,2), status VARCHAR(64), updated_at TIMESTAMP(3) NOT NULL)"),
        &["key (2), column \"updated_at\"", "NULL, and its MySQL column is NOT NULL"],
    )
    .await;

    let t = orders_table(json!({"bucket": "1"}), false);
    t.commit(&[
        ("+I", order(1, "1.00", "ab")),
        ("+I", order(2, "2.00", "ab   ")),
    ]);
    refused(
        &t,
        "trailing_spaces_value",
        Some("CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, amount DECIMAL(10,2), status VARCHAR(3), updated_at DATETIME(3))"),
        &["key (2), column \"status\"", "a text of 5 characters, and its MySQL column holds 3"],
    )
    .await;

    let keys = Table::create(json!({
        "columns": [{"name": "code", "type": "STRING NOT NULL"}, {"name": "v", "type": "INT"}],
        "primaryKeys": ["code"],
        "options": {"bucket": "1"},
    }));
    keys.commit(&[("+I", json!(["abc", 1])), ("+I", json!(["abc ", 2]))]);
    refused(
        &keys,
        "trailing_spaces_key",
        Some("CREATE TABLE orders (code VARCHAR(3) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY, v INT)"),
        &["column \"code\"", "a text of 4 characters, and its MySQL column holds 3"],
    )
    .await;
}
