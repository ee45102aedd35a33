//! The test S3 servers (versitygw: bucket `pms`, path-style, access key pms-test): the shared one
//! `scripts/with-s3.sh` starts, or one of a test's own that it can stop and start again. Driven
//! with `curl --aws-sigv4`, as any S3 client would.

use std::path::Path;
use std::process::Command;

use crate::repo_root;

pub const ACCESS_KEY: &str = "pms-test";
pub const SECRET_KEY: &str = "pms-test-secret";
pub const BUCKET: &str = "pms";

/// The credentials, as the worker reads them from its environment.
pub fn env() -> [(&'static str, &'static str); 2] {
    [
        ("AWS_ACCESS_KEY_ID", ACCESS_KEY),
        ("AWS_SECRET_ACCESS_KEY", SECRET_KEY),
    ]
}

pub struct Server {
    pub endpoint: String,
    /// A test's own server: its directory (objects, pid, port), removed on drop.
    own: Option<tempfile::TempDir>,
}

fn script(args: &[&str]) -> String {
    let out = Command::new(repo_root().join("scripts/s3-server.sh"))
        .args(args)
        .output()
        .expect("run scripts/s3-server.sh");
    assert!(
        out.status.success(),
        "s3-server.sh {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

impl Server {
    /// The server `scripts/with-s3.sh` started.
    pub fn shared() -> Self {
        let endpoint = std::env::var("PMS_TEST_S3_ENDPOINT").unwrap_or_else(|_| {
            panic!(
                "PMS_TEST_S3_ENDPOINT is not set: the S3 tests need a real S3 server. Run them with `make test` \
                 (or `scripts/with-s3.sh cargo test`, after `scripts/s3-server.sh build`)."
            )
        });
        Self {
            endpoint,
            own: None,
        }
    }

    /// A server of this test's own (built by `scripts/s3-server.sh build`).
    pub fn own() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let endpoint = script(&["start", dir.path().join("s3").to_str().unwrap()]);
        Self {
            endpoint,
            own: Some(dir),
        }
    }

    fn own_dir(&self) -> String {
        let dir = self
            .own
            .as_ref()
            .expect("only a test's own server can be stopped");
        dir.path().join("s3").display().to_string()
    }

    /// Stops the server (its objects stay), as a store that goes away.
    pub fn halt(&self) {
        script(&["halt", &self.own_dir()]);
    }

    /// Starts it again on the same port, with the same objects.
    pub fn resume(&self) {
        script(&["resume", &self.own_dir()]);
    }

    /// The settings an `s3` block of the config takes for this server.
    pub fn settings(&self) -> serde_json::Value {
        serde_json::json!({"endpoint": self.endpoint, "region": "us-east-1", "pathStyle": true})
    }

    fn curl(&self, args: &[&str]) -> std::process::Output {
        Command::new("curl")
            .args(["-sS", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user"])
            .arg(format!("{ACCESS_KEY}:{SECRET_KEY}"))
            .args(["-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"])
            .args(args)
            .output()
            .expect("run curl")
    }

    fn url(&self, key: &str) -> String {
        format!("{}/{BUCKET}/{key}", self.endpoint)
    }

    /// Uploads every file under `dir` to `<prefix>/<its path under dir>`.
    pub fn upload_dir(&self, dir: &Path, prefix: &str) {
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).expect("read dir") {
                let path = entry.expect("dir entry").path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let rel = path
                    .strip_prefix(dir)
                    .expect("under dir")
                    .display()
                    .to_string();
                let target = self.url(&format!("{prefix}/{rel}"));
                let out = self.curl(&["-f", "-T", path.to_str().unwrap(), &target]);
                assert!(
                    out.status.success(),
                    "upload {rel}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }

    /// The object at `key`, if it exists.
    pub fn get(&self, key: &str) -> Option<String> {
        let out = self.curl(&["-f", &self.url(key)]);
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Writes `body` at `key` unconditionally (another writer, as far as a worker can tell).
    pub fn put(&self, key: &str, body: &str) {
        let out = self.curl(&["-f", "-X", "PUT", "--data-binary", body, &self.url(key)]);
        assert!(
            out.status.success(),
            "put {key}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.own.is_some() {
            let _ = Command::new(repo_root().join("scripts/s3-server.sh"))
                .args(["stop", &self.own_dir()])
                .output();
        }
    }
}
