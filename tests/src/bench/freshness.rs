//! Freshness (a Paimon commit → its row visible in MySQL) of a continuous worker, and how long
//! a fresh worker takes from its start to its first written row; and on a lookup table under a
//! compaction job, the two `source.freshness` settings side by side.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use mysql_async::prelude::*;

use super::{config, percentile, run};
use crate::fixtures::{generate, order, orders_table, ORDERS_DDL};
use crate::mysql::TestDb;
use crate::paimon::Table;
use crate::worker::SyncConfig;

/// What [`measure`] found.
pub struct Freshness {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub first_write: Duration,
}

/// Commits single-row snapshots to `table` (`rows` rows so far) while a continuous worker syncs
/// it into `db`, resuming from `synced`'s checkpoint; measures commit → visible. Then a fresh
/// worker's start → first write, into an empty table of its own.
pub async fn measure(
    table: &Table,
    db: &TestDb,
    synced: &SyncConfig,
    dir: &Path,
    rows: i64,
) -> Freshness {
    let cfg = config(table, db)
        .max_rows(1000)
        .flush_interval(Duration::from_millis(200))
        .write_in(dir, "fresh");
    // Reuse the synced checkpoint: only new snapshots are read.
    std::fs::copy(synced.checkpoint_path(0, 1), cfg.checkpoint_path(0, 1)).unwrap();
    let mut child = run::spawn_continuous(&cfg.path);
    let pool = mysql_async::Pool::new(mysql_async::Opts::from_url(&db.url()).unwrap());
    let mut conn = pool.get_conn().await.unwrap();
    let mut samples = Vec::new();
    for i in 0..8i64 {
        let id = rows + 1 + i;
        let snapshot = table.commits(vec![generate(id, 1, "+I", 0)]);
        let committed_ms = committed_millis(table, snapshot);
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
        samples.push((now_millis() - committed_ms) as f64);
    }
    run::terminate(child.id());
    let _ = child.wait();
    samples.sort_by(f64::total_cmp);

    // Start → first write, into an empty table of its own.
    let fresh_db = TestDb::new("bench_first_write").await;
    fresh_db.exec(ORDERS_DDL).await;
    let cfg = config(table, &fresh_db)
        .max_rows(1000)
        .write_in(dir, "first");
    let started = Instant::now();
    let mut child = run::spawn_continuous(&cfg.path);
    while fresh_db.count("orders").await == 0 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let first_write = started.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    // The pool waits for every connection it lent before it disconnects.
    drop(conn);
    pool.disconnect().await.ok();
    Freshness {
        p50_ms: percentile(&samples, 0.5),
        p99_ms: percentile(&samples, 0.99),
        first_write,
    }
}

/// The worker's default `source.pollInterval` (the test harness's configs poll faster).
const DEFAULT_POLL: Duration = pms_crds::DEFAULT_POLL_INTERVAL.0;

/// Commit → visible latencies, in ms.
pub struct Latencies {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub samples: usize,
}

impl Latencies {
    fn of(mut samples: Vec<f64>) -> Self {
        samples.sort_by(f64::total_cmp);
        Self {
            p50_ms: percentile(&samples, 0.5),
            p99_ms: percentile(&samples, 0.99),
            max_ms: samples.last().copied().unwrap_or(f64::NAN),
            samples: samples.len(),
        }
    }
}

/// What [`lookup_table`] found, per `source.freshness`.
pub struct LookupFreshness {
    pub changelog: Latencies,
    pub commit: Latencies,
}

