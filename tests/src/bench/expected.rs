//! The check after every measured run: the synced `orders` table holds exactly the rows the
//! generator committed (mirrored here from Paimon Java's, see `order_row` and `wide::row_bytes`),
//! compared as the row count and the sum of each row's CRC32, computed by MariaDB on one side
//! and here on the other.

use super::Shape;
use crate::mysql::TestDb;

/// What the table holds after the commits: every id in `1..=rows` that `kept` says still
/// exists, with the values of generator `salt`.
pub struct Expected<'a> {
    pub shape: Shape,
    pub rows: i64,
    pub salt: i64,
    pub kept: &'a dyn Fn(i64) -> bool,
}

impl Expected<'_> {
    /// Every id in `1..=rows`, with the values of generator `salt`.
    pub fn all(rows: i64, salt: i64) -> Expected<'static> {
        Self::all_of(Shape::Orders, rows, salt)
    }

    /// Every id in `1..=rows` of a table of `shape`, with the values of generator `salt`.
    pub fn all_of(shape: Shape, rows: i64, salt: i64) -> Expected<'static> {
        Expected {
            shape,
            rows,
            salt,
            kept: &all,
        }
    }

    /// `(COUNT(*), SUM(CRC32(CONCAT_WS('|', every column))))` of the expected rows.
    pub fn checksum(&self) -> (i64, u64) {
        let mut count = 0;
        let mut sum = 0u64;
        for id in (1..=self.rows).filter(|&id| (self.kept)(id)) {
            count += 1;
            sum += u64::from(crc32fast::hash(&self.shape.row_bytes(id, self.salt)));
        }
        (count, sum)
    }

    /// Panics, naming `what`, unless `orders` in `db` holds exactly the expected rows.
    pub async fn check(&self, db: &TestDb, what: &str) {
        assert_eq!(
            shape_checksum(db, self.shape).await,
            self.checksum(),
            "{what}: the synced table differs from what was committed (COUNT, SUM of row CRC32s)"
        );
    }
}

/// The same checksum of `orders` (of the `orders` shape) in `db`, computed by MariaDB.
pub async fn table_checksum(db: &TestDb) -> (i64, u64) {
    shape_checksum(db, Shape::Orders).await
}

async fn shape_checksum(db: &TestDb, shape: Shape) -> (i64, u64) {
    let got = db
        .query_strings(&format!(
            "SELECT COUNT(*), COALESCE(SUM(CRC32({})), 0) FROM orders",
            shape.concat_sql()
        ))
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
