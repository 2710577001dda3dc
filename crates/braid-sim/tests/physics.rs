//! Sanity against physics: what the links can carry bounds what the simulator reports.

use std::sync::Arc;

use braid_core::linkmodel::MahimahiTrace;
use braid_sim::scenario::TraceFile;
use braid_sim::{run, Scenario};

fn scenario(overrides: &[&str]) -> Scenario {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scenario::from_toml_str("", &o).expect("valid scenario")
}

/// A 50 Mbit/s path carries at most 50 * 1448 / 1514 = 47.8 Mbit/s of TCP payload (MSS 1448,
/// 52 bytes of TCP/IP headers, 14 of Ethernet framing); a 300 MB download over it without the
/// tunnel must reach 46 Mbit/s whatever the congestion control.
#[test]
fn single_path_download_fills_a_50_mbps_path() {
    for cc in ["cubic", "newreno", "bbr"] {
        let s = scenario(&[&format!("e2e.cc={cc}")]);
        let r = run(&s, true).expect("baseline runs").report;
        assert_eq!(r.e2e.bytes_delivered, 300_000_000, "{cc}");
        assert!(r.goodput_mbps >= 46.0, "{cc}: goodput {:.2} Mbit/s < 46", r.goodput_mbps);
        assert!(
            r.goodput_mbps <= 50.0 * 1448.0 / 1514.0,
            "{cc}: goodput {:.2} above the path's payload capacity",
            r.goodput_mbps
        );
    }
}

/// Greedy UDP over the tunnel with CPF and a rate-based tunnel CC keeps both default paths
/// busy: their wire rates (all headers counted) add up to at least 95 of the 100 Mbit/s.
#[test]
fn greedy_udp_keeps_both_paths_busy() {
    for tunnel_cc in ["bbr", "ccid5"] {
        let s = scenario(&[
            "e2e.kind=udp",
            "e2e.bytes=50000000",
            "e2e.udp_rate_mbps=120",
            &format!("tunnel.cc={tunnel_cc}"),
            "tunnel.scheduler=cpf",
        ]);
        let r = run(&s, false).expect("udp runs").report;
        let sum: f64 = r.paths.iter().map(|p| p.mean_mbps).sum();
        assert!(sum >= 95.0, "{tunnel_cc}: paths carried {sum:.2} Mbit/s in all: {:?}", r.paths);
        for p in &r.paths {
            assert!(
                p.mean_mbps <= 50.0 + 1e-6,
                "{tunnel_cc}: {} carried {:.3} Mbit/s on a 50 Mbit/s link",
                p.name,
                p.mean_mbps
            );
        }
    }
}

/// No run delivers more than the paths can carry.
#[test]
fn no_run_exceeds_the_sum_of_path_capacities() {
    for (e2e, sched) in [("cubic", "cpf"), ("bbr", "srtt"), ("newreno", "rr")] {
        let s = scenario(&[
            &format!("e2e.cc={e2e}"),
            &format!("tunnel.scheduler={sched}"),
            "e2e.bytes=30000000",
        ]);
        let r = run(&s, false).expect("runs").report;
        assert!(r.goodput_mbps < 100.0, "{e2e}/{sched}: goodput {:.2}", r.goodput_mbps);
        for p in &r.paths {
            assert!(
                p.mean_mbps <= 50.0 + 1e-6,
                "{e2e}/{sched}: {} at {:.3} Mbit/s",
                p.name,
                p.mean_mbps
            );
        }
    }
}

/// A scenario whose path 1 downlink follows a constant trace of `per_ms` opportunities per
/// millisecond, with greedy UDP well above that rate.
fn constant_trace_scenario(per_ms: usize, extra: &[&str]) -> Scenario {
    let mut o = vec!["e2e.kind=udp", "e2e.udp_rate_mbps=100", "e2e.bytes=20000000"];
    o.extend_from_slice(extra);
    let mut s = scenario(&o);
    let trace = MahimahiTrace::from_opportunities_ms(vec![1; per_ms]).expect("valid trace");
    s.paths[0].trace = Some(TraceFile::with_trace("constant", Arc::new(trace)));
    s
}

