//! The Figure 1 topology in namespaces: it comes up as documented, and it leaves nothing behind,
//! also when a command fails half-way. Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN).

use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use braid_lab::netns::{self, cleanup_stale, list_netns, NetError, Netns};
use braid_lab::offload;
use braid_lab::topology::{Topology, TopologyOptions, TAG};
use braid_sim::Scenario;

fn ours(prefix: &str) -> Vec<String> {
    let mine = format!("{prefix}-");
    list_netns().unwrap().into_iter().filter(|n| n.starts_with(&mine)).collect()
}

fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

fn alive(pid: u32) -> bool {
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
}

#[test]
fn topology_comes_up_as_documented_and_tears_down_with_nothing_left() {
    let scenario = Scenario::default();
    let opts = TopologyOptions::new();
    let prefix = opts.prefix.clone();
    let topo = Topology::build(&scenario, &opts).unwrap();

    // Server, proxy, UE and one emulator namespace per link (server link + 2 paths).
    assert_eq!(ours(&prefix).len(), 6, "{:?}", ours(&prefix));
    let paths = topo.paths();
    assert_eq!(paths.len(), 2);
    assert_eq!(paths[0].upstream.addr, Ipv4Addr::new(10, 91, 0, 1));
    assert_eq!(paths[0].downstream.addr, Ipv4Addr::new(10, 91, 0, 2));
    assert_eq!(paths[1].downstream.ifname, "p2");
    assert_eq!(paths[1].downstream.netns, topo.ue().name());
    assert_eq!(topo.server_addr(), Ipv4Addr::new(10, 90, 0, 1));
    let ue_addrs = topo.ue().ip(&["-4", "-o", "addr", "show", "dev", "p1"]).unwrap();
    assert!(ue_addrs.contains("10.91.0.2/24"), "{ue_addrs}");

    assert_eq!(topo.proxy().read_sysctl("net.ipv4.ip_forward").unwrap(), "1");
    assert_eq!(topo.ue().read_sysctl("net.ipv4.conf.p1.rp_filter").unwrap(), "0");
    let on = topo.ue().run_in(|| offload::active_offloads("p1")).unwrap().unwrap();
    assert!(on.is_empty(), "offloads still on: {on:?}");

    // The htb fallback: 50 Mbit/s, 500-packet pfifo on the downlink of path 1.
    let qdisc =
        netns::run("tc", &["-n", &paths[0].emulator_netns, "qdisc", "show", "dev", "to-down"])
            .unwrap();
    assert!(qdisc.contains("pfifo") && qdisc.contains("limit 500"), "{qdisc}");
    let class =
        netns::run("tc", &["-n", &paths[0].emulator_netns, "class", "show", "dev", "to-down"])
            .unwrap();
    assert!(class.contains("rate 50Mbit"), "{class}");

    // Single-path routing: a TCP connection from the server reaches the UE over path 1.
    let ue_addr = topo.route_single_path(1).unwrap();
    let listener = topo.ue().run_in(|| TcpListener::bind((ue_addr, 5201))).unwrap().unwrap();
    let stream = topo
        .server()
        .run_in(|| TcpStream::connect_timeout(&(ue_addr, 5201).into(), Duration::from_secs(5)))
        .unwrap()
        .unwrap();
    let (_, peer) = listener.accept().unwrap();
    assert_eq!(peer.ip(), topo.server_addr());
    let counters = topo.counters(1).unwrap().unwrap();
    assert!(counters.down.packets > 0, "{counters:?}");
    drop((stream, listener));

    drop(topo);
    assert!(ours(&prefix).is_empty(), "left behind: {:?}", ours(&prefix));
}

