//! `braid tunnel` at its edges, for real in network namespaces (braid-lab's Figure 1): NAT
//! rebinding, IPv6 inside the tunnel, a path whose interface does not exist, the `status`
//! command, and CoDel in linkem under a greedy TCP flow. Needs root (and `nft` for the NAT
//! test: `make deps` installs it). Every test builds its own namespaces under a unique prefix,
//! is bounded well under 60 s, and checks at its end that nothing of its prefix remains.

mod common;

use std::fs;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::thread;
use std::time::{Duration, Instant};

use braid_lab::host::attempts;
use braid_lab::lab::{check_scenario, start_tunnel, transfer_configs, TRANSFER_PORT};
use braid_lab::netns::{run_in, run_with_timeout, unique_prefix, NetError, Netns, COMMAND_TIMEOUT};
use braid_lab::topology::{Emulator, Topology, TopologyOptions};
use braid_lab::transfer::{run_pair, ReceiverConfig, SenderConfig, TransferReport};
use braid_lab::tunnel::{
    InnerIpv6, TunnelPair, TunnelSpec, BASE_PORT, CLIENT_IF, METRICS_PORT, SERVER_IF,
};
use braid_sim::Scenario;

use common::{braid_exe, leftovers, linkem, serial};

/// Limit on any one transfer here: every test must end well within 60 s.
const TRANSFER_LIMIT: Duration = Duration::from_secs(30);
/// How long a tunnel pair may take to complete its handshake.
const READY_TIMEOUT: Duration = Duration::from_secs(10);

fn scenario(overrides: &[&str]) -> Scenario {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scenario::from_toml_str("", &overrides).unwrap()
}

fn topology(s: &Scenario, prefix: &str, emulator: Emulator) -> Topology {
    Topology::build(s, &TopologyOptions { prefix: prefix.to_string(), emulator }).unwrap()
}

/// A tunnel pair for `topo`'s paths (server at the proxy, client at the UE) running `s`'s
/// tunnel section, for the tests that change the spec before starting it.
fn tunnel_spec(topo: &Topology, s: &Scenario) -> TunnelSpec {
    let ends = topo.paths().iter().map(|l| (l.upstream.clone(), l.downstream.clone())).collect();
    let mut spec = TunnelSpec::new(topo.proxy().name(), topo.ue().name(), ends);
    spec.tunnel = s.tunnel.clone();
    spec
}

/// The download of `s` (its `e2e.bytes` and `e2e.cc`) to `ue`, bounded by [`TRANSFER_LIMIT`].
fn bounded_transfer(s: &Scenario, ue: SocketAddr) -> (SenderConfig, ReceiverConfig) {
    let cc = check_scenario(s).unwrap().tcp_cc().unwrap();
    let (mut send, mut recv) = transfer_configs(s, cc, ue);
    send.timeout = TRANSFER_LIMIT;
    recv.timeout = TRANSFER_LIMIT;
    (send, recv)
}

fn download(sender_ns: &str, receiver_ns: &str, s: &Scenario, ue: SocketAddr) -> TransferReport {
    let (send, recv) = bounded_transfer(s, ue);
    run_pair(sender_ns, receiver_ns, &send, &recv, &AtomicBool::new(false))
        .expect("the download completes byte-exact")
}

/// `ip -n NS -j link show dev IF`'s ifindex: a device recreated under the same name gets a
/// new one.
fn ifindex(ns: &Netns, ifname: &str) -> u64 {
    let out = ns.ip(&["-j", "link", "show", "dev", ifname]).unwrap();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v[0]["ifindex"].as_u64().unwrap()
}

/// Runs `cmd args...` inside namespace `ns` (`ip netns exec`), bounded in time.
fn run_in_ns(ns: &str, cmd: &str, args: &[&str]) -> Result<String, NetError> {
    let mut all = vec!["netns", "exec", ns, cmd];
    all.extend_from_slice(args);
    run_with_timeout("ip", &all, COMMAND_TIMEOUT)
}

/// Replaces the `braid_nat` table of `ns` in one nft transaction: source NAT of what leaves
/// by `ifname` for UDP port `dport` to `to` (`ADDR:PORT`). With `hold` (a rebinding: the table
/// exists and is replaced), the new table also drops those datagrams on the output hook until
/// [`release_hold`]: a flush of the connection-tracking table visits the hash buckets one after
/// another, so a mapping created by a datagram sent during the flush can be deleted by it after
/// the peer has already answered to the mapping (see the NAT rebinding test).
fn set_snat(ns: &str, ifname: &str, dport: u16, to: SocketAddr, hold: bool) {
    let mut rules = String::new();
    if hold {
        rules.push_str("delete table ip braid_nat\n");
    }
    rules.push_str("add table ip braid_nat\n");
    rules.push_str(
        "add chain ip braid_nat postrouting \
         { type nat hook postrouting priority srcnat; policy accept; }\n",
    );
    rules.push_str(&format!(
        "add rule ip braid_nat postrouting oifname \"{ifname}\" udp dport {dport} snat to {to}\n"
    ));
    if hold {
        rules.push_str(
            "add chain ip braid_nat hold { type filter hook output priority filter; policy accept; }\n",
        );
        rules.push_str(&format!(
            "add rule ip braid_nat hold oifname \"{ifname}\" udp dport {dport} drop\n"
        ));
    }
    run_in_ns(ns, "nft", &[&rules]).expect("nft (make deps installs it)");
}

/// Lets the datagrams [`set_snat`] held leave again.
fn release_hold(ns: &str) {
    run_in_ns(ns, "nft", &["flush chain ip braid_nat hold"]).expect("nft releases the hold");
}

/// SO_RCVTIMEO on a raw descriptor: a blocking receive gives up after `timeout`.
fn set_receive_timeout(sock: &OwnedFd, timeout: Duration) {
    let tv = libc::timeval {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_usec: libc::suseconds_t::from(timeout.subsec_micros()),
    };
    // SAFETY: a valid timeval of the size passed.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        );
    }
}

