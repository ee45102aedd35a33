//! Runs the `pms-worker` binary the way a user does: a YAML file and command-line flags.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// The worker binary next to the test executable (`make test` builds it first).
pub fn worker_bin() -> PathBuf {
    workspace_bin("pms-worker")
}

/// The workspace's binary `name` next to the test executable (`make test` builds them first).
pub fn workspace_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let bin = dir.join(name);
    assert!(
        bin.exists(),
        "{} is missing: build it first with `cargo build --bins` (make test does)",
        bin.display()
    );
    bin
}

/// A standalone config file, written by [`SyncConfig::builder`](crate::config::SyncConfigBuilder),
/// and the ways to run the worker on it.
pub struct SyncConfig {
    pub path: PathBuf,
    /// The checkpoint file (`checkpoint.path`) of a single-slot run.
    pub(crate) checkpoint: PathBuf,
    /// The temporary directory holding both, when the config owns one.
    pub(crate) _dir: Option<tempfile::TempDir>,
}

impl SyncConfig {
    /// The checkpoint file of slot `slot` of `slots` (`<path>.slotK-of-N` when parallel).
    pub fn checkpoint_path(&self, slot: u32, slots: u32) -> PathBuf {
        if slots > 1 {
            PathBuf::from(format!(
                "{}.slot{slot}-of-{slots}",
                self.checkpoint.display()
            ))
        } else {
            self.checkpoint.clone()
        }
    }

    /// `pms-worker run --config <this> ARGS`.
    pub fn command(&self, args: &[&str]) -> Command {
        self.subcommand("run", args)
    }

    /// `pms-worker COMMAND --config <this> ARGS`, logging the worker's debug lines.
    pub fn subcommand(&self, command: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(worker_bin());
        cmd.args([command, "--config"])
            .arg(&self.path)
            .args(args)
            .env("RUST_LOG", "info,pms_worker=debug");
        cmd
    }

    /// `run --once` to completion.
    pub fn run_once(&self, args: &[&str]) -> Output {
        let mut all = vec!["--once"];
        all.extend_from_slice(args);
        self.command(&all).output().expect("run pms-worker")
    }

    /// `run --once` that must succeed.
    pub fn sync_once(&self, args: &[&str]) {
        let out = self.run_once(args);
        assert!(
            out.status.success(),
            "pms-worker --once failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `verify` with `args` (e.g. `--snapshot 3`, `--repair`), to completion.
    pub fn verify_with(&self, args: &[&str]) -> Output {
        self.subcommand("verify", args)
            .output()
            .expect("run pms-worker verify")
    }

    /// `rebuild`, to completion; with `failpoint`, aborted there (kill -9 at that step).
    pub fn rebuild(&self, failpoint: Option<&str>) -> Output {
        let mut cmd = self.subcommand("rebuild", &[]);
        if let Some(point) = failpoint {
            cmd.env("PMS_FAILPOINT", point);
        }
        cmd.output().expect("run pms-worker rebuild")
    }

    /// `verify` that must find MySQL equal to the latest snapshot.
    pub fn assert_verified(&self) {
        let out = self.verify_with(&[]);
        assert!(
            out.status.success(),
            "pms-worker verify found differences or failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A continuous run in the background.
    /// Starts a worker in the background. Its log goes to [`log_path`](Self::log_path), not a
    /// pipe: a pipe nobody reads fills up and stalls the worker in its next log line.
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.start(&mut self.command(args))
    }

    /// Starts `cmd` (a [`command`](Self::command) with more settings) as [`spawn`](Self::spawn) does.
    pub fn start(&self, cmd: &mut Command) -> Child {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("open the worker log");
        cmd.stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn pms-worker")
    }

    /// Where the workers [`spawn`](Self::spawn)ed on this config log (appended, one after another).
    pub fn log_path(&self) -> PathBuf {
        self.path.with_extension("log")
    }

    /// Everything the spawned workers logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }
}
