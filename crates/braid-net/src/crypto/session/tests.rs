//! Two sessions, a client (initiator) and a server (responder), driven by hand with a virtual
//! clock; datagrams are moved between them as byte vectors, so a test can hold, reorder, copy or
//! tamper with any of them.

use super::*;
use crate::crypto::envelope::COOKIE_REPLY_LEN;
use crate::crypto::keys::generate_keypair;
use crate::crypto::replay::{ReplayError, REPLAY_WINDOW_PKTS};
use crate::crypto::{EnvelopeError, OVERHEAD};

const T0: Instant = Instant::from_nanos(1_000_000_000);
const UNIX_AT_T0: Duration = Duration::from_secs(1_700_000_000);

fn at(secs: f64) -> Instant {
    T0 + Duration::from_secs_f64(secs)
}

struct Ends {
    client_private: PrivateKey,
    server_private: PrivateKey,
    cipher: Cipher,
}

impl Ends {
    /// The same static keys, for ends that differ in something else.
    fn clone_keys(other: &Ends) -> Self {
        Ends {
            client_private: other.client_private.clone(),
            server_private: other.server_private.clone(),
            cipher: other.cipher,
        }
    }

    /// Two fresh static keys; both ends use the default cipher.
    fn new() -> Self {
        Ends::with_cipher(Cipher::default())
    }

    fn with_cipher(cipher: Cipher) -> Self {
        Ends {
            client_private: generate_keypair().unwrap().0,
            server_private: generate_keypair().unwrap().0,
            cipher,
        }
    }

    fn client(&self, psk: Option<PresharedKey>) -> Session {
        let config = SessionConfig {
            role: Role::Initiator,
            cipher: self.cipher,
            local: self.client_private.clone(),
            peer: self.server_private.public_key(),
            psk,
            index_seed: 1,
            instance: 1,
            paths: test_paths(),
        };
        Session::new(config, T0, UNIX_AT_T0)
    }

    fn server(&self, psk: Option<PresharedKey>) -> Session {
        let config = SessionConfig {
            role: Role::Responder,
            cipher: self.cipher,
            local: self.server_private.clone(),
            peer: self.client_private.public_key(),
            psk,
            index_seed: 2,
            instance: 2,
            paths: test_paths(),
        };
        Session::new(config, T0, Duration::ZERO)
    }
}

/// The paths both ends list, in the same order, unless a test says otherwise.
fn test_paths() -> PathTable {
    PathTable::new(&["p0", "p1", "p2"]).unwrap()
}

fn initiation(client: &mut Session, now: Instant) -> Option<Vec<u8>> {
    let mut buf = [0u8; INITIATION_LEN];
    client.poll_handshake(now, &mut buf).unwrap().map(|n| buf[..n].to_vec())
}

/// The source address of everything [`deliver`] hands over.
fn peer_addr() -> SocketAddr {
    "192.0.2.1:51820".parse().unwrap()
}

/// Feeds `datagram` to `session` from [`peer_addr`]; returns what came out, owning it.
fn deliver(session: &mut Session, now: Instant, datagram: &[u8]) -> Result<Output, CryptoError> {
    deliver_from(session, now, peer_addr(), datagram)
}

/// Feeds `datagram` to `session` as sent from `src`.
fn deliver_from(
    session: &mut Session,
    now: Instant,
    src: SocketAddr,
    datagram: &[u8],
) -> Result<Output, CryptoError> {
    let mut buf = datagram.to_vec();
    let mut reply = [0u8; REPLY_MAX];
    Ok(match session.open(now, src, 0, &mut buf, &mut reply)? {
        Opened::Data(plaintext) => Output::Data(plaintext.to_vec()),
        Opened::Reply(n) => Output::Reply(reply[..n].to_vec()),
        Opened::Established => Output::Established,
        Opened::Cookie => Output::Cookie,
    })
}

#[derive(Debug, PartialEq)]
enum Output {
    Data(Vec<u8>),
    Reply(Vec<u8>),
    Established,
    Cookie,
}

fn reply_of(output: Result<Output, CryptoError>) -> Vec<u8> {
    match output {
        Ok(Output::Reply(r)) => r,
        other => panic!("expected a reply, got {other:?}"),
    }
}

fn seal(session: &mut Session, now: Instant, plaintext: &[u8]) -> Vec<u8> {
    try_seal(session, now, plaintext).unwrap()
}

fn try_seal(session: &mut Session, now: Instant, plaintext: &[u8]) -> Result<Vec<u8>, CryptoError> {
    let mut buf = vec![0u8; plaintext.len() + OVERHEAD];
    buf[HEADER_LEN..HEADER_LEN + plaintext.len()].copy_from_slice(plaintext);
    let n = session.seal(now, 0, &mut buf, plaintext.len())?;
    assert_eq!(n, buf.len());
    Ok(buf)
}

fn keepalive(session: &mut Session, now: Instant) -> Option<Vec<u8>> {
    let mut buf = [0u8; OVERHEAD];
    session.keepalive_due(now).then(|| {
        let n = session.seal(now, 0, &mut buf, 0).unwrap();
        buf[..n].to_vec()
    })
}

/// Initiation, response, and the initiator's confirming keepalive, all at `now`.
fn handshake(client: &mut Session, server: &mut Session, now: Instant) {
    let init = initiation(client, now).expect("an initiation is due");
    let response = reply_of(deliver(server, now, &init));
    assert_eq!(deliver(client, now, &response), Ok(Output::Established));
    let confirm = keepalive(client, now).expect("the initiator confirms at once");
    assert_eq!(deliver(server, now, &confirm), Ok(Output::Data(vec![])));
}

fn established_pair(psk: Option<PresharedKey>) -> (Session, Session) {
    established_pair_with(Cipher::default(), psk)
}

fn established_pair_with(cipher: Cipher, psk: Option<PresharedKey>) -> (Session, Session) {
    let ends = Ends::with_cipher(cipher);
    let (mut client, mut server) = (ends.client(psk.clone()), ends.server(psk));
    handshake(&mut client, &mut server, T0);
    (client, server)
}

#[test]
fn handshake_then_data_both_ways() {
    for cipher in Cipher::ALL {
        let ends = Ends::with_cipher(cipher);
        let psk = Some(PresharedKey::from_bytes([9; 32]));
        let (mut client, mut server) = (ends.client(psk.clone()), ends.server(psk));
        assert!(!client.is_established() && !server.is_established());
        assert_eq!(try_seal(&mut client, T0, b"early"), Err(CryptoError::NoSession));
        // The responder never initiates.
        assert_eq!(initiation(&mut server, T0), None);

        handshake(&mut client, &mut server, T0);
        assert!(client.is_established() && server.is_established());
        let up = seal(&mut client, at(0.1), b"ping");
        assert_eq!(up.len(), 4 + OVERHEAD, "{cipher}");
        assert_eq!(deliver(&mut server, at(0.1), &up), Ok(Output::Data(b"ping".to_vec())));
        let down = seal(&mut server, at(0.2), b"pong");
        assert_eq!(deliver(&mut client, at(0.2), &down), Ok(Output::Data(b"pong".to_vec())));
        assert_eq!(client.counters().initiations_sent, 1);
        assert_eq!(client.counters().handshakes_completed, 1);
        assert_eq!(server.counters().handshakes_completed, 1);
        assert_eq!((client.cipher(), server.cipher()), (cipher, cipher));
    }
}

