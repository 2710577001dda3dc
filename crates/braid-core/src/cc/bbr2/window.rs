//! From the model to the controls (draft "Updating Control Parameters": `BDPMultiple`,
//! `QuantizationBudget`, `SetPacingRate`, `SetCwnd`, `BoundCwndForModel`,
//! `BoundCwndForProbeRTT`; kernel `bbr_bdp`, `bbr_quantization_budget`, `bbr_set_cwnd`,
//! `bbr_bound_cwnd_for_inflight_model`), and the cwnd around loss recovery (draft
//! "Modulating cwnd in Loss Recovery", `SaveCwnd`, `RestoreCwnd`, `SaveStateUponLoss`,
//! `HandleSpuriousLossDetection`; kernel `bbr_ssthresh`, `bbr_undo_cwnd`).
//!
//! The cwnd grows by what is ACKed toward `cwnd_gain * BDP` plus the ACK-aggregation
//! allowance, and is then capped by the loss-learned bounds of the current phase:
//!
//! | phase | cap |
//! |---|---|
//! | Startup | none |
//! | Drain | `inflight_lo` |
//! | DOWN, REFILL, UP | `inflight_hi`, `inflight_lo` |
//! | CRUISE, ProbeRTT | `inflight_hi` - 15% headroom, `inflight_lo` |
//!
//! never below 4 packets. Unlike v1 there is no packet conservation in recovery: the
//! short-term bounds are the response to loss, and the cwnd saved when recovery began is
//! restored when it ends (then capped as above).

use std::time::Duration;

use super::{Bbr2, CaState, Mode, ProbeBwPhase, UndoBounds, UndoState, Version, UNSET};
use crate::cc::bbr_common::gain::Gain;
use crate::cc::bbr_common::pacing;
use crate::cc::AckEvent;
use crate::time::Instant;
/// Send quanta budgeted at the two ends (one in the qdisc, one in TSO, one at the
/// receiver's GRO); Braid sends one MSS per quantum.
const QUANTA_BUDGETED: u64 = 3;

impl Bbr2 {
    /// `gain * bw * min_rtt`; the initial window before any RTT sample (`BDPMultiple`).
    pub(super) fn bdp(&self, bw: u64, gain: Gain) -> u64 {
        match self.min_rtt {
            Some(min_rtt) => pacing::bdp(bw, min_rtt, gain),
            None => self.initial_cwnd_bytes,
        }
    }

    /// Room for the send quanta at both ends and the 4-packet floor, plus 2 packets in UP so
    /// that even a tiny BDP is probed above (`QuantizationBudget`).
    pub(super) fn quantization_budget(&self, inflight: u64) -> u64 {
        let floor = (QUANTA_BUDGETED * self.mss_bytes).max(self.cwnd_min_target_bytes());
        let mut cap = inflight.max(floor);
        if self.mode == Mode::ProbeBw(ProbeBwPhase::Up) {
            cap = cap.saturating_add(2 * self.mss_bytes);
        }
        cap
    }

    /// The inflight that `gain` aims for (`Inflight`, `bbr_inflight`).
    pub(super) fn inflight(&self, bw: u64, gain: Gain) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// Bytes in the network when the next packet departs (`bbr_packets_in_net_at_edt`): the
    /// pacer is the caller's, so the departure is now; while accelerating, the departing
    /// packet counts.
    pub(super) fn packets_in_net_at_edt(&self, inflight_bytes: u64) -> u64 {
        if self.pacing_gain > Gain::ONE {
            inflight_bytes + self.mss_bytes
        } else {
            inflight_bytes
        }
    }

    /// Paces at startup gain * initial cwnd / RTT, with the first RTT sample or a nominal
    /// 1 ms before one (`InitPacingRate`).
    pub(super) fn init_pacing_rate(&mut self, rtt: Option<Duration>) {
        if rtt.is_some() {
            self.has_seen_rtt = true;
        }
        let (gain, margin) = (self.config.startup_pacing_gain, self.config.pacing_margin_percent);
        self.out.pacing_rate_bytes_per_s =
            pacing::pacing_rate(pacing::initial_bw(self.out.cwnd_bytes, rtt), gain, margin);
    }

