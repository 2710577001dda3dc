//! The tunnel's security session: one per tunnel, shared by all its paths.
//!
//! A sans-I/O state machine after WireGuard (Donenfeld, "WireGuard: Next Generation Kernel Network
//! Tunnel", NDSS 2017), simplified to one peer with fixed roles: the client initiates, the server
//! responds. Inputs are datagrams ([`Session::open`]) and time; outputs are datagrams to send
//! ([`Session::poll_handshake`], [`Session::keepalive_due`], [`Session::seal`]) and the next
//! deadline ([`Session::poll_timeout`]).
//!
//! **Handshake** (paper section 5.4): the initiator sends an initiation on every live path; the
//! responder answers each on the path it came from; the initiator takes the first valid response.
//! Initiations carry a TAI64N timestamp; the responder keeps the greatest it accepted and refuses
//! any initiation not newer (section 5.1 and 5.4.2), so a recorded initiation cannot be replayed
//! to reset the session. We use the caller's wall clock, read once at construction and advanced
//! by the monotonic `now` (so a wall-clock step during a run cannot make timestamps go backwards),
//! rather than a counter: a counter restarts at zero with the process and the responder would
//! refuse the restarted client until it restarted too, unless the counter were kept on disk. The
//! cost is WireGuard's: a client whose clock is set back cannot connect until it passes its last
//! timestamp, or the server restarts.
//!
//! Because the same initiation reaches the responder once per path, the responder answers an
//! exact copy of the initiation it accepted last (within [`REKEY_TIMEOUT`]) by resending the
//! same response, without new keys; WireGuard would drop the copies as replays and answer only on
//! the first path to deliver.
//!
//! **Key confirmation** (section 5.4; the same in boringtun `noise/mod.rs`, where
//! `handle_handshake_response` answers with a keepalive and `handle_data` switches the current
//! session): the initiator may send as soon as it has the response; the responder keeps its new
//! keys as `next` and sends with its old `current` until a transport message arrives under the
//! new keys, which proves the initiator holds them. So the initiator sends at once: an empty
//! transport message (keepalive) from [`Session::keepalive_due`] if it has no data.
//!
//! **Rotation and expiry** (section 6.2 to 6.4): the initiator starts a new handshake
//! [`REKEY_AFTER_TIME`] after its keys were made, or once either direction's counter reaches the
//! cipher's [`rekey_after_messages`](Cipher::rekey_after_messages) (WireGuard counts only its own
//! sends, but there either side may initiate; here only the client does, and for AES-GCM the
//! server's downstream key reaches its limit first), and retries every [`REKEY_TIMEOUT`] while
//! unanswered. The keys in use before a rotation stay as `previous`, for receiving only, until
//! the next rotation or their expiry: packets sealed with them are still in flight on the slower
//! paths, and with 100 ms between paths that is thousands of packets, so dropping the old keys at
//! the first packet under the new ones would lose them.
//! No key is used, to send or receive, [`REJECT_AFTER_TIME`] after it was made. Like WireGuard
//! (section 6.5, "Passive Keepalive") either side sends a keepalive when it received data but
//! sent nothing for [`KEEPALIVE_TIMEOUT`], and the initiator starts a handshake when it has sent
//! data but heard nothing for [`KEEPALIVE_TIMEOUT`] + [`REKEY_TIMEOUT`], which recovers from a
//! responder restart in 15 s rather than at the next rekey.
//!
//! **Denial of service** (section 5.3): every handshake message carries WireGuard's `mac1` and
//! `mac2` ([`super::cookie`]). The responder checks `mac1` (keyed by its public key) before any
//! Diffie-Hellman, so a sender that does not know the key costs one BLAKE2s. Under load
//! ([`super::ratelimit`]: more than 64 initiations a second passed `mac1`) it demands a valid
//! `mac2`, bound to the datagram's source address, and answers an initiation without one with a
//! cookie reply (at most 20 a second per source address, 5 000 in all); an initiation with one
//! is still limited to 20 a second per source address, and all handshakes to 1 000 a second. The initiator keeps the cookie and uses it from its next
//! try ([`REKEY_TIMEOUT`] later, as WireGuard). The initiator checks a response's `mac1` (keyed
//! by its own public key) before reading it.
//!
//! Simplifications, on purpose: no retry jitter (one peer, no synchronised storms to break up);
//! no REKEY_ATTEMPT_TIME give-up (the daemon wants the tunnel up, so it retries every 5 s for as
//! long as it runs).

use std::net::SocketAddr;
use std::time::Duration;

use braid_core::Instant;

