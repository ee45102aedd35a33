//! Test harness: a real MariaDB (started by `scripts/with-mariadb.sh`), Paimon tables written
//! by Apache Paimon's own Java implementation (`scripts/paimon-java.sh`), the worker binary, and a
//! real S3 server (`scripts/with-s3.sh`).
//!
//! The core check of every scenario: after the worker caught up to snapshot S, the MySQL table
//! (`SELECT … ORDER BY key`) equals the reference reader's batch read of S, value by value.

pub mod bench;
pub mod compare;
pub mod config;
pub mod docs;
pub mod fixtures;
pub mod http;
pub mod kube;
pub mod mysql;
pub mod paimon;
pub mod s3;
pub mod worker;

use std::path::PathBuf;

/// The repository root (tests run with the package dir as cwd).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// Where slow-to-make things are kept between runs (`~/.cache/pms`, as the scripts use).
pub fn cache_dir() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join(".cache/pms")
}
