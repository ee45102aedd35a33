//! The worker's config (the `spec` of a `PaimonMysqlSync`), built with typed setters and
//! serialized with serde_yaml, so a test says what it configures and quoting is always right.
//!
//! ```ignore
//! let cfg = SyncConfig::builder(&table, &db)
//!     .max_rows(4)
//!     .delivery(Delivery::ExactlyOnce)
//!     .from_snapshot(1)
//!     .checkpoint_interval(Duration::ZERO)
//!     .build();
//! ```
//!
//! Only what a test sets is written; everything else keeps the worker's default. The same
//! builder makes the `spec` of the operator's resource (`spec_yaml`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::mysql::TestDb;
use crate::paimon::Table;
use crate::worker::SyncConfig;

/// `sink.delivery`.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Delivery {
    AtLeastOnce,
    ExactlyOnce,
}

/// `sink.visibility`.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Visibility {
    Batch,
    Snapshot,
}

/// `source.scanMode`.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ScanMode {
    LatestFull,
    Latest,
    FromSnapshot,
    FromSnapshotFull,
    FromTimestamp,
}

/// `source.schemaChanges`.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SchemaChanges {
    Fail,
    Ignore,
    Apply,
}

/// `state` (operator only).
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SyncState {
    Running,
    Suspended,
}

/// `sink.columns`: which Paimon columns go to which MySQL columns.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Columns {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub rename: BTreeMap<String, String>,
}

impl Columns {
    /// Leaves these Paimon columns out.
    pub fn exclude(mut self, columns: &[&str]) -> Self {
        self.exclude = columns.iter().map(|c| c.to_string()).collect();
        self
    }

    /// Writes Paimon column `from` into MySQL column `to`.
    pub fn rename(mut self, from: &str, to: &str) -> Self {
        self.rename.insert(from.into(), to.into());
        self
    }
}

/// A duration as the worker reads it (`100ms`, `0s`, `1h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Human(Duration);

impl Serialize for Human {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ms = self.0.as_millis();
        assert_eq!(
            self.0,
            Duration::from_millis(ms as u64),
            "whole milliseconds"
        );
        let text = match ms {
            0 => "0s".to_string(),
            ms if ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
            ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
            ms => format!("{ms}ms"),
        };
        s.serialize_str(&text)
    }
}

#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
struct SecretRef {
    name: String,
}

#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
struct SequenceGuard {
    column: String,
}

#[derive(Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
struct Source {
    warehouse: String,
    database: String,
    table: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    scan_mode: Option<ScanMode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_snapshot: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    consumer_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    poll_interval: Option<Human>,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_changes: Option<SchemaChanges>,
    #[serde(skip_serializing_if = "Option::is_none")]
    s3: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kerberos: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_from: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    filter: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    freshness: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
}

#[derive(Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
struct Sink {
    url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    credentials_secret_ref: Option<SecretRef>,
    table: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    columns: Option<Columns>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_rows: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    flush_interval: Option<Human>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_rows_per_statement: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_retries: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    allow_extra_unique_keys: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delivery: Option<Delivery>,
    #[serde(skip_serializing_if = "Option::is_none")]
    visibility: Option<Visibility>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_transaction_rows: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_buffer_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sequence_guard: Option<SequenceGuard>,
    /// `sink.tls` as written (its fields' combinations are what the TLS tests try).
    #[serde(skip_serializing_if = "Option::is_none")]
    tls: Option<serde_json::Value>,
}

#[derive(Serialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
struct Checkpoint {
    #[serde(skip_serializing_if = "Option::is_none")]
    interval: Option<Human>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    storage: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    s3: Option<serde_json::Value>,
}

#[derive(Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
struct Spec {
    source: Source,
    sink: Sink,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallelism: Option<u32>,
    checkpoint: Checkpoint,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<SyncState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rebuild: Option<serde_json::Value>,
}

/// Builds a [`SyncConfig`] (a standalone config file) or the `spec` of a resource.
#[derive(Clone, Debug)]
#[must_use]
pub struct SyncConfigBuilder {
    spec: Spec,
}

/// The poll interval of the tests' workers unless they set one: short, so tests don't wait.
pub const TEST_POLL_INTERVAL: Duration = Duration::from_millis(100);

