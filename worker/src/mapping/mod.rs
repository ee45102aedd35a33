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
mod target;
mod type_fit;

pub use change::{encode_key, Change, ChangeKind, RowKind};
pub use columns::{plan_layout, ColumnPlan, Layout};
pub use ddl::{quote_ident, suggested_create_table, suggested_mysql_type};
pub use decode::{decode_batch, Decoded};
pub use target::{TargetColumn, TargetIndex, TargetTable};

use pms_crds::SinkSpec;

use crate::error::{Result, WorkerError};
use crate::source::SourceColumn;

/// The validated layout of `source` onto the target, or every problem found, each with what
/// to change. `target` is `None` when the table does not exist (then a `CREATE TABLE` that
/// fits is suggested). `target_name` is `db.table`, for messages; `slots` the sync's slot count.
pub fn build_layout(
    source: &[SourceColumn],
    target: Option<&TargetTable>,
    sink: &SinkSpec,
    target_name: &str,
    slots: u32,
) -> Result<Layout> {
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
    let layout = plan_layout(source, &sink.columns, target, sink.allow_extra_unique_keys)
        .map_err(invalid)?;
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
