//! The CSV tables of `braid reproduce acpf`, from its sweeps' journals.
//!
//! `goodput.csv` (Figure 5 of Pieska et al. 2021, "the average throughput for each set"):
//! `tunnel, tunnel_cc, rate_mbps, delays, server_rtt_ms, path1_rtt_ms, path2_rtt_ms, e2e_cc,
//! scheduler, goodput_mbps_mean, goodput_mbps_ci95, goodput_mbps_min, goodput_mbps_max,
//! path1_mbps_mean, path2_mbps_mean, runs, failed`, one row per set and scheduler. Goodput is
//! application bytes over the download time; the path columns are each path's wire rate
//! (all headers) over the same time.
//!
//! `gain.csv`: `tunnel, rate_mbps, delays, e2e_cc, cpf_goodput_mbps, acpf_goodput_mbps,
//! acpf_gain_percent`, one row per set: `(ACPF / CPF - 1) x 100` of the mean goodputs, as the
//! paper's "ACPF improves the average throughput over CPF between 24% to 86%".
//!
//! `contour.csv` (Figure 6): `point, scheduler, goodput_mbps, acpf_fraction_mean,
//! server_cwnd_bytes_mean`, one row per point and scheduler (empty where the run failed; the
//! fraction is empty for CPF).
//!
//! The half-width is Student's t ([`crate::stats`]); an undefined statistic is an empty field.

use std::collections::BTreeMap;

use braid_sweep::journal::Finished;
use braid_sweep::Spec;

use super::specs::{DELAYS_AXIS, TUNNEL_AXIS};
use super::{delays, tunnel, Delays, Tunnel};
use crate::cells::{self, num, CellKey, Group, TablesError};
use crate::stats::summarize;

const GOODPUT: &str = "/goodput_mbps";

/// The axes of the table spec, by index.
struct Axes {
    tunnel: usize,
    delays: usize,
    e2e: usize,
    scheduler: usize,
}

/// (goodput.csv, gain.csv) from the table sweep.
pub fn goodput_tables(spec: &Spec, finished: &Finished) -> Result<(String, String), TablesError> {
    let a = Axes {
        tunnel: cells::axis(spec, TUNNEL_AXIS)?,
        delays: cells::axis(spec, DELAYS_AXIS)?,
        e2e: cells::axis(spec, "e2e.cc")?,
        scheduler: cells::axis(spec, "tunnel.scheduler")?,
    };
    let n = |axis: usize| spec.axes[axis].values.len();
    let tunnels: Vec<&Tunnel> = (0..n(a.tunnel))
        .map(|i| {
            let label = cells::label(spec, a.tunnel, i);
            tunnel(&label).ok_or(TablesError::UnknownLabel { axis: TUNNEL_AXIS, label })
        })
        .collect::<Result<_, _>>()?;
    let delay_sets: Vec<&Delays> = (0..n(a.delays))
        .map(|i| {
            let label = cells::label(spec, a.delays, i);
            delays(&label).ok_or(TablesError::UnknownLabel { axis: DELAYS_AXIS, label })
        })
        .collect::<Result<_, _>>()?;
    let groups = cells::group(spec, finished)?;

    let mut goodput = String::from(
        "tunnel,tunnel_cc,rate_mbps,delays,server_rtt_ms,path1_rtt_ms,path2_rtt_ms,e2e_cc,\
         scheduler,goodput_mbps_mean,goodput_mbps_ci95,goodput_mbps_min,goodput_mbps_max,\
         path1_mbps_mean,path2_mbps_mean,runs,failed\n",
    );
    let mut gain = String::from(
        "tunnel,rate_mbps,delays,e2e_cc,cpf_goodput_mbps,acpf_goodput_mbps,acpf_gain_percent\n",
    );
    for (ti, t) in tunnels.iter().enumerate() {
        for (di, d) in delay_sets.iter().enumerate() {
            for ei in 0..n(a.e2e) {
                let e2e = cells::label(spec, a.e2e, ei);
                let mut means: BTreeMap<String, f64> = BTreeMap::new();
                for si in 0..n(a.scheduler) {
                    let scheduler = cells::label(spec, a.scheduler, si);
                    let mut key: CellKey = vec![0; spec.axes.len()];
                    (key[a.tunnel], key[a.delays], key[a.e2e], key[a.scheduler]) = (ti, di, ei, si);
                    let g = groups.get(&key).cloned().unwrap_or_default();
                    let s = summarize(&g.values(GOODPUT));
                    let path =
                        |i: usize| summarize(&g.values(&format!("/paths/{i}/mean_mbps"))).mean;
                    goodput += &format!(
                        "{},{},{},{},{},{},{},{e2e},{scheduler},{},{},{},{},{},{},{},{}\n",
                        t.label,
                        t.cc,
                        t.rate_mbps,
                        d.label,
                        d.server_rtt_ms,
                        d.path1_rtt_ms,
                        d.path2_rtt_ms,
                        num(s.mean),
                        num(s.ci95),
                        num(s.min),
                        num(s.max),
                        num(path(0)),
                        num(path(1)),
                        s.n,
                        g.failed
                    );
                    means.insert(scheduler, s.mean);
                }
                let cpf = means.get("cpf").copied().unwrap_or(f64::NAN);
                let acpf = means.get("acpf").copied().unwrap_or(f64::NAN);
                gain += &format!(
                    "{},{},{},{e2e},{},{},{}\n",
                    t.label,
                    t.rate_mbps,
                    d.label,
                    num(cpf),
                    num(acpf),
                    num((acpf / cpf - 1.0) * 100.0)
                );
            }
        }
    }
    Ok((goodput, gain))
}

