//! The checkpoint stage: how far a slot got, recorded only after the flush that covers it
//! committed. The record itself ([`Checkpoint`]) is part of the worker ↔ operator contract.
//!
//! Where it goes: a local file (standalone), a ConfigMap (the operator's default) or an S3
//! object, and with
//! `delivery: exactly-once` also a progress row in MySQL that commits inside every flush
//! transaction and wins over the other store on resume.

pub mod belongs_to;
pub mod configmap;
mod file;
mod mysql;
mod rescale;
mod s3;

pub use mysql::{row_note, swapped_in_note};
pub use pms_crds::contract::{BelongsTo, Checkpoint, Position, ReadPoint, RescaleBase};
use pms_crds::contract::{RebuildRequired, WorkerFailure, LAST_ERROR_KEY, REBUILD_REQUIRED_KEY};

use pms_crds::Delivery;
use tracing::info;

use crate::config::{CheckpointTarget, WorkerConfig};
use crate::error::{Result, WorkerError};
use crate::sink::{MysqlSink, ProgressUpdate};
use configmap::ConfigMapCheckpointStore;
use file::FileCheckpointStore;
use mysql::MysqlCheckpointStore;
use s3::S3CheckpointStore;

/// Where this slot keeps its checkpoint.
enum Store {
    File(FileCheckpointStore),
    ConfigMap(Box<ConfigMapCheckpointStore>),
    S3(Box<S3CheckpointStore>),
    /// The progress row committed with each flush is the only record (`in_transaction`); its
    /// location, for messages.
    ProgressRow(String),
}

/// The checkpoint stores of one slot, and the epoch this run claimed.
pub struct Checkpointer {
    store: Store,
    /// Exactly-once: the progress row committed with every flush.
    in_transaction: Option<MysqlCheckpointStore>,
    epoch: u64,
    /// The resumed checkpoint is the exactly-once progress row, committed with the rows it
    /// counts (so it is true of whatever server holds them).
    resumed_from_progress_row: bool,
}

impl Checkpointer {
    /// Loads the slot's checkpoint and takes the slot over: a new epoch is stored before
    /// anything is written, so an older worker of the same slot is fenced off (its next
    /// ConfigMap write conflicts, or its progress row update matches nothing). A checkpoint
    /// of another sync or made for another table (`now` says what this sync is) is refused
    /// before it is touched.
    pub async fn open(
        cfg: &WorkerConfig,
        sink: &MysqlSink,
        now: &BelongsTo,
    ) -> Result<(Self, Option<Checkpoint>)> {
        let mut store = Store::of(cfg).await?;
        let mut resumed = store.load().await?;
        let location = store.location();
        let refuse = |cp: &Checkpoint| match belongs_to::foreign(cp, &cfg.sync_name, now) {
            Some(message) => Err(WorkerError::Checkpoint {
                location: location.clone(),
                message,
            }),
            None => Ok(()),
        };
        if let Some(cp) = &resumed {
            refuse(cp)?;
        }
        let mut epoch = resumed.as_ref().map_or(0, |c| c.epoch) + 1;
        let mut resumed_from_progress_row = false;
        let in_transaction = if cfg.spec.sink.delivery == Delivery::ExactlyOnce {
            let (mysql, committed) = MysqlCheckpointStore::claim(sink, cfg, cfg.slot).await?;
            epoch = mysql.epoch();
            // The progress row committed with the rows wins over any other store.
            if let Some(cp) = committed {
                refuse(&cp)?;
                resumed = Some(cp);
                resumed_from_progress_row = true;
            }
            Some(mysql)
        } else {
            None
        };
        let mut this = Self {
            store,
            in_transaction,
            epoch,
            resumed_from_progress_row,
        };
        if let Some(cp) = &mut resumed {
            if cp.slot != cfg.slot {
                return Err(this.error(format!(
                    "was written by slot {} of {}, this is slot {}; a different parallelism needs a rescale at a \
                     consistent snapshot (the operator does it) or a rebuild, not a restart",
                    cp.slot.index, cp.slot.count, cfg.slot
                )));
            }
            cp.epoch = epoch;
            // Written now: which layout is newest is told by this time (`rescale.rs`).
            cp.updated = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            if this.in_transaction.is_none() {
                this.save(cp).await?;
            }
        }
        info!(checkpoint = %this.location(), epoch, resume = ?resumed.as_ref().map(|c| c.point), "checkpoint loaded");
        Ok((this, resumed))
    }

    /// This run's epoch.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Whether the resumed checkpoint is the exactly-once progress row.
    pub fn resumed_from_progress_row(&self) -> bool {
        self.resumed_from_progress_row
    }

    /// Whether every flush carries a progress row (so moving the read point alone is a
    /// write, and the bulk path, which has no transaction, is out).
    pub fn joins_transactions(&self) -> bool {
        self.in_transaction.is_some()
    }

    /// The progress update that must commit with the flush that reaches `cp`, if this slot
    /// keeps a progress row (flushes are handed out in commit order).
    pub fn progress_update(&mut self, cp: &Checkpoint) -> Option<ProgressUpdate> {
        self.in_transaction.as_mut().map(|m| m.update_for(cp))
    }

    pub fn location(&self) -> String {
        self.store.location()
    }

