//! The operator's S3 checkpoint poller against a real S3 server (`scripts/with-s3.sh`),
//! through a proxy that counts its HTTP requests: an idle sync costs one LIST per poll, a
//! checkpoint is read only when its version changed, the older (pre-namespace) name is listed
//! only until nothing is left under it, and a change the operator decides by starts a reconcile.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use futures::{FutureExt, Stream, StreamExt};
use pms_crds::contract::{checkpoint_object, external_name, Checkpoint, Position, ReadPoint, Slot};
use pms_operator::reconcile::store::CheckpointStore;
use pms_operator::s3_watch::S3Watch;
use pms_runtime::s3::{S3Prefix, S3Target};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const NS: &str = "poller";
const SYNC: &str = "orders";

/// A TCP proxy to `upstream` counting the HTTP requests sent through it.
async fn counting_proxy(upstream: String) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the proxy");
    let port = listener.local_addr().expect("proxy address").port();
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = requests.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let mut server = TcpStream::connect(&upstream)
                .await
                .expect("reach the S3 server");
            let counted = counted.clone();
            tokio::spawn(async move {
                let (mut cr, mut cw) = client.split();
                let (mut sr, mut sw) = server.split();
                let up = async {
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        let n = match cr.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        let text = String::from_utf8_lossy(&buf[..n]);
                        counted.fetch_add(text.matches(" HTTP/1.1\r\n").count(), Ordering::SeqCst);
                        if sw.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                    let _ = sw.shutdown().await;
                };
                let down = async {
                    let _ = tokio::io::copy(&mut sr, &mut cw).await;
                };
                tokio::join!(up, down);
            });
        }
    });
    (format!("http://127.0.0.1:{port}"), requests)
}

fn checkpoint(slot: u32, next_snapshot: i64) -> String {
    serde_json::to_string(&Checkpoint {
        sync: SYNC.into(),
        slot: Slot::new(slot, 2).expect("slot"),
        point: ReadPoint::Changes {
            next_snapshot,
            at: Position::START,
        },
        epoch: 1,
        updated: "2026-12-07T10:00:00Z".into(),
        latest_snapshot: Some(next_snapshot),
        rescaled_from: None,
        paused_for: None,
        belongs_to: None,
        sweep: false,
        full_read: None,
    })
    .expect("checkpoint JSON")
}

/// Whether a reconcile was started (without waiting: a poll sends before it returns).
fn triggered(triggers: &mut (impl Stream + Unpin)) -> bool {
    triggers.next().now_or_never().flatten().is_some()
}

#[tokio::test]
async fn an_idle_sync_costs_one_list_per_poll_and_a_change_starts_a_reconcile() {
    let endpoint = std::env::var("PMS_TEST_S3_ENDPOINT").unwrap_or_else(|_| {
        panic!(
            "PMS_TEST_S3_ENDPOINT is not set: this test needs a real S3 server (run it under \
             scripts/with-s3.sh, as `make test` does)"
        )
    });
    let upstream = endpoint
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let (proxied, requests) = counting_proxy(upstream).await;
    let target = |endpoint: &str| S3Target {
        bucket: "pms".into(),
        prefix: format!("poller-{}", std::process::id()),
        endpoint: Some(endpoint.to_string()),
        region: Some("us-east-1".into()),
        path_style: true,
        access_key_id: Some("pms-test".into()),
        secret_access_key: Some("pms-test-secret".into()),
        session_token: None,
    };
    // The test's own writes go around the proxy.
    let direct = S3Prefix::open(&target(&endpoint)).expect("open S3");
    let put = |name: String, body: String| {
        let direct = direct.clone();
        async move { direct.write(&name, body.into_bytes()).await.expect("put") }
    };
    let external = external_name(Some(NS), SYNC);
    put(checkpoint_object(&external, 0), checkpoint(0, 5)).await;
    // Slot 1 not moved to the external name yet: under the older, bare name.
    put(checkpoint_object(SYNC, 1), checkpoint(1, 5)).await;
    // Another sync's checkpoint under the same prefix is neither listed nor read.
    put(
        checkpoint_object(&external_name(Some(NS), "other"), 0),
        checkpoint(0, 9),
    )
    .await;

    let store = CheckpointStore::S3(S3Prefix::open(&target(&proxied)).expect("open S3"));
    let watch = S3Watch::new();
    let mut triggers = Box::pin(watch.triggers(Some(NS)));
    watch.saw(NS, SYNC, &store, &BTreeMap::new());
    let poll = |expected: usize, what: &'static str| {
        let (watch, requests) = (watch.clone(), requests.clone());
        async move {
            requests.store(0, Ordering::SeqCst);
            watch.poll_once().await;
            assert_eq!(
                requests.load(Ordering::SeqCst),
                expected,
                "requests of a poll: {what}"
            );
        }
    };

    poll(4, "first: both names listed, both checkpoints read").await;
    assert!(
        triggered(&mut triggers),
        "two checkpoints found: a reconcile"
    );
    poll(
        2,
        "idle, a slot still under the older name: two LISTs, no read",
    )
    .await;
    assert!(!triggered(&mut triggers), "nothing changed");

    // Slot 1 moves to the external name (as its worker does at its next checkpoint).
    put(checkpoint_object(&external, 1), checkpoint(1, 6)).await;
    direct
        .delete(&checkpoint_object(SYNC, 1))
        .await
        .expect("delete");
    poll(3, "the moved checkpoint read, the older name found empty").await;
    assert!(triggered(&mut triggers), "slot 1 went on");
    poll(1, "idle: one LIST").await;
    poll(1, "idle: one LIST").await;
    assert!(!triggered(&mut triggers), "nothing changed");

    // A checkpoint written again: read once; a change the operator decides by starts a reconcile.
    put(checkpoint_object(&external, 0), checkpoint(0, 7)).await;
    poll(2, "one LIST, the changed checkpoint read").await;
    assert!(triggered(&mut triggers), "slot 0 went on");
    poll(1, "idle again").await;
}
