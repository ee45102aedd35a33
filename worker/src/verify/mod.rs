//! `pms-worker verify`: is MySQL equal to one Paimon snapshot? In the spirit of
//! pt-table-checksum, two passes:
//!
//! 1. Both sides are read once, whole and in no order (a merge-on-read of the snapshot; one
//!    streamed `SELECT` of the mapped columns). Each row goes to a chunk by a hash of its key,
//!    and each chunk keeps a row count and an order-independent sum of row hashes.
//! 2. Only when chunks differ: both sides are read again, keeping just the rows of those
//!    chunks, to name the keys missing from MySQL, extra in MySQL, and different (with the
//!    columns that differ). Of MySQL's rows only keys, delete values and column hashes are
//!    held, in groups of chunks within `--rows-per-pass` and `maxBufferBytes`.
//!
//! Rows are hashed in their canonical form (`canonical.rs`), so a value MySQL holds in another
//! form than it was written in (a DECIMAL's trailing zeros, a FLOAT) is not a difference.
//! Only the mapped columns count: MySQL columns nothing maps to (a sequence guard) are not read.

mod canonical;
mod repair;

pub use repair::Repair;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{DefaultHasher, Hasher};
use std::time::{Duration, Instant};

use futures::StreamExt;
use mysql_async::Value;
use pms_crds::contract::{Component, Slot, VerifyReport};
use tracing::info;

use crate::buffer::Batch;
use crate::checkpoint::Checkpointer;
use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};
use crate::eta::EtaLine;
use crate::mapping::{decode_batch, Change, ChangeKind, Layout, TargetColumn};
use crate::report_configmap::ReportConfigMap;
use crate::sink::MysqlConnection;
use crate::source::{PaimonSource, SnapshotPlan};
use crate::target_layout::validated_layout;

pub struct VerifyOptions {
    /// The Paimon snapshot to compare with; default the latest.
    pub snapshot: Option<i64>,
    /// How many keys of each kind of difference to name.
    pub show: usize,
    /// Write what differs (see `repair.rs`); the snapshot must be the latest.
    pub repair: bool,
    /// Rows of both sides held in memory at most by one read of the second pass.
    pub rows_per_pass: u64,
    /// A running sync: keys that differ are compared again, up to [`LIVE_ROUNDS`] times,
    /// each time once every slot has applied the snapshot of the round before (changes in
    /// flight are not divergence); only keys that differed every time count.
    pub live: bool,
}

/// Comparisons a live verify makes at most.
pub const LIVE_ROUNDS: u32 = 3;
/// How long a live verify waits for the sync to apply a round's snapshot.
const LIVE_WAIT: Duration = Duration::from_secs(600);

/// Pass 2 holds at most this many rows (and `maxBufferBytes` of them).
pub const DEFAULT_ROWS_PER_PASS: u64 = 500_000;

/// What `verify` found.
#[derive(Debug, Default)]
pub struct Report {
    pub snapshot_id: i64,
    pub paimon_rows: u64,
    pub mysql_rows: u64,
    pub chunks: usize,
    pub chunks_differing: usize,
    /// Keys in Paimon, not in MySQL.
    pub missing: Differences,
    /// Keys in MySQL, not in Paimon (orphans).
    pub extra: Differences,
    /// Keys in both, with other values.
    pub different: Differences,
    /// Rows MySQL sent over both passes.
    pub mysql_rows_scanned: u64,
    /// With `repair`: rows upserted and deleted, then what a second verify found.
    pub repaired: Option<(u64, Box<Report>)>,
    pub elapsed: Duration,
    /// Comparisons made (more than one in a live verify that found differences).
    pub rounds: u32,
}

/// How many rows differ one way, and the first of their keys.
#[derive(Debug, Default)]
pub struct Differences {
    pub count: u64,
    /// `(key, detail)`: the key as `col=value, …`; for a different row, its differing columns.
    pub first: Vec<(String, String)>,
    /// Live verify: a 128-bit fingerprint of every differing key in canonical form (with
    /// `first`'s at its front): 16 bytes a key, so 5 million differing keys hold 80 MB.
    keys: Vec<u128>,
}

impl Differences {
    fn add(
        &mut self,
        show: usize,
        canonical_key: Option<&[u8]>,
        key: impl FnOnce() -> String,
        detail: impl FnOnce() -> String,
    ) {
        self.count += 1;
        if self.first.len() < show {
            self.first.push((key(), detail()));
        }
        if let Some(k) = canonical_key {
            self.keys.push(fingerprint(k));
        }
    }

