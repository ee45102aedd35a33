//! The sync loop of one slot: source → mapping → buffer → sink → checkpoint. Resume (or start
//! by scan mode), full read, then the changes of each new snapshot: decoded, reduced by key,
//! flushed when the [`FlushPolicy`] says so, checkpointed after the flush that covers them
//! committed, until `--once` caught up or a stop was asked for.
//!
//! Every snapshot is read as an ordered list of splits, so "n rows into split k of snapshot S"
//! (a [`ReadPoint`]) names the same records on every run: a checkpoint can be taken after any
//! flush, also in the middle of a large snapshot, and a restart continues exactly there.

mod cut;
mod flush_policy;
mod full_read;
mod history;
mod key_pass;
mod overwrite;
mod poll_pace;
mod read;
mod refresh;
mod schema;
mod start;
mod writer;

use std::time::Instant;

use pms_crds::contract::{
    consumer_id, BelongsTo, Checkpoint, Position, ReadPoint, RebuildReason, Slot,
};
use tokio::sync::watch;
use tracing::{info, warn};

use crate::buffer::ChangeBuffer;
use crate::checkpoint::{belongs_to, Checkpointer};
use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};
use crate::failpoint;
use crate::mapping::Layout;
use crate::metrics::Metrics;
use crate::sink::{MysqlConnection, MysqlSink, WriteMode, WriteRequest};
use crate::source::{PaimonSource, SnapshotChanges};
use cut::Cut;
pub use cut::StopAt;
pub use flush_policy::{Clock, FlushPolicy, FlushReason, SystemClock};
use full_read::FullRead;
use history::History;
use start::Start;
use writer::{Overlap, Writer};

/// How a run ended.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// `--once`: MySQL holds the latest snapshot and the checkpoint says so.
    #[default]
    CaughtUp,
    /// A stop was asked for (SIGTERM, Ctrl-C): flushed and checkpointed; the next run resumes.
    Stopped,
    /// `--once` on a table without a snapshot: nothing to do.
    NoSnapshot,
    /// `--stop-at-snapshot`: every snapshot through this one is applied and checkpointed.
    ReachedCut(i64),
}

/// What a run did, for the closing log line and tests.
#[derive(Debug, Default, Clone)]
pub struct RunSummary {
    pub outcome: Outcome,
    /// Last snapshot whose changes are all in MySQL and checkpointed.
    pub snapshot_id: Option<i64>,
    pub records_read: u64,
    pub full_read_rows_per_sec: Option<f64>,
}

#[derive(Clone)]
pub struct RunOptions {
    pub once: bool,
    /// Standalone: stop at the end of this snapshot (a consistent cut).
    pub stop_at: Option<StopAt>,
    /// Becomes `true` on SIGTERM/SIGINT: flush, checkpoint, return.
    pub stop: watch::Receiver<bool>,
    pub ready: pms_runtime::Readiness,
    /// A pooled worker's places for full reads, shared by its tables.
    pub full_reads: Option<crate::database::pool::FullReadGate>,
    /// A pooled worker's MySQL pool, shared by its tables.
    pub mysql: Option<crate::sink::SharedPool>,
}

