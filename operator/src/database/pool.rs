//! `placement: pooled`: the database sync's tables on `workers` shared pods instead of a
//! `PaimonMysqlSync` each. One reconcile:
//!
//! 1. each chosen table's place (`pool_fit`): the shared workers; its own `PaimonMysqlSync`
//!    when its override asks for an operation (verify, savepoint, restore, rebuild, rollback)
//!    or settings the workers don't share; or refused;
//! 2. the own syncs no longer wanted are deleted (those of an earlier `perTable` placement
//!    too): the pooled worker takes each table on from its exactly-once progress row, once the
//!    sync and its pods are gone;
//! 3. the shared tables are assigned, each to a worker by rendezvous hashing of its name, in
//!    `<name>--pool` (only from a good listing: a failed one keeps the assignment as it is; a
//!    table moves only once its new worker is ready: make before break);
//! 4. worker k's objects are applied for k < workers, those of k ≥ workers removed;
//! 5. a table leaving the pool gets its own sync once every worker reported the assignment
//!    without it and no longer runs it (a hand-over at a commit, as between two workers);
//! 6. the status, from the workers' reports (`<name>--pool-<k>`) and the own syncs.
//!
//! The objects and requests per reconcile grow with the workers and the tables on syncs of
//! their own, not with the pooled tables.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::{Api, ResourceExt};
use pms_crds::contract::{
    pool_assignment_name, pool_worker_name, PoolAssignment, PoolReport, TableListing,
    DATABASE_SYNC_LABEL, SYNC_LABEL,
};
use pms_crds::{
    pool_worker, table_sync_name, PaimonMysqlDatabaseSync, PaimonMysqlSync, PaimonMysqlSyncSpec,
    PoolFit,
};
use tracing::{info, warn};

use super::{apply_table_sync, build, read_report, refuse, status, write_status, RESYNC};
use crate::context::Context;
use crate::error::{Error, Result, Verb};
use crate::reconcile::{apply, deleting_for, publish, validate, HANDED_OVER_ANNOTATION};
use crate::restart_gate::{self, Admission};