/// The cipher is part of the Noise protocol name: a responder configured with the other cipher
/// cannot read the initiation, refuses it as a handshake failure and makes no keys; the
/// initiator, unanswered, never establishes.
#[test]
fn peers_with_different_ciphers_never_establish() {
    let chacha = Ends::with_cipher(Cipher::ChaCha20Poly1305);
    let aes = Ends { cipher: Cipher::Aes256Gcm, ..Ends::clone_keys(&chacha) };
    let (mut client, mut server) = (chacha.client(None), aes.server(None));
    for t in [0.0, 5.0, 10.0] {
        let init = initiation(&mut client, at(t)).expect("the client keeps trying");
        let refused = deliver(&mut server, at(t), &init);
        assert_eq!(refused, Err(CryptoError::Handshake(snow::Error::Decrypt)));
        let text = refused.unwrap_err().to_string();
        assert!(text.starts_with("handshake message refused"), "{text}");
    }
    assert_eq!(server.counters().handshake_failures, 3);
    assert!(server.next.is_none() && !server.is_established());
    assert!(!client.is_established());
    // The same keys with the same cipher on both ends do establish.
    let mut server = chacha.server(None);
    handshake(&mut client, &mut server, at(15.0));
    assert!(client.is_established() && server.is_established());
}

#[test]
fn responder_waits_for_key_confirmation_before_sending() {
    let ends = Ends::new();
    let (mut client, mut server) = (ends.client(None), ends.server(None));
    let init = initiation(&mut client, T0).unwrap();
    let response = reply_of(deliver(&mut server, T0, &init));
    // Key confirmation: the responder must not send under keys the initiator may lack.
    assert!(!server.is_established());
    assert_eq!(try_seal(&mut server, T0, b"x"), Err(CryptoError::NoSession));
    assert_eq!(deliver(&mut client, T0, &response), Ok(Output::Established));
    // Data (not only a keepalive) confirms the keys too.
    let first = seal(&mut client, T0, b"first");
    assert_eq!(keepalive(&mut client, T0), None, "data already confirmed the keys");
    assert_eq!(deliver(&mut server, T0, &first), Ok(Output::Data(b"first".to_vec())));
    assert!(server.is_established());
}

#[test]
fn tampered_ciphertext_is_refused() {
    for cipher in Cipher::ALL {
        let (mut client, mut server) = established_pair_with(cipher, None);
        let genuine = seal(&mut client, at(1.0), b"attack at dawn");
        for byte in [0, 5, 12, HEADER_LEN, HEADER_LEN + 13, genuine.len() - 1] {
            let mut forged = genuine.clone();
            forged[byte] ^= 0x80;
            assert!(deliver(&mut server, at(1.0), &forged).is_err(), "{cipher}: byte {byte}");
        }
        // Byte 0 makes an unknown type, 5 an unknown index; the counter (12), the ciphertext
        // (16, 29) and the tag (last) fail authentication.
        assert_eq!(server.counters().bad_macs, 4, "{cipher}");
        assert_eq!(server.counters().unknown_index, 1);
        assert_eq!(
            deliver(&mut server, at(1.0), &genuine),
            Ok(Output::Data(b"attack at dawn".to_vec()))
        );
    }
}

#[test]
fn initiation_from_another_static_key_is_refused() {
    let ends = Ends::new();
    let mut server = ends.server(None);
    // A stranger who knows the server's public key, but is not the configured peer.
    let (stranger_private, stranger_public) = generate_keypair().unwrap();
    let mut stranger = Session::new(
        SessionConfig {
            role: Role::Initiator,
            cipher: Cipher::default(),
            local: stranger_private,
            peer: ends.server_private.public_key(),
            psk: None,
            index_seed: 3,
            instance: 0,
            paths: test_paths(),
        },
        T0,
        UNIX_AT_T0,
    );
    let init = initiation(&mut stranger, T0).unwrap();
    assert_eq!(deliver(&mut server, T0, &init), Err(CryptoError::UnknownPeer(stranger_public)));
    assert_eq!(server.counters().handshake_failures, 1);
    assert!(server.next.is_none(), "no keys made for a stranger");
}

#[test]
fn initiation_for_another_responder_is_refused() {
    let ends = Ends::new();
    let mut server = ends.server(None);
    let mut misdirected = Session::new(
        SessionConfig {
            role: Role::Initiator,
            cipher: Cipher::default(),
            local: ends.client_private.clone(),
            peer: generate_keypair().unwrap().1,
            psk: None,
            index_seed: 4,
            instance: 0,
            paths: test_paths(),
        },
        T0,
        UNIX_AT_T0,
    );
    let init = initiation(&mut misdirected, T0).unwrap();
    // Its mac1 is keyed by the other responder's public key: refused before any DH.
    assert_eq!(deliver(&mut server, T0, &init), Err(CryptoError::Mac1));
    assert_eq!(server.counters().handshake_failures, 0);
}

#[test]
fn mismatched_psk_never_establishes() {
    let ends = Ends::new();
    let mut client = ends.client(Some(PresharedKey::from_bytes([1; 32])));
    let mut server = ends.server(Some(PresharedKey::from_bytes([2; 32])));
    let init = initiation(&mut client, T0).unwrap();
    let response = reply_of(deliver(&mut server, T0, &init));
    assert_eq!(
        deliver(&mut client, T0, &response),
        Err(CryptoError::Handshake(snow::Error::Decrypt))
    );
    assert!(!client.is_established());
    assert_eq!(client.counters().handshake_failures, 1);
}

#[test]
fn replayed_transport_datagram_is_refused() {
    let (mut client, mut server) = established_pair(None);
    let d = seal(&mut client, at(1.0), b"once");
    assert!(deliver(&mut server, at(1.0), &d).is_ok());
    assert_eq!(
        deliver(&mut server, at(1.1), &d),
        Err(CryptoError::Replay { counter: 1, reason: ReplayError::Duplicate })
    );
    assert_eq!(server.counters().replays, 1);
}

#[test]
fn reordered_datagrams_within_the_window_are_accepted() {
    let (mut client, mut server) = established_pair(None);
    // Two paths: the slow one carries every third datagram and delivers it 3,000 datagrams late.
    let sealed: Vec<Vec<u8>> =
        (0..6000u32).map(|i| seal(&mut client, at(1.0), &i.to_be_bytes())).collect();
    let (slow, fast): (Vec<_>, Vec<_>) = sealed.iter().enumerate().partition(|(i, _)| i % 3 == 0);
    let mut received = Vec::new();
    for (_, d) in fast.iter().take(2000).chain(slow.iter()).chain(fast.iter().skip(2000)) {
        match deliver(&mut server, at(1.1), d) {
            Ok(Output::Data(p)) => received.push(u32::from_be_bytes(p.try_into().unwrap())),
            other => panic!("{other:?}"),
        }
    }
    received.sort_unstable();
    assert_eq!(received, (0..6000).collect::<Vec<_>>());
}

