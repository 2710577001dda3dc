//! BBR version 1, after Linux `net/ipv4/tcp_bbr.c` (Cardwell et al., "BBR: Congestion-Based
//! Congestion Control", ACM Queue 14(5), 2016).
//!
//! # The model
//! BBR does not treat loss as its congestion signal. On every ACK it updates a two-number model
//! of the path:
//!
//! - `bw`: the bottleneck bandwidth, the windowed **max** of delivery-rate samples over the
//!   last 10 round trips (samples come from [`crate::path::rate`]);
//! - `min_rtt`: the round-trip propagation delay, the windowed **min** of RTT samples over the
//!   last 10 seconds;
//!
//! and derives its two controls from them:
//!
//! ```text
//! pacing_rate = pacing_gain * bw * (1 - 1%)
//! cwnd        = cwnd_gain * bw * min_rtt + quantization budget   (at least 4 packets)
//! ```
//!
//! The gains change with the mode, a small state machine:
//!
//! ```text
//!            |
//!            v
//!   +---> STARTUP ----+       Startup: gains 2/ln2 until bw stops growing 25% per round
//!   |        |        |                for 3 rounds ("full pipe").
//!   |        v        |       Drain:   pacing gain ln2/2 until inflight <= BDP.
//!   |      DRAIN -----+       ProbeBW: pacing gains cycle 1.25, 0.75, 1 x6, one min_rtt
//!   |        |        |                each; cwnd gain 2.
//!   |        v        |       ProbeRTT: when min_rtt is 10 s old, cwnd 4 packets for
//!   +---> PROBE_BW ---+                 max(200 ms, 1 round), then back to ProbeBW (or to
//!   |      ^    |     |                 Startup if the pipe was never filled).
//!   |      +----+     |
//!   +--- PROBE_RTT <--+
//! ```
//!
//! Besides the model, BBR keeps the kernel's loss reactions, which only shape the window:
//! packet conservation in the first round of recovery, slow-start back to the target after
//! it, and restoring the pre-loss cwnd when recovery ends; after an RTO the cwnd restarts at
//! one packet and grows by what is acknowledged. ACK aggregation (`bbr_update_ack_aggregation`)
//! adds the recent excess of ACKed data over `bw` to the cwnd target, and long-term bandwidth
//! sampling (`bbr_lt_bw_sampling`) detects token-bucket policers and paces at their rate.
//!
//! # Where each step lives
//! - [`config`]: the kernel's constants and [`BbrConfig`];
//! - [`windowed_filter`]: Kathleen Nichols' max filter (`lib/win_minmax.c`);
//! - `bandwidth`: rounds, the bw filter, ACK aggregation;
//! - `long_term`: policer detection;
//! - `startup`: full-pipe detection and Drain;
//! - `probe_bw`: gain cycling;
//! - `probe_rtt`: the min_rtt filter and ProbeRTT;
//! - `window`: BDP, cwnd and pacing rate, and the loss reactions;
//! - this file: the state, the per-event routines (`bbr_main` is [`Controller::on_ack`]) and
//!   the gains per mode.
//!
//! # Units and the trait
//! The kernel counts packets and keeps rates in packets/us << 24; Braid counts charged bytes
//! (see [`crate::cc`]) and keeps rates in bytes/s, so BDPs are rounded up to whole bytes and
//! budgets of "N packets" are N * MSS. Gains keep the kernel's fixed point ([`Gain`]), so
//! every comparison matches it. The kernel's per-ACK `rate_sample` maps onto [`AckEvent`]:
//! `acked_sacked` = `newly_acked_bytes`, `losses` = `newly_lost_bytes`, `prior_in_flight` =
//! `prior_in_flight_bytes`, `tp->delivered` = `delivered_bytes`, `rtt_us` = `rtt`, and the
//! delivery-rate fields come from [`RateSample`].
//!
//! # Deviations from the kernel, and why
//! - **Deterministic gain cycling.** The kernel starts ProbeBW at a random phase (any but the
//!   0.75 one). Braid draws the phase from a splitmix64 sequence seeded by
//!   [`BbrConfig::cycle_seed`], so a run replays exactly; flows that should probe out of step
//!   need different seeds.
//! - **No TSO/GSO and no departure-time queue.** Braid's senders release one packet per pacing
//!   slot, so the send quantum is one MSS ([`config::BBR_TSO_SEGS_GOAL_PKTS`]) and the
//!   quantization budget is 3 MSS, rounded up to an even packet count, plus 2 packets in the
//!   1.25 phase. A model of a kernel sender (the simulator's end-to-end TCP, kernel-TCP tunnel
//!   paths) sets [`SendQuantum::LinuxTso`], the kernel's `bbr_tso_segs_goal`, instead. The pacer belongs to the caller, so the kernel's earliest departure time is
//!   taken to be now: "packets in the network at EDT" is the inflight, plus one quantum while
//!   probing.
//! - **ProbeRTT's app-limited marking.** The kernel marks the connection app-limited while in
//!   ProbeRTT so that its low-rate samples cannot drag the bw filter down. The rate estimator
//!   belongs to the caller here, so the controller remembers the range of `delivered` values
//!   the kernel's mark would cover and treats samples from packets sent in that range as
//!   app-limited.
//! - **Idle restart.** The kernel's `CA_EVENT_TX_START` (sending with nothing in flight while
//!   app-limited) is inferred in [`Controller::on_sent`] from an empty flight: with the window
//!   open and nothing in flight, the sender was out of data. Not while recovering from an RTO,
//!   whose empty flight is the timer's doing.
//! - **Recovery episodes follow RFC 9002 section 7.3.2**, as the trait documents: a loss
//!   starts recovery if the lost packet was sent after the current episode began, and the
//!   episode (or the RTO's loss state) ends once a packet sent after it began is acknowledged.
//!   The kernel ends recovery when `snd_una` passes `high_seq`; the effect on BBR is the same
//!   (it only needs to know when recovery starts and ends).
//! - **After an RTO the cwnd is 1 MSS**: the kernel's `packets_in_flight + 1` with the whole
//!   flight marked lost. Bytes lost to the RTO are not known, so they do not count toward
//!   the long-term loss ratio unless the caller reports them as a congestion event.
//! - **Undo of a spurious recovery** ([`Controller::on_spurious_congestion`]) is the kernel's
//!   `bbr_undo_cwnd` (restart full-pipe detection and long-term sampling, keep the cwnd) plus
//!   what `tcp_undo_cwnd_reduction` does around it: the loss state returns to open (so the next
//!   ACK restores the saved cwnd, as leaving recovery does) and the undone episode's start is
//!   forgotten, so a genuine loss from the same flight starts recovery again.
//! - **Not modelled**: `is_ack_delayed` (taken as false), `snd_cwnd_clamp` and `sk_max_pacing_rate`
//!   (no caps). The initial pacing rate uses the first RTT sample where the kernel uses srtt,
//!   and the BDP before any RTT sample is the initial window where the kernel uses
//!   `TCP_INIT_CWND`.

