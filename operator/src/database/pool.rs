//! `placement: pooled`: the database sync's tables on `workers` shared pods instead of a
//! `PaimonMysqlSync` each. One reconcile:
//!
//! 1. the chosen tables whose spec renders and can run pooled (`pooled_refusal`) are assigned,
//!    each to a worker by rendezvous hashing of its name, in `<name>--pool` (only from a good
//!    listing: a failed one keeps the assignment as it is);
//! 2. the tables' own syncs of an earlier `perTable` placement are deleted (the pooled worker
//!    takes each table on from its exactly-once progress row);
//! 3. worker k's objects are applied for k < workers, those of k ≥ workers removed;
//! 4. the status, from the workers' reports (`<name>--pool-<k>`).
//!
//! The objects and requests per reconcile grow with the workers, not with the tables.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{DeleteParams, ListParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::{Api, ResourceExt};
use pms_crds::contract::{
    pool_assignment_name, pool_worker_name, PoolAssignment, PoolReport, TableListing,
    DATABASE_SYNC_LABEL,
};
use pms_crds::{pool_worker, PaimonMysqlDatabaseSync, PaimonMysqlSync};
use tracing::{info, warn};

use super::{build, read_report, refuse, status, write_status, RESYNC};
use crate::context::Context;
use crate::error::{Error, Result, Verb};
use crate::reconcile::{apply, deleting_for, publish, validate};

pub(super) async fn apply(
    pmds: &PaimonMysqlDatabaseSync,
    ctx: &Context,
    ns: &str,
    listing: Option<&TableListing>,
    chosen: &[String],
    mut invalid: BTreeMap<String, String>,
    syncs: BTreeMap<String, PaimonMysqlSync>,
) -> Result<Action> {
    let name = pmds.name_any();
    // The workers are built from the template with no sync of their own to check it.
    let template = PaimonMysqlSync::new(&pool_worker_name(&name, 0), pmds.spec.template.clone());
    let problems = validate::spec_problems(&template);
    if !problems.is_empty() {
        return refuse(ctx, pmds, ns, &format!("template: {}", problems.join("; "))).await;
    }
    let workers = pmds.spec.placement.workers;
    for table in chosen {
        if invalid.contains_key(table) {
            continue;
        }
        let refused = match pmds.spec.render(table) {
            Ok(spec) => pmds
                .spec
                .pooled_refusal(&spec)
                .map(|why| format!("table {table}: {why}")),
            Err(why) => Some(why),
        };
        if let Some(why) = refused {
            invalid.insert(table.clone(), why);
        }
    }
    let mut assignment = read_report::<PoolAssignment>(ctx, ns, &pool_assignment_name(&name))
        .await?
        .unwrap_or_default();
    if let Some(l) = listing.filter(|l| l.error.is_none()) {
        let next = PoolAssignment {
            workers,
            tables: chosen
                .iter()
                .filter(|t| !invalid.contains_key(*t))
                .map(|t| (t.clone(), pool_worker(t, workers)))
                .collect(),
            at: l.at.clone(),
        };
        if (next.workers, &next.tables) != (assignment.workers, &assignment.tables) {
            let moved = next
                .tables
                .iter()
                .filter(|(t, w)| assignment.tables.get(*t).is_some_and(|old| old != *w))
                .count();
            info!(database_sync = %name, tables = next.tables.len(), workers, moved, "assigning the tables to the pooled workers");
            apply::apply_one(&ctx.client, ns, &build::pool_assignment(pmds, &next)).await?;
            assignment = next;
        }
    }
    let syncs_api: Api<PaimonMysqlSync> = Api::namespaced(ctx.client.clone(), ns);
    for (table, sync) in &syncs {
        syncs_api
            .delete(&sync.name_any(), &DeleteParams::background())
            .await
            .map_err(|e| Error::api::<PaimonMysqlSync>(Verb::Delete, ns, &sync.name_any(), e))?;
        let note = format!(
            "table {table} moves to the pooled workers: PaimonMysqlSync {} is deleted, and a pooled worker \
             resumes the table from its progress row",
            sync.name_any()
        );
        publish(ctx, pmds, EventType::Normal, "TablePooled", note).await;
    }
    let existing = pool_deployments(pmds, ctx, ns).await?;
    let mut reports = BTreeMap::new();
    for k in 0..workers {
        let w = build::pool_worker(pmds, k, &ctx.settings)?;
        // A worker whose objects were applied as they are wanted now is left alone: the
        // reconcile, every 15 s, then costs a request per worker, not eight.
        let applied = existing
            .get(&k)
            .and_then(|d| d.annotations().get(build::POOL_OBJECTS_HASH));
        if applied != w.deployment.annotations().get(build::POOL_OBJECTS_HASH) {
            apply::apply_one(&ctx.client, ns, &w.service_account).await?;
            apply::apply_one(&ctx.client, ns, &w.role).await?;
            apply::apply_one(&ctx.client, ns, &w.role_binding).await?;
            apply::apply_one(&ctx.client, ns, &w.config).await?;
            apply::create_missing(&ctx.client, ns, std::slice::from_ref(&w.listing)).await?;
            if let Some(service) = &w.metrics {
                apply::apply_one(&ctx.client, ns, service).await?;
            }
            apply::apply_one(&ctx.client, ns, &w.deployment).await?;
        }
        if let Some(r) = read_report::<PoolReport>(ctx, ns, &pool_worker_name(&name, k)).await? {
            reports.insert(k, r);
        }
    }
    remove(pmds, ctx, ns, existing, workers).await?;
    let found = status::Found {
        pmds,
        listing,
        chosen,
        syncs: &BTreeMap::new(),
        invalid: &invalid,
        pool: Some(status::Pooled {
            assignment: &assignment,
            reports: &reports,
        }),
        now: k8s_openapi::jiff::Timestamp::now(),
    };
    write_status(ctx, pmds, ns, &found).await?;
    Ok(Action::requeue(RESYNC.min(pmds.spec.discovery_interval.0)))
}

