//! Static Curve25519 keys and the optional pre-shared key, in WireGuard's text form.
//!
//! A key is 32 bytes, written as standard base64 with padding (RFC 4648 section 4): 43 symbols and
//! one `=`, 44 characters, exactly what `wg genkey` and `wg pubkey` print, so a user can move keys
//! between the two tools. Parsing is strict (canonical encoding only, RFC 4648 section 3.5) and
//! names what was wrong; surrounding whitespace is ignored so `braid pubkey < file` works with a
//! trailing newline.
//!
//! Key generation and the public-key derivation are snow's Curve25519 (X25519, RFC 7748 section
//! 5), never our own arithmetic. Secrets are zeroed on drop (best effort: copies the compiler made
//! before are out of reach) and never printed by `Debug`.

use std::fmt;
use std::str::FromStr;

use base64::engine::general_purpose::STANDARD;
use base64::{DecodeError, Engine};
use snow::params::DHChoice;
use snow::resolvers::{CryptoResolver, DefaultResolver};
use zeroize::{Zeroize, Zeroizing};

/// Bytes in every key this module handles (X25519 private and public keys, the PSK).
pub const KEY_LEN: usize = 32;
/// Characters in the base64 text of a key: `ceil(32 / 3) * 4`.
pub const KEY_BASE64_LEN: usize = 44;

/// Why a key's text form was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("a key is {KEY_BASE64_LEN} base64 characters (32 bytes), found {found} characters")]
    Length { found: usize },
    #[error(
        "character {character:?} at position {position} is not in the standard base64 alphabet \
         (A-Z a-z 0-9 + /, then one '=')"
    )]
    Alphabet { position: usize, character: char },
    #[error("the last symbol at position {position} is not a canonical encoding of 32 bytes")]
    NonCanonical { position: usize },
    #[error("a 32-byte key ends in exactly one '=' of padding")]
    Padding,
    #[error("the key decodes to {found} bytes, a key is 32")]
    DecodedLength { found: usize },
    #[error("key generation failed: {0}")]
    Generate(String),
}

/// A Curve25519 static private key. Zeroed on drop; `Debug` prints no key material; no `==`, so
/// no code compares secrets in variable time.
#[derive(Clone)]
pub struct PrivateKey([u8; KEY_LEN]);

/// A Curve25519 public key.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PublicKey([u8; KEY_LEN]);

/// The optional symmetric key mixed into the handshake (Noise `psk2`; WireGuard paper section
/// 5.2): post-quantum insurance for recorded traffic. Zeroed on drop; `Debug` prints nothing of it.
#[derive(Clone)]
pub struct PresharedKey([u8; KEY_LEN]);

impl PrivateKey {
    pub const fn from_bytes(bytes: [u8; KEY_LEN]) -> Self {
        PrivateKey(bytes)
    }

    pub fn as_bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }

    /// The matching public key: X25519 of the (clamped) private key and the base point.
    pub fn public_key(&self) -> PublicKey {
        let mut dh = DefaultResolver
            .resolve_dh(&DHChoice::Curve25519)
            .expect("snow's default resolver always provides Curve25519");
        dh.set(&self.0);
        let mut public = [0u8; KEY_LEN];
        public.copy_from_slice(dh.pubkey());
        PublicKey(public)
    }

    pub fn to_base64(&self) -> Zeroizing<String> {
        Zeroizing::new(STANDARD.encode(self.0))
    }

    pub fn from_base64(text: &str) -> Result<Self, KeyError> {
        decode_key(text).map(|k| PrivateKey(*k))
    }
}

impl PublicKey {
    pub const fn from_bytes(bytes: [u8; KEY_LEN]) -> Self {
        PublicKey(bytes)
    }

    pub fn as_bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }

    pub fn to_base64(&self) -> String {
        STANDARD.encode(self.0)
    }

    pub fn from_base64(text: &str) -> Result<Self, KeyError> {
        decode_key(text).map(|k| PublicKey(*k))
    }
}

