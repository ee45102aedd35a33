//! One reconcile of one `PaimonMysqlDatabaseSync`, a generator like Argo CD's ApplicationSet:
//!
//! 1. validate the spec (patterns, `{table}` where each table needs its own value);
//! 2. apply the discovery worker ([`build::discovery`]), which lists the Paimon database
//!    every `discoveryInterval` into the ConfigMap `<name>--tables`;
//! 3. from the last listing, apply one `PaimonMysqlSync` per matching table (a new one: the
//!    `TableAdded` event) and delete those of tables dropped or no longer matching (their
//!    workers and checkpoints go as for any deleted sync; the MySQL table is never touched);
//! 4. the status, summed up from the tables' syncs ([`status`]).
//!
//! Each table's sync is then reconciled like any other, so every guarantee and operation of a
//! single-table sync (delivery, checkpoints, savepoints, rebuild, verify) holds per table.

pub mod build;
mod pool;
pub mod status;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ApiResource, DeleteParams, DynamicObject, ListParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::EventType;
use kube::runtime::finalizer::{finalizer, Event as Finalizer};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, ResourceExt};
use pms_crds::contract::{
    discovery_name, too_long_for_kubernetes, Component, TableListing, COMPONENT_LABEL,
    DATABASE_SYNC_LABEL, MANAGER, REPORT_KEY, TABLE_ANNOTATION,
};
use pms_crds::{
    name_clashes, PaimonMysqlDatabaseSync, PaimonMysqlSync, PlacementMode, TableStatus,
};
use tracing::{info, warn};

use crate::context::Context;
use crate::error::{Error, Result, Verb};
use crate::reconcile::{apply, deleting_for, finalizer_outcome, publish, waiting, FINALIZER};
use crate::undecodable;
use crate::watch_keys;

/// A database sync is looked at again at least this often (its tables' statuses move).
const RESYNC: Duration = Duration::from_secs(15);

/// Reconciles the database syncs on every change of them, of their tables' syncs, and of
/// their listings.
pub async fn run_controller(client: Client, namespace: Option<&str>, ctx: Arc<Context>) {
    // The operator's own kinds as dynamic objects (see `undecodable.rs`).
    let syncs = undecodable::api::<PaimonMysqlSync>(&client, namespace);
    let (deployments, config_maps) = match namespace {
        Some(ns) => (
            Api::<Deployment>::namespaced(client.clone(), ns),
            Api::<ConfigMap>::namespaced(client.clone(), ns),
        ),
        None => (Api::all(client.clone()), Api::all(client.clone())),
    };
    let listings = watcher::Config::default().labels(&format!(
        "{COMPONENT_LABEL}={}",
        Component::Discovery.as_str()
    ));
    let by_listing = |cm: ConfigMap| {
        let parent = cm.name_any().strip_suffix("--tables")?.to_string();
        Some(
            ObjectRef::<PaimonMysqlDatabaseSync>::new(&parent)
                .within(&cm.namespace()?)
                .erase(),
        )
    };
    // Reconciled on what it decides by, not on each write of its own status, each checkpoint
    // of a table's sync (its snapshot moves) or each status write of a Deployment: its spec or
    // deletion; a table's sync's phase or readiness; a worker Deployment's readiness. (What
    // moves without those is read at the resync.)
    let (spec_changes, store, resource) =
        undecodable::spec_changes::<PaimonMysqlDatabaseSync>(&client, namespace);
    let table_syncs = watcher(
        syncs,
        watcher::Config::default().labels(DATABASE_SYNC_LABEL),
    )
    .default_backoff()
    .touched_objects()
    .predicate_filter(watch_keys::phase_or_readiness, Default::default());
    let workers = watcher(
        deployments,
        watcher::Config::default().labels(&format!("app.kubernetes.io/managed-by={MANAGER}")),
    )
    .default_backoff()
    .touched_objects()
    .predicate_filter(watch_keys::deployment_readiness, Default::default());
    // A pooled worker's place at the restart gate freed (`pool.rs`): its database sync applies
    // the worker's new pod spec.
    let gate_wakeups = ctx
        .restart_gate
        .wakeups(namespace)
        .filter_map(|woken| async move {
            let (parent, _) = woken.name.rsplit_once("--pool-")?;
            let ns = woken.namespace.as_deref()?;
            Some(
                ObjectRef::<PaimonMysqlDatabaseSync>::new(parent)
                    .within(ns)
                    .erase(),
            )
        });
    Controller::for_stream_with(spec_changes, store, resource)
        .owns_stream_with(table_syncs, ApiResource::erase::<PaimonMysqlSync>(&()))
        .owns_stream(workers)
        .watches(config_maps, listings, by_listing)
        .reconcile_on(gate_wakeups)
        .shutdown_on_signal()
        .run(reconcile_watched, crate::reconcile::error_policy, ctx)
        .for_each(|result| async move {
            match result {
                Err(e) if !waiting(&e) => warn!(error = %e, "reconcile error (database sync)"),
                _ => {}
            }
        })
        .await
}

