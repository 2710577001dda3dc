//! What a responder checks of an initiation before any Diffie-Hellman, shared by a one-peer
//! [`Session`](super::Session) and the many-peer [`Responder`](super::Responder): `mac1`
//! ([`super::cookie`]), then under load a cookie for the source address and the per-source
//! limits, then the global handshake budget ([`super::ratelimit`]).

use std::net::SocketAddr;

use braid_core::Instant;

use super::cookie::CookieChecker;
use super::envelope::INITIATION_LEN;
use super::keys::PublicKey;
use super::ratelimit::{HandshakeLoad, SourceLimiter};
use super::{CryptoError, SessionCounters};

/// A responder's admission state: its cookie secret, its load and its limits.
pub struct Gate {
    checker: CookieChecker,
    load: HandshakeLoad,
    /// Handshakes per source address under load.
    sources: SourceLimiter,
    /// Cookie replies per source address.
    cookie_sources: SourceLimiter,
}

/// What the gate decided about an initiation that passed `mac1`.
#[derive(Debug, PartialEq, Eq)]
pub enum Admission {
    /// Do the handshake.
    Proceed,
    /// Under load without a valid cookie: a cookie reply of this many bytes is in `reply`.
    CookieReply(usize),
}

impl Gate {
    /// For initiations to the owner of `local` (our public key).
    pub fn new(local: &PublicKey, now: Instant) -> Self {
        Gate {
            checker: CookieChecker::new(local),
            load: HandshakeLoad::new(now),
            sources: SourceLimiter::default(),
            cookie_sources: SourceLimiter::default(),
        }
    }

    /// The first check, one BLAKE2s: refuses a handshake message not made for our key.
    pub fn check_mac1(
        &self,
        msg: &[u8],
        counters: &mut SessionCounters,
    ) -> Result<(), CryptoError> {
        if self.checker.check_mac1(msg) {
            Ok(())
        } else {
            counters.bad_mac1 += 1;
            Err(CryptoError::Mac1)
        }
    }

    /// The checks after `mac1` (and after the caller answered exact copies of an accepted
    /// initiation from its cache): under load a valid `mac2` for `src` or a cookie reply
    /// (written into `reply`), both limited per source address and in all; then the global
    /// handshake budget.
    pub fn admit(
        &mut self,
        now: Instant,
        src: SocketAddr,
        initiation: &[u8; INITIATION_LEN],
        sender_index: u32,
        reply: &mut [u8],
        counters: &mut SessionCounters,
    ) -> Result<Admission, CryptoError> {
        if self.load.on_initiation(now) {
            if !self.checker.check_mac2(now, initiation, &src) {
                // A reply costs a send: limited per source, and in all (ratelimit.rs).
                if !self.cookie_sources.allow(now, src.ip()) || !self.load.take_cookie_reply(now) {
                    counters.rate_limited += 1;
                    return Err(CryptoError::RateLimited);
                }
                counters.cookie_replies += 1;
                let n = self.checker.cookie_reply(now, initiation, sender_index, &src, reply)?;
                return Ok(Admission::CookieReply(n));
            }
            if !self.sources.allow(now, src.ip()) {
                counters.rate_limited += 1;
                return Err(CryptoError::RateLimited);
            }
        }
        if !self.load.take_handshake(now) {
            counters.rate_limited += 1;
            return Err(CryptoError::RateLimited);
        }
        Ok(Admission::Proceed)
    }
}
