//! `PaimonMysqlDatabaseSync`: many tables of one Paimon database, one definition. It is a
//! generator, like Argo CD's ApplicationSet: the operator stamps out one `PaimonMysqlSync` per
//! matching table from `spec.template` (`{table}` standing for the table's name) and
//! `spec.overrides`, so every table keeps all of a single sync's guarantees, status and
//! operations. A standalone worker runs the same file's tables in one process.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::{HumanDuration, PaimonMysqlSyncSpec, SyncPhase};

/// What stands for the table's name in `spec.template`.
pub const TABLE_PLACEHOLDER: &str = "{table}";

/// Keeps the matching tables of one Paimon database mirrored in MySQL, one `PaimonMysqlSync`
/// per table (named `<this>-<table>`).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[kube(
    group = "paimonsync.io",
    version = "v1alpha1",
    kind = "PaimonMysqlDatabaseSync",
    plural = "paimonmysqldatabasesyncs",
    shortname = "pmds",
    namespaced,
    status = "DatabaseSyncStatus",
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Tables","type":"string","jsonPath":".status.tablesReady"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {"rule": "!has(self.placement) || !has(self.placement.mode) || self.placement.mode != 'pooled' || has(self.template.sink.delivery) && self.template.sink.delivery == 'exactly-once'", "message": "placement pooled needs template.sink.delivery exactly-once (a table moved between workers resumes from its progress row, whose epoch fences the worker it left)"},
    {"rule": "!has(self.placement) || !has(self.placement.mode) || self.placement.mode != 'pooled' || !has(self.template.parallelism) || self.template.parallelism == 1", "message": "placement pooled runs each table as one slot: template.parallelism must be 1"}
]))]
pub struct PaimonMysqlDatabaseSyncSpec {
    /// Which tables of `template.source.database` are synced.
    pub tables: TableSelector,
    /// How often the database is listed for new and dropped tables (at least 1s).
    #[serde(default = "default_discovery_interval")]
    pub discovery_interval: HumanDuration,
    /// The spec of every table's sync. `{table}` stands for the Paimon table's name wherever
    /// it appears: `source.table` must be `{table}`; `sink.table` must contain it (e.g.
    /// `{table}_rt`), and so must `checkpoint.path` and `source.consumerId` when they are set.
    pub template: PaimonMysqlSyncSpec,
    /// Per table (by its Paimon name), a JSON merge patch (RFC 7386) over the template, e.g.
    /// `orders: {sink: {maxRows: 5000, columns: {rename: {id: order_id}}}}`. A field that is
    /// not the sync's is refused for that table.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "overrides_schema")]
    pub overrides: BTreeMap<String, Json>,
    /// Where the tables run: a `PaimonMysqlSync` (and its pods) per table (`perTable`, the
    /// default), or `pooled` on a few shared worker pods.
    #[serde(default)]
    pub placement: Placement,
}

/// How a database sync's tables are placed on worker pods.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    /// `perTable`: a `PaimonMysqlSync` (and its pods) per table; `pooled`: the tables share
    /// `workers` pods.
    #[serde(default)]
    pub mode: PlacementMode,
    /// `pooled`: how many worker pods share the tables (each table on one of them, chosen by
    /// rendezvous hashing of its name, so adding or removing a worker moves only the tables
    /// that must move).
    #[serde(default = "default_pool_workers")]
    #[schemars(range(min = 1, max = 64))]
    pub workers: u32,
    /// `pooled`: at most this many tables of one worker in their full read at once; the
    /// others wait in a queue (their place shows in the status).
    #[serde(default = "default_max_full_reads")]
    #[schemars(range(min = 1, max = 64))]
    pub max_full_reads: u32,
    /// `pooled`: the MySQL connections one worker opens at most, shared by its tables.
    #[serde(default = "default_max_connections")]
    #[schemars(range(min = 2, max = 1000))]
    pub max_connections_per_worker: u32,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PlacementMode {
    /// A `PaimonMysqlSync` per table: its own pods, Role, status and every per-sync operation.
    #[default]
    PerTable,
    /// `workers` pods share the tables; each table keeps its own checkpoint (the exactly-once
    /// progress row), consumer and full read, and its status is in the database sync's. A
    /// table whose override asks for an operation or settings of its own runs as its own
    /// `PaimonMysqlSync` meanwhile.
    Pooled,
}

