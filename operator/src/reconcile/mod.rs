//! One reconcile of one `PaimonMysqlSync`, in five steps as in stackable's operators
//! (zookeeper-operator's `zk_controller`), behind a finalizer that cleans up what
//! ownerReferences alone would not:
//!
//! 1. [`dereference`]: fetch what the resource refers to (Secret key names, checkpoints);
//! 2. [`validate`] (pure): what the schema can't check, every problem at once;
//! 3. [`build`] (pure): every object the sync should own;
//! 4. [`apply`]: server-side apply of them all, then delete what is no longer wanted;
//! 5. [`status`] (pure): phase, progress and conditions, patched if changed.

pub mod apply;
pub mod build;
pub mod dereference;
pub mod jobs;
pub mod rescale;
pub mod rollback;
pub mod savepoints;
mod secret;
pub mod status;
pub mod store;
mod time;
pub mod validate;

use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, ObjectReference};
use kube::api::{DynamicObject, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType};
use kube::runtime::finalizer::{finalizer, Error as FinalizerError, Event as Finalizer};
use kube::{Api, Resource, ResourceExt};
use pms_crds::contract::{self, Checkpoint, Control};
use pms_crds::{PaimonMysqlSync, PaimonMysqlSyncStatus, RescalePhase, SyncPhase, UpgradeMode};
use tracing::{info, warn};

use crate::context::Context;
use crate::error::{Error, Result, Verb};
use crate::restart_gate::{self, Admission};
use build::Validated;
use dereference::Dereferenced;
use validate::Invalid;

pub const FINALIZER: &str = "paimonsync.io/cleanup";

/// Requeue intervals: a healthy sync is looked at again for what no watch tells (the time-based
/// decisions: periodic savepoints and verifies, history ages), an invalid one less often (an
/// edit of the resource triggers a reconcile anyway). What changes its status (checkpoints,
/// workers' notes, Deployments, Jobs, savepoints) is watched, so the resync can be rare: at 60 s
/// an idle sync costs about 0.5 API requests a second (`make api-load`).
const RESYNC: Duration = Duration::from_secs(60);
const RESYNC_INVALID: Duration = Duration::from_secs(30);
const RETRY: Duration = Duration::from_secs(5);

pub async fn reconcile(pms: Arc<PaimonMysqlSync>, ctx: Arc<Context>) -> Result<Action> {
    let started = Instant::now();
    let result = reconcile_with_finalizer(pms, &ctx).await;
    ctx.metrics.record(started.elapsed(), result.as_ref().err());
    result
}

async fn reconcile_with_finalizer(pms: Arc<PaimonMysqlSync>, ctx: &Context) -> Result<Action> {
    if let Some(leadership) = &ctx.leadership {
        leadership.check().await?;
    }
    let sync = pms.name_any();
    let ns = pms
        .namespace()
        .ok_or_else(|| Error::NotNamespaced(sync.clone()))?;
    let api: Api<PaimonMysqlSync> = Api::namespaced(ctx.client.clone(), &ns);
    let result = finalizer(&api, FINALIZER, pms, |event| async {
        match event {
            Finalizer::Apply(pms) => apply_sync(&pms, ctx, &ns).await,
            Finalizer::Cleanup(pms) => cleanup(&pms, ctx, &ns).await,
        }
    })
    .await;
    finalizer_outcome(result, &ns, &sync)
}

/// What a run of [`finalizer`] for `ns/name` comes to.
pub(crate) fn finalizer_outcome(
    result: std::result::Result<Action, FinalizerError<Error>>,
    ns: &str,
    name: &str,
) -> Result<Action> {
    match result {
        Ok(action) => Ok(action),
        Err(FinalizerError::ApplyFailed(e) | FinalizerError::CleanupFailed(e)) => Err(e),
        // A second cleanup raced the first: the resource is gone already, nothing is left to do.
        Err(FinalizerError::RemoveFinalizer(kube::Error::Api(s))) if s.code == 404 => {
            Ok(Action::await_change())
        }
        Err(other) => Err(Error::Finalizer {
            sync: format!("{ns}/{name}"),
            message: other.to_string(),
        }),
    }
}

