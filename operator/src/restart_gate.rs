//! Staggers the restarts the operator itself causes: an upgrade of the operator (a new worker
//! image, another pod template) changes every sync's restart key at once, and each sync would
//! cut a savepoint, start a shadow rebuild or roll its pods at the same moment. At most
//! `limit` syncs go through such a restart at a time; the others keep their workers as they
//! are, queued in order, until a place is free. A sync holds its place until it is `Running`
//! again, so a new version that leaves workers failing stops after the first `limit` syncs
//! (they show it), not across the fleet; but at most `hold_for`: a sync that never runs ready
//! (MySQL down, a refused table) then gives its place to the next one, told with a Warning,
//! so a few broken syncs can't freeze the fleet's upgrade. A restart the user asked for (a
//! spec change) never waits.
//!
//! A queued sync is not polled: when a place frees, the next queued syncs are woken
//! ([`RestartGate::wakeups`]), so a 200-sync upgrade costs one reconcile per sync and place,
//! not one every few seconds each.
//!
//! In memory: a new leader admits afresh (at most `limit` more restarts at its start).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::Stream;
use kube::runtime::reflector::ObjectRef;
use pms_crds::PaimonMysqlSync;
use tokio::sync::broadcast;

/// How the gate names sync `ns/name`.
pub fn key(ns: &str, name: &str) -> String {
    format!("{ns}/{name}")
}

/// Where a sync stands at the gate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Admission {
    /// It may restart now (it held a place already, or took a free one).
    Go,
    /// Every place is held, by these syncs (`namespace/name`); `newly`: it was not queued
    /// before this ask (so it is told once, not at every reconcile).
    Wait { holders: Vec<String>, newly: bool },
}

#[derive(Debug, Default)]
struct Places {
    /// The syncs restarting, since when they hold their place.
    holders: BTreeMap<String, Instant>,
    /// The syncs waiting, first come first.
    queue: VecDeque<String>,
    /// Syncs whose place was taken back after `hold_for`, not yet told.
    overdue: BTreeSet<String>,
}

#[derive(Debug)]
pub struct RestartGate {
    /// 0: no limit.
    limit: usize,
    /// The longest a sync holds a place.
    hold_for: Duration,
    places: Mutex<Places>,
    wake: broadcast::Sender<ObjectRef<PaimonMysqlSync>>,
}

impl RestartGate {
    pub fn new(limit: u32, hold_for: Duration) -> Self {
        let (wake, _) = broadcast::channel(1024);
        Self {
            limit: limit as usize,
            hold_for,
            places: Mutex::new(Places::default()),
            wake,
        }
    }

    /// Asks a place for `sync` (`namespace/name`) to restart, at `now`.
    pub fn admit(&self, sync: &str, now: Instant) -> Admission {
        let mut places = self.lock();
        self.take_back_overdue(&mut places, now);
        if self.limit == 0 || places.holders.contains_key(sync) {
            places.holders.entry(sync.to_string()).or_insert(now);
            return Admission::Go;
        }
        // Free places go to the queue's first syncs, in order.
        let free = self.limit.saturating_sub(places.holders.len());
        let position = places.queue.iter().position(|q| q == sync);
        if position.unwrap_or(places.queue.len()) < free {
            places.queue.retain(|q| q != sync);
            places.holders.insert(sync.to_string(), now);
            return Admission::Go;
        }
        if position.is_none() {
            places.queue.push_back(sync.to_string());
        }
        Admission::Wait {
            holders: places.holders.keys().cloned().collect(),
            newly: position.is_none(),
        }
    }

    /// A place for `sync` whatever the limit (a restart that must not wait).
    pub fn take(&self, sync: &str, now: Instant) {
        let mut places = self.lock();
        places.queue.retain(|q| q != sync);
        places.holders.entry(sync.to_string()).or_insert(now);
    }

    /// `sync` is `Running` again with nothing under way, or is gone: its place is free, and
    /// the next queued syncs are woken.
    pub fn release(&self, sync: &str) {
        let mut places = self.lock();
        places.queue.retain(|q| q != sync);
        if places.holders.remove(sync).is_some() {
            self.wake_next(&places);
        }
    }

    /// `sync` needs no restart (any more): out of the queue, so it holds up no one behind it.
    pub fn unqueue(&self, sync: &str) {
        let mut places = self.lock();
        let before = places.queue.len();
        places.queue.retain(|q| q != sync);
        if places.queue.len() != before {
            self.wake_next(&places);
        }
    }

    /// Whether `sync`'s place was taken back after [`Self::hold_for`] (told once).
    pub fn overdue(&self, sync: &str) -> bool {
        self.lock().overdue.remove(sync)
    }

