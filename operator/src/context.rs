//! What every reconcile shares.

use std::collections::BTreeMap;

use kube::runtime::events::Recorder;
use kube::Client;
use pms_crds::{SyncPhase, TableStatus};
use prometheus::{Histogram, HistogramOpts, IntCounterVec, IntGaugeVec, Opts, Registry};

/// Settings from the command line (and the Helm chart's values).
#[derive(Clone, Debug)]
pub struct Settings {
    /// The worker image for the Deployments.
    pub worker_image: String,
    pub image_pull_policy: String,
    /// Pull secrets of the worker pods whose sync names none (`spec.workerPod.imagePullSecrets`).
    pub worker_image_pull_secrets: Vec<String>,
    /// The worker's admin port (metrics, probes).
    pub admin_port: i32,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            worker_image: "ghcr.io/paimon-mysql-sync/pms-worker:0.1.0".into(),
            image_pull_policy: "IfNotPresent".into(),
            worker_image_pull_secrets: Vec::new(),
            admin_port: 9464,
        }
    }
}

#[derive(Clone)]
pub struct Context {
    pub client: Client,
    pub settings: Settings,
    /// One recorder for all reconciles: a repeated event becomes a series on one Event
    /// object instead of a new object per reconcile.
    pub recorder: Recorder,
    pub metrics: Metrics,
    /// Checked before every reconcile (a frozen leader must not write once another leads).
    pub leadership: Option<crate::leadership::Leadership>,
    /// Staggers the restarts an operator upgrade causes.
    pub restart_gate: std::sync::Arc<crate::restart_gate::RestartGate>,
    /// Polls the checkpoints of syncs that keep them on S3.
    pub s3_watch: std::sync::Arc<crate::s3_watch::S3Watch>,
}

/// Reconcile metrics, as kube-rs' controller-rs keeps them: how many (by result), why they
/// failed (a bounded reason), and how long they took.
#[derive(Clone)]
pub struct Metrics {
    pub registry: Registry,
    /// Every reconcile; `result` is `ok` or `error` (the name of the first release).
    pub reconciles: IntCounterVec,
    /// `reason` is [`crate::error::Error::reason`]: a handful of fixed values.
    pub failures: IntCounterVec,
    pub duration: Histogram,
    /// `pms_verify_divergent_rows{namespace,sync}`: what the last periodic verify found.
    pub divergent_rows: IntGaugeVec,
    /// `pms_sync_phase{namespace,sync,phase}`: 1 for the sync's phase, 0 for the others (so an
    /// alert `== 1` for N minutes works, as kube-state-metrics does for pod phases).
    pub phase: IntGaugeVec,
    /// `pms_sync_rolled_back{namespace,sync}`: 1 while `spec.rollback` runs the last stable
    /// spec instead of the one asked for.
    pub rolled_back: IntGaugeVec,
    /// `pms_operator_api_requests_total{verb}`: every request to the API server (`WATCH` for
    /// a watch), what the operator's API load is measured by.
    pub api_requests: IntCounterVec,
    /// `pms_database_tables{namespace,database_sync,phase}`: a database sync's tables by the
    /// phase of their sync (a table without one yet counts as `Pending`).
    pub database_tables: IntGaugeVec,
    /// `pms_database_pool_workers{namespace,database_sync,state}`: a pooled database sync's
    /// workers, `wanted` and `reporting` (a report within the last minute).
    pub pool_workers: IntGaugeVec,
    /// `pms_operator_undecodable_objects{kind,namespace,name}`: 1 for each object of the
    /// operator's kinds it can't decode (and so leaves alone; see `undecodable.rs`).
    pub undecodable: IntGaugeVec,
    /// By pooled database sync, the sync names of its tables given a `pms_sync_phase` (a
    /// pooled table has no `PaimonMysqlSync` to report it), so a table that goes loses it.
    pooled_tables: std::sync::Arc<std::sync::Mutex<PooledTables>>,
}

/// By (namespace, database sync), its pooled tables' sync names.
type PooledTables = BTreeMap<(String, String), Vec<String>>;

