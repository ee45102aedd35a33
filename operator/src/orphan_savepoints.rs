//! Savepoints of a sync that does not exist. A savepoint is served by its sync's reconcile
//! (`reconcile/savepoints.rs`); one that names no sync would stay `Pending` forever, so this
//! small controller fails it, after a grace period in which GitOps may still create the sync.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{ApiResource, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::EventType;
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};
use pms_crds::{PaimonMysqlSync, PaimonMysqlSyncSavepoint, SavepointState, SavepointStatus};
use tracing::warn;

use crate::context::Context;
use crate::error::{Error, Result, Verb};
use crate::reconcile::{publish, waiting};

/// How long a savepoint may name a sync that does not exist before it fails.
pub const GRACE: Duration = Duration::from_secs(30);

/// What to do with a savepoint whose sync is missing, created `age` ago: fail it (its new
/// status), or look again after the rest of the grace period.
pub fn decide(sp: &PaimonMysqlSyncSavepoint, age: Duration) -> Result<SavepointStatus, Duration> {
    if age < GRACE {
        return Err(GRACE - age);
    }
    let mut status = sp.status.clone().unwrap_or_default();
    status.state = SavepointState::Failed;
    status.error = Some(format!(
        "there is no PaimonMysqlSync {:?} in this namespace (spec.syncName)",
        sp.spec.sync_name
    ));
    Ok(status)
}

pub async fn run_controller(client: Client, namespace: Option<&str>, ctx: Arc<Context>) {
    // As dynamic objects: one that doesn't decode must not fail the list (`undecodable.rs`).
    let savepoints = crate::undecodable::api::<PaimonMysqlSyncSavepoint>(&client, namespace);
    let resource = ApiResource::erase::<PaimonMysqlSyncSavepoint>(&());
    Controller::new_with(savepoints, watcher::Config::default(), resource)
        .shutdown_on_signal()
        .run(
            |sp, ctx| crate::undecodable::reconcile(sp, ctx, reconcile, None),
            crate::reconcile::error_policy,
            ctx,
        )
        .for_each(|result| async move {
            match result {
                Err(e) if !waiting(&e) => warn!(error = %e, "reconcile error (savepoint)"),
                _ => {}
            }
        })
        .await
}

async fn reconcile(sp: Arc<PaimonMysqlSyncSavepoint>, ctx: Arc<Context>) -> Result<Action> {
    if sp.status.as_ref().is_some_and(|s| s.state.is_finished()) {
        return Ok(Action::await_change());
    }
    if let Some(leadership) = &ctx.leadership {
        leadership.check().await?;
    }
    let (name, ns) = (sp.name_any(), sp.namespace().unwrap_or_default());
    let syncs: Api<PaimonMysqlSync> = Api::namespaced(ctx.client.clone(), &ns);
    let sync = &sp.spec.sync_name;
    let found = syncs
        .get_opt(sync)
        .await
        .map_err(|e| Error::api::<PaimonMysqlSync>(Verb::Get, &ns, sync, e))?;
    if found.is_some() {
        // Its sync serves it; looked at again now and then, in case the sync goes first.
        return Ok(Action::requeue(GRACE * 10));
    }
    let created = sp.creation_timestamp().map(|t| t.0);
    let age = created
        .map(|t| Timestamp::now().duration_since(t))
        .and_then(|d: SignedDuration| Duration::try_from(d).ok())
        .unwrap_or_default();
    let status = match decide(&sp, age) {
        Ok(status) => status,
        Err(later) => return Ok(Action::requeue(later)),
    };
    let api: Api<PaimonMysqlSyncSavepoint> = Api::namespaced(ctx.client.clone(), &ns);
    let patch = serde_json::json!({ "status": status });
    api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| Error::api::<PaimonMysqlSyncSavepoint>(Verb::PatchStatus, &ns, &name, e))?;
    let why = status.error.unwrap_or_default();
    publish(
        &ctx,
        sp.as_ref(),
        EventType::Warning,
        "SavepointFailed",
        format!("{name}: {why}"),
    )
    .await;
    Ok(Action::await_change())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pms_crds::PaimonMysqlSyncSavepointSpec;

    #[test]
    fn a_savepoint_of_a_missing_sync_fails_after_the_grace_period() {
        let sp = PaimonMysqlSyncSavepoint::new(
            "before-upgrade",
            PaimonMysqlSyncSavepointSpec {
                sync_name: "gone".into(),
            },
        );
        assert_eq!(
            decide(&sp, Duration::from_secs(10)),
            Err(Duration::from_secs(20))
        );
        let status = decide(&sp, GRACE).expect("failed");
        assert_eq!(status.state, SavepointState::Failed);
        assert!(status
            .error
            .unwrap()
            .contains("no PaimonMysqlSync \"gone\""));
    }
}
