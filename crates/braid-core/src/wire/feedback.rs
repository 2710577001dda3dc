//! The feedback frame: which path sequence numbers a receiver got on one path, and an RTT echo.
//!
//! ```text
//! feedback frame: 28 fixed bytes, then the ack ranges as variable-length integers
//!  0        1        2        3
//! +--------+--------+--------+--------+
//! |ver|type| path id| count  |reserved|   ver = 1, type = 1; count = ranges, 1..=16
//! +--------+--------+--------+--------+
//! |   largest acknowledged path seq   |   u64: largest of the first range
//! +             (u64)                 +
//! |                                   |
//! +-----------------------------------+
//! |            echo_ts_ns             |   u64: send timestamp being echoed
//! +             (u64)                 +
//! |                                   |
//! +-----------------------------------+
//! |           hold_time_ns            |   u64: receiver's hold time for that packet
//! +             (u64)                 +
//! |                                   |
//! +-----------------------------------+
//! | first range length (varint)  ...  |   largest - smallest of the first range
//! +-----------------------------------+
//! | gap (varint) | range length (varint) ... |   repeated count - 1 times
//! +------------------------------------------+
//! ```
//!
//! Integers are big-endian; varints are RFC 9000 §16 in their shortest form (see `cursor.rs`).
//! The range encoding is QUIC's ACK frame (RFC 9000 §19.3.1): ranges go in descending order,
//! each length is `largest - smallest`, and each gap is the count of missing numbers between two
//! ranges minus one: "Gap: ... the number of contiguous unacknowledged packets preceding the
//! packet number one lower than the smallest in the preceding ACK Range", i.e.
//! `gap = previous.smallest - largest - 2`, which is never negative because [`AckRanges`] keeps
//! ranges non-adjacent.
//!
//! Choices: the hold time is a full u64 so that every [`Feedback`] value round-trips (it costs 4
//! bytes over a u32 and a sub-second value needs no more); the decoder rejects zero ranges, more
//! than [`MAX_ACK_RANGES`], ranges or gaps reaching below sequence number 0, non-zero reserved
//! byte, non-minimal varints and bytes after the last range. The encoder rejects an empty range
//! set and lengths or gaps above 2^62 - 1 (the varint limit, unreachable by real sequence
//! numbers). Sizes: 29 bytes with one short range, 59 bytes with 16 ranges whose gaps and lengths
//! are below 64, 276 bytes at most.

use super::cursor::{varint_len, Reader, Writer};
use super::{expect_frame_type, first_byte, FrameType, WireError};
use std::fmt;

/// At most this many ack ranges travel in one feedback frame.
pub const MAX_ACK_RANGES: usize = 16;

/// Bytes before the first varint: first byte, path id, count, reserved, three u64 fields.
pub const FEEDBACK_FIXED_LEN: usize = 4 + 3 * 8;

/// Largest possible frame: the fixed part plus 2 * 16 - 1 varints of 8 bytes.
pub const FEEDBACK_MAX_LEN: usize = FEEDBACK_FIXED_LEN + (2 * MAX_ACK_RANGES - 1) * 8;

/// A closed range of path sequence numbers, `smallest..=largest`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckRange {
    pub smallest: u64,
    pub largest: u64,
}

impl AckRange {
    /// True when `seq` lies within `smallest..=largest`.
    pub fn contains(&self, seq: u64) -> bool {
        self.smallest <= seq && seq <= self.largest
    }
}

/// Up to [`MAX_ACK_RANGES`] disjoint, non-adjacent ranges in descending order (the first range
/// holds the largest sequence number received). Fixed capacity: no allocation.
///
/// Equality and `Debug` look only at the ranges held, not at unused slots.
#[derive(Clone, Copy, Default)]
pub struct AckRanges {
    len: u8,
    ranges: [AckRange; MAX_ACK_RANGES],
}