/// Where a table of a pooled database sync runs (`PaimonMysqlDatabaseSyncSpec::pool_fit`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PoolFit {
    /// On the shared workers.
    Shared,
    /// As its own `PaimonMysqlSync`, because of this.
    Own(String),
}

impl Default for Placement {
    fn default() -> Self {
        Self {
            mode: PlacementMode::PerTable,
            workers: default_pool_workers(),
            max_full_reads: default_max_full_reads(),
            max_connections_per_worker: default_max_connections(),
        }
    }
}

fn default_pool_workers() -> u32 {
    2
}

fn default_max_full_reads() -> u32 {
    2
}

fn default_max_connections() -> u32 {
    10
}

fn default_discovery_interval() -> HumanDuration {
    HumanDuration::from_secs(30)
}

fn overrides_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "additionalProperties": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
    })
}

/// Table names and patterns. A table is synced when it is named in `names` or matches
/// `pattern`, and matches no `exclude` pattern.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {"rule": "has(self.names) && size(self.names) > 0 || has(self.pattern)", "message": "name tables in names, or give a pattern"}
]))]
pub struct TableSelector {
    /// Tables synced by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// A regular expression the whole table name must match, e.g. `dim_.*|fact_.*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Regular expressions (whole name) of tables left out, even when named.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
}

/// [`TableSelector`] with its patterns compiled.
#[derive(Clone, Debug)]
pub struct CompiledSelector {
    names: Vec<String>,
    pattern: Option<regex::Regex>,
    exclude: Vec<regex::Regex>,
}

impl CompiledSelector {
    pub fn matches(&self, table: &str) -> bool {
        let chosen = self.names.iter().any(|n| n == table)
            || self.pattern.as_ref().is_some_and(|p| p.is_match(table));
        chosen && !self.exclude.iter().any(|p| p.is_match(table))
    }

    /// The matching tables of `listed`, sorted.
    pub fn select(&self, listed: &[String]) -> Vec<String> {
        let mut chosen: Vec<String> = listed.iter().filter(|t| self.matches(t)).cloned().collect();
        chosen.sort();
        chosen.dedup();
        chosen
    }
}

fn whole_name(what: &str, pattern: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(&format!("^(?:{pattern})$"))
        .map_err(|e| format!("tables.{what} {pattern:?} is not a regular expression: {e}"))
}

impl PaimonMysqlDatabaseSyncSpec {
    /// Checks what the CRD schema can't: the patterns, and `{table}` where a table needs its
    /// own value. Returns the compiled selector.
    pub fn validate(&self) -> Result<CompiledSelector, String> {
        let t = &self.tables;
        if t.names.is_empty() && t.pattern.is_none() {
            return Err("tables: name tables in names, or give a pattern".into());
        }
        let selector = CompiledSelector {
            names: t.names.clone(),
            pattern: t
                .pattern
                .as_deref()
                .map(|p| whole_name("pattern", p))
                .transpose()?,
            exclude: t
                .exclude
                .iter()
                .map(|p| whole_name("exclude", p))
                .collect::<Result<_, _>>()?,
        };
        let tpl = &self.template;
        if tpl.source.table != TABLE_PLACEHOLDER {
            return Err(format!(
                "template.source.table must be {TABLE_PLACEHOLDER} (each table's name goes there), not {:?}",
                tpl.source.table
            ));
        }
        // Anything two tables would share would mix their rows or their progress.
        let per_table = [
            ("template.sink.table", Some(&tpl.sink.table)),
            ("template.checkpoint.path", tpl.checkpoint.path.as_ref()),
            (
                "template.source.consumerId",
                tpl.source.consumer_id.as_ref(),
            ),
        ];
        for (field, value) in per_table {
            if let Some(v) = value.filter(|v| !v.contains(TABLE_PLACEHOLDER)) {
                return Err(format!(
                    "{field} {v:?} would be shared by every table: put {TABLE_PLACEHOLDER} in it (e.g. \"{TABLE_PLACEHOLDER}_rt\")"
                ));
            }
        }
        // An override of a name the selection never takes (a typo) would be left unused.
        if let Some(unused) = self.overrides.keys().find(|t| !selector.matches(t)) {
            return Err(format!(
                "overrides.{unused}: spec.tables selects no table of that name (names, pattern, exclude), \
                 so the override would never apply; correct the name or the selection"
            ));
        }
        if self.discovery_interval.0 < std::time::Duration::from_secs(1) {
            return Err("discoveryInterval must be at least 1s".into());
        }
        if let Some(why) = self.pooled_template_refusal() {
            return Err(format!("template: {why}"));
        }
        Ok(selector)
    }

