//! Savepoints, decided without side effects (part of step 3): which `PaimonMysqlSyncSavepoint`
//! of the sync is served, what the control ConfigMap asks of the workers, which savepoints are
//! created (`spec.savepoint.trigger` / `interval`) and which go (`spec.savepoint.history`).
//!
//! One savepoint at a time, oldest first, while the sync runs: the workers are asked to pause
//! at their next snapshot boundary (`<sync>-control`); once every slot has paused, the cut S is
//! the highest boundary any reached, and the slots behind are asked to read on to the end of S
//! and pause there. When every slot's checkpoint says it is paused at the end of S for this
//! savepoint, the savepoint is `Completed` (its slots' checkpoints kept in `<savepoint>-data`)
//! and the pause is lifted.

use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::runtime::events::EventType;
use kube::ResourceExt;
use pms_crds::contract::{self, Checkpoint, Control, PauseRequest};

use super::rescale::paused_at;
use super::time::seconds;
use pms_crds::{
    CheckpointStorage, PaimonMysqlSync, PaimonMysqlSyncSavepoint, SavepointState, SavepointStatus,
    SavepointsStatus, SyncPhase,
};

/// An attempt at a savepoint that does not complete in this long ends (the pause is lifted):
/// another follows, up to [`SAVEPOINT_ATTEMPTS`], then the savepoint fails.
pub const SAVEPOINT_TIMEOUT: Duration = Duration::from_secs(600);
/// Attempts of a savepoint whose slots don't all pause in time, before it fails.
pub const SAVEPOINT_ATTEMPTS: u32 = 3;

