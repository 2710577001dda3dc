//! Leaving Startup and Drain: the full-pipe detector (draft "Exiting Acceleration Based on
//! Bandwidth Plateau", `CheckFullBWReached`; kernel `bbr_check_full_bw_reached`), the loss
//! exit (draft "Exiting Startup Based on Packet Loss"; `bbr_check_loss_too_high_in_startup`)
//! and Drain (`CheckDrainDone`, `bbr_check_drain`).
//!
//! The pipe is full when three non-app-limited rounds in a row fail to raise the bandwidth
//! by 25%. v2 looks at `max_bw` at round starts in Startup only (as v1 does); v3 looks at
//! each round's own rate sample and also reruns the detector in ProbeBW_UP, where
//! `full_bw_now` ends the probe. Independently, Startup ends when a round spent in fast
//! recovery had many loss events and lost more than 2% of its flight: then the queue has
//! overflowed and waiting for a plateau would only lose more.

use super::{Bbr2, Mode, UndoState, Version};
use crate::cc::bbr_common::gain::Gain;
use crate::cc::{AckEvent, RateSample};

/// Rounds after which Drain ends even if inflight is still above the BDP (draft
/// `CheckDrainDone`, v3 only): Startup may have overestimated `bw`.
const DRAIN_MAX_ROUNDS: u64 = 3;

