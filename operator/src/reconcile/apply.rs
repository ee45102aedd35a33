//! Step 4: server-side apply of everything built (field manager [`MANAGER`]), then deletion
//! of what the sync no longer wants; and the finalizer's cleanup.
//!
//! Ownership is by label: an object labelled with the sync is the operator's, except the
//! checkpoint ConfigMaps, which the workers write. Those are only deleted with the resource
//! (and not even then with `retainOnDelete`).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Service, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Api, Client, Resource, ResourceExt};
use pms_crds::contract::{self, Component, COMPONENT_LABEL, MANAGER};
use pms_crds::{PaimonMysqlSync, PaimonMysqlSyncSavepoint, PaimonMysqlSyncSavepointSpec};
use serde::de::DeserializeOwned;
use serde::Serialize;
use tracing::{info, warn};

use super::build::Desired;
use super::jobs::{ServedTriggers, JOB_ID, SERVED_ANNOTATION};
use super::savepoints::{data_name, SavepointPlan, DATA_KEY};
use super::store::CheckpointStore;
use crate::error::{Error, Result, Verb};

/// A namespaced Kubernetes object we can apply, list and delete.
pub trait Namespaced:
    Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
    + Clone
    + std::fmt::Debug
    + Serialize
    + DeserializeOwned
{
}

impl<K> Namespaced for K where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + Serialize
        + DeserializeOwned
{
}

/// What apply did that the next steps need.
#[derive(Debug, Default)]
pub struct Applied {
    /// The slot Deployments as the API server returned them (with their status), slot k's
    /// at index k.
    pub deployments: Vec<Deployment>,
    /// Deployments of slots the sync no longer has.
    pub removed_slots: Vec<String>,
}

/// Applies every object of one sync, RBAC first so the workers can read their config when
/// they start, then deletes the sync's objects that are not in `desired`.
/// With `hold`, the slot Deployments and the worker config stay as they are (workers pausing
/// at a cut before a restart).
pub async fn apply(
    client: &Client,
    ns: &str,
    sync: &str,
    desired: &Desired,
    hold: bool,
) -> Result<Applied> {
    apply_one(client, ns, &desired.service_account).await?;
    apply_one(client, ns, &desired.role).await?;
    apply_one(client, ns, &desired.role_binding).await?;
    if !hold {
        apply_one(client, ns, &desired.config).await?;
    }
    apply_one(client, ns, &desired.control).await?;
    for report in &desired.reports {
        apply_one(client, ns, report).await?;
    }
    apply_one(client, ns, &desired.metrics_service).await?;
    let mut deployments = Vec::with_capacity(desired.deployments.len());
    let api: Api<Deployment> = Api::namespaced(client.clone(), ns);
    for d in &desired.deployments {
        let current = match hold {
            true => api
                .get_opt(&d.name_any())
                .await
                .map_err(|e| Error::api::<Deployment>(Verb::Get, ns, &d.name_any(), e))?,
            false => None,
        };
        deployments.push(match current {
            Some(current) => current,
            None => apply_one(client, ns, d).await?,
        });
    }
    let slots: Vec<String> = desired.deployments.iter().map(|d| d.name_any()).collect();
    // Foreground: a removed slot's pod is gone before its Deployment is.
    let fg = DeleteParams::foreground();
    let removed_slots = match hold {
        true => Vec::new(),
        false => delete_unwanted::<Deployment>(client, ns, sync, &slots, true, fg).await?,
    };
    let mut removed = Vec::new();
    let service = [desired.metrics_service.name_any()];
    let identity = [desired.role.name_any()];
    let configs: Vec<String> = [&desired.config, &desired.control]
        .into_iter()
        .chain(&desired.reports)
        .map(|c| c.name_any())
        .collect();
    let jobs: Vec<String> = desired.jobs.iter().map(|j| j.name_any()).collect();
    // A finished (or no longer wanted) rebuild or verify Job goes, its pod with it.
    delete_more::<Job>(client, ns, sync, &jobs, &mut removed).await?;
    for job in &desired.jobs {
        ensure_job(client, ns, job).await?;
    }
    delete_more::<Service>(client, ns, sync, &service, &mut removed).await?;
    delete_more::<RoleBinding>(client, ns, sync, &identity, &mut removed).await?;
    delete_more::<Role>(client, ns, sync, &identity, &mut removed).await?;
    delete_more::<ServiceAccount>(client, ns, sync, &identity, &mut removed).await?;
    // The workers' checkpoints are not in `desired`, and stay.
    delete_more::<ConfigMap>(client, ns, sync, &configs, &mut removed).await?;
    if !removed.is_empty() {
        info!(%sync, removed = %removed.join(", "), "deleted objects the sync no longer needs");
    }
    Ok(Applied {
        deployments,
        removed_slots,
    })
}

