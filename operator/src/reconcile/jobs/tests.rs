//! Rebuild and verify decisions over a sequence of reconciles, without a cluster.

use super::*;
use pms_crds::contract::{PhaseChange, RebuildReason};
use pms_crds::PaimonMysqlSyncStatus;

fn sync(extra: &str) -> PaimonMysqlSync {
    let spec = serde_yaml::from_str(&format!(
        "source: {{warehouse: /wh, database: d, table: t}}\nsink: {{url: 'mysql://h/db', table: t}}\n{extra}"
    ))
    .unwrap();
    let mut pms = PaimonMysqlSync::new("s", spec);
    pms.status = Some(PaimonMysqlSyncStatus {
        phase: Some(SyncPhase::Running),
        ..Default::default()
    });
    pms
}

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

/// The plan's statuses become the resource's, as after a status patch.
fn settle(pms: &mut PaimonMysqlSync, plan: &JobPlan) {
    let status = pms.status.get_or_insert_with(Default::default);
    status.rebuild = plan.rebuild.clone();
    status.verify = plan.verify.clone();
}

fn report(id: &str, phase: RebuildPhase) -> RebuildReport {
    RebuildReport {
        trigger: id.into(),
        phase,
        history: vec![PhaseChange {
            phase,
            at: "2026-11-30T10:00:05Z".into(),
        }],
        snapshot_id: Some(7),
        rows_loaded: 50,
        rows_expected: 100,
        error: None,
    }
}

#[test]
fn a_changed_trigger_stops_the_workers_runs_the_job_and_reports_its_phases() {
    let mut pms = sync("rebuild: {trigger: one}\n");
    let now = at("2026-11-30T10:00:00Z");
    let mut facts = JobFacts {
        worker_pods: 2,
        ..Default::default()
    };
    let p = plan(&pms, &facts, &[], now);
    let r = p.rebuild.clone().unwrap();
    assert_eq!(
        (r.phase, r.trigger.as_deref()),
        (RebuildPhase::Stopping, Some("one"))
    );
    assert!(
        p.workers_stopped && p.rebuild_job.is_none(),
        "the job waits for the workers to go"
    );
    assert_eq!(p.events[0].1, "RebuildStarted");
    settle(&mut pms, &p);

    facts.worker_pods = 0;
    let p = plan(&pms, &facts, &[], now);
    assert_eq!(p.rebuild_job.as_deref(), Some(r.id.as_str()));

    // A report of an earlier rebuild is not this one's.
    facts.rebuild_report = Some(report("an-older-one", RebuildPhase::Done));
    assert_eq!(
        plan(&pms, &facts, &[], now).rebuild.unwrap().phase,
        RebuildPhase::Stopping
    );

    facts.rebuild_report = Some(report(&r.id, RebuildPhase::Loading));
    let p = plan(&pms, &facts, &[], now);
    let loading = p.rebuild.clone().unwrap();
    assert_eq!(loading.phase, RebuildPhase::Loading);
    assert_eq!(loading.progress.as_deref(), Some("50/100 rows (50%)"));
    assert_eq!(p.events[0].2, "Stopping → Loading");
    settle(&mut pms, &p);

    facts.rebuild_report = Some(report(&r.id, RebuildPhase::Done));
    let p = plan(&pms, &facts, &[], at("2026-11-30T10:01:00Z"));
    let done = p.rebuild.clone().unwrap();
    assert_eq!(done.phase, RebuildPhase::Done);
    assert_eq!(done.finished_at.as_deref(), Some("2026-11-30T10:01:00Z"));
    assert!(!p.workers_stopped && p.rebuild_job.is_none());
    assert_eq!(p.events[0].1, "RebuildDone");
    settle(&mut pms, &p);

    // The same trigger later: nothing new.
    let p = plan(&pms, &facts, &[], at("2026-11-30T11:00:00Z"));
    assert_eq!(p.rebuild.unwrap().id, r.id);
    assert!(p.events.is_empty());
}

