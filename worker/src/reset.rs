//! `pms-worker reset`: the sync forgets where it was. Every slot's checkpoint goes (with
//! exactly-once the progress rows in the target database too), and its claim of the target
//! table (`sink/target_claim.rs`) is released, so the next run starts by
//! `source.scanMode`: with the default `latest-full`, a full read that ends by removing the
//! rows the snapshot doesn't have. The way out when a checkpoint was refused as made for
//! another table (docs/guarantees.md "What a checkpoint belongs to"). The sync must be stopped.

use pms_crds::Delivery;
use tracing::info;

use crate::checkpoint::Checkpointer;
use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};
use crate::rebuild;
use crate::sink::MysqlConnection;

/// Removes the checkpoints of every slot of `slots` (one config per slot); returns where they were.
pub async fn reset(slots: &[WorkerConfig]) -> Result<Vec<String>> {
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
        source
            .release_consumer(&s.consumer_id, &s.external_name())
            .await?;
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
