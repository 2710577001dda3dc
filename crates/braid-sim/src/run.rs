//! Running a scenario: scenario to world, world to report, and the checks every run must pass.

use std::time::{Duration, Instant as WallInstant};

use braid_config::Transport;
use braid_core::cc::{CcAlgorithm, TunnelCc};
use braid_core::linkmodel::CoDelConfig;
use braid_core::tunnel::TunnelConfig;
use braid_core::wire::overhead;
use braid_core::Instant;

use crate::link::{Aqm, Capacity, LinkSpec, LinkSpecError};
use crate::metrics::{Drops, E2eReport, PathReport, ReorderReport, Report, Series, TunnelReport};
use crate::noise::{self, Jitter, Stalls};
use crate::scenario::{
    ms, AqmChoice, E2eKind, LossChoice, PathConfig, Scenario, ScenarioError, TraceFile, Wire,
};
use crate::tcp::{LinuxCc, TcpConfig, TCP_IP_HEADER_BYTES};
use crate::tcp_tunnel::TcpPathsConfig;
use crate::topology::{AppConfig, Outcome, World, WorldConfig, WorldNoise};

/// IPv4 + UDP header of a greedy UDP datagram.
const UDP_IP_HEADER_BYTES: u32 = 28;
/// The IP MTU of the paths. CoDel's MTU (its one-packet backlog allowance) is this plus the
/// link-layer framing, as Linux's `codel` takes the device MTU plus its hard header
/// (`psched_mtu`).
const PATH_MTU_BYTES: u32 = 1500;

/// Why a run produced no report.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    #[error(
        "the transfer did not complete within sim.max_time_s = {max_time_s} s \
         ({delivered} of {total} bytes delivered); raise sim.max_time_s or check the scenario"
    )]
    Incomplete { max_time_s: f64, delivered: u64, total: u64 },
    #[error(
        "accounting invariant violated on the {direction}: {entered} packets entered the tunnel and \
         {copies} copies were made, but {delivered} were delivered, {sched_drops} dropped at the scheduler, {link_drops} dropped \
         on links, {reorder_drops} dropped at the reorder buffer and {in_flight} are in flight"
    )]
    Accounting {
        direction: &'static str,
        entered: u64,
        copies: u64,
        delivered: u64,
        sched_drops: u64,
        link_drops: u64,
        reorder_drops: u64,
        in_flight: u64,
    },
    #[error("invalid tunnel configuration: {0}")]
    Tunnel(#[from] braid_core::tunnel::TunnelConfigError),
    #[error("invalid link {link}: {source}")]
    Link { link: String, source: LinkSpecError },
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
}

/// The report and time series of one run.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub report: Report,
    pub series: Series,
}

fn mbps_to_bytes_per_s(mbps: f64) -> u64 {
    (mbps * 1e6 / 8.0).round() as u64
}

fn half_rtt_ns(rtt_ms: f64) -> u64 {
    (rtt_ms * 1e6 / 2.0).round() as u64
}

/// One direction of a path as its scenario fields describe it.
struct Direction<'a> {
    rate_mbps: f64,
    trace: Option<&'a TraceFile>,
    trace_field: String,
    buffer_pkts: u32,
    aqm: AqmChoice,
    loss: LossChoice,
}

fn path_link(p: &PathConfig, d: Direction<'_>, framing: u32) -> Result<LinkSpec, SimError> {
    let capacity = match d.trace {
        None => Capacity::Rate { bytes_per_s: mbps_to_bytes_per_s(d.rate_mbps) },
        Some(trace) => Capacity::Trace(trace.get(&d.trace_field)?),
    };
    let aqm = match d.aqm {
        AqmChoice::DropTail => Aqm::DropTail,
        AqmChoice::CoDel => Aqm::CoDel(CoDelConfig {
            target: ms(p.codel_target_ms),
            interval: ms(p.codel_interval_ms),
            mtu_bytes: PATH_MTU_BYTES + framing,
        }),
    };
    Ok(LinkSpec {
        capacity,
        delay_ns: half_rtt_ns(p.rtt_ms),
        buffer_pkts: d.buffer_pkts as usize,
        framing_bytes: framing,
        aqm,
        loss: d.loss.to_config(),
    })
}

/// The end-to-end TCP's MSS: through a tunnel with an interface MTU (`tunnel.mtu_bytes`) that
/// MTU less IPv4 and TCP with timestamps, when smaller than `e2e.mss_bytes`, as Linux takes a
/// connection's MSS from its route's MTU (the lab's TUN has 1 400: MSS 1 348); the baseline
/// (no tunnel) and a tunnel without an MTU keep `e2e.mss_bytes`.
pub fn e2e_mss_bytes(s: &Scenario, baseline: bool) -> u32 {
    match s.tunnel.mtu_bytes {
        Some(mtu) if !baseline => s.e2e.mss_bytes.min(mtu as u32 - TCP_IP_HEADER_BYTES),
        _ => s.e2e.mss_bytes,
    }
}