#[test]
fn a_failed_rebuild_keeps_the_workers_stopped_until_the_trigger_changes() {
    let mut pms = sync("rebuild: {trigger: one}\n");
    let facts = JobFacts::default();
    let p = plan(&pms, &facts, &[], at("2026-11-30T10:00:00Z"));
    settle(&mut pms, &p);
    let id = p.rebuild.unwrap().id;
    let mut failed = report(&id, RebuildPhase::Failed);
    failed.error = Some("the shadow table differs".into());
    let facts = JobFacts {
        rebuild_report: Some(failed),
        ..Default::default()
    };
    let p = plan(&pms, &facts, &[], at("2026-11-30T10:05:00Z"));
    assert_eq!(p.rebuild.as_ref().unwrap().phase, RebuildPhase::Failed);
    assert!(p.workers_stopped && p.rebuild_job.is_none());
    assert_eq!(p.events[0].0, EventType::Warning);
    assert!(p.events[0].2.contains("the shadow table differs"));
    settle(&mut pms, &p);
    assert!(plan(&pms, &facts, &[], at("2026-11-30T10:06:00Z")).workers_stopped);

    pms.spec.rebuild.trigger = Some("two".into());
    let p = plan(&pms, &facts, &[], at("2026-11-30T10:07:00Z"));
    assert_eq!(p.rebuild.unwrap().phase, RebuildPhase::Stopping);
}

#[test]
fn auto_starts_on_a_workers_note_once_and_manual_does_not() {
    let note = RebuildRequired {
        reason: RebuildReason::SnapshotExpired,
        message: "snapshot 3 expired".into(),
        at: "2026-11-30T09:59:00Z".into(),
    };
    let facts = JobFacts {
        rebuild_required: vec![(1, note)],
        ..Default::default()
    };
    let manual = sync("");
    assert_eq!(
        plan(&manual, &facts, &[], at("2026-11-30T10:00:00Z")).rebuild,
        None
    );

    let mut auto = sync("rebuild: {policy: auto}\n");
    let p = plan(&auto, &facts, &[], at("2026-11-30T10:00:00Z"));
    let r = p.rebuild.clone().unwrap();
    assert!(
        r.reason.contains("slot 1 stopped (snapshot-expired)"),
        "{}",
        r.reason
    );
    settle(&mut auto, &p);
    // Failed: the same note does not start it again.
    auto.status
        .as_mut()
        .unwrap()
        .rebuild
        .as_mut()
        .unwrap()
        .phase = RebuildPhase::Failed;
    let p = plan(&auto, &facts, &[], at("2026-11-30T10:10:00Z"));
    assert_eq!(p.rebuild.unwrap().id, r.id);
}

#[test]
fn verify_runs_every_interval_while_the_sync_runs_and_keeps_its_last_result() {
    let mut pms = sync("verify: {interval: 1h}\n");
    let mut facts = JobFacts::default();
    let p = plan(&pms, &facts, &[], at("2026-11-30T10:00:00Z"));
    assert!(p.verify_job);
    settle(&mut pms, &p);
    assert!(
        plan(&pms, &facts, &[], at("2026-11-30T10:00:30Z")).verify_job,
        "runs until it reports"
    );

    let found = VerifyReport {
        snapshot_id: 9,
        paimon_rows: 100,
        mysql_rows: 101,
        extra: 1,
        rounds: 3,
        finished_at: "2026-11-30T10:01:00Z".into(),
        ..Default::default()
    };
    facts.verify_report = Some(found.clone());
    let p = plan(&pms, &facts, &[], at("2026-11-30T10:01:10Z"));
    assert!(!p.verify_job);
    assert_eq!(p.verify.as_ref().unwrap().result.as_ref(), Some(&found));
    assert_eq!(p.events[0].1, "Divergent");
    assert!(p.events[0].2.contains("1 rows differ") && p.events[0].2.contains("3 rounds"));
    settle(&mut pms, &p);

    assert!(!plan(&pms, &facts, &[], at("2026-11-30T10:30:00Z")).verify_job);
    let p = plan(&pms, &facts, &[], at("2026-11-30T11:00:01Z"));
    assert!(p.verify_job, "the interval passed");
    assert_eq!(
        p.verify.unwrap().result,
        Some(found),
        "the last result stays until the next"
    );

    // Not while the sync is not running.
    pms.status.as_mut().unwrap().phase = Some(SyncPhase::Degraded);
    assert!(!plan(&pms, &facts, &[], at("2026-11-30T12:00:01Z")).verify_job);
}

