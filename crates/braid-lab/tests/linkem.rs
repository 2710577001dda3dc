//! The link emulator on real frames: ns A <-veth-> ns E (linkem between its two veths) <-veth->
//! ns B, A and B on one /24. Needs root (namespaces, AF_PACKET). Every namespace is named with
//! the test's PID and tag, and deleted by a guard, also when a test panics. Tests run one at a
//! time (they measure timing on a two-core machine).
//!
//! The probes are UDP sockets with kernel receive timestamps (`SO_TIMESTAMPNS`), so what is
//! measured is when frames crossed the veths, not when a test thread woke up.

use std::ffi::CString;
use std::io;
use std::mem::size_of;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use braid_core::linkmodel::{BernoulliConfig, LossConfig};
use braid_lab::linkem::{
    disable_offloads, DirectionConfig, Linkem, LinkemConfig, LinkemStats, Rate,
};

/// One test at a time: they measure timing.
static SERIAL: Mutex<()> = Mutex::new(());

const ADDR_A: &str = "10.77.0.1";
const ADDR_B: &str = "10.77.0.2";
const MAC_A: &str = "02:00:00:00:00:0a";
const MAC_B: &str = "02:00:00:00:00:0b";
const PORT_B: u16 = 7777;
/// UDP payload making a 1514-byte Ethernet frame: 1514 - 14 (Ethernet) - 20 (IP) - 8 (UDP).
const FULL_PAYLOAD: usize = 1472;
const FULL_FRAME_BYTES: f64 = 1514.0;

fn run(args: &[&str]) {
    let out = Command::new(args[0]).args(&args[1..]).output().expect("running a command");
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

/// Runs `f` on a thread that has entered the network namespace `ns`; sockets it creates stay in
/// that namespace wherever they are used later, and threads it spawns start there.
fn in_ns<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let path = CString::new(format!("/run/netns/{ns}")).unwrap();
    thread::spawn(move || {
        // SAFETY: open(2) of a NUL-terminated path, setns(2) of the descriptor, close(2).
        unsafe {
            let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            assert!(fd >= 0, "open netns: {}", io::Error::last_os_error());
            let rc = libc::setns(fd, libc::CLONE_NEWNET);
            libc::close(fd);
            assert_eq!(rc, 0, "setns: {}", io::Error::last_os_error());
        }
        f()
    })
    .join()
    .expect("thread in namespace panicked")
}

/// Three namespaces and two veth pairs: A (a0) <-> (ea) E (eb) <-> (b0) B. Dropping it stops
/// the emulator and deletes the namespaces, which deletes the veths.
struct Lab {
    ns: [String; 3],
    linkem: Option<Linkem>,
}