/// The sync controller's reconcile of a watched object: decoded, or reported when it can't
/// be (see `undecodable.rs`).
pub async fn reconcile_watched(object: Arc<DynamicObject>, ctx: Arc<Context>) -> Result<Action> {
    crate::undecodable::reconcile(object, ctx, reconcile, Some(cleanup_undecodable)).await
}

/// A deleted sync whose spec can't be read: its workers go (ownerReferences would take them
/// too, but not wait for their pods), its checkpoints stay (whether to keep them is in the spec).
fn cleanup_undecodable(
    ctx: Arc<Context>,
    ns: String,
    sync: String,
    deleting_for: Duration,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Option<usize>>> + Send>> {
    Box::pin(async move {
        ctx.restart_gate.release(&restart_gate::key(&ns, &sync));
        ctx.s3_watch.forget(&ns, &sync);
        ctx.metrics.forget_sync(&ns, &sync);
        apply::delete_all(&ctx.client, &ns, &sync, true, deleting_for).await
    })
}

/// Every controller's error policy: when the reconcile of `object` runs again.
pub fn error_policy<K: Resource>(object: Arc<K>, error: &Error, _ctx: Arc<Context>) -> Action {
    requeue_after(&object.name_any(), error)
}

/// When a reconcile that ended in `error` runs again (and the log line it gets).
pub(crate) fn requeue_after(name: &str, error: &Error) -> Action {
    match error {
        // Read again at once: nothing failed, the resource moved on.
        Error::Changed(_) => Action::requeue(Duration::from_millis(200)),
        Error::Waiting(why) => {
            info!(%name, %why, "waiting");
            Action::requeue(Duration::from_secs(2))
        }
        _ => {
            warn!(%name, %error, "reconcile failed");
            Action::requeue(RETRY)
        }
    }
}

/// Whether a controller's reconcile ended in [`Error::Waiting`] (not worth a warning).
pub fn waiting(e: &kube::runtime::controller::Error<Error, kube::runtime::watcher::Error>) -> bool {
    matches!(
        e,
        kube::runtime::controller::Error::ReconcilerFailed(Error::Waiting(_), _)
    )
}

/// How long ago `object` was asked to be deleted (zero when it is not being deleted).
pub(crate) fn deleting_for<K: Resource>(object: &K) -> Duration {
    let since = object.meta().deletion_timestamp.as_ref().map(|t| t.0);
    since
        .and_then(|t| {
            Duration::try_from(k8s_openapi::jiff::Timestamp::now().duration_since(t)).ok()
        })
        .unwrap_or_default()
}

/// What follows step 1, decided without side effects.
#[derive(Debug)]
pub enum Next<'a> {
    /// Valid: build, apply, status.
    Apply(Validated<'a>, Box<Dereferenced>),
    /// Invalid: the sync is `Failed` with these reasons; nothing is applied.
    Fail(Invalid),
    /// The cluster could not be read: a Warning event, then a retry (`error_policy`).
    Retry(Error),
}

pub fn next_step<'a>(pms: &'a PaimonMysqlSync, ns: &str, found: Result<Dereferenced>) -> Next<'a> {
    match found {
        Err(e) => Next::Retry(e),
        Ok(found) => match validate::validate(pms, ns, &found) {
            Ok(valid) => Next::Apply(valid, Box::new(found)),
            Err(invalid) => Next::Fail(invalid),
        },
    }
}

