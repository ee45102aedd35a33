//! Taking over from a Flink job (`source.startFrom.flinkConsumer`). Its Paimon source writes
//! `consumer/consumer-<id>` = `{"nextSnapshot": N}` when a checkpoint completes, after its JDBC
//! sink flushed everything read before that checkpoint: every change of the snapshots before N
//! is in MySQL, and replaying the changes from N on (some of which the job may have written
//! already) ends with each key at its latest value. A running job rewrites the file at each
//! checkpoint; one that has not been rewritten for `stoppedFor` belongs to a stopped job.

use std::time::Duration;

use chrono::Utc;
use pms_crds::StartFrom;
use tracing::info;

use super::{consumer, PaimonSource};
use crate::error::{Result, WorkerError};

impl PaimonSource {
    /// The snapshot the Flink job's consumer names as its next, once the job has stopped; an
    /// error, before anything is written, when the consumer is missing or still moving.
    pub async fn flink_take_over_point(&self, from: &StartFrom) -> Result<i64> {
        let id = &from.flink_consumer;
        let path = consumer::file(&self.table, id);
        let io = self.table.file_io();
        let refuse = |message: String| WorkerError::Source {
            table: self.name.clone(),
            message: format!("taking over from Flink consumer {id}: {message}"),
        };
        if !io.exists(&path).await.map_err(|e| self.err(e))? {
            let others = consumer::ids(&self.table).await.map_err(|e| self.err(e))?;
            return Err(refuse(format!(
                "there is no {path}: the Flink job's consumer-id is another one, or the job never \
                 completed a checkpoint. Consumers of this table: {}",
                if others.is_empty() {
                    "none".to_string()
                } else {
                    others.join(", ")
                }
            )));
        }
        let stopped_for = from.stopped_for.0;
        let first = self.consumer_state(&path).await?;
        let age = first.age();
        if age < stopped_for {
            info!(consumer = %id, written_ago = ?age, wait = ?(stopped_for - age),
                  "waiting for the Flink consumer to stay still (source.startFrom.stoppedFor)");
            tokio::time::sleep(stopped_for - age).await;
            let now = self.consumer_state(&path).await?;
            if now != first {
                return Err(refuse(format!(
                    "it was rewritten within {stopped_for:?} (next snapshot {:?}, then {:?}): the Flink job \
                     is still running. Stop it (`flink stop --savepointPath …`), then start this sync again \
                     (or raise source.startFrom.stoppedFor above the job's checkpoint interval)",
                    first.next_snapshot, now.next_snapshot
                )));
            }
        }
        let next = first
            .next_snapshot
            .ok_or_else(|| refuse(format!("{path} does not hold {{\"nextSnapshot\": N}}")))?;
        // Paimon ignores a consumer not rewritten for `consumer.expiration-time`: a job stopped
        // longer ago may have had the snapshots it needs expired. Checked before anything is
        // written, while the consumer still exists.
        let earliest = self.earliest_snapshot().await?.unwrap_or(1);
        if next < earliest {
            return Err(refuse(format!(
                "it needs snapshot {next} on, but the earliest Paimon keeps is {earliest} (the consumer \
                 was ignored once older than consumer.expiration-time): the changes in between are gone. \
                 Leave startFrom out (a full read of the latest snapshot, then the rows it doesn't \
                 have are removed) or rebuild"
            )));
        }
        Ok(next)
    }

    async fn consumer_state(&self, path: &str) -> Result<ConsumerState> {
        let io = self.table.file_io();
        let status = io.get_status(path).await.map_err(|e| self.err(e))?;
        let body = io
            .new_input(path)
            .map_err(|e| self.err(e))?
            .read()
            .await
            .map_err(|e| self.err(e))?;
        Ok(ConsumerState {
            next_snapshot: consumer::next_snapshot(&body),
            written: status.last_modified,
        })
    }

    /// Removes the Flink job's consumer once the sync has its own checkpoint (and consumer).
    pub async fn remove_flink_consumer(&self, id: &str) -> Result<()> {
        consumer::remove_foreign(&self.table, id)
            .await
            .map_err(|e| self.err(e))
    }
}

#[derive(PartialEq)]
struct ConsumerState {
    next_snapshot: Option<i64>,
    written: Option<chrono::DateTime<Utc>>,
}

impl ConsumerState {
    /// How long ago it was written (zero when the store doesn't say: then it is watched for
    /// the whole `stoppedFor`).
    fn age(&self) -> Duration {
        self.written
            .and_then(|w| (Utc::now() - w).to_std().ok())
            .unwrap_or_default()
    }
}
