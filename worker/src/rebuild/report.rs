//! The rebuild's report: each phase is logged, and with ConfigMap checkpoints (under the
//! operator) also written to `<sync>-rebuild`, which the operator mirrors into
//! `status.rebuild`. Reporting never fails the rebuild: a report that can't be written is a
//! warning.

use pms_crds::contract::{Component, PhaseChange, RebuildPhase, RebuildReport};
use tracing::{info, warn};

use crate::config::WorkerConfig;
use crate::metrics::Metrics;
use crate::report_configmap::ReportConfigMap;

pub struct Reporter {
    /// With ConfigMap checkpoints.
    target: Option<ReportConfigMap>,
    report: RebuildReport,
}

impl Reporter {
    /// Reports into `<sync>-rebuild` (`name`: `rebuild_name`, or `restore_name` for a restore).
    pub async fn new(
        cfg: &WorkerConfig,
        trigger: Option<String>,
        name: fn(&str) -> String,
    ) -> Self {
        let target = match cfg.config_map_namespace() {
            Some(namespace) => {
                let name = name(&cfg.sync_name);
                match ReportConfigMap::connect(
                    namespace.clone(),
                    name,
                    &cfg.sync_name,
                    Component::Rebuild,
                )
                .await
                {
                    Ok(t) => Some(t),
                    Err(e) => {
                        warn!(error = %e, "the rebuild's progress is only logged");
                        None
                    }
                }
            }
            // Standalone: the log says it.
            None => None,
        };
        Self {
            target,
            report: RebuildReport {
                trigger: trigger.unwrap_or_default(),
                phase: RebuildPhase::Loading,
                history: Vec::new(),
                snapshot_id: None,
                rows_loaded: 0,
                rows_expected: 0,
                error: None,
            },
        }
    }

    pub async fn phase(&mut self, phase: RebuildPhase) {
        if self.report.history.last().map(|p| p.phase) == Some(phase) {
            return;
        }
        info!(phase = phase.as_str(), "rebuild phase");
        self.report.phase = phase;
        self.report.history.push(PhaseChange {
            phase,
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        });
        self.publish().await;
    }

    pub async fn snapshot(&mut self, snapshot_id: i64) {
        self.report.snapshot_id = Some(snapshot_id);
        self.publish().await;
    }

    /// Loading while any slot's full read has not finished, then CatchingUp, with the rows
    /// of the full reads (from the slots' metrics).
    pub async fn load_progress(&mut self, slots: &[Metrics]) {
        let loading = slots.iter().any(|m| {
            m.full_reading.get() == 1
                || m.full_read_expected_rows.get() == 0 && m.current_snapshot.get() == 0
        });
        let loaded: i64 = slots.iter().map(|m| m.full_read_rows.get()).sum();
        let expected: i64 = slots.iter().map(|m| m.full_read_expected_rows.get()).sum();
        let moved = self.report.rows_loaded != loaded as u64
            || self.report.rows_expected != expected as u64;
        self.report.rows_loaded = loaded.max(0) as u64;
        self.report.rows_expected = expected.max(0) as u64;
        let phase = if loading {
            RebuildPhase::Loading
        } else {
            RebuildPhase::CatchingUp
        };
        if phase != self.report.phase {
            self.phase(phase).await;
        } else if moved {
            self.publish().await;
        }
    }

    pub async fn fail(&mut self, error: &crate::error::WorkerError) {
        self.report.error = Some(error.to_string());
        self.phase(RebuildPhase::Failed).await;
    }

    async fn publish(&self) {
        if let Some(target) = &self.target {
            if let Err(e) = target.write(&self.report).await {
                warn!(error = %e, "could not write the rebuild report");
            }
        }
    }
}
