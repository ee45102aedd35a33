//! Runs the worker beside the bench binary and measures it: wall time, peak RSS and CPU of the process (from
//! `wait4`), and flush latency quantiles from its final metrics.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// What one worker process cost.
#[derive(Clone, Debug, Default)]
pub struct ProcessCost {
    pub elapsed: Duration,
    pub peak_rss_mib: f64,
    pub cpu_seconds: f64,
    pub flush_p50_ms: Option<f64>,
    pub flush_p99_ms: Option<f64>,
    pub stderr: String,
}

/// The worker of the bench's own build: `make bench` runs release binaries (the figures), the CI
/// smoke run the test build's (a gross regression shows at any optimisation level).
pub fn worker() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let bin = exe.with_file_name("pms-worker");
    assert!(
        bin.exists(),
        "{} is missing: build it with the bench (make bench: `cargo build --release -p pms-worker -p pms-tests --bins`)",
        bin.display()
    );
    bin
}

/// A continuous (not `--once`) worker, logging warnings only, beside its config
/// (`<config>.stderr.log`).
pub fn spawn_continuous(config: &Path) -> std::process::Child {
    // Its warnings and errors beside the config, to say why a run went wrong.
    let log = std::fs::File::create(config.with_extension("stderr.log")).expect("the worker's log");
    Command::new(worker())
        .args(["run", "--config"])
        .arg(config)
        .env("RUST_LOG", "warn")
        .stderr(log)
        .spawn()
        .expect("start pms-worker")
}

/// Panics, with its log, when the continuous worker of `config` has exited.
pub fn assert_running(child: &mut std::process::Child, config: &Path) {
    if let Ok(Some(status)) = child.try_wait() {
        let log = std::fs::read_to_string(config.with_extension("stderr.log")).unwrap_or_default();
        panic!(
            "the worker of {} exited ({status}):\n{log}",
            config.display()
        );
    }
}

/// SIGTERM to a worker: it flushes, checkpoints and exits.
pub fn terminate(pid: u32) {
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
}

/// Runs `pms-worker run --config … --once ARGS` to completion.
pub fn run_once(config: &Path, args: &[&str]) -> ProcessCost {
    let metrics = config.with_extension(format!("metrics-{}.txt", std::process::id()));
    let mut all = vec![
        "--once",
        "--metrics-file",
        metrics.to_str().expect("a UTF-8 path"),
    ];
    all.extend_from_slice(args);
    let mut cost = measure("run", config, &all);
    let text = std::fs::read_to_string(&metrics).unwrap_or_default();
    cost.flush_p50_ms =
        histogram_quantile(&text, "pms_flush_duration_seconds", 0.5).map(|s| s * 1000.0);
    cost.flush_p99_ms =
        histogram_quantile(&text, "pms_flush_duration_seconds", 0.99).map(|s| s * 1000.0);
    cost
}

/// Runs `pms-worker verify --config …`, which must find the table equal.
pub fn verify(config: &Path) -> ProcessCost {
    measure("verify", config, &[])
}

/// Runs `pms-worker verify --config … --live`, on a table that differs (exit 3).
pub fn verify_live_divergent(config: &Path) -> ProcessCost {
    measure_exit("verify", config, &["--live"], 3)
}

/// Runs `pms-worker rebuild --config …` to completion.
pub fn rebuild(config: &Path) -> ProcessCost {
    measure("rebuild", config, &[])
}

/// Runs `pms-worker COMMAND --config … ARGS`, which must exit 0.
fn measure(command: &str, config: &Path, args: &[&str]) -> ProcessCost {
    measure_exit(command, config, args, 0)
}

/// Runs `pms-worker COMMAND --config … ARGS`, which must exit `expected`.
// The child is reaped by `wait4` (for its resource usage), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
fn measure_exit(command: &str, config: &Path, args: &[&str], expected: i32) -> ProcessCost {
    let stderr_path = config.with_extension(format!("{command}.stderr.log"));
    let started = Instant::now();
    let child = Command::new(worker())
        .args([command, "--config"])
        .arg(config)
        .args(args)
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("start pms-worker");
    let (status, usage) = wait4(child.id() as i32);
    let elapsed = started.elapsed();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(
        status == expected,
        "pms-worker {command} exited {status}, not {expected}:\n{stderr}"
    );
    ProcessCost::of(elapsed, usage, stderr)
}

impl ProcessCost {
    /// A reaped process's cost: its wall time, and peak RSS and CPU from its `rusage`.
    pub fn of(elapsed: Duration, usage: libc::rusage, stderr: String) -> Self {
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        ProcessCost {
            elapsed,
            peak_rss_mib: usage.ru_maxrss as f64 / 1024.0,
            cpu_seconds: tv(usage.ru_utime) + tv(usage.ru_stime),
            flush_p50_ms: None,
            flush_p99_ms: None,
            stderr,
        }
    }
}

