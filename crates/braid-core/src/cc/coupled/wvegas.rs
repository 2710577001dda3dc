//! wVegas, weighted Vegas: Cao, Xu, Fu, "Delay-based congestion control for multipath TCP",
//! IEEE ICNP 2012, as specified in draft-xu-mptcp-congestion-control-05 section 2, with the
//! behaviour of Linux `net/mptcp/mptcp_wvegas.c` (`mptcp_wvegas_cong_avoid`,
//! `mptcp_wvegas_weight`, `wvegas_enable`) where the draft is silent.
//!
//! # Model
//! Each path runs TCP Vegas with one parameter alpha_r: the number of its own packets it aims to
//! keep queued in the network. The paths of a tunnel share one budget, `total_alpha`, split in
//! proportion to their rates, so the tunnel as a whole backlogs what one Vegas flow would. Once
//! per round trip (a round ends at the first ACK of a packet sent after the round began), with
//! `rtt_r` the mean RTT sample of the round and `base_rtt_r` the smallest sample ever seen:
//!
//! ```text
//!   diff_r = (cwnd_r / base_rtt_r - cwnd_r / rtt_r) * base_rtt_r      packets queued by path r
//!   slow start:  diff_r > gamma  =>  cwnd_r = min(cwnd_r, target + 1), ssthresh_r = cwnd_r - 1
//!                                     (target = cwnd_r * base_rtt_r / rtt_r)
//!   congestion avoidance:
//!     diff_r >= alpha_r  =>  rate_r = cwnd_r / rtt_r                                    (1)
//!                            weight_r = rate_r / sum_k rate_k                           (2)
//!                            alpha_r = weight_r * total_alpha
//!     diff_r > alpha_r   =>  cwnd_r -= 1        diff_r < alpha_r  =>  cwnd_r += 1
//!     queue drain: q = rtt_r - base_rtt_r; q_min = min q since the last backoff;
//!                  q >= 2 q_min  =>  cwnd_r = cwnd_r * base_rtt_r / (2 rtt_r)           (3)
//! ```
//!
//! (equation numbers of the draft). Losses and timeouts are Reno's (draft section 2: "uses the
//! unmodified TCP behavior in the case of loss event").
//!
//! # Choices where the sources leave room
//! - **Constants** are the kernel's module parameters: `initial_alpha` 2, `total_alpha` 10,
//!   `gamma` 1 segment ([`WvegasConfig`]); alpha_r never drops below 2 segments (kernel
//!   `max(2U, ...)`), a round needs at least 3 RTT samples or it falls back to Reno's increase
//!   for that ACK (kernel `cnt_rtt <= 2`), and the window never drops below 2 segments.
//! - **Rates** `rate_k` of the other paths are the ones they last computed (the kernel's
//!   `instant_rate`); paths that have not computed one yet do not count in the sum. A timeout
//!   forgets the path's rate (kernel `CA_EVENT_LOSS`). The kernel sums only the subflows that
//!   have an RTT sample in their current round (`sampled_rtt > 0`); we sum every known rate.
//! - **Re-enabling.** Vegas runs only while the window is in its open state. When a recovery or
//!   loss episode ends, the round, RTT samples, rate, weight, alpha (back to `initial_alpha`) and
//!   q_min restart, as the kernel's `wvegas_enable` does on returning to `TCP_CA_Open`.
//! - **Empty queue.** A round whose queueing delay is zero neither records q_min nor drains: the
//!   kernel's `queue_delay == 0` means "unset", so on a path with no queue its `q >= 2 q_min`
//!   test would pass with 0 >= 0 and halve the window every round.
//! - After each congestion-avoidance round `ssthresh = max(ssthresh, 3/4 cwnd)` (the kernel's
//!   `tcp_current_ssthresh`); a decrease sets `ssthresh = min(ssthresh, cwnd - 1)`. A drain
//!   therefore leaves `ssthresh` where it was, and the window slow-starts back up to it within
//!   the next round, as in the kernel.
//! - **cwnd == ssthresh is congestion avoidance** (RFC 5681 section 3.1 allows either). The
//!   kernel takes its slow-start branch while `snd_cwnd <= snd_ssthresh`, and that slow start
//!   stops at `ssthresh`, so a window that refilled to exactly `ssthresh` (after a drain or a
//!   loss recovery) never grows again until diff exceeds gamma, which needs a standing queue.
//!   In the Łuczak et al. 2023 experiment (docs/validation.md) that boundary freezes path 1 at 43
//!   packets for the last 27 s of the run.
//! - **The drain rule reacts to sub-millisecond queues.** q_min has no absolute floor, and the
//!   slow-start refill after a drain sends two extra packets per ACK, which queue at the
//!   bottleneck and at least double the next round's q: the next drain follows. A path below
//!   its BDP then alternates between one segment of growth and a drain, and stays at
//!   `ssthresh` (Łuczak et al. 2023 experiment: q_min 0.41 ms, one packet's transmission time at 30
//!   Mbit/s; q 1.69 ms after a refill; 46% of path 1's rounds drain; its window holds at 21-22 of a
//!   121-packet BDP). In the default scenario of Pieska et al. 2024 (E2E CUBIC, 300 MB) the rule
//!   halves the goodput (43 against 90 Mbit/s without it). The rule is kept as specified;
//!   [`WvegasConfig::queue_drain`] turns it off.
//! - **Units.** diff, alpha and gamma are compared in charged bytes (segments times MSS), with
//!   f64 RTTs, as the draft writes them. The kernel truncates diff and alpha to whole packets,
//!   so it holds the window while alpha <= diff < alpha + 1 and leaves slow start only at
//!   diff >= 2 (gamma 1).
//! - Application-limited ACKs do not grow the window (the increase needs acknowledged bytes the
//!   window may count, see `CoupledPath::book_ack`); Vegas's decreases still apply.

