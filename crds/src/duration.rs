//! A duration written the way people write it in YAML (`1s`, `500ms`, `2m`).

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A `std::time::Duration` that (de)serializes as a humantime string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct HumanDuration(pub Duration);

impl HumanDuration {
    pub const fn from_secs(secs: u64) -> Self {
        Self(Duration::from_secs(secs))
    }
    pub const fn from_millis(ms: u64) -> Self {
        Self(Duration::from_millis(ms))
    }
    pub fn is_zero(&self) -> bool {
        self.0.is_zero()
    }
}

impl fmt::Display for HumanDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", humantime::format_duration(self.0))
    }
}

impl Serialize for HumanDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for HumanDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_duration(text.trim())
            .map(HumanDuration)
            .map_err(|e| {
                serde::de::Error::custom(format!(
                    "invalid duration {text:?} ({e}); write e.g. 500ms, 1s, 2m"
                ))
            })
    }
}

/// The schema admits at most this many parts (`1h 30m` is two)…
const MAX_PARTS: usize = 8;
/// …each a number of at most this many digits…
const MAX_DIGITS: usize = 9;
/// …with a unit and at most this many digits after a point. humantime refuses a fraction that
/// is not a whole number of nanoseconds (`1.5ns`) or, above minutes, of seconds (`0.001h`), and
/// one whose nanoseconds overflow a u64 (`0.999999999m`): the digits each unit takes are those
/// that always make a whole count (10^k divides the unit) without overflow.
const UNITS: [(&str, usize); 7] = [
    ("ns", 0),
    ("us", 3),
    ("ms", 6),
    ("s", 9),
    ("m", 8),
    ("h", 2),
    ("d", 2),
];

/// The longest string the pattern admits: every part a full number with the longest fraction
/// and unit, and a space after it.
pub(crate) const MAX_LEN: usize = MAX_PARTS * (MAX_DIGITS + longest_unit() + 1);

/// The longest unit with its fraction (`.999999999s`).
const fn longest_unit() -> usize {
    let (mut i, mut longest) = (0, 0);
    while i < UNITS.len() {
        let (unit, frac) = UNITS[i];
        let len = unit.len() + if frac > 0 { 1 + frac } else { 0 };
        if len > longest {
            longest = len;
        }
        i += 1;
    }
    longest
}

/// The schema's pattern: only durations humantime parses, none of them overflowing a
/// `Duration` (8 parts of at most 999999999.99 days are 6.9e14 seconds, within a u64 and within
/// the i64 milliseconds of a chrono or jiff duration).
pub(crate) fn pattern() -> String {
    let part: Vec<String> = UNITS
        .iter()
        .map(|&(unit, frac)| match frac {
            0 => unit.to_string(),
            _ => format!("(\\.[0-9]{{1,{frac}}})?{unit}"),
        })
        .collect();
    format!(
        "^([0-9]{{1,{MAX_DIGITS}}}({}) ?){{1,{MAX_PARTS}}}$",
        part.join("|")
    )
}

impl JsonSchema for HumanDuration {
    fn schema_name() -> Cow<'static, str> {
        "Duration".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": pattern(),
            "maxLength": MAX_LEN,
            "description": "A duration such as 500ms, 1.5s, 2m or 1h 30m: at most 8 parts, each a number of at most 9 digits \
                            and a unit ns, us, ms, s, m, h or d, with at most 9 digits after a point for s, 8 for m, 6 for \
                            ms, 3 for us, 2 for h and d; 0s turns the feature off."
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admitted(text: &str) -> bool {
        regex::Regex::new(&pattern()).unwrap().is_match(text) && text.chars().count() <= MAX_LEN
    }

    /// What the resource's decoding does with it.
    fn decodes(text: &str) -> Result<Duration, String> {
        serde_json::from_value::<HumanDuration>(serde_json::Value::from(text))
            .map(|d| d.0)
            .map_err(|e| e.to_string())
    }

    /// A part the pattern admits: `digits` digits (each `digit(i)`), then the unit's
    /// fraction of `frac` digits, if any.
    fn part(digits: usize, unit: &str, frac: usize, digit: &mut impl FnMut() -> char) -> String {
        let mut p: String = (0..digits).map(|_| digit()).collect();
        if frac > 0 {
            p.push('.');
            p.extend((0..frac).map(|_| digit()));
        }
        p + unit
    }

