//! MySQL names: the column a Paimon column maps to (`sink.columns`), and how a name is quoted.

use pms_crds::ColumnMapping;

use crate::source::SourceColumn;

/// The MySQL name a Paimon column maps to, or `None` when `sink.columns` leaves it out.
pub(super) fn mapped_name(col: &SourceColumn, mapping: &ColumnMapping) -> Option<String> {
    let included = mapping
        .include
        .as_ref()
        .is_none_or(|inc| inc.contains(&col.name))
        && !mapping.exclude.contains(&col.name);
    included.then(|| {
        mapping
            .rename
            .get(&col.name)
            .cloned()
            .unwrap_or_else(|| col.name.clone())
    })
}

/// `name` as a MySQL identifier.
pub fn quote_ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}
