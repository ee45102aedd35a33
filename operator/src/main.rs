//! `pms-operator`: reconciles `PaimonMysqlSync` resources into per-slot worker Deployments.
//! Not implemented yet (see the operator issue); it only checks that it can reach the API server.

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).init();
    anyhow::bail!("pms-operator is not implemented yet; run the worker standalone with `pms-worker run --config sync.yaml`")
}
