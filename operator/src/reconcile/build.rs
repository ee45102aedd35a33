//! Pure functions from a `PaimonMysqlSync` to the objects it should own. No API calls here,
//! so every rule is unit-tested without a cluster.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy};
use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMap, ConfigMapVolumeSource, Container, ContainerPort, EnvVar, EnvVarSource,
    HTTPGetAction, ObjectFieldSelector, PodSecurityContext, PodSpec, PodTemplateSpec, Probe,
    SeccompProfile, SecretKeySelector, SecurityContext, Service, ServiceAccount, ServicePort,
    ServiceSpec, Volume, VolumeMount,
};
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::ObjectMeta;
use kube::{Resource, ResourceExt};
use pms_crds::{CheckpointStorage, PaimonMysqlSync, SyncState};

use super::names::{self, CONFIG_KEY};
use crate::context::Settings;
use crate::error::Result;

const CONFIG_DIR: &str = "/etc/pms";

fn meta(pms: &PaimonMysqlSync, name: String, component: &str, slot: Option<u32>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: pms.namespace(),
        labels: Some(names::labels(&pms.name_any(), component, slot)),
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
    let yaml = serde_yaml::to_string(&spec)?;
    Ok(ConfigMap {
        metadata: meta(pms, names::config_map(&pms.name_any()), "config", None),
        data: Some(BTreeMap::from([(CONFIG_KEY.to_string(), yaml)])),
        ..Default::default()
    })
}