async fn apply_sync(cached: &PaimonMysqlSync, ctx: &Context, ns: &str) -> Result<Action> {
    // The decisions build on the last status: read it from the API server, not the watch
    // cache, which may not have this operator's last status write yet (a stale status would
    // start a Job again that the last reconcile had just finished and deleted).
    let api: Api<PaimonMysqlSync> = Api::namespaced(ctx.client.clone(), ns);
    let name = cached.name_any();
    let fresh = api
        .get_opt(&name)
        .await
        .map_err(|e| Error::api::<PaimonMysqlSync>(Verb::Get, ns, &name, e))?;
    let Some(pms) = fresh.as_ref() else {
        return Ok(Action::await_change());
    };
    let found = dereference::dereference(&ctx.client, ns, pms).await;
    match next_step(pms, ns, found) {
        Next::Retry(e) => {
            publish(ctx, pms, EventType::Warning, "ReadFailed", e.to_string()).await;
            Err(e)
        }
        Next::Fail(invalid) => {
            let previous = pms.status.as_ref();
            let why = invalid.to_string();
            let rescale = previous.and_then(|p| p.rescale.as_ref());
            let status = status::compute(pms, &[], &[], Some(&why), previous, None, rescale);
            update_status(ctx, pms, ns, status).await?;
            // Nothing of it restarts while it is invalid.
            ctx.restart_gate.release(&restart_gate::key(ns, &name));
            Ok(Action::requeue(RESYNC_INVALID))
        }
        Next::Apply(valid, found) => {
            announce_created_table(ctx, pms, ns, &found).await;
            let result = build_and_apply(ctx, &valid, &found).await;
            if let Some(e) = result.as_ref().err().filter(|e| e.worth_an_event()) {
                publish(ctx, pms, EventType::Warning, "ApplyFailed", e.to_string()).await;
            }
            result
        }
    }
}

/// `sink.createTable` created the target at slot 0's last start: one `TableCreated` Event with
/// the statement, then the note is taken out of the pre-flight report so it is told once.
async fn announce_created_table(
    ctx: &Context,
    pms: &PaimonMysqlSync,
    ns: &str,
    found: &Dereferenced,
) {
    let Some(report) = found
        .jobs
        .preflight
        .as_ref()
        .filter(|p| p.created_table.is_some())
    else {
        return;
    };
    let statement = report.created_table.clone().unwrap_or_default();
    let note = format!(
        "sink.createTable created the MySQL table {}:\n{statement}",
        pms.spec.sink.table
    );
    publish(ctx, pms, EventType::Normal, "TableCreated", note).await;
    let told = pms_crds::contract::PreflightReport {
        created_table: None,
        ..report.clone()
    };
    let name = pms_crds::contract::preflight_name(&pms.name_any());
    let patch = serde_json::json!({"data": {pms_crds::contract::REPORT_KEY: serde_json::to_string_pretty(&told).unwrap_or_default()}});
    let api: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::namespaced(ctx.client.clone(), ns);
    if let Err(e) = api
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        warn!(configmap = %name, error = %e, "could not mark the created table as told");
    }
}

