//! The worker's runs of `make bench`: full reads into an empty table (by `maxRows`, 1 vs 2
//! slots), then one large snapshot of changes per run (update- and delete-heavy, each delivery option).

use std::path::Path;
use std::time::Instant;

use super::raw::Limits;
use super::{config, orders, run, Measurement};
use crate::config::{Delivery, SyncConfigBuilder, Visibility};
use crate::fixtures::{generate, generate_step, ORDERS_DDL};
use crate::mysql::TestDb;
use crate::paimon::Table;
use crate::worker::SyncConfig;

const FULL_READ: &str = "worker: full read into an empty table";
const CHANGES: &str = "worker: one large snapshot of changes";
const RECOVERY: &str = "recovery: verify and rebuild of a synced table";

/// Full reads of `table` (`rows` rows) into empty tables, one per `maxRows` setting (only
/// 10000 for the smoke run). Returns the last run's ratio to the raw multi-row insert limit.
pub async fn full_reads(
    table: &Table,
    rows: i64,
    smoke: bool,
    dir: &Path,
    limits: &Limits,
    results: &mut Vec<Measurement>,
) -> f64 {
    let full_sizes: &[u32] = if smoke {
        &[10_000]
    } else {
        &[100, 1000, 10_000]
    };
    let mut ratio = 0.0;
    for &max_rows in full_sizes {
        let db = TestDb::new("bench_full").await;
        db.exec(ORDERS_DDL).await;
        let cfg = config(table, &db)
            .max_rows(max_rows)
            .write_in(dir, &format!("full-{max_rows}"));
        let cost = run::run_once(&cfg.path, &[]);
        assert_eq!(db.count("orders").await, rows);
        let m = Measurement::worker(
            FULL_READ,
            format!("maxRows {max_rows}, 1 slot"),
            rows as u64,
            max_rows,
            &cost,
            Some(("ODKU insert", limits.odku_insert_rps)),
        );
        ratio = m.rows_per_sec() / limits.odku_insert_rps;
        if let Some(load) = limits.load_rps {
            results.push(Measurement {
                name: format!("{} (vs LOAD DATA {:.2}×)", m.name, m.rows_per_sec() / load),
                ..m
            });
        } else {
            results.push(m);
        }
        if smoke {
            // The table just synced, compared with its snapshot (the full run measures this
            // in `recovery`).
            let cost = run::verify(&cfg.path);
            let load = limits.load_rps.map(|l| ("LOAD DATA", l));
            results.push(Measurement::worker(
                "verify (the synced table against its snapshot)",
                "pms-worker verify, equal table: one pass".into(),
                rows as u64,
                0,
                &cost,
                load.or(Some(("ODKU insert", limits.odku_insert_rps))),
            ));
        }
    }
    ratio
}

/// Two slots over a 4-bucket table, in parallel.
pub async fn two_slots(rows: i64, dir: &Path, limits: &Limits, results: &mut Vec<Measurement>) {
    let t4 = orders(rows, 4);
    let db = TestDb::new("bench_slots").await;
    db.exec(ORDERS_DDL).await;
    let cfg = config(&t4, &db).max_rows(10_000).write_in(dir, "slots");
    let started = Instant::now();
    let slots: Vec<_> = (0..2)
        .map(|k| {
            let path = cfg.path.clone();
            std::thread::spawn(move || {
                run::run_once(&path, &["--slot", &k.to_string(), "--slots", "2"])
            })
        })
        .collect();
    let costs: Vec<run::ProcessCost> = slots.into_iter().map(|h| h.join().unwrap()).collect();
    let combined = run::ProcessCost {
        elapsed: started.elapsed(),
        peak_rss_mib: costs.iter().map(|c| c.peak_rss_mib).fold(0.0, f64::max),
        cpu_seconds: costs.iter().map(|c| c.cpu_seconds).sum(),
        flush_p50_ms: costs[0].flush_p50_ms,
        flush_p99_ms: costs[0].flush_p99_ms,
        stderr: String::new(),
    };
    assert_eq!(db.count("orders").await, rows);
    results.push(Measurement::worker(
        FULL_READ,
        "maxRows 10000, 2 slots (4 buckets)".into(),
        rows as u64,
        0,
        &combined,
        Some(("ODKU insert", limits.odku_insert_rps)),
    ));
}

