//! Every statement the sink runs against the target table: multi-row upserts and deletes,
//! the bulk load and the probes. The table name is quoted here, once.

use crate::mapping::{quote_ident, Layout};

/// How `ON DUPLICATE KEY UPDATE` refers to the incoming row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// MySQL ≥ 8.0.19: `VALUES (…) AS new ON DUPLICATE KEY UPDATE c = new.c` (VALUES() is deprecated there).
    RowAlias,
    /// MariaDB and older MySQL: `c = VALUES(c)`.
    ValuesFunction,
}

impl Dialect {
    /// From `SELECT VERSION()`, e.g. `8.0.36` or `10.11.6-MariaDB-0+deb12u1`.
    pub fn from_version(version: &str) -> Self {
        if version.to_ascii_lowercase().contains("mariadb") {
            return Dialect::ValuesFunction;
        }
        let nums: Vec<u32> = version
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .take(3)
            .filter_map(|s| s.parse().ok())
            .collect();
        match nums.as_slice() {
            [major, minor, patch, ..] if (*major, *minor, *patch) >= (8, 0, 19) => {
                Dialect::RowAlias
            }
            _ => Dialect::ValuesFunction,
        }
    }
}

/// The statements of one target table.
#[derive(Clone, Debug)]
pub struct Statements {
    table: String,
    columns: Vec<String>,
    non_key: Vec<String>,
    key: Vec<String>,
    /// Partition columns a delete also matches (with `<=>`: a partition value may be NULL).
    qualifiers: Vec<String>,
    dialect: Dialect,
    /// The sequence-guard column, if any: written last, compared first.
    guard: Option<String>,
}

impl Statements {
    pub fn new(table: &str, layout: &Layout, dialect: Dialect, guard: Option<&str>) -> Self {
        let mut quoted: Vec<String> = layout
            .columns
            .iter()
            .map(|c| quote_ident(&c.mysql))
            .collect();
        let non_key = layout
            .columns
            .iter()
            .zip(&quoted)
            .filter(|(c, _)| !c.is_key)
            .map(|(_, q)| q.clone())
            .collect();
        let key = layout
            .key_positions
            .iter()
            .map(|&i| quoted[i].clone())
            .collect();
        let qualifiers = layout
            .delete_qualifiers
            .iter()
            .map(|&i| quoted[i].clone())
            .collect();
        let guard = guard.map(quote_ident);
        quoted.extend(guard.clone());
        Self {
            table: quote_ident(table),
            non_key,
            key,
            qualifiers,
            columns: quoted,
            dialect,
            guard,
        }
    }

    /// `LOAD DATA LOCAL INFILE … REPLACE` of the mapped columns, rows as tab-separated text
    /// (see `bulk.rs`). REPLACE keeps a replay after a crash idempotent.
    pub fn load_data(&self) -> String {
        let columns = &self.columns[..self.columns.len() - usize::from(self.guard.is_some())];
        format!(
            "LOAD DATA LOCAL INFILE 'pms-rows' REPLACE INTO TABLE {} CHARACTER SET utf8mb4 \
             FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' ({})",
            self.table,
            columns.join(", ")
        )
    }

