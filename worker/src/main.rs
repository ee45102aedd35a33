//! `pms-worker run --config sync.yaml [--once] [--slot K --slots N] [--admin-addr ADDR]`
//! `pms-worker verify --config sync.yaml [--snapshot S] [--show N] [--repair]`
//! `pms-worker rebuild --config sync.yaml`
//! `pms-worker reset --config sync.yaml`

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use pms_crds::contract::{
    Slot, ENV_ADMIN_ADDR, ENV_CONFIG, ENV_LOG_JSON, ENV_NAMESPACE, ENV_SLOT, ENV_SLOTS,
};
use pms_runtime::Readiness;
use pms_worker::config::WorkerConfig;
use pms_worker::database::pool::PoolMember;
use pms_worker::database::runner::RunnerOptions;
use pms_worker::database::DatabaseConfig;
use pms_worker::error::WorkerError;
use pms_worker::metrics::Metrics;
use pms_worker::metrics::SyncRegistries;
use pms_worker::pipeline::{self, Outcome, RunOptions};
use pms_worker::verify::VerifyOptions;
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
    Run(RunArgs),
    /// Compare the MySQL table with a Paimon snapshot; exit 3 when they differ (after
    /// --repair: when they still differ).
    Verify(VerifyArgs),
    /// Start the sync over into a shadow table, verify it, and swap it in atomically
    /// (stop the sync first; run it again after an interruption to finish).
    Rebuild(RebuildArgs),
    /// Set every slot to go on after snapshot S (a savepoint's snapshot); stop the sync first.
    Restore(RestoreArgs),
    /// Forget where the sync was: every slot's checkpoint is removed, and the next run starts
    /// by source.scanMode (by default a full read that removes the rows Paimon doesn't have).
    /// For a sync moved to another table; stop the sync first.
    Reset(ResetArgs),
    /// Pre-flight: is the pair (Paimon table, MySQL table) and the config set up right? One
    /// line per check, ✓ / ⚠ / ✗ with the fix for each problem; exit 1 when something is ✗.
    /// Writes nothing.
    Check(CheckArgs),
    /// List the tables of the config's Paimon database every discoveryInterval (a database
    /// sync's: which match; under the operator: published for it in `<sync>` ConfigMap).
    Discover(DiscoverArgs),
    /// Run, as worker K of a pooled database sync (`placement: pooled`), the tables the operator
    /// assigned to it (ConfigMap `<name>--pool`), reporting them in `<name>--pool-K`.
    Pool(PoolArgs),
}

#[derive(Args)]
struct PoolArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// This worker's number (0 … placement.workers - 1).
    #[arg(long)]
    worker: u32,
    /// Serve /metrics (every table's, labelled by sync), /healthz and /readyz here.
    #[arg(long, env = ENV_ADMIN_ADDR)]
    admin_addr: Option<String>,
}

#[derive(Args)]
struct DiscoverArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// List once, print, exit.
    #[arg(long)]
    once: bool,
    /// How often to list (the database sync's discoveryInterval).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    every: std::time::Duration,
    /// Serve /healthz and /readyz here.
    #[arg(long, env = ENV_ADMIN_ADDR)]
    admin_addr: Option<String>,
}

#[derive(Args)]
struct CheckArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// `text` for people, `json` for automation.
    #[arg(long, value_parser = ["text", "json"], default_value = "text")]
    output: String,
    /// The longest the sync may be down and still resume (checked against the consumer's
    /// expiration), e.g. 1h, 30m, 2d.
    #[arg(long, default_value = "1h", value_parser = parse_duration)]
    max_downtime: std::time::Duration,
    /// Rows per second the full load is estimated at (measure yours with `make bench`).
    #[arg(long, default_value_t = 100_000.0)]
    full_load_rate: f64,
}

fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    humantime::parse_duration(text).map_err(|e| format!("{e}; write e.g. 30m, 1h, 2d"))
}

