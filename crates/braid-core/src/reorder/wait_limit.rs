//! The wait limit: how long a packet that arrived beyond a gap may wait for the gap to fill.
//!
//! Sources: seed 000 section 2.1 (the limit "may either be static or adapt to variations in
//! path delay"), section 4.2 and Table 1 (an exponentially weighted moving average in which each
//! new value weighs 95%, padded with a margin: 10 ms in Table 1, 5 ms in the text);
//! draft-amend-iccrg-multipath-reordering (a static expiration timer, or one derived from the
//! delay difference between the fastest and the slowest path). DESIGN.md section 3 restates it.
//!
//! # Adaptive estimator, per arrival
//! 1. One-way delay of the packet: `owd = arrival time (receiver clock) - send timestamp (sender
//!    clock)`. The clocks are not synchronised, but the offset between them is the same for
//!    every path (one sender, one receiver), so it cancels in differences between paths. The
//!    value is kept as `i128`, so no pair of `u64` inputs overflows.
//! 2. The path's latest sample is replaced by this one.
//! 3. `sample = max(owd) - min(owd)` over the paths whose latest sample is fresh (see below).
//!    Paths that have delivered nothing are ignored; with one fresh path the sample is 0.
//! 4. `estimate = w * sample + (1 - w) * estimate`, `w` = `new_sample_weight`; the estimate
//!    starts at 0, so the wait limit is the bare margin until a second path delivers.
//! 5. `wait limit = estimate + margin`.
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
//! - *Bounds*: a sample is clamped to [`MAX_WAIT_LIMIT`] (10 s, the largest wait `validate`
//!   accepts) before it enters the average, so a clock step cannot poison the estimate, and the
//!   wait limit never exceeds it either.
//! - *Arithmetic*: the average is kept in `f64` nanoseconds (exact to the nanosecond up to
//!   2^53 ns = 104 days; only `+` and `*`, so bit-for-bit deterministic) and rounded to whole
//!   nanoseconds for the limit.
//! - Arrivals on a path index at or beyond the `n_paths` given at construction are not sampled
//!   (the packet itself is still reordered).

use std::time::Duration;

use super::{ReorderConfig, ReorderKind};
use crate::time::{duration_nanos, Instant};

/// Largest wait limit, and largest wait `ReorderConfig::validate` accepts.
pub const MAX_WAIT_LIMIT: Duration = Duration::from_secs(10);
/// A path's delay sample older than this no longer counts (see the module documentation).
pub const PATH_SAMPLE_MAX_AGE: Duration = Duration::from_secs(1);

const MAX_WAIT_LIMIT_NS: u64 = MAX_WAIT_LIMIT.as_nanos() as u64;
const PATH_SAMPLE_MAX_AGE_NS: u64 = PATH_SAMPLE_MAX_AGE.as_nanos() as u64;

/// The wait limit of one reorder buffer, by policy.
#[derive(Clone, Debug)]
pub(crate) enum WaitLimit {
    None,
    Static(Duration),
    Adaptive(AdaptiveWaitLimit),
}

impl WaitLimit {
    pub(crate) fn new(config: &ReorderConfig, n_paths: usize) -> Self {
        match config.kind {
            ReorderKind::None => WaitLimit::None,
            ReorderKind::Static => WaitLimit::Static(config.static_wait.min(MAX_WAIT_LIMIT)),
            ReorderKind::Adaptive => WaitLimit::Adaptive(AdaptiveWaitLimit::new(
                n_paths,
                config.margin,
                config.new_sample_weight,
            )),
        }
    }

    /// A packet arrived on `path` at `now`, stamped `send_ts_ns` by the sender.
    #[inline]
    pub(crate) fn on_arrival(&mut self, now: Instant, path: usize, send_ts_ns: u64) {
        if let WaitLimit::Adaptive(a) = self {
            a.on_arrival(now, path, send_ts_ns);
        }
    }

    #[inline]
    pub(crate) fn current(&self) -> Duration {
        match self {
            WaitLimit::None => Duration::ZERO,
            WaitLimit::Static(d) => *d,
            WaitLimit::Adaptive(a) => a.wait_limit(),
        }
    }
}

/// The latest one-way delay seen on one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OwdSample {
    /// Receiver arrival time minus sender timestamp, in nanoseconds (includes the clock offset).
    owd_ns: i128,
    at: Instant,
}

