//! The privileges of modes beyond the plain sink (whose statements `check_privileges` probes):
//! exactly-once's progress table and a rebuild's shadow table. Read from `information_schema`
//! (global, database and table grants of the current user; roles are not followed, so a right
//! held only through a role shows as missing — the message says so).

use std::collections::BTreeSet;

use mysql_async::prelude::*;

use super::{Area, Report};
use crate::config::WorkerConfig;
use crate::sink::progress_table;

/// The privileges the current user holds on `table` of the current database, from any level.
pub(super) async fn held(
    conn: &mut mysql_async::Conn,
    table: &str,
) -> Result<BTreeSet<String>, mysql_async::Error> {
    conn.query_drop(
        "SET @me = CONCAT(\"'\", SUBSTRING_INDEX(CURRENT_USER(), '@', 1), \"'@'\", SUBSTRING_INDEX(CURRENT_USER(), '@', -1), \"'\")",
    )
    .await?;
    let rows: Vec<String> = conn
        .exec(
            "SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = @me \
             UNION SELECT PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES \
               WHERE GRANTEE = @me AND TABLE_SCHEMA = DATABASE() \
             UNION SELECT PRIVILEGE_TYPE FROM information_schema.TABLE_PRIVILEGES \
               WHERE GRANTEE = @me AND TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
            (table,),
        )
        .await?;
    Ok(rows.into_iter().map(|p| p.to_ascii_uppercase()).collect())
}

pub(super) async fn check(
    conn: &mut mysql_async::Conn,
    cfg: &WorkerConfig,
    report: &mut Report,
) -> Result<(), mysql_async::Error> {
    let db = &cfg.mysql.database;
    if cfg.spec.sink.delivery == pms_crds::Delivery::ExactlyOnce {
        let have = held(conn, progress_table::TABLE).await?;
        judge(
            report,
            "mysql.privileges_exactly_once",
            &have,
            &["CREATE", "SELECT", "INSERT", "UPDATE", "ALTER"],
            &format!("{db}.{}", progress_table::TABLE),
            "delivery exactly-once keeps each slot's position in this table, in the same transaction as the rows",
            true,
        );
    }
    let have = held(conn, &cfg.spec.sink.table).await?;
    judge(
        report,
        "mysql.privileges_rebuild",
        &have,
        &["CREATE", "DROP", "ALTER", "INSERT", "SELECT"],
        &format!("{db}.*"),
        "a rebuild creates a shadow table, fills it, and swaps it in with RENAME TABLE",
        false,
    );
    Ok(())
}

fn judge(
    report: &mut Report,
    check: &'static str,
    have: &BTreeSet<String>,
    needed: &[&str],
    on: &str,
    why: &str,
    required: bool,
) {
    let all = have.contains("ALL PRIVILEGES");
    let missing: Vec<&str> = needed
        .iter()
        .copied()
        .filter(|p| !all && !have.contains(*p))
        .collect();
    if missing.is_empty() {
        report.pass(
            Area::Mysql,
            check,
            format!("{} on {on}: {why}", needed.join(", ")),
        );
        return;
    }
    let message = format!(
        "the user lacks {} on {on} ({why}; a right held only through a role is not seen here)",
        missing.join(", ")
    );
    let fix = format!("GRANT {} ON {on} TO …", needed.join(", "));
    if required {
        report.fail(Area::Mysql, check, message, fix);
    } else {
        report.warn(Area::Mysql, check, message, fix);
    }
}
