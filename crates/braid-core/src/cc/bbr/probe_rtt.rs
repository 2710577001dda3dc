//! The min_rtt filter and ProbeRTT (`bbr_update_min_rtt`, `bbr_check_probe_rtt_done`).
//!
//! min_rtt is the lowest RTT sample of the last 10 seconds. If none matched or beat it for
//! that long, the queue BBR keeps may be hiding the true propagation delay, so BBR enters
//! ProbeRTT: the cwnd drops to 4 packets, and once inflight is down there it stays for
//! max(200 ms, one round) to take a clean sample. BBR then restores the cwnd it had and
//! resumes ProbeBW (Startup if the pipe was never filled). Flows sharing a bottleneck tend to
//! synchronise their ProbeRTTs, since each one's dip lets the others measure a new min_rtt.
//! Applications with natural pauses refresh min_rtt on their own and rarely pay the ~2%.

use super::{Bbr, Mode};
use crate::cc::{AckEvent, RateSample};
use crate::time::Instant;

impl Bbr {
    /// Updates the min_rtt filter, and enters, holds or leaves ProbeRTT.
    pub(super) fn update_min_rtt(&mut self, ack: &AckEvent) {
        let now = ack.now;
        let filter_expired = now > self.min_rtt_stamp + self.config.min_rtt_win;
        if let Some(rtt) = ack.rtt {
            if self.min_rtt.is_none_or(|min| rtt <= min) || filter_expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = now;
            }
        }

