//! A constant-rate UDP flow, the lab's counterpart of the simulator's greedy UDP source
//! (`braid-sim/src/udp.rs`, `e2e.kind = "udp"`): the sender offers `bytes` of payload in
//! datagrams of one size at a set rate whatever gets through; the receiver counts what arrives.
//!
//! - Each datagram is an IP packet of `packet_bytes` (IPv4 and UDP headers, 28 bytes, included,
//!   as the simulator counts it) and carries a 32-byte [`DatagramHeader`]: magic, version, its
//!   sequence number, the flow's datagram count, the payload seed and the sender's
//!   `CLOCK_MONOTONIC` time at the flow's start. The rest is the deterministic [`Payload`] at
//!   offset `seq * body`, checked on arrival.
//! - The sender paces by a schedule (datagram `i` is due at `start + i * gap`) and catches up in
//!   bursts after oversleeping, so the offered rate holds on a loaded host.
//! - The flow is done as the simulator's is: when its last datagram has arrived or been lost.
//!   The receiver stops at the last datagram of the count, or once the sender has finished and
//!   nothing arrived for `quiet` (longer than any queue or reorder wait of the path). The
//!   completion time is start to the last arrival; goodput is the payload received over it
//!   (the simulator's `goodput_mbps` for UDP).
//! - A datagram that is not the flow's (wrong magic, version, count or seed, or a sequence
//!   number out of range) or whose payload differs is an error naming what was wrong; duplicates
//!   and reordering are counted.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use socket2::{Domain, Protocol, Socket, Type};

use super::{
    io_err, mono_now_ns, run_sides, secs_between, timed_out, Clock, Payload, ReceiverReport,
    TransferError, POLL_INTERVAL,
};
use crate::netns;

/// `"BRDU"`: braid datagram (UDP) transfer.
const MAGIC: u32 = 0x4252_4455;
const VERSION: u16 = 1;
/// Bytes of [`DatagramHeader`] at the start of every datagram's payload.
pub const DATAGRAM_HEADER_LEN: usize = 32;
/// IPv4 and UDP headers, counted in `packet_bytes` as the simulator counts them.
pub const IP_UDP_HEADER_BYTES: u32 = 28;
/// The smallest `packet_bytes`: headers, the datagram header and one payload byte.
pub const MIN_PACKET_BYTES: u32 = IP_UDP_HEADER_BYTES + DATAGRAM_HEADER_LEN as u32 + 1;
/// At most this many datagrams per flow: the receiver keeps one bit per datagram.
pub const MAX_DATAGRAMS: u64 = 1 << 26;
/// Longest the sender sleeps at once, so `stop` is noticed promptly.
const MAX_SLEEP: Duration = Duration::from_millis(20);

/// What starts every datagram of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatagramHeader {
    pub seq: u64,
    /// Datagrams in the flow.
    pub count: u64,
    pub seed: u64,
    /// Sender's `CLOCK_MONOTONIC` at the flow's start, ns.
    pub start_ns: u64,
}

impl DatagramHeader {
    pub fn emit(&self, b: &mut [u8; DATAGRAM_HEADER_LEN]) {
        b[0..4].copy_from_slice(&MAGIC.to_be_bytes());
        b[4..6].copy_from_slice(&VERSION.to_be_bytes());
        // Sequence number and count as 6 bytes each: at most MAX_DATAGRAMS.
        b[6..12].copy_from_slice(&self.seq.to_be_bytes()[2..]);
        b[12..18].copy_from_slice(&self.count.to_be_bytes()[2..]);
        b[18..24].copy_from_slice(&self.seed.to_be_bytes()[2..]);
        b[24..32].copy_from_slice(&self.start_ns.to_be_bytes());
    }

    /// Decodes the header of `datagram`, refusing anything shorter, foreign or out of range.
    pub fn parse(datagram: &[u8]) -> Result<DatagramHeader, TransferError> {
        let bad = |why: String| Err(TransferError::BadHeader(why));
        let Some(b) = datagram.get(..DATAGRAM_HEADER_LEN) else {
            return bad(format!("datagram of {} bytes, shorter than its header", datagram.len()));
        };
        let six = |at: usize| {
            let mut w = [0u8; 8];
            w[2..].copy_from_slice(&b[at..at + 6]);
            u64::from_be_bytes(w)
        };
        let magic = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        if magic != MAGIC {
            return bad(format!("datagram magic {magic:#010x}, expected {MAGIC:#010x}"));
        }
        let version = u16::from_be_bytes([b[4], b[5]]);
        if version != VERSION {
            return bad(format!("datagram version {version}, expected {VERSION}"));
        }
        let (seq, count) = (six(6), six(12));
        if count == 0 || count > MAX_DATAGRAMS || seq >= count {
            return bad(format!("datagram {seq} of {count}: allowed 1..={MAX_DATAGRAMS} in all"));
        }
        let mut start = [0u8; 8];
        start.copy_from_slice(&b[24..32]);
        Ok(DatagramHeader { seq, count, seed: six(18), start_ns: u64::from_be_bytes(start) })
    }
}

