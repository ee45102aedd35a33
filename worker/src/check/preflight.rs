//! Under the operator, slot 0 runs the checks at each start, before anything is written, and
//! publishes what it found in `<sync>-preflight` (the `PreflightPassed` condition). A ✗ stops
//! the worker with the failing items; a ⚠ is logged and shown.

use pms_crds::contract::{preflight_name, Component, PreflightReport};
use tracing::warn;

use super::{check_loaded, CheckOptions, Item, Report, Status};
use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};
use crate::report_configmap::ReportConfigMap;

/// `created_table`: the statement `sink.createTable` ran at this start, if it did.
pub async fn run(cfg: &WorkerConfig, created_table: Option<String>) -> Result<()> {
    let Some(namespace) = cfg.config_map_namespace() else {
        return Ok(());
    };
    if cfg.slot.index != 0 {
        return Ok(());
    }
    let mut report = Report::default();
    check_loaded(cfg, &CheckOptions::default(), &mut report).await;
    let mut published = summary(&report);
    published.created_table = created_table;
    for w in &published.warning_items {
        warn!(preflight = %w, "pre-flight warning");
    }
    let written = match ReportConfigMap::connect(
        namespace,
        preflight_name(&cfg.sync_name),
        &cfg.sync_name,
        Component::Preflight,
    )
    .await
    {
        Ok(cm) => cm.write(&published).await,
        Err(e) => Err(e),
    };
    if let Err(e) = written {
        warn!(error = %e, "could not publish the pre-flight report");
    }
    if report.ok() {
        return Ok(());
    }
    Err(WorkerError::Config(format!(
        "the pre-flight found problems, nothing is written (pms-worker check shows the same):\n  - {}",
        published.failures.join("\n  - ")
    )))
}

fn summary(report: &Report) -> PreflightReport {
    let line = |i: &Item| match &i.fix {
        Some(fix) => format!("{}: {} (fix: {fix})", i.check, i.message),
        None => format!("{}: {}", i.check, i.message),
    };
    let of = |status: Status| {
        report
            .checks
            .iter()
            .filter(|i| i.status == status)
            .map(line)
            .collect()
    };
    PreflightReport {
        passed: report.passed,
        warnings: report.warnings,
        failed: report.failed,
        failures: of(Status::Fail),
        warning_items: of(Status::Warn),
        created_table: None,
        at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    }
}
