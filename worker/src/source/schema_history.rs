//! What the table's earlier schemas say about today's columns: which were renamed and which
//! were dropped. Paimon keeps every schema file, and a field keeps its id through a rename, so
//! a column MySQL still has under an old name is told apart from a new one.

use std::collections::{BTreeSet, HashMap};

/// Renames and drops since the table's first schema.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SchemaHistory {
    /// Today's column name → the other names the same field had before.
    pub renamed: HashMap<String, BTreeSet<String>>,
    /// Names of fields earlier schemas had and today's has not, under any name (a name in use
    /// today is not dropped, even if another field had it before).
    pub dropped: BTreeSet<String>,
}

impl SchemaHistory {
    /// From today's fields and every earlier schema's, each as `(field id, name)`.
    pub fn new(current: &[(i32, String)], earlier: &[Vec<(i32, String)>]) -> Self {
        let mut history = Self::default();
        for (id, name) in earlier.iter().flatten() {
            if let Some((_, now)) = current.iter().find(|(cid, _)| cid == id) {
                if now != name {
                    let names = history.renamed.entry(now.clone()).or_default();
                    names.insert(name.clone());
                }
            } else if !current.iter().any(|(_, now)| now == name) {
                history.dropped.insert(name.clone());
            }
        }
        history
    }
}

/// The names of `now` that `before` had for another field: columns dropped and added again
/// (`DROP COLUMN note`, `ADD COLUMN note`), a new field to Paimon, which reads it as NULL in
/// every row written before, whatever the old column held.
pub fn readded(before: &[(i32, String)], now: &[(i32, String)]) -> Vec<String> {
    now.iter()
        .filter(|(id, name)| before.iter().any(|(b, n)| n == name && b != id))
        .map(|(_, name)| name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(v: &[(i32, &str)]) -> Vec<(i32, String)> {
        v.iter().map(|(i, n)| (*i, n.to_string())).collect()
    }

    #[test]
    fn renames_and_drops_are_told_by_field_id() {
        let v0 = fields(&[(0, "id"), (1, "note"), (2, "old")]);
        let v1 = fields(&[(0, "id"), (1, "remark"), (2, "old"), (3, "added")]);
        let now = fields(&[(0, "id"), (1, "remark"), (3, "added"), (4, "note")]);
        let h = SchemaHistory::new(&now, &[v0, v1]);
        assert_eq!(h.renamed["remark"], BTreeSet::from(["note".to_string()]));
        assert_eq!(h.renamed.len(), 1);
        assert_eq!(h.dropped, BTreeSet::from(["old".to_string()]));
    }

    #[test]
    fn a_column_dropped_and_added_again_is_told_by_its_new_field_id() {
        let before = fields(&[(0, "id"), (1, "note"), (2, "tag")]);
        let now = fields(&[(0, "id"), (2, "label"), (3, "note"), (4, "tag")]);
        assert_eq!(readded(&before, &now), ["note", "tag"]);
        assert!(readded(&now, &now).is_empty());
    }

    #[test]
    fn a_table_that_only_grew_has_no_history() {
        let v0 = fields(&[(0, "id")]);
        let now = fields(&[(0, "id"), (1, "added")]);
        assert_eq!(SchemaHistory::new(&now, &[v0]), SchemaHistory::default());
    }
}
