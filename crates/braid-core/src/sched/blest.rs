//! BLEST, blocking estimation-based scheduling: Ferlin, Alay, Mehani, Boreli, "BLEST: Blocking
//! estimation-based MPTCP scheduler for heterogeneous networks", IFIP Networking 2016, section
//! III; Linux out-of-tree MPTCP `net/mptcp/mptcp_blest.c` (`blest_get_available_subflow`,
//! `blestsched_update_lambda`).
//!
//! BLEST starts from MinRTT. When MinRTT would put the packet on a slower path (the fastest one
//! has no room), BLEST asks whether that packet would block the connection window: it stays in
//! the window until it is acknowledged, about `rtt_s` later, and meanwhile the fast path keeps
//! sending. During `rtt_s` the fast path sends, assuming congestion avoidance adds one MSS per
//! round (section III):
//!
//! ```text
//! X = MSS_f x (CWND_f + (r - 1) / 2) x r,    r = rtt_s / rtt_f
//! ```
//!
//! (`r` rounds of a window growing from `CWND_f`). If
//!
//! ```text
//! lambda x X > |M| - MSS_s x (inflight_s + 1)
//! ```
//!
//! where `|M|` is the connection window, sending on the slow path would leave the fast path
//! without window: BLEST skips the slow path and the packet waits for the fast one (`None`).
//! `lambda` corrects the estimate and adapts: up when the window did block, down otherwise.
//!
//! # Mapping onto Braid and choices
//! - **The connection window `|M|`** is the receiver's reorder buffer ([`Blest::new`]'s
//!   `reorder_window_pkts`, 1500 packets by default, Pieska et al. 2024, Table 1) times the tunnel
//!   MSS. Packets that overtake a slow one wait in that buffer, so it is what a slow packet blocks,
//!   as the receive buffer is in MPTCP. The receiver does not advertise its free space, so the
//!   whole capacity is used, and as in the kernel only the slow path's in-flight data is
//!   subtracted.
//! - **`CWND_f`** is the fast path's window in bytes and `MSS_f x (r - 1) / 2` its growth, so X
//!   is in bytes; the paper's congestion-avoidance growth is kept whatever the path controller.
//! - **`rtt`s** are the paths' smoothed RTTs (the kernel's linger-time refinement between the
//!   smallest and largest srtt seen is not used; the paper uses srtt).
//! - **Lambda adaptation**: the kernel's rule and defaults (initial 1.2, range [1.0, 1.3], +0.04
//!   after a blocked period, -0.01 otherwise, at most once per slow-path srtt, evaluated when
//!   BLEST considers a slow path). The kernel's "blocked" signal is a meta-level
//!   retransmission forced by a full send window; Braid's sender has no such event, so a period
//!   counts as blocked when some call saw the paths' total in-flight data plus the packet exceed
//!   `|M|`: the reorder buffer could then overflow.
//! - A path without an RTT sample ranks fastest (as in MinRTT); when either of the two paths has
//!   no sample, no estimate is possible and BLEST follows MinRTT.

use std::time::Duration;

use super::config::{out_of_range, within};
use super::{min_rtt_choice, MinRttChoice, PathView, Scheduler, SchedulerMetrics};
use crate::time::Instant;
use crate::ConfigError;

/// `mptcp_blest.c` module parameter `lambda` (12, in tenths).
pub const BLEST_LAMBDA_INITIAL: f64 = 1.2;
/// `min_lambda` (10, in tenths): the estimate is never scaled below itself.
pub const BLEST_LAMBDA_MIN: f64 = 1.0;
/// `max_lambda` (13, in tenths).
pub const BLEST_LAMBDA_MAX: f64 = 1.3;
/// `dyn_lambda_bad` (40, in thousandths): the step up after a blocked period.
pub const BLEST_LAMBDA_INCREASE: f64 = 0.04;
/// `dyn_lambda_good` (10, in thousandths): the step down after an unblocked period.
pub const BLEST_LAMBDA_DECREASE: f64 = 0.01;

/// Lambda is kept in thousandths, as the kernel's `lambda_1000`.
const PERMILLE: u64 = 1000;

/// BLEST parameters. `Default` is the `mptcp_blest.c` module defaults.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct BlestConfig {
    pub lambda_initial: f64,
    pub lambda_min: f64,
    pub lambda_max: f64,
    pub lambda_increase: f64,
    pub lambda_decrease: f64,
}

