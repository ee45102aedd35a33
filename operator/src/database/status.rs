//! The status of a `PaimonMysqlDatabaseSync` (pure): each table's sync summed up from its
//! `PaimonMysqlSync` status, `tablesReady`, the phase and the `Ready` / `Discovered` conditions.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use pms_crds::contract::{PoolAssignment, PoolReport, PooledState, PooledTable, TableListing};
use pms_crds::{
    pool_worker, table_sync_name, DatabaseSyncStatus, PaimonMysqlDatabaseSync, PaimonMysqlSync,
    PoolStatus, SyncPhase, SyncState, TableStatus, MAX_POOLED_TABLES_LISTED,
};

/// What the status is computed from.
pub struct Found<'a> {
    pub pmds: &'a PaimonMysqlDatabaseSync,
    /// The last listing of the database (`None` before the first).
    pub listing: Option<&'a TableListing>,
    /// The matching tables.
    pub chosen: &'a [String],
    /// The tables' syncs, by table.
    pub syncs: &'a BTreeMap<String, PaimonMysqlSync>,
    /// Tables whose spec did not render (an override that is not a sync's field).
    pub invalid: &'a BTreeMap<String, String>,
    /// `placement: pooled`: the assignment and the workers' reports.
    pub pool: Option<Pooled<'a>>,
    pub now: Timestamp,
}

pub struct Pooled<'a> {
    pub assignment: &'a PoolAssignment,
    /// By worker.
    pub reports: &'a BTreeMap<u32, PoolReport>,
    /// The tables on syncs of their own (`f.syncs`), with what each waits for while it is
    /// still moving there.
    pub own: &'a BTreeMap<String, Option<String>>,
    /// The workers whose Deployment has had no available pod for longer than
    /// [`REPORT_STALE_AFTER`] (Pending, crash-looping, on a lost node): since when, and why.
    pub unavailable: &'a BTreeMap<u32, String>,
}

impl Pooled<'_> {
    /// Why worker `w` is not running its tables now, if it isn't: its pod not available, or
    /// its report older than [`REPORT_STALE_AFTER`]. (The message names times, not ages: a
    /// message that changed at every reconcile would be a status write each time.)
    fn worker_down(&self, w: u32, now: Timestamp) -> Option<String> {
        if let Some(why) = self.unavailable.get(&w) {
            return Some(format!("pooled worker {w} has no available pod {why}"));
        }
        let at = &self.reports.get(&w)?.at;
        let stale = at
            .parse::<Timestamp>()
            .map_or(true, |t| !reported_recently(t, now));
        stale.then(|| {
            format!(
                "pooled worker {w} has not reported since {at}: its tables may be behind (is its pod running?)"
            )
        })
    }
}

/// Whether a report made at `at` is recent at `now` (within [`REPORT_STALE_AFTER`]).
fn reported_recently(at: Timestamp, now: Timestamp) -> bool {
    now.duration_since(at).as_secs() <= REPORT_STALE_AFTER.as_secs() as i64
}

/// Why a pooled worker's Deployment has had no available pod for longer than
/// [`REPORT_STALE_AFTER`] at `now`, if so: its `Available` condition False since then (a
/// Deployment just made, or whose status no controller writes, is not counted).
pub fn unavailable_since(
    deployment: &k8s_openapi::api::apps::v1::Deployment,
    now: Timestamp,
) -> Option<String> {
    let conditions = deployment.status.as_ref()?.conditions.as_ref()?;
    let available = conditions.iter().find(|c| c.type_ == "Available")?;
    if available.status != "False" {
        return None;
    }
    let since = available.last_transition_time.as_ref()?.0;
    if reported_recently(since, now) {
        return None;
    }
    let why = conditions
        .iter()
        .find(|c| c.type_ == "Progressing" && c.status == "False")
        .or(Some(available))
        .and_then(|c| c.message.clone())
        .unwrap_or_default();
    Some(format!("since {since} ({why})"))
}

/// Whether pooled worker `w` can take tables on now: its Deployment has an available pod and
/// it reported recently (so it reads the assignment).
pub fn worker_ready(
    deployment: Option<&k8s_openapi::api::apps::v1::Deployment>,
    report: Option<&PoolReport>,
    now: Timestamp,
) -> bool {
    let available = deployment
        .and_then(|d| d.status.as_ref()?.available_replicas)
        .is_some_and(|n| n > 0);
    let reporting = report
        .and_then(|r| r.at.parse::<Timestamp>().ok())
        .is_some_and(|at| reported_recently(at, now));
    available && reporting
}

