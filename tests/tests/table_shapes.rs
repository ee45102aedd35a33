//! Table shapes and the snapshots that change them: every shape is either synced exactly or
//! refused before the first write, naming the table option to change.

mod common;

use common::*;
use pms_tests::mysql::TestDb;
use pms_tests::paimon::Table;
use serde_json::{json, Value as Json};

/// An `orders` table whose key is `id` alone but which is partitioned by `region`.
fn cross_partition_table(options: Json) -> Table {
    let columns = json!([
        {"name": "id", "type": "BIGINT NOT NULL"},
        {"name": "amount", "type": "DECIMAL(10, 2)"},
        {"name": "status", "type": "STRING"},
        {"name": "updated_at", "type": "TIMESTAMP(3)"},
        {"name": "region", "type": "STRING NOT NULL"},
    ]);
    Table::create(
        json!({"columns": columns, "primaryKeys": ["id"], "partitionKeys": ["region"], "options": options}),
    )
}

#[tokio::test]
async fn shapes_that_cannot_be_synced_exactly_are_refused_before_any_write() {
    let cases: Vec<(&str, Table, &str)> = vec![
        (
            "partial_update_input",
            orders_table(
                json!({"bucket": "1", "merge-engine": "partial-update", "changelog-producer": "input"}),
                false,
            ),
            "set changelog-producer = lookup",
        ),
        (
            "aggregation_input",
            orders_table(
                json!({"bucket": "1", "merge-engine": "aggregation", "changelog-producer": "input"}),
                false,
            ),
            "not the aggregated rows",
        ),
        (
            "row_deduplicate_ignore_fields",
            orders_table(
                json!({"bucket": "1", "changelog-producer": "lookup",
                       "changelog-producer.row-deduplicate": "true",
                       "changelog-producer.row-deduplicate-ignore-fields": "updated_at"}),
                false,
            ),
            "makes no changelog, so MySQL would keep their old values",
        ),
        (
            "unknown_changelog_option",
            orders_table(
                json!({"bucket": "1", "changelog.from-a-newer-paimon": "on"}),
                false,
            ),
            "changelog.from-a-newer-paimon = \"on\" is unknown to this worker",
        ),
    ];
    for (name, table, needle) in cases {
        let db = TestDb::new(&format!("shape_{name}")).await;
        db.exec(ORDERS_DDL).await;
        table.commit(&[("+I", order(1, "1.00", "NEW"))]);
        let cfg = SyncConfig::builder(&table, &db).build();
        let out = cfg.run_once(&[]);
        let log = stderr(&out);
        assert!(!out.status.success(), "{name}: a refused shape fails");
        assert!(
            log.contains(needle) && log.contains("nothing is written"),
            "{name}: {log}"
        );
        assert_eq!(db.count("orders").await, 0, "{name}: nothing was written");
    }
}

fn regional(id: i64, amount: &str, status: &str, region: &str) -> Json {
    regional_change("+I", id, amount, status, region)
}

fn regional_change(kind: &str, id: i64, amount: &str, status: &str, region: &str) -> Json {
    let mut row = order(id, amount, status);
    row.as_array_mut().unwrap().push(json!(region));
    json!({"kind": kind, "values": row})
}

/// The MySQL table of [`cross_partition_table`]: keyed by `id` alone, with a guard column.
const ORDERS_BY_ID_DDL: &str = "CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, region VARCHAR(16) NOT NULL, \
     amount DECIMAL(10,2), status VARCHAR(64), updated_at DATETIME(3), pms_snapshot BIGINT NULL) DEFAULT CHARSET = utf8mb4";

const REGIONS: [&str; 3] = ["EU", "US", "ASIA"];