impl Default for BlestConfig {
    fn default() -> Self {
        BlestConfig {
            lambda_initial: BLEST_LAMBDA_INITIAL,
            lambda_min: BLEST_LAMBDA_MIN,
            lambda_max: BLEST_LAMBDA_MAX,
            lambda_increase: BLEST_LAMBDA_INCREASE,
            lambda_decrease: BLEST_LAMBDA_DECREASE,
        }
    }
}

impl BlestConfig {
    /// Checks every field; the error names the first one out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !within(self.lambda_min, 0.1, 10.0) {
            return out_of_range("blest.lambda_min", "in [0.1, 10]");
        }
        if !within(self.lambda_max, self.lambda_min, 10.0) {
            return out_of_range("blest.lambda_max", "in [lambda_min, 10]");
        }
        if !within(self.lambda_initial, self.lambda_min, self.lambda_max) {
            return out_of_range("blest.lambda_initial", "in [lambda_min, lambda_max]");
        }
        if !within(self.lambda_increase, 0.0, 1.0) {
            return out_of_range("blest.lambda_increase", "in [0, 1]");
        }
        if !within(self.lambda_decrease, 0.0, 1.0) {
            return out_of_range("blest.lambda_decrease", "in [0, 1]");
        }
        Ok(())
    }
}

/// The BLEST scheduler. See the module documentation.
#[derive(Clone, Debug)]
pub struct Blest {
    window_pkts: u64,
    lambda_permille: u64,
    lambda_min_permille: u64,
    lambda_max_permille: u64,
    increase_permille: u64,
    decrease_permille: u64,
    /// Whether a call since the last lambda update saw the connection window exhausted.
    window_blocked: bool,
    /// When lambda last changed (or BLEST first considered a slow path).
    last_lambda_update: Option<Instant>,
}

impl Blest {
    /// A BLEST scheduler whose connection window is `reorder_window_pkts` packets. `config`
    /// should have passed [`BlestConfig::validate`]; out-of-range values are clamped.
    pub fn new(config: &BlestConfig, reorder_window_pkts: usize) -> Self {
        let to_permille = |x: f64| ((x * PERMILLE as f64).round() as u64).min(100 * PERMILLE);
        let lambda_min_permille = to_permille(config.lambda_min).max(1);
        let lambda_max_permille = to_permille(config.lambda_max).max(lambda_min_permille);
        Blest {
            window_pkts: reorder_window_pkts as u64,
            lambda_permille: to_permille(config.lambda_initial)
                .clamp(lambda_min_permille, lambda_max_permille),
            lambda_min_permille,
            lambda_max_permille,
            increase_permille: to_permille(config.lambda_increase),
            decrease_permille: to_permille(config.lambda_decrease),
            window_blocked: false,
            last_lambda_update: None,
        }
    }

    pub fn lambda(&self) -> f64 {
        self.lambda_permille as f64 / PERMILLE as f64
    }

    /// X: bytes a fast path with window `cwnd_f_bytes` and MSS `mss_f_bytes` sends during
    /// `rtt_s`, growing by one MSS per `rtt_f` round. Requires `rtt_f > 0`.
    pub fn fast_path_bytes_during(
        cwnd_f_bytes: u64,
        mss_f_bytes: u64,
        rtt_f: Duration,
        rtt_s: Duration,
    ) -> u64 {
        let f = rtt_f.as_nanos().max(1);
        let s = rtt_s.as_nanos();
        // X = (CWND_f + MSS_f (s - f) / 2f) s / f = (2f CWND_f + MSS_f (s - f)) s / 2f^2
        let per_round = (2 * f)
            .saturating_mul(u128::from(cwnd_f_bytes))
            .saturating_add(u128::from(mss_f_bytes).saturating_mul(s.saturating_sub(f)));
        let x = per_round.saturating_mul(s) / (2 * f).saturating_mul(f);
        u64::try_from(x).unwrap_or(u64::MAX)
    }

