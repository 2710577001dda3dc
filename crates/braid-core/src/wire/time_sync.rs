//! The time-sync frame: one data packet's send timestamp, for packets that travel without one.
//!
//! ```text
//!  offset  size  field
//!       0     1  version (high nibble, = 1) | frame type (low nibble, = 3 for time sync)
//!       1     1  path id (the sender's; the data plane replaces it with the receiving path)
//!       2     6  reserved, must be zero
//!       8     8  path sequence number of the data packet it describes (u64)
//!      16     8  that packet's send timestamp, ns on the sender's clock (u64), as a data
//!                header's `send_ts_ns`
//! ```
//!
//! A data header carries its packet's send timestamp, from which the receiver samples each
//! path's one-way delay (the adaptive wait limit and delay equalisation,
//! [`crate::reorder::PathDelays`]). A compact data message (the data plane's 4-byte header)
//! has no room for it; instead the sender follows a data packet on the same path with this
//! frame every so often, and the receiver pairs it with that packet's arrival. The one-way delay
//! is a property of the path that changes with its queue, so samples a few milliseconds apart
//! serve as well as one per packet; the frame costs one small datagram per path per sample.

use super::cursor::{Reader, Writer};
use super::{expect_frame_type, first_byte, FrameType, WireError};

/// Length of a time-sync frame in bytes.
pub const TIME_SYNC_LEN: usize = 24;

/// The logical content of a time-sync frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeSync {
    pub path_id: u8,
    /// The data packet it describes: its path sequence number on `path_id`.
    pub path_seq: u64,
    /// That packet's send timestamp (its header's `send_ts_ns` had it carried one).
    pub send_ts_ns: u64,
}

impl TimeSync {
    /// Decodes a whole frame; rejects reserved bits and trailing bytes.
    pub fn parse(bytes: &[u8]) -> Result<TimeSync, WireError> {
        expect_frame_type(bytes, FrameType::TimeSync)?;
        let mut r = Reader::new(bytes);
        let _version_type = r.u8()?;
        let path_id = r.u8()?;
        if r.take(6)?.iter().any(|&b| b != 0) {
            return Err(WireError::ReservedNotZero);
        }
        let path_seq = r.u64()?;
        let send_ts_ns = r.u64()?;
        if !r.rest().is_empty() {
            return Err(WireError::TrailingBytes { expected: TIME_SYNC_LEN, found: bytes.len() });
        }
        Ok(TimeSync { path_id, path_seq, send_ts_ns })
    }

    /// Writes the frame into the front of `buf`; returns [`TIME_SYNC_LEN`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        if buf.len() < TIME_SYNC_LEN {
            return Err(WireError::BufferTooSmall { needed: TIME_SYNC_LEN, available: buf.len() });
        }
        let mut w = Writer::new(buf);
        w.u8(first_byte(FrameType::TimeSync))?;
        w.u8(self.path_id)?;
        for _ in 0..6 {
            w.u8(0)?;
        }
        w.u64(self.path_seq)?;
        w.u64(self.send_ts_ns)?;
        Ok(w.position())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame() -> TimeSync {
        TimeSync { path_id: 2, path_seq: 0x0102_0304_0506_0708, send_ts_ns: 0x1112_1314_1516_1718 }
    }

    #[test]
    fn round_trips_with_the_documented_layout() {
        let mut buf = [0u8; TIME_SYNC_LEN];
        assert_eq!(frame().emit(&mut buf), Ok(TIME_SYNC_LEN));
        assert_eq!(
            buf,
            [
                0x13, 2, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x12, 0x13, 0x14, 0x15,
                0x16, 0x17, 0x18
            ]
        );
        assert_eq!(TimeSync::parse(&buf), Ok(frame()));
    }

    #[test]
    fn rejects_malformed_frames() {
        let mut buf = [0u8; TIME_SYNC_LEN + 1];
        frame().emit(&mut buf).unwrap();
        assert!(matches!(TimeSync::parse(&buf), Err(WireError::TrailingBytes { .. })));
        assert!(matches!(
            TimeSync::parse(&buf[..TIME_SYNC_LEN - 1]),
            Err(WireError::Truncated { .. })
        ));
        let mut bad = buf;
        bad[7] = 1;
        assert_eq!(TimeSync::parse(&bad[..TIME_SYNC_LEN]), Err(WireError::ReservedNotZero));
        let mut bad = buf;
        bad[0] = 0x12;
        assert!(matches!(TimeSync::parse(&bad[..TIME_SYNC_LEN]), Err(WireError::WrongType { .. })));
        assert!(matches!(frame().emit(&mut [0u8; 8]), Err(WireError::BufferTooSmall { .. })));
    }
}