/// The config file every command reads.
#[derive(Args)]
struct ConfigArg {
    /// YAML file with the PaimonMysqlSync spec (or a whole resource), or a
    /// PaimonMysqlDatabaseSync's (then `run` syncs every matching table).
    #[arg(long, short, env = ENV_CONFIG)]
    config: PathBuf,
    /// With a database sync's config: the table this command is about (its sync alone).
    #[arg(long)]
    table: Option<String>,
}

fn env_var(k: &str) -> Option<String> {
    std::env::var(k).ok()
}

impl ConfigArg {
    fn text(&self) -> Result<String, WorkerError> {
        std::fs::read_to_string(&self.config).map_err(|source| WorkerError::ConfigFile {
            path: self.config.display().to_string(),
            source,
        })
    }

    /// The database sync's config, when the file (`text`) is one.
    fn database_in(&self, text: &str) -> Result<Option<DatabaseConfig>, WorkerError> {
        if !DatabaseConfig::is_database_sync(text) {
            return Ok(None);
        }
        DatabaseConfig::from_yaml(text, self.config.parent()).map(Some)
    }

    fn database(&self) -> Result<Option<DatabaseConfig>, WorkerError> {
        self.database_in(&self.text()?)
    }

    /// The config as slot `slot` sees it, credentials from the environment: of `--table` when
    /// the file is a database sync's.
    fn load(&self, slot: Slot) -> Result<WorkerConfig, WorkerError> {
        let text = self.text()?;
        let Some(db) = self.database_in(&text)? else {
            return WorkerConfig::from_yaml(&text, slot, &env_var, self.config.parent());
        };
        let table = self.table.as_deref().ok_or_else(|| {
            WorkerError::Config(format!(
                "{} syncs a database: name the table this command is about with --table",
                self.config.display()
            ))
        })?;
        if !db.selector.matches(table) {
            return Err(WorkerError::Config(format!(
                "table {table} is not among the config's tables (spec.tables)"
            )));
        }
        db.table_config(table, slot, &env_var)
    }
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// Catch up to the latest snapshot, flush, checkpoint and exit 0.
    #[arg(long)]
    once: bool,
    /// This process's slot: it owns the buckets b with b mod slots == slot.
    #[arg(long, env = ENV_SLOT, default_value_t = 0)]
    slot: u32,
    /// The sync's number of slots: the config's `parallelism`, which every command reads. Given,
    /// it must equal that (a check, not a second source).
    #[arg(long, env = ENV_SLOTS)]
    slots: Option<u32>,
    /// Serve /metrics, /healthz and /readyz here (e.g. 0.0.0.0:9464). Off by default.
    #[arg(long, env = ENV_ADMIN_ADDR)]
    admin_addr: Option<String>,
    /// Write the final metrics (Prometheus text) to this file on exit (for batch runs and benchmarks).
    #[arg(long)]
    metrics_file: Option<PathBuf>,
    /// Apply every snapshot through S (a consistent cut: the end of a snapshot), flush,
    /// checkpoint and exit 0.
    #[arg(long, value_name = "S", conflicts_with = "stop_at")]
    stop_at_snapshot: Option<i64>,
    /// `latest`: stop at the snapshot that is the latest when the run starts.
    #[arg(long, value_parser = ["latest"])]
    stop_at: Option<String>,
}

#[derive(Args)]
struct VerifyArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// The snapshot MySQL should hold (default: the latest; give the one a stopped or lagging
    /// sync is at, or changes it has not applied yet count as differences).
    #[arg(long)]
    snapshot: Option<i64>,
    /// How many keys of each kind of difference to name.
    #[arg(long, default_value_t = 10)]
    show: usize,
    /// Make MySQL equal to the latest snapshot where it differs (upsert missing and different
    /// rows, delete extra ones), then verify again. Stop the sync first.
    #[arg(long, conflicts_with = "snapshot")]
    repair: bool,
    /// Rows held in memory at most while the keys of differing chunks are looked for (more
    /// reads of both sides when more differ), within `maxBufferBytes` too.
    #[arg(long, default_value_t = pms_worker::verify::DEFAULT_ROWS_PER_PASS)]
    rows_per_pass: u64,
    /// The sync is running: compare keys that differ again (up to 3 rounds, each once every
    /// slot applied the snapshot compared before), so changes in flight don't count.
    #[arg(long, conflicts_with_all = ["snapshot", "repair"])]
    live: bool,
    /// Also write the result into the ConfigMap `<sync>-verify` (what the operator's
    /// spec.verify reads).
    #[arg(long)]
    publish: bool,
}