use super::cipher::Cipher;
pub use super::cipher::{REJECT_AFTER_MESSAGES, REKEY_AFTER_MESSAGES};
use super::compact::{self, CompactHeader, COMPACT_HEADER_LEN, COMPACT_MIN_LEN};
use super::cookie::{CookieChecker, CookieJar};
pub use super::counters::SessionCounters;
pub use super::envelope::REPLY_MAX;
use super::envelope::{
    Envelope, EnvelopeError, MessageKind, COOKIE_NONCE_LEN, HEADER_LEN, INITIATION_LEN,
    INITIATION_NOISE_LEN, MAC_LEN, RESPONSE_LEN, RESPONSE_NOISE_LEN, SEALED_COOKIE_LEN, TAG_LEN,
};
use super::gate::{Admitted, Gate};
use super::handshake::{self, About, InitiatorHandshake, Tai64n};
use super::keypair::Keypair;
use super::keys::{PresharedKey, PrivateKey, PublicKey};
use super::path_table::{PathMap, PathTable};
use super::CryptoError;

/// The initiator rekeys once its keys are this old (WireGuard section 6.1, Rekey-After-Time).
pub const REKEY_AFTER_TIME: Duration = Duration::from_secs(120);
/// Keys this old are never used again (WireGuard section 6.1, Reject-After-Time).
pub const REJECT_AFTER_TIME: Duration = Duration::from_secs(180);
/// An unanswered initiation is retried after this (WireGuard section 6.1, Rekey-Timeout).
pub const REKEY_TIMEOUT: Duration = Duration::from_secs(5);
/// Received data unanswered this long earns a keepalive (WireGuard section 6.1, Keepalive-Timeout).
pub const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(10);

/// Which end of the handshake this side plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The client (UE): sends initiations, rekeys.
    Initiator,
    /// The server (proxy): answers initiations from its one configured peer.
    Responder,
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Role::Initiator => "initiator",
            Role::Responder => "responder",
        })
    }
}

/// What a session needs to know about its two ends.
#[derive(Clone, Debug)]
pub struct SessionConfig {
    pub role: Role,
    /// The AEAD of handshake and transport; the peer must use the same one.
    pub cipher: Cipher,
    pub local: PrivateKey,
    pub peer: PublicKey,
    /// Mixed into every handshake when set; WireGuard's all-zero key when not.
    pub psk: Option<PresharedKey>,
    /// Seeds the generator of our 32-bit key indices. Indices are visible on the wire and need
    /// not be secret, but the daemon should seed from the OS random source so a restarted peer
    /// does not reuse the indices of the last run; tests fix it.
    pub index_seed: u64,
    /// This endpoint's instance: drawn at random when the process starts, sent in every
    /// handshake, so that the peer can tell a restart from a rekey.
    pub instance: u64,
    /// Our paths' names, in our order: sent in every handshake, matched with the peer's.
    pub paths: PathTable,
}

/// What [`Session::open`] made of a datagram.
#[derive(Debug, PartialEq, Eq)]
pub enum Opened<'a> {
    /// A transport datagram's plaintext, decrypted in place inside the datagram buffer. Empty
    /// for a keepalive.
    Data(&'a mut [u8]),
    /// (Responder) a handshake response, or under load a cookie reply, of this many bytes is
    /// in `reply`: send it back on the path the initiation came from, to its source.
    Reply(usize),
    /// (Initiator) the responder is under load and handed out a cookie; the next initiation
    /// carries it.
    Cookie,
    /// (Initiator) the handshake completed: new keys are in use. Send something now (see
    /// [`Session::keepalive_due`]) so the responder switches to them too.
    Established,
}

/// The initiator's outstanding handshake.
struct Pending {
    handshake: InitiatorHandshake,
    local_index: u32,
    sent_at: Instant,
}

/// The responder's answer to the initiation it accepted last, for that initiation's copies.
struct CachedResponse {
    initiation: [u8; INITIATION_LEN],
    response: [u8; RESPONSE_LEN],
    accepted_at: Instant,
}

/// Which held key pair a receiver index named.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Current,
    Previous,
    Next,
}

/// The security session of one tunnel. See the module documentation.
pub struct Session {
    role: Role,
    cipher: Cipher,
    local: PrivateKey,
    peer: PublicKey,
    psk: PresharedKey,
    index_state: u64,
    wall_anchor_unix: Duration,
    wall_anchor_mono: Instant,
    last_timestamp_sent: Option<Tai64n>,
    greatest_timestamp_accepted: Option<Tai64n>,
    pending: Option<Pending>,
    /// Keys we send with (and receive with).
    current: Option<Box<Keypair>>,
    /// The keys before the last rotation: receive only.
    previous: Option<Box<Keypair>>,
    /// (Responder) keys from the last accepted initiation, waiting for confirmation.
    next: Option<Box<Keypair>>,
    cached_response: Option<CachedResponse>,
    last_sent: Option<Instant>,
    last_data_sent: Option<Instant>,
    last_received: Option<Instant>,
    last_data_received: Option<Instant>,
    /// (Initiator) new keys not yet used to send: the responder is waiting for a packet.
    confirmation_due: bool,
    /// Latest time seen in any call; `poll_timeout` has no `now` of its own.
    now: Instant,
    counters: SessionCounters,
    /// MACs of the handshake messages we send to the peer, and its cookie.
    jar: CookieJar,
    /// MACs of the handshake messages sent to us (the initiator checks a response's `mac1`).
    checker: CookieChecker,
    /// (Responder) what an initiation must pass before any Diffie-Hellman.
    gate: Gate,
    /// Our instance, sent in every handshake.
    instance: u64,
    /// The peer's instance of the keys in use, and (responder) of the keys in `next`.
    peer_instance: Option<u64>,
    next_peer_instance: Option<u64>,
    /// Keys of a new peer instance came into use and the caller has not been told.
    peer_restarted: bool,
    /// Our path names, sent in every handshake.
    paths: PathTable,
    /// Keys whose path map differs from the last keys' came into use, untold.
    paths_changed: bool,
}

