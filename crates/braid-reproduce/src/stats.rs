//! Summary statistics of a group of runs: mean, Student-t 95% confidence half-width, min, max.
//!
//! The half-width is `t(0.975, n-1) * sd / sqrt(n)` with the sample standard deviation
//! (n - 1 in the denominator). Student's t rather than 1.96: a scenario cell has 10 runs,
//! where 1.96 would understate the interval by 13% (t = 2.262 at 9 degrees of freedom).

/// The two-sided 95% quantile of Student's t, t(0.975, df), for df = 1..=30.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// t(0.975, df): the table up to 30 degrees of freedom, above it the Cornish-Fisher expansion
/// around the normal quantile (error below 1e-4 there). `df` = 0 has no quantile: NaN.
pub fn t975(df: u64) -> f64 {
    match df {
        0 => f64::NAN,
        1..=30 => T975[df as usize - 1],
        _ => {
            let z: f64 = 1.959_964;
            let d = df as f64;
            z + (z.powi(3) + z) / (4.0 * d)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

/// A group's statistics; NaN where the group is too small (no runs; one run for `ci95`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub n: u64,
    pub mean: f64,
    pub ci95: f64,
    pub min: f64,
    pub max: f64,
}

/// The statistics of `values`.
pub fn summarize(values: &[f64]) -> Summary {
    let n = values.len() as u64;
    if n == 0 {
        return Summary { n, mean: f64::NAN, ci95: f64::NAN, min: f64::NAN, max: f64::NAN };
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let ci95 = if n < 2 {
        f64::NAN
    } else {
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        t975(n - 1) * var.sqrt() / (n as f64).sqrt()
    };
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Summary { n, mean, ci95, min, max }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_ci_min_max() {
        let s = summarize(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!((s.n, s.mean, s.min, s.max), (4, 2.5, 1.0, 4.0));
        // sd = sqrt(5/3), t(3) = 3.182.
        let want = 3.182 * (5.0f64 / 3.0).sqrt() / 2.0;
        assert!((s.ci95 - want).abs() < 1e-12, "{}", s.ci95);
    }

    #[test]
    fn small_groups_are_nan_not_zero() {
        assert!(summarize(&[]).mean.is_nan());
        let one = summarize(&[0.7]);
        assert_eq!(one.mean, 0.7);
        assert!(one.ci95.is_nan());
    }

    #[test]
    fn t_quantiles_join_the_table_and_tend_to_the_normal() {
        assert_eq!(t975(9), 2.262);
        assert!((t975(31) - 2.0395).abs() < 1e-3, "{}", t975(31));
        assert!((t975(149) - 1.9760).abs() < 1e-3, "{}", t975(149));
        assert!((t975(1_000_000) - 1.95996).abs() < 1e-4);
        assert!(t975(0).is_nan());
    }
}
