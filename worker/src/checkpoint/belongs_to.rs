//! What a checkpoint belongs to ([`BelongsTo`]), what the sync is now, and what a difference
//! leads to (docs/guarantees.md "What a checkpoint belongs to"):
//!
//! - Another sync's checkpoint, another Paimon table or another MySQL table: refused before
//!   anything is written. A copied config and a moved sync look the same, and guessing wrong
//!   either skips the new target's history or overwrites a table; the error shows both sides
//!   and the way out (`pms-worker reset`).
//! - The same names, but another history: a Paimon table dropped and created again, a
//!   rolled-back history (`pipeline/history.rs`), or, with at-least-once, another MySQL server
//!   (a failover to a replica that lacks the last changes): the slot starts over, exactly: a
//!   full read of the latest snapshot that ends by removing the rows it doesn't have. With
//!   exactly-once the progress row moved with the data, so another server is no difference.

use pms_crds::contract::{BelongsTo, Checkpoint, SourceIdentity, TargetIdentity};

use crate::config::WorkerConfig;
use crate::sink::MysqlConnection;
use crate::source::PaimonSource;

/// What this sync reads and writes now (no snapshot yet).
pub async fn now(cfg: &WorkerConfig, source: &PaimonSource, mysql: &MysqlConnection) -> BelongsTo {
    BelongsTo {
        source: SourceIdentity {
            // A table named by its directory (`source.path`) is where that directory is.
            warehouse: cfg
                .spec
                .source
                .path
                .clone()
                .unwrap_or_else(|| cfg.spec.source.warehouse.clone()),
            database: cfg.spec.source.database.clone(),
            table: cfg.spec.source.table.clone(),
            created_millis: source.created_millis().await,
        },
        target: TargetIdentity {
            database: cfg.mysql.database.clone(),
            table: cfg.spec.sink.table.clone(),
            server: mysql.server().identity.clone(),
        },
        snapshot: None,
        filter: source.filter().map(|f| f.text().to_string()),
        freshness: source.reads_at_commit().then(|| "commit".to_string()),
    }
}

/// What a rebuild's new generation's checkpoint belongs to once its table is swapped in as
/// `cfg`'s table.
pub fn swapped_in(mut belongs_to: BelongsTo, cfg: &WorkerConfig) -> BelongsTo {
    belongs_to.target.table = cfg.spec.sink.table.clone();
    belongs_to
}

/// Why `cp` must not be resumed by this sync at all (another sync's, or made for another
/// table on either side), with the evidence; `None` when it may.
pub fn foreign(cp: &Checkpoint, sync: &str, now: &BelongsTo) -> Option<String> {
    if cp.sync != sync {
        return Some(format!(
            "belongs to sync {:?}, and this is sync {sync:?}: two syncs never share a checkpoint. Give this one its own \
             `checkpoint.path` (standalone) or name",
            cp.sync
        ));
    }
    let was = cp.belongs_to.as_ref()?;
    let paimon =
        |s: &SourceIdentity| format!("Paimon table {}.{} in {}", s.database, s.table, s.warehouse);
    let mysql = |t: &TargetIdentity| format!("MySQL table {}.{}", t.database, t.table);
    let (then, today) = if !same_paimon_table(&was.source, &now.source) {
        (paimon(&was.source), paimon(&now.source))
    } else if mysql(&was.target) != mysql(&now.target) {
        (mysql(&was.target), mysql(&now.target))
    } else {
        return None;
    };
    Some(format!(
        "was made for {then}, and this sync is configured for {today}; nothing was written. If this is a second sync \
         (a copied config), give it its own `checkpoint.path` or name. If the sync moved on purpose, run `pms-worker \
         reset` with this config (it removes this sync's checkpoints): the next run reads the table in full and removes \
         from the target the rows Paimon doesn't have"
    ))
}

/// Whether two identities name one Paimon table: the same database and table, in a warehouse
/// named alike (`file:///wh/` and `/wh`), or named otherwise (`hdfs:///wh` and
/// `hdfs://nn:8020/wh`, `s3://b/wh/` and `s3://b/wh`, a moved mount) but holding a table whose
/// first schema was written at the same millisecond: the same table, as far as a reader can
/// tell (its history is checked snapshot by snapshot all the same).
fn same_paimon_table(was: &SourceIdentity, now: &SourceIdentity) -> bool {
    let location = |w: &str| {
        let w = w.strip_prefix("file://").unwrap_or(w);
        w.trim_end_matches('/').to_string()
    };
    was.database == now.database
        && was.table == now.table
        && (location(&was.warehouse) == location(&now.warehouse)
            || (was.created_millis.is_some() && was.created_millis == now.created_millis))
}

