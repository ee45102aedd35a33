//! Prometheus metrics of one worker (one slot). Exposed on `/metrics` by the admin endpoint.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{
    Gauge, GaugeVec, Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
};

use crate::buffer::Batch;

#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    pub records_read: IntCounterVec,
    pub rows_written: IntCounterVec,
    pub flushes: IntCounterVec,
    pub flush_seconds: Histogram,
    pub flush_rows: Histogram,
    pub retries: IntCounter,
    /// Snapshots committed in several transactions despite `visibility: snapshot`.
    pub visibility_fallbacks: IntCounter,
    pub current_snapshot: IntGauge,
    pub latest_snapshot: IntGauge,
    pub snapshots_behind: IntGauge,
    pub buffer_bytes: IntGauge,
    /// The full read under way: rows read (of a resumed one: since the resume), rows the
    /// snapshot holds, and 1 while it runs.
    pub full_read_rows: IntGauge,
    pub full_read_expected_rows: IntGauge,
    pub full_reading: IntGauge,
    /// Input records per row written: how much the key reduction saved.
    pub reduce_ratio: Gauge,
    /// Paimon commit → the snapshot written whole to MySQL and checkpointed.
    pub commit_to_visible: Histogram,
    /// The earliest snapshot Paimon still keeps (expiration moves it).
    pub earliest_snapshot: IntGauge,
    /// When something last went wrong, by a bounded reason ([`ErrorReason`]).
    last_error: GaugeVec,
    /// Ages computed when scraped: freshness and checkpoint age.
    clocks: Arc<Clocks>,
    input_records_flushed: IntCounter,
    rows_flushed: IntCounter,
}

impl Metrics {
    pub fn new(sync: &str, slot: u32) -> Self {
        let registry = labelled_registry(sync, slot);
        let counter_vec = |name: &str, help: &str, labels: &[&str]| {
            register(&registry, IntCounterVec::new(Opts::new(name, help), labels))
        };
        let gauge = |name: &str, help: &str| register(&registry, IntGauge::new(name, help));
        let histogram = |name: &str, help: &str, buckets: Vec<f64>| {
            register(
                &registry,
                Histogram::with_opts(HistogramOpts::new(name, help).buckets(buckets)),
            )
        };
        let counter = |name: &str, help: &str| register(&registry, IntCounter::new(name, help));
        Self {
            records_read: counter_vec(
                "records_read_total",
                "Changes read from Paimon, by row kind",
                &["kind"],
            ),
            rows_written: counter_vec(
                "rows_written_total",
                "Rows written to MySQL, by operation",
                &["op"],
            ),
            flushes: counter_vec(
                "flushes_total",
                "Committed flushes, by trigger",
                &["reason"],
            ),
            flush_seconds: histogram(
                "flush_duration_seconds",
                "Time to write and commit one flush",
                prometheus::exponential_buckets(0.001, 2.0, 16).expect("static"),
            ),
            flush_rows: histogram(
                "flush_rows",
                "Rows per flush after reduction",
                prometheus::exponential_buckets(1.0, 4.0, 10).expect("static"),
            ),
            retries: counter(
                "retries_total",
                "Flush retries after a transient MySQL failure",
            ),
            visibility_fallbacks: counter(
                "visibility_fallbacks_total",
                "Snapshots too large for one transaction, committed in parts",
            ),
            current_snapshot: gauge(
                "current_snapshot",
                "Last Paimon snapshot fully written and checkpointed",
            ),
            latest_snapshot: gauge("latest_snapshot", "Latest Paimon snapshot seen"),
            snapshots_behind: gauge(
                "snapshots_behind",
                "Snapshots between the checkpoint and the latest",
            ),
            buffer_bytes: gauge("buffer_bytes", "Bytes held in the reduce buffer"),
            full_read_rows: gauge(
                "full_read_rows",
                "Rows read by the full read under way (since its resume)",
            ),
            full_read_expected_rows: gauge(
                "full_read_expected_rows",
                "Rows of the snapshot the full read under way reads",
            ),
            full_reading: gauge("full_reading", "1 while a full read runs"),
            reduce_ratio: register(
                &registry,
                Gauge::new(
                    "reduce_ratio",
                    "Input records per row written (key reduction)",
                ),
            ),
            input_records_flushed: counter(
                "input_records_flushed_total",
                "Input records covered by committed flushes",
            ),
            rows_flushed: counter("rows_flushed_total", "Rows written by committed flushes"),
            commit_to_visible: histogram(
                "commit_to_visible_seconds",
                "Paimon snapshot commit → written whole to MySQL and checkpointed",
                prometheus::exponential_buckets(0.05, 2.0, 14).expect("static"),
            ),
            earliest_snapshot: gauge("earliest_snapshot", "Earliest Paimon snapshot not expired"),
            last_error: register(
                &registry,
                GaugeVec::new(
                    Opts::new(
                        "last_error_timestamp_seconds",
                        "When an error of this reason last happened (Unix time)",
                    ),
                    &["reason"],
                ),
            ),
            clocks: {
                let clocks = Arc::new(Clocks::default());
                registry
                    .register(Box::new(AgesCollector::new(clocks.clone())))
                    .expect("metric names are unique");
                clocks
            },
            registry,
        }
    }