/// A watched database sync, decoded, or reported when it can't be (see `undecodable.rs`):
/// deleted, its tables' syncs and workers go by their ownerReferences.
async fn reconcile_watched(object: Arc<DynamicObject>, ctx: Arc<Context>) -> Result<Action> {
    let nothing_to_wait_for: undecodable::NameOnlyCleanup =
        |_, _, _, _| Box::pin(async { Ok(None) });
    undecodable::reconcile(object, ctx, reconcile, Some(nothing_to_wait_for)).await
}

pub async fn reconcile(pmds: Arc<PaimonMysqlDatabaseSync>, ctx: Arc<Context>) -> Result<Action> {
    if let Some(leadership) = &ctx.leadership {
        leadership.check().await?;
    }
    let name = pmds.name_any();
    let ns = pmds
        .namespace()
        .ok_or_else(|| Error::NotNamespaced(name.clone()))?;
    let api: Api<PaimonMysqlDatabaseSync> = Api::namespaced(ctx.client.clone(), &ns);
    let result = finalizer(&api, FINALIZER, pmds, |event| async {
        match event {
            Finalizer::Apply(p) => apply_database(&p, &ctx, &ns).await,
            Finalizer::Cleanup(p) => cleanup(&p, &ctx, &ns).await,
        }
    })
    .await;
    finalizer_outcome(result, &ns, &name)
}

