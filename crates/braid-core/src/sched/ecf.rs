//! Earliest Completion First (ECF): Lim, Nahum, Towsley, Gibbens, "ECF: An MPTCP path scheduler
//! to manage heterogeneous paths", CoNEXT 2017, section 4 (Algorithm 1); Linux out-of-tree
//! MPTCP `net/mptcp/mptcp_ecf.c` (`ecf_get_available_subflow`).
//!
//! ECF starts from MinRTT. When the fastest path `f` has no room and MinRTT would use a slower
//! path `s`, ECF compares finishing the `k` bytes still queued on `f` with using `s`: `f` needs
//! `n = 1 + k / cwnd_f` rounds of `rtt_f`, while a packet sent on `s` takes `rtt_s` (plus a margin
//! `delta` for RTT variation). It waits for `f` (returns `None`) when
//!
//! ```text
//! n x rtt_f < (1 + waiting x beta) x (rtt_s + delta)          (1)
//! k / cwnd_s x rtt_s >= 2 rtt_f + delta                       (2)
//! ```
//!
//! and sets `waiting`; (2) checks that `s` could not itself clear the queue before `f` is back.
//! If (1) holds but (2) does not, it sends on `s` and leaves `waiting` as it was; if (1) fails it
//! sends on `s` and clears `waiting`. `waiting x beta` is the hysteresis: once ECF has decided to
//! wait, it keeps waiting until `f` would be slower by a margin `beta` (0.25, the paper and the
//! kernel's `mptcp_ecf_r_beta = 4`), so decisions do not flap.
//!
//! # Mapping onto Braid and choices
//! - `k` is the scheduler queue, including the packet being scheduled, counted in full packets
//!   (`queued_pkts x MSS`): the unsent data of the MPTCP meta socket. `cwnd`s are the path
//!   controllers' windows in charged bytes.
//! - `delta = max(rttvar_f, rttvar_s)` with the RFC 6298 RTTVAR of each path's estimator (the
//!   paper's `max(sigma_f, sigma_s)`).
//! - `k` is used as is, as in Algorithm 1; the kernel rounds `k` up to at least one window of
//!   each path (`x_f = max(sndbuf, cwnd_f)`), which we do not.
//! - A path without an RTT sample ranks fastest (as in MinRTT); when either of the two paths has
//!   no sample there is nothing to compare and ECF follows MinRTT.
//! - The inequalities are evaluated exactly in integers (nanoseconds x bytes, beta in
//!   thousandths).

use std::time::Duration;

use super::config::{out_of_range, within};
use super::{min_rtt_choice, MinRttChoice, PathView, Scheduler, SchedulerMetrics};
use crate::time::Instant;
use crate::ConfigError;

/// Paper section 4 and `mptcp_ecf.c` (`mptcp_ecf_r_beta = 4`, beta = 1/4).
pub const ECF_BETA: f64 = 0.25;

/// Beta is kept in thousandths.
const PERMILLE: u128 = 1000;

/// ECF parameters. `Default` is the paper's.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct EcfConfig {
    /// Hysteresis margin applied to condition (1) while waiting.
    pub beta: f64,
}

impl Default for EcfConfig {
    fn default() -> Self {
        EcfConfig { beta: ECF_BETA }
    }
}

impl EcfConfig {
    /// Checks every field; the error names the first one out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !within(self.beta, 0.0, 10.0) {
            return out_of_range("ecf.beta", "in [0, 10]");
        }
        Ok(())
    }
}

/// The ECF scheduler. See the module documentation.
#[derive(Clone, Debug)]
pub struct EarliestCompletionFirst {
    beta_permille: u128,
    /// Whether the last comparison decided to wait for the fastest path.
    waiting: bool,
}

/// What ECF compares for one decision.
#[derive(Clone, Copy, Debug)]
struct Comparison {
    queued_bytes: u128,
    cwnd_f: u128,
    cwnd_s: u128,
    rtt_f: u128,
    rtt_s: u128,
    delta: u128,
}

