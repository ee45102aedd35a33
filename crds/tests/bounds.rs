//! No object the API server admits may fail to decode into the Rust types: one such object fails
//! kube-rs' decoding of the whole list it is in (the operator would see none of its kind). So
//! every integer, number and string of every CRD's schema is bounded, and an object with every
//! field at its schema's extremes decodes.

use pms_crds::{PaimonMysqlDatabaseSync, PaimonMysqlSync, PaimonMysqlSyncSavepoint};
use serde_json::{json, Map, Value};

/// Each CRD's kind and its (only) version's schema, as the API server gets it.
fn schemas() -> &'static [(String, Value)] {
    static SCHEMAS: std::sync::LazyLock<Vec<(String, Value)>> = std::sync::LazyLock::new(|| {
        pms_crds::crds()
            .into_iter()
            .map(|crd| {
                let version = crd.spec.versions.into_iter().next().expect("a version");
                let root = version.schema.and_then(|s| s.open_api_v3_schema);
                (
                    crd.spec.names.kind,
                    serde_json::to_value(root.expect("a schema")).unwrap(),
                )
            })
            .collect()
    });
    &SCHEMAS
}

/// Calls `f` with every schema under `schema` (itself included) and its path.
fn each_schema(schema: &Value, path: &str, f: &mut impl FnMut(&str, &Value)) {
    f(path, schema);
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, s) in props {
            each_schema(s, &format!("{path}.{name}"), f);
        }
    }
    if let Some(items) = schema.get("items") {
        each_schema(items, &format!("{path}[]"), f);
    }
    if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        each_schema(values, &format!("{path}{{}}"), f);
    }
    for key in ["anyOf", "allOf", "oneOf"] {
        for (i, s) in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            each_schema(s, &format!("{path}/{key}[{i}]"), f);
        }
    }
}

#[test]
fn every_integer_number_and_string_of_every_crd_is_bounded() {
    let mut unbounded = Vec::new();
    let (mut integers, mut strings) = (0, 0);
    for (kind, root) in schemas() {
        each_schema(root, kind, &mut |path, s| {
            let bound = |key: &str| s.get(key).and_then(Value::as_f64);
            let format = s.get("format").and_then(Value::as_str);
            match s.get("type").and_then(Value::as_str) {
                Some("integer") => {
                    integers += 1;
                    let safe = pms_crds::MAX_SAFE_INTEGER as f64;
                    // int32 and int64 are the formats the API server knows; schemars' others
                    // (uint32, …) are dropped once their range is in the bounds.
                    let (lo, hi) = match format {
                        Some("int32") => (i32::MIN.into(), i32::MAX.into()),
                        Some("int64") | None => (-safe, safe),
                        Some(other) => {
                            unbounded.push(format!("{path}: format {other} left"));
                            return;
                        }
                    };
                    match (bound("minimum"), bound("maximum")) {
                        (Some(min), Some(max))
                            if lo <= min && min <= max && max <= hi && min.fract() == 0.0 && max.fract() == 0.0 => {}
                        (min, max) => unbounded.push(format!(
                            "{path}: integer ({format:?}) bounded by {min:?}..{max:?}, not within {lo}..{hi}"
                        )),
                    }
                }
                Some("number") => match (bound("minimum"), bound("maximum")) {
                    (Some(min), Some(max)) if min.is_finite() && max.is_finite() && min <= max => {}
                    (min, max) => {
                        unbounded.push(format!("{path}: number bounded by {min:?}..{max:?}"))
                    }
                },
                Some("string") if s.get("enum").is_none() => {
                    strings += 1;
                    if s.get("maxLength").and_then(Value::as_u64).is_none() {
                        unbounded.push(format!("{path}: string without maxLength"));
                    }
                }
                _ => {}
            }
        });
    }
    assert!(
        unbounded.is_empty(),
        "values the API server would admit unbounded:\n{}",
        unbounded.join("\n")
    );
    assert!(
        integers > 100 && strings > 500,
        "{integers} integers, {strings} strings: is the walk still reaching them?"
    );
}

/// Which end of every range an instance takes.
#[derive(Clone, Copy, PartialEq)]
enum End {
    Max,
    Min,
}

