//! `spec.workerPod` laid over the pods [`super`] builds (slots and Jobs alike). What would
//! redefine the operator's own volumes, mount paths, environment variables, labels or annotations
//! is refused by validation ([`clashes`]); the container's image, command, probes and security
//! context are never touched.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{PodSecurityContext, PodSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use pms_crds::{PaimonMysqlSync, WorkerPodSpec};

/// The problems of `spec.workerPod` against what the operator sets itself: `own` volumes (name,
/// mount path), `env` (names), `labels`, `annotations` (keys). Each is refused rather than dropped.
pub fn clashes(
    pms: &PaimonMysqlSync,
    own: &[(String, &str)],
    env: &[String],
    labels: &BTreeMap<String, String>,
    annotations: &[&str],
) -> Vec<String> {
    let Some(user) = &pms.spec.worker_pod else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    let names: BTreeSet<&str> = own.iter().map(|(n, _)| n.as_str()).collect();
    let paths: BTreeSet<&str> = own.iter().map(|(_, p)| *p).collect();
    for v in user
        .volumes
        .iter()
        .filter(|v| names.contains(v.name.as_str()))
    {
        problems.push(format!(
            "workerPod.volumes: {} is the operator's own volume; rename it",
            v.name
        ));
    }
    for m in user
        .volume_mounts
        .iter()
        .filter(|m| paths.contains(m.mount_path.as_str()))
    {
        problems.push(format!(
            "workerPod.volumeMounts: {} is where the operator mounts its own; mount elsewhere",
            m.mount_path
        ));
    }
    for e in user.env.iter().filter(|e| env.contains(&e.name)) {
        problems.push(format!(
            "workerPod.env: {} is set by the operator (from the sync's spec); set it there",
            e.name
        ));
    }
    for k in user.labels.keys().filter(|k| labels.contains_key(*k)) {
        problems.push(format!("workerPod.labels: {k} is set by the operator"));
    }
    for k in user
        .annotations
        .keys()
        .filter(|k| annotations.contains(&k.as_str()))
    {
        problems.push(format!("workerPod.annotations: {k} is set by the operator"));
    }
    problems
}

/// The pod template's labels and annotations: the user's and the operator's (which validation
/// keeps apart).
pub fn metadata(
    pms: &PaimonMysqlSync,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let user = pms.spec.worker_pod.clone().unwrap_or_default();
    let mut l = user.labels;
    l.extend(labels);
    let mut a = user.annotations;
    a.extend(annotations);
    (l, a)
}

/// Adds the user's pod settings to `pod`, and the worker container's resources.
pub fn overlay(pms: &PaimonMysqlSync, pod: &mut PodSpec) {
    let user = pms.spec.worker_pod.clone().unwrap_or_default();
    let WorkerPodSpec {
        resources,
        volumes,
        volume_mounts,
        env,
        env_from,
        topology_spread_constraints,
        node_selector,
        tolerations,
        affinity,
        priority_class_name,
        image_pull_secrets,
        fs_group,
        ..
    } = user;
    // Validation refused names and paths the operator uses itself (`clashes`).
    pod.volumes.get_or_insert_with(Vec::new).extend(volumes);
    for c in &mut pod.containers {
        let mounts = c.volume_mounts.get_or_insert_with(Vec::new);
        mounts.extend(volume_mounts.iter().cloned());
        // After the operator's own (validation refused the same names).
        c.env
            .get_or_insert_with(Vec::new)
            .extend(env.iter().cloned());
        if !env_from.is_empty() {
            c.env_from = Some(env_from.clone());
        }
        let default = || default_resources(pms.spec.sink.max_buffer_bytes);
        c.resources = Some(resources.clone().unwrap_or_else(default));
    }
    if !node_selector.is_empty() {
        pod.node_selector = Some(node_selector);
    }
    if !tolerations.is_empty() {
        pod.tolerations = Some(tolerations);
    }
    pod.affinity = affinity;
    if !topology_spread_constraints.is_empty() {
        pod.topology_spread_constraints = Some(topology_spread_constraints);
    }
    pod.priority_class_name = priority_class_name;
    if !image_pull_secrets.is_empty() {
        pod.image_pull_secrets = Some(image_pull_secrets);
    }
    if let Some(group) = fs_group {
        pod.security_context
            .get_or_insert_with(PodSecurityContext::default)
            .fs_group = Some(group);
    }
}

/// What a worker needs by default: its buffer (bounded by `maxBufferBytes`) twice over for the
/// statements built from it, plus the process itself (measured 40–90 MiB at the defaults); the
/// limit leaves room for a full read's decode batches.
pub fn default_resources(max_buffer_bytes: u64) -> ResourceRequirements {
    resources(
        2 * max_buffer_bytes + 64 * MIB,
        4 * max_buffer_bytes + 128 * MIB,
    )
}

/// A pooled worker's default: `maxFullReads` tables' buffers at once, plus its tables at rest
/// (a few MiB each, `make footprint`), for which a fixed 1 GiB of limit is left.
pub fn pooled_resources(max_buffer_bytes: u64, max_full_reads: u32) -> ResourceRequirements {
    let full_reads = u64::from(max_full_reads);
    resources(
        full_reads * 2 * max_buffer_bytes + 256 * MIB,
        full_reads * 4 * max_buffer_bytes + 1024 * MIB,
    )
}

const MIB: u64 = 1024 * 1024;

fn resources(request: u64, limit: u64) -> ResourceRequirements {
    let mib = |bytes: u64| Quantity(format!("{}Mi", bytes.div_ceil(MIB)));
    ResourceRequirements {
        requests: Some(BTreeMap::from([
            ("cpu".to_string(), Quantity("100m".into())),
            ("memory".to_string(), mib(request)),
        ])),
        limits: Some(BTreeMap::from([("memory".to_string(), mib(limit))])),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_default_from_the_buffer_bound() {
        let r = default_resources(64 * 1024 * 1024);
        let requests = r.requests.unwrap();
        assert_eq!(requests["memory"].0, "192Mi");
        assert_eq!(requests["cpu"].0, "100m");
        assert_eq!(r.limits.unwrap()["memory"].0, "384Mi");
    }
}
