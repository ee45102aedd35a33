//! The sync loop of one slot: resume → (full read) → changes of each new snapshot → reduce →
//! flush → checkpoint → consumer file, until `--once` caught up or a stop was asked for.

use std::time::{Duration, Instant};

use futures::StreamExt;
use pms_crds::ScanMode;
use tokio::sync::watch;
use tracing::{info, warn};

use crate::admin::Readiness;
use crate::buffer::{ChangeBuffer, FlushReason};
use crate::checkpoint::{Checkpoint, CheckpointStore, ConfigMapCheckpointStore, FileCheckpointStore, Phase};
use crate::config::{CheckpointTarget, WorkerConfig};
use crate::error::{Result, WorkerError};
use crate::metrics::Metrics;
use crate::progress::Progress;
use crate::sink::MysqlSink;
use crate::source::decode::{decode_batch, RowKind};
use crate::source::{ArrowRecordBatchStream, PaimonSource};

/// What a run did, for the `--once` summary and tests.
#[derive(Debug, Default, Clone)]
pub struct RunSummary {
    /// Last snapshot whose changes are all in MySQL and checkpointed.
    pub snapshot_id: Option<i64>,
    pub records_read: u64,
    pub full_read_rows_per_sec: Option<f64>,
}

pub struct RunOptions {
    pub once: bool,
    /// Becomes `true` on SIGTERM/SIGINT: flush, checkpoint, return.
    pub stop: watch::Receiver<bool>,
    pub ready: Readiness,
}

struct Pipeline {
    cfg: WorkerConfig,
    source: PaimonSource,
    sink: MysqlSink,
    buffer: ChangeBuffer,
    store: CheckpointStore,
    metrics: Metrics,
    epoch: u64,
    rescaled_from: Option<crate::checkpoint::RescaleBase>,
    last_checkpoint: Instant,
    summary: RunSummary,
    stop: watch::Receiver<bool>,
}

/// Where to begin when there is no usable checkpoint, or where the checkpoint says.
enum Start {
    FullRead,
    ChangesFrom(i64),
}

pub async fn run(cfg: WorkerConfig, opts: RunOptions, metrics: Metrics) -> Result<RunSummary> {
    let source = PaimonSource::open(&cfg.spec.source, cfg.slot).await?;
    let sink = MysqlSink::open(&cfg, source.columns(), metrics.clone()).await?;
    let mut store = match &cfg.checkpoint {
        CheckpointTarget::File(path) => CheckpointStore::File(FileCheckpointStore::new(path)),
        CheckpointTarget::ConfigMap { namespace } => {
            CheckpointStore::ConfigMap(ConfigMapCheckpointStore::connect(&cfg.sync_name, cfg.slot, namespace.clone()).await?)
        }
    };
    let checkpoint = store.load().await?;
    if let Some(cp) = &checkpoint {
        if (cp.slot, cp.slots) != (cfg.slot.slot, cfg.slot.slots) {
            return Err(WorkerError::Checkpoint {
                location: store.location(),
                message: format!(
                    "was written by slot {} of {}, this is slot {}; a different parallelism needs a rescale at a \
                     consistent snapshot (or a rebuild), not a restart",
                    cp.slot, cp.slots, cfg.slot
                ),
            });
        }
    }
    let buffer = ChangeBuffer::new(cfg.spec.sink.max_rows, cfg.spec.sink.max_buffer_bytes);
    let mut p = Pipeline {
        epoch: checkpoint.as_ref().map_or(0, |c| c.epoch) + 1,
        rescaled_from: checkpoint.as_ref().and_then(|c| c.rescaled_from),
        cfg,
        source,
        sink,
        buffer,
        store,
        metrics,
        last_checkpoint: Instant::now(),
        summary: RunSummary::default(),
        stop: opts.stop,
    };
    opts.ready.set(true);
    let start = p.start_position(checkpoint.as_ref()).await?;
    info!(sync = %p.cfg.sync_name, slot = %p.cfg.slot, table = %p.source.name(), target = %p.cfg.target_name(),
          epoch = p.epoch, checkpoint = %p.store.location(), resume = ?checkpoint.as_ref().map(|c| c.snapshot_id), "starting");
    let mut next = match start {
        Start::ChangesFrom(s) => s,
        Start::FullRead => match p.full_read(opts.once).await? {
            Some(s) => s + 1,
            None => return Ok(p.summary),
        },
    };
    loop {
        let latest = p.source.latest_snapshot().await?.unwrap_or(0);
        if next <= latest {
            p.check_not_expired(next).await?;
        }
        while next <= latest && !p.stopping() {
            p.apply_snapshot(next).await?;
            p.metrics.set_progress(next - 1, latest);
            if p.last_checkpoint.elapsed() >= p.cfg.spec.checkpoint.interval.0 {
                p.flush(FlushReason::Checkpoint).await?;
                p.checkpoint(Phase::Incremental, next, latest).await?;
            }
            next += 1;
        }
        if opts.once || p.stopping() {
            break;
        }
        // Caught up: write now, rather than make readers wait for the flush interval.
        p.flush(FlushReason::CaughtUp).await?;
        if p.last_checkpoint.elapsed() >= p.cfg.spec.checkpoint.interval.0 && p.summary.snapshot_id != Some(next - 1) {
            p.checkpoint(Phase::Incremental, next - 1, latest).await?;
        }
        p.idle().await;
    }
    // Close: everything read is written, then the checkpoint covers it.
    p.flush(FlushReason::Close).await?;
    let latest = p.source.latest_snapshot().await?.unwrap_or(0);
    if next > 1 {
        p.checkpoint(Phase::Incremental, next - 1, latest).await?;
    }
    p.sink.close().await;
    Ok(p.summary)
}

