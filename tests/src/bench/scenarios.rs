//! The worker's runs of `make bench`: full reads into an empty table (by `maxRows`, 1 vs 2
//! slots), then one large snapshot of changes per run (update- and delete-heavy, each delivery option).

use std::path::Path;
use std::time::Instant;

use super::expected::{table_checksum, Expected};
use super::raw::Limits;
use super::{config, flink, orders, run, Measurement, Shape};
use crate::config::{Delivery, SyncConfigBuilder, Visibility};
use crate::fixtures::{generate, generate_step, ORDERS_DDL};
use crate::mysql::TestDb;
use crate::paimon::Table;
use crate::worker::SyncConfig;

const FULL_READ: &str = "worker: full read into an empty table";
const CHANGES: &str = "worker: one large snapshot of changes";
const RECOVERY: &str = "recovery: verify and rebuild of a synced table";
pub const FLINK: &str =
    "the Flink pipeline users run today (Flink 1.20.3, Paimon source, JDBC sink 3.3.0)";

/// Full reads of `table` (`rows` rows) into empty tables, one per `maxRows` setting (only
/// 10000 for the smoke run). Returns the last run's ratio to the raw multi-row insert limit.
pub async fn full_reads(
    table: &Table,
    rows: i64,
    smoke: bool,
    dir: &Path,
    limits: &Limits,
    flame: Option<&Path>,
    results: &mut Vec<Measurement>,
) -> f64 {
    // `None`: the defaults (maxRows unset: the full read flushes every 10,000 rows).
    let full_sizes: &[Option<u32>] = if smoke {
        &[Some(10_000)]
    } else {
        &[Some(100), Some(1000), Some(10_000), None]
    };
    let mut ratio = 0.0;
    for &setting in full_sizes {
        let db = TestDb::new("bench_full").await;
        db.exec(ORDERS_DDL).await;
        let (label, max_rows) = match setting {
            Some(n) => (format!("maxRows {n}"), n),
            None => ("defaults (maxRows unset)".to_string(), 10_000),
        };
        let mut builder = config(table, &db);
        if let Some(n) = setting {
            builder = builder.max_rows(n);
        }
        let cfg = builder.write_in(dir, &format!("full-{max_rows}-{}", setting.is_some()));
        let cost = run::run_once(&cfg.path, &[]);
        let synced = Expected::all(rows, 0);
        synced.check(&db, &format!("full read, {label}")).await;
        let m = Measurement::worker(
            FULL_READ,
            format!("{label}, 1 slot"),
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
        if let (Some(images), None) = (flame, setting) {
            // Where the defaults' time goes: the same read again, into a new table, sampled.
            let db = TestDb::new("bench_full_profiled").await;
            db.exec(ORDERS_DDL).await;
            let profiled = config(table, &db).write_in(dir, "full-profiled");
            run::profile(
                &profiled.path,
                &images.join("flame-full-read.svg"),
                &format!("pms-worker: full read of {rows} rows at the defaults"),
            );
            synced.check(&db, "full read, profiled").await;
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
    let combined = full_read_in_slots(&t4, Shape::Orders, rows, 2, dir).await;
    results.push(Measurement::worker(
        FULL_READ,
        "maxRows 10000, 2 slots (4 buckets)".into(),
        rows as u64,
        0,
        &combined,
        Some(("ODKU insert", limits.odku_insert_rps)),
    ));
}

/// A full read of `table` (`rows` rows) into an empty table by `slots` workers in parallel
/// (`maxRows` 10000), checked: their wall time, the highest peak RSS, the CPU they spent.
pub async fn full_read_in_slots(
    table: &Table,
    shape: Shape,
    rows: i64,
    slots: u32,
    dir: &Path,
) -> run::ProcessCost {
    let db = TestDb::new("bench_slots").await;
    db.exec(&shape.ddl()).await;
    let cfg = config(table, &db)
        .max_rows(10_000)
        .parallelism(slots)
        // Its own checkpoints: a name reused by another table's run would resume that one.
        .write_in(dir, &format!("slots-{slots}-{}", db.name));
    let started = Instant::now();
    let workers: Vec<_> = (0..slots)
        .map(|k| {
            let path = cfg.path.clone();
            let args = ["--slot".to_string(), k.to_string()];
            std::thread::spawn(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                run::run_once(&path, if slots > 1 { &args } else { &[] })
            })
        })
        .collect();
    let costs: Vec<run::ProcessCost> = workers.into_iter().map(|h| h.join().unwrap()).collect();
    Expected::all_of(shape, rows, 0)
        .check(&db, &format!("full read, {shape:?} shape, {slots} slots"))
        .await;
    // Checked: its disk goes back before the next run (100M rows take 12 GB).
    db.exec(&format!("DROP DATABASE `{}`", db.name)).await;
    run::ProcessCost {
        elapsed: started.elapsed(),
        peak_rss_mib: costs.iter().map(|c| c.peak_rss_mib).fold(0.0, f64::max),
        cpu_seconds: costs.iter().map(|c| c.cpu_seconds).sum(),
        flush_p50_ms: costs[0].flush_p50_ms,
        flush_p99_ms: costs[0].flush_p99_ms,
        stderr: String::new(),
    }
}

/// Steady incremental sync: update-heavy and delete-heavy snapshots of `table`, on a synced
/// copy. Returns that database and its config (its checkpoint is at the latest snapshot).
pub async fn changes(
    table: &Table,
    rows: i64,
    dir: &Path,
    limits: &Limits,
    flame: Option<&Path>,
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
    let updated = |salt| Expected::all(rows, salt);
    let mut salt = 10;
    // `None`: the defaults (maxRows unset: changes flush every 1,000).
    for setting in [Some(100u32), Some(1000), Some(10_000), None] {
        salt += 1;
        let (name, max_rows, cfg) = match setting {
            Some(n) => (
                format!("update-heavy, maxRows {n}"),
                n,
                config(table, &db).max_rows(n),
            ),
            None => (
                "update-heavy, defaults (maxRows unset)".into(),
                1000,
                config(table, &db),
            ),
        };
        let m = changes_run(
            name,
            max_rows,
            cfg,
            generate(1, rows, "+U", salt),
            rows as u64,
        );
        updated(salt).check(&db, &m.name).await;
        results.push(m);
    }
    if let Some(images) = flame {
        // Where the defaults' time goes: another snapshot updating every row, sampled.
        salt += 1;
        table.commits(vec![generate(1, rows, "+U", salt)]);
        let profiled = config(table, &db).write_in(dir, "changes");
        run::profile(
            &profiled.path,
            &images.join("flame-update-snapshot.svg"),
            &format!("pms-worker: a snapshot updating {rows} rows at the defaults"),
        );
        updated(salt).check(&db, "update-heavy, profiled").await;
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
        let m = changes_run(
            format!("update-heavy, maxRows 10000, {mode}"),
            0,
            cfg.max_rows(10_000),
            generate(1, rows, "+U", salt),
            rows as u64,
        );
        updated(salt).check(&db, &m.name).await;
        results.push(m);
    }
    let m = changes_run(
        "delete-heavy (half the rows), maxRows 10000".into(),
        0,
        config(table, &db).max_rows(10_000),
        generate_step(1, rows / 2, 2, "-D", 0),
        rows as u64 / 2,
    );
    // The odd ids are gone.
    Expected {
        shape: Shape::Orders,
        rows,
        salt,
        kept: &|id| id % 2 == 0,
    }
    .check(&db, &m.name)
    .await;
    results.push(m);
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
    Expected::all(rows, 0).check(&db, "rebuild").await;
    results.push(Measurement::worker(
        RECOVERY,
        "rebuild (load, catch up, verify, swap)".into(),
        rows as u64,
        0,
        &rebuild,
        Some(baseline),
    ));
}

/// The seed's Flink SQL pipeline (`INSERT INTO mysql SELECT * FROM paimon`, `bench/flink`) on
/// the same table and server: a batch copy of `table` into an empty table (compared with the
/// worker's full read at `worker_full` rows/s), then one snapshot updating every row, read in
/// streaming mode from that snapshot (the caller compares it once the worker's run of such a
/// snapshot is measured). Commits that snapshot (salt `salt`). Returns the line for the report
/// when Maven can't build it.
pub async fn flink_pipeline(
    table: &Table,
    rows: i64,
    salt: i64,
    worker_full: f64,
    results: &mut Vec<Measurement>,
) -> Option<String> {
    if let Err(skipped) = flink::build() {
        eprintln!("bench: {skipped}");
        return Some(skipped);
    }
    let port = crate::mysql::server_port();
    let db = TestDb::new("bench_flink").await;
    db.exec(ORDERS_DDL).await;
    let max_rows = 10_000;
    let full = flink::full_copy(table, port, &db.name, "orders", max_rows);
    Expected::all(rows, 0).check(&db, "Flink full copy").await;
    results.push(Measurement::worker(
        FLINK,
        format!("full copy (batch), sink.buffer-flush.max-rows {max_rows}"),
        rows as u64,
        max_rows,
        &full,
        Some(("pms-worker", worker_full)),
    ));
    let snapshot = table.commits(vec![generate(1, rows, "+U", salt)]);
    let expected = Expected::all(rows, salt).checksum();
    // The checksum reads the whole table: asked only once the server has updated as many rows.
    let updates = || async {
        db.query_strings("SHOW GLOBAL STATUS LIKE 'Handler_update'")
            .await[0][1]
            .as_deref()
            .and_then(|n| n.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let before = updates().await;
    let handle = tokio::runtime::Handle::current();
    let changes = tokio::task::block_in_place(|| {
        flink::incremental(table, port, &db.name, "orders", max_rows, snapshot, || {
            handle.block_on(async {
                updates().await - before >= rows && table_checksum(&db).await == expected
            })
        })
    });
    results.push(Measurement::worker(
        FLINK,
        format!("update-heavy snapshot (streaming from it), sink.buffer-flush.max-rows {max_rows}"),
        rows as u64,
        max_rows,
        &changes,
        None,
    ));
    None
}
