//! `sink.tls` resolved: the mode, and the certificate files read once at start, so a missing or
//! unreadable file is a config error naming the field, not a failed handshake later.

use std::path::Path;

use pms_crds::{TlsMode, TlsSpec};

use crate::error::{Result, WorkerError};

/// What the connection needs to set up TLS. `Debug` leaves the key out.
#[derive(Clone, Default)]
pub struct MysqlTls {
    pub mode: TlsMode,
    /// PEM bundle and where it came from (for messages).
    pub ca: Option<(String, Vec<u8>)>,
    /// Client certificate chain and key, PEM.
    pub client_identity: Option<(Vec<u8>, Vec<u8>)>,
    /// The name the certificate must carry with `verify-identity`, when not the URL's host.
    pub server_name: Option<String>,
}

impl std::fmt::Debug for MysqlTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MysqlTls")
            .field("mode", &self.mode)
            .field("ca", &self.ca.as_ref().map(|(from, _)| from))
            .field("client_identity", &self.client_identity.is_some())
            .field("server_name", &self.server_name)
            .finish()
    }
}

impl MysqlTls {
    /// The same checks as the CRD's CEL rules (a standalone file never met the API server),
    /// then the files. Relative paths are relative to the config file, like the checkpoint's.
    pub fn resolve(spec: &TlsSpec, base_dir: Option<&Path>) -> Result<Self> {
        let bad = |m: &str| Err(WorkerError::Config(format!("sink.tls: {m}")));
        let verifies = matches!(spec.mode, TlsMode::VerifyCa | TlsMode::VerifyIdentity);
        if spec.ca_secret_ref.is_some() || spec.client_cert_secret_ref.is_some() {
            // The operator turns the Secret refs into mounted files before the worker sees them.
            return bad("caSecretRef and clientCertSecretRef are mounted by the operator; running standalone, \
                        give caFile, clientCertFile and clientKeyFile");
        }
        if spec.ca_file.is_some() && !verifies {
            return bad("caFile is only used by mode verify-ca or verify-identity (required checks no certificate)");
        }
        if spec.server_name.is_some() && spec.mode != TlsMode::VerifyIdentity {
            return bad("serverName is only used by mode verify-identity");
        }
        if spec.client_cert_file.is_some() != spec.client_key_file.is_some() {
            return bad("clientCertFile and clientKeyFile go together");
        }
        if spec.mode == TlsMode::Disabled && spec.client_cert_file.is_some() {
            return bad("a client certificate needs TLS: mode is disabled");
        }
        let read = |field: &str, path: &str| -> Result<(String, Vec<u8>)> {
            let full = super::beside_config(base_dir, path);
            let bytes = std::fs::read(&full).map_err(|e| {
                WorkerError::Config(format!("sink.tls.{field} {}: {e}", full.display()))
            })?;
            if !bytes.windows(11).any(|w| w == b"-----BEGIN ") {
                return Err(WorkerError::Config(format!(
                    "sink.tls.{field} {}: not a PEM file (no -----BEGIN line)",
                    full.display()
                )));
            }
            Ok((format!("sink.tls.{field} {}", full.display()), bytes))
        };
        let ca = spec
            .ca_file
            .as_deref()
            .map(|p| read("caFile", p))
            .transpose()?;
        let client_identity = match (&spec.client_cert_file, &spec.client_key_file) {
            (Some(cert), Some(key)) => Some((
                read("clientCertFile", cert)?.1,
                read("clientKeyFile", key)?.1,
            )),
            _ => None,
        };
        Ok(Self {
            mode: spec.mode,
            ca,
            client_identity,
            server_name: spec.server_name.clone(),
        })
    }
}