use std::time::Duration;

use super::{CoupledPath, Coupling};
use crate::cc::{AckEvent, CcMetrics, CcParams};
use crate::time::Instant;
use crate::ConfigError;

/// Kernel `initial_alpha`: a path's backlog target before its first weight update, segments.
pub const DEFAULT_INITIAL_ALPHA_PKTS: u32 = 2;
/// Kernel `total_alpha`: the backlog all paths together aim for, segments.
pub const DEFAULT_TOTAL_ALPHA_PKTS: u32 = 10;
/// Kernel `gamma`: slow start ends once a path queues more than this, segments (Vegas's gamma).
pub const DEFAULT_GAMMA_PKTS: u32 = 1;
/// Kernel `max(2U, weight * total_alpha)`: the smallest backlog target, segments.
const MIN_ALPHA_PKTS: f64 = 2.0;
/// Kernel `cnt_rtt <= 2`: a round with fewer samples than this uses Reno's increase.
const MIN_RTT_SAMPLES_PER_ROUND: u32 = 3;
/// Kernel `tcp_current_ssthresh`: `ssthresh` is at least 3/4 of the window after a round.
const SSTHRESH_FLOOR_OF_CWND: f64 = 0.75;

/// Tuning for [`Wvegas`]. `Default` is the kernel's module parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct WvegasConfig {
    /// alpha_r before a path's first weight update, segments. Default 2.
    pub initial_alpha_pkts: u32,
    /// total_alpha: the tunnel's total backlog target, segments. Default 10.
    pub total_alpha_pkts: u32,
    /// gamma: the backlog that ends slow start, segments. Default 1.
    pub gamma_pkts: u32,
    /// Equation (3), the queue-drain backoff. Default on (the draft's MUST); off keeps plain
    /// weighted Vegas, to measure what the backoff costs.
    pub queue_drain: bool,
}

impl Default for WvegasConfig {
    fn default() -> Self {
        WvegasConfig {
            initial_alpha_pkts: DEFAULT_INITIAL_ALPHA_PKTS,
            total_alpha_pkts: DEFAULT_TOTAL_ALPHA_PKTS,
            gamma_pkts: DEFAULT_GAMMA_PKTS,
            queue_drain: true,
        }
    }
}

