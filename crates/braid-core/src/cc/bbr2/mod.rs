//! BBR versions 2 and 3: one controller, [`Bbr2`], with a [`Version`] selector.
//!
//! Sources: draft-ietf-ccwg-bbr (BBRv3; "the draft", section numbers of its -06 text), its
//! predecessor draft-cardwell-iccrg-bbr-congestion-control-02 (BBRv2), Google's v3 Linux
//! `net/ipv4/tcp_bbr.c` (github.com/google/bbr, branch v3) and v2alpha `net/ipv4/tcp_bbr2.c`.
//! Kernel function names are given beside each step so a reader can follow the C.
//!
//! # The model
//! BBRv1 ([`crate::cc::bbr`]) models the path by two numbers, `max_bw` and `min_rtt`, and
//! ignores loss. v2/v3 keep them and add bounds learned from loss, on two time scales:
//!
//! - long term, `inflight_hi` (the draft's `inflight_longterm`): the most data in flight that
//!   did not cause more than 2% loss (`BBRLossThresh`) while probing. A probe whose round
//!   loses more sets it to `max(tx_in_flight, 0.7 * target inflight)` (`BBRBeta`) and stops;
//!   a probe that fills it without such loss raises it by 1, 2, 4, ... packets per round.
//! - short term, `bw_lo` and `inflight_lo` (`bw_shortterm`, `inflight_shortterm`): when not
//!   probing, every round with a loss cuts both to `max(latest delivered, 0.7 * old)`. They are
//!   forgotten when the next probe starts (REFILL) and after ProbeRTT.
//!
//! `bw = min(max_bw, bw_lo)` paces; the cwnd is the v1 target `cwnd_gain * BDP` capped by
//! `inflight_hi` (less 15% headroom, `BBRHeadroom`, while cruising) and `inflight_lo`.
//! `max_bw` is the max over the current and the previous ProbeBW cycle, not over 10 rounds.
//!
//! The loss rate of a round is the ACKed packet's `RateSample::lost_bytes /
//! RateSample::tx_in_flight_bytes`: the bytes declared lost while that packet was in flight,
//! over the flight it joined (draft `IsInflightTooHigh`). On the ACK that ends a round, the
//! acknowledged packet was sent when the round began, so this is the round's lost / (lost +
//! delivered + still in flight).
//!
//! # The state machine
//! ```text
//!          |
//!          v
//!   +-> STARTUP --------------+   Startup: gains below; leaves when bw grew < 25% for 3
//!   |      |                  |            rounds, or on excessive loss (see below).
//!   |      v                  |   Drain:   pacing below 1 until inflight <= BDP.
//!   |    DRAIN ---------------+   DOWN:    0.9 (v2: 0.75) until inflight <= BDP and leaves
//!   |      |                  |            15% of inflight_hi free -> CRUISE.
//!   |      v                  |   CRUISE:  1.0 until the probe wait (2-3 s, seeded) or the
//!   +-> PROBE_BW: DOWN -------+            Reno bound (min(63, BDP in packets) rounds) is up.
//!   |      ^      |           |   REFILL:  1.0 for one round, short-term bounds reset.
//!   |      |    CRUISE -------+   UP:      1.25 (cwnd gain 2.25; v2: 2) until bw plateaus
//!   |      |      |           |            (v2: min_rtt passed and inflight >= 1.25 BDP),
//!   |      |    REFILL -------+            or loss > 2% -> DOWN.
//!   |      |      |           |   ProbeRTT: when the ProbeRTT min filter is 5 s old, cwnd
//!   |      +----- UP ---------+            0.5 BDP for max(200 ms, 1 round).
//!   +----- PROBE_RTT <--------+
//! ```
//! Startup's loss exit (draft "Exiting Startup Based on Packet Loss", `bbr_check_loss_too_
//! high_in_startup`): at the end of a round spent in fast recovery in which at least 6 (v2:
//! 8) loss events occurred and the loss rate exceeded 2%, the pipe is full; `inflight_hi`
//! becomes the BDP (v3: at least the data delivered in the last round).
//!
//! # Where v2 and v3 differ, and why
//! | | v2 (`tcp_bbr2.c`) | v3 (draft, `tcp_bbr.c` v3) |
//! |---|---|---|
//! | Startup pacing / cwnd gain | 2.89 / 2.89 (v1's 2/ln 2) | 2.77 / 2.0: 4 ln 2 is the least pacing gain that doubles the rate every round (draft `BBRStartupPacingGain`), and a cwnd of 2 BDP bounds the Startup queue to one BDP |
//! | Drain pacing gain | 1/2.89 | 0.5 (draft `BBRDrainPacingGain`; the v3 kernel keeps 1/2.89): any gain <= 1/cwnd gain drains that queue within a round |
//! | DOWN pacing gain | 0.75 | 0.90: the least gain that still converges to fair shares against 1.25 probes, and costs less throughput |
//! | UP cwnd gain | 2.0 | 2.25: inflight can rise even where the cwnd was the limit |
//! | UP exit | one min_rtt elapsed and inflight >= 1.25 BDP | bandwidth plateau (`full_bw_now`: 3 rounds under 25% growth), restarted while `inflight_hi` caps the cwnd, so one probe can find more than 25% new bandwidth |
//! | Full-bw detector | `max_bw` at round starts, Startup only | each round's rate sample (draft `CheckFullBWReached`), also in UP |
//! | Startup loss exit | 8 loss events; `inflight_hi` = BDP | 6 events (`BBRStartupFullLossCnt`); `inflight_hi` = max(BDP, data delivered in the last round) |
//! | Drain exit | inflight <= BDP | also after 3 rounds (draft `CheckDrainDone`), in case Startup overestimated `bw` |
//! | UP growth credit | forgotten while not cwnd-limited | kept |
//! | ProbeRTT filter refresh | by an RTT sample <= the minimum | only by a lower one (so a busy v3 flow probes every 5 s) |
//! | Spurious recovery | restore the bounds and the cwnd | also return to Startup, or restart the probe the loss ended (draft `HandleSpuriousLossDetection`) |
//!
//! Shared by v2 and v3, and new against v1: ProbeRTT is due when the 5 s ProbeRTT min filter
//! expires (v1: the 10 s min_rtt window) and holds the cwnd at 0.5 BDP (v1: 4 packets), so
//! a flow keeps half its rate instead of stalling (the kernel's comment: ~2% cost over 5 s);
//! no packet conservation in recovery (the short-term bounds react instead); ACK aggregation
//! is provisioned in Startup too, over a 1-round window.
//!
//! The two v2 sources disagree: the BBRv2 draft (-02) already gives the gains v3 ships
//! (2.77/2.0, DOWN 0.9, UP cwnd 2.25), the v2alpha code the older ones above. Braid's V2
//! follows the code, which is what "BBRv2" measurements in the literature ran; every number
//! is a [`Bbr2Config`] field, so the draft-02 gains can be set on a V2 config. For V3 the
//! draft wins where it and the v3 kernel differ (Drain 0.5 vs 1/2.89, DOWN 0.90 vs 0.91).
//!
//! # Deviations and choices where the sources are vague
//! - **Per-ACK loss check only.** The draft checks each packet as it is declared lost
//!   (`HandleLostPacket`, `bbr_skb_marked_lost`) and solves for the inflight at which loss
//!   crossed 2%. The trait reports losses in batches without per-packet send state, so the
//!   check runs on every ACK against its rate sample (as `bbr_adapt_upper_bounds` also does);
//!   losses are counted into the sample of the ACK that revealed them, so the reaction comes
//!   on the same ACK, with the acknowledged packet's `tx_in_flight`.
//! - **Loss events** (for the Startup exit) are calls of [`Controller::on_congestion_event`]:
//!   one per ACK or timer that declared losses, like the kernel's ACKs with `rs->losses`.
//! - **cwnd-limited** (`tp->is_cwnd_limited`) is inferred in [`Controller::on_sent`]: a send
//!   that left less than one MSS of window marks the current and the next round limited.
//! - **Deterministic randomness.** The probe wait (2 s + [0, 1 s)) and the Reno round bound
//!   (62 or 63) come from a splitmix64 sequence seeded by [`Bbr2Config::seed`].
//! - **No ECN** (the trait carries no CE marks), no TSO: the send quantum is one MSS, so the
//!   quantization budget is max(BDP, 4 MSS) + 2 MSS in UP; no `snd_cwnd_clamp`.
//! - Loss recovery and RTO bookkeeping (episodes per RFC 9002 7.3.2, cwnd of one MSS after an
//!   RTO, idle restart, ProbeRTT app-limited marking) are as in [`crate::cc::bbr`].
//!
//! # Where each step lives
//! `config` (constants, versions), `bandwidth` (rounds, max_bw, latest delivery signals, ACK
//! aggregation), `short_term` (bw_lo, inflight_lo), `long_term` (inflight_hi), `startup`
//! (full pipe, loss exit, Drain), `probe_bw` (DOWN/CRUISE/REFILL/UP), `probe_rtt`, `window`
//! (BDP, cwnd, pacing, recovery), and this file (state, per-event routines).

