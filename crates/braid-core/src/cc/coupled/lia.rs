//! LIA, the Linked Increases Algorithm: RFC 6356 section 3 ("Coupled Congestion Control
//! Algorithm"), with Linux `net/mptcp/mptcp_coupled.c` (`mptcp_recalc_alpha`,
//! `mptcp_fc_cong_avoid`) consulted where the RFC leaves room.
//!
//! # Model
//! Each path runs Reno, except that the congestion-avoidance increase is linked. For an ACK of
//! `bytes_acked` on path i:
//!
//! ```text
//!   cwnd_i += min( alpha * bytes_acked * MSS_i / cwnd_total ,  bytes_acked * MSS_i / cwnd_i )
//!
//!                   max_i (cwnd_i / rtt_i^2)
//!   alpha = cwnd_total * ---------------------------
//!                   (sum_i cwnd_i / rtt_i)^2
//! ```
//!
//! `cwnd_total` is the sum of the windows. alpha is chosen so that the aggregate takes what one
//! TCP flow would take on the best path (goals 1 and 2 of RFC 6356 section 2); the first term
//! moves traffic towards less congested paths (goal 3), and the second caps each path at what a
//! single TCP flow would do on it. With one path, alpha = 1 and LIA is Reno. Losses halve the
//! path's window as Reno does; slow start, recovery and timeouts are unchanged (NewReno's,
//! `CoupledPath`).
//!
//! # Choices where the sources leave room
//! - alpha is recomputed on every ACK in f64 (RFC 6356 section 4 suggests once per loss or per
//!   RTT to save integer work; the kernel recomputes on loss, on leaving recovery and on each
//!   window increment). Per-ACK recomputation costs one pass over the paths and allocates nothing.
//! - The sums run over paths with an RTT sample (the kernel's `mptcp_ccc_sk_can_send`);
//!   `rtt_i` is the path's RFC 6298 smoothed RTT (RFC 6356 section 4).
//! - The increase is applied in bytes, fractions carried between ACKs (the kernel counts ACKs up
//!   to `max(cwnd_total / alpha, cwnd_i)` and then adds one segment: the same rate).

use super::{window_rtt_pairs, CoupledPath, Coupling};
use crate::cc::CcParams;
use crate::time::Instant;

/// RFC 6356 section 3: alpha, from (window, RTT) pairs; `None` without a usable pair. Windows
/// may be in any unit (alpha is dimensionless), RTTs in seconds.
pub(crate) fn lia_alpha(pairs: impl Iterator<Item = (f64, f64)>) -> Option<f64> {
    let mut cwnd_total = 0.0;
    let mut best = 0.0f64;
    let mut rate_sum = 0.0;
    for (cwnd, rtt_s) in pairs {
        cwnd_total += cwnd;
        best = best.max(cwnd / (rtt_s * rtt_s));
        rate_sum += cwnd / rtt_s;
    }
    (rate_sum > 0.0).then(|| cwnd_total * best / (rate_sum * rate_sum))
}

/// RFC 6356 section 3: the increase of path i for `acked_bytes`, in bytes:
/// `min(alpha * acked * MSS / cwnd_total, acked * MSS / cwnd_i)`.
pub(crate) fn lia_increase_bytes(
    alpha: f64,
    cwnd_total_bytes: f64,
    cwnd_bytes: f64,
    acked_bytes: f64,
    mss_bytes: f64,
) -> f64 {
    let linked = alpha * acked_bytes * mss_bytes / cwnd_total_bytes;
    let reno = acked_bytes * mss_bytes / cwnd_bytes;
    linked.min(reno)
}

/// RFC 6356 LIA over all paths of a tunnel. See the module documentation.
#[derive(Clone, Debug)]
pub struct Lia {
    pub(super) paths: Vec<CoupledPath>,
}

impl Lia {
    pub fn new(params: CcParams, n_paths: usize) -> Self {
        Lia { paths: (0..n_paths).map(|_| CoupledPath::new(params)).collect() }
    }

    /// The current alpha (RFC 6356 section 3), once some path has an RTT sample.
    pub fn alpha(&self) -> Option<f64> {
        lia_alpha(window_rtt_pairs(&self.paths))
    }
}

impl Coupling for Lia {
    const NAME: &'static str = "lia";

    fn paths(&self) -> &[CoupledPath] {
        &self.paths
    }

    fn paths_mut(&mut self) -> &mut [CoupledPath] {
        &mut self.paths
    }

