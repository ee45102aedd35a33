//! Cutting a batch into statements that fit the server's limits.

use std::ops::Range;

use mysql_async::Value;

/// MySQL's limit on placeholders in one prepared statement.
pub const MAX_PLACEHOLDERS: usize = 65_535;

/// Bytes a value takes in the binary protocol, roughly (length prefix included).
pub fn wire_bytes(v: &Value) -> usize {
    match v {
        Value::NULL => 1,
        Value::Bytes(b) => b.len() + 9,
        Value::Date(..) => 12,
        Value::Time(..) => 13,
        _ => 9,
    }
}

/// Cuts `rows` into ranges that each fit one statement: at most `max_rows` rows, at most
/// `MAX_PLACEHOLDERS` parameters and about `max_bytes` of parameter data.
pub fn chunk_ranges<'a>(
    rows: usize,
    params_per_row: usize,
    max_rows: usize,
    max_bytes: usize,
    row_bytes: impl Fn(usize) -> usize + 'a,
) -> Vec<Range<usize>> {
    let max_rows = max_rows
        .min(MAX_PLACEHOLDERS / params_per_row.max(1))
        .max(1);
    let mut out = Vec::new();
    let mut start = 0;
    while start < rows {
        let mut end = start;
        let mut bytes = 0;
        while end < rows && end - start < max_rows {
            let b = row_bytes(end);
            if end > start && bytes + b > max_bytes {
                break;
            }
            bytes += b;
            end += 1;
        }
        out.push(start..end);
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_respect_rows_placeholders_and_bytes() {
        assert_eq!(
            chunk_ranges(10, 2, 4, 1 << 20, |_| 10),
            vec![0..4, 4..8, 8..10]
        );
        assert_eq!(chunk_ranges(70_000, 1, 100_000, usize::MAX, |_| 1).len(), 2);
        assert_eq!(chunk_ranges(5, 1, 100, 25, |_| 10), vec![0..2, 2..4, 4..5]);
        // One row bigger than the budget still goes, alone.
        assert_eq!(chunk_ranges(2, 1, 100, 5, |_| 10), vec![0..1, 1..2]);
    }
}