pub(super) async fn apply(
    pmds: &PaimonMysqlDatabaseSync,
    ctx: &Context,
    ns: &str,
    listing: Option<&TableListing>,
    chosen: &[String],
    mut invalid: BTreeMap<String, String>,
    mut syncs: BTreeMap<String, PaimonMysqlSync>,
) -> Result<Action> {
    let name = pmds.name_any();
    // The workers are built from the template with no sync of their own to check it.
    let template = PaimonMysqlSync::new(&pool_worker_name(&name, 0), pmds.spec.template.clone());
    let problems = validate::spec_problems(&template);
    if !problems.is_empty() {
        return refuse(ctx, pmds, ns, &format!("template: {}", problems.join("; "))).await;
    }
    let workers = pmds.spec.placement.workers;
    let mut shared = BTreeSet::new();
    let mut own = BTreeMap::new();
    for table in chosen {
        if invalid.contains_key(table) {
            continue;
        }
        let fit = pmds.spec.render(table).and_then(|spec| {
            let fit = pmds.spec.pool_fit(&spec);
            Ok((fit.map_err(|why| format!("table {table}: {why}"))?, spec))
        });
        match fit {
            Err(why) => drop(invalid.insert(table.clone(), why)),
            Ok((PoolFit::Shared, _)) => drop(shared.insert(table.clone())),
            Ok((PoolFit::Own(why), spec)) => drop(own.insert(table.clone(), (spec, why))),
        }
    }
    let good = listing.filter(|l| l.error.is_none());
    delete_unwanted_syncs(pmds, ctx, ns, &shared, chosen, good.is_some(), &syncs).await?;
    let existing = pool_deployments(pmds, ctx, ns).await?;
    let live: BTreeSet<u32> = existing.keys().copied().chain(0..workers).collect();
    let mut reports = BTreeMap::new();
    for &k in &live {
        if let Some(r) = read_report::<PoolReport>(ctx, ns, &pool_worker_name(&name, k)).await? {
            reports.insert(k, r);
        }
    }
    let now = k8s_openapi::jiff::Timestamp::now();
    let ready: BTreeSet<u32> = (0..workers)
        .filter(|k| status::worker_ready(existing.get(k), reports.get(k), now))
        .collect();
    let previous = read_report::<PoolAssignment>(ctx, ns, &pool_assignment_name(&name))
        .await?
        .unwrap_or_default();
    let mut assignment = previous.clone();
    if let Some(l) = good {
        let next = next_assignment(&previous, &shared, &own, &syncs, workers, &ready, &l.at);
        if next.revision != previous.revision {
            let moved = next
                .tables
                .iter()
                .filter(|(t, w)| previous.tables.get(*t).is_some_and(|old| old != *w))
                .count();
            info!(database_sync = %name, tables = next.tables.len(), workers, moved, leaving = next.leaving.len(),
                  "assigning the tables to the pooled workers");
            apply::apply_one(&ctx.client, ns, &build::pool_assignment(pmds, &next)).await?;
            assignment = next;
        }
    }
    for k in 0..workers {
        apply_worker(pmds, ctx, ns, k, existing.get(&k), ready.contains(&k)).await?;
    }
    let unavailable: BTreeMap<u32, String> = existing
        .iter()
        .filter(|(k, _)| **k < workers)
        .filter_map(|(k, d)| Some((*k, status::unavailable_since(d, now)?)))
        .collect();
    let stopping = remove(pmds, ctx, ns, existing, workers).await?;
    // The tables on syncs of their own: each made once no pooled worker runs it any more.
    let mut own_status = BTreeMap::new();
    for (table, (spec, why)) in own {
        let sync = syncs.get(&table);
        let made = sync.is_some();
        if !made {
            if let Some(wait) = still_pooled(&table, &assignment, &reports, &live, stopping) {
                let message = format!("{why}: it moves to its own PaimonMysqlSync once {wait}");
                own_status.insert(table, Some(message));
                continue;
            }
        }
        let mut spec = spec;
        let leaving =
            assignment.leaving.contains(&table) && sync.is_none_or(|s| s.status.is_none());
        if leaving {
            // Made without its one-shot triggers, given once the sync has reconciled: so they
            // run, rather than count as served at its creation.
            spec.rebuild.trigger = None;
            spec.restore_from = None;
        }
        let desired = build::table_sync(pmds, &table, spec);
        apply_table_sync(pmds, ctx, ns, &table, desired, &mut syncs, &mut invalid).await?;
        if !made {
            let note = format!(
                "table {table} leaves the pooled workers: {why}; it runs as PaimonMysqlSync {}",
                table_sync_name(&name, &table)
            );
            publish(ctx, pmds, EventType::Normal, "TableOwnSync", note).await;
        }
        own_status.insert(table, None);
    }
    let found = status::Found {
        pmds,
        listing,
        chosen,
        syncs: &syncs,
        invalid: &invalid,
        pool: Some(status::Pooled {
            assignment: &assignment,
            reports: &reports,
            own: &own_status,
            unavailable: &unavailable,
        }),
        now,
    };
    write_status(ctx, pmds, ns, &found).await?;
    Ok(Action::requeue(RESYNC.min(pmds.spec.discovery_interval.0)))
}