#[test]
fn a_verify_trigger_starts_one_verify_when_set_or_changed() {
    let mut pms = sync("verify: {trigger: first}\n");
    let mut facts = JobFacts::default();
    let p = plan(&pms, &facts, &[], at("2026-11-30T10:00:00Z"));
    assert!(p.verify_job, "a new trigger");
    assert_eq!(
        p.verify.as_ref().unwrap().last_trigger.as_deref(),
        Some("first")
    );
    settle(&mut pms, &p);
    facts.verify_report = Some(VerifyReport {
        finished_at: "2026-11-30T10:01:00Z".into(),
        ..Default::default()
    });
    let p = plan(&pms, &facts, &[], at("2026-11-30T10:01:10Z"));
    assert!(!p.verify_job);
    settle(&mut pms, &p);
    assert!(
        !plan(&pms, &facts, &[], at("2026-11-30T20:00:00Z")).verify_job,
        "the same trigger, no interval: no second verify"
    );
    pms.spec.verify.as_mut().unwrap().trigger = Some("second".into());
    assert!(plan(&pms, &facts, &[], at("2026-11-30T20:00:00Z")).verify_job);
}

#[test]
fn a_verify_asked_in_the_second_the_last_one_reported_starts_in_the_next() {
    let mut pms = sync("verify: {trigger: first}\n");
    let mut facts = JobFacts::default();
    let p = plan(&pms, &facts, &[], at("2026-11-30T10:00:00Z"));
    settle(&mut pms, &p);
    facts.verify_report = Some(VerifyReport {
        finished_at: "2026-11-30T10:00:01Z".into(),
        ..Default::default()
    });
    pms.spec.verify.as_mut().unwrap().trigger = Some("second".into());
    let p = plan(&pms, &facts, &[], at("2026-11-30T10:00:01.400Z"));
    let v = p.verify.as_ref().unwrap();
    assert!(
        !v.running && v.last_trigger.as_deref() == Some("first"),
        "the first recorded, the second not started in the same second: {v:?}"
    );
    assert!(p.verify_job, "looked at again soon");
    settle(&mut pms, &p);
    let p = plan(&pms, &facts, &[], at("2026-11-30T10:00:02Z"));
    let v = p.verify.unwrap();
    assert!(v.running && v.last_trigger.as_deref() == Some("second"));
    assert_eq!(v.started_at, "2026-11-30T10:00:02Z", "a Job id of its own");
}

#[test]
fn a_rebuild_job_killed_mid_phase_fails_the_rebuild() {
    let mut pms = sync("rebuild: {trigger: one}\n");
    let p = plan(&pms, &JobFacts::default(), &[], at("2026-11-30T10:00:00Z"));
    settle(&mut pms, &p);
    let id = p.rebuild.unwrap().id;
    let facts = JobFacts {
        rebuild_report: Some(report(&id, RebuildPhase::CuttingOver)),
        rebuild_job_failed: Some(id),
        ..Default::default()
    };
    let r = plan(&pms, &facts, &[], at("2026-11-30T10:02:00Z"))
        .rebuild
        .unwrap();
    assert_eq!(r.phase, RebuildPhase::Failed);
    assert!(r.message.unwrap().contains("failed in phase CuttingOver"));
}

#[test]
fn a_restore_refuses_a_savepoint_of_other_tables() {
    let savepoint = |tables: Option<&str>| {
        let mut sp = PaimonMysqlSyncSavepoint::new(
            "sp",
            pms_crds::PaimonMysqlSyncSavepointSpec {
                sync_name: "s".into(),
            },
        );
        sp.status = Some(SavepointStatus {
            state: SavepointState::Completed,
            snapshot_id: Some(9),
            tables: tables.map(String::from),
            ..Default::default()
        });
        sp
    };
    let pms = sync("restoreFrom: {savepoint: sp}\n");
    let now = at("2026-11-30T10:00:00Z");
    let facts = JobFacts::default();
    let ours = crate::reconcile::savepoints::tables_of(&pms);
    assert_eq!(ours, "paimon /wh d.t -> mysql db.t");
    for (tables, refused) in [
        (Some(ours.as_str()), false),
        (None, false),
        (Some("paimon /wh d.other -> mysql db.t"), true),
    ] {
        let r = plan(&pms, &facts, &[savepoint(tables)], now)
            .restore
            .unwrap();
        assert_eq!(
            r.phase == RebuildPhase::Failed,
            refused,
            "{tables:?}: {r:?}"
        );
        if refused {
            let message = r.message.unwrap();
            assert!(
                message.contains("is a position in paimon /wh d.other"),
                "{message}"
            );
        } else {
            assert_eq!(r.snapshot_id, Some(9));
        }
    }
}

