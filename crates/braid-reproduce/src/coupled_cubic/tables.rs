//! `utilisation.csv` of `braid reproduce coupled-cubic` (Figure 7 of Lee et al. 2023, with
//! Tables 4 and 5's average windows), from its two sweeps' journals:
//!
//! `variant, tunnel_cc, alpha_refinements, subflow, capacity_mbps, throughput_mbps_mean,
//! throughput_mbps_ci95, utilisation_mean, cwnd_pkts_mean, runs, failed`: per variant one row
//! per subflow and one `total` row (the sum of the subflows' rates and capacities; its window
//! is empty). Throughput is the path's wire rate (every header) over the run; utilisation is
//! throughput over capacity; the window is averaged over the run's samples, in
//! [`PACKET_BYTES`]-byte packets. The half-width is Student's t ([`crate::stats`]); an
//! undefined statistic is an empty field.

use braid_sweep::journal::Finished;
use braid_sweep::Spec;

use super::specs::VARIANT_AXIS;
use super::{variant, PACKET_BYTES, SUBFLOWS};
use crate::cells::{self, num, TablesError};
use crate::stats::summarize;

/// The header of `utilisation.csv`.
pub const HEADER: &str = "variant,tunnel_cc,alpha_refinements,subflow,capacity_mbps,\
throughput_mbps_mean,throughput_mbps_ci95,utilisation_mean,cwnd_pkts_mean,runs,failed\n";

/// The rows of one sweep (its variants in axis order), without the header.
pub fn utilisation_rows(spec: &Spec, finished: &Finished) -> Result<String, TablesError> {
    let axis = cells::axis(spec, VARIANT_AXIS)?;
    let groups = cells::group(spec, finished)?;
    let mut out = String::new();
    for vi in 0..spec.axes[axis].values.len() {
        let label = cells::label(spec, axis, vi);
        let v = variant(&label).ok_or(TablesError::UnknownLabel { axis: VARIANT_AXIS, label })?;
        let mut key = vec![0; spec.axes.len()];
        key[axis] = vi;
        let g = groups.get(&key).cloned().unwrap_or_default();
        // The paths the runs had: the single-path variant has subflow 1 only.
        let n_paths = g
            .reports
            .first()
            .and_then(|r| r["paths"].as_array().map(Vec::len))
            .unwrap_or(if v.label == super::SINGLE_PATH.label { 1 } else { 2 });
        let prefix = format!(
            "{},{},{}",
            v.label,
            v.tunnel_cc,
            v.alpha_refinements.map_or(String::new(), |n| n.to_string())
        );
        let row = |name: &str, capacity: f64, values: &[f64], cwnd: f64| {
            let s = summarize(values);
            format!(
                "{prefix},{name},{capacity},{},{},{},{},{},{}\n",
                num(s.mean),
                num(s.ci95),
                num(s.mean / capacity),
                num(cwnd),
                s.n,
                g.failed
            )
        };
        let mut totals = vec![0.0; g.reports.len()];
        let mut capacity = 0.0;
        for (i, sub) in SUBFLOWS.iter().enumerate().take(n_paths) {
            let rates: Vec<f64> = g
                .reports
                .iter()
                .map(|r| cells::number(r, &format!("/paths/{i}/mean_mbps")).unwrap_or(f64::NAN))
                .collect();
            for (t, r) in totals.iter_mut().zip(&rates) {
                *t += r;
            }
            let cwnd = summarize(&g.values(&format!("/paths/{i}/cwnd_bytes_mean"))).mean
                / f64::from(PACKET_BYTES);
            let ok: Vec<f64> = rates.into_iter().filter(|r| r.is_finite()).collect();
            out += &row(sub.name, sub.rate_mbps, &ok, cwnd);
            capacity += sub.rate_mbps;
        }
        let ok: Vec<f64> = totals.into_iter().filter(|t| t.is_finite()).collect();
        out += &row("total", capacity, &ok, f64::NAN);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::specs::{single_path, utilisation};
    use super::*;
    use crate::test_support::parse_spec;

    fn line(id: u64, p1: f64, p2: Option<f64>) -> String {
        let mut paths = format!(r#"{{"mean_mbps":{p1},"cwnd_bytes_mean":1500000.0}}"#);
        if let Some(p2) = p2 {
            paths += &format!(r#",{{"mean_mbps":{p2},"cwnd_bytes_mean":150000.0}}"#);
        }
        format!(r#"{{"run":{id},"status":"ok","report":{{"paths":[{paths}]}}}}"#)
    }

    #[test]
    fn a_row_per_subflow_and_a_total_per_variant() {
        let spec = parse_spec(&utilisation(10, 2));
        let mut finished = Finished::new();
        finished.insert(0, line(0, 100.0, Some(90.0)));
        finished.insert(1, line(1, 120.0, Some(100.0)));
        let rows = utilisation_rows(&spec, &finished).unwrap();
        let rows: Vec<&str> = rows.lines().collect();
        assert_eq!(rows.len(), 5 * 3);
        let first: Vec<&str> = rows[0].split(',').collect();
        assert_eq!(&first[..6], ["lia", "lia", "", "subflow1", "500", "110"]);
        // sd = sqrt(200), n = 2: t(1) x sqrt(200) / sqrt(2) = 12.706 x 10.
        assert!((first[6].parse::<f64>().unwrap() - 127.06).abs() < 1e-9, "{}", rows[0]);
        assert_eq!(&first[7..], ["0.22", "1000", "2", "0"]);
        assert!(rows[1].starts_with("lia,lia,,subflow2,100,95,"), "{}", rows[1]);
        assert!(rows[2].starts_with("lia,lia,,total,600,205,"), "{}", rows[2]);
        assert!(rows[2].ends_with(",,2,0"), "{}", rows[2]);
        // Variants without runs: empty statistics, no runs.
        assert_eq!(rows[3], "coupled_cubic_a1,coupled_cubic,0,subflow1,500,,,,,0,0");

        let one = parse_spec(&single_path(10, 1));
        let mut finished = Finished::new();
        finished.insert(0, line(0, 450.0, None));
        let rows = utilisation_rows(&one, &finished).unwrap();
        let rows: Vec<&str> = rows.lines().collect();
        assert_eq!(rows.len(), 2);
        assert!(rows[0].starts_with("cubic_single_path,cubic,,subflow1,500,450,,0.9,1000,1,0"));
        assert!(rows[1].starts_with("cubic_single_path,cubic,,total,500,450,"), "{}", rows[1]);
    }
}
