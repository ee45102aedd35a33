//! `pms-worker check`, the pre-flight, on real MariaDB and tables written by Paimon Java: a good
//! setup passes (exit 0), and each misconfiguration we know of is a ✗ (exit 1) or ⚠ with its fix.
//! Server-wide settings (local_infile, binlog_format, max_allowed_packet) are judged by unit
//! tests in worker/src/check/mysql.rs: changing them here would change every other test's server.

mod common;

use common::*;
use pms_tests::mysql::TestDb;
use pms_tests::paimon::Table;
use serde_json::{json, Value as Json};

/// `check --output json` on `cfg`: the exit code and the report.
fn check(cfg: &SyncConfig, extra: &[&str]) -> (i32, Json) {
    let mut args = vec!["--output", "json"];
    args.extend_from_slice(extra);
    let out = cfg
        .subcommand("check", &args)
        .output()
        .expect("run pms-worker check");
    let report: Json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check's JSON ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            stderr(&out)
        )
    });
    (out.status.code().unwrap_or(-1), report)
}

/// The item `check` of the report, as (status, message, fix).
fn item(report: &Json, check: &str, status: &str) -> (String, String) {
    let found = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["check"] == check && i["status"] == status)
        .unwrap_or_else(|| panic!("no {status} {check} in {report:#}"));
    (
        found["message"].as_str().unwrap_or_default().to_string(),
        found["fix"].as_str().unwrap_or_default().to_string(),
    )
}

fn orders() -> Table {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 200, "+I", 0)]);
    t
}

#[tokio::test]
async fn a_good_setup_passes_and_the_text_shows_each_check() {
    let t = orders();
    let db = TestDb::new("check_good").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    let (code, report) = check(&cfg, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["failed"], 0, "{report:#}");
    for c in [
        "config.valid",
        "paimon.table",
        "paimon.latest_snapshot",
        "paimon.consumer",
        "paimon.retention",
        "mysql.connect",
        "mysql.table",
        "mysql.privileges",
        "mysql.triggers",
        "mysql.foreign_keys",
    ] {
        item(&report, c, "pass");
    }
    let (message, _) = item(&report, "paimon.latest_snapshot", "pass");
    assert!(message.contains("about 200 records"), "{message}");
    let out = cfg.subcommand("check", &[]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("✓ ") && text.contains("0 failed"), "{text}");
    assert_eq!(db.count("orders").await, 0, "check writes nothing");
}

#[tokio::test]
async fn a_misspelt_config_field_is_a_failure_not_ignored() {
    let t = orders();
    let db = TestDb::new("check_typo").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    let text = std::fs::read_to_string(&cfg.path).unwrap();
    let typo = text.replacen("sink:", "sink:\n  maxRow: 10", 1);
    assert_ne!(typo, text);
    std::fs::write(&cfg.path, typo).unwrap();
    let (code, report) = check(&cfg, &[]);
    assert_eq!(code, 1);
    let (message, fix) = item(&report, "config.valid", "fail");
    assert!(message.contains("maxRow"), "{message}");
    assert!(fix.contains("misspelt"), "{fix}");
}

