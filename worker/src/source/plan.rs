//! A snapshot's reading plan for one slot: its splits in a fixed order.

use paimon::spec::DataFileMeta;
use paimon::table::{DataSplit, DataSplitBuilder, IncrementalScanMode, IncrementalSplit};
use pms_crds::contract::{Position, ReadPoint};

/// What one slot reads of one snapshot: its splits in a fixed order, read one after the other,
/// so "n rows into split k" names the same records on every run (the resume position).
pub struct SnapshotPlan {
    pub snapshot_id: i64,
    /// Rows the splits hold (before merging, for a full read): for progress and ETA.
    pub expected_rows: u64,
    splits: Splits,
    /// Names this split list in positions (see [`Position::plan`]).
    fingerprint: u32,
    /// Whether a record's place in the read (split, row) orders it, not its sequence number.
    in_read_order: bool,
}

/// Counts a full read's rows from its checkpoint's position (see [`SnapshotPlan::full_read_rows`]).
pub struct FullReadRows {
    snapshot_id: i64,
    expected_rows: u64,
    split_starts: Vec<u64>,
}

impl FullReadRows {
    /// The rows written before `point`, if it is a point of this full read.
    pub fn at(&self, point: ReadPoint) -> Option<pms_crds::contract::FullReadProgress> {
        let ReadPoint::FullRead { snapshot_id, at } = point else {
            return None;
        };
        if snapshot_id != self.snapshot_id {
            return None;
        }
        let at = at.unwrap_or(Position::START);
        let rows = self
            .split_starts
            .get(at.split as usize)
            .copied()
            .unwrap_or(self.expected_rows)
            + at.row;
        Some(pms_crds::contract::FullReadProgress {
            rows: rows.min(self.expected_rows) as i64,
            expected_rows: self.expected_rows as i64,
        })
    }
}

pub(super) enum Splits {
    /// Merge-on-read splits of a full read.
    Full(Vec<DataSplit>),
    /// A full read of the files as they are stored (see [`upper_levels_oldest_first`]), each
    /// record with its kind and sequence number: the buffer keeps each key's newest record.
    FullAsStored(Vec<DataSplit>),
    /// Delta or changelog splits, read as an audit log (`rowkind`, `_SEQUENCE_NUMBER`, columns).
    Changes(IncrementalScanMode, Vec<IncrementalSplit>),
}

impl SnapshotPlan {
    pub(super) fn new(snapshot_id: i64, expected_rows: u64, splits: Splits) -> Self {
        let fingerprint = fingerprint(&splits);
        Self {
            snapshot_id,
            expected_rows,
            splits,
            fingerprint,
            in_read_order: false,
        }
    }

    /// This plan, its records ordered by their place in the read rather than by sequence
    /// number (which some writers number from 0 each: see `postpone.rs`).
    pub(super) fn in_read_order(mut self) -> Self {
        self.in_read_order = true;
        self
    }

    /// The order of the record at `position` among this plan's changes of one snapshot: its
    /// `sequence` number, or its place in the read (see [`Self::in_read_order`]).
    pub fn sequence_at(&self, position: Position, sequence: i64) -> i64 {
        if self.in_read_order {
            ((position.split as i64) << 32) | position.row as i64
        } else {
            sequence
        }
    }

    /// Names this split list (see [`Position::plan`]).
    pub fn fingerprint(&self) -> u32 {
        self.fingerprint
    }

    pub(super) fn splits(&self) -> &Splits {
        &self.splits
    }

    /// Where a read of this plan starts, given where an earlier run stopped: there, if that
    /// position names a split of this very list; else at the start (re-reading is idempotent),
    /// since another packing of the snapshot's files would skip or repeat other rows.
    pub fn resume_at(&self, from: Position) -> Position {
        if from.is_start() || from.plan == Some(self.fingerprint) {
            return from;
        }
        tracing::warn!(
            snapshot_id = self.snapshot_id,
            ?from,
            plan = self.fingerprint,
            "the checkpointed position was taken in another split plan of this snapshot \
                        (an option or reader change): reading the snapshot from its start"
        );
        Position::START
    }

    pub fn len(&self) -> usize {
        match &self.splits {
            Splits::Full(s) | Splits::FullAsStored(s) => s.len(),
            Splits::Changes(_, s) => s.len(),
        }
    }

