//! `kubectl pms check`: the pre-flight (`pms-worker check`: the MySQL table and server, the
//! Paimon table, the consumer's expiry) now, on demand, run as a Job with slot 0's pod (its
//! identity, config, Secrets and mounts). Its report is printed and the Job removed.
//!
//! The Job does not carry the sync's label: the operator removes every object with that label it
//! did not make, and this one is the plugin's.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use kube::api::{DeleteParams, ListParams, LogParams, ObjectMeta, PostParams};
use kube::ResourceExt;
use pms_crds::contract::deployment_name;

use crate::commands::{api, Ctx, Error, Result};
use crate::redact::redact;

/// The label that finds the check Jobs of a sync (and their pods).
pub const CHECK_OF_LABEL: &str = "paimonsync.io/check-of";

/// How often the Job is looked at.
const POLL: Duration = Duration::from_secs(2);

pub async fn check(ctx: &Ctx, sync: &str, timeout: Duration) -> Result<String> {
    ctx.existing_sync(sync).await?;
    let slot0 = deployment_name(sync, 0);
    let deployment = ctx
        .get_opt::<Deployment>(&slot0)
        .await?
        .ok_or_else(|| {
            Error::NotFound(format!(
                "no Deployment {slot0} yet: the check runs with slot 0's pod, which the operator has not made \
                 (kubectl pms status {sync} says why)"
            ))
        })?;
    let job = check_job(sync, &deployment, timeout)?;
    let jobs = ctx.api::<Job>();
    let job = jobs
        .create(&PostParams::default(), &job)
        .await
        .map_err(|source| api(format!("create the check Job of {}/{sync}", ctx.ns), source))?;
    let name = job.name_any();
    eprintln!("running pms-worker check as Job {}/{name}", ctx.ns);
    let outcome = wait(ctx, &name, timeout).await;
    let log = job_log(ctx, &name).await;
    // Background: its pod goes with it.
    if let Err(e) = jobs.delete(&name, &DeleteParams::background()).await {
        eprintln!("the check Job {name} stays (delete it by hand): {e}");
    }
    match outcome? {
        true => Ok(log),
        false => Err(Error::CheckFailed(log)),
    }
}

/// The Job: slot 0's pod running `pms-worker check` once, without probes, ports or retries,
/// gone 10 minutes after it ended even if this command is interrupted.
fn check_job(sync: &str, deployment: &Deployment, timeout: Duration) -> Result<Job> {
    let mut pod = deployment
        .spec
        .as_ref()
        .and_then(|d| d.template.spec.clone())
        .ok_or_else(|| Error::NotFound(format!("Deployment of {sync} has no pod template")))?;
    pod.restart_policy = Some("Never".into());
    for c in &mut pod.containers {
        c.args = Some(vec!["check".into()]);
        c.liveness_probe = None;
        c.readiness_probe = None;
        c.startup_probe = None;
        c.ports = None;
    }
    let labels = BTreeMap::from([
        (CHECK_OF_LABEL.to_string(), sync.to_string()),
        (
            "app.kubernetes.io/name".to_string(),
            "paimon-mysql-sync".to_string(),
        ),
    ]);
    // A generated name: 5 characters are added, and a Job's name keeps within 63.
    let base: String = sync.chars().take(63 - "-check-".len() - 5).collect();
    Ok(Job {
        metadata: ObjectMeta {
            generate_name: Some(format!("{base}-check-")),
            labels: Some(labels.clone()),
            ..Default::default()
        },
        spec: Some(JobSpec {
            backoff_limit: Some(0),
            active_deadline_seconds: Some(timeout.as_secs().max(1) as i64),
            ttl_seconds_after_finished: Some(600),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..Default::default()
                }),
                spec: Some(pod),
            },
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// Whether the Job succeeded, once it ended; an error when it did not end in `timeout`.
async fn wait(ctx: &Ctx, name: &str, timeout: Duration) -> Result<bool> {
    let deadline = Instant::now() + timeout + POLL * 5;
    loop {
        let job = ctx
            .api::<Job>()
            .get(name)
            .await
            .map_err(|source| api(format!("get Job {}/{name}", ctx.ns), source))?;
        let status = job.status.unwrap_or_default();
        if status.succeeded.unwrap_or(0) > 0 {
            return Ok(true);
        }
        if status.failed.unwrap_or(0) > 0 {
            return Ok(false);
        }
        if Instant::now() > deadline {
            return Err(Error::NotFound(format!(
                "the check Job {name} did not end within {}s (its pod pending? `kubectl describe job -n {} {name}`)",
                timeout.as_secs(),
                ctx.ns
            )));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The log of the Job's pod, redacted (or why there is none).
async fn job_log(ctx: &Ctx, job: &str) -> String {
    let pods = ctx.api::<Pod>();
    let listed = pods
        .list(&ListParams::default().labels(&format!("job-name={job}")))
        .await;
    let Some(pod) = listed.ok().and_then(|l| l.items.into_iter().next()) else {
        return format!("(no pod of Job {job})\n");
    };
    match pods.logs(&pod.name_any(), &LogParams::default()).await {
        Ok(log) => redact(&log),
        Err(e) => format!("(no log of pod {}: {e})\n", pod.name_any()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::DeploymentSpec;
    use k8s_openapi::api::core::v1::{Container, PodSpec, Probe};

    #[test]
    fn the_check_job_runs_slot_zeros_pod_without_the_syncs_label() {
        let deployment = Deployment {
            spec: Some(DeploymentSpec {
                template: PodTemplateSpec {
                    metadata: None,
                    spec: Some(PodSpec {
                        service_account_name: Some("orders-worker".into()),
                        containers: vec![Container {
                            name: "worker".into(),
                            args: Some(vec!["run".into()]),
                            readiness_probe: Some(Probe::default()),
                            ..Default::default()
                        }],
                        ..Default::default()
                    }),
                },
                ..Default::default()
            }),
            ..Default::default()
        };
        let long = "s".repeat(55);
        let job = check_job(&long, &deployment, Duration::from_secs(300)).unwrap();
        let spec = job.spec.unwrap();
        let pod = spec.template.spec.unwrap();
        assert_eq!(pod.containers[0].args, Some(vec!["check".to_string()]));
        assert!(pod.containers[0].readiness_probe.is_none());
        assert_eq!(pod.service_account_name.as_deref(), Some("orders-worker"));
        assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
        assert_eq!(spec.backoff_limit, Some(0));
        let labels = job.metadata.labels.unwrap();
        assert!(!labels.contains_key(pms_crds::contract::SYNC_LABEL));
        assert_eq!(labels[CHECK_OF_LABEL], long);
        assert!(job.metadata.generate_name.unwrap().len() + 5 <= 63);
    }
}
