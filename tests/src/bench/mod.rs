//! The benchmark harness behind `make bench`: the raw MariaDB limits and the worker, measured in
//! one run on one server, reported side by side.

pub mod expected;
pub mod flink;
pub mod freshness;
pub mod isolation;
pub mod memory;
pub mod raw;
pub mod report;
pub mod run;
pub mod scale;
pub mod scenarios;
pub mod shapes;
pub mod wide;

use std::time::Duration;

use serde_json::json;

use crate::config::SyncConfigBuilder;
use crate::fixtures::{generate_shape, orders_table, ORDERS_DDL};
use crate::mysql::TestDb;
use crate::paimon::Table;
use crate::worker::SyncConfig;

/// The rows of a benchmark table: the tests' `orders` ([`orders_table`], 4 columns) or the
/// 30-column `wide` shape ([`wide`]), both from the Java generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Orders,
    Wide,
}

impl Shape {
    pub fn columns(self) -> usize {
        match self {
            Shape::Orders => 4,
            Shape::Wide => 30,
        }
    }

    /// The MySQL table `orders` that fits the shape.
    pub fn ddl(self) -> String {
        match self {
            Shape::Orders => ORDERS_DDL.into(),
            Shape::Wide => wide::ddl(),
        }
    }

    /// `CONCAT_WS('|', every column)` of the synced table.
    fn concat_sql(self) -> String {
        match self {
            Shape::Orders => "CONCAT_WS('|', id, amount, status, updated_at)".into(),
            Shape::Wide => wide::concat_sql(),
        }
    }

    /// What [`Self::concat_sql`] gives for the generator's row `id` at `salt`.
    fn row_bytes(self, id: i64, salt: i64) -> Vec<u8> {
        match self {
            Shape::Orders => {
                let (id, amount, status, ts) = order_row(id, salt);
                format!("{id}|{amount}|{status}|{ts}").into_bytes()
            }
            Shape::Wide => wide::row_bytes(id, salt),
        }
    }

    /// The shape's table with `rows` rows in one snapshot per million, written by Paimon Java,
    /// `changelog-producer=input`. Written once per shape, size and bucket count into
    /// `~/.cache/pms/bench-tables` (2M rows take minutes), then copied.
    pub fn table(self, rows: i64, buckets: u32) -> Table {
        self.table_with(rows, buckets, "input")
    }

    /// [`Self::table`] with another `changelog-producer` (`none`, `input`, `lookup`).
    pub fn table_with(self, rows: i64, buckets: u32, producer: &str) -> Table {
        let options = json!({"bucket": buckets.to_string(), "changelog-producer": producer});
        let (t, name) = match self {
            Shape::Orders => (orders_table(options, false), "orders"),
            Shape::Wide => (wide::table(options), "wide"),
        };
        let producer_part = match producer {
            "input" => String::new(),
            other => format!("-{other}"),
        };
        let cache = crate::cache_dir()
            .join("bench-tables")
            .join(format!("{name}-{rows}-{buckets}{producer_part}-v1"));
        if cache.join("db.db").exists() {
            t.load_warehouse(&cache);
            return t;
        }
        // Large tables in chunks of 1M rows per commit, as a writer would (one Java run).
        let chunks = (1..=rows)
            .step_by(1_000_000)
            .map(|from| generate_shape(name, from, (rows - from + 1).min(1_000_000), "+I", 0))
            .collect();
        t.commits(chunks);
        let partial = cache.with_extension("partial");
        let _ = std::fs::remove_dir_all(&partial);
        std::fs::create_dir_all(cache.parent().expect("a parent")).expect("the bench table cache");
        t.save_warehouse(&partial);
        std::fs::rename(&partial, &cache).expect("the bench table cache");
        t
    }
}

/// The `orders` table with `rows` rows ([`Shape::table`]).
pub fn orders(rows: i64, buckets: u32) -> Table {
    Shape::Orders.table(rows, buckets)
}

/// The poll interval of the benchmark's continuous workers (freshness).
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// The benchmark's sync of `table` into `orders` of `db`: checkpoints only at the end of a run
/// (interval 1h), polling every 50 ms. Finish with `.write_in(dir, name)`.
pub fn config(table: &Table, db: &TestDb) -> SyncConfigBuilder {
    SyncConfig::builder(table, db)
        .poll_interval(POLL_INTERVAL)
        .checkpoint_interval(Duration::from_secs(3600))
}

/// One measured row of the report.
#[derive(Clone, Debug, Default)]
pub struct Measurement {
    pub group: String,
    pub name: String,
    pub rows: u64,
    pub elapsed: Duration,
    /// The raw limit this is compared with (its name), and the ratio to it.
    pub baseline: Option<(String, f64)>,
    pub flush_p50_ms: Option<f64>,
    pub flush_p99_ms: Option<f64>,
    pub peak_rss_mib: Option<f64>,
    pub cpu_seconds: Option<f64>,
    /// For plots: the maxRows setting (0 = not a worker run).
    pub max_rows: u32,
}

impl Measurement {
    pub fn rows_per_sec(&self) -> f64 {
        self.rows as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// A worker run of `rows` rows, compared with a raw limit `(name, rows/s)`.
    pub fn worker(
        group: &str,
        name: String,
        rows: u64,
        max_rows: u32,
        cost: &run::ProcessCost,
        baseline: Option<(&str, f64)>,
    ) -> Self {
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

    /// A raw limit of the `mariadb` client.
    pub fn raw(name: &str, rows: u64, elapsed: Duration) -> Self {
        Measurement {
            group: "raw MariaDB limit (mariadb client, same server)".into(),
            name: name.into(),
            rows,
            elapsed,
            ..Default::default()
        }
    }
}

/// The `q` quantile of sorted samples (nearest rank).
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize]
}

/// The `orders` shape rows, by the same formula as the Java generator
/// (`tests/paimon-java/README.md`): id, amount, status, updated_at.
pub fn order_row(id: i64, salt: i64) -> (i64, String, &'static str, String) {
    const STATUSES: [&str; 4] = ["NEW", "PAID", "SHIPPED", "CANCELLED"];
    let cents = (id * 7919 + salt * 104_729).rem_euclid(100_000);
    let amount = format!("{}.{:02}", cents / 100, cents % 100);
    let status = STATUSES[((id + salt).rem_euclid(4)) as usize];
    let secs = 1_704_067_200 + id + salt * 60;
    let ts = chrono_free_utc(secs);
    (id, amount, status, ts)
}

/// `YYYY-MM-DD HH:MM:SS.000` for seconds since the epoch (civil-from-days, UTC).
pub(crate) fn chrono_free_utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.000",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn rows_match_the_java_generator() {
        // id 1, salt 0: amount 79.19, PAID, 2024-01-01 00:00:01 (see the Java README).
        assert_eq!(
            super::order_row(1, 0),
            (1, "79.19".into(), "PAID", "2024-01-01 00:00:01.000".into())
        );
        assert_eq!(
            super::chrono_free_utc(951_782_400),
            "2000-02-29 00:00:00.000"
        );
    }
}
