//! The guide (`docs/`, built by `make docs`) and the README hold together: every link goes to a
//! file and heading that exist, every chapter is in the book's summary, every resource or config
//! shown in YAML parses as the types the operator and worker read (unknown fields refused), the
//! quick start's config is the file its commands run, and every command shown is one a test
//! runs (`docs::RUN`: tests/docs_commands.rs, tests/operator_e2e.rs, `make test`) and names
//! `make` targets and repository paths that exist. The API server takes every resource shown
//! (tests/operator_e2e.rs).

use std::collections::BTreeSet;
use std::path::Path;

use pms_tests::docs::{self, pages, split};
use pms_tests::repo_root;

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
    let (prose, _) = split(page);
    prose
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| slug(&l.trim_start_matches('#').replace('`', "")))
        .collect()
}

/// Every piece of `text` that follows an `open` up to the next `close`.
fn between<'a>(text: &'a str, open: &str, close: char) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(open) {
        rest = &rest[i + open.len()..];
        if let Some(end) = rest.find(close) {
            out.push(&rest[..end]);
        }
    }
    out
}

/// Every `[text](target)` of the prose.
fn links(prose: &str) -> Vec<String> {
    between(prose, "](", ')')
        .into_iter()
        .map(String::from)
        .collect()
}

#[test]
fn every_link_of_the_readme_and_the_guide_goes_to_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    for page in pages() {
        let (prose, _) = split(&page);
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
    let mut wrong = Vec::new();
    for b in docs::blocks().iter().filter(|b| b.lang == "yaml") {
        // A sketch with elisions can't be checked whole: the guide shows none.
        if b.body.contains("...") || b.body.contains('…') {
            wrong.push(format!(
                "{}: an elided block (`...`): show it whole\n{}",
                b.page_name(),
                b.body
            ));
        }
    }
    let resources = docs::resources_shown();
    for (page, resource) in &resources {
        let parsed = match resource["kind"].as_str() {
            Some("PaimonMysqlSync") => {
                serde_json::from_value::<pms_crds::PaimonMysqlSync>(resource.clone()).map(drop)
            }
            Some("PaimonMysqlDatabaseSync") => {
                serde_json::from_value::<pms_crds::PaimonMysqlDatabaseSync>(resource.clone())
                    .map(drop)
            }
            Some("PaimonMysqlSyncSavepoint") => {
                serde_json::from_value::<pms_crds::PaimonMysqlSyncSavepoint>(resource.clone())
                    .map(drop)
            }
            kind => {
                wrong.push(format!(
                    "{page}: a resource of kind {kind:?}, which no test sends"
                ));
                continue;
            }
        };
        if let Err(e) = parsed {
            wrong.push(format!("{page}: {e}\n{resource:#}"));
        }
    }
    // Standalone configs go through the worker's own loader (unknown fields refused).
    let mut configs = 0;
    for b in docs::blocks().iter().filter(|b| b.lang == "yaml") {
        let Ok(value) = serde_yaml::from_str::<serde_json::Value>(&b.body) else {
            continue;
        };
        if !docs::is_standalone_config(&value) {
            continue;
        }
        configs += 1;
        let loaded = pms_worker::config::WorkerConfig::from_yaml(
            &b.body,
            pms_crds::contract::Slot::new(0, 1).unwrap(),
            &|_| None,
            Some(&repo_root()),
        );
        if let Err(e) = loaded {
            wrong.push(format!(
                "{}: the worker refuses it: {e}\n{}",
                b.page_name(),
                b.body
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "YAML the types refuse:\n{}",
        wrong.join("\n")
    );
    assert!(
        resources.len() >= 8 && configs >= 3,
        "only {} resources and {configs} configs found: is the guide's YAML still found?",
        resources.len()
    );
}

/// The README's quick-start config is a part of examples/sync.yaml, the file its commands run
/// (tests/docs_commands.rs): each value it shows is the file's.
#[test]
fn the_quick_start_config_is_the_file_its_commands_run() {
    let shown = docs::split(&repo_root().join("README.md"))
        .1
        .into_iter()
        .find(|b| b.lang == "yaml" && b.body.starts_with("source:"))
        .expect("README.md shows the standalone config");
    let shown: serde_json::Value = serde_yaml::from_str(&shown.body).unwrap();
    let file: serde_json::Value = serde_yaml::from_str(
        &std::fs::read_to_string(repo_root().join("examples/sync.yaml")).unwrap(),
    )
    .unwrap();
    let mut merged = file.clone();
    docs::merge(&mut merged, &shown);
    assert_eq!(
        merged, file,
        "README.md's config differs from examples/sync.yaml"
    );
}

/// Each command a page shows is one a test runs (`docs::RUN`); `make test` is what CI runs,
/// and it runs `make demo`'s script.
#[test]
fn every_command_shown_is_one_a_test_runs() {
    let run: BTreeSet<String> = docs::RUN
        .iter()
        .flat_map(|(page, holding, _)| docs::run_block(page, holding))
        .collect();
    let mut not_run = Vec::new();
    for b in docs::blocks().iter().filter(|b| b.lang == "sh") {
        for command in docs::commands(&b.body) {
            if !run.contains(&command) {
                not_run.push(format!("{}: {command}", b.page_name()));
            }
        }
    }
    assert!(
        not_run.is_empty(),
        "commands no test runs (run them in a test and list the block in docs::RUN):\n{}",
        not_run.join("\n")
    );
    let ci = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    assert!(
        ci.trim_end().ends_with("make test"),
        ".ci/run ends by running `make test`"
    );
    let makefile = std::fs::read_to_string(repo_root().join("Makefile")).unwrap();
    let test_target = makefile.split("\ntest:").nth(1).unwrap_or_default();
    let test_target = test_target.split("\n\n").next().unwrap_or_default();
    assert!(
        test_target.contains("scripts/demo.sh") && makefile.contains("\ndemo:"),
        "`make test` runs `make demo`'s script"
    );
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
    for b in docs::blocks().iter().filter(|b| b.lang == "sh") {
        for line in docs::commands(&b.body) {
            let words: Vec<&str> = line.split_whitespace().collect();
            for (i, w) in words.iter().enumerate() {
                if *w == "make" {
                    let target = words.get(i + 1).copied().unwrap_or("");
                    if !target.starts_with('-') && !target.is_empty() && !targets.contains(target) {
                        wrong.push(format!("{}: make {target}: no such target", b.page_name()));
                    }
                }
                let path = w.trim_matches(|c| c == '"' || c == '\'' || c == ';');
                let path = path.rsplit('=').next().unwrap_or(path);
                let repo_path = ["scripts/", "examples/", "charts/", "deploy/", "crds/"]
                    .iter()
                    .any(|p| path.starts_with(p));
                if repo_path && !path.contains('<') && !root.join(path).exists() {
                    wrong.push(format!("{}: {path}: no such file", b.page_name()));
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

/// Where `make docs` (and `make test`'s docs-book phase, before the tests) writes the book:
/// `build-dir` of docs/book.toml, relative to docs/.
fn built_book() -> std::path::PathBuf {
    let docs = repo_root().join("docs");
    let toml = std::fs::read_to_string(docs.join("book.toml")).unwrap();
    let dir = toml
        .lines()
        .find_map(|l| {
            let (key, value) = l.split_once('=')?;
            (key.trim() == "build-dir").then(|| value.trim().trim_matches('"').to_string())
        })
        .unwrap_or_else(|| "book".to_string());
    docs.join(dir)
}

/// Every `href="…"` and `src="…"` of an HTML page, entities decoded as far as links use them.
fn html_targets(html: &str) -> Vec<String> {
    [" href=\"", " src=\""]
        .iter()
        .flat_map(|attr| between(html, attr, '"'))
        .map(|t| t.replace("&amp;", "&").replace("&#x27;", "'"))
        .collect()
}

/// Every `id="…"` of an HTML page.
fn html_ids(html: &str) -> BTreeSet<String> {
    between(html, " id=\"", '"')
        .into_iter()
        .map(|id| id.replace("&amp;", "&"))
        .collect()
}

fn html_pages(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            html_pages(&path, out);
        } else if path.extension().is_some_and(|e| e == "html") {
            out.push(path);
        }
    }
}

/// The local links and images of every HTML page of a built book that don't resolve: a target
/// file that doesn't exist, or a `#fragment` of one of the book's pages that has no such id.
fn broken_links_of_the_built_book(book: &Path) -> Vec<String> {
    let mut pages = Vec::new();
    html_pages(book, &mut pages);
    pages.sort();
    let mut ids: std::collections::BTreeMap<std::path::PathBuf, BTreeSet<String>> =
        Default::default();
    let mut broken = Vec::new();
    for page in &pages {
        let html = std::fs::read_to_string(page).unwrap();
        let name = page
            .strip_prefix(book)
            .unwrap_or(page)
            .display()
            .to_string();
        for target in html_targets(&html) {
            // Another site, a mail address, a script: not the book's.
            let scheme = target.split_once(':').is_some_and(|(s, _)| {
                !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
            });
            if scheme || target.starts_with("//") || target.contains("{{") {
                continue;
            }
            let (file, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let file = file.split('?').next().unwrap_or_default();
            let mut resolved = if file.is_empty() {
                page.clone()
            } else if let Some(absolute) = file.strip_prefix('/') {
                // 404.html's links are from the site's root.
                book.join(absolute)
            } else {
                page.parent().unwrap().join(file)
            };
            if resolved.is_dir() {
                resolved = resolved.join("index.html");
            }
            if !resolved.exists() {
                broken.push(format!("{name}: {target}: no such file in the book"));
                continue;
            }
            if fragment.is_empty() || resolved.extension().is_none_or(|e| e != "html") {
                continue;
            }
            let resolved = resolved.canonicalize().unwrap();
            let page_ids = ids.entry(resolved.clone()).or_insert_with(|| {
                html_ids(&std::fs::read_to_string(&resolved).unwrap_or_default())
            });
            if !page_ids.contains(fragment) {
                broken.push(format!("{name}: {target}: no such id in the page"));
            }
        }
    }
    broken
}

/// The book as built (by `make docs`, or `make test`'s docs-book phase before the tests run) has
/// no broken link or image: what the Markdown checks above can't see (a link out of the book's
/// sources, an image outside docs/, a heading id mdBook makes otherwise) shows here.
#[test]
fn the_built_book_has_no_broken_link_or_image() {
    let book = built_book();
    let index = book.join("index.html");
    let built = std::fs::metadata(&index)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| {
            panic!(
                "the book is not built ({} is missing): build it with `make docs` or \
             `$(scripts/mdbook.sh) build docs` (make test does, before the tests)",
                index.display()
            )
        });
    // A book older than its sources would check the old text.
    let docs = repo_root().join("docs");
    let mut sources = Vec::new();
    for dir in [docs.clone(), docs.join("images")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                sources.push(path);
            }
        }
    }
    let newer: Vec<String> = sources
        .iter()
        .filter(|p| {
            std::fs::metadata(p)
                .and_then(|m| m.modified())
                .is_ok_and(|m| m > built)
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        newer.is_empty(),
        "the book in {} is older than its sources ({}): build it again with `make docs` or \
         `$(scripts/mdbook.sh) build docs`",
        book.display(),
        newer.join(", ")
    );
    let broken = broken_links_of_the_built_book(&book);
    assert!(
        broken.is_empty(),
        "the built book ({}) has broken links or images:\n{}",
        book.display(),
        broken.join("\n")
    );
    // The check itself finds what it must: a page with a missing file, image and heading.
    let probe = tempfile::tempdir().unwrap();
    std::fs::write(
        probe.path().join("index.html"),
        r#"<h1 id="here">x</h1><a href="index.html#here">ok</a><a href="gone.html">x</a>
<img src="images/gone.png"><a href="index.html#nowhere">x</a><a href="https://example.com/x">ok</a>"#,
    )
    .unwrap();
    let found = broken_links_of_the_built_book(probe.path());
    assert_eq!(found.len(), 3, "the check misses broken links: {found:?}");
}