/// Deletes every IPv4 connection-tracking entry of the calling thread's namespace: the
/// ctnetlink request `conntrack -F` sends, `IPCTNL_MSG_CT_DELETE` without a tuple, which Linux
/// answers by flushing the table (`ctnetlink_del_conntrack` -> `ctnetlink_flush_conntrack`,
/// net/netfilter/nf_conntrack_netlink.c). Waits for the kernel's acknowledgement.
fn flush_conntrack() -> std::io::Result<()> {
    const NFNL_SUBSYS_CTNETLINK: u16 = 1;
    const IPCTNL_MSG_CT_DELETE: u16 = 2;
    const NLMSG_HDR_BYTES: usize = 16;
    let raw = unsafe {
        libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::NETLINK_NETFILTER)
    };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor we just opened and own from here on.
    let sock = unsafe { OwnedFd::from_raw_fd(raw) };
    set_receive_timeout(&sock, Duration::from_secs(2));
    // struct nlmsghdr (length, type, flags, sequence, port id), then struct nfgenmsg (family,
    // version NFNETLINK_V0, resource id).
    const MSG_BYTES: usize = NLMSG_HDR_BYTES + 4;
    let mut msg = [0u8; MSG_BYTES];
    msg[0..4].copy_from_slice(&(MSG_BYTES as u32).to_ne_bytes());
    msg[4..6].copy_from_slice(&(NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_DELETE).to_ne_bytes());
    let flags = (libc::NLM_F_REQUEST | libc::NLM_F_ACK) as u16;
    msg[6..8].copy_from_slice(&flags.to_ne_bytes());
    msg[8..12].copy_from_slice(&1u32.to_ne_bytes());
    msg[16] = libc::AF_INET as u8;
    // SAFETY: `msg` is a live buffer of the length passed; an unconnected netlink socket sends
    // to the kernel.
    if unsafe { libc::send(sock.as_raw_fd(), msg.as_ptr().cast(), msg.len(), 0) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut ack = [0u8; 256];
    // SAFETY: `ack` is a live buffer of the length passed.
    let n = unsafe { libc::recv(sock.as_raw_fd(), ack.as_mut_ptr().cast(), ack.len(), 0) };
    if n < (NLMSG_HDR_BYTES + 4) as isize {
        return Err(std::io::Error::last_os_error());
    }
    // NLMSG_ERROR carries the request's result: 0, or a negative errno.
    let kind = u16::from_ne_bytes([ack[4], ack[5]]);
    let errno = i32::from_ne_bytes(ack[16..20].try_into().unwrap());
    match (kind, errno) {
        (k, 0) if k == libc::NLMSG_ERROR as u16 => Ok(()),
        (k, e) if k == libc::NLMSG_ERROR as u16 => Err(std::io::Error::from_raw_os_error(-e)),
        (k, _) => Err(std::io::Error::other(format!("unexpected netlink reply type {k}"))),
    }
}

/// NAT rebinding. A source NAT on the UE's egress for path 1 (the UE namespace's
/// `postrouting` hook, matching what leaves by path 1's interface for the server's path-1 port)
/// first maps the client's socket to `10.91.0.2:40000`: that is the address the server learns.
/// Mid-download the mapping changes the way a home router's does when its state expires:
/// the nft table is replaced, in one transaction, by one that maps to `10.91.0.3:41000` (an
/// extra address of the UE's path-1 interface), and the UE's connection-tracking table is
/// flushed (deleting the table alone is not enough: an existing conntrack entry keeps the NAT
/// binding it was created with). The client's next datagram creates a new entry, takes the new
/// mapping from the rule, and reaches the server from the new address; datagrams the server
/// sends to the old mapping in between are refused by the UE and TCP recovers them.
///
/// Path 1's outgoing datagrams are held (dropped) from the rule change until the flush has
/// finished. Without the hold, about one run in twenty under CPU load lost path 1 for good: the
/// flush, walking the table bucket by bucket, deleted the new mapping after the client's first
/// datagram had created it and the server had followed it; the server's next datagrams to
/// `10.91.0.3:41000` then created an entry of their own, which took the mapping's only port,
/// and every later client datagram failed NAT and was refused with EPERM. A home router does
/// not delete a mapping it has just made; that was the test's doing.
///
/// What must hold: the server follows the new address (`/status` shows it as path 1's
/// remote), path 1 keeps carrying the download after the change, the session is not
/// re-established (handshake counters unchanged), the TUN devices are the same (same ifindex,
/// same daemon processes), and the download arrives byte-exact.
#[test]
fn nat_rebinding_mid_download_moves_path_1_to_the_new_address_in_the_same_session() {
    let _turn = serial();
    let s = scenario(&["e2e.bytes=40000000", "e2e.cc=cubic", "tunnel.scheduler=cpf"]);
    let prefix = unique_prefix("be");
    let topo = topology(&s, &prefix, Emulator::Htb);
    let ue_end = topo.paths()[0].downstream.clone();
    let old_map = SocketAddr::from((ue_end.addr, 40000));
    let new_addr = Ipv4Addr::from(u32::from(ue_end.addr) + 1);
    let new_map = SocketAddr::from((new_addr, 41000));
    topo.ue().ip(&["addr", "add", &format!("{new_addr}/24"), "dev", &ue_end.ifname]).unwrap();
    // Before the tunnel starts, so the client's very first datagram is mapped.
    set_snat(topo.ue().name(), &ue_end.ifname, BASE_PORT, old_map, false);
    let mut pair = start_tunnel(&topo, &s, braid_exe()).unwrap();
    let before = (pair.server_status().unwrap(), pair.client_status().unwrap());
    assert_eq!(before.0.paths[0].remote.as_deref(), Some(old_map.to_string().as_str()));
    let tun = (ifindex(topo.proxy(), SERVER_IF), ifindex(topo.ue(), CLIENT_IF));
    let pids = (pair.server.pid(), pair.client.pid());

    let ue_tunnel_addr = (pair.spec().client_addr, TRANSFER_PORT).into();
    let (send, recv) = bounded_transfer(&s, ue_tunnel_addr);
    let (server_ns, ue_ns) = (topo.server().name(), topo.ue().name());
    let cancel = AtomicBool::new(false);
    let (report, at_switch, switch_ms) = thread::scope(|sc| {
        let transfer = sc.spawn(|| run_pair(server_ns, ue_ns, &send, &recv, &cancel));
        thread::sleep(Duration::from_millis(1200));
        set_snat(ue_ns, &ue_end.ifname, BASE_PORT, new_map, true);
        run_in(ue_ns, flush_conntrack).unwrap().expect("flushing the UE's conntrack table");
        release_hold(ue_ns);
        let changed = Instant::now();
        let deadline = changed + Duration::from_secs(5);
        let mut at_switch = None;
        while at_switch.is_none() && Instant::now() < deadline {
            at_switch = pair
                .server_status()
                .ok()
                .filter(|st| st.paths[0].remote.as_deref() == Some(new_map.to_string().as_str()));
            thread::sleep(Duration::from_millis(20));
        }
        let switch_ms = changed.elapsed().as_secs_f64() * 1e3;
        (transfer.join().unwrap(), at_switch, switch_ms)
    });
    let after = (pair.server_status().unwrap(), pair.client_status().unwrap());
    let still_running = (pair.server.is_running(), pair.client.is_running());
    let tun_after = (ifindex(topo.proxy(), SERVER_IF), ifindex(topo.ue(), CLIENT_IF));
    drop((pair, topo));

    let report = report.expect("the download completes byte-exact across the rebinding");
    let at_switch = at_switch.expect("the server follows path 1 to its new address");
    let path1_tx_after = after.0.paths[0].tx_pkts - at_switch.paths[0].tx_pkts;
    let path1_rx_after = after.0.paths[0].rx_pkts - at_switch.paths[0].rx_pkts;
    eprintln!(
        "nat rebinding: new remote seen after {switch_ms:.0} ms; after it path 1 sent {path1_tx_after} and \
         received {path1_rx_after} datagrams; DLCT {:.2} s; handshakes {} -> {}",
        report.receiver.dlct_s, before.0.handshakes, after.0.handshakes
    );
    assert_eq!(report.receiver.bytes, 40_000_000);
    assert_eq!(after.0.paths[0].remote.as_deref(), Some(new_map.to_string().as_str()));
    // Path 1 keeps carrying the download: thousands of data packets after the switch (the
    // transfer has well over a second to go at ~90 Mbit/s), and the client's feedback arrives.
    assert!(path1_tx_after > 1000, "{:?}", after.0.paths[0]);
    assert!(path1_rx_after > 100, "{:?}", after.0.paths[0]);
    assert!(after.0.paths[0].up && after.1.paths[0].up, "path 1 stays up");
    // Same session: no new handshake on either side.
    assert_eq!(after.0.handshakes, before.0.handshakes);
    assert_eq!(after.1.handshakes, before.1.handshakes);
    assert!(after.0.established && after.1.established);
    // Same TUN devices, same daemons.
    assert_eq!(tun_after, tun, "TUN ifindex (server, client)");
    assert_eq!(still_running, (true, true), "daemons {pids:?} still running");
    assert!(leftovers(&prefix).is_empty(), "{:?}", leftovers(&prefix));
}

