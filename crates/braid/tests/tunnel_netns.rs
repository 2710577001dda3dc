//! `braid tunnel` for real: two daemons in network namespaces over emulated paths (Figure 1
//! of Pieska et al. 2024, built by braid-lab), carrying kernel TCP and UDP. Needs root. Every test
//! builds its own namespaces under a unique prefix and checks that nothing of it remains.
//!
//! What the data plane must do (docs/design.md section 6), one test each: integrity under reordering and loss,
//! aggregation of two paths, CPF's preference under light load, failover and rejoin.

mod common;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use braid_lab::host::attempts;
use braid_lab::lab::{check_scenario, start_tunnel, transfer_configs, TRANSFER_PORT};
use braid_lab::netns::unique_prefix;
use braid_lab::topology::{Emulator, Topology, TopologyOptions};
use braid_lab::transfer::run_pair;
use braid_lab::tunnel::TunnelPair;
use braid_sim::Scenario;

use common::{
    braid_exe, cut_path_1_uplink_during, fail_path_1_during, leftovers, linkem, serial, udp_flow,
    Failover, UplinkCut,
};

/// A topology and a tunnel pair for `overrides` on the default scenario.
fn bring_up(overrides: &[&str], emulator: Emulator) -> (Scenario, Topology, TunnelPair, String) {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let s = Scenario::from_toml_str("", &overrides).unwrap();
    let prefix = unique_prefix("bt");
    let topo = Topology::build(&s, &TopologyOptions { prefix: prefix.clone(), emulator }).unwrap();
    let pair = start_tunnel(&topo, &s, braid_exe()).unwrap();
    (s, topo, pair, prefix)
}

#[test]
fn aggregation_greedy_udp_over_two_50_mbit_paths_exceeds_one_path() {
    let _turn = serial();
    let (_s, topo, pair, prefix) = bring_up(&["tunnel.scheduler=cpf"], Emulator::Htb);
    // The claim is aggregation: the tunnel carries more than one 50 Mbit/s path can (46.5
    // Mbit/s of 1400-byte inner packets; two carry about 93). The bar is 60 Mbit/s, 1.3 times
    // one path, which needs both. How close it comes to the 93 ceiling is for release-build
    // measurements (`braid lab` over the same links, docs/validation.md): here debug daemons
    // share 2 cores with the generator and the receiver, and a 3-second window follows the
    // host. The same binary gave 88.7-92.7 in 8 windows at one time and 64-83 in others while
    // the hypervisor took about a fifth of the CPU (steal in /proc/stat, printed below); the
    // previous commit's binary, side by side, did the same. Up to five windows, one must
    // reach the bar, every window printed with the CPU steal during it. The offered load stays well above capacity: at 100
    // Mbit/s CPF leaves path 2 short of data.
    let bps = attempts(
        "aggregation",
        5,
        || udp_flow(&topo, &pair, 150.0, Duration::from_secs(5), Duration::from_secs(2)),
        |&bps| {
            eprintln!("aggregation: {:.1} Mbit/s of inner IP", bps / 1e6);
            if bps >= 60e6 {
                Ok(())
            } else {
                Err(format!("inner IP throughput {:.1} Mbit/s", bps / 1e6))
            }
        },
    );
    let status = pair.server_status().unwrap();
    drop((pair, topo));
    if let Err(e) = bps {
        panic!("{e}; {status:?}");
    }
    assert!(status.paths.iter().all(|p| p.tx_bytes > 10_000_000), "both paths carry: {status:?}");
    assert!(leftovers(&prefix).is_empty());
}

#[test]
fn preference_cpf_under_light_load_keeps_99_percent_on_the_cheaper_path() {
    let _turn = serial();
    let (_s, topo, pair, prefix) = bring_up(&["tunnel.scheduler=cpf"], Emulator::Htb);
    let bps = udp_flow(&topo, &pair, 5.0, Duration::from_secs(3), Duration::from_secs(1));
    let status = pair.server_status().unwrap();
    drop((pair, topo));
    assert!((4.5e6..5.5e6).contains(&bps), "the flow gets through: {:.2} Mbit/s", bps / 1e6);
    let total: u64 = status.paths.iter().map(|p| p.tx_bytes).sum();
    let share = status.paths[0].tx_bytes as f64 / total as f64;
    eprintln!("preference: path 1 carried {:.3}% of {total} bytes", share * 100.0);
    assert!(share >= 0.99, "path 1 carried {:.2}% of {total} bytes: {status:?}", share * 100.0);
    assert!(leftovers(&prefix).is_empty());
}

