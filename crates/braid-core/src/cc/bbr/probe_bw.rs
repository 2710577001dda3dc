//! ProbeBW gain cycling (`bbr_update_cycle_phase`).
//!
//! In steady state BBR cycles its pacing gain through eight phases of about one min_rtt each:
//! 1.25 to probe for more bandwidth, 0.75 to drain whatever queue the probe built, then six
//! phases at 1.0 to use the pipe without adding queue. The probe phase lasts until inflight
//! reaches 1.25 BDP (or a loss says it will not fit); the drain phase ends early once
//! inflight is back at the BDP.

use super::config::{BBR_CYCLE_RAND, CYCLE_LEN};
use super::{Bbr, Gain, Mode};
use crate::cc::AckEvent;

/// One step of splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014): a tiny, well-mixed, seedable sequence.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Bbr {
    /// Whether the current phase is over (`bbr_is_next_cycle_phase`).
    fn is_next_cycle_phase(&self, ack: &AckEvent) -> bool {
        let elapsed = self.delivered_time.saturating_since(self.cycle_stamp);
        let is_full_length = self.min_rtt.is_some_and(|min_rtt| elapsed > min_rtt);

        // At 1.0 the phase is purely time-based.
        if self.pacing_gain == Gain::ONE {
            return is_full_length;
        }

        let inflight = self.packets_in_net_at_edt(ack.prior_in_flight_bytes);
        let bw = self.max_bw();

        // Probing (> 1.0) tries to raise inflight to gain * BDP, which can take longer than
        // min_rtt on short paths; a loss suggests that much will not fit, so stop then.
        if self.pacing_gain > Gain::ONE {
            return is_full_length
                && (ack.newly_lost_bytes > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }

        // Draining (< 1.0) stops as soon as inflight is back at the BDP: the queue is gone.
        is_full_length || inflight <= self.inflight(bw, Gain::ONE)
    }

    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = self.delivered_time;
    }

    /// Moves to the next gain phase when the current one is done.
    pub(super) fn update_cycle_phase(&mut self, ack: &AckEvent) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(ack) {
            self.advance_cycle_phase();
        }
    }

    /// Enters ProbeBW at a seeded pseudo-random phase other than the 0.75 drain phase
    /// (`bbr_reset_probe_bw_mode`; the kernel uses `prandom_u32_max`).
    pub(super) fn reset_probe_bw_mode(&mut self) {
        self.mode = Mode::ProbeBw;
        let r = (splitmix64(&mut self.cycle_rng) % BBR_CYCLE_RAND) as usize;
        self.cycle_idx = CYCLE_LEN - 1 - r;
        // Flip to the next phase: 0 (probe) or one of the 1.0 phases, never 1 (drain).
        self.advance_cycle_phase();
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::time::Duration;

    use super::super::config::{BBR_PACING_GAIN, CYCLE_LEN};
    use super::super::harness::{ms, params, Network, MSS};
    use super::super::{Bbr, BbrConfig, Mode};
    use crate::time::Instant;

    #[test]
    fn probe_bw_cycles_gains_each_phase_lasting_about_min_rtt() {
        // 10 Mbit/s, 40 ms, no loss. Record every phase change in ProbeBW.
        let mut net = Network::new(Bbr::new(params()), 1_250_000, ms(40), 1000);
        net.run_for(ms(1500), |_, _| {});
        assert_eq!(net.bbr.mode, Mode::ProbeBw);
        let mut changes: Vec<(Instant, usize)> = Vec::new();
        let mut last_idx = net.bbr.cycle_idx;
        net.run_for(ms(3000), |n, ack| {
            assert_eq!(n.bbr.pacing_gain, BBR_PACING_GAIN[n.bbr.cycle_idx], "gain follows phase");
            if n.bbr.cycle_idx != last_idx {
                assert_eq!(n.bbr.cycle_idx, (last_idx + 1) % CYCLE_LEN, "phases in order");
                last_idx = n.bbr.cycle_idx;
                changes.push((ack.now, last_idx));
            }
        });
        let min_rtt = net.bbr.min_rtt.unwrap();
        // ACKs arrive one packet time (0.8 ms) apart: a phase ends on the first ACK after it
        // has lasted min_rtt.
        let slack = Duration::from_micros(2000);
        let mut seen = BTreeSet::new();
        for w in changes.windows(2) {
            let ((start, idx), (end, _)) = (w[0], w[1]);
            let len = end.saturating_since(start);
            seen.insert(idx);
            match idx {
                // Probing lasts at least min_rtt, until inflight reaches 1.25 BDP.
                0 => assert!(len > min_rtt && len < 2 * min_rtt, "probe phase {len:?}"),
                // Draining lasts at most min_rtt; it ends early once inflight is at the BDP.
                1 => assert!(len <= min_rtt + slack, "drain phase {len:?}"),
                _ => assert!(len > min_rtt && len <= min_rtt + slack, "cruise {idx}: {len:?}"),
            }
        }
        assert_eq!(seen.len(), CYCLE_LEN, "every phase was visited: {seen:?}");
    }

    #[test]
    fn start_phase_is_seeded_and_never_the_drain_phase() {
        let starts = |seed| {
            let config = BbrConfig { cycle_seed: seed, ..BbrConfig::default() };
            let mut bbr = Bbr::with_config(params(), config);
            (0..50)
                .map(|_| {
                    bbr.reset_probe_bw_mode();
                    bbr.cycle_idx
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(starts(7), starts(7), "same seed, same phases");
        assert_ne!(starts(7), starts(8), "another seed, other phases");
        let all: BTreeSet<usize> = (0..20).flat_map(starts).collect();
        assert_eq!(all, BTreeSet::from([0, 2, 3, 4, 5, 6, 7]), "any phase but 0.75");
    }

    #[test]
    fn probe_phase_ends_early_on_loss_and_waits_for_inflight_otherwise() {
        // With a full-length probe phase but inflight short of 1.25 BDP, the phase continues;
        // a loss ends it.
        use super::super::harness::{Ack, Driver};
        let mut d = Driver::new(Bbr::new(params()));
        d.clocked(1_000_000, ms(100), 100 * MSS, ms(600));
        assert_eq!(d.bbr.mode, Mode::ProbeBw);
        while d.bbr.cycle_idx != 0 {
            d.ack(Ack { bw: Some(1_000_000), ..Ack::default() });
        }
        // 1.25 * 100 + 3 -> 128, + 2 in the probe phase = 130 packets; the departing packet
        // counts, so 129 in flight is enough.
        for _ in 0..150 {
            d.ack(Ack { bw: Some(1_000_000), in_flight: 120 * MSS, ..Ack::default() });
        }
        assert_eq!(d.bbr.cycle_idx, 0, "150 ms in, but inflight is short of the target");
        d.ack(Ack { bw: Some(1_000_000), in_flight: 120 * MSS, lost: MSS, ..Ack::default() });
        assert_eq!(d.bbr.cycle_idx, 1, "a loss ends the probe");
    }
}
