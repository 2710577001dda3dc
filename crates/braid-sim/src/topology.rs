//! The topology of Pieska et al. 2024, Figure 1, wired as a discrete-event world:
//!
//! ```text
//!  server ──server link──▶ proxy ══path i downlink (bottleneck)══▶ UE
//!         ◀──────────────        ◀═══════path i uplink══════════
//! ```
//!
//! The proxy runs the downlink tunnel sender and the uplink tunnel receiver; the UE runs the
//! downlink tunnel receiver and the uplink tunnel sender. End-to-end ACKs travel the uplink
//! tunnel; each tunnel's feedback travels the reverse direction of the path it acknowledges.
//! Without a tunnel (the baseline), the proxy is a plain router onto path 1.
//!
//! The world only moves packets and fires timers; all protocol logic lives in braid-core
//! (tunnel) and [`crate::tcp`] (end-to-end TCP), driven through their sans-I/O interfaces.

use std::time::Duration;

use braid_core::reorder::OwdSummary;
use braid_core::tunnel::{TunnelConfig, TunnelReceiver};
use braid_core::wire::{TimeSync, TIME_SYNC_LEN};
use braid_core::Instant;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use crate::engine::{Event, EventQueue};
use crate::link::{Enqueue, Link, LinkSpec, LinkStats};
use crate::metrics::{PathSample, Series, Stat, TraceRow};
use crate::noise::{stream, stream_seed, Host, HostQueue, Jitter, Stalls, HOSTS};
use crate::packet::{Packet, PacketPool, Payload, PktId, WireOverhead};
use crate::tcp::{Ack, LinuxCc, Segment, TcpConfig, TcpReceiver, TcpSender};
use crate::tcp_tunnel::{StreamRx, StreamTx, TcpPathsConfig};
use crate::tunnel_sender::{Departure, SimSender};
use crate::udp::UdpSource;

/// The end-to-end application.
#[derive(Clone, Debug, PartialEq)]
pub enum AppConfig {
    /// A greedy download whose server runs `cc` as Linux would ([`LinuxCc`]).
    Tcp {
        tcp: TcpConfig,
        cc: LinuxCc,
    },
    Udp {
        packet_bytes: u32,
        rate_bytes_per_s: u64,
        total_bytes: u64,
    },
}

/// Everything the world needs, already validated and in simulator units.
#[derive(Clone, Debug)]
pub struct WorldConfig {
    pub server_downlink: LinkSpec,
    pub server_uplink: LinkSpec,
    pub path_names: Vec<String>,
    /// (downlink, uplink) per path.
    pub paths: Vec<(LinkSpec, LinkSpec)>,
    /// `None` runs the baseline: no tunnel, path 1 only.
    pub tunnel: Option<TunnelConfig>,
    pub app: AppConfig,
    pub seed: u64,
    pub max_time: Duration,
    pub sample_interval: Duration,
    pub bin: Duration,
    /// Seed each tunnel sender with one handshake RTT sample per path
    /// ([`crate::scenario::SimConfig::path_handshake`]).
    pub path_handshake: bool,
    /// The tunnel's datagrams are the daemon's messages ([`crate::scenario::Wire::Daemon`]):
    /// `tunnel` is then configured for compact messages and time-sync frames.
    pub daemon_wire: bool,
    /// The noise model, resolved ([`crate::scenario::NoiseConfig`]).
    pub noise: WorldNoise,
    /// Kernel TCP paths (`tunnel.transport = "tcp"`): the connections' TCP and how the tunnel
    /// writes into them; `None` runs datagram paths. `tunnel` is then the core's configuration
    /// for streams, and `tunnel.cc` names each connection's controller.
    pub tcp_paths: Option<TcpPathsConfig>,
}

/// The noise model in simulator units, its random start already drawn (docs/design.md
/// section 10). The default is no noise: the world then runs exactly as without the model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorldNoise {
    /// Every packet leaving a host waits a draw of this, in order ([`HostQueue`]).
    pub host_jitter: Option<Jitter>,
    /// Every host stalls now and then ([`crate::noise::Stalls`]).
    pub host_stalls: Option<Stalls>,
    /// When the transfer starts; the DLCT counts from here.
    pub start_offset: Duration,
    /// Seed the controllers from the scenario seed ([`crate::scenario::NoiseConfig::cc_phase`]).
    pub cc_phase: bool,
}

/// Bytes of a path handshake packet on the wire: a probe frame in outer IPv4 and UDP.
const HANDSHAKE_BYTES: u64 = braid_core::wire::PROBE_LEN as u64 + 28;

/// The RTT a handshake measures on an idle path: propagation both ways plus the handshake
/// packet's transmission on each link (none on a trace link, whose next delivery opportunity
/// depends on the time).
fn handshake_rtt(down: &LinkSpec, up: &LinkSpec) -> Duration {
    let transmission = |l: &LinkSpec| match l.capacity {
        crate::link::Capacity::Rate { bytes_per_s } => braid_core::time::transmission_time(
            HANDSHAKE_BYTES + u64::from(l.framing_bytes),
            bytes_per_s,
        ),
        crate::link::Capacity::Trace(_) => Duration::ZERO,
    };
    Duration::from_nanos(down.delay_ns + up.delay_ns) + transmission(down) + transmission(up)
}

/// Where a link delivers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hop {
    ProxyFromServer,
    Server,
    Ue(usize),
    ProxyFromUe(usize),
}

/// Endpoints with timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
enum Agent {
    Server = 0,
    UeApp = 1,
    ProxyTx = 2,
    ProxyRx = 3,
    UeTx = 4,
    UeRx = 5,
}
const AGENTS: [Agent; 6] =
    [Agent::Server, Agent::UeApp, Agent::ProxyTx, Agent::ProxyRx, Agent::UeTx, Agent::UeRx];

enum ServerApp {
    Tcp(Box<TcpSender>),
    Udp(UdpSource),
}

enum UeApp {
    Tcp(Box<TcpReceiver>),
    Udp { bytes: u64 },
}

struct Tunnel {
    /// What each datagram carries besides its packet or frame on a path's links.
    wire: WireOverhead,
    proxy_tx: SimSender,
    proxy_rx: TunnelReceiver<PktId>,
    ue_tx: SimSender,
    ue_rx: TunnelReceiver<PktId>,
    /// Over kernel TCP paths, each direction's receiving ends of the paths' connections: the
    /// downlink's at the UE, the uplink's at the proxy.
    streams: Option<[StreamRx; 2]>,
}

/// Per-direction tunnel accounting (index 0 downlink, 1 uplink).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirAccount {
    pub entered: u64,
    /// Further copies the tunnel sender made: redundant copies and retransmissions. Each is one
    /// more packet that must be delivered, dropped or in flight.
    pub copies: u64,
    pub delivered: u64,
    pub sched_drops: u64,
    pub link_drops: u64,
    pub reorder_drops: u64,
}