/// A cross-partition-update table (bucket = -1, key `id` without the partition `region`):
/// keys move between partitions, are deleted, and move back. Exact after each snapshot with
/// one slot; through all snapshots at once in small flushes; after a crash; and with three
/// slots only with a sequence guard (refused without one).
#[tokio::test]
async fn a_cross_partition_update_table_is_exact_as_keys_move() {
    let t = cross_partition_table(json!({"dynamic-bucket.target-row-num": "4"}));
    let region = |id: i64, shift: i64| REGIONS[((id + shift) % 3) as usize];
    let db = TestDb::new("cross_partition").await;
    db.exec(ORDERS_BY_ID_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    let first: Vec<Json> = (1..=30)
        .map(|id| regional(id, "1.00", "NEW", region(id, 0)))
        .collect();
    t.commits(vec![json!({"rows": first})]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    let mut moves: Vec<Json> = (1..=10)
        .map(|id| regional(id, "2.00", "MOVED", region(id, 1)))
        .collect();
    moves.extend([
        regional_change("-D", 11, "1.00", "NEW", region(11, 0)),
        regional_change("-D", 12, "1.00", "NEW", region(12, 0)),
        regional(13, "3.00", "UPDATED", region(13, 0)),
        regional(31, "1.00", "NEW", "EU"),
    ]);
    let mut back: Vec<Json> = (1..=5)
        .map(|id| regional(id, "3.00", "BACK", region(id, 0)))
        .collect();
    back.extend([
        // Moved and deleted in one commit; moved twice in one commit.
        regional(6, "4.00", "MOVED", region(6, 2)),
        regional_change("-D", 6, "4.00", "MOVED", region(6, 2)),
        regional(20, "4.00", "AWAY", region(20, 1)),
        regional(20, "5.00", "AWAY", region(20, 2)),
        regional(11, "6.00", "AGAIN", "US"),
    ]);
    for commit in [moves, back] {
        let s = t.commits(vec![json!({"rows": commit})]);
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "orders", Some(s)).await;
    }
    assert_eq!(db.count("orders").await, 29);

    // Every snapshot as changes, in flushes of three records, one crashing before its commit.
    let db = TestDb::new("cross_partition_small_flushes").await;
    db.exec(ORDERS_BY_ID_DDL).await;
    let small = SyncConfig::builder(&t, &db)
        .from_snapshot(1)
        .max_rows(3)
        .consumer_id("small")
        .build();
    let crashed = small
        .command(&["--once"])
        .env("PMS_FAILPOINT", "before-transaction@9")
        .output()
        .unwrap();
    assert!(
        !crashed.status.success(),
        "the failpoint crashed the run: {}",
        stderr(&crashed)
    );
    small.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;

    // Three slots: a stale slot's write of a key that moved on would win, unless guarded.
    let db = TestDb::new("cross_partition_slots").await;
    db.exec(ORDERS_BY_ID_DDL).await;
    let slots = SyncConfig::builder(&t, &db)
        .from_snapshot(1)
        .consumer_id("slots")
        .parallelism(3);
    let out = slots.clone().build().run_once(&["--slot", "0"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("set parallelism to 1, or set sink.sequenceGuard"),
        "{}",
        stderr(&out)
    );
    assert_eq!(db.count("orders").await, 0, "refused before any write");
    let guarded = slots.sequence_guard("pms_snapshot").build();
    // The slots run one after the other, the last first: each is as stale as can be.
    for slot in ["2", "1", "0"] {
        guarded.sync_once(&["--slot", slot]);
    }
    assert_synced(&t, &db, "orders", None).await;
}

/// `--once` for each of `slots` slots, one after the other.
fn sync_each_slot(cfg: &SyncConfig, slots: u32) {
    for slot in 0..slots {
        cfg.sync_once(&["--slot", &slot.to_string()]);
    }
}

fn rows(kind: &str, ids: impl IntoIterator<Item = i64>) -> Vec<Json> {
    ids.into_iter()
        .map(|id| json!({"kind": kind, "values": order(id, "1.00", "NEW")}))
        .collect()
}

/// Tables Paimon reads by lookup, written as production writes them: a writer with
/// `write-only = true` (level-0 files only) beside a dedicated compaction job. Their level-0
/// files are not yet what a reader sees, and a key inserted and deleted inside level 0 has no
/// changelog at all: a full read that took level 0 wrote key 6 and never deleted it. One slot,
/// and three (each reading its own buckets, one after the other).
#[tokio::test]
async fn level_0_files_a_compaction_job_has_not_merged_yet_are_read_as_paimon_reads_them() {
    // The compaction job's kind: a minor one (Flink's dedicated compaction), a full one.
    for (name, options, compaction) in [
        (
            "lookup",
            json!({"bucket": "3", "changelog-producer": "lookup"}),
            "minor",
        ),
        (
            "lookup_dv",
            json!({"bucket": "3", "changelog-producer": "lookup", "deletion-vectors.enabled": "true"}),
            "full",
        ),
    ] {
        for slots in [1u32, 3] {
            let t = orders_table(options.clone(), false);
            let write_only = |rows: Vec<Json>| json!({"rows": rows, "writeOnly": true});
            let compacted = t.commits(vec![
                write_only(rows("+I", 1..=5)),
                json!({"compact": compaction}),
            ]);
            let mut pending = rows("+I", [6]);
            pending.extend(rows("-D", [1]));
            t.commits(vec![write_only(pending)]);
            let db = TestDb::new(&format!("level_0_{name}_{slots}")).await;
            db.exec(ORDERS_DDL).await;
            let cfg = SyncConfig::builder(&t, &db).parallelism(slots).build();
            let sync_slots = || sync_each_slot(&cfg, slots);
            sync_slots();
            // What Paimon's streaming read sees: the snapshot as compacted, level 0 not yet.
            assert_synced(&t, &db, "orders", Some(compacted)).await;
            cfg.assert_verified();
            t.commits(vec![
                write_only(rows("-D", [6])),
                json!({"compact": compaction}),
            ]);
            sync_slots();
            assert_synced(&t, &db, "orders", None).await;
            assert_eq!(
                db.count("orders").await,
                4,
                "{name}, {slots} slots: key 6 came and went inside level 0"
            );
        }
    }
}

/// `source.freshness: commit` on a lookup table written as production writes it (write-only
/// writers, a compaction job behind): each commit reaches MySQL as a Paimon batch query sees it,
/// before the compaction job has merged it: an update, a delete, and a key inserted and deleted
/// inside level 0. The compaction that follows changes nothing. Switching back to the changelog
/// starts over (MySQL held commits the changelog had not brought), exact again.
#[tokio::test]
async fn freshness_commit_applies_each_commit_before_the_compaction_job_merges_it() {
    let t = orders_table(
        json!({"bucket": "3", "changelog-producer": "lookup"}),
        false,
    );
    let write_only = |rows: Vec<Json>| json!({"rows": rows, "writeOnly": true});
    t.commits(vec![
        write_only(rows("+I", 1..=5)),
        json!({"compact": "minor"}),
    ]);
    let mut pending = rows("+I", [6]);
    pending.extend(rows("-D", [1]));
    t.commits(vec![write_only(pending)]);
    let db = TestDb::new("freshness_commit").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).freshness("commit").build();
    cfg.sync_once(&[]);
    // The latest snapshot as Paimon's batch read merges it, level 0 included.
    assert_synced(&t, &db, "orders", None).await;
    assert_eq!(
        db.count("orders").await,
        5,
        "key 6 in, key 1 out, uncompacted"
    );
    let mut updated = vec![json!({"kind": "+U", "values": order(2, "9.99", "UPDATED")})];
    updated.extend(rows("+I", [7]));
    t.commits(vec![
        write_only(updated),
        write_only(rows("-D", [6])),
        write_only(rows("-D", [7])),
    ]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    t.commits(vec![
        json!({"compact": "minor"}),
        json!({"compact": "full"}),
    ]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    cfg.assert_verified();
    // Back to the changelog (the same config file and checkpoint, rewritten): a start over.
    t.commits(vec![write_only(rows("+I", [8]))]);
    SyncConfig::builder(&t, &db).write_sharing(
        cfg.path.parent().unwrap(),
        "sync",
        "checkpoint.json",
    );
    let out = cfg.run_once(&[]);
    assert!(
        out.status.success() && stderr(&out).contains("source.freshness changed"),
        "{}",
        stderr(&out)
    );
    // As Paimon's streaming read sees it: key 8 waits at level 0 for the compaction job.
    let compacted = t.latest() - 1;
    assert_synced(&t, &db, "orders", Some(compacted)).await;
}

/// `source.freshness: commit` where level-0 records are not rows (partial-update, aggregation,
/// first-row) or Paimon itself reads above level 0 (deletion vectors): refused before anything
/// is written, naming the option and why.
#[tokio::test]
async fn freshness_commit_is_refused_where_level_0_is_not_what_a_reader_sees() {
    for (name, options, why) in [
        (
            "partial",
            json!({"bucket": "1", "changelog-producer": "lookup", "merge-engine": "partial-update"}),
            "partial rows",
        ),
        (
            "dv",
            json!({"bucket": "1", "changelog-producer": "lookup", "deletion-vectors.enabled": "true"}),
            "deletion-vectors.enabled = true",
        ),
    ] {
        let t = orders_table(options, false);
        t.commits(vec![json!({"rows": rows("+I", 1..=3), "writeOnly": true})]);
        let db = TestDb::new(&format!("freshness_refused_{name}")).await;
        db.exec(ORDERS_DDL).await;
        let out = SyncConfig::builder(&t, &db)
            .freshness("commit")
            .build()
            .run_once(&[]);
        let log = stderr(&out);
        assert!(!out.status.success(), "{name}: {log}");
        assert!(
            log.contains("source.freshness: commit") && log.contains(why),
            "{name}: {log}"
        );
        assert_eq!(db.count("orders").await, 0, "{name}: nothing written");
    }
}

/// `deletion-vectors.bitmap64 = true` (Paimon 1.1+): the 64-bit deletion-vector format, read by
/// the `paimon` 0.4.0 crate (its `DeletionVector::read_from_bytes`). The index file is checked to
/// hold that format, so the table can't quietly fall back to the 32-bit one.
#[tokio::test]
async fn deletion_vectors_in_the_64_bit_format_are_read_exactly() {
    for producer in ["lookup", "none"] {
        let t = orders_table(
            json!({
                "bucket": "2",
                "deletion-vectors.enabled": "true",
                "deletion-vectors.bitmap64": "true",
                "changelog-producer": producer,
            }),
            false,
        );
        t.commits(vec![json!({"rows": rows("+I", 1..=40)})]);
        let db = TestDb::new(&format!("dv_bitmap64_{producer}")).await;
        db.exec(ORDERS_DDL).await;
        let cfg = SyncConfig::builder(&t, &db).build();
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "orders", None).await;
        // Updates and deletes of rows above level 0: the default writer compacts them into
        // deletion vectors at each commit.
        let mut changes = rows("-D", 1..=8);
        changes.extend(rows("+U", 20..=30));
        t.commits(vec![json!({"rows": changes})]);
        t.commits(vec![json!({"rows": rows("-D", 25..=27)})]);
        assert!(
            bitmap64_index_files(&t) > 0,
            "{producer}: Paimon wrote 64-bit deletion vectors"
        );
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "orders", None).await;
        cfg.assert_verified();
        // The same snapshots as a full read (deletion vectors applied to the files they mask).
        let db = TestDb::new(&format!("dv_bitmap64_full_{producer}")).await;
        db.exec(ORDERS_DDL).await;
        SyncConfig::builder(&t, &db)
            .consumer_id("full")
            .build()
            .sync_once(&[]);
        assert_synced(&t, &db, "orders", None).await;
        assert_eq!(db.count("orders").await, 29);
    }
}

/// One snapshot holding two versions of a key in two files of one bucket (the writer's buffer
/// filled up mid-commit): an update in the first file, a delete or a second update in the
/// next. Every physical record is read with its sequence number and the newest wins, so the
/// delete is never lost (Paimon Java's streaming read keeps both, apache/paimon-rust#841).
#[tokio::test]
async fn two_versions_of_a_key_in_one_snapshot_end_as_the_newest() {
    for producer in ["none", "input"] {
        let t = orders_table(
            json!({
                "bucket": "1",
                "changelog-producer": producer,
                "write-buffer-size": "256 kb",
                "page-size": "4 kb",
                "write-buffer-spillable": "false",
            }),
            false,
        );
        let write_only = |rows: Vec<Json>| json!({"rows": rows, "writeOnly": true});
        t.commits(vec![write_only(rows("+I", 1..=100))]);
        let db = TestDb::new(&format!("two_versions_{producer}")).await;
        db.exec(ORDERS_DDL).await;
        let cfg = SyncConfig::builder(&t, &db).build();
        cfg.sync_once(&[]);
        let files_before = data_files(&t);
        let long = "B".repeat(60);
        let mut commit: Vec<Json> = (1..=6000)
            .map(|id| json!({"kind": "+U", "values": order(id, "2.00", &long)}))
            .collect();
        commit.extend(rows("-D", 1..=20));
        commit.extend((21..=30).map(|id| json!({"kind": "+U", "values": order(id, "3.00", "C")})));
        let s = t.commits(vec![write_only(commit)]);
        assert!(
            data_files(&t) >= files_before + 2,
            "{producer}: the commit wrote several files into the bucket"
        );
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "orders", Some(s)).await;
        assert_eq!(db.count("orders").await, 5980, "{producer}");
    }
}