/// Steps 3 to 5 of a valid sync.
async fn build_and_apply(ctx: &Context, v: &Validated<'_>, found: &Dereferenced) -> Result<Action> {
    let now = k8s_openapi::jiff::Timestamp::now();
    // `spec.rollback`: a new spec that did not run ready in time is built as the last stable one.
    let asked = v.pms;
    let rollback = rollback::plan(asked, rollback_clock_stopped(asked), now);
    let mut rolled = asked.clone();
    if let Some(spec) = &rollback.spec {
        rolled.spec = spec.clone();
    }
    let v = &Validated {
        pms: &rolled,
        ..v.clone()
    };
    // Rolled back to a spec that keeps its checkpoints elsewhere (the edit also moved them:
    // configmap ↔ s3, another bucket): the workers run that spec and checkpoint there, so the
    // checkpoints are read there (else no savepoint or rescale would ever see its slots).
    let refound;
    let found = if rollback.spec.is_some() && rolled.spec.checkpoint != asked.spec.checkpoint {
        refound = dereference::dereference(&ctx.client, &v.namespace, &rolled).await?;
        &refound
    } else {
        found
    };
    // What the Deployments would run at the parallelism they run now, against what they run.
    let status = v.pms.status.as_ref();
    let mut at_applied = v.pms.clone();
    at_applied.spec.parallelism = status
        .and_then(|s| s.parallelism)
        .unwrap_or(v.pms.spec.parallelism);
    let restart_key = build::restart_key(&at_applied, &ctx.settings)?;
    // A key of an earlier operator (before `sha256:`) is taken over without a restart: it was
    // hashed another way, so it can't tell whether anything changed.
    let restarts = status
        .and_then(|s| s.restart_key.as_ref())
        .filter(|k| k.starts_with(build::RESTART_KEY_PREFIX))
        .is_some_and(|k| *k != restart_key);
    let gate_key = restart_gate::key(&v.namespace, &v.name);
    let queued = match restarts {
        true => queued_restart(ctx, v.pms, &gate_key),
        false => {
            ctx.restart_gate.unqueue(&gate_key);
            None
        }
    };
    if ctx.restart_gate.overdue(&gate_key) {
        let note = format!(
            "the operator's new worker spec has not run ready within {} of its restart: its place at              the restart gate goes to the next sync (this one keeps trying; see its conditions)",
            humantime_secs(ctx.restart_gate.hold_for())
        );
        publish(ctx, v.pms, EventType::Warning, "RestartPlaceReleased", note).await;
    }
    let restarts = restarts && queued.is_none();
    let mut facts = found.jobs.clone();
    facts.upgrade_to = (restarts && v.pms.spec.upgrade_mode == UpgradeMode::Stateless)
        .then(|| restart_key.clone());
    let plan = jobs::plan(v.pms, &facts, &found.savepoints, now);
    let running = savepoints::sync_running(v.pms, plan.workers_stopped);
    let upgrade = restarts && v.pms.spec.upgrade_mode == UpgradeMode::Savepoint;
    // Slot k's checkpoint, whatever parallelism wrote it (a rescale looks at old and new slots).
    let known = v.slots_known.max(v.pms.spec.parallelism);
    let by_slot: Vec<Option<&Checkpoint>> = (0..known)
        .map(|slot| found.checkpoint(&v.name, slot))
        .collect();
    let rescale = rescale::plan(v.pms, &by_slot, running, upgrade, now);
    // The Deployments run `rescale.slots` until a rescale's cut is taken.
    let mut effective = v.pms.clone();
    effective.spec.parallelism = rescale.slots;
    let v = &Validated {
        pms: &effective,
        slots_known: v.slots_known.max(rescale.slots),
        ..v.clone()
    };
    let checkpoints = &by_slot[..rescale.slots.min(known) as usize];
    // One pause at a time: a rescale's, else a savepoint's.
    let saves = savepoints::plan(
        v.pms,
        &found.savepoints,
        checkpoints,
        running && rescale.control.is_none(),
        now,
    );
    let control = rescale
        .control
        .clone()
        .unwrap_or_else(|| saves.control.clone());
    let desired = build::all(v, &plan, &control, &ctx.settings)?;
    let mut missing = build::missing_slot_config_maps(v.pms, &found.slot_config_maps);
    if plan.rebuild_job.is_some() {
        // Not listed (an already existing one answers 409): a request a slot while rebuilding.
        missing.extend(build::rebuild_checkpoint_config_maps(v.pms));
    }
    apply::create_missing(&ctx.client, &v.namespace, &missing).await?;
    // A queued restart keeps the workers as they are, as a cut under way does.
    let hold = rescale.hold() || queued.is_some();
    let applied = apply::apply(&ctx.client, &v.namespace, &v.name, &desired, hold).await?;
    apply::savepoints(&ctx.client, v.pms, &found.savepoints, &saves, &found.store).await?;
    if !applied.removed_slots.is_empty() {
        let note = format!("deleted {}", applied.removed_slots.join(", "));
        publish(ctx, v.pms, EventType::Normal, "SlotsRemoved", note).await;
    }
    let deployments: Vec<_> = applied.deployments.into_iter().map(Some).collect();
    let previous = v.pms.status.as_ref();
    let mut status = status::compute(
        v.pms,
        &deployments,
        checkpoints,
        None,
        previous,
        Some((&plan, &found.jobs)),
        rescale.status.as_ref(),
    );
    if let Some(s) = &saves.status {
        status.savepoints = Some(s.clone());
    }
    status.parallelism = Some(rescale.slots);
    status.restart_key = match hold {
        true => previous.and_then(|p| p.restart_key.clone()),
        false => Some(build::restart_key(v.pms, &ctx.settings)?),
    };
    // A restart holds its place at the gate until the new template runs, ready.
    let jobs_busy = busy_with(&plan);
    let rolled_out = deployments.iter().flatten().all(status::rolled_out);
    let ran_ready = status.phase == Some(SyncPhase::Running) && rolled_out && !hold && !jobs_busy;
    let restarted = ran_ready || status.phase == Some(SyncPhase::Suspended);
    let rollback_events = rollback.events.clone();
    let rollback_recheck = rollback.recheck;
    let rolled_back = rollback.rolled_back();
    (status.last_stable_spec, status.rollback) = rollback::record(asked, rollback, ran_ready);
    if let Some(why) = status.rollback.clone().filter(|_| rolled_back) {
        let why = why.message.unwrap_or_default();
        status::rolled_back(&mut status, previous, &why);
    }
    ctx.metrics
        .sync_rolled_back(&v.namespace, &v.name, rolled_back);
    update_status(ctx, v.pms, &v.namespace, status).await?;
    if restarted {
        ctx.restart_gate.release(&gate_key);
    }
    // Told once, when it joins the queue (it is woken, not polled, when a place frees).
    if let Some(Admission::Wait {
        holders,
        newly: true,
    }) = &queued
    {
        let note = format!(
            "the operator's new worker spec waits for a place: at most {} syncs restart at \
             once (--max-concurrent-restarts), each until it runs again (at most {}); now {}",
            ctx.restart_gate.limit(),
            humantime_secs(ctx.restart_gate.hold_for()),
            holders.join(", ")
        );
        publish(ctx, v.pms, EventType::Normal, "RestartQueued", note).await;
    }
    // After the status that records them (a lost status write then repeats a start, never
    // loses one): the one-shot triggers served, where a dropped status can't erase them.
    if jobs::ServedTriggers::of(v.pms).as_ref() != Some(&plan.served) {
        apply::record_served(&ctx.client, &v.namespace, &v.name, &plan.served).await?;
    }
    // After the status: an event is published once, by the reconcile that saved the change.
    let events = plan
        .events
        .into_iter()
        .chain(saves.events)
        .chain(rescale.events)
        .chain(rollback_events);
    for (type_, reason, note) in events {
        info!(sync = %v.name, %reason, %note, "event");
        publish(ctx, v.pms, type_, reason, note).await;
    }
    if let Some(result) = plan.verify.as_ref().and_then(|v| v.result.as_ref()) {
        ctx.metrics
            .verify_divergent_rows(&v.namespace, &v.name, result.divergent_rows());
    }
    // A rebuild, verify, savepoint or rescale under way (or a queued restart) is looked at
    // more often than a steady sync.
    let busy = jobs_busy || plan.verify_job || control.pause.is_some();
    ctx.s3_watch
        .saw(&v.namespace, &v.name, &found.store, &found.checkpoints);
    let next = if busy { RETRY } else { resync(v.pms) };
    Ok(Action::requeue(
        rollback_recheck.map_or(next, |r| r.min(next)),
    ))
}