impl EarliestCompletionFirst {
    /// An ECF scheduler. `config` should have passed [`EcfConfig::validate`]; a negative or NaN
    /// beta counts as zero.
    pub fn new(config: &EcfConfig) -> Self {
        let beta_permille = (config.beta.clamp(0.0, 10.0) * PERMILLE as f64).round() as u128;
        EarliestCompletionFirst { beta_permille, waiting: false }
    }

    pub fn is_waiting(&self) -> bool {
        self.waiting
    }

    /// (1): `(1 + k / cwnd_f) rtt_f < (1 + waiting beta)(rtt_s + delta)`, multiplied through by
    /// `cwnd_f` and 1000.
    fn fast_path_finishes_first(&self, c: &Comparison) -> bool {
        let margin = PERMILLE + if self.waiting { self.beta_permille } else { 0 };
        let lhs = (c.cwnd_f + c.queued_bytes).saturating_mul(c.rtt_f).saturating_mul(PERMILLE);
        let rhs = c.cwnd_f.saturating_mul(c.rtt_s + c.delta).saturating_mul(margin);
        lhs < rhs
    }

    /// (2): `k / cwnd_s x rtt_s >= 2 rtt_f + delta`, multiplied through by `cwnd_s`.
    fn slow_path_cannot_catch_up(c: &Comparison) -> bool {
        c.queued_bytes.saturating_mul(c.rtt_s) >= c.cwnd_s.saturating_mul(2 * c.rtt_f + c.delta)
    }
}

impl Default for EarliestCompletionFirst {
    fn default() -> Self {
        EarliestCompletionFirst::new(&EcfConfig::default())
    }
}

fn nanos(d: Duration) -> u128 {
    d.as_nanos()
}

impl Scheduler for EarliestCompletionFirst {
    fn select(&mut self, _now: Instant, paths: &[PathView], queued_pkts: usize) -> Option<usize> {
        let (fast, slow, rtt_f, rtt_s) = match min_rtt_choice(paths)? {
            MinRttChoice::Take(index) => return Some(index),
            MinRttChoice::Slower { fast, slow, rtt_f, rtt_s } => (fast, slow, rtt_f, rtt_s),
        };
        let c = Comparison {
            queued_bytes: (queued_pkts as u128).saturating_mul(u128::from(fast.mss_bytes)),
            cwnd_f: u128::from(fast.cc.cwnd_bytes),
            cwnd_s: u128::from(slow.cc.cwnd_bytes),
            rtt_f: nanos(rtt_f),
            rtt_s: nanos(rtt_s),
            delta: nanos(fast.rttvar.max(slow.rttvar)),
        };
        if !self.fast_path_finishes_first(&c) {
            self.waiting = false;
            return Some(slow.index);
        }
        if Self::slow_path_cannot_catch_up(&c) {
            self.waiting = true;
            return None;
        }
        Some(slow.index)
    }

