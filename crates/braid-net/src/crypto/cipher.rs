//! The AEAD a tunnel uses, for the handshake and for transport: ChaCha20-Poly1305 or AES-256-GCM.
//!
//! Everything that differs between the two lives here: the Noise protocol name, ring's
//! algorithm, the nonce encoding and the per-key message limits. Both have 256-bit keys, 96-bit
//! nonces and 16-byte tags, so the envelope, its lengths and the session's state machine are the
//! same for both.
//!
//! **Handshake.** The cipher is part of the Noise protocol name (Noise Protocol Framework rev. 34,
//! section 8): `Noise_IKpsk2_25519_ChaChaPoly_BLAKE2s` or `Noise_IKpsk2_25519_AESGCM_BLAKE2s`. The
//! name is hashed into the handshake's first chaining key and hash (section 5.2,
//! `InitializeSymmetric`), and the handshake messages are encrypted with the cipher, so peers
//! configured with different ciphers derive different keys: the responder cannot decrypt the
//! initiator's static key and refuses the initiation. No cipher negotiation exists, so none can be
//! downgraded.
//!
//! **Transport nonce.** 32 zero bits then the 64-bit counter: little-endian for ChaChaPoly
//! (Noise section 12.3, as RFC 8439 section 2.8 and WireGuard), big-endian for AESGCM (Noise
//! section 12.4). Either is unique per key as long as the counter is; we follow Noise so that the
//! transport is exactly the cipher the protocol name announces.
//!
//! **Message limits.** WireGuard's limits (paper section 6.2: rekey after 2^60 messages, reject
//! at 2^64 - 2^13 - 1) are for ChaCha20-Poly1305, whose confidentiality bound does not depend on
//! the message count at any count a 64-bit counter reaches (RFC 9001 section 6.6). AES-GCM's does:
//! an attacker's advantage in telling its output from random grows with the square of the blocks
//! encrypted under one key. draft-irtf-cfrg-aead-limits ("Usage Limits on AEAD Algorithms",
//! section "AEAD_AES_128_GCM and AEAD_AES_256_GCM", Confidentiality Limit) bounds it by
//! `(s + q + 1)^2 / 2^129` for `q` messages of `s` blocks in total (AAD and plaintext), which for
//! messages of at most `L` blocks allows `q <= (p^(1/2) * 2^(129/2) - 1) / (L + 1)` at advantage
//! `p`. We take RFC 9001's target (section 6.6 and Appendix B: `p = 2^-57`) and Braid's largest
//! datagram: inner MTU at most 9000 bytes (config.rs) plus the 32-byte data header, with the
//! 16-byte envelope header as AAD, is 9048 bytes, `L` = 566 blocks, so
//! `q <= (2^36 - 1) / 567`, about 2^26.8; we round down to 2^26. The integrity limit (same
//! section: `v <= p * 2^127 / (L + 1)` forgeries, above 2^60) is out of reach within a key's
//! 180 s lifetime.

use std::fmt;
use std::str::FromStr;

use ring::aead::{Algorithm, Nonce, AES_256_GCM, CHACHA20_POLY1305, NONCE_LEN};

/// ChaCha20-Poly1305 rekey point (WireGuard section 6.2: Rekey-After-Messages, 2^60).
pub const REKEY_AFTER_MESSAGES: u64 = 1 << 60;
/// ChaCha20-Poly1305: counters at or above this are never used (WireGuard section 6.2:
/// Reject-After-Messages, 2^64 - 2^13 - 1, leaving the replay window room below the nonce's end).
pub const REJECT_AFTER_MESSAGES: u64 = u64::MAX - (1 << 13);
/// AES-256-GCM: counters at or above this are never used: the confidentiality limit derived in
/// the module documentation (2^26.8 messages of at most 566 blocks at advantage 2^-57), rounded
/// down to a power of two.
pub const AES_GCM_REJECT_AFTER_MESSAGES: u64 = 1 << 26;
/// AES-256-GCM rekey point: half the reject limit, so the other half (2^25 messages, 37 s at
/// 10 Gbit/s of 1400-byte datagrams) is left for the handshake and its 5 s retries.
pub const AES_GCM_REKEY_AFTER_MESSAGES: u64 = AES_GCM_REJECT_AFTER_MESSAGES / 2;

