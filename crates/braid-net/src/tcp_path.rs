//! Kernel TCP paths (`interface.transport = "tcp"`): each path is one TCP connection, as the
//! user-space framework of Pieska et al. 2024 runs the MP-DCCP scheduler and reorder modules
//! over "multiple TCP tunnels (e.g., using TCP BBR)" (Pieska et al. 2024, section 2.2).
//!
//! The kernel does each path's congestion control (`tunnel.cc`, set per socket with
//! `TCP_CONGESTION` and read back), pacing and retransmission; the tunnel keeps its scheduler
//! (braid-core's [`StreamSender`]) and its receiver's reordering across paths. Each loop
//! iteration reads every connection's `TCP_INFO` ([`mod@info`]) and hands the scheduler the
//! kernel's cwnd and bytes in flight; the scheduler only writes while a window has room, so
//! what waits in user space stays within a window (plus a few control frames). Frames are
//! `u16 length | envelope` ([`crate::framing`]), the envelope being what the UDP transport sends.
//!
//! Connections:
//! - **Client**: per path a non-blocking socket bound to the path's device (SO_BINDTODEVICE)
//!   and source address, with TCP_NODELAY (frames are written whole per loop iteration; Nagle
//!   would hold a lone probe back for an RTT) and the kernel CC, connecting to the path's
//!   remote. A connection that fails or closes is replaced; so is one whose path liveness
//!   declares down (nothing heard for `dead_after`: a dead link, not a closed socket). An
//!   attempt still connecting after `dead_after` is abandoned, so a dead link costs one SYN per
//!   `dead_after` and a returning link is found within about that. Attempts that fail at once
//!   (refused: the server is restarting, or its listener not up yet) are spaced by an
//!   exponential backoff from [`RECONNECT_FIRST`] up to `dead_after`, as TCP backs off its own
//!   retransmissions (RFC 6298 section 5.5), and the backoff starts again from
//!   [`RECONNECT_FIRST`] once a connection is established: a server back from a restart is
//!   found within a few hundred milliseconds, not only at the next `dead_after`.
//! - **Server**: per path a listener on the path's `bind` address; a connection accepted on
//!   path i's listener is path i, its peer address the path's remote. Anyone can open a TCP
//!   connection, so an accepted connection stays *pending*: what it carries is handed to the
//!   session like any frame (a handshake initiation is answered on it), but nothing else is
//!   sent on it and it does not touch the path until it delivers an authenticated transport
//!   frame ([`TcpPaths::confirm`]); then it replaces the path's connection (the client only
//!   reconnects when it gave the old one up). At most [`MAX_PENDING`] wait per path (a new one
//!   closes the oldest), each for at most [`PENDING_TIMEOUT`]. A replayed initiation gets the
//!   cached response on its own connection and promotes nothing: only transport frames, which
//!   the session's replay window checks, do.
//!
//! Until the session is established, the client sends its latest handshake initiation on every
//! new connection, so a connection that failed at start-up does not cost the handshake's
//! five-second retry.

pub mod info;

use std::io::{self, Read};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::Duration;

use braid_core::tunnel::{StreamPathState, StreamSender};
use braid_core::wire::feedback::FEEDBACK_MAX_LEN;
use braid_core::wire::DATA_HEADER_LEN;
use braid_core::Instant;
use socket2::{Domain, Protocol, Socket, Type};
use tracing::{info, warn};

use crate::config::{DaemonConfig, PathConfig, Role};
use crate::crypto::{self, envelope};
use crate::framing::{FrameReader, FrameWriter};
use crate::linux::{congestion_control, set_congestion_control, KernelCc, TcpInfo};
use crate::pool::Pkt;
use crate::socket::{bind_to_path, PathError, READ_BUDGET};

/// How soon the loop looks again when packets wait because no path's window has room. The
/// kernel opens a window when ACKs arrive, which wakes nobody in user space (ACKs carry no data
/// to read), so the loop polls `TCP_INFO`: 1 ms is about ten wake-up latencies of this VM and
/// 4 full frames at 50 Mbit/s, small against the windows it refills.
pub const RECHECK_INTERVAL: Duration = Duration::from_millis(1);
/// Bytes one read may take from a connection: a GRO-sized batch of frames.
const READ_BYTES: usize = 64 * 1024;
/// Most bytes a connection's writer holds for the socket. The scheduler counts them in flight
/// and stops at the kernel's window; this bound only matters if the socket stops taking data.
const WRITE_LIMIT_BYTES: usize = 8 << 20;
const LISTEN_BACKLOG: i32 = 8;
/// Accepted connections that have not yet authenticated, per path.
pub const MAX_PENDING: usize = 4;
/// How long an accepted connection may take to deliver its first authenticated frame: a
/// client sends its initiation or data at once, so this is many round trips.
pub const PENDING_TIMEOUT: Duration = Duration::from_secs(3);

