//! Checkpoints: how far a slot got, written only after the flush that covers it committed.

mod file;

use serde::{Deserialize, Serialize};

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
    /// Bumped by every start of the slot; fences older writers.
    pub epoch: u64,
    /// RFC 3339 time of the write, for status and humans.
    pub updated: String,
}

impl Checkpoint {
    /// The first snapshot whose changes are still to be written.
    pub fn next_snapshot(&self) -> i64 {
        match self.phase {
            Phase::Full => self.snapshot_id,
            Phase::Incremental => self.snapshot_id + 1,
        }
    }
}
