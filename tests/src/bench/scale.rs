//! `bench --scale`: how the full read's rows/s and peak RSS change with the table's size, its
//! bucket count, the number of slots and the row width (4 columns vs 30 with long strings and
//! BYTES), written as a CSV that `bench/plot_scale.py` plots.

use std::fmt::Write;
use std::path::Path;

use super::{scenarios, Shape};

/// One run of the scale grid.
pub struct Point {
    pub rows: i64,
    pub columns: usize,
    pub buckets: u32,
    pub slots: u32,
    pub rows_per_sec: f64,
    pub peak_rss_mib: f64,
    pub cpu_seconds: f64,
}

/// One run of the grid: the table's shape, rows and buckets, and the slots reading it.
pub type Run = (Shape, i64, u32, u32);

/// Up to 2M rows: every size × bucket count (1, 4, 16) × slot count (1, 2, 4, no more than
/// the buckets) of the 4-column `orders`, and the 30-column `wide` shape (4 buckets, 1 and 2
/// slots). Past 2M rows (10M is ~9 GB as `wide`): `orders` with 1 bucket (1 slot) and 4 buckets
/// (1, 2 and 4 slots). Past 10M: `orders` with 4 buckets, read by 1 and 4 slots.
pub fn grid(sizes: &[i64]) -> Vec<Run> {
    let mut grid = Vec::new();
    for &rows in sizes {
        if rows > 10_000_000 {
            grid.extend([1, 4].map(|slots| (Shape::Orders, rows, 4, slots)));
            continue;
        }
        let buckets: &[u32] = if rows <= 2_000_000 {
            &[1, 4, 16]
        } else {
            &[1, 4]
        };
        for &b in buckets {
            for slots in [1u32, 2, 4].into_iter().filter(|&s| s <= b) {
                grid.push((Shape::Orders, rows, b, slots));
            }
        }
        if rows <= 2_000_000 {
            grid.extend([(Shape::Wide, rows, 4, 1), (Shape::Wide, rows, 4, 2)]);
        }
    }
    grid
}

/// Writes (or finds in the cache) every table of the grid.
pub fn prepare(grid: &[Run]) {
    let mut tables: Vec<_> = grid.iter().map(|&(s, r, b, _)| (s, r, b)).collect();
    tables.dedup();
    for (shape, rows, buckets) in tables {
        eprintln!("bench --prepare: {shape:?}, {rows} rows, {buckets} buckets");
        shape.table(rows, buckets);
    }
}

/// Runs the grid, reading each table with 1, 2 or 4 slots.
pub async fn measure(grid: &[Run], dir: &Path) -> Vec<Point> {
    let mut points = Vec::new();
    let mut table = None;
    for &(shape, rows, buckets, slots) in grid {
        let key = (shape, rows, buckets);
        if table.as_ref().map(|(k, _)| *k) != Some(key) {
            eprintln!("bench --scale: {shape:?}, {rows} rows, {buckets} buckets");
            table = Some((key, shape.table(rows, buckets)));
        }
        let (_, t) = table.as_ref().expect("set above");
        let cost = scenarios::full_read_in_slots(t, shape, rows, slots, dir).await;
        points.push(Point {
            rows,
            columns: shape.columns(),
            buckets,
            slots,
            rows_per_sec: rows as f64 / cost.elapsed.as_secs_f64(),
            peak_rss_mib: cost.peak_rss_mib,
            cpu_seconds: cost.cpu_seconds,
        });
    }
    points
}

pub fn csv(points: &[Point]) -> String {
    let mut out =
        String::from("rows,columns,buckets,slots,rows_per_sec,peak_rss_mib,cpu_seconds\n");
    for p in points {
        let _ = writeln!(
            out,
            "{},{},{},{},{:.0},{:.1},{:.2}",
            p.rows, p.columns, p.buckets, p.slots, p.rows_per_sec, p.peak_rss_mib, p.cpu_seconds
        );
    }
    out
}

pub fn markdown(points: &[Point]) -> String {
    let mut md = String::from(
        "| rows | columns | buckets | slots | rows/s | peak RSS MiB (per worker) | CPU s (all workers) |\n|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for p in points {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {:.0} | {:.1} | {:.2} |",
            p.rows, p.columns, p.buckets, p.slots, p.rows_per_sec, p.peak_rss_mib, p.cpu_seconds
        );
    }
    md
}
