//! What a `PaimonMysqlDatabaseSync` owns (pure): its discovery worker, which lists the Paimon
//! database into `<name>--tables`, and one `PaimonMysqlSync` per matching table.
//!
//! The discovery worker is built as the slot-0 worker of a `PaimonMysqlSync` that is never
//! stored: the template with the sync name `<name>--tables` (no table's sync can have that
//! name: theirs are `<name>-<table>` with no leading `-`). It so gets the same pod settings,
//! Secrets and warehouse volumes as the tables' workers, and runs `pms-worker discover`.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Service, ServiceAccount};
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::ObjectMeta;
use kube::{Resource, ResourceExt};
use pms_crds::contract::{
    discovery_name, pool_assignment_name, pool_worker_name, Component, PoolAssignment, CONFIG_KEY,
    DATABASE_SYNC_LABEL, MYSQL_SECRET_KEYS, REPORT_KEY, TABLE_ANNOTATION,
};
use pms_crds::{
    table_sync_name, PaimonMysqlDatabaseSync, PaimonMysqlDatabaseSyncSpec, PaimonMysqlSync,
    PaimonMysqlSyncSpec,
};

use crate::context::Settings;
use crate::error::{Error, Result};
use crate::reconcile::build;
use crate::reconcile::build::pooled_resources;

/// The objects of a worker of the database sync's own (the discovery worker, a pooled
/// worker), owned by it.
pub struct Discovery {
    pub service_account: ServiceAccount,
    pub role: Role,
    pub role_binding: RoleBinding,
    pub config: ConfigMap,
    pub deployment: Deployment,
    /// Where it writes its listing or report, empty: made by the operator (the worker may not
    /// create).
    pub listing: ConfigMap,
    /// A pooled worker's metrics Service (every table's series, labelled by its sync), which
    /// the chart's ServiceMonitor scrapes as any sync's.
    pub metrics: Option<Service>,
}

fn owner(pmds: &PaimonMysqlDatabaseSync) -> Option<Vec<OwnerReference>> {
    pmds.controller_owner_ref(&()).map(|o| vec![o])
}

fn owned(meta: &mut ObjectMeta, pmds: &PaimonMysqlDatabaseSync) {
    meta.owner_references = owner(pmds);
}

pub fn discovery(pmds: &PaimonMysqlDatabaseSync, settings: &Settings) -> Result<Discovery> {
    let name = discovery_name(&pmds.name_any());
    let every = pmds.spec.discovery_interval.to_string();
    let args = vec!["discover".into(), "--every".into(), every];
    // It lists Paimon and never connects to MySQL: no MySQL credentials.
    let helper = helper(pmds, &name, args, false, settings)?;
    let mut role = helper.role;
    // It writes the listing into the ConfigMap of its own name.
    role.rules
        .get_or_insert_with(Vec::new)
        .push(config_map_rule(
            &["get", "update", "patch"],
            vec![name.clone()],
        ));
    Ok(Discovery {
        service_account: helper.service_account,
        role,
        role_binding: helper.role_binding,
        config: helper.config,
        deployment: helper.deployment,
        listing: empty_config_map(pmds, &name, Component::Discovery),
        metrics: None,
    })
}

