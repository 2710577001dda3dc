//! Table 3 and the per-scenario table of Figure 10 (Pieska et al. 2024), from the matrix
//! sweep's journal: relative DLCT (DLCT over the tunnel / DLCT over path 1 alone) grouped by
//! combination and scheduler, and by combination, scheduler and scenario.
//!
//! `table3.csv`: `combination, e2e_cc, tunnel_cc, reorder, scheduler, relative_dlct_mean,
//! relative_dlct_ci95, runs, failed`, one row per combination and scheduler: the mean over all
//! scenarios and repetitions. `table_scenarios.csv`: `combination, e2e_cc, tunnel_cc, reorder,
//! scheduler, scenario, relative_dlct_mean, relative_dlct_ci95, relative_dlct_min,
//! relative_dlct_max, runs, failed`, one row per scenario too (`default` for no keys). `runs`
//! counts the successful runs the statistics are over, `failed` the runs that ended in an
//! error (left out). The half-width is Student's t ([`crate::stats`]); an undefined statistic
//! (no runs, or one for the half-width) is an empty field.

use braid_sweep::journal::Finished;
use braid_sweep::Spec;

use crate::cells::{self, num, Group, TablesError};
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
         runs,failed\n",
    );
    let mut by_scenario = String::from(
        "combination,e2e_cc,tunnel_cc,reorder,scheduler,scenario,relative_dlct_mean,\
         relative_dlct_ci95,relative_dlct_min,relative_dlct_max,runs,failed\n",
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
            for ki in 0..spec.axes[k_axis].values.len() {
                let g = cell(ci, si, ki);
                let s = summarize(&g.values(RELATIVE_DLCT));
                let scenario = match cells::label(spec, k_axis, ki) {
                    k if k.is_empty() => "default".to_string(),
                    k => k,
                };
                by_scenario += &format!(
                    "{prefix},{scenario},{},{},{},{},{},{}\n",
                    num(s.mean),
                    num(s.ci95),
                    num(s.min),
                    num(s.max),
                    s.n,
                    g.failed
                );
                all.reports.extend(g.reports);
                all.failed += g.failed;
            }
            let Summary { mean, ci95, n, .. } = summarize(&all.values(RELATIVE_DLCT));
            table3 += &format!("{prefix},{},{},{n},{}\n", num(mean), num(ci95), all.failed);
        }
    }
    Ok((table3, by_scenario))
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
        assert_eq!(&cells[7..], ["3", "1"]);
        // 0.2 sd, t(2) = 4.303.
        let ci: f64 = cells[6].parse().unwrap();
        assert!((ci - 4.303 * 0.2 / 3f64.sqrt()).abs() < 1e-9, "{ci}");
        // Groups with no runs have empty statistics.
        assert_eq!(rows[2], "cubic/ccid5,cubic,ccid5,adaptive,srtt,,,0,0");

        let srows: Vec<&str> = ts.lines().collect();
        assert_eq!(srows.len(), 1 + 2 * 2 * 15);
        let default: Vec<&str> = srows[1].split(',').collect();
        assert_eq!(&default[..6], ["cubic/ccid5", "cubic", "ccid5", "adaptive", "cpf", "default"]);
        let stat = |i: usize| default[i].parse::<f64>().unwrap();
        assert!((stat(6) - 0.6).abs() < 1e-12 && (stat(7) - 1.2706).abs() < 1e-9);
        assert_eq!(&default[8..], ["0.5", "0.7", "2", "0"]);
        assert_eq!(srows[2], "cubic/ccid5,cubic,ccid5,adaptive,cpf,SHORT,0.9,,0.9,0.9,1,1");
    }
}