impl WvegasConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.initial_alpha_pkts == 0 {
            return Err(ConfigError::new("initial_alpha_pkts", "at least 1"));
        }
        if self.total_alpha_pkts == 0 {
            return Err(ConfigError::new("total_alpha_pkts", "at least 1"));
        }
        Ok(())
    }
}

/// The Vegas state of one path.
#[derive(Clone, Copy, Debug)]
struct VegasPath {
    /// The current round ends at the first ACK of a packet sent at or after this instant
    /// (kernel `beg_snd_nxt`).
    round_start: Instant,
    rtt_sum: Duration,
    rtt_count: u32,
    /// base_rtt_r: the smallest RTT sample seen.
    base_rtt: Option<Duration>,
    /// rate_r in bytes per second, equation (1); `None` until computed.
    rate_bytes_per_s: Option<f64>,
    /// weight_r, equation (2).
    weight: f64,
    /// alpha_r in bytes.
    alpha_bytes: f64,
    /// q_min: the smallest positive queueing delay since the last backoff.
    min_queue_delay: Option<Duration>,
}

impl VegasPath {
    fn new(config: &WvegasConfig, mss_bytes: f64) -> Self {
        VegasPath {
            round_start: Instant::ZERO,
            rtt_sum: Duration::ZERO,
            rtt_count: 0,
            base_rtt: None,
            rate_bytes_per_s: None,
            weight: 1.0,
            alpha_bytes: config.initial_alpha_pkts as f64 * mss_bytes,
            min_queue_delay: None,
        }
    }

    /// Kernel `mptcp_wvegas_pkts_acked`: one RTT sample.
    fn sample(&mut self, rtt: Duration) {
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.rtt_sum += rtt;
        self.rtt_count += 1;
    }

    fn clear_samples(&mut self) {
        self.rtt_sum = Duration::ZERO;
        self.rtt_count = 0;
    }

    /// Kernel `wvegas_enable`, on (re-)entering the open state at `now`.
    fn enable(&mut self, now: Instant, config: &WvegasConfig, mss_bytes: f64) {
        let base_rtt = self.base_rtt;
        *self = VegasPath::new(config, mss_bytes);
        self.round_start = now;
        self.base_rtt = base_rtt;
    }
}

/// wVegas over all paths of a tunnel. See the module documentation.
#[derive(Clone, Debug)]
pub struct Wvegas {
    config: WvegasConfig,
    paths: Vec<CoupledPath>,
    vegas: Vec<VegasPath>,
}

impl Wvegas {
    pub fn new(params: CcParams, n_paths: usize) -> Self {
        Self::with_config(params, n_paths, WvegasConfig::default())
    }

    /// A controller with explicit tuning; `config` should have passed [`WvegasConfig::validate`].
    pub fn with_config(params: CcParams, n_paths: usize, config: WvegasConfig) -> Self {
        debug_assert!(config.validate().is_ok(), "invalid WvegasConfig: {config:?}");
        let mss = params.mss_bytes as f64;
        Wvegas {
            config,
            paths: (0..n_paths).map(|_| CoupledPath::new(params)).collect(),
            vegas: (0..n_paths).map(|_| VegasPath::new(&config, mss)).collect(),
        }
    }

    /// alpha_r of `path` in segments: its current backlog target.
    pub fn alpha_pkts(&self, path: usize) -> f64 {
        self.vegas[path].alpha_bytes / self.paths[path].mss_f64()
    }

    /// weight_r of `path`, equation (2).
    pub fn weight(&self, path: usize) -> f64 {
        self.vegas[path].weight
    }

    /// Equations (1) and (2): `path`'s rate, weight and alpha from this round's mean RTT.
    fn update_weight(&mut self, path: usize, rtt_s: f64) {
        let mss = self.paths[path].mss_f64();
        self.vegas[path].rate_bytes_per_s = Some(self.paths[path].cwnd_f64() / rtt_s);
        let total: f64 = self.vegas.iter().filter_map(|v| v.rate_bytes_per_s).sum();
        let v = &mut self.vegas[path];
        if let Some(rate) = v.rate_bytes_per_s.filter(|_| total > 0.0) {
            v.weight = rate / total;
        }
        let total_alpha = self.config.total_alpha_pkts as f64 * mss;
        v.alpha_bytes = (v.weight * total_alpha).max(MIN_ALPHA_PKTS * mss);
    }

