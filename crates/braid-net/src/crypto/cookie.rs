//! WireGuard's handshake MACs and cookies: what keeps a responder's Diffie-Hellman work for
//! senders who know its public key and, under load, can receive at their source address.
//!
//! Donenfeld, "WireGuard: Next Generation Kernel Network Tunnel", NDSS 2017, section 5.3
//! ("Denial of Service Mitigation & Cookies"), 5.4.4 ("Cookie MACs") and 5.4.7 ("Under Load:
//! Cookie Reply Message"); the constants and the order of checks follow wireguard-go's
//! `device/cookie.go`:
//!
//! - Every handshake message ends in `mac1 = MAC(HASH("mac1----" || S_pub), msg_a)` and
//!   `mac2 = MAC(cookie, msg_b)`, where `S_pub` is the receiver's static public key, `msg_a` the
//!   message up to `mac1` and `msg_b` up to `mac2`. `MAC` is keyed BLAKE2s with a 16-byte
//!   output, `HASH` BLAKE2s-256. A responder checks `mac1` before anything else: one BLAKE2s
//!   over 124 bytes (about a microsecond) instead of two X25519 operations (about 100) for a
//!   datagram from someone who does not even know its public key.
//! - The cookie is `MAC(R, source address and port)`, with `R` a random secret renewed every
//!   [`COOKIE_LIFETIME`]. A responder under load answers an initiation whose `mac2` is not a
//!   valid cookie for its source with a cookie reply instead of the handshake: the cookie
//!   encrypted with XChaCha20-Poly1305 under `HASH("cookie--" || S_pub)` (so only someone who
//!   knows the responder's public key can read it), a random 24-byte nonce, and the initiation's
//!   `mac1` as associated data (so only the initiation's sender can use it). The initiator keeps
//!   the cookie for [`COOKIE_LIFETIME`] and puts `mac2` into its next initiations; a source
//!   that cannot receive at its address never gets one.
//!
//! Sans-I/O apart from the operating system's random source, which the secret and the nonces
//! need, as the handshake's ephemeral keys do.

use std::net::SocketAddr;
use std::time::Duration;

use blake2::digest::{FixedOutput, Update};
use blake2::{Blake2s256, Blake2sMac, Digest};
use braid_core::Instant;
use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::{Tag, XChaCha20Poly1305, XNonce};
use ring::rand::{SecureRandom, SystemRandom};
use zeroize::Zeroize;

use super::envelope::{Envelope, COOKIE_NONCE_LEN, COOKIE_REPLY_LEN, MAC_LEN, SEALED_COOKIE_LEN};
use super::keys::{PublicKey, KEY_LEN};
use super::CryptoError;

/// How long a responder's cookie secret, and so an initiator's cookie, stays valid (WireGuard
/// section 6.1, Cookie-Refresh-Time: 120 s).
pub const COOKIE_LIFETIME: Duration = Duration::from_secs(120);

const LABEL_MAC1: &[u8; 8] = b"mac1----";
const LABEL_COOKIE: &[u8; 8] = b"cookie--";

/// `HASH(label || key)`: BLAKE2s-256.
fn labelled_hash(label: &[u8; 8], key: &PublicKey) -> [u8; 32] {
    let mut h = Blake2s256::new();
    Digest::update(&mut h, label);
    Digest::update(&mut h, key.as_bytes());
    h.finalize().into()
}

/// `MAC(key, parts...)`: keyed BLAKE2s with a 16-byte output (RFC 7693 keyed mode).
fn mac(key: &[u8], parts: &[&[u8]]) -> [u8; MAC_LEN] {
    let mut m = <Blake2sMac<blake2::digest::consts::U16> as KeyInit>::new_from_slice(key)
        .expect("keys of at most 32 bytes");
    for p in parts {
        Update::update(&mut m, p);
    }
    m.finalize_fixed().into()
}

