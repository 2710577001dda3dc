//! Two clients through one server at the same time, for real in namespaces (braid-lab's
//! `multi_client` bed: a proxy with a `[[peer]]` per UE, two paths per UE sharing the server's
//! path sockets). Needs root. Bounded (20 MB per download, 30 s limits); the bed's namespaces
//! are gone afterwards.

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::thread;
use std::time::Duration;

use braid_lab::multi_client::MultiClientBed;
use braid_lab::netns::{list_netns_with_prefix, run_in};
use braid_lab::transfer::{run_pair, KernelCc, ReceiverConfig, SenderConfig};

use common::{braid_exe, serial};

const BYTES: u64 = 20_000_000;
const PORT: u16 = 5301;

fn configs(to: SocketAddr) -> (SenderConfig, ReceiverConfig) {
    let limit = Duration::from_secs(30);
    let send = SenderConfig {
        connect: to,
        bytes: BYTES,
        cc: KernelCc::Cubic,
        seed: 3,
        sample_interval: Duration::from_millis(100),
        timeout: limit,
        idle_timeout: Duration::from_secs(10),
    };
    let recv = ReceiverConfig {
        listen: to,
        bin: Duration::from_millis(100),
        timeout: limit,
        idle_timeout: Duration::from_secs(10),
    };
    (send, recv)
}

/// What must hold: both UEs download at the same time through the one server and receive every
/// byte; the server keeps a session, paths and counters per peer (its status and its metrics
/// name each path's peer); a UE that sends from the other UE's inner address has those packets
/// dropped and counted (cryptokey routing), not delivered.
#[test]
fn two_clients_download_through_one_server_at_once_each_with_its_own_session_and_metrics() {
    let _turn = serial();
    let bed = MultiClientBed::start(braid_exe(), 2, 50, Duration::from_secs(10)).unwrap();
    let proxy = bed.proxy().name().to_string();
    let reports: Vec<_> = thread::scope(|sc| {
        let runs: Vec<_> = (0..2)
            .map(|j| {
                let (send, recv) = configs((bed.client_addr(j), PORT).into());
                let (proxy, ue) = (proxy.clone(), bed.ue(j).name().to_string());
                sc.spawn(move || run_pair(&proxy, &ue, &send, &recv, &AtomicBool::new(false)))
            })
            .collect();
        runs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // UE 1 sends from UE 2's inner address: its own tunnel carries it, the server drops it.
    let before = bed.server_status().unwrap().peers;
    bed.ue(0).ip(&["addr", "add", "10.200.0.3/32", "dev", "braid-c"]).unwrap();
    let spoofed = run_in(bed.ue(0).name(), || {
        let sock = UdpSocket::bind(("10.200.0.3", 0)).unwrap();
        (0..50).filter(|_| sock.send_to(b"not mine", ("10.200.0.1", 9)).is_ok()).count()
    })
    .unwrap();
    thread::sleep(Duration::from_millis(500));
    let server = bed.server_status().unwrap();
    let clients = [bed.client_status(0).unwrap(), bed.client_status(1).unwrap()];
    let prefix = bed.proxy().name().trim_end_matches("-prx").to_string();
    drop(bed);

    eprintln!("server: {}", server.to_table());
    for (j, r) in reports.into_iter().enumerate() {
        let r = r.unwrap_or_else(|e| panic!("UE {}'s download: {e}", j + 1));
        assert_eq!(r.receiver.bytes, BYTES, "UE {} received every byte", j + 1);
        eprintln!("UE {}: DLCT {:.2} s", j + 1, r.receiver.dlct_s);
    }
    eprintln!("server peers: {:?}", server.peers);
    assert_eq!(server.peers.len(), 2);
    for (j, p) in server.peers.iter().enumerate() {
        assert_eq!(p.name, format!("ue{}", j + 1));
        assert!(p.established, "{p:?}");
        // About 14 000 data packets of 1400 bytes each went to each UE.
        assert!(p.tun_rx_pkts > 10_000, "{p:?}");
        assert!(p.tun_tx_pkts > 1_000, "the UE's acknowledgements came back: {p:?}");
    }
    // (A UE's own IPv6 link-local packets, router solicitations, are refused too: its
    // allowed_ips are IPv4 only. A few may fall in the window.)
    let refused = |j: usize| server.peers[j].spoofed_pkts - before[j].spoofed_pkts;
    assert_eq!(spoofed, 50);
    assert!((50..=53).contains(&refused(0)), "{:?} then {:?}", before, server.peers);
    assert!(refused(1) <= 3, "{:?} then {:?}", before, server.peers);
    // Four path rows, two per peer, each carrying its peer's download.
    let rows: Vec<(Option<&str>, &str, u64)> =
        server.paths.iter().map(|p| (p.peer.as_deref(), p.name.as_str(), p.tx_pkts)).collect();
    assert_eq!(rows.len(), 4, "{rows:?}");
    for (peer, _, tx) in &rows {
        assert!(peer.is_some() && *tx > 100, "{rows:?}");
    }
    let text = server.to_prometheus();
    for needle in [
        r#"peer="ue1",path="path1""#,
        r#"peer="ue2",path="path2""#,
        r#"braid_peer_spoofed_packets_total{peer="ue1"}"#,
        r#"braid_peer_established{peer="ue2"} 1"#,
    ] {
        assert!(text.contains(needle), "metrics lack {needle}");
    }
    // Each client sees one peer, the server, and labels nothing.
    for c in &clients {
        assert_eq!(c.peers.len(), 1);
        assert!(c.paths.iter().all(|p| p.peer.is_none()));
    }
    assert!(list_netns_with_prefix(&prefix).unwrap().is_empty());
}
