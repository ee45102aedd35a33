//! Which Paimon primary-key table shapes the worker reproduces exactly, decided from the
//! table's options before anything is read or written. A shape we can't reproduce exactly
//! (or can't tell) is refused with the option to change, never synced approximately.

use std::collections::HashMap;

use pms_crds::Freshness;

/// `ignore-delete` and the keys Paimon falls back to (`CoreOptions.IGNORE_DELETE`).
const IGNORE_DELETE_KEYS: [&str; 4] = [
    "ignore-delete",
    "first-row.ignore-delete",
    "deduplicate.ignore-delete",
    "partial-update.ignore-delete",
];

/// The options that decide how a table's changes must be read, with Paimon's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableShape {
    pub bucket: i32,
    pub merge_engine: String,
    pub changelog_producer: String,
    pub deletion_vectors: bool,
    /// `sequence.field`: a user-defined order of the changes of a key.
    pub sequence_field: Option<String>,
    /// `force-lookup`: read by lookup whatever the producer.
    pub force_lookup: bool,
    /// `num-levels`, else `num-sorted-run.compaction-trigger` + 1 (Paimon's default).
    pub num_levels: i32,
    /// `ignore-delete` (or one of its aliases): Paimon's writer drops retractions before it
    /// writes a file, and its merge ignores those an older file holds.
    pub ignore_delete: bool,
}

impl TableShape {
    pub fn from_options(options: &HashMap<String, String>) -> Result<Self, String> {
        let get = |k: &str, default: &str| {
            options
                .get(k)
                .map_or(default.to_string(), |v| v.trim().to_ascii_lowercase())
        };
        let bucket = get("bucket", "-1");
        let number = |k: &str| options.get(k).and_then(|v| v.trim().parse::<i32>().ok());
        let num_levels = number("num-levels")
            .or_else(|| number("num-sorted-run.compaction-trigger").map(|t| t + 1))
            .unwrap_or(6);
        Ok(Self {
            bucket: bucket
                .parse()
                .map_err(|_| format!("table option bucket = {bucket:?} is not a number"))?,
            merge_engine: get("merge-engine", "deduplicate"),
            changelog_producer: get("changelog-producer", "none"),
            deletion_vectors: get("deletion-vectors.enabled", "false") == "true",
            sequence_field: options.get("sequence.field").cloned(),
            force_lookup: get("force-lookup", "false") == "true",
            num_levels,
            ignore_delete: IGNORE_DELETE_KEYS.iter().any(|k| get(k, "false") == "true"),
        })
    }

    /// With `changelog-producer=full-compaction`, the level the full read takes alone. Each
    /// changelog is the difference between the files of the highest level before and after a
    /// full compaction; rows only in lower levels (not yet compacted) are neither "before" nor
    /// visible as changes until that compaction, so a full read that took them would miss the
    /// delete of a row inserted and deleted between two compactions. (Flink's latest-full reads
    /// all levels and has exactly that gap.)
    pub fn full_compaction_max_level(&self) -> Option<i32> {
        (self.changelog_producer == "full-compaction").then_some(self.num_levels - 1)
    }

