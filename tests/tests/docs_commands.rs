//! The standalone commands the README and the guide show, run as written on a machine like a
//! new reader's: a fresh MariaDB of their own (no `pms` user yet) reached by `mysql -u root`,
//! the repository's examples, the worker on the PATH. What stands in for the reader's machine
//! is in the prelude: `mysql` talks to this server, and the test build's worker stands in for
//! `cargo build --release` (a half-hour build; `make release` and the demo build it).

use std::path::{Path, PathBuf};
use std::process::Command;

use pms_tests::docs;
use pms_tests::repo_root;
use pms_tests::worker::worker_bin;

/// A MariaDB server of this test alone, stopped when dropped.
struct Server {
    dir: PathBuf,
    port: String,
}

impl Server {
    fn start(dir: PathBuf) -> Self {
        let out = Command::new(repo_root().join("scripts/mariadb.sh"))
            .args(["start", dir.to_str().unwrap()])
            .output()
            .expect("run scripts/mariadb.sh");
        assert!(
            out.status.success(),
            "scripts/mariadb.sh start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Server { dir, port }
    }

    fn socket(&self) -> PathBuf {
        self.dir.join("mysqld.sock")
    }

    /// `mariadb -u root` on its socket.
    fn root_sql(&self, sql: &str) -> String {
        let out = Command::new("mariadb")
            .args(["--no-defaults", "-uroot", "-N"])
            .arg(format!("--socket={}", self.socket().display()))
            .args(["-e", sql])
            .output()
            .expect("mariadb client");
        assert!(
            out.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new(repo_root().join("scripts/mariadb.sh"))
            .args(["stop", self.dir.to_str().unwrap()])
            .output();
    }
}

/// The reader's checkout as far as the commands touch it: examples/, with the config on this
/// server's port (the sample warehouse is copied: the worker writes its consumer file there).
fn checkout(work: &Path, port: &str) {
    let examples = work.join("examples");
    std::fs::create_dir_all(&examples).unwrap();
    let copied = Command::new("cp")
        .arg("-r")
        .arg(repo_root().join("examples/warehouse"))
        .arg(repo_root().join("examples/orders.sql"))
        .arg(&examples)
        .status()
        .unwrap();
    assert!(copied.success(), "copy examples/");
    let config = std::fs::read_to_string(repo_root().join("examples/sync.yaml")).unwrap();
    assert!(
        config.contains("127.0.0.1:3306"),
        "examples/sync.yaml names 127.0.0.1:3306"
    );
    std::fs::write(
        examples.join("sync.yaml"),
        config.replace("127.0.0.1:3306", &format!("127.0.0.1:{port}")),
    )
    .unwrap();
}

#[test]
fn the_standalone_quick_start_and_the_pre_flight_run_as_written() {
    let work = tempfile::tempdir().unwrap();
    let server = Server::start(work.path().join("mariadb"));
    // A fresh server: the quick start creates its user itself.
    server.root_sql("DROP USER 'pms'@'%'");
    checkout(work.path(), &server.port);
    let prelude = format!(
        "mysql() {{ mariadb --no-defaults --socket='{}' \"$@\"; }}\nexport PATH='{}':\"$PATH\"",
        server.socket().display(),
        worker_bin().parent().unwrap().display()
    );

    let quick_start: Vec<String> = docs::run_block(
        "README.md",
        "pms-worker run --config examples/sync.yaml --once",
    )
    .into_iter()
    .filter(|c| !c.starts_with("cargo build"))
    .collect();
    assert!(quick_start.len() >= 5, "{quick_start:?}");
    let outputs = docs::run_commands(work.path(), &prelude, &quick_start);
    let rows: u64 = server
        .root_sql("SELECT COUNT(*) FROM demo.orders")
        .parse()
        .unwrap();
    assert!(rows > 0, "the quick start synced no row");
    let verify = outputs.last().unwrap();
    assert!(
        verify.contains(&format!("Paimon {rows} rows, MySQL {rows} rows")),
        "the quick start's verify finds MySQL equal to Paimon: {verify}"
    );

    // The pre-flight commands of the first-sync chapter, on the same config.
    let preflight = docs::run_block("docs/first-sync.md", "pms-worker check");
    let outputs = docs::run_commands(&work.path().join("examples"), &prelude, &preflight);
    let json_at = outputs[1]
        .find('{')
        .unwrap_or_else(|| panic!("`--output json` printed no JSON: {}", outputs[1]));
    let json: serde_json::Value = serde_json::Deserializer::from_str(&outputs[1][json_at..])
        .into_iter()
        .next()
        .expect("a JSON value")
        .unwrap_or_else(|e| panic!("`--output json`: {e}: {}", outputs[1]));
    assert!(json.is_object(), "{json}");
    assert!(
        outputs[2].contains("at 80000 rows/s"),
        "the full-load rate the check was given is in its answer: {}",
        outputs[2]
    );
    // Run beside its config (`--config sync.yaml`), the worker finds the checkpoint there.
    assert!(
        outputs[0].contains("resumes its checkpoint"),
        "the check sees the quick start's checkpoint: {}",
        outputs[0]
    );
}
