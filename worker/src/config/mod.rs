//! The worker's resolved configuration: the `PaimonMysqlSync` spec from a YAML file (a bare
//! `spec` or a whole resource), this process's slot, and credentials from the URL or env.

use std::path::{Path, PathBuf};

use pms_crds::contract::{
    consumer_id, external_name, legacy_external_name, sanitize, Slot, ENV_AWS_ACCESS_KEY_ID,
    ENV_AWS_SECRET_ACCESS_KEY, ENV_AWS_SESSION_TOKEN, ENV_CHECKPOINT_S3_ACCESS_KEY_ID,
    ENV_CHECKPOINT_S3_SECRET_ACCESS_KEY, ENV_MYSQL_PASSWORD, ENV_MYSQL_USER, ENV_NAMESPACE,
    ENV_SYNC_NAME,
};
use pms_crds::{CheckpointStorage, PaimonMysqlSyncSpec};
use serde::Deserialize;

use crate::error::{Result, WorkerError};

mod tls;
pub use tls::MysqlTls;

/// Everything the worker needs, resolved once at start.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    pub spec: PaimonMysqlSyncSpec,
    /// A name for this sync, used in the checkpoint and the progress table.
    pub sync_name: String,
    pub slot: Slot,
    pub mysql: MysqlTarget,
    pub checkpoint: CheckpointTarget,
    pub consumer_id: String,
    /// Under the operator, the pod's namespace (`PMS_NAMESPACE`).
    pub pod_namespace: Option<String>,
    /// How the sync's checkpoint files are named, slot by slot (used with file checkpoints).
    pub checkpoint_files: CheckpointFiles,
    /// A table of a pooled worker (its MySQL pool is the worker's, `RunOptions::mysql`).
    pub pooled: bool,
}

/// Slot K of N's checkpoint file: `checkpoint.path` (default `pms-checkpoint-<sync>.json`), with
/// `.slotK-of-N` when the sync has several slots, beside the config file when relative; then
/// `suffix` (a rebuild's new generation: `.rebuild`).
#[derive(Clone, Debug)]
pub struct CheckpointFiles {
    configured: Option<String>,
    sync_name: String,
    config_dir: Option<PathBuf>,
    pub suffix: String,
}

impl CheckpointFiles {
    pub fn path(&self, slot: Slot) -> PathBuf {
        let layout = if slot.count > 1 {
            format!(".slot{}-of-{}", slot.index, slot.count)
        } else {
            String::new()
        };
        let path = match &self.configured {
            Some(p) => format!("{p}{layout}"),
            None => format!("pms-checkpoint-{}{layout}.json", sanitize(&self.sync_name)),
        };
        beside_config(self.config_dir.as_deref(), format!("{path}{}", self.suffix))
    }
}

/// Where checkpoints go: a local file (standalone default) or a ConfigMap (operator default).
#[derive(Clone, Debug, PartialEq)]
pub enum CheckpointTarget {
    File(PathBuf),
    /// `<sync>-checkpoint-<slot>` in this namespace (or the kubeconfig's).
    ConfigMap {
        namespace: Option<String>,
    },
    /// `s3://<bucket>/<prefix>/<sync>-checkpoint-<slot>.json`.
    S3(S3Target),
    /// Only the exactly-once progress row (a pooled table: its worker keeps no store per table).
    ProgressRow,
}

pub use pms_runtime::s3::S3Target;

/// Connection data for the target. `Debug` never prints the password.
#[derive(Clone)]
pub struct MysqlTarget {
    pub host: String,
    pub port: u16,
    pub database: String,
    pub user: String,
    pub password: Option<String>,
    pub tls: MysqlTls,
}

impl std::fmt::Debug for MysqlTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.redacted_url())
    }
}

impl MysqlTarget {
    /// The URL for logs and errors: user shown, password never.
    pub fn redacted_url(&self) -> String {
        format!(
            "mysql://{}@{}:{}/{}",
            self.user, self.host, self.port, self.database
        )
    }

