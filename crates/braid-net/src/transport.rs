//! What carries the paths' frames, behind one interface for the event loop: UDP sockets
//! ([`UdpPaths`], the tunnel's own congestion control) or kernel TCP connections
//! ([`TcpPaths`], the kernel's), and the sender that goes with each ([`Sender`]).
//!
//! The loop sees the same things either way: poll entries, envelopes arriving on a path from a
//! peer address, envelopes to queue on a path and a flush per iteration. What only TCP needs
//! (connection upkeep, `TCP_INFO` for the scheduler, the window re-check) comes through
//! [`Transport::maintain`] and [`Transport::poll_timeout`], which do nothing for UDP.

use std::io;
use std::net::SocketAddr;

use braid_core::tunnel::TunnelConfig;
use braid_core::wire::DATA_HEADER_LEN;
use braid_core::Instant;

use crate::config::{self, ConfigError, DaemonConfig, Transport as TransportKind};
use crate::crypto;
use crate::sender::Sender;
use crate::socket::PathError;
use crate::tcp_path::{TcpPathError, TcpPaths, TcpStatus};
use crate::udp::UdpPaths;

/// Why the paths could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error(transparent)]
    Udp(#[from] PathError),
    #[error(transparent)]
    Tcp(#[from] TcpPathError),
    #[error(transparent)]
    Config(#[from] ConfigError),
}

pub enum Transport {
    /// Boxed: its receive batch holds the metadata of a whole recvmmsg call.
    Udp(Box<UdpPaths>),
    Tcp(TcpPaths),
}

impl Transport {
    /// Opens the paths of `cfg` with its transport.
    pub fn open(cfg: &DaemonConfig, now: Instant) -> Result<Transport, TransportError> {
        Ok(match cfg.transport {
            TransportKind::Udp => {
                let max_datagram = crypto::OVERHEAD + DATA_HEADER_LEN + usize::from(cfg.mtu);
                Transport::Udp(Box::new(UdpPaths::open(cfg, max_datagram)?))
            }
            TransportKind::Tcp => {
                let cc = config::check_tunnel(&cfg.tunnel)?;
                Transport::Tcp(TcpPaths::open(cfg, cc, now)?)
            }
        })
    }

    /// The sender for this transport.
    pub fn sender(&self, core: &TunnelConfig) -> Sender {
        Sender::new(matches!(self, Transport::Tcp(_)), core)
    }

    /// Whether the receiver's per-path feedback is sent: the UDP sender's loss detection reads
    /// it; a TCP path's kernel acknowledges by itself.
    pub fn carries_feedback(&self) -> bool {
        matches!(self, Transport::Udp(_))
    }

    /// Appends this iteration's poll entries.
    pub fn poll_fds(&mut self, out: &mut Vec<libc::pollfd>) {
        match self {
            Transport::Udp(u) => u.poll_fds(out),
            Transport::Tcp(t) => t.poll_fds(out),
        }
    }

    /// Handles the events of the entries [`Transport::poll_fds`] appended, calling
    /// `f(path, peer, envelope)` for every envelope received.
    pub fn read(
        &mut self,
        now: Instant,
        ready: &[libc::pollfd],
        f: impl FnMut(usize, SocketAddr, &mut [u8]),
    ) {
        match self {
            Transport::Udp(u) => u.read(ready, f),
            Transport::Tcp(t) => t.handle_events(now, ready, f),
        }
    }

    /// Upkeep before the sender runs (TCP: connections, and the kernel's windows into `tx`).
    pub fn maintain(&mut self, now: Instant, tx: &mut Sender, established: bool) {
        if let (Transport::Tcp(t), Sender::Stream(s)) = (self, tx) {
            t.maintain(now, s, established);
        }
    }

    /// The session authenticated a transport frame that came on path `i` from `peer` (TCP: a
    /// pending connection from `peer` becomes the path's; UDP: nothing to do, the daemon
    /// follows the address).
    pub fn confirm(&mut self, i: usize, peer: SocketAddr) {
        if let Transport::Tcp(t) = self {
            t.confirm(i, peer);
        }
    }

    /// Liveness declared path `i` down.
    pub fn path_down(&mut self, i: usize) {
        if let Transport::Tcp(t) = self {
            t.path_down(i);
        }
    }

    /// The transport's own deadline; `queued` says packets wait in the scheduler queue.
    pub fn poll_timeout(&self, now: Instant, queued: bool) -> Option<Instant> {
        match self {
            Transport::Udp(_) => None,
            Transport::Tcp(t) => t.poll_timeout(now, queued),
        }
    }

    /// Sends one datagram on path `i` to `dest` (UDP at once; TCP queued on the connection).
    pub fn send_to(&mut self, i: usize, dest: SocketAddr, datagram: &[u8]) -> io::Result<()> {
        match self {
            Transport::Udp(u) => u.send_to(i, dest, datagram),
            Transport::Tcp(t) => t.send_to(i, dest, datagram),
        }
    }

    /// Sends a datagram on every path whose remote is known (handshakes and keepalives).
    pub fn send_everywhere(&mut self, remotes: &[Option<SocketAddr>], datagram: &[u8]) {
        match self {
            Transport::Udp(u) => {
                for (i, dest) in remotes.iter().enumerate() {
                    if let Some(dest) = dest {
                        let _ = u.send_to(i, *dest, datagram);
                    }
                }
            }
            Transport::Tcp(t) => t.send_everywhere(datagram),
        }
    }

    /// Queues an envelope of at most `len` bytes, written by `fill`, on path `i`.
    pub fn push(
        &mut self,
        i: usize,
        dest: SocketAddr,
        len: usize,
        fill: impl FnOnce(&mut [u8]) -> usize,
    ) -> io::Result<()> {
        match self {
            Transport::Udp(u) => u.push(i, dest, len, fill),
            Transport::Tcp(t) => t.push(i, len, fill),
        }
    }

    /// Sends what was queued; `dropped(path)` for what a socket refused.
    pub fn flush(&mut self, dropped: impl FnMut(usize)) {
        match self {
            Transport::Udp(u) => u.flush(dropped),
            Transport::Tcp(t) => t.flush(),
        }
    }

    /// A TCP path's kernel state, for the status page.
    pub fn tcp_status(&self, i: usize) -> Option<TcpStatus> {
        match self {
            Transport::Udp(_) => None,
            Transport::Tcp(t) => Some(t.status(i)),
        }
    }
}
