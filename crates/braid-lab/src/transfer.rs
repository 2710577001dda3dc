//! Our own bulk TCP transfer (there is no iperf3 on the build machines): a sender that connects
//! and writes N bytes of a deterministic payload with a chosen kernel congestion control, and a
//! receiver that checks every byte and times the transfer.
//!
//! - Congestion control is set per socket with `TCP_CONGESTION` before connecting and read
//!   back; a mismatch is an error (the host's default is bbr, so a silently ignored setting
//!   would measure the wrong algorithm).
//! - The stream opens with a 32-byte [`Header`]: magic, version, byte count, payload seed and
//!   the sender's `CLOCK_MONOTONIC` time just before `connect`. Sender and receiver run on one
//!   host (namespaces share the clock), so the receiver measures the DLCT itself: from that
//!   time to the arrival of the last byte (docs/design.md section 5: first SYN to last byte
//!   delivered), and bins the goodput from the same origin.
//! - The receiver compares every byte with the regenerated [`payload`] and reports the first
//!   wrong offset.
//! - The sender samples `TCP_INFO` ([`TcpInfo`], braid-net's Linux layer) on a timer thread:
//!   cwnd, srtt, retransmits, delivery and pacing rate.
//! - After the last byte the sender shuts its side down and waits for the receiver's close, so
//!   both reports cover the whole transfer.
//!
//! Every blocking call has a time limit (socket timeouts of [`POLL_INTERVAL`]), and both sides
//! stop when the caller's `stop` flag is set, so Ctrl-C and a failing peer end a run promptly.

pub mod payload;
pub mod udp;

use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use braid_net::linux::{congestion_control, request_congestion_control};
use serde::{Deserialize, Serialize};
use socket2::{Domain, Protocol, Socket, Type};

use crate::netns::{self, NetError};
pub use braid_net::linux::{KernelCc, TcpInfo};
pub use payload::Payload;

