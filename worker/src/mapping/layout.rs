//! The validated layout of a Paimon schema onto a MySQL table: which column goes where,
//! encoded how, and which identify a row. Built by `columns::plan_layout`.

use super::convert::{Encoding, Precision};
use super::value_checks::ValueChecks;

/// One mapped column: where it comes from, where it goes, how it is encoded.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnPlan {
    pub paimon: String,
    pub mysql: String,
    pub encoding: Encoding,
    pub precision: Precision,
    pub is_key: bool,
    /// What the worker checks of each value before writing it.
    pub checks: ValueChecks,
}

/// The validated mapping; `key_positions` and `delete_qualifiers` index into `columns`.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub columns: Vec<ColumnPlan>,
    pub key_positions: Vec<usize>,
    /// The partition columns a key can move between (cross-partition-update tables): a delete
    /// applies only to the row still in its partition, and changes reduce per key and partition.
    pub delete_qualifiers: Vec<usize>,
    pub warnings: Vec<String>,
    /// `source.filter`: rows it doesn't keep are left out of a full read and deleted by key
    /// in changes (see `source/filter.rs`).
    pub filter: Option<std::sync::Arc<crate::source::filter::RowFilter>>,
}

impl Layout {
    /// The columns that identify one change in the buffer and in a delete: the key, then the
    /// delete qualifiers.
    pub fn delete_positions(&self) -> impl Iterator<Item = usize> + '_ {
        self.key_positions
            .iter()
            .chain(&self.delete_qualifiers)
            .copied()
    }
}

/// A MySQL column a Paimon column names (its type may or may not fit).
pub(super) struct MappedColumn {
    pub mysql: String,
    pub is_key: bool,
}
