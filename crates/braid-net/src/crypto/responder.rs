//! A server's security state for several peers: one [`Session`] per peer and one [`Gate`] in
//! front of them all.
//!
//! Which peer an initiation comes from is known only after the Diffie-Hellman that decrypts the
//! initiator's static key (Noise IK), so the checks before it (`mac1`, load, cookies, limits)
//! and the DH itself are the server's, done once whatever the number of peers; the peer's own
//! session then checks the timestamp and answers (WireGuard does the same: `mac1` is keyed by the
//! responder's key, and the handshake names the peer). A transport datagram goes to the session
//! that holds its receiver index. Index collisions between peers' sessions are not prevented
//! (each draws 32-bit indices from its own seeded generator; with tens of peers a collision is a
//! few in 10^8 per handshake and costs the later peer authentication failures until its next
//! handshake).

use std::net::SocketAddr;
use std::time::Duration;

use braid_core::Instant;

use super::envelope::{Envelope, MessageKind, INITIATION_LEN, INITIATION_NOISE_LEN};
use super::gate::{Admitted, Gate};
use super::keys::{PresharedKey, PrivateKey, PublicKey};
use super::path_table::PathTable;
use super::session::{Opened, Role, Session, SessionConfig, SessionCounters};
use super::{Cipher, CryptoError};

/// One server's sessions, one per configured peer, behind one gate.
pub struct Responder {
    cipher: Cipher,
    local: PrivateKey,
    gate: Gate,
    sessions: Vec<Session>,
    /// What happened before a datagram reached a peer's session: wrong `mac1`, cookies, limits,
    /// initiations from strangers.
    counters: SessionCounters,
}

/// One configured peer of a [`Responder`].
pub struct PeerKeys {
    pub public_key: PublicKey,
    pub psk: Option<PresharedKey>,
    /// Seeds the session's key indices (from the OS random source in the daemon).
    pub index_seed: u64,
}

impl Responder {
    /// Sessions for `peers`, our key `local`, `instance` and path names `paths`, at `now`
    /// (`unix_time` is unused by a responder, as by [`Session::new`]).
    pub fn new(
        cipher: Cipher,
        local: PrivateKey,
        peers: Vec<PeerKeys>,
        instance: u64,
        paths: &PathTable,
        now: Instant,
        unix_time: Duration,
    ) -> Self {
        let gate = Gate::new(&local.public_key(), now);
        let sessions = peers
            .into_iter()
            .map(|p| {
                let config = SessionConfig {
                    role: Role::Responder,
                    cipher,
                    local: local.clone(),
                    peer: p.public_key,
                    psk: p.psk,
                    index_seed: p.index_seed,
                    instance,
                    paths: paths.clone(),
                };
                Session::new(config, now, unix_time)
            })
            .collect();
        Responder { cipher, local, gate, sessions, counters: SessionCounters::default() }
    }

    /// The peers' sessions, in configuration order.
    pub fn sessions(&self) -> &[Session] {
        &self.sessions
    }

    pub fn session_mut(&mut self, peer: usize) -> &mut Session {
        &mut self.sessions[peer]
    }

    /// Counts of what the gate refused or answered, before any peer's session.
    pub fn counters(&self) -> SessionCounters {
        self.counters
    }

