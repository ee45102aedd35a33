//! `kubectl pms logs`: the logs of a sync's pods (its slots' workers and its Jobs: rebuild,
//! verify, restore, check), of a database sync's (its discovery, pool workers and tables' syncs),
//! and with `--operator` the operator's lines about it. `--follow` streams them as `kubectl logs
//! -f` does, each line prefixed with its pod. Every line goes through the redaction.

use std::time::Duration;

use futures::{AsyncBufReadExt, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, LogParams};
use kube::{Api, ResourceExt};
use pms_crds::contract::{DATABASE_SYNC_LABEL, RESERVED_IN_SYNC_NAMES, SLOT_LABEL, SYNC_LABEL};
use pms_crds::PaimonMysqlSync;

use crate::commands::{api, Ctx, Error, Result, Target};
use crate::redact::redact;

/// The operator's pods, as the chart labels them (any namespace).
const OPERATOR_SELECTOR: &str =
    "app.kubernetes.io/name=paimon-mysql-sync,app.kubernetes.io/component=operator";

/// Which lines of which pods.
#[derive(Clone, Debug, Default)]
pub struct LogOptions {
    pub slot: Option<u32>,
    /// Lines from the end of each pod's log (all without).
    pub tail: Option<i64>,
    pub follow: bool,
    /// The previous (crashed or restarted) container's log.
    pub previous: bool,
    /// Only lines this recent.
    pub since: Option<Duration>,
    /// Also the operator's lines that name the sync.
    pub operator: bool,
}

impl LogOptions {
    fn params(&self) -> LogParams {
        LogParams {
            tail_lines: self.tail,
            follow: self.follow,
            previous: self.previous,
            since_seconds: self.since.map(|d| d.as_secs().max(1) as i64),
            ..Default::default()
        }
    }
}

/// The pods of a sync (one slot's with `slot`, its Jobs' too without), or of a database sync:
/// its own (discovery, pool workers) and its tables' syncs'.
pub async fn pods_of(ctx: &Ctx, target: &Target, slot: Option<u32>) -> Result<Vec<Pod>> {
    let name = match target {
        Target::Sync(pms) => {
            let mut selector = format!("{SYNC_LABEL}={}", pms.name_any());
            if let Some(k) = slot {
                selector.push_str(&format!(",{SLOT_LABEL}={k}"));
            }
            return list_pods(&ctx.api(), &selector).await;
        }
        Target::Database(pmds) => pmds.name_any(),
    };
    let tables: Vec<String> = ctx
        .api::<PaimonMysqlSync>()
        .list(&ListParams::default().labels(&format!("{DATABASE_SYNC_LABEL}={name}")))
        .await
        .map_err(|source| api(format!("list the table syncs of {name}"), source))?
        .items
        .iter()
        .map(|s| s.name_any())
        .collect();
    let own = format!("{name}{RESERVED_IN_SYNC_NAMES}");
    let pods = list_pods(&ctx.api(), SYNC_LABEL).await?;
    Ok(pods
        .into_iter()
        .filter(|p| {
            p.labels().get(SYNC_LABEL).is_some_and(|s| {
                tables.contains(s) && slot.is_none_or(|k| slot_of(p) == Some(k))
                    || s.starts_with(&own) && slot.is_none()
            })
        })
        .collect())
}

/// The lines of an operator's log that name the sync `name`.
pub fn lines_naming(log: &str, name: &str) -> String {
    log.lines()
        .filter(|l| l.contains(name))
        .collect::<Vec<_>>()
        .join("\n")
}

fn slot_of(pod: &Pod) -> Option<u32> {
    pod.labels().get(SLOT_LABEL)?.parse().ok()
}

async fn list_pods(pods: &Api<Pod>, selector: &str) -> Result<Vec<Pod>> {
    let mut pods = pods
        .list(&ListParams::default().labels(selector))
        .await
        .map_err(|source| api(format!("list pods {selector}"), source))?
        .items;
    pods.sort_by_key(|p| p.name_any());
    Ok(pods)
}