/// Sender settings.
#[derive(Clone, Debug)]
pub struct UdpSenderConfig {
    pub connect: SocketAddr,
    /// Payload to offer, bytes (each datagram carries `packet_bytes - 28` of it).
    pub bytes: u64,
    /// IP packet size of every datagram, headers included.
    pub packet_bytes: u32,
    /// Offered rate counting whole IP packets, bit/s.
    pub rate_bps: f64,
    /// Payload seed; at most 48 bits travel.
    pub seed: u64,
    pub timeout: Duration,
}

impl UdpSenderConfig {
    /// Datagrams the flow sends: the payload budget in whole datagrams, as the simulator.
    pub fn datagrams(&self) -> u64 {
        self.bytes.div_ceil(u64::from(self.packet_bytes.saturating_sub(IP_UDP_HEADER_BYTES)).max(1))
    }

    /// Checks the settings, naming the field and its range.
    pub fn validate(&self) -> Result<(), TransferError> {
        let bad = |field: &str, allowed: String| {
            Err(TransferError::BadConfig(format!("{field}: allowed {allowed}")))
        };
        if self.packet_bytes < MIN_PACKET_BYTES {
            return bad("e2e.udp_packet_bytes", format!("at least {MIN_PACKET_BYTES}"));
        }
        if !(self.rate_bps.is_finite() && self.rate_bps > 0.0) {
            return bad("e2e.udp_rate_mbps", "a positive rate".into());
        }
        let n = self.datagrams();
        if n == 0 || n > MAX_DATAGRAMS {
            return bad("e2e.bytes", format!("1..={MAX_DATAGRAMS} datagrams' payload"));
        }
        Ok(())
    }
}

/// Receiver settings.
#[derive(Clone, Debug)]
pub struct UdpReceiverConfig {
    pub listen: SocketAddr,
    pub bin: Duration,
    pub timeout: Duration,
    /// After the sender finished, this long without an arrival ends the flow.
    pub quiet: Duration,
}

/// What the sender did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UdpSenderReport {
    pub datagrams: u64,
    pub packet_bytes: u32,
    pub offered_mbps: f64,
    pub start_ns: u64,
    /// The last datagram left, s after the start.
    pub last_send_s: f64,
    /// Datagrams the local stack refused (`ENOBUFS` and the like): lost at the sender.
    pub send_errors: u64,
}

/// What the receiver saw beyond [`ReceiverReport`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UdpArrivals {
    pub datagrams: u64,
    pub duplicates: u64,
    /// Arrivals with a lower sequence number than one before them.
    pub reordered: u64,
}

/// Both sides of one UDP flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UdpTransferReport {
    pub sender: UdpSenderReport,
    pub receiver: ReceiverReport,
    pub arrivals: UdpArrivals,
}

impl UdpTransferReport {
    /// Datagrams sent that never arrived.
    pub fn lost(&self) -> u64 {
        self.sender.datagrams.saturating_sub(self.arrivals.datagrams)
    }
}

fn udp_socket(addr: SocketAddr) -> Result<Socket, TransferError> {
    Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))
        .map_err(io_err("create UDP socket"))
}

/// The payload seed as it travels (48 bits).
fn wire_seed(seed: u64) -> u64 {
    seed & 0xffff_ffff_ffff
}

