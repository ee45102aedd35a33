//! S3, against a real S3-protocol server (versitygw, `scripts/with-s3.sh`): a Paimon warehouse
//! on S3 (written by Paimon Java, uploaded) read whole and then snapshot by snapshot, with the
//! consumer file written there; checkpoints on S3 resumed from, and a zombie writer of a slot
//! fenced by a conditional write; the S3 server stopped in the middle of a run and started again
//! (the worker retries its checkpoint, nothing is lost).

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use pms_tests::config::SyncConfigBuilder;
use pms_tests::mysql::TestDb;
use pms_tests::s3::{self, Server};
use serde_json::json;

fn run_once(cfg: &SyncConfig) -> std::process::Output {
    cfg.command(&["--once"]).envs(s3::env()).output().unwrap()
}

/// `checkpoint.s3` in the test bucket of `store`, under `prefix`.
fn checkpoint_settings(store: &Server, prefix: &str) -> serde_json::Value {
    let mut settings = store.settings();
    settings["bucket"] = json!(s3::BUCKET);
    settings["prefix"] = json!(prefix);
    settings
}

/// A continuous run, its log in `cfg.log()`.
fn spawn(cfg: &SyncConfig) -> std::process::Child {
    cfg.start(cfg.command(&[]).envs(s3::env()))
}

/// `--once`, which must go on from the last run (no full read).
fn run_on(cfg: &SyncConfig) {
    let out = run_once(cfg);
    assert!(out.status.success(), "{}", stderr(&out));
    let log = stderr(&out);
    assert!(
        !log.contains("full read of snapshot"),
        "went on from the last run: {log}"
    );
}

#[tokio::test]
async fn a_warehouse_on_s3_is_read_whole_then_by_snapshot_and_holds_the_consumer() {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 500, "+I", 0)]);
    let store = Server::shared();
    let prefix = format!("wh-{}", std::process::id());
    store.upload_dir(t.warehouse(), &prefix);
    let db = TestDb::new("s3_warehouse").await;
    db.exec(ORDERS_DDL).await;
    let warehouse = format!("s3://{}/{prefix}", s3::BUCKET);
    let cfg = SyncConfigBuilder::new(warehouse, &t.database, &t.name, &db.url())
        .source_s3(store.settings())
        .consumer_id("pms-s3-test")
        .build();
    let out = run_once(&cfg);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_synced(&t, &db, "orders", None).await;

    t.commits(vec![
        generate_step(1, 100, 3, "+U", 4),
        generate(401, 50, "-D", 0),
    ]);
    store.upload_dir(t.warehouse(), &prefix);
    run_on(&cfg);
    assert_synced(&t, &db, "orders", None).await;

    let consumer = format!(
        "{prefix}/{}.db/{}/consumer/consumer-pms-s3-test",
        t.database, t.name
    );
    let body = store.get(&consumer).expect("the consumer file on S3");
    assert!(
        body.contains(&format!("\"nextSnapshot\":{}", t.latest())),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_on_s3_resume_and_fence_a_zombie_writer() {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 300, "+I", 0)]);
    let db = TestDb::new("s3_checkpoint").await;
    db.exec(ORDERS_DDL).await;
    let store = Server::shared();
    let prefix = format!("cp-{}", std::process::id());
    let cfg = SyncConfig::builder(&t, &db)
        .checkpoint_s3(checkpoint_settings(&store, &prefix))
        .checkpoint_interval(Duration::ZERO)
        .build();
    let out = run_once(&cfg);
    assert!(out.status.success(), "{}", stderr(&out));
    let key = format!("{prefix}/{}.{}-checkpoint-0.json", t.database, t.name);
    let stored = store.get(&key).expect("the checkpoint on S3");
    assert!(
        stored.contains(&format!("\"snapshotId\": {}", t.latest())),
        "{stored}"
    );
    assert!(
        !cfg.checkpoint_path(0, 1).exists(),
        "no local checkpoint file"
    );

    t.commits(vec![generate(301, 40, "+I", 0)]);
    run_on(&cfg);
    assert_synced(&t, &db, "orders", None).await;

    // A zombie: another writer replaces the slot's checkpoint behind a running worker's back;
    // the worker's next (conditional) write is refused, and it stops instead of overwriting it.
    let mut worker = spawn(&cfg);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let newer = store
        .get(&key)
        .unwrap()
        .replace("\"epoch\": ", "\"epoch\": 1000");
    store.put(&key, &newer);
    t.commits(vec![generate(401, 10, "+I", 0)]);
    let status = wait_for_exit(&mut worker, Duration::from_secs(60), || {
        format!("the zombie must stop:\n{}", cfg.log())
    })
    .await;
    let log = cfg.log();
    assert!(!status.success(), "{log}");
    assert!(
        log.contains("another worker wrote this slot's checkpoint"),
        "{log}"
    );
    assert_eq!(
        store.get(&key).unwrap(),
        newer,
        "the newer checkpoint stays"
    );
    // `pms-worker reset` (as a pooled worker makes each table of a database sync deleted with
    // its checkpoints forget) removes the object.
    let out = cfg
        .subcommand("reset", &[])
        .envs(s3::env())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(store.get(&key).is_none(), "the checkpoint on S3 is gone");
}

