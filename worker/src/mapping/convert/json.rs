//! ARRAY, MAP and ROW values as JSON. Scalars inside use the canonical text forms where JSON
//! has no exact type (decimals and temporal values as strings, binary as lowercase hex).

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::Array;
use arrow_schema::DataType as ArrowType;
use serde_json::{Map, Number, Value as Json};

use super::{text_at, ConvertError, Precision};

pub fn value_at(array: &dyn Array, i: usize) -> Result<Json, ConvertError> {
    if array.is_null(i) {
        return Ok(Json::Null);
    }
    Ok(match array.data_type() {
        ArrowType::Boolean => Json::Bool(array.as_boolean().value(i)),
        ArrowType::Int8 => array.as_primitive::<Int8Type>().value(i).into(),
        ArrowType::Int16 => array.as_primitive::<Int16Type>().value(i).into(),
        ArrowType::Int32 => array.as_primitive::<Int32Type>().value(i).into(),
        ArrowType::Int64 => array.as_primitive::<Int64Type>().value(i).into(),
        ArrowType::Float32 => float(array.as_primitive::<Float32Type>().value(i) as f64),
        ArrowType::Float64 => float(array.as_primitive::<Float64Type>().value(i)),
        ArrowType::Utf8 | ArrowType::LargeUtf8 => {
            Json::String(text_at(array, i, Precision::default())?)
        }
        ArrowType::List(_) => list(array.as_list::<i32>().value(i).as_ref())?,
        ArrowType::LargeList(_) => list(array.as_list::<i64>().value(i).as_ref())?,
        ArrowType::Struct(fields) => {
            let s = array.as_struct();
            let mut obj = Map::new();
            for (f, col) in fields.iter().zip(s.columns()) {
                obj.insert(f.name().clone(), value_at(col.as_ref(), i)?);
            }
            Json::Object(obj)
        }
        ArrowType::Map(_, _) => {
            let entries = array.as_map().value(i);
            let (keys, values) = (entries.column(0), entries.column(1));
            let mut obj = Map::new();
            for j in 0..entries.len() {
                let key = match value_at(keys.as_ref(), j)? {
                    Json::String(s) => s,
                    other => other.to_string(),
                };
                obj.insert(key, value_at(values.as_ref(), j)?);
            }
            Json::Object(obj)
        }
        _ => Json::String(text_at(array, i, Precision::default())?),
    })
}

fn list(values: &dyn Array) -> Result<Json, ConvertError> {
    (0..values.len())
        .map(|j| value_at(values, j))
        .collect::<Result<Vec<_>, _>>()
        .map(Json::Array)
}

fn float(v: f64) -> Json {
    Number::from_f64(v)
        .map(Json::Number)
        .unwrap_or_else(|| Json::String(v.to_string()))
}
