//! Step 1: fetch everything a reconcile reads besides the resource itself, into a plain
//! struct, so that every later step but apply is pure.
//!
//! Of a Secret only the key names are kept: values are dropped on arrival and never reach
//! logs, status, events or errors.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::ListParams;
use kube::{Api, Client, ResourceExt};
use pms_crds::contract::{self, Checkpoint, Component, CHECKPOINT_KEY};
use pms_crds::PaimonMysqlSync;
use tracing::debug;

use crate::error::{Error, Result, Verb};

/// What a referenced Secret looks like, without its values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretKeys {
    pub name: String,
    /// `None`: there is no such Secret.
    pub keys: Option<BTreeSet<String>>,
}

/// Everything the other steps read from the cluster.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dereferenced {
    /// `sink.credentialsSecretRef`, when set.
    pub mysql_secret: Option<SecretKeys>,
    /// `source.s3.credentialsSecretRef`, when set.
    pub s3_secret: Option<SecretKeys>,
    /// `sink.tls.caSecretRef` and `sink.tls.clientCertSecretRef`, when set.
    pub tls_ca_secret: Option<SecretKeys>,
    pub tls_client_secret: Option<SecretKeys>,
    /// The workers' checkpoints of this sync (any parallelism), by ConfigMap name.
    /// A ConfigMap without a readable checkpoint is left out.
    pub checkpoints: BTreeMap<String, Checkpoint>,
}

impl Dereferenced {
    /// The checkpoint of slot `slot`, whatever parallelism it was written for.
    pub fn checkpoint(&self, sync: &str, slot: u32) -> Option<&Checkpoint> {
        self.checkpoints.get(&contract::checkpoint_name(sync, slot))
    }
}

pub async fn dereference(client: &Client, ns: &str, pms: &PaimonMysqlSync) -> Result<Dereferenced> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
    let mysql_secret = match &pms.spec.sink.credentials_secret_ref {
        Some(r) => Some(secret_keys(&secrets, ns, &r.name).await?),
        None => None,
    };
    let s3_ref = pms.spec.source.s3.as_ref();
    let s3_secret = match s3_ref.and_then(|s| s.credentials_secret_ref.as_ref()) {
        Some(r) => Some(secret_keys(&secrets, ns, &r.name).await?),
        None => None,
    };
    let tls = &pms.spec.sink.tls;
    let tls_ca_secret = match &tls.ca_secret_ref {
        Some(r) => Some(secret_keys(&secrets, ns, &r.name).await?),
        None => None,
    };
    let tls_client_secret = match &tls.client_cert_secret_ref {
        Some(r) => Some(secret_keys(&secrets, ns, &r.name).await?),
        None => None,
    };
    let checkpoints = checkpoints(client, ns, &pms.name_any()).await?;
    Ok(Dereferenced {
        mysql_secret,
        s3_secret,
        tls_ca_secret,
        tls_client_secret,
        checkpoints,
    })
}

/// A Secret's key names (a metadata read can't show them, so the Secret is read whole and
/// its values dropped here).
async fn secret_keys(secrets: &Api<Secret>, ns: &str, name: &str) -> Result<SecretKeys> {
    let secret = secrets
        .get_opt(name)
        .await
        .map_err(|e| Error::api::<Secret>(Verb::Get, ns, name, e))?;
    let keys = secret.map(|s| {
        let data = s.data.unwrap_or_default().into_keys();
        data.chain(s.string_data.unwrap_or_default().into_keys())
            .collect()
    });
    Ok(SecretKeys {
        name: name.to_string(),
        keys,
    })
}

/// The checkpoint ConfigMaps of one sync, by label: also those of slots a previous, larger
/// parallelism had (the Role must still name them, a rescale reads them).
async fn checkpoints(
    client: &Client,
    ns: &str,
    sync: &str,
) -> Result<BTreeMap<String, Checkpoint>> {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let selector = contract::component_selector(sync, Component::Checkpoint);
    let list = cms
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| Error::api::<ConfigMap>(Verb::List, ns, &selector, e))?;
    Ok(list
        .items
        .iter()
        .filter_map(|cm| {
            let parsed = parse_checkpoint(cm);
            if parsed.is_none() {
                debug!(configmap = %cm.name_any(), "no readable checkpoint in it (yet)");
            }
            Some((cm.name_any(), parsed?))
        })
        .collect())
}

/// The checkpoint in a ConfigMap the worker wrote; `None` when absent or unreadable.
pub fn parse_checkpoint(cm: &ConfigMap) -> Option<Checkpoint> {
    serde_json::from_str(cm.data.as_ref()?.get(CHECKPOINT_KEY)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_configmap_parses_into_the_contract_type() {
        let json = r#"{"sync":"s","slot":1,"slots":2,"snapshotId":7,"phase":"incremental","epoch":1,"updated":"t","latestSnapshot":9}"#;
        let cm = ConfigMap {
            data: Some(BTreeMap::from([(CHECKPOINT_KEY.to_string(), json.into())])),
            ..Default::default()
        };
        let cp = parse_checkpoint(&cm).unwrap();
        assert_eq!((cp.slot.index, cp.slot.count), (1, 2));
        assert_eq!(cp.point.done_through(), Some(7));
        assert!(parse_checkpoint(&ConfigMap::default()).is_none());
    }
}
