//! `bench --shapes`: the defaults on several table shapes and on a busy machine. Each case is a
//! full read into an empty table and then a snapshot updating every row, both at the defaults
//! (`maxRows` unset), checked like every run, beside the raw limits of the same run: 1, 4 and 16
//! buckets, changelog producer `none`, `input` and `lookup`, the 4-column `orders` (1M rows) and the
//! 30-column `wide` shape (100k rows, about 1 KiB each; no raw limit of its own), and `orders` with 4
//! buckets while another process keeps one core busy (the raw limits measured again beside it).

use std::path::Path;
use std::process::{Child, Command};

use super::expected::Expected;
use super::raw::{self, Limits};
use super::{config, run, Measurement, Shape};
use crate::fixtures::generate_shape;
use crate::mysql::TestDb;

const FULL_READ: &str = "shapes: full read into an empty table, defaults";
const UPDATE: &str = "shapes: a snapshot updating every row, defaults";

/// The rows of each `orders` case and of each `wide` case.
pub const ORDERS_ROWS: i64 = 1_000_000;
const WIDE_ROWS: i64 = 100_000;

/// The report's line on what each case is.
pub const CONDITIONS: &str = "each case: a full read of the table into an empty MySQL table, then a snapshot updating every \
    row, both `pms-worker run --once` at the defaults (maxRows unset); `orders` 1M rows, `wide` (30 columns, about 1 KiB) \
    100k rows with no raw limit of its own; the busy core is a shell loop beside the worker and the server";

struct Case {
    shape: Shape,
    buckets: u32,
    producer: &'static str,
    /// Another process keeps a core busy meanwhile.
    busy: bool,
}

impl Case {
    fn rows(&self) -> i64 {
        match self.shape {
            Shape::Orders => ORDERS_ROWS,
            Shape::Wide => WIDE_ROWS,
        }
    }

    fn name(&self) -> String {
        let shape = match self.shape {
            Shape::Orders => "orders (4 columns)",
            Shape::Wide => "wide (30 columns)",
        };
        let busy = if self.busy {
            ", one core kept busy"
        } else {
            ""
        };
        format!(
            "{shape}, {} bucket(s), producer {}{busy}",
            self.buckets, self.producer
        )
    }
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for producer in ["none", "input", "lookup"] {
        for buckets in [1, 4, 16] {
            cases.push(Case {
                shape: Shape::Orders,
                buckets,
                producer,
                busy: false,
            });
        }
        cases.push(Case {
            shape: Shape::Wide,
            buckets: 4,
            producer,
            busy: false,
        });
    }
    cases.push(Case {
        shape: Shape::Orders,
        buckets: 4,
        producer: "input",
        busy: true,
    });
    cases
}

/// Writes (or finds in the cache) every table of the cases.
pub fn prepare() {
    for c in cases().iter().filter(|c| !c.busy) {
        eprintln!("bench --shapes --prepare: {}", c.name());
        c.shape.table_with(c.rows(), c.buckets, c.producer);
    }
}

/// Runs every case; the raw limits (`orders`, 1M rows) are measured first, and again beside the
/// busy core for the busy case. Each figure is the median of [`ROUNDS`] runs.
pub async fn measure(port: u16, dir: &Path, results: &mut Vec<Measurement>) {
    let quiet = raw::measure(port, ORDERS_ROWS, false, dir, results).await;
    let (mut full_reads, mut updates) = (Vec::new(), Vec::new());
    for case in cases() {
        let _hog = case.busy.then(CoreHog::start);
        let busy;
        let limits = if case.busy {
            busy = raw::measure_labelled(port, ORDERS_ROWS, dir, ", one core kept busy", results)
                .await;
            &busy
        } else {
            &quiet
        };
        let (full, update) = run_case(&case, dir, limits).await;
        full_reads.push(full);
        updates.push(update);
    }
    results.extend(full_reads);
    results.extend(updates);
}

/// The runs each figure is the median of (single runs of a 1M-row table vary by a fifth here).
const ROUNDS: usize = 3;

/// The full read and the update snapshot of one case, each the median of [`ROUNDS`] runs.
async fn run_case(case: &Case, dir: &Path, limits: &Limits) -> (Measurement, Measurement) {
    let rows = case.rows();
    let table = case.shape.table_with(rows, case.buckets, case.producer);
    let mut full_reads = Vec::new();
    let mut synced = None;
    for _ in 0..ROUNDS {
        let db = TestDb::new("bench_shape").await;
        db.exec(&case.shape.ddl()).await;
        let cfg = config(&table, &db).write_in(dir, &format!("shape-{}", db.name));
        full_reads.push(run::run_once(&cfg.path, &[]));
        Expected::all_of(case.shape, rows, 0)
            .check(&db, &case.name())
            .await;
        synced = Some((db, cfg));
    }
    let (db, cfg) = synced.expect("a round ran");
    let name = match case.shape {
        Shape::Orders => "orders",
        Shape::Wide => "wide",
    };
    let mut updates = Vec::new();
    for salt in 1..=ROUNDS as i64 {
        table.commits(vec![generate_shape(name, 1, rows, "+U", salt)]);
        updates.push(run::run_once(&cfg.path, &[]));
        Expected::all_of(case.shape, rows, salt)
            .check(&db, &format!("{}, update", case.name()))
            .await;
    }
    let narrow = case.shape == Shape::Orders;
    let load = limits.load_rps.filter(|_| narrow).map(|l| ("LOAD DATA", l));
    let odku = narrow.then_some(("ODKU update", limits.odku_update_rps));
    let label = format!("{} (median of {ROUNDS})", case.name());
    (
        Measurement::worker(
            FULL_READ,
            label.clone(),
            rows as u64,
            10_000,
            &median(full_reads),
            load,
        ),
        Measurement::worker(UPDATE, label, rows as u64, 1000, &median(updates), odku),
    )
}

/// The run of median wall time.
fn median(mut runs: Vec<run::ProcessCost>) -> run::ProcessCost {
    runs.sort_by_key(|r| r.elapsed);
    runs.swap_remove(runs.len() / 2)
}

/// A process that keeps one core busy until dropped (a shell loop: it does no I/O).
struct CoreHog(Child);

impl CoreHog {
    fn start() -> Self {
        CoreHog(
            Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .expect("start the busy loop"),
        )
    }
}

impl Drop for CoreHog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
