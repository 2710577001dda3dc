//! From the model to the controls: BDP, cwnd target, pacing rate (`bbr_bdp`,
//! `bbr_quantization_budget`, `bbr_set_cwnd`, `bbr_set_pacing_rate`), and the cwnd's reaction
//! to loss (`bbr_set_cwnd_to_recover_or_restore`).

use std::time::Duration;

use super::{Bbr, CaState, Gain, Mode};
use crate::cc::bbr_common::pacing;
use crate::cc::AckEvent;

impl Bbr {
    /// Paces at high_gain * cwnd / RTT, with the first RTT sample or a nominal 1 ms before
    /// one (`bbr_init_pacing_rate_from_rtt`).
    pub(super) fn init_pacing_rate_from_rtt(&mut self, rtt: Option<Duration>) {
        self.has_seen_rtt |= rtt.is_some();
        let bw = pacing::initial_bw(self.out.cwnd_bytes, rtt);
        let margin = self.config.pacing_margin_percent;
        self.out.pacing_rate_bytes_per_s = pacing::pacing_rate(bw, self.config.high_gain, margin);
    }

    /// Paces at `gain * bw` less the margin; until the pipe is full the rate only goes up,
    /// so an early low estimate cannot slow Startup (`bbr_set_pacing_rate`).
    pub(super) fn set_pacing_rate(&mut self, bw: u64, gain: Gain) {
        let rate = pacing::pacing_rate(bw, gain, self.config.pacing_margin_percent);
        if self.full_bw_reached || rate > self.out.pacing_rate_bytes_per_s {
            self.out.pacing_rate_bytes_per_s = rate;
        }
    }

    /// `gain * bw * min_rtt`; the initial window before any RTT sample (`bbr_bdp`).
    pub(super) fn bdp(&self, bw: u64, gain: Gain) -> u64 {
        self.min_rtt.map_or(self.initial_cwnd_bytes, |min_rtt| pacing::bdp(bw, min_rtt, gain))
    }

    /// Packets per send quantum at the current pacing rate (`bbr_tso_segs_goal`,
    /// [`super::SendQuantum`]).
    fn tso_segs_goal(&self) -> u64 {
        self.config.send_quantum.segs(self.out.pacing_rate_bytes_per_s, self.mss_bytes)
    }

