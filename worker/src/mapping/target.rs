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
    pub parts: Vec<IndexPart>,
}

impl TargetIndex {
    /// An index on `columns`, each whole.
    pub fn on(name: &str, unique: bool, columns: &[&str]) -> Self {
        Self {
            name: name.into(),
            unique,
            parts: columns.iter().map(|c| IndexPart::whole(c)).collect(),
        }
    }

    /// `name(part, …)`, as MySQL shows it.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self.parts.iter().map(IndexPart::to_string).collect();
        format!("{}({})", self.name, parts.join(", "))
    }
}

/// One part of an index: a column, the first `prefix` characters (bytes) of one, or an
/// expression (a functional index part, MySQL 8: no column).
#[derive(Clone, Debug, PartialEq)]
pub struct IndexPart {
    pub column: Option<String>,
    pub prefix: Option<u64>,
}

impl IndexPart {
    pub fn whole(column: &str) -> Self {
        Self {
            column: Some(column.into()),
            prefix: None,
        }
    }

    /// The column, when the part holds all of it (neither a prefix nor an expression).
    pub fn whole_column(&self) -> Option<&str> {
        self.column.as_deref().filter(|_| self.prefix.is_none())
    }
}

impl std::fmt::Display for IndexPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.column, self.prefix) {
            (None, _) => f.write_str("(an expression)"),
            (Some(c), None) => f.write_str(c),
            (Some(c), Some(n)) => write!(f, "{c}({n})"),
        }
    }
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