/// A rebuild or restore under way, or the workers stopped for one.
fn busy_with(plan: &jobs::JobPlan) -> bool {
    plan.rebuild_job.is_some() || plan.restore_job.is_some() || plan.workers_stopped
}

/// Whether the workers can't show yet if a new spec runs (the persisted record says): the sync
/// is suspended, rebuilding or cutting for a rescale.
fn rollback_clock_stopped(pms: &PaimonMysqlSync) -> bool {
    pms.spec.state == pms_crds::SyncState::Suspended || restart_under_way(pms)
}

/// A rebuild, or a rescale's or upgrade's cut, under way (the persisted record says).
fn restart_under_way(pms: &PaimonMysqlSync) -> bool {
    pms.status.as_ref().is_some_and(|s| {
        s.phase == Some(SyncPhase::Rebuilding)
            || s.rescale
                .as_ref()
                .is_some_and(|r| matches!(r.phase, RescalePhase::Cutting | RescalePhase::Starting))
    })
}

/// Where `pms` stands at the operator's restart gate when its restart must wait (see
/// [`crate::restart_gate`]): only one the operator caused (the spec is the one last
/// reconciled: a new worker image or pod template) that has not started. One the user asked
/// for, or one under way (a cut or rebuild started before a new leader took over), takes a
/// place at once, so that it never stops half-way.
fn queued_restart(ctx: &Context, pms: &PaimonMysqlSync, key: &str) -> Option<Admission> {
    let status = pms.status.as_ref();
    let asked = status.and_then(|s| s.observed_generation) != pms.metadata.generation;
    let now = Instant::now();
    if asked || restart_under_way(pms) {
        ctx.restart_gate.take(key, now);
        return None;
    }
    Some(ctx.restart_gate.admit(key, now)).filter(|a| *a != Admission::Go)
}

