//! What the pipeline hands the sink for one flush: the reduced rows, how to write them, and
//! (exactly-once) the progress row that must commit with them.

use super::progress_table::ProgressUpdate;
use crate::buffer::Batch;

/// How a flush's upserts reach the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    /// Multi-row `INSERT … ON DUPLICATE KEY UPDATE` and `DELETE` in one transaction.
    Upsert,
    /// `LOAD DATA LOCAL INFILE … REPLACE`: only for a full read into an empty table, where
    /// rows are only ever inserted. Falls back to upserts where it does not apply (deletes, a
    /// progress row, a sequence guard, a server that refuses it).
    Bulk,
}

pub struct WriteRequest {
    pub batch: Batch,
    pub mode: WriteMode,
    /// Committed in the same transaction; the flush fails (fenced) if it matches no row.
    pub progress_row: Option<ProgressUpdate>,
}

impl WriteRequest {
    pub fn is_empty(&self) -> bool {
        self.batch.is_empty() && self.progress_row.is_none()
    }
}
