//! `kubectl pms report`: what a bug report needs, in one YAML document, secrets redacted. Of a
//! sync or a database sync: the resource, its savepoints, the events of it and of its objects
//! (Deployments, pods, Jobs), its pods with their logs' ends, and the operator's lines about it.
//! Secrets are never read; a URL's password and every secret-named value are replaced wherever
//! they show.

use k8s_openapi::api::core::v1::Event;
use kube::api::ListParams;
use kube::ResourceExt;
use serde_json::{json, Value};

use crate::commands::{api, document, resource_value, Ctx, Output, Result, Target};
use crate::logs::{lines_naming, operator_pods, pod_logs, pods_of, LogOptions};

pub async fn print(ctx: &Ctx, name: &str) -> Result<String> {
    let target = ctx.target(name).await?;
    let (kind, resource) = match &target {
        Target::Sync(pms) => ("sync", resource_value(pms)),
        Target::Database(pmds) => ("databaseSync", resource_value(pmds)),
    };
    let savepoints: Vec<_> = ctx
        .savepoints()
        .await?
        .into_iter()
        .filter(|s| s.spec.sync_name == name)
        .collect();
    let pods = pods_of(ctx, &target, None).await?;
    let tail = LogOptions {
        tail: Some(100),
        ..Default::default()
    };
    let logs: serde_json::Map<String, Value> = pod_logs(ctx, &pods, &tail)
        .await
        .into_iter()
        .map(|(pod, log)| (pod, json!(log)))
        .collect();
    // The operator's lines naming the sync, from further back: it logs less per sync.
    let operator_tail = LogOptions {
        tail: Some(2000),
        ..Default::default()
    };
    let operator_logs: serde_json::Map<String, Value> =
        pod_logs(ctx, &operator_pods(ctx).await?, &operator_tail)
            .await
            .into_iter()
            .map(|(pod, log)| (pod, json!(lines_naming(&log, name))))
            .collect();
    let pod_states: Vec<_> = pods
        .iter()
        .map(|p| json!({"name": p.metadata.name, "status": p.status}))
        .collect();
    let report = json!({
        "kubectlPmsVersion": env!("CARGO_PKG_VERSION"),
        kind: resource,
        "savepoints": savepoints,
        "events": events(ctx, name).await?,
        "pods": pod_states,
        "logs": logs,
        "operatorLogs": operator_logs,
    });
    Ok(document(&report, Output::Yaml))
}

/// The namespace's events about the sync or one of its objects (named `<sync>-…`: slots'
/// Deployments and pods, Jobs, ConfigMaps), oldest first.
async fn events(ctx: &Ctx, name: &str) -> Result<Vec<Value>> {
    let mut events = kube::Api::<Event>::namespaced(ctx.client.clone(), &ctx.ns)
        .list(&ListParams::default())
        .await
        .map_err(|source| api(format!("list events in {}", ctx.ns), source))?
        .items;
    let prefix = format!("{name}-");
    events.retain(|e| {
        e.involved_object
            .name
            .as_deref()
            .is_some_and(|o| o == name || o.starts_with(&prefix))
    });
    events.sort_by_key(|e| e.last_timestamp.clone().map(|t| t.0));
    Ok(events
        .into_iter()
        .map(|e| {
            json!({
                "object": format!(
                    "{}/{}",
                    e.involved_object.kind.clone().unwrap_or_default(),
                    e.involved_object.name.clone().unwrap_or_default()
                ),
                "type": e.type_, "reason": e.reason, "message": e.message,
                "count": e.count, "last": e.last_timestamp, "name": e.name_any(),
            })
        })
        .collect())
}
