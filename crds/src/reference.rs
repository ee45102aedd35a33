//! The guide's reference of every field of the resources (`docs/reference.md`), generated from
//! the CRDs' own schemas so that it can't drift from them (`make crds` writes it; a test fails
//! when the committed page is stale). The schema gives the type, whether a field is required, its
//! default, its rules (values, ranges, lengths, patterns, CEL rules) and its description (the doc
//! comments of the types); this file adds the examples ([`EXAMPLES`], kept out of the doc comments
//! so they don't lengthen the CRDs), the words of the patterns ([`PATTERNS`]) and the links of
//! Kubernetes' own types ([`CORE_TYPES`]), each checked against the schemas by the tests below.

use schemars::JsonSchema;
use serde_json::Value as Json;

/// The Kubernetes API reference of the version whose types the CRDs embed (k8s-openapi's `v1_35`).
const K8S_API: &str = "https://kubernetes.io/docs/reference/generated/kubernetes-api/v1.35/";

/// Fields of Kubernetes' own types, linked to its reference instead of listed field by field:
/// the field's path, the type's name and its anchor in the reference.
const CORE_TYPES: &[(&str, &str, &str)] = &[
    (
        "spec.workerPod.resources",
        "ResourceRequirements",
        "resourcerequirements-v1-core",
    ),
    ("spec.workerPod.volumes", "Volume", "volume-v1-core"),
    (
        "spec.workerPod.volumeMounts",
        "VolumeMount",
        "volumemount-v1-core",
    ),
    ("spec.workerPod.env", "EnvVar", "envvar-v1-core"),
    (
        "spec.workerPod.envFrom",
        "EnvFromSource",
        "envfromsource-v1-core",
    ),
    (
        "spec.workerPod.topologySpreadConstraints",
        "TopologySpreadConstraint",
        "topologyspreadconstraint-v1-core",
    ),
    (
        "spec.workerPod.tolerations",
        "Toleration",
        "toleration-v1-core",
    ),
    ("spec.workerPod.affinity", "Affinity", "affinity-v1-core"),
    (
        "spec.workerPod.imagePullSecrets",
        "LocalObjectReference",
        "localobjectreference-v1-core",
    ),
    ("status.conditions", "Condition", "condition-v1-meta"),
];

/// What a pattern of the schemas admits, in words (a duration's is [`DURATION_RULE`]).
const PATTERNS: &[(&str, &str)] = &[
    (
        r"^mysql://([^/@]*@)?(\[[0-9a-fA-F:.]+\]|[^/@:?\[\]]+)(:[0-9]{1,5})?/[^/?]+$",
        "the form `mysql://[user@]host[:port]/database` (an IPv6 host in brackets; no `?` parameters)",
    ),
    (
        r"^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})|[0-9]{1,15})$",
        "RFC 3339 with a zone (`2026-11-01T00:00:00Z`, `2026-11-01T02:00:00+02:00`), or at most 15 digits (Unix milliseconds)",
    ),
    (r"^[^/]+$", "no `/`"),
];

const DURATION_RULE: &str = "a [duration](#durations)";