struct Pipeline {
    cfg: WorkerConfig,
    source: PaimonSource,
    layout: Layout,
    buffer: ChangeBuffer,
    policy: FlushPolicy,
    writer: Writer,
    checkpointer: Checkpointer,
    /// How the upserts of the current phase are written (bulk during a full read into an empty table).
    write_mode: WriteMode,
    metrics: Metrics,
    records_read: [prometheus::IntCounter; 4],
    rescaled_from: Option<pms_crds::contract::RescaleBase>,
    /// How far the slot has read: everything before it is in the buffer or in MySQL.
    read_to: Option<ReadPoint>,
    /// The read point of the last flush handed to the writer (committed or not yet).
    sent_to_writer: Option<ReadPoint>,
    latest: i64,
    /// The last snapshot the freshness metrics were told is visible.
    visible_snapshot: i64,
    /// Where the run stops or pauses at a snapshot's end (`cut.rs`).
    cut: Cut,
    /// Slot 0 removes other layouts' consumers once, after its first consumer write.
    stale_consumers_removed: bool,
    /// What this sync reads and writes, recorded in every checkpoint.
    belongs_to: BelongsTo,
    /// The snapshots the checkpoints name, as committed.
    history: History,
    /// The full read under way ends by removing the rows its snapshot doesn't have.
    sweep: bool,
    /// The full read under way, to count its rows in checkpoints.
    full_read_rows: Option<crate::source::FullReadRows>,
    /// The OVERWRITE or refresh under way, to resume inside it (`key_pass.rs`).
    applying: Option<key_pass::Applying>,
    /// When a caught-up run looks for the next snapshot.
    pace: poll_pace::PollPace,
    summary: RunSummary,
    stop: watch::Receiver<bool>,
}

/// What runs before a sync's first write: `sink.createTable`; the rebuild guard (the old
/// generation must not write while a new one is being built); with ConfigMaps (under the
/// operator) the pre-flight, published for the status.
pub async fn prepare(cfg: &WorkerConfig, mysql: Option<&crate::sink::SharedPool>) -> Result<()> {
    let created_table = crate::sink::create_table::ensure(cfg, mysql).await?;
    crate::generation::refuse_if_in_progress(cfg).await?;
    if let Err(e) = crate::check::preflight::run(cfg, created_table).await {
        Checkpointer::note_failure(cfg, &e).await;
        return Err(e);
    }
    Ok(())
}

pub async fn run(cfg: WorkerConfig, opts: RunOptions, metrics: Metrics) -> Result<RunSummary> {
    let mut records_read = 0;
    let mut read_before: Option<Vec<(i32, String)>> = None;
    let mut start_over = None;
    loop {
        let (mut summary, reopen) = run_with_one_schema(
            cfg.clone(),
            opts.clone(),
            metrics.clone(),
            read_before.as_deref(),
            start_over.take(),
        )
        .await?;
        records_read += summary.records_read;
        match reopen {
            Some(Reopen::NewSchema(fields)) => read_before = Some(fields),
            Some(Reopen::StartOver(reason)) => start_over = Some(reason),
            None => {
                summary.records_read = records_read;
                return Ok(summary);
            }
        }
    }
}

/// How following a table's changes ended.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Followed {
    /// Caught up (`--once`) or stopped.
    Done,
    /// The next snapshot has a newer schema: the table is to be opened again.
    NewSchema,
    /// The table's history is not the one applied (why): the slot starts over.
    HistoryChanged(String),
}

/// Why a run ended before its work was done, and what the next one does.
enum Reopen {
    /// A new schema: the next run reads with it (these are the fields this one read with).
    NewSchema(Vec<(i32, String)>),
    /// The history changed (why): the next run starts over.
    StartOver(String),
}

/// Whether a fresh start replays the changes from snapshot `kept` on or before (an explicit
/// `fromSnapshot`), so it re-applies whatever an earlier run of the slot, whose consumer
/// keeps `kept`, may have written.
fn replays_from_before(cfg: &WorkerConfig, kept: i64) -> bool {
    let src = &cfg.spec.source;
    src.scan_mode == pms_crds::ScanMode::FromSnapshot && src.start_snapshot.unwrap_or(1) <= kept
}

