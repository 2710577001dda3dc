//! UDP GSO across a veth, with and without the offloads `braid_lab::offload` turns off. Needs
//! root (namespaces, AF_PACKET, SIOCETHTOOL set commands).
//!
//! Namespaces A and B joined by one veth. A sends a UDP GSO train: one `send` of 8 x 1200 bytes
//! with `UDP_SEGMENT` 1200, as `braid tunnel` sends a path's datagrams. An AF_PACKET socket on
//! B's end records the frames as they arrive (with `MSG_TRUNC`, so an oversize frame shows its
//! real length). A frame is 14 (Ethernet) + 20 (IPv4) + 8 (UDP) + payload bytes:
//! - fresh veth (`tx-udp-segmentation` on): the whole train is one 14 + 20 + 8 + 9600 = 9642-byte
//!   super-frame, larger than the 1514-byte frames an MTU-1500 link carries;
//! - after `disable_offloads`: 8 frames of 14 + 20 + 8 + 1200 = 1242 bytes;
//! - `tx-udp-segmentation` alone back on (TSO, GSO, GRO still off): one super-frame again, so it
//!   is that feature, which the legacy TSO/GSO/GRO ioctls do not touch, that matters.

use std::io;
use std::mem::size_of;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use braid_lab::netns::{unique_prefix, veth_pair, Netns};
use braid_lab::offload::{active_offloads, disable_offloads, set_feature};

/// `include/uapi/linux/udp.h`: segment size of a UDP GSO send.
const UDP_SEGMENT: libc::c_int = 103;
const ADDR_A: Ipv4Addr = Ipv4Addr::new(10, 78, 0, 1);
const ADDR_B: Ipv4Addr = Ipv4Addr::new(10, 78, 0, 2);
const MAC_A: &str = "02:00:00:00:01:0a";
const MAC_B: &str = "02:00:00:00:01:0b";
const IFNAME: &str = "v0";
const PORT_B: u16 = 7878;
const SEGMENT_BYTES: usize = 1200;
const SEGMENTS: usize = 8;
/// Ethernet + IPv4 (no options) + UDP headers.
const HEADER_BYTES: usize = 14 + 20 + 8;
/// How long to wait for a train's frames.
const RECV_DEADLINE: Duration = Duration::from_secs(5);

/// Two namespaces joined by a veth `v0`-`v0`, addressed, neighbours static. Dropping it deletes
/// both namespaces (the veth goes with them), also when the test panics.
struct Pair {
    a: Netns,
    b: Netns,
}

impl Pair {
    fn new() -> Pair {
        let prefix = unique_prefix("bl");
        let a = Netns::create(&format!("{prefix}-offl-a")).expect("namespace A");
        let b = Netns::create(&format!("{prefix}-offl-b")).expect("namespace B");
        let pair = Pair { a, b };
        veth_pair(&pair.a, IFNAME, &pair.b, IFNAME).expect("veth");
        for (ns, mac, addr, peer, peer_mac) in
            [(&pair.a, MAC_A, ADDR_A, ADDR_B, MAC_B), (&pair.b, MAC_B, ADDR_B, ADDR_A, MAC_A)]
        {
            ns.ip(&["link", "set", "dev", IFNAME, "address", mac]).unwrap();
            ns.ip(&["addr", "add", &format!("{addr}/24"), "dev", IFNAME]).unwrap();
            ns.ip(&["link", "set", "dev", IFNAME, "up"]).unwrap();
            // No ARP exchange: the train is the only IPv4 traffic on the link.
            let peer = peer.to_string();
            ns.ip(&[
                "neigh",
                "replace",
                &peer,
                "lladdr",
                peer_mac,
                "dev",
                IFNAME,
                "nud",
                "permanent",
            ])
            .unwrap();
        }
        pair
    }
}

/// An AF_PACKET socket receiving the IPv4 frames of B's `v0`, and a UDP socket bound to the
/// train's destination so that B answers with no ICMP.
struct Tap {
    packet: OwnedFd,
    _sink: UdpSocket,
}

