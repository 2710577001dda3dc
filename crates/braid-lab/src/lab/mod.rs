//! `braid lab`: one scenario, run for real. Builds the Figure 1 topology in namespaces
//! ([`crate::topology`]), routes the UE to the server, runs a real kernel TCP download of
//! `e2e.bytes` with `e2e.cc` ([`crate::transfer`]) or, with `e2e.kind = "udp"`, a
//! constant-rate UDP flow of `e2e.bytes` at `e2e.udp_rate_mbps` ([`crate::transfer::udp`]),
//! reads the queues' counters, tears everything down, and reports in the schema of
//! `braid sim --json` ([`report`]).
//!
//! Modes:
//! - [`LabMode::Baseline`]: no tunnel, path 1 alone (the baseline of Pieska et al. 2024, the
//!   denominator of the relative DLCT). Routes: server -> proxy -> path 1 -> UE.
//! - [`LabMode::Tunnel`]: `braid tunnel` on proxy (server) and UE (client) over every path
//!   ([`crate::tunnel::TunnelPair`]); routes server -> proxy -> tunnel -> UE and back. The
//!   daemons' status, sampled during the transfer, fills the tunnel's fields of the report
//!   ([`tunnel_side`]).
//!
//! Teardown happens on every exit: the topology and every child are guards, so an error, a
//! panic or an interrupt (the `cancel` flag, e.g. braid-net's
//! [`TerminationSignals::into_flag`](braid_net::signal::TerminationSignals::into_flag)) drops
//! them: every blocking wait of the test bed has a time limit of at most
//! [`crate::transfer::POLL_INTERVAL`], after which it looks at the flag.

pub mod cut;
pub mod report;
pub mod tunnel_side;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use braid_config::{TcpWriter, Transport, TunnelConfig};
use braid_core::cc::CcAlgorithm;
use braid_sim::scenario::E2eKind;
use braid_sim::Scenario;

use crate::netns::NetError;
use crate::topology::{Emulator, LinkCounters, Topology, TopologyOptions};
use crate::transfer::udp::{self, UdpReceiverConfig, UdpSenderConfig, UdpTransferReport};
use crate::transfer::{
    run_pair, KernelCc, ReceiverConfig, ReceiverReport, SenderConfig, TransferError, TransferReport,
};
use crate::tunnel::{TunnelPair, TunnelSpec};
pub use report::{LabDrops, LabE2eReport, LabInfo, LabPathReport, LabReorderReport, LabReport};

/// Port the receiver listens on at the UE.
pub const TRANSFER_PORT: u16 = 5201;
/// A transfer may take this many times its ideal duration (bytes at path 1's payload rate)...
const TIMEOUT_FACTOR: f64 = 20.0;
/// ... plus this much, for slow start, queues and VM stalls.
const TIMEOUT_SLACK: Duration = Duration::from_secs(60);
/// How long the tunnel pair may take to complete its handshake.
const TUNNEL_READY_TIMEOUT: Duration = Duration::from_secs(10);
/// A transfer with no progress for this long has failed.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
/// Shortest `TCP_INFO` sampling period we accept (`sim.sample_interval_ms` is used above it).
const MIN_SAMPLE_INTERVAL: Duration = Duration::from_millis(1);
/// The lab tunnel's MTU ([`TunnelSpec::new`]): a UDP datagram must fit it whole.
pub const TUNNEL_MTU: u32 = 1400;
/// A UDP flow has ended this long after its sender finished without an arrival: longer than
/// any queue (1000 packets at 50 Mbit/s: 0.24 s) or receiver wait of the tunnel.
const UDP_QUIET: Duration = Duration::from_secs(2);

