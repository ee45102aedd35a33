//! Every statement the sink runs against the target table: multi-row upserts and deletes,
//! the bulk load and the probes. The table name is quoted here, once.

use mysql_async::Value;

use super::literal;
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

    /// The multi-row upsert: `INSERT … VALUES (…), (…) ON DUPLICATE KEY UPDATE …`; a row is the
    /// mapped columns, then the guard value.
    pub fn upsert(&self) -> Template {
        let mut tail = String::new();
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
            tail.push_str(" AS new");
        }
        tail.push_str(" ON DUPLICATE KEY UPDATE ");
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
        tail.push_str(&sets.join(", "));
        Template {
            head: format!(
                "INSERT INTO {} ({}) VALUES ",
                self.table,
                self.columns.join(", ")
            ),
            prefixes: listed(self.columns.len()),
            open: "(",
            close: ")",
            separator: ", ",
            tail,
        }
    }

    /// The multi-row delete: `DELETE … WHERE (k1, k2) IN ((…), …)`; with qualifiers, each key
    /// only in its partition; with a guard, only when the stored row is not newer than the
    /// delete. A row is the key, the qualifiers, then the guard value.
    pub fn delete(&self) -> Template {
        if self.guard.is_some() || !self.qualifiers.is_empty() {
            let prefixes = self
                .key
                .iter()
                .map(|k| format!("{k} = "))
                .chain(self.qualifiers.iter().map(|q| format!("{q} <=> ")))
                .chain(self.guard.iter().map(|g| format!("COALESCE({g}, -1) <= ")))
                .enumerate()
                .map(|(i, p)| if i == 0 { p } else { format!(" AND {p}") })
                .collect();
            return Template {
                head: format!("DELETE FROM {} WHERE ", self.table),
                prefixes,
                open: "(",
                close: ")",
                separator: " OR ",
                tail: String::new(),
            };
        }
        let (columns, open, close) = match self.key.as_slice() {
            [one] => (one.clone(), "", ""),
            many => (format!("({})", many.join(", ")), "(", ")"),
        };
        Template {
            head: format!("DELETE FROM {} WHERE {columns} IN (", self.table),
            prefixes: listed(self.key.len()),
            open,
            close,
            separator: ", ",
            tail: ")".into(),
        }
    }
}

/// One kind of multi-row statement as text: `head`, the rows between `separator`s, `tail`; a
/// row is `open`, each value as a literal after its prefix, `close`.
#[derive(Clone, Debug)]
pub struct Template {
    head: String,
    prefixes: Vec<String>,
    open: &'static str,
    close: &'static str,
    separator: &'static str,
    tail: String,
}

impl Template {
    /// Starts a statement in `out` (emptied first).
    pub fn begin(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(self.head.as_bytes());
    }

    /// Appends a row, its values then its guard value; `first` when it is the statement's first.
    pub fn push_row<'v>(
        &self,
        out: &mut Vec<u8>,
        first: bool,
        values: impl Iterator<Item = &'v Value>,
        guard: Option<i64>,
    ) {
        if !first {
            out.extend_from_slice(self.separator.as_bytes());
        }
        out.extend_from_slice(self.open.as_bytes());
        let mut prefixes = self.prefixes.iter();
        // Values first: `zip` then stops without taking the guard's prefix.
        for (v, prefix) in values.zip(prefixes.by_ref()) {
            out.extend_from_slice(prefix.as_bytes());
            literal::push(out, v);
        }
        if let (Some(prefix), Some(g)) = (prefixes.next(), guard) {
            out.extend_from_slice(prefix.as_bytes());
            literal::push(out, &Value::Int(g));
        }
        out.extend_from_slice(self.close.as_bytes());
    }

    pub fn finish(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.tail.as_bytes());
    }
}

