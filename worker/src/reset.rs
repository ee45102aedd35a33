//! `pms-worker reset`: the sync forgets where it was. Every slot's checkpoint goes (with
//! exactly-once the progress rows in the target database too), and its claim of the target
//! table (`sink/target_claim.rs`) is released, so the next run starts by
//! `source.scanMode`: with the default `latest-full`, a full read that ends by removing the
//! rows the snapshot doesn't have. The way out when a checkpoint was refused as made for
//! another table (docs/guarantees.md "What a checkpoint belongs to"). The sync must be stopped.
//!
//! Under the operator, a sync deleted with its checkpoints has its workers do the part outside
//! the cluster at their stop ([`release_on_stop`]): its Paimon consumers and its claim.

use pms_crds::Delivery;
use tracing::{info, warn};

use crate::checkpoint::Checkpointer;
use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};
use crate::rebuild;
use crate::sink::MysqlConnection;

/// Removes the checkpoints of every slot of `slots` (one config per slot); returns where they were.
pub async fn reset(slots: &[WorkerConfig]) -> Result<Vec<String>> {
    reset_with(slots, Consumers::Release).await
}

/// A pooled table of a database sync deleted with its checkpoints, at its worker's stop:
/// [`reset`] (checkpoints, progress row, claim), its Paimon consumer removed too, as
/// [`release_on_stop`] removes a deleted sync's.
pub async fn forget(cfg: &WorkerConfig) -> Result<Vec<String>> {
    reset_with(std::slice::from_ref(cfg), Consumers::Remove).await
}

/// What a reset does with the slots' Paimon consumers.
enum Consumers {
    /// Gives up the sync's claim of them (their files stay).
    Release,
    /// Removes them: nothing of the sync is left pinning snapshots.
    Remove,
}

async fn reset_with(slots: &[WorkerConfig], consumers: Consumers) -> Result<Vec<String>> {
    let cfg = slots
        .first()
        .ok_or_else(|| WorkerError::Config("no slot to reset".into()))?;
    for s in slots {
        crate::generation::refuse_if_in_progress(s).await?;
    }
    let mysql = MysqlConnection::open(cfg).await?;
    rebuild::stop_old_generation(&mysql, cfg, slots.len() as u32).await?;
    if cfg.spec.sink.delivery == Delivery::ExactlyOnce {
        for name in std::iter::once(cfg.external_name()).chain(cfg.legacy_external_name()) {
            mysql.remove_progress(&name).await?;
        }
    }
    mysql.release_target(cfg).await?;
    mysql.close().await;
    let source = crate::source::PaimonSource::open(&cfg.spec.source, cfg.slot).await?;
    for s in slots {
        let (id, sync) = (&s.consumer_id, &s.external_name());
        match consumers {
            Consumers::Release => source.release_consumer(id, sync).await?,
            Consumers::Remove => source.remove_consumer(id, sync).await?,
        }
    }
    let mut removed = Vec::new();
    for s in slots {
        if Checkpointer::peek(s).await?.is_some() {
            removed.push(Checkpointer::location_of(s).await?);
            Checkpointer::remove(s).await?;
        }
    }
    info!(sync = %cfg.sync_name, ?removed, "reset: the next run starts by source.scanMode");
    Ok(removed)
}

/// At the stop of a slot whose sync is being deleted with its checkpoints
/// (`Control::release_on_stop`): its Paimon consumer goes (snapshots expire again) and the
/// sync's claim of its MySQL table (a sync of another name may write it). What fails is
/// logged with what is left (the operator's event told how to remove it by hand).
pub async fn release_on_stop(cfg: &WorkerConfig, source: &crate::source::PaimonSource) {
    let consumer = source
        .remove_consumer(&cfg.consumer_id, &cfg.external_name())
        .await;
    let claim = async {
        let mysql = MysqlConnection::open(cfg).await?;
        let released = mysql.release_target(cfg).await;
        mysql.close().await;
        released
    }
    .await;
    match (consumer, claim) {
        (Ok(()), Ok(())) => info!(consumer = %cfg.consumer_id,
            "the sync is deleted: removed its Paimon consumer and its claim of the MySQL table"),
        (consumer, claim) => warn!(
            consumer = %cfg.consumer_id,
            consumer_error = ?consumer.err().map(|e| e.to_string()),
            claim_error = ?claim.err().map(|e| e.to_string()),
            "the sync is deleted, but its Paimon consumer or its claim of the MySQL table could not be removed: \
             remove them by hand (pms-worker reset with the sync's config)"
        ),
    }
}
