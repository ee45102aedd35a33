//! `pms-operator`: runs in the cluster (Helm chart) or out of it from a kubeconfig.

use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{ApiResource, DynamicObject};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::Controller;
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{watcher, WatchStreamExt};
use kube::ResourceExt;
use kube::{Api, Client};
use kube_lease_manager::LeaseManagerBuilder;
use pms_crds::contract::{Component, COMPONENT_LABEL, MANAGER, SYNC_LABEL};
use pms_crds::{PaimonMysqlSync, PaimonMysqlSyncSavepoint};
use pms_operator::context::{Context, Metrics, Settings};
use pms_operator::leadership::{FenceLayer, Leadership};
use pms_operator::reconcile;
use pms_operator::restart_gate::RestartGate;
use pms_operator::s3_watch::S3Watch;
use pms_operator::undecodable;
use pms_operator::watch_keys::{checkpoint_decisions, marking_deletions};
use pms_runtime::Readiness;
use tracing::{error, info, warn};

#[derive(Parser)]
#[command(
    name = "pms-operator",
    version,
    about = "Reconciles PaimonMysqlSync resources into worker Deployments"
)]
struct Cli {
    /// Watch these namespaces only (repeat the flag, or separate them by commas; default: all
    /// namespaces).
    #[arg(long = "namespace", env = "PMS_WATCH_NAMESPACE", value_delimiter = ',')]
    namespaces: Vec<String>,
    /// Worker image for the Deployments.
    #[arg(
        long,
        env = "PMS_WORKER_IMAGE",
        default_value = "ghcr.io/paimon-mysql-sync/pms-worker:0.1.0"
    )]
    worker_image: String,
    #[arg(
        long,
        env = "PMS_WORKER_IMAGE_PULL_POLICY",
        default_value = "IfNotPresent"
    )]
    worker_image_pull_policy: String,
    /// Pull secrets (names, comma-separated) of the worker pods of every sync that names none in
    /// `spec.workerPod.imagePullSecrets`: a private registry's, given once (the chart's
    /// `workerDefaults.imagePullSecrets`).
    #[arg(long, env = "PMS_WORKER_IMAGE_PULL_SECRETS", value_delimiter = ',')]
    worker_image_pull_secrets: Vec<String>,
    /// At most this many syncs go through a restart the operator causes (a new worker image or
    /// pod template: a savepoint cut, a shadow rebuild or a rolling restart) at once, each until
    /// it runs again; 0: no limit. Restarts a sync's own spec asks for never wait.
    #[arg(long, env = "PMS_MAX_CONCURRENT_RESTARTS", default_value_t = 4)]
    max_concurrent_restarts: u32,
    /// A sync holds its place at most this long (seconds): one that never runs ready again
    /// then gives it to the next (with a Warning), so broken syncs can't freeze an upgrade.
    #[arg(long, env = "PMS_RESTART_PLACE_SECONDS", default_value_t = 600)]
    restart_place_seconds: u64,
    /// Serve /metrics and /healthz here.
    #[arg(long, env = "PMS_ADMIN_ADDR", default_value = "0.0.0.0:8080")]
    admin_addr: String,
    /// Leader election: only the holder of this Lease reconciles, so replicas are safe.
    #[arg(long, env = "PMS_LEASE_NAME", default_value = "pms-operator")]
    lease_name: String,
    /// Namespace of the Lease (default: the pod's, else the kubeconfig's).
    #[arg(long, env = "PMS_LEASE_NAMESPACE")]
    lease_namespace: Option<String>,
    /// Log as JSON lines.
    #[arg(long, env = "PMS_LOG_JSON")]
    log_json: bool,
    /// Server-side apply this version's CRDs when leading (a chart upgrade brings new schemas).
    #[arg(long, env = "PMS_MANAGE_CRDS", default_value_t = true, action = clap::ArgAction::Set)]
    manage_crds: bool,
}

/// SIGTERM or SIGINT.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    pms_runtime::install_tls_provider();
    pms_runtime::init_logging(cli.log_json, "info,kube=warn");
    match run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            error!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The API client, counting each request in `pms_operator_api_requests_total{verb}`, and with
/// `fence`, letting a write through only while this replica holds the Lease.
async fn counted_client(
    metrics: &Metrics,
    fence: Option<FenceLayer>,
) -> Result<Client, Box<dyn std::error::Error>> {
    let config = kube::Config::infer().await?;
    let requests = metrics.api_requests.clone();
    let count =
        tower::util::MapRequestLayer::new(move |request: http::Request<kube::client::Body>| {
            let watch = request
                .uri()
                .query()
                .is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
            let verb = if watch {
                "WATCH"
            } else {
                request.method().as_str()
            };
            requests.with_label_values(&[verb]).inc();
            request
        });
    let counted = kube::client::ClientBuilder::try_from(config)?.with_layer(&count);
    Ok(match fence {
        Some(fence) => counted.with_layer(&fence).build(),
        None => counted.build(),
    })
}

async fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    // In cluster: the pod's service account; out of cluster: KUBECONFIG or ~/.kube/config.
    let metrics = Metrics::new()?;
    // Unfenced: for the Lease (kept and read) and for waiting to lead.
    let client = counted_client(&metrics, None).await?;
    // Ready from the start: the operator serves no traffic, /readyz only says it is up.
    pms_runtime::serve_admin(
        &cli.admin_addr,
        metrics.registry.clone(),
        Readiness::ready(),
    )
    .await?;

    let lease_ns = cli
        .lease_namespace
        .clone()
        .or_else(|| std::env::var("POD_NAMESPACE").ok())
        .unwrap_or_else(|| client.default_namespace().to_string());
    let identity = std::env::var("POD_NAME")
        .unwrap_or_else(|_| format!("pms-operator-{}", std::process::id()));
    let leases = LeaseManagerBuilder::new(client.clone(), &cli.lease_name)
        .with_namespace(&lease_ns)
        .with_identity(&identity)
        .with_duration(15)
        .with_grace(5)
        .build()
        .await?;
    info!(lease = %format!("{lease_ns}/{}", cli.lease_name), %identity, "waiting to become the leader");
    let (mut leader, lease_task) = leases.watch().await;
    // A standby replica stops at once on SIGTERM/SIGINT (`helm uninstall` does not wait out
    // its grace period).
    let became_leader = async {
        while !*leader.borrow_and_update() {
            leader.changed().await?;
        }
        Ok::<(), tokio::sync::watch::error::RecvError>(())
    };
    tokio::select! {
        result = became_leader => result?,
        _ = shutdown_signal() => {
            info!("stop requested while waiting to become the leader");
            drop(lease_task);
            return Ok(());
        }
    }
    info!("leader: reconciling");
    let leadership = Leadership::new(client.clone(), &lease_ns, &cli.lease_name, &identity);
    let fenced = leadership.lost.clone();
    // Every write from here on is fenced by the Lease.
    let client = counted_client(&metrics, Some(FenceLayer(leadership.clone()))).await?;
    if cli.manage_crds {
        pms_operator::crds::apply_own_crds(&client).await?;
    }

    let ctx = Arc::new(Context {
        client: client.clone(),
        settings: Settings {
            worker_image: cli.worker_image,
            image_pull_policy: cli.worker_image_pull_policy,
            worker_image_pull_secrets: cli.worker_image_pull_secrets,
            ..Settings::default()
        },
        recorder: Recorder::new(
            client.clone(),
            Reporter {
                controller: MANAGER.into(),
                instance: Some(identity),
            },
        ),
        metrics,
        leadership: Some(leadership),
        restart_gate: Arc::new(RestartGate::new(
            cli.max_concurrent_restarts,
            Duration::from_secs(cli.restart_place_seconds),
        )),
        s3_watch: S3Watch::new(),
    });
    tokio::spawn(ctx.s3_watch.clone().run());
    // The three controllers, once for every namespace watched (or once for all of them).
    let namespaces: Vec<Option<&str>> = match cli.namespaces.as_slice() {
        [] => vec![None],
        some => some.iter().map(|ns| Some(ns.as_str())).collect(),
    };
    let controller = futures::future::join_all(namespaces.into_iter().map(|ns| {
        let (client, ctx) = (client.clone(), ctx.clone());
        async move {
            tokio::join!(
                run_controller(client.clone(), ns, ctx.clone()),
                pms_operator::database::run_controller(client.clone(), ns, ctx.clone()),
                pms_operator::orphan_savepoints::run_controller(client, ns, ctx),
            )
        }
    }));
    // Losing the lease stops reconciling at once: another replica takes over. A reconcile
    // that finds another holder first (this replica was frozen) stops it too.
    let lost = async {
        loop {
            tokio::select! {
                changed = leader.changed() => {
                    if changed.is_err() || !*leader.borrow() {
                        break;
                    }
                }
                _ = fenced.notified() => break,
            }
        }
    };
    tokio::select! {
        _ = controller => info!("controller stopped"),
        _ = lost => {
            error!("lost the leader lease; exiting so a fresh start can wait for it again");
            return Err("lost leadership".into());
        }
    }
    drop(leader);
    let _ = tokio::time::timeout(Duration::from_secs(5), lease_task).await;
    Ok(())
}

