//! What a responder checks of an initiation before any Diffie-Hellman, shared by a one-peer
//! [`Session`](super::Session) and the many-peer [`Responder`](super::Responder): `mac1`
//! ([`super::cookie`]), then under load a cookie for the source address and the per-source
//! limits, then the global handshake budget ([`super::ratelimit`]); and the Diffie-Hellman
//! that follows. Between `mac1` and the rest the caller answers exact copies of an initiation
//! it accepted (its cached response); after the DH it matches the sender to its peer.

use std::net::SocketAddr;

use braid_core::Instant;

use super::cookie::CookieChecker;
use super::counters::SessionCounters;
use super::envelope::{INITIATION_LEN, INITIATION_NOISE_LEN, REPLY_MAX};
use super::handshake::{self, AcceptedInitiation};
use super::keys::{PrivateKey, PublicKey};
use super::ratelimit::{HandshakeLoad, SourceLimiter};
use super::{Cipher, CryptoError};

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

/// What [`Gate::admit_and_read`] made of an initiation.
pub(crate) enum Admitted {
    /// Under load without a valid cookie: a cookie reply of this many bytes is in `reply`.
    CookieReply(usize),
    /// Read by the Diffie-Hellman: for the caller to match its peer and answer.
    Read(Box<AcceptedInitiation>),
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

    /// The first checks of an initiation, before anything else: room in `reply` for any answer,
    /// then `mac1` (one BLAKE2s), which refuses a message not made for our key.
    pub fn check_first(
        &self,
        initiation: &[u8; INITIATION_LEN],
        reply: &[u8],
        counters: &mut SessionCounters,
    ) -> Result<(), CryptoError> {
        if reply.len() < REPLY_MAX {
            return Err(CryptoError::BufferTooSmall { needed: REPLY_MAX, available: reply.len() });
        }
        if self.checker.check_mac1(initiation) {
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

    /// [`admit`](Self::admit), then, if admitted, the Diffie-Hellman that reads the initiation
    /// for our key `local` (a failure counted in `counters.handshake_failures`). Which peer sent
    /// it is the caller's to check.
    #[allow(clippy::too_many_arguments, reason = "the one- and many-peer responders' common step")]
    pub(crate) fn admit_and_read(
        &mut self,
        now: Instant,
        src: SocketAddr,
        cipher: Cipher,
        local: &PrivateKey,
        initiation: &[u8; INITIATION_LEN],
        sender_index: u32,
        noise: &[u8; INITIATION_NOISE_LEN],
        reply: &mut [u8],
        counters: &mut SessionCounters,
    ) -> Result<Admitted, CryptoError> {
        if let Admission::CookieReply(n) =
            self.admit(now, src, initiation, sender_index, reply, counters)?
        {
            return Ok(Admitted::CookieReply(n));
        }
        handshake::read_initiation(cipher, local, noise)
            .map(|a| Admitted::Read(Box::new(a)))
            .map_err(|e| {
                counters.handshake_failures += 1;
                CryptoError::Handshake(e)
            })
    }
}
