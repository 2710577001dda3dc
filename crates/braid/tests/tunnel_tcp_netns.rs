//! `braid tunnel` with kernel TCP paths (`interface.transport = "tcp"`): two daemons in network
//! namespaces over the default scenario's two 50 Mbit/s htb paths, each path one kernel TCP
//! connection running the configured congestion control. Needs root. Every test builds its own
//! namespaces under a unique prefix and checks that nothing of it remains.
//!
//! The three properties the TCP tunnels of Pieska et al. 2024 need (its section 2.2): a download
//! arrives intact over both paths with the kernel running `tunnel.cc`; CPF keeps a light load on
//! the preferred path; a path that dies and returns is reconnected and used again.

mod common;

use std::net::Ipv4Addr;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use braid_lab::lab::{check_scenario, start_tunnel, transfer_configs, TRANSFER_PORT};
use braid_lab::netns::unique_prefix;
use braid_lab::topology::{Emulator, Topology, TopologyOptions};
use braid_lab::transfer::{run_pair, TransferReport};
use braid_lab::tunnel::TunnelPair;
use braid_net::metrics::Snapshot;
use braid_sim::Scenario;

use common::{braid_exe, fail_path_1_during, leftovers, serial, udp_flow, Failover};

/// The default scenario with BBR on every path's TCP connection, `overrides` on top, its
/// topology with htb paths, and a TCP-transport tunnel pair routed on the UE.
fn bring_up(overrides: &[&str]) -> (Scenario, Topology, TunnelPair, String) {
    let mut all = ["tunnel.transport=tcp", "tunnel.cc=bbr", "tunnel.reliability=reliable"]
        .map(String::from)
        .to_vec();
    all.extend(overrides.iter().map(|s| s.to_string()));
    let s = Scenario::from_toml_str("", &all).unwrap();
    let prefix = unique_prefix("btcp");
    let opts = TopologyOptions { prefix: prefix.clone(), emulator: Emulator::Htb };
    let topo = Topology::build(&s, &opts).unwrap();
    let pair = start_tunnel(&topo, &s, braid_exe()).unwrap();
    (s, topo, pair, prefix)
}

/// The scenario's download from the server (namespace `server_ns`) to the UE's tunnel address
/// `ue` (in `ue_ns`).
fn download(
    s: &Scenario,
    (server_ns, ue_ns): (&str, &str),
    ue: Ipv4Addr,
    cancel: &AtomicBool,
) -> TransferReport {
    let cc = check_scenario(s).unwrap().tcp_cc().unwrap();
    let (send, recv) = transfer_configs(s, cc, (ue, TRANSFER_PORT).into());
    run_pair(server_ns, ue_ns, &send, &recv, cancel)
        .expect("the download completes and every byte checks")
}

/// Each path's share of the bytes a daemon sent, in percent.
fn shares(status: &Snapshot) -> Vec<f64> {
    let total: u64 = status.paths.iter().map(|p| p.tx_bytes).sum();
    status.paths.iter().map(|p| p.tx_bytes as f64 * 100.0 / total.max(1) as f64).collect()
}

#[test]
fn integrity_20_mb_over_two_tcp_paths_running_bbr_arrive_byte_exact() {
    let _turn = serial();
    let (s, topo, pair, prefix) = bring_up(&["e2e.bytes=20000000", "tunnel.scheduler=rr"]);
    let ns = (topo.server().name(), topo.ue().name());
    let report = download(&s, ns, pair.spec().client_addr, &AtomicBool::new(false));
    let (server, client) = (pair.server_status().unwrap(), pair.client_status().unwrap());
    drop((pair, topo));
    // The receiver checks every byte against the sender's deterministic stream.
    assert_eq!(report.receiver.bytes, 20_000_000);
    let share = shares(&server);
    eprintln!(
        "tcp integrity: DLCT {:.2} s ({:.1} Mbit/s); path shares {:.1}% / {:.1}%; \
         kernel retransmissions {} / {}",
        report.receiver.dlct_s,
        report.receiver.goodput_mbps,
        share[0],
        share[1],
        server.paths[0].lost_pkts,
        server.paths[1].lost_pkts,
    );
    assert!(server.paths.iter().all(|p| p.tx_bytes > 2_000_000), "both paths carry: {server:?}");
    for (side, st) in [("server", &server), ("client", &client)] {
        for p in &st.paths {
            assert_eq!(p.kernel_cc.as_deref(), Some("bbr"), "{side} {}: {st:?}", p.name);
        }
    }
    assert!(leftovers(&prefix).is_empty());
}

#[test]
fn preference_cpf_under_light_load_keeps_99_percent_on_the_cheaper_tcp_path() {
    let _turn = serial();
    let (_s, topo, pair, prefix) = bring_up(&["tunnel.scheduler=cpf"]);
    let bps = udp_flow(&topo, &pair, 5.0, Duration::from_secs(3), Duration::from_secs(1));
    let status = pair.server_status().unwrap();
    drop((pair, topo));
    let share = shares(&status);
    eprintln!(
        "tcp preference: {:.2} Mbit/s through; path 1 carried {:.3}% of the bytes",
        bps / 1e6,
        share[0]
    );
    assert!((4.5e6..5.5e6).contains(&bps), "the flow gets through: {:.2} Mbit/s", bps / 1e6);
    assert!(share[0] >= 99.0, "path 1 carried {:.2}%: {status:?}", share[0]);
    assert!(leftovers(&prefix).is_empty());
}

