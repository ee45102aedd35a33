//! What both binaries do before their real work starts: choose the TLS provider, set up
//! structured logging, and serve the admin endpoint (`/metrics`, `/healthz`, `/readyz`); and
//! the S3 access both need ([`s3`]).

mod admin;
mod logging;
pub mod s3;

pub use admin::{render, serve_admin, AdminError, Readiness};
pub use logging::init_logging;

/// Several TLS backends are linked in (kube, object storage clients): choose one before any
/// client exists.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