    /// A snapshot committed by Paimon at `committed_ms` is now in MySQL and checkpointed.
    pub fn snapshot_visible(&self, committed_ms: i64) {
        let now = now_ms();
        self.commit_to_visible
            .observe((now - committed_ms).max(0) as f64 / 1000.0);
        self.clocks
            .fresh_as_of
            .fetch_max(committed_ms, Ordering::Relaxed);
    }

    /// MySQL holds everything Paimon had at `polled_ms` (a poll found nothing newer).
    pub fn caught_up(&self, polled_ms: i64) {
        self.clocks
            .fresh_as_of
            .fetch_max(polled_ms, Ordering::Relaxed);
    }

    pub fn checkpointed(&self) {
        self.clocks.checkpoint_ms.store(now_ms(), Ordering::Relaxed);
    }

    pub fn error(&self, reason: ErrorReason) {
        self.last_error
            .with_label_values(&[reason.as_str()])
            .set(now_ms() as f64 / 1000.0);
    }

    /// The read counters of the row kinds `+I`, `-U`, `+U`, `-D` (in `RowKind::index` order),
    /// looked up once instead of per record.
    pub fn records_read_counters(&self) -> [IntCounter; 4] {
        ["+I", "-U", "+U", "-D"].map(|k| self.records_read.with_label_values(&[k]))
    }

    /// A committed flush; `bulk`: its upserts went in by `LOAD DATA` (counted as `op="bulk"`).
    pub fn observe_flush(&self, batch: &Batch, took: Duration, bulk: bool) {
        self.rows_written
            .with_label_values(&[if bulk { "bulk" } else { "upsert" }])
            .inc_by(batch.upserts.len() as u64);
        self.rows_written
            .with_label_values(&["delete"])
            .inc_by(batch.deletes.len() as u64);
        self.flush_seconds.observe(took.as_secs_f64());
        self.flush_rows.observe(batch.len() as f64);
        self.input_records_flushed.inc_by(batch.input_records);
        self.rows_flushed.inc_by(batch.len() as u64);
        self.reduce_ratio
            .set(self.input_records_flushed.get() as f64 / self.rows_flushed.get().max(1) as f64);
    }

    pub fn set_progress(&self, checkpointed: i64, latest: i64) {
        self.current_snapshot.set(checkpointed);
        self.latest_snapshot.set(latest);
        self.snapshots_behind.set((latest - checkpointed).max(0));
    }

    /// The Prometheus text exposition.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    pub fn render(&self) -> String {
        pms_runtime::render(&self.registry)
    }
}

/// Several syncs' registries served as one `/metrics` (a standalone database sync): each
/// table's series keep their own `sync` label.
#[derive(Clone, Default)]
pub struct SyncRegistries(Arc<std::sync::Mutex<BTreeMap<String, Registry>>>);

impl SyncRegistries {
    pub fn add(&self, sync: &str, registry: Registry) {
        if let Ok(mut all) = self.0.lock() {
            all.insert(sync.to_string(), registry);
        }
    }

    pub fn remove(&self, sync: &str) {
        if let Ok(mut all) = self.0.lock() {
            all.remove(sync);
        }
    }

    /// A registry that gathers them all, to serve.
    pub fn registry(&self) -> Registry {
        let registry = Registry::new();
        registry
            .register(Box::new(self.clone()))
            .expect("the first collector of a new registry registers");
        registry
    }
}

impl Collector for SyncRegistries {
    fn desc(&self) -> Vec<&Desc> {
        Vec::new()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        match self.0.lock() {
            Ok(all) => all.values().flat_map(Registry::gather).collect(),
            Err(_) => Vec::new(),
        }
    }
}