    /// Paces at `gain * bw` less the margin; until the pipe is full the rate only goes up
    /// (`SetPacingRateWithGain`).
    pub(super) fn set_pacing_rate(&mut self, bw: u64, gain: Gain) {
        let rate = pacing::pacing_rate(bw, gain, self.config.pacing_margin_percent);
        if self.full_bw_reached || rate > self.out.pacing_rate_bytes_per_s {
            self.out.pacing_rate_bytes_per_s = rate;
        }
    }

    /// Grows the cwnd by what was ACKed toward its target, or snaps it down to the target
    /// once the pipe has been filled (`SetCwnd`).
    pub(super) fn set_cwnd(&mut self, ack: &AckEvent) {
        let acked = ack.newly_acked_bytes;
        if acked > 0 {
            let target = self.quantization_budget(
                self.bdp(self.bw(), self.cwnd_gain) + self.ack_aggregation_cwnd(),
            );
            let mut cwnd = self.out.cwnd_bytes;
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || self.delivered_bytes < self.initial_cwnd_bytes {
                cwnd += acked;
            }
            self.out.cwnd_bytes = cwnd.max(self.cwnd_min_target_bytes());
        }
        if self.mode == Mode::ProbeRtt {
            self.out.cwnd_bytes = self.out.cwnd_bytes.min(self.probe_rtt_cwnd());
        }
    }

    /// Caps the cwnd by the loss-learned bounds of the current phase (`BoundCwndForModel`).
    pub(super) fn bound_cwnd_for_model(&mut self) {
        let cap = match self.mode {
            Mode::ProbeBw(ProbeBwPhase::Cruise) | Mode::ProbeRtt => self.inflight_with_headroom(),
            Mode::ProbeBw(_) => self.inflight_hi_bytes,
            Mode::Startup | Mode::Drain => UNSET,
        };
        let cap = cap.min(self.inflight_lo_bytes).max(self.cwnd_min_target_bytes());
        self.out.cwnd_bytes = self.out.cwnd_bytes.min(cap);
    }

    /// Remembers the last cwnd not cut by recovery or ProbeRTT (`SaveCwnd`).
    pub(super) fn save_cwnd(&mut self) {
        if self.loss.ca_state == CaState::Open && self.mode != Mode::ProbeRtt {
            self.prior_cwnd_bytes = self.out.cwnd_bytes;
        } else {
            self.prior_cwnd_bytes = self.prior_cwnd_bytes.max(self.out.cwnd_bytes);
        }
    }

    /// `RestoreCwnd`.
    pub(super) fn restore_cwnd(&mut self) {
        self.out.cwnd_bytes = self.out.cwnd_bytes.max(self.prior_cwnd_bytes);
    }

    /// A recovery episode (or an RTO) begins: save what an undo would restore, and arm the
    /// undo if the sender was open (`SaveStateUponLoss`, `bbr_ssthresh`, `tcp_init_undo`).
    pub(super) fn save_state_upon_loss(&mut self) {
        self.save_cwnd();
        self.undo_state = None;
        self.undo_bounds = UndoBounds {
            bw_lo: self.bw_lo_bytes_per_s,
            inflight_lo: self.inflight_lo_bytes,
            inflight_hi: self.inflight_hi_bytes,
        };
        self.loss.arm_undo();
    }

    /// Ends a recovery episode (or the RTO's loss state) once the ACK covers a packet sent
    /// after it began (RFC 9002 section 7.3.2), restoring the cwnd saved when it began.
    pub(super) fn update_ca_state(&mut self, ack: &AckEvent) {
        if self.loss.end_episode_if_acked(ack) {
            self.restore_cwnd();
        }
    }

    /// The recovery was spurious: restore the cwnd and the bounds, restart full-pipe
    /// detection, and (v3) resume the probing the loss ended.
    pub(super) fn undo_spurious_loss(&mut self) {
        self.restore_cwnd();
        self.loss_in_round = false;
        self.reset_full_bw();
        let undo = self.undo_bounds;
        self.bw_lo_bytes_per_s = self.bw_lo_bytes_per_s.max(undo.bw_lo);
        self.inflight_lo_bytes = self.inflight_lo_bytes.max(undo.inflight_lo);
        self.inflight_hi_bytes = self.inflight_hi_bytes.max(undo.inflight_hi);
        if self.config.version == Version::V3 {
            match self.undo_state {
                Some(UndoState::Startup) if self.mode != Mode::Startup => {
                    self.full_bw_reached = false;
                    if self.mode != Mode::ProbeRtt {
                        self.mode = Mode::Startup;
                    }
                }
                Some(UndoState::ProbeUp)
                    if !matches!(self.mode, Mode::ProbeBw(ProbeBwPhase::Up) | Mode::ProbeRtt) =>
                {
                    self.start_probe_bw_refill();
                }
                _ => {}
            }
        }
        self.undo_state = None;
    }

