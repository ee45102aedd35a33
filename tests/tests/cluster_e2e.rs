//! End to end on a real single-node cluster (`scripts/with-k8s-cluster.sh`: containerd, kubelet,
//! controller-manager, scheduler, the repo's OCI images): the chart installed with Helm, the
//! operator and the workers as real pods with their own ServiceAccounts, probes and SIGTERM, a
//! warehouse on a hostPath volume (`spec.workerPod`), MySQL reached from the pods at the node's
//! bridge address. Prints the figures the README reports: pod start → first row, Paimon commit →
//! visible in MySQL, `kubectl scale` → the new slot writing.

mod common;

use std::time::{Duration, Instant};

use common::*;
use pms_tests::config::SyncConfigBuilder;
use pms_tests::kube::{
    apply_ok, condition, get, helm, kubectl, kubectl_output, kubectl_pms, list,
    mysql_writer_secret, patch_sync, wait_for, wait_sync_status, Watch,
};
use pms_tests::mysql::TestDb;
use pms_tests::paimon::{Database, Table};
use pms_tests::repo_root;
use serde_json::{json, Value as Json};

const NS: &str = "cluster-e2e";
const SYNC: &str = "orders";
const PASSWORD: &str = "Cluster-S3cret-e2e";
const SELECTOR: &str = "paimonsync.io/sync=orders";
const LONG: Duration = Duration::from_secs(120);
/// The node's address on the pods' bridge (scripts/k8s-cluster.sh).
const NODE_IP: &str = "10.88.0.1";

/// Points the kube helpers at the real cluster (this test binary talks to nothing else).
fn use_the_cluster() {
    let kc = std::env::var("PMS_TEST_CLUSTER_KUBECONFIG").unwrap_or_else(|_| {
        panic!(
            "PMS_TEST_CLUSTER_KUBECONFIG is not set: this test needs the real single-node cluster. Run it with \
             `make test` (or scripts/with-k8s-cluster.sh …, as root), which builds the images and starts it."
        )
    });
    std::env::set_var("PMS_TEST_KUBECONFIG", kc);
    // A failure shows what the cluster looked like (it is torn down right after).
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        let status = kubectl_output(&["get", "pms", "-A", "-o", "yaml"], None);
        eprintln!("--- syncs:\n{}", String::from_utf8_lossy(&status.stdout));
        let pods = kubectl_output(&["get", "pods", "-A", "-o", "wide"], None);
        eprintln!("--- pods:\n{}", String::from_utf8_lossy(&pods.stdout));
        for (ns, selector) in [
            ("pms-system", "app.kubernetes.io/name=paimon-mysql-sync"),
            (NS, SELECTOR),
        ] {
            let logs = kubectl_output(
                &["logs", "-n", ns, "-l", selector, "--tail=60", "--prefix"],
                None,
            );
            eprintln!("--- logs {ns}:\n{}", String::from_utf8_lossy(&logs.stdout));
        }
    }));
}

async fn wait_status(what: &str, f: impl Fn(&Json) -> bool) -> Json {
    wait_sync_status(NS, SYNC, what, LONG, f).await
}

/// The slots' pods, Ready through their real readiness probes, `n` of them.
async fn ready_worker_pods(n: usize) -> Vec<Json> {
    wait_for(&format!("{n} Ready worker pods"), LONG, || {
        let pods: Vec<Json> = worker_pods_now()
            .into_iter()
            .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
            .collect();
        let ready = |p: &Json| {
            p["status"]["conditions"].as_array().is_some_and(|cs| {
                cs.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            })
        };
        (pods.len() == n && pods.iter().all(ready)).then_some(pods)
    })
    .await
}

/// The warehouse readable by the workers (uid 65532) and its table dir writable (their consumer files).
fn open_to_the_workers(table: &Table) {
    open_warehouse(table.warehouse());
}