impl AckRanges {
    pub fn new() -> Self {
        Self::default()
    }
    /// Builds a set from ranges in descending order; `None` when [`AckRanges::push`] would
    /// refuse any of them.
    pub fn from_slice(ranges: &[AckRange]) -> Option<Self> {
        let mut set = Self::new();
        ranges.iter().all(|&r| set.push(r)).then_some(set)
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn as_slice(&self) -> &[AckRange] {
        &self.ranges[..self.len as usize]
    }
    /// The ranges, largest first.
    pub fn iter(&self) -> std::slice::Iter<'_, AckRange> {
        self.as_slice().iter()
    }
    /// The largest acknowledged sequence number.
    pub fn largest(&self) -> Option<u64> {
        self.as_slice().first().map(|r| r.largest)
    }
    /// The smallest acknowledged sequence number.
    pub fn smallest(&self) -> Option<u64> {
        self.as_slice().last().map(|r| r.smallest)
    }
    /// True when some range holds `seq`.
    pub fn contains(&self, seq: u64) -> bool {
        self.iter().any(|r| r.contains(seq))
    }
    /// Appends a range below the last one; returns false when full or out of order.
    pub fn push(&mut self, range: AckRange) -> bool {
        if self.len as usize == MAX_ACK_RANGES || range.smallest > range.largest {
            return false;
        }
        if let Some(last) = self.as_slice().last() {
            if range.largest.saturating_add(1) >= last.smallest {
                return false;
            }
        }
        self.ranges[self.len as usize] = range;
        self.len += 1;
        true
    }
}

impl PartialEq for AckRanges {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for AckRanges {}

impl fmt::Debug for AckRanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter().map(|r| r.smallest..=r.largest)).finish()
    }
}

impl<'a> IntoIterator for &'a AckRanges {
    type Item = &'a AckRange;
    type IntoIter = std::slice::Iter<'a, AckRange>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Per-path feedback: which path sequence numbers arrived, and an RTT echo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Feedback {
    pub path_id: u8,
    pub ranges: AckRanges,
    /// Send timestamp (sender clock, ns) of the packet that triggered this feedback: with
    /// `hold_time_ns`, a sender without per-packet state (or an observer) gets the RTT including
    /// the sender's queueing. Braid's sender keeps per-packet transmission times and takes its
    /// RTT samples from them (RFC 9002 section 5.1), using only the hold time from here.
    pub echo_ts_ns: u64,
    /// How long the receiver held that packet before sending this feedback, in ns.
    pub hold_time_ns: u64,
}

impl Feedback {
    /// Decodes a whole feedback frame; bytes after the last range are an error.
    pub fn parse(bytes: &[u8]) -> Result<Feedback, WireError> {
        expect_frame_type(bytes, FrameType::Feedback)?;
        let mut r = Reader::new(bytes);
        let _version_type = r.u8()?;
        let path_id = r.u8()?;
        let count = usize::from(r.u8()?);
        let reserved = r.u8()?;
        let largest = r.u64()?;
        let echo_ts_ns = r.u64()?;
        let hold_time_ns = r.u64()?;
        if reserved != 0 {
            return Err(WireError::ReservedNotZero);
        }
        if count == 0 {
            return Err(WireError::BadAckRanges("no ack ranges"));
        }
        if count > MAX_ACK_RANGES {
            return Err(WireError::TooManyRanges(count));
        }

        let mut ranges = AckRanges::new();
        let mut next_largest = largest;
        for i in 0..count {
            if i > 0 {
                let gap = r.varint()?;
                let previous_smallest = ranges.smallest().unwrap_or_default();
                next_largest = previous_smallest
                    .checked_sub(gap)
                    .and_then(|v| v.checked_sub(2))
                    .ok_or(WireError::BadAckRanges("gap reaches below zero"))?;
            }
            let length = r.varint()?;
            let smallest = next_largest
                .checked_sub(length)
                .ok_or(WireError::BadAckRanges("range reaches below zero"))?;
            if !ranges.push(AckRange { smallest, largest: next_largest }) {
                // Unreachable: a gap of at least 2 keeps decoded ranges ordered and apart.
                return Err(WireError::BadAckRanges("ranges overlap"));
            }
        }

        if !r.rest().is_empty() {
            return Err(WireError::TrailingBytes { expected: r.position(), found: bytes.len() });
        }
        Ok(Feedback { path_id, ranges, echo_ts_ns, hold_time_ns })
    }

