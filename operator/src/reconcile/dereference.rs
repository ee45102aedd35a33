//! Step 1: fetch everything a reconcile reads besides the resource itself, into a plain
//! struct, so that every later step but apply is pure.
//!
//! Of a Secret only the key names are kept: values are dropped on arrival and never reach
//! logs, status, events or errors. The one exception is `checkpoint.s3`'s Secret, whose values
//! go straight into the S3 client of [`CheckpointStore`] (which never prints them).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kube::api::ListParams;
use kube::{Api, Client, ResourceExt};
use pms_crds::contract::{
    self, Checkpoint, Component, RebuildRequired, WorkerFailure, CHECKPOINT_KEY, LAST_ERROR_KEY,
    REBUILD_REQUIRED_KEY, REPORT_KEY,
};
use pms_crds::{PaimonMysqlSync, PaimonMysqlSyncSavepoint};
use tracing::debug;

use super::jobs::{JobFacts, JOB_ID};
use super::secret::get_secret;
use super::store::{checkpoint_secret_name, CheckpointStore};
use crate::error::{Error, Result, Verb};
use k8s_openapi::jiff::Timestamp;

/// What a referenced Secret looks like, without its values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretKeys {
    pub name: String,
    /// `None`: there is no such Secret.
    pub keys: Option<BTreeSet<String>>,
}

/// Everything the other steps read from the cluster.
#[derive(Clone, Debug, Default)]
pub struct Dereferenced {
    /// `sink.credentialsSecretRef`, when set.
    pub mysql_secret: Option<SecretKeys>,
    /// `source.s3.credentialsSecretRef`, when set.
    pub s3_secret: Option<SecretKeys>,
    /// `checkpoint.s3.credentialsSecretRef`, when set.
    pub checkpoint_s3_secret: Option<SecretKeys>,
    /// `sink.tls.caSecretRef` and `sink.tls.clientCertSecretRef`, when set.
    pub tls_ca_secret: Option<SecretKeys>,
    pub tls_client_secret: Option<SecretKeys>,
    /// `source.kerberos.keytabSecretRef`, when set.
    pub keytab_secret: Option<SecretKeys>,
    /// Where the checkpoints and savepoint data live.
    pub store: CheckpointStore,
    /// The workers' checkpoints of this sync (any parallelism), by ConfigMap name (on S3: the
    /// name their ConfigMap would have). One without a readable checkpoint is left out.
    pub checkpoints: BTreeMap<String, Checkpoint>,
    /// The slots whose checkpoint ConfigMap exists (the operator makes the missing ones of
    /// the current slots, so no other sync's worker can take their names first).
    pub slot_config_maps: BTreeSet<u32>,
    /// Rebuild and verify: reports, notes, Jobs, worker pods.
    pub jobs: JobFacts,
    /// The `PaimonMysqlSyncSavepoint`s of this sync (`spec.syncName`).
    pub savepoints: Vec<PaimonMysqlSyncSavepoint>,
}

impl Dereferenced {
    /// The checkpoint of slot `slot`, whatever parallelism it was written for.
    pub fn checkpoint(&self, sync: &str, slot: u32) -> Option<&Checkpoint> {
        self.checkpoints.get(&contract::checkpoint_name(sync, slot))
    }
}