/// Longest a blocking socket call waits before the loop checks the stop flag and deadlines.
pub const POLL_INTERVAL: Duration = Duration::from_millis(100);
/// `"BRDT"`: braid transfer.
const MAGIC: u32 = 0x4252_4454;
const VERSION: u16 = 1;
const HEADER_LEN: usize = 32;
/// Bytes per `write`: a few dozen segments, small enough to notice `stop` quickly.
const WRITE_CHUNK_BYTES: usize = 64 * 1024;
/// Bytes per `read`.
const READ_CHUNK_BYTES: usize = 256 * 1024;
/// Limit on `connect`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// An error of the transfer tool.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error("{what}: {message}")]
    Io { what: &'static str, message: String },

    #[error("congestion control {requested:?} is not available in this kernel: {message}")]
    CcUnavailable { requested: String, message: String },

    /// `TCP_CONGESTION` read back something else than was set.
    #[error("TCP_CONGESTION set to {requested:?} but reads back {effective:?}")]
    CcNotApplied { requested: String, effective: String },

    #[error("e2e.cc = {given}: the lab runs kernel TCP, which offers {allowed}")]
    CcNotInKernel { given: String, allowed: String },

    #[error("payload differs from the expected stream at byte {offset}")]
    Corrupt { offset: u64 },

    #[error("the connection ended after {got} of {expected} bytes")]
    Short { expected: u64, got: u64 },

    #[error("more than the announced {expected} bytes arrived")]
    TooLong { expected: u64 },

    #[error("stream header: {0}")]
    BadHeader(String),

    #[error("transfer settings: {0}")]
    BadConfig(String),

    #[error("{what}: nothing happened for {ms} ms")]
    Stalled { what: &'static str, ms: u64 },

    #[error("{what} did not finish within {ms} ms")]
    Timeout { what: &'static str, ms: u64 },

    #[error("stopped before the transfer finished")]
    Stopped,

    #[error(transparent)]
    Net(#[from] NetError),
}

fn io_err(what: &'static str) -> impl FnOnce(io::Error) -> TransferError {
    move |e| TransferError::Io { what, message: e.to_string() }
}

/// The kernel congestion control of a name (`reno`, `newreno`, `cubic`, `bbr`).
pub fn parse_kernel_cc(name: &str) -> Result<KernelCc, TransferError> {
    KernelCc::from_name(name).ok_or_else(|| TransferError::CcNotInKernel {
        given: name.to_string(),
        allowed: KernelCc::NAMES.join(", "),
    })
}

/// The first bytes of the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub bytes: u64,
    pub seed: u64,
    /// Sender's `CLOCK_MONOTONIC` just before `connect`, ns.
    pub connect_start_ns: u64,
}

impl Header {
    pub fn emit(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(&MAGIC.to_be_bytes());
        b[4..6].copy_from_slice(&VERSION.to_be_bytes());
        b[8..16].copy_from_slice(&self.bytes.to_be_bytes());
        b[16..24].copy_from_slice(&self.seed.to_be_bytes());
        b[24..32].copy_from_slice(&self.connect_start_ns.to_be_bytes());
        b
    }

    pub fn parse(b: &[u8; HEADER_LEN]) -> Result<Header, TransferError> {
        let word =
            |r: std::ops::Range<usize>| u64::from_be_bytes(b[r].try_into().unwrap_or([0; 8]));
        let magic = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        if magic != MAGIC {
            return Err(TransferError::BadHeader(format!(
                "magic {magic:#010x}, expected {MAGIC:#010x}"
            )));
        }
        let version = u16::from_be_bytes([b[4], b[5]]);
        if version != VERSION {
            return Err(TransferError::BadHeader(format!("version {version}, expected {VERSION}")));
        }
        Ok(Header { bytes: word(8..16), seed: word(16..24), connect_start_ns: word(24..32) })
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds: the same clock in every namespace of the host.
pub fn mono_now_ns() -> u64 {
    let ts = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .expect("CLOCK_MONOTONIC is always available on Linux");
    ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64
}

fn secs_between(from_ns: u64, to_ns: u64) -> f64 {
    to_ns.saturating_sub(from_ns) as f64 / 1e9
}

/// Sender settings.
#[derive(Clone, Debug)]
pub struct SenderConfig {
    pub connect: SocketAddr,
    pub bytes: u64,
    pub cc: KernelCc,
    pub seed: u64,
    /// `TCP_INFO` sampling period.
    pub sample_interval: Duration,
    /// Limit on the whole transfer.
    pub timeout: Duration,
    /// Limit on a time without progress.
    pub idle_timeout: Duration,
}

/// Receiver settings.
#[derive(Clone, Debug)]
pub struct ReceiverConfig {
    pub listen: SocketAddr,
    /// Goodput bin width.
    pub bin: Duration,
    pub timeout: Duration,
    pub idle_timeout: Duration,
}

/// One `TCP_INFO` sample at the sender, `t_s` after `connect` started.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TcpSample {
    pub t_s: f64,
    pub info: TcpInfo,
}

/// What the sender saw.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SenderReport {
    pub cc_requested: KernelCc,
    /// `TCP_CONGESTION` as read back after setting it.
    pub cc_effective: String,
    pub bytes_sent: u64,
    pub connect_start_ns: u64,
    /// Connection established (SYN-ACK received), s after `connect` started.
    pub connected_s: f64,
    /// Last byte handed to the kernel, s.
    pub last_write_s: f64,
    /// Periodic samples, then one final sample after the receiver closed.
    pub samples: Vec<TcpSample>,
}

impl SenderReport {
    /// The last sample (taken after the receiver closed): totals of the connection.
    pub fn final_info(&self) -> Option<&TcpInfo> {
        self.samples.last().map(|s| &s.info)
    }

    /// Mean of the sampled srtt, ms (samples before the first RTT measurement excluded).
    pub fn srtt_ms_mean(&self) -> Option<f64> {
        let v: Vec<f64> = self
            .samples
            .iter()
            .filter(|s| s.info.srtt_us > 0)
            .map(|s| s.info.srtt_us as f64 / 1e3)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }
}

/// What the receiver measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReceiverReport {
    pub bytes: u64,
    pub seed: u64,
    pub connect_start_ns: u64,
    /// First and last payload byte, s after `connect` started.
    pub first_byte_s: f64,
    pub last_byte_s: f64,
    /// Download completion time: `connect` start to the last byte, s.
    pub dlct_s: f64,
    /// Payload bytes over the DLCT, Mbit/s.
    pub goodput_mbps: f64,
    pub bin_s: f64,
    /// Payload bytes received per bin since `connect` started.
    pub bin_bytes: Vec<u64>,
}

impl ReceiverReport {
    /// Goodput per bin, Mbit/s.
    pub fn goodput_series_mbps(&self) -> Vec<f64> {
        self.bin_bytes.iter().map(|&b| b as f64 * 8.0 / self.bin_s / 1e6).collect()
    }
}

/// Both sides of one transfer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransferReport {
    pub sender: SenderReport,
    pub receiver: ReceiverReport,
}

