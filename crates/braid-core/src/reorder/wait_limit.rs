//! The wait limit: how long a packet that arrived beyond a gap may wait for the gap to fill.
//!
//! Sources: Pieska et al. 2024, section 2.1 (the limit "may either be static or adapt to variations
//! in path delay"), section 4.2 and Table 1 (an exponentially weighted moving average in which each
//! new value weighs 95%, padded with a margin: 10 ms in Table 1, 5 ms in the text);
//! draft-amend-iccrg-multipath-reordering (a static expiration timer, or one derived from the
//! delay difference between the fastest and the slowest path); see also docs/design.md section 3.
//!
//! # Adaptive estimator, per arrival
//! 1. The arrival's one-way delay replaces its path's latest sample ([`PathDelays`]).
//! 2. `sample = max(owd) - min(owd)` over the paths whose latest sample is fresh
//!    ([`PathDelays::spread`]; stale after [`PATH_SAMPLE_MAX_AGE`]). With one fresh path the
//!    sample is 0, except before two paths have ever been fresh together: then it is half the
//!    spread of the paths' probe round-trip times when the data plane measured them
//!    (`ReorderBuffer::on_path_rtt_sample`), so the first packets of a slower path are not
//!    given up on at the bare margin.
//! 3. `estimate = w * sample + (1 - w) * estimate`, `w` = `new_sample_weight`; the estimate
//!    starts at 0, so the wait limit is the bare margin until a second path delivers.
//! 4. `wait limit = estimate + margin`.
//!
//! # Choices where the sources are vague
//! - *Bounds*: a sample is clamped to [`MAX_WAIT_LIMIT`] (10 s, the largest wait `validate`
//!   accepts) before it enters the average, so a clock step cannot poison the estimate, and the
//!   wait limit never exceeds it either.
//! - *Arithmetic*: the average is kept in `f64` nanoseconds (exact to the nanosecond up to
//!   2^53 ns = 104 days; only `+` and `*`, so bit-for-bit deterministic) and rounded to whole
//!   nanoseconds for the limit.
//! - Freshness of samples and arrivals on unknown path indices: see `path_delay.rs`.
//!
//! [`PathDelays`]: super::PathDelays
//! [`PathDelays::spread`]: super::PathDelays::spread
//! [`PATH_SAMPLE_MAX_AGE`]: super::PATH_SAMPLE_MAX_AGE

use std::time::Duration;

use super::{ReorderConfig, ReorderKind};
use crate::time::duration_nanos;

/// Largest wait limit, and largest wait `ReorderConfig::validate` accepts.
pub const MAX_WAIT_LIMIT: Duration = Duration::from_secs(10);

const MAX_WAIT_LIMIT_NS: u64 = MAX_WAIT_LIMIT.as_nanos() as u64;

/// The wait limit of one reorder buffer, by policy.
#[derive(Clone, Debug)]
pub(crate) enum WaitLimit {
    None,
    Static(Duration),
    Adaptive(AdaptiveWaitLimit),
}

impl WaitLimit {
    pub(crate) fn new(config: &ReorderConfig) -> Self {
        match config.kind {
            ReorderKind::None => WaitLimit::None,
            ReorderKind::Static => WaitLimit::Static(config.static_wait.min(MAX_WAIT_LIMIT)),
            ReorderKind::Adaptive => {
                WaitLimit::Adaptive(AdaptiveWaitLimit::new(config.margin, config.new_sample_weight))
            }
        }
    }

