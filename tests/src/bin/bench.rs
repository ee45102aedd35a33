//! `make bench`: the worker against the raw MariaDB limits, on one server in one run.
//!
//!   bench --size quick|full|huge     200k / 2M / 10M rows
//!   bench --smoke                    the CI subset: fails only on a gross regression
//!   bench --isolation                deadlocks between two slots, REPEATABLE READ vs READ COMMITTED
//!   bench --recovery --size S        verify and rebuild only (with LOAD DATA for comparison)
//!
//! Needs a MariaDB from `scripts/with-mariadb.sh` and the release worker. The runs themselves
//! are in `pms_tests::bench` (tables, configs and DDL from the test harness).

use std::path::PathBuf;

use clap::{Parser, ValueEnum};
use pms_tests::bench::{freshness, isolation, orders, raw, report, scenarios, Measurement};

#[derive(Clone, Copy, ValueEnum)]
enum Size {
    Quick,
    Full,
    Huge,
}

impl Size {
    fn rows(self) -> i64 {
        match self {
            Size::Quick => 200_000,
            Size::Full => 2_000_000,
            Size::Huge => 10_000_000,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Size::Quick => "quick",
            Size::Full => "full",
            Size::Huge => "huge",
        }
    }
}

#[derive(Parser)]
struct Args {
    #[arg(long, value_enum, default_value = "quick")]
    size: Size,
    /// The CI smoke subset: fails when the full read is below 0.3× the raw multi-row limit.
    #[arg(long)]
    smoke: bool,
    /// Only the isolation-level measurement (10 s per level).
    #[arg(long)]
    isolation: bool,
    /// Only the recovery paths (verify, rebuild) and the raw limits they compare with.
    #[arg(long)]
    recovery: bool,
    /// Where the markdown report and the CSV go.
    #[arg(long, default_value = "bench/results")]
    out: PathBuf,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    if args.isolation {
        println!("| isolation | transactions committed | deadlocks | row lock waits | lock wait timeouts | seconds |\n|---|---|---|---|---|---|");
        for o in isolation::measure(std::time::Duration::from_secs(10)).await {
            println!(
                "| {} | {} | {} | {} | {} | {:.1} |",
                o.level,
                o.committed,
                o.deadlocks,
                o.lock_waits,
                o.lock_wait_timeouts,
                o.elapsed.as_secs_f64()
            );
        }
        return;
    }
    let rows = args.size.rows();
    let port = pms_tests::mysql::server_port();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let mut results: Vec<Measurement> = Vec::new();
    eprintln!("bench: writing the Paimon table ({rows} rows) with Paimon Java");
    let t1 = orders(rows, 1);

    let limits = raw::measure(port, rows, args.smoke, dir, &mut results).await;
    if args.recovery {
        scenarios::recovery(&t1, rows, dir, &limits, &mut results).await;
        print!(
            "{}",
            report::markdown(
                "pms-worker recovery benchmark",
                &[format!("{rows} rows")],
                &results
            )
        );
        return;
    }
    let ratio = scenarios::full_reads(&t1, rows, args.smoke, dir, &limits, &mut results).await;
    if args.smoke {
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
    scenarios::two_slots(rows, dir, &limits, &mut results).await;
    scenarios::recovery(&t1, rows, dir, &limits, &mut results).await;
    let (db, synced) = scenarios::changes(&t1, rows, dir, &limits, &mut results).await;
    // Freshness: from a Paimon commit to its row being visible in MySQL, at a steady commit rate.
    let fresh = freshness::measure(&t1, &db, &synced, dir, rows).await;

    let md = report::markdown(
        "pms-worker benchmark",
        &report::context(port, rows, &fresh),
        &results,
    );
    print!("{md}");
    std::fs::create_dir_all(&args.out).unwrap();
    let stem = args
        .out
        .join(format!("{}-{}", report::date(), args.size.name()));
    std::fs::write(stem.with_extension("md"), &md).unwrap();
    std::fs::write(stem.with_extension("csv"), report::csv(&results)).unwrap();
    eprintln!("bench: wrote {}.md and .csv", stem.display());
}