/// The data files in `t`'s bucket 0.
fn data_files(t: &Table) -> usize {
    std::fs::read_dir(t.table_dir().join("bucket-0"))
        .map(|d| d.filter(|e| e.is_ok()).count())
        .unwrap_or(0)
}

/// The deletion-vector index files of `t` whose first vector is in the 64-bit format: a version
/// byte, then `i32` BE length and the magic number 1681511377 little-endian (Paimon's
/// `Bitmap64DeletionVector.MAGIC_NUMBER`).
fn bitmap64_index_files(t: &Table) -> usize {
    let Ok(entries) = std::fs::read_dir(t.table_dir().join("index")) else {
        return 0;
    };
    entries
        .filter_map(|e| std::fs::read(e.ok()?.path()).ok())
        .filter(|bytes| bytes.get(5..9) == Some(&1681511377u32.to_le_bytes()[..]))
        .count()
}

/// A deletion-vector table whose changes are its delta files (`changelog-producer` none or
/// input): Paimon's default writer compacts level 0 into deletion vectors at every commit, so
/// it is synced exactly, full read then changes. A snapshot that still holds level-0 files (a
/// write-only writer, its compaction job behind) can't be the full read's: refused naming the
/// bucket, nothing written, and synced once a compaction has run.
#[tokio::test]
async fn deletion_vectors_with_delta_changes_are_exact_once_level_0_is_compacted() {
    for producer in ["none", "input"] {
        let t = orders_table(
            json!({"bucket": "2", "deletion-vectors.enabled": "true", "changelog-producer": producer}),
            false,
        );
        t.commits(vec![json!({"rows": rows("+I", 1..=20), "writeOnly": true})]);
        let db = TestDb::new(&format!("dv_delta_{producer}")).await;
        db.exec(ORDERS_DDL).await;
        let cfg = SyncConfig::builder(&t, &db).build();
        let out = cfg.run_once(&[]);
        let log = stderr(&out);
        assert!(!out.status.success(), "{producer}: {log}");
        assert!(
            log.contains("holds files not compacted yet (level 0)"),
            "{producer}: {log}"
        );
        assert_eq!(
            db.count("orders").await,
            0,
            "{producer}: nothing was written"
        );
        t.commits(vec![json!({"compact": "minor"})]);
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "orders", None).await;
        let mut more = rows("-D", 1..=5);
        more.extend(rows("+I", 30..=35));
        t.commits(vec![
            json!({"rows": more}),
            json!({"rows": rows("+U", 10..=12)}),
        ]);
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "orders", None).await;
    }
}

