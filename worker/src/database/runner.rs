//! Standalone: every matching table of the database synced by one process, each table an
//! ordinary sync (its own pipeline, MySQL pool, buffer, checkpoint and consumer) on a task of
//! its own. The database is listed every `discoveryInterval`: a new matching table starts (full
//! read, then changes), a dropped one stops (its MySQL table is left alone). A table whose sync
//! fails is retried with backoff; the others go on.
//!
//! A pooled worker ([`pool`]) runs the same way the tables the operator assigned to it, read
//! instead of a listing, its tables sharing one MySQL pool and its places for full reads.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use pms_crds::contract::{Slot, TableListing};
use pms_crds::{name_clashes, PlacementMode, PoolFit};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tracing::{error, info, warn};

use super::pool::{self, PoolMember, Shared};
use super::{listing, DatabaseConfig};
use crate::config::{CheckpointTarget, WorkerConfig};
use crate::error::{Result, WorkerError};
use crate::metrics::{Metrics, SyncRegistries};
use crate::pipeline::{self, RunOptions, RunSummary};

pub struct RunnerOptions {
    /// Catch every table up once, then return.
    pub once: bool,
    pub stop: watch::Receiver<bool>,
    /// Where the tables' metrics are served from (one `/metrics` for the process).
    pub registries: SyncRegistries,
    /// A pooled worker: its tables are the assigned ones.
    pub pool: Option<PoolMember>,
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
    message: String,
}

/// A pooled worker reads its assignment (and reports) this often at least.
const POOL_EVERY: Duration = Duration::from_secs(5);

/// One table's sync, as `pms-worker run` does a single table.
async fn run_table(cfg: WorkerConfig, opts: RunOptions, metrics: Metrics) -> Result<RunSummary> {
    pipeline::prepare(&cfg, opts.mysql.as_ref()).await?;
    pipeline::run(cfg, opts, metrics).await
}

/// The tables' syncs and what became of them.
struct Tables<'a> {
    db: &'a DatabaseConfig,
    env: &'a dyn Fn(&str) -> Option<String>,
    registries: SyncRegistries,
    pool: Option<&'a PoolMember>,
    /// With `placement: pooled` (a pooled worker, or standalone): what the tables share.
    shared: Option<Shared>,
    /// Every table runs once (`--once`, or after a stop).
    once: bool,
    tasks: JoinSet<(String, Result<RunSummary>)>,
    /// By table: its stop, its target for messages, and its metrics.
    running: BTreeMap<String, (watch::Sender<bool>, String, Metrics)>,
    /// Tables gone from the listing whose syncs were asked to stop.
    stopping: BTreeSet<String>,
    failed: BTreeMap<String, Failed>,
    outcomes: Vec<TableOutcome>,
}

