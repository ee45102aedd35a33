//! How the jobs the operator starts report back, and how a worker says that only a rebuild
//! can take its sync on. Everything travels in ConfigMaps the worker's Role names:
//!
//! - `<sync>-rebuild` (created by the operator, updated by `pms-worker rebuild`): a
//!   [`RebuildReport`] under [`REPORT_KEY`];
//! - `<sync>-verify` (created by the operator, updated by `pms-worker verify --publish`): a
//!   [`VerifyReport`] under [`REPORT_KEY`];
//! - a slot's checkpoint ConfigMap: the worker's last fatal error ([`WorkerFailure`] under
//!   [`LAST_ERROR_KEY`]) and, when only a rebuild can go on, a [`RebuildRequired`] under
//!   [`REBUILD_REQUIRED_KEY`], next to (or, for a slot that never checkpointed, instead of) its
//!   checkpoint; the next checkpoint written there replaces them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const REPORT_KEY: &str = "report.json";
pub const REBUILD_REQUIRED_KEY: &str = "rebuild-required.json";
/// A worker's last fatal error, in its checkpoint ConfigMap (a [`WorkerFailure`]).
pub const LAST_ERROR_KEY: &str = "last-error.json";

/// The rebuild's ConfigMap and Job (two kinds, one name).
pub fn rebuild_name(sync: &str) -> String {
    format!("{sync}{REBUILD_SUFFIX}")
}

/// What a rebuild's new generation adds to the sync's name. A sync whose own name ends with it
/// would be taken for the rebuild of another (`x-rebuild` for `x`'s): such names are refused
/// (by the CRD, the database sync's table list and the standalone config).
pub const REBUILD_SUFFIX: &str = "-rebuild";

/// The longest sync name: its Jobs (`<sync>-rebuild`, `-restore`, `-verify`) and a rebuild's
/// new generation are label values too (`job-name`, `paimonsync.io/sync`), at most 63
/// characters.
pub const MAX_SYNC_NAME: usize = 63 - "-restore".len();

/// The longest database sync name: its pooled workers' sync names (`<name>--pool-63`) must
/// be sync names too ([`MAX_SYNC_NAME`]).
pub const MAX_DATABASE_SYNC_NAME: usize = MAX_SYNC_NAME - "--pool-63".len();

/// What a sync's name may not contain: `<database sync>--…` names a database sync's discovery
/// and pooled workers (their labels and objects), which a sync named so would share.
pub const RESERVED_IN_SYNC_NAMES: &str = "--";

pub fn database_sync_name_too_long_message() -> String {
    format!(
        "a database sync's name has at most {MAX_DATABASE_SYNC_NAME} characters: its pooled workers are named \
         <name>--pool-<k>, sync names of at most {MAX_SYNC_NAME}"
    )
}

pub fn name_too_long_message() -> String {
    format!(
        "a sync's name has at most {MAX_SYNC_NAME} characters: its rebuild, restore and verify Jobs \
         add up to 8 and must stay label values (63)"
    )
}

/// Why `sync` is too long to name a `PaimonMysqlSync`, if it is. A Kubernetes limit only: a
/// standalone sync (no Jobs, no labels) may have a longer name.
pub fn too_long_for_kubernetes(sync: &str) -> Option<String> {
    (sync.len() > MAX_SYNC_NAME).then(|| format!("{sync:?}: {}", name_too_long_message()))
}

/// Why `sync` can't be a sync's name, if it can't.
pub fn reserved_sync_name(sync: &str) -> Option<String> {
    sync.ends_with(REBUILD_SUFFIX).then(|| {
        format!(
            "the sync name {sync:?} ends with {REBUILD_SUFFIX:?}, which names a rebuild's new generation (of the \
             sync {:?}): choose another name",
            sync.trim_end_matches(REBUILD_SUFFIX)
        )
    })
}
/// The restore's ConfigMap and Job (`spec.restoreFrom`; its report is a [`RebuildReport`]
/// that goes `CuttingOver` → `Done`/`Failed`).
pub fn restore_name(sync: &str) -> String {
    format!("{sync}-restore")
}
/// The pre-flight's ConfigMap (a [`PreflightReport`], written by slot 0 at each start).
pub fn preflight_name(sync: &str) -> String {
    format!("{sync}-preflight")
}

/// A database sync's discovery worker's sync name and the ConfigMap it writes each listing to (a
/// [`TableListing`]).
pub fn discovery_name(database_sync: &str) -> String {
    format!("{database_sync}--tables")
}

/// What the discovery worker found in the Paimon database (every table, matching or not: the
/// operator selects).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TableListing {
    pub tables: Vec<String>,
    /// RFC 3339, of the listing.
    pub at: String,
    /// The listing failed (the tables are then the last good listing's): the operator drops
    /// nothing on a failed listing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The verify's ConfigMap and Job.