/// Applies worker `k`'s objects, unless they are as wanted. A change the operator itself
/// makes (its upgrade: a new image or pod template, the spec as applied) goes through the
/// restart gate as a sync's workers do: queued behind `--max-concurrent-restarts` places, each
/// held until the new pod runs and reports (`ready`). A change of the spec never waits.
async fn apply_worker(
    pmds: &PaimonMysqlDatabaseSync,
    ctx: &Context,
    ns: &str,
    k: u32,
    current: Option<&Deployment>,
    ready: bool,
) -> Result<()> {
    let w = build::pool_worker(pmds, k, &ctx.settings)?;
    let gate_key = restart_gate::key(ns, &pool_worker_name(&pmds.name_any(), k));
    if ctx.restart_gate.overdue(&gate_key) {
        let note = format!(
            "pooled worker {k}'s new pod spec has not run ready within the restart gate's hold: \
             its place goes to the next one"
        );
        publish(ctx, pmds, EventType::Warning, "RestartPlaceReleased", note).await;
    }
    match worker_change(current, &w.deployment) {
        WorkerChange::None => {
            if ready && current.is_some_and(crate::reconcile::status::rolled_out) {
                ctx.restart_gate.release(&gate_key);
            }
            return Ok(());
        }
        WorkerChange::New => {}
        WorkerChange::Spec => ctx.restart_gate.take(&gate_key, Instant::now()),
        WorkerChange::Operator => {
            if let Admission::Wait { holders, newly } =
                ctx.restart_gate.admit(&gate_key, Instant::now())
            {
                if newly {
                    let note = format!(
                        "pooled worker {k}'s new pod spec (the operator's) waits for a place: at \
                         most {} restart at once (--max-concurrent-restarts); now {}",
                        ctx.restart_gate.limit(),
                        holders.join(", ")
                    );
                    publish(ctx, pmds, EventType::Normal, "RestartQueued", note).await;
                }
                return Ok(());
            }
        }
    }
    apply::apply_one(&ctx.client, ns, &w.service_account).await?;
    apply::apply_one(&ctx.client, ns, &w.role).await?;
    apply::apply_one(&ctx.client, ns, &w.role_binding).await?;
    apply::apply_one(&ctx.client, ns, &w.config).await?;
    apply::create_missing(&ctx.client, ns, std::slice::from_ref(&w.listing)).await?;
    if let Some(service) = &w.metrics {
        apply::apply_one(&ctx.client, ns, service).await?;
    }
    apply::apply_one(&ctx.client, ns, &w.deployment).await?;
    Ok(())
}

/// What applying a pooled worker's objects (`wanted`) over its Deployment (`current`) is.
#[derive(Debug, PartialEq, Eq)]
enum WorkerChange {
    /// Its objects are as wanted: nothing to apply (the one request a reconcile costs per
    /// worker is the list that found it, not eight).
    None,
    /// A worker that has no Deployment yet: nothing restarts.
    New,
    /// The database sync's spec changed: the user's restart, which never waits.
    Spec,
    /// The spec as applied, other objects: the operator's change (its upgrade). Without the
    /// spec's hash, an older operator applied it: counted as the operator's, so its upgrade
    /// is staggered too.
    Operator,
}

fn worker_change(current: Option<&Deployment>, wanted: &Deployment) -> WorkerChange {
    let annotation = |d: &Deployment, key: &str| d.annotations().get(key).cloned();
    let Some(current) = current else {
        return WorkerChange::New;
    };
    let same = |key| annotation(current, key) == annotation(wanted, key);
    if same(build::POOL_OBJECTS_HASH) {
        WorkerChange::None
    } else if annotation(current, build::POOL_SPEC_HASH).is_none() || same(build::POOL_SPEC_HASH) {
        WorkerChange::Operator
    } else {
        WorkerChange::Spec
    }
}