    /// Parses `mysql://[user[:password]@]host[:port]/database`; `MYSQL_USER` and
    /// `MYSQL_PASSWORD` (e.g. from a Kubernetes Secret) win over the URL's.
    pub fn from_url(
        url: &str,
        tls: MysqlTls,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self> {
        let parsed = url::Url::parse(url).map_err(|e| {
            WorkerError::Config(format!(
                "sink.url is not a URL ({e}); write mysql://host:3306/database"
            ))
        })?;
        if parsed.scheme() != "mysql" {
            return Err(WorkerError::Config(format!(
                "sink.url must start with mysql://, not {}://",
                parsed.scheme()
            )));
        }
        let host = parsed
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| {
                WorkerError::Config("sink.url has no host: write mysql://host:3306/database".into())
            })?
            .to_string();
        if let Some(query) = parsed.query() {
            // A driver option here (`?ssl-mode=REQUIRED`) would be silently ignored.
            return Err(WorkerError::Config(format!(
                "sink.url takes no parameters (found ?{query}): TLS is set with sink.tls, the rest in sink"
            )));
        }
        let database = parsed.path().trim_start_matches('/').to_string();
        if database.is_empty() || database.contains('/') {
            return Err(WorkerError::Config(
                "sink.url must name exactly one database: mysql://host:3306/database".into(),
            ));
        }
        let decode = |s: &str| {
            percent_decode(s).map_err(|_| {
                WorkerError::Config("sink.url has a badly escaped user or password".into())
            })
        };
        let url_user = (!parsed.username().is_empty())
            .then(|| decode(parsed.username()))
            .transpose()?;
        let url_password = parsed.password().map(decode).transpose()?;
        let user = env(ENV_MYSQL_USER)
            .or(url_user)
            .unwrap_or_else(|| "root".to_string());
        let password = env(ENV_MYSQL_PASSWORD).or(url_password);
        Ok(Self {
            host,
            port: parsed.port().unwrap_or(3306),
            database,
            user,
            password,
            tls,
        })
    }
}

fn percent_decode(s: &str) -> std::result::Result<String, ()> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).ok_or(())?;
            let hex = std::str::from_utf8(hex).map_err(|_| ())?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| ())?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| ())
}

