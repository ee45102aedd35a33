//! Names, labels and data keys of the objects of one sync. The operator creates most of them;
//! the workers create and update their checkpoint ConfigMaps, named and labelled the same way.

use std::collections::BTreeMap;

/// Field manager and `app.kubernetes.io/managed-by` of everything the operator writes.
pub const MANAGER: &str = "pms-operator";
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
pub const SYNC_LABEL: &str = "paimonsync.io/sync";
pub const COMPONENT_LABEL: &str = "paimonsync.io/component";
pub const SLOT_LABEL: &str = "paimonsync.io/slot";
/// On each `PaimonMysqlSync` a `PaimonMysqlDatabaseSync` made: its name.
pub const DATABASE_SYNC_LABEL: &str = "paimonsync.io/database-sync";
/// On each `PaimonMysqlSync` a `PaimonMysqlDatabaseSync` made: the Paimon table's name.
pub const TABLE_ANNOTATION: &str = "paimonsync.io/table";
/// The key of the worker's YAML in `<sync>-config`.
pub const CONFIG_KEY: &str = "sync.yaml";
/// The key of the checkpoint JSON in `<sync>-checkpoint-<slot>`.
pub const CHECKPOINT_KEY: &str = "checkpoint.json";

/// What an object is for (the `paimonsync.io/component` label).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    Config,
    Worker,
    Metrics,
    Rbac,
    Checkpoint,
    /// The rebuild's Job and report ConfigMap.
    Rebuild,
    /// The periodic verify's Job and report ConfigMap.
    Verify,
    /// The restore's Job and report ConfigMap (`spec.restoreFrom`).
    Restore,
    /// Savepoints the operator created, and every savepoint's data.
    Savepoint,
    /// The pre-flight report slot 0's worker writes at each start (`pms-worker check`).
    Preflight,
    /// A database sync's discovery worker (it lists the Paimon database) and its report.
    Discovery,
    /// A pooled database sync's workers, their assignment and reports.
    Pool,
}

impl Component {
    pub fn as_str(self) -> &'static str {
        match self {
            Component::Config => "config",
            Component::Worker => "worker",
            Component::Metrics => "metrics",
            Component::Rbac => "rbac",
            Component::Checkpoint => "checkpoint",
            Component::Rebuild => "rebuild",
            Component::Verify => "verify",
            Component::Restore => "restore",
            Component::Savepoint => "savepoint",
            Component::Preflight => "preflight",
            Component::Discovery => "discovery",
            Component::Pool => "pool",
        }
    }
}

pub fn config_map_name(sync: &str) -> String {
    format!("{sync}-config")
}
pub fn deployment_name(sync: &str, slot: u32) -> String {
    format!("{sync}-slot-{slot}")
}
pub fn service_name(sync: &str) -> String {
    format!("{sync}-metrics")
}
/// ServiceAccount, Role and RoleBinding of the workers.
pub fn worker_identity_name(sync: &str) -> String {
    format!("{sync}-worker")
}
pub fn checkpoint_name(sync: &str, slot: u32) -> String {
    format!("{sync}-checkpoint-{slot}")
}

/// The name of a sync outside its namespace (S3 keys, Paimon consumer ids, exactly-once
/// progress rows), where two namespaces may hold syncs of one name: `<namespace>_<sync>` under
/// the operator (neither has an underscore), the sync's name standalone. Releases before it
/// used the bare name there, which [`legacy_external_name`] gives for their migration.
pub fn external_name(namespace: Option<&str>, sync: &str) -> String {
    match namespace {
        Some(ns) if !ns.is_empty() => format!("{ns}_{sync}"),
        _ => sync.to_string(),
    }
}

/// What [`external_name`] was before namespaces were part of it, when it differs.
pub fn legacy_external_name(namespace: Option<&str>, sync: &str) -> Option<String> {
    (external_name(namespace, sync) != sync).then(|| sync.to_string())
}

/// With `checkpoint.storage: s3`, slot `slot`'s checkpoint object under `checkpoint.s3.prefix`.
pub fn checkpoint_object(sync: &str, slot: u32) -> String {
    format!("{}.json", checkpoint_name(sync, slot))
}
/// The slot in a checkpoint object's name (`None`: not one of `sync`'s checkpoints).
pub fn checkpoint_object_slot(sync: &str, object: &str) -> Option<u32> {
    let rest = object.strip_prefix(sync)?.strip_prefix("-checkpoint-")?;
    rest.strip_suffix(".json")?.parse().ok()
}
/// With `checkpoint.storage: s3`, where savepoint data lives under `checkpoint.s3.prefix`.
pub fn savepoint_objects(sync: &str) -> String {
    format!("savepoints/{sync}/")
}
pub fn savepoint_object(sync: &str, savepoint: &str) -> String {
    format!("{}{savepoint}.json", savepoint_objects(sync))
}

