//! min_rtt and ProbeRTT (draft "ProbeRTT": `UpdateMinRTT`, `CheckProbeRTT`,
//! `HandleProbeRTT`, `CheckProbeRTTDone`, `ExitProbeRTT`; kernel `bbr_update_min_rtt`,
//! `bbr_check_probe_rtt_done`, `bbr_exit_probe_rtt`).
//!
//! Two min filters run side by side: `probe_rtt_min`, the lowest RTT of the last 5 s, and
//! `min_rtt`, of the last 10 s. When the 5 s filter expires without a fresh sample the
//! queue BBR keeps may hide the propagation delay, so BBR enters ProbeRTT: the cwnd drops to
//! half the estimated BDP (at least 4 packets), and once inflight is down there it stays for
//! max(200 ms, one round). v1 waited 10 s and dropped to 4 packets; halving the BDP drains
//! a queue of up to a BDP while still sending at half rate, and probing every 5 s bounds
//! the cost to about 0.5 * 0.2 / 5 = 2%. The short-term bounds are forgotten on exit, and
//! ProbeBW resumes in CRUISE with a fresh probe wait (Startup if the pipe was never full).

use super::{AckPhase, Bbr2, Mode, RateSample, Version};
use crate::cc::AckEvent;
use crate::time::Instant;