/// IPv6 inside the tunnel: both TUN devices get an IPv6 address besides the IPv4 one, and a
/// TCP download from the proxy's tunnel address to the UE's, over IPv6 and round robin on both
/// paths, arrives byte-exact (the receiver checks every byte).
#[test]
fn ipv6_inside_the_tunnel_carries_a_tcp_download_byte_exact() {
    let _turn = serial();
    let s = scenario(&["e2e.bytes=20000000", "e2e.cc=cubic", "tunnel.scheduler=rr"]);
    let prefix = unique_prefix("be");
    let topo = topology(&s, &prefix, Emulator::Htb);
    let mut spec = tunnel_spec(&topo, &s);
    spec.ipv6 = Some(InnerIpv6::default());
    let pair = TunnelPair::start(&spec, braid_exe(), READY_TIMEOUT).unwrap();
    let v6 = InnerIpv6::default();
    let addrs = topo.ue().ip(&["-6", "-j", "addr", "show", "dev", CLIENT_IF]).unwrap();
    let ue = SocketAddr::new(IpAddr::V6(v6.client_addr), TRANSFER_PORT);
    let report = download(topo.proxy().name(), topo.ue().name(), &s, ue);
    let (server, client) = (pair.server_status().unwrap(), pair.client_status().unwrap());
    drop((pair, topo));

    eprintln!(
        "ipv6: 20 MB in {:.2} s ({:.1} Mbit/s); paths sent {} and {} packets",
        report.receiver.dlct_s,
        report.receiver.goodput_mbps,
        server.paths[0].tx_pkts,
        server.paths[1].tx_pkts
    );
    assert!(addrs.contains(&v6.client_addr.to_string()), "UE TUN addresses: {addrs}");
    assert_eq!(report.receiver.bytes, 20_000_000);
    // 20 MB in at most 1400-byte IPv6 packets: more than 14 000 of them left the server's TUN
    // device and were written to the client's.
    assert!(client.tun_tx_pkts > 14_000 && server.tun_rx_pkts > 14_000, "{client:?}");
    assert!(server.paths.iter().all(|p| p.tx_pkts > 1000), "both paths carry it: {server:?}");
    assert!(leftovers(&prefix).is_empty(), "{:?}", leftovers(&prefix));
}

/// A directory removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A path whose interface does not exist: the daemon refuses to start, promptly, with a
/// message naming the path's field and the interface, and no TUN device is left behind.
#[test]
fn a_path_on_a_missing_interface_fails_promptly_naming_it_and_leaves_no_tun() {
    let prefix = unique_prefix("be");
    let ns = Netns::create(&format!("{prefix}-ue")).unwrap();
    let dir = TempDir(std::env::temp_dir().join(format!("{prefix}-config")));
    fs::create_dir_all(&dir.0).unwrap();
    let (private, _) = braid_net::crypto::generate_keypair().unwrap();
    let (_, peer) = braid_net::crypto::generate_keypair().unwrap();
    // Path 1 is fine (the loopback device); path 2 names an interface that does not exist.
    let config = format!(
        "[interface]\nname = \"bt-nope\"\nrole = \"client\"\naddress = [\"10.200.0.2/24\"]\n\
         private_key = \"{}\"\n[peer]\npublic_key = \"{}\"\n\
         [[path]]\nname = \"wifi\"\nbind = \"127.0.0.1:0\"\ndevice = \"lo\"\nremote = \"127.0.0.1:5100\"\n\
         [[path]]\nname = \"cellular\"\nbind = \"127.0.0.1:0\"\ndevice = \"nope0\"\nremote = \"127.0.0.1:5101\"\n",
        private.to_base64().as_str(),
        peer.to_base64()
    );
    let file = dir.0.join("client.toml");
    fs::write(&file, config).unwrap();
    // It holds the private key inline: root-only, or the daemon refuses it first.
    fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let exe = braid_exe().to_string_lossy();
    let t0 = Instant::now();
    let result = run_in_ns(ns.name(), &exe, &["tunnel", "--config", &file.to_string_lossy()]);
    let elapsed = t0.elapsed();
    let links = ns.ip(&["-j", "link", "show"]).unwrap();
    let pids = ns.pids().unwrap();
    drop((ns, dir));

    let (status, stderr) = match result {
        Err(NetError::Command { status, stderr, .. }) => (status, stderr),
        other => panic!("expected a failing exit, got {other:?}"),
    };
    eprintln!("missing interface: {status} after {} ms: {stderr}", elapsed.as_millis());
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    assert!(stderr.contains("path.1") && stderr.contains("nope0"), "{stderr}");
    let links: Vec<serde_json::Value> = serde_json::from_str(&links).unwrap();
    let names: Vec<&str> = links.iter().filter_map(|l| l["ifname"].as_str()).collect();
    assert_eq!(names, ["lo"], "no TUN device left");
    assert!(pids.is_empty(), "no process left: {pids:?}");
    assert!(leftovers(&prefix).is_empty(), "{:?}", leftovers(&prefix));
}

/// One row of `braid tunnel status`'s path table, by column.
#[derive(Debug)]
struct StatusRow {
    name: String,
    up: String,
    cwnd: u64,
    srtt_ms: f64,
    tx_pkts: u64,
    rx_pkts: u64,
}

