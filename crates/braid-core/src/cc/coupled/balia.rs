//! BALIA, the Balanced Linked Adaptation algorithm: Peng, Walid, Hwang, Low, "Multipath TCP:
//! Analysis, Design, and Implementation", IEEE/ACM ToN 24(1), 2016, as specified in
//! draft-walid-mptcp-congestion-control-04 section 2 (Linux `net/mptcp/mptcp_balia.c`,
//! `mptcp_balia_recalc_ai` and `mptcp_balia_ssthresh`, read for behaviour).
//!
//! # Model
//! With `x_r = w_r / rtt_r` the rate of path r and `alpha_r = max_k x_k / x_r` (1 on the fastest
//! path, larger on slower ones), in congestion avoidance:
//!
//! ```text
//!   each ACK on r:   w_r += x_r / (rtt_r * (sum_k x_k)^2) * (1 + alpha_r)/2 * (4 + alpha_r)/5
//!   each loss on r:  w_r -= w_r / 2 * min(alpha_r, 1.5)
//! ```
//!
//! (times `MSS * bytes_acked` with windows in bytes, as OLIA's and LIA's increases are). The
//! increase interpolates between the friendly coupled algorithm (the first factor alone) and a
//! more responsive one; slower paths get a larger increase and a larger decrease (up to 1.5 times
//! Reno's), which balances friendliness to single-path TCP against responsiveness (draft
//! section 3). With one path, `alpha_r = 1`, both factors are 1 and BALIA is Reno.
//!
//! # Choices where the sources leave room
//! - **Decrease base.** The draft decreases `w_r`; we apply the factor to RFC 5681's FlightSize
//!   (what NewReno halves), so the single-path case is exactly NewReno: `ssthresh = FlightSize -
//!   FlightSize / 2 * min(alpha_r, 1.5)`, at least 2 SMSS. alpha_r comes from the windows and
//!   smoothed RTTs when the loss is detected (1 when the path has no RTT sample yet).
//! - **alpha_r** is exact (the kernel truncates `max_rate / rate` to an integer in its decrease).
//! - The sums run over paths with an RTT sample; the increase is recomputed on every ACK (the
//!   kernel caches it and recomputes on window changes and state changes).
//! - The minimum `ssthresh` stays 2 SMSS (the draft lowers it to 1 MSS with several paths).

use super::{window_rtt_pairs, CoupledPath, Coupling};
use crate::cc::CcParams;
use crate::time::Instant;

/// Draft section 2: the decrease is capped at 1.5 times Reno's halving.
const MAX_DECREASE_ALPHA: f64 = 1.5;

/// BALIA over all paths of a tunnel. See the module documentation.
#[derive(Clone, Debug)]
pub struct Balia {
    paths: Vec<CoupledPath>,
}

impl Balia {
    pub fn new(params: CcParams, n_paths: usize) -> Self {
        Balia { paths: (0..n_paths).map(|_| CoupledPath::new(params)).collect() }
    }

    /// `x_r` of `path` in bytes per second, `max_k x_k` and `sum_k x_k`, once `path` has an RTT
    /// sample.
    fn rates(&self, path: usize) -> Option<(f64, f64, f64)> {
        let p = &self.paths[path];
        let x_r = p.cwnd_f64() / p.srtt_s()?;
        let (mut max, mut sum) = (0.0f64, 0.0);
        for (w, rtt) in window_rtt_pairs(&self.paths) {
            max = max.max(w / rtt);
            sum += w / rtt;
        }
        Some((x_r, max, sum))
    }

    /// `alpha_r = max_k x_k / x_r`; 1 without an RTT sample.
    fn alpha_r(&self, path: usize) -> f64 {
        self.rates(path).map_or(1.0, |(x_r, max, _)| max / x_r)
    }
}

impl Coupling for Balia {
    const NAME: &'static str = "balia";

    fn paths(&self) -> &[CoupledPath] {
        &self.paths
    }

    fn paths_mut(&mut self) -> &mut [CoupledPath] {
        &mut self.paths
    }

    /// Draft section 2: the increase of `path` for `acked_bytes`, in bytes.
    fn increase_bytes(&mut self, path: usize, _now: Instant, acked_bytes: u64) -> Option<f64> {
        let (x_r, max, sum) = self.rates(path)?;
        let p = &self.paths[path];
        let alpha = max / x_r;
        let base = x_r / (p.srtt_s()? * sum * sum);
        let balance = (1.0 + alpha) / 2.0 * (4.0 + alpha) / 5.0;
        Some(base * balance * p.mss_f64() * acked_bytes as f64)
    }

