//! The Paimon schema laid onto the MySQL table and validated, at each start of `run`, `verify`
//! and `check`, and when the schema changes while the sync runs.

use pms_crds::SchemaChanges;

use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};
use crate::mapping::{build_layout, new_columns, on_server, Layout};
use crate::sink::MysqlConnection;
use crate::source::PaimonSource;

/// The validated layout of the source's schema onto the target. With `apply`, the Paimon
/// columns this process saw appear (not among `read_before`, the fields of the previous schema
/// it read with) are added to MySQL first: every row written so far predates them, so NULL is
/// their value there too. A column MySQL lacks at a cold start is not added: whether rows
/// already written should hold values in it can't be told then, so it is refused as under `fail`.
pub async fn validated_layout(
    source: &PaimonSource,
    mysql: &MysqlConnection,
    cfg: &WorkerConfig,
    read_before: Option<&[(i32, String)]>,
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
                    .is_some_and(|id| !before.iter().any(|(b, _)| *b == id))
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
    .map(|layout| Layout {
        filter: source.filter().cloned(),
        ..layout
    })
    .map_err(|e| match e {
        // The suggested DDL in the problems names the collation this server has.
        WorkerError::Validation { table, problems } => WorkerError::Validation {
            table,
            problems: problems
                .iter()
                .map(|p| on_server(p, &mysql.server().binary_no_pad))
                .collect(),
        },
        e => e,
    })
}
