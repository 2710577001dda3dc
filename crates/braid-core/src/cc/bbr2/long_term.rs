//! The long-term bound, `inflight_hi` (the draft's `inflight_longterm`; draft "Probing for
//! Bandwidth In ProbeBW" and "ProbeBW Algorithm Details": `IsInflightTooHigh`,
//! `HandleInflightTooHigh`, `AdaptLongTermModel`, `ProbeInflightLongtermUpward`,
//! `RaiseInflightLongtermSlope`, `InflightWithHeadroom`; kernel `bbr_adapt_upper_bounds` and
//! neighbours).
//!
//! `inflight_hi` is the most data BBR will put in flight: unset until a probe loses more than
//! 2% of a flight, then `max(tx_in_flight, 0.7 * target inflight)` of the sample that showed
//! it. Once set it moves up in two ways: any safe sample with a larger `tx_in_flight` raises
//! it to that, and in ProbeBW_UP, while the cwnd is pinned at it, it grows by 1 MSS per
//! `cwnd / 2^k` bytes ACKed in the k-th round of the probe, i.e. by 1, 2, 4, ... MSS per
//! round, so a large new BDP is found in O(log BDP) rounds.

use super::{Bbr2, Mode, ProbeBwPhase, RateSample, UndoState, Version, UNSET};
use crate::cc::bbr_common::gain::Gain;
use crate::cc::AckEvent;