/// One run with the table's schema as it is at its start; `read_before` holds the fields the
/// previous run of this process read with, when a new schema ended it; `start_over` why the
/// previous run found the history changed. Returns why the next run is needed, if it is.
async fn run_with_one_schema(
    cfg: WorkerConfig,
    opts: RunOptions,
    metrics: Metrics,
    read_before: Option<&[(i32, String)]>,
    start_over: Option<String>,
) -> Result<(RunSummary, Option<Reopen>)> {
    let source = PaimonSource::open(&cfg.spec.source, cfg.slot).await?;
    let target = format!("{}.{}", cfg.mysql.database, cfg.spec.sink.table);
    let earlier_run = source
        .earlier_run(&cfg.consumer_id, &cfg.external_name(), &target)
        .await?;
    let mysql = MysqlConnection::open_in(&cfg, opts.mysql.as_ref()).await?;
    if cfg.slot.index == 0 {
        crate::generation::drop_old_if_due(&mysql, &cfg, false).await?;
    }
    let layout = crate::target_layout::validated_layout(&source, &mysql, &cfg, read_before).await?;
    let now = belongs_to::now(&cfg, &source, &mysql).await;
    mysql.claim_target(&cfg).await?;
    source
        .claim_consumer(
            &cfg.consumer_id,
            &cfg.external_name(),
            &target,
            cfg.legacy_external_name().as_deref(),
        )
        .await?;
    let mut sink = MysqlSink::new(mysql, &layout, &cfg, metrics.clone());
    sink.check_privileges().await?;
    if cfg.spec.sink.delivery != pms_crds::Delivery::ExactlyOnce {
        // Exactly-once fences with the progress row's epoch instead.
        sink.take_slot(&cfg.external_name(), cfg.slot.index).await?;
    }
    let (checkpointer, resumed) = Checkpointer::open(&cfg, &sink, &now).await?;
    let mut history = History::default();
    let start_over = match (start_over, &resumed) {
        (Some(reason), _) => Some(reason),
        (None, Some(cp)) => {
            match belongs_to::start_over_reason(cp, &now, checkpointer.resumed_from_progress_row())
            {
                Some(reason) => Some(reason),
                None => history.resumed_changed(&source, cp).await?,
            }
        }
        // Replaying every change from a snapshot the earlier run had not passed ends exact.
        (None, None) => earlier_run.filter(|&kept| !replays_from_before(&cfg, kept)).map(|kept| {
            format!(
                "slot {}'s checkpoint ({}) is gone, though its Paimon consumer {} says an earlier run applied \
                 changes up to snapshot {kept}: what MySQL holds is not known to be any snapshot's",
                cfg.slot,
                checkpointer.location(),
                cfg.consumer_id
            )
        }),
    };
    if start_over.is_none() {
        let written_under = match (read_before, &resumed) {
            (Some(fields), _) => Some(fields.to_vec()),
            (None, Some(cp)) => match cp.point {
                ReadPoint::Changes { next_snapshot, .. } if next_snapshot > 1 => {
                    source.fields_at(next_snapshot - 1).await?
                }
                ReadPoint::FullRead {
                    snapshot_id,
                    at: Some(_),
                } => source.fields_at(snapshot_id).await?,
                _ => None,
            },
            (None, None) => None,
        };
        if let Some(before) = written_under {
            schema::refuse_readded_columns(&source, &layout, &before)?;
        }
    }
    if let Some(reason) = &start_over {
        refuse_start_over_with_slots(&cfg, reason)?;
        warn!(%reason, checkpoint = %checkpointer.location(),
              "starting over: a full read of the latest snapshot, then the rows it doesn't have are removed");
    }
    let resumed = resumed.filter(|_| start_over.is_none());
    let resumed_point = resumed.as_ref().map(|c| c.point);
    // `maxBufferBytes` bounds what is held at once: the buffer filling and the batches of
    // the writes in flight, each drained from a buffer at most this full.
    let mut buffer = ChangeBuffer::new(
        cfg.spec.sink.max_rows(),
        cfg.spec.sink.max_buffer_bytes / (1 + crate::sink::MAX_WRITES_IN_FLIGHT as u64),
    )
    .with_full_read_rows(cfg.spec.sink.full_read_max_rows());
    if !layout.delete_qualifiers.is_empty() {
        buffer = buffer.with_moving_keys(layout.key_positions.clone());
    }
    let mut p = Pipeline {
        buffer,
        policy: FlushPolicy::new(&cfg.spec),
        writer: Writer::new(sink, resumed_point, metrics.clone()),
        write_mode: WriteMode::Upsert,
        rescaled_from: resumed.as_ref().and_then(|c| c.rescaled_from),
        read_to: resumed_point,
        sent_to_writer: resumed_point,
        latest: 0,
        visible_snapshot: 0,
        cut: Cut::default(),
        stale_consumers_removed: false,
        belongs_to: now,
        history,
        sweep: start_over.is_some() || resumed.as_ref().is_some_and(|c| c.sweep),
        full_read_rows: None,
        applying: None,
        pace: poll_pace::PollPace::new(cfg.spec.source.poll_interval.0),
        records_read: metrics.records_read_counters(),
        summary: RunSummary::default(),
        stop: opts.stop,
        cfg,
        source,
        layout,
        checkpointer,
        metrics,
    };
    // Only a standalone cut needs the latest snapshot at start (`--stop-at latest`, and to
    // refuse a full read past the cut).
    let latest = match opts.stop_at {
        Some(_) => p.source.latest_snapshot().await?.unwrap_or(0),
        None => 0,
    };
    p.cut = Cut::new(&p.cfg, opts.stop_at, opts.once, latest).await?;
    opts.ready.set(true);
    let start = p.start(resumed.as_ref(), start_over.is_some()).await?;
    p.cut.check_start(&start, latest)?;
    info!(sync = %p.cfg.sync_name, slot = %p.cfg.slot, table = %p.source.name(), target = %p.cfg.target_name(),
          delivery = ?p.cfg.spec.sink.delivery, visibility = ?p.cfg.spec.sink.visibility, epoch = p.checkpointer.epoch(),
          checkpoint = %p.checkpointer.location(), resume = ?resumed_point, "starting");
    let (next, from) = match start {
        Start::Changes { snapshot_id, from } => {
            if resumed.is_none() {
                // Record where a fresh start begins, so a restart after a quiet spell does not
                // begin again at a later snapshot and skip the ones in between.
                p.read_to = Some(ReadPoint::Changes {
                    next_snapshot: snapshot_id,
                    at: from,
                });
                p.flush(FlushReason::Checkpoint).await?;
                p.checkpoint().await?;
                p.hand_over_from_flink(snapshot_id).await?;
            }
            (snapshot_id, from)
        }
        Start::FullRead { pinned, from } => {
            // A pooled table waits for a place among its worker's full reads (a stop ends the wait).
            let mut stop = p.stop.clone();
            let _place = match &opts.full_reads {
                Some(gate) => tokio::select! {
                    place = gate.enter(&p.cfg.sync_name) => Some(place),
                    _ = async { stop.wait_for(|s| *s).await.map(drop) } => return Ok((p.finish(Outcome::Stopped).await?, None)),
                },
                None => None,
            };
            match p.full_read(pinned, from, opts.once).await? {
                FullRead::Done(s) => (s + 1, Position::START),
                FullRead::NoSnapshot => return Ok((p.finish(Outcome::NoSnapshot).await?, None)),
                FullRead::Stopped => return Ok((p.finish(Outcome::Stopped).await?, None)),
            }
        }
    };
    let followed = p.follow_changes(next, from, opts.once).await?;
    if let Followed::HistoryChanged(reason) = followed {
        // What was read of the other history is not checkpointed; the next run starts over.
        refuse_start_over_with_slots(&p.cfg, &reason)?;
        return Ok((
            p.finish(Outcome::Stopped).await?,
            Some(Reopen::StartOver(reason)),
        ));
    }
    // Close: everything read is written, then the checkpoint covers it.
    p.flush(FlushReason::Close).await?;
    p.latest = p.source.latest_snapshot().await?.unwrap_or(0);
    p.checkpoint().await?;
    let outcome = match p.cut.stop_at() {
        _ if p.stopping() => Outcome::Stopped,
        Some(s) if p.summary.snapshot_id == Some(s) => Outcome::ReachedCut(s),
        _ => Outcome::CaughtUp,
    };
    let reopen = (followed == Followed::NewSchema).then(|| Reopen::NewSchema(p.source.fields()));
    Ok((p.finish(outcome).await?, reopen))
}

