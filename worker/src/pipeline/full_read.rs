//! The full merge-on-read of one snapshot (the latest, or the pinned one being resumed).

use pms_crds::contract::{Position, ReadPoint};
use tracing::{info, warn};

use super::{FlushReason, Pipeline};
use crate::error::Result;
use crate::eta::EtaLine;
use crate::sink::WriteMode;

pub enum FullRead {
    /// Every row of this snapshot is in MySQL and checkpointed.
    Done(i64),
    /// `--once` (or a stop) on a table with no snapshot yet.
    NoSnapshot,
    /// Stopped part way: flushed and checkpointed; the next run resumes it there.
    Stopped,
}

impl Pipeline {
    pub(super) async fn full_read(
        &mut self,
        pinned: Option<i64>,
        from: Position,
        once: bool,
    ) -> Result<FullRead> {
        while self.source.latest_snapshot().await?.is_none() {
            if once || self.stopping() {
                info!(table = %self.source.name(), "the table has no snapshot yet: nothing to sync");
                return Ok(FullRead::NoSnapshot);
            }
            self.idle().await;
        }
        let (plan, from) = match pinned {
            None => (self.source.plan_full(None).await?, from),
            Some(s) if self.source.snapshot_identity(s).await?.is_none() => {
                // Expired or rolled back: a new full read, whose rows are of another snapshot
                // than those written, so it ends by removing the ones it doesn't have.
                let why = format!("the snapshot {s} of the interrupted full read is gone");
                super::refuse_start_over_with_slots(&self.cfg, &why)?;
                warn!(snapshot_id = s, "{why}: starting a new full read that ends by removing the rows it doesn't have");
                self.sweep = true;
                (self.source.plan_full(None).await?, Position::START)
            }
            // Any other failure to plan it is an error: retried by a restart, never skipped.
            Some(s) => (self.source.plan_full(Some(s)).await?, from),
        };
        let snapshot_id = plan.snapshot_id;
        self.full_read_rows = Some(plan.full_read_rows());
        self.history.learn(&self.source, snapshot_id).await?;
        self.latest = self.latest.max(snapshot_id);
        self.read_to = Some(ReadPoint::FullRead {
            snapshot_id,
            at: Some(from),
        });
        let resuming = pinned == Some(snapshot_id);
        let empty = self.writer.sink().target_is_empty().await?;
        if !resuming && !empty && !self.sweep {
            self.sweep_what_the_target_holds(snapshot_id).await?;
        }
        if !resuming {
            // Record which snapshot the full read is of, so a restart resumes that one.
            self.writer.mark_committed(ReadPoint::FullRead {
                snapshot_id,
                at: Some(from),
            });
            self.checkpoint().await?;
        }
        // Into an empty table rows only ever get inserted, and `LOAD DATA … REPLACE` equals the
        // upserts: the bulk path applies, unless every write must be a transaction of its own.
        // Not on a resume into rows already there: REPLACE deletes a colliding row first
        // (DELETE triggers, ON DELETE CASCADE, unmapped columns reset), and not when other
        // unique keys are allowed (REPLACE deletes the row colliding on them).
        let bulk = !self.checkpointer.joins_transactions()
            && self.policy.allows_bulk()
            && !self.cfg.spec.sink.allow_extra_unique_keys
            && empty;
        // As stored (an aggregation's levels), a key comes once per level, oldest first; where
        // keys move between partitions, a flush's order decides which partition's row stays.
        // Otherwise (merge-on-read, keys that stay in their partition) it holds one row per key:
        // nothing to reduce, and its flushes may be written side by side.
        self.buffer
            .set_unique_keys(!plan.holds_versions() && self.layout.delete_qualifiers.is_empty());
        self.buffer.set_full_read(true);
        self.write_mode = if bulk {
            WriteMode::Bulk
        } else {
            WriteMode::Upsert
        };
        info!(
            snapshot_id,
            expected_rows = plan.expected_rows,
            splits = plan.len(),
            ?from,
            bulk,
            "full read"
        );
        self.metrics.full_read_rows.set(0);
        self.metrics
            .full_read_expected_rows
            .set(plan.expected_rows as i64);
        self.metrics.full_reading.set(1);
        let mut eta = EtaLine::new(
            format!("full read of snapshot {snapshot_id}"),
            plan.expected_rows,
        );
        self.read_plan(&plan, from, Some(&mut eta)).await?;
        self.metrics.full_reading.set(0);
        eta.finish();
        self.summary.full_read_rows_per_sec = Some(eta.rows_per_sec());
        if self.stopping() {
            // The read point says how far the full read got: flush, checkpoint, resume there next time.
            self.flush(FlushReason::Close).await?;
            self.checkpoint().await?;
            self.buffer.set_unique_keys(false);
            self.buffer.set_full_read(false);
            info!(snapshot_id, read_to = ?self.read_to, "stopped during the full read; the next run resumes it");
            return Ok(FullRead::Stopped);
        }
        if self.sweep {
            // Every row of the snapshot is written first; then what else the target holds goes.
            self.flush(FlushReason::Checkpoint).await?;
            self.checkpoint().await?;
            let Some(removed) = self.sweep_fenced(snapshot_id).await? else {
                return Ok(FullRead::Stopped);
            };
            info!(snapshot_id, removed, target = %self.cfg.target_name(), "full read: removed the rows the snapshot doesn't have");
            self.sweep = false;
        }
        self.read_to = Some(ReadPoint::Changes {
            next_snapshot: snapshot_id + 1,
            at: Position::START,
        });
        self.flush(FlushReason::Checkpoint).await?;
        self.checkpoint().await?;
        self.full_read_rows = None;
        self.write_mode = WriteMode::Upsert;
        self.buffer.set_unique_keys(false);
        self.buffer.set_full_read(false);
        info!(snapshot_id, "full read done");
        Ok(FullRead::Done(snapshot_id))
    }

