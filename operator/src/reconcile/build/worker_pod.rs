//! `spec.workerPod` laid over the pods [`super`] builds (slots and Jobs alike). What the operator
//! sets itself wins: its labels, volumes and mounts come first and keep their names, and the
//! container's image, command, probes, ServiceAccount and security context are not touched.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{PodSecurityContext, PodSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use pms_crds::{PaimonMysqlSync, WorkerPodSpec};

/// The pod template's labels and annotations: the user's, then the operator's over them.
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
        node_selector,
        tolerations,
        affinity,
        priority_class_name,
        image_pull_secrets,
        fs_group,
        ..
    } = user;
    let taken: BTreeSet<String> = pod
        .volumes
        .iter()
        .flatten()
        .map(|v| v.name.clone())
        .collect();
    let volumes = volumes.into_iter().filter(|v| !taken.contains(&v.name));
    pod.volumes.get_or_insert_with(Vec::new).extend(volumes);
    for c in &mut pod.containers {
        let mounts = c.volume_mounts.get_or_insert_with(Vec::new);
        let taken: BTreeSet<String> = mounts.iter().map(|m| m.mount_path.clone()).collect();
        mounts.extend(
            volume_mounts
                .iter()
                .filter(|m| !taken.contains(&m.mount_path))
                .cloned(),
        );
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
    const MIB: u64 = 1024 * 1024;
    let mib = |bytes: u64| Quantity(format!("{}Mi", bytes.div_ceil(MIB)));
    ResourceRequirements {
        requests: Some(BTreeMap::from([
            ("cpu".to_string(), Quantity("100m".into())),
            ("memory".to_string(), mib(2 * max_buffer_bytes + 64 * MIB)),
        ])),
        limits: Some(BTreeMap::from([(
            "memory".to_string(),
            mib(4 * max_buffer_bytes + 128 * MIB),
        )])),
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