/// A client's wait before its next connect attempt on a path after an attempt, at first; it
/// doubles with each further attempt that brings no connection, up to `liveness.dead_after`
/// (see the module documentation). One loopback round trip is microseconds and a refused
/// connect fails at once, so 100 ms is ten SYNs a second at most, on a path that has none.
pub const RECONNECT_FIRST: Duration = Duration::from_millis(100);

/// Why a TCP path could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TcpPathError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("path.{index} ({name}): cannot run tunnel.cc {cc:?} on its TCP socket: {source}")]
    CongestionControl { index: usize, name: String, cc: &'static str, source: io::Error },
    #[error("path.{index}.bind: cannot listen on {addr}: {source}")]
    Listen { index: usize, addr: SocketAddr, source: io::Error },
}

/// A path's state for the status page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpStatus {
    /// The live socket's congestion control, read from the kernel; `None` without a
    /// connection.
    pub kernel_cc: Option<String>,
    /// The kernel's `tcpi_ca_state`, or "closed"/"connecting".
    pub ca_state: &'static str,
    /// Segments the kernel retransmitted on this path, over all its connections.
    pub retrans_segs: u64,
    /// Connections closed for a malformed stream.
    pub stream_errors: u64,
}

#[derive(Debug)]
struct Conn {
    sock: Socket,
    peer: SocketAddr,
    connected: bool,
    /// When the connect started or the connection was accepted.
    since: Instant,
    reader: FrameReader,
    writer: FrameWriter,
    info: Option<TcpInfo>,
}

impl Conn {
    fn new(
        sock: Socket,
        peer: SocketAddr,
        connected: bool,
        now: Instant,
        max_frame: usize,
    ) -> Conn {
        Conn {
            sock,
            peer,
            connected,
            since: now,
            reader: FrameReader::new(max_frame, READ_BYTES),
            writer: FrameWriter::new(WRITE_LIMIT_BYTES),
            info: None,
        }
    }
}

#[derive(Debug)]
struct TcpPath {
    cfg: PathConfig,
    listener: Option<Socket>,
    conn: Option<Conn>,
    /// (Server) accepted connections not yet authenticated, oldest first.
    pending: Vec<Conn>,
    last_attempt: Option<Instant>,
    /// The wait after `last_attempt` before the next attempt may start.
    backoff: Duration,
    /// The wait to set at the next attempt: [`RECONNECT_FIRST`] after a connection was
    /// established, doubled at each attempt since, at most `retry_every`.
    next_backoff: Duration,
    /// `tcpi_total_retrans` of the connections closed so far.
    retrans_closed: u64,
    stream_errors: u64,
}

