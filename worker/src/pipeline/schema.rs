//! A Paimon schema change while the sync runs (`source.schemaChanges`): a new schema ends this
//! source's run, and the sync either stops (`fail`) or opens the table again, checks MySQL
//! against it (`crate::target_layout`, adding new columns with `apply`) and goes on from the first
//! snapshot of that schema.

use pms_crds::SchemaChanges;

use super::Pipeline;
use crate::error::{Result, WorkerError};
use crate::mapping::Layout;
use crate::source::{readded, PaimonSource};

/// Refuses to go on when a mapped column was dropped and added again since MySQL's rows were
/// written under `before` (the fields of the schema they were read with): Paimon reads the new
/// column as NULL in every row written before, and MySQL holds the old column's values there.
pub(super) fn refuse_readded_columns(
    source: &PaimonSource,
    layout: &Layout,
    before: &[(i32, String)],
) -> Result<()> {
    let readded: Vec<String> = readded(before, &source.fields())
        .into_iter()
        .filter(|name| layout.columns.iter().any(|c| c.paimon == *name))
        .collect();
    if readded.is_empty() {
        return Ok(());
    }
    Err(WorkerError::Source {
        table: source.name().to_string(),
        message: format!(
            "column(s) {readded:?} were dropped and added again (a new Paimon field under the old name) since the              rows in MySQL were written: Paimon reads NULL there for every row written before, and MySQL still holds              the old column's values, so the sync stops before writing. Start the sync over (`pms-worker reset`,              then a full read that removes what Paimon doesn't have), or rebuild the target"
        ),
    })
}

impl Pipeline {
    /// Snapshot `snapshot_id` has schema `to`, newer than `from` this source was opened with:
    /// an error when its columns changed under `fail`; otherwise `Ok`, and the caller opens the
    /// table again (its shape is checked again too: options may have changed).
    pub(super) fn new_schema(
        &self,
        snapshot_id: i64,
        from: i64,
        to: i64,
        columns_changed: bool,
    ) -> Result<()> {
        let policy = self.cfg.spec.source.schema_changes;
        if !columns_changed || policy != SchemaChanges::Fail {
            tracing::info!(
                snapshot_id,
                from,
                to,
                columns_changed,
                ?policy,
                "the Paimon schema changed: opening the table again before reading this snapshot"
            );
            return Ok(());
        }
        Err(WorkerError::Source {
            table: self.source.name().to_string(),
            message: format!(
                "the table's schema changed at snapshot {snapshot_id} (schema {from} → {to}, e.g. ALTER TABLE … \
                 ADD COLUMN); with source.schemaChanges: fail the sync stops before applying snapshot {snapshot_id}. \
                 Restart it: the MySQL table is checked against the new schema (add the new columns to MySQL, or \
                 leave them out with sink.columns.exclude). Or set source.schemaChanges: apply (new columns are \
                 added to MySQL) or ignore (they are left out)"
            ),
        })
    }
}
