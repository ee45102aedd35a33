//! The Paimon consumer file `consumer/consumer-<id>` = `{"nextSnapshot": N}`: Paimon's snapshot
//! expiration keeps every snapshot from N on, so a slot that is behind never loses changes.
//! `consumer.expiration-time` on the table is the safety net for consumers nobody removes
//! (a deleted sync): Paimon then ignores a consumer not updated for that long.

use paimon::table::Table;

fn dir(table: &Table) -> String {
    format!("{}/consumer", table.location().trim_end_matches('/'))
}

pub async fn write(table: &Table, consumer_id: &str, next_snapshot: i64) -> paimon::Result<()> {
    let dir = dir(table);
    let io = table.file_io();
    let body = format!("{{\"nextSnapshot\":{next_snapshot}}}");
    let path = consumer_file(&dir, consumer_id);
    if !is_local(table.location()) {
        // An object-store PUT replaces the object atomically, and object stores have no rename.
        return io.new_output(&path)?.write(body.into_bytes().into()).await;
    }
    // Locally: write beside and rename over the old file, so a reader never sees a torn file
    // and there is no moment without a consumer.
    io.mkdirs(&dir).await?;
    let tmp = format!("{dir}/.consumer-{consumer_id}.tmp");
    io.new_output(&tmp)?.write(body.into_bytes().into()).await?;
    io.rename(&tmp, &path).await
}

/// Which sync moves consumer `consumer_id`, into which MySQL table: `consumer/.pms-owner-<id>`
/// holds its external name and `target` on a second line (an earlier release wrote the name
/// alone; Paimon reads only `consumer-*` files there). Written at the sync's first start; returns
/// the other sync's name when another one wrote it (two syncs moving one consumer let snapshots
/// expire under the one that lags). A claim under `legacy` (the sync's name in an earlier
/// release) becomes `sync`'s. A claim of this sync into another table (a sync deleted and made
/// again under its name) drops the consumer its old run left: it tells nothing of `target`.
pub async fn claim(
    table: &Table,
    consumer_id: &str,
    sync: &str,
    target: &str,
    legacy: Option<&str>,
) -> paimon::Result<Option<String>> {
    let dir = dir(table);
    let io = table.file_io();
    let path = owner_file(&dir, consumer_id);
    if let Some(owner) = owner(table, consumer_id).await? {
        if owner.claims_for(sync, target) {
            return Ok(None);
        }
        if owner.sync != sync && Some(owner.sync.as_str()) != legacy {
            return Ok(Some(owner.sync));
        }
        if owner.target.is_some_and(|t| t != target) {
            io.delete_file(&consumer_file(&dir, consumer_id)).await?;
        }
    }
    io.mkdirs(&dir).await?;
    io.new_output(&path)?
        .write(format!("{sync}\n{target}").into_bytes().into())
        .await?;
    Ok(None)
}

/// Who claimed a consumer: the sync, and the MySQL table it named (none from an earlier release).
pub struct Owner {
    pub sync: String,
    pub target: Option<String>,
}

impl Owner {
    /// Whether this is `sync`'s claim for `target` (or, from an earlier release, for no named
    /// table).
    pub fn claims_for(&self, sync: &str, target: &str) -> bool {
        self.sync == sync && self.target.as_deref().is_none_or(|t| t == target)
    }
}

/// Who claimed consumer `consumer_id`, if anyone did.
pub async fn owner(table: &Table, consumer_id: &str) -> paimon::Result<Option<Owner>> {
    let path = owner_file(&dir(table), consumer_id);
    let io = table.file_io();
    if !io.exists(&path).await? {
        return Ok(None);
    }
    let body = String::from_utf8_lossy(&io.new_input(&path)?.read().await?).into_owned();
    Ok(Some(match body.split_once('\n') {
        Some((sync, target)) => Owner {
            sync: sync.to_string(),
            target: Some(target.to_string()),
        },
        None => Owner {
            sync: body,
            target: None,
        },
    }))
}

/// Gives up `sync`'s claim of consumer `consumer_id` (`pms-worker reset`).
pub async fn release(table: &Table, consumer_id: &str, sync: &str) -> paimon::Result<()> {
    if owner(table, consumer_id)
        .await?
        .is_some_and(|owner| owner.sync == sync)
    {
        table
            .file_io()
            .delete_file(&owner_file(&dir(table), consumer_id))
            .await?;
    }
    Ok(())
}

