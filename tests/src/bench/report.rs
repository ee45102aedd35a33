//! The benchmark report: a markdown table (printed and written to bench/results/<date>.md)
//! and a CSV the plot script (`bench/plot.py`) turns into a PNG.

use std::fmt::Write;
use std::process::Command;

use super::freshness::{Freshness, Latencies, LookupFreshness, SteadyFreshness};
use super::Measurement;

/// The first line of a command's output, or "" when it can't run.
fn output_of(cmd: &mut Command) -> String {
    cmd.output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// Today's date (`YYYY-MM-DD`), which names the report files.
pub fn date() -> String {
    output_of(Command::new("date").arg("+%Y-%m-%d"))
}

/// The context lines at the top of the full report: date, commit, table, machine, server,
/// how runs are measured, and the freshness results.
pub fn context(port: u16, rows: i64, fresh: Option<&Freshness>) -> Vec<String> {
    let mariadb_version = output_of(Command::new("mariadb").args([
        "--no-defaults",
        "-h127.0.0.1",
        &format!("-P{port}"),
        "-upms",
        "-ppms",
        "-N",
        "-e",
        "SELECT VERSION()",
    ]));
    let commit = output_of(Command::new("git").args(["rev-parse", "--short", "HEAD"]));
    let date = date();
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let mut lines = vec![
        format!("{date}, commit {commit}, {rows} rows of the `orders` shape (id BIGINT, amount DECIMAL(10,2), status STRING, updated_at TIMESTAMP(3)), written by Paimon Java 1.3.1"),
        format!("machine: {cores} cores; MariaDB {mariadb_version} on loopback (throw-away datadir, innodb_flush_log_at_trx_commit=2), worker and server share the cores"),
        "worker runs are whole processes (`pms-worker run --once`, start-up included); ratios compare with the raw limit measured in this same run".into(),
    ];
    if let Some(fresh) = fresh {
        lines.push(format!("freshness (Paimon commit → row visible in MySQL, continuous worker, pollInterval 50ms): p50 {:.0} ms, p99 {:.0} ms", fresh.p50_ms, fresh.p99_ms));
        lines.push(format!(
            "worker start → first row written: {:.0} ms",
            fresh.first_write.as_secs_f64() * 1000.0
        ));
    }
    lines
}

/// The line of [`super::freshness::lookup_table`]'s result.
pub fn lookup_freshness(l: &LookupFreshness) -> String {
    format!(
        "lookup table under a compaction job every 60 s (write-only commits of one row every 2 s for 150 s, {} commits; \
         default settings, pollInterval 1s), commit → visible: source.freshness {}; {}",
        l.commit.samples,
        latencies("changelog", &l.changelog),
        latencies("commit", &l.commit)
    )
}

fn latencies(name: &str, x: &Latencies) -> String {
    format!("{name}: {}", figures(x))
}

fn figures(x: &Latencies) -> String {
    format!(
        "p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
        x.p50_ms, x.p99_ms, x.max_ms
    )
}

/// The line of one load of [`super::freshness::steady`].
pub fn steady_freshness(s: &SteadyFreshness) -> String {
    format!(
        "steady load {} commits/s × {} rows (reached {:.1} commits/s, {:.0} rows/s; {} commits), commit → visible, \
         both polling every 1s: {}, {:.2} cores; Flink job (latest-full, JDBC sink flush 1s, max-rows 100, checkpoints 1s) \
         {}, {:.2} cores",
        s.load.commits_per_second,
        s.load.rows_per_commit,
        s.commits_per_second,
        s.commits_per_second * s.load.rows_per_commit as f64,
        s.worker.samples,
        latencies("pms-worker at defaults", &s.worker),
        s.worker_cpu,
        figures(&s.flink),
        s.flink_cpu
    )
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("–".into(), |v| format!("{v:.digits$}"))
}

pub fn markdown(title: &str, context: &[String], rows: &[Measurement]) -> String {
    let mut md = format!("# {title}\n\n");
    for line in context {
        let _ = writeln!(md, "- {line}");
    }
    md.push('\n');
    let mut group = String::new();
    for m in rows {
        if m.group != group {
            group = m.group.clone();
            let _ = write!(
                md,
                "\n## {group}\n\n| run | rows | seconds | rows/s | vs raw limit | flush p50 ms | flush p99 ms | peak RSS MiB | CPU s |\n|---|---:|---:|---:|---|---:|---:|---:|---:|\n"
            );
        }
        let _ = writeln!(
            md,
            "| {} | {} | {:.2} | {:.0} | {} | {} | {} | {} | {} |",
            m.name,
            m.rows,
            m.elapsed.as_secs_f64(),
            m.rows_per_sec(),
            m.baseline
                .as_ref()
                .map_or("–".into(), |(name, r)| format!("{r:.2}× {name}")),
            opt(m.flush_p50_ms, 1),
            opt(m.flush_p99_ms, 1),
            opt(m.peak_rss_mib, 1),
            opt(m.cpu_seconds, 2),
        );
    }
    md
}

pub fn csv(rows: &[Measurement]) -> String {
    let mut out = String::from("group,name,max_rows,rows,seconds,rows_per_sec\n");
    for m in rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{:.4},{:.1}",
            m.group.replace(',', ";"),
            m.name.replace(',', ";"),
            m.max_rows,
            m.rows,
            m.elapsed.as_secs_f64(),
            m.rows_per_sec()
        );
    }
    out
}