/// Compares in time independent of where the inputs differ.
fn equal(a: &[u8; MAC_LEN], b: &[u8; MAC_LEN]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The address as the cookie binds it: IP address bytes, then the port, big-endian.
fn address_bytes(src: &SocketAddr, out: &mut [u8; 18]) -> usize {
    let n = match src {
        SocketAddr::V4(a) => {
            out[..4].copy_from_slice(&a.ip().octets());
            4
        }
        SocketAddr::V6(a) => {
            out[..16].copy_from_slice(&a.ip().octets());
            16
        }
    };
    out[n..n + 2].copy_from_slice(&src.port().to_be_bytes());
    n + 2
}

/// The two keys derived from one static public key: whoever sends a handshake message to the
/// key's owner MACs with them, and the owner checks with them.
#[derive(Clone)]
struct MacKeys {
    mac1: [u8; 32],
    cookie: [u8; 32],
}

impl MacKeys {
    fn new(public: &PublicKey) -> Self {
        MacKeys {
            mac1: labelled_hash(LABEL_MAC1, public),
            cookie: labelled_hash(LABEL_COOKIE, public),
        }
    }
}

/// The byte ranges of a handshake message: `(msg_a, mac1, msg_b, mac2)` ends.
fn mac_offsets(len: usize) -> (usize, usize) {
    (len - 2 * MAC_LEN, len - MAC_LEN)
}

/// The sending side: writes `mac1` and `mac2` into handshake messages to one peer and keeps the
/// cookie that peer handed out.
pub struct CookieJar {
    keys: MacKeys,
    cookie: Option<([u8; MAC_LEN], Instant)>,
    last_mac1: Option<[u8; MAC_LEN]>,
}

impl CookieJar {
    /// For messages to the owner of `peer`.
    pub fn new(peer: &PublicKey) -> Self {
        CookieJar { keys: MacKeys::new(peer), cookie: None, last_mac1: None }
    }

    /// Fills the last 32 bytes of the handshake message `msg` (an initiation or a response with
    /// everything else written): `mac1`, then `mac2` with a cookie younger than
    /// [`COOKIE_LIFETIME`], zeros without one.
    pub fn stamp(&mut self, now: Instant, msg: &mut [u8]) {
        let (a, b) = mac_offsets(msg.len());
        let mac1 = mac(&self.keys.mac1, &[&msg[..a]]);
        msg[a..b].copy_from_slice(&mac1);
        self.last_mac1 = Some(mac1);
        let fresh = self.cookie.filter(|(_, at)| now.saturating_since(*at) < COOKIE_LIFETIME);
        let mac2 = fresh.map_or([0; MAC_LEN], |(cookie, _)| mac(&cookie, &[&msg[..b]]));
        msg[b..].copy_from_slice(&mac2);
    }

    /// Takes a cookie reply to the last message stamped: decrypts the cookie, with that
    /// message's `mac1` as associated data, and keeps it.
    pub fn on_cookie_reply(
        &mut self,
        now: Instant,
        nonce: &[u8; COOKIE_NONCE_LEN],
        sealed_cookie: &[u8; SEALED_COOKIE_LEN],
    ) -> Result<(), CryptoError> {
        let last_mac1 = self.last_mac1.ok_or(CryptoError::Authentication)?;
        let aead = XChaCha20Poly1305::new(&self.keys.cookie.into());
        let mut cookie: [u8; MAC_LEN] = sealed_cookie[..MAC_LEN].try_into().expect("16 bytes");
        let tag = Tag::from_slice(&sealed_cookie[MAC_LEN..]);
        aead.decrypt_in_place_detached(XNonce::from_slice(nonce), &last_mac1, &mut cookie, tag)
            .map_err(|_| CryptoError::Authentication)?;
        self.cookie = Some((cookie, now));
        Ok(())
    }

    /// Whether a cookie is held (for tests and metrics).
    pub fn has_cookie(&self, now: Instant) -> bool {
        self.cookie.is_some_and(|(_, at)| now.saturating_since(at) < COOKIE_LIFETIME)
    }
}

impl Drop for CookieJar {
    fn drop(&mut self) {
        if let Some((c, _)) = self.cookie.as_mut() {
            c.zeroize();
        }
    }
}

/// The receiving side: checks the MACs of handshake messages to us and makes cookie replies.
pub struct CookieChecker {
    keys: MacKeys,
    secret: [u8; KEY_LEN],
    /// When `secret` was drawn; `None` before the first cookie.
    secret_born: Option<Instant>,
    rng: SystemRandom,
}

impl CookieChecker {
    /// For messages to the owner of `local` (our own public key).
    pub fn new(local: &PublicKey) -> Self {
        CookieChecker {
            keys: MacKeys::new(local),
            secret: [0; KEY_LEN],
            secret_born: None,
            rng: SystemRandom::new(),
        }
    }

    /// Whether `msg`'s `mac1` is right for our public key. Nothing else about a handshake
    /// message should be looked at before this.
    pub fn check_mac1(&self, msg: &[u8]) -> bool {
        let (a, b) = mac_offsets(msg.len());
        let expected = mac(&self.keys.mac1, &[&msg[..a]]);
        equal(&expected, msg[a..b].try_into().expect("16 bytes"))
    }

    /// Whether `msg`'s `mac2` is made with the cookie we would give `src` now.
    pub fn check_mac2(&self, now: Instant, msg: &[u8], src: &SocketAddr) -> bool {
        let Some(cookie) = self.current_cookie(now, src) else { return false };
        let (_, b) = mac_offsets(msg.len());
        equal(&mac(&cookie, &[&msg[..b]]), msg[b..].try_into().expect("16 bytes"))
    }

    /// Writes into `out` the cookie reply to the handshake message `msg` from `src`, whose
    /// sender index was `receiver_index`; returns its length ([`COOKIE_REPLY_LEN`]).
    pub fn cookie_reply(
        &mut self,
        now: Instant,
        msg: &[u8],
        receiver_index: u32,
        src: &SocketAddr,
        out: &mut [u8],
    ) -> Result<usize, CryptoError> {
        if out.len() < COOKIE_REPLY_LEN {
            return Err(CryptoError::BufferTooSmall {
                needed: COOKIE_REPLY_LEN,
                available: out.len(),
            });
        }
        if self.current_cookie(now, src).is_none() {
            self.rng.fill(&mut self.secret).map_err(|_| CryptoError::Random)?;
            self.secret_born = Some(now);
        }
        let mut cookie = self.current_cookie(now, src).ok_or(CryptoError::Random)?;
        let mut nonce = [0u8; COOKIE_NONCE_LEN];
        self.rng.fill(&mut nonce).map_err(|_| CryptoError::Random)?;
        let (a, b) = mac_offsets(msg.len());
        let aead = XChaCha20Poly1305::new(&self.keys.cookie.into());
        let tag = aead
            .encrypt_in_place_detached(XNonce::from_slice(&nonce), &msg[a..b], &mut cookie)
            .map_err(|_| CryptoError::Authentication)?;
        let mut sealed = [0u8; SEALED_COOKIE_LEN];
        sealed[..MAC_LEN].copy_from_slice(&cookie);
        sealed[MAC_LEN..].copy_from_slice(&tag);
        cookie.zeroize();
        Ok(Envelope::CookieReply { receiver_index, nonce: &nonce, sealed_cookie: &sealed }
            .emit(out)?)
    }

    /// The cookie of `src` under the current secret, if that secret is younger than
    /// [`COOKIE_LIFETIME`].
    fn current_cookie(&self, now: Instant, src: &SocketAddr) -> Option<[u8; MAC_LEN]> {
        let born = self.secret_born?;
        if now.saturating_since(born) >= COOKIE_LIFETIME {
            return None;
        }
        let mut addr = [0u8; 18];
        let n = address_bytes(src, &mut addr);
        Some(mac(&self.secret, &[&addr[..n]]))
    }
}

impl Drop for CookieChecker {
    fn drop(&mut self) {
        self.secret.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::envelope::INITIATION_LEN;
    use crate::crypto::keys::generate_keypair;

    fn t(s: u64) -> Instant {
        Instant::from_nanos(s * 1_000_000_000)
    }

    /// Parses `reply` as a cookie reply (panics if it is not one) and hands it to `jar`.
    fn take(jar: &mut CookieJar, now: Instant, reply: &[u8]) -> Result<(), CryptoError> {
        let Ok(Envelope::CookieReply { nonce, sealed_cookie, .. }) = Envelope::parse(reply) else {
            panic!("not a cookie reply");
        };
        jar.on_cookie_reply(now, nonce, sealed_cookie)
    }

    fn initiation(fill: u8) -> [u8; INITIATION_LEN] {
        let mut m = [fill; INITIATION_LEN];
        m[..4].copy_from_slice(&[1, 0, 0, 0]);
        m
    }

    /// Known answer, computed apart from this code with Python's hashlib (keyed BLAKE2s):
    /// `blake2s(msg_a, key=blake2s(b"mac1----" + pub).digest(), digest_size=16)` for
    /// pub = 32 bytes of 7 and msg_a = `01 00 00 00` then 248 bytes of 7.
    #[test]
    fn mac1_known_answer() {
        let public = PublicKey::from_bytes([7; 32]);
        let mut m = initiation(7);
        CookieJar::new(&public).stamp(t(0), &mut m);
        let mac1 = &m[INITIATION_LEN - 2 * MAC_LEN..INITIATION_LEN - MAC_LEN];
        let hex: String = mac1.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "c1df9dcdebe424652844ed1743215071");
        // The cookie key: blake2s(b"cookie--" + pub), first 8 bytes b3b0667561efd4db.
        assert_eq!(
            MacKeys::new(&public).cookie[..8],
            [0xb3, 0xb0, 0x66, 0x75, 0x61, 0xef, 0xd4, 0xdb]
        );
    }

    #[test]
    fn mac1_checks_only_under_the_receivers_key() {
        let (_, server) = generate_keypair().unwrap();
        let (_, other) = generate_keypair().unwrap();
        let mut jar = CookieJar::new(&server);
        let mut m = initiation(7);
        jar.stamp(t(1), &mut m);
        assert!(CookieChecker::new(&server).check_mac1(&m));
        assert!(!CookieChecker::new(&other).check_mac1(&m));
        // Without a cookie mac2 is zeros.
        assert_eq!(m[INITIATION_LEN - MAC_LEN..], [0; MAC_LEN]);
        // Any change to what mac1 covers breaks it.
        for at in [0, 4, 50, INITIATION_LEN - 2 * MAC_LEN - 1] {
            let mut bad = m;
            bad[at] ^= 1;
            assert!(!CookieChecker::new(&server).check_mac1(&bad), "byte {at}");
        }
        // Junk shaped like an initiation fails.
        assert!(!CookieChecker::new(&server).check_mac1(&initiation(0xab)));
    }

    #[test]
    fn a_cookie_reply_makes_the_next_message_pass_mac2_from_that_address_only() {
        let (_, server) = generate_keypair().unwrap();
        let src: SocketAddr = "192.0.2.7:40000".parse().unwrap();
        let mut checker = CookieChecker::new(&server);
        let mut jar = CookieJar::new(&server);
        let mut m = initiation(1);
        jar.stamp(t(10), &mut m);
        assert!(!checker.check_mac2(t(10), &m, &src));
        let mut reply = [0u8; COOKIE_REPLY_LEN];
        assert_eq!(checker.cookie_reply(t(10), &m, 0x55, &src, &mut reply), Ok(COOKIE_REPLY_LEN));
        let Ok(Envelope::CookieReply { receiver_index, .. }) = Envelope::parse(&reply) else {
            panic!("not a cookie reply");
        };
        assert_eq!(receiver_index, 0x55);
        take(&mut jar, t(11), &reply).unwrap();
        assert!(jar.has_cookie(t(11)));
        let mut next = initiation(2);
        jar.stamp(t(12), &mut next);
        assert!(checker.check_mac1(&next));
        assert!(checker.check_mac2(t(12), &next, &src));
        let other_port: SocketAddr = "192.0.2.7:40001".parse().unwrap();
        let other_host: SocketAddr = "192.0.2.8:40000".parse().unwrap();
        assert!(!checker.check_mac2(t(12), &next, &other_port));
        assert!(!checker.check_mac2(t(12), &next, &other_host));
        // The secret expires: the same mac2 no longer passes, and the jar stops using the cookie.
        assert!(!checker.check_mac2(t(10) + COOKIE_LIFETIME, &next, &src));
        assert!(!jar.has_cookie(t(11) + COOKIE_LIFETIME));
    }

    #[test]
    fn a_cookie_reply_opens_only_for_the_message_it_answers() {
        let (_, server) = generate_keypair().unwrap();
        let src: SocketAddr = "[2001:db8::1]:5000".parse().unwrap();
        let mut checker = CookieChecker::new(&server);
        let mut jar = CookieJar::new(&server);
        let mut m = initiation(1);
        jar.stamp(t(1), &mut m);
        // A reply made for someone else's initiation (another mac1) does not decrypt.
        let mut theirs = initiation(9);
        CookieJar::new(&server).stamp(t(1), &mut theirs);
        let mut reply = [0u8; COOKIE_REPLY_LEN];
        checker.cookie_reply(t(1), &theirs, 1, &src, &mut reply).unwrap();
        assert_eq!(take(&mut jar, t(1), &reply), Err(CryptoError::Authentication));
        // Nor one under another server's key; a flipped bit fails too.
        let (_, other) = generate_keypair().unwrap();
        let mut reply = [0u8; COOKIE_REPLY_LEN];
        CookieChecker::new(&other).cookie_reply(t(1), &m, 1, &src, &mut reply).unwrap();
        assert!(take(&mut jar, t(1), &reply).is_err());
        let mut reply = [0u8; COOKIE_REPLY_LEN];
        checker.cookie_reply(t(1), &m, 1, &src, &mut reply).unwrap();
        reply[40] ^= 1;
        assert!(take(&mut jar, t(1), &reply).is_err());
        assert!(!jar.has_cookie(t(1)));
    }
}