#[derive(Args)]
struct RebuildArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// Names this rebuild in its report (the operator passes `spec.rebuild.trigger`).
    #[arg(long)]
    trigger: Option<String>,
}

#[derive(Args)]
struct ResetArgs {
    #[command(flatten)]
    config: ConfigArg,
}

#[derive(Args)]
struct RestoreArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// Every slot goes on after this snapshot.
    #[arg(long)]
    snapshot: i64,
    /// Names this restore in its report (the operator's run of `spec.restoreFrom`).
    #[arg(long)]
    trigger: Option<String>,
}

/// Exit status of a `verify` that found differences (1 is an error).
const EXIT_DIVERGENT: u8 = 3;

fn main() -> ExitCode {
    let cli = Cli::parse();
    pms_runtime::install_tls_provider();
    // `check` prints a report: only warnings and errors are logged beside it.
    let log_level = if matches!(cli.command, Command::Check(_)) {
        "warn"
    } else {
        "info"
    };
    pms_runtime::init_logging(cli.log_json, log_level);
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
    let result = match cli.command {
        Command::Run(args) => runtime.block_on(run(args)).map(|()| ExitCode::SUCCESS),
        Command::Verify(args) => runtime.block_on(verify(args)),
        Command::Rebuild(args) => runtime.block_on(rebuild(args)).map(|()| ExitCode::SUCCESS),
        Command::Restore(args) => runtime.block_on(restore(args)).map(|()| ExitCode::SUCCESS),
        Command::Reset(args) => runtime.block_on(reset(args)).map(|()| ExitCode::SUCCESS),
        Command::Check(args) => Ok(runtime.block_on(check(args))),
        Command::Discover(args) => runtime.block_on(discover(args)).map(|()| ExitCode::SUCCESS),
        Command::Pool(args) => runtime.block_on(pool(args)).map(|()| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            error!("{e}");
            ExitCode::FAILURE
        }
    }
}

