//! `spec` of a `PaimonMysqlSync`: source table, sink table, batching, parallelism, checkpoints.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{HumanDuration, PaimonMysqlSyncStatus};

/// Keeps one MySQL table continuously equal to one Apache Paimon primary-key table.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[kube(
    group = "paimonsync.io",
    version = "v1alpha1",
    kind = "PaimonMysqlSync",
    plural = "paimonmysqlsyncs",
    shortname = "pms",
    namespaced,
    status = "PaimonMysqlSyncStatus",
    scale(
        spec_replicas_path = ".spec.parallelism",
        status_replicas_path = ".status.readySlots"
    ),
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Snapshot","type":"integer","jsonPath":".status.snapshotId"}"#,
    printcolumn = r#"{"name":"Lag","type":"integer","jsonPath":".status.lagSnapshots"}"#,
    printcolumn = r#"{"name":"Slots","type":"string","jsonPath":".status.slotsReady"}"#,
    printcolumn = r#"{"name":"Rebuild","type":"string","jsonPath":".status.rebuild.phase"}"#,
    printcolumn = r#"{"name":"Verified","type":"string","jsonPath":".status.conditions[?(@.type==\"Verified\")].status"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {"rule": "!has(self.rollback) || !has(self.upgradeMode) || self.upgradeMode != 'stateless'", "message": "rollback is not offered with upgradeMode: stateless (going back would rebuild the table a second time); use last-state or savepoint"}
]))]
pub struct PaimonMysqlSyncSpec {
    pub source: SourceSpec,
    pub sink: SinkSpec,
    /// Number of sink slots; slot k owns the buckets b with b mod parallelism == k. Run
    /// standalone, start one worker per slot (`pms-worker run --slot k`).
    #[serde(default = "default_parallelism")]
    #[schemars(range(min = 1, max = 256))]
    pub parallelism: u32,
    #[serde(default)]
    pub checkpoint: CheckpointSpec,
    /// `running`, or `suspended`: every slot's Deployment goes to 0 replicas (a stopping
    /// worker flushes and checkpoints first); the checkpoints stay, a resume continues there.
    #[serde(default)]
    pub state: SyncState,
    /// The shadow-table rebuild (`pms-worker rebuild`; under the operator, a Job).
    #[serde(default)]
    pub rebuild: RebuildSpec,
    /// Periodic verification of MySQL against Paimon (`pms-worker verify`, a Job).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifySpec>,
    /// Savepoints the operator takes (`PaimonMysqlSyncSavepoint` resources) and keeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub savepoint: Option<SavepointSpec>,
    /// Start every slot from this point: setting or changing it on a sync restarts the sync
    /// from there, once. One present when the resource is created is taken as already served
    /// (a re-created or restored resource does not rewind); the served one is recorded in the
    /// annotation `paimonsync.io/served-triggers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore_from: Option<RestoreFrom>,
    /// How a spec change that restarts the workers of a running sync is carried out:
    /// `last-state` (default) restarts each slot from its own checkpoint; `savepoint` first
    /// pauses every slot at one snapshot's end, then starts the new workers all from there;
    /// `stateless` starts over with a rebuild (a new table swapped in, no orphans).
    #[serde(default)]
    pub upgrade_mode: UpgradeMode,
    /// Any value; setting or changing it restarts every worker of the sync once (their pods
    /// roll and each slot resumes from its checkpoint, whatever `upgradeMode` says). Kept out of
    /// the worker config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_nonce: Option<String>,
    /// Settings of the pods the operator builds (volumes, resources, scheduling, pull
    /// Secrets, fsGroup, labels); ignored by a standalone worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_pod: Option<crate::WorkerPodSpec>,
    /// Opt-in: when a spec change leaves the workers not running ready within
    /// `readinessTimeout`, the operator goes back to the last spec that ran ready
    /// (`status.lastStableSpec`), restarting each slot from its checkpoint, until the spec
    /// changes again. Not with `upgradeMode: stateless` (going back would be a second rebuild).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback: Option<RollbackSpec>,
}