impl Session {
    /// A session with no keys yet. `unix_time` is the wall clock (time since the Unix epoch) at
    /// `now`; only the initiator uses it, for initiation timestamps.
    pub fn new(config: SessionConfig, now: Instant, unix_time: Duration) -> Self {
        let SessionConfig { role, cipher, local, peer, psk, index_seed, instance, paths } = config;
        let jar = CookieJar::new(&peer);
        let own = local.public_key();
        let checker = CookieChecker::new(&own);
        let gate = Gate::new(&own, now);
        Session {
            role,
            cipher,
            local,
            peer,
            psk: psk.unwrap_or(PresharedKey::from_bytes([0; 32])),
            index_state: index_seed,
            wall_anchor_unix: unix_time,
            wall_anchor_mono: now,
            last_timestamp_sent: None,
            greatest_timestamp_accepted: None,
            pending: None,
            current: None,
            previous: None,
            next: None,
            cached_response: None,
            last_sent: None,
            last_data_sent: None,
            last_received: None,
            last_data_received: None,
            confirmation_due: false,
            now,
            counters: SessionCounters::default(),
            jar,
            checker,
            gate,
            instance,
            peer_instance: None,
            next_peer_instance: None,
            peer_restarted: false,
            paths,
            paths_changed: false,
        }
    }

    /// How our paths meet the peer's under the keys in use: by name, from the path tables of
    /// their handshake ([`super::path_table`]).
    pub fn path_map(&self) -> Option<&PathMap> {
        self.current.as_ref().map(|k| &k.paths)
    }

    /// Whether keys with another path map than the keys before them came into use since the
    /// last call (the first handshake counts): the caller reports unmatched paths and stops or
    /// resumes using them.
    pub fn take_paths_changed(&mut self) -> bool {
        std::mem::take(&mut self.paths_changed)
    }

    /// Makes `keys` current (the old current becomes previous) and notes a change of path map.
    fn make_current(&mut self, keys: Box<Keypair>) {
        if self.current.as_ref().is_none_or(|old| old.paths != keys.paths) {
            self.paths_changed = true;
        }
        self.previous = self.current.replace(keys);
    }

    /// Whether keys from a handshake with a new instance of the peer (it restarted) came into
    /// use since the last call: the tunnel's senders and receivers must then start afresh, as
    /// the peer's did. Call after each [`open`](Self::open) that returned something; the first
    /// handshake of a session does not count (there is nothing to reset).
    pub fn take_peer_restart(&mut self) -> bool {
        std::mem::take(&mut self.peer_restarted)
    }

    /// Records that keys of peer instance `instance` came into use.
    fn keys_from_instance(&mut self, instance: u64) {
        if self.peer_instance.is_some_and(|old| old != instance) {
            self.peer_restarted = true;
        }
        self.peer_instance = Some(instance);
    }

    pub fn role(&self) -> Role {
        self.role
    }

    pub fn cipher(&self) -> Cipher {
        self.cipher
    }

    /// The peer's static public key.
    pub fn peer(&self) -> &PublicKey {
        &self.peer
    }

    /// Whether `index` is one of ours for keys held now (a transport datagram naming it is for
    /// this session).
    pub fn holds_index(&self, index: u32) -> bool {
        [&self.current, &self.previous, &self.next]
            .into_iter()
            .flatten()
            .any(|k| k.local_index == index)
    }

    /// Whether there are keys to send with.
    pub fn is_established(&self) -> bool {
        self.current.as_ref().is_some_and(|k| !expired(k, self.now))
    }

    pub fn counters(&self) -> SessionCounters {
        self.counters
    }

    /// When the current keys were made, if any.
    pub fn established_at(&self) -> Option<Instant> {
        self.current.as_ref().map(|k| k.created)
    }

