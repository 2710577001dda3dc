//! The outer datagram: what one UDP payload between the two tunnel endpoints looks like.
//!
//! Four messages, after WireGuard's (paper section 5.4: Donenfeld, "WireGuard: Next Generation
//! Kernel Network Tunnel", NDSS 2017), with its type numbers. Both handshake messages end in
//! WireGuard's two MACs (section 5.4.4): `mac1`, keyed by the receiver's public key, which the
//! responder checks before any Diffie-Hellman, and `mac2`, keyed by a cookie bound to the
//! sender's address, which a responder under load demands and otherwise ignores; the cookie
//! reply (section 5.4.7) hands out that cookie. [`super::cookie`] computes and checks them.
//!
//! ```text
//!  offset  size  field                       all integers big-endian, as in braid-core's wire
//!       0     1  message type: 1 initiation, 2 response, 3 cookie reply, 4 transport
//!       1     3  reserved, must be zero (a transport message's byte 1: see below)
//!
//!  initiation, exactly 284 bytes:
//!       4     4  sender index (the initiator's index for the keys this handshake makes)
//!       8   244  Noise IKpsk2 message 1: e (32) | encrypted s (32 + 16) |
//!                encrypted payload: TAI64N timestamp, instance, path table (12 + 8 + 128 + 16)
//!     252    16  mac1 over bytes 0..252
//!     268    16  mac2 over bytes 0..268 (zeros without a cookie)
//!
//!  response, exactly 228 bytes:
//!       4     4  sender index (the responder's)
//!       8     4  receiver index (the initiator's sender index, echoed)
//!      12   184  Noise IKpsk2 message 2: e (32) | encrypted payload: instance, path table
//!                (8 + 128 + 16)
//!     196    16  mac1 over bytes 0..196
//!     212    16  mac2 over bytes 0..212 (zeros without a cookie)
//!
//!  cookie reply, exactly 64 bytes:
//!       4     4  receiver index (the sender index of the initiation it answers)
//!       8    24  nonce (random)
//!      32    32  the 16-byte cookie, encrypted (XChaCha20-Poly1305) with its tag
//!
//!  transport, at least 32 bytes:
//!       1     1  path id: the path the sender sent it on (bytes 2..4 reserved, zero)
//!       4     4  receiver index (which keys, chosen by the receiver during the handshake)
//!       8     8  counter: the AEAD nonce, and the replay-window sequence number
//!      16     n  ciphertext of the n-byte plaintext (AES-256-GCM or ChaCha20-Poly1305)
//!    16+n    16  tag (GHASH or Poly1305: both ciphers' tags are 16 bytes)
//! ```
//!
//! The transport header is the AEAD's associated data, so the path id is authenticated: a
//! receiver refuses a datagram that arrives on another path than it names before it touches any
//! state (a genuine datagram copied into another path's port cannot revive or move that path,
//! nor use up its counter in the replay window). Handshake messages name no path (an
//! initiation goes out on every path).
//!
//! A datagram whose first byte has its high bit set is none of these but a compact data message
//! ([`super::compact`]: 4 bytes of header, no receiver index, no counter), which this parser
//! refuses as an unknown type; the daemon tells the two apart by that bit first.
//!
//! Parsing is strict: handshake messages must have their exact length and transport messages room
//! for the tag, reserved bytes must be zero, and every failure is an [`EnvelopeError`], never a
//! panic. A zero-length transport plaintext is a keepalive (WireGuard paper section 6.5).

use super::path_table::PATH_TABLE_LEN;

/// Message type of a handshake initiation.
pub const TYPE_INITIATION: u8 = 1;
/// Message type of a handshake response.
pub const TYPE_RESPONSE: u8 = 2;
/// Message type of a cookie reply.
pub const TYPE_COOKIE_REPLY: u8 = 3;
/// Message type of a transport data message.
pub const TYPE_TRANSPORT: u8 = 4;

