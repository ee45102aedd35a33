//! The committed CRD YAML must be what the Rust types generate (`make crds` rewrites it).

#[test]
fn committed_crd_matches_the_types() {
    let generated = pms_crds::crd_yaml();
    for path in [
        concat!(env!("CARGO_MANIFEST_DIR"), "/paimonmysqlsync.yaml"),
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../charts/paimon-mysql-sync/crds/paimonmysqlsync.yaml"
        ),
    ] {
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == generated,
            "{path} is stale: run `make crds` and commit the result"
        );
    }
}

/// A change of the schemas raises [`pms_crds::SCHEMA_REVISION`]: the ledger's last line is this
/// build's revision and the digest of its schemas.
#[test]
fn a_changed_schema_has_a_new_revision() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema-revisions.txt");
    let ledger = std::fs::read_to_string(path).unwrap_or_default();
    let last = ledger
        .lines()
        .rfind(|l| !l.starts_with('#') && !l.trim().is_empty())
        .unwrap_or_default();
    let (revision, digest) = (
        pms_crds::SCHEMA_REVISION,
        pms_crds::schema_revision_digest(),
    );
    assert_eq!(
        last,
        format!("{revision} {digest}"),
        "the CRD schemas changed since revision {revision}: append `{} {digest}` to {path} and set \
         SCHEMA_REVISION to {} (an older operator then leaves these CRDs alone)",
        revision + 1,
        revision + 1
    );
}

#[test]
fn a_standalone_spec_parses_with_defaults() {
    let spec: pms_crds::PaimonMysqlSyncSpec = serde_yaml::from_str(
        "source: {warehouse: /wh, database: d, table: t}\nsink: {url: 'mysql://h/db', table: t}\n",
    )
    .unwrap();
    assert_eq!(spec.parallelism, 1);
    assert_eq!(
        spec.sink.flush_interval.0,
        std::time::Duration::from_secs(1)
    );
    assert_eq!(spec.source.scan_mode, pms_crds::ScanMode::LatestFull);
    let bad = serde_yaml::from_str::<pms_crds::PaimonMysqlSyncSpec>(
        "source: {warehouse: /wh, database: d, table: t, pollInterval: soon}\nsink: {url: 'mysql://h/db', table: t}\n",
    );
    assert!(bad
        .unwrap_err()
        .to_string()
        .contains("invalid duration \"soon\""));
}

/// The guide's field reference is what the schemas generate (`make crds` rewrites it).
#[test]
fn the_guides_reference_matches_the_types() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/reference.md");
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == pms_crds::reference_markdown(),
        "{path} is stale: run `make crds` and commit the result"
    );
}

/// A database sync's template keeps a sync's rules, but not a sync's way out: "create a new
/// PaimonMysqlSync and delete this one", said of a database sync, would delete every table's.
#[test]
fn a_database_sync_template_tells_its_own_way_out() {
    let yaml = pms_crds::crd_yaml();
    let database = yaml
        .split("---\n")
        .find(|crd| crd.contains("name: paimonmysqldatabasesyncs.paimonsync.io"))
        .expect("the database sync's CRD");
    assert!(
        !database.contains("create a new PaimonMysqlSync"),
        "a sync's message in the template"
    );
    assert_eq!(
        database
            .matches("create a new PaimonMysqlDatabaseSync")
            .count(),
        2,
        "the template's source and sink.table rules, in a database sync's words"
    );
    let sync = yaml
        .split("---\n")
        .find(|crd| crd.contains("name: paimonmysqlsyncs.paimonsync.io"))
        .expect("the sync's CRD");
    assert_eq!(sync.matches("create a new PaimonMysqlSync ").count(), 2);
}
