//! `status` of a `PaimonMysqlSync`, written by the operator.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use schemars::JsonSchema;

use crate::contract::{RebuildPhase, VerifyReport};
use serde::{Deserialize, Serialize};

/// What the operator reports of the sync; written by the operator only.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaimonMysqlSyncStatus {
    /// The `metadata.generation` of the spec this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<SyncPhase>,
    /// Lowest snapshot every slot has checkpointed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<i64>,
    /// Snapshots committed to the Paimon table after `snapshotId` (as the slots last saw it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_snapshots: Option<i64>,
    /// Slots ready (the scale subresource's status replicas: an int32 to the API server).
    #[serde(default)]
    #[schemars(range(max = 2147483647))]
    pub ready_slots: u32,
    /// `ready/total`, for `kubectl get pms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slots_ready: Option<String>,
    /// Each slot's progress, by slot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slots: Vec<SlotStatus>,
    /// `Ready`, `Progressing`, `Degraded`, and `RebuildRequired` / `Verified` when they apply.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The last (or current) rebuild.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebuild: Option<RebuildStatus>,
    /// The last (or current) restore of `spec.restoreFrom` (`trigger` holds what it restored
    /// from; phases `Stopping`, `CuttingOver`, `Done`/`Failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<RebuildStatus>,
    /// The last periodic verify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyStatus>,
    /// What `spec.savepoint` has asked for so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub savepoints: Option<SavepointsStatus>,
    /// The parallelism the slot Deployments run with (behind `spec.parallelism` while a
    /// rescale waits for its cut).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<u32>,
    /// The last (or current) rescale of a running sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rescale: Option<RescaleStatus>,
    /// What the slot Deployments run (worker config and image, hashed): a change of it restarts
    /// the workers, as `spec.upgradeMode` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_key: Option<String>,
    /// The last spec whose workers ran ready (`spec.rollback` on): what a rollback goes back to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_stable_spec: Option<StableSpec>,
    /// The newest spec's way to running ready, while `spec.rollback` watches it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback: Option<RollbackStatus>,
}

/// A spec that ran ready, and its generation.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StableSpec {
    /// The spec's `metadata.generation`.
    pub generation: i64,
    /// The spec, as JSON.
    #[schemars(length(max = 1572864))]
    pub spec: String,
}

/// Generation `generation` of the spec on its way to running ready (`Waiting`), or rolled back
/// to `status.lastStableSpec` because it did not in time (`RolledBack`, until the spec changes).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollbackStatus {
    /// The spec's `metadata.generation`.
    pub generation: i64,
    /// `Waiting` for it to run ready, or `RolledBack`.
    pub phase: RollbackPhase,
    /// When its clock (re)started: the last time the sync was suspended, rebuilding or cutting
    /// counts from then.
    pub since: String,
    /// Why it was rolled back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum RollbackPhase {
    Waiting,
    RolledBack,
}

/// A restart at a consistent cut (a rescale, or an upgrade with `upgradeMode: savepoint`):
/// every old slot pauses at the end of one snapshot S, the new workers start exactly there.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RescaleStatus {
    /// The pause request's id.
    pub id: String,
    /// What restarts the workers: `parallelism` or `upgrade`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The parallelism of the old workers.
    pub from: u32,
    /// The parallelism of the new workers.
    pub to: u32,
    /// `Cutting`, `Starting`, then `Done`, or `Failed` (no cut in time: restarted from the
    /// lowest old checkpoint instead, at-least-once).
    pub phase: RescalePhase,
    /// The cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<i64>,
    /// The old workers' checkpoint epochs at the cut, by slot: with the same parallelism only a
    /// slot with a newer epoch (a new worker) counts as started at the cut.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cut_epochs: Vec<u64>,
    /// When the pause was asked (RFC 3339).
    pub started_at: String,
    /// Pause asked → every new slot at the cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub took: Option<String>,
    /// What did not go as planned (no cut in time, and what was done instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum RescalePhase {
    /// The old slots are pausing at one snapshot's end.
    Cutting,
    /// The new slots are starting from the cut.
    Starting,
    Done,
    /// No cut in time: rescaled from the lowest old checkpoint instead (at-least-once).
    Failed,
}