    /// The bucket split `index` reads.
    pub fn bucket(&self, index: usize) -> i32 {
        match &self.splits {
            Splits::Full(s) | Splits::FullAsStored(s) => s[index].bucket(),
            Splits::Changes(_, s) => match &s[index] {
                IncrementalSplit::Data(d) => d.bucket(),
                IncrementalSplit::DiffPair { before, after } => {
                    before.iter().chain(after).next().map_or(0, |d| d.bucket())
                }
            },
        }
    }

    /// Whether the splits hold several versions of a key (a full read as stored), to be
    /// reduced to the newest.
    pub fn holds_versions(&self) -> bool {
        matches!(self.splits, Splits::FullAsStored(_))
    }

    /// Whether this is a full read (merge-on-read) rather than a snapshot's changes.
    pub fn is_full_read(&self) -> bool {
        !matches!(self.splits, Splits::Changes(..))
    }

    /// The read point `position` names in this plan.
    pub fn point_at(&self, position: Position) -> ReadPoint {
        let position = if position.is_start() {
            Position::START
        } else {
            Position::new(position.split, position.row, self.fingerprint)
        };
        if self.is_full_read() {
            ReadPoint::FullRead {
                snapshot_id: self.snapshot_id,
                at: Some(position),
            }
        } else {
            ReadPoint::Changes {
                next_snapshot: self.snapshot_id,
                at: position,
            }
        }
    }

    /// What a full read's checkpoint says of its rows: the rows of the splits before a
    /// position, plus the position's row (merged rows are counted against stored ones, so a
    /// table with several versions of a key ends below `expected_rows`).
    pub fn full_read_rows(&self) -> FullReadRows {
        let mut before = 0;
        let split_starts = self
            .full_splits()
            .iter()
            .map(|s| {
                let start = before;
                before += s.row_count().max(0) as u64;
                start
            })
            .collect();
        FullReadRows {
            snapshot_id: self.snapshot_id,
            expected_rows: self.expected_rows,
            split_starts,
        }
    }

    /// A full read's splits (none for a changes plan).
    pub(super) fn full_splits(&self) -> &[DataSplit] {
        match &self.splits {
            Splits::Full(splits) | Splits::FullAsStored(splits) => splits,
            Splits::Changes(..) => &[],
        }
    }

    /// The partition (serialized) and, with `by_bucket`, the bucket of split `index` of a full
    /// read: the group whose keys no split of another group holds.
    pub fn key_group(&self, index: usize, by_bucket: bool) -> (Vec<u8>, Option<i32>) {
        let split = &self.full_splits()[index];
        (
            split.partition().data().to_vec(),
            by_bucket.then(|| split.bucket()),
        )
    }

    /// Keeps the splits of a full read whose partition is in `partitions`.
    pub(super) fn retain_partitions(&mut self, partitions: &std::collections::HashSet<Vec<u8>>) {
        if let Splits::Full(splits) | Splits::FullAsStored(splits) = &mut self.splits {
            splits.retain(|s| partitions.contains(s.partition().data()));
            self.expected_rows = splits.iter().map(|s| s.row_count().max(0) as u64).sum();
        }
        self.fingerprint = fingerprint(&self.splits);
    }

    /// Keeps the splits of a full read whose partition and bucket are in `buckets`.
    pub(super) fn retain_buckets(&mut self, buckets: &std::collections::HashSet<(Vec<u8>, i32)>) {
        if let Splits::Full(splits) | Splits::FullAsStored(splits) = &mut self.splits {
            splits.retain(|s| buckets.contains(&(s.partition().data().to_vec(), s.bucket())));
            self.expected_rows = splits.iter().map(|s| s.row_count().max(0) as u64).sum();
        }
        self.fingerprint = fingerprint(&self.splits);
    }

