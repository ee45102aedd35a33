//! Fencing a leader that was frozen. The Lease says who may reconcile, but a leader paused
//! past its Lease (SIGSTOP, a stalled node, a long GC-like stall) resumes with reconciles in
//! flight before its lease task notices another replica took over. So every reconcile first
//! checks that this replica still holds the Lease, and a status write is conditional on the
//! resource version the reconcile read: a stale leader's writes are refused, not applied.

use std::sync::Arc;

use k8s_openapi::api::coordination::v1::Lease;
use kube::{Api, Client};
use tokio::sync::Notify;

use crate::error::{Error, Result, Verb};

#[derive(Clone)]
pub struct Leadership {
    leases: Api<Lease>,
    name: String,
    identity: String,
    /// Woken when a check finds another holder: the process stops (and restarts as standby).
    pub lost: Arc<Notify>,
}

impl Leadership {
    pub fn new(client: Client, namespace: &str, name: &str, identity: &str) -> Self {
        Self {
            leases: Api::namespaced(client, namespace),
            name: name.into(),
            identity: identity.into(),
            lost: Arc::new(Notify::new()),
        }
    }

    /// Ok while this replica holds the Lease (read from the API server, not a cache).
    pub async fn check(&self) -> Result<()> {
        let lease = self.leases.get(&self.name).await.map_err(|e| {
            Error::api::<Lease>(
                Verb::Get,
                self.leases.namespace().unwrap_or_default(),
                &self.name,
                e,
            )
        })?;
        let holder = lease.spec.and_then(|s| s.holder_identity);
        if holder.as_deref() == Some(self.identity.as_str()) {
            return Ok(());
        }
        self.lost.notify_one();
        Err(Error::NotLeader {
            holder: holder.unwrap_or_else(|| "nobody".into()),
        })
    }
}