    /// Writes the frame into the front of `buf`; returns the bytes written.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let largest = self.ranges.largest().ok_or(WireError::BadAckRanges("no ack ranges"))?;
        if let Some(v) = self.varints().find(|&v| varint_len(v).is_none()) {
            return Err(WireError::VarintTooLarge(v));
        }
        let needed = self.encoded_len();
        if buf.len() < needed {
            return Err(WireError::BufferTooSmall { needed, available: buf.len() });
        }
        let mut w = Writer::new(buf);
        w.u8(first_byte(FrameType::Feedback))?;
        w.u8(self.path_id)?;
        w.u8(self.ranges.len)?;
        w.u8(0)?;
        w.u64(largest)?;
        w.u64(self.echo_ts_ns)?;
        w.u64(self.hold_time_ns)?;
        for v in self.varints() {
            w.varint(v)?;
        }
        Ok(w.position())
    }

    /// Bytes [`Feedback::emit`] writes. A value too large for a varint counts as 8 bytes here;
    /// `emit` then refuses it.
    pub fn encoded_len(&self) -> usize {
        FEEDBACK_FIXED_LEN + self.varints().map(|v| varint_len(v).unwrap_or(8)).sum::<usize>()
    }

    /// The varints after the fixed part: first range length, then (gap, length) per range.
    fn varints(&self) -> impl Iterator<Item = u64> + '_ {
        let ranges = self.ranges.as_slice();
        // AckRanges::push keeps smallest <= largest and r.largest + 2 <= above.smallest, so
        // none of these subtractions saturates.
        let first = ranges.first().map(|r| r.largest.saturating_sub(r.smallest));
        let rest = ranges.iter().zip(ranges.iter().skip(1)).flat_map(|(above, r)| {
            let gap = above.smallest.saturating_sub(r.largest).saturating_sub(2);
            [gap, r.largest.saturating_sub(r.smallest)]
        });
        first.into_iter().chain(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn range(smallest: u64, largest: u64) -> AckRange {
        AckRange { smallest, largest }
    }

    fn feedback(ranges: &[AckRange]) -> Feedback {
        Feedback {
            path_id: 2,
            ranges: AckRanges::from_slice(ranges).unwrap(),
            echo_ts_ns: 0x1122_3344_5566_7788,
            hold_time_ns: 250_000, // 0x3d090
        }
    }

    fn encode(fb: &Feedback) -> Vec<u8> {
        let mut buf = [0u8; FEEDBACK_MAX_LEN];
        let n = fb.emit(&mut buf).unwrap();
        assert_eq!(n, fb.encoded_len());
        buf[..n].to_vec()
    }

    /// Ranges 1000..=1010, 990..=997, 0..=900. Hand-computed: first length 10 (0x0a); gap
    /// 1000 - 997 - 2 = 1 with length 7; gap 990 - 900 - 2 = 88 (two-byte varint 0x4058) with
    /// length 900 (0x4384).
    fn known() -> Feedback {
        feedback(&[range(1000, 1010), range(990, 997), range(0, 900)])
    }
    #[rustfmt::skip]
    const KNOWN_FRAME: [u8; 35] = [
        0x11, 0x02, 0x03, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xf2, // largest 1010
        0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, // echo_ts_ns
        0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xd0, 0x90, // hold_time_ns 250 us
        0x0a,                                           // first range length 10
        0x01, 0x07,                                     // gap 1, length 7
        0x40, 0x58, 0x43, 0x84,                         // gap 88, length 900
    ];

    #[test]
    fn known_answer() {
        assert_eq!(encode(&known()), KNOWN_FRAME);
        assert_eq!(Feedback::parse(&KNOWN_FRAME), Ok(known()));
    }

    #[test]
    fn encoded_sizes() {
        assert_eq!(encode(&feedback(&[range(5, 5)])).len(), 29);
        let sixteen: Vec<_> = (0..16u64).rev().map(|i| range(i * 10, i * 10 + 3)).collect();
        let fb = feedback(&sixteen);
        assert_eq!(fb.encoded_len(), 59);
        assert_eq!(Feedback::parse(&encode(&fb)), Ok(fb));
    }

    #[test]
    fn rejects_truncation_anywhere() {
        for len in 0..KNOWN_FRAME.len() {
            assert!(
                matches!(Feedback::parse(&KNOWN_FRAME[..len]), Err(WireError::Truncated { .. })),
                "len {len}"
            );
        }
        assert_eq!(
            Feedback::parse(&KNOWN_FRAME[..34]),
            Err(WireError::Truncated { needed: 35, available: 34 })
        );
    }

    #[test]
    fn rejects_bad_first_byte_and_reserved() {
        let mut bytes = KNOWN_FRAME;
        bytes[0] = 0x01;
        assert_eq!(Feedback::parse(&bytes), Err(WireError::UnsupportedVersion(0)));
        bytes[0] = 0x1f;
        assert_eq!(Feedback::parse(&bytes), Err(WireError::UnknownType(15)));
        bytes[0] = 0x10;
        assert_eq!(Feedback::parse(&bytes), Err(WireError::WrongType { expected: 1, found: 0 }));
        let mut bytes = KNOWN_FRAME;
        bytes[3] = 1;
        assert_eq!(Feedback::parse(&bytes), Err(WireError::ReservedNotZero));
    }

    #[test]
    fn rejects_bad_range_counts() {
        let mut bytes = KNOWN_FRAME;
        bytes[2] = 0;
        assert_eq!(Feedback::parse(&bytes), Err(WireError::BadAckRanges("no ack ranges")));
        bytes[2] = 17;
        assert_eq!(Feedback::parse(&bytes), Err(WireError::TooManyRanges(17)));
        bytes[2] = 2;
        assert_eq!(
            Feedback::parse(&bytes),
            Err(WireError::TrailingBytes { expected: 31, found: 35 })
        );
        bytes[2] = 4;
        assert_eq!(
            Feedback::parse(&bytes),
            Err(WireError::Truncated { needed: 36, available: 35 })
        );
    }

    #[test]
    fn rejects_ranges_below_zero() {
        // First range length 1011 > largest 1010.
        let mut bytes = KNOWN_FRAME[..28].to_vec();
        bytes[2] = 1;
        bytes.extend([0x43, 0xf3]);
        assert_eq!(
            Feedback::parse(&bytes),
            Err(WireError::BadAckRanges("range reaches below zero"))
        );
        // Last range length 901 > its largest 900.
        let mut bytes = KNOWN_FRAME;
        bytes[34] = 0x85;
        assert_eq!(
            Feedback::parse(&bytes),
            Err(WireError::BadAckRanges("range reaches below zero"))
        );
        // Gap 989 from smallest 990 leaves largest -1.
        let mut bytes = KNOWN_FRAME;
        bytes[31..33].copy_from_slice(&[0x43, 0xdd]);
        assert_eq!(Feedback::parse(&bytes), Err(WireError::BadAckRanges("gap reaches below zero")));
    }

    #[test]
    fn rejects_non_minimal_varint() {
        let mut bytes = KNOWN_FRAME.to_vec();
        bytes.splice(28..29, [0x40, 0x0a]);
        assert_eq!(Feedback::parse(&bytes), Err(WireError::NonMinimalVarint));
    }

    #[test]
    fn emit_rejects_unencodable() {
        let mut buf = [0u8; FEEDBACK_MAX_LEN];
        assert_eq!(
            Feedback::default().emit(&mut buf),
            Err(WireError::BadAckRanges("no ack ranges"))
        );
        let wide = feedback(&[range(0, u64::MAX)]);
        assert_eq!(wide.emit(&mut buf), Err(WireError::VarintTooLarge(u64::MAX)));
        assert_eq!(
            known().emit(&mut buf[..34]),
            Err(WireError::BufferTooSmall { needed: 35, available: 34 })
        );
    }

    #[test]
    fn ack_ranges_helpers() {
        let set = known().ranges;
        assert_eq!(set.smallest(), Some(0));
        assert!(set.contains(0) && set.contains(900) && set.contains(995) && set.contains(1010));
        assert!(!set.contains(901) && !set.contains(998) && !set.contains(1011));
        assert_eq!(set.iter().count(), 3);
        assert!(AckRanges::from_slice(&[range(5, 9), range(0, 4)]).is_none(), "adjacent");
        assert!(AckRanges::from_slice(&[range(0, 4), range(6, 9)]).is_none(), "ascending");
        assert_eq!(format!("{set:?}"), "[1000..=1010, 990..=997, 0..=900]");
    }

    /// Values spread over every varint length, all encodable.
    fn varint_value() -> impl Strategy<Value = u64> {
        prop_oneof![0..64u64, 0..16_384u64, 0..(1u64 << 30), 0..(1u64 << 62)]
    }

    fn any_feedback() -> impl Strategy<Value = Feedback> {
        let gaps_lengths =
            prop::collection::vec((varint_value(), varint_value()), 0..MAX_ACK_RANGES);
        let largest = prop_oneof![any::<u64>(), 0..10_000u64];
        (any::<u8>(), largest, varint_value(), gaps_lengths, any::<u64>(), any::<u64>()).prop_map(
            |(path_id, largest, first_len, rest, echo_ts_ns, hold_time_ns)| {
                let mut ranges = AckRanges::new();
                let mut smallest = largest.saturating_sub(first_len);
                ranges.push(range(smallest, largest));
                for (gap, len) in rest {
                    let Some(top) = smallest.checked_sub(gap).and_then(|v| v.checked_sub(2)) else {
                        break;
                    };
                    smallest = top.saturating_sub(len);
                    assert!(ranges.push(range(smallest, top)));
                }
                Feedback { path_id, ranges, echo_ts_ns, hold_time_ns }
            },
        )
    }

    /// A valid frame with one random byte overwritten and a random length change.
    fn mutated_frame() -> impl Strategy<Value = Vec<u8>> {
        (any_feedback(), any::<prop::sample::Index>(), any::<u8>(), -2i32..=2).prop_map(
            |(fb, at, byte, resize)| {
                let mut bytes = encode(&fb);
                let at = at.index(bytes.len());
                bytes[at] = byte;
                let len = (bytes.len() as i32 + resize).max(0) as usize;
                bytes.resize(len, 0);
                bytes
            },
        )
    }

    proptest! {
        #[test]
        fn round_trip(fb in any_feedback()) {
            let bytes = encode(&fb);
            prop_assert_eq!(Feedback::parse(&bytes), Ok(fb));
        }

        #[test]
        fn parse_never_panics(
            first in prop_oneof![Just(0x11u8), any::<u8>()],
            rest in prop::collection::vec(any::<u8>(), 0..300),
        ) {
            let mut bytes = vec![first];
            bytes.extend(rest);
            let _ = Feedback::parse(&bytes);
        }

        #[test]
        fn parsed_bytes_reemit_identically(bytes in mutated_frame()) {
            if let Ok(fb) = Feedback::parse(&bytes) {
                prop_assert_eq!(encode(&fb), bytes);
            }
        }
    }
}
