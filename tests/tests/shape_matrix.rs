//! Every table shape the worker syncs exactly, each run three ways against Paimon Java's read:
//! one slot with `--once` after each phase (a full read, then changes); three slots from the
//! start, one of them crashing at a failpoint first; and one continuous worker followed to the
//! latest snapshot, then stopped. The cells of the README's shape matrix that say "exact".

mod common;

use std::time::{Duration, Instant};

use common::*;
use pms_tests::mysql::TestDb;
use pms_tests::paimon::Table;
use serde_json::{json, Value as Json};

/// One shape: its table, its MySQL table, and two phases of commits.
struct Shape {
    name: &'static str,
    table: fn() -> Table,
    ddl: &'static str,
    phases: [Vec<Json>; 2],
    /// Several slots need `sink.sequenceGuard` (cross-partition updates).
    guard: bool,
}

fn orders(options: Json) -> Table {
    orders_table(options, false)
}

/// Two phases of commits of the `orders` shape: inserts, then changes of some of them (rows of
/// kind `change`: `+U`, or `+I` for engines that merge inserts), the deletes of phase 2, and
/// minor and full compactions in between.
fn phases(change: &str, deletes: &[i64]) -> [Vec<Json>; 2] {
    let mut second = vec![generate(50, 30, change, 2)];
    if !deletes.is_empty() {
        let rows: Vec<Json> = deletes
            .iter()
            .map(|&id| json!({"kind": "-D", "values": order(id, "1.00", "NEW")}))
            .collect();
        second.push(json!({"rows": rows}));
    }
    second.extend([
        generate(100, 10, "+I", 3),
        json!({"compact": "minor"}),
        generate(1, 5, change, 4),
        json!({"compact": "full"}),
    ]);
    [
        vec![
            generate(1, 60, "+I", 0),
            generate(20, 20, change, 1),
            json!({"compact": "full"}),
        ],
        second,
    ]
}

/// Inserts, updates, deletes and compactions.
fn churn() -> [Vec<Json>; 2] {
    phases("+U", &[3, 4, 55])
}

/// No deletes (partial-update refuses them by default).
fn upserts() -> [Vec<Json>; 2] {
    phases("+U", &[])
}

/// Postpone-bucket writes, each phase ending with the compaction that gives them buckets
/// (with a key written twice, and deleted, while pending).
fn postponed() -> [Vec<Json>; 2] {
    let deletes: Vec<Json> = [3, 4, 55]
        .iter()
        .map(|&id| json!({"kind": "-D", "values": order(id, "1.00", "NEW")}))
        .collect();
    let assign = || json!({"assignBuckets": 2});
    [
        vec![
            generate(1, 60, "+I", 0),
            generate(20, 20, "+U", 1),
            assign(),
        ],
        vec![
            generate(50, 30, "+U", 2),
            json!({"rows": deletes}),
            generate(100, 10, "+I", 3),
            assign(),
            generate(1, 5, "+U", 4),
            assign(),
        ],
    ]
}

/// Only inserts (an aggregation sums them; first-row keeps the first).
fn inserts() -> [Vec<Json>; 2] {
    phases("+I", &[])
}

fn regional(kind: &str, id: i64, status: &str, region: &str) -> Json {
    let mut row = order(id, &format!("{id}.50"), status);
    row.as_array_mut().unwrap().push(json!(region));
    json!({"kind": kind, "values": row})
}

/// Keys that move between regions, are deleted, and come back.
fn moves() -> [Vec<Json>; 2] {
    let region = |id: i64, shift: i64| ["EU", "US", "ASIA"][((id + shift) % 3) as usize];
    let commit = |rows: Vec<Json>| json!({"rows": rows});
    [
        vec![
            commit(
                (1..=60)
                    .map(|id| regional("+I", id, "NEW", region(id, 0)))
                    .collect(),
            ),
            commit(
                (1..=20)
                    .map(|id| regional("+I", id, "MOVED", region(id, 1)))
                    .collect(),
            ),
        ],
        vec![
            commit(
                (10..=30)
                    .map(|id| regional("+I", id, "AGAIN", region(id, 2)))
                    .collect(),
            ),
            commit(vec![
                regional("-D", 5, "MOVED", region(5, 1)),
                regional("-D", 40, "NEW", region(40, 0)),
            ]),
            commit(
                (1..=8)
                    .map(|id| regional("+I", id, "BACK", region(id, 0)))
                    .collect(),
            ),
        ],
    ]
}

fn cross_partition() -> Table {
    Table::create(json!({
        "columns": [
            {"name": "id", "type": "BIGINT NOT NULL"},
            {"name": "amount", "type": "DECIMAL(10, 2)"},
            {"name": "status", "type": "STRING"},
            {"name": "updated_at", "type": "TIMESTAMP(3)"},
            {"name": "region", "type": "STRING NOT NULL"},
        ],
        "primaryKeys": ["id"],
        "partitionKeys": ["region"],
        "options": {},
    }))
}

const ORDERS_GUARDED_DDL: &str = "CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, amount DECIMAL(10,2), \
     status VARCHAR(64), updated_at DATETIME(3), region VARCHAR(16) NULL, pms_snapshot BIGINT NULL) \
     DEFAULT CHARSET = utf8mb4";

