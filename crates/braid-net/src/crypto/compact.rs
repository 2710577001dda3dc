//! The compact transport message: a tunnelled data packet in 4 bytes of header and the AEAD tag,
//! so that an IPv4 path carries it with 48 bytes of overhead in all (outer IPv4 20, UDP 8,
//! header 4, tag 16; WireGuard needs 60, MPTCP's data-sequence option about 20 on top of TCP's).
//!
//! ```text
//!  bit 31     1: the compact form (a full message's first byte is its type, 1..=4, so its
//!                high bit is clear)
//!  bit 30     key phase: the low bit of the receiver's index of the keys that sealed it
//!  bits 29-28 attempt: 0 for a packet's first transmission, 1..=3 for its retransmissions
//!  bits 27-14 path sequence number, its low 14 bits
//!  bits 13-0  global sequence number, its low 14 bits
//!  then       ciphertext of the inner packet, and the 16-byte tag
//! ```
//!
//! What a full transport message carries and this one does not, and where it comes from instead:
//! - *The path* is the socket the datagram arrived on (from a validated remote; the server picks
//!   the peer by that remote, since there is no receiver index to look up). It still enters the
//!   nonce, so a datagram copied to another path fails authentication.
//! - *The keys*: the receiver index is gone; the key-phase bit names the current or the previous
//!   keys (a new index always differs in its low bit from the current keys' one, see
//!   [`super::session`]), and keys still waiting for confirmation are tried first. At most two
//!   AEAD attempts per datagram, and two only while a handshake awaits its confirmation.
//! - *The counter*: the nonce is the path's own sequence number with the attempt, so it never
//!   travels twice. Distinct for every transmission under one key: the core gives each new
//!   packet the path's next sequence number and each retransmission the same number with the
//!   next attempt; the keys refuse a (path sequence, attempt) they sealed before, and a fourth
//!   retransmission cannot be sealed at all.
//! - *Sequence numbers* travel as their low 14 bits and are expanded by the receiver to the
//!   value nearest the next one it expects (QUIC's packet-number decoding, RFC 9000 appendix
//!   A.3), the path's against its highest received, the global against the reorder stage's.
//!   That is exact while the sender keeps every number within 2^13 of what the receiver has
//!   seen, which a window of at most 8 192 packets per path (and across paths) guarantees; a
//!   wrong expansion of the path number fails authentication, and the receiver drops the
//!   datagram.
//! - *The timestamp, the frame type, the payload length and flags*: the frame is always data,
//!   its length is the datagram's; one-way-delay samples come from the full messages.
//!
//! The nonce is 12 bytes: `01`, the path's wire id, the attempt, a zero byte, then the path
//! sequence number in the cipher's order (as [`super::cipher::Cipher::nonce`]). Full messages'
//! nonces start with four zero bytes, so the two never meet under one key. The 4-byte header is
//! the associated data.

use super::envelope::TAG_LEN;

/// Bytes in front of the ciphertext.
pub const COMPACT_HEADER_LEN: usize = 4;
/// The shortest compact datagram: header and tag around an empty packet (which the data
/// plane never sends: an empty plaintext is a full message's keepalive).
pub const COMPACT_MIN_LEN: usize = COMPACT_HEADER_LEN + TAG_LEN;
/// Bits of each sequence number on the wire.
pub const SEQ_BITS: u32 = 14;
/// How far a sequence number may lie from the receiver's reference and still be expanded
/// exactly: half the truncated range.
pub const SEQ_REACH: u64 = 1 << (SEQ_BITS - 1);
/// Transmissions of one path sequence number beyond the first that the compact form can seal.
pub const MAX_ATTEMPT: u8 = 3;

const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;
const FORM_BIT: u32 = 1 << 31;
const PHASE_BIT: u32 = 1 << 30;

/// Whether a datagram is a compact message (its first byte has the high bit set).
pub fn is_compact(datagram: &[u8]) -> bool {
    datagram.first().is_some_and(|b| b & 0x80 != 0)
}

/// The fields of a compact header: sequence numbers as sent (full) or as read (truncated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactHeader {
    pub key_phase: bool,
    pub attempt: u8,
    pub path_seq: u64,
    pub global_seq: u64,
}

impl CompactHeader {
    /// The 4 header bytes: the numbers' low bits. `attempt` above [`MAX_ATTEMPT`] is the
    /// caller's error (checked by the keys before sealing).
    pub fn encode(&self) -> [u8; COMPACT_HEADER_LEN] {
        let word = FORM_BIT
            | if self.key_phase { PHASE_BIT } else { 0 }
            | u32::from(self.attempt & 3) << 28
            | ((self.path_seq & SEQ_MASK) as u32) << SEQ_BITS
            | (self.global_seq & SEQ_MASK) as u32;
        word.to_be_bytes()
    }

