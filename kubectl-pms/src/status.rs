//! `kubectl pms status`: one screen per sync or database sync (pure: from the resources).

use std::fmt::Write;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use pms_crds::{PaimonMysqlDatabaseSync, PaimonMysqlSync, PaimonMysqlSyncSavepoint, RebuildStatus};

use crate::redact::redact;

/// The screen of a sync, with its savepoints.
pub fn sync_screen(
    pms: &PaimonMysqlSync,
    savepoints: &[PaimonMysqlSyncSavepoint],
    now: Timestamp,
) -> String {
    let spec = &pms.spec;
    let status = pms.status.clone().unwrap_or_default();
    let mut out = String::new();
    let phase = status.phase.map_or("Pending", |p| p.as_str());
    let _ = writeln!(
        out,
        "PaimonMysqlSync {}/{}: {phase}{}",
        pms.namespace().unwrap_or_default(),
        pms.name_any(),
        stale_note(pms.metadata.generation, status.observed_generation)
    );
    let _ = writeln!(
        out,
        "  source  {} {}.{}\n  sink    {} table {} ({}, parallelism {})",
        spec.source.warehouse,
        spec.source.database,
        spec.source.table,
        redact(&spec.sink.url),
        spec.sink.table,
        serde_json::to_value(spec.sink.delivery)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        spec.parallelism
    );
    let _ = writeln!(
        out,
        "  snapshot {} (lag {} snapshots), slots ready {}",
        opt(status.snapshot_id),
        opt(status.lag_snapshots),
        status.slots_ready.as_deref().unwrap_or("-")
    );
    let _ = writeln!(
        out,
        "\n  SLOT  SNAPSHOT  LAG  LAST CHECKPOINT                     RESTARTS  FULL READ"
    );
    for s in &status.slots {
        let checkpoint = match &s.last_checkpoint_time {
            Some(t) => format!("{t} ({} ago)", age(t, now)),
            None => "-".into(),
        };
        let full_read = match s.full_read {
            Some(f) => format!(
                "{} / {} rows ({:.0}%)",
                f.rows,
                f.expected_rows,
                f.rows as f64 * 100.0 / f.expected_rows.max(1) as f64
            ),
            None => "-".into(),
        };
        let _ = writeln!(
            out,
            "  {:<4}  {:<8}  {:<3}  {checkpoint:<34}  {:<8}  {full_read}",
            s.slot,
            opt(s.snapshot_id),
            opt(s.lag_snapshots),
            opt(s.restarts)
        );
    }
    if status.slots.is_empty() {
        let _ = writeln!(out, "  (no slot has reported yet)");
    }
    out.push('\n');
    let problem = status.conditions.iter().find(|c| {
        (c.type_ == "Degraded" && c.status == "True") || (c.type_ == "Ready" && c.status == "False")
    });
    let _ = writeln!(
        out,
        "  last error   {}",
        problem.map_or("none".to_string(), |c| format!(
            "{}: {}",
            c.reason,
            redact(&c.message)
        ))
    );
    let _ = writeln!(out, "  rebuild      {}", operation(status.rebuild.as_ref()));
    let _ = writeln!(out, "  restore      {}", operation(status.restore.as_ref()));
    let verify = match &status.verify {
        None => "never".to_string(),
        Some(v) if v.running => format!("running (started {})", v.started_at),
        Some(v) => match (&v.result, &v.error) {
            (Some(r), _) => format!(
                "snapshot {}: {} rows in Paimon, {} in MySQL, {} differ (started {})",
                r.snapshot_id,
                r.paimon_rows,
                r.mysql_rows,
                r.divergent_rows(),
                v.started_at
            ),
            (None, Some(e)) => format!("failed: {e}"),
            (None, None) => format!("started {}", v.started_at),
        },
    };
    let _ = writeln!(out, "  verify       {verify}");
    let mut ours: Vec<&PaimonMysqlSyncSavepoint> = savepoints
        .iter()
        .filter(|s| s.spec.sync_name == pms.name_any())
        .collect();
    ours.sort_by_key(|s| s.metadata.creation_timestamp.as_ref().map(|t| t.0));
    let savepoint = match ours.last() {
        None => "none".to_string(),
        Some(last) => {
            let st = last.status.clone().unwrap_or_default();
            format!(
                "{} ({} in all); the latest {}: {} at snapshot {}",
                ours.len(),
                ours.len(),
                last.name_any(),
                serde_json::to_value(st.state)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
                opt(st.snapshot_id)
            )
        }
    };
    let _ = writeln!(out, "  savepoints   {savepoint}");
    out
}