    /// An arrival left the paths' one-way delays `spread` apart (step 2).
    #[inline]
    pub(crate) fn on_spread_sample(&mut self, spread: Duration) {
        if let WaitLimit::Adaptive(a) = self {
            a.on_sample(spread);
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

/// Adaptive wait limit: moving average of the one-way-delay spread between paths, plus a margin.
#[derive(Clone, Debug)]
pub struct AdaptiveWaitLimit {
    new_sample_weight: f64,
    margin_ns: u64,
    estimate_ns: f64,
    wait_limit: Duration,
}

impl AdaptiveWaitLimit {
    /// `new_sample_weight` should lie in (0, 1] (`ReorderConfig::validate`); other values are
    /// clamped into [0, 1], NaN counts as 1.
    pub fn new(margin: Duration, new_sample_weight: f64) -> Self {
        let w = if new_sample_weight.is_nan() { 1.0 } else { new_sample_weight.clamp(0.0, 1.0) };
        let margin_ns = duration_nanos(margin).min(MAX_WAIT_LIMIT_NS);
        AdaptiveWaitLimit {
            new_sample_weight: w,
            margin_ns,
            estimate_ns: 0.0,
            wait_limit: Duration::from_nanos(margin_ns),
        }
    }

    /// Steps 3 and 4, for one spread sample (clamped to [`MAX_WAIT_LIMIT`]).
    pub fn on_sample(&mut self, spread: Duration) {
        let sample_ns = duration_nanos(spread).min(MAX_WAIT_LIMIT_NS);
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
    use crate::reorder::PathDelays;
    use crate::time::Instant;

    const MS: u64 = 1_000_000;

    /// Path delays feeding the estimator, as the reorder buffer wires them.
    struct Estimator {
        delays: PathDelays,
        limit: AdaptiveWaitLimit,
    }

    impl Estimator {
        fn new(margin: Duration) -> Self {
            Estimator { delays: PathDelays::new(2), limit: AdaptiveWaitLimit::new(margin, 0.95) }
        }

        fn on_arrival(&mut self, now: Instant, path: usize, send_ts_ns: u64) {
            if self.delays.on_arrival(now, path, send_ts_ns).is_some() {
                self.limit.on_sample(self.delays.spread(now));
            }
        }

        /// A packet sent at `sent_ms` (sender clock, 1000 s behind the receiver's; must not
        /// matter) that spent `owd_ms` in flight.
        fn arrive(&mut self, path: usize, sent_ms: u64, owd_ms: u64) {
            let offset_ms = 1_000_000;
            let now = Instant::from_nanos((offset_ms + sent_ms + owd_ms) * MS);
            self.on_arrival(now, path, sent_ms * MS);
        }

        fn estimate(&self) -> Duration {
            self.limit.estimate()
        }

        fn wait_limit(&self) -> Duration {
            self.limit.wait_limit()
        }
    }

    #[test]
    fn one_path_alone_gives_the_bare_margin() {
        let mut e = Estimator::new(Duration::from_millis(10));
        assert_eq!(e.wait_limit(), Duration::from_millis(10));
        for i in 0..10 {
            e.arrive(0, i, 25);
        }
        assert_eq!(e.estimate(), Duration::ZERO);
        assert_eq!(e.wait_limit(), Duration::from_millis(10));
    }

    #[test]
    fn converges_to_owd_difference_plus_margin_with_95_percent_weight() {
        // Paths with one-way delays of 10 ms and 30 ms: difference 20 ms, limit 30 ms.
        let mut e = Estimator::new(Duration::from_millis(10));
        e.arrive(0, 0, 10);
        assert_eq!(e.wait_limit(), Duration::from_millis(10), "one path: sample 0");
        e.arrive(1, 0, 30);
        // 0.95 * 20 ms + 0.05 * 0 = 19 ms.
        assert_eq!(e.estimate(), Duration::from_millis(19));
        assert_eq!(e.wait_limit(), Duration::from_millis(29));
        e.arrive(0, 1, 10);
        // 0.95 * 20 ms + 0.05 * 19 ms = 19.95 ms.
        assert_eq!(e.estimate(), Duration::from_micros(19_950));
        assert_eq!(e.wait_limit(), Duration::from_micros(29_950));
        for i in 2..20 {
            e.arrive((i % 2) as usize, i, if i % 2 == 0 { 10 } else { 30 });
        }
        assert_eq!(e.wait_limit(), Duration::from_millis(30));
    }

    #[test]
    fn idle_path_sample_is_kept_for_one_second_then_expires() {
        let mut e = Estimator::new(Duration::from_millis(10));
        e.arrive(1, 0, 30); // path 1's last sample, taken at 30 ms
        e.arrive(0, 1, 10);
        assert_eq!(e.estimate(), Duration::from_millis(19));
        // Path 0 alone, exactly 1 s after path 1's sample: still counted.
        e.arrive(0, 1020, 10);
        assert_eq!(e.estimate(), Duration::from_nanos(19_950_000));
        // 1 ns later it is stale: the spread is 0 and the estimate decays.
        let offset_ns = 1_000_000 * 1_000 * MS;
        let now = Instant::from_nanos(offset_ns + 1030 * MS + 1);
        e.on_arrival(now, 0, now.as_nanos() - offset_ns - 10 * MS);
        // 0.95 * 0 + 0.05 * 19.95 ms.
        assert_eq!(e.estimate(), Duration::from_nanos(997_500));
        e.arrive(0, 1040, 10);
        assert_eq!(e.estimate(), Duration::from_nanos(49_875));
        // The path comes back: its fresh sample counts at once (0.95 * 20 ms + 0.05 * 49875 ns).
        e.arrive(1, 1041, 30);
        assert_eq!(e.estimate(), Duration::from_nanos(19_002_494));
    }

    #[test]
    fn absurd_samples_are_bounded_and_unknown_paths_ignored() {
        let mut e = Estimator::new(Duration::from_millis(10));
        e.on_arrival(Instant::from_nanos(u64::MAX), 0, 0);
        e.on_arrival(Instant::ZERO, 1, u64::MAX);
        // The spread (2^65 ns) is clamped to 10 s before averaging.
        assert_eq!(e.estimate(), Duration::from_millis(9_500));
        assert_eq!(e.wait_limit(), Duration::from_millis(9_510));
        let before = e.estimate();
        e.on_arrival(Instant::ZERO, 7, 123);
        assert_eq!(e.estimate(), before);
        // A sample beyond 10 s is clamped by the estimator itself too: 0.95 * 10 s.
        let mut a = AdaptiveWaitLimit::new(Duration::ZERO, 0.95);
        a.on_sample(Duration::from_secs(3600));
        assert_eq!(a.estimate(), Duration::from_millis(9_500));
        // Estimate plus margin is capped too.
        let mut e = Estimator::new(MAX_WAIT_LIMIT);
        e.arrive(0, 0, 10);
        e.arrive(1, 0, 1000);
        assert_eq!(e.wait_limit(), MAX_WAIT_LIMIT);
    }

    #[test]
    fn policies_report_their_limit() {
        let mut c = ReorderConfig { kind: ReorderKind::None, ..ReorderConfig::default() };
        assert_eq!(WaitLimit::new(&c).current(), Duration::ZERO);
        c.kind = ReorderKind::Static;
        let mut s = WaitLimit::new(&c);
        s.on_spread_sample(Duration::from_millis(20));
        assert_eq!(s.current(), Duration::from_millis(50));
        c.kind = ReorderKind::Adaptive;
        let mut a = WaitLimit::new(&c);
        assert_eq!(a.current(), Duration::from_millis(10));
        // 0.95 * 20 ms + 10 ms margin.
        a.on_spread_sample(Duration::from_millis(20));
        assert_eq!(a.current(), Duration::from_millis(29));
    }
}