/// Paimon places a key that comes into a partition in the partition's first bucket with room
/// (`dynamic-bucket.target-row-num`), so a key that leaves a partition and comes back within one
/// commit is deleted in one bucket and inserted in another, whose sequence numbers count apart:
/// the insert must win (it lost to the delete, and the key went missing from MySQL).
#[tokio::test]
async fn a_key_that_leaves_a_partition_and_comes_back_in_one_commit_is_kept() {
    let t = cross_partition_table(json!({"dynamic-bucket.target-row-num": "2"}));
    let db = TestDb::new("cross_partition_back").await;
    db.exec(ORDERS_BY_ID_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    let first: Vec<Json> = (1..=6)
        .map(|id| regional(id, "1.00", "NEW", "EU"))
        .collect();
    t.commits(vec![json!({"rows": first})]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    // EU's buckets hold {1, 2}, {3, 4}, {5, 6}. 1 and 5 leave; 5 comes back into bucket 0 (a
    // higher bucket's delete read after a lower one's insert), 1 into bucket 2 (the reverse),
    // 7 into a new bucket 3; 2 leaves and comes back twice.
    let commit = vec![
        regional(1, "2.00", "AWAY", "US"),
        regional(5, "2.00", "AWAY", "US"),
        regional(5, "3.00", "BACK", "EU"),
        regional(1, "3.00", "BACK", "EU"),
        regional(7, "2.00", "NEW", "EU"),
        regional(2, "2.00", "AWAY", "ASIA"),
        regional(2, "3.00", "BACK", "EU"),
        regional(2, "4.00", "AWAY", "US"),
        regional(2, "5.00", "BACK", "EU"),
    ];
    let s = t.commits(vec![json!({"rows": commit})]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", Some(s)).await;
    assert_eq!(db.count("orders").await, 7);

    // The same snapshots as changes, one flush of two records at a time: the insert flushed
    // before the other bucket's delete of the same key and partition must stay.
    for max_rows in [2, 1000] {
        let db = TestDb::new(&format!("cross_partition_back_{max_rows}")).await;
        db.exec(ORDERS_BY_ID_DDL).await;
        SyncConfig::builder(&t, &db)
            .from_snapshot(1)
            .max_rows(max_rows)
            .consumer_id(&format!("changes{max_rows}"))
            .build()
            .sync_once(&[]);
        assert_synced(&t, &db, "orders", None).await;
    }
    // Three guarded slots, each as stale as can be: a delete of snapshot 2 spares the row
    // another slot wrote in snapshot 2 where the key came back.
    let db = TestDb::new("cross_partition_back_slots").await;
    db.exec(ORDERS_BY_ID_DDL).await;
    let slots = SyncConfig::builder(&t, &db)
        .from_snapshot(1)
        .consumer_id("slots")
        .parallelism(3)
        .sequence_guard("pms_snapshot")
        .build();
    for slot in ["2", "1", "0"] {
        slots.sync_once(&["--slot", slot]);
    }
    assert_synced(&t, &db, "orders", None).await;
}

/// `INSERT OVERWRITE` of one partition: its dropped keys are deleted, its rewritten rows take
/// their new values, the other partitions are untouched; with one slot, with two, and through
/// the changes that follow it.
#[tokio::test]
async fn an_overwrite_of_a_partition_is_applied_exactly() {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), true);
    let eu: Vec<Json> = (1..=20)
        .map(|id| regional(id, "1.00", "NEW", "EU"))
        .collect();
    let us: Vec<Json> = (1..=10)
        .map(|id| regional(id, "2.00", "NEW", "US"))
        .collect();
    t.commits(vec![json!({"rows": eu}), json!({"rows": us})]);
    let db = TestDb::new("overwrite_partition").await;
    db.exec(ORDERS_PARTITIONED_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    cfg.sync_once(&[]);
    let rewritten: Vec<Json> = (5..=25)
        .map(|id| regional(id, "9.99", "REWRITTEN", "EU"))
        .collect();
    let overwrite = t.commits(vec![
        json!({"overwrite": rewritten, "partition": {"region": "EU"}}),
    ]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", Some(overwrite)).await;
    let after = t.commits(vec![
        json!({"rows": [regional(3, "3.00", "BACK", "EU"), regional(1, "5.00", "PAID", "US")]}),
    ]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", Some(after)).await;
    // Two slots, each reading every snapshot from the first as changes, the overwrite included.
    let db2 = TestDb::new("overwrite_partition_slots").await;
    db2.exec(ORDERS_PARTITIONED_DDL).await;
    let cfg2 = SyncConfig::builder(&t, &db2)
        .from_snapshot(1)
        .consumer_id("two")
        .parallelism(2)
        .build();
    for slot in ["0", "1"] {
        cfg2.sync_once(&["--slot", slot]);
    }
    assert_synced(&t, &db2, "orders", None).await;
}

/// `INSERT OVERWRITE` of a whole table keeps only what it wrote.
#[tokio::test]
async fn an_overwrite_of_the_table_deletes_what_it_dropped() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 50, "+I", 0)]);
    let db = TestDb::new("overwrite_table").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    cfg.sync_once(&[]);
    let kept = [
        ("+I", order(7, "7.00", "ONLY")),
        ("+I", order(70, "70.00", "NEW")),
    ];
    let rows: Vec<Json> = kept
        .iter()
        .map(|(k, v)| json!({"kind": k, "values": v}))
        .collect();
    t.commits(vec![json!({"overwrite": rows})]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    assert_eq!(db.count("orders").await, 2);
    // Exactly-once applies it too (each flush commits how far into the snapshot it is).
    let db2 = TestDb::new("overwrite_exactly_once").await;
    db2.exec(ORDERS_DDL).await;
    let cfg2 = SyncConfig::builder(&t, &db2)
        .from_snapshot(1)
        .delivery(Delivery::ExactlyOnce)
        .consumer_id("exactly")
        .build();
    cfg2.sync_once(&[]);
    assert_synced(&t, &db2, "orders", None).await;
    assert_eq!(db2.count("orders").await, 2);
}

/// An OVERWRITE whose kept keys outgrow `sink.maxBufferBytes` (3,000 keys of about 57 bytes
/// held against 64 KiB, in one bucket): its group is read again in hash partitions of the keys,
/// each held within the bound, and ends exact.
#[tokio::test]
async fn an_overwrite_larger_than_the_buffer_is_applied_in_bounded_parts() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 3000, "+I", 0)]);
    let db = TestDb::new("overwrite_bounded").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).max_buffer_bytes(65536).build();
    cfg.sync_once(&[]);
    let rows: Vec<Json> = (501..=3500)
        .map(|id| json!({"kind": "+I", "values": order(id, "8.00", "REWRITTEN")}))
        .collect();
    t.commits(vec![json!({"overwrite": rows})]);
    let out = cfg.run_once(&[]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(
        log.contains("reading it again in more hash partitions"),
        "the keys were held in parts: {log}"
    );
    assert_synced(&t, &db, "orders", None).await;
    assert_eq!(db.count("orders").await, 3000);
}

/// A bucket rescale (`ALTER TABLE … SET ('bucket' = '4')`, then `INSERT OVERWRITE` of the
/// table with its own rows): an options-only schema change, which even `schemaChanges: fail`
/// goes through, and an OVERWRITE snapshot; the sync goes on in the new buckets. With two
/// slots keys may change slot with their bucket, so the overwrite is refused, naming it.
#[tokio::test]
async fn a_bucket_rescale_keeps_the_sync_going() {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 40, "+I", 0)]);
    let db = TestDb::new("rescale").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    cfg.sync_once(&[]);
    let rescaled = t.commits(vec![json!({"rescale": 4})]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", Some(rescaled)).await;
    let after = t.commits(vec![
        generate(30, 20, "+U", 1),
        json!({"rows": [{"kind": "-D", "values": order(3, "1.00", "NEW")}]}),
    ]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", Some(after)).await;
    assert_eq!(db.count("orders").await, 48);
    let db2 = TestDb::new("rescale_slots").await;
    db2.exec(ORDERS_DDL).await;
    let two = SyncConfig::builder(&t, &db2)
        .from_snapshot(1)
        .consumer_id("two")
        .parallelism(2)
        .build();
    let out = two.run_once(&["--slot", "0"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(&format!("snapshot {rescaled} is an OVERWRITE commit")),
        "{}",
        stderr(&out)
    );
}

/// A slot whose buckets never change (3 slots, 2 buckets: slot 2 owns none) still follows the
/// latest snapshot in its checkpoint and its Paimon consumer, so it pins no old snapshot.
#[tokio::test]
async fn a_quiet_slot_follows_the_latest_snapshot() {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 40, "+I", 0)]);
    let db = TestDb::new("quiet_slot").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db)
        .consumer_id("quiet")
        .parallelism(3)
        .build();
    cfg.sync_once(&["--slot", "2"]);
    let latest = t.commits(vec![
        generate_step(1, 10, 3, "+U", 1),
        generate_step(2, 10, 3, "+U", 2),
    ]);
    cfg.sync_once(&["--slot", "2"]);
    let cp: Json =
        serde_json::from_slice(&std::fs::read(cfg.checkpoint_path(2, 3)).unwrap()).unwrap();
    assert_eq!(
        (cp["snapshotId"].as_i64(), cp["phase"].as_str()),
        (Some(latest), Some("incremental")),
        "{cp}"
    );
    let consumer =
        std::fs::read_to_string(t.table_dir().join("consumer/consumer-quiet-slot2")).unwrap();
    assert_eq!(
        serde_json::from_str::<Json>(&consumer).unwrap()["nextSnapshot"],
        latest
    );
    assert_eq!(db.count("orders").await, 0, "slot 2 owns no bucket");
}

