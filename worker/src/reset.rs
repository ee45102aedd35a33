//! `pms-worker reset`: the sync forgets where it was. Every slot's checkpoint goes (with
//! exactly-once the progress rows in the target database too), and its claim of the target
//! table (`sink/target_claim.rs`) is released, so the next run starts by
//! `source.scanMode`: with the default `latest-full`, a full read that ends by removing the
//! rows the snapshot doesn't have. The way out when a checkpoint was refused as made for
//! another table (docs/guarantees.md "What a checkpoint belongs to"). The sync must be stopped.
//!
//! Under the operator, a sync deleted with its checkpoints has its workers do the part outside
//! the cluster at their stop ([`release_on_stop`]): its Paimon consumers and its claim.

use std::collections::BTreeMap;

use pms_crds::contract::RELEASED_KEY;
use pms_crds::Delivery;
use tracing::{info, warn};

use crate::checkpoint::configmap::ConfigMapCheckpointStore;
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

/// At the stop of a slot whose sync is being deleted with its checkpoints
/// (`Control::release_on_stop`): its Paimon consumer goes (snapshots expire again) and the
/// sync's claim of its MySQL table (a sync of another name may write it), then a note in its
/// checkpoint ConfigMap tells the operator. Each failure is logged, and the missing note
/// makes the operator say what is left to remove by hand.
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
        (Ok(()), Ok(())) => {}
        (consumer, claim) => {
            warn!(consumer = ?consumer.err().map(|e| e.to_string()), claim = ?claim.err().map(|e| e.to_string()),
                  "the sync is deleted, but its Paimon consumer or its claim of the MySQL table could not be removed");
            return;
        }
    }
    let Some(namespace) = cfg.config_map_namespace() else {
        return;
    };
    let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let noted = match ConfigMapCheckpointStore::connect(&cfg.sync_name, cfg.slot, namespace).await {
        Ok(store) => {
            store
                .note(BTreeMap::from([(RELEASED_KEY.to_string(), at)]))
                .await
        }
        Err(e) => Err(e),
    };
    match noted {
        Ok(()) => {
            info!(consumer = %cfg.consumer_id, "the sync is deleted: released its Paimon consumer and its claim of the MySQL table")
        }
        Err(e) => {
            warn!(error = %e, "released the Paimon consumer and the claim, but could not note it")
        }
    }
}