fn set_cc(sock: &Socket, cc: KernelCc) -> Result<String, TransferError> {
    request_congestion_control(sock, cc).map_err(|e| TransferError::CcUnavailable {
        requested: cc.as_str().to_string(),
        message: e.to_string(),
    })?;
    let effective = congestion_control(sock).map_err(io_err("read TCP_CONGESTION"))?;
    if effective != cc.as_str() {
        return Err(TransferError::CcNotApplied { requested: cc.as_str().to_string(), effective });
    }
    Ok(effective)
}

/// Is this error a socket timeout (`SO_RCVTIMEO`/`SO_SNDTIMEO` expiry)?
fn timed_out(e: &io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted)
}

/// Deadlines of one side.
struct Clock {
    start_ns: u64,
    last_progress_ns: u64,
    timeout: Duration,
    idle: Duration,
    what: &'static str,
}

impl Clock {
    fn new(what: &'static str, timeout: Duration, idle: Duration) -> Self {
        let now = mono_now_ns();
        Clock { start_ns: now, last_progress_ns: now, timeout, idle, what }
    }

    fn progress(&mut self) {
        self.last_progress_ns = mono_now_ns();
    }

    /// Errors out if `stop` is set or a limit has passed.
    fn check(&self, stop: &AtomicBool) -> Result<(), TransferError> {
        if stop.load(Ordering::Relaxed) {
            return Err(TransferError::Stopped);
        }
        let now = mono_now_ns();
        if now - self.start_ns > self.timeout.as_nanos() as u64 {
            return Err(TransferError::Timeout {
                what: self.what,
                ms: self.timeout.as_millis() as u64,
            });
        }
        if now - self.last_progress_ns > self.idle.as_nanos() as u64 {
            return Err(TransferError::Stalled {
                what: self.what,
                ms: self.idle.as_millis() as u64,
            });
        }
        Ok(())
    }
}

/// Runs the sender in the calling thread's namespace until the receiver has closed.
pub fn send(cfg: &SenderConfig, stop: &AtomicBool) -> Result<SenderReport, TransferError> {
    let sock = Socket::new(Domain::for_address(cfg.connect), Type::STREAM, Some(Protocol::TCP))
        .map_err(io_err("create socket"))?;
    let cc_effective = set_cc(&sock, cfg.cc)?;
    let connect_start_ns = mono_now_ns();
    sock.connect_timeout(&cfg.connect.into(), CONNECT_TIMEOUT).map_err(io_err("connect"))?;
    let connected_s = secs_between(connect_start_ns, mono_now_ns());
    sock.set_write_timeout(Some(POLL_INTERVAL)).map_err(io_err("SO_SNDTIMEO"))?;
    sock.set_read_timeout(Some(POLL_INTERVAL)).map_err(io_err("SO_RCVTIMEO"))?;

    let sampling_done = AtomicBool::new(false);
    let fd = sock.as_raw_fd();
    let (written, mut samples) = thread::scope(|s| {
        let sampler =
            s.spawn(|| sample_tcp_info(fd, connect_start_ns, cfg.sample_interval, &sampling_done));
        let written = write_stream(&sock, cfg, connect_start_ns, stop);
        sampling_done.store(true, Ordering::Relaxed);
        (written, sampler.join().unwrap_or_default())
    });
    let last_write_s = written?;
    await_close(&sock, cfg, stop)?;
    if let Ok(info) = TcpInfo::read(fd) {
        samples.push(TcpSample { t_s: secs_between(connect_start_ns, mono_now_ns()), info });
    }
    Ok(SenderReport {
        cc_requested: cfg.cc,
        cc_effective,
        bytes_sent: cfg.bytes,
        connect_start_ns,
        connected_s,
        last_write_s,
        samples,
    })
}

