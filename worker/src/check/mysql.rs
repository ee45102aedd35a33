//! The MySQL side: reachable, the table fit for the Paimon table (the worker's own layout
//! validation), the privileges, and the server settings and table features that change what
//! upserts, the bulk path and rebuilds do.

use mysql_async::prelude::*;

use super::{Area, Report};
use crate::config::WorkerConfig;
use crate::error::WorkerError;
use crate::metrics::Metrics;
use crate::sink::{MysqlConnection, MysqlSink};
use crate::source::PaimonSource;
use crate::target_layout::validated_layout;

pub(super) async fn check(cfg: &WorkerConfig, source: Option<&PaimonSource>, report: &mut Report) {
    let url = cfg.mysql.redacted_url();
    let mysql = match MysqlConnection::open(cfg).await {
        Ok(m) => m,
        Err(e) => {
            report.fail(Area::Mysql, "mysql.connect", e.to_string(), connect_fix(&e));
            return;
        }
    };
    report.pass(
        Area::Mysql,
        "mysql.connect",
        format!(
            "{url}: reachable (server {}, sink.tls.mode {:?})",
            mysql.server().version,
            cfg.mysql.tls.mode
        ),
    );
    if let Err(e) = settings(&mysql, cfg, report).await {
        report.fail(
            Area::Mysql,
            "mysql.settings",
            format!("can't read the server's settings: {e}"),
            "grant the user SELECT on information_schema (it has it by default)",
        );
    }
    let Some(source) = source else {
        report.fail(
            Area::Mysql,
            "mysql.table",
            "not compared with the Paimon table (it could not be opened, above)",
            "fix the Paimon side first",
        );
        return;
    };
    let table = cfg.target_name();
    let layout = match validated_layout(source, &mysql, cfg, None).await {
        Ok(layout) => Some(layout),
        Err(WorkerError::Validation { problems, .. }) => {
            for p in problems {
                let (message, fix) = split_fix(&p);
                report.fail(
                    Area::Mysql,
                    "mysql.table",
                    format!("{table}: {message}"),
                    fix,
                );
            }
            None
        }
        Err(e) => {
            report.fail(Area::Mysql, "mysql.table", e.to_string(), "see the message");
            None
        }
    };
    if let Some(layout) = &layout {
        let keys: Vec<&str> = layout
            .key_positions
            .iter()
            .map(|&i| layout.columns[i].mysql.as_str())
            .collect();
        report.pass(
            Area::Mysql,
            "mysql.table",
            format!(
                "{table}: key ({}) equals the Paimon key; {} columns mapped, each wide enough",
                keys.join(", "),
                layout.columns.len()
            ),
        );
        for w in &layout.warnings {
            report.warn(
                Area::Mysql,
                "mysql.table",
                format!("{table}: {w}"),
                "nothing to do while the data fits; otherwise change the MySQL column (ALTER TABLE … MODIFY …) or the mapping (sink.columns) as the message says",
            );
        }
    }
    if let Err(e) = next_start(&mysql, cfg, source, report).await {
        report.fail(Area::Mysql, "mysql.start", e.to_string(), "see the message");
    }
    // Whatever the table's fit: the rest is worth knowing in the same run.
    if let Err(e) = table_features(&mysql, cfg, report).await {
        report.fail(
            Area::Mysql,
            "mysql.features",
            format!("can't read triggers and foreign keys: {e}"),
            "grant the user SELECT on information_schema",
        );
    }
    let grants = match mysql.probe_conn().await {
        Ok(mut conn) => super::grants::check(&mut conn, cfg, report)
            .await
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    if let Err(e) = grants {
        report.fail(
            Area::Mysql,
            "mysql.privileges",
            format!("can't read the user's grants: {e}"),
            "grant the user SELECT on information_schema (it has it by default)",
        );
    }
    // The sink's statements need a valid layout to be probed.
    let Some(layout) = layout else {
        return;
    };
    let sink = MysqlSink::new(
        mysql,
        &layout,
        cfg,
        Metrics::new(&cfg.sync_name, cfg.slot.index),
    );
    match sink.check_privileges().await {
        Ok(()) => report.pass(
            Area::Mysql,
            "mysql.privileges",
            format!("the user may SELECT, INSERT, UPDATE and DELETE on {table}"),
        ),
        Err(WorkerError::Validation { problems, .. }) => {
            for p in problems {
                let (message, fix) = split_fix(&p);
                report.fail(Area::Mysql, "mysql.privileges", message, fix);
            }
        }
        Err(e) => report.fail(
            Area::Mysql,
            "mysql.privileges",
            e.to_string(),
            "see the message",
        ),
    }
}

/// A connection failure's fix, by what the server said.
fn connect_fix(e: &WorkerError) -> String {
    let text = e.to_string();
    if text.contains("Access denied") {
        "check the user and password: the Secret of sink.credentialsSecretRef (keys username, password), or \
         MYSQL_USER / MYSQL_PASSWORD standalone"
            .into()
    } else if text.contains("Unknown database") {
        format!(
            "CREATE DATABASE `{}`, or correct the database in sink.url",
            e.to_string().split('\'').nth(1).unwrap_or("…")
        )
    } else if text.contains("TLS") || text.contains("certificate") {
        "check sink.tls (mode, caSecretRef / caFile, serverName)".into()
    } else {
        "check sink.url (host and port) and that the server is up and reachable from the worker"
            .into()
    }
}

/// Splits "what is wrong; what to do" where the worker's own messages say so.
fn split_fix(problem: &str) -> (String, String) {
    const MARKERS: [&str; 12] = [
        "; create it first, for example:",
        ": add it (",
        ": give it a default",
        ": `GRANT",
        ": `ALTER",
        "; use ",
        "; set ",
        ": set ",
        "; add ",
        "; change ",
        "; either ",
        "; widen ",
    ];
    for marker in MARKERS {
        if let Some(i) = problem.find(marker) {
            let fix = problem[i..]
                .trim_start_matches("; create it first, for example:")
                .trim_start_matches([';', ':', ' ', '`', '\n'])
                .trim_end_matches('`');
            return (problem[..i].to_string(), fix.to_string());
        }
    }
    (problem.to_string(), "see the message".into())
}

/// Server settings noted or warned about (the sink overrides the session's time zone and
/// sql_mode, so those are notes only).
/// What this slot's next start will do with its checkpoint and the rows the target holds
/// (docs/guarantees.md "What a checkpoint belongs to").
async fn next_start(
    mysql: &MysqlConnection,
    cfg: &WorkerConfig,
    source: &PaimonSource,
    report: &mut Report,
) -> crate::error::Result<()> {
    use crate::checkpoint::{belongs_to, Checkpointer};
    let now = belongs_to::now(cfg, source, mysql).await;
    if let Some(cp) = Checkpointer::peek(cfg).await? {
        match belongs_to::foreign(&cp, &cfg.sync_name, &now) {
            Some(why) => report.fail(Area::Mysql, "mysql.start", format!("the checkpoint {why}"), "see the message"),
            None => report.pass(
                Area::Mysql,
                "mysql.start",
                format!("resumes its checkpoint (next snapshot {}), unless the table's history or the server changed", cp.next_snapshot()),
            ),
        }
        return Ok(());
    }
    let table = &cfg.spec.sink.table;
    let holds_rows = match mysql.describe_target().await? {
        None => false,
        Some(_) => {
            let mut conn = mysql.probe_conn().await?;
            let any: Option<i64> = conn
                .query_first(format!(
                    "SELECT 1 FROM `{}` LIMIT 1",
                    table.replace('`', "``")
                ))
                .await
                .map_err(|e| mysql.read_failed(e))?;
            any.is_some()
        }
    };
    let full_read = matches!(
        cfg.spec.source.scan_mode,
        pms_crds::ScanMode::LatestFull | pms_crds::ScanMode::FromSnapshotFull
    );
    match (holds_rows, full_read, cfg.slot.count) {
        (false, _, _) => report.pass(Area::Mysql, "mysql.start", "no checkpoint, an empty table: the first run starts by source.scanMode"),
        (true, true, 1) => report.pass(
            Area::Mysql,
            "mysql.start",
            "no checkpoint, and the table holds rows: the first run's full read ends by removing the rows the snapshot doesn't have",
        ),
        (true, true, _) => report.warn(
            Area::Mysql,
            "mysql.start",
            "no checkpoint, and the table holds rows: with several slots the first full read is refused (no slot can tell which rows to remove)",
            "run the first full read with parallelism 1, or empty the table, or `pms-worker rebuild`",
        ),
        (true, false, _) => report.warn(
            Area::Mysql,
            "mysql.start",
            "no checkpoint, and the table holds rows: without a full read they are taken as the table's state before the start snapshot; nothing is removed",
            "right for a migration that stopped its old pipeline at that snapshot; otherwise use scanMode latest-full",
        ),
    }
    Ok(())
}

async fn settings(
    mysql: &MysqlConnection,
    cfg: &WorkerConfig,
    report: &mut Report,
) -> Result<(), WorkerError> {
    let mut conn = mysql.probe_conn().await?;
    let read_failed = |e| mysql.read_failed(e);
    type Row = (String, String, String, u64, i64, i64, String);
    let (global_tz, system_tz, sql_mode, packet, local_infile, log_bin, binlog_format): Row = conn
        .query_first(
            "SELECT @@global.time_zone, @@system_time_zone, @@global.sql_mode, @@max_allowed_packet, \
             @@local_infile, @@log_bin, @@binlog_format",
        )
        .await
        .map_err(read_failed)?
        .unwrap_or_default();
    let widest = widest_row(&mut conn, &cfg.spec.sink.table)
        .await
        .map_err(read_failed)?;
    let may_set_global = super::grants::held(&mut conn, &cfg.spec.sink.table)
        .await
        .map_err(read_failed)?
        .iter()
        .any(|p| ["SUPER", "SYSTEM_VARIABLES_ADMIN", "ALL PRIVILEGES"].contains(&p.as_str()));
    let server = ServerSettings {
        may_set_global,
        time_zone: format!("{global_tz} (system {system_tz})"),
        sql_mode,
        max_allowed_packet: packet,
        local_infile: local_infile == 1,
        binlog_format: (log_bin == 1).then_some(binlog_format),
    };
    judge_settings(&server, &cfg.target_name(), widest, report);
    Ok(())
}

struct ServerSettings {
    /// Whether this user may `SET GLOBAL` (SUPER, SYSTEM_VARIABLES_ADMIN): not on a managed
    /// server (RDS, Aurora, Cloud SQL, Azure), whose settings are the provider's parameters.
    may_set_global: bool,
    time_zone: String,
    sql_mode: String,
    max_allowed_packet: u64,
    local_infile: bool,
    /// `None` when the binary log is off.
    binlog_format: Option<String>,
}

/// `widest`: the widest row the table allows, described and in bytes.
fn judge_settings(
    s: &ServerSettings,
    table: &str,
    (wide, widest): (String, u64),
    report: &mut Report,
) {
    report.pass(
        Area::Mysql,
        "mysql.session",
        format!(
            "server time_zone {}, sql_mode {:?}: noted; each session of the worker uses time_zone '+00:00' and a \
             strict sql_mode, so neither changes what is written",
            s.time_zone, s.sql_mode
        ),
    );
    let packet_mib = s.max_allowed_packet as f64 / 1048576.0;
    if widest > s.max_allowed_packet {
        report.warn(
            Area::Mysql,
            "mysql.max_allowed_packet",
            format!("max_allowed_packet = {packet_mib:.0} MiB, but a row of {table} can be larger ({wide}): such a row can't be written"),
            global_fix(
                s,
                "max_allowed_packet",
                &widest.clamp(1 << 20, 1 << 30).next_power_of_two().to_string(),
            ),
        );
    } else {
        report.pass(
            Area::Mysql,
            "mysql.max_allowed_packet",
            format!("max_allowed_packet = {packet_mib:.0} MiB fits the widest row ({wide})"),
        );
    }
    if s.local_infile {
        report.pass(
            Area::Mysql,
            "mysql.local_infile",
            "local_infile is ON: a full read into an empty table takes the bulk path (LOAD DATA)",
        );
    } else {
        report.warn(
            Area::Mysql,
            "mysql.local_infile",
            "local_infile is OFF: a full read into an empty table falls back to upserts (correct, but slower)",
            global_fix(s, "local_infile", "1"),
        );
    }
    match &s.binlog_format {
        None => report.pass(Area::Mysql, "mysql.binlog", "binary log off: noted"),
        Some(f) if f.eq_ignore_ascii_case("ROW") => {
            report.pass(Area::Mysql, "mysql.binlog", "binary log on, binlog_format ROW: replicas get exactly the rows written")
        }
        Some(f) => report.warn(
            Area::Mysql,
            "mysql.binlog",
            format!(
                "binlog_format {f}: upserts (INSERT … ON DUPLICATE KEY UPDATE) are unsafe for statement-based \
                 replication, and the worker can't write under READ COMMITTED (slots may deadlock and retry)"
            ),
            global_fix(s, "binlog_format", "'ROW'"),
        ),
    }
}

/// How to give server variable `variable` the value `value`: `SET GLOBAL` where this user may,
/// else the managed server's own way (its parameters).
fn global_fix(s: &ServerSettings, variable: &str, value: &str) -> String {
    if s.may_set_global {
        format!("SET GLOBAL {variable} = {value};  -- and in the server's config file")
    } else {
        format!(
            "{variable} = {value} in the server's parameters, as this user may not SET GLOBAL (a managed server): \
             RDS, the DB parameter group; Aurora, the DB cluster parameter group; Cloud SQL, a database flag; \
             Azure, a server parameter; else its administrator's config file (docs/managed-mysql.md)"
        )
    }
}

/// The widest row the table's declared columns allow (bytes), described.
async fn widest_row(
    conn: &mut mysql_async::Conn,
    table: &str,
) -> Result<(String, u64), mysql_async::Error> {
    let columns: Vec<(String, Option<u64>)> = conn
        .exec(
            "SELECT COLUMN_NAME, CHARACTER_OCTET_LENGTH FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
            (table,),
        )
        .await?;
    // Numbers and dates: a generous 40 bytes each as SQL text.
    let widest: u64 = columns
        .iter()
        .map(|(_, octets)| octets.unwrap_or(40).saturating_add(3))
        .fold(0, u64::saturating_add);
    let unbounded = columns
        .iter()
        .filter(|(_, o)| o.is_some_and(|o| o >= 1 << 24))
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>();
    let described = if unbounded.is_empty() {
        format!("at most {} KiB as declared", widest.div_ceil(1024))
    } else {
        format!(
            "{} may hold values of up to {} MiB",
            unbounded.join(", "),
            (widest >> 20).min(4096)
        )
    };
    Ok((described, widest))
}

/// Triggers and foreign keys: legal, but each changes what an upsert, a bulk load or a rebuild's
/// `RENAME TABLE` does.
async fn table_features(
    mysql: &MysqlConnection,
    cfg: &WorkerConfig,
    report: &mut Report,
) -> Result<(), WorkerError> {
    let mut conn = mysql.probe_conn().await?;
    let read_failed = |e| mysql.read_failed(e);
    let table = &cfg.spec.sink.table;
    let triggers: Vec<(String, String, String)> = conn
        .exec(
            "SELECT TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION FROM information_schema.TRIGGERS \
             WHERE EVENT_OBJECT_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE = ? ORDER BY TRIGGER_NAME",
            (table,),
        )
        .await
        .map_err(read_failed)?;
    let sees_triggers = super::grants::held(&mut conn, table)
        .await
        .map_err(read_failed)?
        .iter()
        .any(|p| p == "TRIGGER" || p == "ALL PRIVILEGES");
    if triggers.is_empty() && !sees_triggers {
        report.warn(
            Area::Mysql,
            "mysql.triggers",
            "can't tell whether the table has triggers: information_schema shows them only to a user with the TRIGGER privilege",
            format!("run SHOW TRIGGERS LIKE '{table}' as an administrator (or check as a user with TRIGGER)"),
        );
    } else if triggers.is_empty() {
        report.pass(Area::Mysql, "mysql.triggers", "no triggers on the table");
    } else {
        let list: Vec<String> = triggers
            .iter()
            .map(|(n, t, e)| format!("{n} ({t} {e})"))
            .collect();
        report.warn(
            Area::Mysql,
            "mysql.triggers",
            format!(
                "triggers {}: they fire for every row the sync writes (an upsert that updates fires the INSERT \
                 trigger, then the UPDATE ones), also on LOAD DATA; a rebuild's shadow table has none, so the \
                 cutover drops them",
                list.join(", ")
            ),
            "keep the triggers idempotent, and create them again after a rebuild (its new table is made with CREATE TABLE … LIKE, which copies no triggers)",
        );
    }
    let foreign_keys: Vec<(String, String, String)> = conn
        .exec(
            "SELECT CONSTRAINT_NAME, TABLE_NAME, REFERENCED_TABLE_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS \
             WHERE CONSTRAINT_SCHEMA = DATABASE() AND (TABLE_NAME = ? OR REFERENCED_TABLE_NAME = ?) ORDER BY CONSTRAINT_NAME",
            (table, table),
        )
        .await
        .map_err(read_failed)?;
    if foreign_keys.is_empty() {
        report.pass(
            Area::Mysql,
            "mysql.foreign_keys",
            "no foreign keys from or to the table",
        );
    } else {
        let list: Vec<String> = foreign_keys
            .iter()
            .map(|(n, from, to)| format!("{n} ({from} → {to})"))
            .collect();
        report.warn(
            Area::Mysql,
            "mysql.foreign_keys",
            format!(
                "foreign keys {}: the sync writes rows in key order, not in the parents-first order a foreign key \
                 needs, so a write can be refused (or cascade a delete); a rebuild's RENAME TABLE moves the \
                 references to the old table",
                list.join(", ")
            ),
            "drop the foreign keys on synced tables (Paimon has none to keep), e.g. ALTER TABLE … DROP FOREIGN KEY …",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Status;

    fn judged(s: &ServerSettings, widest: u64) -> Report {
        let mut report = Report::default();
        judge_settings(s, "db.t", ("w".into(), widest), &mut report);
        report
    }

    fn status(r: &Report, check: &str) -> Status {
        r.checks
            .iter()
            .find(|i| i.check == check)
            .map(|i| i.status)
            .unwrap()
    }

    #[test]
    fn server_settings_that_change_what_a_sync_does_are_warned_with_their_fix() {
        let good = ServerSettings {
            may_set_global: true,
            time_zone: "+02:00 (system CET)".into(),
            sql_mode: String::new(),
            max_allowed_packet: 16 << 20,
            local_infile: true,
            binlog_format: Some("ROW".into()),
        };
        let r = judged(&good, 1000);
        assert_eq!((r.passed, r.warnings, r.failed), (4, 0, 0), "{}", r.text());
        let bad = ServerSettings {
            local_infile: false,
            binlog_format: Some("STATEMENT".into()),
            ..good
        };
        let r = judged(&bad, 100 << 20);
        for check in [
            "mysql.max_allowed_packet",
            "mysql.local_infile",
            "mysql.binlog",
        ] {
            assert_eq!(status(&r, check), Status::Warn, "{check}: {}", r.text());
        }
        let text = r.text();
        assert!(text.contains("SET GLOBAL local_infile = 1"), "{text}");
        assert!(text.contains("SET GLOBAL binlog_format = 'ROW'"), "{text}");
        assert!(
            text.contains("SET GLOBAL max_allowed_packet = 134217728"),
            "{text}"
        );
        assert!(r.ok(), "warnings only: exit 0");
        // A managed server's user may not SET GLOBAL: the fix is its provider's parameter.
        let managed = ServerSettings {
            may_set_global: false,
            ..bad
        };
        let text = judged(&managed, 100 << 20).text();
        assert!(!text.contains("SET GLOBAL local_infile"), "{text}");
        assert!(
            text.contains("local_infile = 1 in the server's parameters")
                && text.contains("DB cluster parameter group")
                && text.contains("binlog_format = 'ROW' in the server's parameters"),
            "{text}"
        );
    }

    #[test]
    fn the_workers_messages_are_split_into_problem_and_fix() {
        let (problem, fix) = split_fix(
            "the MySQL user lacks UPDATE, DELETE on it (a sync …): `GRANT SELECT, INSERT, UPDATE, DELETE ON db.t TO …`",
        );
        assert!(problem.ends_with("(a sync …)"), "{problem}");
        assert_eq!(fix, "GRANT SELECT, INSERT, UPDATE, DELETE ON db.t TO …");
    }
}