/// Example values, as written in YAML, by kind and field path. Kept here rather than in the doc
/// comments: a doc comment is the CRD's description, which every cluster stores and `kubectl
/// explain` prints.
const EXAMPLES: &[(&str, &str, &str)] = &[
    ("PaimonMysqlSync", "spec.source.warehouse", "s3://lake/warehouse"),
    ("PaimonMysqlSync", "spec.source.database", "shop"),
    ("PaimonMysqlSync", "spec.source.table", "orders"),
    ("PaimonMysqlSync", "spec.source.path", "hdfs:///warehouse/orders"),
    ("PaimonMysqlSync", "spec.source.startSnapshot", "1200"),
    ("PaimonMysqlSync", "spec.source.startTimestamp", "2026-11-01T00:00:00Z"),
    ("PaimonMysqlSync", "spec.source.startFrom", "{flinkConsumer: orders-to-mysql}"),
    ("PaimonMysqlSync", "spec.source.startFrom.flinkConsumer", "orders-to-mysql"),
    ("PaimonMysqlSync", "spec.source.startFrom.stoppedFor", "5m"),
    ("PaimonMysqlSync", "spec.source.filter", "status IN ('PAID', 'SHIPPED') AND amount >= 20"),
    ("PaimonMysqlSync", "spec.source.freshness", "commit"),
    ("PaimonMysqlSync", "spec.source.consumerId", "pms-shop-orders"),
    ("PaimonMysqlSync", "spec.source.pollInterval", "500ms"),
    ("PaimonMysqlSync", "spec.source.s3", "{endpoint: 'http://minio.storage:9000', pathStyle: true, credentialsSecretRef: {name: lake-s3}}"),
    ("PaimonMysqlSync", "spec.source.s3.endpoint", "http://minio.storage:9000"),
    ("PaimonMysqlSync", "spec.source.s3.region", "eu-west-1"),
    ("PaimonMysqlSync", "spec.source.s3.credentialsSecretRef", "{name: lake-s3}"),
    ("PaimonMysqlSync", "spec.source.hadoopConf", "{name: hadoop-conf}"),
    ("PaimonMysqlSync", "spec.source.kerberos.principal", "pms@EXAMPLE.COM"),
    ("PaimonMysqlSync", "spec.source.kerberos.keytabSecretRef", "{name: pms-keytab}"),
    ("PaimonMysqlSync", "spec.source.kerberos.krb5ConfConfigMapRef", "{name: krb5, key: krb5.conf}"),
    ("PaimonMysqlSync", "spec.sink.url", "mysql://pms@mysql.shop:3306/shop"),
    ("PaimonMysqlSync", "spec.sink.credentialsSecretRef", "{name: mysql-pms}"),
    ("PaimonMysqlSync", "spec.sink.table", "orders"),
    ("PaimonMysqlSync", "spec.sink.columns.include", "[id, status, amount]"),
    ("PaimonMysqlSync", "spec.sink.columns.exclude", "[internal_note]"),
    ("PaimonMysqlSync", "spec.sink.columns.rename", "{id: order_id}"),
    ("PaimonMysqlSync", "spec.sink.maxRows", "5000"),
    ("PaimonMysqlSync", "spec.sink.flushInterval", "500ms"),
    ("PaimonMysqlSync", "spec.sink.maxRowsPerStatement", "1000"),
    ("PaimonMysqlSync", "spec.sink.maxBufferBytes", "268435456"),
    ("PaimonMysqlSync", "spec.sink.maxRetries", "10"),
    ("PaimonMysqlSync", "spec.sink.maxTransactionRows", "500000"),
    ("PaimonMysqlSync", "spec.sink.sequenceGuard.column", "pms_snapshot"),
    ("PaimonMysqlSync", "spec.sink.tls.caFile", "/etc/pms/ca.pem"),
    ("PaimonMysqlSync", "spec.sink.tls.caSecretRef", "{name: mysql-ca}"),
    ("PaimonMysqlSync", "spec.sink.tls.clientCertFile", "/etc/pms/client.pem"),
    ("PaimonMysqlSync", "spec.sink.tls.clientKeyFile", "/etc/pms/client-key.pem"),
    ("PaimonMysqlSync", "spec.sink.tls.clientCertSecretRef", "{name: pms-client-tls}"),
    ("PaimonMysqlSync", "spec.sink.tls.serverName", "mysql.internal.example.com"),
    ("PaimonMysqlSync", "spec.parallelism", "4"),
    ("PaimonMysqlSync", "spec.checkpoint.interval", "30s"),
    ("PaimonMysqlSync", "spec.checkpoint.path", "/var/lib/pms/orders.json"),
    ("PaimonMysqlSync", "spec.checkpoint.s3", "{bucket: pms-state, prefix: checkpoints}"),
    ("PaimonMysqlSync", "spec.checkpoint.s3.bucket", "pms-state"),
    ("PaimonMysqlSync", "spec.checkpoint.s3.prefix", "checkpoints"),
    ("PaimonMysqlSync", "spec.checkpoint.s3.endpoint", "http://minio.storage:9000"),
    ("PaimonMysqlSync", "spec.checkpoint.s3.region", "eu-west-1"),
    ("PaimonMysqlSync", "spec.checkpoint.s3.credentialsSecretRef", "{name: pms-state-s3}"),
    ("PaimonMysqlSync", "spec.rebuild.trigger", "r1"),
    ("PaimonMysqlSync", "spec.rebuild.retainOld", "24h"),
    ("PaimonMysqlSync", "spec.verify.interval", "6h"),
    ("PaimonMysqlSync", "spec.verify.trigger", "v1"),
    ("PaimonMysqlSync", "spec.savepoint.trigger", "before-upgrade"),
    ("PaimonMysqlSync", "spec.savepoint.interval", "1h"),
    ("PaimonMysqlSync", "spec.savepoint.history.maxCount", "10"),
    ("PaimonMysqlSync", "spec.savepoint.history.maxAge", "7d"),
    ("PaimonMysqlSync", "spec.restoreFrom.savepoint", "orders-before-upgrade"),
    ("PaimonMysqlSync", "spec.restoreFrom.snapshotId", "1200"),
    ("PaimonMysqlSync", "spec.restartNonce", "n1"),
    ("PaimonMysqlSync", "spec.rollback", "{readinessTimeout: 10m}"),
    ("PaimonMysqlSync", "spec.rollback.readinessTimeout", "10m"),
    ("PaimonMysqlSync", "spec.workerPod.image", "ghcr.io/paimon-mysql-sync/pms-worker:1.4.0"),
    ("PaimonMysqlSync", "spec.workerPod.labels", "{team: data}"),
    ("PaimonMysqlSync", "spec.workerPod.annotations", "{prometheus.io/scrape: 'true'}"),
    ("PaimonMysqlSync", "spec.workerPod.resources", "{requests: {cpu: 500m}, limits: {memory: 1Gi}}"),
    ("PaimonMysqlSync", "spec.workerPod.volumes", "[{name: lake, persistentVolumeClaim: {claimName: lake}}]"),
    ("PaimonMysqlSync", "spec.workerPod.volumeMounts", "[{name: lake, mountPath: /lake, readOnly: true}]"),
    ("PaimonMysqlSync", "spec.workerPod.env", "[{name: RUST_LOG, value: debug}]"),
    ("PaimonMysqlSync", "spec.workerPod.envFrom", "[{secretRef: {name: proxy-settings}}]"),
    ("PaimonMysqlSync", "spec.workerPod.serviceAccountName", "pms-lake-reader"),
    ("PaimonMysqlSync", "spec.workerPod.serviceAccountAnnotations", "{eks.amazonaws.com/role-arn: 'arn:aws:iam::123456789012:role/pms'}"),
    ("PaimonMysqlSync", "spec.workerPod.topologySpreadConstraints", "[{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}]"),
    ("PaimonMysqlSync", "spec.workerPod.nodeSelector", "{kubernetes.io/arch: arm64}"),
    ("PaimonMysqlSync", "spec.workerPod.tolerations", "[{key: dedicated, operator: Equal, value: sync, effect: NoSchedule}]"),
    ("PaimonMysqlSync", "spec.workerPod.priorityClassName", "pms-high"),
    ("PaimonMysqlSync", "spec.workerPod.imagePullSecrets", "[{name: registry-creds}]"),
    ("PaimonMysqlSync", "spec.workerPod.fsGroup", "1000"),
    ("PaimonMysqlSync", "spec.workerPod.stallAfter", "30m"),
    ("PaimonMysqlSyncSavepoint", "spec.syncName", "orders"),
    ("PaimonMysqlDatabaseSync", "spec.tables.names", "[orders, customers]"),
    ("PaimonMysqlDatabaseSync", "spec.tables.pattern", "dim_.*|fact_.*"),
    ("PaimonMysqlDatabaseSync", "spec.tables.exclude", "['.*_tmp']"),
    ("PaimonMysqlDatabaseSync", "spec.discoveryInterval", "5m"),
    ("PaimonMysqlDatabaseSync", "spec.overrides", "{orders: {sink: {maxRows: 5000}}}"),
    ("PaimonMysqlDatabaseSync", "spec.placement.workers", "4"),
    ("PaimonMysqlDatabaseSync", "spec.placement.maxFullReads", "1"),
    ("PaimonMysqlDatabaseSync", "spec.placement.maxConnectionsPerWorker", "20"),
];