/// The operator's pods, wherever it runs.
pub async fn operator_pods(ctx: &Ctx) -> Result<Vec<Pod>> {
    list_pods(&Api::all(ctx.client.clone()), OPERATOR_SELECTOR).await
}

/// `kubectl pms logs`: each pod's log under a `==> pod <name> <==` line, or with `follow` the
/// lines as they come, printed here, until every stream ends.
pub async fn logs(ctx: &Ctx, name: &str, options: &LogOptions) -> Result<String> {
    let pods = pods_of(ctx, &ctx.target(name).await?, options.slot).await?;
    if pods.is_empty() {
        return Err(Error::NotFound(format!(
            "no worker pod of {}/{name}{} (suspended, or not started yet?)",
            ctx.ns,
            options
                .slot
                .map(|k| format!(" slot {k}"))
                .unwrap_or_default()
        )));
    }
    let operator = match options.operator {
        true => operator_pods(ctx).await?,
        false => Vec::new(),
    };
    if options.follow {
        follow(ctx, &pods, &operator, name, options).await;
        return Ok(String::new());
    }
    let mut out = String::new();
    for (pod, log) in pod_logs(ctx, &pods, options).await {
        out.push_str(&format!("==> pod {pod} <==\n{log}\n"));
    }
    for (pod, log) in pod_logs(ctx, &operator, options).await {
        out.push_str(&format!(
            "==> operator pod {pod} (its lines naming {name}) <==\n{}\n",
            lines_naming(&log, name)
        ));
    }
    Ok(out)
}

/// Each pod's log (or why it has none), redacted.
pub async fn pod_logs(ctx: &Ctx, pods: &[Pod], options: &LogOptions) -> Vec<(String, String)> {
    let params = LogParams {
        follow: false,
        ..options.params()
    };
    let mut out = Vec::new();
    for pod in pods {
        let name = pod.name_any();
        let api: Api<Pod> = pod_api(ctx, pod);
        let log = match api.logs(&name, &params).await {
            Ok(log) => redact(&log),
            Err(e) => format!("(no log: {e})"),
        };
        out.push((name, log));
    }
    out
}

fn pod_api(ctx: &Ctx, pod: &Pod) -> Api<Pod> {
    let ns = pod.namespace().unwrap_or_else(|| ctx.ns.clone());
    Api::namespaced(ctx.client.clone(), &ns)
}

/// Streams every pod's lines (the operator's only where they name the sync), each prefixed
/// `[pod]`, until all streams end (the pods stopped) or the command is interrupted.
async fn follow(ctx: &Ctx, pods: &[Pod], operator: &[Pod], name: &str, options: &LogOptions) {
    let params = options.params();
    let streams = pods
        .iter()
        .map(|p| (p, None))
        .chain(operator.iter().map(|p| (p, Some(name.to_string()))));
    let mut lines = futures::stream::select_all(Vec::new());
    for (pod, only_naming) in streams {
        let pod_name = pod.name_any();
        match pod_api(ctx, pod).log_stream(&pod_name, &params).await {
            Ok(stream) => {
                let prefix = format!("[{pod_name}] ");
                let only = only_naming.clone();
                lines.push(
                    stream
                        .lines()
                        .filter_map(move |line| {
                            let keep = match line {
                                Ok(l) if only.as_ref().is_none_or(|n| l.contains(n.as_str())) => {
                                    Some(format!("{prefix}{}", redact(&l)))
                                }
                                Ok(_) => None,
                                Err(e) => Some(format!("{prefix}(the stream broke: {e})")),
                            };
                            futures::future::ready(keep)
                        })
                        .boxed(),
                );
            }
            Err(e) => println!("[{pod_name}] (no log: {e})"),
        }
    }
    while let Some(line) = lines.next().await {
        println!("{line}");
    }
}