/// Curve25519 public key, and the ephemeral key in each handshake message.
const DH_LEN: usize = 32;
/// AEAD tag (AES-GCM's and ChaCha20-Poly1305's alike): every ciphertext, in the handshake and in
/// transport, carries one.
pub const TAG_LEN: usize = 16;
/// The initiation's payload starts with a TAI64N timestamp (12 bytes) against replayed
/// initiations...
pub const TIMESTAMP_LEN: usize = 12;
/// ...then the initiator's instance (8 random bytes drawn at start) and its path table; the
/// response's payload is the responder's instance and table (see [`super::handshake`]).
pub const INSTANCE_LEN: usize = 8;
/// What each handshake payload says about its sender: instance and path table.
pub const ABOUT_LEN: usize = INSTANCE_LEN + PATH_TABLE_LEN;
/// The initiation's plaintext payload.
pub const INITIATION_PAYLOAD_LEN: usize = TIMESTAMP_LEN + ABOUT_LEN;
/// The response's plaintext payload.
pub const RESPONSE_PAYLOAD_LEN: usize = ABOUT_LEN;
/// Noise message 1 of IKpsk2 (`-> e, es, s, ss`): e, then s and the payload encrypted.
pub const INITIATION_NOISE_LEN: usize =
    DH_LEN + (DH_LEN + TAG_LEN) + (INITIATION_PAYLOAD_LEN + TAG_LEN);
/// Noise message 2 of IKpsk2 (`<- e, ee, se, psk`): e, then the payload encrypted.
pub const RESPONSE_NOISE_LEN: usize = DH_LEN + (RESPONSE_PAYLOAD_LEN + TAG_LEN);
/// Type, reserved bytes and sender index in front of the Noise message.
const INITIATION_HEADER_LEN: usize = 8;
/// Type, reserved bytes, sender and receiver index in front of the Noise message.
const RESPONSE_HEADER_LEN: usize = 12;
/// One MAC (keyed BLAKE2s with a 16-byte output); each handshake message ends in two.
pub const MAC_LEN: usize = 16;
/// Bytes of a whole initiation datagram.
pub const INITIATION_LEN: usize = INITIATION_HEADER_LEN + INITIATION_NOISE_LEN + 2 * MAC_LEN;
/// Bytes of a whole response datagram.
pub const RESPONSE_LEN: usize = RESPONSE_HEADER_LEN + RESPONSE_NOISE_LEN + 2 * MAC_LEN;
/// The cookie reply's random nonce (XChaCha20-Poly1305's 24 bytes).
pub const COOKIE_NONCE_LEN: usize = 24;
/// The cookie (a 16-byte MAC) encrypted, with its tag.
pub const SEALED_COOKIE_LEN: usize = MAC_LEN + TAG_LEN;
/// Bytes of a whole cookie reply datagram.
pub const COOKIE_REPLY_LEN: usize = 8 + COOKIE_NONCE_LEN + SEALED_COOKIE_LEN;
/// Bytes a responder's reply buffer needs: a response or a cookie reply.
pub const REPLY_MAX: usize =
    if RESPONSE_LEN > COOKIE_REPLY_LEN { RESPONSE_LEN } else { COOKIE_REPLY_LEN };
/// Type, reserved bytes, receiver index and counter in front of a transport ciphertext.
pub const HEADER_LEN: usize = 16;
/// The shortest transport datagram: a keepalive, header and tag around no plaintext.
pub const TRANSPORT_MIN_LEN: usize = HEADER_LEN + TAG_LEN;

/// Which of the three messages a datagram claims to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageKind {
    Initiation,
    Response,
    CookieReply,
    Transport,
}

impl std::fmt::Display for MessageKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MessageKind::Initiation => "initiation",
            MessageKind::Response => "response",
            MessageKind::CookieReply => "cookie reply",
            MessageKind::Transport => "transport",
        })
    }
}

/// Why a datagram is not a well-formed envelope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    #[error("empty datagram")]
    Empty,
    #[error(
        "unknown message type {0} (known: 1 initiation, 2 response, 3 cookie reply, 4 transport)"
    )]
    UnknownType(u8),
    #[error("a {kind} message is exactly {expected} bytes, found {found}")]
    Length { kind: MessageKind, expected: usize, found: usize },
    #[error("a transport message is at least {TRANSPORT_MIN_LEN} bytes, found {found}")]
    Truncated { found: usize },
    #[error("reserved bytes must be zero (1..4; 2..4 in a transport message)")]
    ReservedNotZero,
    #[error("buffer of {available} bytes cannot hold the {needed}-byte message")]
    BufferTooSmall { needed: usize, available: usize },
}

