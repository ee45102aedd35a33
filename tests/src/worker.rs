//! Runs the `pms-worker` binary the way a user does: a YAML file and command-line flags.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use crate::paimon::Table;

/// The worker binary next to the test executable (`make test` builds it first).
pub fn worker_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let bin = dir.join("pms-worker");
    assert!(
        bin.exists(),
        "{} is missing: build it first with `cargo build --bins` (make test does)",
        bin.display()
    );
    bin
}

/// A standalone config file for syncing `table` into `target_table` of the database at `url`.
pub struct SyncConfig {
    pub path: PathBuf,
    _dir: tempfile::TempDir,
}

impl SyncConfig {
    /// `sink_extra` and `source_extra` are `key: value` lines added under `sink:` and `source:`.
    pub fn new(
        table: &Table,
        url: &str,
        target_table: &str,
        sink_extra: &str,
        source_extra: &str,
    ) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sync.yaml");
        let indent = |extra: &str| -> String {
            extra
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| format!("  {}\n", l.trim()))
                .collect()
        };
        let yaml = format!(
            "source:\n  warehouse: {}\n  database: {}\n  table: {}\n  pollInterval: 100ms\n{}sink:\n  url: {url}\n  table: {target_table}\n{}checkpoint:\n  path: {}\n",
            table.warehouse().display(),
            table.database,
            table.name,
            indent(source_extra),
            indent(sink_extra),
            dir.path().join("checkpoint.json").display(),
        );
        std::fs::write(&path, yaml).expect("write config");
        Self { path, _dir: dir }
    }

    pub fn checkpoint_path(&self, slot: u32, slots: u32) -> PathBuf {
        let base = self.path.parent().unwrap().join("checkpoint.json");
        if slots > 1 {
            PathBuf::from(format!("{}.slot{slot}-of-{slots}", base.display()))
        } else {
            base
        }
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(worker_bin());
        cmd.arg("run")
            .arg("--config")
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

    /// A continuous run in the background.
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.command(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn pms-worker")
    }
}
