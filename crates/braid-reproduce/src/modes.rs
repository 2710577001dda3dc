//! The modes of a group of runs: clusters of values with an empty stretch between them, so a
//! table can say "6 runs near 0.54 and 4 near 1.02" where a mean of 0.73 describes no run.
//!
//! The rule, over the sorted values, for k = [`Rule::max_modes`] down to 2:
//!
//! 1. Split the values into k contiguous modes of at least [`Rule::min_runs`] values each,
//!    the split with the least within-mode sum of squares (Fisher's optimal grouping, which
//!    Jenks' natural breaks computes; the first such split on a tie).
//! 2. Keep it when every gap between neighbouring modes (the highest value of one to the lowest
//!    of the next) exceeds [`Rule::gap_over_sd`] pooled within-mode standard deviations
//!    (that sum of squares over n - k degrees of freedom) and the absolute floor
//!    [`Rule::min_gap`].
//!
//! No k kept: one mode. Trying the most modes first lets three evenly spaced clusters be
//! found, which a split into two would not be (one of its modes would hold two clusters and
//! be too wide for the gap to count).
//!
//! Basis: Fisher 1958, "On grouping for maximum homogeneity", JASA 53:789-798, and Jenks
//! 1967, "The data model concept in statistical mapping", International Yearbook of
//! Cartography 7:186-190, for the split; a gap measured against the pooled within-group
//! standard deviation is a separation in sd units like Ashman's D (Ashman, Bird & Zepf 1994,
//! Astronomical Journal 108:2348), taken between the modes' edges rather than their means
//! because a bimodal cell is one with no runs in between. The test of unimodality with a
//! p-value is Hartigan's dip test (Hartigan & Hartigan 1985, Annals of Statistics 13:70-84);
//! it is not implemented: with 10 runs it has little power, and it says whether there is more
//! than one mode, not where they are or how many runs each holds.
//!
//! Limits, for [`RELATIVE_DLCT`] (5 sd, 0.05, 2 runs, up to 3 modes) and 10 values, by
//! simulation: 10 draws from one normal distribution are split about 0.5% of the time, from a
//! uniform or an exponential (skewed) 2-3%, so among the 330 cells of a matrix a split or
//! a few can be chance. Two modes at 0.54 and 1.02 with a within-mode sd of 0.05 are found 9
//! times in 10, with an sd of 0.08 3 in 10: the rule needs an empty stretch, and two wide modes
//! whose tails meet read as one, and so can a cell with one run in the empty stretch (5 runs at
//! 0.54-0.56, one at 0.78, 2 at 0.93 and 2 at 1.03 is one mode: that run widens whichever mode
//! takes it past the gap test). A single run apart from the rest is never a mode: one run is
//! as likely an outlier as a mode, and a share of one repetition says little; it stays in the
//! nearest mode and widens it. Means and shares describe the runs; they are not estimates with
//! intervals.

/// The thresholds of the rule (module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// The fewest values a mode may have.
    pub min_runs: usize,
    /// The most modes reported.
    pub max_modes: usize,
    /// Each gap between modes must exceed this many pooled within-mode standard deviations...
    pub gap_over_sd: f64,
    /// ...and this absolute amount, in the values' unit.
    pub min_gap: f64,
}

/// The rule for relative DLCT (DLCT over the tunnel / over path 1 alone): 2 runs a mode, up to
/// 3 modes, gaps over 5 pooled sd and over 0.05 (5% of the single-path DLCT, below which two
/// modes would not change how the table reads).
pub const RELATIVE_DLCT: Rule = Rule { min_runs: 2, max_modes: 3, gap_over_sd: 5.0, min_gap: 0.05 };

/// One mode: how many values it holds, their mean and range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mode {
    pub n: usize,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

/// The modes of `values`, lowest first; none for no values. Non-finite values are left out.
/// Deterministic, and the same for the same values in any order.
pub fn modes(values: &[f64], rule: &Rule) -> Vec<Mode> {
    let mut x: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    x.sort_by(f64::total_cmp);
    let n = x.len();
    let min_runs = rule.min_runs.max(1);
    let kept = (2..=rule.max_modes).rev().find_map(|k| {
        let (ss, cuts) = fisher(&x, k, min_runs)?;
        let sd = if n > k { (ss / (n - k) as f64).sqrt() } else { 0.0 };
        let apart = cuts.iter().all(|&c| {
            let gap = x[c] - x[c - 1];
            gap > rule.gap_over_sd * sd && gap > rule.min_gap
        });
        apart.then_some(cuts)
    });
    let mut bounds = vec![0];
    bounds.extend(kept.unwrap_or_default());
    bounds.push(n);
    bounds
        .windows(2)
        .filter(|w| w[1] > w[0])
        .map(|w| {
            let m = &x[w[0]..w[1]];
            Mode { n: m.len(), mean: mean(m), min: m[0], max: m[m.len() - 1] }
        })
        .collect()
}