/// Pooled worker `worker`'s objects: it runs `pms-worker pool --worker <worker>` on the whole
/// database sync's config, reads the assignment and writes its report (`report`, empty: made
/// by the operator).
pub fn pool_worker(
    pmds: &PaimonMysqlDatabaseSync,
    worker: u32,
    settings: &Settings,
) -> Result<Discovery> {
    let parent = pmds.name_any();
    let name = pool_worker_name(&parent, worker);
    let args = vec!["pool".into(), "--worker".into(), worker.to_string()];
    let mut helper = helper(pmds, &name, args, true, settings)?;
    // Its config is the database sync (every table's spec), the template as a sync's worker
    // reads it (TLS Secrets as mounted files). The number of workers is the assignment's
    // business: changing it restarts no worker, so it is left out of the pod's config hash.
    let text = helper
        .config
        .data
        .as_ref()
        .and_then(|d| d.get(CONFIG_KEY))
        .cloned()
        .unwrap_or_default();
    let mut template: PaimonMysqlSyncSpec =
        serde_yaml::from_str(&text).map_err(|source| Error::Yaml {
            sync: name.clone(),
            source,
        })?;
    template.checkpoint.storage = pmds.spec.template.checkpoint.storage;
    let mut spec = PaimonMysqlDatabaseSyncSpec {
        template,
        ..pmds.spec.clone()
    };
    spec.placement.workers = 0;
    let hashed = database_yaml(&parent, &spec, &name)?;
    spec.placement.workers = pmds.spec.placement.workers;
    let data = BTreeMap::from([(
        CONFIG_KEY.to_string(),
        database_yaml(&parent, &spec, &name)?,
    )]);
    helper.config.data = Some(data);
    let hash = build::config_hash(&ConfigMap {
        data: Some(BTreeMap::from([(CONFIG_KEY.to_string(), hashed)])),
        ..Default::default()
    });
    if let Some(t) = helper.deployment.spec.as_mut().map(|d| &mut d.template) {
        build::set_config_hash(t, &hash);
    }
    let own_resources = pmds
        .spec
        .template
        .worker_pod
        .as_ref()
        .is_some_and(|p| p.resources.is_some());
    if let Some(pod) = helper
        .deployment
        .spec
        .as_mut()
        .and_then(|d| d.template.spec.as_mut())
    {
        for c in pod.containers.iter_mut().filter(|_| !own_resources) {
            c.resources = Some(pooled_resources(
                pmds.spec.template.sink.max_buffer_bytes,
                pmds.spec.placement.max_full_reads,
            ));
        }
    }
    let labels = helper
        .deployment
        .metadata
        .labels
        .get_or_insert_with(Default::default);
    labels.insert(DATABASE_SYNC_LABEL.to_string(), parent.clone());
    let mut role = helper.role;
    let rules = role.rules.get_or_insert_with(Vec::new);
    rules.push(config_map_rule(
        &["get"],
        vec![pool_assignment_name(&parent)],
    ));
    rules.push(config_map_rule(
        &["get", "update", "patch"],
        vec![name.clone()],
    ));
    let mut w = Discovery {
        service_account: helper.service_account,
        role,
        role_binding: helper.role_binding,
        config: helper.config,
        deployment: helper.deployment,
        listing: empty_config_map(pmds, &name, Component::Pool),
        metrics: Some(helper.metrics),
    };
    // What the reconcile compares to skip applying a worker whose objects are as wanted, and
    // to tell the operator's own changes (same spec, other objects) from the user's.
    let hash = build::hash_of(&(
        &w.service_account,
        &w.role,
        &w.role_binding,
        &w.config,
        &w.deployment,
        &w.metrics,
    ));
    let mut as_applied = pmds.spec.clone();
    as_applied.placement.workers = 0;
    let annotations = w
        .deployment
        .metadata
        .annotations
        .get_or_insert_with(Default::default);
    annotations.insert(POOL_OBJECTS_HASH.to_string(), hash);
    annotations.insert(POOL_SPEC_HASH.to_string(), build::hash_of(&as_applied));
    Ok(w)
}

/// On a pooled worker's Deployment: the hash of all its objects as last applied.
pub const POOL_OBJECTS_HASH: &str = "paimonsync.io/pool-objects-hash";
/// On a pooled worker's Deployment: the hash of the database sync's spec it was applied from
/// (without `placement.workers`, which restarts no worker).
pub const POOL_SPEC_HASH: &str = "paimonsync.io/pool-spec-hash";

/// The assignment of tables to the pooled workers, in `<name>--pool`.
pub fn pool_assignment(pmds: &PaimonMysqlDatabaseSync, assignment: &PoolAssignment) -> ConfigMap {
    let name = pool_assignment_name(&pmds.name_any());
    let mut cm = empty_config_map(pmds, &name, Component::Pool);
    let text = serde_json::to_string_pretty(assignment).unwrap_or_default();
    cm.data = Some(BTreeMap::from([(REPORT_KEY.to_string(), text)]));
    cm
}

/// `{apiVersion, kind, metadata: {name}, spec}` of the database sync, as `pms-worker` reads it.
fn database_yaml(parent: &str, spec: &PaimonMysqlDatabaseSyncSpec, name: &str) -> Result<String> {
    let resource = PaimonMysqlDatabaseSync::new(parent, spec.clone());
    serde_yaml::to_string(&resource).map_err(|source| Error::Yaml {
        sync: name.to_string(),
        source,
    })
}

fn config_map_rule(verbs: &[&str], names: Vec<String>) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec!["".into()]),
        resources: Some(vec!["configmaps".into()]),
        resource_names: Some(names),
        verbs: verbs.iter().map(|v| v.to_string()).collect(),
        ..Default::default()
    }
}