/// `spec.rollback`: going back to the last stable spec.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct RollbackSpec {
    /// How long a new spec's workers may take to run ready (every slot's pod ready, the sync
    /// `Running`) before the operator rolls back. The clock stops while the sync is suspended,
    /// rebuilding or cutting for a rescale.
    #[serde(default = "default_readiness_timeout")]
    pub readiness_timeout: HumanDuration,
}

fn default_readiness_timeout() -> HumanDuration {
    HumanDuration::from_secs(300)
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum UpgradeMode {
    Savepoint,
    #[default]
    LastState,
    Stateless,
}

/// When the operator takes savepoints, and how many it keeps.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct SavepointSpec {
    /// Any string; setting or changing it takes a savepoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// Take one this often while the sync runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<HumanDuration>,
    /// Completed savepoints of the sync beyond these are deleted, oldest first (with their data).
    #[serde(default)]
    pub history: SavepointHistory,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct SavepointHistory {
    /// How many Completed savepoints the operator took are kept, the newest (Failed ones are
    /// counted apart). The newest Completed one and the one `restoreFrom` names are never
    /// deleted, nor a savepoint made by hand.
    #[serde(default = "default_history_count")]
    #[schemars(range(min = 1))]
    pub max_count: u32,
    /// Savepoints the operator took that are older than this are deleted too (with the same
    /// exceptions as `maxCount`). Unset: no age limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_age: Option<HumanDuration>,
}

impl Default for SavepointHistory {
    fn default() -> Self {
        Self {
            max_count: default_history_count(),
            max_age: None,
        }
    }
}

fn default_history_count() -> u32 {
    5
}

/// A point to start every slot from: a savepoint's snapshot, or a snapshot id.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {"rule": "has(self.savepoint) != has(self.snapshotId)", "message": "restoreFrom takes either savepoint or snapshotId"}
]))]
pub struct RestoreFrom {
    /// A Completed `PaimonMysqlSyncSavepoint` of this sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub savepoint: Option<String>,
    /// The last snapshot counted as applied: every slot goes on with the snapshot after it
    /// (S + 1). Not `source.startSnapshot`, which names the first snapshot read (S itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub snapshot_id: Option<i64>,
}

/// Verification: periodic, on demand, or both.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct VerifySpec {
    /// How often: a verify Job starts when the sync runs and this much time has passed
    /// since the last one started (the first one as soon as the sync runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<HumanDuration>,
    /// Any string; setting or changing it starts a verify once the sync runs (`kubectl pms
    /// verify` sets it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
}

/// How a rebuild treats the table it replaces.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct RebuildSpec {
    /// Any string; setting or changing it starts a rebuild (the operator stops the workers,
    /// runs `pms-worker rebuild` as a Job, and starts them again from its result). A trigger
    /// set when the resource is created is taken as already served (its first run reads in
    /// full anyway); the served one is recorded in the annotation
    /// `paimonsync.io/served-triggers`, so a re-created or restored resource does not run it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// `manual` (default): a sync that only a rebuild can take on (an expired resume snapshot,
    /// a start-over with several slots, an exactly-once parallelism change) stops with
    /// the `RebuildRequired` condition until the trigger changes; `auto`: the operator starts
    /// the rebuild itself, with an Event saying why.
    #[serde(default)]
    pub policy: RebuildPolicy,
    /// How long the replaced table is kept as `<table>__pms_old` (for a look back or a swap
    /// back by hand) before a later run of the sync drops it.
    #[serde(default = "default_retain_old")]
    pub retain_old: HumanDuration,
}

