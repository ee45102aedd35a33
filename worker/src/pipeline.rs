//! The sync loop of one slot: resume → (full read) → changes of each new snapshot → reduce →
//! flush → checkpoint → consumer file, until `--once` caught up or a stop was asked for.
//!
//! Every snapshot is read as an ordered list of splits, so "n rows into split k of snapshot S"
//! (the cursor) names the same records on every run: a checkpoint can be taken after any flush,
//! also in the middle of a large snapshot, and a restart continues exactly there.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use futures::StreamExt;
use pms_crds::{Delivery, ScanMode, Visibility};
use tokio::sync::watch;
use tracing::{info, warn};

use crate::admin::Readiness;
use crate::buffer::{ChangeBuffer, FlushReason};
use crate::checkpoint::{
    Checkpoint, CheckpointStore, ConfigMapCheckpointStore, FileCheckpointStore, Phase, Position,
    RescaleBase,
};
use crate::config::{CheckpointTarget, WorkerConfig};
use crate::error::{Result, WorkerError};
use crate::failpoint;
use crate::metrics::Metrics;
use crate::progress::Progress;
use crate::sink::MysqlSink;
use crate::source::decode::{decode_batch, RowKind};
use crate::source::{PaimonSource, SnapshotPlan};

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

/// How far the slot has read: everything before this is in the buffer or in MySQL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cursor {
    snapshot_id: i64,
    phase: Phase,
    /// `None`: the whole snapshot (incremental) has been read.
    position: Option<Position>,
}

/// A flush being written while the next batch is read (at most one, so commits keep their order).
struct InFlight {
    write: tokio::task::JoinHandle<Result<()>>,
    cursor: Option<Cursor>,
    reason: FlushReason,
}

struct Pipeline {
    cfg: WorkerConfig,
    source: PaimonSource,
    sink: Arc<MysqlSink>,
    in_flight: Option<InFlight>,
    /// The cursor handed to the last write (committed or not yet).
    issued: Option<Cursor>,
    buffer: ChangeBuffer,
    store: CheckpointStore,
    metrics: Metrics,
    records_read: [prometheus::IntCounter; 4],
    epoch: u64,
    rescaled_from: Option<RescaleBase>,
    cursor: Option<Cursor>,
    /// What MySQL holds for sure (the last flush's cursor).
    committed: Option<Cursor>,
    latest: i64,
    last_checkpoint: Instant,
    summary: RunSummary,
    stop: watch::Receiver<bool>,
}

/// Where to begin: a full read (of a pinned snapshot when resuming one) or the changes of a
/// snapshot, from a position inside it.
enum Start {
    FullRead { pinned: Option<i64>, from: Position },
    Changes { snapshot_id: i64, from: Position },
}