/// An error of a lab run.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error(transparent)]
    Net(#[from] NetError),

    #[error("--cut: {0}")]
    Cut(String),

    #[error(transparent)]
    Transfer(TransferError),

    /// The transfer through the tunnel failed: the daemons' status and last log lines say why.
    #[error("{source}\n{daemons}")]
    TunnelTransfer { source: Box<TransferError>, daemons: String },

    /// A scenario field the lab cannot run.
    #[error("{field} = {value}: {allowed}")]
    Unsupported { field: &'static str, value: String, allowed: String },

    #[error("interrupted; the test bed was torn down")]
    Interrupted,
}

impl From<TransferError> for LabError {
    fn from(e: TransferError) -> Self {
        match e {
            TransferError::Stopped => LabError::Interrupted,
            TransferError::Net(n) => LabError::Net(n),
            other => LabError::Transfer(other),
        }
    }
}

/// What the E2E traffic runs over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabMode {
    /// Path 1 alone, no tunnel.
    Baseline,
    /// The multipath tunnel over every path.
    Tunnel,
}

impl LabMode {
    pub fn as_str(self) -> &'static str {
        match self {
            LabMode::Baseline => "baseline",
            LabMode::Tunnel => "tunnel",
        }
    }
}

/// Options of [`run`].
#[derive(Clone, Debug)]
pub struct LabOptions {
    pub mode: LabMode,
    pub emulator: Emulator,
    /// Also run the baseline (in its own topology) and report the relative DLCT.
    pub with_baseline: bool,
    /// Namespace prefix tag; each topology gets a unique prefix under it.
    pub tag: String,
    /// The `braid` executable that runs `braid tunnel` (normally `std::env::current_exe()`).
    pub braid_exe: std::path::PathBuf,
    /// In tunnel mode: cut one path for a while during the transfer ([`cut`]).
    pub cut: Option<cut::CutSpec>,
}

impl Default for LabOptions {
    fn default() -> Self {
        LabOptions {
            mode: LabMode::Baseline,
            emulator: Emulator::Htb,
            with_baseline: false,
            tag: crate::topology::TAG.to_string(),
            braid_exe: "braid".into(),
            cut: None,
        }
    }
}

/// Everything a run measured.
#[derive(Clone, Debug)]
pub struct LabOutput {
    pub report: LabReport,
    pub transfer: Transfer,
    pub baseline: Option<Transfer>,
    /// In tunnel mode, the proxy's paths sampled during the transfer (empty otherwise).
    pub tunnel_trace: Vec<tunnel_side::PathTraceRow>,
}

/// What the end-to-end transfer of a run measured.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Transfer {
    Tcp(TransferReport),
    Udp(UdpTransferReport),
}

impl Transfer {
    pub fn receiver(&self) -> &ReceiverReport {
        match self {
            Transfer::Tcp(t) => &t.receiver,
            Transfer::Udp(u) => &u.receiver,
        }
    }
}

/// The end-to-end flow a scenario asks the lab for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// A kernel TCP download with this congestion control (`e2e.cc`).
    Tcp(KernelCc),
    /// A paced UDP flow (`e2e.kind = "udp"`): no congestion control, so `e2e.cc` and
    /// `e2e.hystart` do not concern it.
    Udp,
}

impl Flow {
    /// The TCP download's congestion control; `None` for a UDP flow.
    pub fn tcp_cc(self) -> Option<KernelCc> {
        match self {
            Flow::Tcp(cc) => Some(cc),
            Flow::Udp => None,
        }
    }
}