/// `scanMode: latest` records where it starts, so a restart after a quiet spell reads the
/// snapshots committed in between instead of skipping them.
#[tokio::test]
async fn a_changes_only_start_is_checkpointed_before_any_change() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    let start = t.commits(vec![generate(1, 20, "+I", 0)]);
    let db = TestDb::new("latest_start").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db)
        .scan_mode(ScanMode::Latest)
        .build();
    cfg.sync_once(&[]);
    let cp: Json =
        serde_json::from_slice(&std::fs::read(cfg.checkpoint_path(0, 1)).unwrap()).unwrap();
    assert_eq!(cp["snapshotId"], start, "{cp}");
    t.commits(vec![generate(100, 5, "+I", 0)]);
    cfg.sync_once(&[]);
    assert_eq!(
        db.count("orders").await,
        5,
        "the change committed while it was down is read"
    );
}

/// After moving from 3 slots to 1, the consumers of the old slots stop pinning snapshots.
#[tokio::test]
async fn consumers_of_slots_that_no_longer_exist_are_removed() {
    let t = orders_table(json!({"bucket": "3", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 30, "+I", 0)]);
    let db = TestDb::new("stale_consumers").await;
    db.exec(ORDERS_DDL).await;
    let dir = tempfile::tempdir().unwrap();
    let three = SyncConfig::builder(&t, &db)
        .consumer_id("moving")
        .parallelism(3)
        .write_sharing(dir.path(), "three", "cp.json");
    for slot in ["0", "1", "2"] {
        three.sync_once(&["--slot", slot]);
    }
    let consumers = || t.consumer_files();
    assert_eq!(
        consumers(),
        [
            "consumer-moving-slot0",
            "consumer-moving-slot1",
            "consumer-moving-slot2"
        ]
    );
    // The same sync with one slot: a rescale from the three slots' checkpoint files.
    let one = SyncConfig::builder(&t, &db)
        .consumer_id("moving")
        .write_sharing(dir.path(), "one", "cp.json");
    t.commits(vec![generate_step(1, 9, 3, "-D", 0)]);
    one.sync_once(&[]);
    assert_eq!(consumers(), ["consumer-moving"]);
    assert_synced(&t, &db, "orders", None).await;
}

/// A merge engine whose changes are merged rows only with a full-row changelog: the full read,
/// then each snapshot's changes, each step equal to Paimon Java's read of that snapshot.
async fn merged_rows_scenario(engine: &str, commits: Vec<Vec<(&str, Json)>>) {
    let t = orders_table(
        json!({"bucket": "2", "merge-engine": engine, "changelog-producer": "lookup"}),
        false,
    );
    let db = TestDb::new(&format!("engine_{}", engine.replace('-', "_"))).await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    let mut commits = commits.into_iter();
    t.commit(&commits.next().expect("a first commit"));
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    for rows in commits {
        let s = t.commit(&rows);
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "orders", Some(s)).await;
    }
}

fn partial(id: i64, amount: Option<&str>, status: Option<&str>) -> (&'static str, Json) {
    ("+I", json!([id, amount, status, null]))
}

/// Partial updates set only their non-NULL columns; the lookup changelog carries merged rows.
#[tokio::test]
async fn partial_update_with_a_lookup_changelog_is_exact() {
    merged_rows_scenario(
        "partial-update",
        vec![
            vec![
                partial(1, Some("10.00"), None),
                partial(2, None, Some("NEW")),
            ],
            vec![
                partial(1, None, Some("PAID")),
                partial(3, Some("3.00"), Some("NEW")),
            ],
            vec![
                partial(2, Some("2.50"), None),
                partial(1, Some("11.00"), None),
            ],
        ],
    )
    .await;
}

/// First-row keeps the first row of a key: later duplicates never replace it.
#[tokio::test]
async fn first_row_with_a_lookup_changelog_is_exact() {
    merged_rows_scenario(
        "first-row",
        vec![
            vec![
                ("+I", order(1, "1.00", "FIRST")),
                ("+I", order(2, "2.00", "FIRST")),
            ],
            vec![
                ("+I", order(1, "9.00", "LATER")),
                ("+I", order(3, "3.00", "FIRST")),
            ],
            vec![
                ("+I", order(2, "9.00", "LATER")),
                ("+I", order(3, "9.00", "LATER")),
            ],
        ],
    )
    .await;
}

/// An aggregation table: `total` and `cnt` are sums, `note` keeps the last non-NULL value.
fn aggregation_table(producer: &str) -> Table {
    Table::create(json!({
        "columns": [
            {"name": "id", "type": "BIGINT NOT NULL"},
            {"name": "total", "type": "BIGINT"},
            {"name": "cnt", "type": "BIGINT"},
            {"name": "note", "type": "STRING"},
        ],
        "primaryKeys": ["id"],
        "options": {
            "bucket": "2",
            "merge-engine": "aggregation",
            "fields.total.aggregate-function": "sum",
            "fields.cnt.aggregate-function": "sum",
            "changelog-producer": producer,
        },
    }))
}

const TOTALS_DDL: &str =
    "CREATE TABLE totals (id BIGINT NOT NULL PRIMARY KEY, total BIGINT, cnt BIGINT, \
     note VARCHAR(64)) DEFAULT CHARSET = utf8mb4";

/// Commits of contributions to 25 keys (a few retracted), with minor and full compactions in
/// between, so that a key's records sit in several levels; the same on every run.
fn contributions(commits: usize, seed: u64) -> Vec<Json> {
    let mut state = seed;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let mut out = Vec::new();
    for c in 0..commits {
        let rows: Vec<Json> = (0..20 + next(30))
            .map(|i| {
                let id = 1 + next(25) as i64;
                let kind = if i > 0 && next(10) == 0 { "-U" } else { "+I" };
                json!({"kind": kind, "values": [id, 1 + next(50), 1, format!("c{c}")]})
            })
            .collect();
        out.push(json!({"rows": rows}));
        match next(4) {
            0 => out.push(json!({"compact": "minor"})),
            1 => out.push(json!({"compact": "full"})),
            _ => {}
        }
    }
    out
}