/// The tables' own syncs that are no longer wanted are deleted: a table back on the pooled
/// workers (the pool takes it on once its sync is gone, its pods included) and, on a good
/// listing, a table dropped or no longer matching. A refused table keeps its sync at its last
/// good spec, as under `perTable`.
async fn delete_unwanted_syncs(
    pmds: &PaimonMysqlDatabaseSync,
    ctx: &Context,
    ns: &str,
    shared: &BTreeSet<String>,
    chosen: &[String],
    good_listing: bool,
    syncs: &BTreeMap<String, PaimonMysqlSync>,
) -> Result<()> {
    let api: Api<PaimonMysqlSync> = Api::namespaced(ctx.client.clone(), ns);
    for (table, sync) in syncs {
        let going = sync.metadata.deletion_timestamp.is_some();
        let gone = good_listing && !chosen.contains(table);
        if going || !(shared.contains(table) || gone) {
            continue;
        }
        if shared.contains(table) {
            // Its consumer and claim go on with the pooled workers: not released at its stop.
            let patch = serde_json::json!({"metadata": {"annotations": {HANDED_OVER_ANNOTATION: "pooled"}}});
            api.patch(
                &sync.name_any(),
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
            .map_err(|e| Error::api::<PaimonMysqlSync>(Verb::Patch, ns, &sync.name_any(), e))?;
        }
        api.delete(&sync.name_any(), &DeleteParams::background())
            .await
            .map_err(|e| Error::api::<PaimonMysqlSync>(Verb::Delete, ns, &sync.name_any(), e))?;
        let (type_, reason, note) = if shared.contains(table) {
            (EventType::Normal, "TablePooled", format!(
                "table {table} moves to the pooled workers: PaimonMysqlSync {} is deleted, and once its pods are \
                 gone a pooled worker resumes the table from its progress row",
                sync.name_any()
            ))
        } else {
            (EventType::Warning, "TableDropped", format!(
                "table {table} was dropped in Paimon or no longer matches spec.tables: PaimonMysqlSync {} is \
                 deleted (its workers stop); the MySQL table {} is left as it is",
                sync.name_any(),
                sync.spec.sink.table
            ))
        };
        info!(database_sync = %pmds.name_any(), %table, "{note}");
        publish(ctx, pmds, type_, reason, note).await;
    }
    Ok(())
}

/// The assignment from a good listing: each shared table to its worker, once no sync of its
/// own is left (one still stopping keeps it out) and, for a table that moves, once that worker
/// is `ready`; a new revision if anything changed.
fn next_assignment(
    previous: &PoolAssignment,
    shared: &BTreeSet<String>,
    own: &BTreeMap<String, (PaimonMysqlSyncSpec, String)>,
    syncs: &BTreeMap<String, PaimonMysqlSync>,
    workers: u32,
    ready: &BTreeSet<u32>,
    at: &str,
) -> PoolAssignment {
    let tables: BTreeMap<String, u32> = shared
        .iter()
        .filter(|t| !syncs.contains_key(*t))
        .map(|t| {
            let to = pool_worker(t, workers);
            // Make before break: a table stays on the ready worker that runs it until the
            // worker it moves to is ready (a new pod Pending would stop it otherwise). A
            // removed worker's tables move at once: it is going.
            let held = previous.tables.get(t).copied().filter(|from| {
                *from != to && *from < workers && ready.contains(from) && !ready.contains(&to)
            });
            (t.clone(), held.unwrap_or(to))
        })
        .collect();
    // A table leaving the pool is marked until its sync has reconciled once.
    let leaving = own
        .keys()
        .filter(|t| previous.tables.contains_key(*t) || previous.leaving.contains(*t))
        .filter(|t| syncs.get(*t).is_none_or(|s| s.status.is_none()))
        .cloned()
        .collect();
    let mut next = PoolAssignment {
        workers,
        tables,
        at: at.to_string(),
        revision: previous.revision,
        leaving,
        release_on_stop: false,
    };
    if (next.workers, &next.tables, &next.leaving)
        != (previous.workers, &previous.tables, &previous.leaving)
    {
        next.revision += 1;
    }
    next
}

/// What `table`, on its way to a sync of its own, still waits for, if anything: its leaving
/// the assignment, and then every pooled worker having read that assignment and stopped it.
/// (Its own sync is exactly-once too, so the progress row's epoch would fence a worker that
/// still wrote; this wait spares that worker the fencing error.)
fn still_pooled(
    table: &str,
    assignment: &PoolAssignment,
    reports: &BTreeMap<u32, PoolReport>,
    live: &BTreeSet<u32>,
    stopping_pods: usize,
) -> Option<String> {
    if let Some(w) = assignment.tables.get(table) {
        return Some(format!(
            "the assignment no longer gives it to pooled worker {w} (at the next good listing)"
        ));
    }
    for k in live {
        let wait = match reports.get(k) {
            None => "has reported",
            Some(r) if r.assignment_revision < assignment.revision => "has read the new assignment",
            Some(r) if r.tables.iter().any(|row| row.table == table) => "has stopped it",
            Some(_) => continue,
        };
        return Some(format!("pooled worker {k} {wait}"));
    }
    (stopping_pods > 0)
        .then(|| format!("the {stopping_pods} pod(s) of removed pooled workers are gone"))
}

/// The database sync is deleted: unless `checkpoint.retainOnDelete`, its pooled workers are
/// asked (in the assignment, before they are removed) to make each of their tables forget at
/// their stop, as a deleted sync's workers do: its checkpoints and progress row (with S3, the
/// objects), its Paimon consumer (which would keep snapshots from expiring for good) and its
/// claim of the MySQL table (which would refuse a sync of another name). A suspended template
/// has no worker to ask: a Warning says what is left.
pub(super) async fn ask_release_on_stop(
    pmds: &PaimonMysqlDatabaseSync,
    ctx: &Context,
    ns: &str,
) -> Result<()> {
    if pmds.spec.template.checkpoint.retain_on_delete {
        return Ok(());
    }
    let name = pool_assignment_name(&pmds.name_any());
    let Some(mut assignment) = read_report::<PoolAssignment>(ctx, ns, &name).await? else {
        return Ok(());
    };
    if assignment.release_on_stop || assignment.tables.is_empty() {
        return Ok(());
    }
    assignment.release_on_stop = true;
    apply::apply_one(&ctx.client, ns, &build::pool_assignment(pmds, &assignment)).await?;
    if pmds.spec.template.state == pms_crds::SyncState::Suspended {
        let note = format!(
            "no pooled worker is running to release what its {} table(s) hold outside the cluster: each table's \
             Paimon consumer (keeps snapshots from expiring), its progress row and its claim of the MySQL table \
             (refuses a sync of another name). Remove them with `pms-worker reset` and each table's config",
            assignment.tables.len()
        );
        publish(ctx, pmds, EventType::Warning, "ReleaseSkipped", note).await;
    }
    Ok(())
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
    // A removed worker's Deployment goes first: its other objects (RBAC, config, report,
    // Service) are found by their ServiceAccount once the Deployment is gone.
    let removed: BTreeSet<u32> = existing
        .into_keys()
        .chain(leftover_workers(pmds, ctx, ns, from).await?)
        .filter(|k| *k >= from)
        .collect();
    for k in removed {
        let worker = pool_worker_name(&name, k);
        ctx.restart_gate.release(&restart_gate::key(ns, &worker));
        warn!(database_sync = %name, %worker, "removing a pooled worker (its tables move to the others)");
        left += apply::delete_all(&ctx.client, ns, &worker, false, deleting_for(pmds))
            .await?
            .unwrap_or(0);
    }
    Ok(left)
}

/// The workers from `from` on whose ServiceAccount is still there (at most [`MAX_WORKERS`]:
/// one LIST by a set of sync names).
async fn leftover_workers(
    pmds: &PaimonMysqlDatabaseSync,
    ctx: &Context,
    ns: &str,
    from: u32,
) -> Result<Vec<u32>> {
    let name = pmds.name_any();
    if from >= MAX_WORKERS {
        return Ok(Vec::new());
    }
    let names: Vec<String> = (from..MAX_WORKERS)
        .map(|k| pool_worker_name(&name, k))
        .collect();
    let selector = format!("{SYNC_LABEL} in ({})", names.join(","));
    let api: Api<ServiceAccount> = Api::namespaced(ctx.client.clone(), ns);
    let accounts = api
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| Error::api::<ServiceAccount>(Verb::List, ns, &selector, e))?;
    Ok(accounts
        .into_iter()
        .filter_map(|sa| {
            let sync = sa.labels().get(SYNC_LABEL)?;
            Some(from + names.iter().position(|n| n == sync)? as u32)
        })
        .collect())
}