#[tokio::test]
async fn mysql_table_problems_are_failures_with_the_statement_that_fixes_them() {
    let t = orders();
    // Missing: a CREATE TABLE that fits.
    let db = TestDb::new("check_missing").await;
    let cfg = SyncConfig::builder(&t, &db).build();
    let (code, report) = check(&cfg, &[]);
    assert_eq!(code, 1);
    let (message, fix) = item(&report, "mysql.table", "fail");
    assert!(message.contains("does not exist"), "{message}");
    assert!(fix.contains("CREATE TABLE"), "{fix}");
    // A key that differs from the Paimon key.
    let db = TestDb::new("check_key").await;
    db.exec(
        "CREATE TABLE orders (id BIGINT NOT NULL, amount DECIMAL(10,2), status VARCHAR(64), \
             updated_at DATETIME(3), PRIMARY KEY (id, status)) DEFAULT CHARSET = utf8mb4",
    )
    .await;
    let (code, report) = check(&SyncConfig::builder(&t, &db).build(), &[]);
    assert_eq!(code, 1);
    let (message, _) = item(&report, "mysql.table", "fail");
    assert!(message.to_lowercase().contains("key"), "{message}");
    // A column too narrow for its values.
    let db = TestDb::new("check_narrow").await;
    db.exec("CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, amount DECIMAL(4,2), status VARCHAR(64), \
             updated_at DATETIME(3)) DEFAULT CHARSET = utf8mb4").await;
    let (code, report) = check(&SyncConfig::builder(&t, &db).build(), &[]);
    assert_eq!(code, 1);
    let (message, fix) = item(&report, "mysql.table", "fail");
    assert!(message.contains("amount"), "{message}");
    assert_eq!(fix, "ALTER TABLE … MODIFY `amount` DECIMAL(10, 2)");
    // Everything wrong at once: each problem once, the key's too, though its column does not
    // fit either (it used to hide the key check and read as an unmapped NOT NULL column).
    let db = TestDb::new("check_all_wrong").await;
    db.exec(
        "CREATE TABLE orders (id INT NOT NULL, status VARCHAR(8) NOT NULL, amount FLOAT, \
             PRIMARY KEY (id, status)) DEFAULT CHARSET = utf8mb4",
    )
    .await;
    let (code, report) = check(&SyncConfig::builder(&t, &db).build(), &[]);
    assert_eq!(code, 1);
    let failed: Vec<(String, String)> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["check"] == "mysql.table" && i["status"] == "fail")
        .map(|i| {
            let text = |f: &str| i[f].as_str().unwrap_or_default().to_string();
            (text("message"), text("fix"))
        })
        .collect();
    let with = |text: &str| failed.iter().filter(|(m, _)| m.contains(text)).count();
    assert_eq!(with("exactly the Paimon key"), 1, "{failed:#?}");
    assert!(
        failed
            .iter()
            .any(|(_, fix)| fix == "ALTER TABLE … DROP PRIMARY KEY, ADD PRIMARY KEY (`id`)"),
        "{failed:#?}"
    );
    assert_eq!(
        with("\"id\": Paimon BIGINT NOT NULL does not fit"),
        1,
        "{failed:#?}"
    );
    assert_eq!(with("\"updated_at\" has no MySQL column"), 1, "{failed:#?}");
    assert_eq!(with("NOT NULL without a default"), 0, "{failed:#?}");
    assert!(
        failed.iter().all(|(_, fix)| fix != "see the message"),
        "{failed:#?}"
    );
}

#[tokio::test]
async fn an_unsupported_table_shape_names_the_option_to_change() {
    let t = orders_table(
        json!({"bucket": "1", "merge-engine": "partial-update", "changelog-producer": "input"}),
        false,
    );
    t.commits(vec![generate(1, 10, "+I", 0)]);
    let db = TestDb::new("check_shape").await;
    db.exec(ORDERS_DDL).await;
    let (code, report) = check(&SyncConfig::builder(&t, &db).build(), &[]);
    assert_eq!(code, 1);
    let (message, _) = item(&report, "paimon.table", "fail");
    assert!(message.contains("changelog-producer = lookup"), "{message}");
    // The MySQL side is still reported, not compared.
    item(&report, "mysql.connect", "pass");
    item(&report, "mysql.table", "fail");
}