mod bandwidth;
pub mod config;
mod long_term;
mod probe_bw;
mod probe_rtt;
mod short_term;
mod startup;
mod window;

/// The shared test drivers ([`crate::cc::test_support::harness`]) with [`Bbr2`] as the controller.
#[cfg(test)]
mod harness {
    use crate::cc::test_support::harness;
    pub(super) use harness::{ms, params, Ack, App, MSS};
    pub(super) type Network = harness::Network<super::Bbr2>;
    pub(super) type Driver = harness::Driver<super::Bbr2>;
}

use std::time::Duration;

pub use config::{Bbr2Config, Version};

use super::bbr_common::ack_aggregation::AckAggregation;
use super::bbr_common::gain::Gain;
use super::bbr_common::loss_state::{CaState, LossState};
use super::bbr_common::outputs::Outputs;
use super::{AckEvent, CcMetrics, CcParams, CcPhase, CongestionEvent, Controller, RateSample};
use crate::time::Instant;

/// "Not set yet" for the bounds the sources initialise to infinity.
const UNSET: u64 = u64::MAX;

/// The four ProbeBW phases (draft section "ProbeBW", kernel `enum bbr_pacing_gain_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProbeBwPhase {
    /// Decelerate: drain the queue the probe built and leave headroom.
    Down,
    /// Send at the estimate.
    Cruise,
    /// Refill the pipe at the estimate for one round before probing.
    Refill,
    /// Accelerate: probe for more bandwidth.
    Up,
}

