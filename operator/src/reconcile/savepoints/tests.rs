//! Savepoint decisions over a sequence of reconciles, without a cluster.

use super::*;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use pms_crds::contract::{Position, ReadPoint};
use pms_crds::PaimonMysqlSyncSavepointSpec;

fn sync(extra: &str) -> PaimonMysqlSync {
    let spec = serde_yaml::from_str(&format!(
        "source: {{warehouse: /wh, database: d, table: t}}\nsink: {{url: 'mysql://h/db', table: t}}\nparallelism: 2\n{extra}"
    ))
    .unwrap();
    let mut pms = PaimonMysqlSync::new("s", spec);
    pms.metadata.namespace = Some("ns".into());
    pms
}

fn savepoint(name: &str, created: &str, state: Option<SavepointState>) -> PaimonMysqlSyncSavepoint {
    let mut sp = PaimonMysqlSyncSavepoint::new(
        name,
        PaimonMysqlSyncSavepointSpec {
            sync_name: "s".into(),
        },
    );
    sp.metadata.creation_timestamp = Some(Time(created.parse().unwrap()));
    sp.status = state.map(|state| SavepointStatus {
        state,
        ..Default::default()
    });
    sp
}

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

/// Slot `slot` of 2, done through `done`, paused for `paused`.
fn cp(slot: u32, done: i64, paused: Option<&str>) -> Checkpoint {
    super::super::rescale::tests::paused_checkpoint(slot, 2, done, paused)
}

#[test]
fn a_savepoint_pauses_every_slot_then_moves_them_to_one_cut() {
    let pms = sync("");
    let mut sp = savepoint("sp1", "2026-11-30T10:00:00Z", None);
    let now = at("2026-11-30T10:00:01Z");
    // Nobody paused yet: pause at the next boundary.
    let (a, b) = (cp(0, 5, None), cp(1, 7, None));
    let p = plan(&pms, &[sp.clone()], &[Some(&a), Some(&b)], true, now);
    assert_eq!(
        p.control.pause,
        Some(PauseRequest {
            id: "sp1".into(),
            at: None
        })
    );
    assert_eq!(p.statuses[0].1.state, SavepointState::InProgress);
    sp.status = Some(p.statuses[0].1.clone());

    // Slot 0 paused at 6, slot 1 at 8: the cut is 8; slot 0 reads on.
    let (a, b) = (cp(0, 6, Some("sp1")), cp(1, 8, Some("sp1")));
    let p = plan(&pms, &[sp.clone()], &[Some(&a), Some(&b)], true, now);
    assert_eq!(
        p.control.pause,
        Some(PauseRequest {
            id: "sp1".into(),
            at: Some(8)
        })
    );
    assert!(p.data.is_none());

    // Both at the end of 8.
    let a = cp(0, 8, Some("sp1"));
    let p = plan(
        &pms,
        &[sp.clone()],
        &[Some(&a), Some(&b)],
        true,
        at("2026-11-30T10:00:04Z"),
    );
    assert_eq!(p.control, Control::default(), "the pause is lifted");
    let (name, status) = &p.statuses[0];
    assert_eq!(
        (name.as_str(), status.state, status.snapshot_id),
        ("sp1", SavepointState::Completed, Some(8))
    );
    assert_eq!(status.location.as_deref(), Some("ConfigMap ns/sp1-data"));
    assert_eq!(status.took.as_deref(), Some("3.0s"));
    let (_, data) = p.data.unwrap();
    assert_eq!(
        (data.snapshot_id, data.slots, data.checkpoints.len()),
        (8, 2, 2)
    );
    assert_eq!(p.events[0].1, "SavepointCompleted");
}

#[test]
fn an_acknowledgement_of_another_savepoint_or_inside_a_snapshot_does_not_count() {
    let pms = sync("");
    let sp = savepoint(
        "sp2",
        "2026-11-30T10:00:00Z",
        Some(SavepointState::InProgress),
    );
    let a = cp(0, 8, Some("sp1"));
    let mut b = cp(1, 8, Some("sp2"));
    b.point = ReadPoint::Changes {
        next_snapshot: 9,
        at: Position::new(0, 5, 1),
    };
    let p = plan(
        &pms,
        &[sp],
        &[Some(&a), Some(&b)],
        true,
        at("2026-11-30T10:00:01Z"),
    );
    assert_eq!(p.control.pause.unwrap().at, None);
    assert!(p.data.is_none());
}

