//! Turning segmentation and receive offloads off, with the `SIOCETHTOOL` ioctl, as
//! `ethtool -K IF tso off gso off gro off` does (no ethtool binary needed).
//!
//! With TSO or GSO on, a sender hands a veth 64 KB super-frames that cross to the peer whole;
//! with GRO on, a receiving device merges frames before the packet taps see them. Either way a
//! queue that counts packets would count super-frames (DESIGN.md section 7). The emulator turns
//! all three off on its own two interfaces, reads them back, and refuses to run if any is still
//! on. The devices sending into it (the other ends of the veths) need TSO and GSO off too: the
//! emulator cannot reach them, so it counts their super-frames as `drops_oversize` and says so.
//!
//! # Source
//! The legacy per-feature commands of `include/uapi/linux/ethtool.h` (`ETHTOOL_{G,S}TSO`,
//! `ETHTOOL_{G,S}GSO`, `ETHTOOL_{G,S}GRO`, each taking a `struct ethtool_value`), which
//! `net/ethtool/ioctl.c` (`ethtool_set_one_feature`) maps onto the feature bits `NETIF_F_ALL_TSO`,
//! `NETIF_F_GSO` and `NETIF_F_GRO`. A device without the feature answers the get with
//! `EOPNOTSUPP`: it is off.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `include/uapi/linux/sockios.h`.
const SIOCETHTOOL: libc::c_ulong = 0x8946;
const ETHTOOL_GTSO: u32 = 0x1e;
const ETHTOOL_STSO: u32 = 0x1f;
const ETHTOOL_GGSO: u32 = 0x23;
const ETHTOOL_SGSO: u32 = 0x24;
const ETHTOOL_GGRO: u32 = 0x2b;
const ETHTOOL_SGRO: u32 = 0x2c;

/// `struct ethtool_value`.
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// An offload the emulator needs off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offload {
    /// TCP segmentation offload.
    Tso,
    /// Generic segmentation offload.
    Gso,
    /// Generic receive offload.
    Gro,
}

impl Offload {
    pub const ALL: [Offload; 3] = [Offload::Tso, Offload::Gso, Offload::Gro];

    /// The name `ethtool -K` uses.
    pub fn name(self) -> &'static str {
        match self {
            Offload::Tso => "tso",
            Offload::Gso => "gso",
            Offload::Gro => "gro",
        }
    }

    fn commands(self) -> (u32, u32) {
        match self {
            Offload::Tso => (ETHTOOL_GTSO, ETHTOOL_STSO),
            Offload::Gso => (ETHTOOL_GGSO, ETHTOOL_SGSO),
            Offload::Gro => (ETHTOOL_GGRO, ETHTOOL_SGRO),
        }
    }
}

/// Why offloads could not be turned off.
#[derive(Debug, thiserror::Error)]
pub enum OffloadError {
    #[error("interface {ifname:?}: {} is still on after turning it off; the emulator would count 64 KB super-frames as packets", offload.name())]
    StillOn { ifname: String, offload: Offload },
    #[error("interface {ifname:?}: cannot {action} {}: {error}", offload.name())]
    Ioctl { ifname: String, offload: Offload, action: &'static str, error: io::Error },
    #[error("opening a socket for ethtool ioctls: {0}")]
    Socket(io::Error),
}

/// A socket to address ioctls to devices of the current network namespace.
fn ioctl_socket() -> Result<OwnedFd, OffloadError> {
    // SAFETY: plain socket(2); the descriptor is owned on success.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(OffloadError::Socket(io::Error::last_os_error()));
    }
    // SAFETY: `fd` is a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// An `ifreq` naming `ifname`, its data pointing at `value`.
fn ifreq_for(ifname: &str, value: &mut EthtoolValue) -> libc::ifreq {
    // SAFETY: ifreq is plain old data; all zeroes is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, &src) in
        req.ifr_name.iter_mut().zip(ifname.as_bytes().iter().take(libc::IFNAMSIZ - 1))
    {
        *dst = src as libc::c_char;
    }
    req.ifr_ifru.ifru_data = (value as *mut EthtoolValue).cast();
    req
}

fn ethtool(fd: &OwnedFd, ifname: &str, cmd: u32, data: u32) -> io::Result<u32> {
    let mut value = EthtoolValue { cmd, data };
    let mut req = ifreq_for(ifname, &mut value);
    // SAFETY: SIOCETHTOOL reads the name and the ethtool_value `req` points at, both alive
    // for the call.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), SIOCETHTOOL as _, &mut req) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(value.data)
}

/// Whether `offload` is on for `ifname` (a device that does not support it has it off).
pub fn is_on(ifname: &str, offload: Offload) -> Result<bool, OffloadError> {
    let fd = ioctl_socket()?;
    get(&fd, ifname, offload)
}

fn get(fd: &OwnedFd, ifname: &str, offload: Offload) -> Result<bool, OffloadError> {
    match ethtool(fd, ifname, offload.commands().0, 0) {
        Ok(data) => Ok(data != 0),
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => Ok(false),
        Err(error) => {
            Err(OffloadError::Ioctl { ifname: ifname.into(), offload, action: "read", error })
        }
    }
}

/// Turns TSO, GSO and GRO off on `ifname` (in the current network namespace) and checks that
/// they are off.
pub fn disable_offloads(ifname: &str) -> Result<(), OffloadError> {
    let fd = ioctl_socket()?;
    for offload in Offload::ALL {
        if !get(&fd, ifname, offload)? {
            continue;
        }
        if let Err(error) = ethtool(&fd, ifname, offload.commands().1, 0) {
            let ifname = ifname.into();
            return Err(OffloadError::Ioctl { ifname, offload, action: "turn off", error });
        }
        if get(&fd, ifname, offload)? {
            return Err(OffloadError::StillOn { ifname: ifname.into(), offload });
        }
    }
    Ok(())
}