/// What a poll entry is: path index, descriptor, and which of the path's sockets.
#[derive(Clone, Copy, Debug)]
struct Slot {
    path: usize,
    fd: i32,
    kind: SlotKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotKind {
    Listener,
    Live,
    Pending,
}

/// The TCP transport: every path's listener (server) or connection attempts (client), and its
/// current connection.
#[derive(Debug)]
pub struct TcpPaths {
    role: Role,
    cc: KernelCc,
    paths: Vec<TcpPath>,
    /// `liveness.dead_after`: the spacing of connect attempts and their timeout.
    retry_every: Duration,
    max_frame: usize,
    /// (Client) the latest handshake initiation, until the session is established.
    initiation: Vec<u8>,
    slots: Vec<Slot>,
}

impl TcpPaths {
    /// Opens the listeners (server) or starts the first connect attempts (client). A path whose
    /// device, address or congestion control cannot be set is an error; a connect that fails is
    /// retried.
    pub fn open(cfg: &DaemonConfig, cc: KernelCc, now: Instant) -> Result<TcpPaths, TcpPathError> {
        let max_frame = [
            crypto::OVERHEAD + DATA_HEADER_LEN + usize::from(cfg.mtu),
            crypto::OVERHEAD + FEEDBACK_MAX_LEN,
            envelope::INITIATION_LEN,
            envelope::RESPONSE_LEN,
            envelope::COOKIE_REPLY_LEN,
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        let paths = cfg
            .paths
            .iter()
            .map(|p| TcpPath {
                cfg: p.clone(),
                listener: None,
                conn: None,
                pending: Vec::new(),
                last_attempt: None,
                backoff: Duration::ZERO,
                next_backoff: RECONNECT_FIRST.min(cfg.liveness.dead_after),
                retrans_closed: 0,
                stream_errors: 0,
            })
            .collect();
        let mut t = TcpPaths {
            role: cfg.role,
            cc,
            paths,
            retry_every: cfg.liveness.dead_after,
            max_frame,
            initiation: Vec::new(),
            slots: Vec::new(),
        };
        for i in 0..t.paths.len() {
            match t.role {
                Role::Server => t.listen(i)?,
                Role::Client => t.connect(now, i)?,
            }
        }
        Ok(t)
    }

    fn listen(&mut self, i: usize) -> Result<(), TcpPathError> {
        let p = &mut self.paths[i];
        let addr = p.cfg.bind;
        let listen_err = |source| TcpPathError::Listen { index: i, addr, source };
        let sock = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
            .map_err(|source| PathError::Socket { index: i, source })?;
        sock.set_reuse_address(true).map_err(listen_err)?;
        bind_to_path(&sock, i, p.cfg.bind, p.cfg.device.as_deref(), p.cfg.fwmark)?;
        // Accepted connections inherit the listener's congestion control; each is checked
        // again when accepted.
        set_congestion_control(&sock, self.cc)
            .map_err(|source| cc_err(i, &p.cfg, self.cc, source))?;
        sock.listen(LISTEN_BACKLOG).map_err(listen_err)?;
        sock.set_nonblocking(true).map_err(listen_err)?;
        p.listener = Some(sock);
        Ok(())
    }

    /// Starts a connect attempt on client path `i`. Errors are the socket set-up's; a connect
    /// refused at once is logged and retried after the path's backoff.
    fn connect(&mut self, now: Instant, i: usize) -> Result<(), TcpPathError> {
        let p = &mut self.paths[i];
        p.last_attempt = Some(now);
        p.backoff = p.next_backoff;
        p.next_backoff = (p.next_backoff * 2).min(self.retry_every);
        let Some(remote) = p.cfg.remote else { return Ok(()) };
        let sock = Socket::new(Domain::for_address(remote), Type::STREAM, Some(Protocol::TCP))
            .map_err(|source| PathError::Socket { index: i, source })?;
        bind_to_path(&sock, i, p.cfg.bind, p.cfg.device.as_deref(), p.cfg.fwmark)?;
        stream_options(&sock, i, &p.cfg, self.cc)?;
        let connected = match sock.connect(&remote.into()) {
            Ok(()) => {
                p.next_backoff = RECONNECT_FIRST.min(self.retry_every);
                true
            }
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => false,
            Err(e) => {
                warn!(path = %p.cfg.name, %remote, error = %e, "TCP connect failed");
                return Ok(());
            }
        };
        let mut conn = Conn::new(sock, remote, connected, now, self.max_frame);
        if !self.initiation.is_empty() {
            push_datagram(&mut conn.writer, &self.initiation);
        }
        p.conn = Some(conn);
        Ok(())
    }

    /// Closes path `i`'s connection, if any.
    fn close(&mut self, i: usize, why: &str) {
        let p = &mut self.paths[i];
        if let Some(c) = p.conn.take() {
            p.retrans_closed += c.info.map_or(0, |info| u64::from(info.total_retrans));
            warn!(path = %p.cfg.name, peer = %c.peer, why, "TCP path connection closed");
        }
    }

    /// Accepts what waits on server path `i`'s listener into the path's pending connections
    /// (see the module documentation), closing the oldest beyond [`MAX_PENDING`].
    fn accept(&mut self, now: Instant, i: usize) {
        for _ in 0..READ_BUDGET {
            let p = &mut self.paths[i];
            let Some(listener) = &p.listener else { return };
            let (sock, addr) = match listener.accept() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    warn!(path = %p.cfg.name, error = %e, "TCP accept failed");
                    return;
                }
            };
            let Some(peer) = addr.as_socket() else { continue };
            if let Err(e) = stream_options(&sock, i, &p.cfg, self.cc) {
                warn!(error = %e, "refusing a TCP path connection");
                continue;
            }
            if p.pending.len() >= MAX_PENDING {
                let old = p.pending.remove(0);
                warn!(path = %p.cfg.name, peer = %old.peer, "unauthenticated TCP connection closed: newer ones wait");
            }
            info!(path = %p.cfg.name, %peer, "TCP path connection accepted, pending authentication");
            p.pending.push(Conn::new(sock, peer, true, now, self.max_frame));
        }
    }