impl Tables<'_> {
    /// Stops the syncs of tables a good listing no longer has (or that no longer match).
    fn stop_gone(&mut self, listing: &TableListing, chosen: &[String]) {
        for (table, (stop, _, _)) in self.running.iter().filter(|(t, _)| !chosen.contains(t)) {
            if self.stopping.insert(table.clone()) {
                let why = match listing.tables.contains(table) {
                    _ if self.pool.is_some() => {
                        "is no longer assigned to this worker (moved to another, dropped, or no longer matching)"
                    }
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
                None => self.table_config(table),
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
                full_reads: self.shared.as_ref().map(|s| s.full_reads.clone()),
                // A table on connections of its own (`PoolFit::Own`) still queues for a full read.
                mysql: self
                    .shared
                    .as_ref()
                    .filter(|_| cfg.pooled)
                    .map(|s| s.mysql.clone()),
            };
            let metrics = Metrics::new(&cfg.sync_name, 0);
            self.registries
                .add(&cfg.sync_name, metrics.registry().clone());
            self.running
                .insert(table.clone(), (stop_tx, cfg.target_name(), metrics.clone()));
            let table = table.clone();
            self.tasks
                .spawn(async move { (table, run_table(cfg, opts, metrics).await) });
        }
    }

    /// `table`'s config; pooled (it then writes through the shared MySQL pool), under the
    /// operator with the progress row as its only checkpoint unless it has S3 (standalone keeps
    /// its files).
    fn table_config(&self, table: &str) -> Result<WorkerConfig> {
        let mut cfg = self.db.table_config(table, Slot::SINGLE, self.env)?;
        if self.shared.is_some() {
            match self.db.spec.pool_fit(&cfg.spec) {
                Err(why) => return Err(WorkerError::Config(format!("table {table}: {why}"))),
                // The operator runs such a table as its own sync, and never assigns it here.
                Ok(PoolFit::Own(why)) if self.pool.is_some() => {
                    return Err(WorkerError::Config(format!(
                        "table {table}: {why}: it runs as its own PaimonMysqlSync, not on a pooled worker"
                    )))
                }
                // Standalone, it runs in this process on connections of its own.
                Ok(PoolFit::Own(_)) => return Ok(cfg),
                Ok(PoolFit::Shared) => {}
            }
            cfg.pooled = true;
            if self.pool.is_some() && cfg.spec.checkpoint.storage.is_none() {
                cfg.checkpoint = CheckpointTarget::ProgressRow;
            }
        }
        Ok(cfg)
    }

    /// A pooled worker's report of its tables.
    fn rows(&self, pool: &PoolMember) -> Vec<pms_crds::contract::PooledTable> {
        let running = self.running.iter().map(|(table, (_, _, metrics))| {
            pool::running_row(
                table,
                &self.db.sync_name(table),
                metrics,
                &pool.shared.full_reads,
            )
        });
        let failed = self
            .failed
            .iter()
            .filter(|(t, _)| !self.running.contains_key(*t))
            .map(|(table, f)| pool::failed_row(table, &f.message));
        let mut rows: Vec<_> = running.chain(failed).collect();
        rows.sort_by(|a, b| a.table.cmp(&b.table));
        rows
    }

    /// Every table's sync flushes, checkpoints and ends.
    fn stop_all(&mut self) {
        info!(
            tables = self.running.len(),
            "stop requested: every table flushes and checkpoints"
        );
        for (stop, _, _) in self.running.values() {
            let _ = stop.send(true);
        }
        self.once = true;
    }

    /// The database sync is deleted with its checkpoints: each of `tables` (every table this
    /// worker was given, all stopped now) forgets (`reset::forget`). What fails is logged with
    /// what is left.
    async fn forget(&self, tables: &[String]) {
        for table in tables {
            let forgotten = match self.table_config(table) {
                Ok(cfg) => crate::reset::forget(&cfg).await,
                Err(e) => Err(e),
            };
            match forgotten {
                Ok(removed) => info!(%table, ?removed,
                    "the database sync is deleted: removed the table's checkpoints, progress row, Paimon consumer and claim of the MySQL table"),
                Err(e) => warn!(%table, error = %e,
                    "the database sync is deleted, but the table's checkpoints, Paimon consumer or claim could not all be removed: \
                     remove them by hand (pms-worker reset with the table's config)"),
            }
        }
    }

    /// A table's sync ended.
    fn finished(&mut self, table: String, result: Result<RunSummary>) {
        let target = self
            .running
            .remove(&table)
            .map(|(_, target, _)| target)
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
            message: String::new(),
        });
        f.failures += 1;
        if let Err(e) = &result {
            f.message = e.to_string();
        }
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
    let pool = opts.pool.take();
    let mut tables = Tables {
        db,
        env,
        registries: opts.registries.clone(),
        pool: pool.as_ref(),
        shared: match &pool {
            Some(p) => Some(p.shared.clone()),
            None => (db.spec.placement.mode == PlacementMode::Pooled)
                .then(|| Shared::new(&db.spec.placement)),
        },
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
        let (listing, chosen) = match tables.pool {
            // The operator chose and assigned them.
            Some(pool) => {
                let listing = pool.assigned(&listed).await;
                let chosen = listing.tables.clone();
                (listing, chosen)
            }
            None => {
                let listing = listing::list(source, &listed).await;
                let chosen = db.selector.select(&listing.tables);
                (listing, chosen)
            }
        };
        match &listing.error {
            Some(e) if first && tables.pool.is_none() => {
                return Err(WorkerError::Config(e.clone()))
            }
            Some(e) => {
                warn!(error = %e, "listing the Paimon database failed; the tables go on as they are")
            }
            // Only a good listing stops anything.
            None => tables.stop_gone(&listing, &chosen),
        }
        listed = listing.tables;
        tables.start_new(&chosen, first);
        first = false;
        let every = match tables.pool {
            Some(_) => db.spec.discovery_interval.0.min(POOL_EVERY),
            None => db.spec.discovery_interval.0,
        };
        if let Some(pool) = tables.pool {
            if let Err(e) = pool.report(tables.rows(pool)).await {
                warn!(error = %e, "could not write this worker's report");
            }
        }
        let next_listing = tokio::time::sleep(every);
        tokio::pin!(next_listing);
        // Until the next listing: collect the tables that end; on a stop, stop them all.
        loop {
            if tables.once && tables.tasks.is_empty() {
                // (Before the shared pool goes: each table's config is the pooled one.)
                if let Some(pool) = tables.pool.filter(|_| stop_requested) {
                    if pool.release_asked().await {
                        tables.forget(&listed).await;
                    }
                }
                if let Some(shared) = tables.shared.take() {
                    shared.mysql.close().await;
                }
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