async fn apply_database(pmds: &PaimonMysqlDatabaseSync, ctx: &Context, ns: &str) -> Result<Action> {
    let name = pmds.name_any();
    let selector = match pmds.spec.validate().and_then(|s| {
        overrides_without_passwords(&pmds.spec)?;
        Ok(s)
    }) {
        Ok(s) => s,
        Err(why) => return refuse(ctx, pmds, ns, &why).await,
    };
    let d = build::discovery(pmds, &ctx.settings)?;
    apply::apply_one(&ctx.client, ns, &d.service_account).await?;
    apply::apply_one(&ctx.client, ns, &d.role).await?;
    apply::apply_one(&ctx.client, ns, &d.role_binding).await?;
    apply::apply_one(&ctx.client, ns, &d.config).await?;
    apply::create_missing(&ctx.client, ns, std::slice::from_ref(&d.listing)).await?;
    apply::apply_one(&ctx.client, ns, &d.deployment).await?;

    let listing: Option<TableListing> = read_report(ctx, ns, &discovery_name(&name)).await?;
    let syncs_api: Api<PaimonMysqlSync> = Api::namespaced(ctx.client.clone(), ns);
    let mut syncs = tables_syncs(ctx, ns, &name).await?;
    let chosen = listing
        .as_ref()
        .map(|l| selector.select(&l.tables))
        .unwrap_or_default();
    let mut invalid = name_clashes(&chosen);
    if pmds.spec.placement.mode == PlacementMode::Pooled {
        return pool::apply(pmds, ctx, ns, listing.as_ref(), &chosen, invalid, syncs).await;
    }
    if pmds.status.as_ref().is_some_and(|s| s.pool.is_some()) {
        // Back from pooled: the pooled workers go first, and the tables' syncs are made (each
        // resuming from its progress row) only once their pods are gone: never two writers on
        // a table, whatever the delivery the same edit asks for.
        let left = pool::remove_workers(pmds, ctx, ns, 0).await?;
        if left > 0 {
            return Err(Error::Waiting(format!(
                "{left} pod(s) of {ns}/{name}'s pooled workers still stopping: the tables' own syncs are made \
                 once they are gone"
            )));
        }
    }
    for table in &chosen {
        if invalid.contains_key(table) {
            continue;
        }
        let spec = match pmds.spec.render(table) {
            Ok(spec) => spec,
            Err(why) => {
                invalid.insert(table.clone(), why);
                continue;
            }
        };
        apply_table_sync(
            pmds,
            ctx,
            ns,
            table,
            build::table_sync(pmds, table, spec),
            &mut syncs,
            &mut invalid,
        )
        .await?;
    }
    // Only a good listing removes anything: a failed one keeps every table as it is.
    if let Some(l) = listing.as_ref().filter(|l| l.error.is_none()) {
        let gone: Vec<String> = syncs
            .keys()
            .filter(|t| !chosen.contains(t))
            .cloned()
            .collect();
        for table in gone {
            let Some(sync) = syncs.remove(&table) else {
                continue;
            };
            let why = if l.tables.contains(&table) {
                "no longer matches spec.tables"
            } else {
                "was dropped in Paimon"
            };
            syncs_api
                .delete(&sync.name_any(), &DeleteParams::background())
                .await
                .map_err(|e| {
                    Error::api::<PaimonMysqlSync>(Verb::Delete, ns, &sync.name_any(), e)
                })?;
            let note = format!(
                "table {table} {why}: PaimonMysqlSync {} is deleted (its workers stop); the MySQL table {} is left as it is",
                sync.name_any(),
                sync.spec.sink.table
            );
            warn!(database_sync = %name, %table, "{note}");
            publish(ctx, pmds, EventType::Warning, "TableDropped", note).await;
        }
    }
    let found = status::Found {
        pmds,
        listing: listing.as_ref(),
        chosen: &chosen,
        syncs: &syncs,
        invalid: &invalid,
        pool: None,
        now: k8s_openapi::jiff::Timestamp::now(),
    };
    write_status(ctx, pmds, ns, &found).await?;
    Ok(Action::requeue(RESYNC.min(pmds.spec.discovery_interval.0)))
}