pub async fn run(cfg: WorkerConfig, opts: RunOptions, metrics: Metrics) -> Result<RunSummary> {
    let source = PaimonSource::open(&cfg.spec.source, cfg.slot).await?;
    let sink = MysqlSink::open(&cfg, source.columns(), metrics.clone()).await?;
    let mut store = match &cfg.checkpoint {
        CheckpointTarget::File(path) => CheckpointStore::File(FileCheckpointStore::new(path)),
        CheckpointTarget::ConfigMap { namespace } => CheckpointStore::ConfigMap(Box::new(
            ConfigMapCheckpointStore::connect(&cfg.sync_name, cfg.slot, namespace.clone()).await?,
        )),
    };
    let mut checkpoint = store.load().await?;
    let mut epoch = checkpoint.as_ref().map_or(0, |c| c.epoch) + 1;
    if cfg.spec.sink.delivery == Delivery::ExactlyOnce {
        // The progress row committed with the rows wins over any other checkpoint store.
        let claim = sink.claim(&cfg).await?;
        epoch = claim.epoch;
        if claim.progress.is_some() {
            checkpoint = claim.progress;
        }
    }
    if let Some(cp) = &checkpoint {
        if (cp.slot, cp.slots) != (cfg.slot.slot, cfg.slot.slots) {
            return Err(WorkerError::Checkpoint {
                location: store.location(),
                message: format!(
                    "was written by slot {} of {}, this is slot {}; a different parallelism needs a rescale at a \
                     consistent snapshot (the operator does it with ConfigMap checkpoints) or a rebuild, not a restart",
                    cp.slot, cp.slots, cfg.slot
                ),
            });
        }
    }
    let buffer = ChangeBuffer::new(cfg.spec.sink.max_rows, cfg.spec.sink.max_buffer_bytes);
    let resumed = checkpoint.as_ref().map(|c| Cursor {
        snapshot_id: c.snapshot_id,
        phase: c.phase,
        position: c.position,
    });
    let mut p = Pipeline {
        epoch,
        rescaled_from: checkpoint.as_ref().and_then(|c| c.rescaled_from),
        cursor: resumed,
        committed: resumed,
        issued: resumed,
        in_flight: None,
        latest: 0,
        cfg,
        source,
        sink: Arc::new(sink),
        buffer,
        store,
        records_read: metrics.records_read_counters(),
        metrics,
        last_checkpoint: Instant::now(),
        summary: RunSummary::default(),
        stop: opts.stop,
    };
    if resumed.is_some() && !p.exactly_once() {
        // Take the slot over: the new epoch is stored before anything is written (with ConfigMap
        // checkpoints an older pod's next write now conflicts).
        p.checkpoint().await?;
    }
    opts.ready.set(true);
    let start = p.start_position(checkpoint.as_ref()).await?;
    info!(sync = %p.cfg.sync_name, slot = %p.cfg.slot, table = %p.source.name(), target = %p.cfg.target_name(),
          delivery = ?p.cfg.spec.sink.delivery, visibility = ?p.cfg.spec.sink.visibility, epoch = p.epoch,
          checkpoint = %p.store.location(), resume = ?checkpoint.as_ref().map(|c| (c.snapshot_id, c.phase, c.position)), "starting");
    let (mut next, mut from) = match start {
        Start::Changes { snapshot_id, from } => (snapshot_id, from),
        Start::FullRead { pinned, from } => match p.full_read(pinned, from, opts.once).await? {
            Some(s) => (s + 1, Position::default()),
            None => return Ok(p.summary),
        },
    };
    loop {
        p.latest = p.source.latest_snapshot().await?.unwrap_or(0);
        if next <= p.latest {
            p.check_not_expired(next).await?;
        }
        while next <= p.latest && !p.stopping() {
            let plan = p.source.plan_changes(next).await?;
            p.read_plan(&plan, Phase::Incremental, from, None).await?;
            if p.stopping() {
                break;
            }
            p.cursor = Some(Cursor {
                snapshot_id: next,
                phase: Phase::Incremental,
                position: None,
            });
            p.snapshot_done().await?;
            next += 1;
            from = Position::default();
        }
        if opts.once || p.stopping() {
            break;
        }
        // Caught up: write now, rather than make readers wait for the flush interval.
        p.flush(FlushReason::CaughtUp).await?;
        if p.checkpoint_due() {
            p.checkpoint().await?;
        }
        p.idle().await;
    }
    // Close: everything read is written, then the checkpoint covers it.
    p.flush(FlushReason::Close).await?;
    p.latest = p.source.latest_snapshot().await?.unwrap_or(0);
    p.checkpoint().await?;
    if let Ok(sink) = Arc::try_unwrap(p.sink) {
        sink.close().await;
    }
    Ok(p.summary)
}

impl Pipeline {
    fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    fn exactly_once(&self) -> bool {
        self.cfg.spec.sink.delivery == Delivery::ExactlyOnce
    }

    fn snapshot_visibility(&self) -> bool {
        self.cfg.spec.sink.visibility == Visibility::Snapshot
    }

    fn checkpoint_due(&self) -> bool {
        self.last_checkpoint.elapsed() >= self.cfg.spec.checkpoint.interval.0
    }

