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
//! 3. writes what the receiver releases to the TUN device (one packet per write, tun.rs), then
//!    sends feedback, handshake and probe messages and the sender's transmissions, sealed, in GSO
//!    trains.
//!
//! A datagram on the wire: `envelope header | braid frame (data, feedback or probe) | tag`; on a
//! TCP path the same envelope behind a 2-byte length.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant as WallInstant, SystemTime, UNIX_EPOCH};

use braid_core::tunnel::TunnelConfig;
use braid_core::wire::{
    frame_type, DataHeader, Feedback, FrameType, Probe, ProbeKind, TimeSync, DATA_HEADER_LEN,
    FLAG_UNSTAMPED, PROBE_LEN,
};
use braid_core::Instant;
use tracing::{error, info, warn};

use crate::config::{DaemonConfig, Role};
use crate::control::{self, ControlSocket};
use crate::crypto::compact::{self, COMPACT_HEADER_LEN, MAX_ATTEMPT};
use crate::crypto::{self, CryptoError, Opened, PeerKeys, Responder, Session, SessionConfig};
use crate::history::{History, SharedHistory, HISTORY_INTERVAL};
use crate::inner;
use crate::liveness::Change;
use crate::metrics::{self, PathSnapshot, PeerSnapshot, Shared, Snapshot};
use crate::mss_clamp;
use crate::peer::{Peer, Sessions};
use crate::pool::Pool;
use crate::routing::Routes;
use crate::signal::TerminationSignals;
use crate::socket::READ_BUDGET;
use crate::transport::{Transport, TransportError};
use crate::tun::Tun;
/// How often the metrics snapshot is refreshed.
const PUBLISH_EVERY: Duration = Duration::from_millis(100);
/// Longest probe round trip taken as an RTT sample; a probe answered later than the longest
/// `liveness.dead_after_ms` is stale.
const MAX_PROBE_RTT: Duration = Duration::from_secs(60);
/// Least time between two logs of crossed paths (a configuration error that would otherwise
/// log every datagram).
const CROSSED_LOG_EVERY: Duration = Duration::from_secs(10);
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
    #[error(transparent)]
    Routing(#[from] crate::routing::RoutingError),
    #[error("{0}")]
    Config(String),
    #[error("{what}: {source}")]
    Io { what: &'static str, source: io::Error },
}

fn io_err(what: &'static str) -> impl FnOnce(io::Error) -> DaemonError {
    move |source| DaemonError::Io { what, source }
}

#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    tun_rx: u64,
    tun_tx: u64,
    rejected: u64,
    /// Inner packets read from the TUN device for a destination no peer may use.
    unrouted: u64,
    /// TCP SYNs read from the TUN device whose MSS was lowered (mss_clamp.rs).
    mss_clamped: u64,
}

/// Everything but the descriptors: the protocol state the loop drives.
struct State {
    role: Role,
    sessions: Sessions,
    peers: Vec<Peer>,
    pool: Pool,
    /// The paths' names, for logs: every line names a path the same way.
    names: Vec<String>,
    counters: Counters,
    /// Handshake responses and cookie replies to send after the current receive batch.
    replies: Vec<(usize, SocketAddr, Vec<u8>)>,
    /// Probe responses to queue after the current receive batch: (peer, path, probe).
    probe_answers: Vec<(usize, usize, Probe)>,
    /// Where authenticated transport frames came from in the current receive batch: the
    /// transport confirms those connections (TCP) before anything is sent.
    authenticated: Vec<(usize, SocketAddr)>,
    /// Challenges to send after the current receive batch: (peer, path, address, token).
    challenges: Vec<(usize, usize, SocketAddr, u64)>,
    reply_buf: Vec<u8>,
    /// When crossed paths were last logged ([`CROSSED_LOG_EVERY`]).
    crossed_logged: Option<Instant>,
    /// The core's configuration, to start a peer's sender and receiver afresh when it restarts.
    core: TunnelConfig,
    /// The largest TCP MSS the tunnel's MTU carries whole, IPv4 and IPv6 (mss_clamp.rs).
    mss_max: (u16, u16),
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
    /// The operator page's last minutes (history.rs), sampled every HISTORY_INTERVAL.
    history: SharedHistory,
    next_history: Instant,
    next_publish: Instant,
    /// Removes the control socket's file when the daemon ends.
    _control: ControlSocket,
    /// Removes the routing rules when the daemon ends (the routes go with the TUN device).
    _routes: Option<Routes>,
}

