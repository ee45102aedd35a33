//! Objects of the operator's own kinds that it can't decode into their Rust types (a value the
//! CRD admitted under an older, looser schema; a hand-edited stored object).
//!
//! kube-rs decodes a LIST as one document, so one such object in a typed watch fails the whole
//! list: after a restart no sync of the namespace would be reconciled, nor deleted (their
//! finalizers wait on a reconcile). The controllers therefore watch their kinds as
//! `DynamicObject`s and decode each one on its own here: an object that decodes is reconciled
//! as usual; one that doesn't is reported (a Warning Event on it, its `Ready` condition, a log
//! line naming it and the error, `pms_operator_undecodable_objects`) and otherwise left alone,
//! its workers running as they were, until it is corrected or deleted.

use std::future::Future;
use std::sync::Arc;

use kube::api::{ApiResource, DynamicObject, ListParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::json;
use tracing::warn;

use crate::context::Context;
use crate::error::{Error, Result, Verb};
use crate::reconcile::FINALIZER;

/// The API of kind `K` as dynamic objects, in `namespace` or all of them.
pub fn api<K: Resource<DynamicType = ()>>(
    client: &Client,
    namespace: Option<&str>,
) -> Api<DynamicObject> {
    let resource = ApiResource::erase::<K>(&());
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    }
}

/// A controller's main stream of kind `K` (as dynamic objects, reflected into the store it
/// returns, with the kind's `ApiResource`): the objects whose spec or deletion changed, not each
/// write of their status or annotations (which a reconcile makes itself).
pub fn spec_changes<K: Resource<DynamicType = ()>>(
    client: &Client,
    namespace: Option<&str>,
) -> (
    impl futures::Stream<Item = std::result::Result<DynamicObject, kube::runtime::watcher::Error>>,
    kube::runtime::reflector::Store<DynamicObject>,
    ApiResource,
) {
    use kube::runtime::{reflector, watcher, WatchStreamExt};
    let resource = ApiResource::erase::<K>(&());
    let writer = reflector::store::Writer::new(resource.clone());
    let store = writer.as_reader();
    let changes = watcher(api::<K>(client, namespace), watcher::Config::default())
        .default_backoff()
        .reflect(writer)
        .applied_objects()
        .predicate_filter(crate::watch_keys::spec_or_deletion, Default::default());
    (changes, store, resource)
}

/// `object` decoded as `K`, or why not: the field and what it holds (decoded from JSON text,
/// which names the value; the workspace's arbitrary-precision numbers would say only
/// "invalid number").
pub fn decode<K: DeserializeOwned>(object: &DynamicObject) -> std::result::Result<K, String> {
    let text = serde_json::to_string(object).map_err(|e| e.to_string())?;
    let mut json = serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(&mut json).map_err(|e| {
        // The text's line and column mean nothing to the reader: the field's path does.
        let inner = e.inner().to_string();
        let inner = inner
            .split(" at line ")
            .next()
            .unwrap_or_default()
            .to_string();
        format!("{}: {inner}", e.path())
    })
}

/// Every object of kind `K` that `objects` holds and that decodes (the others are left out).
pub fn decodable<K: DeserializeOwned>(objects: impl IntoIterator<Item = DynamicObject>) -> Vec<K> {
    objects
        .into_iter()
        .filter_map(|o| decode::<K>(&o).ok())
        .collect()
}

/// The objects of kind `K` in `ns` that `params` selects and that decode (one that doesn't
/// is reported by its own controller; here it is left out, not failing the list).
pub async fn list<K: Resource<DynamicType = ()> + DeserializeOwned>(
    client: &Client,
    ns: &str,
    params: &ListParams,
) -> Result<Vec<K>> {
    let list = api::<K>(client, Some(ns)).list(params).await.map_err(|e| {
        let selector = params.label_selector.clone().unwrap_or_default();
        Error::api::<K>(Verb::List, ns, &selector, e)
    })?;
    Ok(decodable(list.items))
}