/// The snapshot file's commit time (Unix ms).
fn committed_millis(table: &Table, snapshot: i64) -> i64 {
    let file = table
        .table_dir()
        .join(format!("snapshot/snapshot-{snapshot}"));
    let snap: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    snap["timeMillis"].as_i64().unwrap()
}

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// A lookup table written as production writes one: a `write-only` writer commits one row every
/// `commit_every` for `run_for`, and a compaction job compacts every `compaction_every` (a minor
/// compaction, as Flink's dedicated compaction job). Two workers follow it at the default
/// settings, one per `source.freshness`, each into its own table; a probe notes when each row
/// shows in each. A last compaction brings the rest to the changelog worker.
pub async fn lookup_table(
    dir: &Path,
    run_for: Duration,
    commit_every: Duration,
    compaction_every: Duration,
) -> LookupFreshness {
    use serde_json::json;
    let table = orders_table(
        json!({"bucket": "2", "changelog-producer": "lookup"}),
        false,
    );
    table.commits(vec![generate(1, 1000, "+I", 0), json!({"compact": "full"})]);
    let mut dbs = Vec::new();
    let mut children = Vec::new();
    for freshness in ["changelog", "commit"] {
        let db = TestDb::new(&format!("bench_lookup_{freshness}")).await;
        db.exec(ORDERS_DDL).await;
        // Two syncs of one table: each its own consumer.
        let cfg = SyncConfig::builder(&table, &db)
            .freshness(freshness)
            .consumer_id(&format!("bench-{freshness}"))
            .poll_interval(DEFAULT_POLL)
            .write_in(dir, &format!("lookup-{freshness}"));
        children.push((run::spawn_continuous(&cfg.path), cfg.path.clone()));
        dbs.push(db);
    }
    let mut probe = Probe::new(&dbs.iter().collect::<Vec<_>>());
    // Both have read the table in full before the clock starts.
    for (db, (child, config)) in dbs.iter().zip(&mut children) {
        while db.count("orders").await < 1000 {
            run::assert_running(child, config);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    // Each committed row and its commit time (Unix ms).
    let mut committed: Vec<(i64, i64)> = Vec::new();
    let started = Instant::now();
    let (mut next_commit, mut last_compaction) = (started, started);
    let mut id = 1000;
    while started.elapsed() < run_for {
        if Instant::now() >= next_commit {
            id += 1;
            let row = json!({"kind": "+I", "values": order(id, "1.00", "NEW")});
            let snapshot = table.commits(vec![json!({"rows": [row], "writeOnly": true})]);
            committed.push((id, committed_millis(&table, snapshot)));
            next_commit += commit_every;
        }
        if last_compaction.elapsed() >= compaction_every {
            table.commits(vec![json!({"compact": "minor"})]);
            last_compaction = Instant::now();
        }
        probe.look(&committed, 1).await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    table.commits(vec![json!({"compact": "minor"})]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !probe.all_seen(committed.len()) {
        for (child, config) in &mut children {
            run::assert_running(child, config);
        }
        assert!(Instant::now() < deadline, "rows never became visible");
        probe.look(&committed, 1).await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for (child, _) in &mut children {
        run::terminate(child.id());
        let _ = child.wait();
    }
    let found = LookupFreshness {
        changelog: probe.latencies(0, &committed),
        commit: probe.latencies(1, &committed),
    };
    probe.close().await;
    found
}

/// A steady load: `commits_per_second` commits of `rows_per_commit` new rows each.
#[derive(Clone, Copy, Debug)]
pub struct SteadyLoad {
    pub commits_per_second: u32,
    pub rows_per_commit: i64,
}

/// What [`steady`] found for one load.
pub struct SteadyFreshness {
    pub load: SteadyLoad,
    /// What the writer reached (each commit is a Paimon Java commit, one after the other).
    pub commits_per_second: f64,
    pub worker: Latencies,
    /// CPU cores the worker used on average over the load.
    pub worker_cpu: f64,
    pub flink: Latencies,
    pub flink_cpu: f64,
}

/// CPU seconds process `pid` has used (user + system, from `/proc`).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (ticks(11) + ticks(12)) / hz
}

/// Commit → visible at steady loads, for the worker (default settings) and the Flink job it
/// replaces (`scan.mode = latest-full`, JDBC sink `sink.buffer-flush.interval = 1s`,
/// `max-rows` 100, checkpoints every second), both following one table into their own MySQL
/// tables on one server, both looking for snapshots every second. A Paimon Java writer commits
/// new rows at the load's rate for `run_for`; a probe notes when each commit's rows are all
/// visible in each table.
pub async fn steady(
    dir: &Path,
    port: u16,
    loads: &[SteadyLoad],
    run_for: Duration,
) -> Vec<SteadyFreshness> {
    let mut out = Vec::new();
    for (i, &load) in loads.iter().enumerate() {
        // (The Flink job's consumer-id needs the table to expire consumers.)
        let table = orders_table(
            serde_json::json!({"bucket": "4", "changelog-producer": "input", "consumer.expiration-time": "1 h"}),
            false,
        );
        const INITIAL: i64 = 10_000;
        table.commits(vec![generate(1, INITIAL, "+I", 0)]);
        let worker_db = TestDb::new(&format!("bench_steady_worker_{i}")).await;
        let flink_db = TestDb::new(&format!("bench_steady_flink_{i}")).await;
        for db in [&worker_db, &flink_db] {
            db.exec(ORDERS_DDL).await;
        }
        let cfg = SyncConfig::builder(&table, &worker_db)
            .poll_interval(DEFAULT_POLL)
            .write_in(dir, &format!("steady-{i}"));
        let mut worker = run::spawn_continuous(&cfg.path);
        let flink = super::flink::FlinkJob::start_polling(
            &table,
            port,
            &flink_db.name,
            "orders",
            "bench-flink",
            "1s",
        );
        for db in [&worker_db, &flink_db] {
            while db.count("orders").await < INITIAL {
                run::assert_running(&mut worker, &cfg.path);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        // The writer, on a thread of its own: (first id, commit time in Unix ms) per commit.
        let committed = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(i64, i64)>::new()));
        let writer = {
            let (table, committed) = (table.clone(), committed.clone());
            std::thread::spawn(move || {
                let every = Duration::from_secs_f64(1.0 / f64::from(load.commits_per_second));
                let started = Instant::now();
                let mut next = started;
                let mut from = INITIAL + 1;
                while started.elapsed() < run_for {
                    let snapshot =
                        table.commits(vec![generate(from, load.rows_per_commit, "+I", 0)]);
                    let at = committed_millis(&table, snapshot);
                    committed.lock().unwrap().push((from, at));
                    from += load.rows_per_commit;
                    next += every;
                    if let Some(wait) = next.checked_duration_since(Instant::now()) {
                        std::thread::sleep(wait);
                    }
                }
                started.elapsed()
            })
        };
        let cpu_before = [cpu_seconds(worker.id()), cpu_seconds(flink.pid())];
        let mut probe = Probe::new(&[&worker_db, &flink_db]);
        let mut cpu_after = cpu_before;
        let mut deadline = None;
        loop {
            let commits = committed.lock().unwrap().clone();
            probe.look(&commits, load.rows_per_commit).await;
            if writer.is_finished() && deadline.is_none() {
                cpu_after = [cpu_seconds(worker.id()), cpu_seconds(flink.pid())];
                deadline = Some(Instant::now() + Duration::from_secs(60));
            }
            if let Some(d) = deadline {
                if probe.all_seen(commits.len()) {
                    break;
                }
                assert!(Instant::now() < d, "commits never became visible");
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let elapsed = writer.join().expect("the writer");
        run::terminate(worker.id());
        let _ = worker.wait();
        drop(flink);
        let commits = committed.lock().unwrap().clone();
        out.push(SteadyFreshness {
            load,
            commits_per_second: commits.len() as f64 / elapsed.as_secs_f64(),
            worker: probe.latencies(0, &commits),
            worker_cpu: (cpu_after[0] - cpu_before[0]) / elapsed.as_secs_f64(),
            flink: probe.latencies(1, &commits),
            flink_cpu: (cpu_after[1] - cpu_before[1]) / elapsed.as_secs_f64(),
        });
        probe.close().await;
    }
    out
}

/// When each commit's rows show in each of several MySQL tables (one per follower).
struct Probe {
    pools: Vec<mysql_async::Pool>,
    /// Per table: a commit's first id → when all its rows were there (Unix ms).
    seen: Vec<HashMap<i64, i64>>,
}

impl Probe {
    fn new(dbs: &[&TestDb]) -> Self {
        Self {
            pools: dbs
                .iter()
                .map(|db| mysql_async::Pool::new(mysql_async::Opts::from_url(&db.url()).unwrap()))
                .collect(),
            seen: vec![HashMap::new(); dbs.len()],
        }
    }

    /// Notes now for each commit (its first id, commit time; `rows` ids from there) whose rows
    /// have all just become visible in a table.
    async fn look(&mut self, commits: &[(i64, i64)], rows: i64) {
        for (pool, seen) in self.pools.iter().zip(&mut self.seen) {
            let mut conn = pool.get_conn().await.unwrap();
            let pending: Vec<i64> = commits
                .iter()
                .map(|(from, _)| *from)
                .filter(|from| !seen.contains_key(from))
                .collect();
            for from in pending {
                let n: Option<i64> = conn
                    .exec_first(
                        "SELECT COUNT(*) FROM orders WHERE id >= ? AND id < ?",
                        (from, from + rows),
                    )
                    .await
                    .unwrap();
                if n == Some(rows) {
                    seen.insert(from, now_millis());
                }
            }
        }
    }

    /// Whether every table shows all `commits` commits.
    fn all_seen(&self, commits: usize) -> bool {
        self.seen.iter().all(|s| s.len() == commits)
    }

    /// Commit → visible in table `t`, for every commit.
    fn latencies(&self, t: usize, commits: &[(i64, i64)]) -> Latencies {
        Latencies::of(
            commits
                .iter()
                .map(|(from, at)| (self.seen[t][from] - at) as f64)
                .collect(),
        )
    }

    async fn close(self) {
        for pool in self.pools {
            pool.disconnect().await.ok();
        }
    }
}