/// The AEAD of a tunnel's handshake and transport. Both peers must configure the same one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Cipher {
    /// RFC 8439. Fast in software everywhere; the faster choice on CPUs without AES instructions.
    ChaCha20Poly1305,
    /// NIST SP 800-38D with a 256-bit key. The default: x86-64 (AES-NI, PCLMULQDQ, VAES) and
    /// ARMv8 (crypto extensions) compute it in hardware, and ring uses those instructions.
    #[default]
    Aes256Gcm,
}

/// A cipher name that is not one of [`Cipher::ALL`]'s.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown cipher {name:?} (allowed: aes-256-gcm, chacha20-poly1305)")]
pub struct UnknownCipher {
    pub name: String,
}

impl Cipher {
    /// Every cipher, the default first.
    pub const ALL: [Cipher; 2] = [Cipher::Aes256Gcm, Cipher::ChaCha20Poly1305];

    /// The configuration name (`interface.cipher`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Cipher::ChaCha20Poly1305 => "chacha20-poly1305",
            Cipher::Aes256Gcm => "aes-256-gcm",
        }
    }

    /// The Noise protocol name of the handshake (Noise section 8).
    pub const fn noise_params(self) -> &'static str {
        match self {
            Cipher::ChaCha20Poly1305 => "Noise_IKpsk2_25519_ChaChaPoly_BLAKE2s",
            Cipher::Aes256Gcm => "Noise_IKpsk2_25519_AESGCM_BLAKE2s",
        }
    }

    /// ring's transport algorithm.
    pub(crate) fn algorithm(self) -> &'static Algorithm {
        match self {
            Cipher::ChaCha20Poly1305 => &CHACHA20_POLY1305,
            Cipher::Aes256Gcm => &AES_256_GCM,
        }
    }

    /// The transport nonce of `counter`: 32 zero bits then the counter, in the byte order of the
    /// cipher's Noise definition (section 12.3: little-endian; section 12.4: big-endian).
    pub fn nonce(self, counter: u64) -> Nonce {
        let mut bytes = [0u8; NONCE_LEN];
        bytes[4..].copy_from_slice(&match self {
            Cipher::ChaCha20Poly1305 => counter.to_le_bytes(),
            Cipher::Aes256Gcm => counter.to_be_bytes(),
        });
        Nonce::assume_unique_for_key(bytes)
    }

    /// The nonce of a compact message ([`super::compact`]): `01`, the path's wire id, the
    /// attempt and a zero byte, then the path sequence number in the cipher's order. Full
    /// messages' nonces start with four zero bytes, so the two spaces never meet.
    pub fn compact_nonce(self, path_id: u8, attempt: u8, path_seq: u64) -> Nonce {
        let mut bytes = [0u8; NONCE_LEN];
        bytes[..4].copy_from_slice(&[1, path_id, attempt, 0]);
        bytes[4..].copy_from_slice(&match self {
            Cipher::ChaCha20Poly1305 => path_seq.to_le_bytes(),
            Cipher::Aes256Gcm => path_seq.to_be_bytes(),
        });
        Nonce::assume_unique_for_key(bytes)
    }

    /// Messages under one key after which the initiator starts a new handshake.
    pub const fn rekey_after_messages(self) -> u64 {
        match self {
            Cipher::ChaCha20Poly1305 => REKEY_AFTER_MESSAGES,
            Cipher::Aes256Gcm => AES_GCM_REKEY_AFTER_MESSAGES,
        }
    }

    /// Counters at or above this are never sent nor accepted under one key.
    pub const fn reject_after_messages(self) -> u64 {
        match self {
            Cipher::ChaCha20Poly1305 => REJECT_AFTER_MESSAGES,
            Cipher::Aes256Gcm => AES_GCM_REJECT_AFTER_MESSAGES,
        }
    }
}

impl FromStr for Cipher {
    type Err = UnknownCipher;
    fn from_str(s: &str) -> Result<Self, UnknownCipher> {
        Cipher::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownCipher { name: s.to_string() })
    }
}