/// The screen of a database sync.
pub fn database_screen(pmds: &PaimonMysqlDatabaseSync) -> String {
    let status = pmds.status.clone().unwrap_or_default();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "PaimonMysqlDatabaseSync {}/{}: {}{}",
        pmds.namespace().unwrap_or_default(),
        pmds.name_any(),
        status.phase.map_or("Pending", |p| p.as_str()),
        stale_note(pmds.metadata.generation, status.observed_generation)
    );
    let _ = writeln!(
        out,
        "  tables ready {}, listed at {}",
        status.tables_ready.as_deref().unwrap_or("-"),
        status.listed_at.as_deref().unwrap_or("-")
    );
    if let Some(p) = &status.pool {
        let _ = writeln!(
            out,
            "  pooled on {} workers ({} reporting): {} following, {} in full read, {} queued, {} starting, {} failed, {} on syncs of their own",
            p.workers, p.workers_reporting, p.following, p.full_read, p.queued, p.starting, p.failed, p.own_syncs
        );
    }
    let not_running: Vec<_> = status
        .tables
        .iter()
        .filter(|t| t.phase != Some(pms_crds::SyncPhase::Running))
        .collect();
    if not_running.is_empty() {
        let _ = writeln!(out, "  every table running");
    } else {
        let _ = writeln!(out, "\n  TABLE  PHASE  SNAPSHOT  MESSAGE");
        for t in not_running {
            let _ = writeln!(
                out,
                "  {}  {}  {}  {}",
                t.table,
                t.phase.map_or("Pending", |p| p.as_str()),
                opt(t.snapshot_id),
                redact(t.message.as_deref().unwrap_or(""))
            );
        }
    }
    out
}

/// One line per sync: where it is and how fresh, the oldest slot's last checkpoint in seconds
/// (what `kubectl pms list` prints; `namespaces`: a NAMESPACE column, for `-A`).
pub fn list_screen(syncs: &[PaimonMysqlSync], namespaces: bool, now: Timestamp) -> String {
    let mut out = String::new();
    let ns_head = if namespaces {
        "NAMESPACE             "
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "{ns_head}NAME                            PHASE        SLOTS  SNAPSHOT  LAG  FRESHNESS"
    );
    for pms in syncs {
        let status = pms.status.clone().unwrap_or_default();
        let oldest = status
            .slots
            .iter()
            .map(|s| seconds_since(s.last_checkpoint_time.as_deref()?, now))
            .collect::<Option<Vec<i64>>>()
            .and_then(|ages| ages.into_iter().max());
        let ns = if namespaces {
            format!("{:<22}", pms.namespace().unwrap_or_default())
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{ns}{:<31} {:<12} {:<6} {:<9} {:<4} {}",
            pms.name_any(),
            status.phase.map_or("Pending", |p| p.as_str()),
            status.slots_ready.as_deref().unwrap_or("-"),
            opt(status.snapshot_id),
            opt(status.lag_snapshots),
            oldest.map_or("-".into(), |s| format!("{s}s")),
        );
    }
    if syncs.is_empty() {
        let _ = writeln!(out, "(no PaimonMysqlSync)");
    }
    out
}

fn operation(r: Option<&RebuildStatus>) -> String {
    match r {
        None => "never".into(),
        Some(r) => format!(
            "{:?}{}{}, started {}{}",
            r.phase,
            r.trigger
                .as_ref()
                .map(|t| format!(" (trigger {t})"))
                .unwrap_or_default(),
            r.snapshot_id
                .map(|s| format!(" at snapshot {s}"))
                .unwrap_or_default(),
            r.started_at,
            r.message
                .as_ref()
                .map(|m| format!(": {}", redact(m)))
                .unwrap_or_default()
        ),
    }
}

