//! Reports for the operator: a JSON document under `REPORT_KEY` in a ConfigMap of the sync's
//! (`<sync>-rebuild`, `<sync>-verify`). The operator creates them, owned by the resource;
//! a worker run by hand creates a missing one.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ObjectMeta, Patch, PatchParams, PostParams};
use kube::Api;
use pms_crds::contract::{labels, Component, REPORT_KEY};

use crate::error::{Result, WorkerError};

/// The ConfigMaps of `namespace` (default: the kubeconfig's, or the pod's), and which namespace
/// that is.
pub async fn config_maps(namespace: Option<String>) -> kube::Result<(Api<ConfigMap>, String)> {
    let client = kube::Client::try_default().await?;
    let ns = namespace.unwrap_or_else(|| client.default_namespace().to_string());
    Ok((Api::namespaced(client, &ns), ns))
}

pub struct ReportConfigMap {
    api: Api<ConfigMap>,
    name: String,
    sync: String,
    component: Component,
}

impl ReportConfigMap {
    /// `namespace`: the sync's (default: the kubeconfig's).
    pub async fn connect(
        namespace: Option<String>,
        name: String,
        sync: &str,
        component: Component,
    ) -> Result<Self> {
        let client = kube::Client::try_default().await.map_err(|e| {
            WorkerError::Config(format!(
                "can't reach the Kubernetes API to write {name}: {e}"
            ))
        })?;
        let ns = namespace.unwrap_or_else(|| client.default_namespace().to_string());
        Ok(Self {
            api: Api::namespaced(client, &ns),
            name,
            sync: sync.to_string(),
            component,
        })
    }

    /// The report in the ConfigMap, `None` while it has none (or the ConfigMap is missing).
    pub async fn read<T: serde::de::DeserializeOwned>(&self) -> Result<Option<T>> {
        let err = |e: String| WorkerError::Config(format!("reading ConfigMap {}: {e}", self.name));
        let cm = self
            .api
            .get_opt(&self.name)
            .await
            .map_err(|e| err(e.to_string()))?;
        let Some(text) = cm.and_then(|c| c.data?.remove(REPORT_KEY)) else {
            return Ok(None);
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| err(e.to_string()))
    }

    pub async fn write(&self, report: &impl serde::Serialize) -> Result<()> {
        let err = |e: String| {
            WorkerError::Config(format!(
                "writing the report into ConfigMap {}: {e}",
                self.name
            ))
        };
        let body = serde_json::to_string_pretty(report).map_err(|e| err(e.to_string()))?;
        let data = BTreeMap::from([(REPORT_KEY.to_string(), body)]);
        let patch = serde_json::json!({ "data": data });
        match self
            .api
            .patch(&self.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Err(kube::Error::Api(s)) if s.code == 404 => {
                let cm = ConfigMap {
                    metadata: ObjectMeta {
                        name: Some(self.name.clone()),
                        labels: Some(labels(&self.sync, self.component, None)),
                        ..Default::default()
                    },
                    data: Some(data),
                    ..Default::default()
                };
                self.api.create(&PostParams::default(), &cm).await.map(drop)
            }
            other => other.map(drop),
        }
        .map_err(|e| err(e.to_string()))
    }
}
