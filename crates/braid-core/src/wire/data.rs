//! The data header: 32 bytes in front of every tunnelled packet.
//!
//! ```text
//!  offset  size  field
//!       0     1  version (high nibble, = 1) | frame type (low nibble, = 0 for data)
//!       1     1  flags (opaque to the codec: carried as is)
//!       2     1  path id
//!       3     1  reserved, must be zero
//!       4     2  payload length in bytes (u16)
//!       6     2  reserved, must be zero
//!       8     8  global sequence number (u64)
//!      16     8  path sequence number (u64)
//!      24     8  send timestamp, ns on the sender's clock (u64)
//!      32     -  payload, exactly `payload length` bytes
//! ```
//!
//! All integers are big-endian. One frame fills one UDP datagram, so [`DataHeader::parse`] takes
//! the whole datagram and rejects bytes after the declared payload
//! ([`WireError::TrailingBytes`]) rather than ignoring them: a length mismatch means a corrupt or
//! foreign datagram, and ignoring it would let two different datagrams decode to the same frame.

use super::cursor::{Reader, Writer};
use super::{expect_frame_type, first_byte, FrameType, WireError};

/// Length of the data header in bytes.
pub const DATA_HEADER_LEN: usize = 32;

/// Flag a receiver sets in the header it builds for a packet that came without a send
/// timestamp (a compact message of the data plane): `send_ts_ns` means nothing then, and the
/// packet's one-way delay comes from time-sync frames ([`super::TimeSync`]). Senders leave it
/// clear; a received full header that sets it is taken at its word (its packet gives no delay
/// sample, which costs nothing but that sample).
pub const FLAG_UNSTAMPED: u8 = 0x01;

/// The logical content of a data header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataHeader {
    pub flags: u8,
    pub path_id: u8,
    pub payload_len: u16,
    /// Sequence number across all paths of the tunnel (one per direction), for reordering.
    pub global_seq: u64,
    /// Sequence number on this path, for per-path loss detection and feedback.
    pub path_seq: u64,
    /// Sender clock, in ns, when the sender scheduled the packet onto this path (gave it its
    /// global sequence number), *before* the path's pacing queue. The receiver measures the
    /// one-way delay that reordering must absorb from it, so it includes the time the packet
    /// waited at the sender while later packets left on other paths; the user-space framework
    /// of Pieska et al. 2024 stamps its header the same way, before writing to the per-path
    /// socket (its section 2.2). The receiver also echoes it in feedback.
    pub send_ts_ns: u64,
}

impl DataHeader {
    /// Whether the header carries a send timestamp (see [`FLAG_UNSTAMPED`]).
    pub fn is_stamped(&self) -> bool {
        self.flags & FLAG_UNSTAMPED == 0
    }

    /// The header of a packet of `payload_len` bytes leaving on `path_id` (no flags). A length
    /// above the 16-bit field is clamped; tunnel packets are bounded by the MTU far below it.
    pub fn for_packet(
        path_id: usize,
        payload_len: u32,
        global_seq: u64,
        path_seq: u64,
        send_ts: crate::time::Instant,
    ) -> Self {
        DataHeader {
            flags: 0,
            path_id: path_id as u8,
            payload_len: payload_len.min(u32::from(u16::MAX)) as u16,
            global_seq,
            path_seq,
            send_ts_ns: send_ts.as_nanos(),
        }
    }

    /// Decodes a whole data frame: the header and exactly `payload_len` bytes of payload.
    ///
    /// Checks, in order: version and frame type, header length, reserved bytes, payload length
    /// against the bytes present, and no bytes after the payload.
    pub fn parse(bytes: &[u8]) -> Result<(DataHeader, &[u8]), WireError> {
        expect_frame_type(bytes, FrameType::Data)?;
        let mut r = Reader::new(bytes);
        let _version_type = r.u8()?;
        let flags = r.u8()?;
        let path_id = r.u8()?;
        let reserved_a = r.u8()?;
        let payload_len = r.u16()?;
        let reserved_b = r.u16()?;
        let global_seq = r.u64()?;
        let path_seq = r.u64()?;
        let send_ts_ns = r.u64()?;
        debug_assert_eq!(r.position(), DATA_HEADER_LEN);
        if reserved_a != 0 || reserved_b != 0 {
            return Err(WireError::ReservedNotZero);
        }
        let rest = r.rest();
        let declared = usize::from(payload_len);
        let payload = rest
            .get(..declared)
            .ok_or(WireError::PayloadLength { declared, available: rest.len() })?;
        if rest.len() != declared {
            return Err(WireError::TrailingBytes {
                expected: DATA_HEADER_LEN + declared,
                found: bytes.len(),
            });
        }
        let header = DataHeader { flags, path_id, payload_len, global_seq, path_seq, send_ts_ns };
        Ok((header, payload))
    }