    async fn start_position(&self, checkpoint: Option<&Checkpoint>) -> Result<Start> {
        if let Some(cp) = checkpoint {
            let from = cp.position.unwrap_or_default();
            return Ok(match cp.phase {
                // A full read resumes inside the same snapshot; one not yet started takes the latest.
                Phase::Full => Start::FullRead {
                    pinned: cp.position.map(|_| cp.snapshot_id),
                    from,
                },
                Phase::Incremental => Start::Changes {
                    snapshot_id: cp.next_snapshot(),
                    from,
                },
            });
        }
        let src = &self.cfg.spec.source;
        let changes_from = |snapshot_id| Start::Changes {
            snapshot_id,
            from: Position::default(),
        };
        Ok(match src.scan_mode {
            ScanMode::LatestFull => Start::FullRead {
                pinned: None,
                from: Position::default(),
            },
            ScanMode::Latest => changes_from(self.source.latest_snapshot().await?.unwrap_or(0) + 1),
            ScanMode::FromSnapshot => changes_from(src.start_snapshot.unwrap_or(1)),
            ScanMode::FromTimestamp => {
                let text = src.start_timestamp.as_deref().unwrap_or_default();
                let at = chrono::DateTime::parse_from_rfc3339(text).map_err(|e| {
                    WorkerError::Config(format!("source.startTimestamp {text:?} is not RFC 3339 ({e}); write e.g. 2026-11-01T00:00:00Z"))
                })?;
                match self
                    .source
                    .snapshot_at_or_after(at.timestamp_millis())
                    .await?
                {
                    Some(s) => changes_from(s),
                    None => changes_from(self.source.latest_snapshot().await?.unwrap_or(0) + 1),
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

    /// Full merge-on-read of one snapshot (the latest, or the pinned one being resumed).
    /// Returns its id, or `None` when the table has no snapshot yet and `once` is set.
    async fn full_read(
        &mut self,
        pinned: Option<i64>,
        from: Position,
        once: bool,
    ) -> Result<Option<i64>> {
        while self.source.latest_snapshot().await?.is_none() {
            if once || self.stopping() {
                info!(table = %self.source.name(), "the table has no snapshot yet: nothing to sync");
                return Ok(None);
            }
            self.idle().await;
        }
        let plan = match pinned {
            Some(s) => match self.source.plan_full(Some(s)).await {
                Ok(plan) => plan,
                Err(e) => {
                    warn!(snapshot_id = s, error = %e, "the interrupted full read's snapshot is gone: starting a new full read");
                    return Box::pin(self.full_read(None, Position::default(), once)).await;
                }
            },
            None => self.source.plan_full(None).await?,
        };
        let snapshot_id = plan.snapshot_id;
        self.latest = self.latest.max(snapshot_id);
        self.cursor = Some(Cursor {
            snapshot_id,
            phase: Phase::Full,
            position: Some(from),
        });
        if pinned.is_none() {
            // Record which snapshot the full read is of, so a restart resumes that one.
            self.committed = self.cursor;
            self.checkpoint().await?;
        }
        // Into an empty table (or resuming our own full read) rows only ever get inserted:
        // the bulk path applies, unless a mode needs every write in a transaction of its own.
        let bulk = !self.exactly_once()
            && !self.snapshot_visibility()
            && (pinned.is_some() || self.sink.target_is_empty().await?);
        self.sink.set_bulk(bulk);
        info!(
            snapshot_id,
            expected_rows = plan.expected_rows,
            splits = plan.len(),
            ?from,
            bulk,
            "full read"
        );
        let mut progress = Progress::new(
            format!("full read of snapshot {snapshot_id}"),
            plan.expected_rows,
        );
        self.read_plan(&plan, Phase::Full, from, Some(&mut progress))
            .await?;
        progress.finish();
        self.summary.full_read_rows_per_sec = Some(progress.rows_per_sec());
        if self.stopping() {
            // The cursor says how far the full read got: flush, checkpoint, resume there next time.
            self.flush(FlushReason::Close).await?;
            self.checkpoint().await?;
            return Err(WorkerError::Data(
                "stopped during the full read; the next run resumes it".into(),
            ));
        }
        self.cursor = Some(Cursor {
            snapshot_id,
            phase: Phase::Incremental,
            position: None,
        });
        self.flush(FlushReason::Checkpoint).await?;
        self.checkpoint().await?;
        self.sink.set_bulk(false);
        info!(snapshot_id, "full read done");
        Ok(Some(snapshot_id))
    }

    /// Reads a plan's splits in order from `from`, keeping the cursor on the last record read.
    async fn read_plan(
        &mut self,
        plan: &SnapshotPlan,
        phase: Phase,
        from: Position,
        mut progress: Option<&mut Progress>,
    ) -> Result<()> {
        for split in from.split as usize..plan.len() {
            let mut skip = if split == from.split as usize {
                from.row
            } else {
                0
            };
            let mut position = Position {
                split: split as u32,
                row: skip,
            };
            self.cursor = Some(Cursor {
                snapshot_id: plan.snapshot_id,
                phase,
                position: Some(position),
            });
            let mut batches = self.source.read_split(plan, split)?;
            while let Some(batch) = batches.next().await {
                let mut batch = batch.map_err(|source| WorkerError::Paimon {
                    table: self.source.name().to_string(),
                    source: Box::new(source),
                })?;
                if skip > 0 {
                    // Already written by an earlier run.
                    let n = (skip as usize).min(batch.num_rows());
                    batch = batch.slice(n, batch.num_rows() - n);
                    skip -= n as u64;
                }
                if let Some(p) = progress.as_deref_mut() {
                    p.add(batch.num_rows() as u64);
                }
                self.consume(&batch, plan.snapshot_id, phase, &mut position)
                    .await?;
                if self.stopping() {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Decodes a batch into the buffer, flushing whenever a bound or the interval says so.
    async fn consume(
        &mut self,
        batch: &RecordBatch,
        snapshot_id: i64,
        phase: Phase,
        position: &mut Position,
    ) -> Result<()> {
        let table = self.source.name().to_string();
        let decoded = decode_batch(batch, self.sink.layout(), snapshot_id, &table)?;
        for d in decoded {
            position.row += 1;
            self.cursor = Some(Cursor {
                snapshot_id,
                phase,
                position: Some(*position),
            });
            self.records_read[d.kind.index()].inc();
            self.summary.records_read += 1;
            // `-U` is the before-image of an update; the `+U` that follows carries the new row.
            if d.kind == RowKind::UpdateBefore {
                continue;
            }
            if let Some(reason) = self.buffer.push(d.key, d.change) {
                self.bound_reached(reason).await?;
            }
        }
        let interval = self.cfg.spec.sink.flush_interval.0;
        if !self.snapshot_visibility()
            && !interval.is_zero()
            && self.buffer.oldest_age().is_some_and(|age| age >= interval)
        {
            self.flush(FlushReason::Interval).await?;
        }
        self.metrics.buffer_bytes.set(self.buffer.bytes() as i64);
        Ok(())
    }

    /// A buffer bound mid-snapshot. With snapshot visibility only the memory bound (or
    /// `maxTransactionRows`) may split a snapshot, and that is logged and counted.
    async fn bound_reached(&mut self, reason: FlushReason) -> Result<()> {
        if self.snapshot_visibility() {
            // Not `reason`: once maxRows is reached it is reported first, for every record.
            let too_big = self.buffer.bytes_reached()
                || self.buffer.input_records() >= self.cfg.spec.sink.max_transaction_rows;
            if !too_big {
                return Ok(());
            }
            let cursor = self.cursor;
            warn!(?cursor, input_records = self.buffer.input_records(), buffer_bytes = self.buffer.bytes(),
                  "snapshot too large for one transaction (sink.maxTransactionRows / maxBufferBytes): committing it in parts");
            self.metrics.visibility_fallbacks.inc();
        }
        self.flush(reason).await?;
        if self.checkpoint_due() {
            self.checkpoint().await?;
        }
        Ok(())
    }

    /// A snapshot was read to its end: with snapshot visibility this is where flushes happen.
    async fn snapshot_done(&mut self) -> Result<()> {
        let interval = self.cfg.spec.sink.flush_interval.0;
        if self.snapshot_visibility() {
            if self.buffer.rows_reached() {
                self.flush(FlushReason::MaxRows).await?;
            } else if !interval.is_zero()
                && self.buffer.oldest_age().is_some_and(|age| age >= interval)
            {
                self.flush(FlushReason::Interval).await?;
            }
        }
        if self.checkpoint_due() {
            self.flush(FlushReason::Checkpoint).await?;
            self.checkpoint().await?;
        }
        Ok(())
    }

    /// Hands the buffer to the writer: one transaction (with the progress row, exactly-once),
    /// written while the next changes are read. The previous flush must have committed first.
    async fn flush(&mut self, reason: FlushReason) -> Result<()> {
        let progress_pending = self.exactly_once() && self.cursor != self.issued;
        if self.buffer.is_empty() && !(progress_pending && reason != FlushReason::MaxRows) {
            return Ok(());
        }
        self.settle().await?;
        let batch = self.buffer.drain();
        let progress = self
            .exactly_once()
            .then(|| self.checkpoint_for(self.cursor));
        self.metrics.buffer_bytes.set(0);
        tracing::debug!(reason = reason.as_str(), upserts = batch.upserts.len(), deletes = batch.deletes.len(), input_records = batch.input_records, cursor = ?self.cursor, "flushing");
        let sink = self.sink.clone();
        let write = tokio::spawn(async move {
            sink.write(&batch, progress.as_ref()).await?;
            failpoint::hit("after-commit-before-checkpoint");
            Ok(())
        });
        self.issued = self.cursor;
        self.in_flight = Some(InFlight {
            write,
            cursor: self.cursor,
            reason,
        });
        Ok(())
    }

    /// Waits for the flush being written, if any: afterwards `committed` is what MySQL holds.
    async fn settle(&mut self) -> Result<()> {
        if let Some(f) = self.in_flight.take() {
            f.write
                .await
                .map_err(|e| WorkerError::Data(format!("the MySQL writer task failed: {e}")))??;
            self.committed = f.cursor;
            self.metrics
                .flushes
                .with_label_values(&[f.reason.as_str()])
                .inc();
        }
        Ok(())
    }

    fn checkpoint_for(&self, cursor: Option<Cursor>) -> Checkpoint {
        let c = cursor.unwrap_or(Cursor {
            snapshot_id: 0,
            phase: Phase::Incremental,
            position: None,
        });
        Checkpoint {
            sync: self.cfg.sync_name.clone(),
            slot: self.cfg.slot.slot,
            slots: self.cfg.slot.slots,
            snapshot_id: c.snapshot_id,
            phase: c.phase,
            position: c.position,
            epoch: self.epoch,
            updated: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            latest_snapshot: Some(self.latest.max(c.snapshot_id)),
            rescaled_from: self.rescaled_from,
        }
    }

    /// Records what MySQL holds (the last flush's cursor), then tells Paimon which snapshots
    /// this slot still needs. Callers flush first: a checkpoint never covers unwritten changes.
    async fn checkpoint(&mut self) -> Result<()> {
        self.settle().await?;
        let Some(committed) = self.committed else {
            return Ok(());
        };
        let cp = self.checkpoint_for(Some(committed));
        self.store.save(&cp).await?;
        self.last_checkpoint = Instant::now();
        failpoint::hit("after-checkpoint-before-consumer");
        if let Err(e) = self
            .source
            .write_consumer(&self.cfg.consumer_id, cp.next_snapshot())
            .await
        {
            warn!(error = %e, consumer = %self.cfg.consumer_id, "could not write the Paimon consumer file; snapshots may expire before this slot reads them");
        }
        let done = cp.next_snapshot() - 1;
        if done > 0 {
            self.summary.snapshot_id = Some(done);
            self.metrics.set_progress(done, self.latest.max(done));
        }
        Ok(())
    }

    /// Waits one poll interval, or less when asked to stop.
    async fn idle(&mut self) {
        let wait = self
            .cfg
            .spec
            .source
            .poll_interval
            .0
            .max(Duration::from_millis(10));
        let _ = tokio::time::timeout(wait, self.stop.changed()).await;
    }
}