/// The modes (kernel `enum bbr_mode`), with ProbeBW's phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Startup,
    Drain,
    ProbeBw(ProbeBwPhase),
    ProbeRtt,
}

impl Mode {
    /// The mode as the [`CcMetrics`] phase.
    fn phase(self) -> CcPhase {
        match self {
            Mode::Startup => CcPhase::Startup,
            Mode::Drain => CcPhase::Drain,
            Mode::ProbeBw(_) => CcPhase::ProbeBw,
            Mode::ProbeRtt => CcPhase::ProbeRtt,
        }
    }
}

/// What the ACKs now arriving say about bandwidth probing (kernel `enum bbr_ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    /// Not probing; no probe feedback.
    Init,
    /// Sending at the estimate to fill the pipe.
    Refilling,
    /// Inflight rising to probe.
    ProbeStarting,
    /// ACKs of probing data arriving.
    ProbeFeedback,
    /// Probing stopped; its ACKs still arriving.
    ProbeStopping,
}

/// The probing state a loss ended, to return to if the loss proves spurious (draft
/// `BBR.undo_state`; v3 only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UndoState {
    Startup,
    ProbeUp,
}

/// The loss-adapted bounds saved when recovery starts (`SaveStateUponLoss`, `bbr_ssthresh`).
#[derive(Clone, Copy, Debug)]
struct UndoBounds {
    bw_lo: u64,
    inflight_lo: u64,
    inflight_hi: u64,
}

/// A BBRv2 or BBRv3 controller for one path. See the module documentation.
#[derive(Clone, Debug)]
pub struct Bbr2 {
    config: Bbr2Config,
    mss_bytes: u64,
    initial_cwnd_bytes: u64,

    /// cwnd, pacing rate and ssthresh, as handed to the sender.
    out: Outputs,

    mode: Mode,
    pacing_gain: Gain,
    cwnd_gain: Gain,
    started: bool,
    /// Time of the event being processed.
    now: Instant,
    has_seen_rtt: bool,

