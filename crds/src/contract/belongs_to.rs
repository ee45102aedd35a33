//! What a checkpoint belongs to: the Paimon table and history it was made in and the MySQL
//! table and server it describes. A resume compares each with what the sync sees now (the
//! worker's `checkpoint/belongs_to.rs` says what a difference leads to; docs/guarantees.md "What a
//! checkpoint belongs to").

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BelongsTo {
    pub source: SourceIdentity,
    pub target: TargetIdentity,
    /// The last snapshot whose changes are all applied (or whose full read is under way), as
    /// Paimon committed it: a rollback or a re-created table reuses the id, not the commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<SnapshotIdentity>,
    /// The `source.filter` MySQL's rows were kept by (none: every row): another filter keeps
    /// other rows, so the slot starts over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// `commit` when `source.freshness: commit` read the table otherwise than its producer
    /// (each commit's level-0 files): MySQL holds commits the changelog has not brought yet,
    /// so a switch either way starts over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub freshness: Option<String>,
}

/// The Paimon table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceIdentity {
    pub warehouse: String,
    pub database: String,
    pub table: String,
    /// When the table's first schema was written (Unix ms): a table dropped and created
    /// again under the same name has another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_millis: Option<i64>,
}

/// The MySQL table, and the server holding it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetIdentity {
    pub database: String,
    pub table: String,
    /// The server's own identity (`@@server_uuid` where MySQL has it; else server id, host,
    /// port and data directory): another server behind the same URL (a failover) differs.
    pub server: String,
}

/// One Paimon snapshot, as committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotIdentity {
    pub id: i64,
    pub time_millis: i64,
}

impl std::fmt::Display for SnapshotIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = std::time::UNIX_EPOCH
            + std::time::Duration::from_millis(self.time_millis.max(0) as u64);
        write!(
            f,
            "snapshot {} committed at {}",
            self.id,
            humantime::format_rfc3339_millis(at)
        )
    }
}