/// One row of a table: a field.
struct Row {
    path: String,
    kind: String,
    required: bool,
    default: String,
    rules: Vec<String>,
    description: String,
    /// Has rows of its own below it (an object with fields).
    parent: bool,
}

/// The reference page, in Markdown.
pub fn reference_markdown() -> String {
    let mut out = header();
    for crd in crate::crds() {
        let Some(version) = crd.spec.versions.first() else {
            continue;
        };
        let root = version
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
            .and_then(|s| serde_json::to_value(s).ok())
            .unwrap_or(Json::Null);
        let kind = &crd.spec.names.kind;
        let short = crd.spec.names.short_names.clone().unwrap_or_default();
        out.push_str(&format!(
            "\n## {kind}\n\n`apiVersion: {}/{}`, `kind: {kind}`{}. {}\n",
            crd.spec.group,
            version.name,
            if short.is_empty() {
                String::new()
            } else {
                format!(" (short name `{}`)", short.join("`, `"))
            },
            text(str_at(&root, "/properties/spec/description"))
        ));
        let names: Vec<String> = validations(&root).map(|(_, m)| text(m)).collect();
        if !names.is_empty() {
            out.push_str("\nIts name (`metadata.name`):\n\n");
            for message in names {
                out.push_str(&format!("- {message}\n"));
            }
        }
        let mut rows = Vec::new();
        for part in ["spec", "status"] {
            if let Some(s) = root.pointer(&format!("/properties/{part}")) {
                collect(kind, part, s, is_required(&root, part), None, &mut rows);
            }
        }
        if kind == "PaimonMysqlSync" {
            // The sync's fields are most of the page: a section per object of its spec, which
            // the guide's pages can link to.
            let section = |path: &str| -> String {
                let parts: Vec<&str> = path.splitn(3, '.').collect();
                match parts.as_slice() {
                    ["spec", child, _] => format!("spec.{child}"),
                    [first, ..] => first.to_string(),
                    [] => String::new(),
                }
            };
            let objects = rows
                .iter_mut()
                .filter(|r| r.parent && r.path != "spec" && section(&r.path) == "spec");
            for row in objects {
                let anchor = row.path.replace('.', "").to_lowercase();
                row.kind = format!("object ([its fields](#{anchor}))");
            }
            let mut sections: Vec<String> = Vec::new();
            for row in &rows {
                let s = section(&row.path);
                if !sections.contains(&s) {
                    sections.push(s);
                }
            }
            for s in sections {
                out.push_str(&format!("\n### `{s}`\n\n"));
                table(
                    kind,
                    rows.iter().filter(|r| section(&r.path) == s),
                    &mut out,
                );
            }
        } else {
            out.push('\n');
            table(kind, rows.iter(), &mut out);
        }
    }
    out
}

