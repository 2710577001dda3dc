//! `braid linkem`: a user-space link emulator for kernels without `tc netem` (docs/design.md
//! section 7). A layer-2 bridge between two interfaces that passes every Ethernet frame, in each
//! direction, through an emulated link: random loss, a FIFO bounded in packets (drop-tail or
//! CoDel), a rate (or a Mahimahi trace) and a propagation delay.
//!
//! # Layers
//! - Pure, no I/O, unit-tested without root: [`config`] (what to emulate, validation),
//!   [`units`] (`50mbit`, `10ms`), [`link`] (the emulated link, which *is* the simulator's
//!   [`braid_sim::link::Link`] driven by wall-clock time, so CoDel, loss, traces, framing and
//!   FIFO accounting are the same code in `braid sim` and in the emulator), [`pool`] (frame
//!   slots), [`wakeup`] (learned timer lateness), [`stats`].
//! - I/O: [`clock`] (monotonic time, kernel timestamps), [`packet_socket`] (`AF_PACKET`),
//!   [`forwarder`] (one thread per direction); offloads off with [`crate::offload`].
//!
//! # Use
//! ```no_run
//! # fn main() -> Result<(), braid_lab::linkem::LinkemError> {
//! use braid_lab::linkem::{DirectionConfig, Linkem, LinkemConfig, Rate};
//! let link = DirectionConfig {
//!     rate: Rate::BitsPerS(50_000_000),
//!     delay: std::time::Duration::from_millis(10),
//!     ..DirectionConfig::default()
//! };
//! let config = LinkemConfig {
//!     if_a: "veth-a".into(),
//!     if_b: "veth-b".into(),
//!     ab: link.clone(),
//!     ba: link,
//!     seed: 1,
//! };
//! let linkem = Linkem::start(&config)?; // sockets bound, threads running
//! // ... traffic ...
//! let stats = linkem.stop();
//! println!("{}", serde_json::to_string(&stats).unwrap());
//! # Ok(()) }
//! ```
//! Everything runs in the network namespace of the thread that calls [`Linkem::start`].

pub mod clock;
pub mod config;
pub mod forwarder;
pub mod link;
pub mod packet_socket;
pub mod pool;
pub mod stats;
pub mod units;
pub mod wakeup;

use std::sync::Arc;
use std::thread::JoinHandle;

pub use crate::offload::{disable_offloads, OffloadError};
pub use config::{
    AqmConfig, ConfigError, Direction, DirectionConfig, FieldError, LinkemConfig, Rate,
};
pub use link::{Admission, EmulatedLink, FrameId};
pub use packet_socket::{PacketSocket, SocketError};
pub use stats::{DirectionStats, LinkemStats};

use clock::Clock;
use forwarder::{Forwarder, Stop};
use pool::FramePool;

/// Virtio-net header, Ethernet header and one VLAN tag: a slot holds an MTU-sized packet in a
/// tagged frame as the packet socket reads it.
const FRAME_OVERHEAD_BYTES: usize = packet_socket::VNET_HDR_BYTES + 14 + 4;
/// Slots allocated beyond the buffer at start (frame in service and a first delay line); the
/// pool doubles when a longer delay line needs more.
const INITIAL_EXTRA_SLOTS: usize = 256;
/// Initial slots at most, per direction, whatever the buffer: later growth is on demand.
const MAX_INITIAL_SLOTS: usize = 8192;

/// Why the emulator could not start.
#[derive(Debug, thiserror::Error)]
pub enum LinkemError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Offload(#[from] OffloadError),
    #[error(transparent)]
    Socket(#[from] SocketError),
    #[error("{what}: {error}")]
    Io { what: &'static str, error: std::io::Error },
}

/// The running emulator: two forwarding threads.
pub struct Linkem {
    stop: Arc<Stop>,
    ab: JoinHandle<DirectionStats>,
    ba: JoinHandle<DirectionStats>,
}

impl Linkem {
    /// Validates `config`, binds a packet socket on each interface, turns their offloads off
    /// and starts one forwarding thread per direction. When this returns, frames are being
    /// read on both sides.
    pub fn start(config: &LinkemConfig) -> Result<Linkem, LinkemError> {
        config.validate()?;
        let a = Arc::new(PacketSocket::open(&config.if_a)?);
        let b = Arc::new(PacketSocket::open(&config.if_b)?);
        disable_offloads(&config.if_a)?;
        disable_offloads(&config.if_b)?;
        let stop =
            Arc::new(Stop::new().map_err(|error| LinkemError::Io { what: "eventfd", error })?);
        let clock = Clock::start();
        let slot_bytes = a.mtu().max(b.mtu()) as usize + FRAME_OVERHEAD_BYTES;
        let spawn = |direction: Direction,
                     rx: &Arc<PacketSocket>,
                     tx: &Arc<PacketSocket>,
                     link: &DirectionConfig| {
            let slots = (link.buffer_pkts + INITIAL_EXTRA_SLOTS).min(MAX_INITIAL_SLOTS);
            let forwarder = Forwarder::new(
                direction,
                Arc::clone(rx),
                Arc::clone(tx),
                EmulatedLink::new(link, config.direction_seed(direction)),
                FramePool::new(slot_bytes, slots),
                clock,
                Arc::clone(&stop),
            );
            std::thread::Builder::new()
                .name(format!("linkem-{direction}"))
                .spawn(move || forwarder.run())
                .map_err(|error| LinkemError::Io { what: "spawning a forwarding thread", error })
        };
        let ab = spawn(Direction::AToB, &a, &b, &config.ab)?;
        let ba = match spawn(Direction::BToA, &b, &a, &config.ba) {
            Ok(ba) => ba,
            Err(e) => {
                stop.request();
                let _ = ab.join();
                return Err(e);
            }
        };
        Ok(Linkem { stop, ab, ba })
    }

    /// Whether a forwarding thread has ended without being asked to (it panicked).
    pub fn is_finished(&self) -> bool {
        self.ab.is_finished() || self.ba.is_finished()
    }

    /// Stops both threads and returns their counters; frames still on the link are discarded
    /// (counted as `in_flight_at_exit`). A thread that panicked reports zeroes.
    pub fn stop(self) -> LinkemStats {
        self.stop.request();
        LinkemStats {
            ab: self.ab.join().unwrap_or_default(),
            ba: self.ba.join().unwrap_or_default(),
        }
    }
}