    /// Where a table of `placement: pooled` runs, from its rendered spec: on the shared pods,
    /// as its own `PaimonMysqlSync` (with its own pods) when it needs what they can't share, or
    /// nowhere (`Err`, why) when it can't move between the two exactly. The shared pods fence
    /// and resume each table by its exactly-once progress row and run it as one slot; so does
    /// a table's own sync, which is why a table can move between them at any commit. Any other
    /// placement: `Shared` (nothing to decide).
    pub fn pool_fit(&self, spec: &PaimonMysqlSyncSpec) -> Result<PoolFit, String> {
        if self.placement.mode != PlacementMode::Pooled {
            return Ok(PoolFit::Shared);
        }
        if spec.sink.delivery != crate::Delivery::ExactlyOnce {
            return Err("placement pooled needs sink.delivery exactly-once: a table moved between workers (or to \
                 and from its own sync) resumes from its progress row, and the row's epoch fences where it left"
                .into());
        }
        if spec.parallelism != 1 {
            return Err(
                "placement pooled runs each table as one slot: parallelism must be 1 (use perTable for more)".into(),
            );
        }
        let tpl = &self.template;
        let operations = [
            // An empty `verify: {}` asks for nothing (no interval, no trigger).
            (
                "verify",
                spec.verify
                    .as_ref()
                    .is_some_and(|v| v.interval.is_some() || v.trigger.is_some()),
            ),
            ("savepoint", spec.savepoint.is_some()),
            ("restoreFrom", spec.restore_from.is_some()),
            (
                "rebuild",
                spec.rebuild.trigger.is_some()
                    || spec.rebuild.policy != crate::RebuildPolicy::Manual,
            ),
            ("rollback", spec.rollback.is_some()),
        ];
        let own: Vec<&str> = operations
            .into_iter()
            .filter(|(_, asked)| *asked)
            .map(|(field, _)| field)
            .chain(
                [
                    ("sink.url", spec.sink.url != tpl.sink.url),
                    (
                        "sink.credentialsSecretRef",
                        spec.sink.credentials_secret_ref != tpl.sink.credentials_secret_ref,
                    ),
                    ("sink.tls", spec.sink.tls != tpl.sink.tls),
                    (
                        "source.warehouse",
                        spec.source.warehouse != tpl.source.warehouse,
                    ),
                    ("source.s3", spec.source.s3 != tpl.source.s3),
                    ("workerPod", spec.worker_pod != tpl.worker_pod),
                    ("state", spec.state != tpl.state),
                    (
                        "checkpoint.storage",
                        spec.checkpoint.storage == Some(crate::CheckpointStorage::Configmap),
                    ),
                ]
                .into_iter()
                .filter(|(_, differs)| *differs)
                .map(|(field, _)| field),
            )
            .collect();
        Ok(match own.as_slice() {
            [] => PoolFit::Shared,
            fields => PoolFit::Own(format!(
                "its override sets {}, which the pooled workers don't share or run",
                fields.join(", ")
            )),
        })
    }