/// The path rows of the table: the lines after the `path up cwnd ...` header.
fn status_rows(table: &str) -> Vec<StatusRow> {
    let mut rows = Vec::new();
    for line in table.lines().skip_while(|l| !l.starts_with("path ")).skip(1) {
        let c: Vec<&str> = line.split_whitespace().collect();
        assert!(c.len() >= 10, "a path row has 11 columns: {line:?}");
        rows.push(StatusRow {
            name: c[0].to_string(),
            up: c[1].to_string(),
            cwnd: c[2].parse().unwrap(),
            srtt_ms: c[4].parse().unwrap_or(0.0),
            tx_pkts: c[6].parse().unwrap(),
            rx_pkts: c[7].parse().unwrap(),
        });
    }
    rows
}

/// `braid tunnel status`, run as a process inside the UE's namespace against the live client
/// daemon after a download, through its control socket (found from its config) and through its
/// metrics port: one row per path, each live, with a window, an srtt and non-zero packet
/// counters; the control socket's file is gone once the daemon has stopped.
#[test]
fn tunnel_status_prints_one_row_per_path_with_counters_after_traffic() {
    let _turn = serial();
    let s = scenario(&["e2e.bytes=5000000", "e2e.cc=cubic", "tunnel.scheduler=rr"]);
    let prefix = unique_prefix("be");
    let topo = topology(&s, &prefix, Emulator::Htb);
    let pair = start_tunnel(&topo, &s, braid_exe()).unwrap();
    let ue = (pair.spec().client_addr, TRANSFER_PORT).into();
    download(topo.server().name(), topo.ue().name(), &s, ue);
    // The daemon refreshes its status every 100 ms.
    thread::sleep(Duration::from_millis(250));
    let metrics = SocketAddr::from((Ipv4Addr::LOCALHOST, METRICS_PORT)).to_string();
    let exe = braid_exe().to_string_lossy();
    // By default through the control socket the config names, and through the metrics port.
    let config = pair.config_file(false);
    let socket_table = run_in_ns(
        topo.ue().name(),
        &exe,
        &["tunnel", "status", "--config", &config.to_string_lossy()],
    );
    let table = run_in_ns(topo.ue().name(), &exe, &["tunnel", "status", "--metrics", &metrics]);
    let json = pair.client_status().unwrap();
    let socket_file = pair.config_dir().join("client.sock");
    let socket_existed = socket_file.exists();
    drop((pair, topo));

    let socket_table = socket_table.expect("braid tunnel status --config exits 0");
    assert!(
        socket_existed && !socket_file.exists(),
        "the daemon removes its control socket on exit"
    );
    assert!(socket_table.starts_with(CLIENT_IF), "{socket_table}");
    assert_eq!(
        status_rows(&socket_table).iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
        ["path1", "path2"],
        "{socket_table}"
    );
    let table = table.expect("braid tunnel status exits 0");
    eprintln!("tunnel status:\n{table}");
    assert!(table.starts_with(CLIENT_IF), "first line names the interface: {table}");
    let rows = status_rows(&table);
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["path1", "path2"], "{table}");
    for (row, p) in rows.iter().zip(&json.paths) {
        assert_eq!(row.up, "yes", "{row:?}");
        assert!(row.cwnd > 0 && row.srtt_ms > 0.0, "{row:?}");
        // Round robin sends the UE's ACKs over both paths, and both carry the download.
        assert!(row.tx_pkts > 100 && row.rx_pkts > 1000, "{row:?}");
        // The counters only grow: the table, read first, shows at most the later JSON's.
        assert!(row.tx_pkts <= p.tx_pkts && row.rx_pkts <= p.rx_pkts, "{row:?} vs {p:?}");
    }
    assert!(leftovers(&prefix).is_empty(), "{:?}", leftovers(&prefix));
}

/// A quiet tunnel knows its paths' RTTs: with no traffic at all, the liveness probes' echoes
/// give each path of the client an srtt near the path's emulated RTT, so a scheduler (and path
/// exclusion) can judge a path before it carries data; and the client's reorder buffer starts
/// its adaptive wait limit from them: half the RTTs' 20 ms spread plus the 10 ms margin,
/// where without them it would be the bare margin until both paths delivered data.
#[test]
fn probe_echoes_measure_the_rtt_of_quiet_paths() {
    let _turn = serial();
    let s = scenario(&[]);
    let prefix = unique_prefix("bp");
    let emulator = linkem();
    let topo = topology(&s, &prefix, emulator);
    let pair = start_tunnel(&topo, &s, braid_exe()).unwrap();
    // Probes go out every 100 ms on a quiet path; the status is refreshed every 100 ms.
    thread::sleep(Duration::from_millis(700));
    let json = pair.client_status().unwrap();
    drop((pair, topo));

    for (p, cfg) in json.paths.iter().zip(&s.paths) {
        let srtt = p.srtt_ms.unwrap_or_else(|| panic!("{}: no srtt from probes: {p:?}", cfg.name));
        eprintln!("{}: emulated RTT {} ms, srtt {srtt:.2} ms", cfg.name, cfg.rtt_ms);
        assert!(srtt >= 0.9 * cfg.rtt_ms && srtt <= cfg.rtt_ms + 10.0, "{p:?}");
    }
    let wait = json.reorder_wait_limit_ms;
    eprintln!("the client's wait limit before any data: {wait:.2} ms");
    assert!((17.0..25.0).contains(&wait), "{wait} ms");
    assert!(leftovers(&prefix).is_empty(), "{:?}", leftovers(&prefix));
}

/// Queueing delay of a transfer: the median of the sender's sampled `TCP_INFO` srtt from
/// `skip` (past slow start) to its last write, less the connection's minimum RTT. Returns
/// (queue delay, min RTT, samples), ms.
fn queue_delay_ms(report: &TransferReport, skip_s: f64) -> (f64, f64, usize) {
    let last_write_s = report.sender.last_write_s;
    let mut srtt: Vec<f64> = report
        .sender
        .samples
        .iter()
        .filter(|s| s.t_s >= skip_s && s.t_s <= last_write_s && s.info.srtt_us > 0)
        .map(|s| s.info.srtt_us as f64 / 1e3)
        .collect();
    assert!(srtt.len() > 100, "{} srtt samples", srtt.len());
    srtt.sort_by(f64::total_cmp);
    let median = srtt[srtt.len() / 2];
    let min_rtt_ms = report.sender.final_info().and_then(|i| i.min_rtt_us).unwrap() as f64 / 1e3;
    (median - min_rtt_ms, min_rtt_ms, srtt.len())
}