    /// The sweep of the full read of `snapshot_id` (just checkpointed), written as the sync's
    /// flushes are: through its sink (the slot lock, at-least-once), each transaction with the
    /// progress row's compare-and-set at the checkpointed position (exactly-once), and no
    /// transaction after a stop. `None`: stopped (the checkpoint still says to sweep).
    async fn sweep_fenced(&mut self, snapshot_id: i64) -> Result<Option<u64>> {
        let progress_row = match self.writer.committed() {
            Some(point) => {
                let cp = self.checkpoint_at(point);
                self.checkpointer.progress_update(&cp)
            }
            None => None,
        };
        let repair = crate::verify::Repair {
            sink: self.writer.sink(),
            progress_row,
            stop: Some(self.stop.clone()),
        };
        crate::verify::sweep(&self.cfg, &self.source, &self.layout, snapshot_id, &repair).await
    }

    /// A new full read into a table that holds rows: alone, the slot removes what the
    /// snapshot doesn't have at its end. With several slots the rows may be another slot's
    /// (its full read began first, and recorded that before writing): when no other slot has
    /// a checkpoint they are not, and no slot can tell which to remove, so the start is refused.
    async fn sweep_what_the_target_holds(&mut self, snapshot_id: i64) -> Result<()> {
        if self.cfg.slot.count == 1 {
            info!(snapshot_id, target = %self.cfg.target_name(),
                  "the target holds rows: the full read ends by removing the ones the snapshot doesn't have");
            self.sweep = true;
            return Ok(());
        }
        if crate::checkpoint::Checkpointer::another_slot_has_one(&self.cfg).await? {
            return Ok(());
        }
        super::refuse_start_over_with_slots(
            &self.cfg,
            &format!(
                "{} holds rows, and no slot of this sync has a checkpoint",
                self.cfg.target_name()
            ),
        )
    }
}