    /// Keeps only the keys that also differed in an earlier round (`earlier`: sorted).
    fn retain(&mut self, earlier: &[u128]) {
        let keep: Vec<bool> = self
            .keys
            .iter()
            .map(|k| earlier.binary_search(k).is_ok())
            .collect();
        let mut i = 0;
        self.first.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        let mut i = 0;
        self.keys.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        self.count = self.keys.len() as u64;
    }
}

impl Report {
    /// The rows that differ now: after a repair, what the second verify found.
    pub fn divergent_rows(&self) -> u64 {
        match &self.repaired {
            Some((_, after)) => after.divergent_rows(),
            None => self.missing.count + self.extra.count + self.different.count,
        }
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "snapshot {}: Paimon {} rows, MySQL {} rows; {} of {} chunks differ; {} missing from MySQL, {} extra in MySQL, \
             {} different ({:.1} s, {} MySQL rows scanned{})",
            self.snapshot_id,
            self.paimon_rows,
            self.mysql_rows,
            self.chunks_differing,
            self.chunks,
            self.missing.count,
            self.extra.count,
            self.different.count,
            self.elapsed.as_secs_f64(),
            self.mysql_rows_scanned,
            match self.rounds {
                0 | 1 => String::new(),
                n => format!("; {n} rounds, only keys that differed in every round count"),
            }
        )?;
        for (what, d) in [
            ("missing", &self.missing),
            ("extra", &self.extra),
            ("different", &self.different),
        ] {
            for (key, detail) in &d.first {
                writeln!(f, "  {what}: {key}{detail}")?;
            }
            if d.count > d.first.len() as u64 {
                writeln!(f, "  {what}: … and {} more", d.count - d.first.len() as u64)?;
            }
        }
        if let Some((rows, after)) = &self.repaired {
            writeln!(f, "repaired: {rows} rows written; verified again:")?;
            write!(f, "{after}")?;
        }
        Ok(())
    }
}

/// Compares the target table with a snapshot of the whole Paimon table (every bucket), and
/// with `repair` writes what differs and compares again.
pub async fn verify(cfg: &WorkerConfig, opts: &VerifyOptions) -> Result<Report> {
    if opts.live && (opts.repair || opts.snapshot.is_some()) {
        return Err(WorkerError::Config(
            "verify --live compares a running sync with the latest snapshots: leave out --snapshot and --repair".into(),
        ));
    }
    if opts.repair && opts.snapshot.is_some() {
        // Rows set back to an older snapshot than the sync's checkpoint would never be
        // written again.
        return Err(WorkerError::Config(
            "verify --repair writes the latest snapshot's rows: leave out --snapshot".into(),
        ));
    }
    let source = PaimonSource::open(&cfg.spec.source, Slot::SINGLE).await?;
    let mysql = MysqlConnection::open(cfg).await?;
    let layout = validated_layout(&source, &mysql, cfg, None).await?;
    if opts.repair {
        refuse_repair_beside_a_running_sync(&mysql, cfg).await?;
    }
    let sink = match opts.repair {
        true => Some(repair::sink(cfg, &layout).await?),
        false => None,
    };
    let repair = sink.as_ref().map(Repair::unfenced);
    let (mut report, written) =
        compare(&source, &mysql, &layout, cfg, opts, repair.as_ref()).await?;
    if opts.live {
        recheck(&source, &mysql, &layout, cfg, opts, &mut report).await?;
    }
    drop(repair);
    if let Some(sink) = sink {
        sink.close().await;
        if written == 0 {
            return Ok(report);
        }
        let again = VerifyOptions {
            snapshot: Some(report.snapshot_id),
            repair: false,
            ..*opts
        };
        let (after, _) = compare(&source, &mysql, &layout, cfg, &again, None).await?;
        report.repaired = Some((written, Box::new(after)));
    }
    Ok(report)
}