impl Default for RebuildSpec {
    fn default() -> Self {
        Self {
            trigger: None,
            policy: RebuildPolicy::default(),
            retain_old: default_retain_old(),
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RebuildPolicy {
    #[default]
    Manual,
    Auto,
}

fn default_retain_old() -> HumanDuration {
    HumanDuration::from_secs(3600)
}

fn default_parallelism() -> u32 {
    1
}

/// `source.startFrom`: a slot without a checkpoint starts where another reader of the table
/// stopped.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct StartFrom {
    /// The Flink job's `consumer-id`: its Paimon consumer file `consumer/consumer-<id>` in the
    /// table's directory says which snapshot the job would have read next.
    #[schemars(length(min = 1, max = 200), regex(pattern = r"^[^/]+$"))]
    pub flink_consumer: String,
    /// Keep the Flink consumer after the take-over's first checkpoint (until then it keeps the
    /// snapshots from its own on from expiring). By default it is removed then: a consumer
    /// nobody moves pins every later snapshot until `consumer.expiration-time`.
    #[serde(default)]
    pub keep_flink_consumer: bool,
    /// How long the consumer must not have been rewritten for the job to count as stopped:
    /// longer than the Flink job's checkpoint interval (a running job rewrites it at each
    /// checkpoint). A consumer written longer ago is taken at once.
    #[serde(default = "default_stopped_for")]
    #[schemars(extend("default" = "1m"))]
    pub stopped_for: HumanDuration,
}

fn default_stopped_for() -> HumanDuration {
    HumanDuration::from_secs(60)
}

/// Where to read: one Paimon primary-key table.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {"rule": "!has(self.scanMode) || !(self.scanMode in ['from-snapshot', 'from-snapshot-full']) || has(self.startSnapshot)", "message": "scanMode from-snapshot and from-snapshot-full need startSnapshot"},
    {"rule": "!has(self.scanMode) || self.scanMode != 'from-timestamp' || has(self.startTimestamp)", "message": "scanMode from-timestamp needs startTimestamp (RFC 3339)"},
    {"rule": "!has(self.startFrom) || !has(self.scanMode) || self.scanMode == 'latest-full'", "message": "startFrom takes the start from the Flink job's consumer: leave scanMode out"},
    {"rule": "self.warehouse == oldSelf.warehouse && self.database == oldSelf.database && self.table == oldSelf.table",
     "message": "a sync's Paimon table (warehouse, database, table) can't change: its checkpoints describe the old one. To sync another table, create a new PaimonMysqlSync (its first run reads the table in full and removes the rows the target holds that Paimon doesn't) and delete this one"}
]))]
pub struct SourceSpec {
    /// Warehouse root: `file:///path`, a plain path (run standalone, a relative one is relative
    /// to the config file's directory), `s3://bucket/prefix` (with `s3`), or
    /// `hdfs://namenode:port/path` (`hdfs:///path`: the namenode is `fs.defaultFS` of
    /// `$HADOOP_CONF_DIR/core-site.xml`).
    #[schemars(length(min = 1))]
    pub warehouse: String,
    /// The Paimon database the table is in.
    #[schemars(length(min = 1))]
    pub database: String,
    /// The Paimon table: one with a primary key.
    #[schemars(length(min = 1))]
    pub table: String,
    /// The table's own directory, as a Flink table's `'path'` option names it
    /// (`hdfs:///warehouse/orders`, `s3://bucket/tables/orders`, `/data/orders`): the table is
    /// read from there without a catalog, through the storage settings of `warehouse` (its
    /// scheme's: `s3`, `hadoopConf`, `kerberos`); `database` and `table` then only name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 4096))]
    pub path: Option<String>,
    /// Where a slot without a checkpoint starts: `latest-full` (a full read of the latest
    /// snapshot, then the changes of every later one), `latest` (only the changes of snapshots
    /// after the latest), `from-snapshot` (the changes from `startSnapshot` on, its own
    /// included), `from-snapshot-full` (a full read of `startSnapshot`, then the changes of
    /// every later one), `from-timestamp` (the changes from the first snapshot committed at or after
    /// `startTimestamp`; none yet: from the next one). A slot with a checkpoint resumes there.
    #[serde(default)]
    #[schemars(extend("default" = "latest-full"))]
    pub scan_mode: ScanMode,
    /// The first snapshot read with `scanMode: from-snapshot` (S itself, inclusive), or the one
    /// read whole with `from-snapshot-full`. Not
    /// `restoreFrom.snapshotId`, which names the last snapshot counted as applied (reading
    /// goes on with S + 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub start_snapshot: Option<i64>,
    /// The instant for `scanMode: from-timestamp`: RFC 3339 (`2026-11-01T00:00:00Z`), or Unix
    /// milliseconds as Flink's `scan.timestamp-millis` writes it (`"1793491200000"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(
        pattern = r"^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})|[0-9]{1,15})$"
    ))]
    pub start_timestamp: Option<String>,
    /// Take over from a Flink job that synced this table (a Paimon source with a `consumer-id`,
    /// a JDBC sink into the same MySQL table): a slot without a checkpoint starts at the
    /// snapshot the job's Paimon consumer names as its next, into the live table, with no full
    /// read, once the consumer has stopped moving (the job stopped). Parallelism 1, and no
    /// other `scanMode` than `latest-full` (the default). See the guide's "Migrate from Flink".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_from: Option<StartFrom>,
    /// Which rows the sync keeps, as the Flink job's `WHERE`: a predicate over the Paimon
    /// table's columns, e.g. `status IN ('PAID', 'SHIPPED') AND region = 'EU'`. Comparisons
    /// (`=`, `<>`, `!=`, `<`, `<=`, `>`, `>=`) of a column with a literal (`'text'`, a number,
    /// `TRUE`, `FALSE`; dates and timestamps as text), `[NOT] IN (…)`, `IS [NOT] NULL`, `AND`,
    /// `OR`, `NOT`, parentheses; a row is kept where the predicate is TRUE (SQL's NULL logic).
    /// Exact under updates: a row updated out of the filter is deleted from MySQL, one updated
    /// into it inserted. Naming only partition columns, it also prunes the full read's
    /// partitions. Changing it starts over (a full read that removes the rows no longer kept),
    /// refused with several slots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 4096))]
    pub filter: Option<String>,
    /// When a commit reaches MySQL, for a table Paimon reads above level 0 (`changelog-producer`
    /// `lookup` or `full-compaction`, usually with `write-only` writers and a separate compaction
    /// job). `changelog` (unset): as Paimon's streaming read, from the changelog a compaction
    /// writes, so a commit shows once the compaction job has merged it. `commit`: at commit, as
    /// a Paimon batch query sees it: each commit's level-0 files are applied as they are
    /// committed (the table is read as with `changelog-producer = none`: its full read takes level
    /// 0 too, compactions are skipped). Only a `deduplicate` table without deletion vectors or
    /// `force-lookup`; other shapes are refused before anything is written. A table without a
    /// producer (or `input`) is already read at commit. Changing it starts over (a full read that
    /// removes what it doesn't read), refused with several slots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "changelog"))]
    pub freshness: Option<Freshness>,
    /// Paimon consumer id: the worker writes `consumer/consumer-<id>` so that snapshots it
    /// still needs are not expired. Defaults to `pms-<namespace>_<name>` under the operator
    /// (`pms-<name>` run standalone; from a bare spec, `pms-<database>.<table>`; characters
    /// other than letters, digits, `-` and `_` become `-`). With more than one slot, slot k
    /// appends `-slot<k>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer_id: Option<String>,
    /// How long to wait before looking again when no new snapshot was committed
    /// (e.g. `1s`, `500ms`; at least 10ms). While snapshots keep coming (one within the last two
    /// intervals) the worker looks five times as often, so a commit of a table being written
    /// shows within a fifth of it; an idle table is looked at once per interval (each look
    /// reads the `LATEST` hint and asks whether the next snapshot exists).
    #[serde(default = "default_poll_interval")]
    pub poll_interval: HumanDuration,
    /// What a schema change of the Paimon table does while the sync runs: `fail` (stop before
    /// the first snapshot of the new schema, naming the change; a restart checks MySQL against
    /// it), `ignore` (go on: new columns are left out, dropped ones left as they are, with a
    /// warning), `apply` (go on: new columns are added to MySQL first, by `ALTER TABLE … ADD
    /// COLUMN` with `ALGORITHM=INSTANT`, else `INPLACE` without a lock; a server that could
    /// only copy the table is refused, with the statement to run by hand). A rename, or a drop
    /// under `fail`/`apply`, always stops the sync: rebuild, or change MySQL to match.
    #[serde(default)]
    #[schemars(extend("default" = "fail"))]
    pub schema_changes: SchemaChanges,
    /// How to reach an `s3://` warehouse (or `path`): endpoint, region, path-style requests and
    /// credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3: Option<S3Spec>,
    /// The Hadoop client configuration of an HDFS warehouse: a ConfigMap with `core-site.xml`
    /// and `hdfs-site.xml` (an HA nameservice's namenodes, `fs.defaultFS`,
    /// `hadoop.security.authentication`, `dfs.data.transfer.protection`), mounted into the
    /// workers with `HADOOP_CONF_DIR` naming it. Run standalone, set `HADOOP_CONF_DIR` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hadoop_conf: Option<ConfigMapRef>,
    /// Kerberos for an HDFS warehouse whose `core-site.xml` says
    /// `hadoop.security.authentication: kerberos`: the worker logs in as `principal` from its
    /// keytab.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kerberos: Option<KerberosSpec>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigMapRef {
    /// The ConfigMap's name, in the sync's namespace.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// A Kerberos login from a keytab. Under the operator the keytab Secret and the `krb5.conf`
