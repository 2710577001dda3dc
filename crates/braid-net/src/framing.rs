//! Envelopes on a byte stream: each one behind its length, `u16 big-endian | envelope`, the
//! framing of DNS over TCP (RFC 1035 section 4.2.2) and of WireGuard-over-TCP tools. The
//! envelope is exactly the datagram the UDP transport sends (handshake message or sealed
//! transport frame), so the session and the frame parsers do not know which transport carried
//! it.
//!
//! The reader never trusts the stream: a length of zero or above the largest envelope the
//! tunnel makes is a protocol error, reported once, after which the caller closes the
//! connection (the stream has lost its frame boundaries and nothing after can be believed).
//! The writer holds what the socket has not taken yet, up to a bound; the caller counts a
//! frame that would exceed it as dropped.

use std::io;

/// Bytes of the length in front of each envelope.
pub const LENGTH_PREFIX_BYTES: usize = 2;

/// A stream that cannot be framed any more.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("frame length {len} outside 1..={max}")]
    BadLength { len: usize, max: usize },
}

/// Reassembles envelopes from what a stream socket returns, in whatever pieces it comes.
#[derive(Debug)]
pub struct FrameReader {
    buf: Vec<u8>,
    /// Start of the first byte not yet handed out.
    start: usize,
    /// End of the bytes read.
    end: usize,
    max_frame: usize,
}

impl FrameReader {
    /// A reader for envelopes of at most `max_frame` bytes, reading up to `read_bytes` per
    /// call (at least one whole frame).
    pub fn new(max_frame: usize, read_bytes: usize) -> FrameReader {
        let cap = read_bytes.max(LENGTH_PREFIX_BYTES + max_frame);
        FrameReader { buf: vec![0; cap], start: 0, end: 0, max_frame }
    }

    /// Reads once through `read` (given the free space, returning the bytes it wrote; 0 means
    /// the peer closed). The unread rest is moved to the front first when the free space could
    /// not hold a whole frame.
    pub fn read_from(
        &mut self,
        read: impl FnOnce(&mut [u8]) -> io::Result<usize>,
    ) -> io::Result<usize> {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        } else if self.buf.len() - self.end < LENGTH_PREFIX_BYTES + self.max_frame {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let n = read(&mut self.buf[self.end..])?;
        self.end += n.min(self.buf.len() - self.end);
        Ok(n)
    }

    /// The next whole envelope, if the bytes read hold one; decrypted in place by the caller.
    pub fn next_frame(&mut self) -> Result<Option<&mut [u8]>, FrameError> {
        let avail = &self.buf[self.start..self.end];
        let Some(prefix) = avail.first_chunk::<LENGTH_PREFIX_BYTES>() else { return Ok(None) };
        let len = usize::from(u16::from_be_bytes(*prefix));
        if len == 0 || len > self.max_frame {
            return Err(FrameError::BadLength { len, max: self.max_frame });
        }
        if avail.len() < LENGTH_PREFIX_BYTES + len {
            return Ok(None);
        }
        let from = self.start + LENGTH_PREFIX_BYTES;
        self.start = from + len;
        Ok(Some(&mut self.buf[from..from + len]))
    }

    /// Bytes read and not handed out yet (a partial frame).
    pub fn buffered(&self) -> usize {
        self.end - self.start
    }
}

/// Envelopes waiting for a stream socket to take them.
#[derive(Debug)]
pub struct FrameWriter {
    buf: Vec<u8>,
    /// Bytes at the front of `buf` the socket has taken.
    sent: usize,
    limit: usize,
}

impl FrameWriter {
    /// A writer holding at most `limit` bytes.
    pub fn new(limit: usize) -> FrameWriter {
        FrameWriter { buf: Vec::new(), sent: 0, limit }
    }

    /// Appends one envelope of at most `max_len` bytes, written by `fill` into the slice it is
    /// given and returning the bytes it wrote (0: nothing to send). Returns false, appending
    /// nothing, when the writer cannot take `max_len` more bytes or `max_len` does not fit the
    /// length prefix.
    pub fn push(&mut self, max_len: usize, fill: impl FnOnce(&mut [u8]) -> usize) -> bool {
        if max_len > usize::from(u16::MAX)
            || self.pending() + LENGTH_PREFIX_BYTES + max_len > self.limit
        {
            return false;
        }
        let at = self.buf.len();
        self.buf.resize(at + LENGTH_PREFIX_BYTES + max_len, 0);
        let n = fill(&mut self.buf[at + LENGTH_PREFIX_BYTES..]).min(max_len);
        if n == 0 {
            self.buf.truncate(at);
            return true;
        }
        self.buf[at..at + LENGTH_PREFIX_BYTES].copy_from_slice(&(n as u16).to_be_bytes());
        self.buf.truncate(at + LENGTH_PREFIX_BYTES + n);
        true
    }

