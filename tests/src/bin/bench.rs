//! `make bench`: the worker against the raw MariaDB limits, on one server in one run.
//!
//!   bench --size quick|full|huge     200k / 2M / 10M rows
//!   bench --smoke                    the CI subset: fails only on a gross regression
//!
//! Needs a MariaDB from `scripts/with-mariadb.sh` and the release worker.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use mysql_async::prelude::*;
use pms_tests::bench::{raw, report, run, Measurement};
use pms_tests::mysql::TestDb;
use pms_tests::paimon::Table;
use serde_json::json;

#[derive(Clone, Copy, ValueEnum)]
enum Size {
    Quick,
    Full,
    Huge,
}

#[derive(Parser)]
struct Args {
    #[arg(long, value_enum, default_value = "quick")]
    size: Size,
    /// The CI smoke subset: fails when the full read is below 0.3× the raw multi-row limit.
    #[arg(long)]
    smoke: bool,
    /// Where the markdown report and the CSV go.
    #[arg(long, default_value = "bench/results")]
    out: PathBuf,
}

const DDL: &str = "CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, amount DECIMAL(10,2), status VARCHAR(16), updated_at DATETIME(3)) DEFAULT CHARSET = utf8mb4";

fn orders(rows: i64, buckets: u32) -> Table {
    let t = Table::create(json!({
        "columns": [
            {"name": "id", "type": "BIGINT NOT NULL"}, {"name": "amount", "type": "DECIMAL(10, 2)"},
            {"name": "status", "type": "STRING"}, {"name": "updated_at", "type": "TIMESTAMP(3)"}
        ],
        "primaryKeys": ["id"], "partitionKeys": [],
        "options": {"bucket": buckets.to_string(), "changelog-producer": "input"}
    }));
    // Large tables in chunks of 1M rows per commit, as a writer would.
    let mut from = 1;
    while from <= rows {
        let count = (rows - from + 1).min(1_000_000);
        t.commits(vec![
            json!({"generate": {"shape": "orders", "from": from, "count": count, "kind": "+I"}}),
        ]);
        from += count;
    }
    t
}

fn config(dir: &Path, name: &str, table: &Table, db: &TestDb, sink_extra: &str) -> PathBuf {
    let path = dir.join(format!("{name}.yaml"));
    let extra: String = sink_extra.lines().map(|l| format!("  {l}\n")).collect();
    std::fs::write(
        &path,
        format!(
            "source: {{warehouse: {}, database: {}, table: {}, pollInterval: 50ms}}\nsink:\n  url: {}\n  table: orders\n{extra}checkpoint: {{path: {name}.checkpoint.json, interval: 1h}}\n",
            table.warehouse().display(),
            table.database,
            table.name,
            db.url()
        ),
    )
    .unwrap();
    path
}

fn worker_measurement(
    group: &str,
    name: String,
    rows: u64,
    max_rows: u32,
    cost: &run::ProcessCost,
    baseline: Option<(&str, f64)>,
) -> Measurement {
    let rps = rows as f64 / cost.elapsed.as_secs_f64();
    Measurement {
        group: group.into(),
        name,
        rows,
        elapsed: cost.elapsed,
        baseline: baseline.map(|(n, base_rps)| (n.to_string(), rps / base_rps)),
        flush_p50_ms: cost.flush_p50_ms,
        flush_p99_ms: cost.flush_p99_ms,
        peak_rss_mib: Some(cost.peak_rss_mib),
        cpu_seconds: Some(cost.cpu_seconds),
        max_rows,
    }
}