/// contour.csv from the contour sweep.
pub fn contour_table(spec: &Spec, finished: &Finished) -> Result<String, TablesError> {
    let point = cells::axis(spec, "point")?;
    let scheduler = cells::axis(spec, "tunnel.scheduler")?;
    let groups = cells::group(spec, finished)?;
    let mut out =
        String::from("point,scheduler,goodput_mbps,acpf_fraction_mean,server_cwnd_bytes_mean\n");
    for pi in 0..spec.axes[point].values.len() {
        for si in 0..spec.axes[scheduler].values.len() {
            let mut key: CellKey = vec![0; spec.axes.len()];
            (key[point], key[scheduler]) = (pi, si);
            let g: Group = groups.get(&key).cloned().unwrap_or_default();
            let mean = |pointer: &str| summarize(&g.values(pointer)).mean;
            out += &format!(
                "{},{},{},{},{}\n",
                cells::label(spec, point, pi),
                cells::label(spec, scheduler, si),
                num(mean(GOODPUT)),
                num(mean("/tunnel/acpf_fraction_mean")),
                num(mean("/e2e/cwnd_bytes_mean")),
            );
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use braid_sweep::points::contour_points;

    use super::super::specs::{contour, table};
    use super::*;
    use crate::test_support::parse_spec as parse;

    fn line(id: u64, goodput: Option<f64>) -> String {
        match goodput {
            Some(g) => format!(
                r#"{{"run":{id},"status":"ok","report":{{"goodput_mbps":{g},"paths":[{{"mean_mbps":{g}}},{{"mean_mbps":1.0}}],"e2e":{{"cwnd_bytes_mean":1000.0}},"tunnel":{{"acpf_fraction_mean":0.5}}}}}}"#
            ),
            None => format!(r#"{{"run":{id},"status":"error","report":null}}"#),
        }
    }

    #[test]
    fn goodput_per_set_and_scheduler_and_the_gain() {
        let spec = parse(&table(1_000_000, 2, 2000));
        let mut finished = Finished::new();
        // ccid5, short, newreno: CPF reps 0 and 1, ACPF rep 0 ok and rep 1 failed.
        finished.insert(0, line(0, Some(20.0)));
        finished.insert(1, line(1, Some(22.0)));
        finished.insert(2, line(2, Some(42.0)));
        finished.insert(3, line(3, None));
        let (goodput, gain) = goodput_tables(&spec, &finished).unwrap();
        let rows: Vec<&str> = goodput.lines().collect();
        assert_eq!(rows.len(), 1 + 2 * 2 * 3 * 2);
        assert!(rows[0].starts_with("tunnel,tunnel_cc,rate_mbps,delays,"));
        let cpf: Vec<&str> = rows[1].split(',').collect();
        assert_eq!(&cpf[..9], ["ccid5", "ccid5", "25", "short", "4", "16", "26", "newreno", "cpf"]);
        assert_eq!(cpf[9], "21");
        let ci: f64 = cpf[10].parse().unwrap();
        // sd = sqrt(2), n = 2: t(1) x sqrt(2) / sqrt(2).
        assert!((ci - 12.706).abs() < 1e-9, "{ci}");
        assert_eq!(&cpf[15..], ["2", "0"]);
        assert!(rows[2].ends_with(",1,1"), "{}", rows[2]);
        let g: Vec<&str> = gain.lines().nth(1).unwrap().split(',').collect();
        assert_eq!(&g[..4], ["ccid5", "25", "short", "newreno"]);
        assert_eq!(g[6], "100");
        // A set without runs has empty statistics.
        assert!(gain.lines().nth(2).unwrap().ends_with(",,,"), "{gain}");
    }

    #[test]
    fn the_contour_table_has_a_row_per_point_and_scheduler() {
        let points = contour_points(3, 7, 0.02).unwrap();
        let spec = parse(&contour(1_000_000, 2000, &points));
        let mut finished = Finished::new();
        finished.insert(0, line(0, Some(50.0)));
        let csv = contour_table(&spec, &finished).unwrap();
        let rows: Vec<&str> = csv.lines().collect();
        assert_eq!(rows.len(), 1 + 3 * 2);
        assert_eq!(rows[1], "0,cpf,50,0.5,1000");
        assert_eq!(rows[2], "0,acpf,,,");
    }
}
