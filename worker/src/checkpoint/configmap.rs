//! Checkpoints in one ConfigMap per sync and slot (`<sync>-checkpoint-<slot>`), the operator's
//! default. Writes carry the resourceVersion that was read, so a zombie pod of the same slot
//! (an older epoch) can't overwrite a newer checkpoint: its write fails with a conflict.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ObjectMeta, PostParams};
use kube::Api;
use tracing::info;

use super::{Checkpoint, Phase};
use crate::config::Slot;
use crate::error::{Result, WorkerError};

pub const DATA_KEY: &str = "checkpoint.json";

/// Labels the operator selects checkpoint ConfigMaps by.
pub fn checkpoint_labels(sync: &str, slot: u32) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/managed-by".to_string(), "pms-operator".to_string()),
        ("paimonsync.io/sync".to_string(), sync.to_string()),
        ("paimonsync.io/component".to_string(), "checkpoint".to_string()),
        ("paimonsync.io/slot".to_string(), slot.to_string()),
    ])
}

pub fn checkpoint_name(sync: &str, slot: u32) -> String {
    format!("{sync}-checkpoint-{slot}")
}

pub struct ConfigMapCheckpointStore {
    api: Api<ConfigMap>,
    namespace: String,
    sync: String,
    slot: Slot,
    resource_version: Option<String>,
}

impl ConfigMapCheckpointStore {
    /// Uses `PMS_NAMESPACE` (the pod's namespace from the downward API) or the kubeconfig's.
    pub async fn connect(sync: &str, slot: Slot, namespace: Option<String>) -> Result<Self> {
        let client = kube::Client::try_default().await.map_err(|e| WorkerError::Checkpoint {
            location: format!("ConfigMap {}", checkpoint_name(sync, slot.slot)),
            message: format!("can't reach the Kubernetes API ({e}); checkpoint.storage configmap needs in-cluster config or KUBECONFIG"),
        })?;
        let namespace = namespace.unwrap_or_else(|| client.default_namespace().to_string());
        Ok(Self { api: Api::namespaced(client, &namespace), namespace, sync: sync.to_string(), slot, resource_version: None })
    }

    pub fn location(&self) -> String {
        format!("ConfigMap {}/{}", self.namespace, checkpoint_name(&self.sync, self.slot.slot))
    }

    fn err(&self, message: impl Into<String>) -> WorkerError {
        WorkerError::Checkpoint { location: self.location(), message: message.into() }
    }

    async fn read(&self, slot: u32) -> Result<Option<(Checkpoint, Option<String>)>> {
        let name = checkpoint_name(&self.sync, slot);
        let cm = self.api.get_opt(&name).await.map_err(|e| self.err(format!("reading {name}: {e}")))?;
        let Some(cm) = cm else { return Ok(None) };
        let rv = cm.metadata.resource_version.clone();
        let Some(body) = cm.data.as_ref().and_then(|d| d.get(DATA_KEY)) else {
            return Err(self.err(format!("{name} has no {DATA_KEY}; delete it to start over")));
        };
        let cp = serde_json::from_str(body).map_err(|e| self.err(format!("{name} is corrupt ({e}); restore it or delete it to start over")))?;
        Ok(Some((cp, rv)))
    }

    /// This slot's checkpoint. After a rescale (the stored checkpoints were written for another
    /// number of slots) every new slot starts from the lowest snapshot any old slot reached:
    /// a consistent point for all keys, and replaying past it is idempotent.
    pub async fn load(&mut self) -> Result<Option<Checkpoint>> {
        let own = self.read(self.slot.slot).await?;
        self.resource_version = own.as_ref().and_then(|(_, rv)| rv.clone());
        let old_slots = match &own {
            Some((cp, _)) if cp.slots == self.slot.slots => return Ok(own.map(|(cp, _)| cp)),
            Some((cp, _)) => cp.slots,
            None => match self.read(0).await? {
                Some((cp, _)) if cp.slots != self.slot.slots => cp.slots,
                _ => return Ok(None),
            },
        };
        let mut merged: Option<Checkpoint> = None;
        for slot in 0..old_slots {
            let Some((cp, _)) = self.read(slot).await? else {
                return Err(self.err(format!(
                    "rescaling from {old_slots} slots, but the checkpoint of old slot {slot} is missing; \
                     without it there is no consistent snapshot to resume from: rebuild the target"
                )));
            };
            merged = Some(match merged {
                None => cp,
                Some(m) => Checkpoint {
                    snapshot_id: m.snapshot_id.min(cp.snapshot_id),
                    phase: if m.phase == Phase::Full || cp.phase == Phase::Full { Phase::Full } else { Phase::Incremental },
                    epoch: m.epoch.max(cp.epoch),
                    ..m
                },
            });
        }
        let merged = merged.map(|m| Checkpoint { slot: self.slot.slot, slots: self.slot.slots, ..m });
        if let Some(m) = &merged {
            info!(from_slots = old_slots, to_slots = self.slot.slots, snapshot_id = m.snapshot_id, phase = ?m.phase,
                  "rescaled: resuming from the lowest snapshot of the old slots");
        }
        Ok(merged)
    }

    pub async fn save(&mut self, checkpoint: &Checkpoint) -> Result<()> {
        let name = checkpoint_name(&self.sync, self.slot.slot);
        let body = serde_json::to_string_pretty(checkpoint).map_err(|e| self.err(e.to_string()))?;
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                labels: Some(checkpoint_labels(&self.sync, self.slot.slot)),
                resource_version: self.resource_version.clone(),
                ..Default::default()
            },
            data: Some(BTreeMap::from([(DATA_KEY.to_string(), body)])),
            ..Default::default()
        };
        let written = match &self.resource_version {
            Some(_) => self.api.replace(&name, &PostParams::default(), &cm).await,
            None => self.api.create(&PostParams::default(), &cm).await,
        };
        let written = written.map_err(|e| match &e {
            kube::Error::Api(s) if s.code == 409 => self.err(format!(
                "another worker wrote this slot's checkpoint since this one read it (epoch {}): \
                 two pods for one slot; this one stops so it can't overwrite newer progress",
                checkpoint.epoch
            )),
            _ => self.err(format!("writing: {e}")),
        })?;
        self.resource_version = written.metadata.resource_version;
        Ok(())
    }
}
