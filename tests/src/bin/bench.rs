//! `make bench`: the worker against the raw MariaDB limits, on one server in one run.
//!
//!   bench --size quick|full|huge     200k / 2M / 10M rows (giant: 100M, for --scale --one-size)
//!   bench --smoke                    the CI subset: fails only on a gross regression
//!   bench --isolation                deadlocks between two slots, REPEATABLE READ vs READ COMMITTED
//!   bench --recovery --size S        verify and rebuild only (with LOAD DATA for comparison)
//!   bench --memory [--keys N]        peak memory of a 5M-key overwrite and verify --live
//!   bench --scale --size S           the full read by size, buckets, slots and row width
//!   bench --shapes                   the defaults by buckets, changelog producer, row width, busy core
//!   bench --only full-read,changes   some groups only (quicker, while tuning)
//!   bench --prepare [--scale]        only write the tables those runs read into the cache
//!
//! Needs a MariaDB from `scripts/with-mariadb.sh` and the worker built beside it (release for
//! `make bench`). The runs themselves
//! are in `pms_tests::bench` (tables, configs and DDL from the test harness).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use pms_tests::bench::{
    freshness, isolation, memory, orders, raw, report, scale, scenarios, shapes, Measurement,
};

#[derive(Clone, Copy, ValueEnum)]
enum Size {
    Quick,
    Full,
    Huge,
    Giant,
}

