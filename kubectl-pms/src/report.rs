//! `kubectl pms report`: what a bug report needs, in one YAML document, secrets redacted. Of a
//! sync or a database sync: the resource, its savepoints, the events of it and of its objects
//! (Deployments, pods, Jobs), its pods with their logs' ends, and the operator's lines about it.
//! Secrets are never read; a URL's password and every secret-named value are replaced wherever
//! they show.

use k8s_openapi::api::core::v1::Event;
use kube::api::ListParams;
use kube::ResourceExt;
use pms_crds::PaimonMysqlDatabaseSync;
use serde_json::{json, Value};

use crate::commands::{api, document, Ctx, Error, Output, Result};
use crate::logs::{operator_pods, pod_logs, pods_of, LogOptions};

pub async fn print(ctx: &Ctx, name: &str) -> Result<String> {
    let (kind, resource) = match ctx.sync(name).await? {
        Some(pms) => ("sync", to_value(&pms)),
        None => match ctx
            .api::<PaimonMysqlDatabaseSync>()
            .get_opt(name)
            .await
            .map_err(|source| api(format!("get PaimonMysqlDatabaseSync {name}"), source))?
        {
            Some(pmds) => ("databaseSync", to_value(&pmds)),
            None => {
                return Err(Error::NotFound(format!(
                    "no PaimonMysqlSync or PaimonMysqlDatabaseSync {name} in namespace {}",
                    ctx.ns
                )))
            }
        },
    };
    let savepoints: Vec<_> = ctx
        .savepoints()
        .await?
        .into_iter()
        .filter(|s| s.spec.sync_name == name)
        .collect();
    let pods = pods_of(ctx, name, None).await?;
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
            .map(|(pod, log)| {
                let about: Vec<&str> = log.lines().filter(|l| l.contains(name)).collect();
                (pod, json!(about.join("\n")))
            })
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

fn to_value<T: serde::Serialize>(resource: &T) -> Value {
    serde_json::to_value(resource).unwrap_or_default()
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
