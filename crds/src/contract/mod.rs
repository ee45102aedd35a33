//! The worker ↔ operator contract: every name, label, key, environment variable and
//! checkpoint field that both sides read or write. Both crates import it, so a drift between
//! what the operator builds and what the worker expects is a compile error, not a silent miss.

mod belongs_to;
mod checkpoint;
mod control;
mod env;
mod names;
mod reports;
mod rescale;
mod slot;

pub use belongs_to::{BelongsTo, SnapshotIdentity, SourceIdentity, TargetIdentity};
pub use checkpoint::{
    from_wire_columns, wire_columns, Checkpoint, FullReadProgress, Position, ReadPoint, RescaleBase,
};
pub use control::*;
pub use env::*;
pub use names::*;
pub use reports::*;
pub use rescale::{rescale_base, RescaleError};
pub use slot::{Slot, SlotError};