/// Aggregation with the lookup producer: a full read after many compactions counts every
/// contribution once (Paimon's lookup merge: a key's newest record above level 0 already
/// holds the aggregate), then each snapshot's changes follow; with one slot, three, and a crash.
#[tokio::test]
async fn aggregation_with_a_lookup_changelog_is_exact() {
    let t = aggregation_table("lookup");
    t.commits(contributions(12, 13));
    let db = TestDb::new("aggregation_lookup").await;
    db.exec(TOTALS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).target_table("totals").build();
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "totals", None).await;
    for seed in [14, 18] {
        let s = t.commits(contributions(3, seed));
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "totals", Some(s)).await;
    }
    // verify reduces each bucket read as stored holding at most 3 keys at once (the buckets
    // are read again in hash partitions): equal, then one total changed is one difference.
    let out = cfg.verify_with(&["--rows-per-pass", "3"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("read again in hash partitions"),
        "{}",
        stderr(&out)
    );
    db.exec("UPDATE totals SET total = total + 1 ORDER BY id LIMIT 1")
        .await;
    let report = divergent(&cfg, &["--rows-per-pass", "3"]);
    assert!(
        report.contains("0 missing from MySQL, 0 extra in MySQL, 1 different"),
        "{report}"
    );
    // Three slots, each a full read of its buckets, one crashing in the middle of it.
    let db = TestDb::new("aggregation_lookup_slots").await;
    db.exec(TOTALS_DDL).await;
    let slots = SyncConfig::builder(&t, &db)
        .target_table("totals")
        .max_rows(4)
        .consumer_id("slots")
        .parallelism(3)
        .build();
    let crashed = slots
        .command(&["--once", "--slot", "1"])
        .env("PMS_FAILPOINT", "before-transaction@3")
        .output()
        .unwrap();
    assert!(!crashed.status.success(), "{}", stderr(&crashed));
    for slot in ["0", "1", "2"] {
        slots.sync_once(&["--slot", slot]);
    }
    assert_synced(&t, &db, "totals", None).await;
}

/// Aggregation with the full-compaction producer: MySQL follows the highest level, so it
/// equals Paimon's read after each full compaction.
#[tokio::test]
async fn aggregation_with_a_full_compaction_changelog_is_exact() {
    let t = aggregation_table("full-compaction");
    let mut commits = contributions(8, 5);
    commits.push(json!({"compact": "full"}));
    t.commits(commits);
    let db = TestDb::new("aggregation_full_compaction").await;
    db.exec(TOTALS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).target_table("totals").build();
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "totals", None).await;
    let mut commits = contributions(3, 6);
    commits.push(json!({"compact": "full"}));
    let s = t.commits(commits);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "totals", Some(s)).await;
}

/// `sequence.field = updated_at` with the lookup producer: a record written later with an
/// older `updated_at` (an update or a delete) never wins, through the full read and the changes.
/// `sequence.field` with changelog-producer none or input: the changes come in write order,
/// and which record of a key shows depends on what compaction kept (a delete keeps a later
/// insert with a smaller value out until a full compaction drops it), so the keys each snapshot
/// touched are read again from Paimon's merge. Late updates, a late delete that loses, a late
/// insert after a winning delete (level 0 kept by a write-only writer, then merged by a full
/// compaction), after each snapshot; one slot and three; and exactly-once.
#[tokio::test]
async fn sequence_field_with_delta_changes_reads_touched_keys_from_paimons_merge() {
    let at = |kind: &str, id: i64, status: &str, second: u32| {
        json!({"kind": kind, "values": [
            id,
            format!("{id}.00"),
            status,
            format!("2024-01-01 00:00:{second:02}.000")
        ]})
    };
    for producer in ["none", "input"] {
        for slots in [1u32, 3] {
            let name = format!("sequence_{producer}_{slots}");
            let t = orders_table(
                json!({"bucket": "3", "sequence.field": "updated_at", "changelog-producer": producer}),
                false,
            );
            t.commits(vec![json!({"rows": [
                at("+I", 1, "FIRST", 10),
                at("+I", 2, "FIRST", 10),
                at("+I", 3, "FIRST", 10),
                at("+I", 4, "FIRST", 10),
            ]})]);
            t.commits(vec![
                json!({"rows": [at("+I", 1, "OLDER", 5), at("+I", 2, "NEWER", 20)]}),
            ]);
            let db = TestDb::new(&name).await;
            db.exec(ORDERS_DDL).await;
            let cfg = SyncConfig::builder(&t, &db).parallelism(slots).build();
            let sync_slots = || sync_each_slot(&cfg, slots);
            sync_slots();
            assert_synced(&t, &db, "orders", None).await;
            let steps = vec![
                // A late insert and a late delete lose; an update wins.
                json!({"rows": [at("+I", 1, "LATE", 8), at("-D", 2, "LATE", 15), at("+U", 3, "NEWER", 30)]}),
                // A delete that wins, then inserts written after it with smaller values, kept
                // in level 0 beside it: the delete keeps them out.
                json!({"rows": [at("-D", 3, "GONE", 40), at("-D", 4, "GONE", 40)], "writeOnly": true}),
                json!({"rows": [at("+I", 3, "AFTER", 35)], "writeOnly": true}),
                // A full compaction drops the deletes; an insert with a smaller value is then seen.
                json!({"compact": "full"}),
                json!({"rows": [at("+I", 4, "AGAIN", 33), at("+I", 5, "NEW", 1)]}),
                json!({"rows": [at("-D", 5, "GONE", 2), at("+U", 1, "NEWEST", 50)], "writeOnly": true}),
            ];
            for step in steps {
                let s = t.commits(vec![step]);
                sync_slots();
                assert_synced(&t, &db, "orders", Some(s)).await;
            }
            cfg.assert_verified();
            // What the cases come to in Paimon's read, so that the comparisons above can't all
            // pass on a table where nothing happened.
            let ids = db.query_strings("SELECT id FROM orders ORDER BY id").await;
            let ids: Vec<&str> = ids.iter().filter_map(|r| r[0].as_deref()).collect();
            assert_eq!(ids, ["1", "2", "4"], "{name}");
        }
    }
    // Exactly-once too (each flush commits how far into the snapshot it is; crashes inside
    // one: `delivery::snapshots_applied_in_passes_are_exactly_once_across_crashes`).
    let t = orders_table(
        json!({"bucket": "1", "sequence.field": "updated_at"}),
        false,
    );
    t.commits(vec![
        json!({"rows": [at("+I", 1, "FIRST", 10), at("+I", 2, "FIRST", 10)]}),
    ]);
    let db = TestDb::new("sequence_exactly_once").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db)
        .delivery(Delivery::ExactlyOnce)
        .build();
    cfg.sync_once(&[]);
    let s = t.commits(vec![
        json!({"rows": [at("+I", 1, "LATE", 5), at("-D", 2, "GONE", 20)]}),
    ]);
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", Some(s)).await;
    assert_eq!(
        db.query_strings("SELECT status FROM orders").await,
        [vec![Some("FIRST".to_string())]]
    );
}

#[tokio::test]
async fn sequence_field_with_a_lookup_changelog_is_exact() {
    let t = orders_table(
        json!({"bucket": "2", "sequence.field": "updated_at", "changelog-producer": "lookup"}),
        false,
    );
    let at = |id: i64, status: &str, second: u32| {
        json!([
            id,
            format!("{id}.00"),
            status,
            format!("2024-01-01 00:00:{second:02}.000")
        ])
    };
    t.commit(&[
        ("+I", at(1, "FIRST", 10)),
        ("+I", at(2, "FIRST", 10)),
        ("+I", at(3, "FIRST", 10)),
    ]);
    t.commit(&[("+I", at(1, "OLDER", 5)), ("+I", at(2, "NEWER", 20))]);
    let db = TestDb::new("sequence_field").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    cfg.sync_once(&[]);
    assert_synced(&t, &db, "orders", None).await;
    for rows in [
        vec![
            ("+I", at(1, "LATE", 8)),
            ("-D", at(2, "NEWER", 15)),
            ("+I", at(3, "NEWER", 30)),
        ],
        vec![
            ("-D", at(3, "GONE", 40)),
            ("+I", at(2, "NEWEST", 25)),
            ("+I", at(1, "NEWEST", 50)),
        ],
    ] {
        let s = t.commit(&rows);
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "orders", Some(s)).await;
    }
}

