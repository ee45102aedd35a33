//! `bench --scale`: how the full read's rows/s and peak RSS change with the table's size, its
//! bucket count and the number of slots, written as a CSV that `bench/plot_scale.py` plots.

use std::fmt::Write;
use std::path::Path;

use super::{orders, scenarios};

/// One run of the scale grid.
pub struct Point {
    pub rows: i64,
    pub buckets: u32,
    pub slots: u32,
    pub rows_per_sec: f64,
    pub peak_rss_mib: f64,
    pub cpu_seconds: f64,
}

/// Every size × bucket count (1, 4, 16) × slot count (1, 2, 4, no more than the buckets).
pub async fn measure(sizes: &[i64], dir: &Path) -> Vec<Point> {
    let mut points = Vec::new();
    for &rows in sizes {
        for buckets in [1u32, 4, 16] {
            eprintln!("bench --scale: {rows} rows, {buckets} buckets");
            let table = orders(rows, buckets);
            for slots in [1u32, 2, 4].into_iter().filter(|&s| s <= buckets) {
                let cost = scenarios::full_read_in_slots(&table, rows, slots, dir).await;
                points.push(Point {
                    rows,
                    buckets,
                    slots,
                    rows_per_sec: rows as f64 / cost.elapsed.as_secs_f64(),
                    peak_rss_mib: cost.peak_rss_mib,
                    cpu_seconds: cost.cpu_seconds,
                });
            }
        }
    }
    points
}

pub fn csv(points: &[Point]) -> String {
    let mut out = String::from("rows,buckets,slots,rows_per_sec,peak_rss_mib,cpu_seconds\n");
    for p in points {
        let _ = writeln!(
            out,
            "{},{},{},{:.0},{:.1},{:.2}",
            p.rows, p.buckets, p.slots, p.rows_per_sec, p.peak_rss_mib, p.cpu_seconds
        );
    }
    out
}

pub fn markdown(points: &[Point]) -> String {
    let mut md = String::from(
        "| rows | buckets | slots | rows/s | peak RSS MiB (per worker) | CPU s (all workers) |\n|---:|---:|---:|---:|---:|---:|\n",
    );
    for p in points {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.0} | {:.1} | {:.2} |",
            p.rows, p.buckets, p.slots, p.rows_per_sec, p.peak_rss_mib, p.cpu_seconds
        );
    }
    md
}