/// The reasons of `pms_last_error_timestamp_seconds`: a fixed set (no keys, no messages).
#[derive(Clone, Copy, Debug)]
pub enum ErrorReason {
    /// A flush failed and is retried (MySQL down, a deadlock, a lock wait timeout).
    MysqlTransient,
    /// The Paimon consumer file could not be written (snapshots may expire under the slot).
    ConsumerFile,
}

impl ErrorReason {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorReason::MysqlTransient => "mysql_transient",
            ErrorReason::ConsumerFile => "consumer_file",
        }
    }
}

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Points in time (Unix ms, 0 = not yet) turned into ages when scraped.
#[derive(Default)]
struct Clocks {
    /// MySQL holds every Paimon commit up to this time.
    fresh_as_of: AtomicI64,
    checkpoint_ms: AtomicI64,
}

/// `pms_freshness_seconds` and `pms_checkpoint_age_seconds`, computed at scrape time (a gauge
/// set on progress would stand still exactly when progress stops).
struct AgesCollector {
    clocks: Arc<Clocks>,
    freshness: Gauge,
    checkpoint_age: Gauge,
}

impl AgesCollector {
    fn new(clocks: Arc<Clocks>) -> Self {
        let gauge = |name: &str, help: &str| Gauge::new(name, help).expect("static metric");
        Self {
            clocks,
            freshness: gauge(
                "freshness_seconds",
                "Now − the time up to which MySQL holds every Paimon commit (the last snapshot \
                 written whole, or the last poll that found nothing newer)",
            ),
            checkpoint_age: gauge("checkpoint_age_seconds", "Now − the last checkpoint"),
        }
    }
}

impl Collector for AgesCollector {
    fn desc(&self) -> Vec<&Desc> {
        [&self.freshness, &self.checkpoint_age]
            .into_iter()
            .flat_map(|g| g.desc())
            .collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let now = now_ms();
        let age = |at: &AtomicI64, gauge: &Gauge| {
            let at = at.load(Ordering::Relaxed);
            // Nothing known yet (a full read under way): no sample rather than a made-up age.
            (at > 0).then(|| {
                gauge.set((now - at).max(0) as f64 / 1000.0);
                gauge.collect()
            })
        };
        [
            age(&self.clocks.fresh_as_of, &self.freshness),
            age(&self.clocks.checkpoint_ms, &self.checkpoint_age),
        ]
        .into_iter()
        .flatten()
        .flatten()
        .collect()
    }
}

/// Registers a metric built from static names and help texts (so neither step can fail).
fn register<M: prometheus::core::Collector + Clone + 'static>(
    registry: &Registry,
    metric: prometheus::Result<M>,
) -> M {
    let metric = metric.expect("static metric definition");
    registry
        .register(Box::new(metric.clone()))
        .expect("metric names are unique");
    metric
}

/// Every metric named `pms_*`, labelled with the sync and the slot.
fn labelled_registry(sync: &str, slot: u32) -> Registry {
    Registry::new_custom(
        Some("pms".into()),
        Some(
            [
                ("sync".to_string(), sync.to_string()),
                ("slot".to_string(), slot.to_string()),
            ]
            .into(),
        ),
    )
    .expect("static registry options are valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(text: &str, name: &str) -> Option<f64> {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.rsplit(' ').next()?.parse().ok())
    }

    #[test]
    fn ages_are_computed_when_scraped_and_absent_until_known() {
        let m = Metrics::new("s", 0);
        let text = m.render();
        assert!(sample(&text, "pms_freshness_seconds").is_none(), "{text}");
        m.snapshot_visible(now_ms() - 30_000);
        m.checkpointed();
        let text = m.render();
        let fresh = sample(&text, "pms_freshness_seconds{").unwrap();
        assert!((29.0..40.0).contains(&fresh), "{text}");
        assert!(sample(&text, "pms_checkpoint_age_seconds{").unwrap() < 5.0);
        assert_eq!(
            sample(&text, "pms_commit_to_visible_seconds_count{"),
            Some(1.0)
        );
        // A poll that found nothing newer makes MySQL fresh as of that poll.
        m.caught_up(now_ms());
        assert!(sample(&m.render(), "pms_freshness_seconds{").unwrap() < 5.0);
        m.error(ErrorReason::MysqlTransient);
        assert!(m
            .render()
            .contains("pms_last_error_timestamp_seconds{reason=\"mysql_transient\""));
    }
}