/// `verify --repair` writes the latest snapshot's rows without a slot's fence: beside a
/// running worker it could set back a row the worker just wrote newer, or delete a key it just
/// inserted. A running at-least-once worker holds its slot's lock, so that is refused.
async fn refuse_repair_beside_a_running_sync(
    mysql: &MysqlConnection,
    cfg: &WorkerConfig,
) -> Result<()> {
    for slot in 0..cfg.spec.parallelism {
        if mysql.slot_in_use(&cfg.external_name(), slot).await? {
            return Err(WorkerError::Config(format!(
                "verify --repair: slot {slot} of sync {} is running (it holds its slot lock), and a repair beside \
                 it could set back what it writes; stop the sync first (suspend it under the operator), or verify \
                 without --repair",
                cfg.sync_name
            )));
        }
    }
    Ok(())
}

/// The end of a full read of `snapshot_id` into a table that held rows (by a sync's only
/// slot, so `source` reads the whole table): verify's two passes against that snapshot, with
/// what differs written; all that should differ by then is the rows the snapshot doesn't have,
/// which are deleted. Memory stays bounded as in verify. Its writes go through `repair`: the
/// sync's own sink and fence, so a newer owner of the slot (a pooled table moved to another
/// worker, a second process of the sync) fences them as it fences the sync's flushes. Returns
/// the rows removed, or `None` when a stop ended it first.
pub async fn sweep(
    cfg: &WorkerConfig,
    source: &PaimonSource,
    layout: &Layout,
    snapshot_id: i64,
    repair: &Repair<'_>,
) -> Result<Option<u64>> {
    let mysql = MysqlConnection::open(cfg).await?;
    let opts = VerifyOptions {
        snapshot: Some(snapshot_id),
        show: 0,
        repair: true,
        rows_per_pass: DEFAULT_ROWS_PER_PASS,
        live: false,
    };
    let compared = compare(source, &mysql, layout, cfg, &opts, Some(repair)).await;
    mysql.close().await;
    let (report, _) = compared?;
    if repair.stopping() {
        return Ok(None);
    }
    if report.missing.count + report.different.count > 0 {
        // Written just now from the same snapshot: only a concurrent writer explains it.
        tracing::warn!(missing = report.missing.count, different = report.different.count, target = %cfg.target_name(),
                       "after the full read, rows differed besides the extra ones: written again from the snapshot \
                        (does something else write this table?)");
    }
    Ok(Some(report.extra.count))
}

/// Writes what `report` found into the ConfigMap `<sync>-verify` (the operator's
/// `spec.verify` reads it).
pub async fn publish(cfg: &WorkerConfig, report: &Report) -> Result<()> {
    let namespace = cfg.config_map_namespace().flatten();
    let name = pms_crds::contract::verify_name(&cfg.sync_name);
    let target =
        ReportConfigMap::connect(namespace, name, &cfg.sync_name, Component::Verify).await?;
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (missing, extra, different) = match &report.repaired {
        Some((_, after)) => (
            after.missing.count,
            after.extra.count,
            after.different.count,
        ),
        None => (
            report.missing.count,
            report.extra.count,
            report.different.count,
        ),
    };
    target
        .write(&VerifyReport {
            snapshot_id: report.snapshot_id,
            paimon_rows: report.paimon_rows,
            mysql_rows: report.mysql_rows,
            missing,
            extra,
            different,
            rounds: report.rounds,
            seconds: report.elapsed.as_secs_f64(),
            finished_at: now,
        })
        .await
}

/// Live verify: while keys differ, waits until every slot of the sync has applied the
/// compared snapshot, then compares again at the latest; keeps the keys that differed every
/// time (a key changed in every round's window would still count: rare, and said in the docs).
async fn recheck(
    source: &PaimonSource,
    mysql: &MysqlConnection,
    layout: &Layout,
    cfg: &WorkerConfig,
    opts: &VerifyOptions,
    report: &mut Report,
) -> Result<()> {
    while report.divergent_rows() > 0 && report.rounds < LIVE_ROUNDS {
        let compared = report.snapshot_id;
        info!(
            round = report.rounds,
            snapshot_id = compared,
            divergent = report.divergent_rows(),
            "verify: keys differ; comparing them again once the sync applied this snapshot"
        );
        if !wait_until_applied(cfg, compared).await? {
            info!(snapshot_id = compared, "verify: the sync did not apply the compared snapshot in time; reporting what differs now");
            return Ok(());
        }
        // Taken, not copied: the report is replaced by the next round's.
        let mut earlier: Vec<u128> = [
            &mut report.missing,
            &mut report.extra,
            &mut report.different,
        ]
        .into_iter()
        .flat_map(|d| std::mem::take(&mut d.keys))
        .collect();
        earlier.sort_unstable();
        earlier.dedup();
        let (mut again, _) = compare(source, mysql, layout, cfg, opts, None).await?;
        for d in [&mut again.missing, &mut again.extra, &mut again.different] {
            d.retain(&earlier);
        }
        again.rounds = report.rounds + 1;
        again.elapsed += report.elapsed;
        again.mysql_rows_scanned += report.mysql_rows_scanned;
        info!(
            round = again.rounds,
            snapshot_id = again.snapshot_id,
            still_divergent = again.divergent_rows(),
            "verify: compared again"
        );
        *report = again;
    }
    Ok(())
}

