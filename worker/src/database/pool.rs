//! A worker of a pooled database sync (`placement: pooled`, `pms-worker pool --worker K`): it
//! runs the tables the operator assigned to it (the ConfigMap `<name>--pool`, read every few
//! seconds), each an ordinary single-slot exactly-once sync, and reports them in
//! `<name>--pool-K`. Its tables share one MySQL pool ([`SharedPool`]) and a few places for full
//! reads ([`FullReadGate`]), so neither connections nor full-read memory grow with the tables.
//!
//! A table that moves (a worker added or removed) stops here at the next read of the
//! assignment: it flushes and commits, which is a consistent point. The worker it moved to
//! bumps its progress row's epoch when it starts it, so should this worker still hold a flush
//! of it, that flush can't commit: nothing is applied twice, nothing is skipped.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pms_crds::contract::{
    pool_assignment_name, pool_worker_name, Component, PoolAssignment, PoolReport, PooledState,
    PooledTable, TableListing,
};
use pms_crds::Placement;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::Result;
use crate::metrics::Metrics;
use crate::report_configmap::ReportConfigMap;
use crate::sink::SharedPool;

/// At most `maxFullReads` tables of a worker in their full read at once; the others wait in
/// the order they asked.
#[derive(Clone)]
pub struct FullReadGate {
    places: Arc<Semaphore>,
    /// Sync names waiting, oldest first.
    queue: Arc<Mutex<VecDeque<String>>>,
}

/// Leaves the queue when dropped (a place was given, or the wait was abandoned).
struct Queued<'a> {
    gate: &'a FullReadGate,
    sync: &'a str,
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        let mut queue = self.gate.queue.lock().unwrap_or_else(|p| p.into_inner());
        queue.retain(|s| s != self.sync);
    }
}

impl FullReadGate {
    pub fn new(places: u32) -> Self {
        Self {
            places: Arc::new(Semaphore::new(places.max(1) as usize)),
            queue: Arc::default(),
        }
    }

    /// Waits for a place for `sync`'s full read; it is held until the permit is dropped.
    pub async fn enter(&self, sync: &str) -> OwnedSemaphorePermit {
        self.queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push_back(sync.to_string());
        let _queued = Queued { gate: self, sync };
        // The semaphore is never closed.
        self.places
            .clone()
            .acquire_owned()
            .await
            .expect("the full-read semaphore is never closed")
    }

    /// `sync`'s place in the queue (1: next), while it waits.
    pub fn position(&self, sync: &str) -> Option<u32> {
        let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        queue.iter().position(|s| s == sync).map(|i| i as u32 + 1)
    }
}

/// What the tables of one pooled process share: a MySQL pool and the places for full reads.
#[derive(Clone)]
pub struct Shared {
    pub mysql: SharedPool,
    pub full_reads: FullReadGate,
}

impl Shared {
    pub fn new(placement: &Placement) -> Self {
        Self {
            mysql: SharedPool::new(placement.max_connections_per_worker as usize),
            full_reads: FullReadGate::new(placement.max_full_reads),
        }
    }
}

/// This process as worker `worker` of a pooled database sync.
pub struct PoolMember {
    pub worker: u32,
    /// The revision of the last assignment read.
    revision: AtomicU64,
    assignment: ReportConfigMap,
    report: ReportConfigMap,
    pub shared: Shared,
}

impl PoolMember {
    pub async fn connect(
        database_sync: &str,
        worker: u32,
        placement: &Placement,
        namespace: Option<String>,
    ) -> Result<Self> {
        let me = pool_worker_name(database_sync, worker);
        let assignment = pool_assignment_name(database_sync);
        Ok(Self {
            worker,
            revision: AtomicU64::new(0),
            assignment: ReportConfigMap::connect(
                namespace.clone(),
                assignment.clone(),
                &assignment,
                Component::Pool,
            )
            .await?,
            report: ReportConfigMap::connect(namespace, me.clone(), &me, Component::Pool).await?,
            shared: Shared::new(placement),
        })
    }

    /// The tables assigned to this worker now, as a listing (a failed read keeps `last`, so a
    /// passing API outage stops no table).
    pub async fn assigned(&self, last: &[String]) -> TableListing {
        let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let failed = |error: String| TableListing {
            tables: last.to_vec(),
            at: at.clone(),
            error: Some(error),
        };
        match self.assignment.read::<PoolAssignment>().await {
            Ok(Some(a)) => {
                self.revision.store(a.revision, Ordering::Relaxed);
                TableListing {
                    tables: a
                        .tables
                        .into_iter()
                        .filter(|(_, w)| *w == self.worker)
                        .map(|(t, _)| t)
                        .collect(),
                    at,
                    error: None,
                }
            }
            Ok(None) => failed("the operator has not assigned the tables yet".into()),
            Err(e) => failed(e.to_string()),
        }
    }

    /// Whether the operator asks this worker, stopping, to make its tables forget (the
    /// database sync is deleted with its checkpoints: `PoolAssignment::release_on_stop`), read
    /// now. An assignment that can't be read is no ask.
    pub async fn release_asked(&self) -> bool {
        match self.assignment.read::<PoolAssignment>().await {
            Ok(a) => a.is_some_and(|a| a.release_on_stop),
            Err(e) => {
                tracing::warn!(error = %e, "could not read the assignment at the stop");
                false
            }
        }
    }

    /// Writes the report of this worker's tables, after it acted on the assignment it read
    /// last (stopped the tables it no longer has: those still stopping are in `tables`).
    pub async fn report(&self, tables: Vec<PooledTable>) -> Result<()> {
        let report = PoolReport {
            worker: self.worker,
            assignment_revision: self.revision.load(Ordering::Relaxed),
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            tables,
        };
        self.report.write(&report).await
    }
}

/// A running table's row: its state from its metrics and the queue.
pub fn running_row(table: &str, sync: &str, metrics: &Metrics, gate: &FullReadGate) -> PooledTable {
    let queue_position = gate.position(sync);
    let snapshot = metrics.current_snapshot.get();
    let state = if queue_position.is_some() {
        PooledState::Queued
    } else if metrics.full_reading.get() == 1 {
        PooledState::FullRead
    } else if snapshot > 0 {
        PooledState::Following
    } else {
        PooledState::Starting
    };
    PooledTable {
        table: table.to_string(),
        state,
        queue_position,
        snapshot_id: (snapshot > 0).then_some(snapshot),
        lag_snapshots: (snapshot > 0).then(|| metrics.snapshots_behind.get()),
        full_read_rows: (state == PooledState::FullRead).then(|| metrics.full_read_rows.get()),
        message: None,
    }
}

/// A failed table's row.
pub fn failed_row(table: &str, message: &str) -> PooledTable {
    PooledTable {
        table: table.to_string(),
        state: PooledState::Failed,
        message: Some(message.to_string()),
        ..Default::default()
    }
}
