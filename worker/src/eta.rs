//! The ETA line of a full read: rows done, rows/s and ETA from the snapshot's row count.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use tracing::info;

pub struct EtaLine {
    what: String,
    expected: u64,
    done: u64,
    started: Instant,
    last_print: Instant,
    tty: bool,
}

impl EtaLine {
    pub fn new(what: impl Into<String>, expected: u64) -> Self {
        let now = Instant::now();
        Self {
            what: what.into(),
            expected,
            done: 0,
            started: now,
            last_print: now,
            tty: std::io::stderr().is_terminal(),
        }
    }

    pub fn add(&mut self, rows: u64) {
        self.done += rows;
        // Redraw a terminal line every 200 ms; log a structured line every 5 s otherwise.
        let every = if self.tty {
            Duration::from_millis(200)
        } else {
            Duration::from_secs(5)
        };
        if self.last_print.elapsed() >= every {
            self.last_print = Instant::now();
            self.print(false);
        }
    }

    pub fn rows_per_sec(&self) -> f64 {
        self.done as f64 / self.started.elapsed().as_secs_f64().max(1e-6)
    }

    pub fn finish(&mut self) {
        self.print(true);
    }

    fn print(&self, last: bool) {
        let rate = self.rows_per_sec();
        let pct = if self.expected > 0 {
            (self.done as f64 * 100.0 / self.expected as f64).min(100.0)
        } else {
            100.0
        };
        let eta = if rate > 0.0 && self.expected > self.done {
            (self.expected - self.done) as f64 / rate
        } else {
            0.0
        };
        if self.tty {
            let mut err = std::io::stderr().lock();
            let _ = write!(
                err,
                "\r{}: {} {} / {} rows ({pct:.0}%), {rate:.0} rows/s, ETA {eta:.0}s   {}",
                self.what,
                bar(pct),
                self.done,
                self.expected,
                if last { "\n" } else { "" }
            );
            let _ = err.flush();
        } else {
            info!(what = %self.what, rows = self.done, expected = self.expected, rows_per_sec = rate as u64, eta_secs = eta as u64, "progress");
        }
    }
}

/// A progress bar of `pct` percent, 20 characters between brackets.
fn bar(pct: f64) -> String {
    const WIDTH: usize = 20;
    let full = ((pct.clamp(0.0, 100.0) / 100.0) * WIDTH as f64).round() as usize;
    format!("[{}{}]", "#".repeat(full), ".".repeat(WIDTH - full))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_bar_fills_with_the_percentage() {
        assert_eq!(super::bar(0.0), "[....................]");
        assert_eq!(super::bar(50.0), "[##########..........]");
        assert_eq!(super::bar(100.0), "[####################]");
        assert_eq!(super::bar(140.0), "[####################]");
    }
}