impl Lab {
    fn new(tag: &str) -> Lab {
        let pid = std::process::id();
        let ns = ["a", "e", "b"].map(|n| format!("bl-{pid}-{tag}-{n}"));
        // The guard exists before the first namespace, so a failed set-up is cleaned up too.
        let lab = Lab { ns, linkem: None };
        let [a, e, b] = &lab.ns;
        for n in &lab.ns {
            run(&["ip", "netns", "add", n]);
            // No IPv6: no router or neighbour solicitations to cross the link uninvited.
            for key in ["default", "all"] {
                let f = format!("/proc/sys/net/ipv6/conf/{key}/disable_ipv6");
                in_ns(n, move || std::fs::write(f, "1").expect("disabling IPv6"));
            }
            run(&["ip", "-n", n, "link", "set", "lo", "up"]);
        }
        run(&[
            "ip", "-n", e, "link", "add", "ea", "type", "veth", "peer", "name", "a0", "netns", a,
        ]);
        run(&[
            "ip", "-n", e, "link", "add", "eb", "type", "veth", "peer", "name", "b0", "netns", b,
        ]);
        run(&["ip", "-n", a, "link", "set", "a0", "address", MAC_A]);
        run(&["ip", "-n", b, "link", "set", "b0", "address", MAC_B]);
        run(&["ip", "-n", a, "addr", "add", &format!("{ADDR_A}/24"), "dev", "a0"]);
        run(&["ip", "-n", b, "addr", "add", &format!("{ADDR_B}/24"), "dev", "b0"]);
        for (n, dev) in [(a, "a0"), (e, "ea"), (e, "eb"), (b, "b0")] {
            run(&["ip", "-n", n, "link", "set", dev, "up"]);
        }
        // Static neighbours: no ARP exchange crosses the link during a measurement.
        run(&[
            "ip",
            "-n",
            a,
            "neigh",
            "replace",
            ADDR_B,
            "lladdr",
            MAC_B,
            "dev",
            "a0",
            "nud",
            "permanent",
        ]);
        run(&[
            "ip",
            "-n",
            b,
            "neigh",
            "replace",
            ADDR_A,
            "lladdr",
            MAC_A,
            "dev",
            "b0",
            "nud",
            "permanent",
        ]);
        // The senders must not hand the veths super-frames.
        in_ns(a, || disable_offloads("a0").expect("offloads off on a0"));
        in_ns(b, || disable_offloads("b0").expect("offloads off on b0"));
        lab
    }

    fn a(&self) -> &str {
        &self.ns[0]
    }

    fn b(&self) -> &str {
        &self.ns[2]
    }

    /// Starts the emulator in E with `ab` from A to B and `ba` back.
    fn start_linkem(&mut self, ab: DirectionConfig, ba: DirectionConfig) {
        let config = LinkemConfig { if_a: "ea".into(), if_b: "eb".into(), ab, ba, seed: 42 };
        let linkem = in_ns(&self.ns[1], move || Linkem::start(&config)).expect("linkem starts");
        self.linkem = Some(linkem);
    }

    fn stop_linkem(&mut self) -> LinkemStats {
        self.linkem.take().expect("linkem running").stop()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if let Some(linkem) = self.linkem.take() {
            linkem.stop();
        }
        for n in &self.ns {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
        }
    }
}

/// Asserts that nothing of the test tagged `tag` is left.
fn assert_cleaned_up(tag: &str) {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let list = String::from_utf8_lossy(&out.stdout);
    let prefix = format!("bl-{}-{tag}-", std::process::id());
    assert!(!list.contains(&prefix), "namespaces left behind: {list}");
}

fn setsockopt_int(sock: &UdpSocket, level: libc::c_int, name: libc::c_int, value: libc::c_int) {
    // SAFETY: a live int of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "setsockopt: {}", io::Error::last_os_error());
}

/// A UDP socket in namespace `ns` bound to `addr`, with kernel receive timestamps, large
/// buffers and a receive timeout, so every wait in the tests is bounded.
fn udp_socket(ns: &str, addr: String) -> UdpSocket {
    let sock = in_ns(ns, move || UdpSocket::bind(addr).expect("bind"));
    setsockopt_int(&sock, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1);
    setsockopt_int(&sock, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 8 << 20);
    setsockopt_int(&sock, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, 8 << 20);
    sock.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    sock
}

fn realtime_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Receives one datagram with its kernel receive time (`CLOCK_REALTIME` ns); `None` on timeout.
fn recv_stamped(sock: &UdpSocket, buf: &mut [u8]) -> Option<(usize, u64)> {
    let mut control = [0u64; 8];
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    // SAFETY: msghdr is plain old data; the pointers set are live for the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = size_of::<[u64; 8]>();
    // SAFETY: `msg` points at live buffers of the lengths given.
    let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, 0) };
    if n < 0 {
        return None;
    }
    // SAFETY: walks the control messages recvmsg filled in.
    let stamp = unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        let mut stamp = None;
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_TIMESTAMPNS
            {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast());
                stamp = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
        stamp
    };
    Some((n as usize, stamp.expect("SO_TIMESTAMPNS gives every datagram a timestamp")))
}

