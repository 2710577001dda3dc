//! Braid's Linux data plane: the `braid tunnel` daemon.
//!
//! A TUN interface carries user traffic; each path is a UDP socket (or a kernel TCP connection,
//! `tcp_path`) bound to its own interface or source address; every datagram is one braid-core
//! frame sealed with keys from a Noise IKpsk2 handshake. The protocol logic (schedulers,
//! congestion control, reordering) is braid-core's, driven here by a poll loop on real sockets
//! and the monotonic clock.

pub mod config;
pub mod control;
pub mod crypto;
pub mod daemon;
pub mod framing;
pub mod history;
pub mod inner;
pub mod linux;
pub mod liveness;
pub mod metrics;
pub mod mss_clamp;
pub mod path_validation;
pub mod peer;
pub mod pool;
pub mod routing;
pub mod sender;
pub mod signal;
pub mod socket;
pub mod tcp_path;
pub mod transport;
pub mod tun;
pub mod udp;
