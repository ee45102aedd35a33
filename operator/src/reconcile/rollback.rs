//! `spec.rollback` (opt-in), decided without side effects: a new spec whose workers do not run
//! ready within `readinessTimeout` is replaced by the last spec that did
//! (`status.lastStableSpec`), as the Flink Kubernetes Operator rolls a job back. Going back is
//! the edit a user would make by hand: the Deployments get the old worker config and pod
//! template, and each slot restarts from its own checkpoint (exact: a worker checkpoints only
//! what it committed). It lasts until the spec changes again.
//!
//! Only what the workers run goes back (`source`, `sink`, `checkpoint`, `workerPod`). What a
//! user asks the operator to do stays as asked: `state`, `parallelism` (a rescale has its own
//! cut and timeout), the one-shot triggers, `verify`, `savepoint`, `upgradeMode`,
//! `restartNonce` and `rollback` itself.

use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::runtime::events::EventType;
use pms_crds::{PaimonMysqlSync, PaimonMysqlSyncSpec, RollbackPhase, RollbackStatus, StableSpec};

use super::time::seconds;

#[derive(Debug, PartialEq)]
pub struct RollbackPlan {
    /// The spec to build from when rolled back (else the resource's own).
    pub spec: Option<PaimonMysqlSyncSpec>,
    pub status: Option<RollbackStatus>,
    pub events: Vec<(EventType, &'static str, String)>,
    /// When to look again at the latest: when the new spec's time is up.
    pub recheck: Option<Duration>,
}

impl RollbackPlan {
    fn none() -> Self {
        Self {
            spec: None,
            status: None,
            events: Vec::new(),
            recheck: None,
        }
    }

    pub fn rolled_back(&self) -> bool {
        self.spec.is_some()
    }
}

/// `clock_stopped`: the sync is suspended, rebuilding or cutting for a rescale, so its
/// workers can't show yet whether the new spec runs.
pub fn plan(pms: &PaimonMysqlSync, clock_stopped: bool, now: Timestamp) -> RollbackPlan {
    let (Some(config), Some(generation)) = (&pms.spec.rollback, pms.metadata.generation) else {
        return RollbackPlan::none();
    };
    let status = pms.status.as_ref();
    let Some(stable) = status.and_then(|s| s.last_stable_spec.as_ref()) else {
        return RollbackPlan::none();
    };
    if stable.generation == generation {
        return RollbackPlan::none();
    }
    let back = match serde_json::from_str::<PaimonMysqlSyncSpec>(&stable.spec) {
        Ok(old) => going_back(old, &pms.spec),
        Err(e) => {
            // Written by another operator version, say: nothing safe to go back to.
            let message = format!(
                "status.lastStableSpec (generation {}) can't be read ({e}): no rollback",
                stable.generation
            );
            return RollbackPlan {
                status: Some(watch(generation, RollbackPhase::Waiting, now, message)),
                ..RollbackPlan::none()
            };
        }
    };
    if back == pms.spec {
        // Nothing the workers run changed: nothing to go back to.
        return RollbackPlan::none();
    }
    let previous = status
        .and_then(|s| s.rollback.as_ref())
        .filter(|r| r.generation == generation);
    if let Some(r) = previous.filter(|r| r.phase == RollbackPhase::RolledBack) {
        return RollbackPlan {
            spec: Some(back),
            status: Some(r.clone()),
            ..RollbackPlan::none()
        };
    }
    let since = previous
        .filter(|_| !clock_stopped)
        .and_then(|r| r.since.parse::<Timestamp>().ok())
        .unwrap_or(now);
    let timeout = config.readiness_timeout.0;
    let waited = Duration::try_from(now.duration_since(since)).unwrap_or_default();
    if waited <= timeout || clock_stopped {
        let message = format!(
            "generation {generation} has until {} to run ready, else it goes back to generation {}",
            SignedDuration::try_from(timeout)
                .ok()
                .and_then(|t| since.checked_add(t).ok())
                .map_or_else(|| "never".to_string(), seconds),
            stable.generation
        );
        return RollbackPlan {
            status: Some(RollbackStatus {
                since: seconds(since),
                ..watch(generation, RollbackPhase::Waiting, now, message)
            }),
            // A second past the deadline (the status keeps whole seconds).
            recheck: Some(timeout.saturating_sub(waited) + Duration::from_secs(1)),
            ..RollbackPlan::none()
        };
    }
    let message = format!(
        "generation {generation} did not run ready within {}s: back to generation {}'s spec \
         (status.lastStableSpec), each slot from its checkpoint; change the spec to try again",
        timeout.as_secs(),
        stable.generation
    );
    RollbackPlan {
        spec: Some(back),
        status: Some(RollbackStatus {
            since: seconds(since),
            ..watch(generation, RollbackPhase::RolledBack, now, message.clone())
        }),
        events: vec![(EventType::Warning, "RolledBack", message)],
        recheck: None,
    }
}

fn watch(generation: i64, phase: RollbackPhase, now: Timestamp, message: String) -> RollbackStatus {
    RollbackStatus {
        generation,
        phase,
        since: seconds(now),
        message: Some(message),
    }
}

/// `old` with what the user asks of the operator taken from `now` (see the module's comment).
fn going_back(old: PaimonMysqlSyncSpec, now: &PaimonMysqlSyncSpec) -> PaimonMysqlSyncSpec {
    PaimonMysqlSyncSpec {
        parallelism: now.parallelism,
        state: now.state,
        rebuild: now.rebuild.clone(),
        verify: now.verify.clone(),
        savepoint: now.savepoint.clone(),
        restore_from: now.restore_from.clone(),
        upgrade_mode: now.upgrade_mode,
        restart_nonce: now.restart_nonce.clone(),
        rollback: now.rollback.clone(),
        ..old
    }
}

/// What `status.lastStableSpec` and `status.rollback` become after this reconcile: once the
/// sync ran ready with the resource's own spec, that spec is the stable one and nothing is
/// watched any more (while rolled back the old spec runs, which is the stable one already).
/// Kept only with `spec.rollback` on.
pub fn record(
    pms: &PaimonMysqlSync,
    plan: RollbackPlan,
    ran_ready: bool,
) -> (Option<StableSpec>, Option<RollbackStatus>) {
    if pms.spec.rollback.is_none() {
        return (None, None);
    }
    let previous = pms.status.as_ref().and_then(|s| s.last_stable_spec.clone());
    match (ran_ready && !plan.rolled_back(), pms.metadata.generation) {
        (true, Some(generation)) => {
            let spec = serde_json::to_string(&pms.spec).unwrap_or_default();
            (Some(StableSpec { generation, spec }), None)
        }
        _ => (previous, plan.status),
    }
}

#[cfg(test)]
mod tests;
