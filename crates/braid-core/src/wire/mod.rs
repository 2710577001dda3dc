//! The tunnel's wire format: a data header in front of each tunnelled packet, and a feedback
//! frame the receiver returns on each path.
//!
//! Layout (network byte order), version 1:
//!
//! ```text
//! data header (32 bytes), followed by payload_len bytes of payload
//!  0      1      2      3      4      5      6      7
//! +------+------+------+------+------+------+------+------+
//! |ver|ty| flags| path |  rsv | payload_len |   reserved  |
//! +------+------+------+------+------+------+------+------+
//! |                    global sequence number             |
//! +-------------------------------------------------------+
//! |                    path sequence number               |
//! +-------------------------------------------------------+
//! |              send timestamp (ns, sender clock)        |
//! +-------------------------------------------------------+
//! ```
//!
//! Field rules for the data header are in [`data`]; the feedback frame layout is documented in
//! [`feedback`], the path probe's in [`probe`], the time-sync frame's in [`time_sync`]; what the daemon's encryption adds around each
//! frame in [`overhead`]. Representations follow smoltcp: [`DataHeader`] and [`Feedback`] are the logical
//! content, with `parse` returning a typed [`WireError`] on any malformed input and `emit` writing
//! into a caller buffer.
//!
//! Decoding is strict and canonical: every byte string has at most one decoding, and a string that
//! decodes re-encodes to exactly the same bytes. Reserved bits must be zero, trailing bytes after a
//! frame are an error (one frame per UDP datagram), and variable-length integers must use their
//! shortest form. Decoders never panic; `fuzz/` at the repository root holds the fuzz targets.

mod cursor;
pub mod data;
pub mod feedback;
pub mod overhead;
pub mod probe;
pub mod time_sync;

pub use data::{DataHeader, DATA_HEADER_LEN, FLAG_UNSTAMPED};
pub use feedback::{AckRange, AckRanges, Feedback, MAX_ACK_RANGES};
pub use probe::{Probe, ProbeKind, PROBE_LEN};
pub use time_sync::{TimeSync, TIME_SYNC_LEN};

/// Protocol version carried in the high nibble of the first byte.
pub const VERSION: u8 = 1;

/// Frame types carried in the low nibble of the first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FrameType {
    Data = 0,
    Feedback = 1,
    Probe = 2,
    TimeSync = 3,
}

/// Why a byte string is not a valid frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("frame truncated: need {needed} bytes, have {available}")]
    Truncated { needed: usize, available: usize },
    #[error("unsupported version {0} (this build speaks version 1)")]
    UnsupportedVersion(u8),
    #[error("unknown frame type {0}")]
    UnknownType(u8),
    #[error("frame type {found} where {expected} was expected")]
    WrongType { expected: u8, found: u8 },
    #[error("reserved field is not zero")]
    ReservedNotZero,
    #[error("payload length {declared} exceeds the {available} bytes present")]
    PayloadLength { declared: usize, available: usize },
    #[error("ack ranges malformed: {0}")]
    BadAckRanges(&'static str),
    #[error("too many ack ranges: {0} (at most 16)")]
    TooManyRanges(usize),
    #[error("output buffer too small: need {needed} bytes, have {available}")]
    BufferTooSmall { needed: usize, available: usize },
    #[error("{found} bytes where the frame ends after {expected}")]
    TrailingBytes { expected: usize, found: usize },
    #[error("variable-length integer not in its shortest form")]
    NonMinimalVarint,
    #[error("value {0} exceeds the variable-length integer limit 2^62 - 1")]
    VarintTooLarge(u64),
}

/// Reads the frame type of a frame without validating the rest.
pub fn frame_type(bytes: &[u8]) -> Result<FrameType, WireError> {
    let first = *bytes.first().ok_or(WireError::Truncated { needed: 1, available: 0 })?;
    let version = first >> 4;
    if version != VERSION {
        return Err(WireError::UnsupportedVersion(version));
    }
    match first & 0x0f {
        0 => Ok(FrameType::Data),
        1 => Ok(FrameType::Feedback),
        2 => Ok(FrameType::Probe),
        3 => Ok(FrameType::TimeSync),
        t => Err(WireError::UnknownType(t)),
    }
}

/// Checks that `bytes` starts a frame of this version and of type `expected`.
pub(crate) fn expect_frame_type(bytes: &[u8], expected: FrameType) -> Result<(), WireError> {
    let found = frame_type(bytes)?;
    if found != expected {
        return Err(WireError::WrongType { expected: expected as u8, found: found as u8 });
    }
    Ok(())
}

/// The first byte of a frame of type `ty`: version in the high nibble, type in the low nibble.
pub(crate) const fn first_byte(ty: FrameType) -> u8 {
    (VERSION << 4) | ty as u8
}