#[test]
fn failover_a_download_survives_path_1_going_down_and_path_1_is_used_again() {
    let _turn = serial();
    let (s, topo, pair, prefix) = bring_up(&["e2e.bytes=40000000"], Emulator::Htb);
    let cc = check_scenario(&s).unwrap().tcp_cc().unwrap();
    let (send, recv) = transfer_configs(&s, cc, (pair.spec().client_addr, TRANSFER_PORT).into());
    let cancel = AtomicBool::new(false);
    let (server_ns, ue_ns) = (topo.server().name().to_string(), topo.ue().name().to_string());
    let Failover { result: report, seen_down, tx_at_return, tx_after } =
        fail_path_1_during(&topo, &pair, || run_pair(&server_ns, &ue_ns, &send, &recv, &cancel));
    drop((pair, topo));
    let report = report.expect("the download completes without the connection resetting");
    eprintln!(
        "failover: DLCT {:.2} s; path 1 tx {tx_at_return} while down -> {tx_after} after",
        report.receiver.dlct_s
    );
    assert_eq!(report.receiver.bytes, 40_000_000);
    assert!(seen_down, "the server saw path 1 go down");
    assert!(tx_after > tx_at_return + 1000, "path 1 used again: {tx_at_return} -> {tx_after}");
    assert!(leftovers(&prefix).is_empty());
}

/// The stall of a path whose feedback is lost for longer than its RTO (RFC 9293 section
/// 3.10.7.4, RFC 5681 section 4.2: a duplicate must be acknowledged at once). Reliable paths,
/// as the daemon's default; path rates of 20 Mbit/s so that the 40 MB download is still running
/// when the cut ends. For 10 s the client's datagrams on path 1 are dropped at the server: the
/// server's resends of path 1's flight reach the client, which already has them. Once the
/// uplink returns, path 1 must carry data again within 1 s.
#[test]
fn feedback_cut_path_1_carries_data_within_1_s_of_its_feedback_returning() {
    let _turn = serial();
    let overrides = [
        "e2e.bytes=40000000",
        "tunnel.reliability=reliable",
        "paths.0.rate_mbps=20",
        "paths.1.rate_mbps=20",
    ];
    let (s, topo, pair, prefix) = bring_up(&overrides, Emulator::Htb);
    let cc = check_scenario(&s).unwrap().tcp_cc().unwrap();
    let (send, recv) = transfer_configs(&s, cc, (pair.spec().client_addr, TRANSFER_PORT).into());
    let cancel = AtomicBool::new(false);
    let (server_ns, ue_ns) = (topo.server().name().to_string(), topo.ue().name().to_string());
    let cut = Duration::from_secs(10);
    let UplinkCut { result: report, seen_down, at_cut, at_return, one_s_after, after } =
        cut_path_1_uplink_during(&topo, &pair, cut, || {
            run_pair(&server_ns, &ue_ns, &send, &recv, &cancel)
        });
    let (server, client) = (pair.server_status().unwrap(), pair.client_status().unwrap());
    drop((pair, topo));
    let report = report.expect("the download completes without the connection resetting");
    eprintln!(
        "feedback cut: DLCT {:.2} s; path 1 client rx / server tx: {at_cut:?} at the cut, \
         {at_return:?} at its end, {one_s_after:?} 1 s later, {after:?} at the end; client \
         duplicates {}",
        report.receiver.dlct_s, client.reorder_duplicates
    );
    // The receiver checks every byte against the sender's deterministic stream.
    assert_eq!(report.receiver.bytes, 40_000_000);
    assert!(at_cut.0 > 1000, "path 1 carried the download before the cut: {at_cut:?}");
    assert!(seen_down, "the server heard nothing on path 1 during the cut");
    // A resend per backed-off RTO (and a probe now and then) is a handful of datagrams; data
    // is hundreds (1700 packets/s at 20 Mbit/s).
    assert!(
        one_s_after.0 > at_return.0 + 200,
        "path 1 brings the client data within 1 s: {at_return:?} -> {one_s_after:?}; {server:?}"
    );
    assert!(leftovers(&prefix).is_empty());
}