/// Raw results of one run, turned into a [`crate::metrics::Report`] by [`crate::run()`].
pub struct Outcome {
    /// When the transfer started ([`WorldNoise::start_offset`]).
    pub started_at: Instant,
    pub done_at: Option<Instant>,
    pub app_bytes: u64,
    pub events: u64,
    pub simulated_packets: u64,
    pub path_bytes: Vec<u64>,
    pub path_frame_bytes: Vec<u64>,
    pub path_drops: Vec<u64>,
    pub uplink_drops: Vec<u64>,
    /// Counters of each path's downlink bottleneck.
    pub path_downlink_stats: Vec<LinkStats>,
    pub server_link_drops: u64,
    pub path_srtt_ms: Vec<Stat>,
    /// Over kernel TCP paths, each downlink connection's send queue, bytes, per sample.
    pub path_send_queue_bytes: Option<Vec<Stat>>,
    pub path_sent_pkts: Vec<u64>,
    pub path_lost_pkts: Vec<u64>,
    /// Each path's downlink one-way delays as the UE's tunnel receiver sampled them.
    pub path_owd: Vec<Option<OwdSummary>>,
    pub account: [DirAccount; 2],
    pub in_flight: [u64; 2],
    pub protocol_delay_ms: Stat,
    pub hol_ms: Stat,
    pub e2e_srtt_ms: Stat,
    pub wait_limit_ms: Stat,
    pub retransmissions: u64,
    pub rto_count: u64,
    pub reorder: braid_core::reorder::ReorderStats,
    /// The downlink tunnel sender's counters (retransmissions, expiries, redundant copies).
    pub downlink_sender: braid_core::tunnel::SenderStats,
    pub series: Series,
    pub peak_live_packets: usize,
}

pub struct World {
    now: Instant,
    events: EventQueue,
    pool: PacketPool,
    links: Vec<Link>,
    hops: Vec<Hop>,
    server: ServerApp,
    ue_app: UeApp,
    tunnel: Option<Tunnel>,
    rng: Pcg64Mcg,
    /// Per-host FIFOs of packets waiting out their host delay, by [`Host`]; empty without
    /// host jitter, and then `send` puts packets on their links at once.
    hosts: Vec<HostQueue<(u16, PktId)>>,
    started_at: Instant,
    n_paths: usize,
    done_at: Option<Instant>,
    udp_live: u64,
    last_delivery: Instant,
    app_bytes: u64,
    account: [DirAccount; 2],
    path_bytes: Vec<u64>,
    protocol_delay_ms: Stat,
    hol_ms: Stat,
    /// Head-of-line delay of the packets delivered since the last trace sample.
    sample_hol_ms: Stat,
    path_srtt_ms: Vec<Stat>,
    path_send_queue_bytes: Option<Vec<Stat>>,
    e2e_srtt_ms: Stat,
    wait_limit_ms: Stat,
    series: Series,
    bin_ns: u64,
    sample_interval: Duration,
    max_time: Instant,
    simulated_packets: u64,
    /// Reused buffers of the kernel-TCP paths' segments and ACKs, by path.
    segments_out: Vec<(usize, Segment)>,
    acks_out: Vec<(usize, Ack)>,
}

/// A controller's pacing rate in the trace's unit, Mbit/s; 0 for one that does not pace.
fn pacing_mbps(bytes_per_s: Option<u64>) -> f64 {
    bytes_per_s.map_or(0.0, |r| r as f64 * 8e-6)
}

const SERVER_DL: usize = 0;
const SERVER_UL: usize = 1;
fn path_dl(i: usize) -> usize {
    2 + 2 * i
}
fn path_ul(i: usize) -> usize {
    3 + 2 * i
}
/// The host a link's packets leave: the server link's downlink leaves the server, its uplink
/// and every path downlink the proxy, every path uplink the UE.
fn host_of(link: usize) -> Host {
    match link {
        SERVER_DL => Host::Server,
        SERVER_UL => Host::Proxy,
        l if l % 2 == 0 => Host::Proxy,
        _ => Host::Ue,
    }
}

impl World {
    pub fn new(cfg: &WorldConfig) -> Self {
        let n_paths = if cfg.tunnel.is_some() { cfg.paths.len() } else { 1 };
        let mut links =
            vec![Link::new(cfg.server_downlink.clone()), Link::new(cfg.server_uplink.clone())];
        let mut hops = vec![Hop::ProxyFromServer, Hop::Server];
        for (i, (dl, ul)) in cfg.paths.iter().take(n_paths).enumerate() {
            links.push(Link::new(dl.clone()));
            links.push(Link::new(ul.clone()));
            hops.push(Hop::Ue(i));
            hops.push(Hop::ProxyFromUe(i));
        }
        let (server, ue_app) = match &cfg.app {
            AppConfig::Tcp { tcp, cc } => {
                // The end-to-end Cubic stands for a Linux server's; `hystart` is its switch.
                let seed = cfg.noise.cc_phase.then(|| stream_seed(cfg.seed, stream::CC_E2E));
                let controller = cc.build(tcp.cc_params(), seed);
                (
                    ServerApp::Tcp(Box::new(
                        TcpSender::new(*tcp, controller).with_prr(cc.reduces_with_prr()),
                    )),
                    UeApp::Tcp(Box::new(TcpReceiver::new(*tcp))),
                )
            }
            AppConfig::Udp { packet_bytes, rate_bytes_per_s, total_bytes } => (
                ServerApp::Udp(UdpSource::new(*packet_bytes, *rate_bytes_per_s, *total_bytes)),
                UeApp::Udp { bytes: 0 },
            ),
        };
        let mut tunnel = cfg.tunnel.as_ref().map(|t| {
            // Each direction's controllers draw from their own stream under the noise model.
            let seeded = |s: u64| TunnelConfig {
                cc_seed: cfg.noise.cc_phase.then(|| stream_seed(cfg.seed, s)),
                ..t.clone()
            };
            match &cfg.tcp_paths {
                None => Tunnel {
                    wire: if cfg.daemon_wire {
                        WireOverhead::DAEMON
                    } else {
                        WireOverhead::plain(t.header_bytes)
                    },
                    proxy_tx: SimSender::new(&seeded(stream::CC_DOWNLINK)),
                    proxy_rx: TunnelReceiver::new(t),
                    ue_tx: SimSender::new(&seeded(stream::CC_UPLINK)),
                    ue_rx: TunnelReceiver::new(t),
                    streams: None,
                },
                Some(tp) => {
                    let side = |s: u64| {
                        let ccs = (0..n_paths)
                            .map(|i| {
                                let seed = cfg
                                    .noise
                                    .cc_phase
                                    .then(|| stream_seed(cfg.seed, s).wrapping_add(i as u64));
                                tp.cc.build(tp.tcp.cc_params(), seed)
                            })
                            .collect();
                        SimSender::Stream(Box::new(StreamTx::new(t, tp, ccs)))
                    };
                    Tunnel {
                        // Segments carry their own headers: frames add nothing on a link.
                        wire: WireOverhead::plain(0),
                        proxy_tx: side(stream::CC_DOWNLINK),
                        proxy_rx: TunnelReceiver::new(t),
                        ue_tx: side(stream::CC_UPLINK),
                        ue_rx: TunnelReceiver::new(t),
                        streams: Some([
                            StreamRx::new(tp.tcp, n_paths),
                            StreamRx::new(tp.tcp, n_paths),
                        ]),
                    }
                }
            }
        });
        let hosts = if cfg.noise.host_jitter.is_some() || cfg.noise.host_stalls.is_some() {
            // Without jitter a host still stalls: a zero-mean draw is always 0.
            let jitter =
                cfg.noise.host_jitter.unwrap_or(Jitter::new(Duration::ZERO, Duration::ZERO));
            let seed = |base: u64, h: Host| stream_seed(cfg.seed, base + h as u64);
            HOSTS
                .iter()
                .map(|&h| {
                    let stalls = cfg.noise.host_stalls.map(|s| (s, seed(stream::HOST_STALL, h)));
                    HostQueue::new(jitter, seed(stream::HOST_JITTER, h), stalls)
                })
                .collect()
        } else {
            Vec::new()
        };
        if let Some(t) = tunnel.as_mut().filter(|_| cfg.path_handshake) {
            for (i, (down, up)) in cfg.paths.iter().enumerate().take(n_paths) {
                let rtt = handshake_rtt(down, up);
                t.proxy_tx.on_path_rtt_sample(i, rtt);
                t.ue_tx.on_path_rtt_sample(i, rtt);
                // The daemon hands each probe answer to its receiver too, whose adaptive wait
                // limit starts from the probes' delay difference (`daemon.rs`).
                t.proxy_rx.on_path_rtt_sample(i, rtt);
                t.ue_rx.on_path_rtt_sample(i, rtt);
            }
        }
        let path_names: Vec<String> = cfg.path_names.iter().take(n_paths).cloned().collect();
        World {
            now: Instant::ZERO,
            events: EventQueue::new(),
            pool: PacketPool::with_capacity(8192),
            links,
            hops,
            server,
            ue_app,
            tunnel,
            rng: Pcg64Mcg::seed_from_u64(cfg.seed),
            hosts,
            started_at: Instant::ZERO + cfg.noise.start_offset,
            n_paths,
            done_at: None,
            udp_live: 0,
            last_delivery: Instant::ZERO,
            app_bytes: 0,
            account: [DirAccount::default(); 2],
            path_bytes: vec![0; n_paths],
            protocol_delay_ms: Stat::default(),
            hol_ms: Stat::default(),
            sample_hol_ms: Stat::default(),
            path_srtt_ms: vec![Stat::default(); n_paths],
            path_send_queue_bytes: cfg.tcp_paths.as_ref().map(|_| vec![Stat::default(); n_paths]),
            e2e_srtt_ms: Stat::default(),
            wait_limit_ms: Stat::default(),
            series: Series {
                path_names,
                bin_s: cfg.bin.as_secs_f64(),
                path_bins: vec![Vec::new(); n_paths],
                ..Default::default()
            },
            bin_ns: braid_core::time::duration_nanos(cfg.bin).max(1),
            sample_interval: cfg.sample_interval,
            max_time: Instant::ZERO + cfg.max_time,
            simulated_packets: 0,
            segments_out: Vec::new(),
            acks_out: Vec::new(),
        }
    }