fn header() -> String {
    let duration = duration_doc();
    format!(
        "# Reference: the resources' fields\n\n\
         Every field of the three resources, generated from the CRDs' schemas by `make crds` \
         (`crdgen reference`): a test fails when this page differs from the types, so edit the doc \
         comments in `crds/src/` (or the examples in `crds/src/reference.rs`), not this page. The \
         standalone worker's YAML file is a `PaimonMysqlSync`'s `spec` (or a whole resource); \
         [Configuration](configuration.md) goes through it task by task.\n\n\
         - **field**: the path in the resource; `[]` is an element of a list, `{{}}` a value of a map.\n\
         - **required**: `yes` when the field must be given whenever the object holding it is \
         (a required field of an optional object is only required when that object is given).\n\
         - **default**: what the API server (or the standalone worker) fills in when the field is left \
         out. Without one the field stays unset, and its description says what unset means.\n\
         - **example**: a value as written in YAML. The examples are kept in `crds/src/reference.rs`, \
         by field, rather than in the doc comments: those are the CRDs' descriptions, which every \
         cluster stores and `kubectl explain` prints. A test checks each against the field's schema \
         and the types.\n\
         - **rules**: what is checked beyond the type: the allowed values, ranges, lengths and patterns \
         of the schema, and the CEL rules (`x-kubernetes-validations`), each in the words of the \
         message it fails with. The API server checks them all; the standalone worker checks the \
         values, ranges and lengths, and what it needs of the rest when it starts.\n\
         - Kubernetes' own types (volumes, environment, resources, scheduling, conditions) link to the \
         [Kubernetes API reference]({K8S_API}) instead of listing their fields.\n\n\
         ## Durations\n\n{}\n",
        text(&duration)
    )
}

/// The description of [`crate::HumanDuration`]'s schema, the one every duration field shares.
fn duration_doc() -> String {
    let schema = crate::HumanDuration::json_schema(&mut schemars::SchemaGenerator::default());
    str_at(schema.as_value(), "/description").to_string()
}

fn table<'a>(kind: &str, rows: impl Iterator<Item = &'a Row>, out: &mut String) {
    out.push_str(
        "| field | type | required | default | example | rules | description |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for row in rows {
        let example = example_of(kind, &row.path)
            .map(|e| format!("`{}`", code(e)))
            .unwrap_or_default();
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {example} | {} | {} |\n",
            row.path,
            row.kind,
            if row.required { "yes" } else { "" },
            row.default,
            row.rules
                .iter()
                .map(|r| text(r))
                .collect::<Vec<_>>()
                .join("; "),
            text(&row.description)
        ));
    }
}

