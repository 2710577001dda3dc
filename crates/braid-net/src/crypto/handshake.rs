//! The two handshake messages: Noise_IKpsk2_25519_ChaChaPoly_BLAKE2s or
//! Noise_IKpsk2_25519_AESGCM_BLAKE2s (the tunnel's [`Cipher`]) through snow, and the TAI64N
//! timestamp the initiation carries.
//!
//! Noise Protocol Framework, revision 34 (Perrin, 2018): pattern IK (section 7.5, "Interactive
//! handshake patterns (fundamental)") with the `psk2` modifier (section 9.4), the pattern
//! WireGuard is built on (WireGuard paper section 5.4.1, "Protocol Overview"):
//!
//! ```text
//!   <- s                       the initiator knows the responder's static key beforehand
//!   ...
//!   -> e, es, s, ss            initiation: payload = TAI64N timestamp, initiator's instance,
//!                              initiator's path table
//!   <- e, ee, se, psk          response: payload = responder's instance, responder's path table
//! ```
//!
//! An *instance* is 8 random bytes each endpoint draws when it starts (not in WireGuard, whose
//! inner packets carry no state): the tunnel protocol numbers every path's packets, so when one
//! end restarts the other must start its senders and receivers afresh, and a handshake with a
//! new instance says so. The path tables name each end's paths, so that both ends agree on
//! which path a transport datagram's path id means whatever order their files list them in
//! ([`super::path_table`]). Both payloads are encrypted and authenticated by the handshake.
//!
//! The initiator's static key travels encrypted in message 1, so the responder learns who is
//! calling only after the `es` DH, and checks it against its one configured peer. The PSK
//! (all zeros when none is configured, as in WireGuard section 5.2) enters in message 2. The
//! prologue binds both sides to this protocol and version (Noise section 6), so a Noise IKpsk2
//! message from another application never completes a Braid handshake; the protocol name binds
//! them to one cipher (see [`super::cipher`]), so peers configured with different ciphers fail at
//! the first message.
//!
//! After message 2, Split (Noise section 5.2) yields two keys: the first encrypts
//! initiator-to-responder traffic, the second the reverse. They leave snow through
//! `dangerously_get_raw_split` for ring, because transport counters must be explicit nonces:
//! datagrams over several paths arrive out of order (Noise section 11.4, "Out-of-order transport
//! messages").
//!
//! Snow draws the ephemeral keys from the operating system's random source; the handshake is the
//! one place where this sans-I/O module is not deterministic, by necessity.

use std::time::Duration;

use snow::{Builder, HandshakeState};
use zeroize::Zeroize;

use super::cipher::Cipher;
use super::envelope::{
    ABOUT_LEN, INITIATION_NOISE_LEN, INITIATION_PAYLOAD_LEN, INSTANCE_LEN, RESPONSE_NOISE_LEN,
    RESPONSE_PAYLOAD_LEN, TIMESTAMP_LEN,
};
use super::keys::{PresharedKey, PrivateKey, PublicKey, KEY_LEN};
use super::path_table::{PathTable, PATH_TABLE_LEN};

/// Mixed into the handshake hash first (Noise section 6); changing it makes old peers incompatible.
const PROLOGUE: &[u8] = b"braid tunnel v1";
/// `psk2`: the PSK is mixed in after the second message's tokens (Noise section 9.4).
const PSK_LOCATION: u8 = 2;
/// TAI64N label of the Unix epoch: 2^62 plus the 10 s TAI-UTC offset of 1970 (D. J. Bernstein,
/// "TAI64, TAI64N, and TAI64NA"; WireGuard section 5.4.2 uses this encoding).
const TAI64_EPOCH: u64 = 0x4000_0000_0000_000a;
/// Low nanosecond bits cleared before sending, so the timestamp reveals the initiator's clock to
/// about 16.8 ms only (wireguard-go tai64n/tai64n.go, `whitenerMask`).
const WHITENER_MASK_NS: u32 = (1 << 24) - 1;