pub fn verify_name(sync: &str) -> String {
    format!("{sync}-verify")
}

/// Where a rebuild stands, in its order (`Pending` and `Stopping` are the operator's, before
/// the rebuild job runs).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum RebuildPhase {
    /// Asked for; the sync's workers are being stopped.
    Stopping,
    /// Full read of the latest snapshot into `<table>__pms_new`.
    Loading,
    /// From that snapshot to the latest, still into the shadow table.
    CatchingUp,
    /// The shadow table against Paimon at the snapshot it reached.
    Verifying,
    /// RENAME TABLE and the new generation's checkpoints installed.
    CuttingOver,
    Done,
    Failed,
}

impl RebuildPhase {
    pub fn as_str(self) -> &'static str {
        match self {
            RebuildPhase::Stopping => "Stopping",
            RebuildPhase::Loading => "Loading",
            RebuildPhase::CatchingUp => "CatchingUp",
            RebuildPhase::Verifying => "Verifying",
            RebuildPhase::CuttingOver => "CuttingOver",
            RebuildPhase::Done => "Done",
            RebuildPhase::Failed => "Failed",
        }
    }

    pub fn is_finished(self) -> bool {
        matches!(self, RebuildPhase::Done | RebuildPhase::Failed)
    }
}

impl std::fmt::Display for RebuildPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A phase and when it began.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PhaseChange {
    pub phase: RebuildPhase,
    /// RFC 3339.
    pub at: String,
}

/// What `pms-worker rebuild` reports while it runs.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RebuildReport {
    /// The rebuild this report belongs to (the operator's `spec.rebuild.trigger` it serves).
    pub trigger: String,
    pub phase: RebuildPhase,
    /// Every phase so far, in order.
    pub history: Vec<PhaseChange>,
    /// The snapshot the new generation was loaded to (set from `Verifying` on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<i64>,
    /// Rows of the full read done and expected, over every slot.
    #[serde(default)]
    pub rows_loaded: u64,
    #[serde(default)]
    pub rows_expected: u64,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl RebuildReport {
    /// `loaded/expected rows (p%)` while loading, else empty.
    pub fn progress(&self) -> Option<String> {
        (self.rows_expected > 0).then(|| {
            let pct = (self.rows_loaded.min(self.rows_expected) * 100) / self.rows_expected;
            format!("{}/{} rows ({pct}%)", self.rows_loaded, self.rows_expected)
        })
    }
}

/// What `pms-worker verify --publish` found.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    /// The snapshot MySQL was compared with (the last round's).
    pub snapshot_id: i64,
    /// Rows read from Paimon.
    pub paimon_rows: u64,
    /// Rows of the MySQL table.
    pub mysql_rows: u64,
    /// Keys Paimon holds that MySQL lacks, in every round (a key that differed once but not
    /// in a later round was a change in flight).
    pub missing: u64,
    /// Keys in MySQL that Paimon doesn't hold, in every round.
    pub extra: u64,
    /// Keys whose row has other values in MySQL, in every round.
    pub different: u64,
    /// Comparisons made: later rounds re-check what differed, after the sync applied the
    /// snapshot the earlier round compared with (changes in flight are not divergence).
    pub rounds: u32,
    /// How long the verify took, in seconds.
    pub seconds: f64,
    /// RFC 3339.
    pub finished_at: String,
}

impl VerifyReport {
    pub fn divergent_rows(&self) -> u64 {
        self.missing + self.extra + self.different
    }
}

/// Why only a rebuild can take a sync on.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RebuildReason {
    /// The resume snapshot expired in Paimon.
    SnapshotExpired,
    /// An OVERWRITE commit exactly-once delivery can't apply.
    Overwrite,
    /// Exactly-once progress rows written by another parallelism.
    ExactlyOnceRescale,
    /// What the checkpoint describes is gone (a rollback, a re-created table, another
    /// server, a full read begun again) and several slots can't start over exactly.
    StartOver,
}

impl RebuildReason {
    pub fn as_str(self) -> &'static str {
        match self {
            RebuildReason::SnapshotExpired => "snapshot-expired",
            RebuildReason::Overwrite => "overwrite",
            RebuildReason::ExactlyOnceRescale => "exactly-once-rescale",
            RebuildReason::StartOver => "start-over",
        }
    }
}

