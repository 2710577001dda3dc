//! FNV-1a, 64 bits: a small, stable, dependency-free hash for naming scenarios and specs.
//! Not a defence against anyone forging collisions; it tells honest inputs apart.

/// The running state of a 64-bit FNV-1a hash.
#[derive(Debug, Clone, Copy)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Self::new()
    }
}

impl Fnv1a {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    pub fn new() -> Self {
        Fnv1a(Self::OFFSET)
    }

    pub fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    /// Adds a named field, length-prefixed so that ("ab", "c") and ("a", "bc") differ.
    pub fn field(&mut self, name: &str, value: &str) {
        for part in [name, value] {
            self.bytes(&(part.len() as u64).to_le_bytes());
            self.bytes(part.as_bytes());
        }
    }

    /// The hash as 16 lowercase hex digits.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

/// The FNV-1a hash of `text` as 16 hex digits.
pub fn fnv1a_hex(text: &str) -> String {
    let mut h = Fnv1a::new();
    h.bytes(text.as_bytes());
    h.hex()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors() {
        // From the FNV reference test suite.
        assert_eq!(fnv1a_hex(""), "cbf29ce484222325");
        assert_eq!(fnv1a_hex("a"), "af63dc4c8601ec8c");
        assert_eq!(fnv1a_hex("foobar"), "85944171f73967e8");
    }

    #[test]
    fn fields_are_length_prefixed() {
        let mut a = Fnv1a::new();
        a.field("ab", "c");
        let mut b = Fnv1a::new();
        b.field("a", "bc");
        assert_ne!(a.hex(), b.hex());
    }
}
