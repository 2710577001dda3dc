//! One pair of transport keys from one handshake: the tunnel's [`Cipher`] (ChaCha20-Poly1305 or
//! AES-256-GCM) through ring, with an explicit 64-bit counter as nonce.
//!
//! WireGuard paper section 5.4.6 ("Subsequent Messages: Transport Data Messages"): every message
//! carries its counter in clear; the AEAD nonce is 32 zero bits then the counter, in the byte order
//! of the cipher's Noise definition ([`Cipher::nonce`]). We also authenticate the 16-byte header
//! as associated data, which WireGuard leaves out (its index and counter are bound by key choice
//! and nonce anyway); here it costs nothing and also binds the type and reserved bytes.
//!
//! Limits (WireGuard paper section 6.2, "Transport Message Limits", per cipher in
//! [`Cipher::rekey_after_messages`] and [`Cipher::reject_after_messages`]): past the first the
//! initiator starts a new handshake; no message is sent or accepted with a counter at or above the
//! second, which lies below the nonce's wrap-around, and for AES-GCM within its confidentiality
//! limit.

use braid_core::Instant;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey};

use super::cipher::Cipher;
use super::compact::{CompactHeader, COMPACT_HEADER_LEN, MAX_ATTEMPT};
use super::envelope::{transport_header, HEADER_LEN, TAG_LEN};
use super::handshake::TransportKeys;
use super::path_table::PathMap;
use super::replay::ReplayWindow;
use super::CryptoError;

/// Keys, indices, send counter and replay window of one handshake's outcome.
pub struct Keypair {
    /// The index the peer puts in datagrams for us (we chose it).
    pub local_index: u32,
    /// The index we put in datagrams for the peer (it chose it).
    pub remote_index: u32,
    /// When the handshake that made these keys completed on this side.
    pub created: Instant,
    /// How our paths meet the peer's, from the path tables of the handshake that made these
    /// keys: a datagram sealed or opened with them names its path by this map.
    pub paths: PathMap,
    cipher: Cipher,
    send: LessSafeKey,
    recv: LessSafeKey,
    next_send_counter: u64,
    replay: ReplayWindow,
    /// Messages sealed with these keys, full and compact: the rekey and reject limits count
    /// all of them (the compact ones have no counter of their own).
    sealed_total: u64,
    /// Messages opened with these keys, full and compact.
    opened_total: u64,
    /// Per path (by wire id): the last (path sequence, attempt) sealed compact, so that no
    /// nonce is used twice.
    compact_sent: Vec<Option<u64>>,
    /// Per path (by wire id): the compact messages' replay window over `path_seq * 4 +
    /// attempt`, made at the path's first compact message.
    compact_replay: Vec<Option<Box<CompactWindow>>>,
}

/// A path's compact replay window: 511 blocks of 64 bits, 32 704 (path sequence, attempt)
/// pairs, a little under the 2^13 path sequence numbers a compact header can reach behind the
/// highest (4 KiB per path).
type CompactWindow = ReplayWindow<512>;

/// The slot of `(path_seq, attempt)` in the compact nonce space of one path.
fn compact_slot(path_seq: u64, attempt: u8) -> Option<u64> {
    path_seq.checked_mul(4)?.checked_add(u64::from(attempt))
}

impl Keypair {
    pub(crate) fn new(
        cipher: Cipher,
        keys: &TransportKeys,
        local_index: u32,
        remote_index: u32,
        created: Instant,
        paths: PathMap,
    ) -> Box<Self> {
        let key = |bytes: &[u8; 32]| {
            LessSafeKey::new(
                UnboundKey::new(cipher.algorithm(), bytes).expect("both ciphers take 32-byte keys"),
            )
        };
        Box::new(Keypair {
            local_index,
            remote_index,
            created,
            paths,
            cipher,
            send: key(&keys.send),
            recv: key(&keys.recv),
            next_send_counter: 0,
            replay: ReplayWindow::new(),
            sealed_total: 0,
            opened_total: 0,
            compact_sent: Vec::new(),
            compact_replay: Vec::new(),
        })
    }

    /// Messages sent so far with these keys, full and compact.
    pub fn messages_sent(&self) -> u64 {
        self.sealed_total
    }