    /// Writes the 32-byte header into the front of `buf`; returns the bytes written
    /// ([`DATA_HEADER_LEN`]). The caller places the payload after it.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        if buf.len() < DATA_HEADER_LEN {
            return Err(WireError::BufferTooSmall {
                needed: DATA_HEADER_LEN,
                available: buf.len(),
            });
        }
        let mut w = Writer::new(buf);
        w.u8(first_byte(FrameType::Data))?;
        w.u8(self.flags)?;
        w.u8(self.path_id)?;
        w.u8(0)?;
        w.u16(self.payload_len)?;
        w.u16(0)?;
        w.u64(self.global_seq)?;
        w.u64(self.path_seq)?;
        w.u64(self.send_ts_ns)?;
        Ok(w.position())
    }

    /// Length of the whole frame this header announces: header plus payload.
    pub fn frame_len(&self) -> usize {
        DATA_HEADER_LEN + usize::from(self.payload_len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Hand-computed from the layout in the module comment.
    const KNOWN_HEADER: DataHeader = DataHeader {
        flags: 0xa5,
        path_id: 3,
        payload_len: 4,
        global_seq: 0x0102_0304_0506_0708,
        path_seq: 42,
        send_ts_ns: 1_000_000_000, // 0x3b9aca00
    };
    #[rustfmt::skip]
    const KNOWN_FRAME: [u8; 36] = [
        0x10, 0xa5, 0x03, 0x00, 0x00, 0x04, 0x00, 0x00,
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a,
        0x00, 0x00, 0x00, 0x00, 0x3b, 0x9a, 0xca, 0x00,
        0xde, 0xad, 0xbe, 0xef,
    ];

    fn frame(header: &DataHeader, payload: &[u8]) -> Vec<u8> {
        let mut buf = vec![0u8; header.frame_len()];
        assert_eq!(header.emit(&mut buf), Ok(DATA_HEADER_LEN));
        buf[DATA_HEADER_LEN..].copy_from_slice(payload);
        buf
    }

    #[test]
    fn known_answer() {
        assert_eq!(frame(&KNOWN_HEADER, &[0xde, 0xad, 0xbe, 0xef]), KNOWN_FRAME);
        let (header, payload) = DataHeader::parse(&KNOWN_FRAME).unwrap();
        assert_eq!(header, KNOWN_HEADER);
        assert_eq!(payload, [0xde, 0xad, 0xbe, 0xef]);
    }

    #[test]
    fn empty_payload() {
        let header = DataHeader { payload_len: 0, ..KNOWN_HEADER };
        let bytes = frame(&header, &[]);
        assert_eq!(DataHeader::parse(&bytes), Ok((header, &[][..])));
    }

    #[test]
    fn rejects_truncated_header() {
        assert_eq!(DataHeader::parse(&[]), Err(WireError::Truncated { needed: 1, available: 0 }));
        assert_eq!(
            DataHeader::parse(&KNOWN_FRAME[..31]),
            Err(WireError::Truncated { needed: 32, available: 31 })
        );
    }

    #[test]
    fn rejects_bad_first_byte() {
        let mut bytes = KNOWN_FRAME;
        bytes[0] = 0x20;
        assert_eq!(DataHeader::parse(&bytes), Err(WireError::UnsupportedVersion(2)));
        bytes[0] = 0x17;
        assert_eq!(DataHeader::parse(&bytes), Err(WireError::UnknownType(7)));
        bytes[0] = 0x11;
        assert_eq!(DataHeader::parse(&bytes), Err(WireError::WrongType { expected: 0, found: 1 }));
    }

    #[test]
    fn rejects_reserved_bits() {
        for at in [3, 6, 7] {
            let mut bytes = KNOWN_FRAME;
            bytes[at] = 0x80;
            assert_eq!(DataHeader::parse(&bytes), Err(WireError::ReservedNotZero), "byte {at}");
        }
    }

    #[test]
    fn rejects_payload_length_mismatch() {
        assert_eq!(
            DataHeader::parse(&KNOWN_FRAME[..35]),
            Err(WireError::PayloadLength { declared: 4, available: 3 })
        );
        let mut long = KNOWN_FRAME.to_vec();
        long.push(0);
        assert_eq!(
            DataHeader::parse(&long),
            Err(WireError::TrailingBytes { expected: 36, found: 37 })
        );
    }

    #[test]
    fn emit_rejects_small_buffer() {
        let mut buf = [0u8; 31];
        assert_eq!(
            KNOWN_HEADER.emit(&mut buf),
            Err(WireError::BufferTooSmall { needed: 32, available: 31 })
        );
    }

    fn any_header() -> impl Strategy<Value = DataHeader> {
        (any::<u8>(), any::<u8>(), 0..=2048u16, any::<u64>(), any::<u64>(), any::<u64>()).prop_map(
            |(flags, path_id, payload_len, global_seq, path_seq, send_ts_ns)| DataHeader {
                flags,
                path_id,
                payload_len,
                global_seq,
                path_seq,
                send_ts_ns,
            },
        )
    }

    /// A valid frame with one random byte overwritten and a random length change.
    fn mutated_frame() -> impl Strategy<Value = Vec<u8>> {
        (any_header(), any::<prop::sample::Index>(), any::<u8>(), -2i32..=2).prop_map(
            |(header, at, byte, resize)| {
                let mut bytes = frame(&header, &vec![0x5a; usize::from(header.payload_len)]);
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
        fn round_trip(header in any_header(), fill in any::<u8>()) {
            let payload = vec![fill; usize::from(header.payload_len)];
            let bytes = frame(&header, &payload);
            prop_assert_eq!(DataHeader::parse(&bytes), Ok((header, &payload[..])));
        }

        #[test]
        fn parse_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..100)) {
            let _ = DataHeader::parse(&bytes);
        }

        #[test]
        fn parsed_bytes_reemit_identically(bytes in mutated_frame()) {
            if let Ok((header, payload)) = DataHeader::parse(&bytes) {
                prop_assert_eq!(frame(&header, payload), bytes);
            }
        }
    }
}
