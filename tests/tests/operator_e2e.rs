//! End to end on a real kube-apiserver: Helm install, a PaimonMysqlSync reconciled into per-slot
//! Deployments, workers run locally with exactly the pod's environment (there is no kubelet),
//! MySQL equal to the reference read, status, rescale 2 → 3, suspend/resume, a periodic verify
//! finding a deleted row, rebuilds by trigger and by `policy: auto` (their Jobs run locally too),
//! savepoints, upgrade and restore, delete and cleanup, invalid resources rejected by the API
//! server; then exactly-once with checkpoints on S3 (rescales 2 → 3 → 1, a savepoint, restore).

mod common;

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::*;
use pms_tests::config::SyncConfigBuilder;
use pms_tests::kube::{
    apply, apply_ok, condition, get, helm, kubeconfig, kubectl, kubectl_output, kubectl_pms, list,
    mysql_writer_secret, patch_sync, shell_prelude, sync_status, wait_for, wait_sync_status,
};
use pms_tests::mysql::TestDb;
use pms_tests::paimon::Table;
use pms_tests::s3;
use pms_tests::worker::worker_bin;
use pms_tests::{docs, repo_root};
use serde_json::{json, Value as Json};

const NS: &str = "e2e";
const SYNC: &str = "orders-to-mysql";
const SECRET_PASSWORD: &str = "Wr1ter-S3cret-e2e";
const LONG: Duration = Duration::from_secs(90);
const SELECTOR: &str = "paimonsync.io/sync=orders-to-mysql";

fn operator_log() -> std::path::PathBuf {
    std::env::temp_dir().join("pms-e2e-operator.log")
}

fn operator_bin() -> std::path::PathBuf {
    worker_bin().with_file_name("pms-operator")
}

struct Operator(Child);