fn shapes() -> Vec<Shape> {
    let shape = |name, table, phases| Shape {
        name,
        table,
        ddl: ORDERS_DDL,
        phases,
        guard: false,
    };
    vec![
        shape(
            "fixed_input",
            || orders(json!({"bucket": "2", "changelog-producer": "input"})),
            churn(),
        ),
        shape(
            "fixed_lookup",
            || orders(json!({"bucket": "2", "changelog-producer": "lookup"})),
            churn(),
        ),
        shape(
            "fixed_full_compaction",
            || orders(json!({"bucket": "2", "changelog-producer": "full-compaction"})),
            churn(),
        ),
        shape(
            "dynamic_bucket",
            || orders(json!({"bucket": "-1", "changelog-producer": "input"})),
            churn(),
        ),
        shape(
            "deletion_vectors_lookup",
            || {
                orders(
                    json!({"bucket": "2", "changelog-producer": "lookup", "deletion-vectors.enabled": "true"}),
                )
            },
            churn(),
        ),
        shape(
            "partial_update_lookup",
            || {
                orders(
                    json!({"bucket": "2", "merge-engine": "partial-update", "changelog-producer": "lookup"}),
                )
            },
            upserts(),
        ),
        shape(
            "first_row_lookup",
            || {
                orders(
                    json!({"bucket": "2", "merge-engine": "first-row", "changelog-producer": "lookup"}),
                )
            },
            inserts(),
        ),
        shape(
            "aggregation_lookup",
            || {
                orders(
                    json!({"bucket": "2", "merge-engine": "aggregation", "changelog-producer": "lookup",
                              "fields.amount.aggregate-function": "sum"}),
                )
            },
            inserts(),
        ),
        shape(
            "sequence_field_lookup",
            || {
                orders(
                    json!({"bucket": "2", "sequence.field": "updated_at", "changelog-producer": "lookup"}),
                )
            },
            churn(),
        ),
        shape(
            "sequence_field_delta",
            || orders(json!({"bucket": "2", "sequence.field": "updated_at"})),
            churn(),
        ),
        shape(
            "postpone_input",
            || orders(json!({"bucket": "-2", "changelog-producer": "input"})),
            postponed(),
        ),
        Shape {
            name: "cross_partition",
            table: cross_partition,
            ddl: ORDERS_GUARDED_DDL,
            phases: moves(),
            guard: true,
        },
    ]
}

async fn target(shape: &Shape, how: &str) -> TestDb {
    let db = TestDb::new(&format!("matrix_{}_{how}", shape.name)).await;
    db.exec(shape.ddl).await;
    db
}

fn builder(
    shape: &Shape,
    t: &Table,
    db: &TestDb,
    consumer: &str,
) -> pms_tests::config::SyncConfigBuilder {
    let b = SyncConfig::builder(t, db).consumer_id(consumer);
    if shape.guard {
        b.sequence_guard("pms_snapshot")
    } else {
        b
    }
}

/// Waits until a continuous single-slot worker has checkpointed the latest snapshot.
async fn wait_caught_up(cfg: &SyncConfig, t: &Table, what: &str) {
    let latest = t.latest();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let cp: Option<Json> = std::fs::read(cfg.checkpoint_path(0, 1))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        let done = cp.as_ref().is_some_and(|cp| {
            cp["phase"] == "incremental"
                && cp["snapshotId"].as_i64() >= Some(latest)
                && cp.get("position").is_none()
        });
        if done {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not caught up with snapshot {latest}: {cp:?}\nthe worker's log ends with:\n{}",
            log_tail(&cfg.log(), 40)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn log_tail(log: &str, lines: usize) -> String {
    let all: Vec<&str> = log.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

async fn run_shape(shape: Shape, crash_at: u32) {
    let t = (shape.table)();
    let name = shape.name;
    t.commits(shape.phases[0].clone());
    // One slot, --once after each phase: a full read, then the changes.
    let once_db = target(&shape, "once").await;
    let once = builder(&shape, &t, &once_db, "once").build();
    once.sync_once(&[]);
    assert_synced(&t, &once_db, "orders", None).await;
    // A continuous worker, started between the phases.
    let live_db = target(&shape, "live").await;
    let live = builder(&shape, &t, &live_db, "live")
        .checkpoint_interval(Duration::ZERO)
        .build();
    let mut child = live.spawn(&[]);
    let end = t.commits(shape.phases[1].clone());
    once.sync_once(&[]);
    assert_synced(&t, &once_db, "orders", Some(end)).await;
    wait_caught_up(&live, &t, name).await;
    assert!(
        stop_with_sigterm(&mut child).await.success(),
        "{name}: a stop exits 0"
    );
    assert_synced(&t, &live_db, "orders", Some(end)).await;
    // Three slots from the start, slot 0 crashing at its `crash_at`-th transaction first.
    let slots_db = target(&shape, "slots").await;
    let slots = builder(&shape, &t, &slots_db, "slots")
        .max_rows(5)
        .parallelism(3)
        .build();
    let crashed = slots
        .command(&["--once", "--slot", "0"])
        .env("PMS_FAILPOINT", format!("before-transaction@{crash_at}"))
        .output()
        .unwrap();
    assert!(
        !crashed.status.success(),
        "{name}: the failpoint crashed slot 0: {}",
        stderr(&crashed)
    );
    for slot in ["2", "1", "0"] {
        slots.sync_once(&["--slot", slot]);
    }
    assert_synced(&t, &slots_db, "orders", Some(end)).await;
}

/// Runs the shapes whose index is `part` modulo 2, so the matrix spreads over two test threads.
async fn run_part(part: usize) {
    for (i, shape) in shapes()
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == part)
    {
        // A different crash point per shape: 2, 3, 4, …
        run_shape(shape, 2 + i as u32 % 4).await;
    }
}

#[tokio::test]
async fn exact_shapes_first_half() {
    run_part(0).await;
}

#[tokio::test]
async fn exact_shapes_second_half() {
    run_part(1).await;
}
