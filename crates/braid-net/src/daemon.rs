//! The tunnel daemon's event loop: one thread, `ppoll` over the TUN device, the path sockets and
//! a signalfd, with braid-core's sender and receiver doing the protocol work. The paths are UDP
//! sockets or kernel TCP connections (`transport.rs`); the loop is the same for both.
//!
//! Why a poll loop and not an async runtime: the hot path is a handful of descriptors whose
//! every wake-up does the same thing (read batches, run the core, write batches), and the
//! core's timers are a single deadline (`poll_timeout`). A loop on `ppoll` with a nanosecond
//! timeout wakes exactly for them, keeps every packet on one core without a task hop, and makes
//! the order of work explicit. The control socket and the metrics endpoint, the only other
//! I/O, run on threads of their own.
//!
//! Each wake-up:
//! 1. reads the TUN device and every readable path socket in batches (bounded per wake-up so
//!    one busy descriptor cannot starve the others);
//! 2. opens each datagram (authenticated decryption), and hands data to the receiver, feedback
//!    to the sender, probes to liveness;
//! 3. writes what the receiver releases to the TUN device (GRO-coalesced), then sends feedback,
//!    handshake and probe messages and the sender's transmissions, sealed, in GSO trains.
//!
//! A datagram on the wire: `envelope header | braid frame (data, feedback or probe) | tag`; on a
//! TCP path the same envelope behind a 2-byte length.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant as WallInstant, SystemTime, UNIX_EPOCH};

use braid_core::tunnel::{TunnelConfig, TunnelReceiver};
use braid_core::wire::{
    frame_type, DataHeader, Feedback, FrameType, Probe, ProbeKind, DATA_HEADER_LEN, PROBE_LEN,
};
use braid_core::Instant;
use tracing::{info, warn};

use crate::config::{DaemonConfig, Role, Transport as TransportKind};
use crate::control::{self, ControlSocket};
use crate::crypto::{self, Opened, Session, SessionConfig};
use crate::liveness::{Change, Liveness};
use crate::metrics::{self, PathSnapshot, Shared, Snapshot};
use crate::path_validation::PathValidation;
use crate::pool::{Pkt, Pool};
use crate::sender::Sender;
use crate::signal::TerminationSignals;
use crate::socket::READ_BUDGET;
use crate::transport::{Transport, TransportError};
use crate::tun::Tun;
/// How often the metrics snapshot is refreshed.
const PUBLISH_EVERY: Duration = Duration::from_millis(100);
/// Longest probe round trip taken as an RTT sample; a probe answered later than the longest
/// `liveness.dead_after_ms` is stale.
const MAX_PROBE_RTT: Duration = Duration::from_secs(60);
/// Largest frame the daemon builds besides data: a feedback frame or a probe.
const CONTROL_FRAME_MAX: usize = braid_core::wire::feedback::FEEDBACK_MAX_LEN;