    /// Runs until the transfer completes or `max_time` passes.
    pub fn run(mut self) -> Outcome {
        if self.started_at == Instant::ZERO {
            self.pump(Agent::Server);
        } else {
            self.events.schedule(self.started_at, Event::Start);
        }
        self.events.schedule(Instant::ZERO, Event::Sample);
        while self.done_at.is_none() {
            let Some((t, ev)) = self.events.pop() else { break };
            if t > self.max_time {
                break;
            }
            self.now = t;
            match ev {
                Event::TxDone(l) => self.on_tx_done(l as usize),
                Event::Arrive(l) => self.on_arrive(l as usize),
                Event::Timer(a) => self.on_timer(AGENTS[a as usize]),
                Event::Sample => self.on_sample(),
                Event::Depart(h) => self.on_depart(usize::from(h)),
                Event::Start => self.pump(Agent::Server),
            }
        }
        self.finish()
    }

    /// What the tunnel adds to each datagram (nothing in the baseline).
    fn wire(&self) -> WireOverhead {
        self.tunnel.as_ref().map_or(WireOverhead::plain(0), |t| t.wire)
    }

    // ---- links ----

    /// A host puts a packet on `link`: at once, or after its host delay when the noise model
    /// has host jitter.
    fn send(&mut self, link: usize, id: PktId) {
        self.leave_host(link, id, false);
    }

    /// A host puts a datagram on `link` right behind the packet it sent last, in the same
    /// batch: with host jitter it leaves with that packet, drawing no delay of its own.
    fn send_behind(&mut self, link: usize, id: PktId) {
        self.leave_host(link, id, true);
    }

    fn leave_host(&mut self, link: usize, id: PktId, behind: bool) {
        if self.hosts.is_empty() {
            return self.transmit(link, id);
        }
        let h = host_of(link) as usize;
        let idle = self.hosts[h].next_departure().is_none();
        let item = (link as u16, id);
        let at = if behind {
            self.hosts[h].admit_behind(item)
        } else {
            self.hosts[h].admit(self.now, item)
        };
        if idle {
            // A datagram behind a packet that already left goes now.
            self.events.schedule(at.max(self.now), Event::Depart(h as u16));
        }
    }

    /// Host `h`'s head packets are due: each goes onto its link, in order.
    fn on_depart(&mut self, h: usize) {
        while let Some((link, id)) = self.hosts[h].pop_due(self.now) {
            self.transmit(usize::from(link), id);
        }
        if let Some(at) = self.hosts[h].next_departure() {
            self.events.schedule(at, Event::Depart(h as u16));
        }
    }

    fn transmit(&mut self, link: usize, id: PktId) {
        let ip_len = self.pool.get(id).ip_len(&self.wire());
        self.simulated_packets += 1;
        match self.links[link].enqueue(self.now, id, ip_len, &mut self.rng) {
            Enqueue::Started(done) => self.events.schedule(done, Event::TxDone(link as u16)),
            Enqueue::Scheduled(Some(arrival)) => {
                self.events.schedule(arrival, Event::Arrive(link as u16))
            }
            Enqueue::Queued | Enqueue::Scheduled(None) => {}
            Enqueue::DroppedBuffer | Enqueue::DroppedLoss => {
                self.drop_packet(id, |a| &mut a.link_drops)
            }
        }
    }

    fn on_tx_done(&mut self, link: usize) {
        let (next, arrival) = self.links[link].tx_done(self.now);
        while let Some(dropped) = self.links[link].pop_aqm_drop() {
            self.drop_packet(dropped, |a| &mut a.link_drops);
        }
        if let Some(t) = next {
            self.events.schedule(t, Event::TxDone(link as u16));
        }
        if let Some(t) = arrival {
            self.events.schedule(t, Event::Arrive(link as u16));
        }
    }

