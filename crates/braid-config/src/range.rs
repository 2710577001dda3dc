//! Range checks for validation: a value outside its range becomes a [`FieldError`] naming the
//! dotted field and the range. NaN fails every float check, because each is written as a
//! positive containment test.

use std::ops::RangeInclusive;

use crate::FieldError;

/// Buffers and queues, packets: the range of every queue length either driver configures.
pub const QUEUE_PKTS: RangeInclusive<u64> = 1..=1_000_000;
/// Margins, waits and timers, ms.
pub const WAIT_MS: F64Range = F64Range::closed(0.0, 10_000.0);

/// An interval of floats, each end open or closed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F64Range {
    pub lo: f64,
    pub lo_closed: bool,
    pub hi: f64,
    pub hi_closed: bool,
}

impl F64Range {
    /// `[lo, hi]`.
    pub const fn closed(lo: f64, hi: f64) -> Self {
        F64Range { lo, lo_closed: true, hi, hi_closed: true }
    }

    /// `(lo, hi]`.
    pub const fn open_closed(lo: f64, hi: f64) -> Self {
        F64Range { lo, lo_closed: false, hi, hi_closed: true }
    }

    /// `[lo, hi)`.
    pub const fn closed_open(lo: f64, hi: f64) -> Self {
        F64Range { lo, lo_closed: true, hi, hi_closed: false }
    }

    pub fn contains(&self, v: f64) -> bool {
        let above = if self.lo_closed { v >= self.lo } else { v > self.lo };
        let below = if self.hi_closed { v <= self.hi } else { v < self.hi };
        above && below
    }

    /// The range as the predicate of an error: "must be in (0, 1]".
    pub fn describe(&self) -> String {
        format!(
            "must be in {}{}, {}{}",
            if self.lo_closed { '[' } else { '(' },
            self.lo,
            self.hi,
            if self.hi_closed { ']' } else { ')' }
        )
    }
}

/// Checks a float field against `range`.
pub fn float(field: &str, value: f64, range: F64Range) -> Result<(), FieldError> {
    if range.contains(value) {
        Ok(())
    } else {
        Err(FieldError::invalid(field, value, range.describe()))
    }
}

/// Checks an integer field against `range`.
pub fn int(
    field: &str,
    value: impl Into<u64>,
    range: RangeInclusive<u64>,
) -> Result<(), FieldError> {
    let value = value.into();
    if range.contains(&value) {
        Ok(())
    } else {
        Err(FieldError::invalid(
            field,
            value,
            format!("must be in {}..={}", range.start(), range.end()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_open_and_closed_and_nan_outside() {
        let r = F64Range::open_closed(0.0, 1.0);
        assert!(!r.contains(0.0) && r.contains(1.0) && !r.contains(f64::NAN));
        let r = F64Range::closed_open(0.0, 1.0);
        assert!(r.contains(0.0) && !r.contains(1.0));
        assert_eq!(r.describe(), "must be in [0, 1)");
        assert_eq!(
            float("x.y_ms", f64::NAN, F64Range::closed(0.0, 5.0)).unwrap_err().to_string(),
            "x.y_ms = NaN: must be in [0, 5]"
        );
        assert_eq!(int("n", 0u32, 1..=64).unwrap_err().to_string(), "n = 0: must be in 1..=64");
        assert_eq!(int("n", 64u32, 1..=64), Ok(()));
    }
}