/// Why the daemon stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error(transparent)]
    Tun(#[from] crate::tun::TunError),
    #[error(transparent)]
    Path(#[from] TransportError),
    #[error(transparent)]
    Metrics(#[from] metrics::MetricsError),
    #[error(transparent)]
    Control(#[from] control::ControlError),
    #[error(transparent)]
    Crypto(#[from] crypto::CryptoError),
    #[error("{0}")]
    Config(String),
    #[error("{what}: {source}")]
    Io { what: &'static str, source: io::Error },
}

fn io_err(what: &'static str) -> impl FnOnce(io::Error) -> DaemonError {
    move |source| DaemonError::Io { what, source }
}

#[derive(Clone, Copy, Debug, Default)]
struct PathCounters {
    rx_pkts: u64,
    rx_bytes: u64,
    socket_drops: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    tun_rx: u64,
    tun_tx: u64,
    rejected: u64,
}

/// Everything but the descriptors: the protocol state the loop drives.
struct State {
    role: Role,
    session: Session,
    tx: Sender,
    rx: TunnelReceiver<Pkt>,
    pool: Pool,
    live: Liveness,
    remotes: Vec<Option<SocketAddr>>,
    /// The paths' names, for logs: every line names a path the same way.
    names: Vec<String>,
    paths: Vec<PathCounters>,
    counters: Counters,
    /// Handshake responses to send after the current receive batch.
    replies: Vec<(usize, SocketAddr, Vec<u8>)>,
    /// Probe responses to queue on their paths after the current receive batch.
    probe_answers: Vec<(usize, Probe)>,
    /// Where authenticated transport frames came from in the current receive batch: the
    /// transport confirms those connections (TCP) before anything is sent.
    authenticated: Vec<(usize, SocketAddr)>,
    /// (Server, UDP) candidate remote addresses and their challenge budgets.
    validation: Option<PathValidation>,
    /// Challenges to send after the current receive batch: (path, address, token).
    challenges: Vec<(usize, SocketAddr, u64)>,
    reply_buf: Vec<u8>,
    /// The core's configuration, to start the sender and receiver afresh when the peer restarts.
    core: TunnelConfig,
}

/// The descriptors and their buffers.
struct Io {
    tun: Tun,
    paths: Transport,
    signals: TerminationSignals,
    /// The TUN device, the signalfd, then the paths' entries of this iteration.
    pollfds: Vec<libc::pollfd>,
}

/// A running tunnel endpoint.
pub struct Daemon {
    cfg: DaemonConfig,
    start: WallInstant,
    io: Io,
    st: State,
    shared: Shared,
    next_publish: Instant,
    /// Removes the control socket's file when the daemon ends.
    _control: ControlSocket,
}

impl Daemon {
    /// Sets everything up: blocks SIGINT/SIGTERM into a signalfd (before any thread starts, so
    /// every thread inherits the mask), opens the path sockets, creates the TUN device, starts
    /// the metrics endpoint. Any failure leaves nothing behind: what was created is closed as
    /// the half-built daemon drops.
    pub fn new(cfg: DaemonConfig) -> Result<Daemon, DaemonError> {
        let session = new_session(&cfg)?;
        let signals = TerminationSignals::block()
            .map_err(|e| DaemonError::Io { what: e.what, source: e.source })?;

        // First, so that a second daemon for the same interface stops before touching anything.
        let shared: Shared = Arc::new(Mutex::new(Snapshot::default()));
        let control = control::serve(&cfg.control_socket, Arc::clone(&shared))?;

        let now = Instant::ZERO;
        let paths = Transport::open(&cfg, now)?;
        let tun = Tun::create(&cfg.name, cfg.mtu, &cfg.addresses)?;

        let core = cfg.core_config();

        if let Some(addr) = cfg.metrics_listen {
            metrics::serve(addr, Arc::clone(&shared))?;
        }
        let pollfds = vec![pollfd(tun.raw_fd()), pollfd(signals.as_raw_fd())];

        let n = cfg.paths.len();
        let remotes: Vec<Option<SocketAddr>> = cfg.paths.iter().map(|p| p.remote).collect();
        let mut live = Liveness::new(cfg.liveness, n, now);
        let mut tx = paths.sender(&core);
        for (i, r) in remotes.iter().enumerate() {
            // A server path is usable once the client has spoken on it.
            if r.is_none() {
                live.mark_down(i);
                tx.set_path_up(now, i, false);
            }
        }
        let st = State {
            role: cfg.role,
            session,
            rx: TunnelReceiver::new(&core),
            tx,
            pool: Pool::new(usize::from(cfg.mtu), 4096),
            live,
            remotes,
            names: cfg.paths.iter().map(|p| p.name.clone()).collect(),
            paths: vec![PathCounters::default(); n],
            counters: Counters::default(),
            replies: Vec::new(),
            probe_answers: Vec::new(),
            authenticated: Vec::new(),
            validation: (cfg.role == Role::Server && cfg.transport == TransportKind::Udp)
                .then(|| PathValidation::new(n, challenge_bytes(&cfg))),
            challenges: Vec::new(),
            reply_buf: vec![0u8; crypto::REPLY_MAX],
            core,
        };
        let io = Io { tun, paths, signals, pollfds };
        info!(
            interface = %cfg.name, role = %cfg.role, transport = %cfg.transport, paths = n,
            "braid tunnel: up"
        );
        Ok(Daemon {
            cfg,
            start: WallInstant::now(),
            io,
            st,
            shared,
            next_publish: now,
            _control: control,
        })
    }

    fn now(&self) -> Instant {
        Instant::from_nanos(self.start.elapsed().as_nanos() as u64)
    }

    /// Runs until SIGINT or SIGTERM.
    pub fn run(&mut self) -> Result<(), DaemonError> {
        loop {
            let now = self.now();
            self.st.tx.handle_timeout(now);
            self.st.session.handle_timeout(now);
            let established = self.st.session.is_established();
            self.io.paths.maintain(now, &mut self.st.tx, established);
            self.output(now);
            let st = &mut self.st;
            self.io.paths.flush(|i| st.paths[i].socket_drops += 1);
            if now >= self.next_publish {
                self.publish(now);
                self.next_publish = now + PUBLISH_EVERY;
            }
            let deadline = self.deadline(now);
            let timeout = deadline.map(|d| d.saturating_since(self.now()));
            self.io.pollfds.truncate(2);
            self.io.paths.poll_fds(&mut self.io.pollfds);
            self.wait(timeout)?;
            if self.io.pollfds[1].revents != 0 {
                if let Some(signo) = self.io.signals.take() {
                    info!(signal = signo, "braid tunnel: shutting down");
                    return Ok(());
                }
            }
            let now = self.now();
            if self.io.pollfds[0].revents != 0 {
                self.read_tun(now)?;
            }
            self.read_paths(now);
        }
    }

    fn deadline(&self, now: Instant) -> Option<Instant> {
        [
            self.st.tx.poll_timeout(),
            self.st.rx.poll_timeout(),
            self.st.live.poll_timeout(),
            self.st.session.poll_timeout(),
            self.io.paths.poll_timeout(now, self.st.tx.queue_len() > 0),
            Some(self.next_publish),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn wait(&mut self, timeout: Option<Duration>) -> Result<(), DaemonError> {
        for p in &mut self.io.pollfds {
            p.revents = 0;
        }
        let ts = timeout.map(|d| libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        });
        let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `pollfds` is a live, correctly sized array of pollfd; `ts_ptr` is null or
        // points at a timespec that outlives the call; no signal mask change.
        let r = unsafe {
            libc::ppoll(
                self.io.pollfds.as_mut_ptr(),
                self.io.pollfds.len() as libc::nfds_t,
                ts_ptr,
                std::ptr::null(),
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(io_err("ppoll")(e));
            }
        }
        Ok(())
    }

    fn read_tun(&mut self, now: Instant) -> Result<(), DaemonError> {
        let st = &mut self.st;
        for _ in 0..READ_BUDGET {
            let n = self
                .io
                .tun
                .read_batch(|packet| {
                    st.counters.tun_rx += 1;
                    // Too long a packet cannot come from a device of this MTU; refused if so.
                    if let Some(pkt) = st.pool.alloc_from(packet) {
                        let _ = st.tx.handle_packet(now, pkt, packet.len() as u32);
                    }
                })
                .map_err(io_err("reading the TUN device"))?;
            if n == 0 {
                break;
            }
        }
        Ok(())
    }

    fn read_paths(&mut self, now: Instant) {
        let (io, st) = (&mut self.io, &mut self.st);
        io.paths.read(now, &io.pollfds[2..], |i, src, d| st.on_datagram(now, i, src, d));
        for (i, src) in self.st.authenticated.drain(..) {
            self.io.paths.confirm(i, src);
        }
        let mut challenges = std::mem::take(&mut self.st.challenges);
        for (i, dest, token) in challenges.drain(..) {
            let probe = Probe { kind: ProbeKind::Request, path_id: i as u8, timestamp_ns: token };
            self.st.send_control_to(&mut self.io, now, i, dest, |b| probe.emit(b).unwrap_or(0));
        }
        self.st.challenges = challenges;
        for (path, dest, bytes) in self.st.replies.drain(..) {
            if let Err(e) = self.io.paths.send_to(path, dest, &bytes) {
                warn!(path, error = %e, "sending a reply failed");
            }
        }
        // Answered through the path's train like any control frame; the loop flushes it after
        // its next output pass.
        let mut answers = std::mem::take(&mut self.st.probe_answers);
        for (path, probe) in answers.drain(..) {
            self.st.send_control(&mut self.io, now, path, |b| probe.emit(b).unwrap_or(0));
        }
        self.st.probe_answers = answers;
    }

    /// Everything the state has to say at `now`: handshakes, probes, liveness decisions,
    /// released packets, feedback, transmissions. The loop flushes the paths after it.
    fn output(&mut self, now: Instant) {
        let (io, st) = (&mut self.io, &mut self.st);
        let mut hs = [0u8; 256];
        while let Ok(Some(n)) = st.session.poll_handshake(now, &mut hs) {
            st.send_everywhere(io, &hs[..n]);
        }
        if st.session.keepalive_due(now) {
            // Sealed once per path: the header names the path it is sent on.
            for i in 0..st.remotes.len() {
                st.send_control(io, now, i, |_| 0);
            }
        }
        while let Some(change) = st.live.poll_change(now) {
            if let Change::Down(i) = change {
                warn!(path = %self.cfg.paths[i].name, "path down: nothing heard for dead_after");
                st.tx.set_path_up(now, i, false);
                io.paths.path_down(i);
            }
        }
        if !st.session.is_established() {
            return;
        }
        while let Some(i) = st.live.poll_probe(now) {
            let probe =
                Probe { kind: ProbeKind::Request, path_id: i as u8, timestamp_ns: now.as_nanos() };
            st.send_control(io, now, i, |b| probe.emit(b).unwrap_or(0));
        }
        while let Some(r) = st.rx.poll_deliver(now) {
            st.counters.tun_tx += 1;
            let _ = r.payload.with(|b| io.tun.queue_write(b));
        }
        let _ = io.tun.flush();
        while st.rx.poll_rejected().is_some() {}
        while let Some(fb) = st.rx.poll_feedback(now) {
            if io.paths.carries_feedback() {
                st.send_control(io, now, fb.path_id as usize, |b| fb.emit(b).unwrap_or(0));
            }
        }
        while let Some(t) = st.tx.poll_transmit(now) {
            let Some(dest) = st.remotes[t.path] else { continue };
            let len = t.payload.len();
            let session = &mut st.session;
            let r = io.paths.push(t.path, dest, crypto::OVERHEAD + DATA_HEADER_LEN + len, |buf| {
                let plain = &mut buf[crypto::HEADER_LEN..];
                let h = t.header.emit(plain).unwrap_or(0);
                let n = t.payload.copy_to(&mut plain[h..]).unwrap_or(0);
                session.seal(now, t.path as u8, buf, h + n).unwrap_or(0)
            });
            if r.is_err() {
                st.paths[t.path].socket_drops += 1;
            }
        }
    }

    fn publish(&mut self, now: Instant) {
        let st = &self.st;
        let paths = (0..self.cfg.paths.len())
            .map(|i| {
                let m = st.tx.path_metrics(i);
                let s = st.tx.path_stats(i);
                let tcp = self.io.paths.tcp_status(i);
                let ms = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1e3);
                PathSnapshot {
                    name: self.cfg.paths[i].name.clone(),
                    up: st.live.is_up(i),
                    remote: st.remotes[i].map(|r| r.to_string()),
                    cwnd_bytes: m.cc.cwnd_bytes,
                    in_flight_bytes: m.in_flight_bytes,
                    srtt_ms: ms(m.srtt),
                    min_rtt_ms: ms(m.min_rtt),
                    pacing_rate_bps: m.cc.pacing_rate_bytes_per_s.map(|r| r * 8),
                    cc_phase: tcp.as_ref().map_or(m.cc.phase.as_str(), |t| t.ca_state).to_string(),
                    kernel_cc: tcp.as_ref().and_then(|t| t.kernel_cc.clone()),
                    pacing_queue_pkts: m.pacing_queue_pkts,
                    tx_pkts: s.sent_pkts,
                    tx_bytes: s.sent_bytes,
                    rx_pkts: st.paths[i].rx_pkts,
                    rx_bytes: st.paths[i].rx_bytes,
                    lost_pkts: s.lost_pkts + tcp.as_ref().map_or(0, |t| t.retrans_segs),
                    rto_count: s.rto_count,
                    socket_drops: st.paths[i].socket_drops,
                    stream_errors: tcp.as_ref().map_or(0, |t| t.stream_errors),
                }
            })
            .collect();
        let rs = st.rx.stats();
        let snap = Snapshot {
            interface: self.cfg.name.clone(),
            role: self.cfg.role.to_string(),
            established: st.session.is_established(),
            uptime_s: now.as_secs_f64(),
            handshakes: st.session.counters().handshakes_completed,
            handshake_bad_mac1: st.session.counters().bad_mac1,
            cookie_replies: st.session.counters().cookie_replies,
            handshakes_rate_limited: st.session.counters().rate_limited,
            rejected_datagrams: st.counters.rejected,
            tun_rx_pkts: st.counters.tun_rx,
            tun_tx_pkts: st.counters.tun_tx,
            sched_queue_pkts: st.tx.queue_len(),
            sched_drops: st.tx.stats().sched_drops,
            reorder_pkts: st.rx.reorder_len(),
            reorder_wait_limit_ms: st.rx.wait_limit().as_secs_f64() * 1e3,
            reorder_duplicates: rs.duplicate_pkts,
            reorder_released_on_timeout: rs.reorder.released_on_timeout,
            paths,
        };
        if let Ok(mut s) = self.shared.lock() {
            *s = snap;
        }
    }
}

impl State {
    /// One datagram from path `i`'s socket.
    fn on_datagram(&mut self, now: Instant, i: usize, src: SocketAddr, datagram: &mut [u8]) {
        let len = datagram.len() as u64;
        let plain = match self.session.open(now, src, i as u8, datagram, &mut self.reply_buf) {
            Ok(Opened::Data(plain)) => plain,
            Ok(Opened::Reply(n)) => {
                self.replies.push((i, src, self.reply_buf[..n].to_vec()));
                return;
            }
            Ok(Opened::Established) => {
                info!("braid tunnel: session established");
                if self.session.take_peer_restart() {
                    self.restart_tunnel_state(now);
                }
                return;
            }
            Ok(Opened::Cookie) => {
                info!(path = %self.names[i], "the server is under load: cookie received, retrying");
                return;
            }
            Err(_) => {
                self.counters.rejected += 1;
                return;
            }
        };
        if self.session.take_peer_restart() {
            self.restart_tunnel_state(now);
        }
        self.paths[i].rx_pkts += 1;
        self.paths[i].rx_bytes += len;
        if self.authenticated.last() != Some(&(i, src)) {
            self.authenticated.push((i, src));
        }
        // A server's UDP path moves to a new address (NAT rebinding, or the client's first
        // datagram on it) only once that address answers a challenge (path_validation.rs);
        // until then what comes from it counts for nothing but the challenge budget. Over TCP
        // the connection is the path: a pending one was vouched for by `authenticated`.
        let validated =
            self.role == Role::Client || self.validation.is_none() || self.remotes[i] == Some(src);
        if validated {
            if self.role == Role::Server && self.remotes[i] != Some(src) {
                info!(path = %self.names[i], remote = %src, "path remote address learned");
                self.remotes[i] = Some(src);
            }
            self.path_heard(now, i);
        } else if let Some(v) = self.validation.as_mut() {
            if let Some(token) = v.on_unvalidated(now, i, src, len) {
                self.challenges.push((i, src, token));
            }
        }
        if plain.is_empty() {
            return; // a keepalive: it proved the path, nothing more
        }
        match frame_type(plain) {
            Ok(FrameType::Data) => {
                let Ok((h, payload)) = DataHeader::parse(plain) else {
                    self.counters.rejected += 1;
                    return;
                };
                if usize::from(h.path_id) != i {
                    self.counters.rejected += 1;
                    return;
                }
                if let Some(pkt) = self.pool.alloc_from(payload) {
                    let _ = self.rx.handle_data(now, &h, pkt);
                }
            }
            Ok(FrameType::Feedback) => match Feedback::parse(plain) {
                Ok(fb) if usize::from(fb.path_id) == i => self.tx.handle_feedback(now, &fb),
                _ => self.counters.rejected += 1,
            },
            Ok(FrameType::Probe) => match Probe::parse(plain) {
                Ok(p) if p.kind == ProbeKind::Request && usize::from(p.path_id) == i => {
                    self.probe_answers.push((i, p.response()));
                }
                // The echo of our own request: an RTT sample of a path that carries no data, so
                // the scheduler knows a quiet path's RTT before it uses it. An echo from the
                // future or older than the probe horizon is not a sample.
                Ok(p) if p.kind == ProbeKind::Response && usize::from(p.path_id) == i => {
                    if !validated {
                        let Some(v) = self.validation.as_mut() else { return };
                        if !v.on_response(i, src, p.timestamp_ns) {
                            return;
                        }
                        info!(path = %self.names[i], remote = %src, "path remote address validated");
                        self.remotes[i] = Some(src);
                        self.path_heard(now, i);
                    }
                    let rtt = now.as_nanos().checked_sub(p.timestamp_ns).map(Duration::from_nanos);
                    if let Some(rtt) = rtt.filter(|r| *r <= MAX_PROBE_RTT) {
                        self.tx.on_path_rtt_sample(i, rtt);
                    }
                }
                Ok(_) => {}
                Err(_) => self.counters.rejected += 1,
            },
            Err(_) => self.counters.rejected += 1,
        }
    }

    /// The peer restarted (a handshake carried a new instance of it): its senders and receivers
    /// start from nothing, so ours must too, or the receiver would take the peer's new path
    /// sequence numbers for duplicates of the old ones and the sender would wait for feedback
    /// on packets nobody holds. What was queued or held for reordering is dropped (inner TCP
    /// recovers it); liveness and the paths' remotes stay.
    fn restart_tunnel_state(&mut self, now: Instant) {
        warn!("the peer restarted: the tunnel's senders and receivers start afresh");
        self.tx = self.tx.fresh(&self.core);
        for i in 0..self.names.len() {
            if !self.live.is_up(i) {
                self.tx.set_path_up(now, i, false);
            }
        }
        self.rx = TunnelReceiver::new(&self.core);
    }

    /// Something authenticated came from path `i`'s remote: liveness, and the path back up.
    fn path_heard(&mut self, now: Instant, i: usize) {
        if let Some(Change::Up(_)) = self.live.on_receive(now, i) {
            info!(path = %self.names[i], "path up");
            self.tx.set_path_up(now, i, true);
        }
    }

    /// Sends `datagram` on every path whose remote is known (handshake initiations).
    fn send_everywhere(&self, io: &mut Io, datagram: &[u8]) {
        io.paths.send_everywhere(&self.remotes, datagram);
    }

    /// Seals a control frame written by `emit` and queues it on path `i`'s train.
    fn send_control(
        &mut self,
        io: &mut Io,
        now: Instant,
        i: usize,
        emit: impl FnOnce(&mut [u8]) -> usize,
    ) {
        let Some(dest) = self.remotes.get(i).copied().flatten() else { return };
        self.send_control_to(io, now, i, dest, emit);
    }

    /// Seals a control frame written by `emit` and queues it on path `i`'s train for `dest`.
    fn send_control_to(
        &mut self,
        io: &mut Io,
        now: Instant,
        i: usize,
        dest: SocketAddr,
        emit: impl FnOnce(&mut [u8]) -> usize,
    ) {
        let session = &mut self.session;
        let r = io.paths.push(i, dest, crypto::OVERHEAD + CONTROL_FRAME_MAX, |buf| {
            let end = buf.len() - crypto::TAG_LEN;
            let n = emit(&mut buf[crypto::HEADER_LEN..end]);
            session.seal(now, i as u8, buf, n).unwrap_or(0)
        });
        if r.is_err() {
            self.paths[i].socket_drops += 1;
        }
    }
}

/// What one challenge costs on the wire: outer IP and UDP headers (of the paths' IP version),
/// the envelope and tag, and the probe frame.
fn challenge_bytes(cfg: &DaemonConfig) -> u64 {
    let outer = if cfg.paths.first().is_some_and(|p| p.bind.is_ipv6()) { 48 } else { 28 };
    (outer + crypto::OVERHEAD + PROBE_LEN) as u64
}

/// The session for `cfg`'s keys, with key indices seeded from the OS random source so that a
/// restarted daemon does not reuse the last run's indices.
fn new_session(cfg: &DaemonConfig) -> Result<Session, DaemonError> {
    use ring::rand::SecureRandom;
    let keys = cfg.keys().map_err(|e| DaemonError::Config(e.to_string()))?;
    let mut seed = [0u8; 8];
    ring::rand::SystemRandom::new()
        .fill(&mut seed)
        .map_err(|_| DaemonError::Config("the OS random source failed".into()))?;
    let role = match cfg.role {
        Role::Client => crypto::Role::Initiator,
        Role::Server => crypto::Role::Responder,
    };
    let index_seed = u64::from_le_bytes(seed);
    let mut instance = [0u8; 8];
    ring::rand::SystemRandom::new()
        .fill(&mut instance)
        .map_err(|_| DaemonError::Config("the OS random source failed".into()))?;
    let config = SessionConfig {
        role,
        cipher: cfg.cipher,
        local: keys.local,
        peer: keys.peer,
        psk: keys.psk,
        index_seed,
        instance: u64::from_le_bytes(instance),
    };
    let unix = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    Ok(Session::new(config, Instant::ZERO, unix))
}

fn pollfd(fd: RawFd) -> libc::pollfd {
    libc::pollfd { fd, events: libc::POLLIN, revents: 0 }
}
