//! `verify --repair`: the in-place reconciliation. The rows `verify` found missing or
//! different are upserted with Paimon's values and the extra (orphan) rows deleted, in short
//! transactions of `sink.maxRows` rows through the sink's own write path (so a sequence guard
//! and the retry rules apply), group by group as verify's second pass finds them, so memory
//! stays bounded. Only the differing chunks are read twice; nothing else is written. Run it while the sync is stopped: its writes are of the latest snapshot, which the
//! sync, resuming from an earlier checkpoint, replays onto idempotently.

use tracing::info;

use crate::buffer::Batch;
use crate::config::WorkerConfig;
use crate::error::Result;
use crate::mapping::Layout;
use crate::metrics::Metrics;
use crate::sink::{MysqlConnection, MysqlSink, ProgressUpdate, WriteMode, WriteRequest};

/// Where repairs are written, and what fences them against a newer owner of the slot.
pub struct Repair<'a> {
    /// The sink they go through: a sync's own (its slot lock, at-least-once, is checked in
    /// each transaction), or `verify --repair`'s.
    pub sink: &'a MysqlSink,
    /// With exactly-once: the progress row's update, at this run's epoch and the position
    /// it holds, that commits with each repair transaction; a newer owner moved the epoch,
    /// and the transaction rolls back (fenced).
    pub progress_row: Option<ProgressUpdate>,
    /// A stop asked: no transaction starts after it (the sweep is done again at the restart).
    pub stop: Option<tokio::sync::watch::Receiver<bool>>,
}

impl<'a> Repair<'a> {
    /// `verify --repair`'s: its own sink, no progress row, no stop.
    pub fn unfenced(sink: &'a MysqlSink) -> Self {
        Self {
            sink,
            progress_row: None,
            stop: None,
        }
    }

    pub fn stopping(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| *s.borrow())
    }
}

/// The sink the repair writes through, its privileges checked before anything is read.
pub(super) async fn sink(cfg: &WorkerConfig, layout: &Layout) -> Result<MysqlSink> {
    let mysql = MysqlConnection::open(cfg).await?;
    let sink = MysqlSink::new(mysql, layout, cfg, Metrics::new(&cfg.sync_name, 0));
    sink.check_privileges().await?;
    Ok(sink)
}

/// Writes `fixes` and returns the rows written (fewer when a stop was asked).
pub(super) async fn write(repair: &Repair<'_>, cfg: &WorkerConfig, fixes: Batch) -> Result<u64> {
    let per_transaction = (cfg.spec.sink.max_rows() as usize).max(1);
    let total = fixes.len() as u64;
    let Batch {
        mut upserts,
        mut deletes,
        mut upsert_snapshots,
        mut delete_snapshots,
        ..
    } = fixes;
    let mut written = 0;
    while !upserts.is_empty() || !deletes.is_empty() {
        if repair.stopping() {
            return Ok(written);
        }
        crate::failpoint::pause("before-repair-write").await;
        let take_deletes = deletes.len().min(per_transaction);
        let take_upserts = upserts.len().min(per_transaction - take_deletes);
        let batch = Batch {
            deletes: deletes.drain(..take_deletes).collect(),
            delete_snapshots: delete_snapshots.drain(..take_deletes).collect(),
            upserts: upserts.drain(..take_upserts).collect(),
            upsert_snapshots: upsert_snapshots.drain(..take_upserts).collect(),
            input_records: (take_deletes + take_upserts) as u64,
            key_hashes: Vec::new(),
        };
        repair
            .sink
            .write(&WriteRequest {
                batch,
                mode: WriteMode::Upsert,
                progress_row: repair.progress_row.clone(),
            })
            .await?;
        written += (take_deletes + take_upserts) as u64;
    }
    if total > 0 {
        info!(rows = total, target = %cfg.target_name(), "repaired");
    }
    Ok(written)
}