fn empty_config_map(pmds: &PaimonMysqlDatabaseSync, name: &str, component: Component) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: pmds.namespace(),
            labels: Some(pms_crds::contract::labels(name, component, None)),
            owner_references: owner(pmds),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The objects of a worker of the database sync's own (not a table's): built as the slot-0
/// worker of a `PaimonMysqlSync` named `name` that is never stored, so it gets the template's
/// pod settings, Secrets and warehouse volumes; it runs `pms-worker <args>`.
struct Helper {
    service_account: ServiceAccount,
    role: Role,
    role_binding: RoleBinding,
    config: ConfigMap,
    deployment: Deployment,
    metrics: Service,
}

fn helper(
    pmds: &PaimonMysqlDatabaseSync,
    name: &str,
    args: Vec<String>,
    connects_to_mysql: bool,
    settings: &Settings,
) -> Result<Helper> {
    let mut lister = PaimonMysqlSync::new(name, pmds.spec.template.clone());
    lister.metadata.namespace = pmds.namespace();
    lister.spec.parallelism = 1;
    let mut config = build::worker_config(&lister)?;
    let mut deployment =
        build::deployment(&lister, 0, &build::config_hash(&config), false, settings);
    if let Some(pod) = deployment
        .spec
        .as_mut()
        .and_then(|d| d.template.spec.as_mut())
    {
        for c in &mut pod.containers {
            c.args = Some(args.clone());
            if let Some(env) = c.env.as_mut().filter(|_| !connects_to_mysql) {
                env.retain(|e| !MYSQL_SECRET_KEYS.iter().any(|(_, name)| e.name == *name));
            }
        }
    }
    let mut service_account = build::service_account(&lister);
    let mut role = build::role(&lister, 1);
    let mut role_binding = build::role_binding(&lister);
    let mut metrics = build::metrics_service(&lister, settings);
    owned(&mut metrics.metadata, pmds);
    owned(&mut config.metadata, pmds);
    owned(&mut deployment.metadata, pmds);
    owned(&mut service_account.metadata, pmds);
    owned(&mut role.metadata, pmds);
    owned(&mut role_binding.metadata, pmds);
    Ok(Helper {
        service_account,
        role,
        role_binding,
        config,
        deployment,
        metrics,
    })
}

/// `table`'s `PaimonMysqlSync`, with the rendered spec.
pub fn table_sync(
    pmds: &PaimonMysqlDatabaseSync,
    table: &str,
    spec: PaimonMysqlSyncSpec,
) -> PaimonMysqlSync {
    let parent = pmds.name_any();
    let mut sync = PaimonMysqlSync::new(&table_sync_name(&parent, table), spec);
    sync.metadata.namespace = pmds.namespace();
    sync.metadata.labels = Some(BTreeMap::from([(DATABASE_SYNC_LABEL.to_string(), parent)]));
    sync.metadata.annotations = Some(BTreeMap::from([(
        TABLE_ANNOTATION.to_string(),
        table.to_string(),
    )]));
    owned(&mut sync.metadata, pmds);
    // What the reconcile compares to skip applying a sync that is as wanted.
    let hash = build::hash_of(&(&sync.metadata, &sync.spec));
    sync.annotations_mut()
        .insert(APPLIED_HASH.to_string(), hash);
    sync
}

/// On a table's sync: the hash of what was last applied of it (its metadata and spec).
pub const APPLIED_HASH: &str = "paimonsync.io/applied-hash";

#[cfg(test)]
mod tests {
    use super::*;

    fn pmds() -> PaimonMysqlDatabaseSync {
        let mut p = PaimonMysqlDatabaseSync::new(
            "shop",
            serde_yaml::from_str(
                "tables: {pattern: '.*'}
discoveryInterval: 10s
template:
  parallelism: 3
  source: {warehouse: /wh, database: shop, table: '{table}'}
  sink: {url: 'mysql://h/db', table: '{table}_rt', credentialsSecretRef: {name: mysql}}",
            )
            .unwrap(),
        );
        p.metadata.namespace = Some("ns".into());
        p.metadata.uid = Some("u-1".into());
        p
    }