impl Metrics {
    pub fn new() -> Result<Self, prometheus::Error> {
        let registry = Registry::new();
        let reconciles = IntCounterVec::new(
            Opts::new("pms_operator_reconciles_total", "Reconciles by result"),
            &["result"],
        )?;
        let failures = IntCounterVec::new(
            Opts::new(
                "pms_operator_reconcile_errors_total",
                "Failed reconciles by reason",
            ),
            &["reason"],
        )?;
        let duration = Histogram::with_opts(
            HistogramOpts::new(
                "pms_operator_reconcile_duration_seconds",
                "Duration of one reconcile",
            )
            .buckets(vec![0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 15.0]),
        )?;
        registry.register(Box::new(reconciles.clone()))?;
        registry.register(Box::new(failures.clone()))?;
        registry.register(Box::new(duration.clone()))?;
        let divergent_rows = IntGaugeVec::new(
            Opts::new(
                "pms_verify_divergent_rows",
                "Rows the last periodic verify found different between MySQL and Paimon",
            ),
            &["namespace", "sync"],
        )?;
        registry.register(Box::new(divergent_rows.clone()))?;
        let phase = IntGaugeVec::new(
            Opts::new("pms_sync_phase", "1 for the sync's current phase"),
            &["namespace", "sync", "phase"],
        )?;
        registry.register(Box::new(phase.clone()))?;
        let rolled_back = IntGaugeVec::new(
            Opts::new(
                "pms_sync_rolled_back",
                "1 while the sync runs its last stable spec instead of the one asked for (spec.rollback)",
            ),
            &["namespace", "sync"],
        )?;
        registry.register(Box::new(rolled_back.clone()))?;
        let api_requests = IntCounterVec::new(
            Opts::new(
                "pms_operator_api_requests_total",
                "Requests to the Kubernetes API server, by verb (WATCH for a watch)",
            ),
            &["verb"],
        )?;
        registry.register(Box::new(api_requests.clone()))?;
        let database_tables = IntGaugeVec::new(
            Opts::new(
                "pms_database_tables",
                "A database sync's tables by the phase of their sync",
            ),
            &["namespace", "database_sync", "phase"],
        )?;
        registry.register(Box::new(database_tables.clone()))?;
        let pool_workers = IntGaugeVec::new(
            Opts::new(
                "pms_database_pool_workers",
                "A pooled database sync's workers: wanted, and reporting (a report within the last minute)",
            ),
            &["namespace", "database_sync", "state"],
        )?;
        registry.register(Box::new(pool_workers.clone()))?;
        let undecodable = IntGaugeVec::new(
            Opts::new(
                "pms_operator_undecodable_objects",
                "1 for each object of the operator's kinds it can't decode (left alone until corrected)",
            ),
            &["kind", "namespace", "name"],
        )?;
        registry.register(Box::new(undecodable.clone()))?;
        Ok(Self {
            pool_workers,
            undecodable,
            database_tables,
            pooled_tables: Default::default(),
            api_requests,
            registry,
            reconciles,
            failures,
            duration,
            divergent_rows,
            phase,
            rolled_back,
        })
    }

    pub fn verify_divergent_rows(&self, ns: &str, sync: &str, rows: u64) {
        self.divergent_rows
            .with_label_values(&[ns, sync])
            .set(rows as i64);
    }

    pub fn sync_phase(&self, ns: &str, sync: &str, phase: SyncPhase) {
        for p in SyncPhase::ALL {
            self.phase
                .with_label_values(&[ns, sync, p.as_str()])
                .set(i64::from(p == phase));
        }
    }

    pub fn sync_rolled_back(&self, ns: &str, sync: &str, rolled_back: bool) {
        self.rolled_back
            .with_label_values(&[ns, sync])
            .set(i64::from(rolled_back));
    }

    /// Whether the object `kind` `ns/name` can't be decoded (its series goes once it can, or
    /// once it is deleted).
    pub fn undecodable(&self, kind: &str, ns: &str, name: &str, undecodable: bool) {
        let labels = [kind, ns, name];
        if undecodable {
            self.undecodable.with_label_values(&labels).set(1);
        } else {
            let _ = self.undecodable.remove_label_values(&labels);
        }
    }

    /// A deleted sync's series go with it.
    pub fn forget_sync(&self, ns: &str, sync: &str) {
        let _ = self.divergent_rows.remove_label_values(&[ns, sync]);
        let _ = self.rolled_back.remove_label_values(&[ns, sync]);
        for p in SyncPhase::ALL {
            let _ = self.phase.remove_label_values(&[ns, sync, p.as_str()]);
        }
    }

    /// How many of a database sync's tables are in each phase.
    pub fn database_tables(&self, ns: &str, name: &str, tables: &[TableStatus]) {
        for p in SyncPhase::ALL {
            let n = tables
                .iter()
                .filter(|t| t.phase.unwrap_or(SyncPhase::Pending) == p)
                .count();
            self.database_tables
                .with_label_values(&[ns, name, p.as_str()])
                .set(n as i64);
        }
    }

    /// Each pooled table's `pms_sync_phase` (under its sync name), as its sync's would be, so
    /// the per-sync alerts hold per table; `tables` empty: not pooled.
    pub fn pooled_table_phases(&self, ns: &str, name: &str, tables: &[TableStatus]) {
        let now: Vec<String> = tables.iter().map(|t| t.sync.clone()).collect();
        let key = (ns.to_string(), name.to_string());
        let mut pooled = self.pooled_tables.lock().unwrap_or_else(|p| p.into_inner());
        for gone in pooled
            .get(&key)
            .into_iter()
            .flatten()
            .filter(|s| !now.contains(s))
        {
            self.forget_sync(ns, gone);
        }
        for t in tables {
            self.sync_phase(ns, &t.sync, t.phase.unwrap_or(SyncPhase::Pending));
        }
        if now.is_empty() {
            pooled.remove(&key);
        } else {
            pooled.insert(key, now);
        }
    }

