//! Fencing in at-least-once mode: a run owns its slot by holding a MySQL named lock on a
//! connection of its own. A newer run of the same slot (a restarted pod, while the old one has
//! not died yet) ends the holder's connection and takes the lock: the newer run wins. Every
//! write transaction checks, after its rows and before its commit, that this run still holds
//! the lock, and rolls back otherwise. The rows it wrote stay locked until then, so a newer run
//! can't have written them in between: a stale write never lands after a newer one.
//! (Exactly-once fences with the progress row's epoch instead.)

use mysql_async::prelude::*;
use mysql_async::Conn;
use tracing::{info, warn};

use super::retry::Failure;
use super::{MysqlConnection, MysqlSink};
use crate::error::{Result, WorkerError};

/// The lock this run holds, on a connection outside the pool (a pooled one is reset, which
/// would release it, each time it goes back).
pub struct SlotLock {
    name: String,
    held: tokio::sync::Mutex<Held>,
}

struct Held {
    connection_id: u32,
    /// When the server started (Unix seconds), to tell a restart from a takeover.
    server_started: i64,
    _conn: Conn,
}

/// The lock of one slot of one sync into one table (`db.table`): named locks are server-wide.
/// MySQL lock names are at most 64 characters; longer ones are hashed.
fn lock_name(target: &str, sync: &str, slot: u32) -> String {
    let name = format!("pms:{target}:{sync}:{slot}");
    if name.len() <= 64 {
        return name;
    }
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    format!("pms:{hash:016x}:{slot}")
}

/// When the server started, in Unix seconds (a restart releases every named lock).
async fn server_started(conn: &mut impl Queryable) -> Result<i64, mysql_async::Error> {
    let now: Option<i64> = conn.query_first("SELECT UNIX_TIMESTAMP()").await?;
    let uptime: Option<(String, i64)> =
        conn.query_first("SHOW GLOBAL STATUS LIKE 'Uptime'").await?;
    Ok(now.unwrap_or(0) - uptime.map_or(0, |(_, u)| u))
}

impl MysqlSink {
    /// Takes slot `slot` of sync `sync` over: an older run's lock connection is ended first.
    pub async fn take_slot(&mut self, sync: &str, slot: u32) -> Result<()> {
        let failed = |e| self.error(Failure::new("take the slot lock", e));
        let name = lock_name(&self.target, sync, slot);
        let mut conn = Conn::new(self.opts.clone()).await.map_err(failed)?;
        let holder: Option<u32> = conn
            .exec_first("SELECT IS_USED_LOCK(?)", (name.as_str(),))
            .await
            .map_err(failed)?
            .flatten();
        if let Some(older) = holder {
            warn!(lock = %name, connection = older, "another worker holds this slot: ending its lock connection, so it stops before its next commit");
            if let Err(e) = conn.query_drop(format!("KILL CONNECTION {older}")).await {
                return Err(WorkerError::Validation {
                    table: self.target.clone(),
                    problems: vec![format!(
                        "slot {slot} of sync {sync} is held by MySQL connection {older} of another worker, and \
                         this one can't end it ({e}): stop the other worker, or run both as the same MySQL user"
                    )],
                });
            }
        }
        let Some(held) = get_lock(conn, &name, 30).await.map_err(failed)? else {
            return Err(WorkerError::Validation {
                table: self.target.clone(),
                problems: vec![format!(
                    "slot {slot} of sync {sync}: the lock {name:?} was not free within 30 s (another worker took it)"
                )],
            });
        };
        info!(lock = %name, connection = held.connection_id, "took the slot");
        self.slot_lock = Some(SlotLock {
            name,
            held: tokio::sync::Mutex::new(held),
        });
        Ok(())
    }

    /// Fails the open transaction on `conn` unless this run still holds its slot lock. A lock
    /// lost to a server restart (nobody holds it, the server started after it was taken) is
    /// taken again; one another worker holds means this run was taken over.
    pub(super) async fn check_slot(&self, conn: &mut impl Queryable) -> Result<(), Failure> {
        let Some(lock) = &self.slot_lock else {
            return Ok(());
        };
        let failed = |e| Failure::new("slot check", e);
        let mut held = lock.held.lock().await;
        let holder: Option<u32> = conn
            .exec_first("SELECT IS_USED_LOCK(?)", (lock.name.as_str(),))
            .await
            .map_err(failed)?
            .flatten();
        if holder == Some(held.connection_id) {
            return Ok(());
        }
        if holder.is_none() && server_started(conn).await.map_err(failed)? > held.server_started + 1
        {
            let fresh = Conn::new(self.opts.clone()).await.map_err(failed)?;
            if let Some(again) = get_lock(fresh, &lock.name, 0).await.map_err(failed)? {
                warn!(lock = %lock.name, "the server restarted and released the slot lock: took it again");
                *held = again;
                return Ok(());
            }
        }
        let fenced = format!(
            "fenced: slot lock {:?} is no longer this worker's (a newer worker of the slot took it over), so this \
             one stops without committing",
            lock.name
        );
        let next = "the next start reads the table in full and removes what Paimon doesn't have";
        Err(self.fence_failure(conn, "slot check", fenced, next).await)
    }
}

/// `GET_LOCK(name, timeout)` on `conn`, which then holds it; `None` when it was not free.
async fn get_lock(
    mut conn: Conn,
    name: &str,
    timeout_secs: u32,
) -> Result<Option<Held>, mysql_async::Error> {
    let got: Option<i64> = conn
        .exec_first("SELECT GET_LOCK(?, ?)", (name, timeout_secs))
        .await?;
    if got != Some(1) {
        return Ok(None);
    }
    Ok(Some(Held {
        connection_id: conn.id(),
        server_started: server_started(&mut conn).await?,
        _conn: conn,
    }))
}

impl MysqlConnection {
    /// Whether a run of `sync` holds the lock of slot `slot`, i.e. is running.
    pub async fn slot_in_use(&self, sync: &str, slot: u32) -> Result<bool> {
        let mut conn = self.admin_conn("look up").await?;
        let holder: Option<Option<u64>> = conn
            .exec_first(
                "SELECT IS_USED_LOCK(?)",
                (lock_name(&self.target, sync, slot),),
            )
            .await
            .map_err(|e| self.admin_err("look up", e))?;
        Ok(holder.flatten().is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_names_fit_mysql() {
        assert_eq!(
            lock_name("app.orders", "shop.orders", 2),
            "pms:app.orders:shop.orders:2"
        );
        let long = lock_name("app.orders", &"x".repeat(200), 12);
        assert!(long.len() <= 64, "{long}");
        assert_ne!(
            long,
            lock_name("app.orders", &format!("{}y", "x".repeat(199)), 12)
        );
    }
}