impl SyncConfigBuilder {
    /// `source` is `(warehouse, database, table)`; the sink table defaults to `orders`.
    pub fn new(warehouse: impl Into<String>, database: &str, table: &str, url: &str) -> Self {
        Self {
            spec: Spec {
                source: Source {
                    warehouse: warehouse.into(),
                    database: database.into(),
                    table: table.into(),
                    scan_mode: None,
                    start_snapshot: None,
                    start_timestamp: None,
                    consumer_id: None,
                    poll_interval: Some(Human(TEST_POLL_INTERVAL)),
                    schema_changes: None,
                    s3: None,
                    kerberos: None,
                    start_from: None,
                    filter: None,
                    freshness: None,
                    path: None,
                },
                sink: Sink {
                    url: url.into(),
                    credentials_secret_ref: None,
                    table: "orders".into(),
                    columns: None,
                    max_rows: None,
                    flush_interval: None,
                    max_rows_per_statement: None,
                    max_retries: None,
                    allow_extra_unique_keys: None,
                    delivery: None,
                    visibility: None,
                    max_transaction_rows: None,
                    max_buffer_bytes: None,
                    sequence_guard: None,
                    tls: None,
                },
                parallelism: None,
                checkpoint: Checkpoint::default(),
                state: None,
                rebuild: None,
            },
        }
    }

    /// Syncs the Paimon `table` into the database at `url` (e.g. [`TestDb::url`]).
    pub fn for_url(table: &Table, url: &str) -> Self {
        Self::new(
            table.warehouse_location(),
            &table.database,
            &table.name,
            url,
        )
    }

    // source

    /// `source.scanMode` alone (see [`Self::from_snapshot`] for the usual pair).
    pub fn scan_mode(mut self, mode: ScanMode) -> Self {
        self.spec.source.scan_mode = Some(mode);
        self
    }

    /// `scanMode: from-timestamp` with `startTimestamp` (RFC 3339 or Unix milliseconds).
    pub fn from_timestamp(mut self, at: &str) -> Self {
        self.spec.source.scan_mode = Some(ScanMode::FromTimestamp);
        self.spec.source.start_timestamp = Some(at.to_string());
        self
    }

    /// `scanMode: from-snapshot-full` with `startSnapshot`: `snapshot` read whole, then the
    /// changes of every later one.
    pub fn from_snapshot_full(mut self, snapshot: i64) -> Self {
        self.spec.source.scan_mode = Some(ScanMode::FromSnapshotFull);
        self.spec.source.start_snapshot = Some(snapshot);
        self
    }

    /// `scanMode: from-snapshot` with `startSnapshot`: the changes of every snapshot from `snapshot` on.
    pub fn from_snapshot(mut self, snapshot: i64) -> Self {
        self.spec.source.scan_mode = Some(ScanMode::FromSnapshot);
        self.spec.source.start_snapshot = Some(snapshot);
        self
    }

    /// `source.consumerId`, so that two syncs of one table don't share a Paimon consumer.
    pub fn consumer_id(mut self, id: &str) -> Self {
        self.spec.source.consumer_id = Some(id.into());
        self
    }

    pub fn poll_interval(mut self, every: Duration) -> Self {
        self.spec.source.poll_interval = Some(Human(every));
        self
    }

    pub fn schema_changes(mut self, policy: SchemaChanges) -> Self {
        self.spec.source.schema_changes = Some(policy);
        self
    }

    // sink

    /// `sink.table` (default `orders`).
    pub fn target_table(mut self, table: &str) -> Self {
        self.spec.sink.table = table.into();
        self
    }

    /// `sink.url` (replaces the one given to the builder).
    pub fn sink_url(mut self, url: &str) -> Self {
        self.spec.sink.url = url.into();
        self
    }

    /// `sink.credentialsSecretRef` (operator only).
    pub fn credentials_secret(mut self, name: &str) -> Self {
        self.spec.sink.credentials_secret_ref = Some(SecretRef { name: name.into() });
        self
    }

    pub fn columns(mut self, columns: Columns) -> Self {
        self.spec.sink.columns = Some(columns);
        self
    }

    /// `sink.maxRows`: flush after this many input records (0 = off).
    pub fn max_rows(mut self, rows: u32) -> Self {
        self.spec.sink.max_rows = Some(rows);
        self
    }

    pub fn max_buffer_bytes(mut self, bytes: u64) -> Self {
        self.spec.sink.max_buffer_bytes = Some(bytes);
        self
    }

    /// `sink.flushInterval` (zero = off).
    pub fn flush_interval(mut self, every: Duration) -> Self {
        self.spec.sink.flush_interval = Some(Human(every));
        self
    }

