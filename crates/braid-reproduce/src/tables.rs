//! Table 3 and the per-scenario table of Figure 10 (Pieska et al. 2024), from the matrix
//! sweep's journal: relative DLCT (DLCT over the tunnel / DLCT over path 1 alone) grouped by
//! combination and scheduler, and by combination, scheduler and scenario.
//!
//! `table3.csv`: `combination, e2e_cc, tunnel_cc, reorder, scheduler, relative_dlct_mean,
//! relative_dlct_ci95, runs, failed, multimodal_scenarios`, one row per combination and
//! scheduler: the mean over all scenarios and repetitions, and how many of the row's scenarios
//! have two or more modes (so a mean over runs that fall into separate clusters is not read as a
//! typical run). `table_scenarios.csv`: `combination, e2e_cc, tunnel_cc, reorder, scheduler,
//! scenario, relative_dlct_mean, relative_dlct_ci95, relative_dlct_min, relative_dlct_max,
//! runs, failed, modes, mode_means, mode_shares`, one row per scenario too (`default` for no
//! keys). `runs` counts the successful runs the statistics are over, `failed` the runs that
//! ended in an error (left out). The half-width is Student's t ([`crate::stats`]); an undefined
//! statistic (no runs, or one for the half-width) is an empty field.
//!
//! `modes` is the number of modes of the cell's runs ([`crate::modes`], rule
//! [`crate::modes::RELATIVE_DLCT`]; 0 without runs), `mode_means` their means and
//! `mode_shares` the fraction of the runs in each, lowest mode first, separated by `;`
//! (`0.54;1.02` and `0.6;0.4`; a one-mode cell has its mean and `1`). In pandas:
//! `df.mode_means.str.split(";")` gives lists; the columns stay at the end so readers by
//! position are unaffected.

use braid_sweep::journal::Finished;
use braid_sweep::Spec;

use crate::cells::{self, num, Group, TablesError};
use crate::modes::{self, modes, Mode};
use crate::nested_cc::{combination, Combination};
use crate::stats::{summarize, Summary};

/// The two tables as CSV text: (table3.csv, table_scenarios.csv).
pub fn tables(spec: &Spec, finished: &Finished) -> Result<(String, String), TablesError> {
    let c_axis = cells::axis(spec, "combination")?;
    let s_axis = cells::axis(spec, "tunnel.scheduler")?;
    let k_axis = cells::axis(spec, "keys")?;
    let combos: Vec<&Combination> = (0..spec.axes[c_axis].values.len())
        .map(|i| {
            let label = cells::label(spec, c_axis, i);
            combination(&label).ok_or(TablesError::UnknownLabel { axis: "combination", label })
        })
        .collect::<Result<_, _>>()?;
    let groups = cells::group(spec, finished)?;
    let cell = |ci: usize, si: usize, ki: usize| {
        let mut key = vec![0; spec.axes.len()];
        key[c_axis] = ci;
        key[s_axis] = si;
        key[k_axis] = ki;
        groups.get(&key).cloned().unwrap_or_default()
    };

    let mut table3 = String::from(
        "combination,e2e_cc,tunnel_cc,reorder,scheduler,relative_dlct_mean,relative_dlct_ci95,\
         runs,failed,multimodal_scenarios\n",
    );
    let mut by_scenario = String::from(
        "combination,e2e_cc,tunnel_cc,reorder,scheduler,scenario,relative_dlct_mean,\
         relative_dlct_ci95,relative_dlct_min,relative_dlct_max,runs,failed,modes,mode_means,\
         mode_shares\n",
    );
    for (ci, c) in combos.iter().enumerate() {
        for si in 0..spec.axes[s_axis].values.len() {
            let prefix = format!(
                "{},{},{},{},{}",
                c.label,
                c.e2e_cc,
                c.tunnel_cc,
                c.reorder,
                cells::label(spec, s_axis, si)
            );
            let mut all = Group::default();
            let mut multimodal = 0;
            for ki in 0..spec.axes[k_axis].values.len() {
                let g = cell(ci, si, ki);
                let s = summarize(&g.values(RELATIVE_DLCT));
                let scenario = match cells::label(spec, k_axis, ki) {
                    k if k.is_empty() => "default".to_string(),
                    k => k,
                };
                let m = modes(&g.values(RELATIVE_DLCT), &modes::RELATIVE_DLCT);
                multimodal += usize::from(m.len() > 1);
                by_scenario += &format!(
                    "{prefix},{scenario},{},{},{},{},{},{},{},{}\n",
                    num(s.mean),
                    num(s.ci95),
                    num(s.min),
                    num(s.max),
                    s.n,
                    g.failed,
                    m.len(),
                    mode_columns(&m)
                );
                all.reports.extend(g.reports);
                all.failed += g.failed;
            }
            let Summary { mean, ci95, n, .. } = summarize(&all.values(RELATIVE_DLCT));
            table3 +=
                &format!("{prefix},{},{},{n},{},{multimodal}\n", num(mean), num(ci95), all.failed);
        }
    }
    Ok((table3, by_scenario))
}

/// `mode_means,mode_shares`: each mode's mean and fraction of the runs, `;`-separated.
fn mode_columns(m: &[Mode]) -> String {
    let total: usize = m.iter().map(|m| m.n).sum();
    let join = |f: &dyn Fn(&Mode) -> f64| m.iter().map(|m| num(f(m))).collect::<Vec<_>>().join(";");
    format!("{},{}", join(&|m| m.mean), join(&|m| m.n as f64 / total as f64))
}