    /// Draft section 2: `ssthresh = FlightSize - FlightSize / 2 * min(alpha_r, 1.5)`.
    fn loss_ssthresh_bytes(&mut self, path: usize, flight_size_bytes: u64) -> u64 {
        let factor = self.alpha_r(path).min(MAX_DECREASE_ALPHA);
        let flight = flight_size_bytes as f64;
        (flight - flight / 2.0 * factor).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::multi_clock::{MultiClock, MSS};
    use super::super::test_util::{plain_ack, set_path};
    use super::*;
    use crate::cc::test_support::ack_clock::ms;
    use crate::cc::{CcPhase, CongestionEvent, MultipathController};

    fn params() -> CcParams {
        CcParams { mss_bytes: MSS, initial_window_pkts: 10 }
    }

    /// Paths given as (cwnd segments, RTT ms).
    fn balia(paths: &[(u64, u64)]) -> Balia {
        let mut cc = Balia::new(params(), paths.len());
        for (p, &(cwnd, rtt_ms)) in cc.paths.iter_mut().zip(paths) {
            set_path(p, cwnd, Duration::from_millis(rtt_ms));
        }
        cc
    }

    fn grown_on_one_ack(cc: &mut Balia, path: usize) -> f64 {
        let before = cc.paths[path].cwnd_f64();
        cc.on_ack(path, &plain_ack(ms(100), ms(50), MSS));
        cc.paths[path].cwnd_f64() - before
    }

    fn loss_on(cc: &mut Balia, path: usize, flight_size_pkts: u64) -> u64 {
        cc.on_congestion_event(
            path,
            &CongestionEvent {
                now: ms(100),
                largest_lost_sent_time: ms(90),
                lost_bytes: MSS,
                in_flight_bytes: (flight_size_pkts - 1) * MSS,
            },
        );
        cc.cwnd_bytes(path)
    }

    #[test]
    fn increase_follows_the_draft_formula() {
        // Windows in bytes: x_0 = 10000 / 0.01 = 1e6 B/s, x_1 = 20000 / 0.04 = 5e5 B/s,
        // sum 1.5e6 (squared 2.25e12); alpha_0 = 1, alpha_1 = 2.
        // Path 0: 1e6 / (0.01 * 2.25e12) * (2/2) * (5/5) * 1000 * 1000 = 44.44 bytes.
        // Path 1: 5e5 / (0.04 * 2.25e12) * (3/2) * (6/5) * 1e6 = 5.556 * 1.8 = 10.0 bytes.
        let mut cc = balia(&[(10, 10), (20, 40)]);
        assert_eq!((cc.alpha_r(0), cc.alpha_r(1)), (1.0, 2.0));
        let grown = grown_on_one_ack(&mut cc, 0);
        assert!((grown - 400.0 / 9.0).abs() < 0.01, "path 0 grew {grown} bytes");
        let mut cc = balia(&[(10, 10), (20, 40)]);
        let grown = grown_on_one_ack(&mut cc, 1);
        assert!((grown - 10.0).abs() < 0.01, "path 1 grew {grown} bytes");
    }

    #[test]
    fn decrease_scales_reno_by_alpha_up_to_one_and_a_half() {
        // x_0 = 1e6 B/s is the fastest: alpha_0 = 1, a Reno halving of the 10-segment flight.
        let mut cc = balia(&[(10, 10), (30, 40)]);
        assert_eq!(loss_on(&mut cc, 0, 10), 5 * MSS);
        assert_eq!(cc.metrics(0).phase, CcPhase::Recovery);
        // x_1 = 30000 / 0.04 = 7.5e5: alpha_1 = 4/3, so 30 - 30/2 * 4/3 = 10 segments.
        let mut cc = balia(&[(10, 10), (30, 40)]);
        assert_eq!(loss_on(&mut cc, 1, 30), 10 * MSS);
        // x_1 = 20000 / 0.04 = 5e5: alpha_1 = 2, capped at 1.5: 20 - 20/2 * 1.5 = 5 segments
        // (alpha 2 uncapped would leave nothing).
        let mut cc = balia(&[(10, 10), (20, 40)]);
        assert_eq!(loss_on(&mut cc, 1, 20), 5 * MSS);
    }

    #[test]
    fn a_single_path_behaves_as_reno() {
        let mut cc = balia(&[(20, 50)]);
        assert_eq!(cc.alpha_r(0), 1.0);
        for _ in 0..20 {
            cc.on_ack(0, &plain_ack(ms(100), ms(50), MSS));
        }
        let grown = cc.paths[0].cwnd_f64() / MSS as f64 - 20.0;
        assert!((grown - 1.0).abs() < 0.03, "grew {grown} segments for one window acked");
        let cwnd = loss_on(&mut cc, 0, 21);
        assert_eq!(cwnd, 10 * MSS + MSS / 2, "FlightSize / 2");
    }

    #[test]
    fn two_identical_paths_grow_no_faster_than_one_reno_flow() {
        // alpha_r = 1 on both; each path adds x/(rtt (2x)^2) = 1/(4w) per segment: 1/4 segment
        // per RTT, 1/2 for the pair, against one Reno flow's 1 segment per RTT.
        let rtt = Duration::from_millis(50);
        let mut f = MultiClock::new(balia(&[(20, 50), (20, 50)]), &[rtt, rtt]);
        let start = f.total_cwnd_pkts();
        f.run_until(ms(50 * 20));
        let grown = f.total_cwnd_pkts() - start;
        assert!((9.0..=11.0).contains(&grown), "the pair grew {grown} segments in 20 RTTs");
    }
}
