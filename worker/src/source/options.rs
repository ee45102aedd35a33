//! Every Paimon table option the worker knows, and what it does with it: fail closed. An option
//! that changes what a reader must do is either handled exactly (and tested with Paimon Java
//! tables) or refused before the first write, naming it and what to change. An option this list
//! has never heard of is reported by `check`; when it belongs to a family that changes reads
//! (merge, sequence, changelog, deletion vectors, data files, record expiry, branches), it is
//! refused. The guide's option table (docs/guarantees.md) is this list, rendered (a test keeps them equal).

use std::collections::HashMap;

/// What the worker does with one option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handling {
    /// Read exactly; how (or the shape check that decides).
    Exact(&'static str),
    /// Refused when set to anything but its default (the default, the reason and what to change).
    RefusedUnlessDefault(&'static str, &'static str),
    /// Changes nothing a reader sees; why.
    Ignored(&'static str),
}

use Handling::{Exact, Ignored, RefusedUnlessDefault};

const IGNORE_DELETE: &str = "Paimon's writer drops deletes and update-befores before it writes a file (Java `RowKindFilter`), so no change holds one, and its merge ignores those an older file holds; a change of the option between the snapshot applied and the next starts the sync over";
const FILE_FORMAT: &str = "parquet, orc and avro files are read by the `paimon` crate, each by its own format; another format fails the read with an error";
const EXTERNAL_PATHS: &str = "which of the roots a writer puts new data and changelog files in; the manifests name each such file by its absolute path, where the worker reads it (with the warehouse's credentials: a root on another file system or S3 bucket the worker can't reach fails the read, naming the file)";
const REMOVE_ON_DELETE: &str = "a delete removes the merged row: the full read is Paimon's merge, the changes a lookup or full-compaction changelog, whose delete of the row the worker applies";

/// Options by name, or by a prefix ending in `.` or `-` (`fields.` names a column's option: the suffix
/// after the column decides, see [`FIELD_OPTIONS`]).
const OPTIONS: &[(&str, Handling)] = &[
    ("bucket", Exact("the bucket mode decides the shape (`source::shape`); postpone (`-2`): rows are read when a compaction gives them buckets, as Paimon's batch read sees them")),
    ("postpone.default-bucket-num", Ignored("read by Paimon's (Flink) compaction only: the bucket count of a partition that has none yet; a reader takes each partition's count from its files")),
    ("bucket-key", Ignored("decides a row's bucket at write; a slot reads whole buckets")),
    ("bucket-function.type", Ignored("decides a row's bucket at write; a slot reads whole buckets")),
    ("merge-engine", Exact("decides the shape (`source::shape`)")),
    ("changelog-producer", Exact("decides the shape (`source::shape`)")),
    ("changelog-producer.row-deduplicate", Ignored("drops only updates that change nothing")),
    ("changelog-producer.row-deduplicate-ignore-fields", RefusedUnlessDefault("", "an update that changes only these fields makes no changelog, so MySQL would keep their old values; remove the option")),
    ("delete.force-produce-changelog", Ignored("a DELETE statement's changelog: more changes, each read as any other")),
    ("changelog-producer.lookup-wait", Ignored("when a commit waits for its compaction; whenever it runs, a lookup table's level 0 reaches MySQL whole (through its changelog, or at commit with `source.freshness: commit`)")),
    ("changelog.num-retained.min", Ignored("retention: an expired snapshot the sync needs stops it")),
    ("changelog.num-retained.max", Ignored("retention: an expired snapshot the sync needs stops it")),
    ("changelog.time-retained", Ignored("retention: an expired snapshot the sync needs stops it")),
    ("deletion-vectors.enabled", Exact("decides the shape (`source::shape`); read above level 0")),
    ("deletion-vectors.bitmap64", Exact("the 64-bit deletion vector format is read by the `paimon` 0.4.0 crate as the 32-bit one is")),
    ("deletion-vector.index-file.target-size", Ignored("index file layout")),
    ("index-file-in-data-file-dir", RefusedUnlessDefault("false", "index files (deletion vectors, bucket indexes) beside the data files are not read by the `paimon` 0.4.0 crate; remove the option")),
    ("deletion-vectors.merge-on-read", Exact("the full read skips level 0 whatever it says, as Paimon's streaming read does")),
    ("force-lookup", Exact("read above level 0, as every table Paimon reads by lookup")),
    ("sequence.field", Exact("decides the shape (`source::shape`); one field only")),
    ("sequence.field.sort-order", RefusedUnlessDefault("ascending", "a descending sequence is not verified against Paimon's read; remove the option")),
    ("ignore-delete", Exact(IGNORE_DELETE)),
    ("deduplicate.ignore-delete", Exact(IGNORE_DELETE)),
    ("first-row.ignore-delete", Exact(IGNORE_DELETE)),
    ("partial-update.ignore-delete", Exact(IGNORE_DELETE)),
    ("ignore-update-before", Exact("Paimon's writer drops update-befores before writing; the worker applies each +U alone anyway")),
    ("partial-update.remove-record-on-delete", Exact(REMOVE_ON_DELETE)),
    ("aggregation.remove-record-on-delete", Exact(REMOVE_ON_DELETE)),
    ("partial-update.remove-record-on-sequence-group", Exact("partial-update is read from a lookup or full-compaction changelog (its merged rows, a removed record as a delete) and the full read is Paimon's merge, sequence groups included")),
    ("record-level.expire-time", RefusedUnlessDefault("", "expired rows vanish at compaction with no delete in any changelog, so MySQL would keep them; remove the option")),
    ("record-level.time-field", RefusedUnlessDefault("", "goes with record-level.expire-time (refused); remove the option")),
    ("record-level.time-field-type", RefusedUnlessDefault("", "goes with record-level.expire-time (refused); remove the option")),
    ("data-file.thin-mode", RefusedUnlessDefault("false", "files without the key columns are not read by the `paimon` 0.4.0 crate; set it to false")),
    ("data-file.external-paths", Exact(EXTERNAL_PATHS)),
    ("data-file.external-paths.strategy", Exact(EXTERNAL_PATHS)),
    ("data-file.path-directory", RefusedUnlessDefault("", "data files in another directory are not read by this worker; remove the option")),
    ("data-file.prefix", Ignored("file names are read from the manifests")),
    ("changelog-file.", Ignored("changelog file layout (prefix, format, compression, statistics): file names and formats are read from the manifests and the files")),
    ("scan.fallback-", RefusedUnlessDefault("", "a fallback branch's rows are not read by this worker; remove the option")),
    ("branch", RefusedUnlessDefault("main", "only the main branch is read; sync the branch's own table")),
    ("pk-clustering-override", RefusedUnlessDefault("false", "not verified against Paimon's read; remove the option")),
    ("file.format", Exact(FILE_FORMAT)),
    ("file.format.per.level", Exact(FILE_FORMAT)),
    ("file.suffix.include.compression", RefusedUnlessDefault("false", "file names with the compression in their suffix are not verified with the `paimon` 0.4.0 crate; remove the option")),
    ("row-tracking.enabled", RefusedUnlessDefault("false", "row tracking (an append table's feature) is not read by this worker; remove the option")),
    ("data-evolution.enabled", RefusedUnlessDefault("false", "data evolution (an append table's feature) is not read by this worker; remove the option")),
    ("file.compression", Ignored("decoded by the format reader")),
    ("file.compression.per.level", Ignored("decoded by the format reader")),
    ("file.compression.zstd-level", Ignored("decoded by the format reader")),
    ("file.block-size", Ignored("file layout")),
    ("file-index.", Ignored("indexes only skip files; the worker reads every file")),
    ("file-index.read.enabled", Ignored("indexes only skip files; the worker reads every file")),
    ("num-levels", Exact("the highest level a full-compaction changelog table is read at")),
    ("num-sorted-run.compaction-trigger", Exact("gives num-levels when it is not set")),
    ("num-sorted-run.stop-trigger", Ignored("compaction")),
    ("compaction.", Ignored("compaction: what it merges reaches the sync through the snapshots")),
    ("full-compaction.delta-commits", Ignored("compaction: what it merges reaches the sync through the snapshots")),
    ("lookup.", Ignored("the writer's lookup cache")),
    ("lookup-compact", Ignored("when lookup compaction runs; whenever it runs, a lookup table's level 0 reaches MySQL whole (through its changelog, or at commit with `source.freshness: commit`)")),
    ("lookup-compact.", Ignored("when lookup compaction runs; whenever it runs, a lookup table's level 0 reaches MySQL whole (through its changelog, or at commit with `source.freshness: commit`)")),
    ("streaming.read.snapshot.delay", Ignored("a reader's option; the sync polls by its own interval")),
    ("orc.", Ignored("orc writer settings; decoded by the format reader")),
    ("write-only", Ignored("a writer without compaction; whenever it runs, a lookup table's level 0 reaches MySQL whole (through its changelog, or at commit with `source.freshness: commit`)")),
    ("write.compaction-skip", Ignored("a writer without compaction; whenever it runs, a lookup table's level 0 reaches MySQL whole (through its changelog, or at commit with `source.freshness: commit`)")),
    ("lookup-wait", Ignored("when a commit waits for its compaction; whenever it runs, a lookup table's level 0 reaches MySQL whole (through its changelog, or at commit with `source.freshness: commit`)")),
    ("write.", Ignored("writer memory and batching")),
    ("write-max-writers-to-spill", Ignored("writer memory")),
    ("async-file-write", Ignored("how a writer writes its files")),
    ("sort-engine", Ignored("how a writer or a compaction sorts; the order of a key's records is the sequence number")),
    ("sort-spill-buffer-size", Ignored("writer memory")),
    ("spill-compression", Ignored("writer spill files")),
    ("spill-compression.", Ignored("writer spill files")),
    ("local-sort.", Ignored("writer memory")),
    ("sort-compaction.", Ignored("compaction of append tables")),
    ("zorder.", Ignored("compaction of append tables")),
    ("clustering.", Ignored("how a writer clusters rows into files")),
    ("bucket-append-ordered", Ignored("append tables only")),
    ("upsert-key", Ignored("append tables only (Paimon refuses it beside a primary key)")),
    ("cache-page-size", Ignored("reader and writer caches")),
    ("file-reader-async-threshold", Ignored("how files are read")),
    ("file-operation.thread-num", Ignored("file operation threads")),
    ("delete-file.thread-num", Ignored("file operation threads")),
    ("parquet.", Ignored("parquet writer settings; decoded by the format reader")),
    ("source.", Ignored("Flink source splits; a slot reads whole buckets")),
    ("stream-scan-mode", Ignored("a reader's option (system tables)")),
    ("batch-scan-mode", Ignored("a reader's option (system tables)")),
    ("incremental-", Ignored("a batch reader's option")),
    ("end-input.", Ignored("a Flink writer's end of input")),
    ("sink.", Ignored("a Flink writer's options")),
    ("log.", Ignored("the log system's options (a Kafka log beside the table); the worker reads the table's files")),
    ("metastore.", Ignored("Hive metastore synchronisation")),
    ("auto-create", Ignored("catalog behaviour")),
    ("query-auth.enabled", Ignored("catalog behaviour")),
    ("materialized-table.", Ignored("catalog metadata")),
    ("alter-column-null-to-not-null.disabled", Ignored("schema evolution rules; schema changes reach the sync as new schemas")),
    ("disable-explicit-type-casting", Ignored("schema evolution rules; schema changes reach the sync as new schemas")),
    ("dynamic-partition-overwrite", Ignored("which partitions an INSERT OVERWRITE replaces; the worker applies the OVERWRITE snapshot as committed")),
    ("streaming-read-append-overwrite", Ignored("a reader's option; overwrites are always applied")),
    ("data-file.external-paths.specific-fs", Exact(EXTERNAL_PATHS)),
    ("write-buffer-size", Ignored("writer memory")),
    ("write-buffer-spillable", Ignored("writer memory")),
    ("write-buffer-spill.max-disk-size", Ignored("writer memory")),
    ("write-buffer-for-append", Ignored("writer memory")),
    ("write-manifest-cache", Ignored("writer memory")),
    ("local-merge-buffer-size", Ignored("merges in the writer before files are written")),
    ("sort-spill-threshold", Ignored("writer memory")),
    ("page-size", Ignored("writer memory")),
    ("target-file-size", Ignored("file sizes")),
    ("dynamic-bucket.", Ignored("decides a row's bucket at write; a slot reads whole buckets")),
    ("cross-partition-upsert.", Ignored("the writer's key index; moves reach the sync as deletes and inserts")),
    ("cross-partition-upsert.index-ttl", RefusedUnlessDefault("", "a key whose index entry expired is written again in its new partition without a delete in its old one, so Paimon itself then holds one key in two partitions, which a MySQL table keyed without the partition can't; remove the option")),
    ("manifest.", Ignored("manifest layout")),
    ("snapshot.", Ignored("retention and commit bookkeeping: a consumer file keeps what the sync needs, an expired snapshot stops it")),
    ("consumer.", Ignored("the consumer file's expiry: `check` tells whether it covers the downtime")),
    ("consumer-id", Ignored("a reader's option; the sync names its own consumer")),
    ("tag.", Ignored("tags only keep snapshots")),
    ("partition.", Ignored("partition expiry and naming: an expired partition is an overwrite snapshot, applied as one")),
    ("partition", Ignored("the partition keys, read from the schema")),
    ("primary-key", Ignored("the primary key, read from the schema")),
    ("path", Ignored("the table's path, from the catalog")),
    ("type", Ignored("the table type; only primary-key tables are opened")),
    ("commit.", Ignored("commit bookkeeping")),
    ("metadata.", Ignored("statistics")),
    ("scan.", Ignored("a reader's start position; the sync's start is in its own config")),
    ("streaming-read-overwrite", Ignored("a reader's option; overwrites are always applied")),
    ("streaming-read-mode", Ignored("a reader's option")),
    ("read.batch-size", Ignored("a reader's option")),
    ("table-read.", Ignored("a reader's option (the worker sets table-read.sequence-number.enabled to order changes)")),
    ("continuous.discovery-interval", Ignored("a reader's option; the sync polls by its own interval")),
    ("rowkind.field", Ignored("decides the kind of each written record; the files hold the kinds")),
    ("visibility-callback.enabled", Ignored("commit notification")),
    ("owner", Ignored("catalog metadata")),
    ("comment", Ignored("catalog metadata")),
];

/// The options of one column, `fields.<column>.<suffix>`, by suffix.
const FIELD_OPTIONS: &[(&str, Handling)] = &[
    (
        "aggregate-function",
        Exact("aggregation with a lookup changelog is read as stored (the newest merged record)"),
    ),
    (
        "ignore-retract",
        Exact("aggregation with a lookup changelog is read as stored (the newest merged record)"),
    ),
    (
        "distinct",
        Exact("aggregation with a lookup changelog is read as stored (the newest merged record)"),
    ),
    (
        "list-agg-delimiter",
        Exact("aggregation with a lookup changelog is read as stored (the newest merged record)"),
    ),
    (
        "count-limit",
        Exact("aggregation with a lookup changelog is read as stored (the newest merged record)"),
    ),
    ("stats-mode", Ignored("statistics")),
    (
        "nested-key",
        Exact("aggregation with a lookup changelog is read as stored (the newest merged record)"),
    ),
    (
        "sequence-group",
        Exact("partial-update is read from a lookup or full-compaction changelog (its merged rows) and the full read is Paimon's merge, sequence groups included"),
    ),
    (
        "default-value",
        RefusedUnlessDefault(
            "",
            "a default filled in at read is not applied by this worker; remove the option",
        ),
    ),
];

/// The families of options that change what a reader must do: an unknown option in one is
/// refused, not guessed at.
const READ_FAMILIES: &[&str] = &[
    "merge-engine",
    "partial-update.",
    "first-row.",
    "deduplicate.",
    "aggregation.",
    "fields.",
    "sequence.",
    "changelog",
    "deletion-vector",
    "data-file.",
    "index-file",
    "record-level.",
    "branch",
    "scan.fallback",
    "ignore-delete",
    "force-lookup",
    "pk-clustering",
    "chain",
];

/// What the table's options come to: the refusals (each naming its option) and the options the
/// list doesn't know (reported by `check`, harmless outside the read families).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Judged {
    pub refused: Vec<String>,
    pub unknown: Vec<String>,
}

