//! Prometheus metrics of one worker (one slot). Exposed on `/metrics` by the admin endpoint.

use std::time::Duration;

use prometheus::{
    Gauge, Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
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
            registry,
        }
    }

    /// The read counters of the row kinds `+I`, `-U`, `+U`, `-D` (in `RowKind::index` order),
    /// looked up once instead of per record.
    pub fn records_read_counters(&self) -> [IntCounter; 4] {
        ["+I", "-U", "+U", "-D"].map(|k| self.records_read.with_label_values(&[k]))
    }

    pub fn observe_flush(&self, batch: &Batch, took: Duration) {
        self.rows_written
            .with_label_values(&["upsert"])
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
