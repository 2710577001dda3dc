//! Bounds-checked byte cursors for the codecs, and the variable-length integer of RFC 9000 §16.
//!
//! Every read and write goes through [`Reader`] or [`Writer`], which return a [`WireError`]
//! instead of indexing past the end, so the codecs above them cannot panic on any input.
//!
//! RFC 9000 §16: "The QUIC variable-length integer encoding reserves the two most significant
//! bits of the first byte to encode the base-2 logarithm of the integer encoding length in bytes.
//! The integer value is encoded on the remaining bits, in network byte order." Lengths are 1, 2,
//! 4 or 8 bytes, holding values up to 2^6-1, 2^14-1, 2^30-1 and 2^62-1. The RFC allows an
//! encoder to use a longer form than needed; we do not: the decoder rejects non-minimal forms
//! ([`WireError::NonMinimalVarint`]) so that every frame has exactly one encoding.

use super::WireError;

/// The largest value a variable-length integer holds: 2^62 - 1.
pub(crate) const VARINT_MAX: u64 = (1 << 62) - 1;

/// Encoded length of `value` in bytes, or `None` when it exceeds [`VARINT_MAX`].
pub(crate) const fn varint_len(value: u64) -> Option<usize> {
    if value < 1 << 6 {
        Some(1)
    } else if value < 1 << 14 {
        Some(2)
    } else if value < 1 << 30 {
        Some(4)
    } else if value <= VARINT_MAX {
        Some(8)
    } else {
        None
    }
}

/// Reads fields front to back from a borrowed byte string.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0 }
    }

    /// Bytes consumed so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// The bytes not yet consumed.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.bytes.get(self.pos..).unwrap_or_default()
    }

    fn truncated(&self, more: usize) -> WireError {
        WireError::Truncated { needed: self.pos.saturating_add(more), available: self.bytes.len() }
    }

    /// Consumes the next `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let rest = self.rest();
        let head = rest.get(..n).ok_or_else(|| self.truncated(n))?;
        self.pos += n;
        Ok(head)
    }

    /// Consumes the next `N` bytes as an array.
    pub(crate) fn array<const N: usize>(&mut self) -> Result<&'a [u8; N], WireError> {
        let rest = self.rest();
        let (head, _) = rest.split_first_chunk::<N>().ok_or_else(|| self.truncated(N))?;
        self.pos += N;
        Ok(head)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, WireError> {
        self.array::<1>().map(|&[b]| b)
    }

    pub(crate) fn u16(&mut self) -> Result<u16, WireError> {
        self.array().map(|&a| u16::from_be_bytes(a))
    }

    pub(crate) fn u64(&mut self) -> Result<u64, WireError> {
        self.array().map(|&a| u64::from_be_bytes(a))
    }

    /// Reads a variable-length integer, rejecting non-minimal encodings.
    pub(crate) fn varint(&mut self) -> Result<u64, WireError> {
        let first = *self.rest().first().ok_or_else(|| self.truncated(1))?;
        let len = 1usize << (first >> 6);
        let bytes = self.take(len)?;
        let value =
            bytes.iter().skip(1).fold(u64::from(first & 0x3f), |acc, &b| (acc << 8) | u64::from(b));
        if varint_len(value) != Some(len) {
            return Err(WireError::NonMinimalVarint);
        }
        Ok(value)
    }
}

/// Writes fields front to back into a caller buffer.
pub(crate) struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Writer { buf, pos: 0 }
    }

    /// Bytes written so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<(), WireError> {
        let available = self.buf.len();
        let end = self.pos.saturating_add(bytes.len());
        let dst = self
            .buf
            .get_mut(self.pos..end)
            .ok_or(WireError::BufferTooSmall { needed: end, available })?;
        dst.copy_from_slice(bytes);
        self.pos = end;
        Ok(())
    }

    pub(crate) fn u8(&mut self, value: u8) -> Result<(), WireError> {
        self.put(&[value])
    }

    pub(crate) fn u16(&mut self, value: u16) -> Result<(), WireError> {
        self.put(&value.to_be_bytes())
    }

    pub(crate) fn u64(&mut self, value: u64) -> Result<(), WireError> {
        self.put(&value.to_be_bytes())
    }

    /// Writes `value` as a variable-length integer in its shortest form.
    pub(crate) fn varint(&mut self, value: u64) -> Result<(), WireError> {
        let len = varint_len(value).ok_or(WireError::VarintTooLarge(value))?;
        // The two-bit prefix is log2(len), i.e. 0, 1, 2 or 3, in the top bits of the first byte.
        let prefix = u64::from(len.trailing_zeros()) << (len * 8 - 2);
        let bytes = (value | prefix).to_be_bytes();
        self.put(bytes.get(8 - len..).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(value: u64) -> Vec<u8> {
        let mut buf = [0u8; 8];
        let mut w = Writer::new(&mut buf);
        w.varint(value).unwrap();
        let n = w.position();
        buf[..n].to_vec()
    }

    #[test]
    fn varint_rfc9000_appendix_a1_vectors() {
        // RFC 9000 Appendix A.1 example values, in their shortest encodings.
        assert_eq!(encode(151_288_809_941_952_652), hex("c2197c5eff14e88c"));
        assert_eq!(encode(494_878_333), hex("9d7f3e7d"));
        assert_eq!(encode(15_293), hex("7bbd"));
        assert_eq!(encode(37), hex("25"));
        for bytes in ["c2197c5eff14e88c", "9d7f3e7d", "7bbd", "25"] {
            let b = hex(bytes);
            let mut r = Reader::new(&b);
            let v = r.varint().unwrap();
            assert_eq!(encode(v), b);
            assert!(r.rest().is_empty());
        }
    }

    #[test]
    fn varint_rejects_non_minimal_forms() {
        // RFC 9000 Appendix A.1: "the single byte 0x25 ... the two-byte sequence 0x40 0x25".
        for bytes in ["4025", "80000025", "c000000000000025", "403f", "80003fff"] {
            assert_eq!(
                Reader::new(&hex(bytes)).varint(),
                Err(WireError::NonMinimalVarint),
                "{bytes}"
            );
        }
    }

    #[test]
    fn varint_boundaries() {
        for (value, len) in [
            (0, 1),
            (63, 1),
            (64, 2),
            (16_383, 2),
            (16_384, 4),
            ((1 << 30) - 1, 4),
            (1 << 30, 8),
            (VARINT_MAX, 8),
        ] {
            let bytes = encode(value);
            assert_eq!(bytes.len(), len, "{value}");
            assert_eq!(Reader::new(&bytes).varint(), Ok(value));
        }
        let mut buf = [0u8; 8];
        assert_eq!(
            Writer::new(&mut buf).varint(VARINT_MAX + 1),
            Err(WireError::VarintTooLarge(VARINT_MAX + 1))
        );
    }

    #[test]
    fn varint_truncated() {
        assert_eq!(
            Reader::new(&[]).varint(),
            Err(WireError::Truncated { needed: 1, available: 0 })
        );
        assert_eq!(
            Reader::new(&hex("9d7f3e")).varint(),
            Err(WireError::Truncated { needed: 4, available: 3 })
        );
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }
}