/// What to do about an object that can't be decoded while it is deleted: the cleanup that
/// needs only its namespace, name and how long ago its deletion was asked for (`Some(left)`:
/// pods still stopping, come back).
pub type NameOnlyCleanup =
    fn(
        Arc<Context>,
        String,
        String,
        std::time::Duration,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<Option<usize>>> + Send>>;

/// Reconciles `object` decoded as `K` with `reconcile`, or reports it (see the module).
/// `cleanup` runs when an undecodable object holding the operator's finalizer is deleted, before
/// the finalizer is removed (`None`: the kind has no finalizer).
pub async fn reconcile<K, F, Fut>(
    object: Arc<DynamicObject>,
    ctx: Arc<Context>,
    reconcile: F,
    cleanup: Option<NameOnlyCleanup>,
) -> Result<Action>
where
    K: Resource<DynamicType = ()> + DeserializeOwned,
    F: FnOnce(Arc<K>, Arc<Context>) -> Fut,
    Fut: Future<Output = Result<Action>>,
{
    let kind = K::kind(&()).to_string();
    let (ns, name) = (object.namespace().unwrap_or_default(), object.name_any());
    match decode::<K>(&object) {
        Ok(decoded) => {
            ctx.metrics.undecodable(&kind, &ns, &name, false);
            reconcile(Arc::new(decoded), ctx).await
        }
        Err(error) => {
            let resource = ApiResource::erase::<K>(&());
            let report = Undecodable {
                object: &object,
                resource: &resource,
                kind: &kind,
                ns: &ns,
                name: &name,
            };
            report.handle(&ctx, &error, cleanup).await
        }
    }
}

struct Undecodable<'a> {
    object: &'a DynamicObject,
    resource: &'a ApiResource,
    kind: &'a str,
    ns: &'a str,
    name: &'a str,
}

