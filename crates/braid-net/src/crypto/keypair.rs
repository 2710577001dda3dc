//! One pair of transport keys from one handshake: ChaCha20-Poly1305 (RFC 8439) through ring,
//! with an explicit 64-bit counter as nonce.
//!
//! WireGuard paper section 5.4.6 ("Subsequent Messages: Transport Data Messages"): every message
//! carries its counter in clear; the AEAD nonce is 32 zero bits then the counter little-endian
//! (RFC 8439 section 2.8's 96-bit nonce, Noise section 12.3's ChaChaPoly nonce encoding). We also
//! authenticate the 16-byte header as associated data, which WireGuard leaves out (its index and
//! counter are bound by key choice and nonce anyway); here it costs nothing and also binds the
//! type and reserved bytes.
//!
//! Limits (WireGuard paper section 6.2, "Transport Message Limits"): after `REKEY_AFTER_MESSAGES`
//! the initiator starts a new handshake; no message is sent or accepted with a counter of
//! `REJECT_AFTER_MESSAGES` or more, far below the nonce's wrap-around.

use braid_core::Instant;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305, NONCE_LEN};

use super::envelope::{transport_header, HEADER_LEN, TAG_LEN};
use super::handshake::TransportKeys;
use super::replay::ReplayWindow;
use super::CryptoError;

/// Messages after which the initiator rekeys (WireGuard section 6.2: 2^60).
pub const REKEY_AFTER_MESSAGES: u64 = 1 << 60;
/// Counters at or above this are never used (WireGuard section 6.2: 2^64 - 2^13 - 1, leaving the
/// replay window room below the nonce's end).
pub const REJECT_AFTER_MESSAGES: u64 = u64::MAX - (1 << 13);

/// Keys, indices, send counter and replay window of one handshake's outcome.
pub struct Keypair {
    /// The index the peer puts in datagrams for us (we chose it).
    pub local_index: u32,
    /// The index we put in datagrams for the peer (it chose it).
    pub remote_index: u32,
    /// When the handshake that made these keys completed on this side.
    pub created: Instant,
    send: LessSafeKey,
    recv: LessSafeKey,
    next_send_counter: u64,
    replay: ReplayWindow,
}

impl Keypair {
    pub(crate) fn new(
        keys: &TransportKeys,
        local_index: u32,
        remote_index: u32,
        created: Instant,
    ) -> Box<Self> {
        let key = |bytes: &[u8; 32]| {
            LessSafeKey::new(
                UnboundKey::new(&CHACHA20_POLY1305, bytes).expect("ChaCha20 keys are 32 bytes"),
            )
        };
        Box::new(Keypair {
            local_index,
            remote_index,
            created,
            send: key(&keys.send),
            recv: key(&keys.recv),
            next_send_counter: 0,
            replay: ReplayWindow::new(),
        })
    }

    /// Messages sent so far with these keys.
    pub fn messages_sent(&self) -> u64 {
        self.next_send_counter
    }

    /// Lets tests reach the message limits without sending 2^60 messages.
    #[cfg(test)]
    pub(crate) fn skip_send_counter_to(&mut self, counter: u64) {
        self.next_send_counter = counter;
    }

    /// Seals `buf[HEADER_LEN..HEADER_LEN + plaintext_len]` in place, writes the header in front
    /// and the tag behind; returns the datagram length. The caller checked `buf`'s length.
    pub(crate) fn seal(
        &mut self,
        buf: &mut [u8],
        plaintext_len: usize,
    ) -> Result<usize, CryptoError> {
        let counter = self.next_send_counter;
        if counter >= REJECT_AFTER_MESSAGES {
            return Err(CryptoError::CounterExhausted);
        }
        let header = transport_header(self.remote_index, counter);
        let end = HEADER_LEN + plaintext_len;
        let tag = self
            .send
            .seal_in_place_separate_tag(
                nonce(counter),
                Aad::from(&header),
                &mut buf[HEADER_LEN..end],
            )
            .map_err(|_| CryptoError::BufferTooSmall {
                needed: end + TAG_LEN,
                available: buf.len(),
            })?;
        buf[..HEADER_LEN].copy_from_slice(&header);
        buf[end..end + TAG_LEN].copy_from_slice(tag.as_ref());
        self.next_send_counter = counter + 1;
        Ok(end + TAG_LEN)
    }