/// The Paimon consumer of one slot: `consumerId` (default `pms-<sync>`), `-slot<k>` when
/// there is more than one slot.
pub fn consumer_id(configured: Option<&str>, sync: &str, slot: crate::contract::Slot) -> String {
    let base = configured.map_or_else(|| format!("pms-{}", sanitize(sync)), str::to_string);
    if slot.count > 1 {
        format!("{base}-slot{}", slot.index)
    } else {
        base
    }
}

/// A name safe in file names and Paimon consumer ids.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// `app.kubernetes.io/*` plus ours; `slot` only on per-slot objects. A checkpoint ConfigMap has
/// no owner (it outlives its sync when kept), so it doesn't get `app.kubernetes.io/instance`:
/// Argo CD tracks an application's resources by that label and would prune a checkpoint of a
/// sync named like the application. `paimonsync.io/sync` is what names its sync.
pub fn labels(sync: &str, component: Component, slot: Option<u32>) -> BTreeMap<String, String> {
    let mut l = BTreeMap::from([
        (
            "app.kubernetes.io/name".to_string(),
            "paimon-mysql-sync".to_string(),
        ),
        (MANAGED_BY_LABEL.to_string(), MANAGER.to_string()),
        (SYNC_LABEL.to_string(), sync.to_string()),
        (COMPONENT_LABEL.to_string(), component.as_str().to_string()),
    ]);
    if component != Component::Checkpoint {
        l.insert("app.kubernetes.io/instance".to_string(), sync.to_string());
    }
    if let Some(s) = slot {
        l.insert(SLOT_LABEL.to_string(), s.to_string());
    }
    l
}

/// Selects every object of one sync.
pub fn sync_selector(sync: &str) -> String {
    format!("{SYNC_LABEL}={sync}")
}

/// Selects one component's objects of one sync.
pub fn component_selector(sync: &str, component: Component) -> String {
    format!(
        "{SYNC_LABEL}={sync},{COMPONENT_LABEL}={}",
        component.as_str()
    )
}

/// Where the workers find the Secrets of `sink.tls`: the operator mounts them here and writes
/// these paths into the worker's config in place of the Secret refs.
pub const MYSQL_TLS_CA_DIR: &str = "/etc/pms-mysql-tls/ca";
pub const MYSQL_TLS_CA_FILE: &str = "ca.crt";
pub const MYSQL_TLS_CLIENT_DIR: &str = "/etc/pms-mysql-tls/client";
/// Where the workers find `source.hadoopConf` (`HADOOP_CONF_DIR`) and `source.kerberos`'s keytab
/// and `krb5.conf` (`KRB5_CLIENT_KTNAME`, `KRB5_CONFIG`), mounted by the operator.
pub const HADOOP_CONF_MOUNT: &str = "/etc/pms-hadoop/conf";
pub const KERBEROS_KEYTAB_DIR: &str = "/etc/pms-kerberos/keytab";
pub const KERBEROS_KEYTAB_FILE: &str = "keytab";
pub const KRB5_CONF_DIR: &str = "/etc/pms-kerberos/conf";
pub const KRB5_CONF_FILE: &str = "krb5.conf";
/// The keys of a `kubernetes.io/tls` Secret: certificate chain, then key.
pub const TLS_SECRET_KEYS: [&str; 2] = ["tls.crt", "tls.key"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_less_checkpoint_is_not_labelled_as_an_argo_cd_instance() {
        let checkpoint = labels("shop", Component::Checkpoint, Some(0));
        assert!(!checkpoint.contains_key("app.kubernetes.io/instance"));
        assert_eq!(checkpoint[SYNC_LABEL], "shop");
        let worker = labels("shop", Component::Worker, Some(0));
        assert_eq!(worker["app.kubernetes.io/instance"], "shop");
    }

    #[test]
    fn external_names_carry_the_namespace_and_stay_apart() {
        assert_eq!(external_name(Some("team-a"), "orders"), "team-a_orders");
        assert_eq!(external_name(None, "shop.orders"), "shop.orders");
        // "a-b" + "c" and "a" + "b-c" are two syncs, two names (a hyphen would join them).
        let single = crate::contract::Slot::SINGLE;
        assert_ne!(
            consumer_id(None, &external_name(Some("a-b"), "c"), single),
            consumer_id(None, &external_name(Some("a"), "b-c"), single)
        );
        assert_eq!(
            legacy_external_name(Some("team-a"), "orders").as_deref(),
            Some("orders")
        );
        assert_eq!(legacy_external_name(None, "orders"), None);
    }

    #[test]
    fn checkpoint_objects_name_their_slot_and_no_other_syncs() {
        assert_eq!(checkpoint_object("s", 2), "s-checkpoint-2.json");
        assert_eq!(checkpoint_object_slot("s", "s-checkpoint-2.json"), Some(2));
        assert_eq!(
            checkpoint_object_slot("s", "s-rebuild-checkpoint-2.json"),
            None
        );
        assert_eq!(checkpoint_object_slot("s", "s-checkpoint-2.json.tmp"), None);
        assert_eq!(savepoint_object("s", "sp1"), "savepoints/s/sp1.json");
    }
}
