//! `kubectl pms`: the everyday commands for paimon-mysql-sync, as a kubectl plugin (copy
//! `kubectl-pms` onto the PATH, or install it with krew: `kubectl-pms/krew.yaml`).
//!
//! Every command that changes something edits the field a user would (a trigger in the spec,
//! `spec.state`, a `PaimonMysqlSyncSavepoint`), so a GitOps tool sees what it did, and prints
//! which field it set. It never reads a Secret.

mod check;
mod commands;
mod logs;
mod redact;
mod report;
mod status;

use std::time::Duration;

use clap::{Parser, Subcommand};
use commands::Output;
use logs::LogOptions;

/// A duration as the resources write one (`30s`, `5m`, `1h 30m`).
fn duration(text: &str) -> Result<Duration, String> {
    serde_json::from_value::<pms_crds::HumanDuration>(serde_json::json!(text))
        .map(|d| d.0)
        .map_err(|e| format!("{e}; write e.g. 30s, 5m, 1h"))
}

#[derive(Parser)]
#[command(
    name = "kubectl pms",
    version,
    about = "paimon-mysql-sync from kubectl"
)]
struct Cli {
    /// The namespace (default: the kubeconfig context's).
    #[arg(short, long, global = true)]
    namespace: Option<String>,
    /// The kubeconfig context to use (default: its current context).
    #[arg(long, global = true)]
    context: Option<String>,
    /// The kubeconfig file (default: `$KUBECONFIG`, else `~/.kube/config`).
    #[arg(long, global = true)]
    kubeconfig: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// A sync (or database sync) in one screen: phase, each slot's snapshot, lag and last
    /// checkpoint, the last error, rebuild / verify / savepoint state.
    Status {
        /// The PaimonMysqlSync or PaimonMysqlDatabaseSync.
        sync: String,
        /// `text`: the screen; `yaml` or `json`: the resource with its status (passwords
        /// redacted), for scripts.
        #[arg(short, long, value_enum, default_value_t = Output::Text)]
        output: Output,
        /// Keep printing it as it changes (every `--interval`), until interrupted.
        #[arg(short, long)]
        watch: bool,
        /// How often `--watch` looks.
        #[arg(long, default_value = "2s", value_parser = duration)]
        interval: Duration,
    },
    /// Runs the pre-flight (`pms-worker check`: the MySQL table and server, the Paimon table,
    /// the consumer's expiry) now, as a Job with slot 0's pod; prints its report. Fails when the
    /// check found problems.
    Check {
        /// The PaimonMysqlSync.
        sync: String,
        /// How long the Job may take (its pod pulled, scheduled and run).
        #[arg(long, default_value = "5m", value_parser = duration)]
        timeout: Duration,
    },
    /// Takes a savepoint now: creates a `PaimonMysqlSyncSavepoint` of the sync.
    Savepoint {
        /// The PaimonMysqlSync.
        sync: String,
        /// The savepoint's name (default `<sync>-<UTC time>`).
        #[arg(long)]
        name: Option<String>,
    },
    /// Rebuilds the MySQL table: sets `spec.rebuild.trigger` (asks first).
    Rebuild {
        /// The PaimonMysqlSync.
        sync: String,
        /// Don't ask for confirmation (needed without a terminal).
        #[arg(long, short)]
        yes: bool,
    },
    /// Verifies MySQL against Paimon now: sets `spec.verify.trigger`.
    Verify {
        /// The PaimonMysqlSync.
        sync: String,
    },
    /// Restores the sync from a Completed savepoint (`spec.restoreFrom.savepoint`) or a snapshot
    /// (`--snapshot-id`: `spec.restoreFrom.snapshotId`); asks first.
    Restore {
        /// The PaimonMysqlSync.
        sync: String,
        /// A Completed savepoint of the sync.
        #[arg(
            long,
            required_unless_present = "snapshot_id",
            conflicts_with = "snapshot_id"
        )]
        savepoint: Option<String>,
        /// Or a snapshot of the Paimon table: the last one counted as applied (every slot goes
        /// on with the next), `spec.restoreFrom.snapshotId`.
        #[arg(long)]
        snapshot_id: Option<i64>,
        /// Don't ask for confirmation (needed without a terminal).
        #[arg(long, short)]
        yes: bool,
    },
    /// Every sync, one line each: phase, slots ready, snapshot, lag, and freshness (seconds
    /// since the oldest slot's last checkpoint).
    #[command(alias = "ls")]
    List {
        /// Of every namespace.
        #[arg(short = 'A', long)]
        all_namespaces: bool,
    },
    /// Restarts every worker once, each slot from its checkpoint: sets `spec.restartNonce`.
    Restart {
        /// The PaimonMysqlSync.
        sync: String,
    },
    /// Stops every worker after a flush and checkpoint: sets `spec.state: suspended`.
    Suspend {
        /// The PaimonMysqlSync.
        sync: String,
    },
    /// Starts the workers again from their checkpoints: sets `spec.state: running`.
    Resume {
        /// The PaimonMysqlSync.
        sync: String,
    },
    /// The logs of a sync's pods (its slots' workers and its rebuild, verify and restore Jobs)
    /// or of a database sync's (discovery, pool workers, its tables' syncs); passwords redacted.
    Logs {
        /// The PaimonMysqlSync or PaimonMysqlDatabaseSync.
        sync: String,
        /// Only this slot's worker.
        #[arg(long)]
        slot: Option<u32>,
        /// Lines from the end of each pod's log (-1: all).
        #[arg(long, default_value_t = 200, allow_negative_numbers = true)]
        tail: i64,
        /// Stream the logs as they are written, each line prefixed with its pod, until
        /// interrupted.
        #[arg(short, long)]
        follow: bool,
        /// The previous container's log (the one that crashed or was restarted).
        #[arg(short, long)]
        previous: bool,
        /// Only lines newer than this (`10m`, `1h`).
        #[arg(long, value_parser = duration)]
        since: Option<Duration>,
        /// Also the operator's lines that name the sync.
        #[arg(long)]
        operator: bool,
    },
    /// Everything a bug report needs, as YAML on stdout: the resource, its savepoints, events of
    /// it and its objects, pods and their logs' ends, the operator's lines about it; every
    /// password and secret-named value redacted.
    Report {
        /// The PaimonMysqlSync or PaimonMysqlDatabaseSync.
        sync: String,
    },
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    pms_runtime::install_tls_provider();
    let cli = Cli::parse();
    let result = async {
        let client = commands::client(cli.kubeconfig.as_deref(), cli.context.clone()).await?;
        let ns = cli
            .namespace
            .clone()
            .unwrap_or_else(|| client.default_namespace().to_string());
        let ctx = commands::Ctx { client, ns };
        match cli.command {
            Command::Status {
                sync,
                output,
                watch: false,
                ..
            } => commands::status(&ctx, &sync, output).await,
            Command::Status {
                sync,
                output,
                interval,
                ..
            } => commands::watch_status(&ctx, &sync, output, interval).await,
            Command::Check { sync, timeout } => check::check(&ctx, &sync, timeout).await,
            Command::Savepoint { sync, name } => commands::savepoint(&ctx, &sync, name).await,
            Command::Rebuild { sync, yes } => commands::rebuild(&ctx, &sync, yes).await,
            Command::Verify { sync } => commands::verify(&ctx, &sync).await,
            Command::Restore {
                sync,
                savepoint,
                snapshot_id,
                yes,
            } => match (savepoint, snapshot_id) {
                (Some(savepoint), _) => commands::restore(&ctx, &sync, &savepoint, yes).await,
                (None, Some(id)) => commands::restore_to_snapshot(&ctx, &sync, id, yes).await,
                (None, None) => Err(commands::Error::NotFound(
                    "give --savepoint or --snapshot-id".into(),
                )),
            },
            Command::List { all_namespaces } => commands::list(&ctx, all_namespaces).await,
            Command::Restart { sync } => commands::restart(&ctx, &sync).await,
            Command::Suspend { sync } => commands::set_state(&ctx, &sync, "suspended").await,
            Command::Resume { sync } => commands::set_state(&ctx, &sync, "running").await,
            Command::Logs {
                sync,
                slot,
                tail,
                follow,
                previous,
                since,
                operator,
            } => {
                let options = LogOptions {
                    slot,
                    tail: (tail >= 0).then_some(tail),
                    follow,
                    previous,
                    since,
                    operator,
                };
                logs::logs(&ctx, &sync, &options).await
            }
            Command::Report { sync } => report::print(&ctx, &sync).await,
        }
    }
    .await;
    match result {
        Ok(out) => print!("{out}"),
        Err(e) => {
            if let commands::Error::CheckFailed(report) = &e {
                print!("{report}");
            }
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