#[test]
fn one_at_a_time_oldest_first_and_failed_when_the_sync_stops() {
    let pms = sync("");
    let newer = savepoint("b", "2026-11-30T10:00:05Z", None);
    let older = savepoint(
        "a",
        "2026-11-30T10:00:00Z",
        Some(SavepointState::InProgress),
    );
    let p = plan(
        &pms,
        &[newer.clone(), older.clone()],
        &[None, None],
        true,
        at("2026-11-30T10:00:06Z"),
    );
    assert_eq!(p.control.pause.unwrap().id, "a");
    let p = plan(
        &pms,
        &[newer, older],
        &[None, None],
        false,
        at("2026-11-30T10:00:06Z"),
    );
    assert_eq!(p.statuses[0].0, "a");
    assert_eq!(p.statuses[0].1.state, SavepointState::Failed);
    assert_eq!(p.control, Control::default());
}

#[test]
fn trigger_interval_and_history() {
    let mut pms = sync("savepoint: {trigger: one, interval: 1h, history: {maxCount: 2}}\nrestoreFrom: {savepoint: s-old}\n");
    let now = at("2026-11-30T10:00:00Z");
    let p = plan(&pms, &[], &[None, None], true, now);
    assert_eq!(p.create, ["s-20261130-100000", "s-20261130-100000-p"]);
    let status = p.status.unwrap();
    assert_eq!(status.last_trigger.as_deref(), Some("one"));
    pms.status = Some(pms_crds::PaimonMysqlSyncStatus {
        savepoints: Some(status),
        ..Default::default()
    });
    assert!(
        plan(&pms, &[], &[None, None], true, at("2026-11-30T10:30:00Z"))
            .create
            .is_empty()
    );
    assert_eq!(
        plan(&pms, &[], &[None, None], true, at("2026-11-30T11:00:00Z"))
            .create
            .len(),
        1
    );

    let done = |n: &str, t: &str| made(savepoint(n, t, Some(SavepointState::Completed)));
    let all = [
        done("s-old", "2026-11-30T06:00:00Z"),
        done("s-1", "2026-11-30T07:00:00Z"),
        done("s-2", "2026-11-30T08:00:00Z"),
        done("s-3", "2026-11-30T09:00:00Z"),
    ];
    let p = plan(&pms, &all, &[None, None], true, at("2026-11-30T10:30:00Z"));
    assert_eq!(
        p.delete,
        ["s-1"],
        "the two newest stay, and the one restoreFrom names"
    );
}

/// A savepoint as `spec.savepoint` makes it (the operator's labels).
fn made(mut sp: PaimonMysqlSyncSavepoint) -> PaimonMysqlSyncSavepoint {
    sp.metadata.labels = Some(contract::labels("s", contract::Component::Savepoint, None));
    sp
}

#[test]
fn history_counts_completed_savepoints_and_keeps_the_last_one_and_those_made_by_hand() {
    let pms = sync("savepoint: {interval: 1h, history: {maxCount: 2, maxAge: 1d}}\n");
    let completed = |n: &str, t: &str| made(savepoint(n, t, Some(SavepointState::Completed)));
    let failed = |n: &str, t: &str| made(savepoint(n, t, Some(SavepointState::Failed)));
    // Five failed periodic savepoints after the last Completed one.
    let mut all = vec![completed("s-c1", "2026-11-30T01:00:00Z")];
    for h in 2..=6 {
        all.push(failed(
            &format!("s-f{h}"),
            &format!("2026-11-30T0{h}:00:00Z"),
        ));
    }
    let now = at("2026-11-30T07:00:00Z");
    let mut deleted = plan(&pms, &all, &[None, None], true, now).delete;
    deleted.sort();
    assert_eq!(
        deleted,
        ["s-f2", "s-f3", "s-f4"],
        "failures trim among themselves; the Completed one stays"
    );

    // Made by hand: never trimmed, and not counted.
    let by_hand = savepoint(
        "before-upgrade",
        "2026-11-20T00:00:00Z",
        Some(SavepointState::Completed),
    );
    let all = [
        by_hand,
        completed("s-c1", "2026-11-30T01:00:00Z"),
        completed("s-c2", "2026-11-30T02:00:00Z"),
    ];
    assert!(plan(&pms, &all, &[None, None], true, now).delete.is_empty());

    // Past maxAge, the newest Completed one still stays (the last point to restore from).
    let old = [
        completed("s-c1", "2026-11-20T01:00:00Z"),
        completed("s-c2", "2026-11-20T02:00:00Z"),
    ];
    assert_eq!(plan(&pms, &old, &[None, None], true, now).delete, ["s-c1"]);
}