    /// (Initiator) the initiation to send on every live path, when one is due: at start, on
    /// retry, on rekey, or when the peer went silent. Writes it into `out`.
    pub fn poll_handshake(
        &mut self,
        now: Instant,
        out: &mut [u8],
    ) -> Result<Option<usize>, CryptoError> {
        self.advance(now);
        if self.role != Role::Initiator || !self.handshake_due(now) {
            return Ok(None);
        }
        if out.len() < INITIATION_LEN {
            return Err(CryptoError::BufferTooSmall {
                needed: INITIATION_LEN,
                available: out.len(),
            });
        }
        let timestamp = self.next_timestamp(now);
        let local_index = self.fresh_index();
        let mut noise = [0u8; INITIATION_NOISE_LEN];
        let handshake = handshake::write_initiation(
            self.cipher,
            &self.local,
            &self.peer,
            &self.psk,
            timestamp,
            About { instance: self.instance, paths: &self.paths },
            &mut noise,
        )
        .map_err(CryptoError::Handshake)?;
        let zero = [0u8; MAC_LEN];
        let n = Envelope::Initiation {
            sender_index: local_index,
            noise: &noise,
            mac1: &zero,
            mac2: &zero,
        }
        .emit(out)?;
        self.jar.stamp(now, &mut out[..n]);
        self.pending = Some(Pending { handshake, local_index, sent_at: now });
        self.counters.initiations_sent += 1;
        Ok(Some(n))
    }

    /// Whether an empty transport message (a keepalive: [`seal`](Self::seal) with no
    /// plaintext) is due on every live path: right after the initiator's handshake completes
    /// (key confirmation), or when data came in and nothing went out for [`KEEPALIVE_TIMEOUT`].
    /// Sealing anything clears it.
    pub fn keepalive_due(&mut self, now: Instant) -> bool {
        self.advance(now);
        if !self.is_established() {
            return false;
        }
        let passive_due = self.passive_keepalive_deadline().is_some_and(|t| now >= t);
        self.confirmation_due || passive_due
    }

    /// Seals the plaintext at `buf[HEADER_LEN..HEADER_LEN + plaintext_len]` with the current
    /// keys for our path `path` (whose wire id the header names, authenticated), writing the
    /// header in front and the tag after; returns the datagram length (`plaintext_len +
    /// OVERHEAD`). A path the peer has no match for is [`CryptoError::UnmatchedPath`].
    pub fn seal(
        &mut self,
        now: Instant,
        path: u8,
        buf: &mut [u8],
        plaintext_len: usize,
    ) -> Result<usize, CryptoError> {
        self.seal_with(now, path, HEADER_LEN, buf, plaintext_len, |keys, wire, buf| {
            keys.seal(wire, buf, plaintext_len)
        })
    }

    /// Seals the inner packet at `buf[COMPACT_HEADER_LEN..COMPACT_HEADER_LEN + plaintext_len]`
    /// as a compact message ([`super::compact`]) with the current keys for our path `path`:
    /// path sequence `path_seq`, transmission `attempt` (0 first, up to 3), global sequence
    /// `global_seq` (both truncated on the wire; the caller checked that the receiver expands
    /// them back, [`super::compact::expands_exactly`]). Returns the datagram length
    /// (`plaintext_len + COMPACT_OVERHEAD`).
    #[allow(clippy::too_many_arguments, reason = "the compact header's fields, each needed")]
    pub fn seal_compact(
        &mut self,
        now: Instant,
        path: u8,
        path_seq: u64,
        attempt: u8,
        global_seq: u64,
        buf: &mut [u8],
        plaintext_len: usize,
    ) -> Result<usize, CryptoError> {
        self.seal_with(now, path, COMPACT_HEADER_LEN, buf, plaintext_len, |keys, wire, buf| {
            keys.seal_compact(wire, path_seq, attempt, global_seq, buf, plaintext_len)
        })
    }

    /// Seals with the current keys for our path `path` (its wire id by their path map), after
    /// checking that `buf` holds a `header_len`-byte header, the plaintext and the tag; keeps
    /// the send times.
    fn seal_with(
        &mut self,
        now: Instant,
        path: u8,
        header_len: usize,
        buf: &mut [u8],
        plaintext_len: usize,
        seal: impl FnOnce(&mut Keypair, u8, &mut [u8]) -> Result<usize, CryptoError>,
    ) -> Result<usize, CryptoError> {
        self.advance(now);
        let needed = header_len.saturating_add(plaintext_len).saturating_add(TAG_LEN);
        if buf.len() < needed {
            return Err(CryptoError::BufferTooSmall { needed, available: buf.len() });
        }
        let keys = self.current.as_mut().ok_or(CryptoError::NoSession)?;
        let wire = keys.paths.wire_id(usize::from(path)).ok_or(CryptoError::UnmatchedPath(path))?;
        let n = seal(keys, wire, buf)?;
        self.last_sent = Some(now);
        if plaintext_len > 0 {
            self.last_data_sent = Some(now);
        }
        self.confirmation_due = false;
        Ok(n)
    }

