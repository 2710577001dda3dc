//! Leaving Startup: full-pipe detection (`bbr_check_full_bw_reached`) and Drain
//! (`bbr_check_drain`).
//!
//! Startup paces at 2/ln2 times the estimate, which doubles the delivery rate each round while
//! the pipe has room. Once three consecutive non-app-limited rounds fail to raise the estimate
//! by 25%, the pipe is judged full: Drain then paces at ln2/2 to empty the queue Startup
//! built, which takes about one round, and hands over to ProbeBW as soon as the inflight
//! fits the estimated BDP.

use super::{Bbr, Gain, Mode};
use crate::cc::{AckEvent, RateSample};

impl Bbr {
    /// Counts rounds without 25% bandwidth growth; three of them mean the pipe is full.
    pub(super) fn check_full_bw_reached(&mut self, rs: Option<&RateSample>) {
        // App-limited rounds say nothing about the pipe; rounds start only on valid samples.
        let app_limited = rs.is_none_or(|rs| rs.is_app_limited);
        if self.full_bw_reached || !self.round_start || app_limited {
            return;
        }
        let max_bw = self.max_bw();
        if max_bw >= self.config.full_bw_thresh.apply(self.full_bw_bytes_per_s) {
            // Still growing: remember this level and start counting again.
            self.full_bw_bytes_per_s = max_bw;
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= self.config.full_bw_cnt;
    }

    /// Enters Drain when the pipe is full, and leaves it once the queue is drained.
    pub(super) fn check_drain(&mut self, ack: &AckEvent) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.out.ssthresh_bytes = Some(self.inflight(self.max_bw(), Gain::ONE));
        }
        // The same ACK may already show a small enough inflight.
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(ack.in_flight_bytes)
                <= self.inflight(self.max_bw(), Gain::ONE)
        {
            self.reset_probe_bw_mode();
        }
    }

    /// Back to Startup if the pipe was never filled, else to ProbeBW (`bbr_reset_mode`).
    pub(super) fn reset_mode(&mut self) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.mode = Mode::Startup;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::{BBR_DRAIN_GAIN, BBR_HIGH_GAIN};
    use super::super::harness::{ms, params, Ack, Driver, Network, MSS};
    use super::super::{Bbr, Mode};
    use crate::cc::{CcPhase, Controller};

    const RTT: std::time::Duration = ms(100);
    /// Far above any BDP here, so Drain cannot end on the ACK that starts it.
    const BIG_FLIGHT: u64 = 10_000 * MSS;

    #[test]
    fn startup_paces_and_sizes_cwnd_with_high_gain() {
        let mut d = Driver::new(Bbr::new(params()));
        assert_eq!(d.bbr.metrics().phase, CcPhase::Startup);
        assert_eq!((d.bbr.pacing_gain, d.bbr.cwnd_gain), (BBR_HIGH_GAIN, BBR_HIGH_GAIN));

        d.round(1_000_000, RTT, 10 * MSS, false);
        let pacing = d.bbr.pacing_rate_bytes_per_s().unwrap() as f64;
        let expected = 2.0 / std::f64::consts::LN_2 * 1_000_000.0 * 0.99;
        assert!((pacing / expected - 1.0).abs() < 0.001, "pacing {pacing} vs {expected}");

        // The cwnd grows by what is acknowledged up to high_gain * BDP plus the budget:
        // 2.886 * 100 packets -> 288.7, + 3 -> 292 packets (even), and no further.
        for _ in 0..1000 {
            d.ack(Ack { bw: Some(1_000_000), in_flight: 10 * MSS, ..Ack::default() });
        }
        assert_eq!(d.bbr.mode, Mode::Startup);
        assert_eq!(d.bbr.cwnd_bytes(), 292 * MSS);
    }

    #[test]
    fn leaves_startup_after_three_rounds_without_25pct_growth() {
        let mut d = Driver::new(Bbr::new(params()));
        for bw in [100_000, 200_000, 400_000, 800_000] {
            d.round(bw, RTT, BIG_FLIGHT, false);
            assert_eq!(d.bbr.full_bw_cnt, 0, "doubling is growth");
        }
        // 800k -> needs 1M to count as growth; 999k does not.
        for (i, bw) in [900_000, 950_000].into_iter().enumerate() {
            d.round(bw, RTT, BIG_FLIGHT, false);
            assert_eq!(d.bbr.full_bw_cnt, i as u32 + 1);
            assert_eq!(d.bbr.mode, Mode::Startup, "only {} flat rounds", i + 1);
        }
        d.round(999_000, RTT, BIG_FLIGHT, false);
        assert!(d.bbr.full_bw_reached);
        assert_eq!(d.bbr.mode, Mode::Drain, "third flat round");
        assert_eq!(d.bbr.pacing_gain, BBR_DRAIN_GAIN);
        assert_eq!(d.bbr.cwnd_gain, BBR_HIGH_GAIN, "Drain keeps Startup's cwnd gain");
    }

    #[test]
    fn a_25pct_step_restarts_the_count() {
        let mut d = Driver::new(Bbr::new(params()));
        d.round(800_000, RTT, BIG_FLIGHT, false);
        d.round(800_000, RTT, BIG_FLIGHT, false);
        d.round(800_000, RTT, BIG_FLIGHT, false);
        assert_eq!(d.bbr.full_bw_cnt, 2);
        d.round(1_000_000, RTT, BIG_FLIGHT, false); // exactly 1.25x
        assert_eq!(d.bbr.full_bw_cnt, 0);
        assert_eq!(d.bbr.full_bw_bytes_per_s, 1_000_000);
        d.round(1_000_000, RTT, BIG_FLIGHT, false);
        d.round(1_000_000, RTT, BIG_FLIGHT, false);
        assert_eq!(d.bbr.mode, Mode::Startup);
        d.round(1_000_000, RTT, BIG_FLIGHT, false);
        assert_eq!(d.bbr.mode, Mode::Drain);
    }

    #[test]
    fn app_limited_rounds_do_not_count_toward_a_full_pipe() {
        let mut d = Driver::new(Bbr::new(params()));
        d.round(800_000, RTT, BIG_FLIGHT, false);
        for _ in 0..10 {
            d.round(800_000, RTT, BIG_FLIGHT, true);
        }
        assert_eq!(d.bbr.full_bw_cnt, 0);
        assert_eq!(d.bbr.mode, Mode::Startup);
    }

    #[test]
    fn drain_ends_when_inflight_fits_the_bdp() {
        let mut d = Driver::new(Bbr::new(params()));
        for _ in 0..4 {
            d.round(1_000_000, RTT, BIG_FLIGHT, false);
        }
        assert_eq!(d.bbr.mode, Mode::Drain);
        assert_eq!(d.bbr.out.ssthresh_bytes, Some(104 * MSS));
        // BDP = 1 MB/s * 100 ms = 100 packets; + 3 for quantization -> 104 packets (even).
        for pkts in (105..=140).rev() {
            d.ack(Ack { in_flight: pkts * MSS, ..Ack::default() });
            assert_eq!(d.bbr.mode, Mode::Drain, "{pkts} packets in flight");
            let pacing = d.bbr.pacing_rate_bytes_per_s().unwrap();
            assert_eq!(pacing, 1_000_000 * 88 / 256 * 99 / 100, "drain gain 88/256, less 1%");
        }
        d.ack(Ack { in_flight: 104 * MSS, ..Ack::default() });
        assert_eq!(d.bbr.mode, Mode::ProbeBw);
    }

    #[test]
    fn startup_fills_the_pipe_and_drain_empties_the_queue() {
        // 10 Mbit/s, 40 ms, a buffer of 4 BDPs: no loss. BDP ~ 51 packets; Startup needs
        // ~log2(51 / 10) + 1 rounds to reach it, then 3 flat rounds.
        let mut net = Network::new(Bbr::new(params()), 1_250_000, ms(40), 200);
        let mut drain_at = None;
        let mut probe_bw_at = None;
        let mut queue_at_probe_bw = 0;
        net.run_for(ms(2000), |n, ack| {
            let mode = n.bbr.mode;
            if mode == Mode::Drain && drain_at.is_none() {
                drain_at = Some(ack.now);
            }
            if mode == Mode::ProbeBw && probe_bw_at.is_none() {
                probe_bw_at = Some(ack.now);
                queue_at_probe_bw = n.queue_bytes();
            }
        });
        assert_eq!(net.lost_bytes, 0);
        let drain_at = drain_at.expect("Startup ended").as_secs_f64();
        assert!((0.2..0.6).contains(&drain_at), "Startup ended at {drain_at} s");
        let probe_bw_at = probe_bw_at.expect("Drain ended").as_secs_f64();
        assert!(probe_bw_at - drain_at < 0.2, "Drain took {} s", probe_bw_at - drain_at);
        assert!(queue_at_probe_bw <= 5 * MSS, "queue {queue_at_probe_bw} when Drain ended");
        let bw = net.bbr.metrics().bw_estimate_bytes_per_s.unwrap();
        assert!(bw.abs_diff(1_250_000) < 1_250_000 / 100, "bw estimate {bw}");
    }
}