impl Drop for Operator {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An operator process out of cluster, logging to `log`.
fn start_operator(log: &std::path::Path) -> Operator {
    // Two namespaces watched (the second stays empty): one set of controllers each.
    let namespaces = format!("{NS},{NS}-idle");
    let args = [
        "--namespace",
        &namespaces,
        "--lease-namespace",
        NS,
        "--admin-addr",
        "127.0.0.1:0",
    ];
    spawn_operator(&args, log, "info,pms_operator=debug")
}

/// The operator with `args`, against the test API server, logging to `log` at `rust_log`.
fn spawn_operator(args: &[&str], log: &std::path::Path, rust_log: &str) -> Operator {
    let child = Command::new(operator_bin())
        .args(args)
        .env("KUBECONFIG", kubeconfig())
        .env("RUST_LOG", rust_log)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("start pms-operator");
    Operator(child)
}

/// A valid sync `ns/name` that no worker runs (its warehouse and MySQL are nowhere), Paimon and
/// MySQL table `table`, credentials from the Secret `mysql-writer`: YAML for `kubectl apply`.
fn idle_sync(ns: &str, name: &str, table: &str) -> String {
    format!(
        "apiVersion: paimonsync.io/v1alpha1\nkind: PaimonMysqlSync\nmetadata: {{name: {name}, namespace: {ns}}}\n\
         spec:\n  source: {{warehouse: /nowhere, database: db, table: {table}}}\n  \
         sink: {{url: 'mysql://127.0.0.1:1/db', credentialsSecretRef: {{name: mysql-writer}}, table: {table}}}\n"
    )
}

/// The spec of the sync: `table` into `orders` of `db`, credentials from the Secret `mysql-writer`.
fn sync_spec(table: &Table, db: &TestDb) -> SyncConfigBuilder {
    SyncConfigBuilder::for_url(table, &format!("mysql://127.0.0.1:{}/{}", db.port, db.name))
        .poll_interval(Duration::from_millis(200))
        .credentials_secret("mysql-writer")
        .max_rows(200)
        .checkpoint_interval(Duration::from_secs(1))
}

/// The `PaimonMysqlSync` resource named `SYNC` with this spec, as YAML for `kubectl apply`.
fn sync_resource(spec: &SyncConfigBuilder) -> String {
    named_sync_resource(SYNC, spec)
}

/// The same, named `name`.
fn named_sync_resource(name: &str, spec: &SyncConfigBuilder) -> String {
    // serde_yaml all the way: a serde_json::Value in between would turn numbers into maps
    // (serde_json's arbitrary_precision is on in the dependency graph).
    let mut resource = serde_yaml::Mapping::new();
    let mut metadata = serde_yaml::Mapping::new();
    metadata.insert("name".into(), name.into());
    metadata.insert("namespace".into(), NS.into());
    resource.insert("apiVersion".into(), "paimonsync.io/v1alpha1".into());
    resource.insert("kind".into(), "PaimonMysqlSync".into());
    resource.insert("metadata".into(), metadata.into());
    resource.insert("spec".into(), spec.spec_yaml());
    serde_yaml::to_string(&resource).unwrap()
}

/// The environment a pod of this Deployment would get: literal values, Secret keys, the namespace.
fn pod_env(deployment: &Json) -> BTreeMap<String, String> {
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    let mut env = BTreeMap::new();
    for e in container["env"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap().to_string();
        let value = if let Some(v) = e["value"].as_str() {
            v.to_string()
        } else if let Some(r) = e["valueFrom"]["secretKeyRef"].as_object() {
            let secret = get("secret", r["name"].as_str().unwrap(), NS).expect("referenced Secret");
            let b64 = secret["data"][r["key"].as_str().unwrap()]
                .as_str()
                .expect("secret key");
            String::from_utf8(base64_decode(b64)).unwrap()
        } else if e["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace" {
            NS.to_string()
        } else {
            panic!("unexpected env source {e}");
        };
        env.insert(name, value);
    }
    env
}

fn base64_decode(s: &str) -> Vec<u8> {
    let out = Command::new("base64")
        .arg("-d")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    let mut out = out;
    out.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    out.wait_with_output().unwrap().stdout
}

/// The worker's config as its pod would mount it (from the ConfigMap), in `dir`.
fn mounted_config(dir: &std::path::Path) -> std::path::PathBuf {
    mounted_config_of(SYNC, dir)
}

/// The same for the sync `sync`.
fn mounted_config_of(sync: &str, dir: &std::path::Path) -> std::path::PathBuf {
    let cm = get("configmap", &format!("{sync}-config"), NS).expect("worker config");
    let config = dir.join("sync.yaml");
    std::fs::write(&config, cm["data"]["sync.yaml"].as_str().unwrap()).unwrap();
    config
}

/// `pms-worker ARGS` with exactly the environment a pod of `object` (a Deployment or a Job) gets.
fn pod_process(
    object: &Json,
    config: &std::path::Path,
    args: &[String],
    extra_env: &BTreeMap<String, String>,
) -> Child {
    pod_command(object, config, args, extra_env)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn pod_command(
    object: &Json,
    config: &std::path::Path,
    args: &[String],
    extra_env: &BTreeMap<String, String>,
) -> Command {
    let mut env = pod_env(object);
    env.extend(extra_env.clone());
    env.insert("PMS_CONFIG".into(), config.display().to_string());
    env.remove("PMS_ADMIN_ADDR");
    // With its pod's identity: the API server checks each request against the Role the
    // operator gave that ServiceAccount (the test's admin impersonates it, as kubectl --as).
    let pod = &object["spec"]["template"]["spec"];
    if let (Some(account), Some(ns)) = (
        pod["serviceAccountName"].as_str(),
        object["metadata"]["namespace"].as_str(),
    ) {
        env.insert(
            "KUBE_RS_DEBUG_IMPERSONATE_USER".into(),
            format!("system:serviceaccount:{ns}:{account}"),
        );
        env.insert(
            "KUBE_RS_DEBUG_IMPERSONATE_GROUP".into(),
            format!("system:serviceaccounts,system:serviceaccounts:{ns},system:authenticated"),
        );
    }
    let mut cmd = Command::new(worker_bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("KUBECONFIG", kubeconfig())
        .env("RUST_LOG", "info")
        .envs(env);
    cmd
}

/// Runs every slot's worker once (`run --once`), as its pod would; their outputs.
fn run_workers(slots: u32) -> Vec<std::process::Output> {
    let dir = tempfile::tempdir().unwrap();
    let config = mounted_config(dir.path());
    let args = ["run", "--once"].map(String::from);
    let children: Vec<_> = (0..slots)
        .map(|k| {
            let d = get("deployment", &format!("{SYNC}-slot-{k}"), NS).expect("slot deployment");
            pod_process(&d, &config, &args, &BTreeMap::new())
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect()
}

/// Every slot's worker running continuously, as its pod would (logs in the temp dir).
fn spawn_workers(slots: u32) -> (Vec<Child>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = mounted_config(dir.path());
    let args = ["run".to_string()];
    let children = (0..slots)
        .map(|k| {
            let d = get("deployment", &format!("{SYNC}-slot-{k}"), NS).expect("slot deployment");
            let mut cmd = pod_command(&d, &config, &args, &BTreeMap::new());
            let log = std::fs::File::create(dir.path().join(format!("slot-{k}.log"))).unwrap();
            cmd.stdout(Stdio::null()).stderr(log).spawn().unwrap()
        })
        .collect();
    (children, dir)
}

/// Runs every slot's worker once; each must succeed; their logs.
fn run_workers_once(slots: u32) -> String {
    let mut logs = String::new();
    for out in run_workers(slots) {
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "worker failed:\n{err}");
        logs.push_str(&err);
    }
    logs
}

/// There is no kubelet: runs the Job's container (its args, env and config) to the end.
fn run_job(job: &Json) -> std::process::Output {
    run_job_process(job, None)
}

/// The same, aborted at `failpoint` (the process dies as with kill -9).
fn run_job_killed_at(job: &Json, failpoint: &str) -> std::process::Output {
    run_job_process(job, Some(failpoint))
}

fn run_job_process(job: &Json, failpoint: Option<&str>) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let config = mounted_config(dir.path());
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    let args: Vec<String> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let mut env = BTreeMap::new();
    if let Some(point) = failpoint {
        env.insert("PMS_FAILPOINT".to_string(), point.to_string());
    }
    pod_process(job, &config, &args, &env)
        .wait_with_output()
        .unwrap()
}

/// Waits for the Job `name` of a run other than `not_id` (its `paimonsync.io/job-id`).
async fn wait_job(name: &str, not_id: Option<&str>) -> Json {
    wait_for(&format!("job {name}"), LONG, || {
        get("job", name, NS)
            .filter(|j| j["metadata"]["annotations"]["paimonsync.io/job-id"].as_str() != not_id)
    })
    .await
}

fn merge_patch(patch: Json) {
    patch_sync(NS, SYNC, &patch);
}

/// The reasons of the sync's Events, a line each.
fn event_reasons() -> String {
    event_reasons_of(SYNC)
}

/// The reasons of the Events of the object `name`, a line each.
fn event_reasons_of(name: &str) -> String {
    event_reasons_of_ns(NS, name)
}

/// Patches `spec.state` and waits until every slot Deployment has `replicas` replicas.
/// `kubectl pms suspend` / `resume`, then waits for the slots' replicas.
async fn set_state(state: SyncState, replicas: i64) {
    let command = match state {
        SyncState::Suspended => "suspend",
        _ => "resume",
    };
    let (ok, said) = kubectl_pms(&[command, SYNC, "-n", NS]);
    assert!(
        ok && said.contains("spec.state"),
        "kubectl pms {command}: {said}"
    );
    assert_eq!(get("pms", SYNC, NS).unwrap()["spec"]["state"], json!(state));
    slots_at_replicas(replicas).await;
}

/// Waits until every slot Deployment has `replicas` replicas.
async fn slots_at_replicas(replicas: i64) {
    wait_for(&format!("replicas {replicas}"), LONG, || {
        list("deployment", NS, SELECTOR)
            .iter()
            .all(|d| d["spec"]["replicas"] == replicas)
            .then_some(())
    })
    .await;
}

/// There is no kubelet: report the slot pods as the kubelet would.
fn mark_ready(slots: u32, ready: bool) {
    mark_ready_of(SYNC, slots, ready)
}

fn mark_ready_of(sync: &str, slots: u32, ready: bool) {
    let n = if ready { 1 } else { 0 };
    for k in 0..slots {
        let patch = json!({"status": {"replicas": n, "readyReplicas": n, "availableReplicas": n, "updatedReplicas": n}}).to_string();
        kubectl(&[
            "patch",
            "deployment",
            &format!("{sync}-slot-{k}"),
            "-n",
            NS,
            "--subresource=status",
            "--type=merge",
            "-p",
            &patch,
        ]);
    }
}

fn status() -> Json {
    sync_status(NS, SYNC)
}

async fn wait_status(what: &str, f: impl Fn(&Json) -> bool) -> Json {
    wait_sync_status(NS, SYNC, what, LONG, f).await
}

/// `v` as a Lua expression (objects as tables by key, arrays as sequences, null as nil).
fn lua_literal(v: &Json) -> String {
    match v {
        Json::Null => "nil".into(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => n.to_string(),
        Json::String(s) => format!("[==[{s}]==]"),
        Json::Array(items) => format!(
            "{{{}}}",
            items.iter().map(lua_literal).collect::<Vec<_>>().join(", ")
        ),
        Json::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("[ [==[{k}]==] ] = {}", lua_literal(v)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
    }
}

/// What the Argo CD health check (`deploy/argocd/health.lua`, run by a real Lua) says of the
/// sync as it is now: (status, message).
/// As a Deployment's controller says once the pod of its current template is ready.
fn mark_rolled_out(ns: &str, deployment: &str) {
    let d = get("deployment", deployment, ns).expect("the Deployment");
    let patch = json!({"status": {"observedGeneration": d["metadata"]["generation"], "replicas": 1, "readyReplicas": 1, "availableReplicas": 1, "updatedReplicas": 1}}).to_string();
    kubectl(&[
        "patch",
        "deployment",
        deployment,
        "-n",
        ns,
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch,
    ]);
}

fn argocd_health() -> (String, String) {
    argocd_health_of("pms", SYNC)
}

/// The same of the resource `kind`/`name` (a sync or a database sync).
fn argocd_health_of(kind: &str, name: &str) -> (String, String) {
    let obj = get(kind, name, NS).expect("the resource");
    let script = repo_root().join("deploy/argocd/health.lua");
    let harness = format!(
        "obj = {}\nlocal hs = dofile([==[{}]==])\nio.write(hs.status, \"\\n\", hs.message)",
        lua_literal(&obj),
        script.display()
    );
    let out = std::process::Command::new("lua5.4")
        .args(["-e", &harness])
        .output()
        .expect("lua5.4 is missing: apt-get install -y lua5.4 (.ci/run does)");
    assert!(
        out.status.success(),
        "health.lua: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (status, message) = text.split_once('\n').unwrap_or((&text, ""));
    (status.to_string(), message.to_string())
}

/// The chart passes `helm lint` and renders both CRDs and the operator's RBAC (jobs, savepoints,
/// pods included); installed, it creates the CRDs (from its crds/), the RBAC and the Deployment.
fn install_chart() {
    let chart = repo_root().join("charts/paimon-mysql-sync");
    let chart_dir = chart.to_str().unwrap();
    helm(&["lint", chart_dir]);
    let rendered = helm(&["template", "pms", chart_dir, "--include-crds"]);
    for expected in [
        "kind: PaimonMysqlSyncSavepoint",
        "kind: PaimonMysqlSync\n",
        "resources: [jobs]",
        "resources: [paimonmysqlsyncsavepoints]",
        "resources: [pods]",
        "resources: [customresourcedefinitions]",
    ] {
        assert!(
            rendered.contains(expected),
            "helm template lacks {expected:?}"
        );
    }
    // The optional PodDisruptionBudget and NetworkPolicy render when asked for.
    let hardened = helm(&[
        "template",
        "pms",
        chart_dir,
        "--set",
        "podDisruptionBudget.enabled=true,networkPolicy.enabled=true,replicaCount=2",
    ]);
    for expected in [
        "kind: PodDisruptionBudget",
        "minAvailable: 1",
        "kind: NetworkPolicy",
        "policyTypes: [Ingress]",
    ] {
        assert!(
            hardened.contains(expected),
            "helm template lacks {expected:?}"
        );
    }
    assert!(
        !rendered.contains("kind: NetworkPolicy")
            && !rendered.contains("kind: PodDisruptionBudget")
    );
    // A list of watched namespaces: a Role and RoleBinding in each, no ClusterRole for them.
    let scoped = helm(&[
        "template",
        "pms",
        chart_dir,
        "--set",
        "watchNamespaces={team-a,team-b}",
    ]);
    for expected in [
        "--namespace=team-a,team-b",
        "kind: Role\nmetadata:\n  name: pms-paimon-mysql-sync\n  namespace: team-a",
        "kind: RoleBinding\nmetadata:\n  name: pms-paimon-mysql-sync\n  namespace: team-b",
    ] {
        assert!(
            scoped.contains(expected),
            "helm template lacks {expected:?}:\n{scoped}"
        );
    }
    assert!(
        !scoped.contains("kind: ClusterRoleBinding\nmetadata:\n  name: pms-paimon-mysql-sync\n")
    );
    // The plain-kubectl install is the chart rendered with its defaults, and the server takes it.
    let manifests = repo_root().join("deploy");
    let rendered_defaults = helm(&[
        "template",
        "pms",
        chart_dir,
        "--namespace",
        "pms-system",
        "--include-crds",
    ]);
    let committed = std::fs::read_to_string(manifests.join("paimon-mysql-sync.yaml")).unwrap();
    assert!(
        rendered_defaults == committed,
        "deploy/paimon-mysql-sync.yaml is stale: run `make manifests`"
    );
    // The README's Kubernetes quick start, as written: its images come from `make images`
    // (test-deps), the watch of `kubectl get pms -w` is left out.
    let quick_start: Vec<String> = docs::run_block("README.md", "helm install")
        .into_iter()
        .filter(|c| !c.starts_with("scripts/images.sh"))
        .map(|c| c.trim_end_matches(" -w").to_string())
        .collect();
    let shown = docs::run_commands(&repo_root(), &shell_prelude(), &quick_start);
    assert!(
        shown
            .last()
            .is_some_and(|out| out.contains("orders-to-mysql")),
        "the quick start's `kubectl get pms` lists the example's sync: {shown:?}"
    );
    // Taken out again before the operator starts: this test's own syncs come next.
    let example = repo_root().join("examples/orders-to-mysql.yaml");
    kubectl(&["delete", "-n", "data", "-f", example.to_str().unwrap()]);
    kubectl(&[
        "wait",
        "--for=condition=established",
        "--timeout=60s",
        "crd/paimonmysqlsyncs.paimonsync.io",
        "crd/paimonmysqlsyncsavepoints.paimonsync.io",
    ]);
    assert!(
        get("deployment", "pms-paimon-mysql-sync", "pms-system").is_some(),
        "the chart installs the operator"
    );
    let dir = manifests.to_str().unwrap();
    kubectl(&[
        "apply",
        "--server-side",
        "--force-conflicts",
        "--dry-run=server",
        "-k",
        dir,
    ]);
    kubectl(&["create", "namespace", NS]);
    every_resource_the_guide_shows_is_accepted();
}

/// Each resource the README and the guide show (a part of a spec over a minimal whole one)
/// is accepted by the API server with the CRDs installed: their schemas and CEL rules.
fn every_resource_the_guide_shows_is_accepted() {
    let shown = docs::resources_shown();
    assert!(
        shown.len() >= 8,
        "only {} resources found in the guide",
        shown.len()
    );
    for (page, resource) in shown {
        let out = kubectl_output(
            &["create", "--dry-run=server", "-n", "data", "-f", "-"],
            Some(&resource.to_string()),
        );
        assert!(
            out.status.success(),
            "{page}: the API server refuses a resource the guide shows: {}\n{resource:#}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `kubectl apply` of `manifest` is refused, with `message` in what the API server says.
fn refused(manifest: &str, message: &str) {
    let out = apply(manifest);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success() && err.contains(message), "{err}");
}

/// An invalid resource is rejected by the API server with a readable message: parallelism 0,
/// `from-snapshot` without `startSnapshot` (a CEL rule), a sink URL that is not `mysql://`,
/// TLS settings that contradict the mode (CEL rules), a name too long for its Jobs, a password
/// in the URL.
fn invalid_resources_are_rejected(db: &TestDb) {
    let bad = SyncConfigBuilder::new(
        "/nowhere",
        "db",
        "t",
        &format!("postgres://127.0.0.1:{}/{}", db.port, db.name),
    )
    .poll_interval(Duration::from_millis(200))
    .scan_mode(ScanMode::FromSnapshot)
    .credentials_secret("mysql-writer")
    .max_rows(200)
    .parallelism(0)
    .tls(json!({"mode": "required", "caFile": "/ca.pem", "serverName": "db"}))
    .checkpoint_interval(Duration::from_secs(1))
    .state(SyncState::Running);
    let out = apply(&sync_resource(&bad));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "an invalid PaimonMysqlSync must be rejected"
    );
    assert!(
        err.contains("spec.parallelism") && err.contains("greater than or equal to 1"),
        "{err}"
    );
    assert!(
        err.contains("scanMode from-snapshot and from-snapshot-full need startSnapshot"),
        "{err}"
    );
    assert!(err.contains("spec.sink.url"), "{err}");
    // A URL the worker could not connect with: no host, no database, parameters.
    for url in [
        "mysql://",
        "mysql:///db",
        "mysql://db-host:3306",
        "mysql://h/db?ssl=1",
    ] {
        let bad = sync_resource(&SyncConfigBuilder::new("/nowhere", "db", "t", url));
        let out = apply(&bad);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            !out.status.success() && err.contains("spec.sink.url"),
            "{url}: {err}"
        );
    }
    for tls_rule in [
        "a CA is only used by mode verify-ca or verify-identity",
        "serverName is only used by mode verify-identity",
    ] {
        assert!(err.contains(tls_rule), "{err}");
    }
    // A name that reads as the rebuild of another sync (a CEL rule on metadata.name).
    let url = format!("mysql://127.0.0.1:{}/{}", db.port, db.name);
    let named = sync_resource(&SyncConfigBuilder::new("/nowhere", "db", "t", &url))
        .replace(&format!("name: {SYNC}\n"), "name: orders-rebuild\n");
    refused(&named, "names a rebuild's new generation of another sync");
    // A name its Jobs' names would outgrow (label values hold 63 characters).
    let long = "o".repeat(56);
    let named = sync_resource(&SyncConfigBuilder::new("/nowhere", "db", "t", &url))
        .replace(&format!("name: {SYNC}\n"), &format!("name: {long}\n"));
    refused(&named, "a sync's name has at most 55 characters");
    // A name with "--", which names a database sync's workers (`shop--pool-0`).
    let named = sync_resource(&SyncConfigBuilder::new("/nowhere", "db", "t", &url))
        .replace(&format!("name: {SYNC}\n"), "name: shop--pool-0\n");
    refused(&named, "a sync's name must not contain \"--\"");
    // A database sync whose pooled workers' names would outgrow a sync's.
    refused(&format!(
        "apiVersion: paimonsync.io/v1alpha1\nkind: PaimonMysqlDatabaseSync\nmetadata: {{name: {}, namespace: {NS}}}\n\
         spec:\n  tables: {{pattern: '.*'}}\n  template:\n    source: {{warehouse: /nowhere, database: db, table: '{{table}}'}}\n    \
         sink: {{url: 'mysql://127.0.0.1:1/db', credentialsSecretRef: {{name: mysql-writer}}, table: '{{table}}'}}\n",
        "d".repeat(pms_crds::contract::MAX_DATABASE_SYNC_NAME + 1)
    ), "a database sync's name has at most 46 characters");
    // A rollback with upgradeMode stateless would rebuild the table a second time.
    let mut resource: serde_yaml::Value = serde_yaml::from_str(&sync_resource(
        &SyncConfigBuilder::new("/nowhere", "db", "t", &url),
    ))
    .unwrap();
    let spec = resource["spec"].as_mapping_mut().unwrap();
    spec.insert("upgradeMode".into(), "stateless".into());
    spec.insert(
        "rollback".into(),
        serde_yaml::from_str("{readinessTimeout: 10s}").unwrap(),
    );
    refused(
        &serde_yaml::to_string(&resource).unwrap(),
        "rollback is not offered with upgradeMode: stateless",
    );
    // A password in the URL would land in the sync's ConfigMap.
    let secret_url = format!("mysql://app:s3cret@127.0.0.1:{}/{}", db.port, db.name);
    refused(
        &sync_resource(&SyncConfigBuilder::new("/nowhere", "db", "t", &secret_url)),
        "sink.url carries a password",
    );
}

/// A sync's tables are part of what its checkpoints belong to: an update that changes the
/// Paimon table or `sink.table` is refused by the API server (CEL transition rules), saying how
/// to move a sync; the URL may change (a failover to another host; another database in it is
/// refused by the workers, whose checkpoints name it). Server-side dry runs: the sync is left
/// as it is.
fn a_sync_cannot_be_moved_to_another_table(table: &Table, db: &TestDb) {
    let dry_run = |spec: SyncConfigBuilder| {
        let resource = sync_resource(&spec.parallelism(2).state(SyncState::Running));
        kubectl_output(&["apply", "--dry-run=server", "-f", "-"], Some(&resource))
    };
    let moved = [
        (
            "sink.table",
            sync_spec(table, db).target_table("orders_elsewhere"),
        ),
        (
            "the Paimon table",
            SyncConfigBuilder::new(
                table.warehouse().display().to_string(),
                &table.database,
                "other",
                "",
            )
            .sink_url(&format!("mysql://127.0.0.1:{}/{}", db.port, db.name))
            .poll_interval(Duration::from_millis(200))
            .credentials_secret("mysql-writer")
            .max_rows(200)
            .checkpoint_interval(Duration::from_secs(1)),
        ),
    ];
    for (what, spec) in moved {
        let out = dry_run(spec);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success(), "a change of {what} must be refused");
        assert!(
            err.contains("create a new PaimonMysqlSync"),
            "{what}: {err}"
        );
    }
    let failover =
        sync_spec(table, db).sink_url(&format!("mysql://localhost:{}/{}", db.port, db.name));
    let out = dry_run(failover);
    assert!(
        out.status.success(),
        "another host for the same database is accepted: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A Paimon table with 4 buckets, the MySQL table, and a Secret with a dedicated MySQL writer.
async fn source_target_and_secret(db: &TestDb) -> Table {
    source_target_and_secret_of(db, 400).await
}

/// The same with `rows` rows.
async fn source_target_and_secret_of(db: &TestDb, rows: i64) -> Table {
    let table = orders_table(json!({"bucket": "4", "changelog-producer": "input"}), false);
    table.commits(vec![generate(1, rows, "+I", 0)]);
    db.exec(ORDERS_DDL).await;
    mysql_writer_secret(db, NS, "e2e_writer", SECRET_PASSWORD).await;
    table
}

/// `kubectl apply` of a valid sync with 2 slots.
fn create_sync(table: &Table, db: &TestDb) {
    let spec = sync_spec(table, db)
        .parallelism(2)
        .state(SyncState::Running);
    apply_ok(&sync_resource(&spec));
}

/// The operator builds one Deployment per slot (1 replica, Recreate, Secret references, a
/// restricted security context, owned by the sync), the config, Service and worker RBAC.
async fn operator_builds_the_objects() {
    let deployments = wait_for("2 slot deployments", LONG, || {
        let d = list("deployment", NS, SELECTOR);
        (d.len() == 2).then_some(d)
    })
    .await;
    for d in &deployments {
        let spec = &d["spec"];
        assert_eq!(spec["replicas"], 1);
        assert_eq!(spec["strategy"]["type"], "Recreate");
        let env = &spec["template"]["spec"]["containers"][0]["env"];
        assert!(
            env.to_string().contains("\"PMS_SLOT\"")
                && !env.to_string().contains("\"PMS_SLOTS\"")
                && env.to_string().contains("secretKeyRef"),
            "{env}"
        );
        assert!(
            !env.to_string().contains(SECRET_PASSWORD),
            "secrets are referenced, not copied"
        );
        assert_eq!(
            spec["template"]["spec"]["containers"][0]["securityContext"]
                ["allowPrivilegeEscalation"],
            false
        );
        assert_eq!(
            d["metadata"]["ownerReferences"][0]["kind"],
            "PaimonMysqlSync"
        );
    }
    for (kind, name) in [
        ("configmap", format!("{SYNC}-config")),
        ("service", format!("{SYNC}-metrics")),
        ("serviceaccount", format!("{SYNC}-worker")),
        ("role", format!("{SYNC}-worker")),
        ("rolebinding", format!("{SYNC}-worker")),
    ] {
        wait_for(&format!("{kind} {name}"), LONG, || get(kind, &name, NS)).await;
    }
    let pms = get("pms", SYNC, NS).unwrap();
    assert!(pms["metadata"]["finalizers"]
        .to_string()
        .contains("paimonsync.io/cleanup"));
    // Each slot's checkpoint ConfigMap is made by the operator, so no other sync's worker can
    // take its name first.
    for slot in 0..2 {
        let name = format!("{SYNC}-checkpoint-{slot}");
        let cm = wait_for(&format!("configmap {name}"), LONG, || {
            get("configmap", &name, NS)
        })
        .await;
        assert_eq!(
            cm["metadata"]["labels"]["paimonsync.io/slot"],
            slot.to_string(),
            "{cm}"
        );
    }
}

/// A sync created before its Secret fails validation; creating the Secret reconciles it at
/// once (Secrets are watched, their metadata only), not at the next resync of an invalid sync
/// (30 s).
async fn a_secret_created_late_reconciles_its_sync(table: &Table, db: &TestDb) {
    let name = "late-secret";
    let spec = sync_spec(table, db)
        .credentials_secret("late-writer")
        .state(SyncState::Suspended);
    apply_ok(&named_sync_resource(name, &spec));
    let missing = format!("Secret {NS}/late-writer does not exist");
    wait_for("the sync failed for its missing Secret", LONG, || {
        let status = get("pms", name, NS)?["status"].clone();
        (status["phase"] == "Failed" && status.to_string().contains(&missing)).then_some(())
    })
    .await;
    let created = std::time::Instant::now();
    kubectl(&[
        "create",
        "secret",
        "generic",
        "late-writer",
        "-n",
        NS,
        "--from-literal=username=u",
        "--from-literal=password=p",
    ]);
    wait_for("the sync reconciled once its Secret exists", LONG, || {
        let status = get("pms", name, NS)?["status"].clone();
        (status["phase"] != "Failed").then_some(())
    })
    .await;
    let waited = created.elapsed();
    assert!(
        waited < Duration::from_secs(15),
        "reconciled {waited:?} after the Secret was created: not by its watch"
    );
    kubectl(&[
        "delete",
        "pms",
        name,
        "-n",
        NS,
        "--wait=true",
        "--timeout=60s",
    ]);
    kubectl(&["delete", "secret", "late-writer", "-n", NS]);
}

/// Leader election: the running operator holds the Lease; a second replica waits and does nothing.
async fn only_the_leader_reconciles() {
    let lease = wait_for("the leader Lease", LONG, || {
        get("lease", "pms-operator", NS)
    })
    .await;
    let holder = lease["spec"]["holderIdentity"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(holder.starts_with("pms-operator-"), "{lease}");
    let second_log = std::env::temp_dir().join("pms-e2e-operator-2.log");
    let second = start_operator(&second_log);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        get("lease", "pms-operator", NS).unwrap()["spec"]["holderIdentity"],
        holder.as_str(),
        "the leader keeps the lease"
    );
    // The standby stops at once on SIGTERM (no waiting out a grace period).
    let mut second = second;
    let status = stop_with_sigterm(&mut second.0).await;
    assert!(status.success(), "the standby exits 0 on SIGTERM");
    let log = std::fs::read_to_string(&second_log).unwrap();
    assert!(
        log.contains("waiting to become the leader") && !log.contains("leader: reconciling"),
        "{log}"
    );
}

/// The chart's admission policy, with its lists set: a sync's `workerPod` image from another
/// registry, a hostPath volume, and a database sync's template or override doing the same are
/// refused at `kubectl apply` with the chart's message; within the lists (or without
/// `workerPod`) accepted. The policy is removed after (the chart's default lists are empty:
/// nothing is rendered).
fn the_admission_policy_narrows_worker_pods() {
    let chart = repo_root().join("charts/paimon-mysql-sync");
    let chart = chart.to_str().unwrap();
    assert!(
        !helm(&["template", "pms", chart]).contains("ValidatingAdmissionPolicy"),
        "nothing to check with the default lists"
    );
    let policy = helm(&[
        "template",
        "pms",
        chart,
        "--show-only",
        "templates/admissionpolicy.yaml",
        "--set",
        "admissionPolicy.allowedImagePrefixes={registry.example.com/pms/}",
        "--set",
        "admissionPolicy.allowedVolumeTypes={persistentVolumeClaim,configMap}",
    ]);
    apply_ok(&policy);
    let sync = |name: &str, worker_pod: &str| {
        format!(
            "apiVersion: paimonsync.io/v1alpha1\nkind: PaimonMysqlSync\nmetadata: {{name: {name}, namespace: {NS}}}\n\
             spec: {{source: {{warehouse: /w, database: d, table: t}}, sink: {{url: 'mysql://h:3306/d', table: t}}{worker_pod}}}\n"
        )
    };
    let database = |name: &str, more: &str| {
        format!(
            "apiVersion: paimonsync.io/v1alpha1\nkind: PaimonMysqlDatabaseSync\nmetadata: {{name: {name}, namespace: {NS}}}\n\
             spec:\n  tables: {{pattern: '.*'}}\n  template:\n    source: {{warehouse: /w, database: d, table: '{{table}}'}}\n    \
             sink: {{url: 'mysql://h:3306/d', table: '{{table}}'}}\n{more}"
        )
    };
    let image = "workerPod.image must start with one of registry.example.com/pms/";
    let volumes = "workerPod.volumes may only be of the types persistentVolumeClaim, configMap";
    let refused = [
        (sync("vap-a", ", workerPod: {image: evil.io/w}"), image),
        (
            sync(
                "vap-b",
                ", workerPod: {volumes: [{name: w, hostPath: {path: /x}}]}",
            ),
            volumes,
        ),
        (
            database(
                "vap-c",
                "    workerPod: {volumes: [{name: w, hostPath: {path: /x}}]}\n",
            ),
            volumes,
        ),
        (
            database(
                "vap-d",
                "  overrides:\n    t1: {workerPod: {image: evil.io/w}}\n",
            ),
            image,
        ),
    ];
    // The policy takes effect once the API server has seen it.
    let deadline = std::time::Instant::now() + LONG;
    for (manifest, message) in refused {
        loop {
            let out = apply(&manifest);
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            if !out.status.success() && err.contains(message) {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "not refused: {manifest}\n{err}"
            );
            if out.status.success() {
                // Admitted before the policy was in force: taken out, tried again.
                kubectl_output(&["delete", "-f", "-", "--wait=false"], Some(&manifest));
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    let allowed = sync(
        "vap-e",
        ", workerPod: {image: registry.example.com/pms/w:1, volumes: [{name: w, persistentVolumeClaim: {claimName: x}}]}",
    );
    apply_ok(&allowed);
    kubectl(&["delete", "pms", "vap-e", "-n", NS, "--wait=false"]);
    let out = kubectl_output(&["delete", "-f", "-"], Some(&policy));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A sync named `legacy` with `workerPod` set, as YAML for `kubectl apply`.
fn legacy_sync() -> String {
    format!(
        "apiVersion: paimonsync.io/v1alpha1\nkind: PaimonMysqlSync\nmetadata: {{name: legacy, namespace: {NS}}}\n\
         spec: {{source: {{warehouse: /nowhere, database: d, table: t}}, sink: {{url: 'mysql://db:3306/d', table: t}}, \
         state: suspended, workerPod: {{labels: {{team: legacy}}}}}}\n"
    )
}

/// As after a `helm upgrade` from a chart whose CRD had no `spec.workerPod` (Helm leaves a
/// chart's crds/ alone): the older schema is in place, and a sync made under it.
fn an_older_crd_with_a_sync() {
    let name = "paimonmysqlsyncs.paimonsync.io";
    let mut crd: Json =
        serde_json::from_str(&kubectl(&["get", "crd", name, "-o", "json"])).unwrap();
    let props = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["properties"];
    props.as_object_mut().unwrap().remove("workerPod");
    // An older schema without the range of sink.maxRows, too: it admits a sync that doesn't
    // decode (see `an_undecodable_sync_stops_nothing_else`).
    if let Some(max_rows) = props["sink"]["properties"]["maxRows"].as_object_mut() {
        max_rows.remove("maximum");
    }
    let out = kubectl_output(&["replace", "-f", "-"], Some(&crd.to_string()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = apply(&legacy_sync());
    assert!(!out.status.success(), "the older CRD has no workerPod");
    let older = legacy_sync().replace(", workerPod: {labels: {team: legacy}}", "");
    apply_ok(&older);
    apply_ok(&undecodable_sync());
    // And one CRD of a later schema revision than the operator's (as after a `helm rollback`).
    kubectl(&[
        "annotate",
        "crd",
        LATER_CRD,
        &format!("{REVISION}=99"),
        "--overwrite",
    ]);
}

const UNDECODABLE: &str = "undecodable";

/// A sync whose `sink.maxRows` doesn't fit the `u32` it decodes into (admitted by the older
/// schema, kept by the API server under the newer one).
fn undecodable_sync() -> String {
    format!(
        "apiVersion: paimonsync.io/v1alpha1\nkind: PaimonMysqlSync\nmetadata: {{name: {UNDECODABLE}, namespace: {NS}}}\n\
         spec: {{source: {{warehouse: /nowhere, database: d, table: t2}}, sink: {{url: 'mysql://db:3306/d', table: t2, \
         maxRows: 4294967296}}, state: suspended}}\n"
    )
}

/// The operator started with the undecodable sync among the others (its first list holds
/// it): the others are reconciled (the legacy sync gets its status, and is deleted through its
/// finalizer), the bad one gets a Warning Event and a `Ready` condition naming the value, the
/// log names it, and it can be deleted.
async fn an_undecodable_sync_stops_nothing_else() {
    let undecodable = wait_for("the undecodable sync reported", LONG, || {
        let pms = get("pms", UNDECODABLE, NS)?;
        let ready = condition(&pms["status"], "Ready");
        (ready["reason"] == "Undecodable").then_some(ready)
    })
    .await;
    let message = undecodable["message"].as_str().unwrap_or_default();
    assert!(message.contains("4294967296"), "{undecodable}");
    assert!(event_reasons_of(UNDECODABLE).contains("Undecodable"));
    let log = std::fs::read_to_string(operator_log()).unwrap_or_default();
    assert!(
        log.contains("can't decode this object") && log.contains(UNDECODABLE),
        "{log}"
    );
    kubectl(&[
        "delete",
        "pms",
        UNDECODABLE,
        "-n",
        NS,
        "--wait=true",
        "--timeout=60s",
    ]);
    assert!(get("pms", UNDECODABLE, NS).is_none());
}

/// The CRD stamped with a later revision before the operator starts, and the stamp.
const LATER_CRD: &str = "paimonmysqlsyncsavepoints.paimonsync.io";
const REVISION: &str = pms_crds::SCHEMA_REVISION_ANNOTATION;

/// The operator applies its own CRDs when it starts leading: the new field is there, the sync
/// made under the older schema stays, and takes the new field.
async fn the_operator_brings_its_crds_up_to_date() {
    wait_for("the CRD with workerPod", LONG, || {
        let crd = kubectl(&["get", "crd", "paimonmysqlsyncs.paimonsync.io", "-o", "json"]);
        crd.contains("\"workerPod\"").then_some(())
    })
    .await;
    assert!(get("pms", "legacy", NS).is_some(), "the older sync stays");
    // The CRD of a later revision is left as it is, and the log says why.
    let later = kubectl(&["get", "crd", LATER_CRD, "-o", "json"]);
    let later: Json = serde_json::from_str(&later).unwrap();
    assert_eq!(later["metadata"]["annotations"][REVISION], "99", "{later}");
    let log = std::fs::read_to_string(operator_log()).unwrap_or_default();
    assert!(log.contains("later schema revision"), "{log}");
    let ours = format!("{REVISION}={}", pms_crds::SCHEMA_REVISION);
    kubectl(&["annotate", "crd", LATER_CRD, &ours, "--overwrite"]);
    apply_ok(&legacy_sync());
    // Reconciled, though an undecodable sync is in the same list.
    wait_for("the legacy sync reconciled", LONG, || {
        let pms = get("pms", "legacy", NS)?;
        (pms["status"]["phase"] == "Suspended").then_some(())
    })
    .await;
    kubectl(&[
        "delete",
        "pms",
        "legacy",
        "-n",
        NS,
        "--wait=true",
        "--timeout=60s",
    ]);
}

/// The workers run (locally, as their pods would) and checkpoint into ConfigMaps; MySQL equals
/// the reference read; status, printer columns and events report the snapshot.
async fn workers_sync_the_table(table: &Table, db: &TestDb) {
    a_full_read_shows_its_progress().await;
    run_workers_once(2);
    mark_ready(2, true);
    assert_synced(table, db, "orders", None).await;
    let latest = table.latest();
    let s = wait_status("status Running at the latest snapshot, no full read", |s| {
        s["phase"] == "Running"
            && s["snapshotId"] == latest
            && s["readySlots"] == 2
            && s["slots"]
                .as_array()
                .is_some_and(|k| k.iter().all(|k| k["fullRead"].is_null()))
    })
    .await;
    assert_eq!(s["slotsReady"], "2/2");
    assert_eq!(s["slots"].as_array().unwrap().len(), 2);
    assert!(s["conditions"].to_string().contains("\"Ready\""));
    assert_eq!(
        condition(&s, "PreflightPassed")["status"],
        "True",
        "slot 0's pre-flight: {s}"
    );
    let printed = kubectl(&["get", "pms", "-n", NS]);
    assert!(
        printed.contains("Running") && printed.contains("2/2"),
        "printer columns:\n{printed}"
    );
    let events = event_reasons();
    assert!(
        events.contains("Running"),
        "a phase change is an event:\n{events}"
    );
    assert_eq!(argocd_health().0, "Healthy");
}

/// Each slot's worker killed at its full read's first write: the checkpoint that began the
/// full read says how many rows it has to write, and the status and `kubectl pms status` show
/// it for each slot.
async fn a_full_read_shows_its_progress() {
    let dir = tempfile::tempdir().unwrap();
    let config = mounted_config(dir.path());
    let args = ["run", "--once"].map(String::from);
    let crash = BTreeMap::from([(
        "PMS_FAILPOINT".to_string(),
        "before-transaction@1".to_string(),
    )]);
    for k in 0..2 {
        let d = get("deployment", &format!("{SYNC}-slot-{k}"), NS).expect("slot deployment");
        let out = pod_command(&d, &config, &args, &crash).output().unwrap();
        assert!(!out.status.success(), "slot {k} stopped at its first write");
    }
    let s = wait_status("each slot's full read in the status", |s| {
        s["slots"].as_array().is_some_and(|k| {
            k.len() == 2
                && k.iter().all(|k| {
                    k["fullRead"]["rows"] == 0 && k["fullRead"]["expectedRows"].as_i64() > Some(0)
                })
        })
    })
    .await;
    let expected: i64 = s["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["fullRead"]["expectedRows"].as_i64().unwrap())
        .sum();
    assert_eq!(expected, 400, "the slots' rows are the snapshot's: {s}");
    let (ok, screen) = kubectl_pms(&["status", SYNC, "-n", NS]);
    assert!(
        ok && screen.contains("FULL READ") && screen.contains("rows (0%)"),
        "{screen}"
    );
}

/// `kubectl pms list` (`-A`, `--kubeconfig`, `--context`) and `kubectl pms restart`, on a
/// sync of their own.
async fn the_plugin_lists_watches_and_restarts() {
    const SYNC: &str = "by-plugin";
    const SELECTOR: &str = "paimonsync.io/sync=by-plugin";
    apply_ok(&idle_sync(NS, SYNC, "by_plugin"));
    wait_for("its slot Deployment", LONG, || {
        (!list("deployment", NS, SELECTOR).is_empty()).then_some(())
    })
    .await;
    let (ok, listed) = kubectl_pms(&["list", "-n", NS]);
    assert!(ok && listed.contains("FRESHNESS"), "{listed}");
    assert!(
        listed.lines().any(|l| l.starts_with(&format!("{SYNC} "))),
        "{listed}"
    );
    let context = kubectl(&["config", "current-context"]);
    let config = kubeconfig();
    let everywhere = [
        "ls",
        "-A",
        "--kubeconfig",
        &config,
        "--context",
        context.trim(),
    ];
    let (ok, listed) = kubectl_pms(&everywhere);
    assert!(
        ok && listed.starts_with("NAMESPACE")
            && listed
                .lines()
                .any(|l| l.starts_with(NS) && l.contains(SYNC)),
        "{listed}"
    );
    // status for scripts: the resource as JSON or YAML, without managed fields; and --watch.
    let (ok, as_json) = kubectl_pms(&["status", SYNC, "-n", NS, "-o", "json"]);
    let doc: Json = serde_json::from_str(&as_json).expect("status -o json is JSON");
    assert!(ok && doc["kind"] == "PaimonMysqlSync", "{as_json}");
    assert!(doc["metadata"]["managedFields"].is_null(), "{as_json}");
    assert_eq!(doc["spec"]["sink"]["table"], "by_plugin");
    let (ok, as_yaml) = kubectl_pms(&["status", SYNC, "-n", NS, "-o", "yaml"]);
    let doc: Json = serde_yaml::from_str(&as_yaml).expect("status -o yaml is YAML");
    assert!(ok && doc["metadata"]["name"] == SYNC, "{as_yaml}");
    let watched = pms_tests::kube::kubectl_pms_streaming(
        &["status", SYNC, "-n", NS, "--watch", "--interval", "1s"],
        Duration::from_secs(5),
    );
    assert!(
        watched.starts_with("--- ") && watched.contains(&format!("PaimonMysqlSync {NS}/{SYNC}")),
        "{watched}"
    );
    let (ok, said) = kubectl_pms(&["ls", "--kubeconfig", &config, "--context", "no-such"]);
    assert!(!ok && said.contains("the kubeconfig"), "{said}");
    let (ok, said) = kubectl_pms(&["restart", SYNC, "-n", NS]);
    let nonce = get("pms", SYNC, NS).unwrap()["spec"]["restartNonce"].clone();
    assert!(
        ok && said.contains("spec.restartNonce")
            && nonce.as_str().is_some_and(|n| said.contains(n)),
        "{said} / {nonce}"
    );
    wait_for("the slots' pods roll with the nonce", LONG, || {
        list("deployment", NS, SELECTOR)
            .iter()
            .all(|d| {
                d["spec"]["template"]["metadata"]["annotations"]["paimonsync.io/restart-nonce"]
                    == nonce
            })
            .then_some(())
    })
    .await;
    // A restore to a snapshot: asked first (no terminal here: refused without --yes).
    let (ok, said) = kubectl_pms(&["restore", SYNC, "--snapshot-id", "5", "-n", NS]);
    assert!(!ok && said.contains("--yes"), "{said}");
    let (ok, said) = kubectl_pms(&["restore", SYNC, "--snapshot-id", "5", "-n", NS, "--yes"]);
    assert!(ok && said.contains("spec.restoreFrom.snapshotId"), "{said}");
    assert_eq!(
        get("pms", SYNC, NS).unwrap()["spec"]["restoreFrom"],
        json!({"snapshotId": 5})
    );
    kubectl(&["delete", "pms", SYNC, "-n", NS, "--wait=false"]);
}

/// A worker that stops on an error (here the Secret's password went wrong) says why in the
/// status and an Event, without the password; once it runs again, the note goes.
async fn a_failing_worker_says_why() {
    let wrong = "not-the-Pa55word";
    let patch = json!({"stringData": {"password": wrong}}).to_string();
    kubectl(&["patch", "secret", "mysql-writer", "-n", NS, "-p", &patch]);
    let outs = run_workers(2);
    assert!(outs.iter().all(|o| !o.status.success()));
    let s = wait_status("Degraded with the worker's error", |s| {
        s["phase"] == "Degraded" && s["conditions"].to_string().contains("WorkerFailed")
    })
    .await;
    let degraded = s["conditions"].to_string();
    assert!(
        degraded.contains("Access denied") && degraded.contains("slot "),
        "{degraded}"
    );
    assert!(
        !degraded.contains(wrong),
        "the password stays out of the status"
    );
    assert!(event_reasons().contains("Degraded"));
    let preflight = condition(&s, "PreflightPassed");
    assert_eq!(preflight["status"], "False", "{preflight}");
    assert!(
        preflight["message"]
            .as_str()
            .unwrap_or_default()
            .contains("mysql.connect")
            && preflight.to_string().contains("credentialsSecretRef"),
        "the failing check and its fix: {preflight}"
    );
    let (health, why) = argocd_health();
    assert!(
        health == "Degraded" && why.contains("Access denied"),
        "{health}: {why}"
    );
    let patch = json!({"stringData": {"password": SECRET_PASSWORD}}).to_string();
    kubectl(&["patch", "secret", "mysql-writer", "-n", NS, "-p", &patch]);
    run_workers_once(2);
    wait_status("Running again, pre-flight passed", |s| {
        s["phase"] == "Running"
            && !s["conditions"].to_string().contains("WorkerFailed")
            && condition(s, "PreflightPassed")["status"] == "True"
    })
    .await;
}

/// `spec.rollback`: a new spec whose workers do not run ready within `readinessTimeout` goes
/// back to the last spec that did (here: a Secret with a wrong password); the sync says so
/// (Degraded, reason RolledBack, an Event, Argo CD) until the spec changes again.
async fn a_spec_that_does_not_run_ready_is_rolled_back(table: &Table) {
    let patch_spec = |spec: Json| {
        let patch = json!({ "spec": spec }).to_string();
        kubectl(&["patch", "pms", SYNC, "-n", NS, "--type=merge", "-p", &patch]);
        get("pms", SYNC, NS).unwrap()["metadata"]["generation"].clone()
    };
    let rolled_out = || (0..2).for_each(|k| mark_rolled_out(NS, &format!("{SYNC}-slot-{k}")));
    let secret_of = |k: u32| {
        let d = get("deployment", &format!("{SYNC}-slot-{k}"), NS).unwrap();
        d["spec"]["template"]["spec"]["containers"][0]["env"].to_string()
    };
    // Opted in, the running spec is the stable one once its slots run ready.
    let stable = patch_spec(json!({"rollback": {"readinessTimeout": "5s"}}));
    rolled_out();
    wait_status("the running spec recorded as stable", |s| {
        s["lastStableSpec"]["generation"] == stable
    })
    .await;
    // A new spec whose workers can't log in.
    kubectl(&[
        "create",
        "secret",
        "generic",
        "mysql-writer-wrong",
        "-n",
        NS,
        "--from-literal=username=root",
        "--from-literal=password=not-the-Pa55word",
    ]);
    // The same edit moves the checkpoints to S3: rolled back, the workers checkpoint in
    // ConfigMaps again, and that is where the operator must read them.
    s3_credentials_secret("s3-rollback");
    let mut on_s3 = s3::Server::shared().settings();
    on_s3["bucket"] = json!(s3::BUCKET);
    on_s3["prefix"] = json!(format!("rollback-{}", std::process::id()));
    on_s3["credentialsSecretRef"] = json!({"name": "s3-rollback"});
    let failing = patch_spec(json!({
        "sink": {"credentialsSecretRef": {"name": "mysql-writer-wrong"}},
        "checkpoint": {"storage": "s3", "s3": on_s3},
    }));
    wait_for("the new template", LONG, || {
        (0..2)
            .all(|k| secret_of(k).contains("mysql-writer-wrong"))
            .then_some(())
    })
    .await;
    assert!(run_workers(2).iter().all(|o| !o.status.success()));
    mark_ready(2, false);
    let s = wait_status("rolled back", |s| s["rollback"]["phase"] == "RolledBack").await;
    assert_eq!(s["rollback"]["generation"], failing, "{s}");
    assert_eq!(s["lastStableSpec"]["generation"], stable, "{s}");
    assert!(
        (0..2).all(|k| !secret_of(k).contains("mysql-writer-wrong")),
        "the old template again"
    );
    assert!(event_reasons().contains("RolledBack"));
    // The old spec runs again, ready: still Degraded (RolledBack) until the spec changes; its
    // slots' progress read from their ConfigMaps, not from the S3 of the spec it left.
    let latest = table.latest();
    run_workers_once(2);
    rolled_out();
    let s = wait_status("running the stable spec", |s| {
        s["phase"] == "Running"
            && condition(s, "Degraded")["reason"] == "RolledBack"
            && s["snapshotId"] == latest
    })
    .await;
    assert_eq!(condition(&s, "Degraded")["status"], "True", "{s}");
    let (health, why) = argocd_health();
    assert!(
        health == "Degraded" && why.contains("did not run ready"),
        "{health}: {why}"
    );
    // The spec fixed: nothing to watch once it runs ready, and it is the stable one.
    let fixed = patch_spec(json!({
        "sink": {"credentialsSecretRef": {"name": "mysql-writer"}},
        "checkpoint": {"storage": "configmap", "s3": null},
    }));
    rolled_out();
    wait_status("the fixed spec stable", |s| {
        s["lastStableSpec"]["generation"] == fixed
            && s["rollback"].is_null()
            && condition(s, "Degraded")["status"] == "False"
    })
    .await;
    assert_eq!(argocd_health().0, "Healthy");
    kubectl(&[
        "delete",
        "secret",
        "mysql-writer-wrong",
        "s3-rollback",
        "-n",
        NS,
    ]);
}

/// Rescale `from` → `to` of a running sync through the scale subresource, at a consistent cut:
/// the old slots (running, as their pods would) pause at the end of one snapshot before the
/// Deployments change; the new slots start exactly there, while Paimon commits `commits`. The
/// cut, and the new slots' logs.
async fn rescale_at_a_cut(
    table: &Table,
    from: u32,
    to: u32,
    commits: Vec<Json>,
) -> (i64, tempfile::TempDir) {
    let (mut old, _old_logs) = spawn_workers(from);
    kubectl(&["scale", "pms", SYNC, "-n", NS, &format!("--replicas={to}")]);
    let s = wait_status("the old slots paused at one cut", |s| {
        s["rescale"]["phase"] == "Starting"
    })
    .await;
    let cut = s["rescale"]["snapshotId"].as_i64().unwrap();
    // A removed slot's Deployment is deleted in the foreground: with no garbage collector here
    // it stays, marked for deletion.
    wait_for(&format!("{to} slot deployments"), LONG, || {
        let live = list("deployment", NS, SELECTOR)
            .into_iter()
            .filter(|d| d["metadata"]["deletionTimestamp"].is_null())
            .count();
        (live == to as usize).then_some(())
    })
    .await;
    let last = get("deployment", &format!("{SYNC}-slot-{}", to - 1), NS).unwrap();
    // The slot count is the config's parallelism (one source): no PMS_SLOTS beside it.
    let env = pod_env(&last);
    assert_eq!(env["PMS_SLOT"], (to - 1).to_string());
    assert!(!env.contains_key("PMS_SLOTS"), "{env:?}");
    // Recreate: the old pods get SIGTERM; Paimon goes on committing; the new pods start.
    for w in &mut old {
        assert!(stop_with_sigterm(w).await.success());
    }
    // Their pods gone, the garbage collector would finish the foreground deletions.
    for d in list("deployment", NS, SELECTOR) {
        if !d["metadata"]["deletionTimestamp"].is_null() {
            let name = d["metadata"]["name"].as_str().unwrap();
            let patch = r#"{"metadata":{"finalizers":null}}"#;
            kubectl(&[
                "patch",
                "deployment",
                name,
                "-n",
                NS,
                "--type=merge",
                "-p",
                patch,
            ]);
        }
    }
    table.commits(commits);
    let (mut new, logs) = spawn_workers(to);
    mark_ready(to, true);
    let s = wait_status("the new slots at the cut, the pause lifted", |s| {
        s["rescale"]["phase"] == "Done"
    })
    .await;
    assert_eq!(
        (s["rescale"]["from"].as_i64(), s["rescale"]["to"].as_i64()),
        (Some(from as i64), Some(to as i64))
    );
    assert!(s["rescale"]["took"].as_str().is_some(), "{s}");
    assert!(event_reasons().contains("Rescaled"));
    let latest = table.latest();
    wait_status("status after rescale", |s| {
        s["phase"] == "Running"
            && s["snapshotId"] == latest
            && s["slotsReady"] == format!("{to}/{to}")
    })
    .await;
    for w in &mut new {
        assert!(stop_with_sigterm(w).await.success());
    }
    (cut, logs)
}

/// Rescale 2 → 3 at a cut: the Role names the new slot's checkpoint; every new slot starts
/// right after the cut.
async fn scale_2_to_3_at_a_cut(table: &Table, db: &TestDb) {
    let commits = vec![
        generate_step(1, 100, 3, "+U", 5),
        generate_step(2, 40, 7, "-D", 0),
    ];
    let (cut, logs) = rescale_at_a_cut(table, 2, 3, commits).await;
    let role = get("role", &format!("{SYNC}-worker"), NS).unwrap();
    assert!(role.to_string().contains(&format!("{SYNC}-checkpoint-2")));
    for k in 0..3 {
        let log = std::fs::read_to_string(logs.path().join(format!("slot-{k}.log"))).unwrap();
        assert!(
            log.contains("rescaled") && log.contains(&format!("next_snapshot: {}", cut + 1)),
            "slot {k} starts at the cut (after snapshot {cut}):\n{log}"
        );
    }
    assert_synced(table, db, "orders", None).await;
}

/// Suspend: the slots go to 0 replicas (a pod's SIGTERM flushes and checkpoints); resume brings them back.
async fn suspend_and_resume() {
    set_state(SyncState::Suspended, 0).await;
    mark_ready(3, false);
    wait_status("Suspended", |s| s["phase"] == "Suspended").await;
    assert_eq!(argocd_health().0, "Suspended");
    set_state(SyncState::Running, 1).await;
}

/// `spec.restoreFrom` naming a savepoint that isn't there (or not Completed: the same refusal,
/// `jobs/tests.rs`): refused before anything stops. The slots keep their replicas, no Job is
/// made, the sync is not Degraded; removing the field clears the refusal.
async fn a_refused_restore_stops_nothing() {
    merge_patch(json!({"spec": {"restoreFrom": {"savepoint": "not-taken"}}}));
    let s = wait_status("the restore refused", |s| {
        condition(s, "RestoreRefused")["status"] == "True"
    })
    .await;
    let refused = condition(&s, "RestoreRefused")["message"].to_string();
    assert!(
        refused.contains("not-taken") && refused.contains("run on"),
        "{refused}"
    );
    assert_ne!(s["phase"], "Degraded", "{s}");
    assert!(event_reasons().contains("RestoreRefused"));
    let replicas: Vec<Json> = list("deployment", NS, SELECTOR)
        .iter()
        .map(|d| d["spec"]["replicas"].clone())
        .collect();
    assert!(replicas.iter().all(|r| r == 1), "{replicas:?}");
    assert!(
        get("job", &format!("{SYNC}-restore"), NS).is_none(),
        "no restore Job"
    );
    merge_patch(json!({"spec": {"restoreFrom": null}}));
    wait_status("the refusal cleared", |s| {
        condition(s, "RestoreRefused").is_null() && s["restore"].is_null()
    })
    .await;
    slots_at_replicas(1).await;
}

/// `spec.verify`: a verify Job runs while the sync runs; it finds nothing on an equal table
/// (`Verified` True) and, at the next interval, the row deleted behind the sync's back.
async fn periodic_verify_finds_a_deleted_row(db: &TestDb) {
    run_workers_once(3);
    mark_ready(3, true);
    wait_status("Running", |s| s["phase"] == "Running").await;
    merge_patch(json!({"spec": {"verify": {"interval": "2s"}}}));
    let job = wait_job(&format!("{SYNC}-verify"), None).await;
    let args = job["spec"]["template"]["spec"]["containers"][0]["args"].to_string();
    assert!(
        args.contains("--live") && args.contains("--publish"),
        "{args}"
    );
    let out = run_job(&job);
    assert!(out.status.success(), "verify: {}", stderr(&out));
    let verified = |status: &'static str| {
        move |s: &Json| {
            s["conditions"].as_array().is_some_and(|cs| {
                cs.iter()
                    .any(|c| c["type"] == "Verified" && c["status"] == status)
            })
        }
    };
    let s = wait_status("Verified True", verified("True")).await;
    assert_eq!(s["verify"]["result"]["missing"], 0);
    assert!(
        kubectl(&["get", "pms", "-n", NS]).contains("True"),
        "the Verified column"
    );

    db.exec("DELETE FROM orders ORDER BY id LIMIT 1").await;
    let first = job["metadata"]["annotations"]["paimonsync.io/job-id"]
        .as_str()
        .unwrap()
        .to_string();
    let job = wait_job(&format!("{SYNC}-verify"), Some(&first)).await;
    let out = run_job(&job);
    assert_eq!(
        out.status.code(),
        Some(3),
        "verify exits 3 on a difference: {}",
        stderr(&out)
    );
    let s = wait_status("Verified False", verified("False")).await;
    assert_eq!(s["verify"]["result"]["missing"], 1, "{s}");
    assert_eq!(
        s["verify"]["result"]["rounds"], 3,
        "a live verify compares a difference 3 times"
    );
    let message = s["conditions"].to_string();
    assert!(message.contains("1 rows differ"), "{message}");
    assert!(event_reasons().contains("Divergent"));

    // On demand: no interval, `kubectl pms verify` sets spec.verify.trigger, one Job runs.
    merge_patch(json!({"spec": {"verify": {"interval": null}}}));
    let second = job["metadata"]["annotations"]["paimonsync.io/job-id"]
        .as_str()
        .unwrap()
        .to_string();
    let (ok, said) = kubectl_pms(&["verify", SYNC, "-n", NS]);
    assert!(ok && said.contains("spec.verify.trigger"), "{said}");
    // (A verify of the interval may have started before it went: the harness runs it first.)
    let mut last = second;
    let s = loop {
        let job = wait_job(&format!("{SYNC}-verify"), Some(&last)).await;
        assert_eq!(
            run_job(&job).status.code(),
            Some(3),
            "the row is still missing"
        );
        last = job["metadata"]["annotations"]["paimonsync.io/job-id"]
            .as_str()
            .unwrap()
            .to_string();
        // The Job's id is its verify's start; its result recorded, the asked verify may start
        // in the same reconcile (then the status shows that one, running).
        let s = wait_status("that verify's result", |s| {
            s["verify"]["startedAt"] != last.as_str() || s["verify"]["running"] == false
        })
        .await;
        let asked = s["verify"]["lastTrigger"]
            .as_str()
            .is_some_and(|t| t.starts_with("kubectl-pms-"));
        if asked && s["verify"]["running"] == false {
            break s;
        }
    };
    assert_eq!(s["verify"]["result"]["missing"], 1, "{s}");
    let (ok, screen) = kubectl_pms(&["status", SYNC, "-n", NS]);
    assert!(ok && screen.contains("1 differ"), "{screen}");
    // The bug report: the resource, its events and pods (no kubelet: pods without logs).
    let (ok, report) = kubectl_pms(&["report", SYNC, "-n", NS]);
    assert!(
        ok && report.contains(&format!("name: {SYNC}")) && report.contains("events:"),
        "{report}"
    );
    assert!(
        !report.contains(SECRET_PASSWORD),
        "no password in the report"
    );
    let (_, logs) = kubectl_pms(&["logs", SYNC, "--slot", "0", "-n", NS]);
    assert!(
        logs.contains("==> pod") || logs.contains("no worker pod"),
        "kubectl pms logs names the slot's pod or says it has none: {logs}"
    );
    merge_patch(json!({"spec": {"verify": null}}));
}

/// The rebuild Job the operator started, once the slots are stopped (0 replicas, then
/// reported gone by the harness); with the status that started it.
async fn rebuild_job_after_the_workers_stopped(slots: u32) -> (Json, Json) {
    job_after_the_workers_stopped(slots, "rebuild").await
}

/// The same for `status.<what>` (`rebuild`, `restore`) and the Job `<sync>-<what>`.
async fn job_after_the_workers_stopped(slots: u32, what: &str) -> (Json, Json) {
    let s = wait_status(&format!("a {what} stopping the workers"), |s| {
        s["phase"] == "Rebuilding" && s[what]["phase"] == "Stopping"
    })
    .await;
    wait_for("slots at 0 replicas", LONG, || {
        list("deployment", NS, SELECTOR)
            .iter()
            .all(|d| d["spec"]["replicas"] == 0)
            .then_some(())
    })
    .await;
    mark_ready(slots, false);
    let id = s[what]["id"].as_str().unwrap().to_string();
    let job = wait_for(&format!("the Job of this {what}"), LONG, || {
        get("job", &format!("{SYNC}-{what}"), NS)
            .filter(|j| j["metadata"]["annotations"]["paimonsync.io/job-id"] == id.as_str())
    })
    .await;
    (job, s)
}

/// Runs the rebuild Job to the end and waits for `Done`, the report naming `phases`, the
/// slots back and the Job gone; returns the status.
async fn rebuild_job_runs_to_done(job: &Json, phases: &[&str]) -> Json {
    let out = run_job(job);
    assert!(out.status.success(), "rebuild: {}", stderr(&out));
    let s = wait_status("rebuild Done", |s| s["rebuild"]["phase"] == "Done").await;
    let report = get("configmap", &format!("{SYNC}-rebuild"), NS).unwrap();
    let report: Json =
        serde_json::from_str(report["data"]["report.json"].as_str().unwrap()).unwrap();
    let reported: Vec<&str> = report["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    assert_eq!(reported, phases);
    wait_for("slots back at 1 replica, the Job gone", LONG, || {
        let up = list("deployment", NS, SELECTOR)
            .iter()
            .all(|d| d["spec"]["replicas"] == 1);
        (up && get("job", &format!("{SYNC}-rebuild"), NS).is_none()).then_some(())
    })
    .await;
    s
}

const ALL_PHASES: [&str; 5] = ["Loading", "CatchingUp", "Verifying", "CuttingOver", "Done"];

/// `spec.rebuild.trigger`: the operator stops the workers, runs the rebuild Job, shows its
/// phases, and starts the workers from the new generation; the row deleted behind the sync's
/// back is back, and the old table goes after `retainOld`. Then with `policy: auto`, a sync
/// stopped on an expired snapshot is rebuilt without anyone asking, with no orphans.
async fn operator_driven_rebuilds(table: &Table, db: &TestDb) {
    merge_patch(json!({"spec": {"rebuild": {"trigger": "first", "retainOld": "1s"}}}));
    let (job, _) = rebuild_job_after_the_workers_stopped(3).await;
    // kill -9 right after the RENAME: there is no job controller here, so the harness reports
    // the failed pod as it would.
    let out = run_job_killed_at(&job, "rebuild-after-swap");
    assert!(!out.status.success());
    kubectl(&[
        "patch",
        "job",
        &format!("{SYNC}-rebuild"),
        "-n",
        NS,
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"failed":1}}"#,
    ]);
    let s = wait_status("rebuild Failed", |s| s["rebuild"]["phase"] == "Failed").await;
    assert!(
        s["rebuild"]["message"]
            .as_str()
            .unwrap()
            .contains("failed in phase CuttingOver"),
        "{s}"
    );
    // An outage until someone acts: Degraded (the alert and the Argo CD health follow the
    // phase), saying how to go on, not Rebuilding forever.
    assert_eq!(s["phase"], "Degraded", "{s}");
    let degraded = condition(&s, "Degraded");
    assert_eq!(
        (&degraded["status"], &degraded["reason"]),
        (&json!("True"), &json!("RebuildFailed")),
        "{s}"
    );
    let (health, message) = argocd_health();
    assert_eq!(health, "Degraded", "{message}");
    assert!(message.contains("spec.rebuild.trigger"), "{message}");
    assert!(event_reasons().contains("RebuildFailed"));
    assert!(
        list("deployment", NS, SELECTOR)
            .iter()
            .all(|d| d["spec"]["replicas"] == 0),
        "the old generation stays stopped"
    );
    assert!(
        run_workers(3)
            .iter()
            .all(|o| stderr(o).contains("a rebuild of this sync is in progress")),
        "and would refuse to run"
    );
    // A worker pod still in its grace period (terminating; here a finalizer holds it) may still
    // hold its slot lock and write: the rebuild Job waits until it is gone.
    let terminating = format!("{SYNC}-worker-terminating");
    worker_pod_in_its_grace_period(&terminating);
    // A new trigger resumes it: only the cutover was left.
    // (`kubectl pms rebuild` sets a new trigger, as a user would.)
    // Without a terminal it asks for --yes and changes nothing.
    let (ok, said) = kubectl_pms(&["rebuild", SYNC, "-n", NS]);
    assert!(!ok && said.contains("pass --yes"), "{said}");
    let (ok, said) = kubectl_pms(&["rebuild", SYNC, "-n", NS, "--yes"]);
    assert!(ok && said.contains("spec.rebuild.trigger"), "{said}");
    let again = get("pms", SYNC, NS).unwrap()["spec"]["rebuild"]["trigger"].clone();
    assert!(
        again
            .as_str()
            .is_some_and(|t| t.starts_with("kubectl-pms-")),
        "{again}"
    );
    let s = wait_status("the resumed rebuild stopping the workers", |s| {
        s["rebuild"]["trigger"] == again && s["rebuild"]["phase"] == "Stopping"
    })
    .await;
    mark_ready(3, false);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let id = s["rebuild"]["id"].as_str().unwrap();
    assert!(
        get("job", &format!("{SYNC}-rebuild"), NS)
            .is_none_or(|j| j["metadata"]["annotations"]["paimonsync.io/job-id"] != id),
        "no rebuild Job while a worker pod terminates"
    );
    end_grace_period(&terminating);
    let (job, _) = rebuild_job_after_the_workers_stopped(3).await;
    let s = rebuild_job_runs_to_done(&job, &["CuttingOver", "Done"]).await;
    assert_eq!(s["rebuild"]["trigger"], again);
    assert_eq!(s["rebuild"]["snapshotId"], table.latest());
    let printed = kubectl(&["get", "pms", "-n", NS]);
    assert!(printed.contains("Done"), "the Rebuild column:\n{printed}");
    let reasons = event_reasons();
    assert!(
        reasons.contains("RebuildStarted") && reasons.contains("RebuildDone"),
        "{reasons}"
    );
    assert_eq!(
        db.count("orders__pms_old").await,
        400 - 40 - 1,
        "the replaced table is kept"
    );
    assert_synced(table, db, "orders", None).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    run_workers_once(3);
    mark_ready(3, true);
    let old = db
        .query_strings("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'orders__pms_old'")
        .await;
    assert_eq!(
        old[0][0].as_deref(),
        Some("0"),
        "dropped once retainOld passed"
    );

    // policy: auto, and a gap: rows deleted while the sync was away, their snapshots expired.
    merge_patch(json!({"spec": {"rebuild": {"policy": "auto"}}}));
    table.commits(vec![
        generate(201, 50, "-D", 0),
        generate(5001, 10, "+I", 0),
    ]);
    for consumer in std::fs::read_dir(table.table_dir().join("consumer")).unwrap() {
        std::fs::remove_file(consumer.unwrap().path()).unwrap();
    }
    table.expire(1);
    let outs = run_workers(3);
    assert!(
        outs.iter()
            .any(|o| !o.status.success() && stderr(o).contains("has expired")),
        "the workers stop on the expired snapshot"
    );
    let checkpoint = get("configmap", &format!("{SYNC}-checkpoint-0"), NS).unwrap();
    assert!(
        checkpoint["data"]["rebuild-required.json"]
            .as_str()
            .is_some_and(|n| n.contains("snapshot-expired")),
        "the worker notes why: {checkpoint}"
    );
    let (job, _) = rebuild_job_after_the_workers_stopped(3).await;
    let s = rebuild_job_runs_to_done(&job, &ALL_PHASES).await;
    assert!(
        s["rebuild"]["reason"]
            .as_str()
            .unwrap()
            .contains("policy is auto"),
        "{s}"
    );
    run_workers_once(3);
    mark_ready(3, true);
    assert_synced(table, db, "orders", None).await;
    let s = wait_status("Running after the rebuilds", |s| s["phase"] == "Running").await;
    assert!(
        !s["conditions"].to_string().contains("RebuildRequired"),
        "{s}"
    );
}

fn savepoint(name: &str) -> Option<Json> {
    get("pmssp", name, NS)
}

async fn wait_savepoint_completed(name: &str) -> Json {
    wait_for(&format!("savepoint {name} Completed"), LONG, || {
        savepoint(name).filter(|s| {
            assert_ne!(s["status"]["state"], "Failed", "{s}");
            s["status"]["state"] == "Completed"
        })
    })
    .await
}

/// Savepoints of a running sync while Paimon keeps committing: one made by hand, one by
/// `spec.savepoint.trigger`; every slot stops at the end of one snapshot, the cut is kept in
/// `<savepoint>-data`, the slots go on, and the history keeps only `maxCount` of those the
/// operator made (the one made by hand stays).
async fn savepoints_while_paimon_commits(table: &Table, db: &TestDb) {
    let (mut workers, logs) = spawn_workers(3);
    mark_ready(3, true);
    let created_at = table.latest();
    let (ok, said) = kubectl_pms(&["savepoint", SYNC, "--name", "by-hand", "-n", NS]);
    assert!(ok && said.contains("PaimonMysqlSyncSavepoint"), "{said}");
    table.commits(vec![generate_step(3, 60, 5, "+U", 11)]);
    table.commits(vec![generate(7001, 20, "+I", 0)]);
    let sp = wait_savepoint_completed("by-hand").await;
    let cut = sp["status"]["snapshotId"].as_i64().unwrap();
    assert!(cut >= created_at, "{sp}");
    assert_eq!(sp["status"]["slots"], 3);
    assert!(sp["status"]["location"]
        .as_str()
        .unwrap()
        .ends_with("/by-hand-data"));
    let data = get("configmap", "by-hand-data", NS).expect("the savepoint's data");
    let data: Json =
        serde_json::from_str(data["data"]["savepoint.json"].as_str().unwrap()).unwrap();
    let checkpoints = data["checkpoints"].as_array().unwrap();
    assert_eq!(checkpoints.len(), 3);
    for cp in checkpoints {
        assert_eq!(
            (
                cp["snapshotId"].as_i64(),
                cp["phase"].as_str(),
                cp["pausedFor"].as_str()
            ),
            (Some(cut), Some("incremental"), Some("by-hand")),
            "every slot at the end of snapshot {cut}: {cp}"
        );
        assert!(
            cp.get("position").is_none(),
            "never inside a snapshot: {cp}"
        );
    }
    assert!(event_reasons().contains("SavepointCompleted"));
    assert!(kubectl(&["get", "pmssp", "-n", NS]).contains("Completed"));

    // The slots go on after the cut.
    table.commits(vec![generate(7101, 10, "+I", 0)]);
    let latest = table.latest();
    wait_status("the slots past the cut", |s| s["snapshotId"] == latest).await;

    // spec.savepoint.trigger takes one; history keeps the newest of those the operator made,
    // and never one made by hand.
    let mut made = Vec::new();
    for trigger in ["t1", "t2"] {
        merge_patch(
            json!({"spec": {"savepoint": {"trigger": trigger, "history": {"maxCount": 1}}}}),
        );
        let name = wait_for("a savepoint for the trigger", LONG, || {
            list("pmssp", NS, SELECTOR)
                .into_iter()
                .map(|s| s["metadata"]["name"].as_str().unwrap().to_string())
                .find(|n| n != "by-hand" && !made.contains(n))
        })
        .await;
        wait_savepoint_completed(&name).await;
        made.push(name);
    }
    wait_for("history trimmed to 1", LONG, || {
        (savepoint(&made[0]).is_none()
            && get("configmap", &format!("{}-data", made[0]), NS).is_none())
        .then_some(())
    })
    .await;
    assert!(savepoint(&made[1]).is_some(), "the newest stays");
    assert!(
        savepoint("by-hand").is_some() && get("configmap", "by-hand-data", NS).is_some(),
        "a savepoint made by hand is the user's to delete"
    );
    let taken = savepoint(&made[1]).unwrap();
    assert_eq!(
        taken["status"]["syncUid"],
        get("pms", SYNC, NS).unwrap()["metadata"]["uid"]
    );
    assert!(
        taken["status"]["tables"]
            .as_str()
            .unwrap()
            .starts_with("paimon "),
        "{taken}"
    );
    assert_eq!(status()["savepoints"]["lastTrigger"], "t2");
    let name = made[1].clone();
    merge_patch(json!({"spec": {"savepoint": null}}));
    let log = std::fs::read_to_string(logs.path().join("slot-0.log")).unwrap();
    assert!(
        log.contains("paused at the end of a snapshot") && log.contains("pause lifted"),
        "{log}"
    );

    // upgradeMode: savepoint. Choosing it restarts nothing; a change of what the workers run
    // (maxRows) pauses every slot at one cut before the new workers roll out.
    merge_patch(json!({"spec": {"upgradeMode": "savepoint"}}));
    merge_patch(json!({"spec": {"sink": {"maxRows": 300}}}));
    let s = wait_status("the old workers at the cut", |s| {
        s["rescale"]["reason"] == "upgrade" && s["rescale"]["phase"] == "Starting"
    })
    .await;
    let cut = s["rescale"]["snapshotId"].as_i64().unwrap();
    let config = get("configmap", &format!("{SYNC}-config"), NS).unwrap();
    assert!(
        config["data"]["sync.yaml"]
            .as_str()
            .unwrap()
            .contains("maxRows: 300"),
        "rolled out after the cut"
    );
    for w in &mut workers {
        assert!(stop_with_sigterm(w).await.success());
    }
    table.commits(vec![generate(7201, 10, "+I", 0)]);
    let (mut workers, logs) = spawn_workers(3);
    let s = wait_status("the new workers from the cut", |s| {
        s["rescale"]["phase"] == "Done"
    })
    .await;
    assert_eq!(s["rescale"]["snapshotId"], cut);
    assert!(event_reasons().contains("Upgraded"));
    let latest = table.latest();
    wait_status("the new workers past the cut", |s| {
        s["snapshotId"] == latest
    })
    .await;
    for w in &mut workers {
        assert!(stop_with_sigterm(w).await.success());
    }
    let log = std::fs::read_to_string(logs.path().join("slot-1.log")).unwrap();
    assert!(
        log.contains(&format!("\"snapshot\":{cut}")) && log.contains("pause lifted"),
        "{log}"
    );
    mark_ready(3, false);
    assert_synced(table, db, "orders", None).await;
    // Back to the trigger's savepoint: every slot goes on after its cut, and the replay converges.
    let cut = savepoint(&name).unwrap()["status"]["snapshotId"]
        .as_i64()
        .unwrap();
    let (ok, said) = kubectl_pms(&["restore", SYNC, "--savepoint", "no-such", "-n", NS]);
    assert!(
        !ok && said.contains("no PaimonMysqlSyncSavepoint no-such"),
        "{said}"
    );
    let (ok, said) = kubectl_pms(&["restore", SYNC, "--savepoint", &name, "-n", NS]);
    assert!(!ok && said.contains("pass --yes"), "{said}");
    let (ok, said) = kubectl_pms(&["restore", SYNC, "--savepoint", &name, "-n", NS, "-y"]);
    assert!(ok && said.contains("spec.restoreFrom.savepoint"), "{said}");
    let (job, _) = job_after_the_workers_stopped(3, "restore").await;
    let args = job["spec"]["template"]["spec"]["containers"][0]["args"].to_string();
    assert!(
        args.contains("restore") && args.contains(&cut.to_string()),
        "{args}"
    );
    let out = run_job(&job);
    assert!(out.status.success(), "restore: {}", stderr(&out));
    let s = wait_status("restore Done", |s| s["restore"]["phase"] == "Done").await;
    assert_eq!(s["restore"]["snapshotId"], cut);
    assert!(event_reasons().contains("RestoreDone"));
    for k in 0..3 {
        let cm = get("configmap", &format!("{SYNC}-checkpoint-{k}"), NS).unwrap();
        let cp: Json =
            serde_json::from_str(cm["data"]["checkpoint.json"].as_str().unwrap()).unwrap();
        assert_eq!(
            (cp["snapshotId"].as_i64(), cp["phase"].as_str()),
            (Some(cut), Some("incremental")),
            "{cp}"
        );
    }
    slots_at_replicas(1).await;
    run_workers_once(3);
    assert_synced(table, db, "orders", None).await;
    merge_patch(json!({"spec": {"restoreFrom": null}}));

    // Savepoints (and their data) outlive the sync: deleted by hand.
    for name in [name.as_str(), "by-hand"] {
        kubectl(&["delete", "pmssp", name, "-n", NS]);
        kubectl(&["delete", "configmap", &format!("{name}-data"), "-n", NS]);
    }
}

/// Secrets never reach status, events or the operator's log.
fn no_secret_in_status_events_or_logs() {
    let everything = format!(
        "{}{}{}",
        kubectl(&["get", "pms", SYNC, "-n", NS, "-o", "yaml"]),
        kubectl(&["get", "events", "-n", NS, "-o", "yaml"]),
        std::fs::read_to_string(operator_log()).unwrap_or_default()
    );
    assert!(
        !everything.contains(SECRET_PASSWORD),
        "a secret leaked into status, events or logs"
    );
}

/// A worker pod of the sync that is being deleted and stays (a finalizer holds it), as one in
/// its grace period does.
fn worker_pod_in_its_grace_period(name: &str) {
    apply_ok(&format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: {NS}\n  \
         labels: {{paimonsync.io/sync: {SYNC}, paimonsync.io/component: worker}}\n  \
         finalizers: [paimonsync.io/test-grace-period]\nspec:\n  containers: [{{name: worker, image: pms-worker}}]\n"
    ));
    kubectl(&["delete", "pod", name, "-n", NS, "--wait=false"]);
}

/// ... and goes.
fn end_grace_period(name: &str) {
    kubectl(&[
        "patch",
        "pod",
        name,
        "-n",
        NS,
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
}

/// `kubectl delete` of the sync, waiting for the finalizer.
fn delete_sync() {
    kubectl(&[
        "delete",
        "pms",
        SYNC,
        "-n",
        NS,
        "--wait=true",
        "--timeout=60s",
    ]);
}

/// Delete: the finalizer removes the workers, their config and their checkpoints.
fn delete_cleans_up() {
    // What an interrupted rebuild leaves: its new generation's checkpoint.
    let shadow = format!("{SYNC}-rebuild-checkpoint-0");
    apply_ok(&format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {shadow}\n  namespace: {NS}\n  labels: {{paimonsync.io/sync: {SYNC}-rebuild, paimonsync.io/component: checkpoint}}\ndata: {{checkpoint.json: '{{}}'}}\n"
    ));
    // A worker pod still stopping (a finalizer holds it here): the deletion comes back for it
    // rather than waiting inside a reconcile, and keeps what a stopping worker needs (its
    // config) until it is gone.
    let stopping = format!("{SYNC}-worker-stopping");
    worker_pod_in_its_grace_period(&stopping);
    kubectl(&["delete", "pms", SYNC, "-n", NS, "--wait=false"]);
    std::thread::sleep(Duration::from_secs(6));
    let held = get("pms", SYNC, NS).expect("the sync waits for its worker pod");
    assert!(held["metadata"]["deletionTimestamp"].is_string());
    assert!(
        get("configmap", &format!("{SYNC}-config"), NS).is_some(),
        "a stopping worker keeps its config"
    );
    assert!(
        list("deployment", NS, SELECTOR).is_empty(),
        "the workers were asked to stop first"
    );
    // Deleted with its checkpoints: the stopping workers are asked to release the sync's
    // Paimon consumer and claim of its MySQL table.
    let control = get("configmap", &format!("{SYNC}-control"), NS).expect("the control ConfigMap");
    assert!(
        control["data"]["control.json"]
            .as_str()
            .unwrap_or_default()
            .contains(r#""releaseOnStop":true"#),
        "{control}"
    );
    end_grace_period(&stopping);
    delete_sync();
    let deleted = pms_tests::kube::events(NS, &format!("involvedObject.name={SYNC}"), "message");
    assert!(
        deleted.contains("the workers were asked to remove"),
        "{deleted}"
    );
    assert!(
        get("configmap", &shadow, NS).is_none(),
        "a rebuild's checkpoints go with the sync"
    );
    assert!(get("pms", SYNC, NS).is_none());
    for kind in [
        "deployment",
        "job",
        "configmap",
        "service",
        "role",
        "rolebinding",
        "serviceaccount",
    ] {
        let left = list(kind, NS, SELECTOR);
        assert!(left.is_empty(), "{kind} left behind after delete: {left:?}");
    }
    let out = kubectl_output(
        &[
            "get",
            "configmap",
            &format!("{SYNC}-checkpoint-0"),
            "-n",
            NS,
        ],
        None,
    );
    assert!(
        !out.status.success(),
        "checkpoint ConfigMaps are removed unless retainOnDelete"
    );
}

/// The sync again, exactly-once, with `checkpoint.storage: s3` (credentials from a Secret):
/// the operator reads the slots' checkpoints from S3 for the status, rescales 2 → 3 → 1 at cuts
/// while Paimon commits (an audit trigger shows nothing applied twice), keeps a savepoint's data
/// beside the checkpoints and deletes it with the savepoint, restores from it, and deletes the
/// checkpoints with the sync.
async fn with_checkpoints_on_s3(table: &Table, db: &TestDb) {
    let store = s3::Server::shared();
    let prefix = format!("e2e-{}", std::process::id());
    s3_credentials_secret("s3-state");
    db.exec(&ORDERS_DDL.replace("TABLE orders", "TABLE orders_s3"))
        .await;
    db.exec("CREATE TABLE audit (n BIGINT AUTO_INCREMENT PRIMARY KEY, op CHAR(1), id BIGINT)")
        .await;
    for (name, when, op, row) in [
        ("audit_i", "INSERT", "I", "NEW"),
        ("audit_u", "UPDATE", "U", "NEW"),
    ] {
        db.exec(&format!(
            "CREATE TRIGGER {name} AFTER {when} ON orders_s3 FOR EACH ROW INSERT INTO audit (op, id) VALUES ('{op}', {row}.id)"
        ))
        .await;
    }
    let mut settings = store.settings();
    settings["bucket"] = json!(s3::BUCKET);
    settings["prefix"] = json!(prefix);
    settings["credentialsSecretRef"] = json!({"name": "s3-state"});
    let spec = sync_spec(table, db)
        .target_table("orders_s3")
        .delivery(Delivery::ExactlyOnce)
        .checkpoint_s3(settings)
        .parallelism(2)
        .state(SyncState::Running);
    apply_ok(&sync_resource(&spec));
    let slot0 = wait_for("2 slot deployments", LONG, || {
        let d = list("deployment", NS, SELECTOR);
        (d.len() == 2).then(|| d[0].clone())
    })
    .await;
    assert_eq!(
        pod_env(&slot0)["PMS_CHECKPOINT_S3_ACCESS_KEY_ID"],
        s3::ACCESS_KEY
    );
    run_workers_once(2);
    mark_ready(2, true);
    assert_synced(table, db, "orders_s3", None).await;
    // Named by the sync's external name, `<namespace>_<name>` (two namespaces may share a bucket).
    let object = |name: &str| store.get(&format!("{prefix}/{name}"));
    let checkpoint =
        object(&format!("{NS}_{SYNC}-checkpoint-1.json")).expect("slot 1's checkpoint on S3");
    assert!(checkpoint.contains("\"epoch\""), "{checkpoint}");
    let latest = table.latest();
    wait_status("the status from the checkpoints on S3", |s| {
        s["phase"] == "Running" && s["snapshotId"] == latest && s["slotsReady"] == "2/2"
    })
    .await;
    // The slots' ConfigMaps, made by the operator for the workers' notes, hold no checkpoint.
    let slot_config_maps = list("configmap", NS, "paimonsync.io/component=checkpoint");
    assert_eq!(slot_config_maps.len(), 2, "{slot_config_maps:?}");
    assert!(
        slot_config_maps
            .iter()
            .all(|cm| cm["data"]["checkpoint.json"].is_null()),
        "no checkpoint in a ConfigMap with s3 storage: {slot_config_maps:?}"
    );
    // One deleted is seen at once (not at the minute's resync) and made again.
    let slot_1 = format!("{SYNC}-checkpoint-1");
    kubectl(&["delete", "configmap", &slot_1, "-n", NS]);
    wait_for(
        "the slot's ConfigMap made again",
        Duration::from_secs(20),
        || get("configmap", &slot_1, NS),
    )
    .await;

    // Exactly-once rescales at cuts, new ids only: each lands once (one audit row, never a U).
    rescale_at_a_cut(table, 2, 3, vec![generate(8001, 30, "+I", 0)]).await;
    rescale_at_a_cut(table, 3, 1, vec![generate(8101, 30, "+I", 0)]).await;
    assert_synced(table, db, "orders_s3", None).await;
    let rows = db.count("orders_s3").await;
    let updates = db
        .query_strings("SELECT COUNT(*) FROM audit WHERE op = 'U'")
        .await;
    assert_eq!(
        (db.count("audit").await, updates[0][0].as_deref()),
        (rows, Some("0")),
        "every change applied exactly once"
    );
    assert!(
        object(&format!("{NS}_{SYNC}-checkpoint-2.json")).is_some(),
        "old slots' objects stay"
    );

    // A savepoint's data beside the checkpoints.
    let (mut workers, _logs) = spawn_workers(1);
    let manifest = format!(
        "apiVersion: paimonsync.io/v1alpha1\nkind: PaimonMysqlSyncSavepoint\nmetadata: {{name: on-s3, namespace: {NS}}}\nspec: {{syncName: {SYNC}}}\n"
    );
    apply_ok(&manifest);
    let sp = wait_savepoint_completed("on-s3").await;
    let cut = sp["status"]["snapshotId"].as_i64().unwrap();
    let data_object = format!("savepoints/{NS}_{SYNC}/on-s3.json");
    assert_eq!(
        sp["status"]["location"],
        format!("s3://{}/{prefix}/{data_object}", s3::BUCKET)
    );
    let data = object(&data_object).expect("the savepoint's data on S3");
    assert!(data.contains("\"pausedFor\": \"on-s3\""), "{data}");
    table.commits(vec![generate(8201, 20, "+I", 0)]);
    let latest = table.latest();
    wait_status("the slot past the cut", |s| s["snapshotId"] == latest).await;
    for w in &mut workers {
        assert!(stop_with_sigterm(w).await.success());
    }

    // Restore: the checkpoint on S3 goes back to the cut; the replay converges.
    merge_patch(json!({"spec": {"restoreFrom": {"savepoint": "on-s3"}}}));
    let (job, _) = job_after_the_workers_stopped(1, "restore").await;
    let out = run_job(&job);
    assert!(out.status.success(), "restore: {}", stderr(&out));
    wait_status("restore Done", |s| s["restore"]["phase"] == "Done").await;
    let restored: Json =
        serde_json::from_str(&object(&format!("{NS}_{SYNC}-checkpoint-0.json")).unwrap()).unwrap();
    assert_eq!(restored["snapshotId"].as_i64(), Some(cut), "{restored}");
    slots_at_replicas(1).await;
    run_workers_once(1);
    assert_synced(table, db, "orders_s3", None).await;
    merge_patch(json!({"spec": {"restoreFrom": null}}));

    // A deleted savepoint's data goes with the next reconcile; the checkpoints with the sync.
    kubectl(&["delete", "pmssp", "on-s3", "-n", NS]);
    wait_for("the savepoint's data deleted", LONG, || {
        object(&data_object).is_none().then_some(())
    })
    .await;
    // Deleted suspended: no worker runs to release what the sync holds outside the cluster,
    // and the operator says what is left and how to remove it.
    set_state(SyncState::Suspended, 0).await;
    delete_sync();
    let warned = pms_tests::kube::events(NS, "reason=ReleaseSkipped", "message");
    assert!(
        warned.contains("_paimon_sync_targets") && warned.contains("pms-worker reset"),
        "{warned}"
    );
    for k in 0..3 {
        assert!(
            object(&format!("{NS}_{SYNC}-checkpoint-{k}.json")).is_none(),
            "slot {k}'s checkpoint on S3 deleted with the sync"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_end_to_end() {
    let t0 = std::time::Instant::now();
    // Each step's time, printed (seen with --nocapture or when the test fails): where the
    // e2e's minutes go.
    macro_rules! step {
        ($e:expr) => {{
            let t = std::time::Instant::now();
            let r = $e;
            eprintln!(
                "e2e step at {:>4}s took {:>4}s: {}",
                t0.elapsed().as_secs(),
                t.elapsed().as_secs(),
                stringify!($e)
            );
            r
        }};
    }
    step!(install_chart());
    let db = step!(TestDb::new("e2e").await);
    step!(invalid_resources_are_rejected(&db));
    step!(the_admission_policy_narrows_worker_pods());
    let table = step!(source_target_and_secret(&db).await);
    step!(an_older_crd_with_a_sync());
    let _operator = step!(start_operator(&operator_log()));
    step!(the_operator_brings_its_crds_up_to_date().await);
    step!(an_undecodable_sync_stops_nothing_else().await);
    step!(create_sync(&table, &db));
    step!(a_savepoint_of_a_missing_sync_is_taken());
    step!(a_sync_cannot_be_moved_to_another_table(&table, &db));
    step!(operator_builds_the_objects().await);
    step!(a_secret_created_late_reconciles_its_sync(&table, &db).await);
    step!(only_the_leader_reconciles().await);
    step!(workers_sync_the_table(&table, &db).await);
    step!(a_failing_worker_says_why().await);
    step!(a_spec_that_does_not_run_ready_is_rolled_back(&table).await);
    step!(scale_2_to_3_at_a_cut(&table, &db).await);
    step!(suspend_and_resume().await);
    step!(a_refused_restore_stops_nothing().await);
    step!(periodic_verify_finds_a_deleted_row(&db).await);
    step!(operator_driven_rebuilds(&table, &db).await);
    step!(savepoints_while_paimon_commits(&table, &db).await);
    step!(no_secret_in_status_events_or_logs());
    step!(delete_cleans_up());
    step!(a_savepoint_of_a_missing_sync_fails().await);
    step!(with_checkpoints_on_s3(&table, &db).await);
    step!(database_sync_makes_a_sync_per_table(&db).await);
    step!(a_warehouse_on_hdfs(&db).await);
    step!(an_operator_upgrade_restarts_syncs_in_turn().await);
    step!(the_plugin_lists_watches_and_restarts().await);
}

const ORPHAN_SAVEPOINT: &str = "of-no-sync";

/// A savepoint naming a sync that does not exist (a typo, or one deleted meanwhile).
fn a_savepoint_of_a_missing_sync_is_taken() {
    apply_ok(&format!(
        "apiVersion: paimonsync.io/v1alpha1\nkind: PaimonMysqlSyncSavepoint\nmetadata: {{name: {ORPHAN_SAVEPOINT}, namespace: {NS}}}\nspec: {{syncName: no-such-sync}}\n"
    ));
}

/// ... fails after the grace period (30 s; taken at the start of the run), naming the sync,
/// rather than staying Pending forever.
async fn a_savepoint_of_a_missing_sync_fails() {
    let deadline = std::time::Instant::now() + LONG;
    loop {
        let sp = get("pmssp", ORPHAN_SAVEPOINT, NS).expect("the savepoint");
        if sp["status"]["state"] == "Failed" {
            let error = sp["status"]["error"].as_str().unwrap_or_default();
            assert!(
                error.contains("no PaimonMysqlSync \"no-such-sync\""),
                "{sp}"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still not failed: {sp}"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    kubectl(&["delete", "pmssp", ORPHAN_SAVEPOINT, "-n", NS]);
}

/// An operator upgrade (another worker image) restarts syncs in turn: with
/// `--max-concurrent-restarts 1` one sync gets the new image while the other keeps the old one
/// and says why (Event `RestartQueued`), until the first runs its new template, ready. An
/// operator of its own, in a namespace of its own.
async fn an_operator_upgrade_restarts_syncs_in_turn() {
    const STAGGER_NS: &str = "e2e-stagger";
    kubectl(&["create", "namespace", STAGGER_NS]);
    pms_tests::kube::writer_secret(STAGGER_NS, "u", "p");
    let operator = |image: &str| {
        let log = std::env::temp_dir().join(format!("pms-e2e-stagger-{image}.log"));
        let image = format!("pms-worker:{image}");
        let args = [
            "--namespace",
            STAGGER_NS,
            "--lease-name",
            "stagger",
            "--lease-namespace",
            STAGGER_NS,
            "--admin-addr",
            "127.0.0.1:0",
            "--worker-image",
            &image,
            "--max-concurrent-restarts",
            "1",
        ];
        spawn_operator(&args, &log, "info")
    };
    let syncs = ["stagger-a", "stagger-b"];
    let mut manifests: Vec<String> = syncs
        .iter()
        .map(|name| idle_sync(STAGGER_NS, name, &name.replace('-', "_")))
        .collect();
    // A pooled database sync's worker goes through the same gate.
    manifests.push(format!(
        "apiVersion: paimonsync.io/v1alpha1\nkind: PaimonMysqlDatabaseSync\nmetadata: {{name: stagger-pool, namespace: {STAGGER_NS}}}\n\
         spec:\n  tables: {{pattern: '.*'}}\n  placement: {{mode: pooled, workers: 1}}\n  template:\n    \
         source: {{warehouse: /nowhere, database: db, table: '{{table}}'}}\n    \
         sink: {{url: 'mysql://127.0.0.1:1/db', credentialsSecretRef: {{name: mysql-writer}}, table: '{{table}}', delivery: exactly-once}}\n"
    ));
    const POOL_WORKER: &str = "stagger-pool--pool-0";
    let workers = [syncs[0], syncs[1], POOL_WORKER];
    let image = |worker: &str| {
        get("deployment", &format!("{worker}-slot-0"), STAGGER_NS).map(|d| {
            d["spec"]["template"]["spec"]["containers"][0]["image"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
    };
    // Its new pod runs (and, a pooled worker, reports).
    let ready = |worker: &str| {
        if worker == POOL_WORKER {
            let report = json!({"worker": 0, "at": pms_tests::kube::utc_now(), "tables": []});
            let patch = json!({"data": {"report.json": report.to_string()}}).to_string();
            kubectl(&[
                "patch",
                "configmap",
                POOL_WORKER,
                "-n",
                STAGGER_NS,
                "--type=merge",
                "-p",
                &patch,
            ]);
        }
        mark_rolled_out(STAGGER_NS, &format!("{worker}-slot-0"))
    };
    let on_new = || {
        workers
            .into_iter()
            .filter(|w| image(w).as_deref() == Some("pms-worker:new"))
            .collect::<Vec<_>>()
    };
    let old = operator("old");
    apply_ok(&manifests.join("---\n"));
    for worker in workers {
        wait_for(&format!("{worker}'s Deployment"), LONG, || {
            image(worker).filter(|i| i == "pms-worker:old")
        })
        .await;
        ready(worker);
    }
    for sync in syncs {
        wait_for(&format!("{sync} Running"), LONG, || {
            (sync_status(STAGGER_NS, sync)["phase"] == "Running").then_some(())
        })
        .await;
    }
    drop(old);
    let _new = operator("new");
    // One place: the syncs and the pooled worker restart one after the other, each once the
    // one before runs on the new image.
    let mut restarted: Vec<&str> = Vec::new();
    while restarted.len() < workers.len() {
        let next = wait_for("the next one restarted on the new image", LONG, || {
            on_new().into_iter().find(|w| !restarted.contains(w))
        })
        .await;
        restarted.push(next);
        if restarted.len() == 1 {
            wait_for("the others told they wait", LONG, || {
                let told = workers.iter().filter(|w| !restarted.contains(w)).all(|w| {
                    // A pooled worker's events are its database sync's.
                    let object = if *w == POOL_WORKER { "stagger-pool" } else { w };
                    event_reasons_of_ns(STAGGER_NS, object).contains("RestartQueued")
                });
                told.then_some(())
            })
            .await;
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
        let mut now_new = on_new();
        now_new.sort();
        let mut expected = restarted.clone();
        expected.sort();
        assert_eq!(now_new, expected, "the others wait while {next} restarts");
        ready(next);
    }
    for sync in syncs {
        kubectl(&[
            "delete",
            "pms",
            sync,
            "-n",
            STAGGER_NS,
            "--wait=true",
            "--timeout=60s",
        ]);
    }
    kubectl(&[
        "delete",
        "pmds",
        "stagger-pool",
        "-n",
        STAGGER_NS,
        "--wait=true",
        "--timeout=60s",
    ]);
}

/// A sync of a table on HDFS (`hdfs://namenode:port/…`, `scripts/with-hdfs.sh`), written by
/// Paimon Java: the operator's slot Deployment, run as its pod would, reads it in full, then
/// its next snapshot; `verify` as the pod finds MySQL equal.
async fn a_warehouse_on_hdfs(db: &TestDb) {
    let hdfs = std::env::var("PMS_TEST_HDFS").expect(
        "PMS_TEST_HDFS is not set: run the tests under scripts/with-hdfs.sh (make test does), which starts an HDFS",
    );
    let table = Table::create_in(
        &format!("{hdfs}/e2e-{}", std::process::id()),
        orders_create(json!({"bucket": "2", "changelog-producer": "input"}), false),
    );
    table.commits(vec![generate(1, 200, "+I", 0)]);
    db.exec(&ORDERS_DDL.replace("TABLE orders", "TABLE orders_hdfs"))
        .await;
    apply_ok(&format!(
        "apiVersion: paimonsync.io/v1alpha1
kind: PaimonMysqlSync
metadata: {{name: orders-hdfs, namespace: {NS}}}
spec:
  source: {{warehouse: '{}', database: {}, table: {}}}
  sink: {{url: 'mysql://127.0.0.1:{}/{}', credentialsSecretRef: {{name: mysql-writer}}, table: orders_hdfs}}
",
        table.warehouse_location(),
        table.database,
        table.name,
        pms_tests::mysql::server_port(),
        db.name
    ));
    wait_for("the HDFS sync's Deployment", LONG, || {
        get("deployment", "orders-hdfs-slot-0", NS)
    })
    .await;
    let run = || {
        let out = run_as_pod_of("orders-hdfs", &["run", "--once"]);
        assert!(out.status.success(), "{}", stderr(&out));
    };
    run();
    assert_synced(&table, db, "orders_hdfs", None).await;
    table.commits(vec![generate(1, 50, "+U", 7), generate(151, 50, "-D", 0)]);
    run();
    assert_synced(&table, db, "orders_hdfs", None).await;
    let out = run_as_pod_of("orders-hdfs", &["verify"]);
    assert!(out.status.success(), "verify: {}", stderr(&out));
    kubectl(&[
        "delete",
        "pms",
        "orders-hdfs",
        "-n",
        NS,
        "--wait=true",
        "--timeout=60s",
    ]);
}

/// Runs `pms-worker ARGS` as the pod of `sync`'s slot-0 Deployment would, to the end.
fn run_as_pod_of(sync: &str, args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let config = mounted_config_of(sync, dir.path());
    let d = get("deployment", &format!("{sync}-slot-0"), NS).expect("slot deployment");
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    pod_process(&d, &config, &args, &BTreeMap::new())
        .wait_with_output()
        .unwrap()
}

fn database_status() -> Json {
    get("pmds", "shop", NS)
        .map(|p| p["status"].clone())
        .unwrap_or(Json::Null)
}

/// A `PaimonMysqlDatabaseSync` over a Paimon database of four tables: the discovery worker
/// lists it (its Deployment run as its pod would), the operator makes one `PaimonMysqlSync` per
/// matching table, their workers fill MySQL (targets created by `sink.createTable`), the broken
/// one fails alone and is named in the status; a table added and one dropped in Paimon are
/// picked up at the next listing (the dropped one's MySQL table stays); deleting the resource
/// deletes its syncs and leaves every MySQL table.
async fn database_sync_makes_a_sync_per_table(db: &TestDb) {
    use pms_tests::paimon::Database;
    let wh = Database::new("shop");
    let commits = |from: i64| {
        vec![
            json!({"rows": (from..from + 20).map(|id| json!({"kind": "+I", "values": order(id, "1.50", "NEW")})).collect::<Vec<_>>()}),
        ]
    };
    let orders = |buckets: &str| {
        orders_create(
            json!({"bucket": buckets, "changelog-producer": "input"}),
            false,
        )
    };
    let tables = wh.create_tables(vec![
        ("orders_a", orders("2"), commits(1)),
        ("orders_b", orders("1"), commits(100)),
        ("broken", orders("1"), commits(1)),
        ("scratch_tmp", orders("1"), commits(1)),
        ("taken", orders("1"), commits(1)),
        ("zero_slots", orders("1"), commits(1)),
    ]);
    // A sync named as the table `taken`'s would be, made by hand: never taken over.
    apply_ok(&format!(
        "apiVersion: paimonsync.io/v1alpha1
kind: PaimonMysqlSync
metadata: {{name: shop-taken, namespace: {NS}}}
spec:
  source: {{warehouse: /elsewhere, database: other, table: taken}}
  sink: {{url: 'mysql://127.0.0.1:1/other', credentialsSecretRef: {{name: mysql-writer}}, table: mine}}
  state: suspended
"
    ));
    db.exec("CREATE TABLE broken_rt (id BIGINT NOT NULL, status VARCHAR(64) NOT NULL, PRIMARY KEY (id, status))").await;
    let manifest = format!(
        "apiVersion: paimonsync.io/v1alpha1
kind: PaimonMysqlDatabaseSync
metadata: {{name: shop, namespace: {NS}}}
spec:
  tables: {{pattern: '.*', exclude: ['.*_tmp']}}
  discoveryInterval: 2s
  template:
    source: {{warehouse: '{}', database: shop, table: '{{table}}'}}
    sink: {{url: 'mysql://127.0.0.1:{}/{}', credentialsSecretRef: {{name: mysql-writer}}, table: '{{table}}_rt', createTable: true}}
  overrides:
    orders_a: {{parallelism: 2}}
    orders_b: {{checkpoint: {{retainOnDelete: true}}}}
    zero_slots: {{parallelism: 0}}
",
        wh.warehouse().display(),
        pms_tests::mysql::server_port(),
        db.name
    );
    apply_ok(&manifest);
    let listed = |tables: &[&str]| {
        let out = run_as_pod_of("shop--tables", &["discover", "--once"]);
        assert!(
            out.status.success(),
            "discover: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let cm = get("configmap", "shop--tables", NS).expect("the listing");
        let listing: Json =
            serde_json::from_str(cm["data"]["report.json"].as_str().unwrap()).unwrap();
        assert_eq!(listing["tables"], json!(tables), "{listing}");
    };
    wait_for("the discovery Deployment", LONG, || {
        get("deployment", "shop--tables-slot-0", NS)
    })
    .await;
    let all = [
        "broken",
        "orders_a",
        "orders_b",
        "scratch_tmp",
        "taken",
        "zero_slots",
    ];
    listed(&all);
    let syncs = ["shop-broken", "shop-orders-a", "shop-orders-b"];
    for sync in syncs {
        wait_for(&format!("PaimonMysqlSync {sync}"), LONG, || {
            get("deployment", &format!("{sync}-slot-0"), NS)
        })
        .await;
    }
    assert!(
        get("pms", "shop-scratch-tmp", NS).is_none(),
        "an excluded table gets no sync"
    );
    let a = get("pms", "shop-orders-a", NS).unwrap();
    assert_eq!(a["spec"]["parallelism"], 2, "the override holds");
    assert_eq!(a["spec"]["sink"]["table"], "orders_a_rt");
    assert_eq!(
        a["metadata"]["ownerReferences"][0]["kind"],
        "PaimonMysqlDatabaseSync"
    );
    // Their workers, as their pods would run them.
    for (sync, slots) in [("shop-orders-a", 2), ("shop-orders-b", 1)] {
        for k in 0..slots {
            let dir = tempfile::tempdir().unwrap();
            let config = mounted_config_of(sync, dir.path());
            let d = get("deployment", &format!("{sync}-slot-{k}"), NS).unwrap();
            let out = pod_process(
                &d,
                &config,
                &["run".into(), "--once".into()],
                &BTreeMap::new(),
            )
            .wait_with_output()
            .unwrap();
            assert!(
                out.status.success(),
                "{sync} slot {k}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        mark_ready_of(sync, slots, true);
    }
    let out = run_as_pod_of("shop-broken", &["run", "--once"]);
    assert!(!out.status.success(), "the broken target is refused");
    for t in tables.iter().filter(|t| t.name.starts_with("orders_")) {
        assert_synced(t, db, &format!("{}_rt", t.name), None).await;
    }
    let s = wait_for("the database status", LONG, || {
        let s = database_status();
        (s["tablesReady"] == "2/5").then_some(s)
    })
    .await;
    let ready = condition(&s, "Ready");
    assert_eq!(ready["status"], "False");
    let message = ready["message"].as_str().unwrap();
    for needle in [
        "broken:",
        "a PaimonMysqlSync shop-taken exists that this database sync did not make",
        "table zero_slots: the API server refused its PaimonMysqlSync",
    ] {
        assert!(message.contains(needle), "{needle}: {s}");
    }
    let taken = get("pms", "shop-taken", NS).unwrap();
    assert_eq!(
        taken["spec"]["sink"]["table"], "mine",
        "left alone: {taken}"
    );
    assert!(
        taken["metadata"]["labels"]
            .get("paimonsync.io/database-sync")
            .is_none(),
        "not adopted: {taken}"
    );
    assert!(get("pms", "shop-zero-slots", NS).is_none());
    assert!(
        event_reasons_of("shop").contains("TableRefused"),
        "the refused table is told as an event"
    );
    // The database sync's own conditions, and the same Argo CD health check as a sync's.
    wait_for(
        "the database sync Degraded, naming its failing tables",
        LONG,
        || {
            let d = condition(&database_status(), "Degraded");
            (d["status"] == "True"
                && d["message"].as_str().is_some_and(|m| {
                    ["broken", "taken", "zero_slots"]
                        .iter()
                        .all(|t| m.contains(t))
                }))
            .then_some(())
        },
    )
    .await;
    let (health, message) = argocd_health_of("pmds", "shop");
    assert_eq!(health, "Degraded", "{message}");
    assert!(message.contains("broken"), "{message}");
    let a = s["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["table"] == "orders_a")
        .unwrap();
    assert_eq!(
        (a["phase"].as_str(), a["target"].as_str()),
        (Some("Running"), Some("orders_a_rt")),
        "{s}"
    );
    // Its progress is in its own sync's status, not copied into the database sync's.
    assert!(a["snapshotId"].is_null(), "{s}");
    let own = pms_tests::kube::sync_status(NS, "shop-orders-a");
    assert!(own["snapshotId"].as_i64().is_some(), "{own}");
    // The created target, told once as an Event of the table's sync.
    wait_for("the TableCreated event", LONG, || {
        event_reasons_of("shop-orders-b")
            .contains("TableCreated")
            .then_some(())
    })
    .await;
    let preflight = get("configmap", "shop-orders-b-preflight", NS).unwrap();
    assert!(
        !preflight["data"]["report.json"]
            .as_str()
            .unwrap()
            .contains("createdTable"),
        "told once: {preflight}"
    );
    let printed = kubectl(&["get", "pmds", "shop", "-n", NS]);
    assert!(
        printed.contains("2/5"),
        "kubectl get shows tables ready/total: {printed}"
    );

    // A table left out of spec.tables and brought back: with checkpoint.retainOnDelete (its
    // override) its sync goes and its checkpoint stays; the sync made again resumes there (the
    // slot's epoch goes on from the kept one's), MySQL still equal.
    let checkpoint_of_b = || {
        let cm = get("configmap", "shop-orders-b-checkpoint-0", NS)?;
        serde_json::from_str::<Json>(cm["data"]["checkpoint.json"].as_str()?).ok()
    };
    let kept = checkpoint_of_b().expect("orders_b's checkpoint");
    let patch_pmds = |patch: Json| {
        kubectl(&[
            "patch",
            "pmds",
            "shop",
            "-n",
            NS,
            "--type=merge",
            "-p",
            &patch.to_string(),
        ]);
    };
    // Each listing is of the spec it was made for: listed again until one of the new spec.
    // Its override goes with it (one for a table spec.tables doesn't select is refused).
    patch_pmds(json!({"spec": {
        "tables": {"exclude": [".*_tmp", "orders_b"]},
        "overrides": {"orders_b": null},
    }}));
    wait_for("the left-out table's sync deleted", LONG, || {
        listed(&all);
        get("pms", "shop-orders-b", NS).is_none().then_some(())
    })
    .await;
    assert_eq!(
        checkpoint_of_b(),
        Some(kept.clone()),
        "the checkpoint is kept"
    );
    patch_pmds(json!({"spec": {"tables": {"exclude": [".*_tmp"]}}}));
    wait_for("the table's sync made again", LONG, || {
        listed(&all);
        get("deployment", "shop-orders-b-slot-0", NS)
    })
    .await;
    let out = run_as_pod_of("shop-orders-b", &["run", "--once"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let resumed = checkpoint_of_b().expect("orders_b's checkpoint");
    assert_eq!(
        resumed["epoch"].as_u64(),
        kept["epoch"].as_u64().map(|e| e + 1),
        "resumed from the kept checkpoint: {kept} then {resumed}"
    );
    let b = tables.iter().find(|t| t.name == "orders_b").unwrap();
    assert_synced(b, db, "orders_b_rt", None).await;

    // A table added and one dropped in Paimon, seen at the next listing.
    let added = wh.create_tables(vec![("orders_c", orders("1"), commits(500))]);
    wh.drop_table("orders_b");
    listed(&[
        "broken",
        "orders_a",
        "orders_c",
        "scratch_tmp",
        "taken",
        "zero_slots",
    ]);
    wait_for("the new table's sync", LONG, || {
        get("deployment", "shop-orders-c-slot-0", NS)
    })
    .await;
    wait_for("the dropped table's sync deleted", LONG, || {
        get("pms", "shop-orders-b", NS).is_none().then_some(())
    })
    .await;
    let out = run_as_pod_of("shop-orders-c", &["run", "--once"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_synced(&added[0], db, "orders_c_rt", None).await;
    assert_eq!(
        db.count("orders_b_rt").await,
        20,
        "a dropped table's MySQL rows stay"
    );
    let events = event_reasons_of("shop");
    assert!(
        events.contains("TableAdded") && events.contains("TableDropped"),
        "{events}"
    );

    // Deleting it deletes its syncs and the discovery worker, never a MySQL table.
    kubectl(&[
        "delete",
        "pmds",
        "shop",
        "-n",
        NS,
        "--wait=true",
        "--timeout=60s",
    ]);
    wait_for("the tables' syncs deleted", LONG, || {
        list("pms", NS, "paimonsync.io/database-sync=shop")
            .is_empty()
            .then_some(())
    })
    .await;
    assert!(get("deployment", "shop--tables-slot-0", NS).is_none());
    assert_eq!(db.count("orders_a_rt").await, 20);
    assert!(
        get("pms", "shop-taken", NS).is_some(),
        "not the database sync's to delete"
    );
    kubectl(&[
        "delete",
        "pms",
        "shop-taken",
        "-n",
        NS,
        "--wait=true",
        "--timeout=60s",
    ]);
}

/// Savepoint latency and rescale time on a large table while Paimon keeps committing
/// (`make bench-cut`; `PMS_CUT_ROWS`, default 2,000,000). A measurement, not part of `make test`:
/// it prints the figures, and fails only if a savepoint or rescale does not complete or MySQL
/// ends unequal to the reference.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run with `make bench-cut`"]
async fn cut_timing_on_a_large_table() {
    let rows: i64 =
        std::env::var("PMS_CUT_ROWS").map_or(2_000_000, |r| r.parse().expect("PMS_CUT_ROWS"));
    install_chart();
    let db = TestDb::new("cut").await;
    let started = std::time::Instant::now();
    let table = std::sync::Arc::new(source_target_and_secret_of(&db, rows).await);
    eprintln!(
        "cut bench: {rows} rows written by Paimon Java in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let _operator = start_operator(&operator_log());
    let spec = sync_spec(&table, &db)
        .max_rows(10_000)
        .parallelism(2)
        .state(SyncState::Running);
    apply_ok(&sync_resource(&spec));
    wait_for("2 slot deployments", LONG, || {
        (list("deployment", NS, SELECTOR).len() == 2).then_some(())
    })
    .await;
    let started = std::time::Instant::now();
    let (mut workers, _logs) = spawn_workers(2);
    mark_ready(2, true);
    let latest = table.latest();
    wait_for("the full read", Duration::from_secs(900), || {
        (status()["snapshotId"] == latest && status()["phase"] == "Running").then_some(())
    })
    .await;
    eprintln!(
        "cut bench: full read of {rows} rows by 2 slots in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // Changes flowing: a commit of 10,000 updates after another, until told to stop.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let committer = {
        let (table, stop) = (table.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut salt = 1;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                table.commits(vec![generate_step(salt % 100 + 1, 10_000, 97, "+U", salt)]);
                salt += 1;
            }
        })
    };
    tokio::time::sleep(Duration::from_secs(5)).await;
    let manifest = format!(
        "apiVersion: paimonsync.io/v1alpha1\nkind: PaimonMysqlSyncSavepoint\nmetadata: {{name: timed, namespace: {NS}}}\nspec: {{syncName: {SYNC}}}\n"
    );
    let started = std::time::Instant::now();
    apply_ok(&manifest);
    let sp = wait_savepoint_completed("timed").await;
    eprintln!(
        "cut bench: savepoint Completed in {:.1} s (created → Completed; status.took {} from served), at snapshot {}",
        started.elapsed().as_secs_f64(),
        sp["status"]["took"],
        sp["status"]["snapshotId"]
    );

    let started = std::time::Instant::now();
    kubectl(&["scale", "pms", SYNC, "-n", NS, "--replicas=3"]);
    wait_status("the old slots paused at one cut", |s| {
        s["rescale"]["phase"] == "Starting"
    })
    .await;
    let cut_at = started.elapsed().as_secs_f64();
    for w in &mut workers {
        assert!(stop_with_sigterm(w).await.success());
    }
    let (mut workers, _logs) = spawn_workers(3);
    mark_ready(3, true);
    let s = wait_status("the new slots at the cut", |s| {
        s["rescale"]["phase"] == "Done"
    })
    .await;
    eprintln!(
        "cut bench: rescale 2 → 3 in {:.1} s (scale → every new slot writing at the cut; the cut itself {cut_at:.1} s; status.took {}), at snapshot {}",
        started.elapsed().as_secs_f64(),
        s["rescale"]["took"],
        s["rescale"]["snapshotId"]
    );
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    committer.join().expect("the committer");
    let latest = table.latest();
    wait_status("caught up", |s| s["snapshotId"] == latest).await;
    for w in &mut workers {
        assert!(stop_with_sigterm(w).await.success());
    }
    assert_synced(&table, &db, "orders", None).await;
    delete_sync();
}

/// The operator's API load (`make api-load`): requests per second it sends the API server with
/// 1, 50 and 200 syncs (valid, reconciled), counted by its own `pms_operator_api_requests_total`:
/// first idle (no worker running), then busy (a stand-in worker per sync writes its checkpoint
/// ConfigMap every 10 s, as a worker does, and applies a new snapshot every 60 s). A
/// measurement: it prints the figures and fails only if the syncs are not all reconciled.
/// An operator watching namespace `ns` (made here, with the Secret `mysql-writer` and the CRDs),
/// and its own count of API requests.
struct ApiLoad {
    port: u16,
    _operator: Operator,
}

impl ApiLoad {
    fn start(ns: &str) -> Self {
        Self::start_with(ns, &[], "")
    }

    /// The same with more operator arguments, its log named with `tag`.
    fn start_with(ns: &str, more: &[&str], tag: &str) -> Self {
        if !kubectl_output(&["get", "namespace", ns], None)
            .status
            .success()
        {
            // (Once: the operator applies its CRDs when it leads, and owns them then.)
            // (Forced: an operator of an earlier test in this API server owns them.)
            kubectl(&[
                "apply",
                "--server-side",
                "--force-conflicts",
                "-f",
                repo_root()
                    .join("crds/paimonmysqlsync.yaml")
                    .to_str()
                    .unwrap(),
            ]);
            kubectl(&["create", "namespace", ns]);
            pms_tests::kube::writer_secret(ns, "u", "p");
        }
        let port = pms_tests::http::free_port();
        let log = std::env::temp_dir().join(format!("pms-api-load-operator-{ns}{tag}.log"));
        let admin = format!("127.0.0.1:{port}");
        let mut args = vec![
            "--namespace",
            ns,
            "--lease-namespace",
            ns,
            "--admin-addr",
            &admin,
        ];
        args.extend_from_slice(more);
        let operator = spawn_operator(&args, &log, "info");
        Self {
            port,
            _operator: operator,
        }
    }

    /// Requests so far, in all and by verb.
    fn requests(&self) -> (f64, BTreeMap<String, f64>) {
        let answer = pms_tests::http::get(self.port, "/metrics").unwrap_or_default();
        let mut by_verb = BTreeMap::new();
        for line in answer
            .lines()
            .filter(|l| l.starts_with("pms_operator_api_requests_total{"))
        {
            let verb = line.split('"').nth(1).unwrap_or_default().to_string();
            let n: f64 = line
                .rsplit(' ')
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0.0);
            by_verb.insert(verb, n);
        }
        (by_verb.values().sum(), by_verb)
    }

    /// Requests per second over 60 s, and by verb.
    async fn measure(&self) -> (f64, String) {
        let (before, verbs_before) = self.requests();
        tokio::time::sleep(Duration::from_secs(60)).await;
        let (after, verbs_after) = self.requests();
        let verbs: Vec<String> = verbs_after
            .iter()
            .map(|(v, a)| format!("{v} {}", a - verbs_before.get(v).copied().unwrap_or(0.0)))
            .collect();
        ((after - before) / 60.0, verbs.join(", "))
    }
}

/// The operator's API load (`make api-load`): requests per second it sends the API server with
/// 1, 50 and 200 syncs (valid, reconciled), counted by its own `pms_operator_api_requests_total`:
/// first idle (no worker running), then busy (a stand-in worker per sync writes its checkpoint
/// ConfigMap every 10 s, as a worker does, and applies a new snapshot every 60 s). A
/// measurement: it prints the figures and fails only if the syncs are not all reconciled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run with `make api-load`"]
async fn operator_api_load() {
    const LOAD_NS: &str = "load";
    let load = ApiLoad::start(LOAD_NS);
    // The stand-in workers' client reads it.
    std::env::set_var("KUBECONFIG", kubeconfig());
    let mut made = 0;
    println!("api-load: syncs | idle or busy | requests/s | per sync | by verb (requests in 60 s)");
    for n in [1, 50, 200] {
        let manifests: Vec<String> = (made..n)
            .map(|i| idle_sync(LOAD_NS, &format!("load-{i}"), &format!("t{i}")))
            .collect();
        apply_ok(&manifests.join("---\n"));
        made = n;
        wait_for(
            &format!("{n} syncs reconciled"),
            Duration::from_secs(600),
            || {
                let reconciled = list("pms", LOAD_NS, "!paimonsync.io/none")
                    .iter()
                    .filter(|s| s["status"]["observedGeneration"].is_number())
                    .count();
                (reconciled == n).then_some(())
            },
        )
        .await;
        tokio::time::sleep(Duration::from_secs(20)).await;
        let (rate, verbs) = load.measure().await;
        println!(
            "api-load: {n} | idle | {rate:.1} | {:.2} | {verbs}",
            rate / n as f64
        );
        let workers: Vec<_> = (0..n)
            .map(|i| tokio::spawn(stand_in_worker(LOAD_NS, i)))
            .collect();
        tokio::time::sleep(Duration::from_secs(20)).await;
        let (rate, verbs) = load.measure().await;
        println!(
            "api-load: {n} | busy | {rate:.1} | {:.2} | {verbs}",
            rate / n as f64
        );
        for worker in workers {
            worker.abort();
        }
    }
}

/// The operator's API load during an upgrade (`make api-load`): 200 syncs Running under an
/// operator with worker image `old`, then an operator with image `new` and at most 4 restarts
/// at once, each sync's place held at most 30 s. The test stands in for the kubelet: it marks
/// a slot Deployment on the new image rolled out, except those of 4 syncs that never run ready.
/// Every other sync gets the new image (the 4 give their places up with a Warning); the
/// requests per second over the upgrade are printed beside the idle figure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run with `make api-load`"]
async fn operator_api_load_upgrade() {
    const LOAD_NS: &str = "load-upgrade";
    const N: usize = 200;
    const BROKEN: [usize; 4] = [0, 1, 2, 3];
    let name = |i: usize| format!("up-{i}");
    let image = |i: usize| {
        get("deployment", &format!("{}-slot-0", name(i)), LOAD_NS).map(|d| {
            d["spec"]["template"]["spec"]["containers"][0]["image"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
    };
    let old = ApiLoad::start_with(LOAD_NS, &["--worker-image", "pms-worker:old"], "-old");
    let manifests: Vec<String> = (0..N)
        .map(|i| idle_sync(LOAD_NS, &name(i), &format!("t{i}")))
        .collect();
    apply_ok(&manifests.join("---\n"));
    for i in 0..N {
        wait_for(
            &format!("{}'s Deployment", name(i)),
            Duration::from_secs(600),
            || image(i).filter(|im| im == "pms-worker:old"),
        )
        .await;
        mark_rolled_out(LOAD_NS, &format!("{}-slot-0", name(i)));
    }
    wait_for("every sync Running", Duration::from_secs(600), || {
        let running = list("pms", LOAD_NS, "!paimonsync.io/none")
            .iter()
            .filter(|s| s["status"]["phase"] == "Running")
            .count();
        (running == N).then_some(())
    })
    .await;
    let (idle, idle_verbs) = old.measure().await;
    drop(old);
    let new = ApiLoad::start_with(
        LOAD_NS,
        &[
            "--worker-image",
            "pms-worker:new",
            "--max-concurrent-restarts",
            "4",
            "--restart-place-seconds",
            "30",
        ],
        "-new",
    );
    let started = std::time::Instant::now();
    let (before, _) = new.requests();
    let mut rolled = std::collections::BTreeSet::new();
    while rolled.len() < N - BROKEN.len() {
        assert!(
            started.elapsed() < Duration::from_secs(1200),
            "the upgrade stalled: {} of {} syncs on the new image",
            rolled.len(),
            N - BROKEN.len()
        );
        // One LIST a pass (a GET per sync would pace the upgrade, not the operator).
        let on_new: Vec<usize> = list("deployment", LOAD_NS, "paimonsync.io/sync")
            .iter()
            .filter(|d| d["spec"]["template"]["spec"]["containers"][0]["image"] == "pms-worker:new")
            .filter_map(|d| {
                let n = d["metadata"]["name"].as_str()?;
                n.strip_prefix("up-")?.strip_suffix("-slot-0")?.parse().ok()
            })
            .filter(|i| !BROKEN.contains(i) && !rolled.contains(i))
            .collect();
        for i in on_new {
            mark_rolled_out(LOAD_NS, &format!("{}-slot-0", name(i)));
            rolled.insert(i);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let took = started.elapsed().as_secs_f64();
    let (after, by_verb) = new.requests();
    let rate = (after - before) / took;
    let released = event_reasons_of_ns(LOAD_NS, &name(BROKEN[0]));
    println!("api-load: the upgrade of {N} syncs (4 at once, 4 never ready): {took:.0} s; idle before {idle:.1} requests/s ({idle_verbs}); during the upgrade {rate:.1} requests/s ({by_verb:?}); events of a broken sync: {}", released.replace('\n', " "));
    assert!(released.contains("RestartPlaceReleased"), "{released}");
}

/// The reasons of the Events of the object `name` in `ns`, a line each.
fn event_reasons_of_ns(ns: &str, name: &str) -> String {
    pms_tests::kube::events(ns, &format!("involvedObject.name={name}"), "reason")
}

/// The operator's API load with one pooled database sync of 1,000 tables on 10 workers
/// (`make api-load`): its listing is written here, no discovery or worker pod runs against
/// this API server, so the workers' reports stay empty and every table counts as starting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run with `make api-load`"]
async fn operator_api_load_pooled() {
    const LOAD_NS: &str = "load-pooled";
    let load = ApiLoad::start(LOAD_NS);
    let tables: Vec<String> = (0..1000).map(|i| format!("t{i:04}")).collect();
    write_listing(LOAD_NS, "pooled", &tables);
    apply_ok(&format!(
        "apiVersion: paimonsync.io/v1alpha1\nkind: PaimonMysqlDatabaseSync\nmetadata: {{name: pooled, namespace: {LOAD_NS}}}\n\
         spec:\n  tables: {{pattern: '.*'}}\n  placement: {{mode: pooled, workers: 10}}\n  template:\n    \
         source: {{warehouse: /nowhere, database: db, table: '{{table}}'}}\n    \
         sink: {{url: 'mysql://127.0.0.1:1/db', credentialsSecretRef: {{name: mysql-writer}}, table: '{{table}}_rt', delivery: exactly-once}}\n"
    ));
    wait_for(
        "the 1,000 tables assigned",
        Duration::from_secs(120),
        || {
            let s = get("pmds", "pooled", LOAD_NS)?;
            (s["status"]["tablesReady"] == "0/1000").then_some(())
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(20)).await;
    let (rate, verbs) = load.measure().await;
    println!("api-load: a pooled database sync of 1000 tables on 10 workers | idle | {rate:.1} | {verbs}");
    let status = get("pmds", "pooled", LOAD_NS).unwrap();
    println!(
        "api-load: the pooled database sync's status: {} bytes",
        status["status"].to_string().len()
    );
}

/// Secret `name` with the test S3 server's credentials (`checkpoint.s3.credentialsSecretRef`).
fn s3_credentials_secret(name: &str) {
    kubectl(&[
        "create",
        "secret",
        "generic",
        name,
        "-n",
        NS,
        &format!("--from-literal=accessKeyId={}", s3::ACCESS_KEY),
        &format!("--from-literal=secretAccessKey={}", s3::SECRET_KEY),
    ]);
}

/// Database sync `name`'s listing of `tables`, written now, as its discovery worker would.
fn write_listing(ns: &str, name: &str, tables: &[String]) {
    let at = pms_tests::kube::utc_now();
    apply_ok(
        &json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("{name}--tables"), "namespace": ns},
            "data": {"report.json": json!({"tables": tables, "at": at}).to_string()},
        })
        .to_string(),
    );
}

/// The operator's API load with one `perTable` database sync of 200 tables (`make api-load`):
/// its listing written here, its 200 syncs made by the operator, idle, then busy (a stand-in
/// worker checkpointing each table's sync every 10 s). The database sync's status holds no
/// table's progress, so the busy tables don't rewrite it.
#[tokio::test]
#[ignore = "minutes; `make api-load`"]
async fn operator_api_load_per_table() {
    const LOAD_NS: &str = "load-per-table";
    let load = ApiLoad::start(LOAD_NS);
    std::env::set_var("KUBECONFIG", kubeconfig());
    let tables: Vec<String> = (0..200).map(|i| format!("t{i:03}")).collect();
    write_listing(LOAD_NS, "shop", &tables);
    apply_ok(&format!(
        "apiVersion: paimonsync.io/v1alpha1\nkind: PaimonMysqlDatabaseSync\nmetadata: {{name: shop, namespace: {LOAD_NS}}}\n\
         spec:\n  tables: {{pattern: '.*'}}\n  discoveryInterval: 1h\n  template:\n    \
         source: {{warehouse: /nowhere, database: db, table: '{{table}}'}}\n    \
         sink: {{url: 'mysql://127.0.0.1:1/db', credentialsSecretRef: {{name: mysql-writer}}, table: '{{table}}_rt'}}\n"
    ));
    wait_for(
        "the 200 tables' syncs reconciled",
        Duration::from_secs(600),
        || {
            let reconciled = list("pms", LOAD_NS, "paimonsync.io/database-sync=shop")
                .iter()
                .filter(|s| s["status"]["observedGeneration"].is_number())
                .count();
            (reconciled == 200).then_some(())
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(20)).await;
    let (rate, verbs) = load.measure().await;
    println!("api-load: a perTable database sync of 200 tables | idle | {rate:.1} | {verbs}");
    let status_version =
        || get("pmds", "shop", LOAD_NS).unwrap()["metadata"]["resourceVersion"].clone();
    let workers: Vec<_> = tables
        .iter()
        .enumerate()
        .map(|(i, t)| tokio::spawn(stand_in_worker_of(LOAD_NS, format!("shop-{t}"), i)))
        .collect();
    tokio::time::sleep(Duration::from_secs(20)).await;
    let before = status_version();
    let (rate, verbs) = load.measure().await;
    println!("api-load: a perTable database sync of 200 tables | busy | {rate:.1} | {verbs}");
    assert_eq!(
        status_version(),
        before,
        "the database sync's status is not rewritten as its tables checkpoint"
    );
    for worker in workers {
        worker.abort();
    }
}

/// Writes sync `load-<i>`'s slot 0 checkpoint ConfigMap as a busy worker does: every 10 s
/// (starting at a spread offset), a new snapshot applied at every sixth write.
async fn stand_in_worker(ns: &'static str, i: usize) {
    stand_in_worker_of(ns, format!("load-{i}"), i).await
}

/// The same for sync `sync`, the `i`-th of 200 (its offset).
async fn stand_in_worker_of(ns: &'static str, sync: String, i: usize) {
    use pms_worker::checkpoint::configmap::ConfigMapCheckpointStore;
    use pms_worker::checkpoint::{Checkpoint, Position, ReadPoint};
    let slot = pms_crds::contract::Slot::new(0, 1).unwrap();
    tokio::time::sleep(Duration::from_millis(i as u64 * 10_000 / 200)).await;
    let mut store = ConfigMapCheckpointStore::connect(&sync, slot, Some(ns.into()))
        .await
        .expect("a client");
    store.load().await.expect("the slot's checkpoint ConfigMap");
    for write in 0u64.. {
        let snapshot = 2 + (write / 6) as i64;
        let checkpoint = Checkpoint {
            sync: sync.clone(),
            slot,
            point: ReadPoint::Changes {
                next_snapshot: snapshot,
                at: Position::START,
            },
            epoch: 1,
            updated: format!(
                "2026-12-03T00:{:02}:{:02}Z",
                (write / 6) % 60,
                write % 6 * 10
            ),
            latest_snapshot: Some(snapshot),
            rescaled_from: None,
            paused_for: None,
            belongs_to: None,
            sweep: false,
            full_read: None,
        };
        store.save(&checkpoint).await.expect("a checkpoint written");
        tokio::time::sleep(Duration::from_secs(10)).await;
    }
}