pub async fn dereference(client: &Client, ns: &str, pms: &PaimonMysqlSync) -> Result<Dereferenced> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
    let mysql_secret = match &pms.spec.sink.credentials_secret_ref {
        Some(r) => Some(secret_keys(&secrets, ns, &r.name).await?),
        None => None,
    };
    let s3_ref = pms.spec.source.s3.as_ref();
    let s3_secret = match s3_ref.and_then(|s| s.credentials_secret_ref.as_ref()) {
        Some(r) => Some(secret_keys(&secrets, ns, &r.name).await?),
        None => None,
    };
    let tls = &pms.spec.sink.tls;
    let tls_ca_secret = match &tls.ca_secret_ref {
        Some(r) => Some(secret_keys(&secrets, ns, &r.name).await?),
        None => None,
    };
    let tls_client_secret = match &tls.client_cert_secret_ref {
        Some(r) => Some(secret_keys(&secrets, ns, &r.name).await?),
        None => None,
    };
    let keytab_ref = pms.spec.source.kerberos.as_ref();
    let keytab_secret = match keytab_ref.and_then(|k| k.keytab_secret_ref.as_ref()) {
        Some(r) => Some(secret_keys(&secrets, ns, &r.name).await?),
        None => None,
    };
    // Read once: its key names for validation, its values for the S3 client.
    let (checkpoint_s3_secret, checkpoint_secret) = match checkpoint_secret_name(pms) {
        Some(name) => {
            let secret = get_secret(&secrets, ns, name).await?;
            (Some(keys_of(name, secret.as_ref())), secret)
        }
        None => (None, None),
    };
    let sync = pms.name_any();
    let SlotConfigMaps {
        mut checkpoints,
        mut notes,
        slots,
    } = checkpoints(client, ns, &sync).await?;
    // Without its Secret there is no store to read: validation says why.
    let store = CheckpointStore::with_secret(pms, checkpoint_secret.as_ref())?.unwrap_or_default();
    if let Some(on_s3) = store.s3_checkpoints(ns, &sync).await? {
        checkpoints = on_s3;
    }
    notes.drop_outdated(&sync, &checkpoints);
    let jobs = job_facts(client, ns, &sync, notes).await?;
    let savepoints =
        crate::undecodable::list::<PaimonMysqlSyncSavepoint>(client, ns, &ListParams::default())
            .await?
            .into_iter()
            .filter(|s| s.spec.sync_name == sync)
            .collect();
    Ok(Dereferenced {
        savepoints,
        mysql_secret,
        s3_secret,
        checkpoint_s3_secret,
        tls_ca_secret,
        tls_client_secret,
        keytab_secret,
        store,
        checkpoints,
        slot_config_maps: slots,
        jobs,
    })
}

/// A Secret's key names (a metadata read can't show them, so the Secret is read whole and
/// its values dropped here).
async fn secret_keys(secrets: &Api<Secret>, ns: &str, name: &str) -> Result<SecretKeys> {
    Ok(keys_of(name, get_secret(secrets, ns, name).await?.as_ref()))
}

/// The key names of Secret `name` (`None`: there is none).
fn keys_of(name: &str, secret: Option<&Secret>) -> SecretKeys {
    let keys = secret.map(|s| {
        let data = s.data.iter().flatten().map(|(k, _)| k.clone());
        data.chain(s.string_data.iter().flatten().map(|(k, _)| k.clone()))
            .collect()
    });
    SecretKeys {
        name: name.to_string(),
        keys,
    }
}

/// The checkpoint ConfigMaps of one sync, by label: also those of slots a previous, larger
/// parallelism had (the Role must still name them, a rescale reads them); and the workers'
/// notes that only a rebuild can go on, by slot.
async fn checkpoints(client: &Client, ns: &str, sync: &str) -> Result<SlotConfigMaps> {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let selector = contract::component_selector(sync, Component::Checkpoint);
    let list = cms
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| Error::api::<ConfigMap>(Verb::List, ns, &selector, e))?;
    Ok(slot_config_maps(sync, list.items))
}