/// Adaptive wait limit: moving average of the one-way-delay spread between paths, plus a margin.
#[derive(Clone, Debug)]
pub struct AdaptiveWaitLimit {
    latest: Vec<Option<OwdSample>>,
    new_sample_weight: f64,
    margin_ns: u64,
    estimate_ns: f64,
    wait_limit: Duration,
}

impl AdaptiveWaitLimit {
    /// An estimator for `n_paths` paths. `new_sample_weight` should lie in (0, 1]
    /// (`ReorderConfig::validate`); other values are clamped into [0, 1], NaN counts as 1.
    pub fn new(n_paths: usize, margin: Duration, new_sample_weight: f64) -> Self {
        let w = if new_sample_weight.is_nan() { 1.0 } else { new_sample_weight.clamp(0.0, 1.0) };
        let margin_ns = duration_nanos(margin).min(MAX_WAIT_LIMIT_NS);
        AdaptiveWaitLimit {
            latest: vec![None; n_paths],
            new_sample_weight: w,
            margin_ns,
            estimate_ns: 0.0,
            wait_limit: Duration::from_nanos(margin_ns),
        }
    }

    /// Takes the delay sample of a packet that arrived on `path` at `now`.
    pub fn on_arrival(&mut self, now: Instant, path: usize, send_ts_ns: u64) {
        let owd_ns = i128::from(now.as_nanos()) - i128::from(send_ts_ns);
        let Some(slot) = self.latest.get_mut(path) else {
            return;
        };
        *slot = Some(OwdSample { owd_ns, at: now });
        let sample_ns = self.spread_ns(now, owd_ns);
        self.update_estimate(sample_ns);
    }

    /// Step 3: spread of the fresh per-path delays, clamped to the largest wait limit.
    fn spread_ns(&self, now: Instant, owd_ns: i128) -> u64 {
        let (mut lo, mut hi) = (owd_ns, owd_ns);
        for s in self.latest.iter().flatten() {
            if now.nanos_since(s.at) > PATH_SAMPLE_MAX_AGE_NS {
                continue;
            }
            lo = lo.min(s.owd_ns);
            hi = hi.max(s.owd_ns);
        }
        u64::try_from(hi - lo).unwrap_or(u64::MAX).min(MAX_WAIT_LIMIT_NS)
    }

    /// Steps 4 and 5.
    fn update_estimate(&mut self, sample_ns: u64) {
        let w = self.new_sample_weight;
        self.estimate_ns = w * sample_ns as f64 + (1.0 - w) * self.estimate_ns;
        // Both terms lie in [0, MAX_WAIT_LIMIT_NS]; the cast saturates anyway.
        let estimate_ns = self.estimate_ns.round() as u64;
        self.wait_limit =
            Duration::from_nanos(estimate_ns.saturating_add(self.margin_ns).min(MAX_WAIT_LIMIT_NS));
    }

    /// The current wait limit: estimate plus margin.
    pub fn wait_limit(&self) -> Duration {
        self.wait_limit
    }

