//! Step 3 (pure): the objects a `PaimonMysqlSync` should own. No API calls here, so every
//! rule is unit-tested without a cluster.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy};
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMap, ConfigMapVolumeSource, Container, ContainerPort, EnvVar, EnvVarSource,
    HTTPGetAction, KeyToPath, LocalObjectReference, ObjectFieldSelector, PodSecurityContext,
    PodSpec, PodTemplateSpec, Probe, SeccompProfile, SecretKeySelector, SecretVolumeSource,
    SecurityContext, Service, ServiceAccount, ServicePort, ServiceSpec, Volume, VolumeMount,
};
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::ObjectMeta;
use kube::{Resource, ResourceExt};
use pms_crds::contract::{
    self, Component, CHECKPOINT_S3_SECRET_KEYS, CONFIG_KEY, ENV_ADMIN_ADDR, ENV_CONFIG,
    ENV_HADOOP_CONF_DIR, ENV_KRB5CCNAME, ENV_KRB5_CLIENT_KTNAME, ENV_KRB5_CONFIG, ENV_LOG_JSON,
    ENV_NAMESPACE, ENV_SLOT, ENV_SYNC_NAME, HADOOP_CONF_MOUNT, KERBEROS_KEYTAB_DIR,
    KERBEROS_KEYTAB_FILE, KRB5_CONF_DIR, KRB5_CONF_FILE, MYSQL_SECRET_KEYS, MYSQL_TLS_CA_DIR,
    MYSQL_TLS_CA_FILE, MYSQL_TLS_CLIENT_DIR, S3_SECRET_KEYS, TLS_SECRET_KEYS,
};
use pms_crds::{CheckpointStorage, PaimonMysqlSync, SyncState};

use super::jobs::{JobPlan, JOB_ID};
use crate::context::Settings;
use crate::error::{Error, Result};
use pms_crds::contract::{Control, CONTROL_KEY};

/// A resource that passed validation, with what building its objects needs.
#[derive(Clone, Debug)]
pub struct Validated<'a> {
    pub pms: &'a PaimonMysqlSync,
    pub name: String,
    pub namespace: String,
    /// Slots whose checkpoints the workers may read: the current parallelism, and any
    /// previous, larger one (a rescale reads the old slots' checkpoints).
    pub slots_known: u32,
}

const CONFIG_DIR: &str = "/etc/pms";
/// The slot pods' annotation that rolls them when their config changes.
const CONFIG_HASH_ANNOTATION: &str = "paimonsync.io/config-hash";
/// On the slot pods' template: `spec.restartNonce`.
const RESTART_NONCE_ANNOTATION: &str = "paimonsync.io/restart-nonce";

/// Every object one sync should own, in the order they are applied.
#[derive(Clone, Debug)]
pub struct Desired {
    pub service_account: ServiceAccount,
    pub role: Role,
    pub role_binding: RoleBinding,
    pub config: ConfigMap,
    pub metrics_service: Service,
    /// Slot k's at index k.
    pub deployments: Vec<Deployment>,
    /// `<sync>-rebuild` and `<sync>-verify`, which the jobs write their reports into.
    pub reports: Vec<ConfigMap>,
    /// `<sync>-control`: what the workers are asked to do (pause for a savepoint).
    pub control: ConfigMap,
    /// The Jobs that should run now.
    pub jobs: Vec<Job>,
}