    /// A pooled database sync's workers wanted and reporting (`None`: not pooled).
    pub fn pool_workers(&self, ns: &str, name: &str, workers: Option<(u32, u32)>) {
        for (i, state) in ["wanted", "reporting"].into_iter().enumerate() {
            let labels = [ns, name, state];
            match workers {
                Some(w) => self
                    .pool_workers
                    .with_label_values(&labels)
                    .set(i64::from(if i == 0 { w.0 } else { w.1 })),
                None => drop(self.pool_workers.remove_label_values(&labels)),
            }
        }
    }

    /// A deleted database sync's series go with it.
    pub fn forget_database(&self, ns: &str, name: &str) {
        self.pooled_table_phases(ns, name, &[]);
        self.pool_workers(ns, name, None);
        for p in SyncPhase::ALL {
            let _ = self
                .database_tables
                .remove_label_values(&[ns, name, p.as_str()]);
        }
    }

    /// Counts one finished reconcile.
    pub fn record(&self, elapsed: std::time::Duration, error: Option<&crate::error::Error>) {
        self.duration.observe(elapsed.as_secs_f64());
        let result = if error.is_some() { "error" } else { "ok" };
        self.reconciles.with_label_values(&[result]).inc();
        if let Some(e) = error {
            self.failures.with_label_values(&[e.reason()]).inc();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_phase_is_1_and_a_deleted_sync_leaves_no_series() {
        let m = Metrics::new().unwrap();
        m.sync_phase("ns", "s", SyncPhase::Degraded);
        let text = pms_runtime::render(&m.registry);
        assert!(
            text.contains("pms_sync_phase{namespace=\"ns\",phase=\"Degraded\",sync=\"s\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("pms_sync_phase{namespace=\"ns\",phase=\"Running\",sync=\"s\"} 0"),
            "{text}"
        );
        m.forget_sync("ns", "s");
        assert!(!pms_runtime::render(&m.registry).contains("pms_sync_phase{"));
    }

    #[test]
    fn a_pooled_tables_phase_is_a_syncs_until_the_table_goes() {
        let m = Metrics::new().unwrap();
        let table = |sync: &str, phase| TableStatus {
            sync: sync.into(),
            phase: Some(phase),
            ..Default::default()
        };
        m.pooled_table_phases(
            "ns",
            "lake",
            &[
                table("lake-a", SyncPhase::Failed),
                table("lake-b", SyncPhase::Running),
            ],
        );
        let text = pms_runtime::render(&m.registry);
        assert!(
            text.contains("pms_sync_phase{namespace=\"ns\",phase=\"Failed\",sync=\"lake-a\"} 1"),
            "{text}"
        );
        m.pooled_table_phases("ns", "lake", &[table("lake-b", SyncPhase::Running)]);
        let text = pms_runtime::render(&m.registry);
        assert!(
            !text.contains("sync=\"lake-a\"") && text.contains("sync=\"lake-b\""),
            "{text}"
        );
        m.forget_database("ns", "lake");
        assert!(!pms_runtime::render(&m.registry).contains("pms_sync_phase{"));
    }

    #[test]
    fn a_database_syncs_tables_are_counted_by_phase_until_it_is_deleted() {
        let m = Metrics::new().unwrap();
        let table = |phase| TableStatus {
            phase,
            ..Default::default()
        };
        let tables = [
            table(Some(SyncPhase::Running)),
            table(Some(SyncPhase::Running)),
            table(Some(SyncPhase::Failed)),
            table(None),
        ];
        m.database_tables("ns", "shop", &tables);
        let text = pms_runtime::render(&m.registry);
        for (phase, n) in [
            ("Running", 2),
            ("Failed", 1),
            ("Pending", 1),
            ("Degraded", 0),
        ] {
            let series = format!(
                "pms_database_tables{{database_sync=\"shop\",namespace=\"ns\",phase=\"{phase}\"}} {n}"
            );
            assert!(text.contains(&series), "{series} in {text}");
        }
        m.forget_database("ns", "shop");
        assert!(!pms_runtime::render(&m.registry).contains("pms_database_tables{"));
    }

    #[test]
    fn a_failed_reconcile_is_counted_by_reason_and_timed() {
        let m = Metrics::new().unwrap();
        m.record(std::time::Duration::from_millis(20), None);
        let e = crate::error::Error::NotNamespaced("s".into());
        m.record(std::time::Duration::from_millis(30), Some(&e));
        let text = pms_runtime::render(&m.registry);
        assert!(
            text.contains("pms_operator_reconcile_errors_total{reason=\"not_namespaced\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("pms_operator_reconcile_duration_seconds_count 2"),
            "{text}"
        );
        assert!(
            text.contains("pms_operator_reconciles_total{result=\"ok\"} 1"),
            "{text}"
        );
    }
}