impl Bbr2 {
    /// Restarts the plateau detector (`ResetFullBW`, `bbr_reset_full_bw`).
    pub(super) fn reset_full_bw(&mut self) {
        self.full_bw_bytes_per_s = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// Counts rounds without 25% bandwidth growth; enough of them mean the pipe is full.
    pub(super) fn check_full_bw_reached(&mut self, rs: Option<&RateSample>) {
        let app_limited = rs.is_none_or(|rs| rs.is_app_limited);
        let thresh = self.config.full_bw_thresh;
        match self.config.version {
            Version::V2 => {
                if self.full_bw_reached || !self.round_start || app_limited {
                    return;
                }
                let max_bw = self.max_bw();
                if max_bw >= thresh.apply(self.full_bw_bytes_per_s) {
                    self.full_bw_bytes_per_s = max_bw;
                    self.full_bw_cnt = 0;
                    return;
                }
                self.full_bw_cnt += 1;
                self.full_bw_reached = self.full_bw_cnt >= self.config.full_bw_cnt;
            }
            Version::V3 => {
                if self.full_bw_now || !self.round_start || app_limited {
                    return;
                }
                let bw = self.sample_bw_bytes_per_s;
                if bw >= thresh.apply(self.full_bw_bytes_per_s) {
                    // Still growing: take this level as the new baseline.
                    self.reset_full_bw();
                    self.full_bw_bytes_per_s = bw;
                    return;
                }
                self.full_bw_cnt += 1;
                self.full_bw_now = self.full_bw_cnt >= self.config.full_bw_cnt;
                self.full_bw_reached |= self.full_bw_now;
            }
        }
    }

    /// Ends Startup at the end of a lossy recovery round: at least `full_loss_cnt` loss
    /// events and a loss rate above the threshold.
    pub(super) fn check_startup_high_loss(&mut self, rs: Option<&RateSample>) {
        if self.full_bw_reached {
            return;
        }
        let too_high = rs.is_some_and(|rs| self.is_inflight_too_high(rs));
        if self.config.full_loss_cnt > 0
            && self.loss_round_start
            && self.loss.ca_state == super::CaState::Recovery
            && self.loss_events_in_round >= self.config.full_loss_cnt
            && too_high
        {
            self.handle_queue_too_high_in_startup();
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// The pipe is full and the queue overflowed: bound inflight by the BDP, or (v3) by the
    /// data the last round delivered if that was more (`bbr_handle_queue_too_high_in_startup`).
    fn handle_queue_too_high_in_startup(&mut self) {
        self.full_bw_reached = true;
        let bdp = self.inflight(self.max_bw(), Gain::ONE);
        self.inflight_hi_bytes = match self.config.version {
            Version::V2 => bdp,
            Version::V3 => {
                self.undo_state = Some(UndoState::Startup);
                bdp.max(self.inflight_latest_bytes)
            }
        };
    }

    /// Enters Drain when the pipe is full, and ProbeBW once the queue is drained.
    pub(super) fn check_drain(&mut self, ack: &AckEvent) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.out.ssthresh_bytes = Some(self.inflight(self.max_bw(), Gain::ONE));
            self.reset_congestion_signals();
            self.drain_start_round = self.round_count;
        }
        if self.mode != Mode::Drain {
            return;
        }
        let drained = self.packets_in_net_at_edt(ack.in_flight_bytes)
            <= self.inflight(self.max_bw(), Gain::ONE);
        let timed_out = self.config.version == Version::V3
            && self.round_count > self.drain_start_round + DRAIN_MAX_ROUNDS;
        if drained || timed_out {
            self.start_probe_bw_down();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{ms, params, Ack, Driver, MSS};
    use super::super::{Bbr2, Bbr2Config, Mode, ProbeBwPhase, Version};
    use crate::cc::bbr_common::gain::Gain;
    use crate::cc::{CcPhase, Controller};

    const RTT: std::time::Duration = ms(100);
    /// Far above any BDP here, so Drain cannot end on the ACK that starts it.
    const BIG_FLIGHT: u64 = 10_000 * MSS;

    #[test]
    fn startup_gains_by_version() {
        let v3 = Bbr2::new(params(), Version::V3);
        assert_eq!((v3.pacing_gain.0, v3.cwnd_gain.0), (710, 512), "2.77 and 2.0");
        let v2 = Bbr2::new(params(), Version::V2);
        assert_eq!((v2.pacing_gain.0, v2.cwnd_gain.0), (739, 739), "2.89 and 2.89");
        // The cwnd target in Startup is cwnd_gain * BDP: 1 MB/s * 100 ms = 100 packets.
        // (Without the ACK-aggregation allowance, which the first big ACK would raise.)
        for (version, target_pkts) in [(Version::V3, 200), (Version::V2, 289)] {
            let config =
                Bbr2Config { extra_acked_gain: Gain(0), ..Bbr2Config::for_version(version) };
            let mut d = Driver::new(Bbr2::with_config(params(), config));
            d.round(1_000_000, RTT, 10 * MSS, false);
            for _ in 0..1000 {
                d.ack(Ack { bw: Some(1_000_000), in_flight: 10 * MSS, ..Ack::default() });
            }
            assert_eq!(d.bbr.mode, Mode::Startup);
            // Grows by what is ACKed up to the target; 2.887 * 100 000 = 288 671 rounds up.
            let cwnd = d.bbr.cwnd_bytes();
            assert!(cwnd.div_ceil(MSS) == target_pkts, "{version:?}: cwnd {cwnd}");
        }
    }

    #[test]
    fn leaves_startup_after_three_rounds_without_25pct_growth() {
        for version in [Version::V2, Version::V3] {
            let mut d = Driver::new(Bbr2::new(params(), version));
            for bw in [100_000, 200_000, 400_000, 800_000] {
                d.round(bw, RTT, BIG_FLIGHT, false);
                assert_eq!(d.bbr.full_bw_cnt, 0, "doubling is growth");
            }
            // 800 000 -> growth needs 1 000 000; 999 000 is not.
            for (i, bw) in [900_000, 950_000].into_iter().enumerate() {
                d.round(bw, RTT, BIG_FLIGHT, false);
                assert_eq!(d.bbr.full_bw_cnt, i as u32 + 1, "{version:?}");
                assert_eq!(d.bbr.mode, Mode::Startup);
            }
            d.round(999_000, RTT, BIG_FLIGHT, false);
            assert!(d.bbr.full_bw_reached);
            assert_eq!(d.bbr.mode, Mode::Drain, "{version:?}: third flat round");
            assert_eq!(d.bbr.pacing_gain, d.bbr.config.drain_pacing_gain);
            assert_eq!(d.bbr.metrics().phase, CcPhase::Drain);
        }
    }

    #[test]
    fn app_limited_rounds_do_not_fill_the_pipe() {
        let mut d = Driver::new(Bbr2::new(params(), Version::V3));
        d.round(800_000, RTT, BIG_FLIGHT, false);
        for _ in 0..10 {
            d.round(800_000, RTT, BIG_FLIGHT, true);
        }
        assert_eq!(d.bbr.mode, Mode::Startup);
    }

    /// Startup at 1 MB/s, then a recovery round with `events` loss events and a sample that
    /// lost `lost` of a 100-packet flight, ended by a round-ending ACK.
    fn lossy_startup_round(version: Version, events: u32, lost: u64) -> Driver {
        let mut d = Driver::new(Bbr2::new(params(), version));
        d.round(500_000, RTT, BIG_FLIGHT, false);
        d.round(1_000_000, RTT, BIG_FLIGHT, false);
        for _ in 0..events {
            d.loss(MSS);
            d.ack(Ack { bw: Some(1_000_000), lost: MSS, in_flight: 100 * MSS, ..Ack::default() });
        }
        d.ack(Ack {
            bw: Some(1_000_000),
            ends_round: true,
            in_flight: 100 * MSS,
            tx_in_flight: Some(100 * MSS),
            rs_lost: lost,
            ..Ack::default()
        });
        d
    }

    #[test]
    fn startup_exits_on_excessive_loss_in_a_recovery_round() {
        // v3: 6 loss events and 3% loss end Startup; inflight_hi = max(BDP, inflight_latest).
        let d = lossy_startup_round(Version::V3, 6, 3 * MSS);
        assert!(d.bbr.full_bw_reached, "the bandwidth had not plateaued: only loss says so");
        assert_eq!(d.bbr.mode, Mode::Drain);
        // BDP 100 000 (1 MB/s * 100 ms); latest delivered per sample 100 000 (bw * rtt).
        assert_eq!(d.bbr.inflight_hi_bytes, 100 * MSS);
        // v2 needs 8 events: 6 are not enough, 8 are.
        let d = lossy_startup_round(Version::V2, 6, 3 * MSS);
        assert_eq!(d.bbr.mode, Mode::Startup);
        let d = lossy_startup_round(Version::V2, 8, 3 * MSS);
        assert_eq!(d.bbr.mode, Mode::Drain);
        assert_eq!(d.bbr.inflight_hi_bytes, 100 * MSS);
    }

    #[test]
    fn startup_rides_out_light_or_sparse_loss() {
        // Many events but only 2% of the flight lost: not above the threshold.
        let d = lossy_startup_round(Version::V3, 10, 2 * MSS);
        assert_eq!(d.bbr.mode, Mode::Startup);
        // Heavy loss but only 5 events.
        let d = lossy_startup_round(Version::V3, 5, 10 * MSS);
        assert_eq!(d.bbr.mode, Mode::Startup);
        // A disabled loss exit.
        let config = Bbr2Config { full_loss_cnt: 0, ..Bbr2Config::v3() };
        let mut d = Driver::new(Bbr2::with_config(params(), config));
        d.round(1_000_000, RTT, BIG_FLIGHT, false);
        for _ in 0..10 {
            d.loss(MSS);
        }
        d.ack(Ack { bw: Some(1_000_000), ends_round: true, rs_lost: 50 * MSS, ..Ack::default() });
        assert_eq!(d.bbr.mode, Mode::Startup);
    }

    #[test]
    fn drain_ends_when_inflight_fits_the_bdp_or_v3_after_three_rounds() {
        for version in [Version::V2, Version::V3] {
            let mut d = Driver::new(Bbr2::new(params(), version));
            for _ in 0..4 {
                d.round(1_000_000, RTT, BIG_FLIGHT, false);
            }
            assert_eq!(d.bbr.mode, Mode::Drain);
            // BDP 100 packets; the 4-packet floor does not bind.
            assert_eq!(d.bbr.out.ssthresh_bytes, Some(100 * MSS));
            d.ack(Ack { in_flight: 101 * MSS, ..Ack::default() });
            assert_eq!(d.bbr.mode, Mode::Drain);
            d.ack(Ack { in_flight: 100 * MSS, ..Ack::default() });
            assert_eq!(d.bbr.mode, Mode::ProbeBw(ProbeBwPhase::Down), "{version:?}");
        }
        // Inflight stuck above the BDP: v3 moves on after 3 rounds, v2 waits.
        for (version, expect_probe_bw) in [(Version::V3, true), (Version::V2, false)] {
            let mut d = Driver::new(Bbr2::new(params(), version));
            for _ in 0..4 {
                d.round(1_000_000, RTT, BIG_FLIGHT, false);
            }
            for _ in 0..3 {
                d.round(1_000_000, RTT, BIG_FLIGHT, false);
                assert_eq!(d.bbr.mode, Mode::Drain, "{version:?}");
            }
            d.round(1_000_000, RTT, BIG_FLIGHT, false);
            assert_eq!(matches!(d.bbr.mode, Mode::ProbeBw(_)), expect_probe_bw, "{version:?}");
        }
    }
}
