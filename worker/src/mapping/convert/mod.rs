//! Arrow values (as the `paimon` crate reads them) → MySQL values, column by column.
//!
//! Nothing here looks at the process time zone: timestamps are epoch offsets turned into
//! calendar fields in UTC, which for Paimon `TIMESTAMP` is the wall-clock value itself and
//! for `TIMESTAMP_LTZ` is the instant in UTC (the sink's session runs with `time_zone = '+00:00'`).

mod json;
mod temporal;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType as ArrowType, TimeUnit};
use mysql_async::Value;

pub use temporal::TemporalText;

/// How a Paimon column is written into its MySQL column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// The MySQL type of the same kind (INT for INT, DATETIME for TIMESTAMP, …).
    Native,
    /// Canonical text in a CHAR/VARCHAR/TEXT column (e.g. a TIMESTAMP(9) kept to the nanosecond).
    Text,
    /// JSON text (ARRAY, MAP and ROW).
    Json,
}

/// Paimon's declared precision, needed where Arrow's type is coarser (fraction digits of
/// TIMESTAMP(p) / TIME(p) written as text).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Precision(pub Option<u32>);

#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("cannot convert Arrow type {arrow_type} to a MySQL value ({why})")]
    Unsupported {
        arrow_type: String,
        why: &'static str,
    },
    /// Row `row` holds a value its MySQL column can't (e.g. a date outside years 1–9999).
    #[error(
        "the value {value} is outside what its MySQL column holds (DATE/DATETIME: years 1 to 9999)"
    )]
    OutOfRange { row: usize, value: String },
}

/// Converts one column of a record batch.
pub fn column_values(
    array: &ArrayRef,
    encoding: Encoding,
    precision: Precision,
) -> Result<Vec<Value>, ConvertError> {
    let n = array.len();
    let mut out = Vec::with_capacity(n);
    match encoding {
        Encoding::Json => {
            for i in 0..n {
                out.push(if array.is_null(i) {
                    Value::NULL
                } else {
                    Value::Bytes(json::value_at(array.as_ref(), i)?.to_string().into_bytes())
                });
            }
        }
        Encoding::Text => {
            for i in 0..n {
                out.push(if array.is_null(i) {
                    Value::NULL
                } else {
                    Value::Bytes(text_at(array.as_ref(), i, precision)?.into_bytes())
                });
            }
        }
        Encoding::Native => native_column(array.as_ref(), &mut out)?,
    }
    Ok(out)
}

fn unsupported(array: &dyn Array, why: &'static str) -> ConvertError {
    ConvertError::Unsupported {
        arrow_type: array.data_type().to_string(),
        why,
    }
}

/// Pushes `f(value)` for each element of a primitive array, NULL for nulls; a value `f`
/// refuses is an error naming its row.
macro_rules! push_checked {
    ($array:expr, $out:expr, $ty:ty, $f:expr) => {{
        let a = $array.as_primitive::<$ty>();
        for i in 0..a.len() {
            $out.push(if a.is_null(i) {
                Value::NULL
            } else {
                $f(a.value(i)).map_err(|value| ConvertError::OutOfRange { row: i, value })?
            });
        }
    }};
}

/// Pushes `f(value)` for each element of a primitive array, NULL for nulls.
macro_rules! push_primitive {
    ($array:expr, $out:expr, $ty:ty, $f:expr) => {
        push_checked!($array, $out, $ty, |v| Ok::<Value, String>($f(v)))
    };
}

/// Pushes `value(i)` for each non-null element, NULL for the others.
fn push_each(a: &dyn Array, out: &mut Vec<Value>, value: impl Fn(usize) -> Value) {
    out.extend((0..a.len()).map(|i| if a.is_null(i) { Value::NULL } else { value(i) }));
}