fn sample_tcp_info(fd: i32, origin_ns: u64, every: Duration, done: &AtomicBool) -> Vec<TcpSample> {
    let mut samples = Vec::new();
    let step_ns = every.as_nanos().max(1) as u64;
    let mut next_ns = origin_ns + step_ns;
    while !done.load(Ordering::Relaxed) {
        let now = mono_now_ns();
        if now >= next_ns {
            if let Ok(info) = TcpInfo::read(fd) {
                samples.push(TcpSample { t_s: secs_between(origin_ns, now), info });
            }
            next_ns += step_ns;
        } else {
            // Short sleeps: the sampler must notice `done` soon after the last write.
            thread::sleep(Duration::from_nanos(next_ns - now).min(Duration::from_millis(10)));
        }
    }
    samples
}

/// Writes the header and the payload; returns when the last byte went to the kernel, in
/// seconds since `connect` started.
fn write_stream(
    sock: &Socket,
    cfg: &SenderConfig,
    connect_start_ns: u64,
    stop: &AtomicBool,
) -> Result<f64, TransferError> {
    let header = Header { bytes: cfg.bytes, seed: cfg.seed, connect_start_ns }.emit();
    let payload = Payload::new(cfg.seed);
    let mut clock = Clock::new("sender", cfg.timeout, cfg.idle_timeout);
    let mut buf = vec![0u8; WRITE_CHUNK_BYTES];
    let mut header_sent = 0;
    let mut offset = 0u64;
    while header_sent < HEADER_LEN || offset < cfg.bytes {
        clock.check(stop)?;
        let chunk: &[u8] = if header_sent < HEADER_LEN {
            &header[header_sent..]
        } else {
            let n = (cfg.bytes - offset).min(WRITE_CHUNK_BYTES as u64) as usize;
            payload.fill(offset, &mut buf[..n]);
            &buf[..n]
        };
        match (&*sock).write(chunk) {
            Ok(0) => return Err(TransferError::Short { expected: cfg.bytes, got: offset }),
            Ok(n) => {
                clock.progress();
                if header_sent < HEADER_LEN {
                    header_sent += n;
                } else {
                    offset += n as u64;
                }
            }
            Err(e) if timed_out(&e) => {}
            Err(e) => return Err(io_err("write")(e)),
        }
    }
    let done = secs_between(connect_start_ns, mono_now_ns());
    sock.shutdown(Shutdown::Write).map_err(io_err("shutdown"))?;
    Ok(done)
}

/// Waits for the receiver to close its side (read returns 0).
fn await_close(sock: &Socket, cfg: &SenderConfig, stop: &AtomicBool) -> Result<(), TransferError> {
    let clock =
        Clock::new("sender waiting for the receiver to close", cfg.timeout, cfg.idle_timeout);
    let mut b = [0u8; 64];
    loop {
        clock.check(stop)?;
        match (&*sock).read(&mut b) {
            Ok(0) => return Ok(()),
            Ok(_) => return Err(TransferError::BadHeader("the receiver sent data".into())),
            Err(e) if timed_out(&e) => {}
            Err(e) => return Err(io_err("read")(e)),
        }
    }
}

/// A bound receiver; [`Receiver::run`] accepts one connection.
pub struct Receiver {
    listener: Socket,
    cfg: ReceiverConfig,
}