    // Rounds and delivery (`bandwidth`).
    round_count: u64,
    next_round_delivered_bytes: u64,
    round_start: bool,
    delivered_bytes: u64,
    /// This ACK's delivery rate, or 0 without a valid sample (`ctx->sample_bw`).
    sample_bw_bytes_per_s: u64,
    /// Max rate of the previous and the current ProbeBW cycle (kernel `bw_hi[2]`).
    max_bw_bytes_per_s: [u64; 2],
    /// One-round maxima of the delivery rate and of the data delivered per sample.
    bw_latest_bytes_per_s: u64,
    inflight_latest_bytes: u64,
    ack_aggregation: AckAggregation,

    // Congestion signals and the short-term model (`short_term`).
    bw_lo_bytes_per_s: u64,
    inflight_lo_bytes: u64,
    loss_round_delivered_bytes: u64,
    loss_round_start: bool,
    loss_in_round: bool,
    /// Loss events in the current loss round, while in Startup (saturates at 15).
    loss_events_in_round: u32,

    // Long-term model (`long_term`).
    inflight_hi_bytes: u64,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    bw_probe_up_rounds: u32,
    bw_probe_up_acks_bytes: u64,
    /// Bytes to ACK per MSS of `inflight_hi` growth in UP (`bw_probe_up_cnt`).
    bw_probe_up_cnt_bytes: u64,
    cwnd_limited_this_round: bool,
    cwnd_limited_last_round: bool,

    // Startup and Drain (`startup`).
    full_bw_reached: bool,
    full_bw_now: bool,
    full_bw_bytes_per_s: u64,
    full_bw_cnt: u32,
    drain_start_round: u64,

    // ProbeBW (`probe_bw`).
    ack_phase: AckPhase,
    cycle_stamp: Instant,
    probe_wait: Duration,
    rounds_since_probe: u64,
    rng: u64,

    // min_rtt and ProbeRTT (`probe_rtt`).
    min_rtt: Option<Duration>,
    min_rtt_stamp: Instant,
    probe_rtt_min: Option<Duration>,
    probe_rtt_min_stamp: Instant,
    probe_rtt_done_stamp: Option<Instant>,
    probe_rtt_round_done: bool,
    idle_restart: bool,
    /// `delivered_bytes` range whose packets the kernel's ProbeRTT app-limited mark covers.
    probe_rtt_app_limited: Option<(u64, u64)>,

    // Loss recovery (`window`).
    loss: LossState,
    prior_cwnd_bytes: u64,
    undo_bounds: UndoBounds,
    undo_state: Option<UndoState>,
}

impl Bbr2 {
    /// A controller of `version` with its default tuning.
    pub fn new(params: CcParams, version: Version) -> Self {
        Self::with_config(params, Bbr2Config::for_version(version))
    }

    /// A controller with the given tuning.
    ///
    /// # Panics
    /// If `config` does not pass [`Bbr2Config::validate`]; validate it where it is loaded.
    pub fn with_config(params: CcParams, config: Bbr2Config) -> Self {
        if let Err(e) = config.validate() {
            panic!("invalid BBRv2/v3 configuration: {e}");
        }
        let initial_cwnd_bytes = params.initial_window_bytes();
        let mut bbr = Bbr2 {
            config,
            mss_bytes: params.mss_bytes,
            initial_cwnd_bytes,
            out: Outputs::new(initial_cwnd_bytes),
            mode: Mode::Startup,
            pacing_gain: config.startup_pacing_gain,
            cwnd_gain: config.startup_cwnd_gain,
            started: false,
            now: Instant::ZERO,
            has_seen_rtt: false,
            round_count: 0,
            next_round_delivered_bytes: 0,
            round_start: false,
            delivered_bytes: 0,
            sample_bw_bytes_per_s: 0,
            max_bw_bytes_per_s: [0; 2],
            bw_latest_bytes_per_s: 0,
            inflight_latest_bytes: 0,
            ack_aggregation: AckAggregation::default(),
            bw_lo_bytes_per_s: UNSET,
            inflight_lo_bytes: UNSET,
            // The first loss round ends once the first flight is acknowledged.
            loss_round_delivered_bytes: 1,
            loss_round_start: false,
            loss_in_round: false,
            loss_events_in_round: 0,
            inflight_hi_bytes: UNSET,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            bw_probe_up_rounds: 0,
            bw_probe_up_acks_bytes: 0,
            bw_probe_up_cnt_bytes: UNSET,
            cwnd_limited_this_round: false,
            cwnd_limited_last_round: false,
            full_bw_reached: false,
            full_bw_now: false,
            full_bw_bytes_per_s: 0,
            full_bw_cnt: 0,
            drain_start_round: 0,
            ack_phase: AckPhase::Init,
            cycle_stamp: Instant::ZERO,
            probe_wait: Duration::ZERO,
            rounds_since_probe: 0,
            rng: config.seed,
            min_rtt: None,
            min_rtt_stamp: Instant::ZERO,
            probe_rtt_min: None,
            probe_rtt_min_stamp: Instant::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            idle_restart: false,
            probe_rtt_app_limited: None,
            loss: LossState::default(),
            prior_cwnd_bytes: 0,
            undo_bounds: UndoBounds { bw_lo: UNSET, inflight_lo: UNSET, inflight_hi: UNSET },
            undo_state: None,
        };
        bbr.init_pacing_rate(None);
        bbr
    }

