//! The chart's monitoring on a real Prometheus (`scripts/prometheus-tools.sh`): the alert rules,
//! rendered by Helm from the chart, pass `promtool check rules` and their unit tests
//! (`tests/prometheus/alerts_test.yaml`); a Prometheus server scrapes a running worker while
//! Paimon commits, loads the rules, and every query of the Grafana dashboard parses and (but for
//! the operator's `pms_sync_phase`) returns data.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::*;
use pms_tests::http;
use pms_tests::mysql::TestDb;
use pms_tests::repo_root;
use serde_json::{json, Value as Json};

const ALERTS: [&str; 13] = [
    "PmsFreshnessHigh",
    "PmsCheckpointStalled",
    "PmsSyncDegraded",
    "PmsSyncRolledBack",
    "PmsRetryStorm",
    "PmsSnapshotExpiryClose",
    "PmsPoolWorkersNotReporting",
    "PmsVerifyFoundDifferences",
    "PmsDatabaseTablesFailing",
    "PmsOperatorReconcilesFailing",
    "PmsResourceUndecodable",
    "PmsOperatorDown",
    "PmsWorkerDown",
];

/// prometheus and promtool: `PMS_PROMETHEUS_BIN` (make test sets it), else the cached build.
fn prometheus_bin() -> PathBuf {
    let dir = std::env::var("PMS_PROMETHEUS_BIN").map(PathBuf::from).unwrap_or_else(|_| {
        let out = Command::new(repo_root().join("scripts/prometheus-tools.sh"))
            .output()
            .expect("run scripts/prometheus-tools.sh");
        assert!(
            out.status.success(),
            "Prometheus is needed for this test and scripts/prometheus-tools.sh could not build it:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
    });
    for tool in ["prometheus", "promtool"] {
        assert!(
            dir.join(tool).exists(),
            "{tool} missing in {} (scripts/prometheus-tools.sh builds it)",
            dir.display()
        );
    }
    dir
}

fn helm() -> PathBuf {
    let cached = std::env::var("PMS_K8S_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/pms/k8s/bin")
        })
        .join("helm");
    if cached.exists() {
        cached
    } else {
        PathBuf::from("helm")
    }
}

/// The chart's PrometheusRule, rendered with its default values, as a Prometheus rule file in `dir`.
fn render_rules(dir: &Path) -> PathBuf {
    let out = Command::new(helm())
        .args(["template", "pms"])
        .arg(repo_root().join("charts/paimon-mysql-sync"))
        .args([
            "--set",
            "monitoring.prometheusRule.enabled=true",
            "--show-only",
            "templates/prometheusrule.yaml",
        ])
        .output()
        .expect("run helm (scripts/k8s-tools.sh builds it)");
    assert!(
        out.status.success(),
        "helm template: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rule: serde_yaml::Value =
        serde_yaml::from_slice(&out.stdout).expect("the PrometheusRule is YAML");
    let path = dir.join("rules.yaml");
    std::fs::write(&path, serde_yaml::to_string(&rule["spec"]).unwrap()).unwrap();
    path
}

fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?}:\n{text}");
    text
}

/// A process killed when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `/api/v1/<what>` of the Prometheus on `port`: the JSON answer.
fn api(port: u16, what: &str) -> Json {
    let answer = http::get(port, &format!("/api/v1/{what}")).unwrap_or_default();
    serde_json::from_str(http::body(&answer)).unwrap_or(Json::Null)
}

fn query(port: u16, promql: &str) -> Json {
    api(port, &format!("query?query={}", http::encode(promql)))
}

/// With every monitoring option on, the chart lints and renders the ServiceMonitors, the rule and
/// a dashboard ConfigMap Grafana's sidecar picks up, holding the dashboard as valid JSON.
#[test]
fn the_chart_renders_its_monitoring_objects() {
    let chart = repo_root().join("charts/paimon-mysql-sync");
    let on = "monitoring.serviceMonitor.enabled=true,monitoring.prometheusRule.enabled=true,monitoring.dashboard.enabled=true";
    run_ok(
        Command::new(helm())
            .arg("lint")
            .arg(&chart)
            .args(["--set", on]),
    );
    let rendered = run_ok(
        Command::new(helm())
            .args(["template", "pms"])
            .arg(&chart)
            .args(["--set", on]),
    );
    let docs: Vec<serde_yaml::Value> = serde_yaml::Deserializer::from_str(&rendered)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .collect();
    let of = |kind: &str| {
        docs.iter()
            .filter(|d| d["kind"] == kind)
            .collect::<Vec<_>>()
    };
    assert_eq!(of("ServiceMonitor").len(), 2, "workers and operator");
    assert_eq!(of("PrometheusRule").len(), 1);
    let dashboard = of("ConfigMap")
        .into_iter()
        .find(|d| d["metadata"]["labels"]["grafana_dashboard"] == "1")
        .expect("the dashboard ConfigMap with the sidecar label");
    let json: Json = serde_json::from_str(
        dashboard["data"]["paimon-mysql-sync.json"]
            .as_str()
            .unwrap(),
    )
    .expect("the dashboard is JSON");
    assert_eq!(json["uid"], "paimon-mysql-sync");
}