/// Steady incremental sync: update-heavy and delete-heavy snapshots of `table`, on a synced
/// copy. Returns that database and its config (its checkpoint is at the latest snapshot).
pub async fn changes(
    table: &Table,
    rows: i64,
    dir: &Path,
    limits: &Limits,
    results: &mut Vec<Measurement>,
) -> (TestDb, SyncConfig) {
    let db = TestDb::new("bench_changes").await;
    db.exec(ORDERS_DDL).await;
    let base = config(table, &db).max_rows(10_000).write_in(dir, "changes");
    run::run_once(&base.path, &[]);
    let update = ("ODKU update", limits.odku_update_rps);
    // One snapshot of changes, read by a run of `cfg` (same checkpoint as `base`).
    let changes_run = |name: String,
                       max_rows: u32,
                       cfg: SyncConfigBuilder,
                       commit: serde_json::Value,
                       count: u64| {
        table.commits(vec![commit]);
        let cfg = cfg.write_in(dir, "changes");
        let cost = run::run_once(&cfg.path, &[]);
        Measurement::worker(CHANGES, name, count, max_rows, &cost, Some(update))
    };
    let mut salt = 10;
    for max_rows in [100u32, 1000, 10_000] {
        salt += 1;
        results.push(changes_run(
            format!("update-heavy, maxRows {max_rows}"),
            max_rows,
            config(table, &db).max_rows(max_rows),
            generate(1, rows, "+U", salt),
            rows as u64,
        ));
    }
    let modes = [
        (
            "exactly-once",
            config(table, &db).delivery(Delivery::ExactlyOnce),
        ),
        (
            "visibility: snapshot",
            config(table, &db)
                .visibility(Visibility::Snapshot)
                .max_transaction_rows(rows as u64 + 1),
        ),
        (
            "sequenceGuard",
            config(table, &db).sequence_guard("pms_snapshot"),
        ),
    ];
    for (mode, cfg) in modes {
        if mode == "sequenceGuard" {
            db.exec("ALTER TABLE orders ADD COLUMN pms_snapshot BIGINT NULL")
                .await;
        }
        salt += 1;
        results.push(changes_run(
            format!("update-heavy, maxRows 10000, {mode}"),
            0,
            cfg.max_rows(10_000),
            generate(1, rows, "+U", salt),
            rows as u64,
        ));
    }
    results.push(changes_run(
        "delete-heavy (half the rows), maxRows 10000".into(),
        0,
        config(table, &db).max_rows(10_000),
        generate_step(1, rows / 2, 2, "-D", 0),
        rows as u64 / 2,
    ));
    (db, base)
}

/// The recovery paths on a synced table of `rows` rows: `verify` (equal: one pass), then a
/// `rebuild` (shadow table, full read, verify, swap), compared with LOAD DATA of the same rows.
pub async fn recovery(
    table: &Table,
    rows: i64,
    dir: &Path,
    limits: &Limits,
    results: &mut Vec<Measurement>,
) {
    let db = TestDb::new("bench_recovery").await;
    db.exec(ORDERS_DDL).await;
    let cfg = config(table, &db)
        .max_rows(10_000)
        .write_in(dir, "recovery");
    run::run_once(&cfg.path, &[]);
    let baseline = limits
        .load_rps
        .map(|l| ("LOAD DATA", l))
        .unwrap_or(("ODKU insert", limits.odku_insert_rps));
    let verify = run::verify(&cfg.path);
    results.push(Measurement::worker(
        RECOVERY,
        "verify, equal table".into(),
        rows as u64,
        0,
        &verify,
        Some(baseline),
    ));
    let rebuild = run::rebuild(&cfg.path);
    assert_eq!(db.count("orders").await, rows);
    results.push(Measurement::worker(
        RECOVERY,
        "rebuild (load, catch up, verify, swap)".into(),
        rows as u64,
        0,
        &rebuild,
        Some(baseline),
    ));
}