/// A TAI64N timestamp: big-endian seconds then nanoseconds, so byte order is time order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tai64n([u8; TIMESTAMP_LEN]);

impl Tai64n {
    /// The timestamp of `since_unix_epoch`, whitened (nanoseconds rounded down to a multiple of
    /// 2^24).
    pub fn from_unix(since_unix_epoch: Duration) -> Self {
        let secs = TAI64_EPOCH.wrapping_add(since_unix_epoch.as_secs());
        let nanos = since_unix_epoch.subsec_nanos() & !WHITENER_MASK_NS;
        let mut bytes = [0u8; TIMESTAMP_LEN];
        bytes[..8].copy_from_slice(&secs.to_be_bytes());
        bytes[8..].copy_from_slice(&nanos.to_be_bytes());
        Tai64n(bytes)
    }

    /// The smallest whitened timestamp after `self`: one whitening step later.
    pub fn next_after(self) -> Self {
        Tai64n::from_unix(self.as_unix() + Duration::from_nanos(u64::from(WHITENER_MASK_NS) + 1))
    }

    fn as_unix(self) -> Duration {
        let secs = u64::from_be_bytes(self.0[..8].try_into().expect("8 bytes"));
        let nanos = u32::from_be_bytes(self.0[8..].try_into().expect("4 bytes"));
        Duration::new(secs.wrapping_sub(TAI64_EPOCH), nanos.min(999_999_999))
    }

    pub fn as_bytes(&self) -> &[u8; TIMESTAMP_LEN] {
        &self.0
    }
}

/// The two directional transport keys from Split, zeroed on drop.
pub(crate) struct TransportKeys {
    pub send: [u8; KEY_LEN],
    pub recv: [u8; KEY_LEN],
}

impl Drop for TransportKeys {
    fn drop(&mut self) {
        self.send.zeroize();
        self.recv.zeroize();
    }
}

/// What each handshake message tells the peer about its sender, after the initiation's
/// timestamp: the sender's instance and its path table.
#[derive(Clone, Copy)]
pub(crate) struct About<'a> {
    pub instance: u64,
    pub paths: &'a PathTable,
}

impl About<'_> {
    /// Writes the instance and the table into `out` (exactly [`ABOUT_LEN`] bytes).
    fn write(self, out: &mut [u8]) {
        out[..INSTANCE_LEN].copy_from_slice(&self.instance.to_be_bytes());
        out[INSTANCE_LEN..ABOUT_LEN].copy_from_slice(&self.paths.encode());
    }
}

/// Reads what [`About::write`] wrote at the start of `bytes` (at least [`ABOUT_LEN`] of them):
/// the instance and the path table, undecoded.
fn read_about(bytes: &[u8]) -> (u64, [u8; PATH_TABLE_LEN]) {
    let instance = u64::from_be_bytes(bytes[..INSTANCE_LEN].try_into().expect("8 bytes"));
    let paths = bytes[INSTANCE_LEN..ABOUT_LEN].try_into().expect("a table's bytes");
    (instance, paths)
}

/// The initiator's half-done handshake, waiting for the response.
pub(crate) struct InitiatorHandshake {
    state: HandshakeState,
}

/// Writes Noise message 1 into `out` and keeps the state that reads the response.
pub(crate) fn write_initiation(
    cipher: Cipher,
    local: &PrivateKey,
    peer: &PublicKey,
    psk: &PresharedKey,
    timestamp: Tai64n,
    about: About<'_>,
    out: &mut [u8; INITIATION_NOISE_LEN],
) -> Result<InitiatorHandshake, snow::Error> {
    let mut state =
        builder(cipher, local, psk)?.remote_public_key(peer.as_bytes())?.build_initiator()?;
    let mut payload = [0u8; INITIATION_PAYLOAD_LEN];
    payload[..TIMESTAMP_LEN].copy_from_slice(timestamp.as_bytes());
    about.write(&mut payload[TIMESTAMP_LEN..]);
    let written = state.write_message(&payload, out)?;
    debug_assert_eq!(written, INITIATION_NOISE_LEN);
    Ok(InitiatorHandshake { state })
}

