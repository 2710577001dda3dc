//! Address validation of a server's paths: an authenticated datagram from an address that is
//! not a path's remote does not move the path there. The server challenges the new address
//! with a probe request (its token the probe's timestamp), and only an authenticated probe
//! response from that address echoing the token makes it the path's remote; until then the
//! server sends the address nothing but challenges, and at most three times the bytes it has
//! received from it. This is QUIC's path validation (RFC 9000 section 8.2, PATH_CHALLENGE and
//! PATH_RESPONSE) with its anti-amplification limit (section 8.1: three times the bytes
//! received), on Braid's own probe frames: the challenge is sealed in the session, so only the
//! peer can read the token and answer it, and the response must arrive from the address itself.
//!
//! What it stops: a copy of a genuine datagram re-sent from a spoofed address (to the same
//! path's port or another path's) arrives before or after the genuine one; the replay window
//! lets only the first copy through, and that copy can no longer redirect the path's downlink
//! to a third party or make the server reflect traffic at it. What it costs: one round trip
//! before a rebinding client (a NAT's new mapping) gets its downlink back.
//!
//! Sans-I/O: the daemon reports what arrived and sends the challenges it is told to.

use std::net::SocketAddr;
use std::time::Duration;

use braid_core::Instant;

/// The most a server sends an address it has not validated, per byte received from it.
pub const AMPLIFICATION_LIMIT: u64 = 3;
/// How soon a challenge may be repeated for the same address (a challenge or its response can
/// be lost): the liveness probe interval's order.
pub const RECHALLENGE_AFTER: Duration = Duration::from_millis(100);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Candidate {
    addr: SocketAddr,
    token: u64,
    received: u64,
    sent: u64,
    last_challenge: Option<Instant>,
}

/// The candidate addresses of every path of a server.
#[derive(Clone, Debug)]
pub struct PathValidation {
    /// Bytes a challenge costs on the wire (outer headers, envelope, probe frame).
    challenge_bytes: u64,
    candidates: Vec<Option<Candidate>>,
}

impl PathValidation {
    pub fn new(paths: usize, challenge_bytes: u64) -> PathValidation {
        PathValidation { challenge_bytes, candidates: vec![None; paths] }
    }

    /// An authenticated datagram of `len` bytes arrived on path `i` from `addr`, which is not
    /// the path's remote. Returns the token of a challenge to send `addr` now, if one is due
    /// and the amplification limit allows it. A new address replaces an older candidate.
    pub fn on_unvalidated(
        &mut self,
        now: Instant,
        i: usize,
        addr: SocketAddr,
        len: u64,
    ) -> Option<u64> {
        let slot = self.candidates.get_mut(i)?;
        let c = match slot {
            Some(c) if c.addr == addr => c,
            _ => slot.insert(Candidate {
                addr,
                token: now.as_nanos(),
                received: 0,
                sent: 0,
                last_challenge: None,
            }),
        };
        c.received += len;
        let due = c.last_challenge.is_none_or(|t| now.saturating_since(t) >= RECHALLENGE_AFTER);
        let allowed = c.sent + self.challenge_bytes <= AMPLIFICATION_LIMIT * c.received;
        if !(due && allowed) {
            return None;
        }
        c.sent += self.challenge_bytes;
        c.last_challenge = Some(now);
        // A fresh token per challenge: the timestamp of this one (it doubles as an RTT sample).
        c.token = now.as_nanos();
        Some(c.token)
    }

    /// An authenticated probe response echoing `token` arrived on path `i` from `addr`:
    /// whether it validates `addr` (it is the path's candidate and the token is its latest
    /// challenge's). A validated candidate is forgotten: the caller makes it the remote.
    pub fn on_response(&mut self, i: usize, addr: SocketAddr, token: u64) -> bool {
        let Some(slot) = self.candidates.get_mut(i) else { return false };
        if slot.is_some_and(|c| c.addr == addr && c.token == token && c.last_challenge.is_some()) {
            *slot = None;
            return true;
        }
        false
    }

    /// Bytes sent to and received from path `i`'s candidate, if it has one.
    pub fn candidate_bytes(&self, i: usize) -> Option<(u64, u64)> {
        self.candidates.get(i).copied().flatten().map(|c| (c.sent, c.received))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Instant {
        Instant::from_nanos(v * 1_000_000)
    }

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 9], port))
    }

    /// RFC 9000 section 8.1: never more than three times what was received, however many
    /// datagrams arrive and however much time passes.
    #[test]
    fn challenges_stay_within_three_times_the_bytes_received() {
        let mut v = PathValidation::new(2, 80);
        let mut sent = 0;
        for k in 0..50 {
            if v.on_unvalidated(ms(200 * k), 0, addr(1), 30).is_some() {
                sent += 80;
            }
            let (s, r) = v.candidate_bytes(0).unwrap();
            assert_eq!(s, sent);
            assert!(s <= 3 * r, "sent {s} for {r} received");
        }
        // 50 x 30 = 1500 bytes received allow 4500: 56 challenges' worth, but one per arrival.
        assert!(sent >= 80 * 40, "challenges kept going as data came in: {sent}");
        // Too little received for one challenge: none.
        let mut v = PathValidation::new(1, 80);
        assert_eq!(v.on_unvalidated(ms(0), 0, addr(1), 20), None);
        assert!(v.on_unvalidated(ms(1), 0, addr(1), 20).is_some(), "40 bytes allow 120");
    }

    #[test]
    fn a_challenge_repeats_only_after_the_rechallenge_interval() {
        let mut v = PathValidation::new(1, 10);
        assert!(v.on_unvalidated(ms(0), 0, addr(1), 100).is_some());
        assert_eq!(v.on_unvalidated(ms(50), 0, addr(1), 100), None);
        assert!(v.on_unvalidated(ms(100), 0, addr(1), 100).is_some());
    }

    #[test]
    fn only_the_latest_token_from_the_candidate_on_its_path_validates() {
        let mut v = PathValidation::new(2, 10);
        let first = v.on_unvalidated(ms(0), 0, addr(1), 100).unwrap();
        let latest = v.on_unvalidated(ms(150), 0, addr(1), 100).unwrap();
        assert_ne!(first, latest);
        assert!(!v.on_response(0, addr(1), first), "a stale token");
        assert!(!v.on_response(0, addr(2), latest), "another address");
        assert!(!v.on_response(1, addr(1), latest), "another path");
        assert!(v.on_response(0, addr(1), latest));
        assert!(!v.on_response(0, addr(1), latest), "validated once; the candidate is gone");
        assert_eq!(v.candidate_bytes(0), None);
    }

    #[test]
    fn a_new_address_replaces_the_candidate_and_starts_its_own_budget() {
        let mut v = PathValidation::new(1, 10);
        let old = v.on_unvalidated(ms(0), 0, addr(1), 100).unwrap();
        assert!(v.on_unvalidated(ms(1), 0, addr(2), 100).is_some());
        assert_eq!(v.candidate_bytes(0), Some((10, 100)));
        assert!(!v.on_response(0, addr(1), old), "the replaced candidate no longer validates");
        // An unknown path index is ignored.
        assert_eq!(v.on_unvalidated(ms(2), 5, addr(1), 100), None);
    }
}
