//! The README's and the guide's fenced blocks, for the tests that check them (tests/docs.rs)
//! and the ones that run them: each command a page shows is run by a test, each resource is
//! sent to a real API server, each standalone config is loaded by the worker's own loader.

use std::path::{Path, PathBuf};

use crate::repo_root;

/// README.md and every page of the guide.
pub fn pages() -> Vec<PathBuf> {
    let root = repo_root();
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages.push(root.join("README.md"));
    pages
}

/// One fenced block of a page.
pub struct Block {
    pub page: PathBuf,
    /// The fence's language (`sh`, `yaml`, `text`, or empty).
    pub lang: String,
    pub body: String,
}

impl Block {
    /// The page, relative to the repository, for messages.
    pub fn page_name(&self) -> String {
        self.page
            .strip_prefix(repo_root())
            .unwrap_or(&self.page)
            .display()
            .to_string()
    }
}

/// The page's text outside fenced code blocks, and its fenced blocks.
pub fn split(page: &Path) -> (String, Vec<Block>) {
    let text = std::fs::read_to_string(page).unwrap_or_default();
    let mut prose = String::new();
    let mut blocks = Vec::new();
    let mut block: Option<Block> = None;
    // A block inside a list item is indented as its fence is: that much is not the block's.
    let mut indent = 0;
    for line in text.lines() {
        let fence = line.trim_start().starts_with("```");
        match (&mut block, fence) {
            (None, true) => {
                indent = line.len() - line.trim_start().len();
                block = Some(Block {
                    page: page.to_path_buf(),
                    lang: line.trim_start()[3..].trim().to_string(),
                    body: String::new(),
                })
            }
            (Some(_), true) => blocks.extend(block.take()),
            (Some(b), false) => {
                let cut = line.len() - line.trim_start().len();
                b.body.push_str(&line[cut.min(indent)..]);
                b.body.push('\n');
            }
            (None, false) => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    (prose, blocks)
}

/// Every fenced block of the README and the guide.
pub fn blocks() -> Vec<Block> {
    pages().iter().flat_map(|p| split(p).1).collect()
}

/// The commands of a shell block: its lines without comments, trimmed.
pub fn commands(body: &str) -> Vec<String> {
    body.lines()
        .map(|l| l.split(" #").next().unwrap_or_default().trim())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// The shell blocks tests run, each named by its page and a command it holds, with the test
/// that runs it. Every command any page shows must be one of theirs (tests/docs.rs).
pub const RUN: &[(&str, &str, &str)] = &[
    // `make test` is what .ci/run runs; it runs `make demo`'s script (tests/docs.rs checks both).
    (
        "README.md",
        "make demo",
        ".ci/run and the Makefile's test target",
    ),
    (
        "README.md",
        "pms-worker run --config examples/sync.yaml --once",
        "tests/docs_commands.rs",
    ),
    (
        "docs/first-sync.md",
        "pms-worker check",
        "tests/docs_commands.rs",
    ),
    ("README.md", "helm install", "tests/operator_e2e.rs"),
];

/// The shell block of `page` (relative to the repository) holding the command `holding`.
pub fn run_block(page: &str, holding: &str) -> Vec<String> {
    let (_, blocks) = split(&repo_root().join(page));
    blocks
        .iter()
        .filter(|b| b.lang == "sh")
        .map(|b| commands(&b.body))
        .find(|c| c.iter().any(|l| l.contains(holding)))
        .unwrap_or_else(|| panic!("{page} has no shell block with `{holding}` any more"))
}

/// Runs commands shown in the docs, in order, with bash in `dir`; `prelude` (functions, PATH)
/// stands in for what the reader's machine has. Panics with the command and its output on
/// the first that fails.
pub fn run_commands(dir: &Path, prelude: &str, commands: &[String]) -> Vec<String> {
    let mut outputs = Vec::new();
    for command in commands {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("set -euo pipefail\n{prelude}\n{command}"))
            .current_dir(dir)
            .output()
            .expect("run bash");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success(),
            "the documented command failed: {command}\n{text}"
        );
        outputs.push(text);
    }
    outputs
}

/// Every PaimonMysqlSync, PaimonMysqlDatabaseSync or savepoint a page shows, as a whole
/// resource (a part of a spec is merged over a minimal whole one), with where it was shown.
pub fn resources_shown() -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    for b in blocks().into_iter().filter(|b| b.lang == "yaml") {
        let value: serde_json::Value = serde_yaml::from_str(&b.body).unwrap_or_else(|e| {
            panic!(
                "{}: YAML that doesn't parse: {e}\n{}",
                b.page_name(),
                b.body
            )
        });
        let resource = if value.get("apiVersion").is_some() {
            value
        } else if let Some(spec) = value.get("spec") {
            let kind = if spec.get("tables").is_some() || spec.get("placement").is_some() {
                "PaimonMysqlDatabaseSync"
            } else {
                "PaimonMysqlSync"
            };
            let mut whole = minimal(kind);
            merge(&mut whole, &value);
            whole
        } else if is_standalone_config(&value) {
            continue;
        } else {
            // A part of a sync's spec (`source:` or `sink:` alone).
            let mut whole = minimal("PaimonMysqlSync");
            merge(&mut whole, &serde_json::json!({ "spec": value }));
            whole
        };
        out.push((b.page_name(), resource));
    }
    out
}

/// A standalone worker's config file: a spec with its source, sink and checkpoint file.
pub fn is_standalone_config(value: &serde_json::Value) -> bool {
    value.get("source").is_some() && value.get("sink").is_some()
}

/// A minimal whole resource of `kind`.
fn minimal(kind: &str) -> serde_json::Value {
    let spec = serde_json::json!({
        "source": {"warehouse": "s3://lake/warehouse", "database": "shop", "table": "orders"},
        "sink": {"url": "mysql://mysql.serving:3306/serving", "table": "orders_rt"},
    });
    let spec = if kind == "PaimonMysqlDatabaseSync" {
        serde_json::json!({
            "tables": {"names": ["orders"]},
            "template": {
                "source": {"warehouse": "s3://lake/warehouse", "database": "shop", "table": "{table}"},
                "sink": {"url": "mysql://mysql.serving:3306/serving", "table": "{table}_rt"},
            },
        })
    } else {
        spec
    };
    serde_json::json!({
        "apiVersion": "paimonsync.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": "shown-in-the-guide"},
        "spec": spec,
    })
}

/// `patch` merged into `target`, object by object.
pub fn merge(target: &mut serde_json::Value, patch: &serde_json::Value) {
    match (target, patch) {
        (serde_json::Value::Object(t), serde_json::Value::Object(p)) => {
            for (k, v) in p {
                merge(t.entry(k.clone()).or_insert(serde_json::Value::Null), v);
            }
        }
        (t, p) => *t = p.clone(),
    }
}
