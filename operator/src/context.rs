//! What every reconcile shares.

use kube::runtime::events::Reporter;
use kube::Client;
use prometheus::{IntCounterVec, Opts, Registry};

/// Settings from the command line (and the Helm chart's values).
#[derive(Clone, Debug)]
pub struct Settings {
    /// The worker image for the Deployments.
    pub worker_image: String,
    pub image_pull_policy: String,
    /// The worker's admin port (metrics, probes).
    pub admin_port: i32,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            worker_image: "paimon-mysql-sync/pms-worker:0.1.0".into(),
            image_pull_policy: "IfNotPresent".into(),
            admin_port: 9464,
        }
    }
}

#[derive(Clone)]
pub struct Context {
    pub client: Client,
    pub settings: Settings,
    pub reporter: Reporter,
    pub metrics: Metrics,
}

#[derive(Clone)]
pub struct Metrics {
    pub registry: Registry,
    pub reconciles: IntCounterVec,
}

impl Default for Metrics {
    fn default() -> Self {
        let registry = Registry::new();
        let reconciles = IntCounterVec::new(
            Opts::new("pms_operator_reconciles_total", "Reconciles by result"),
            &["result"],
        )
        .expect("static metric");
        registry
            .register(Box::new(reconciles.clone()))
            .expect("unique metric");
        Self {
            registry,
            reconciles,
        }
    }
}
