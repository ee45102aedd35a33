//! TLS to MySQL through mysql_async's rustls support: the options of each mode, the two
//! decisions made once at connect, and errors that say what to change.
//!
//! - `preferred` against a server without TLS falls back to plaintext (with a warning).
//! - `verify-ca` checks the chain only. mysql_async's switch for skipping the name check no
//!   longer works with the rustls it uses (it matches an error text rustls changed), so the
//!   first handshake learns a name the certificate carries and later ones verify against it:
//!   the chain is still checked in full, and the name is one the CA signed.

use mysql_async::{ClientIdentity, DriverError, IoError, SslOpts};
use pms_crds::TlsMode;
use rustls::{CertificateError, Error as TlsError};

use crate::config::MysqlTls;

/// How the pool's connections are made, once connect-time decisions are taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    Plain,
    /// TLS, verifying the certificate against `name` when set (else the URL's host).
    Tls {
        name: Option<String>,
    },
}

impl Transport {
    /// What to try first.
    pub fn initial(tls: &MysqlTls) -> Self {
        match tls.mode {
            TlsMode::Disabled => Transport::Plain,
            _ => Transport::Tls {
                name: tls.server_name.clone(),
            },
        }
    }

    pub fn ssl_opts(&self, tls: &MysqlTls) -> Option<SslOpts> {
        let Transport::Tls { name } = self else {
            return None;
        };
        // preferred/required encrypt without authenticating the server, as the mysql client does.
        let verify = matches!(tls.mode, TlsMode::VerifyCa | TlsMode::VerifyIdentity);
        let mut opts = SslOpts::default()
            .with_danger_accept_invalid_certs(!verify)
            .with_danger_tls_hostname_override(name.clone());
        if let Some((_, pem)) = &tls.ca {
            // A CA given is the only one trusted.
            opts = opts
                .with_root_certs(vec![pem.clone().into()])
                .with_disable_built_in_roots(true);
        }
        if let Some((cert, key)) = &tls.client_identity {
            opts = opts.with_client_identity(Some(ClientIdentity::new(
                cert.clone().into(),
                key.clone().into(),
            )));
        }
        Some(opts)
    }

    /// The transport to retry with after `error`, when the mode allows one; `None`: the error
    /// stands.
    pub fn fallback(&self, tls: &MysqlTls, error: &mysql_async::Error) -> Option<Transport> {
        match (tls.mode, self) {
            (TlsMode::Preferred, Transport::Tls { .. }) if server_has_no_tls(error) => {
                Some(Transport::Plain)
            }
            (TlsMode::VerifyCa, Transport::Tls { name: None }) => match certificate_error(error) {
                Some(CertificateError::NotValidForNameContext { presented, .. }) => presented
                    .iter()
                    .find_map(|p| presented_name(p))
                    .map(|name| Transport::Tls { name: Some(name) }),
                _ => None,
            },
            _ => None,
        }
    }
}

fn server_has_no_tls(error: &mysql_async::Error) -> bool {
    matches!(
        error,
        mysql_async::Error::Driver(DriverError::NoClientSslFlagFromServer)
    )
}

/// The certificate verdict inside a failed handshake (tokio-rustls wraps it in an I/O error).
fn certificate_error(error: &mysql_async::Error) -> Option<&CertificateError> {
    let tls = match error {
        mysql_async::Error::Io(IoError::Io(io)) => io.get_ref()?.downcast_ref::<TlsError>()?,
        mysql_async::Error::Io(IoError::Tls(mysql_async::TlsError::Tls(e))) => e,
        _ => return None,
    };
    match tls {
        TlsError::InvalidCertificate(e) => Some(e),
        _ => None,
    }
}