/// The most pooled workers a database sync may have (`placement.workers`' schema maximum).
const MAX_WORKERS: u32 = 64;

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

#[cfg(test)]
mod tests {
    use super::*;
    use pms_crds::contract::PooledTable;

    fn own(tables: &[&str]) -> BTreeMap<String, (PaimonMysqlSyncSpec, String)> {
        let spec: PaimonMysqlSyncSpec = serde_yaml::from_str(
            "source: {warehouse: /wh, database: shop, table: t}\nsink: {url: 'mysql://h/db', table: t}",
        )
        .unwrap();
        tables
            .iter()
            .map(|t| (t.to_string(), (spec.clone(), "verify".to_string())))
            .collect()
    }

    fn report(worker: u32, revision: u64, tables: &[&str]) -> PoolReport {
        PoolReport {
            worker,
            assignment_revision: revision,
            tables: tables
                .iter()
                .map(|t| PooledTable {
                    table: t.to_string(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn all(workers: u32) -> BTreeSet<u32> {
        (0..workers).collect()
    }

    #[test]
    fn the_operators_own_change_of_a_pooled_worker_is_told_from_the_users() {
        let deployment = |objects: &str, spec: Option<&str>| {
            let mut d = Deployment::default();
            let a = d.metadata.annotations.get_or_insert_with(Default::default);
            a.insert(build::POOL_OBJECTS_HASH.into(), objects.into());
            if let Some(spec) = spec {
                a.insert(build::POOL_SPEC_HASH.into(), spec.into());
            }
            d
        };
        let wanted = deployment("o2", Some("s1"));
        let change = |current: &Deployment| worker_change(Some(current), &wanted);
        assert_eq!(worker_change(None, &wanted), WorkerChange::New);
        assert_eq!(change(&deployment("o2", Some("s1"))), WorkerChange::None);
        assert_eq!(
            change(&deployment("o1", Some("s1"))),
            WorkerChange::Operator,
            "a new image, the same spec"
        );
        assert_eq!(
            change(&deployment("o1", None)),
            WorkerChange::Operator,
            "applied by an older operator"
        );
        assert_eq!(change(&deployment("o1", Some("s0"))), WorkerChange::Spec);
    }

    #[test]
    fn a_worker_added_takes_tables_only_once_it_is_ready() {
        let shared: BTreeSet<String> = (0..60).map(|i| format!("t{i}")).collect();
        let syncs = BTreeMap::new();
        let two = next_assignment(
            &PoolAssignment::default(),
            &shared,
            &own(&[]),
            &syncs,
            2,
            &all(2),
            "t0",
        );
        // A third worker, its pod Pending: every table stays where it runs (make before break).
        let pending = next_assignment(&two, &shared, &own(&[]), &syncs, 3, &all(2), "t1");
        assert_eq!(
            pending.tables, two.tables,
            "no table moves to a worker that is not ready"
        );
        assert!(
            shared.iter().any(|t| pool_worker(t, 3) == 2),
            "some tables hash to worker 2"
        );
        // Ready: the tables that hash to it move.
        let three = next_assignment(&pending, &shared, &own(&[]), &syncs, 3, &all(3), "t2");
        assert!(three.revision > pending.revision);
        assert!(shared.iter().all(|t| three.tables[t] == pool_worker(t, 3)));
        // Back to 2: worker 2's tables move at once (it is going), whatever is ready.
        let back = next_assignment(&three, &shared, &own(&[]), &syncs, 2, &all(1), "t3");
        assert!(back.tables.values().all(|w| *w < 2));
        // A table new to the pool goes to its worker, ready or not (it ran nowhere).
        let more: BTreeSet<String> = shared.iter().cloned().chain(["new".to_string()]).collect();
        let added = next_assignment(&two, &more, &own(&[]), &syncs, 2, &BTreeSet::new(), "t4");
        assert_eq!(added.tables["new"], pool_worker("new", 2));
    }

    #[test]
    fn a_table_leaves_the_pool_for_its_own_sync_only_once_every_worker_stopped_it() {
        let shared: BTreeSet<String> = ["a", "b", "c"].map(String::from).into();
        let syncs = BTreeMap::new();
        let first = next_assignment(
            &PoolAssignment::default(),
            &shared,
            &own(&[]),
            &syncs,
            2,
            &all(2),
            "t0",
        );
        assert_eq!((first.tables.len(), first.revision), (3, 1));
        // Unchanged: the same revision (nothing written, no worker waits).
        let same = next_assignment(&first, &shared, &own(&[]), &syncs, 2, &all(2), "t1");
        assert_eq!(same.revision, 1);
        // An override asks `b` for a verify: it leaves the assignment, marked leaving.
        let shared: BTreeSet<String> = ["a", "c"].map(String::from).into();
        let next = next_assignment(&first, &shared, &own(&["b"]), &syncs, 2, &all(2), "t2");
        assert_eq!((next.revision, next.tables.contains_key("b")), (2, false));
        assert!(next.leaving.contains("b"));
        let live = BTreeSet::from([0, 1]);
        let w = first.tables["b"];
        let other = 1 - w;
        // The worker that ran it has not read revision 2, then is still stopping it.
        let old = BTreeMap::from([(w, report(w, 1, &["b"])), (other, report(other, 2, &[]))]);
        let wait = still_pooled("b", &next, &old, &live, 0).unwrap();
        assert!(wait.contains("has read the new assignment"), "{wait}");
        let stopping = BTreeMap::from([(w, report(w, 2, &["b"])), (other, report(other, 2, &[]))]);
        let wait = still_pooled("b", &next, &stopping, &live, 0).unwrap();
        assert!(wait.contains("has stopped it"), "{wait}");
        let stopped = BTreeMap::from([(w, report(w, 2, &[])), (other, report(other, 2, &[]))]);
        assert_eq!(still_pooled("b", &next, &stopped, &live, 0), None);
        // A worker not reporting, or pods of a removed worker, hold it too.
        assert!(still_pooled("b", &next, &BTreeMap::new(), &live, 0).is_some());
        assert!(still_pooled("b", &next, &stopped, &live, 1).is_some());
        // Still assigned (a failed listing kept the assignment): held.
        assert!(still_pooled("b", &first, &stopped, &live, 0).is_some());
    }

    #[test]
    fn a_table_back_from_its_own_sync_is_assigned_once_that_sync_is_gone() {
        let shared: BTreeSet<String> = ["a", "b"].map(String::from).into();
        let mut syncs = BTreeMap::new();
        let spec = own(&["b"]).remove("b").unwrap().0;
        syncs.insert("b".to_string(), PaimonMysqlSync::new("shop-b", spec));
        let previous = PoolAssignment {
            leaving: ["b".to_string()].into(),
            ..Default::default()
        };
        let next = next_assignment(&previous, &shared, &own(&[]), &syncs, 2, &all(2), "t");
        assert!(!next.tables.contains_key("b"), "its sync is still there");
        assert!(next.leaving.is_empty(), "no longer leaving: coming back");
        syncs.clear();
        let next = next_assignment(&next, &shared, &own(&[]), &syncs, 2, &all(2), "t");
        assert!(next.tables.contains_key("b"));
    }

    #[test]
    fn a_leaving_table_stays_marked_until_its_sync_has_reconciled() {
        let shared = BTreeSet::new();
        let previous = PoolAssignment {
            tables: [("b".to_string(), 0)].into(),
            revision: 4,
            ..Default::default()
        };
        let mut syncs = BTreeMap::new();
        let marked = next_assignment(&previous, &shared, &own(&["b"]), &syncs, 1, &all(1), "t");
        assert!(marked.leaving.contains("b"));
        let spec = own(&["b"]).remove("b").unwrap().0;
        let mut made = PaimonMysqlSync::new("shop-b", spec);
        syncs.insert("b".to_string(), made.clone());
        let next = next_assignment(&marked, &shared, &own(&["b"]), &syncs, 1, &all(1), "t");
        assert!(next.leaving.contains("b"), "made, not reconciled yet");
        made.status = Some(Default::default());
        syncs.insert("b".to_string(), made);
        let next = next_assignment(&next, &shared, &own(&["b"]), &syncs, 1, &all(1), "t");
        assert!(next.leaving.is_empty());
    }
}