impl Undecodable<'_> {
    async fn handle(
        &self,
        ctx: &Arc<Context>,
        error: &str,
        cleanup: Option<NameOnlyCleanup>,
    ) -> Result<Action> {
        let (kind, ns, name) = (self.kind, self.ns, self.name);
        let finalized = self.object.finalizers().iter().any(|f| f == FINALIZER);
        if self.object.meta().deletion_timestamp.is_some() {
            if let (true, Some(cleanup)) = (finalized, cleanup) {
                let since = crate::reconcile::deleting_for(self.object);
                if let Some(left) =
                    cleanup(ctx.clone(), ns.to_string(), name.to_string(), since).await?
                {
                    return Err(Error::Waiting(format!(
                        "{left} worker pod(s) of the undecodable {kind} {ns}/{name} still stopping"
                    )));
                }
                self.remove_finalizer(ctx).await?;
                self.publish(
                    ctx,
                    "DeletedUndecodable",
                    format!(
                        "deleted without reading its spec ({error}): its workers were removed, its checkpoints kept \
                         (remove them by hand if they are not wanted)"
                    ),
                )
                .await;
            }
            ctx.metrics.undecodable(kind, ns, name, false);
            return Ok(Action::await_change());
        }
        warn!(kind, namespace = ns, name, %error,
              "can't decode this object: it is left as it is (the rest are reconciled) until it is corrected");
        ctx.metrics.undecodable(kind, ns, name, true);
        let message = format!(
            "the operator can't read this {kind}: {error}. Nothing of it is reconciled (its workers, if any, run on \
             as they were) until the value is corrected; the CRD's current schema refuses such values"
        );
        self.publish(ctx, "Undecodable", message.clone()).await;
        // The kinds with a finalizer get it here too, so that a delete goes through the cleanup
        // above (and the metric's series goes with the object).
        if cleanup.is_some() && !finalized {
            self.add_finalizer(ctx).await?;
        }
        if cleanup.is_some() {
            self.patch_ready_condition(ctx, &message).await?;
        }
        Ok(Action::await_change())
    }

    fn api(&self, ctx: &Context) -> Api<DynamicObject> {
        Api::namespaced_with(ctx.client.clone(), self.ns, self.resource)
    }

    fn api_error(&self, verb: Verb, source: kube::Error) -> Error {
        Error::Api {
            verb,
            kind: self.kind.to_string(),
            namespace: self.ns.to_string(),
            name: self.name.to_string(),
            source: Box::new(source),
        }
    }

    async fn publish(&self, ctx: &Context, reason: &str, note: String) {
        let event = Event {
            type_: EventType::Warning,
            reason: reason.into(),
            note: Some(note),
            action: "Decode".into(),
            secondary: None,
        };
        let reference = self.object.object_ref(self.resource);
        if let Err(e) = ctx.recorder.publish(&event, &reference).await {
            warn!(kind = self.kind, namespace = self.ns, name = self.name, error = %e, "could not publish an event");
        }
    }

    /// `Ready=False` (reason `Undecodable`), the only condition: the others were about a spec
    /// the operator can no longer read. Written only when it says something new.
    async fn patch_ready_condition(&self, ctx: &Context, message: &str) -> Result<()> {
        let current = self
            .object
            .data
            .pointer("/status/conditions")
            .and_then(|c| c.as_array())
            .and_then(|c| c.iter().find(|c| c["type"] == "Ready"));
        if current.is_some_and(|c| c["reason"] == "Undecodable" && c["message"] == message) {
            return Ok(());
        }
        let now = k8s_openapi::jiff::Timestamp::now().to_string();
        let status = json!({"status": {"conditions": [{
            "type": "Ready",
            "status": "False",
            "reason": "Undecodable",
            "message": message,
            "lastTransitionTime": now,
            "observedGeneration": self.object.meta().generation,
        }]}});
        self.api(ctx)
            .patch_status(self.name, &PatchParams::default(), &Patch::Merge(&status))
            .await
            .map(drop)
            .map_err(|e| self.api_error(Verb::PatchStatus, e))
    }

    async fn add_finalizer(&self, ctx: &Context) -> Result<()> {
        let mut finalizers = self.object.finalizers().to_vec();
        finalizers.push(FINALIZER.to_string());
        self.set_finalizers(ctx, finalizers).await
    }

    async fn remove_finalizer(&self, ctx: &Context) -> Result<()> {
        let finalizers = self
            .object
            .finalizers()
            .iter()
            .filter(|f| *f != FINALIZER)
            .cloned()
            .collect();
        self.set_finalizers(ctx, finalizers).await
    }

    /// Sets the finalizers, only over the version read (a test of the resourceVersion), as
    /// kube's finalizer helper does.
    async fn set_finalizers(&self, ctx: &Context, finalizers: Vec<String>) -> Result<()> {
        let patch = json!({"metadata": {
            "finalizers": finalizers,
            "resourceVersion": self.object.resource_version(),
        }});
        match self
            .api(ctx)
            .patch(self.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 => {
                Err(Error::Changed(format!("{}/{}", self.ns, self.name)))
            }
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => Err(self.api_error(Verb::Patch, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pms_crds::PaimonMysqlSync;

    #[test]
    fn a_value_that_does_not_decode_is_named_with_its_field() {
        let object = |max_rows: &str| -> DynamicObject {
            serde_json::from_str(&format!(
                r#"{{"apiVersion": "paimonsync.io/v1alpha1", "kind": "PaimonMysqlSync",
                    "metadata": {{"name": "s", "namespace": "ns"}},
                    "spec": {{"source": {{"warehouse": "/w", "database": "d", "table": "t"}},
                              "sink": {{"url": "mysql://h/d", "table": "t", "maxRows": {max_rows}}}}}}}"#
            ))
            .unwrap()
        };
        let good: PaimonMysqlSync = decode(&object("4294967295")).unwrap();
        assert_eq!(good.spec.sink.max_rows, Some(4294967295));
        let why = decode::<PaimonMysqlSync>(&object("4294967296")).unwrap_err();
        assert!(
            why.contains("spec.sink.maxRows") && why.contains("4294967296"),
            "{why}"
        );
        let objects = [object("1"), object("4294967296"), object("2")];
        assert_eq!(decodable::<PaimonMysqlSync>(objects).len(), 2);
    }
}
