//! `pms-operator`: reconciles `PaimonMysqlSync` resources into per-slot worker Deployments.
//!
//! A reconcile is split as in stackable's operators: dereference (fetch what the resource
//! refers to) → validate (pure) → build (pure: desired objects) → apply (server-side apply,
//! objects no longer wanted deleted) → status (pure, from Deployments and checkpoints).

pub mod context;
pub mod crds;
pub mod database;
pub mod error;
pub mod leadership;
pub mod orphan_savepoints;
pub mod reconcile;
pub mod restart_gate;
pub mod s3_watch;
pub mod triggers;
pub mod undecodable;
pub mod watch_keys;
