//! Freshness (a Paimon commit → its row visible in MySQL) of a continuous worker, and how long
//! a fresh worker takes from its start to its first written row.

use std::path::Path;
use std::time::{Duration, Instant};

use mysql_async::prelude::*;

use super::{config, percentile, run};
use crate::fixtures::{generate, ORDERS_DDL};
use crate::mysql::TestDb;
use crate::paimon::Table;
use crate::worker::SyncConfig;

/// What [`measure`] found.
pub struct Freshness {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub first_write: Duration,
}

/// Commits single-row snapshots to `table` (`rows` rows so far) while a continuous worker syncs
/// it into `db`, resuming from `synced`'s checkpoint; measures commit → visible. Then a fresh
/// worker's start → first write, into an empty table of its own.
pub async fn measure(
    table: &Table,
    db: &TestDb,
    synced: &SyncConfig,
    dir: &Path,
    rows: i64,
) -> Freshness {
    let cfg = config(table, db)
        .max_rows(1000)
        .flush_interval(Duration::from_millis(200))
        .write_in(dir, "fresh");
    // Reuse the synced checkpoint: only new snapshots are read.
    std::fs::copy(synced.checkpoint_path(0, 1), cfg.checkpoint_path(0, 1)).unwrap();
    let mut child = run::spawn_continuous(&cfg.path);
    let pool = mysql_async::Pool::new(mysql_async::Opts::from_url(&db.url()).unwrap());
    let mut conn = pool.get_conn().await.unwrap();
    let mut samples = Vec::new();
    for i in 0..8i64 {
        let id = rows + 1 + i;
        let snapshot = table.commits(vec![generate(id, 1, "+I", 0)]);
        let snap: serde_json::Value = serde_json::from_slice(
            &std::fs::read(
                table
                    .table_dir()
                    .join(format!("snapshot/snapshot-{snapshot}")),
            )
            .unwrap(),
        )
        .unwrap();
        let committed_ms = snap["timeMillis"].as_i64().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let n: Option<i64> = conn
                .exec_first("SELECT COUNT(*) FROM orders WHERE id = ?", (id,))
                .await
                .unwrap();
            if n == Some(1) {
                break;
            }
            assert!(Instant::now() < deadline, "row {id} never became visible");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        samples.push((now_ms - committed_ms) as f64);
    }
    run::terminate(child.id());
    let _ = child.wait();
    samples.sort_by(f64::total_cmp);

    // Start → first write, into an empty table of its own.
    let fresh_db = TestDb::new("bench_first_write").await;
    fresh_db.exec(ORDERS_DDL).await;
    let cfg = config(table, &fresh_db)
        .max_rows(1000)
        .write_in(dir, "first");
    let started = Instant::now();
    let mut child = run::spawn_continuous(&cfg.path);
    while fresh_db.count("orders").await == 0 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let first_write = started.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    // The pool waits for every connection it lent before it disconnects.
    drop(conn);
    pool.disconnect().await.ok();
    Freshness {
        p50_ms: percentile(&samples, 0.5),
        p99_ms: percentile(&samples, 0.99),
        first_write,
    }
}