#[test]
fn datagram_older_than_the_window_is_refused() {
    let (mut client, mut server) = established_pair(None);
    // The confirming keepalive used counter 0; `late` gets counter 1.
    let late = seal(&mut client, at(1.0), b"late");
    let mut newest = Vec::new();
    for _ in 0..REPLAY_WINDOW_PKTS {
        newest = seal(&mut client, at(1.0), b"");
    }
    // newest has counter 1 + W: exactly W ahead of `late`, one past the window's reach.
    assert!(deliver(&mut server, at(1.0), &newest).is_ok());
    assert_eq!(
        deliver(&mut server, at(1.0), &late),
        Err(CryptoError::Replay { counter: 1, reason: ReplayError::TooOld })
    );
}

#[test]
fn unanswered_initiation_is_retried_and_old_initiations_are_refused() {
    let ends = Ends::new();
    let (mut client, mut server) = (ends.client(None), ends.server(None));
    let first = initiation(&mut client, T0).unwrap();
    assert_eq!(client.poll_timeout(), Some(at(5.0)));
    assert_eq!(initiation(&mut client, at(4.9)), None);
    let second = initiation(&mut client, at(5.0)).expect("retry after REKEY_TIMEOUT");
    assert_ne!(first, second, "each try is a new handshake");
    let response = reply_of(deliver(&mut server, at(5.0), &second));
    // The first try arrives late: its timestamp is older than the accepted one.
    assert_eq!(deliver(&mut server, at(5.1), &first), Err(CryptoError::ReplayedInitiation));
    assert_eq!(server.counters().replayed_initiations, 1);
    // The response answers the second try; the first try's state is gone.
    assert_eq!(deliver(&mut client, at(5.1), &response), Ok(Output::Established));
}

#[test]
fn copies_of_an_initiation_from_other_paths_get_the_same_response() {
    let ends = Ends::new();
    let (mut client, mut server) = (ends.client(None), ends.server(None));
    let init = initiation(&mut client, T0).unwrap();
    let on_path_1 = reply_of(deliver(&mut server, T0, &init));
    let on_path_2 = reply_of(deliver(&mut server, at(0.05), &init));
    assert_eq!(on_path_1, on_path_2);
    assert_eq!(server.counters().duplicate_initiations, 1);
    assert_eq!(deliver(&mut client, at(0.06), &on_path_1), Ok(Output::Established));
    // The second copy of the response finds no pending handshake.
    assert!(matches!(deliver(&mut client, at(0.1), &on_path_2), Err(CryptoError::UnknownIndex(_))));
    // Once REKEY_TIMEOUT has passed a copy is an old initiation like any other.
    assert_eq!(deliver(&mut server, at(5.0), &init), Err(CryptoError::ReplayedInitiation));
}

#[test]
fn rekey_after_time_loses_no_datagram() {
    let (mut client, mut server) = established_pair(None);
    let exchange = |c: &mut Session, s: &mut Session, t: Instant| {
        let d = seal(c, t, b"up");
        assert_eq!(deliver(s, t, &d), Ok(Output::Data(b"up".to_vec())));
        let d = seal(s, t, b"down");
        assert_eq!(deliver(c, t, &d), Ok(Output::Data(b"down".to_vec())));
    };
    exchange(&mut client, &mut server, at(1.0));
    assert_eq!(initiation(&mut client, at(119.9)), None);
    assert_eq!(client.poll_timeout(), Some(at(120.0)));
    let init = initiation(&mut client, at(120.0)).expect("REKEY_AFTER_TIME");

    // In flight on a slow path under the old keys, both ways.
    let old_up: Vec<_> = (0..3).map(|_| seal(&mut client, at(120.0), b"old up")).collect();
    let response = reply_of(deliver(&mut server, at(120.01), &init));
    let old_down = seal(&mut server, at(120.01), b"old down"); // still the old keys
    assert_eq!(deliver(&mut client, at(120.02), &response), Ok(Output::Established));

    // The first datagram under the new keys arrives first, on the fast path...
    let new_up = seal(&mut client, at(120.03), b"new up");
    assert_eq!(deliver(&mut server, at(120.03), &new_up), Ok(Output::Data(b"new up".to_vec())));
    // ...then the old ones from the slow path: kept keys still open them.
    for d in &old_up {
        assert_eq!(deliver(&mut server, at(120.1), d), Ok(Output::Data(b"old up".to_vec())));
    }
    assert_eq!(deliver(&mut client, at(120.1), &old_down), Ok(Output::Data(b"old down".to_vec())));
    // The server now sends under the new keys.
    exchange(&mut client, &mut server, at(121.0));
    assert_eq!(client.counters().handshakes_completed, 2);
    assert_eq!(server.counters().handshakes_completed, 2);
    assert_eq!(server.counters().bad_macs + server.counters().unknown_index, 0);
    // And the session outlives the first keys' REJECT_AFTER_TIME.
    exchange(&mut client, &mut server, at(200.0));
}

#[test]
fn keys_expire_after_reject_after_time() {
    let (mut client, mut server) = established_pair(None);
    // The client never rekeys: suppose every initiation is lost (we never poll for one).
    let last_good = seal(&mut client, at(179.9), b"last");
    assert_eq!(deliver(&mut server, at(179.9), &last_good), Ok(Output::Data(b"last".to_vec())));
    let too_late = seal(&mut client, at(179.99), b"late");
    assert_eq!(try_seal(&mut client, at(180.0), b"x"), Err(CryptoError::NoSession));
    assert_eq!(try_seal(&mut server, at(180.0), b"x"), Err(CryptoError::NoSession));
    assert!(!client.is_established() && !server.is_established());
    assert!(matches!(
        deliver(&mut server, at(180.0), &too_late),
        Err(CryptoError::UnknownIndex(_))
    ));
    // A fresh handshake brings the session back.
    handshake(&mut client, &mut server, at(181.0));
    assert!(client.is_established());
}

#[test]
fn poll_timeout_names_the_next_deadline() {
    let (client, server) = established_pair(None);
    // Client: rekey at 120 s comes before expiry at 180 s. Server: only expiry.
    assert_eq!(client.poll_timeout(), Some(at(120.0)));
    assert_eq!(server.poll_timeout(), Some(at(180.0)));
}