    fn name(&self) -> &'static str {
        "ecf"
    }

    fn metrics(&self) -> SchedulerMetrics {
        SchedulerMetrics { ecf_waiting: Some(self.waiting), ..SchedulerMetrics::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_util::view;

    const T0: Instant = Instant::ZERO;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// Fast path 0 full (cwnd 10 packets of 1000 B) with `rtt_f`; slow path 1 open with `rtt_s`
    /// and a cwnd of `cwnd_s` packets.
    fn paths(rtt_f: u64, rtt_s: u64, cwnd_s: u64) -> [PathView; 2] {
        [view(0, 1, 10, 10, rtt_f), view(1, 2, cwnd_s, 0, rtt_s)]
    }

    #[test]
    fn waits_for_the_fast_path_when_it_completes_first() {
        let mut s = EarliestCompletionFirst::default();
        // k = 5 packets. (1): (1 + 5/10) x 10 = 15 ms < 100 ms. (2): 5/10 x 100 = 50 >= 20 ms.
        assert_eq!(s.select(T0, &paths(10, 100, 10), 5), None);
        assert!(s.is_waiting());
        assert_eq!(s.metrics().ecf_waiting, Some(true));
    }

    #[test]
    fn uses_the_slow_path_when_the_fast_queue_takes_longer() {
        let mut s = EarliestCompletionFirst::default();
        // k = 10. (1): (1 + 10/10) x 40 = 80 ms, not < 50 ms: send on the slow path.
        assert_eq!(s.select(T0, &paths(40, 50, 10), 10), Some(1));
        assert!(!s.is_waiting());
    }

    #[test]
    fn uses_the_slow_path_when_it_clears_the_queue_before_the_fast_one_returns() {
        let mut s = EarliestCompletionFirst::default();
        // k = 1. (1): 1.1 x 10 = 11 ms < 30 ms holds, but (2): 1/10 x 30 = 3 ms < 20 ms.
        assert_eq!(s.select(T0, &paths(10, 30, 10), 1), Some(1));
        assert!(!s.is_waiting());
    }

    #[test]
    fn hysteresis_keeps_waiting_within_beta() {
        // k = 6, cwnd_f 10, rtt_f 20: n x rtt_f = 1.6 x 20 = 32 ms. Slow: rtt 30, cwnd 2, so
        // (2) holds: 6/2 x 30 = 90 >= 40 ms.
        // Not waiting: 32 < 30 fails -> slow path.
        let mut fresh = EarliestCompletionFirst::default();
        assert_eq!(fresh.select(T0, &paths(20, 30, 2), 6), Some(1));
        // Waiting (after a clear case, rtt_s = 60: 32 < 60 and 180 >= 40): 32 < 1.25 x 30 =
        // 37.5 holds -> keep waiting.
        let mut s = EarliestCompletionFirst::default();
        assert_eq!(s.select(T0, &paths(20, 60, 2), 6), None);
        assert_eq!(s.select(T0, &paths(20, 30, 2), 6), None);
        // Beyond the margin (rtt_s = 25: 32 < 31.25 fails) it switches and stops waiting...
        assert_eq!(s.select(T0, &paths(20, 25, 2), 6), Some(1));
        assert!(!s.is_waiting());
        // ... and without the margin rtt_s = 30 no longer makes it wait.
        assert_eq!(s.select(T0, &paths(20, 30, 2), 6), Some(1));
        // With beta = 0 there is no hysteresis at all.
        let mut flat = EarliestCompletionFirst::new(&EcfConfig { beta: 0.0 });
        assert_eq!(flat.select(T0, &paths(20, 60, 2), 6), None);
        assert_eq!(flat.select(T0, &paths(20, 30, 2), 6), Some(1));
    }

    #[test]
    fn delta_is_the_larger_rttvar() {
        // As the fresh case above (32 ms vs 30 ms: slow path), but rttvar_s = 5 ms makes the
        // right side 35 ms: (1) holds, (2) 90 >= 40 + 5 holds: wait.
        let mut p = paths(20, 30, 2);
        p[0].rttvar = ms(1);
        p[1].rttvar = ms(5);
        let mut s = EarliestCompletionFirst::default();
        assert_eq!(s.select(T0, &p, 6), None);
    }

    #[test]
    fn follows_min_rtt_when_the_fast_path_has_room_or_no_sample() {
        let mut s = EarliestCompletionFirst::default();
        let open = [view(0, 1, 10, 2, 10), view(1, 2, 10, 0, 100)];
        assert_eq!(s.select(T0, &open, 5), Some(0));
        let mut unmeasured = paths(10, 100, 10);
        unmeasured[0].srtt = None;
        assert_eq!(s.select(T0, &unmeasured, 5), Some(1));
        let all_full = [view(0, 1, 10, 10, 10), view(1, 2, 10, 10, 100)];
        assert_eq!(s.select(T0, &all_full, 5), None);
        assert!(!s.is_waiting(), "no comparison was made");
    }

    #[test]
    fn config_errors_name_the_field_and_range() {
        assert_eq!(EcfConfig::default().validate(), Ok(()));
        let e = EcfConfig { beta: -0.1 }.validate().unwrap_err();
        assert_eq!(e.to_string(), "ecf.beta: must be in [0, 10]");
        assert!(EcfConfig { beta: f64::NAN }.validate().is_err());
    }
}
