//! The CRD schema's number ranges (`minimum`, `maximum`) and string lengths (`maxLength`),
//! checked on a spec that never went through the API server (the standalone worker's YAML file).
//! They are read from the very schema the API server is given ([`crate::crds`], bounds and all),
//! so the two can't disagree, and the messages are worded as the API server words its own. (CEL
//! rules and patterns are the API server's alone.)

use serde_json::Value;

use crate::PaimonMysqlSyncSpec;

/// Every number of `spec` outside its range in the CRD, and every string longer than its
/// `maxLength`, as the API server would report them.
pub fn out_of_range(spec: &PaimonMysqlSyncSpec) -> Vec<String> {
    // Generated once per process: a database sync resolves one config per table.
    static SCHEMA: std::sync::LazyLock<Value> = std::sync::LazyLock::new(sync_spec_schema);
    let value = serde_json::to_value(spec).unwrap_or(Value::Null);
    let mut problems = Vec::new();
    walk(&SCHEMA, &value, "spec", &mut problems);
    problems
}

/// The `spec` property of the sync CRD's schema as the API server gets it, as JSON.
fn sync_spec_schema() -> Value {
    use kube::Resource;
    crate::crds()
        .into_iter()
        .find(|crd| crd.spec.names.kind == crate::PaimonMysqlSync::kind(&()))
        .and_then(|crd| crd.spec.versions.into_iter().next())
        .and_then(|v| v.schema)
        .and_then(|s| s.open_api_v3_schema)
        .and_then(|root| serde_json::to_value(root).ok())
        .and_then(|root| root.pointer("/properties/spec").cloned())
        .unwrap_or(Value::Null)
}

fn walk(schema: &Value, value: &Value, path: &str, problems: &mut Vec<String>) {
    match value {
        Value::Number(num) => {
            let Some(n) = num.as_f64() else { return };
            let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
            if let Some(min) = bound("minimum").filter(|min| n < *min) {
                problems.push(format!(
                    "{path}: Invalid value: {num}: {path} in body should be greater than or equal to {}",
                    number(min)
                ));
            }
            if let Some(max) = bound("maximum").filter(|max| n > *max) {
                problems.push(format!(
                    "{path}: Invalid value: {num}: {path} in body should be less than or equal to {}",
                    number(max)
                ));
            }
        }
        Value::String(text) => {
            // The API server counts characters (and calls them bytes).
            let max = schema.get("maxLength").and_then(Value::as_u64);
            if let Some(max) = max.filter(|max| text.chars().count() as u64 > *max) {
                problems.push(format!(
                    "{path}: Too long: may not be more than {max} bytes"
                ));
            }
        }
        Value::Object(fields) => {
            for (name, field) in fields {
                let inner = schema
                    .pointer(&format!("/properties/{name}"))
                    .or_else(|| schema.get("additionalProperties"));
                if let Some(inner) = inner {
                    walk(inner, field, &format!("{path}.{name}"), problems);
                }
            }
        }
        Value::Array(items) => {
            if let Some(inner) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    walk(inner, item, &format!("{path}[{i}]"), problems);
                }
            }
        }
        _ => {}
    }
}

/// A whole number without its `.0`.
fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crds_ranges_are_checked_with_the_api_servers_words() {
        let mut spec: PaimonMysqlSyncSpec = serde_yaml::from_str(
            "source: {warehouse: /w, database: db, table: t}\n\
             sink: {url: 'mysql://u@h/d', table: t}\n",
        )
        .unwrap();
        assert_eq!(out_of_range(&spec), Vec::<String>::new());
        spec.parallelism = 0;
        spec.sink.max_rows_per_statement = 70000;
        spec.sink.max_buffer_bytes = 1000;
        spec.sink.max_transaction_rows = 1 << 60;
        spec.sink.table = "t".repeat(4097);
        let problems = out_of_range(&spec);
        assert_eq!(
            problems,
            [
                "spec.parallelism: Invalid value: 0: spec.parallelism in body should be greater than or equal to 1",
                "spec.sink.maxBufferBytes: Invalid value: 1000: spec.sink.maxBufferBytes in body should be greater than or equal to 65536",
                "spec.sink.maxRowsPerStatement: Invalid value: 70000: spec.sink.maxRowsPerStatement in body should be less than or equal to 65535",
                "spec.sink.maxTransactionRows: Invalid value: 1152921504606846976: spec.sink.maxTransactionRows in body should be less than or equal to 9007199254740991",
                "spec.sink.table: Too long: may not be more than 4096 bytes",
            ],
            "{problems:?}"
        );
    }
}
