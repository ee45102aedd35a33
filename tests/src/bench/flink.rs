//! The "seed" peer: the Flink SQL job users run today, `INSERT INTO mysql_table SELECT * FROM
//! paimon_table` (`bench/flink`, run by `scripts/flink-peer.sh`), on the same Paimon table and
//! MariaDB server as the worker, measured as a whole process like the worker: wall time, and
//! peak RSS and CPU from `wait4` (JVM start, MiniCluster and job included, as a user pays them).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::run::{wait4, ProcessCost};
use crate::paimon::Table;

/// How long an incremental run may take to reach `done` before it is a failure.
const INCREMENTAL_TIMEOUT: Duration = Duration::from_secs(600);
/// How often an incremental run's `done` is asked.
const POLL: Duration = Duration::from_millis(200);

fn script() -> PathBuf {
    crate::repo_root().join("scripts/flink-peer.sh")
}

/// Builds the peer (`scripts/flink-peer.sh build`). `Err(reason)` when Maven can't resolve its
/// dependencies (the script's exit 3): the caller leaves the peer out of the report and says so.
/// Any other failure (a compile error) panics.
pub fn build() -> Result<(), String> {
    let out = Command::new(script())
        .arg("build")
        .output()
        .expect("run scripts/flink-peer.sh build");
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => Ok(()),
        Some(3) => Err(stderr
            .lines()
            .find(|l| l.starts_with("flink peer skipped"))
            .unwrap_or("flink peer skipped: Maven could not resolve its dependencies")
            .to_string()),
        _ => panic!(
            "scripts/flink-peer.sh build failed ({}):\n{stderr}",
            out.status
        ),
    }
}

/// A full copy (`--mode full`, batch): the latest snapshot of `table` into `target` of
/// `database` on the server at `port`, `max_rows` rows per JDBC batch. Must exit 0.
// The child is reaped by `wait4` (for its resource usage), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
pub fn full_copy(
    table: &Table,
    port: u16,
    database: &str,
    target: &str,
    max_rows: u32,
) -> ProcessCost {
    let started = Instant::now();
    let (child, log) = spawn(
        table,
        port,
        database,
        target,
        max_rows,
        &["--mode", "full"],
        false,
    );
    let (status, usage) = wait4(child.id() as i32);
    let elapsed = started.elapsed();
    let stderr = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        status == 0,
        "flink peer --mode full failed (status {status}):\n{}",
        tail(&stderr)
    );
    ProcessCost::of(elapsed, usage, stderr)
}

/// An incremental run (`--mode incremental`, streaming from snapshot `from_snapshot`, looking for
/// snapshots every [`super::POLL_INTERVAL`] like the worker): it never ends by itself, so it runs
/// until `done()` (asked every 200 ms; e.g. a checksum of the MySQL table equals the expected
/// one), then is SIGKILLed. Elapsed is start → `done`. An exit before
/// `done`, or no `done` within 600 s, panics with the tail of its stderr.
///
/// `done` blocks: from async code, call this inside `tokio::task::block_in_place` (or
/// `spawn_blocking`) and let `done` use `Handle::block_on`.
#[allow(clippy::zombie_processes)]
pub fn incremental(
    table: &Table,
    port: u16,
    database: &str,
    target: &str,
    max_rows: u32,
    from_snapshot: i64,
    mut done: impl FnMut() -> bool,
) -> ProcessCost {
    let snapshot = from_snapshot.to_string();
    // Paimon's source looks for new snapshots every 10 s by default, and plans its first one only
    // at its second look: the peer polls as often as the benchmark's worker does instead (about
    // 10 s less idle time per run, a setting, not a cost of the pipeline).
    let discovery = format!("{}ms", super::POLL_INTERVAL.as_millis());
    let args = [
        "--mode",
        "incremental",
        "--from-snapshot",
        &snapshot,
        "--discovery-interval",
        &discovery,
    ];
    let started = Instant::now();
    let (child, log) = spawn(table, port, database, target, max_rows, &args, false);
    let pid = child.id() as i32;
    let failure = loop {
        if done() {
            break None;
        }
        if exited(pid) {
            break Some("exited before the table was done".to_string());
        }
        if started.elapsed() > INCREMENTAL_TIMEOUT {
            break Some(format!("not done within {INCREMENTAL_TIMEOUT:?}"));
        }
        std::thread::sleep(POLL);
    };
    let elapsed = started.elapsed();
    // SAFETY: `pid` is our child, not yet reaped (so not reused).
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let (_, usage) = wait4(pid);
    let stderr = std::fs::read_to_string(&log).unwrap_or_default();
    if let Some(why) = failure {
        panic!(
            "flink peer --mode incremental --from-snapshot {from_snapshot}: {why}:\n{}",
            tail(&stderr)
        );
    }
    ProcessCost::of(elapsed, usage, stderr)
}

