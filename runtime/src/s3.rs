//! One prefix of an S3 bucket (or of an S3-compatible store) through OpenDAL, the S3 client the
//! `paimon` crate already brings. Shared by the worker, which keeps its checkpoints there, and
//! by the operator, which reads them (status, savepoints, rescales) and keeps savepoint data
//! beside them.
//!
//! A store that can't be reached (restarting, a network blip) is retried for up to two minutes
//! before an operation fails; answers (missing, refused, conflicting) are never retried.

use std::future::IntoFuture;
use std::time::{Duration, Instant};

use opendal::{ErrorKind, HttpTransporter, OperationContext, Operator};
use opendal_http_transport_reqwest::ReqwestTransport;
use opendal_service_s3::S3Config;
use tracing::warn;

pub use opendal::{
    EntryMode as S3EntryMode, Error as S3Error, ErrorKind as S3ErrorKind, Metadata as S3Metadata,
};

/// An S3 location and its credentials. `Debug` never prints the secret.
#[derive(Clone, PartialEq)]
pub struct S3Target {
    pub bucket: String,
    /// Without leading or trailing `/`; empty: the bucket's root.
    pub prefix: String,
    pub endpoint: Option<String>,
    pub region: Option<String>,
    pub path_style: bool,
    /// Static keys, with the session token of temporary ones. Without keys the S3 client takes
    /// the AWS credential chain (web identity token file, container credentials, profile, IMDS).
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
    pub session_token: Option<String>,
}

impl std::fmt::Debug for S3Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Target")
            .field("bucket", &self.bucket)
            .field("prefix", &self.prefix)
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("path_style", &self.path_style)
            .field("access_key_id", &self.access_key_id)
            .finish_non_exhaustive()
    }
}

/// The objects under one prefix.
#[derive(Clone)]
pub struct S3Prefix {
    op: Operator,
    bucket: String,
    prefix: String,
}

/// How long an unreachable store is retried before an operation fails.
const RETRY_FOR: Duration = Duration::from_secs(120);

impl S3Prefix {
    pub fn open(target: &S3Target) -> Result<Self, S3Error> {
        let mut cfg = S3Config::default();
        cfg.bucket = target.bucket.clone();
        cfg.endpoint = target.endpoint.clone();
        cfg.region = Some(target.region.clone().unwrap_or_else(|| "us-east-1".into()));
        cfg.enable_virtual_host_style = !target.path_style;
        cfg.access_key_id = target.access_key_id.clone();
        cfg.secret_access_key = target.secret_access_key.clone();
        cfg.session_token = target.session_token.clone();
        let op = Operator::from_config(cfg)?;
        // The reqwest client takes the process's TLS provider (there is no other).
        crate::install_tls_provider();
        let transport = HttpTransporter::new(ReqwestTransport::default());
        Ok(Self {
            op: op.with_context(OperationContext::new().with_http_transport(transport)),
            bucket: target.bucket.clone(),
            prefix: target.prefix.trim_matches('/').to_string(),
        })
    }

    /// The key of object `name` under the prefix.
    pub fn key(&self, name: &str) -> String {
        match self.prefix.as_str() {
            "" => name.to_string(),
            prefix => format!("{prefix}/{name}"),
        }
    }

    /// `s3://<bucket>/<key>` of object `name`, for messages and status.
    pub fn url(&self, name: &str) -> String {
        format!("s3://{}/{}", self.bucket, self.key(name))
    }

    /// The client, for conditional reads and writes.
    pub fn operator(&self) -> &Operator {
        &self.op
    }

    /// Runs `attempt` until it succeeds, fails for good, or two minutes have passed; with how
    /// many attempts failed before.
    pub async fn retrying<T, F, Fut>(&self, what: &str, attempt: F) -> (Result<T, S3Error>, u32)
    where
        F: Fn() -> Fut,
        Fut: IntoFuture<Output = Result<T, S3Error>>,
    {
        let started = Instant::now();
        let mut wait = Duration::from_millis(200);
        let mut failed = 0;
        loop {
            match attempt().await {
                Err(e) if transient(&e) && started.elapsed() < RETRY_FOR => {
                    failed += 1;
                    warn!(bucket = %self.bucket, prefix = %self.prefix, error = %e,
                          retry_in_ms = wait.as_millis() as u64, "S3 {what} failed; retrying");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
                result => return (result, failed),
            }
        }
    }

    /// Object `name`, `None` when there is none.
    pub async fn read(&self, name: &str) -> Result<Option<Vec<u8>>, S3Error> {
        let key = self.key(name);
        match self.retrying("read", || self.op.read(&key)).await.0 {
            Ok(body) => Ok(Some(body.to_vec())),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes object `name` (one PUT), whatever was there.
    pub async fn write(&self, name: &str, body: Vec<u8>) -> Result<(), S3Error> {
        let key = self.key(name);
        let write = || self.op.write(&key, body.clone());
        self.retrying("write", write).await.0.map(drop)
    }

    /// Deletes object `name`; one that is not there counts as deleted.
    pub async fn delete(&self, name: &str) -> Result<(), S3Error> {
        let key = self.key(name);
        self.retrying("delete", || self.op.delete(&key)).await.0
    }

    /// The names of the objects directly in folder `dir` of the prefix (`""`: the prefix
    /// itself; else ending in `/`) that start with `start`.
    pub async fn list(&self, dir: &str, start: &str) -> Result<Vec<String>, S3Error> {
        Ok(self
            .list_versions(dir, start)
            .await?
            .into_iter()
            .map(|(name, _)| name)
            .collect())
    }

    /// As [`Self::list`], each name with its version (its ETag, else its time and size): an
    /// object whose version is unchanged need not be read again. One LIST request (a page per
    /// 1,000 objects) of the keys starting with `start`.
    pub async fn list_versions(
        &self,
        dir: &str,
        start: &str,
    ) -> Result<Vec<(String, String)>, S3Error> {
        let folder = match self.key(dir).as_str() {
            "" => String::new(),
            key if key.ends_with('/') => key.to_string(),
            key => format!("{key}/"),
        };
        // A listing is by key prefix: the folder and the names' start.
        let path = match format!("{folder}{start}") {
            path if path.is_empty() => "/".to_string(),
            path => path,
        };
        let (entries, _) = self.retrying("list", || self.op.list(&path)).await;
        Ok(entries?
            .into_iter()
            .filter(|e| e.metadata().mode() == S3EntryMode::FILE)
            .filter(|e| e.name().starts_with(start))
            .map(|e| {
                let m = e.metadata();
                let version = m.etag().map_or_else(
                    || format!("{:?}/{}", m.last_modified(), m.content_length()),
                    str::to_string,
                );
                (e.name().to_string(), version)
            })
            .collect())
    }
}

/// Whether `e` may pass by itself (the store unreachable, overloaded or timing out), rather
/// than being an answer (missing, refused, conflicting, or a request the store calls bad, such
/// as a session token it never issued: retrying those only delays the error). OpenDAL's own
/// call: connection errors, 5xx, 429 and S3's retryable codes are temporary.
fn transient(e: &S3Error) -> bool {
    e.is_temporary()
}