mod bandwidth;
pub mod config;
mod long_term;
mod probe_bw;
mod probe_rtt;
mod startup;
mod window;
pub mod windowed_filter;

/// The shared test drivers ([`crate::cc::test_support::harness`]) with [`Bbr`] as the controller.
#[cfg(test)]
mod harness {
    use crate::cc::test_support::harness;
    pub(super) use harness::{ms, params, Ack, App, Policer, MSS};
    pub(super) type Network = harness::Network<super::Bbr>;
    pub(super) type Driver = harness::Driver<super::Bbr>;
}

use std::time::Duration;

pub use config::{BbrConfig, Gain, SendQuantum};

use super::bbr_common::ack_aggregation::AckAggregation;
use super::bbr_common::loss_state::{CaState, LossState};
use super::bbr_common::outputs::Outputs;
use super::{AckEvent, CcMetrics, CcParams, CcPhase, CongestionEvent, Controller, RateSample};
use crate::time::Instant;
use long_term::LongTermBw;
use windowed_filter::WindowedMaxFilter;

/// BBR's modes for deciding how fast to send (kernel `enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Ramp up the sending rate rapidly to fill the pipe.
    Startup,
    /// Drain the queue Startup created.
    Drain,
    /// Discover and share bandwidth: pace around the estimate.
    ProbeBw,
    /// Cut inflight to the minimum to measure min_rtt.
    ProbeRtt,
}

