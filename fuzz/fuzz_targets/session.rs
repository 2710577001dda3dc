//! The stateful security session (`braid-net/src/crypto/session.rs`): a client and a server
//! session driven by a script the fuzzer writes, over datagrams they really made.
//!
//! Each step of the input is one operation: run the client's handshake through the server, seal
//! data on either side, deliver a recorded datagram (as made, or with bytes flipped, truncated
//! or extended) to either side from one of two source addresses, deliver raw bytes, or let time
//! pass (up to minutes: rekeys, expiry, cookie lifetimes). What must hold whatever the script:
//! no panic; a datagram with any byte changed never opens as data (no forgery); a recorded
//! transport datagram opens as data at most once (no replay), and only on the receiver's path
//! of the name it was sealed for (the two ends list four paths in different orders); and
//! plaintext that opens is what was sealed. Sealed data is full or compact (crypto/compact.rs:
//! path sequence numbers counting up per path, attempts the script picks); a compact datagram
//! is opened with the path sequence number the script expects, right or not.
#![no_main]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use braid_core::Instant;
use braid_net::crypto::{
    Cipher, Opened, PathTable, PresharedKey, PrivateKey, PublicKey, Role, Session, SessionConfig,
    COMPACT_OVERHEAD, OVERHEAD, REPLY_MAX,
};
use braid_net::crypto::compact::{is_compact, COMPACT_HEADER_LEN};
use braid_net::crypto::envelope::HEADER_LEN;
use libfuzzer_sys::fuzz_target;

/// One datagram a session made, and what it carries if it is sealed data.
struct Recorded {
    bytes: Vec<u8>,
    /// The plaintext, for sealed data.
    plaintext: Option<Vec<u8>>,
    /// Made by the client (so it goes to the server).
    from_client: bool,
    opened: bool,
    /// The receiver's path of the name it was sealed for.
    path: u8,
    /// A compact datagram's path sequence number.
    compact_seq: Option<u64>,
}

struct Script<'a> {
    input: &'a [u8],
}

impl Script<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.input.split_first()?;
        self.input = rest;
        Some(b)
    }
    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.input.len());
        let (a, b) = self.input.split_at(n);
        self.input = b;
        a
    }
}

/// The public key of the private key of 32 bytes of `b` (1 or 2), derived once per process.
fn public_of(b: u8) -> PublicKey {
    static KEYS: OnceLock<[PublicKey; 2]> = OnceLock::new();
    let keys = KEYS.get_or_init(|| {
        [1u8, 2].map(|k| PrivateKey::from_bytes([k; 32]).public_key())
    });
    keys[usize::from(b - 1)].clone()
}

/// The client's paths are p0..p3; the server lists them pairwise swapped, so its path k is the
/// client's path k ^ 1.
fn session(role: Role, local: [u8; 32], peer: [u8; 32], cipher: Cipher) -> Session {
    let names: &[&str] = match role {
        Role::Initiator => &["p0", "p1", "p2", "p3"],
        Role::Responder => &["p1", "p0", "p3", "p2"],
    };
    let config = SessionConfig {
        role,
        cipher,
        local: PrivateKey::from_bytes(local),
        peer: public_of(peer[0]),
        psk: Some(PresharedKey::from_bytes([5; 32])),
        index_seed: u64::from(local[0]),
        instance: u64::from(local[1]),
        paths: PathTable::new(names).expect("valid names"),
    };
    Session::new(config, Instant::ZERO, Duration::from_secs(1_700_000_000))
}

