//! The guide's reference of every field of the resources (`docs/reference.md`), generated from
//! the CRDs' own schemas so that it can't drift from them (`make crds` writes it; a test fails
//! when the committed page is stale).

use serde_json::Value as Json;

/// The reference page, in Markdown.
pub fn reference_markdown() -> String {
    let mut out = String::from(
        "# Reference: the resources' fields\n\n\
         Generated from the CRDs' schemas by `make crds` (`crdgen reference`); a test fails when this \
         page differs from the types, so edit the doc comments in `crds/src/`, not this page. A field \
         path is relative to the resource; `[]` is an element of a list, `{}` a value of a map. The \
         worker's YAML file is a `PaimonMysqlSync`'s `spec` (or a whole resource).\n",
    );
    for crd in crate::crds() {
        let kind = &crd.spec.names.kind;
        let short = crd.spec.names.short_names.clone().unwrap_or_default();
        let Some(version) = crd.spec.versions.first() else {
            continue;
        };
        out.push_str(&format!(
            "\n## {kind}\n\n`{}/{}`, kind `{kind}`{}.\n\n",
            crd.spec.group,
            version.name,
            if short.is_empty() {
                String::new()
            } else {
                format!(", short name `{}`", short.join("`, `"))
            }
        ));
        let schema = version
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
            .and_then(|s| serde_json::to_value(s).ok())
            .unwrap_or(Json::Null);
        out.push_str("| field | type | default | description |\n|---|---|---|---|\n");
        for part in ["spec", "status"] {
            if let Some(s) = schema.pointer(&format!("/properties/{part}")) {
                rows(part, s, &mut out);
            }
        }
    }
    out
}

/// A row per field under `path`, depth first, in the schema's order.
fn rows(path: &str, schema: &Json, out: &mut String) {
    let (kind, inner) = type_of(schema);
    let default = schema
        .get("default")
        .map(|d| format!("`{d}`"))
        .unwrap_or_default();
    let mut description = schema
        .get("description")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .replace('\n', " ")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    if let Some(values) = schema.get("enum").and_then(Json::as_array) {
        let values: Vec<String> = values
            .iter()
            .map(|v| format!("`{}`", v.as_str().unwrap_or_default()))
            .collect();
        description = format!("{description} One of {}.", values.join(", "))
            .trim()
            .to_string();
    }
    out.push_str(&format!(
        "| `{path}` | {kind} | {default} | {description} |\n"
    ));
    match inner {
        Some((suffix, inner)) => child_rows(&format!("{path}{suffix}"), inner, out),
        None => child_rows(path, schema, out),
    }
}

fn child_rows(path: &str, schema: &Json, out: &mut String) {
    if let Some(props) = schema.get("properties").and_then(Json::as_object) {
        for (name, s) in props {
            rows(&format!("{path}.{name}"), s, out);
        }
    }
}

/// The field's type as shown, and the schema of its elements (list) or values (map).
fn type_of(schema: &Json) -> (String, Option<(&'static str, &Json)>) {
    let t = schema.get("type").and_then(Json::as_str).unwrap_or("any");
    match t {
        "array" => {
            let items = schema.get("items").unwrap_or(&Json::Null);
            let (inner, _) = type_of(items);
            (format!("list of {inner}"), Some(("[]", items)))
        }
        "object" => match schema.get("additionalProperties") {
            Some(values) if values.is_object() => {
                let (inner, _) = type_of(values);
                (format!("map of {inner}"), Some(("{}", values)))
            }
            _ => ("object".into(), None),
        },
        other => {
            let format = schema
                .get("format")
                .and_then(Json::as_str)
                .map(String::from);
            // Whole numbers, held as floats by the CRD types.
            let bound = |key| schema.get(key).and_then(Json::as_f64).map(|n| n as i64);
            let range = match (t, bound("minimum"), bound("maximum")) {
                ("integer", Some(min), Some(max)) => Some(format!("{min} to {max}")),
                _ => None,
            };
            let notes: Vec<String> = format.into_iter().chain(range).collect();
            let kind = match notes.as_slice() {
                [] => other.to_string(),
                notes => format!("{other} ({})", notes.join(", ")),
            };
            (kind, None)
        }
    }
}