/// `d` in whole seconds, as humantime writes it (`10m`).
fn humantime_secs(d: Duration) -> String {
    pms_crds::HumanDuration::from_secs(d.as_secs()).to_string()
}

/// The event of a phase change, if the phase changed: a Warning into `Failed` or `Degraded`
/// (with the reason), else a Normal one.
pub fn phase_event(
    old: Option<SyncPhase>,
    status: &PaimonMysqlSyncStatus,
) -> Option<(EventType, SyncPhase, String)> {
    let new = status.phase.filter(|new| old != Some(*new))?;
    let event = match new {
        SyncPhase::Failed | SyncPhase::Degraded => {
            let degraded = status.conditions.iter().find(|c| c.type_ == "Degraded");
            let note = degraded.map(|c| c.message.clone()).unwrap_or_default();
            (EventType::Warning, new, note)
        }
        _ => {
            let from = old.map_or("new", SyncPhase::as_str);
            (EventType::Normal, new, format!("{from} → {new}"))
        }
    };
    Some(event)
}

/// [`RESYNC`], or sooner when a periodic verify or savepoint comes more often.
fn resync(pms: &PaimonMysqlSync) -> Duration {
    let verify = pms
        .spec
        .verify
        .as_ref()
        .and_then(|v| v.interval)
        .map(|i| i.0);
    let savepoint = pms
        .spec
        .savepoint
        .as_ref()
        .and_then(|s| s.interval)
        .map(|i| i.0);
    [verify, savepoint]
        .into_iter()
        .flatten()
        .fold(RESYNC, Duration::min)
        .max(RETRY)
}

async fn update_status(
    ctx: &Context,
    pms: &PaimonMysqlSync,
    ns: &str,
    status: PaimonMysqlSyncStatus,
) -> Result<()> {
    let previous = pms.status.as_ref();
    if let Some(phase) = status.phase {
        ctx.metrics.sync_phase(ns, &pms.name_any(), phase);
    }
    if previous == Some(&status) {
        return Ok(());
    }
    let old = previous.and_then(|p| p.phase);
    let event = phase_event(old, &status);
    apply::apply_status(&ctx.client, ns, pms, &status).await?;
    let name = pms.name_any();
    // After the write: the reconcile that saved the change publishes it, once.
    if let Some((type_, new, note)) = event {
        info!(sync = %name, from = ?old, to = %new, "phase changed");
        publish(ctx, pms, type_, new.as_str(), note).await;
    }
    Ok(())
}

async fn cleanup(pms: &PaimonMysqlSync, ctx: &Context, ns: &str) -> Result<Action> {
    ctx.restart_gate
        .release(&restart_gate::key(ns, &pms.name_any()));
    ctx.s3_watch.forget(ns, &pms.name_any());
    let keep = pms.spec.checkpoint.retain_on_delete;
    let sync = pms.name_any();
    // Deleted with its checkpoints (and not handed to a database sync's pooled workers, which
    // go on with its consumer and claim): the workers, at their stop, remove its Paimon
    // consumers (which would keep snapshots from expiring for good) and its claim of the MySQL
    // table (which would refuse a sync of another name).
    let release = !keep && !pms.annotations().contains_key(HANDED_OVER_ANNOTATION);
    if release && !release_asked(&ctx.client, ns, &sync).await? {
        let control = Control {
            release_on_stop: true,
            ..Default::default()
        };
        apply::apply_one(&ctx.client, ns, &build::control_config_map(pms, &control)).await?;
        // A suspended sync has no worker to ask. (Pods can't tell it: a sync deleted right
        // after it was made has a worker about to start, which gets the ask.)
        if pms.spec.state == pms_crds::SyncState::Suspended {
            publish(
                ctx,
                pms,
                EventType::Warning,
                "ReleaseSkipped",
                release_skipped(pms, ns),
            )
            .await;
        }
    }
    if let Some(left) = apply::delete_all(&ctx.client, ns, &sync, keep, deleting_for(pms)).await? {
        return Err(Error::Waiting(format!(
            "{left} worker pod(s) of {ns}/{sync} still stopping; the rest is deleted once they are gone"
        )));
    }
    if !keep {
        // Checkpoints on S3 too (savepoints outlive the sync, with their data).
        match store::CheckpointStore::of(&ctx.client, ns, pms).await? {
            Some(store) => store.delete_checkpoints(ns, &sync).await?,
            None => {
                let note = format!(
                    "the checkpoints on S3 ({}) were not removed: the credentials Secret of \
                     checkpoint.s3.credentialsSecretRef is gone or incomplete; remove them by hand",
                    pms.spec
                        .checkpoint
                        .s3
                        .as_ref()
                        .map(|s3| format!(
                            "s3://{}/{}",
                            s3.bucket,
                            s3.prefix.as_deref().unwrap_or_default()
                        ))
                        .unwrap_or_default()
                );
                publish(ctx, pms, EventType::Warning, "CheckpointsLeft", note).await;
            }
        }
    }
    ctx.metrics.forget_sync(ns, &pms.name_any());
    let note = match (keep, release) {
        (true, _) => "removed the workers, kept the checkpoints",
        (false, false) => "removed the workers and their checkpoints; the pooled workers take the table on",
        (false, true) => {
            "removed the workers and their checkpoints; the workers were asked to remove, at their stop, the \
             Paimon consumer and the claim of the MySQL table (each logs what it did)"
        }
    };
    publish(ctx, pms, EventType::Normal, "Deleted", note.into()).await;
    Ok(Action::await_change())
}

