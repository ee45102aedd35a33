//! Errors of the worker. Each variant says what failed and, where it can, what to do about it.

use thiserror::Error;

pub type Result<T, E = WorkerError> = std::result::Result<T, E>;

#[derive(Debug, Error)]
pub enum WorkerError {
    #[error("configuration: {0}")]
    Config(String),

    #[error("reading config file {path}: {source}")]
    ConfigFile {
        path: String,
        #[source]
        source: std::io::Error,
    },

    #[error("Paimon table {table}: {message}")]
    Source { table: String, message: String },

    #[error("Paimon table {table}: {source}")]
    Paimon {
        table: String,
        #[source]
        source: Box<paimon::Error>,
    },

    #[error(
        "Paimon snapshot {needed} of {table} has expired (the earliest kept is {earliest}); \
         the changes between them are gone, so this slot can't resume from its checkpoint ({checkpoint}). \
         Recover with `pms-worker rebuild` (a full read into a shadow table, verified and swapped in, so rows \
         deleted meanwhile do not stay behind, as they would after deleting the checkpoint); the sync's \
         consumer file keeps Paimon from expiring snapshots it still needs unless consumer.expiration-time \
         is shorter than the sync was down"
    )]
    SnapshotExpired {
        table: String,
        needed: i64,
        earliest: i64,
        checkpoint: String,
    },

    #[error("MySQL target {table} is not fit for this sync:\n  - {}", problems.join("\n  - "))]
    Validation {
        table: String,
        problems: Vec<String>,
    },

    #[error("{0}")]
    Data(String),

    #[error("MySQL {action} on {table} failed{key}: {source}")]
    Sink {
        action: &'static str,
        table: String,
        /// ` for key (…)` when the failing row is known.
        key: String,
        #[source]
        source: Box<mysql_async::Error>,
    },

    #[error("MySQL connection to {url}: {source}")]
    Connect {
        url: String,
        #[source]
        source: Box<mysql_async::Error>,
    },

    #[error("MySQL connection to {url}: {advice} ({source})")]
    ConnectAdvice {
        url: String,
        advice: String,
        #[source]
        source: Box<mysql_async::Error>,
    },

    #[error("checkpoint {location}: {message}")]
    Checkpoint { location: String, message: String },

    /// Only a rebuild can take the sync on from here (besides an expired snapshot, which
    /// has its own variant).
    #[error("{message}")]
    RebuildRequired {
        reason: pms_crds::contract::RebuildReason,
        message: String,
    },

    #[error(transparent)]
    Admin(#[from] pms_runtime::AdminError),
}

impl WorkerError {
    /// Why only a rebuild can go on after this error, if that is the case.
    pub fn rebuild_reason(&self) -> Option<pms_crds::contract::RebuildReason> {
        match self {
            WorkerError::SnapshotExpired { .. } => {
                Some(pms_crds::contract::RebuildReason::SnapshotExpired)
            }
            WorkerError::RebuildRequired { reason, .. } => Some(*reason),
            _ => None,
        }
    }
}

impl From<pms_crds::contract::SlotError> for WorkerError {
    fn from(e: pms_crds::contract::SlotError) -> Self {
        WorkerError::Config(e.to_string())
    }
}