/// A location on local disk, absolute (the Paimon reader takes no relative path: it is
/// relative to the config file's directory); a URI as it is.
fn local_location(base_dir: Option<&Path>, location: &str) -> String {
    if location.contains("://") {
        return location.to_string();
    }
    let path = beside_config(base_dir, location);
    std::path::absolute(&path)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// A relative path is relative to the config file's directory, so a sync's files stay together.
fn beside_config(base_dir: Option<&Path>, path: impl Into<PathBuf>) -> PathBuf {
    let path = path.into();
    match base_dir {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path,
    }
}

/// A whole resource in the config file (`apiVersion` and `kind` ignored).
#[derive(Deserialize)]
struct ResourceFile<S> {
    metadata: Option<Metadata>,
    spec: S,
}

#[derive(Deserialize)]
struct Metadata {
    name: Option<String>,
}

/// A config file's text as a bare spec, or as a whole resource when it has a `spec:` key (then
/// with its `metadata.name`). Parsed from the text: an error names the field's path and line.
pub(crate) fn resource_or_spec<S: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<(Option<String>, S)> {
    let value: serde_yaml::Value = serde_yaml::from_str(text)
        .map_err(|e| WorkerError::Config(format!("the config file is not YAML: {e}")))?;
    let config_err = |e: serde_yaml::Error| WorkerError::Config(e.to_string());
    if value.get("spec").is_some() {
        let file: ResourceFile<S> = serde_yaml::from_str(text).map_err(config_err)?;
        Ok((file.metadata.and_then(|m| m.name), file.spec))
    } else {
        Ok((None, serde_yaml::from_str(text).map_err(config_err)?))
    }
}

impl WorkerConfig {
    pub fn load(path: &Path, slot: Slot, env: &dyn Fn(&str) -> Option<String>) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|source| WorkerError::ConfigFile {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_yaml(&text, slot, env, path.parent())
    }

    pub fn from_yaml(
        text: &str,
        slot: Slot,
        env: &dyn Fn(&str) -> Option<String>,
        base_dir: Option<&Path>,
    ) -> Result<Self> {
        let (name, spec): (_, PaimonMysqlSyncSpec) = resource_or_spec(text)?;
        let sync_name = env(ENV_SYNC_NAME)
            .or(name)
            .unwrap_or_else(|| format!("{}.{}", spec.source.database, spec.source.table));
        if let Some(why) = pms_crds::contract::reserved_sync_name(&sync_name) {
            return Err(WorkerError::Config(format!(
                "{why} (metadata.name in the config file, or {ENV_SYNC_NAME})"
            )));
        }
        Self::resolve(spec, sync_name, slot, env, base_dir)
    }

    pub(crate) fn resolve(
        mut spec: PaimonMysqlSyncSpec,
        sync_name: String,
        slot: Slot,
        env: &dyn Fn(&str) -> Option<String>,
        base_dir: Option<&Path>,
    ) -> Result<Self> {
        use pms_crds::ScanMode;
        let out_of_range = pms_crds::out_of_range(&spec);
        if !out_of_range.is_empty() {
            return Err(WorkerError::Config(format!(
                "values outside the ranges the CRD allows: {}",
                out_of_range.join("; ")
            )));
        }
        match spec.source.scan_mode {
            ScanMode::FromSnapshot | ScanMode::FromSnapshotFull if spec.source.start_snapshot.is_none() => {
                return Err(WorkerError::Config(
                    "scanMode from-snapshot and from-snapshot-full need source.startSnapshot".into(),
                ))
            }
            ScanMode::FromTimestamp if spec.source.start_timestamp.is_none() => {
                return Err(WorkerError::Config(
                    "scanMode from-timestamp needs source.startTimestamp (RFC 3339, e.g. 2026-11-01T00:00:00Z)".into(),
                ))
            }
            _ => {}
        }
        if spec.source.start_from.is_some() {
            if spec.source.scan_mode != ScanMode::LatestFull
                || spec.source.start_snapshot.is_some()
                || spec.source.start_timestamp.is_some()
            {
                return Err(WorkerError::Config(
                    "source.startFrom takes the start from the Flink job's consumer: leave out scanMode, \
                     startSnapshot and startTimestamp"
                        .into(),
                ));
            }
            if slot.count > 1 {
                return Err(WorkerError::Config(format!(
                    "source.startFrom takes over with one slot, not {}: take over with parallelism 1, then \
                     raise it (a rescale starts the new slots at a consistent snapshot)",
                    slot.count
                )));
            }
        }
        // A warehouse on local disk given as a relative path is, as every path of the file,
        // relative to the config file's directory (not to where the worker was started).
        // (`source.path` alike.)
        spec.source.warehouse = local_location(base_dir, &spec.source.warehouse);
        spec.source.path = spec
            .source
            .path
            .as_deref()
            .map(|p| local_location(base_dir, p));
        let tls = MysqlTls::resolve(&spec.sink.tls, base_dir)?;
        let mysql = MysqlTarget::from_url(&spec.sink.url, tls, env)?;
        let checkpoint_files = CheckpointFiles {
            configured: spec.checkpoint.path.clone(),
            sync_name: sync_name.clone(),
            config_dir: base_dir.map(Path::to_path_buf),
            suffix: String::new(),
        };
        let checkpoint = match spec.checkpoint.storage {
            None | Some(CheckpointStorage::File) => CheckpointTarget::File(checkpoint_files.path(slot)),
            Some(CheckpointStorage::Configmap) => CheckpointTarget::ConfigMap { namespace: env(ENV_NAMESPACE) },
            Some(CheckpointStorage::S3) => {
                let s3 = spec.checkpoint.s3.as_ref().ok_or_else(|| {
                    WorkerError::Config("checkpoint.storage s3 needs checkpoint.s3 (bucket, prefix, endpoint, …)".into())
                })?;
                CheckpointTarget::S3(S3Target {
                    bucket: s3.bucket.clone(),
                    prefix: s3.prefix.clone().unwrap_or_default().trim_matches('/').to_string(),
                    endpoint: s3.endpoint.clone(),
                    region: s3.region.clone(),
                    path_style: s3.path_style,
                    // The checkpoint's own credentials (`checkpoint.s3.credentialsSecretRef`), else
                    // the warehouse's.
                    access_key_id: env(ENV_CHECKPOINT_S3_ACCESS_KEY_ID).or_else(|| env(ENV_AWS_ACCESS_KEY_ID)),
                    secret_access_key: env(ENV_CHECKPOINT_S3_SECRET_ACCESS_KEY)
                        .or_else(|| env(ENV_AWS_SECRET_ACCESS_KEY)),
                    // A session token goes with the AWS_* keys it was issued with.
                    session_token: match env(ENV_CHECKPOINT_S3_ACCESS_KEY_ID) {
                        Some(_) => None,
                        None => env(ENV_AWS_SESSION_TOKEN),
                    },
                })
            }
            Some(other) => {
                return Err(WorkerError::Config(format!(
                    "checkpoint.storage {other:?} is not available in this worker; use file, configmap or s3"
                )))
            }
        };
        let pod_namespace = env(ENV_NAMESPACE);
        let consumer_id = consumer_id(
            spec.source.consumer_id.as_deref(),
            &external_name(pod_namespace.as_deref(), &sync_name),
            slot,
        );
        Ok(Self {
            spec,
            sync_name,
            slot,
            mysql,
            checkpoint,
            consumer_id,
            pod_namespace,
            checkpoint_files,
            pooled: false,
        })
    }

    /// The same sync's config for another of its slots.
    pub fn for_slot(&self, slot: Slot) -> WorkerConfig {
        let mut other = self.clone();
        other.slot = slot;
        other.consumer_id = consumer_id(
            self.spec.source.consumer_id.as_deref(),
            &self.external_name(),
            slot,
        );
        if let CheckpointTarget::File(_) = &self.checkpoint {
            other.checkpoint = CheckpointTarget::File(self.checkpoint_files.path(slot));
        }
        other
    }

    /// Where this worker's ConfigMaps (control, reports, notes) live, when it has any: with
    /// ConfigMap checkpoints (their namespace; `None`: the kubeconfig's), or under the operator
    /// whatever the checkpoint store (the pod's).
    pub fn config_map_namespace(&self) -> Option<Option<String>> {
        if self.pooled {
            // A pooled table has no ConfigMaps of its own: its worker reports for it.
            return None;
        }
        match &self.checkpoint {
            CheckpointTarget::ConfigMap { namespace } => Some(namespace.clone()),
            _ => self.pod_namespace.clone().map(Some),
        }
    }

    /// The sync's name outside its namespace: S3 checkpoint keys, Paimon consumer ids, slot
    /// locks and exactly-once progress rows (see `contract::external_name`).
    pub fn external_name(&self) -> String {
        external_name(self.pod_namespace.as_deref(), &self.sync_name)
    }

    /// The Paimon consumer id without a slot suffix (`consumerId`, default `pms-<external name>`).
    pub fn consumer_base(&self) -> String {
        consumer_id(
            self.spec.source.consumer_id.as_deref(),
            &self.external_name(),
            Slot::SINGLE,
        )
    }

    /// What an earlier release named them by, when it differs (their migration).
    pub fn legacy_external_name(&self) -> Option<String> {
        legacy_external_name(self.pod_namespace.as_deref(), &self.sync_name)
    }

    /// `db.table` of the target, for messages.
    pub fn target_name(&self) -> String {
        format!("{}.{}", self.mysql.database, self.spec.sink.table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    const MINIMAL: &str = "
source: {warehouse: /tmp/wh, database: shop, table: orders}
sink: {url: 'mysql://app:s%40cret@127.0.0.1:3307/serving', table: orders_rt}
";

    #[test]
    fn a_take_over_is_one_slot_and_no_other_start() {
        let with = |extra: &str, slots: u32| {
            let yaml = format!(
                "source: {{warehouse: /tmp/wh, database: shop, table: orders, startFrom: {{flinkConsumer: job-1}}{extra}}}\n\
                 sink: {{url: 'mysql://app@127.0.0.1/serving', table: orders_rt}}\nparallelism: {slots}\n"
            );
            WorkerConfig::from_yaml(&yaml, Slot::new(0, slots).unwrap(), &no_env, None)
        };
        let cfg = with("", 1).unwrap();
        let from = cfg.spec.source.start_from.as_ref().unwrap();
        assert_eq!(from.stopped_for.0, std::time::Duration::from_secs(60));
        assert!(!from.keep_flink_consumer);
        for (extra, slots, names) in [
            ("", 2, "parallelism 1"),
            (", scanMode: latest", 1, "scanMode"),
            (
                ", scanMode: from-snapshot, startSnapshot: 3",
                1,
                "startSnapshot",
            ),
        ] {
            let err = with(extra, slots).unwrap_err().to_string();
            assert!(err.contains(names), "{extra} {slots}: {err}");
        }
    }

    #[test]
    fn bare_spec_takes_defaults_and_url_credentials() {
        let cfg =
            WorkerConfig::from_yaml(MINIMAL, Slot::new(0, 1).unwrap(), &no_env, None).unwrap();
        assert_eq!(cfg.mysql.user, "app");
        assert_eq!(cfg.mysql.password.as_deref(), Some("s@cret"));
        assert_eq!(cfg.mysql.port, 3307);
        assert_eq!(cfg.spec.sink.max_rows(), 1000);
        assert_eq!(cfg.consumer_id, "pms-shop-orders");
        assert!(
            !format!("{:?}", cfg.mysql).contains("cret"),
            "Debug must not print the password"
        );
    }

    #[test]
    fn a_relative_warehouse_is_beside_the_config_file_as_every_path_of_it() {
        let dir = Path::new("/etc/sync");
        let load = |warehouse: &str| {
            let text = MINIMAL.replace("/tmp/wh", warehouse);
            let cfg = WorkerConfig::from_yaml(&text, Slot::SINGLE, &no_env, Some(dir)).unwrap();
            cfg.spec.source.warehouse
        };
        assert_eq!(load("warehouse"), "/etc/sync/warehouse");
        assert_eq!(load("/data/wh"), "/data/wh");
        assert_eq!(load("s3://lake/wh"), "s3://lake/wh");
        assert_eq!(load("'hdfs:///wh'"), "hdfs:///wh");
    }

    #[test]
    fn env_password_wins_and_slots_get_their_own_files() {
        let env = |k: &str| (k == "MYSQL_PASSWORD").then(|| "from-env".to_string());
        let cfg = WorkerConfig::from_yaml(MINIMAL, Slot::new(2, 3).unwrap(), &env, None).unwrap();
        assert_eq!(cfg.mysql.password.as_deref(), Some("from-env"));
        let CheckpointTarget::File(path) = &cfg.checkpoint else {
            panic!("file by default")
        };
        assert!(path.to_string_lossy().ends_with(".slot2-of-3.json"));
        assert_eq!(cfg.consumer_id, "pms-shop-orders-slot2");
    }

    #[test]
    fn a_sync_name_that_names_a_rebuild_is_refused() {
        let env = |k: &str| (k == ENV_SYNC_NAME).then(|| "orders-rebuild".to_string());
        let err = WorkerConfig::from_yaml(MINIMAL, Slot::SINGLE, &env, None).unwrap_err();
        assert!(
            err.to_string().contains("names a rebuild's new generation"),
            "{err}"
        );
    }

    #[test]
    fn a_long_standalone_sync_name_is_accepted() {
        // The 55-character limit is Kubernetes' (Job names are label values), not a sync's.
        let long = format!("shop.{}", "t".repeat(80));
        let env = |k: &str| (k == ENV_SYNC_NAME).then(|| long.clone());
        let cfg = WorkerConfig::from_yaml(MINIMAL, Slot::SINGLE, &env, None).unwrap();
        assert_eq!(cfg.sync_name, long);
    }

    #[test]
    fn whole_resource_is_accepted() {
        let text = format!("apiVersion: paimonsync.io/v1alpha1\nkind: PaimonMysqlSync\nmetadata: {{name: o2m}}\nspec:\n{}",
            MINIMAL.lines().map(|l| format!("  {l}\n")).collect::<String>());
        let cfg = WorkerConfig::from_yaml(&text, Slot::new(0, 1).unwrap(), &no_env, None).unwrap();
        assert_eq!(cfg.sync_name, "o2m");
    }

    #[test]
    fn unknown_scan_mode_and_bad_slot_are_refused() {
        let bad = MINIMAL.replace("table: orders}", "table: orders, scanMode: newest}");
        let err =
            WorkerConfig::from_yaml(&bad, Slot::new(0, 1).unwrap(), &no_env, None).unwrap_err();
        assert!(err.to_string().contains("newest"), "{err}");
        assert!(Slot::new(3, 3).is_err());
    }

    #[test]
    fn a_misspelt_field_is_refused_with_its_path_and_line() {
        let slot = Slot::new(0, 1).unwrap();
        let bare = MINIMAL.replace("table: orders_rt}", "table: orders_rt, maxRow: 5}");
        let err = WorkerConfig::from_yaml(&bare, slot, &no_env, None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("sink: unknown field `maxRow`") && err.contains("line 3"),
            "{err}"
        );
        let resource = format!(
            "apiVersion: paimonsync.io/v1alpha1\nkind: PaimonMysqlSync\nmetadata: {{name: s}}\nspec:\n{}",
            MINIMAL.replace("sink: {", "sink: {tsl: {}, ").lines().map(|l| format!("  {l}\n")).collect::<String>()
        );
        let err = WorkerConfig::from_yaml(&resource, slot, &no_env, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("spec.sink: unknown field `tsl`"), "{err}");
    }

    #[test]
    fn values_outside_the_crds_ranges_are_refused_as_the_api_server_refuses_them() {
        let bad = MINIMAL.replace(
            "table: orders_rt}",
            "table: orders_rt, maxRowsPerStatement: 0, maxBufferBytes: 1000}",
        );
        let err = WorkerConfig::from_yaml(&bad, Slot::new(0, 1).unwrap(), &no_env, None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "spec.sink.maxRowsPerStatement in body should be greater than or equal to 1"
            ) && err.contains("spec.sink.maxBufferBytes: Invalid value: 1000"),
            "{err}"
        );
    }

    #[test]
    fn slot_owns_buckets_modulo() {
        let s = Slot::new(1, 3).unwrap();
        assert!(s.owns_bucket(1) && s.owns_bucket(4) && !s.owns_bucket(0) && !s.owns_bucket(5));
    }
}