    fn on_arrive(&mut self, link: usize) {
        while let Some(id) = self.links[link].pop_arrived(self.now) {
            self.deliver(self.hops[link], link, id);
        }
        if let Some(t) = self.links[link].next_arrival() {
            self.events.schedule(t, Event::Arrive(link as u16));
        }
    }

    /// Frees a packet that left the system without reaching its application, charging it to
    /// its direction's account when it was tunnel data.
    fn drop_packet(&mut self, id: PktId, counter: fn(&mut DirAccount) -> &mut u64) {
        let p = *self.pool.get(id);
        if p.tunnel.is_some() && !matches!(p.payload, Payload::Feedback(_)) {
            *counter(&mut self.account[usize::from(!p.downlink)]) += 1;
        }
        self.free(id);
    }

    fn free(&mut self, id: PktId) {
        let p = *self.pool.get(id);
        self.retire(&p);
        self.pool.free(id);
    }

    /// A packet (or a copy of it) left the system: the UDP transfer ends with its last packet.
    fn retire(&mut self, p: &Packet) {
        if matches!(p.payload, Payload::Udp) {
            self.udp_live -= 1;
            if self.udp_live == 0 && matches!(&self.server, ServerApp::Udp(s) if s.is_done()) {
                self.done_at = Some(self.last_delivery);
            }
        }
    }

    fn deliver(&mut self, hop: Hop, link: usize, id: PktId) {
        let now = self.now;
        match hop {
            Hop::ProxyFromServer => {
                if self.tunnel.is_some() {
                    self.enter_tunnel(Agent::ProxyTx, id);
                } else {
                    self.send(path_dl(0), id);
                }
            }
            Hop::Server => {
                if let (ServerApp::Tcp(tcp), Payload::Ack(ack)) =
                    (&mut self.server, self.pool.get(id).payload)
                {
                    tcp.handle_ack(now, &ack);
                }
                self.free(id);
                self.pump(Agent::Server);
            }
            Hop::Ue(i) => {
                let p = *self.pool.get(id);
                let frame = (p.ip_len(&self.wire()) + self.links[link].spec.framing_bytes) as u64;
                let bin = (now.as_nanos() / self.bin_ns) as usize;
                Series::add_bin(&mut self.series.path_bins[i], bin, frame);
                self.on_path_arrival(Agent::UeTx, Agent::UeRx, i, id);
            }
            Hop::ProxyFromUe(i) => self.on_path_arrival(Agent::ProxyTx, Agent::ProxyRx, i, id),
        }
    }

    /// A packet came off path `i` at a tunnel endpoint whose sender is `tx` and receiver `rx`.
    fn on_path_arrival(&mut self, tx: Agent, rx: Agent, i: usize, id: PktId) {
        let now = self.now;
        let p = *self.pool.get(id);
        let Some(t) = self.tunnel.as_mut() else {
            // Baseline: plain routing.
            match tx {
                Agent::UeTx => self.deliver_to_app(id),
                _ => self.send(SERVER_UL, id),
            }
            return;
        };
        let sender = if tx == Agent::ProxyTx { &mut t.proxy_tx } else { &mut t.ue_tx };
        match p.payload {
            Payload::Feedback(f) => {
                sender.handle_feedback(now, self.pool.feedback(f));
                self.pool.free(id);
                self.pump(tx);
                return;
            }
            // The send timestamp of the compact packet ahead of it on path i.
            Payload::TimeSync(ts) => {
                self.pool.free(id);
                let receiver = if rx == Agent::UeRx { &mut t.ue_rx } else { &mut t.proxy_rx };
                receiver.handle_time_sync(now, &TimeSync { path_id: i as u8, ..ts });
                self.pump(rx);
                return;
            }
            // An ACK of this end's own connection on path i.
            Payload::PathAck(ack) => {
                if let Some(s) = sender.as_stream_mut() {
                    s.handle_ack(now, i, &ack);
                }
                self.pool.free(id);
                self.pump(tx);
                return;
            }
            // A segment of the other end's connection: whole frames go on to the receiver.
            Payload::PathSegment(seg) => {
                self.pool.free(id);
                let down = rx == Agent::UeRx;
                if let Some(streams) = t.streams.as_mut() {
                    streams[usize::from(!down)].handle_segment(now, i, &seg);
                }
                while let Some((path, frame)) = self.tunnel.as_mut().and_then(|t| {
                    t.streams.as_mut().and_then(|s| s[usize::from(!down)].poll_frame())
                }) {
                    self.tunnel_data_arrived(rx, path, frame);
                }
                self.pump(rx);
                return;
            }
            _ => {}
        }
        self.tunnel_data_arrived(rx, i, id);
        self.pump(rx);
    }

    /// A tunnel data packet reached the tunnel receiver `rx` from path `i`.
    fn tunnel_data_arrived(&mut self, rx: Agent, i: usize, id: PktId) {
        let now = self.now;
        let p = *self.pool.get(id);
        let Some(t) = self.tunnel.as_mut() else { return };
        let Some(header) = p.tunnel else {
            self.free(id);
            return;
        };
        if p.downlink {
            self.path_bytes[i] += p.inner_len as u64;
        }
        self.pool.get_mut(id).reached_receiver = now;
        let receiver = if rx == Agent::UeRx { &mut t.ue_rx } else { &mut t.proxy_rx };
        if let Some(dup) = receiver.handle_data(now, &header, id) {
            self.drop_packet(dup, |a| &mut a.reorder_drops);
        }
        while let Some(t) = self.tunnel.as_mut() {
            let receiver = if rx == Agent::UeRx { &mut t.ue_rx } else { &mut t.proxy_rx };
            let Some(dup) = receiver.poll_rejected() else { break };
            self.drop_packet(dup, |a| &mut a.reorder_drops);
        }
    }

    fn enter_tunnel(&mut self, tx: Agent, id: PktId) {
        let now = self.now;
        let Some(t) = self.tunnel.as_mut() else { return };
        let p = self.pool.get_mut(id);
        p.entered_tunnel = now;
        let dir = usize::from(!p.downlink);
        self.account[dir].entered += 1;
        let sender = if tx == Agent::ProxyTx { &mut t.proxy_tx } else { &mut t.ue_tx };
        if let Some(p) = sender.handle_packet(now, &mut self.pool, id) {
            self.account[dir].sched_drops += 1;
            self.retire(&p);
        }
        self.pump(tx);
    }

    fn deliver_to_app(&mut self, id: PktId) {
        let now = self.now;
        let p = *self.pool.get(id);
        let bin = (now.as_nanos() / self.bin_ns) as usize;
        match (&mut self.ue_app, p.payload) {
            (UeApp::Tcp(rx), Payload::Segment(seg)) => {
                let new = rx.handle_segment(now, &seg);
                self.app_bytes += new;
                Series::add_bin(&mut self.series.goodput_bins, bin, new);
                if rx.is_complete() && self.done_at.is_none() {
                    self.done_at = Some(now);
                }
            }
            (UeApp::Udp { bytes }, Payload::Udp) => {
                let payload = (p.inner_len - 28) as u64;
                *bytes += payload;
                self.app_bytes += payload;
                self.last_delivery = now;
                Series::add_bin(&mut self.series.goodput_bins, bin, payload);
            }
            _ => {}
        }
        self.free(id);
        self.pump(Agent::UeApp);
    }