/// Removes pooled workers `from` and up (all with 0); returns how many of their pods are
/// still stopping (each flushes and commits its tables first).
pub(super) async fn remove_workers(
    pmds: &PaimonMysqlDatabaseSync,
    ctx: &Context,
    ns: &str,
    from: u32,
) -> Result<usize> {
    let existing = pool_deployments(pmds, ctx, ns).await?;
    remove(pmds, ctx, ns, existing, from).await
}

async fn remove(
    pmds: &PaimonMysqlDatabaseSync,
    ctx: &Context,
    ns: &str,
    existing: BTreeMap<u32, Deployment>,
    from: u32,
) -> Result<usize> {
    let name = pmds.name_any();
    let mut left = 0;
    for k in existing.into_keys().filter(|k| *k >= from) {
        let worker = pool_worker_name(&name, k);
        warn!(database_sync = %name, %worker, "removing a pooled worker (its tables move to the others)");
        left += apply::delete_all(&ctx.client, ns, &worker, false, deleting_for(pmds))
            .await?
            .unwrap_or(0);
    }
    Ok(left)
}

/// The pooled workers' Deployments, by worker.
async fn pool_deployments(
    pmds: &PaimonMysqlDatabaseSync,
    ctx: &Context,
    ns: &str,
) -> Result<BTreeMap<u32, Deployment>> {
    let name = pmds.name_any();
    let api: Api<Deployment> = Api::namespaced(ctx.client.clone(), ns);
    let selector = format!("{DATABASE_SYNC_LABEL}={name}");
    let deployments = api
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| Error::api::<Deployment>(Verb::List, ns, &selector, e))?;
    let worker_0 = pool_worker_name(&name, 0);
    let prefix = worker_0.strip_suffix('0').unwrap_or(&worker_0);
    Ok(deployments
        .into_iter()
        .filter_map(|d| {
            let k = d
                .name_any()
                .strip_prefix(prefix)?
                .strip_suffix("-slot-0")?
                .parse::<u32>()
                .ok()?;
            Some((k, d))
        })
        .collect())
}
