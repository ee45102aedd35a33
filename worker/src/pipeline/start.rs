//! Where a run begins: from the resumed checkpoint, or by `source.scanMode` on a fresh start.

use pms_crds::contract::{Checkpoint, Position, ReadPoint};
use pms_crds::ScanMode;

use super::Pipeline;
use crate::error::{Result, WorkerError};

/// A full read (of a pinned snapshot when resuming one) or the changes of a snapshot, from a
/// position inside it.
pub enum Start {
    FullRead { pinned: Option<i64>, from: Position },
    Changes { snapshot_id: i64, from: Position },
}

impl Pipeline {
    pub(super) async fn start(&self, resumed: Option<&Checkpoint>) -> Result<Start> {
        if let Some(cp) = resumed {
            self.check_not_past_the_table(&cp.point).await?;
            return Ok(match cp.point {
                // A full read resumes inside the same snapshot; one not yet started takes the latest.
                ReadPoint::FullRead { snapshot_id, at } => Start::FullRead {
                    pinned: at.map(|_| snapshot_id),
                    from: at.unwrap_or_default(),
                },
                ReadPoint::Changes { next_snapshot, at } => Start::Changes {
                    snapshot_id: next_snapshot,
                    from: at,
                },
            });
        }
        let src = &self.cfg.spec.source;
        let changes_from = |snapshot_id| Start::Changes {
            snapshot_id,
            from: Position::START,
        };
        let after_latest = || async {
            Ok::<_, WorkerError>(self.source.latest_snapshot().await?.unwrap_or(0) + 1)
        };
        Ok(match src.scan_mode {
            ScanMode::LatestFull => Start::FullRead {
                pinned: None,
                from: Position::START,
            },
            ScanMode::Latest => changes_from(after_latest().await?),
            ScanMode::FromSnapshot => changes_from(src.start_snapshot.unwrap_or(1)),
            ScanMode::FromTimestamp => {
                let text = src.start_timestamp.as_deref().unwrap_or_default();
                let at = chrono::DateTime::parse_from_rfc3339(text).map_err(|e| {
                    WorkerError::Config(format!("source.startTimestamp {text:?} is not RFC 3339 ({e}); write e.g. 2026-11-01T00:00:00Z"))
                })?;
                match self
                    .source
                    .snapshot_at_or_after(at.timestamp_millis())
                    .await?
                {
                    Some(s) => changes_from(s),
                    None => changes_from(after_latest().await?),
                }
            }
        })
    }

    /// A checkpoint past the table's latest snapshot belongs to another table of that name
    /// (dropped and created again) or to a history that was rolled back: resuming would wait
    /// for snapshots that mean something else. An error, never a silent wait.
    async fn check_not_past_the_table(&self, point: &ReadPoint) -> Result<()> {
        let done = match *point {
            ReadPoint::FullRead {
                snapshot_id,
                at: Some(_),
            } => snapshot_id,
            ReadPoint::FullRead { at: None, .. } => return Ok(()),
            ReadPoint::Changes { next_snapshot, .. } => next_snapshot - 1,
        };
        let latest = self.source.latest_snapshot().await?.unwrap_or(0);
        if done <= latest {
            return Ok(());
        }
        Err(WorkerError::Source {
            table: self.source.name().to_string(),
            message: format!(
                "the checkpoint ({}) is at snapshot {done}, past the table's latest snapshot {latest}: the table \
                 was dropped and created again, or rolled back. Nothing is written: start this sync over with \
                 `pms-worker rebuild` (a new MySQL table, swapped in), or delete its checkpoint to full-read into \
                 the existing one",
                self.checkpointer.location()
            ),
        })
    }

    /// A snapshot we still need but Paimon already expired is an error, never a silent skip.
    pub(super) async fn check_not_expired(&self, needed: i64) -> Result<()> {
        let earliest = self.source.earliest_snapshot().await?.unwrap_or(1);
        if needed < earliest {
            return Err(WorkerError::SnapshotExpired {
                table: self.source.name().to_string(),
                needed,
                earliest,
                checkpoint: self.checkpointer.location(),
            });
        }
        Ok(())
    }
}