/// What the ConfigMaps labelled as `sync`'s checkpoints hold. Only a slot's own ConfigMap
/// counts: any worker may create ConfigMaps (RBAC can't limit `create` by name), so labels
/// alone could forge another sync's note or checkpoint.
fn slot_config_maps(sync: &str, labelled: Vec<ConfigMap>) -> SlotConfigMaps {
    let own: Vec<(u32, ConfigMap)> = labelled
        .into_iter()
        .filter_map(|cm| {
            let slot = cm.labels().get(contract::SLOT_LABEL)?.parse::<u32>().ok()?;
            (cm.name_any() == contract::checkpoint_name(sync, slot)).then_some((slot, cm))
        })
        .collect();
    let notes = WorkerNotes {
        rebuild_required: own
            .iter()
            .filter_map(|(slot, cm)| Some((*slot, parse_data(cm, REBUILD_REQUIRED_KEY)?)))
            .collect(),
        failures: own
            .iter()
            .filter_map(|(slot, cm)| Some((*slot, parse_data(cm, LAST_ERROR_KEY)?)))
            .collect(),
    };
    let checkpoints = own
        .iter()
        .filter_map(|(_, cm)| {
            let parsed = parse_checkpoint(cm);
            if parsed.is_none() {
                debug!(configmap = %cm.name_any(), "no readable checkpoint in it (yet)");
            }
            Some((cm.name_any(), parsed?))
        })
        .collect();
    SlotConfigMaps {
        checkpoints,
        notes,
        slots: own.iter().map(|(slot, _)| *slot).collect(),
    }
}

/// A sync's slot ConfigMaps, as [`checkpoints`] read them.
struct SlotConfigMaps {
    checkpoints: BTreeMap<String, Checkpoint>,
    notes: WorkerNotes,
    /// The slots whose ConfigMap exists (with a checkpoint or not).
    slots: BTreeSet<u32>,
}

/// The restarts of the worker containers of `pods`, summed by their slot label.
fn restarts_by_slot(pods: &[Pod]) -> BTreeMap<u32, i32> {
    let mut by_slot = BTreeMap::new();
    for pod in pods {
        let Some(slot) = pod
            .labels()
            .get(contract::SLOT_LABEL)
            .and_then(|s| s.parse().ok())
        else {
            continue;
        };
        let statuses = pod
            .status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref());
        let restarts: i32 = statuses
            .iter()
            .flat_map(|s| s.iter())
            .map(|c| c.restart_count)
            .sum();
        *by_slot.entry(slot).or_insert(0) += restarts;
    }
    by_slot
}

/// What workers that stopped on an error left in their checkpoint ConfigMaps, by slot.
struct WorkerNotes {
    rebuild_required: Vec<(u32, RebuildRequired)>,
    failures: Vec<(u32, WorkerFailure)>,
}

impl WorkerNotes {
    /// Leaves out the notes older than their slot's checkpoint: a later run of the slot got
    /// on (a ConfigMap checkpoint replaces the notes beside it; an S3 one can't).
    fn drop_outdated(&mut self, sync: &str, checkpoints: &BTreeMap<String, Checkpoint>) {
        let current = |slot: u32, at: &str| {
            let Some(cp) = checkpoints.get(&contract::checkpoint_name(sync, slot)) else {
                return true;
            };
            match (at.parse::<Timestamp>(), cp.updated.parse::<Timestamp>()) {
                (Ok(noted), Ok(checkpointed)) => noted >= checkpointed,
                _ => true,
            }
        };
        self.rebuild_required
            .retain(|(slot, n)| current(*slot, &n.at));
        self.failures.retain(|(slot, n)| current(*slot, &n.at));
    }
}

