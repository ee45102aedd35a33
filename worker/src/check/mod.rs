//! `pms-worker check`: the pre-flight of a sync. Before go-live (and before the operator starts
//! the workers) it tells whether the pair (Paimon table, MySQL table) and the config are set up
//! right, one line per check, with the exact fix for each problem. It writes nothing: the same
//! validations the worker runs at start, collected instead of stopping at the first, plus the
//! settings that only matter later (retention against downtime, triggers, packet size, …).

mod grants;
mod mysql;
mod paimon;
pub mod preflight;
mod report;

use std::path::Path;
use std::time::Duration;

pub use report::{Area, Item, Report, Status};

use crate::config::WorkerConfig;
use crate::error::Result;

/// What the checks measure the setup against.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The longest the sync may be down (a deploy, an outage) and still resume.
    pub max_downtime: Duration,
    /// Rows per second the full load is estimated at.
    pub full_load_rows_per_second: f64,
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self {
            max_downtime: Duration::from_secs(3600),
            full_load_rows_per_second: 100_000.0,
        }
    }
}

/// Runs every check; never fails itself (what it can't check is a ✗ saying why).
/// Checks the config `loaded` from `path` (as slot 0 of 1 sees it) and what it names.
pub async fn run(path: &Path, loaded: Result<WorkerConfig>, opts: &CheckOptions) -> Report {
    let mut report = Report::default();
    let cfg = match loaded {
        Ok(cfg) => cfg,
        Err(e) => {
            report.fail(
                Area::Config,
                "config.valid",
                format!("{}: {e}", path.display()),
                "correct the field named above (a misspelt or unknown field is refused, not ignored); \
                 the fields are in the CRD: kubectl explain pms.spec",
            );
            return report;
        }
    };
    report.pass(
        Area::Config,
        "config.valid",
        format!(
            "{}: every field known, durations and URLs valid (sync {})",
            path.display(),
            cfg.sync_name
        ),
    );
    check_loaded(&cfg, opts, &mut report).await;
    report
}

/// The checks past the config file (a worker under the operator runs them at start).
pub async fn check_loaded(cfg: &WorkerConfig, opts: &CheckOptions, report: &mut Report) {
    if cfg.mysql.password.is_none() {
        report.warn(
            Area::Config,
            "config.credentials",
            format!("no MySQL password for user {} (neither in the URL's Secret nor MYSQL_PASSWORD)", cfg.mysql.user),
            "set MYSQL_PASSWORD (standalone) or sink.credentialsSecretRef (under the operator), unless the user has none",
        );
    } else {
        report.pass(
            Area::Config,
            "config.credentials",
            format!("MySQL credentials present for user {}", cfg.mysql.user),
        );
    }
    let source = paimon::check(cfg, opts, report).await;
    mysql::check(cfg, source.as_ref(), report).await;
}
