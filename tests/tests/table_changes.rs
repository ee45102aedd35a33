//! Tables that change while we read them (issue 44): an `ALTER TABLE … SET` of an option that
//! decides how changes are read, with a writer from before it still committing, and options
//! set and removed while the sync is down. Each case ends exact (MySQL equal to Paimon Java's
//! read) or refused naming what to do, never with exit 0 and rows that differ.

mod common;

use common::*;
use pms_tests::mysql::TestDb;
use serde_json::{json, Value as Json};

fn set_option(key: &str, value: &str, keep_writer: bool) -> Json {
    json!({"setOption": {"key": key, "value": value}, "keepWriter": keep_writer})
}

fn deletes(ids: &[i64]) -> Json {
    let rows: Vec<Json> = ids
        .iter()
        .map(|&id| json!({"kind": "-D", "values": order(id, "1.00", "NEW")}))
        .collect();
    json!({ "rows": rows })
}

/// `none` -> `input`, the usual way to turn on streaming, while the writer started before the
/// ALTER goes on committing without a changelog: its snapshots carry the new schema id, and
/// were skipped as changelog snapshots without changes. Read by their delta files, they are
/// exact, with no start-over; so is the backlog a sync finds when it starts after the ALTER.
#[tokio::test]
async fn a_producer_turned_on_beside_a_running_writer_loses_none_of_its_commits() {
    let t = orders_table(json!({"bucket": "1"}), false);
    let db = TestDb::new("alter_producer_old_writer").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    t.commits(vec![generate(1, 5, "+I", 0)]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    let s = t.commits(vec![
        set_option("changelog-producer", "input", true),
        generate(6, 5, "+I", 0),
        deletes(&[2]),
        generate(3, 2, "+U", 1),
    ]);
    let out = cfg.run_once(&[]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(
        !log.contains("starting over"),
        "read alike, no start-over: {log}"
    );
    assert_synced(&t, &db, "orders", Some(s)).await;
    // Then writers with the new option (a changelog with every commit), and an ALTER of an
    // option that decides no reading beside one of them.
    let s = t.commits(vec![generate(11, 5, "+I", 0), deletes(&[6])]);
    let s2 = t.commits(vec![
        set_option("changelog.num-retained.max", "50", true),
        generate(20, 3, "+I", 0),
        deletes(&[11]),
    ]);
    assert!(s2 > s);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", Some(s2)).await;
}

/// `lookup` -> `input`: rows written at level 0 before the switch (a write-only writer, its
/// compaction job not yet run) would have reached MySQL by the lookup compaction's changelog,
/// which never comes now. One slot starts over (a full read of the latest snapshot, then a
/// sweep) and ends exact; several slots can't, and stop asking for a rebuild.
#[tokio::test]
async fn a_producer_switched_away_from_lookup_starts_over() {
    let t = orders_table(
        json!({"bucket": "2", "changelog-producer": "lookup"}),
        false,
    );
    let db = TestDb::new("alter_producer_from_lookup").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    t.commits(vec![generate(1, 10, "+I", 0)]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    let slots_db = TestDb::new("alter_producer_from_lookup_slots").await;
    slots_db.exec(ORDERS_DDL).await;
    let slots = SyncConfig::builder(&t, &slots_db)
        .consumer_id("slots")
        .parallelism(2)
        .build();
    for slot in ["0", "1"] {
        slots.sync_once(&["--slot", slot]);
    }
    // Write-only writers (their compaction job not run), before and after the switch: the
    // rows before it stay in level 0, where Paimon's batch read sees them.
    let write_only = |ids: std::ops::RangeInclusive<i64>| {
        let rows: Vec<Json> = ids
            .map(|id| json!({"kind": "+I", "values": order(id, "2.00", "LEVEL0")}))
            .collect();
        json!({"rows": rows, "writeOnly": true})
    };
    let s = t.commits(vec![
        write_only(11..=20),
        set_option("changelog-producer", "input", false),
        write_only(30..=32),
    ]);
    let out = cfg.run_once(&[]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert_synced(&t, &db, "orders", Some(s)).await;
    assert!(
        log.contains("starting over") && log.contains("changelog-producer lookup -> input"),
        "{log}"
    );
    let refused = slots.run_once(&["--slot", "0"]);
    let log = stderr(&refused);
    assert!(!refused.status.success(), "{log}");
    assert!(
        log.contains("changelog-producer lookup -> input") && log.contains("rebuild"),
        "{log}"
    );
}

/// `record-level.expire-time` set, a compaction that expires rows (no change of them in any
/// changelog), then the option removed, all while the sync was down: the sync can't see what
/// expired, so it starts over, and ends exact.
#[tokio::test]
async fn record_expiry_set_and_removed_while_down_starts_over() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    let db = TestDb::new("record_expiry_while_down").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    t.commits(vec![generate(1, 10, "+I", 0)]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    let s = t.commits(vec![
        set_option("record-level.time-field", "updated_at", false),
        set_option("record-level.expire-time", "1 d", false),
        json!({"compact": "full"}),
        json!({"removeOption": "record-level.expire-time"}),
        json!({"removeOption": "record-level.time-field"}),
        generate(20, 2, "+I", 0),
    ]);
    assert!(
        t.read(Some(s)).len() < 12,
        "the compaction expired rows (Paimon's read has {} rows)",
        t.read(Some(s)).len()
    );
    let out = cfg.run_once(&[]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert_synced(&t, &db, "orders", Some(s)).await;
    assert!(
        log.contains("starting over") && log.contains("record-level.expire-time"),
        "{log}"
    );
}

/// An `INSERT OVERWRITE` of a deletion-vector table whose changes are its delta files
/// (producer `none`): its snapshot holds the overwrite's rows in level-0 files, which Paimon
/// doesn't read until the compaction after it, so the difference at that snapshot can't be
/// read; the sync said "run again after the next compaction", which could never help (the
/// snapshot never changes). It starts over instead (the full read of the latest, compacted
/// snapshot) and ends exact; `sequence.field` on such a table, whose every snapshot would wait
/// so, is refused at start by `check` and `run`.
#[tokio::test]
async fn an_overwrite_of_a_deletion_vector_table_with_delta_changes_does_not_stall() {
    let t = orders_table(
        json!({"bucket": "1", "deletion-vectors.enabled": "true"}),
        false,
    );
    let db = TestDb::new("dv_overwrite").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    t.commits(vec![generate(1, 20, "+I", 0), deletes(&[3])]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    let kept: Vec<Json> = (5..=9)
        .map(|id| json!({"kind": "+I", "values": order(id, "7.00", "KEPT")}))
        .collect();
    let s = t.commits(vec![json!({ "overwrite": kept }), generate(30, 2, "+I", 0)]);
    let out = cfg.run_once(&[]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(
        log.contains("is an OVERWRITE") && log.contains("starting over"),
        "{log}"
    );
    assert_synced(&t, &db, "orders", Some(s)).await;

    let keyed = orders_table(
        json!({"bucket": "1", "deletion-vectors.enabled": "true", "sequence.field": "updated_at"}),
        false,
    );
    keyed.commits(vec![generate(1, 5, "+I", 0)]);
    let db = TestDb::new("dv_sequence_field").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&keyed, &db).build();
    for (command, args) in [("check", &[][..]), ("run", &["--once"][..])] {
        let out = cfg.subcommand(command, args).output().unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert!(!out.status.success(), "{command}: {text}");
        assert!(
            text.contains("doesn't take the level-0 files the snapshot wrote"),
            "{command}: {text}"
        );
    }
    assert_eq!(db.count("orders").await, 0);
}

/// `sequence.field` with changelog-producer `none` / `input` (issue 44, item 3): a dedicated
/// compaction job picks `+I 1 @10` and `-D 1 @20`; before it commits, a writer commits a late
/// `+I 1 @15`. The delete wins at that snapshot (MySQL drops the key), then the compaction
/// drops the delete at the highest level, and Paimon's read shows the late insert. The COMPACT
/// snapshot's changes are no APPEND's: the keys of the deletes it dropped are read again from
/// Paimon's merge at it.
#[tokio::test]
async fn a_compaction_that_drops_a_delete_beside_a_late_insert_shows_the_insert() {
    let at = |kind: &str, id: i64, status: &str, second: u32| {
        json!({"kind": kind, "values": [
            id, format!("{id}.00"), status, format!("2024-01-01 00:00:{second:02}.000")
        ]})
    };
    for producer in ["none", "input"] {
        let t = orders_table(
            json!({"bucket": "1", "sequence.field": "updated_at", "changelog-producer": producer}),
            false,
        );
        let db = TestDb::new(&format!("compaction_drops_delete_{producer}")).await;
        db.exec(ORDERS_DDL).await;
        let cfg = SyncConfig::builder(&t, &db).build();
        t.commits(vec![
            json!({"rows": [at("+I", 1, "FIRST", 10), at("+I", 2, "FIRST", 10)]}),
            json!({"rows": [at("-D", 1, "GONE", 20)], "writeOnly": true}),
        ]);
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "orders", None).await;
        let s = t.commits(vec![json!({"compact": "full", "beside": [
            {"rows": [at("+I", 1, "LATE", 15), at("+U", 2, "SECOND", 30)], "writeOnly": true}
        ]})]);
        // What Paimon's read comes to, so that the comparison can't pass on a table where
        // nothing happened: the late insert shows once the compaction dropped the delete.
        let read = t.read(Some(s));
        assert!(
            read.iter()
                .any(|r| r[0] == json!(1) && r[2] == json!("LATE")),
            "{producer}: {read:?}"
        );
        assert!(
            t.read(Some(s - 1)).iter().all(|r| r[0] != json!(1)),
            "{producer}: the delete wins before the compaction"
        );
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "orders", Some(s)).await;
        cfg.assert_verified();
    }
}
