//! The rebuild and the periodic verify, decided without side effects (part of step 3): from
//! the resource, its last status and what dereference found, the next `status.rebuild` and
//! `status.verify`, which Jobs should exist, and the events to publish.
//!
//! A rebuild: `spec.rebuild.trigger` changed (or, with `policy: auto`, a worker noted that
//! only a rebuild can go on) → `Stopping` (every slot Deployment at 0) → the Job
//! `pms-worker rebuild` runs, reporting `Loading`, `CatchingUp`, `Verifying`, `CuttingOver`
//! into `<sync>-rebuild` → `Done` (the workers start again from the new generation) or
//! `Failed` (the workers stay stopped: the old generation must not write while a new one is
//! half built; a new trigger resumes the rebuild).
//!
//! A verify: every `spec.verify.interval` while the sync is `Running` and no rebuild runs, the
//! Job `pms-worker verify --live --publish` compares MySQL with Paimon and writes what it found
//! into `<sync>-verify`.

use std::collections::BTreeMap;

use super::time::seconds;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::runtime::events::EventType;
use kube::ResourceExt;
use pms_crds::contract::{
    RebuildPhase, RebuildReport, RebuildRequired, VerifyReport, WorkerFailure,
};
use pms_crds::{
    PaimonMysqlSync, PaimonMysqlSyncSavepoint, RebuildPolicy, RebuildStatus, RestoreFrom,
    SavepointState, SavepointStatus, SyncPhase, VerifyStatus,
};

/// The annotation of a Job naming the rebuild or verify it runs (`status.rebuild.id`,
/// `status.verify.startedAt`).
pub const JOB_ID: &str = "paimonsync.io/job-id";

/// What dereference found of the jobs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobFacts {
    pub rebuild_report: Option<RebuildReport>,
    pub verify_report: Option<VerifyReport>,
    /// Notes of workers that stopped because only a rebuild can go on, by slot.
    pub rebuild_required: Vec<(u32, RebuildRequired)>,
    /// The last fatal error of workers that stopped, by slot (until their next checkpoint).
    pub worker_failures: Vec<(u32, WorkerFailure)>,
    /// Worker pods that still exist, terminating ones included (they may still write).
    pub worker_pods: i32,
    /// Restarts of each slot's worker container, by slot (see `SlotStatus::restarts`).
    pub worker_restarts: BTreeMap<u32, i32>,
    /// The id (annotation [`JOB_ID`]) of a rebuild or verify Job Kubernetes gave up on.
    pub rebuild_job_failed: Option<String>,
    pub verify_job_failed: Option<String>,
    /// The restore's report and failed Job, as the rebuild's.
    pub restore_report: Option<RebuildReport>,
    pub restore_job_failed: Option<String>,
    /// What the workers run changed and `spec.upgradeMode` is `stateless`: a rebuild, to the
    /// restart key it moves to (which names the rebuild: two operator upgrades at one
    /// generation are two rebuilds).
    pub upgrade_to: Option<String>,
    /// What slot 0 found at its last start (`PreflightPassed`).
    pub preflight: Option<pms_crds::contract::PreflightReport>,
}

