//! Where a sync's checkpoints, and its savepoints' data, live: ConfigMaps (the default), or S3
//! objects (`checkpoint.storage: s3`) that the operator reads and writes with the sync's
//! `checkpoint.s3.credentialsSecretRef` (else its own `AWS_*` environment).
//!
//! S3 objects have no watch: a sync on S3 waiting on its checkpoints is looked at again every
//! few seconds instead (`crate::s3_watch`). Savepoint data on S3 has no owner reference either: the data of
//! savepoints that no longer exist is deleted by the next reconcile of their sync.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client};
use pms_crds::contract::{
    self, checkpoint_object_slot, savepoint_object, savepoint_objects, Checkpoint,
};
use pms_crds::{CheckpointStorage, PaimonMysqlSync};
use pms_runtime::s3::{S3Error, S3Prefix, S3Target};
use tracing::{debug, info};

use crate::error::{Error, Result};

/// S3 checkpoint objects read before, by name: the version read and what it held.
pub type ObjectCache = BTreeMap<String, (String, Option<Checkpoint>)>;

#[derive(Clone, Default)]
pub enum CheckpointStore {
    #[default]
    ConfigMaps,
    S3(S3Prefix),
}

impl std::fmt::Debug for CheckpointStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckpointStore::ConfigMaps => write!(f, "ConfigMaps"),
            CheckpointStore::S3(p) => write!(f, "S3({})", p.url("")),
        }
    }
}

/// `checkpoint.s3.credentialsSecretRef`'s name, when set.
pub fn checkpoint_secret_name(pms: &PaimonMysqlSync) -> Option<&str> {
    let s3 = pms.spec.checkpoint.s3.as_ref()?;
    Some(s3.credentials_secret_ref.as_ref()?.name.as_str())
}

impl CheckpointStore {
    /// The store `pms` names, reading its Secret (for a deletion; a reconcile has it already).
    pub async fn of(client: &Client, ns: &str, pms: &PaimonMysqlSync) -> Result<Option<Self>> {
        let secret = match checkpoint_secret_name(pms) {
            Some(name) => {
                let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
                super::secret::get_secret(&secrets, ns, name).await?
            }
            None => None,
        };
        Self::with_secret(pms, secret.as_ref())
    }

    /// The store `pms` names, with `secret` (that of `checkpoint.s3.credentialsSecretRef`, if
    /// any). `None`: the Secret is missing or incomplete (validation says so).
    pub fn with_secret(pms: &PaimonMysqlSync, secret: Option<&Secret>) -> Result<Option<Self>> {
        let checkpoint = &pms.spec.checkpoint;
        let (Some(CheckpointStorage::S3), Some(s3)) = (checkpoint.storage, &checkpoint.s3) else {
            return Ok(Some(CheckpointStore::ConfigMaps));
        };
        let (access_key_id, secret_access_key, session_token) = match &s3.credentials_secret_ref {
            Some(_) => {
                let value = |key: &str| {
                    let data = secret?.data.as_ref()?;
                    String::from_utf8(data.get(key)?.0.clone()).ok()
                };
                match (value("accessKeyId"), value("secretAccessKey")) {
                    (Some(id), Some(key)) => (Some(id), Some(key), None),
                    _ => return Ok(None),
                }
            }
            // The operator's own: keys, or the AWS credential chain (its ServiceAccount's cloud
            // identity) when there are none.
            None => (
                std::env::var(contract::ENV_AWS_ACCESS_KEY_ID).ok(),
                std::env::var(contract::ENV_AWS_SECRET_ACCESS_KEY).ok(),
                std::env::var(contract::ENV_AWS_SESSION_TOKEN).ok(),
            ),
        };
        let target = S3Target {
            bucket: s3.bucket.clone(),
            prefix: s3.prefix.clone().unwrap_or_default(),
            endpoint: s3.endpoint.clone(),
            region: s3.region.clone(),
            path_style: s3.path_style,
            access_key_id,
            secret_access_key,
            session_token,
        };
        let location = format!("s3://{}/{}", target.bucket, target.prefix);
        let prefix = S3Prefix::open(&target).map_err(|e| failed("opening", location, e))?;
        Ok(Some(CheckpointStore::S3(prefix)))
    }

    /// The checkpoints of `ns`/`sync` on S3 by slot, named as their ConfigMaps would be; `None`
    /// with ConfigMaps (read with the workers' notes, from the same list). Objects are named
    /// by the sync's external name; a slot not yet moved there is read under its older name.
    pub async fn s3_checkpoints(
        &self,
        ns: &str,
        sync: &str,
    ) -> Result<Option<BTreeMap<String, Checkpoint>>> {
        let Some((listed, _)) = self.s3_listing(ns, sync, true).await? else {
            return Ok(None);
        };
        let found = self
            .checkpoints_among(ns, sync, &listed, &mut ObjectCache::new())
            .await?;
        Ok(Some(found))
    }

    /// The checkpoint objects of `ns`/`sync` on S3 with their versions (a LIST per name: its
    /// external name, and with `legacy` the older one); whether any has the older name. `None`
    /// with ConfigMaps.
    pub async fn s3_listing(
        &self,
        ns: &str,
        sync: &str,
        legacy: bool,
    ) -> Result<Option<(Vec<(String, String)>, bool)>> {
        let CheckpointStore::S3(objects) = self else {
            return Ok(None);
        };
        let mut listed = Vec::new();
        let mut legacy_found = false;
        for (i, of) in object_names(ns, sync).iter().enumerate() {
            if i > 0 && !legacy {
                break;
            }
            let names = objects
                .list_versions("", &format!("{of}-checkpoint-"))
                .await
                .map_err(|e| failed("listing", objects.url(""), e))?;
            legacy_found |= i > 0 && !names.is_empty();
            listed.extend(names);
        }
        Ok(Some((listed, legacy_found)))
    }