    /// The version this controller runs.
    pub fn version(&self) -> Version {
        self.config.version
    }

    /// The ProbeBW phase, when in ProbeBW (for traces: [`CcMetrics`] only says ProbeBW).
    pub fn probe_bw_phase(&self) -> Option<ProbeBwPhase> {
        match self.mode {
            Mode::ProbeBw(phase) => Some(phase),
            _ => None,
        }
    }

    /// The long-term bound on inflight (`inflight_hi`), once loss has set it.
    pub fn inflight_hi_bytes(&self) -> Option<u64> {
        (self.inflight_hi_bytes != UNSET).then_some(self.inflight_hi_bytes)
    }

    /// The short-term bound on inflight (`inflight_lo`), while one is in force.
    pub fn inflight_lo_bytes(&self) -> Option<u64> {
        (self.inflight_lo_bytes != UNSET).then_some(self.inflight_lo_bytes)
    }

    /// Notes the time of an event, and starts the clocks at the first one (the kernel's
    /// `bbr_init` runs at connection setup; the core has no clock to read at construction).
    fn on_event(&mut self, now: Instant) {
        self.now = now;
        if !self.started {
            self.started = true;
            self.min_rtt_stamp = now;
            self.probe_rtt_min_stamp = now;
            self.ack_aggregation.start(now);
        }
    }

    fn cwnd_min_target_bytes(&self) -> u64 {
        self.config.cwnd_min_target_pkts * self.mss_bytes
    }

    /// Sets the gains for the current mode (`bbr_update_gains`).
    fn update_gains(&mut self) {
        let c = &self.config;
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (c.startup_pacing_gain, c.startup_cwnd_gain),
            // Pace slowly to drain, but keep the cwnd Startup had.
            Mode::Drain => (c.drain_pacing_gain, c.startup_cwnd_gain),
            Mode::ProbeBw(ProbeBwPhase::Down) => (c.probe_down_pacing_gain, c.cwnd_gain),
            Mode::ProbeBw(ProbeBwPhase::Cruise | ProbeBwPhase::Refill) => (Gain::ONE, c.cwnd_gain),
            Mode::ProbeBw(ProbeBwPhase::Up) => (c.probe_up_pacing_gain, c.probe_up_cwnd_gain),
            Mode::ProbeRtt => (Gain::ONE, c.probe_rtt_cwnd_gain),
        };
    }

    /// Updates the model and the state machine from one ACK (draft `UpdateModelAndState`,
    /// kernel `bbr_update_model`).
    fn update_model(&mut self, ack: &AckEvent, rs: Option<&RateSample>) {
        self.update_round(rs);
        self.update_latest_delivery_signals(ack, rs);
        self.update_congestion_signals(ack, rs);
        self.update_ack_aggregation(ack, rs);
        self.check_startup_high_loss(rs);
        self.check_full_bw_reached(rs);
        self.check_drain(ack);
        self.update_probe_bw_cycle_phase(ack, rs);
        self.update_min_rtt(ack);
    }
}

