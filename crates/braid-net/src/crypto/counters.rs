//! What a security session and the handshake gate in front of it count, for metrics: one
//! struct both fill (a server's gate counts what it refused before any peer's session saw it).

/// Event counts for metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionCounters {
    /// Initiations produced by [`Session::poll_handshake`](super::Session::poll_handshake) (first tries and retries).
    pub initiations_sent: u64,
    /// Handshakes whose keys came into use (initiator: response read; responder: confirmed).
    pub handshakes_completed: u64,
    /// Handshake messages that failed to authenticate or came from another static key.
    pub handshake_failures: u64,
    /// Initiations refused because their timestamp was not newer.
    pub replayed_initiations: u64,
    /// Copies of the last accepted initiation (one per path) answered from the cache.
    pub duplicate_initiations: u64,
    /// Transport datagrams whose tag did not verify.
    pub bad_macs: u64,
    /// Transport datagrams refused by the replay window (duplicate or too old).
    pub replays: u64,
    /// Datagrams naming keys we do not hold (expired, from before a restart, or foreign).
    pub unknown_index: u64,
    /// Handshake messages whose `mac1` was wrong (not made for our public key): dropped before
    /// any other work.
    pub bad_mac1: u64,
    /// (Responder) cookie replies sent instead of handshakes, under load.
    pub cookie_replies: u64,
    /// (Initiator) cookies received.
    pub cookies_received: u64,
    /// (Responder) initiations refused by the per-source or global limits on handshakes and
    /// cookie replies.
    pub rate_limited: u64,
    /// Transport datagrams that arrived on another path than the one they name.
    pub wrong_path: u64,
}