impl Receiver {
    /// Binds and listens in the calling thread's namespace. The socket stays in that namespace
    /// whichever thread later runs [`Receiver::run`].
    pub fn bind(cfg: &ReceiverConfig) -> Result<Receiver, TransferError> {
        let listener =
            Socket::new(Domain::for_address(cfg.listen), Type::STREAM, Some(Protocol::TCP))
                .map_err(io_err("create socket"))?;
        listener.set_reuse_address(true).map_err(io_err("SO_REUSEADDR"))?;
        listener.bind(&cfg.listen.into()).map_err(io_err("bind"))?;
        listener.listen(1).map_err(io_err("listen"))?;
        // accept() honours SO_RCVTIMEO on Linux.
        listener.set_read_timeout(Some(POLL_INTERVAL)).map_err(io_err("SO_RCVTIMEO"))?;
        Ok(Receiver { listener, cfg: cfg.clone() })
    }

    /// The bound address (with the port the kernel chose for port 0).
    pub fn local_addr(&self) -> Result<SocketAddr, TransferError> {
        self.listener.local_addr().map_err(io_err("local address"))?.as_socket().ok_or_else(|| {
            TransferError::Io { what: "local address", message: "not an IP socket".into() }
        })
    }

    /// Accepts one connection, receives and checks the whole stream, closes.
    pub fn run(self, stop: &AtomicBool) -> Result<ReceiverReport, TransferError> {
        let clock =
            Clock::new("receiver waiting for a connection", self.cfg.timeout, self.cfg.timeout);
        let conn = loop {
            clock.check(stop)?;
            match self.listener.accept() {
                Ok((conn, _)) => break conn,
                Err(e) if timed_out(&e) => {}
                Err(e) => return Err(io_err("accept")(e)),
            }
        };
        conn.set_read_timeout(Some(POLL_INTERVAL)).map_err(io_err("SO_RCVTIMEO"))?;
        receive_stream(&conn, &self.cfg, stop)
    }
}

fn read_some(
    conn: &Socket,
    buf: &mut [u8],
    clock: &mut Clock,
    stop: &AtomicBool,
) -> Result<usize, TransferError> {
    loop {
        clock.check(stop)?;
        match (&*conn).read(buf) {
            Ok(n) => {
                clock.progress();
                return Ok(n);
            }
            Err(e) if timed_out(&e) => {}
            Err(e) => return Err(io_err("read")(e)),
        }
    }
}

fn receive_stream(
    conn: &Socket,
    cfg: &ReceiverConfig,
    stop: &AtomicBool,
) -> Result<ReceiverReport, TransferError> {
    let mut clock = Clock::new("receiver", cfg.timeout, cfg.idle_timeout);
    let mut head = [0u8; HEADER_LEN];
    let mut got = 0;
    while got < HEADER_LEN {
        match read_some(conn, &mut head[got..], &mut clock, stop)? {
            0 => {
                return Err(TransferError::BadHeader(format!(
                    "connection closed after {got} header bytes"
                )))
            }
            n => got += n,
        }
    }
    let header = Header::parse(&head)?;
    let payload = Payload::new(header.seed);
    let bin_ns = cfg.bin.as_nanos().max(1) as u64;
    let mut bin_bytes: Vec<u64> = Vec::new();
    let mut buf = vec![0u8; READ_CHUNK_BYTES];
    let mut scratch = vec![0u8; READ_CHUNK_BYTES];
    let (mut offset, mut first_ns, mut last_ns) = (0u64, None, header.connect_start_ns);
    loop {
        let n = read_some(conn, &mut buf, &mut clock, stop)?;
        if n == 0 {
            break;
        }
        let now = mono_now_ns();
        first_ns.get_or_insert(now);
        last_ns = now;
        if offset + n as u64 > header.bytes {
            return Err(TransferError::TooLong { expected: header.bytes });
        }
        if let Some(bad) = payload.first_mismatch(offset, &buf[..n], &mut scratch) {
            return Err(TransferError::Corrupt { offset: bad });
        }
        let bin = (now.saturating_sub(header.connect_start_ns) / bin_ns) as usize;
        if bin_bytes.len() <= bin {
            bin_bytes.resize(bin + 1, 0);
        }
        bin_bytes[bin] += n as u64;
        offset += n as u64;
    }
    if offset < header.bytes {
        return Err(TransferError::Short { expected: header.bytes, got: offset });
    }
    let dlct_s = secs_between(header.connect_start_ns, last_ns);
    Ok(ReceiverReport {
        bytes: offset,
        seed: header.seed,
        connect_start_ns: header.connect_start_ns,
        first_byte_s: secs_between(header.connect_start_ns, first_ns.unwrap_or(last_ns)),
        last_byte_s: dlct_s,
        dlct_s,
        goodput_mbps: if dlct_s > 0.0 { offset as f64 * 8.0 / dlct_s / 1e6 } else { 0.0 },
        bin_s: cfg.bin.as_secs_f64(),
        bin_bytes,
    })
}