#[test]
fn received_data_unanswered_gets_a_keepalive_after_keepalive_timeout() {
    let (mut client, mut server) = established_pair(None);
    let d = seal(&mut client, at(1.0), b"data");
    deliver(&mut server, at(1.0), &d).unwrap();
    assert_eq!(server.poll_timeout(), Some(at(11.0)));
    assert_eq!(keepalive(&mut server, at(10.9)), None);
    let k = keepalive(&mut server, at(11.0)).expect("KEEPALIVE_TIMEOUT");
    assert_eq!(deliver(&mut client, at(11.0), &k), Ok(Output::Data(vec![])));
    assert_eq!(keepalive(&mut server, at(30.0)), None, "one keepalive per unanswered data");
    // A keepalive is not data: the client owes no keepalive back.
    assert_eq!(keepalive(&mut client, at(30.0)), None);
}

#[test]
fn silent_peer_triggers_a_new_handshake() {
    let ends = Ends::new();
    let (mut client, mut server) = (ends.client(None), ends.server(None));
    handshake(&mut client, &mut server, T0);
    // The server restarts and forgets the keys.
    let mut server = ends.server(None);
    let d = seal(&mut client, at(1.0), b"hello?");
    assert!(matches!(deliver(&mut server, at(1.0), &d), Err(CryptoError::UnknownIndex(_))));
    // Last authenticated receipt at T0: KEEPALIVE_TIMEOUT + REKEY_TIMEOUT = 15 s later.
    assert_eq!(client.poll_timeout(), Some(at(15.0)));
    assert_eq!(initiation(&mut client, at(14.9)), None);
    let init = initiation(&mut client, at(15.0)).expect("peer silent");
    let response = reply_of(deliver(&mut server, at(15.0), &init));
    assert_eq!(deliver(&mut client, at(15.0), &response), Ok(Output::Established));
}

#[test]
fn rekey_after_messages() {
    for cipher in Cipher::ALL {
        let limit = cipher.rekey_after_messages();
        let (mut client, mut server) = established_pair_with(cipher, None);
        client.current.as_mut().unwrap().skip_send_counter_to(limit - 1);
        let d = seal(&mut client, at(2.0), b"the last before the limit");
        assert_eq!(client.poll_timeout(), Some(at(2.0)), "{cipher}");
        let init = initiation(&mut client, at(2.0)).expect("rekey after messages");
        // The counter is far ahead but the window only bounds how far behind: accepted.
        assert_eq!(
            deliver(&mut server, at(2.0), &d),
            Ok(Output::Data(b"the last before the limit".to_vec()))
        );
        // The old keys keep sending while the handshake is under way, without new initiations.
        let d = seal(&mut client, at(2.1), b"more");
        assert_eq!(initiation(&mut client, at(2.1)), None);
        assert_eq!(deliver(&mut server, at(2.1), &d), Ok(Output::Data(b"more".to_vec())));
        let response = reply_of(deliver(&mut server, at(2.2), &init));
        assert_eq!(deliver(&mut client, at(2.2), &response), Ok(Output::Established));
        // Fresh keys: no further rekey until REKEY_AFTER_TIME.
        assert_eq!(initiation(&mut client, at(3.0)), None);
        assert_eq!(client.current.as_ref().unwrap().messages_sent(), 0);
    }
}

/// Only the client initiates, but in a download the server's key carries most messages: the
/// client rekeys when the counters it receives reach the limit. AES-GCM's limit is 2^25.
#[test]
fn the_peers_counter_reaching_the_limit_makes_the_initiator_rekey() {
    let (mut client, mut server) = established_pair_with(Cipher::Aes256Gcm, None);
    server.current.as_mut().unwrap().skip_send_counter_to((1 << 25) - 2);
    let below = seal(&mut server, at(2.0), b"2^25 - 2");
    assert_eq!(deliver(&mut client, at(2.0), &below), Ok(Output::Data(b"2^25 - 2".to_vec())));
    assert_eq!(initiation(&mut client, at(2.0)), None, "one short of the limit");
    let at_limit = seal(&mut server, at(2.1), b"2^25 - 1");
    assert_eq!(deliver(&mut client, at(2.1), &at_limit), Ok(Output::Data(b"2^25 - 1".to_vec())));
    assert_eq!(client.poll_timeout(), Some(at(2.1)));
    let init = initiation(&mut client, at(2.1)).expect("the peer's counter reached the limit");
    let response = reply_of(deliver(&mut server, at(2.2), &init));
    assert_eq!(deliver(&mut client, at(2.2), &response), Ok(Output::Established));
}

/// AES-GCM keys stop at their confidentiality limit (2^26 messages) and say why.
#[test]
fn aes_gcm_keys_stop_at_the_reject_limit() {
    let (mut client, _server) = established_pair_with(Cipher::Aes256Gcm, None);
    client.current.as_mut().unwrap().skip_send_counter_to((1 << 26) - 1);
    assert!(try_seal(&mut client, at(1.0), b"last").is_ok());
    assert_eq!(try_seal(&mut client, at(1.0), b"one more"), Err(CryptoError::CounterExhausted));
}

#[test]
fn roles_refuse_the_other_roles_messages() {
    let ends = Ends::new();
    let (mut client, mut server) = (ends.client(None), ends.server(None));
    let init = initiation(&mut client, T0).unwrap();
    let response = reply_of(deliver(&mut server, T0, &init));
    assert_eq!(
        deliver(&mut client, T0, &init),
        Err(CryptoError::Unexpected { kind: MessageKind::Initiation, role: Role::Initiator })
    );
    assert_eq!(
        deliver(&mut server, T0, &response),
        Err(CryptoError::Unexpected { kind: MessageKind::Response, role: Role::Responder })
    );
}

#[test]
fn garbage_and_short_buffers_are_errors_not_panics() {
    let (mut client, _server) = established_pair(None);
    assert_eq!(deliver(&mut client, T0, &[]), Err(CryptoError::Envelope(EnvelopeError::Empty)));
    let mut small = [0u8; OVERHEAD + 3];
    assert_eq!(
        client.seal(at(1.0), 0, &mut small, 4),
        Err(CryptoError::BufferTooSmall { needed: OVERHEAD + 4, available: OVERHEAD + 3 })
    );
    let mut huge_len = [0u8; 64];
    assert!(client.seal(at(1.0), 0, &mut huge_len, usize::MAX).is_err());
}

#[test]
fn debug_output_holds_no_secret() {
    let ends = Ends::new();
    let session = ends.client(Some(PresharedKey::from_bytes([0x42; 32])));
    let config_text = format!(
        "{:?}",
        SessionConfig {
            role: Role::Initiator,
            cipher: Cipher::default(),
            local: ends.client_private.clone(),
            peer: ends.server_private.public_key(),
            psk: Some(PresharedKey::from_bytes([0x42; 32])),
            index_seed: 0,
            instance: 0,
            paths: test_paths(),
        }
    );
    let secret = ends.client_private.to_base64();
    for text in [format!("{session:?}"), config_text] {
        assert!(!text.contains(secret.as_str()), "{text}");
        assert!(!text.contains("66, 66"), "{text}");
    }
}

// --- Denial of service: mac1, cookies, rate limits (WireGuard section 5.3) ---

/// An initiation-shaped datagram of random bytes: the right type and length, nothing else.
fn junk_initiation(seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut m: Vec<u8> = (0..INITIATION_LEN)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    m[..4].copy_from_slice(&[1, 0, 0, 0]);
    m
}

