//! `status` of a `PaimonMysqlSync`, written by the operator.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaimonMysqlSyncStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<SyncPhase>,
    /// Lowest snapshot every slot has checkpointed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_snapshots: Option<i64>,
    #[serde(default)]
    pub ready_slots: u32,
    /// `ready/total`, for `kubectl get pms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slots_ready: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slots: Vec<SlotStatus>,
    /// `Ready`, `Progressing` and `Degraded`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
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
}

impl SyncPhase {
    pub fn as_str(self) -> &'static str {
        match self {
            SyncPhase::Pending => "Pending",
            SyncPhase::Running => "Running",
            SyncPhase::Suspended => "Suspended",
            SyncPhase::Degraded => "Degraded",
            SyncPhase::Failed => "Failed",
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
    pub slot: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_snapshots: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_checkpoint_time: Option<String>,
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
        ] {
            let text = serde_json::to_string(&phase).unwrap();
            assert_eq!(text, format!("\"{phase}\""));
            assert_eq!(serde_json::from_str::<SyncPhase>(&text).unwrap(), phase);
        }
    }
}