    /// The partition fields a key can move between: those outside the primary key of a
    /// cross-partition-update table (`bucket = -1`). A move is a delete in the old partition
    /// and an insert in the new one, in buckets whose sequence numbers can't be compared, so
    /// deletes are applied only to the row still in the partition they come from.
    pub fn moving_partition_fields<'a>(
        &self,
        primary_keys: &[String],
        partition_keys: &'a [String],
    ) -> Vec<&'a String> {
        if self.bucket != -1 {
            return Vec::new();
        }
        partition_keys
            .iter()
            .filter(|p| !primary_keys.contains(p))
            .collect()
    }

    /// Whether the full read must read the files as stored and keep each key's newest record
    /// (Paimon's lookup merge) rather than merge every level: an aggregation table compacted
    /// by lookup holds, in its newest record above level 0, the aggregate of everything older,
    /// so merging the levels again would count contributions twice.
    pub fn full_read_as_stored(&self) -> bool {
        self.merge_engine == "aggregation" && self.changelog_producer == "lookup"
    }

    /// Whether Paimon reads this table by lookup (`CoreOptions.needLookup`: the lookup producer,
    /// deletion vectors, first-row): its level-0 files are not yet merged into what a reader
    /// sees (Java's streaming read skips them at its first plan, `DataTableStreamScan`, and so
    /// does its batch read of deletion vectors). Their records reach the changelog, or the
    /// deletion vectors, of the compaction that merges them; a full read that took them would
    /// write rows that compaction may never report again (a key inserted and deleted inside
    /// level 0 has no changelog), so the full read skips level 0 too.
    pub fn reads_above_level_0(&self) -> bool {
        self.changelog_producer == "lookup"
            || self.deletion_vectors
            || self.merge_engine == "first-row"
            || self.force_lookup
    }

    /// Whether a full read must find no level-0 file in its buckets: a table read above level 0
    /// whose changes are its delta files (producer `none` or `input`, e.g. deletion vectors).
    /// Its full read can't take level 0, and no later snapshot brings those files' records
    /// again, so a snapshot that still holds some can't be the full read's.
    pub fn full_read_needs_level_0_compacted(&self) -> bool {
        self.reads_above_level_0() && !self.full_row_changelog()
    }

    /// Whether this is a postpone-bucket table without a changelog producer, whose rows
    /// become visible (and are read) when a compaction gives them buckets: that compaction's
    /// snapshot writes no changes of its own (see `postpone.rs`).
    pub fn postpone_rows_arrive_by_compaction(&self) -> bool {
        self.bucket == super::postpone::POSTPONE_BUCKET && self.changelog_producer == "none"
    }

    /// Whether a snapshot's changes only name the keys it touched, whose rows are read again
    /// from Paimon's merge: `sequence.field` without a full-row changelog (see `refresh.rs`).
    pub fn changes_name_keys_only(&self) -> bool {
        self.sequence_field.is_some() && !self.full_row_changelog()
    }

    /// Whether snapshots written under `other` are read as this shape reads them, so that an
    /// `ALTER TABLE … SET` from one to the other needs nothing of the snapshots around it. The
    /// producers `none` and `input` of a deduplicate table are alike: each snapshot's changes are
    /// its delta, or its input changelog (the same records) when it has one
    /// ([`TableShape::reads_delta_without_changelog`]).
    pub fn reads_alike(&self, other: &TableShape) -> bool {
        let how = |s: &TableShape| {
            (
                s.merge_engine.clone(),
                s.sequence_field.clone(),
                s.deletion_vectors,
                s.force_lookup,
                s.ignore_delete,
                s.full_compaction_max_level(),
            )
        };
        let delta_alike = |s: &TableShape| {
            s.merge_engine == "deduplicate"
                && matches!(s.changelog_producer.as_str(), "none" | "input")
        };
        how(self) == how(other)
            && (self.changelog_producer == other.changelog_producer
                || (delta_alike(self) && delta_alike(other)))
    }

    /// Whether an APPEND snapshot without a changelog is read by its delta files: with
    /// `input`, such a snapshot was committed by a writer running without a producer (one
    /// started before an `ALTER TABLE … SET ('changelog-producer' = 'input')`, or another
    /// engine's writer); its delta holds its changes, and skipping it would lose them.
    pub fn reads_delta_without_changelog(&self) -> bool {
        self.changelog_producer == "input" && self.merge_engine == "deduplicate"
    }

    /// The shape `source.freshness: commit` reads this table as: without a producer, so each
    /// commit's level-0 files are its changes (and the full read takes level 0), as a Paimon
    /// batch query sees the table at each snapshot. `Ok(None)` when the table is read at commit
    /// already (producer `none` or `input`). A table whose level-0 records are not its rows
    /// (partial-update, aggregation, first-row) or are read by lookup whatever the producer
    /// (deletion vectors, `force-lookup`), or whose rows have no bucket until a compaction
    /// (postpone), can't be: the reasons.
    pub fn read_at_commit(&self) -> Result<Option<TableShape>, Vec<String>> {
        if !self.full_row_changelog() {
            return Ok(None);
        }
        let producer = &self.changelog_producer;
        let mut refused = Vec::new();
        if self.merge_engine != "deduplicate" {
            refused.push(format!(
                "source.freshness: commit with merge-engine = {}: its level-0 records are {}, not rows; only its \
                 changelog ({producer}) says the merged row, so leave source.freshness unset",
                self.merge_engine,
                match self.merge_engine.as_str() {
                    "first-row" => "later duplicates of the first row",
                    "aggregation" => "contributions",
                    _ => "partial rows",
                }
            ));
        }
        if self.deletion_vectors || self.force_lookup {
            refused.push(format!(
                "source.freshness: commit with {}: Paimon's own read leaves level 0 out until a compaction, so \
                 there is nothing to read at commit; leave source.freshness unset",
                if self.deletion_vectors { "deletion-vectors.enabled = true" } else { "force-lookup = true" }
            ));
        }
        if self.bucket == super::postpone::POSTPONE_BUCKET {
            refused.push(
                "source.freshness: commit with bucket = -2 (postpone): its rows are in no bucket, and no reader \
                 sees them, until a compaction; leave source.freshness unset"
                    .into(),
            );
        }
        if !refused.is_empty() {
            return Err(refused);
        }
        Ok(Some(TableShape {
            changelog_producer: "none".into(),
            ..self.clone()
        }))
    }

    /// What of the reading differs from `before`'s, for messages.
    pub fn difference_from(&self, before: &TableShape) -> String {
        type Field = (&'static str, fn(&TableShape) -> String);
        let fields: [Field; 7] = [
            ("changelog-producer", |s| s.changelog_producer.clone()),
            ("merge-engine", |s| s.merge_engine.clone()),
            ("sequence.field", |s| format!("{:?}", s.sequence_field)),
            ("deletion-vectors.enabled", |s| {
                s.deletion_vectors.to_string()
            }),
            ("force-lookup", |s| s.force_lookup.to_string()),
            ("ignore-delete", |s| s.ignore_delete.to_string()),
            ("num-levels", |s| s.num_levels.to_string()),
        ];
        fields
            .iter()
            .filter_map(|(name, of)| {
                let (a, b) = (of(before), of(self));
                (a != b).then(|| format!("{name} {a} -> {b}"))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether the producer writes whole rows for every change (so partial or aggregated
    /// merges are already applied in what we read).
    fn full_row_changelog(&self) -> bool {
        matches!(
            self.changelog_producer.as_str(),
            "lookup" | "full-compaction"
        )
    }
}

/// The shape the worker reads a table with these options as, under `source.freshness`, and
/// whether that is not the table's own (`commit` read a table with a producer as without).
pub fn read_shape(
    options: &HashMap<String, String>,
    freshness: Freshness,
) -> Result<(TableShape, bool), Vec<String>> {
    let shape = TableShape::from_options(options).map_err(|e| vec![e])?;
    if freshness == Freshness::Changelog {
        return Ok((shape, false));
    }
    Ok(match shape.read_at_commit()? {
        Some(at_commit) => (at_commit, true),
        None => (shape, false),
    })
}

/// What `slots` slots can't reproduce of this table, each naming what to change: the rows a
/// postpone table's compaction gives buckets, read from its postpone files, have no bucket yet,
/// so they can't be split between slots (which own buckets).
pub fn check_slots(shape: &TableShape, slots: u32) -> Vec<String> {
    if slots > 1 && shape.postpone_rows_arrive_by_compaction() {
        vec![format!(
            "bucket = -2 (postpone) with changelog-producer = none is read by one slot only (its rows have no \
             bucket until the compaction, and {slots} slots each own some buckets); set parallelism 1, or \
             changelog-producer = input or lookup"
        )]
    } else {
        Vec::new()
    }
}

/// What the table's keys can't reproduce: a key that moves between partitions (a
/// cross-partition-update table) is in two buckets of one snapshot, which re-reading the keys
/// a snapshot touched from Paimon's merge (`changes_name_keys_only`) is not verified for.
pub fn check_moving_keys(
    shape: &TableShape,
    primary_keys: &[String],
    partition_keys: &[String],
) -> Vec<String> {
    if shape.changes_name_keys_only()
        && !shape
            .moving_partition_fields(primary_keys, partition_keys)
            .is_empty()
    {
        vec![format!(
            "sequence.field with changelog-producer = {} on a cross-partition-update table (its keys move between \
             partitions) is not verified against Paimon's read; set changelog-producer = lookup",
            shape.changelog_producer
        )]
    } else {
        Vec::new()
    }
}

/// `Ok` when the worker reproduces this table exactly; otherwise every reason, each naming
/// the option to change.
pub fn check_shape(shape: &TableShape) -> Result<(), Vec<String>> {
    let mut refused = Vec::new();
    let producer = shape.changelog_producer.as_str();
    if !matches!(producer, "none" | "input" | "lookup" | "full-compaction") {
        refused.push(format!(
            "changelog-producer = {producer:?} is unknown to this worker"
        ));
    }
    if shape.bucket < -2 || shape.bucket == 0 {
        refused.push(format!(
            "bucket = {} is not a bucket mode Paimon knows: set a bucket count, -1 (dynamic) or -2 (postpone)",
            shape.bucket
        ));
    }
    if shape.bucket == super::postpone::POSTPONE_BUCKET {
        if shape.changes_name_keys_only() {
            // Its rows arrive by a COMPACT snapshot, whose delta names no key and whose
            // postpone files are in write order, not ordered by the field.
            refused.push(format!(
                "bucket = -2 (postpone) with sequence.field and changelog-producer = {producer} is not supported: \
                 the rows its compaction gives buckets come in write order, not ordered by the field; set \
                 changelog-producer = lookup"
            ));
        }
        if shape.deletion_vectors {
            refused.push(
                "bucket = -2 (postpone) with deletion-vectors.enabled = true is not supported yet (its compaction \
                 is not verified against Paimon's read); disable deletion vectors or set a bucket count"
                    .into(),
            );
        }
        if producer == "full-compaction" {
            refused.push(
                "bucket = -2 (postpone) with changelog-producer = full-compaction is not supported yet (not \
                 verified against Paimon's read); set changelog-producer = lookup, input or none"
                    .into(),
            );
        }
    }
    match shape.merge_engine.as_str() {
        "deduplicate" => {}
        "partial-update" | "first-row" if shape.full_row_changelog() => {}
        engine @ ("partial-update" | "first-row") => refused.push(format!(
            "merge-engine = {engine} with changelog-producer = {producer}: the changes hold {} rows, not the merged row; \
             set changelog-producer = lookup (or full-compaction)",
            if engine == "partial-update" { "partial" } else { "duplicate" }
        )),
        "aggregation" if shape.deletion_vectors => refused.push(
            "merge-engine = aggregation with deletion-vectors.enabled = true is not supported yet (its full read \
             is not verified against Paimon's); disable deletion vectors"
                .into(),
        ),
        "aggregation" if shape.full_row_changelog() => {}
        "aggregation" => refused.push(format!(
            "merge-engine = aggregation with changelog-producer = {producer}: the changes are the contributions, \
             not the aggregated rows; set changelog-producer = lookup (or full-compaction)"
        )),
        other => refused.push(format!("merge-engine = {other:?} is unknown to this worker")),
    }
    if shape.changes_name_keys_only() && shape.reads_above_level_0() {
        // Each snapshot's keys are read again from Paimon's merge at it, which can't take the
        // level-0 files the snapshot itself wrote (they are not compacted yet): every snapshot
        // would wait for a compaction it can never see.
        refused.push(format!(
            "sequence.field with {} and changelog-producer = {producer}: the keys each snapshot touched are read \
             again from Paimon's merge at that snapshot, which doesn't take the level-0 files the snapshot wrote; \
             set changelog-producer = lookup",
            if shape.deletion_vectors { "deletion-vectors.enabled = true" } else { "force-lookup = true" }
        ));
    }
    if let Some(field) = &shape.sequence_field {
        // A full-row changelog is already ordered by the field: a late record with a smaller
        // value changes no merged row, so it makes no change. Without one, the keys a snapshot
        // touched are read again from Paimon's merge (`changes_name_keys_only`).
        if shape.merge_engine == "aggregation" {
            refused.push(format!(
                "sequence.field = {field:?} with merge-engine = aggregation is not supported yet (not verified \
                 against Paimon's read); remove the option"
            ));
        }
    }
    if refused.is_empty() {
        Ok(())
    } else {
        Err(refused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(options: &[(&str, &str)]) -> Result<TableShape, String> {
        let options: HashMap<String, String> = options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        TableShape::from_options(&options)
    }

    fn check(options: &[(&str, &str)]) -> Result<(), Vec<String>> {
        check_shape(&shape(options).map_err(|e| vec![e])?)
    }

    #[test]
    fn freshness_commit_reads_a_deduplicate_table_with_a_producer_as_without_one() {
        let at_commit = |options: &[(&str, &str)]| {
            let options: HashMap<String, String> = options
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            read_shape(&options, Freshness::Commit)
        };
        for producer in ["lookup", "full-compaction"] {
            let (read, changed) = at_commit(&[("changelog-producer", producer)]).unwrap();
            assert!(changed, "{producer}");
            assert_eq!(read.changelog_producer, "none");
            assert!(!read.reads_above_level_0() && read.full_compaction_max_level().is_none());
            assert!(check_shape(&read).is_ok());
        }
        for producer in ["none", "input"] {
            let (read, changed) = at_commit(&[("changelog-producer", producer)]).unwrap();
            assert!(
                !changed && read.changelog_producer == producer,
                "already at commit"
            );
        }
        for (options, why) in [
            (vec![("merge-engine", "partial-update")], "partial rows"),
            (vec![("merge-engine", "aggregation")], "contributions"),
            (vec![("merge-engine", "first-row")], "duplicates"),
            (
                vec![("deletion-vectors.enabled", "true")],
                "deletion-vectors",
            ),
            (vec![("force-lookup", "true")], "force-lookup"),
            (vec![("bucket", "-2")], "postpone"),
        ] {
            let mut options = options;
            options.push(("changelog-producer", "lookup"));
            let refused = at_commit(&options).unwrap_err().join("; ");
            assert!(refused.contains(why), "{options:?}: {refused}");
        }
    }

    #[test]
    fn supported_shapes_pass() {
        for producer in ["none", "input", "lookup", "full-compaction"] {
            assert!(check(&[("bucket", "4"), ("changelog-producer", producer)]).is_ok());
        }
        assert!(check(&[]).is_ok(), "dynamic bucket");
        for engine in ["partial-update", "first-row", "aggregation"] {
            assert!(check(&[("merge-engine", engine), ("changelog-producer", "lookup")]).is_ok());
        }
        assert!(check(&[("sequence.field", "ts"), ("changelog-producer", "lookup")]).is_ok());
        for producer in ["none", "input"] {
            let keyed =
                shape(&[("sequence.field", "ts"), ("changelog-producer", producer)]).unwrap();
            assert!(check_shape(&keyed).is_ok() && keyed.changes_name_keys_only());
        }
        assert!(
            !shape(&[("sequence.field", "ts"), ("changelog-producer", "lookup")])
                .unwrap()
                .changes_name_keys_only()
        );
        for producer in ["none", "input", "lookup"] {
            let postpone = shape(&[("bucket", "-2"), ("changelog-producer", producer)]).unwrap();
            assert!(check_shape(&postpone).is_ok(), "postpone, {producer}");
            let one_slot_only = producer == "none";
            assert_eq!(
                check_slots(&postpone, 3).is_empty(),
                !one_slot_only,
                "{producer}"
            );
            assert!(check_slots(&postpone, 1).is_empty());
        }
        for producer in ["none", "input", "lookup"] {
            assert!(check(&[
                ("deletion-vectors.enabled", "true"),
                ("changelog-producer", producer)
            ])
            .is_ok());
        }
    }

    #[test]
    fn re_read_keys_are_refused_where_keys_move_between_partitions() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let (pk, part) = (s(&["id"]), s(&["region"]));
        let keyed = shape(&[("bucket", "-1"), ("sequence.field", "ts")]).unwrap();
        assert!(check_moving_keys(&keyed, &pk, &part)[0].contains("cross-partition-update"));
        assert!(check_moving_keys(&keyed, &s(&["id", "region"]), &part).is_empty());
        let lookup = shape(&[
            ("bucket", "-1"),
            ("sequence.field", "ts"),
            ("changelog-producer", "lookup"),
        ]);
        assert!(check_moving_keys(&lookup.unwrap(), &pk, &part).is_empty());
    }

    #[test]
    fn only_cross_partition_tables_have_moving_partition_fields() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let (pk, part) = (s(&["id", "day"]), s(&["region", "day"]));
        let dynamic = shape(&[("bucket", "-1")]).unwrap();
        assert_eq!(dynamic.moving_partition_fields(&pk, &part), ["region"]);
        assert!(dynamic
            .moving_partition_fields(&s(&["id", "region", "day"]), &part)
            .is_empty());
        let fixed = shape(&[("bucket", "4")]).unwrap();
        assert!(fixed.moving_partition_fields(&pk, &part).is_empty());
    }

    #[test]
    fn inexact_shapes_are_refused_naming_the_option() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("bucket", "-3")], "not a bucket mode Paimon knows"),
            (
                &[("bucket", "-2"), ("sequence.field", "ts")],
                "not ordered by the field; set changelog-producer = lookup",
            ),
            (
                &[("bucket", "-2"), ("deletion-vectors.enabled", "true")],
                "disable deletion vectors or set a bucket count",
            ),
            (
                &[("bucket", "-2"), ("changelog-producer", "full-compaction")],
                "set changelog-producer = lookup, input or none",
            ),
            (
                &[
                    ("merge-engine", "partial-update"),
                    ("changelog-producer", "input"),
                ],
                "set changelog-producer = lookup",
            ),
            (&[("merge-engine", "first-row")], "duplicate rows"),
            (
                &[("merge-engine", "aggregation")],
                "not the aggregated rows",
            ),
            (
                &[
                    ("merge-engine", "aggregation"),
                    ("changelog-producer", "lookup"),
                    ("deletion-vectors.enabled", "true"),
                ],
                "disable deletion vectors",
            ),
            (
                &[
                    ("merge-engine", "aggregation"),
                    ("changelog-producer", "lookup"),
                    ("sequence.field", "ts"),
                ],
                "with merge-engine = aggregation",
            ),
            (
                &[
                    ("sequence.field", "ts"),
                    ("deletion-vectors.enabled", "true"),
                ],
                "which doesn't take the level-0 files the snapshot wrote",
            ),
            (
                &[
                    ("sequence.field", "ts"),
                    ("force-lookup", "true"),
                    ("changelog-producer", "input"),
                ],
                "force-lookup = true and changelog-producer = input",
            ),
        ];
        for (options, needle) in cases {
            let refused = check(options).expect_err(needle).join("\n");
            assert!(refused.contains(needle), "{needle}: {refused}");
        }
        assert!(shape(&[("bucket", "four")])
            .unwrap_err()
            .contains("not a number"));
    }
}