fuzz_target!(|input: &[u8]| {
    let mut script = Script { input };
    let cipher = if script.byte().unwrap_or(0) % 2 == 0 {
        Cipher::Aes256Gcm
    } else {
        Cipher::ChaCha20Poly1305
    };
    let (ck, sk) = ([1u8; 32], [2u8; 32]);
    let mut client = session(Role::Initiator, ck, sk, cipher);
    let mut server = session(Role::Responder, sk, ck, cipher);
    let sources: [SocketAddr; 2] =
        ["192.0.2.1:1000".parse().unwrap(), "198.51.100.7:2000".parse().unwrap()];
    let mut now = Instant::ZERO;
    let mut pool: Vec<Recorded> = Vec::new();
    let mut reply = [0u8; REPLY_MAX];
    // Plaintexts each side has opened, by the datagram bytes that carried them.
    let mut opened_once: HashMap<Vec<u8>, usize> = HashMap::new();
    // Each side's next compact path sequence number, per path.
    let mut next_seq = [[0u64; 4]; 2];
    for _ in 0..64 {
        let Some(op) = script.byte() else { break };
        let arg = script.byte().unwrap_or(0);
        match op % 7 {
            0 => {
                // The client's handshake, through the server and back, recording each message.
                let mut buf = [0u8; 512];
                if let Ok(Some(n)) = client.poll_handshake(now, &mut buf) {
                    pool.push(Recorded { bytes: buf[..n].to_vec(), plaintext: None, from_client: true, opened: false, path: 0, compact_seq: None });
                    let mut d = buf[..n].to_vec();
                    if let Ok(Opened::Reply(m)) = server.open(now, sources[usize::from(arg) % 2], 0, &mut d, &mut reply) {
                        let r = reply[..m].to_vec();
                        pool.push(Recorded { bytes: r.clone(), plaintext: None, from_client: false, opened: false, path: 0, compact_seq: None });
                        let mut r2 = r;
                        let _ = client.open(now, sources[0], 0, &mut r2, &mut reply);
                    }
                }
                let mut k = [0u8; OVERHEAD];
                if client.keepalive_due(now) {
                    if let Ok(n) = client.seal(now, 0, &mut k, 0) {
                        pool.push(Recorded { bytes: k[..n].to_vec(), plaintext: Some(vec![]), from_client: true, opened: false, path: 1, compact_seq: None });
                    }
                }
            }
            1 | 2 => {
                // Seal data on one side.
                let from_client = op % 7 == 1;
                let len = usize::from(arg) % 64;
                let plain = script.take(len).to_vec();
                let mut buf = vec![0u8; plain.len() + OVERHEAD];
                buf[HEADER_LEN..HEADER_LEN + plain.len()].copy_from_slice(&plain);
                let s = if from_client { &mut client } else { &mut server };
                let choice = script.byte().unwrap_or(0);
                let path = choice % 4;
                if choice & 0x80 != 0 {
                    // Compact: the next number of this side's path, or a repeat (refused).
                    let seqs = if from_client { &mut next_seq[0] } else { &mut next_seq[1] };
                    let seq = seqs[usize::from(path)];
                    let attempt = (choice >> 2) & 7;
                    let mut buf = vec![0u8; plain.len() + COMPACT_OVERHEAD];
                    buf[COMPACT_HEADER_LEN..COMPACT_HEADER_LEN + plain.len()].copy_from_slice(&plain);
                    if let Ok(n) = s.seal_compact(now, path, seq, attempt, seq * 3, &mut buf, plain.len()) {
                        assert!(attempt <= 3, "a fourth retransmission sealed");
                        buf.truncate(n);
                        if choice & 0x40 != 0 {
                            seqs[usize::from(path)] += 1;
                        }
                        pool.push(Recorded { bytes: buf, plaintext: Some(plain), from_client, opened: false, path: path ^ 1, compact_seq: Some(seq) });
                    }
                } else if let Ok(n) = s.seal(now, path, &mut buf, plain.len()) {
                    buf.truncate(n);
                    pool.push(Recorded { bytes: buf, plaintext: Some(plain), from_client, opened: false, path: path ^ 1, compact_seq: None });
                }
            }
            3 | 4 => {
                // Deliver a recorded datagram, perhaps changed.
                if pool.is_empty() {
                    continue;
                }
                let i = usize::from(arg) % pool.len();
                let how = script.byte().unwrap_or(0);
                let mut d = pool[i].bytes.clone();
                match how % 4 {
                    0 => {}
                    1 => {
                        let at = usize::from(script.byte().unwrap_or(0)) % d.len().max(1);
                        let x = script.byte().unwrap_or(1) | 1;
                        if let Some(b) = d.get_mut(at) {
                            *b ^= x;
                        }
                    }
                    2 => d.truncate(usize::from(script.byte().unwrap_or(0)) % d.len().max(1)),
                    _ => d.extend_from_slice(script.take(8)),
                }
                let changed = d != pool[i].bytes;
                let to_server = pool[i].from_client;
                let src = sources[usize::from(how >> 2) % 2];
                // Delivered on the receiver's path of its name, or (how bit 4) on another.
                let on_path = if how & 0x10 != 0 { pool[i].path ^ 1 } else { pool[i].path };
                let s = if to_server { &mut server } else { &mut client };
                let original = pool[i].bytes.clone();
                let opened = if is_compact(&d) {
                    // The receiver's expectation: right (bit 5) or off by what the script says.
                    let seq = pool[i].compact_seq.unwrap_or(0);
                    let next = if how & 0x20 != 0 {
                        seq
                    } else {
                        seq.wrapping_add(u64::from(script.byte().unwrap_or(0)) << 7)
                    };
                    s.open_compact(now, on_path, next, &mut d).ok().map(|(_, p)| p)
                } else if let Ok(Opened::Data(p)) = s.open(now, src, on_path, &mut d, &mut reply) {
                    Some(p)
                } else {
                    None
                };
                if let Some(p) = opened {
                    assert!(!changed, "a changed datagram opened as data");
                    assert_eq!(on_path, pool[i].path, "a datagram opened on another path");
                    let expected = pool[i].plaintext.as_deref();
                    assert_eq!(Some(&*p), expected, "opened plaintext differs from sealed");
                    assert!(!pool[i].opened, "a datagram opened twice (replay)");
                    pool[i].opened = true;
                    *opened_once.entry(original).or_default() += 1;
                }
                let _ = s.take_peer_restart();
            }
            5 => {
                // Raw bytes to either side.
                let len = usize::from(script.byte().unwrap_or(0));
                let mut d = script.take(len).to_vec();
                let s = if arg % 2 == 0 { &mut server } else { &mut client };
                let src = sources[usize::from(arg >> 1) % 2];
                if is_compact(&d) {
                    let next = u64::from(script.byte().unwrap_or(0));
                    assert!(s.open_compact(now, arg >> 2 & 3, next, &mut d).is_err(), "raw bytes opened");
                } else if let Ok(Opened::Data(_)) = s.open(now, src, arg >> 2 & 3, &mut d, &mut reply) {
                    panic!("raw bytes opened as data");
                }
            }
            _ => {
                // Time passes: up to 255 s in steps the input chooses.
                let secs = u64::from(arg) * u64::from(script.byte().unwrap_or(1)) / 64;
                now = now + Duration::from_millis(secs * 1000 + u64::from(arg));
                client.handle_timeout(now);
                server.handle_timeout(now);
            }
        }
    }
    assert!(opened_once.values().all(|&n| n == 1));
});
