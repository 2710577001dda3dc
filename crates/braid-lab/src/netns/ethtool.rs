//! Segmentation offloads (TSO, GSO, GRO) on and off, through the legacy `SIOCETHTOOL` ioctl, so
//! the test bed needs no `ethtool` binary.
//!
//! Why: with offloads on, a veth carries 64 KB super-frames; a `pfifo limit 500` then holds 500
//! super-frames instead of 500 packets and htb's rate is right only on average (DESIGN.md
//! section 7). Turning them off makes every queue count real 1514-byte frames.
//!
//! Source: `include/uapi/linux/ethtool.h` (`struct ethtool_value`, `ETHTOOL_[GS]{TSO,GSO,GRO}`)
//! and `include/uapi/linux/sockios.h` (`SIOCETHTOOL`); `net/ethtool/ioctl.c` maps each legacy
//! command onto the feature flags (`ethtool_set_one_feature`). The ioctl acts on the interface
//! of that name in the calling thread's network namespace, so callers run it inside
//! [`super::Netns::run_in`].

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `SIOCETHTOOL` (sockios.h).
const SIOCETHTOOL: libc::c_ulong = 0x8946;
const ETHTOOL_GTSO: u32 = 0x1e;
const ETHTOOL_STSO: u32 = 0x1f;
const ETHTOOL_GGSO: u32 = 0x23;
const ETHTOOL_SGSO: u32 = 0x24;
const ETHTOOL_GGRO: u32 = 0x2b;
const ETHTOOL_SGRO: u32 = 0x2c;
/// `IFNAMSIZ` (if.h), including the terminating NUL.
const IFNAMSIZ: usize = 16;

/// `struct ethtool_value`: a command and one 32-bit value.
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// `struct ifreq` with the `ifr_data` member of its union (40 bytes on 64-bit Linux).
#[repr(C)]
struct IfreqData {
    name: [u8; IFNAMSIZ],
    data: *mut EthtoolValue,
    _pad: [u8; 16],
}

/// The three offloads the test bed cares about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offloads {
    pub tso: bool,
    pub gso: bool,
    pub gro: bool,
}

fn control_socket() -> io::Result<OwnedFd> {
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn ethtool_value(sock: &OwnedFd, ifname: &str, cmd: u32, data: u32) -> io::Result<u32> {
    let bytes = ifname.as_bytes();
    if bytes.is_empty() || bytes.len() >= IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("interface name {ifname:?} must have 1 to {} bytes", IFNAMSIZ - 1),
        ));
    }
    let mut value = EthtoolValue { cmd, data };
    let mut req = IfreqData { name: [0; IFNAMSIZ], data: &mut value, _pad: [0; 16] };
    req.name[..bytes.len()].copy_from_slice(bytes);
    let rc = unsafe { libc::ioctl(sock.as_raw_fd(), SIOCETHTOOL as _, &mut req) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(value.data)
}

/// Reads TSO, GSO and GRO of `ifname` in the calling thread's namespace.
pub fn offloads(ifname: &str) -> io::Result<Offloads> {
    let sock = control_socket()?;
    Ok(Offloads {
        tso: ethtool_value(&sock, ifname, ETHTOOL_GTSO, 0)? != 0,
        gso: ethtool_value(&sock, ifname, ETHTOOL_GGSO, 0)? != 0,
        gro: ethtool_value(&sock, ifname, ETHTOOL_GGRO, 0)? != 0,
    })
}

/// Turns TSO, GSO and GRO off on `ifname` in the calling thread's namespace and reads them back;
/// an offload the driver refuses to turn off is an error.
pub fn disable_offloads(ifname: &str) -> io::Result<()> {
    let sock = control_socket()?;
    for cmd in [ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO] {
        ethtool_value(&sock, ifname, cmd, 0)?;
    }
    let now = offloads(ifname)?;
    if now != (Offloads { tso: false, gso: false, gro: false }) {
        return Err(io::Error::other(format!(
            "offloads of {ifname} still on after SIOCETHTOOL: {now:?}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ifreq_has_the_kernel_size() {
        // struct ifreq is IFNAMSIZ (16) + a 24-byte union on 64-bit Linux.
        assert_eq!(std::mem::size_of::<IfreqData>(), 40);
        assert_eq!(std::mem::size_of::<EthtoolValue>(), 8);
    }

    #[test]
    fn overlong_interface_name_is_refused_before_the_ioctl() {
        let sock = control_socket().unwrap();
        let err = ethtool_value(&sock, "sixteen-chars-xx", ETHTOOL_GTSO, 0).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn unknown_interface_is_an_os_error() {
        let err = offloads("braid-nonexist").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENODEV));
    }
}