impl Controller for Bbr2 {
    /// Restart from idle (draft `HandleRestartFromIdle`, `CA_EVENT_TX_START`), and the
    /// cwnd-limited mark.
    fn on_sent(&mut self, now: Instant, bytes: u64, in_flight_bytes: u64) {
        self.on_event(now);
        if in_flight_bytes + self.mss_bytes > self.out.cwnd_bytes {
            self.cwnd_limited_this_round = true;
        }
        let was_idle = in_flight_bytes <= bytes;
        if was_idle && self.loss.ca_state != CaState::Loss {
            self.handle_restart_from_idle(now);
        }
    }

    /// `bbr_main`: update the model, then the pacing rate and the cwnd.
    fn on_ack(&mut self, ack: &AckEvent) {
        self.on_event(ack.now);
        self.update_ca_state(ack);
        self.delivered_bytes = ack.delivered_bytes;
        let rs = ack.rate.map(|mut rs| {
            rs.is_app_limited |= self.in_probe_rtt_app_limited_range(&rs);
            rs
        });
        self.update_model(ack, rs.as_ref());
        self.update_gains();
        if !self.has_seen_rtt && ack.rtt.is_some() {
            // The first RTT sample replaces the nominal 1 ms behind the initial pacing rate.
            self.init_pacing_rate(ack.rtt);
        }
        self.set_pacing_rate(self.bw(), self.pacing_gain);
        self.set_cwnd(ack);
        self.bound_cwnd_for_model();
        self.advance_latest_delivery_signals(rs.as_ref());
        self.loss.prev_ca_state = self.loss.ca_state;
    }

