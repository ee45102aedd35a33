//! Record batches → keyed changes in the MySQL column order of the layout.

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use mysql_async::Value;

use super::change::{encode_key, Change, ChangeKind, RowKind};
use super::convert::{column_values, ConvertError};
use super::layout::Layout;
use crate::error::{Result, WorkerError};

const ROW_KIND: &str = "rowkind";
const SEQUENCE: &str = "_SEQUENCE_NUMBER";

/// One decoded change, ready for the buffer.
#[derive(Debug)]
pub struct Decoded {
    pub key: Vec<u8>,
    pub kind: RowKind,
    pub change: Change,
    /// An insert or update whose row `source.filter` doesn't keep: its change is a delete of
    /// its key (the row may have been kept before); a full read leaves it out.
    pub filtered_out: bool,
}

/// Decodes a batch: the full read has no `rowkind` (all inserts), change reads do.
/// `snapshot_id` and the row's sequence number order changes of one key. Without `keyed`
/// (a read that holds one row per key, nothing to reduce) the changes' keys are left empty.
pub fn decode_batch(
    batch: &RecordBatch,
    layout: &Layout,
    snapshot_id: i64,
    table: &str,
    keyed: bool,
) -> Result<Vec<Decoded>> {
    let n = batch.num_rows();
    let mut columns: Vec<std::vec::IntoIter<Value>> = Vec::with_capacity(layout.columns.len());
    for c in &layout.columns {
        let array = batch.column_by_name(&c.paimon).ok_or_else(|| {
            WorkerError::Data(format!(
                "Paimon table {table}: column {:?} is missing from the read (schema changed?)",
                c.paimon
            ))
        })?;
        let values = column_values(array, c.encoding, c.precision).map_err(|e| match e {
            ConvertError::OutOfRange { row, .. } => WorkerError::Data(format!(
                "Paimon table {table}, snapshot {snapshot_id}, key ({}), column {:?}: {e}; the sync stops here \
                 without writing this change (a VARCHAR column keeps such values as text)",
                key_text(batch, layout, row),
                c.paimon
            )),
            e => WorkerError::Data(format!("Paimon table {table}, column {:?}: {e}", c.paimon)),
        })?;
        if !c.checks.is_empty() {
            if let Some((row, problem)) = values
                .iter()
                .enumerate()
                .find_map(|(row, v)| Some((row, c.checks.problem(v)?)))
            {
                return Err(WorkerError::Data(format!(
                    "Paimon table {table}, snapshot {snapshot_id}, key ({}), column {:?}: the value is {problem}; \
                     MySQL would store something else, so the sync stops here without writing this change",
                    key_text(batch, layout, row),
                    c.paimon
                )));
            }
        }
        columns.push(values.into_iter());
    }
    let kept = match &layout.filter {
        Some(f) => Some(
            f.keeps(batch)
                .map_err(|e| WorkerError::Data(format!("Paimon table {table}: {e}")))?,
        ),
        None => None,
    };
    let kinds = batch
        .column_by_name(ROW_KIND)
        .map(|a| a.as_string::<i32>().clone());
    let sequences = batch
        .column_by_name(SEQUENCE)
        .and_then(|a| a.as_primitive_opt::<Int64Type>().cloned());
    let mut out = Vec::with_capacity(n);
    let mut key_buf = Vec::new();
    for i in 0..n {
        let row: Vec<Value> = columns
            .iter_mut()
            .map(|c| c.next().unwrap_or(Value::NULL))
            .collect();
        let kind = match &kinds {
            Some(k) => RowKind::parse(k.value(i)).ok_or_else(|| {
                WorkerError::Data(format!(
                    "Paimon table {table}: unknown row kind {:?}",
                    k.value(i)
                ))
            })?,
            None => RowKind::Insert,
        };
        if let Some(&null_key) = layout
            .key_positions
            .iter()
            .find(|&&p| row[p] == Value::NULL)
        {
            return Err(WorkerError::Data(format!(
                "Paimon table {table}, snapshot {snapshot_id}: NULL in key column {:?}; a NULL key can't identify a MySQL row, \
                 so the sync stops here without writing this change",
                layout.columns[null_key].paimon
            )));
        }
        // Changes reduce per key, and per partition where keys move between partitions.
        if keyed {
            let identity: Vec<&Value> = layout.delete_positions().map(|p| &row[p]).collect();
            encode_key(&identity, &mut key_buf);
        }
        let sequence = sequences
            .as_ref()
            .filter(|s| !s.is_null(i))
            .map_or(0, |s| s.value(i));
        let filtered_out = matches!(kind, RowKind::Insert | RowKind::UpdateAfter)
            && kept.as_ref().is_some_and(|k| !k.value(i));
        let change_kind = match kind {
            _ if filtered_out => ChangeKind::Delete,
            RowKind::Delete | RowKind::UpdateBefore => ChangeKind::Delete,
            RowKind::Insert | RowKind::UpdateAfter => ChangeKind::Upsert,
        };
        out.push(Decoded {
            filtered_out,
            key: if keyed { key_buf.clone() } else { Vec::new() },
            kind,
            change: Change {
                kind: change_kind,
                row,
                order: (snapshot_id, sequence),
                bucket: 0,
            },
        });
    }
    Ok(out)
}