    /// The once-per-round Vegas step of `path` (a round with enough samples).
    fn end_of_round(&mut self, path: usize, acked_bytes: u64) {
        let v = self.vegas[path];
        let Some(base) = v.base_rtt.filter(|_| v.rtt_count > 0) else { return };
        let rtt = v.rtt_sum / v.rtt_count;
        let (rtt_s, base_s) = (rtt.as_secs_f64(), base.as_secs_f64());
        let p = &self.paths[path];
        let (mss, cwnd) = (p.mss_f64(), p.window.cwnd_bytes as f64);
        let diff = cwnd * (rtt_s - base_s) / rtt_s;

        if p.window.in_slow_start() {
            let gamma = self.config.gamma_pkts as f64 * mss;
            let p = &mut self.paths[path];
            if diff > gamma {
                let target = cwnd * base_s / rtt_s;
                p.set_cwnd_bytes(cwnd.min(target + mss) as u64);
                let ssthresh = p.window.cwnd_bytes.saturating_sub(p.window.mss_bytes);
                p.window.set_ssthresh_bytes(p.window.ssthresh_bytes().min(ssthresh));
            } else {
                p.window.slow_start(acked_bytes);
            }
        } else {
            if diff >= self.vegas[path].alpha_bytes {
                self.update_weight(path, rtt_s);
            }
            let alpha = self.vegas[path].alpha_bytes;
            let p = &mut self.paths[path];
            if diff > alpha {
                p.set_cwnd_bytes(p.window.cwnd_bytes.saturating_sub(p.window.mss_bytes));
                let ssthresh = p.window.cwnd_bytes.saturating_sub(p.window.mss_bytes);
                p.window.set_ssthresh_bytes(p.window.ssthresh_bytes().min(ssthresh));
            } else if diff < alpha && acked_bytes > 0 {
                p.set_cwnd_bytes(p.window.cwnd_bytes + p.window.mss_bytes);
            }
            if self.config.queue_drain {
                self.drain_queue(path, rtt, base);
            }
        }

        let p = &mut self.paths[path];
        p.set_cwnd_bytes(p.window.cwnd_bytes.max(p.window.min_window_bytes()));
        let floor = (p.window.cwnd_bytes as f64 * SSTHRESH_FLOOR_OF_CWND) as u64;
        p.window.set_ssthresh_bytes(p.window.ssthresh_bytes().max(floor));
    }

    /// Equation (3): back off so the bottleneck can drain once the queueing delay doubled.
    fn drain_queue(&mut self, path: usize, rtt: Duration, base: Duration) {
        let queue_delay = rtt.saturating_sub(base);
        if queue_delay.is_zero() {
            return;
        }
        let v = &mut self.vegas[path];
        let q_min = v.min_queue_delay.map_or(queue_delay, |q| q.min(queue_delay));
        v.min_queue_delay = Some(q_min);
        if queue_delay >= q_min * 2 {
            let p = &mut self.paths[path];
            let factor = base.as_secs_f64() / (2.0 * rtt.as_secs_f64());
            p.set_cwnd_bytes((p.window.cwnd_bytes as f64 * factor) as u64);
            v.min_queue_delay = None;
        }
    }
}

impl Coupling for Wvegas {
    const NAME: &'static str = "wvegas";

    fn paths(&self) -> &[CoupledPath] {
        &self.paths
    }

    fn paths_mut(&mut self) -> &mut [CoupledPath] {
        &mut self.paths
    }