#[tokio::test]
async fn bad_credentials_fail_with_where_to_fix_them_and_no_password() {
    let t = orders();
    let db = TestDb::new("check_password").await;
    db.exec(ORDERS_DDL).await;
    let url = db.url().replace("pms:pms@", "pms:wrong-secret@");
    let cfg = SyncConfig::builder(&t, &db).sink_url(&url).build();
    let out = cfg.subcommand("check", &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(all.contains("✗") && all.contains("Access denied"), "{all}");
    assert!(all.contains("credentialsSecretRef"), "{all}");
    assert!(
        !all.contains("wrong-secret"),
        "the password must never be shown:\n{all}"
    );
}

#[tokio::test]
async fn missing_privileges_fail_with_the_grant() {
    let t = orders();
    let db = TestDb::new("check_grants").await;
    db.exec(ORDERS_DDL).await;
    let user = format!("check{}", std::process::id());
    db.exec(&format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'"))
        .await;
    db.exec(&format!(
        "GRANT SELECT ON `{}`.`orders` TO '{user}'@'%'",
        db.name
    ))
    .await;
    let url = format!("mysql://{user}:pw@127.0.0.1:{}/{}", db.port, db.name);
    let (code, report) = check(&SyncConfig::builder_for_url(&t, &url).build(), &[]);
    assert_eq!(code, 1);
    let (message, fix) = item(&report, "mysql.privileges", "fail");
    assert!(message.contains("INSERT, UPDATE, DELETE"), "{message}");
    assert!(
        fix.starts_with("GRANT SELECT, INSERT, UPDATE, DELETE"),
        "{fix}"
    );
    // Triggers are hidden from a user without TRIGGER: not "none", but "can't tell".
    let (message, _) = item(&report, "mysql.triggers", "warn");
    assert!(message.contains("TRIGGER privilege"), "{message}");
    // A rebuild would need more: a warning. Exactly-once needs its progress table: a failure.
    let (_, fix) = item(&report, "mysql.privileges_rebuild", "warn");
    assert!(fix.starts_with("GRANT CREATE, DROP, ALTER"), "{fix}");
    db.exec(&format!(
        "GRANT INSERT, UPDATE, DELETE ON `{}`.`orders` TO '{user}'@'%'",
        db.name
    ))
    .await;
    let exactly_once = SyncConfig::builder_for_url(&t, &url)
        .delivery(Delivery::ExactlyOnce)
        .build();
    let (code, report) = check(&exactly_once, &[]);
    assert_eq!(code, 1, "{report:#}");
    item(&report, "mysql.privileges", "pass");
    let (message, fix) = item(&report, "mysql.privileges_exactly_once", "fail");
    assert!(message.contains("_paimon_sync_progress"), "{message}");
    assert!(
        fix.contains("CREATE, SELECT, INSERT, UPDATE, ALTER"),
        "{fix}"
    );
    db.exec(&format!("GRANT ALL ON `{}`.* TO '{user}'@'%'", db.name))
        .await;
    let (code, report) = check(&exactly_once, &[]);
    assert_eq!(code, 0, "{report:#}");
    item(&report, "mysql.privileges_exactly_once", "pass");
    item(&report, "mysql.privileges_rebuild", "pass");
}

/// A managed server (RDS, Aurora, Cloud SQL, Azure) gives its admin user no SUPER (nor FILE):
/// `SET GLOBAL` is refused there, so `check` names the provider's parameter instead, and a sync
/// (exactly-once, the bulk path included) runs with those grants alone. The user here has the
/// grants of an RDS for MySQL master user, on MariaDB.
#[tokio::test]
async fn a_managed_servers_admin_user_gets_fixes_it_can_apply_and_syncs() {
    let t = orders();
    let db = TestDb::new("check_managed").await;
    // A row of up to 4 GiB: more than max_allowed_packet, so check suggests raising it.
    db.exec(&ORDERS_DDL.replace("status VARCHAR(64)", "status LONGTEXT"))
        .await;
    let user = format!("rdsadmin{}", std::process::id());
    db.exec(&format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'"))
        .await;
    db.exec(&format!(
        "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, RELOAD, PROCESS, REFERENCES, INDEX, ALTER, \
         SHOW DATABASES, CREATE TEMPORARY TABLES, LOCK TABLES, EXECUTE, REPLICATION SLAVE, REPLICATION CLIENT, \
         CREATE VIEW, SHOW VIEW, CREATE ROUTINE, ALTER ROUTINE, CREATE USER, EVENT, TRIGGER ON *.* TO '{user}'@'%' \
         WITH GRANT OPTION"
    ))
    .await;
    let url = format!("mysql://{user}:pw@127.0.0.1:{}/{}", db.port, db.name);
    let managed = SyncConfig::builder_for_url(&t, &url)
        .delivery(Delivery::ExactlyOnce)
        .build();
    let (code, report) = check(&managed, &[]);
    assert_eq!(code, 0, "warnings only: {report:#}");
    let (_, fix) = item(&report, "mysql.max_allowed_packet", "warn");
    assert!(
        !fix.starts_with("SET GLOBAL")
            && fix.contains("max_allowed_packet = 1073741824 in the server's parameters")
            && fix.contains("DB parameter group"),
        "{fix}"
    );
    item(&report, "mysql.privileges_exactly_once", "pass");
    // The test servers' own user may SET GLOBAL: told so.
    let (code, report) = check(&SyncConfig::builder(&t, &db).build(), &[]);
    assert_eq!(code, 0, "{report:#}");
    let (_, fix) = item(&report, "mysql.max_allowed_packet", "warn");
    assert!(fix.starts_with("SET GLOBAL max_allowed_packet"), "{fix}");
    // The sync itself needs nothing a managed server withholds.
    managed.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    t.commits(vec![generate(1, 5, "-D", 0), generate(100, 110, "+I", 1)]);
    managed.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
}

/// A `source.filter` that names no column of the table, or compares one with a value of
/// another type, is a ✗ of `check` naming it, before any sync writes.
#[tokio::test]
async fn a_filter_that_does_not_fit_the_table_is_named() {
    let t = orders();
    let db = TestDb::new("check_filter").await;
    db.exec(ORDERS_DDL).await;
    for (filter, said) in [
        ("colour = 'red'", "no column \"colour\""),
        ("amount = 'ten'", "use a number"),
    ] {
        let (code, report) = check(&SyncConfig::builder(&t, &db).filter(filter).build(), &[]);
        assert_eq!(code, 1, "{report:#}");
        let (message, _) = item(&report, "paimon.table", "fail");
        assert!(message.contains(said), "{message}");
    }
    let (code, report) = check(
        &SyncConfig::builder(&t, &db).filter("amount >= 1.5").build(),
        &[],
    );
    assert_eq!(code, 0, "{report:#}");
}

#[tokio::test]
async fn triggers_and_foreign_keys_are_warnings_that_say_what_they_mean() {
    let t = orders();
    let db = TestDb::new("check_features").await;
    db.exec(ORDERS_DDL).await;
    db.exec("CREATE TABLE audit (id BIGINT, at DATETIME)").await;
    db.exec("CREATE TRIGGER orders_audit AFTER INSERT ON orders FOR EACH ROW INSERT INTO audit VALUES (NEW.id, NOW())").await;
    db.exec(
        "CREATE TABLE order_lines (line BIGINT PRIMARY KEY, order_id BIGINT NOT NULL, \
             FOREIGN KEY lines_order (order_id) REFERENCES orders (id)) ENGINE = InnoDB",
    )
    .await;
    let (code, report) = check(&SyncConfig::builder(&t, &db).build(), &[]);
    assert_eq!(code, 0, "warnings only: {report:#}");
    let (message, _) = item(&report, "mysql.triggers", "warn");
    assert!(
        message.contains("orders_audit (AFTER INSERT)") && message.contains("rebuild"),
        "{message}"
    );
    let (message, fix) = item(&report, "mysql.foreign_keys", "warn");
    assert!(message.contains("order_lines → orders"), "{message}");
    assert!(fix.contains("DROP FOREIGN KEY"), "{fix}");
}

#[tokio::test]
async fn retention_shorter_than_the_downtime_or_the_full_load_is_warned() {
    let t = orders_table(
        json!({"bucket": "1", "changelog-producer": "input", "consumer.expiration-time": "30 min",
               "snapshot.time-retained": "10 s"}),
        false,
    );
    t.commits(vec![generate(1, 10, "+I", 0)]);
    let db = TestDb::new("check_retention").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    let (code, report) = check(&cfg, &["--max-downtime", "2h"]);
    assert_eq!(code, 0, "{report:#}");
    let (message, fix) = item(&report, "paimon.consumer", "warn");
    assert!(
        message.contains("30 min") && message.contains("rebuild"),
        "{message}"
    );
    assert!(fix.contains("'consumer.expiration-time' = '2 h'"), "{fix}");
    let (_, fix) = item(&report, "paimon.retention", "warn");
    assert!(fix.contains("snapshot.time-retained"), "{fix}");
    // Within the downtime allowed: no warning.
    let (_, report) = check(&cfg, &["--max-downtime", "20m"]);
    item(&report, "paimon.consumer", "pass");
}

#[tokio::test]
async fn an_unbounded_column_over_max_allowed_packet_is_warned() {
    let t = orders();
    let db = TestDb::new("check_packet").await;
    db.exec("CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, amount DECIMAL(10,2), status LONGTEXT, \
             updated_at DATETIME(3)) DEFAULT CHARSET = utf8mb4").await;
    let (_, report) = check(&SyncConfig::builder(&t, &db).build(), &[]);
    let (message, fix) = item(&report, "mysql.max_allowed_packet", "warn");
    assert!(message.contains("status"), "{message}");
    assert!(fix.starts_with("SET GLOBAL max_allowed_packet"), "{fix}");
}