pub fn all(
    v: &Validated,
    plan: &JobPlan,
    control: &Control,
    settings: &Settings,
) -> Result<Desired> {
    let pms = v.pms;
    let config = worker_config(pms)?;
    let hash = config_hash(&config);
    let mut jobs = Vec::new();
    if let Some(id) = &plan.rebuild_job {
        let args = vec!["rebuild".to_string(), "--trigger".into(), id.clone()];
        jobs.push(job(pms, Component::Rebuild, id, args, settings));
    }
    if let Some((id, snapshot)) = &plan.restore_job {
        let args = [
            "restore",
            "--snapshot",
            &snapshot.to_string(),
            "--trigger",
            id,
        ]
        .map(String::from)
        .to_vec();
        jobs.push(job(pms, Component::Restore, id, args, settings));
    }
    if let Some(v) = plan.verify.as_ref().filter(|v| v.running) {
        let args = ["verify", "--live", "--publish"].map(String::from).to_vec();
        jobs.push(job(pms, Component::Verify, &v.started_at, args, settings));
    }
    Ok(Desired {
        service_account: service_account(pms),
        role: role(pms, v.slots_known),
        role_binding: role_binding(pms),
        metrics_service: metrics_service(pms, settings),
        deployments: (0..pms.spec.parallelism)
            .map(|slot| deployment(pms, slot, &hash, plan.workers_stopped, settings))
            .collect(),
        config,
        reports: [
            (contract::rebuild_name(&pms.name_any()), Component::Rebuild),
            (contract::restore_name(&pms.name_any()), Component::Restore),
            (contract::verify_name(&pms.name_any()), Component::Verify),
            (
                contract::preflight_name(&pms.name_any()),
                Component::Preflight,
            ),
        ]
        .into_iter()
        .map(|(name, component)| ConfigMap {
            metadata: meta(pms, name, component, None),
            ..Default::default()
        })
        .collect(),
        jobs,
        control: control_config_map(pms, control),
    })
}

/// The checkpoint ConfigMaps of the current slots not in `present`, empty: made by the operator
/// before the workers start, so that no other sync's worker (which may create ConfigMaps of
/// any name) can take a slot's name first. Not owned by the sync: checkpoints outlive it when
/// `retainOnDelete` asks (the finalizer deletes them otherwise). With checkpoints on S3 they
/// hold only the workers' notes, which count from them alone all the same.
pub fn missing_slot_config_maps(pms: &PaimonMysqlSync, present: &BTreeSet<u32>) -> Vec<ConfigMap> {
    let sync = pms.name_any();
    (0..pms.spec.parallelism)
        .filter(|slot| !present.contains(slot))
        .map(|slot| ConfigMap {
            metadata: ObjectMeta {
                owner_references: None,
                ..meta(
                    pms,
                    contract::checkpoint_name(&sync, slot),
                    Component::Checkpoint,
                    Some(slot),
                )
            },
            ..Default::default()
        })
        .collect()
}

/// The checkpoint ConfigMaps of a rebuild's new generation (the sync `<sync>-rebuild`, one per
/// slot), empty, made before its Job runs as [`missing_slot_config_maps`] are; the finalizer
/// deletes them with the sync's.
pub fn rebuild_checkpoint_config_maps(pms: &PaimonMysqlSync) -> Vec<ConfigMap> {
    let mut shadow = pms.clone();
    shadow.metadata.name = Some(contract::rebuild_name(&pms.name_any()));
    missing_slot_config_maps(&shadow, &BTreeSet::new())
}

/// The control ConfigMap, holding `control` (or nothing to do).
pub fn control_config_map(pms: &PaimonMysqlSync, control: &Control) -> ConfigMap {
    // Strings and numbers only: serializing can't fail.
    let text = serde_json::to_string(control).expect("a Control serializes");
    ConfigMap {
        metadata: meta(
            pms,
            contract::control_name(&pms.name_any()),
            Component::Config,
            None,
        ),
        data: Some(BTreeMap::from([(CONTROL_KEY.to_string(), text)])),
        ..Default::default()
    }
}