    /// Vegas's round bookkeeping replaces the per-ACK increase: outside a round's end only slow
    /// start grows the window.
    fn on_path_ack(&mut self, path: usize, ack: &AckEvent) {
        let p = &mut self.paths[path];
        let v = &mut self.vegas[path];
        let was_open = p.window.is_open();
        if let Some(sample) = ack.rtt.filter(|r| !r.is_zero()) {
            v.sample(sample);
        }
        let acked = p.book_ack(ack);
        if !p.window.is_open() {
            return;
        }
        if !was_open {
            v.enable(ack.now, &self.config, p.mss_f64());
        }
        if ack.largest_acked_sent_time < v.round_start {
            p.window.slow_start(acked);
            return;
        }
        v.round_start = ack.now;
        if v.rtt_count < MIN_RTT_SAMPLES_PER_ROUND {
            let rest = p.window.slow_start(acked);
            if rest > 0 {
                self.congestion_avoidance(path, ack.now, rest);
            }
        } else {
            self.end_of_round(path, acked);
        }
        self.vegas[path].clear_samples();
    }

    /// Reno's congestion-avoidance increase (kernel `tcp_reno_cong_avoid`), one segment per
    /// window: the fallback for a round with too few RTT samples. Vegas's own window changes
    /// are made once per round, in `end_of_round`.
    fn increase_bytes(&mut self, path: usize, _now: Instant, acked_bytes: u64) -> Option<f64> {
        let p = &self.paths[path];
        Some(acked_bytes as f64 * p.mss_f64() / p.cwnd_f64())
    }

    /// A timeout forgets the path's rate (kernel `CA_EVENT_LOSS`).
    fn after_timeout(&mut self, path: usize) {
        self.vegas[path].rate_bytes_per_s = None;
    }

    fn path_metrics(&self, path: usize) -> CcMetrics {
        CcMetrics { min_rtt: self.vegas[path].base_rtt, ..self.paths[path].metrics() }
    }
}

#[cfg(test)]
mod tests {
    use super::super::multi_clock::MSS;
    use super::super::test_util::{plain_ack, set_path};
    use super::*;
    use crate::cc::test_support::ack_clock::{ack, ms};
    use crate::cc::{CcPhase, CongestionEvent, MultipathController};

    const BASE: Duration = Duration::from_millis(100);

    fn params() -> CcParams {
        CcParams { mss_bytes: MSS, initial_window_pkts: 10 }
    }

    /// `n_paths` paths in congestion avoidance at `cwnd_pkts`, base RTT 100 ms.
    fn wvegas(cwnd_pkts: &[u64]) -> Wvegas {
        let mut cc = Wvegas::new(params(), cwnd_pkts.len());
        for (i, &cwnd) in cwnd_pkts.iter().enumerate() {
            set_path(&mut cc.paths[i], cwnd, BASE);
            cc.vegas[i].base_rtt = Some(BASE);
        }
        cc
    }

    /// One round on `path`: three RTT samples of `rtt_ms` mid-round, then the ACK of a packet
    /// sent when the round began, which ends it. Returns the window in segments afterwards.
    fn round(cc: &mut Wvegas, path: usize, rtt_ms: u64) -> f64 {
        round_rtt(cc, path, Duration::from_millis(rtt_ms))
    }

    /// [`round`] with an RTT finer than a millisecond.
    fn round_rtt(cc: &mut Wvegas, path: usize, rtt: Duration) -> f64 {
        let start = cc.vegas[path].round_start;
        let now = start + rtt;
        for _ in 0..3 {
            let mut sample = ack(now, now - rtt, 0);
            sample.largest_acked_sent_time = start - Duration::from_nanos(1);
            sample.rtt = Some(rtt);
            cc.on_ack(path, &sample);
        }
        let mut last = ack(now, start, MSS);
        last.rtt = None;
        cc.on_ack(path, &last);
        cc.cwnd_bytes(path) as f64 / MSS as f64
    }

    /// Moves `path`'s round start off time zero, so `round` can place samples before it.
    fn start_rounds(cc: &mut Wvegas, path: usize) {
        cc.vegas[path].round_start = ms(1000);
    }