    /// Whether sending on `slow` now would, by the estimate, leave `fast` without window.
    fn would_block(
        &self,
        fast: &PathView,
        slow: &PathView,
        rtt_f: Duration,
        rtt_s: Duration,
    ) -> bool {
        let x = Blest::fast_path_bytes_during(fast.cc.cwnd_bytes, fast.mss_bytes, rtt_f, rtt_s);
        let window = self.window_pkts.saturating_mul(slow.mss_bytes);
        let avail = window.saturating_sub(slow.in_flight_bytes + slow.charge_bytes);
        u128::from(self.lambda_permille) * u128::from(x) > u128::from(PERMILLE) * u128::from(avail)
    }

    /// Records whether the connection window is exhausted at this call.
    fn note_window(&mut self, paths: &[PathView]) {
        let Some(head) = paths.first() else { return };
        let in_flight: u64 = paths.iter().map(|p| p.in_flight_bytes).sum();
        let window = self.window_pkts.saturating_mul(head.mss_bytes);
        if in_flight + head.charge_bytes > window {
            self.window_blocked = true;
        }
    }

    /// `blestsched_update_lambda`: at most once per slow-path srtt, up after a blocked period,
    /// down otherwise.
    fn update_lambda(&mut self, now: Instant, slow_srtt: Duration) {
        let Some(last) = self.last_lambda_update else {
            self.last_lambda_update = Some(now);
            return;
        };
        if now.saturating_since(last) < slow_srtt {
            return;
        }
        self.lambda_permille = if self.window_blocked {
            self.lambda_permille + self.increase_permille
        } else {
            self.lambda_permille.saturating_sub(self.decrease_permille)
        }
        .clamp(self.lambda_min_permille, self.lambda_max_permille);
        self.window_blocked = false;
        self.last_lambda_update = Some(now);
    }
}

impl Default for Blest {
    fn default() -> Self {
        Blest::new(&BlestConfig::default(), crate::reorder::DEFAULT_BUFFER_PKTS)
    }
}

impl Scheduler for Blest {
    fn select(&mut self, now: Instant, paths: &[PathView], _queued_pkts: usize) -> Option<usize> {
        self.note_window(paths);
        let (fast, slow, rtt_f, rtt_s) = match min_rtt_choice(paths)? {
            MinRttChoice::Take(index) => return Some(index),
            MinRttChoice::Slower { fast, slow, rtt_f, rtt_s } => (fast, slow, rtt_f, rtt_s),
        };
        if rtt_f.is_zero() {
            return Some(slow.index);
        }
        self.update_lambda(now, rtt_s);
        (!self.would_block(fast, slow, rtt_f, rtt_s)).then_some(slow.index)
    }

