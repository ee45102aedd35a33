//! The guide (`docs/`, built by `make docs`) and the README hold together: every link goes to a
//! file and heading that exist, every chapter is in the book's summary, every resource or config
//! shown in YAML parses as the types the operator and worker read (unknown fields refused), and
//! every command names `make` targets and repository paths that exist.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pms_tests::repo_root;

/// README.md and every page of the guide.
fn pages() -> Vec<PathBuf> {
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

/// The page's text outside fenced code blocks, and its fenced blocks as (language, text).
fn split(text: &str) -> (String, Vec<(String, String)>) {
    let mut prose = String::new();
    let mut blocks = Vec::new();
    let mut block: Option<(String, String)> = None;
    // A block inside a list item is indented as its fence is: that much is not the block's.
    let mut indent = 0;
    for line in text.lines() {
        let fence = line.trim_start().starts_with("```");
        match (&mut block, fence) {
            (None, true) => {
                indent = line.len() - line.trim_start().len();
                block = Some((line.trim_start()[3..].trim().to_string(), String::new()))
            }
            (Some(_), true) => blocks.extend(block.take()),
            (Some((_, body)), false) => {
                let cut = line.len() - line.trim_start().len();
                body.push_str(&line[cut.min(indent)..]);
                body.push('\n');
            }
            (None, false) => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    (prose, blocks)
}

/// mdBook's (and GitHub's) id of a heading.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(page: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(page).unwrap_or_default();
    let (prose, _) = split(&text);
    prose
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| slug(&l.trim_start_matches('#').replace('`', "")))
        .collect()
}

/// Every `[text](target)` of the prose.
fn links(prose: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = prose;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].to_string());
        }
    }
    out
}

#[test]
fn every_link_of_the_readme_and_the_guide_goes_to_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let (prose, _) = split(&text);
        for link in links(&prose) {
            if link.starts_with("http://") || link.starts_with("https://") {
                continue;
            }
            let (file, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            if !target.exists() {
                broken.push(format!("{}: {link}: no such file", page.display()));
            } else if !anchor.is_empty() && !anchors(&target).contains(anchor) {
                broken.push(format!("{}: {link}: no such heading", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_page_of_the_guide_is_in_its_summary() {
    let docs = repo_root().join("docs");
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = links(&summary).into_iter().collect();
    for page in pages().iter().filter(|p| p.starts_with(&docs)) {
        let name = page.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            name == "SUMMARY.md" || listed.contains(&name),
            "docs/{name} is not in docs/SUMMARY.md, so the book leaves it out"
        );
    }
    for name in &listed {
        assert!(
            docs.join(name).exists(),
            "docs/SUMMARY.md lists {name}, which does not exist"
        );
    }
}

#[test]
fn every_resource_and_config_shown_parses_as_the_types_read() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for page in pages() {
        let (_, blocks) = split(&std::fs::read_to_string(&page).unwrap());
        for (lang, body) in blocks.iter().filter(|(l, _)| l == "yaml") {
            // A sketch with elisions (`...`, `…`) shows a part, not a whole: not parsed.
            if body.contains("...") || body.contains('…') {
                continue;
            }
            let parsed = if body.contains("kind: PaimonMysqlSync\n") {
                serde_yaml::from_str::<pms_crds::PaimonMysqlSync>(body).map(drop)
            } else if body.contains("kind: PaimonMysqlDatabaseSync") {
                serde_yaml::from_str::<pms_crds::PaimonMysqlDatabaseSync>(body).map(drop)
            } else if body.starts_with("source:") || body.starts_with("sink:") {
                // A part of a sync's spec: merged over a minimal whole one.
                let part: serde_json::Value = match serde_yaml::from_str(body) {
                    Ok(v) => v,
                    Err(e) => {
                        wrong.push(format!("{} ({lang}): {e}\n{body}", page.display()));
                        continue;
                    }
                };
                let mut spec = serde_json::json!({
                    "source": {"warehouse": "/wh", "database": "d", "table": "t"},
                    "sink": {"url": "mysql://h/d", "table": "t"},
                });
                merge(&mut spec, &part);
                serde_json::from_value::<pms_crds::PaimonMysqlSyncSpec>(spec)
                    .map(drop)
                    .map_err(|e| serde::de::Error::custom(e.to_string()))
            } else {
                continue;
            };
            checked += 1;
            if let Err(e) = parsed {
                wrong.push(format!("{} ({lang}): {e}\n{body}", page.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "YAML the types refuse:\n{}",
        wrong.join("\n")
    );
    assert!(
        checked >= 3,
        "only {checked} YAML blocks checked: is the guide's YAML still found?"
    );
}

/// `patch` merged into `target`, object by object.
fn merge(target: &mut serde_json::Value, patch: &serde_json::Value) {
    match (target, patch) {
        (serde_json::Value::Object(t), serde_json::Value::Object(p)) => {
            for (k, v) in p {
                merge(t.entry(k.clone()).or_insert(serde_json::Value::Null), v);
            }
        }
        (t, p) => *t = p.clone(),
    }
}

#[test]
fn every_command_shown_names_make_targets_and_paths_that_exist() {
    let root = repo_root();
    let makefile = std::fs::read_to_string(root.join("Makefile")).unwrap();
    let targets: BTreeSet<&str> = makefile
        .lines()
        .filter(|l| !l.starts_with('\t') && !l.starts_with('#'))
        .filter_map(|l| l.split_once(':').map(|(t, _)| t))
        .flat_map(|t| t.split_whitespace())
        .collect();
    let mut wrong = Vec::new();
    for page in pages() {
        let (_, blocks) = split(&std::fs::read_to_string(&page).unwrap());
        for (_, body) in blocks.iter().filter(|(l, _)| l == "sh") {
            for line in body
                .lines()
                .map(|l| l.split('#').next().unwrap_or_default())
            {
                let words: Vec<&str> = line.split_whitespace().collect();
                for (i, w) in words.iter().enumerate() {
                    if *w == "make" {
                        let target = words.get(i + 1).copied().unwrap_or("");
                        if !target.starts_with('-')
                            && !target.is_empty()
                            && !targets.contains(target)
                        {
                            wrong
                                .push(format!("{}: make {target}: no such target", page.display()));
                        }
                    }
                    let path = w.trim_matches(|c| c == '"' || c == '\'' || c == ';');
                    let path = path.rsplit('=').next().unwrap_or(path);
                    let repo_path = ["scripts/", "examples/", "charts/", "deploy/", "crds/"]
                        .iter()
                        .any(|p| path.starts_with(p));
                    if repo_path && !path.contains('<') && !root.join(path).exists() {
                        wrong.push(format!("{}: {path}: no such file", page.display()));
                    }
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "commands that can't run:\n{}",
        wrong.join("\n")
    );
}
