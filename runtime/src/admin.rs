//! The admin endpoint: Prometheus `/metrics`, liveness `/healthz` (tied to progress, see
//! [`crate::liveness`]), readiness `/readyz`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use prometheus::{Encoder, Registry};
use tracing::{info, warn};

/// Whether the process is ready for traffic (the worker: once its target was validated).
#[derive(Clone, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    /// Ready from the start (the operator).
    pub fn ready() -> Self {
        let r = Self::default();
        r.set(true);
        r
    }
    pub fn set(&self, ready: bool) {
        self.0.store(ready, Ordering::Relaxed);
    }
    pub fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

#[derive(Debug, thiserror::Error)]
#[error("can't serve the admin endpoint on {addr}: {source}")]
pub struct AdminError {
    pub addr: String,
    #[source]
    pub source: std::io::Error,
}

/// The registry's metrics in Prometheus' text format.
pub fn render(registry: &Registry) -> String {
    let mut buf = Vec::new();
    let _ = prometheus::TextEncoder::new().encode(&registry.gather(), &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// Binds now (so a bad address fails at start), serves in the background.
pub async fn serve_admin(
    addr: &str,
    registry: Registry,
    ready: Readiness,
) -> Result<SocketAddr, AdminError> {
    let err = |source| AdminError {
        addr: addr.to_string(),
        source,
    };
    let app = Router::new()
        .route("/metrics", get(move || async move { render(&registry) }))
        .route(
            "/healthz",
            get(|| async {
                match crate::liveness::stalled() {
                    None => (StatusCode::OK, "ok".to_string()),
                    Some(why) => {
                        // In the log too: the kubelet's event has the status code only, and
                        // this is the last thing the process says before it is restarted.
                        warn!(%why, "liveness probe answered: stalled");
                        (StatusCode::SERVICE_UNAVAILABLE, why)
                    }
                }
            }),
        )
        .route(
            "/readyz",
            get(move || async move {
                if ready.get() {
                    (StatusCode::OK, "ready")
                } else {
                    (StatusCode::SERVICE_UNAVAILABLE, "starting")
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(err)?;
    let local = listener.local_addr().map_err(err)?;
    info!(%local, "admin endpoint: /metrics /healthz /readyz");
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "admin endpoint stopped");
        }
    });
    Ok(local)
}