/// The workers (uid 65532) read the warehouse and write their consumer files into it.
fn open_warehouse(warehouse: &std::path::Path) {
    let mut dir = warehouse.to_path_buf();
    let status = std::process::Command::new("chmod")
        .args(["-R", "a+rwX"])
        .arg(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    while dir.pop() && dir.as_os_str() != "/" {
        std::process::Command::new("chmod")
            .arg("a+x")
            .arg(&dir)
            .status()
            .unwrap();
    }
}

fn sync_manifest(table: &Table, db: &TestDb, parallelism: u32) -> String {
    let url = format!("mysql://{NODE_IP}:{}/{}", db.port, db.name);
    let spec = SyncConfigBuilder::for_url(table, &url)
        .poll_interval(Duration::from_millis(200))
        .credentials_secret("mysql-writer")
        .checkpoint_interval(Duration::from_secs(1))
        .parallelism(parallelism)
        .spec_yaml();
    let mut spec: serde_json::Value = serde_json::to_value(spec).unwrap();
    let warehouse = table.warehouse().display().to_string();
    spec["workerPod"] = json!({
        "volumes": [{"name": "warehouse", "hostPath": {"path": warehouse, "type": "Directory"}}],
        "volumeMounts": [{"name": "warehouse", "mountPath": warehouse}],
        "labels": {"team": "data-platform"},
        // The settings real clusters need: environment, spread, a cloud identity's annotation.
        "env": [{"name": "HTTPS_PROXY", "value": ""}, {"name": "TEAM", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['team']"}}}],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"team": "data-platform"}}}],
        "serviceAccountAnnotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/pms"},
    });
    serde_json::to_string(&json!({
        "apiVersion": "paimonsync.io/v1alpha1",
        "kind": "PaimonMysqlSync",
        "metadata": {"name": SYNC, "namespace": NS},
        "spec": spec,
    }))
    .unwrap()
}

/// Until MySQL equals the reference read of the latest snapshot.
async fn wait_synced(table: &Table, db: &TestDb) {
    let latest = table.latest();
    wait_status(&format!("the slots at snapshot {latest}"), |s| {
        s["snapshotId"] == latest
    })
    .await;
    assert_synced(table, db, "orders", None).await;
}

/// Until `sql` (one number) answers 1, polling every 20 ms.
async fn wait_mysql(db: &TestDb, what: &str, sql: &str) {
    let start = Instant::now();
    while db.query_strings(sql).await[0][0].as_deref() != Some("1") {
        assert!(start.elapsed() < LONG, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn logs_of(selector: &str) -> String {
    let out = kubectl_output(
        &[
            "logs",
            "-n",
            NS,
            "-l",
            selector,
            "--all-containers",
            "--tail=-1",
            "--prefix",
        ],
        None,
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The chart's release package: the one `make test` made (`PMS_RELEASE_DIR`), else one packaged
/// here (with the temporary directory that holds it).
fn chart_package() -> (std::path::PathBuf, Option<tempfile::TempDir>) {
    let find = |dir: &std::path::Path| {
        std::fs::read_dir(dir)
            .expect("the release directory")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.extension().is_some_and(|e| e == "tgz"))
            .unwrap_or_else(|| panic!("no chart package in {}", dir.display()))
    };
    if let Ok(dir) = std::env::var("PMS_RELEASE_DIR") {
        return (find(std::path::Path::new(&dir)), None);
    }
    let tmp = tempfile::tempdir().unwrap();
    let chart = repo_root().join("charts/paimon-mysql-sync");
    helm(&[
        "package",
        chart.to_str().unwrap(),
        "-d",
        tmp.path().to_str().unwrap(),
    ]);
    (find(tmp.path()), Some(tmp))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_real_cluster() {
    use_the_cluster();
    // The previous chart version (0.1.0: its CRD has no spec.workerPod) and a sync made under
    // it. Its operator does not run (one image here, the current one): what the upgrade must
    // carry over is the old CRD and the resources stored under it.
    let old_chart = repo_root().join("tests/charts/paimon-mysql-sync-0.1.0.tgz");
    helm(&[
        "install",
        "pms",
        old_chart.to_str().unwrap(),
        "-n",
        "pms-system",
        "--create-namespace",
        "--set",
        "replicaCount=0",
    ]);
    assert!(
        !crd_knows_worker_pod(),
        "the 0.1.0 CRD has no spec.workerPod"
    );
    kubectl(&["create", "namespace", NS]);

    let table = orders_table(json!({"bucket": "4", "changelog-producer": "input"}), false);
    table.commits(vec![generate(1, 400, "+I", 0)]);
    open_to_the_workers(&table);
    let db = TestDb::new("cluster_e2e").await;
    db.exec(ORDERS_DDL).await;
    mysql_writer_secret(&db, NS, "cluster_writer", PASSWORD).await;
    let mut without_volume: Json = serde_json::from_str(&sync_manifest(&table, &db, 2)).unwrap();
    without_volume["spec"]
        .as_object_mut()
        .unwrap()
        .remove("workerPod");
    apply_ok(&without_volume.to_string());

    // helm upgrade to this chart, from its release package (`make test`'s dry run of the
    // release: scripts/release.sh): the operator applies its new CRD; the old resource stays.
    let (chart, _packaged_here) = chart_package();
    helm(&[
        "upgrade",
        "pms",
        chart.to_str().unwrap(),
        "-n",
        "pms-system",
        "--set",
        "image.pullPolicy=Never",
        "--set",
        "workerImage.pullPolicy=Never",
        "--set",
        "replicaCount=2",
        "--wait",
        "--timeout",
        "120s",
    ]);
    wait_for("the operator's CRD with spec.workerPod", LONG, || {
        crd_knows_worker_pod().then_some(())
    })
    .await;

    // That sync's workers can't see the local warehouse (no volume): they crash-loop, and the
    // status and a Warning event say why (not only the pod logs).
    let s = wait_status("Degraded with the worker's error", |s| {
        s["phase"] == "Degraded" && s["conditions"].to_string().contains("WorkerFailed")
    })
    .await;
    let warehouse = table.warehouse().display().to_string();
    assert!(s["conditions"].to_string().contains(&warehouse), "{s}");
    assert!(events(&["Degraded"]) > 0, "an event Degraded");

    // The warehouse mounted (spec.workerPod) → pods Ready → the first rows.
    let applied = Instant::now();
    apply_ok(&sync_manifest(&table, &db, 2));
    let pods = ready_worker_pods(2).await;
    assert_eq!(
        pods[0]["metadata"]["labels"]["team"], "data-platform",
        "spec.workerPod labels"
    );
    let pod_spec = &pods[0]["spec"];
    let env = pod_spec["containers"][0]["env"].to_string();
    assert!(
        env.contains("\"TEAM\"") && env.contains("HTTPS_PROXY"),
        "spec.workerPod.env: {env}"
    );
    assert_eq!(
        pod_spec["topologySpreadConstraints"][0]["topologyKey"],
        "kubernetes.io/hostname"
    );
    assert!(
        pod_spec["securityContext"].get("runAsUser").is_none(),
        "no fixed user (OpenShift's restricted profile assigns one): {}",
        pod_spec["securityContext"]
    );
    let account = get(
        "serviceaccount",
        pod_spec["serviceAccountName"].as_str().unwrap(),
        NS,
    )
    .unwrap();
    assert_eq!(
        account["metadata"]["annotations"]["eks.amazonaws.com/role-arn"],
        "arn:aws:iam::123456789012:role/pms"
    );
    let resources = &pods[0]["spec"]["containers"][0]["resources"];
    assert_eq!(
        resources["limits"]["memory"], "384Mi",
        "defaulted from maxBufferBytes: {resources}"
    );
    wait_mysql(
        &db,
        "the first rows in MySQL",
        "SELECT COUNT(*) > 0 FROM orders",
    )
    .await;
    println!(
        "figure: kubectl apply → first row in MySQL: {:.1} s",
        applied.elapsed().as_secs_f64()
    );
    wait_synced(&table, &db).await;
    let s = wait_status("Running 2/2", |s| {
        s["phase"] == "Running" && s["slotsReady"] == "2/2"
    })
    .await;
    assert!(s["conditions"].to_string().contains("\"Ready\""), "{s}");
    // Slot 0's pre-flight, published with the worker's own ServiceAccount.
    assert_eq!(condition(&s, "PreflightPassed")["status"], "True", "{s}");

    // The workers wrote their checkpoints with their own ServiceAccount, which may write nothing else.
    // Written by a worker (the operator never writes a checkpoint): no field of it is the operator's.
    let name = format!("{SYNC}-checkpoint-0");
    let cm = kubectl(&[
        "get",
        "configmap",
        &name,
        "-n",
        NS,
        "-o",
        "json",
        "--show-managed-fields",
    ]);
    let cm: Json = serde_json::from_str(&cm).unwrap();
    let writers = cm["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        !writers.is_empty() && writers.iter().all(|w| w["manager"] != "pms-operator"),
        "{writers:?}"
    );
    let sa = format!("system:serviceaccount:{NS}:{SYNC}-worker");
    let can = |verb: &str, what: &str| {
        kubectl_output(&["auth", "can-i", verb, what, "-n", NS, "--as", &sa], None)
            .status
            .success()
    };
    assert!(can("update", &format!("configmaps/{SYNC}-checkpoint-0")));
    assert!(
        !can("update", &format!("configmaps/{SYNC}-config")),
        "the worker can't rewrite its config"
    );
    assert!(
        !can("get", "secrets/mysql-writer"),
        "the worker reads its Secret only through its env"
    );

    // A Paimon commit, visible in MySQL: from the snapshot's commit time to the row seen.
    let (snapshot, seen) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| table.commits(vec![generate(5001, 1, "+I", 0)]));
        let sql = "SELECT COUNT(*) FROM orders WHERE id = 5001";
        let visible = wait_mysql(&db, "the new row in MySQL", sql);
        tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(visible));
        let seen = std::time::SystemTime::now();
        (writer.join().expect("the Paimon writer"), seen)
    });
    let file = table
        .table_dir()
        .join(format!("snapshot/snapshot-{snapshot}"));
    let committed: Json = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let committed =
        std::time::UNIX_EPOCH + Duration::from_millis(committed["timeMillis"].as_u64().unwrap());
    let latency = seen.duration_since(committed).unwrap_or_default();
    println!(
        "figure: Paimon commit → visible in MySQL: {:.2} s",
        latency.as_secs_f64()
    );

    // kubectl scale 2 → 3, at a cut, while Paimon commits.
    table.commits(vec![generate_step(1, 100, 3, "+U", 5)]);
    let scaled = Instant::now();
    let phase_changes = events(PHASES);
    kubectl(&["scale", "pms", SYNC, "-n", NS, "--replicas=3"]);
    ready_worker_pods(3).await;
    let s = wait_status("the rescale Done", |s| s["rescale"]["phase"] == "Done").await;
    println!(
        "figure: kubectl scale 2 → 3 → every new slot writing: {:.1} s (status: {})",
        scaled.elapsed().as_secs_f64(),
        s["rescale"]["took"]
    );
    wait_synced(&table, &db).await;
    assert_eq!(
        events(PHASES),
        phase_changes,
        "the phase stayed Running through the rescale"
    );

    // A worker pod deleted while Paimon commits: its Deployment brings a new one; nothing lost.
    let victim = ready_worker_pods(3).await[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    table.commits(vec![generate(6001, 200, "+I", 0)]);
    kubectl(&["delete", "pod", &victim, "-n", NS, "--wait=false"]);
    table.commits(vec![generate_step(2, 100, 4, "-D", 0)]);
    wait_for("the deleted pod gone", LONG, || {
        get("pod", &victim, NS).is_none().then_some(())
    })
    .await;
    ready_worker_pods(3).await;
    wait_synced(&table, &db).await;

    // Suspend (`kubectl pms suspend`): real SIGTERM, each worker flushes and checkpoints, then
    // exits 0; resume goes on.
    pms_ok(&["suspend", SYNC, "-n", NS]);
    wait_for("no worker pods", LONG, || {
        worker_pods_now().is_empty().then_some(())
    })
    .await;
    wait_status("Suspended", |s| s["phase"] == "Suspended").await;
    table.commits(vec![generate(7001, 50, "+I", 0)]);
    let (_, screen) = kubectl_pms(&["status", SYNC, "-n", NS]);
    assert!(screen.contains(": Suspended"), "{screen}");
    pms_ok(&["resume", SYNC, "-n", NS]);
    ready_worker_pods(3).await;
    wait_synced(&table, &db).await;

    // A node-level restart of the kubelet while Paimon commits: the pods' containers run on.
    let before = containers_by_pod();
    table.commits(vec![generate(7101, 50, "+I", 0)]);
    restart_kubelet();
    table.commits(vec![generate_step(7101, 50, 2, "+U", 3)]);
    ready_worker_pods(3).await;
    assert_eq!(
        containers_by_pod(),
        before,
        "the same pods and containers after the kubelet restart"
    );
    wait_synced(&table, &db).await;

    // The leader frozen (SIGSTOP): the other replica takes the Lease when it expires and scales
    // 3 → 2; thawed, the old leader sees it lost the Lease and restarts as the standby.
    let frozen = operator_leader().expect("a leader");
    let pid = operator_pid(&frozen);
    signal(pid, "STOP");
    kubectl(&["scale", "pms", SYNC, "-n", NS, "--replicas=2"]);
    table.commits(vec![generate(7501, 20, "+I", 0)]);
    wait_for("another replica leading", LONG, || {
        operator_leader().filter(|l| *l != frozen).map(drop)
    })
    .await;
    wait_status("the rescale to 2 Done", |s| {
        s["rescale"]["phase"] == "Done" && s["rescale"]["to"] == 2
    })
    .await;
    signal(pid, "CONT");
    wait_for("the thawed operator restarted", LONG, || {
        let pod = get("pod", &frozen, "pms-system")?;
        (pod["status"]["containerStatuses"][0]["restartCount"].as_i64() >= Some(1)).then_some(())
    })
    .await;
    wait_synced(&table, &db).await;

    // The leader operator pod killed: the other replica takes the Lease and scales 2 → 1. From a
    // sync Running with both slots ready: scaling one that is not Running applies at once,
    // without a cut (and without a rescale record), which is not what this step checks.
    wait_status("Running with both slots ready", |s| {
        s["phase"] == "Running" && s["readySlots"] == 2
    })
    .await;
    let leader = operator_leader().expect("a leader");
    kubectl(&[
        "delete",
        "pod",
        &leader,
        "-n",
        "pms-system",
        "--grace-period=0",
        "--force",
    ]);
    kubectl(&["scale", "pms", SYNC, "-n", NS, "--replicas=1"]);
    table.commits(vec![generate(8001, 20, "+I", 0)]);
    ready_worker_pods(1).await;
    wait_status("the rescale to 1 Done", |s| {
        s["rescale"]["phase"] == "Done" && s["rescale"]["to"] == 1
    })
    .await;
    let next = wait_for("another replica leading", LONG, operator_leader).await;
    assert_ne!(next, leader, "another replica leads");
    wait_synced(&table, &db).await;

    // A stalled worker: its write to MySQL blocked (the table locked by another session) for
    // longer than workerPod.stallAfter, so its liveness probe fails and the kubelet restarts it;
    // the status counts the restart. Unlocked, it goes on.
    patch_sync(
        NS,
        SYNC,
        &json!({"spec": {"workerPod": {"stallAfter": "5s"}}}),
    );
    wait_for("the worker pod with stallAfter, Ready", LONG, || {
        let pods = worker_pods_now();
        let with_stall_after = |p: &Json| p.to_string().contains("PMS_STALL_AFTER");
        let ready = |p: &Json| {
            p["status"]["conditions"].as_array().is_some_and(|cs| {
                cs.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            })
        };
        (pods.len() == 1 && with_stall_after(&pods[0]) && ready(&pods[0])).then_some(())
    })
    .await;
    let mut lock = db.conn().await;
    mysql_async::prelude::Queryable::query_drop(&mut lock, "LOCK TABLES orders WRITE")
        .await
        .unwrap();
    table.commits(vec![generate(8101, 10, "+I", 0)]);
    let restarted = wait_for(
        "the stalled worker restarted, counted in the status",
        Duration::from_secs(240),
        || {
            let status = pms_tests::kube::sync_status(NS, SYNC);
            let restarts = status["slots"][0]["restarts"].as_i64()?;
            (restarts >= 1).then_some(status)
        },
    )
    .await;
    mysql_async::prelude::Queryable::query_drop(&mut lock, "UNLOCK TABLES")
        .await
        .unwrap();
    drop(lock);
    // The previous container's log, by the plugin as by kubectl.
    let (_, logs) = kubectl_pms(&["logs", SYNC, "-n", NS, "--previous", "--tail", "-1"]);
    assert!(
        logs.contains("stalled"),
        "the restarted worker said it stalled: {restarted}\n{logs}"
    );
    ready_worker_pods(1).await;
    wait_synced(&table, &db).await;

    // No secret in any log.
    let logs = logs_of(SELECTOR) + &logs_of("app.kubernetes.io/name=paimon-mysql-sync");
    assert!(
        logs.contains("checkpoint"),
        "the workers' logs came back: {}",
        &logs[..logs.len().min(500)]
    );
    assert!(!logs.contains(PASSWORD), "a secret in the logs");
    the_kubectl_plugin(&table, &db).await;

    // Delete with retainOnDelete, right after a commit reached MySQL: the workers stop first
    // (each flushes and checkpoints, exit 0: none in Error, as their RBAC goes only after them),
    // so the kept checkpoint holds the last flush; everything else of the sync goes.
    patch_sync(
        NS,
        SYNC,
        &json!({"spec": {"checkpoint": {"retainOnDelete": true}}}),
    );
    ready_worker_pods(1).await;
    table.commits(vec![generate(9001, 30, "+I", 0)]);
    let latest = table.latest();
    wait_mysql(
        &db,
        "the last commit in MySQL",
        "SELECT COUNT(*) = 30 FROM orders WHERE id >= 9001",
    )
    .await;
    let watch = Watch::start("pod", NS, SELECTOR);
    kubectl(&[
        "delete",
        "pms",
        SYNC,
        "-n",
        NS,
        "--wait=true",
        "--timeout=120s",
    ]);
    let seen = watch.stop();
    assert!(seen.len() > 1, "the watch saw the pods go: {seen:?}");
    let failed_exits: Vec<String> = seen.iter().flat_map(failed_containers).collect();
    assert!(
        failed_exits.is_empty(),
        "workers ended in error on delete: {failed_exits:?}"
    );
    let kept = list("configmap", NS, SELECTOR);
    assert!(
        kept.iter()
            .all(|cm| cm["metadata"]["labels"]["paimonsync.io/component"] == "checkpoint"),
        "only checkpoints are kept: {kept:?}"
    );
    let slot0 = kept
        .iter()
        .find(|cm| cm["metadata"]["name"] == format!("{SYNC}-checkpoint-0"))
        .expect("slot 0's checkpoint kept");
    let checkpoint: Json = serde_json::from_str(
        slot0["data"]["checkpoint.json"]
            .as_str()
            .expect("a checkpoint"),
    )
    .unwrap();
    assert!(
        checkpoint["snapshotId"] == latest
            && checkpoint["phase"] == "incremental"
            && checkpoint["position"].is_null(),
        "the kept checkpoint holds the last flush (snapshot {latest} whole): {checkpoint}"
    );
    assert_synced(&table, &db, "orders", Some(latest)).await;
    kubectl(&["delete", "configmap", "-n", NS, "-l", SELECTOR]);
    for kind in ["deployment", "pod", "configmap", "role", "serviceaccount"] {
        let left = list(kind, NS, SELECTOR);
        assert!(left.is_empty(), "{kind} left after delete: {left:?}");
    }
    a_database_sync_on_real_pods(&db).await;
    a_pooled_database_sync_of_many_tables(&db).await;

    // Both operator replicas (the leader, the standby) stop on SIGTERM at once, well inside the
    // 30 s grace period.
    let uninstall = Instant::now();
    helm(&[
        "uninstall",
        "pms",
        "-n",
        "pms-system",
        "--wait",
        "--timeout",
        "120s",
    ]);
    wait_for("the operator pods gone", LONG, || {
        list(
            "pod",
            "pms-system",
            "app.kubernetes.io/name=paimon-mysql-sync",
        )
        .is_empty()
        .then_some(())
    })
    .await;
    let took = uninstall.elapsed();
    println!(
        "figure: helm uninstall → no operator pod: {:.1} s",
        took.as_secs_f64()
    );
    assert!(
        took < Duration::from_secs(20),
        "helm uninstall took {took:?}"
    );
}

/// `kubectl pms` (the plugin found on the PATH by kubectl) on the running sync: each command
/// does what it says through the field a user would set, and nothing it prints holds the
/// password.
async fn the_kubectl_plugin(table: &Table, db: &TestDb) {
    let (ok, screen) = kubectl_pms(&["status", SYNC, "-n", NS]);
    assert!(ok, "{screen}");
    println!("figure: kubectl pms status {SYNC}:\n{screen}");
    assert!(
        screen.starts_with(&format!("PaimonMysqlSync {NS}/{SYNC}: Running")),
        "{screen}"
    );
    assert!(
        screen.contains("SLOT  SNAPSHOT  LAG  LAST CHECKPOINT"),
        "{screen}"
    );
    let (ok, logs) = kubectl_pms(&["logs", SYNC, "-n", NS, "--slot", "0", "--tail", "50"]);
    assert!(
        ok && logs.contains(&format!("==> pod {SYNC}-slot-0")),
        "{logs}"
    );
    // logs: since a time, with the operator's lines about the sync; followed as they come.
    let (ok, logs) = kubectl_pms(&["logs", SYNC, "-n", NS, "--since", "30m", "--operator"]);
    assert!(
        ok && logs.contains(&format!("==> pod {SYNC}-slot-0"))
            && logs.contains("==> operator pod")
            && !logs.contains(PASSWORD),
        "{logs}"
    );
    table.commits(vec![generate(7901, 5, "+I", 0)]);
    let followed = pms_tests::kube::kubectl_pms_streaming(
        &["logs", SYNC, "-n", NS, "-f", "--tail", "5"],
        Duration::from_secs(8),
    );
    assert!(
        followed
            .lines()
            .any(|l| l.starts_with(&format!("[{SYNC}-slot-0"))),
        "{followed}"
    );
    wait_synced(table, db).await;
    // check: the pre-flight now, as a Job with slot 0's pod; its report printed, the Job gone.
    let (ok, report) = kubectl_pms(&["check", SYNC, "-n", NS]);
    assert!(
        ok && report.contains("MySQL") && report.contains("✓") && !report.contains(PASSWORD),
        "{report}"
    );
    wait_for("the check Job gone", LONG, || {
        list("job", NS, &format!("paimonsync.io/check-of={SYNC}"))
            .is_empty()
            .then_some(())
    })
    .await;
    let (ok, missing) = kubectl_pms(&["status", "no-such-sync", "-n", NS]);
    assert!(
        !ok && missing.contains("no PaimonMysqlSync or PaimonMysqlDatabaseSync no-such-sync"),
        "{missing}"
    );

    // verify: spec.verify.trigger, one verify Job, its result in the screen.
    pms_ok(&["verify", SYNC, "-n", NS]);
    let s = wait_status("the verify asked by kubectl pms", |s| {
        s["verify"]["lastTrigger"]
            .as_str()
            .is_some_and(|t| t.starts_with("kubectl-pms-"))
            && s["verify"]["running"] == false
            && s["verify"]["result"].is_object()
    })
    .await;
    assert_eq!(s["verify"]["result"]["missing"], 0, "{s}");
    let (_, screen) = kubectl_pms(&["status", SYNC, "-n", NS]);
    assert!(screen.contains("0 differ"), "{screen}");

    // savepoint: a PaimonMysqlSyncSavepoint; then rebuild; then restore from the savepoint.
    pms_ok(&["savepoint", SYNC, "-n", NS, "--name", "by-kubectl-pms"]);
    wait_for("savepoint by-kubectl-pms Completed", LONG, || {
        let sp = get("pmssp", "by-kubectl-pms", NS)?;
        (sp["status"]["state"] == "Completed").then_some(())
    })
    .await;
    table.commits(vec![generate(8001, 20, "+I", 0)]);
    let (ok, wrong) = kubectl_pms(&[
        "restore",
        SYNC,
        "-n",
        NS,
        "--savepoint",
        "no-such-savepoint",
    ]);
    assert!(
        !ok && wrong.contains("no PaimonMysqlSyncSavepoint no-such-savepoint"),
        "{wrong}"
    );
    pms_ok(&[
        "restore",
        SYNC,
        "-n",
        NS,
        "--savepoint",
        "by-kubectl-pms",
        "--yes",
    ]);
    wait_status("the restore from by-kubectl-pms Done, running", |s| {
        s["restore"]["phase"] == "Done" && s["phase"] == "Running"
    })
    .await;
    wait_synced(table, db).await;
    pms_ok(&["rebuild", SYNC, "-n", NS, "--yes"]);
    wait_status("the rebuild asked by kubectl pms Done, running", |s| {
        s["rebuild"]["trigger"]
            .as_str()
            .is_some_and(|t| t.starts_with("kubectl-pms-"))
            && s["rebuild"]["phase"] == "Done"
            && s["phase"] == "Running"
    })
    .await;
    wait_synced(table, db).await;

    // report: one YAML document with the resource, savepoints, events, pods and logs.
    let (ok, report) = kubectl_pms(&["report", SYNC, "-n", NS]);
    assert!(ok, "{report}");
    assert!(!report.contains(PASSWORD), "a secret in the report");
    let doc: Json = serde_yaml::from_str(&report).expect("the report is YAML");
    assert_eq!(doc["sync"]["metadata"]["name"], SYNC);
    assert!(
        doc["savepoints"].as_array().is_some_and(|s| !s.is_empty()),
        "{doc}"
    );
    assert!(
        doc["events"].as_array().is_some_and(|e| !e.is_empty()),
        "{doc}"
    );
    assert!(
        doc["logs"].as_object().is_some_and(|l| !l.is_empty()),
        "{doc}"
    );
    assert!(
        doc["operatorLogs"].as_object().is_some_and(|l| l
            .values()
            .any(|v| v.as_str().is_some_and(|t| t.contains(SYNC)))),
        "the operator's lines about the sync: {doc}"
    );
    println!(
        "figure: kubectl pms status {SYNC}, after them:\n{}",
        pms_ok(&["status", SYNC, "-n", NS])
    );
    // The restore's spec field stays as the user would leave it; take it out as a user would,
    // and the savepoint (it outlives the sync, with its data ConfigMap).
    patch_sync(NS, SYNC, &json!({"spec": {"restoreFrom": null}}));
    kubectl(&["delete", "pmssp", "by-kubectl-pms", "-n", NS, "--wait=true"]);
    wait_for("the savepoint's data gone", LONG, || {
        get("configmap", "by-kubectl-pms-data", NS)
            .is_none()
            .then_some(())
    })
    .await;
}

/// A merge patch of the database sync `name`.
fn patch_pmds(name: &str, patch: &str) {
    kubectl(&["patch", "pmds", name, "-n", NS, "--type=merge", "-p", patch]);
}

/// `kubectl pms ARGS` that must succeed.
fn pms_ok(args: &[&str]) -> String {
    let (ok, out) = kubectl_pms(args);
    assert!(ok, "kubectl pms {}: {out}", args.join(" "));
    out
}

/// A `PaimonMysqlDatabaseSync` on real pods: the discovery pod lists the database, the operator
/// makes one sync per table, their worker pods create and fill the MySQL tables; a table created
/// while it runs is picked up; a switch to `placement: pooled` and back keeps every table equal;
/// delete removes the syncs and pods and leaves the MySQL tables.
async fn a_database_sync_on_real_pods(db: &TestDb) {
    let wh = Database::new("shop");
    let orders = |buckets: &str| {
        orders_create(
            json!({"bucket": buckets, "changelog-producer": "input"}),
            false,
        )
    };
    let tables = wh.create_tables(vec![
        ("orders_a", orders("2"), vec![generate(1, 300, "+I", 0)]),
        ("orders_b", orders("1"), vec![generate(1, 100, "+I", 1)]),
        ("scratch", orders("1"), vec![generate(1, 10, "+I", 2)]),
    ]);
    open_warehouse(wh.warehouse());
    let warehouse = wh.warehouse().display().to_string();
    let started = Instant::now();
    apply_ok(
        &json!({
            "apiVersion": "paimonsync.io/v1alpha1",
            "kind": "PaimonMysqlDatabaseSync",
            "metadata": {"name": "shop", "namespace": NS},
            "spec": {
                "tables": {"pattern": "orders_.*"},
                "discoveryInterval": "2s",
                "template": {
                    "source": {"warehouse": warehouse, "database": "shop", "table": "{table}", "pollInterval": "200ms"},
                    "sink": {
                        "url": format!("mysql://{NODE_IP}:{}/{}", db.port, db.name),
                        "credentialsSecretRef": {"name": "mysql-writer"},
                        "table": "{table}_rt",
                        "createTable": true,
                    },
                    "workerPod": {
                        "volumes": [{"name": "warehouse", "hostPath": {"path": warehouse, "type": "Directory"}}],
                        "volumeMounts": [{"name": "warehouse", "mountPath": warehouse}],
                    },
                },
            },
        })
        .to_string(),
    );
    let tables_running = |n: usize| {
        let want = format!("{n}/{n}");
        move || {
            let s = get("pmds", "shop", NS)?["status"].clone();
            (s["tablesReady"] == want.as_str() && s["phase"] == "Running").then_some(s)
        }
    };
    let s = wait_for("2 tables running", LONG, tables_running(2)).await;
    println!(
        "figure: kubectl apply of a 2-table database sync → both running: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(condition(&s, "Discovered")["status"], "True", "{s}");
    for t in tables.iter().filter(|t| t.name != "scratch") {
        wait_mysql(
            db,
            &t.name,
            &format!(
                "SELECT COUNT(*) = {} FROM {}_rt",
                if t.name == "orders_a" { 300 } else { 100 },
                t.name
            ),
        )
        .await;
        assert_synced(t, db, &format!("{}_rt", t.name), None).await;
    }
    assert!(
        get("pms", "shop-scratch", NS).is_none(),
        "a table the pattern leaves out"
    );

    // Created while the sync runs: picked up at the next listing.
    let added = Instant::now();
    let new = wh.create_tables(vec![(
        "orders_c",
        orders("1"),
        vec![generate(1, 50, "+I", 3)],
    )]);
    open_warehouse(wh.warehouse());
    wait_for("3 tables running", LONG, tables_running(3)).await;
    wait_mysql(db, "orders_c", "SELECT COUNT(*) = 50 FROM orders_c_rt").await;
    println!(
        "figure: a new Paimon table → its rows in MySQL: {:.1} s",
        added.elapsed().as_secs_f64()
    );
    assert_synced(&new[0], db, "orders_c_rt", None).await;

    // perTable → pooled (exactly-once, which pooled needs) → perTable, changes at each step:
    // each table is taken on where it was left, whether it had a progress row or not.
    let mut tables = tables;
    tables.retain(|t| t.name != "scratch");
    tables.extend(new);
    let switched = Instant::now();
    patch_pmds(
        "shop",
        r#"{"spec":{"placement":{"mode":"pooled","workers":1},"template":{"sink":{"delivery":"exactly-once"}}}}"#,
    );
    wait_for("3 tables following on the pooled worker", LONG, || {
        let s = get("pmds", "shop", NS)?["status"].clone();
        (s["pool"]["following"] == 3
            && list("pms", NS, "paimonsync.io/database-sync=shop").is_empty())
        .then_some(())
    })
    .await;
    println!(
        "figure: a 3-table database sync switched perTable → pooled, every table following: {:.1} s",
        switched.elapsed().as_secs_f64()
    );
    change_and_check(&wh, db, &tables, 1).await;
    patch_pmds("shop", r#"{"spec":{"placement":{"mode":"perTable"}}}"#);
    wait_for(
        "3 tables running on their syncs again",
        LONG,
        tables_running(3),
    )
    .await;
    wait_for("the pooled worker gone", LONG, || {
        list("deployment", NS, "paimonsync.io/sync=shop--pool-0")
            .is_empty()
            .then_some(())
    })
    .await;
    change_and_check(&wh, db, &tables, 2).await;
    let rows = db.count("orders_a_rt").await;

    kubectl(&[
        "delete",
        "pmds",
        "shop",
        "-n",
        NS,
        "--wait=true",
        "--timeout=120s",
    ]);
    wait_for("the tables' syncs and pods gone", LONG, || {
        (list("pms", NS, "paimonsync.io/database-sync=shop").is_empty()
            && list("pod", NS, "paimonsync.io/sync=shop--tables").is_empty())
        .then_some(())
    })
    .await;
    assert_eq!(db.count("orders_a_rt").await, rows, "the MySQL tables stay");
    // Deleted with their checkpoints: each table's workers, at their stop, removed its Paimon
    // consumer (snapshots expire again) and its claim of the MySQL table (a sync of another
    // name may write it).
    nothing_left_outside_the_cluster("shop", db, &tables, &["_paimon_sync_targets"]).await;
    let skipped = pms_tests::kube::events(NS, "reason=ReleaseSkipped", "message");
    assert!(skipped.trim().is_empty(), "a release skipped: {skipped}");
}

/// `placement: pooled` on real pods: 200 tables written by Paimon Java (and one whose MySQL
/// table has another key, refused) on 2 worker pods, exactly-once. A worker pod is killed while
/// the tables start, changes land while a third worker is added and again after it is removed,
/// a table is created and one dropped; every table ends equal to its reference read, with no
/// `PaimonMysqlSync` or per-table Deployment made, and the refused table stops no other. Then
/// two tables' overrides ask for a rebuild, a savepoint and a verify: each runs on the table's
/// own sync, and the tables come back to the pool when the overrides go.
async fn a_pooled_database_sync_of_many_tables(db: &TestDb) {
    const TABLES: usize = 200;
    const ROWS: i64 = 20;
    let wh = Database::new("lake");
    let shape = || orders_create(json!({"bucket": "1", "changelog-producer": "input"}), false);
    let names: Vec<String> = (0..TABLES).map(|i| format!("t{i:03}")).collect();
    let mut specs: Vec<(&str, Json, Vec<Json>)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), shape(), vec![generate(1, ROWS, "+I", i as i64)]))
        .collect();
    specs.push(("t_bad", shape(), vec![generate(1, 5, "+I", 7)]));
    let created = Instant::now();
    let mut tables = wh.create_tables(specs);
    println!(
        "figure: Paimon Java wrote {} tables in {:.1} s",
        tables.len(),
        created.elapsed().as_secs_f64()
    );
    open_warehouse(wh.warehouse());
    db.exec("CREATE TABLE t_bad_rt (other_id INT PRIMARY KEY)")
        .await;
    let warehouse = wh.warehouse().display().to_string();
    let started = Instant::now();
    apply_ok(
        &json!({
            "apiVersion": "paimonsync.io/v1alpha1",
            "kind": "PaimonMysqlDatabaseSync",
            "metadata": {"name": "lake", "namespace": NS},
            "spec": {
                "tables": {"pattern": "t.*"},
                "discoveryInterval": "2s",
                "placement": {"mode": "pooled", "workers": 2, "maxFullReads": 4},
                "template": {
                    "source": {"warehouse": warehouse, "database": "lake", "table": "{table}", "pollInterval": "500ms"},
                    "sink": {
                        "url": format!("mysql://{NODE_IP}:{}/{}", db.port, db.name),
                        "credentialsSecretRef": {"name": "mysql-writer"},
                        "table": "{table}_rt",
                        "createTable": true,
                        "delivery": "exactly-once",
                    },
                    "workerPod": {
                        "volumes": [{"name": "warehouse", "hostPath": {"path": warehouse, "type": "Directory"}}],
                        "volumeMounts": [{"name": "warehouse", "mountPath": warehouse}],
                    },
                },
            },
        })
        .to_string(),
    );
    let pool = || get("pmds", "lake", NS).map(|p| p["status"].clone());
    let following = |n: u64, workers: u64| {
        move || {
            let s = pool()?;
            let p = &s["pool"];
            (p["following"] == n && p["workersReporting"] == workers && p["workers"] == workers)
                .then_some(s)
        }
    };
    let s = wait_for(
        "200 tables following on 2 workers",
        Duration::from_secs(300),
        following(200, 2),
    )
    .await;
    println!(
        "figure: kubectl apply of a pooled 200-table database sync (2 workers) → every table following: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let bad = s["tables"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["table"] == "t_bad").cloned())
        .unwrap_or_else(|| panic!("the refused table is listed: {s}"));
    assert_eq!(bad["phase"], "Failed", "{bad}");
    assert_eq!(s["pool"]["failed"], 1, "{s}");
    assert_eq!(s["phase"], "Degraded", "{s}");
    assert!(
        list("pms", NS, "paimonsync.io/database-sync=lake").is_empty(),
        "no PaimonMysqlSync per table"
    );
    // The plugin on the database sync: its pool workers' logs, and a report of it.
    let logs = pms_ok(&["logs", "lake", "-n", NS, "--tail", "5"]);
    assert!(logs.contains("==> pod lake--pool-0"), "{logs}");
    let report: Json =
        serde_yaml::from_str(&pms_ok(&["report", "lake", "-n", NS])).expect("the report is YAML");
    assert_eq!(report["databaseSync"]["metadata"]["name"], "lake");
    assert!(
        report["logs"].as_object().is_some_and(|l| l.len() >= 3),
        "the discovery's and both pool workers' logs: {report}"
    );

    // Changes committed, and at once a worker pod killed (no grace): its tables resume from
    // their progress rows on the pod that replaces it, each change applied once.
    commit_to_every(&wh, &tables, 3, 100);
    let killed = list("pod", NS, "paimonsync.io/sync=lake--pool-0");
    kubectl(&[
        "delete",
        "pod",
        "-n",
        NS,
        "-l",
        "paimonsync.io/sync=lake--pool-0",
        "--grace-period=0",
        "--force",
    ]);
    wait_for("a new pod for worker 0", LONG, || {
        let now = list("pod", NS, "paimonsync.io/sync=lake--pool-0");
        now.iter()
            .any(|p| {
                !killed
                    .iter()
                    .any(|k| k["metadata"]["name"] == p["metadata"]["name"])
            })
            .then_some(())
    })
    .await;
    pooled_tables_synced(&wh, db, &tables).await;
    // Its rows are in MySQL before its report says so: wait for the report, or the next step
    // would read the restarted worker's tables as still starting.
    wait_for(
        "200 tables following after the kill",
        LONG,
        following(200, 2),
    )
    .await;
    let deployments = list("deployment", NS, "paimonsync.io/database-sync=lake");
    assert_eq!(
        deployments.len(),
        2,
        "one Deployment per worker: {deployments:?}"
    );
    let connections = db
        .query_strings(
            "SELECT COUNT(*) FROM information_schema.processlist WHERE user = 'cluster_writer'",
        )
        .await;
    println!(
        "figure: pooled, 200 tables on 2 workers: {} MySQL connections",
        connections[0][0].as_deref().unwrap_or("?")
    );

    // Changes while a third worker is added whose pod can't be scheduled (the node cordoned):
    // make before break, so every table keeps running where it is and none is assigned to the
    // new worker until its pod runs. Then the tables that move stop at a commit on the worker
    // they leave and resume from it on the new one.
    commit_to_every(&wh, &tables, 5, 200);
    let node = kubectl(&["get", "nodes", "-o", "jsonpath={.items[0].metadata.name}"]);
    kubectl(&["cordon", &node]);
    patch_pmds("lake", r#"{"spec":{"placement":{"workers":3}}}"#);
    wait_for("worker 2's pod Pending", LONG, || {
        list("pod", NS, "paimonsync.io/sync=lake--pool-2")
            .iter()
            .any(|p| p["status"]["phase"] == "Pending")
            .then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let assignment: Json = get("configmap", "lake--pool", NS)
        .and_then(|cm| serde_json::from_str(cm["data"]["report.json"].as_str()?).ok())
        .expect("the assignment ConfigMap");
    let to_worker_2 = assignment["tables"]
        .as_object()
        .map_or(0, |t| t.values().filter(|w| **w == 2).count());
    assert_eq!(
        to_worker_2, 0,
        "no table moves to a worker whose pod is Pending: {assignment}"
    );
    let s = pool().expect("the database sync's status");
    assert_eq!(
        s["pool"]["following"], 200,
        "every table keeps running: {s}"
    );
    kubectl(&["uncordon", &node]);
    wait_for("200 tables following on 3 workers", LONG, following(200, 3)).await;
    pooled_tables_synced(&wh, db, &tables).await;

    // A table created and one dropped, then back to 2 workers, with more changes.
    let added = Instant::now();
    let new = wh.create_tables(vec![("t200", shape(), vec![generate(1, ROWS, "+I", 200)])]);
    open_warehouse(wh.warehouse());
    wh.drop_table("t005");
    tables.retain(|t| t.name != "t005");
    tables.extend(new);
    let deadline = Instant::now() + LONG;
    while !table_exists(db, "t200_rt").await {
        assert!(Instant::now() < deadline, "t200_rt was not created");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    wait_mysql(
        db,
        "t200",
        &format!("SELECT COUNT(*) = {ROWS} FROM t200_rt"),
    )
    .await;
    println!(
        "figure: pooled: a new Paimon table → its rows in MySQL: {:.1} s",
        added.elapsed().as_secs_f64()
    );
    commit_to_every(&wh, &tables, 11, 300);
    patch_pmds("lake", r#"{"spec":{"placement":{"workers":2}}}"#);
    wait_for(
        "200 tables following on 2 workers again",
        LONG,
        following(200, 2),
    )
    .await;
    // Everything of it: its Deployment, then its RBAC, config, report and Service.
    wait_for("worker 2 removed", LONG, || {
        [
            "deployment",
            "serviceaccount",
            "role",
            "rolebinding",
            "configmap",
            "service",
        ]
        .iter()
        .all(|kind| list(kind, NS, "paimonsync.io/sync=lake--pool-2").is_empty())
        .then_some(())
    })
    .await;
    pooled_tables_synced(&wh, db, &tables).await;
    assert_eq!(
        db.count("t005_rt").await,
        ROWS,
        "a dropped table's MySQL table stays"
    );

    // Per-table operations: t010 asks for a rebuild, t020 for a savepoint and a verify. Each
    // leaves the pool for a PaimonMysqlSync of its own (once its worker stopped it), where the
    // operation runs, while changes land; taking the overrides out brings them back.
    commit_to_every(&wh, &tables, 7, 400);
    patch_pmds(
        "lake",
        r#"{"spec":{"overrides":{"t010":{"rebuild":{"trigger":"r1"}},"t020":{"savepoint":{"trigger":"s1"},"verify":{"interval":"1h"}}}}}"#,
    );
    let moved = Instant::now();
    let rebuilt = wait_for("t010 rebuilt on its own sync", LONG, || {
        let s = get("pms", "lake-t010", NS)?["status"].clone();
        (s["rebuild"]["trigger"] == "r1"
            && s["rebuild"]["phase"] == "Done"
            && s["phase"] == "Running")
            .then_some(s)
    })
    .await;
    println!(
        "figure: pooled: a table's rebuild trigger → rebuilt on its own sync and running: {:.1} s",
        moved.elapsed().as_secs_f64()
    );
    assert!(rebuilt["rebuild"]["snapshotId"].is_i64(), "{rebuilt}");
    wait_for("t020's savepoint Completed", LONG, || {
        list("pmssp", NS, "app.kubernetes.io/managed-by=pms-operator")
            .iter()
            .any(|sp| sp["spec"]["syncName"] == "lake-t020" && sp["status"]["state"] == "Completed")
            .then_some(())
    })
    .await;
    let verified = wait_for("t020 verified", LONG, || {
        let s = get("pms", "lake-t020", NS)?["status"].clone();
        s["verify"]["result"].is_object().then_some(s)
    })
    .await;
    assert_eq!(verified["verify"]["result"]["missing"], 0, "{verified}");
    let s = wait_for("2 tables on own syncs, 198 following", LONG, || {
        let s = pool()?;
        // t_bad too: the overrides restarted the pooled workers, and until its worker
        // reports it refused again it is starting.
        (s["pool"]["ownSyncs"] == 2 && s["pool"]["following"] == 198 && s["pool"]["failed"] == 1)
            .then_some(s)
    })
    .await;
    assert_eq!(s["phase"], "Degraded", "t_bad still refused: {s}");
    commit_to_every(&wh, &tables, 9, 500);
    pooled_tables_synced(&wh, db, &tables).await;
    patch_pmds("lake", r#"{"spec":{"overrides":null}}"#);
    let back = Instant::now();
    wait_for("t010 and t020 back on the pooled workers", LONG, || {
        let s = pool()?;
        (s["pool"]["ownSyncs"] == 0
            && s["pool"]["following"] == 200
            && list("pms", NS, "paimonsync.io/database-sync=lake").is_empty())
        .then_some(())
    })
    .await;
    println!(
        "figure: pooled: overrides taken out → both tables back on the pooled workers: {:.1} s",
        back.elapsed().as_secs_f64()
    );
    commit_to_every(&wh, &tables, 10, 600);
    pooled_tables_synced(&wh, db, &tables).await;

    kubectl(&[
        "delete",
        "pmds",
        "lake",
        "-n",
        NS,
        "--wait=true",
        "--timeout=120s",
    ]);
    wait_for("the pooled workers gone", LONG, || {
        list("deployment", NS, "paimonsync.io/database-sync=lake")
            .is_empty()
            .then_some(())
    })
    .await;
    // The pooled workers, at their stop, made every table forget: its progress row is its
    // checkpoint here (ConfigMap storage), so it goes too.
    let progress = ["_paimon_sync_targets", "_paimon_sync_progress"];
    nothing_left_outside_the_cluster("lake", db, &tables, &progress).await;
    let skipped = pms_tests::kube::events(NS, "reason=ReleaseSkipped", "message");
    assert!(skipped.trim().is_empty(), "a release skipped: {skipped}");
}

/// After database sync `parent` was deleted with its checkpoints: no Paimon consumer of its
/// `tables` and no row of theirs in the bookkeeping tables `kept_in` is left.
async fn nothing_left_outside_the_cluster(
    parent: &str,
    db: &TestDb,
    tables: &[Table],
    kept_in: &[&str],
) {
    let names: Vec<String> = tables
        .iter()
        .map(|t| format!("'{NS}_{}'", pms_crds::table_sync_name(parent, &t.name)))
        .collect();
    for what in kept_in {
        let rows = |condition: String| {
            let sql = format!(
                "SELECT COALESCE(GROUP_CONCAT(sync_name), '') FROM {what} WHERE {condition}"
            );
            async move {
                db.query_strings(&sql).await[0][0]
                    .clone()
                    .unwrap_or_default()
            }
        };
        let left = rows(format!("sync_name IN ({})", names.join(", "))).await;
        assert_eq!(left, "", "{parent}: rows of {what} left after the delete");
        // Of tables dropped meanwhile, or a rebuild's generation: not asserted, shown.
        let others = rows(format!("sync_name LIKE '{NS}\\_{parent}-%'")).await;
        println!("figure: {parent}: rows of {what} left of syncs no longer in it: [{others}]");
    }
    for t in tables {
        let consumers: Vec<String> = std::fs::read_dir(t.table_dir().join("consumer"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            !consumers.iter().any(|c| c.starts_with("consumer-pms-")),
            "{}: the sync's consumer left: {consumers:?}",
            t.name
        );
    }
}

/// Commits updates and deletes to every table; then each equals its reference read.
async fn change_and_check(wh: &Database, db: &TestDb, tables: &[Table], salt: i64) {
    wh.commit(
        tables
            .iter()
            .map(|t| {
                (
                    t,
                    vec![
                        generate(2 + salt, 3, "+U", salt),
                        generate(20 + salt, 2, "-D", 0),
                    ],
                )
            })
            .collect(),
    );
    let live: Vec<&Table> = tables.iter().collect();
    assert_all_synced(wh, db, &live, || logs_of("paimonsync.io/component=worker")).await;
}

/// Commits an update, a delete and an insert to every `step`-th table but the refused one.
fn commit_to_every(wh: &Database, tables: &[Table], step: usize, salt: i64) {
    let changed: Vec<&Table> = tables
        .iter()
        .filter(|t| t.name != "t_bad")
        .step_by(step)
        .collect();
    let at = 2 + salt % 7;
    wh.commit(
        changed
            .iter()
            .map(|t| {
                let steps = vec![
                    generate(at, 4, "+U", salt),
                    generate(at + 10, 2, "-D", 0),
                    generate(30 + salt % 11, 2, "+I", salt),
                ];
                (*t, steps)
            })
            .collect(),
    );
}

/// Every table but the refused one equal to its reference read.
async fn pooled_tables_synced(wh: &Database, db: &TestDb, tables: &[Table]) {
    let live: Vec<&Table> = tables.iter().filter(|t| t.name != "t_bad").collect();
    assert_all_synced(wh, db, &live, || logs_of("paimonsync.io/component=worker")).await;
}

/// The reasons of the events a phase change publishes.
const PHASES: &[&str] = &["Degraded", "Pending", "Running", "Suspended"];

/// How many events with one of `reasons` the sync has had, repeats counted.
fn events(reasons: &[&str]) -> u64 {
    let events = kubectl(&[
        "get",
        "events",
        "-n",
        NS,
        "--field-selector",
        &format!("involvedObject.name={SYNC}"),
        "-o",
        "json",
    ]);
    let events: Json = serde_json::from_str(&events).unwrap();
    let items = events["items"].as_array().cloned().unwrap_or_default();
    items
        .iter()
        .filter(|e| reasons.iter().any(|r| e["reason"] == *r))
        .map(|e| e["count"].as_u64().unwrap_or(1).max(1))
        .sum()
}

/// Whether the installed PaimonMysqlSync CRD's schema has `spec.workerPod`.
fn crd_knows_worker_pod() -> bool {
    let crd = get("crd", "paimonmysqlsyncs.paimonsync.io", "default").expect("the CRD");
    !crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["workerPod"]
        .is_null()
}

/// The operator pod holding the Lease (none between two holders).
fn operator_leader() -> Option<String> {
    let lease = get("lease", "pms-paimon-mysql-sync", "pms-system").expect("the operator's Lease");
    lease["spec"]["holderIdentity"].as_str().map(str::to_string)
}

/// The host PID of the operator process of `pod` (its container's env names the pod).
fn operator_pid(pod: &str) -> u32 {
    let wanted = format!("POD_NAME={pod}");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            comm.trim() == "pms-operator"
                && env.split(|b| *b == 0).any(|kv| kv == wanted.as_bytes())
        })
        .unwrap_or_else(|| panic!("no pms-operator process of pod {pod}"))
}

fn signal(pid: u32, name: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name} {pid}");
}

/// `scripts/k8s-cluster.sh restart-kubelet` on the test's cluster.
fn restart_kubelet() {
    let dir = std::env::var("PMS_TEST_CLUSTER_DIR")
        .expect("PMS_TEST_CLUSTER_DIR (set by scripts/with-k8s-cluster.sh)");
    let status = std::process::Command::new(repo_root().join("scripts/k8s-cluster.sh"))
        .args(["restart-kubelet", &dir])
        .status()
        .unwrap();
    assert!(status.success(), "restart-kubelet");
}

/// Each worker pod with its containers' ids and restart counts.
fn containers_by_pod() -> Vec<(String, String)> {
    let mut pods: Vec<(String, String)> = worker_pods_now()
        .iter()
        .map(|p| {
            let c = &p["status"]["containerStatuses"][0];
            (
                p["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                format!("{} restarts={}", c["containerID"], c["restartCount"]),
            )
        })
        .collect();
    pods.sort();
    pods
}

/// The pod's containers that ended with a non-zero exit code, as "pod: exit code (reason)".
fn failed_containers(pod: &Json) -> Vec<String> {
    let name = pod["metadata"]["name"].as_str().unwrap_or_default();
    let statuses = pod["status"]["containerStatuses"].as_array();
    statuses
        .into_iter()
        .flatten()
        .filter_map(|c| {
            let t = &c["state"]["terminated"];
            let code = t["exitCode"].as_i64()?;
            (code != 0).then(|| format!("{name}: exit {code} ({})", t["reason"]))
        })
        .collect()
}

/// The sync's worker pods that exist now, Ready or not.
fn worker_pods_now() -> Vec<Json> {
    list(
        "pod",
        NS,
        &format!("{SELECTOR},paimonsync.io/component=worker"),
    )
}
