//! Checkpoints as S3 objects (`s3://<bucket>/<prefix>/<sync>-checkpoint-<slot>.json`, `<sync>`
//! the external name: `<namespace>_<name>` under the operator; an object of an earlier release,
//! under the bare name, is read when the slot has none and removed once the slot wrote its own). A zombie
//! writer of the same slot is fenced as with ConfigMaps: every write is conditional on what this
//! store read (`If-Match: <etag>`, or `If-None-Match: *` when there was nothing), so a write
//! after another worker's fails with 412 instead of overwriting newer progress. That relies on
//! the store honouring conditional PUTs, as AWS S3 (since 2024) and the test server (versitygw) do.
//!
//! An unreachable store is retried (see `pms_runtime::s3`). A conditional write whose answer was
//! lost looks like a conflict when retried (it went through and changed the ETag): the object is
//! read back, and if it holds what this worker wrote, the write counts as done.

use pms_crds::contract::{checkpoint_object, Slot};
use pms_runtime::s3::{S3EntryMode, S3Error, S3ErrorKind, S3Metadata, S3Prefix, S3Target};

use super::Checkpoint;
use crate::error::{Result, WorkerError};

pub struct S3CheckpointStore {
    objects: S3Prefix,
    sync: String,
    /// The name an earlier release keyed the objects by, when it differs from `sync`.
    legacy: Option<String>,
    /// This slot resumed from its object under `legacy`: removed after the first write.
    adopted_legacy: bool,
    slot: Slot,
    /// The ETag of the object this store read or wrote last (`None`: there was none).
    etag: Option<String>,
}

impl S3CheckpointStore {
    pub fn new(target: &S3Target, sync: &str, legacy: Option<String>, slot: Slot) -> Result<Self> {
        let objects = S3Prefix::open(target).map_err(|e| WorkerError::Checkpoint {
            location: format!("s3://{}/{}", target.bucket, target.prefix),
            message: format!("S3 settings: {e}"),
        })?;
        Ok(Self {
            objects,
            sync: sync.to_string(),
            legacy,
            adopted_legacy: false,
            slot,
            etag: None,
        })
    }

    fn key(&self) -> String {
        self.objects
            .key(&checkpoint_object(&self.sync, self.slot.index))
    }

    pub fn location(&self) -> String {
        self.objects
            .url(&checkpoint_object(&self.sync, self.slot.index))
    }

    fn err(&self, message: impl Into<String>) -> WorkerError {
        WorkerError::Checkpoint {
            location: self.location(),
            message: message.into(),
        }
    }

    fn parse(&self, body: &[u8]) -> Result<Checkpoint> {
        serde_json::from_slice(body).map_err(|e| {
            self.err(format!(
                "is corrupt ({e}); restore it or delete it to start over"
            ))
        })
    }

    /// This slot's checkpoint (after a rescale, where the new slot starts: `rescale::resolve`).
    pub async fn load(&mut self) -> Result<Option<Checkpoint>> {
        let mut own = self.load_own().await?;
        if own.is_none() && self.legacy.is_some() {
            own = self.read_slot(self.slot.index, true).await?;
            self.adopted_legacy = own.is_some();
        }
        let this = &*self;
        let read = |j| this.read_slot(j, false);
        super::rescale::resolve(this.slot, own, read, |m| this.err(m)).await
    }

    /// Slot `j`'s object (under the legacy name only with `legacy_only`, else under the
    /// external name, or the legacy one when there is none).
    async fn read_slot(&self, j: u32, legacy_only: bool) -> Result<Option<Checkpoint>> {
        let names = std::iter::once(&self.sync)
            .filter(|_| !legacy_only)
            .chain(&self.legacy);
        for of in names {
            let name = checkpoint_object(of, j);
            match self.objects.read(&name).await {
                Ok(Some(body)) => return self.parse(&body).map(Some),
                Ok(None) => {}
                Err(e) => return Err(self.err(format!("reading {}: {e}", self.objects.url(&name)))),
            }
        }
        Ok(None)
    }

    /// This slot's object, remembering its ETag for the next write.
    async fn load_own(&mut self) -> Result<Option<Checkpoint>> {
        let key = self.key();
        let op = self.objects.operator();
        let (stat, _) = self.objects.retrying("read", || op.stat(&key)).await;
        let meta = match stat {
            Ok(m) => m,
            Err(e) if e.kind() == S3ErrorKind::NotFound => {
                self.etag = None;
                return Ok(None);
            }
            Err(e) => return Err(self.err(format!("reading: {e}"))),
        };
        let etag = meta.etag().map(str::to_string);
        let read = || {
            let mut read = op.read_with(&key);
            if let Some(tag) = &etag {
                // The body of exactly the version whose ETag the next write is conditional on.
                read = read.if_match(tag);
            }
            read
        };
        let (body, _) = self.objects.retrying("read", read).await;
        let body =
            body.map_err(|e| self.err(format!("reading (it changed while read: {e}); retry")))?;
        let cp = self.parse(&body.to_vec())?;
        self.etag = etag;
        Ok(Some(cp))
    }

    pub async fn save(&mut self, checkpoint: &Checkpoint) -> Result<()> {
        let body = serde_json::to_vec_pretty(checkpoint).map_err(|e| self.err(e.to_string()))?;
        let key = self.key();
        let op = self.objects.operator();
        let write = || {
            let write = op.write_with(&key, body.clone());
            match &self.etag {
                Some(tag) => write.if_match(tag),
                None => write.if_not_exists(true),
            }
        };
        let (written, failed) = self.objects.retrying("write", write).await;
        let written = match written {
            // Retried after an attempt whose answer was lost: did that attempt go through?
            Err(e) if failed > 0 && conflict(&e) => match op.read(&key).await {
                Ok(stored) if stored.to_vec() == body => Ok(S3Metadata::new(S3EntryMode::FILE)),
                _ => Err(e),
            },
            other => other,
        };
        let meta = written.map_err(|e| match conflict(&e) {
            true => self.err(format!(
                "another worker wrote this slot's checkpoint since this one read it (epoch {}): \
                 two workers for one slot; this one stops so it can't overwrite newer progress",
                checkpoint.epoch
            )),
            false => self.err(format!("writing: {e}")),
        })?;
        self.etag = match meta.etag() {
            Some(tag) => Some(tag.to_string()),
            // A store that does not return the ETag on PUT: ask for it.
            None => op
                .stat(&key)
                .await
                .map_err(|e| self.err(format!("reading back: {e}")))?
                .etag()
                .map(str::to_string),
        };
        if self.adopted_legacy {
            if let Some(legacy) = &self.legacy {
                let old = checkpoint_object(legacy, self.slot.index);
                self.objects.delete(&old).await.map_err(|e| {
                    self.err(format!(
                        "deleting {} (moved here): {e}",
                        self.objects.url(&old)
                    ))
                })?;
                tracing::info!(from = %self.objects.url(&old), to = %self.location(), "checkpoint moved to the sync's external name");
            }
            self.adopted_legacy = false;
        }
        Ok(())
    }

    pub async fn remove(&self) -> Result<()> {
        let name = checkpoint_object(&self.sync, self.slot.index);
        self.objects
            .delete(&name)
            .await
            .map_err(|e| self.err(format!("deleting: {e}")))
    }
}

fn conflict(e: &S3Error) -> bool {
    matches!(
        e.kind(),
        S3ErrorKind::ConditionNotMatch | S3ErrorKind::AlreadyExists
    )
}
