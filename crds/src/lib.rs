//! API types of `PaimonMysqlSync` (group `paimonsync.io`, version `v1alpha1`).
//!
//! One schema serves both the custom resource and the standalone worker's YAML file
//! (see docs/architecture.md); the worker reads `spec` alone, or a whole resource. The
//! worker ↔ operator contract (names, labels, env, the checkpoint) is in [`contract`].

mod bounds;
pub mod contract;
mod database;
mod duration;
mod ranges;
mod reference;
mod savepoint;
mod spec;
mod status;
mod worker_pod;

pub use bounds::{MAX_SAFE_INTEGER, MAX_STATUS_STRING, MAX_STRING};
pub use database::*;
pub use duration::HumanDuration;
pub use ranges::out_of_range;
pub use reference::reference_markdown;
pub use savepoint::*;
pub use spec::*;
pub use status::*;
pub use worker_pod::WorkerPodSpec;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps, ValidationRule,
};

/// The revision of the CRDs' schemas, stamped on each CRD as [`SCHEMA_REVISION_ANNOTATION`]: an
/// operator never applies its CRDs over ones of a later revision (a `helm rollback` to an older
/// operator would prune the newer fields of every resource). Raised with each change of the
/// schemas: `crds/schema-revisions.txt` lists each revision with a digest of its schemas, and a
/// test fails until a changed schema has its line.
pub const SCHEMA_REVISION: u32 = 15;
pub const SCHEMA_REVISION_ANNOTATION: &str = "paimonsync.io/schema-revision";

/// The CRDs, stamped with [`SCHEMA_REVISION`].
pub fn crds() -> Vec<CustomResourceDefinition> {
    let mut crds = unstamped_crds();
    for crd in &mut crds {
        crd.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(
                SCHEMA_REVISION_ANNOTATION.to_string(),
                SCHEMA_REVISION.to_string(),
            );
    }
    crds
}

/// The schema revision a CRD found in the cluster was stamped with (0: none, one older than
/// the stamp).
pub fn schema_revision(crd: &CustomResourceDefinition) -> u32 {
    crd.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(SCHEMA_REVISION_ANNOTATION))
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

/// The CRDs as the schemas alone make them, as [`schema_revision_digest`] reads them.
/// The sync's gets rules on its name, which only the root of a schema can hold
/// (`metadata.name`): none may end like a rebuild's, nor be longer than the names made from it
/// allow ([`contract::MAX_SYNC_NAME`]). Every value is bounded ([`bounds`]): the API server
/// admits none the types can't decode.
fn unstamped_crds() -> Vec<CustomResourceDefinition> {
    let mut crds = generated_crds();
    for crd in &mut crds {
        for version in &mut crd.spec.versions {
            if let Some(schema) = version.schema.as_mut() {
                if let Some(root) = schema.open_api_v3_schema.take() {
                    let mut json = serde_json::to_value(root).expect("the schema serializes");
                    bounds::bound_root(&mut json);
                    schema.open_api_v3_schema =
                        Some(serde_json::from_value(json).expect("a bounded schema is a schema"));
                }
            }
        }
    }
    crds
}

/// The CRDs as kube's derive makes them, with the root rules.
fn generated_crds() -> Vec<CustomResourceDefinition> {
    use kube::CustomResourceExt;
    let mut sync = PaimonMysqlSync::crd();
    add_root_rules(
        &mut sync,
        [
            (
                format!("!self.metadata.name.endsWith('{}')", contract::REBUILD_SUFFIX),
                format!(
                    "a sync's name must not end with {:?}: that names a rebuild's new generation of another sync",
                    contract::REBUILD_SUFFIX
                ),
            ),
            (
                format!("size(self.metadata.name) <= {}", contract::MAX_SYNC_NAME),
                contract::name_too_long_message(),
            ),
            (
                format!(
                    "!self.metadata.name.contains('{}')",
                    contract::RESERVED_IN_SYNC_NAMES
                ),
                format!(
                    "a sync's name must not contain {:?}: <database sync>--… names a database sync's discovery \
                     and pooled workers, whose labels it would share",
                    contract::RESERVED_IN_SYNC_NAMES
                ),
            ),
        ],
    );
    let mut database = PaimonMysqlDatabaseSync::crd();
    in_database_sync_words(&mut database);
    add_root_rules(
        &mut database,
        [(
            format!(
                "size(self.metadata.name) <= {}",
                contract::MAX_DATABASE_SYNC_NAME
            ),
            contract::database_sync_name_too_long_message(),
        )],
    );
    vec![sync, PaimonMysqlSyncSavepoint::crd(), database]
}