/// Why the slot must start over (a full read that removes what it doesn't read) rather than
/// resume `cp`: the Paimon table was created again, or, when the checkpoint did not come
/// with the rows (`from_progress_row` false), the target's server is another one.
pub fn start_over_reason(
    cp: &Checkpoint,
    now: &BelongsTo,
    from_progress_row: bool,
) -> Option<String> {
    let was = cp.belongs_to.as_ref()?;
    let created = (was.source.created_millis, now.source.created_millis);
    if let (Some(then), Some(today)) = created {
        if then != today {
            return Some(format!(
                "Paimon table {}.{} was dropped and created again (its first schema was written at {then} ms, now at \
                 {today} ms): the checkpoint's snapshots are another table's",
                now.source.database, now.source.table
            ));
        }
    }
    if was.filter != now.filter {
        let shown = |f: &Option<String>| {
            f.as_deref()
                .map_or("none".to_string(), |f| format!("{f:?}"))
        };
        return Some(format!(
            "source.filter changed (was {}, now {}): MySQL holds the rows the old filter kept",
            shown(&was.filter),
            shown(&now.filter)
        ));
    }
    if was.freshness != now.freshness {
        let shown = |f: &Option<String>| f.as_deref().unwrap_or("changelog").to_string();
        return Some(format!(
            "source.freshness changed (was {}, now {}): MySQL holds {} the changelog brought",
            shown(&was.freshness),
            shown(&now.freshness),
            if now.freshness.is_some() {
                "only what"
            } else {
                "commits ahead of what"
            }
        ));
    }
    if !from_progress_row && was.target.server != now.target.server {
        return Some(format!(
            "the MySQL server behind the URL is another one ({}, was {}): a failover, or a copy. With delivery \
             at-least-once the checkpoint's progress is what the old server held, which the new one may lack",
            now.target.server, was.target.server
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pms_crds::contract::{ReadPoint, Slot};

    fn belongs(table: &str, target: &str, server: &str, created: i64) -> BelongsTo {
        BelongsTo {
            source: SourceIdentity {
                warehouse: "/wh".into(),
                database: "db".into(),
                table: table.into(),
                created_millis: Some(created),
            },
            target: TargetIdentity {
                database: "serving".into(),
                table: target.into(),
                server: server.into(),
            },
            snapshot: None,
            filter: None,
            freshness: None,
        }
    }

    fn cp(belongs_to: BelongsTo) -> Checkpoint {
        Checkpoint {
            sync: "s".into(),
            slot: Slot::SINGLE,
            point: ReadPoint::FullRead {
                snapshot_id: 1,
                at: None,
            },
            epoch: 1,
            updated: String::new(),
            latest_snapshot: None,
            rescaled_from: None,
            paused_for: None,
            belongs_to: Some(belongs_to),
            sweep: false,
            full_read: None,
        }
    }

    #[test]
    fn another_sync_or_table_is_refused_with_both_sides() {
        let stored = cp(belongs("t", "orders", "a", 1));
        assert!(foreign(&stored, "s", &belongs("t", "orders", "b", 2)).is_none());
        let other_sync = foreign(&stored, "s2", &belongs("t", "orders", "a", 1)).unwrap();
        assert!(
            other_sync.contains("\"s\"") && other_sync.contains("\"s2\""),
            "{other_sync}"
        );
        let retarget = foreign(&stored, "s", &belongs("t", "orders_b", "a", 1)).unwrap();
        assert!(
            retarget.contains("serving.orders,") && retarget.contains("serving.orders_b;"),
            "{retarget}"
        );
        let resource = foreign(&stored, "s", &belongs("u", "orders", "a", 1)).unwrap();
        assert!(
            resource.contains("db.t in /wh") && resource.contains("db.u in /wh"),
            "{resource}"
        );
    }

    #[test]
    fn a_warehouse_named_otherwise_holding_the_same_table_is_the_same_table() {
        let at = |warehouse: &str, created: Option<i64>| {
            let mut b = belongs("t", "orders", "a", 1);
            b.source.warehouse = warehouse.into();
            b.source.created_millis = created;
            b
        };
        let stored = cp(at("hdfs:///wh", Some(7)));
        assert!(foreign(&stored, "s", &at("hdfs://nn:8020/wh", Some(7))).is_none());
        assert!(foreign(&stored, "s", &at("hdfs://nn:8020/wh", Some(8))).is_some());
        assert!(foreign(&stored, "s", &at("hdfs://nn:8020/wh", None)).is_some());
        let local = cp(at("file:///data/wh/", None));
        assert!(foreign(&local, "s", &at("/data/wh", None)).is_none());
        assert!(foreign(&local, "s", &at("/data/wh2", None)).is_some());
    }

    #[test]
    fn a_recreated_table_or_another_server_starts_over_unless_the_row_moved_with_the_data() {
        let stored = cp(belongs("t", "orders", "a", 1));
        assert!(start_over_reason(&stored, &belongs("t", "orders", "a", 1), false).is_none());
        assert!(start_over_reason(&stored, &belongs("t", "orders", "a", 2), true).is_some());
        assert!(start_over_reason(&stored, &belongs("t", "orders", "b", 1), false).is_some());
        assert!(start_over_reason(&stored, &belongs("t", "orders", "b", 1), true).is_none());
    }

    #[test]
    fn another_filter_starts_over() {
        let filtered = |f: Option<&str>| BelongsTo {
            filter: f.map(str::to_string),
            ..belongs("t", "orders", "a", 1)
        };
        let stored = cp(filtered(None));
        let why = start_over_reason(&stored, &filtered(Some("v > 1")), true).unwrap();
        assert!(why.contains("was none, now \"v > 1\""), "{why}");
        let stored = cp(filtered(Some("v > 1")));
        assert!(start_over_reason(&stored, &filtered(Some("v > 1")), true).is_none());
        assert!(start_over_reason(&stored, &filtered(None), true).is_some());
    }
}