impl Bbr2 {
    /// Updates both min filters, and enters, holds or leaves ProbeRTT.
    pub(super) fn update_min_rtt(&mut self, ack: &AckEvent) {
        let now = ack.now;
        let probe_rtt_expired = now > self.probe_rtt_min_stamp + self.config.probe_rtt_interval;
        if let Some(rtt) = ack.rtt {
            // v2 accepts an equal sample as fresh (`<=`), v3 and the draft only a lower one.
            let lower = match self.config.version {
                Version::V2 => self.probe_rtt_min.is_none_or(|min| rtt <= min),
                Version::V3 => self.probe_rtt_min.is_none_or(|min| rtt < min),
            };
            if lower || probe_rtt_expired {
                self.probe_rtt_min = Some(rtt);
                self.probe_rtt_min_stamp = now;
            }
        }
        let min_rtt_expired = now > self.min_rtt_stamp + self.config.min_rtt_win;
        if let Some(probe_min) = self.probe_rtt_min {
            if self.min_rtt.is_none_or(|min| probe_min <= min) || min_rtt_expired {
                self.min_rtt = Some(probe_min);
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            }
        }

        let enabled = !self.config.probe_rtt_duration.is_zero();
        if enabled && probe_rtt_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round();
            self.probe_rtt_app_limited = Some((ack.delivered_bytes, ack.delivered_bytes));
        }
        if self.mode == Mode::ProbeRtt {
            self.handle_probe_rtt(ack);
        }
        if ack.newly_acked_bytes > 0 {
            self.idle_restart = false;
        }
    }

    /// Holds inflight at the ProbeRTT cwnd for max(200 ms, one round) (`HandleProbeRTT`).
    fn handle_probe_rtt(&mut self, ack: &AckEvent) {
        // The kernel marks the connection app-limited (`MarkConnectionAppLimited`) so that
        // ProbeRTT's low rates cannot lower the estimate: extend the range that mark covers.
        if let Some((_, end)) = &mut self.probe_rtt_app_limited {
            *end = ack.delivered_bytes + ack.in_flight_bytes;
        }
        if self.probe_rtt_done_stamp.is_none() && ack.in_flight_bytes <= self.probe_rtt_cwnd() {
            self.probe_rtt_done_stamp = Some(ack.now + self.config.probe_rtt_duration);
            self.probe_rtt_round_done = false;
            self.start_round();
        } else if self.probe_rtt_done_stamp.is_some() {
            if self.round_start {
                self.probe_rtt_round_done = true;
            }
            if self.probe_rtt_round_done {
                self.check_probe_rtt_done(ack.now);
            }
        }
    }

    /// The ProbeRTT cwnd: half the BDP, at least the minimum cwnd (`ProbeRTTCwnd`).
    pub(super) fn probe_rtt_cwnd(&self) -> u64 {
        self.bdp(self.bw(), self.config.probe_rtt_cwnd_gain).max(self.cwnd_min_target_bytes())
    }

    /// Leaves ProbeRTT once its hold time has passed (`CheckProbeRTTDone`).
    pub(super) fn check_probe_rtt_done(&mut self, now: Instant) {
        if self.probe_rtt_done_stamp.is_none_or(|done| now <= done) {
            return;
        }
        self.probe_rtt_min_stamp = now; // the next ProbeRTT is due 5 s from now
        self.restore_cwnd();
        self.exit_probe_rtt();
    }

    /// Back to ProbeBW (CRUISE, with a fresh probe wait) or Startup (`ExitProbeRTT`).
    fn exit_probe_rtt(&mut self) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.start_probe_bw_down();
            self.start_probe_bw_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// Whether `rs` comes from a packet the ProbeRTT app-limited mark would cover.
    pub(super) fn in_probe_rtt_app_limited_range(&self, rs: &RateSample) -> bool {
        self.probe_rtt_app_limited
            .is_some_and(|(start, end)| (start..=end).contains(&rs.prior_delivered_bytes))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::harness::{ms, params, Ack, Driver, Network, MSS};
    use super::super::{Bbr2, Bbr2Config, Mode, ProbeBwPhase, Version};
    use crate::cc::{CcPhase, Controller};

    /// A driver in ProbeBW at 1 MB/s with a 100 ms min_rtt whose ProbeRTT filter was last
    /// refreshed at `stamp`; later samples are 110 ms.
    fn steady(version: Version) -> (Driver, crate::time::Instant) {
        let mut d = Driver::new(Bbr2::new(params(), version));
        d.clocked(1_000_000, ms(100), 100 * MSS, ms(1000));
        assert!(matches!(d.bbr.mode, Mode::ProbeBw(_)));
        let stamp = d.bbr.probe_rtt_min_stamp;
        (d, stamp)
    }

    #[test]
    fn probe_rtt_after_5s_holds_half_the_bdp_for_200ms_and_a_round() {
        for version in [Version::V2, Version::V3] {
            let (mut d, stamp) = steady(version);
            let prior = d.bbr.out.cwnd_bytes;
            let a = Ack { after: ms(2), rtt: ms(110), bw: Some(1_000_000), ..Ack::default() };
            while d.now + ms(2) <= stamp + Duration::from_secs(5) {
                d.ack(a);
                assert_ne!(d.bbr.mode, Mode::ProbeRtt, "{version:?}: the filter is fresh");
            }
            d.ack(a);
            assert_eq!(d.bbr.mode, Mode::ProbeRtt, "{version:?}: 5 s without a lower RTT");
            assert_eq!(d.bbr.metrics().phase, CcPhase::ProbeRtt);
            // Half of the 100-packet BDP, not v1's 4 packets.
            assert_eq!(d.bbr.out.cwnd_bytes, 50 * MSS);
            assert!(prior > 100 * MSS);

            // Inflight reaches 50 packets: the 200 ms hold starts; a round ends after 50 ms.
            d.ack(Ack { in_flight: 50 * MSS, ..a });
            let low_at = d.now;
            d.ack(Ack { after: ms(50), ends_round: true, in_flight: 50 * MSS, ..a });
            while d.now + ms(10) <= low_at + ms(200) {
                d.ack(Ack { after: ms(10), in_flight: 50 * MSS, ..a });
                assert_eq!(d.bbr.mode, Mode::ProbeRtt);
                assert_eq!(d.bbr.out.cwnd_bytes, 50 * MSS);
            }
            d.ack(Ack { after: ms(10), in_flight: 50 * MSS, ..a });
            assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Cruise), "{version:?}");
            assert!(d.bbr.out.cwnd_bytes >= prior.min(200 * MSS), "cwnd restored");
            assert_eq!(d.bbr.probe_rtt_min, Some(ms(110)), "the expired filter took 110 ms");
        }
    }

    #[test]
    fn probe_rtt_also_waits_for_a_round() {
        let (mut d, stamp) = steady(Version::V3);
        let a = Ack { after: ms(2), rtt: ms(110), bw: Some(1_000_000), ..Ack::default() };
        while d.now <= stamp + Duration::from_secs(5) {
            d.ack(a);
        }
        assert_eq!(d.bbr.mode, Mode::ProbeRtt);
        d.ack(Ack { in_flight: 40 * MSS, ..a });
        for _ in 0..40 {
            d.ack(Ack { after: ms(10), in_flight: 40 * MSS, ..a });
        }
        assert_eq!(d.bbr.mode, Mode::ProbeRtt, "400 ms, but no round ended");
        d.ack(Ack { ends_round: true, in_flight: 40 * MSS, ..a });
        assert_eq!(d.bbr.probe_bw_phase(), Some(ProbeBwPhase::Cruise));
    }

    #[test]
    fn fresh_lower_samples_postpone_probe_rtt() {
        let (mut d, _) = steady(Version::V3);
        // 8 s of samples each 1 us lower than the last: the ProbeRTT filter stays fresh.
        let mut rtt = ms(100);
        for _ in 0..800 {
            rtt -= Duration::from_micros(1);
            d.ack(Ack { after: ms(10), rtt, bw: Some(1_000_000), ..Ack::default() });
            assert_ne!(d.bbr.mode, Mode::ProbeRtt);
        }
    }

    /// ProbeRTT entries over 12 s after the route lengthens from 40 to 60 ms at 2 s, on a
    /// 10 Mbit/s path with a deep buffer, and the smallest ProbeRTT cwnd seen.
    fn route_change(version: Version) -> (Vec<crate::time::Instant>, u64, Bbr2) {
        let mut net = Network::new(Bbr2::new(params(), version), 1_250_000, ms(40), 1000);
        net.run_for(ms(2000), |_, _| {});
        net.rtt = ms(60);
        let (mut entered, mut min_cwnd, mut prev) = (Vec::new(), u64::MAX, CcPhase::Startup);
        net.run_for(ms(12_000), |n, ack| {
            let m = n.bbr.metrics();
            if m.phase == CcPhase::ProbeRtt {
                assert!(m.cwnd_bytes <= n.bbr.probe_rtt_cwnd());
                min_cwnd = min_cwnd.min(m.cwnd_bytes);
                if prev != CcPhase::ProbeRtt {
                    entered.push(ack.now);
                }
            }
            prev = m.phase;
        });
        (entered, min_cwnd, net.bbr)
    }

    #[test]
    fn probe_rtt_in_a_network_every_5s_at_half_the_bdp() {
        // v3 refreshes its ProbeRTT filter only with a strictly lower RTT, so a busy flow
        // probes every 5 s plus the ProbeRTT itself (>= 200 ms).
        let (entered, min_cwnd, cc) = route_change(Version::V3);
        assert!(entered.len() >= 2, "{entered:?}");
        for w in entered.windows(2) {
            let gap = w[1].saturating_since(w[0]);
            assert!(
                gap > Duration::from_millis(5200) && gap < Duration::from_millis(5600),
                "{gap:?}"
            );
        }
        // Half of a BDP of 1.25 MB/s * 40 ms (min_rtt before the route change) = 25 packets
        // at the least, not v1's 4.
        assert!(min_cwnd >= 25 * MSS, "{min_cwnd}");
        assert!(cc.min_rtt.unwrap() >= ms(60), "the 40 ms min_rtt expired");

        // v2 also takes an equal sample as fresh: the 40 ms samples stop at the route
        // change, so ProbeRTT comes 5 s later; after it, the queue drained in each DOWN
        // (pacing 0.75) keeps meeting the new 60 ms minimum, and no further ProbeRTT is due.
        let (entered, min_cwnd, _) = route_change(Version::V2);
        assert_eq!(entered.len(), 1, "{entered:?}");
        let at = entered[0].as_secs_f64();
        assert!((7.0..7.1).contains(&at), "{at}");
        assert!(min_cwnd >= 25 * MSS, "{min_cwnd}");
    }

    #[test]
    fn disabled_probe_rtt_never_enters() {
        let config = Bbr2Config { probe_rtt_duration: Duration::ZERO, ..Bbr2Config::v3() };
        let mut d = Driver::new(Bbr2::with_config(params(), config));
        d.clocked(1_000_000, ms(100), 100 * MSS, ms(1000));
        for _ in 0..1000 {
            d.ack(Ack { after: ms(10), rtt: ms(110), bw: Some(1_000_000), ..Ack::default() });
            assert_ne!(d.bbr.mode, Mode::ProbeRtt);
        }
    }
}