#[test]
fn alert_rules_pass_promtool_and_their_unit_tests() {
    let bin = prometheus_bin();
    let dir = tempfile::tempdir().unwrap();
    let rules = render_rules(dir.path());
    let checked = run_ok(
        Command::new(bin.join("promtool"))
            .args(["check", "rules"])
            .arg(&rules),
    );
    assert!(
        checked.contains(&format!("SUCCESS: {} rules found", ALERTS.len())),
        "{checked}"
    );
    // The unit tests name `rules.yaml` beside them.
    let tests = dir.path().join("alerts_test.yaml");
    std::fs::copy(
        repo_root().join("tests/prometheus/alerts_test.yaml"),
        &tests,
    )
    .unwrap();
    let tested = run_ok(
        Command::new(bin.join("promtool"))
            .args(["test", "rules"])
            .arg(&tests),
    );
    assert!(tested.contains("SUCCESS"), "{tested}");
    // Every alert has a unit test that fires it, and a runbook section.
    let test_text = std::fs::read_to_string(&tests).unwrap();
    let runbook = std::fs::read_to_string(repo_root().join("docs/operations.md")).unwrap();
    for alert in ALERTS {
        assert!(
            test_text.contains(&format!(
                "alertname: {alert}\n        exp_alerts:\n          - exp_labels"
            )),
            "no firing test of {alert}"
        );
        assert!(
            runbook.contains(&format!("### {alert}\n")),
            "no runbook section for {alert}"
        );
    }
}

#[tokio::test]
async fn prometheus_scrapes_a_worker_and_every_dashboard_query_answers() {
    let bin = prometheus_bin();
    let dir = tempfile::tempdir().unwrap();
    let rules = render_rules(dir.path());

    let t = orders_table(json!({"bucket": "2", "changelog-producer": "input"}), false);
    t.commits(vec![generate(1, 300, "+I", 0)]);
    let db = TestDb::new("monitoring").await;
    db.exec(ORDERS_DDL).await;
    let cfg = SyncConfig::builder(&t, &db)
        .poll_interval(Duration::from_millis(200))
        .checkpoint_interval(Duration::from_millis(500))
        .build();
    let admin = http::free_port();
    let _worker = Killed(cfg.spawn(&["--admin-addr", &format!("127.0.0.1:{admin}")]));

    let port = http::free_port();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global: {{scrape_interval: 1s, evaluation_interval: 1s}}\n\
             rule_files: [{rules}]\n\
             scrape_configs:\n\
             - job_name: pms-worker\n  static_configs:\n  - targets: ['127.0.0.1:{admin}']\n    labels: {{pms_component: worker}}\n",
            rules = rules.display()
        ),
    )
    .unwrap();
    let _prometheus = Killed(
        Command::new(bin.join("prometheus"))
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start prometheus"),
    );

    // Commits while it runs, so rates and the commit → visible histogram have data.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut step = 0;
    loop {
        step += 1;
        t.commits(vec![generate_step(1, 50, 3, "+U", step)]);
        let scraped = query(
            port,
            "pms_commit_to_visible_seconds_count > 0 and on() pms_freshness_seconds >= 0",
        );
        let up = query(port, "up{job=\"pms-worker\"} == 1");
        if non_empty(&scraped) && non_empty(&up) && step >= 3 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus never saw the worker's freshness: {scraped} {up}"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    // Two more scrapes after the last commit, so every rate covers a change.
    tokio::time::sleep(Duration::from_secs(3)).await;

    let dashboard: Json = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("charts/paimon-mysql-sync/files/dashboard.json"))
            .unwrap(),
    )
    .unwrap();
    let panels = dashboard["panels"].as_array().expect("panels");
    assert!(panels.len() >= 10, "a panel per figure the issue names");
    let mut answered = 0;
    for panel in panels {
        for target in panel["targets"].as_array().expect("targets") {
            let expr = target["expr"].as_str().expect("expr");
            let promql = expr
                .replace("$namespace", ".*")
                .replace("$sync", ".*")
                .replace("$__rate_interval", "30s");
            let answer = query(port, &promql);
            assert_eq!(
                answer["status"], "success",
                "panel {:?}: {promql}\n{answer}",
                panel["title"]
            );
            // The operator's figures (phase, verify, database syncs) need the operator;
            // everything else a lone worker exports.
            let of_the_operator = ["pms_sync_phase", "pms_verify_", "pms_database_"];
            if !of_the_operator.iter().any(|m| promql.contains(m)) {
                assert!(
                    non_empty(&answer),
                    "panel {:?} has no data: {promql}\n{answer}",
                    panel["title"]
                );
                answered += 1;
            }
        }
    }
    assert!(answered >= 10, "{answered} queries answered");
    // The template variables' queries too.
    for var in dashboard["templating"]["list"].as_array().unwrap() {
        if let Some(def) = var["definition"].as_str() {
            let metric = def
                .trim_start_matches("label_values(")
                .split([',', '{'])
                .next()
                .unwrap();
            assert!(
                non_empty(&query(port, metric)),
                "variable {}: {metric}",
                var["name"]
            );
        }
    }
    // The rules are loaded, healthy, and a healthy worker fires none of them.
    let loaded = api(port, "rules");
    let names: Vec<&str> = loaded["data"]["groups"][0]["rules"]
        .as_array()
        .map(|rs| rs.iter().filter_map(|r| r["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ALERTS, "{loaded}");
    assert!(
        !loaded.to_string().contains("\"health\":\"err\""),
        "{loaded}"
    );
    // No operator runs here: its absence is the one alert that may show, still pending.
    let firing = api(port, "alerts");
    let alerts = firing["data"]["alerts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        alerts
            .iter()
            .all(|a| a["labels"]["alertname"] == "PmsOperatorDown" && a["state"] == "pending"),
        "{firing}"
    );
}

fn non_empty(answer: &Json) -> bool {
    answer["data"]["result"]
        .as_array()
        .is_some_and(|r| !r.is_empty())
}