/// Creates each of `config_maps` that is still missing (one made meanwhile is left as it is).
pub async fn create_missing(client: &Client, ns: &str, config_maps: &[ConfigMap]) -> Result<()> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    for cm in config_maps {
        match api.create(&PostParams::default(), cm).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(Error::api::<ConfigMap>(Verb::Apply, ns, &cm.name_any(), e)),
        }
    }
    Ok(())
}

/// How long a deletion waits for the workers to stop (their grace period is 60 s) before it
/// removes what they need to stop cleanly.
pub const WORKERS_STOP_WITHIN: std::time::Duration = std::time::Duration::from_secs(90);

/// Everything labelled as this sync's (what ownerReferences would collect, without relying on
/// a garbage collector), plus the checkpoint ConfigMaps unless they are to be kept. The
/// workers go first: a stopping worker flushes and writes its last checkpoint, which needs its
/// Role, config and checkpoint ConfigMap still there. While its pods are still stopping and
/// the deletion (`deleting_for`) is younger than [`WORKERS_STOP_WITHIN`], nothing else is
/// deleted and `Some(pods left)` says to come back (the reconcile requeues; it does not wait).
pub async fn delete_all(
    client: &Client,
    ns: &str,
    sync: &str,
    keep_checkpoints: bool,
    deleting_for: std::time::Duration,
) -> Result<Option<usize>> {
    let bg = DeleteParams::background;
    delete_unwanted::<Deployment>(client, ns, sync, &[], false, bg()).await?;
    delete_unwanted::<Job>(client, ns, sync, &[], false, bg()).await?;
    let left = worker_pods(client, ns, sync).await?;
    if left > 0 {
        if deleting_for < WORKERS_STOP_WITHIN {
            return Ok(Some(left));
        }
        warn!(%sync, pods = left, "worker pods still there after {} s; removing the rest anyway",
              WORKERS_STOP_WITHIN.as_secs());
    }
    delete_unwanted::<Service>(client, ns, sync, &[], false, bg()).await?;
    delete_unwanted::<RoleBinding>(client, ns, sync, &[], false, bg()).await?;
    delete_unwanted::<Role>(client, ns, sync, &[], false, bg()).await?;
    delete_unwanted::<ServiceAccount>(client, ns, sync, &[], false, bg()).await?;
    delete_unwanted::<ConfigMap>(client, ns, sync, &[], keep_checkpoints, bg()).await?;
    // A rebuild's new generation keeps its checkpoints as the sync `<sync>-rebuild` (an
    // interrupted rebuild leaves them): they go too, or a sync created again under this name
    // would find them.
    let rebuild = contract::rebuild_name(sync);
    delete_unwanted::<ConfigMap>(client, ns, &rebuild, &[], keep_checkpoints, bg()).await?;
    Ok(None)
}

/// How many of the sync's worker pods are still there.
async fn worker_pods(client: &Client, ns: &str, sync: &str) -> Result<usize> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let selector = contract::sync_selector(sync);
    Ok(pods
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| Error::api::<Pod>(Verb::List, ns, &selector, e))?
        .items
        .len())
}

/// Deletes the unwanted objects of kind `K` (checkpoints kept), adding `Kind name` to
/// `removed` for the log.
async fn delete_more<K: Namespaced>(
    client: &Client,
    ns: &str,
    sync: &str,
    wanted: &[String],
    removed: &mut Vec<String>,
) -> Result<()> {
    let names = delete_unwanted::<K>(client, ns, sync, wanted, true, DeleteParams::background());
    let kind = K::kind(&());
    removed.extend(names.await?.into_iter().map(|n| format!("{kind} {n}")));
    Ok(())
}