    /// Why the template can't run pooled, if it can't: what a table's override may ask for
    /// (an operation, its own settings) would put every table on its own pods.
    fn pooled_template_refusal(&self) -> Option<String> {
        match self.pool_fit(&self.template) {
            Err(why) => Some(why),
            Ok(PoolFit::Own(_)) if self.template.checkpoint.storage == Some(crate::CheckpointStorage::Configmap) => Some(
                "placement pooled keeps no ConfigMap per table: leave checkpoint.storage unset (the progress row \
                 is the checkpoint) or use s3"
                    .into(),
            ),
            Ok(PoolFit::Own(_)) => Some(
                "placement pooled runs no verify, savepoint, restoreFrom, rebuild or rollback for every table: \
                 ask for them per table in overrides.<table> (that table then runs as its own PaimonMysqlSync \
                 while they are there), or use perTable"
                    .into(),
            ),
            Ok(PoolFit::Shared) => None,
        }
    }

    /// The sync spec of `table`: the template with `{table}` replaced, then the table's
    /// override merged in.
    pub fn render(&self, table: &str) -> Result<PaimonMysqlSyncSpec, String> {
        let mut spec = serde_json::to_value(&self.template)
            .map_err(|e| format!("the template does not serialize: {e}"))?;
        substitute(&mut spec, table);
        if let Some(patch) = self.overrides.get(table) {
            merge_patch(&mut spec, patch);
        }
        serde_json::from_value(spec).map_err(|e| format!("table {table}: overrides.{table}: {e}"))
    }
}

fn substitute(v: &mut Json, table: &str) {
    match v {
        Json::String(s) if s.contains(TABLE_PLACEHOLDER) => {
            *s = s.replace(TABLE_PLACEHOLDER, table)
        }
        Json::Array(items) => items.iter_mut().for_each(|i| substitute(i, table)),
        Json::Object(map) => map.values_mut().for_each(|i| substitute(i, table)),
        _ => {}
    }
}

/// RFC 7386: objects merge key by key, `null` removes, anything else replaces.
fn merge_patch(target: &mut Json, patch: &Json) {
    let Json::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Json::Object(Default::default());
    }
    let Json::Object(map) = target else { return };
    for (k, v) in patch {
        if v.is_null() {
            map.remove(k);
        } else {
            merge_patch(map.entry(k.clone()).or_insert(Json::Null), v);
        }
    }
}

/// The pooled worker (`0..workers`) that runs `table`: rendezvous hashing, the worker whose
/// hash with the table's name is highest. Adding a worker moves to it only the tables it now
/// wins (about 1 in `workers + 1`); removing one moves only its own tables.
pub fn pool_worker(table: &str, workers: u32) -> u32 {
    (0..workers.max(1))
        .max_by_key(|w| {
            let h = table
                .bytes()
                .chain(w.to_le_bytes())
                .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
                });
            // FNV-1a's high bits mix poorly on short inputs: finish with splitmix64's mixer.
            let h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            let h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            h ^ (h >> 31)
        })
        .unwrap_or(0)
}

/// The name of `table`'s `PaimonMysqlSync` (and, standalone, its sync name): `<parent>-<table>`
/// in DNS form (lowercase, `_` and `.` as `-`).
pub fn table_sync_name(parent: &str, table: &str) -> String {
    format!("{parent}-{}", dns_form(table))
}

fn dns_form(table: &str) -> String {
    let table: String = table
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    table.trim_matches('-').to_string()
}