    /// Adds room for the send quanta queued at both ends (3 of them), rounds up to an even
    /// number of packets for delayed ACKs, and adds 2 packets in the probe phase so that even
    /// a tiny BDP is probed above (`bbr_quantization_budget`).
    pub(super) fn quantization_budget(&self, cwnd_bytes: u64) -> u64 {
        let mss = self.mss_bytes;
        let pkts = (cwnd_bytes + 3 * self.tso_segs_goal() * mss).div_ceil(mss);
        let mut cwnd = ((pkts + 1) & !1) * mss;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2 * mss;
        }
        cwnd
    }

    /// The inflight that `gain` aims for (`bbr_inflight`).
    pub(super) fn inflight(&self, bw: u64, gain: Gain) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// Bytes in the network when the next packet departs (`bbr_packets_in_net_at_edt`). The
    /// caller's pacer decides departures, so the departure is taken to be now; while probing
    /// the departing quantum counts, to see whether it pushes inflight over the target.
    pub(super) fn packets_in_net_at_edt(&self, inflight_bytes: u64) -> u64 {
        if self.pacing_gain > Gain::ONE {
            inflight_bytes + self.tso_segs_goal() * self.mss_bytes
        } else {
            inflight_bytes
        }
    }

    /// Moves the cwnd toward `gain * BDP` (`bbr_set_cwnd`): grow by what was acknowledged
    /// (slow start), or snap down to the target once the pipe was filled.
    pub(super) fn set_cwnd(&mut self, ack: &AckEvent, bw: u64, gain: Gain) {
        let acked = ack.newly_acked_bytes;
        let min_cwnd = self.cwnd_min_target_bytes();
        if acked > 0 {
            let (mut cwnd, conserving) = self.set_cwnd_to_recover_or_restore(ack);
            if !conserving {
                let target =
                    self.quantization_budget(self.bdp(bw, gain) + self.ack_aggregation_cwnd());
                if self.full_bw_reached {
                    // Only cut the cwnd once the pipe has been filled.
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || self.delivered_bytes < self.initial_cwnd_bytes {
                    cwnd += acked;
                }
                cwnd = cwnd.max(min_cwnd);
            }
            self.out.cwnd_bytes = cwnd;
        }
        if self.mode == Mode::ProbeRtt {
            // Drain the queue to refresh min_rtt.
            self.out.cwnd_bytes = self.out.cwnd_bytes.min(min_cwnd);
        }
    }

    /// The loss reactions. An ACK for P packets should release at most 2P: losses are first
    /// deducted here, then `set_cwnd` slow-starts back toward the target. In the first round
    /// of recovery, packet conservation: send one packet per packet delivered. When recovery
    /// (or the RTO's loss state) ends, restore the cwnd saved when it began; `set_cwnd` still
    /// caps it at the target. Returns the cwnd and whether packet conservation set it.
    fn set_cwnd_to_recover_or_restore(&mut self, ack: &AckEvent) -> (u64, bool) {
        let (state, prev) = (self.loss.ca_state, self.loss.prev_ca_state);
        let acked = ack.newly_acked_bytes;
        let mut cwnd = self.out.cwnd_bytes;
        if ack.newly_lost_bytes > 0 {
            cwnd = cwnd.saturating_sub(ack.newly_lost_bytes).max(self.mss_bytes);
        }

        if state == CaState::Recovery && prev != CaState::Recovery {
            // First round of recovery: conserve packets, and time the round from now.
            self.packet_conservation = true;
            self.next_round_delivered_bytes = ack.delivered_bytes;
            // Cut any unused cwnd (application-limited or deferred sending).
            cwnd = ack.in_flight_bytes + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            // Recovery is over: restore the cwnd from before it.
            cwnd = cwnd.max(self.prior_cwnd_bytes);
            self.packet_conservation = false;
        }
        self.loss.prev_ca_state = state;

        if self.packet_conservation {
            return (cwnd.max(ack.in_flight_bytes + acked), true);
        }
        (cwnd, false)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::super::harness::{ms, params, Ack, Driver, Network, MSS};
    use super::super::{Bbr, BbrConfig, Gain, Mode, SendQuantum};
    use crate::cc::{CcPhase, CongestionEvent, Controller};

    const RTT: std::time::Duration = ms(100);

    /// A driver in ProbeBW at 1 MB/s and 100 ms (BDP 100 packets), without the
    /// ACK-aggregation allowance so that targets are exact.
    fn probe_bw() -> Driver {
        let config = BbrConfig { extra_acked_gain: Gain(0), ..BbrConfig::default() };
        let mut d = Driver::new(Bbr::with_config(params(), config));
        d.clocked(1_000_000, RTT, 100 * MSS, ms(600));
        assert_eq!(d.bbr.mode, Mode::ProbeBw);
        d
    }

    #[test]
    fn pacing_rate_is_gain_times_bw_less_one_percent() {
        let mut net = Network::new(Bbr::new(params()), 1_250_000, ms(40), 1000);
        net.run_for(ms(1500), |_, _| {});
        let mut gains = BTreeSet::new();
        net.run_for(ms(1000), |n, _| {
            let gain = n.bbr.pacing_gain.as_f64();
            let bw = n.bbr.metrics().bw_estimate_bytes_per_s.unwrap() as f64;
            let pacing = n.bbr.pacing_rate_bytes_per_s().unwrap() as f64;
            assert!((pacing - gain * bw * 0.99).abs() <= 1.0, "{pacing} at gain {gain}, bw {bw}");
            gains.insert(n.bbr.pacing_gain.0);
        });
        assert_eq!(gains, BTreeSet::from([192, 256, 320]), "0.75, 1 and 1.25 were all used");
    }

    #[test]
    fn initial_pacing_rate_is_high_gain_times_initial_cwnd_over_rtt() {
        let bbr = Bbr::new(params());
        // Before any RTT sample: 10 packets per nominal 1 ms.
        let expected = 10.0 * MSS as f64 / 0.001 * 2.885 * 0.99;
        let pacing = bbr.pacing_rate_bytes_per_s().unwrap() as f64;
        assert!((pacing / expected - 1.0).abs() < 0.001, "{pacing} vs {expected}");
        // The first RTT sample (100 ms, no rate sample yet) replaces the 1 ms.
        let mut d = Driver::new(bbr);
        d.ack(Ack { acked: 0, rtt: RTT, in_flight: 10 * MSS, ..Ack::default() });
        let pacing = d.bbr.pacing_rate_bytes_per_s().unwrap() as f64;
        assert!((pacing / (expected / 100.0) - 1.0).abs() < 0.001, "{pacing}");
        // And in Startup a lower estimate never lowers the rate.
        d.round(1_000, RTT, 10 * MSS, false);
        assert_eq!(d.bbr.pacing_rate_bytes_per_s().unwrap() as f64, pacing);
    }

    #[test]
    fn probe_bw_cwnd_is_twice_the_bdp_plus_the_quantization_budget() {
        let mut d = probe_bw();
        // 2 * 100 + 3 = 203 -> 204 packets, + 2 in the probe phase. (150 packets in flight
        // let the probe phase end: it waits for 1.25 BDP.)
        let mut seen = BTreeSet::new();
        for _ in 0..2000 {
            d.ack(Ack { bw: Some(1_000_000), in_flight: 150 * MSS, ..Ack::default() });
            let extra = if d.bbr.cycle_idx == 0 { 2 * MSS } else { 0 };
            assert!(d.bbr.out.cwnd_bytes <= 204 * MSS + extra);
            seen.insert(d.bbr.out.cwnd_bytes);
        }
        assert!(seen.contains(&(204 * MSS)), "{seen:?}");
        assert!(seen.contains(&(206 * MSS)), "probe phase adds 2 packets: {seen:?}");
    }

    #[test]
    fn a_linux_sender_provisions_three_tso_bursts_where_braid_provisions_three_packets() {
        // At ~1 MB/s a burst (pacing_rate >> 10, ~1 kB) is under one MSS, so Linux's
        // `bbr_tso_segs_goal` gives its floor of 2 segments: 2 * 100 + 3 * 2 = 206 packets
        // (even), + 2 in the probe phase, where one packet per release gives 204.
        let config = BbrConfig {
            extra_acked_gain: Gain(0),
            send_quantum: SendQuantum::LinuxTso,
            ..BbrConfig::default()
        };
        let mut d = Driver::new(Bbr::with_config(params(), config));
        d.clocked(1_000_000, RTT, 100 * MSS, ms(600));
        assert_eq!(d.bbr.mode, Mode::ProbeBw);
        let mut seen = BTreeSet::new();
        for _ in 0..2000 {
            d.ack(Ack { bw: Some(1_000_000), in_flight: 150 * MSS, ..Ack::default() });
            let extra = if d.bbr.cycle_idx == 0 { 2 * MSS } else { 0 };
            assert!(d.bbr.out.cwnd_bytes <= 206 * MSS + extra);
            seen.insert(d.bbr.out.cwnd_bytes);
        }
        assert!(seen.contains(&(206 * MSS)) && seen.contains(&(208 * MSS)), "{seen:?}");
    }

    #[test]
    fn recovery_conserves_packets_for_one_round_then_restores_the_prior_cwnd() {
        let mut d = probe_bw();
        let prior = d.bbr.out.cwnd_bytes;
        let start = d.now;
        d.congestion(start - RTT, MSS, 50 * MSS);
        assert_eq!(d.bbr.metrics().phase, CcPhase::Recovery);
        // First ACK: cwnd = inflight + acked, whatever the cwnd was.
        let before = Ack { after: ms(0), lost: MSS, in_flight: 50 * MSS, ..Ack::default() };
        d.ack(before);
        assert_eq!(d.bbr.out.cwnd_bytes, 51 * MSS, "packet conservation");
        // During the round: one packet out per packet delivered, no growth.
        let before = Ack { lost: 0, after: ms(1), ..before };
        d.ack(Ack { in_flight: 45 * MSS, ..before });
        assert_eq!(d.bbr.out.cwnd_bytes, 51 * MSS, "cwnd does not shrink with inflight");
        d.ack(Ack { in_flight: 60 * MSS, ..before });
        assert_eq!(d.bbr.out.cwnd_bytes, 61 * MSS, "but follows inflight + acked up");
        d.ack(Ack { in_flight: 60 * MSS, ..before });
        assert_eq!(d.bbr.out.cwnd_bytes, 61 * MSS);
        // A packet sent after recovery began ends the round: slow start toward the target.
        d.ack(Ack { bw: Some(1_000_000), ends_round: true, in_flight: 40 * MSS, ..before });
        assert!(!d.bbr.packet_conservation);
        assert_eq!(d.bbr.out.cwnd_bytes, 62 * MSS, "grows by what was acked");
        assert_eq!(d.bbr.metrics().phase, CcPhase::Recovery);
        // Recovery ends when a packet sent after it began is acknowledged.
        d.ack(Ack { sent_at: Some(start + ms(1)), in_flight: 40 * MSS, ..before });
        assert_eq!(d.bbr.metrics().phase, CcPhase::ProbeBw);
        let target = d.bbr.inflight(d.bbr.bw(), d.bbr.cwnd_gain);
        assert_eq!(d.bbr.out.cwnd_bytes, (prior + MSS).min(target), "restored");
    }

    #[test]
    fn losses_of_packets_sent_before_recovery_do_not_start_another() {
        let mut d = probe_bw();
        let start = d.now;
        let loss = |sent| CongestionEvent {
            now: start,
            largest_lost_sent_time: sent,
            lost_bytes: MSS,
            in_flight_bytes: 50 * MSS,
        };
        d.bbr.on_congestion_event(&loss(start - RTT));
        d.ack(Ack { after: ms(0), in_flight: 50 * MSS, ..Ack::default() });
        d.ack(Ack { sent_at: Some(start + ms(1)), in_flight: 50 * MSS, ..Ack::default() });
        assert_eq!(d.bbr.metrics().phase, CcPhase::ProbeBw);
        let cwnd = d.bbr.out.cwnd_bytes;
        d.bbr.on_congestion_event(&loss(start - ms(1)));
        assert_eq!(d.bbr.metrics().phase, CcPhase::ProbeBw, "same episode");
        d.bbr.on_congestion_event(&loss(start + ms(1)));
        assert_eq!(d.bbr.metrics().phase, CcPhase::Recovery, "a packet sent after it");
        assert_eq!(d.bbr.prior_cwnd_bytes, cwnd);
    }

    #[test]
    fn rto_restarts_from_one_packet_and_restores_the_prior_cwnd_after() {
        let mut d = probe_bw();
        let prior = d.bbr.out.cwnd_bytes;
        let rto_at = d.now;
        d.bbr.on_rto(rto_at);
        assert_eq!(d.bbr.out.cwnd_bytes, MSS);
        assert_eq!(d.bbr.metrics().phase, CcPhase::Loss);
        // ACKs of packets sent before the RTO: grow by what is acked, at least 4 packets.
        let old = Ack { in_flight: 0, ..Ack::default() };
        d.ack(old);
        assert_eq!(d.bbr.out.cwnd_bytes, 4 * MSS);
        d.ack(old);
        assert_eq!(d.bbr.out.cwnd_bytes, 5 * MSS);
        d.ack(Ack { acked: 3 * MSS, ..old });
        assert_eq!(d.bbr.out.cwnd_bytes, 8 * MSS);
        assert_eq!(d.bbr.metrics().phase, CcPhase::Loss);
        // The first ACK of a packet sent after the RTO ends the loss state.
        d.ack(Ack { sent_at: Some(rto_at + ms(1)), ..old });
        assert_eq!(d.bbr.metrics().phase, CcPhase::ProbeBw);
        let target = d.bbr.inflight(d.bbr.bw(), d.bbr.cwnd_gain);
        assert_eq!(d.bbr.out.cwnd_bytes, (prior + MSS).min(target), "restored");
    }
}
