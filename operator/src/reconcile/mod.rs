//! One reconcile of one `PaimonMysqlSync`: validate → build → apply → status, behind a
//! finalizer that cleans up what ownerReferences alone would not.

mod apply;
pub mod build;
pub mod names;
pub mod status;
mod validate;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, ObjectReference, Secret};
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType, Recorder};
use kube::runtime::finalizer::{finalizer, Event as Finalizer};
use kube::{Api, Resource, ResourceExt};
use pms_crds::{PaimonMysqlSync, PaimonMysqlSyncStatus};
use tracing::{info, warn};

use crate::context::Context;
use crate::error::{Error, Result};

pub const FINALIZER: &str = "paimonsync.io/cleanup";

pub async fn reconcile(pms: Arc<PaimonMysqlSync>, ctx: Arc<Context>) -> Result<Action> {
    let ns = pms
        .namespace()
        .ok_or_else(|| Error::Invalid("PaimonMysqlSync must be namespaced".into()))?;
    let api: Api<PaimonMysqlSync> = Api::namespaced(ctx.client.clone(), &ns);
    let result = finalizer(&api, FINALIZER, pms, |event| async {
        match event {
            Finalizer::Apply(pms) => apply_sync(&pms, &ctx, &ns).await,
            Finalizer::Cleanup(pms) => cleanup(&pms, &ctx, &ns).await,
        }
    })
    .await
    .map_err(|e| match e {
        kube::runtime::finalizer::Error::ApplyFailed(e)
        | kube::runtime::finalizer::Error::CleanupFailed(e) => e,
        other => Error::Finalizer(other.to_string()),
    });
    ctx.metrics
        .reconciles
        .with_label_values(&[if result.is_ok() { "ok" } else { "error" }])
        .inc();
    result
}

pub fn error_policy(pms: Arc<PaimonMysqlSync>, error: &Error, _ctx: Arc<Context>) -> Action {
    warn!(sync = %pms.name_any(), %error, "reconcile failed");
    Action::requeue(Duration::from_secs(5))
}

fn recorder(ctx: &Context) -> Recorder {
    Recorder::new(ctx.client.clone(), ctx.reporter.clone())
}

async fn publish(
    ctx: &Context,
    pms: &PaimonMysqlSync,
    type_: EventType,
    reason: &str,
    note: String,
) {
    let reference: ObjectReference = pms.object_ref(&());
    let event = Event {
        type_,
        reason: reason.into(),
        note: Some(note),
        action: "Reconcile".into(),
        secondary: None,
    };
    if let Err(e) = recorder(ctx).publish(&event, &reference).await {
        warn!(error = %e, "could not publish an event");
    }
}

async fn apply_sync(pms: &PaimonMysqlSync, ctx: &Context, ns: &str) -> Result<Action> {
    let sync = pms.name_any();
    let client = &ctx.client;
    let previous = pms.status.clone();

    // Validate: what the schema can't check. A failure is reported, not retried in a hot loop.
    if let Err(Error::Invalid(why)) =
        validate::referenced_secrets(&Api::<Secret>::namespaced(client.clone(), ns), pms).await
    {
        let status = status::compute(pms, &[], &[], Some(&why), previous.as_ref());
        update_status(ctx, pms, ns, status, previous.as_ref()).await?;
        return Ok(Action::requeue(Duration::from_secs(30)));
    }

    // Build, then apply. RBAC first so the workers can read their config when they start;
    // the Role also names the checkpoints of a previous, larger parallelism (rescale reads them).
    let slots_known = pms
        .spec
        .parallelism
        .max(previous.as_ref().map_or(0, |s| s.slots.len() as u32))
        .max(max_checkpoint_slot(client, ns, &sync).await?);
    apply::apply(client, ns, &build::service_account(pms)).await?;
    apply::apply(client, ns, &build::role(pms, slots_known)).await?;
    apply::apply(client, ns, &build::role_binding(pms)).await?;
    let config = build::worker_config(pms)?;
    let hash = build::config_hash(&config);
    apply::apply(client, ns, &config).await?;
    apply::apply(client, ns, &build::metrics_service(pms, &ctx.settings)).await?;
    let mut deployments = Vec::new();
    for slot in 0..pms.spec.parallelism {
        deployments.push(Some(
            apply::apply(
                client,
                ns,
                &build::deployment(pms, slot, &hash, &ctx.settings),
            )
            .await?,
        ));
    }
    let stale = apply::delete_stale_slots(client, ns, &sync, pms.spec.parallelism).await?;
    if !stale.is_empty() {
        publish(
            ctx,
            pms,
            EventType::Normal,
            "SlotsRemoved",
            format!("deleted {}", stale.join(", ")),
        )
        .await;
    }

    // Status from the workers' checkpoints.
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let mut checkpoints = Vec::new();
    for slot in 0..pms.spec.parallelism {
        checkpoints.push(
            cms.get_opt(&names::checkpoint(&sync, slot))
                .await?
                .as_ref()
                .and_then(status::parse_checkpoint),
        );
    }
    let status = status::compute(pms, &deployments, &checkpoints, None, previous.as_ref());
    update_status(ctx, pms, ns, status, previous.as_ref()).await?;
    Ok(Action::requeue(Duration::from_secs(15)))
}

/// The highest slot count any existing checkpoint was written for.
async fn max_checkpoint_slot(client: &kube::Client, ns: &str, sync: &str) -> Result<u32> {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let list = cms
        .list(&kube::api::ListParams::default().labels(&names::selector(sync, "checkpoint")))
        .await?;
    Ok(list
        .items
        .iter()
        .filter_map(status::parse_checkpoint)
        .map(|c| c.slots)
        .max()
        .unwrap_or(0))
}

async fn update_status(
    ctx: &Context,
    pms: &PaimonMysqlSync,
    ns: &str,
    status: PaimonMysqlSyncStatus,
    previous: Option<&PaimonMysqlSyncStatus>,
) -> Result<()> {
    let old_phase = previous.and_then(|p| p.phase.clone());
    if old_phase != status.phase {
        let new = status.phase.clone().unwrap_or_default();
        let (type_, note) = match new.as_str() {
            "Failed" | "Degraded" => (
                EventType::Warning,
                status
                    .conditions
                    .iter()
                    .find(|c| c.type_ == "Degraded")
                    .map(|c| c.message.clone())
                    .unwrap_or_default(),
            ),
            _ => (
                EventType::Normal,
                format!("{} → {new}", old_phase.as_deref().unwrap_or("new")),
            ),
        };
        info!(sync = %pms.name_any(), from = ?old_phase, to = %new, "phase changed");
        publish(ctx, pms, type_, &new, note).await;
    }
    if previous == Some(&status) {
        return Ok(());
    }
    let api: Api<PaimonMysqlSync> = Api::namespaced(ctx.client.clone(), ns);
    let patch = serde_json::json!({"apiVersion": "paimonsync.io/v1alpha1", "kind": "PaimonMysqlSync", "status": status});
    api.patch_status(
        &pms.name_any(),
        &PatchParams::apply(names::MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await?;
    Ok(())
}

async fn cleanup(pms: &PaimonMysqlSync, ctx: &Context, ns: &str) -> Result<Action> {
    let keep = pms.spec.checkpoint.retain_on_delete;
    apply::delete_all(&ctx.client, ns, &pms.name_any(), keep).await?;
    publish(
        ctx,
        pms,
        EventType::Normal,
        "Deleted",
        format!(
            "removed the workers{}",
            if keep {
                ", kept the checkpoints"
            } else {
                " and their checkpoints"
            }
        ),
    )
    .await;
    Ok(Action::await_change())
}