/// Reconciles the syncs on every change of them or of what they own: the Deployments, Jobs
/// (rebuild, verify) and ConfigMaps (config, the jobs' reports) labelled as the operator's, and
/// on what its workers decide in their checkpoint ConfigMaps.
async fn run_controller(client: Client, namespace: Option<&str>, ctx: Arc<Context>) {
    // The operator's own kinds as dynamic objects: one that doesn't decode must not fail the
    // list of the others (see `undecodable.rs`).
    let savepoints = undecodable::api::<PaimonMysqlSyncSavepoint>(&client, namespace);
    let (deployments, config_maps, jobs, secrets) = match namespace {
        Some(ns) => (
            Api::<Deployment>::namespaced(client.clone(), ns),
            Api::<ConfigMap>::namespaced(client.clone(), ns),
            Api::<Job>::namespaced(client.clone(), ns),
            Api::<PartialObjectMeta<Secret>>::namespaced(client.clone(), ns),
        ),
        None => (
            Api::all(client.clone()),
            Api::all(client.clone()),
            Api::all(client.clone()),
            Api::all(client.clone()),
        ),
    };
    let sync_ref =
        |ns: &str, sync: &str| ObjectRef::<PaimonMysqlSync>::new(sync).within(ns).erase();
    // The workers' checkpoints have no owner (the workers write them): mapped by label.
    let checkpoints = watcher::Config::default().labels(&format!(
        "{COMPONENT_LABEL}={}",
        Component::Checkpoint.as_str()
    ));
    let by_sync_label =
        move |cm: ConfigMap| Some(sync_ref(&cm.namespace()?, cm.labels().get(SYNC_LABEL)?));
    let by_sync_name = move |sp: DynamicObject| {
        let sync = sp.data.pointer("/spec/syncName")?.as_str()?;
        Some(sync_ref(&sp.namespace()?, sync))
    };
    // Only a change the operator decides by (a note, a pause acknowledged, a new start), not
    // each write of a busy slot's progress.
    let checkpoint_changes = watcher(config_maps.clone(), checkpoints)
        .default_backoff()
        .filter_map(|event| async move { event.map(marking_deletions).transpose() })
        .predicate_filter(checkpoint_decisions, Default::default());
    let owned =
        watcher::Config::default().labels(&format!("app.kubernetes.io/managed-by={MANAGER}"));
    // A sync is reconciled when its spec changes or its deletion starts.
    let (spec_changes, store, resource) =
        undecodable::spec_changes::<PaimonMysqlSync>(&client, namespace);
    // A Secret a sync refers to, created or changed (a rotation, one missing at first): its
    // metadata only, its values never reach this watch.
    let secret_changes = watcher(secrets, watcher::Config::default())
        .default_backoff()
        .touched_objects();
    let syncs_of_secret = {
        let store = store.clone();
        move |secret: PartialObjectMeta<Secret>| {
            let (name, ns) = (secret.name_any(), secret.namespace());
            let in_namespace = store
                .state()
                .into_iter()
                .filter(|o| o.namespace() == ns)
                .map(|o| (*o).clone());
            undecodable::decodable::<PaimonMysqlSync>(in_namespace)
                .into_iter()
                .filter(|pms| {
                    reconcile::dereference::referenced_secrets(pms).contains(&name.as_str())
                })
                .map(|pms| ObjectRef::from_obj(&pms).erase())
                .collect::<Vec<_>>()
        }
    };
    let savepoint_kind = ApiResource::erase::<PaimonMysqlSyncSavepoint>(&());
    Controller::for_stream_with(spec_changes, store, resource)
        .watches_stream(secret_changes, syncs_of_secret)
        .owns(deployments, owned.clone())
        .owns(config_maps.clone(), owned.clone())
        .owns(jobs, owned)
        .watches_stream(checkpoint_changes, by_sync_label)
        .reconcile_on(ctx.s3_watch.triggers(namespace).map(ObjectRef::erase))
        .reconcile_on(ctx.restart_gate.wakeups(namespace).map(ObjectRef::erase))
        .watches_with(
            savepoints,
            savepoint_kind,
            watcher::Config::default(),
            by_sync_name,
        )
        .shutdown_on_signal()
        .run(reconcile::reconcile_watched, reconcile::error_policy, ctx)
        .for_each(|result| async move {
            match result {
                Err(e) if !reconcile::waiting(&e) => warn!(error = %e, "reconcile error"),
                _ => {}
            }
        })
        .await
}
