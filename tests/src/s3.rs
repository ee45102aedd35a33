//! The test S3 server (started by `scripts/with-s3.sh`: versitygw, bucket `pms`, path-style),
//! driven with `curl --aws-sigv4` as any S3 client would.

use std::path::Path;
use std::process::Command;

pub const ACCESS_KEY: &str = "pms-test";
pub const SECRET_KEY: &str = "pms-test-secret";
pub const BUCKET: &str = "pms";

pub fn endpoint() -> String {
    std::env::var("PMS_TEST_S3_ENDPOINT").unwrap_or_else(|_| {
        panic!(
            "PMS_TEST_S3_ENDPOINT is not set: the S3 tests need a real S3 server. Run them with `make test` \
             (or `scripts/with-s3.sh cargo test`, after `scripts/s3-server.sh build`)."
        )
    })
}

/// The settings an `s3` block of the config takes for the test server.
pub fn settings() -> serde_json::Value {
    serde_json::json!({"endpoint": endpoint(), "region": "us-east-1", "pathStyle": true})
}

/// The credentials, as the worker reads them from its environment.
pub fn env() -> [(&'static str, &'static str); 2] {
    [
        ("AWS_ACCESS_KEY_ID", ACCESS_KEY),
        ("AWS_SECRET_ACCESS_KEY", SECRET_KEY),
    ]
}

fn curl(args: &[&str]) -> std::process::Output {
    Command::new("curl")
        .args(["-sS", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user"])
        .arg(format!("{ACCESS_KEY}:{SECRET_KEY}"))
        .args(["-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"])
        .args(args)
        .output()
        .expect("run curl")
}

fn url(key: &str) -> String {
    format!("{}/{BUCKET}/{key}", endpoint())
}

/// Uploads every file under `dir` to `<prefix>/<its path under dir>`.
pub fn upload_dir(dir: &Path, prefix: &str) {
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
            let out = curl(&[
                "-f",
                "-T",
                path.to_str().unwrap(),
                &url(&format!("{prefix}/{rel}")),
            ]);
            assert!(
                out.status.success(),
                "upload {rel}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// The object at `key`, if it exists.
pub fn get(key: &str) -> Option<String> {
    let out = curl(&["-f", &url(key)]);
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Writes `body` at `key` unconditionally (another writer, as far as a worker can tell).
pub fn put(key: &str, body: &str) {
    let out = curl(&["-f", "-X", "PUT", "--data-binary", body, &url(key)]);
    assert!(
        out.status.success(),
        "put {key}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