    fn name(&self) -> &'static str {
        "blest"
    }

    fn metrics(&self) -> SchedulerMetrics {
        SchedulerMetrics { blest_lambda: Some(self.lambda()), ..SchedulerMetrics::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_util::view;

    fn ms(v: u64) -> Instant {
        Instant::from_nanos(v * 1_000_000)
    }

    /// Fast path 0 (srtt 20 ms, cwnd 10 x 1000 B) full; slow path 1 (srtt 60 ms) with 5 packets
    /// in flight. MinRTT would use path 1.
    fn fast_full_slow_open() -> [PathView; 2] {
        [view(0, 1, 10, 10, 20), view(1, 2, 10, 5, 60)]
    }

    #[test]
    fn fast_path_estimate_on_concrete_numbers() {
        // r = 60 / 20 = 3; X = 1000 x (10 + (3 - 1) / 2) x 3 = 33 000 B.
        let x = Blest::fast_path_bytes_during(
            10_000,
            1000,
            Duration::from_millis(20),
            Duration::from_millis(60),
        );
        assert_eq!(x, 33_000);
        // r = 1: just one window.
        let d = Duration::from_millis(20);
        assert_eq!(Blest::fast_path_bytes_during(10_000, 1000, d, d), 10_000);
        // r = 2.5: (10 + 0.75) x 2.5 = 26.875 packets.
        let x = Blest::fast_path_bytes_during(10_000, 1000, d, Duration::from_millis(50));
        assert_eq!(x, 26_875);
    }

    #[test]
    fn skips_the_slow_path_when_it_would_block_the_window() {
        // Window 40 packets = 40 000 B; slow in flight 5 + this packet = 6000 B; avail 34 000.
        // lambda X = 1.2 x 33 000 = 39 600 > 34 000: wait for the fast path.
        let mut s = Blest::new(&BlestConfig::default(), 40);
        assert_eq!(s.select(ms(0), &fast_full_slow_open(), 1), None);
    }

    #[test]
    fn uses_the_slow_path_when_the_window_can_take_it() {
        // Default window 1500 packets: 1.2 x 33 000 is far below 1 494 000.
        let mut s = Blest::default();
        assert_eq!(s.select(ms(0), &fast_full_slow_open(), 1), Some(1));
        // With lambda 1.0 the 40-packet window suffices too: 33 000 <= 34 000.
        let cfg = BlestConfig { lambda_initial: 1.0, ..Default::default() };
        let mut s = Blest::new(&cfg, 40);
        assert_eq!(s.select(ms(0), &fast_full_slow_open(), 1), Some(1));
    }

    #[test]
    fn the_fast_path_with_room_is_used_without_estimates() {
        let mut s = Blest::new(&BlestConfig::default(), 1);
        let paths = [view(0, 1, 10, 3, 20), view(1, 2, 10, 0, 60)];
        assert_eq!(s.select(ms(0), &paths, 1), Some(0));
        let none_open = [view(0, 1, 10, 10, 20), view(1, 2, 10, 10, 60)];
        assert_eq!(s.select(ms(0), &none_open, 1), None);
    }

    #[test]
    fn lambda_rises_after_a_blocked_slow_rtt_and_decays_otherwise() {
        let mut s = Blest::new(&BlestConfig::default(), 1500);
        let paths = fast_full_slow_open();
        s.select(ms(0), &paths, 1); // starts the first period
        assert_eq!(s.lambda_permille, 1200);
        // Total in flight 15 000 B + 1000 > 1500 x 1000? No: not blocked. After one slow srtt
        // (60 ms) lambda decays by 0.01.
        s.select(ms(59), &paths, 1);
        assert_eq!(s.lambda_permille, 1200, "not before a slow-path srtt has passed");
        s.select(ms(60), &paths, 1);
        assert_eq!(s.lambda_permille, 1190);
        // A call that sees the window exhausted marks the period blocked: +0.04.
        let mut crowded = paths;
        crowded[0].in_flight_bytes = 1_499_000;
        crowded[0].cc.cwnd_bytes = 1_499_000;
        s.select(ms(70), &crowded, 1);
        s.select(ms(120), &paths, 1);
        assert_eq!(s.lambda_permille, 1230);
        // Bounded: up to 1.3 at most, down to 1.0 at least.
        for k in 0..10 {
            s.select(ms(130 + 60 * k), &crowded, 1);
            s.select(ms(160 + 60 * k), &paths, 1);
        }
        assert_eq!(s.lambda(), 1.3);
        for k in 0..100 {
            s.select(ms(1000 + 60 * k), &paths, 1);
        }
        assert_eq!(s.lambda(), 1.0);
        assert_eq!(s.metrics().blest_lambda, Some(1.0));
    }

    #[test]
    fn without_rtt_samples_it_follows_min_rtt() {
        // The full path 0 has no sample, so it ranks fastest but cannot be compared: the
        // one-packet window that would otherwise block path 1 is not consulted.
        let mut paths = fast_full_slow_open();
        paths[0].srtt = None;
        let mut s = Blest::new(&BlestConfig::default(), 1);
        assert_eq!(s.select(ms(0), &paths, 1), Some(1));
        paths[0].srtt = Some(Duration::from_millis(20));
        assert_eq!(s.select(ms(0), &paths, 1), None);
    }

    #[test]
    fn config_errors_name_the_field_and_range() {
        assert_eq!(BlestConfig::default().validate(), Ok(()));
        let bad = BlestConfig { lambda_initial: 1.5, ..Default::default() };
        assert_eq!(
            bad.validate().unwrap_err().to_string(),
            "blest.lambda_initial: must be in [lambda_min, lambda_max]"
        );
        let bad = BlestConfig { lambda_decrease: f64::NAN, ..Default::default() };
        assert_eq!(bad.validate().unwrap_err().field, "blest.lambda_decrease");
        let bad = BlestConfig { lambda_min: 0.0, ..Default::default() };
        assert_eq!(bad.validate().unwrap_err().field, "blest.lambda_min");
    }
}