/// A slot that must start over can do it exactly only alone: with several, each slot's full
/// read is of another snapshot, and no slot can tell another's rows from the ones to remove.
fn refuse_start_over_with_slots(cfg: &WorkerConfig, reason: &str) -> Result<()> {
    if cfg.slot.count == 1 {
        return Ok(());
    }
    Err(WorkerError::RebuildRequired {
        reason: RebuildReason::StartOver,
        message: format!(
            "{reason}. With {} slots the sync can't start over in place, so it stops here: run `pms-worker rebuild` \
             (under the operator: spec.rebuild, or rebuild.policy auto does it), or run with parallelism 1",
            cfg.slot.count
        ),
    })
}

impl Pipeline {
    /// A take-over from a Flink job (`source.startFrom`) has its own checkpoint and consumer
    /// now: the job's consumer, which pins every snapshot from its own on, is removed unless
    /// asked to stay.
    async fn hand_over_from_flink(&self, snapshot_id: i64) -> Result<()> {
        let Some(from) = &self.cfg.spec.source.start_from else {
            return Ok(());
        };
        if !from.keep_flink_consumer {
            self.source
                .remove_flink_consumer(&from.flink_consumer)
                .await?;
        }
        info!(flink_consumer = %from.flink_consumer, snapshot = snapshot_id, removed = !from.keep_flink_consumer,
              "took over from the Flink job: its changes from this snapshot on are applied again, with no full read");
        Ok(())
    }

    fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Reads the changes of every snapshot from `next` on (`from` inside the first), until
    /// caught up with `once`, or stopped.
    async fn follow_changes(
        &mut self,
        mut next: i64,
        mut from: Position,
        once: bool,
    ) -> Result<Followed> {
        loop {
            let polled = crate::metrics::now_ms();
            let looked_for = next;
            self.latest = self.source.latest_snapshot().await?.unwrap_or(0);
            if 0 < self.latest && self.latest < next - 1 {
                if let Some(why) = self.history.changed_at(&self.source, next - 1).await? {
                    return Ok(Followed::HistoryChanged(why));
                }
            }
            if next <= self.latest {
                self.check_not_expired(next).await?;
            }
            while next <= self.latest && !self.stopping() {
                if self.at_boundary(next).await? {
                    return Ok(Followed::Done);
                }
                // The snapshot before is still the one applied, and this one is remembered
                // before it is read: a rollback in between is seen at the next snapshot.
                if let Some(why) = self.history.changed_at(&self.source, next - 1).await? {
                    return Ok(Followed::HistoryChanged(why));
                }
                if let Some(why) = self.source.shape_change_before(next).await? {
                    return Ok(Followed::HistoryChanged(why));
                }
                self.history.learn(&self.source, next).await?;
                match self.source.plan_snapshot(next).await? {
                    SnapshotChanges::Changes(plan) => self.read_plan(&plan, from, None).await?,
                    SnapshotChanges::Overwrite(plan) => {
                        self.start_applying(next, &[&plan.current, &plan.previous], from)?;
                        self.apply_overwrite(&plan).await?;
                    }
                    SnapshotChanges::Refresh(plan) => {
                        self.start_applying(next, &[&plan.touched, &plan.merged], from)?;
                        self.apply_refresh(&plan).await?;
                    }
                    SnapshotChanges::StartOver(why) => return Ok(Followed::HistoryChanged(why)),
                    SnapshotChanges::NewSchema {
                        from,
                        to,
                        columns_changed,
                    } => {
                        // Nothing of `next` is read: the close below commits everything before it.
                        self.new_schema(next, from, to, columns_changed)?;
                        return Ok(Followed::NewSchema);
                    }
                }
                self.applying = None;
                if self.stopping() {
                    return Ok(Followed::Done);
                }
                self.read_to = Some(ReadPoint::Changes {
                    next_snapshot: next + 1,
                    at: Position::START,
                });
                self.snapshot_done().await?;
                next += 1;
                from = Position::START;
            }
            if once || self.stopping() || self.at_boundary(next).await? {
                return Ok(Followed::Done);
            }
            if next > looked_for {
                self.pace.arrived(Instant::now());
            }
            // Caught up: write now, rather than make readers wait for the flush interval.
            self.flush(FlushReason::CaughtUp).await?;
            if self.policy.checkpoint_due() {
                self.checkpoint().await?;
            }
            if self.read_to.is_some() && self.writer.committed() == self.read_to {
                self.metrics.caught_up(polled);
            }
            self.idle().await;
        }
    }