/// Sends the flow from the calling thread's namespace.
pub fn send(cfg: &UdpSenderConfig, stop: &AtomicBool) -> Result<UdpSenderReport, TransferError> {
    cfg.validate()?;
    let sock = udp_socket(cfg.connect)?;
    sock.connect(&cfg.connect.into()).map_err(io_err("connect UDP"))?;
    sock.set_write_timeout(Some(POLL_INTERVAL)).map_err(io_err("SO_SNDTIMEO"))?;
    let sock = UdpSocket::from(sock);
    let count = cfg.datagrams();
    let len = (cfg.packet_bytes - IP_UDP_HEADER_BYTES) as usize;
    let body = (len - DATAGRAM_HEADER_LEN) as u64;
    let gap_ns = f64::from(cfg.packet_bytes) * 8.0 / cfg.rate_bps * 1e9;
    let seed = wire_seed(cfg.seed);
    let payload = Payload::new(seed);
    let mut buf = vec![0u8; len];
    let start_ns = mono_now_ns();
    let deadline = start_ns + cfg.timeout.as_nanos() as u64;
    let mut header = DatagramHeader { seq: 0, count, seed, start_ns };
    let mut send_errors = 0;
    let mut last_ns = start_ns;
    for seq in 0..count {
        let due = start_ns + (seq as f64 * gap_ns) as u64;
        loop {
            if stop.load(Ordering::Relaxed) {
                return Err(TransferError::Stopped);
            }
            let now = mono_now_ns();
            if now > deadline {
                let ms = cfg.timeout.as_millis() as u64;
                return Err(TransferError::Timeout { what: "UDP sender", ms });
            }
            if now >= due {
                break;
            }
            thread::sleep(Duration::from_nanos(due - now).min(MAX_SLEEP));
        }
        header.seq = seq;
        let (head, rest) = buf.split_at_mut(DATAGRAM_HEADER_LEN);
        header.emit(head.try_into().expect("the split is the header's length"));
        payload.fill(seq * body, rest);
        match sock.send(&buf) {
            Ok(_) => {}
            // The datagram is lost at the sender, as a full queue would lose it.
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) || timed_out(&e) => send_errors += 1,
            // ICMP port unreachable from an earlier datagram: the receiver is not there yet.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => send_errors += 1,
            Err(e) => return Err(io_err("send UDP")(e)),
        }
        last_ns = mono_now_ns();
    }
    Ok(UdpSenderReport {
        datagrams: count,
        packet_bytes: cfg.packet_bytes,
        offered_mbps: cfg.rate_bps / 1e6,
        start_ns,
        last_send_s: secs_between(start_ns, last_ns),
        send_errors,
    })
}

/// A bound receiver; [`UdpReceiver::run`] receives one flow.
pub struct UdpReceiver {
    sock: UdpSocket,
    cfg: UdpReceiverConfig,
}

impl UdpReceiver {
    /// Binds in the calling thread's namespace.
    pub fn bind(cfg: &UdpReceiverConfig) -> Result<UdpReceiver, TransferError> {
        let sock = udp_socket(cfg.listen)?;
        sock.bind(&cfg.listen.into()).map_err(io_err("bind UDP"))?;
        // Room for a burst while this thread is not scheduled.
        let _ = sock.set_recv_buffer_size(4 << 20);
        sock.set_read_timeout(Some(POLL_INTERVAL)).map_err(io_err("SO_RCVTIMEO"))?;
        Ok(UdpReceiver { sock: sock.into(), cfg: cfg.clone() })
    }

    /// The bound address (with the port the kernel chose for port 0).
    pub fn local_addr(&self) -> Result<SocketAddr, TransferError> {
        self.sock.local_addr().map_err(io_err("local address"))
    }