    /// The session authenticated a transport frame that came on path `i` from `peer`: if that
    /// is a pending connection, it becomes the path's (closing the one it replaces).
    pub fn confirm(&mut self, i: usize, peer: SocketAddr) {
        let Some(p) = self.paths.get_mut(i) else { return };
        let Some(k) = p.pending.iter().position(|c| c.peer == peer) else { return };
        let conn = p.pending.remove(k);
        if p.conn.is_some() {
            self.close(i, "an authenticated newer connection replaces it");
        }
        let p = &mut self.paths[i];
        info!(path = %p.cfg.name, %peer, "TCP path connection authenticated");
        p.conn = Some(conn);
    }

    /// The poll entries: every listener (readable) and connection (readable once connected,
    /// writable while connecting or holding unsent bytes). Appended to `out`.
    pub fn poll_fds(&mut self, out: &mut Vec<libc::pollfd>) {
        self.slots.clear();
        for (i, p) in self.paths.iter().enumerate() {
            if let Some(l) = &p.listener {
                let fd = l.as_raw_fd();
                self.slots.push(Slot { path: i, fd, kind: SlotKind::Listener });
                out.push(libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
            }
            let live = p.conn.iter().map(|c| (c, SlotKind::Live));
            for (c, kind) in live.chain(p.pending.iter().map(|c| (c, SlotKind::Pending))) {
                let fd = c.sock.as_raw_fd();
                let events = if !c.connected {
                    libc::POLLOUT
                } else if c.writer.pending() > 0 {
                    libc::POLLIN | libc::POLLOUT
                } else {
                    libc::POLLIN
                };
                self.slots.push(Slot { path: i, fd, kind });
                out.push(libc::pollfd { fd, events, revents: 0 });
            }
        }
    }

    /// Handles the events `ready` reports for the entries [`TcpPaths::poll_fds`] laid out:
    /// accepts, completed connects, reads (calling `f(path, peer, envelope)` for every
    /// envelope), closes.
    pub fn handle_events(
        &mut self,
        now: Instant,
        ready: &[libc::pollfd],
        mut f: impl FnMut(usize, SocketAddr, &mut [u8]),
    ) {
        for k in 0..self.slots.len() {
            let slot = self.slots[k];
            let revents = ready.get(k).map_or(0, |p| p.revents);
            if revents == 0 {
                continue;
            }
            match slot.kind {
                SlotKind::Listener => {
                    self.accept(now, slot.path);
                    continue;
                }
                SlotKind::Pending => {
                    self.read_pending(slot.path, slot.fd, &mut f);
                    continue;
                }
                SlotKind::Live => {}
            }
            // The connection may have been replaced since the poll.
            let current = self.paths[slot.path].conn.as_ref().map(|c| c.sock.as_raw_fd());
            if current != Some(slot.fd) {
                continue;
            }
            if !self.finish_connect(slot.path, revents) {
                continue;
            }
            if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                self.read(slot.path, &mut f);
            }
        }
    }

    /// Whether path `i`'s connection is established, completing a pending connect when the
    /// socket reports its outcome.
    fn finish_connect(&mut self, i: usize, revents: i16) -> bool {
        let p = &mut self.paths[i];
        let Some(c) = p.conn.as_mut() else { return false };
        if c.connected {
            return true;
        }
        match c.sock.take_error() {
            Ok(None) if revents & libc::POLLOUT != 0 => {
                c.connected = true;
                p.next_backoff = RECONNECT_FIRST.min(self.retry_every);
                info!(path = %p.cfg.name, peer = %c.peer, "TCP path connected");
                true
            }
            Ok(None) => false,
            Ok(Some(e)) | Err(e) => {
                self.close(i, &format!("connect failed: {e}"));
                false
            }
        }
    }

    /// Reads path `i`'s connection in bounded batches and hands out every whole envelope.
    fn read(&mut self, i: usize, f: &mut impl FnMut(usize, SocketAddr, &mut [u8])) {
        let p = &mut self.paths[i];
        let Some(c) = p.conn.as_mut() else { return };
        if let Some(why) = read_frames(c, i, &mut p.stream_errors, f) {
            self.close(i, &why);
        }
    }

    /// Reads the pending connection `fd` of path `i` as [`TcpPaths::read`] does; one that ends
    /// or breaks the framing is closed. Its frames go to `f` like any others: the session
    /// decides what they are, and [`TcpPaths::confirm`] what the connection becomes.
    fn read_pending(
        &mut self,
        i: usize,
        fd: i32,
        f: &mut impl FnMut(usize, SocketAddr, &mut [u8]),
    ) {
        let p = &mut self.paths[i];
        let Some(k) = p.pending.iter().position(|c| c.sock.as_raw_fd() == fd) else { return };
        if let Some(why) = read_frames(&mut p.pending[k], i, &mut p.stream_errors, f) {
            let c = p.pending.remove(k);
            info!(path = %p.cfg.name, peer = %c.peer, why, "pending TCP connection closed");
        }
    }