/// Carries out a savepoint plan: statuses, the data of a completed one (owned by it, or on
/// S3), the savepoints the spec asks for, and the ones history trims (with their data).
pub async fn savepoints(
    client: &Client,
    pms: &PaimonMysqlSync,
    existing: &[PaimonMysqlSyncSavepoint],
    plan: &SavepointPlan,
    store: &CheckpointStore,
) -> Result<()> {
    let ns = pms.namespace().unwrap_or_default();
    let sync = pms.name_any();
    let api: Api<PaimonMysqlSyncSavepoint> = Api::namespaced(client.clone(), &ns);
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    if let Some((name, data)) = &plan.data {
        let body = serde_json::to_string_pretty(data).expect("savepoint data serializes");
        if !store.write_savepoint_data(&ns, &sync, name, &body).await? {
            apply_savepoint_data(client, &ns, &sync, existing, name, body).await?;
        }
    }
    for (name, status) in &plan.statuses {
        let patch = serde_json::json!({ "status": status });
        api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|e| Error::api::<PaimonMysqlSyncSavepoint>(Verb::PatchStatus, &ns, name, e))?;
    }
    for name in &plan.create {
        let mut sp = PaimonMysqlSyncSavepoint::new(
            name,
            PaimonMysqlSyncSavepointSpec {
                sync_name: sync.clone(),
            },
        );
        sp.metadata.namespace = Some(ns.clone());
        sp.metadata.labels = Some(contract::labels(&sync, Component::Savepoint, None));
        info!(%sync, savepoint = %name, "taking a savepoint (spec.savepoint)");
        match api.create(&PostParams::default(), &sp).await {
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            other => {
                other.map_err(|e| {
                    Error::api::<PaimonMysqlSyncSavepoint>(Verb::Apply, &ns, name, e)
                })?;
            }
        }
    }
    for name in &plan.delete {
        info!(%sync, savepoint = %name, "deleting a savepoint beyond spec.savepoint.history");
        for result in [
            api.delete(name, &DeleteParams::background())
                .await
                .map(drop),
            cms.delete(&data_name(name), &DeleteParams::background())
                .await
                .map(drop),
        ] {
            match result {
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                other => other.map_err(|e| {
                    Error::api::<PaimonMysqlSyncSavepoint>(Verb::Delete, &ns, name, e)
                })?,
            }
        }
    }
    let kept: Vec<String> = existing
        .iter()
        .map(|s| s.name_any())
        .filter(|n| !plan.delete.contains(n))
        .collect();
    store.forget_savepoints(&ns, &sync, &kept).await
}

/// The data of savepoint `name` in `<name>-data`, owned by the savepoint.
async fn apply_savepoint_data(
    client: &Client,
    ns: &str,
    sync: &str,
    existing: &[PaimonMysqlSyncSavepoint],
    name: &str,
    body: String,
) -> Result<()> {
    let owner = existing
        .iter()
        .find(|s| s.name_any() == name)
        .and_then(|s| s.controller_owner_ref(&()));
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(data_name(name)),
            namespace: Some(ns.to_string()),
            labels: Some(contract::labels(sync, Component::Savepoint, None)),
            owner_references: owner.map(|o| vec![o]),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(DATA_KEY.to_string(), body)])),
        ..Default::default()
    };
    apply_one(client, ns, &cm).await.map(drop)
}

/// Creates `job` unless it exists for the same run (annotation [`JOB_ID`]); one of another
/// run is deleted first. A Job's pod template can't change, so it is never applied over.
async fn ensure_job(client: &Client, ns: &str, job: &Job) -> Result<()> {
    let api: Api<Job> = Api::namespaced(client.clone(), ns);
    let name = job.name_any();
    let id = |j: &Job| j.annotations().get(JOB_ID).cloned();
    let existing = api
        .get_opt(&name)
        .await
        .map_err(|e| Error::api::<Job>(Verb::Get, ns, &name, e))?;
    match existing {
        Some(j) if id(&j) == id(job) => return Ok(()),
        Some(_) => {
            api.delete(&name, &DeleteParams::background())
                .await
                .map_err(|e| Error::api::<Job>(Verb::Delete, ns, &name, e))?;
        }
        None => {}
    }
    info!(job = %name, id = ?id(job), "starting a job");
    api.create(&PostParams::default(), job)
        .await
        .map_err(|e| Error::api::<Job>(Verb::Apply, ns, &name, e))?;
    Ok(())
}

pub async fn apply_one<K: Namespaced>(client: &Client, ns: &str, obj: &K) -> Result<K> {
    let api: Api<K> = Api::namespaced(client.clone(), ns);
    let name = obj.name_any();
    let params = PatchParams::apply(MANAGER).force();
    api.patch(&name, &params, &Patch::Apply(obj))
        .await
        .map_err(|e| Error::api::<K>(Verb::Apply, ns, &name, e))
}

