//! What every path socket needs, whatever its transport (UDP in `udp`, kernel TCP in
//! `tcp_path`): binding to the path's device and address, the errors of setting a path's socket
//! up, and the read budget of one wake-up. A leaf module: it imports nothing from the rest of
//! braid-net.

use std::io;
use std::net::SocketAddr;

use socket2::Socket;

/// Batches read from one descriptor per wake-up before the others get their turn.
pub const READ_BUDGET: usize = 8;

/// Why a path's socket could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("path.{index}.device: interface {device:?} does not exist")]
    NoSuchDevice { index: usize, device: String },
    #[error("path.{index}.device: binding to {device:?}: {source}")]
    Device { index: usize, device: String, source: io::Error },
    #[error("path.{index}.bind: cannot bind {addr}: {source}")]
    Bind { index: usize, addr: SocketAddr, source: io::Error },
    #[error("path.{index}: socket set-up: {source}")]
    Socket { index: usize, source: io::Error },
}

/// Marks `socket` with `fwmark` (SO_MARK: the tunnel's own routes skip it, see `routing.rs`),
/// if given, binds it to path `index`'s `device` (SO_BINDTODEVICE), if it names one, then to
/// its `bind` address.
pub fn bind_to_path(
    socket: &Socket,
    index: usize,
    bind: SocketAddr,
    device: Option<&str>,
    fwmark: Option<u32>,
) -> Result<(), PathError> {
    if let Some(mark) = fwmark {
        socket.set_mark(mark).map_err(|source| PathError::Socket { index, source })?;
    }
    if let Some(device) = device {
        socket.bind_device(Some(device.as_bytes())).map_err(|source| {
            if source.raw_os_error() == Some(libc::ENODEV) {
                PathError::NoSuchDevice { index, device: device.to_string() }
            } else {
                PathError::Device { index, device: device.to_string(), source }
            }
        })?;
    }
    socket.bind(&bind.into()).map_err(|source| PathError::Bind { index, addr: bind, source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use socket2::{Domain, Type};

    #[test]
    fn a_missing_device_and_a_taken_address_name_the_path() {
        let sock = |_| Socket::new(Domain::IPV4, Type::DGRAM, None).unwrap();
        let first = sock(());
        bind_to_path(&first, 0, "127.0.0.1:0".parse().unwrap(), None, None).unwrap();
        let taken = first.local_addr().unwrap().as_socket().unwrap();
        let err = bind_to_path(&sock(()), 1, taken, None, None).unwrap_err();
        assert!(matches!(err, PathError::Bind { index: 1, .. }), "{err}");
        // Without CAP_NET_RAW binding to any device fails (EPERM); with it, a missing one is
        // ENODEV. Either way the error names the path's device.
        let err =
            bind_to_path(&sock(()), 2, "127.0.0.1:0".parse().unwrap(), Some("nosuchdev0"), None)
                .unwrap_err();
        assert!(err.to_string().starts_with("path.2.device: "), "{err}");
    }
}
