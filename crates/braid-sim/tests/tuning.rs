//! The algorithms' scenario tables (`[tunnel.acpf]`, `[tunnel.bbr2]`, ...) reach the
//! algorithms a run drives: seen in the run's trace, against the same run with the defaults.

use braid_sim::{run, Scenario};

fn scenario(overrides: &[&str]) -> Scenario {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scenario::from_toml_str("", &o).expect("valid scenario")
}

/// The smallest ACPF fraction in the trace of a short TCP download over ACPF.
fn lowest_acpf_fraction(extra: &[&str]) -> f64 {
    let mut o = vec!["tunnel.scheduler=acpf", "e2e.bytes=5000000"];
    o.extend(extra);
    let out = run(&scenario(&o), false).expect("runs");
    let fractions = out.series.trace.iter().filter_map(|r| r.acpf_fraction);
    fractions.fold(f64::INFINITY, f64::min)
}

#[test]
fn acpf_never_goes_below_a_tuned_min_fraction() {
    // The default starts at the ACPF paper's minimum (Pieska et al. 2021), 0.47; a minimum of 0.6
    // is also where it starts (initial_fraction unset) and a floor it never crosses.
    assert_eq!(lowest_acpf_fraction(&[]), 0.47);
    assert_eq!(lowest_acpf_fraction(&["tunnel.acpf.min_fraction=0.6"]), 0.6);
}

/// Whether any path of a light 3 s UDP flow over BBRv3 was ever sampled in ProbeRTT.
fn enters_probe_rtt(extra: &[&str]) -> bool {
    let mut o = vec![
        "e2e.kind=udp",
        "e2e.udp_rate_mbps=5",
        "e2e.bytes=1875000",
        "tunnel.cc=bbr3",
        "tunnel.scheduler=rr",
    ];
    o.extend(extra);
    let out = run(&scenario(&o), false).expect("runs");
    out.series.path_trace.iter().any(|p| p.phase == "probe_rtt")
}

#[test]
fn a_tuned_probe_rtt_interval_reaches_the_tunnel_bbr() {
    // ProbeRTT is due when the ProbeRTT min filter is probe_rtt_interval old: not within 3 s
    // at the default 5 s, at least once at 1 s.
    assert!(!enters_probe_rtt(&[]));
    assert!(enters_probe_rtt(&["tunnel.bbr2.probe_rtt_interval_ms=1000"]));
}

#[test]
fn a_scenario_edited_in_code_with_bad_tables_is_refused_not_run() {
    let mut s = scenario(&["e2e.cc=bbr3", "e2e.bytes=100000"]);
    s.e2e.bbr2.beta_percent = 100;
    let err = run(&s, false).unwrap_err().to_string();
    assert_eq!(err, "e2e.bbr2.beta_percent = 100: must be in 1..=99");
    let mut s = scenario(&["tunnel.cc=bbr2", "e2e.bytes=100000"]);
    s.tunnel.bbr2.loss_thresh_percent = 0;
    let err = run(&s, false).unwrap_err().to_string();
    assert!(err.contains("bbr2.loss_thresh_percent: must be in 1..=50"), "{err}");
}