fn example_of(kind: &str, path: &str) -> Option<&'static str> {
    EXAMPLES
        .iter()
        .find(|(k, p, _)| *k == kind && *p == path)
        .map(|(_, _, e)| *e)
}

/// A row per field under `path`, depth first, in the schema's order. `fixed`: the parent's CEL
/// rule that this field can't change, if one names it.
fn collect(
    kind: &str,
    path: &str,
    schema: &Json,
    required: bool,
    fixed: Option<&str>,
    out: &mut Vec<Row>,
) {
    let core = CORE_TYPES.iter().find(|(p, _, _)| *p == path);
    let template = kind == "PaimonMysqlDatabaseSync" && path == "spec.template";
    let (mut type_text, inner) = type_of(schema);
    if let Some((_, name, anchor)) = core {
        let link = format!("[{name}]({K8S_API}#{anchor})");
        type_text = match schema.get("type").and_then(Json::as_str) {
            Some("array") => format!("list of {link}"),
            _ => link,
        };
    } else if template {
        type_text = "object: a [`PaimonMysqlSync`'s `spec`](#spec)".into();
    }
    let mut rules = rules_of(schema);
    if path.starts_with("status") {
        // The operator writes the status strings: their lengths bound what it writes, no one
        // else's values.
        rules.retain(|r| !r.ends_with("characters"));
    }
    if let Some(parent) = fixed {
        rules.insert(0, format!("can't change (see `{parent}`)"));
    }
    if template {
        rules.push(
            "the rules of a `PaimonMysqlSync`'s `spec`, its messages in a database sync's words"
                .into(),
        );
    }
    let mut row = Row {
        path: path.to_string(),
        kind: type_text,
        required,
        default: default_of(schema),
        rules,
        description: str_at(schema, "/description").to_string(),
        parent: false,
    };
    if core.is_some() || template {
        out.push(row);
        return;
    }
    // The fields the object's own CEL rules say can't change (`self.x == oldSelf.x && …`).
    let fixed_children: Vec<String> = validations(schema)
        .filter_map(|(rule, _)| unchanged_fields(rule))
        .flatten()
        .collect();
    let index = out.len();
    out.push(Row {
        path: String::new(),
        kind: String::new(),
        required: false,
        default: String::new(),
        rules: Vec::new(),
        description: String::new(),
        parent: false,
    });
    match inner {
        Some((suffix, inner)) => {
            let inner_path = format!("{path}{suffix}");
            if inner.get("properties").is_some() {
                children(kind, &inner_path, inner, &[], out);
            }
        }
        None => children(kind, path, schema, &fixed_children, out),
    }
    row.parent = out.len() > index + 1;
    out[index] = row;
}

fn children(kind: &str, path: &str, schema: &Json, fixed: &[String], out: &mut Vec<Row>) {
    if let Some(props) = schema.get("properties").and_then(Json::as_object) {
        for (name, s) in props {
            let fixed = fixed.contains(name).then_some(path);
            collect(
                kind,
                &format!("{path}.{name}"),
                s,
                is_required(schema, name),
                fixed,
                out,
            );
        }
    }
}

fn is_required(schema: &Json, name: &str) -> bool {
    schema
        .get("required")
        .and_then(Json::as_array)
        .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name)))
}

/// The CEL rules of a schema, as (rule, message).
fn validations(schema: &Json) -> impl Iterator<Item = (&str, &str)> {
    schema
        .get("x-kubernetes-validations")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .map(|v| (str_at(v, "/rule"), str_at(v, "/message")))
}

/// The fields a rule `self.a == oldSelf.a && self.b == oldSelf.b` keeps from changing; `None`
/// for any other rule.
fn unchanged_fields(rule: &str) -> Option<Vec<String>> {
    rule.split("&&")
        .map(|part| {
            let (left, right) = part.trim().split_once(" == ")?;
            let name = left.strip_prefix("self.")?;
            (right.strip_prefix("oldSelf.")? == name).then(|| name.to_string())
        })
        .collect()
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
        other => (other.to_string(), None),
    }
}

/// A scalar default as written in YAML; an object's or list's is left out (its fields show
/// theirs).
fn default_of(schema: &Json) -> String {
    match schema.get("default") {
        Some(Json::String(s)) => format!("`{}`", code(s)),
        Some(d @ (Json::Number(_) | Json::Bool(_))) => format!("`{d}`"),
        _ => String::new(),
    }
}

