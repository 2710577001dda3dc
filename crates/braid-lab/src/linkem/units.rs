//! Rates and durations as `tc` spells them: `50mbit`, `1gbit`, `10ms`, `250us`.
//!
//! # Rates
//! The bit-per-second units of `tc(8)` ("PARAMETERS / RATES"): `bit`, `kbit`, `mbit`, `gbit`,
//! `tbit`, decimal (SI) multiples of 1000. `tc` also reads a bare number and the `bps` family
//! as *bytes* per second, a classic trap; we accept neither and ask for a bit unit.
//!
//! # Durations
//! `s`, `ms`, `us` and `ns` after a decimal number (`tc(8)` "TIMES" also writes `sec`, `msec`
//! and `usec`, accepted too). A bare `0` is zero. Results are whole nanoseconds, rounded to the
//! nearest.
//!
//! Both parsers take a decimal number with an optional fraction (`2.5mbit`, `0.25ms`), no sign,
//! no exponent. Units are case-insensitive. Range checks belong to the option being parsed
//! ([`super::config`]), not to the parser.

use std::time::Duration;

/// The rate units, with their multipliers to bit/s.
const RATE_UNITS: &[(&str, f64)] =
    &[("tbit", 1e12), ("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1.0)];
/// The time units, with their multipliers to nanoseconds; longest spelling first so that
/// `ms` is not read as `s`.
const TIME_UNITS: &[(&str, f64)] = &[
    ("msec", 1e6),
    ("usec", 1e3),
    ("nsec", 1.0),
    ("sec", 1e9),
    ("ms", 1e6),
    ("us", 1e3),
    ("ns", 1.0),
    ("s", 1e9),
];

/// A rate or duration that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error(
        "{given:?}: expected a number and a rate unit (bit, kbit, mbit, gbit, tbit), as in 50mbit"
    )]
    Rate { given: String },
    #[error("{given:?}: expected a number and a time unit (s, ms, us, ns), as in 10ms")]
    Duration { given: String },
}

/// Splits `text` into its number and a unit from `units`, returning the number scaled.
fn scaled(text: &str, units: &[(&str, f64)]) -> Option<f64> {
    let lower = text.trim().to_ascii_lowercase();
    let (number, multiplier) =
        units.iter().find_map(|&(unit, m)| lower.strip_suffix(unit).map(|n| (n.trim_end(), m)))?;
    Some(plain_decimal(number)? * multiplier)
}

/// A non-negative decimal number without sign or exponent: digits, at most one point, at
/// least one digit.
fn plain_decimal(text: &str) -> Option<f64> {
    let digits = text.bytes().filter(u8::is_ascii_digit).count();
    let points = text.bytes().filter(|&b| b == b'.').count();
    if digits == 0 || points > 1 || digits + points != text.len() {
        return None;
    }
    text.parse().ok()
}

/// Parses a rate such as `50mbit` into bit/s, rounded to the nearest bit/s.
pub fn parse_rate_bits_per_s(text: &str) -> Result<u64, UnitError> {
    let bits = scaled(text, RATE_UNITS).ok_or_else(|| UnitError::Rate { given: text.into() })?;
    if bits >= u64::MAX as f64 {
        return Err(UnitError::Rate { given: text.into() });
    }
    Ok(bits.round() as u64)
}

/// Parses a duration such as `10ms` or `250us`.
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    if text.trim() == "0" {
        return Ok(Duration::ZERO);
    }
    let ns = scaled(text, TIME_UNITS).ok_or_else(|| UnitError::Duration { given: text.into() })?;
    if ns >= u64::MAX as f64 {
        return Err(UnitError::Duration { given: text.into() });
    }
    Ok(Duration::from_nanos(ns.round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_use_decimal_bit_units() {
        assert_eq!(parse_rate_bits_per_s("50mbit"), Ok(50_000_000));
        assert_eq!(parse_rate_bits_per_s("1gbit"), Ok(1_000_000_000));
        assert_eq!(parse_rate_bits_per_s("2.5Mbit"), Ok(2_500_000));
        assert_eq!(parse_rate_bits_per_s("800kbit"), Ok(800_000));
        assert_eq!(parse_rate_bits_per_s("1200bit"), Ok(1200));
        assert_eq!(parse_rate_bits_per_s("0.1tbit"), Ok(100_000_000_000));
        assert_eq!(parse_rate_bits_per_s(" 10 mbit "), Ok(10_000_000));
    }

    #[test]
    fn byte_rates_and_bare_numbers_are_refused() {
        // tc reads these as bytes per second; a user writing them almost surely meant bits.
        for bad in ["50", "50mbps", "50mb", "mbit", "-5mbit", "1e6bit", "5.5.5mbit", ""] {
            assert_eq!(
                parse_rate_bits_per_s(bad),
                Err(UnitError::Rate { given: bad.into() }),
                "{bad}"
            );
        }
        let msg = parse_rate_bits_per_s("50mbps").unwrap_err().to_string();
        assert!(msg.contains("mbit"), "{msg}");
    }

    #[test]
    fn durations_in_s_ms_us_ns() {
        assert_eq!(parse_duration("10ms"), Ok(Duration::from_millis(10)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("100ns"), Ok(Duration::from_nanos(100)));
        assert_eq!(parse_duration("20msec"), Ok(Duration::from_millis(20)));
        assert_eq!(parse_duration("3usec"), Ok(Duration::from_micros(3)));
        assert_eq!(parse_duration("2sec"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("0ms"), Ok(Duration::ZERO));
        // 0.0015 ms = 1.5 us exactly.
        assert_eq!(parse_duration("0.0015ms"), Ok(Duration::from_nanos(1500)));
    }

    #[test]
    fn durations_without_a_unit_are_refused() {
        for bad in ["10", "ms", "10 minutes", "-1ms", "1,5ms"] {
            assert_eq!(
                parse_duration(bad),
                Err(UnitError::Duration { given: bad.into() }),
                "{bad}"
            );
        }
    }
}