    /// A lower bound on the messages the peer sent with these keys, for the initiator's rekey
    /// decision (only the initiator rekeys, so it watches both directions' keys): the highest
    /// full counter authenticated plus one, or the messages opened, whichever is larger; 0
    /// before any.
    pub fn messages_received(&self) -> u64 {
        let full = if self.opened_total > 0 { self.replay.highest() + 1 } else { 0 };
        full.max(self.opened_total)
    }

    /// The low bit of the index the peer chose for these keys: the key phase our compact
    /// messages carry.
    pub fn send_phase(&self) -> bool {
        self.remote_index & 1 == 1
    }

    /// The low bit of our index for these keys: the key phase of compact messages to us.
    pub fn receive_phase(&self) -> bool {
        self.local_index & 1 == 1
    }

    pub fn cipher(&self) -> Cipher {
        self.cipher
    }

    /// Lets tests reach the message limits without sending 2^60 messages.
    #[cfg(test)]
    pub(crate) fn skip_send_counter_to(&mut self, counter: u64) {
        self.next_send_counter = counter;
        self.sealed_total = counter;
    }

    /// Seals `buf[HEADER_LEN..HEADER_LEN + plaintext_len]` in place for path `path_id`, writes
    /// the header in front and the tag behind; returns the datagram length. The caller checked
    /// `buf`'s length.
    pub(crate) fn seal(
        &mut self,
        path_id: u8,
        buf: &mut [u8],
        plaintext_len: usize,
    ) -> Result<usize, CryptoError> {
        let counter = self.next_send_counter;
        if counter >= self.cipher.reject_after_messages()
            || self.sealed_total >= self.cipher.reject_after_messages()
        {
            return Err(CryptoError::CounterExhausted);
        }
        let header = transport_header(path_id, self.remote_index, counter);
        let n = self.seal_behind(self.cipher.nonce(counter), &header, buf, plaintext_len)?;
        self.next_send_counter = counter + 1;
        Ok(n)
    }

    /// Seals the plaintext after `header` in `buf` under `nonce` with the header as associated
    /// data, writes the header in front and the tag behind, and counts the message; returns
    /// the datagram length.
    fn seal_behind(
        &mut self,
        nonce: Nonce,
        header: &[u8],
        buf: &mut [u8],
        plaintext_len: usize,
    ) -> Result<usize, CryptoError> {
        let start = header.len();
        let end = start + plaintext_len;
        let tag = self
            .send
            .seal_in_place_separate_tag(nonce, Aad::from(header), &mut buf[start..end])
            .map_err(|_| CryptoError::BufferTooSmall {
                needed: end + TAG_LEN,
                available: buf.len(),
            })?;
        buf[..start].copy_from_slice(header);
        buf[end..end + TAG_LEN].copy_from_slice(tag.as_ref());
        self.sealed_total += 1;
        Ok(end + TAG_LEN)
    }

    /// Seals `buf[COMPACT_HEADER_LEN..COMPACT_HEADER_LEN + plaintext_len]` in place as a compact
    /// message on the path of wire id `path_id`, writes the header in front and the tag
    /// behind; returns the datagram length. Refuses an attempt above [`MAX_ATTEMPT`] and a
    /// (path sequence, attempt) not above the last this path sealed, before touching `buf`.
    /// The caller checked `buf`'s length.
    pub(crate) fn seal_compact(
        &mut self,
        path_id: u8,
        path_seq: u64,
        attempt: u8,
        global_seq: u64,
        buf: &mut [u8],
        plaintext_len: usize,
    ) -> Result<usize, CryptoError> {
        if attempt > MAX_ATTEMPT {
            return Err(CryptoError::CompactAttempt(attempt));
        }
        let slot = compact_slot(path_seq, attempt).ok_or(CryptoError::CounterExhausted)?;
        if self.sealed_total >= self.cipher.reject_after_messages() {
            return Err(CryptoError::CounterExhausted);
        }
        let path = usize::from(path_id);
        if self.compact_sent.len() <= path {
            self.compact_sent.resize(path + 1, None);
        }
        if self.compact_sent[path].is_some_and(|l| slot <= l) {
            return Err(CryptoError::CompactReuse { path_seq, attempt });
        }
        let header =
            CompactHeader { key_phase: self.send_phase(), attempt, path_seq, global_seq }.encode();
        let nonce = self.cipher.compact_nonce(path_id, attempt, path_seq);
        let n = self.seal_behind(nonce, &header, buf, plaintext_len)?;
        self.compact_sent[path] = Some(slot);
        Ok(n)
    }