    /// A snapshot was read to its end: with snapshot visibility this is where flushes happen.
    async fn snapshot_done(&mut self) -> Result<()> {
        if let Some(reason) = self.policy.at_snapshot_end(&self.buffer) {
            self.flush(reason).await?;
        }
        if self.policy.checkpoint_due() {
            self.flush(FlushReason::Checkpoint).await?;
            self.checkpoint().await?;
        }
        Ok(())
    }

    /// Hands the buffer to the writer: one transaction (with the progress row, exactly-once),
    /// written while the next changes are read.
    async fn flush(&mut self, reason: FlushReason) -> Result<()> {
        let point_moved = self.read_to != self.sent_to_writer;
        let progress_pending = self.checkpointer.joins_transactions() && point_moved;
        if self.buffer.is_empty() && !(progress_pending && reason != FlushReason::MaxRows) {
            if point_moved && !progress_pending {
                // Nothing of this slot changed since the last write: once that write commits,
                // MySQL holds everything up to `read_to`, so a quiet slot's checkpoint (and its
                // Paimon consumer) follows the snapshots it has seen instead of pinning them.
                self.writer.wait().await?;
                if let Some(point) = self.read_to {
                    self.writer.mark_committed(point);
                }
                self.sent_to_writer = self.read_to;
            }
            return Ok(());
        }
        let batch = self.buffer.drain()?;
        self.policy.flushed();
        self.metrics.buffer_bytes.set(0);
        let checkpoint = self.read_to.map(|point| self.checkpoint_at(point));
        let progress_row = checkpoint.and_then(|cp| self.checkpointer.progress_update(&cp));
        tracing::debug!(reason = reason.as_str(), upserts = batch.upserts.len(), deletes = batch.deletes.len(),
                        input_records = batch.input_records, read_to = ?self.read_to, "flushing");
        let request = WriteRequest {
            batch,
            mode: self.write_mode,
            progress_row,
        };
        let overlap = self.overlap(&request);
        self.writer
            .send(request, self.read_to, reason, overlap)
            .await?;
        self.sent_to_writer = self.read_to;
        Ok(())
    }

    /// Whether this flush may be written beside the ones in flight. Never with a progress row
    /// (each transaction's update is conditioned on the one before). A full read that holds one
    /// row per key: yes. Changes: only those of one snapshot, beside others of the same snapshot
    /// (the writer checks), in batch visibility (a reader sees a state within that snapshot, as a
    /// part of it shows already), where only the key is unique (another unique key's values move
    /// between keys), and keys stay in their partition (a key's rows in two partitions hash apart).
    fn overlap(&self, request: &WriteRequest) -> Overlap {
        if request.progress_row.is_some() {
            return Overlap::None;
        }
        if self.buffer.unique_keys() && matches!(self.read_to, Some(ReadPoint::FullRead { .. })) {
            return Overlap::Disjoint;
        }
        let keyed_changes = self.policy.allows_bulk()
            && !self.cfg.spec.sink.allow_extra_unique_keys
            && self.layout.delete_qualifiers.is_empty();
        match one_snapshot(self.sent_to_writer, self.read_to) {
            Some(s) if keyed_changes => Overlap::WithinSnapshot(s),
            _ => Overlap::None,
        }
    }

