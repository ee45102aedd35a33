//! `kubectl pms report`: what a bug report needs, in one YAML document, passwords redacted.
//! Secrets are never read; a URL's password is replaced wherever it shows.

use k8s_openapi::api::core::v1::Event;
use kube::api::ListParams;
use serde_json::json;

use crate::commands::{pod_logs, worker_pods, Ctx, Error, Result};
use crate::redact::redact;

pub async fn print(ctx: &Ctx, sync: &str) -> Result<String> {
    let pms = ctx.existing_sync(sync).await?;
    let savepoints: Vec<_> = ctx
        .savepoints()
        .await?
        .into_iter()
        .filter(|s| s.spec.sync_name == sync)
        .collect();
    let events = kube::Api::<Event>::namespaced(ctx.client.clone(), &ctx.ns)
        .list(&ListParams::default().fields(&format!("involvedObject.name={sync}")))
        .await
        .map_err(|source| Error::Api {
            what: format!("list events of {sync}"),
            source,
        })?
        .items
        .into_iter()
        .map(|e| {
            json!({
                "type": e.type_, "reason": e.reason, "message": e.message,
                "count": e.count, "last": e.last_timestamp,
            })
        })
        .collect::<Vec<_>>();
    let pods = worker_pods(ctx, sync, None).await?;
    let logs: serde_json::Map<String, serde_json::Value> = pod_logs(ctx, &pods, 100)
        .await
        .into_iter()
        .map(|(name, log)| (name, json!(log)))
        .collect();
    let pods: Vec<_> = pods
        .iter()
        .map(|p| json!({"name": p.metadata.name, "status": p.status}))
        .collect();
    let mut resource = serde_json::to_value(&pms).unwrap_or_default();
    if let Some(meta) = resource.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        meta.remove("managedFields");
    }
    let report = json!({
        "kubectlPmsVersion": env!("CARGO_PKG_VERSION"),
        "sync": resource,
        "savepoints": savepoints,
        "events": events,
        "pods": pods,
        "logs": logs,
    });
    let yaml = serde_yaml::to_string(&report).unwrap_or_default();
    Ok(redact(&yaml))
}