impl Size {
    fn rows(self) -> i64 {
        match self {
            Size::Quick => 200_000,
            Size::Full => 2_000_000,
            Size::Huge => 10_000_000,
            Size::Giant => 100_000_000,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Size::Quick => "quick",
            Size::Full => "full",
            Size::Huge => "huge",
            Size::Giant => "giant",
        }
    }
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum Group {
    FullRead,
    Slots,
    Recovery,
    Changes,
    Freshness,
    /// A lookup table under a compaction job every minute: `source.freshness` changelog vs commit.
    LookupFreshness,
    Flink,
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
    /// Only the memory runs: an INSERT OVERWRITE of a `--keys`-key partition and `verify
    /// --live` of as many differing rows, each process's peak RSS.
    #[arg(long)]
    memory: bool,
    /// The keys of the memory runs.
    #[arg(long, default_value_t = 5_000_000)]
    keys: i64,
    /// Only the scale grid: the full read by table size (every size up to --size), buckets
    /// (1, 4, 16), slots (1, 2, 4) and row width (4 or 30 columns), into `<date>-scale.{md,csv}`.
    #[arg(long)]
    scale: bool,
    /// Only the shapes: a full read and an update snapshot at the defaults, by buckets (1, 4,
    /// 16), changelog producer (none, input, lookup) and row width, and with a core kept busy.
    #[arg(long)]
    shapes: bool,
    /// With --scale: only the table size --size names, not every size up to it.
    #[arg(long)]
    one_size: bool,
    /// Only write the Paimon tables the run would read into the cache (`~/.cache/pms/bench-tables`),
    /// e.g. while another run measures.
    #[arg(long)]
    prepare: bool,
    /// Only these groups of runs (for a quicker look while tuning): full-read, slots, recovery,
    /// flink, changes, freshness, lookup-freshness. The raw limits are always measured.
    #[arg(long, value_enum, value_delimiter = ',')]
    only: Vec<Group>,
    /// Also draw where the worker's time goes at the defaults (its full read and its update
    /// snapshot, each in a run of its own under `perf`) as flame graphs in this directory.
    #[arg(long)]
    flame: Option<PathBuf>,
    /// Where the markdown report and the CSV go.
    #[arg(long, default_value = "bench/results")]
    out: PathBuf,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    if args.isolation {
        println!("| isolation | transactions committed | deadlocks | row lock waits | lock wait timeouts | seconds |\n|---|---|---|---|---|---|");
        for o in isolation::measure(Duration::from_secs(10)).await {
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
    if args.memory && args.prepare {
        orders(args.keys, 1);
        return;
    }
    if args.memory {
        let work = tempfile::tempdir().unwrap();
        let mut results = Vec::new();
        memory::measure(args.keys, work.path(), &mut results).await;
        let md = report::markdown(
            "pms-worker memory benchmark",
            &[format!("{} keys", args.keys)],
            &results,
        );
        write_report(&args.out, "memory", &md, &report::csv(&results));
        return;
    }
    if args.shapes && args.prepare {
        shapes::prepare();
        return;
    }
    if args.shapes {
        let work = tempfile::tempdir().unwrap();
        let port = pms_tests::mysql::server_port();
        let mut results = Vec::new();
        shapes::measure(port, work.path(), &mut results).await;
        let mut context = report::context(port, shapes::ORDERS_ROWS, None);
        context.push(shapes::CONDITIONS.into());
        let md = report::markdown(
            "pms-worker on several table shapes, at the defaults",
            &context,
            &results,
        );
        write_report(&args.out, "shapes", &md, &report::csv(&results));
        return;
    }
    let rows = args.size.rows();
    if args.scale {
        let work = tempfile::tempdir().unwrap();
        let sizes: Vec<i64> = [Size::Quick, Size::Full, Size::Huge, Size::Giant]
            .iter()
            .map(|s| s.rows())
            .filter(|&r| r == rows || (r < rows && !args.one_size))
            .collect();
        let grid = scale::grid(&sizes);
        if args.prepare {
            scale::prepare(&grid);
            return;
        }
        let points = scale::measure(&grid, work.path()).await;
        let md = scale::markdown(&points);
        write_report(&args.out, "scale", &md, &scale::csv(&points));
        return;
    }
    if args.prepare {
        orders(rows, 1);
        orders(rows, 4);
        return;
    }
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
    let wanted = |g: Group| args.only.is_empty() || args.only.contains(&g);
    let ratio = if wanted(Group::FullRead) {
        scenarios::full_reads(
            &t1,
            rows,
            args.smoke,
            dir,
            &limits,
            args.flame.as_deref(),
            &mut results,
        )
        .await
    } else {
        0.0
    };
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
    if wanted(Group::Slots) {
        scenarios::two_slots(rows, dir, &limits, &mut results).await;
    }
    if wanted(Group::Recovery) {
        scenarios::recovery(&t1, rows, dir, &limits, &mut results).await;
    }
    let mut flink_skipped = None;
    if wanted(Group::Flink) {
        // The worker's full read at maxRows 10000, measured above (the update snapshot's run
        // comes with `changes`, below).
        let full = results
            .iter()
            .find(|m| m.name.contains("maxRows 10000, 1 slot"))
            .map_or(f64::NAN, Measurement::rows_per_sec);
        flink_skipped = scenarios::flink_pipeline(&t1, rows, 99, full, &mut results).await;
    }
    let mut fresh = None;
    if wanted(Group::Changes) || wanted(Group::Freshness) {
        let (db, synced) =
            scenarios::changes(&t1, rows, dir, &limits, args.flame.as_deref(), &mut results).await;
        // Freshness: from a Paimon commit to its row being visible in MySQL, at a steady commit rate.
        if wanted(Group::Freshness) {
            fresh = Some(freshness::measure(&t1, &db, &synced, dir, rows).await);
        }
    }
    // Freshness at steady loads, the worker at its defaults beside the Flink job.
    let steady = match wanted(Group::Freshness) {
        true => {
            let loads = [(1, 1000), (10, 100), (10, 1000), (100, 100)].map(
                |(commits_per_second, rows_per_commit)| freshness::SteadyLoad {
                    commits_per_second,
                    rows_per_commit,
                },
            );
            freshness::steady(dir, port, &loads, Duration::from_secs(45)).await
        }
        false => Vec::new(),
    };

    // The worker against the Flink pipeline, same work: the update snapshot's ratio now that
    // the worker's run of it is measured.
    let worker_changes = results
        .iter()
        .find(|m| m.name == "update-heavy, maxRows 10000")
        .map(Measurement::rows_per_sec);
    let mut versus_flink = Vec::new();
    for m in results.iter_mut().filter(|m| m.group == scenarios::FLINK) {
        if m.name.contains("update") {
            if let Some(w) = worker_changes {
                m.baseline = Some(("pms-worker".into(), m.rows_per_sec() / w));
            }
        }
        if let Some((_, r)) = &m.baseline {
            versus_flink.push(format!("{}: {:.1}×", m.name, 1.0 / r));
        }
    }
    let lookup = match wanted(Group::LookupFreshness) {
        true => Some(
            freshness::lookup_table(
                dir,
                Duration::from_secs(150),
                Duration::from_secs(2),
                Duration::from_secs(60),
            )
            .await,
        ),
        false => None,
    };
    let mut context = report::context(port, rows, fresh.as_ref());
    context.extend(lookup.as_ref().map(report::lookup_freshness));
    context.extend(steady.iter().map(report::steady_freshness));
    if !versus_flink.is_empty() {
        context.push(format!(
            "pms-worker vs the Flink pipeline (whole processes, same table and server): {}",
            versus_flink.join("; ")
        ));
    }
    context.extend(flink_skipped);
    let md = report::markdown("pms-worker benchmark", &context, &results);
    write_report(&args.out, args.size.name(), &md, &report::csv(&results));
}

/// Prints the markdown report and writes it and its CSV as `<out>/<date>-<name>.{md,csv}`.
fn write_report(out: &std::path::Path, name: &str, md: &str, csv: &str) {
    print!("{md}");
    std::fs::create_dir_all(out).unwrap();
    let stem = out.join(format!("{}-{name}", report::date()));
    std::fs::write(stem.with_extension("md"), md).unwrap();
    std::fs::write(stem.with_extension("csv"), csv).unwrap();
    eprintln!("bench: wrote {}.md and .csv", stem.display());
}
