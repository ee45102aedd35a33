//! A Paimon column as the later stages need it.

use paimon::spec::DataType;

/// A Paimon column as the validation needs it.
#[derive(Clone, Debug)]
pub struct SourceColumn {
    pub name: String,
    pub data_type: DataType,
    pub is_key: bool,
}