pub fn judge(options: &HashMap<String, String>) -> Judged {
    let mut judged = Judged::default();
    let mut keys: Vec<&String> = options.keys().collect();
    keys.sort();
    for key in keys {
        let value = options[key].trim();
        match handling(key) {
            Some(RefusedUnlessDefault(default, why)) if !value.eq_ignore_ascii_case(default) => {
                judged.refused.push(format!("{key} = {value:?}: {why}"));
            }
            Some(_) => {}
            None if READ_FAMILIES.iter().any(|f| key.starts_with(f)) => judged.refused.push(format!(
                "{key} = {value:?} is unknown to this worker and may change what a reader must do; remove it, or \
                 use a release that knows it"
            )),
            None => judged.unknown.push(key.clone()),
        }
    }
    if options
        .get("sequence.field")
        .is_some_and(|f| f.contains(','))
    {
        judged.refused.push(
            "sequence.field with several fields is not verified against Paimon's read; use one field".into(),
        );
    }
    judged
}

/// Whether a name of the list is a family of options (`compaction.`, `scan.fallback-`).
fn is_prefix(name: &str) -> bool {
    name.ends_with('.') || name.ends_with('-')
}

/// How `key` is handled, if the list knows it.
fn handling(key: &str) -> Option<Handling> {
    if let Some(column_option) = key.strip_prefix("fields.") {
        if column_option == "default-aggregate-function" {
            return Some(FIELD_OPTIONS[0].1);
        }
        let (_, suffix) = column_option.split_once('.')?;
        return FIELD_OPTIONS
            .iter()
            .find(|(s, _)| *s == suffix)
            .map(|(_, h)| *h);
    }
    OPTIONS
        .iter()
        .find(|(name, _)| *name == key)
        .or_else(|| {
            OPTIONS
                .iter()
                .filter(|(name, _)| is_prefix(name) && key.starts_with(name))
                .max_by_key(|(name, _)| name.len())
        })
        .map(|(_, h)| *h)
}

