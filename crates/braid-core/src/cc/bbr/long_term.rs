//! Long-term bandwidth sampling: detecting a token-bucket policer (`bbr_lt_bw_sampling`).
//!
//! A policer lets a burst through and then drops everything above its token rate, so the
//! delivery rate BBR measures in its probes is the burst rate, and every probe loses packets.
//! BBR samples the average delivery rate over intervals of 4 to 16 rounds that begin and end
//! with a loss; two consecutive intervals with loss above 20% and rates within 1/8 (or
//! 4 kbit/s) of each other mean a policer. BBR then uses their average as `bw`, with a pacing
//! gain of 1, for 48 rounds before probing again (Flach et al., "An Internet-Wide Analysis
//! of Traffic Policing", SIGCOMM 2016).
//!
//! Braid's simulator does not model policers today; the sampler is kept so BBR behaves as the
//! kernel's does on links that police, and so tests can exercise it.

use std::time::Duration;

use super::config::{
    BBR_LT_BW_DIFF_BYTES_PER_S, BBR_LT_BW_MAX_RTTS, BBR_LT_BW_RATIO, BBR_LT_INTVL_MIN_RTTS,
    BBR_LT_LOSS_THRESH, BBR_SCALE, BBR_UNIT,
};
use super::{Bbr, Gain, Mode};
use crate::cc::bbr_common::pacing::pacing_rate;
use crate::time::Instant;

/// Shortest interval whose average rate is trusted (the kernel counts in whole ms).
const LT_MIN_INTERVAL: Duration = Duration::from_millis(1);

/// Long-term sampler state (the kernel's `lt_*` fields).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct LongTermBw {
    /// Whether `bw_bytes_per_s` replaces the max filter (a policer was detected).
    pub(super) use_bw: bool,
    /// Average rate of the last interval, or of the two that revealed the policer.
    pub(super) bw_bytes_per_s: u64,
    /// Whether an interval is being sampled (one starts at the first loss).
    is_sampling: bool,
    /// Rounds in the current interval, or since the policed rate was adopted.
    rtt_cnt: u32,
    last_stamp: Instant,
    last_delivered_bytes: u64,
    last_lost_bytes: u64,
}

impl LongTermBw {
    /// Starts a new sampling interval (`bbr_reset_lt_bw_sampling_interval`).
    fn reset_interval(&mut self, now: Instant, delivered_bytes: u64, lost_bytes: u64) {
        self.last_stamp = now;
        self.last_delivered_bytes = delivered_bytes;
        self.last_lost_bytes = lost_bytes;
        self.rtt_cnt = 0;
    }

    /// Forgets any policer estimate (`bbr_reset_lt_bw_sampling`).
    pub(super) fn reset(&mut self, now: Instant, delivered_bytes: u64, lost_bytes: u64) {
        self.bw_bytes_per_s = 0;
        self.use_bw = false;
        self.is_sampling = false;
        self.reset_interval(now, delivered_bytes, lost_bytes);
    }
}

impl Bbr {
    pub(super) fn reset_lt_bw_sampling(&mut self) {
        self.long_term.reset(self.delivered_time, self.delivered_bytes, self.lost_bytes);
    }

    /// One step of the sampler, for an ACK with `losses_bytes` newly lost
    /// (`bbr_lt_bw_sampling`).
    pub(super) fn lt_bw_sampling(&mut self, losses_bytes: u64, is_app_limited: bool) {
        let lt = &mut self.long_term;
        if lt.use_bw {
            // Already pacing at the policed rate: after a while, probe again.
            if self.mode == Mode::ProbeBw && self.round_start {
                lt.rtt_cnt += 1;
                if lt.rtt_cnt >= BBR_LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling();
                    self.reset_probe_bw_mode();
                }
            }
            return;
        }

        // Start at the first loss, once a policer's burst allowance is spent; earlier samples
        // would include the burst and overestimate the policed rate.
        if !lt.is_sampling {
            if losses_bytes == 0 {
                return;
            }
            lt.reset_interval(self.delivered_time, self.delivered_bytes, self.lost_bytes);
            lt.is_sampling = true;
        }