/// A pooled worker whose report is older than this is not reporting.
const REPORT_STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

/// Every chosen table's status.
pub fn tables(f: &Found) -> Vec<TableStatus> {
    let rows = f.pool.as_ref().map(assigned_rows).unwrap_or_default();
    f.chosen
        .iter()
        .map(|t| match &f.pool {
            Some(p) => match p.own.get(t) {
                Some(None) => table_status(f, t),
                Some(Some(waiting)) => TableStatus {
                    phase: Some(SyncPhase::Pending),
                    message: Some(waiting.clone()),
                    ..pooled_table_status(f, p, &rows, t)
                },
                None => pooled_table_status(f, p, &rows, t),
            },
            None => table_status(f, t),
        })
        .collect()
}

/// A listing older than this many `discoveryInterval`s (and a minute) is stale: the discovery
/// worker is not listing.
const STALE_AFTER_INTERVALS: u32 = 3;

/// The status of an invalid spec.
pub fn invalid(pmds: &PaimonMysqlDatabaseSync, why: &str) -> DatabaseSyncStatus {
    DatabaseSyncStatus {
        observed_generation: pmds.metadata.generation,
        phase: Some(SyncPhase::Failed),
        conditions: vec![condition(
            pmds,
            "Ready",
            false,
            "InvalidSpec",
            why.to_string(),
        )],
        ..Default::default()
    }
}

/// The status, from every table's (`tables(f)`).
pub fn status(f: &Found, tables: &[TableStatus]) -> DatabaseSyncStatus {
    let pmds = f.pmds;
    let running = tables
        .iter()
        .filter(|t| t.phase == Some(SyncPhase::Running))
        .count();
    let not_ready: Vec<String> = tables
        .iter()
        .filter(|t| t.phase != Some(SyncPhase::Running))
        .map(|t| {
            let phase = t.phase.map_or("Pending", SyncPhase::as_str);
            match &t.message {
                Some(m) => format!("{}: {phase} ({m})", t.table),
                None => format!("{}: {phase}", t.table),
            }
        })
        .collect();
    let suspended = pmds.spec.template.state == SyncState::Suspended;
    let awaited = f
        .pool
        .as_ref()
        .map(|p| workers_awaited(f, p))
        .unwrap_or_default();
    let phase = match f.listing {
        _ if suspended => SyncPhase::Suspended,
        None => SyncPhase::Pending,
        Some(_) if not_ready.is_empty() && awaited.is_empty() => SyncPhase::Running,
        Some(_)
            if !awaited.is_empty()
                || tables
                    .iter()
                    .any(|t| matches!(t.phase, Some(SyncPhase::Failed | SyncPhase::Degraded))) =>
        {
            SyncPhase::Degraded
        }
        Some(_) => SyncPhase::Pending,
    };
    let summary = format!("{running}/{} tables running", tables.len());
    let ready = if f.listing.is_none() {
        condition(
            pmds,
            "Ready",
            false,
            "NotListedYet",
            "waiting for the first listing of the Paimon database".into(),
        )
    } else if not_ready.is_empty() {
        condition(pmds, "Ready", true, "AllTablesRunning", summary.clone())
    } else {
        // One table failing stops no other: this says which, and why.
        let shown: Vec<&str> = not_ready.iter().take(10).map(String::as_str).collect();
        let more = not_ready.len().saturating_sub(shown.len());
        let tail = if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        };
        condition(
            pmds,
            "Ready",
            false,
            "TablesNotRunning",
            format!("{summary}; {}{tail}", shown.join("; ")),
        )
    };
    let failing: Vec<&str> = tables
        .iter()
        .filter(|t| matches!(t.phase, Some(SyncPhase::Failed | SyncPhase::Degraded)))
        .map(|t| t.table.as_str())
        .collect();
    let degraded = match (failing.as_slice(), awaited.is_empty()) {
        ([], true) => condition(pmds, "Degraded", false, "AsExpected", String::new()),
        ([], false) => condition(
            pmds,
            "Degraded",
            true,
            "PooledWorkerUnavailable",
            awaited.join("; "),
        ),
        (some, _) => condition(
            pmds,
            "Degraded",
            true,
            "TablesFailing",
            format!(
                "{} of {} tables failing: {}",
                some.len(),
                tables.len(),
                some.join(", ")
            ) + &awaited.iter().map(|a| format!("; {a}")).collect::<String>(),
        ),
    };
    let progressing = if phase == SyncPhase::Pending {
        condition(pmds, "Progressing", true, "TablesStarting", summary.clone())
    } else {
        condition(pmds, "Progressing", false, "Settled", summary.clone())
    };
    let mut conditions = vec![ready, progressing, degraded];
    if let Some(l) = f.listing {
        let limit = pmds.spec.discovery_interval.0 * STALE_AFTER_INTERVALS
            + std::time::Duration::from_secs(60);
        let age =
            l.at.parse::<Timestamp>()
                .ok()
                .map(|at| f.now.duration_since(at))
                .filter(|age| age.as_secs() > limit.as_secs() as i64);
        conditions.push(match (&l.error, age) {
            // The message names the listing's time, not its age: a message that changed at
            // every reconcile would be a status write each time, hence another reconcile.
            (None, Some(_)) => condition(
                pmds,
                "Discovered",
                false,
                "ListingStale",
                format!(
                    "the last listing was at {} (more than {STALE_AFTER_INTERVALS} × discoveryInterval ago): is the \
                     discovery worker (Deployment {}-slot-0) running?",
                    l.at,
                    pms_crds::contract::discovery_name(&pmds.name_any())
                ),
            ),
            (None, None) => condition(
                pmds,
                "Discovered",
                true,
                "Listed",
                format!(
                    "{} tables in the database, {} match spec.tables",
                    l.tables.len(),
                    f.chosen.len()
                ),
            ),
            (Some(e), _) => condition(
                pmds,
                "Discovered",
                false,
                "ListingFailed",
                format!("{e} (the last listing stands)"),
            ),
        });
    }
    let (listed, pool) = match &f.pool {
        None => (tables.to_vec(), None),
        Some(p) => (
            tables
                .iter()
                .filter(|t| t.phase != Some(SyncPhase::Running))
                .take(MAX_POOLED_TABLES_LISTED)
                .cloned()
                .collect(),
            Some(pool_status(f, p, tables)),
        ),
    };
    DatabaseSyncStatus {
        observed_generation: pmds.metadata.generation,
        phase: Some(phase),
        tables_ready: Some(format!("{running}/{}", tables.len())),
        listed_at: f.listing.map(|l| l.at.clone()),
        tables: listed,
        pool,
        conditions: keep_transition_times(pmds, conditions),
    }
}