/// Checks that the lab can run `s`, and returns its end-to-end flow.
pub fn check_scenario(s: &Scenario) -> Result<Flow, LabError> {
    if s.e2e.bytes == 0 {
        return Err(LabError::Unsupported {
            field: "e2e.bytes",
            value: "0".into(),
            allowed: "must be at least 1".into(),
        });
    }
    let flow = match s.e2e.kind {
        E2eKind::Udp => {
            let min = udp::MIN_PACKET_BYTES;
            if !(min..=TUNNEL_MTU).contains(&s.e2e.udp_packet_bytes) {
                return Err(LabError::Unsupported {
                    field: "e2e.udp_packet_bytes",
                    value: s.e2e.udp_packet_bytes.to_string(),
                    allowed: format!(
                        "{min}..={TUNNEL_MTU}: a datagram must fit the lab tunnel's MTU whole"
                    ),
                });
            }
            Flow::Udp
        }
        E2eKind::Tcp => {
            let cc = KernelCc::for_e2e_cc(s.e2e.cc).ok_or_else(|| LabError::Unsupported {
                field: "e2e.cc",
                value: s.e2e.cc.as_str().into(),
                allowed: "the lab runs kernel TCP: newreno (as reno), cubic, bbr".into(),
            })?;
            if s.e2e.cc == CcAlgorithm::Cubic {
                check_hystart(s.e2e.hystart)?;
            }
            Flow::Tcp(cc)
        }
    };
    if s.tunnel.transport == Transport::Tcp && s.tunnel.tcp.writer != TcpWriter::Cwnd {
        return Err(LabError::Unsupported {
            field: "tunnel.tcp.writer",
            value: s.tunnel.tcp.writer.as_str().into(),
            allowed: "the daemon writes while the window has room: cwnd".into(),
        });
    }
    Ok(flow)
}

/// The TUN MTU of the lab's daemons when the scenario gives none (`tunnel.mtu_bytes = "off"`):
/// the daemon's own default `interface.mtu`.
pub const DAEMON_MTU: u16 = braid_net::config::DEFAULT_MTU;

/// The scenario's `[tunnel]` as the daemons get it, and what of it they cannot follow. The
/// simulator's framing sizes (`header_bytes`, `tcp.frame_bytes`) and send-buffer cap
/// (`tcp.wmem_max_bytes`) are model quantities: the daemon frames with its real headers
/// (encryption included) and the kernel sizes its buffers, so they are reset to the defaults
/// the daemon accepts and named in the report's `not_emulated`. `mtu_bytes` becomes the TUN's
/// MTU; "off" runs the daemon's default, [`DAEMON_MTU`], and says so.
pub fn daemon_tunnel(s: &Scenario) -> (TunnelConfig, Vec<String>) {
    let (mut t, d) = (s.tunnel.clone(), TunnelConfig::default());
    let mut notes = Vec::new();
    if t.header_bytes != d.header_bytes {
        notes.push(format!(
            "tunnel.header_bytes = {}: the daemon's are its real headers",
            t.header_bytes
        ));
        t.header_bytes = d.header_bytes;
    }
    if t.tcp.frame_bytes != d.tcp.frame_bytes {
        notes.push(format!(
            "tunnel.tcp.frame_bytes = {}: the daemon frames with its real headers",
            t.tcp.frame_bytes
        ));
        t.tcp.frame_bytes = d.tcp.frame_bytes;
    }
    // The daemon's TUN MTU is its interface.mtu ([`start_tunnel`] sets it from here).
    if t.mtu_bytes.take().is_none() {
        notes.push(format!(
            "tunnel.mtu_bytes = off: the daemon's TUN has an MTU of {DAEMON_MTU} (TCP through it \
             uses an MSS of {})",
            u32::from(DAEMON_MTU) - braid_sim::tcp::TCP_IP_HEADER_BYTES
        ));
    }
    if t.tcp.wmem_max_bytes != d.tcp.wmem_max_bytes {
        notes.push(format!(
            "tunnel.tcp.wmem_max_bytes = {}: the kernel's tcp_wmem sets it",
            t.tcp.wmem_max_bytes
        ));
        t.tcp.wmem_max_bytes = d.tcp.wmem_max_bytes;
    }
    (t, notes)
}

/// Where Linux keeps Cubic's HyStart switch. It is a module parameter, one for the whole host,
/// so the lab reads it instead of changing it under other users.
const HYSTART_PARAM: &str = "/sys/module/tcp_cubic/parameters/hystart";

