//! `bench --memory`: the worker's peak memory where what it holds grows with the data, next to
//! the pod's default limit. An INSERT OVERWRITE of a partition of `keys` keys (the keys of a
//! bucket held in hash partitions within `maxBufferBytes`), and `verify --live` of a table in
//! which every one of `keys` rows differs (three rounds, each key remembered as a fingerprint).

use std::path::Path;

use serde_json::json;

use super::expected::Expected;
use super::{config, orders, run, Measurement};
use crate::fixtures::ORDERS_DDL;
use crate::mysql::TestDb;

pub const MEMORY: &str =
    "memory: what grows with the data (default maxBufferBytes 64 MiB, pod limit 384 MiB)";

/// Both runs on the `orders` table of `keys` rows, one bucket (one partition, one key group).
pub async fn measure(keys: i64, dir: &Path, results: &mut Vec<Measurement>) {
    let table = orders(keys, 1);
    let db = TestDb::new("bench_memory").await;
    db.exec(ORDERS_DDL).await;
    let cfg = config(&table, &db).max_rows(10_000).write_in(dir, "memory");
    run::run_once(&cfg.path, &[]);
    // The table overwritten by as many rows, half of them new: half the keys rewritten, half
    // deleted, as many inserted.
    let from = keys / 2 + 1;
    table.commits(vec![json!({"generate": {
        "shape": "orders", "from": from, "count": keys, "kind": "+I", "salt": 1, "overwrite": true
    }})]);
    let overwrite = run::run_once(&cfg.path, &[]);
    Expected {
        rows: from - 1 + keys,
        kept: &|id| id >= from,
        ..Expected::all(0, 1)
    }
    .check(&db, "INSERT OVERWRITE")
    .await;
    results.push(Measurement::worker(
        MEMORY,
        format!(
            "INSERT OVERWRITE of one {keys}-key partition ({} deleted, {keys} upserted)",
            from - 1
        ),
        keys as u64,
        10_000,
        &overwrite,
        None,
    ));
    // Every row of MySQL changed behind the sync's back.
    db.exec("UPDATE orders SET status = CONCAT(status, '!')")
        .await;
    let live = run::verify_live_divergent(&cfg.path);
    results.push(Measurement::worker(
        MEMORY,
        format!("verify --live, all {keys} rows differing (3 rounds)"),
        keys as u64,
        0,
        &live,
        None,
    ));
}