/// What the operator does about savepoints this reconcile.
#[derive(Debug, Default, PartialEq)]
pub struct SavepointPlan {
    /// The content of `<sync>-control`.
    pub control: Control,
    /// New statuses of savepoints, by name.
    pub statuses: Vec<(String, SavepointStatus)>,
    /// A savepoint completed: its name and data (the slots' checkpoints at the cut).
    pub data: Option<(String, SavepointData)>,
    /// Savepoints to create (names) and to delete (names, with their data).
    pub create: Vec<String>,
    pub delete: Vec<String>,
    /// `status.savepoints` of the sync.
    pub status: Option<SavepointsStatus>,
    pub events: Vec<(EventType, &'static str, String)>,
}

/// What a completed savepoint keeps (`<savepoint>-data`, key `savepoint.json`).
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SavepointData {
    pub sync: String,
    pub snapshot_id: i64,
    pub slots: u32,
    pub checkpoints: Vec<Checkpoint>,
}

pub const DATA_KEY: &str = "savepoint.json";

pub fn data_name(savepoint: &str) -> String {
    format!("{savepoint}-data")
}

/// Where savepoint `name` of `pms` keeps its data: `<savepoint>-data`, or with S3 checkpoints
/// an object beside them.
pub fn data_location(pms: &PaimonMysqlSync, name: &str) -> String {
    let checkpoint = &pms.spec.checkpoint;
    match (checkpoint.storage, &checkpoint.s3) {
        (Some(CheckpointStorage::S3), Some(s3)) => {
            let external = contract::external_name(pms.namespace().as_deref(), &pms.name_any());
            let object = contract::savepoint_object(&external, name);
            match s3.prefix.as_deref().map(|p| p.trim_matches('/')) {
                None | Some("") => format!("s3://{}/{object}", s3.bucket),
                Some(prefix) => format!("s3://{}/{prefix}/{object}", s3.bucket),
            }
        }
        _ => format!(
            "ConfigMap {}/{}",
            pms.namespace().unwrap_or_default(),
            data_name(name)
        ),
    }
}

/// The tables a savepoint of `pms` is a position in (see `SavepointStatus::tables`). The
/// MySQL database is the URL's path; its host may change (a failover) and the savepoint holds.
pub fn tables_of(pms: &PaimonMysqlSync) -> String {
    let (source, sink) = (&pms.spec.source, &pms.spec.sink);
    let mysql_database = sink.url.rsplit('/').next().unwrap_or_default();
    format!(
        "paimon {} {}.{} -> mysql {mysql_database}.{}",
        source.warehouse, source.database, source.table, sink.table
    )
}

/// `savepoints`: this sync's; `checkpoints[k]`: slot k's; `running`: the sync is `Running`
/// and no rebuild holds its workers.
pub fn plan(
    pms: &PaimonMysqlSync,
    savepoints: &[PaimonMysqlSyncSavepoint],
    checkpoints: &[Option<&Checkpoint>],
    running: bool,
    now: Timestamp,
) -> SavepointPlan {
    let mut plan = SavepointPlan::default();
    serve(pms, savepoints, checkpoints, running, now, &mut plan);
    schedule(pms, savepoints, running, now, &mut plan);
    trim(pms, savepoints, now, &mut plan);
    plan
}

/// Moves the oldest unfinished savepoint on.
fn serve(
    pms: &PaimonMysqlSync,
    savepoints: &[PaimonMysqlSyncSavepoint],
    checkpoints: &[Option<&Checkpoint>],
    running: bool,
    now: Timestamp,
    plan: &mut SavepointPlan,
) {
    let mut active: Vec<&PaimonMysqlSyncSavepoint> = savepoints
        .iter()
        .filter(|s| !s.status.as_ref().is_some_and(|st| st.state.is_finished()))
        .collect();
    active.sort_by_key(|s| (s.creation_timestamp().map(|t| t.0), s.name_any()));
    let Some(sp) = active.first() else {
        return;
    };
    let name = sp.name_any();
    let mut status = sp.status.clone().unwrap_or_default();
    let started = status
        .started_at
        .as_deref()
        .and_then(|t| t.parse::<Timestamp>().ok());
    if !running {
        if status.state == SavepointState::InProgress {
            fail(
                &name,
                status,
                "the sync stopped running before every slot reached the cut",
                plan,
            );
        }
        return;
    }
    if status.state == SavepointState::Pending {
        let retry_at = status
            .retry_at
            .as_deref()
            .and_then(|t| t.parse::<Timestamp>().ok());
        if retry_at.is_some_and(|at| now < at) {
            // Between attempts: no pause, the slots go on.
            return;
        }
        // A slot in its full read reaches no snapshot boundary before the read's end: a
        // pause now would hold the other slots that long (and time the attempt out, again
        // and again). The attempt starts once every slot follows changes.
        let waiting_for = not_following(checkpoints, pms.spec.parallelism);
        if waiting_for.is_some() {
            if status.waiting_for != waiting_for {
                status.waiting_for = waiting_for;
                plan.statuses.push((name, status));
            }
            return;
        }
        status.state = SavepointState::InProgress;
        status.started_at = Some(seconds(now));
        status.retry_at = None;
        status.waiting_for = None;
    }
    let attempt = status.attempt.unwrap_or(1);
    let timeout = SignedDuration::try_from(SAVEPOINT_TIMEOUT).unwrap_or(SignedDuration::MAX);
    if started.is_some_and(|s| now.duration_since(s) > timeout) {
        let why = format!(
            "the slots did not all pause at one snapshot within {}s",
            SAVEPOINT_TIMEOUT.as_secs()
        );
        if attempt < SAVEPOINT_ATTEMPTS {
            return retry(&name, status, &why, now, plan);
        }
        let why = format!("{why} ({attempt} attempts)");
        return fail(&name, status, &why, plan);
    }
    let slots = pms.spec.parallelism;
    // Each attempt pauses under an id of its own: slots that paused for an earlier one and
    // went on since don't count as paused for this one.
    let id = pause_id(&name, attempt);
    let (cut, all_there) = paused_at(checkpoints, slots, &id);
    if let (Some(cut), true) = (cut, all_there) {
        let took = started
            .map(|s| now.duration_since(s).as_secs_f64())
            .unwrap_or(0.0);
        status.state = SavepointState::Completed;
        status.snapshot_id = Some(cut);
        status.slots = Some(slots);
        status.location = Some(data_location(pms, &name));
        status.completed_at = Some(seconds(now));
        status.took = Some(format!("{took:.1}s"));
        status.sync_uid = pms.metadata.uid.clone();
        status.tables = Some(tables_of(pms));
        plan.data = Some((
            name.clone(),
            SavepointData {
                sync: pms.name_any(),
                snapshot_id: cut,
                slots,
                checkpoints: checkpoints.iter().flatten().map(|c| (*c).clone()).collect(),
            },
        ));
        plan.events.push((
            EventType::Normal,
            "SavepointCompleted",
            format!(
                "{name}: every slot at the end of snapshot {cut} ({took:.1} s); the slots go on"
            ),
        ));
        plan.statuses.push((name, status));
        return;
    }
    plan.control = Control {
        pause: Some(PauseRequest { id, at: cut }),
        ..Default::default()
    };
    if sp.status.as_ref() != Some(&status) {
        plan.statuses.push((name, status));
    }
}

/// The first slot of `slots` whose checkpoint is of a full read under way, as a savepoint's
/// status says it.
fn not_following(checkpoints: &[Option<&Checkpoint>], slots: u32) -> Option<String> {
    (0..slots).find_map(|slot| match checkpoints.get(slot as usize).copied().flatten() {
        Some(cp) if cp.point.is_full_read() => {
            let progress = cp.full_read.as_ref().map_or(String::new(), |f| {
                format!(" ({} of about {} rows written)", f.rows, f.expected_rows)
            });
            Some(format!(
                "slot {slot} to end its full read of snapshot {}{progress}; no slot is paused meanwhile",
                cp.point.next_snapshot()
            ))
        }
        _ => None,
    })
}

/// The pause id of attempt `attempt` of savepoint `name`: its name, then `<name>#<attempt>`.
fn pause_id(name: &str, attempt: u32) -> String {
    match attempt {
        0 | 1 => name.to_string(),
        n => format!("{name}#{n}"),
    }
}

/// An attempt timed out: the next one after a backoff (1 minute, then 2), the slots unpaused
/// meanwhile.
fn retry(
    name: &str,
    mut status: SavepointStatus,
    why: &str,
    now: Timestamp,
    plan: &mut SavepointPlan,
) {
    let attempt = status.attempt.unwrap_or(1);
    let backoff = SignedDuration::from_secs(60 << (attempt - 1).min(4));
    let retry_at = seconds(now.saturating_add(backoff).unwrap_or(now));
    status.state = SavepointState::Pending;
    status.attempt = Some(attempt + 1);
    status.started_at = None;
    status.error = Some(format!(
        "attempt {attempt}: {why}; attempt {} at {retry_at}",
        attempt + 1
    ));
    status.retry_at = Some(retry_at);
    plan.events.push((
        EventType::Warning,
        "SavepointRetrying",
        format!("{name}: {}", status.error.as_deref().unwrap_or_default()),
    ));
    plan.statuses.push((name.to_string(), status));
}

fn fail(name: &str, mut status: SavepointStatus, why: &str, plan: &mut SavepointPlan) {
    status.state = SavepointState::Failed;
    status.error = Some(why.to_string());
    plan.events.push((
        EventType::Warning,
        "SavepointFailed",
        format!("{name}: {why}"),
    ));
    plan.statuses.push((name.to_string(), status));
}

/// Savepoints the spec asks for: a changed trigger, or the interval passed.
fn schedule(
    pms: &PaimonMysqlSync,
    savepoints: &[PaimonMysqlSyncSavepoint],
    running: bool,
    now: Timestamp,
    plan: &mut SavepointPlan,
) {
    let Some(spec) = &pms.spec.savepoint else {
        return;
    };
    let previous = pms
        .status
        .as_ref()
        .and_then(|s| s.savepoints.clone())
        .unwrap_or_default();
    let mut status = previous.clone();
    let sync = pms.name_any();
    let stamp = now.strftime("%Y%m%d-%H%M%S").to_string();
    let mut create = |suffix: &str| {
        let name = format!("{sync}-{stamp}{suffix}");
        if !savepoints.iter().any(|s| s.name_any() == name) && !plan.create.contains(&name) {
            plan.create.push(name);
        }
    };
    if spec.trigger.is_some() && spec.trigger != previous.last_trigger {
        create("");
        status.last_trigger = spec.trigger.clone();
    }
    if let Some(interval) = spec.interval {
        let every = SignedDuration::try_from(interval.0).unwrap_or(SignedDuration::MAX);
        let last = previous
            .last_periodic_at
            .as_deref()
            .and_then(|t| t.parse::<Timestamp>().ok());
        if running && last.is_none_or(|l| now.duration_since(l) >= every) {
            create("-p");
            status.last_periodic_at = Some(seconds(now));
        }
    }
    if status != previous {
        plan.status = Some(status);
    }
}

/// The savepoints this operator made (`spec.savepoint.trigger` / `interval`) go by
/// `spec.savepoint.history`: Completed ones beyond `maxCount` (newest kept) or older than
/// `maxAge`, but never the newest Completed one (the last point to restore from) nor the one
/// `spec.restoreFrom` names; Failed ones likewise among themselves, so failures never push a
/// Completed savepoint out. A savepoint made by hand (`kubectl create pmssp`) is the user's
/// to delete.
fn trim(
    pms: &PaimonMysqlSync,
    savepoints: &[PaimonMysqlSyncSavepoint],
    now: Timestamp,
    plan: &mut SavepointPlan,
) {
    let Some(spec) = &pms.spec.savepoint else {
        return;
    };
    let keep = pms
        .spec
        .restore_from
        .as_ref()
        .and_then(|r| r.savepoint.clone());
    let state_now = |sp: &PaimonMysqlSyncSavepoint| {
        let name = sp.name_any();
        plan.statuses
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| s.state)
            .or_else(|| sp.status.as_ref().map(|s| s.state))
    };
    let max_age = spec
        .history
        .max_age
        .map(|a| SignedDuration::try_from(a.0).unwrap_or(SignedDuration::MAX));
    let mut delete = Vec::new();
    for state in [SavepointState::Completed, SavepointState::Failed] {
        let mut made: Vec<&PaimonMysqlSyncSavepoint> = savepoints
            .iter()
            .filter(|s| made_by_operator(s) && state_now(s) == Some(state))
            .collect();
        // Newest first.
        made.sort_by_key(|s| {
            std::cmp::Reverse((s.creation_timestamp().map(|t| t.0), s.name_any()))
        });
        for (i, sp) in made.iter().enumerate() {
            let name = sp.name_any();
            let too_old = max_age
                .zip(sp.creation_timestamp())
                .is_some_and(|(a, c)| now.duration_since(c.0) > a);
            let last_completed = state == SavepointState::Completed && i == 0;
            if (i >= spec.history.max_count as usize || too_old)
                && !last_completed
                && keep.as_ref() != Some(&name)
            {
                delete.push(name);
            }
        }
    }
    plan.delete.extend(delete);
}

/// Whether the operator made this savepoint (from `spec.savepoint`), not a user by hand.
fn made_by_operator(sp: &PaimonMysqlSyncSavepoint) -> bool {
    sp.labels()
        .get(contract::MANAGED_BY_LABEL)
        .map(String::as_str)
        == Some(contract::MANAGER)
}

/// Whether the sync counts as running for savepoints.
pub fn sync_running(pms: &PaimonMysqlSync, workers_stopped: bool) -> bool {
    pms.status.as_ref().and_then(|s| s.phase) == Some(SyncPhase::Running) && !workers_stopped
}

#[cfg(test)]
mod tests;