    /// Receives until the flow's last datagram, or until `sender_done` is set and nothing came
    /// for `quiet`.
    pub fn run(
        self,
        sender_done: &AtomicBool,
        stop: &AtomicBool,
    ) -> Result<(ReceiverReport, UdpArrivals), TransferError> {
        // The flow's own progress decides; the sender's end is what `quiet` waits after.
        let clock = Clock::new("UDP receiver", self.cfg.timeout, self.cfg.timeout);
        let bin_ns = self.cfg.bin.as_nanos().max(1) as u64;
        let mut buf = vec![0u8; 65536];
        let mut scratch = vec![0u8; 65536];
        let mut flow: Option<(DatagramHeader, Payload, Vec<u64>)> = None;
        let mut arrivals = UdpArrivals { datagrams: 0, duplicates: 0, reordered: 0 };
        let (mut bytes, mut bin_bytes, mut highest) = (0u64, Vec::<u64>::new(), None);
        let (mut first_ns, mut last_ns) = (None, 0u64);
        let mut quiet_since = None;
        loop {
            clock.check(stop)?;
            let n = match self.sock.recv(&mut buf) {
                Ok(n) => n,
                Err(e) if timed_out(&e) || e.kind() == io::ErrorKind::ConnectionRefused => {
                    if sender_done.load(Ordering::Relaxed) {
                        let since = *quiet_since.get_or_insert_with(mono_now_ns);
                        if mono_now_ns() - since >= self.cfg.quiet.as_nanos() as u64 {
                            break;
                        }
                    }
                    continue;
                }
                Err(e) => return Err(io_err("recv UDP")(e)),
            };
            quiet_since = None;
            let now = mono_now_ns();
            let d = &buf[..n];
            let h = DatagramHeader::parse(d)?;
            let (first, payload, seen) = flow.get_or_insert_with(|| {
                let words = h.count.div_ceil(64) as usize;
                (h, Payload::new(h.seed), vec![0u64; words])
            });
            if (h.count, h.seed, h.start_ns) != (first.count, first.seed, first.start_ns) {
                return Err(TransferError::BadHeader(format!(
                    "datagram {} of another flow ({} datagrams, seed {}, start {})",
                    h.seq, h.count, h.seed, h.start_ns
                )));
            }
            let body = (n - DATAGRAM_HEADER_LEN) as u64;
            let offset = h.seq * body;
            if let Some(bad) =
                payload.first_mismatch(offset, &d[DATAGRAM_HEADER_LEN..], &mut scratch)
            {
                return Err(TransferError::Corrupt { offset: bad });
            }
            let (word, bit) = ((h.seq / 64) as usize, 1u64 << (h.seq % 64));
            if seen[word] & bit != 0 {
                arrivals.duplicates += 1;
                continue;
            }
            seen[word] |= bit;
            arrivals.datagrams += 1;
            if highest.is_some_and(|top| h.seq < top) {
                arrivals.reordered += 1;
            }
            highest = highest.max(Some(h.seq));
            first_ns.get_or_insert(now);
            last_ns = now;
            bytes += n as u64;
            let bin = (now.saturating_sub(h.start_ns) / bin_ns) as usize;
            if bin_bytes.len() <= bin {
                bin_bytes.resize(bin + 1, 0);
            }
            bin_bytes[bin] += n as u64;
            if arrivals.datagrams == first.count {
                break;
            }
        }
        let Some((h, ..)) = flow else {
            return Err(TransferError::Short { expected: 1, got: 0 });
        };
        let dlct_s = secs_between(h.start_ns, last_ns);
        let report = ReceiverReport {
            bytes,
            seed: h.seed,
            connect_start_ns: h.start_ns,
            first_byte_s: secs_between(h.start_ns, first_ns.unwrap_or(last_ns)),
            last_byte_s: dlct_s,
            dlct_s,
            goodput_mbps: if dlct_s > 0.0 { bytes as f64 * 8.0 / dlct_s / 1e6 } else { 0.0 },
            bin_s: self.cfg.bin.as_secs_f64(),
            bin_bytes,
        };
        Ok((report, arrivals))
    }
}