/// A reliable path that loses a burst repairs it: its retransmissions leave the daemon as full
/// messages. (Until bec3dd6 they were marked compact, whose nonce slot the seal refuses for a
/// resent sequence number, and never left; once NewReno paths' windows grew into their
/// buffers, every download of this cell stalled with both paths in timeout backoff.)
#[test]
fn reliable_newreno_paths_repair_a_loss_burst_and_the_download_completes() {
    let _turn = serial();
    let emulator = linkem();
    let overrides = [
        "e2e.bytes=30000000",
        "e2e.cc=bbr",
        "tunnel.cc=newreno",
        "tunnel.reliability=reliable",
        "tunnel.scheduler=srtt",
    ];
    let (s, topo, pair, prefix) = bring_up(&overrides, emulator);
    let cc = check_scenario(&s).unwrap().tcp_cc().unwrap();
    let (send, recv) = transfer_configs(&s, cc, (pair.spec().client_addr, TRANSFER_PORT).into());
    let (server_ns, ue_ns) = (topo.server().name().to_string(), topo.ue().name().to_string());
    let report = run_pair(&server_ns, &ue_ns, &send, &recv, &AtomicBool::new(false));
    let server = pair.server_status().unwrap();
    drop((pair, topo));
    let report = report.expect("30 MB delivered and verified");
    assert_eq!(report.receiver.bytes, 30_000_000);
    let lost: u64 = server.paths.iter().map(|p| p.lost_pkts).sum();
    eprintln!("reliable NewReno: DLCT {:.2} s; {lost} packets resent", report.receiver.dlct_s);
    assert!(lost > 0, "the paths lost and resent packets: {server:?}");
    assert!(leftovers(&prefix).is_empty());
}

#[test]
fn integrity_50_mb_arrive_byte_exact_under_reordering_and_loss_on_one_path() {
    let _turn = serial();
    // Round robin over paths of 20 and 40 ms RTT reorders every other packet; path 2 also
    // loses 1% of what it carries. linkem emulates both (htb cannot delay or lose). BBR end to
    // end, because Cubic over 0.5% loss at 80 ms RTT would take minutes (Mathis et al. 1997).
    let emulator = linkem();
    let (s, topo, pair, prefix) = bring_up(
        &["e2e.bytes=50000000", "e2e.cc=bbr", "paths.1.loss=0.01", "tunnel.scheduler=rr"],
        emulator,
    );
    let cc = check_scenario(&s).unwrap().tcp_cc().unwrap();
    let (send, recv) = transfer_configs(&s, cc, (pair.spec().client_addr, TRANSFER_PORT).into());
    let (server_ns, ue_ns) = (topo.server().name().to_string(), topo.ue().name().to_string());
    let report = run_pair(&server_ns, &ue_ns, &send, &recv, &AtomicBool::new(false));
    let (server, client) = (pair.server_status().unwrap(), pair.client_status().unwrap());
    drop((pair, topo));
    // The receiver checks every byte against the sender's deterministic stream.
    let report = report.expect("50 MB delivered and verified");
    assert_eq!(report.receiver.bytes, 50_000_000);
    eprintln!(
        "integrity: DLCT {:.2} s; path 2 lost {} of {} packets; {} released after a gap was given up",
        report.receiver.dlct_s,
        server.paths[1].lost_pkts,
        server.paths[1].tx_pkts,
        client.reorder_released_on_timeout
    );
    assert!(server.paths[1].tx_pkts > 1000, "path 2 carried part of the download: {server:?}");
    assert!(server.paths[1].lost_pkts > 0, "path 2 lost packets: {server:?}");
    // The daemon's default: data in compact messages (4-byte header), on both paths and both
    // ways (the client's ACKs too), with the reordering and the repairs above.
    for (end, status) in [("server", &server), ("client", &client)] {
        for (i, p) in status.paths.iter().enumerate() {
            eprintln!(
                "{end} path {}: {} of {} data packets compact",
                i + 1,
                p.compact_tx_pkts,
                p.tx_pkts
            );
            assert!(
                p.compact_tx_pkts * 100 >= p.tx_pkts * 95,
                "{end} path {}: {} of {} compact",
                i + 1,
                p.compact_tx_pkts,
                p.tx_pkts
            );
        }
    }
    assert!(leftovers(&prefix).is_empty());
}