/// The tunnel configuration a scenario describes. Over the daemon's wire (`sim.wire =
/// "daemon"`, UDP paths) as the daemon configures its core (braid-net `config.rs`,
/// `core_config`): each packet charged its compact message's 48 bytes, the MSS the largest
/// inner packet plus those, compact messages marked within their sequence reach, and time-sync
/// frames asked for as often as the receiver needs them.
pub fn tunnel_config(s: &Scenario) -> TunnelConfig {
    let largest_inner = match s.e2e.kind {
        E2eKind::Tcp => e2e_mss_bytes(s, false) + TCP_IP_HEADER_BYTES,
        E2eKind::Udp => s.e2e.udp_packet_bytes,
    };
    let costs: Vec<u32> = s.paths.iter().map(|p| p.cost).collect();
    if !daemon_datagrams(s) {
        return s.tunnel.to_core(&costs, largest_inner);
    }
    let tunnel = braid_config::TunnelConfig {
        header_bytes: overhead::COMPACT_DATA_OVERHEAD,
        ..s.tunnel.clone()
    };
    let mut core = tunnel.to_core(&costs, largest_inner);
    core.use_compact_messages();
    core
}

/// Whether the tunnel's paths carry the daemon's datagrams: `sim.wire = "daemon"` over UDP
/// paths (kernel TCP paths frame packets in their streams, `tunnel.tcp.frame_bytes`).
fn daemon_datagrams(s: &Scenario) -> bool {
    s.sim.wire == Wire::Daemon && s.tunnel.transport == Transport::Udp
}

/// The world a scenario describes; `baseline` drops the tunnel and keeps path 1 only. Fails
/// only if a trace file the scenario names was not loaded and cannot be read now.
pub fn world_config(s: &Scenario, baseline: bool) -> Result<WorldConfig, SimError> {
    let framing = s.sim.framing_bytes;
    let sl = &s.server_link;
    let tcp = TcpConfig {
        mss_bytes: s.e2e.mss_bytes,
        initial_window_pkts: s.e2e.initial_window_pkts,
        rwnd_bytes: s.e2e.rwnd_bytes,
        min_rto: ms(s.e2e.min_rto_ms),
        delayed_ack: s.e2e.delayed_ack,
        delack_segments: s.e2e.delack_segments,
        delack_timeout: ms(s.e2e.delack_timeout_ms),
        total_bytes: s.e2e.bytes,
        dsack: s.e2e.dsack,
        linux_rto: s.e2e.linux_rto,
        linux_undo: s.e2e.linux_undo,
    };
    let linux_cc = |cc| LinuxCc {
        cc,
        hystart: s.e2e.hystart,
        cubic_undo: s.e2e.cubic_undo,
        bbr2: s.e2e.bbr2.to_core(),
        prr: s.e2e.prr,
    };
    // Kernel TCP paths are the simulator's Linux TCP with the end-to-end settings, running
    // the kernel's controller for tunnel.cc (validation allows only newreno, cubic and bbr).
    let tcp_paths = (!baseline && s.tunnel.transport == Transport::Tcp).then(|| TcpPathsConfig {
        tcp,
        cc: linux_cc(match s.tunnel.cc {
            TunnelCc::NewReno => CcAlgorithm::NewReno,
            TunnelCc::Cubic => CcAlgorithm::Cubic,
            _ => CcAlgorithm::Bbr,
        }),
        writer: s.tunnel.tcp.writer,
        wmem_max_bytes: s.tunnel.tcp.wmem_max_bytes,
    });
    let app = match s.e2e.kind {
        E2eKind::Tcp => AppConfig::Tcp {
            tcp: TcpConfig { mss_bytes: e2e_mss_bytes(s, baseline), ..tcp },
            cc: linux_cc(s.e2e.cc),
        },
        E2eKind::Udp => AppConfig::Udp {
            packet_bytes: s.e2e.udp_packet_bytes,
            rate_bytes_per_s: mbps_to_bytes_per_s(s.udp_rate_mbps()),
            // The budget counts payload; each datagram carries packet_bytes - 28 of it.
            total_bytes: s
                .e2e
                .bytes
                .div_ceil((s.e2e.udp_packet_bytes - UDP_IP_HEADER_BYTES) as u64)
                * s.e2e.udp_packet_bytes as u64,
        },
    };
    let server_link = LinkSpec::constant_rate(
        mbps_to_bytes_per_s(sl.rate_mbps),
        half_rtt_ns(sl.rtt_ms),
        sl.buffer_pkts as usize,
        framing,
    );
    let mut paths = Vec::with_capacity(s.paths.len());
    for (i, p) in s.paths.iter().enumerate() {
        let down = Direction {
            rate_mbps: p.rate_mbps,
            trace: p.trace.as_ref(),
            trace_field: format!("paths.{i}.trace"),
            buffer_pkts: p.buffer_pkts,
            aqm: p.aqm,
            loss: p.loss,
        };
        let up = Direction {
            rate_mbps: p.uplink_rate_mbps,
            trace: p.uplink_trace.as_ref(),
            trace_field: format!("paths.{i}.uplink_trace"),
            buffer_pkts: p.uplink_buffer_pkts,
            aqm: p.uplink_aqm,
            loss: p.uplink_loss,
        };
        paths.push((path_link(p, down, framing)?, path_link(p, up, framing)?));
    }
    Ok(WorldConfig {
        server_downlink: server_link.clone(),
        server_uplink: server_link,
        path_names: s.paths.iter().map(|p| p.name.clone()).collect(),
        paths,
        tunnel: (!baseline).then(|| tunnel_config(s)),
        app,
        seed: s.seed,
        max_time: Duration::from_secs_f64(s.sim.max_time_s),
        sample_interval: ms(s.sim.sample_interval_ms),
        bin: ms(s.sim.bin_ms),
        path_handshake: s.sim.path_handshake,
        daemon_wire: daemon_datagrams(s),
        noise: world_noise(s),
        tcp_paths,
    })
}

