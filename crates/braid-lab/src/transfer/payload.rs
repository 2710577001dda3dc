//! The transfer's payload: a deterministic pseudo-random byte stream the receiver regenerates
//! and compares byte for byte, so any corruption, loss, duplication or reordering that reaches
//! the application is caught at its exact offset (stronger than a digest at the end).
//!
//! Byte `o` of the stream with seed `s` is byte `o mod 8` (little-endian) of the 64-bit word
//! `w(o / 8)`, where `w(k)` is the `(k+1)`-th output of SplitMix64 started at `s` (Steele, Lea
//! and Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014; constants of
//! Vigna's reference `splitmix64.c`): `w(k) = mix(s + (k+1) * GAMMA)`. Every word is computed
//! from its index alone, so any slice of the stream can be produced without the bytes before
//! it, whatever sizes the socket reads return.

/// SplitMix64's increment, 2^64 / golden ratio.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The payload stream of one seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Payload {
    seed: u64,
}

impl Payload {
    pub fn new(seed: u64) -> Self {
        Payload { seed }
    }

    fn word(&self, k: u64) -> [u8; 8] {
        mix(self.seed.wrapping_add(k.wrapping_add(1).wrapping_mul(GAMMA))).to_le_bytes()
    }

    /// Writes stream bytes `offset .. offset + buf.len()` into `buf`.
    pub fn fill(&self, offset: u64, buf: &mut [u8]) {
        let mut pos = 0;
        let mut k = offset / 8;
        let skip = (offset % 8) as usize;
        if skip != 0 {
            let w = self.word(k);
            let n = (8 - skip).min(buf.len());
            buf[..n].copy_from_slice(&w[skip..skip + n]);
            pos = n;
            k += 1;
        }
        let mut chunks = buf[pos..].chunks_exact_mut(8);
        for chunk in &mut chunks {
            chunk.copy_from_slice(&self.word(k));
            k += 1;
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let n = rest.len();
            rest.copy_from_slice(&self.word(k)[..n]);
        }
    }

    /// Compares `data` with stream bytes from `offset`; returns the stream offset of the first
    /// byte that differs. `scratch` (at least `data.len()` bytes) holds the expected bytes, so
    /// checking allocates nothing.
    pub fn first_mismatch(&self, offset: u64, data: &[u8], scratch: &mut [u8]) -> Option<u64> {
        let expected = &mut scratch[..data.len()];
        self.fill(offset, expected);
        if expected == data {
            return None;
        }
        let i = data.iter().zip(expected.iter()).position(|(a, b)| a != b)?;
        Some(offset + i as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_word_is_splitmix64s_first_output() {
        // SplitMix64 seeded with 0: the first output is mix(GAMMA) = 0xE220A8397B1DCDAF, the
        // value Vigna's splitmix64.c prints first for x = 0.
        let mut buf = [0u8; 8];
        Payload::new(0).fill(0, &mut buf);
        assert_eq!(u64::from_le_bytes(buf), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn any_slice_equals_the_same_bytes_of_the_whole_stream() {
        let p = Payload::new(7);
        let mut whole = vec![0u8; 1000];
        p.fill(0, &mut whole);
        for (offset, len) in [(0, 1000), (5, 100), (3, 2), (8, 16), (13, 0), (999, 1), (17, 983)] {
            let mut part = vec![0u8; len];
            p.fill(offset as u64, &mut part);
            assert_eq!(part, &whole[offset..offset + len], "offset {offset} len {len}");
        }
    }

    #[test]
    fn seeds_give_different_streams() {
        let (mut a, mut b) = ([0u8; 64], [0u8; 64]);
        Payload::new(1).fill(0, &mut a);
        Payload::new(2).fill(0, &mut b);
        assert_ne!(a, b);
    }

    #[test]
    fn first_mismatch_names_the_exact_offset() {
        let p = Payload::new(3);
        let mut data = vec![0u8; 300];
        p.fill(1000, &mut data);
        let mut scratch = vec![0u8; 300];
        assert_eq!(p.first_mismatch(1000, &data, &mut scratch), None);
        data[123] ^= 0x40;
        data[200] ^= 0x01;
        assert_eq!(p.first_mismatch(1000, &data, &mut scratch), Some(1123));
        // The same bytes presented at the wrong offset (a reordering) are caught too.
        let mut shifted = vec![0u8; 300];
        p.fill(1008, &mut shifted);
        assert!(p.first_mismatch(1000, &shifted, &mut scratch).is_some());
    }
}