    pub fn max_rows_per_statement(mut self, rows: u32) -> Self {
        self.spec.sink.max_rows_per_statement = Some(rows);
        self
    }

    pub fn max_retries(mut self, retries: u32) -> Self {
        self.spec.sink.max_retries = Some(retries);
        self
    }

    pub fn allow_extra_unique_keys(mut self, allow: bool) -> Self {
        self.spec.sink.allow_extra_unique_keys = Some(allow);
        self
    }

    // delivery

    pub fn delivery(mut self, delivery: Delivery) -> Self {
        self.spec.sink.delivery = Some(delivery);
        self
    }

    pub fn visibility(mut self, visibility: Visibility) -> Self {
        self.spec.sink.visibility = Some(visibility);
        self
    }

    pub fn max_transaction_rows(mut self, rows: u64) -> Self {
        self.spec.sink.max_transaction_rows = Some(rows);
        self
    }

    /// `sink.sequenceGuard.column`: a BIGINT column of the MySQL table.
    pub fn sequence_guard(mut self, column: &str) -> Self {
        self.spec.sink.sequence_guard = Some(SequenceGuard {
            column: column.into(),
        });
        self
    }

    /// `sink.tls`, e.g. `{"mode": "verify-ca", "caFile": "/tmp/ca.pem"}`.
    pub fn tls(mut self, tls: serde_json::Value) -> Self {
        self.spec.sink.tls = Some(tls);
        self
    }

    /// `source.s3`, for an `s3://` warehouse (e.g. `{"endpoint": …, "pathStyle": true}`).
    pub fn source_s3(mut self, s3: serde_json::Value) -> Self {
        self.spec.source.s3 = Some(s3);
        self
    }

    /// `source.kerberos: {principal}` (the worker takes the keytab from `KRB5_CLIENT_KTNAME`).
    pub fn kerberos(mut self, principal: &str) -> Self {
        self.spec.source.kerberos = Some(serde_json::json!({ "principal": principal }));
        self
    }

    /// `source.path`: the table named by its directory, `database`/`table` only naming it.
    pub fn source_path(mut self, path: &str, database: &str, table: &str) -> Self {
        self.spec.source.path = Some(path.to_string());
        self.spec.source.database = database.to_string();
        self.spec.source.table = table.to_string();
        self
    }

    /// `source.freshness`: `changelog` or `commit`.
    pub fn freshness(mut self, freshness: &str) -> Self {
        self.spec.source.freshness = Some(freshness.to_string());
        self
    }

    /// `source.filter`: the rows the sync keeps.
    pub fn filter(mut self, filter: &str) -> Self {
        self.spec.source.filter = Some(filter.to_string());
        self
    }

    /// `source.startFrom: {flinkConsumer, stoppedFor}`: take over from a Flink job.
    pub fn start_from_flink(mut self, consumer: &str, stopped_for: &str) -> Self {
        self.spec.source.start_from =
            Some(serde_json::json!({ "flinkConsumer": consumer, "stoppedFor": stopped_for }));
        self
    }

    // checkpoint

    /// `checkpoint.storage: s3` at `checkpoint.s3` (e.g. `{"bucket": "pms", "prefix": …}`).
    pub fn checkpoint_s3(mut self, s3: serde_json::Value) -> Self {
        self.spec.checkpoint.storage = Some("s3".into());
        self.spec.checkpoint.s3 = Some(s3);
        self
    }

    /// `checkpoint.interval` (zero: after every flush).
    pub fn checkpoint_interval(mut self, every: Duration) -> Self {
        self.spec.checkpoint.interval = Some(Human(every));
        self
    }

    // operator

    pub fn parallelism(mut self, slots: u32) -> Self {
        self.spec.parallelism = Some(slots);
        self
    }

    pub fn state(mut self, state: SyncState) -> Self {
        self.spec.state = Some(state);
        self
    }

    /// `rebuild.retainOld`: how long a rebuild keeps the table it replaced.
    pub fn retain_old(mut self, retain: Duration) -> Self {
        self.spec.rebuild =
            Some(serde_json::json!({"retainOld": format!("{}ms", retain.as_millis())}));
        self
    }

    /// The spec as YAML (as the operator's resource holds it: no checkpoint path).
    pub fn spec_yaml(&self) -> serde_yaml::Value {
        serde_yaml::to_value(&self.spec).expect("the spec serializes")
    }

