//! Helpers shared by the namespace test files of `braid tunnel`.

#![allow(dead_code, reason = "each test file uses its own subset")]

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use braid_lab::netns::{list_netns_with_prefix, run_in};
use braid_lab::topology::{Emulator, Topology};
use braid_lab::tunnel::TunnelPair;

/// The tests measure rates and delays on a 2-core machine, and linkem spins a core per loaded
/// direction: the tests of one file take turns.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// This test's turn; a test that panicked while holding it does not block the others.
pub fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn braid_exe() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_braid"))
}

/// `braid linkem` from this build as the link emulator (delay and loss, which htb lacks), ready
/// within 5 s.
pub fn linkem() -> Emulator {
    Emulator::Linkem { braid_exe: braid_exe().to_path_buf(), ready_timeout: Duration::from_secs(5) }
}

/// The namespaces of `prefix` still present.
pub fn leftovers(prefix: &str) -> Vec<String> {
    list_netns_with_prefix(prefix).unwrap()
}
/// Sends UDP datagrams of `payload` bytes at `rate_mbps` (counted at the inner IP level) from
/// the server to the UE's tunnel address for `duration`; returns the inner IP bits per second
/// the UE received between `skip` and the end.
pub fn udp_flow(
    topo: &Topology,
    pair: &TunnelPair,
    rate_mbps: f64,
    duration: Duration,
    skip: Duration,
) -> f64 {
    const PAYLOAD: usize = 1372; // a 1400-byte inner IP packet: the tunnel MTU
    let ue: SocketAddr = (pair.spec().client_addr, 9000).into();
    let rx = run_in(topo.ue().name(), move || UdpSocket::bind(ue)).unwrap().unwrap();
    rx.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let counted = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let start = Instant::now();
    thread::scope(|sc| {
        sc.spawn(|| {
            let mut buf = [0u8; 2048];
            while !done.load(Ordering::Relaxed) {
                if let Ok(n) = rx.recv(&mut buf) {
                    // Only the window [skip, duration): the queues' drain after is not rate.
                    let t = start.elapsed();
                    if t >= skip && t < duration {
                        counted.fetch_add((n + 28) as u64, Ordering::Relaxed);
                    }
                }
            }
        });
        run_in(topo.server().name(), || {
            let tx = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).unwrap();
            let gap = Duration::from_secs_f64((PAYLOAD + 28) as f64 * 8.0 / (rate_mbps * 1e6));
            let data = [0x5au8; PAYLOAD];
            let mut sent = 0u32;
            while start.elapsed() < duration {
                // Catch up in bursts after oversleeping, so the offered rate is kept.
                while gap * sent < start.elapsed() {
                    let _ = tx.send_to(&data, ue);
                    sent += 1;
                }
                thread::sleep(Duration::from_micros(200));
            }
        })
        .unwrap();
        thread::sleep(Duration::from_millis(200));
        done.store(true, Ordering::Relaxed);
    });
    counted.load(Ordering::Relaxed) as f64 * 8.0 / (duration - skip).as_secs_f64()
}

/// What [`fail_path_1_during`] saw.
pub struct Failover<R> {
    pub result: R,
    /// Whether the server's liveness marked path 1 down while its link was down.
    pub seen_down: bool,
    /// Packets the server had sent on path 1 when its link came back, and at the end.
    pub tx_at_return: u64,
    pub tx_after: u64,
}

/// Runs `transfer` while path 1's link at the proxy goes down 1 s in, stays down until the
/// server's liveness has declared it down (at most 4 s) plus 1 s, and comes back.
pub fn fail_path_1_during<R: Send>(
    topo: &Topology,
    pair: &TunnelPair,
    transfer: impl FnOnce() -> R + Send,
) -> Failover<R> {
    let path1 = &topo.paths()[0].upstream;
    thread::scope(|sc| {
        let transfer = sc.spawn(transfer);
        thread::sleep(Duration::from_secs(1));
        topo.proxy().ip(&["link", "set", &path1.ifname, "down"]).unwrap();
        // Liveness declares the path down after 1 s of silence.
        let deadline = Instant::now() + Duration::from_secs(4);
        let mut seen_down = false;
        while Instant::now() < deadline && !seen_down {
            seen_down = pair.server_status().is_ok_and(|st| !st.paths[0].up);
            thread::sleep(Duration::from_millis(100));
        }
        thread::sleep(Duration::from_secs(1));
        let tx_at_return = pair.server_status().unwrap().paths[0].tx_pkts;
        topo.proxy().ip(&["link", "set", &path1.ifname, "up"]).unwrap();
        let result = transfer.join().unwrap();
        let tx_after = pair.server_status().unwrap().paths[0].tx_pkts;
        Failover { result, seen_down, tx_at_return, tx_after }
    })
}

