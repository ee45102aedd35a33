//! Step 5 (pure): the status, from what the cluster shows: Deployments (readiness) and the
//! workers' checkpoints (progress). The inputs are fetched by the earlier steps.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use pms_crds::contract::Checkpoint;

use super::jobs::{verified_message, JobFacts, JobPlan};
use pms_crds::{
    PaimonMysqlSync, PaimonMysqlSyncStatus, RescalePhase, RescaleStatus, SlotStatus,
    SyncPhase as Phase, SyncState,
};

/// `deployments[k]` and `checkpoints[k]` are slot k's (None when absent); `jobs`, the
/// rebuild and verify as decided this reconcile (none for an invalid sync: they stay as they were);
/// `rescale`, the restart at a cut as decided this reconcile.
pub fn compute(
    pms: &PaimonMysqlSync,
    deployments: &[Option<Deployment>],
    checkpoints: &[Option<&Checkpoint>],
    failure: Option<&str>,
    previous: Option<&PaimonMysqlSyncStatus>,
    jobs: Option<(&JobPlan, &JobFacts)>,
    rescale: Option<&RescaleStatus>,
) -> PaimonMysqlSyncStatus {
    let slots = pms.spec.parallelism;
    let deployments: Vec<&Deployment> = deployments.iter().flatten().collect();
    let is_ready = |d: &&&Deployment| {
        d.status
            .as_ref()
            .and_then(|s| s.ready_replicas)
            .unwrap_or(0)
            >= 1
    };
    let ready = deployments.iter().filter(is_ready).count() as u32;
    let starting = deployments
        .iter()
        .filter(|d| !is_ready(d) && rolling_out(d))
        .count() as u32;
    let running_replicas: i32 = deployments
        .iter()
        .map(|d| d.status.as_ref().and_then(|s| s.replicas).unwrap_or(0))
        .sum();
    let mut progress = progress(slots, checkpoints);
    if let Some((_, facts)) = jobs {
        for slot in &mut progress.slots {
            slot.restarts = facts.worker_restarts.get(&slot.slot).copied();
        }
    }
    let rescaling =
        rescale.filter(|r| matches!(r.phase, RescalePhase::Cutting | RescalePhase::Starting));
    let rebuilding = jobs.is_some_and(|(plan, _)| plan.workers_stopped);
    let phase = if failure.is_some() {
        Phase::Failed
    } else if rebuilding {
        Phase::Rebuilding
    } else if pms.spec.state == SyncState::Suspended {
        if running_replicas == 0 {
            Phase::Suspended
        } else {
            Phase::Pending
        }
    } else if ready == slots
        || (previous.and_then(|p| p.phase) == Some(Phase::Running)
            && (rescaling.is_some() || ready + starting == slots))
    {
        // A rescale, an upgrade or a config change stops and starts slots on purpose: still
        // Running (`Progressing` says so), not a Degraded flap and a Warning each time.
        Phase::Running
    } else if previous.and_then(|p| p.phase) == Some(Phase::Running) || (ready > 0 && ready < slots)
    {
        Phase::Degraded
    } else {
        Phase::Pending
    };
    // A worker that stopped on an error says why (a crash-looping pod is otherwise only
    // "not ready").
    let worker_failure = jobs
        .and_then(|(_, found)| found.worker_failures.first())
        .filter(|_| matches!(phase, Phase::Pending | Phase::Running | Phase::Degraded))
        .map(|(slot, f)| format!("slot {slot} stopped at {}: {}", f.at, f.message));
    // A rebuild or restore that failed keeps the workers stopped (the old generation must not
    // write beside a half-built one): an outage until someone acts, so Degraded (the alert and
    // the Argo CD health follow the phase), with what failed and how to go on.
    let job_failure = jobs.and_then(|(plan, _)| plan.failure());
    let phase = if worker_failure.is_some() || job_failure.is_some() {
        Phase::Degraded
    } else {
        phase
    };
    let facts = Facts {
        pms,
        phase,
        ready,
        failure: failure.unwrap_or_default(),
        progress: &progress,
        rescaling,
        previous: previous
            .map(|p| p.conditions.as_slice())
            .unwrap_or_default(),
    };
    let mut conditions = facts.conditions();
    let degraded_by = job_failure.or(worker_failure.map(|why| ("WorkerFailed", why)));
    if let Some((reason, why)) = degraded_by {
        for c in conditions.iter_mut().filter(|c| c.type_ == "Degraded") {
            *c = facts.condition("Degraded", true, reason, why.clone());
        }
    }
    let (rebuild, restore, verify) = match jobs {
        Some((plan, found)) => {
            conditions.extend(facts.job_conditions(plan, found));
            (
                plan.rebuild.clone(),
                plan.restore.clone(),
                plan.verify.clone(),
            )
        }
        None => (
            previous.and_then(|p| p.rebuild.clone()),
            previous.and_then(|p| p.restore.clone()),
            previous.and_then(|p| p.verify.clone()),
        ),
    };
    PaimonMysqlSyncStatus {
        observed_generation: pms.metadata.generation,
        phase: Some(phase),
        snapshot_id: progress.snapshot_id,
        lag_snapshots: progress.lag,
        ready_slots: ready,
        slots_ready: Some(format!("{ready}/{slots}")),
        conditions,
        slots: progress.slots,
        rebuild,
        restore,
        verify,
        savepoints: previous.and_then(|p| p.savepoints.clone()),
        parallelism: previous.and_then(|p| p.parallelism),
        rescale: rescale.cloned(),
        restart_key: previous.and_then(|p| p.restart_key.clone()),
        last_stable_spec: previous.and_then(|p| p.last_stable_spec.clone()),
        rollback: previous.and_then(|p| p.rollback.clone()),
    }
}

