//! `pms-operator`: reconciles `PaimonMysqlSync` resources into per-slot worker Deployments.
//!
//! A reconcile is split as in stackable's operators: validate (the spec and what it refers to)
//! → build (pure functions: desired objects) → apply (server-side apply, stale objects deleted)
//! → status (from Deployments and the workers' checkpoint ConfigMaps).

pub mod context;
pub mod error;
pub mod reconcile;
