//! Stopping at a consistent cut: the end of one Paimon snapshot, never inside one.
//!
//! Standalone, `run --stop-at-snapshot S` (or `--stop-at latest`) applies every snapshot through
//! S, flushes, checkpoints and exits. Under the operator, a slot reads the ConfigMap
//! `<sync>-control` between snapshots; a pause request there (a savepoint) makes it pause at a
//! snapshot boundary, say so in its checkpoint, and wait until the request is lifted or moved
//! on (see `pms_crds::contract::control`).

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use pms_crds::contract::{control_name, Control, PauseRequest, CONTROL_KEY};
use tracing::info;

use super::start::Start;
use super::{FlushReason, Pipeline};
use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};

/// Where a standalone run stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopAt {
    Snapshot(i64),
    /// The latest snapshot when the run starts.
    Latest,
}

/// How often a slot that is not paused looks at the control ConfigMap (a slot catching up
/// crosses many boundaries a second).
const CONTROL_EVERY: Duration = Duration::from_secs(1);

#[derive(Default)]
pub(super) struct Cut {
    /// Standalone: stop after this snapshot.
    stop_at: Option<i64>,
    control: Option<ControlWatch>,
    /// The pause request this slot is paused for, and where.
    paused: Option<(String, i64)>,
}

struct ControlWatch {
    api: Api<ConfigMap>,
    name: String,
    read_at: Option<Instant>,
    last: Control,
}

impl Cut {
    /// `stop_at` resolved against the latest snapshot; the control ConfigMap is watched by a
    /// continuous run that has ConfigMaps (a slot under the operator, or with ConfigMap
    /// checkpoints; not a `--once` run, such as a rebuild's new generation, which ends by itself).
    pub async fn new(
        cfg: &WorkerConfig,
        stop_at: Option<StopAt>,
        once: bool,
        latest: i64,
    ) -> Result<Self> {
        let control = match cfg.config_map_namespace() {
            Some(namespace) if stop_at.is_none() && !once => {
                let (api, _) = crate::report_configmap::config_maps(namespace)
                    .await
                    .map_err(|e| {
                        WorkerError::Config(format!("can't reach the Kubernetes API: {e}"))
                    })?;
                Some(ControlWatch {
                    api,
                    name: control_name(&cfg.sync_name),
                    read_at: None,
                    last: Control::default(),
                })
            }
            _ => None,
        };
        Ok(Self {
            stop_at: stop_at.map(|s| match s {
                StopAt::Snapshot(s) => s,
                StopAt::Latest => latest,
            }),
            control,
            paused: None,
        })
    }

    pub fn stop_at(&self) -> Option<i64> {
        self.stop_at
    }

    /// Refuses a cut the start is already past: a full read of a later snapshot, or a resume
    /// after it.
    pub fn check_start(&self, start: &Start, latest: i64) -> Result<()> {
        let Some(stop_at) = self.stop_at else {
            return Ok(());
        };
        let (past, what) = match *start {
            Start::FullRead { pinned, .. } => {
                let snapshot = pinned.unwrap_or(latest);
                (
                    snapshot > stop_at,
                    format!("a full read of snapshot {snapshot}"),
                )
            }
            // Part of `snapshot_id` applied: the cut can only be at its end or later.
            Start::Changes { snapshot_id, from } if !from.is_start() => (
                snapshot_id > stop_at,
                format!("snapshot {snapshot_id} partly applied"),
            ),
            Start::Changes { snapshot_id, .. } => (
                snapshot_id - 1 > stop_at,
                format!("every snapshot through {} already applied", snapshot_id - 1),
            ),
        };
        if past {
            return Err(WorkerError::Config(format!(
                "--stop-at-snapshot {stop_at}: this slot starts past it ({what}); a cut can only be ahead of a slot"
            )));
        }
        Ok(())
    }

    /// The pause request this slot's checkpoints acknowledge.
    pub fn paused_for(&self) -> Option<&str> {
        self.paused.as_ref().map(|(id, _)| id.as_str())
    }
}

impl Cut {
    /// Whether the operator asks this slot, stopping, to give up what the sync holds outside
    /// the cluster (the sync is being deleted with its checkpoints): read now. A standalone
    /// run, or a control that can't be read, is not asked.
    pub async fn release_on_stop(&mut self) -> bool {
        let Some(control) = self.control.as_mut() else {
            return false;
        };
        match control.read(true).await {
            Ok(c) => c.release_on_stop,
            Err(e) => {
                tracing::warn!(error = %e, "could not read the control ConfigMap at the stop");
                false
            }
        }
    }
}

impl ControlWatch {
    /// The current pause request; read again when `fresh` or after [`CONTROL_EVERY`].
    async fn pause(&mut self, fresh: bool) -> Result<Option<PauseRequest>> {
        Ok(self.read(fresh).await?.pause.clone())
    }

    /// The control, read again when `fresh` or after [`CONTROL_EVERY`].
    async fn read(&mut self, fresh: bool) -> Result<&Control> {
        if fresh || self.read_at.is_none_or(|t| t.elapsed() >= CONTROL_EVERY) {
            let cm = self.api.get_opt(&self.name).await.map_err(|e| {
                WorkerError::Config(format!("reading the control ConfigMap {}: {e}", self.name))
            })?;
            let text = cm
                .and_then(|c| c.data)
                .and_then(|d| d.get(CONTROL_KEY).cloned());
            let control: Control = match text {
                Some(t) => serde_json::from_str(&t).map_err(|e| {
                    WorkerError::Config(format!(
                        "the control ConfigMap {} is unreadable: {e}",
                        self.name
                    ))
                })?,
                None => Control::default(),
            };
            self.last = control;
            self.read_at = Some(Instant::now());
        }
        Ok(&self.last)
    }
}

impl Pipeline {
    /// At the boundary before snapshot `next` (every snapshot before it applied): whether the
    /// run ends here. A pause request holds the slot here (flushed, checkpointed, acknowledged)
    /// until it is lifted or moved on to a later snapshot.
    pub(super) async fn at_boundary(&mut self, next: i64) -> Result<bool> {
        let applied = next - 1;
        if let Some(stop_at) = self.cut.stop_at {
            if applied > stop_at {
                return Err(WorkerError::Config(format!(
                    "--stop-at-snapshot {stop_at}: this slot has already applied every snapshot through {applied}"
                )));
            }
            return Ok(applied == stop_at);
        }
        loop {
            let Some(control) = self.cut.control.as_mut() else {
                return Ok(false);
            };
            let request = control.pause(self.cut.paused.is_some()).await?;
            let here = request
                .as_ref()
                .and_then(|r| r.pauses_at(applied).map(|_| r.id.clone()));
            let Some(id) = here else {
                if let Some((id, at)) = self.cut.paused.take() {
                    info!(id, snapshot = at, "pause lifted: reading on");
                }
                return Ok(false);
            };
            if self.cut.paused.as_ref() != Some(&(id.clone(), applied)) {
                self.cut.paused = Some((id.clone(), applied));
                self.flush(FlushReason::Checkpoint).await?;
                self.checkpoint().await?;
                info!(id, snapshot = applied, "paused at the end of a snapshot");
            }
            self.idle().await;
            if self.stopping() {
                return Ok(true);
            }
        }
    }
}
