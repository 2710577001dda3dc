//! An `AF_PACKET` raw socket on one interface: reads every Ethernet frame arriving there with
//! the kernel's receive timestamp, and sends whole frames out of it (packet(7)).
//!
//! # Set-up, in this order
//! 1. `socket(AF_PACKET, SOCK_RAW, 0)`: protocol 0 receives nothing until bound, so no frame of
//!    another interface slips in between `socket` and `bind`.
//! 2. `PACKET_IGNORE_OUTGOING` (Linux 4.20): the frames this socket and the other direction send
//!    out of the interface are not read back. Frames marked `PACKET_OUTGOING` are skipped as
//!    well, for older kernels.
//! 3. `PACKET_VNET_HDR`: every frame read comes after a `struct virtio_net_hdr`
//!    ([`VNET_HDR_BYTES`]) and every frame sent is preceded by one. A veth hands its peer
//!    frames whose checksum is still to be filled in (`CHECKSUM_PARTIAL`, the sender's
//!    checksum offload); read raw and sent raw they would reach the far host with a wrong
//!    checksum and be dropped. The header carries the "checksum needed" mark and its offsets
//!    from the receive to the send, so the kernel completes (or passes on) the checksum, as it
//!    does for a TAP device.
//! 4. `SO_TIMESTAMPNS`: each frame carries the time the kernel received it, so the emulator's
//!    own wake-up delay does not count as link delay (docs/design.md section 7).
//! 5. Receive and send buffers of [`SOCKET_BUFFER_BYTES`] (`SO_RCVBUFFORCE`, root may exceed
//!    `rmem_max`): a burst arriving while the thread spins towards a departure waits in the
//!    kernel instead of being dropped there.
//! 6. `bind` to the interface with `ETH_P_ALL`, then `PACKET_MR_PROMISC`, so frames addressed to
//!    the far side's MAC are read on real NICs too (veths deliver them anyway). The kernel
//!    undoes the membership when the socket closes.
//!
//! # Limits
//! Frames are read and written as the kernel presents them to taps: a VLAN tag a NIC stripped
//! on receive (`rx-vlan-offload`) is not put back. Veths and TUN-free test beds do not strip.

use std::ffi::CString;
use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::clock::timespec_ns;

/// `include/uapi/linux/if_packet.h` (Linux 4.20).
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
/// `include/uapi/linux/if_packet.h`.
const PACKET_VNET_HDR: libc::c_int = 15;
/// `struct virtio_net_hdr` (include/uapi/linux/virtio_net.h), before each frame read or sent.
pub const VNET_HDR_BYTES: usize = 10;
/// Kernel socket buffers for bursts: 4 MB is about 2700 full frames.
pub const SOCKET_BUFFER_BYTES: libc::c_int = 4 << 20;
/// A blocked send gives up after this long (the peer is not draining), and counts an error.
const SEND_TIMEOUT_MS: libc::suseconds_t = 100;

/// Why a packet socket could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    #[error("no interface named {0:?} in this network namespace")]
    NoSuchInterface(String),
    #[error("interface {ifname:?}: {op}: {error}")]
    Io { ifname: String, op: &'static str, error: io::Error },
}

/// One frame read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    /// Bytes read, the virtio-net header included; the whole record's real length (more than
    /// the buffer) when `truncated`.
    pub len: usize,
    /// The frame did not fit in the buffer.
    pub truncated: bool,
    /// The kernel's receive time, `CLOCK_REALTIME` ns.
    pub realtime_ns: Option<u64>,
}

/// A raw packet socket bound to one interface.
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
    ifname: String,
    mtu: u32,
}