/// The pooled workers with no available pod for too long while tables wait to move to them
/// (the assignment holds each on the worker that runs it until the new one is ready).
fn workers_awaited(f: &Found, p: &Pooled) -> Vec<String> {
    let workers = f.pmds.spec.placement.workers;
    p.unavailable
        .iter()
        .filter(|(k, _)| **k < workers)
        .filter_map(|(k, why)| {
            let waiting = p
                .assignment
                .tables
                .iter()
                .filter(|(t, w)| pool_worker(t, workers) == *k && *w != k)
                .count();
            (waiting > 0).then(|| {
                format!(
                    "pooled worker {k} has no available pod {why}: {waiting} tables that move to it stay on \
                     their current workers until it is ready"
                )
            })
        })
        .collect()
}

/// Each table's row in the report of the worker it is assigned to (a row another worker still
/// reports, of a table moving away from it, is not the table's).
fn assigned_rows<'a>(p: &Pooled<'a>) -> BTreeMap<&'a str, &'a PooledTable> {
    p.reports
        .iter()
        .flat_map(|(w, r)| r.tables.iter().map(move |t| (*w, t)))
        .filter(|(w, t)| p.assignment.tables.get(&t.table) == Some(w))
        .map(|(_, t)| (t.table.as_str(), t))
        .collect()
}

fn pool_status(f: &Found, p: &Pooled, tables: &[TableStatus]) -> PoolStatus {
    let rows = assigned_rows(p);
    let count = |state: PooledState| {
        f.chosen
            .iter()
            .filter(|t| !p.own.contains_key(*t))
            .filter(|t| rows.get(t.as_str()).is_some_and(|r| r.state == state))
            .count() as u32
    };
    let recent = |r: &&PoolReport| {
        r.at.parse::<Timestamp>()
            .is_ok_and(|at| reported_recently(at, f.now))
    };
    let failed = tables
        .iter()
        .filter(|t| t.phase == Some(SyncPhase::Failed))
        .count() as u32;
    let pooled = |t: &&TableStatus| !p.own.contains_key(&t.table);
    let pooled_tables = tables.iter().filter(pooled).count();
    let pooled_failed = tables
        .iter()
        .filter(pooled)
        .filter(|t| t.phase == Some(SyncPhase::Failed))
        .count() as u32;
    let (following, full_read, queued) = (
        count(PooledState::Following),
        count(PooledState::FullRead),
        count(PooledState::Queued),
    );
    PoolStatus {
        workers: f.pmds.spec.placement.workers,
        workers_reporting: p
            .reports
            .iter()
            .filter(|(w, r)| **w < f.pmds.spec.placement.workers && recent(r))
            .count() as u32,
        following,
        full_read,
        queued,
        starting: (pooled_tables as u32)
            .saturating_sub(following + full_read + queued + pooled_failed),
        failed,
        own_syncs: p.own.len() as u32,
    }
}