/// The tables of `chosen` whose syncs would have one name (`a_b` and `A-b` are both
/// `<name>-a-b`), each with why: their checkpoints, consumer and Kubernetes objects would mix,
/// so none of them is synced.
/// So are tables whose sync name would end like a rebuild's (`orders_rebuild`: `<name>-orders-rebuild`,
/// the name of the rebuild of `orders`' sync).
pub fn name_clashes(chosen: &[String]) -> BTreeMap<String, String> {
    let mut by_name: BTreeMap<String, Vec<&String>> = BTreeMap::new();
    for t in chosen {
        by_name.entry(dns_form(t)).or_default().push(t);
    }
    let reserved = chosen
        .iter()
        .filter(|t| format!("-{}", dns_form(t)).ends_with(crate::contract::REBUILD_SUFFIX))
        .map(|t| {
            let why = format!(
                "table {t}'s sync name would end with {:?}, which names a rebuild's new generation (of the \
                 sync of table {:?}): it is not synced; exclude it (spec.tables.exclude) or rename the table",
                crate::contract::REBUILD_SUFFIX,
                t.get(..t.len().saturating_sub(8)).unwrap_or_default()
            );
            (t.clone(), why)
        });
    let clashing: BTreeMap<String, String> = by_name
        .into_values()
        .filter(|same| same.len() > 1)
        .flat_map(|same| {
            let all = same.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(", ");
            same.into_iter().map(move |t| {
                let why = format!(
                    "tables {all} would share one sync name (lowercase, `_` and `.` as `-`), hence one \
                     checkpoint and consumer: none of them is synced; exclude all but one (spec.tables.exclude)"
                );
                (t.clone(), why)
            })
        })
        .collect();
    reserved.chain(clashing).collect()
}

/// The status of a `PaimonMysqlDatabaseSync`: its tables' syncs summed up.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseSyncStatus {
    /// The `metadata.generation` of the spec this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `Running` when every table's sync runs, `Degraded` when one does not (the others go
    /// on), `Pending` before the first listing, `Failed` when the spec is invalid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<SyncPhase>,
    /// `running/total`, for `kubectl get pmds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tables_ready: Option<String>,
    /// When the database was last listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listed_at: Option<String>,
    /// Every table; with `placement: pooled` only those not running (at most 50), the others
    /// are counted in `pool`.
    // 50: MAX_POOLED_TABLES_LISTED (a doc comment is the CRD's description, which can't link).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<TableStatus>,
    /// `placement: pooled`: the workers and their tables, counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolStatus>,
    /// `Ready` (every table runs) and `Discovered` (the last listing of the database).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// A pooled database sync's status lists at most this many tables (those not running), so it
/// stays small whatever the number of tables; each worker's ConfigMap `<name>--pool-<k>` has
/// every table's row.
pub const MAX_POOLED_TABLES_LISTED: usize = 50;

/// A pooled database sync's workers and tables, counted.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PoolStatus {
    /// The shared worker pods (`placement.workers`).
    pub workers: u32,
    /// Workers whose report is recent.
    pub workers_reporting: u32,
    /// Tables applying each snapshot's changes.
    pub following: u32,
    /// Tables in their full read.
    pub full_read: u32,
    /// Waiting for a place among their worker's `maxFullReads`.
    pub queued: u32,
    /// Assigned, not started yet (or not reported yet).
    pub starting: u32,
    /// Failed (retried with backoff) or refused (not run).
    pub failed: u32,
    /// Tables running as their own `PaimonMysqlSync` (an override asks for an operation or
    /// settings the pooled workers don't run), or moving to one.
    #[serde(default)]
    pub own_syncs: u32,
}

