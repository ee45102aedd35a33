//! The status of a `PaimonMysqlDatabaseSync` (pure): each table's sync summed up from its
//! `PaimonMysqlSync` status, `tablesReady`, the phase and the `Ready` / `Discovered` conditions.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::ResourceExt;
use pms_crds::contract::TableListing;
use pms_crds::{
    table_sync_name, DatabaseSyncStatus, PaimonMysqlDatabaseSync, PaimonMysqlSync, SyncPhase,
    TableStatus,
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
}

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

pub fn status(f: &Found) -> DatabaseSyncStatus {
    let pmds = f.pmds;
    let tables: Vec<TableStatus> = f.chosen.iter().map(|t| table_status(f, t)).collect();
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
    let phase = match f.listing {
        None => SyncPhase::Pending,
        Some(_) if not_ready.is_empty() => SyncPhase::Running,
        Some(_)
            if tables
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
        condition(pmds, "Ready", true, "AllTablesRunning", summary)
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
    let mut conditions = vec![ready];
    if let Some(l) = f.listing {
        conditions.push(match &l.error {
            None => condition(
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
            Some(e) => condition(
                pmds,
                "Discovered",
                false,
                "ListingFailed",
                format!("{e} (the last listing stands)"),
            ),
        });
    }
    DatabaseSyncStatus {
        observed_generation: pmds.metadata.generation,
        phase: Some(phase),
        tables_ready: Some(format!("{running}/{}", tables.len())),
        listed_at: f.listing.map(|l| l.at.clone()),
        tables,
        conditions: keep_transition_times(pmds, conditions),
    }
}

fn table_status(f: &Found, table: &str) -> TableStatus {
    let sync = f.syncs.get(table);
    let status = sync.and_then(|s| s.status.as_ref());
    let mut out = TableStatus {
        table: table.to_string(),
        sync: table_sync_name(&f.pmds.name_any(), table),
        target: sync.map(|s| s.spec.sink.table.clone()).unwrap_or_default(),
        phase: status.and_then(|s| s.phase),
        snapshot_id: status.and_then(|s| s.snapshot_id),
        lag_snapshots: status.and_then(|s| s.lag_snapshots),
        last_checkpoint_time: status.and_then(|s| {
            s.slots
                .iter()
                .filter_map(|s| s.last_checkpoint_time.clone())
                .min()
        }),
        message: None,
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
        let s = status(&Found {
            pmds: &p,
            listing: Some(&listing),
            chosen: &chosen,
            syncs: &syncs,
            invalid: &invalid,
        });
        assert_eq!(s.phase, Some(SyncPhase::Degraded));
        assert_eq!(s.tables_ready.as_deref(), Some("1/3"));
        assert_eq!(
            (s.tables[0].snapshot_id, s.tables[0].target.as_str()),
            (Some(7), "a_rt")
        );
        let ready = &s.conditions[0];
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("False", "TablesNotRunning")
        );
        assert!(
            ready.message.contains("b: Failed") && ready.message.contains("c: Failed (overrides.c"),
            "{}",
            ready.message
        );
        assert_eq!(s.conditions[1].reason, "Listed");
    }

    #[test]
    fn a_failed_listing_keeps_the_tables() {
        let p = pmds();
        let listing = TableListing {
            tables: vec!["a".into()],
            at: "now".into(),
            error: Some("S3 down".into()),
        };
        let chosen = listing.tables.clone();
        let syncs = BTreeMap::from([("a".to_string(), sync(&p, "a", SyncPhase::Running))]);
        let s = status(&Found {
            pmds: &p,
            listing: Some(&listing),
            chosen: &chosen,
            syncs: &syncs,
            invalid: &BTreeMap::new(),
        });
        assert_eq!(
            s.phase,
            Some(SyncPhase::Running),
            "a failed listing stops no table"
        );
        let discovered = &s.conditions[1];
        assert_eq!(
            (discovered.status.as_str(), discovered.reason.as_str()),
            ("False", "ListingFailed")
        );
        assert!(discovered.message.contains("S3 down"));
    }

    #[test]
    fn before_the_first_listing_it_is_pending() {
        let p = pmds();
        let s = status(&Found {
            pmds: &p,
            listing: None,
            chosen: &[],
            syncs: &BTreeMap::new(),
            invalid: &BTreeMap::new(),
        });
        assert_eq!(s.phase, Some(SyncPhase::Pending));
        assert_eq!(s.conditions[0].reason, "NotListedYet");
    }
}