/// The noise model of a scenario in simulator units, its start offset drawn from the seed.
fn world_noise(s: &Scenario) -> WorldNoise {
    let n = &s.sim.noise;
    let us = |v: f64| Duration::from_secs_f64(v / 1e6);
    WorldNoise {
        host_jitter: (n.host_jitter_us > 0.0)
            .then(|| Jitter::new(us(n.host_jitter_us), us(n.host_jitter_max_us))),
        host_stalls: (n.host_stall_rate_per_s > 0.0).then(|| {
            Stalls::new(n.host_stall_rate_per_s, us(n.host_stall_mean_us), us(n.host_stall_max_us))
        }),
        start_offset: noise::start_offset(s.seed, ms(n.start_offset_ms)),
        cc_phase: n.cc_phase,
    }
}

/// Checks every link the world will build.
fn validate_links(cfg: &WorldConfig) -> Result<(), SimError> {
    let server = [("server downlink".to_string(), &cfg.server_downlink)];
    let server_up = [("server uplink".to_string(), &cfg.server_uplink)];
    let paths = cfg.paths.iter().zip(&cfg.path_names).flat_map(|((down, up), name)| {
        [(format!("{name} downlink"), down), (format!("{name} uplink"), up)]
    });
    for (link, spec) in server.into_iter().chain(server_up).chain(paths) {
        spec.validate().map_err(|source| SimError::Link { link, source })?;
    }
    Ok(())
}

/// Runs a scenario (with the tunnel, or the single-path baseline).
pub fn run(s: &Scenario, baseline: bool) -> Result<RunOutput, SimError> {
    // The server's BBRv2/v3 refuses an invalid configuration by panicking; a scenario edited
    // in code has not necessarily been validated.
    braid_config::validate_bbr2("e2e.bbr2", &s.e2e.bbr2).map_err(ScenarioError::from)?;
    let cfg = world_config(s, baseline)?;
    if let Some(t) = &cfg.tunnel {
        t.validate()?;
    }
    validate_links(&cfg)?;
    let wall = WallInstant::now();
    let out = World::new(&cfg).run();
    let wall_s = wall.elapsed().as_secs_f64();
    check_accounting(&out)?;
    let total = match s.e2e.kind {
        E2eKind::Tcp => s.e2e.bytes,
        E2eKind::Udp => 0,
    };
    let Some(done_at) = out.done_at else {
        return Err(SimError::Incomplete {
            max_time_s: s.sim.max_time_s,
            delivered: out.app_bytes,
            total,
        });
    };
    // From the transfer's start (docs/design.md section 5); the same `as_secs_f64` as without
    // a start offset, so a run without one reports the very same bits.
    let dlct = Instant::from_nanos(done_at.nanos_since(out.started_at));
    Ok(report(s, &cfg, out, dlct.as_secs_f64(), wall_s))
}

/// Runs the scenario and its baseline, and fills in `baseline_dlct_s` and `relative_dlct`.
pub fn run_with_baseline(s: &Scenario) -> Result<RunOutput, SimError> {
    let mut out = run(s, false)?;
    let base = run(s, true)?;
    out.report.baseline_dlct_s = Some(base.report.dlct_s);
    out.report.relative_dlct = Some(out.report.dlct_s / base.report.dlct_s);
    out.report.wall_s += base.report.wall_s;
    Ok(out)
}

