//! The TUN device: created, addressed and brought up by the daemon, removed by the kernel when
//! the daemon's descriptor closes (it is never persistent), so no exit path leaves it behind.
//!
//! The device runs with virtio-net-hdr offload (tun-rs, after wireguard-go's `tun_linux.go`):
//! a read may return one TCP segment of up to 64 KB that the kernel did not split, which tun-rs
//! splits into MTU-sized packets; writes go through tun-rs's GRO table, which would coalesce
//! consecutive TCP segments of one flow into one large packet. It does not today: tun-rs merges
//! only into a buffer with room for the merged packet (`coalesce_tcp_packets`, `InsufficientCap`),
//! and the write buffers here hold one MTU, so every packet is written alone (a capture on the
//! UE's TUN in `braid lab` shows only MSS-sized segments). With 64 KB write buffers some
//! released bursts coalesce, but the bonding default's 300 MB lab downloads were unchanged
//! within their spread (2 runs each, Cubic and BBR), and coalesced writes would change the
//! client's ACK pattern the lab matrix was measured with, so the buffers stay MTU-sized. The
//! split reads cut the system calls per byte on the sending side.

use std::io;
use std::net::IpAddr;
use std::os::fd::{AsRawFd, RawFd};

use tun_rs::{DeviceBuilder, GROTable, SyncDevice, IDEAL_BATCH_SIZE};

use crate::config::IfAddr;

/// Bytes tun-rs needs in front of each packet it writes (the virtio-net header).
pub const TUN_OFFSET: usize = tun_rs::VIRTIO_NET_HDR_LEN;
/// Packets one batched read returns at most.
pub const TUN_BATCH: usize = IDEAL_BATCH_SIZE;

/// Why the TUN device could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TunError {
    #[error("creating TUN device {name}: {source} (needs CAP_NET_ADMIN and /dev/net/tun)")]
    Create { name: String, source: io::Error },
    #[error("adding address {addr} to {name}: {source}")]
    Address { name: String, addr: IfAddr, source: io::Error },
}

/// An up TUN device with its batch buffers.
pub struct Tun {
    dev: SyncDevice,
    /// One read's raw buffer: a virtio-net header and up to 64 KB of segment.
    raw: Vec<u8>,
    /// Packets split from one read.
    bufs: Vec<Vec<u8>>,
    sizes: Vec<usize>,
    /// Packets waiting for the next batched write, each with `TUN_OFFSET` bytes of headroom.
    out: Vec<Vec<u8>>,
    out_len: usize,
    gro: GROTable,
}

impl Tun {
    /// Creates device `name` with `mtu` and `addresses`, up, non-blocking.
    pub fn create(name: &str, mtu: u16, addresses: &[IfAddr]) -> Result<Tun, TunError> {
        let mut builder = DeviceBuilder::new().name(name).mtu(mtu).offload(true);
        for a in addresses {
            builder = match a.addr {
                IpAddr::V4(v4) => builder.ipv4(v4, a.prefix_len, None),
                IpAddr::V6(v6) => builder.ipv6(v6, a.prefix_len),
            };
        }
        let dev = builder
            .build_sync()
            .map_err(|source| TunError::Create { name: name.to_string(), source })?;
        dev.set_nonblocking(true)
            .map_err(|source| TunError::Create { name: name.to_string(), source })?;
        let slot = usize::from(mtu) + TUN_OFFSET;
        Ok(Tun {
            dev,
            raw: vec![0u8; TUN_OFFSET + 65_536],
            bufs: (0..TUN_BATCH).map(|_| vec![0u8; slot]).collect(),
            sizes: vec![0; TUN_BATCH],
            out: (0..TUN_BATCH).map(|_| Vec::with_capacity(slot)).collect(),
            out_len: 0,
            gro: GROTable::new(),
        })
    }

    /// Reads what the kernel has queued (one read, split into packets); calls `f` with each
    /// inner packet. Returns the number of packets, 0 when nothing was waiting.
    pub fn read_batch(&mut self, mut f: impl FnMut(&[u8])) -> io::Result<usize> {
        let n = match self.dev.recv_multiple(&mut self.raw, &mut self.bufs, &mut self.sizes, 0) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(0),
            Err(e) => return Err(e),
        };
        for (buf, &len) in self.bufs.iter().zip(&self.sizes).take(n) {
            f(&buf[..len]);
        }
        Ok(n)
    }

    /// Queues `packet` for the next [`Tun::flush`]; flushes first when the batch is full.
    pub fn queue_write(&mut self, packet: &[u8]) -> io::Result<()> {
        if self.out_len == self.out.len() {
            self.flush()?;
        }
        let b = &mut self.out[self.out_len];
        b.clear();
        b.resize(TUN_OFFSET, 0);
        b.extend_from_slice(packet);
        self.out_len += 1;
        Ok(())
    }

    /// Writes the queued packets, coalescing TCP segments of one flow. A packet the kernel
    /// refuses (a full device queue) is dropped, as a full NIC queue drops: the E2E transport
    /// recovers.
    pub fn flush(&mut self) -> io::Result<()> {
        if self.out_len == 0 {
            return Ok(());
        }
        let result =
            self.dev.send_multiple(&mut self.gro, &mut self.out[..self.out_len], TUN_OFFSET);
        self.out_len = 0;
        match result {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            Err(e) => Err(e),
        }
    }

    pub fn raw_fd(&self) -> RawFd {
        self.dev.as_raw_fd()
    }
}
