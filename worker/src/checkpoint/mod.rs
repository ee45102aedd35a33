//! Checkpoints: how far a slot got, written only after the flush that covers it committed.

mod configmap;
mod file;

use serde::{Deserialize, Serialize};

pub use configmap::{checkpoint_labels, checkpoint_name, ConfigMapCheckpointStore, DATA_KEY};
pub use file::FileCheckpointStore;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// The full read of `snapshot_id` has started but not finished: a restart reads it again.
    Full,
    /// Every change up to and including `snapshot_id` is in MySQL.
    Incremental,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    pub sync: String,
    pub slot: u32,
    pub slots: u32,
    pub snapshot_id: i64,
    pub phase: Phase,
    /// Inside `snapshot_id`: the changes before this position are written, the rest are not.
    /// `None`: the whole snapshot is written (incremental) or nothing of it yet (full).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,
    /// Bumped by every start of the slot; fences older writers.
    pub epoch: u64,
    /// RFC 3339 time of the write, for status and humans.
    pub updated: String,
    /// The latest Paimon snapshot seen when this was written (for lag in status).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_snapshot: Option<i64>,
    /// Where every slot of a rescale started: kept so slots that start later find it even
    /// after the old checkpoints were overwritten.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rescaled_from: Option<RescaleBase>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RescaleBase {
    /// The old number of slots.
    pub slots: u32,
    /// The lowest snapshot the old slots had reached, and its phase.
    pub snapshot_id: i64,
    pub phase: Phase,
}

/// How far into one snapshot's ordered splits a slot got: `row` rows into split `split`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    pub split: u32,
    pub row: u64,
}

impl Checkpoint {
    /// The first snapshot whose changes are still (at least partly) to be written.
    pub fn next_snapshot(&self) -> i64 {
        match (self.phase, self.position) {
            (Phase::Incremental, None) => self.snapshot_id + 1,
            _ => self.snapshot_id,
        }
    }
}

/// Where this slot keeps its checkpoint.
pub enum CheckpointStore {
    File(FileCheckpointStore),
    ConfigMap(Box<ConfigMapCheckpointStore>),
}

impl CheckpointStore {
    pub fn location(&self) -> String {
        match self {
            CheckpointStore::File(s) => s.location(),
            CheckpointStore::ConfigMap(s) => s.location(),
        }
    }

    pub async fn load(&mut self) -> crate::error::Result<Option<Checkpoint>> {
        match self {
            CheckpointStore::File(s) => s.load(),
            CheckpointStore::ConfigMap(s) => s.load().await,
        }
    }

    pub async fn save(&mut self, checkpoint: &Checkpoint) -> crate::error::Result<()> {
        match self {
            CheckpointStore::File(s) => s.save(checkpoint),
            CheckpointStore::ConfigMap(s) => s.save(checkpoint).await,
        }
    }
}