/// Runs a whole flow in-process: the receiver in namespace `receiver_ns`, the sender in
/// `sender_ns`, each on its own thread. If one side fails the other is stopped; `cancel`
/// stops both.
pub fn run_pair(
    sender_ns: &str,
    receiver_ns: &str,
    send_cfg: &UdpSenderConfig,
    recv_cfg: &UdpReceiverConfig,
    cancel: &AtomicBool,
) -> Result<UdpTransferReport, TransferError> {
    send_cfg.validate()?;
    let receiver = netns::run_in(receiver_ns, || UdpReceiver::bind(recv_cfg))??;
    let sender_done = AtomicBool::new(false);
    let (sender, (receiver, arrivals)) = run_sides(
        sender_ns,
        cancel,
        |stop| {
            let sent = send(send_cfg, stop);
            sender_done.store(true, Ordering::Relaxed);
            sent
        },
        |stop| receiver.run(&sender_done, stop),
    )?;
    Ok(UdpTransferReport { sender, receiver, arrivals })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> DatagramHeader {
        DatagramHeader { seq: 41, count: 42, seed: 7, start_ns: 123_456_789 }
    }

    #[test]
    fn headers_round_trip_and_foreign_or_out_of_range_ones_are_refused() {
        let mut b = [0u8; DATAGRAM_HEADER_LEN];
        header().emit(&mut b);
        assert_eq!(DatagramHeader::parse(&b).unwrap(), header());
        assert!(DatagramHeader::parse(&b[..31]).is_err(), "short");
        let mut bad = b;
        bad[0] ^= 1;
        assert!(DatagramHeader::parse(&bad).unwrap_err().to_string().contains("magic"));
        let mut seq_too_big = header();
        seq_too_big.seq = 42;
        seq_too_big.emit(&mut b);
        assert!(DatagramHeader::parse(&b).unwrap_err().to_string().contains("datagram 42 of 42"));
        let mut none = header();
        (none.seq, none.count) = (0, 0);
        none.emit(&mut b);
        assert!(DatagramHeader::parse(&b).is_err());
    }

    fn sender(bytes: u64, packet_bytes: u32, rate_mbps: f64) -> UdpSenderConfig {
        UdpSenderConfig {
            connect: "127.0.0.1:9".parse().unwrap(),
            bytes,
            packet_bytes,
            rate_bps: rate_mbps * 1e6,
            seed: 3 | 1 << 60,
            timeout: Duration::from_secs(10),
        }
    }

    #[test]
    fn the_budget_is_counted_in_whole_datagrams_as_the_simulator_does() {
        // 1372 bytes of payload per 1400-byte packet: 10 000 bytes need 8 datagrams.
        assert_eq!(sender(10_000, 1400, 10.0).datagrams(), 8);
        assert_eq!(sender(1372, 1400, 10.0).datagrams(), 1);
    }

    #[test]
    fn bad_settings_name_their_field() {
        let e = sender(1000, 60, 10.0).validate().unwrap_err().to_string();
        assert!(e.contains("e2e.udp_packet_bytes") && e.contains("61"), "{e}");
        let e = sender(1000, 1400, 0.0).validate().unwrap_err().to_string();
        assert!(e.contains("e2e.udp_rate_mbps"), "{e}");
        let e = sender(0, 1400, 10.0).validate().unwrap_err().to_string();
        assert!(e.contains("e2e.bytes"), "{e}");
    }

    /// A receiver on a loopback port of the kernel's choice.
    fn loopback_receiver(timeout_s: u64, quiet_ms: u64) -> UdpReceiver {
        UdpReceiver::bind(&UdpReceiverConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            bin: Duration::from_millis(100),
            timeout: Duration::from_secs(timeout_s),
            quiet: Duration::from_millis(quiet_ms),
        })
        .unwrap()
    }

    /// Over loopback: every datagram arrives and checks, at the offered rate.
    #[test]
    fn a_loopback_flow_arrives_whole_at_the_offered_rate() {
        let receiver = loopback_receiver(10, 300);
        let mut cfg = sender(1_372_000, 1400, 40.0);
        cfg.connect = receiver.local_addr().unwrap();
        let (stop, done) = (AtomicBool::new(false), AtomicBool::new(false));
        let (sent, (report, arrivals)) = thread::scope(|s| {
            let rx = s.spawn(|| receiver.run(&done, &stop));
            let sent = send(&cfg, &stop).unwrap();
            done.store(true, Ordering::Relaxed);
            (sent, rx.join().unwrap().unwrap())
        });
        assert_eq!(sent.datagrams, 1000);
        assert_eq!(arrivals.datagrams + sent.send_errors, 1000, "{arrivals:?}");
        assert_eq!(report.bytes, arrivals.datagrams * 1372);
        // 1000 packets of 1400 bytes at 40 Mbit/s: 0.28 s of sending; loopback adds little.
        assert!((0.25..0.6).contains(&report.dlct_s), "{report:?}");
        let offered = 1000.0 * 1400.0 * 8.0 / sent.last_send_s / 1e6;
        assert!((35.0..45.0).contains(&offered), "the sender keeps to 40 Mbit/s: {offered:.1}");
    }

    /// Datagrams of another flow end the run with an error instead of counting.
    #[test]
    fn a_foreign_datagram_is_an_error() {
        let receiver = loopback_receiver(5, 200);
        let to = receiver.local_addr().unwrap();
        let (stop, done) = (AtomicBool::new(false), AtomicBool::new(false));
        let r = thread::scope(|s| {
            let rx = s.spawn(|| receiver.run(&done, &stop));
            let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            sock.send_to(&[0u8; 100], to).unwrap();
            rx.join().unwrap()
        });
        assert!(matches!(r, Err(TransferError::BadHeader(_))), "{r:?}");
    }
}