/// `upgradeMode: stateless`, two operator upgrades at one generation (a new worker image each
/// time, the spec untouched): the second is a rebuild of its own, not the first one's Done
/// report read again.
#[test]
fn a_second_stateless_upgrade_at_one_generation_rebuilds_again() {
    let mut pms = sync("upgradeMode: stateless\n");
    pms.metadata.generation = Some(3);
    let now = at("2026-11-30T10:00:00Z");
    let upgrade = |key: &str| JobFacts {
        upgrade_to: Some(key.into()),
        ..Default::default()
    };
    let first = plan(&pms, &upgrade("sha256:aaaaaaaaaaaaaaaa"), &[], now)
        .rebuild
        .unwrap();
    // The first rebuild ran to Done.
    let mut done = first.clone();
    done.phase = RebuildPhase::Done;
    pms.status.as_mut().unwrap().rebuild = Some(done);
    let mut facts = upgrade("sha256:bbbbbbbbbbbbbbbb");
    facts.rebuild_report = Some(report(&first.id, RebuildPhase::Done));
    let second = plan(&pms, &facts, &[], now).rebuild.unwrap();
    assert_ne!(second.id, first.id);
    assert_eq!(second.phase, RebuildPhase::Stopping, "{second:?}");
}

/// `verify.trigger` set on a suspended sync: no verify runs while nothing runs, and the sync
/// is not looked at again every few seconds for it (its resume starts the verify).
#[test]
fn a_verify_asked_of_a_suspended_sync_waits_for_it_to_run() {
    let mut pms = sync("verify: {trigger: one}\n");
    pms.status.as_mut().unwrap().phase = Some(SyncPhase::Suspended);
    let now = at("2026-11-30T10:00:00Z");
    let p = plan(&pms, &JobFacts::default(), &[], now);
    assert!(!p.verify_job, "{p:?}");
    assert!(p.verify.as_ref().is_none_or(|v| !v.running), "{p:?}");
    pms.status.as_mut().unwrap().phase = Some(SyncPhase::Running);
    let p = plan(&pms, &JobFacts::default(), &[], now);
    assert!(p.verify_job && p.verify.unwrap().running);
}

