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

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::runtime::events::EventType;
use pms_crds::contract::{RebuildPhase, RebuildReport, RebuildRequired, VerifyReport};
use pms_crds::{PaimonMysqlSync, RebuildPolicy, RebuildStatus, SyncPhase, VerifyStatus};

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
    /// Pods the slot Deployments still have.
    pub worker_pods: i32,
    /// The id (annotation [`JOB_ID`]) of a rebuild or verify Job Kubernetes gave up on.
    pub rebuild_job_failed: Option<String>,
    pub verify_job_failed: Option<String>,
}

/// The decision.
#[derive(Debug, Default, PartialEq)]
pub struct JobPlan {
    pub rebuild: Option<RebuildStatus>,
    /// The slot Deployments go to 0 replicas.
    pub workers_stopped: bool,
    /// The rebuild Job should exist (the workers are gone).
    pub rebuild_job: Option<String>,
    pub verify: Option<VerifyStatus>,
    pub verify_job: bool,
    pub events: Vec<(EventType, &'static str, String)>,
}

pub fn plan(pms: &PaimonMysqlSync, facts: &JobFacts, now: Timestamp) -> JobPlan {
    let mut events = Vec::new();
    let rebuild = next_rebuild(pms, facts, now, &mut events);
    // Stopped while a rebuild runs, and after one failed (its marker keeps the workers from
    // starting anyway, and must: the old generation must not write beside a half-built new one).
    let workers_stopped = rebuild
        .as_ref()
        .is_some_and(|r| r.phase != RebuildPhase::Done);
    let rebuild_job = rebuild
        .as_ref()
        .filter(|r| !r.phase.is_finished() && facts.worker_pods == 0)
        .map(|r| r.id.clone());
    let previous_phase = pms.status.as_ref().and_then(|s| s.phase);
    let running = previous_phase == Some(SyncPhase::Running) && !workers_stopped;
    let mut verify = next_verify(pms, facts, now, running, &mut events);
    if workers_stopped {
        // A verify would compare a table being swapped: it is dropped, the next runs later.
        if let Some(v) = verify.as_mut() {
            v.running = false;
        }
    }
    let verify_job = verify.as_ref().is_some_and(|v| v.running);
    JobPlan {
        rebuild,
        workers_stopped,
        rebuild_job,
        verify,
        verify_job,
        events,
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
    if let Some(mut r) = previous.clone().filter(|r| !r.phase.is_finished()) {
        let was = r.phase;
        if let Some(report) = facts
            .rebuild_report
            .as_ref()
            .filter(|rep| rep.trigger == r.id)
        {
            r.phase = report.phase;
            r.progress = report.progress();
            r.snapshot_id = report.snapshot_id.or(r.snapshot_id);
            r.message = report.error.clone();
        }
        // Killed (OOM, eviction, kill -9) before it could report how it ended.
        if !r.phase.is_finished() && facts.rebuild_job_failed.as_ref() == Some(&r.id) {
            r.message = Some(format!(
                "the rebuild Job failed in phase {} without a word: see `kubectl logs job/{}` (its pod's log)",
                r.phase,
                pms_crds::contract::rebuild_name(&pms.metadata.name.clone().unwrap_or_default())
            ));
            r.phase = RebuildPhase::Failed;
        }
        if r.phase != was {
            let (type_, reason, note) = match r.phase {
                RebuildPhase::Done => (
                    EventType::Normal,
                    "RebuildDone",
                    format!(
                        "the table was rebuilt at snapshot {} and swapped in; the workers go on from there",
                        r.snapshot_id.map_or("?".into(), |s| s.to_string())
                    ),
                ),
                RebuildPhase::Failed => (
                    EventType::Warning,
                    "RebuildFailed",
                    format!(
                        "{}; the workers stay stopped: change spec.rebuild.trigger to resume the rebuild",
                        r.message.clone().unwrap_or_default()
                    ),
                ),
                phase => (EventType::Normal, "RebuildPhase", format!("{was} → {phase}")),
            };
            events.push((type_, reason, note));
        }
        if r.phase.is_finished() {
            r.finished_at = Some(seconds(now));
        }
        return Some(r);
    }
    let asked = spec
        .trigger
        .as_ref()
        .filter(|t| previous.as_ref().and_then(|p| p.trigger.as_ref()) != Some(*t))
        .map(|t| format!("spec.rebuild.trigger changed to {t:?}"));
    let since_last = previous.as_ref().and_then(|p| parse(&p.started_at));
    let auto = (spec.policy == RebuildPolicy::Auto)
        .then(|| {
            facts.rebuild_required.iter().find(|(_, note)| {
                since_last.is_none_or(|last| parse(&note.at).is_some_and(|at| at > last))
            })
        })
        .flatten()
        .map(|(slot, note)| {
            format!(
                "spec.rebuild.policy is auto and slot {slot} stopped ({}): {}",
                note.reason.as_str(),
                note.message
            )
        });
    let Some(reason) = asked.or(auto) else {
        return previous;
    };
    events.push((EventType::Normal, "RebuildStarted", reason.clone()));
    let id = seconds(now);
    Some(RebuildStatus {
        id: id.clone(),
        trigger: spec.trigger.clone(),
        reason,
        phase: RebuildPhase::Stopping,
        progress: None,
        snapshot_id: None,
        started_at: id,
        finished_at: None,
        message: None,
    })
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
    let interval = SignedDuration::try_from(spec.interval.0).unwrap_or(SignedDuration::MAX);
    let due = sync_running
        && verify.as_ref().is_none_or(|v| {
            !v.running && parse(&v.started_at).is_none_or(|s| now.duration_since(s) >= interval)
        });
    if due {
        let mut next = verify.unwrap_or(VerifyStatus {
            started_at: String::new(),
            running: false,
            result: None,
            error: None,
        });
        next.started_at = seconds(now);
        next.running = true;
        verify = Some(next);
    }
    verify
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

/// RFC 3339 to the second, as the workers write it.
fn seconds(t: Timestamp) -> String {
    Timestamp::from_second(t.as_second())
        .map(|t| t.to_string())
        .unwrap_or_else(|_| t.to_string())
}

fn parse(text: &str) -> Option<Timestamp> {
    text.parse().ok()
}

#[cfg(test)]
mod tests;