/// What the schema checks of a value beyond its type, in words.
fn rules_of(schema: &Json) -> Vec<String> {
    let mut rules = value_rules(schema);
    match schema.get("type").and_then(Json::as_str) {
        Some("array") => {
            if let Some(items) = schema.get("items") {
                rules.extend(value_rules(items).into_iter().map(|r| format!("each: {r}")));
            }
        }
        Some("object") => {
            if let Some(values) = schema.get("additionalProperties") {
                rules.extend(
                    value_rules(values)
                        .into_iter()
                        .map(|r| format!("each value: {r}")),
                );
            }
        }
        _ => {}
    }
    rules.extend(validations(schema).map(|(_, message)| message.to_string()));
    rules
}

/// Values, ranges, lengths and patterns of one value.
fn value_rules(schema: &Json) -> Vec<String> {
    let mut rules = Vec::new();
    if let Some(values) = schema.get("enum").and_then(Json::as_array) {
        let values: Vec<String> = values
            .iter()
            .filter_map(Json::as_str)
            .map(|v| format!("`{v}`"))
            .collect();
        rules.push(format!("one of {}", values.join(", ")));
    }
    // Whole numbers, held as floats by the CRD types.
    let bound = |key| schema.get(key).and_then(Json::as_f64).map(|n| n as i64);
    if schema.get("type").and_then(Json::as_str) == Some("integer") {
        match (bound("minimum"), bound("maximum")) {
            (Some(min), Some(max)) => rules.push(format!("{min} to {max}")),
            (Some(min), None) => rules.push(format!("at least {min}")),
            (None, Some(max)) => rules.push(format!("at most {max}")),
            (None, None) => {}
        }
    }
    let pattern = schema.get("pattern").and_then(Json::as_str);
    if pattern == Some(crate::duration::pattern().as_str()) {
        // A duration's length follows from its pattern.
        rules.push(DURATION_RULE.into());
        return rules;
    }
    if let Some(pattern) = pattern {
        rules.push(match PATTERNS.iter().find(|(p, _)| *p == pattern) {
            Some((_, words)) => words.to_string(),
            None => format!("matches `{pattern}`"),
        });
    }
    match (bound("minLength"), bound("maxLength")) {
        (Some(1), Some(max)) => rules.push(format!("not empty, at most {max} characters")),
        (Some(min), Some(max)) => rules.push(format!("{min} to {max} characters")),
        (Some(1), None) => rules.push("not empty".into()),
        (Some(min), None) => rules.push(format!("at least {min} characters")),
        (None, Some(max)) => rules.push(format!("at most {max} characters")),
        (None, None) => {}
    }
    rules
}

fn str_at<'a>(schema: &'a Json, pointer: &str) -> &'a str {
    schema
        .pointer(pointer)
        .and_then(Json::as_str)
        .unwrap_or_default()
}

/// Prose for a table cell or a list: one line, `|` escaped (it would end the cell), and `<` and
/// `>` escaped outside code spans, where mdBook would take `<sync>` for HTML. Inside a code span
/// they stay literal: Markdown shows a code span as typed, so `&lt;` would show as `&lt;`.
fn text(prose: &str) -> String {
    let prose = prose.replace('\n', " ");
    let parts: Vec<&str> = prose.split('`').collect();
    // An odd number of backticks: the last one opens no code span.
    let spans = if parts.len().is_multiple_of(2) {
        parts.len() - 1
    } else {
        parts.len()
    };
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 && i < spans {
            out.push_str(&code(part));
        } else {
            // `--` escaped: mdBook's smart punctuation would make it a dash (`"--"` in a rule).
            out.push_str(
                &part
                    .replace('|', "\\|")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
                    .replace("--", "\\-\\-"),
            );
        }
    }
    out
}