/// Fisher's optimal grouping of sorted `x` into `k` contiguous groups of at least `min_runs`:
/// (the least within-group sum of squares, the index each group after the first starts at),
/// by dynamic programming over the end of the last group. None when `x` is too short.
fn fisher(x: &[f64], k: usize, min_runs: usize) -> Option<(f64, Vec<usize>)> {
    let n = x.len();
    if k == 0 || n < k * min_runs {
        return None;
    }
    // best[j][i]: the least sum of squares of x[..i] in j + 1 groups, and where the last starts.
    let mut best = vec![vec![None::<(f64, usize)>; n + 1]; k];
    for i in min_runs..=n {
        best[0][i] = Some((ss(&x[..i]), 0));
    }
    for j in 1..k {
        for i in (j + 1) * min_runs..=n {
            for start in j * min_runs..=i - min_runs {
                if let Some((before, _)) = best[j - 1][start] {
                    let total = before + ss(&x[start..i]);
                    if best[j][i].is_none_or(|(b, _)| total < b) {
                        best[j][i] = Some((total, start));
                    }
                }
            }
        }
    }
    let (total, _) = best[k - 1][n]?;
    let mut cuts = Vec::with_capacity(k - 1);
    let mut end = n;
    for j in (1..k).rev() {
        let (_, start) = best[j][end]?;
        cuts.push(start);
        end = start;
    }
    cuts.reverse();
    Some((total, cuts))
}

