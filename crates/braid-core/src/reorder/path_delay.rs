//! Per-path one-way delay: the latest delay sample of each path, and the two quantities the
//! reorder policies read from them: the spread between the fastest and the slowest path (the
//! adaptive wait limit averages it) and one packet's lag behind the slowest path (delay
//! equalisation holds the packet that long).
//!
//! Sources: Pieska et al. 2024, sections 2.1 and 4.2 (the adaptive limit follows the delay
//! difference between paths; equalisation delays packets of the faster path "by the difference in
//! path delay experienced"); draft-amend-iccrg-multipath-reordering (an expiration timer derived
//! from the delay difference between the fastest and the slowest path).
//!
//! # Per arrival
//! One-way delay of the packet: `owd = arrival time (receiver clock) - send timestamp (sender
//! clock)`. The clocks are not synchronised, but the offset between them is the same for every
//! path (one sender, one receiver), so it cancels in differences between paths. The value is
//! kept as `i128`, so no pair of `u64` inputs overflows. The path's latest sample is replaced by
//! this one. Duplicates are sampled too: under redundant scheduling the slower path's copies are
//! all duplicates, and they are the only measure of that path's delay.
//!
//! # Choices where the sources are vague
//! - *Stale samples expire* after [`PATH_SAMPLE_MAX_AGE`] (1 s) without an arrival on that
//!   path. Keeping them forever would let a path that went away (or stopped being scheduled)
//!   pin the wait limit at its last, possibly queue-inflated, delay, and every loss on the
//!   remaining path would then wait that long at the head of the line. Expiring them at once
//!   would forget the slow path between two CPF bursts, and the first packets of the next burst
//!   would find a limit of just the margin and be released late. One second is five times the
//!   largest delay difference of the reference scenarios (ASYM200: 100 ms of base difference
//!   plus up to 100 ms of bottleneck queueing), so a path that is merely quiet between bursts
//!   keeps its sample. MP-DCCP's active reordering makes the same call by packet count (a path
//!   is inactive after 250 arrivals on other paths); a time rule does not depend on the rate.
//! - *Bounds*: spreads and lags are clamped to [`MAX_WAIT_LIMIT`] (10 s), so a clock step
//!   cannot poison the estimate or hold a packet for longer than any wait limit.
//! - Arrivals on a path index at or beyond the `n_paths` given at construction are not sampled.

use std::time::Duration;

use super::owd_stats::{OwdStats, OwdSummary};
use super::wait_limit::MAX_WAIT_LIMIT;
use crate::time::{duration_nanos, Instant};

/// A path's delay sample older than this no longer counts (see the module documentation).
pub const PATH_SAMPLE_MAX_AGE: Duration = Duration::from_secs(1);

const PATH_SAMPLE_MAX_AGE_NS: u64 = PATH_SAMPLE_MAX_AGE.as_nanos() as u64;

/// The latest one-way delay seen on one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OwdSample {
    /// Receiver arrival time minus sender timestamp, in nanoseconds (includes the clock offset).
    owd_ns: i128,
    at: Instant,
}

/// The latest one-way delay of each path. See the module documentation.
#[derive(Clone, Debug)]
pub struct PathDelays {
    latest: Vec<Option<OwdSample>>,
    /// Every sample of each path summarised, for reports ([`PathDelays::summary`]).
    stats: Vec<OwdStats>,
}

impl PathDelays {
    pub fn new(n_paths: usize) -> Self {
        PathDelays { latest: vec![None; n_paths], stats: vec![OwdStats::default(); n_paths] }
    }

    /// Path `path`'s samples so far summarised; `None` before its first or for an unknown path.
    pub fn summary(&self, path: usize) -> Option<OwdSummary> {
        self.stats.get(path)?.summary()
    }

    /// Takes the delay sample of a packet that arrived on `path` at `now`, stamped `send_ts_ns`
    /// by the sender. Returns the packet's one-way delay (clock offset included), or `None` for
    /// a path index this tunnel does not have.
    pub fn on_arrival(&mut self, now: Instant, path: usize, send_ts_ns: u64) -> Option<i128> {
        let slot = self.latest.get_mut(path)?;
        let owd_ns = i128::from(now.as_nanos()) - i128::from(send_ts_ns);
        *slot = Some(OwdSample { owd_ns, at: now });
        self.stats[path].add(now, owd_ns);
        Some(owd_ns)
    }

    /// The latest sample of `path` if it is still fresh at `now`: the one-way delay (clock offset
    /// included) a packet of that path without a timestamp of its own is taken to have had.
    pub fn latest(&self, now: Instant, path: usize) -> Option<i128> {
        self.latest
            .get(path)?
            .filter(|s| now.nanos_since(s.at) <= PATH_SAMPLE_MAX_AGE_NS)
            .map(|s| s.owd_ns)
    }

    /// Largest minus smallest fresh sample at `now`: zero while fewer than two paths are fresh.
    pub fn spread(&self, now: Instant) -> Duration {
        let mut fresh = self.fresh(now);
        let Some(first) = fresh.next() else {
            return Duration::ZERO;
        };
        let (lo, hi) = fresh.fold((first, first), |(lo, hi), d| (lo.min(d), hi.max(d)));
        clamp_to_wait_limit(hi - lo)
    }