/// A run of `pms-worker <args>` with the workers' pod (identity, config, Secrets), once: no
/// retry (a rebuild resumes when asked again; a verify runs again at the next interval).
fn job(
    pms: &PaimonMysqlSync,
    component: Component,
    id: &str,
    args: Vec<String>,
    settings: &Settings,
) -> Job {
    let sync = pms.name_any();
    let name = match component {
        Component::Rebuild => contract::rebuild_name(&sync),
        Component::Restore => contract::restore_name(&sync),
        _ => contract::verify_name(&sync),
    };
    let labels = contract::labels(&sync, component, None);
    let mut pod = pod_spec(pms, 0, settings);
    pod.restart_policy = Some("Never".into());
    for c in &mut pod.containers {
        c.args = Some(args.clone());
        c.liveness_probe = None;
        c.readiness_probe = None;
        c.ports = None;
        if let Some(env) = c.env.as_mut() {
            env.retain(|e| e.name != ENV_ADMIN_ADDR);
        }
    }
    let mut metadata = meta(pms, name, component, None);
    metadata.annotations = Some(BTreeMap::from([(JOB_ID.to_string(), id.to_string())]));
    Job {
        metadata,
        spec: Some(JobSpec {
            backoff_limit: Some(0),
            template: PodTemplateSpec {
                metadata: Some(pod_metadata(pms, labels, BTreeMap::new())),
                spec: Some(pod),
            },
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A pod template's metadata: `spec.workerPod`'s labels and annotations under the operator's.
fn pod_metadata(
    pms: &PaimonMysqlSync,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
) -> ObjectMeta {
    let (labels, annotations) = worker_pod::metadata(pms, labels, annotations);
    ObjectMeta {
        labels: Some(labels),
        annotations: (!annotations.is_empty()).then_some(annotations),
        ..Default::default()
    }
}

fn meta(
    pms: &PaimonMysqlSync,
    name: String,
    component: Component,
    slot: Option<u32>,
) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: pms.namespace(),
        labels: Some(contract::labels(&pms.name_any(), component, slot)),
        owner_references: pms.controller_owner_ref(&()).map(|o| vec![o]),
        ..Default::default()
    }
}

/// The worker's YAML: the spec as written, with checkpoints in ConfigMaps unless chosen
/// otherwise. Secrets are referenced by the Deployment's env, never copied here.
pub fn worker_config(pms: &PaimonMysqlSync) -> Result<ConfigMap> {
    let mut spec = pms.spec.clone();
    spec.checkpoint
        .storage
        .get_or_insert(CheckpointStorage::Configmap);
    // What only the operator acts on stays out: changing it restarts no worker.
    spec.state = Default::default();
    spec.verify = None;
    spec.savepoint = None;
    spec.restore_from = None;
    spec.upgrade_mode = Default::default();
    spec.rebuild.trigger = None;
    spec.rebuild.policy = Default::default();
    spec.restart_nonce = None;
    spec.rollback = None;
    // The workers read TLS files: the Secrets are mounted there (see `own_volumes`).
    let tls = &mut spec.sink.tls;
    if tls.ca_secret_ref.take().is_some() {
        tls.ca_file = Some(format!("{MYSQL_TLS_CA_DIR}/{MYSQL_TLS_CA_FILE}"));
    }
    if tls.client_cert_secret_ref.take().is_some() {
        let [cert, key] = TLS_SECRET_KEYS;
        tls.client_cert_file = Some(format!("{MYSQL_TLS_CLIENT_DIR}/{cert}"));
        tls.client_key_file = Some(format!("{MYSQL_TLS_CLIENT_DIR}/{key}"));
    }
    let sync = pms.name_any();
    let yaml = serde_yaml::to_string(&spec).map_err(|source| Error::Yaml {
        sync: sync.clone(),
        source,
    })?;
    Ok(ConfigMap {
        metadata: meta(
            pms,
            contract::config_map_name(&sync),
            Component::Config,
            None,
        ),
        data: Some(BTreeMap::from([(CONFIG_KEY.to_string(), yaml)])),
        ..Default::default()
    })
}

/// What the slot Deployments run, hashed: the worker config and the pod template (image,
/// resources, everything an operator upgrade may change) without the config's own hash. A
/// change of it goes through `spec.upgradeMode`. SHA-256 of canonical JSON, so the key stays
/// the same across operator builds and toolchains.
pub fn restart_key(pms: &PaimonMysqlSync, settings: &Settings) -> Result<String> {
    let config = worker_config(pms)?;
    // A restart nonce is a plain restart, not a change of what the workers run.
    let mut pms = pms.clone();
    pms.spec.restart_nonce = None;
    let template = deployment(&pms, 0, "", false, settings)
        .spec
        .map(|s| s.template);
    Ok(format!(
        "{RESTART_KEY_PREFIX}{}",
        sha256_hex(&[&canonical(&config.data), &canonical(&template)])
    ))
}

/// Marks a [`restart_key`] of this form (earlier ones hashed with `DefaultHasher`).
pub const RESTART_KEY_PREFIX: &str = "sha256:";

/// The config's hash on the pod template: a changed config rolls the worker pods.
pub fn config_hash(config: &ConfigMap) -> String {
    sha256_hex(&[&canonical(&config.data)])
}

/// Makes a pod template's config hash `hash` (a worker whose config holds more than what
/// should restart it).
pub fn set_config_hash(template: &mut PodTemplateSpec, hash: &str) {
    let meta = template.metadata.get_or_insert_with(Default::default);
    meta.annotations
        .get_or_insert_with(Default::default)
        .insert(CONFIG_HASH_ANNOTATION.to_string(), hash.to_string());
}

/// A short hash of what `value` serializes to (a tuple for several).
pub fn hash_of(value: &impl serde::Serialize) -> String {
    sha256_hex(&[&canonical(value)])
}

/// JSON text with object keys in order (`serde_json::Value` keeps a sorted map).
fn canonical(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .map(|v| v.to_string())
        .unwrap_or_default()
}

/// The first 16 hex digits of the SHA-256 of the parts (each ended by a NUL).
fn sha256_hex(parts: &[&str]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in parts {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn env(name: &str, value: impl Into<String>) -> EnvVar {
    EnvVar {
        name: name.into(),
        value: Some(value.into()),
        ..Default::default()
    }
}

fn secret_env(name: &str, secret: &str, key: &str) -> EnvVar {
    EnvVar {
        name: name.into(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret.into(),
                key: key.into(),
                optional: Some(false),
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// One Deployment per slot: one replica (none when suspended), `Recreate` so two pods never
/// write one slot, restricted security context, probes on the admin port.
pub fn deployment(
    pms: &PaimonMysqlSync,
    slot: u32,
    config_hash: &str,
    stopped: bool,
    settings: &Settings,
) -> Deployment {
    let sync = pms.name_any();
    let labels = contract::labels(&sync, Component::Worker, Some(slot));
    let replicas = if stopped || pms.spec.state == SyncState::Suspended {
        0
    } else {
        1
    };
    Deployment {
        metadata: meta(
            pms,
            contract::deployment_name(&sync, slot),
            Component::Worker,
            Some(slot),
        ),
        spec: Some(DeploymentSpec {
            replicas: Some(replicas),
            strategy: Some(DeploymentStrategy {
                type_: Some("Recreate".into()),
                ..Default::default()
            }),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(pod_metadata(pms, labels, {
                    let mut a = BTreeMap::from([(
                        CONFIG_HASH_ANNOTATION.to_string(),
                        config_hash.to_string(),
                    )]);
                    // A new nonce changes the template: the pods roll (a plain restart).
                    if let Some(nonce) = &pms.spec.restart_nonce {
                        a.insert(RESTART_NONCE_ANNOTATION.to_string(), nonce.clone());
                    }
                    a
                })),
                spec: Some(pod_spec(pms, slot, settings)),
            },
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The worker's environment: its slot and config from the contract, Secrets by reference.
fn worker_env(pms: &PaimonMysqlSync, slot: u32, settings: &Settings) -> Vec<EnvVar> {
    let sync = pms.name_any();
    let spec = &pms.spec;
    let mut env_vars = vec![
        env(ENV_SLOT, slot.to_string()),
        env(ENV_SYNC_NAME, sync.clone()),
        env(ENV_CONFIG, format!("{CONFIG_DIR}/{CONFIG_KEY}")),
        env(ENV_ADMIN_ADDR, format!("0.0.0.0:{}", settings.admin_port)),
        env(ENV_LOG_JSON, "true"),
        EnvVar {
            name: ENV_NAMESPACE.into(),
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    field_path: "metadata.namespace".into(),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        },
    ];
    let s3_secret = spec
        .source
        .s3
        .as_ref()
        .and_then(|s| s.credentials_secret_ref.as_ref());
    let checkpoint_secret = spec
        .checkpoint
        .s3
        .as_ref()
        .and_then(|s| s.credentials_secret_ref.as_ref());
    let secrets = [
        (spec.sink.credentials_secret_ref.as_ref(), MYSQL_SECRET_KEYS),
        (s3_secret, S3_SECRET_KEYS),
        (checkpoint_secret, CHECKPOINT_S3_SECRET_KEYS),
    ];
    for (secret, keys) in secrets {
        if let Some(secret) = secret {
            for (key, var) in keys {
                env_vars.push(secret_env(var, &secret.name, key));
            }
        }
    }
    // Where `own_volumes` mounts `source.hadoopConf` and `source.kerberos`, for the HDFS
    // client and the Kerberos library, which read these variables themselves.
    if spec.source.hadoop_conf.is_some() {
        env_vars.push(env(ENV_HADOOP_CONF_DIR, HADOOP_CONF_MOUNT));
    }
    if spec.source.kerberos.is_some() {
        let keytab = format!("{KERBEROS_KEYTAB_DIR}/{KERBEROS_KEYTAB_FILE}");
        env_vars.push(env(ENV_KRB5_CLIENT_KTNAME, keytab));
        env_vars.push(env(
            ENV_KRB5_CONFIG,
            format!("{KRB5_CONF_DIR}/{KRB5_CONF_FILE}"),
        ));
        env_vars.push(env(ENV_KRB5CCNAME, "MEMORY:pms-worker"));
    }
    if let Some(after) = spec.worker_pod.as_ref().and_then(|p| p.stall_after) {
        let secs = after.0.as_secs().max(1);
        env_vars.push(env(
            pms_runtime::liveness::ENV_STALL_AFTER,
            secs.to_string(),
        ));
    }
    env_vars
}

/// `spec.workerPod.image`, else the operator's.
fn worker_image(pms: &PaimonMysqlSync, settings: &Settings) -> String {
    let pinned = pms.spec.worker_pod.as_ref().and_then(|p| p.image.clone());
    pinned.unwrap_or_else(|| settings.worker_image.clone())
}

fn worker_container(pms: &PaimonMysqlSync, slot: u32, settings: &Settings) -> Container {
    let probe = |path: &str, period: i32| Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.into()),
            port: IntOrString::String("admin".into()),
            ..Default::default()
        }),
        period_seconds: Some(period),
        failure_threshold: Some(3),
        ..Default::default()
    };
    Container {
        name: "worker".into(),
        image: Some(worker_image(pms, settings)),
        image_pull_policy: Some(settings.image_pull_policy.clone()),
        args: Some(vec!["run".into()]),
        env: Some(worker_env(pms, slot, settings)),
        ports: Some(vec![ContainerPort {
            name: Some("admin".into()),
            container_port: settings.admin_port,
            ..Default::default()
        }]),
        liveness_probe: Some(probe("/healthz", 10)),
        readiness_probe: Some(probe("/readyz", 5)),
        volume_mounts: Some(
            own_mounts(pms)
                .into_iter()
                .map(|(name, dir)| VolumeMount {
                    name,
                    mount_path: dir.into(),
                    read_only: Some(true),
                    ..Default::default()
                })
                .collect(),
        ),
        security_context: Some(SecurityContext {
            allow_privilege_escalation: Some(false),
            read_only_root_filesystem: Some(true),
            run_as_non_root: Some(true),
            capabilities: Some(Capabilities {
                drop: Some(vec!["ALL".into()]),
                ..Default::default()
            }),
            seccomp_profile: Some(SeccompProfile {
                type_: "RuntimeDefault".into(),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn pod_spec(pms: &PaimonMysqlSync, slot: u32, settings: &Settings) -> PodSpec {
    let sync = pms.name_any();
    let mut pod = PodSpec {
        service_account_name: Some(worker_service_account(pms)),
        automount_service_account_token: Some(true),
        // Time to flush and checkpoint on SIGTERM.
        termination_grace_period_seconds: Some(60),
        // No fixed user: the image's (65532) runs, or the one a platform assigns (OpenShift's
        // restricted profile picks one per namespace and refuses a pod that names another).
        security_context: Some(PodSecurityContext {
            run_as_non_root: Some(true),
            seccomp_profile: Some(SeccompProfile {
                type_: "RuntimeDefault".into(),
                ..Default::default()
            }),
            ..Default::default()
        }),
        containers: vec![worker_container(pms, slot, settings)],
        volumes: Some(
            std::iter::once(Volume {
                name: "config".into(),
                config_map: Some(ConfigMapVolumeSource {
                    name: contract::config_map_name(&sync),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .chain(own_volumes(pms).into_iter().map(|(v, _dir)| v))
            .collect(),
        ),
        ..Default::default()
    };
    // The operator's default pull secrets (a private registry's), unless the sync names its own.
    if !settings.worker_image_pull_secrets.is_empty() {
        pod.image_pull_secrets = Some(
            settings
                .worker_image_pull_secrets
                .iter()
                .map(|name| LocalObjectReference { name: name.clone() })
                .collect(),
        );
    }
    worker_pod::overlay(pms, &mut pod);
    pod
}

/// The volumes the operator mounts into every worker container (config, `sink.tls` Secrets,
/// the Hadoop configuration, the Kerberos keytab and `krb5.conf`), each with where.
fn own_mounts(pms: &PaimonMysqlSync) -> Vec<(String, &'static str)> {
    std::iter::once(("config".to_string(), CONFIG_DIR))
        .chain(own_volumes(pms).into_iter().map(|(v, dir)| (v.name, dir)))
        .collect()
}

/// What in `spec.workerPod` would redefine the operator's own volumes, mount paths, environment
/// variables, labels or annotations (refused by validation: silently dropping either side would diverge).
pub fn worker_pod_clashes(pms: &PaimonMysqlSync) -> Vec<String> {
    let labels = contract::labels(&pms.name_any(), Component::Worker, Some(0));
    // The names only: no setting changes which variables the operator sets.
    let env: Vec<String> = worker_env(pms, 0, &Settings::default())
        .into_iter()
        .map(|e| e.name)
        .collect();
    worker_pod::clashes(
        pms,
        &own_mounts(pms),
        &env,
        &labels,
        &[CONFIG_HASH_ANNOTATION, RESTART_NONCE_ANNOTATION],
    )
}

/// The Secrets of `sink.tls`, the ConfigMap of `source.hadoopConf` and the keytab Secret and
/// `krb5.conf` ConfigMap of `source.kerberos` as volumes, each with where it is mounted.
fn own_volumes(pms: &PaimonMysqlSync) -> Vec<(Volume, &'static str)> {
    let tls = &pms.spec.sink.tls;
    let secret = |name: &str, items: Vec<(String, String)>| SecretVolumeSource {
        secret_name: Some(name.into()),
        items: Some(
            items
                .into_iter()
                .map(|(key, path)| KeyToPath {
                    key,
                    path,
                    mode: None,
                })
                .collect(),
        ),
        ..Default::default()
    };
    let mut volumes = Vec::new();
    if let Some(ca) = &tls.ca_secret_ref {
        let items = vec![(ca.key.clone(), MYSQL_TLS_CA_FILE.to_string())];
        volumes.push((
            Volume {
                name: "mysql-tls-ca".into(),
                secret: Some(secret(&ca.name, items)),
                ..Default::default()
            },
            MYSQL_TLS_CA_DIR,
        ));
    }
    if let Some(client) = &tls.client_cert_secret_ref {
        let items = TLS_SECRET_KEYS
            .map(|k| (k.to_string(), k.to_string()))
            .to_vec();
        volumes.push((
            Volume {
                name: "mysql-tls-client".into(),
                secret: Some(secret(&client.name, items)),
                ..Default::default()
            },
            MYSQL_TLS_CLIENT_DIR,
        ));
    }
    let config_map = |name: &str, items: Option<Vec<KeyToPath>>| ConfigMapVolumeSource {
        name: name.into(),
        items,
        ..Default::default()
    };
    let source = &pms.spec.source;
    if let Some(conf) = &source.hadoop_conf {
        volumes.push((
            Volume {
                name: "hadoop-conf".into(),
                config_map: Some(config_map(&conf.name, None)),
                ..Default::default()
            },
            HADOOP_CONF_MOUNT,
        ));
    }
    let kerberos = source.kerberos.as_ref();
    if let Some(keytab) = kerberos.and_then(|k| k.keytab_secret_ref.as_ref()) {
        let key = keytab.key.as_deref().unwrap_or(KERBEROS_KEYTAB_FILE);
        let items = vec![(key.to_string(), KERBEROS_KEYTAB_FILE.to_string())];
        volumes.push((
            Volume {
                name: "kerberos-keytab".into(),
                secret: Some(secret(&keytab.name, items)),
                ..Default::default()
            },
            KERBEROS_KEYTAB_DIR,
        ));
    }
    if let Some(conf) = kerberos.and_then(|k| k.krb5_conf_config_map_ref.as_ref()) {
        let item = KeyToPath {
            key: conf.key.clone().unwrap_or_else(|| KRB5_CONF_FILE.into()),
            path: KRB5_CONF_FILE.into(),
            mode: None,
        };
        volumes.push((
            Volume {
                name: "krb5-conf".into(),
                config_map: Some(config_map(&conf.name, Some(vec![item]))),
                ..Default::default()
            },
            KRB5_CONF_DIR,
        ));
    }
    volumes
}

/// One Service over all slots, for Prometheus.
pub fn metrics_service(pms: &PaimonMysqlSync, settings: &Settings) -> Service {
    let sync = pms.name_any();
    let mut selector = contract::labels(&sync, Component::Worker, None);
    selector.remove(contract::MANAGED_BY_LABEL);
    Service {
        metadata: meta(pms, contract::service_name(&sync), Component::Metrics, None),
        spec: Some(ServiceSpec {
            selector: Some(selector),
            ports: Some(vec![ServicePort {
                name: Some("metrics".into()),
                port: settings.admin_port,
                target_port: Some(IntOrString::String("admin".into())),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

pub fn service_account(pms: &PaimonMysqlSync) -> ServiceAccount {
    let mut metadata = meta(
        pms,
        contract::worker_identity_name(&pms.name_any()),
        Component::Rbac,
        None,
    );
    let annotations = pms
        .spec
        .worker_pod
        .as_ref()
        .map(|p| &p.service_account_annotations);
    if let Some(a) = annotations.filter(|a| !a.is_empty()) {
        metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .extend(a.clone());
    }
    ServiceAccount {
        metadata,
        ..Default::default()
    }
}

/// The ServiceAccount the workers run as: `spec.workerPod.serviceAccountName`, else the one
/// [`service_account`] makes.
fn worker_service_account(pms: &PaimonMysqlSync) -> String {
    let named = pms
        .spec
        .worker_pod
        .as_ref()
        .and_then(|p| p.service_account_name.clone());
    named.unwrap_or_else(|| contract::worker_identity_name(&pms.name_any()))
}

/// Least privilege: the workers read their config and read/write their own checkpoint and
/// report ConfigMaps, by name. Nothing else: no `create` (RBAC can't limit it by name, so a
/// worker could take another sync's names) and no `delete`; the operator makes every
/// ConfigMap they write before they run ([`missing_slot_config_maps`],
/// [`rebuild_checkpoint_config_maps`], the reports). `slots` covers the current and any
/// previous parallelism (a rescale reads the old slots).
pub fn role(pms: &PaimonMysqlSync, slots: u32) -> Role {
    let sync = pms.name_any();
    // A rebuild's new generation keeps its checkpoints as the sync `<sync>-rebuild` does.
    let rebuild_sync = contract::rebuild_name(&sync);
    let mut checkpoints: Vec<String> = (0..slots)
        .map(|k| contract::checkpoint_name(&sync, k))
        .collect();
    checkpoints.extend((0..slots).map(|k| contract::checkpoint_name(&rebuild_sync, k)));
    checkpoints.push(contract::rebuild_name(&sync));
    checkpoints.push(contract::restore_name(&sync));
    checkpoints.push(contract::verify_name(&sync));
    checkpoints.push(contract::preflight_name(&sync));
    let mut readable = checkpoints.clone();
    readable.push(contract::config_map_name(&sync));
    readable.push(contract::control_name(&sync));
    let rule = |verbs: &[&str], names: Vec<String>| PolicyRule {
        api_groups: Some(vec!["".into()]),
        resources: Some(vec!["configmaps".into()]),
        resource_names: Some(names),
        verbs: verbs.iter().map(|v| v.to_string()).collect(),
        ..Default::default()
    };
    Role {
        metadata: meta(
            pms,
            contract::worker_identity_name(&sync),
            Component::Rbac,
            None,
        ),
        rules: Some(vec![
            rule(&["get"], readable),
            rule(&["update", "patch"], checkpoints),
        ]),
    }
}

pub fn role_binding(pms: &PaimonMysqlSync) -> RoleBinding {
    let name = contract::worker_identity_name(&pms.name_any());
    RoleBinding {
        metadata: meta(pms, name.clone(), Component::Rbac, None),
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "Role".into(),
            name: name.clone(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: worker_service_account(pms),
            namespace: pms.namespace(),
            ..Default::default()
        }]),
    }
}

mod worker_pod;
pub use worker_pod::pooled_resources;

#[cfg(test)]
mod tests;