/// `restoreFrom` naming a savepoint still Pending: refused before anything stops (the workers
/// run on, no Job, not a failure that degrades the sync), shown as `RestoreRefused`; removing
/// the field clears it, and asking for the savepoint again once Completed runs the restore.
#[test]
fn a_refused_restore_stops_nothing_and_clears_with_the_field() {
    let savepoint = |state: SavepointState| {
        let mut sp = PaimonMysqlSyncSavepoint::new(
            "sp1",
            pms_crds::PaimonMysqlSyncSavepointSpec {
                sync_name: "s".into(),
            },
        );
        sp.status = Some(SavepointStatus {
            state,
            snapshot_id: (state == SavepointState::Completed).then_some(9),
            ..Default::default()
        });
        sp
    };
    // As after the status patch and the served-triggers annotation a reconcile writes.
    let settle = |pms: &mut PaimonMysqlSync, p: &JobPlan| {
        pms.status.get_or_insert_with(Default::default).restore = p.restore.clone();
        pms.annotations_mut().insert(
            SERVED_ANNOTATION.into(),
            serde_json::to_string(&p.served).unwrap(),
        );
    };
    let mut pms = sync("");
    let facts = JobFacts {
        worker_pods: 2,
        ..Default::default()
    };
    let now = at("2026-11-30T10:00:00Z");
    let p = plan(&pms, &facts, &[], now);
    settle(&mut pms, &p);
    pms.spec.restore_from = Some(serde_yaml::from_str("savepoint: sp1").unwrap());
    let pending = [savepoint(SavepointState::Pending)];
    let p = plan(&pms, &facts, &pending, now);
    assert!(!p.workers_stopped && p.restore_job.is_none(), "{p:?}");
    assert!(p.failure().is_none(), "{p:?}");
    let why = p.refusal().expect("refused");
    assert!(
        why.contains("sp1") && why.contains("not Completed") && why.contains("run on"),
        "{why}"
    );
    settle(&mut pms, &p);
    // Looked at again: still refused, still running.
    let p = plan(&pms, &facts, &pending, now);
    assert!(!p.workers_stopped && p.refusal().is_some(), "{p:?}");
    // The field removed: the refusal clears.
    pms.spec.restore_from = None;
    let p = plan(&pms, &facts, &pending, now);
    assert!(
        p.restore.is_none() && p.refusal().is_none() && !p.workers_stopped,
        "{p:?}"
    );
    assert_eq!(p.served.restore, None);
    settle(&mut pms, &p);
    // Asked again once the savepoint is Completed: the restore runs.
    pms.spec.restore_from = Some(serde_yaml::from_str("savepoint: sp1").unwrap());
    let p = plan(&pms, &facts, &[savepoint(SavepointState::Completed)], now);
    let r = p.restore.clone().unwrap();
    assert_eq!(
        (r.phase, r.snapshot_id),
        (RebuildPhase::Stopping, Some(9)),
        "{p:?}"
    );
    assert!(p.workers_stopped, "{p:?}");
}

#[test]
fn one_shot_triggers_present_at_creation_or_recorded_as_served_do_not_run() {
    let now = at("2026-11-30T10:00:00Z");
    let facts = JobFacts::default();
    // Created (or re-created) with a trigger and a restore point: recorded as served, not run.
    let mut created = sync("rebuild: {trigger: one}\nrestoreFrom: {snapshotId: 4}\n");
    created.status = None;
    let p = plan(&created, &facts, &[], now);
    assert!(p.rebuild.is_none() && p.restore.is_none(), "{p:?}");
    assert_eq!(
        p.served,
        ServedTriggers {
            rebuild: Some("one".into()),
            restore: Some("snapshot 4".into()),
        }
    );
    // Its status dropped later (a Velero restore): the annotation says what was served.
    let mut restored = created.clone();
    restored.annotations_mut().insert(
        SERVED_ANNOTATION.into(),
        serde_json::to_string(&p.served).unwrap(),
    );
    let p = plan(&restored, &facts, &[], now);
    assert!(p.rebuild.is_none() && p.restore.is_none(), "{p:?}");
    // A trigger changed since runs, once.
    restored.spec.rebuild.trigger = Some("two".into());
    let p = plan(&restored, &facts, &[], now);
    assert_eq!(p.rebuild.unwrap().trigger.as_deref(), Some("two"));
    assert_eq!(p.served.rebuild.as_deref(), Some("two"));
    // A sync whose status exists but records no rebuild, without the annotation (made by an
    // earlier operator): its trigger counts as new, as it did.
    let older = sync("rebuild: {trigger: one}\n");
    assert!(plan(&older, &facts, &[], now).rebuild.is_some());
}

#[test]
fn a_reconcile_repeated_after_a_lost_status_write_mints_the_same_rebuild_id() {
    let mut pms = sync("rebuild: {trigger: one}\n");
    pms.metadata.uid = Some("0123456789abcdef".into());
    pms.metadata.generation = Some(4);
    let facts = JobFacts::default();
    let first = plan(&pms, &facts, &[], at("2026-11-30T10:00:00Z"));
    // The status write of the first is lost: the next reconcile, seconds later, decides again.
    let again = plan(&pms, &facts, &[], at("2026-11-30T10:00:07Z"));
    let (a, b) = (first.rebuild.unwrap(), again.rebuild.unwrap());
    assert_eq!(a.id, "trigger-01234567-g4");
    assert_eq!(a.id, b.id, "the same Job, not a second one");
    assert_eq!(first.rebuild_job, again.rebuild_job);
    assert_ne!(
        a.started_at, b.started_at,
        "the start time is still the clock's"
    );
}