impl Daemon {
    /// Sets everything up: blocks SIGINT/SIGTERM into a signalfd (before any thread starts, so
    /// every thread inherits the mask), opens the path sockets, creates the TUN device, starts
    /// the metrics endpoint. Any failure leaves nothing behind: what was created is closed as
    /// the half-built daemon drops.
    pub fn new(cfg: DaemonConfig) -> Result<Daemon, DaemonError> {
        let sessions = new_sessions(&cfg)?;
        let signals = TerminationSignals::block()
            .map_err(|e| DaemonError::Io { what: e.what, source: e.source })?;

        // First, so that a second daemon for the same interface stops before touching anything.
        let shared: Shared = Arc::new(Mutex::new(Snapshot::default()));
        let history: SharedHistory = Arc::new(Mutex::new(History::new()));
        let control = control::serve(&cfg.control_socket, Arc::clone(&shared))?;

        let now = Instant::ZERO;
        let paths = Transport::open(&cfg, now)?;
        let tun = Tun::create(&cfg.name, cfg.mtu, &cfg.addresses)?;
        let routes = cfg.routing.as_ref().map(|r| Routes::install(&cfg.name, r)).transpose()?;

        let core = cfg.core_config();

        if let Some(addr) = cfg.metrics_listen {
            let history = Arc::clone(&history);
            let history_json = move || {
                let h = history.lock().map(|h| serde_json::to_string(&*h));
                h.ok().and_then(Result::ok).unwrap_or_default()
            };
            metrics::serve(addr, Arc::clone(&shared), history_json)?;
        }
        let pollfds = vec![pollfd(tun.raw_fd()), pollfd(signals.as_raw_fd())];

        let n = cfg.paths.len();
        let peers = cfg
            .peers
            .iter()
            .map(|p| Peer::new(&cfg, p, paths.sender(&core), &core, challenge_bytes(&cfg), now))
            .collect();
        let st = State {
            role: cfg.role,
            sessions,
            peers,
            pool: Pool::new(usize::from(cfg.mtu), 4096),
            names: cfg.paths.iter().map(|p| p.name.clone()).collect(),
            counters: Counters::default(),
            replies: Vec::new(),
            probe_answers: Vec::new(),
            authenticated: Vec::new(),
            challenges: Vec::new(),
            reply_buf: vec![0u8; crypto::REPLY_MAX],
            crossed_logged: None,
            core,
            mss_max: mss_clamp::max_mss(cfg.mtu),
        };
        let io = Io { tun, paths, signals, pollfds };
        info!(
            interface = %cfg.name, role = %cfg.role, transport = %cfg.transport, paths = n,
            peers = cfg.peers.len(), "braid tunnel: up"
        );
        Ok(Daemon {
            cfg,
            start: WallInstant::now(),
            io,
            st,
            shared,
            history,
            next_history: now,
            next_publish: now,
            _control: control,
            _routes: routes,
        })
    }

    fn now(&self) -> Instant {
        Instant::from_nanos(self.start.elapsed().as_nanos() as u64)
    }