/// A Cubic download through path 1 alone (no tunnel) whose downlink is `aqm` in linkem.
fn cubic_through_path_1(aqm: &str) -> (f64, f64, usize, f64) {
    // 20 Mbit/s with 200 packets of buffer: a full buffer is 200 * 1514 * 8 / 20e6 = 121 ms of
    // queue, against CoDel's 5 ms target. Cubic fills a drop-tail buffer; 15 MB take 6 s.
    let s = scenario(&[
        "e2e.bytes=15000000",
        "e2e.cc=cubic",
        "paths.0.rate_mbps=20",
        "paths.0.buffer_pkts=200",
        &format!("paths.0.aqm={aqm}"),
    ]);
    let prefix = unique_prefix("be");
    let emulator = linkem();
    let topo = topology(&s, &prefix, emulator);
    let ue = topo.route_single_path(1).unwrap();
    let report = download(topo.server().name(), topo.ue().name(), &s, (ue, TRANSFER_PORT).into());
    drop(topo);
    assert_eq!(report.receiver.bytes, 15_000_000);
    assert!(leftovers(&prefix).is_empty(), "{:?}", leftovers(&prefix));
    let (queue, min_rtt, n) = queue_delay_ms(&report, 2.0);
    (queue, min_rtt, n, report.receiver.goodput_mbps)
}

