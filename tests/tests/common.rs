//! Shared steps of the scenario tests.
#![allow(dead_code)]

use pms_tests::compare::assert_same_rows;
use pms_tests::mysql::TestDb;
use pms_tests::paimon::Table;
use serde_json::{json, Value as Json};

/// The core check: MySQL equals the reference read of `snapshot` (default latest).
pub async fn assert_synced(table: &Table, db: &TestDb, target: &str, snapshot: Option<i64>) {
    let reference = table.read(snapshot);
    let columns = table.compare_columns();
    let mysql = db.rows(target, &columns, &table.primary_keys).await;
    assert_same_rows(
        &format!(
            "{}.{} → {}",
            db.name,
            target,
            snapshot.map_or("latest".into(), |s| s.to_string())
        ),
        &columns,
        &reference,
        &mysql,
    );
}

/// An `orders`-shaped table: id BIGINT key, amount DECIMAL(10,2), status STRING, updated_at TIMESTAMP(3).
pub fn orders_table(options: Json, partitioned: bool) -> Table {
    let mut columns = vec![
        json!({"name": "id", "type": "BIGINT NOT NULL"}),
        json!({"name": "amount", "type": "DECIMAL(10, 2)"}),
        json!({"name": "status", "type": "STRING"}),
        json!({"name": "updated_at", "type": "TIMESTAMP(3)"}),
    ];
    let (pk, parts) = if partitioned {
        columns.push(json!({"name": "region", "type": "STRING NOT NULL"}));
        (json!(["id", "region"]), json!(["region"]))
    } else {
        (json!(["id"]), json!([]))
    };
    Table::create(
        json!({"columns": columns, "primaryKeys": pk, "partitionKeys": parts, "options": options}),
    )
}

pub const ORDERS_DDL: &str =
    "CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, amount DECIMAL(10,2), \
     status VARCHAR(64), updated_at DATETIME(3)) DEFAULT CHARSET = utf8mb4";

pub const ORDERS_PARTITIONED_DDL: &str = "CREATE TABLE orders (id BIGINT NOT NULL, region VARCHAR(16) NOT NULL, \
     amount DECIMAL(10,2), status VARCHAR(64), updated_at DATETIME(3), PRIMARY KEY (id, region)) DEFAULT CHARSET = utf8mb4";

/// `[id, amount, status, updated_at]` for an `+I`/`+U`/`-D` row.
pub fn order(id: i64, amount: &str, status: &str) -> Json {
    json!([
        id,
        amount,
        status,
        format!("2024-01-01 00:00:{:02}.{:03}", id % 60, id % 1000)
    ])
}

pub fn generate(from: i64, count: i64, kind: &str, salt: i64) -> Json {
    json!({"generate": {"shape": "orders", "from": from, "count": count, "kind": kind, "salt": salt}})
}

pub fn generate_step(from: i64, count: i64, step: i64, kind: &str, salt: i64) -> Json {
    json!({"generate": {"shape": "orders", "from": from, "count": count, "step": step, "kind": kind, "salt": salt}})
}

pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
