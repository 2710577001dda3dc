//! One UDP socket per path, bound to the path's interface or source address, with batched
//! receive (recvmmsg and UDP GRO) and batched send (UDP GSO trains), through quinn-udp.
//!
//! A send train is a run of datagrams for one destination that all have the train's segment
//! size except possibly the last, shorter one: the kernel's UDP GSO contract
//! (`UDP_SEGMENT`, Linux `udp_send_skb`). Full-MTU TCP segments make most datagrams the same
//! size, so a train usually carries a whole burst in one system call.

use std::io::{self, IoSliceMut};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};

use quinn_udp::{RecvMeta, Transmit, UdpSockRef, UdpSocketState, BATCH_SIZE};
use socket2::{Domain, Protocol, Socket, Type};

use crate::config::{DaemonConfig, PathConfig};
use crate::socket::{bind_to_path, PathError, READ_BUDGET};

/// Socket buffers: a few BDPs of a Gbit/s path, so a burst is not dropped at the socket.
const SOCKET_BUFFER_BYTES: usize = 8 << 20;
/// A GSO send carries at most one IP datagram's worth of UDP payload in total (Linux
/// `udp_send_skb` refuses more with EMSGSIZE).
const MAX_TRAIN_BYTES: usize = 65_507;
/// A GRO receive returns up to 64 KB of coalesced datagrams.
const GRO_BUFFER_BYTES: usize = 65_536;

/// A path's socket.
pub struct PathSocket {
    sock: UdpSocket,
    state: UdpSocketState,
    pub local: SocketAddr,
    /// The path's name, for logs.
    name: String,
}

impl PathSocket {
    /// Opens path `index`'s socket as `cfg` says: bound to its device (SO_BINDTODEVICE), then
    /// to its address, non-blocking, with large buffers.
    pub fn open(index: usize, cfg: &PathConfig) -> Result<PathSocket, PathError> {
        let sock_err = |source| PathError::Socket { index, source };
        let socket = Socket::new(Domain::for_address(cfg.bind), Type::DGRAM, Some(Protocol::UDP))
            .map_err(sock_err)?;
        bind_to_path(&socket, index, cfg.bind, cfg.device.as_deref(), cfg.fwmark)?;
        socket.set_send_buffer_size(SOCKET_BUFFER_BYTES).map_err(sock_err)?;
        socket.set_recv_buffer_size(SOCKET_BUFFER_BYTES).map_err(sock_err)?;
        force_buffers(&socket);
        let sock: UdpSocket = socket.into();
        let state = UdpSocketState::new(UdpSockRef::from(&sock)).map_err(sock_err)?;
        sock.set_nonblocking(true).map_err(sock_err)?;
        let local = sock.local_addr().map_err(sock_err)?;
        Ok(PathSocket { sock, state, local, name: cfg.name.clone() })
    }

    /// Most datagrams one GSO send may carry (1 when the kernel lacks UDP GSO).
    pub fn max_gso_segments(&self) -> usize {
        self.state.max_gso_segments()
    }

    /// Receives what is queued, in one batched call; calls `f(source, datagram)` for each
    /// datagram (GRO-coalesced buffers are split at their stride). Returns the number of
    /// datagrams, 0 when nothing was waiting.
    pub fn recv_batch(
        &self,
        batch: &mut RecvBatch,
        mut f: impl FnMut(SocketAddr, &mut [u8]),
    ) -> io::Result<usize> {
        let mut slices: [IoSliceMut<'_>; BATCH_SIZE] = {
            let mut it = batch.bufs.iter_mut();
            std::array::from_fn(|_| IoSliceMut::new(it.next().expect("BATCH_SIZE buffers")))
        };
        let n = match self.state.recv(UdpSockRef::from(&self.sock), &mut slices, &mut batch.meta) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(0),
            Err(e) => return Err(e),
        };
        let mut datagrams = 0;
        for (slice, meta) in slices.iter_mut().zip(&batch.meta).take(n) {
            let stride = meta.stride.max(1);
            for d in slice[..meta.len].chunks_mut(stride) {
                f(meta.addr, d);
                datagrams += 1;
            }
        }
        Ok(datagrams)
    }

    /// Sends `contents` to `dest`: one datagram, or a GSO train of `segment_size` datagrams.
    pub fn send(
        &self,
        dest: SocketAddr,
        contents: &[u8],
        segment_size: Option<usize>,
    ) -> io::Result<()> {
        let t = Transmit { destination: dest, ecn: None, contents, segment_size, src_ip: None };
        self.state.try_send(UdpSockRef::from(&self.sock), &t)
    }

    pub fn raw_fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }
}

