//! Errors of a reconcile. None of them carries Secret data.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),

    #[error("invalid spec: {0}")]
    Invalid(String),

    #[error("serializing the worker config: {0}")]
    Yaml(#[from] serde_yaml::Error),

    #[error("finalizer: {0}")]
    Finalizer(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