    fn checkpoint_at(&self, point: ReadPoint) -> Checkpoint {
        Checkpoint {
            sync: self.cfg.sync_name.clone(),
            slot: self.cfg.slot,
            point,
            epoch: self.checkpointer.epoch(),
            updated: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            latest_snapshot: Some(self.latest.max(point.next_snapshot() - 1)),
            rescaled_from: self.rescaled_from,
            paused_for: self.cut.paused_for().map(str::to_string),
            belongs_to: Some(BelongsTo {
                snapshot: self.history.at(point),
                ..self.belongs_to.clone()
            }),
            sweep: self.sweep && point.is_full_read(),
            full_read: self.full_read_rows.as_ref().and_then(|f| f.at(point)),
        }
    }

    /// Records what MySQL holds (the last flush's point), then tells Paimon which snapshots
    /// this slot still needs. Callers flush first: a checkpoint never covers unwritten changes.
    async fn checkpoint(&mut self) -> Result<()> {
        self.writer.wait().await?;
        let Some(committed) = self.writer.committed() else {
            return Ok(());
        };
        let cp = self.checkpoint_at(committed);
        self.check_same_server().await?;
        self.checkpointer.save(&cp).await?;
        self.history.forget_before(cp.point);
        self.policy.checkpointed();
        failpoint::hit("after-checkpoint-before-consumer");
        if let Err(e) = self
            .source
            .write_consumer(&self.cfg.consumer_id, cp.point)
            .await
        {
            self.metrics
                .error(crate::metrics::ErrorReason::ConsumerFile);
            warn!(error = %e, consumer = %self.cfg.consumer_id, "could not write the Paimon consumer file; snapshots may expire before this slot reads them");
        }
        if !self.stale_consumers_removed && self.cfg.slot.index == 0 {
            self.remove_stale_consumers().await;
        }
        self.metrics.checkpointed();
        let done = cp.next_snapshot() - 1;
        if done > 0 {
            self.summary.snapshot_id = Some(done);
            self.metrics.set_progress(done, self.latest.max(done));
        }
        if done > self.visible_snapshot && matches!(cp.point, ReadPoint::Changes { .. }) {
            self.visible_snapshot = done;
            self.observe_visible(done).await;
        }
        Ok(())
    }

    /// At-least-once: the writes a checkpoint covers went to the server this run started on.
    /// After a reconnect to another one (a failover behind the same URL) what it holds of them
    /// is unknown: no checkpoint is written, and the run stops; the next start sees the other
    /// server and starts over (docs/guarantees.md "What a checkpoint belongs to"). Exactly-once needs no
    /// check: the progress row is on whichever server holds the rows, and a flush whose expected
    /// row isn't there commits nothing. A server that can't be reached now (a restart) is asked
    /// at the next checkpoint: a checkpoint taken meanwhile changes nothing a start-over reads.
    async fn check_same_server(&self) -> Result<()> {
        if self.checkpointer.joins_transactions() {
            return Ok(());
        }
        let now = match self.writer.sink().server_identity().await {
            Ok(now) => now,
            Err(e) => {
                warn!(error = %e, "could not ask the MySQL server who it is; asking again at the next checkpoint");
                return Ok(());
            }
        };
        let started_on = &self.belongs_to.target.server;
        if &now == started_on {
            return Ok(());
        }
        Err(WorkerError::Data(format!(
            "the MySQL server behind {} is another one since this run started ({now}, was {started_on}): \
             a failover; nothing more is checkpointed, and the next start reads the table in full and removes \
             what it doesn't have",
            self.cfg.target_name()
        )))
    }

    /// Freshness and expiry metrics for snapshot `done`, now in MySQL (a failed read of them
    /// costs a metric sample, never the sync).
    async fn observe_visible(&self, done: i64) {
        match self.source.snapshot_time_millis(done).await {
            Ok(committed) => self.metrics.snapshot_visible(committed),
            Err(e) => {
                warn!(error = %e, snapshot = done, "could not read the snapshot's commit time")
            }
        }
        match self.source.earliest_snapshot().await {
            Ok(earliest) => self.metrics.earliest_snapshot.set(earliest.unwrap_or(0)),
            Err(e) => warn!(error = %e, "could not read the earliest snapshot"),
        }
    }