/// What [`cut_path_1_uplink_during`] saw: the datagrams the client received on path 1
/// (rx_pkts of its status) and the server's path 1 transmissions (tx_pkts of its status) at the
/// moments that matter. What the client received is the test's measure: a transmission the
/// server counts may never have left it (until bec3dd6 a reliable path's resends were counted
/// and not sent).
pub struct UplinkCut<R> {
    pub result: R,
    /// Whether the server's liveness marked path 1 down during the cut (it hears nothing).
    pub seen_down: bool,
    /// (client rx, server tx) when the cut began, when it ended, 1 s after, and once the
    /// transfer finished.
    pub at_cut: (u64, u64),
    pub at_return: (u64, u64),
    pub one_s_after: (u64, u64),
    pub after: (u64, u64),
}

/// The nftables table [`cut_path_1_uplink_during`] adds to the proxy namespace.
const CUT_TABLE: &str = "braid_test_cut";

fn nft_in(netns: &str, args: &[&str]) {
    let out = std::process::Command::new("ip")
        .args(["netns", "exec", netns, "nft"])
        .args(args)
        .output()
        .expect("running nft");
    assert!(out.status.success(), "nft {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Removes the cut when dropped, so a panicking test leaves no rule behind (the namespace goes
/// with the topology anyway).
struct Cut<'a>(&'a str);

impl Drop for Cut<'_> {
    fn drop(&mut self) {
        let _ = std::process::Command::new("ip")
            .args(["netns", "exec", self.0, "nft", "delete", "table", "inet", CUT_TABLE])
            .output();
    }
}

/// Runs `transfer` while every UDP datagram the client sends on path 1 is dropped as it
/// reaches the server (an nftables rule on the proxy's path 1 interface, input hook), from 1 s
/// in for `cut`: the download's data still reaches the client on path 1, but none of the
/// client's feedback, probes or data reach the server. ARP is untouched, so the downlink keeps
/// working throughout.
pub fn cut_path_1_uplink_during<R: Send>(
    topo: &Topology,
    pair: &TunnelPair,
    cut: Duration,
    transfer: impl FnOnce() -> R + Send,
) -> UplinkCut<R> {
    let proxy = topo.proxy().name();
    let ifname = &topo.paths()[0].upstream.ifname;
    let tx = || {
        let rx = pair.client_status().unwrap().paths[0].rx_pkts;
        (rx, pair.server_status().unwrap().paths[0].tx_pkts)
    };
    thread::scope(|sc| {
        let transfer = sc.spawn(transfer);
        thread::sleep(Duration::from_secs(1));
        let at_cut = tx();
        nft_in(proxy, &["add", "table", "inet", CUT_TABLE]);
        let guard = Cut(proxy);
        let chain = "{ type filter hook input priority 0; }";
        nft_in(proxy, &["add", "chain", "inet", CUT_TABLE, "in", chain]);
        let rule = ["add", "rule", "inet", CUT_TABLE, "in", "iifname", ifname];
        nft_in(proxy, &[&rule[..], &["meta", "l4proto", "udp", "drop"]].concat());
        let end = Instant::now() + cut;
        let mut seen_down = false;
        while Instant::now() < end {
            seen_down |= pair.server_status().is_ok_and(|st| !st.paths[0].up);
            thread::sleep(Duration::from_millis(100).min(end - Instant::now()));
        }
        let at_return = tx();
        drop(guard);
        thread::sleep(Duration::from_secs(1));
        let one_s_after = tx();
        let result = transfer.join().unwrap();
        let after = tx();
        UplinkCut { result, seen_down, at_cut, at_return, one_s_after, after }
    })
}
