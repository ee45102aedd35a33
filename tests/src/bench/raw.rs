//! The physical limits on the same server: what the `mariadb` client achieves with
//! `LOAD DATA LOCAL INFILE` and with 1000-row `INSERT … ON DUPLICATE KEY UPDATE` statements.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{order_row, Measurement};
use crate::fixtures::ORDERS_DDL;
use crate::mysql::TestDb;

/// The raw limits of this run, in rows/s, for the worker's ratios.
pub struct Limits {
    /// `LOAD DATA LOCAL INFILE` (not measured by the smoke run).
    pub load_rps: Option<f64>,
    pub odku_insert_rps: f64,
    pub odku_update_rps: f64,
}

/// Measures the raw limits with `rows` orders on the server at `port`, into a database of its own.
pub async fn measure(
    port: u16,
    rows: i64,
    smoke: bool,
    dir: &Path,
    results: &mut Vec<Measurement>,
) -> Limits {
    measure_as(port, rows, smoke, dir, "", results).await
}

/// [`measure`], each result's name followed by `label` (the conditions it was measured under).
pub async fn measure_labelled(
    port: u16,
    rows: i64,
    dir: &Path,
    label: &str,
    results: &mut Vec<Measurement>,
) -> Limits {
    measure_as(port, rows, false, dir, label, results).await
}

async fn measure_as(
    port: u16,
    rows: i64,
    smoke: bool,
    dir: &Path,
    label: &str,
    results: &mut Vec<Measurement>,
) -> Limits {
    let raw_db = TestDb::new("bench_raw").await;
    raw_db.exec(ORDERS_DDL).await;
    let mut load_rps = None;
    let mut push = |name: &str, d: Duration| {
        results.push(Measurement::raw(&format!("{name}{label}"), rows as u64, d));
        rows as f64 / d.as_secs_f64()
    };
    if !smoke {
        let d = load_data(port, &raw_db.name, "orders", rows, dir);
        load_rps = Some(push("LOAD DATA LOCAL INFILE into an empty table", d));
        raw_db.exec("TRUNCATE TABLE orders").await;
    }
    let d = multi_row_upsert(port, &raw_db.name, "orders", rows, 0, dir);
    let odku_insert_rps = push("multi-row ODKU, 1000 rows/statement, insert", d);
    let d = multi_row_upsert(port, &raw_db.name, "orders", rows, 1, dir);
    let odku_update_rps = push("multi-row ODKU, 1000 rows/statement, update", d);
    Limits {
        load_rps,
        odku_insert_rps,
        odku_update_rps,
    }
}

fn client(port: u16, db: &str) -> Command {
    let mut c = Command::new("mariadb");
    c.args([
        "--no-defaults",
        "--local-infile=1",
        "-h127.0.0.1",
        &format!("-P{port}"),
        "-upms",
        "-ppms",
        db,
    ]);
    c
}

/// Runs SQL from a file through the client and times it.
fn timed_client(port: u16, db: &str, input: &Path) -> Duration {
    let started = Instant::now();
    let out = client(port, db)
        .stdin(Stdio::from(std::fs::File::open(input).expect("sql file")))
        .output()
        .expect("run mariadb");
    assert!(
        out.status.success(),
        "mariadb client: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    started.elapsed()
}

/// `LOAD DATA LOCAL INFILE` of `rows` orders into the (empty) table.
pub fn load_data(port: u16, db: &str, table: &str, rows: i64, dir: &Path) -> Duration {
    let csv = dir.join("orders.csv");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&csv).unwrap());
    for id in 1..=rows {
        let (id, amount, status, ts) = order_row(id, 0);
        writeln!(f, "{id},{amount},{status},{ts}").unwrap();
    }
    f.flush().unwrap();
    drop(f);
    let sql = dir.join("load.sql");
    std::fs::write(
        &sql,
        format!(
            "LOAD DATA LOCAL INFILE '{}' INTO TABLE `{table}` FIELDS TERMINATED BY ',';\n",
            csv.display()
        ),
    )
    .unwrap();
    timed_client(port, db, &sql)
}

/// 1000-row `INSERT … ON DUPLICATE KEY UPDATE` statements of `rows` orders with `salt`
/// (salt 0 into an empty table: inserts; another salt over existing rows: updates).
pub fn multi_row_upsert(
    port: u16,
    db: &str,
    table: &str,
    rows: i64,
    salt: i64,
    dir: &Path,
) -> Duration {
    let sql = dir.join(format!("upsert-{salt}.sql"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&sql).unwrap());
    let mut id = 1;
    while id <= rows {
        let end = (id + 999).min(rows);
        write!(
            f,
            "INSERT INTO `{table}` (id, amount, status, updated_at) VALUES "
        )
        .unwrap();
        for i in id..=end {
            let (i2, amount, status, ts) = order_row(i, salt);
            write!(
                f,
                "{}({i2},{amount},'{status}','{ts}')",
                if i == id { "" } else { "," }
            )
            .unwrap();
        }
        writeln!(f, " ON DUPLICATE KEY UPDATE amount = VALUES(amount), status = VALUES(status), updated_at = VALUES(updated_at);").unwrap();
        id = end + 1;
    }
    f.flush().unwrap();
    drop(f);
    timed_client(port, db, &sql)
}