    /// Takes one datagram from path `path_id`, sent from `src`. Returns the peer it belongs to
    /// (when known) and what its session made of it (as [`Session::open`]); a handshake
    /// response or cookie reply goes into `reply` ([`REPLY_MAX`](super::REPLY_MAX) bytes).
    pub fn open<'a>(
        &mut self,
        now: Instant,
        src: SocketAddr,
        path_id: u8,
        datagram: &'a mut [u8],
        reply: &mut [u8],
    ) -> (Option<usize>, Result<Opened<'a>, CryptoError>) {
        let envelope = match Envelope::parse(datagram) {
            Ok(e) => e,
            Err(e) => return (None, Err(e.into())),
        };
        match envelope {
            Envelope::Initiation { sender_index, noise, .. } => {
                let initiation: [u8; INITIATION_LEN] =
                    (&*datagram).try_into().expect("the envelope checked the length");
                let noise = *noise;
                let (peer, r) =
                    self.on_initiation(now, src, &initiation, sender_index, &noise, reply);
                (peer, r.map(Opened::Reply))
            }
            Envelope::Transport { receiver_index, .. } => {
                match self.sessions.iter().position(|s| s.holds_index(receiver_index)) {
                    Some(p) => (Some(p), self.sessions[p].open(now, src, path_id, datagram, reply)),
                    None => {
                        self.counters.unknown_index += 1;
                        (None, Err(CryptoError::UnknownIndex(receiver_index)))
                    }
                }
            }
            other => {
                let kind = other.kind();
                debug_assert_ne!(kind, MessageKind::Initiation);
                (None, Err(CryptoError::Unexpected { kind, role: Role::Responder }))
            }
        }
    }

    fn on_initiation(
        &mut self,
        now: Instant,
        src: SocketAddr,
        initiation: &[u8; INITIATION_LEN],
        sender_index: u32,
        noise: &[u8; INITIATION_NOISE_LEN],
        reply: &mut [u8],
    ) -> (Option<usize>, Result<usize, CryptoError>) {
        if let Err(e) = self.gate.check_first(initiation, reply, &mut self.counters) {
            return (None, Err(e));
        }
        for (p, s) in self.sessions.iter_mut().enumerate() {
            if let Some(n) = s.cached_reply(initiation, reply) {
                return (Some(p), Ok(n));
            }
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
        );
        let accepted = match read {
            Ok(Admitted::CookieReply(n)) => return (None, Ok(n)),
            Ok(Admitted::Read(a)) => *a,
            Err(e) => return (None, Err(e)),
        };
        let Some(p) = self.sessions.iter().position(|s| *s.peer() == accepted.peer) else {
            self.counters.handshake_failures += 1;
            return (None, Err(CryptoError::UnknownPeer(accepted.peer)));
        };
        (Some(p), self.sessions[p].accept(now, initiation, sender_index, accepted, reply))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::envelope::HEADER_LEN;
    use crate::crypto::keys::generate_keypair;
    use crate::crypto::OVERHEAD;
    use crate::crypto::REPLY_MAX;

    const T0: Instant = Instant::from_nanos(1_000_000_000);

    fn client(
        local: &PrivateKey,
        server: &PublicKey,
        psk: Option<PresharedKey>,
        n: u64,
    ) -> Session {
        let config = SessionConfig {
            role: Role::Initiator,
            cipher: Cipher::default(),
            local: local.clone(),
            peer: *server,
            psk,
            index_seed: n,
            instance: n,
            paths: one_path(),
        };
        Session::new(config, T0, Duration::from_secs(1_700_000_000))
    }

    fn one_path() -> PathTable {
        PathTable::new(&["p0"]).unwrap()
    }

    /// A server with key `local` for `peers`, one path, at T0.
    fn responder(local: PrivateKey, peers: Vec<PeerKeys>) -> Responder {
        Responder::new(Cipher::default(), local, peers, 9, &one_path(), T0, Duration::ZERO)
    }

    fn from(n: u8) -> SocketAddr {
        SocketAddr::from(([192, 0, 2, n], 4000))
    }

    /// Opens `d` at the responder; returns the peer and the reply or plaintext.
    fn open(
        r: &mut Responder,
        src: SocketAddr,
        d: &[u8],
    ) -> (Option<usize>, Result<Vec<u8>, CryptoError>) {
        let mut d = d.to_vec();
        let mut reply = [0u8; REPLY_MAX];
        let (peer, out) = r.open(T0, src, 0, &mut d, &mut reply);
        (
            peer,
            out.map(|o| match o {
                Opened::Reply(n) => reply[..n].to_vec(),
                Opened::Data(p) => p.to_vec(),
                other => panic!("{other:?}"),
            }),
        )
    }

    fn handshake(c: &mut Session, r: &mut Responder, src: SocketAddr) -> Option<usize> {
        let mut buf = [0u8; INITIATION_LEN];
        let n = c.poll_handshake(T0, &mut buf).unwrap().unwrap();
        let (peer, response) = open(r, src, &buf[..n]);
        let mut response = response.unwrap();
        let mut reply = [0u8; REPLY_MAX];
        assert_eq!(c.open(T0, src, 0, &mut response, &mut reply), Ok(Opened::Established));
        // The client confirms with a keepalive, which switches the server's keys.
        let mut k = [0u8; OVERHEAD];
        let n = c.seal(T0, 0, &mut k, 0).unwrap();
        assert_eq!(open(r, src, &k[..n]), (peer, Ok(vec![])));
        peer
    }

    fn seal(c: &mut Session, text: &[u8]) -> Vec<u8> {
        let mut buf = vec![0u8; text.len() + OVERHEAD];
        buf[HEADER_LEN..HEADER_LEN + text.len()].copy_from_slice(text);
        let n = c.seal(T0, 0, &mut buf, text.len()).unwrap();
        buf.truncate(n);
        buf
    }

    #[test]
    fn each_client_reaches_its_own_session_and_strangers_none() {
        let (server_private, server) = generate_keypair().unwrap();
        let (a_private, a) = generate_keypair().unwrap();
        let (b_private, b) = generate_keypair().unwrap();
        let psk_b = PresharedKey::from_bytes([7; 32]);
        let peers = vec![
            PeerKeys { public_key: a, psk: None, index_seed: 1 },
            PeerKeys { public_key: b, psk: Some(psk_b.clone()), index_seed: 2 },
        ];
        let mut r = responder(server_private, peers);
        let mut ca = client(&a_private, &server, None, 11);
        let mut cb = client(&b_private, &server, Some(psk_b), 12);
        // Client b first: the peer is found by its key, whatever the order.
        assert_eq!(handshake(&mut cb, &mut r, from(2)), Some(1));
        assert_eq!(handshake(&mut ca, &mut r, from(1)), Some(0));
        assert!(r.sessions().iter().all(Session::is_established));
        assert_eq!(
            open(&mut r, from(1), &seal(&mut ca, b"from a")),
            (Some(0), Ok(b"from a".to_vec()))
        );
        assert_eq!(
            open(&mut r, from(2), &seal(&mut cb, b"from b")),
            (Some(1), Ok(b"from b".to_vec()))
        );
        // A stranger who knows the server's key passes mac1 and fails at the peer lookup.
        let (x_private, _) = generate_keypair().unwrap();
        let mut cx = client(&x_private, &server, None, 13);
        let mut buf = [0u8; INITIATION_LEN];
        let n = cx.poll_handshake(T0, &mut buf).unwrap().unwrap();
        assert!(matches!(
            open(&mut r, from(3), &buf[..n]),
            (None, Err(CryptoError::UnknownPeer(_)))
        ));
        assert_eq!(r.counters().handshake_failures, 1);
        // Junk: refused at mac1, counted by the responder.
        let mut junk = buf[..n].to_vec();
        junk[20] ^= 1;
        assert_eq!(open(&mut r, from(3), &junk), (None, Err(CryptoError::Mac1)));
        assert_eq!(r.counters().bad_mac1, 1);
        // A transport datagram for an index nobody holds.
        let mut stray = seal(&mut ca, b"x");
        stray[4..8].copy_from_slice(&0xdead_beef_u32.to_be_bytes());
        assert_eq!(
            open(&mut r, from(1), &stray),
            (None, Err(CryptoError::UnknownIndex(0xdead_beef)))
        );
        // Messages a responder does not take.
        let mut cookie = vec![3, 0, 0, 0];
        cookie.extend_from_slice(&[0; 60]);
        assert!(matches!(
            open(&mut r, from(1), &cookie),
            (None, Err(CryptoError::Unexpected { .. }))
        ));
    }

    #[test]
    fn a_copy_of_a_clients_initiation_on_another_path_gets_its_cached_response() {
        let (server_private, server) = generate_keypair().unwrap();
        let (a_private, a) = generate_keypair().unwrap();
        let (b_private, b) = generate_keypair().unwrap();
        let peers = vec![
            PeerKeys { public_key: a, psk: None, index_seed: 1 },
            PeerKeys { public_key: b, psk: None, index_seed: 2 },
        ];
        let mut r = responder(server_private, peers);
        let _ = client(&a_private, &server, None, 1);
        let mut cb = client(&b_private, &server, None, 2);
        let mut buf = [0u8; INITIATION_LEN];
        let n = cb.poll_handshake(T0, &mut buf).unwrap().unwrap();
        let (p1, first) = open(&mut r, from(2), &buf[..n]);
        let (p2, copy) = open(&mut r, from(4), &buf[..n]);
        assert_eq!((p1, p2), (Some(1), Some(1)));
        assert_eq!(first.unwrap(), copy.unwrap());
        assert_eq!(r.sessions()[1].counters().duplicate_initiations, 1);
    }
}
