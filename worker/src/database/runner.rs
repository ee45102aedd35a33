//! Standalone: every matching table of the database synced by one process, each table an
//! ordinary sync (its own pipeline, MySQL pool, buffer, checkpoint and consumer) on a task of
//! its own. The database is listed every `discoveryInterval`: a new matching table starts (full
//! read, then changes), a dropped one stops (its MySQL table is left alone). A table whose sync
//! fails is retried with backoff; the others go on.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use pms_crds::contract::{Slot, TableListing};
use pms_crds::name_clashes;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tracing::{error, info, warn};

use super::{listing, DatabaseConfig};
use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};
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
    pipeline::prepare(&cfg).await?;
    pipeline::run(cfg, opts, metrics).await
}

/// The tables' syncs and what became of them.
struct Tables<'a> {
    db: &'a DatabaseConfig,
    env: &'a dyn Fn(&str) -> Option<String>,
    registries: SyncRegistries,
    /// Every table runs once (`--once`, or after a stop).
    once: bool,
    tasks: JoinSet<(String, Result<RunSummary>)>,
    /// By table: its stop, and its target for messages.
    running: BTreeMap<String, (watch::Sender<bool>, String)>,
    /// Tables gone from the listing whose syncs were asked to stop.
    stopping: BTreeSet<String>,
    failed: BTreeMap<String, Failed>,
    outcomes: Vec<TableOutcome>,
}

impl Tables<'_> {
    /// Stops the syncs of tables a good listing no longer has (or that no longer match).
    fn stop_gone(&mut self, listing: &TableListing, chosen: &[String]) {
        for (table, (stop, _)) in self.running.iter().filter(|(t, _)| !chosen.contains(t)) {
            if self.stopping.insert(table.clone()) {
                let why = match listing.tables.contains(table) {
                    true => "no longer matches spec.tables",
                    false => "was dropped in Paimon",
                };
                warn!(%table, "the table {why}: its sync stops; the MySQL table is left as it is");
                let _ = stop.send(true);
            }
        }
        self.failed.retain(|t, _| chosen.contains(t));
    }

    /// Starts the sync of each chosen table that has none (a failed one once its backoff is over).
    fn start_new(&mut self, chosen: &[String], first: bool) {
        let now = Instant::now();
        let clashes = name_clashes(chosen);
        for table in chosen {
            let waiting = self.failed.get(table).is_some_and(|f| f.retry_at > now);
            if self.running.contains_key(table) || waiting {
                continue;
            }
            let config = match clashes.get(table) {
                Some(why) => Err(WorkerError::Config(why.clone())),
                None => self.db.table_config(table, Slot::SINGLE, self.env),
            };
            let cfg = match config {
                Ok(cfg) => cfg,
                Err(e) => {
                    error!(%table, error = %e, "the table's config is invalid; the other tables go on");
                    self.failed_with(table, String::new(), Err(e));
                    continue;
                }
            };
            if !first {
                info!(%table, target = %cfg.target_name(), "a new table matches: starting its sync");
            }
            let (stop_tx, stop) = watch::channel(false);
            let opts = RunOptions {
                once: self.once,
                stop_at: None,
                stop,
                ready: Default::default(),
            };
            let metrics = Metrics::new(&cfg.sync_name, 0);
            self.registries
                .add(&cfg.sync_name, metrics.registry().clone());
            self.running
                .insert(table.clone(), (stop_tx, cfg.target_name()));
            let table = table.clone();
            self.tasks
                .spawn(async move { (table, run_table(cfg, opts, metrics).await) });
        }
    }

    /// Every table's sync flushes, checkpoints and ends.
    fn stop_all(&mut self) {
        info!(
            tables = self.running.len(),
            "stop requested: every table flushes and checkpoints"
        );
        for (stop, _) in self.running.values() {
            let _ = stop.send(true);
        }
        self.once = true;
    }

    /// A table's sync ended.
    fn finished(&mut self, table: String, result: Result<RunSummary>) {
        let target = self
            .running
            .remove(&table)
            .map(|(_, target)| target)
            .unwrap_or_default();
        self.registries.remove(&self.db.sync_name(&table));
        let dropped = self.stopping.remove(&table);
        match &result {
            Ok(_) | Err(_) if dropped => info!(%table, "its sync stopped"),
            Ok(s) => {
                info!(%table, %target, snapshot = ?s.snapshot_id, records_read = s.records_read, "the table's sync finished")
            }
            Err(e) => {
                error!(%table, %target, error = %e, "the table's sync failed; the other tables go on")
            }
        }
        match result {
            Err(e) if !dropped => self.failed_with(&table, target, Err(e)),
            result if self.once => self.outcomes.push(TableOutcome {
                table,
                target,
                result: result.map_err(|e| e.to_string()),
            }),
            _ => {}
        }
    }

    /// Notes a failure: a retry after its backoff, or (once) the outcome.
    fn failed_with(&mut self, table: &str, target: String, result: Result<RunSummary>) {
        let f = self.failed.entry(table.to_string()).or_insert(Failed {
            failures: 0,
            retry_at: Instant::now(),
        });
        f.failures += 1;
        f.retry_at = Instant::now() + backoff(f.failures);
        if self.once {
            self.outcomes.push(TableOutcome {
                table: table.into(),
                target,
                result: result.map_err(|e| e.to_string()),
            });
        } else {
            info!(%table, retry_in = ?backoff(f.failures), "its sync starts again after a pause");
        }
    }
}

pub async fn run(
    db: &DatabaseConfig,
    env: &dyn Fn(&str) -> Option<String>,
    mut opts: RunnerOptions,
) -> Result<Vec<TableOutcome>> {
    let source = &db.spec.template.source;
    let mut tables = Tables {
        db,
        env,
        registries: opts.registries.clone(),
        once: opts.once,
        tasks: JoinSet::new(),
        running: BTreeMap::new(),
        stopping: BTreeSet::new(),
        failed: BTreeMap::new(),
        outcomes: Vec::new(),
    };
    let mut listed: Vec<String> = Vec::new();
    let mut first = true;
    let mut stop_requested = false;
    loop {
        let listing = listing::list(source, &listed).await;
        let chosen = db.selector.select(&listing.tables);
        match &listing.error {
            Some(e) if first => return Err(WorkerError::Config(e.clone())),
            Some(e) => {
                warn!(error = %e, "listing the Paimon database failed; the tables go on as they are")
            }
            // Only a good listing stops anything.
            None => tables.stop_gone(&listing, &chosen),
        }
        listed = listing.tables;
        tables.start_new(&chosen, first);
        first = false;
        let next_listing = tokio::time::sleep(db.spec.discovery_interval.0);
        tokio::pin!(next_listing);
        // Until the next listing: collect the tables that end; on a stop, stop them all.
        loop {
            if tables.once && tables.tasks.is_empty() {
                return Ok(tables.outcomes);
            }
            tokio::select! {
                _ = &mut next_listing, if !tables.once => break,
                _ = opts.stop.changed(), if !stop_requested => {
                    stop_requested = true;
                    tables.stop_all();
                }
                Some(joined) = tables.tasks.join_next(), if !tables.tasks.is_empty() => {
                    let (table, result) = joined
                        .map_err(|e| WorkerError::Config(format!("a table's task panicked: {e}")))?;
                    tables.finished(table, result);
                }
            }
        }
    }
}