        let probe_rtt_enabled = !self.config.probe_rtt_mode.is_zero();
        if probe_rtt_enabled && filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt; // dip, drain the queue
            self.save_cwnd(); // to restore on exit
            self.probe_rtt_done_stamp = None;
            self.probe_rtt_app_limited = Some((ack.delivered_bytes, ack.delivered_bytes));
        }

        if self.mode == Mode::ProbeRtt {
            // The kernel marks the connection app-limited here (`tp->app_limited`) so that
            // ProbeRTT's low delivery rates cannot pull the estimate down: extend the range
            // of `delivered` values that mark covers.
            if let Some((_, end)) = &mut self.probe_rtt_app_limited {
                *end = ack.delivered_bytes + ack.in_flight_bytes;
            }
            if self.probe_rtt_done_stamp.is_none()
                && ack.in_flight_bytes <= self.cwnd_min_target_bytes()
            {
                // Inflight reached the minimum: hold it for max(200 ms, one round).
                self.probe_rtt_done_stamp = Some(now + self.config.probe_rtt_mode);
                self.probe_rtt_round_done = false;
                self.next_round_delivered_bytes = ack.delivered_bytes;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now);
                }
            }
        }

        // An idle restart ends once an ACK delivers new data.
        if ack.newly_acked_bytes > 0 {
            self.idle_restart = false;
        }
    }

    /// Leaves ProbeRTT once its hold time has passed, restoring the saved cwnd.
    pub(super) fn check_probe_rtt_done(&mut self, now: Instant) {
        if self.probe_rtt_done_stamp.is_none_or(|done| now <= done) {
            return;
        }
        self.min_rtt_stamp = now; // the sample is fresh: wait a full window for the next
        self.out.cwnd_bytes = self.out.cwnd_bytes.max(self.prior_cwnd_bytes);
        self.reset_mode();
    }

    /// Whether `rs` comes from a packet the kernel's ProbeRTT app-limited mark would cover.
    pub(super) fn in_probe_rtt_app_limited_range(&self, rs: &RateSample) -> bool {
        self.probe_rtt_app_limited
            .is_some_and(|(start, end)| (start..=end).contains(&rs.prior_delivered_bytes))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::harness::{ms, params, Ack, Driver, Network, MSS};
    use super::super::{Bbr, Mode};
    use crate::cc::{CcPhase, Controller};
    use crate::time::Instant;

    #[test]
    fn probe_rtt_after_10s_without_a_new_min_rtt_holds_4_packets_and_restores_cwnd() {
        // 10 Mbit/s, 40 ms; at 2 s the route lengthens to 60 ms, so no sample matches the
        // 40 ms min_rtt any more and it goes stale 10 s after its last refresh.
        let mut net = Network::new(Bbr::new(params()), 1_250_000, ms(40), 1000);
        net.run_for(ms(2000), |_, _| {});
        net.rtt = ms(60);
        let stamp = net.bbr.min_rtt_stamp;
        let old_min_rtt = net.bbr.min_rtt.unwrap();

        let mut cwnd_before = 0;
        let mut entered = None;
        let mut low_inflight_at = None;
        let mut exited = None;
        net.run_for(ms(12_000), |n, ack| {
            let m = n.bbr.metrics();
            match (entered, exited) {
                (None, _) if m.phase == CcPhase::ProbeRtt => entered = Some((ack.now, cwnd_before)),
                (None, _) => cwnd_before = m.cwnd_bytes,
                (Some(_), None) if m.phase == CcPhase::ProbeRtt => {
                    assert_eq!(m.cwnd_bytes, 4 * MSS, "ProbeRTT cwnd");
                    if ack.in_flight_bytes <= 4 * MSS && low_inflight_at.is_none() {
                        low_inflight_at = Some(ack.now);
                    }
                }
                (Some(_), None) => exited = Some((ack.now, m.cwnd_bytes, m.phase)),
                _ => {}
            }
        });
        let (entered_at, prior_cwnd) = entered.expect("entered ProbeRTT");
        let stale_for = entered_at.saturating_since(stamp);
        assert!(
            stale_for > Duration::from_secs(10) && stale_for < Duration::from_millis(10_010),
            "entered {stale_for:?} after the last min_rtt sample"
        );
        let low = low_inflight_at.expect("inflight reached 4 packets");
        let (exited_at, cwnd_after, phase_after) = exited.expect("left ProbeRTT");
        let held = exited_at.saturating_since(low);
        assert!(held > ms(200) && held < ms(300), "held 4 packets for {held:?}");
        assert_eq!(phase_after, CcPhase::ProbeBw);
        assert!(prior_cwnd > 50 * MSS);
        assert!(cwnd_after >= prior_cwnd, "cwnd {cwnd_after} restored to >= {prior_cwnd}");
        let new_min_rtt = net.bbr.min_rtt.unwrap();
        assert!(new_min_rtt > old_min_rtt + ms(19), "min_rtt now {new_min_rtt:?}");
    }

    /// A driver in ProbeBW at 1 MB/s with a 300 ms min_rtt, right at the end of the window.
    fn stale_min_rtt() -> Driver {
        let mut d = Driver::new(Bbr::new(params()));
        d.clocked(1_000_000, ms(300), 200 * MSS, ms(1500));
        assert_eq!(d.bbr.mode, Mode::ProbeBw);
        let expires = d.bbr.min_rtt_stamp + Duration::from_secs(10);
        // Later samples are higher (310 ms) and do not refresh min_rtt.
        while d.now + ms(2) <= expires {
            d.ack(Ack { after: ms(2), rtt: ms(310), in_flight: 200 * MSS, ..Ack::default() });
        }
        assert_eq!(d.bbr.mode, Mode::ProbeBw);
        d
    }

    #[test]
    fn probe_rtt_waits_for_both_200ms_and_a_round() {
        let mut d = stale_min_rtt();
        let prior = d.bbr.out.cwnd_bytes;
        let a = Ack { after: ms(2), rtt: ms(310), ..Ack::default() };
        d.ack(Ack { in_flight: 200 * MSS, ..a });
        assert_eq!(d.bbr.mode, Mode::ProbeRtt, "10 s without a new min_rtt");
        assert_eq!(d.bbr.out.cwnd_bytes, 4 * MSS);
        assert_eq!(d.bbr.prior_cwnd_bytes, prior);

        d.ack(Ack { in_flight: 4 * MSS, ..a });
        let low_at = d.now;
        // 300 ms at 4 packets, but no round has ended: still probing.
        while d.now < low_at + ms(300) {
            d.ack(Ack { after: ms(10), in_flight: 4 * MSS, ..a });
            assert_eq!(d.bbr.mode, Mode::ProbeRtt);
        }
        d.ack(Ack { ends_round: true, bw: Some(1_000_000), in_flight: 4 * MSS, ..a });
        assert_eq!(d.bbr.mode, Mode::ProbeBw, "a round and 200 ms passed");
        assert!(d.bbr.out.cwnd_bytes >= prior, "restored {} >= {prior}", d.bbr.out.cwnd_bytes);

        // The other order: the round ends after 50 ms, the exit waits for 200 ms.
        let mut d = stale_min_rtt();
        d.ack(Ack { in_flight: 200 * MSS, ..a });
        d.ack(Ack { in_flight: 4 * MSS, ..a });
        let low_at = d.now;
        d.ack(Ack {
            after: ms(50),
            ends_round: true,
            bw: Some(1_000_000),
            in_flight: 4 * MSS,
            ..a
        });
        while d.now + ms(10) <= low_at + ms(200) {
            d.ack(Ack { after: ms(10), in_flight: 4 * MSS, ..a });
            assert_eq!(
                d.bbr.mode,
                Mode::ProbeRtt,
                "{:?} at 4 packets",
                d.now.saturating_since(low_at)
            );
        }
        d.ack(Ack { after: ms(10), in_flight: 4 * MSS, ..a });
        assert_eq!(d.bbr.mode, Mode::ProbeBw);
        assert_eq!(d.bbr.min_rtt, Some(ms(310)), "the expired filter took the new sample");
    }

    #[test]
    fn fresh_min_rtt_samples_postpone_probe_rtt() {
        let mut d = Driver::new(Bbr::new(params()));
        for _ in 0..100 {
            // 20 s of 200 ms rounds, each with a sample equal to min_rtt.
            d.round(1_000_000, ms(200), 200 * MSS, false);
            assert_ne!(d.bbr.mode, Mode::ProbeRtt);
        }
        assert!(d.now > Instant::from_nanos(20_000_000_000));
    }

    #[test]
    fn probe_rtt_samples_do_not_drag_the_estimate_down() {
        // Samples from packets sent during ProbeRTT measure a 4-packet flight; the kernel
        // marks them app-limited so they cannot replace the estimate, however long it lasts.
        let mut d = stale_min_rtt();
        let a = Ack { after: ms(2), rtt: ms(310), ..Ack::default() };
        d.ack(Ack { in_flight: 200 * MSS, ..a });
        assert_eq!(d.bbr.mode, Mode::ProbeRtt);
        let bw = d.bbr.bw();
        for _ in 0..20 {
            d.ack(Ack { after: ms(10), in_flight: 4 * MSS, ..a });
            d.ack(Ack { ends_round: true, bw: Some(bw / 20), in_flight: 4 * MSS, ..a });
        }
        assert_eq!(d.bbr.bw(), bw);
        assert!(d.bbr.round_count > 20);
    }

    #[test]
    fn an_idle_restart_skips_probe_rtt_and_refreshes_min_rtt() {
        let mut d = stale_min_rtt();
        // The sender went idle and restarts: nothing in flight before this packet. The first
        // ACK after the min_rtt window expired would enter ProbeRTT, but not while restarting
        // from idle; its sample refreshes the expired filter instead.
        d.bbr.on_sent(d.now, MSS, MSS);
        assert!(d.bbr.idle_restart);
        d.ack(Ack { after: ms(2), rtt: ms(310), in_flight: MSS, ..Ack::default() });
        assert_eq!(d.bbr.mode, Mode::ProbeBw, "no ProbeRTT while restarting from idle");
        assert_eq!((d.bbr.min_rtt, d.bbr.min_rtt_stamp), (Some(ms(310)), d.now));
        assert!(!d.bbr.idle_restart, "the ACK delivered data");
        for _ in 0..100 {
            d.ack(Ack { after: ms(2), rtt: ms(310), in_flight: MSS, ..Ack::default() });
        }
        assert_eq!(d.bbr.mode, Mode::ProbeBw);
    }
}