    // ---- endpoints ----

    /// An agent's timer fired (the queue keeps one per agent, [`EventQueue::arm`]); every change
    /// of an agent's deadline goes through [`World::pump`], which re-arms it.
    fn on_timer(&mut self, agent: Agent) {
        let now = self.now;
        match agent {
            Agent::Server => {
                if let ServerApp::Tcp(tcp) = &mut self.server {
                    tcp.handle_timeout(now);
                }
            }
            Agent::UeApp => {
                if let UeApp::Tcp(rx) = &mut self.ue_app {
                    rx.handle_timeout(now);
                }
            }
            Agent::ProxyTx | Agent::UeTx => {
                if let Some(t) = self.tunnel.as_mut() {
                    let s = if agent == Agent::ProxyTx { &mut t.proxy_tx } else { &mut t.ue_tx };
                    s.handle_timeout(now);
                }
            }
            Agent::ProxyRx | Agent::UeRx => {
                let down = agent == Agent::UeRx;
                if let Some(s) = self.tunnel.as_mut().and_then(|t| t.streams.as_mut()) {
                    s[usize::from(!down)].handle_timeout(now);
                }
            }
        }
        self.pump(agent);
    }

    /// Drains an endpoint's outputs at `now` and re-arms its timer.
    fn pump(&mut self, agent: Agent) {
        let now = self.now;
        match agent {
            Agent::Server => loop {
                let pkt = match &mut self.server {
                    ServerApp::Tcp(tcp) => match tcp.poll_transmit(now) {
                        Some(seg) => Packet::new(Payload::Segment(seg), seg.wire_len(), true),
                        None => break,
                    },
                    ServerApp::Udp(src) => match src.poll_transmit(now) {
                        Some(len) => {
                            self.udp_live += 1;
                            Packet::new(Payload::Udp, len, true)
                        }
                        None => break,
                    },
                };
                let id = self.pool.alloc(pkt);
                self.send(SERVER_DL, id);
            },
            Agent::UeApp => {
                while let UeApp::Tcp(rx) = &mut self.ue_app {
                    let Some(ack) = rx.poll_ack(now) else { break };
                    let id = self.pool.alloc(Packet::new(Payload::Ack(ack), ack.wire_len(), false));
                    if self.tunnel.is_some() {
                        self.enter_tunnel(Agent::UeTx, id);
                    } else {
                        self.send(path_ul(0), id);
                    }
                }
            }
            Agent::ProxyTx | Agent::UeTx if self.is_stream_tunnel() => {
                self.pump_stream_sender(agent == Agent::ProxyTx);
                self.retire_aqm_drops(agent == Agent::ProxyTx);
            }
            Agent::ProxyTx | Agent::UeTx => {
                let down = agent == Agent::ProxyTx;
                while let Some(t) = self.tunnel.as_mut() {
                    let s = if down { &mut t.proxy_tx } else { &mut t.ue_tx };
                    let Some(Departure { path, id, copy, time_sync }) =
                        s.poll_transmit(now, &mut self.pool)
                    else {
                        break;
                    };
                    let control = t.wire.control;
                    if copy && matches!(self.pool.get(id).payload, Payload::Udp) {
                        // Every copy on the wire ends somewhere and is retired there.
                        self.udp_live += 1;
                    }
                    let link = if down { path_dl(path) } else { path_ul(path) };
                    self.send(link, id);
                    if let Some(ts) = time_sync {
                        // Right behind its packet, as the daemon sends it (daemon.rs).
                        let len = control + TIME_SYNC_LEN as u32;
                        let id = self.pool.alloc(Packet::new(Payload::TimeSync(ts), len, down));
                        self.send_behind(link, id);
                    }
                }
                self.retire_aqm_drops(down);
            }
            Agent::ProxyRx | Agent::UeRx => self.pump_receiver(agent == Agent::UeRx),
        }
        self.arm(agent);
    }

    /// Retires what CoDel dropped from a tunnel sender's scheduler queue: scheduler drops, as
    /// the drop-tail ones.
    fn retire_aqm_drops(&mut self, down: bool) {
        while let Some(t) = self.tunnel.as_mut() {
            let s = if down { &mut t.proxy_tx } else { &mut t.ue_tx };
            let Some(p) = s.poll_dropped(&mut self.pool) else { break };
            self.account[usize::from(!p.downlink)].sched_drops += 1;
            self.retire(&p);
        }
    }

    /// Whether the tunnel's paths are kernel TCP connections.
    fn is_stream_tunnel(&self) -> bool {
        self.tunnel.as_ref().is_some_and(|t| t.streams.is_some())
    }

    /// The scheduler writes what the paths' connections take, and each connection sends the
    /// segments its window and pacing allow.
    fn pump_stream_sender(&mut self, down: bool) {
        let now = self.now;
        let Some(Tunnel { proxy_tx, ue_tx, streams: Some(streams), .. }) = self.tunnel.as_mut()
        else {
            return;
        };
        let Some(s) = (if down { proxy_tx } else { ue_tx }).as_stream_mut() else { return };
        let rx = &mut streams[usize::from(!down)];
        s.update_paths();
        while let Some(w) = s.poll_write(now, &mut self.pool) {
            rx.expect(w);
        }
        let mut out = std::mem::take(&mut self.segments_out);
        for i in 0..s.path_count() {
            while let Some(seg) = s.poll_segment(now, i) {
                out.push((i, seg));
            }
        }
        for (i, seg) in out.drain(..) {
            let id = self.pool.alloc(Packet::new(Payload::PathSegment(seg), seg.wire_len(), down));
            self.send(if down { path_dl(i) } else { path_ul(i) }, id);
        }
        self.segments_out = out;
    }

    /// The ACKs the receiving ends of the paths' connections owe, each on its path's reverse
    /// link.
    fn send_path_acks(&mut self, down: bool) {
        let now = self.now;
        let Some(Tunnel { streams: Some(streams), .. }) = self.tunnel.as_mut() else { return };
        let rx = &mut streams[usize::from(!down)];
        let mut out = std::mem::take(&mut self.acks_out);
        for i in 0..rx.path_count() {
            while let Some(ack) = rx.poll_ack(now, i) {
                out.push((i, ack));
            }
        }
        for (i, ack) in out.drain(..) {
            let id = self.pool.alloc(Packet::new(Payload::PathAck(ack), ack.wire_len(), !down));
            self.send(if down { path_ul(i) } else { path_dl(i) }, id);
        }
        self.acks_out = out;
    }

