//! The path probe: a 16-byte frame that keeps a quiet path's liveness known.
//!
//! ```text
//!  offset  size  field
//!       0     1  version (high nibble, = 1) | frame type (low nibble, = 2 for probe)
//!       1     1  kind: 0 = request, 1 = response
//!       2     1  path id
//!       3     5  reserved, must be zero
//!       8     8  timestamp, ns on the requester's clock (u64); a response echoes the request's
//! ```
//!
//! A tunnel endpoint sends a request on a path it has heard nothing on for a while; the peer
//! answers on the same path at once. Anything authenticated that arrives on a path proves it
//! alive, so a busy path never needs probes; a quiet one (CPF keeps the expensive path idle under
//! light load) is probed so that failover can use it. MP-DCCP's path manager keeps paths alive the
//! same way with DCCP-Ack probes (RFC 4340 section 11.6 keep-alive), and the echoed timestamp gives
//! an RTT sample on a path that carries no data (draft-ietf-tsvwg-multipath-dccp, section 3.6).

use super::cursor::{Reader, Writer};
use super::{expect_frame_type, first_byte, FrameType, WireError};

/// Length of a probe frame in bytes.
pub const PROBE_LEN: usize = 16;

/// Request or response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeKind {
    Request = 0,
    Response = 1,
}

/// The logical content of a probe frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    pub kind: ProbeKind,
    pub path_id: u8,
    /// The requester's clock when it sent the request; a response carries the request's value.
    pub timestamp_ns: u64,
}

impl Probe {
    /// Decodes a whole probe frame; rejects reserved bits, unknown kinds and trailing bytes.
    pub fn parse(bytes: &[u8]) -> Result<Probe, WireError> {
        expect_frame_type(bytes, FrameType::Probe)?;
        let mut r = Reader::new(bytes);
        let _version_type = r.u8()?;
        let kind = match r.u8()? {
            0 => ProbeKind::Request,
            1 => ProbeKind::Response,
            _ => return Err(WireError::ReservedNotZero),
        };
        let path_id = r.u8()?;
        if r.take(5)?.iter().any(|&b| b != 0) {
            return Err(WireError::ReservedNotZero);
        }
        let timestamp_ns = r.u64()?;
        if !r.rest().is_empty() {
            return Err(WireError::TrailingBytes { expected: PROBE_LEN, found: bytes.len() });
        }
        Ok(Probe { kind, path_id, timestamp_ns })
    }

    /// Writes the frame into the front of `buf`; returns [`PROBE_LEN`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        if buf.len() < PROBE_LEN {
            return Err(WireError::BufferTooSmall { needed: PROBE_LEN, available: buf.len() });
        }
        let mut w = Writer::new(buf);
        w.u8(first_byte(FrameType::Probe))?;
        w.u8(self.kind as u8)?;
        w.u8(self.path_id)?;
        for _ in 0..5 {
            w.u8(0)?;
        }
        w.u64(self.timestamp_ns)?;
        Ok(w.position())
    }

    /// The response a peer returns for this request.
    pub fn response(&self) -> Probe {
        Probe { kind: ProbeKind::Response, ..*self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Probe {
        Probe { kind: ProbeKind::Request, path_id: 3, timestamp_ns: 0x0102_0304_0506_0708 }
    }

    #[test]
    fn round_trips_with_the_documented_layout() {
        let mut buf = [0u8; PROBE_LEN];
        assert_eq!(request().emit(&mut buf), Ok(PROBE_LEN));
        assert_eq!(buf, [0x12, 0, 3, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(Probe::parse(&buf), Ok(request()));
        let resp = request().response();
        resp.emit(&mut buf).unwrap();
        assert_eq!(buf[1], 1);
        assert_eq!(Probe::parse(&buf).unwrap().timestamp_ns, request().timestamp_ns);
    }

    #[test]
    fn rejects_malformed_frames() {
        let mut buf = [0u8; PROBE_LEN + 1];
        request().emit(&mut buf).unwrap();
        assert!(matches!(Probe::parse(&buf), Err(WireError::TrailingBytes { .. })));
        assert!(matches!(Probe::parse(&buf[..PROBE_LEN - 1]), Err(WireError::Truncated { .. })));
        let mut bad = buf;
        bad[1] = 2;
        assert_eq!(Probe::parse(&bad[..PROBE_LEN]), Err(WireError::ReservedNotZero));
        let mut bad = buf;
        bad[5] = 1;
        assert_eq!(Probe::parse(&bad[..PROBE_LEN]), Err(WireError::ReservedNotZero));
        let mut bad = buf;
        bad[0] = 0x10;
        assert!(matches!(Probe::parse(&bad[..PROBE_LEN]), Err(WireError::WrongType { .. })));
        assert!(matches!(request().emit(&mut [0u8; 4]), Err(WireError::BufferTooSmall { .. })));
    }
}