impl InitiatorHandshake {
    /// Reads Noise message 2 and returns the transport keys, the responder's instance and its
    /// path table (undecoded: the caller decides what a bad one means). On failure the state is
    /// unchanged (snow restores its symmetric state), so a forged response cannot spoil a
    /// genuine one.
    pub fn read_response(
        &mut self,
        noise: &[u8; RESPONSE_NOISE_LEN],
    ) -> Result<ReadResponse, snow::Error> {
        let mut payload = [0u8; RESPONSE_NOISE_LEN];
        let len = self.state.read_message(noise, &mut payload)?;
        // The envelope fixed the message length, so the payload is exactly an instance and a
        // path table.
        debug_assert_eq!(len, RESPONSE_PAYLOAD_LEN);
        let (instance, paths) = read_about(&payload[..RESPONSE_PAYLOAD_LEN]);
        let (initiator_to_responder, responder_to_initiator) =
            self.state.dangerously_get_raw_split();
        let keys = TransportKeys { send: initiator_to_responder, recv: responder_to_initiator };
        Ok(ReadResponse { keys, instance, paths })
    }
}

/// What a response carried.
pub(crate) struct ReadResponse {
    pub keys: TransportKeys,
    pub instance: u64,
    pub paths: [u8; PATH_TABLE_LEN],
}

/// An initiation that authenticated: its sender's static key, timestamp, instance and path
/// table (undecoded), and the state that writes the response.
pub(crate) struct AcceptedInitiation {
    pub peer: PublicKey,
    pub timestamp: Tai64n,
    pub instance: u64,
    pub paths: [u8; PATH_TABLE_LEN],
    state: HandshakeState,
}

/// Reads Noise message 1. Succeeds for any initiator that knows our public key; the caller checks
/// [`AcceptedInitiation::peer`] and the timestamp before answering. Message 1 does not use the
/// PSK (`psk2` mixes it in after message 2's tokens), so the caller, who learns here which peer
/// is calling, gives that peer's PSK to [`AcceptedInitiation::write_response`].
pub(crate) fn read_initiation(
    cipher: Cipher,
    local: &PrivateKey,
    noise: &[u8; INITIATION_NOISE_LEN],
) -> Result<AcceptedInitiation, snow::Error> {
    let unset = PresharedKey::from_bytes([0; 32]);
    let mut state = builder(cipher, local, &unset)?.build_responder()?;
    let mut payload = [0u8; INITIATION_NOISE_LEN];
    let len = state.read_message(noise, &mut payload)?;
    // The envelope fixed the message length, so the payload is exactly a timestamp, an
    // instance and a path table.
    debug_assert_eq!(len, INITIATION_PAYLOAD_LEN);
    let timestamp = Tai64n(payload[..TIMESTAMP_LEN].try_into().expect("payload holds 12 bytes"));
    let (instance, paths) = read_about(&payload[TIMESTAMP_LEN..INITIATION_PAYLOAD_LEN]);
    let remote = state.get_remote_static().ok_or(snow::Error::Input)?;
    let peer = PublicKey::from_bytes(remote.try_into().map_err(|_| snow::Error::Input)?);
    Ok(AcceptedInitiation { peer, timestamp, instance, paths, state })
}