/// A parsed datagram, borrowing its variable parts from the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Envelope<'a> {
    Initiation {
        sender_index: u32,
        noise: &'a [u8; INITIATION_NOISE_LEN],
        mac1: &'a [u8; MAC_LEN],
        mac2: &'a [u8; MAC_LEN],
    },
    Response {
        sender_index: u32,
        receiver_index: u32,
        noise: &'a [u8; RESPONSE_NOISE_LEN],
        mac1: &'a [u8; MAC_LEN],
        mac2: &'a [u8; MAC_LEN],
    },
    CookieReply {
        receiver_index: u32,
        nonce: &'a [u8; COOKIE_NONCE_LEN],
        sealed_cookie: &'a [u8; SEALED_COOKIE_LEN],
    },
    /// `sealed` is the ciphertext followed by the 16-byte tag.
    Transport { path_id: u8, receiver_index: u32, counter: u64, sealed: &'a [u8] },
}

impl<'a> Envelope<'a> {
    /// Decodes one whole datagram. Checks, in order: not empty, known type, length, reserved.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, EnvelopeError> {
        let &message_type = bytes.first().ok_or(EnvelopeError::Empty)?;
        let kind = match message_type {
            TYPE_INITIATION => MessageKind::Initiation,
            TYPE_RESPONSE => MessageKind::Response,
            TYPE_COOKIE_REPLY => MessageKind::CookieReply,
            TYPE_TRANSPORT => MessageKind::Transport,
            other => return Err(EnvelopeError::UnknownType(other)),
        };
        let found = bytes.len();
        match kind {
            MessageKind::Initiation if found != INITIATION_LEN => {
                return Err(EnvelopeError::Length { kind, expected: INITIATION_LEN, found });
            }
            MessageKind::Response if found != RESPONSE_LEN => {
                return Err(EnvelopeError::Length { kind, expected: RESPONSE_LEN, found });
            }
            MessageKind::CookieReply if found != COOKIE_REPLY_LEN => {
                return Err(EnvelopeError::Length { kind, expected: COOKIE_REPLY_LEN, found });
            }
            MessageKind::Transport if found < TRANSPORT_MIN_LEN => {
                return Err(EnvelopeError::Truncated { found });
            }
            _ => {}
        }
        let reserved = if kind == MessageKind::Transport { &bytes[2..4] } else { &bytes[1..4] };
        if reserved.iter().any(|&b| b != 0) {
            return Err(EnvelopeError::ReservedNotZero);
        }
        Ok(match kind {
            MessageKind::Initiation => {
                let (noise, mac1, mac2) = noise_and_macs(&bytes[INITIATION_HEADER_LEN..]);
                Envelope::Initiation { sender_index: be_u32(bytes, 4), noise, mac1, mac2 }
            }
            MessageKind::Response => {
                let (noise, mac1, mac2) = noise_and_macs(&bytes[RESPONSE_HEADER_LEN..]);
                Envelope::Response {
                    sender_index: be_u32(bytes, 4),
                    receiver_index: be_u32(bytes, 8),
                    noise,
                    mac1,
                    mac2,
                }
            }
            MessageKind::CookieReply => Envelope::CookieReply {
                receiver_index: be_u32(bytes, 4),
                nonce: bytes[8..8 + COOKIE_NONCE_LEN].try_into().expect("length checked above"),
                sealed_cookie: bytes[8 + COOKIE_NONCE_LEN..]
                    .try_into()
                    .expect("length checked above"),
            },
            MessageKind::Transport => Envelope::Transport {
                path_id: bytes[1],
                receiver_index: be_u32(bytes, 4),
                counter: u64::from_be_bytes(bytes[8..16].try_into().expect("length checked")),
                sealed: &bytes[HEADER_LEN..],
            },
        })
    }

    pub fn kind(&self) -> MessageKind {
        match self {
            Envelope::Initiation { .. } => MessageKind::Initiation,
            Envelope::Response { .. } => MessageKind::Response,
            Envelope::CookieReply { .. } => MessageKind::CookieReply,
            Envelope::Transport { .. } => MessageKind::Transport,
        }
    }

    /// Bytes [`Envelope::emit`] writes.
    pub fn len(&self) -> usize {
        match self {
            Envelope::Initiation { .. } => INITIATION_LEN,
            Envelope::Response { .. } => RESPONSE_LEN,
            Envelope::CookieReply { .. } => COOKIE_REPLY_LEN,
            Envelope::Transport { sealed, .. } => HEADER_LEN + sealed.len(),
        }
    }

    /// Never true: every message has at least its header.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Writes the whole datagram into the front of `out`; returns its length.
    pub fn emit(&self, out: &mut [u8]) -> Result<usize, EnvelopeError> {
        let needed = self.len();
        let available = out.len();
        let out =
            out.get_mut(..needed).ok_or(EnvelopeError::BufferTooSmall { needed, available })?;
        match *self {
            Envelope::Initiation { sender_index, noise, mac1, mac2 } => {
                out[..4].copy_from_slice(&[TYPE_INITIATION, 0, 0, 0]);
                out[4..8].copy_from_slice(&sender_index.to_be_bytes());
                emit_noise_and_macs(&mut out[INITIATION_HEADER_LEN..], noise, mac1, mac2);
            }
            Envelope::Response { sender_index, receiver_index, noise, mac1, mac2 } => {
                out[..4].copy_from_slice(&[TYPE_RESPONSE, 0, 0, 0]);
                out[4..8].copy_from_slice(&sender_index.to_be_bytes());
                out[8..12].copy_from_slice(&receiver_index.to_be_bytes());
                emit_noise_and_macs(&mut out[RESPONSE_HEADER_LEN..], noise, mac1, mac2);
            }
            Envelope::CookieReply { receiver_index, nonce, sealed_cookie } => {
                out[..4].copy_from_slice(&[TYPE_COOKIE_REPLY, 0, 0, 0]);
                out[4..8].copy_from_slice(&receiver_index.to_be_bytes());
                out[8..8 + COOKIE_NONCE_LEN].copy_from_slice(nonce);
                out[8 + COOKIE_NONCE_LEN..].copy_from_slice(sealed_cookie);
            }
            Envelope::Transport { path_id, receiver_index, counter, sealed } => {
                let header: &mut [u8; HEADER_LEN] =
                    (&mut out[..HEADER_LEN]).try_into().expect("slice is HEADER_LEN long");
                *header = transport_header(path_id, receiver_index, counter);
                out[HEADER_LEN..].copy_from_slice(sealed);
            }
        }
        Ok(needed)
    }
}