impl Pipeline {
    fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    async fn start_position(&self, checkpoint: Option<&Checkpoint>) -> Result<Start> {
        if let Some(cp) = checkpoint {
            return Ok(match cp.phase {
                // An unfinished full read starts over (from the then latest snapshot).
                Phase::Full => Start::FullRead,
                Phase::Incremental => Start::ChangesFrom(cp.next_snapshot()),
            });
        }
        let src = &self.cfg.spec.source;
        Ok(match src.scan_mode {
            ScanMode::LatestFull => Start::FullRead,
            ScanMode::Latest => Start::ChangesFrom(self.source.latest_snapshot().await?.unwrap_or(0) + 1),
            ScanMode::FromSnapshot => Start::ChangesFrom(src.start_snapshot.unwrap_or(1)),
            ScanMode::FromTimestamp => {
                let text = src.start_timestamp.as_deref().unwrap_or_default();
                let at = chrono::DateTime::parse_from_rfc3339(text).map_err(|e| {
                    WorkerError::Config(format!("source.startTimestamp {text:?} is not RFC 3339 ({e}); write e.g. 2026-11-01T00:00:00Z"))
                })?;
                match self.source.snapshot_at_or_after(at.timestamp_millis()).await? {
                    Some(s) => Start::ChangesFrom(s),
                    None => Start::ChangesFrom(self.source.latest_snapshot().await?.unwrap_or(0) + 1),
                }
            }
        })
    }

    /// A snapshot we still need but Paimon already expired is an error, never a silent skip.
    async fn check_not_expired(&self, needed: i64) -> Result<()> {
        let earliest = self.source.earliest_snapshot().await?.unwrap_or(1);
        if needed < earliest {
            return Err(WorkerError::SnapshotExpired {
                table: self.source.name().to_string(),
                needed,
                earliest,
                checkpoint: self.store.location(),
            });
        }
        Ok(())
    }

    /// Full merge-on-read of the latest snapshot. Returns its id, or `None` when the table has
    /// no snapshot yet and `once` is set (nothing to do).
    async fn full_read(&mut self, once: bool) -> Result<Option<i64>> {
        while self.source.latest_snapshot().await?.is_none() {
            if once || self.stopping() {
                info!(table = %self.source.name(), "the table has no snapshot yet: nothing to sync");
                return Ok(None);
            }
            self.idle().await;
        }
        let read = self.source.full_read().await?;
        let snapshot_id = read.snapshot_id;
        self.checkpoint(Phase::Full, snapshot_id, snapshot_id).await?;
        info!(snapshot_id, expected_rows = read.expected_rows, "full read");
        let mut progress = Progress::new(format!("full read of snapshot {snapshot_id}"), read.expected_rows);
        let rows = self.consume(read.batches, snapshot_id, Some(&mut progress)).await?;
        progress.finish();
        self.summary.full_read_rows_per_sec = Some(progress.rows_per_sec());
        if self.stopping() {
            // A partial full read can't be checkpointed; flush what we have and start over next time.
            self.flush(FlushReason::Close).await?;
            return Err(WorkerError::Data("stopped during the full read; it starts over on the next run".into()));
        }
        self.flush(FlushReason::Checkpoint).await?;
        self.checkpoint(Phase::Incremental, snapshot_id, snapshot_id).await?;
        info!(snapshot_id, rows, "full read done");
        Ok(Some(snapshot_id))
    }