/// Applies `desired`, `table`'s own sync, into `syncs`; a sync the API server refuses, or one
/// of that name this database sync didn't make, goes into `invalid` instead (the other tables
/// go on).
async fn apply_table_sync(
    pmds: &PaimonMysqlDatabaseSync,
    ctx: &Context,
    ns: &str,
    table: &str,
    desired: PaimonMysqlSync,
    syncs: &mut BTreeMap<String, PaimonMysqlSync>,
    invalid: &mut BTreeMap<String, String>,
) -> Result<()> {
    let syncs_api: Api<PaimonMysqlSync> = Api::namespaced(ctx.client.clone(), ns);
    // (A name ending like a rebuild's is among `name_clashes`.)
    if let Some(why) = too_long_for_kubernetes(&desired.name_any()) {
        invalid.insert(table.to_string(), format!("table {table}: {why}; exclude it (spec.tables.exclude) or shorten this resource's name"));
        return Ok(());
    }
    if !syncs.contains_key(table) {
        // A sync of that name that this database sync didn't make is someone else's: never
        // taken over (server-side apply with force would make it ours).
        if let Some(other) = syncs_api
            .get_opt(&desired.name_any())
            .await
            .map_err(|e| Error::api::<PaimonMysqlSync>(Verb::Get, ns, &desired.name_any(), e))?
        {
            invalid.insert(
                table.to_string(),
                format!(
                    "table {table}: a PaimonMysqlSync {} exists that this database sync did not make: it is \
                     left alone and the table is not synced; delete or rename it, or exclude the table (spec.tables.exclude)",
                    other.name_any()
                ),
            );
            return Ok(());
        }
    }
    // Applied as wanted already (and its spec not edited since): no request, where a
    // 200-table database sync is reconciled every 15 s.
    let hash = |s: &PaimonMysqlSync| s.annotations().get(build::APPLIED_HASH).cloned();
    let as_wanted = syncs.get(table).is_some_and(|s| {
        hash(s) == hash(&desired)
            && s.spec == desired.spec
            && s.metadata.deletion_timestamp.is_none()
    });
    if as_wanted {
        return Ok(());
    }
    let applied = match apply::apply_one(&ctx.client, ns, &desired).await {
        Ok(applied) => applied,
        // The API server refused this table's sync (an override its schema rejects): the
        // other tables go on, and the status and an event name this one.
        Err(Error::Api { source, .. }) if rejected(&source) => {
            let why =
                format!("table {table}: the API server refused its PaimonMysqlSync: {source}");
            publish(ctx, pmds, EventType::Warning, "TableRefused", why.clone()).await;
            invalid.insert(table.to_string(), why);
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    if !syncs.contains_key(table) {
        info!(database_sync = %pmds.name_any(), %table, sync = %applied.name_any(), "a table matches: its sync is created");
        let note = format!(
            "table {table} is synced by PaimonMysqlSync {} into {}",
            applied.name_any(),
            applied.spec.sink.table
        );
        publish(ctx, pmds, EventType::Normal, "TableAdded", note).await;
    }
    syncs.insert(table.to_string(), applied);
    Ok(())
}

/// The resource is invalid (`why`): `Failed`, nothing applied, looked at again in 30 s.
async fn refuse(
    ctx: &Context,
    pmds: &PaimonMysqlDatabaseSync,
    ns: &str,
    why: &str,
) -> Result<Action> {
    let status = status::invalid(pmds, why);
    if pmds.status.as_ref() != Some(&status) {
        apply::apply_status(&ctx.client, ns, pmds, &status).await?;
    }
    Ok(Action::requeue(Duration::from_secs(30)))
}

/// Whether the API server refused an object as invalid (400, 422), not failed to take it.
fn rejected(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 400 || s.code == 422)
}

/// An override's `sink.url` with a password would land in the ConfigMaps of the discovery and
/// pooled workers (their config is the whole spec) and the table's sync: refused, as in a sync.
fn overrides_without_passwords(
    spec: &pms_crds::PaimonMysqlDatabaseSyncSpec,
) -> std::result::Result<(), String> {
    let with_password: Vec<&str> = spec
        .overrides
        .iter()
        .filter(|(_, o)| {
            o.pointer("/sink/url")
                .and_then(|u| u.as_str())
                .is_some_and(crate::reconcile::validate::url_has_password)
        })
        .map(|(table, _)| table.as_str())
        .collect();
    if with_password.is_empty() {
        return Ok(());
    }
    Err(format!(
        "overrides of {} set a sink.url that carries a password, which would be copied into the workers' \
         ConfigMaps: put it in a Secret (sink.credentialsSecretRef, key password) and leave only user@ in the URL",
        with_password.join(", ")
    ))
}

/// The tables' syncs this database sync made, by table.
async fn tables_syncs(
    ctx: &Context,
    ns: &str,
    parent: &str,
) -> Result<BTreeMap<String, PaimonMysqlSync>> {
    let selector = format!("{DATABASE_SYNC_LABEL}={parent}");
    let list: Vec<PaimonMysqlSync> =
        undecodable::list(&ctx.client, ns, &ListParams::default().labels(&selector)).await?;
    Ok(list
        .into_iter()
        .filter_map(|s| Some((s.annotations().get(TABLE_ANNOTATION)?.clone(), s)))
        .collect())
}

/// The report (a listing, an assignment, a pooled worker's) in ConfigMap `name`; `None` while
/// it has none.
async fn read_report<T: serde::de::DeserializeOwned>(
    ctx: &Context,
    ns: &str,
    name: &str,
) -> Result<Option<T>> {
    let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), ns);
    let cm = api
        .get_opt(name)
        .await
        .map_err(|e| Error::api::<ConfigMap>(Verb::Get, ns, name, e))?;
    let text = cm.and_then(|c| c.data?.remove(REPORT_KEY));
    Ok(text.and_then(|t| match serde_json::from_str(&t) {
        Ok(r) => Some(r),
        Err(e) => {
            warn!(configmap = %name, error = %e, "not readable; waiting for the next");
            None
        }
    }))
}