fn native_column(array: &dyn Array, out: &mut Vec<Value>) -> Result<(), ConvertError> {
    match array.data_type() {
        ArrowType::Null => out.extend((0..array.len()).map(|_| Value::NULL)),
        ArrowType::Boolean => {
            let a = array.as_boolean();
            push_each(a, out, |i| Value::Int(a.value(i) as i64));
        }
        ArrowType::Int8 => push_primitive!(array, out, Int8Type, |v| Value::Int(v as i64)),
        ArrowType::Int16 => push_primitive!(array, out, Int16Type, |v| Value::Int(v as i64)),
        ArrowType::Int32 => push_primitive!(array, out, Int32Type, |v| Value::Int(v as i64)),
        ArrowType::Int64 => push_primitive!(array, out, Int64Type, Value::Int),
        ArrowType::Float32 => push_primitive!(array, out, Float32Type, Value::Float),
        ArrowType::Float64 => push_primitive!(array, out, Float64Type, Value::Double),
        ArrowType::Decimal128(_, _) => {
            let a = array.as_primitive::<Decimal128Type>();
            push_each(a, out, |i| Value::Bytes(a.value_as_string(i).into_bytes()));
        }
        ArrowType::Utf8 => {
            let a = array.as_string::<i32>();
            push_each(a, out, |i| Value::Bytes(a.value(i).as_bytes().to_vec()));
        }
        ArrowType::LargeUtf8 => {
            let a = array.as_string::<i64>();
            push_each(a, out, |i| Value::Bytes(a.value(i).as_bytes().to_vec()));
        }
        ArrowType::Binary => {
            let a = array.as_binary::<i32>();
            push_each(a, out, |i| Value::Bytes(a.value(i).to_vec()));
        }
        ArrowType::LargeBinary => {
            let a = array.as_binary::<i64>();
            push_each(a, out, |i| Value::Bytes(a.value(i).to_vec()));
        }
        ArrowType::FixedSizeBinary(_) => {
            let a = array.as_fixed_size_binary();
            push_each(a, out, |i| Value::Bytes(a.value(i).to_vec()));
        }
        ArrowType::Date32 => push_checked!(array, out, Date32Type, temporal::date_value),
        ArrowType::Time32(TimeUnit::Millisecond) => {
            push_primitive!(array, out, Time32MillisecondType, |v: i32| {
                temporal::time_value(v as i64 * 1_000_000)
            })
        }
        ArrowType::Time64(TimeUnit::Microsecond) => {
            push_primitive!(array, out, Time64MicrosecondType, |v: i64| {
                temporal::time_value(v * 1_000)
            })
        }
        ArrowType::Timestamp(unit, _) => {
            let nanos_per = temporal::nanos_per_unit(*unit);
            match unit {
                TimeUnit::Second => push_checked!(array, out, TimestampSecondType, |v| {
                    temporal::datetime_value(v, nanos_per)
                }),
                TimeUnit::Millisecond => {
                    push_checked!(array, out, TimestampMillisecondType, |v| {
                        temporal::datetime_value(v, nanos_per)
                    })
                }
                TimeUnit::Microsecond => {
                    push_checked!(array, out, TimestampMicrosecondType, |v| {
                        temporal::datetime_value(v, nanos_per)
                    })
                }
                TimeUnit::Nanosecond => push_checked!(array, out, TimestampNanosecondType, |v| {
                    temporal::datetime_value(v, nanos_per)
                }),
            }
        }
        _ => {
            return Err(unsupported(
                array,
                "map ARRAY/MAP/ROW columns to a JSON or TEXT column",
            ))
        }
    }
    Ok(())
}