/// Prefixes of `n` values in a list: none before the first, a comma before the others.
fn listed(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| if i == 0 { "" } else { ", " }.into())
        .collect()
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
                checks: Default::default(),
            });
        }
        Layout {
            key_positions: (0..keys.len()).collect(),
            delete_qualifiers: vec![],
            columns,
            warnings: vec![],
            filter: None,
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

    /// The statement of `template` over rows of `values`.
    fn render(template: &Template, rows: &[&[Value]]) -> String {
        let mut out = Vec::new();
        template.begin(&mut out);
        for (i, row) in rows.iter().enumerate() {
            template.push_row(&mut out, i == 0, row.iter(), None);
        }
        template.finish(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn upsert_and_delete_sql() {
        let s = Statements::new(
            "orders",
            &layout(&["id"], &["amount"]),
            Dialect::ValuesFunction,
            None,
        );
        let a = [Value::Int(1), Value::Bytes(b"x'y".to_vec())];
        let b = [Value::Int(2), Value::NULL];
        assert_eq!(
            render(&s.upsert(), &[&a, &b]),
            "INSERT INTO `orders` (`id`, `amount`) VALUES (1, 'x\\'y'), (2, NULL) ON DUPLICATE KEY UPDATE `amount` = VALUES(`amount`)"
        );
        assert_eq!(
            render(&s.delete(), &[&a[..1], &b[..1], &[Value::Int(3)]]),
            "DELETE FROM `orders` WHERE `id` IN (1, 2, 3)"
        );
        let c = Statements::new("t", &layout(&["a", "b"], &[]), Dialect::RowAlias, None);
        assert_eq!(
            render(&c.upsert(), &[&a]),
            "INSERT INTO `t` (`a`, `b`) VALUES (1, 'x\\'y') AS new ON DUPLICATE KEY UPDATE `a` = new.`a`"
        );
        assert_eq!(
            render(&c.delete(), &[&a, &b]),
            "DELETE FROM `t` WHERE (`a`, `b`) IN ((1, 'x\\'y'), (2, NULL))"
        );
    }

    #[test]
    fn deletes_of_keys_that_move_name_their_partition() {
        let mut l = layout(&["id"], &["amount", "region"]);
        l.delete_qualifiers = vec![2];
        let s = Statements::new("orders", &l, Dialect::ValuesFunction, None);
        let eu = [Value::Int(1), Value::Bytes(b"EU".to_vec())];
        let none = [Value::Int(2), Value::NULL];
        assert_eq!(
            render(&s.delete(), &[&eu, &none]),
            "DELETE FROM `orders` WHERE (`id` = 1 AND `region` <=> 'EU') OR (`id` = 2 AND `region` <=> NULL)"
        );
        let g = Statements::new("orders", &l, Dialect::ValuesFunction, Some("seq"));
        let guarded = [Value::Int(1), Value::Bytes(b"EU".to_vec()), Value::Int(7)];
        assert_eq!(
            render(&g.delete(), &[&guarded]),
            "DELETE FROM `orders` WHERE (`id` = 1 AND `region` <=> 'EU' AND COALESCE(`seq`, -1) <= 7)"
        );
    }

    #[test]
    fn guarded_statements_compare_before_they_write() {
        let s = Statements::new(
            "orders",
            &layout(&["id"], &["amount"]),
            Dialect::ValuesFunction,
            Some("seq"),
        );
        let row = [Value::Int(1), Value::Bytes(b"2.50".to_vec()), Value::Int(9)];
        assert_eq!(
            render(&s.upsert(), &[&row]),
            "INSERT INTO `orders` (`id`, `amount`, `seq`) VALUES (1, '2.50', 9) ON DUPLICATE KEY UPDATE \
             `amount` = IF(VALUES(`seq`) >= COALESCE(`seq`, -1), VALUES(`amount`), `amount`), \
             `seq` = GREATEST(COALESCE(`seq`, -1), VALUES(`seq`))"
        );
        assert_eq!(
            render(&s.delete(), &[&[Value::Int(1), Value::Int(9)], &[Value::Int(2), Value::Int(9)]]),
            "DELETE FROM `orders` WHERE (`id` = 1 AND COALESCE(`seq`, -1) <= 9) OR (`id` = 2 AND COALESCE(`seq`, -1) <= 9)"
        );
    }
}
