//! `spec.workerPod`: what a user sets on the pods the operator builds for a sync (the slots'
//! Deployments and the rebuild, restore and verify Jobs), in Kubernetes' own types so the CRD
//! schema validates them. The operator's settings (command, probes, the restricted security
//! context) are not here, its image and ServiceAccount only as defaults; a volume, mount path,
//! environment variable, label or annotation that redefines one of the operator's own is refused.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, EnvFromSource, EnvVar, LocalObjectReference, ResourceRequirements, Toleration,
    TopologySpreadConstraint, Volume, VolumeMount,
};
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct WorkerPodSpec {
    /// The worker image of this sync's pods; default the operator's (`--worker-image`, the
    /// chart's `workerImage`). Pinning one keeps an operator upgrade from restarting this sync
    /// (by `upgradeMode`) together with every other: change it when you choose, sync by sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub image: Option<String>,
    /// Extra labels of the pods (none of the keys the operator sets).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "label_values")]
    pub labels: BTreeMap<String, String>,
    /// Extra annotations of the pods (none of the keys the operator sets).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "annotation_values")]
    pub annotations: BTreeMap<String, String>,
    /// The worker container's resources. Default: memory request 2 × `sink.maxBufferBytes` +
    /// 64 MiB, memory limit 4 × `sink.maxBufferBytes` + 128 MiB, CPU request 100m, no CPU limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// Extra volumes, e.g. a warehouse on a PersistentVolumeClaim or hostPath, or a CA bundle.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<Volume>,
    /// Where the worker container mounts them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volume_mounts: Vec<VolumeMount>,
    /// Extra environment of the worker container: a log level (`RUST_LOG`), proxies
    /// (`HTTPS_PROXY`, `NO_PROXY`), `AWS_*` settings of the credential chain. A variable the
    /// operator sets itself is refused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
    /// Whole ConfigMaps or Secrets as environment of the worker container (`env` and the
    /// operator's own variables win over them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_from: Vec<EnvFromSource>,
    /// The ServiceAccount the pods run as, e.g. one bound to a cloud identity (EKS IRSA or Pod
    /// Identity, GKE or AKS workload identity). Default: the one the operator makes per sync
    /// (`<sync>-worker`). Either way the operator binds its Role (the sync's own ConfigMaps) to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub service_account_name: Option<String>,
    /// Annotations of the ServiceAccount the operator makes (ignored with
    /// `serviceAccountName`), e.g. `eks.amazonaws.com/role-arn` for IRSA.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "annotation_values")]
    pub service_account_annotations: BTreeMap<String, String>,
    /// How the pods spread over zones or nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    /// The labels a node must have for the pods to run on it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// Taints of nodes the pods may run on anyway.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    /// Node and pod affinity of the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    /// The PriorityClass of the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
    /// Secrets (in the sync's namespace) to pull the worker image with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    /// The pods' `securityContext.fsGroup` (group ownership of mounted volumes that support it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_group: Option<i64>,
    /// How long a worker may make no progress (its loop not ticking, or a write to MySQL in
    /// flight) before its liveness check fails and the kubelet restarts it (default 10m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_after: Option<crate::HumanDuration>,
}

/// A label's value is at most 63 characters (Kubernetes' own limit).
fn label_values(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "object", "additionalProperties": {"type": "string", "maxLength": 63}})
}

/// An annotation's value may take all of the 256 KiB Kubernetes allows a pod's annotations.
fn annotation_values(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "object", "additionalProperties": {"type": "string", "maxLength": 262144}})
}