    /// Hands the socket what it will take through `send` (returning the bytes it took, or
    /// `WouldBlock` when it takes none). Keeps the rest for the next call.
    pub fn flush(&mut self, mut send: impl FnMut(&[u8]) -> io::Result<usize>) -> io::Result<()> {
        let mut result = Ok(());
        while self.sent < self.buf.len() {
            match send(&self.buf[self.sent..]) {
                Ok(0) => break,
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if self.sent == self.buf.len() {
            self.buf.clear();
        } else {
            self.buf.drain(..self.sent);
        }
        self.sent = 0;
        result
    }

    /// Bytes waiting for the socket.
    pub fn pending(&self) -> usize {
        self.buf.len() - self.sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(payloads: &[&[u8]]) -> Vec<u8> {
        let mut w = FrameWriter::new(1 << 20);
        for p in payloads {
            assert!(w.push(p.len(), |b| {
                b[..p.len()].copy_from_slice(p);
                p.len()
            }));
        }
        let mut out = Vec::new();
        w.flush(|b| {
            out.extend_from_slice(b);
            Ok(b.len())
        })
        .unwrap();
        out
    }

    /// Feeds `stream` to a reader in pieces of `piece` bytes; collects every frame.
    fn read_in_pieces(stream: &[u8], piece: usize, max: usize) -> Result<Vec<Vec<u8>>, FrameError> {
        let mut r = FrameReader::new(max, 64);
        let mut frames = Vec::new();
        for chunk in stream.chunks(piece) {
            r.read_from(|b| {
                b[..chunk.len()].copy_from_slice(chunk);
                Ok(chunk.len())
            })
            .unwrap();
            while let Some(f) = r.next_frame()? {
                frames.push(f.to_vec());
            }
        }
        assert_eq!(r.buffered(), 0, "nothing left over");
        Ok(frames)
    }

    #[test]
    fn the_length_prefix_is_big_endian() {
        let wire = framed(&[&[7u8; 300]]);
        // 300 = 0x012c.
        assert_eq!(&wire[..2], &[0x01, 0x2c]);
        assert_eq!(wire.len(), 302);
    }

    #[test]
    fn frames_split_across_reads_and_coalesced_in_one_read_come_out_whole() {
        let payloads: [&[u8]; 3] = [b"first", &[9u8; 100], b"x"];
        let wire = framed(&payloads);
        let want: Vec<Vec<u8>> = payloads.iter().map(|p| p.to_vec()).collect();
        // One byte at a time: every frame and every length prefix is split.
        assert_eq!(read_in_pieces(&wire, 1, 200).unwrap(), want);
        // Odd pieces: some reads end mid-prefix, some carry parts of two frames.
        assert_eq!(read_in_pieces(&wire, 7, 200).unwrap(), want);
        // All in one read.
        assert_eq!(read_in_pieces(&wire, wire.len(), 200).unwrap(), want);
    }

    #[test]
    fn a_long_stream_through_a_small_buffer_keeps_its_frames() {
        // 1000 frames of 1..=50 bytes through a 64-byte read buffer: the unread rest moves to
        // the front again and again.
        let payloads: Vec<Vec<u8>> =
            (0..1000u32).map(|k| vec![k as u8; (k % 50 + 1) as usize]).collect();
        let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
        let wire = framed(&refs);
        assert_eq!(read_in_pieces(&wire, 13, 50).unwrap(), payloads);
    }

    #[test]
    fn zero_and_oversized_lengths_are_protocol_errors() {
        assert_eq!(
            read_in_pieces(&[0, 0, 1, 2], 4, 100),
            Err(FrameError::BadLength { len: 0, max: 100 })
        );
        // 101 > the 100-byte maximum: refused as soon as the prefix is in, before the body.
        assert_eq!(
            read_in_pieces(&[0, 101], 2, 100),
            Err(FrameError::BadLength { len: 101, max: 100 })
        );
        // The largest allowed frame passes.
        let wire = framed(&[&[1u8; 100]]);
        assert_eq!(read_in_pieces(&wire, 3, 100).unwrap().len(), 1);
    }

    #[test]
    fn a_peer_closing_reads_zero() {
        let mut r = FrameReader::new(100, 64);
        assert_eq!(r.read_from(|_| Ok(0)).unwrap(), 0);
        assert_eq!(r.next_frame(), Ok(None));
    }

    #[test]
    fn the_writer_keeps_what_the_socket_did_not_take_and_refuses_beyond_its_limit() {
        let mut w = FrameWriter::new(20);
        assert!(w.push(8, |b| {
            b[..3].copy_from_slice(b"abc");
            3
        }));
        assert_eq!(w.pending(), 5, "prefix and the 3 bytes written, not the 8 reserved");
        assert!(!w.push(14, |_| unreachable!()), "5 + 2 + 14 > 20");
        assert!(w.push(13, |_| 0), "nothing written, nothing queued");
        assert_eq!(w.pending(), 5);
        let mut got = Vec::new();
        // The socket takes 2 bytes, then would block.
        let mut budget = 2;
        w.flush(|b| {
            if budget == 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = b.len().min(budget);
            budget -= n;
            got.extend_from_slice(&b[..n]);
            Ok(n)
        })
        .unwrap();
        assert_eq!(w.pending(), 3);
        w.flush(|b| {
            got.extend_from_slice(b);
            Ok(b.len())
        })
        .unwrap();
        assert_eq!(got, [0, 3, b'a', b'b', b'c']);
        assert_eq!(w.pending(), 0);
        let broken = w.push(1, |b| {
            b[0] = 1;
            1
        });
        assert!(broken);
        let e = w.flush(|_| Err(io::ErrorKind::BrokenPipe.into())).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
    }
}