/// The kernel's Cubic must leave slow start the way the scenario says (`e2e.hystart`).
fn check_hystart(wanted: bool) -> Result<(), LabError> {
    let kernel = std::fs::read_to_string(HYSTART_PARAM).map(|v| v.trim() != "0");
    match kernel {
        Ok(on) if on == wanted => Ok(()),
        Ok(on) => Err(LabError::Unsupported {
            field: "e2e.hystart",
            value: wanted.to_string(),
            allowed: format!(
                "the kernel's Cubic has HyStart {}; write {} to {HYSTART_PARAM} (host-wide) or \
                 set e2e.hystart = {on}",
                if on { "on" } else { "off" },
                u8::from(wanted),
            ),
        }),
        Err(e) => Err(LabError::Unsupported {
            field: "e2e.hystart",
            value: wanted.to_string(),
            allowed: format!("cannot read {HYSTART_PARAM} to check it: {e}"),
        }),
    }
}

/// Runs scenario `s` as `opts` says; `cancel` (e.g. set on SIGINT, module documentation)
/// aborts it.
pub fn run(s: &Scenario, opts: &LabOptions, cancel: &AtomicBool) -> Result<LabOutput, LabError> {
    let started = Instant::now();
    let flow = check_scenario(s)?;
    let baseline = if opts.with_baseline {
        Some(run_once(s, flow, LabMode::Baseline, opts, cancel)?.0)
    } else {
        None
    };
    let (transfer, mut report, tunnel_trace) = run_once(s, flow, opts.mode, opts, cancel)?;
    if let Some(b) = &baseline {
        report.set_baseline(b.receiver().dlct_s);
    }
    report.wall_s = started.elapsed().as_secs_f64();
    Ok(LabOutput { report, transfer, baseline, tunnel_trace })
}

fn check_cancel(cancel: &AtomicBool) -> Result<(), LabError> {
    if cancel.load(Ordering::Relaxed) {
        return Err(LabError::Interrupted);
    }
    Ok(())
}

/// One topology, one transfer, one report; the topology is gone when this returns.
fn run_once(
    s: &Scenario,
    flow: Flow,
    mode: LabMode,
    opts: &LabOptions,
    cancel: &AtomicBool,
) -> Result<(Transfer, LabReport, Vec<tunnel_side::PathTraceRow>), LabError> {
    let topo_opts = TopologyOptions {
        prefix: crate::netns::unique_prefix(&opts.tag),
        emulator: opts.emulator.clone(),
    };
    let mut topo = Topology::build(s, &topo_opts)?;
    check_cancel(cancel)?;
    let (ue_addr, tunnel) = match mode {
        LabMode::Baseline => (topo.route_single_path(1)?, None),
        LabMode::Tunnel => {
            let pair = start_tunnel(&topo, s, &opts.braid_exe)?;
            (pair.spec().client_addr, Some(pair))
        }
    };
    check_cancel(cancel)?;
    let ue = (ue_addr, TRANSFER_PORT).into();
    let mut plan = FlowPlan::new(s, flow, ue);
    let cut_path = match (&opts.cut, &tunnel) {
        (None, _) => None,
        (Some(c), Some(_)) => {
            let k = s.paths.iter().position(|p| p.name == c.path).ok_or_else(|| {
                let names: Vec<&str> = s.paths.iter().map(|p| p.name.as_str()).collect();
                LabError::Cut(format!("no path {:?} (paths: {})", c.path, names.join(", ")))
            })?;
            plan.set_receiver_bin(cut::CUT_BIN);
            Some((k, c))
        }
        (Some(_), None) => {
            return Err(LabError::Cut("a cut needs --mode tunnel (a baseline has one path)".into()))
        }
    };
    let (server_ns, ue_ns) = (topo.server().name(), topo.ue().name());
    let transfer = || plan.run(server_ns, ue_ns, cancel);
    let mut cut_outcome = None;
    let (transfer, observation) = match &tunnel {
        None => (transfer()?, None),
        Some(pair) => {
            let finished = AtomicBool::new(false);
            let started = Instant::now();
            let (t, observation) = std::thread::scope(|sc| {
                let cutter = cut_path.map(|(k, c)| {
                    let (target, finished) = (cut::CutTarget::new(&topo, k), &finished);
                    sc.spawn(move || cut::run_cut(&target, c, started, finished))
                });
                let out = tunnel_side::observe(pair, transfer);
                finished.store(true, Ordering::Relaxed);
                cut_outcome = cutter.map(|h| h.join().expect("the cut thread does not panic"));
                out
            });
            let t = t.map_err(|e| match LabError::from(e) {
                LabError::Transfer(source) => {
                    LabError::TunnelTransfer { source: Box::new(source), daemons: pair.describe() }
                }
                other => other,
            })?;
            (t, Some(observation?))
        }
    };
    // linkem writes its queues' counters when it stops; the transfer is over.
    topo.stop_emulators();
    let mut report = summarise(s, mode, &topo, &transfer)?;
    if let Some(observation) = &observation {
        observation.fill(&mut report);
    }
    if let (Some((_, c)), Some(outcome)) = (cut_path, cut_outcome) {
        let (declared_down, rejoin_ms) = outcome?;
        report.cut = Some(cut::CutReport {
            path: c.path.clone(),
            from_s: c.from_s,
            to_s: c.to_s,
            failover_gap_ms: cut::failover_gap_ms(transfer.receiver(), c.from_s),
            rejoin_ms,
            declared_down,
        });
    }
    Ok((transfer, report, observation.map(|o| o.trace).unwrap_or_default()))
}