    /// Packets were declared lost: note a lossy round (`bbr_note_loss`), count the loss event
    /// for Startup, and start a recovery episode if this loss is news (`bbr_ssthresh`).
    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        self.on_event(event.now);
        self.note_loss();
        if !self.full_bw_reached {
            self.loss_events_in_round = (self.loss_events_in_round + 1).min(15);
        }
        if !self.loss.is_new_episode(event.largest_lost_sent_time) {
            return;
        }
        self.save_state_upon_loss();
        self.loss.start_recovery(event.now);
    }

    /// The flight is lost (draft `OnEnterRTO`, `tcp_enter_loss` + `bbr_set_state`).
    fn on_rto(&mut self, now: Instant) {
        self.on_event(now);
        self.note_loss();
        self.save_state_upon_loss();
        self.out.cwnd_bytes = self.mss_bytes;
        self.loss.enter_loss(now);
        self.reset_full_bw();
        if !self.is_probing_bw() && self.inflight_lo_bytes == UNSET {
            // The short-term bound adapts from the cwnd before the timeout.
            self.inflight_lo_bytes = self.prior_cwnd_bytes;
        }
    }

    /// The losses behind the latest reduction were spurious (draft
    /// `HandleSpuriousLossDetection`, `bbr_undo_cwnd`).
    fn on_spurious_congestion(&mut self, now: Instant) {
        self.on_event(now);
        if self.loss.undo() {
            self.undo_spurious_loss();
        }
    }

    fn cwnd_bytes(&self) -> u64 {
        self.out.cwnd_bytes
    }

    fn pacing_rate_bytes_per_s(&self) -> Option<u64> {
        Some(self.out.pacing_rate_bytes_per_s)
    }

    /// ProbeRTT whenever BBR is in it (schedulers avoid a path in ProbeRTT), else the loss
    /// state if not open, else the mode.
    fn metrics(&self) -> CcMetrics {
        self.out.metrics(self.loss.phase(self.mode.phase()), self.bw(), self.min_rtt)
    }

    fn name(&self) -> &'static str {
        match self.config.version {
            Version::V2 => "bbr2",
            Version::V3 => "bbr3",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::harness::{ms, params, App, Network, MSS};
    use super::*;

    #[test]
    fn fills_the_bottleneck_with_a_small_queue() {
        // 10 Mbit/s, 40 ms, a 4-BDP buffer. After Startup both versions deliver close to the
        // link rate (ProbeRTT and DOWN cost a few percent) and keep the queue small.
        for version in [Version::V2, Version::V3] {
            let mut net = Network::new(Bbr2::new(params(), version), 1_250_000, ms(40), 200);
            net.run_for(ms(1000), |_, _| {});
            let delivered_before = net.delivered_bytes;
            let (mut queue_sum, mut acks) = (0u64, 0u64);
            net.run_for(ms(12_000), |n, _| {
                queue_sum += n.queue_bytes();
                acks += 1;
            });
            let throughput = (net.delivered_bytes - delivered_before) / 12;
            let mean_queue_pkts = queue_sum as f64 / acks as f64 / MSS as f64;
            assert!(throughput > 1_250_000 * 95 / 100, "{version:?}: {throughput} B/s");
            assert!(mean_queue_pkts < 15.0, "{version:?}: mean queue {mean_queue_pkts} packets");
            assert_eq!(net.lost_bytes, 0);
        }
    }

    #[test]
    fn a_shallow_buffer_keeps_loss_low() {
        // A buffer of a fifth of the BDP (10 of 50 packets): v1 would lose ~20% in each
        // probe; v2/v3 learn inflight_hi from the first losses and stay near the 2% target.
        for version in [Version::V2, Version::V3] {
            let mut net = Network::new(Bbr2::new(params(), version), 1_250_000, ms(40), 10);
            net.run_for(ms(2000), |_, _| {});
            let (d0, l0) = (net.delivered_bytes, net.lost_bytes);
            net.run_for(ms(20_000), |_, _| {});
            let (delivered, lost) = (net.delivered_bytes - d0, net.lost_bytes - l0);
            let loss_pct = lost as f64 * 100.0 / (delivered + lost) as f64;
            let throughput = delivered / 20;
            assert!(net.bbr.inflight_hi_bytes().is_some(), "{version:?}: loss set inflight_hi");
            assert!(loss_pct < 2.0, "{version:?}: {loss_pct:.2}% lost");
            assert!(throughput > 1_250_000 * 85 / 100, "{version:?}: {throughput} B/s");
        }
    }

    #[test]
    fn an_app_limited_sender_keeps_its_estimate_and_stays_in_startup_without_loss() {
        // One packet every 10 ms (100 kB/s) on a 1.25 MB/s path: app-limited from the start.
        // Without loss the pipe is never judged full (draft test "Never Exiting ... STARTUP
        // When Application-Limited With No Loss"); the estimate is the application's rate.
        let mut net = Network::new(Bbr2::new(params(), Version::V3), 1_250_000, ms(40), 200);
        net.app = App::Periodic(ms(10));
        net.run_for(ms(5000), |_, _| {});
        assert_eq!(net.bbr.metrics().phase, CcPhase::Startup);
        let bw = net.bbr.bw();
        assert!((90_000..1_250_000).contains(&bw), "{bw}");
        // Bulk for 2 s, then app-limited again: the full-rate estimate survives.
        net.app = App::Bulk;
        net.run_for(ms(2000), |_, _| {});
        assert!(net.bbr.full_bw_reached);
        let bw = net.bbr.bw();
        net.app = App::Periodic(ms(10));
        net.run_for(ms(1000), |_, _| {});
        assert_eq!(net.bbr.bw(), bw, "app-limited samples do not lower max_bw");
    }

    #[test]
    fn runs_replay_exactly_and_report_their_name() {
        for (version, name) in [(Version::V2, "bbr2"), (Version::V3, "bbr3")] {
            let run = || {
                let mut net = Network::new(Bbr2::new(params(), version), 1_250_000, ms(30), 20);
                let mut trace = Vec::new();
                net.run_for(ms(12_000), |n, ack| trace.push((ack.now, n.bbr.metrics())));
                trace
            };
            let (a, b) = (run(), run());
            assert_eq!(a, b);
            assert!(a.iter().any(|(_, m)| m.phase == CcPhase::Recovery));
            // v2 takes equal RTT samples as fresh, so a ProbeRTT is not due on this path.
            let probed_rtt = a.iter().any(|(_, m)| m.phase == CcPhase::ProbeRtt);
            assert_eq!(probed_rtt, version == Version::V3);
            let bbr = Bbr2::new(params(), version);
            assert_eq!((bbr.name(), bbr.version()), (name, version));
        }
    }

    #[test]
    #[should_panic(expected = "bbr2.beta_percent")]
    fn an_invalid_config_is_refused() {
        let config = Bbr2Config { beta_percent: 100, ..Bbr2Config::v3() };
        let _ = Bbr2::with_config(params(), config);
    }
}
