//! Sanity against physics: what the links can carry bounds what the simulator reports.

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