    /// Once per loop iteration, before the sender runs: clears the stored initiation once the
    /// session is established, abandons connects older than `retry_every`, starts due client
    /// attempts, and hands `tx` every path's `TCP_INFO`.
    pub fn maintain(&mut self, now: Instant, tx: &mut StreamSender<Pkt>, established: bool) {
        if established {
            self.initiation.clear();
        }
        for i in 0..self.paths.len() {
            let p = &mut self.paths[i];
            let before = p.pending.len();
            p.pending.retain(|c| now < c.since + PENDING_TIMEOUT);
            if p.pending.len() < before {
                info!(path = %p.cfg.name, closed = before - p.pending.len(), "pending TCP connections timed out unauthenticated");
            }
            let p = &self.paths[i];
            if p.conn.as_ref().is_some_and(|c| !c.connected && now >= c.since + self.retry_every) {
                self.close(i, "connect timed out");
            }
            let p = &self.paths[i];
            let due = p.last_attempt.is_none_or(|t| now >= t + p.backoff);
            if self.role == Role::Client && p.conn.is_none() && due {
                if let Err(e) = self.connect(now, i) {
                    warn!(error = %e, "TCP path connect attempt");
                }
            }
            let state = match self.paths[i].conn.as_mut() {
                Some(c) if c.connected => match TcpInfo::read(c.sock.as_raw_fd()) {
                    Ok(info) => {
                        c.info = Some(info);
                        info::path_state(&info, c.writer.pending() as u64)
                    }
                    Err(_) => StreamPathState::default(),
                },
                _ => StreamPathState::default(),
            };
            tx.update_path(i, state);
        }
    }

    /// Liveness declared path `i` down. A client replaces the connection (see the module
    /// documentation); a server waits for the client's new one.
    pub fn path_down(&mut self, i: usize) {
        if self.role == Role::Client {
            self.close(i, "nothing heard for liveness.dead_after");
        }
    }

    /// When the loop must run again at the latest: a connect attempt to start or abandon, or
    /// the window re-check while packets are `queued`.
    pub fn poll_timeout(&self, now: Instant, queued: bool) -> Option<Instant> {
        let mut earliest = queued.then(|| now + RECHECK_INTERVAL);
        let mut consider = |t: Instant| earliest = Some(earliest.map_or(t, |e| e.min(t)));
        for p in &self.paths {
            if let Some(oldest) = p.pending.first() {
                consider(oldest.since + PENDING_TIMEOUT);
            }
            match &p.conn {
                Some(c) if !c.connected => consider(c.since + self.retry_every),
                None if self.role == Role::Client => {
                    consider(p.last_attempt.map_or(now, |t| t + p.backoff))
                }
                _ => {}
            }
        }
        earliest
    }

    /// Queues a whole datagram (a handshake message or keepalive) on every path with a
    /// connection. A client keeps its latest initiation for the connections still to come.
    pub fn send_everywhere(&mut self, datagram: &[u8]) {
        if self.role == Role::Client && datagram.first() == Some(&envelope::TYPE_INITIATION) {
            self.initiation.clear();
            self.initiation.extend_from_slice(datagram);
        }
        for c in self.paths.iter_mut().filter_map(|p| p.conn.as_mut()) {
            push_datagram(&mut c.writer, datagram);
        }
    }

    /// Queues a whole datagram on path `i`.
    /// (A reply to what `dest` sent: a pending connection's handshake is answered on it.)
    pub fn send_to(&mut self, i: usize, dest: SocketAddr, datagram: &[u8]) -> io::Result<()> {
        let pending =
            self.paths.get_mut(i).and_then(|p| p.pending.iter_mut().find(|c| c.peer == dest));
        if let Some(c) = pending {
            push_datagram(&mut c.writer, datagram);
            return Ok(());
        }
        self.push(i, datagram.len(), |b| {
            b[..datagram.len()].copy_from_slice(datagram);
            datagram.len()
        })
    }

    /// Queues an envelope of at most `len` bytes, written by `fill`, on path `i`'s connection.
    /// Fails when the path has no connection or its writer is full.
    pub fn push(
        &mut self,
        i: usize,
        len: usize,
        fill: impl FnOnce(&mut [u8]) -> usize,
    ) -> io::Result<()> {
        let Some(c) = self.paths.get_mut(i).and_then(|p| p.conn.as_mut()) else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        if c.writer.push(len, fill) {
            Ok(())
        } else {
            Err(io::ErrorKind::WouldBlock.into())
        }
    }