/// The guide's option table in docs/guarantees.md (tested against it, below).
#[cfg(test)]
pub fn readme_table() -> String {
    let mut out = String::from("| option | handling |\n|---|---|\n");
    let row = |name: String, h: &Handling| match h {
        Exact(how) => format!("| `{name}` | exact: {how} |\n"),
        RefusedUnlessDefault("", why) => {
            format!("| `{name}` | refused when set: {why} |\n")
        }
        RefusedUnlessDefault(default, why) => {
            format!("| `{name}` | refused unless `{default}`: {why} |\n")
        }
        Ignored(why) => format!("| `{name}` | ignored: {why} |\n"),
    };
    for (name, h) in OPTIONS {
        let name = if is_prefix(name) {
            format!("{name}*")
        } else {
            name.to_string()
        };
        out.push_str(&row(name, h));
    }
    for (suffix, h) in FIELD_OPTIONS {
        out.push_str(&row(format!("fields.<column>.{suffix}"), h));
    }
    out.push_str(&format!(
        "| any other option in a family that changes reads ({}) | refused: unknown |\n| any other option | reported by `check` (⚠), otherwise ignored |\n",
        READ_FAMILIES
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge_of(options: &[(&str, &str)]) -> Judged {
        judge(
            &options
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn options_that_change_reads_are_refused_unless_at_their_default() {
        let j = judge_of(&[
            ("data-file.thin-mode", "true"),
            ("record-level.expire-time", "1 d"),
            ("fields.a.default-value", "0"),
            ("sequence.field", "a,b"),
            ("changelog.brand-new", "x"),
            ("ignore-delete", "false"),
            ("fields.total.aggregate-function", "sum"),
            ("snapshot.num-retained.max", "10"),
            ("some.option.from.the.future", "1"),
        ]);
        let text = j.refused.join("\n");
        for needle in [
            "data-file.thin-mode = \"true\"",
            "record-level.expire-time",
            "fields.a.default-value = \"0\"",
            "sequence.field with several fields",
            "changelog.brand-new = \"x\" is unknown",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        assert_eq!(j.refused.len(), 5, "{text}");
        assert_eq!(j.unknown, ["some.option.from.the.future"]);
    }

    /// Paimon 1.3.1's own option list (`CoreOptions`, its fallback keys, an example of each
    /// pattern): every option is handled, refused or ignored by name, none is "unknown".
    #[test]
    fn every_option_of_paimon_1_3_1_is_known() {
        let unknown: Vec<&str> = include_str!("paimon-1.3.1-options.txt")
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .filter(|key| handling(key).is_none())
            .collect();
        assert!(
            unknown.is_empty(),
            "options of Paimon 1.3.1 the worker doesn't know: {unknown:?}"
        );
    }

    #[test]
    fn the_scan_prefix_does_not_shadow_the_fallback_family() {
        let j = judge_of(&[("scan.fallback-delta-branch", "b"), ("scan.mode", "latest")]);
        assert_eq!(j.refused.len(), 1, "{:?}", j.refused);
        assert!(j.refused[0].starts_with("scan.fallback-delta-branch"));
    }

    #[test]
    fn the_guide_shows_this_list() {
        let readme = include_str!("../../../docs/guarantees.md");
        let table = readme_table();
        assert!(
            readme.contains(&table),
            "docs/guarantees.md's option table is stale; this is the table:\n{table}"
        );
    }
}