    /// Authenticates and decrypts a whole transport datagram in place; returns the plaintext.
    /// The replay window is checked before and updated only after the tag verified.
    pub(crate) fn open<'a>(
        &mut self,
        counter: u64,
        datagram: &'a mut [u8],
    ) -> Result<&'a mut [u8], CryptoError> {
        let replay = |reason| CryptoError::Replay { counter, reason };
        if counter >= REJECT_AFTER_MESSAGES {
            return Err(CryptoError::Authentication);
        }
        self.replay.check(counter).map_err(replay)?;
        let (header, sealed) = datagram.split_at_mut(HEADER_LEN);
        let plaintext = self
            .recv
            .open_in_place(nonce(counter), Aad::from(&*header), sealed)
            .map_err(|_| CryptoError::Authentication)?;
        self.replay.update(counter).map_err(replay)?;
        Ok(plaintext)
    }
}

/// 32 zero bits then the counter, little-endian (RFC 8439 section 2.8; Noise section 12.3).
fn nonce(counter: u64) -> Nonce {
    let mut bytes = [0u8; NONCE_LEN];
    bytes[4..].copy_from_slice(&counter.to_le_bytes());
    Nonce::assume_unique_for_key(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::envelope::Envelope;
    use crate::crypto::ReplayError;

    fn pair() -> (Box<Keypair>, Box<Keypair>) {
        let a = TransportKeys { send: [1; 32], recv: [2; 32] };
        let b = TransportKeys { send: [2; 32], recv: [1; 32] };
        (Keypair::new(&a, 10, 20, Instant::ZERO), Keypair::new(&b, 20, 10, Instant::ZERO))
    }

    fn sealed(k: &mut Keypair, plaintext: &[u8]) -> Vec<u8> {
        let mut buf = vec![0u8; HEADER_LEN + plaintext.len() + TAG_LEN];
        buf[HEADER_LEN..HEADER_LEN + plaintext.len()].copy_from_slice(plaintext);
        let n = k.seal(&mut buf, plaintext.len()).unwrap();
        assert_eq!(n, buf.len());
        buf
    }

    fn counter_of(datagram: &[u8]) -> u64 {
        match Envelope::parse(datagram).unwrap() {
            Envelope::Transport { counter, .. } => counter,
            other => panic!("not transport: {other:?}"),
        }
    }

    #[test]
    fn nonce_is_four_zero_bytes_then_the_counter_little_endian() {
        assert_eq!(nonce(0x0102_0304_0506_0708).as_ref(), &[0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1]);
    }

    /// The header carries index and counter big-endian; the body decrypts to what was sealed.
    #[test]
    fn seal_writes_header_and_opens_in_place() {
        let (mut a, mut b) = pair();
        let mut d = sealed(&mut a, b"hello");
        assert_eq!(&d[..16], &[4, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(d.len(), 16 + 5 + 16);
        assert_ne!(&d[16..21], b"hello");
        assert_eq!(b.open(0, &mut d).unwrap(), b"hello");
        let d2 = sealed(&mut a, b"");
        assert_eq!(counter_of(&d2), 1);
    }

    #[test]
    fn any_flipped_bit_fails_authentication() {
        let (mut a, mut b) = pair();
        let d = sealed(&mut a, b"payload");
        for byte in 0..d.len() {
            let mut t = d.clone();
            t[byte] ^= 0x01;
            // The counter the receiver uses is the one in the (possibly tampered) header.
            let counter = u64::from_be_bytes(t[8..16].try_into().unwrap());
            assert_eq!(
                b.open(counter, &mut t).err(),
                Some(CryptoError::Authentication),
                "byte {byte}"
            );
        }
        // None of the failures moved the window: the genuine datagram still opens.
        let mut genuine = d.clone();
        assert!(b.open(0, &mut genuine).is_ok());
    }

    #[test]
    fn replayed_datagram_is_refused_after_the_first() {
        let (mut a, mut b) = pair();
        let d = sealed(&mut a, b"x");
        assert!(b.open(0, &mut d.clone()).is_ok());
        assert_eq!(
            b.open(0, &mut d.clone()).err(),
            Some(CryptoError::Replay { counter: 0, reason: ReplayError::Duplicate })
        );
    }

    #[test]
    fn send_counter_stops_at_reject_after_messages() {
        let (mut a, _) = pair();
        a.next_send_counter = REJECT_AFTER_MESSAGES - 1;
        let mut buf = [0u8; 32];
        assert!(a.seal(&mut buf, 0).is_ok());
        assert_eq!(a.seal(&mut buf, 0), Err(CryptoError::CounterExhausted));
    }
}
