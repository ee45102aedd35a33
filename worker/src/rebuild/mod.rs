//! `pms-worker rebuild`: start a sync over without readers ever seeing a half-loaded table and
//! without orphans. The new generation of the sync runs beside the old one:
//!
//! 1. `<table>__pms_new` is created like the target (refused when the table has triggers or
//!    foreign keys, which a RENAME would not carry: `verify --repair` then reconciles in place);
//! 2. a sync of its own (`<sync>-rebuild`: its own checkpoints `<checkpoint>.rebuild`, Paimon
//!    consumer and slot locks) full-reads the latest snapshot into it (the bulk path: the table
//!    is empty) and catches up, every slot in parallel;
//! 3. `verify` compares it with the snapshot it reached;
//! 4. with the sync's writers stopped (at-least-once: no slot lock held; exactly-once: their
//!    epochs bumped, so a running one fails its next commit), one
//!    `RENAME TABLE t TO t__pms_old, t__pms_new TO t`;
//! 5. the new generation's checkpoints and consumers replace the old ones, and its checkpoint
//!    files, the marker of a rebuild in progress, go.
//!
//! Every step can be interrupted (kill -9 included): running `rebuild` again finds where it was
//! from what exists (the marker files, the two tables) and goes on, and `run` refuses to start
//! while a marker exists, so the old generation never writes into the new table or the other
//! way round. The old table is dropped by a later `run` or `rebuild` once `rebuild.retainOld`
//! has passed.

use pms_crds::contract::Checkpoint;
use tracing::info;

use crate::checkpoint::Checkpointer;
use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};
use crate::failpoint;
use crate::generation::{drop_old_if_due, in_progress, old_table, shadow, shadow_location};
use crate::metrics::Metrics;
use crate::pipeline::{self, RunOptions};
use crate::sink::MysqlConnection;
use crate::source::PaimonSource;
use crate::verify::{self, VerifyOptions};
use pms_crds::contract::RebuildPhase;
pub use report::Reporter;

mod report;

/// How often the load's progress is reported.
const REPORT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// What a rebuild did.
#[derive(Debug)]
pub struct Rebuilt {
    pub snapshot_id: i64,
    pub rows: u64,
}

/// Rebuilds the target of `slots` (one config per slot of the sync); `trigger` names the
/// rebuild in its report (the operator's `spec.rebuild.trigger`).
pub async fn rebuild(slots: &[WorkerConfig], trigger: Option<String>) -> Result<Rebuilt> {
    let cfg = slots
        .first()
        .ok_or_else(|| WorkerError::Config("no slot to rebuild".into()))?;
    let mut report = Reporter::new(cfg, trigger, pms_crds::contract::rebuild_name).await;
    let result = rebuild_reporting(slots, &mut report).await;
    match &result {
        Ok(_) => report.phase(RebuildPhase::Done).await,
        Err(e) => report.fail(e).await,
    }
    result
}