    /// After slot 0 wrote its consumer (at the lowest point any slot resumes from, after a
    /// rescale too), the consumers of slots that no longer exist stop pinning snapshots.
    async fn remove_stale_consumers(&mut self) {
        let base = self.cfg.consumer_base();
        match self
            .source
            .remove_stale_consumers(&base, self.cfg.slot.count)
            .await
        {
            Ok(removed) if !removed.is_empty() => info!(
                ?removed,
                "removed the Paimon consumers of slots that no longer exist"
            ),
            Ok(_) => {}
            Err(e) => {
                warn!(error = %e, "could not remove stale Paimon consumers; they pin snapshots until consumer.expiration-time")
            }
        }
        // Consumers an earlier release named without the namespace (`pms-<sync>`), now that
        // this slot's consumer under the external name is written.
        if let (None, Some(legacy)) = (
            &self.cfg.spec.source.consumer_id,
            self.cfg.legacy_external_name(),
        ) {
            let base = consumer_id(None, &legacy, Slot::SINGLE);
            match self.source.remove_consumers(&base).await {
                Ok(removed) if !removed.is_empty() => info!(
                    ?removed,
                    "removed the consumers named before the namespace was part of them"
                ),
                Ok(_) => {}
                Err(e) => {
                    warn!(error = %e, "could not remove the consumers named before the namespace was part of them")
                }
            }
        }
        self.stale_consumers_removed = true;
    }

    async fn finish(mut self, outcome: Outcome) -> Result<RunSummary> {
        self.writer.close().await?;
        // Stopped because the sync is being deleted with its checkpoints: nothing of it is
        // left holding snapshots or the MySQL table.
        if outcome == Outcome::Stopped && self.cut.release_on_stop().await {
            crate::reset::release_on_stop(&self.cfg, &self.source).await;
        }
        let mut summary = self.summary;
        summary.outcome = outcome;
        Ok(summary)
    }

    /// Waits one poll interval, or less when asked to stop. A tick of a live loop (liveness).
    async fn idle(&mut self) {
        pms_runtime::liveness::beat();
        let wait = self.pace.wait(Instant::now());
        let _ = tokio::time::timeout(wait, self.stop.changed()).await;
    }
}

/// The snapshot whose changes between `from` and `to` are all of (none when they span two,
/// or either is not a point in the changes).
fn one_snapshot(from: Option<ReadPoint>, to: Option<ReadPoint>) -> Option<i64> {
    match (from?, to?) {
        (
            ReadPoint::Changes {
                next_snapshot: a, ..
            },
            ReadPoint::Changes {
                next_snapshot: b,
                at,
            },
        ) if b == a || (b == a + 1 && at.is_start()) => Some(a),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use pms_crds::contract::Position;

    use super::*;

    fn at(snapshot: i64, position: Position) -> Option<ReadPoint> {
        Some(ReadPoint::Changes {
            next_snapshot: snapshot,
            at: position,
        })
    }

    #[test]
    fn a_flush_lies_in_one_snapshot_only_between_two_points_of_it() {
        let start = Position::START;
        let mid = Position {
            split: 3,
            row: 7,
            plan: None,
        };
        assert_eq!(one_snapshot(at(5, start), at(5, mid)), Some(5));
        assert_eq!(
            one_snapshot(at(5, mid), at(6, start)),
            Some(5),
            "to its end"
        );
        assert_eq!(
            one_snapshot(at(5, start), at(6, start)),
            Some(5),
            "all of it"
        );
        assert_eq!(one_snapshot(at(5, mid), at(6, mid)), None, "into the next");
        assert_eq!(
            one_snapshot(at(4, mid), at(6, start)),
            None,
            "two snapshots"
        );
        assert_eq!(one_snapshot(None, at(5, mid)), None);
        let full_read = Some(ReadPoint::FullRead {
            snapshot_id: 5,
            at: Some(mid),
        });
        assert_eq!(one_snapshot(full_read, at(5, mid)), None);
    }
}