impl Mode {
    /// The mode as the [`CcMetrics`] phase.
    fn phase(self) -> CcPhase {
        match self {
            Mode::Startup => CcPhase::Startup,
            Mode::Drain => CcPhase::Drain,
            Mode::ProbeBw => CcPhase::ProbeBw,
            Mode::ProbeRtt => CcPhase::ProbeRtt,
        }
    }
}

/// A BBRv1 controller for one path. See the module documentation.
#[derive(Clone, Debug)]
pub struct Bbr {
    config: BbrConfig,
    mss_bytes: u64,
    initial_cwnd_bytes: u64,

    /// cwnd, pacing rate and ssthresh, as handed to the sender.
    out: Outputs,

    mode: Mode,
    pacing_gain: Gain,
    cwnd_gain: Gain,

    /// Whether the first event has been seen; the clocks below start then.
    started: bool,
    /// Max filter of delivery rate in bytes/s, over `bw_filter_rtts` rounds.
    bw_filter: WindowedMaxFilter,
    /// Packet-timed rounds elapsed (`rtt_cnt`).
    round_count: u64,
    /// `delivered_bytes` at which the current round ends (`next_rtt_delivered`).
    next_round_delivered_bytes: u64,
    /// Whether this ACK started a new round.
    round_start: bool,
    /// When data was last delivered (`tp->delivered_mstamp`).
    delivered_time: Instant,
    /// Latest `delivered_bytes` seen (`tp->delivered`).
    delivered_bytes: u64,
    /// Total bytes declared lost (`tp->lost`), for the long-term sampler.
    lost_bytes: u64,
    has_seen_rtt: bool,

    // Startup.
    full_bw_reached: bool,
    /// Bandwidth at the last 25% step (`full_bw`).
    full_bw_bytes_per_s: u64,
    /// Rounds since that step (`full_bw_cnt`).
    full_bw_cnt: u32,

    // ProbeBW.
    cycle_idx: usize,
    /// Start of the current gain-cycle phase (`cycle_mstamp`).
    cycle_stamp: Instant,
    /// splitmix64 state for the starting phase.
    cycle_rng: u64,

    // min_rtt and ProbeRTT.
    min_rtt: Option<Duration>,
    min_rtt_stamp: Instant,
    probe_rtt_done_stamp: Option<Instant>,
    probe_rtt_round_done: bool,
    idle_restart: bool,
    /// `delivered_bytes` range whose packets the kernel's ProbeRTT app-limited mark covers.
    probe_rtt_app_limited: Option<(u64, u64)>,

    // Loss reactions.
    loss: LossState,
    packet_conservation: bool,
    /// Last known good cwnd, restored after recovery and ProbeRTT.
    prior_cwnd_bytes: u64,

    ack_aggregation: AckAggregation,
    long_term: LongTermBw,
}

impl Bbr {
    /// A controller with the kernel's tuning.
    pub fn new(params: CcParams) -> Self {
        Self::with_config(params, BbrConfig::default())
    }

    /// A controller with the given tuning.
    ///
    /// # Panics
    /// If `config` does not pass [`BbrConfig::validate`]; validate it where it is loaded.
    pub fn with_config(params: CcParams, config: BbrConfig) -> Self {
        if let Err(e) = config.validate() {
            panic!("invalid BBR configuration: {e}");
        }
        let initial_cwnd_bytes = params.initial_window_bytes();
        let mut bbr = Bbr {
            config,
            mss_bytes: params.mss_bytes,
            initial_cwnd_bytes,
            out: Outputs::new(initial_cwnd_bytes),
            mode: Mode::Startup,
            pacing_gain: config.high_gain,
            cwnd_gain: config.high_gain,
            started: false,
            bw_filter: WindowedMaxFilter::new(config.bw_filter_rtts),
            round_count: 0,
            next_round_delivered_bytes: 0,
            round_start: false,
            delivered_time: Instant::ZERO,
            delivered_bytes: 0,
            lost_bytes: 0,
            has_seen_rtt: false,
            full_bw_reached: false,
            full_bw_bytes_per_s: 0,
            full_bw_cnt: 0,
            cycle_idx: 0,
            cycle_stamp: Instant::ZERO,
            cycle_rng: config.cycle_seed,
            min_rtt: None,
            min_rtt_stamp: Instant::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            idle_restart: false,
            probe_rtt_app_limited: None,
            loss: LossState::default(),
            packet_conservation: false,
            prior_cwnd_bytes: 0,
            ack_aggregation: AckAggregation::default(),
            long_term: LongTermBw::default(),
        };
        bbr.init_pacing_rate_from_rtt(None);
        bbr
    }

