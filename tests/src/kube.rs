//! The test API server (started by `scripts/with-kube-apiserver.sh`), driven with the real
//! `kubectl` and `helm`, as a user would.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

pub fn kubeconfig() -> String {
    std::env::var("PMS_TEST_KUBECONFIG").unwrap_or_else(|_| {
        panic!(
            "PMS_TEST_KUBECONFIG is not set: the operator tests need a real kube-apiserver. Run them with \
             `make test` (or `scripts/with-kube-apiserver.sh cargo test`), which builds and starts one."
        )
    })
}

/// The built tool `name` (kubectl, helm, actionlint: `$PMS_K8S_BIN/<name>`), else `name` on PATH.
pub fn tool(name: &str) -> PathBuf {
    let bin = std::env::var("PMS_K8S_BIN")
        .map(PathBuf::from)
        .ok()
        .map(|d| d.join(name))
        .filter(|p| p.exists());
    bin.unwrap_or_else(|| PathBuf::from(name))
}

/// Shell lines that give a documented command this API server and the built `kubectl`/`helm`.
pub fn shell_prelude() -> String {
    let tools = std::env::var("PMS_K8S_BIN").unwrap_or_default();
    format!(
        "export KUBECONFIG='{}'\nexport PATH='{tools}':\"$PATH\"",
        kubeconfig()
    )
}

fn run(cmd: &mut Command, stdin: Option<&str>) -> Output {
    use std::io::Write;
    cmd.env("KUBECONFIG", kubeconfig());
    if let Some(input) = stdin {
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    } else {
        cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
    }
}