#[test]
fn failover_a_download_survives_path_1_dying_and_path_1_reconnects_and_is_used_again() {
    let _turn = serial();
    let (s, topo, pair, prefix) = bring_up(&["e2e.bytes=40000000", "tunnel.scheduler=cpf"]);
    let cancel = AtomicBool::new(false);
    let ue = pair.spec().client_addr;
    let (server_ns, ue_ns) = (topo.server().name().to_string(), topo.ue().name().to_string());
    let Failover { result: report, seen_down, tx_at_return, tx_after } =
        fail_path_1_during(&topo, &pair, || download(&s, (&server_ns, &ue_ns), ue, &cancel));
    drop((pair, topo));
    eprintln!(
        "tcp failover: DLCT {:.2} s; path 1 tx {tx_at_return} pkts while down -> {tx_after} after",
        report.receiver.dlct_s
    );
    assert_eq!(report.receiver.bytes, 40_000_000);
    assert!(seen_down, "the server saw path 1 go down");
    assert!(tx_after > tx_at_return + 1000, "path 1 used again: {tx_at_return} -> {tx_after}");
    assert!(leftovers(&prefix).is_empty());
}

/// No hijacking over TCP: during a download, an intruder in the UE's namespace opens a TCP
/// connection to each of the server's path ports every 200 ms and sends an initiation-shaped
/// frame (116 bytes of junk) on it, keeping the connections open. None of them authenticates,
/// so none replaces a path's connection: the download arrives byte-exact, no new handshake
/// happens, both paths stay up, and the download takes at most 1.5 times as long as the same
/// download without the intruder, run just before in the same tunnel (the bound is stated
/// here, before the run; debug daemons on a shared 2-core machine vary by a few tenths). Before
/// pending connections, each intruder connection became its path's at once.
#[test]
fn connections_from_an_intruder_every_200_ms_change_no_path() {
    use std::io::Write;
    use std::net::{SocketAddr, TcpStream};
    use std::sync::atomic::Ordering;
    use std::thread;

    use braid_lab::netns::run_in;
    use braid_lab::tunnel::BASE_PORT;

    let _turn = serial();
    let (s, topo, pair, prefix) = bring_up(&["e2e.bytes=20000000", "tunnel.scheduler=rr"]);
    let ns = (topo.server().name(), topo.ue().name());
    let ue = pair.spec().client_addr;
    let clean = download(&s, ns, ue, &AtomicBool::new(false));
    let before = pair.server_status().unwrap();
    let targets: Vec<SocketAddr> = topo
        .paths()
        .iter()
        .enumerate()
        .map(|(i, l)| (l.upstream.addr, BASE_PORT + i as u16).into())
        .collect();
    let stop = AtomicBool::new(false);
    /// Stops the intruder however the download ends, a panic included.
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let (report, connects) = thread::scope(|sc| {
        let intruder = sc.spawn(|| {
            run_in(ns.1, || {
                let mut open = Vec::new();
                let mut connects = 0;
                let mut junk = vec![0u8, 116, 1, 0, 0, 0];
                junk.extend((0..112u32).map(|k| (k.wrapping_mul(2654435761) >> 24) as u8));
                let deadline = std::time::Instant::now() + Duration::from_secs(120);
                while !stop.load(Ordering::Relaxed) && std::time::Instant::now() < deadline {
                    for t in &targets {
                        if let Ok(mut c) = TcpStream::connect_timeout(t, Duration::from_millis(100))
                        {
                            let _ = c.write_all(&junk);
                            open.push(c);
                            connects += 1;
                        }
                    }
                    thread::sleep(Duration::from_millis(200));
                }
                connects
            })
            .unwrap()
        });
        let guard = StopOnDrop(&stop);
        let report = download(&s, ns, ue, &AtomicBool::new(false));
        drop(guard);
        (report, intruder.join().unwrap())
    });
    let after = pair.server_status().unwrap();
    drop((pair, topo));
    eprintln!(
        "tcp intruder: {connects} connections; DLCT {:.2} s with, {:.2} s without; handshakes {} -> {}",
        report.receiver.dlct_s, clean.receiver.dlct_s, before.handshakes, after.handshakes
    );
    assert_eq!(report.receiver.bytes, 20_000_000);
    assert!(connects >= 10, "the intruder connected {connects} times");
    assert!(
        report.receiver.dlct_s <= 1.5 * clean.receiver.dlct_s,
        "DLCT {:.2} s with the intruder, {:.2} s without",
        report.receiver.dlct_s,
        clean.receiver.dlct_s
    );
    assert_eq!(after.handshakes, before.handshakes, "no new session");
    assert!(after.paths.iter().all(|p| p.up), "{after:?}");
    assert!(leftovers(&prefix).is_empty(), "{:?}", leftovers(&prefix));
}