/// Counts datagrams arriving on `sock` until none has come for the socket's timeout (or 30 s
/// pass); returns the count and the first and last kernel receive times.
fn count_arrivals(sock: UdpSocket) -> thread::JoinHandle<(u64, u64, u64)> {
    thread::spawn(move || {
        let mut buf = [0u8; 2048];
        let (mut n, mut first, mut last) = (0, 0, 0);
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let Some((_, at)) = recv_stamped(&sock, &mut buf) else { break };
            if n == 0 {
                first = at;
            }
            last = at;
            n += 1;
        }
        (n, first, last)
    })
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

#[test]
fn idle_rtt_is_twice_the_one_way_delay() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    {
        let mut lab = Lab::new("rtt");
        let link = DirectionConfig { delay: Duration::from_millis(10), ..Default::default() };
        lab.start_linkem(link.clone(), link);
        let client = udp_socket(lab.a(), format!("{ADDR_A}:0"));
        let server = udp_socket(lab.b(), format!("{ADDR_B}:{PORT_B}"));

        // The echo server returns the probe with the time it held it (from its kernel receive
        // stamp to just before its reply), so its own wake-up delay is taken out of the RTT.
        let done = Arc::new(AtomicBool::new(false));
        let echo = {
            let done = Arc::clone(&done);
            thread::spawn(move || {
                let mut buf = [0u8; 64];
                while !done.load(Ordering::Relaxed) {
                    let Some((n, received)) = recv_stamped(&server, &mut buf) else { continue };
                    let port = u16::from_le_bytes([buf[16], buf[17]]);
                    let to: std::net::SocketAddr = format!("{ADDR_A}:{port}").parse().unwrap();
                    let held_ns = realtime_ns() - received;
                    buf[8..16].copy_from_slice(&held_ns.to_le_bytes());
                    let _ = server.send_to(&buf[..n], to);
                }
            })
        };
        let client_port = client.local_addr().unwrap().port();
        let mut rtts_ms = Vec::new();
        let mut raw_ms = Vec::new();
        let mut buf = [0u8; 64];
        for seq in 0u64..60 {
            let mut probe = [0u8; 24];
            probe[..8].copy_from_slice(&seq.to_le_bytes());
            probe[16..18].copy_from_slice(&client_port.to_le_bytes());
            let sent = realtime_ns();
            client.send_to(&probe, format!("{ADDR_B}:{PORT_B}")).unwrap();
            let Some((n, received)) = recv_stamped(&client, &mut buf) else { continue };
            let woke = realtime_ns();
            assert!(n >= 16);
            assert_eq!(u64::from_le_bytes(buf[..8].try_into().unwrap()), seq);
            let held = u64::from_le_bytes(buf[8..16].try_into().unwrap());
            rtts_ms.push((received - sent - held) as f64 / 1e6);
            raw_ms.push((woke - sent) as f64 / 1e6);
            thread::sleep(Duration::from_millis(15));
        }
        done.store(true, Ordering::Relaxed);
        echo.join().unwrap();
        let stats = lab.stop_linkem();
        rtts_ms.sort_by(f64::total_cmp);
        raw_ms.sort_by(f64::total_cmp);
        eprintln!(
            "RTT over 2 x 10 ms, {} probes: min {:.3} p10 {:.3} median {:.3} p90 {:.3} max {:.3} ms \
             (user space to user space: median {:.3} max {:.3} ms); send lateness ab {:?} ba {:?}",
            rtts_ms.len(),
            rtts_ms[0],
            quantile(&rtts_ms, 0.1),
            quantile(&rtts_ms, 0.5),
            quantile(&rtts_ms, 0.9),
            rtts_ms[rtts_ms.len() - 1],
            quantile(&raw_ms, 0.5),
            raw_ms[raw_ms.len() - 1],
            stats.ab.lateness,
            stats.ba.lateness,
        );
        assert!(rtts_ms.len() >= 55, "only {} of 60 probes came back", rtts_ms.len());
        let median = quantile(&rtts_ms, 0.5);
        assert!((median - 20.0).abs() < 0.5, "median RTT {median:.3} ms, want 20 +- 0.5 ms");
        // Nothing can come back faster than the emulated delay.
        assert!(rtts_ms[0] >= 20.0, "an RTT of {:.3} ms beat the 2 x 10 ms delay", rtts_ms[0]);
    }
    assert_cleaned_up("rtt");
}