    #[test]
    fn the_longest_and_the_largest_admitted_durations_decode() {
        let mut nine = || '9';
        let longest = (0..MAX_PARTS)
            .map(|_| part(MAX_DIGITS, "s", 9, &mut nine) + " ")
            .collect::<String>();
        assert_eq!(longest.len(), MAX_LEN);
        assert!(admitted(&longest), "{longest}");
        assert!(!admitted(&format!("{longest}1s")), "a 9th part");
        let secs = MAX_PARTS as u64 * 999_999_999;
        assert_eq!(
            decodes(&longest),
            Ok(Duration::new(secs, 0) + Duration::from_nanos(MAX_PARTS as u64 * 999_999_999))
        );
        for &(unit, frac) in &UNITS {
            let largest = vec![part(MAX_DIGITS, unit, frac, &mut nine); MAX_PARTS].join(" ");
            assert!(admitted(&largest), "{largest}");
            let d = decodes(&largest).unwrap_or_else(|e| panic!("{largest}: {e}"));
            // Within what chrono, jiff and an Instant take.
            assert!(d.as_millis() < i64::MAX as u128, "{largest}: {d:?}");
            if frac > 0 {
                // The smallest fraction: one 10^-frac of the unit, a whole count.
                let tiny = format!("0.{}1{unit}", "0".repeat(frac - 1));
                assert!(admitted(&tiny), "{tiny}");
                assert!(decodes(&tiny).is_ok_and(|d| !d.is_zero()), "{tiny}");
                let finer = format!("0.{}1{unit}", "0".repeat(frac));
                assert!(!admitted(&finer), "{finer}");
            }
        }
    }

    #[test]
    fn every_duration_the_pattern_admits_decodes() {
        // Deterministic random durations the pattern admits, every unit, digit count and
        // fraction length mixed (xorshift64).
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..20_000 {
            let parts = 1 + next(MAX_PARTS);
            let mut text = String::new();
            for i in 0..parts {
                let (unit, max_frac) = UNITS[next(UNITS.len())];
                let digits = 1 + next(MAX_DIGITS);
                let frac = if max_frac > 0 && next(2) == 0 {
                    1 + next(max_frac)
                } else {
                    0
                };
                let mut high = next(2) == 0;
                let mut digit = || {
                    let d = if high { 9 } else { next(10) as u8 };
                    high = next(4) != 0 && high;
                    char::from(b'0' + d)
                };
                text += &part(digits, unit, frac, &mut digit);
                if i + 1 < parts && next(2) == 0 || next(8) == 0 {
                    text.push(' ');
                }
            }
            assert!(admitted(&text), "{text:?}");
            if let Err(e) = decodes(&text) {
                panic!("{text:?} is admitted but does not decode: {e}");
            }
        }
    }

    #[test]
    fn what_humantime_refuses_or_overflows_is_not_admitted() {
        for text in [
            "99999999999999999999s", // overflows a u64
            "1000000000s",           // 10 digits
            "1.5ns",                 // a fraction of a nanosecond
            "0.001h",                // 3.6 s: not a whole second
            "0.999999999m",          // its nanoseconds overflow a u64
            "1.0000000001s",
            "1s 2s 3s 4s 5s 6s 7s 8s 9s",
            "1 s",
            "1.s",
            ".5s",
            "1µs",
            "1y",
            "",
            " 1s",
            "1s  2s",
            "-1s",
        ] {
            assert!(!admitted(text), "{text:?} is admitted");
        }
        for text in ["99999999999999999999s", "1.5ns", "0.001h", "0.999999999m"] {
            assert!(decodes(text).is_err(), "{text:?} decodes");
        }
        for (text, expected) in [
            ("1.5s", Duration::from_millis(1500)),
            ("1h30m", Duration::from_secs(5400)),
            ("1h 30m 0.5s", Duration::from_millis(5_400_500)),
            ("0.01h", Duration::from_secs(36)),
            ("2.5us", Duration::from_nanos(2500)),
            ("0s", Duration::ZERO),
        ] {
            assert!(admitted(text), "{text:?}");
            assert_eq!(decodes(text), Ok(expected), "{text:?}");
        }
    }
}
