//! API types of `PaimonMysqlSync` (group `paimonsync.io`, version `v1alpha1`).
//!
//! One schema serves both the custom resource and the standalone worker's YAML file
//! (see DESIGN.md §4); the worker reads `spec` alone, or a whole resource.

mod duration;
mod spec;
mod status;

pub use duration::HumanDuration;
pub use spec::*;
pub use status::*;
