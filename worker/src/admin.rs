//! The admin endpoint: Prometheus `/metrics`, liveness `/healthz`, readiness `/readyz`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use tracing::info;

use crate::error::{Result, WorkerError};
use crate::metrics::Metrics;

/// Ready once the target was validated and the first read started.
#[derive(Clone, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    pub fn set(&self, ready: bool) {
        self.0.store(ready, Ordering::Relaxed);
    }
    fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Binds now (so a bad address fails at start), serves in the background.
pub async fn serve(addr: &str, metrics: Metrics, ready: Readiness) -> Result<std::net::SocketAddr> {
    let app = Router::new()
        .route("/metrics", get(move || async move { metrics.render() }))
        .route("/healthz", get(|| async { "ok" }))
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
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| WorkerError::Admin {
            addr: addr.to_string(),
            source,
        })?;
    let local = listener.local_addr().map_err(|source| WorkerError::Admin {
        addr: addr.to_string(),
        source,
    })?;
    info!(%local, "admin endpoint: /metrics /healthz /readyz");
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "admin endpoint stopped");
        }
    });
    Ok(local)
}
