//! Named crash points in the flush/checkpoint protocol, for the fault-injection tests.
//!
//! Compiled in only with the `failpoints` feature (test builds). `PMS_FAILPOINT=name` aborts the
//! process the first time `name` is reached, `name@N` the N-th time: like a kill -9 right there.
//! `commit-ack-lost` instead fails the flush after its commit went through, as a connection
//! that drops before the acknowledgement arrives.

/// The points, in protocol order.
pub const POINTS: &[&str] = &[
    "before-transaction",
    "mid-chunk",
    "after-batch-before-commit",
    "after-commit-before-checkpoint",
    "after-checkpoint-before-consumer",
];

/// The points of a rebuild, in its order.
pub const REBUILD_POINTS: &[&str] = &[
    "rebuild-after-create",
    "rebuild-before-swap",
    "rebuild-after-swap",
    "rebuild-mid-install",
];

/// Whether `PMS_FAILPOINT` names `name` and this is its N-th time.
#[cfg(feature = "failpoints")]
fn reached(name: &str) -> bool {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    static TARGET: OnceLock<Option<(String, u64)>> = OnceLock::new();
    static HITS: AtomicU64 = AtomicU64::new(0);
    let target = TARGET.get_or_init(|| {
        let v = std::env::var("PMS_FAILPOINT").ok()?;
        let (n, count) = v
            .split_once('@')
            .map_or((v.as_str(), 1), |(n, c)| (n, c.parse().unwrap_or(1)));
        Some((n.to_string(), count))
    });
    matches!(target, Some((target, count)) if target == name && HITS.fetch_add(1, Ordering::SeqCst) + 1 == *count)
}

#[cfg(feature = "failpoints")]
pub fn hit(name: &str) {
    if reached(name) {
        eprintln!("failpoint {name} reached: aborting");
        std::process::abort();
    }
}

/// `true` where a failing point is reached: the caller fails as if the operation had.
#[cfg(feature = "failpoints")]
pub fn fail(name: &str) -> bool {
    let reached = reached(name);
    if reached {
        eprintln!("failpoint {name} reached: failing");
    }
    reached
}

/// `PMS_FAILPOINT=name` with `PMS_FAILPOINT_RELEASE=<file>`: waits at `name` until that file
/// exists, so a test can have another process overtake this one right there.
#[cfg(feature = "failpoints")]
pub async fn pause(name: &str) {
    if reached(name) {
        let release = std::env::var("PMS_FAILPOINT_RELEASE").unwrap_or_default();
        eprintln!("failpoint {name} reached: pausing until {release} exists");
        while !std::path::Path::new(&release).exists() {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub async fn pause(_name: &str) {}

#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub fn hit(_name: &str) {}

#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub fn fail(_name: &str) -> bool {
    false
}