async fn check(args: CheckArgs) -> ExitCode {
    let opts = pms_worker::check::CheckOptions {
        max_downtime: args.max_downtime,
        full_load_rows_per_second: args.full_load_rate,
    };
    let loaded = args.config.load(Slot::SINGLE);
    let report = pms_worker::check::run(&args.config.config, loaded, &opts).await;
    if args.output == "json" {
        match serde_json::to_string_pretty(&report) {
            Ok(json) => println!("{json}"),
            Err(e) => {
                error!("can't write the report as JSON: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        print!("{}", report.text());
    }
    if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

async fn verify(args: VerifyArgs) -> Result<ExitCode, pms_worker::error::WorkerError> {
    let cfg = args.config.load(Slot::SINGLE)?;
    let opts = VerifyOptions {
        snapshot: args.snapshot,
        show: args.show,
        repair: args.repair,
        rows_per_pass: args.rows_per_pass,
        live: args.live,
    };
    let report = pms_worker::verify::verify(&cfg, &opts).await?;
    print!("{report}");
    if args.publish {
        pms_worker::verify::publish(&cfg, &report).await?;
    }
    if report.divergent_rows() == 0 {
        info!(snapshot = report.snapshot_id, rows = report.paimon_rows, target = %cfg.target_name(), "MySQL equals Paimon");
        Ok(ExitCode::SUCCESS)
    } else {
        error!(snapshot = report.snapshot_id, divergent_rows = report.divergent_rows(), target = %cfg.target_name(),
               "MySQL differs from Paimon");
        Ok(ExitCode::from(EXIT_DIVERGENT))
    }
}

impl ConfigArg {
    /// The config of every slot of the sync.
    fn load_all(&self) -> Result<Vec<WorkerConfig>, pms_worker::error::WorkerError> {
        let slots = self.load(Slot::SINGLE)?.spec.parallelism;
        (0..slots)
            .map(|k| self.load(Slot::new(k, slots)?))
            .collect()
    }
}

async fn restore(args: RestoreArgs) -> Result<(), pms_worker::error::WorkerError> {
    let configs = args.config.load_all()?;
    pms_worker::restore::restore(&configs, args.snapshot, args.trigger).await?;
    println!(
        "restored {}: every slot goes on after snapshot {}",
        configs[0].target_name(),
        args.snapshot
    );
    Ok(())
}

async fn reset(args: ResetArgs) -> Result<(), pms_worker::error::WorkerError> {
    let configs = args.config.load_all()?;
    let removed = pms_worker::reset::reset(&configs).await?;
    match removed.as_slice() {
        [] => println!("{}: no checkpoint to remove", configs[0].sync_name),
        _ => println!(
            "{}: removed {}; the next run starts by source.scanMode",
            configs[0].sync_name,
            removed.join(", ")
        ),
    }
    Ok(())
}

async fn rebuild(args: RebuildArgs) -> Result<(), pms_worker::error::WorkerError> {
    let configs = args.config.load_all()?;
    let first = &configs[0];
    let done = pms_worker::rebuild::rebuild(&configs, args.trigger).await?;
    println!(
        "rebuilt {}: {} rows at snapshot {}",
        first.target_name(),
        done.rows,
        done.snapshot_id
    );
    Ok(())
}

async fn run(args: RunArgs) -> Result<(), pms_worker::error::WorkerError> {
    let RunArgs {
        config,
        once,
        slot,
        slots,
        admin_addr,
        metrics_file,
        stop_at_snapshot,
        stop_at,
    } = args;
    let stop_at = stop_at_snapshot
        .map(pipeline::StopAt::Snapshot)
        .or(stop_at.map(|_| pipeline::StopAt::Latest));
    if config.table.is_none() {
        if let Some(db) = config.database()? {
            if stop_at.is_some() || slots.is_some_and(|n| n > 1) {
                return Err(WorkerError::Config(
                    "a database sync runs every table whole: --stop-at and --slots are for one table (--table)".into(),
                ));
            }
            return run_database(db, once, admin_addr, metrics_file, None).await;
        }
    }
    let parallelism = config.load(Slot::SINGLE)?.spec.parallelism;
    if let Some(n) = slots.filter(|&n| n != parallelism) {
        return Err(WorkerError::Config(format!(
            "--slots {n} disagrees with the config's parallelism {parallelism}: the slot layout has one source, the \
             config's `parallelism`, which run, restore, rebuild, verify and check all read. Set `parallelism: {n}` \
             there (a changed parallelism is a rescale from the old slots' checkpoints) and leave out --slots"
        )));
    }
    let cfg = config.load(Slot::new(slot, parallelism)?)?;
    let metrics = Metrics::new(&cfg.sync_name, cfg.slot.index);
    let ready = Readiness::default();
    if let Some(addr) = &admin_addr {
        pms_runtime::serve_admin(addr, metrics.registry().clone(), ready.clone()).await?;
    }
    pipeline::prepare(&cfg, None).await?;
    let stop = stop_on_signal();
    let result = pipeline::run(
        cfg.clone(),
        RunOptions {
            once,
            stop_at,
            stop,
            ready,
            full_reads: None,
            mysql: None,
        },
        metrics.clone(),
    )
    .await;
    if let Some(path) = &metrics_file {
        if let Err(e) = std::fs::write(path, metrics.render()) {
            tracing::warn!(path = %path.display(), error = %e, "could not write the metrics file");
        }
    }
    if let Err(e) = &result {
        pms_worker::checkpoint::Checkpointer::note_failure(&cfg, e).await;
    }
    let summary = result?;
    let message = match summary.outcome {
        Outcome::CaughtUp => "done",
        Outcome::Stopped => "stopped: flushed and checkpointed; the next run resumes here",
        Outcome::NoSnapshot => "done: the table has no snapshot yet",
        Outcome::ReachedCut(_) => {
            "stopped at the end of the requested snapshot: flushed and checkpointed"
        }
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

/// `pms-worker pool`.
async fn pool(args: PoolArgs) -> Result<(), WorkerError> {
    let Some(db) = args.config.database()? else {
        return Err(WorkerError::Config(
            "pms-worker pool runs a PaimonMysqlDatabaseSync's config (kind PaimonMysqlDatabaseSync)".into(),
        ));
    };
    let name = db.name.clone().ok_or_else(|| {
        WorkerError::Config(
            "a pooled worker's config names its database sync (metadata.name)".into(),
        )
    })?;
    let placement = &db.spec.placement;
    if args.worker >= placement.workers {
        return Err(WorkerError::Config(format!(
            "--worker {} is not one of the {} workers of placement",
            args.worker, placement.workers
        )));
    }
    let member = PoolMember::connect(&name, args.worker, placement, env_var(ENV_NAMESPACE)).await?;
    run_database(db, false, args.admin_addr, None, Some(member)).await
}

/// `run` of a database sync: every matching table in this process (a pooled worker: the ones
/// assigned to it).
async fn run_database(
    db: DatabaseConfig,
    once: bool,
    admin_addr: Option<String>,
    metrics_file: Option<PathBuf>,
    pool: Option<PoolMember>,
) -> Result<(), WorkerError> {
    let registries = SyncRegistries::default();
    if let Some(addr) = &admin_addr {
        pms_runtime::serve_admin(addr, registries.registry(), Readiness::ready()).await?;
    }
    let stop = stop_on_signal();
    let opts = RunnerOptions {
        once,
        stop,
        registries: registries.clone(),
        pool,
    };
    let outcomes = pms_worker::database::runner::run(&db, &env_var, opts).await?;
    if let Some(path) = &metrics_file {
        if let Err(e) = std::fs::write(path, pms_runtime::render(&registries.registry())) {
            tracing::warn!(path = %path.display(), error = %e, "could not write the metrics file");
        }
    }
    let failed: Vec<String> = outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().err().map(|e| format!("{}: {e}", o.table)))
        .collect();
    for o in &outcomes {
        match &o.result {
            Ok(s) => println!(
                "{}\t{}\tsnapshot {}\t{} records read",
                o.table,
                o.target,
                s.snapshot_id.map_or("-".into(), |s| s.to_string()),
                s.records_read
            ),
            Err(_) => println!("{}\t{}\tFAILED", o.table, o.target),
        }
    }
    if failed.is_empty() {
        info!(tables = outcomes.len(), "every table's sync finished");
        Ok(())
    } else {
        Err(WorkerError::Config(format!(
            "{} of {} tables failed (the others finished):\n  - {}",
            failed.len(),
            outcomes.len(),
            failed.join("\n  - ")
        )))
    }
}

/// `pms-worker discover`.
async fn discover(args: DiscoverArgs) -> Result<(), WorkerError> {
    let ready = Readiness::default();
    if let Some(addr) = &args.admin_addr {
        pms_runtime::serve_admin(addr, prometheus::Registry::new(), ready.clone()).await?;
    }
    let stop = stop_on_signal();
    if let Some(db) = args.config.database()? {
        // Standalone: which tables the database has and which of them the config syncs.
        let listing = pms_worker::database::listing::list(&db.spec.template.source, &[]).await;
        if let Some(e) = listing.error {
            return Err(WorkerError::Config(e));
        }
        for t in &listing.tables {
            let chosen = if db.selector.matches(t) {
                "synced"
            } else {
                "not matched"
            };
            println!("{t}\t{chosen}");
        }
        return Ok(());
    }
    let cfg = args.config.load(Slot::SINGLE)?;
    pms_worker::database::listing::discover(
        &cfg.spec.source,
        &cfg.sync_name,
        cfg.pod_namespace.clone(),
        args.every,
        args.once,
        &ready,
        stop,
    )
    .await
}

/// Becomes `true` on SIGTERM/SIGINT.
fn stop_on_signal() -> watch::Receiver<bool> {
    let (stop_tx, stop) = watch::channel(false);
    tokio::spawn(async move {
        wait_for_signal().await;
        info!("stop requested: flushing and checkpointing");
        let _ = stop_tx.send(true);
    });
    stop
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
