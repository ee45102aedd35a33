//! API types of `PaimonMysqlSync` (group `paimonsync.io`, version `v1alpha1`).
//!
//! One schema serves both the custom resource and the standalone worker's YAML file
//! (see docs/architecture.md); the worker reads `spec` alone, or a whole resource. The
//! worker ↔ operator contract (names, labels, env, the checkpoint) is in [`contract`].

pub mod contract;
mod database;
mod duration;
mod ranges;
mod savepoint;
mod spec;
mod status;
mod worker_pod;

pub use database::*;
pub use duration::HumanDuration;
pub use ranges::out_of_range;
pub use savepoint::*;
pub use spec::*;
pub use status::*;
pub use worker_pod::WorkerPodSpec;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, ValidationRule,
};

/// The CRDs: the sync, its savepoints, the database sync. The sync's gets rules on its name,
/// which only the root of a schema can hold (`metadata.name`): none may end like a rebuild's,
/// nor be longer than the names made from it allow ([`contract::MAX_SYNC_NAME`]).
pub fn crds() -> Vec<CustomResourceDefinition> {
    use kube::CustomResourceExt;
    let mut sync = PaimonMysqlSync::crd();
    for version in &mut sync.spec.versions {
        if let Some(root) = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
        {
            let rules = root.x_kubernetes_validations.get_or_insert_with(Vec::new);
            rules.push(ValidationRule {
                rule: format!("!self.metadata.name.endsWith('{}')", contract::REBUILD_SUFFIX),
                message: Some(format!(
                    "a sync's name must not end with {:?}: that names a rebuild's new generation of another sync",
                    contract::REBUILD_SUFFIX
                )),
                ..Default::default()
            });
            rules.push(ValidationRule {
                rule: format!("size(self.metadata.name) <= {}", contract::MAX_SYNC_NAME),
                message: Some(contract::name_too_long_message()),
                ..Default::default()
            });
        }
    }
    vec![
        sync,
        PaimonMysqlSyncSavepoint::crd(),
        PaimonMysqlDatabaseSync::crd(),
    ]
}

/// The CRDs as one YAML stream. Each goes through JSON text first: with serde_json's `arbitrary_precision`
/// (enabled in the workspace by the `paimon` crate) numbers would otherwise serialize as
/// private maps instead of plain YAML numbers.
pub fn crd_yaml() -> String {
    crds()
        .into_iter()
        .map(|crd| {
            let mut crd = serde_json::to_value(crd).expect("the CRD serializes");
            drop_unsigned_formats(&mut crd);
            let json = serde_json::to_string(&crd).expect("the CRD serializes");
            let value: serde_yaml::Value = serde_yaml::from_str(&json).expect("JSON is YAML");
            serde_yaml::to_string(&value).expect("YAML serializes")
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

/// schemars writes `format: uint32/uint64`, which the API server doesn't know (it warns on
/// every apply); `minimum: 0` already says what matters.
fn drop_unsigned_formats(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            if matches!(
                map.get("format").and_then(|f| f.as_str()),
                Some("uint32" | "uint64" | "uint" | "uint8" | "uint16")
            ) {
                map.remove("format");
            }
            map.values_mut().for_each(drop_unsigned_formats);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(drop_unsigned_formats),
        _ => {}
    }
}