fn setsockopt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, value: &T) -> io::Result<()> {
    // SAFETY: `value` points at a live T of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (value as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

impl PacketSocket {
    /// Opens and binds a packet socket on `ifname` in the current network namespace.
    pub fn open(ifname: &str) -> Result<Self, SocketError> {
        let io_err = |op| {
            let ifname = ifname.to_string();
            move |error| SocketError::Io { ifname, op, error }
        };
        let c_name =
            CString::new(ifname).map_err(|_| SocketError::NoSuchInterface(ifname.into()))?;
        // SAFETY: a NUL-terminated name.
        let ifindex = unsafe { libc::if_nametoindex(c_name.as_ptr()) };
        if ifindex == 0 {
            return Err(SocketError::NoSuchInterface(ifname.into()));
        }
        // SAFETY: plain socket(2); the descriptor is owned on success.
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(io_err("socket(AF_PACKET)")(io::Error::last_os_error()));
        }
        // SAFETY: `raw` is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let s = fd.as_raw_fd();
        let one: libc::c_int = 1;
        setsockopt(s, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, &one)
            .map_err(io_err("PACKET_IGNORE_OUTGOING"))?;
        setsockopt(s, libc::SOL_PACKET, PACKET_VNET_HDR, &one)
            .map_err(io_err("PACKET_VNET_HDR"))?;
        setsockopt(s, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, &one)
            .map_err(io_err("SO_TIMESTAMPNS"))?;
        setsockopt(s, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &SOCKET_BUFFER_BYTES)
            .map_err(io_err("SO_RCVBUFFORCE"))?;
        setsockopt(s, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &SOCKET_BUFFER_BYTES)
            .map_err(io_err("SO_SNDBUFFORCE"))?;
        let timeout = libc::timeval { tv_sec: 0, tv_usec: SEND_TIMEOUT_MS * 1000 };
        setsockopt(s, libc::SOL_SOCKET, libc::SO_SNDTIMEO, &timeout)
            .map_err(io_err("SO_SNDTIMEO"))?;

        // SAFETY: sockaddr_ll is plain old data; all zeroes is valid.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        addr.sll_ifindex = ifindex as libc::c_int;
        // SAFETY: `addr` is a valid sockaddr_ll of the length passed.
        let rc = unsafe {
            libc::bind(
                s,
                (&addr as *const libc::sockaddr_ll).cast(),
                size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(io_err("bind")(io::Error::last_os_error()));
        }
        // SAFETY: packet_mreq is plain old data.
        let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mreq.mr_ifindex = ifindex as libc::c_int;
        mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
        setsockopt(s, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)
            .map_err(io_err("PACKET_MR_PROMISC"))?;
        let mtu = interface_mtu(s, ifname).map_err(io_err("SIOCGIFMTU"))?;
        Ok(PacketSocket { fd, ifname: ifname.to_string(), mtu })
    }

    pub fn ifname(&self) -> &str {
        &self.ifname
    }

    /// The interface's MTU (IP bytes; a frame is 14 more).
    pub fn mtu(&self) -> u32 {
        self.mtu
    }

    pub fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Reads one frame, after its virtio-net header, into `buf` without blocking; `None` when
    /// nothing is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<Received>> {
        loop {
            // SAFETY: plain old data, zero-initialised.
            let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            // Room for one SCM_TIMESTAMPNS control message (16 + 16 bytes), 8-byte aligned.
            let mut control = [0u64; 8];
            let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
            // SAFETY: msghdr is plain old data; the fields set point at live buffers.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_name = (&mut addr as *mut libc::sockaddr_ll).cast();
            msg.msg_namelen = size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = size_of::<[u64; 8]>();
            // SAFETY: every pointer in `msg` is valid for the lengths given.
            let n = unsafe {
                libc::recvmsg(self.fd.as_raw_fd(), &mut msg, libc::MSG_DONTWAIT | libc::MSG_TRUNC)
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::WouldBlock => return Ok(None),
                    io::ErrorKind::Interrupted => continue,
                    _ => return Err(e),
                }
            }
            if addr.sll_pkttype == libc::PACKET_OUTGOING {
                continue;
            }
            let len = n as usize;
            let truncated = len > buf.len() || msg.msg_flags & libc::MSG_TRUNC != 0;
            return Ok(Some(Received { len, truncated, realtime_ns: receive_timestamp(&msg) }));
        }
    }

    /// Sends one whole Ethernet frame, after its virtio-net header (as [`PacketSocket::recv`]
    /// read it), out of the interface, blocking at most 100 ms when the socket's send buffer is
    /// full.
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        loop {
            // SAFETY: `frame` is valid for its length.
            let n =
                unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
            if n >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// The `SCM_TIMESTAMPNS` control message of a received frame, if any.
fn receive_timestamp(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: CMSG_FIRSTHDR / CMSG_NXTHDR walk the control buffer recvmsg filled, within
    // `msg_controllen`; CMSG_DATA of a SCM_TIMESTAMPNS message holds a timespec.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_TIMESTAMPNS
            {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast());
                return Some(timespec_ns(&ts));
            }
            cmsg = libc::CMSG_NXTHDR(msg, cmsg);
        }
    }
    None
}

/// The MTU of `ifname`, by `SIOCGIFMTU`.
fn interface_mtu(fd: RawFd, ifname: &str) -> io::Result<u32> {
    // SAFETY: ifreq is plain old data.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, &src) in
        req.ifr_name.iter_mut().zip(ifname.as_bytes().iter().take(libc::IFNAMSIZ - 1))
    {
        *dst = src as libc::c_char;
    }
    // SAFETY: SIOCGIFMTU reads the name and writes the MTU into `req`.
    let rc = unsafe { libc::ioctl(fd, libc::SIOCGIFMTU as _, &mut req) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel filled the MTU member of the union.
    Ok(unsafe { req.ifr_ifru.ifru_mtu }.max(0) as u32)
}
