//! `pms-worker run --config sync.yaml [--once] [--slot K --slots N] [--admin-addr ADDR]`

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use pms_crds::contract::{Slot, ENV_ADMIN_ADDR, ENV_CONFIG, ENV_LOG_JSON, ENV_SLOT, ENV_SLOTS};
use pms_runtime::Readiness;
use pms_worker::config::WorkerConfig;
use pms_worker::metrics::Metrics;
use pms_worker::pipeline::{self, Outcome, RunOptions};
use tokio::sync::watch;
use tracing::{error, info};

#[derive(Parser)]
#[command(
    name = "pms-worker",
    version,
    about = "Keeps a MySQL table equal to an Apache Paimon primary-key table"
)]
struct Cli {
    /// Log as JSON lines instead of text.
    #[arg(long, global = true, env = ENV_LOG_JSON)]
    log_json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Sync continuously (or catch up once with --once).
    Run {
        /// YAML file with the PaimonMysqlSync spec (or a whole resource).
        #[arg(long, short, env = ENV_CONFIG)]
        config: PathBuf,
        /// Catch up to the latest snapshot, flush, checkpoint and exit 0.
        #[arg(long)]
        once: bool,
        /// This process's slot: it owns the buckets b with b mod slots == slot.
        #[arg(long, env = ENV_SLOT, default_value_t = 0)]
        slot: u32,
        #[arg(long, env = ENV_SLOTS, default_value_t = 1)]
        slots: u32,
        /// Serve /metrics, /healthz and /readyz here (e.g. 0.0.0.0:9464). Off by default.
        #[arg(long, env = ENV_ADMIN_ADDR)]
        admin_addr: Option<String>,
        /// Write the final metrics (Prometheus text) to this file on exit (for batch runs and benchmarks).
        #[arg(long)]
        metrics_file: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    pms_runtime::install_tls_provider();
    pms_runtime::init_logging(cli.log_json, "info");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("pms-worker: can't start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli.command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error!("{e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command) -> Result<(), pms_worker::error::WorkerError> {
    let Command::Run {
        config,
        once,
        slot,
        slots,
        admin_addr,
        metrics_file,
    } = command;
    let env = |k: &str| std::env::var(k).ok();
    let cfg = WorkerConfig::load(&config, Slot::new(slot, slots)?, &env)?;
    let metrics = Metrics::new(&cfg.sync_name, cfg.slot.index);
    let ready = Readiness::default();
    if let Some(addr) = &admin_addr {
        pms_runtime::serve_admin(addr, metrics.registry().clone(), ready.clone()).await?;
    }
    let (stop_tx, stop) = watch::channel(false);
    tokio::spawn(async move {
        wait_for_signal().await;
        info!("stop requested: flushing and checkpointing");
        let _ = stop_tx.send(true);
    });
    let result = pipeline::run(
        cfg.clone(),
        RunOptions { once, stop, ready },
        metrics.clone(),
    )
    .await;
    if let Some(path) = &metrics_file {
        if let Err(e) = std::fs::write(path, metrics.render()) {
            tracing::warn!(path = %path.display(), error = %e, "could not write the metrics file");
        }
    }
    let summary = result?;
    let message = match summary.outcome {
        Outcome::CaughtUp => "done",
        Outcome::Stopped => "stopped: flushed and checkpointed; the next run resumes here",
        Outcome::NoSnapshot => "done: the table has no snapshot yet",
    };
    info!(
        snapshot = ?summary.snapshot_id,
        records_read = summary.records_read,
        full_read_rows_per_sec = ?summary.full_read_rows_per_sec.map(|r| r as u64),
        target = %cfg.target_name(),
        "{message}"
    );
    Ok(())
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}