/// The canonical text of one non-null scalar value.
pub(crate) fn text_at(
    array: &dyn Array,
    i: usize,
    precision: Precision,
) -> Result<String, ConvertError> {
    Ok(match array.data_type() {
        ArrowType::Boolean => array.as_boolean().value(i).to_string(),
        ArrowType::Int8 => array.as_primitive::<Int8Type>().value(i).to_string(),
        ArrowType::Int16 => array.as_primitive::<Int16Type>().value(i).to_string(),
        ArrowType::Int32 => array.as_primitive::<Int32Type>().value(i).to_string(),
        ArrowType::Int64 => array.as_primitive::<Int64Type>().value(i).to_string(),
        ArrowType::Float32 => array.as_primitive::<Float32Type>().value(i).to_string(),
        ArrowType::Float64 => array.as_primitive::<Float64Type>().value(i).to_string(),
        ArrowType::Decimal128(_, _) => array.as_primitive::<Decimal128Type>().value_as_string(i),
        ArrowType::Utf8 => array.as_string::<i32>().value(i).to_string(),
        ArrowType::LargeUtf8 => array.as_string::<i64>().value(i).to_string(),
        ArrowType::Binary => hex(array.as_binary::<i32>().value(i)),
        ArrowType::LargeBinary => hex(array.as_binary::<i64>().value(i)),
        ArrowType::FixedSizeBinary(_) => hex(array.as_fixed_size_binary().value(i)),
        ArrowType::Date32 => TemporalText::date(array.as_primitive::<Date32Type>().value(i))
            .map_err(|value| ConvertError::OutOfRange { row: i, value })?,
        ArrowType::Time32(TimeUnit::Millisecond) => TemporalText::time(
            array.as_primitive::<Time32MillisecondType>().value(i) as i64 * 1_000_000,
            precision.0.unwrap_or(3),
        ),
        ArrowType::Timestamp(unit, _) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(i),
                TimeUnit::Millisecond => array.as_primitive::<TimestampMillisecondType>().value(i),
                TimeUnit::Microsecond => array.as_primitive::<TimestampMicrosecondType>().value(i),
                TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(i),
            };
            let default_digits = match unit {
                TimeUnit::Second => 0,
                TimeUnit::Millisecond => 3,
                TimeUnit::Microsecond => 6,
                TimeUnit::Nanosecond => 9,
            };
            TemporalText::timestamp(
                v,
                temporal::nanos_per_unit(*unit),
                precision.0.unwrap_or(default_digits),
            )
            .map_err(|value| ConvertError::OutOfRange { row: i, value })?
        }
        ArrowType::List(_)
        | ArrowType::LargeList(_)
        | ArrowType::Map(_, _)
        | ArrowType::Struct(_) => json::value_at(array, i)?.to_string(),
        _ => return Err(unsupported(array, "no text form for this type")),
    })
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::*;
    use std::sync::Arc;

    #[test]
    fn timestamps_ignore_the_process_time_zone() {
        // 2024-01-02 03:04:05.123456789 as nanoseconds since the epoch.
        let nanos = 1_704_164_645_123_456_789i64;
        let arr: ArrayRef = Arc::new(TimestampNanosecondArray::from(vec![Some(nanos), None]));
        std::env::set_var("TZ", "Asia/Kolkata");
        let native = column_values(&arr, Encoding::Native, Precision(Some(9))).unwrap();
        assert_eq!(native[0], Value::Date(2024, 1, 2, 3, 4, 5, 123_456));
        assert_eq!(native[1], Value::NULL);
        let text = column_values(&arr, Encoding::Text, Precision(Some(9))).unwrap();
        assert_eq!(
            text[0],
            Value::Bytes(b"2024-01-02 03:04:05.123456789".to_vec())
        );
    }

    #[test]
    fn dates_before_the_epoch_and_far_future() {
        let arr: ArrayRef = Arc::new(Date32Array::from(vec![-719_162, 2_932_896]));
        let v = column_values(&arr, Encoding::Native, Precision::default()).unwrap();
        assert_eq!(v[0], Value::Date(1, 1, 1, 0, 0, 0, 0));
        assert_eq!(v[1], Value::Date(9999, 12, 31, 0, 0, 0, 0));
    }

    #[test]
    fn decimals_keep_their_scale() {
        let arr: ArrayRef = Arc::new(
            Decimal128Array::from(vec![Some(1230), Some(-5), None])
                .with_precision_and_scale(10, 2)
                .unwrap(),
        );
        let v = column_values(&arr, Encoding::Native, Precision::default()).unwrap();
        assert_eq!(v[0], Value::Bytes(b"12.30".to_vec()));
        assert_eq!(v[1], Value::Bytes(b"-0.05".to_vec()));
        assert_eq!(v[2], Value::NULL);
    }

    #[test]
    fn time_of_day() {
        let arr: ArrayRef = Arc::new(Time32MillisecondArray::from(vec![
            (13 * 3600 + 5 * 60 + 7) * 1000 + 250,
        ]));
        let v = column_values(&arr, Encoding::Native, Precision(Some(3))).unwrap();
        assert_eq!(v[0], Value::Time(false, 0, 13, 5, 7, 250_000));
    }
}
