//! The dependency graph stays lean enough for a cold build on a small machine (see docs/tests.md's
//! build figures): one TLS stack, ring. aws-lc-sys (a C library built with cmake) and OpenSSL came in
//! through the defaults of paimon's HTTP clients until vendor/paimon turned them off; a dependency
//! update that brings either back fails here rather than in CI's time budget.

use std::path::Path;

fn locked_packages() -> Vec<String> {
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    let text = std::fs::read_to_string(&lock)
        .unwrap_or_else(|e| panic!("reading {}: {e}", lock.display()));
    text.lines()
        .filter_map(|l| l.strip_prefix("name = \""))
        .map(|l| l.trim_end_matches('"').to_string())
        .collect()
}

#[test]
fn one_tls_stack_in_the_graph() {
    let packages = locked_packages();
    assert!(
        packages.iter().any(|p| p == "ring"),
        "ring is the TLS provider"
    );
    assert!(
        packages.iter().any(|p| p == "paimon"),
        "Cargo.lock was read"
    );
    for unwanted in ["aws-lc-sys", "aws-lc-rs", "openssl-sys", "native-tls"] {
        assert!(
            !packages.iter().any(|p| p == unwanted),
            "{unwanted} is back in Cargo.lock: `cargo tree -i {unwanted}` names the dependency \
             whose default features bring it; turn them off (as vendor/paimon does)"
        );
    }
}