    /// How many paths have a fresh sample at `now`.
    pub fn fresh_paths(&self, now: Instant) -> usize {
        self.fresh(now).count()
    }

    /// How far a packet with one-way delay `owd_ns` lags behind the slowest fresh path: the
    /// largest fresh sample minus `owd_ns`, zero when the packet is the slowest.
    pub fn lag_behind_slowest(&self, now: Instant, owd_ns: i128) -> Duration {
        let slowest = self.fresh(now).max().unwrap_or(owd_ns);
        clamp_to_wait_limit(slowest - owd_ns)
    }

    fn fresh(&self, now: Instant) -> impl Iterator<Item = i128> + '_ {
        self.latest
            .iter()
            .flatten()
            .filter(move |s| now.nanos_since(s.at) <= PATH_SAMPLE_MAX_AGE_NS)
            .map(|s| s.owd_ns)
    }
}

/// Negative differences become zero; large ones [`MAX_WAIT_LIMIT`].
fn clamp_to_wait_limit(diff_ns: i128) -> Duration {
    let max_ns = duration_nanos(MAX_WAIT_LIMIT);
    Duration::from_nanos(u64::try_from(diff_ns.max(0)).unwrap_or(u64::MAX).min(max_ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// The sender's clock runs 1000 s behind the receiver's; it must not matter.
    const OFFSET_MS: u64 = 1_000_000;

    fn at_ms(ms: u64) -> Instant {
        Instant::from_nanos((OFFSET_MS + ms) * MS)
    }

    /// A packet that arrives on `path` at `arrive_ms` after `owd_ms` in flight.
    fn arrive(d: &mut PathDelays, path: usize, arrive_ms: u64, owd_ms: u64) -> Option<i128> {
        d.on_arrival(at_ms(arrive_ms), path, (arrive_ms - owd_ms) * MS)
    }

    #[test]
    fn spread_is_slowest_minus_fastest_and_zero_for_one_path() {
        let mut d = PathDelays::new(3);
        assert_eq!(d.spread(at_ms(0)), Duration::ZERO, "no samples");
        arrive(&mut d, 0, 100, 10);
        assert_eq!(d.spread(at_ms(100)), Duration::ZERO, "one path");
        arrive(&mut d, 1, 101, 30);
        arrive(&mut d, 2, 102, 25);
        // max 30 ms - min 10 ms.
        assert_eq!(d.spread(at_ms(102)), Duration::from_millis(20));
        // The latest sample replaces the path's previous one: path 0 now at 12 ms.
        arrive(&mut d, 0, 103, 12);
        assert_eq!(d.spread(at_ms(103)), Duration::from_millis(18));
    }

    #[test]
    fn lag_is_measured_against_the_slowest_fresh_path() {
        let mut d = PathDelays::new(2);
        let fast = arrive(&mut d, 0, 100, 10).unwrap();
        assert_eq!(d.lag_behind_slowest(at_ms(100), fast), Duration::ZERO, "alone");
        let slow = arrive(&mut d, 1, 120, 30).unwrap();
        assert_eq!(d.lag_behind_slowest(at_ms(120), slow), Duration::ZERO, "slowest itself");
        let fast = arrive(&mut d, 0, 121, 10).unwrap();
        // 30 ms - 10 ms.
        assert_eq!(d.lag_behind_slowest(at_ms(121), fast), Duration::from_millis(20));
        // A packet slower than every path's latest sample lags behind nobody.
        assert_eq!(d.lag_behind_slowest(at_ms(121), slow + 5 * MS as i128), Duration::ZERO);
    }

    #[test]
    fn samples_stay_fresh_for_exactly_one_second() {
        let mut d = PathDelays::new(2);
        arrive(&mut d, 1, 30, 30);
        let fast = arrive(&mut d, 0, 31, 10).unwrap();
        assert_eq!(d.spread(at_ms(1030)), Duration::from_millis(20), "1 s old: still counted");
        let later = Instant::from_nanos(at_ms(1030).as_nanos() + 1);
        assert_eq!(d.spread(later), Duration::ZERO, "1 s + 1 ns: stale");
        assert_eq!(d.lag_behind_slowest(later, fast), Duration::ZERO);
    }

    #[test]
    fn absurd_timestamps_are_clamped_and_unknown_paths_ignored() {
        let mut d = PathDelays::new(2);
        d.on_arrival(Instant::from_nanos(u64::MAX), 0, 0);
        d.on_arrival(Instant::from_nanos(u64::MAX), 1, u64::MAX);
        // The spread is 2^64 - 1 ns; clamped to 10 s.
        assert_eq!(d.spread(Instant::from_nanos(u64::MAX)), MAX_WAIT_LIMIT);
        assert_eq!(d.on_arrival(Instant::ZERO, 2, 0), None);
        assert_eq!(d.spread(Instant::from_nanos(u64::MAX)), MAX_WAIT_LIMIT);
    }
}