#[test]
fn a_failing_command_is_a_typed_error_and_what_was_built_is_removed() {
    let opts = TopologyOptions::new();
    let prefix = opts.prefix.clone();
    // Occupy the name of path 1's emulator namespace, so building fails after server, proxy,
    // UE and em0 exist.
    let squatter = Netns::create(&format!("{prefix}-em1")).unwrap();
    let err = match Topology::build(&Scenario::default(), &opts) {
        Ok(_) => panic!("build succeeded over an existing namespace"),
        Err(e) => e,
    };
    match &err {
        NetError::Command { cmd, stderr, .. } => {
            assert_eq!(cmd, &format!("ip netns add {prefix}-em1"));
            assert!(stderr.contains("exists"), "{stderr}");
        }
        other => panic!("unexpected error {other:?}"),
    }
    assert_eq!(ours(&prefix), vec![format!("{prefix}-em1")]);
    squatter.delete().unwrap();
    assert!(ours(&prefix).is_empty());
}

#[test]
fn a_namespace_guard_kills_what_runs_inside() {
    let prefix = netns::unique_prefix(TAG);
    let ns = Netns::create(&format!("{prefix}-x")).unwrap();
    // An orphaned background process: nobody but the guard will stop it.
    let out = netns::run(
        "ip",
        &["netns", "exec", ns.name(), "sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!"],
    )
    .unwrap();
    let pid: u32 = out.trim().parse().unwrap();
    assert!(alive(pid));
    assert_eq!(ns.pids().unwrap(), vec![pid]);
    drop(ns);
    assert!(wait_until(Duration::from_secs(2), || !alive(pid)), "pid {pid} survived");
    assert!(ours(&prefix).is_empty());
}

#[test]
fn a_child_in_a_namespace_sees_only_that_namespace() {
    let prefix = netns::unique_prefix(TAG);
    let ns = Netns::create(&format!("{prefix}-x")).unwrap();
    ns.ip(&["link", "add", "name", "probe0", "type", "veth", "peer", "name", "probe1"]).unwrap();
    let mut child = ns.spawn("sh", &["-c", "cat /proc/net/dev; echo done; sleep 30"]).unwrap();
    child.wait_for_line("done", Duration::from_secs(5)).unwrap();
    assert!(child.output_tail().contains("probe0"), "{}", child.output_tail());
    let pid = child.pid();
    drop(child);
    assert!(!alive(pid));
}

#[test]
fn cleanup_stale_removes_dead_runs_only() {
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let stale_name = format!("{TAG}-{dead_pid}-0-srv");
    let live_prefix = netns::unique_prefix(TAG);
    let stale = Netns::create(&stale_name).unwrap();
    let live = Netns::create(&format!("{live_prefix}-srv")).unwrap();
    std::mem::forget(stale); // as a killed run would: no guard left to delete it

    let removed = cleanup_stale(TAG).unwrap();
    assert!(removed.contains(&stale_name), "{removed:?}");
    assert!(!list_netns().unwrap().contains(&stale_name));
    assert_eq!(ours(&live_prefix), vec![live.name().to_string()]);
    drop(live);
}

/// `capget`/`capset` data (include/uapi/linux/capability.h, version 3: two 32-bit words).
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}
const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
const CAP_NET_ADMIN: u32 = 12;

#[test]
fn without_cap_net_admin_the_build_fails_clearly_and_creates_nothing() {
    let opts = TopologyOptions::new();
    let prefix = opts.prefix.clone();
    // Capabilities are per thread: drop CAP_NET_ADMIN from this thread's effective set only.
    let result = std::thread::spawn(move || {
        let mut hdr = CapHeader { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
        let mut data = [CapData::default(); 2];
        unsafe {
            assert_eq!(libc::syscall(libc::SYS_capget, &mut hdr, data.as_mut_ptr()), 0);
            data[0].effective &= !(1 << CAP_NET_ADMIN);
            assert_eq!(libc::syscall(libc::SYS_capset, &mut hdr, data.as_ptr()), 0);
        }
        Topology::build(&Scenario::default(), &opts).map(drop)
    })
    .join()
    .unwrap();
    match result {
        Err(e @ NetError::NotPrivileged { .. }) => {
            assert!(e.to_string().starts_with("needs CAP_NET_ADMIN: run as root"), "{e}");
        }
        other => panic!("expected NotPrivileged, got {other:?}"),
    }
    assert!(ours(&prefix).is_empty());
}