impl PresharedKey {
    pub const fn from_bytes(bytes: [u8; KEY_LEN]) -> Self {
        PresharedKey(bytes)
    }

    pub fn as_bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }

    pub fn to_base64(&self) -> Zeroizing<String> {
        Zeroizing::new(STANDARD.encode(self.0))
    }

    pub fn from_base64(text: &str) -> Result<Self, KeyError> {
        decode_key(text).map(|k| PresharedKey(*k))
    }
}

/// A fresh static key pair from the operating system's random source (snow's resolver).
pub fn generate_keypair() -> Result<(PrivateKey, PublicKey), KeyError> {
    // Static keys are Curve25519 keys whatever the cipher: any of the protocol names will do.
    let params = super::cipher::Cipher::default()
        .noise_params()
        .parse()
        .expect("the protocol name is valid");
    let pair = snow::Builder::new(params)
        .generate_keypair()
        .map_err(|e| KeyError::Generate(e.to_string()))?;
    let mut private = Zeroizing::new([0u8; KEY_LEN]);
    let mut public = [0u8; KEY_LEN];
    private.copy_from_slice(&pair.private);
    public.copy_from_slice(&pair.public);
    let mut pair = pair;
    pair.private.zeroize();
    Ok((PrivateKey(*private), PublicKey(public)))
}

/// A fresh pre-shared key from the operating system's random source (`wg genpsk`).
pub fn generate_preshared_key() -> Result<PresharedKey, KeyError> {
    use ring::rand::{SecureRandom, SystemRandom};
    let mut key = Zeroizing::new([0u8; KEY_LEN]);
    SystemRandom::new()
        .fill(&mut key[..])
        .map_err(|_| KeyError::Generate("the system random source failed".into()))?;
    Ok(PresharedKey(*key))
}

/// Decodes 44 characters of standard, padded base64 into exactly 32 bytes.
fn decode_key(text: &str) -> Result<Zeroizing<[u8; KEY_LEN]>, KeyError> {
    let text = text.trim();
    let found = text.chars().count();
    if found != KEY_BASE64_LEN {
        return Err(KeyError::Length { found });
    }
    if let Some((position, character)) = text
        .chars()
        .enumerate()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '+' || c == '/' || c == '='))
    {
        return Err(KeyError::Alphabet { position, character });
    }
    // 32 bytes are 43 symbols (the last carrying 4 bits and two zero bits) and one '='. One spare
    // byte of room lets a 44-symbol unpadded text report its 33 bytes instead of overflowing.
    let mut out = Zeroizing::new([0u8; KEY_LEN + 1]);
    let decoded = STANDARD.decode_slice(text, &mut out[..]).map_err(|e| match e {
        base64::DecodeSliceError::DecodeError(e) => from_decode_error(e),
        base64::DecodeSliceError::OutputSliceTooSmall => KeyError::DecodedLength { found: 33 },
    })?;
    if decoded != KEY_LEN {
        return Err(KeyError::DecodedLength { found: decoded });
    }
    let mut key = Zeroizing::new([0u8; KEY_LEN]);
    key.copy_from_slice(&out[..KEY_LEN]);
    Ok(key)
}

fn from_decode_error(e: DecodeError) -> KeyError {
    match e {
        // The alphabet was checked before decoding, so a misplaced '=' is the only bad byte left.
        DecodeError::InvalidByte(_, b'=') => KeyError::Padding,
        DecodeError::InvalidByte(position, byte) => {
            KeyError::Alphabet { position, character: char::from(byte) }
        }
        DecodeError::InvalidLastSymbol(position, _) => KeyError::NonCanonical { position },
        DecodeError::InvalidLength(_) | DecodeError::InvalidPadding => KeyError::Padding,
    }
}

impl Drop for PrivateKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl Drop for PresharedKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PrivateKey(<secret>)")
    }
}

impl fmt::Debug for PresharedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PresharedKey(<secret>)")
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.to_base64())
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_base64())
    }
}

