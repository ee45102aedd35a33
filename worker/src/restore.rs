//! `pms-worker restore --snapshot S`: every slot of the sync goes on after snapshot S (a
//! savepoint's cut, or any snapshot whose successor Paimon still keeps). The sync must be
//! stopped: at-least-once, no slot may hold its lock; exactly-once, its workers are fenced and
//! the progress rows are set in one transaction (they win on resume). Then each slot's
//! checkpoint (file or ConfigMap, at an epoch above the old one) and Paimon consumer follow.
//!
//! Restoring to an earlier point replays what came after it: at-least-once converges (upserts
//! and deletes are idempotent per key, in order); exactly-once applies those changes again.

use pms_crds::contract::{BelongsTo, Checkpoint, Position, ReadPoint, RebuildPhase, Slot};
use pms_crds::Delivery;
use tracing::info;

use crate::checkpoint::Checkpointer;
use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};
use crate::rebuild;
use crate::sink::MysqlConnection;
use crate::source::PaimonSource;

/// Sets every slot of `slots` (one config per slot) to go on after `snapshot`; `trigger` names
/// the restore in its report (`<sync>-restore`, with ConfigMap checkpoints).
pub async fn restore(slots: &[WorkerConfig], snapshot: i64, trigger: Option<String>) -> Result<()> {
    let cfg = slots
        .first()
        .ok_or_else(|| WorkerError::Config("no slot to restore".into()))?;
    let mut report = rebuild::Reporter::new(cfg, trigger, pms_crds::contract::restore_name).await;
    report.phase(RebuildPhase::CuttingOver).await;
    let result = restore_slots(slots, snapshot).await;
    match &result {
        Ok(()) => {
            report.snapshot(snapshot).await;
            report.phase(RebuildPhase::Done).await;
        }
        Err(e) => report.fail(e).await,
    }
    result
}

async fn restore_slots(slots: &[WorkerConfig], snapshot: i64) -> Result<()> {
    let cfg = &slots[0];
    for s in slots {
        crate::generation::refuse_if_in_progress(s).await?;
    }
    let source = PaimonSource::open(&cfg.spec.source, Slot::SINGLE).await?;
    let latest = source.latest_snapshot().await?.unwrap_or(0);
    let earliest = source.earliest_snapshot().await?.unwrap_or(0);
    let table = cfg.spec.source.table.clone();
    if snapshot < 1 || snapshot > latest {
        return Err(WorkerError::Source {
            table,
            message: format!("can't restore to snapshot {snapshot}: the table's snapshots are {earliest}..={latest}"),
        });
    }
    if snapshot < latest && snapshot + 1 < earliest {
        return Err(WorkerError::SnapshotExpired {
            table,
            needed: snapshot + 1,
            earliest,
            checkpoint: format!("restore to snapshot {snapshot}"),
        });
    }
    let count = slots.len() as u32;
    let mysql = MysqlConnection::open(cfg).await?;
    rebuild::stop_old_generation(&mysql, cfg, count).await?;
    // What the restored checkpoints belong to: this sync's tables, in the history of today.
    let belongs_to = BelongsTo {
        snapshot: source.snapshot_identity(snapshot).await?,
        ..crate::checkpoint::belongs_to::now(cfg, &source, &mysql).await
    };
    let point = ReadPoint::Changes {
        next_snapshot: snapshot + 1,
        at: Position::START,
    };
    let template = Checkpoint {
        sync: cfg.sync_name.clone(),
        slot: cfg.slot,
        point,
        epoch: 0,
        updated: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        latest_snapshot: Some(latest),
        rescaled_from: None,
        paused_for: None,
        belongs_to: Some(belongs_to),
        sweep: false,
        full_read: None,
    };
    if cfg.spec.sink.delivery == Delivery::ExactlyOnce {
        let note = crate::checkpoint::row_note(&template);
        mysql
            .set_progress(&cfg.external_name(), count, snapshot, note)
            .await?;
    }
    for s in slots {
        let old_epoch = Checkpointer::peek(s)
            .await
            .ok()
            .flatten()
            .map_or(0, |c| c.epoch);
        let cp = Checkpoint {
            slot: s.slot,
            epoch: old_epoch + 1,
            ..template.clone()
        };
        Checkpointer::replace(s, &cp).await?;
        source.write_consumer(&s.consumer_id, point).await?;
    }
    source
        .remove_stale_consumers(&cfg.consumer_base(), count)
        .await?;
    info!(sync = %cfg.sync_name, snapshot, slots = count, "restored: every slot goes on after this snapshot");
    Ok(())
}