/// One opportunity carries 1500 bytes of frame, so a trace with N opportunities every
/// millisecond carries N * 1500 * 8 / 1 ms = N * 12 Mbit/s of wire rate, framing included.
/// Without the tunnel, UDP at 100 Mbit/s keeps the bottleneck FIFO full from the first packet
/// (10 ms, the server link's delay) until the source stops; the DLCT adds the server link and
/// path delays (20 ms) to a run of at least 1.6 s, so the mean wire rate over the DLCT is at
/// least 98% of the trace's.
#[test]
fn a_constant_trace_of_n_opportunities_per_ms_carries_n_times_12_mbps() {
    for n in [1, 2, 4] {
        let capacity = 12.0 * n as f64;
        let r = run(&constant_trace_scenario(n, &[]), true).expect("baseline runs").report;
        let wire = r.paths[0].mean_mbps;
        assert!(
            wire >= 0.98 * capacity && wire <= capacity + 1e-9,
            "{n} per ms: {wire:.3} Mbit/s on a {capacity} Mbit/s trace"
        );
        println!("{n} opportunities/ms: baseline wire rate {wire:.3} of {capacity} Mbit/s");
        // Through the tunnel (one path, BBR) the same trace bounds the rate too.
        let s = constant_trace_scenario(n, &["paths=[{ name = \"wifi\" }]"]);
        let r = run(&s, false).expect("tunnel runs").report;
        let wire = r.paths[0].mean_mbps;
        assert!(
            wire >= 0.9 * capacity && wire <= capacity + 1e-9,
            "{n} per ms through the tunnel: {wire:.3} Mbit/s on a {capacity} Mbit/s trace"
        );
        println!("{n} opportunities/ms: tunnel wire rate {wire:.3} of {capacity} Mbit/s");
    }
}

/// CoDel (RFC 8289) keeps the standing queue near its 5 ms target. A greedy Cubic download
/// over one 50 Mbit/s path with a 500-packet FIFO (121 ms when full) fills the drop-tail FIFO;
/// with CDL1 the mean sojourn stays within a few ms of the target.
#[test]
fn cdl1_keeps_the_bottleneck_sojourn_near_5_ms() {
    let mut delays = Vec::new();
    for key in ["CDL0", "CDL1"] {
        let s = scenario(&[&format!("keys={key}"), "e2e.bytes=60000000"]);
        let r = run(&s, true).expect("baseline runs").report;
        let p = &r.paths[0];
        println!(
            "{key}: bottleneck queue delay mean {:.2} ms max {:.1} ms, drops {} (CoDel {}), \
             goodput {:.2} Mbit/s",
            p.queue_delay_ms_mean,
            p.queue_delay_ms_max,
            p.drops,
            r.drops.bottleneck_aqm[0],
            r.goodput_mbps
        );
        delays.push((p.queue_delay_ms_mean, r.drops.bottleneck_aqm[0], r.goodput_mbps));
    }
    let (droptail, codel) = (delays[0], delays[1]);
    assert!(droptail.0 > 30.0, "drop-tail mean sojourn {:.2} ms", droptail.0);
    assert_eq!(droptail.1, 0, "no CoDel drops without CoDel");
    assert!((1.0..=10.0).contains(&codel.0), "CoDel mean sojourn {:.2} ms", codel.0);
    assert!(codel.1 > 0, "CoDel never dropped");
    // Controlling delay does not starve the link: Cubic still fills most of it.
    assert!(codel.2 > 40.0, "goodput {:.2} Mbit/s under CoDel", codel.2);
}

/// CDL1 on the default two-path tunnel parses, runs, and passes the accounting check.
#[test]
fn cdl1_runs_over_the_tunnel() {
    for tunnel_cc in ["bbr", "newreno"] {
        let s =
            scenario(&["keys=SHORT+CDL1", "e2e.bytes=20000000", &format!("tunnel.cc={tunnel_cc}")]);
        assert_eq!(s.keys, ["SHORT", "CDL1"]);
        let r = run(&s, false).expect("CDL1 runs").report;
        assert_eq!(r.e2e.bytes_delivered, 20_000_000);
        for (i, p) in r.paths.iter().enumerate() {
            assert!(r.drops.bottleneck_aqm[i] <= p.drops);
            println!(
                "CDL1 {tunnel_cc}: {} queue delay mean {:.2} ms max {:.1} ms, CoDel drops {}",
                p.name, p.queue_delay_ms_mean, p.queue_delay_ms_max, r.drops.bottleneck_aqm[i]
            );
        }
    }
}

/// The shipped trace scenario loads its traces relative to its own directory and runs; no path
/// carries more than its trace's highest rate level (45 and 24 Mbit/s, traces/README.md).
#[test]
fn the_trace_scenario_runs() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/traces.toml");
    let s = Scenario::load(file, &["e2e.bytes=10000000".to_string()]).expect("loads");
    let r = run(&s, false).expect("runs").report;
    assert_eq!(r.e2e.bytes_delivered, 10_000_000);
    for (p, peak) in r.paths.iter().zip([45.0, 24.0]) {
        assert!(p.mean_mbps <= peak, "{} at {:.2} Mbit/s", p.name, p.mean_mbps);
    }
}