/// The decision.
#[derive(Debug, Default, PartialEq)]
pub struct JobPlan {
    pub rebuild: Option<RebuildStatus>,
    /// The slot Deployments go to 0 replicas.
    pub workers_stopped: bool,
    /// The rebuild Job should exist (the workers are gone).
    pub rebuild_job: Option<String>,
    /// `spec.restoreFrom` being served.
    pub restore: Option<RebuildStatus>,
    /// The restore Job should exist: its id and snapshot.
    pub restore_job: Option<(String, i64)>,
    pub verify: Option<VerifyStatus>,
    pub verify_job: bool,
    pub events: Vec<(EventType, &'static str, String)>,
    /// The one-shot triggers served once this plan is acted on: written to the resource's
    /// [`SERVED_ANNOTATION`], after the status that records them, when it differs.
    pub served: ServedTriggers,
}

/// The annotation on a `PaimonMysqlSync` recording the one-shot triggers served
/// (`spec.rebuild.trigger`, `spec.restoreFrom`). Metadata, not status: a dropped status (a Velero
/// restore) can't make a trigger run twice. A resource created with a trigger (GitOps delete and
/// create, `kubectl replace --force`) gets it recorded as served, not run.
pub const SERVED_ANNOTATION: &str = "paimonsync.io/served-triggers";

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ServedTriggers {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebuild: Option<String>,
    /// `spec.restoreFrom` as text (`savepoint <name>`, `snapshot <id>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<String>,
}

impl ServedTriggers {
    /// What the resource's annotation records; `None` without one (or unreadable).
    pub fn of(pms: &PaimonMysqlSync) -> Option<Self> {
        pms.annotations()
            .get(SERVED_ANNOTATION)
            .and_then(|a| serde_json::from_str(a).ok())
    }
}

/// The one-shot trigger last served: the status's, else the annotation's; at the first
/// reconcile of a resource (no status, no annotation) the spec's own, so that a trigger present
/// at creation is not run.
fn last_served(
    pms: &PaimonMysqlSync,
    in_status: Option<String>,
    annotated: impl Fn(&ServedTriggers) -> Option<String>,
    in_spec: Option<String>,
) -> Option<String> {
    if in_status.is_some() {
        return in_status;
    }
    match ServedTriggers::of(pms) {
        Some(served) => annotated(&served),
        None if pms.status.is_none() => in_spec,
        None => None,
    }
}

pub fn plan(
    pms: &PaimonMysqlSync,
    facts: &JobFacts,
    savepoints: &[PaimonMysqlSyncSavepoint],
    now: Timestamp,
) -> JobPlan {
    let mut events = Vec::new();
    let rebuild = next_rebuild(pms, facts, now, &mut events);
    // A rebuild first: a restore waits for it to be over.
    let restore = match rebuild.as_ref().filter(|r| !r.phase.is_finished()) {
        Some(_) => pms.status.as_ref().and_then(|s| s.restore.clone()),
        None => next_restore(pms, facts, savepoints, now, &mut events),
    };
    // Stopped while a rebuild or restore runs, and after one failed (a rebuild's marker keeps
    // the workers from starting anyway, and must: the old generation must not write beside a
    // half-built new one; a restore half done must be finished first).
    // A restore refused before it started (no snapshot to restore to) stopped nothing and
    // holds nothing: the workers run on.
    let held = |r: &Option<RebuildStatus>| {
        r.as_ref()
            .is_some_and(|r| r.phase != RebuildPhase::Done && !refused(r))
    };
    let workers_stopped = held(&rebuild) || held(&restore);
    let runnable = |r: &Option<RebuildStatus>| {
        r.clone()
            .filter(|r| !r.phase.is_finished() && facts.worker_pods == 0)
    };
    let rebuild_job = runnable(&rebuild).map(|r| r.id);
    let restore_job = runnable(&restore).and_then(|r| Some((r.id, r.snapshot_id?)));
    let previous_phase = pms.status.as_ref().and_then(|s| s.phase);
    let running = previous_phase == Some(SyncPhase::Running) && !workers_stopped;
    let mut verify = next_verify(pms, facts, now, running, &mut events);
    if workers_stopped {
        // A verify would compare a table being swapped: it is dropped, the next runs later.
        if let Some(v) = verify.as_mut() {
            v.running = false;
        }
    }
    // An asked verify waiting for the next second counts as under way (looked at again soon);
    // one waiting for the sync to run (suspended, rebuilding) waits for that change instead.
    let verify_job = verify.as_ref().is_some_and(|v| v.running)
        || (running
            && pms
                .spec
                .verify
                .as_ref()
                .is_some_and(|spec| verify_asked(spec, verify.as_ref())));
    let served = ServedTriggers {
        rebuild: last_served(
            pms,
            rebuild.as_ref().and_then(|r| r.trigger.clone()),
            |s| s.rebuild.clone(),
            pms.spec.rebuild.trigger.clone(),
        ),
        // No restore on record and none asked for (a refusal cleared by removing the field):
        // nothing served, so that asking for the same savepoint again runs it.
        restore: match (&restore, &pms.spec.restore_from) {
            (None, None) => None,
            _ => last_served(
                pms,
                restore.as_ref().and_then(|r| r.trigger.clone()),
                |s| s.restore.clone(),
                pms.spec.restore_from.as_ref().map(restore_from_text),
            ),
        },
    };
    JobPlan {
        served,
        rebuild,
        workers_stopped,
        rebuild_job,
        restore,
        restore_job,
        verify,
        verify_job,
        events,
    }
}

impl JobPlan {
    /// A rebuild or restore that failed (the workers stay stopped): the reason of its Event
    /// and what to tell, how to go on included.
    pub fn failure(&self) -> Option<(&'static str, String)> {
        // A restore refused before it started stopped nothing: not a failure (`refusal`).
        let restore = self.restore.as_ref().filter(|r| !refused(r));
        [(REBUILD, self.rebuild.as_ref()), (RESTORE, restore)]
            .into_iter()
            .find_map(|(kind, r)| {
                let r = r.filter(|r| r.phase == RebuildPhase::Failed)?;
                Some((
                    kind.events[2],
                    format!(
                        "the {} failed: {}; the workers stay stopped: {}",
                        kind.what,
                        r.message.clone().unwrap_or_default(),
                        kind.retry
                    ),
                ))
            })
    }
}

impl JobPlan {
    /// A restore refused before it started (a savepoint missing, not Completed or of other
    /// tables): what to tell; the workers run on.
    pub fn refusal(&self) -> Option<String> {
        let r = self.restore.as_ref().filter(|r| refused(r))?;
        Some(format!(
            "the restore was refused: {}; nothing was stopped, the workers run on: change or remove spec.restoreFrom",
            r.message.clone().unwrap_or_default()
        ))
    }
}

/// Whether a restore was refused before it started: failed without a snapshot to restore to
/// (a started restore always has one), so no Job ran and no worker was stopped for it.
fn refused(r: &RebuildStatus) -> bool {
    r.phase == RebuildPhase::Failed && r.snapshot_id.is_none()
}

/// A rebuild or a restore: what tells them apart.
struct Kind {
    /// `rebuild` / `restore`, for messages.
    what: &'static str,
    /// The reasons of their Events: a phase change, done, failed.
    events: [&'static str; 3],
    /// The name of its Job and report ConfigMap.
    name: fn(&str) -> String,
    /// What a Done says, given the snapshot.
    done: fn(&str) -> String,
    /// How to go on after a failure.
    retry: &'static str,
}

const REBUILD: Kind = Kind {
    what: "rebuild",
    events: ["RebuildPhase", "RebuildDone", "RebuildFailed"],
    name: pms_crds::contract::rebuild_name,
    done: |s| {
        format!(
            "the table was rebuilt at snapshot {s} and swapped in; the workers go on from there"
        )
    },
    retry: "change spec.rebuild.trigger to resume the rebuild",
};

const RESTORE: Kind = Kind {
    what: "restore",
    events: ["RestorePhase", "RestoreDone", "RestoreFailed"],
    name: pms_crds::contract::restore_name,
    done: |s| format!("every slot goes on after snapshot {s}"),
    retry: "change or remove spec.restoreFrom",
};

/// Moves a running rebuild or restore on from its Job's report (or the Job's failure).
fn follow(
    kind: &Kind,
    mut r: RebuildStatus,
    report: Option<&RebuildReport>,
    job_failed: Option<&String>,
    sync: &str,
    now: Timestamp,
    events: &mut Vec<(EventType, &'static str, String)>,
) -> RebuildStatus {
    let was = r.phase;
    if let Some(report) = report.filter(|rep| rep.trigger == r.id) {
        r.phase = report.phase;
        r.progress = report.progress();
        r.snapshot_id = report.snapshot_id.or(r.snapshot_id);
        r.message = report.error.clone();
    }
    // Killed (OOM, eviction, kill -9) before it could report how it ended.
    if !r.phase.is_finished() && job_failed == Some(&r.id) {
        r.message = Some(format!(
            "the {} Job failed in phase {} without a word: see `kubectl logs job/{}` (its pod's log)",
            kind.what,
            r.phase,
            (kind.name)(sync)
        ));
        r.phase = RebuildPhase::Failed;
    }
    if r.phase != was {
        let snapshot = r.snapshot_id.map_or("?".into(), |s| s.to_string());
        events.push(match r.phase {
            RebuildPhase::Done => (EventType::Normal, kind.events[1], (kind.done)(&snapshot)),
            RebuildPhase::Failed => (
                EventType::Warning,
                kind.events[2],
                format!(
                    "{}; the workers stay stopped: {}",
                    r.message.clone().unwrap_or_default(),
                    kind.retry
                ),
            ),
            phase => (
                EventType::Normal,
                kind.events[0],
                format!("{was} → {phase}"),
            ),
        });
    }
    if r.phase.is_finished() {
        r.finished_at = Some(seconds(now));
    }
    r
}

/// The id of a rebuild or restore, from what asked for it rather than the clock: a reconcile
/// repeated after its status write was lost mints the same id, so the Job it created is kept,
/// not replaced by a second. The resource's uid tells a re-created sync's runs apart.
fn run_id(pms: &PaimonMysqlSync, kind: &str, note_at: Option<&str>) -> String {
    let uid = pms.metadata.uid.as_deref().unwrap_or_default();
    let uid = uid.get(..8).unwrap_or(uid);
    let generation = pms.metadata.generation.unwrap_or_default();
    match note_at {
        Some(at) => format!("{kind}-{uid}-g{generation}-{at}"),
        None => format!("{kind}-{uid}-g{generation}"),
    }
}

fn started(
    (id, started_at): (String, String),
    trigger: Option<String>,
    reason: String,
    snapshot_id: Option<i64>,
) -> RebuildStatus {
    RebuildStatus {
        started_at,
        id,
        trigger,
        reason,
        phase: RebuildPhase::Stopping,
        progress: None,
        snapshot_id,
        finished_at: None,
        message: None,
    }
}

fn next_rebuild(
    pms: &PaimonMysqlSync,
    facts: &JobFacts,
    now: Timestamp,
    events: &mut Vec<(EventType, &'static str, String)>,
) -> Option<RebuildStatus> {
    let previous = pms.status.as_ref().and_then(|s| s.rebuild.clone());
    let spec = &pms.spec.rebuild;
    if let Some(r) = previous.clone().filter(|r| !r.phase.is_finished()) {
        let sync = pms.metadata.name.clone().unwrap_or_default();
        let report = facts.rebuild_report.as_ref();
        let failed = facts.rebuild_job_failed.as_ref();
        return Some(follow(&REBUILD, r, report, failed, &sync, now, events));
    }
    let served = last_served(
        pms,
        previous.as_ref().and_then(|p| p.trigger.clone()),
        |s| s.rebuild.clone(),
        spec.trigger.clone(),
    );
    let asked = spec
        .trigger
        .as_ref()
        .filter(|t| served.as_ref() != Some(*t))
        .map(|t| {
            let reason = format!("spec.rebuild.trigger changed to {t:?}");
            (reason, run_id(pms, "trigger", None))
        });
    let since_last = previous.as_ref().and_then(|p| parse(&p.started_at));
    let auto = (spec.policy == RebuildPolicy::Auto)
        .then(|| {
            facts.rebuild_required.iter().find(|(_, note)| {
                since_last.is_none_or(|last| parse(&note.at).is_some_and(|at| at > last))
            })
        })
        .flatten()
        .map(|(slot, note)| {
            let reason = format!(
                "spec.rebuild.policy is auto and slot {slot} stopped ({}): {}",
                note.reason.as_str(),
                note.message
            );
            (reason, run_id(pms, "auto", Some(&note.at)))
        });
    let stateless = facts.upgrade_to.as_deref().map(|key| {
        let reason = "the workers' spec changed and spec.upgradeMode is stateless: starting over";
        let key = key.trim_start_matches(super::build::RESTART_KEY_PREFIX);
        (
            reason.to_string(),
            run_id(pms, "upgrade", Some(key.get(..12).unwrap_or(key))),
        )
    });
    let Some((reason, id)) = asked.or(auto).or(stateless) else {
        return previous;
    };
    events.push((EventType::Normal, "RebuildStarted", reason.clone()));
    Some(started(
        (id, seconds(now)),
        spec.trigger.clone(),
        reason,
        None,
    ))
}

/// `spec.restoreFrom`, as the text a restore keeps in `status.restore.trigger`.
fn restore_from_text(r: &RestoreFrom) -> String {
    match (&r.savepoint, r.snapshot_id) {
        (Some(sp), _) => format!("savepoint {sp}"),
        (None, Some(s)) => format!("snapshot {s}"),
        (None, None) => String::new(),
    }
}

/// A restore starts when `spec.restoreFrom` differs from the last restore's; a savepoint is
/// resolved to its snapshot here (a missing or unfinished one fails the restore at once).
fn next_restore(
    pms: &PaimonMysqlSync,
    facts: &JobFacts,
    savepoints: &[PaimonMysqlSyncSavepoint],
    now: Timestamp,
    events: &mut Vec<(EventType, &'static str, String)>,
) -> Option<RebuildStatus> {
    let previous = pms.status.as_ref().and_then(|s| s.restore.clone());
    if let Some(r) = previous.clone().filter(|r| !r.phase.is_finished()) {
        let sync = pms.metadata.name.clone().unwrap_or_default();
        let report = facts.restore_report.as_ref();
        let failed = facts.restore_job_failed.as_ref();
        return Some(follow(&RESTORE, r, report, failed, &sync, now, events));
    }
    let from = pms.spec.restore_from.as_ref().map(restore_from_text);
    let served = last_served(
        pms,
        previous.as_ref().and_then(|p| p.trigger.clone()),
        |s| s.restore.clone(),
        from.clone(),
    );
    if from.is_none() && previous.as_ref().is_some_and(refused) {
        return None; // the refusal clears with the field
    }
    if from.is_none() || from == served {
        return previous;
    }
    let rf = pms.spec.restore_from.as_ref()?;
    let snapshot = match (&rf.savepoint, rf.snapshot_id) {
        (Some(name), _) => savepoints
            .iter()
            .find(|s| s.metadata.name.as_deref() == Some(name))
            .and_then(|s| s.status.as_ref())
            .filter(|s| s.state == SavepointState::Completed)
            .ok_or(format!(
                "savepoint {name} of this sync is not there or not Completed"
            ))
            .and_then(|s| savepoint_snapshot(pms, name, s)),
        (None, Some(s)) => Ok(s),
        (None, None) => Err("restoreFrom names neither a savepoint nor a snapshot".to_string()),
    };
    let reason = format!("spec.restoreFrom is {}", from.clone().unwrap_or_default());
    let id = (run_id(pms, "restore", None), seconds(now));
    let mut r = started(id, from, reason.clone(), snapshot.clone().ok());
    match snapshot {
        Ok(s) => events.push((
            EventType::Normal,
            "RestoreStarted",
            format!("{reason}: every slot goes on after snapshot {s}"),
        )),
        Err(why) => {
            r.phase = RebuildPhase::Failed;
            r.finished_at = Some(r.started_at.clone());
            events.push((
                EventType::Warning,
                "RestoreRefused",
                format!("{why}; nothing was stopped, the workers run on"),
            ));
            r.message = Some(why);
        }
    }
    Some(r)
}

/// The snapshot of a Completed savepoint, if it is a position in this sync's tables (a
/// savepoint of older releases records none and is taken as it is).
fn savepoint_snapshot(
    pms: &PaimonMysqlSync,
    name: &str,
    status: &SavepointStatus,
) -> Result<i64, String> {
    let ours = super::savepoints::tables_of(pms);
    if let Some(theirs) = status.tables.as_ref().filter(|t| **t != ours) {
        return Err(format!(
            "savepoint {name} is a position in {theirs}, and this sync syncs {ours}: restoring it would start \
             these tables at another table's snapshot; restore from a savepoint of this sync"
        ));
    }
    status
        .snapshot_id
        .ok_or(format!("savepoint {name} records no snapshot"))
}

fn next_verify(
    pms: &PaimonMysqlSync,
    facts: &JobFacts,
    now: Timestamp,
    sync_running: bool,
    events: &mut Vec<(EventType, &'static str, String)>,
) -> Option<VerifyStatus> {
    let mut verify = pms.status.as_ref().and_then(|s| s.verify.clone());
    if let Some(v) = verify.as_mut().filter(|v| v.running) {
        let started = parse(&v.started_at);
        let fresh = facts.verify_report.as_ref().filter(|r| {
            parse(&r.finished_at)
                .zip(started)
                .is_some_and(|(f, s)| f >= s)
        });
        if let Some(report) = fresh {
            v.running = false;
            v.error = None;
            v.result = Some(report.clone());
            let divergent = report.divergent_rows();
            events.push(if divergent == 0 {
                (EventType::Normal, "Verified", verified_message(report))
            } else {
                (EventType::Warning, "Divergent", verified_message(report))
            });
        } else if facts.verify_job_failed.as_ref() == Some(&v.started_at) {
            v.running = false;
            let e = "the verify Job failed before it reported: see its pod's log".to_string();
            events.push((EventType::Warning, "VerifyFailed", e.clone()));
            v.error = Some(e);
        }
    }
    let Some(spec) = &pms.spec.verify else {
        // Turned off: a verify under way is dropped, the last result stays.
        if let Some(v) = verify.as_mut() {
            v.running = false;
        }
        return verify;
    };
    let interval = spec
        .interval
        .map(|i| SignedDuration::try_from(i.0).unwrap_or(SignedDuration::MAX));
    let asked = verify_asked(spec, verify.as_ref());
    // A verify's start (its Job's id) and its report's finish are kept to the second: a new one
    // starts in a later second than the last one's start and the last report's finish, so
    // that its Job is a new one and no earlier report passes for its own.
    let start = parse(&seconds(now));
    let later_second = verify.as_ref().is_none_or(|v| parse(&v.started_at) < start)
        && facts
            .verify_report
            .as_ref()
            .is_none_or(|r| parse(&r.finished_at) < start);
    let due = sync_running
        && later_second
        && verify.as_ref().is_none_or(|v| !v.running)
        && (asked
            || interval.is_some_and(|every| {
                verify
                    .as_ref()
                    .and_then(|v| parse(&v.started_at))
                    .is_none_or(|s| now.duration_since(s) >= every)
            }));
    if due {
        let mut next = verify.unwrap_or(VerifyStatus {
            started_at: String::new(),
            running: false,
            result: None,
            error: None,
            last_trigger: None,
        });
        next.started_at = seconds(now);
        next.running = true;
        next.last_trigger = spec.trigger.clone();
        verify = Some(next);
    }
    verify
}

/// Whether `spec.verify.trigger` asks for a verify the status has not recorded starting.
fn verify_asked(spec: &pms_crds::VerifySpec, verify: Option<&VerifyStatus>) -> bool {
    spec.trigger.is_some() && spec.trigger != verify.and_then(|v| v.last_trigger.clone())
}

/// The `Verified` condition's message.
pub fn verified_message(r: &VerifyReport) -> String {
    let rounds = if r.rounds > 1 {
        format!(", {} rounds", r.rounds)
    } else {
        String::new()
    };
    if r.divergent_rows() == 0 {
        format!(
            "MySQL equals Paimon snapshot {} ({} rows, {:.1} s{rounds})",
            r.snapshot_id, r.paimon_rows, r.seconds
        )
    } else {
        format!(
            "{} rows differ from Paimon snapshot {} ({} missing, {} extra, {} different{rounds}): \
             run `pms-worker verify --repair` with the sync suspended, or a rebuild (spec.rebuild.trigger)",
            r.divergent_rows(),
            r.snapshot_id,
            r.missing,
            r.extra,
            r.different
        )
    }
}

fn parse(text: &str) -> Option<Timestamp> {
    text.parse().ok()
}

#[cfg(test)]
mod tests;