fn raw_measurement(name: &str, rows: u64, elapsed: Duration) -> Measurement {
    Measurement {
        group: "raw MariaDB limit (mariadb client, same server)".into(),
        name: name.into(),
        rows,
        elapsed,
        ..Default::default()
    }
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize]
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let rows: i64 = match args.size {
        Size::Quick => 200_000,
        Size::Full => 2_000_000,
        Size::Huge => 10_000_000,
    };
    let port = pms_tests::mysql::server_port();
    let work = tempfile::tempdir().unwrap();
    let mut results: Vec<Measurement> = Vec::new();
    eprintln!("bench: writing the Paimon table ({rows} rows) with Paimon Java");
    let t1 = orders(rows, 1);

    // The raw limits.
    let raw_db = TestDb::new("bench_raw").await;
    raw_db.exec(DDL).await;
    let mut load_rps = None;
    if !args.smoke {
        let d = raw::load_data(port, &raw_db.name, "orders", rows, work.path());
        results.push(raw_measurement(
            "LOAD DATA LOCAL INFILE into an empty table",
            rows as u64,
            d,
        ));
        load_rps = Some(rows as f64 / d.as_secs_f64());
        raw_db.exec("TRUNCATE TABLE orders").await;
    }
    let d = raw::multi_row_upsert(port, &raw_db.name, "orders", rows, 0, work.path());
    results.push(raw_measurement(
        "multi-row ODKU, 1000 rows/statement, insert",
        rows as u64,
        d,
    ));
    let odku_insert_rps = rows as f64 / d.as_secs_f64();
    let d = raw::multi_row_upsert(port, &raw_db.name, "orders", rows, 1, work.path());
    results.push(raw_measurement(
        "multi-row ODKU, 1000 rows/statement, update",
        rows as u64,
        d,
    ));
    let odku_update_rps = rows as f64 / d.as_secs_f64();

    // Full read into an empty table.
    let group = "worker: full read into an empty table";
    let full_sizes: &[u32] = if args.smoke {
        &[10_000]
    } else {
        &[100, 1000, 10_000]
    };
    let mut smoke_ratio = None;
    for &max_rows in full_sizes {
        let db = TestDb::new("bench_full").await;
        db.exec(DDL).await;
        let cfg = config(
            work.path(),
            &format!("full-{max_rows}"),
            &t1,
            &db,
            &format!("maxRows: {max_rows}"),
        );
        let cost = run::run_once(&cfg, &[]);
        assert_eq!(db.count("orders").await, rows);
        let m = worker_measurement(
            group,
            format!("maxRows {max_rows}, 1 slot"),
            rows as u64,
            max_rows,
            &cost,
            Some(("ODKU insert", odku_insert_rps)),
        );
        smoke_ratio = Some(m.rows_per_sec() / odku_insert_rps);
        if let Some(load) = load_rps {
            results.push(Measurement {
                name: format!("{} (vs LOAD DATA {:.2}×)", m.name, m.rows_per_sec() / load),
                ..m
            });
        } else {
            results.push(m);
        }
    }
    if args.smoke {
        let ratio = smoke_ratio.unwrap_or(0.0);
        print!(
            "{}",
            report::markdown(
                "pms-worker smoke benchmark",
                &[format!("{rows} rows")],
                &results
            )
        );
        if ratio < 0.3 {
            eprintln!("bench: FAILED: full read at {ratio:.2}× the raw multi-row ODKU limit (gross regression: < 0.3×)");
            std::process::exit(1);
        }
        println!("\nbench smoke: full read at {ratio:.2}× the raw multi-row ODKU limit (≥ 0.3× required)");
        return;
    }

    // Two slots over a 4-bucket table, in parallel.
    let t4 = orders(rows, 4);
    let db = TestDb::new("bench_slots").await;
    db.exec(DDL).await;
    let cfg = config(work.path(), "slots", &t4, &db, "maxRows: 10000");
    let started = Instant::now();
    let slots: Vec<_> = (0..2)
        .map(|k| {
            let cfg = cfg.clone();
            std::thread::spawn(move || {
                run::run_once(&cfg, &["--slot", &k.to_string(), "--slots", "2"])
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
    results.push(worker_measurement(
        group,
        "maxRows 10000, 2 slots (4 buckets)".into(),
        rows as u64,
        0,
        &combined,
        Some(("ODKU insert", odku_insert_rps)),
    ));

    // Steady incremental sync: update-heavy and delete-heavy snapshots, on a synced table.
    let group = "worker: one large snapshot of changes";
    let db = TestDb::new("bench_changes").await;
    db.exec(DDL).await;
    let base = config(work.path(), "changes", &t1, &db, "maxRows: 10000");
    run::run_once(&base, &[]);
    let mut salt = 10;
    let changes_run = |name: String,
                       max_rows: u32,
                       sink_extra: &str,
                       commit: serde_json::Value,
                       count: u64,
                       baseline: (&str, f64)| {
        t1.commits(vec![commit]);
        let cfg = config(work.path(), "changes", &t1, &db, sink_extra);
        let cost = run::run_once(&cfg, &[]);
        worker_measurement(group, name, count, max_rows, &cost, Some(baseline))
    };
    for max_rows in [100u32, 1000, 10_000] {
        salt += 1;
        let commit = json!({"generate": {"shape": "orders", "from": 1, "count": rows, "kind": "+U", "salt": salt}});
        results.push(changes_run(
            format!("update-heavy, maxRows {max_rows}"),
            max_rows,
            &format!("maxRows: {max_rows}"),
            commit,
            rows as u64,
            ("ODKU update", odku_update_rps),
        ));
    }
    for (mode, extra) in [
        ("exactly-once", "delivery: exactly-once"),
        (
            "visibility: snapshot",
            &*format!("visibility: snapshot\nmaxTransactionRows: {}", rows + 1),
        ),
        ("sequenceGuard", "sequenceGuard: {column: pms_snapshot}"),
    ] {
        if mode == "sequenceGuard" {
            let pool = mysql_async::Pool::new(mysql_async::Opts::from_url(&db.url()).unwrap());
            pool.get_conn()
                .await
                .unwrap()
                .query_drop("ALTER TABLE orders ADD COLUMN pms_snapshot BIGINT NULL")
                .await
                .unwrap();
            pool.disconnect().await.ok();
        }
        salt += 1;
        let commit = json!({"generate": {"shape": "orders", "from": 1, "count": rows, "kind": "+U", "salt": salt}});
        results.push(changes_run(
            format!("update-heavy, maxRows 10000, {mode}"),
            0,
            &format!("maxRows: 10000\n{extra}"),
            commit,
            rows as u64,
            ("ODKU update", odku_update_rps),
        ));
    }
    let commit = json!({"generate": {"shape": "orders", "from": 1, "count": rows / 2, "step": 2, "kind": "-D"}});
    results.push(changes_run(
        "delete-heavy (half the rows), maxRows 10000".into(),
        0,
        "maxRows: 10000",
        commit,
        rows as u64 / 2,
        ("ODKU update", odku_update_rps),
    ));

    // Freshness: from a Paimon commit to its row being visible in MySQL, at a steady commit rate.
    let (fresh_p50, fresh_p99, first_write) = freshness(&t1, &db, work.path(), rows).await;

    let mariadb_version = Command::new("mariadb")
        .args([
            "--no-defaults",
            "-h127.0.0.1",
            &format!("-P{port}"),
            "-upms",
            "-ppms",
            "-N",
            "-e",
            "SELECT VERSION()",
        ])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let commit = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let date = Command::new("date")
        .arg("+%Y-%m-%d")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let context = vec![
        format!("{date}, commit {commit}, {rows} rows of the `orders` shape (id BIGINT, amount DECIMAL(10,2), status STRING, updated_at TIMESTAMP(3)), written by Paimon Java 1.3.1"),
        format!("machine: {cores} cores; MariaDB {mariadb_version} on loopback (throw-away datadir, innodb_flush_log_at_trx_commit=2), worker and server share the cores"),
        "worker runs are whole processes (`pms-worker run --once`, start-up included); ratios compare with the raw limit measured in this same run".into(),
        format!("freshness (Paimon commit → row visible in MySQL, continuous worker, pollInterval 50ms): p50 {fresh_p50:.0} ms, p99 {fresh_p99:.0} ms"),
        format!("worker start → first row written: {:.0} ms", first_write.as_secs_f64() * 1000.0),
    ];
    let md = report::markdown("pms-worker benchmark", &context, &results);
    print!("{md}");
    std::fs::create_dir_all(&args.out).unwrap();
    let stem = args.out.join(format!(
        "{date}-{}",
        match args.size {
            Size::Quick => "quick",
            Size::Full => "full",
            Size::Huge => "huge",
        }
    ));
    std::fs::write(stem.with_extension("md"), &md).unwrap();
    std::fs::write(stem.with_extension("csv"), report::csv(&results)).unwrap();
    eprintln!("bench: wrote {}.md and .csv", stem.display());
}

/// A continuous (not `--once`) release worker.
fn spawn_continuous(config: &Path) -> std::process::Child {
    Command::new(run::release_worker())
        .args(["run", "--config"])
        .arg(config)
        .env("RUST_LOG", "warn")
        .stderr(Stdio::null())
        .spawn()
        .expect("start pms-worker")
}

/// Commits single-row snapshots while a continuous worker runs; measures commit → visible.
/// Also: how long a fresh worker takes from start to its first written row.
async fn freshness(table: &Table, db: &TestDb, dir: &Path, rows: i64) -> (f64, f64, Duration) {
    let cfg = config(
        dir,
        "fresh",
        table,
        db,
        "maxRows: 1000\nflushInterval: 200ms",
    );
    // Reuse the synced checkpoint: only new snapshots are read.
    std::fs::copy(
        dir.join("changes.checkpoint.json"),
        dir.join("fresh.checkpoint.json"),
    )
    .unwrap();
    let mut child = spawn_continuous(&cfg);
    let pool = mysql_async::Pool::new(mysql_async::Opts::from_url(&db.url()).unwrap());
    let mut conn = pool.get_conn().await.unwrap();
    let mut samples = Vec::new();
    for i in 0..8i64 {
        let id = rows + 1 + i;
        let snapshot = table.commits(vec![
            json!({"generate": {"shape": "orders", "from": id, "count": 1, "kind": "+I"}}),
        ]);
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
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
    samples.sort_by(f64::total_cmp);

    // Start → first write, into an empty table of its own.
    let fresh_db = TestDb::new("bench_first_write").await;
    fresh_db.exec(DDL).await;
    let cfg = config(dir, "first", table, &fresh_db, "maxRows: 1000");
    let started = Instant::now();
    let mut child = spawn_continuous(&cfg);
    while fresh_db.count("orders").await == 0 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let first_write = started.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    // The pool waits for every connection it lent before it disconnects.
    drop(conn);
    pool.disconnect().await.ok();
    (
        percentile(&samples, 0.5),
        percentile(&samples, 0.99),
        first_write,
    )
}