/// Reaps one child and returns its exit status and its own resource usage.
pub fn wait4(pid: i32) -> (i32, libc::rusage) {
    let mut status = 0;
    // SAFETY: `rusage` is plain data; wait4 fills it for the child `pid`, which we spawned.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4 failed");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    (code, usage)
}

/// A quantile from a Prometheus histogram's cumulative buckets (upper bound of the bucket that
/// reaches it, as `histogram_quantile` would interpolate within it).
pub fn histogram_quantile(text: &str, name: &str, q: f64) -> Option<f64> {
    let mut buckets: Vec<(f64, f64)> = text
        .lines()
        .filter(|l| l.starts_with(&format!("{name}_bucket{{")))
        .filter_map(|l| {
            let le = l.split("le=\"").nth(1)?.split('"').next()?;
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().ok()?
            };
            let count: f64 = l.rsplit(' ').next()?.parse().ok()?;
            Some((le, count))
        })
        .collect();
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total = buckets.last()?.1;
    if total == 0.0 {
        return None;
    }
    let rank = q * total;
    let mut prev = (0.0, 0.0);
    for (le, count) in buckets {
        if count >= rank {
            if le.is_infinite() {
                return Some(prev.0);
            }
            let frac = if count > prev.1 {
                (rank - prev.1) / (count - prev.1)
            } else {
                1.0
            };
            return Some(prev.0 + (le - prev.0) * frac);
        }
        prev = (le, count);
    }
    None
}

/// Runs `pms-worker run --config … --once` under `perf` (CPU-clock samples with DWARF call
/// stacks) and draws where its time went as a flame graph at `svg` (inferno's tools, which
/// `make bench` installs). A run of its own: sampling slows the worker, so its figures are not
/// reported.
pub fn profile(config: &Path, svg: &Path, title: &str) {
    let data = config.with_extension("perf.data");
    let status = Command::new("perf")
        .args([
            "record",
            "-e",
            "cpu-clock",
            "-F",
            "499",
            "--call-graph",
            "dwarf,16384",
            "-o",
        ])
        .arg(&data)
        .arg("--")
        .arg(worker())
        .args(["run", "--once", "--config"])
        .arg(config)
        .env("RUST_LOG", "warn")
        .status()
        .expect("perf: install it (Debian's linux-perf) to draw the flame graphs");
    assert!(
        status.success(),
        "perf record of the worker failed: {status}"
    );
    let folded = config.with_extension("folded");
    let script = Command::new("sh")
        .arg("-c")
        .arg(
            "perf script -i \"$1\" 2>/dev/null | inferno-collapse-perf > \"$2\" \
             && inferno-flamegraph --minwidth 0.2 --title \"$3\" < \"$2\" > \"$4\"",
        )
        .args(["flame", data.to_str().expect("a UTF-8 path")])
        .arg(&folded)
        .arg(title)
        .arg(svg)
        .status()
        .expect("sh");
    assert!(
        script.success(),
        "drawing {} failed: inferno-collapse-perf and inferno-flamegraph come with `cargo install inferno`",
        svg.display()
    );
    let stacks = std::fs::read_to_string(&folded).unwrap_or_default();
    eprintln!(
        "bench: {title}: where the samples were (self time)\n{}",
        top_frames(&stacks, 15)
    );
    let _ = std::fs::remove_file(&data);
    eprintln!("bench: wrote {}", svg.display());
}

/// The `n` functions most samples of inferno's folded `stacks` were in, with their share.
fn top_frames(stacks: &str, n: usize) -> String {
    let mut by_frame: std::collections::HashMap<&str, u64> = Default::default();
    let mut total = 0;
    for line in stacks.lines() {
        let Some((stack, count)) = line.rsplit_once(' ') else {
            continue;
        };
        let count: u64 = count.parse().unwrap_or(0);
        let frame = stack.rsplit(';').next().unwrap_or(stack);
        *by_frame.entry(frame).or_default() += count;
        total += count;
    }
    let mut frames: Vec<_> = by_frame.into_iter().collect();
    frames.sort_by_key(|f| std::cmp::Reverse(f.1));
    frames
        .iter()
        .take(n)
        .map(|(f, c)| format!("  {:5.1}%  {f}", 100.0 * *c as f64 / total.max(1) as f64))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn quantiles_interpolate_within_buckets() {
        let text = "x_bucket{le=\"0.1\"} 50\nx_bucket{le=\"0.2\"} 100\nx_bucket{le=\"+Inf\"} 100\n";
        assert!((super::histogram_quantile(text, "x", 0.5).unwrap() - 0.1).abs() < 1e-9);
        assert!((super::histogram_quantile(text, "x", 0.75).unwrap() - 0.15).abs() < 1e-9);
    }
}
