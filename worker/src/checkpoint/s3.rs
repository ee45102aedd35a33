//! Checkpoints as S3 objects (`s3://<bucket>/<prefix>/<sync>-checkpoint-<slot>.json`), through
//! OpenDAL (the S3 client the `paimon` crate already brings). A zombie writer of the same slot is
//! fenced as with ConfigMaps: every write is conditional on what this store read (`If-Match:
//! <etag>`, or `If-None-Match: *` when there was nothing), so a write after another worker's
//! fails with 412 instead of overwriting newer progress. That relies on the store honouring
//! conditional PUTs, as AWS S3 (since 2024) and the test server (versitygw) do.

use opendal::{ErrorKind, HttpTransporter, OperationContext, Operator};
use opendal_http_transport_reqwest::ReqwestTransport;
use opendal_service_s3::S3Config;
use pms_crds::contract::{checkpoint_name, Slot};

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

    pub async fn load(&mut self) -> Result<Option<Checkpoint>> {
        let meta = match self.op.stat(&self.key).await {
            Ok(m) => m,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                self.etag = None;
                return Ok(None);
            }
            Err(e) => return Err(self.err(format!("reading: {e}"))),
        };
        let etag = meta.etag().map(str::to_string);
        let mut read = self.op.read_with(&self.key);
        if let Some(tag) = &etag {
            // The body of exactly the version whose ETag the next write is conditional on.
            read = read.if_match(tag);
        }
        let body = read
            .await
            .map_err(|e| self.err(format!("reading (it changed while read: {e}); retry")))?;
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
        let write = self.op.write_with(&self.key, body);
        let write = match &self.etag {
            Some(tag) => write.if_match(tag),
            None => write.if_not_exists(true),
        };
        let meta = write.await.map_err(|e| match e.kind() {
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
        self.op
            .delete(&self.key)
            .await
            .map_err(|e| self.err(format!("deleting: {e}")))
    }
}
