//! Checkpoints as S3 objects (`s3://<bucket>/<prefix>/<sync>-checkpoint-<slot>.json`), through
//! OpenDAL (the S3 client the `paimon` crate already brings). A zombie writer of the same slot is
//! fenced as with ConfigMaps: every write is conditional on what this store read (`If-Match:
//! <etag>`, or `If-None-Match: *` when there was nothing), so a write after another worker's
//! fails with 412 instead of overwriting newer progress. That relies on the store honouring
//! conditional PUTs, as AWS S3 (since 2024) and the test server (versitygw) do.
//!
//! A store that can't be reached (restarting, a network blip) is retried for up to two minutes
//! before the checkpoint fails. A conditional write whose answer was lost looks like a conflict
//! when retried (it went through and changed the ETag): the object is read back, and if it holds
//! what this worker wrote, the write counts as done.

use std::future::IntoFuture;
use std::time::{Duration, Instant};

use opendal::{ErrorKind, HttpTransporter, OperationContext, Operator};
use opendal_http_transport_reqwest::ReqwestTransport;
use opendal_service_s3::S3Config;
use pms_crds::contract::{checkpoint_name, Slot};
use tracing::warn;

use super::Checkpoint;
use crate::config::S3Target;
use crate::error::{Result, WorkerError};

pub struct S3CheckpointStore {
    op: Operator,
    bucket: String,
    key: String,
    /// The ETag of the object this store read or wrote last (`None`: there was none).
    etag: Option<String>,
}

impl S3CheckpointStore {
    pub fn new(target: &S3Target, sync: &str, slot: Slot) -> Result<Self> {
        let name = format!("{}.json", checkpoint_name(sync, slot.index));
        let key = match target.prefix.as_str() {
            "" => name,
            prefix => format!("{prefix}/{name}"),
        };
        let mut cfg = S3Config::default();
        cfg.bucket = target.bucket.clone();
        cfg.endpoint = target.endpoint.clone();
        cfg.region = Some(target.region.clone().unwrap_or_else(|| "us-east-1".into()));
        cfg.enable_virtual_host_style = !target.path_style;
        cfg.access_key_id = target.access_key_id.clone();
        cfg.secret_access_key = target.secret_access_key.clone();
        let location = format!("s3://{}/{key}", target.bucket);
        let op = Operator::from_config(cfg).map_err(|e| WorkerError::Checkpoint {
            location,
            message: format!("S3 settings: {e}"),
        })?;
        let transport = HttpTransporter::new(ReqwestTransport::default());
        Ok(Self {
            op: op.with_context(OperationContext::new().with_http_transport(transport)),
            bucket: target.bucket.clone(),
            key,
            etag: None,
        })
    }

    pub fn location(&self) -> String {
        format!("s3://{}/{}", self.bucket, self.key)
    }

    fn err(&self, message: impl Into<String>) -> WorkerError {
        WorkerError::Checkpoint {
            location: self.location(),
            message: message.into(),
        }
    }

    /// Runs `attempt` until it succeeds, fails for good, or [`RETRY_FOR`] has passed; with how
    /// many attempts failed before.
    async fn retrying<T, F, Fut>(&self, what: &str, attempt: F) -> (opendal::Result<T>, u32)
    where
        F: Fn() -> Fut,
        Fut: IntoFuture<Output = opendal::Result<T>>,
    {
        let started = Instant::now();
        let mut wait = Duration::from_millis(200);
        let mut failed = 0;
        loop {
            match attempt().await {
                Err(e) if transient(&e) && started.elapsed() < RETRY_FOR => {
                    failed += 1;
                    warn!(location = %self.location(), error = %e, retry_in_ms = wait.as_millis() as u64,
                          "S3 {what} failed; retrying");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
                result => return (result, failed),
            }
        }
    }

    pub async fn load(&mut self) -> Result<Option<Checkpoint>> {
        let (stat, _) = self.retrying("read", || self.op.stat(&self.key)).await;
        let meta = match stat {
            Ok(m) => m,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                self.etag = None;
                return Ok(None);
            }
            Err(e) => return Err(self.err(format!("reading: {e}"))),
        };
        let etag = meta.etag().map(str::to_string);
        let read = || {
            let mut read = self.op.read_with(&self.key);
            if let Some(tag) = &etag {
                // The body of exactly the version whose ETag the next write is conditional on.
                read = read.if_match(tag);
            }
            read
        };
        let (body, _) = self.retrying("read", read).await;
        let body =
            body.map_err(|e| self.err(format!("reading (it changed while read: {e}); retry")))?;
        let cp = serde_json::from_slice(&body.to_vec()).map_err(|e| {
            self.err(format!(
                "is corrupt ({e}); restore it or delete it to start over"
            ))
        })?;
        self.etag = etag;
        Ok(Some(cp))
    }

    pub async fn save(&mut self, checkpoint: &Checkpoint) -> Result<()> {
        let body = serde_json::to_vec_pretty(checkpoint).map_err(|e| self.err(e.to_string()))?;
        let write = || {
            let write = self.op.write_with(&self.key, body.clone());
            match &self.etag {
                Some(tag) => write.if_match(tag),
                None => write.if_not_exists(true),
            }
        };
        let (written, failed) = self.retrying("write", write).await;
        let conflict = |e: &opendal::Error| {
            matches!(
                e.kind(),
                ErrorKind::ConditionNotMatch | ErrorKind::AlreadyExists
            )
        };
        let written = match written {
            // Retried after an attempt whose answer was lost: did that attempt go through?
            Err(e) if failed > 0 && conflict(&e) => match self.op.read(&self.key).await {
                Ok(stored) if stored.to_vec() == body => {
                    Ok(opendal::Metadata::new(opendal::EntryMode::FILE))
                }
                _ => Err(e),
            },
            other => other,
        };
        let meta = written.map_err(|e| match e.kind() {
            ErrorKind::ConditionNotMatch | ErrorKind::AlreadyExists => self.err(format!(
                "another worker wrote this slot's checkpoint since this one read it (epoch {}): \
                 two workers for one slot; this one stops so it can't overwrite newer progress",
                checkpoint.epoch
            )),
            _ => self.err(format!("writing: {e}")),
        })?;
        self.etag = match meta.etag() {
            Some(tag) => Some(tag.to_string()),
            // A store that does not return the ETag on PUT: ask for it.
            None => self
                .op
                .stat(&self.key)
                .await
                .map_err(|e| self.err(format!("reading back: {e}")))?
                .etag()
                .map(str::to_string),
        };
        Ok(())
    }

    pub async fn remove(&self) -> Result<()> {
        let (deleted, _) = self.retrying("delete", || self.op.delete(&self.key)).await;
        deleted.map_err(|e| self.err(format!("deleting: {e}")))
    }
}

/// How long an unreachable store is retried before a checkpoint fails.
const RETRY_FOR: Duration = Duration::from_secs(120);

/// Whether `e` may pass by itself (the store unreachable or overloaded), rather than being an
/// answer (missing, refused, conflicting).
fn transient(e: &opendal::Error) -> bool {
    !matches!(
        e.kind(),
        ErrorKind::NotFound
            | ErrorKind::ConditionNotMatch
            | ErrorKind::AlreadyExists
            | ErrorKind::PermissionDenied
            | ErrorKind::ConfigInvalid
            | ErrorKind::Unsupported
    )
}