impl Tap {
    /// Opens the sockets; call inside B.
    fn open() -> io::Result<Tap> {
        let sink = UdpSocket::bind(SocketAddrV4::new(ADDR_B, PORT_B))?;
        let protocol = (libc::ETH_P_IP as u16).to_be();
        // SAFETY: socket(2); the descriptor is owned on success.
        let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, protocol.into()) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor nobody else owns.
        let packet = unsafe { OwnedFd::from_raw_fd(fd) };
        let name = std::ffi::CString::new(IFNAME).unwrap();
        // SAFETY: NUL-terminated name.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if ifindex == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: sockaddr_ll is plain old data.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = protocol;
        addr.sll_ifindex = ifindex as i32;
        // SAFETY: bind(2) with a sockaddr_ll of its own size.
        let rc = unsafe {
            libc::bind(
                packet.as_raw_fd(),
                (&addr as *const libc::sockaddr_ll).cast(),
                size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        let timeout = libc::timeval { tv_sec: 0, tv_usec: 100_000 };
        // SAFETY: setsockopt(2) with a timeval of its own size.
        let rc = unsafe {
            libc::setsockopt(
                packet.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&timeout as *const libc::timeval).cast(),
                size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Tap { packet, _sink: sink })
    }

    /// Lengths of the frames carrying UDP to `PORT_B`, until they hold `payload_bytes` of UDP
    /// payload or the deadline passes.
    fn frames(&self, payload_bytes: usize) -> Vec<usize> {
        let mut buf = vec![0u8; 65536];
        let mut lengths = Vec::new();
        let mut seen = 0;
        let deadline = Instant::now() + RECV_DEADLINE;
        while seen < payload_bytes && Instant::now() < deadline {
            // SAFETY: recv(2) into `buf`, at most its length; MSG_TRUNC makes it return the
            // frame's real length even when that is longer.
            let n = unsafe {
                libc::recv(
                    self.packet.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    libc::MSG_TRUNC,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                assert!(
                    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted),
                    "recv: {e}"
                );
                continue;
            }
            let len = n as usize;
            if is_udp_to_port_b(&buf[..len.min(buf.len())]) {
                lengths.push(len);
                seen += len - HEADER_BYTES;
            }
        }
        lengths
    }
}

/// Ethernet type IPv4, IP protocol UDP, no IP options, destination port `PORT_B`.
fn is_udp_to_port_b(frame: &[u8]) -> bool {
    frame.len() >= HEADER_BYTES
        && frame[12..14] == [0x08, 0x00]
        && frame[14] == 0x45
        && frame[23] == libc::IPPROTO_UDP as u8
        && frame[36..38] == PORT_B.to_be_bytes()
}

/// A UDP socket in A sending to B with `UDP_SEGMENT` set; call inside A.
fn gso_sender() -> io::Result<UdpSocket> {
    let sock = UdpSocket::bind(SocketAddrV4::new(ADDR_A, 0))?;
    sock.connect(SocketAddrV4::new(ADDR_B, PORT_B))?;
    let segment = SEGMENT_BYTES as libc::c_int;
    // SAFETY: setsockopt(2) with an int of its own size.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_UDP,
            UDP_SEGMENT,
            (&segment as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(sock)
}

/// Sends one train and returns the frame lengths B's tap saw.
fn send_train(sender: &UdpSocket, tap: &Tap) -> Vec<usize> {
    let train = vec![0x5au8; SEGMENTS * SEGMENT_BYTES];
    assert_eq!(sender.send(&train).expect("UDP GSO send"), train.len());
    tap.frames(train.len())
}

#[test]
fn udp_gso_train_crosses_a_veth_as_separate_frames_only_with_offloads_off() {
    let pair = Pair::new();
    let tap = pair.b.run_in(Tap::open).unwrap().expect("tap in B");
    let sender = pair.a.run_in(gso_sender).unwrap().expect("sender in A");
    let super_frame = vec![HEADER_BYTES + SEGMENTS * SEGMENT_BYTES];
    let segments = vec![HEADER_BYTES + SEGMENT_BYTES; SEGMENTS];

    // A fresh veth segments nothing: the train crosses whole.
    let on = pair.a.run_in(|| active_offloads(IFNAME)).unwrap().unwrap();
    assert!(on.contains(&"tx-udp-segmentation"), "{on:?}");
    assert_eq!(send_train(&sender, &tap), super_frame);

    for ns in [&pair.a, &pair.b] {
        ns.run_in(|| disable_offloads(IFNAME)).unwrap().expect("offloads off");
        let on = ns.run_in(|| active_offloads(IFNAME)).unwrap().unwrap();
        assert!(on.is_empty(), "still on in {}: {on:?}", ns.name());
    }
    assert_eq!(send_train(&sender, &tap), segments);

    // Only tx-udp-segmentation back on the sending end: the legacy TSO/GSO/GRO being off does
    // not stop the super-frame.
    pair.a.run_in(|| set_feature(IFNAME, "tx-udp-segmentation", true)).unwrap().unwrap();
    let on = pair.a.run_in(|| active_offloads(IFNAME)).unwrap().unwrap();
    assert_eq!(on, ["tx-udp-segmentation"]);
    assert_eq!(send_train(&sender, &tap), super_frame);
}

#[test]
fn unknown_feature_and_missing_interface_are_named_in_the_error() {
    let prefix = unique_prefix("bl");
    let ns = Netns::create(&format!("{prefix}-offl-e")).expect("namespace");
    let err = ns.run_in(|| set_feature("lo", "tx-no-such-feature", false)).unwrap().unwrap_err();
    let text = err.to_string();
    assert!(text.contains("\"lo\"") && text.contains("tx-no-such-feature"), "{text}");
    let err = ns.run_in(|| disable_offloads("v-missing")).unwrap().unwrap_err();
    assert!(err.to_string().contains("\"v-missing\""), "{err}");
}