async fn rebuild_reporting(slots: &[WorkerConfig], report: &mut Reporter) -> Result<Rebuilt> {
    let cfg = &slots[0];
    let shadows: Vec<WorkerConfig> = slots.iter().map(shadow).collect();
    let table = cfg.spec.sink.table.clone();
    let new_table = shadows[0].spec.sink.table.clone();
    let old_table = old_table(cfg);
    let mysql = MysqlConnection::open(cfg).await?;
    stop_old_generation(&mysql, cfg, slots.len() as u32).await?;
    let mut in_progress = false;
    for s in slots {
        in_progress |= self::in_progress(s).await?;
    }
    let new_exists = mysql.table_exists(&new_table).await?;
    let begin = !in_progress || !new_exists && !mysql.table_exists(&old_table).await?;
    if begin {
        // Nothing begun (or a start that left no checkpoint): begin.
        drop_old_if_due(&mysql, cfg, true).await?;
        let blockers = mysql.rename_blockers().await?;
        if !blockers.is_empty() {
            return Err(WorkerError::Config(format!(
                "{} has {}, which a RENAME TABLE does not carry to a rebuilt table: reconcile it in place with \
                 `pms-worker verify --repair` instead",
                cfg.target_name(),
                blockers.join(", ")
            )));
        }
        // Whatever an earlier attempt left of a new generation goes: it would resume into an
        // empty table.
        remove_markers(&shadows).await?;
        mysql.drop_table(&new_table).await?;
        mysql.create_shadow(&new_table).await?;
        info!(table = %new_table, "rebuild: shadow table created");
        failpoint::hit("rebuild-after-create");
    }
    // Not swapped yet (after the swap only `t__pms_old` is left of the two).
    if begin || new_exists {
        let snapshot_id = load(&shadows, report).await?;
        report.snapshot(snapshot_id).await;
        report.phase(RebuildPhase::Verifying).await;
        check(&shadows[0], snapshot_id).await?;
        failpoint::hit("rebuild-before-swap");
        report.phase(RebuildPhase::CuttingOver).await;
        // Again: a worker of the old generation started during the load would otherwise go
        // on writing into the new table from its old position.
        stop_old_generation(&mysql, cfg, slots.len() as u32).await?;
        mysql.swap_in(&new_table, &old_table).await?;
        info!(table = %table, old = %old_table, snapshot_id, "rebuild: swapped in");
        failpoint::hit("rebuild-after-swap");
    }
    report.phase(RebuildPhase::CuttingOver).await;
    let snapshot_id = install(&mysql, slots, &shadows).await?;
    report.snapshot(snapshot_id).await;
    let rows = mysql.count_target().await?;
    info!(table = %table, snapshot_id, rows, old = %old_table, retain_old = %cfg.spec.rebuild.retain_old,
          "rebuild done: the sync goes on from the new generation's checkpoints");
    Ok(Rebuilt { snapshot_id, rows })
}

/// Makes sure no worker of the sync writes: at-least-once, none may hold a slot lock (the
/// rebuild refuses); exactly-once, the progress rows' epochs are bumped, so a worker still
/// running fails its next commit instead of writing.
pub(crate) async fn stop_old_generation(
    mysql: &MysqlConnection,
    cfg: &WorkerConfig,
    slots: u32,
) -> Result<()> {
    if cfg.spec.sink.delivery == pms_crds::Delivery::ExactlyOnce {
        return mysql.fence_progress(&cfg.external_name()).await;
    }
    for k in 0..slots {
        if mysql.slot_in_use(&cfg.external_name(), k).await? {
            return Err(WorkerError::Config(format!(
                "slot {k} of sync {} is running (it holds its slot lock): stop the sync before the rebuild",
                cfg.sync_name
            )));
        }
    }
    Ok(())
}

/// Steps 2 and 3: every slot of the new generation full-reads and catches up (`--once`),
/// in parallel; returns the snapshot all reached.
async fn load(shadows: &[WorkerConfig], report: &mut Reporter) -> Result<i64> {
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let metrics: Vec<Metrics> = shadows
        .iter()
        .map(|s| Metrics::new(&s.sync_name, s.slot.index))
        .collect();
    let runs = shadows.iter().zip(&metrics).map(|(s, m)| {
        let opts = RunOptions {
            once: true,
            stop_at: None,
            stop: stop.clone(),
            ready: pms_runtime::Readiness::default(),
            full_reads: None,
            mysql: None,
        };
        pipeline::run(s.clone(), opts, m.clone())
    });
    report.phase(RebuildPhase::Loading).await;
    let runs = futures::future::try_join_all(runs);
    tokio::pin!(runs);
    let mut tick = tokio::time::interval(REPORT_EVERY);
    let summaries = loop {
        tokio::select! {
            done = &mut runs => break done?,
            _ = tick.tick() => report.load_progress(&metrics).await,
        }
    };
    report.load_progress(&metrics).await;
    let reached: Vec<Option<i64>> = summaries.iter().map(|s| s.snapshot_id).collect();
    match reached.iter().min() {
        Some(Some(low)) if reached.iter().all(|r| *r == Some(*low)) => Ok(*low),
        _ => Err(WorkerError::Source {
            table: shadows[0].spec.source.table.clone(),
            message: format!(
                "the new generation's slots reached different snapshots ({reached:?}; new ones committed \
                 meanwhile): run rebuild again to catch them up"
            ),
        }),
    }
}

