//! `pms-worker`: keeps one MySQL table equal to one Apache Paimon primary-key table.
//!
//! source (Paimon read) → decode → buffer (reduce by key) → sink (MySQL transaction) → checkpoint.

pub mod admin;
pub mod buffer;
pub mod checkpoint;
pub mod config;
pub mod convert;
pub mod error;
pub mod failpoint;
pub mod metrics;
pub mod pipeline;
pub mod progress;
pub mod sink;
pub mod source;