/// SO_SNDBUFFORCE / SO_RCVBUFFORCE: with CAP_NET_ADMIN, buffers beyond the sysctl maxima.
/// Best effort: without the capability the plain sizes set before stay.
fn force_buffers(socket: &Socket) {
    let size = SOCKET_BUFFER_BYTES as libc::c_int;
    for opt in [libc::SO_SNDBUFFORCE, libc::SO_RCVBUFFORCE] {
        // SAFETY: a valid socket descriptor, an int option and its exact size.
        unsafe {
            libc::setsockopt(
                socket.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
}

/// Receive buffers for one batched call, reused across calls.
pub struct RecvBatch {
    bufs: Vec<Vec<u8>>,
    meta: [RecvMeta; BATCH_SIZE],
}

impl Default for RecvBatch {
    fn default() -> Self {
        RecvBatch {
            bufs: (0..BATCH_SIZE).map(|_| vec![0u8; GRO_BUFFER_BYTES]).collect(),
            meta: [RecvMeta::default(); BATCH_SIZE],
        }
    }
}

/// Datagrams for one path gathered into GSO trains.
pub struct SendTrain {
    buf: Vec<u8>,
    dest: Option<SocketAddr>,
    segment: usize,
    count: usize,
    max_segments: usize,
    /// The last datagram was shorter than the segment size: the train is closed.
    closed: bool,
}

impl SendTrain {
    pub fn new(max_segments: usize, max_datagram: usize) -> SendTrain {
        let max_segments = max_segments.clamp(1, 64);
        SendTrain {
            buf: Vec::with_capacity((max_segments * max_datagram).min(MAX_TRAIN_BYTES)),
            dest: None,
            segment: 0,
            count: 0,
            max_segments,
            closed: false,
        }
    }

    /// Whether a datagram of `len` bytes to `dest` can join the train.
    fn fits(&self, dest: SocketAddr, len: usize) -> bool {
        self.count == 0
            || (self.dest == Some(dest)
                && !self.closed
                && self.count < self.max_segments
                && len <= self.segment
                && self.buf.len() + len <= MAX_TRAIN_BYTES)
    }

    /// Appends a datagram of at most `len` bytes to `dest`, written by `fill` into the slice
    /// it is given and returning the bytes it wrote (0: nothing to send); sends the train
    /// first through `sock` if the datagram cannot join it.
    pub fn push(
        &mut self,
        sock: &PathSocket,
        dest: SocketAddr,
        len: usize,
        fill: impl FnOnce(&mut [u8]) -> usize,
    ) -> io::Result<()> {
        let mut result = Ok(());
        if !self.fits(dest, len) {
            result = self.flush(sock);
        }
        let start = self.buf.len();
        self.buf.resize(start + len, 0);
        let written = fill(&mut self.buf[start..]);
        self.buf.truncate(start + written);
        if written == 0 {
            // Nothing to send (the frame could not be built or sealed).
            return result;
        }
        if self.count == 0 {
            self.dest = Some(dest);
            self.segment = written;
        } else if written < self.segment {
            self.closed = true;
        }
        self.count += 1;
        result
    }

    /// Sends the train. A full socket buffer drops it (counted by the caller as a local
    /// drop), as a full NIC queue would.
    pub fn flush(&mut self, sock: &PathSocket) -> io::Result<()> {
        let Some(dest) = self.dest.filter(|_| self.count > 0) else { return Ok(()) };
        let segment = (self.count > 1).then_some(self.segment);
        let result = sock.send(dest, &self.buf, segment);
        self.buf.clear();
        self.count = 0;
        self.closed = false;
        self.dest = None;
        result
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// The UDP transport: every path's socket and send train, and the receive buffers.
pub struct UdpPaths {
    socks: Vec<PathSocket>,
    trains: Vec<SendTrain>,
    recv: RecvBatch,
}

impl UdpPaths {
    /// Opens a socket per path of `cfg`, with trains for datagrams of up to `max_datagram`
    /// bytes.
    pub fn open(cfg: &DaemonConfig, max_datagram: usize) -> Result<UdpPaths, PathError> {
        let socks = cfg
            .paths
            .iter()
            .enumerate()
            .map(|(i, p)| PathSocket::open(i, p))
            .collect::<Result<Vec<_>, _>>()?;
        let trains =
            socks.iter().map(|s| SendTrain::new(s.max_gso_segments(), max_datagram)).collect();
        Ok(UdpPaths { socks, trains, recv: RecvBatch::default() })
    }

    /// One `POLLIN` entry per path, in path order.
    pub fn poll_fds(&self, out: &mut Vec<libc::pollfd>) {
        out.extend(self.socks.iter().map(|s| libc::pollfd {
            fd: s.raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }));
    }

    /// Reads every path whose entry in `ready` (as [`UdpPaths::poll_fds`] laid them out) has
    /// an event, in bounded batches; calls `f(path, source, datagram)` for each datagram.
    pub fn read(
        &mut self,
        ready: &[libc::pollfd],
        mut f: impl FnMut(usize, SocketAddr, &mut [u8]),
    ) {
        for (i, sock) in self.socks.iter().enumerate() {
            if ready.get(i).is_none_or(|p| p.revents == 0) {
                continue;
            }
            for _ in 0..READ_BUDGET {
                match sock.recv_batch(&mut self.recv, |src, d| f(i, src, d)) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(path = %sock.name, error = %e, "receive failed");
                        break;
                    }
                }
            }
        }
    }

    /// Sends one datagram on path `i` at once.
    pub fn send_to(&self, i: usize, dest: SocketAddr, datagram: &[u8]) -> io::Result<()> {
        self.socks[i].send(dest, datagram, None)
    }

    /// Queues a datagram of at most `len` bytes, written by `fill`, on path `i`'s train.
    pub fn push(
        &mut self,
        i: usize,
        dest: SocketAddr,
        len: usize,
        fill: impl FnOnce(&mut [u8]) -> usize,
    ) -> io::Result<()> {
        self.trains[i].push(&self.socks[i], dest, len, fill)
    }

    /// Sends every path's train; calls `dropped(path)` for a train the socket refused.
    pub fn flush(&mut self, mut dropped: impl FnMut(usize)) {
        for (i, train) in self.trains.iter_mut().enumerate() {
            if train.flush(&self.socks[i]).is_err() {
                dropped(i);
            }
        }
    }
}