    /// Writes the config into a fresh temporary directory, with the checkpoint file next to it.
    pub fn build(self) -> SyncConfig {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = self.write(dir.path(), "sync", "checkpoint.json");
        SyncConfig {
            _dir: Some(dir),
            ..cfg
        }
    }

    /// Writes `<dir>/<name>.yaml` with its checkpoint in `<dir>/<name>.checkpoint.json`
    /// (the caller owns `dir`: configs in one directory can share checkpoint files).
    pub fn write_in(self, dir: &Path, name: &str) -> SyncConfig {
        self.write(dir, name, &format!("{name}.checkpoint.json"))
    }

    /// Writes `<dir>/<name>.yaml` with its checkpoint in `<dir>/<checkpoint>`: configs given
    /// the same one share it (a copied config, or a sync moved to another table).
    pub fn write_sharing(self, dir: &Path, name: &str, checkpoint: &str) -> SyncConfig {
        self.write(dir, name, checkpoint)
    }

    fn write(mut self, dir: &Path, name: &str, checkpoint: &str) -> SyncConfig {
        let path = dir.join(format!("{name}.yaml"));
        let checkpoint = dir.join(checkpoint);
        self.spec.checkpoint.path = Some(checkpoint.clone());
        let yaml = serde_yaml::to_string(&self.spec).expect("the config serializes");
        std::fs::write(&path, yaml).expect("write config");
        SyncConfig {
            path,
            checkpoint,
            _dir: None,
        }
    }
}

impl SyncConfig {
    /// A config syncing the Paimon `table` into the table `orders` of `db` (see [`SyncConfigBuilder`]).
    pub fn builder(table: &Table, db: &TestDb) -> SyncConfigBuilder {
        SyncConfigBuilder::for_url(table, &db.url())
    }

    /// The same for a database the harness didn't create (`url` with its credentials).
    pub fn builder_for_url(table: &Table, url: &str) -> SyncConfigBuilder {
        SyncConfigBuilder::for_url(table, url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_only_what_is_set_in_the_workers_format() {
        let b = SyncConfigBuilder::new("/wh/it's here", "db", "t", "mysql://u:p@h:1/d")
            .target_table("t2")
            .max_rows(4)
            .delivery(Delivery::ExactlyOnce)
            .visibility(Visibility::Snapshot)
            .sequence_guard("pms_snapshot")
            .from_snapshot(1)
            .columns(
                Columns::default()
                    .exclude(&["status"])
                    .rename("amount", "amount_usd"),
            )
            .flush_interval(Duration::from_secs(3600))
            .checkpoint_interval(Duration::ZERO);
        let v = b.spec_yaml();
        assert_eq!(v["source"]["warehouse"], "/wh/it's here");
        assert_eq!(v["source"]["scanMode"], "from-snapshot");
        assert_eq!(v["source"]["startSnapshot"], 1);
        assert_eq!(v["source"]["pollInterval"], "100ms");
        assert_eq!(v["sink"]["table"], "t2");
        assert_eq!(v["sink"]["maxRows"], 4);
        assert_eq!(v["sink"]["delivery"], "exactly-once");
        assert_eq!(v["sink"]["visibility"], "snapshot");
        assert_eq!(v["sink"]["sequenceGuard"]["column"], "pms_snapshot");
        assert_eq!(v["sink"]["columns"]["exclude"][0], "status");
        assert_eq!(v["sink"]["columns"]["rename"]["amount"], "amount_usd");
        assert_eq!(v["sink"]["flushInterval"], "1h");
        assert_eq!(v["checkpoint"]["interval"], "0s");
        assert!(
            v["sink"].get("maxRetries").is_none(),
            "unset fields keep the default"
        );
        assert!(v.get("parallelism").is_none());
    }

    #[test]
    fn build_writes_the_file_with_its_checkpoint_next_to_it() {
        let cfg = SyncConfigBuilder::new("/wh", "db", "t", "mysql://h/d").build();
        let v: serde_yaml::Value =
            serde_yaml::from_str(&std::fs::read_to_string(&cfg.path).unwrap()).unwrap();
        assert_eq!(
            v["checkpoint"]["path"].as_str().map(PathBuf::from),
            Some(cfg.checkpoint_path(0, 1))
        );
        assert!(cfg
            .checkpoint_path(2, 3)
            .to_string_lossy()
            .ends_with("checkpoint.json.slot2-of-3"));
    }
}