/// A pooled table's status: refused, or as its worker reports it.
fn pooled_table_status(
    f: &Found,
    p: &Pooled,
    rows: &BTreeMap<&str, &PooledTable>,
    table: &str,
) -> TableStatus {
    let mut out = TableStatus {
        table: table.to_string(),
        sync: table_sync_name(&f.pmds.name_any(), table),
        target: f
            .pmds
            .spec
            .render(table)
            .map(|s| s.sink.table)
            .unwrap_or_default(),
        phase: Some(SyncPhase::Pending),
        ..Default::default()
    };
    if let Some(why) = f.invalid.get(table) {
        out.phase = Some(SyncPhase::Failed);
        out.message = Some(why.clone());
        return out;
    }
    if f.pmds.spec.template.state == SyncState::Suspended {
        out.phase = Some(SyncPhase::Suspended);
        out.message = Some("template.state is suspended: no pooled worker runs".into());
        return out;
    }
    let worker = p.assignment.tables.get(table).copied();
    // Its worker not running: Degraded, whatever it last reported (a stale report would read
    // Running while MySQL falls behind).
    if let Some(why) = worker.and_then(|w| p.worker_down(w, f.now)) {
        let row = rows.get(table);
        out.snapshot_id = row.and_then(|r| r.snapshot_id);
        out.lag_snapshots = row.and_then(|r| r.lag_snapshots);
        out.phase = Some(SyncPhase::Degraded);
        out.message = Some(why);
        return out;
    }
    let Some(row) = rows.get(table) else {
        out.message = Some(match worker {
            Some(w) => format!("waiting for pooled worker {w} to start it"),
            None if f.syncs.contains_key(table) => {
                "back to the pooled workers once its own PaimonMysqlSync and its pods are gone"
                    .into()
            }
            None => "not assigned yet".into(),
        });
        return out;
    };
    out.snapshot_id = row.snapshot_id;
    out.lag_snapshots = row.lag_snapshots;
    let w = worker.unwrap_or_default();
    match row.state {
        PooledState::Following | PooledState::FullRead => out.phase = Some(SyncPhase::Running),
        PooledState::Starting => out.message = Some(format!("starting on pooled worker {w}")),
        PooledState::Queued => {
            out.message = Some(format!(
                "queued on pooled worker {w} for a full read (place {} in its queue)",
                row.queue_position.unwrap_or_default()
            ))
        }
        PooledState::Failed => {
            out.phase = Some(SyncPhase::Failed);
            out.message = row.message.clone();
        }
    }
    out
}

fn table_status(f: &Found, table: &str) -> TableStatus {
    let sync = f.syncs.get(table);
    let status = sync.and_then(|s| s.status.as_ref());
    let mut out = TableStatus {
        table: table.to_string(),
        sync: table_sync_name(&f.pmds.name_any(), table),
        target: sync.map(|s| s.spec.sink.table.clone()).unwrap_or_default(),
        phase: status.and_then(|s| s.phase),
        // No progress (snapshot, lag, checkpoint time): it is in the table's own sync, and
        // copied here it would change the parent's status at every checkpoint of every table.
        ..Default::default()
    };
    if let Some(why) = f.invalid.get(table) {
        out.phase = Some(SyncPhase::Failed);
        out.message = Some(why.clone());
    } else if out.phase != Some(SyncPhase::Running) {
        out.message = status
            .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Ready"))
            .map(|c| c.message.clone())
            .filter(|m| !m.is_empty());
    }
    out
}

fn condition(
    pmds: &PaimonMysqlDatabaseSync,
    type_: &str,
    ok: bool,
    reason: &str,
    message: String,
) -> Condition {
    Condition {
        type_: type_.into(),
        status: if ok { "True" } else { "False" }.into(),
        reason: reason.into(),
        message,
        last_transition_time: Time(k8s_openapi::jiff::Timestamp::now()),
        observed_generation: pmds.metadata.generation,
    }
}