/// ConfigMap are mounted into the workers; run standalone, the worker takes them from
/// `KRB5_CLIENT_KTNAME` and `KRB5_CONFIG` (the Kerberos library's own variables) and these
/// references are not used.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct KerberosSpec {
    /// The client principal (`pms@EXAMPLE.COM`, `pms/host@EXAMPLE.COM`): the keytab's first
    /// entry must be this one (the Kerberos library logs in as that entry); a start with
    /// another is refused, naming both.
    #[schemars(length(min = 1, max = 512))]
    pub principal: String,
    /// The Secret holding the keytab (key default `keytab`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keytab_secret_ref: Option<KeyRef>,
    /// The ConfigMap holding `krb5.conf` (key default `krb5.conf`): the realm and its KDCs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub krb5_conf_config_map_ref: Option<KeyRef>,
}

/// One key of a Secret or ConfigMap; `key` has the default its field names.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyRef {
    /// The Secret's or ConfigMap's name, in the sync's namespace.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// The key holding the file; unset: the default its field names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub key: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SchemaChanges {
    /// Stop before the first snapshot of a new schema.
    #[default]
    Fail,
    /// Go on without the changed columns.
    Ignore,
    /// Add new columns to MySQL, then go on.
    Apply,
}

/// `source.pollInterval` when unset.
pub const DEFAULT_POLL_INTERVAL: HumanDuration = HumanDuration::from_secs(1);