    /// RFC 6356 section 3: one ACK's linked increase on `path` in congestion avoidance.
    fn increase_bytes(&mut self, path: usize, _now: Instant, acked_bytes: u64) -> Option<f64> {
        self.paths[path].srtt()?;
        let alpha = self.alpha()?;
        let cwnd_total: f64 = window_rtt_pairs(&self.paths).map(|(cwnd, _)| cwnd).sum();
        let p = &self.paths[path];
        Some(lia_increase_bytes(alpha, cwnd_total, p.cwnd_f64(), acked_bytes as f64, p.mss_f64()))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::multi_clock::{MultiClock, MSS};
    use super::super::test_util::{plain_ack, set_path};
    use super::*;
    use crate::cc::newreno::NewReno;
    use crate::cc::test_support::ack_clock::{ms, AckClock};
    use crate::cc::{CcPhase, MultipathController};

    fn params() -> CcParams {
        CcParams { mss_bytes: MSS, initial_window_pkts: 10 }
    }

    /// Path 0: 10 segments over 10 ms; path 1: 20 segments over 40 ms.
    fn two_paths() -> Lia {
        let mut cc = Lia::new(params(), 2);
        set_path(&mut cc.paths[0], 10, Duration::from_millis(10));
        set_path(&mut cc.paths[1], 20, Duration::from_millis(40));
        cc
    }

    fn ack_on(cc: &mut Lia, path: usize) -> f64 {
        let before = cc.paths[path].cwnd_f64();
        cc.on_ack(path, &plain_ack(ms(100), ms(50), MSS));
        cc.paths[path].cwnd_f64() - before
    }

    #[test]
    fn alpha_matches_rfc_6356_on_two_paths() {
        // cwnd/rtt^2: 10/0.01^2 = 100000 and 20/0.04^2 = 12500, so the max is 100000.
        // sum cwnd/rtt = 10/0.01 + 20/0.04 = 1000 + 500 = 1500, squared 2250000.
        // alpha = cwnd_total * max / sum^2 = 30 * 100000 / 2250000 = 4/3.
        let cc = two_paths();
        let alpha = cc.alpha().unwrap();
        assert!((alpha - 4.0 / 3.0).abs() < 1e-12, "alpha {alpha}");
        // Each path's increase per segment acked: alpha * MSS * MSS / cwnd_total
        // = 4/3 * 1000 * 1000 / 30000 = 44.44 bytes, below both Reno caps (100 and 50 bytes).
        for path in [0, 1] {
            let grown = ack_on(&mut two_paths(), path);
            assert!((grown - 400.0 / 9.0).abs() < 0.01, "path {path} grew {grown}");
        }
    }

    #[test]
    fn increase_is_capped_at_the_reno_increase_of_the_path() {
        // Path 0: 10 segments over 10 ms (cwnd/rtt^2 = 100000, cwnd/rtt = 1000); path 1: 100
        // segments over 100 ms (10000 and 1000). alpha = 110 * 100000 / 2000^2 = 2.75, so the
        // linked term for path 1 is 2.75 * 1000 * 1000 / 110000 = 25 bytes, more than Reno's
        // 1000 * 1000 / 100000 = 10 bytes: the cap applies.
        let mut cc = Lia::new(params(), 2);
        set_path(&mut cc.paths[0], 10, Duration::from_millis(10));
        set_path(&mut cc.paths[1], 100, Duration::from_millis(100));
        assert!((cc.alpha().unwrap() - 2.75).abs() < 1e-12);
        let grown = ack_on(&mut cc, 1);
        assert!((grown - 10.0).abs() < 1e-9, "grew {grown}");
        // On path 0 the linked term (25 bytes) is below Reno's 100 bytes.
        let grown = ack_on(&mut cc, 0);
        assert!((grown - 25.0).abs() < 0.01, "grew {grown}");
    }

    #[test]
    fn a_single_path_behaves_as_reno() {
        let rtt = Duration::from_millis(50);
        let mut lia = MultiClock::new(Lia::new(params(), 1), &[rtt]);
        let mut reno = AckClock::new(NewReno::new(params()), rtt);
        for _ in 0..2 {
            lia.round(0);
            reno.round();
        }
        assert_eq!(lia.cwnd_pkts(0), reno.cwnd_pkts());
        lia.lose_one(0);
        reno.lose_one();
        assert_eq!(lia.cwnd_pkts(0), 20.0);
        assert_eq!(reno.cwnd_pkts(), 20.0);
        assert!((lia.cc.alpha().unwrap() - 1.0).abs() < 1e-12, "one path: alpha = 1");
        for end in [ms(1000), ms(2000), ms(5000)] {
            lia.run_until(end);
            reno.run_until(end);
            assert_eq!(lia.cc.metrics(0).phase, CcPhase::CongestionAvoidance);
            // Reno adds a segment per window acknowledged with the window fixed in between; the
            // continuous form lags by about 1/(2 cwnd) segment per RTT, under 2% here.
            let (a, b) = (lia.cwnd_pkts(0), reno.cwnd_pkts());
            assert!((a - b).abs() <= 0.02 * b, "LIA {a} vs Reno {b} segments at {end:?}");
        }
    }

    #[test]
    fn two_identical_paths_grow_no_faster_than_one_reno_flow() {
        // alpha = 2w * (w/r^2) / (2w/r)^2 = 1/2: each path adds alpha/cwnd_total per segment,
        // w/(4w) = 1/4 segment per RTT, so the pair adds 1/2 segment per RTT. One Reno flow
        // adds 1 segment per RTT.
        let rtt = Duration::from_millis(50);
        let mut cc = Lia::new(params(), 2);
        set_path(&mut cc.paths[0], 20, rtt);
        set_path(&mut cc.paths[1], 20, rtt);
        let mut f = MultiClock::new(cc, &[rtt, rtt]);
        let start = f.total_cwnd_pkts();
        f.run_until(ms(50 * 20));
        let grown = f.total_cwnd_pkts() - start;
        assert!((9.0..=11.0).contains(&grown), "the pair grew {grown} segments in 20 RTTs");
        assert!(grown <= 20.0);
    }

    #[test]
    fn a_loss_halves_only_the_path_that_lost() {
        let rtt = Duration::from_millis(50);
        let mut f = MultiClock::new(Lia::new(params(), 2), &[rtt, rtt * 2]);
        f.round(0);
        f.round(0); // path 0: 40 segments in slow start
        f.lose_one(0);
        assert_eq!(f.cwnd_pkts(0), 20.0);
        assert_eq!(f.cc.metrics(0).phase, CcPhase::Recovery);
        assert_eq!(f.cwnd_pkts(1), 10.0);
        f.cc.on_rto(1, f.now);
        assert_eq!(f.cwnd_pkts(1), 1.0);
        assert_eq!(f.cc.metrics(1).phase, CcPhase::Loss);
    }
}
