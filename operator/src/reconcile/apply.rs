//! Applies the built objects with server-side apply (our own field manager), and deletes what
//! a smaller parallelism or a deleted resource left behind.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Service, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::names::{self, MANAGER, SLOT_LABEL};
use crate::error::Result;

/// A namespaced Kubernetes object we can apply, list and delete.
pub trait Namespaced:
    Resource<Scope = k8s_openapi::NamespaceResourceScope>
    + Clone
    + std::fmt::Debug
    + Serialize
    + DeserializeOwned
{
}

impl<K> Namespaced for K where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + std::fmt::Debug
        + Serialize
        + DeserializeOwned
{
}

pub async fn apply<K>(client: &Client, namespace: &str, obj: &K) -> Result<K>
where
    K: Namespaced,
    K::DynamicType: Default,
{
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    let params = PatchParams::apply(MANAGER).force();
    Ok(api
        .patch(&obj.name_any(), &params, &Patch::Apply(obj))
        .await?)
}

/// Deletes the worker Deployments of slots `>= slots`.
pub async fn delete_stale_slots(
    client: &Client,
    namespace: &str,
    sync: &str,
    slots: u32,
) -> Result<Vec<String>> {
    let api: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let mut deleted = Vec::new();
    for d in api
        .list(&ListParams::default().labels(&names::selector(sync, "worker")))
        .await?
    {
        let slot: Option<u32> = d.labels().get(SLOT_LABEL).and_then(|s| s.parse().ok());
        if slot.is_none_or(|s| s >= slots) {
            api.delete(&d.name_any(), &DeleteParams::foreground())
                .await?;
            deleted.push(d.name_any());
        }
    }
    Ok(deleted)
}

/// Everything labelled as this sync's (what ownerReferences would collect, without relying on
/// a garbage collector), plus the checkpoint ConfigMaps unless they are to be kept.
pub async fn delete_all(
    client: &Client,
    namespace: &str,
    sync: &str,
    keep_checkpoints: bool,
) -> Result<()> {
    let lp = ListParams::default().labels(&format!("{}={sync}", names::SYNC_LABEL));
    async fn delete_matching<K>(
        client: &Client,
        ns: &str,
        lp: &ListParams,
        keep: impl Fn(&K) -> bool,
    ) -> Result<()>
    where
        K: Namespaced,
        K::DynamicType: Default,
    {
        let api: Api<K> = Api::namespaced(client.clone(), ns);
        for o in api.list(lp).await? {
            if !keep(&o) {
                match api.delete(&o.name_any(), &DeleteParams::background()).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(s)) if s.code == 404 => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Ok(())
    }
    delete_matching::<Deployment>(client, namespace, &lp, |_| false).await?;
    delete_matching::<Service>(client, namespace, &lp, |_| false).await?;
    delete_matching::<RoleBinding>(client, namespace, &lp, |_| false).await?;
    delete_matching::<Role>(client, namespace, &lp, |_| false).await?;
    delete_matching::<ServiceAccount>(client, namespace, &lp, |_| false).await?;
    delete_matching::<ConfigMap>(client, namespace, &lp, |cm| {
        keep_checkpoints
            && cm.labels().get(names::COMPONENT_LABEL).map(String::as_str) == Some("checkpoint")
    })
    .await
}
