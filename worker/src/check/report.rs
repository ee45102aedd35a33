//! What `pms-worker check` found: one item per check, ✓ / ⚠ / ✗, each ✗ with its fix; shown as
//! text for people or JSON for automation (and the operator's `PreflightPassed` condition).

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Warn,
    Fail,
}

impl Status {
    fn mark(self) -> &'static str {
        match self {
            Status::Pass => "✓",
            Status::Warn => "⚠",
            Status::Fail => "✗",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Area {
    Config,
    Paimon,
    Mysql,
}

impl Area {
    fn title(self) -> &'static str {
        match self {
            Area::Config => "Config",
            Area::Paimon => "Paimon",
            Area::Mysql => "MySQL",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Item {
    pub area: Area,
    /// A stable identifier (`mysql.privileges`), for scripts and tests.
    pub check: &'static str,
    pub status: Status,
    pub message: String,
    /// What to do about a ✗ or ⚠: an SQL statement, a Paimon table option, a config field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    pub checks: Vec<Item>,
    pub passed: usize,
    pub warnings: usize,
    pub failed: usize,
}

impl Report {
    pub fn add(
        &mut self,
        area: Area,
        check: &'static str,
        status: Status,
        message: impl Into<String>,
        fix: Option<String>,
    ) {
        match status {
            Status::Pass => self.passed += 1,
            Status::Warn => self.warnings += 1,
            Status::Fail => self.failed += 1,
        }
        self.checks.push(Item {
            area,
            check,
            status,
            message: message.into(),
            fix,
        });
    }

    pub fn pass(&mut self, area: Area, check: &'static str, message: impl Into<String>) {
        self.add(area, check, Status::Pass, message, None);
    }

    pub fn warn(
        &mut self,
        area: Area,
        check: &'static str,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) {
        self.add(area, check, Status::Warn, message, Some(fix.into()));
    }

    pub fn fail(
        &mut self,
        area: Area,
        check: &'static str,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) {
        self.add(area, check, Status::Fail, message, Some(fix.into()));
    }

    /// Nothing is ✗ (warnings allowed).
    pub fn ok(&self) -> bool {
        self.failed == 0
    }

    pub fn text(&self) -> String {
        let mut out = String::new();
        let mut area = None;
        for item in &self.checks {
            if area != Some(item.area) {
                out.push_str(item.area.title());
                out.push('\n');
                area = Some(item.area);
            }
            let message = item.message.replace('\n', "\n      ");
            out.push_str(&format!("  {} {message}\n", item.status.mark()));
            if let Some(fix) = &item.fix {
                out.push_str(&format!(
                    "      fix: {}\n",
                    fix.replace('\n', "\n           ")
                ));
            }
        }
        out.push_str(&format!(
            "{} passed, {} warning{}, {} failed\n",
            self.passed,
            self.warnings,
            if self.warnings == 1 { "" } else { "s" },
            self.failed
        ));
        out
    }
}