async fn write_status(
    ctx: &Context,
    pmds: &PaimonMysqlDatabaseSync,
    ns: &str,
    found: &status::Found<'_>,
) -> Result<()> {
    let tables = status::tables(found);
    ctx.metrics.database_tables(ns, &pmds.name_any(), &tables);
    // A table on a sync of its own has its phase set by that sync's reconcile.
    let pooled: Vec<TableStatus> = match &found.pool {
        Some(p) => tables
            .iter()
            .filter(|t| !p.own.contains_key(&t.table))
            .cloned()
            .collect(),
        None => Vec::new(),
    };
    ctx.metrics
        .pooled_table_phases(ns, &pmds.name_any(), &pooled);
    let status = status::status(found, &tables);
    let workers = status
        .pool
        .as_ref()
        .map(|p| (p.workers, p.workers_reporting));
    ctx.metrics.pool_workers(ns, &pmds.name_any(), workers);
    if pmds.status.as_ref() == Some(&status) {
        return Ok(());
    }
    apply::apply_status(&ctx.client, ns, pmds, &status).await
}

/// Deleting the database sync deletes its tables' syncs (each cleans up as a deleted sync
/// does; `checkpoint.retainOnDelete` keeps their checkpoints), its pooled workers (which, at
/// their stop, make their tables forget as those syncs do) and its discovery worker. No MySQL
/// table is touched.
async fn cleanup(pmds: &PaimonMysqlDatabaseSync, ctx: &Context, ns: &str) -> Result<Action> {
    let name = pmds.name_any();
    ctx.metrics.forget_database(ns, &name);
    let api: Api<PaimonMysqlSync> = Api::namespaced(ctx.client.clone(), ns);
    for sync in tables_syncs(ctx, ns, &name).await?.into_values() {
        api.delete(&sync.name_any(), &DeleteParams::background())
            .await
            .map(drop)
            .or_else(|e| match e {
                kube::Error::Api(s) if s.code == 404 => Ok(()),
                e => Err(Error::api::<PaimonMysqlSync>(
                    Verb::Delete,
                    ns,
                    &sync.name_any(),
                    e,
                )),
            })?;
    }
    pool::ask_release_on_stop(pmds, ctx, ns).await?;
    let left = pool::remove_workers(pmds, ctx, ns, 0).await?;
    if left > 0 {
        return Err(Error::Waiting(format!(
            "{left} pod(s) of {ns}/{name}'s pooled workers still stopping"
        )));
    }
    let discovery = discovery_name(&name);
    if let Some(left) =
        apply::delete_all(&ctx.client, ns, &discovery, false, deleting_for(pmds)).await?
    {
        return Err(Error::Waiting(format!(
            "{left} pod(s) of {ns}/{discovery} still stopping"
        )));
    }
    publish(
        ctx,
        pmds,
        EventType::Normal,
        "Deleted",
        "removed the tables' syncs and the discovery worker; the MySQL tables stay".into(),
    )
    .await;
    Ok(Action::await_change())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_override_whose_url_carries_a_password_refuses_the_database_sync() {
        let spec = |url: &str| -> pms_crds::PaimonMysqlDatabaseSyncSpec {
            serde_yaml::from_str(&format!(
                "tables: {{pattern: '.*'}}\n\
                 template: {{source: {{warehouse: /w, database: d, table: '{{table}}'}}, sink: {{url: 'mysql://h/d', table: '{{table}}'}}}}\n\
                 overrides: {{t1: {{sink: {{url: '{url}'}}}}, t2: {{sink: {{maxRows: 5}}}}}}\n"
            ))
            .unwrap()
        };
        assert!(overrides_without_passwords(&spec("mysql://app@other/d")).is_ok());
        let why = overrides_without_passwords(&spec("mysql://app:s3cret@other/d")).unwrap_err();
        assert!(
            why.contains("overrides of t1") && !why.contains("s3cret"),
            "{why}"
        );
    }
}