    /// Starts the controller's clocks at the first event (the kernel's `bbr_init` runs at
    /// connection setup; the core has no clock to read at construction).
    fn start_clock(&mut self, now: Instant) {
        if !self.started {
            self.started = true;
            self.min_rtt_stamp = now;
            self.delivered_time = now;
            self.ack_aggregation.start(now);
            self.long_term.reset(now, 0, 0);
        }
    }

    fn cwnd_min_target_bytes(&self) -> u64 {
        self.config.cwnd_min_target_pkts * self.mss_bytes
    }

    /// Updates the model and the mode from one ACK (`bbr_update_model`).
    fn update_model(&mut self, ack: &AckEvent, rs: Option<&RateSample>) {
        self.update_bw(ack, rs);
        self.update_ack_aggregation(ack, rs);
        self.update_cycle_phase(ack);
        self.check_full_bw_reached(rs);
        self.check_drain(ack);
        self.update_min_rtt(ack);
        self.update_gains();
    }

    /// Sets the gains for the current mode (`bbr_update_gains`).
    fn update_gains(&mut self) {
        let c = &self.config;
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (c.high_gain, c.high_gain),
            // Pace slowly to drain, but keep the cwnd Startup had.
            Mode::Drain => (c.drain_gain, c.high_gain),
            Mode::ProbeBw if self.long_term.use_bw => (Gain::ONE, c.cwnd_gain),
            Mode::ProbeBw => (c.pacing_gain_cycle[self.cycle_idx], c.cwnd_gain),
            Mode::ProbeRtt => (Gain::ONE, Gain::ONE),
        };
    }

    /// Saves the last known good cwnd before loss recovery or ProbeRTT cuts it
    /// (`bbr_save_cwnd`).
    fn save_cwnd(&mut self) {
        if self.loss.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd_bytes = self.out.cwnd_bytes;
        } else {
            // Recovery or ProbeRTT already cut the cwnd: keep the larger, older value.
            self.prior_cwnd_bytes = self.prior_cwnd_bytes.max(self.out.cwnd_bytes);
        }
    }
}

impl Controller for Bbr {
    /// The kernel's `bbr_cwnd_event(CA_EVENT_TX_START)`: sending resumes after an idle period.
    fn on_sent(&mut self, now: Instant, bytes: u64, in_flight_bytes: u64) {
        self.start_clock(now);
        let was_idle = in_flight_bytes <= bytes;
        if !was_idle || self.loss.ca_state == CaState::Loss {
            return;
        }
        self.idle_restart = true;
        self.ack_aggregation.start(now);
        match self.mode {
            // No need to probe when restarting from idle: pace at the estimate.
            Mode::ProbeBw => self.set_pacing_rate(self.bw(), Gain::ONE),
            Mode::ProbeRtt => self.check_probe_rtt_done(now),
            Mode::Startup | Mode::Drain => {}
        }
    }

    /// `bbr_main`: update the model, then the pacing rate and the cwnd.
    fn on_ack(&mut self, ack: &AckEvent) {
        self.start_clock(ack.now);
        self.loss.end_episode_if_acked(ack);
        if ack.newly_acked_bytes > 0 {
            self.delivered_time = ack.now;
        }
        self.delivered_bytes = ack.delivered_bytes;
        let rs = ack.rate.map(|mut rs| {
            rs.is_app_limited |= self.in_probe_rtt_app_limited_range(&rs);
            rs
        });
        self.update_model(ack, rs.as_ref());
        let bw = self.bw();
        if !self.has_seen_rtt && ack.rtt.is_some() {
            // The first RTT sample replaces the nominal 1 ms behind the initial pacing rate.
            self.init_pacing_rate_from_rtt(ack.rtt);
        }
        self.set_pacing_rate(bw, self.pacing_gain);
        self.set_cwnd(ack, bw, self.cwnd_gain);
    }