/// Records the one-shot triggers served in the sync's annotation ([`SERVED_ANNOTATION`]): a
/// merge patch of that one key, the rest of the metadata left to its owners (GitOps).
pub async fn record_served(
    client: &Client,
    ns: &str,
    sync: &str,
    served: &ServedTriggers,
) -> Result<()> {
    let api: Api<PaimonMysqlSync> = Api::namespaced(client.clone(), ns);
    let value = serde_json::to_string(served).unwrap_or_default();
    let patch = serde_json::json!({"metadata": {"annotations": {SERVED_ANNOTATION: value}}});
    api.patch(sync, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| Error::api::<PaimonMysqlSync>(Verb::Apply, ns, sync, e))?;
    Ok(())
}

/// Server-side applies `status` to `obj`, conditional on the version this reconcile read: a
/// status computed from an older spec, or by a leader that was frozen meanwhile, is refused
/// ([`Error::Changed`]: reconciled again) instead of overwriting a newer one.
pub async fn apply_status<K: Namespaced>(
    client: &Client,
    ns: &str,
    obj: &K,
    status: &impl Serialize,
) -> Result<()> {
    let api: Api<K> = Api::namespaced(client.clone(), ns);
    let patch = serde_json::json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "metadata": {"resourceVersion": obj.resource_version()},
        "status": status,
    });
    let name = obj.name_any();
    let params = PatchParams::apply(MANAGER).force();
    api.patch_status(&name, &params, &Patch::Apply(&patch))
        .await
        .map(drop)
        .map_err(|e| match e {
            kube::Error::Api(s) if s.code == 409 => Error::Changed(name.clone()),
            e => Error::api::<K>(Verb::PatchStatus, ns, &name, e),
        })
}

/// Deletes this sync's objects of kind `K` that [`unwanted`] picks; returns their names.
async fn delete_unwanted<K: Namespaced>(
    client: &Client,
    ns: &str,
    sync: &str,
    wanted: &[String],
    keep_checkpoints: bool,
    params: DeleteParams,
) -> Result<Vec<String>> {
    let api: Api<K> = Api::namespaced(client.clone(), ns);
    let selector = contract::sync_selector(sync);
    let found = api
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| Error::api::<K>(Verb::List, ns, &selector, e))?;
    let mut deleted = Vec::new();
    for obj in found {
        let name = obj.name_any();
        if !unwanted(&name, obj.labels(), wanted, keep_checkpoints) {
            continue;
        }
        match api.delete(&name, &params).await {
            Ok(_) => deleted.push(name),
            // Already gone (another delete, or the garbage collector): nothing to do.
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(Error::api::<K>(Verb::Delete, ns, &name, e)),
        }
    }
    Ok(deleted)
}

/// Whether one of the sync's objects goes: not wanted, and not a checkpoint to keep.
pub fn unwanted(
    name: &str,
    labels: &BTreeMap<String, String>,
    wanted: &[String],
    keep_checkpoints: bool,
) -> bool {
    let component = labels.get(COMPONENT_LABEL).map(String::as_str);
    // A savepoint's data belongs to the savepoint (which outlives the sync), not to the sync.
    if component == Some(Component::Savepoint.as_str()) {
        return false;
    }
    let checkpoint = component == Some(Component::Checkpoint.as_str());
    let kept = wanted.iter().any(|w| w == name) || (checkpoint && keep_checkpoints);
    !kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwanted_objects_go_but_checkpoints_stay_unless_told() {
        let worker = contract::labels("s", Component::Worker, Some(2));
        let checkpoint = contract::labels("s", Component::Checkpoint, Some(2));
        let wanted = ["s-slot-0".to_string(), "s-slot-1".to_string()];
        assert!(!unwanted("s-slot-1", &worker, &wanted, true));
        assert!(unwanted("s-slot-2", &worker, &wanted, true));
        assert!(!unwanted("s-checkpoint-2", &checkpoint, &[], true));
        assert!(unwanted("s-checkpoint-2", &checkpoint, &[], false));
        let savepoint = contract::labels("s", Component::Savepoint, None);
        assert!(
            !unwanted("sp-data", &savepoint, &[], false),
            "savepoint data outlives the sync"
        );
    }
}
