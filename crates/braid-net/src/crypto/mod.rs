//! WireGuard-style security for a multipath tunnel: one peer, several paths, one session.
//!
//! Sans-I/O like braid-core: no sockets, no clock (time comes in as [`braid_core::Instant`], the
//! wall clock once at construction), allocation-free per transport packet. The daemon feeds every
//! received datagram, from whichever path, to [`Session::open`] and seals every outgoing frame
//! with [`Session::seal`]; one counter sequence and one replay window span all paths.
//!
//! - [`keys`]: static keys and the PSK, base64 like `wg genkey`.
//! - [`cipher`]: the AEAD, AES-256-GCM (default) or ChaCha20-Poly1305: Noise name, nonce, limits.
//! - [`envelope`]: the outer datagram format (initiation, response, cookie reply, transport),
//!   strict parser.
//! - [`compact`]: the compact transport message, 4 bytes of header for a data packet.
//! - [`cookie`]: WireGuard's `mac1`/`mac2` and cookie replies, checked before any DH.
//! - [`ratelimit`]: when the responder is under load; handshakes per source and in all.
//! - [`gate`]: the responder's checks before any DH, built from the two above.
//! - [`responder`]: a server's sessions for several peers behind one gate.
//! - [`path_table`]: the path names each handshake carries, and the path ids both ends derive.
//! - [`handshake`]: Noise_IKpsk2_25519_{AESGCM,ChaChaPoly}_BLAKE2s through snow, TAI64N
//!   timestamps.
//! - [`keypair`]: one pair of transport keys: ring's AEAD with counter nonces.
//! - [`replay`]: the RFC 6479 anti-replay window, sized for multipath reordering.
//! - [`session`]: the state machine: handshake timers, key rotation, expiry.
//!
//! The threat model is in docs/security.md.

pub mod cipher;
pub mod compact;
pub mod cookie;
pub mod counters;
pub mod envelope;
pub mod gate;
pub mod handshake;
pub mod keypair;
pub mod keys;
pub mod path_table;
pub mod ratelimit;
pub mod replay;
pub mod responder;
pub mod session;

use std::net::SocketAddr;

pub use cipher::{Cipher, UnknownCipher};
pub use envelope::{EnvelopeError, MessageKind, HEADER_LEN, TAG_LEN};
pub use keys::{generate_keypair, KeyError, PresharedKey, PrivateKey, PublicKey};
pub use path_table::{PathMap, PathTable, PathTableError};
pub use replay::ReplayError;
pub use responder::{PeerKeys, Responder};
pub use session::{Opened, Role, Session, SessionConfig, SessionCounters, REPLY_MAX};

/// Bytes a sealed datagram adds to its plaintext: the transport header and the tag.
pub const OVERHEAD: usize = HEADER_LEN + TAG_LEN;
/// Bytes a compact datagram adds to its inner packet: the compact header and the tag.
pub const COMPACT_OVERHEAD: usize = compact::COMPACT_HEADER_LEN + TAG_LEN;

/// Why a datagram was refused or could not be produced.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum CryptoError {
    #[error(transparent)]
    Envelope(#[from] EnvelopeError),
    #[error("buffer of {available} bytes cannot hold the {needed}-byte datagram")]
    BufferTooSmall { needed: usize, available: usize },
    #[error("no keys to send with: handshake not complete, or keys older than REJECT_AFTER_TIME")]
    NoSession,
    #[error("the send counter reached the cipher's message limit; a new handshake is needed")]
    CounterExhausted,
    #[error("no keys with receiver index {0:#010x} (stale or foreign datagram)")]
    UnknownIndex(u32),
    #[error("transport datagram failed authentication")]
    Authentication,
    #[error("transport counter {counter} refused: {reason}")]
    Replay { counter: u64, reason: ReplayError },
    #[error("handshake message refused: {0}")]
    Handshake(snow::Error),
    #[error("initiation from {0}, which is not the configured peer")]
    UnknownPeer(PublicKey),
    #[error("initiation timestamp not newer than the last accepted one (replayed initiation)")]
    ReplayedInitiation,
    #[error("handshake message with a wrong mac1: not made for this host's public key")]
    Mac1,
    #[error("initiation refused: over the handshake rate limit (per source address or in all)")]
    RateLimited,
    #[error("a transport datagram for path id {named} arrived on our path {arrived_on}")]
    WrongPath { named: u8, arrived_on: u8 },
    #[error("our path {0} has no path of its name at the peer")]
    UnmatchedPath(u8),
    #[error("the peer's path table is malformed: {0}")]
    PathTable(PathTableError),
    #[error("the OS random source failed")]
    Random,
    #[error("a {role} does not accept {kind} messages")]
    Unexpected { kind: MessageKind, role: Role },
    #[error("attempt {0} cannot be sealed compact (at most 3 retransmissions)")]
    CompactAttempt(u8),
    #[error("path sequence {path_seq} attempt {attempt} was sealed compact before (nonce reuse)")]
    CompactReuse { path_seq: u64, attempt: u8 },
    #[error("no keys with compact key phase {0}")]
    NoKeyPhase(u8),
    #[error("a compact datagram on our path {0}, which has no path of its name at the peer")]
    CompactUnmatchedPath(u8),
    #[error("a compact datagram from {0}, which is no peer's validated address on that path")]
    CompactUnknownSource(SocketAddr),
}
