//! Bounds on every value of the CRDs' schemas, so that the API server never admits one the Rust
//! types can't decode: one such object fails kube-rs' decoding of the whole list it is in, and the
//! operator would see none of the resources of its kind.
//!
//! A pass over the generated schema JSON ([`bound_schema`]) gives every integer the range its Rust
//! type decodes (read from schemars' `format`, kept where a field's own range is tighter), every
//! number the finite range of its float, and every string that is not an enum a `maxLength` (kept
//! where a field has its own). The unsigned formats schemars writes, which the API server doesn't
//! know (it warns on every apply), go in the same walk: the bounds say what matters.

use serde_json::{Map, Value};

/// The longest string of `spec` without a length of its own: generous for names, paths, URLs and
/// triggers; it also bounds what the API server's cost estimate of a CEL rule assumes.
pub const MAX_STRING: u64 = 4096;

/// The longest string of `status` without a length of its own: the operator writes them (messages,
/// errors), so the bound is Kubernetes' own for a Condition's message, well above what it writes.
pub const MAX_STATUS_STRING: u64 = 32768;

/// The largest integer a JSON number holds exactly (2^53 - 1): the API server compares a value
/// with `maximum` as a float64, and clients parse numbers as doubles, so a 64-bit field is bounded
/// to what neither rounds.
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// What an integer of this schemars `format` decodes, as `(minimum, maximum)`; `None` for a
/// format schemars never writes on an integer.
fn integer_range(format: &str) -> Option<(i64, i64)> {
    Some(match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "uint8" => (0, u8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "int" | "int64" | "int128" => (-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
        "uint" | "uint64" | "uint128" => (0, MAX_SAFE_INTEGER),
        _ => return None,
    })
}

/// What a number of this format decodes, finite: a JSON number beyond it is infinite to a float.
fn number_range(format: Option<&str>) -> (f64, f64) {
    match format {
        Some("float") => (f32::MIN.into(), f32::MAX.into()),
        _ => (f64::MIN, f64::MAX),
    }
}

/// Bounds a CRD version's whole schema (its root): `status` strings get [`MAX_STATUS_STRING`],
/// the others [`MAX_STRING`].
pub fn bound_root(root: &mut Value) {
    if let Some(props) = root.get_mut("properties").and_then(Value::as_object_mut) {
        for (name, schema) in props.iter_mut() {
            let max_string = if name == "status" {
                MAX_STATUS_STRING
            } else {
                MAX_STRING
            };
            bound_schema(schema, max_string);
        }
    }
}

/// Bounds `schema` and every schema under it (properties, items, map values, junctors), strings
/// without a length of their own taking `max_string`.
pub fn bound_schema(schema: &mut Value, max_string: u64) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    match map.get("type").and_then(Value::as_str) {
        Some("integer") => bound_integer(map),
        Some("number") => bound_number(map),
        Some("string") if !map.contains_key("enum") && !map.contains_key("maxLength") => {
            map.insert("maxLength".into(), max_string.into());
        }
        _ => {}
    }
    for key in ["properties", "patternProperties"] {
        if let Some(props) = map.get_mut(key).and_then(Value::as_object_mut) {
            props.values_mut().for_each(|s| bound_schema(s, max_string));
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        match map.get_mut(key) {
            Some(Value::Array(list)) => list.iter_mut().for_each(|s| bound_schema(s, max_string)),
            Some(s) => bound_schema(s, max_string),
            None => {}
        }
    }
    for key in ["anyOf", "allOf", "oneOf"] {
        if let Some(list) = map.get_mut(key).and_then(Value::as_array_mut) {
            list.iter_mut().for_each(|s| bound_schema(s, max_string));
        }
    }
}

fn bound_integer(map: &mut Map<String, Value>) {
    let Some((lo, hi)) = map
        .get("format")
        .and_then(Value::as_str)
        .and_then(integer_range)
    else {
        return; // no format: left unbounded, which the schema test refuses
    };
    clamp(map, lo as f64, hi as f64);
    if matches!(
        map.get("format").and_then(Value::as_str),
        Some("uint8" | "uint16" | "uint32" | "uint64" | "uint128" | "uint" | "int8" | "int16")
    ) {
        // Not formats the API server knows; `int32` and `int64` are.
        map.remove("format");
    }
}

fn bound_number(map: &mut Map<String, Value>) {
    let (lo, hi) = number_range(map.get("format").and_then(Value::as_str));
    clamp(map, lo, hi);
}

/// `minimum`/`maximum` at least as tight as `lo..=hi` (a field's own range, when tighter, stays).
fn clamp(map: &mut Map<String, Value>, lo: f64, hi: f64) {
    let bound = |map: &Map<String, Value>, key: &str| map.get(key).and_then(Value::as_f64);
    let min = bound(map, "minimum").map_or(lo, |own| own.max(lo));
    let max = bound(map, "maximum").map_or(hi, |own| own.min(hi));
    map.insert("minimum".into(), number(min));
    map.insert("maximum".into(), number(max));
}

/// A whole number as a JSON integer (exact below 2^53), anything else as a float.
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER as f64 {
        Value::from(n as i64)
    } else {
        Value::from(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_fields_own_range_stays_and_the_types_fills_in() {
        let mut s = json!({"type": "object", "properties": {
            "a": {"type": "integer", "format": "uint32", "minimum": 1},
            "b": {"type": "integer", "format": "int64"},
            "c": {"type": "integer", "format": "uint16", "minimum": 0, "maximum": 100000},
            "d": {"type": "string", "maxLength": 10},
            "e": {"type": "string", "enum": ["x"]},
            "f": {"type": "array", "items": {"type": "string"}},
            "g": {"type": "object", "additionalProperties": {"type": "number", "format": "double"}},
        }});
        bound_schema(&mut s, 7);
        let p = &s["properties"];
        assert_eq!(
            p["a"],
            json!({"type": "integer", "minimum": 1, "maximum": 4294967295u32})
        );
        assert_eq!(
            p["b"],
            json!({"type": "integer", "format": "int64", "minimum": -MAX_SAFE_INTEGER, "maximum": MAX_SAFE_INTEGER})
        );
        assert_eq!(
            p["c"],
            json!({"type": "integer", "minimum": 0, "maximum": 65535})
        );
        assert_eq!(p["d"]["maxLength"], 10);
        assert_eq!(p["e"].get("maxLength"), None);
        assert_eq!(p["f"]["items"]["maxLength"], 7);
        assert_eq!(p["g"]["additionalProperties"]["maximum"], f64::MAX);
    }

    #[test]
    fn status_strings_take_the_status_length() {
        let mut root = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"s": {"type": "string"}}},
            "status": {"type": "object", "properties": {"s": {"type": "string"}}},
        }});
        bound_root(&mut root);
        assert_eq!(
            root.pointer("/properties/spec/properties/s/maxLength"),
            Some(&json!(MAX_STRING))
        );
        assert_eq!(
            root.pointer("/properties/status/properties/s/maxLength"),
            Some(&json!(MAX_STATUS_STRING))
        );
    }
}