    /// Reads a datagram's header; the sequence numbers are still truncated ([`expand`]).
    /// `None` for a datagram too short to hold header and tag, or not in the compact form.
    pub fn decode(datagram: &[u8]) -> Option<CompactHeader> {
        if datagram.len() < COMPACT_MIN_LEN {
            return None;
        }
        let word = u32::from_be_bytes(datagram[..COMPACT_HEADER_LEN].try_into().ok()?);
        (word & FORM_BIT != 0).then(|| CompactHeader {
            key_phase: word & PHASE_BIT != 0,
            attempt: ((word >> 28) & 3) as u8,
            path_seq: u64::from(word >> SEQ_BITS) & SEQ_MASK,
            global_seq: u64::from(word) & SEQ_MASK,
        })
    }
}

/// Expands a sequence number's low [`SEQ_BITS`] bits to the value nearest `expected` (RFC 9000
/// appendix A.3, `DecodePacketNumber`, with the next expected number as the reference).
pub fn expand(expected: u64, truncated: u64) -> u64 {
    let window = 1u64 << SEQ_BITS;
    let half = window / 2;
    let candidate = (expected & !SEQ_MASK) | (truncated & SEQ_MASK);
    if candidate.saturating_add(half) <= expected && candidate < u64::MAX - window {
        candidate + window
    } else if candidate > expected.saturating_add(half) && candidate >= window {
        candidate - window
    } else {
        candidate
    }
}

/// Whether the receiver, expecting `expected`, expands `value`'s low bits back to `value`: the
/// condition a sender checks before sealing a number in compact form.
pub fn expands_exactly(expected: u64, value: u64) -> bool {
    expand(expected, value & SEQ_MASK) == value
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn header_round_trips_the_low_bits_with_the_documented_layout() {
        let h =
            CompactHeader { key_phase: true, attempt: 2, path_seq: 0x1_2345, global_seq: 0x3fff };
        let bytes = h.encode();
        // 1 | 1 | 10 | path 0x2345 (14 bits) | global 0x3fff (14 bits)
        let word = (1u32 << 31) | (1 << 30) | (2 << 28) | (0x2345 << 14) | 0x3fff;
        assert_eq!(bytes, word.to_be_bytes());
        let mut datagram = bytes.to_vec();
        datagram.extend([0u8; TAG_LEN]);
        let back = CompactHeader::decode(&datagram).unwrap();
        assert_eq!(back, CompactHeader { path_seq: 0x2345, ..h });
        assert!(is_compact(&datagram));
        assert!(CompactHeader::decode(&datagram[..COMPACT_MIN_LEN - 1]).is_none());
        datagram[0] = 4;
        assert!(!is_compact(&datagram) && CompactHeader::decode(&datagram).is_none());
    }

    /// RFC 9000 appendix A.3's rule on its example's numbers (largest received 0xa82f30ea, so
    /// 0xa82f30eb expected), with 14 bits: 0x1b32 is 5 561 behind, nearer than 0xa82f5b32.
    #[test]
    fn expansion_picks_the_nearest_candidate_and_handles_the_edges() {
        assert_eq!(expand(0xa82f_30eb, 0x1b32), 0xa82f_1b32);
        assert_eq!(expand(0x3ffe, 0x0001), 0x4001, "just past the wrap");
        assert_eq!(expand(0x4001, 0x3ffe), 0x3ffe, "just before it");
        assert_eq!(expand(0, 5), 5, "nothing below zero");
        assert_eq!(expand(0, SEQ_MASK), SEQ_MASK, "no wrap below zero");
        assert_eq!(expand(u64::MAX - 2, SEQ_MASK & (u64::MAX - 2)), u64::MAX - 2);
    }

    proptest! {
        /// Every value within [`SEQ_REACH`] of the reference comes back exactly.
        #[test]
        fn values_within_reach_expand_exactly(
            expected in 0u64..(1u64 << 62),
            delta in -(SEQ_REACH as i64 - 1)..(SEQ_REACH as i64),
        ) {
            let value = expected.saturating_add_signed(delta);
            prop_assert!(expands_exactly(expected, value), "{} from {}", value, expected);
        }

        /// Decoding never panics and reads only the compact form.
        #[test]
        fn decode_accepts_exactly_the_compact_form(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let decoded = CompactHeader::decode(&bytes);
            prop_assert_eq!(decoded.is_some(), bytes.len() >= COMPACT_MIN_LEN && bytes[0] & 0x80 != 0);
            if let Some(h) = decoded {
                prop_assert_eq!(&h.encode()[..], &bytes[..COMPACT_HEADER_LEN]);
            }
        }
    }
}
