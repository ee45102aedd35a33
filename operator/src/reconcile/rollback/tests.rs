//! Rollback decisions over a sequence of reconciles, without a cluster.

use super::*;
use pms_crds::{PaimonMysqlSyncStatus, SyncState};

/// A sync at `generation` whose MySQL Secret is `secret`, with `spec.rollback` of 60 s.
fn sync(generation: i64, secret: &str) -> PaimonMysqlSync {
    let spec = serde_yaml::from_str(&format!(
        "source: {{warehouse: /wh, database: d, table: t}}\n\
         sink: {{url: 'mysql://h/db', table: t, credentialsSecretRef: {{name: {secret}}}}}\n\
         rollback: {{readinessTimeout: 60s}}\n"
    ))
    .unwrap();
    let mut pms = PaimonMysqlSync::new("s", spec);
    pms.metadata.generation = Some(generation);
    pms.status = Some(PaimonMysqlSyncStatus::default());
    pms
}

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

/// `pms` after a reconcile that planned `plan` and saw the sync run ready or not.
fn reconciled(mut pms: PaimonMysqlSync, plan: RollbackPlan, ran_ready: bool) -> PaimonMysqlSync {
    let (stable, watching) = record(&pms, plan, ran_ready);
    let status = pms.status.as_mut().unwrap();
    status.last_stable_spec = stable;
    status.rollback = watching;
    pms
}

/// Generation 1 ran ready, then generation 2 (another Secret) was applied.
fn changed_after_a_stable_run() -> PaimonMysqlSync {
    let t0 = at("2026-12-03T10:00:00Z");
    let first = sync(1, "good");
    let p = plan(&first, false, t0);
    assert_eq!(p, RollbackPlan::none(), "nothing to go back to yet");
    let first = reconciled(first, p, true);
    let stable = first.status.clone().unwrap().last_stable_spec.unwrap();
    assert_eq!(stable.generation, 1);
    let mut second = sync(2, "bad");
    second.status = first.status;
    second
}

#[test]
fn a_new_spec_that_does_not_run_ready_in_time_goes_back_to_the_last_stable_one() {
    let t0 = at("2026-12-03T10:00:00Z");
    let pms = changed_after_a_stable_run();
    let p = plan(&pms, false, t0);
    assert!(!p.rolled_back(), "the new spec gets its time first");
    assert_eq!(p.status.as_ref().unwrap().phase, RollbackPhase::Waiting);
    let pms = reconciled(pms, p, false);
    let p = plan(&pms, false, at("2026-12-03T10:00:59Z"));
    assert!(!p.rolled_back());
    let pms = reconciled(pms, p, false);
    let p = plan(&pms, false, at("2026-12-03T10:01:01Z"));
    let back = p.spec.clone().expect("rolled back after 60 s");
    let secret = back.sink.credentials_secret_ref.as_ref().unwrap();
    assert_eq!(secret.name, "good", "the stable spec's Secret again");
    assert_eq!(p.events[0].1, "RolledBack");
    let message = p.status.as_ref().unwrap().message.clone().unwrap();
    assert!(
        message.contains("generation 2") && message.contains("generation 1"),
        "{message}"
    );
    // Rolled back, the old spec runs ready: it stays rolled back (and gen 1 the stable spec)
    // until the spec changes, with no second event.
    let pms = reconciled(pms, p, true);
    let status = pms.status.clone().unwrap();
    assert_eq!(status.last_stable_spec.unwrap().generation, 1);
    assert_eq!(status.rollback.unwrap().phase, RollbackPhase::RolledBack);
    let p = plan(&pms, false, at("2026-12-03T11:00:00Z"));
    assert!(p.rolled_back() && p.events.is_empty());
    // A fixed spec (generation 3) is tried again, from the start.
    let mut fixed = sync(3, "good-too");
    fixed.status = pms.status;
    let p = plan(&fixed, false, at("2026-12-03T11:00:00Z"));
    assert!(!p.rolled_back());
    let fixed = reconciled(fixed, p, true);
    let status = fixed.status.unwrap();
    assert_eq!(status.last_stable_spec.unwrap().generation, 3);
    assert_eq!(status.rollback, None, "nothing watched once it ran ready");
}

#[test]
fn going_back_keeps_what_the_user_asks_of_the_operator() {
    let mut pms = changed_after_a_stable_run();
    pms.spec.parallelism = 3;
    pms.spec.state = SyncState::Suspended;
    pms.spec.restart_nonce = Some("n".into());
    let old: PaimonMysqlSyncSpec = serde_json::from_str(
        &pms.status
            .as_ref()
            .unwrap()
            .last_stable_spec
            .as_ref()
            .unwrap()
            .spec,
    )
    .unwrap();
    let back = going_back(old, &pms.spec);
    assert_eq!(back.parallelism, 3);
    assert_eq!(back.state, SyncState::Suspended);
    assert_eq!(back.restart_nonce.as_deref(), Some("n"));
    assert_eq!(back.sink.credentials_secret_ref.unwrap().name, "good");
}

#[test]
fn the_clock_stops_while_the_workers_cant_show_whether_the_spec_runs() {
    let pms = changed_after_a_stable_run();
    let p = plan(&pms, false, at("2026-12-03T10:00:00Z"));
    let pms = reconciled(pms, p, false);
    // Rebuilding (or suspended, or cutting) for an hour: never rolled back meanwhile.
    let p = plan(&pms, true, at("2026-12-03T11:00:00Z"));
    assert!(!p.rolled_back());
    let pms = reconciled(pms, p, false);
    // The clock starts again from the last stop.
    let p = plan(&pms, false, at("2026-12-03T11:00:30Z"));
    assert!(!p.rolled_back());
    let pms = reconciled(pms, p, false);
    assert!(plan(&pms, false, at("2026-12-03T11:01:01Z")).rolled_back());
}

#[test]
fn a_change_the_workers_do_not_run_is_not_watched() {
    let mut pms = changed_after_a_stable_run();
    pms.spec.sink.credentials_secret_ref = Some(pms_crds::SecretRef {
        name: "good".into(),
    });
    pms.spec.parallelism = 4;
    assert_eq!(
        plan(&pms, false, at("2026-12-03T12:00:00Z")),
        RollbackPlan::none()
    );
}

#[test]
fn without_spec_rollback_nothing_is_kept() {
    let mut pms = changed_after_a_stable_run();
    pms.spec.rollback = None;
    assert_eq!(
        plan(&pms, false, at("2026-12-03T12:00:00Z")),
        RollbackPlan::none()
    );
    let p = plan(&pms, false, at("2026-12-03T12:00:00Z"));
    assert_eq!(record(&pms, p, true), (None, None));
}
