//! OLIA, the Opportunistic Linked Increases Algorithm: Khalili, Gast, Popovic, Le Boudec,
//! "MPTCP is not Pareto-optimal: performance issues and a possible solution", IEEE/ACM ToN 2013,
//! as specified in draft-khalili-mptcp-congestion-control-05 sections 2 and 3 (Linux
//! `net/mptcp/mptcp_olia.c`, `mptcp_get_epsilon` and `mptcp_olia_cong_avoid`, read for
//! behaviour).
//!
//! # Model
//! Reno per path with a two-term increase. For each ACK on path r, in congestion avoidance
//! (draft section 3, equation (1)), with `w` the windows in bytes:
//!
//! ```text
//!   w_r += ( (w_r / rtt_r^2) / (sum_p w_p / rtt_p)^2  +  alpha_r / w_r ) * MSS_r * bytes_acked
//! ```
//!
//! The first term is Kelly and Voice's optimal resource-pooling increase made TCP-compatible.
//! The second moves window between paths (draft section 2):
//! - `l_r = max(l_1r, l_2r)`, the bytes acknowledged between the last two losses or since the
//!   last one (`LossInterval`);
//! - best paths `B`: the paths maximising `l_r^2 / rtt_r`;
//! - max-window paths `M`: the paths with the largest `w_r`;
//! - collected paths `B \ M`: presumably best paths that are not fully used.
//!
//! When `B \ M` is empty every `alpha_r` is 0. Otherwise `alpha_r = 1 / (n |B \ M|)` on the
//! collected paths, `-1 / (n |M|)` on the max-window paths, 0 elsewhere (n paths; the alphas
//! sum to 0): windows shift from fully used paths to good ones with room. The increase of a
//! max-window path may be negative. Losses halve the path's window as Reno does.
//!
//! # Choices where the sources leave room
//! - **Best-path metric.** The draft's `l_r * l_r / rtt_r` is used. The kernel compares
//!   `l_r / srtt_r^2` instead (the draft's own rate estimate `sqrt(2 l_r) / rtt_r`, squared);
//!   the two orderings differ when paths differ in both RTT and loss distance.
//! - **Set membership.** Windows are compared in whole segments (the kernel's `snd_cwnd` counts
//!   packets): paths whose windows differ by less than one segment all belong to `M`. Compared
//!   in bytes, the fractions every ACK adds would make `M` a single path almost always, and two
//!   equal paths would trade window back and forth on every ACK. The best-path metric is
//!   compared exactly (the kernel compares its integer metric exactly).
//! - **n** counts the paths with an RTT sample, the same set the sums run over (the kernel uses
//!   the number of established subflows).
//! - **Negative increases** stop at one segment and lower `ssthresh` with the window (see
//!   `CoupledPath::grow`); the draft notes `w_r >= 1` always holds.
//! - The sets are recomputed on every ACK (the draft allows once per RTT or per loss).
//! - The minimum `ssthresh` stays 2 SMSS (the draft lowers it to 1 MSS with several paths).

use super::{window_rtt_pairs, CoupledPath, Coupling};
use crate::cc::CcParams;
use crate::time::Instant;

/// The sets of draft section 2, summarised by one pass over the paths.
#[derive(Clone, Copy, Debug, PartialEq)]
struct PathSets {
    /// Paths with an RTT sample: `number_of_paths`.
    n: usize,
    /// The largest window in whole segments.
    max_cwnd_pkts: u64,
    /// The largest `l_p^2 / rtt_p`.
    best_metric: f64,
    /// `|max_w_paths|`.
    max_w_count: usize,
    /// `|collected_paths|`.
    collected_count: usize,
}

/// Membership of one path in the draft's sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Membership {
    best: bool,
    max_w: bool,
}

/// Draft section 2: `l_r^2 / rtt_r`, with `l_r` in bytes.
fn best_path_metric(path: &CoupledPath, rtt_s: f64) -> f64 {
    let l = path.loss_interval.smoothed_bytes() as f64;
    l * l / rtt_s
}

/// A window in whole segments, the granularity at which `max_w_paths` compares windows.
fn whole_segments(path: &CoupledPath) -> u64 {
    path.window.cwnd_bytes / path.window.mss_bytes
}

/// OLIA over all paths of a tunnel. See the module documentation.
#[derive(Clone, Debug)]
pub struct Olia {
    paths: Vec<CoupledPath>,
}

impl Olia {
    pub fn new(params: CcParams, n_paths: usize) -> Self {
        Olia { paths: (0..n_paths).map(|_| CoupledPath::new(params)).collect() }
    }