/// The savepoints the operator took for `spec.savepoint`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SavepointsStatus {
    /// The `spec.savepoint.trigger` last served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_trigger: Option<String>,
    /// When the last periodic savepoint was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_periodic_at: Option<String>,
}

/// A rebuild the operator drives.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RebuildStatus {
    /// Names this rebuild (its Job and report carry it): when it started.
    pub id: String,
    /// `spec.rebuild.trigger` when it started: a rebuild starts when the trigger differs from
    /// the last rebuild's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// Why it started.
    pub reason: String,
    pub phase: RebuildPhase,
    /// Rows of the full read done and expected, while loading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<String>,
    /// The snapshot the new generation was loaded and verified at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<i64>,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// When it ended, `Done` or `Failed` (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Why it failed, or how it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The last periodic verify.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifyStatus {
    /// When the last verify Job started (the next one starts `spec.verify.interval` later).
    pub started_at: String,
    /// A verify Job runs.
    #[serde(default)]
    pub running: bool,
    /// What the last finished verify found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<VerifyReport>,
    /// Why the last verify Job failed without a result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `spec.verify.trigger` when the last verify started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_trigger: Option<String>,
}

/// Where a sync stands, as `kubectl get pms` shows it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum SyncPhase {
    /// Slots are starting (or stopping towards `suspended`).
    Pending,
    /// Every slot is ready.
    Running,
    /// `spec.state: suspended` and no worker runs.
    Suspended,
    /// Some slots are not ready (or a running sync lost one).
    Degraded,
    /// The spec or what it refers to is invalid; the `Ready` condition says why.
    Failed,
    /// A rebuild runs instead of the workers (`status.rebuild` says how far it is).
    Rebuilding,
}

impl SyncPhase {
    pub const ALL: [SyncPhase; 6] = [
        SyncPhase::Pending,
        SyncPhase::Running,
        SyncPhase::Suspended,
        SyncPhase::Degraded,
        SyncPhase::Failed,
        SyncPhase::Rebuilding,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SyncPhase::Pending => "Pending",
            SyncPhase::Running => "Running",
            SyncPhase::Suspended => "Suspended",
            SyncPhase::Degraded => "Degraded",
            SyncPhase::Failed => "Failed",
            SyncPhase::Rebuilding => "Rebuilding",
        }
    }
}

impl std::fmt::Display for SyncPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlotStatus {
    /// The slot's number, 0 to `parallelism` - 1.
    pub slot: u32,
    /// The last snapshot the slot has written whole (its checkpoint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<i64>,
    /// Snapshots committed after `snapshotId`, as the slot last saw the table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_snapshots: Option<i64>,
    /// When the slot last wrote its checkpoint (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_checkpoint_time: Option<String>,
    /// How often the kubelet restarted this slot's worker container (a crash, an OOM kill, a
    /// liveness check failed by a stalled worker), in its current pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restarts: Option<i32>,
    /// While the slot's full read is under way: the rows its last checkpoint covers, and the
    /// rows its snapshot's files hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_read: Option<crate::contract::FullReadProgress>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phase_serializes_as_before() {
        let status = PaimonMysqlSyncStatus {
            phase: Some(SyncPhase::Running),
            ..Default::default()
        };
        let json = serde_json::to_value(&status).unwrap();
        assert_eq!(json["phase"], "Running");
        for phase in [
            SyncPhase::Pending,
            SyncPhase::Running,
            SyncPhase::Suspended,
            SyncPhase::Degraded,
            SyncPhase::Failed,
            SyncPhase::Rebuilding,
        ] {
            let text = serde_json::to_string(&phase).unwrap();
            assert_eq!(text, format!("\"{phase}\""));
            assert_eq!(serde_json::from_str::<SyncPhase>(&text).unwrap(), phase);
        }
    }
}