/// CoDel in linkem (RFC 8289, target 5 ms, interval 100 ms) under a greedy Cubic flow keeps
/// the standing queue near its target, while the same link as drop-tail lets Cubic fill the
/// buffer. The queueing delay is read from the sender's own srtt (median over the transfer
/// after 2 s, less the minimum RTT), so it is what the flow experienced.
#[test]
fn codel_in_linkem_keeps_the_standing_queue_near_5_ms_where_drop_tail_fills_the_buffer() {
    let _turn = serial();
    // Drop-tail: after a loss Cubic keeps 0.7 of (BDP + buffer) = 0.7 x 266 packets in flight,
    // 120 packets (72 ms) of them queued, so its median queue is 72-121 ms (94-107 ms in runs
    // here). A loss the queue did not cause (linkem starved of CPU by the host, its socket
    // overflowing) lowers that for seconds: one CI run measured 58 ms. The claims, met in one
    // of up to three attempts each printed with the CPU steal: drop-tail's queue is over a
    // third of the buffer (40 ms) and over three times CoDel's, CoDel's within a few targets.
    attempts(
        "CoDel against drop-tail",
        3,
        || (cubic_through_path_1("codel"), cubic_through_path_1("droptail")),
        |&((codel, codel_min, codel_n, codel_mbps), (droptail, dt_min, dt_n, dt_mbps))| {
            eprintln!(
                "codel: queue delay {codel:.1} ms over min RTT {codel_min:.1} ms ({codel_n} \
                 samples, {codel_mbps:.1} Mbit/s); drop-tail: {droptail:.1} ms over {dt_min:.1} \
                 ms ({dt_n} samples, {dt_mbps:.1} Mbit/s)"
            );
            // CoDel: within a few targets of 5 ms (srtt is smoothed, and ACKs add a little).
            if codel >= 20.0 {
                return Err(format!("CoDel's standing queue {codel:.1} ms"));
            }
            if droptail <= 40.0 || droptail <= 3.0 * codel {
                return Err(format!("drop-tail queue {droptail:.1} ms, CoDel's {codel:.1} ms"));
            }
            // Both still use the link.
            if codel_mbps <= 14.0 || dt_mbps <= 14.0 {
                return Err(format!("{codel_mbps:.1} / {dt_mbps:.1} Mbit/s"));
            }
            Ok(())
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
}

/// Captures, in the calling thread's namespace, the UDP payloads of IPv4 datagrams leaving by
/// interface `ifname` for `dest`, for `window`: an AF_PACKET socket of cooked packets (what
/// tcpdump reads), IPv4 ones kept. Packets larger than one MTU (unsegmented GSO trains) are left out.
fn capture_udp(ifname: &str, dest: SocketAddr, window: Duration) -> std::io::Result<Vec<Vec<u8>>> {
    // Outgoing packets reach only ETH_P_ALL packet sockets (net/core/dev.c, ptype_all).
    const ETH_P_ALL: u16 = 0x0003;
    let ifindex = std::ffi::CString::new(ifname).unwrap();
    // SAFETY: a NUL-terminated name.
    let index = unsafe { libc::if_nametoindex(ifindex.as_ptr()) };
    // SAFETY: plain socket creation.
    let raw = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            i32::from(ETH_P_ALL.to_be()),
        )
    };
    if raw < 0 || index == 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor we just opened and own from here on.
    let sock = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: sockaddr_ll is plain data; zeroed is a valid value.
    let mut ll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    ll.sll_family = libc::AF_PACKET as u16;
    ll.sll_protocol = ETH_P_ALL.to_be();
    ll.sll_ifindex = index as i32;
    // SAFETY: a valid sockaddr_ll of the size passed.
    let bound = unsafe {
        libc::bind(
            sock.as_raw_fd(),
            (&ll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as u32,
        )
    };
    if bound < 0 {
        return Err(std::io::Error::last_os_error());
    }
    set_receive_timeout(&sock, Duration::from_millis(50));
    let SocketAddr::V4(dest) = dest else { panic!("IPv4 only") };
    let mut out = Vec::new();
    let mut buf = vec![0u8; 65536];
    let end = Instant::now() + window;
    while Instant::now() < end {
        // SAFETY: `buf` is a live buffer of the length passed.
        let n = unsafe { libc::recv(sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n <= 0 {
            continue;
        }
        let p = &buf[..n as usize];
        let ihl = usize::from(p[0] & 0x0f) * 4;
        let total = usize::from(u16::from_be_bytes([p[2], p[3]]));
        if p[0] >> 4 != 4 || p[9] != 17 || total > 1500 || total > p.len() || total < ihl + 8 {
            continue;
        }
        let daddr = Ipv4Addr::new(p[16], p[17], p[18], p[19]);
        let dport = u16::from_be_bytes([p[ihl + 2], p[ihl + 3]]);
        if daddr == *dest.ip() && dport == dest.port() {
            out.push(p[ihl + 8..total].to_vec());
        }
    }
    Ok(out)
}

/// Address validation (issue: path hijacking by a spoofed copy). While the proxy drops the
/// client's genuine path-1 datagrams (so the copies arrive first), an attacker in the UE's
/// namespace captures those datagrams as they leave and re-sends each, unchanged, from another
/// address (an extra address of the UE's path-1 interface, so replies can be counted) to both of
/// the server's path ports. The copies are authentic and first, so the server sees them; what
/// must hold: no path's remote changes, the server sends the spoofed address at most three times
/// the bytes it received from it (RFC 9000 section 8.1), the download completes byte-exact once
/// the genuine datagrams pass again, and the session is the same. Before address validation a
/// single copy moved path 1's downlink to the spoofed address.
#[test]
fn spoofed_copies_of_genuine_datagrams_move_no_path_and_reflect_at_most_three_times() {
    use std::net::UdpSocket;

    let _turn = serial();
    let s = scenario(&["e2e.bytes=30000000", "e2e.cc=cubic", "tunnel.scheduler=rr"]);
    let prefix = unique_prefix("bv");
    let topo = topology(&s, &prefix, Emulator::Htb);
    let (p1, p2) = (topo.paths()[0].clone(), topo.paths()[1].clone());
    let spoof_ip = Ipv4Addr::from(u32::from(p1.downstream.addr) + 5);
    topo.ue()
        .ip(&["addr", "add", &format!("{spoof_ip}/24"), "dev", &p1.downstream.ifname])
        .unwrap();
    let pair = start_tunnel(&topo, &s, braid_exe()).unwrap();
    let server_path1 = SocketAddr::from((p1.upstream.addr, BASE_PORT));
    let server_path2 = SocketAddr::from((p2.upstream.addr, BASE_PORT + 1));
    let ue_tunnel_addr = (pair.spec().client_addr, TRANSFER_PORT).into();
    let (send, recv) = bounded_transfer(&s, ue_tunnel_addr);
    let (server_ns, ue_ns, proxy_ns) =
        (topo.server().name(), topo.ue().name(), topo.proxy().name());
    let drop_genuine = format!(
        "add table ip braid_guard\n\
         add chain ip braid_guard pre {{ type filter hook prerouting priority raw; policy accept; }}\n\
         add rule ip braid_guard pre iifname \"{}\" ip saddr {} udp dport {BASE_PORT} drop",
        p1.upstream.ifname, p1.downstream.addr
    );
    let cancel = AtomicBool::new(false);
    let (report, mirrored, reflected, before, during) = thread::scope(|sc| {
        let transfer = sc.spawn(|| run_pair(server_ns, ue_ns, &send, &recv, &cancel));
        thread::sleep(Duration::from_millis(1000));
        // Both paths carry the download by now: their remotes are the client's sockets.
        let before = pair.server_status().unwrap();
        run_in_ns(proxy_ns, "nft", &[&drop_genuine]).expect("nft drops path 1's genuine uplink");
        let attack = run_in(ue_ns, || {
            let spoof = UdpSocket::bind((spoof_ip, 0)).unwrap();
            spoof.set_read_timeout(Some(Duration::from_millis(1))).unwrap();
            let copies =
                capture_udp(&p1.downstream.ifname, server_path1, Duration::from_millis(1500))
                    .unwrap();
            let mut mirrored = 0u64;
            for c in &copies {
                for target in [server_path1, server_path2] {
                    if spoof.send_to(c, target).is_ok() {
                        mirrored += c.len() as u64;
                    }
                }
            }
            let mut reflected = 0u64;
            let mut buf = [0u8; 2048];
            let end = Instant::now() + Duration::from_millis(1500);
            while Instant::now() < end {
                if let Ok((n, _)) = spoof.recv_from(&mut buf) {
                    reflected += n as u64;
                }
            }
            (copies.len(), mirrored, reflected)
        })
        .unwrap();
        let during = pair.server_status().unwrap();
        run_in_ns(proxy_ns, "nft", &["delete table ip braid_guard"])
            .expect("nft lets path 1 pass again");
        let (copies, mirrored, reflected) = attack;
        eprintln!("spoofing: {copies} datagrams captured and mirrored to both path ports");
        (transfer.join().unwrap(), mirrored, reflected, before, during)
    });
    let after = pair.server_status().unwrap();
    drop((pair, topo));

    let report = report.expect("the download completes byte-exact");
    eprintln!(
        "spoofing: mirrored {mirrored} bytes from {spoof_ip}, {reflected} bytes came back; DLCT {:.2} s",
        report.receiver.dlct_s
    );
    assert_eq!(report.receiver.bytes, 30_000_000);
    assert!(mirrored > 10_000, "the attack sent {mirrored} bytes");
    assert!(reflected <= 3 * mirrored, "reflected {reflected} bytes for {mirrored} received");
    let remotes = |st: &braid_net::metrics::Snapshot| -> Vec<Option<String>> {
        st.paths.iter().map(|p| p.remote.clone()).collect()
    };
    assert!(remotes(&before).iter().all(Option::is_some), "{before:?}");
    assert_eq!(remotes(&during), remotes(&before), "no path moved during the attack");
    assert_eq!(remotes(&after), remotes(&before), "nor after it");
    assert_eq!(after.handshakes, before.handshakes);
    assert!(leftovers(&prefix).is_empty(), "{:?}", leftovers(&prefix));
}

/// The two ends' `[[path]]` sections in opposite orders: paths are matched by name in the
/// handshake, so both carry the download and each end's path counters agree by name.
#[test]
fn paths_listed_in_opposite_orders_both_carry_the_download() {
    let _turn = serial();
    let s = scenario(&["e2e.bytes=10000000", "e2e.cc=cubic", "tunnel.scheduler=rr"]);
    let prefix = unique_prefix("bo");
    let topo = topology(&s, &prefix, Emulator::Htb);
    let mut spec = tunnel_spec(&topo, &s);
    spec.server_reversed = true;
    let pair = TunnelPair::start(&spec, braid_exe(), READY_TIMEOUT).unwrap();
    let ue = (spec.client_addr, TRANSFER_PORT).into();
    let report = download(topo.proxy().name(), topo.ue().name(), &s, ue);
    thread::sleep(Duration::from_millis(250));
    let (server, client) = (pair.server_status().unwrap(), pair.client_status().unwrap());
    drop((pair, topo));

    let names = |snap: &braid_net::metrics::Snapshot| {
        snap.paths.iter().map(|p| p.name.clone()).collect::<Vec<_>>()
    };
    assert_eq!(names(&server), ["path2", "path1"], "the server's own order");
    assert_eq!(report.receiver.bytes, 10_000_000);
    for sp in &server.paths {
        let cp = client.paths.iter().find(|c| c.name == sp.name).unwrap();
        eprintln!(
            "{}: server sent {} received {}; client sent {} received {}",
            sp.name, sp.tx_pkts, sp.rx_pkts, cp.tx_pkts, cp.rx_pkts
        );
        assert!(sp.up && cp.up && sp.tx_pkts > 1000, "{sp:?}");
        // What one end sent on a path, the other received on the path of the same name (no
        // loss on these htb links; the last 100 ms of counters may lag).
        assert!(cp.rx_pkts as f64 >= 0.95 * sp.tx_pkts as f64, "{sp:?} vs {cp:?}");
    }
    assert!(leftovers(&prefix).is_empty(), "{:?}", leftovers(&prefix));
}

/// A path only one end has: the tunnel works over the other, the unmatched path stays down at
/// both ends, and each end's log names it.
#[test]
fn a_path_the_peer_does_not_know_is_down_and_named_in_both_logs() {
    let _turn = serial();
    let s = scenario(&["e2e.bytes=5000000", "e2e.cc=cubic", "tunnel.scheduler=rr"]);
    let prefix = unique_prefix("bu");
    let topo = topology(&s, &prefix, Emulator::Htb);
    let mut spec = tunnel_spec(&topo, &s);
    spec.server_reversed = true;
    spec.server_names = vec![None, Some("lte".into())];
    let pair = TunnelPair::start(&spec, braid_exe(), READY_TIMEOUT).unwrap();
    let ue = (spec.client_addr, TRANSFER_PORT).into();
    let report = download(topo.proxy().name(), topo.ue().name(), &s, ue);
    thread::sleep(Duration::from_millis(250));
    let (server, client) = (pair.server_status().unwrap(), pair.client_status().unwrap());
    let (server_log, client_log) = (pair.server.output_tail(), pair.client.output_tail());
    drop((pair, topo));

    assert_eq!(report.receiver.bytes, 5_000_000);
    let path = |snap: &braid_net::metrics::Snapshot, name: &str| {
        snap.paths.iter().find(|p| p.name == name).cloned().unwrap()
    };
    assert!(path(&client, "path1").up && path(&server, "path1").up);
    assert!(!path(&client, "path2").up, "{client:?}");
    assert!(!path(&server, "lte").up, "{server:?}");
    assert_eq!(path(&server, "lte").tx_pkts, 0);
    assert!(client_log.contains("the peer has no [[path]] named \"path2\""), "{client_log}");
    assert!(client_log.contains("the peer has a path \"lte\""), "{client_log}");
    assert!(server_log.contains("the peer has no [[path]] named \"lte\""), "{server_log}");
    assert!(server_log.contains("the peer has a path \"path2\""), "{server_log}");
    assert!(leftovers(&prefix).is_empty(), "{:?}", leftovers(&prefix));
}

/// `ip rule` of namespace `ns` (both families), for the routing test.
fn rules(ns: &Netns) -> String {
    format!("{}{}", ns.ip(&["-4", "rule"]).unwrap(), ns.ip(&["-6", "rule"]).unwrap())
}

/// `interface.routes = ["0.0.0.0/0"]` on the client, as wg-quick: the UE's own connection to
/// the server (behind the proxy) goes through the tunnel while the path sockets keep their
/// routes (they carry the fwmark); the rules are there while the daemon runs and gone after it
/// stops, and the table's routes go with the TUN device.
#[test]
fn a_default_route_through_the_tunnel_carries_the_ues_own_connection_and_goes_on_exit() {
    let _turn = serial();
    let s = scenario(&["e2e.bytes=5000000", "e2e.cc=cubic", "tunnel.scheduler=rr"]);
    let prefix = unique_prefix("br");
    let topo = topology(&s, &prefix, Emulator::Htb);
    let mut spec = tunnel_spec(&topo, &s);
    spec.client_routes = vec!["0.0.0.0/0".into()];
    let before = rules(topo.ue());
    let pair = TunnelPair::start(&spec, braid_exe(), READY_TIMEOUT).unwrap();
    let during = rules(topo.ue());
    let table = topo.ue().ip(&["-4", "route", "show", "table", "51900"]).unwrap();
    // The UE uploads to the server's own address: only the tunnel's table routes it.
    let server = SocketAddr::new(IpAddr::V4(topo.server_addr()), TRANSFER_PORT);
    let report = download(topo.ue().name(), topo.server().name(), &s, server);
    thread::sleep(Duration::from_millis(250));
    let client = pair.client_status().unwrap();
    drop(pair);
    let after = rules(topo.ue());
    let table_after = topo.ue().ip(&["-4", "route", "show", "table", "51900"]).unwrap();
    drop(topo);

    eprintln!("rules while running:\n{during}table 51900: {table}");
    assert!(!before.contains("51900"), "{before}");
    assert!(during.contains("31001:\tnot from all fwmark 0xcabc lookup 51900"), "{during}");
    assert!(during.contains("31000:\tfrom all lookup main suppress_prefixlength 0"), "{during}");
    assert!(table.contains("default dev braid-c"), "{table}");
    assert_eq!(report.receiver.bytes, 5_000_000);
    // 5 MB in 1400-byte packets: more than 3 500 read from the UE's TUN device.
    assert!(client.tun_rx_pkts > 3_500, "{client:?}");
    assert!(!after.contains("51900") && !after.contains("suppress_prefixlength"), "{after}");
    assert!(table_after.trim().is_empty(), "{table_after}");
    assert!(leftovers(&prefix).is_empty(), "{:?}", leftovers(&prefix));
}

/// The page at `http://127.0.0.1:9477/` in namespace `ns`, as headless Chromium renders it
/// after its scripts ran (`--dump-dom`; `--virtual-time-budget` lets the page's first polls
/// happen before the dump).
fn rendered_page(ns: &str, profile: &std::path::Path) -> String {
    wait_for_chromium();
    let url = format!("http://127.0.0.1:{METRICS_PORT}/");
    let profile = format!("--user-data-dir={}", profile.display());
    let args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        profile.as_str(),
        "--virtual-time-budget=2500",
        "--dump-dom",
        url.as_str(),
    ];
    run_in_ns(ns, "chromium", &args).expect("chromium renders the page")
}

/// `make deps` installs Chromium in the background when it is missing (Makefile): waits (up to
/// 10 minutes) for that install to end, and fails with its log if it failed.
fn wait_for_chromium() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target");
    let rc = dir.join("chromium-install.rc");
    let deadline = Instant::now() + Duration::from_secs(600);
    while run_with_timeout("sh", &["-c", "command -v chromium"], COMMAND_TIMEOUT).is_err() {
        match fs::read_to_string(&rc) {
            Ok(code) => panic!(
                "installing chromium ended with {code} and no chromium: {}",
                fs::read_to_string(dir.join("chromium-install.log")).unwrap_or_default()
            ),
            Err(_) if Instant::now() < deadline => thread::sleep(Duration::from_secs(1)),
            Err(_) => panic!("no chromium after 10 minutes; `make deps` installs it (as root)"),
        }
    }
}

/// The part of `dom` from `start` to the next `end`.
fn section<'a>(dom: &'a str, start: &str, end: &str) -> &'a str {
    let from = dom.find(start).unwrap_or_else(|| panic!("{start} not in the page: {dom}"));
    let rest = &dom[from..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

/// The values of attribute `attr` in `html`, in order.
fn attr_values(html: &str, attr: &str) -> Vec<String> {
    let key = format!("{attr}=\"");
    html.match_indices(&key)
        .map(|(k, _)| {
            let v = &html[k + key.len()..];
            v[..v.find('"').unwrap()].to_string()
        })
        .collect()
}

/// The operator page, in a real browser against a real tunnel: after a download it shows both
/// paths up with srtt and throughput curves drawn from the daemon's samples; a path cut shows
/// as that path's state turning down in the table and in its state strip, and back up after.
#[test]
fn the_operator_page_draws_the_tunnels_paths_and_shows_a_cut_path_going_down() {
    let _turn = serial();
    let s = scenario(&["e2e.bytes=10000000", "e2e.cc=cubic", "tunnel.scheduler=rr"]);
    let prefix = unique_prefix("bw");
    let topo = topology(&s, &prefix, Emulator::Htb);
    let pair = start_tunnel(&topo, &s, braid_exe()).unwrap();
    let profile = TempDir(std::env::temp_dir().join(format!("{prefix}-chromium")));
    let ue = (pair.spec().client_addr, TRANSFER_PORT).into();
    download(topo.server().name(), topo.ue().name(), &s, ue);
    // A sample a second: let two land after the download.
    thread::sleep(Duration::from_millis(2200));
    let before = rendered_page(topo.ue().name(), &profile.0);
    let target = braid_lab::lab::cut::CutTarget::new(&topo, 0);
    let cut = braid_lab::lab::cut::cut(&target).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while pair.client_status().unwrap().paths[0].up && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
    }
    thread::sleep(Duration::from_millis(2200));
    let during = rendered_page(topo.ue().name(), &profile.0);
    drop(cut);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !pair.client_status().unwrap().paths[0].up && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
    }
    thread::sleep(Duration::from_millis(2200));
    let after = rendered_page(topo.ue().name(), &profile.0);
    drop((pair, topo));

    let updates = |dom: &str| attr_values(section(dom, "<body", ">"), "data-updates");
    assert!(updates(&before).first().is_some_and(|n| n.parse::<u32>().unwrap() >= 1));
    let rows = |dom: &str| {
        let table = section(dom, "<tbody", "</tbody>");
        attr_values(table, "data-path")
            .into_iter()
            .zip(attr_values(table, "data-state"))
            .collect::<Vec<_>>()
    };
    let up = |a: &str, b: &str| {
        vec![("path1".to_string(), a.to_string()), ("path2".to_string(), b.to_string())]
    };
    assert_eq!(rows(&before), up("up", "up"), "{before}");
    assert_eq!(rows(&during), up("down", "up"), "{during}");
    assert_eq!(rows(&after), up("up", "up"), "{after}");
    // Both paths' srtt curves have points, one per sample with an srtt.
    let srtt = section(&before, "data-metric=\"srtt_ms\"", "</svg>");
    for path in ["path1", "path2"] {
        let points: usize = srtt
            .split("<polyline")
            .filter(|p| p.contains(&format!("data-path=\"{path}\"")))
            .map(|p| attr_values(p, "points")[0].split(' ').count())
            .sum();
        assert!(points >= 3, "{path}: {points} srtt points: {srtt}");
    }
    // The throughput chart draws the paths' receive rates.
    let rx = section(&before, "data-metric=\"rx_mbps\"", "</svg>");
    assert!(rx.contains("data-series=\"rx\""), "{rx}");
    let strip = |dom: &str| {
        attr_values(section(dom, "class=\"states\" data-path=\"path1\"", "</g>"), "data-state")
    };
    assert_eq!(strip(&during).last().map(String::as_str), Some("down"), "{during}");
    let states = strip(&after);
    let mut runs = states.clone();
    runs.dedup();
    assert!(
        runs.ends_with(&["up".to_string(), "down".to_string(), "up".to_string()]),
        "{states:?}"
    );
    assert!(leftovers(&prefix).is_empty(), "{:?}", leftovers(&prefix));
}