/// The reports of the rebuild and verify, their Jobs, and how many worker pods remain.
async fn job_facts(client: &Client, ns: &str, sync: &str, notes: WorkerNotes) -> Result<JobFacts> {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let jobs: Api<Job> = Api::namespaced(client.clone(), ns);
    let failed = |name: String| {
        let jobs = jobs.clone();
        async move {
            let job = jobs
                .get_opt(&name)
                .await
                .map_err(|e| Error::api::<Job>(Verb::Get, ns, &name, e))?;
            Ok::<_, Error>(
                job.filter(job_failed)
                    .and_then(|j| j.annotations().get(JOB_ID).cloned()),
            )
        }
    };
    // Pods, not the Deployments' `status.replicas`, which leaves out terminating pods: a
    // worker in its grace period still holds its slot lock and may still write, and a rebuild
    // or restore Job started beside it would find the slot taken, or race its last flush.
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let selector = contract::component_selector(sync, Component::Worker);
    let worker_pods = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| Error::api::<Pod>(Verb::List, ns, &selector, e))?
        .items;
    Ok(JobFacts {
        rebuild_report: report(&cms, ns, &contract::rebuild_name(sync)).await?,
        verify_report: report(&cms, ns, &contract::verify_name(sync)).await?,
        rebuild_required: notes.rebuild_required,
        worker_failures: notes.failures,
        worker_restarts: restarts_by_slot(&worker_pods),
        worker_pods: worker_pods.len() as i32,
        rebuild_job_failed: failed(contract::rebuild_name(sync)).await?,
        verify_job_failed: failed(contract::verify_name(sync)).await?,
        restore_report: report(&cms, ns, &contract::restore_name(sync)).await?,
        restore_job_failed: failed(contract::restore_name(sync)).await?,
        // Decided by the reconcile, which knows what the workers run.
        upgrade_to: None,
        preflight: report(&cms, ns, &contract::preflight_name(sync)).await?,
    })
}

/// The report a worker wrote into ConfigMap `name`, if any.
async fn report<T: serde::de::DeserializeOwned>(
    cms: &Api<ConfigMap>,
    ns: &str,
    name: &str,
) -> Result<Option<T>> {
    let cm = cms
        .get_opt(name)
        .await
        .map_err(|e| Error::api::<ConfigMap>(Verb::Get, ns, name, e))?;
    Ok(cm.as_ref().and_then(|cm| parse_data(cm, REPORT_KEY)))
}

/// Kubernetes gave up on the Job (its backoff limit, 0 for ours, was reached).
fn job_failed(job: &Job) -> bool {
    let status = job.status.as_ref();
    let condition = status
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Failed" && c.status == "True"));
    condition || status.and_then(|s| s.failed).unwrap_or(0) > 0
}

/// A JSON document a worker wrote under `key`; `None` when absent or unreadable.
fn parse_data<T: serde::de::DeserializeOwned>(cm: &ConfigMap, key: &str) -> Option<T> {
    serde_json::from_str(cm.data.as_ref()?.get(key)?).ok()
}

/// The checkpoint in a ConfigMap the worker wrote; `None` when absent or unreadable.
pub fn parse_checkpoint(cm: &ConfigMap) -> Option<Checkpoint> {
    parse_data(cm, CHECKPOINT_KEY)
}