/// The sum of squares about the mean.
fn ss(x: &[f64]) -> f64 {
    let mu = mean(x);
    x.iter().map(|v| (v - mu).powi(2)).sum()
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-normal draws: the sum of 12 uniforms (xorshift64) minus 6.
    fn normal(n: usize, mean: f64, sd: f64, mut state: u64) -> Vec<f64> {
        let mut uniform = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..n).map(|_| mean + sd * ((0..12).map(|_| uniform()).sum::<f64>() - 6.0)).collect()
    }

    fn sizes(m: &[Mode]) -> Vec<usize> {
        m.iter().map(|m| m.n).collect()
    }

    #[test]
    fn one_normal_group_is_one_mode() {
        let mut split = 0;
        for seed in 1..=300u64 {
            let x = normal(10, 0.8, 0.05, seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let m = modes(&x, &RELATIVE_DLCT);
            assert_eq!(m.iter().map(|m| m.n).sum::<usize>(), 10);
            split += usize::from(m.len() > 1);
        }
        // About 0.5% by the module doc's simulation: a few of 300 at most.
        assert!(split <= 5, "{split} of 300 normal groups split");
        let x = [0.70, 0.72, 0.73, 0.75, 0.76, 0.78, 0.79, 0.81, 0.83, 0.84];
        let m = modes(&x, &RELATIVE_DLCT);
        assert_eq!(sizes(&m), [10]);
        assert_eq!((m[0].min, m[0].max), (0.70, 0.84));
        assert!((m[0].mean - 0.771).abs() < 1e-12);
    }

    #[test]
    fn two_clusters_with_nothing_between_are_two_modes() {
        let x = [1.01, 0.53, 1.03, 0.55, 0.54, 1.02, 0.52, 0.56, 1.02, 0.54];
        let m = modes(&x, &RELATIVE_DLCT);
        assert_eq!(sizes(&m), [6, 4], "{m:?}");
        assert!((m[0].mean - 0.54).abs() < 1e-12 && (m[1].mean - 1.02).abs() < 1e-12, "{m:?}");
        assert_eq!((m[0].min, m[0].max, m[1].min, m[1].max), (0.52, 0.56, 1.01, 1.03));
        // Noisier draws of the same pattern (sd 0.02, 24 sd apart).
        for seed in 1..=50u64 {
            let mut x = normal(6, 0.54, 0.02, seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
            x.extend(normal(4, 1.02, 0.02, seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
            assert_eq!(sizes(&modes(&x, &RELATIVE_DLCT)), [6, 4], "{x:?}");
        }
    }

    #[test]
    fn three_clusters_and_no_more() {
        let x = [0.5, 0.51, 0.52, 0.8, 0.81, 0.82, 1.1, 1.11, 1.12, 1.13];
        assert_eq!(sizes(&modes(&x, &RELATIVE_DLCT)), [3, 3, 4]);
        // Only two allowed: no split into two is clean, so one mode, not a wrong two.
        let two = Rule { max_modes: 2, ..RELATIVE_DLCT };
        assert_eq!(sizes(&modes(&x, &two)), [10]);
        // Four clusters, up to four modes.
        let x = [0.5, 0.51, 0.8, 0.81, 1.1, 1.11, 1.4, 1.41];
        let four = Rule { max_modes: 4, ..RELATIVE_DLCT };
        assert_eq!(sizes(&modes(&x, &four)), [2, 2, 2, 2]);
    }

    #[test]
    fn a_lone_outlier_is_not_a_mode() {
        let x = [0.60, 0.61, 0.62, 0.62, 0.63, 0.64, 0.64, 0.65, 0.66, 1.50];
        let m = modes(&x, &RELATIVE_DLCT);
        assert_eq!(sizes(&m), [10], "{m:?}");
        assert_eq!(m[0].max, 1.5);
        // With one run allowed, the same run would be a mode of its own.
        let one = Rule { min_runs: 1, ..RELATIVE_DLCT };
        assert_eq!(sizes(&modes(&x, &one)), [9, 1]);
    }

    #[test]
    fn a_gap_must_be_large_against_the_spread_and_the_floor() {
        // Two clusters 0.3 apart, but each spread 0.4 wide: the gap is under 5 sd.
        let wide = [0.2, 0.35, 0.45, 0.6, 0.9, 1.05, 1.2, 1.3];
        assert_eq!(modes(&wide, &RELATIVE_DLCT).len(), 1);
        // Tight clusters 0.04 apart: many sd, but under the 0.05 floor.
        let close = [0.500, 0.501, 0.502, 0.503, 0.543, 0.544, 0.545, 0.546];
        assert_eq!(modes(&close, &RELATIVE_DLCT).len(), 1);
        let lower = Rule { min_gap: 0.03, ..RELATIVE_DLCT };
        assert_eq!(sizes(&modes(&close, &lower)), [4, 4]);
        // The documented limit: one run in the empty stretch widens a mode past the test.
        let between = [0.779, 0.556, 0.539, 0.545, 0.929, 1.038, 0.558, 0.553, 1.033, 0.927];
        assert_eq!(modes(&between, &RELATIVE_DLCT).len(), 1);
        let without: Vec<f64> = between.iter().copied().filter(|&v| v != 0.779).collect();
        assert_eq!(sizes(&modes(&without, &RELATIVE_DLCT)), [5, 2, 2]);
        // Identical values within each cluster: zero sd, the floor decides.
        assert_eq!(sizes(&modes(&[0.5, 0.5, 0.5, 1.0, 1.0], &RELATIVE_DLCT)), [3, 2]);
    }

    #[test]
    fn small_empty_and_non_finite_groups() {
        assert!(modes(&[], &RELATIVE_DLCT).is_empty());
        assert_eq!(modes(&[0.7], &RELATIVE_DLCT), [Mode { n: 1, mean: 0.7, min: 0.7, max: 0.7 }]);
        // Three values cannot hold two modes of two.
        assert_eq!(modes(&[0.5, 0.5, 1.0], &RELATIVE_DLCT).len(), 1);
        assert_eq!(
            sizes(&modes(&[0.5, f64::NAN, 0.5, 1.0, f64::INFINITY, 1.0], &RELATIVE_DLCT)),
            [2, 2]
        );
    }

    #[test]
    fn the_order_of_the_values_does_not_matter() {
        let x = [1.01, 0.53, 1.03, 0.55, 0.54, 1.02, 0.52, 0.56, 1.02, 0.54];
        let m = modes(&x, &RELATIVE_DLCT);
        let mut rev = x;
        rev.reverse();
        let mut sorted = x;
        sorted.sort_by(f64::total_cmp);
        assert_eq!(modes(&rev, &RELATIVE_DLCT), m);
        assert_eq!(modes(&sorted, &RELATIVE_DLCT), m);
        assert_eq!(modes(&x, &RELATIVE_DLCT), m);
    }

    #[test]
    fn fisher_finds_the_least_sum_of_squares() {
        let x = [0.0, 1.0, 2.0, 10.0, 11.0, 20.0, 21.0];
        let (ss2, cuts2) = fisher(&x, 2, 2).unwrap();
        assert_eq!(cuts2, [3]);
        let want = ss(&x[..3]) + ss(&x[3..]);
        assert!((ss2 - want).abs() < 1e-12);
        assert_eq!(fisher(&x, 3, 2).unwrap().1, [3, 5]);
        assert_eq!(fisher(&x, 4, 2), None);
    }
}