/// A condition whose status did not change keeps its transition time (and the status stays
/// equal, so nothing is written).
fn keep_transition_times(
    pmds: &PaimonMysqlDatabaseSync,
    mut conditions: Vec<Condition>,
) -> Vec<Condition> {
    let previous = pmds
        .status
        .as_ref()
        .map(|s| s.conditions.as_slice())
        .unwrap_or_default();
    for c in &mut conditions {
        if let Some(p) = previous
            .iter()
            .find(|p| p.type_ == c.type_ && p.status == c.status)
        {
            c.last_transition_time = p.last_transition_time.clone();
        }
    }
    conditions
}

#[cfg(test)]
mod tests {
    use super::*;
    use pms_crds::PaimonMysqlSyncStatus;

    fn status_of(f: &Found) -> DatabaseSyncStatus {
        status(f, &tables(f))
    }

    fn pmds() -> PaimonMysqlDatabaseSync {
        PaimonMysqlDatabaseSync::new(
            "shop",
            serde_yaml::from_str(
                "tables: {pattern: '.*'}
template:
  source: {warehouse: /wh, database: shop, table: '{table}'}
  sink: {url: 'mysql://h/db', table: '{table}_rt'}",
            )
            .unwrap(),
        )
    }

    /// [`pmds`] with `placement: pooled` on `workers` workers.
    fn pooled(workers: u32) -> PaimonMysqlDatabaseSync {
        let mut p = pmds();
        p.spec.placement.mode = pms_crds::PlacementMode::Pooled;
        p.spec.placement.workers = workers;
        p
    }

    fn sync(p: &PaimonMysqlDatabaseSync, table: &str, phase: SyncPhase) -> PaimonMysqlSync {
        let mut s = crate::database::build::table_sync(p, table, p.spec.render(table).unwrap());
        s.status = Some(PaimonMysqlSyncStatus {
            phase: Some(phase),
            snapshot_id: Some(7),
            ..Default::default()
        });
        s
    }