    /// `ns`/`sync`'s checkpoints by slot among `listed` (objects with their versions, from
    /// [`Self::s3_listing`]): under the external name first, then the older one for a slot not
    /// found. An object whose version is the one in `cache` is not read again; `cache` is left
    /// holding what was listed.
    pub async fn checkpoints_among(
        &self,
        ns: &str,
        sync: &str,
        listed: &[(String, String)],
        cache: &mut ObjectCache,
    ) -> Result<BTreeMap<String, Checkpoint>> {
        let CheckpointStore::S3(objects) = self else {
            return Ok(BTreeMap::new());
        };
        let mut found = BTreeMap::new();
        let mut kept = ObjectCache::new();
        for of in object_names(ns, sync) {
            for (name, version) in listed {
                let Some(slot) = checkpoint_object_slot(&of, name) else {
                    continue;
                };
                let checkpoint = match cache.remove(name) {
                    Some((seen, checkpoint)) if seen == *version => checkpoint,
                    _ => {
                        let body = objects
                            .read(name)
                            .await
                            .map_err(|e| failed("reading", objects.url(name), e))?;
                        match body.map(|b| serde_json::from_slice::<Checkpoint>(&b)) {
                            Some(Ok(cp)) => Some(cp),
                            other => {
                                debug!(object = %objects.url(name), ?other, "no readable checkpoint in it");
                                None
                            }
                        }
                    }
                };
                if let Some(cp) = &checkpoint {
                    found
                        .entry(contract::checkpoint_name(sync, slot))
                        .or_insert_with(|| cp.clone());
                }
                kept.insert(name.clone(), (version.clone(), checkpoint));
            }
        }
        *cache = kept;
        Ok(found)
    }

    /// Stores savepoint data on S3; `false` with ConfigMaps (the caller applies one).
    pub async fn write_savepoint_data(
        &self,
        ns: &str,
        sync: &str,
        name: &str,
        body: &str,
    ) -> Result<bool> {
        let CheckpointStore::S3(objects) = self else {
            return Ok(false);
        };
        let object = savepoint_object(&contract::external_name(Some(ns), sync), name);
        objects
            .write(&object, body.as_bytes().to_vec())
            .await
            .map_err(|e| failed("writing savepoint data", objects.url(&object), e))?;
        Ok(true)
    }

    /// Deletes the S3 data of `ns`/`sync`'s savepoints not in `existing` (only under its
    /// external name: data of an older release's savepoints, under the bare name, may be
    /// another namespace's, and is left alone).
    pub async fn forget_savepoints(&self, ns: &str, sync: &str, existing: &[String]) -> Result<()> {
        let CheckpointStore::S3(objects) = self else {
            return Ok(());
        };
        let dir = savepoint_objects(&contract::external_name(Some(ns), sync));
        let names = objects
            .list(&dir, "")
            .await
            .map_err(|e| failed("listing", objects.url(&dir), e))?;
        for name in names {
            let savepoint = name.trim_end_matches(".json");
            if existing.iter().any(|e| e == savepoint) {
                continue;
            }
            let object = format!("{dir}{name}");
            info!(%sync, %savepoint, object = %objects.url(&object), "deleting the data of a savepoint that is gone");
            self.delete(&object).await?;
        }
        Ok(())
    }

    /// Deletes the checkpoints of `ns`/`sync` on S3 (its rebuilds' too). Not those under the
    /// bare name of an older release: they may be another namespace's sync of that name (a
    /// worker moves its own to the external name at its first checkpoint).
    pub async fn delete_checkpoints(&self, ns: &str, sync: &str) -> Result<()> {
        let CheckpointStore::S3(objects) = self else {
            return Ok(());
        };
        let rebuild = contract::rebuild_name(sync);
        for of in [sync, rebuild.as_str()] {
            let of = contract::external_name(Some(ns), of);
            let of = of.as_str();
            let names = objects
                .list("", &format!("{of}-checkpoint-"))
                .await
                .map_err(|e| failed("listing", objects.url(""), e))?;
            for name in names
                .iter()
                .filter(|n| checkpoint_object_slot(of, n).is_some())
            {
                self.delete(name).await?;
            }
        }
        Ok(())
    }

    async fn delete(&self, name: &str) -> Result<()> {
        let CheckpointStore::S3(objects) = self else {
            return Ok(());
        };
        objects
            .delete(name)
            .await
            .map_err(|e| failed("deleting", objects.url(name), e))
    }
}

/// The store at `location` failed `what`.
/// What `ns`/`sync`'s objects on S3 are named by: its external name, then the bare name an
/// older release used (see `contract::external_name`).
fn object_names(ns: &str, sync: &str) -> Vec<String> {
    let mut names = vec![contract::external_name(Some(ns), sync)];
    names.extend(contract::legacy_external_name(Some(ns), sync));
    names
}

fn failed(what: &'static str, location: String, e: S3Error) -> Error {
    Error::S3 {
        what,
        location,
        message: e.to_string(),
    }
}