fn default_poll_interval() -> HumanDuration {
    DEFAULT_POLL_INTERVAL
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ScanMode {
    /// Full merge-on-read of the latest snapshot, then its changes.
    #[default]
    LatestFull,
    /// Changes only, from the snapshot after the latest.
    Latest,
    /// Changes from `startSnapshot` on (that snapshot's own changes included).
    FromSnapshot,
    /// A full read of `startSnapshot`, then the changes of every later one (Flink's
    /// `from-snapshot-full`).
    FromSnapshotFull,
    /// Changes from the first snapshot committed at or after `startTimestamp`.
    FromTimestamp,
}

// When a commit reaches MySQL: `source.freshness` (described there: a doc comment here would
// replace the field's in the schema).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Freshness {
    /// From the changelog compaction writes, as Paimon's streaming read.
    #[default]
    Changelog,
    /// At commit: each commit's level-0 files, as a Paimon batch query sees them.
    Commit,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct S3Spec {
    /// S3 endpoint URL, for S3-compatible stores (MinIO, …); default: AWS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The bucket's region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Path-style requests (`endpoint/bucket/key`), as most S3-compatible stores want.
    #[serde(default)]
    pub path_style: bool,
    /// Secret with keys `accessKeyId` and `secretAccessKey` (given to the workers as
    /// `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`). Run standalone, the worker reads
    /// those variables instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_secret_ref: Option<SecretRef>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SecretRef {
    /// The Secret's name, in the sync's namespace.
    #[schemars(length(min = 1))]
    pub name: String,
}

/// Where to write: one MySQL/MariaDB table with the same primary key.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {"rule": "self.table == oldSelf.table",
     "message": "a sync's MySQL table (sink.table) can't change: its checkpoints describe the old one. To write another table, create a new PaimonMysqlSync (its first run reads in full and removes the rows the table holds that Paimon doesn't) and delete this one"},
    {"rule": "!self.url.matches('^mysql://[^/@:]*:[^/@]+@')",
     "message": "sink.url carries a password, which would be copied into the sync's ConfigMap for anyone who can read ConfigMaps: put it in the Secret of sink.credentialsSecretRef (key password) and leave only user@ (or nothing) in the URL"}
]))]
pub struct SinkSpec {
    /// `mysql://host:port/database` (port default 3306). It may carry `user:password@`
    /// (percent-escaped) run standalone; under the operator a password is refused (use
    /// `credentialsSecretRef`). The variables `MYSQL_USER` and `MYSQL_PASSWORD` (under the
    /// operator, from that Secret) win over the URL's. No user at all means `root`.
    #[schemars(regex(
        pattern = r"^mysql://([^/@]*@)?(\[[0-9a-fA-F:.]+\]|[^/@:?\[\]]+)(:[0-9]{1,5})?/[^/?]+$"
    ))]
    pub url: String,
    /// Secret with keys `username` and `password` (given to the workers as `MYSQL_USER` and
    /// `MYSQL_PASSWORD`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_secret_ref: Option<SecretRef>,
    /// The target table in the URL's database. It must exist, with a PRIMARY KEY (or UNIQUE
    /// key) on exactly the Paimon table's primary key columns (as renamed by `columns`).
    #[schemars(length(min = 1))]
    pub table: String,
    #[serde(default)]
    pub columns: ColumnMapping,
    /// Create the table when it is missing, from the Paimon schema (the types of
    /// `pms-worker check`'s suggestion: exact DECIMAL and DATETIME precision, text keys with a
    /// binary collation, unbounded text and bytes keys sharing InnoDB's 3072-byte key limit);
    /// the statement is logged and published. Off by default: a missing table is an error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub create_table: bool,
    /// Flush after this many input records (0 = off; Flink's `sink.buffer-flush.max-rows`).
    /// Unset: 1000 records of changes, and a full read flushes every 10,000 rows (its flushes
    /// are bulk loads, cheaper per row the larger they are; `maxBufferBytes` still bounds
    /// them). Set, a full read flushes at it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rows: Option<u32>,
    /// Flush at least this often while changes are buffered (0s = off).
    #[serde(default = "default_flush_interval")]
    pub flush_interval: HumanDuration,
    /// Rows per multi-row statement at most (each statement also stays under
    /// `max_allowed_packet`).
    #[serde(default = "default_max_rows_per_statement")]
    #[schemars(range(min = 1, max = 65535))]
    pub max_rows_per_statement: u32,
    /// Hard memory bound, in bytes, of the changes held at once: the buffer being filled and
    /// the batches being written (each write in flight takes a share); reaching it flushes early.
    #[serde(default = "default_max_buffer_bytes")]
    #[schemars(range(min = 65536))]
    pub max_buffer_bytes: u64,
    /// Retries of a lock conflict (deadlock 1213, lock wait timeout 1205) before the flush
    /// fails. A lost connection (the server restarting or failing over) is not counted: it is
    /// retried, reconnecting with backoff, for up to 5 minutes.
    #[serde(default = "default_max_retries")]
    #[schemars(range(max = 100))]
    pub max_retries: u32,
    /// Accept UNIQUE keys on the target besides the one matching the Paimon key. Off by
    /// default: an upsert that collides on another unique key would update a different row.
    #[serde(default)]
    pub allow_extra_unique_keys: bool,
    /// `exactly-once`: progress is committed in the same MySQL transaction as the rows
    /// (table `_paimon_sync_progress`), so a crash never applies a change twice.
    #[serde(default)]
    pub delivery: Delivery,
    /// `snapshot`: all changes of one Paimon snapshot commit in one transaction.
    #[serde(default)]
    pub visibility: Visibility,
    /// With `visibility: snapshot`, a snapshot with more input records than this is committed
    /// in several transactions instead (logged, and counted in `pms_visibility_fallbacks_total`).
    #[serde(default = "default_max_transaction_rows")]
    #[schemars(range(min = 1))]
    pub max_transaction_rows: u64,
    /// Only overwrite or delete a row when the incoming change is at least as new as the one
    /// that wrote it: a replay can't regress a row a newer run or another writer updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_guard: Option<SequenceGuard>,
    /// TLS to MySQL. Default `preferred`, as in the mysql client.
    #[serde(default)]
    pub tls: TlsSpec,
}

