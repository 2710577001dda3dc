//! Time as the core sees it: an integer count of nanoseconds on the driver's clock.
//!
//! The simulator starts its clock at zero; the data plane maps `CLOCK_MONOTONIC` onto it. Integer
//! nanoseconds keep the simulator bit-for-bit deterministic (no float drift) and make ordering of
//! simultaneous events exact. Durations are `std::time::Duration`.

use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// A point in time, in nanoseconds since the driver's epoch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

impl Instant {
    /// The driver's epoch.
    pub const ZERO: Instant = Instant(0);
    /// A point later than any the simulator reaches; used as "never".
    pub const FAR_FUTURE: Instant = Instant(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        Instant(ns)
    }

    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Time elapsed since `earlier`, or zero when `earlier` is later than `self`.
    pub fn saturating_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// Nanoseconds elapsed since `earlier`, or zero when `earlier` is later than `self`.
    pub const fn nanos_since(self, earlier: Instant) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    pub const fn add_nanos(self, ns: u64) -> Instant {
        Instant(self.0.saturating_add(ns))
    }

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
}

/// Converts a duration to whole nanoseconds, saturating at `u64::MAX` (584 years).
pub fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, rhs: Duration) -> Instant {
        Instant(self.0.saturating_add(duration_nanos(rhs)))
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, rhs: Duration) -> Instant {
        Instant(self.0.saturating_sub(duration_nanos(rhs)))
    }
}

/// Bytes that `rate_bytes_per_s` carries in `d`, rounded down; `u64::MAX` when that is more.
pub fn bytes_in(rate_bytes_per_s: u64, d: Duration) -> u64 {
    // The product fits 64 bits for any rate and interval the models use; 128-bit division is a
    // library call several times slower, kept for the rest. Both give the same result.
    match u64::try_from(d.as_nanos()).ok().and_then(|ns| rate_bytes_per_s.checked_mul(ns)) {
        Some(product) => product / 1_000_000_000,
        None => u128::from(rate_bytes_per_s)
            .checked_mul(d.as_nanos())
            .and_then(|product| u64::try_from(product / 1_000_000_000).ok())
            .unwrap_or(u64::MAX),
    }
}

/// Time to send `bytes` at `rate_bytes_per_s`, rounded up to the next nanosecond.
pub fn transmission_time(bytes: u64, rate_bytes_per_s: u64) -> Duration {
    if rate_bytes_per_s == 0 {
        return Duration::MAX;
    }
    // As in `bytes_in`: 64-bit arithmetic whenever the product fits (any packet), the same result.
    let ns = match bytes.checked_mul(1_000_000_000) {
        Some(product) => product.div_ceil(rate_bytes_per_s),
        None => {
            let ns = (bytes as u128 * 1_000_000_000).div_ceil(rate_bytes_per_s as u128);
            u64::try_from(ns).unwrap_or(u64::MAX)
        }
    };
    Duration::from_nanos(ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        let t = Instant::from_nanos(5);
        assert_eq!(t - Duration::from_nanos(10), Instant::ZERO);
        assert_eq!(Instant::FAR_FUTURE + Duration::from_secs(1), Instant::FAR_FUTURE);
        assert_eq!(t.saturating_since(Instant::from_nanos(9)), Duration::ZERO);
    }

    #[test]
    fn transmission_time_of_a_full_frame_at_50_mbps() {
        // 1514 bytes at 50 Mbit/s = 242.24 us.
        let d = transmission_time(1514, 50_000_000 / 8);
        assert_eq!(d.as_nanos(), 242_240);
        assert_eq!(bytes_in(50_000_000 / 8, d), 1514);
    }

    #[test]
    fn the_64_bit_paths_agree_with_128_bit_arithmetic_on_both_sides_of_overflow() {
        let wide_time = |bytes: u64, rate: u64| {
            let ns = (u128::from(bytes) * 1_000_000_000).div_ceil(u128::from(rate));
            u64::try_from(ns).unwrap_or(u64::MAX)
        };
        let wide_bytes = |rate: u64, d: Duration| {
            let product = u128::from(rate).checked_mul(d.as_nanos());
            product.and_then(|p| u64::try_from(p / 1_000_000_000).ok()).unwrap_or(u64::MAX)
        };
        let edge = u64::MAX / 1_000_000_000;
        for bytes in [0, 1, 1514, 65_535, edge - 1, edge, edge + 1, u64::MAX / 7, u64::MAX] {
            for rate in [1, 7, 6_250_000, 125_000_000_000, u64::MAX] {
                assert_eq!(
                    transmission_time(bytes, rate).as_nanos(),
                    u128::from(wide_time(bytes, rate)),
                    "{bytes} B at {rate} B/s"
                );
            }
        }
        for rate in [0, 1, 6_250_000, u64::MAX / 3, u64::MAX] {
            for ns in [0, 1, 999_999_999, 1_000_000_007, u64::MAX / 5, u64::MAX] {
                let d = Duration::from_nanos(ns);
                assert_eq!(bytes_in(rate, d), wide_bytes(rate, d), "{rate} B/s for {ns} ns");
            }
            let long = Duration::new(u64::MAX / 2, 999_999_999);
            assert_eq!(bytes_in(rate, long), wide_bytes(rate, long), "{rate} B/s, beyond u64 ns");
        }
    }
}