    fn pump_receiver(&mut self, down: bool) {
        let now = self.now;
        self.send_path_acks(down);
        let streams = self.is_stream_tunnel();
        loop {
            let Some(t) = self.tunnel.as_mut() else { return };
            let r = if down { &mut t.ue_rx } else { &mut t.proxy_rx };
            if let Some(fb) = r.poll_feedback(now) {
                if streams {
                    // Nothing reads it: each path's TCP acknowledges by itself.
                    continue;
                }
                let len = t.wire.control + fb.encoded_len() as u32;
                let i = fb.path_id as usize;
                // Feedback for downlink data travels uplink, and vice versa.
                let id = self.pool.alloc_feedback(fb, len, !down);
                self.send(if down { path_ul(i) } else { path_dl(i) }, id);
                continue;
            }
            let Some(rel) = r.poll_deliver(now) else { return };
            let id = rel.payload;
            let p = self.pool.get_mut(id);
            p.tunnel = None;
            let (entered, reached) = (p.entered_tunnel, p.reached_receiver);
            self.account[usize::from(!down)].delivered += 1;
            if down {
                self.protocol_delay_ms.add(now.nanos_since(entered) as f64 * 1e-6);
                let hol_ms = now.nanos_since(reached) as f64 * 1e-6;
                self.hol_ms.add(hol_ms);
                self.sample_hol_ms.add(hol_ms);
                self.deliver_to_app(id);
            } else {
                self.send(SERVER_UL, id);
            }
        }
    }

    fn deadline(&self, agent: Agent) -> Option<Instant> {
        match agent {
            Agent::Server => match &self.server {
                ServerApp::Tcp(tcp) => tcp.poll_timeout(),
                ServerApp::Udp(src) => src.poll_timeout(),
            },
            Agent::UeApp => match &self.ue_app {
                UeApp::Tcp(rx) => rx.poll_timeout(),
                UeApp::Udp { .. } => None,
            },
            Agent::ProxyTx => self.tunnel.as_ref()?.proxy_tx.poll_timeout(),
            Agent::UeTx => self.tunnel.as_ref()?.ue_tx.poll_timeout(),
            Agent::ProxyRx | Agent::UeRx => {
                let t = self.tunnel.as_ref()?;
                let down = agent == Agent::UeRx;
                let rx = if down { &t.ue_rx } else { &t.proxy_rx };
                let stream = t.streams.as_ref().and_then(|s| s[usize::from(!down)].poll_timeout());
                [rx.poll_timeout(), stream].into_iter().flatten().min()
            }
        }
    }

    /// Arms the agent's timer if its deadline is earlier than the one already pending. Later
    /// deadlines need nothing: when the pending one fires, the agent re-arms.
    fn arm(&mut self, agent: Agent) {
        let Some(d) = self.deadline(agent) else { return };
        self.events.arm(agent as u16, d.max(self.now));
    }

    // ---- observation ----

    fn on_sample(&mut self) {
        let now = self.now;
        let mut row = TraceRow { t_s: now.as_secs_f64(), ..Default::default() };
        if let ServerApp::Tcp(tcp) = &self.server {
            let m = tcp.metrics();
            row.e2e_cwnd_bytes = m.cwnd_bytes;
            row.e2e_in_flight_bytes = m.in_flight_bytes;
            row.e2e_srtt_ms = m.srtt.map_or(0.0, |d| d.as_secs_f64() * 1e3);
            row.e2e_pacing_mbps = pacing_mbps(m.pacing_rate_bytes_per_s);
            row.e2e_retransmissions = m.retransmissions;
            if m.srtt.is_some() {
                self.e2e_srtt_ms.add(row.e2e_srtt_ms);
            }
        }
        for i in 0..self.n_paths {
            let link = &self.links[path_dl(i)];
            let mut s = PathSample {
                bottleneck_queue_pkts: link.queue_len(now),
                drops: link.stats.drops(),
                ..Default::default()
            };
            if let Some(t) = &self.tunnel {
                let m = t.proxy_tx.path_metrics(i);
                s.cwnd_bytes = m.cc.cwnd_bytes;
                s.in_flight_bytes = m.in_flight_bytes;
                s.pacing_rate_mbps = pacing_mbps(m.cc.pacing_rate_bytes_per_s);
                s.phase = m.cc.phase.as_str();
                if let Some(srtt) = m.srtt {
                    s.srtt_ms = srtt.as_secs_f64() * 1e3;
                    self.path_srtt_ms[i].add(s.srtt_ms);
                }
                if let (Some(q), Some(tx)) =
                    (self.path_send_queue_bytes.as_mut(), t.proxy_tx.as_stream())
                {
                    q[i].add(tx.send_queue_bytes(i) as f64);
                }
            }
            self.series.path_trace.push(s);
        }
        if let Some(t) = &self.tunnel {
            row.sched_queue_pkts = t.proxy_tx.queue_len();
            row.reorder_pkts = t.ue_rx.reorder_len();
            row.wait_limit_ms = t.ue_rx.wait_limit().as_secs_f64() * 1e3;
            row.acpf_fraction = t.proxy_tx.scheduler_metrics().acpf_fraction;
            row.tunnel_retransmissions = t.proxy_tx.stats().retransmissions;
            let reorder = t.ue_rx.stats().reorder;
            row.released_on_timeout = reorder.released_on_timeout;
            row.released_on_fast_loss = reorder.released_on_fast_loss;
            self.wait_limit_ms.add(row.wait_limit_ms);
        }
        if self.sample_hol_ms.count() > 0 {
            row.hol_ms = Some(self.sample_hol_ms.mean_max());
        }
        self.sample_hol_ms = Stat::default();
        self.series.trace.push(row);
        self.events.schedule(now + self.sample_interval, Event::Sample);
    }

    /// Counts tunnel data packets of each direction still inside the system.
    fn in_flight(&self) -> [u64; 2] {
        let mut n = [0u64; 2];
        let Some(t) = &self.tunnel else { return n };
        n[0] += (t.proxy_tx.queue_len()
            + (0..self.n_paths).map(|i| t.proxy_tx.pacing_queue_len(i)).sum::<usize>())
            as u64;
        n[1] += (t.ue_tx.queue_len()
            + (0..self.n_paths).map(|i| t.ue_tx.pacing_queue_len(i)).sum::<usize>())
            as u64;
        n[0] += t.ue_rx.held_len() as u64;
        n[1] += t.proxy_rx.held_len() as u64;
        if let Some(s) = &t.streams {
            // Frames inside the paths' connections: written and not yet whole at the far end.
            n[0] += s[0].held_len() as u64;
            n[1] += s[1].held_len() as u64;
        }
        let waiting = self.hosts.iter().flat_map(|h| h.items().map(|(_, id)| id));
        for id in self.links.iter().flat_map(|l| l.packets()).chain(waiting) {
            let p = self.pool.get(id);
            if p.tunnel.is_some() && !matches!(p.payload, Payload::Feedback(_)) {
                n[usize::from(!p.downlink)] += 1;
            }
        }
        n
    }

