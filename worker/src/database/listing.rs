//! The tables of the Paimon database, listed every `discoveryInterval`. Under the operator,
//! `pms-worker discover` publishes each listing in `<name>--tables` (a [`TableListing`]); the
//! operator selects from it and stamps out the tables' syncs.

use std::time::Duration;

use pms_crds::contract::{Component, TableListing};
use pms_crds::SourceSpec;
use tokio::sync::watch;
use tracing::{info, warn};

use crate::error::Result;
use crate::report_configmap::ReportConfigMap;
use crate::source::list_tables;

/// Lists the database now; a failure keeps `last` (the last good listing) and says why, so a
/// passing outage never reads as every table dropped.
pub async fn list(source: &SourceSpec, last: &[String]) -> TableListing {
    let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    match list_tables(source).await {
        Ok(mut tables) => {
            tables.sort();
            TableListing {
                tables,
                at,
                error: None,
            }
        }
        Err(e) => TableListing {
            tables: last.to_vec(),
            at,
            error: Some(e.to_string()),
        },
    }
}

/// `pms-worker discover`: lists the database every `every` and publishes each listing in the
/// ConfigMap `report` of `namespace` (under the operator `<database sync>--tables`, which is
/// also the discovery worker's sync name), or prints it without a namespace; `ready` once the
/// first is out. Returns on `stop`, or after one listing with `once`.
pub async fn discover(
    source: &SourceSpec,
    report: &str,
    namespace: Option<String>,
    every: Duration,
    once: bool,
    ready: &pms_runtime::Readiness,
    mut stop: watch::Receiver<bool>,
) -> Result<()> {
    let target = match namespace {
        Some(ns) => Some(
            ReportConfigMap::connect(Some(ns), report.to_string(), report, Component::Discovery)
                .await?,
        ),
        None => None,
    };
    let mut last = Vec::new();
    loop {
        let listing = list(source, &last).await;
        match &listing.error {
            Some(e) => {
                warn!(error = %e, "listing the Paimon database failed; keeping the last listing")
            }
            None => {
                info!(tables = listing.tables.len(), database = %source.database, "listed the Paimon database")
            }
        }
        match &target {
            Some(cm) => cm.write(&listing).await?,
            None => println!("{}", serde_json::to_string(&listing).unwrap_or_default()),
        }
        ready.set(true);
        last = listing.tables;
        if once {
            return Ok(());
        }
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = stop.changed() => return Ok(()),
        }
    }
}