/// The sender's and receiver's settings of one run's flow, for its kind only.
enum FlowPlan {
    Tcp(SenderConfig, ReceiverConfig),
    Udp(UdpSenderConfig, UdpReceiverConfig),
}

impl FlowPlan {
    fn new(s: &Scenario, flow: Flow, ue: SocketAddr) -> Self {
        match flow {
            Flow::Tcp(cc) => {
                let (send, recv) = transfer_configs(s, cc, ue);
                FlowPlan::Tcp(send, recv)
            }
            Flow::Udp => {
                let (send, recv) = udp_configs(s, ue);
                FlowPlan::Udp(send, recv)
            }
        }
    }

    /// The receiver's goodput bin (a cut needs finer ones).
    fn set_receiver_bin(&mut self, bin: Duration) {
        match self {
            FlowPlan::Tcp(_, recv) => recv.bin = bin,
            FlowPlan::Udp(_, recv) => recv.bin = bin,
        }
    }

    fn run(
        &self,
        server_ns: &str,
        ue_ns: &str,
        cancel: &AtomicBool,
    ) -> Result<Transfer, TransferError> {
        Ok(match self {
            FlowPlan::Tcp(send, recv) => {
                Transfer::Tcp(run_pair(server_ns, ue_ns, send, recv, cancel)?)
            }
            FlowPlan::Udp(send, recv) => {
                Transfer::Udp(udp::run_pair(server_ns, ue_ns, send, recv, cancel)?)
            }
        })
    }
}

/// Starts the tunnel on proxy (server) and UE (client) over every path, and routes the UE's
/// traffic into it (the server already routes everything to the proxy, which owns the tunnel
/// subnet on its TUN device).
pub fn start_tunnel(
    topo: &Topology,
    s: &Scenario,
    braid_exe: &Path,
) -> Result<TunnelPair, LabError> {
    let ends = topo.paths().iter().map(|l| (l.upstream.clone(), l.downstream.clone())).collect();
    let mut spec = TunnelSpec::new(topo.proxy().name(), topo.ue().name(), ends);
    spec.costs = s.paths.iter().map(|p| p.cost).collect();
    spec.tunnel = daemon_tunnel(s).0;
    // Validated to a whole number in 576..=9000, as the daemon's interface.mtu.
    spec.mtu = s.tunnel.mtu_bytes.map_or(DAEMON_MTU, |m| m as u16);
    let pair = TunnelPair::start(&spec, braid_exe, TUNNEL_READY_TIMEOUT)?;
    topo.ue().ip(&["route", "replace", "default", "dev", crate::tunnel::CLIENT_IF])?;
    Ok(pair)
}

