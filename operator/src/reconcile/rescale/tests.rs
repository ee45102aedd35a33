//! Rescale decisions over a sequence of reconciles, without a cluster.

use super::*;
use pms_crds::contract::Slot;
use pms_crds::PaimonMysqlSyncStatus;

fn sync(parallelism: u32, applied: u32) -> PaimonMysqlSync {
    let spec = serde_yaml::from_str(&format!(
        "source: {{warehouse: /wh, database: d, table: t}}\nsink: {{url: 'mysql://h/db', table: t}}\nparallelism: {parallelism}\n"
    ))
    .unwrap();
    let mut pms = PaimonMysqlSync::new("s", spec);
    pms.status = Some(PaimonMysqlSyncStatus {
        parallelism: Some(applied),
        ..Default::default()
    });
    pms
}

fn cp(slot: u32, slots: u32, done: i64, paused: Option<&str>) -> Checkpoint {
    paused_checkpoint(slot, slots, done, paused)
}

/// Slot `slot` of `slots`, done through `done` (at the end of that snapshot), paused for `paused`.
pub(crate) fn paused_checkpoint(
    slot: u32,
    slots: u32,
    done: i64,
    paused: Option<&str>,
) -> Checkpoint {
    Checkpoint {
        sync: "s".into(),
        slot: Slot::new(slot, slots).unwrap(),
        point: ReadPoint::Changes {
            next_snapshot: done + 1,
            at: Position::START,
        },
        epoch: 1,
        updated: "t".into(),
        latest_snapshot: Some(done),
        rescaled_from: None,
        paused_for: paused.map(String::from),
        belongs_to: None,
        sweep: false,
        full_read: None,
    }
}

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

#[test]
fn the_old_slots_pause_at_one_cut_then_the_new_ones_start_there() {
    let mut pms = sync(3, 2);
    let t0 = at("2026-11-30T10:00:00Z");
    let p = plan(&pms, &[None, None], true, false, t0);
    assert_eq!(p.slots, 2, "the old Deployments stay until the cut");
    let id = p.status.clone().unwrap().id;
    assert_eq!(p.control.clone().unwrap().pause.unwrap().at, None);
    pms.status.as_mut().unwrap().rescale = p.status;

    let (a, b) = (cp(0, 2, 5, Some(&id)), cp(1, 2, 7, Some(&id)));
    let p = plan(&pms, &[Some(&a), Some(&b)], true, false, t0);
    assert_eq!(
        (p.slots, p.control.unwrap().pause.unwrap().at),
        (2, Some(7))
    );

    let a = cp(0, 2, 7, Some(&id));
    let p = plan(&pms, &[Some(&a), Some(&b)], true, false, t0);
    let r = p.status.clone().unwrap();
    assert_eq!(
        (p.slots, r.phase, r.snapshot_id),
        (3, RescalePhase::Starting, Some(7))
    );
    assert_eq!(
        p.control.unwrap().pause.unwrap().at,
        Some(7),
        "the new slots pause at the cut too"
    );
    pms.status.as_mut().unwrap().rescale = p.status;

    // Two of three new slots there.
    let (n0, n1) = (cp(0, 3, 7, Some(&id)), cp(1, 3, 7, Some(&id)));
    let p = plan(&pms, &[Some(&n0), Some(&n1), Some(&b)], true, false, t0);
    assert!(p.control.is_some());
    let n2 = cp(2, 3, 7, Some(&id));
    let p = plan(
        &pms,
        &[Some(&n0), Some(&n1), Some(&n2)],
        true,
        false,
        at("2026-11-30T10:00:09Z"),
    );
    let r = p.status.unwrap();
    assert_eq!(
        (r.phase, r.took.as_deref()),
        (RescalePhase::Done, Some("9.0s"))
    );
    assert_eq!((p.slots, p.control), (3, None));
    assert_eq!(p.events[0].1, "Rescaled");
}

#[test]
fn a_stopped_sync_rescales_at_once_and_a_missed_cut_falls_back() {
    assert_eq!(
        plan(&sync(3, 2), &[], false, false, at("2026-11-30T10:00:00Z")).slots,
        3
    );
    let mut pms = sync(1, 2);
    let p = plan(&pms, &[], true, false, at("2026-11-30T10:00:00Z"));
    pms.status.as_mut().unwrap().rescale = p.status;
    let p = plan(&pms, &[], true, false, at("2026-11-30T10:06:00Z"));
    assert_eq!((p.slots, p.control.is_none()), (1, true));
    assert_eq!(p.status.unwrap().phase, RescalePhase::Failed);
    assert_eq!(p.events[0].0, EventType::Warning);
}

#[test]
fn an_upgrade_in_savepoint_mode_holds_the_deployments_until_the_cut() {
    let mut pms = sync(2, 2);
    let t0 = at("2026-11-30T10:00:00Z");
    let p = plan(&pms, &[None, None], true, true, t0);
    let r = p.status.clone().unwrap();
    assert_eq!((r.reason.as_str(), r.from, r.to), ("upgrade", 2, 2));
    assert!(p.hold(), "the old workers keep running until the cut");
    assert_eq!(p.events[0].1, "UpgradeStarted");
    pms.status.as_mut().unwrap().rescale = p.status;
    let (a, b) = (cp(0, 2, 4, Some(&r.id)), cp(1, 2, 4, Some(&r.id)));
    let p = plan(&pms, &[Some(&a), Some(&b)], true, true, t0);
    assert!(!p.hold(), "the cut is taken: the new workers roll out");
    assert_eq!(p.events[0].1, "UpgradeCut");
    pms.status.as_mut().unwrap().rescale = p.status;
    // The old workers' acknowledgements are not the new workers'.
    let p = plan(&pms, &[Some(&a), Some(&b)], true, true, t0);
    assert!(p.control.is_some() && p.events.is_empty());
    let (mut a2, mut b2) = (a.clone(), b.clone());
    a2.epoch = 2;
    b2.epoch = 2;
    let p = plan(&pms, &[Some(&a2), Some(&b2)], true, true, t0);
    assert_eq!(p.events[0].1, "Upgraded");
}

#[test]
fn a_new_slot_late_past_the_timeout_lifts_the_pause_without_falling_back() {
    let mut pms = sync(3, 2);
    let t0 = at("2026-11-30T10:00:00Z");
    let p = plan(&pms, &[None, None], true, false, t0);
    let id = p.status.clone().unwrap().id;
    pms.status.as_mut().unwrap().rescale = p.status;
    let (a, b) = (cp(0, 2, 7, Some(&id)), cp(1, 2, 7, Some(&id)));
    let p = plan(&pms, &[Some(&a), Some(&b)], true, false, t0);
    pms.status.as_mut().unwrap().rescale = p.status;
    // Two of three new slots there, the third's pod not up within the timeout.
    let (n0, n1) = (cp(0, 3, 7, Some(&id)), cp(1, 3, 7, Some(&id)));
    let p = plan(
        &pms,
        &[Some(&n0), Some(&n1), None],
        true,
        false,
        at("2026-11-30T10:06:00Z"),
    );
    let r = p.status.unwrap();
    assert_eq!((r.phase, r.snapshot_id), (RescalePhase::Done, Some(7)));
    assert!(r.message.unwrap().contains("starts there"));
    assert_eq!((p.slots, p.control), (3, None), "3 slots, the pause lifted");
    assert_eq!(p.events[0].0, EventType::Warning);
}