/// A sync rolled back (`spec.rollback`) runs, but not the spec asked for: `Degraded` is True
/// (reason `RolledBack`, with `status.rollback`'s message) unless something worse holds it
/// already (a worker's error says more).
pub fn rolled_back(
    status: &mut PaimonMysqlSyncStatus,
    previous: Option<&PaimonMysqlSyncStatus>,
    why: &str,
) {
    let since = previous
        .into_iter()
        .flat_map(|p| &p.conditions)
        .find(|c| c.type_ == "Degraded" && c.status == "True")
        .map(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| Time(k8s_openapi::jiff::Timestamp::now()));
    for c in status
        .conditions
        .iter_mut()
        .filter(|c| c.type_ == "Degraded" && c.status != "True")
    {
        c.status = "True".into();
        c.reason = "RolledBack".into();
        c.message = why.into();
        c.last_transition_time = since.clone();
    }
}

/// `PreflightPassed`: what slot 0's `pms-worker check` found at its last start; the failing
/// items (or the warnings) in the message.
fn preflight_condition(facts: &Facts, p: &pms_crds::contract::PreflightReport) -> Condition {
    let counts = format!(
        "{} passed, {} warnings, {} failed at {}",
        p.passed, p.warnings, p.failed, p.at
    );
    if p.failed > 0 {
        let message = format!("{counts}: {}", p.failures.join("; "));
        facts.condition("PreflightPassed", false, "ChecksFailed", message)
    } else if p.warnings > 0 {
        let message = format!("{counts}: {}", p.warning_items.join("; "));
        facts.condition("PreflightPassed", true, "PassedWithWarnings", message)
    } else {
        facts.condition("PreflightPassed", true, "AllChecksPassed", counts)
    }
}

/// A Deployment whose current template runs, ready (its controller saw the last change of
/// it, and the pod of that template is ready): a restart is over.
pub fn rolled_out(d: &Deployment) -> bool {
    let Some(status) = &d.status else {
        return false;
    };
    status.observed_generation >= d.metadata.generation
        && status.updated_replicas.unwrap_or(0) >= 1
        && status.ready_replicas.unwrap_or(0) >= 1
}

/// A Deployment whose new pods are still coming up after a change of its template (a planned
/// restart), as opposed to one whose pod went away or crash-loops (its rollout is over, or out
/// of time).
fn rolling_out(d: &Deployment) -> bool {
    let Some(status) = &d.status else {
        return true;
    };
    if status.observed_generation < d.metadata.generation {
        return true;
    }
    let progressing = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "Progressing");
    progressing.is_some_and(|c| {
        c.status == "True"
            && matches!(
                c.reason.as_deref(),
                Some("ReplicaSetUpdated" | "NewReplicaSetCreated" | "FoundNewReplicaSet")
            )
    })
}

/// How far the current slots got.
struct Progress {
    slots: Vec<SlotStatus>,
    /// Every slot has written at least one snapshot whole.
    all_checkpointed: bool,
    /// The lowest snapshot every slot has written whole.
    snapshot_id: Option<i64>,
    lag: Option<i64>,
}