    /// The current estimate of the delay difference between paths (without the margin).
    pub fn estimate(&self) -> Duration {
        Duration::from_nanos(self.estimate_ns.round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn at_ms(ms: u64) -> Instant {
        Instant::from_nanos(ms * MS)
    }

    /// A packet sent at `sent_ms` (sender clock, offset by `offset_ms` from the receiver's)
    /// that spent `owd_ms` in flight.
    fn arrive(e: &mut AdaptiveWaitLimit, path: usize, sent_ms: u64, owd_ms: u64) {
        let offset_ms = 1_000_000; // sender clock runs 1000 s behind; must not matter
        e.on_arrival(at_ms(offset_ms + sent_ms + owd_ms), path, sent_ms * MS);
    }

    #[test]
    fn one_path_alone_gives_the_bare_margin() {
        let mut e = AdaptiveWaitLimit::new(2, Duration::from_millis(10), 0.95);
        assert_eq!(e.wait_limit(), Duration::from_millis(10));
        for i in 0..10 {
            arrive(&mut e, 0, i, 25);
        }
        assert_eq!(e.estimate(), Duration::ZERO);
        assert_eq!(e.wait_limit(), Duration::from_millis(10));
    }

    #[test]
    fn converges_to_owd_difference_plus_margin_with_95_percent_weight() {
        // Paths with one-way delays of 10 ms and 30 ms: difference 20 ms, limit 30 ms.
        let mut e = AdaptiveWaitLimit::new(2, Duration::from_millis(10), 0.95);
        arrive(&mut e, 0, 0, 10);
        assert_eq!(e.wait_limit(), Duration::from_millis(10), "one path: sample 0");
        arrive(&mut e, 1, 0, 30);
        // 0.95 * 20 ms + 0.05 * 0 = 19 ms.
        assert_eq!(e.estimate(), Duration::from_millis(19));
        assert_eq!(e.wait_limit(), Duration::from_millis(29));
        arrive(&mut e, 0, 1, 10);
        // 0.95 * 20 ms + 0.05 * 19 ms = 19.95 ms.
        assert_eq!(e.estimate(), Duration::from_micros(19_950));
        assert_eq!(e.wait_limit(), Duration::from_micros(29_950));
        for i in 2..20 {
            arrive(&mut e, (i % 2) as usize, i, if i % 2 == 0 { 10 } else { 30 });
        }
        assert_eq!(e.wait_limit(), Duration::from_millis(30));
    }

    #[test]
    fn idle_path_sample_is_kept_for_one_second_then_expires() {
        let mut e = AdaptiveWaitLimit::new(2, Duration::from_millis(10), 0.95);
        arrive(&mut e, 1, 0, 30); // path 1's last sample, taken at 30 ms
        arrive(&mut e, 0, 1, 10);
        assert_eq!(e.estimate(), Duration::from_millis(19));
        // Path 0 alone, exactly 1 s after path 1's sample: still counted.
        arrive(&mut e, 0, 1020, 10);
        assert_eq!(e.estimate(), Duration::from_nanos(19_950_000));
        // 1 ns later it is stale: the spread is 0 and the estimate decays.
        let offset_ns = 1_000_000 * 1_000 * MS;
        let now = Instant::from_nanos(offset_ns + 1030 * MS + 1);
        e.on_arrival(now, 0, now.as_nanos() - offset_ns - 10 * MS);
        // 0.95 * 0 + 0.05 * 19.95 ms.
        assert_eq!(e.estimate(), Duration::from_nanos(997_500));
        arrive(&mut e, 0, 1040, 10);
        assert_eq!(e.estimate(), Duration::from_nanos(49_875));
        // The path comes back: its fresh sample counts at once (0.95 * 20 ms + 0.05 * 49875 ns).
        arrive(&mut e, 1, 1041, 30);
        assert_eq!(e.estimate(), Duration::from_nanos(19_002_494));
    }

    #[test]
    fn absurd_timestamps_are_bounded_and_unknown_paths_ignored() {
        let mut e = AdaptiveWaitLimit::new(2, Duration::from_millis(10), 0.95);
        e.on_arrival(Instant::from_nanos(u64::MAX), 0, 0);
        e.on_arrival(Instant::ZERO, 1, u64::MAX);
        // The spread (2^65 ns) is clamped to 10 s before averaging.
        assert_eq!(e.estimate(), Duration::from_millis(9_500));
        assert_eq!(e.wait_limit(), Duration::from_millis(9_510));
        let before = e.estimate();
        e.on_arrival(Instant::ZERO, 7, 123);
        assert_eq!(e.estimate(), before);
        // Estimate plus margin is capped too.
        let mut e = AdaptiveWaitLimit::new(2, MAX_WAIT_LIMIT, 0.95);
        arrive(&mut e, 0, 0, 10);
        arrive(&mut e, 1, 0, 1000);
        assert_eq!(e.wait_limit(), MAX_WAIT_LIMIT);
    }

    #[test]
    fn policies_report_their_limit() {
        let mut c = ReorderConfig { kind: ReorderKind::None, ..ReorderConfig::default() };
        assert_eq!(WaitLimit::new(&c, 2).current(), Duration::ZERO);
        c.kind = ReorderKind::Static;
        let mut s = WaitLimit::new(&c, 2);
        s.on_arrival(at_ms(100), 0, 0);
        assert_eq!(s.current(), Duration::from_millis(50));
        c.kind = ReorderKind::Adaptive;
        assert_eq!(WaitLimit::new(&c, 2).current(), Duration::from_millis(10));
    }
}
