//! Checkpoints in one ConfigMap per sync and slot (`<sync>-checkpoint-<slot>`), the operator's
//! default. Writes carry the resourceVersion that was read, so a zombie pod of the same slot
//! (an older epoch) can't overwrite a newer checkpoint: its write fails with a conflict.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ObjectMeta, PostParams};
use kube::Api;
use tracing::info;

use super::{Checkpoint, Phase, RescaleBase};
use crate::config::Slot;
use crate::error::{Result, WorkerError};

pub const DATA_KEY: &str = "checkpoint.json";

/// Labels the operator selects checkpoint ConfigMaps by.
pub fn checkpoint_labels(sync: &str, slot: u32) -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            "app.kubernetes.io/managed-by".to_string(),
            "pms-operator".to_string(),
        ),
        ("paimonsync.io/sync".to_string(), sync.to_string()),
        (
            "paimonsync.io/component".to_string(),
            "checkpoint".to_string(),
        ),
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
        Ok(Self {
            api: Api::namespaced(client, &namespace),
            namespace,
            sync: sync.to_string(),
            slot,
            resource_version: None,
        })
    }

    pub fn location(&self) -> String {
        format!(
            "ConfigMap {}/{}",
            self.namespace,
            checkpoint_name(&self.sync, self.slot.slot)
        )
    }

    fn err(&self, message: impl Into<String>) -> WorkerError {
        WorkerError::Checkpoint {
            location: self.location(),
            message: message.into(),
        }
    }

    async fn read(&self, slot: u32) -> Result<Option<(Checkpoint, Option<String>)>> {
        let name = checkpoint_name(&self.sync, slot);
        let cm = self
            .api
            .get_opt(&name)
            .await
            .map_err(|e| self.err(format!("reading {name}: {e}")))?;
        let Some(cm) = cm else { return Ok(None) };
        let rv = cm.metadata.resource_version.clone();
        let Some(body) = cm.data.as_ref().and_then(|d| d.get(DATA_KEY)) else {
            return Err(self.err(format!("{name} has no {DATA_KEY}; delete it to start over")));
        };
        let cp = serde_json::from_str(body).map_err(|e| {
            self.err(format!(
                "{name} is corrupt ({e}); restore it or delete it to start over"
            ))
        })?;
        Ok(Some((cp, rv)))
    }

    /// This slot's checkpoint. After a rescale (the stored checkpoints were written for another
    /// number of slots) every new slot starts from the lowest snapshot any old slot reached: a
    /// consistent point for all keys, and replaying past it is idempotent. Slots of one rescale
    /// start at different times and overwrite old checkpoints, so the point is also kept in the
    /// new checkpoints (`rescaledFrom`) for the slots that start later.
    pub async fn load(&mut self) -> Result<Option<Checkpoint>> {
        let own = self.read(self.slot.slot).await?;
        self.resource_version = own.as_ref().and_then(|(_, rv)| rv.clone());
        let base = match own.map(|(cp, _)| cp) {
            Some(cp) if cp.slots == self.slot.slots => return Ok(Some(cp)),
            Some(cp) => self.merge_old_slots(cp.slots).await?,
            None => {
                // A slot without a checkpoint: is a rescale under way? Ask the first other slot.
                let mut found = None;
                for j in (0..self.slot.slots).filter(|&j| j != self.slot.slot) {
                    if let Some((cp, _)) = self.read(j).await? {
                        found = Some(cp);
                        break;
                    }
                }
                match found {
                    Some(cp) if cp.slots != self.slot.slots => {
                        self.merge_old_slots(cp.slots).await?
                    }
                    Some(cp) => match cp.rescaled_from {
                        Some(base) => base,
                        None => return Ok(None),
                    },
                    None => return Ok(None),
                }
            }
        };
        info!(from_slots = base.slots, to_slots = self.slot.slots, snapshot_id = base.snapshot_id, phase = ?base.phase,
              "rescaled: resuming from the lowest snapshot of the old slots");
        Ok(Some(Checkpoint {
            sync: self.sync.clone(),
            slot: self.slot.slot,
            slots: self.slot.slots,
            snapshot_id: base.snapshot_id,
            phase: base.phase,
            position: None,
            epoch: 0,
            updated: String::new(),
            latest_snapshot: None,
            rescaled_from: Some(base),
        }))
    }

    /// The lowest position over the old slots' checkpoints (or, where a new slot already
    /// replaced one, the rescale point it recorded).
    async fn merge_old_slots(&self, old_slots: u32) -> Result<RescaleBase> {
        let mut base: Option<RescaleBase> = None;
        for j in 0..old_slots {
            let Some((cp, _)) = self.read(j).await? else {
                return Err(self.err(format!(
                    "rescaling from {old_slots} slots, but the checkpoint of old slot {j} is missing; \
                     without it there is no consistent snapshot to resume from: rebuild the target"
                )));
            };
            let point = match cp.rescaled_from {
                Some(b) if cp.slots == self.slot.slots => b,
                // A position inside a snapshot means that snapshot must be read again whole.
                _ => RescaleBase {
                    slots: old_slots,
                    snapshot_id: if cp.phase == Phase::Full {
                        cp.snapshot_id
                    } else {
                        cp.next_snapshot() - 1
                    },
                    phase: cp.phase,
                },
            };
            base = Some(match base {
                None => point,
                Some(b) => RescaleBase {
                    slots: old_slots,
                    snapshot_id: b.snapshot_id.min(point.snapshot_id),
                    phase: if b.phase == Phase::Full || point.phase == Phase::Full {
                        Phase::Full
                    } else {
                        Phase::Incremental
                    },
                },
            });
        }
        base.ok_or_else(|| self.err("rescaling from 0 slots"))
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