/// A string the schema admits, for a string with a pattern or a format: the longest duration,
/// a URL, an instant.
fn sample_for(schema: &Value, path: &str, end: End) -> Option<String> {
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        let duration = pms_crds::HumanDuration::from_secs(1);
        let duration_pattern = duration_schema()["pattern"].as_str().unwrap().to_string();
        let sample = if pattern == duration_pattern {
            match end {
                // The longest the pattern admits, every part at its largest.
                End::Max => ["999999999.999999999s"; 8].join(" ") + " ",
                End::Min => duration.to_string(),
            }
        } else if path.ends_with(".sink.url") {
            "mysql://user@[::1]:3306/db".into()
        } else if path.ends_with(".startFrom.flinkConsumer") {
            match end {
                End::Max => "f".repeat(200),
                End::Min => "f".into(),
            }
        } else if path.ends_with(".source.startTimestamp") {
            "2024-02-29T23:59:59.999999999+14:00".into()
        } else {
            panic!("{path}: no sample for the pattern {pattern:?}: add one")
        };
        let re = regex::Regex::new(pattern).unwrap();
        assert!(re.is_match(&sample), "{path}: {sample:?} !~ {pattern}");
        return Some(sample);
    }
    match schema.get("format").and_then(Value::as_str) {
        Some("date-time") => Some("2024-02-29T23:59:59.999999Z".into()),
        Some(other) => panic!("{path}: no sample for a string of format {other}: add one"),
        None => None,
    }
}

/// The schema of a duration field, as generated.
fn duration_schema() -> Value {
    let (_, root) = &schemas()[0];
    root.pointer("/properties/spec/properties/sink/properties/flushInterval")
        .unwrap()
        .clone()
}

/// An object of `schema` with every field set, each integer and number at `end` of its
/// range, each string as long as its schema admits (or the sample its pattern or format asks).
fn instance(schema: &Value, path: &str, end: End) -> Value {
    let bound = |key: &str| schema.get(key).cloned().unwrap_or(Value::Null);
    if schema.get("x-kubernetes-int-or-string") == Some(&json!(true)) {
        return json!("1Gi"); // a Quantity, all of them are
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => {
            let mut object = Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (name, s) in props {
                    object.insert(name.clone(), instance(s, &format!("{path}.{name}"), end));
                }
            }
            if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
                object.insert("k".into(), instance(values, &format!("{path}{{}}"), end));
            }
            Value::Object(object)
        }
        Some("array") => json!([instance(&schema["items"], &format!("{path}[]"), end)]),
        Some("integer") => {
            let n = bound(if end == End::Max {
                "maximum"
            } else {
                "minimum"
            });
            let n = n.as_f64().unwrap_or_else(|| panic!("{path}: unbounded"));
            // The JSON the API server sends: a whole number, exactly.
            json!(n as i64)
        }
        Some("number") => bound(if end == End::Max {
            "maximum"
        } else {
            "minimum"
        }),
        Some("boolean") => json!(end == End::Max),
        Some("string") => {
            if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
                return first.clone();
            }
            if let Some(sample) = sample_for(schema, path, end) {
                let max = schema["maxLength"].as_u64().unwrap() as usize;
                assert!(sample.chars().count() <= max, "{path}: {sample:?} too long");
                return json!(sample);
            }
            let len = match end {
                End::Max => schema["maxLength"].as_u64().unwrap() as usize,
                End::Min => schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize,
            };
            json!("x".repeat(len))
        }
        None if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(true)) => {
            json!({})
        }
        other => panic!("{path}: no instance of type {other:?}"),
    }
}

/// A whole resource of `kind` at `end`, as the JSON text the API server sends.
fn resource(kind: &str, end: End) -> String {
    let (_, root) = schemas().iter().find(|(k, _)| k == kind).expect("the kind");
    let mut object = instance(root, kind, end);
    object["apiVersion"] = json!("paimonsync.io/v1alpha1");
    object["kind"] = json!(kind);
    object["metadata"] = json!({"name": "extreme", "namespace": "default"});
    serde_json::to_string(&object).unwrap()
}