fn progress(slots: u32, checkpoints: &[Option<&Checkpoint>]) -> Progress {
    // Only checkpoints written for the current parallelism describe the current slots, and
    // only those past their full read say which snapshot is written whole.
    let current: Vec<Option<&Checkpoint>> = checkpoints
        .iter()
        .map(|c| c.filter(|c| c.slot.count == slots))
        .collect();
    let slot_status: Vec<SlotStatus> = (0..slots as usize)
        .map(|k| {
            let cp = current.get(k).copied().flatten();
            let done = cp.and_then(|c| Some((c, c.point.done_through()?)));
            SlotStatus {
                slot: k as u32,
                snapshot_id: done.map(|(_, done)| done),
                lag_snapshots: done
                    .and_then(|(c, done)| c.latest_snapshot.map(|l| (l - done).max(0))),
                last_checkpoint_time: cp.map(|c| c.updated.clone()),
                restarts: None,
                full_read: cp
                    .filter(|c| c.point.is_full_read())
                    .and_then(|c| c.full_read),
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
        .filter(|c| c.point.done_through().is_some())
        .filter_map(|c| c.latest_snapshot)
        .max();
    let lag = match (snapshot_id, latest) {
        (Some(s), Some(l)) => Some((l - s).max(0)),
        _ => None,
    };
    Progress {
        slots: slot_status,
        all_checkpointed,
        snapshot_id,
        lag,
    }
}

/// What the conditions are made of.
struct Facts<'a> {
    pms: &'a PaimonMysqlSync,
    phase: Phase,
    ready: u32,
    failure: &'a str,
    progress: &'a Progress,
    /// A restart at a cut under way.
    rescaling: Option<&'a RescaleStatus>,
    previous: &'a [Condition],
}

impl Facts<'_> {
    /// `Ready`, `Progressing` and `Degraded`, in that order.
    fn conditions(&self) -> Vec<Condition> {
        let slots = self.pms.spec.parallelism;
        let ready = format!("{}/{slots} slots ready", self.ready);
        let ready_cond = match self.phase {
            Phase::Running if self.ready < slots => {
                self.condition("Ready", true, "SlotsRestarting", ready.clone())
            }
            Phase::Running => self.condition("Ready", true, "AllSlotsReady", ready.clone()),
            Phase::Suspended => self.condition(
                "Ready",
                false,
                "Suspended",
                "spec.state is suspended".into(),
            ),
            Phase::Failed => self.condition("Ready", false, "InvalidSpec", self.failure.into()),
            Phase::Rebuilding => self.condition(
                "Ready",
                false,
                "Rebuilding",
                "a rebuild or restore runs instead of the workers (status.rebuild, status.restore)"
                    .into(),
            ),
            _ => self.condition("Ready", false, "SlotsNotReady", ready.clone()),
        };
        let p = self.progress;
        let progressing = matches!(self.phase, Phase::Pending)
            || p.lag.is_some_and(|l| l > 0)
            || !p.all_checkpointed;
        let progressing_cond = match self.rescaling {
            None if self.phase == Phase::Running && self.ready < slots => self.condition(
                "Progressing",
                true,
                "SlotsRestarting",
                format!("{ready}: the others are starting after a change"),
            ),
            Some(r) if self.phase == Phase::Running => self.condition(
                "Progressing",
                true,
                "Rescaling",
                format!(
                    "restarting {} → {} slots at a cut ({}, {:?})",
                    r.from, r.to, r.reason, r.phase
                ),
            ),
            _ => self.condition(
                "Progressing",
                progressing
                    && !matches!(
                        self.phase,
                        Phase::Failed | Phase::Suspended | Phase::Rebuilding
                    ),
                if p.all_checkpointed {
                    "CatchingUp"
                } else {
                    "WaitingForCheckpoints"
                },
                match (p.snapshot_id, p.lag) {
                    (Some(s), Some(l)) => format!("at snapshot {s}, {l} behind"),
                    _ => "not every slot has checkpointed yet".into(),
                },
            ),
        };
        let degraded_cond = match self.phase {
            Phase::Degraded => self.condition("Degraded", true, "SlotsNotReady", ready),
            Phase::Failed => self.condition("Degraded", true, "InvalidSpec", self.failure.into()),
            _ => self.condition("Degraded", false, "AsExpected", String::new()),
        };
        vec![ready_cond, progressing_cond, degraded_cond]
    }

    /// `RebuildRequired` (a worker stopped and only a rebuild can go on; not while one runs)
    /// and `Verified` (the last periodic verify), each only when it has something to say.
    fn job_conditions(&self, plan: &JobPlan, found: &JobFacts) -> Vec<Condition> {
        let mut out = Vec::new();
        if let Some(p) = &found.preflight {
            out.push(preflight_condition(self, p));
        }
        if let Some((slot, note)) = found
            .rebuild_required
            .first()
            .filter(|_| !plan.workers_stopped)
        {
            out.push(self.condition(
                "RebuildRequired",
                true,
                "WorkerStopped",
                format!(
                    "slot {slot} stopped ({}): {} — change spec.rebuild.trigger to rebuild (or set spec.rebuild.policy: auto)",
                    note.reason.as_str(),
                    note.message
                ),
            ));
        }
        if let Some(why) = plan.refusal() {
            out.push(self.condition("RestoreRefused", true, "RestoreRefused", why));
        }
        if let Some(v) = &plan.verify {
            let cond = match (&v.error, &v.result) {
                (Some(e), _) => {
                    self.condition_status("Verified", "Unknown", "VerifyFailed", e.clone())
                }
                (None, Some(r)) => self.condition(
                    "Verified",
                    r.divergent_rows() == 0,
                    if r.divergent_rows() == 0 {
                        "Equal"
                    } else {
                        "Divergent"
                    },
                    verified_message(r),
                ),
                (None, None) => self.condition_status(
                    "Verified",
                    "Unknown",
                    "Verifying",
                    "the first verify runs".into(),
                ),
            };
            out.push(cond);
        }
        out
    }

    fn condition(&self, type_: &str, ok: bool, reason: &str, message: String) -> Condition {
        self.condition_status(type_, if ok { "True" } else { "False" }, reason, message)
    }

    fn condition_status(
        &self,
        type_: &str,
        status: &str,
        reason: &str,
        message: String,
    ) -> Condition {
        // Keep the transition time while the status doesn't change.
        let since = self
            .previous
            .iter()
            .find(|c| c.type_ == type_ && c.status == status)
            .map(|c| c.last_transition_time.clone())
            .unwrap_or_else(|| Time(k8s_openapi::jiff::Timestamp::now()));
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message,
            last_transition_time: since,
            observed_generation: self.pms.metadata.generation,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::DeploymentStatus;
    use kube::api::ObjectMeta;
    use pms_crds::contract::{Position, ReadPoint, Slot};

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

    /// Slot `slot` of `slots` has written every change through snapshot `done`.
    fn cp(slot: u32, slots: u32, done: i64, latest: i64) -> Checkpoint {
        at(
            slot,
            slots,
            ReadPoint::Changes {
                next_snapshot: done + 1,
                at: Position::START,
            },
            latest,
        )
    }

    fn at(slot: u32, slots: u32, point: ReadPoint, latest: i64) -> Checkpoint {
        Checkpoint {
            sync: "s".into(),
            slot: Slot::new(slot, slots).unwrap(),
            point,
            epoch: 1,
            updated: "t".into(),
            latest_snapshot: Some(latest),
            rescaled_from: None,
            paused_for: None,
            belongs_to: None,
            sweep: false,
            full_read: None,
        }
    }

    #[test]
    fn running_with_min_snapshot_and_lag() {
        let s = compute(
            &pms(2),
            &[ready_deployment(1), ready_deployment(1)],
            &[Some(&cp(0, 2, 7, 9)), Some(&cp(1, 2, 5, 9))],
            None,
            None,
            None,
            None,
        );
        assert_eq!(s.phase, Some(Phase::Running));
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
            phase: Some(Phase::Running),
            ..Default::default()
        };
        let s = compute(
            &pms(3),
            &[ready_deployment(1), ready_deployment(0), None],
            &[Some(&cp(0, 2, 7, 9)), Some(&cp(1, 3, 8, 9)), None],
            None,
            Some(&prev),
            None,
            None,
        );
        assert_eq!(s.phase, Some(Phase::Degraded));
        assert_eq!(s.snapshot_id, None);
        assert_eq!(s.slots[0].snapshot_id, None);
        assert_eq!(s.slots[1].snapshot_id, Some(8));
        assert_eq!(s.slots_ready.as_deref(), Some("1/3"));
    }

    #[test]
    fn a_rescale_at_a_cut_keeps_running_and_says_rescaling() {
        let prev = PaimonMysqlSyncStatus {
            phase: Some(Phase::Running),
            ..Default::default()
        };
        let rescale = RescaleStatus {
            id: "r1".into(),
            reason: "parallelism".into(),
            from: 2,
            to: 3,
            phase: RescalePhase::Starting,
            snapshot_id: Some(7),
            cut_epochs: vec![],
            started_at: "t".into(),
            took: None,
            message: None,
        };
        let s = compute(
            &pms(3),
            &[ready_deployment(1), ready_deployment(0), None],
            &[None, None, None],
            None,
            Some(&prev),
            None,
            Some(&rescale),
        );
        assert_eq!(s.phase, Some(Phase::Running), "no Degraded flap");
        let find = |t: &str| s.conditions.iter().find(|c| c.type_ == t).unwrap();
        assert_eq!(find("Progressing").reason, "Rescaling");
        assert_eq!(find("Degraded").status, "False");
        assert_eq!(s.rescale.as_ref(), Some(&rescale));
        // Once the rescale is over, missing slots degrade again.
        let done = RescaleStatus {
            phase: RescalePhase::Done,
            ..rescale
        };
        let s = compute(
            &pms(3),
            &[ready_deployment(1), ready_deployment(0), None],
            &[None, None, None],
            None,
            Some(&prev),
            None,
            Some(&done),
        );
        assert_eq!(s.phase, Some(Phase::Degraded));
    }

    #[test]
    fn a_slot_rolling_out_after_a_change_is_not_degraded_but_a_lost_pod_is() {
        use k8s_openapi::api::apps::v1::DeploymentCondition;
        let prev = PaimonMysqlSyncStatus {
            phase: Some(Phase::Running),
            ..Default::default()
        };
        let with_progress = |reason: &str| {
            let mut d = ready_deployment(0).unwrap();
            d.status.as_mut().unwrap().conditions = Some(vec![DeploymentCondition {
                type_: "Progressing".into(),
                status: "True".into(),
                reason: Some(reason.into()),
                ..Default::default()
            }]);
            Some(d)
        };
        let phase = |d: Option<Deployment>| {
            compute(
                &pms(2),
                &[ready_deployment(1), d],
                &[None, None],
                None,
                Some(&prev),
                None,
                None,
            )
            .phase
        };
        assert_eq!(
            phase(with_progress("ReplicaSetUpdated")),
            Some(Phase::Running)
        );
        assert_eq!(
            phase(with_progress("NewReplicaSetAvailable")),
            Some(Phase::Degraded)
        );
        assert_eq!(
            phase(with_progress("ProgressDeadlineExceeded")),
            Some(Phase::Degraded)
        );
    }

    #[test]
    fn a_restart_is_over_once_the_new_template_runs_ready() {
        let deployment = |generation: i64, observed: i64, updated: i32, ready: i32| Deployment {
            metadata: ObjectMeta {
                generation: Some(generation),
                ..Default::default()
            },
            status: Some(DeploymentStatus {
                observed_generation: Some(observed),
                updated_replicas: Some(updated),
                ready_replicas: Some(ready),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(rolled_out(&deployment(2, 2, 1, 1)));
        // The old pod still ready, the change not seen yet: not over.
        assert!(!rolled_out(&deployment(2, 1, 1, 1)));
        assert!(!rolled_out(&deployment(2, 2, 0, 1)));
        assert!(!rolled_out(&deployment(2, 2, 1, 0)));
        assert!(!rolled_out(&Deployment::default()));
    }

    #[test]
    fn a_worker_that_stopped_on_an_error_degrades_the_sync_and_says_why() {
        use super::super::jobs::{JobFacts, JobPlan};
        let found = JobFacts {
            worker_failures: vec![(
                1,
                pms_crds::contract::WorkerFailure {
                    message: "MySQL connection to mysql://u@h/db: Access denied".into(),
                    at: "2026-11-30T10:00:00Z".into(),
                },
            )],
            worker_restarts: std::collections::BTreeMap::from([(1, 3)]),
            ..Default::default()
        };
        let s = compute(
            &pms(2),
            &[ready_deployment(1), ready_deployment(0)],
            &[None, None],
            None,
            None,
            Some((&JobPlan::default(), &found)),
            None,
        );
        assert_eq!(s.phase, Some(Phase::Degraded));
        // The kubelet's restarts of each slot's worker are in the status.
        let restarts: Vec<_> = s.slots.iter().map(|k| k.restarts).collect();
        assert_eq!(restarts, [None, Some(3)]);
        let degraded = s.conditions.iter().find(|c| c.type_ == "Degraded").unwrap();
        assert_eq!(
            (degraded.status.as_str(), degraded.reason.as_str()),
            ("True", "WorkerFailed")
        );
        assert!(degraded
            .message
            .starts_with("slot 1 stopped at 2026-11-30T10:00:00Z: MySQL connection"));
    }

    /// A failed rebuild keeps the workers stopped: the sync is Degraded (so the alert fires
    /// and Argo CD shows it), saying what failed and how to go on, not Rebuilding forever.
    #[test]
    fn a_failed_rebuild_or_restore_degrades_the_sync_and_says_how_to_go_on() {
        use super::super::jobs::{JobFacts, JobPlan};
        let failed = pms_crds::RebuildStatus {
            id: "r1".into(),
            trigger: Some("first".into()),
            reason: "trigger".into(),
            phase: pms_crds::contract::RebuildPhase::Failed,
            progress: None,
            snapshot_id: None,
            started_at: "2026-11-30T10:00:00Z".into(),
            finished_at: Some("2026-11-30T10:05:00Z".into()),
            message: Some("the rebuild Job failed in phase Loading".into()),
        };
        for (plan, reason, how) in [
            (
                JobPlan {
                    rebuild: Some(failed.clone()),
                    workers_stopped: true,
                    ..Default::default()
                },
                "RebuildFailed",
                "spec.rebuild.trigger",
            ),
            (
                JobPlan {
                    // A restore that started (it has its snapshot) and failed.
                    restore: Some(pms_crds::RebuildStatus {
                        snapshot_id: Some(7),
                        ..failed.clone()
                    }),
                    workers_stopped: true,
                    ..Default::default()
                },
                "RestoreFailed",
                "spec.restoreFrom",
            ),
        ] {
            let s = compute(
                &pms(1),
                &[None],
                &[None],
                None,
                None,
                Some((&plan, &JobFacts::default())),
                None,
            );
            assert_eq!(s.phase, Some(Phase::Degraded), "{reason}");
            let degraded = s.conditions.iter().find(|c| c.type_ == "Degraded").unwrap();
            assert_eq!(
                (degraded.status.as_str(), degraded.reason.as_str()),
                ("True", reason)
            );
            assert!(
                degraded.message.contains(how) && degraded.message.contains("phase Loading"),
                "{}",
                degraded.message
            );
        }
    }

    #[test]
    fn failure_wins() {
        let s = compute(
            &pms(1),
            &[ready_deployment(1)],
            &[Some(&cp(0, 1, 1, 1))],
            Some("Secret x does not exist"),
            None,
            None,
            None,
        );
        assert_eq!(s.phase, Some(Phase::Failed));
        assert!(s.conditions.iter().any(|c| c.type_ == "Degraded"
            && c.status == "True"
            && c.message.contains("Secret x")));
    }

    #[test]
    fn a_slot_counts_the_snapshots_it_wrote_whole() {
        let full_read = ReadPoint::FullRead {
            snapshot_id: 6,
            at: Some(Position {
                split: 1,
                row: 2,
                ..Position::START
            }),
        };
        // Inside snapshot 8: only 7 is written whole.
        let inside = ReadPoint::Changes {
            next_snapshot: 8,
            at: Position {
                split: 0,
                row: 5,
                ..Position::START
            },
        };
        let (mut a, b) = (at(0, 2, full_read, 9), at(1, 2, inside, 9));
        let rows = pms_crds::contract::FullReadProgress {
            rows: 300,
            expected_rows: 1000,
        };
        a.full_read = Some(rows);
        let s = compute(
            &pms(2),
            &[ready_deployment(1), ready_deployment(1)],
            &[Some(&a), Some(&b)],
            None,
            None,
            None,
            None,
        );
        assert_eq!(
            s.slots[0].snapshot_id, None,
            "a full read has written no snapshot whole"
        );
        assert_eq!(
            (s.slots[0].full_read, s.slots[1].full_read),
            (Some(rows), None),
            "the full read's rows are shown while it is under way"
        );
        assert_eq!(s.slots[0].last_checkpoint_time.as_deref(), Some("t"));
        assert_eq!(
            (s.slots[1].snapshot_id, s.slots[1].lag_snapshots),
            (Some(7), Some(2))
        );
        assert_eq!((s.snapshot_id, s.lag_snapshots), (None, None));
        assert_eq!(s.conditions[1].reason, "WaitingForCheckpoints");
    }
}
