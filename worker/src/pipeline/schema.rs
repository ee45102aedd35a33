//! The Paimon schema against MySQL, at each start and when it changes while the sync runs
//! (`source.schemaChanges`): a new schema ends this source's run, and the sync either stops
//! (`fail`) or opens the table again, checks MySQL against it (adding new columns with
//! `apply`) and goes on from the first snapshot of that schema.

use pms_crds::SchemaChanges;

use super::Pipeline;
use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};
use crate::mapping::{build_layout, new_columns, Layout};
use crate::sink::MysqlConnection;
use crate::source::PaimonSource;

/// The validated layout of the source's schema onto the target. With `apply`, the Paimon
/// columns this process saw appear (not among `read_before`, the fields of the previous schema
/// it read with) are added to MySQL first: every row written so far predates them, so NULL is
/// their value there too. A column MySQL lacks at a cold start is not added: whether rows
/// already written should hold values in it can't be told then, so it is refused as under `fail`.
pub(crate) async fn validated_layout(
    source: &PaimonSource,
    mysql: &MysqlConnection,
    cfg: &WorkerConfig,
    read_before: Option<&[i32]>,
) -> Result<Layout> {
    let history = source.schema_history().await?;
    let mut target = mysql.describe_target().await?;
    if let (SchemaChanges::Apply, Some(t), Some(before)) =
        (cfg.spec.source.schema_changes, &target, read_before)
    {
        let added: Vec<_> = new_columns(source.columns(), &cfg.spec.sink.columns, t, &history)
            .into_iter()
            .filter(|c| {
                source
                    .field_id(&c.paimon)
                    .is_some_and(|id| !before.contains(&id))
            })
            .collect();
        for column in &added {
            mysql.add_column(column).await?;
        }
        if !added.is_empty() {
            target = mysql.describe_target().await?;
        }
    }
    build_layout(
        source.columns(),
        target.as_ref(),
        &cfg.spec,
        &cfg.target_name(),
        cfg.slot.count,
        &history,
    )
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