/// Waits until every slot's checkpoint says it applied `snapshot_id`; false after
/// [`LIVE_WAIT`].
async fn wait_until_applied(cfg: &WorkerConfig, snapshot_id: i64) -> Result<bool> {
    let deadline = Instant::now() + LIVE_WAIT;
    let slots = cfg.spec.parallelism;
    loop {
        let mut applied = true;
        for k in 0..slots {
            let slot = cfg.for_slot(Slot::new(k, slots)?);
            applied &= Checkpointer::peek(&slot)
                .await?
                .and_then(|cp| cp.point.done_through())
                .is_some_and(|done| done >= snapshot_id);
        }
        if applied {
            return Ok(true);
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// The two passes; with a `repair` sink, pass 2 also writes what makes MySQL equal (Paimon's
/// rows of missing and different keys upserted, MySQL's extra rows deleted) and returns how
/// many rows it wrote.
async fn compare(
    source: &PaimonSource,
    mysql: &MysqlConnection,
    layout: &Layout,
    cfg: &WorkerConfig,
    opts: &VerifyOptions,
    repair: Option<&Repair<'_>>,
) -> Result<(Report, u64)> {
    let started = Instant::now();
    let target = mysql.describe_target().await?.ok_or_else(|| {
        WorkerError::Data(format!("{} disappeared during verify", cfg.target_name()))
    })?;
    let columns = layout
        .columns
        .iter()
        .map(|c| {
            target.column(&c.mysql).cloned().ok_or_else(|| {
                WorkerError::Data(format!(
                    "MySQL column {:?} disappeared during verify",
                    c.mysql
                ))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let rows = Rows {
        layout,
        columns: &columns,
    };
    let plan = source.plan_full(opts.snapshot).await?;
    let chunks = (plan.expected_rows / 1000).clamp(16, 1 << 16) as usize;
    info!(snapshot_id = plan.snapshot_id, expected_rows = plan.expected_rows, chunks, target = %cfg.target_name(), "verify");
    let mut report = Report {
        snapshot_id: plan.snapshot_id,
        chunks,
        rounds: 1,
        ..Default::default()
    };
    let keep_keys = opts.live;

    // Pass 1: count and sum per chunk, both sides.
    let mut in_paimon = vec![ChunkSum::default(); chunks];
    let mut eta = EtaLine::new(
        format!("verify: reading snapshot {}", plan.snapshot_id),
        plan.expected_rows,
    );
    let held = opts.rows_per_pass;
    report.paimon_rows = paimon_rows(source, &plan, layout, Some(&mut eta), held, |row| {
        let r = rows.canonical(&row);
        in_paimon[r.chunk(chunks)].add(&r);
        Ok(())
    })
    .await?;
    eta.finish();
    let mut in_mysql = vec![ChunkSum::default(); chunks];
    // What pass 2 would hold of each chunk's MySQL rows, in bytes.
    let mut held_bytes = vec![0u64; chunks];
    let names: Vec<&str> = layout.columns.iter().map(|c| c.mysql.as_str()).collect();
    report.mysql_rows = mysql
        .scan(&names, |row| {
            let r = rows.canonical(&row);
            in_mysql[r.chunk(chunks)].add(&r);
            held_bytes[r.chunk(chunks)] += rows.held_bytes(&r, &row);
            Ok(())
        })
        .await?;
    report.mysql_rows_scanned = report.mysql_rows;
    let differing: Vec<usize> = (0..chunks)
        .filter(|&c| in_paimon[c] != in_mysql[c])
        .collect();
    report.chunks_differing = differing.len();

    // Pass 2, in groups of differing chunks small enough to hold in memory (at most
    // `--rows-per-pass` rows and `maxBufferBytes` of what is held of MySQL's rows), each
    // group one more read of both sides: the rows of its chunks, by key.
    let mut written = 0;
    let size = |c: &usize| Size {
        rows: in_paimon[*c].rows.max(in_mysql[*c].rows),
        bytes: held_bytes[*c],
    };
    let limit = Size {
        rows: opts.rows_per_pass,
        bytes: cfg.spec.sink.max_buffer_bytes,
    };
    let groups = groups(&differing, size, limit);
    if groups.len() > 1 {
        info!(
            groups = groups.len(),
            rows_per_pass = limit.rows,
            max_buffer_bytes = limit.bytes,
            "verify: the differing chunks are read again in groups that fit in memory"
        );
    }
    for group in groups {
        let show = opts.show;
        let mut fixes = Batch::default();
        let mut fix = |row: &[Value], delete: bool| {
            if repair.is_some() {
                let (rows, snapshots) = if delete {
                    (&mut fixes.deletes, &mut fixes.delete_snapshots)
                } else {
                    (&mut fixes.upserts, &mut fixes.upsert_snapshots)
                };
                rows.push(row.to_vec());
                snapshots.push(plan.snapshot_id);
            }
        };
        // MySQL's rows of these chunks, by canonical key.
        let mut stored: HashMap<Vec<u8>, Held> = HashMap::new();
        report.mysql_rows_scanned += mysql
            .scan(&names, |row| {
                let r = rows.canonical(&row);
                if group.contains(&r.chunk(chunks)) {
                    let held = rows.held(&r, &row);
                    stored.insert(r.key, held);
                }
                Ok(())
            })
            .await?;
        paimon_rows(source, &plan, layout, None, held, |row| {
            let r = rows.canonical(&row);
            if !group.contains(&r.chunk(chunks)) {
                return Ok(());
            }
            match stored.remove(&r.key) {
                None => {
                    let key = keep_keys.then_some(r.key.as_slice());
                    report
                        .missing
                        .add(show, key, || rows.key_text(&row), String::new);
                    fix(&row, false);
                }
                Some(theirs) => {
                    let ours = column_hashes(&r.columns);
                    if ours != theirs.column_hashes {
                        report.different.add(
                            show,
                            keep_keys.then_some(r.key.as_slice()),
                            || rows.key_text(&row),
                            || rows.differing_columns(&ours, &theirs.column_hashes),
                        );
                        fix(&row, false);
                    }
                }
            }
            Ok(())
        })
        .await?;
        // Sorted, so the report names the same keys on every run.
        let extra: BTreeMap<Vec<u8>, Held> = stored.into_iter().collect();
        for (key, held) in &extra {
            let key = keep_keys.then_some(key.as_slice());
            let row = rows.delete_row(&held.delete_values);
            report
                .extra
                .add(show, key, || rows.key_text(&row), String::new);
            fix(&row, true);
        }
        if let Some(repair) = repair {
            written += repair::write(repair, cfg, fixes).await?;
            if repair.stopping() {
                break;
            }
        }
    }
    report.elapsed = started.elapsed();
    Ok((report, written))
}

/// What a group of chunks holds in pass 2.
#[derive(Clone, Copy, Debug, Default)]
struct Size {
    rows: u64,
    bytes: u64,
}

/// `chunks` (sorted) in consecutive groups whose sizes add up to at most `limit`, in rows and
/// in bytes (a chunk larger than that is a group of its own).
fn groups(chunks: &[usize], size: impl Fn(&usize) -> Size, limit: Size) -> Vec<HashSet<usize>> {
    let mut out: Vec<HashSet<usize>> = Vec::new();
    let mut filled: Option<Size> = None;
    for c in chunks {
        let n = size(c);
        let fits = filled.is_some_and(|f| {
            f.rows.saturating_add(n.rows) <= limit.rows
                && f.bytes.saturating_add(n.bytes) <= limit.bytes
        });
        if !fits {
            out.push(HashSet::new());
            filled = Some(Size::default());
        }
        if let Some(f) = filled.as_mut() {
            f.rows += n.rows;
            f.bytes += n.bytes;
        }
        if let Some(group) = out.last_mut() {
            group.insert(*c);
        }
    }
    out
}

/// Every row of the snapshot's plan, in the layout's column order. A plan read as stored holds
/// several versions of a key: each split (one bucket) is reduced to the newest first, holding
/// at most `max_held` keys at once: a hash partition of the split's keys that holds more is
/// read again as two (up to [`MAX_PARTS`]).
async fn paimon_rows(
    source: &PaimonSource,
    plan: &SnapshotPlan,
    layout: &Layout,
    mut eta: Option<&mut EtaLine>,
    max_held: u64,
    mut each: impl FnMut(Vec<Value>) -> Result<()>,
) -> Result<u64> {
    let mut count = 0;
    for split in 0..plan.len() {
        // Hash partitions `(part, parts)` of the split's keys still to read.
        let mut todo = vec![(0u64, 1u64)];
        while let Some((part, parts)) = todo.pop() {
            let mut newest: HashMap<Vec<u8>, Change> = HashMap::new();
            let mut outgrown = false;
            let mut batches = source.read_split(plan, split).await?;
            while let Some(batch) = batches.next().await {
                let batch = batch?;
                if let Some(eta) = eta.as_deref_mut().filter(|_| parts == 1) {
                    eta.add(batch.num_rows() as u64);
                }
                for d in decode_batch(&batch, layout, plan.snapshot_id, source.name(), true)? {
                    if !plan.holds_versions() {
                        if d.filtered_out {
                            continue;
                        }
                        count += 1;
                        each(d.change.row)?;
                    } else if parts > 1 && key_part(&d.key, parts) != part {
                        continue;
                    } else if newest.get(&d.key).is_none_or(|c| c.order <= d.change.order) {
                        newest.insert(d.key, d.change);
                        outgrown = newest.len() as u64 > max_held && parts < MAX_PARTS;
                    }
                }
                if outgrown {
                    break;
                }
            }
            if outgrown {
                info!(split, parts = parts * 2, max_held,
                      "verify: a bucket read as stored holds more keys than --rows-per-pass: read again in hash partitions");
                todo.extend([(part, parts * 2), (part + parts, parts * 2)]);
                continue;
            }
            for change in newest.into_values() {
                if change.kind == ChangeKind::Upsert {
                    count += 1;
                    each(change.row)?;
                }
            }
        }
    }
    Ok(count)
}

/// At most this many hash partitions of one split read as stored.
const MAX_PARTS: u64 = 1 << 12;

/// The hash partition of `parts` that `key` falls in: part `p` of `n` is parts `p` and `p + n`
/// of `2n`.
fn key_part(key: &[u8], parts: u64) -> u64 {
    let mut h = DefaultHasher::new();
    h.write(key);
    h.finish() % parts
}

/// A 128-bit fingerprint of a canonical key (two 64-bit hashes): a live verify's memory of the
/// keys that differed, where two keys sharing one by chance is far rarer than a flipped bit.
fn fingerprint(key: &[u8]) -> u128 {
    let hash = |salt: u8| {
        let mut h = DefaultHasher::new();
        h.write_u8(salt);
        h.write(key);
        h.finish()
    };
    (u128::from(hash(0)) << 64) | u128::from(hash(1))
}

/// Canonical forms of rows of one layout.
struct Rows<'a> {
    layout: &'a Layout,
    /// The MySQL column of each layout column.
    columns: &'a [TargetColumn],
}

/// A row in canonical form: its key, its columns, and its hashes.
struct Canonical {
    key: Vec<u8>,
    columns: Vec<Vec<u8>>,
    key_hash: u64,
    row_hash: u64,
}

impl Canonical {
    fn chunk(&self, chunks: usize) -> usize {
        (self.key_hash % chunks as u64) as usize
    }
}

impl Rows<'_> {
    fn canonical(&self, row: &[Value]) -> Canonical {
        let columns: Vec<Vec<u8>> = row
            .iter()
            .zip(self.columns)
            .map(|(v, c)| {
                let mut out = Vec::new();
                canonical::append(v, c, &mut out);
                out
            })
            .collect();
        let key: Vec<u8> = self
            .layout
            .key_positions
            .iter()
            .flat_map(|&p| columns[p].iter().copied())
            .collect();
        let hash = |parts: &mut dyn Iterator<Item = &[u8]>| {
            let mut h = DefaultHasher::new();
            parts.for_each(|p| h.write(p));
            h.finish()
        };
        Canonical {
            key_hash: hash(&mut std::iter::once(key.as_slice())),
            row_hash: hash(&mut columns.iter().map(Vec::as_slice)),
            key,
            columns,
        }
    }

    /// `id=5, region='eu'`.
    fn key_text(&self, row: &[Value]) -> String {
        self.layout
            .key_positions
            .iter()
            .map(|&p| format!("{}={}", self.layout.columns[p].mysql, row[p].as_sql(false)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// What pass 2 holds of a MySQL row: not the row, only what names and deletes it and a
    /// hash of each column (a 64-bit hash a column, as pass 1 sums 64-bit row hashes).
    fn held(&self, r: &Canonical, row: &[Value]) -> Held {
        Held {
            delete_values: self
                .layout
                .delete_positions()
                .map(|p| row[p].clone())
                .collect(),
            column_hashes: column_hashes(&r.columns),
        }
    }

    /// About what [`Rows::held`] of `row` takes, with its key, in pass 2's map.
    fn held_bytes(&self, r: &Canonical, row: &[Value]) -> u64 {
        const PER_ENTRY: usize = 128; // the map's entry and slack, three allocations
        const PER_VALUE: usize = 40; // a `Value` and its allocation's header
        let values: usize = self
            .layout
            .delete_positions()
            .map(|p| match &row[p] {
                Value::Bytes(b) => PER_VALUE + b.len(),
                _ => PER_VALUE,
            })
            .sum();
        (PER_ENTRY + r.key.len() + values + 8 * r.columns.len()) as u64
    }

    /// A row of the layout with the values [`Rows::held`] kept and NULL elsewhere: what a
    /// delete and [`Rows::key_text`] read.
    fn delete_row(&self, delete_values: &[Value]) -> Vec<Value> {
        let mut row = vec![Value::NULL; self.layout.columns.len()];
        for (p, v) in self.layout.delete_positions().zip(delete_values) {
            row[p] = v.clone();
        }
        row
    }

    fn differing_columns(&self, ours: &[u64], theirs: &[u64]) -> String {
        let names: Vec<&str> = ours
            .iter()
            .zip(theirs)
            .zip(&self.layout.columns)
            .filter(|((a, b), _)| a != b)
            .map(|(_, c)| c.mysql.as_str())
            .collect();
        format!(" (columns {})", names.join(", "))
    }
}

/// What pass 2 holds of one MySQL row (see [`Rows::held`]).
struct Held {
    /// The values of [`Layout::delete_positions`].
    delete_values: Box<[Value]>,
    column_hashes: Box<[u64]>,
}

fn column_hashes(columns: &[Vec<u8>]) -> Box<[u64]> {
    columns
        .iter()
        .map(|c| {
            let mut h = DefaultHasher::new();
            h.write(c);
            h.finish()
        })
        .collect()
}

/// One chunk: its rows, and the wrapping sum of their hashes (order-independent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ChunkSum {
    rows: u64,
    sum: u64,
}

impl ChunkSum {
    fn add(&mut self, row: &Canonical) {
        self.rows += 1;
        self.sum = self.sum.wrapping_add(row.row_hash);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differing_chunks_are_read_again_in_groups_that_fit_in_memory() {
        let sizes = [400, 300, 200, 900, 50, 50];
        let rows = |c: &usize| Size {
            rows: sizes[*c],
            bytes: 1,
        };
        let limit = |rows, bytes| Size { rows, bytes };
        let groups = groups(&[0, 1, 2, 3, 4, 5], rows, limit(600, u64::MAX));
        let as_sorted = |g: &HashSet<usize>| {
            let mut v: Vec<_> = g.iter().copied().collect();
            v.sort();
            v
        };
        let got: Vec<Vec<usize>> = groups.iter().map(as_sorted).collect();
        assert_eq!(got, [vec![0], vec![1, 2], vec![3], vec![4, 5]]);
        // The same chunks bounded by bytes instead: the bytes of each chunk are its rows × 10.
        let bytes = |c: &usize| Size {
            rows: 1,
            bytes: sizes[*c] * 10,
        };
        let by_bytes = super::groups(&[0, 1, 2, 3, 4, 5], bytes, limit(u64::MAX, 6000));
        let got: Vec<Vec<usize>> = by_bytes.iter().map(as_sorted).collect();
        assert_eq!(got, [vec![0], vec![1, 2], vec![3], vec![4, 5]]);
        assert!(super::groups(&[], |_| Size::default(), limit(10, 10)).is_empty());
    }
}
