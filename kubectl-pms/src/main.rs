//! `kubectl pms`: the everyday commands for paimon-mysql-sync, as a kubectl plugin (copy
//! `kubectl-pms` onto the PATH, or install it with krew: `kubectl-pms/krew.yaml`).
//!
//! Every command that changes something edits the field a user would (a trigger in the spec,
//! `spec.state`, a `PaimonMysqlSyncSavepoint`), so a GitOps tool sees what it did, and prints
//! which field it set. It never reads a Secret.

mod commands;
mod redact;
mod report;
mod status;

use clap::{Parser, Subcommand};

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
    Status { sync: String },
    /// Takes a savepoint now: creates a `PaimonMysqlSyncSavepoint` of the sync.
    Savepoint {
        sync: String,
        /// The savepoint's name (default `<sync>-<UTC time>`).
        #[arg(long)]
        name: Option<String>,
    },
    /// Rebuilds the MySQL table: sets `spec.rebuild.trigger` (asks first).
    Rebuild {
        sync: String,
        /// Don't ask for confirmation (needed without a terminal).
        #[arg(long, short)]
        yes: bool,
    },
    /// Verifies MySQL against Paimon now: sets `spec.verify.trigger`.
    Verify { sync: String },
    /// Restores the sync from a Completed savepoint (`spec.restoreFrom.savepoint`) or a snapshot
    /// (`--snapshot-id`: `spec.restoreFrom.snapshotId`); asks first.
    Restore {
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
    Restart { sync: String },
    /// Stops every worker after a flush and checkpoint: sets `spec.state: suspended`.
    Suspend { sync: String },
    /// Starts the workers again from their checkpoints: sets `spec.state: running`.
    Resume { sync: String },
    /// The worker pods' logs (each slot's, or one's).
    Logs {
        sync: String,
        #[arg(long)]
        slot: Option<u32>,
        /// Lines from the end of each pod's log.
        #[arg(long, default_value_t = 200)]
        tail: i64,
    },
    /// Everything a bug report needs, as YAML on stdout: the resource, its savepoints, events,
    /// pods and their logs' ends, every password in a URL redacted.
    Report { sync: String },
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
            Command::Status { sync } => commands::status(&ctx, &sync).await,
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
            Command::Logs { sync, slot, tail } => commands::logs(&ctx, &sync, slot, tail).await,
            Command::Report { sync } => report::print(&ctx, &sync).await,
        }
    }
    .await;
    match result {
        Ok(out) => print!("{out}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