    #[test]
    fn grows_below_the_backlog_target_and_shrinks_above_it() {
        let mut cc = wvegas(&[20]);
        start_rounds(&mut cc, 0);
        assert_eq!(cc.alpha_pkts(0), 2.0, "initial_alpha");
        // rtt 150 ms: diff = 20 * 50/150 = 6.67 >= alpha 2: weight 1 (the only rate), alpha =
        // 1 * total_alpha = 10; 6.67 < 10, so the window grows by one segment.
        assert_eq!(round(&mut cc, 0, 150), 21.0);
        assert_eq!((cc.weight(0), cc.alpha_pkts(0)), (1.0, 10.0));
        // rtt 190 ms: diff = 21 * 90/190 = 9.95 < 10: grow.
        assert_eq!(round(&mut cc, 0, 190), 22.0);
        // rtt 199 ms: diff = 22 * 99/199 = 10.94 > 10: shrink, and ssthresh follows.
        assert_eq!(round(&mut cc, 0, 199), 21.0);
        assert_eq!(cc.metrics(0).ssthresh_bytes, Some(20 * MSS));
        assert_eq!(cc.metrics(0).phase, CcPhase::CongestionAvoidance);
        assert_eq!(cc.metrics(0).min_rtt, Some(BASE));
    }

    #[test]
    fn queue_drain_backs_off_when_the_queueing_delay_doubles() {
        let mut cc = wvegas(&[20]);
        start_rounds(&mut cc, 0);
        // rtt 150 ms: q_min = 50 ms.
        assert_eq!(round(&mut cc, 0, 150), 21.0);
        // rtt 200 ms: q = 100 ms = 2 q_min. diff = 21 * 100/200 = 10.5 > 10: 20 segments, then
        // equation (3): 20 * 100 / (2 * 200) = 5 segments.
        assert_eq!(round(&mut cc, 0, 200), 5.0);
        assert_eq!(cc.vegas[0].min_queue_delay, None, "q_min restarts after a backoff");
        // Without the rule the same rounds only take the Vegas step.
        let config = WvegasConfig { queue_drain: false, ..WvegasConfig::default() };
        let mut cc = Wvegas::with_config(params(), 1, config);
        set_path(&mut cc.paths[0], 20, BASE);
        cc.vegas[0].base_rtt = Some(BASE);
        start_rounds(&mut cc, 0);
        assert_eq!(round(&mut cc, 0, 150), 21.0);
        assert_eq!(round(&mut cc, 0, 200), 20.0);
        // A round with no queueing delay neither drains nor records q_min.
        let mut cc = wvegas(&[20]);
        start_rounds(&mut cc, 0);
        assert_eq!(round(&mut cc, 0, 100), 21.0);
        assert_eq!(round(&mut cc, 0, 100), 22.0);
        assert_eq!(cc.vegas[0].min_queue_delay, None);
    }

    #[test]
    fn a_drain_keeps_ssthresh_so_slow_start_refills_the_window() {
        let mut cc = wvegas(&[20]);
        start_rounds(&mut cc, 0);
        // rtt 150 ms: grows to 21; ssthresh stays 20 (max(20, 3/4 x 21 = 15.75)).
        assert_eq!(round(&mut cc, 0, 150), 21.0);
        // rtt 200 ms: diff 10.5 > 10, so 20 segments and ssthresh = min(20, 20 - 1) = 19; then
        // the drain to 20 x 100 / 400 = 5 segments. tcp_current_ssthresh keeps
        // max(19, 3/4 x 5) = 19.
        assert_eq!(round(&mut cc, 0, 200), 5.0);
        assert_eq!(cc.metrics(0).ssthresh_bytes, Some(19 * MSS));
        assert_eq!(cc.metrics(0).phase, CcPhase::SlowStart);
        // Mid-round ACKs (packets sent before the round began) slow-start the window by one
        // segment each, 5 -> 19 after 14 of them, and no further.
        let round_start = cc.vegas[0].round_start;
        for _ in 0..20 {
            let sent = round_start - Duration::from_millis(10);
            cc.on_ack(0, &plain_ack(round_start + Duration::from_millis(40), sent, MSS));
        }
        assert_eq!(cc.cwnd_bytes(0), 19 * MSS);
        // At cwnd == ssthresh the round end is congestion avoidance: no queue (rtt = base),
        // diff 0 < alpha, so one more segment. (The kernel's `snd_cwnd <= snd_ssthresh` slow
        // start branch would hold 19.)
        assert_eq!(round(&mut cc, 0, 100), 20.0);
    }

