//! Fencing a leader that was frozen. The Lease says who may reconcile, but a leader paused
//! past its Lease (SIGSTOP, a stalled node, a long GC-like stall) resumes with reconciles in
//! flight before its lease task notices another replica took over. So no write reaches the API
//! server unless this replica is known to hold the Lease at that moment: every write request
//! of the operator's client passes the [`FenceLayer`], which lets it through while the Lease
//! as last read is still valid (its renew time plus its duration, less a margin, by both the
//! wall and the monotonic clock) and reads the Lease again otherwise. A status write is also
//! conditional on the resource version the reconcile read: a stale leader's writes are
//! refused, not applied.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use http::{Method, Request};
use k8s_openapi::api::coordination::v1::Lease;
use kube::{Api, Client};
use tokio::sync::Notify;
use tower::buffer::Buffer;
use tower::{BoxError, Layer, Service};

use crate::error::{Error, Result, Verb};

/// Taken off the Lease's validity: clock skew between this pod and the API server, and the
/// time a write takes to reach it.
const MARGIN: Duration = Duration::from_secs(3);

#[derive(Clone)]
pub struct Leadership {
    leases: Api<Lease>,
    name: String,
    identity: String,
    /// Until when the Lease, as last read, is this replica's.
    valid: Arc<Mutex<Option<Valid>>>,
    /// Woken when a check finds another holder: the process stops (and restarts as standby).
    pub lost: Arc<Notify>,
}

#[derive(Clone, Copy, Debug)]
struct Valid {
    wall: SystemTime,
    monotonic: Instant,
}

impl Leadership {
    /// `client` must not be fenced itself (the Lease is read through it).
    pub fn new(client: Client, namespace: &str, name: &str, identity: &str) -> Self {
        Self {
            leases: Api::namespaced(client, namespace),
            name: name.into(),
            identity: identity.into(),
            valid: Arc::new(Mutex::new(None)),
            lost: Arc::new(Notify::new()),
        }
    }

    /// Ok while this replica holds the Lease: known from the last read while that is still
    /// valid, else read from the API server (not a cache).
    pub async fn check(&self) -> Result<()> {
        let known = *self.valid.lock().unwrap_or_else(|e| e.into_inner());
        if known.is_some_and(|v| SystemTime::now() < v.wall && Instant::now() < v.monotonic) {
            return Ok(());
        }
        let lease = self.leases.get(&self.name).await.map_err(|e| {
            Error::api::<Lease>(
                Verb::Get,
                self.leases.namespace().unwrap_or_default(),
                &self.name,
                e,
            )
        })?;
        let left = held_for(&lease, &self.identity, SystemTime::now());
        let valid = left.as_ref().ok().map(|left| Valid {
            wall: SystemTime::now() + *left,
            monotonic: Instant::now() + *left,
        });
        *self.valid.lock().unwrap_or_else(|e| e.into_inner()) = valid;
        if let Err(Error::NotLeader { .. }) = &left {
            self.lost.notify_one();
        }
        left.map(drop)
    }
}

/// How much longer `lease` is `identity`'s, less [`MARGIN`], at `now`. Another holder is
/// [`Error::NotLeader`]; a Lease this replica holds but has not renewed in time is an error
/// too (another replica may take it any moment).
fn held_for(lease: &Lease, identity: &str, now: SystemTime) -> Result<Duration> {
    let spec = lease.spec.clone().unwrap_or_default();
    if spec.holder_identity.as_deref() != Some(identity) {
        return Err(Error::NotLeader {
            holder: spec.holder_identity.unwrap_or_else(|| "nobody".into()),
        });
    }
    let renewed = spec
        .renew_time
        .map(|t| SystemTime::from(t.0))
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let duration = Duration::from_secs(spec.lease_duration_seconds.unwrap_or(0).max(0) as u64);
    let until = renewed + duration;
    match until.duration_since(now + MARGIN) {
        Ok(left) if !left.is_zero() => Ok(left),
        _ => Err(Error::Waiting(
            "this replica's Lease is about to expire unrenewed: not writing until it is renewed"
                .into(),
        )),
    }
}

/// Whether a request writes (and so must be fenced). The Lease's own renewals are not: they
/// are how the lease is kept.
fn writes(method: &Method, path: &str) -> bool {
    let reads = [Method::GET, Method::HEAD, Method::OPTIONS];
    !reads.contains(method) && !path.contains("/leases/") && !path.ends_with("/leases")
}

/// The layer of the operator's client that fences every write with [`Leadership::check`].
#[derive(Clone)]
pub struct FenceLayer(pub Leadership);

impl<S> Layer<S> for FenceLayer
where
    S: Service<Request<kube::client::Body>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError> + Send + Sync,
    S::Response: Send + 'static,
{
    type Service = Fenced<S>;

    fn layer(&self, inner: S) -> Fenced<S> {
        Fenced {
            // A buffer: the request is sent from a future that outlives `call`'s borrow.
            inner: Buffer::new(inner, 1024),
            leadership: self.0.clone(),
        }
    }
}