#[test]
fn a_greedy_sender_gets_the_link_rate_in_frames() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    const RATE_BITS_PER_S: f64 = 50e6;
    {
        let mut lab = Lab::new("rate");
        let link = DirectionConfig {
            rate: Rate::BitsPerS(RATE_BITS_PER_S as u64),
            delay: Duration::from_millis(5),
            buffer_pkts: 500,
            ..Default::default()
        };
        lab.start_linkem(link.clone(), link);
        let sender = udp_socket(lab.a(), format!("{ADDR_A}:0"));
        let receiver = udp_socket(lab.b(), format!("{ADDR_B}:{PORT_B}"));
        let counter = count_arrivals(receiver);
        // Twice the link rate for 2 s, in full frames, paced in 1 ms rounds.
        let frames_per_s = 2.0 * RATE_BITS_PER_S / (FULL_FRAME_BYTES * 8.0);
        let payload = [0x5au8; FULL_PAYLOAD];
        let start = Instant::now();
        let mut sent = 0u64;
        while start.elapsed() < Duration::from_secs(2) {
            let due = (start.elapsed().as_secs_f64() * frames_per_s) as u64;
            while sent < due {
                sender.send_to(&payload, format!("{ADDR_B}:{PORT_B}")).unwrap();
                sent += 1;
            }
            thread::sleep(Duration::from_micros(500));
        }
        let (received, first, last) = counter.join().unwrap();
        let stats = lab.stop_linkem();
        // The link is busy from the first frame to the last (the queue never empties while
        // the sender runs at twice the rate, and drains at the rate after): n frames leave in
        // n - 1 serialisation times after the first.
        let rate = (received - 1) as f64 * FULL_FRAME_BYTES * 8.0 / ((last - first) as f64 / 1e9);
        eprintln!(
            "offered {sent} frames ({:.1} Mbit/s), received {received} at {:.2} Mbit/s of frames \
             ({:.2} Mbit/s of UDP payload); linkem ab {:?}",
            sent as f64 * FULL_FRAME_BYTES * 8.0 / 2e6,
            rate / 1e6,
            rate / 1e6 * FULL_PAYLOAD as f64 / FULL_FRAME_BYTES,
            stats.ab
        );
        assert!((rate / RATE_BITS_PER_S - 1.0).abs() < 0.05, "{:.2} Mbit/s", rate / 1e6);
        assert_eq!(stats.ab.sent_frames, received, "every frame linkem sent arrived");
        assert_eq!(stats.ab.frames, sent);
        assert!(stats.ab.drops_buffer > 0);
        assert_eq!(stats.ab.drops_oversize, 0);
    }
    assert_cleaned_up("rate");
}