/// A stranger who knows the server's public key: its initiations pass mac1, then fail at the
/// peer check after the Diffie-Hellman work.
fn stranger(ends: &Ends, seed: u64) -> Session {
    let config = SessionConfig {
        role: Role::Initiator,
        cipher: ends.cipher,
        local: generate_keypair().unwrap().0,
        peer: ends.server_private.public_key(),
        psk: None,
        index_seed: seed,
        instance: seed,
        paths: test_paths(),
    };
    Session::new(config, T0, UNIX_AT_T0)
}

#[test]
fn initiations_with_a_wrong_mac1_are_refused_before_any_handshake_work() {
    let ends = Ends::new();
    let mut server = ends.server(None);
    for k in 0..1000 {
        let r = deliver(&mut server, at(k as f64 * 1e-4), &junk_initiation(k));
        assert_eq!(r, Err(CryptoError::Mac1));
    }
    let c = server.counters();
    assert_eq!(c.bad_mac1, 1000);
    // No Diffie-Hellman ran (it would have failed and counted), and no cookie went out.
    assert_eq!((c.handshake_failures, c.cookie_replies, c.rate_limited), (0, 0, 0));
    // A genuine initiation right after still completes.
    let mut client = ends.client(None);
    let init = initiation(&mut client, at(0.2)).unwrap();
    let response = reply_of(deliver(&mut server, at(0.2), &init));
    assert_eq!(deliver(&mut client, at(0.21), &response), Ok(Output::Established));
    // The initiation for another server (mac1 under another key) is refused the same way.
    let other = Ends::new();
    let mut elsewhere = other.client(None);
    let foreign = initiation(&mut elsewhere, at(0.3)).unwrap();
    assert_eq!(deliver(&mut server, at(0.3), &foreign), Err(CryptoError::Mac1));
}

#[test]
fn a_response_with_a_wrong_mac1_is_refused_and_the_genuine_one_still_completes() {
    let ends = Ends::new();
    let (mut client, mut server) = (ends.client(None), ends.server(None));
    let init = initiation(&mut client, T0).unwrap();
    let response = reply_of(deliver(&mut server, T0, &init));
    let mut forged = response.clone();
    forged[RESPONSE_LEN - 2 * MAC_LEN] ^= 1;
    assert_eq!(deliver(&mut client, T0, &forged), Err(CryptoError::Mac1));
    assert_eq!(client.counters().bad_mac1, 1);
    assert_eq!(deliver(&mut client, T0, &response), Ok(Output::Established));
}

/// Strangers who know the server's key flood it with initiations from many addresses. Past the
/// load threshold it answers with cookie replies instead of handshakes, also to the genuine
/// client; the client keeps the cookie, and its next try (REKEY_TIMEOUT later, the flood still
/// going) passes mac2 and completes.
#[test]
fn under_load_initiations_earn_cookies_and_the_client_completes_with_its_cookie() {
    let ends = Ends::new();
    let mut server = ends.server(None);
    let mut client = ends.client(None);
    let flood = |server: &mut Session, from: f64, n: u64, cookies: &mut u64| {
        for k in 0..n {
            let mut s = stranger(&ends, 100 + k);
            let now = at(from + k as f64 * 1e-3);
            let src = SocketAddr::from(([198, 51, 100, (k % 250) as u8], 1000 + k as u16));
            let m = initiation(&mut s, now).unwrap();
            match deliver_from(server, now, src, &m) {
                Ok(Output::Reply(r)) => {
                    assert_eq!(r.len(), COOKIE_REPLY_LEN, "only cookie replies under load");
                    *cookies += 1;
                }
                Err(CryptoError::UnknownPeer(_)) => {}
                other => panic!("{other:?}"),
            }
        }
    };
    // 200 strangers over 0.2 s (1000/s): past the burst, the rest get cookies.
    let mut cookies = 0;
    flood(&mut server, 0.0, 200, &mut cookies);
    let dh_before = server.counters().handshake_failures;
    assert!(dh_before <= 20, "Diffie-Hellman work for {dh_before} strangers");
    assert!(cookies >= 180, "{cookies} cookie replies");
    // The client's first try, during the flood: a cookie reply, which it takes.
    let first = initiation(&mut client, at(0.2)).unwrap();
    let cookie_reply = reply_of(deliver(&mut server, at(0.2), &first));
    assert_eq!(cookie_reply.len(), COOKIE_REPLY_LEN);
    assert_eq!(deliver(&mut client, at(0.21), &cookie_reply), Ok(Output::Cookie));
    assert_eq!(client.counters().cookies_received, 1);
    // A cookie reply is not for the server to take.
    assert!(matches!(
        deliver(&mut server, at(0.21), &cookie_reply),
        Err(CryptoError::Unexpected { .. })
    ));
    // The flood goes on; the retry carries mac2 from the cookie and completes.
    flood(&mut server, 0.3, 4900, &mut cookies);
    assert!(server.counters().handshake_failures == dh_before, "no DH for strangers under load");
    let retry = initiation(&mut client, at(5.2)).expect("retry after REKEY_TIMEOUT");
    let response = reply_of(deliver(&mut server, at(5.2), &retry));
    assert_eq!(response.len(), RESPONSE_LEN);
    assert_eq!(deliver(&mut client, at(5.21), &response), Ok(Output::Established));
    // From another address the same retry would not pass mac2: another cookie reply.
    let elsewhere = SocketAddr::from(([192, 0, 2, 99], 51820));
    let mut again = ends.client(None);
    let init = initiation(&mut again, at(5.3)).unwrap();
    let r = reply_of(deliver_from(&mut server, at(5.3), elsewhere, &init));
    assert_eq!(r.len(), COOKIE_REPLY_LEN);
}

/// Under load, an address holding a valid cookie still costs at most 5 handshakes at once and
/// 20 a second.
#[test]
fn under_load_one_address_with_a_cookie_gets_at_most_its_rate() {
    use crate::crypto::ratelimit::{PER_SOURCE_BURST, PER_SOURCE_RATE};
    let ends = Ends::new();
    let mut server = ends.server(None);
    let src = SocketAddr::from(([203, 0, 113, 5], 4000));
    // Put the server under load with junk that passes mac1 (strangers' initiations, from
    // other addresses).
    for k in 0..100 {
        let mut s = stranger(&ends, 500 + k);
        let m = initiation(&mut s, at(k as f64 * 1e-4)).unwrap();
        let elsewhere = SocketAddr::from(([198, 51, 100, k as u8], 4000));
        let _ = deliver_from(&mut server, at(k as f64 * 1e-4), elsewhere, &m);
    }
    // One stranger gets a cookie for `src`, then sends 200 initiations over one second.
    let mut s = stranger(&ends, 9);
    let m = initiation(&mut s, at(0.02)).unwrap();
    let reply = reply_of(deliver_from(&mut server, at(0.02), src, &m));
    assert_eq!(deliver(&mut s, at(0.02), &reply), Ok(Output::Cookie));
    let before = server.counters();
    for k in 0..200 {
        let now = at(0.03 + k as f64 * 5e-3);
        // A fresh initiation each time (as if each try timed out): forge the timer by making a
        // new stranger that shares the cookie is not possible, so reuse one and advance it.
        let mut buf = [0u8; INITIATION_LEN];
        s.pending = None;
        let n = s.poll_handshake(now, &mut buf).unwrap().unwrap();
        let _ = deliver_from(&mut server, now, src, &buf[..n]);
    }
    let after = server.counters();
    let dh = after.handshake_failures - before.handshake_failures;
    assert!(dh <= PER_SOURCE_BURST + PER_SOURCE_RATE + 1, "{dh} handshakes from one address");
    assert!(dh >= PER_SOURCE_RATE - 1, "{dh}: the rate is a limit, not a ban");
    assert!(after.rate_limited - before.rate_limited >= 200 - dh - 1);
}