    #[test]
    fn a_sub_millisecond_queue_that_doubles_drains() {
        // The drain test compares q with its own minimum, with no absolute floor.
        let mut cc = wvegas(&[20]);
        start_rounds(&mut cc, 0);
        // rtt 100.4 ms: q = 0.4 ms becomes q_min; diff = 20 x 0.4 / 100.4 = 0.08 < alpha: 21.
        assert_eq!(round_rtt(&mut cc, 0, Duration::from_micros(100_400)), 21.0);
        // rtt 100.8 ms: diff 0.17 < alpha, 22 segments; q = 0.8 ms >= 2 x 0.4 ms, so
        // cwnd = 22000 x 100 / (2 x 100.8) = 10912.7 bytes, truncated to 10912.
        round_rtt(&mut cc, 0, Duration::from_micros(100_800));
        assert_eq!(cc.cwnd_bytes(0), 10_912);
        // A q of 0.79 ms, just under twice q_min, does not drain.
        let mut cc = wvegas(&[20]);
        start_rounds(&mut cc, 0);
        round_rtt(&mut cc, 0, Duration::from_micros(100_400));
        assert_eq!(round_rtt(&mut cc, 0, Duration::from_micros(100_790)), 22.0);
    }

    #[test]
    fn weights_are_recomputed_from_the_rates() {
        let mut cc = wvegas(&[30, 10]);
        start_rounds(&mut cc, 0);
        start_rounds(&mut cc, 1);
        // Path 0, rtt 125 ms: diff = 30 * 25/125 = 6 >= 2: rate_0 = 30000/0.125 = 240000 B/s,
        // the only rate so far: weight 1, alpha 10; 6 < 10: grow to 31.
        assert_eq!(round(&mut cc, 0, 125), 31.0);
        assert_eq!(cc.weight(0), 1.0);
        // Path 1, rtt 130 ms: diff = 10 * 30/130 = 2.31 >= 2: rate_1 = 10000/0.13 = 76923 B/s,
        // weight = 76923 / (240000 + 76923) = 0.2427, alpha = max(2, 2.427); diff < alpha: grow.
        assert_eq!(round(&mut cc, 1, 130), 11.0);
        let rate_1 = 10_000.0 / 0.13;
        let want = rate_1 / (240_000.0 + rate_1);
        assert!((cc.weight(1) - want).abs() < 1e-12, "weight {}", cc.weight(1));
        assert!((cc.alpha_pkts(1) - 10.0 * want).abs() < 1e-9);
        // Path 0, rtt 149 ms (q = 49 ms, under twice its q_min of 25 ms: no drain):
        // diff = 31 * 49/149 = 10.19 >= 10: rate_0 = 31000/0.149 = 208054 B/s,
        // weight = 208054 / (208054 + 76923) = 0.7301, alpha = 7.301; diff > alpha: shrink.
        assert_eq!(round(&mut cc, 0, 149), 30.0);
        let rate_0 = 31_000.0 / 0.149;
        let want = rate_0 / (rate_0 + rate_1);
        assert!((cc.weight(0) - want).abs() < 1e-12, "weight {}", cc.weight(0));
        assert!((cc.alpha_pkts(0) - 10.0 * want).abs() < 1e-9);
    }

