//! The status, from what the cluster shows: Deployments (readiness) and the workers'
//! checkpoint ConfigMaps (progress). Pure: the inputs are fetched by the caller.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use pms_crds::{PaimonMysqlSync, PaimonMysqlSyncStatus, SlotStatus, SyncState};
use serde::Deserialize;

use super::names::CHECKPOINT_KEY;

/// The part of a worker checkpoint the status needs.
#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct SlotCheckpoint {
    pub slots: u32,
    pub snapshot_id: i64,
    pub phase: String,
    pub updated: String,
    #[serde(default)]
    pub latest_snapshot: Option<i64>,
}

pub fn parse_checkpoint(cm: &ConfigMap) -> Option<SlotCheckpoint> {
    serde_json::from_str(cm.data.as_ref()?.get(CHECKPOINT_KEY)?).ok()
}

pub enum Phase {
    Pending,
    Running,
    Suspended,
    Degraded,
    Failed,
}

impl Phase {
    pub fn as_str(&self) -> &'static str {
        match self {
            Phase::Pending => "Pending",
            Phase::Running => "Running",
            Phase::Suspended => "Suspended",
            Phase::Degraded => "Degraded",
            Phase::Failed => "Failed",
        }
    }
}

/// `deployments[k]` and `checkpoints[k]` are slot k's (None when absent).
pub fn compute(
    pms: &PaimonMysqlSync,
    deployments: &[Option<Deployment>],
    checkpoints: &[Option<SlotCheckpoint>],
    failure: Option<&str>,
    previous: Option<&PaimonMysqlSyncStatus>,
) -> PaimonMysqlSyncStatus {
    let slots = pms.spec.parallelism;
    let ready = deployments
        .iter()
        .flatten()
        .filter(|d| {
            d.status
                .as_ref()
                .and_then(|s| s.ready_replicas)
                .unwrap_or(0)
                >= 1
        })
        .count() as u32;
    let running_replicas: i32 = deployments
        .iter()
        .flatten()
        .map(|d| d.status.as_ref().and_then(|s| s.replicas).unwrap_or(0))
        .sum();
    // Only checkpoints written for the current parallelism describe the current slots.
    let current: Vec<Option<&SlotCheckpoint>> = checkpoints
        .iter()
        .map(|c| {
            c.as_ref()
                .filter(|c| c.slots == slots && c.phase == "incremental")
        })
        .collect();
    let slot_status: Vec<SlotStatus> = (0..slots as usize)
        .map(|k| {
            let cp = current.get(k).copied().flatten();
            SlotStatus {
                slot: k as u32,
                snapshot_id: cp.map(|c| c.snapshot_id),
                lag_snapshots: cp
                    .and_then(|c| c.latest_snapshot.map(|l| (l - c.snapshot_id).max(0))),
                last_checkpoint_time: cp.map(|c| c.updated.clone()),
            }
        })
        .collect();
    let all_checkpointed = slot_status.iter().all(|s| s.snapshot_id.is_some());
    let snapshot_id = if all_checkpointed {
        slot_status.iter().filter_map(|s| s.snapshot_id).min()
    } else {
        None
    };
    let latest = current
        .iter()
        .flatten()
        .filter_map(|c| c.latest_snapshot)
        .max();
    let lag = match (snapshot_id, latest) {
        (Some(s), Some(l)) => Some((l - s).max(0)),
        _ => None,
    };
    let phase = if failure.is_some() {
        Phase::Failed
    } else if pms.spec.state == SyncState::Suspended {
        if running_replicas == 0 {
            Phase::Suspended
        } else {
            Phase::Pending
        }
    } else if ready == slots {
        Phase::Running
    } else if previous.and_then(|p| p.phase.as_deref()) == Some("Running")
        || (ready > 0 && ready < slots)
    {
        Phase::Degraded
    } else {
        Phase::Pending
    };
    let now = Time(k8s_openapi::jiff::Timestamp::now());
    let previous_conditions = previous.map(|p| p.conditions.clone()).unwrap_or_default();
    let condition = |type_: &str, ok: bool, reason: &str, message: String| {
        let status = if ok { "True" } else { "False" };
        // Keep the transition time while the status doesn't change.
        let since = previous_conditions
            .iter()
            .find(|c| c.type_ == type_ && c.status == status)
            .map(|c| c.last_transition_time.clone())
            .unwrap_or_else(|| now.clone());
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message,
            last_transition_time: since,
            observed_generation: pms.metadata.generation,
        }
    };
    let ready_cond = match &phase {
        Phase::Running => condition(
            "Ready",
            true,
            "AllSlotsReady",
            format!("{ready}/{slots} slots ready"),
        ),
        Phase::Suspended => condition(
            "Ready",
            false,
            "Suspended",
            "spec.state is suspended".into(),
        ),
        Phase::Failed => condition(
            "Ready",
            false,
            "InvalidSpec",
            failure.unwrap_or_default().to_string(),
        ),
        _ => condition(
            "Ready",
            false,
            "SlotsNotReady",
            format!("{ready}/{slots} slots ready"),
        ),
    };
    let progressing =
        matches!(phase, Phase::Pending) || lag.is_some_and(|l| l > 0) || !all_checkpointed;
    let progressing_cond = condition(
        "Progressing",
        progressing && !matches!(phase, Phase::Failed | Phase::Suspended),
        if all_checkpointed {
            "CatchingUp"
        } else {
            "WaitingForCheckpoints"
        },
        match (snapshot_id, lag) {
            (Some(s), Some(l)) => format!("at snapshot {s}, {l} behind"),
            _ => "not every slot has checkpointed yet".into(),
        },
    );
    let degraded_cond = match &phase {
        Phase::Degraded => condition(
            "Degraded",
            true,
            "SlotsNotReady",
            format!("{ready}/{slots} slots ready"),
        ),
        Phase::Failed => condition(
            "Degraded",
            true,
            "InvalidSpec",
            failure.unwrap_or_default().to_string(),
        ),
        _ => condition("Degraded", false, "AsExpected", String::new()),
    };
    PaimonMysqlSyncStatus {
        observed_generation: pms.metadata.generation,
        phase: Some(phase.as_str().into()),
        snapshot_id,
        lag_snapshots: lag,
        ready_slots: ready,
        slots_ready: Some(format!("{ready}/{slots}")),
        slots: slot_status,
        conditions: vec![ready_cond, progressing_cond, degraded_cond],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::DeploymentStatus;

    fn pms(parallelism: u32) -> PaimonMysqlSync {
        let spec = serde_yaml::from_str(&format!(
            "source: {{warehouse: /wh, database: d, table: t}}\nsink: {{url: 'mysql://h/db', table: t}}\nparallelism: {parallelism}\n"
        ))
        .unwrap();
        PaimonMysqlSync::new("s", spec)
    }

    fn ready_deployment(ready: i32) -> Option<Deployment> {
        Some(Deployment {
            status: Some(DeploymentStatus {
                ready_replicas: Some(ready),
                replicas: Some(1),
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    fn cp(slots: u32, snapshot: i64, latest: i64) -> Option<SlotCheckpoint> {
        Some(SlotCheckpoint {
            slots,
            snapshot_id: snapshot,
            phase: "incremental".into(),
            updated: "t".into(),
            latest_snapshot: Some(latest),
        })
    }

    #[test]
    fn running_with_min_snapshot_and_lag() {
        let s = compute(
            &pms(2),
            &[ready_deployment(1), ready_deployment(1)],
            &[cp(2, 7, 9), cp(2, 5, 9)],
            None,
            None,
        );
        assert_eq!(s.phase.as_deref(), Some("Running"));
        assert_eq!(
            (s.snapshot_id, s.lag_snapshots, s.ready_slots),
            (Some(5), Some(4), 2)
        );
        assert_eq!(s.slots[0].lag_snapshots, Some(2));
        assert_eq!(s.conditions[0].status, "True");
    }

    #[test]
    fn old_parallelism_checkpoints_do_not_count_and_missing_slots_degrade() {
        let prev = PaimonMysqlSyncStatus {
            phase: Some("Running".into()),
            ..Default::default()
        };
        let s = compute(
            &pms(3),
            &[ready_deployment(1), ready_deployment(0), None],
            &[cp(2, 7, 9), cp(3, 8, 9), None],
            None,
            Some(&prev),
        );
        assert_eq!(s.phase.as_deref(), Some("Degraded"));
        assert_eq!(s.snapshot_id, None);
        assert_eq!(s.slots[0].snapshot_id, None);
        assert_eq!(s.slots[1].snapshot_id, Some(8));
        assert_eq!(s.slots_ready.as_deref(), Some("1/3"));
    }

    #[test]
    fn failure_wins() {
        let s = compute(
            &pms(1),
            &[ready_deployment(1)],
            &[cp(1, 1, 1)],
            Some("Secret x does not exist"),
            None,
        );
        assert_eq!(s.phase.as_deref(), Some("Failed"));
        assert!(s.conditions.iter().any(|c| c.type_ == "Degraded"
            && c.status == "True"
            && c.message.contains("Secret x")));
    }
}
