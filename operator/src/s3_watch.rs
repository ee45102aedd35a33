//! Checkpoints on S3 have no watch. This poller stands in for one: every few seconds it lists
//! the checkpoints of each sync that keeps them on S3 (requests to S3 only, none to the API
//! server), reads those whose version changed, and starts a reconcile when what the operator
//! decides by changed, by the rule the ConfigMap watch filters with
//! ([`crate::watch_keys::checkpoints_key`]). So an S3 sync's status follows each snapshot
//! applied, and a pause or rescale its slots acknowledge, as promptly as a ConfigMap sync's.
//! An idle sync costs one LIST per poll: its objects are read only when they change, and its
//! checkpoints' older names (of a release before namespaces) are listed only until none is left.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::Stream;
use kube::runtime::reflector::ObjectRef;
use pms_crds::contract::Checkpoint;
use pms_crds::PaimonMysqlSync;
use tokio::sync::broadcast;
use tracing::debug;

use crate::reconcile::store::{CheckpointStore, ObjectCache};
use crate::watch_keys::checkpoints_key;

/// How often the S3 checkpoints are read.
pub const EVERY: Duration = Duration::from_secs(3);

pub struct S3Watch {
    /// By `(namespace, name)`: where the sync's checkpoints are and the key the last
    /// reconcile (or poll) saw.
    syncs: Mutex<BTreeMap<(String, String), Watched>>,
    trigger: broadcast::Sender<ObjectRef<PaimonMysqlSync>>,
}

struct Watched {
    store: CheckpointStore,
    key: u64,
    /// The checkpoint objects as last polled.
    objects: ObjectCache,
    /// Whether a poll found checkpoints under the older name (until one finds none).
    legacy: bool,
}

impl S3Watch {
    pub fn new() -> Arc<Self> {
        let (trigger, _) = broadcast::channel(1024);
        Arc::new(Self {
            syncs: Mutex::new(BTreeMap::new()),
            trigger,
        })
    }

    /// The syncs to reconcile of namespace `ns` (`None`: all), for `Controller::reconcile_on`.
    pub fn triggers(&self, ns: Option<&str>) -> impl Stream<Item = ObjectRef<PaimonMysqlSync>> {
        crate::triggers::in_namespace(&self.trigger, ns)
    }

    /// After a reconcile: the checkpoints it decided by (a sync that keeps them elsewhere
    /// is not polled).
    pub fn saw(
        &self,
        ns: &str,
        name: &str,
        store: &CheckpointStore,
        checkpoints: &BTreeMap<String, Checkpoint>,
    ) {
        let id = (ns.to_string(), name.to_string());
        let mut syncs = self.syncs.lock().unwrap_or_else(|p| p.into_inner());
        match store {
            CheckpointStore::S3(_) => {
                let key = checkpoints_key(checkpoints);
                let store = store.clone();
                let (objects, legacy) = syncs
                    .remove(&id)
                    .map_or((ObjectCache::new(), true), |w| (w.objects, w.legacy));
                syncs.insert(
                    id,
                    Watched {
                        store,
                        key,
                        objects,
                        legacy,
                    },
                );
            }
            CheckpointStore::ConfigMaps => {
                syncs.remove(&id);
            }
        }
    }

    /// A deleted sync is polled no more.
    pub fn forget(&self, ns: &str, name: &str) {
        let mut syncs = self.syncs.lock().unwrap_or_else(|p| p.into_inner());
        syncs.remove(&(ns.to_string(), name.to_string()));
    }

    /// Polls until the operator stops.
    pub async fn run(self: Arc<Self>) {
        loop {
            tokio::time::sleep(EVERY).await;
            self.poll_once().await;
        }
    }

    /// One poll of every watched sync.
    pub async fn poll_once(&self) {
        // Read without the lock held (S3 requests take time).
        let polled: Vec<_> = (self.syncs.lock().unwrap_or_else(|p| p.into_inner()))
            .iter()
            .map(|(id, w)| (id.clone(), w.store.clone(), w.objects.clone(), w.legacy))
            .collect();
        for ((ns, name), store, mut objects, legacy) in polled {
            let found = async {
                let (listed, legacy) = store
                    .s3_listing(&ns, &name, legacy)
                    .await?
                    .unwrap_or_default();
                let found = store
                    .checkpoints_among(&ns, &name, &listed, &mut objects)
                    .await?;
                Ok::<_, crate::error::Error>((found, legacy))
            };
            let (found, legacy) = match found.await {
                Ok(found) => found,
                // The reconcile reads them too and reports a failure.
                Err(e) => {
                    debug!(%ns, sync = %name, error = %e, "could not poll the checkpoints on S3");
                    continue;
                }
            };
            if self.polled(&ns, &name, checkpoints_key(&found), objects, legacy) {
                // No receiver yet (the controller starts): the resync looks anyway.
                let _ = self.trigger.send(ObjectRef::new(&name).within(&ns));
            }
        }
    }

    /// Records a poll of a sync still watched; whether its key changed.
    fn polled(&self, ns: &str, name: &str, key: u64, objects: ObjectCache, legacy: bool) -> bool {
        let mut syncs = self.syncs.lock().unwrap_or_else(|p| p.into_inner());
        let Some(w) = syncs.get_mut(&(ns.to_string(), name.to_string())) else {
            return false;
        };
        w.objects = objects;
        w.legacy = legacy;
        std::mem::replace(&mut w.key, key) != key
    }
}