    /// Runs until SIGINT or SIGTERM.
    pub fn run(&mut self) -> Result<(), DaemonError> {
        loop {
            let now = self.now();
            for (p, peer) in self.st.peers.iter_mut().enumerate() {
                peer.tx.handle_timeout(now);
                self.st.sessions.get_mut(p).handle_timeout(now);
            }
            // A TCP transport has one peer (the configuration refuses more).
            let established = self.st.sessions.get(0).is_established();
            self.io.paths.maintain(now, &mut self.st.peers[0].tx, established);
            self.output(now);
            let st = &mut self.st;
            // A train may carry several peers' datagrams: its drops count on the first peer.
            self.io.paths.flush(|i| st.peers[0].paths[i].socket_drops += 1);
            if now >= self.next_publish {
                // Liveness follows each path's RTT (liveness.rs), refreshed at this cadence.
                for peer in &mut self.st.peers {
                    for i in 0..self.cfg.paths.len() {
                        let srtt = peer.tx.path_metrics(i).srtt;
                        peer.live.set_srtt(i, srtt);
                    }
                }
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
        let st = &self.st;
        let queued = st.peers.iter().any(|p| p.tx.queue_len() > 0);
        let per_peer = st.peers.iter().enumerate().flat_map(|(i, p)| {
            [
                p.tx.poll_timeout(),
                p.rx.poll_timeout(),
                p.live.poll_timeout(),
                st.sessions.get(i).poll_timeout(),
            ]
        });
        per_peer
            .chain([self.io.paths.poll_timeout(now, queued), Some(self.next_publish)])
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
        let single = st.peers.len() == 1;
        for _ in 0..READ_BUDGET {
            let n = self
                .io
                .tun
                .read_batch(|packet| {
                    st.counters.tun_rx += 1;
                    // Cryptokey routing: the peer whose allowed addresses hold the destination.
                    let dest = inner::addresses(packet).map(|(_, d)| d);
                    let peer = match dest {
                        Some(d) => st.peers.iter().position(|p| p.allows(d)),
                        None if single => Some(0),
                        None => None,
                    };
                    let Some(p) = peer else {
                        st.counters.unrouted += 1;
                        return;
                    };
                    st.peers[p].tun_rx += 1;
                    // Too long a packet cannot come from a device of this MTU; refused if so.
                    // A SYN announcing more than the tunnel carries is clamped (mss_clamp.rs).
                    let mss_max = st.mss_max;
                    let clamped = &mut st.counters.mss_clamped;
                    let pkt = st.pool.alloc_edited(packet, |b| {
                        *clamped += u64::from(mss_clamp::clamp(b, mss_max).is_some());
                    });
                    if let Some(pkt) = pkt {
                        let _ = st.peers[p].tx.handle_packet(now, pkt, packet.len() as u32);
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
        for (p, i, dest, token) in challenges.drain(..) {
            let probe = Probe { kind: ProbeKind::Request, path_id: i as u8, timestamp_ns: token };
            self.st.send_control_to(&mut self.io, now, p, i, dest, |b| probe.emit(b).unwrap_or(0));
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
        for (p, path, probe) in answers.drain(..) {
            self.st.send_control(&mut self.io, now, p, path, |b| probe.emit(b).unwrap_or(0));
        }
        self.st.probe_answers = answers;
    }

    /// Everything the state has to say at `now`, peer by peer: handshakes, probes, liveness
    /// decisions, released packets, feedback, transmissions. The loop flushes the paths after it.
    fn output(&mut self, now: Instant) {
        for p in 0..self.st.peers.len() {
            self.output_peer(now, p);
        }
    }

    fn output_peer(&mut self, now: Instant, p: usize) {
        let (io, st) = (&mut self.io, &mut self.st);
        let mut hs = [0u8; crate::crypto::envelope::INITIATION_LEN];
        while let Ok(Some(n)) = st.sessions.get_mut(p).poll_handshake(now, &mut hs) {
            io.paths.send_everywhere(&st.peers[p].remotes, &hs[..n]);
        }
        if st.sessions.get_mut(p).keepalive_due(now) {
            // Sealed once per path: the header names the path it is sent on.
            for i in 0..st.names.len() {
                st.send_control(io, now, p, i, |_| 0);
            }
        }
        let peer = &mut st.peers[p];
        while let Some(change) = peer.live.poll_change(now) {
            if let Change::Down(i) = change {
                warn!(
                    peer = %peer.config.name, path = %self.cfg.paths[i].name,
                    "path down: nothing heard for dead_after"
                );
                peer.tx.set_path_up(now, i, false);
                peer.compact_ready[i] = false;
                io.paths.path_down(i);
            }
        }
        if !st.sessions.get(p).is_established() {
            return;
        }
        while let Some(i) = st.peers[p].live.poll_probe(now) {
            let probe =
                Probe { kind: ProbeKind::Request, path_id: i as u8, timestamp_ns: now.as_nanos() };
            st.send_control(io, now, p, i, |b| probe.emit(b).unwrap_or(0));
        }
        let peer = &mut st.peers[p];
        while let Some(r) = peer.rx.poll_deliver(now) {
            // Cryptokey routing: a peer sends only from its own inner addresses. Checked here,
            // not on arrival, so that a refused packet still fills its place in the tunnel's
            // sequence (a reliable receiver would otherwise wait for it forever).
            let allowed =
                r.payload.with(|b| inner::addresses(b).is_some_and(|(src, _)| peer.allows(src)));
            if !allowed {
                peer.spoofed += 1;
                continue;
            }
            st.counters.tun_tx += 1;
            peer.tun_tx += 1;
            let _ = r.payload.with(|b| io.tun.queue_write(b));
        }
        let _ = io.tun.flush();
        while peer.rx.poll_rejected().is_some() {}
        while let Some(fb) = st.peers[p].rx.poll_feedback(now) {
            if io.paths.carries_feedback() {
                st.send_control(io, now, p, fb.path_id as usize, |b| fb.emit(b).unwrap_or(0));
            }
        }
        let peer = &mut st.peers[p];
        while let Some(t) = peer.tx.poll_transmit(now) {
            let Some(dest) = peer.remotes[t.path] else { continue };
            let len = t.payload.len();
            let session = st.sessions.get_mut(p);
            let ready = st.role == Role::Server || peer.compact_ready[t.path];
            // `t.compact` is set only when the core was configured for compact messages.
            let mut compact_msg = ready && t.compact && t.attempt <= MAX_ATTEMPT;
            let mut r = Ok(());
            if compact_msg {
                // crypto/compact.rs: the header's fields are the core's numbers.
                let (path_seq, global_seq) = (t.header.path_seq, t.header.global_seq);
                let mut refused = None;
                r = io.paths.push(t.path, dest, crypto::COMPACT_OVERHEAD + len, |buf| {
                    let n = t.payload.copy_to(&mut buf[COMPACT_HEADER_LEN..]).unwrap_or(0);
                    let path = t.path as u8;
                    session
                        .seal_compact(now, path, path_seq, t.attempt, global_seq, buf, n)
                        .unwrap_or_else(|e| {
                            refused = Some(e);
                            0
                        })
                });
                // A compact seal the session refuses (its nonce slot already used) must not
                // lose the packet: it goes as a full message, whose nonce is always fresh.
                if let Some(e) = refused {
                    warn!(
                        peer = %peer.config.name, path = %self.cfg.paths[t.path].name, error = %e,
                        "compact seal refused; sent as a full message"
                    );
                    compact_msg = false;
                }
            }
            if !compact_msg {
                r = io.paths.push(t.path, dest, crypto::OVERHEAD + DATA_HEADER_LEN + len, |buf| {
                    let plain = &mut buf[crypto::HEADER_LEN..];
                    let h = t.header.emit(plain).unwrap_or(0);
                    let n = t.payload.copy_to(&mut plain[h..]).unwrap_or(0);
                    session.seal(now, t.path as u8, buf, h + n).unwrap_or(0)
                });
            }
            if r.is_err() {
                peer.paths[t.path].socket_drops += 1;
            }
            peer.paths[t.path].compact_tx += u64::from(compact_msg);
            if compact_msg && t.time_sync {
                // Right behind its packet on the same path's train, so the receiver finds that
                // packet the path's newest when the frame arrives.
                let ts = TimeSync {
                    path_id: t.path as u8,
                    path_seq: t.header.path_seq,
                    send_ts_ns: t.header.send_ts_ns,
                };
                let emit = |b: &mut [u8]| ts.emit(b).unwrap_or(0);
                if push_control(&mut io.paths, session, now, t.path, dest, emit).is_err() {
                    peer.paths[t.path].socket_drops += 1;
                }
            }
        }
        while peer.tx.poll_dropped().is_some() {}
    }

    fn publish(&mut self, now: Instant) {
        let st = &self.st;
        let several = st.peers.len() > 1;
        let mut paths = Vec::new();
        let mut peers = Vec::new();
        for (p, peer) in st.peers.iter().enumerate() {
            for i in 0..self.cfg.paths.len() {
                let m = peer.tx.path_metrics(i);
                let s = peer.tx.path_stats(i);
                let tcp = self.io.paths.tcp_status(i);
                let ms = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1e3);
                paths.push(PathSnapshot {
                    name: self.cfg.paths[i].name.clone(),
                    peer: several.then(|| peer.config.name.clone()),
                    up: peer.live.is_up(i),
                    remote: peer.remotes[i].map(|r| r.to_string()),
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
                    rx_pkts: peer.paths[i].rx_pkts,
                    rx_bytes: peer.paths[i].rx_bytes,
                    lost_pkts: s.lost_pkts + tcp.as_ref().map_or(0, |t| t.retrans_segs),
                    rto_count: s.rto_count,
                    socket_drops: peer.paths[i].socket_drops,
                    compact_tx_pkts: peer.paths[i].compact_tx,
                    stream_errors: tcp.as_ref().map_or(0, |t| t.stream_errors),
                    rx_owd: peer.rx.path_owd(i),
                });
            }
            let session = st.sessions.get(p);
            peers.push(PeerSnapshot {
                name: peer.config.name.clone(),
                established: session.is_established(),
                handshakes: session.counters().handshakes_completed,
                tun_rx_pkts: peer.tun_rx,
                tun_tx_pkts: peer.tun_tx,
                spoofed_pkts: peer.spoofed,
            });
        }
        let sum = |f: &dyn Fn(&Peer) -> u64| st.peers.iter().map(f).sum::<u64>();
        let first = &st.peers[0];
        let totals = st.sessions.totals();
        let snap = Snapshot {
            interface: self.cfg.name.clone(),
            role: self.cfg.role.to_string(),
            established: (0..st.peers.len()).any(|p| st.sessions.get(p).is_established()),
            uptime_s: now.as_secs_f64(),
            handshakes: totals.handshakes_completed,
            handshake_bad_mac1: totals.bad_mac1,
            cookie_replies: totals.cookie_replies,
            handshakes_rate_limited: totals.rate_limited,
            rejected_datagrams: st.counters.rejected,
            unrouted_pkts: st.counters.unrouted,
            mss_clamped_pkts: st.counters.mss_clamped,
            tun_rx_pkts: st.counters.tun_rx,
            tun_tx_pkts: st.counters.tun_tx,
            sched_queue_pkts: st.peers.iter().map(|p| p.tx.queue_len()).sum(),
            sched_drops: sum(&|p| p.tx.stats().sched_drops + p.tx.stats().aqm_drops),
            reorder_pkts: st.peers.iter().map(|p| p.rx.reorder_len()).sum(),
            reorder_wait_limit_ms: first.rx.wait_limit().as_secs_f64() * 1e3,
            reorder_duplicates: sum(&|p| p.rx.stats().duplicate_pkts),
            reorder_released_on_timeout: sum(&|p| p.rx.stats().reorder.released_on_timeout),
            paths,
            peers,
        };
        if now >= self.next_history {
            if let Ok(mut h) = self.history.lock() {
                h.record(&snap);
            }
            self.next_history = now + HISTORY_INTERVAL;
        }
        if let Ok(mut s) = self.shared.lock() {
            *s = snap;
        }
    }
}

impl State {
    /// One datagram from path `i`'s socket.
    fn on_datagram(&mut self, now: Instant, i: usize, src: SocketAddr, datagram: &mut [u8]) {
        if crypto::compact::is_compact(datagram) {
            self.on_compact(now, i, src, datagram);
            return;
        }
        let len = datagram.len() as u64;
        let (peer, opened) = self.sessions.open(now, src, i as u8, datagram, &mut self.reply_buf);
        let plain = match opened {
            Ok(Opened::Data(plain)) => plain,
            Ok(Opened::Reply(n)) => {
                self.replies.push((i, src, self.reply_buf[..n].to_vec()));
                return;
            }
            Ok(Opened::Established) => {
                info!("braid tunnel: session established");
                if self.sessions.get_mut(0).take_peer_restart() {
                    self.restart_peer(now, 0);
                }
                if self.sessions.get_mut(0).take_paths_changed() {
                    self.match_paths(now, 0);
                }
                return;
            }
            Ok(Opened::Cookie) => {
                info!(path = %self.names[i], "the server is under load: cookie received, retrying");
                return;
            }
            Err(CryptoError::WrongPath { named, arrived_on }) => {
                self.counters.rejected += 1;
                if let Some(p) = peer {
                    self.crossed_path(now, p, named, usize::from(arrived_on));
                }
                return;
            }
            Err(_) => {
                self.counters.rejected += 1;
                return;
            }
        };
        let Some(p) = peer else {
            self.counters.rejected += 1;
            return;
        };
        self.on_authenticated(now, p, i, len);
        let peer = &mut self.peers[p];
        if self.role == Role::Client {
            peer.server_sources[i] = Some(src);
        }
        if self.authenticated.last() != Some(&(i, src)) {
            self.authenticated.push((i, src));
        }
        // A server's UDP path moves to a new address (NAT rebinding, or the client's first
        // datagram on it) only once that address answers a challenge (path_validation.rs);
        // until then what comes from it counts for nothing but the challenge budget. Over TCP
        // the connection is the path: a pending one was vouched for by `authenticated`.
        let validated =
            self.role == Role::Client || peer.validation.is_none() || peer.remotes[i] == Some(src);
        if validated {
            if self.role == Role::Server && peer.remotes[i] != Some(src) {
                info!(
                    peer = %peer.config.name, path = %self.names[i], remote = %src,
                    "path remote address learned"
                );
                peer.set_remote(now, i, src);
            }
            self.path_heard(now, p, i);
        } else if let Some(v) = peer.validation.as_mut() {
            if let Some(token) = v.on_unvalidated(now, i, src, len) {
                self.challenges.push((p, i, src, token));
            }
        }
        if plain.is_empty() {
            return; // a keepalive: it proved the path, nothing more
        }
        let peer = &mut self.peers[p];
        // The session checked the path the transport header names (matched by name with the
        // peer's, path_table.rs), so the path is `i`. The frames' own path ids are the sender's
        // numbering, which may differ from ours: they are replaced by ours, not checked.
        let path_id = i as u8;
        let kind = frame_type(plain);
        // Data and feedback come only to an address the server validated.
        if matches!(kind, Ok(FrameType::Data | FrameType::Feedback)) {
            peer.compact_ready[i] = true;
        }
        match kind {
            Ok(FrameType::Data) => {
                let Ok((mut h, payload)) = DataHeader::parse(plain) else {
                    self.counters.rejected += 1;
                    return;
                };
                h.path_id = path_id;
                if let Some(pkt) = self.pool.alloc_from(payload) {
                    let _ = peer.rx.handle_data(now, &h, pkt);
                }
            }
            Ok(FrameType::Feedback) => match Feedback::parse(plain) {
                Ok(mut fb) => {
                    fb.path_id = path_id;
                    peer.tx.handle_feedback(now, &fb);
                }
                Err(_) => self.counters.rejected += 1,
            },
            Ok(FrameType::TimeSync) => match TimeSync::parse(plain) {
                Ok(mut ts) => {
                    ts.path_id = path_id;
                    peer.rx.handle_time_sync(now, &ts);
                }
                Err(_) => self.counters.rejected += 1,
            },
            Ok(FrameType::Probe) => match Probe::parse(plain) {
                Ok(mut pr) if pr.kind == ProbeKind::Request => {
                    pr.path_id = path_id;
                    self.probe_answers.push((p, i, pr.response()));
                }
                // The echo of our own request: an RTT sample of a path that carries no data, so
                // the scheduler knows a quiet path's RTT before it uses it. An echo from the
                // future or older than the probe horizon is not a sample.
                Ok(pr) if pr.kind == ProbeKind::Response => {
                    // The server answers only to the address it validated for this path.
                    peer.compact_ready[i] = validated;
                    if !validated {
                        let Some(v) = peer.validation.as_mut() else { return };
                        if !v.on_response(i, src, pr.timestamp_ns) {
                            return;
                        }
                        info!(
                            peer = %peer.config.name, path = %self.names[i], remote = %src,
                            "path remote address validated"
                        );
                        peer.set_remote(now, i, src);
                        self.path_heard(now, p, i);
                    }
                    let rtt = now.as_nanos().checked_sub(pr.timestamp_ns).map(Duration::from_nanos);
                    if let Some(rtt) = rtt.filter(|r| *r <= MAX_PROBE_RTT) {
                        self.peers[p].tx.on_path_rtt_sample(i, rtt);
                        self.peers[p].rx.on_path_rtt_sample(i, rtt);
                    }
                }
                Ok(_) => {}
                Err(_) => self.counters.rejected += 1,
            },
            Err(_) => self.counters.rejected += 1,
        }
    }

    /// A compact datagram (crypto/compact.rs) from path `i`'s socket: a data packet. It names
    /// no keys, so its peer is the one it came from: on a server the peer whose validated
    /// address on this path sent it, on a client the server if the datagram comes from where
    /// the server's authenticated full messages on this path came from (which need not be the
    /// configured remote: a server bound to a wildcard address answers from the address its
    /// route picks). Anything else is dropped before any decryption. Its sequence numbers are
    /// expanded around what that peer's receiver expects next.
    fn on_compact(&mut self, now: Instant, i: usize, src: SocketAddr, datagram: &mut [u8]) {
        let len = datagram.len() as u64;
        let client = self.role == Role::Client;
        let from = |peer: &Peer| {
            let known = if client { &peer.server_sources } else { &peer.remotes };
            known.get(i).copied().flatten() == Some(src)
        };
        let Some(p) = self.peers.iter().position(from) else {
            self.counters.rejected += 1;
            return;
        };
        let expected = self.peers[p].rx.expected_path_seq(i);
        let session = self.sessions.get_mut(p);
        let (header, plain) = match session.open_compact(now, i as u8, expected, datagram) {
            Ok(opened) => opened,
            Err(_) => {
                self.counters.rejected += 1;
                return;
            }
        };
        self.on_authenticated(now, p, i, len);
        let peer = &mut self.peers[p];
        peer.compact_ready[i] = true;
        self.path_heard(now, p, i);
        let peer = &mut self.peers[p];
        let h = DataHeader {
            flags: FLAG_UNSTAMPED,
            path_id: i as u8,
            payload_len: plain.len().min(usize::from(u16::MAX)) as u16,
            global_seq: compact::expand(peer.rx.expected_global_seq(), header.global_seq),
            path_seq: header.path_seq,
            send_ts_ns: 0,
        };
        if let Some(pkt) = self.pool.alloc_from(plain) {
            let _ = peer.rx.handle_data(now, &h, pkt);
        }
    }

    /// What a transport datagram of `len` bytes from peer `p` on path `i` changes once its tag
    /// verified: a restart or a new path map the keys it opened with revealed, and the path's
    /// receive counters.
    fn on_authenticated(&mut self, now: Instant, p: usize, i: usize, len: u64) {
        if self.sessions.get_mut(p).take_peer_restart() {
            self.restart_peer(now, p);
        }
        if self.sessions.get_mut(p).take_paths_changed() {
            self.match_paths(now, p);
        }
        let counters = &mut self.peers[p].paths[i];
        counters.rx_pkts += 1;
        counters.rx_bytes += len;
    }

    /// Peer `p` restarted (a handshake carried a new instance of it): its senders and
    /// receivers start from nothing, so ours for it must too, or the receiver would take the
    /// peer's new path sequence numbers for duplicates of the old ones and the sender would
    /// wait for feedback on packets nobody holds. What was queued or held for reordering is
    /// dropped (inner TCP recovers it); liveness and the paths' remotes stay.
    fn restart_peer(&mut self, now: Instant, p: usize) {
        warn!(
            peer = %self.peers[p].config.name,
            "the peer restarted: the tunnel's senders and receivers start afresh"
        );
        self.peers[p].restart(now, &self.core);
    }

    /// New keys with peer `p` matched our paths with its paths by name (path_table.rs): a path
    /// the peer has no namesake for is down and stays down (nothing could reach its other
    /// end), and the mismatch is an error naming the path, at both ends; a path matched again
    /// comes up when it is next heard.
    fn match_paths(&mut self, now: Instant, p: usize) {
        let Some(map) = self.sessions.get(p).path_map().cloned() else { return };
        let peer = &mut self.peers[p];
        for (i, name) in self.names.iter().enumerate() {
            let matched = map.is_matched(i);
            if !matched && !peer.unmatched[i] {
                error!(
                    peer = %peer.config.name, path = %name,
                    "the peer has no [[path]] named {name:?}: this path carries nothing (the \
                     names of the paths must be the same at both ends)"
                );
                peer.live.mark_down(i);
                peer.tx.set_path_up(now, i, false);
                peer.compact_ready[i] = false;
            } else if matched && peer.unmatched[i] {
                info!(peer = %peer.config.name, path = %name, "the peer now has this path");
            }
            peer.unmatched[i] = !matched;
        }
        for name in map.peer_only() {
            error!(
                peer = %peer.config.name,
                "the peer has a path {name:?} this end has no [[path]] of: it carries nothing \
                 (our paths: {})",
                self.names.join(", ")
            );
        }
    }

    /// An authenticated datagram of peer `p` named the peer's path `named` but came in on our
    /// path `i`: the peer sends that path's datagrams to the address of another of our paths
    /// (crossed `remote`s). Logged at most every [`CROSSED_LOG_EVERY`], naming both paths.
    fn crossed_path(&mut self, now: Instant, p: usize, named: u8, i: usize) {
        if self.crossed_logged.is_some_and(|t| now < t + CROSSED_LOG_EVERY) {
            return;
        }
        self.crossed_logged = Some(now);
        let theirs = self.sessions.get(p).path_map().and_then(|m| m.wire_name(named));
        let theirs = theirs.map_or_else(|| format!("id {named}"), |n| format!("{n:?}"));
        error!(
            peer = %self.peers[p].config.name, path = %self.names[i],
            "the peer's path {theirs} arrives on our path {:?}: its remote is this path's \
             address; each path's remote must be the address of the peer's path of the same name",
            self.names[i]
        );
    }

    /// Something authenticated came from peer `p`'s remote on path `i`: liveness, and the path
    /// back up.
    fn path_heard(&mut self, now: Instant, p: usize, i: usize) {
        let peer = &mut self.peers[p];
        if peer.unmatched[i] {
            return;
        }
        if let Some(Change::Up(_)) = peer.live.on_receive(now, i) {
            info!(peer = %peer.config.name, path = %self.names[i], "path up");
            peer.tx.set_path_up(now, i, true);
        }
    }

    /// Seals a control frame written by `emit` for peer `p` and queues it on path `i`'s train.
    fn send_control(
        &mut self,
        io: &mut Io,
        now: Instant,
        p: usize,
        i: usize,
        emit: impl FnOnce(&mut [u8]) -> usize,
    ) {
        let Some(dest) = self.peers[p].remotes.get(i).copied().flatten() else { return };
        self.send_control_to(io, now, p, i, dest, emit);
    }

    /// Seals a control frame written by `emit` for peer `p` and queues it on path `i`'s train
    /// for `dest`.
    fn send_control_to(
        &mut self,
        io: &mut Io,
        now: Instant,
        p: usize,
        i: usize,
        dest: SocketAddr,
        emit: impl FnOnce(&mut [u8]) -> usize,
    ) {
        let session = self.sessions.get_mut(p);
        if push_control(&mut io.paths, session, now, i, dest, emit).is_err() {
            self.peers[p].paths[i].socket_drops += 1;
        }
    }
}

/// Seals a control frame written by `emit` (at most [`CONTROL_FRAME_MAX`] bytes) with
/// `session`'s keys and queues it on path `i`'s train for `dest`.
fn push_control(
    paths: &mut Transport,
    session: &mut Session,
    now: Instant,
    i: usize,
    dest: SocketAddr,
    emit: impl FnOnce(&mut [u8]) -> usize,
) -> io::Result<()> {
    paths.push(i, dest, crypto::OVERHEAD + CONTROL_FRAME_MAX, |buf| {
        let end = buf.len() - crypto::TAG_LEN;
        let n = emit(&mut buf[crypto::HEADER_LEN..end]);
        session.seal(now, i as u8, buf, n).unwrap_or(0)
    })
}

/// What one challenge costs on the wire: outer IP and UDP headers (of the paths' IP version),
/// the envelope and tag, and the probe frame.
fn challenge_bytes(cfg: &DaemonConfig) -> u64 {
    let outer = if cfg.paths.first().is_some_and(|p| p.bind.is_ipv6()) { 48 } else { 28 };
    (outer + crypto::OVERHEAD + PROBE_LEN) as u64
}

/// The sessions for `cfg`'s keys: the client's one, or the server's one per peer. Key indices
/// are seeded, and this process's instance drawn, from the OS random source, so a restarted
/// daemon reuses neither.
fn new_sessions(cfg: &DaemonConfig) -> Result<Sessions, DaemonError> {
    use ring::rand::SecureRandom;
    let keys = cfg.keys().map_err(|e| DaemonError::Config(e.to_string()))?;
    let random = || {
        let mut b = [0u8; 8];
        ring::rand::SystemRandom::new()
            .fill(&mut b)
            .map(|_| u64::from_le_bytes(b))
            .map_err(|_| DaemonError::Config("the OS random source failed".into()))
    };
    let instance = random()?;
    let unix = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    Ok(match cfg.role {
        Role::Client => {
            let (peer, psk) = keys.peers.into_iter().next().expect("a client has one peer");
            let config = SessionConfig {
                role: crypto::Role::Initiator,
                cipher: cfg.cipher,
                local: keys.local,
                peer,
                psk,
                index_seed: random()?,
                instance,
                paths: cfg.path_table(),
            };
            Sessions::Client(Box::new(Session::new(config, Instant::ZERO, unix)))
        }
        Role::Server => {
            let peers = keys
                .peers
                .into_iter()
                .map(|(public_key, psk)| Ok(PeerKeys { public_key, psk, index_seed: random()? }))
                .collect::<Result<Vec<_>, DaemonError>>()?;
            Sessions::Server(Box::new(Responder::new(
                cfg.cipher,
                keys.local,
                peers,
                instance,
                &cfg.path_table(),
                Instant::ZERO,
                unix,
            )))
        }
    })
}

fn pollfd(fd: RawFd) -> libc::pollfd {
    libc::pollfd { fd, events: libc::POLLIN, revents: 0 }
}