/// Where a report holds the relative DLCT.
const RELATIVE_DLCT: &str = "/relative_dlct";

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::specs::{matrix, SpecInputs, BASE_FILE};

    fn line(id: u64, rel: Option<f64>) -> String {
        match rel {
            Some(r) => format!(
                r#"{{"run":{id},"status":"ok","report":{{"dlct_s":1.0,"relative_dlct":{r}}}}}"#
            ),
            None => format!(r#"{{"run":{id},"status":"error","report":null}}"#),
        }
    }

    #[test]
    fn groups_by_combination_scheduler_and_scenario() {
        let two: Vec<&Combination> = crate::nested_cc::COMBINATIONS[..2].iter().collect();
        let text = matrix(&SpecInputs { bytes: 1000, reps: 2, combinations: &two })
            .replace(BASE_FILE, "Cargo.toml");
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let spec = Spec::parse(&text, &dir.join("s.toml"), dir).unwrap();
        let mut finished = Finished::new();
        // Combination 0, CPF, default scenario: reps 0 and 1; SHORT: one ok, one failed.
        finished.insert(0, line(0, Some(0.5)));
        finished.insert(1, line(1, Some(0.7)));
        finished.insert(2, line(2, Some(0.9)));
        finished.insert(3, line(3, None));
        let (t3, ts) = tables(&spec, &finished).unwrap();
        let rows: Vec<&str> = t3.lines().collect();
        assert_eq!(rows.len(), 1 + 2 * 2);
        assert!(rows[0].starts_with("combination,e2e_cc,tunnel_cc,reorder,scheduler,"));
        let cells: Vec<&str> = rows[1].split(',').collect();
        assert_eq!(&cells[..5], ["cubic/ccid5", "cubic", "ccid5", "adaptive", "cpf"]);
        let mean: f64 = cells[5].parse().unwrap();
        assert!((mean - 0.7).abs() < 1e-12);
        assert_eq!(&cells[7..], ["3", "1", "0"]);
        // 0.2 sd, t(2) = 4.303.
        let ci: f64 = cells[6].parse().unwrap();
        assert!((ci - 4.303 * 0.2 / 3f64.sqrt()).abs() < 1e-9, "{ci}");
        // Groups with no runs have empty statistics.
        assert_eq!(rows[2], "cubic/ccid5,cubic,ccid5,adaptive,srtt,,,0,0,0");

        let srows: Vec<&str> = ts.lines().collect();
        assert_eq!(srows.len(), 1 + 2 * 2 * 15);
        let default: Vec<&str> = srows[1].split(',').collect();
        assert_eq!(&default[..6], ["cubic/ccid5", "cubic", "ccid5", "adaptive", "cpf", "default"]);
        let stat = |i: usize| default[i].parse::<f64>().unwrap();
        assert!((stat(6) - 0.6).abs() < 1e-12 && (stat(7) - 1.2706).abs() < 1e-9);
        // Two runs are one mode (a mode needs two).
        assert_eq!(&default[8..], ["0.5", "0.7", "2", "0", "1", "0.6", "1"]);
        assert_eq!(srows[2], "cubic/ccid5,cubic,ccid5,adaptive,cpf,SHORT,0.9,,0.9,0.9,1,1,1,0.9,1");
        assert!(srows[3].ends_with(",0,0,0,,"), "{}", srows[3]);
    }

    #[test]
    fn a_bimodal_scenario_reports_its_modes_and_is_counted_in_table_3() {
        let one: Vec<&Combination> = crate::nested_cc::COMBINATIONS[..1].iter().collect();
        let text = matrix(&SpecInputs { bytes: 1000, reps: 10, combinations: &one })
            .replace(BASE_FILE, "Cargo.toml");
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let spec = Spec::parse(&text, &dir.join("s.toml"), dir).unwrap();
        let mut finished = Finished::new();
        // CPF, default scenario: 6 runs near 0.54 and 4 near 1.02, nothing between.
        let bimodal = [0.53, 1.01, 0.55, 0.54, 1.03, 0.52, 1.02, 0.56, 1.02, 0.54];
        // CPF, SHORT: one cluster.
        let unimodal = [0.70, 0.72, 0.73, 0.75, 0.76, 0.78, 0.79, 0.81, 0.83, 0.84];
        for (id, v) in bimodal.iter().chain(&unimodal).enumerate() {
            finished.insert(id as u64, line(id as u64, Some(*v)));
        }
        let (t3, ts) = tables(&spec, &finished).unwrap();
        let cpf: Vec<&str> = t3.lines().nth(1).unwrap().split(',').collect();
        assert_eq!(cpf[4], "cpf");
        assert_eq!(&cpf[7..], ["20", "0", "1"]);
        let srows: Vec<&str> = ts.lines().collect();
        let default: Vec<&str> = srows[1].split(',').collect();
        assert_eq!((default[5], default[12]), ("default", "2"));
        let means: Vec<f64> = default[13].split(';').map(|v| v.parse().unwrap()).collect();
        assert_eq!(means.len(), 2);
        assert!((means[0] - 0.54).abs() < 1e-12 && (means[1] - 1.02).abs() < 1e-12, "{means:?}");
        assert_eq!(default[14], "0.6;0.4");
        let short: Vec<&str> = srows[2].split(',').collect();
        assert_eq!((short[5], short[12], short[14]), ("SHORT", "1", "1"));
        // The mode's mean is the cell's (summed in sorted order: equal to the last bit or two).
        let (mode, mean) = (short[13].parse::<f64>().unwrap(), short[6].parse::<f64>().unwrap());
        assert!((mode - mean).abs() < 1e-12, "{mode} {mean}");
    }
}