    #[test]
    fn one_failing_table_degrades_the_database_and_is_named() {
        let p = pmds();
        let listing = TableListing {
            tables: vec!["a".into(), "b".into(), "c".into()],
            at: "now".into(),
            error: None,
        };
        let chosen: Vec<String> = listing.tables.clone();
        let syncs = BTreeMap::from([
            ("a".to_string(), sync(&p, "a", SyncPhase::Running)),
            ("b".to_string(), sync(&p, "b", SyncPhase::Failed)),
        ]);
        let invalid = BTreeMap::from([(
            "c".to_string(),
            "overrides.c: unknown field `maxRow`".to_string(),
        )]);
        let s = status_of(&Found {
            pmds: &p,
            listing: Some(&listing),
            chosen: &chosen,
            syncs: &syncs,
            invalid: &invalid,
            pool: None,
            now: Timestamp::now(),
        });
        assert_eq!(s.phase, Some(SyncPhase::Degraded));
        assert_eq!(s.tables_ready.as_deref(), Some("1/3"));
        // Progress is in each table's own sync: the parent's status changes with a table's
        // phase, not at each of its checkpoints.
        assert_eq!(
            (s.tables[0].snapshot_id, s.tables[0].target.as_str()),
            (None, "a_rt")
        );
        assert!(s
            .tables
            .iter()
            .all(|t| t.lag_snapshots.is_none() && t.last_checkpoint_time.is_none()));
        let ready = of_type(&s, "Ready");
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("False", "TablesNotRunning")
        );
        assert!(
            ready.message.contains("b: Failed") && ready.message.contains("c: Failed (overrides.c"),
            "{}",
            ready.message
        );
        assert_eq!(of_type(&s, "Discovered").reason, "Listed");
        let degraded = of_type(&s, "Degraded");
        assert_eq!(
            (degraded.status.as_str(), degraded.message.as_str()),
            ("True", "2 of 3 tables failing: b, c")
        );
        assert_eq!(of_type(&s, "Progressing").status, "False");
    }

    #[test]
    fn a_failed_listing_keeps_the_tables() {
        let p = pmds();
        let listing = TableListing {
            tables: vec!["a".into()],
            at: "now".into(),
            error: Some("S3 down".into()),
        };
        let syncs = BTreeMap::from([("a".to_string(), sync(&p, "a", SyncPhase::Running))]);
        let s = listed_status(&p, &listing, &syncs, Timestamp::now());
        assert_eq!(
            s.phase,
            Some(SyncPhase::Running),
            "a failed listing stops no table"
        );
        let discovered = of_type(&s, "Discovered");
        assert_eq!(
            (discovered.status.as_str(), discovered.reason.as_str()),
            ("False", "ListingFailed")
        );
        assert!(discovered.message.contains("S3 down"));
    }

    /// The status of `p` with one listing of `tables`, all chosen, their syncs `syncs`.
    fn listed_status(
        p: &PaimonMysqlDatabaseSync,
        listing: &TableListing,
        syncs: &BTreeMap<String, PaimonMysqlSync>,
        now: Timestamp,
    ) -> DatabaseSyncStatus {
        status_of(&Found {
            pmds: p,
            listing: Some(listing),
            chosen: &listing.tables,
            syncs,
            invalid: &BTreeMap::new(),
            pool: None,
            now,
        })
    }

    fn of_type<'a>(s: &'a DatabaseSyncStatus, type_: &str) -> &'a Condition {
        s.conditions.iter().find(|c| c.type_ == type_).unwrap()
    }

    #[test]
    fn a_listing_older_than_three_intervals_is_stale() {
        let p = pmds();
        let now: Timestamp = "2026-12-02T10:00:00Z".parse().unwrap();
        let listed = |at: &str| TableListing {
            tables: vec!["a".into()],
            at: at.into(),
            error: None,
        };
        let syncs = BTreeMap::from([("a".to_string(), sync(&p, "a", SyncPhase::Running))]);
        let discovered = |at: &str| {
            let s = listed_status(&p, &listed(at), &syncs, now);
            of_type(&s, "Discovered").clone()
        };
        assert_eq!(discovered("2026-12-02T09:59:00Z").reason, "Listed");
        let stale = discovered("2026-12-02T09:00:00Z");
        assert_eq!(
            (stale.status.as_str(), stale.reason.as_str()),
            ("False", "ListingStale")
        );
        assert!(
            stale.message.contains("shop--tables-slot-0"),
            "{}",
            stale.message
        );
        let later = listed_status(
            &p,
            &listed("2026-12-02T09:00:00Z"),
            &syncs,
            now.checked_add(k8s_openapi::jiff::SignedDuration::from_secs(7))
                .unwrap(),
        );
        assert_eq!(
            of_type(&later, "Discovered").message,
            stale.message,
            "the same status a few seconds later: no status write, no reconcile loop"
        );
    }

    #[test]
    fn before_the_first_listing_it_is_pending() {
        let p = pmds();
        let s = status_of(&Found {
            pmds: &p,
            listing: None,
            chosen: &[],
            syncs: &BTreeMap::new(),
            invalid: &BTreeMap::new(),
            pool: None,
            now: Timestamp::now(),
        });
        assert_eq!(s.phase, Some(SyncPhase::Pending));
        assert_eq!(of_type(&s, "Ready").reason, "NotListedYet");
        assert_eq!(of_type(&s, "Progressing").status, "True");
    }

    /// Three pooled workers whose last reports all say Following: worker 1's report is two
    /// minutes old, worker 2's Deployment has had no available pod for two minutes (Pending on
    /// a nodeSelector nothing matches). Their tables are Degraded, named with the reason, and
    /// so is the database sync; worker 0's stay Running. Suspended, every table says so.
    #[test]
    fn a_pooled_table_whose_worker_is_not_running_is_degraded_not_running() {
        use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition, DeploymentStatus};
        let p = pooled(3);
        let chosen: Vec<String> = (0..3).map(|i| format!("t{i}")).collect();
        let assignment = PoolAssignment {
            workers: 3,
            tables: chosen.iter().cloned().zip(0..3).collect(),
            ..Default::default()
        };
        let now: Timestamp = "2026-12-07T10:00:00Z".parse().unwrap();
        let two_minutes_ago = now - k8s_openapi::jiff::SignedDuration::from_secs(120);
        let report = |w: u32, at: Timestamp| PoolReport {
            worker: w,
            at: at.to_string(),
            tables: vec![PooledTable {
                table: format!("t{w}"),
                state: PooledState::Following,
                snapshot_id: Some(5),
                ..Default::default()
            }],
            ..Default::default()
        };
        let reports = BTreeMap::from([
            (0, report(0, now)),
            (1, report(1, two_minutes_ago)),
            (2, report(2, now)),
        ]);
        let condition =
            |type_: &str, status: &str, since: Timestamp, message: &str| DeploymentCondition {
                type_: type_.into(),
                status: status.into(),
                last_transition_time: Some(Time(since)),
                message: Some(message.into()),
                ..Default::default()
            };
        let deployment = |conditions| Deployment {
            status: Some(DeploymentStatus {
                conditions: Some(conditions),
                ..Default::default()
            }),
            ..Default::default()
        };
        let pending = deployment(vec![condition(
            "Available",
            "False",
            two_minutes_ago,
            "Deployment does not have minimum availability.",
        )]);
        let just_made = deployment(vec![condition("Available", "False", now, "starting")]);
        assert!(
            unavailable_since(&just_made, now).is_none(),
            "a grace for a new pod"
        );
        assert!(unavailable_since(&Deployment::default(), now).is_none());
        let unavailable = BTreeMap::from([(2, unavailable_since(&pending, now).unwrap())]);
        let listing = TableListing {
            tables: chosen.clone(),
            at: now.to_string(),
            error: None,
        };
        let own = BTreeMap::new();
        let syncs = BTreeMap::new();
        let invalid = BTreeMap::new();
        let mut suspended = p.clone();
        suspended.spec.template.state = pms_crds::SyncState::Suspended;
        let found = |p| Found {
            pmds: p,
            listing: Some(&listing),
            chosen: &chosen,
            syncs: &syncs,
            invalid: &invalid,
            pool: Some(Pooled {
                assignment: &assignment,
                reports: &reports,
                own: &own,
                unavailable: &unavailable,
            }),
            now,
        };
        let all = tables(&found(&p));
        let phases: Vec<_> = all.iter().map(|t| t.phase).collect();
        assert_eq!(
            phases,
            [
                Some(SyncPhase::Running),
                Some(SyncPhase::Degraded),
                Some(SyncPhase::Degraded)
            ]
        );
        let said = |i: usize| all[i].message.clone().unwrap_or_default();
        assert!(
            said(1).contains("pooled worker 1 has not reported since 2026-12-07T09:58:00Z"),
            "{}",
            said(1)
        );
        assert!(
            said(2).contains("pooled worker 2 has no available pod since 2026-12-07T09:58:00Z")
                && said(2).contains("minimum availability"),
            "{}",
            said(2)
        );
        assert_eq!(all[1].snapshot_id, Some(5), "what it last reported stays");
        let s = status(&found(&p), &all);
        assert_eq!(s.phase, Some(SyncPhase::Degraded));
        assert_eq!(of_type(&s, "Ready").status, "False");
        assert_eq!(s.pool.unwrap().workers_reporting, 2);
        let all = tables(&found(&suspended));
        assert!(
            all.iter().all(|t| t.phase == Some(SyncPhase::Suspended)),
            "{all:?}"
        );
        assert_eq!(
            status(&found(&suspended), &all).phase,
            Some(SyncPhase::Suspended)
        );
    }

    /// A worker added whose pod can't start: the tables that would move to it stay running on
    /// their workers, and the database sync is Degraded, naming it.
    #[test]
    fn a_worker_that_tables_wait_for_degrades_the_database_sync_while_they_keep_running() {
        use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus};
        let p = pooled(3);
        let chosen: Vec<String> = (0..30).map(|i| format!("t{i}")).collect();
        // Held on their two-worker places.
        let assignment = PoolAssignment {
            workers: 3,
            tables: chosen
                .iter()
                .map(|t| (t.clone(), pool_worker(t, 2)))
                .collect(),
            ..Default::default()
        };
        let now: Timestamp = "2026-12-07T10:00:00Z".parse().unwrap();
        let report = |w: u32| PoolReport {
            worker: w,
            at: now.to_string(),
            tables: assignment
                .tables
                .iter()
                .filter(|(_, k)| **k == w)
                .map(|(t, _)| PooledTable {
                    table: t.clone(),
                    state: PooledState::Following,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let reports = BTreeMap::from([(0, report(0)), (1, report(1))]);
        let running = Deployment {
            status: Some(DeploymentStatus {
                available_replicas: Some(1),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(worker_ready(Some(&running), reports.get(&0), now));
        assert!(!worker_ready(
            Some(&Deployment::default()),
            reports.get(&0),
            now
        ));
        assert!(!worker_ready(Some(&running), None, now));
        let unavailable =
            BTreeMap::from([(2, "since 2026-12-07T09:58:00Z (Unschedulable)".into())]);
        let listing = TableListing {
            tables: chosen.clone(),
            at: now.to_string(),
            error: None,
        };
        let (own, syncs, invalid) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
        let f = Found {
            pmds: &p,
            listing: Some(&listing),
            chosen: &chosen,
            syncs: &syncs,
            invalid: &invalid,
            pool: Some(Pooled {
                assignment: &assignment,
                reports: &reports,
                own: &own,
                unavailable: &unavailable,
            }),
            now,
        };
        let all = tables(&f);
        assert!(
            all.iter().all(|t| t.phase == Some(SyncPhase::Running)),
            "{all:?}"
        );
        let s = status(&f, &all);
        assert_eq!(s.phase, Some(SyncPhase::Degraded));
        let d = of_type(&s, "Degraded");
        assert_eq!(
            (d.status.as_str(), d.reason.as_str()),
            ("True", "PooledWorkerUnavailable")
        );
        let waiting = chosen.iter().filter(|t| pool_worker(t, 3) == 2).count();
        assert!(
            d.message.contains(&format!("pooled worker 2 has no available pod since 2026-12-07T09:58:00Z (Unschedulable): {waiting} tables")),
            "{}",
            d.message
        );
        assert_eq!(of_type(&s, "Ready").status, "True", "every table runs");
    }

    #[test]
    fn a_pooled_status_of_1000_tables_counts_them_and_lists_only_those_not_running() {
        let p = pooled(10);
        let chosen: Vec<String> = (0..1000).map(|i| format!("table_{i:04}")).collect();
        let assignment = PoolAssignment {
            workers: 10,
            tables: chosen
                .iter()
                .map(|t| (t.clone(), pms_crds::pool_worker(t, 10)))
                .collect(),
            at: "2026-12-03T00:00:00Z".into(),
            ..Default::default()
        };
        let now = Timestamp::now();
        // Worker 9 has not reported: its tables are waiting for it.
        let reports: BTreeMap<u32, PoolReport> = (0..9)
            .map(|w| {
                let tables = assignment
                    .tables
                    .iter()
                    .filter(|(_, k)| **k == w)
                    .enumerate()
                    .map(|(i, (t, _))| PooledTable {
                        table: t.clone(),
                        state: match i {
                            0 => PooledState::Failed,
                            1 => PooledState::Queued,
                            _ => PooledState::Following,
                        },
                        queue_position: (i == 1).then_some(1),
                        snapshot_id: Some(3),
                        message: (i == 0).then(|| "the MySQL table's key differs".into()),
                        ..Default::default()
                    })
                    .collect();
                (
                    w,
                    PoolReport {
                        worker: w,
                        at: now.to_string(),
                        tables,
                        ..Default::default()
                    },
                )
            })
            .collect();
        let listing = TableListing {
            tables: chosen.clone(),
            at: now.to_string(),
            error: None,
        };
        let invalid = BTreeMap::from([(chosen[0].clone(), "table_0000: refused".to_string())]);
        // Two tables on syncs of their own (an override asks for a verify): one runs there, one
        // waits for its pooled worker to let it go.
        let syncs = BTreeMap::from([(chosen[1].clone(), sync(&p, &chosen[1], SyncPhase::Running))]);
        let own = BTreeMap::from([
            (chosen[1].clone(), None),
            (
                chosen[2].clone(),
                Some("moving: pooled worker 3 has stopped it".to_string()),
            ),
        ]);
        let found = Found {
            pmds: &p,
            listing: Some(&listing),
            chosen: &chosen,
            syncs: &syncs,
            invalid: &invalid,
            pool: Some(Pooled {
                assignment: &assignment,
                reports: &reports,
                own: &own,
                unavailable: &BTreeMap::new(),
            }),
            now,
        };
        let all = tables(&found);
        let s = status(&found, &all);
        let pool = s.pool.clone().unwrap();
        let on_9 = assignment.tables.values().filter(|w| **w == 9).count() as u32;
        assert_eq!((pool.workers, pool.workers_reporting), (10, 9));
        assert_eq!(pool.queued, 9);
        assert!(pool.failed >= 7, "{pool:?}");
        assert_eq!(pool.own_syncs, 2);
        assert_eq!(
            pool.following
                + pool.queued
                + pool.failed
                + pool.starting
                + pool.full_read
                + pool.own_syncs,
            1000
        );
        assert_eq!(all[1].phase, Some(SyncPhase::Running), "from its own sync");
        assert_eq!(all[2].phase, Some(SyncPhase::Pending));
        assert_eq!(
            all[2].message.as_deref(),
            Some("moving: pooled worker 3 has stopped it")
        );
        assert!(pool.starting >= on_9, "{pool:?}");
        assert_eq!(s.phase, Some(SyncPhase::Degraded));
        assert_eq!(
            s.tables.len(),
            MAX_POOLED_TABLES_LISTED,
            "only the tables not running, at most 50"
        );
        assert!(s.tables.iter().all(|t| t.phase != Some(SyncPhase::Running)));
        let failed = all
            .iter()
            .find(|t| t.message.as_deref() == Some("the MySQL table's key differs"));
        assert_eq!(failed.and_then(|t| t.phase), Some(SyncPhase::Failed));
        let size = serde_json::to_string(&s).unwrap().len();
        assert!(size < 64 * 1024, "the status is {size} bytes");
    }
}