    fn sampled(&self) -> impl Iterator<Item = (&CoupledPath, f64)> + '_ {
        self.paths.iter().filter_map(|p| p.srtt_s().map(|rtt| (p, rtt)))
    }

    fn sets(&self) -> PathSets {
        let mut n = 0;
        let mut max_cwnd_pkts = 0;
        let mut best_metric = 0.0f64;
        for (p, rtt) in self.sampled() {
            n += 1;
            max_cwnd_pkts = max_cwnd_pkts.max(whole_segments(p));
            best_metric = best_metric.max(best_path_metric(p, rtt));
        }
        let mut sets =
            PathSets { n, max_cwnd_pkts, best_metric, max_w_count: 0, collected_count: 0 };
        for (p, rtt) in self.sampled() {
            let m = Self::membership(&sets, p, rtt);
            sets.max_w_count += usize::from(m.max_w);
            sets.collected_count += usize::from(m.best && !m.max_w);
        }
        sets
    }

    fn membership(sets: &PathSets, path: &CoupledPath, rtt_s: f64) -> Membership {
        Membership {
            best: best_path_metric(path, rtt_s) == sets.best_metric,
            max_w: whole_segments(path) == sets.max_cwnd_pkts,
        }
    }

    /// Draft section 3: `alpha_r` of `path`, or `None` without an RTT sample.
    fn alpha_r(&self, sets: &PathSets, path: usize) -> Option<f64> {
        let p = &self.paths[path];
        let m = Self::membership(sets, p, p.srtt_s()?);
        let n = sets.n as f64;
        Some(if sets.collected_count == 0 {
            0.0
        } else if m.best && !m.max_w {
            1.0 / (n * sets.collected_count as f64)
        } else if m.max_w {
            -1.0 / (n * sets.max_w_count as f64)
        } else {
            0.0
        })
    }
}

impl Coupling for Olia {
    const NAME: &'static str = "olia";

    fn paths(&self) -> &[CoupledPath] {
        &self.paths
    }

    fn paths_mut(&mut self) -> &mut [CoupledPath] {
        &mut self.paths
    }