/// See [`FenceLayer`].
pub struct Fenced<S: Service<Request<kube::client::Body>>> {
    inner: Buffer<Request<kube::client::Body>, S::Future>,
    leadership: Leadership,
}

impl<S> Service<Request<kube::client::Body>> for Fenced<S>
where
    S: Service<Request<kube::client::Body>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError> + Send + Sync,
    S::Response: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = std::result::Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<std::result::Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<kube::client::Body>) -> Self::Future {
        // The clone takes the readiness `poll_ready` reserved.
        let ready = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, ready);
        let fence = writes(request.method(), request.uri().path()).then(|| self.leadership.clone());
        Box::pin(async move {
            if let Some(leadership) = fence {
                leadership.check().await.map_err(BoxError::from)?;
            }
            inner.call(request).await
        })
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::coordination::v1::LeaseSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

    use super::*;

    fn lease(holder: &str, renewed: SystemTime, seconds: i32) -> Lease {
        Lease {
            spec: Some(LeaseSpec {
                holder_identity: Some(holder.into()),
                renew_time: Some(MicroTime(renewed.try_into().expect("a timestamp"))),
                lease_duration_seconds: Some(seconds),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_lease_is_held_until_its_renew_time_plus_its_duration_less_a_margin() {
        let now = SystemTime::now();
        let renewed = now - Duration::from_secs(5);
        let left = held_for(&lease("me", renewed, 15), "me", now).expect("held");
        assert_eq!(left, Duration::from_secs(15 - 5) - MARGIN);
        // Another holder, or ours past its time less the margin: no write.
        assert!(matches!(
            held_for(&lease("other", renewed, 15), "me", now),
            Err(Error::NotLeader { holder }) if holder == "other"
        ));
        let stale = now - Duration::from_secs(13);
        assert!(matches!(
            held_for(&lease("me", stale, 15), "me", now),
            Err(Error::Waiting(_))
        ));
    }

    /// The fenced client against a stand-in API server whose Lease holder the test sets: a
    /// delete goes through while the Lease is this replica's, and is never sent once the Lease
    /// as last read has run out and another replica holds it.
    #[tokio::test]
    async fn a_write_is_not_sent_once_another_replica_holds_the_lease() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let holder = Arc::new(Mutex::new("me".to_string()));
        let sent = Arc::new(Mutex::new(Vec::<String>::new()));
        let (h, log) = (holder.clone(), sent.clone());
        let server = tower::service_fn(move |request: Request<kube::client::Body>| {
            let path = request.uri().path().to_string();
            log.lock()
                .expect("log")
                .push(format!("{} {path}", request.method()));
            // Renewed 11.5 s ago for 15 s: valid for 0.5 s past the margin.
            let renewed = SystemTime::now() - Duration::from_millis(11_500);
            let body = if path.contains("/leases/") {
                let holder = h.lock().expect("holder").clone();
                serde_json::to_vec(&lease(&holder, renewed, 15))
            } else {
                serde_json::to_vec(&serde_json::json!({
                    "kind": "Status", "apiVersion": "v1", "status": "Success", "metadata": {}
                }))
            };
            let response = http::Response::new(kube::client::Body::from(body.expect("json")));
            async move { Ok::<_, std::convert::Infallible>(response) }
        });
        let plain = Client::new(server.clone(), "ns");
        let leadership = Leadership::new(plain, "ns", "pms-operator", "me");
        let client = kube::client::ClientBuilder::new(server, "ns")
            .with_layer(&FenceLayer(leadership.clone()))
            .build();
        let config_maps: Api<ConfigMap> = Api::namespaced(client, "ns");
        let params = kube::api::DeleteParams::default();
        let delete = || config_maps.delete("orders-config", &params);
        delete().await.expect("held: the delete is sent");
        *holder.lock().expect("holder") = "other".into();
        // Still valid as last read: no second read of the Lease yet.
        delete().await.expect("still valid");
        tokio::time::sleep(Duration::from_millis(600)).await;
        let refused = delete().await.expect_err("another holder: not sent");
        assert!(refused.to_string().contains("not the leader"), "{refused}");
        let sent = sent.lock().expect("log").clone();
        let cm = "DELETE /api/v1/namespaces/ns/configmaps/orders-config";
        let lease = "GET /apis/coordination.k8s.io/v1/namespaces/ns/leases/pms-operator";
        assert_eq!(sent, [lease, cm, cm, lease]);
    }

    #[test]
    fn every_write_but_the_leases_own_is_fenced() {
        let path = "/apis/apps/v1/namespaces/ns/deployments/orders-slot-0";
        assert!(writes(&Method::DELETE, path));
        assert!(writes(&Method::PATCH, path));
        assert!(writes(&Method::POST, "/apis/batch/v1/namespaces/ns/jobs"));
        assert!(!writes(&Method::GET, path));
        let lease = "/apis/coordination.k8s.io/v1/namespaces/ns/leases/pms-operator";
        assert!(!writes(&Method::PUT, lease));
        assert!(!writes(
            &Method::POST,
            "/apis/coordination.k8s.io/v1/namespaces/ns/leases"
        ));
    }
}