/// How the connection to MySQL is secured. The certificate files are PEM.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {"rule": "!(has(self.caFile) && has(self.caSecretRef))", "message": "give caFile or caSecretRef, not both"},
    {"rule": "!has(self.caFile) && !has(self.caSecretRef) || has(self.mode) && (self.mode == 'verify-ca' || self.mode == 'verify-identity')", "message": "a CA is only used by mode verify-ca or verify-identity"},
    {"rule": "!has(self.serverName) || has(self.mode) && self.mode == 'verify-identity'", "message": "serverName is only used by mode verify-identity"},
    {"rule": "has(self.clientCertFile) == has(self.clientKeyFile)", "message": "clientCertFile and clientKeyFile go together"},
    {"rule": "!(has(self.clientCertFile) && has(self.clientCertSecretRef))", "message": "give clientCertFile/clientKeyFile or clientCertSecretRef, not both"}
]))]
pub struct TlsSpec {
    #[serde(default)]
    pub mode: TlsMode,
    /// CA bundle the server's certificate must chain to (`verify-ca`, `verify-identity`).
    /// Without one, those modes trust the built-in Mozilla roots (not the system's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<String>,
    /// The same from a Secret (key `ca.crt` unless `key` says otherwise), mounted into the
    /// workers by the operator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_secret_ref: Option<SecretKeyRef>,
    /// Client certificate (chain) and its key, for a user created `REQUIRE X509` or `SUBJECT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cert_file: Option<String>,
    /// The client certificate's private key, with `clientCertFile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_key_file: Option<String>,
    /// The same from a `kubernetes.io/tls` Secret (keys `tls.crt`, `tls.key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cert_secret_ref: Option<SecretRef>,
    /// With `verify-identity`: the name the certificate must carry, when it is not the URL's host
    /// (e.g. connecting by IP or through a proxy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub server_name: Option<String>,
}