    /// The partition (serialized) and bucket split `index` reads (`None` for a diff pair).
    pub fn partition_bucket(&self, index: usize) -> Option<(Vec<u8>, i32)> {
        let split = match &self.splits {
            Splits::Full(s) | Splits::FullAsStored(s) => &s[index],
            Splits::Changes(_, s) => match &s[index] {
                IncrementalSplit::Data(d) => d,
                IncrementalSplit::DiffPair { .. } => return None,
            },
        };
        Some((split.partition().data().to_vec(), split.bucket()))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// FNV-1a over byte strings, each followed by a separator (("ab","c") ≠ ("a","bc")): a hash
/// that stays the same across builds, unlike std's.
pub fn fnv1a<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for part in parts {
        for b in part.iter().chain(&[0xff]) {
            hash = (hash ^ u32::from(*b)).wrapping_mul(0x0100_0193);
        }
    }
    hash
}

/// FNV-1a over what makes up each split in order: partition, bucket and data file names.
fn fingerprint(splits: &Splits) -> u32 {
    let mut parts: Vec<Vec<u8>> = Vec::new();
    let mut eat = |bytes: &[u8]| parts.push(bytes.to_vec());
    let mut data_split = |s: &DataSplit| {
        eat(s.partition().data());
        eat(&s.bucket().to_be_bytes());
        for f in s.data_files() {
            eat(f.file_name.as_bytes());
        }
    };
    match splits {
        Splits::Full(s) | Splits::FullAsStored(s) => s.iter().for_each(&mut data_split),
        Splits::Changes(_, s) => {
            for split in s {
                match split {
                    IncrementalSplit::Data(d) => data_split(d),
                    IncrementalSplit::DiffPair { before, after } => {
                        before.iter().chain(after).for_each(&mut data_split)
                    }
                }
            }
        }
    }
    fnv1a(parts.iter().map(Vec::as_slice))
}

/// A stable order for the splits of one plan: bucket, then the first file's name.
pub(super) fn split_order(split: &DataSplit) -> (i32, String) {
    (
        split.bucket(),
        split
            .data_files()
            .first()
            .map(|f| f.file_name.clone())
            .unwrap_or_default(),
    )
}

/// The same split with the files `keep` accepts (and their deletion vectors): the highest
/// level of a full-compaction table, the files a compaction took away (`refresh.rs`), or the
/// files above level 0 (see
/// [`super::TableShape::reads_above_level_0`]).
pub(super) fn files_where(
    split: &DataSplit,
    keep: impl Fn(&DataFileMeta) -> bool,
) -> paimon::Result<DataSplit> {
    let kept: Vec<usize> = (0..split.data_files().len())
        .filter(|&i| keep(&split.data_files()[i]))
        .collect();
    with_files(split, &kept)
}

/// The same split with the files above level 0 only, highest level first. Read as stored, the
/// records of a key come oldest first (a lower level holds newer records), so keeping each
/// key's newest record is Paimon's lookup merge (`LookupMergeFunction`: the newest record above
/// level 0 is already merged with everything older). Level 0 is left out: with the lookup
/// producer its records reach the changelog of the compaction that merges them.
pub(super) fn upper_levels_oldest_first(split: &DataSplit) -> paimon::Result<DataSplit> {
    let files = split.data_files();
    let mut keep: Vec<usize> = (0..files.len()).filter(|&i| files[i].level > 0).collect();
    keep.sort_by_key(|&i| {
        (
            std::cmp::Reverse(files[i].level),
            files[i].min_sequence_number,
        )
    });
    with_files(split, &keep)
}

/// The same split with the files `keep` names, in that order (and their deletion vectors).
pub(super) fn with_files(split: &DataSplit, keep: &[usize]) -> paimon::Result<DataSplit> {
    let files = keep.iter().map(|&i| split.data_files()[i].clone());
    let mut builder = like(split).with_data_files(files.collect());
    if let Some(dv) = split.data_deletion_files() {
        builder = builder.with_data_deletion_files(keep.iter().map(|&i| dv[i].clone()).collect());
    }
    builder.build()
}

/// A split of `split`'s partition and bucket, without files yet.
pub(super) fn like(split: &DataSplit) -> DataSplitBuilder {
    DataSplit::builder()
        .with_snapshot(split.snapshot_id())
        .with_partition(split.partition().clone())
        .with_bucket(split.bucket())
        .with_bucket_path(split.bucket_path().to_string())
        .with_total_buckets(split.total_buckets())
        .with_raw_convertible(split.raw_convertible())
}

/// The rows changes splits hold (for progress).
pub(super) fn rows_of(splits: &[IncrementalSplit]) -> u64 {
    splits
        .iter()
        .map(|s| match s {
            IncrementalSplit::Data(d) => d.row_count().max(0) as u64,
            IncrementalSplit::DiffPair { .. } => 0,
        })
        .sum()
}