/// The names of the Secrets `pms` refers to (a change of one reconciles it).
pub fn referenced_secrets(pms: &PaimonMysqlSync) -> Vec<&str> {
    let spec = &pms.spec;
    let s3 = spec.source.s3.as_ref();
    [
        spec.sink
            .credentials_secret_ref
            .as_ref()
            .map(|r| r.name.as_str()),
        s3.and_then(|s| s.credentials_secret_ref.as_ref())
            .map(|r| r.name.as_str()),
        spec.sink
            .tls
            .ca_secret_ref
            .as_ref()
            .map(|r| r.name.as_str()),
        spec.sink
            .tls
            .client_cert_secret_ref
            .as_ref()
            .map(|r| r.name.as_str()),
        checkpoint_secret_name(pms),
    ]
    .into_iter()
    .flatten()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::ObjectMeta;

    #[test]
    fn a_checkpoint_configmap_parses_into_the_contract_type() {
        let json = r#"{"sync":"s","slot":1,"slots":2,"snapshotId":7,"phase":"incremental","epoch":1,"updated":"t","latestSnapshot":9}"#;
        let cm = ConfigMap {
            data: Some(BTreeMap::from([(CHECKPOINT_KEY.to_string(), json.into())])),
            ..Default::default()
        };
        let cp = parse_checkpoint(&cm).unwrap();
        assert_eq!((cp.slot.index, cp.slot.count), (1, 2));
        assert_eq!(cp.point.done_through(), Some(7));
        assert!(parse_checkpoint(&ConfigMap::default()).is_none());
    }

    /// A worker of another sync (which may create ConfigMaps of any name) labels one as this
    /// sync's slot 0 with a failure note and a checkpoint: neither counts, only what is in the
    /// slot's own ConfigMap does.
    #[test]
    fn only_a_slots_own_configmap_is_read_for_its_notes_and_checkpoint() {
        let json = r#"{"sync":"s","slot":0,"slots":1,"snapshotId":7,"phase":"incremental","epoch":1,"updated":"2026-11-30T10:00:00Z"}"#;
        let failure = r#"{"message":"forged","at":"2026-11-30T11:00:00Z"}"#;
        let cm = |name: &str, data: &[(&str, &str)]| ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some(contract::labels("s", Component::Checkpoint, Some(0))),
                ..Default::default()
            },
            data: Some(
                data.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..Default::default()
        };
        let forged = cm("evil", &[(CHECKPOINT_KEY, json), (LAST_ERROR_KEY, failure)]);
        let read = slot_config_maps("s", vec![forged.clone(), cm("s-checkpoint-0", &[])]);
        assert!(read.checkpoints.is_empty() && read.notes.failures.is_empty());
        assert_eq!(read.slots, BTreeSet::from([0]), "the empty one is there");
        let own = cm("s-checkpoint-0", &[(LAST_ERROR_KEY, failure)]);
        let read = slot_config_maps("s", vec![forged, own]);
        assert_eq!(read.notes.failures.len(), 1);
    }

    #[test]
    fn worker_restarts_are_summed_by_slot() {
        let pod = |slot: &str, restarts: &[i32]| -> Pod {
            let statuses: Vec<_> = restarts
                .iter()
                .map(|r| serde_json::json!({"name": "worker", "image": "i", "imageID": "", "ready": false, "restartCount": r}))
                .collect();
            serde_json::from_value(serde_json::json!({
                "metadata": {"labels": {contract::SLOT_LABEL: slot}},
                "status": {"containerStatuses": statuses}
            }))
            .expect("a pod")
        };
        // Slot 1 has a terminating pod beside its new one; a pod with no slot label counts nowhere.
        let pods = [
            pod("0", &[2]),
            pod("1", &[1]),
            pod("1", &[0]),
            pod("x", &[5]),
        ];
        assert_eq!(restarts_by_slot(&pods), BTreeMap::from([(0, 2), (1, 1)]));
    }

    #[test]
    fn a_note_older_than_its_slots_checkpoint_is_from_an_earlier_run() {
        let json = r#"{"sync":"s","slot":0,"slots":2,"snapshotId":7,"phase":"incremental","epoch":2,"updated":"2026-11-30T10:00:00.500Z"}"#;
        let checkpoints = BTreeMap::from([(
            "s-checkpoint-0".to_string(),
            serde_json::from_str::<Checkpoint>(json).unwrap(),
        )]);
        let failure = |at: &str| WorkerFailure {
            message: "Access denied".into(),
            at: at.into(),
        };
        let mut notes = WorkerNotes {
            rebuild_required: vec![],
            failures: vec![
                (0, failure("2026-11-30T10:00:00.400Z")),
                (0, failure("2026-11-30T10:00:01.000Z")),
                (1, failure("2026-11-30T09:00:00.000Z")),
            ],
        };
        notes.drop_outdated("s", &checkpoints);
        let left: Vec<_> = notes
            .failures
            .iter()
            .map(|(k, f)| (*k, f.at.as_str()))
            .collect();
        assert_eq!(
            left,
            [
                (0, "2026-11-30T10:00:01.000Z"),
                (1, "2026-11-30T09:00:00.000Z")
            ],
            "slot 1 has no checkpoint: its note stands"
        );
    }
}