    /// Entering loss recovery (`bbr_ssthresh` on `tcp_enter_recovery`): remember the cwnd to
    /// restore when it ends. The cwnd itself is set by the next [`Controller::on_ack`].
    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        self.start_clock(event.now);
        self.lost_bytes += event.lost_bytes;
        if !self.loss.is_new_episode(event.largest_lost_sent_time) {
            return;
        }
        self.save_cwnd();
        self.loss.arm_undo();
        self.loss.start_recovery(event.now);
    }

    /// `tcp_enter_loss` + `bbr_set_state(TCP_CA_Loss)`: save the cwnd, restart it at one
    /// packet, and treat the timeout as the end of a round.
    fn on_rto(&mut self, now: Instant) {
        self.start_clock(now);
        self.save_cwnd();
        self.loss.arm_undo();
        self.out.cwnd_bytes = self.mss_bytes;
        self.loss.enter_loss(now);
        self.full_bw_bytes_per_s = 0;
        self.round_start = true;
        self.lt_bw_sampling(1, false);
    }

    /// `bbr_undo_cwnd`: the loss was spurious, so the slow-down it caused may have hidden
    /// bandwidth growth; restart full-pipe detection (`full_bw = 0`, `full_bw_cnt = 0`) and
    /// long-term sampling (`bbr_reset_lt_bw_sampling`), and keep the cwnd (the kernel returns
    /// `snd_cwnd`). As `tcp_undo_cwnd_reduction` then returns to `TCP_CA_Open`, the loss state
    /// is open again and the next ACK restores the cwnd saved when recovery began.
    fn on_spurious_congestion(&mut self, _now: Instant) {
        if !self.loss.undo() {
            return;
        }
        self.full_bw_bytes_per_s = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling();
    }

    fn cwnd_bytes(&self) -> u64 {
        self.out.cwnd_bytes
    }

    fn pacing_rate_bytes_per_s(&self) -> Option<u64> {
        Some(self.out.pacing_rate_bytes_per_s)
    }

    /// The phase is ProbeRTT whenever BBR is in it (schedulers avoid a path whose cwnd is
    /// pinned at 4 packets), else the loss state if not open, else the mode.
    fn metrics(&self) -> CcMetrics {
        self.out.metrics(self.loss.phase(self.mode.phase()), self.bw(), self.min_rtt)
    }

    fn name(&self) -> &'static str {
        "bbr"
    }
}

#[cfg(test)]
mod tests {
    use super::harness::{ms, params, App, Network, MSS};
    use super::*;

    #[test]
    fn fills_the_bottleneck_with_a_small_queue() {
        // 10 Mbit/s, 40 ms, a 4-BDP buffer. After Startup, BBR should deliver close to the
        // link rate (ProbeRTT costs ~2%) while keeping the queue within a few packets.
        let mut net = Network::new(Bbr::new(params()), 1_250_000, ms(40), 200);
        net.run_for(ms(1000), |_, _| {});
        let delivered_before = net.delivered_bytes;
        let (mut queue_sum, mut acks) = (0u64, 0u64);
        net.run_for(ms(12_000), |n, _| {
            queue_sum += n.queue_bytes();
            acks += 1;
        });
        let throughput = (net.delivered_bytes - delivered_before) / 12;
        assert!(throughput > 1_250_000 * 96 / 100, "{throughput} B/s");
        let mean_queue_pkts = queue_sum as f64 / acks as f64 / MSS as f64;
        assert!(mean_queue_pkts < 8.0, "mean queue {mean_queue_pkts} packets");
        assert_eq!(net.lost_bytes, 0);
        let bw = net.bbr.metrics().bw_estimate_bytes_per_s.unwrap();
        assert!(bw.abs_diff(1_250_000) < 1_250_000 / 100, "bw estimate {bw}");
    }