    /// The quoted table name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// For each privilege the sink needs on the table, a statement that needs just it and
    /// changes nothing (for `EXPLAIN`): the mapped columns, so column grants count too.
    pub fn privilege_probes(&self) -> [(&'static str, String); 4] {
        let updated = if self.non_key.is_empty() {
            &self.key
        } else {
            &self.non_key
        };
        let sets: Vec<String> = updated.iter().map(|c| format!("{c} = {c}")).collect();
        [
            ("SELECT", self.any_row()),
            (
                "INSERT",
                format!(
                    "INSERT INTO {} ({}) VALUES ({})",
                    self.table,
                    self.columns.join(", "),
                    vec!["NULL"; self.columns.len()].join(", ")
                ),
            ),
            (
                "UPDATE",
                format!("UPDATE {} SET {} WHERE 1 = 0", self.table, sets.join(", ")),
            ),
            ("DELETE", format!("DELETE FROM {} WHERE 1 = 0", self.table)),
        ]
    }

    /// One row if the table has any.
    pub fn any_row(&self) -> String {
        format!("SELECT 1 FROM {} LIMIT 1", self.table)
    }

    /// Parameters per upserted row (the mapped columns, plus the guard value).
    pub fn upsert_params(&self) -> usize {
        self.columns.len()
    }

    /// Parameters per deleted row (the key, the qualifiers, the guard value).
    pub fn delete_params(&self) -> usize {
        self.key.len() + self.qualifiers.len() + usize::from(self.guard.is_some())
    }

    /// `INSERT … VALUES (?,…),… ON DUPLICATE KEY UPDATE …` for `rows` rows.
    pub fn upsert(&self, rows: usize) -> String {
        let tuple = placeholders(self.columns.len());
        let mut sql = format!(
            "INSERT INTO {} ({}) VALUES ",
            self.table,
            self.columns.join(", ")
        );
        push_repeated(&mut sql, &tuple, rows);
        // With only key columns there is nothing to update; assigning a key to itself is a no-op.
        let updates: &[String] = if self.non_key.is_empty() && self.guard.is_none() {
            &self.key[..1]
        } else {
            &self.non_key
        };
        let incoming = |c: &str| match self.dialect {
            Dialect::RowAlias => format!("new.{c}"),
            Dialect::ValuesFunction => format!("VALUES({c})"),
        };
        if self.dialect == Dialect::RowAlias {
            sql.push_str(" AS new");
        }
        sql.push_str(" ON DUPLICATE KEY UPDATE ");
        let sets: Vec<String> = match &self.guard {
            // Assignments run left to right: compare against the stored guard before it changes.
            Some(g) => updates
                .iter()
                .map(|c| {
                    format!(
                        "{c} = IF({} >= COALESCE({g}, -1), {}, {c})",
                        incoming(g),
                        incoming(c)
                    )
                })
                .chain(std::iter::once(format!(
                    "{g} = GREATEST(COALESCE({g}, -1), {})",
                    incoming(g)
                )))
                .collect(),
            None => updates
                .iter()
                .map(|c| format!("{c} = {}", incoming(c)))
                .collect(),
        };
        sql.push_str(&sets.join(", "));
        sql
    }

    /// `DELETE … WHERE (k1, k2) IN ((?, ?), …)` for `rows` keys; with qualifiers, each key only
    /// in its partition; with a guard, only when the stored row is not newer than the delete.
    pub fn delete(&self, rows: usize) -> String {
        if self.guard.is_some() || !self.qualifiers.is_empty() {
            let one: Vec<String> = self
                .key
                .iter()
                .map(|k| format!("{k} = ?"))
                .chain(self.qualifiers.iter().map(|q| format!("{q} <=> ?")))
                .chain(self.guard.iter().map(|g| format!("COALESCE({g}, -1) <= ?")))
                .collect();
            let one = format!("({})", one.join(" AND "));
            return format!(
                "DELETE FROM {} WHERE {}",
                self.table,
                vec![one; rows].join(" OR ")
            );
        }
        let mut sql = if self.key.len() == 1 {
            format!("DELETE FROM {} WHERE {} IN ", self.table, self.key[0])
        } else {
            format!(
                "DELETE FROM {} WHERE ({}) IN ",
                self.table,
                self.key.join(", ")
            )
        };
        if self.key.len() == 1 {
            sql.push('(');
            sql.push_str(&vec!["?"; rows].join(", "));
            sql.push(')');
        } else {
            sql.push('(');
            push_repeated(&mut sql, &placeholders(self.key.len()), rows);
            sql.push(')');
        }
        sql
    }
}

fn placeholders(n: usize) -> String {
    format!("({})", vec!["?"; n].join(", "))
}

fn push_repeated(sql: &mut String, tuple: &str, rows: usize) {
    sql.reserve(rows * (tuple.len() + 2));
    for i in 0..rows {
        if i > 0 {
            sql.push_str(", ");
        }
        sql.push_str(tuple);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::convert::{Encoding, Precision};
    use crate::mapping::ColumnPlan;

    fn layout(keys: &[&str], others: &[&str]) -> Layout {
        let mut columns = Vec::new();
        for (k, is_key) in keys
            .iter()
            .map(|k| (k, true))
            .chain(others.iter().map(|o| (o, false)))
        {
            columns.push(ColumnPlan {
                paimon: k.to_string(),
                mysql: k.to_string(),
                encoding: Encoding::Native,
                precision: Precision::default(),
                is_key,
            });
        }
        Layout {
            key_positions: (0..keys.len()).collect(),
            delete_qualifiers: vec![],
            columns,
            warnings: vec![],
        }
    }

    #[test]
    fn dialect_by_server_version() {
        assert_eq!(
            Dialect::from_version("10.11.6-MariaDB-0+deb12u1"),
            Dialect::ValuesFunction
        );
        assert_eq!(Dialect::from_version("8.0.18"), Dialect::ValuesFunction);
        assert_eq!(Dialect::from_version("8.0.19"), Dialect::RowAlias);
        assert_eq!(Dialect::from_version("8.4.2-commercial"), Dialect::RowAlias);
        assert_eq!(Dialect::from_version("5.7.44-log"), Dialect::ValuesFunction);
    }

    #[test]
    fn upsert_and_delete_sql() {
        let s = Statements::new(
            "orders",
            &layout(&["id"], &["amount"]),
            Dialect::ValuesFunction,
            None,
        );
        assert_eq!(
            s.upsert(2),
            "INSERT INTO `orders` (`id`, `amount`) VALUES (?, ?), (?, ?) ON DUPLICATE KEY UPDATE `amount` = VALUES(`amount`)"
        );
        assert_eq!(s.delete(3), "DELETE FROM `orders` WHERE `id` IN (?, ?, ?)");
        let c = Statements::new("t", &layout(&["a", "b"], &[]), Dialect::RowAlias, None);
        assert_eq!(
            c.upsert(1),
            "INSERT INTO `t` (`a`, `b`) VALUES (?, ?) AS new ON DUPLICATE KEY UPDATE `a` = new.`a`"
        );
        assert_eq!(
            c.delete(2),
            "DELETE FROM `t` WHERE (`a`, `b`) IN ((?, ?), (?, ?))"
        );
    }

    #[test]
    fn deletes_of_keys_that_move_name_their_partition() {
        let mut l = layout(&["id"], &["amount", "region"]);
        l.delete_qualifiers = vec![2];
        let s = Statements::new("orders", &l, Dialect::ValuesFunction, None);
        assert_eq!(
            s.delete(2),
            "DELETE FROM `orders` WHERE (`id` = ? AND `region` <=> ?) OR (`id` = ? AND `region` <=> ?)"
        );
        let g = Statements::new("orders", &l, Dialect::ValuesFunction, Some("seq"));
        assert_eq!(
            g.delete(1),
            "DELETE FROM `orders` WHERE (`id` = ? AND `region` <=> ? AND COALESCE(`seq`, -1) <= ?)"
        );
        assert_eq!(g.delete_params(), 3);
    }

    #[test]
    fn guarded_statements_compare_before_they_write() {
        let s = Statements::new(
            "orders",
            &layout(&["id"], &["amount"]),
            Dialect::ValuesFunction,
            Some("seq"),
        );
        assert_eq!(
            s.upsert(1),
            "INSERT INTO `orders` (`id`, `amount`, `seq`) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE \
             `amount` = IF(VALUES(`seq`) >= COALESCE(`seq`, -1), VALUES(`amount`), `amount`), \
             `seq` = GREATEST(COALESCE(`seq`, -1), VALUES(`seq`))"
        );
        assert_eq!(s.delete(2), "DELETE FROM `orders` WHERE (`id` = ? AND COALESCE(`seq`, -1) <= ?) OR (`id` = ? AND COALESCE(`seq`, -1) <= ?)");
        assert_eq!((s.upsert_params(), s.delete_params()), (3, 2));
    }
}