    /// The syncs of namespace `ns` (`None`: all) woken when a place frees, for
    /// `Controller::reconcile_on`.
    pub fn wakeups(&self, ns: Option<&str>) -> impl Stream<Item = ObjectRef<PaimonMysqlSync>> {
        crate::triggers::in_namespace(&self.wake, ns)
    }

    /// At most this many syncs restart at once (0: no limit).
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The longest a sync holds a place.
    pub fn hold_for(&self) -> Duration {
        self.hold_for
    }

    /// How many syncs hold a place.
    pub fn restarting(&self) -> usize {
        self.lock().holders.len()
    }

    /// Places held longer than `hold_for` go back (their syncs marked overdue).
    fn take_back_overdue(&self, places: &mut Places, now: Instant) {
        let overdue: Vec<String> = places
            .holders
            .iter()
            .filter(|(_, since)| now.saturating_duration_since(**since) > self.hold_for)
            .map(|(sync, _)| sync.clone())
            .collect();
        for sync in overdue {
            places.holders.remove(&sync);
            places.overdue.insert(sync);
        }
    }

    /// Wakes as many queued syncs as there are free places.
    fn wake_next(&self, places: &Places) {
        let free = self.limit.saturating_sub(places.holders.len());
        for sync in places.queue.iter().take(free) {
            if let Some((ns, name)) = sync.split_once('/') {
                // No receiver (no controller running yet) is no error.
                let _ = self.wake.send(ObjectRef::new(name).within(ns));
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Places> {
        // A panic while holding the lock leaves places that are still whole.
        self.places.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    const HOUR: Duration = Duration::from_secs(3600);

    fn waits(a: Admission) -> (Vec<String>, bool) {
        match a {
            Admission::Wait { holders, newly } => (holders, newly),
            Admission::Go => panic!("admitted"),
        }
    }

    #[test]
    fn at_most_limit_syncs_restart_at_once_each_until_it_runs_again() {
        let gate = RestartGate::new(2, HOUR);
        let now = Instant::now();
        assert_eq!(gate.admit("ns/a", now), Admission::Go);
        assert_eq!(gate.admit("ns/b", now), Admission::Go);
        let (holders, newly) = waits(gate.admit("ns/c", now));
        assert_eq!((holders, newly), (vec!["ns/a".into(), "ns/b".into()], true));
        // Asked again: still waiting, but not newly (no second event).
        assert!(!waits(gate.admit("ns/c", now)).1);
        // A sync that holds a place keeps it across reconciles.
        assert_eq!(gate.admit("ns/a", now), Admission::Go);
        gate.release("ns/a");
        assert_eq!(gate.admit("ns/c", now), Admission::Go);
        assert_eq!(gate.restarting(), 2);
        // A restart that must not wait goes beyond the limit.
        gate.take("ns/d", now);
        assert_eq!(gate.restarting(), 3);
        assert!(matches!(gate.admit("ns/e", now), Admission::Wait { .. }));
        gate.release("ns/d");
        // Releasing a sync without a place changes nothing.
        gate.release("ns/z");
        assert_eq!(gate.restarting(), 2);
    }

    #[test]
    fn a_freed_place_goes_to_the_first_queued_and_wakes_it() {
        let gate = RestartGate::new(1, HOUR);
        let mut woken = Box::pin(gate.wakeups(Some("ns")));
        let now = Instant::now();
        assert_eq!(gate.admit("ns/a", now), Admission::Go);
        waits(gate.admit("ns/b", now));
        waits(gate.admit("ns/c", now));
        gate.release("ns/a");
        let next = futures::executor::block_on(woken.next()).unwrap();
        assert_eq!(next.name, "b");
        // c asks first (a resync): b's place is kept for b.
        waits(gate.admit("ns/c", now));
        assert_eq!(gate.admit("ns/b", now), Admission::Go);
    }

    #[test]
    fn a_place_held_too_long_goes_to_the_next_and_is_told_once() {
        let gate = RestartGate::new(1, Duration::from_secs(600));
        let start = Instant::now();
        assert_eq!(gate.admit("ns/broken", start), Admission::Go);
        waits(gate.admit("ns/next", start + Duration::from_secs(599)));
        assert!(!gate.overdue("ns/broken"));
        assert_eq!(
            gate.admit("ns/next", start + Duration::from_secs(601)),
            Admission::Go
        );
        assert!(gate.overdue("ns/broken"));
        assert!(!gate.overdue("ns/broken"), "told once");
    }

    #[test]
    fn no_limit_admits_every_sync() {
        let gate = RestartGate::new(0, HOUR);
        for k in 0..100 {
            assert_eq!(
                gate.admit(&format!("ns/{k}"), Instant::now()),
                Admission::Go
            );
        }
    }
}