/// Every packet that entered the tunnel was delivered, dropped in a named queue, or is still
/// in flight.
fn check_accounting(out: &Outcome) -> Result<(), SimError> {
    for (dir, name) in [(0, "downlink"), (1, "uplink")] {
        let a = out.account[dir];
        let accounted =
            a.delivered + a.sched_drops + a.link_drops + a.reorder_drops + out.in_flight[dir];
        if accounted != a.entered + a.copies {
            return Err(SimError::Accounting {
                direction: name,
                entered: a.entered,
                copies: a.copies,
                delivered: a.delivered,
                sched_drops: a.sched_drops,
                link_drops: a.link_drops,
                reorder_drops: a.reorder_drops,
                in_flight: out.in_flight[dir],
            });
        }
    }
    Ok(())
}

fn report(s: &Scenario, cfg: &WorldConfig, out: Outcome, dlct_s: f64, wall_s: f64) -> RunOutput {
    let total_path_bytes: u64 = out.path_bytes.iter().sum();
    let n = out.path_bytes.len();
    let start_s = out.started_at.as_secs_f64();
    let means = out.series.means(start_s, start_s + dlct_s);
    let paths = (0..n)
        .map(|i| {
            let srtt = out.path_srtt_ms[i].mean_max();
            let bottleneck = &out.path_downlink_stats[i];
            let queue_delay = bottleneck.queue_delay_ms();
            PathReport {
                name: cfg.path_names[i].clone(),
                bytes: out.path_bytes[i],
                share: if total_path_bytes > 0 {
                    out.path_bytes[i] as f64 / total_path_bytes as f64
                } else {
                    0.0
                },
                mean_mbps: out.path_frame_bytes[i] as f64 * 8.0 / dlct_s / 1e6,
                srtt_ms_mean: srtt.mean,
                srtt_ms_max: srtt.max,
                drops: out.path_drops[i],
                queue_delay_ms_mean: queue_delay.mean,
                queue_delay_ms_max: queue_delay.max,
                packets_sent: out.path_sent_pkts[i],
                packets_lost_detected: out.path_lost_pkts[i],
                cwnd_bytes_mean: means.path_cwnd_bytes.get(i).copied().unwrap_or(0.0),
                send_queue_bytes_mean: out
                    .path_send_queue_bytes
                    .as_ref()
                    .map(|q| q[i].mean_max().mean),
                owd: out.path_owd[i],
            }
        })
        .collect();
    let report = Report {
        dlct_s,
        goodput_mbps: out.app_bytes as f64 * 8.0 / dlct_s / 1e6,
        paths,
        drops: Drops {
            scheduler: out.account[0].sched_drops + out.account[1].sched_drops,
            bottleneck: out.path_drops.clone(),
            bottleneck_aqm: out.path_downlink_stats.iter().map(|l| l.aqm_drops).collect(),
            uplink: out.uplink_drops.clone(),
            server_link: out.server_link_drops,
            reorder: out.account[0].reorder_drops + out.account[1].reorder_drops,
        },
        protocol_delay_ms: out.protocol_delay_ms.mean_max(),
        hol_ms: out.hol_ms.mean_max(),
        e2e: E2eReport {
            kind: match s.e2e.kind {
                E2eKind::Tcp => "tcp".into(),
                E2eKind::Udp => "udp".into(),
            },
            cc: s.e2e.cc.as_str().into(),
            bytes_delivered: out.app_bytes,
            retransmissions: out.retransmissions,
            rto_count: out.rto_count,
            srtt_ms_mean: out.e2e_srtt_ms.mean_max().mean,
            cwnd_bytes_mean: means.e2e_cwnd_bytes,
        },
        reorder: ReorderReport {
            released_on_timeout: out.reorder.released_on_timeout,
            released_on_fast_loss: out.reorder.released_on_fast_loss,
            released_on_overflow: out.reorder.released_on_overflow,
            late: out.reorder.late,
            skipped_seqs: out.reorder.skipped_seqs,
            duplicates: out.reorder.duplicates,
            too_old: out.reorder.too_old,
            wait_limit_ms_mean: out.wait_limit_ms.mean_max().mean,
        },
        tunnel: TunnelReport {
            retransmissions: out.downlink_sender.retransmissions,
            expired: out.downlink_sender.expired,
            redundant_copies: out.downlink_sender.redundant_copies,
            acpf_fraction_mean: means.acpf_fraction,
        },
        events: out.events,
        simulated_packets: out.simulated_packets,
        wall_s,
        baseline_dlct_s: None,
        relative_dlct: None,
    };
    RunOutput { report, series: out.series }
}