        // Running out of data would make the interval underestimate the rate.
        if is_app_limited {
            self.reset_lt_bw_sampling();
            return;
        }

        let lt = &mut self.long_term;
        if self.round_start {
            lt.rtt_cnt += 1;
        }
        if lt.rtt_cnt < BBR_LT_INTVL_MIN_RTTS {
            return; // the interval needs to be longer
        }
        if lt.rtt_cnt > 4 * BBR_LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(); // too long to describe one policer state
            return;
        }

        // End the interval at a loss, when the tokens are surely exhausted.
        if losses_bytes == 0 {
            return;
        }
        let lost = self.lost_bytes.saturating_sub(lt.last_lost_bytes);
        let delivered = self.delivered_bytes.saturating_sub(lt.last_delivered_bytes);
        // Only a lossy interval (lost/delivered >= 50/256) suggests a policer.
        if delivered == 0 || (lost << BBR_SCALE) < BBR_LT_LOSS_THRESH * delivered {
            return;
        }
        let elapsed = self.delivered_time.saturating_since(lt.last_stamp);
        if elapsed < LT_MIN_INTERVAL {
            return;
        }
        let bw = (u128::from(delivered) * 1_000_000_000 / elapsed.as_nanos()) as u64;
        self.lt_bw_interval_done(bw);
    }

    /// An interval ended with average rate `bw`: is it consistent with the previous one
    /// (`bbr_lt_bw_interval_done`)?
    fn lt_bw_interval_done(&mut self, bw: u64) {
        let prev = self.long_term.bw_bytes_per_s;
        if prev > 0 {
            let diff = bw.abs_diff(prev);
            let close_ratio = u128::from(diff) * u128::from(BBR_UNIT)
                <= u128::from(BBR_LT_BW_RATIO.0) * u128::from(prev);
            let close_abs = pacing_rate(diff, Gain::ONE, self.config.pacing_margin_percent)
                <= BBR_LT_BW_DIFF_BYTES_PER_S;
            if close_ratio || close_abs {
                // Two consistent lossy intervals: we are policed at about their average.
                let lt = &mut self.long_term;
                lt.bw_bytes_per_s = (bw + prev) / 2;
                lt.use_bw = true;
                lt.rtt_cnt = 0;
                self.pacing_gain = Gain::ONE; // try to avoid drops
                return;
            }
        }
        self.long_term.bw_bytes_per_s = bw;
        self.long_term.reset_interval(self.delivered_time, self.delivered_bytes, self.lost_bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{ms, params, Network, Policer, MSS};
    use super::super::Bbr;
    use crate::cc::Controller;

    #[test]
    fn detects_a_token_bucket_policer_and_paces_at_its_rate_for_48_rounds() {
        // A 2 Mbit/s policer (30-packet bucket) in front of a 10 Mbit/s, 40 ms bottleneck.
        let policed = 250_000;
        let mut net = Network::new(Bbr::new(params()), 1_250_000, ms(40), 1000);
        net.policer = Some(Policer::new(policed, 30 * MSS));
        let mut detected = None;
        let mut released = None;
        net.run_for(ms(4000), |n, ack| {
            let lt = n.bbr.long_term;
            match (detected, released) {
                (None, _) if lt.use_bw => detected = Some((ack.now, n.bbr.round_count)),
                (Some(_), None) if lt.use_bw => {
                    assert!(
                        lt.bw_bytes_per_s.abs_diff(policed) < policed / 20,
                        "{}",
                        lt.bw_bytes_per_s
                    );
                    assert_eq!(n.bbr.bw(), lt.bw_bytes_per_s);
                    assert_eq!(n.bbr.pacing_gain.0, 256, "no probing above the policed rate");
                    let pacing = n.bbr.pacing_rate_bytes_per_s().unwrap();
                    assert_eq!(pacing, lt.bw_bytes_per_s * 99 / 100);
                }
                (Some(_), None) => released = Some(n.bbr.round_count),
                _ => {}
            }
        });
        let (at, round) = detected.expect("policer detected");
        assert!(at.as_secs_f64() < 1.0, "detected at {at:?}");
        let released = released.expect("lt_bw given up after a while");
        assert_eq!(released - round, 48, "rounds at the policed rate");
    }
}