    /// Hands every connection's queued bytes to its socket; a socket error closes the
    /// connection.
    pub fn flush(&mut self) {
        for i in 0..self.paths.len() {
            // A pending connection holds at most a handshake response.
            self.paths[i].pending.retain_mut(|c| {
                let sock = &c.sock;
                c.writer.flush(|b| sock.send_with_flags(b, libc::MSG_NOSIGNAL)).is_ok()
            });
            let Some(c) = self.paths[i].conn.as_mut().filter(|c| c.connected) else { continue };
            let sock = &c.sock;
            if let Err(e) = c.writer.flush(|b| sock.send_with_flags(b, libc::MSG_NOSIGNAL)) {
                self.close(i, &e.to_string());
            }
        }
    }

    /// Accepted connections of path `i` still waiting to authenticate.
    pub fn pending(&self, i: usize) -> usize {
        self.paths.get(i).map_or(0, |p| p.pending.len())
    }

    /// Path `i` for the status page.
    pub fn status(&self, i: usize) -> TcpStatus {
        let p = &self.paths[i];
        let live = p.conn.as_ref().filter(|c| c.connected);
        let ca_state = match &p.conn {
            None => "closed",
            Some(c) if !c.connected => "connecting",
            Some(c) => c.info.map_or("open", |info| info.ca_state_name()),
        };
        TcpStatus {
            kernel_cc: live.and_then(|c| congestion_control(&c.sock).ok()),
            ca_state,
            retrans_segs: p.retrans_closed
                + live.and_then(|c| c.info).map_or(0, |info| u64::from(info.total_retrans)),
            stream_errors: p.stream_errors,
        }
    }
}

