//! What of a watched object starts a reconcile (kube predicates: an event whose key is the
//! same as the last one of that object is dropped). Keys live only in the operator's memory,
//! so the std hasher is stable enough.

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::runtime::watcher::Event;
use pms_crds::contract::{Checkpoint, CHECKPOINT_KEY};

/// A sync's generation (its spec), whether it is being deleted (setting `deletionTimestamp`
/// need not change the generation) and its finalizers (the finalizer added by the first
/// reconcile is what starts the second); not its own status or annotation writes.
pub fn spec_or_deletion<K: kube::Resource>(pms: &K) -> Option<u64> {
    let mut h = DefaultHasher::new();
    let meta = pms.meta();
    meta.generation.hash(&mut h);
    meta.deletion_timestamp.is_some().hash(&mut h);
    meta.finalizers.hash(&mut h);
    Some(h.finish())
}

/// What of a table's sync (a dynamic object: one that doesn't decode still counts) a database
/// sync decides by: its phase and `Ready` condition, its generation and deletion; not the
/// progress its status shows at each checkpoint.
pub fn phase_or_readiness(sync: &kube::api::DynamicObject) -> Option<u64> {
    let mut h = DefaultHasher::new();
    spec_or_deletion(sync).hash(&mut h);
    let status = &sync.data["status"];
    status["phase"].as_str().hash(&mut h);
    if let Some(ready) = status["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
    {
        ready["status"].as_str().hash(&mut h);
        ready["message"].as_str().hash(&mut h);
    }
    Some(h.finish())
}

/// What of a worker Deployment a reconcile decides by: its generation, deletion and readiness
/// (ready and available replicas, and its `Available` condition), not each status write.
pub fn deployment_readiness(d: &k8s_openapi::api::apps::v1::Deployment) -> Option<u64> {
    let mut h = DefaultHasher::new();
    spec_or_deletion(d).hash(&mut h);
    if let Some(s) = &d.status {
        (
            s.observed_generation,
            s.ready_replicas,
            s.available_replicas,
            s.replicas,
        )
            .hash(&mut h);
        for c in s
            .conditions
            .iter()
            .flatten()
            .filter(|c| c.type_ == "Available")
        {
            (
                &c.status,
                &c.last_transition_time.as_ref().map(|t| t.0.to_string()),
            )
                .hash(&mut h);
        }
    }
    Some(h.finish())
}

/// What of a worker's checkpoint ConfigMap the operator decides or reports by at once: its
/// notes (every key beside the checkpoint), and of the checkpoint the slot count, epoch (a new
/// start), full read or changes, the last snapshot applied whole and the pause it
/// acknowledges. Not the rest of its progress (a position inside a snapshot or a full read,
/// its time, the latest snapshot seen), which a busy slot writes every `checkpoint.interval`:
/// the status shows that at the next resync (a reconcile costs about 40 requests).
pub fn checkpoint_decisions(cm: &ConfigMap) -> Option<u64> {
    let mut h = DefaultHasher::new();
    // A deletion is a change of its own (see [`marking_deletions`]).
    cm.metadata.deletion_timestamp.is_some().hash(&mut h);
    for (key, value) in cm.data.iter().flatten() {
        if key != CHECKPOINT_KEY {
            (key, value).hash(&mut h);
            continue;
        }
        match serde_json::from_str::<Checkpoint>(value) {
            Ok(cp) => decisions(&cp, &mut h),
            // Unreadable: each change of it counts (the status says it is corrupt).
            Err(_) => value.hash(&mut h),
        }
    }
    Some(h.finish())
}

/// The ConfigMap of a watch event, a deleted one marked as being deleted (a `deletionTimestamp`
/// when the API server's event has none), so that [`checkpoint_decisions`] tells it from its
/// last version: else the predicate would drop the deletion, seen only at the next resync.
pub fn marking_deletions(event: Event<ConfigMap>) -> Option<ConfigMap> {
    match event {
        Event::Apply(cm) | Event::InitApply(cm) => Some(cm),
        Event::Delete(mut cm) => {
            let now = Time(k8s_openapi::jiff::Timestamp::now());
            cm.metadata.deletion_timestamp.get_or_insert(now);
            Some(cm)
        }
        Event::Init | Event::InitDone => None,
    }
}

/// The same of the checkpoints on S3 of one sync (by the names their ConfigMaps would have).
pub fn checkpoints_key(checkpoints: &BTreeMap<String, Checkpoint>) -> u64 {
    let mut h = DefaultHasher::new();
    for (name, cp) in checkpoints {
        name.hash(&mut h);
        decisions(cp, &mut h);
    }
    h.finish()
}

fn decisions(cp: &Checkpoint, h: &mut DefaultHasher) {
    cp.slot.count.hash(h);
    cp.epoch.hash(h);
    cp.point.is_full_read().hash(h);
    cp.point.done_through().hash(h);
    cp.paused_for.hash(h);
}

#[cfg(test)]
mod tests {
    use pms_crds::contract::{Position, ReadPoint, Slot, LAST_ERROR_KEY};

    use super::*;

    fn checkpoint(next_snapshot: i64, epoch: u64, paused_for: Option<&str>) -> Checkpoint {
        Checkpoint {
            sync: "s".into(),
            slot: Slot::new(0, 2).unwrap(),
            point: ReadPoint::Changes {
                next_snapshot,
                at: Position::START,
            },
            epoch,
            updated: format!("2026-12-03T10:00:{next_snapshot:02}Z"),
            latest_snapshot: Some(next_snapshot + 3),
            rescaled_from: None,
            paused_for: paused_for.map(String::from),
            belongs_to: None,
            sweep: false,
            full_read: None,
        }
    }

    fn config_map(cp: &Checkpoint, notes: &[(&str, &str)]) -> ConfigMap {
        let mut data = BTreeMap::from([(
            CHECKPOINT_KEY.to_string(),
            serde_json::to_string(cp).unwrap(),
        )]);
        data.extend(notes.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        ConfigMap {
            data: Some(data),
            ..Default::default()
        }
    }

    #[test]
    fn a_checkpoints_progress_alone_starts_no_reconcile_its_decisions_do() {
        let key = |cp: &Checkpoint, notes: &[(&str, &str)]| {
            checkpoint_decisions(&config_map(cp, notes)).unwrap()
        };
        let at_7 = key(&checkpoint(7, 1, None), &[]);
        // Progress inside snapshot 7, a later time and a later latest snapshot.
        let within = Checkpoint {
            point: ReadPoint::Changes {
                next_snapshot: 7,
                at: Position {
                    split: 2,
                    row: 40,
                    plan: None,
                },
            },
            updated: "2026-12-03T10:05:00Z".into(),
            latest_snapshot: Some(30),
            ..checkpoint(7, 1, None)
        };
        assert_eq!(key(&within, &[]), at_7);
        // Decisions: another snapshot applied whole, a pause acknowledged, a new start, a full
        // read, a note, another slot count.
        assert_ne!(key(&checkpoint(9, 1, None), &[]), at_7);
        assert_ne!(key(&checkpoint(7, 1, Some("sp#1")), &[]), at_7);
        assert_ne!(key(&checkpoint(7, 2, None), &[]), at_7);
        let full = Checkpoint {
            point: ReadPoint::FullRead {
                snapshot_id: 7,
                at: None,
            },
            ..checkpoint(7, 1, None)
        };
        assert_ne!(key(&full, &[]), at_7);
        assert_ne!(
            key(&checkpoint(7, 1, None), &[(LAST_ERROR_KEY, "{}")]),
            at_7
        );
        let rescaled = Checkpoint {
            slot: Slot::new(0, 3).unwrap(),
            ..checkpoint(7, 1, None)
        };
        assert_ne!(key(&rescaled, &[]), at_7);
        // A corrupt checkpoint counts at each change; an empty ConfigMap is a key of its own.
        let corrupt = |body: &str| {
            checkpoint_decisions(&ConfigMap {
                data: Some(BTreeMap::from([(CHECKPOINT_KEY.into(), body.into())])),
                ..Default::default()
            })
        };
        assert_ne!(corrupt("{"), corrupt("{{"));
        assert_ne!(checkpoint_decisions(&ConfigMap::default()), Some(at_7));
    }

    #[test]
    fn a_deleted_checkpoint_configmap_starts_a_reconcile() {
        let cm = config_map(&checkpoint(7, 1, None), &[]);
        let applied = marking_deletions(Event::Apply(cm.clone())).unwrap();
        let deleted = marking_deletions(Event::Delete(cm)).unwrap();
        assert_ne!(
            checkpoint_decisions(&applied),
            checkpoint_decisions(&deleted)
        );
        assert_eq!(marking_deletions(Event::Init), None);
    }
}