/// What a sync deleted with no worker running leaves outside the cluster, and how to remove it.
fn release_skipped(pms: &PaimonMysqlSync, ns: &str) -> String {
    let consumer = consumer_of(pms, ns);
    let slots = match pms.spec.parallelism {
        0 | 1 => String::new(),
        n => format!(" (one per slot: -slot0 to -slot{})", n - 1),
    };
    format!(
        "no worker of the deleted sync is running to release what it holds outside the cluster: its Paimon \
         consumer {consumer}{slots} (keeps snapshots from expiring) and its claim of MySQL table {} (refuses a \
         sync of another name). Remove them with `pms-worker reset` and the sync's config, or by hand: the file \
         consumer/consumer-{consumer} of the Paimon table (each slot's), and `DELETE FROM _paimon_sync_targets \
         WHERE sync_name = '{}'`",
        pms.spec.sink.table,
        contract::external_name(Some(ns), &pms.name_any()),
    )
}

/// On a sync the database sync deletes because its table moves to the pooled workers: its
/// consumer and claim are theirs now, not released at its workers' stop.
pub const HANDED_OVER_ANNOTATION: &str = "paimonsync.io/handed-over";

/// The Paimon consumer id of `pms`, without a slot (with several slots, slot k's appends
/// `-slot<k>`).
fn consumer_of(pms: &PaimonMysqlSync, ns: &str) -> String {
    let sync = contract::external_name(Some(ns), &pms.name_any());
    contract::consumer_id(
        pms.spec.source.consumer_id.as_deref(),
        &sync,
        contract::Slot::SINGLE,
    )
}

/// Whether the workers of `sync` were asked already to release at their stop (an earlier pass
/// of its deletion).
async fn release_asked(client: &kube::Client, ns: &str, sync: &str) -> Result<bool> {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let name = contract::control_name(sync);
    let control = cms
        .get_opt(&name)
        .await
        .map_err(|e| Error::api::<ConfigMap>(Verb::Get, ns, &name, e))?;
    Ok(control
        .and_then(|cm| cm.data?.remove(contract::CONTROL_KEY))
        .and_then(|text| serde_json::from_str::<Control>(&text).ok())
        .is_some_and(|c| c.release_on_stop))
}

/// An Event about `object` (a sync or a database sync); a failure to publish is only logged.
pub(crate) async fn publish<K: Resource<DynamicType = ()>>(
    ctx: &Context,
    object: &K,
    type_: EventType,
    reason: &str,
    note: String,
) {
    let reference: ObjectReference = object.object_ref(&());
    let event = Event {
        type_,
        reason: reason.into(),
        note: Some(note),
        action: "Reconcile".into(),
        secondary: None,
    };
    if let Err(e) = ctx.recorder.publish(&event, &reference).await {
        warn!(error = %e, "could not publish an event");
    }
}

#[cfg(test)]
mod tests;