/// Reads `c` in bounded batches and hands every whole envelope to `f` as path `i`'s; returns
/// why the connection must close (the peer closed it, an error, a malformed stream, counted in
/// `stream_errors`), if it must.
fn read_frames(
    c: &mut Conn,
    i: usize,
    stream_errors: &mut u64,
    f: &mut impl FnMut(usize, SocketAddr, &mut [u8]),
) -> Option<String> {
    for _ in 0..READ_BUDGET {
        match c.reader.read_from(|buf| (&c.sock).read(buf)) {
            Ok(0) => return Some("closed by the peer".into()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return None,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Some(e.to_string()),
        }
        loop {
            match c.reader.next_frame() {
                Ok(Some(frame)) => f(i, c.peer, frame),
                Ok(None) => break,
                Err(e) => {
                    *stream_errors += 1;
                    return Some(format!("protocol error: {e}"));
                }
            }
        }
    }
    None
}

/// TCP_NODELAY, the congestion control (read back), non-blocking.
fn stream_options(
    sock: &Socket,
    i: usize,
    cfg: &PathConfig,
    cc: KernelCc,
) -> Result<(), TcpPathError> {
    let sock_err = |source| PathError::Socket { index: i, source };
    sock.set_tcp_nodelay(true).map_err(sock_err)?;
    set_congestion_control(sock, cc).map_err(|source| cc_err(i, cfg, cc, source))?;
    sock.set_nonblocking(true).map_err(sock_err)?;
    Ok(())
}

fn cc_err(index: usize, cfg: &PathConfig, cc: KernelCc, source: io::Error) -> TcpPathError {
    TcpPathError::CongestionControl { index, name: cfg.name.clone(), cc: cc.as_str(), source }
}

/// Queues a whole datagram; a full writer drops it (handshakes are retried by the session).
fn push_datagram(writer: &mut FrameWriter, datagram: &[u8]) {
    writer.push(datagram.len(), |b| {
        b[..datagram.len()].copy_from_slice(datagram);
        datagram.len()
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::Instant as WallInstant;

    /// A config of one path on loopback, with reno (always allowed) and fast liveness.
    fn config(role: &str, port: u16) -> DaemonConfig {
        config_dead_after(role, port, 200)
    }

    fn config_dead_after(role: &str, port: u16, dead_after_ms: u64) -> DaemonConfig {
        let path = if role == "server" {
            format!("bind = \"127.0.0.1:{port}\"")
        } else {
            format!("bind = \"127.0.0.1:0\"\nremote = \"127.0.0.1:{port}\"")
        };
        let text = format!(
            "[interface]\nname = \"t0\"\nrole = \"{role}\"\nprivate_key = \"k\"\ntransport = \"tcp\"\n\
             [peer]\npublic_key = \"p\"\n\
             [tunnel]\ncc = \"newreno\"\nreliability = \"reliable\"\n\
             [liveness]\nprobe_interval_ms = 50\ndead_after_ms = {dead_after_ms}\n\
             [[path]]\nname = \"a\"\n{path}\n"
        );
        DaemonConfig::from_toml_str(&text).unwrap()
    }

    fn free_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    }

    /// A transport with its stream sender and a clock.
    struct End {
        paths: TcpPaths,
        tx: StreamSender<Pkt>,
        received: Vec<(usize, SocketAddr, Vec<u8>)>,
    }

    impl End {
        fn open(cfg: &DaemonConfig, start: WallInstant) -> End {
            let now = since(start);
            End {
                paths: TcpPaths::open(cfg, KernelCc::Reno, now).unwrap(),
                tx: StreamSender::new(&cfg.core_config()),
                received: Vec::new(),
            }
        }
    }

    fn since(start: WallInstant) -> Instant {
        Instant::from_nanos(start.elapsed().as_nanos() as u64)
    }

    /// Runs the ends' loops (upkeep, flush, poll, events) until `done` or 5 s.
    fn pump(ends: &mut [&mut End], start: WallInstant, mut done: impl FnMut(&[&mut End]) -> bool) {
        let deadline = WallInstant::now() + Duration::from_secs(5);
        while !done(ends) {
            assert!(WallInstant::now() < deadline, "timed out");
            for e in ends.iter_mut() {
                let now = since(start);
                e.paths.maintain(now, &mut e.tx, false);
                e.paths.flush();
                let mut fds = Vec::new();
                e.paths.poll_fds(&mut fds);
                // SAFETY: a live array of pollfd of the given length.
                unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 5) };
                let received = &mut e.received;
                e.paths.handle_events(now, &fds, |i, peer, frame| {
                    received.push((i, peer, frame.to_vec()))
                });
            }
        }
    }

    #[test]
    fn envelopes_cross_a_path_and_a_reconnect_replaces_the_connection_and_repeats_the_handshake() {
        let port = free_port();
        let start = WallInstant::now();
        let mut server = End::open(&config("server", port), start);
        let mut client = End::open(&config("client", port), start);
        // Queued while the connect is still in progress: an initiation (kept for later
        // connections) and a transport envelope.
        let initiation = [envelope::TYPE_INITIATION, 1, 2, 3];
        client.paths.send_everywhere(&initiation);
        client
            .paths
            .send_to(0, "0.0.0.0:0".parse().unwrap(), &[envelope::TYPE_TRANSPORT, 9, 9])
            .unwrap();
        pump(&mut [&mut server, &mut client], start, |e| e[0].received.len() >= 2);
        let frames: Vec<&[u8]> = server.received.iter().map(|r| r.2.as_slice()).collect();
        assert_eq!(frames, [&initiation[..], &[4, 9, 9][..]]);
        let (path, first_peer, _) = server.received[0];
        assert_eq!((path, first_peer.ip().to_string()), (0, "127.0.0.1".to_string()));
        // Pending until the session vouches for what it carried.
        assert_eq!((server.paths.pending(0), server.paths.status(0).ca_state), (1, "closed"));
        // A handshake response goes back on the pending connection it answers.
        server.paths.send_to(0, first_peer, b"response").unwrap();
        pump(&mut [&mut server, &mut client], start, |e| !e[1].received.is_empty());
        assert_eq!(client.received[0].2, b"response");
        server.paths.confirm(0, first_peer);
        assert_eq!(server.paths.pending(0), 0);
        assert_eq!(server.paths.status(0).kernel_cc.as_deref(), Some("reno"));
        // Liveness gives the path up: the client closes and, RECONNECT_FIRST after its last
        // attempt, connects anew and repeats the initiation; the server takes the newer
        // connection as the path once it is confirmed.
        client.paths.path_down(0);
        assert_eq!(client.paths.status(0).ca_state, "closed");
        server.received.clear();
        pump(&mut [&mut server, &mut client], start, |e| !e[0].received.is_empty());
        assert_eq!(server.received[0].2, initiation);
        let second_peer = server.received[0].1;
        assert_ne!(second_peer, first_peer, "a new connection, from a new port");
        server.paths.confirm(0, second_peer);
        pump(&mut [&mut server, &mut client], start, |e| {
            e[0].tx.is_path_up(0) && e[1].tx.is_path_up(0)
        });
    }

    /// A refused connect is retried after 100 ms, then 200, 400, 800 and then every dead_after
    /// (1 s here), so a server that comes back is found within the current backoff.
    #[test]
    fn refused_connects_back_off_exponentially_up_to_dead_after() {
        let port = free_port();
        let start = WallInstant::now();
        let mut client = End::open(&config_dead_after("client", port, 1000), start);
        let mut attempts = vec![client.paths.paths[0].last_attempt.unwrap()];
        let deadline = WallInstant::now() + Duration::from_millis(2700);
        while WallInstant::now() < deadline {
            client.paths.maintain(since(start), &mut client.tx, false);
            let mut fds = Vec::new();
            client.paths.poll_fds(&mut fds);
            // SAFETY: a live array of pollfd of the given length.
            unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 2) };
            client.paths.handle_events(since(start), &fds, |_, _, _| {});
            let last = client.paths.paths[0].last_attempt.unwrap();
            if last != *attempts.last().unwrap() {
                attempts.push(last);
            }
        }
        let gaps: Vec<u64> =
            attempts.windows(2).map(|w| w[1].saturating_since(w[0]).as_millis() as u64).collect();
        assert!(gaps.len() >= 5, "attempts at {attempts:?}");
        for (gap, expected) in gaps.iter().zip([100, 200, 400, 800, 1000]) {
            assert!((expected..expected + 90).contains(gap), "gaps {gaps:?}, expected ~{expected}");
        }
        // The server appears: the next attempt (at most dead_after later) connects, and the
        // backoff starts again from its first step.
        let mut server = End::open(&config_dead_after("server", port, 1000), start);
        let back = WallInstant::now();
        pump(&mut [&mut server, &mut client], start, |e| {
            e[1].paths.paths[0].conn.as_ref().is_some_and(|c| c.connected)
        });
        assert!(
            back.elapsed() < Duration::from_millis(1100),
            "connected {:?} later",
            back.elapsed()
        );
        assert_eq!(client.paths.paths[0].next_backoff, RECONNECT_FIRST, "reset once connected");
    }

    /// Connections that never authenticate change nothing: the path keeps its connection,
    /// at most MAX_PENDING wait (a new one closes the oldest), their frames reach the session
    /// (which refuses them) and nothing is sent to them; they are closed after PENDING_TIMEOUT.
    #[test]
    fn unauthenticated_connections_wait_bounded_and_never_replace_the_path() {
        let port = free_port();
        let start = WallInstant::now();
        let mut server = End::open(&config("server", port), start);
        let mut client = End::open(&config("client", port), start);
        client
            .paths
            .send_to(0, "0.0.0.0:0".parse().unwrap(), &[envelope::TYPE_TRANSPORT, 1])
            .unwrap();
        pump(&mut [&mut server, &mut client], start, |e| !e[0].received.is_empty());
        let genuine = server.received[0].1;
        server.paths.confirm(0, genuine);
        server.received.clear();
        let mut intruders: Vec<std::net::TcpStream> = (0..MAX_PENDING + 2)
            .map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        for s in &mut intruders {
            s.write_all(&[0, 3, envelope::TYPE_INITIATION, 7, 7]).unwrap();
        }
        pump(&mut [&mut server], start, |e| e[0].received.len() >= MAX_PENDING);
        assert!(server.paths.pending(0) <= MAX_PENDING);
        assert!(server
            .received
            .iter()
            .all(|r| r.1 != genuine && r.2 == [envelope::TYPE_INITIATION, 7, 7]));
        // The genuine connection is still the path's: what the client sends arrives from it.
        client
            .paths
            .send_to(0, "0.0.0.0:0".parse().unwrap(), &[envelope::TYPE_TRANSPORT, 2])
            .unwrap();
        server.received.clear();
        pump(&mut [&mut server, &mut client], start, |e| {
            e[0].received.iter().any(|r| r.1 == genuine)
        });
        assert!(server.paths.status(0).ca_state != "closed");
        // Expired: none is left pending after PENDING_TIMEOUT.
        let later = since(start) + PENDING_TIMEOUT + Duration::from_millis(1);
        server.paths.maintain(later, &mut server.tx, false);
        assert_eq!(server.paths.pending(0), 0);
    }

    #[test]
    fn a_bad_frame_length_closes_the_connection_and_is_counted() {
        let port = free_port();
        let start = WallInstant::now();
        let mut server = End::open(&config("server", port), start);
        for bad in [[0u8, 0], [0xff, 0xff]] {
            let before = server.paths.status(0).stream_errors;
            let mut peer = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            peer.write_all(&bad).unwrap();
            pump(&mut [&mut server], start, |e| e[0].paths.status(0).stream_errors > before);
            assert_eq!(server.paths.status(0).ca_state, "closed", "{bad:?} closed the connection");
            assert!(server.received.is_empty());
        }
    }
}
