//! Staggers the restarts the operator itself causes: an upgrade of the operator (a new worker
//! image, another pod template) changes every sync's restart key at once, and each sync would
//! cut a savepoint, start a shadow rebuild or roll its pods at the same moment. At most
//! `limit` syncs go through such a restart at a time; the others keep their workers as they
//! are until a place is free. A sync holds its place until it is `Running` again, so a new
//! version that leaves workers failing stops after the first `limit` syncs (they show it),
//! not across the fleet. A restart the user asked for (a spec change) never waits.
//!
//! In memory: a new leader admits afresh (at most `limit` more restarts at its start).

use std::collections::BTreeSet;
use std::sync::Mutex;

/// How the gate names sync `ns/name`.
pub fn key(ns: &str, name: &str) -> String {
    format!("{ns}/{name}")
}

/// Where a sync stands at the gate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Admission {
    /// It may restart now (it held a place already, or took a free one).
    Go,
    /// Every place is held, by these syncs (`namespace/name`).
    Wait(Vec<String>),
}

#[derive(Debug)]
pub struct RestartGate {
    /// 0: no limit.
    limit: usize,
    restarting: Mutex<BTreeSet<String>>,
}

impl RestartGate {
    pub fn new(limit: u32) -> Self {
        Self {
            limit: limit as usize,
            restarting: Mutex::new(BTreeSet::new()),
        }
    }

    /// Asks a place for `sync` (`namespace/name`) to restart.
    pub fn admit(&self, sync: &str) -> Admission {
        let mut restarting = self.lock();
        if self.limit == 0 || restarting.contains(sync) || restarting.len() < self.limit {
            restarting.insert(sync.to_string());
            return Admission::Go;
        }
        Admission::Wait(restarting.iter().cloned().collect())
    }

    /// A place for `sync` whatever the limit (a restart that must not wait).
    pub fn take(&self, sync: &str) {
        self.lock().insert(sync.to_string());
    }

    /// `sync` is `Running` again with nothing under way, or is gone: its place is free.
    pub fn release(&self, sync: &str) {
        self.lock().remove(sync);
    }

    /// At most this many syncs restart at once (0: no limit).
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// How many syncs hold a place.
    pub fn restarting(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        // A panic while holding the lock leaves a set that is still whole.
        self.restarting.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_limit_syncs_restart_at_once_each_until_it_runs_again() {
        let gate = RestartGate::new(2);
        assert_eq!(gate.admit("ns/a"), Admission::Go);
        assert_eq!(gate.admit("ns/b"), Admission::Go);
        assert_eq!(
            gate.admit("ns/c"),
            Admission::Wait(vec!["ns/a".into(), "ns/b".into()])
        );
        // A sync that holds a place keeps it across reconciles.
        assert_eq!(gate.admit("ns/a"), Admission::Go);
        gate.release("ns/a");
        assert_eq!(gate.admit("ns/c"), Admission::Go);
        assert_eq!(gate.restarting(), 2);
        // A restart that must not wait goes beyond the limit.
        gate.take("ns/d");
        assert_eq!(gate.restarting(), 3);
        assert!(matches!(gate.admit("ns/e"), Admission::Wait(_)));
        gate.release("ns/d");
        // Releasing a sync without a place changes nothing.
        gate.release("ns/z");
        assert_eq!(gate.restarting(), 2);
    }

    #[test]
    fn no_limit_admits_every_sync() {
        let gate = RestartGate::new(0);
        for k in 0..100 {
            assert_eq!(gate.admit(&format!("ns/{k}")), Admission::Go);
        }
    }
}