#[test]
fn an_object_with_every_field_at_its_schemas_extremes_decodes() {
    for end in [End::Max, End::Min] {
        let text = resource("PaimonMysqlSync", end);
        let sync: PaimonMysqlSync = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("the sync at its extremes does not decode: {e}"));
        let text = resource("PaimonMysqlDatabaseSync", end);
        let database: PaimonMysqlDatabaseSync = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("the database sync at its extremes does not decode: {e}"));
        let text = resource("PaimonMysqlSyncSavepoint", end);
        let savepoint: PaimonMysqlSyncSavepoint = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("the savepoint at its extremes does not decode: {e}"));
        if end == End::Max {
            let history = &sync.spec.savepoint.as_ref().unwrap().history;
            assert_eq!(sync.spec.sink.max_rows, Some(u32::MAX));
            assert_eq!(history.max_count, u32::MAX);
            assert_eq!(database.spec.template.sink.max_rows, Some(u32::MAX));
            assert_eq!(sync.spec.parallelism, 256, "a field's own range stays");
            assert_eq!(
                sync.spec.sink.max_buffer_bytes,
                pms_crds::MAX_SAFE_INTEGER as u64
            );
            let status = savepoint.status.as_ref().unwrap();
            assert_eq!(status.slots, Some(u32::MAX));
            // The longest duration: 8 × (999999999 s + 999999999 ns).
            let longest = std::time::Duration::new(8 * 999_999_999, 0)
                + std::time::Duration::from_nanos(8 * 999_999_999);
            assert_eq!(sync.spec.sink.flush_interval.0, longest);
            assert_eq!(history.max_age.unwrap().0, longest);
            assert_eq!(database.spec.discovery_interval.0, longest);
        } else {
            assert_eq!(sync.spec.parallelism, 1);
            assert_eq!(
                sync.spec.restore_from.as_ref().unwrap().snapshot_id,
                Some(1)
            );
            let status = sync.status.as_ref().unwrap();
            assert_eq!(status.snapshot_id, Some(-pms_crds::MAX_SAFE_INTEGER));
            assert_eq!(savepoint.spec.sync_name, "x");
        }
    }
}

/// The fields the issue names, on minimal resources: each at its schema's maximum decodes (one
/// beyond it would not, which is why the schema stops there).
#[test]
fn max_rows_max_count_and_a_templates_max_rows_decode_at_their_maximum() {
    let max = |path: &str| -> u64 {
        let (_, root) = schemas()
            .iter()
            .find(|(_, r)| r.pointer(path).is_some())
            .unwrap();
        root.pointer(path).unwrap()["maximum"].as_f64().unwrap() as u64
    };
    let max_rows = max("/properties/spec/properties/sink/properties/maxRows");
    let max_count =
        max("/properties/spec/properties/savepoint/properties/history/properties/maxCount");
    let template_max_rows =
        max("/properties/spec/properties/template/properties/sink/properties/maxRows");
    assert_eq!(
        (max_rows, max_count, template_max_rows),
        (4294967295, 4294967295, 4294967295)
    );
    let longest = ["999999999.999999999s"; 8].join(" ");
    let sync: PaimonMysqlSync = serde_json::from_str(&format!(
        r#"{{"apiVersion": "paimonsync.io/v1alpha1", "kind": "PaimonMysqlSync", "metadata": {{"name": "s"}},
            "spec": {{"source": {{"warehouse": "/w", "database": "d", "table": "t", "pollInterval": "{longest}"}},
                      "sink": {{"url": "mysql://h/d", "table": "t", "maxRows": {max_rows}}},
                      "savepoint": {{"history": {{"maxCount": {max_count}, "maxAge": "{longest}"}}}}}}}}"#
    ))
    .unwrap();
    assert_eq!(sync.spec.sink.max_rows, Some(u32::MAX));
    assert_eq!(sync.spec.savepoint.unwrap().history.max_count, u32::MAX);
    let database: PaimonMysqlDatabaseSync = serde_json::from_str(&format!(
        r#"{{"apiVersion": "paimonsync.io/v1alpha1", "kind": "PaimonMysqlDatabaseSync", "metadata": {{"name": "db"}},
            "spec": {{"tables": {{"pattern": ".*"}},
                      "template": {{"source": {{"warehouse": "/w", "database": "d", "table": "{{table}}"}},
                                   "sink": {{"url": "mysql://h/d", "table": "{{table}}", "maxRows": {template_max_rows}}}}}}}}}"#
    ))
    .unwrap();
    assert_eq!(database.spec.template.sink.max_rows, Some(u32::MAX));
    // One beyond would fail the whole list.
    let mut spec = serde_json::to_value(&database.spec.template).unwrap();
    spec["sink"]["maxRows"] = json!(max_rows + 1);
    assert!(serde_json::from_value::<pms_crds::PaimonMysqlSyncSpec>(spec).is_err());
}
