//! What both binaries do before their real work starts: choose the TLS provider, set up
//! structured logging, and serve the admin endpoint (`/metrics`, `/healthz`, `/readyz`); and
//! the S3 access both need ([`s3`]).

mod admin;
pub mod liveness;
mod logging;
pub mod s3;

pub use admin::{render, serve_admin, AdminError, Readiness};
pub use logging::init_logging;

/// ring is the only TLS provider linked in, and the HTTP clients of the object stores (reqwest,
/// built without a provider of their own) take the process default: install it before any client
/// exists. Idempotent.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