// --- Peer restarts: the instance in the handshake ---

/// A client of the same keys as `ends`' but another instance (a restarted process).
fn restarted_client(ends: &Ends, instance: u64) -> Session {
    let config = SessionConfig {
        role: Role::Initiator,
        cipher: ends.cipher,
        local: ends.client_private.clone(),
        peer: ends.server_private.public_key(),
        psk: None,
        index_seed: 77,
        instance,
        paths: test_paths(),
    };
    // A later wall clock, as a restart has: its timestamps pass the server's replay check.
    Session::new(config, T0, UNIX_AT_T0 + Duration::from_secs(60))
}

#[test]
fn a_rekey_is_not_a_restart_but_a_new_client_instance_is_once_its_keys_are_in_use() {
    let ends = Ends::new();
    let (mut client, mut server) = (ends.client(None), ends.server(None));
    handshake(&mut client, &mut server, T0);
    // The first handshake of each side is no restart: there is nothing to reset.
    assert!(!client.take_peer_restart() && !server.take_peer_restart());
    // A rekey of the same process: no restart either side.
    handshake(&mut client, &mut server, at(121.0));
    assert!(!client.take_peer_restart() && !server.take_peer_restart());
    // The client restarts: the server learns it when the new keys come into use (the
    // confirming packet), not at the initiation, whose keys might never be confirmed.
    let mut reborn = restarted_client(&ends, 99);
    let init = initiation(&mut reborn, at(130.0)).unwrap();
    let response = reply_of(deliver(&mut server, at(130.0), &init));
    assert!(!server.take_peer_restart(), "not before confirmation");
    assert_eq!(deliver(&mut reborn, at(130.0), &response), Ok(Output::Established));
    assert!(!reborn.take_peer_restart(), "the reborn client's first handshake");
    let confirm = keepalive(&mut reborn, at(130.0)).unwrap();
    assert_eq!(deliver(&mut server, at(130.0), &confirm), Ok(Output::Data(vec![])));
    assert!(server.take_peer_restart(), "a new client instance");
    assert!(!server.take_peer_restart(), "told once");
}

#[test]
fn a_restarted_server_is_a_restart_for_the_client() {
    let ends = Ends::new();
    let (mut client, mut server) = (ends.client(None), ends.server(None));
    handshake(&mut client, &mut server, T0);
    let config = SessionConfig {
        role: Role::Responder,
        cipher: ends.cipher,
        local: ends.server_private.clone(),
        peer: ends.client_private.public_key(),
        psk: None,
        index_seed: 5,
        instance: 1234,
        paths: test_paths(),
    };
    let mut reborn = Session::new(config, at(20.0), Duration::ZERO);
    // The client notices the silence and initiates again (KEEPALIVE_TIMEOUT + REKEY_TIMEOUT
    // after data went unanswered); the handshake with the new server is a restart for it.
    let _ = seal(&mut client, at(1.0), b"into the void");
    handshake(&mut client, &mut reborn, at(16.5));
    assert!(client.take_peer_restart());
}

/// Under load, one address without a cookie gets at most its burst and rate of cookie replies,
/// and spoofed addresses all together at most the global budget.
#[test]
fn under_load_cookie_replies_are_limited_per_address_and_in_all() {
    use crate::crypto::ratelimit::{COOKIE_BURST, COOKIE_RATE, PER_SOURCE_BURST, PER_SOURCE_RATE};
    let ends = Ends::new();
    let mut server = ends.server(None);
    let mut s = stranger(&ends, 3);
    let m = initiation(&mut s, T0).unwrap();
    let one = SocketAddr::from(([203, 0, 113, 9], 4000));
    // 10 000 copies from one address over one second.
    let replies = (0..10_000)
        .filter(|k| {
            matches!(deliver_from(&mut server, at(*k as f64 * 1e-4), one, &m), Ok(Output::Reply(_)))
        })
        .count() as u64;
    assert!(
        replies <= PER_SOURCE_BURST + PER_SOURCE_RATE + LOAD_SLACK,
        "{replies} from one address"
    );
    // 20 000 from as many addresses over the next second: the global budget.
    let replies = (0..20_000u32)
        .filter(|k| {
            let src = SocketAddr::from(([10, (k >> 16) as u8, (k >> 8) as u8, *k as u8], 4000));
            let now = at(1.0 + f64::from(*k) * 5e-5);
            matches!(deliver_from(&mut server, now, src, &m), Ok(Output::Reply(_)))
        })
        .count() as u64;
    assert!(replies <= COOKIE_BURST + COOKIE_RATE + 1, "{replies} in all");
    assert!(replies >= COOKIE_RATE / 2, "{replies}: the budget is used, not closed");
}

/// Initiations that pass before the load threshold is crossed (they are handshakes, not
/// cookie replies).
const LOAD_SLACK: u64 = crate::crypto::ratelimit::LOAD_BURST + 1;