/// A slot that never pauses (stuck behind a long transaction, say): each attempt times out,
/// the slots are unpaused between attempts, the next attempt pauses under an id of its own
/// after 1 and then 2 minutes, and the third failure fails the savepoint.
#[test]
fn a_savepoint_whose_slots_do_not_pause_in_time_is_tried_again_with_backoff() {
    let pms = sync("");
    let mut sp = savepoint("sp1", "2026-11-30T10:00:00Z", None);
    let stuck = cp(1, 7, None);
    let mut now = at("2026-11-30T10:00:01Z");
    let mut ids = Vec::new();
    for attempt in 1..=3u32 {
        // The attempt starts and asks every slot to pause; slot 0 does, slot 1 never.
        let p = plan(&pms, &[sp.clone()], &[None, Some(&stuck)], true, now);
        let pause = p.control.pause.clone().expect("a pause");
        ids.push(pause.id.clone());
        sp.status = Some(p.statuses[0].1.clone());
        assert_eq!(
            sp.status.as_ref().unwrap().state,
            SavepointState::InProgress
        );
        let paused = cp(0, 6, Some(&pause.id));
        // Past the timeout.
        now = now.saturating_add(SignedDuration::from_secs(601)).unwrap();
        let p = plan(
            &pms,
            &[sp.clone()],
            &[Some(&paused), Some(&stuck)],
            true,
            now,
        );
        let status = p.statuses[0].1.clone();
        if attempt == 3 {
            assert_eq!(status.state, SavepointState::Failed);
            assert!(status.error.unwrap().contains("(3 attempts)"));
            assert_eq!(p.events[0].1, "SavepointFailed");
            break;
        }
        assert_eq!(status.state, SavepointState::Pending);
        assert_eq!(status.attempt, Some(attempt + 1));
        assert_eq!(p.events[0].1, "SavepointRetrying");
        assert!(p.control.pause.is_none(), "unpaused between attempts");
        sp.status = Some(status);
        // Not before its backoff: still no pause.
        let backoff = 60 * i64::from(attempt);
        let early = now
            .saturating_add(SignedDuration::from_secs(backoff - 1))
            .unwrap();
        let p = plan(
            &pms,
            &[sp.clone()],
            &[Some(&paused), Some(&stuck)],
            true,
            early,
        );
        assert!(p.control.pause.is_none() && p.statuses.is_empty());
        now = now
            .saturating_add(SignedDuration::from_secs(backoff))
            .unwrap();
    }
    assert_eq!(ids, ["sp1", "sp1#2", "sp1#3"]);
}

#[test]
fn a_savepoint_waits_for_a_full_read_to_end_without_pausing_any_slot() {
    let pms = sync("");
    let mut sp = savepoint("sp1", "2026-11-30T10:00:00Z", None);
    let following = cp(0, 7, None);
    let mut reading = cp(1, 0, None);
    reading.point = ReadPoint::FullRead {
        snapshot_id: 4,
        at: None,
    };
    reading.full_read = Some(pms_crds::contract::FullReadProgress {
        rows: 1_000,
        expected_rows: 9_000,
    });
    let mut now = at("2026-11-30T10:00:01Z");
    let p = plan(
        &pms,
        &[sp.clone()],
        &[Some(&following), Some(&reading)],
        true,
        now,
    );
    assert!(
        p.control.pause.is_none(),
        "no slot paused while slot 1 reads in full"
    );
    let status = p.statuses[0].1.clone();
    assert_eq!(status.state, SavepointState::Pending);
    let why = status.waiting_for.clone().unwrap_or_default();
    assert!(
        why.contains("slot 1 to end its full read of snapshot 4 (1000 of about 9000 rows"),
        "{why}"
    );
    sp.status = Some(status);
    // Long after the attempt's timeout: still waiting, not retried nor failed.
    now = now.saturating_add(SignedDuration::from_secs(3600)).unwrap();
    let p = plan(
        &pms,
        &[sp.clone()],
        &[Some(&following), Some(&reading)],
        true,
        now,
    );
    assert!(p.control.pause.is_none() && p.statuses.is_empty() && p.events.is_empty());
    // The full read done: the attempt starts.
    let done = cp(1, 4, None);
    let p = plan(
        &pms,
        &[sp.clone()],
        &[Some(&following), Some(&done)],
        true,
        now,
    );
    assert_eq!(p.control.pause.map(|r| r.id), Some("sp1".to_string()));
    let status = &p.statuses[0].1;
    assert_eq!(
        (status.state, status.waiting_for.as_deref()),
        (SavepointState::InProgress, None)
    );
}