/// A name webpki lists as presented by the certificate (`DnsName("db.example")` or
/// `IpAddress(10.0.0.1)`), usable as a server name; wildcards get a label put in.
fn presented_name(presented: &str) -> Option<String> {
    if let Some(dns) = presented
        .strip_prefix("DnsName(\"")
        .and_then(|s| s.strip_suffix("\")"))
    {
        return Some(match dns.strip_prefix("*.") {
            Some(rest) => format!("pms.{rest}"),
            None => dns.to_string(),
        });
    }
    let ip = presented.strip_prefix("IpAddress(")?.strip_suffix(')')?;
    ip.parse::<std::net::IpAddr>().ok().map(|ip| ip.to_string())
}

/// What to change when connecting over `transport` failed for what may be a TLS reason;
/// `None` when it was something else.
pub fn advice(
    tls: &MysqlTls,
    transport: &Transport,
    host: &str,
    error: &mysql_async::Error,
) -> Option<String> {
    if server_has_no_tls(error) {
        return Some(format!(
            "the server offers no TLS, and sink.tls.mode is {}: give the server ssl_cert/ssl_key \
             (or set mode preferred, which then falls back to plaintext)",
            mode_name(tls.mode)
        ));
    }
    if let mysql_async::Error::Server(e) = error {
        // MySQL names the cause; MariaDB answers a plaintext client of a server (or a user)
        // that requires TLS with a plain "Access denied", as it does a client without the
        // certificate a user is created with.
        let plain = *transport == Transport::Plain;
        return if e.message.contains("insecure transport") {
            Some(format!(
                "{REQUIRES_TLS}, and the connection was not encrypted (sink.tls.mode {})",
                mode_name(tls.mode)
            ))
        } else if e.code == 1045 && plain {
            Some(format!(
                "access denied: a wrong user or password, or {REQUIRES_TLS} (MariaDB says only \
                 \"Access denied\" to a plaintext client; sink.tls.mode {})",
                mode_name(tls.mode)
            ))
        } else if e.code == 1045 && tls.client_identity.is_none() {
            Some(
                "access denied: a wrong user or password, or the user requires a client certificate \
                 (REQUIRE X509, SUBJECT or ISSUER): give sink.tls.clientCertFile and clientKeyFile"
                    .into(),
            )
        } else {
            None
        };
    }
    let ca = tls
        .ca
        .as_ref()
        .map(|(from, _)| format!("the CA of {from}"))
        .unwrap_or_else(|| "the built-in Mozilla roots (no sink.tls.caFile)".into());
    Some(match certificate_error(error)? {
        CertificateError::UnknownIssuer | CertificateError::BadSignature => {
            format!("the server's certificate is not signed by {ca}: give the CA that signed it")
        }
        CertificateError::NotValidForNameContext { presented, .. } => {
            let name = tls.server_name.as_deref().unwrap_or(host);
            format!(
                "the server's certificate does not name {name:?} (it names {}): connect by a name \
                 it carries, set sink.tls.serverName, or use mode verify-ca to check the CA only",
                presented.join(", ")
            )
        }
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            "the server's certificate has expired".into()
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            "the server's certificate is not valid yet (check the clocks)".into()
        }
        other => format!("the server's certificate was refused: {other}"),
    })
}

const REQUIRES_TLS: &str =
    "the server requires TLS (require_secure_transport, or the user's REQUIRE SSL): \
                            set sink.tls.mode to required, verify-ca or verify-identity";

fn mode_name(mode: TlsMode) -> &'static str {
    match mode {
        TlsMode::Disabled => "disabled",
        TlsMode::Preferred => "preferred",
        TlsMode::Required => "required",
        TlsMode::VerifyCa => "verify-ca",
        TlsMode::VerifyIdentity => "verify-identity",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presented_names_become_server_names() {
        assert_eq!(
            presented_name("DnsName(\"db.example\")").as_deref(),
            Some("db.example")
        );
        assert_eq!(
            presented_name("DnsName(\"*.example\")").as_deref(),
            Some("pms.example")
        );
        assert_eq!(
            presented_name("IpAddress(10.0.0.1)").as_deref(),
            Some("10.0.0.1")
        );
        assert_eq!(presented_name("UniformResourceIdentifier(\"x\")"), None);
        assert_eq!(presented_name("IpAddress(nonsense)"), None);
    }
}
