//! The benchmark report: a markdown table (printed and written to bench/results/<date>.md)
//! and a CSV the plot script (`bench/plot.py`) turns into a PNG.

use std::fmt::Write;

use super::Measurement;

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