/// The store goes away while a worker with S3 checkpoints runs and Paimon commits; when it is
/// back, the worker's retried checkpoint write goes through, and nothing is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_rides_out_an_s3_restart() {
    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 200, "+I", 0)]);
    let db = TestDb::new("s3_restart").await;
    db.exec(ORDERS_DDL).await;
    let store = Server::own();
    let cfg = SyncConfig::builder(&t, &db)
        .checkpoint_s3(checkpoint_settings(&store, ""))
        .checkpoint_interval(Duration::ZERO)
        .build();
    let mut worker = spawn(&cfg);
    let key = format!("{}.{}-checkpoint-0.json", t.database, t.name);
    let checkpointed = |snapshot: i64| {
        let store = &store;
        let key = &key;
        move || {
            store
                .get(key)
                .filter(|c| c.contains(&format!("\"snapshotId\": {snapshot}")))
                .map(|_| ())
        }
    };
    pms_tests::kube::wait_for(
        "the first checkpoint",
        Duration::from_secs(60),
        checkpointed(t.latest()),
    )
    .await;
    store.halt();
    t.commits(vec![
        generate_step(1, 50, 2, "+U", 8),
        generate(301, 30, "+I", 0),
    ]);
    tokio::time::sleep(Duration::from_secs(3)).await;
    store.resume();
    pms_tests::kube::wait_for(
        "the checkpoint after the restart",
        Duration::from_secs(90),
        checkpointed(t.latest()),
    )
    .await;
    assert!(stop_with_sigterm(&mut worker).await.success());
    let log = cfg.log();
    assert!(log.contains("S3 write failed; retrying"), "{log}");
    assert_synced(&t, &db, "orders", None).await;
}

/// Under the operator (`PMS_NAMESPACE`) the names outside the namespace carry it
/// (`<namespace>_<sync>`), so two namespaces' syncs of one name never share an S3 object, a
/// progress row or a Paimon consumer. A worker of this release finds what an earlier release
/// wrote under the bare name, goes on from it (no full read) and moves it.
#[tokio::test]
async fn a_namespaced_worker_moves_the_names_of_an_earlier_release() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 100, "+I", 0)]);
    let db = TestDb::new("s3_names").await;
    db.exec(ORDERS_DDL).await;
    let store = Server::shared();
    let prefix = format!("names-{}", std::process::id());
    let cfg = SyncConfig::builder(&t, &db)
        .checkpoint_s3(checkpoint_settings(&store, &prefix))
        .delivery(Delivery::ExactlyOnce)
        .build();
    let sync = format!("{}.{}", t.database, t.name);
    let consumers = || t.consumer_files();
    // As an earlier release named them: the bare sync name.
    let out = run_once(&cfg);
    assert!(out.status.success(), "{}", stderr(&out));
    let bare_key = format!("{prefix}/{sync}-checkpoint-0.json");
    assert!(store.get(&bare_key).is_some());
    assert_eq!(
        consumers(),
        [format!("consumer-pms-{}-{}", t.database, t.name)]
    );

    t.commits(vec![
        generate_step(1, 30, 3, "+U", 1),
        generate(500, 10, "+I", 2),
    ]);
    let out = cfg
        .command(&["--once"])
        .envs(s3::env())
        .env("PMS_NAMESPACE", "team-a")
        .output()
        .unwrap();
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(!log.contains("full read of snapshot"), "went on: {log}");
    let key = format!("{prefix}/team-a_{sync}-checkpoint-0.json");
    let moved = store
        .get(&key)
        .expect("the checkpoint under the external name");
    assert!(
        moved.contains(&format!("\"snapshotId\": {}", t.latest())),
        "{moved}"
    );
    assert!(
        store.get(&bare_key).is_none(),
        "the bare-named object is gone"
    );
    let rows = db
        .query_strings("SELECT sync_name FROM _paimon_sync_progress")
        .await;
    assert_eq!(rows, [[Some(format!("team-a_{sync}"))]]);
    assert_eq!(
        consumers(),
        [format!("consumer-pms-team-a_{}-{}", t.database, t.name)]
    );
    assert_synced(&t, &db, "orders", None).await;
}

/// A container credentials endpoint on loopback, as EKS Pod Identity's agent (and ECS) serve one:
/// it answers `GET` with keys only when the `Authorization` header is the token the pod's token
/// file holds. Its keys are the test server's, with an empty session token (versitygw issues none).
/// Returns the URL and the `Authorization` values it was sent.
fn container_credentials_endpoint(token: &str) -> (String, Arc<Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the endpoint");
    let url = format!(
        "http://{}/v1/credentials",
        listener.local_addr().expect("its address")
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (seen_by_server, token) = (seen.clone(), token.to_string());
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let mut reader = BufReader::new(conn.try_clone().expect("clone the connection"));
            let mut authorization = String::new();
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                if let Some((name, value)) = line.split_once(':') {
                    if name.eq_ignore_ascii_case("authorization") {
                        authorization = value.trim().to_string();
                    }
                }
                line.clear();
            }
            let (status, body) = if authorization == token {
                let keys = json!({
                    "AccessKeyId": s3::ACCESS_KEY,
                    "SecretAccessKey": s3::SECRET_KEY,
                    "Token": "",
                    "Expiration": "2099-01-01T00:00:00Z",
                });
                ("200 OK", keys.to_string())
            } else {
                ("403 Forbidden", "{\"Message\": \"bad token\"}".to_string())
            };
            seen_by_server.lock().unwrap().push(authorization);
            let mut conn = conn;
            let _ = write!(
                conn,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, seen)
}