/// The 16-byte header of a transport message sent on path `path_id`; the sealer writes it in
/// front of the ciphertext and authenticates it as associated data.
pub fn transport_header(path_id: u8, receiver_index: u32, counter: u64) -> [u8; HEADER_LEN] {
    let mut header = [0u8; HEADER_LEN];
    header[0] = TYPE_TRANSPORT;
    header[1] = path_id;
    header[4..8].copy_from_slice(&receiver_index.to_be_bytes());
    header[8..16].copy_from_slice(&counter.to_be_bytes());
    header
}

/// Splits a handshake message's tail into its Noise message and its two MACs.
fn noise_and_macs<const N: usize>(tail: &[u8]) -> (&[u8; N], &[u8; MAC_LEN], &[u8; MAC_LEN]) {
    let (noise, macs) = tail.split_at(N);
    let (mac1, mac2) = macs.split_at(MAC_LEN);
    let fixed = "the envelope checked the length";
    (noise.try_into().expect(fixed), mac1.try_into().expect(fixed), mac2.try_into().expect(fixed))
}

fn emit_noise_and_macs(out: &mut [u8], noise: &[u8], mac1: &[u8], mac2: &[u8]) {
    let (n, m) = (noise.len(), MAC_LEN);
    out[..n].copy_from_slice(noise);
    out[n..n + m].copy_from_slice(mac1);
    out[n + m..n + 2 * m].copy_from_slice(mac2);
}