    #[test]
    fn the_discovery_worker_lists_with_the_tables_pod_settings() {
        let d = discovery(&pmds(), &Settings::default()).unwrap();
        assert_eq!(d.deployment.name_any(), "shop--tables-slot-0");
        let pod = d.deployment.spec.unwrap().template.spec.unwrap();
        let c = &pod.containers[0];
        assert_eq!(c.args.as_deref().unwrap(), ["discover", "--every", "10s"]);
        let env: Vec<&str> = c
            .env
            .as_ref()
            .unwrap()
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        assert!(
            !env.contains(&"MYSQL_PASSWORD") && !env.contains(&"MYSQL_USER"),
            "it never connects to MySQL: {env:?}"
        );
        assert!(env.contains(&"PMS_NAMESPACE"), "{env:?}");
        let owner = &d.config.metadata.owner_references.unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str()),
            ("PaimonMysqlDatabaseSync", "shop")
        );
        let writes = d.role.rules.unwrap().into_iter().any(|r| {
            r.resource_names == Some(vec!["shop--tables".into()])
                && r.verbs.contains(&"patch".into())
        });
        assert!(writes, "the discovery worker may write its listing");
    }

    fn pooled(workers: u32) -> PaimonMysqlDatabaseSync {
        let mut p = pmds();
        p.spec.template.parallelism = 1;
        p.spec.template.sink.delivery = pms_crds::Delivery::ExactlyOnce;
        p.spec.placement.mode = pms_crds::PlacementMode::Pooled;
        p.spec.placement.workers = workers;
        p
    }

    #[test]
    fn a_pooled_worker_runs_the_database_config_and_reports_in_its_configmap() {
        let w = pool_worker(&pooled(3), 1, &Settings::default()).unwrap();
        assert_eq!(w.deployment.name_any(), "shop--pool-1-slot-0");
        let pod = w
            .deployment
            .spec
            .as_ref()
            .unwrap()
            .template
            .spec
            .clone()
            .unwrap();
        let c = &pod.containers[0];
        assert_eq!(c.args.as_deref().unwrap(), ["pool", "--worker", "1"]);
        let env: Vec<&str> = c
            .env
            .as_ref()
            .unwrap()
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        assert!(
            env.contains(&"MYSQL_PASSWORD"),
            "it writes to MySQL: {env:?}"
        );
        let limit = &c.resources.as_ref().unwrap().limits.as_ref().unwrap()["memory"];
        assert_eq!(
            limit.0, "1536Mi",
            "2 full reads of 64 MiB buffers, and the tables at rest"
        );
        let text = &w.config.data.as_ref().unwrap()[CONFIG_KEY];
        let read: PaimonMysqlDatabaseSync = serde_yaml::from_str(text).unwrap();
        assert_eq!(
            (read.name_any().as_str(), read.spec.placement.workers),
            ("shop", 3)
        );
        assert_eq!(read.spec.template.source.table, "{table}");
        assert_eq!(
            read.spec.template.checkpoint.storage, None,
            "the progress row"
        );
        let rules = w.role.rules.unwrap();
        let may = |verb: &str, cm: &str| {
            rules.iter().any(|r| {
                r.verbs.contains(&verb.to_string())
                    && r.resource_names
                        .as_ref()
                        .is_some_and(|n| n.contains(&cm.to_string()))
            })
        };
        assert!(
            may("get", "shop--pool") && !may("patch", "shop--pool"),
            "reads the assignment only"
        );
        assert!(
            may("patch", "shop--pool-1") && !may("patch", "shop--pool-0"),
            "writes its own report"
        );
        assert_eq!(w.listing.name_any(), "shop--pool-1");
    }

    /// Pooled worker 0's config hash.
    fn pooled_hash(p: &PaimonMysqlDatabaseSync) -> String {
        let w = pool_worker(p, 0, &Settings::default()).unwrap();
        let t = w.deployment.spec.unwrap().template;
        t.metadata.unwrap().annotations.unwrap()["paimonsync.io/config-hash"].clone()
    }

    #[test]
    fn a_new_number_of_pooled_workers_restarts_none() {
        assert_eq!(pooled_hash(&pooled(2)), pooled_hash(&pooled(5)));
        let mut other = pooled(2);
        other.spec.placement.max_full_reads = 7;
        assert_ne!(pooled_hash(&other), pooled_hash(&pooled(2)));
    }

    #[test]
    fn a_table_sync_is_labelled_and_owned() {
        let p = pmds();
        let s = table_sync(&p, "dim_x", p.spec.render("dim_x").unwrap());
        assert_eq!(s.name_any(), "shop-dim-x");
        assert_eq!(s.labels()[DATABASE_SYNC_LABEL], "shop");
        assert_eq!(s.annotations()[TABLE_ANNOTATION], "dim_x");
        assert_eq!(s.spec.sink.table, "dim_x_rt");
        assert_eq!(
            s.metadata.owner_references.unwrap()[0].controller,
            Some(true)
        );
    }
}
