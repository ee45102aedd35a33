//! Dates, times and timestamps from epoch offsets, computed in UTC without the local zone.

use arrow_schema::TimeUnit;
use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Timelike};
use mysql_async::Value;

const NANOS_PER_SEC: i64 = 1_000_000_000;

pub fn nanos_per_unit(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => NANOS_PER_SEC,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

fn naive_datetime(value: i64, nanos_per: i64) -> Result<NaiveDateTime, String> {
    let per_sec = NANOS_PER_SEC / nanos_per;
    DateTime::from_timestamp(
        value.div_euclid(per_sec),
        (value.rem_euclid(per_sec) * nanos_per) as u32,
    )
    .map(|d| d.naive_utc())
    .ok_or_else(|| format!("timestamp {value} × {nanos_per} ns since 1970-01-01"))
}

fn naive_date(days: i32) -> Result<NaiveDate, String> {
    NaiveDate::from_num_days_from_ce_opt(days.saturating_add(719_163))
        .ok_or_else(|| format!("date {days} days since 1970-01-01"))
}

/// MySQL's DATE and DATETIME hold the years 1 to 9999 (a value outside would wrap or be
/// refused), so such a value is an error for the caller to report with its key.
const MYSQL_YEARS: std::ops::RangeInclusive<i32> = 1..=9999;

/// `d` if MySQL can hold its year, else its text for the error.
fn in_mysql_years<D: Datelike + std::fmt::Display>(d: D) -> Result<D, String> {
    if MYSQL_YEARS.contains(&d.year()) {
        Ok(d)
    } else {
        Err(d.to_string())
    }
}

pub fn datetime_value(value: i64, nanos_per: i64) -> Result<Value, String> {
    let dt = in_mysql_years(naive_datetime(value, nanos_per)?)?;
    Ok(Value::Date(
        dt.year() as u16,
        dt.month() as u8,
        dt.day() as u8,
        dt.hour() as u8,
        dt.minute() as u8,
        dt.second() as u8,
        dt.nanosecond() / 1_000,
    ))
}

pub fn date_value(days: i32) -> Result<Value, String> {
    let d = in_mysql_years(naive_date(days)?)?;
    Ok(Value::Date(
        d.year() as u16,
        d.month() as u8,
        d.day() as u8,
        0,
        0,
        0,
        0,
    ))
}

pub fn time_value(nanos_of_day: i64) -> Value {
    let secs = nanos_of_day / NANOS_PER_SEC;
    Value::Time(
        false,
        0,
        (secs / 3600) as u8,
        (secs / 60 % 60) as u8,
        (secs % 60) as u8,
        ((nanos_of_day % NANOS_PER_SEC) / 1_000) as u32,
    )
}

/// Canonical text forms: `YYYY-MM-DD`, `HH:MM:SS[.f…]`, `YYYY-MM-DD HH:MM:SS[.f…]`.
pub struct TemporalText;

impl TemporalText {
    pub fn date(days: i32) -> Result<String, String> {
        Ok(naive_date(days)?.format("%Y-%m-%d").to_string())
    }

    pub fn time(nanos_of_day: i64, digits: u32) -> String {
        let secs = nanos_of_day / NANOS_PER_SEC;
        let mut s = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
        push_fraction(&mut s, (nanos_of_day % NANOS_PER_SEC) as u32, digits);
        s
    }

    pub fn timestamp(value: i64, nanos_per: i64, digits: u32) -> Result<String, String> {
        let dt = naive_datetime(value, nanos_per)?;
        let mut s = dt.format("%Y-%m-%d %H:%M:%S").to_string();
        push_fraction(&mut s, dt.nanosecond(), digits);
        Ok(s)
    }
}

fn push_fraction(s: &mut String, nanos: u32, digits: u32) {
    if digits > 0 {
        let digits = digits.min(9) as usize;
        let frac = format!("{nanos:09}");
        s.push('.');
        s.push_str(&frac[..digits]);
    }
}