/// A database sync's template is a sync's spec, rules and all; but the way out a sync's
/// messages give ("create a new PaimonMysqlSync and delete this one"), said of a database
/// sync, would delete every table's sync. Its template's messages say it in its own words.
fn in_database_sync_words(crd: &mut CustomResourceDefinition) {
    fn rewrite(schema: &mut JSONSchemaProps) {
        for rule in schema.x_kubernetes_validations.iter_mut().flatten() {
            let message = rule.message.as_deref().unwrap_or_default();
            let what = if message.starts_with("a sync's Paimon table") {
                "template.source (warehouse, database, table) can't change: each table's checkpoints describe \
                 the old Paimon table"
            } else if message.starts_with("a sync's MySQL table") {
                "template.sink.table can't change: each table's checkpoints describe its old MySQL table"
            } else {
                continue;
            };
            rule.message = Some(format!(
                "a database sync's {what}. To sync other tables, create a new PaimonMysqlDatabaseSync (each table's \
                 first run reads in full and removes the rows its MySQL table holds that Paimon doesn't), then \
                 delete this one (its tables' syncs go; the MySQL tables stay)"
            ));
        }
        for child in schema.properties.iter_mut().flat_map(|p| p.values_mut()) {
            rewrite(child);
        }
    }
    for version in &mut crd.spec.versions {
        let template = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
            .and_then(|root| root.properties.as_mut()?.get_mut("spec"))
            .and_then(|spec| spec.properties.as_mut()?.get_mut("template"));
        if let Some(template) = template {
            rewrite(template);
        }
    }
}

/// Adds CEL rules (rule, message) to the root of every version's schema: the only place a
/// rule on `metadata.name` can be.
fn add_root_rules<const N: usize>(
    crd: &mut CustomResourceDefinition,
    rules: [(String, String); N],
) {
    for version in &mut crd.spec.versions {
        if let Some(root) = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
        {
            let validations = root.x_kubernetes_validations.get_or_insert_with(Vec::new);
            validations.extend(rules.iter().map(|(rule, message)| ValidationRule {
                rule: rule.clone(),
                message: Some(message.clone()),
                ..Default::default()
            }));
        }
    }
}

/// The CRDs as one YAML stream. Each goes through JSON text first: with serde_json's `arbitrary_precision`
/// (enabled in the workspace by the `paimon` crate) numbers would otherwise serialize as
/// private maps instead of plain YAML numbers.
pub fn crd_yaml() -> String {
    yaml_of(crds())
}

/// What `crds/schema-revisions.txt` lists for the schemas of this build: an FNV-1a digest of
/// their YAML without the revision stamp (stable across builds and toolchains).
pub fn schema_revision_digest() -> String {
    let yaml = yaml_of(unstamped_crds());
    let digest = yaml.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{digest:016x}")
}

fn yaml_of(crds: Vec<CustomResourceDefinition>) -> String {
    crds.into_iter()
        .map(|crd| {
            let json = serde_json::to_string(&crd).expect("the CRD serializes");
            let value: serde_yaml::Value = serde_yaml::from_str(&json).expect("JSON is YAML");
            serde_yaml::to_string(&value).expect("YAML serializes")
        })
        .collect::<Vec<_>>()
        .join("---\n")
}