    /// Draft section 3, equation (1): the increase of `path` for `acked_bytes`, in bytes.
    fn increase_bytes(&mut self, path: usize, _now: Instant, acked_bytes: u64) -> Option<f64> {
        let p = &self.paths[path];
        let rtt = p.srtt_s()?;
        let alpha = self.alpha_r(&self.sets(), path)?;
        let rate_sum: f64 = window_rtt_pairs(&self.paths).map(|(w, r)| w / r).sum();
        let w = p.cwnd_f64();
        let pooling = (w / (rtt * rtt)) / (rate_sum * rate_sum);
        Some((pooling + alpha / w) * p.mss_f64() * acked_bytes as f64)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::multi_clock::{MultiClock, MSS};
    use super::super::test_util::{plain_ack, set_loss_interval, set_path};
    use super::*;
    use crate::cc::test_support::ack_clock::ms;
    use crate::cc::MultipathController;

    fn params() -> CcParams {
        CcParams { mss_bytes: MSS, initial_window_pkts: 10 }
    }

    /// Paths given as (cwnd segments, RTT ms, l_r segments).
    fn olia(paths: &[(u64, u64, u64)]) -> Olia {
        let mut cc = Olia::new(params(), paths.len());
        for (p, &(cwnd, rtt_ms, l)) in cc.paths.iter_mut().zip(paths) {
            set_path(p, cwnd, Duration::from_millis(rtt_ms));
            set_loss_interval(p, l, 0);
        }
        cc
    }

    fn memberships(cc: &Olia) -> Vec<(bool, bool)> {
        let sets = cc.sets();
        cc.sampled()
            .map(|(p, rtt)| Olia::membership(&sets, p, rtt))
            .map(|m| (m.best, m.max_w))
            .collect()
    }

    fn alphas(cc: &Olia) -> Vec<f64> {
        let sets = cc.sets();
        (0..cc.paths.len()).map(|p| cc.alpha_r(&sets, p).unwrap()).collect()
    }

    #[test]
    fn best_and_max_window_sets_on_concrete_paths() {
        // l^2/rtt: path 0: 100^2/0.01 = 1e6, path 1: 100^2/0.04 = 2.5e5 (in segments^2/s):
        // path 0 is best; path 1 has the largest window.
        let cc = olia(&[(10, 10, 100), (20, 40, 100)]);
        assert_eq!(memberships(&cc), [(true, false), (false, true)]);
        // B \ M = {0}, n = 2: alpha_0 = 1/(2*1) > 0, alpha_1 = -1/(2*1) < 0.
        assert_eq!(alphas(&cc), [0.5, -0.5]);

        // 200^2/0.01 = 4e6 against 300^2/0.04 = 2.25e6: path 0 stays best although path 1 has
        // the longer loss distance.
        let cc = olia(&[(10, 10, 200), (20, 40, 300)]);
        assert_eq!(memberships(&cc), [(true, false), (false, true)]);
        // With l_1 = 500: 500^2/0.04 = 6.25e6 > 4e6, so the best path has the largest window:
        // B \ M is empty and every alpha is 0.
        let cc = olia(&[(10, 10, 200), (20, 40, 500)]);
        assert_eq!(memberships(&cc), [(false, false), (true, true)]);
        assert_eq!(alphas(&cc), [0.0, 0.0]);
    }

    #[test]
    fn alpha_splits_among_collected_and_max_window_paths() {
        // Paths 0 and 1 tie as best (l^2/rtt = 1e6) with small windows; paths 2 and 3 tie for
        // the largest window (30) with a worse metric (100^2/0.05 = 2e5). n = 4.
        let cc = olia(&[(10, 10, 100), (15, 10, 100), (30, 50, 100), (30, 50, 100)]);
        assert_eq!(memberships(&cc), [(true, false), (true, false), (false, true), (false, true)]);
        // Collected: 1/(4*2) = 0.125 each; max-window: -1/(4*2) = -0.125 each; sum 0.
        assert_eq!(alphas(&cc), [0.125, 0.125, -0.125, -0.125]);
    }

    #[test]
    fn increase_on_a_concrete_example_follows_equation_1() {
        // Windows in bytes: w_0 = 10000 over 10 ms, w_1 = 20000 over 40 ms.
        // sum w/rtt = 1e6 + 5e5 = 1.5e6, squared 2.25e12.
        // Path 0: w/rtt^2 = 1e8; (1e8 / 2.25e12 + 0.5 / 10000) * 1000 * 1000 = 94.44 bytes.
        // Path 1: w/rtt^2 = 1.25e7; (1.25e7 / 2.25e12 - 0.5 / 20000) * 1e6 = -19.44 bytes.
        let mut cc = olia(&[(10, 10, 100), (20, 40, 100)]);
        let before = cc.paths[0].cwnd_f64();
        cc.on_ack(0, &plain_ack(ms(100), ms(50), MSS));
        let grown = cc.paths[0].cwnd_f64() - before;
        assert!((grown - 850.0 / 9.0).abs() < 0.01, "path 0 grew {grown} bytes");
        let mut cc = olia(&[(10, 10, 100), (20, 40, 100)]);
        cc.on_ack(1, &plain_ack(ms(100), ms(50), MSS));
        let grown = cc.paths[1].cwnd_f64() - 20.0 * MSS as f64;
        assert!((grown + 175.0 / 9.0).abs() < 0.01, "path 1 grew {grown} bytes");
        // The ACK itself lengthened l_1 by one segment (101^2/0.04 < 1e6: still not best).
        assert_eq!(cc.paths[1].loss_interval.since_last_bytes, MSS);
    }

    #[test]
    fn a_single_path_has_alpha_zero_and_grows_as_reno() {
        // One path is both best and max-window: alpha = 0, increase (w/r^2)/(w/r)^2 = 1/w.
        let mut cc = olia(&[(20, 50, 100)]);
        assert_eq!(alphas(&cc), [0.0]);
        for _ in 0..20 {
            cc.on_ack(0, &plain_ack(ms(100), ms(50), MSS));
        }
        let grown = cc.paths[0].cwnd_f64() / MSS as f64 - 20.0;
        assert!((grown - 1.0).abs() < 0.03, "grew {grown} segments for one window acked");
    }

    #[test]
    fn two_identical_paths_grow_no_faster_than_one_reno_flow() {
        // Equal windows and loss distances: both best, both max-window, B \ M empty, alpha 0.
        // Each path adds (w/r^2)/(2w/r)^2 = 1/(4w) per segment: 1/4 segment per RTT, 1/2 for the
        // pair, against one Reno flow's 1 segment per RTT.
        let rtt = Duration::from_millis(50);
        let cc = olia(&[(20, 50, 100), (20, 50, 100)]);
        let mut f = MultiClock::new(cc, &[rtt, rtt]);
        let start = f.total_cwnd_pkts();
        f.run_until(ms(50 * 20));
        let grown = f.total_cwnd_pkts() - start;
        assert!((9.0..=11.0).contains(&grown), "the pair grew {grown} segments in 20 RTTs");
    }

    #[test]
    fn window_moves_from_the_max_window_path_to_the_collected_one() {
        // Path 0 is best with a small window; path 1 (equal RTT) is the max-window path.
        let rtt = Duration::from_millis(50);
        let cc = olia(&[(10, 50, 1000), (30, 50, 100)]);
        let mut f = MultiClock::new(cc, &[rtt, rtt]);
        f.run_until(ms(50 * 30));
        assert!(f.cwnd_pkts(0) > 14.0, "collected path grew to {}", f.cwnd_pkts(0));
        assert!(f.cwnd_pkts(1) < 30.0, "max-window path shrank to {}", f.cwnd_pkts(1));
    }
}