/// A transport datagram names the path it was sealed for, authenticated: arriving on another
/// path it is refused before any key lookup or replay-window change, so the genuine copy still
/// opens on its own path; a keepalive names its path too.
#[test]
fn a_datagram_on_another_path_than_it_names_is_refused_without_side_effects() {
    let (mut client, mut server) = established_pair(None);
    let mut buf = vec![0u8; 5 + OVERHEAD];
    buf[HEADER_LEN..HEADER_LEN + 5].copy_from_slice(b"hello");
    let n = client.seal(at(1.0), 1, &mut buf, 5).unwrap();
    let datagram = buf[..n].to_vec();
    let open_on = |server: &mut Session, path: u8, d: &[u8]| {
        let mut d = d.to_vec();
        let mut reply = [0u8; REPLY_MAX];
        server.open(at(1.0), peer_addr(), path, &mut d, &mut reply).map(|o| match o {
            Opened::Data(p) => p.to_vec(),
            other => panic!("{other:?}"),
        })
    };
    for wrong in [0u8, 2, 255] {
        assert_eq!(
            open_on(&mut server, wrong, &datagram),
            Err(CryptoError::WrongPath { named: 1, arrived_on: wrong })
        );
    }
    assert_eq!(server.counters().wrong_path, 3);
    assert_eq!((server.counters().replays, server.counters().bad_macs), (0, 0));
    assert_eq!(open_on(&mut server, 1, &datagram), Ok(b"hello".to_vec()));
    // Changing the named path breaks the tag: the path id is authenticated.
    let mut buf = vec![0u8; 5 + OVERHEAD];
    let n = client.seal(at(1.0), 1, &mut buf, 5).unwrap();
    let mut moved = buf[..n].to_vec();
    moved[1] = 0;
    assert_eq!(open_on(&mut server, 0, &moved), Err(CryptoError::Authentication));
    // A keepalive names its path like any frame.
    let mut k = [0u8; OVERHEAD];
    let n = server.seal(at(1.0), 2, &mut k, 0).unwrap();
    let mut reply = [0u8; REPLY_MAX];
    let mut on_1 = k[..n].to_vec();
    assert!(matches!(
        client.open(at(1.0), peer_addr(), 1, &mut on_1, &mut reply),
        Err(CryptoError::WrongPath { named: 2, arrived_on: 1 })
    ));
}

/// Sessions whose ends list paths `client_paths` and `server_paths`, after a handshake.
fn established_named(client_paths: &[&str], server_paths: &[&str]) -> (Session, Session) {
    let ends = Ends::new();
    let config = |role, local: &PrivateKey, peer: &PrivateKey, names: &[&str]| SessionConfig {
        role,
        cipher: ends.cipher,
        local: local.clone(),
        peer: peer.public_key(),
        psk: None,
        index_seed: 7,
        instance: 7,
        paths: PathTable::new(names).unwrap(),
    };
    let client = config(Role::Initiator, &ends.client_private, &ends.server_private, client_paths);
    let server = config(Role::Responder, &ends.server_private, &ends.client_private, server_paths);
    let mut client = Session::new(client, T0, UNIX_AT_T0);
    let mut server = Session::new(server, T0, Duration::ZERO);
    let on = server_paths.iter().position(|n| *n == client_paths[0]).expect("path 0 matched");
    handshake_on(&mut client, &mut server, T0, on as u8);
    (client, server)
}

/// [`handshake`], with the client's confirmation (sent on its path 0) arriving on the server's
/// path `on`.
fn handshake_on(client: &mut Session, server: &mut Session, now: Instant, on: u8) {
    let init = initiation(client, now).expect("an initiation is due");
    let response = reply_of(deliver(server, now, &init));
    assert_eq!(deliver(client, now, &response), Ok(Output::Established));
    let mut confirm = keepalive(client, now).expect("the initiator confirms at once");
    let mut reply = [0u8; REPLY_MAX];
    let opened = server.open(now, peer_addr(), on, &mut confirm, &mut reply);
    assert_eq!(opened, Ok(Opened::Data(&mut [])));
}

/// Seals `plain` on `from`'s path `path` and opens it at `to` on `to`'s path `on`.
fn cross(
    from: &mut Session,
    path: u8,
    to: &mut Session,
    on: u8,
    plain: &[u8],
) -> Result<Vec<u8>, CryptoError> {
    let mut buf = vec![0u8; plain.len() + OVERHEAD];
    buf[HEADER_LEN..HEADER_LEN + plain.len()].copy_from_slice(plain);
    let n = from.seal(at(1.0), path, &mut buf, plain.len())?;
    let mut reply = [0u8; REPLY_MAX];
    match to.open(at(1.0), peer_addr(), on, &mut buf[..n], &mut reply)? {
        Opened::Data(p) => Ok(p.to_vec()),
        other => panic!("{other:?}"),
    }
}

/// Paths are matched by name, not by their order in the files: the client lists wifi then
/// cellular, the server cellular then wifi, and each datagram opens on the receiver's path of
/// the name it was sent on, and only there.
#[test]
fn paths_listed_in_other_orders_meet_by_name() {
    let (mut client, mut server) = established_named(&["wifi", "cellular"], &["cellular", "wifi"]);
    assert!(client.take_paths_changed() && server.take_paths_changed());
    assert!(!client.take_paths_changed(), "told once");
    // Client's wifi (its path 0) is the server's path 1, and the reverse.
    assert_eq!(cross(&mut client, 0, &mut server, 1, b"up wifi"), Ok(b"up wifi".to_vec()));
    assert_eq!(cross(&mut client, 1, &mut server, 0, b"up cell"), Ok(b"up cell".to_vec()));
    assert_eq!(cross(&mut server, 0, &mut client, 1, b"dn cell"), Ok(b"dn cell".to_vec()));
    assert_eq!(cross(&mut server, 1, &mut client, 0, b"dn wifi"), Ok(b"dn wifi".to_vec()));
    // Client's wifi arriving on the server's cellular socket: refused, and the server can name
    // both paths.
    assert_eq!(
        cross(&mut client, 0, &mut server, 0, b"x"),
        Err(CryptoError::WrongPath { named: 0, arrived_on: 0 })
    );
    let map = server.path_map().unwrap();
    assert_eq!(map.wire_name(0), Some("wifi"));
    assert!(map.peer_only().is_empty());
    // A rekey with the same tables is no change.
    handshake_on(&mut client, &mut server, at(121.0), 1);
    assert!(!client.take_paths_changed() && !server.take_paths_changed());
}

/// A path only one end has carries nothing, and each end knows the other's unmatched name.
#[test]
fn a_path_the_peer_does_not_know_is_unmatched_at_both_ends() {
    let (mut client, mut server) = established_named(&["wifi", "lte"], &["wifi", "cellular"]);
    assert_eq!(client.path_map().unwrap().peer_only(), ["cellular"]);
    assert_eq!(server.path_map().unwrap().peer_only(), ["lte"]);
    assert!(!client.path_map().unwrap().is_matched(1) && !server.path_map().unwrap().is_matched(1));
    assert_eq!(cross(&mut client, 1, &mut server, 1, b"x"), Err(CryptoError::UnmatchedPath(1)));
    assert_eq!(cross(&mut server, 1, &mut client, 1, b"x"), Err(CryptoError::UnmatchedPath(1)));
    assert_eq!(cross(&mut client, 0, &mut server, 0, b"ok"), Ok(b"ok".to_vec()));
}

// ---- Compact messages (crypto/compact.rs) ----

use crate::crypto::compact::{CompactHeader, COMPACT_HEADER_LEN};
use crate::crypto::COMPACT_OVERHEAD;

fn try_seal_compact(
    session: &mut Session,
    now: Instant,
    (path, path_seq, attempt, global_seq): (u8, u64, u8, u64),
    plaintext: &[u8],
) -> Result<Vec<u8>, CryptoError> {
    let mut buf = vec![0u8; plaintext.len() + COMPACT_OVERHEAD];
    buf[COMPACT_HEADER_LEN..COMPACT_HEADER_LEN + plaintext.len()].copy_from_slice(plaintext);
    let n = session.seal_compact(
        now,
        path,
        path_seq,
        attempt,
        global_seq,
        &mut buf,
        plaintext.len(),
    )?;
    assert_eq!(n, buf.len());
    Ok(buf)
}

