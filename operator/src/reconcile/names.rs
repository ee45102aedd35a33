//! Names and labels of everything a `PaimonMysqlSync` owns. Workers compute the checkpoint
//! ConfigMap names the same way (`<sync>-checkpoint-<slot>`).

use std::collections::BTreeMap;

pub const MANAGER: &str = "pms-operator";
pub const SYNC_LABEL: &str = "paimonsync.io/sync";
pub const COMPONENT_LABEL: &str = "paimonsync.io/component";
pub const SLOT_LABEL: &str = "paimonsync.io/slot";
pub const CONFIG_KEY: &str = "sync.yaml";
pub const CHECKPOINT_KEY: &str = "checkpoint.json";

pub fn config_map(sync: &str) -> String {
    format!("{sync}-config")
}
pub fn deployment(sync: &str, slot: u32) -> String {
    format!("{sync}-slot-{slot}")
}
pub fn service(sync: &str) -> String {
    format!("{sync}-metrics")
}
/// ServiceAccount, Role and RoleBinding of the workers.
pub fn worker_identity(sync: &str) -> String {
    format!("{sync}-worker")
}
pub fn checkpoint(sync: &str, slot: u32) -> String {
    format!("{sync}-checkpoint-{slot}")
}

/// `app.kubernetes.io/*` plus ours; `slot` only on per-slot objects.
pub fn labels(sync: &str, component: &str, slot: Option<u32>) -> BTreeMap<String, String> {
    let mut l = BTreeMap::from([
        (
            "app.kubernetes.io/name".to_string(),
            "paimon-mysql-sync".to_string(),
        ),
        ("app.kubernetes.io/instance".to_string(), sync.to_string()),
        (
            "app.kubernetes.io/managed-by".to_string(),
            MANAGER.to_string(),
        ),
        (SYNC_LABEL.to_string(), sync.to_string()),
        (COMPONENT_LABEL.to_string(), component.to_string()),
    ]);
    if let Some(s) = slot {
        l.insert(SLOT_LABEL.to_string(), s.to_string());
    }
    l
}

/// Selects a component's objects of one sync.
pub fn selector(sync: &str, component: &str) -> String {
    format!("{SYNC_LABEL}={sync},{COMPONENT_LABEL}={component}")
}