/// The sender's and receiver's settings for `s`'s download to `ue`.
pub fn transfer_configs(
    s: &Scenario,
    cc: KernelCc,
    ue: SocketAddr,
) -> (SenderConfig, ReceiverConfig) {
    let path1_mbps = s.paths.first().map_or(1.0, |p| p.rate_mbps).max(0.1);
    let ideal_s = s.e2e.bytes as f64 * 8.0 / (path1_mbps * 1e6);
    let timeout = TIMEOUT_SLACK + Duration::from_secs_f64(ideal_s * TIMEOUT_FACTOR);
    let sample = Duration::from_secs_f64(s.sim.sample_interval_ms / 1e3).max(MIN_SAMPLE_INTERVAL);
    let send = SenderConfig {
        connect: ue,
        bytes: s.e2e.bytes,
        cc,
        seed: s.seed,
        sample_interval: sample,
        timeout,
        idle_timeout: IDLE_TIMEOUT,
    };
    let recv = ReceiverConfig {
        listen: ue,
        bin: Duration::from_secs_f64(s.sim.bin_ms / 1e3),
        timeout,
        idle_timeout: IDLE_TIMEOUT,
    };
    (send, recv)
}

/// The UDP flow's sender and receiver settings for `s` to `ue`: `e2e.bytes` of payload in
/// datagrams of `e2e.udp_packet_bytes` at `e2e.udp_rate_mbps` (the server link's rate when
/// unset), the time limits scaled to the sending time as the download's are.
pub fn udp_configs(s: &Scenario, ue: SocketAddr) -> (UdpSenderConfig, UdpReceiverConfig) {
    let rate_bps = s.udp_rate_mbps() * 1e6;
    let mut send = UdpSenderConfig {
        connect: ue,
        bytes: s.e2e.bytes,
        packet_bytes: s.e2e.udp_packet_bytes,
        rate_bps,
        seed: s.seed,
        timeout: TIMEOUT_SLACK,
    };
    let ideal_s = send.datagrams() as f64 * f64::from(send.packet_bytes) * 8.0 / rate_bps.max(1.0);
    send.timeout = TIMEOUT_SLACK + Duration::from_secs_f64(ideal_s * TIMEOUT_FACTOR);
    let recv = UdpReceiverConfig {
        listen: ue,
        bin: Duration::from_secs_f64(s.sim.bin_ms / 1e3),
        timeout: send.timeout + UDP_QUIET,
        quiet: UDP_QUIET,
    };
    (send, recv)
}

/// Every link direction's send lateness the emulator reported (linkem), server link first
/// (`counters` in the topology's link order).
fn send_lateness(topo: &Topology, counters: &[Option<LinkCounters>]) -> Vec<report::LinkLateness> {
    let links = std::iter::once(topo.server_link()).chain(topo.paths());
    let names = links.map(|l| l.shape.name.as_str());
    let mut out = Vec::new();
    for (name, c) in names.zip(counters) {
        let Some(c) = c else { continue };
        for (direction, q) in [("down", &c.down), ("up", &c.up)] {
            if let Some(lateness) = q.lateness {
                out.push(report::LinkLateness {
                    link: name.to_string(),
                    direction: direction.to_string(),
                    lateness,
                });
            }
        }
    }
    out
}

