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

/// Options by name, or by a prefix ending in `.` (`fields.` names a column's option: the suffix
/// after the column decides, see [`FIELD_OPTIONS`]).
const OPTIONS: &[(&str, Handling)] = &[
    ("bucket", Exact("the bucket mode decides the shape (`source::shape`); postpone (`-2`): rows are read when a compaction gives them buckets, as Paimon's batch read sees them")),
    ("postpone.default-bucket-num", Ignored("read by Paimon's (Flink) compaction only: the bucket count of a partition that has none yet; a reader takes each partition's count from its files")),
    ("bucket-key", Ignored("decides a row's bucket at write; a slot reads whole buckets")),
    ("bucket-function.type", Ignored("decides a row's bucket at write; a slot reads whole buckets")),
    ("merge-engine", Exact("decides the shape (`source::shape`)")),
    ("changelog-producer", Exact("decides the shape (`source::shape`)")),
    ("changelog-producer.row-deduplicate", Ignored("drops only updates that change nothing")),
    ("changelog-producer.lookup-wait", Ignored("when a commit waits for its compaction; level 0 is never read by lookup tables")),
    ("changelog.num-retained.min", Ignored("retention: an expired snapshot the sync needs stops it")),
    ("changelog.num-retained.max", Ignored("retention: an expired snapshot the sync needs stops it")),
    ("changelog.time-retained", Ignored("retention: an expired snapshot the sync needs stops it")),
    ("deletion-vectors.enabled", Exact("decides the shape (`source::shape`); read above level 0")),
    ("deletion-vectors.bitmap64", Exact("the 64-bit deletion vector format is read by the `paimon` 0.4.0 crate as the 32-bit one is")),
    ("deletion-vectors.index-file.target-size", Ignored("index file layout")),
    ("deletion-vectors.merge-on-read", Exact("the full read skips level 0 whatever it says, as Paimon's streaming read does")),
    ("force-lookup", Exact("read above level 0, as every table Paimon reads by lookup")),
    ("sequence.field", Exact("decides the shape (`source::shape`); one field only")),
    ("sequence.field.sort-order", RefusedUnlessDefault("ascending", "a descending sequence is not verified against Paimon's read; remove the option")),
    ("ignore-delete", RefusedUnlessDefault("false", "deletes dropped by the writer are not verified against Paimon's read; remove the option")),
    ("deduplicate.ignore-delete", RefusedUnlessDefault("false", "deletes dropped by the writer are not verified against Paimon's read; remove the option")),
    ("first-row.ignore-delete", RefusedUnlessDefault("false", "deletes dropped by the writer are not verified against Paimon's read; remove the option")),
    ("partial-update.ignore-delete", RefusedUnlessDefault("false", "deletes dropped by the writer are not verified against Paimon's read; remove the option")),
    ("partial-update.remove-record-on-delete", RefusedUnlessDefault("false", "not verified against Paimon's read; remove the option")),
    ("partial-update.remove-record-on-sequence-group", RefusedUnlessDefault("", "sequence groups are not read by this worker; remove the option")),
    ("record-level.expire-time", RefusedUnlessDefault("", "expired rows vanish at compaction with no delete in any changelog, so MySQL would keep them; remove the option")),
    ("record-level.time-field", RefusedUnlessDefault("", "goes with record-level.expire-time (refused); remove the option")),
    ("record-level.time-field-type", RefusedUnlessDefault("", "goes with record-level.expire-time (refused); remove the option")),
    ("data-file.thin-mode", RefusedUnlessDefault("false", "files without the key columns are not read by the `paimon` 0.4.0 crate; set it to false")),
    ("data-file.external-paths", RefusedUnlessDefault("", "data files outside the table's path are not read by this worker; remove the option")),
    ("data-file.external-paths.strategy", RefusedUnlessDefault("none", "data files outside the table's path are not read by this worker; remove the option")),
    ("data-file.path-directory", RefusedUnlessDefault("", "data files in another directory are not read by this worker; remove the option")),
    ("data-file.prefix", Ignored("file names are read from the manifests")),
    ("changelog-file.prefix", Ignored("file names are read from the manifests")),
    ("scan.fallback-branch", RefusedUnlessDefault("", "a fallback branch's rows are not read by this worker; remove the option")),
    ("branch", RefusedUnlessDefault("main", "only the main branch is read; sync the branch's own table")),
    ("pk-clustering-override", RefusedUnlessDefault("false", "not verified against Paimon's read; remove the option")),
    ("file.format", Exact("parquet, orc and avro files are read by the `paimon` crate; another format fails the read with an error")),
    ("file.compression", Ignored("decoded by the format reader")),
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
    ("lookup-compact", Ignored("when lookup compaction runs; level 0 is never read by lookup tables")),
    ("write-only", Ignored("a writer without compaction; level 0 is never read by lookup tables")),
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
        "nested-key",
        Exact("aggregation with a lookup changelog is read as stored (the newest merged record)"),
    ),
    (
        "sequence-group",
        RefusedUnlessDefault(
            "",
            "partial-update sequence groups are not read by this worker; remove the option",
        ),
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
    "deletion-vectors.",
    "data-file.",
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
                .filter(|(name, _)| name.ends_with('.') && key.starts_with(name))
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
        let name = if name.ends_with('.') {
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
            ("fields.a.sequence-group", "b,c"),
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
            "fields.a.sequence-group",
            "sequence.field with several fields",
            "changelog.brand-new = \"x\" is unknown",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        assert_eq!(j.refused.len(), 5, "{text}");
        assert_eq!(j.unknown, ["some.option.from.the.future"]);
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