fn stale_note(generation: Option<i64>, observed: Option<i64>) -> String {
    match (generation, observed) {
        (Some(g), Some(o)) if g != o => {
            format!(" (the operator has not acted on generation {g} yet: status of {o})")
        }
        (Some(_), None) => " (the operator has not acted on it yet)".into(),
        _ => String::new(),
    }
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// Whole seconds since `t` (RFC 3339), if it parses.
fn seconds_since(t: &str, now: Timestamp) -> Option<i64> {
    let at = t.parse::<Timestamp>().ok()?;
    Some(now.duration_since(at).as_secs().max(0))
}

/// How long ago `t` (RFC 3339) was, in whole seconds, minutes or hours.
fn age(t: &str, now: Timestamp) -> String {
    let Some(s) = seconds_since(t, now) else {
        return "?".into();
    };
    match s {
        0..=119 => format!("{s}s"),
        120..=7199 => format!("{}m", s / 60),
        _ => format!("{}h", s / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pms_crds::{PaimonMysqlSyncStatus, SlotStatus, SyncPhase};

    #[test]
    fn the_list_shows_each_sync_with_its_oldest_slots_freshness() {
        let sync = |name: &str, checkpoints: &[&str]| {
            let mut pms = PaimonMysqlSync::new(
                name,
                serde_yaml::from_str(
                    "source: {warehouse: /wh, database: shop, table: orders}\nsink: {url: 'mysql://db/s', table: t}",
                )
                .unwrap(),
            );
            pms.metadata.namespace = Some("data".into());
            pms.status = Some(PaimonMysqlSyncStatus {
                phase: Some(SyncPhase::Running),
                slots_ready: Some(format!("{}/{}", checkpoints.len(), checkpoints.len())),
                snapshot_id: Some(42),
                lag_snapshots: Some(1),
                slots: checkpoints
                    .iter()
                    .map(|t| SlotStatus {
                        last_checkpoint_time: Some(t.to_string()),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            });
            pms
        };
        let now: Timestamp = "2026-12-07T10:00:30Z".parse().unwrap();
        let out = list_screen(
            &[
                sync("orders", &["2026-12-07T10:00:28Z", "2026-12-07T10:00:10Z"]),
                PaimonMysqlSync::new("fresh", sync("x", &[]).spec),
            ],
            true,
            now,
        );
        let lines: Vec<&str> = out.lines().collect();
        assert!(
            lines[0].starts_with("NAMESPACE") && lines[0].ends_with("FRESHNESS"),
            "{out}"
        );
        assert!(
            lines[1].starts_with("data")
                && lines[1].contains("orders")
                && lines[1].contains("Running")
                && lines[1].contains("2/2")
                && lines[1].ends_with(" 20s"),
            "the oldest slot's checkpoint: {out}"
        );
        assert!(
            lines[2].contains("fresh") && lines[2].contains("Pending") && lines[2].ends_with(" -"),
            "{out}"
        );
    }

    #[test]
    fn the_status_screen_shows_each_slot_the_last_error_and_the_operations_without_a_password() {
        let mut pms = PaimonMysqlSync::new(
            "orders",
            serde_yaml::from_str(
                "source: {warehouse: /wh, database: shop, table: orders}
sink: {url: 'mysql://writer:s3cret@db:3306/serving', table: orders_rt, delivery: exactly-once}
parallelism: 2",
            )
            .unwrap(),
        );
        pms.metadata.namespace = Some("data".into());
        pms.metadata.generation = Some(3);
        let condition = |type_: &str, status: &str, reason: &str, message: &str| {
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
                type_: type_.into(),
                status: status.into(),
                reason: reason.into(),
                message: message.into(),
                last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                    Timestamp::UNIX_EPOCH,
                ),
                observed_generation: Some(3),
            }
        };
        pms.status = Some(PaimonMysqlSyncStatus {
            observed_generation: Some(3),
            phase: Some(SyncPhase::Degraded),
            snapshot_id: Some(41),
            lag_snapshots: Some(2),
            slots_ready: Some("1/2".into()),
            slots: vec![
                SlotStatus {
                    slot: 0,
                    snapshot_id: Some(42),
                    lag_snapshots: Some(1),
                    last_checkpoint_time: Some("2026-12-03T10:00:00Z".into()),
                    restarts: Some(0),
                    full_read: None,
                },
                SlotStatus {
                    slot: 1,
                    snapshot_id: Some(41),
                    lag_snapshots: Some(2),
                    last_checkpoint_time: None,
                    restarts: Some(4),
                    full_read: None,
                },
                SlotStatus {
                    slot: 2,
                    snapshot_id: None,
                    lag_snapshots: None,
                    last_checkpoint_time: Some("2026-12-03T10:00:20Z".into()),
                    restarts: Some(0),
                    full_read: Some(pms_crds::contract::FullReadProgress {
                        rows: 250_000,
                        expected_rows: 1_000_000,
                    }),
                },
            ],
            conditions: vec![
                condition(
                    "Ready",
                    "False",
                    "WorkerFailed",
                    "slot 1: Access denied for mysql://writer:s3cret@db",
                ),
                condition(
                    "Degraded",
                    "True",
                    "WorkerFailed",
                    "slot 1: Access denied for mysql://writer:s3cret@db",
                ),
            ],
            ..Default::default()
        });
        let screen = sync_screen(&pms, &[], "2026-12-03T10:00:30Z".parse().unwrap());
        assert!(
            screen.starts_with("PaimonMysqlSync data/orders: Degraded\n"),
            "{screen}"
        );
        assert!(
            screen.contains("snapshot 41 (lag 2 snapshots), slots ready 1/2"),
            "{screen}"
        );
        assert!(
            screen.contains("2026-12-03T10:00:00Z (30s ago)"),
            "{screen}"
        );
        assert!(screen.contains("  1     41        2    -"), "{screen}");
        assert!(
            screen.contains("  2     -         -    2026-12-03T10:00:20Z (10s ago)      0         250000 / 1000000 rows (25%)"),
            "the full read's progress of slot 2: {screen}"
        );
        assert!(
            screen.contains("last error   WorkerFailed: slot 1: Access denied"),
            "{screen}"
        );
        assert!(screen.contains("rebuild      never"), "{screen}");
        assert!(!screen.contains("s3cret"), "no password: {screen}");
    }
}