fn be_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(bytes[at..at + 4].try_into().expect("caller checked the length"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::path::{Path, PathBuf};

    #[test]
    fn lengths_follow_the_noise_message_layout() {
        // e 32 + (s 32 + tag 16) + (timestamp 12 + instance 8 + paths 128 + tag 16) = 244; 8
        // bytes in front, mac1 and mac2 (16 each) behind: WireGuard's 148 plus the instance and
        // the path table.
        assert_eq!(INITIATION_NOISE_LEN, 244);
        assert_eq!(INITIATION_LEN, 284);
        // e 32 + (instance 8 + paths 128 + tag 16) = 184; plus 12 bytes in front and the MACs.
        assert_eq!(RESPONSE_LEN, 228);
        // A response is never larger than the initiation it answers: no amplification.
        const { assert!(RESPONSE_LEN < INITIATION_LEN) };
        // Type, reserved, index 8 + nonce 24 + cookie 16 + tag 16: WireGuard's 64.
        assert_eq!(COOKIE_REPLY_LEN, 64);
        assert_eq!(TRANSPORT_MIN_LEN, 32);
    }

    #[test]
    fn transport_known_bytes() {
        // Type 4, path 3, zero reserved, index 0x01020304, counter 0x05060708090a0b0c, then 17
        // bytes.
        let mut datagram = vec![4, 3, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
        datagram.extend_from_slice(&[0xee; 17]);
        let parsed = Envelope::parse(&datagram).unwrap();
        assert_eq!(
            parsed,
            Envelope::Transport {
                path_id: 3,
                receiver_index: 0x0102_0304,
                counter: 0x0506_0708_090a_0b0c,
                sealed: &[0xee; 17],
            }
        );
        let mut out = [0u8; 64];
        assert_eq!(parsed.emit(&mut out), Ok(33));
        assert_eq!(&out[..33], &datagram[..]);
    }

    #[test]
    fn response_known_bytes() {
        let mut datagram = vec![2, 0, 0, 0, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xfe];
        datagram.extend_from_slice(&[0x5a; RESPONSE_NOISE_LEN]);
        datagram.extend_from_slice(&[0x11; MAC_LEN]);
        datagram.extend_from_slice(&[0x22; MAC_LEN]);
        assert_eq!(
            Envelope::parse(&datagram),
            Ok(Envelope::Response {
                sender_index: 7,
                receiver_index: 0xffff_fffe,
                noise: &[0x5a; RESPONSE_NOISE_LEN],
                mac1: &[0x11; MAC_LEN],
                mac2: &[0x22; MAC_LEN],
            })
        );
    }

    #[test]
    fn cookie_reply_known_bytes() {
        let mut datagram = vec![3, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef];
        datagram.extend_from_slice(&[0x33; COOKIE_NONCE_LEN]);
        datagram.extend_from_slice(&[0x44; SEALED_COOKIE_LEN]);
        let parsed = Envelope::parse(&datagram).unwrap();
        assert_eq!(
            parsed,
            Envelope::CookieReply {
                receiver_index: 0xdead_beef,
                nonce: &[0x33; COOKIE_NONCE_LEN],
                sealed_cookie: &[0x44; SEALED_COOKIE_LEN],
            }
        );
        let mut out = [0u8; COOKIE_REPLY_LEN];
        assert_eq!(parsed.emit(&mut out), Ok(COOKIE_REPLY_LEN));
        assert_eq!(&out[..], &datagram[..]);
    }

    #[test]
    fn strict_parsing_rejects_each_fault() {
        let mut initiation = vec![1, 0, 0, 0, 0, 0, 0, 1];
        initiation.extend_from_slice(&[0; INITIATION_NOISE_LEN + 2 * MAC_LEN]);
        assert!(Envelope::parse(&initiation).is_ok());
        assert_eq!(Envelope::parse(&[]), Err(EnvelopeError::Empty));
        assert_eq!(Envelope::parse(&[5; 60]), Err(EnvelopeError::UnknownType(5)));
        assert_eq!(
            Envelope::parse(&initiation[..283]),
            Err(EnvelopeError::Length { kind: MessageKind::Initiation, expected: 284, found: 283 })
        );
        // The initiations of earlier formats (116 bytes before the MACs, 156 before the path
        // table) are refused by their length.
        for old in [116, 156] {
            assert_eq!(
                Envelope::parse(&initiation[..old]),
                Err(EnvelopeError::Length {
                    kind: MessageKind::Initiation,
                    expected: 284,
                    found: old
                })
            );
        }
        let mut long = initiation.clone();
        long.push(0);
        assert_eq!(
            Envelope::parse(&long),
            Err(EnvelopeError::Length { kind: MessageKind::Initiation, expected: 284, found: 285 })
        );
        assert_eq!(
            Envelope::parse(&[3, 0, 0, 0]),
            Err(EnvelopeError::Length { kind: MessageKind::CookieReply, expected: 64, found: 4 })
        );
        let mut reserved = initiation.clone();
        reserved[3] = 0x80;
        assert_eq!(Envelope::parse(&reserved), Err(EnvelopeError::ReservedNotZero));
        // A transport message's byte 1 is its path id; bytes 2 and 3 stay reserved.
        let mut transport = vec![4, 0xff, 0, 0];
        transport.extend_from_slice(&[0; 28]);
        assert!(matches!(
            Envelope::parse(&transport),
            Ok(Envelope::Transport { path_id: 0xff, .. })
        ));
        transport[2] = 1;
        assert_eq!(Envelope::parse(&transport), Err(EnvelopeError::ReservedNotZero));
        assert_eq!(Envelope::parse(&[4; 31]), Err(EnvelopeError::Truncated { found: 31 }));
        assert_eq!(
            Envelope::parse(&[2]),
            Err(EnvelopeError::Length { kind: MessageKind::Response, expected: 228, found: 1 })
        );
        let mut out = [0u8; 228];
        assert_eq!(
            Envelope::parse(&initiation).unwrap().emit(&mut out),
            Err(EnvelopeError::BufferTooSmall { needed: 284, available: 228 })
        );
    }

    proptest! {
        /// Whatever parses re-emits to exactly the input (the encoding is canonical).
        #[test]
        fn parse_emit_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..320),
                                 kind in 0usize..4) {
            let mut bytes = bytes;
            // Steer inputs into a valid shape so the round trip is exercised, not just rejection.
            if kind == 0 { bytes.resize(INITIATION_LEN, 9) }
            if kind == 1 && bytes.len() > 100 { bytes.resize(RESPONSE_LEN, 9) }
            if kind == 3 && bytes.len() > 100 { bytes.resize(COOKIE_REPLY_LEN, 9) }
            if let Some(first) = bytes.first_mut() {
                *first = [TYPE_INITIATION, TYPE_RESPONSE, TYPE_TRANSPORT, TYPE_COOKIE_REPLY][kind];
            }
            if bytes.len() >= 4 {
                // A transport message's byte 1 is its path id: any value.
                bytes[if kind == 2 { 2 } else { 1 }..4].fill(0);
            }
            match Envelope::parse(&bytes) {
                Ok(envelope) => {
                    let mut out = vec![0u8; envelope.len()];
                    prop_assert_eq!(envelope.emit(&mut out), Ok(bytes.len()));
                    prop_assert_eq!(&out, &bytes);
                }
                Err(e) => {
                    let expected_failure = match kind {
                        0 => false,
                        1 => bytes.len() != RESPONSE_LEN,
                        3 => bytes.len() != COOKIE_REPLY_LEN,
                        _ => bytes.len() < TRANSPORT_MIN_LEN,
                    };
                    prop_assert!(expected_failure, "{:?} for {:?}", e, bytes);
                }
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = Envelope::parse(&bytes);
        }
    }

    fn seeds_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus-seeds/envelope")
    }

    /// Replays the committed fuzz seeds (written by fuzz/gen_seeds.py, an encoder apart from this
    /// one) on stable Rust: `valid-*` must parse and re-emit identically, `invalid-*` must fail.
    #[test]
    fn fuzz_corpus_seeds() {
        let mut checked = 0;
        let dir = seeds_dir();
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let parsed = Envelope::parse(&bytes);
            if let Ok(envelope) = parsed {
                let mut out = vec![0u8; envelope.len()];
                envelope.emit(&mut out).unwrap();
                assert_eq!(out, bytes, "{name} re-emits differently");
            }
            if name.starts_with("valid-") {
                assert!(parsed.is_ok(), "{name} should parse: {parsed:?}");
            } else if name.starts_with("invalid-") {
                assert!(parsed.is_err(), "{name} should be rejected");
            }
            checked += 1;
        }
        assert!(checked >= 8, "only {checked} seeds in {}", dir.display());
    }
}
