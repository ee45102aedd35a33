//! Commands from the operator to a running sync's workers, in the ConfigMap `<sync>-control`
//! (key [`CONTROL_KEY`]) that the workers read between snapshots: pause at the end of a
//! snapshot, for a savepoint (a consistent cut of every slot); and, when the sync is deleted
//! with its checkpoints, give up at the stop what the sync holds outside the cluster
//! ([`Control::release_on_stop`]).
//!
//! A pause is taken in two steps: `at: None` pauses each slot at its next snapshot boundary;
//! the operator then sets `at: S` (the highest boundary a slot paused at), and the slots behind
//! move on to the end of S and pause there. A paused slot's checkpoint says so
//! ([`crate::contract::Checkpoint::paused_for`]); the next checkpoint after the pause is lifted
//! drops it.

use serde::{Deserialize, Serialize};

pub const CONTROL_KEY: &str = "control.json";

pub fn control_name(sync: &str) -> String {
    format!("{sync}-control")
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Control {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<PauseRequest>,
    /// The sync is being deleted with its checkpoints: each worker, at its stop (after its
    /// last flush and checkpoint), removes its Paimon consumer (so snapshots expire again) and
    /// the sync's claim of its MySQL table (so a sync of another name may write it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub release_on_stop: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PauseRequest {
    /// Who asks (the savepoint's name); a paused slot's checkpoint names it.
    pub id: String,
    /// Pause at the end of this snapshot; `None`: at the next snapshot boundary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<i64>,
}

impl PauseRequest {
    /// Where a slot that has applied every snapshot through `applied` pauses: `None` when it
    /// must read on first (towards `at`).
    pub fn pauses_at(&self, applied: i64) -> Option<i64> {
        match self.at {
            Some(at) if applied < at => None,
            _ => Some(applied),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_pauses_at_its_boundary_or_reads_on_to_the_cut() {
        let here = PauseRequest {
            id: "sp".into(),
            at: None,
        };
        assert_eq!(here.pauses_at(7), Some(7));
        let at9 = PauseRequest {
            id: "sp".into(),
            at: Some(9),
        };
        assert_eq!(at9.pauses_at(7), None);
        assert_eq!(at9.pauses_at(9), Some(9));
        let control = Control {
            pause: Some(at9),
            ..Default::default()
        };
        let json = serde_json::to_string(&control).unwrap();
        assert_eq!(json, r#"{"pause":{"id":"sp","at":9}}"#);
        let release = Control {
            release_on_stop: true,
            ..Default::default()
        };
        let json = serde_json::to_string(&release).unwrap();
        assert_eq!(json, r#"{"releaseOnStop":true}"#);
        assert_eq!(serde_json::from_str::<Control>(&json).unwrap(), release);
        assert_eq!(
            serde_json::from_str::<Control>("{}").unwrap(),
            Control::default()
        );
    }
}