/// A client that restarts mid-session (a new process: new sockets, a new instance in its
/// handshake) carries traffic again at once. The server learns of the restart from the new
/// instance when the new keys come into use and starts its tunnel sender and receiver afresh;
/// before, the restarted client completed its handshake but no download passed (the server's
/// receiver took the client's new path sequence numbers for duplicates), until the server too
/// was restarted.
#[test]
fn restart_a_restarted_client_carries_a_download_in_its_new_session() {
    let _turn = serial();
    let (s, topo, mut pair, prefix) =
        bring_up(&["e2e.bytes=10000000", "e2e.cc=cubic"], Emulator::Htb);
    let cc = check_scenario(&s).unwrap().tcp_cc().unwrap();
    let (mut send, mut recv) =
        transfer_configs(&s, cc, (pair.spec().client_addr, TRANSFER_PORT).into());
    send.timeout = Duration::from_secs(20);
    recv.timeout = Duration::from_secs(20);
    let (server_ns, ue_ns) = (topo.server().name().to_string(), topo.ue().name().to_string());
    let first = run_pair(&server_ns, &ue_ns, &send, &recv, &AtomicBool::new(false));
    let before = pair.server_status().unwrap();
    let took = pair.restart_client(braid_exe(), Duration::from_secs(10)).unwrap();
    // The new process made a new TUN device: the lab's default route through it goes again
    // (start_tunnel adds it; the daemon itself routes only its own subnet).
    topo.ue().ip(&["route", "replace", "default", "dev", braid_lab::tunnel::CLIENT_IF]).unwrap();
    let second = run_pair(&server_ns, &ue_ns, &send, &recv, &AtomicBool::new(false));
    let after = pair.server_status().unwrap();
    drop((pair, topo));
    let (first, second) = (first.expect("first download"), second.expect("after the restart"));
    let took = took.expect("the restarted client establishes a session");
    eprintln!(
        "restart: handshake {:.2} s; DLCT {:.2} s before, {:.2} s after",
        took.as_secs_f64(),
        first.receiver.dlct_s,
        second.receiver.dlct_s
    );
    assert_eq!(second.receiver.bytes, 10_000_000);
    assert!(after.handshakes > before.handshakes, "a new handshake: {after:?}");
    // Both paths carry the second download (the server moved each to the new sockets).
    for (b, a) in before.paths.iter().zip(&after.paths) {
        assert_ne!(a.remote, b.remote, "path {} follows the new socket", a.name);
    }
    assert!(second.receiver.dlct_s < first.receiver.dlct_s * 2.0 + 1.0);
    assert!(leftovers(&prefix).is_empty());
}

/// `braid lab --cut`: the daemon's default tunnel (scenarios/bonding.toml), path 1 dead in
/// both directions from 1 s to 2.5 s after a 40 MB Cubic download started. Targets stated
/// before measuring (the bonding issue's): the longest time without a byte at the receiver at
/// most 300 ms, path 1 carrying data again at most 1000 ms after the restore, the download
/// completing. (htb emulates no delay, so liveness works from sub-millisecond RTTs here:
/// 100 ms dead time; scripts/failover.py measures Table 1's delays with linkem.)
#[test]
fn cut_path_1_fails_over_within_300_ms_and_rejoins_within_1_s() {
    use braid_lab::lab::cut::CutSpec;
    use braid_lab::lab::{run, LabMode, LabOptions};
    let _turn = serial();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/bonding.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let overrides = ["e2e.bytes=40000000".to_string(), "e2e.cc=cubic".to_string()];
    let s = Scenario::from_toml_str(&text, &overrides).unwrap();
    let opts = LabOptions {
        mode: LabMode::Tunnel,
        emulator: Emulator::Htb,
        braid_exe: braid_exe().to_path_buf(),
        cut: Some(CutSpec { path: "wifi".into(), from_s: 1.0, to_s: 2.5 }),
        ..LabOptions::default()
    };
    let _accepted = attempts(
        "cut",
        3,
        || run(&s, &opts, &AtomicBool::new(false)).map(|o| o.report),
        |r| {
            let r = r.as_ref().map_err(|e| e.to_string())?;
            let c = r.cut.as_ref().ok_or("no cut in the report")?;
            eprintln!("cut: {c:?}, DLCT {:.2} s", r.dlct_s);
            if !c.declared_down {
                return Err("the server never declared the path down".into());
            }
            if c.failover_gap_ms > 300.0 {
                return Err(format!("failover gap {} ms", c.failover_gap_ms));
            }
            match c.rejoin_ms {
                Some(ms) if ms <= 1000.0 => Ok(()),
                other => Err(format!("rejoin {other:?} ms")),
            }
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
}