/// What `pms-worker check` found when slot 0 last started (the `PreflightPassed` condition).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreflightReport {
    pub passed: usize,
    pub warnings: usize,
    pub failed: usize,
    /// Each ✗ as "check: message (fix: …)".
    #[serde(default)]
    pub failures: Vec<String>,
    /// Each ⚠, the same way.
    #[serde(default)]
    pub warning_items: Vec<String>,
    /// The `CREATE TABLE` that `sink.createTable` ran at this start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_table: Option<String>,
    /// RFC 3339.
    pub at: String,
}

/// A worker's note that it stopped on an error (a pod that crash-loops says why in the status).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerFailure {
    /// The error, as the worker logged it (errors never carry secrets).
    pub message: String,
    /// RFC 3339.
    pub at: String,
}

/// A worker's note that it stopped because only a rebuild can go on.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RebuildRequired {
    pub reason: RebuildReason,
    pub message: String,
    /// RFC 3339.
    pub at: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_round_trip_and_progress_reads_well() {
        let r = RebuildReport {
            trigger: "t1".into(),
            phase: RebuildPhase::Loading,
            history: vec![PhaseChange {
                phase: RebuildPhase::Loading,
                at: "2026-11-30T00:00:00Z".into(),
            }],
            snapshot_id: None,
            rows_loaded: 250,
            rows_expected: 1000,
            error: None,
        };
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains("\"phase\":\"Loading\""), "{text}");
        assert_eq!(serde_json::from_str::<RebuildReport>(&text).unwrap(), r);
        assert_eq!(r.progress().unwrap(), "250/1000 rows (25%)");
        let need = RebuildRequired {
            reason: RebuildReason::SnapshotExpired,
            message: "m".into(),
            at: "t".into(),
        };
        let text = serde_json::to_string(&need).unwrap();
        assert!(text.contains("snapshot-expired"), "{text}");
        assert!(RebuildPhase::Done.is_finished() && !RebuildPhase::Verifying.is_finished());
    }
}

/// A pooled database sync's assignment of tables to workers, which the operator writes (a
/// [`PoolAssignment`]) and every pooled worker reads.
pub fn pool_assignment_name(database_sync: &str) -> String {
    format!("{database_sync}--pool")
}

/// Pooled worker `worker`'s sync name (its Deployment is `<this>-slot-0`) and the ConfigMap it
/// reports its tables in (a [`PoolReport`]).
pub fn pool_worker_name(database_sync: &str, worker: u32) -> String {
    format!("{database_sync}--pool-{worker}")
}

/// Which pooled worker runs each table (`crate::pool_worker`), of the tables the operator
/// chose (selected, not refused).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PoolAssignment {
    pub workers: u32,
    /// By Paimon table, its worker.
    pub tables: std::collections::BTreeMap<String, u32>,
    /// RFC 3339, of the listing it was made from. A failed listing changes nothing: a table
    /// leaves the assignment only when a good listing no longer has it (or it stops matching).
    pub at: String,
    /// One more at each change; a worker reports the one it acted on, so the operator knows
    /// when a table that left the assignment has stopped everywhere.
    #[serde(default)]
    pub revision: u64,
    /// Tables that left the assignment for their own `PaimonMysqlSync`, until it is made: it is
    /// made without its one-shot triggers first (`rebuild.trigger`, `restoreFrom`), so that
    /// those the table left the pool for run rather than count as served at its creation.
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    pub leaving: std::collections::BTreeSet<String>,
    /// Set when the database sync is deleted with its checkpoints: each worker, at its stop,
    /// makes its tables forget (`pms-worker reset` of each: checkpoints, progress rows, Paimon
    /// consumer, claim of the MySQL table), as a deleted sync's workers do.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub release_on_stop: bool,
}

/// What one pooled worker reports of its tables, every few seconds.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PoolReport {
    pub worker: u32,
    /// RFC 3339, when written.
    pub at: String,
    /// The assignment's revision this worker acted on: every table it no longer has was told
    /// to stop, and a table still stopping is still in `tables`.
    #[serde(default)]
    pub assignment_revision: u64,
    pub tables: Vec<PooledTable>,
}

/// One table of a pooled worker.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PooledTable {
    pub table: String,
    pub state: PooledState,
    /// Its place in the worker's queue of full reads (1: next), while `queued`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_position: Option<u32>,
    /// The last snapshot applied (`None` before the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_snapshots: Option<i64>,
    /// Rows written of its full read, while `fullRead`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_read_rows: Option<i64>,
    /// Why it failed (it is retried with backoff; the worker's other tables go on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PooledState {
    /// Opening: the table, MySQL, its checkpoint.
    #[default]
    Starting,
    /// Waiting for one of the worker's `maxFullReads` places.
    Queued,
    FullRead,
    /// Applying each snapshot's changes.
    Following,
    /// Its sync failed; retried after a backoff.
    Failed,
}