/// A side that fails sets `stop`, so its peer does not wait out its own time limits.
fn stop_on_error<T>(stop: &AtomicBool, r: Result<T, TransferError>) -> Result<T, TransferError> {
    if r.is_err() {
        stop.store(true, Ordering::Relaxed);
    }
    r
}

/// Runs a whole transfer in-process: the receiver listens in namespace `receiver_ns`, the
/// sender connects from `sender_ns` (each on its own thread; sockets belong to the namespace of
/// the thread that made them). If one side fails, the other is stopped; `cancel` stops both.
pub fn run_pair(
    sender_ns: &str,
    receiver_ns: &str,
    send_cfg: &SenderConfig,
    recv_cfg: &ReceiverConfig,
    cancel: &AtomicBool,
) -> Result<TransferReport, TransferError> {
    let receiver = netns::run_in(receiver_ns, || Receiver::bind(recv_cfg))??;
    let (sender, receiver) =
        run_sides(sender_ns, cancel, |stop| send(send_cfg, stop), |stop| receiver.run(stop))?;
    Ok(TransferReport { sender, receiver })
}

/// Runs `send` in namespace `sender_ns` and `receive` (its socket already bound where it
/// belongs) on threads of their own, each with the shared stop flag: a side that fails sets
/// it, and so does `cancel`. The error reported is the side's that failed on its own, not the
/// one it stopped.
pub(crate) fn run_sides<S: Send, R: Send>(
    sender_ns: &str,
    cancel: &AtomicBool,
    send: impl FnOnce(&AtomicBool) -> Result<S, TransferError> + Send,
    receive: impl FnOnce(&AtomicBool) -> Result<R, TransferError> + Send,
) -> Result<(S, R), TransferError> {
    let stop = AtomicBool::new(false);
    thread::scope(|s| {
        let rx = s.spawn(|| stop_on_error(&stop, receive(&stop)));
        let tx = s.spawn(|| {
            let sent =
                netns::enter(sender_ns).map_err(TransferError::from).and_then(|()| send(&stop));
            stop_on_error(&stop, sent)
        });
        while !(rx.is_finished() && tx.is_finished()) {
            if cancel.load(Ordering::Relaxed) {
                stop.store(true, Ordering::Relaxed);
            }
            thread::sleep(Duration::from_millis(20));
        }
        let receiver = rx.join().unwrap_or(Err(TransferError::Stopped));
        let sender = tx.join().unwrap_or(Err(TransferError::Stopped));
        match (sender, receiver) {
            (Ok(sender), Ok(receiver)) => Ok((sender, receiver)),
            (Err(TransferError::Stopped), Err(e)) | (Err(e), _) | (_, Err(e)) => Err(e),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_rejects_foreign_streams() {
        let h = Header { bytes: 20_000_000, seed: 9, connect_start_ns: 123_456_789 };
        assert_eq!(Header::parse(&h.emit()).unwrap(), h);
        let mut bad = h.emit();
        bad[0] = b'X';
        assert!(matches!(Header::parse(&bad), Err(TransferError::BadHeader(_))));
        let mut v2 = h.emit();
        v2[5] = 2;
        assert!(matches!(Header::parse(&v2), Err(TransferError::BadHeader(_))));
    }

    #[test]
    fn kernel_cc_names_parse_and_others_list_the_kernels() {
        assert_eq!(parse_kernel_cc("newreno").unwrap(), KernelCc::Reno);
        assert_eq!(parse_kernel_cc("bbr").unwrap(), KernelCc::Bbr);
        let err = parse_kernel_cc("vegas").unwrap_err().to_string();
        assert_eq!(err, "e2e.cc = vegas: the lab runs kernel TCP, which offers reno, cubic, bbr");
    }

    fn loopback_pair(cc: KernelCc, bytes: u64) -> TransferReport {
        let recv_cfg = ReceiverConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            bin: Duration::from_millis(100),
            timeout: Duration::from_secs(20),
            idle_timeout: Duration::from_secs(5),
        };
        let receiver = Receiver::bind(&recv_cfg).unwrap();
        let send_cfg = SenderConfig {
            connect: receiver.local_addr().unwrap(),
            bytes,
            cc,
            seed: 42,
            sample_interval: Duration::from_millis(10),
            timeout: Duration::from_secs(20),
            idle_timeout: Duration::from_secs(5),
        };
        let stop = AtomicBool::new(false);
        thread::scope(|s| {
            let rx = s.spawn(|| receiver.run(&stop));
            let sender = send(&send_cfg, &stop).unwrap();
            TransferReport { sender, receiver: rx.join().unwrap().unwrap() }
        })
    }

    #[test]
    fn loopback_transfer_delivers_every_byte_with_the_asked_cc() {
        for cc in [KernelCc::Reno, KernelCc::Cubic, KernelCc::Bbr] {
            let r = loopback_pair(cc, 3_000_001);
            assert_eq!(r.sender.cc_effective, cc.as_str());
            assert_eq!(r.receiver.bytes, 3_000_001);
            assert_eq!(r.receiver.bin_bytes.iter().sum::<u64>(), 3_000_001);
            assert!(r.receiver.dlct_s > 0.0 && r.receiver.dlct_s >= r.receiver.first_byte_s);
            // The final sample is taken after the receiver closed: everything was acked.
            let last = r.sender.final_info().unwrap();
            assert!(last.bytes_acked.unwrap() >= 3_000_001, "{last:?}");
        }
    }

    #[test]
    fn a_stopped_receiver_returns_promptly() {
        let recv_cfg = ReceiverConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            bin: Duration::from_millis(100),
            timeout: Duration::from_secs(20),
            idle_timeout: Duration::from_secs(20),
        };
        let receiver = Receiver::bind(&recv_cfg).unwrap();
        let stop = AtomicBool::new(true);
        let t0 = std::time::Instant::now();
        assert!(matches!(receiver.run(&stop), Err(TransferError::Stopped)));
        assert!(t0.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn a_corrupted_stream_is_caught_at_its_offset() {
        // A sender of a different seed: the header is valid, the payload is not ours.
        let recv_cfg = ReceiverConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            bin: Duration::from_millis(100),
            timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(5),
        };
        let receiver = Receiver::bind(&recv_cfg).unwrap();
        let addr = receiver.local_addr().unwrap();
        let stop = AtomicBool::new(false);
        thread::scope(|s| {
            let rx = s.spawn(|| receiver.run(&stop));
            let mut c = std::net::TcpStream::connect(addr).unwrap();
            c.write_all(&Header { bytes: 1000, seed: 1, connect_start_ns: mono_now_ns() }.emit())
                .unwrap();
            let mut body = vec![0u8; 1000];
            Payload::new(1).fill(0, &mut body);
            body[517] ^= 0xff;
            c.write_all(&body).unwrap();
            drop(c);
            assert!(matches!(rx.join().unwrap(), Err(TransferError::Corrupt { offset: 517 })));
        });
    }
}