    fn error(&self, message: String) -> WorkerError {
        WorkerError::Checkpoint {
            location: self.location(),
            message,
        }
    }

    /// Records `cp` (callers flush first: a checkpoint never covers unwritten changes).
    pub async fn save(&mut self, cp: &Checkpoint) -> Result<()> {
        self.store.save(cp).await
    }

    /// The slot's stored checkpoint (file or ConfigMap), without taking the slot over.
    pub async fn peek(cfg: &WorkerConfig) -> Result<Option<Checkpoint>> {
        Store::of(cfg).await?.load().await
    }

    /// Where the slot's checkpoint is kept.
    pub async fn location_of(cfg: &WorkerConfig) -> Result<String> {
        Ok(Store::of(cfg).await?.location())
    }

    /// Whether another slot of this sync has a stored checkpoint.
    pub async fn another_slot_has_one(cfg: &WorkerConfig) -> Result<bool> {
        for j in (0..cfg.slot.count).filter(|&j| j != cfg.slot.index) {
            let other = cfg.for_slot(pms_crds::contract::Slot::new(j, cfg.slot.count)?);
            if Store::of(&other).await?.load().await?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Removes the slot's stored checkpoint (a finished rebuild's new generation).
    pub async fn remove(cfg: &WorkerConfig) -> Result<()> {
        match Store::of(cfg).await? {
            Store::File(s) => s.remove(),
            Store::ConfigMap(s) => s.remove().await,
            Store::S3(s) => s.remove().await,
            Store::ProgressRow(_) => Ok(()),
        }
    }

    /// After `error`, tells the operator why this worker stopped, and whether only a rebuild
    /// can take the sync on: notes in the slot's checkpoint ConfigMap (the status shows them;
    /// `spec.rebuild.policy: auto` starts a rebuild), also when the checkpoints are on S3. A
    /// standalone worker's notes have no reader but the user, who has the error.
    pub async fn note_failure(cfg: &WorkerConfig, error: &WorkerError) {
        let Some(namespace) = cfg.config_map_namespace() else {
            return;
        };
        let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let message = error.to_string();
        let mut notes = vec![(
            LAST_ERROR_KEY,
            serde_json::to_string_pretty(&WorkerFailure {
                message: message.clone(),
                at: at.clone(),
            }),
        )];
        if let Some(reason) = error.rebuild_reason() {
            let note = RebuildRequired {
                reason,
                message,
                at,
            };
            notes.push((REBUILD_REQUIRED_KEY, serde_json::to_string_pretty(&note)));
        }
        let notes = notes
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_string(), v.ok()?)))
            .collect();
        let noted =
            match ConfigMapCheckpointStore::connect(&cfg.sync_name, cfg.slot, namespace).await {
                Ok(s) => s.note(notes).await,
                Err(e) => Err(e),
            };
        match noted {
            Ok(()) => info!(rebuild_required = ?error.rebuild_reason().map(|r| r.as_str()),
                            "noted the error in the checkpoint ConfigMap"),
            Err(e) => {
                tracing::warn!(error = %e, "could not note the error in the checkpoint ConfigMap")
            }
        }
    }

    /// Replaces the slot's stored checkpoint (a rebuild installing its new generation).
    pub async fn replace(cfg: &WorkerConfig, cp: &Checkpoint) -> Result<()> {
        let mut store = Store::of(cfg).await?;
        // A ConfigMap is written over the version read.
        store.load().await?;
        store.save(cp).await
    }
}

impl Store {
    async fn of(cfg: &WorkerConfig) -> Result<Self> {
        Ok(match &cfg.checkpoint {
            CheckpointTarget::File(_) => {
                let files = cfg.checkpoint_files.clone();
                Store::File(FileCheckpointStore::new(cfg.slot, move |slot| {
                    files.path(slot)
                }))
            }
            CheckpointTarget::ConfigMap { namespace } => Store::ConfigMap(Box::new(
                ConfigMapCheckpointStore::connect(&cfg.sync_name, cfg.slot, namespace.clone())
                    .await?,
            )),
            CheckpointTarget::S3(target) => Store::S3(Box::new(S3CheckpointStore::new(
                target,
                &cfg.external_name(),
                cfg.legacy_external_name(),
                cfg.slot,
            )?)),
            CheckpointTarget::ProgressRow => Store::ProgressRow(format!(
                "the {} row of {} in {}",
                crate::sink::progress_table::TABLE,
                cfg.external_name(),
                cfg.mysql.redacted_url()
            )),
        })
    }

    fn location(&self) -> String {
        match self {
            Store::File(s) => s.location(),
            Store::ConfigMap(s) => s.location(),
            Store::S3(s) => s.location(),
            Store::ProgressRow(location) => location.clone(),
        }
    }

    async fn load(&mut self) -> Result<Option<Checkpoint>> {
        match self {
            Store::File(s) => s.load().await,
            Store::ConfigMap(s) => s.load().await,
            Store::S3(s) => s.load().await,
            Store::ProgressRow(_) => Ok(None),
        }
    }

    async fn save(&mut self, cp: &Checkpoint) -> Result<()> {
        match self {
            Store::File(s) => s.save(cp),
            Store::ConfigMap(s) => s.save(cp).await,
            Store::S3(s) => s.save(cp).await,
            Store::ProgressRow(_) => Ok(()),
        }
    }
}