    /// Takes one compact datagram ([`super::compact`]) from our path `path`, which the caller
    /// has already attributed to this session by its validated source address. `path_seq_next`
    /// is the next path sequence number the receiver expects on `path` (its highest received
    /// plus one, 0 before any), which the truncated number is expanded around. Decrypts in
    /// place; returns the header (sequence numbers expanded for the path, the global one still
    /// truncated) and the inner packet. Keys are chosen by the key phase: keys awaiting
    /// confirmation first, then the current and the previous ones; at most two match, since a
    /// new index always differs in its low bit from the current keys'. Errors mean: drop it.
    pub fn open_compact<'a>(
        &mut self,
        now: Instant,
        path: u8,
        path_seq_next: u64,
        datagram: &'a mut [u8],
    ) -> Result<(CompactHeader, &'a mut [u8]), CryptoError> {
        self.advance(now);
        let mut header = CompactHeader::decode(datagram)
            .ok_or(CryptoError::Envelope(EnvelopeError::Truncated { found: datagram.len() }))?;
        header.path_seq = compact::expand(path_seq_next, header.path_seq);
        let phase = header.key_phase;
        let candidates = [Slot::Next, Slot::Current, Slot::Previous]
            .map(|slot| self.keys_in(slot).as_ref().is_some_and(|k| k.receive_phase() == phase));
        let tries = candidates.iter().filter(|&&c| c).count();
        if tries == 0 {
            self.counters.unknown_index += 1;
            return Err(CryptoError::NoKeyPhase(u8::from(phase)));
        }
        // A failed AEAD open leaves the buffer unspecified (ring): keep the datagram for the
        // second keys, which exist only while a handshake awaits confirmation.
        let backup = (tries > 1).then(|| datagram.to_vec());
        let slots = [Slot::Next, Slot::Current, Slot::Previous].into_iter();
        for (n, slot) in slots.zip(candidates).filter(|&(_, c)| c).map(|(s, _)| s).enumerate() {
            if n > 0 {
                if let Some(b) = &backup {
                    datagram.copy_from_slice(b);
                }
            }
            let keys = self.keys_in(slot).as_mut().expect("a candidate holds keys");
            let Some(wire) = keys.paths.wire_id(usize::from(path)) else {
                return Err(CryptoError::CompactUnmatchedPath(path));
            };
            match keys.open_compact(wire, header.path_seq, header.attempt, datagram) {
                Ok(_) => {
                    self.after_open(now, slot, datagram.len() > COMPACT_MIN_LEN);
                    let end = datagram.len() - TAG_LEN;
                    return Ok((header, &mut datagram[COMPACT_HEADER_LEN..end]));
                }
                Err(CryptoError::Authentication) => self.counters.bad_macs += 1,
                Err(e @ CryptoError::Replay { .. }) => {
                    self.counters.replays += 1;
                    return Err(e);
                }
                Err(e) => return Err(e),
            }
        }
        Err(CryptoError::Authentication)
    }

    /// Takes one received datagram from our path `path`, sent from `src` (the source address a
    /// cookie binds). Transport plaintext is decrypted in place and returned as a slice of
    /// `datagram`; a responder's handshake response or cookie reply goes into `reply` (which
    /// needs [`REPLY_MAX`] bytes). A transport datagram naming another path (by the path map of
    /// the keys it names) is refused before its tag is checked and before the replay window
    /// changes. Errors mean: drop the datagram (the counters record why).
    pub fn open<'a>(
        &mut self,
        now: Instant,
        src: SocketAddr,
        path: u8,
        datagram: &'a mut [u8],
        reply: &mut [u8],
    ) -> Result<Opened<'a>, CryptoError> {
        self.advance(now);
        match Envelope::parse(datagram)? {
            Envelope::Initiation { sender_index, noise, .. } => {
                let initiation: &[u8; INITIATION_LEN] =
                    (&*datagram).try_into().expect("the envelope checked the length");
                self.on_initiation(now, src, initiation, sender_index, noise, reply)
                    .map(Opened::Reply)
            }
            Envelope::Response { sender_index, receiver_index, noise, .. } => {
                if self.role == Role::Initiator && !self.checker.check_mac1(datagram) {
                    self.counters.bad_mac1 += 1;
                    return Err(CryptoError::Mac1);
                }
                self.on_response(now, sender_index, receiver_index, noise)?;
                Ok(Opened::Established)
            }
            Envelope::CookieReply { receiver_index, nonce, sealed_cookie } => {
                self.on_cookie_reply(now, receiver_index, nonce, sealed_cookie)?;
                Ok(Opened::Cookie)
            }
            Envelope::Transport { path_id: named, receiver_index, counter, .. } => {
                let at = Arrival { path, named };
                self.on_transport(now, receiver_index, counter, at, datagram).map(Opened::Data)
            }
        }
    }

    /// The next instant at which [`handle_timeout`](Self::handle_timeout) and the `poll_*`
    /// methods have work; an instant in the past means now.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut deadline: Option<Instant> = None;
        let mut consider = |t: Instant| deadline = Some(deadline.map_or(t, |d| d.min(t)));
        for keys in [&self.current, &self.previous, &self.next].into_iter().flatten() {
            consider(keys.created + REJECT_AFTER_TIME);
        }
        if let Some(t) = self.handshake_deadline() {
            consider(t);
        }
        if self.confirmation_due {
            consider(self.now);
        }
        if let Some(t) = self.passive_keepalive_deadline() {
            consider(t);
        }
        deadline
    }

    /// Advances timers: drops keys older than [`REJECT_AFTER_TIME`]. Handshakes and keepalives
    /// that fall due are then produced by [`poll_handshake`](Self::poll_handshake) and
    /// [`keepalive_due`](Self::keepalive_due).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.advance(now);
    }

    fn advance(&mut self, now: Instant) {
        self.now = self.now.max(now);
        let now = self.now;
        for slot in [&mut self.current, &mut self.previous, &mut self.next] {
            if slot.as_ref().is_some_and(|k| expired(k, now)) {
                *slot = None;
            }
        }
        if self.current.is_none() {
            self.confirmation_due = false;
        }
        if self.cached_response.as_ref().is_some_and(|c| now >= c.accepted_at + REKEY_TIMEOUT) {
            self.cached_response = None;
        }
    }

    fn handshake_due(&self, now: Instant) -> bool {
        self.handshake_deadline().is_some_and(|t| now >= t)
    }

    /// (Initiator) when the next initiation is due.
    fn handshake_deadline(&self) -> Option<Instant> {
        if self.role != Role::Initiator {
            return None;
        }
        if let Some(p) = &self.pending {
            return Some(p.sent_at + REKEY_TIMEOUT);
        }
        let Some(keys) = &self.current else {
            return Some(self.now);
        };
        let mut due = keys.created + REKEY_AFTER_TIME;
        // Counter c received means the peer sent at least c + 1 messages (1 before any: harmless).
        let messages = keys.messages_sent().max(keys.messages_received());
        if messages >= self.cipher.rekey_after_messages() {
            due = due.min(self.now);
        }
        if let Some(t) = self.peer_silent_deadline() {
            due = due.min(t);
        }
        Some(due)
    }

    /// Data went out after the last authenticated datagram came in: if nothing comes for
    /// KEEPALIVE_TIMEOUT + REKEY_TIMEOUT, the peer has likely lost our keys (WireGuard 6.5).
    fn peer_silent_deadline(&self) -> Option<Instant> {
        let sent = self.last_data_sent?;
        let received = self.last_received.unwrap_or(Instant::ZERO);
        (sent > received).then(|| received + KEEPALIVE_TIMEOUT + REKEY_TIMEOUT)
    }

    /// Data came in after the last send of anything: answer within KEEPALIVE_TIMEOUT.
    fn passive_keepalive_deadline(&self) -> Option<Instant> {
        let received = self.last_data_received?;
        let answered = self.last_sent.is_some_and(|s| s >= received);
        (!answered && self.current.is_some()).then(|| received + KEEPALIVE_TIMEOUT)
    }

    /// The responder's checks, cheapest first: `mac1` (one BLAKE2s), a copy of the initiation
    /// answered last, then under load a cookie for `src` and its per-source limit, then the
    /// global handshake budget; only then the Diffie-Hellman work of reading the initiation.
    fn on_initiation(
        &mut self,
        now: Instant,
        src: SocketAddr,
        initiation: &[u8; INITIATION_LEN],
        sender_index: u32,
        noise: &[u8; INITIATION_NOISE_LEN],
        reply: &mut [u8],
    ) -> Result<usize, CryptoError> {
        if self.role != Role::Responder {
            return Err(CryptoError::Unexpected { kind: MessageKind::Initiation, role: self.role });
        }
        self.gate.check_first(initiation, reply, &mut self.counters)?;
        if let Some(n) = self.cached_reply(initiation, reply) {
            return Ok(n);
        }
        let read = self.gate.admit_and_read(
            now,
            src,
            self.cipher,
            &self.local,
            initiation,
            sender_index,
            noise,
            reply,
            &mut self.counters,
        )?;
        let accepted = match read {
            Admitted::CookieReply(n) => return Ok(n),
            Admitted::Read(a) => *a,
        };
        if accepted.peer != self.peer {
            self.counters.handshake_failures += 1;
            return Err(CryptoError::UnknownPeer(accepted.peer));
        }
        self.accept(now, initiation, sender_index, accepted, reply)
    }

    /// (Responder) the response already sent to an exact copy of `initiation` (the same
    /// initiation arrives once per path), written into `reply` again without new keys.
    pub(crate) fn cached_reply(
        &mut self,
        initiation: &[u8; INITIATION_LEN],
        reply: &mut [u8],
    ) -> Option<usize> {
        let cached = self.cached_response.as_ref().filter(|c| &c.initiation == initiation)?;
        reply.get_mut(..RESPONSE_LEN)?.copy_from_slice(&cached.response);
        self.counters.duplicate_initiations += 1;
        Some(RESPONSE_LEN)
    }

    /// (Responder) answers an initiation from this session's peer that authenticated: refuses
    /// a timestamp not newer than the last accepted, else writes the response into `reply`
    /// and keeps the new keys as `next` until the initiator uses them.
    pub(crate) fn accept(
        &mut self,
        now: Instant,
        initiation: &[u8; INITIATION_LEN],
        sender_index: u32,
        accepted: handshake::AcceptedInitiation,
        reply: &mut [u8],
    ) -> Result<usize, CryptoError> {
        let available = reply.len();
        let reply = reply
            .get_mut(..RESPONSE_LEN)
            .ok_or(CryptoError::BufferTooSmall { needed: RESPONSE_LEN, available })?;
        if self.greatest_timestamp_accepted.is_some_and(|g| accepted.timestamp <= g) {
            self.counters.replayed_initiations += 1;
            return Err(CryptoError::ReplayedInitiation);
        }
        let theirs = PathTable::decode(&accepted.paths).map_err(|e| {
            self.counters.handshake_failures += 1;
            CryptoError::PathTable(e)
        })?;
        let paths = PathMap::responder(&self.paths, &theirs);
        let timestamp = accepted.timestamp;
        let local_index = self.fresh_index();
        let mut noise_out = [0u8; RESPONSE_NOISE_LEN];
        let peer_instance = accepted.instance;
        let about = About { instance: self.instance, paths: &self.paths };
        let keys = accepted
            .write_response(&self.psk, about, &mut noise_out)
            .map_err(CryptoError::Handshake)?;
        let zero = [0u8; MAC_LEN];
        let n = Envelope::Response {
            sender_index: local_index,
            receiver_index: sender_index,
            noise: &noise_out,
            mac1: &zero,
            mac2: &zero,
        }
        .emit(reply)?;
        self.jar.stamp(now, reply);
        self.greatest_timestamp_accepted = Some(timestamp);
        self.next = Some(Keypair::new(self.cipher, &keys, local_index, sender_index, now, paths));
        self.next_peer_instance = Some(peer_instance);
        let mut response = [0u8; RESPONSE_LEN];
        response.copy_from_slice(reply);
        self.cached_response =
            Some(CachedResponse { initiation: *initiation, response, accepted_at: now });
        Ok(n)
    }

    fn on_response(
        &mut self,
        now: Instant,
        sender_index: u32,
        receiver_index: u32,
        noise: &[u8; RESPONSE_NOISE_LEN],
    ) -> Result<(), CryptoError> {
        if self.role != Role::Initiator {
            return Err(CryptoError::Unexpected { kind: MessageKind::Response, role: self.role });
        }
        // A response to an initiation we no longer wait for (a copy from another path, or an
        // answer to a superseded try) names an index we do not hold.
        let Some(pending) = self.pending.as_mut().filter(|p| p.local_index == receiver_index)
        else {
            self.counters.unknown_index += 1;
            return Err(CryptoError::UnknownIndex(receiver_index));
        };
        let read = pending.handshake.read_response(noise).map_err(|e| {
            self.counters.handshake_failures += 1;
            CryptoError::Handshake(e)
        })?;
        let local_index = pending.local_index;
        self.pending = None;
        // An authenticated response with a malformed table is the peer's bug: its keys are not
        // used, and the next initiation tries again.
        let theirs = PathTable::decode(&read.paths).map_err(|e| {
            self.counters.handshake_failures += 1;
            CryptoError::PathTable(e)
        })?;
        let paths = PathMap::initiator(&self.paths, &theirs);
        let keys = Keypair::new(self.cipher, &read.keys, local_index, sender_index, now, paths);
        self.make_current(keys);
        self.confirmation_due = true;
        self.last_received = Some(now);
        self.counters.handshakes_completed += 1;
        self.keys_from_instance(read.instance);
        Ok(())
    }

    /// (Initiator) a cookie reply to our outstanding initiation: keep the cookie for the next.
    fn on_cookie_reply(
        &mut self,
        now: Instant,
        receiver_index: u32,
        nonce: &[u8; COOKIE_NONCE_LEN],
        sealed_cookie: &[u8; SEALED_COOKIE_LEN],
    ) -> Result<(), CryptoError> {
        if self.role != Role::Initiator {
            let kind = MessageKind::CookieReply;
            return Err(CryptoError::Unexpected { kind, role: self.role });
        }
        if self.pending.as_ref().is_none_or(|p| p.local_index != receiver_index) {
            self.counters.unknown_index += 1;
            return Err(CryptoError::UnknownIndex(receiver_index));
        }
        self.jar.on_cookie_reply(now, nonce, sealed_cookie).inspect_err(|_| {
            self.counters.handshake_failures += 1;
        })?;
        self.counters.cookies_received += 1;
        Ok(())
    }

    fn on_transport<'a>(
        &mut self,
        now: Instant,
        receiver_index: u32,
        counter: u64,
        at: Arrival,
        datagram: &'a mut [u8],
    ) -> Result<&'a mut [u8], CryptoError> {
        let slot = [
            (Slot::Current, &self.current),
            (Slot::Previous, &self.previous),
            (Slot::Next, &self.next),
        ]
        .into_iter()
        .find(|(_, keys)| keys.as_ref().is_some_and(|k| k.local_index == receiver_index))
        .map(|(slot, _)| slot);
        let Some(slot) = slot else {
            self.counters.unknown_index += 1;
            return Err(CryptoError::UnknownIndex(receiver_index));
        };
        let keys = self.keys_in(slot).as_mut().expect("slot found above");
        if keys.paths.wire_id(usize::from(at.path)) != Some(at.named) {
            self.counters.wrong_path += 1;
            return Err(CryptoError::WrongPath { named: at.named, arrived_on: at.path });
        }
        let plaintext = keys.open(counter, datagram).map_err(|e| {
            match e {
                CryptoError::Authentication => self.counters.bad_macs += 1,
                CryptoError::Replay { .. } => self.counters.replays += 1,
                _ => {}
            }
            e
        })?;
        self.after_open(now, slot, !plaintext.is_empty());
        Ok(plaintext)
    }

    /// The key pair held in `slot`, if any.
    fn keys_in(&mut self, slot: Slot) -> &mut Option<Box<Keypair>> {
        match slot {
            Slot::Current => &mut self.current,
            Slot::Previous => &mut self.previous,
            Slot::Next => &mut self.next,
        }
    }

    /// What an authenticated transport datagram (full or compact) under the keys in `slot`
    /// changes: keys awaiting confirmation become current, and the receive times move.
    fn after_open(&mut self, now: Instant, slot: Slot, has_data: bool) {
        if slot == Slot::Next {
            // Key confirmation: the initiator uses the new keys, so the responder does too.
            let next = self.next.take().expect("the datagram opened with them");
            self.make_current(next);
            self.counters.handshakes_completed += 1;
            if let Some(instance) = self.next_peer_instance.take() {
                self.keys_from_instance(instance);
            }
        }
        self.last_received = Some(now);
        if has_data {
            self.last_data_received = Some(now);
        }
    }

    /// The initiation timestamp for `now`: the wall clock at construction advanced by monotonic
    /// time, and always later than the last one sent.
    fn next_timestamp(&mut self, now: Instant) -> Tai64n {
        let wall = self.wall_anchor_unix + now.saturating_since(self.wall_anchor_mono);
        let mut stamp = Tai64n::from_unix(wall);
        if let Some(last) = self.last_timestamp_sent.filter(|&last| stamp <= last) {
            stamp = last.next_after();
        }
        self.last_timestamp_sent = Some(stamp);
        stamp
    }

    /// A 32-bit index not used by any key pair or pending handshake we hold, whose low bit
    /// differs from the current keys' (SplitMix64 output, Steele, Lea and Flood, OOPSLA 2014;
    /// folded to 32 bits).
    fn fresh_index(&mut self) -> u32 {
        loop {
            self.index_state = self.index_state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.index_state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            let index = (z ^ (z >> 32)) as u32;
            // The compact messages' key phase is this index's low bit: it must tell the new
            // keys from the current ones, which will be the previous ones then.
            if self.current.as_ref().is_some_and(|k| k.local_index & 1 == index & 1) {
                continue;
            }
            let in_use = [&self.current, &self.previous, &self.next]
                .into_iter()
                .flatten()
                .any(|k| k.local_index == index)
                || self.pending.as_ref().is_some_and(|p| p.local_index == index);
            if !in_use {
                return index;
            }
        }
    }
}

/// Where a transport datagram came in: our path, and the wire id its header names.
#[derive(Clone, Copy)]
struct Arrival {
    path: u8,
    named: u8,
}

fn expired(keys: &Keypair, now: Instant) -> bool {
    now >= keys.created + REJECT_AFTER_TIME
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("role", &self.role)
            .field("cipher", &self.cipher)
            .field("peer", &self.peer)
            .field("established", &self.is_established())
            .field("handshake_pending", &self.pending.is_some())
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