impl Bbr2 {
    /// Whether the sample's flight lost more than the threshold (2%) of its data.
    pub(super) fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        rs.lost_bytes > 0
            && rs.tx_in_flight_bytes > 0
            && u128::from(rs.lost_bytes) * 100
                > u128::from(rs.tx_in_flight_bytes) * u128::from(self.config.loss_thresh_percent)
    }

    /// `x * beta` (0.7), rounded down.
    pub(super) fn beta_of(&self, x: u64) -> u64 {
        let beta = u128::from(self.config.beta_percent);
        u64::try_from(u128::from(x) * beta / 100).unwrap_or(u64::MAX)
    }

    /// How much BBR wants in flight: the BDP with its quantization budget, unless the cwnd is
    /// lower (`TargetInflight`, `bbr_target_inflight`).
    pub(super) fn target_inflight(&self) -> u64 {
        self.inflight(self.bw(), Gain::ONE).min(self.out.cwnd_bytes)
    }

    /// The probe went too far: cut `inflight_hi` once per probe and leave UP
    /// (`HandleInflightTooHigh`, `bbr_handle_inflight_too_high`).
    pub(super) fn handle_inflight_too_high(&mut self, rs: &RateSample) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        // An app-limited flight did not probe the volume the path holds.
        if !rs.is_app_limited {
            self.inflight_hi_bytes =
                rs.tx_in_flight_bytes.max(self.beta_of(self.target_inflight()));
        }
        if self.mode == Mode::ProbeBw(ProbeBwPhase::Up) {
            if self.config.version == Version::V3 {
                self.undo_state = Some(UndoState::ProbeUp);
            }
            self.start_probe_bw_down();
        }
    }

    /// Tracks which ACKs carry probe feedback and adapts `inflight_hi` to them. Returns true
    /// if it decided a state transition (`AdaptLongTermModel`, `bbr_adapt_upper_bounds`).
    pub(super) fn adapt_upper_bounds(&mut self, ack: &AckEvent, rs: Option<&RateSample>) -> bool {
        if self.ack_phase == super::AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = super::AckPhase::ProbeFeedback;
        }
        if self.ack_phase == super::AckPhase::ProbeStopping && self.round_start {
            // The probe's samples have all arrived: now is the best time to forget the
            // previous cycle's bandwidth.
            self.bw_probe_samples = false;
            self.ack_phase = super::AckPhase::Init;
            let in_probe_bw = matches!(self.mode, Mode::ProbeBw(_));
            if in_probe_bw && rs.is_some_and(|rs| !rs.is_app_limited) {
                self.advance_max_bw_filter();
            }
            // The last probe stopped at the old inflight_hi without excess loss: probe again
            // at once, this time holding inflight_hi for a round before going beyond.
            if in_probe_bw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_probe_bw_refill();
                return true;
            }
        }
        let Some(rs) = rs else {
            return false;
        };
        if self.is_inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(rs);
            }
            return false;
        }
        if self.inflight_hi_bytes == UNSET {
            return false;
        }
        // Random loss shaves a little off each cycle; any flight shown safe raises the bound.
        self.inflight_hi_bytes = self.inflight_hi_bytes.max(rs.tx_in_flight_bytes);
        if self.mode == Mode::ProbeBw(ProbeBwPhase::Up) {
            self.probe_inflight_hi_upward(ack);
        }
        false
    }

    /// In UP without excess loss: grow `inflight_hi` while it limits the cwnd.
    fn probe_inflight_hi_upward(&mut self, ack: &AckEvent) {
        if !self.is_cwnd_limited() || self.out.cwnd_bytes < self.inflight_hi_bytes {
            if self.config.version == Version::V2 {
                self.bw_probe_up_acks_bytes = 0; // no credit for unused room
            }
            return;
        }
        self.bw_probe_up_acks_bytes += ack.newly_acked_bytes;
        if self.bw_probe_up_acks_bytes >= self.bw_probe_up_cnt_bytes {
            let delta = self.bw_probe_up_acks_bytes / self.bw_probe_up_cnt_bytes;
            self.bw_probe_up_acks_bytes -= delta * self.bw_probe_up_cnt_bytes;
            self.inflight_hi_bytes = self.inflight_hi_bytes.saturating_add(delta * self.mss_bytes);
        }
        if self.round_start {
            self.raise_inflight_hi_slope();
        }
    }

    /// Doubles the growth of `inflight_hi` for the next round: 1 MSS per `cwnd / 2^k` ACKed.
    pub(super) fn raise_inflight_hi_slope(&mut self) {
        let growth_this_round = 1u64 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt_bytes = (self.out.cwnd_bytes / growth_this_round).max(self.mss_bytes);
    }

    /// `inflight_hi` less the headroom left for other flows: 15% of it, at least one MSS,
    /// and never below the minimum cwnd (`InflightWithHeadroom`, `bbr_inflight_with_headroom`).
    pub(super) fn inflight_with_headroom(&self) -> u64 {
        if self.inflight_hi_bytes == UNSET {
            return UNSET;
        }
        let hi = self.inflight_hi_bytes;
        let headroom = (u128::from(hi) * u128::from(self.config.headroom_percent) / 100) as u64;
        hi.saturating_sub(headroom.max(self.mss_bytes)).max(self.cwnd_min_target_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{ms, params, Ack, Driver, MSS};
    use super::super::{Bbr2, Bbr2Config, Mode, ProbeBwPhase, Version, UNSET};

    /// A driver in ProbeBW_UP at 1 MB/s and 100 ms (BDP 100 packets), receiving probe
    /// feedback, cwnd 150 packets.
    fn probing(version: Version) -> Driver {
        probing_with(Bbr2Config::for_version(version))
    }

    fn probing_with(config: Bbr2Config) -> Driver {
        let mut d = Driver::new(Bbr2::with_config(params(), config));
        d.clocked(1_000_000, ms(100), 100 * MSS, ms(1000));
        assert!(d.bbr.full_bw_reached);
        d.bbr.mode = Mode::ProbeBw(ProbeBwPhase::Up);
        d.bbr.bw_probe_samples = true;
        d.bbr.out.cwnd_bytes = 150 * MSS;
        // As `start_probe_bw_up` leaves them: a fresh plateau detector and phase clock.
        d.bbr.reset_full_bw();
        d.bbr.cycle_stamp = d.now;
        d
    }

    #[test]
    fn more_than_2pct_loss_cuts_inflight_hi_to_beta_times_target_inflight() {
        for version in [Version::V2, Version::V3] {
            let mut d = probing(version);
            // A flight of 100 packets lost 3 (3% > 2%). Target inflight = min(BDP 100 packets
            // (above the 4-packet floor) + 2 in UP, cwnd 150) = 102 packets; 0.7 * 102 000
            // = 71 400 bytes, below the 100 000 the flight carried: inflight_hi = 100 000.
            d.ack(Ack {
                bw: Some(1_000_000),
                tx_in_flight: Some(100 * MSS),
                rs_lost: 3 * MSS,
                ..Ack::default()
            });
            assert_eq!(d.bbr.inflight_hi_bytes, 100 * MSS, "{version:?}");
            assert_eq!(d.bbr.mode, Mode::ProbeBw(ProbeBwPhase::Down), "the probe stops");
            assert!(d.bbr.prev_probe_too_high);

            // A flight of 50 packets that lost 2 (4%): 0.7 * target = 71 400 bytes is more
            // than the 50 000 in flight, so inflight_hi = 71 400.
            let mut d = probing(version);
            d.ack(Ack {
                bw: Some(1_000_000),
                tx_in_flight: Some(50 * MSS),
                rs_lost: 2 * MSS,
                ..Ack::default()
            });
            assert_eq!(d.bbr.inflight_hi_bytes, 71_400, "{version:?}");
        }
    }

    #[test]
    fn loss_at_or_below_2pct_leaves_inflight_hi_alone() {
        let mut d = probing(Version::V3);
        // 2 of 100 packets is exactly 2%: not above the threshold. 1 of 100 is below.
        for lost in [2 * MSS, MSS] {
            d.ack(Ack {
                bw: Some(1_000_000),
                tx_in_flight: Some(100 * MSS),
                rs_lost: lost,
                ..Ack::default()
            });
            assert_eq!(d.bbr.inflight_hi_bytes, UNSET);
            assert_eq!(d.bbr.mode, Mode::ProbeBw(ProbeBwPhase::Up));
        }
        // Just over: 2 001 of 100 000 bytes.
        d.ack(Ack {
            bw: Some(1_000_000),
            tx_in_flight: Some(100 * MSS),
            rs_lost: 2 * MSS + 1,
            ..Ack::default()
        });
        assert_eq!(d.bbr.inflight_hi_bytes, 100 * MSS);
    }

    #[test]
    fn a_tuned_loss_threshold_of_5pct_tolerates_3pct_loss() {
        // 3 of 100 packets lost while probing: above the default 2% (inflight_hi is cut and
        // the probe stops), below a tuned 5% (nothing happens).
        let three_pct = Ack {
            bw: Some(1_000_000),
            tx_in_flight: Some(100 * MSS),
            rs_lost: 3 * MSS,
            ..Ack::default()
        };
        for version in [Version::V2, Version::V3] {
            let mut default = probing(version);
            default.ack(three_pct);
            assert_eq!(default.bbr.inflight_hi_bytes, 100 * MSS, "{version:?}");

            let tuned = Bbr2Config { loss_thresh_percent: 5, ..Bbr2Config::for_version(version) };
            let mut tuned = probing_with(tuned);
            tuned.ack(three_pct);
            assert_eq!(tuned.bbr.inflight_hi_bytes, UNSET, "{version:?}");
            assert_eq!(tuned.bbr.mode, Mode::ProbeBw(ProbeBwPhase::Up), "{version:?}");
            // 6 of 100 is above 5%.
            tuned.ack(Ack { rs_lost: 6 * MSS, ..three_pct });
            assert_eq!(tuned.bbr.inflight_hi_bytes, 100 * MSS, "{version:?}");
        }
    }

    #[test]
    fn only_one_cut_per_probe_and_only_from_probe_samples() {
        let mut d = probing(Version::V3);
        d.bbr.bw_probe_samples = false;
        d.ack(Ack {
            bw: Some(1_000_000),
            tx_in_flight: Some(100 * MSS),
            rs_lost: 10 * MSS,
            ..Ack::default()
        });
        assert_eq!(d.bbr.inflight_hi_bytes, UNSET, "not a sample of probing data");
        d.bbr.bw_probe_samples = true;
        d.ack(Ack {
            bw: Some(1_000_000),
            tx_in_flight: Some(100 * MSS),
            rs_lost: 10 * MSS,
            ..Ack::default()
        });
        assert_eq!(d.bbr.inflight_hi_bytes, 100 * MSS);
        d.ack(Ack {
            bw: Some(1_000_000),
            tx_in_flight: Some(80 * MSS),
            rs_lost: 10 * MSS,
            ..Ack::default()
        });
        assert_eq!(d.bbr.inflight_hi_bytes, 100 * MSS, "the probe already reacted");
    }

    #[test]
    fn up_grows_inflight_hi_by_1_2_4_packets_per_round_while_cwnd_limited() {
        let mut d = probing(Version::V3);
        d.bbr.inflight_hi_bytes = 100 * MSS;
        d.bbr.bw_probe_up_rounds = 0;
        d.bbr.raise_inflight_hi_slope();
        // Round 1: growth 1 packet per cwnd (150 packets) ACKed.
        assert_eq!(d.bbr.bw_probe_up_cnt_bytes, 150 * MSS);
        let mut hi = Vec::new();
        for _ in 0..3 {
            // One round of 300 one-packet ACKs, the cwnd pinned at inflight_hi and full.
            for i in 0..300 {
                d.bbr.out.cwnd_bytes = d.bbr.inflight_hi_bytes;
                d.bbr.cwnd_limited_this_round = true;
                let a = Ack { bw: Some(1_000_000), tx_in_flight: Some(90 * MSS), ..Ack::default() };
                d.ack(Ack { ends_round: i == 299, ..a });
            }
            hi.push(d.bbr.inflight_hi_bytes / MSS);
        }
        // Round 1: 300 ACKed / 150 per packet = +2 -> 102. The round end doubles the slope:
        // cnt = 102 / 2 = 51 -> round 2 adds 300/51 = 5 (plus carry) -> 107 or so; round 3
        // cnt = cwnd / 4. The growth per round must at least double.
        let g1 = hi[0] - 100;
        let g2 = hi[1] - hi[0];
        let g3 = hi[2] - hi[1];
        assert_eq!(g1, 2, "{hi:?}");
        assert!(g2 >= 2 * g1 && g3 >= 2 * g2 - 1, "growth per round {g1}, {g2}, {g3}");
    }

    #[test]
    fn no_growth_when_the_cwnd_is_not_the_limit() {
        let mut d = probing(Version::V3);
        d.bbr.inflight_hi_bytes = 200 * MSS;
        d.bbr.raise_inflight_hi_slope();
        for _ in 0..500 {
            d.ack(Ack { bw: Some(1_000_000), tx_in_flight: Some(90 * MSS), ..Ack::default() });
        }
        assert_eq!(d.bbr.inflight_hi_bytes, 200 * MSS, "cwnd below inflight_hi");
    }

    #[test]
    fn v2_forgets_growth_credit_earned_before_a_pause_v3_keeps_it() {
        // cnt = 150 packets per MSS of growth. 100 packets ACKed while cwnd-limited, a round
        // without being cwnd-limited, then 50 more: v3 reaches 150 and grows inflight_hi by
        // one packet; v2 dropped the first 100 and does not grow.
        for (version, growth) in [(Version::V3, MSS), (Version::V2, 0)] {
            let mut d = probing(version);
            d.bbr.inflight_hi_bytes = 100 * MSS;
            d.bbr.bw_probe_up_rounds = 0;
            d.bbr.raise_inflight_hi_slope();
            let a = Ack { bw: Some(1_000_000), tx_in_flight: Some(90 * MSS), ..Ack::default() };
            let ack_limited = |d: &mut Driver, n: usize, limited: bool| {
                for _ in 0..n {
                    d.bbr.out.cwnd_bytes = d.bbr.inflight_hi_bytes;
                    (d.bbr.cwnd_limited_this_round, d.bbr.cwnd_limited_last_round) =
                        (limited, limited);
                    d.ack(a);
                }
            };
            ack_limited(&mut d, 100, true);
            assert_eq!(d.bbr.inflight_hi_bytes, 100 * MSS);
            ack_limited(&mut d, 1, false);
            ack_limited(&mut d, 50, true);
            assert_eq!(d.bbr.inflight_hi_bytes, 100 * MSS + growth, "{version:?}");
        }
    }

    #[test]
    fn headroom_leaves_15pct_of_inflight_hi_free() {
        let mut bbr = Bbr2::new(params(), Version::V3);
        assert_eq!(bbr.inflight_with_headroom(), UNSET);
        bbr.inflight_hi_bytes = 100 * MSS; // 15% = 15 000 -> 85 000
        assert_eq!(bbr.inflight_with_headroom(), 85 * MSS);
        bbr.inflight_hi_bytes = 5 * MSS; // 15% = 750 < 1 MSS -> 4 000, the floor of 4 MSS
        assert_eq!(bbr.inflight_with_headroom(), 4 * MSS);
    }
}
