//! TLS to MySQL, each `sink.tls.mode` against a MariaDB that takes TCP clients over TLS only
//! (`require_secure_transport=ON`), with a CA and certificates made here by openssl: what
//! each mode accepts, and the clear refusals (wrong CA, wrong host name, no client certificate,
//! a server without TLS).

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::*;
use pms_tests::mysql::{OwnServer, TestDb};
use pms_tests::paimon::Table;
use serde_json::{json, Value};

/// A CA, a server certificate signed by it naming only `IP:127.0.0.1` (so `localhost` is a
/// wrong host name), a client certificate, and a second CA that signed nothing here.
struct Certificates {
    dir: tempfile::TempDir,
}

impl Certificates {
    fn make() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path().display().to_string();
        let script = format!(
            r#"set -e
cd {d}
key() {{ openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }}
ca() {{ key "$1.key"; openssl req -x509 -new -key "$1.key" -out "$1.pem" -days 2 -subj "/CN=$1" \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign; }}
leaf() {{ key "$1.key"; openssl req -new -key "$1.key" -out "$1.csr" -subj "/CN=$1"
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=%s\n%s\n' "$2" "$3" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -out "$1.pem" -days 2 -extfile "$1.ext"; }}
ca ca
ca other-ca
leaf server serverAuth subjectAltName=IP:127.0.0.1
leaf client clientAuth ''
"#
        );
        let out = std::process::Command::new("bash")
            .args(["-c", &script])
            .output()
            .expect("run openssl (apt-get install -y openssl)");
        assert!(
            out.status.success(),
            "making test certificates with openssl failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Self { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn file(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }
}

fn orders() -> Table {
    let t = orders_table(json!({"bucket": "1"}), false);
    t.commits(vec![generate(1, 20, "+I", 0)]);
    t
}

/// One `--once` run with `tls`, connecting to `host` as `user`.
fn attempt(t: &Table, db: &TestDb, host: &str, user: &str, tls: Value) -> Output {
    let url = format!("mysql://{user}:pw@{host}:{}/{}", db.port, db.name);
    SyncConfig::builder_for_url(t, &url)
        .tls(tls)
        .build()
        .run_once(&[])
}

async fn accepted(t: &Table, db: &TestDb, host: &str, user: &str, tls: Value) {
    db.exec("DELETE FROM orders").await;
    let out = attempt(t, db, host, user, tls.clone());
    assert!(
        out.status.success(),
        "{tls} to {host} as {user} was refused: {}",
        stderr(&out)
    );
    assert_synced(t, db, "orders", None).await;
}

async fn refused(t: &Table, db: &TestDb, host: &str, user: &str, tls: Value, needle: &str) {
    db.exec("DELETE FROM orders").await;
    let out = attempt(t, db, host, user, tls.clone());
    let err = stderr(&out);
    assert!(!out.status.success(), "{tls} to {host} was accepted");
    assert!(
        err.contains(needle),
        "{tls} to {host}: expected {needle:?} in:\n{err}"
    );
    assert!(
        !err.contains(":pw@"),
        "the password is never logged:\n{err}"
    );
    assert_eq!(db.count("orders").await, 0, "nothing written");
}

#[tokio::test]
async fn each_tls_mode_against_a_server_that_requires_tls() {
    let certs = Certificates::make();
    let server = OwnServer::start(&[
        &format!("--ssl-ca={}", certs.file("ca.pem")),
        &format!("--ssl-cert={}", certs.file("server.pem")),
        &format!("--ssl-key={}", certs.file("server.key")),
        "--require-secure-transport=ON",
    ]);
    let db = TestDb::on_tls(server.port, "tls").await;
    db.exec(ORDERS_DDL).await;
    for (user, require) in [("plain", ""), ("x509", " REQUIRE X509")] {
        db.exec(&format!(
            "CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'{require}"
        ))
        .await;
        db.exec(&format!("GRANT ALL ON `{}`.* TO '{user}'@'%'", db.name))
            .await;
    }
    let t = orders();
    let ca = certs.file("ca.pem");
    let other_ca = certs.file("other-ca.pem");
    let (cert, key) = (certs.file("client.pem"), certs.file("client.key"));
    let identity = json!({"mode": "verify-identity", "caFile": ca});
    // (host, user, sink.tls, None: synced | Some(what the refusal says))
    let cases = [
        ("127.0.0.1", "plain", json!({"mode": "disabled"}), Some(
            "the server requires TLS (require_secure_transport, or the user's REQUIRE SSL): set sink.tls.mode to required")),
        // preferred, the default
        ("127.0.0.1", "plain", json!({}), None),
        ("127.0.0.1", "plain", json!({"mode": "required"}), None),
        // verify-ca: the chain, not the name (the certificate does not name localhost).
        ("localhost", "plain", json!({"mode": "verify-ca", "caFile": ca}), None),
        ("127.0.0.1", "plain", json!({"mode": "verify-ca", "caFile": other_ca}), Some(
            "the server's certificate is not signed by the CA of sink.tls.caFile")),
        // Without a CA, only the built-in public roots are trusted.
        ("127.0.0.1", "plain", json!({"mode": "verify-ca"}), Some("not signed by the built-in Mozilla roots")),
        // verify-identity: the chain and the name.
        ("127.0.0.1", "plain", identity.clone(), None),
        ("localhost", "plain", identity.clone(), Some(
            "the server's certificate does not name \"localhost\" (it names IpAddress(127.0.0.1))")),
        ("localhost", "plain", json!({"mode": "verify-identity", "caFile": ca, "serverName": "127.0.0.1"}), None),
        // A user created REQUIRE X509 needs the client certificate.
        ("127.0.0.1", "x509", identity.clone(), Some(
            "or the user requires a client certificate (REQUIRE X509, SUBJECT or ISSUER): give sink.tls.clientCertFile")),
        ("127.0.0.1", "x509", json!({"mode": "verify-identity", "caFile": ca, "clientCertFile": cert, "clientKeyFile": key}), None),
    ];
    for (host, user, tls, refusal) in cases {
        match refusal {
            None => accepted(&t, &db, host, user, tls).await,
            Some(needle) => refused(&t, &db, host, user, tls, needle).await,
        }
    }
}

#[tokio::test]
async fn a_server_without_tls() {
    let db = TestDb::new("no_tls").await;
    db.exec(ORDERS_DDL).await;
    let user = format!("plain{}", std::process::id());
    db.exec(&format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'"))
        .await;
    db.exec(&format!("GRANT ALL ON `{}`.* TO '{user}'@'%'", db.name))
        .await;
    let t = orders();
    // preferred falls back to plaintext, and says so.
    db.exec("DELETE FROM orders").await;
    let out = attempt(&t, &db, "127.0.0.1", &user, json!({"mode": "preferred"}));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the server offers no TLS: connecting in plaintext"),
        "{}",
        stderr(&out)
    );
    assert_synced(&t, &db, "orders", None).await;
    refused(
        &t,
        &db,
        "127.0.0.1",
        &user,
        json!({"mode": "required"}),
        "the server offers no TLS, and sink.tls.mode is required",
    )
    .await;
}

#[test]
fn tls_settings_that_cannot_work_are_refused_before_connecting() {
    let certs = Certificates::make();
    let t = orders();
    let cases = [
        (
            json!({"mode": "required", "caFile": certs.file("ca.pem")}),
            "caFile is only used by mode verify-ca or verify-identity",
        ),
        (
            json!({"mode": "verify-ca", "serverName": "db"}),
            "serverName is only used by mode verify-identity",
        ),
        (
            json!({"mode": "required", "clientCertFile": certs.file("client.pem")}),
            "clientCertFile and clientKeyFile go together",
        ),
        (
            json!({"mode": "verify-ca", "caFile": "/nonexistent/ca.pem"}),
            "sink.tls.caFile /nonexistent/ca.pem",
        ),
        (
            json!({"mode": "verify-ca", "caFile": certs.file("ca.srl")}),
            "not a PEM file",
        ),
        (
            json!({"mode": "verify-ca", "caSecretRef": {"name": "ca"}}),
            "running standalone, give caFile",
        ),
        (json!({"mode": "verfy-ca"}), "unknown variant `verfy-ca`"),
    ];
    for (tls, needle) in cases {
        // Port 1: nothing listens there; the config is refused before any connection.
        let out = SyncConfig::builder_for_url(&t, "mysql://u:pw@127.0.0.1:1/db")
            .tls(tls.clone())
            .build()
            .run_once(&[]);
        assert!(!out.status.success());
        assert!(
            stderr(&out).contains(needle),
            "{tls}: expected {needle:?} in:\n{}",
            stderr(&out)
        );
    }
    let out = SyncConfig::builder_for_url(&t, "mysql://u:pw@127.0.0.1:1/db?ssl-mode=REQUIRED")
        .build()
        .run_once(&[]);
    assert!(
        stderr(&out).contains("sink.url takes no parameters"),
        "{}",
        stderr(&out)
    );
}
