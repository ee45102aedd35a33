//! A table's shape across the snapshots being read. `ALTER TABLE … SET` changes an option for
//! the next snapshot committed, whichever writer commits it: Paimon stamps every snapshot with
//! the newest schema id, even one committed by a writer still running with the old options. So
//! a snapshot's schema doesn't tell how it was written; what it holds (a changelog or not)
//! does, and a change of the options that decide the reading, between the snapshot applied last
//! and the one read next, is either read alike ([`super::TableShape::reads_alike`]) or the slot starts
//! over (a full read of the latest snapshot, then a sweep).

use paimon::spec::Snapshot;

use super::{options, shape, PaimonSource};
use crate::error::Result;

/// Whether `snapshot` holds no changelog (no manifest of one, or one of no records).
pub(super) fn without_changelog(snapshot: &Snapshot) -> bool {
    snapshot.changelog_manifest_list().is_none() || snapshot.changelog_record_count() == Some(0)
}

impl PaimonSource {
    /// Why the snapshots from `next` on can't be read on from what the slot applied through
    /// `next - 1`, if they can't: a schema between the two (the table's options in force at some
    /// moment in between) reads its snapshots otherwise, or has options this worker refuses
    /// (e.g. `record-level.expire-time` set, then removed while the sync was down: the rows it
    /// expired in between left no change). `None` also when either snapshot is gone: the history
    /// check and the expiry check speak for those.
    pub async fn shape_change_before(&self, next: i64) -> Result<Option<String>> {
        if next < 2 {
            return Ok(None);
        }
        let (Some(applied), Some(read)) = (
            self.existing_snapshot(next - 1).await?,
            self.existing_snapshot(next).await?,
        ) else {
            return Ok(None);
        };
        let (from, to) = (applied.schema_id(), read.schema_id());
        if from >= to {
            return Ok(None);
        }
        // As this sync reads them (`source.freshness`).
        let shape_of = |options: &std::collections::HashMap<String, String>| {
            shape::read_shape(options, self.freshness)
                .map(|(shape, _)| shape)
                .map_err(|why| why.join("; "))
        };
        let schema = |id: i64| async move {
            self.table
                .schema_manager()
                .schema(id)
                .await
                .map_err(|e| self.err(e))
        };
        let first = schema(from).await?;
        let mut before = match shape_of(first.options()) {
            Ok(shape) => shape,
            Err(why) => return Ok(Some(format!("schema {from}: {why}"))),
        };
        for id in from + 1..=to {
            let later = schema(id).await?;
            let refused = options::judge(later.options()).refused;
            if !refused.is_empty() {
                return Ok(Some(format!(
                    "the table's options changed between snapshots {} and {next}: schema {id} had {}; rows it changed \
                     without a change to read may differ",
                    next - 1,
                    refused.join("; ")
                )));
            }
            let after = match shape_of(later.options()) {
                Ok(shape) => shape,
                Err(why) => return Ok(Some(format!("schema {id}: {why}"))),
            };
            if !after.reads_alike(&before) {
                return Ok(Some(format!(
                    "the table's options changed between snapshots {} and {next} ({}, schema {id}): the snapshots \
                     around the change are written in two ways (an old writer may still commit with the old options), \
                     and changes written before it may never reach the new reading",
                    next - 1,
                    after.difference_from(&before)
                )));
            }
            before = after;
        }
        Ok(None)
    }
}
