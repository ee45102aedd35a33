//! The check after every measured run: the synced `orders` table holds exactly the rows the
//! generator committed (the generator mirrors Paimon Java's, see `order_row`), compared as the
//! row count and the sum of each row's CRC32, computed by MariaDB on one side and here on the other.

use super::order_row;
use crate::mysql::TestDb;

/// What the table holds after the commits: every id in `1..=rows` that `kept` says still
/// exists, with the values of generator `salt`.
pub struct Expected<'a> {
    pub rows: i64,
    pub salt: i64,
    pub kept: &'a dyn Fn(i64) -> bool,
}

impl Expected<'_> {
    /// Every id in `1..=rows`, with the values of generator `salt`.
    pub fn all(rows: i64, salt: i64) -> Expected<'static> {
        Expected {
            rows,
            salt,
            kept: &all,
        }
    }

    /// `(COUNT(*), SUM(CRC32(id|amount|status|updated_at)))` of the expected rows.
    pub fn checksum(&self) -> (i64, u64) {
        let mut count = 0;
        let mut sum = 0u64;
        for id in (1..=self.rows).filter(|&id| (self.kept)(id)) {
            let (id, amount, status, ts) = order_row(id, self.salt);
            count += 1;
            sum += u64::from(crc32fast::hash(
                format!("{id}|{amount}|{status}|{ts}").as_bytes(),
            ));
        }
        (count, sum)
    }

    /// Panics, naming `what`, unless `orders` in `db` holds exactly the expected rows.
    pub async fn check(&self, db: &TestDb, what: &str) {
        assert_eq!(
            table_checksum(db).await,
            self.checksum(),
            "{what}: the synced table differs from what was committed (COUNT, SUM of row CRC32s)"
        );
    }
}

/// The same checksum of `orders` in `db`, computed by MariaDB.
pub async fn table_checksum(db: &TestDb) -> (i64, u64) {
    let got = db
        .query_strings(
            "SELECT COUNT(*), COALESCE(SUM(CRC32(CONCAT_WS('|', id, amount, status, updated_at))), 0) FROM orders",
        )
        .await;
    let parse = |i: usize| -> u64 {
        got[0][i]
            .as_deref()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("checksum query returned {got:?}"))
    };
    (parse(0) as i64, parse(1))
}

/// Every id.
pub fn all(_: i64) -> bool {
    true
}