impl FromStr for PrivateKey {
    type Err = KeyError;
    fn from_str(s: &str) -> Result<Self, KeyError> {
        PrivateKey::from_base64(s)
    }
}

impl FromStr for PublicKey {
    type Err = KeyError;
    fn from_str(s: &str) -> Result<Self, KeyError> {
        PublicKey::from_base64(s)
    }
}

impl FromStr for PresharedKey {
    type Err = KeyError;
    fn from_str(s: &str) -> Result<Self, KeyError> {
        PresharedKey::from_base64(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap();
        }
        out
    }

    /// RFC 7748 section 6.1: Alice's private key and the public key it yields.
    #[test]
    fn public_key_matches_rfc7748_test_vector() {
        let private = PrivateKey::from_bytes(hex(
            "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
        ));
        let expected = hex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
        assert_eq!(private.public_key().as_bytes(), &expected);
    }

    /// Same vector in base64, as `wg pubkey` would print it (computed with `base64` from the hex
    /// above: 85 20 f0 ... 6a).
    #[test]
    fn base64_round_trip_and_known_text() {
        let public = PublicKey::from_bytes(hex(
            "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a",
        ));
        assert_eq!(public.to_base64(), "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=");
        assert_eq!(
            PublicKey::from_base64("hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=\n"),
            Ok(public)
        );
    }

    #[test]
    fn generated_pair_is_consistent_and_fresh() {
        let (a_private, a_public) = generate_keypair().unwrap();
        let (b_private, _) = generate_keypair().unwrap();
        assert_eq!(a_private.public_key(), a_public);
        assert_ne!(a_private.as_bytes(), b_private.as_bytes());
        let text = a_private.to_base64();
        assert_eq!(text.len(), KEY_BASE64_LEN);
        assert_eq!(PrivateKey::from_base64(&text).unwrap().as_bytes(), a_private.as_bytes());
    }

    #[test]
    fn debug_never_prints_secrets() {
        let private = PrivateKey::from_bytes([0x41; 32]);
        let psk = PresharedKey::from_bytes([0x41; 32]);
        let secret_text = private.to_base64();
        for printed in [format!("{private:?}"), format!("{psk:?}")] {
            assert!(!printed.contains(secret_text.as_str()), "{printed}");
            assert!(!printed.contains("65"), "{printed}");
            assert!(!printed.contains("41"), "{printed}");
        }
    }

    #[test]
    fn malformed_text_names_the_fault() {
        let good = "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=";
        assert_eq!(PublicKey::from_base64(&good[..43]), Err(KeyError::Length { found: 43 }));
        assert_eq!(PublicKey::from_base64(""), Err(KeyError::Length { found: 0 }));
        // URL-safe alphabet ('_' for '/') is not the standard one.
        let url_safe = good.replace('/', "_");
        assert_eq!(
            PublicKey::from_base64(&url_safe),
            Err(KeyError::Alphabet { position: 23, character: '_' })
        );
        // 44 characters that are a canonical encoding of 31 bytes (ending in "==").
        let short = STANDARD.encode([7u8; 31]);
        assert!(short.ends_with("==") && short.len() == 44);
        assert_eq!(PublicKey::from_base64(&short), Err(KeyError::DecodedLength { found: 31 }));
        // No padding at all: 44 symbols carry 33 bytes.
        let long = format!("{}A", &good[..43]);
        assert_eq!(PublicKey::from_base64(&long), Err(KeyError::DecodedLength { found: 33 }));
        // Padding in the middle.
        let middle = format!("{}={}", &good[..10], &good[11..]);
        assert_eq!(PublicKey::from_base64(&middle), Err(KeyError::Padding));
        // 'p' (41 = 0b101001) leaves non-zero bits below the 32nd byte: not canonical.
        let non_canonical = format!("{}p=", &good[..42]);
        assert_eq!(
            PublicKey::from_base64(&non_canonical),
            Err(KeyError::NonCanonical { position: 42 })
        );
    }
}
