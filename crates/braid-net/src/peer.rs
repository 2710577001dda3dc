//! What the daemon keeps per peer: the tunnel's sender and receiver, liveness and remote
//! address of each path, path validation and counters, and the peer's allowed inner addresses.
//! A client has one peer (the server); a server one per configured client. The sessions that
//! seal and open the peer's datagrams are in [`Sessions`], beside it.

use std::net::{IpAddr, SocketAddr};

use braid_core::tunnel::{TunnelConfig, TunnelReceiver};
use braid_core::Instant;

use crate::config::{DaemonConfig, PeerConfig, Role, Transport as TransportKind};
use crate::crypto::{self, Opened, Responder, Session, SessionCounters};
use crate::liveness::Liveness;
use crate::path_validation::PathValidation;
use crate::pool::Pkt;
use crate::sender::Sender;

/// Per-path receive counters of one peer.
#[derive(Clone, Copy, Debug, Default)]
pub struct PathCounters {
    pub rx_pkts: u64,
    pub rx_bytes: u64,
    pub socket_drops: u64,
    /// Data packets sent as compact messages (crypto/compact.rs).
    pub compact_tx: u64,
}

/// One peer's protocol state.
pub struct Peer {
    pub config: PeerConfig,
    pub tx: Sender,
    pub rx: TunnelReceiver<Pkt>,
    pub live: Liveness,
    /// Where each path's datagrams for this peer go: configured (client) or learned (server).
    pub remotes: Vec<Option<SocketAddr>>,
    pub paths: Vec<PathCounters>,
    /// (Server, UDP) candidate remote addresses and their challenge budgets.
    pub validation: Option<PathValidation>,
    /// Inner packets read from the TUN device for this peer, and written to it from this peer.
    pub tun_rx: u64,
    pub tun_tx: u64,
    /// Inner packets from this peer whose source is not one of its allowed addresses.
    pub spoofed: u64,
    /// Our paths the peer has no path of the same name for (from the last handshake): down,
    /// and never brought up by what arrives on them.
    pub unmatched: Vec<bool>,
    /// (Client) per path: the server sent data or feedback on it since it last came up, so it
    /// knows, and has validated, our address there. Compact messages name no keys, and a
    /// server takes them only from a peer's validated address, so until then the path's data
    /// goes in full messages, which teach the server the address.
    pub compact_ready: Vec<bool>,
    /// (Client) per path: where the server's last authenticated full message came from; its
    /// compact messages are taken from there only.
    pub server_sources: Vec<Option<SocketAddr>>,
}

impl Peer {
    /// A peer's state as at start: paths without a remote (a server's, until the client speaks)
    /// are down.
    pub fn new(
        cfg: &DaemonConfig,
        peer: &PeerConfig,
        tx: Sender,
        core: &TunnelConfig,
        challenge_bytes: u64,
        now: Instant,
    ) -> Peer {
        let n = cfg.paths.len();
        let remotes: Vec<Option<SocketAddr>> = cfg.paths.iter().map(|p| p.remote).collect();
        let mut live = Liveness::new(cfg.liveness, n, now);
        let mut tx = tx;
        for (i, r) in remotes.iter().enumerate() {
            if r.is_none() {
                live.mark_down(i);
                tx.set_path_up(now, i, false);
            }
        }
        Peer {
            config: peer.clone(),
            tx,
            rx: TunnelReceiver::new(core),
            live,
            remotes,
            paths: vec![PathCounters::default(); n],
            validation: (cfg.role == Role::Server && cfg.transport == TransportKind::Udp)
                .then(|| PathValidation::new(n, challenge_bytes)),
            tun_rx: 0,
            tun_tx: 0,
            spoofed: 0,
            unmatched: vec![false; n],
            compact_ready: vec![false; n],
            server_sources: vec![None; n],
        }
    }

    /// The peer restarted: its senders and receivers start from nothing, so ours must too
    /// (see the daemon). Liveness, remotes and counters stay.
    pub fn restart(&mut self, now: Instant, core: &TunnelConfig) {
        self.tx = self.tx.fresh(core);
        for i in 0..self.remotes.len() {
            if !self.live.is_up(i) {
                self.tx.set_path_up(now, i, false);
            }
        }
        self.rx = TunnelReceiver::new(core);
        // A restarted server knows none of our addresses.
        self.compact_ready.fill(false);
    }

    /// (Server) Path `i`'s datagrams go to `src` from now on. Feedback the receiver produced
    /// while the path had no address was dropped (the daemon's `send_control` needs one), so
    /// a frame is asked for again: without it the client's packets from before wait for their
    /// retransmission timeout, which leaves a packet-counted window one packet wide.
    pub fn set_remote(&mut self, now: Instant, i: usize, src: SocketAddr) {
        self.remotes[i] = Some(src);
        self.rx.request_feedback(now, i);
    }

    /// Whether an inner packet may come from (or go to) `addr` through this peer.
    pub fn allows(&self, addr: IpAddr) -> bool {
        self.config.allows(addr)
    }
}

/// The security sessions: the client's one, or the server's one per peer behind one gate.
pub enum Sessions {
    Client(Box<Session>),
    Server(Box<Responder>),
}

impl Sessions {
    /// Opens one datagram from path `path`, sent from `src`: the peer it belongs to, if known,
    /// and what its session made of it.
    pub fn open<'a>(
        &mut self,
        now: Instant,
        src: SocketAddr,
        path: u8,
        datagram: &'a mut [u8],
        reply: &mut [u8],
    ) -> (Option<usize>, Result<Opened<'a>, crypto::CryptoError>) {
        match self {
            Sessions::Client(s) => (Some(0), s.open(now, src, path, datagram, reply)),
            Sessions::Server(r) => r.open(now, src, path, datagram, reply),
        }
    }

    pub fn get(&self, peer: usize) -> &Session {
        match self {
            Sessions::Client(s) => s,
            Sessions::Server(r) => &r.sessions()[peer],
        }
    }

    pub fn get_mut(&mut self, peer: usize) -> &mut Session {
        match self {
            Sessions::Client(s) => s,
            Sessions::Server(r) => r.session_mut(peer),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Sessions::Client(_) => 1,
            Sessions::Server(r) => r.sessions().len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Counters summed over the peers' sessions and the server's gate.
    pub fn totals(&self) -> SessionCounters {
        let mut t = match self {
            Sessions::Client(_) => SessionCounters::default(),
            Sessions::Server(r) => r.counters(),
        };
        for p in 0..self.len() {
            let c = self.get(p).counters();
            t.handshakes_completed += c.handshakes_completed;
            t.handshake_failures += c.handshake_failures;
            t.bad_mac1 += c.bad_mac1;
            t.cookie_replies += c.cookie_replies;
            t.rate_limited += c.rate_limited;
            t.wrong_path += c.wrong_path;
        }
        t
    }
}
