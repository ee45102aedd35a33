//! Changes in files written under an older schema than the one the table was opened with.
//! The `paimon` crate's schema evolution reads the system columns of such files as NULL (its
//! audit read fails with "_VALUE_KIND is null"), so they are read with their own schema, and
//! their columns are mapped onto today's by field id, as Paimon's evolution does: a column
//! added since reads as NULL, a renamed one is found under its old name, a retyped one is cast
//! as Java casts it (a narrowed integer wraps; a value that doesn't cast stops the read).

use std::sync::Arc;

use arrow_array::{new_null_array, ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema};
use paimon::spec::{DataField, DataFileMeta};

/// The files of a split as consecutive runs of one schema id: `(schema id, file indexes)`.
pub(super) fn schema_runs(files: &[DataFileMeta]) -> Vec<(i64, Vec<usize>)> {
    let mut runs: Vec<(i64, Vec<usize>)> = Vec::new();
    for (i, f) in files.iter().enumerate() {
        match runs.last_mut() {
            Some((id, run)) if *id == f.schema_id => run.push(i),
            _ => runs.push((f.schema_id, vec![i])),
        }
    }
    runs
}

/// `batch`, read with the fields `from`, with its user columns replaced by those of `to` (the
/// columns before the first user column, `rowkind` and `_SEQUENCE_NUMBER`, stay as they are).
pub(super) fn evolve(
    batch: RecordBatch,
    from: &[DataField],
    to: &[DataField],
) -> paimon::Result<RecordBatch> {
    let invalid = |message: String| paimon::Error::DataInvalid {
        message,
        source: None,
    };
    let schema = batch.schema();
    let system = schema
        .fields()
        .iter()
        .take_while(|f| !from.iter().any(|d| d.name() == f.name()))
        .count();
    let mut fields: Vec<Arc<Field>> = schema.fields()[..system].to_vec();
    let mut columns: Vec<ArrayRef> = batch.columns()[..system].to_vec();
    for field in to {
        let arrow_type = paimon::arrow::paimon_type_to_arrow(field.data_type())?;
        let column = match from.iter().find(|d| d.id() == field.id()) {
            Some(old) => {
                let column = batch.column_by_name(old.name()).ok_or_else(|| {
                    invalid(format!(
                        "column {:?} is missing from a file of an older schema",
                        old.name()
                    ))
                })?;
                if column.data_type() == &arrow_type {
                    column.clone()
                } else {
                    paimon::arrow::cast_like_java(column, &arrow_type).map_err(|e| {
                        invalid(format!(
                            "column {:?} of a file of an older schema does not cast to {}: {e}",
                            field.name(),
                            field.data_type()
                        ))
                    })?
                }
            }
            None => new_null_array(&arrow_type, batch.num_rows()),
        };
        fields.push(Arc::new(Field::new(field.name(), arrow_type, true)));
        columns.push(column);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| invalid(format!("evolving a batch of an older schema: {e}")))
}