    /// Sending resumes with nothing in flight (`HandleRestartFromIdle`): no need to probe,
    /// pace at the estimate; a ProbeRTT may already be over.
    pub(super) fn handle_restart_from_idle(&mut self, now: Instant) {
        self.idle_restart = true;
        self.ack_aggregation.start(now);
        match self.mode {
            Mode::ProbeBw(_) => self.set_pacing_rate(self.bw(), Gain::ONE),
            Mode::ProbeRtt => self.check_probe_rtt_done(now),
            Mode::Startup | Mode::Drain => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{ms, params, Ack, Driver, Network, MSS};
    use super::super::{Bbr2, Mode, ProbeBwPhase, Version, UNSET};
    use crate::cc::{CcPhase, Controller, Counting};

    const RTT: std::time::Duration = ms(100);

    #[test]
    fn pacing_rate_is_gain_times_bw_less_one_percent() {
        let mut d = Driver::new(Bbr2::new(params(), Version::V3));
        // Before any sample: 2.773 * 10 packets / 1 ms.
        let init = d.bbr.pacing_rate_bytes_per_s().unwrap();
        assert_eq!(init, 10 * MSS * 1000 * 710 / 256 * 99 / 100);
        d.clocked(1_000_000, RTT, 100 * MSS, ms(1000));
        d.bbr.mode = Mode::ProbeBw(ProbeBwPhase::Up);
        d.bbr.reset_full_bw(); // as entering UP does, so the probe continues
        d.ack(Ack { bw: Some(1_000_000), ..Ack::default() });
        // 1.25 * 1 MB/s * 0.99.
        assert_eq!(d.bbr.pacing_rate_bytes_per_s(), Some(1_237_500));
    }

    #[test]
    fn cwnd_caps_follow_the_phase() {
        let mut d = Driver::new(Bbr2::new(params(), Version::V3));
        d.clocked(1_000_000, RTT, 100 * MSS, ms(1000));
        d.bbr.inflight_hi_bytes = 150 * MSS;
        d.bbr.inflight_lo_bytes = 130 * MSS;
        d.bbr.out.cwnd_bytes = 300 * MSS;
        let cases = [
            (Mode::ProbeBw(ProbeBwPhase::Up), 130),
            (Mode::ProbeBw(ProbeBwPhase::Cruise), 127), // 150 - 15% = 127.5 -> 127 500 B
            (Mode::Startup, 130),
        ];
        for (mode, pkts) in cases {
            d.bbr.mode = mode;
            d.bbr.out.cwnd_bytes = 300 * MSS;
            d.bbr.bound_cwnd_for_model();
            assert_eq!(d.bbr.out.cwnd_bytes / MSS, pkts, "{mode:?}");
        }
        d.bbr.inflight_lo_bytes = UNSET;
        d.bbr.mode = Mode::Drain;
        d.bbr.out.cwnd_bytes = 300 * MSS;
        d.bbr.bound_cwnd_for_model();
        assert_eq!(d.bbr.out.cwnd_bytes, 300 * MSS, "Drain has no inflight_hi cap");
    }

    #[test]
    fn recovery_restores_the_saved_cwnd_when_it_ends_and_an_rto_restarts_at_one_mss() {
        let mut d = Driver::new(Bbr2::new(params(), Version::V3));
        d.clocked(1_000_000, RTT, 100 * MSS, ms(1000));
        let prior = d.bbr.out.cwnd_bytes;
        let start = d.now;
        d.congestion(start - RTT, MSS, 90 * MSS);
        assert_eq!(d.bbr.metrics().phase, CcPhase::Recovery);
        assert_eq!(d.bbr.prior_cwnd_bytes, prior);
        d.bbr.out.cwnd_bytes = 50 * MSS; // as if a short-term bound had cut it
        d.ack(Ack { sent_at: Some(start + ms(1)), bw: Some(1_000_000), ..Ack::default() });
        assert_ne!(d.bbr.metrics().phase, CcPhase::Recovery);
        assert!(d.bbr.out.cwnd_bytes >= prior, "restored {} >= {prior}", d.bbr.out.cwnd_bytes);

        let rto_at = d.now;
        d.bbr.on_rto(rto_at);
        assert_eq!(d.bbr.out.cwnd_bytes, MSS);
        assert_eq!(d.bbr.metrics().phase, CcPhase::Loss);
        d.ack(Ack { in_flight: 0, ..Ack::default() });
        assert_eq!(d.bbr.out.cwnd_bytes, 4 * MSS, "grows by what is ACKed, at least 4 packets");
        d.ack(Ack { sent_at: Some(rto_at + ms(1)), in_flight: 0, ..Ack::default() });
        assert_eq!(d.bbr.metrics().phase, CcPhase::ProbeBw);
        assert!(d.bbr.out.cwnd_bytes > 4 * MSS);
    }

    #[test]
    fn a_spurious_recovery_restores_the_bounds_and_v3_resumes_the_probe() {
        let mut d = Driver::new(Bbr2::new(params(), Version::V3));
        d.clocked(1_000_000, RTT, 100 * MSS, ms(1000));
        d.bbr.mode = Mode::ProbeBw(ProbeBwPhase::Up);
        d.bbr.bw_probe_samples = true;
        d.congestion(d.now, 5 * MSS, 95 * MSS);
        let a = Ack {
            bw: Some(1_000_000),
            tx_in_flight: Some(100 * MSS),
            rs_lost: 5 * MSS,
            ..Ack::default()
        };
        d.ack(a);
        assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Down));
        assert_eq!(d.bbr.inflight_hi_bytes, 100 * MSS);
        d.bbr.on_spurious_congestion(d.now);
        assert_eq!(d.bbr.inflight_hi_bytes, UNSET, "the cut is undone");
        assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Refill), "probing resumes");
        assert_eq!(d.bbr.metrics().phase, CcPhase::ProbeBw);

        // v2 restores the bounds but stays in DOWN.
        let mut d = Driver::new(Bbr2::new(params(), Version::V2));
        d.clocked(1_000_000, RTT, 100 * MSS, ms(1000));
        d.bbr.mode = Mode::ProbeBw(ProbeBwPhase::Up);
        d.bbr.bw_probe_samples = true;
        d.congestion(d.now, 5 * MSS, 95 * MSS);
        d.ack(a);
        d.bbr.on_spurious_congestion(d.now);
        assert_eq!(d.bbr.inflight_hi_bytes, UNSET);
        assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Down));
    }

    #[test]
    fn a_packet_counted_path_behaves_as_a_byte_counted_one_when_each_packet_is_one_mss() {
        // A byte-counted path of 1000-byte packets through a 1.25 MB/s link, and a
        // packet-counted path of 400-byte packets through a 500 kB/s link: each packet takes
        // 0.8 ms on the wire in both, and the second is charged one MSS per packet. The
        // controller sees the same charged bytes at the same times, so it must decide the
        // same: equal traces, with recovery (50-packet buffer) and ProbeBW exercised.
        let run = |wire_bytes: u64, counting: Counting, rate: u64| {
            let mut net = Network::new(Bbr2::new(params(), Version::V3), rate, ms(40), 50);
            (net.wire_bytes, net.counting) = (wire_bytes, counting);
            let mut trace = Vec::new();
            net.run_for(ms(8000), |n, ack| trace.push((ack.now, n.bbr.metrics())));
            (trace, net.lost_bytes)
        };
        let (bytes, lost) = run(MSS, Counting::Bytes, 1_250_000);
        let (packets, lost_pkts) = run(400, Counting::Packets, 500_000);
        assert_eq!(bytes, packets);
        assert_eq!(lost, lost_pkts);
        assert!(lost > 0, "the small buffer overflowed in Startup");
        assert!(bytes.iter().any(|(_, m)| m.phase == CcPhase::ProbeBw));
        assert!(bytes.iter().any(|(_, m)| m.phase == CcPhase::Recovery));
    }
}
