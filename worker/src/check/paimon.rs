//! The Paimon side: the table, its shape, its latest snapshot, and whether snapshots the sync
//! needs outlive the downtime it must survive.

use std::time::Duration;

use super::{Area, CheckOptions, Report};
use crate::config::WorkerConfig;
use crate::source::PaimonSource;

pub(super) async fn check(
    cfg: &WorkerConfig,
    opts: &CheckOptions,
    report: &mut Report,
) -> Option<PaimonSource> {
    let spec = &cfg.spec.source;
    let name = format!("{}.{}", spec.database, spec.table);
    let source = match PaimonSource::open(spec, cfg.slot).await {
        Ok(source) => source,
        Err(e) => {
            report.fail(
                Area::Paimon,
                "paimon.table",
                e.to_string(),
                "check source.warehouse, database and table; a table that can't be synced exactly names the \
                 option to change above (ALTER TABLE … SET ('option' = 'value') in Flink SQL)",
            );
            return None;
        }
    };
    let keys: Vec<&str> = source
        .columns()
        .iter()
        .filter(|c| c.is_key)
        .map(|c| c.name.as_str())
        .collect();
    let shape = source.shape();
    report.pass(
        Area::Paimon,
        "paimon.table",
        format!(
            "{name}: primary key ({}); bucket {}, merge-engine {}, changelog-producer {}, deletion vectors {}: supported",
            keys.join(", "),
            shape.bucket,
            shape.merge_engine,
            match source.reads_at_commit() {
                true => "read as none (source.freshness: commit: each commit's level-0 files)",
                false => shape.changelog_producer.as_str(),
            },
            if shape.deletion_vectors { "on" } else { "off" },
        ),
    );
    if !source.unknown_options().is_empty() {
        report.warn(
            Area::Paimon,
            "paimon.options",
            format!(
                "table options unknown to this worker: {}; none is in a family that changes what a reader must do",
                source.unknown_options().join(", ")
            ),
            "see the table of Paimon options in docs/guarantees.md; an option a newer Paimon added may need a newer worker",
        );
    }
    let full_load = match source.latest_snapshot_info().await {
        Ok(Some(latest)) => {
            let records = latest.total_records.unwrap_or(0);
            let secs = records as f64 / opts.full_load_rows_per_second.max(1.0);
            report.pass(
                Area::Paimon,
                "paimon.latest_snapshot",
                format!(
                    "latest snapshot {} readable (committed {}), about {records} records: a full load takes about {} at {:.0} rows/s",
                    latest.id,
                    chrono::DateTime::from_timestamp_millis(latest.time_millis)
                        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
                        .unwrap_or_default(),
                    human(Duration::from_secs_f64(secs)),
                    opts.full_load_rows_per_second,
                ),
            );
            Duration::from_secs_f64(secs)
        }
        Ok(None) => {
            report.pass(
                Area::Paimon,
                "paimon.latest_snapshot",
                "no snapshot yet: the sync starts with the first commit",
            );
            Duration::ZERO
        }
        Err(e) => {
            report.fail(
                Area::Paimon,
                "paimon.latest_snapshot",
                format!("the latest snapshot can't be read: {e}"),
                "check the warehouse's files and the credentials to read them (source.s3)",
            );
            Duration::ZERO
        }
    };
    retention(&source, &name, cfg, opts, full_load, report);
    Some(source)
}

