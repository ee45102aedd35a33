//! Checkpoints in one ConfigMap per sync and slot (`<sync>-checkpoint-<slot>`), the operator's
//! default. Writes carry the resourceVersion that was read, so a zombie pod of the same slot
//! (an older epoch) can't overwrite a newer checkpoint: its write fails with a conflict.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ObjectMeta, Patch, PatchParams, PostParams};
use kube::Api;

use pms_crds::contract::{
    checkpoint_name, labels, Checkpoint, Component, Slot, CHECKPOINT_KEY, LAST_ERROR_KEY,
};

use crate::error::{Result, WorkerError};
use crate::report_configmap::config_maps;

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
        let (api, namespace) = config_maps(namespace).await.map_err(|e| WorkerError::Checkpoint {
            location: format!("ConfigMap {}", checkpoint_name(sync, slot.index)),
            message: format!("can't reach the Kubernetes API ({e}); checkpoint.storage configmap needs in-cluster config or KUBECONFIG"),
        })?;
        Ok(Self {
            api,
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
            checkpoint_name(&self.sync, self.slot.index)
        )
    }

    fn err(&self, message: impl Into<String>) -> WorkerError {
        WorkerError::Checkpoint {
            location: self.location(),
            message: message.into(),
        }
    }

    /// Slot `slot`'s checkpoint, and the ConfigMap's resourceVersion when it exists. A
    /// ConfigMap holding only a worker's rebuild-required note has no checkpoint yet.
    async fn read(&self, slot: u32) -> Result<(Option<Checkpoint>, Option<String>)> {
        let name = checkpoint_name(&self.sync, slot);
        let cm = self
            .api
            .get_opt(&name)
            .await
            .map_err(|e| self.err(format!("reading {name}: {e}")))?;
        let Some(cm) = cm else {
            return Ok((None, None));
        };
        let rv = cm.metadata.resource_version.clone();
        let data = cm.data.unwrap_or_default();
        let Some(body) = data.get(CHECKPOINT_KEY) else {
            if data.is_empty() || data.contains_key(LAST_ERROR_KEY) {
                // Made empty by the operator before the slot's first run, or only a worker's
                // notes (it failed before its first checkpoint).
                return Ok((None, rv));
            }
            return Err(self.err(format!(
                "{name} has no {CHECKPOINT_KEY}; delete it to start over"
            )));
        };
        let cp = serde_json::from_str(body).map_err(|e| {
            self.err(format!(
                "{name} is corrupt ({e}); restore it or delete it to start over"
            ))
        })?;
        Ok((Some(cp), rv))
    }

    /// This slot's checkpoint (after a rescale, where the new slot starts: `rescale::resolve`).
    pub async fn load(&mut self) -> Result<Option<Checkpoint>> {
        let (own, rv) = self.read(self.slot.index).await?;
        self.resource_version = rv;
        let this = &*self;
        let read = |j| async move { Ok(this.read(j).await?.0) };
        super::rescale::resolve(this.slot, own, read, |m| this.err(m)).await
    }

    pub async fn save(&mut self, checkpoint: &Checkpoint) -> Result<()> {
        let name = checkpoint_name(&self.sync, self.slot.index);
        let body = serde_json::to_string_pretty(checkpoint).map_err(|e| self.err(e.to_string()))?;
        let cm = ConfigMap {
            metadata: self.metadata(&name, self.resource_version.clone()),
            data: Some(BTreeMap::from([(CHECKPOINT_KEY.to_string(), body)])),
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
            kube::Error::Api(s) if s.code == 403 && self.resource_version.is_none() => {
                self.err(format!(
                    "{name} does not exist, and this worker may not create ConfigMaps (under the operator \
                     it makes them before the workers start; is it running?): {e}"
                ))
            }
            _ => self.err(format!("writing: {e}")),
        })?;
        self.resource_version = written.metadata.resource_version;
        Ok(())
    }
}

impl ConfigMapCheckpointStore {
    /// Leaves `notes` (key → JSON) beside the checkpoint (the operator reads them; the next
    /// checkpoint written replaces them). A slot that never checkpointed gets a ConfigMap with
    /// the notes alone.
    pub async fn note(&self, data: BTreeMap<String, String>) -> Result<()> {
        let name = checkpoint_name(&self.sync, self.slot.index);
        let patch = serde_json::json!({ "data": data });
        let patched = self
            .api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await;
        match patched {
            Err(kube::Error::Api(s)) if s.code == 404 => {
                let cm = ConfigMap {
                    metadata: self.metadata(&name, None),
                    data: Some(data),
                    ..Default::default()
                };
                self.api.create(&PostParams::default(), &cm).await.map(drop)
            }
            other => other.map(drop),
        }
        .map_err(|e| self.err(format!("noting the worker's error: {e}")))
    }

    /// Removes this slot's checkpoint (a finished rebuild's new generation): the ConfigMap is
    /// emptied, not deleted (a worker may neither delete nor create ConfigMaps; the operator
    /// makes them, and deletes them with the sync).
    pub async fn remove(&self) -> Result<()> {
        let name = checkpoint_name(&self.sync, self.slot.index);
        let empty = serde_json::json!({ "data": null });
        match self
            .api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&empty))
            .await
        {
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            other => other
                .map(drop)
                .map_err(|e| self.err(format!("emptying: {e}"))),
        }
    }

    fn metadata(&self, name: &str, resource_version: Option<String>) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(labels(
                &self.sync,
                Component::Checkpoint,
                Some(self.slot.index),
            )),
            resource_version,
            ..Default::default()
        }
    }
}
