//! Checkpoints on S3 have no watch. This poller stands in for one: every few seconds it reads
//! the checkpoints of each sync that keeps them on S3 (requests to S3 only, none to the API
//! server) and starts a reconcile when what the operator decides by changed, by the rule the
//! ConfigMap watch filters with ([`crate::watch_keys::checkpoints_key`]). So an S3 sync's
//! status follows each snapshot applied, and a pause or rescale its slots acknowledge, as
//! promptly as a ConfigMap sync's.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::Stream;
use kube::runtime::reflector::ObjectRef;
use pms_crds::contract::Checkpoint;
use pms_crds::PaimonMysqlSync;
use tokio::sync::broadcast;
use tracing::debug;

use crate::reconcile::store::CheckpointStore;
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
                syncs.insert(id, Watched { store, key });
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
            // Read without the lock held (S3 requests take time).
            let stores: Vec<_> = (self.syncs.lock().unwrap_or_else(|p| p.into_inner()))
                .iter()
                .map(|(id, w)| (id.clone(), w.store.clone()))
                .collect();
            for ((ns, name), store) in stores {
                let found = match store.s3_checkpoints(&ns, &name).await {
                    Ok(found) => found.unwrap_or_default(),
                    // The reconcile reads them too and reports a failure.
                    Err(e) => {
                        debug!(%ns, sync = %name, error = %e, "could not poll the checkpoints on S3");
                        continue;
                    }
                };
                if self.changed(&ns, &name, checkpoints_key(&found)) {
                    // No receiver yet (the controller starts): the resync looks anyway.
                    let _ = self.trigger.send(ObjectRef::new(&name).within(&ns));
                }
            }
        }
    }

    /// Records `key` for a sync still watched; whether it was another.
    fn changed(&self, ns: &str, name: &str, key: u64) -> bool {
        let mut syncs = self.syncs.lock().unwrap_or_else(|p| p.into_inner());
        let id = (ns.to_string(), name.to_string());
        match syncs.get_mut(&id) {
            Some(w) if w.key != key => {
                w.key = key;
                true
            }
            _ => false,
        }
    }
}
