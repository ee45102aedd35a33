//! Standalone: every matching table of the database synced by one process, each table an
//! ordinary sync (its own pipeline, MySQL pool, buffer, checkpoint and consumer) on a task of
//! its own. The database is listed every `discoveryInterval`: a new matching table starts (full
//! read, then changes), a dropped one stops (its MySQL table is left alone). A table whose sync
//! fails is retried with backoff; the others go on.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use pms_crds::contract::Slot;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tracing::{error, info, warn};

use super::{listing, DatabaseConfig};
use crate::config::WorkerConfig;
use crate::error::Result;
use crate::metrics::{Metrics, SyncRegistries};
use crate::pipeline::{self, RunOptions, RunSummary};

pub struct RunnerOptions {
    /// Catch every table up once, then return.
    pub once: bool,
    pub stop: watch::Receiver<bool>,
    /// Where the tables' metrics are served from (one `/metrics` for the process).
    pub registries: SyncRegistries,
}

/// How one table's sync ended (a run with `once`, or a table that stopped).
#[derive(Debug)]
pub struct TableOutcome {
    pub table: String,
    pub target: String,
    pub result: std::result::Result<RunSummary, String>,
}

/// A failed table is started again after 10s, 20s, 40s … at most 5 min.
fn backoff(failures: u32) -> Duration {
    Duration::from_secs(10 << failures.saturating_sub(1).min(5)).min(Duration::from_secs(300))
}

struct Failed {
    failures: u32,
    retry_at: Instant,
}

/// One table's sync, as `pms-worker run` does a single table.
async fn run_table(cfg: WorkerConfig, opts: RunOptions, metrics: Metrics) -> Result<RunSummary> {
    crate::sink::create_table::ensure(&cfg).await?;
    crate::rebuild::refuse_if_in_progress(&cfg).await?;
    pipeline::run(cfg, opts, metrics).await
}

pub async fn run(
    db: &DatabaseConfig,
    env: &dyn Fn(&str) -> Option<String>,
    mut opts: RunnerOptions,
) -> Result<Vec<TableOutcome>> {
    let source = &db.spec.template.source;
    let mut tasks: JoinSet<(String, Result<RunSummary>)> = JoinSet::new();
    let mut running: BTreeMap<String, (watch::Sender<bool>, String)> = BTreeMap::new();
    let mut stopping: BTreeSet<String> = BTreeSet::new();
    let mut failed: BTreeMap<String, Failed> = BTreeMap::new();
    let mut outcomes = Vec::new();
    let mut listed: Vec<String> = Vec::new();
    let mut first = true;
    let mut stop_requested = false;
    loop {
        let listing = listing::list(source, &listed).await;
        let chosen = db.selector.select(&listing.tables);
        match &listing.error {
            Some(e) if first => return Err(crate::error::WorkerError::Config(e.clone())),
            Some(e) => {
                warn!(error = %e, "listing the Paimon database failed; the tables go on as they are")
            }
            None => {
                // Only a good listing stops anything.
                for (table, (stop, _)) in running.iter().filter(|(t, _)| !chosen.contains(t)) {
                    if stopping.insert(table.clone()) {
                        let why = if listing.tables.contains(table) {
                            "no longer matches spec.tables"
                        } else {
                            "was dropped in Paimon"
                        };
                        warn!(%table, "the table {why}: its sync stops; the MySQL table is left as it is");
                        let _ = stop.send(true);
                    }
                }
                failed.retain(|t, _| chosen.contains(t));
            }
        }
        listed = listing.tables;
        let now = Instant::now();
        for table in &chosen {
            if running.contains_key(table) || failed.get(table).is_some_and(|f| f.retry_at > now) {
                continue;
            }
            let cfg = match db.table_config(table, Slot::SINGLE, env) {
                Ok(cfg) => cfg,
                Err(e) => {
                    error!(%table, error = %e, "the table's config is invalid; the other tables go on");
                    note_failure(&mut failed, table);
                    if opts.once {
                        outcomes.push(TableOutcome {
                            table: table.clone(),
                            target: String::new(),
                            result: Err(e.to_string()),
                        });
                    }
                    continue;
                }
            };
            if !first {
                info!(%table, target = %cfg.target_name(), "a new table matches: starting its sync");
            }
            let (stop_tx, stop) = watch::channel(false);
            let run_opts = RunOptions {
                once: opts.once,
                stop_at: None,
                stop,
                ready: Default::default(),
            };
            let metrics = Metrics::new(&cfg.sync_name, 0);
            opts.registries
                .add(&cfg.sync_name, metrics.registry().clone());
            running.insert(table.clone(), (stop_tx, cfg.target_name()));
            let table = table.clone();
            tasks.spawn(async move { (table, run_table(cfg, run_opts, metrics).await) });
        }
        first = false;
        let wait = tokio::time::sleep(db.spec.discovery_interval.0);
        tokio::pin!(wait);
        // Until the next listing: collect the tables that end, stop them all on a stop.
        loop {
            // With `once` (or after a stop) the run ends when every table has.
            if opts.once && tasks.is_empty() {
                return Ok(outcomes);
            }
            tokio::select! {
                _ = &mut wait, if !opts.once => break,
                _ = opts.stop.changed(), if !stop_requested => {
                    info!(tables = running.len(), "stop requested: every table flushes and checkpoints");
                    for (stop, _) in running.values() {
                        let _ = stop.send(true);
                    }
                    stop_requested = true;
                    opts.once = true;
                }
                Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                    let (table, result) = joined.map_err(|e| crate::error::WorkerError::Config(format!("a table's task panicked: {e}")))?;
                    let target = running.remove(&table).map(|(_, target)| target).unwrap_or_default();
                    opts.registries.remove(&db.sync_name(&table));
                    let dropped = stopping.remove(&table);
                    match &result {
                        Ok(_) if dropped => info!(%table, "its sync stopped"),
                        Ok(summary) => info!(%table, %target, snapshot = ?summary.snapshot_id, records_read = summary.records_read, "the table's sync finished"),
                        Err(e) if dropped => info!(%table, error = %e, "its sync stopped"),
                        Err(e) => {
                            let failures = note_failure(&mut failed, &table);
                            error!(%table, %target, error = %e, retry_in = ?(!opts.once).then(|| backoff(failures)),
                                   "the table's sync failed; the other tables go on");
                        }
                    }
                    if opts.once {
                        outcomes.push(TableOutcome { table, target, result: result.map_err(|e| e.to_string()) });
                    }
                }
            }
        }
    }
}

fn note_failure(failed: &mut BTreeMap<String, Failed>, table: &str) -> u32 {
    let f = failed.entry(table.to_string()).or_insert(Failed {
        failures: 0,
        retry_at: Instant::now(),
    });
    f.failures += 1;
    f.retry_at = Instant::now() + backoff(f.failures);
    f.failures
}
