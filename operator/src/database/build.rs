//! What a `PaimonMysqlDatabaseSync` owns (pure): its discovery worker, which lists the Paimon
//! database into `<name>--tables`, and one `PaimonMysqlSync` per matching table.
//!
//! The discovery worker is built as the slot-0 worker of a `PaimonMysqlSync` that is never
//! stored: the template with the sync name `<name>--tables` (no table's sync can have that
//! name: theirs are `<name>-<table>` with no leading `-`). It so gets the same pod settings,
//! Secrets and warehouse volumes as the tables' workers, and runs `pms-worker discover`.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::ObjectMeta;
use kube::{Resource, ResourceExt};
use pms_crds::contract::{
    discovery_name, DATABASE_SYNC_LABEL, MYSQL_SECRET_KEYS, TABLE_ANNOTATION,
};
use pms_crds::{table_sync_name, PaimonMysqlDatabaseSync, PaimonMysqlSync, PaimonMysqlSyncSpec};

use crate::context::Settings;
use crate::error::Result;
use crate::reconcile::build;

/// The discovery worker's objects, owned by the database sync.
pub struct Discovery {
    pub service_account: ServiceAccount,
    pub role: Role,
    pub role_binding: RoleBinding,
    pub config: ConfigMap,
    pub deployment: Deployment,
    /// Where it writes its listing, empty: made by the operator (the worker may not create).
    pub listing: ConfigMap,
}

fn owner(pmds: &PaimonMysqlDatabaseSync) -> Option<Vec<OwnerReference>> {
    pmds.controller_owner_ref(&()).map(|o| vec![o])
}

fn owned(meta: &mut ObjectMeta, pmds: &PaimonMysqlDatabaseSync) {
    meta.owner_references = owner(pmds);
}

pub fn discovery(pmds: &PaimonMysqlDatabaseSync, settings: &Settings) -> Result<Discovery> {
    let name = discovery_name(&pmds.name_any());
    let mut lister = PaimonMysqlSync::new(&name, pmds.spec.template.clone());
    lister.metadata.namespace = pmds.namespace();
    lister.spec.parallelism = 1;
    let mut config = build::worker_config(&lister)?;
    let mut deployment =
        build::deployment(&lister, 0, &build::config_hash(&config), false, settings);
    let every = pmds.spec.discovery_interval.to_string();
    if let Some(pod) = deployment
        .spec
        .as_mut()
        .and_then(|d| d.template.spec.as_mut())
    {
        for c in &mut pod.containers {
            c.args = Some(vec!["discover".into(), "--every".into(), every.clone()]);
            // It lists Paimon and never connects to MySQL: no MySQL credentials.
            if let Some(env) = c.env.as_mut() {
                env.retain(|e| !MYSQL_SECRET_KEYS.iter().any(|(_, name)| e.name == *name));
            }
        }
    }
    let mut service_account = build::service_account(&lister);
    let mut role = build::role(&lister, 1);
    // It writes the listing into the ConfigMap of its own name.
    role.rules.get_or_insert_with(Vec::new).push(PolicyRule {
        api_groups: Some(vec!["".into()]),
        resources: Some(vec!["configmaps".into()]),
        resource_names: Some(vec![name.clone()]),
        verbs: vec!["get".into(), "update".into(), "patch".into()],
        ..Default::default()
    });
    let mut role_binding = build::role_binding(&lister);
    let listing = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: pmds.namespace(),
            labels: Some(pms_crds::contract::labels(
                &name,
                pms_crds::contract::Component::Discovery,
                None,
            )),
            owner_references: owner(pmds),
            ..Default::default()
        },
        ..Default::default()
    };
    owned(&mut config.metadata, pmds);
    owned(&mut deployment.metadata, pmds);
    owned(&mut service_account.metadata, pmds);
    owned(&mut role.metadata, pmds);
    owned(&mut role_binding.metadata, pmds);
    Ok(Discovery {
        service_account,
        role,
        role_binding,
        config,
        deployment,
        listing,
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
    sync
}

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