/// One table's sync: its phase, and why it is not running. Its progress (snapshot, lag,
/// checkpoints) is in its own `PaimonMysqlSync`'s status under `perTable`, so this status
/// changes with a table's phase, not at each of its checkpoints.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TableStatus {
    /// The Paimon table.
    pub table: String,
    /// Its `PaimonMysqlSync`.
    pub sync: String,
    /// The MySQL table.
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<SyncPhase>,
    /// `pooled`: the snapshot its worker last reported (`perTable`: see its sync).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<i64>,
    /// `pooled`: its lag as its worker last reported (`perTable`: see its sync).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_snapshots: Option<i64>,
    /// Not set by this operator any more (a `perTable` table's checkpoints are in its sync's
    /// status).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_checkpoint_time: Option<String>,
    /// Why it is not running (its `Ready` condition's message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(extra: &str) -> PaimonMysqlDatabaseSyncSpec {
        serde_yaml::from_str(&format!(
            "tables: {{pattern: 'dim_.*|fact_.*', exclude: ['.*_tmp']}}
template:
  source: {{warehouse: /wh, database: shop, table: '{{table}}'}}
  sink: {{url: 'mysql://h/db', table: '{{table}}_rt', maxRows: 100}}
{extra}"
        ))
        .unwrap()
    }

    #[test]
    fn selects_by_pattern_and_exclude_on_the_whole_name() {
        let s = spec("").validate().unwrap();
        let listed = ["dim_a", "fact_b", "dim_a_tmp", "xdim_c", "orders"].map(String::from);
        assert_eq!(s.select(&listed), ["dim_a", "fact_b"]);
    }

    #[test]
    fn renders_the_template_and_merges_the_override() {
        let s = spec("overrides: {dim_a: {sink: {maxRows: 5, columns: {rename: {id: a_id}}}}}");
        let a = s.render("dim_a").unwrap();
        assert_eq!(
            (
                a.source.table.as_str(),
                a.sink.table.as_str(),
                a.sink.max_rows
            ),
            ("dim_a", "dim_a_rt", Some(5))
        );
        assert_eq!(
            a.sink.columns.rename.get("id").map(String::as_str),
            Some("a_id")
        );
        assert_eq!(s.render("fact_b").unwrap().sink.max_rows, Some(100));
        let typo = spec("overrides: {dim_a: {sink: {maxRow: 5}}}")
            .render("dim_a")
            .unwrap_err();
        assert!(
            typo.contains("overrides.dim_a") && typo.contains("maxRow"),
            "{typo}"
        );
    }

    #[test]
    fn a_shared_target_or_checkpoint_is_refused() {
        let mut s = spec("");
        s.template.sink.table = "all".into();
        assert!(s.validate().unwrap_err().contains("template.sink.table"));
        let mut s = spec("");
        s.template.checkpoint.path = Some("cp.json".into());
        assert!(s.validate().unwrap_err().contains("checkpoint.path"));
        let mut s = spec("");
        s.tables.pattern = Some("(".into());
        assert!(s
            .validate()
            .unwrap_err()
            .contains("not a regular expression"));
    }

    #[test]
    fn an_override_the_selection_never_takes_is_refused() {
        let err = spec("overrides: {dim_a_tmp: {sink: {maxRows: 5}}}")
            .validate()
            .unwrap_err();
        assert!(err.contains("overrides.dim_a_tmp"), "{err}");
        let err = spec("overrides: {dimm_a: {sink: {maxRows: 5}}}")
            .validate()
            .unwrap_err();
        assert!(err.contains("overrides.dimm_a"), "{err}");
        assert!(
            spec("overrides: {dim_new: {sink: {maxRows: 5}}}")
                .validate()
                .is_ok(),
            "a table still to come"
        );
    }

    #[test]
    fn tables_that_would_share_a_sync_name_are_named() {
        let chosen = ["dim_a", "dim-a", "Dim_A", "fact_b"].map(String::from);
        let clashes = name_clashes(&chosen);
        assert_eq!(
            clashes.keys().collect::<Vec<_>>(),
            ["Dim_A", "dim-a", "dim_a"]
        );
        assert!(
            clashes["dim-a"].starts_with("tables dim_a, dim-a, Dim_A would share"),
            "{}",
            clashes["dim-a"]
        );
    }

    #[test]
    fn a_table_whose_sync_would_look_like_a_rebuild_is_named() {
        let chosen = ["orders", "orders_rebuild", "rebuilds"].map(String::from);
        let clashes = name_clashes(&chosen);
        assert_eq!(clashes.keys().collect::<Vec<_>>(), ["orders_rebuild"]);
        assert!(
            clashes["orders_rebuild"].contains("(of the sync of table \"orders\")"),
            "{}",
            clashes["orders_rebuild"]
        );
    }

    #[test]
    fn adding_a_pool_worker_moves_only_the_tables_it_takes() {
        let tables: Vec<String> = (0..1000).map(|i| format!("t_{i}")).collect();
        let on = |n| tables.iter().map(|t| pool_worker(t, n)).collect::<Vec<_>>();
        let (four, five) = (on(4), on(5));
        let moved: Vec<(u32, u32)> = four
            .iter()
            .zip(&five)
            .filter(|(a, b)| a != b)
            .map(|(a, b)| (*a, *b))
            .collect();
        assert!(
            moved.iter().all(|&(_, to)| to == 4),
            "only to the new worker"
        );
        assert!(
            (150..250).contains(&moved.len()),
            "about 1/5: {}",
            moved.len()
        );
        for w in 0..5 {
            let n = five.iter().filter(|&&x| x == w).count();
            assert!((150..250).contains(&n), "worker {w} runs {n} of 1000");
        }
        // Removing worker 4 again moves back exactly those.
        assert_eq!(on(4), four);
        assert!(on(1).iter().all(|&w| w == 0));
    }

    #[test]
    fn pooled_placement_refuses_what_a_shared_pod_cant_do_exactly() {
        let pooled = "placement: {mode: pooled, workers: 3}";
        let err = spec(pooled).validate().unwrap_err();
        assert!(err.contains("exactly-once"), "{err}");
        let mut s = spec(pooled);
        s.template.sink.delivery = crate::Delivery::ExactlyOnce;
        s.validate().unwrap();
        s.overrides = serde_yaml::from_str(
            "{dim_a: {sink: {url: 'mysql://other/db'}}, fact_b: {sink: {maxRows: 7}}}",
        )
        .unwrap();
        let fit = |s: &PaimonMysqlDatabaseSyncSpec, t: &str| s.pool_fit(&s.render(t).unwrap());
        let Ok(PoolFit::Own(a)) = fit(&s, "dim_a") else {
            panic!("another URL runs on pods of its own")
        };
        assert!(a.contains("sink.url"), "{a}");
        assert_eq!(fit(&s, "fact_b"), Ok(PoolFit::Shared));
        // Per-table operations: that table on its own sync while they are asked for.
        s.overrides = serde_yaml::from_str(
            "{dim_a: {verify: {interval: 1h}, savepoint: {trigger: s1}}, fact_b: {sink: {delivery: at-least-once}}}",
        )
        .unwrap();
        let Ok(PoolFit::Own(a)) = fit(&s, "dim_a") else {
            panic!("a verify runs on the table's own sync")
        };
        assert!(a.contains("verify, savepoint"), "{a}");
        assert!(fit(&s, "fact_b").unwrap_err().contains("exactly-once"));
        // An empty `verify: {}` asks for no verify: the table stays on the pooled workers.
        s.overrides = serde_yaml::from_str("{dim_a: {verify: {}, sink: {maxRows: 7}}}").unwrap();
        assert_eq!(fit(&s, "dim_a"), Ok(PoolFit::Shared));
        s.overrides = serde_yaml::from_str(
            "{dim_a: {verify: {interval: 1h}, savepoint: {trigger: s1}}, fact_b: {sink: {delivery: at-least-once}}}",
        )
        .unwrap();
        // The template can't ask for them: every table would leave the pool.
        s.template.verify = s.render("dim_a").unwrap().verify;
        assert!(s.validate().unwrap_err().contains("overrides.<table>"));
        s.template.verify = None;
        s.template.parallelism = 2;
        assert!(s.validate().unwrap_err().contains("parallelism"));
    }

    #[test]
    fn child_names_are_dns_names() {
        assert_eq!(
            table_sync_name("shop", "Dim_Customer.v2"),
            "shop-dim-customer-v2"
        );
    }
}