/// The report of one run, from the transfer and the queues' counters.
fn summarise(
    s: &Scenario,
    mode: LabMode,
    topo: &Topology,
    transfer: &Transfer,
) -> Result<LabReport, LabError> {
    let receiver = transfer.receiver();
    let dlct_s = receiver.dlct_s;
    let counters: Vec<Option<LinkCounters>> =
        (0..=s.paths.len()).map(|k| topo.counters(k)).collect::<Result<_, _>>()?;
    let used_paths = match mode {
        LabMode::Baseline => 1,
        LabMode::Tunnel => s.paths.len(),
    };
    let paths = (0..used_paths)
        .map(|i| {
            let c = counters[i + 1];
            let (bytes, share) = match mode {
                // Routing puts every E2E byte on path 1.
                LabMode::Baseline => (Some(receiver.bytes), Some(1.0)),
                // From the daemons' counters ([`tunnel_side`]).
                LabMode::Tunnel => (None, None),
            };
            LabPathReport {
                name: s.paths[i].name.clone(),
                bytes,
                share,
                mean_mbps: c
                    .map(|c| c.down.bytes as f64 * 8.0 / dlct_s.max(f64::MIN_POSITIVE) / 1e6),
                drops: c.map(|c| c.down.drops),
                packets_sent: c.map(|c| c.down.packets),
                ..Default::default()
            }
        })
        .collect();
    let per_path = |f: fn(&LinkCounters) -> u64| -> Option<Vec<u64>> {
        counters[1..=used_paths].iter().map(|c| c.as_ref().map(f)).collect()
    };
    let drops = LabDrops {
        bottleneck: per_path(|c| c.down.drops),
        bottleneck_aqm: per_path(|c| c.down.aqm_drops),
        uplink: per_path(|c| c.up.drops),
        server_link: counters[0].map(|c| c.down.drops + c.up.drops),
        ..Default::default()
    };
    let (e2e, cc_effective) = match transfer {
        Transfer::Tcp(t) => {
            let last = t.sender.final_info();
            let e2e = LabE2eReport {
                kind: "tcp".into(),
                cc: s.e2e.cc.as_str().into(),
                bytes_delivered: receiver.bytes,
                retransmissions: last.map(|i| i.total_retrans as u64),
                rto_count: last.and_then(|i| i.total_rto).map(u64::from),
                srtt_ms_mean: t.sender.srtt_ms_mean(),
                ..Default::default()
            };
            (e2e, t.sender.cc_effective.clone())
        }
        Transfer::Udp(u) => {
            let e2e = LabE2eReport {
                kind: "udp".into(),
                cc: s.e2e.cc.as_str().into(),
                bytes_delivered: receiver.bytes,
                datagrams_sent: Some(u.sender.datagrams),
                datagrams_lost: Some(u.lost()),
                ..Default::default()
            };
            (e2e, "none (UDP)".into())
        }
    };
    let lab = LabInfo {
        mode: mode.as_str().into(),
        emulator: match topo.emulator() {
            Emulator::Htb => "htb".into(),
            Emulator::Linkem { .. } => "linkem".into(),
        },
        not_emulated: {
            let mut notes = topo.not_emulated();
            if mode == LabMode::Tunnel {
                notes.extend(daemon_tunnel(s).1);
            }
            notes
        },
        cc_effective,
        goodput_series_mbps: receiver.goodput_series_mbps(),
        send_lateness: send_lateness(topo, &counters),
    };
    Ok(LabReport {
        dlct_s,
        goodput_mbps: receiver.goodput_mbps,
        paths,
        drops,
        e2e,
        lab,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_the_lab_cannot_run_are_refused_naming_the_field() {
        let mut s = Scenario::default();
        assert_eq!(check_scenario(&s).unwrap(), Flow::Tcp(KernelCc::Cubic));
        s.e2e.cc = braid_core::cc::CcAlgorithm::Bbr3;
        assert!(matches!(check_scenario(&s), Err(LabError::Unsupported { field: "e2e.cc", .. })));
        let mut s = Scenario::default();
        s.e2e.kind = E2eKind::Udp;
        s.e2e.udp_packet_bytes = 1500;
        let err = check_scenario(&s).unwrap_err();
        assert!(matches!(err, LabError::Unsupported { field: "e2e.udp_packet_bytes", .. }));
        assert!(err.to_string().contains("61..=1400"), "{err}");
        s.e2e.udp_packet_bytes = 1400;
        assert_eq!(check_scenario(&s).unwrap(), Flow::Udp);
        // A UDP flow has no congestion control: the TCP download's checks do not apply.
        s.e2e.cc = braid_core::cc::CcAlgorithm::Bbr3;
        assert_eq!(check_scenario(&s).unwrap(), Flow::Udp);
    }

    #[test]
    fn transfer_limits_scale_with_the_ideal_duration() {
        let mut s = Scenario::default();
        s.e2e.bytes = 50_000_000;
        let (send, recv) = transfer_configs(&s, KernelCc::Bbr, "10.91.0.2:5201".parse().unwrap());
        // 50 MB at 50 Mbit/s is 8 s ideally: 60 s + 20 * 8 s = 220 s.
        assert_eq!(send.timeout, Duration::from_secs(220));
        assert_eq!(recv.bin, Duration::from_millis(100));
        assert_eq!(send.sample_interval, Duration::from_millis(10));
        assert_eq!(send.seed, s.seed);
    }

    #[test]
    fn a_udp_flow_offers_the_scenarios_bytes_at_its_rate() {
        let mut s = Scenario::default();
        (s.e2e.bytes, s.e2e.udp_packet_bytes, s.e2e.udp_rate_mbps) = (1_372_000, 1400, Some(8.0));
        let (send, recv) = udp_configs(&s, "10.91.0.2:5201".parse().unwrap());
        assert_eq!((send.datagrams(), send.rate_bps), (1000, 8e6));
        // 1000 packets of 1400 bytes at 8 Mbit/s: 1.4 s; 60 s + 20 * 1.4 s.
        assert_eq!(send.timeout, Duration::from_secs(88));
        assert_eq!(recv.timeout, send.timeout + UDP_QUIET);
        s.e2e.udp_rate_mbps = None;
        assert_eq!(udp_configs(&s, recv.listen).0.rate_bps, s.server_link.rate_mbps * 1e6);
    }

    #[test]
    fn the_daemons_get_their_own_framing_and_the_report_says_so() {
        let mut s = Scenario::default();
        s.tunnel.transport = Transport::Tcp;
        s.tunnel.tcp.frame_bytes = 66;
        s.tunnel.mtu_bytes = Some(1400.0);
        let (t, notes) = daemon_tunnel(&s);
        assert_eq!(t.tcp.frame_bytes, TunnelConfig::default().tcp.frame_bytes);
        assert_eq!(t.transport, Transport::Tcp, "what the daemons can do is kept");
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("tunnel.tcp.frame_bytes = 66"), "{notes:?}");
        // A scenario without a tunnel MTU runs the daemon's, and the report says so; with one,
        // it is the TUN's MTU, not a [tunnel] key the daemon would refuse.
        let off = daemon_tunnel(&Scenario::default()).1;
        assert_eq!(off, ["tunnel.mtu_bytes = off: the daemon's TUN has an MTU of 1400 (TCP through it uses an MSS of 1348)"]);
        let mut with_mtu = Scenario::default();
        with_mtu.tunnel.mtu_bytes = Some(1400.0);
        let (t, notes) = daemon_tunnel(&with_mtu);
        assert_eq!((t.mtu_bytes, notes.len()), (None, 0));
        // The send-buffer writer is OpenVPN's, not the daemon's.
        s.tunnel.cc = braid_core::cc::TunnelCc::Bbr;
        s.tunnel.tcp.writer = TcpWriter::Sndbuf;
        let err = check_scenario(&s).unwrap_err();
        assert!(matches!(err, LabError::Unsupported { field: "tunnel.tcp.writer", .. }), "{err}");
    }

    #[test]
    fn a_stopped_transfer_is_an_interrupt() {
        assert!(matches!(LabError::from(TransferError::Stopped), LabError::Interrupted));
    }
}