impl fmt::Display for Cipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::aead::{Aad, LessSafeKey, UnboundKey};

    #[test]
    fn names_round_trip_and_an_unknown_name_lists_the_allowed_ones() {
        for cipher in Cipher::ALL {
            assert_eq!(cipher.as_str().parse(), Ok(cipher));
            assert_eq!(cipher.to_string(), cipher.as_str());
        }
        assert_eq!("aes-256-gcm".parse(), Ok(Cipher::Aes256Gcm));
        assert_eq!("chacha20-poly1305".parse(), Ok(Cipher::ChaCha20Poly1305));
        let e = "aes256gcm".parse::<Cipher>().unwrap_err();
        assert_eq!(e.name, "aes256gcm");
        let text = e.to_string();
        assert!(text.contains("aes-256-gcm") && text.contains("chacha20-poly1305"), "{text}");
        assert_eq!(Cipher::default(), Cipher::Aes256Gcm);
    }

    #[test]
    fn noise_names_are_valid_snow_parameters_naming_their_cipher() {
        for (cipher, noise_cipher) in
            [(Cipher::ChaCha20Poly1305, "ChaChaPoly"), (Cipher::Aes256Gcm, "AESGCM")]
        {
            let params: snow::params::NoiseParams = cipher.noise_params().parse().unwrap();
            assert_eq!(params.name, format!("Noise_IKpsk2_25519_{noise_cipher}_BLAKE2s"));
        }
    }

    #[test]
    fn nonce_byte_order_follows_noise_per_cipher() {
        let counter = 0x0102_0304_0506_0708;
        assert_eq!(
            Cipher::ChaCha20Poly1305.nonce(counter).as_ref(),
            &[0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1]
        );
        assert_eq!(
            Cipher::Aes256Gcm.nonce(counter).as_ref(),
            &[0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]
        );
    }

    /// The AES-GCM limit from the module documentation, recomputed: messages of at most
    /// 9000 + 32 plaintext bytes and 16 AAD bytes are ceil(9048 / 16) = 566 blocks; with
    /// p = 2^-57, q <= (2^(129/2 - 57/2) - 1) / (566 + 1) = (2^36 - 1) / 567 = 121,198,371.
    #[test]
    fn aes_gcm_limits_stay_within_the_confidentiality_bound() {
        let blocks_per_message = (9000u64 + 32 + 16).div_ceil(16);
        assert_eq!(blocks_per_message, 566);
        let bound = ((1u64 << 36) - 1) / (blocks_per_message + 1);
        assert_eq!(bound, 121_198_371);
        // Counters 0..REJECT are REJECT messages.
        assert!(AES_GCM_REJECT_AFTER_MESSAGES <= bound);
        assert_eq!(Cipher::Aes256Gcm.reject_after_messages(), 1 << 26);
        assert_eq!(Cipher::Aes256Gcm.rekey_after_messages(), 1 << 25);
        assert_eq!(Cipher::ChaCha20Poly1305.rekey_after_messages(), 1 << 60);
    }

    /// Known-answer check that `algorithm` is the named AEAD: the test case of McGrew and Viega,
    /// "The Galois/Counter Mode of Operation (GCM)" (2005), Appendix B, Test Case 14 (AES-256,
    /// zero key, zero IV of 96 bits, one zero block): ciphertext cea7403d4d606b6e074ec5d3baf39d18,
    /// tag d0d1c8a799996bf0265b98b5d48ab919.
    #[test]
    fn aes_256_gcm_known_answer() {
        let key =
            LessSafeKey::new(UnboundKey::new(Cipher::Aes256Gcm.algorithm(), &[0; 32]).unwrap());
        let mut block = [0u8; 16];
        let tag = key
            .seal_in_place_separate_tag(Cipher::Aes256Gcm.nonce(0), Aad::empty(), &mut block)
            .unwrap();
        assert_eq!(block, hex16("cea7403d4d606b6e074ec5d3baf39d18"));
        assert_eq!(tag.as_ref(), &hex16("d0d1c8a799996bf0265b98b5d48ab919"));
    }

    fn hex16(s: &str) -> [u8; 16] {
        let mut out = [0u8; 16];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap();
        }
        out
    }
}
