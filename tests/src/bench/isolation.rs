//! Why the sink writes under READ COMMITTED: two slots running the sink's transaction shape
//! (deletes by key, some of absent keys, then a multi-row upsert, some keys new) on interleaved
//! keys, as bucket-owning slots do, under each isolation level. REPEATABLE READ locks the gaps
//! around absent keys, which the other slot's inserts then wait on: deadlocks and retries.

use std::time::{Duration, Instant};

use mysql_async::prelude::*;
use mysql_async::{Conn, Opts};

use crate::mysql::TestDb;

/// Keys per slot; slot s owns ids 2·i + s, a third of them present at the start. As many deletes
/// as upserts per transaction keep about half of them absent, so gaps stay.
const KEYS: u64 = 20_000;
const DELETES: usize = 100;
const UPSERTS: usize = 100;

/// One isolation level's outcome.
pub struct Outcome {
    pub level: &'static str,
    pub committed: u64,
    pub deadlocks: u64,
    /// Times a row lock was waited for (`Innodb_row_lock_waits`, server-wide).
    pub lock_waits: u64,
    pub lock_wait_timeouts: u64,
    pub elapsed: Duration,
}

/// Runs both slots for `each` under REPEATABLE READ, then under READ COMMITTED.
pub async fn measure(each: Duration) -> Vec<Outcome> {
    let db = TestDb::new("bench_isolation").await;
    let mut out = Vec::new();
    for level in ["REPEATABLE READ", "READ COMMITTED"] {
        db.exec("DROP TABLE IF EXISTS t").await;
        db.exec("CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR(40) NOT NULL, n INT NOT NULL)")
            .await;
        let present: Vec<String> = (0..2 * KEYS)
            .filter(|i| i % 3 == 0)
            .map(|i| format!("({i}, 'x', 0)"))
            .collect();
        for chunk in present.chunks(5000) {
            db.exec(&format!("INSERT INTO t VALUES {}", chunk.join(",")))
                .await;
        }
        let waits_before = row_lock_waits(&db).await;
        let started = Instant::now();
        let slots: Vec<_> = (0..2u64)
            .map(|slot| {
                let url = db.url();
                tokio::spawn(async move { run_slot(&url, level, slot, started + each).await })
            })
            .collect();
        let mut outcome = Outcome {
            level,
            committed: 0,
            deadlocks: 0,
            lock_waits: 0,
            lock_wait_timeouts: 0,
            elapsed: Duration::ZERO,
        };
        for slot in slots {
            let (c, d, w) = slot.await.expect("slot task");
            outcome.committed += c;
            outcome.deadlocks += d;
            outcome.lock_wait_timeouts += w;
        }
        outcome.elapsed = started.elapsed();
        outcome.lock_waits = row_lock_waits(&db).await - waits_before;
        out.push(outcome);
    }
    out
}

async fn row_lock_waits(db: &TestDb) -> u64 {
    let rows = db
        .query_strings("SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_waits'")
        .await;
    rows[0][1]
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// (committed, deadlocks, lock wait timeouts) of one slot until `until`.
async fn run_slot(url: &str, level: &str, slot: u64, until: Instant) -> (u64, u64, u64) {
    let mut conn = Conn::new(Opts::from_url(url).expect("url"))
        .await
        .expect("connect");
    conn.query_drop(format!("SET SESSION TRANSACTION ISOLATION LEVEL {level}"))
        .await
        .expect("isolation");
    conn.query_drop("SET SESSION innodb_lock_wait_timeout = 2")
        .await
        .expect("lock wait timeout");
    let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ slot;
    let mut key = || {
        // xorshift: no dependency, the same sequence every run.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        2 * (rng % KEYS) + slot
    };
    let (mut committed, mut deadlocks, mut waits) = (0, 0, 0);
    while Instant::now() < until {
        let deletes: Vec<String> = (0..DELETES).map(|_| key().to_string()).collect();
        let upserts: Vec<String> = (0..UPSERTS)
            .map(|_| format!("({}, 'y', 1)", key()))
            .collect();
        let result: mysql_async::Result<()> = async {
            conn.query_drop("START TRANSACTION").await?;
            conn.query_drop(format!("DELETE FROM t WHERE id IN ({})", deletes.join(",")))
                .await?;
            conn.query_drop(format!(
                "INSERT INTO t VALUES {} ON DUPLICATE KEY UPDATE v = VALUES(v), n = n + 1",
                upserts.join(",")
            ))
            .await?;
            conn.query_drop("COMMIT").await
        }
        .await;
        match result {
            Ok(()) => committed += 1,
            Err(mysql_async::Error::Server(e)) if e.code == 1213 => deadlocks += 1,
            Err(mysql_async::Error::Server(e)) if e.code == 1205 => waits += 1,
            Err(e) => panic!("isolation bench: {e}"),
        }
        conn.query_drop("ROLLBACK").await.ok();
    }
    (committed, deadlocks, waits)
}