impl AcceptedInitiation {
    /// Writes Noise message 2, carrying `about` us, into `out` and returns
    /// the responder's transport keys.
    pub fn write_response(
        mut self,
        psk: &PresharedKey,
        about: About<'_>,
        out: &mut [u8; RESPONSE_NOISE_LEN],
    ) -> Result<TransportKeys, snow::Error> {
        self.state.set_psk(usize::from(PSK_LOCATION), psk.as_bytes())?;
        let mut payload = [0u8; RESPONSE_PAYLOAD_LEN];
        about.write(&mut payload);
        let written = self.state.write_message(&payload, out)?;
        debug_assert_eq!(written, RESPONSE_NOISE_LEN);
        let (initiator_to_responder, responder_to_initiator) =
            self.state.dangerously_get_raw_split();
        Ok(TransportKeys { send: responder_to_initiator, recv: initiator_to_responder })
    }
}

fn builder<'a>(
    cipher: Cipher,
    local: &'a PrivateKey,
    psk: &'a PresharedKey,
) -> Result<Builder<'a>, snow::Error> {
    let params = cipher.noise_params().parse()?;
    Builder::new(params)
        .local_private_key(local.as_bytes())?
        .psk(PSK_LOCATION, psk.as_bytes())?
        .prologue(PROLOGUE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::keys::generate_keypair;

    const CIPHER: Cipher = Cipher::Aes256Gcm;

    fn paths(name: &str) -> PathTable {
        PathTable::new(&[name]).unwrap()
    }

    /// A leaked table keeps the tests' calls short; tests are short-lived.
    fn about(instance: u64, name: &str) -> About<'static> {
        About { instance, paths: Box::leak(Box::new(paths(name))) }
    }

    #[test]
    fn tai64n_of_a_known_instant() {
        // 2017-02-26 00:00:00.5 UTC = 1,488,067,200.5 s after the epoch. Seconds label:
        // 0x400000000000000a + 1,488,067,200 (0x58b21a80) = 0x4000000058b21a8a. Nanoseconds
        // 500,000,000 = 0x1dcd6500, whitened (low 24 bits cleared) to 0x1d000000.
        let t = Tai64n::from_unix(Duration::new(1_488_067_200, 500_000_000));
        assert_eq!(t.as_bytes(), &[0x40, 0, 0, 0, 0x58, 0xb2, 0x1a, 0x8a, 0x1d, 0x00, 0x00, 0x00]);
    }

    #[test]
    fn tai64n_orders_by_time_and_next_after_is_strictly_later() {
        let a = Tai64n::from_unix(Duration::new(100, 999_000_000));
        let b = Tai64n::from_unix(Duration::new(101, 0));
        assert!(a < b);
        // Within one whitening step, two instants give the same stamp...
        assert_eq!(Tai64n::from_unix(Duration::new(5, 1)), Tai64n::from_unix(Duration::new(5, 2)));
        // ...and next_after steps past it, also across a second boundary.
        assert!(a.next_after() > a);
        assert!(a.next_after() <= b);
    }

    /// Also checks that both ciphers' messages have the lengths the envelope fixes (the
    /// `debug_assert`s in write_initiation and write_response).
    #[test]
    fn both_sides_derive_mirrored_keys_and_the_responder_learns_the_initiator() {
        for cipher in Cipher::ALL {
            let (i_private, i_public) = generate_keypair().unwrap();
            let (r_private, r_public) = generate_keypair().unwrap();
            let psk = PresharedKey::from_bytes([7; 32]);
            let stamp = Tai64n::from_unix(Duration::from_secs(1_700_000_000));
            let mut m1 = [0u8; INITIATION_NOISE_LEN];
            let mut initiator = write_initiation(
                cipher,
                &i_private,
                &r_public,
                &psk,
                stamp,
                about(11, "a"),
                &mut m1,
            )
            .unwrap();
            let accepted = read_initiation(cipher, &r_private, &m1).unwrap();
            assert_eq!(accepted.peer, i_public);
            assert_eq!(accepted.timestamp, stamp);
            assert_eq!(accepted.instance, 11);
            let mut m2 = [0u8; RESPONSE_NOISE_LEN];
            assert_eq!(PathTable::decode(&accepted.paths), Ok(paths("a")));
            let r_keys = accepted.write_response(&psk, about(22, "b"), &mut m2).unwrap();
            let read = initiator.read_response(&m2).unwrap();
            assert_eq!(read.instance, 22);
            assert_eq!(PathTable::decode(&read.paths), Ok(paths("b")));
            let i_keys = read.keys;
            assert_eq!(i_keys.send, r_keys.recv);
            assert_eq!(i_keys.recv, r_keys.send);
            assert_ne!(i_keys.send, i_keys.recv);
        }
    }

    /// The cipher is in the protocol name, hence in the first chaining key: a responder of the
    /// other cipher cannot decrypt the initiator's static key (Noise section 5.2).
    #[test]
    fn initiation_under_the_other_cipher_does_not_decrypt() {
        let (i_private, _) = generate_keypair().unwrap();
        let (r_private, r_public) = generate_keypair().unwrap();
        let psk = PresharedKey::from_bytes([0; 32]);
        let stamp = Tai64n::from_unix(Duration::from_secs(1));
        for (initiator, responder) in [
            (Cipher::ChaCha20Poly1305, Cipher::Aes256Gcm),
            (Cipher::Aes256Gcm, Cipher::ChaCha20Poly1305),
        ] {
            let mut m1 = [0u8; INITIATION_NOISE_LEN];
            write_initiation(initiator, &i_private, &r_public, &psk, stamp, about(1, "a"), &mut m1)
                .unwrap();
            assert_eq!(
                read_initiation(responder, &r_private, &m1).err(),
                Some(snow::Error::Decrypt)
            );
            assert!(read_initiation(initiator, &r_private, &m1).is_ok());
        }
    }

    #[test]
    fn mismatched_psk_fails_at_the_initiator_and_a_retry_still_works() {
        let (i_private, _) = generate_keypair().unwrap();
        let (r_private, r_public) = generate_keypair().unwrap();
        let right = PresharedKey::from_bytes([1; 32]);
        let wrong = PresharedKey::from_bytes([2; 32]);
        let stamp = Tai64n::from_unix(Duration::from_secs(1));
        let mut m1 = [0u8; INITIATION_NOISE_LEN];
        let mut initiator =
            write_initiation(CIPHER, &i_private, &r_public, &right, stamp, about(1, "a"), &mut m1)
                .unwrap();
        // Message 1 carries no PSK: a responder with the wrong one reads it...
        let mut forged = [0u8; RESPONSE_NOISE_LEN];
        read_initiation(CIPHER, &r_private, &m1)
            .unwrap()
            .write_response(&wrong, about(2, "b"), &mut forged)
            .unwrap();
        // ...but its response does not authenticate.
        assert_eq!(initiator.read_response(&forged).err(), Some(snow::Error::Decrypt));
        // The failed read left the initiator's state intact for the genuine response.
        let mut genuine = [0u8; RESPONSE_NOISE_LEN];
        read_initiation(CIPHER, &r_private, &m1)
            .unwrap()
            .write_response(&right, about(2, "b"), &mut genuine)
            .unwrap();
        assert!(initiator.read_response(&genuine).is_ok());
    }

    #[test]
    fn initiation_to_the_wrong_responder_does_not_decrypt() {
        let (i_private, _) = generate_keypair().unwrap();
        let (_, r_public) = generate_keypair().unwrap();
        let (other_private, _) = generate_keypair().unwrap();
        let psk = PresharedKey::from_bytes([0; 32]);
        let mut m1 = [0u8; INITIATION_NOISE_LEN];
        let stamp = Tai64n::from_unix(Duration::from_secs(1));
        write_initiation(CIPHER, &i_private, &r_public, &psk, stamp, about(1, "a"), &mut m1)
            .unwrap();
        assert!(read_initiation(CIPHER, &other_private, &m1).is_err());
    }
}
