//! `spec.workerPod`: what a user sets on the pods the operator builds for a sync (the slots'
//! Deployments and the rebuild, restore and verify Jobs), in Kubernetes' own types so the CRD
//! schema validates them. The operator's settings (command, probes, ServiceAccount, the
//! restricted security context) are not here, and its image only as a default; a volume, mount path, label or annotation that
//! redefines one of the operator's own is refused.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, LocalObjectReference, ResourceRequirements, Toleration, Volume, VolumeMount,
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
    /// Extra labels and annotations of the pods (none of the keys the operator sets).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "label_values")]
    pub labels: BTreeMap<String, String>,
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
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
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