/// Removes consumer `consumer_id` and `sync`'s claim of it (its sync deleted): snapshots it
/// kept from expiring expire again. A consumer another sync claims is left alone.
pub async fn remove(table: &Table, consumer_id: &str, sync: &str) -> paimon::Result<()> {
    if owner(table, consumer_id)
        .await?
        .is_some_and(|owner| owner.sync != sync)
    {
        return Ok(());
    }
    delete(table, &dir(table), consumer_id).await
}

/// Deletes consumer `consumer_id`'s file and its claim, those that exist.
async fn delete(table: &Table, dir: &str, consumer_id: &str) -> paimon::Result<()> {
    let io = table.file_io();
    for path in [
        consumer_file(dir, consumer_id),
        owner_file(dir, consumer_id),
    ] {
        if io.exists(&path).await? {
            io.delete_file(&path).await?;
        }
    }
    Ok(())
}

fn consumer_file(dir: &str, consumer_id: &str) -> String {
    format!("{dir}/consumer-{consumer_id}")
}

fn owner_file(dir: &str, consumer_id: &str) -> String {
    format!("{dir}/.pms-owner-{consumer_id}")
}

/// The `nextSnapshot` of consumer `consumer_id`, if it exists.
pub async fn read(table: &Table, consumer_id: &str) -> paimon::Result<Option<i64>> {
    let path = consumer_file(&dir(table), consumer_id);
    let io = table.file_io();
    if !io.exists(&path).await? {
        return Ok(None);
    }
    let bytes = io.new_input(&path)?.read().await?;
    Ok(next_snapshot(&bytes))
}

/// The `nextSnapshot` a consumer file's body holds, if it holds one.
pub fn next_snapshot(body: &[u8]) -> Option<i64> {
    let parsed: serde_json::Value = serde_json::from_slice(body).ok()?;
    parsed.get("nextSnapshot")?.as_i64()
}

/// The path of consumer `consumer_id`'s file.
pub fn file(table: &Table, consumer_id: &str) -> String {
    consumer_file(&dir(table), consumer_id)
}

/// The ids of the table's consumers.
pub async fn ids(table: &Table) -> paimon::Result<Vec<String>> {
    let dir = dir(table);
    let io = table.file_io();
    if !io.exists(&dir).await? {
        return Ok(Vec::new());
    }
    Ok(io
        .list_status(&dir)
        .await?
        .iter()
        .filter_map(|s| {
            s.path
                .rsplit('/')
                .next()?
                .strip_prefix("consumer-")
                .map(str::to_string)
        })
        .collect())
}

/// Removes consumer `consumer_id`, which no sync owns (another reader's: a Flink job's).
pub async fn remove_foreign(table: &Table, consumer_id: &str) -> paimon::Result<()> {
    delete(table, &dir(table), consumer_id).await
}

/// Removes this sync's consumers that no current slot owns (those of slots above a lowered
/// parallelism, or of the other layout when moving between one and several slots), so they
/// stop pinning snapshots. Returns the ids removed.
pub async fn remove_stale(table: &Table, base_id: &str, slots: u32) -> paimon::Result<Vec<String>> {
    let dir = dir(table);
    let mut removed = Vec::new();
    for id in ids(table).await? {
        if is_stale(&id, base_id, slots) {
            delete(table, &dir, &id).await?;
            removed.push(id);
        }
    }
    Ok(removed)
}

/// Removes every consumer of `base_id` (any slot); returns their ids.
pub async fn remove_all(table: &Table, base_id: &str) -> paimon::Result<Vec<String>> {
    remove_stale(table, base_id, 0).await
}

/// Whether consumer `id` is one of `base_id`'s that no slot of `slots` writes (with 0 slots:
/// every one of them).
fn is_stale(id: &str, base_id: &str, slots: u32) -> bool {
    if id == base_id {
        return slots != 1;
    }
    let Some(slot) = id
        .strip_prefix(base_id)
        .and_then(|rest| rest.strip_prefix("-slot"))
        .and_then(|k| k.parse::<u32>().ok())
    else {
        return false;
    };
    slots == 1 || slot >= slots
}

fn is_local(location: &str) -> bool {
    location.starts_with('/') || location.starts_with("file:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_syncs_consumers_without_a_slot_are_stale() {
        assert!(!is_stale("pms-orders", "pms-orders", 1));
        assert!(is_stale("pms-orders", "pms-orders", 3));
        assert!(is_stale("pms-orders-slot1", "pms-orders", 1));
        assert!(!is_stale("pms-orders-slot2", "pms-orders", 3));
        assert!(is_stale("pms-orders-slot3", "pms-orders", 3));
        assert!(
            !is_stale("pms-orders2-slot5", "pms-orders", 3),
            "another sync"
        );
        assert!(!is_stale("flink-job", "pms-orders", 3));
    }
}
