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
/// How soon a first challenge may be repeated for the same address (a challenge or its
/// response can be lost): the liveness probe interval's order. Each unanswered challenge doubles
/// the interval, up to [`MAX_RECHALLENGE_AFTER`] (RFC 9000 section 8.2.1 paces challenges by
/// the path's PTO, which backs off the same way).
pub const RECHALLENGE_AFTER: Duration = Duration::from_millis(100);
/// The longest interval between two challenges to the same address.
pub const MAX_RECHALLENGE_AFTER: Duration = Duration::from_millis(800);
/// Challenges whose response still validates: the latest ones sent (RFC 9000 section 8.2.2: a
/// response must match *a* challenge sent, not only the last). A path whose round trip is longer
/// than the interval between challenges answers an earlier one than the latest; with the
/// backoff above, four outstanding tokens cover round trips of 1.5 s and more.
pub const OUTSTANDING_CHALLENGES: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Candidate {
    addr: SocketAddr,
    /// The latest challenges' tokens, newest first (0: none; a token is a nanosecond
    /// timestamp after the daemon's start, so never 0 for a challenge).
    tokens: [u64; OUTSTANDING_CHALLENGES],
    received: u64,
    sent: u64,
    last_challenge: Option<Instant>,
    /// Challenges sent without a valid response: the backoff's exponent.
    unanswered: u32,
}

impl Candidate {
    /// How long after the last challenge the next one may go.
    fn rechallenge_after(&self) -> Duration {
        let doubled =
            RECHALLENGE_AFTER.saturating_mul(1 << self.unanswered.saturating_sub(1).min(16));
        doubled.min(MAX_RECHALLENGE_AFTER)
    }
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
                tokens: [0; OUTSTANDING_CHALLENGES],
                received: 0,
                sent: 0,
                last_challenge: None,
                unanswered: 0,
            }),
        };
        c.received += len;
        let due = c.last_challenge.is_none_or(|t| now.saturating_since(t) >= c.rechallenge_after());
        let allowed = c.sent + self.challenge_bytes <= AMPLIFICATION_LIMIT * c.received;
        if !(due && allowed) {
            return None;
        }
        c.sent += self.challenge_bytes;
        c.last_challenge = Some(now);
        c.unanswered = c.unanswered.saturating_add(1);
        // A fresh token per challenge: the timestamp of this one (it doubles as an RTT sample;
        // at least 1, so that it never reads as an empty slot).
        let token = now.as_nanos().max(1);
        c.tokens.rotate_right(1);
        c.tokens[0] = token;
        Some(token)
    }

    /// An authenticated probe response echoing `token` arrived on path `i` from `addr`:
    /// whether it validates `addr` (it is the path's candidate and the token is one of its
    /// [`OUTSTANDING_CHALLENGES`] latest challenges'). A validated candidate is forgotten: the
    /// caller makes it the remote.
    pub fn on_response(&mut self, i: usize, addr: SocketAddr, token: u64) -> bool {
        let Some(slot) = self.candidates.get_mut(i) else { return false };
        if slot.is_some_and(|c| c.addr == addr && token != 0 && c.tokens.contains(&token)) {
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
            if v.on_unvalidated(ms(800 * k), 0, addr(1), 30).is_some() {
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
    fn a_challenge_repeats_only_after_the_rechallenge_interval_which_backs_off() {
        let mut v = PathValidation::new(1, 10);
        assert!(v.on_unvalidated(ms(0), 0, addr(1), 100).is_some());
        assert_eq!(v.on_unvalidated(ms(50), 0, addr(1), 100), None);
        assert!(v.on_unvalidated(ms(100), 0, addr(1), 100).is_some());
        // Unanswered twice: 200 ms, then 400, then 800 ms and no longer.
        assert_eq!(v.on_unvalidated(ms(299), 0, addr(1), 100), None);
        assert!(v.on_unvalidated(ms(300), 0, addr(1), 100).is_some());
        assert_eq!(v.on_unvalidated(ms(699), 0, addr(1), 100), None);
        assert!(v.on_unvalidated(ms(700), 0, addr(1), 100).is_some());
        assert!(v.on_unvalidated(ms(1500), 0, addr(1), 100).is_some());
        assert_eq!(v.on_unvalidated(ms(2299), 0, addr(1), 100), None);
        assert!(v.on_unvalidated(ms(2300), 0, addr(1), 100).is_some());
    }

    #[test]
    fn a_response_to_any_outstanding_challenge_validates_but_not_an_older_one() {
        let mut v = PathValidation::new(2, 10);
        let mut tokens = Vec::new();
        for at in [0, 100, 300, 700, 1500] {
            tokens.push(v.on_unvalidated(ms(at), 0, addr(1), 100).unwrap());
        }
        assert!(
            !v.on_response(0, addr(1), tokens[0]),
            "five challenges ago: no longer outstanding"
        );
        assert!(!v.on_response(0, addr(1), 0), "no token is not a token");
        assert!(!v.on_response(0, addr(2), tokens[4]), "another address");
        assert!(!v.on_response(1, addr(1), tokens[4]), "another path");
        assert!(v.on_response(0, addr(1), tokens[1]), "the oldest outstanding one");
        assert!(!v.on_response(0, addr(1), tokens[4]), "validated once; the candidate is gone");
        assert_eq!(v.candidate_bytes(0), None);
    }

    /// The lab's ASYM200 path (220 ms RTT) was never validated while every challenge replaced
    /// the last one's token: the client's datagrams kept coming, a challenge went every 100 ms,
    /// and each response arrived two challenges late.
    #[test]
    fn a_path_whose_round_trip_is_longer_than_the_challenge_interval_is_validated() {
        let rtt = 220;
        let mut v = PathValidation::new(1, 10);
        let mut sent: Vec<(u64, u64)> = Vec::new(); // (response arrives at ms, token)
        let mut validated_at = None;
        for now in (0..3000).step_by(10) {
            // The client sends something every 10 ms; responses arrive one RTT after.
            if let Some(&(_, token)) = sent.iter().find(|(at, _)| *at == now) {
                if v.on_response(0, addr(1), token) {
                    validated_at = Some(now);
                    break;
                }
            }
            if let Some(token) = v.on_unvalidated(ms(now), 0, addr(1), 100) {
                sent.push((now + rtt, token));
            }
        }
        assert_eq!(validated_at, Some(rtt), "the first challenge's response validates");
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