fn seal_compact(
    session: &mut Session,
    now: Instant,
    fields: (u8, u64, u8, u64),
    p: &[u8],
) -> Vec<u8> {
    try_seal_compact(session, now, fields, p).unwrap()
}

/// Opens on our `path`, expecting `next` as the path's next sequence number.
fn open_compact(
    session: &mut Session,
    now: Instant,
    path: u8,
    next: u64,
    datagram: &[u8],
) -> Result<(CompactHeader, Vec<u8>), CryptoError> {
    let mut buf = datagram.to_vec();
    session.open_compact(now, path, next, &mut buf).map(|(h, p)| (h, p.to_vec()))
}

#[test]
fn compact_messages_carry_an_inner_packet_with_20_bytes_both_ways() {
    for cipher in Cipher::ALL {
        let (mut client, mut server) = established_pair_with(cipher, None);
        for seq in 0..5u64 {
            let d = seal_compact(&mut client, at(1.0), (1, seq, 0, 70_000 + seq), b"inner packet");
            assert_eq!(d.len(), 12 + 20, "{cipher}: 4 header bytes and the tag");
            let (h, p) = open_compact(&mut server, at(1.0), 1, seq, &d).unwrap();
            assert_eq!(p, b"inner packet");
            assert_eq!((h.path_seq, h.attempt), (seq, 0));
            assert_eq!(h.global_seq, (70_000 + seq) & 0x3fff, "the global number stays truncated");
        }
        let d = seal_compact(&mut server, at(1.0), (0, 0, 0, 0), b"down");
        assert_eq!(open_compact(&mut client, at(1.0), 0, 0, &d).unwrap().1, b"down");
    }
}

#[test]
fn a_nonce_is_never_sealed_twice_and_a_datagram_never_opens_twice() {
    let (mut client, mut server) = established_pair(None);
    let first = seal_compact(&mut client, at(1.0), (0, 7, 0, 7), b"x");
    assert_eq!(
        try_seal_compact(&mut client, at(1.0), (0, 7, 0, 7), b"x"),
        Err(CryptoError::CompactReuse { path_seq: 7, attempt: 0 })
    );
    assert_eq!(
        try_seal_compact(&mut client, at(1.0), (0, 6, 3, 6), b"x"),
        Err(CryptoError::CompactReuse { path_seq: 6, attempt: 3 }),
        "below the last sealed on the path"
    );
    let resent = seal_compact(&mut client, at(1.0), (0, 7, 1, 7), b"x");
    assert_eq!(
        try_seal_compact(&mut client, at(1.0), (0, 8, 4, 8), b"x"),
        Err(CryptoError::CompactAttempt(4))
    );
    // Another path has its own numbers.
    seal_compact(&mut client, at(1.0), (1, 7, 0, 8), b"x");
    assert!(open_compact(&mut server, at(1.0), 0, 0, &first).is_ok());
    assert_eq!(
        open_compact(&mut server, at(1.0), 0, 8, &first).err(),
        Some(CryptoError::Replay { counter: 7, reason: ReplayError::Duplicate })
    );
    let (h, _) = open_compact(&mut server, at(1.0), 0, 8, &resent).unwrap();
    assert_eq!((h.path_seq, h.attempt), (7, 1), "a retransmission is a new nonce");
}

#[test]
fn a_compact_datagram_opens_only_on_its_path_and_with_its_number_expanded() {
    let (mut client, mut server) = established_pair(None);
    let d = seal_compact(&mut client, at(1.0), (2, 20_000, 0, 1), b"x");
    assert_eq!(
        open_compact(&mut server, at(1.0), 1, 20_000, &d).err(),
        Some(CryptoError::Authentication)
    );
    // Expanded around 0, 20 000's low bits mean 3 616: the nonce differs and the tag fails.
    assert_eq!(
        open_compact(&mut server, at(1.0), 2, 0, &d).err(),
        Some(CryptoError::Authentication)
    );
    for byte in 0..d.len() {
        let mut t = d.clone();
        t[byte] ^= 0x01;
        assert!(open_compact(&mut server, at(1.0), 2, 19_990, &t).is_err(), "byte {byte}");
    }
    // None of the failures moved a window: the genuine datagram opens, near its number.
    let (h, _) = open_compact(&mut server, at(1.0), 2, 19_990, &d).unwrap();
    assert_eq!(h.path_seq, 20_000);
    assert_eq!(
        server.counters().bad_macs as usize,
        2 + d.len(),
        "every attempt above failed its tag"
    );
}

#[test]
fn compact_messages_cross_a_rekey_by_their_key_phase() {
    let (mut client, mut server) = established_pair(None);
    let init = initiation(&mut client, at(120.0)).expect("REKEY_AFTER_TIME");
    let old_up = seal_compact(&mut client, at(120.0), (0, 0, 0, 0), b"old up");
    let response = reply_of(deliver(&mut server, at(120.01), &init));
    let old_down = seal_compact(&mut server, at(120.01), (0, 0, 0, 0), b"old down");
    assert_eq!(deliver(&mut client, at(120.02), &response), Ok(Output::Established));
    // The client's first compact message under the new keys reaches the server before any
    // keepalive: it opens with the keys awaiting confirmation, and confirms them.
    let new_up = seal_compact(&mut client, at(120.03), (0, 1, 0, 1), b"new up");
    assert_ne!(new_up[0] & 0x40, old_up[0] & 0x40, "the key phase changed");
    assert_eq!(open_compact(&mut server, at(120.03), 0, 1, &new_up).unwrap().1, b"new up");
    assert_eq!(server.counters().handshakes_completed, 2);
    // Old keys' datagrams from the slow path still open, with the previous keys.
    assert_eq!(open_compact(&mut server, at(120.1), 0, 2, &old_up).unwrap().1, b"old up");
    assert_eq!(open_compact(&mut client, at(120.1), 0, 0, &old_down).unwrap().1, b"old down");
    let new_down = seal_compact(&mut server, at(120.2), (0, 1, 0, 1), b"new down");
    assert_eq!(open_compact(&mut client, at(120.2), 0, 1, &new_down).unwrap().1, b"new down");
    assert_eq!(server.counters().bad_macs + client.counters().bad_macs, 0);
}

#[test]
fn compact_messages_count_towards_the_rekey_limit() {
    let (mut client, mut server) = established_pair(None);
    for seq in 0..3 {
        let d = seal_compact(&mut client, at(1.0), (0, seq, 0, seq), b"x");
        open_compact(&mut server, at(1.0), 0, seq, &d).unwrap();
    }
    let keys = client.current.as_ref().unwrap();
    assert_eq!(keys.messages_sent(), 1 + 3, "the confirming keepalive and three compact ones");
    assert_eq!(server.current.as_ref().unwrap().messages_received(), 4);
}
