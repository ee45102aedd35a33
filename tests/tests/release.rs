//! The release (`scripts/release.sh`, `.github/workflows/release.yml`), up to the push: `make
//! test` packages the test build as the workflow packages the release build (`PMS_RELEASE_DIR`),
//! and this checks what came out. The chart package itself is installed by the real-cluster test.

use std::path::{Path, PathBuf};
use std::process::Command;

use pms_tests::kube::tool;
use pms_tests::repo_root;
use pms_tests::worker::workspace_bin;

/// The dry run's output (`make test`: `PMS_RELEASE_DIR`), else one made here from the test build.
fn release_dir() -> (PathBuf, Option<tempfile::TempDir>) {
    if let Ok(dir) = std::env::var("PMS_RELEASE_DIR") {
        return (PathBuf::from(dir), None);
    }
    let tmp = tempfile::tempdir().unwrap();
    let bins = workspace_bin("pms-worker").parent().unwrap().to_path_buf();
    for args in [
        vec![
            "binaries",
            bins.to_str().unwrap(),
            tmp.path().to_str().unwrap(),
        ],
        vec!["chart", tmp.path().to_str().unwrap()],
        vec!["finish", tmp.path().to_str().unwrap()],
    ] {
        let out = release(&args);
        assert!(
            out.status.success(),
            "release.sh {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    (tmp.path().to_path_buf(), Some(tmp))
}

fn release(args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(repo_root().join("scripts/release.sh"));
    if let Ok(bin) = std::env::var("PMS_K8S_BIN") {
        cmd.env("PMS_HELM", Path::new(&bin).join("helm"));
    }
    cmd.args(args).output().expect("run scripts/release.sh")
}

fn workspace_version() -> String {
    let toml = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    toml.lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("the workspace version")
        .to_string()
}

#[test]
fn the_release_workflow_passes_actionlint() {
    let out = Command::new(tool("actionlint"))
        .arg("-no-color")
        .arg(repo_root().join(".github/workflows/release.yml"))
        .output()
        .expect("run actionlint (scripts/k8s-tools.sh builds it; make test sets PMS_K8S_BIN)");
    assert!(
        out.status.success(),
        "actionlint: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every archive is in SHA256SUMS and matches it; the krew manifest names this platform's
/// kubectl-pms archive with that checksum, at the release's URL; the chart package is there;
/// each archive holds its binary alone.
#[test]
fn the_packages_are_checksummed_and_the_krew_manifest_names_them() {
    let (dir, _keep) = release_dir();
    let version = workspace_version();
    let check = Command::new("sha256sum")
        .arg("-c")
        .arg("SHA256SUMS")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "sha256sum -c: {}",
        String::from_utf8_lossy(&check.stdout)
    );
    let sums = std::fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    let platform = format!(
        "linux-{}",
        if cfg!(target_arch = "x86_64") {
            "amd64"
        } else {
            "arm64"
        }
    );
    for name in [
        format!("pms-worker-{platform}.tar.gz"),
        format!("kubectl-pms-{platform}.tar.gz"),
        "krew.yaml".to_string(),
    ] {
        assert!(
            sums.lines().any(|l| l.ends_with(&format!("  {name}"))),
            "{name} in SHA256SUMS: {sums}"
        );
    }
    assert!(
        sums.lines()
            .any(|l| l.contains("  paimon-mysql-sync-") && l.ends_with(".tgz")),
        "the chart package in SHA256SUMS: {sums}"
    );
    let listing = Command::new("tar")
        .arg("-tzf")
        .arg(dir.join(format!("kubectl-pms-{platform}.tar.gz")))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&listing.stdout).trim(),
        "kubectl-pms"
    );

    let krew: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(dir.join("krew.yaml")).unwrap()).unwrap();
    assert_eq!(
        krew["spec"]["version"].as_str(),
        Some(format!("v{version}").as_str())
    );
    let platforms = krew["spec"]["platforms"].as_sequence().expect("platforms");
    let ours = platforms
        .iter()
        .find(|p| {
            format!(
                "{}-{}",
                p["selector"]["matchLabels"]["os"].as_str().unwrap_or(""),
                p["selector"]["matchLabels"]["arch"].as_str().unwrap_or("")
            ) == platform
        })
        .expect("this platform in the krew manifest");
    let sha = sums
        .lines()
        .find(|l| l.ends_with(&format!("  kubectl-pms-{platform}.tar.gz")))
        .and_then(|l| l.split_whitespace().next())
        .unwrap();
    assert_eq!(ours["sha256"].as_str(), Some(sha));
    assert_eq!(
        ours["uri"].as_str(),
        Some(format!("https://github.com/paimon-mysql-sync/paimon-mysql-sync/releases/download/v{version}/kubectl-pms-{platform}.tar.gz").as_str())
    );
    assert_eq!(ours["bin"].as_str(), Some("kubectl-pms"));
}

/// A tag is released only when it is the workspace's version, the chart's appVersion and has a
/// CHANGELOG section.
#[test]
fn a_tag_is_released_only_at_the_versions_it_names() {
    let version = workspace_version();
    let ok = release(&["check-tag", &format!("v{version}")]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let wrong = release(&["check-tag", "v99.0.0"]);
    assert!(!wrong.status.success());
    assert!(String::from_utf8_lossy(&wrong.stderr).contains(&format!("not v{version}")));
}
