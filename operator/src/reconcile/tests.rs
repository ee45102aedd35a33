//! The orchestration's decisions, without a cluster.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::runtime::events::EventType;
use pms_crds::{PaimonMysqlSync, PaimonMysqlSyncStatus, SyncPhase};

use super::dereference::{Dereferenced, SecretKeys};
use super::{next_step, phase_event, Next};
use crate::error::{Error, Verb};

fn sample() -> PaimonMysqlSync {
    let spec = serde_yaml::from_str(
        "source: {warehouse: /wh, database: d, table: t}\n\
         sink: {url: 'mysql://h/db', table: t, credentialsSecretRef: {name: writer}}\n",
    )
    .unwrap();
    PaimonMysqlSync::new("s", spec)
}

fn forbidden() -> Error {
    let status =
        kube::core::Status::failure("secrets \"writer\" is forbidden", "Forbidden").with_code(403);
    Error::api::<Secret>(
        Verb::Get,
        "data",
        "writer",
        kube::Error::Api(status.boxed()),
    )
}

#[test]
fn a_dereference_error_is_not_swallowed() {
    let pms = sample();
    match next_step(&pms, "data", Err(forbidden())) {
        Next::Retry(e) => assert!(e.to_string().starts_with("get Secret data/writer: ")),
        other => panic!("a failed read must be retried, not {other:?}"),
    }
}

#[test]
fn an_invalid_sync_fails_and_a_valid_one_is_applied() {
    let pms = sample();
    let missing = Dereferenced {
        mysql_secret: Some(SecretKeys {
            name: "writer".into(),
            keys: None,
        }),
        ..Default::default()
    };
    match next_step(&pms, "data", Ok(missing)) {
        Next::Fail(invalid) => assert_eq!(
            invalid.to_string(),
            "sink.credentialsSecretRef: Secret data/writer does not exist"
        ),
        other => panic!("{other:?}"),
    }
    let keys: BTreeSet<String> = ["username", "password"].map(String::from).into();
    let present = Dereferenced {
        mysql_secret: Some(SecretKeys {
            name: "writer".into(),
            keys: Some(keys),
        }),
        ..Default::default()
    };
    assert!(matches!(
        next_step(&pms, "data", Ok(present)),
        Next::Apply(v, _) if v.slots_known == 1
    ));
}

#[test]
fn a_phase_change_is_an_event_and_a_failure_a_warning_with_its_reason() {
    let status = |phase, message: &str| PaimonMysqlSyncStatus {
        phase: Some(phase),
        conditions: vec![Condition {
            type_: "Degraded".into(),
            status: "True".into(),
            reason: "InvalidSpec".into(),
            message: message.into(),
            last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
            ),
            observed_generation: None,
        }],
        ..Default::default()
    };
    let running = status(SyncPhase::Running, "");
    let (type_, reason, note) = phase_event(None, &running).unwrap();
    assert_eq!(
        (type_, reason, note.as_str()),
        (EventType::Normal, SyncPhase::Running, "new → Running")
    );
    assert!(phase_event(Some(SyncPhase::Running), &running).is_none());
    let failed = status(SyncPhase::Failed, "Secret x does not exist");
    let (type_, reason, note) = phase_event(Some(SyncPhase::Running), &failed).unwrap();
    assert_eq!(
        (type_, reason, note.as_str()),
        (
            EventType::Warning,
            SyncPhase::Failed,
            "Secret x does not exist"
        )
    );
}