/// Without keys in its environment the worker takes the AWS credential chain, for the warehouse
/// and the checkpoints alike. Its container-credentials step is what EKS Pod Identity (and ECS)
/// serve: `AWS_CONTAINER_CREDENTIALS_FULL_URI` and the token file
/// `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` the pod is given. With them the sync runs; with a
/// token the endpoint refuses, it stops before anything is written, naming the endpoint.
#[tokio::test]
async fn without_keys_the_container_credentials_of_pod_identity_are_used() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 50, "+I", 0)]);
    let store = Server::shared();
    let prefix = format!("pod-identity-{}", std::process::id());
    store.upload_dir(t.warehouse(), &prefix);
    let db = TestDb::new("s3_pod_identity").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfigBuilder::new(
        format!("s3://{}/{prefix}", s3::BUCKET),
        &t.database,
        &t.name,
        &db.url(),
    )
    .source_s3(store.settings())
    .checkpoint_s3(checkpoint_settings(&store, &format!("{prefix}-cp")))
    .build();
    let (url, seen) = container_credentials_endpoint("pod-identity-token");
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("eks-pod-identity-token");
    let run = |token: &str| {
        std::fs::write(&token_file, token).unwrap();
        cfg.command(&["--once"])
            .env_remove("AWS_ACCESS_KEY_ID")
            .env_remove("AWS_SECRET_ACCESS_KEY")
            .env_remove("AWS_SESSION_TOKEN")
            .env("AWS_CONFIG_FILE", dir.path().join("no-config"))
            .env(
                "AWS_SHARED_CREDENTIALS_FILE",
                dir.path().join("no-credentials"),
            )
            .env("AWS_CONTAINER_CREDENTIALS_FULL_URI", &url)
            .env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", &token_file)
            .output()
            .unwrap()
    };
    let refused = run("a-token-the-agent-never-issued");
    let log = stderr(&refused);
    assert!(!refused.status.success(), "a refused token ran: {log}");
    assert!(log.contains(&url), "the error names the endpoint: {log}");
    assert_eq!(db.count("orders").await, 0, "nothing written");
    let out = run("pod-identity-token");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_synced(&t, &db, "orders", None).await;
    assert!(
        store
            .get(&format!(
                "{prefix}-cp/{}.{}-checkpoint-0.json",
                t.database, t.name
            ))
            .is_some(),
        "the checkpoint was written with the same credentials"
    );
    let seen = seen.lock().unwrap();
    assert!(seen.contains(&"pod-identity-token".to_string()), "{seen:?}");
}

/// Temporary keys (an STS session, IRSA's or Pod Identity's exchange) are three values: a token
/// the client does not send is a request S3 refuses, and one it sends is checked. versitygw
/// checks it too: a token it never issued is refused (`InvalidToken`), which proves the worker sends
/// `AWS_SESSION_TOKEN` with its warehouse reads and with its checkpoint writes alike.
#[tokio::test]
async fn temporary_keys_send_their_session_token() {
    let t = orders_table(json!({"bucket": "1", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 50, "+I", 0)]);
    let store = Server::shared();
    let prefix = format!("token-{}", std::process::id());
    store.upload_dir(t.warehouse(), &prefix);
    let db = TestDb::new("s3_session_token").await;
    db.exec(ORDERS_DDL).await;
    let on_s3 = SyncConfigBuilder::new(
        format!("s3://{}/{prefix}", s3::BUCKET),
        &t.database,
        &t.name,
        &db.url(),
    )
    .source_s3(store.settings())
    .build();
    let checkpoints_on_s3 = SyncConfig::builder(&t, &db)
        .checkpoint_s3(checkpoint_settings(&store, &format!("{prefix}-cp")))
        .build();
    // The first request of each is a HEAD: no body, only its status (400) says it was refused.
    for (what, cfg) in [("warehouse", &on_s3), ("checkpoint", &checkpoints_on_s3)] {
        let out = cfg
            .command(&["--once"])
            .envs(s3::env())
            .env("AWS_SESSION_TOKEN", "a-token-s3-never-issued")
            .output()
            .unwrap();
        let log = stderr(&out);
        assert!(
            !out.status.success(),
            "{what}: the token was not sent: {log}"
        );
        assert!(log.contains("status: 400"), "{what}: {log}");
        assert_eq!(db.count("orders").await, 0, "{what}: nothing written");
    }
    // The same keys without the token: read.
    let out = run_once(&on_s3);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_synced(&t, &db, "orders", None).await;
}
