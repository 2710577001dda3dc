//! The ProbeBW cycle DOWN -> CRUISE -> REFILL -> UP (draft "ProbeBW" and "ProbeBW Algorithm
//! Details": `UpdateProbeBWCyclePhase`, `StartProbeBW_*`, `IsTimeToProbeBW`,
//! `IsTimeToCruise`, `IsTimeToGoDown`, `PickProbeWait`; kernel `bbr_update_cycle_phase`).
//!
//! - DOWN (pacing 0.9, v2 0.75): drain the queue the probe built, until inflight is at most
//!   the BDP and leaves 15% of `inflight_hi` free.
//! - CRUISE (1.0): hold there, reacting to loss through the short-term bounds, until it is
//!   time to probe: after a wall-clock wait drawn uniformly from [2 s, 3 s), or after
//!   `min(63, BDP in packets)` rounds (62 or 63 with the random start), whichever is first.
//!   The round bound probes as often as a Reno flow of the same BDP would regrow its window,
//!   so BBR does not starve Reno/CUBIC on small-BDP paths.
//! - REFILL (1.0, one round): forget the short-term bounds and fill the pipe, so that the
//!   first losses of the probe reflect a full pipe, not a half-empty one.
//! - UP (1.25, cwnd gain 2.25; v2 2.0): probe until the bandwidth plateaus (v2: one min_rtt
//!   with inflight >= 1.25 BDP), the loss rate exceeds 2% (`long_term`), or, after a probe
//!   that went too high, inflight reaches the old `inflight_hi`.

use std::time::Duration;

use super::{AckPhase, Bbr2, Mode, ProbeBwPhase, RateSample, Version, UNSET};
use crate::cc::bbr_common::gain::Gain;
use crate::cc::AckEvent;

