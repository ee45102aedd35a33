//! `PaimonMysqlSyncSavepoint`: one consistent cut of a sync, every slot at the end of the same
//! Paimon snapshot. Created by hand (`kubectl create`), or by the operator for
//! `spec.savepoint.trigger` / `spec.savepoint.interval`; a sync restores from one with
//! `spec.restoreFrom.savepoint`.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A savepoint of a `PaimonMysqlSync`.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[kube(
    group = "paimonsync.io",
    version = "v1alpha1",
    kind = "PaimonMysqlSyncSavepoint",
    plural = "paimonmysqlsyncsavepoints",
    shortname = "pmssp",
    namespaced,
    status = "SavepointStatus",
    printcolumn = r#"{"name":"Sync","type":"string","jsonPath":".spec.syncName"}"#,
    printcolumn = r#"{"name":"State","type":"string","jsonPath":".status.state"}"#,
    printcolumn = r#"{"name":"Snapshot","type":"integer","jsonPath":".status.snapshotId"}"#,
    printcolumn = r#"{"name":"Slots","type":"integer","jsonPath":".status.slots"}"#,
    printcolumn = r#"{"name":"Took","type":"string","jsonPath":".status.took"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct PaimonMysqlSyncSavepointSpec {
    /// The `PaimonMysqlSync` in the same namespace. It can't change: a savepoint is a position
    /// in that sync's tables.
    #[schemars(length(min = 1))]
    #[schemars(extend("x-kubernetes-validations" = [
        {"rule": "self == oldSelf", "message": "syncName can't change: a savepoint is a position in that sync's tables; create a new savepoint of the other sync"}
    ]))]
    pub sync_name: String,
}

/// How far the savepoint is; written by the operator only.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SavepointStatus {
    /// `Pending`, `InProgress`, then `Completed` or `Failed`.
    pub state: SavepointState,
    /// Every slot applied exactly the snapshots through this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<i64>,
    /// The number of slots the sync had when it was taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slots: Option<u32>,
    /// Where its data is kept (`ConfigMap <namespace>/<name>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// When its attempt started (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// When it completed (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// Trigger to Completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub took: Option<String>,
    /// Why the last attempt failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The attempt under way (or next): one whose slots did not all pause at one snapshot in
    /// time is made again, 3 attempts at most, the second after 1 minute, the third after 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// When the next attempt starts, after one that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_at: Option<String>,
    /// What a `Pending` savepoint waits for before its attempt starts: a slot still in its
    /// full read (which reaches no snapshot boundary before its end), with no slot paused
    /// meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_for: Option<String>,
    /// The `metadata.uid` of the sync it was taken of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_uid: Option<String>,
    /// The tables it is a position in (`paimon <warehouse> <database>.<table> -> mysql
    /// <database>.<table>`): a restore into a sync of other tables is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tables: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum SavepointState {
    #[default]
    Pending,
    InProgress,
    Completed,
    Failed,
}

impl SavepointState {
    pub fn is_finished(self) -> bool {
        matches!(self, SavepointState::Completed | SavepointState::Failed)
    }
}