/// A short, stable hash of the config, so a changed spec restarts the workers.
pub fn config_hash(config: &ConfigMap) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    config.data.hash(&mut h);
    format!("{:016x}", h.finish())
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
    settings: &Settings,
) -> Deployment {
    let sync = pms.name_any();
    let spec = &pms.spec;
    let labels = names::labels(&sync, "worker", Some(slot));
    let mut env_vars = vec![
        env("PMS_SLOT", slot.to_string()),
        env("PMS_SLOTS", spec.parallelism.to_string()),
        env("PMS_SYNC_NAME", sync.clone()),
        env("PMS_CONFIG", format!("{CONFIG_DIR}/{CONFIG_KEY}")),
        env("PMS_ADMIN_ADDR", format!("0.0.0.0:{}", settings.admin_port)),
        env("PMS_LOG_JSON", "true"),
        EnvVar {
            name: "PMS_NAMESPACE".into(),
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
    if let Some(secret) = &spec.sink.credentials_secret_ref {
        env_vars.push(secret_env("MYSQL_USER", &secret.name, "username"));
        env_vars.push(secret_env("MYSQL_PASSWORD", &secret.name, "password"));
    }
    if let Some(secret) = spec
        .source
        .s3
        .as_ref()
        .and_then(|s| s.credentials_secret_ref.as_ref())
    {
        env_vars.push(secret_env("AWS_ACCESS_KEY_ID", &secret.name, "accessKeyId"));
        env_vars.push(secret_env(
            "AWS_SECRET_ACCESS_KEY",
            &secret.name,
            "secretAccessKey",
        ));
    }
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
    let container = Container {
        name: "worker".into(),
        image: Some(settings.worker_image.clone()),
        image_pull_policy: Some(settings.image_pull_policy.clone()),
        args: Some(vec!["run".into()]),
        env: Some(env_vars),
        ports: Some(vec![ContainerPort {
            name: Some("admin".into()),
            container_port: settings.admin_port,
            ..Default::default()
        }]),
        liveness_probe: Some(probe("/healthz", 10)),
        readiness_probe: Some(probe("/readyz", 5)),
        volume_mounts: Some(vec![VolumeMount {
            name: "config".into(),
            mount_path: CONFIG_DIR.into(),
            read_only: Some(true),
            ..Default::default()
        }]),
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
    };
    let replicas = if spec.state == SyncState::Suspended {
        0
    } else {
        1
    };
    Deployment {
        metadata: meta(pms, names::deployment(&sync, slot), "worker", Some(slot)),
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
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    annotations: Some(BTreeMap::from([(
                        "paimonsync.io/config-hash".to_string(),
                        config_hash.to_string(),
                    )])),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    service_account_name: Some(names::worker_identity(&sync)),
                    automount_service_account_token: Some(true),
                    // Time to flush and checkpoint on SIGTERM.
                    termination_grace_period_seconds: Some(60),
                    security_context: Some(PodSecurityContext {
                        run_as_non_root: Some(true),
                        run_as_user: Some(65532),
                        run_as_group: Some(65532),
                        seccomp_profile: Some(SeccompProfile {
                            type_: "RuntimeDefault".into(),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                    containers: vec![container],
                    volumes: Some(vec![Volume {
                        name: "config".into(),
                        config_map: Some(ConfigMapVolumeSource {
                            name: names::config_map(&sync),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }]),
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// One Service over all slots, for Prometheus.
pub fn metrics_service(pms: &PaimonMysqlSync, settings: &Settings) -> Service {
    let sync = pms.name_any();
    let mut selector = names::labels(&sync, "worker", None);
    selector.remove("app.kubernetes.io/managed-by");
    Service {
        metadata: meta(pms, names::service(&sync), "metrics", None),
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
    ServiceAccount {
        metadata: meta(pms, names::worker_identity(&pms.name_any()), "rbac", None),
        ..Default::default()
    }
}

/// Least privilege: the workers read their config and read/write their own checkpoint
/// ConfigMaps, by name. `create` can't be limited by name in RBAC, so it is granted alone.
/// `slots` covers the current and any previous parallelism (a rescale reads the old slots).
pub fn role(pms: &PaimonMysqlSync, slots: u32) -> Role {
    let sync = pms.name_any();
    let checkpoints: Vec<String> = (0..slots).map(|k| names::checkpoint(&sync, k)).collect();
    let mut readable = checkpoints.clone();
    readable.push(names::config_map(&sync));
    let rule = |verbs: &[&str], names: Option<Vec<String>>| PolicyRule {
        api_groups: Some(vec!["".into()]),
        resources: Some(vec!["configmaps".into()]),
        resource_names: names,
        verbs: verbs.iter().map(|v| v.to_string()).collect(),
        ..Default::default()
    };
    Role {
        metadata: meta(pms, names::worker_identity(&sync), "rbac", None),
        rules: Some(vec![
            rule(&["get"], Some(readable)),
            rule(&["update", "patch"], Some(checkpoints)),
            rule(&["create"], None),
        ]),
    }
}

pub fn role_binding(pms: &PaimonMysqlSync) -> RoleBinding {
    let name = names::worker_identity(&pms.name_any());
    RoleBinding {
        metadata: meta(pms, name.clone(), "rbac", None),
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "Role".into(),
            name: name.clone(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name,
            namespace: pms.namespace(),
            ..Default::default()
        }]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(parallelism: u32, state: &str) -> PaimonMysqlSync {
        let spec: pms_crds::PaimonMysqlSyncSpec = serde_yaml::from_str(&format!(
            "source: {{warehouse: 's3://lake/wh', database: shop, table: orders, s3: {{credentialsSecretRef: {{name: lake}}}}}}\n\
             sink: {{url: 'mysql://db:3306/serving', table: orders_rt, credentialsSecretRef: {{name: writer}}}}\n\
             parallelism: {parallelism}\nstate: {state}\n"
        ))
        .unwrap();
        let mut pms = PaimonMysqlSync::new("orders", spec);
        pms.metadata.namespace = Some("data".into());
        pms.metadata.uid = Some("uid-1".into());
        pms
    }

    fn env_of(d: &Deployment) -> BTreeMap<String, EnvVar> {
        let c = &d
            .spec
            .as_ref()
            .unwrap()
            .template
            .spec
            .as_ref()
            .unwrap()
            .containers[0];
        c.env
            .clone()
            .unwrap()
            .into_iter()
            .map(|e| (e.name.clone(), e))
            .collect()
    }

    #[test]
    fn one_deployment_per_slot_with_slot_env_secrets_by_reference_and_recreate() {
        let pms = sample(3, "running");
        let d = deployment(&pms, 2, "abc", &Settings::default());
        assert_eq!(d.metadata.name.as_deref(), Some("orders-slot-2"));
        let spec = d.spec.as_ref().unwrap();
        assert_eq!(spec.replicas, Some(1));
        assert_eq!(
            spec.strategy.as_ref().unwrap().type_.as_deref(),
            Some("Recreate")
        );
        let env = env_of(&d);
        assert_eq!(env["PMS_SLOT"].value.as_deref(), Some("2"));
        assert_eq!(env["PMS_SLOTS"].value.as_deref(), Some("3"));
        let pw = env["MYSQL_PASSWORD"]
            .value_from
            .as_ref()
            .unwrap()
            .secret_key_ref
            .as_ref()
            .unwrap();
        assert_eq!((pw.name.as_str(), pw.key.as_str()), ("writer", "password"));
        assert!(
            env["MYSQL_PASSWORD"].value.is_none(),
            "secrets are referenced, never copied"
        );
        assert!(env.contains_key("AWS_SECRET_ACCESS_KEY"));
        let owner = &d.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.controller),
            ("PaimonMysqlSync", Some(true))
        );
        let sc = spec.template.spec.as_ref().unwrap().containers[0]
            .security_context
            .as_ref()
            .unwrap();
        assert_eq!(
            (sc.allow_privilege_escalation, sc.run_as_non_root),
            (Some(false), Some(true))
        );
    }

    #[test]
    fn suspended_means_zero_replicas() {
        let d = deployment(&sample(1, "suspended"), 0, "abc", &Settings::default());
        assert_eq!(d.spec.unwrap().replicas, Some(0));
    }

    #[test]
    fn worker_config_is_the_spec_with_configmap_checkpoints_and_no_secrets() {
        let cm = worker_config(&sample(2, "running")).unwrap();
        let yaml = &cm.data.as_ref().unwrap()[CONFIG_KEY];
        let back: pms_crds::PaimonMysqlSyncSpec = serde_yaml::from_str(yaml).unwrap();
        assert_eq!(back.checkpoint.storage, Some(CheckpointStorage::Configmap));
        assert_eq!(back.sink.table, "orders_rt");
        assert_ne!(
            config_hash(&cm),
            config_hash(&worker_config(&sample(3, "running")).unwrap())
        );
    }

    #[test]
    fn role_names_only_this_syncs_configmaps() {
        let r = role(&sample(2, "running"), 3);
        let rules = r.rules.unwrap();
        assert_eq!(
            rules[0].resource_names.as_deref().unwrap(),
            [
                "orders-checkpoint-0",
                "orders-checkpoint-1",
                "orders-checkpoint-2",
                "orders-config"
            ]
        );
        assert!(rules
            .iter()
            .all(|r| r.resources.as_deref() == Some(&["configmaps".to_string()][..])));
        assert!(!rules
            .iter()
            .any(|r| r.verbs.iter().any(|v| v == "list" || v == "delete")));
    }
}
