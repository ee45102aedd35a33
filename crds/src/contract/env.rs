//! Environment variables the operator sets on worker pods and the worker reads.

/// The worker's config file (the operator mounts `<sync>-config` there).
pub const ENV_CONFIG: &str = "PMS_CONFIG";
/// This pod's slot index and the slot count (`--slot`, `--slots`).
pub const ENV_SLOT: &str = "PMS_SLOT";
pub const ENV_SLOTS: &str = "PMS_SLOTS";
/// The sync's name (the resource's `metadata.name`): names checkpoints and consumers.
pub const ENV_SYNC_NAME: &str = "PMS_SYNC_NAME";
/// The pod's namespace (downward API): where the checkpoint ConfigMaps live.
pub const ENV_NAMESPACE: &str = "PMS_NAMESPACE";
/// Where `/metrics`, `/healthz` and `/readyz` are served.
pub const ENV_ADMIN_ADDR: &str = "PMS_ADMIN_ADDR";
/// `true`: log JSON lines.
pub const ENV_LOG_JSON: &str = "PMS_LOG_JSON";
/// MySQL credentials (from the Secret named by `sink.credentialsSecretRef`); they win over the URL's.
pub const ENV_MYSQL_USER: &str = "MYSQL_USER";
pub const ENV_MYSQL_PASSWORD: &str = "MYSQL_PASSWORD";
/// S3 credentials (from the Secret named by `source.s3.credentialsSecretRef`).
pub const ENV_AWS_ACCESS_KEY_ID: &str = "AWS_ACCESS_KEY_ID";
pub const ENV_AWS_SECRET_ACCESS_KEY: &str = "AWS_SECRET_ACCESS_KEY";

/// An S3 session token (temporary credentials), read with the keys above; the other ways of the
/// AWS credential chain (`AWS_WEB_IDENTITY_TOKEN_FILE` with `AWS_ROLE_ARN`, container
/// credentials, `AWS_PROFILE`) are read by the S3 client itself when no keys are given.
pub const ENV_AWS_SESSION_TOKEN: &str = "AWS_SESSION_TOKEN";
/// The Hadoop client configuration directory (`source.hadoopConf`, mounted by the operator).
pub const ENV_HADOOP_CONF_DIR: &str = "HADOOP_CONF_DIR";
/// The Kerberos library's own variables (`source.kerberos`): the client keytab it logs in from,
/// its `krb5.conf`, and its credential cache (in memory: the root file system is read-only).
pub const ENV_KRB5_CLIENT_KTNAME: &str = "KRB5_CLIENT_KTNAME";
pub const ENV_KRB5_CONFIG: &str = "KRB5_CONFIG";
pub const ENV_KRB5CCNAME: &str = "KRB5CCNAME";

/// S3 credentials of the checkpoint store (from `checkpoint.s3.credentialsSecretRef`); without
/// them the worker uses `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`.
pub const ENV_CHECKPOINT_S3_ACCESS_KEY_ID: &str = "PMS_CHECKPOINT_S3_ACCESS_KEY_ID";
pub const ENV_CHECKPOINT_S3_SECRET_ACCESS_KEY: &str = "PMS_CHECKPOINT_S3_SECRET_ACCESS_KEY";

/// The keys the referenced Secrets must have, and the variable each becomes.
pub const MYSQL_SECRET_KEYS: [(&str, &str); 2] = [
    ("username", ENV_MYSQL_USER),
    ("password", ENV_MYSQL_PASSWORD),
];
pub const S3_SECRET_KEYS: [(&str, &str); 2] = [
    ("accessKeyId", ENV_AWS_ACCESS_KEY_ID),
    ("secretAccessKey", ENV_AWS_SECRET_ACCESS_KEY),
];
pub const CHECKPOINT_S3_SECRET_KEYS: [(&str, &str); 2] = [
    ("accessKeyId", ENV_CHECKPOINT_S3_ACCESS_KEY_ID),
    ("secretAccessKey", ENV_CHECKPOINT_S3_SECRET_ACCESS_KEY),
];