/// One step of splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014): a small, well-mixed, seedable sequence.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Bbr2 {
    /// Advances the ProbeBW state machine on an ACK (`UpdateProbeBWCyclePhase`).
    pub(super) fn update_probe_bw_cycle_phase(&mut self, ack: &AckEvent, rs: Option<&RateSample>) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(ack, rs) {
            return; // already decided a transition
        }
        let Mode::ProbeBw(phase) = self.mode else {
            return;
        };
        let inflight = self.packets_in_net_at_edt(ack.prior_in_flight_bytes);
        match phase {
            ProbeBwPhase::Down => {
                if !self.check_time_to_probe_bw() && self.is_time_to_cruise(inflight) {
                    self.start_probe_bw_cruise();
                }
            }
            ProbeBwPhase::Cruise => {
                self.check_time_to_probe_bw();
            }
            ProbeBwPhase::Refill => {
                // After a round of REFILL the samples reflect a full pipe: probe.
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_probe_bw_up();
                }
            }
            ProbeBwPhase::Up => {
                if self.is_time_to_go_down(inflight) {
                    self.prev_probe_too_high = false; // no excess loss (yet)
                    self.start_probe_bw_down();
                }
            }
        }
    }

    /// Starts a cycle: drain, and schedule the next probe (`StartProbeBW_DOWN`).
    pub(super) fn start_probe_bw_down(&mut self) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt_bytes = UNSET; // inflight_hi stops growing
        self.pick_probe_wait();
        self.cycle_stamp = self.now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round();
        self.mode = Mode::ProbeBw(ProbeBwPhase::Down);
    }

    /// Cruises, within whatever `inflight_hi` allows (`StartProbeBW_CRUISE`).
    pub(super) fn start_probe_bw_cruise(&mut self) {
        if self.inflight_lo_bytes != UNSET {
            self.inflight_lo_bytes = self.inflight_lo_bytes.min(self.inflight_hi_bytes);
        }
        self.mode = Mode::ProbeBw(ProbeBwPhase::Cruise);
    }

    /// Refills the pipe for one round before probing (`StartProbeBW_REFILL`).
    pub(super) fn start_probe_bw_refill(&mut self) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acks_bytes = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.mode = Mode::ProbeBw(ProbeBwPhase::Refill);
    }

    /// Probes: pace at 1.25 and let `inflight_hi` grow (`StartProbeBW_UP`).
    fn start_probe_bw_up(&mut self) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.cycle_stamp = self.now;
        if self.config.version == Version::V3 {
            // The plateau detector ends this probe; it starts from the current rate.
            self.reset_full_bw();
            self.full_bw_bytes_per_s = self.sample_bw_bytes_per_s;
        }
        self.mode = Mode::ProbeBw(ProbeBwPhase::Up);
        self.raise_inflight_hi_slope();
    }

    /// Draws the wait before the next probe: 2 s + [0, 1 s) of wall clock, and a round
    /// count starting at 0 or 1 (`PickProbeWait`, `bbr_pick_probe_wait`).
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = splitmix64(&mut self.rng) % super::config::BW_PROBE_RAND_ROUNDS;
        let rand_ns = u64::try_from(self.config.probe_wait_rand.as_nanos()).unwrap_or(u64::MAX);
        let jitter = if rand_ns == 0 { 0 } else { splitmix64(&mut self.rng) % rand_ns };
        self.probe_wait = self.config.probe_wait_base + Duration::from_nanos(jitter);
    }

    /// Whether it is time to probe, by wall clock or by the Reno-coexistence round count;
    /// if so, starts REFILL (`IsTimeToProbeBW`, `bbr_check_time_to_probe_bw`).
    fn check_time_to_probe_bw(&mut self) -> bool {
        let waited = self.now > self.cycle_stamp + self.probe_wait;
        if waited || self.is_reno_coexistence_probe_time() {
            self.start_probe_bw_refill();
            return true;
        }
        false
    }

    /// A Reno flow with this BDP regrows its window in about BDP (in packets) rounds; probe at
    /// least that often, and at least every 63 rounds (`IsRenoCoexistenceProbeTime`).
    fn is_reno_coexistence_probe_time(&self) -> bool {
        let reno_rounds = self.target_inflight() / self.mss_bytes;
        self.rounds_since_probe >= reno_rounds.min(self.config.bw_probe_max_rounds)
    }

    /// DOWN is done once inflight leaves the headroom and fits the BDP (`IsTimeToCruise`).
    fn is_time_to_cruise(&self, inflight: u64) -> bool {
        inflight <= self.inflight_with_headroom()
            && inflight <= self.inflight(self.max_bw(), Gain::ONE)
    }

    /// Whether UP is done (`IsTimeToGoDown`; v2: `bbr2_update_cycle_phase`'s UP case).
    fn is_time_to_go_down(&mut self, inflight: u64) -> bool {
        // The last probe went too high: stop as soon as inflight is back at that level.
        if self.prev_probe_too_high && inflight >= self.inflight_hi_bytes {
            self.stopped_risky_probe = true;
            return true;
        }
        match self.config.version {
            Version::V2 => {
                let probed_a_round =
                    self.min_rtt.is_some_and(|min_rtt| self.now > self.cycle_stamp + min_rtt);
                let target = self.inflight(self.max_bw(), self.config.probe_up_pacing_gain);
                probed_a_round && inflight >= target
            }
            Version::V3 => {
                if self.is_cwnd_limited() && self.out.cwnd_bytes >= self.inflight_hi_bytes {
                    // inflight_hi, not the path, limits growth: restart the plateau count.
                    self.reset_full_bw();
                    self.full_bw_bytes_per_s = self.sample_bw_bytes_per_s;
                    false
                } else {
                    self.full_bw_now
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::time::Duration;

    use super::super::harness::{ms, params, Ack, Driver, Network, MSS};
    use super::super::{Bbr2, Bbr2Config, Mode, ProbeBwPhase, Version, UNSET};
    use crate::cc::Controller;

    fn phase(b: &Bbr2) -> Option<ProbeBwPhase> {
        b.probe_bw_phase()
    }

    #[test]
    fn probe_bw_visits_down_cruise_refill_up_in_order_with_the_source_gains() {
        // 10 Mbit/s, 40 ms, a deep buffer: no loss, so every cycle runs in full.
        for version in [Version::V2, Version::V3] {
            let config = Bbr2Config::for_version(version);
            let mut net =
                Network::new(Bbr2::with_config(params(), config), 1_250_000, ms(40), 1000);
            net.run_for(ms(1500), |_, _| {});
            // The phase after each ACK; None is ProbeRTT, which may interrupt any phase.
            let mut seq: Vec<Option<ProbeBwPhase>> = Vec::new();
            let mut gains = BTreeSet::new();
            net.run_for(ms(12_000), |n, _| {
                let p = phase(&n.bbr);
                if seq.last() != Some(&p) {
                    seq.push(p);
                }
                if let Some(p) = p {
                    gains.insert((format!("{p:?}"), n.bbr.pacing_gain.0, n.bbr.cwnd_gain.0));
                }
            });
            let next = |p| match p {
                ProbeBwPhase::Down => ProbeBwPhase::Cruise,
                ProbeBwPhase::Cruise => ProbeBwPhase::Refill,
                ProbeBwPhase::Refill => ProbeBwPhase::Up,
                ProbeBwPhase::Up => ProbeBwPhase::Down,
            };
            for w in seq.windows(2) {
                match (w[0], w[1]) {
                    (Some(a), Some(b)) => assert_eq!(b, next(a), "{version:?}: {seq:?}"),
                    // ProbeRTT resumes in CRUISE (through a DOWN that starts the clock).
                    (None, b) => assert_eq!(b, Some(ProbeBwPhase::Cruise), "{version:?}"),
                    (Some(_), None) => {}
                }
            }
            let cycles = seq.iter().filter(|p| **p == Some(ProbeBwPhase::Up)).count();
            assert!(cycles >= 3, "{version:?}: at least three probes in 12 s: {seq:?}");
            // Gains (pacing, cwnd) per phase, in 1/256: DOWN 0.9 (v2 0.75), CRUISE and
            // REFILL 1.0, UP 1.25; cwnd 2.0, in UP 2.25 (v2 2.0).
            let (down, up_cwnd) = if version == Version::V3 { (230, 576) } else { (192, 512) };
            let expected: BTreeSet<_> = [
                ("Down".to_string(), down, 512),
                ("Cruise".to_string(), 256, 512),
                ("Refill".to_string(), 256, 512),
                ("Up".to_string(), 320, up_cwnd),
            ]
            .into_iter()
            .collect();
            assert_eq!(gains, expected, "{version:?}");
        }
    }

    /// A driver in ProbeBW_CRUISE at 1 MB/s and 100 ms with `inflight_hi` set.
    fn cruising(version: Version) -> Driver {
        let mut d = Driver::new(Bbr2::new(params(), version));
        d.clocked(1_000_000, ms(100), 100 * MSS, ms(1000));
        assert!(matches!(d.bbr.mode, Mode::ProbeBw(_)));
        d.bbr.start_probe_bw_down();
        d.bbr.start_probe_bw_cruise();
        d
    }

    #[test]
    fn cruise_keeps_15pct_of_inflight_hi_free() {
        let mut d = cruising(Version::V3);
        d.bbr.inflight_hi_bytes = 120 * MSS;
        d.ack(Ack { bw: Some(1_000_000), ..Ack::default() });
        assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Cruise));
        // 120 000 - 15% = 102 000: the cwnd cap, though 2 * BDP is 200 000.
        assert_eq!(d.bbr.cwnd_bytes(), 102 * MSS);
        // In DOWN, REFILL and UP the cap is inflight_hi itself.
        d.bbr.mode = Mode::ProbeBw(ProbeBwPhase::Down);
        for _ in 0..30 {
            let a = Ack { bw: Some(1_000_000), in_flight: 130 * MSS, ..Ack::default() };
            d.ack(Ack { tx_in_flight: Some(100 * MSS), ..a });
        }
        assert_eq!(d.bbr.cwnd_bytes(), 120 * MSS);
    }

    #[test]
    fn down_waits_for_the_headroom_before_cruising() {
        let mut d = cruising(Version::V3);
        d.bbr.start_probe_bw_down();
        d.bbr.inflight_hi_bytes = 100 * MSS; // headroom target 85 packets; BDP 100
        for pkts in [99, 90, 86] {
            d.ack(Ack { bw: Some(1_000_000), in_flight: pkts * MSS - MSS, ..Ack::default() });
            assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Down), "{pkts}");
        }
        // prior_in_flight = in_flight + acked = 85 packets: cruise.
        d.ack(Ack { bw: Some(1_000_000), in_flight: 84 * MSS, ..Ack::default() });
        assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Cruise));
    }

    #[test]
    fn probe_wait_is_2_to_3_s_seeded_and_starts_a_refill() {
        let waits = |seed| {
            let config = Bbr2Config { seed, ..Bbr2Config::v3() };
            let mut bbr = Bbr2::with_config(params(), config);
            (0..200)
                .map(|_| {
                    bbr.pick_probe_wait();
                    (bbr.probe_wait, bbr.rounds_since_probe)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(waits(3), waits(3), "same seed, same draws");
        assert_ne!(waits(3), waits(4));
        let w = waits(3);
        assert!(w.iter().all(|(t, _)| *t >= Duration::from_secs(2) && *t < Duration::from_secs(3)));
        assert!(w.iter().any(|(t, _)| *t < Duration::from_millis(2100)));
        assert!(w.iter().any(|(t, _)| *t > Duration::from_millis(2900)));
        let rounds: BTreeSet<u64> = w.iter().map(|(_, r)| *r).collect();
        assert_eq!(rounds, BTreeSet::from([0, 1]));

        // On a path with a large BDP (1 000 packets) the Reno bound (63 rounds of 100 ms)
        // is later than the wall clock: CRUISE lasts probe_wait.
        let mut d = Driver::new(Bbr2::new(params(), Version::V3));
        d.clocked(10_000_000, ms(100), 1000 * MSS, ms(1000));
        d.bbr.start_probe_bw_down();
        d.bbr.start_probe_bw_cruise();
        let (start, wait) = (d.now, d.bbr.probe_wait);
        while d.bbr.probe_bw_phase() == Some(ProbeBwPhase::Cruise) {
            d.ack(Ack {
                after: ms(10),
                bw: Some(10_000_000),
                in_flight: 900 * MSS,
                ..Ack::default()
            });
        }
        assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Refill));
        let waited = d.now.saturating_since(start);
        assert!(waited > wait && waited <= wait + ms(10), "{waited:?} vs {wait:?}");
        assert_eq!(d.bbr.bw_lo_bytes_per_s, UNSET, "REFILL forgets the short-term model");
    }

    #[test]
    fn small_bdp_probes_on_the_reno_time_scale() {
        // BDP 20 packets (200 kB/s * 100 ms): probe after about 20 rounds, not 2-3 s.
        let mut d = Driver::new(Bbr2::new(params(), Version::V3));
        d.clocked(200_000, ms(100), 20 * MSS, ms(2000));
        d.bbr.start_probe_bw_down();
        d.bbr.start_probe_bw_cruise();
        let start_rounds = d.bbr.rounds_since_probe;
        let mut rounds = 0;
        while d.bbr.probe_bw_phase() == Some(ProbeBwPhase::Cruise) {
            d.round(200_000, ms(100), 20 * MSS, false);
            rounds += 1;
        }
        // Target inflight = min(BDP 20 packets, cwnd) = 20; counting from 0 or 1.
        assert_eq!(rounds + start_rounds, 20);
        assert!(d.now.saturating_since(d.bbr.cycle_stamp) < Duration::from_secs(2));
    }

    #[test]
    fn v3_up_ends_on_a_bandwidth_plateau_v2_after_a_min_rtt_at_125pct() {
        // v3: three rounds without 25% growth end UP.
        let mut d = cruising(Version::V3);
        d.bbr.start_probe_bw_refill();
        d.round(1_000_000, ms(100), 100 * MSS, false);
        assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Up));
        for i in 0..3 {
            assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Up), "round {i}");
            d.round(1_000_000, ms(100), 100 * MSS, false);
        }
        assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Down));

        // v2: after min_rtt with inflight >= 1.25 * BDP + 2 packets = 127 packets.
        let mut d = cruising(Version::V2);
        d.bbr.start_probe_bw_refill();
        d.round(1_000_000, ms(100), 100 * MSS, false);
        assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Up));
        for _ in 0..150 {
            d.ack(Ack { bw: Some(1_000_000), in_flight: 110 * MSS, ..Ack::default() });
        }
        assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Up), "inflight short of 1.25 BDP");
        d.ack(Ack { bw: Some(1_000_000), in_flight: 126 * MSS, ..Ack::default() });
        assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Down));
    }

    #[test]
    fn after_a_probe_that_went_too_high_up_stops_at_the_old_inflight_hi() {
        let mut d = cruising(Version::V3);
        d.bbr.inflight_hi_bytes = 110 * MSS;
        d.bbr.prev_probe_too_high = true;
        d.bbr.start_probe_bw_refill();
        d.round(1_000_000, ms(100), 100 * MSS, false);
        assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Up));
        // In the network at the next departure: in flight + the ACKed packet + the departing
        // one = 109, then 110 packets.
        let a = Ack { bw: Some(1_000_000), tx_in_flight: Some(100 * MSS), ..Ack::default() };
        d.ack(Ack { in_flight: 107 * MSS, ..a });
        assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Up));
        d.ack(Ack { in_flight: 108 * MSS, ..a });
        assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Down));
        assert!(d.bbr.stopped_risky_probe);
        // A round of feedback without excess loss: probe again at once (REFILL).
        d.round(1_000_000, ms(100), 100 * MSS, false);
        assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Refill));
    }
}