/// Step 3: the shadow table must equal the snapshot it was loaded to.
async fn check(shadow: &WorkerConfig, snapshot_id: i64) -> Result<()> {
    // verify reads every bucket, whatever the config's slot.
    let report = verify::verify(
        shadow,
        &VerifyOptions {
            snapshot: Some(snapshot_id),
            show: 10,
            repair: false,
            rows_per_pass: verify::DEFAULT_ROWS_PER_PASS,
            live: false,
        },
    )
    .await?;
    if report.divergent_rows() > 0 {
        return Err(WorkerError::Data(format!(
            "rebuild: the shadow table differs from snapshot {snapshot_id}, nothing was swapped:\n{report}"
        )));
    }
    info!(
        snapshot_id,
        rows = report.paimon_rows,
        seconds = report.elapsed.as_secs_f64(),
        "rebuild: shadow verified"
    );
    Ok(())
}

/// Step 5: the new generation's checkpoints become the sync's (epoch above both), its
/// consumers the sync's; then its checkpoint files go. Exactly-once, its progress rows replace
/// the sync's first, all in one transaction (they win over the files on resume). Returns the
/// snapshot installed.
async fn install(
    mysql: &MysqlConnection,
    slots: &[WorkerConfig],
    shadows: &[WorkerConfig],
) -> Result<i64> {
    if slots[0].spec.sink.delivery == pms_crds::Delivery::ExactlyOnce
        && mysql
            .hand_over_progress(
                &shadows[0].external_name(),
                &slots[0].external_name(),
                &|note| crate::checkpoint::swapped_in_note(note, &slots[0]),
            )
            .await?
    {
        info!(sync = %slots[0].sync_name, "rebuild: the new generation's progress rows replaced the sync's");
        failpoint::hit("rebuild-mid-install");
    }
    // Consumers are files of the table, whatever the slot.
    let source = PaimonSource::open(&slots[0].spec.source, slots[0].slot).await?;
    let mut snapshot_id = 0;
    for (cfg, shadow) in slots.iter().zip(shadows) {
        let new: Checkpoint = Checkpointer::peek(shadow).await?.ok_or_else(|| WorkerError::Checkpoint {
            location: shadow_location(cfg),
            message: "the rebuild's checkpoint is missing after the swap; the table holds the new generation: \
                      start the sync over with a new checkpoint"
                .into(),
        })?;
        let old_epoch = Checkpointer::peek(cfg)
            .await
            .ok()
            .flatten()
            .map_or(0, |c| c.epoch);
        let installed = Checkpoint {
            sync: cfg.sync_name.clone(),
            epoch: old_epoch.max(new.epoch) + 1,
            belongs_to: new
                .belongs_to
                .clone()
                .map(|b| crate::checkpoint::belongs_to::swapped_in(b, cfg)),
            ..new
        };
        Checkpointer::replace(cfg, &installed).await?;
        source
            .write_consumer(&cfg.consumer_id, installed.point)
            .await?;
        snapshot_id = installed.next_snapshot() - 1;
        failpoint::hit("rebuild-mid-install");
    }
    source.remove_consumers(&shadows[0].consumer_base()).await?;
    // The new generation's claim of its table, renamed to the sync's own now.
    mysql.release_target(&shadows[0]).await?;
    remove_markers(shadows).await?;
    Ok(snapshot_id)
}

/// Removes the new generation's checkpoints (the markers of a rebuild in progress).
async fn remove_markers(shadows: &[WorkerConfig]) -> Result<()> {
    for shadow in shadows {
        Checkpointer::remove(shadow).await?;
    }
    Ok(())
}
