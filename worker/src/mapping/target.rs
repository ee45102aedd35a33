//! What the MySQL target table looks like (the sink reads it from `information_schema`).

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TargetColumn {
    pub name: String,
    /// `DATA_TYPE`, lower case: `int`, `varchar`, `datetime`, …
    pub data_type: String,
    /// `COLUMN_TYPE`, lower case: `int(11) unsigned`, `decimal(10,2)`, …
    pub column_type: String,
    pub nullable: bool,
    /// Has a default, is generated or auto-increments: may be left out of the INSERT.
    pub fills_itself: bool,
    pub char_max_length: Option<u64>,
    pub numeric_precision: Option<u64>,
    pub numeric_scale: Option<u64>,
    pub datetime_precision: Option<u64>,
    pub charset: Option<String>,
    /// `COLLATION_NAME` of a text column, lower case.
    pub collation: Option<String>,
}

impl TargetColumn {
    pub fn unsigned(&self) -> bool {
        self.column_type.contains("unsigned")
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TargetIndex {
    pub name: String,
    pub unique: bool,
    pub columns: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct TargetTable {
    pub columns: Vec<TargetColumn>,
    pub indexes: Vec<TargetIndex>,
}

impl TargetTable {
    pub fn column(&self, name: &str) -> Option<&TargetColumn> {
        self.columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }
}