/// The inside of a code span in a table cell: literal, but for `|`, which would end the cell
/// (GitHub's tables and mdBook's take `\|` as `|` there too).
fn code(inside: &str) -> String {
    inside.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kinds' schemas, by kind.
    fn roots() -> Vec<(String, Json)> {
        crate::crds()
            .into_iter()
            .filter_map(|crd| {
                let schema = crd.spec.versions.first()?.schema.as_ref()?;
                let root = serde_json::to_value(schema.open_api_v3_schema.as_ref()?).ok()?;
                Some((crd.spec.names.kind.clone(), root))
            })
            .collect()
    }

    /// The schema of a field path (`spec.sink.url`), through objects' properties only.
    fn field<'a>(root: &'a Json, path: &str) -> Option<&'a Json> {
        path.split('.')
            .try_fold(root, |s, name| s.get("properties")?.get(name))
    }

    fn rows_of(kind: &str, root: &Json) -> Vec<Row> {
        let mut rows = Vec::new();
        for part in ["spec", "status"] {
            if let Some(s) = root.pointer(&format!("/properties/{part}")) {
                collect(kind, part, s, true, None, &mut rows);
            }
        }
        rows
    }

    #[test]
    fn every_field_is_described() {
        let duration = duration_doc();
        let mut bare = Vec::new();
        for (kind, root) in roots() {
            for row in rows_of(&kind, &root) {
                // A duration field without its own doc comment has the type's.
                if row.description.trim().is_empty() || row.description == duration {
                    bare.push(format!("{kind} {}", row.path));
                }
            }
        }
        assert!(
            bare.is_empty(),
            "fields without a description (a doc comment in crds/src/):\n{}",
            bare.join("\n")
        );
    }

    #[test]
    fn every_pattern_is_in_words_and_every_link_is_a_field() {
        let page = reference_markdown();
        assert!(
            !page.contains("matches `"),
            "a pattern without words in PATTERNS"
        );
        let roots = roots();
        for (path, name, _) in CORE_TYPES {
            assert!(
                roots.iter().any(|(_, root)| field(root, path).is_some()),
                "CORE_TYPES names {path} ({name}), which no CRD has"
            );
        }
    }

    /// The page lists no field of a Kubernetes type: each is linked.
    #[test]
    fn kubernetes_types_are_linked_not_listed() {
        for (kind, root) in roots() {
            for row in rows_of(&kind, &root) {
                let inside = CORE_TYPES
                    .iter()
                    .any(|(p, _, _)| row.path.starts_with(&format!("{p}.")));
                assert!(!inside, "{kind} {} is listed", row.path);
            }
        }
    }

    /// A database sync's template is linked to the sync's `spec`: it must be that, but for its
    /// description and its rules' messages.
    #[test]
    fn the_template_is_a_syncs_spec() {
        fn without_words(schema: &mut Json) {
            match schema {
                Json::Object(map) => {
                    map.remove("message");
                    map.values_mut().for_each(without_words);
                }
                Json::Array(items) => items.iter_mut().for_each(without_words),
                _ => {}
            }
        }
        let roots = roots();
        let schema = |kind: &str, path: &str| {
            let (_, root) = roots.iter().find(|(k, _)| k == kind).expect("the kind");
            let mut s = field(root, path).cloned().expect("the field");
            without_words(&mut s);
            if let Json::Object(map) = &mut s {
                map.remove("description");
            }
            s
        };
        assert_eq!(
            schema("PaimonMysqlDatabaseSync", "spec.template"),
            schema("PaimonMysqlSync", "spec")
        );
    }

    /// Whether `value` is what `schema` admits: type, values, ranges, lengths, patterns, fields.
    fn fits(schema: &Json, value: &Json) -> Result<(), String> {
        let t = schema.get("type").and_then(Json::as_str).unwrap_or("any");
        if let Some(values) = schema.get("enum").and_then(Json::as_array) {
            if !values.contains(value) {
                return Err(format!("{value} is not one of {values:?}"));
            }
        }
        let bound = |key| schema.get(key).and_then(Json::as_f64);
        match value {
            Json::String(s) if t == "string" => {
                if let Some(p) = schema.get("pattern").and_then(Json::as_str) {
                    let re = regex::Regex::new(p).map_err(|e| format!("{p}: {e}"))?;
                    if !re.is_match(s) {
                        return Err(format!("{s:?} does not match {p}"));
                    }
                }
                let len = s.chars().count() as f64;
                if bound("minLength").is_some_and(|m| len < m)
                    || bound("maxLength").is_some_and(|m| len > m)
                {
                    return Err(format!("{s:?}: length out of bounds"));
                }
            }
            Json::Number(n) if t == "integer" || t == "number" => {
                let n = n.as_f64().ok_or("not a number")?;
                if bound("minimum").is_some_and(|m| n < m)
                    || bound("maximum").is_some_and(|m| n > m)
                {
                    return Err(format!("{n} out of range"));
                }
            }
            Json::Bool(_) if t == "boolean" => {}
            Json::Array(items) if t == "array" => {
                let inner = schema.get("items").ok_or("a list without items")?;
                items.iter().try_for_each(|i| fits(inner, i))?;
            }
            Json::Object(map) if t == "object" => {
                let open = schema.get("x-kubernetes-preserve-unknown-fields") == Some(&true.into());
                for (k, v) in map {
                    match schema
                        .pointer(&format!("/properties/{}", k.replace('/', "~1")))
                        .or_else(|| schema.get("additionalProperties"))
                    {
                        Some(inner) => fits(inner, v).map_err(|e| format!("{k}: {e}"))?,
                        None if open => {}
                        None => return Err(format!("no field {k}")),
                    }
                }
                for name in schema
                    .get("required")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                {
                    if name.as_str().is_some_and(|n| !map.contains_key(n)) {
                        return Err(format!("{name} is required"));
                    }
                }
            }
            // A quantity, or a core type's int-or-string.
            Json::String(_) | Json::Number(_) if t == "any" => {}
            other => return Err(format!("{other} is not a {t}")),
        }
        Ok(())
    }

    /// A resource of `kind` with every object that has required fields given, so that an
    /// example of a field inside one can be set alone.
    fn base(kind: &str) -> Json {
        let spec = match kind {
            "PaimonMysqlSync" => serde_json::json!({
                "source": {"warehouse": "/w", "database": "d", "table": "t",
                           "startFrom": {"flinkConsumer": "f"}, "kerberos": {"principal": "p@R"}},
                "sink": {"url": "mysql://h/d", "table": "t", "sequenceGuard": {"column": "s"}},
                "checkpoint": {"s3": {"bucket": "b"}},
            }),
            "PaimonMysqlDatabaseSync" => serde_json::json!({
                "tables": {"names": ["t"]},
                "template": {"source": {"warehouse": "/w", "database": "d", "table": "{table}"},
                             "sink": {"url": "mysql://h/d", "table": "{table}"}},
            }),
            _ => serde_json::json!({"syncName": "s"}),
        };
        serde_json::json!({"apiVersion": "paimonsync.io/v1alpha1", "kind": kind,
                           "metadata": {"name": "n"}, "spec": spec})
    }

    fn decodes(kind: &str, resource: Json) -> Result<(), String> {
        let decoded = match kind {
            "PaimonMysqlSync" => {
                serde_json::from_value::<crate::PaimonMysqlSync>(resource).map(drop)
            }
            "PaimonMysqlDatabaseSync" => {
                serde_json::from_value::<crate::PaimonMysqlDatabaseSync>(resource).map(drop)
            }
            _ => serde_json::from_value::<crate::PaimonMysqlSyncSavepoint>(resource).map(drop),
        };
        decoded.map_err(|e| e.to_string())
    }

    #[test]
    fn every_example_is_what_its_field_admits() {
        let roots = roots();
        let mut wrong = Vec::new();
        for (kind, path, example) in EXAMPLES {
            let Some((_, root)) = roots.iter().find(|(k, _)| k == kind) else {
                wrong.push(format!("{kind}: no such kind"));
                continue;
            };
            let Some(schema) = field(root, path) else {
                wrong.push(format!("{kind} {path}: no such field"));
                continue;
            };
            let value: Json = match serde_yaml::from_str(example) {
                Ok(v) => v,
                Err(e) => {
                    wrong.push(format!("{kind} {path}: {example:?} is not YAML: {e}"));
                    continue;
                }
            };
            if let Err(e) = fits(schema, &value) {
                wrong.push(format!(
                    "{kind} {path}: {example:?}: the schema refuses it: {e}"
                ));
                continue;
            }
            let mut resource = base(kind);
            let mut at = &mut resource;
            for name in path.split('.') {
                at = &mut at[name];
            }
            *at = value;
            if let Err(e) = decodes(kind, resource) {
                wrong.push(format!(
                    "{kind} {path}: {example:?}: the types refuse it: {e}"
                ));
            }
        }
        for (i, (kind, path, _)) in EXAMPLES.iter().enumerate() {
            if EXAMPLES[..i].iter().any(|(k, p, _)| k == kind && p == path) {
                wrong.push(format!("{kind} {path}: two examples"));
            }
        }
        assert!(wrong.is_empty(), "examples:\n{}", wrong.join("\n"));
    }

    #[test]
    fn code_spans_stay_literal_and_cells_stay_whole() {
        assert_eq!(
            text("`<sync>-checkpoint` of <sync> | `a|b`"),
            "`<sync>-checkpoint` of &lt;sync&gt; \\| `a\\|b`"
        );
        assert_eq!(text("a ` b <c>"), "a ` b &lt;c&gt;");
        assert_eq!(text("not \"--\" but `--`"), "not \"\\-\\-\" but `--`");
    }
}