/// Postpone-bucket tables (`bucket = -2`, Paimon 1.0+), written as Paimon writes them (rows in
/// each partition's `bucket-postpone` directory, unsorted, a key twice in one commit) and given
/// buckets by the compaction Paimon's Flink compact action runs (`assignBuckets`: one COMPACT
/// snapshot). No reader sees a row before that compaction, so MySQL follows Paimon's batch read:
/// rows arrive when they get buckets, the newest write of a key winning, a key written and
/// deleted before it never arriving. Producers none (one slot: its rows have no bucket until
/// then), input and lookup (one slot and three); partitions with 2 and 3 buckets.
#[tokio::test]
async fn postpone_bucket_tables_are_read_when_a_compaction_gives_rows_buckets() {
    let change = |kind: &str, id: i64, status: &str| {
        let region = REGIONS[(id % 2) as usize];
        regional_change(kind, id, "1.00", status, region)
    };
    for producer in ["none", "input", "lookup"] {
        let slot_counts: &[u32] = if producer == "none" { &[1] } else { &[1, 3] };
        for &slots in slot_counts {
            let name = format!("postpone_{producer}_{slots}");
            let t = orders_table(
                json!({"bucket": "-2", "changelog-producer": producer}),
                true,
            );
            let mut first: Vec<Json> = (1..=12).map(|id| change("+I", id, "NEW")).collect();
            first.push(change("+I", 3, "AGAIN"));
            t.commits(vec![json!({"rows": first})]);
            let db = TestDb::new(&name).await;
            db.exec(ORDERS_PARTITIONED_DDL).await;
            let cfg = SyncConfig::builder(&t, &db).parallelism(slots).build();
            let sync_slots = || sync_each_slot(&cfg, slots);
            sync_slots();
            assert_eq!(
                db.count("orders").await,
                0,
                "{name}: no row has a bucket yet"
            );
            assert_synced(&t, &db, "orders", None).await;
            t.commits(vec![json!({"assignBuckets": 2})]);
            sync_slots();
            assert_synced(&t, &db, "orders", None).await;
            // Updates, deletes, a key deleted and written again, a key written and deleted
            // before its compaction, and a new partition (ASIA) that gets 3 buckets.
            t.commits(vec![json!({"rows": [
                change("+U", 1, "UPDATED"),
                change("-D", 4, "NEW"),
                change("-D", 5, "NEW"),
                change("+I", 20, "PENDING"),
                regional_change("+I", 30, "3.00", "NEW", "ASIA"),
                regional_change("+I", 31, "3.00", "NEW", "ASIA"),
            ]})]);
            t.commits(vec![json!({"rows": [
                change("+I", 5, "BACK"),
                change("-D", 20, "PENDING"),
                change("+U", 1, "NEWEST"),
            ]})]);
            sync_slots();
            assert_eq!(
                db.count("orders").await,
                12,
                "{name}: the pending writes are not read yet"
            );
            assert_synced(&t, &db, "orders", None).await;
            t.commits(vec![json!({"assignBuckets": 3})]);
            sync_slots();
            assert_synced(&t, &db, "orders", None).await;
            assert_eq!(db.count("orders").await, 13, "{name}");
            cfg.assert_verified();
            if slots == 1 {
                // The same table read in full from its latest snapshot.
                let full = TestDb::new(&format!("{name}_full")).await;
                full.exec(ORDERS_PARTITIONED_DDL).await;
                SyncConfig::builder(&t, &full)
                    .consumer_id("full")
                    .build()
                    .sync_once(&[]);
                assert_synced(&t, &full, "orders", None).await;
            }
        }
    }
    // Without a producer, several slots can't split rows that have no bucket yet.
    let t = orders_table(json!({"bucket": "-2"}), true);
    t.commits(vec![
        json!({"rows": [change("+I", 1, "NEW")]}),
        json!({"assignBuckets": 2}),
    ]);
    let db = TestDb::new("postpone_none_3").await;
    db.exec(ORDERS_PARTITIONED_DDL).await;
    let out = SyncConfig::builder(&t, &db)
        .parallelism(3)
        .build()
        .run_once(&["--slot", "0"]);
    let log = stderr(&out);
    assert!(!out.status.success(), "{log}");
    assert!(
        log.contains("read by one slot only") && log.contains("nothing is written"),
        "{log}"
    );
    assert_eq!(db.count("orders").await, 0);
}

/// A postpone table's writers number their rows' `_SEQUENCE_NUMBER` from 0 each (Paimon Java's
/// postpone writer and pypaimon alike), so a later commit's version of a key can carry a lower
/// number than an earlier one's. The compaction replays the files in creation order into a
/// fixed-bucket writer, so the later write wins whatever its number: the worker must read them
/// in that order too, not by sequence number.
#[tokio::test]
async fn postpone_replay_follows_the_write_order_not_the_sequence_numbers() {
    use pms_tests::fixtures::orders_create;
    use pms_tests::paimon::Writer;
    for writer in [Writer::Java, Writer::PyPaimon] {
        let name = format!("postpone_order_{writer:?}").to_lowercase();
        let t = Table::create_with(writer, orders_create(json!({"bucket": "-2"}), true));
        let eu = |id: i64, status: &str| regional_change("+I", id, "1.00", status, "EU");
        // Key 1 gets sequence number 10 in the first commit, 0 in the second, 1 in the third.
        let mut first: Vec<Json> = (1..=10).map(|id| eu(id, "FIRST")).collect();
        first.push(eu(1, "FIRST-AGAIN"));
        t.commits(vec![json!({"rows": first})]);
        t.commits(vec![json!({"rows": [eu(1, "SECOND"), eu(2, "SECOND")]})]);
        t.commits_by(Writer::Java, vec![json!({"assignBuckets": 2})]);
        let db = TestDb::new(&name).await;
        db.exec(ORDERS_PARTITIONED_DDL).await;
        let cfg = SyncConfig::builder(&t, &db).build();
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "orders", None).await;
        // After the buckets exist: pending writes numbered from 0 again, replayed after them.
        t.commits(vec![
            json!({"rows": (1..=5).map(|id| eu(id, "THIRD")).collect::<Vec<_>>()}),
        ]);
        t.commits(vec![json!({"rows": [eu(4, "FOURTH")]})]);
        t.commits_by(Writer::Java, vec![json!({"assignBuckets": 2})]);
        cfg.sync_once(&[]);
        assert_synced(&t, &db, "orders", None).await;
        for (id, want) in [(1, "THIRD"), (4, "FOURTH")] {
            let got = db
                .query_strings(&format!("SELECT status FROM orders WHERE id = {id}"))
                .await;
            assert_eq!(got, vec![vec![Some(want.to_string())]], "{name}: key {id}");
        }
        cfg.assert_verified();
    }
}

/// Deletes of keys `ids` (the values don't matter to the engines that remove or ignore them).
fn deletes(ids: &[i64]) -> Json {
    json!({"rows": rows("-D", ids.iter().copied())})
}