/// The key of one row, as SQL literals, for an error message.
fn key_text(batch: &RecordBatch, layout: &Layout, row: usize) -> String {
    layout
        .key_positions
        .iter()
        .map(|&p| {
            let c = &layout.columns[p];
            batch
                .column_by_name(&c.paimon)
                .and_then(|a| column_values(a, c.encoding, c.precision).ok())
                .and_then(|values| values.get(row).map(|v| v.as_sql(false)))
                .unwrap_or_else(|| "?".into())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, StringArray};

    use super::*;
    use crate::mapping::convert::{Encoding, Precision};
    use crate::mapping::ColumnPlan;

    fn layout() -> Layout {
        let col = |name: &str, is_key| ColumnPlan {
            paimon: name.into(),
            mysql: name.into(),
            encoding: Encoding::Native,
            precision: Precision::default(),
            is_key,
            checks: Default::default(),
        };
        Layout {
            columns: vec![col("id", true), col("v", false)],
            key_positions: vec![0],
            delete_qualifiers: vec![],
            warnings: vec![],
            filter: None,
        }
    }

    fn batch(kinds: Vec<&str>, ids: Vec<Option<i64>>) -> RecordBatch {
        let n = ids.len();
        RecordBatch::try_from_iter(vec![
            ("rowkind", Arc::new(StringArray::from(kinds)) as ArrayRef),
            (
                "_SEQUENCE_NUMBER",
                Arc::new(Int64Array::from((0..n as i64).collect::<Vec<_>>())) as ArrayRef,
            ),
            ("id", Arc::new(Int64Array::from(ids)) as ArrayRef),
            (
                "v",
                Arc::new(StringArray::from(vec![Some("x"); n])) as ArrayRef,
            ),
        ])
        .unwrap()
    }

    #[test]
    fn row_kinds_map_to_upserts_and_deletes_with_paimon_order() {
        let decoded = decode_batch(
            &batch(
                vec!["+I", "-U", "+U", "-D"],
                vec![Some(1), Some(1), Some(1), Some(2)],
            ),
            &layout(),
            9,
            "db.t",
            true,
        )
        .unwrap();
        let kinds: Vec<_> = decoded
            .iter()
            .map(|d| (d.kind, d.change.kind, d.change.order))
            .collect();
        assert_eq!(kinds[0], (RowKind::Insert, ChangeKind::Upsert, (9, 0)));
        assert_eq!(kinds[2], (RowKind::UpdateAfter, ChangeKind::Upsert, (9, 2)));
        assert_eq!(kinds[3], (RowKind::Delete, ChangeKind::Delete, (9, 3)));
        assert_eq!(decoded[0].key, decoded[2].key);
    }

    #[test]
    fn a_null_key_stops_with_the_column_name() {
        let err = decode_batch(
            &batch(vec!["+I", "+I"], vec![Some(1), None]),
            &layout(),
            4,
            "db.t",
            true,
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("NULL in key column \"id\"")
                && err.to_string().contains("snapshot 4"),
            "{err}"
        );
    }

    #[test]
    fn a_date_outside_mysqls_years_stops_naming_the_key() {
        use arrow_array::Date32Array;
        let mut l = layout();
        l.columns[1].paimon = "d".into();
        let days_to_year_10000 = 2_932_897; // 10000-01-01
        let batch = RecordBatch::try_from_iter(vec![
            ("id", Arc::new(Int64Array::from(vec![7, 8])) as ArrayRef),
            (
                "d",
                Arc::new(Date32Array::from(vec![0, days_to_year_10000])) as ArrayRef,
            ),
        ])
        .unwrap();
        let err = decode_batch(&batch, &l, 3, "db.t", true)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("key (8)") && err.contains("10000-01-01") && err.contains("\"d\""),
            "{err}"
        );
    }
}