    #[test]
    fn two_identical_paths_share_one_flows_backlog() {
        // Equal windows and RTTs: weights 1/2 each, so alpha_0 + alpha_1 = total_alpha = 10,
        // the backlog one single-path Vegas flow with alpha 10 keeps. At 6 segments queued each
        // (12 in all) both paths then shrink, where a lone path queueing 6 grows.
        let mut cc = wvegas(&[30, 30]);
        start_rounds(&mut cc, 0);
        start_rounds(&mut cc, 1);
        // rtt 125 ms: diff = 30 * 25/125 = 6 on each path.
        // Path 0 alone has a rate: alpha 10, grows to 31. Path 1: weight 1/2, alpha 5 < 6, shrinks.
        round(&mut cc, 0, 125);
        assert_eq!(round(&mut cc, 1, 125), 29.0);
        // Path 0 at 31 segments, rtt 149 ms: diff = 31 * 49/149 = 10.19 >= 10, so it recomputes:
        // rate_0 = 31000/0.149 = 208054 against path 1's 240000, weight 0.464, alpha 4.64, and
        // diff > alpha: shrink. The two targets add up to 4.64 + 5 = 9.64, about total_alpha
        // (the rates come from different rounds).
        assert_eq!(round(&mut cc, 0, 149), 30.0);
        let sum = cc.alpha_pkts(0) + cc.alpha_pkts(1);
        assert!((sum - 9.64).abs() < 0.01, "alpha_0 + alpha_1 = {sum}");
        // A lone path with 6 segments queued is below its alpha of 10 and grows.
        let mut lone = wvegas(&[30]);
        start_rounds(&mut lone, 0);
        assert_eq!(round(&mut lone, 0, 125), 31.0);
        // Each path never adds more than one segment per round trip (Vegas's linear increase).
        assert_eq!(round(&mut lone, 0, 125), 32.0);
    }

    #[test]
    fn slow_start_ends_once_the_path_queues_more_than_gamma() {
        let mut cc = Wvegas::new(params(), 1);
        cc.vegas[0].base_rtt = Some(BASE);
        set_path(&mut cc.paths[0], 20, BASE);
        cc.paths[0].window.set_ssthresh_bytes(u64::MAX);
        start_rounds(&mut cc, 0);
        assert_eq!(cc.metrics(0).phase, CcPhase::SlowStart);
        // rtt 110 ms: diff = 20 * 10/110 = 1.82 > gamma 1. target = 20 * 100/110 = 18.18, so
        // cwnd = min(20, 19.18) segments and ssthresh = cwnd - 1 segment.
        round(&mut cc, 0, 110);
        let cwnd = cc.cwnd_bytes(0);
        assert_eq!(cwnd, (20_000.0 * 100.0 / 110.0 + 1000.0) as u64);
        assert_eq!(cc.metrics(0).ssthresh_bytes, Some(cwnd - MSS));
        assert_eq!(cc.metrics(0).phase, CcPhase::CongestionAvoidance);
    }

    #[test]
    fn a_loss_halves_and_recovery_restarts_vegas() {
        let mut cc = wvegas(&[20]);
        start_rounds(&mut cc, 0);
        round(&mut cc, 0, 150); // alpha 10
        let loss = CongestionEvent {
            now: ms(1200),
            largest_lost_sent_time: ms(1100),
            lost_bytes: MSS,
            in_flight_bytes: 19 * MSS,
        };
        cc.on_congestion_event(0, &loss);
        assert_eq!(cc.cwnd_bytes(0), 10 * MSS);
        // The first ACK of a packet sent after the loss reopens the window and Vegas restarts.
        cc.on_ack(0, &ack(ms(1350), ms(1250), MSS));
        assert_eq!(cc.metrics(0).phase, CcPhase::CongestionAvoidance);
        assert_eq!((cc.alpha_pkts(0), cc.weight(0)), (2.0, 1.0));
        assert_eq!(cc.vegas[0].round_start, ms(1350));
    }

    #[test]
    fn config_validation_names_the_field() {
        let d = WvegasConfig::default();
        assert_eq!((d.initial_alpha_pkts, d.total_alpha_pkts, d.gamma_pkts), (2, 10, 1));
        assert!(d.queue_drain);
        let err = WvegasConfig { total_alpha_pkts: 0, ..d }.validate().unwrap_err();
        assert_eq!(err.to_string(), "total_alpha_pkts: must be at least 1");
    }
}