/// The mysql client's `--ssl-mode`, lower-case.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TlsMode {
    /// Plaintext.
    Disabled,
    /// TLS when the server offers it (certificate not checked), else plaintext with a warning.
    #[default]
    Preferred,
    /// TLS or no connection; the certificate is not checked (encryption against eavesdroppers,
    /// not against an impostor).
    Required,
    /// TLS, and the certificate must chain to the CA; its names are not checked.
    VerifyCa,
    /// TLS, the certificate must chain to the CA and name the host (or `serverName`).
    VerifyIdentity,
}

/// One key of a Secret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SecretKeyRef {
    /// The Secret's name, in the sync's namespace.
    #[schemars(length(min = 1))]
    pub name: String,
    /// The key holding the file.
    #[serde(default = "default_ca_key")]
    #[schemars(length(min = 1))]
    pub key: String,
}

fn default_ca_key() -> String {
    "ca.crt".into()
}

fn default_max_transaction_rows() -> u64 {
    100_000
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct SequenceGuard {
    /// A BIGINT column of the MySQL table (not a Paimon column) holding the Paimon snapshot
    /// id of the change that last wrote the row. NULL counts as older than any change.
    #[schemars(length(min = 1))]
    pub column: String,
}

impl SinkSpec {
    /// The records of changes a flush holds at most (`maxRows`, default 1000; 0 = no bound).
    pub fn max_rows(&self) -> u32 {
        self.max_rows.unwrap_or(1000)
    }

    /// The rows of a full read a flush holds at most: `maxRows` when set, else 10,000.
    pub fn full_read_max_rows(&self) -> u32 {
        self.max_rows.unwrap_or(10_000)
    }
}
fn default_max_rows_per_statement() -> u32 {
    4096
}
fn default_flush_interval() -> HumanDuration {
    HumanDuration::from_secs(1)
}
fn default_max_buffer_bytes() -> u64 {
    64 * 1024 * 1024
}
fn default_max_retries() -> u32 {
    3
}

/// Which Paimon columns go to which MySQL columns. Default: all, by the same name. Key
/// columns can't be left out: excluding one, or an `include` without it, is refused.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct ColumnMapping {
    /// Only these Paimon columns; the key columns must be among them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include: Option<Vec<String>>,
    /// Paimon columns not to write (not key columns).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// Paimon column name → MySQL column name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rename: BTreeMap<String, String>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Delivery {
    #[default]
    AtLeastOnce,
    ExactlyOnce,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Visibility {
    #[default]
    Batch,
    Snapshot,
}

/// Where and how often each slot records its progress (its checkpoint), which a restarted
/// worker resumes from.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {"rule": "!has(self.storage) || self.storage != 's3' || has(self.s3)", "message": "checkpoint.storage s3 needs checkpoint.s3 (bucket, …)"},
    {"rule": "!has(self.storage) || self.storage != 'mysql'", "message": "checkpoint.storage mysql is not implemented: use configmap (or exactly-once delivery, whose progress row in MySQL is the checkpoint)"},
    {"rule": "!has(self.storage) || self.storage != 'file'", "message": "checkpoint.storage file is the standalone worker's (a pod's files go with the pod, and the operator can't read them): under the operator use configmap (the default) or s3"}
]))]
pub struct CheckpointSpec {
    /// A checkpoint is written after a flush once this much time passed since the last one
    /// (0s: after every flush), and always when a worker stops.
    #[serde(default = "default_checkpoint_interval")]
    pub interval: HumanDuration,
    /// `configmap` (`<sync>-checkpoint-<slot>`, the operator's default), `file` (the
    /// standalone default; refused under the operator) or `s3` (with `s3`); `mysql` is not
    /// implemented and refused. With `sink.delivery: exactly-once` the progress row in MySQL
    /// wins over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<CheckpointStorage>,
    /// Checkpoint file with `storage: file`; a relative path is relative to the config
    /// file's directory. Default `pms-checkpoint-<sync>.json` (sync name sanitized as for
    /// `consumerId`). With more than one slot, slot k of n uses `<path>.slot<k>-of-<n>`
    /// (default: `pms-checkpoint-<sync>.slot<k>-of-<n>.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Keep checkpoint ConfigMaps when the resource is deleted.
    #[serde(default)]
    pub retain_on_delete: bool,
    /// With `storage: s3`: where (`s3://<bucket>/<prefix>/<sync>-checkpoint-<slot>.json`, where
    /// `<sync>` is `<namespace>_<name>` under the operator; savepoint data beside them in
    /// `savepoints/<sync>/<savepoint>.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3: Option<CheckpointS3>,
}

/// An S3 location for checkpoints.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointS3 {
    /// The bucket.
    #[schemars(length(min = 1))]
    pub bucket: String,
    /// The key prefix the checkpoints are written under; unset: the bucket's root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// The endpoint URL, for S3-compatible stores; default AWS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The bucket's region; default `us-east-1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Path-style requests (`endpoint/bucket/key`), as most S3-compatible stores want.
    #[serde(default)]
    pub path_style: bool,
    /// Secret with keys `accessKeyId` and `secretAccessKey`, read by the workers and the
    /// operator. Without it: `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` of each process
    /// (the workers get `source.s3`'s Secret as those).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_secret_ref: Option<SecretRef>,
}

impl Default for CheckpointSpec {
    fn default() -> Self {
        Self {
            interval: default_checkpoint_interval(),
            storage: None,
            path: None,
            retain_on_delete: false,
            s3: None,
        }
    }
}

fn default_checkpoint_interval() -> HumanDuration {
    HumanDuration::from_secs(10)
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CheckpointStorage {
    Configmap,
    S3,
    File,
    Mysql,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SyncState {
    #[default]
    Running,
    Suspended,
}