/// A host behind the client (a LAN on a 1500-byte link, routed through the UE) and the server,
/// also on a 1500-byte link: each announces an MSS of 1460, which the tunnel's 1400-byte MTU
/// cannot carry. Both daemons clamp the SYN and SYN-ACK they read from their TUN device
/// (braid-net's `mss_clamp.rs`) to 1360, so the server's connection sends segments of 1360
/// bytes less its 12 bytes of timestamps (`TCP_INFO`'s `snd_mss`, with path MTU discovery off
/// at the server; a daemon without the clamp gives 1448), both count a clamped packet, and a
/// download to the LAN host arrives byte-exact.
#[test]
fn a_lan_hosts_connection_through_the_tunnel_gets_its_mss_clamped_to_the_tunnels() {
    let _turn = serial();
    let s = scenario(&["e2e.bytes=5000000", "e2e.cc=cubic", "tunnel.scheduler=rr"]);
    let prefix = unique_prefix("bm");
    let topo = topology(&s, &prefix, Emulator::Htb);
    let pair = start_tunnel(&topo, &s, braid_exe()).unwrap();
    let lan = Netns::create(&format!("{prefix}-lan")).unwrap();
    braid_lab::netns::veth_pair(&lan, "lan0", topo.ue(), "ue-lan").unwrap();
    lan.ip(&["addr", "add", "10.77.0.2/24", "dev", "lan0"]).unwrap();
    lan.ip(&["link", "set", "dev", "lan0", "up"]).unwrap();
    lan.ip(&["route", "add", "default", "via", "10.77.0.1"]).unwrap();
    topo.ue().ip(&["addr", "add", "10.77.0.1/24", "dev", "ue-lan"]).unwrap();
    topo.ue().ip(&["link", "set", "dev", "ue-lan", "up"]).unwrap();
    topo.ue().sysctl("net.ipv4.ip_forward", "1").unwrap();
    topo.proxy().ip(&["route", "add", "10.77.0.0/24", "dev", SERVER_IF]).unwrap();
    // Without path MTU discovery the server's MSS stays what the SYN-ACK announced (the proxy
    // fragments what is too large for the tunnel), so `snd_mss` shows the clamp.
    topo.server().sysctl("net.ipv4.ip_no_pmtu_disc", "1").unwrap();
    let lan_host = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 77, 0, 2)), TRANSFER_PORT);
    let report = download(topo.server().name(), lan.name(), &s, lan_host);
    let (server, client) = (pair.server_status().unwrap(), pair.client_status().unwrap());
    drop((pair, lan, topo));

    let snd_mss = report.sender.final_info().unwrap().snd_mss;
    eprintln!(
        "LAN download: {:.2} s; server's snd_mss {snd_mss}; clamped SYNs: server {}, client {}",
        report.receiver.dlct_s, server.mss_clamped_pkts, client.mss_clamped_pkts
    );
    assert_eq!(report.receiver.bytes, 5_000_000);
    assert_eq!(snd_mss, 1348, "1400 - 40 - 12 bytes of timestamps");
    assert!(server.mss_clamped_pkts >= 1, "the server's SYN: {server:?}");
    assert!(client.mss_clamped_pkts >= 1, "the LAN host's SYN-ACK: {client:?}");
    assert!(leftovers(&prefix).is_empty(), "{:?}", leftovers(&prefix));
}
