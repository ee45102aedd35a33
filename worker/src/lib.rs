//! `pms-worker`: keeps one MySQL table equal to one Apache Paimon primary-key table.
//!
//! The stages, each handing its product forward and never reaching back:
//! source (Paimon reads) → mapping (layout, decode) → buffer (reduce by key) → sink (MySQL
//! transactions) → checkpoint; `pipeline` runs them for one slot. `verify` compares the
//! target with a snapshot, and `rebuild` loads a new generation beside it and swaps it in,
//! both with the same stages.

pub mod buffer;
pub mod check;
pub mod checkpoint;
pub mod config;
pub mod database;
pub mod error;
pub mod eta;
pub mod failpoint;
pub mod generation;
pub mod mapping;
pub mod metrics;
pub mod pipeline;
pub mod rebuild;
pub mod report_configmap;
pub mod reset;
pub mod restore;
pub mod sink;
pub mod source;
pub mod target_layout;
pub mod verify;