/// A phase per element, each run with `--once` and compared with Paimon Java's read of its last
/// snapshot; a full-compaction table's phases end with a full compaction (MySQL follows it).
async fn exact_after_each_phase(name: &str, options: Json, phases: Vec<Vec<Json>>) {
    let t = orders_table(options.clone(), false);
    let db = TestDb::new(name).await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db).build();
    for (i, mut phase) in phases.into_iter().enumerate() {
        if options["changelog-producer"] == "full-compaction" {
            phase.push(json!({"compact": "full"}));
        }
        let s = t.commits(phase);
        let out = cfg.run_once(&[]);
        assert!(out.status.success(), "{name}, phase {i}: {}", stderr(&out));
        assert_synced(&t, &db, "orders", Some(s)).await;
    }
}

/// The delete options of each merge engine, as Paimon 1.3.1 documents them and as they were
/// synced before the option table refused them (issue 44, item 0): each exact with every
/// producer the engine is read with, against Paimon Java's read.
#[tokio::test]
async fn partial_update_with_remove_record_on_delete_is_exact() {
    let partial = |ids: std::ops::RangeInclusive<i64>, status: &str| {
        let rows: Vec<Json> = ids
            .map(|id| json!({"kind": "+I", "values": [id, null, status, null]}))
            .collect();
        json!({ "rows": rows })
    };
    for producer in ["lookup", "full-compaction"] {
        exact_after_each_phase(
            &format!("partial_remove_{}", producer.replace('-', "_")),
            json!({"bucket": "2", "merge-engine": "partial-update", "changelog-producer": producer,
                   "partial-update.remove-record-on-delete": "true"}),
            vec![
                vec![generate(1, 20, "+I", 0), partial(5..=10, "PAID")],
                vec![
                    deletes(&[2, 7]),
                    partial(2..=2, "AGAIN"),
                    json!({"compact": "minor"}),
                    deletes(&[3, 40]),
                    partial(8..=9, "SHIPPED"),
                ],
            ],
        )
        .await;
    }
}

#[tokio::test]
async fn aggregation_with_remove_record_on_delete_is_exact() {
    for producer in ["lookup", "full-compaction"] {
        exact_after_each_phase(
            &format!("aggregation_remove_{}", producer.replace('-', "_")),
            json!({"bucket": "2", "merge-engine": "aggregation", "changelog-producer": producer,
                   "fields.amount.aggregate-function": "sum",
                   "aggregation.remove-record-on-delete": "true"}),
            vec![
                vec![generate(1, 20, "+I", 0), generate(1, 10, "+I", 1)],
                vec![
                    deletes(&[2, 7]),
                    generate(2, 1, "+I", 3),
                    json!({"compact": "minor"}),
                    deletes(&[3]),
                    generate(3, 4, "+I", 2),
                ],
            ],
        )
        .await;
    }
}

/// First-row is read through its lookup changelog (with `none` its changes hold duplicate rows:
/// refused at start, with or without the option), under either spelling of the option.
#[tokio::test]
async fn first_row_with_ignore_delete_is_exact() {
    for (producer, key) in [
        ("lookup", "ignore-delete"),
        ("lookup", "first-row.ignore-delete"),
    ] {
        exact_after_each_phase(
            &format!("first_row_{}", key.replace(['-', '.'], "_")),
            json!({"bucket": "2", "merge-engine": "first-row", "changelog-producer": producer, key: "true"}),
            vec![
                vec![generate(1, 20, "+I", 0), generate(10, 20, "+I", 1)],
                vec![
                    deletes(&[2, 11]),
                    generate(2, 1, "+I", 2),
                    json!({"compact": "minor"}),
                    generate(40, 5, "+I", 2),
                ],
            ],
        )
        .await;
    }
}

#[tokio::test]
async fn deduplicate_with_ignore_delete_is_exact() {
    for producer in ["none", "input", "lookup"] {
        exact_after_each_phase(
            &format!("dedup_ignore_delete_{producer}"),
            json!({"bucket": "2", "changelog-producer": producer, "ignore-delete": "true"}),
            vec![
                vec![generate(1, 20, "+I", 0), deletes(&[4, 5])],
                vec![
                    generate(5, 10, "+U", 1),
                    deletes(&[6, 7, 8]),
                    json!({"compact": "full"}),
                    deletes(&[9]),
                ],
            ],
        )
        .await;
    }
}

/// `data-file.external-paths` (Paimon 1.1+): the writer puts data and changelog files outside
/// the table's directory, round-robin over two roots, and names each by its absolute path in
/// the manifests, which the reader follows. Exact with the producers that read deltas,
/// changelogs, compactions and deletion vectors from there; the files really are outside.
#[tokio::test]
async fn data_files_in_external_paths_are_read_exactly() {
    for producer in ["none", "input", "lookup"] {
        let roots = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
        let paths: Vec<String> = roots
            .iter()
            .map(|r| format!("file://{}", r.path().display()))
            .collect();
        let mut options = json!({"bucket": "2", "changelog-producer": producer,
            "data-file.external-paths": paths.join(","),
            "data-file.external-paths.strategy": "round-robin"});
        if producer == "none" {
            options["deletion-vectors.enabled"] = json!("true");
        }
        exact_after_each_phase(
            &format!("external_paths_{producer}"),
            options,
            vec![
                vec![generate(1, 30, "+I", 0), deletes(&[3, 4])],
                vec![
                    generate_step(1, 10, 3, "+U", 1),
                    json!({"compact": "full"}),
                    deletes(&[10, 11]),
                    generate(40, 5, "+I", 0),
                ],
            ],
        )
        .await;
        let files_outside: usize = roots.iter().map(|r| walkdir_count(r.path())).sum();
        assert!(
            files_outside >= 4,
            "{producer}: {files_outside} data files outside the table"
        );
    }
}

/// Files under `dir`, at any depth.
fn walkdir_count(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    let p = e.path();
                    if p.is_dir() {
                        walkdir_count(&p)
                    } else {
                        1
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

/// Partial-update with a sequence group (`fields.updated_at.sequence-group = amount,status`):
/// the group's fields take a record's values only when its `updated_at` is not older than the
/// row's. A lookup or full-compaction changelog carries the merged rows, and the full read is
/// Paimon's merge, so late records of the group change nothing in MySQL either.
#[tokio::test]
async fn partial_update_with_a_sequence_group_is_exact() {
    let at = |id: i64, amount: &str, status: &str, second: u32| json!({"kind": "+I", "values": [id, amount, status, format!("2024-01-01 00:00:{second:02}.000")]});
    for producer in ["lookup", "full-compaction"] {
        exact_after_each_phase(
            &format!("sequence_group_{}", producer.replace('-', "_")),
            json!({"bucket": "2", "merge-engine": "partial-update", "changelog-producer": producer,
                   "fields.updated_at.sequence-group": "amount,status"}),
            vec![
                vec![json!({"rows": [at(1, "1.00", "NEW", 10), at(2, "2.00", "NEW", 10), at(3, "3.00", "NEW", 10)]})],
                vec![
                    json!({"rows": [at(1, "9.00", "LATE", 5), at(2, "4.00", "NEWER", 20)]}),
                    json!({"rows": [at(3, "5.00", "NEWER", 30), at(3, "6.00", "LATE", 25), at(4, "7.00", "NEW", 1)]}),
                ],
            ],
        )
        .await;
    }
}