    #[test]
    fn an_app_limited_sender_keeps_its_bandwidth_estimate() {
        // Bulk for 2 s, then one packet every 10 ms (100 kB/s) for 5 s: some 100 rounds of
        // app-limited samples at 8% of the link rate.
        let mut net = Network::new(Bbr::new(params()), 1_250_000, ms(40), 200);
        net.run_for(ms(2000), |_, _| {});
        net.app = App::Periodic(ms(10));
        let rounds = net.bbr.round_count;
        let mut app_limited_samples = 0;
        net.run_for(ms(5000), |n, ack| {
            app_limited_samples += ack.rate.map_or(0, |rs| u32::from(rs.is_app_limited));
            let bw = n.bbr.metrics().bw_estimate_bytes_per_s.unwrap();
            assert!(bw.abs_diff(1_250_000) < 1_250_000 / 100, "bw estimate {bw}");
        });
        assert!(app_limited_samples > 400, "{app_limited_samples} app-limited samples");
        assert!(net.bbr.round_count - rounds > 50, "{} rounds", net.bbr.round_count - rounds);
    }

    #[test]
    fn runs_replay_exactly() {
        let run = || {
            let mut net = Network::new(Bbr::new(params()), 1_250_000, ms(30), 40);
            let mut trace = Vec::new();
            net.run_for(ms(12_000), |n, ack| trace.push((ack.now, n.bbr.metrics())));
            trace
        };
        let (a, b) = (run(), run());
        assert_eq!(a, b);
        // The small buffer makes Startup overflow it: recovery is exercised too.
        assert!(a.iter().any(|(_, m)| m.phase == CcPhase::Recovery));
        assert!(a.iter().any(|(_, m)| m.phase == CcPhase::ProbeRtt));
    }

    #[test]
    fn metrics_report_probe_rtt_over_loss_states() {
        let mut bbr = Bbr::new(params());
        let now = Instant::from_nanos(1_000_000);
        assert_eq!(bbr.metrics().phase, CcPhase::Startup);
        assert_eq!(bbr.metrics().bw_estimate_bytes_per_s, None);
        assert_eq!(bbr.metrics().cwnd_bytes, 10 * MSS);
        bbr.on_congestion_event(&CongestionEvent {
            now,
            largest_lost_sent_time: now,
            lost_bytes: MSS,
            in_flight_bytes: 0,
        });
        assert_eq!(bbr.metrics().phase, CcPhase::Recovery);
        bbr.on_rto(now);
        assert_eq!(bbr.metrics().phase, CcPhase::Loss);
        bbr.mode = Mode::ProbeRtt;
        assert_eq!(bbr.metrics().phase, CcPhase::ProbeRtt);
        assert_eq!(bbr.name(), "bbr");
    }

    #[test]
    fn undo_restarts_full_pipe_detection_and_keeps_the_cwnd_once() {
        let mut bbr = Bbr::new(params());
        let now = Instant::from_nanos(1_000_000);
        bbr.start_clock(now);
        (bbr.full_bw_bytes_per_s, bbr.full_bw_cnt) = (1_000_000, 2);
        bbr.long_term.use_bw = true;
        bbr.long_term.bw_bytes_per_s = 500_000;
        let event = CongestionEvent {
            now,
            largest_lost_sent_time: now,
            lost_bytes: MSS,
            in_flight_bytes: 0,
        };
        bbr.on_congestion_event(&event);
        assert_eq!(bbr.metrics().phase, CcPhase::Recovery);
        let cwnd = bbr.cwnd_bytes();
        bbr.on_spurious_congestion(now);
        assert_eq!((bbr.full_bw_bytes_per_s, bbr.full_bw_cnt), (0, 0));
        assert!(!bbr.long_term.use_bw);
        assert_eq!(bbr.long_term.bw_bytes_per_s, 0);
        assert_eq!(bbr.cwnd_bytes(), cwnd, "bbr_undo_cwnd keeps snd_cwnd");
        assert_eq!(bbr.metrics().phase, CcPhase::Startup);
        assert_eq!(bbr.loss.recovery_start, None, "the undone episode is forgotten");
        // A second undo without a new episode changes nothing.
        bbr.full_bw_cnt = 1;
        bbr.on_spurious_congestion(now);
        assert_eq!(bbr.full_bw_cnt, 1);
        // The same loss reported again starts recovery again.
        bbr.on_congestion_event(&event);
        assert_eq!(bbr.metrics().phase, CcPhase::Recovery);
    }

    #[test]
    #[should_panic(expected = "bbr.cwnd_gain")]
    fn an_invalid_config_is_refused() {
        let config = BbrConfig { cwnd_gain: Gain(10), ..BbrConfig::default() };
        let _ = Bbr::with_config(params(), config);
    }
}
