//! A rescale of a running sync at a consistent cut, decided without side effects (part of step
//! 3). The old slots keep running with the old parallelism while they pause at the end of one
//! snapshot S (the pause protocol of `<sync>-control`); then the Deployments get the new
//! parallelism, the new slots start exactly at S (with exactly-once, the first of them hands the
//! progress rows over in one transaction) and pause there too; once all did, the pause is lifted.
//! No replay from the lowest old checkpoint, and exactly-once syncs can rescale.

use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::runtime::events::EventType;
use pms_crds::contract::{Checkpoint, Control, PauseRequest, Position, ReadPoint};
use pms_crds::{PaimonMysqlSync, RescalePhase, RescaleStatus};

use super::time::seconds;

/// A rescale whose slots do not all reach the cut in this long goes on without it.
pub const RESCALE_TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Debug, PartialEq)]
pub struct RescalePlan {
    /// The parallelism to build the Deployments with.
    pub slots: u32,
    /// The pause a rescale asks for, if one runs.
    pub control: Option<Control>,
    pub status: Option<RescaleStatus>,
    pub events: Vec<(EventType, &'static str, String)>,
}

impl RescalePlan {
    fn of(
        slots: u32,
        control: Option<Control>,
        status: Option<RescaleStatus>,
        events: Vec<(EventType, &'static str, String)>,
    ) -> Self {
        Self {
            slots,
            control,
            status,
            events,
        }
    }

    /// Leave the Deployments and the worker config as they are: the old workers are pausing at
    /// the cut.
    pub fn hold(&self) -> bool {
        self.status
            .as_ref()
            .is_some_and(|r| r.phase == RescalePhase::Cutting)
    }
}

/// Where the slots `0..slots` (checkpoints written for that parallelism) paused for `id`; the cut
/// once all paused at the same snapshot's end. Returns `(highest paused, all at it)`.
pub fn paused_at(checkpoints: &[Option<&Checkpoint>], slots: u32, id: &str) -> (Option<i64>, bool) {
    paused_after(checkpoints, slots, id, &[])
}

/// The same, counting slot k only with an epoch above `epochs[k]` (a worker started since).
fn paused_after(
    checkpoints: &[Option<&Checkpoint>],
    slots: u32,
    id: &str,
    epochs: &[u64],
) -> (Option<i64>, bool) {
    let paused: Vec<Option<i64>> = (0..slots as usize)
        .map(|k| {
            let cp = checkpoints.get(k).copied().flatten()?;
            if epochs.get(k).is_some_and(|&old| cp.epoch <= old) {
                return None;
            }
            let at_boundary =
                matches!(cp.point, ReadPoint::Changes { at, .. } if at == Position::START);
            (cp.slot.count == slots && at_boundary && cp.paused_for.as_deref() == Some(id))
                .then(|| cp.point.next_snapshot() - 1)
        })
        .collect();
    let high = paused.iter().flatten().max().copied();
    (high, high.is_some() && paused.iter().all(|p| *p == high))
}

/// The Events of a restart at a cut: started, cut taken, done, gave up on the cut.
fn event_names(r: &RescaleStatus) -> [&'static str; 4] {
    if r.reason == UPGRADE {
        [
            "UpgradeStarted",
            "UpgradeCut",
            "Upgraded",
            "UpgradeWithoutCut",
        ]
    } else {
        [
            "RescaleStarted",
            "RescaleCut",
            "Rescaled",
            "RescaleWithoutCut",
        ]
    }
}

const UPGRADE: &str = "upgrade";

/// `checkpoints[k]`: slot k's (any parallelism); `running`: the sync is `Running` and no
/// rebuild holds it; `upgrade`: what the Deployments run changed and `spec.upgradeMode` is
/// `savepoint`.
pub fn plan(
    pms: &PaimonMysqlSync,
    checkpoints: &[Option<&Checkpoint>],
    running: bool,
    upgrade: bool,
    now: Timestamp,
) -> RescalePlan {
    let wanted = pms.spec.parallelism;
    let status = pms.status.as_ref();
    let applied = status.and_then(|s| s.parallelism).unwrap_or(wanted);
    let previous = status.and_then(|s| s.rescale.clone());
    let mut events = Vec::new();
    let active = previous
        .clone()
        .filter(|r| matches!(r.phase, RescalePhase::Cutting | RescalePhase::Starting));
    let Some(mut r) = active else {
        if applied == wanted && !upgrade || !running {
            return RescalePlan::of(wanted, None, previous, events);
        }
        let reason = if applied == wanted {
            UPGRADE
        } else {
            "parallelism"
        };
        let r = RescaleStatus {
            id: format!("{reason}-{}", now.as_second()),
            reason: reason.to_string(),
            from: applied,
            to: wanted,
            phase: RescalePhase::Cutting,
            snapshot_id: None,
            cut_epochs: Vec::new(),
            started_at: seconds(now),
            took: None,
            message: None,
        };
        let what = if reason == UPGRADE {
            "the workers' spec changed (upgradeMode: savepoint)".to_string()
        } else {
            format!("{applied} → {wanted} slots")
        };
        events.push((
            EventType::Normal,
            event_names(&r)[0],
            format!("{what}: pausing every slot at the end of one snapshot first"),
        ));
        return RescalePlan::of(applied, Some(pause(&r.id, None)), Some(r), events);
    };
    let names = event_names(&r);
    let started = r.started_at.parse::<Timestamp>().ok();
    let elapsed = started.map(|s| now.duration_since(s));
    let timeout = SignedDuration::try_from(RESCALE_TIMEOUT).unwrap_or(SignedDuration::MAX);
    let late = elapsed.is_some_and(|e| e > timeout);
    if r.phase == RescalePhase::Starting && late {
        // The cut is taken: every new slot starts at its end whenever its pod comes (the
        // rescale base), so the pause is lifted for those there; nothing falls back.
        r.phase = RescalePhase::Done;
        r.message = Some(format!(
            "not every new worker was at the end of snapshot {} within {}s: the pause is lifted, and each \
             slot still to come starts there",
            r.snapshot_id.unwrap_or_default(),
            RESCALE_TIMEOUT.as_secs()
        ));
        events.push((
            EventType::Warning,
            names[2],
            r.message.clone().unwrap_or_default(),
        ));
        return RescalePlan::of(r.to, None, Some(r), events);
    }
    if r.phase == RescalePhase::Cutting && (!running || late) {
        let why = if running {
            format!(
                "the slots did not all reach one snapshot's end within {}s",
                RESCALE_TIMEOUT.as_secs()
            )
        } else {
            "the sync stopped running".to_string()
        };
        r.phase = RescalePhase::Failed;
        r.message = Some(format!(
            "{why}: rescaled from the lowest old checkpoint instead (replayed, idempotent)"
        ));
        events.push((
            EventType::Warning,
            names[3],
            r.message.clone().unwrap_or_default(),
        ));
        return RescalePlan::of(r.to, None, Some(r), events);
    }
    match r.phase {
        RescalePhase::Cutting => {
            let (high, all) = paused_at(checkpoints, r.from, &r.id);
            if let (Some(cut), true) = (high, all) {
                r.phase = RescalePhase::Starting;
                r.snapshot_id = Some(cut);
                if r.from == r.to {
                    r.cut_epochs = (0..r.from as usize)
                        .map(|k| checkpoints.get(k).copied().flatten().map_or(0, |c| c.epoch))
                        .collect();
                }
                events.push((
                    EventType::Normal,
                    names[1],
                    format!(
                        "every old worker at the end of snapshot {cut}: starting {} new ones there",
                        r.to
                    ),
                ));
                return RescalePlan::of(r.to, Some(pause(&r.id, Some(cut))), Some(r), events);
            }
            RescalePlan::of(r.from, Some(pause(&r.id, high)), Some(r), events)
        }
        _ => {
            let cut = r.snapshot_id;
            let (high, all) = paused_after(checkpoints, r.to, &r.id, &r.cut_epochs);
            if all && high == cut {
                let took = elapsed.map_or(0.0, |e| e.as_secs_f64());
                r.phase = RescalePhase::Done;
                r.took = Some(format!("{took:.1}s"));
                events.push((
                    EventType::Normal,
                    names[2],
                    format!(
                        "{} at the end of snapshot {} in {took:.1} s (pause asked → every new worker there)",
                        if r.reason == UPGRADE {
                            "the new workers started".to_string()
                        } else {
                            format!("{} → {} slots", r.from, r.to)
                        },
                        cut.unwrap_or_default()
                    ),
                ));
                return RescalePlan::of(r.to, None, Some(r), events);
            }
            RescalePlan::of(r.to, Some(pause(&r.id, cut)), Some(r), events)
        }
    }
}

fn pause(id: &str, at: Option<i64>) -> Control {
    Control {
        pause: Some(PauseRequest {
            id: id.to_string(),
            at,
        }),
        ..Default::default()
    }
}

#[cfg(test)]
pub(crate) mod tests;
