//! The Paimon consumer file `consumer/consumer-<id>` = `{"nextSnapshot": N}`: Paimon's snapshot
//! expiration keeps every snapshot from N on, so a slot that is behind never loses changes.

use paimon::table::Table;

pub async fn write(table: &Table, consumer_id: &str, next_snapshot: i64) -> paimon::Result<()> {
    let dir = format!("{}/consumer", table.location().trim_end_matches('/'));
    let io = table.file_io();
    io.mkdirs(&dir).await?;
    let body = format!("{{\"nextSnapshot\":{next_snapshot}}}");
    // Write beside and rename, so a reader never sees a half-written file.
    let tmp = format!("{dir}/.consumer-{consumer_id}.tmp");
    let path = format!("{dir}/consumer-{consumer_id}");
    io.new_output(&tmp)?.write(body.into_bytes().into()).await?;
    if io.exists(&path).await? {
        io.delete_file(&path).await?;
    }
    io.rename(&tmp, &path).await
}