/// The production Flink job (`--mode job`: `scan.mode = latest-full` with a `consumer-id`,
/// checkpoints every second) running into `target`, until stopped with a savepoint or dropped.
pub struct FlinkJob {
    child: Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
    log: PathBuf,
}

impl FlinkJob {
    /// Builds the peer if needed (a build Maven can't resolve is a failure here: this test has
    /// no other way to run) and starts the job; returns once Flink says it runs.
    pub fn start(
        table: &Table,
        port: u16,
        database: &str,
        target: &str,
        consumer_id: &str,
    ) -> Self {
        Self::start_polling(table, port, database, target, consumer_id, "200ms")
    }

    /// [`Self::start`] looking for new snapshots every `discovery_interval` (Paimon's
    /// `continuous.discovery-interval`).
    pub fn start_polling(
        table: &Table,
        port: u16,
        database: &str,
        target: &str,
        consumer_id: &str,
        discovery_interval: &str,
    ) -> Self {
        if let Err(reason) = build() {
            panic!("the Flink job can't be built: {reason}");
        }
        let mode = [
            "--mode",
            "job",
            "--consumer-id",
            consumer_id,
            "--discovery-interval",
            discovery_interval,
        ];
        let (mut child, log) = spawn(table, port, database, target, 100, &mode, true);
        let stdin = child.stdin.take().expect("the job's stdin");
        let stdout = child.stdout.take().expect("the job's stdout");
        let mut job = Self {
            child,
            stdin,
            stdout: std::io::BufRead::lines(std::io::BufReader::new(stdout)),
            log,
        };
        job.expect_line("running ");
        job
    }

    /// The JVM's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn expect_line(&mut self, prefix: &str) -> String {
        match self.stdout.next() {
            Some(Ok(line)) if line.starts_with(prefix) => line[prefix.len()..].to_string(),
            other => panic!(
                "the Flink job said {other:?}, not {prefix}…:\n{}",
                tail(&std::fs::read_to_string(&self.log).unwrap_or_default())
            ),
        }
    }

    /// Stops the job with a savepoint into `dir` (Flink's `stop --savepointPath`); returns the
    /// savepoint's path.
    pub fn stop_with_savepoint(mut self, dir: &std::path::Path) -> String {
        use std::io::Write;
        writeln!(self.stdin, "stop {}", dir.display()).expect("ask the Flink job to stop");
        self.stdin.flush().expect("ask the Flink job to stop");
        let path = self.expect_line("stopped ");
        let status = self.child.wait().expect("wait for the Flink job");
        assert!(status.success(), "the Flink job ended with {status}");
        path
    }
}

impl Drop for FlinkJob {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

static RUNS: AtomicU32 = AtomicU32::new(0);

/// Starts `scripts/flink-peer.sh run …` (which execs the JVM, so the child is the JVM itself);
/// its stderr (WARN and above) goes to a log beside the table's warehouse.
fn spawn(
    table: &Table,
    port: u16,
    database: &str,
    target: &str,
    max_rows: u32,
    mode: &[&str],
    controlled: bool,
) -> (Child, PathBuf) {
    let log = table.warehouse().join(format!(
        ".flink-peer-{}.stderr.log",
        RUNS.fetch_add(1, Ordering::SeqCst)
    ));
    let child = Command::new(script())
        .arg("run")
        .arg("--warehouse")
        .arg(table.warehouse())
        .args(["--database", &table.database, "--table", &table.name])
        .args([
            "--jdbc-url",
            &format!("jdbc:mysql://127.0.0.1:{port}/{database}"),
        ])
        // The harness's server user (scripts/mariadb.sh).
        .args(["--user", "pms", "--password", "pms", "--target", target])
        .args(["--max-rows", &max_rows.to_string()])
        .args(mode)
        .stdin(if controlled {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(if controlled {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(std::fs::File::create(&log).expect("flink peer log"))
        .spawn()
        .expect("start scripts/flink-peer.sh run");
    (child, log)
}

/// Whether the child `pid` has exited, without reaping it (`WNOWAIT`: `wait4` still can).
fn exited(pid: i32) -> bool {
    // SAFETY: `siginfo_t` is plain data that waitid fills.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // With WNOHANG, a child still running leaves si_pid 0.
    r == 0 && unsafe { info.si_pid() } != 0
}

/// Every `Caused by:` of the log (Flink nests the real error deep), then its last 40 lines.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let causes = lines.iter().filter(|l| l.starts_with("Caused by:"));
    let last = &lines[lines.len().saturating_sub(40)..];
    causes.chain(last).copied().collect::<Vec<_>>().join("\n")
}
