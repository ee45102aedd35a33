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
    /// `start_over`: whatever the scan mode, a full read of the latest snapshot (what MySQL
    /// holds is not known to be any snapshot's).
    pub(super) async fn start(
        &self,
        resumed: Option<&Checkpoint>,
        start_over: bool,
    ) -> Result<Start> {
        if start_over {
            return Ok(Start::FullRead {
                pinned: None,
                from: Position::START,
            });
        }
        if let Some(cp) = resumed {
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
        if let Some(from) = &src.start_from {
            return Ok(changes_from(self.source.flink_take_over_point(from).await?));
        }
        Ok(match src.scan_mode {
            ScanMode::LatestFull => Start::FullRead {
                pinned: None,
                from: Position::START,
            },
            ScanMode::Latest => changes_from(after_latest().await?),
            ScanMode::FromSnapshot => changes_from(src.start_snapshot.unwrap_or(1)),
            ScanMode::FromSnapshotFull => {
                let s = src.start_snapshot.unwrap_or(1);
                // A full read resumed at a snapshot gone reads the latest instead; one asked for
                // by name must exist.
                if self.source.snapshot_identity(s).await?.is_none() {
                    return Err(WorkerError::Config(format!(
                        "scanMode from-snapshot-full: snapshot {s} of {} does not exist (expired, or not committed \
                         yet); name one between the earliest and the latest, or use latest-full",
                        self.source.name()
                    )));
                }
                Start::FullRead {
                    pinned: Some(s),
                    from: Position::START,
                }
            }
            ScanMode::FromTimestamp => {
                let text = src.start_timestamp.as_deref().unwrap_or_default();
                match self
                    .source
                    .snapshot_at_or_after(start_millis(text)?)
                    .await?
                {
                    Some(s) => changes_from(s),
                    None => changes_from(after_latest().await?),
                }
            }
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

/// `source.startTimestamp` in Unix milliseconds: an RFC 3339 instant, or the milliseconds
/// themselves (Flink's `scan.timestamp-millis`).
fn start_millis(text: &str) -> Result<i64> {
    if let Ok(millis) = text.parse::<i64>() {
        return Ok(millis);
    }
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|at| at.timestamp_millis())
        .map_err(|e| {
            WorkerError::Config(format!(
                "source.startTimestamp {text:?} is neither RFC 3339 nor Unix milliseconds ({e}); write e.g. \
                 2026-11-01T00:00:00Z or 1793491200000"
            ))
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_start_timestamp_is_rfc_3339_or_flinks_milliseconds() {
        assert_eq!(
            super::start_millis("2026-11-01T00:00:00Z").unwrap(),
            1_793_491_200_000
        );
        assert_eq!(
            super::start_millis("1793491200000").unwrap(),
            1_793_491_200_000
        );
        assert!(super::start_millis("yesterday").is_err());
    }
}