#[test]
fn a_burst_overflows_the_buffer_by_what_cannot_leave() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    const RATE_BITS_PER_S: f64 = 5e6;
    const BUFFER_PKTS: u64 = 100;
    const BURST: u64 = 300;
    {
        let mut lab = Lab::new("buf");
        let link = DirectionConfig {
            rate: Rate::BitsPerS(RATE_BITS_PER_S as u64),
            buffer_pkts: BUFFER_PKTS as usize,
            ..Default::default()
        };
        lab.start_linkem(link.clone(), link);
        let sender = udp_socket(lab.a(), format!("{ADDR_A}:0"));
        let receiver = udp_socket(lab.b(), format!("{ADDR_B}:{PORT_B}"));
        let counter = count_arrivals(receiver);
        let payload = [0xa5u8; FULL_PAYLOAD];
        let start = realtime_ns();
        for _ in 0..BURST {
            sender.send_to(&payload, format!("{ADDR_B}:{PORT_B}")).unwrap();
        }
        let burst_ns = realtime_ns() - start;
        let (received, _, _) = counter.join().unwrap();
        let stats = lab.stop_linkem();
        // The first frame goes into service, BUFFER_PKTS wait behind it, and each frame whose
        // serialisation ends during the burst frees one place. The veth stamps each frame in
        // the sender's send call, so all arrivals fall within `burst_ns`, and at most
        // floor(burst / serialisation time) serialisations end in it. So the drops lie in
        // [BURST - 1 - BUFFER_PKTS - floor(burst / tx), BURST - 1 - BUFFER_PKTS] = [199 - c, 199].
        let tx_ns = FULL_FRAME_BYTES * 8.0 / RATE_BITS_PER_S * 1e9; // 2.4224 ms
        let can_leave = (burst_ns as f64 / tx_ns).floor() as u64;
        let most = BURST - 1 - BUFFER_PKTS;
        let least = most - can_leave.min(most);
        eprintln!(
            "burst of {BURST} in {:.3} ms: {} buffer drops (bound [{least}, {most}]), {received} \
             delivered",
            burst_ns as f64 / 1e6,
            stats.ab.drops_buffer
        );
        assert!(
            (least..=most).contains(&stats.ab.drops_buffer),
            "{} drops, want [{least}, {most}]",
            stats.ab.drops_buffer
        );
        assert_eq!(received, BURST - stats.ab.drops_buffer, "every frame not dropped arrives");
        assert_eq!(stats.ab.max_queue_pkts, BUFFER_PKTS);
    }
    assert_cleaned_up("buf");
}

#[test]
fn random_loss_stays_within_binomial_bounds() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    const FRAMES: u64 = 4000;
    const P: f64 = 0.1;
    {
        let mut lab = Lab::new("loss");
        let lossy = DirectionConfig {
            loss: LossConfig::Bernoulli(BernoulliConfig { p: P }),
            ..Default::default()
        };
        lab.start_linkem(lossy, DirectionConfig::default());
        let sender = udp_socket(lab.a(), format!("{ADDR_A}:0"));
        let receiver = udp_socket(lab.b(), format!("{ADDR_B}:{PORT_B}"));
        let counter = count_arrivals(receiver);
        for i in 0..FRAMES {
            sender.send_to(&i.to_le_bytes(), format!("{ADDR_B}:{PORT_B}")).unwrap();
            if i % 100 == 99 {
                thread::sleep(Duration::from_millis(1));
            }
        }
        let (received, _, _) = counter.join().unwrap();
        let stats = lab.stop_linkem();
        let lost = FRAMES - received;
        // Binomial(4000, 0.1): mean 400, standard deviation sqrt(4000 * 0.1 * 0.9) = 18.97.
        // Four deviations either side: [324, 476], a band a correct model leaves with
        // probability 6e-5, while p = 0.08 or 0.12 (mean 320 or 480) falls outside.
        let sd = (FRAMES as f64 * P * (1.0 - P)).sqrt();
        let mean = FRAMES as f64 * P;
        eprintln!("lost {lost} of {FRAMES} (expected {mean} +- {sd:.1}); linkem ab {:?}", stats.ab);
        assert!((lost as f64 - mean).abs() <= 4.0 * sd, "lost {lost} of {FRAMES}");
        assert_eq!(stats.ab.drops_loss, lost, "every missing frame was a random loss");
        assert_eq!((stats.ab.drops_buffer, stats.ab.frames), (0, FRAMES));
    }
    assert_cleaned_up("loss");
}