    /// Authenticates and decrypts a whole compact datagram of path `path_id` in place, its path
    /// sequence number already expanded to `path_seq`; returns the plaintext. The path's replay
    /// window is checked before and updated only after the tag verified.
    pub(crate) fn open_compact<'a>(
        &mut self,
        path_id: u8,
        path_seq: u64,
        attempt: u8,
        datagram: &'a mut [u8],
    ) -> Result<&'a mut [u8], CryptoError> {
        let replay = |reason| CryptoError::Replay { counter: path_seq, reason };
        let slot = compact_slot(path_seq, attempt).ok_or(CryptoError::Authentication)?;
        if self.opened_total >= self.cipher.reject_after_messages() {
            return Err(CryptoError::Authentication);
        }
        let path = usize::from(path_id);
        if let Some(Some(window)) = self.compact_replay.get(path) {
            window.check(slot).map_err(replay)?;
        }
        let (header, sealed) = datagram.split_at_mut(COMPACT_HEADER_LEN);
        let nonce = self.cipher.compact_nonce(path_id, attempt, path_seq);
        let plaintext = self
            .recv
            .open_in_place(nonce, Aad::from(&*header), sealed)
            .map_err(|_| CryptoError::Authentication)?;
        if self.compact_replay.len() <= path {
            self.compact_replay.resize_with(path + 1, || None);
        }
        let window = self.compact_replay[path].get_or_insert_with(Box::default);
        window.update(slot).map_err(replay)?;
        self.opened_total += 1;
        Ok(plaintext)
    }

    /// Authenticates and decrypts a whole transport datagram in place; returns the plaintext.
    /// The replay window is checked before and updated only after the tag verified.
    pub(crate) fn open<'a>(
        &mut self,
        counter: u64,
        datagram: &'a mut [u8],
    ) -> Result<&'a mut [u8], CryptoError> {
        let replay = |reason| CryptoError::Replay { counter, reason };
        if counter >= self.cipher.reject_after_messages() {
            return Err(CryptoError::Authentication);
        }
        self.replay.check(counter).map_err(replay)?;
        let (header, sealed) = datagram.split_at_mut(HEADER_LEN);
        let plaintext = self
            .recv
            .open_in_place(self.cipher.nonce(counter), Aad::from(&*header), sealed)
            .map_err(|_| CryptoError::Authentication)?;
        self.replay.update(counter).map_err(replay)?;
        self.opened_total += 1;
        Ok(plaintext)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::cipher::REJECT_AFTER_MESSAGES;
    use crate::crypto::envelope::Envelope;
    use crate::crypto::ReplayError;

    fn one_path() -> PathMap {
        let t = crate::crypto::PathTable::new(&["p"]).unwrap();
        PathMap::initiator(&t, &t)
    }

    fn pair(cipher: Cipher) -> (Box<Keypair>, Box<Keypair>) {
        let a = TransportKeys { send: [1; 32], recv: [2; 32] };
        let b = TransportKeys { send: [2; 32], recv: [1; 32] };
        (
            Keypair::new(cipher, &a, 10, 20, Instant::ZERO, one_path()),
            Keypair::new(cipher, &b, 20, 10, Instant::ZERO, one_path()),
        )
    }

    fn sealed(k: &mut Keypair, plaintext: &[u8]) -> Vec<u8> {
        let mut buf = vec![0u8; HEADER_LEN + plaintext.len() + TAG_LEN];
        buf[HEADER_LEN..HEADER_LEN + plaintext.len()].copy_from_slice(plaintext);
        let n = k.seal(0, &mut buf, plaintext.len()).unwrap();
        assert_eq!(n, buf.len());
        buf
    }

    fn counter_of(datagram: &[u8]) -> u64 {
        match Envelope::parse(datagram).unwrap() {
            Envelope::Transport { counter, .. } => counter,
            other => panic!("not transport: {other:?}"),
        }
    }

    /// The header carries index and counter big-endian; the body decrypts to what was sealed.
    #[test]
    fn seal_writes_header_and_opens_in_place() {
        for cipher in Cipher::ALL {
            let (mut a, mut b) = pair(cipher);
            let mut d = sealed(&mut a, b"hello");
            assert_eq!(&d[..16], &[4, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0]);
            assert_eq!(d.len(), 16 + 5 + 16, "{cipher}: header, plaintext, 16-byte tag");
            assert_ne!(&d[16..21], b"hello");
            assert_eq!(b.open(0, &mut d).unwrap(), b"hello");
            let d2 = sealed(&mut a, b"");
            assert_eq!(counter_of(&d2), 1);
        }
    }

    /// Same keys, same header, same plaintext: the two ciphers give different datagrams, and
    /// neither opens under the other (the transport really uses the configured cipher).
    #[test]
    fn the_ciphers_differ_and_do_not_open_each_other() {
        let (mut chacha_a, mut chacha_b) = pair(Cipher::ChaCha20Poly1305);
        let (mut aes_a, mut aes_b) = pair(Cipher::Aes256Gcm);
        let from_chacha = sealed(&mut chacha_a, b"same plaintext");
        let from_aes = sealed(&mut aes_a, b"same plaintext");
        assert_eq!(from_chacha[..HEADER_LEN], from_aes[..HEADER_LEN]);
        assert_ne!(from_chacha[HEADER_LEN..], from_aes[HEADER_LEN..]);
        assert_eq!(
            aes_b.open(0, &mut from_chacha.clone()).err(),
            Some(CryptoError::Authentication)
        );
        assert_eq!(
            chacha_b.open(0, &mut from_aes.clone()).err(),
            Some(CryptoError::Authentication)
        );
    }

    #[test]
    fn any_flipped_bit_fails_authentication() {
        for cipher in Cipher::ALL {
            let (mut a, mut b) = pair(cipher);
            let d = sealed(&mut a, b"payload");
            for byte in 0..d.len() {
                let mut t = d.clone();
                t[byte] ^= 0x01;
                // The counter the receiver uses is the one in the (possibly tampered) header.
                let counter = u64::from_be_bytes(t[8..16].try_into().unwrap());
                assert_eq!(
                    b.open(counter, &mut t).err(),
                    Some(CryptoError::Authentication),
                    "{cipher}, byte {byte}"
                );
            }
            // None of the failures moved the window: the genuine datagram still opens.
            let mut genuine = d.clone();
            assert!(b.open(0, &mut genuine).is_ok());
        }
    }

    #[test]
    fn replayed_datagram_is_refused_after_the_first() {
        let (mut a, mut b) = pair(Cipher::default());
        let d = sealed(&mut a, b"x");
        assert!(b.open(0, &mut d.clone()).is_ok());
        assert_eq!(
            b.open(0, &mut d.clone()).err(),
            Some(CryptoError::Replay { counter: 0, reason: ReplayError::Duplicate })
        );
    }

    #[test]
    fn send_counter_stops_at_the_ciphers_reject_limit() {
        for (cipher, limit) in
            [(Cipher::ChaCha20Poly1305, REJECT_AFTER_MESSAGES), (Cipher::Aes256Gcm, 1 << 26)]
        {
            let (mut a, mut b) = pair(cipher);
            a.skip_send_counter_to(limit - 1);
            let mut last = sealed(&mut a, b"");
            let mut buf = [0u8; 32];
            assert_eq!(a.seal(0, &mut buf, 0), Err(CryptoError::CounterExhausted), "{cipher}");
            assert!(b.open(limit - 1, &mut last).is_ok(), "{cipher}");
            assert_eq!(b.messages_received(), limit, "counter limit - 1 was received");
            // A datagram claiming a counter past the limit is refused before any decryption.
            assert_eq!(b.open(limit, &mut last).err(), Some(CryptoError::Authentication));
        }
    }
}
