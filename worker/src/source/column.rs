//! A Paimon column as the later stages need it.

use paimon::spec::DataType;

/// A Paimon column as the validation needs it.
#[derive(Clone, Debug)]
pub struct SourceColumn {
    pub name: String,
    pub data_type: DataType,
    pub is_key: bool,
    /// A partition field outside the key of a cross-partition-update table: a key that moves
    /// partition is deleted from its old partition only, so deletes name this column too.
    pub qualifies_deletes: bool,
}