    fn finish(mut self) -> Outcome {
        // Every event up to the last one run has happened: the completion's instant, or the
        // time limit when the run stopped there (crate::link's scheduled links count a service
        // once its instant has come).
        let until = if self.done_at.is_some() { self.now } else { self.max_time.max(self.now) };
        for link in &mut self.links {
            link.settle(until);
        }
        let in_flight = self.in_flight();
        let (retransmissions, rto_count) = match &self.server {
            ServerApp::Tcp(tcp) => {
                let m = tcp.metrics();
                (m.retransmissions, m.rto_count)
            }
            ServerApp::Udp(_) => (0, 0),
        };
        let t = self.tunnel.as_ref();
        let n = self.n_paths;
        Outcome {
            started_at: self.started_at,
            done_at: self.done_at,
            app_bytes: self.app_bytes,
            events: self.events.processed(),
            simulated_packets: self.simulated_packets,
            path_bytes: self.path_bytes.clone(),
            path_frame_bytes: (0..n).map(|i| self.links[path_dl(i)].stats.tx_bytes).collect(),
            path_drops: (0..n).map(|i| self.links[path_dl(i)].stats.drops()).collect(),
            uplink_drops: (0..n).map(|i| self.links[path_ul(i)].stats.drops()).collect(),
            server_link_drops: [SERVER_DL, SERVER_UL]
                .iter()
                .map(|&l| self.links[l].stats.drops())
                .sum(),
            path_downlink_stats: (0..n).map(|i| self.links[path_dl(i)].stats).collect(),
            path_srtt_ms: self.path_srtt_ms.clone(),
            path_send_queue_bytes: self.path_send_queue_bytes.clone(),
            path_sent_pkts: (0..n)
                .map(|i| {
                    t.map_or(self.links[path_dl(i)].stats.tx_pkts, |t| {
                        t.proxy_tx.path_stats(i).sent_pkts
                    })
                })
                .collect(),
            path_lost_pkts: (0..n)
                .map(|i| t.map_or(0, |t| t.proxy_tx.path_stats(i).lost_pkts))
                .collect(),
            path_owd: (0..n).map(|i| t.and_then(|t| t.ue_rx.path_owd(i))).collect(),
            account: {
                let mut a = self.account;
                if let Some(t) = t {
                    a[0].copies = t.proxy_tx.stats().copies();
                    a[1].copies = t.ue_tx.stats().copies();
                }
                a
            },
            in_flight,
            protocol_delay_ms: self.protocol_delay_ms,
            hol_ms: self.hol_ms,
            e2e_srtt_ms: self.e2e_srtt_ms,
            wait_limit_ms: self.wait_limit_ms,
            retransmissions,
            rto_count,
            reorder: t.map(|t| t.ue_rx.stats().reorder).unwrap_or_default(),
            downlink_sender: t.map(|t| t.proxy_tx.stats()).unwrap_or_default(),
            peak_live_packets: self.pool.capacity_used(),
            series: self.series,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::world_config;
    use crate::scenario::Scenario;

    /// The by-index sender (the default for a tunnel that never copies packets) and the
    /// by-value one give the same run, event for event.
    #[test]
    fn packets_held_by_index_or_by_value_give_identical_runs() {
        let mut s = Scenario::default();
        s.e2e.bytes = 5_000_000;
        s.paths[0].loss = crate::scenario::LossChoice::Bernoulli { p: 0.01 };
        let cfg = world_config(&s, false).unwrap();
        let tunnel = cfg.tunnel.clone().unwrap();
        assert!(!tunnel.copies_packets(), "the default tunnel holds packets by index");
        let by_index = World::new(&cfg);
        assert!(matches!(by_index.tunnel.as_ref().unwrap().proxy_tx, SimSender::ByIndex(_)));
        let mut by_value = World::new(&cfg);
        let t = by_value.tunnel.as_mut().unwrap();
        t.proxy_tx = SimSender::by_value(&tunnel);
        t.ue_tx = SimSender::by_value(&tunnel);
        let (a, b) = (by_index.run(), by_value.run());
        assert!(a.done_at.is_some(), "the transfer completes");
        assert_eq!(a.done_at, b.done_at);
        assert_eq!(a.events, b.events);
        assert_eq!(a.account, b.account);
        assert_eq!(a.path_sent_pkts, b.path_sent_pkts);
        assert_eq!(a.path_drops, b.path_drops);
        assert!(a.path_drops[0] > 0, "path 1's random loss is exercised");
    }

    /// Links that skip their end-of-service events (crate::link's scheduled links, the
    /// default for constant-rate drop-tail links) give the run the same links with an event per
    /// service give, sample for sample, with a third or more fewer events: the default scenario, one
    /// with random loss on path 1 and the noise model's host jitter (packets offered at every
    /// instant), and a baseline.
    #[test]
    fn links_without_end_of_service_events_give_identical_runs() {
        let cases: [(&[&str], bool); 3] = [
            (&["e2e.bytes=4000000"], false),
            (
                &[
                    "e2e.bytes=4000000",
                    "paths.0.loss=0.01",
                    "keys=ASYM40",
                    "sim.noise.host_jitter_us=20",
                    "seed=3",
                ],
                false,
            ),
            (&["e2e.bytes=4000000", "e2e.cc=bbr"], true),
        ];
        for (sets, baseline) in cases {
            let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
            let s = Scenario::from_toml_str("", &sets).unwrap();
            let cfg = world_config(&s, baseline).unwrap();
            let scheduled = World::new(&cfg);
            let mut with_events = World::new(&cfg);
            for link in &mut with_events.links {
                *link = Link::with_events(link.spec.clone());
            }
            let (a, b) = (scheduled.run(), with_events.run());
            assert!(a.done_at.is_some(), "{sets:?} completes");
            assert_eq!(a.done_at, b.done_at, "{sets:?}");
            assert_eq!(a.path_downlink_stats, b.path_downlink_stats, "{sets:?}");
            assert_eq!(
                (a.path_drops, a.uplink_drops, a.server_link_drops),
                (b.path_drops, b.uplink_drops, b.server_link_drops)
            );
            assert_eq!((a.account, a.retransmissions), (b.account, b.retransmissions));
            assert_eq!(a.series.trace, b.series.trace, "{sets:?}");
            assert_eq!(a.series.path_trace, b.series.path_trace, "{sets:?}");
            assert_eq!(a.series.goodput_bins, b.series.goodput_bins);
            assert!(
                (a.events as f64) < 0.75 * b.events as f64,
                "{sets:?}: {} events against {}",
                a.events,
                b.events
            );
        }
    }

    #[test]
    fn a_handshake_measures_the_idle_path_rtt() {
        let s = Scenario::default();
        let cfg = world_config(&s, false).unwrap();
        let (down, up) = &cfg.paths[0];
        // Path 1: 20 ms RTT, 50 Mbit/s each way. A 44-byte handshake packet plus 14 bytes of
        // framing takes 58 * 8 / 50e6 s = 9.28 us per link.
        assert_eq!(handshake_rtt(down, up), Duration::from_nanos(20_000_000 + 2 * 9_280));
    }

    /// As the daemon's probe answers do, the handshake's RTTs reach both receivers: their
    /// adaptive wait limit starts above the bare margin, from the paths' delay difference.
    #[test]
    fn a_handshake_seeds_the_receivers_wait_limits() {
        let limits = |handshake: bool| {
            let s =
                Scenario::from_toml_str("", &[format!("sim.path_handshake={handshake}")]).unwrap();
            let w = World::new(&world_config(&s, false).unwrap());
            let t = w.tunnel.as_ref().expect("a tunnel");
            (t.ue_rx.wait_limit(), t.proxy_rx.wait_limit())
        };
        let (bare, bare_proxy) = limits(false);
        let (ue, proxy) = limits(true);
        assert_eq!((bare, ue), (bare_proxy, proxy));
        assert!(ue > bare, "seeded {ue:?}, bare margin {bare:?}");
    }

    /// With path exclusion, a path 200 ms slower never carries data when the handshake has
    /// measured it; without the handshake it carries its initial window before its first
    /// feedback.
    #[test]
    fn a_handshake_lets_path_exclusion_spare_the_slow_path_its_initial_window() {
        let run = |handshake: bool| {
            let sets = [
                "keys=ASYM200".to_string(),
                "e2e.bytes=2000000".to_string(),
                "tunnel.max_rtt_spread_ms=100".to_string(),
                format!("sim.path_handshake={handshake}"),
            ];
            let s = Scenario::from_toml_str("", &sets).unwrap();
            let cfg = world_config(&s, false).unwrap();
            assert_eq!(cfg.path_handshake, handshake);
            World::new(&cfg).run().path_sent_pkts[1]
        };
        assert_eq!(run(true), 0);
        assert!(run(false) > 0, "the unmeasured slow path gets packets");
    }

    /// Over the daemon's wire the data travels compact and unstamped: the receiver's one-way
    /// delays come from time-sync frames alone, so it has samples only because they arrive
    /// (the adaptive wait asks for one per millisecond per busy path); each frame is a datagram
    /// of its own on the path, and each compact packet costs 48 bytes over its inner packet
    /// against the plain wire's `tunnel.header_bytes`.
    #[test]
    fn the_daemon_wire_samples_delays_from_time_sync_frames_on_the_path() {
        let run = |wire: &str| {
            let sets = ["e2e.bytes=3000000".to_string(), format!("sim.wire={wire}")];
            let s = Scenario::from_toml_str("", &sets).unwrap();
            let cfg = world_config(&s, false).unwrap();
            assert_eq!(cfg.daemon_wire, wire == "daemon");
            World::new(&cfg).run()
        };
        let (plain, daemon) = (run("plain"), run("daemon"));
        let samples = |o: &Outcome| o.path_owd[0].map_or(0, |s| s.samples);
        assert!(samples(&daemon) > 0, "time-sync frames reach the receiver and pair");
        assert!(samples(&plain) > 0);
        // Path 1's downlink carries data, feedback for the uplink and, on the daemon's wire,
        // time-sync frames: one per millisecond while the path is busy.
        let others =
            |o: &Outcome| o.path_downlink_stats[0].tx_pkts as i64 - o.path_sent_pkts[0] as i64;
        let busy_ms = (daemon.done_at.unwrap().as_nanos() / 1_000_000) as i64;
        assert!(
            others(&daemon) > others(&plain) + busy_ms / 2,
            "daemon {} plain {} over {busy_ms} ms",
            others(&daemon),
            others(&plain)
        );
    }

    /// The trace's new columns follow the run's own counters: per-path drops and tunnel
    /// retransmissions only grow and never pass the final totals, and head-of-line delay is
    /// zero for every packet of an unreliable tunnel under `reorder = none` but not for a
    /// reliable one under `adaptive` with loss.
    #[test]
    fn trace_counts_drops_retransmissions_and_hol_per_sample() {
        let run = |reorder: &str, reliability: &str| {
            let sets = [
                "e2e.bytes=3000000".to_string(),
                "paths.0.loss=0.02".to_string(),
                format!("tunnel.reliability={reliability}"),
                format!("tunnel.reorder={reorder}"),
            ];
            let s = Scenario::from_toml_str("", &sets).unwrap();
            World::new(&world_config(&s, false).unwrap()).run()
        };
        let out = run("adaptive", "reliable");
        let rows = &out.series.trace;
        let drops: Vec<u64> = out.series.path_trace.iter().step_by(2).map(|p| p.drops).collect();
        assert!(drops.windows(2).all(|w| w[0] <= w[1]), "cumulative drops never fall");
        assert!(*drops.last().unwrap() > 0, "path 1's 2% loss shows in the trace");
        assert!(*drops.last().unwrap() <= out.path_drops[0]);
        let retx: Vec<u64> = rows.iter().map(|r| r.tunnel_retransmissions).collect();
        assert!(retx.windows(2).all(|w| w[0] <= w[1]));
        assert!(*retx.last().unwrap() > 0, "reliable paths resend what was lost");
        assert!(*retx.last().unwrap() <= out.downlink_sender.retransmissions);
        let hol_max = rows.iter().filter_map(|r| r.hol_ms).map(|h| h.max).fold(0.0, f64::max);
        assert!(hol_max > 0.0, "gaps behind losses hold later packets back");
        assert!(hol_max <= out.hol_ms.mean_max().max);
        assert!(rows.iter().filter_map(|r| r.hol_ms).all(|h| h.mean <= h.max));

        let none = run("none", "unreliable");
        let samples: Vec<_> = none.series.trace.iter().filter_map(|r| r.hol_ms).collect();
        assert!(!samples.is_empty(), "packets were delivered between samples");
        assert!(samples.iter().all(|h| h.max == 0.0), "`none` releases every packet at once");
    }

    /// The end-to-end columns: the sender's retransmissions only grow and end at most at the
    /// run's total; BBR's pacing rate shows (Startup's 2.89 x bw above the paths' 100 Mbit/s
    /// at some sample, never 0 once it has a bw sample), Cubic's, which does not pace, is 0.
    #[test]
    fn trace_follows_the_end_to_end_pacing_rate_and_retransmissions() {
        let run = |cc: &str| {
            let sets = [
                "e2e.bytes=3000000".to_string(),
                "paths.0.loss=0.02".to_string(),
                "tunnel.reorder=none".to_string(),
                format!("e2e.cc={cc}"),
            ];
            let s = Scenario::from_toml_str("", &sets).unwrap();
            World::new(&world_config(&s, false).unwrap()).run()
        };
        let bbr = run("bbr");
        let rows = &bbr.series.trace;
        let retx: Vec<u64> = rows.iter().map(|r| r.e2e_retransmissions).collect();
        assert!(retx.windows(2).all(|w| w[0] <= w[1]), "cumulative retransmissions never fall");
        assert!(*retx.last().unwrap() > 0, "2% loss on an unreliable path reaches the e2e TCP");
        assert!(*retx.last().unwrap() <= bbr.retransmissions);
        let pacing: Vec<f64> = rows.iter().map(|r| r.e2e_pacing_mbps).collect();
        assert!(pacing.iter().any(|&p| p > 100.0), "Startup paces above the paths' sum");
        let first = pacing.iter().position(|&p| p > 0.0).expect("BBR paces");
        assert!(pacing[first..].iter().all(|&p| p > 0.0));
        let cubic = run("cubic");
        assert!(cubic.series.trace.iter().all(|r| r.e2e_pacing_mbps == 0.0));
    }
}
