//! The mapping stage: from the Paimon schema, the target table's description and the spec, the
//! validated [`Layout`] (which column goes where, encoded how); and with it, record batches
//! decoded into keyed [`Change`]s for the buffer. Nothing here talks to MySQL: the sink reads
//! the target's description and hands it in.

mod change;
mod columns;
pub mod convert;
mod ddl;
mod decode;
mod keys;
mod layout;
mod names;
mod schema_changes;
mod target;
mod type_fit;
mod value_checks;

pub use change::{encode_key, Change, ChangeKind, RowKind};
pub use columns::plan_layout;
pub use ddl::{
    create_table_statement, on_server, suggested_create_table, suggested_mysql_type, NOPAD_BIN,
};
pub use decode::{decode_batch, Decoded};
pub use layout::{ColumnPlan, Layout};
pub use names::quote_ident;
pub use schema_changes::{new_columns, NewColumn};
pub use target::{IndexPart, TargetColumn, TargetIndex, TargetTable};
pub use value_checks::{MaxLen, ValueChecks};

use pms_crds::{PaimonMysqlSyncSpec, SchemaChanges};

use crate::error::{Result, WorkerError};
use crate::source::{SchemaHistory, SourceColumn};

/// The validated layout of `source` onto the target, or every problem found, each with what
/// to change. `target` is `None` when the table does not exist (then a `CREATE TABLE` that
/// fits is suggested). `target_name` is `db.table`, for messages; `slots` the sync's slot
/// count; `history` the renames and drops of the Paimon table.
pub fn build_layout(
    source: &[SourceColumn],
    target: Option<&TargetTable>,
    spec: &PaimonMysqlSyncSpec,
    target_name: &str,
    slots: u32,
    history: &SchemaHistory,
) -> Result<Layout> {
    let sink = &spec.sink;
    let policy = spec.source.schema_changes;
    let invalid = |problems| WorkerError::Validation {
        table: target_name.to_string(),
        problems,
    };
    let Some(target) = target else {
        return Err(invalid(vec![format!(
            "the table does not exist; create it first, for example:\n{}",
            suggested_create_table(&sink.table, source, &sink.columns)
        )]));
    };
    let (mut problems, mut warnings) = (Vec::new(), Vec::new());
    schema_changes::check_history(
        source,
        &sink.columns,
        target,
        history,
        policy,
        &mut problems,
        &mut warnings,
    );
    let mut mapping = sink.columns.clone();
    if policy == SchemaChanges::Ignore {
        for column in new_columns(source, &sink.columns, target, history) {
            warnings.push(format!(
                "Paimon column {:?} has no MySQL column and is left out (source.schemaChanges: ignore)",
                column.paimon
            ));
            mapping.exclude.push(column.paimon);
        }
    }
    let mut layout = match plan_layout(source, &mapping, target, sink.allow_extra_unique_keys) {
        Ok(layout) if problems.is_empty() => layout,
        Ok(_) => return Err(invalid(problems)),
        Err(more) => return Err(invalid(problems.into_iter().chain(more).collect())),
    };
    layout.warnings.extend(warnings);
    if let Some(guard) = &sink.sequence_guard {
        keys::check_guard_column(&layout, target, &guard.column).map_err(invalid)?;
    } else if slots > 1 && !layout.delete_qualifiers.is_empty() {
        // A stale slot's upsert of a key that moved on would overwrite the newer row.
        return Err(invalid(vec![format!(
            "the Paimon table is a cross-partition-update table: its keys move between partitions, and so between \
             the {slots} slots, which may write one key in any order; set parallelism to 1, or set \
             sink.sequenceGuard so that the write of the newest snapshot wins"
        )]));
    }
    Ok(layout)
}