/// Snapshots expire by `snapshot.time-retained` / `snapshot.num-retained.*` unless a consumer
/// file pins them; the consumer itself expires after `consumer.expiration-time` without
/// progress. A sync down longer than what protects its next snapshot can only be rebuilt.
fn retention(
    source: &PaimonSource,
    name: &str,
    cfg: &WorkerConfig,
    opts: &CheckOptions,
    full_load: Duration,
    report: &mut Report,
) {
    let options = source.options();
    let downtime = opts.max_downtime;
    let alter = |key: &str, value: Duration| {
        format!(
            "ALTER TABLE {name} SET ('{key}' = '{}')  -- Flink SQL",
            paimon_duration(value)
        )
    };
    match options.get("consumer.expiration-time").map(|v| (v, parse_duration(v))) {
        None => report.pass(
            Area::Paimon,
            "paimon.consumer",
            format!(
                "consumer {}: its file pins the snapshots the sync still needs, and consumers never expire \
                 (consumer.expiration-time unset)",
                cfg.consumer_id
            ),
        ),
        Some((raw, Some(expires))) if expires >= downtime => report.pass(
            Area::Paimon,
            "paimon.consumer",
            format!("consumer {} pins the snapshots it needs for consumer.expiration-time = {raw} (≥ the {} downtime allowed)", cfg.consumer_id, human(downtime)),
        ),
        Some((raw, Some(_))) => report.warn(
            Area::Paimon,
            "paimon.consumer",
            format!(
                "consumer.expiration-time = {raw} is shorter than the {} downtime allowed: a sync down longer loses its \
                 consumer, the snapshots it needs may expire, and only a rebuild can go on",
                human(downtime)
            ),
            alter("consumer.expiration-time", downtime),
        ),
        Some((raw, None)) => report.fail(
            Area::Paimon,
            "paimon.consumer",
            format!("consumer.expiration-time = {raw:?} is not a duration this check can read"),
            "use a Paimon duration such as '7 d' or '12 h'",
        ),
    }
    // Before the first checkpoint there is no consumer: the snapshot of the full read is
    // protected by retention alone.
    let raw = options
        .get("snapshot.time-retained")
        .map(String::as_str)
        .unwrap_or("1 h");
    let min_kept: u64 = options
        .get("snapshot.num-retained.min")
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let needed = full_load.max(Duration::from_secs(60));
    match parse_duration(raw) {
        Some(kept) if kept >= needed => report.pass(
            Area::Paimon,
            "paimon.retention",
            format!(
                "snapshot.time-retained = {raw} (and at least {min_kept} snapshots) outlasts the full load; later the \
                 consumer pins what the sync needs"
            ),
        ),
        Some(_) => report.warn(
            Area::Paimon,
            "paimon.retention",
            format!(
                "snapshot.time-retained = {raw} is shorter than the estimated full load ({}): the snapshot it reads \
                 may expire under it before the first checkpoint writes the consumer",
                human(full_load)
            ),
            alter("snapshot.time-retained", needed * 2),
        ),
        None => report.fail(
            Area::Paimon,
            "paimon.retention",
            format!("snapshot.time-retained = {raw:?} is not a duration this check can read"),
            "use a Paimon duration such as '1 h'",
        ),
    }
}

/// A Paimon duration: a number and a unit (`ms`, `s`, `min`, `h`, `d`, with or without a space,
/// long forms too); a bare number is milliseconds.
pub(crate) fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim().to_ascii_lowercase();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().ok()?;
    let secs = match unit.trim() {
        "" | "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => {
            return Some(Duration::from_millis(n))
        }
        "s" | "sec" | "secs" | "second" | "seconds" => 1,
        "m" | "min" | "mins" | "minute" | "minutes" => 60,
        "h" | "hour" | "hours" => 3600,
        "d" | "day" | "days" => 86_400,
        _ => return None,
    };
    Some(Duration::from_secs(n * secs))
}

fn paimon_duration(d: Duration) -> String {
    let secs = d.as_secs().max(1);
    match secs {
        s if s % 86_400 == 0 => format!("{} d", s / 86_400),
        s if s % 3600 == 0 => format!("{} h", s / 3600),
        s if s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

pub(super) fn human(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 90.0 {
        format!("{secs:.0} s")
    } else if secs < 5400.0 {
        format!("{:.0} min", secs / 60.0)
    } else {
        format!("{:.1} h", secs / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paimon_durations() {
        assert_eq!(parse_duration("1 h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_duration("30min"), Some(Duration::from_secs(1800)));
        assert_eq!(parse_duration("7 d"), Some(Duration::from_secs(7 * 86_400)));
        assert_eq!(parse_duration("1500"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("soon"), None);
        assert_eq!(paimon_duration(Duration::from_secs(7200)), "2 h");
    }
}