/// `kubectl ARGS` that must succeed; returns stdout.
pub fn kubectl(args: &[&str]) -> String {
    let out = kubectl_output(args, None);
    assert!(
        out.status.success(),
        "kubectl {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn kubectl_output(args: &[&str], stdin: Option<&str>) -> Output {
    run(Command::new(tool("kubectl")).args(args), stdin)
}

/// `kubectl pms ARGS`, the plugin found on the PATH as kubectl finds any plugin.
fn plugin_command(args: &[&str]) -> Command {
    let plugin = crate::worker::workspace_bin("kubectl-pms");
    let dir = plugin.parent().expect("the plugin's directory");
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new(tool("kubectl"));
    cmd.arg("pms").args(args).env("PATH", path);
    cmd
}

/// A `kubectl pms` command that runs until stopped (`status --watch`, `logs -f`): what it
/// printed (stdout and stderr) in `for_`, after which it is killed (kubectl execs the plugin, so
/// the kill reaches it).
pub fn kubectl_pms_streaming(args: &[&str], for_: std::time::Duration) -> String {
    let out = tempfile::NamedTempFile::new().expect("a file for its output");
    let mut child = plugin_command(args)
        .env("KUBECONFIG", kubeconfig())
        .stdout(out.reopen().expect("reopen"))
        .stderr(out.reopen().expect("reopen"))
        .spawn()
        .expect("start kubectl pms");
    std::thread::sleep(for_);
    let _ = child.kill();
    let _ = child.wait();
    std::fs::read_to_string(out.path()).expect("its output")
}

/// `kubectl pms ARGS`: its output (stdout, or stderr when it failed) and whether it succeeded.
pub fn kubectl_pms(args: &[&str]) -> (bool, String) {
    let out = run(&mut plugin_command(args), None);
    let text = if out.status.success() {
        &out.stdout
    } else {
        &out.stderr
    };
    (
        out.status.success(),
        String::from_utf8_lossy(text).into_owned(),
    )
}

/// `kubectl apply -f -` of a manifest; returns the whole output (callers check success).
pub fn apply(manifest: &str) -> Output {
    kubectl_output(&["apply", "-f", "-"], Some(manifest))
}

/// `kubectl apply -f -` of a manifest that must be accepted (the server's refusal in the panic).
pub fn apply_ok(manifest: &str) {
    let out = apply(manifest);
    assert!(
        out.status.success(),
        "kubectl apply: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A MySQL user `user` with every right on `db`'s database, and the Secret `mysql-writer`
/// (keys `username`, `password`) in namespace `ns` that names it.
pub async fn mysql_writer_secret(db: &crate::mysql::TestDb, ns: &str, user: &str, password: &str) {
    db.exec(&format!(
        "CREATE USER IF NOT EXISTS '{user}'@'%' IDENTIFIED BY '{password}'"
    ))
    .await;
    db.exec(&format!("GRANT ALL ON `{}`.* TO '{user}'@'%'", db.name))
        .await;
    writer_secret(ns, user, password);
}

/// The Secret `mysql-writer` (keys `username`, `password`) in namespace `ns`.
pub fn writer_secret(ns: &str, user: &str, password: &str) {
    kubectl(&[
        "create",
        "secret",
        "generic",
        "mysql-writer",
        "-n",
        ns,
        &format!("--from-literal=username={user}"),
        &format!("--from-literal=password={password}"),
    ]);
}

pub fn helm(args: &[&str]) -> String {
    let out = run(Command::new(tool("helm")).args(args), None);
    assert!(
        out.status.success(),
        "helm {}: {}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// An object as JSON, or None when it doesn't exist.
pub fn get(kind: &str, name: &str, namespace: &str) -> Option<Json> {
    let out = kubectl_output(&["get", kind, name, "-n", namespace, "-o", "json"], None);
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).expect("kubectl JSON"))
}

/// `kubectl get --watch` of the objects of `kind` matching `selector`: every version of them the
/// API server sends until [`Watch::stop`] (a poll would miss a pod's last status before it goes).
/// A thread reads kubectl's output as it comes: a full pipe would stop kubectl reading the watch.
pub struct Watch {
    kubectl: std::process::Child,
    reader: std::thread::JoinHandle<Vec<u8>>,
}

impl Watch {
    pub fn start(kind: &str, namespace: &str, selector: &str) -> Watch {
        let mut cmd = Command::new(tool("kubectl"));
        cmd.args([
            "get", kind, "-n", namespace, "-l", selector, "--watch", "-o", "json",
        ])
        .env("KUBECONFIG", kubeconfig())
        .stdout(std::process::Stdio::piped());
        let mut kubectl = cmd.spawn().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
        let mut stdout = kubectl.stdout.take().expect("piped stdout");
        let reader = std::thread::spawn(move || {
            let mut out = Vec::new();
            let _ = std::io::Read::read_to_end(&mut stdout, &mut out);
            out
        });
        Watch { kubectl, reader }
    }

    /// Every object seen, oldest first.
    pub fn stop(mut self) -> Vec<Json> {
        let _ = self.kubectl.kill();
        let _ = self.kubectl.wait();
        let out = self.reader.join().expect("the watch reader");
        serde_json::Deserializer::from_slice(&out)
            .into_iter::<Json>()
            .map_while(Result::ok)
            .collect()
    }
}

pub fn list(kind: &str, namespace: &str, selector: &str) -> Vec<Json> {
    let out = kubectl(&["get", kind, "-n", namespace, "-l", selector, "-o", "json"]);
    let v: Json = serde_json::from_str(&out).unwrap();
    v["items"].as_array().cloned().unwrap_or_default()
}

/// Polls `f` until it returns Some, or fails with `what` after `timeout`.
pub async fn wait_for<T>(what: &str, timeout: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The status of the `PaimonMysqlSync` `ns/name` (`Null` while it has none).
pub fn sync_status(ns: &str, name: &str) -> Json {
    get("pms", name, ns)
        .map(|p| p["status"].clone())
        .unwrap_or(Json::Null)
}

/// Field `field` (`reason`, `message`) of namespace `ns`'s events that `selector` (a field
/// selector: `reason=X`, `involvedObject.name=Y`) picks, one per line.
pub fn events(ns: &str, selector: &str, field: &str) -> String {
    kubectl(&[
        "get",
        "events",
        "-n",
        ns,
        "--field-selector",
        selector,
        "-o",
        &format!("jsonpath={{range .items[*]}}{{.{field}}}{{\"\\n\"}}{{end}}"),
    ])
}

/// Now, as RFC 3339 UTC seconds (as a worker writes its reports).
pub fn utc_now() -> String {
    let date = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .expect("run date");
    String::from_utf8_lossy(&date.stdout).trim().to_string()
}

/// The status condition of `type`, or Null.
pub fn condition(status: &Json, type_: &str) -> Json {
    status["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .cloned()
        .unwrap_or(Json::Null)
}

/// Polls that status until `f` holds (at most `timeout`); returns it.
pub async fn wait_sync_status(
    ns: &str,
    name: &str,
    what: &str,
    timeout: Duration,
    f: impl Fn(&Json) -> bool,
) -> Json {
    wait_for(what, timeout, || {
        let s = sync_status(ns, name);
        f(&s).then_some(s)
    })
    .await
}

/// Merge-patches the `PaimonMysqlSync` `ns/name`.
pub fn patch_sync(ns: &str, name: &str, patch: &Json) {
    kubectl(&[
        "patch",
        "pms",
        name,
        "-n",
        ns,
        "--type=merge",
        "-p",
        &patch.to_string(),
    ]);
}