    async fn apply_snapshot(&mut self, snapshot_id: i64) -> Result<()> {
        let changes = self.source.changes(snapshot_id).await?;
        self.consume(changes, snapshot_id, None).await?;
        Ok(())
    }

    /// Decodes every batch into the buffer, flushing whenever a bound or the interval says so.
    async fn consume(&mut self, mut batches: ArrowRecordBatchStream, snapshot_id: i64, mut progress: Option<&mut Progress>) -> Result<u64> {
        let table = self.source.name().to_string();
        let mut rows = 0u64;
        while let Some(batch) = batches.next().await {
            let batch = batch.map_err(|source| WorkerError::Paimon { table: table.clone(), source })?;
            let decoded = decode_batch(&batch, self.sink.layout(), snapshot_id, &table)?;
            rows += decoded.len() as u64;
            for d in decoded {
                self.metrics.records_read.with_label_values(&[d.kind.label()]).inc();
                self.summary.records_read += 1;
                // `-U` is the before-image of an update; the `+U` that follows carries the new row.
                if d.kind == RowKind::UpdateBefore {
                    continue;
                }
                if let Some(reason) = self.buffer.push(d.key, d.change) {
                    self.flush(reason).await?;
                }
            }
            if let Some(p) = progress.as_deref_mut() {
                p.add(batch.num_rows() as u64);
            }
            let interval = self.cfg.spec.sink.flush_interval.0;
            if !interval.is_zero() && self.buffer.oldest_age().is_some_and(|age| age >= interval) {
                self.flush(FlushReason::Interval).await?;
            }
            self.metrics.buffer_bytes.set(self.buffer.bytes() as i64);
            if self.stopping() {
                break;
            }
        }
        Ok(rows)
    }

    async fn flush(&mut self, reason: FlushReason) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let batch = self.buffer.drain();
        self.sink.write(&batch).await?;
        self.metrics.flushes.with_label_values(&[reason.as_str()]).inc();
        self.metrics.buffer_bytes.set(0);
        tracing::debug!(reason = reason.as_str(), upserts = batch.upserts.len(), deletes = batch.deletes.len(), input_records = batch.input_records, "flushed");
        Ok(())
    }

    /// Records progress. Callers flush first: a checkpoint never covers unwritten changes.
    async fn checkpoint(&mut self, phase: Phase, snapshot_id: i64, latest: i64) -> Result<()> {
        debug_assert!(self.buffer.is_empty() || phase == Phase::Full);
        let cp = Checkpoint {
            sync: self.cfg.sync_name.clone(),
            slot: self.cfg.slot.slot,
            slots: self.cfg.slot.slots,
            snapshot_id,
            phase,
            epoch: self.epoch,
            updated: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            latest_snapshot: Some(latest.max(snapshot_id)),
            rescaled_from: self.rescaled_from,
        };
        self.store.save(&cp).await?;
        self.last_checkpoint = Instant::now();
        // Paimon must keep every snapshot this slot still has to read.
        if let Err(e) = self.source.write_consumer(&self.cfg.consumer_id, cp.next_snapshot()).await {
            warn!(error = %e, consumer = %self.cfg.consumer_id, "could not write the Paimon consumer file; snapshots may expire before this slot reads them");
        }
        if phase == Phase::Incremental {
            self.summary.snapshot_id = Some(snapshot_id);
            self.metrics.set_progress(snapshot_id, latest.max(snapshot_id));
        }
        Ok(())
    }

    /// Waits one poll interval, or less when asked to stop.
    async fn idle(&mut self) {
        let wait = self.cfg.spec.source.poll_interval.0.max(Duration::from_millis(10));
        let _ = tokio::time::timeout(wait, self.stop.changed()).await;
    }
}
