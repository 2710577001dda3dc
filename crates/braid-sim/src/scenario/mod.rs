//! Scenarios: everything one simulation run needs, as plain serde structs.
//!
//! [`Scenario::default()`] is the default configuration of Pieska et al. 2024 ("Performance
//! Impact of Nested Congestion Control on Transport-Layer Multipath Tunneling", Table 1) plus
//! the choices Table 1 leaves open, each documented on its field. `scenarios/default.toml`
//! writes every field out with the same values; a test keeps the two equal.
//!
//! # Loading
//! [`Scenario::load`] and [`Scenario::from_toml_str`] run one pipeline:
//! 1. parse the TOML and lay it over the defaults (a file may be partial: a missing field keeps
//!    its Table 1 value). A file's `paths` array **replaces** the default two paths entirely; a
//!    field missing from one of its `[[paths]]` entries takes [`PathConfig::default()`]
//!    (Table 1's path 1, WiFi), so entries should at least set their `name`;
//! 2. apply each `--set dotted.key=value` override in order ([`overrides`]);
//! 3. deserialize with `deny_unknown_fields`, reporting the full dotted key of any unknown field,
//!    wrong type or unknown algorithm name;
//! 4. join relative trace paths (`paths.N.trace`, `paths.N.uplink_trace`) to the scenario
//!    file's directory, when loading a file;
//! 5. [`Scenario::resolved`]: validate, apply the Table 2 scenario keys ([`keys`]) in their
//!    canonical order (RTT, placement, buffer, AQM), validate again, read the trace files.
//!
//! Keys are applied after overrides, so a key wins over an override of the fields it sets, and
//! placement keys split the E2E RTT `server_link.rtt_ms + paths.0.rtt_ms` as overridden.
//! [`Scenario::to_toml_string`] writes the resolved scenario with its keys; key application is
//! idempotent (placement arithmetic is done in integer nanoseconds), so the written file loads
//! back to an equal scenario.

mod de;
pub mod error;
pub mod keys;
pub mod linkmodel;
pub mod overrides;
mod validate;

use std::path::Path;

use braid_core::cc::cubic::CubicUndo;
use braid_core::cc::CcAlgorithm;
use serde::{Deserialize, Serialize};

/// The `[tunnel]` section is the tunnel's own schema, shared with the daemon (braid-config).
pub use braid_config::tuning;
pub(crate) use braid_config::tunnel::ms;
pub use braid_config::{AcpfTable, Bbr2Table, CountingChoice, TunnelConfig};
pub use error::ScenarioError;
pub use keys::ScenarioKey;
pub use linkmodel::{AqmChoice, LossChoice, TraceFile};

/// One simulation run: topology, tunnel, end-to-end traffic and simulator settings.
///
/// Server --(`server_link`)-- Proxy ==(`paths[0]`, `paths[1]`, ...)==> UE (Pieska et al. 2024,
/// Figure 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Scenario {
    /// Table 2 scenario keys, e.g. `["SHORT", "NEAR"]`. A file may also write `"SHORT+NEAR"`.
    /// After resolution the list holds the canonical names in application order.
    #[serde(deserialize_with = "de::keys")]
    pub keys: Vec<String>,
    /// Seed of every random choice in the run (loss draws, tie-breaking jitter).
    pub seed: u64,
    /// Link between the server and the tunnel proxy (not a bottleneck).
    pub server_link: LinkConfig,
    /// Tunnel paths from the proxy to the UE, in order; path 1 of the paper is `paths[0]`.
    pub paths: Vec<PathConfig>,
    /// The tunnel: scheduler, per-path congestion control and receiver reordering
    /// ([`TunnelConfig`], the same section the daemon reads).
    pub tunnel: TunnelConfig,
    pub e2e: E2eConfig,
    pub sim: SimConfig,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            keys: Vec::new(),
            seed: 1,
            server_link: LinkConfig::default(),
            paths: vec![PathConfig::default(), PathConfig::cellular()],
            tunnel: TunnelConfig::default(),
            e2e: E2eConfig::default(),
            sim: SimConfig::default(),
        }
    }
}

/// The server link: a propagation delay and a rate well above the paths'.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LinkConfig {
    /// Round-trip propagation delay, ms. Table 1: server link RTT 20 ms.
    pub rtt_ms: f64,
    /// Rate in both directions, Mbit/s. Table 1 gives none; the paper's Mininet server link is
    /// not a bottleneck, so we use 1000 Mbit/s (10x the two paths together).
    pub rate_mbps: f64,
    /// FIFO buffer in each direction, packets. Our choice: large enough never to drop at
    /// 1000 Mbit/s behind 100 Mbit/s of paths.
    pub buffer_pkts: u32,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig { rtt_ms: 20.0, rate_mbps: 1000.0, buffer_pkts: 1000 }
    }
}

/// One tunnel path between the proxy and the UE. The downlink (proxy to UE) has the bottleneck
/// buffer of the access point or cell tower; the uplink carries feedback and E2E ACKs. Each
/// direction has a queue discipline, random loss and a capacity (a rate, or a Mahimahi trace);
/// see [`linkmodel`] for how they are written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PathConfig {
    /// Unique name, used in traces ("wifi", "cellular").
    pub name: String,
    /// Round-trip propagation delay, ms. Table 1: path 1 20 ms, path 2 40 ms.
    pub rtt_ms: f64,
    /// Downlink bottleneck rate, Mbit/s. Table 1: 50 Mbps. Unused when `trace` is set.
    pub rate_mbps: f64,
    /// Downlink bottleneck FIFO, packets. Table 1: MAC buffer 500 pkt (the BDP at 100 ms).
    pub buffer_pkts: u32,
    /// Scheduler cost; CPF prefers the lowest (Pieska et al. 2024, section 2.3: WiFi before
    /// cellular).
    pub cost: u32,
    /// Uplink rate, Mbit/s. Table 1 gives one bandwidth per path; we use it in both directions.
    /// Unused when `uplink_trace` is set.
    pub uplink_rate_mbps: f64,
    /// Uplink FIFO, packets; same as the downlink buffer.
    pub uplink_buffer_pkts: u32,
    /// Random loss at the downlink bottleneck, on entry. Table 1: drop rate 0%.
    pub loss: LossChoice,
    /// Downlink queue discipline. Table 1 has none (drop-tail); Table 2's CDL1 sets CoDel on
    /// every path.
    #[serde(deserialize_with = "de::named", serialize_with = "de::ser_named")]
    pub aqm: AqmChoice,
    /// CoDel TARGET for this path (either direction), ms. RFC 8289 section 4.4: 5 ms.
    pub codel_target_ms: f64,
    /// CoDel INTERVAL for this path (either direction), ms. RFC 8289 section 4.3: 100 ms.
    pub codel_interval_ms: f64,
    /// Mahimahi trace driving the downlink capacity instead of `rate_mbps`; a relative path is
    /// relative to the scenario file's directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceFile>,
    /// Random loss on the uplink. Our choice: none.
    pub uplink_loss: LossChoice,
    /// Uplink queue discipline. Our choice: drop-tail (CDL keys leave it alone).
    #[serde(deserialize_with = "de::named", serialize_with = "de::ser_named")]
    pub uplink_aqm: AqmChoice,
    /// Mahimahi trace driving the uplink capacity instead of `uplink_rate_mbps`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uplink_trace: Option<TraceFile>,
}

impl Default for PathConfig {
    /// Table 1's path 1 (WiFi).
    fn default() -> Self {
        PathConfig {
            name: "wifi".to_string(),
            rtt_ms: 20.0,
            rate_mbps: 50.0,
            buffer_pkts: 500,
            cost: 1,
            uplink_rate_mbps: 50.0,
            uplink_buffer_pkts: 500,
            loss: LossChoice::None,
            aqm: AqmChoice::DropTail,
            codel_target_ms: 5.0,
            codel_interval_ms: 100.0,
            trace: None,
            uplink_loss: LossChoice::None,
            uplink_aqm: AqmChoice::DropTail,
            uplink_trace: None,
        }
    }
}

impl PathConfig {
    /// Table 1's path 2 (cellular): as path 1 with a 40 ms RTT and a higher cost.
    pub fn cellular() -> Self {
        PathConfig { name: "cellular".to_string(), rtt_ms: 40.0, cost: 2, ..PathConfig::default() }
    }
}

/// The end-to-end traffic: a greedy TCP download or a constant-rate UDP flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct E2eConfig {
    /// Section 4: a greedy TCP download.
    #[serde(deserialize_with = "de::named", serialize_with = "de::ser_named")]
    pub kind: E2eKind,
    /// Server congestion control. Section 4 uses Cubic and BBR; we default to Cubic (Linux's).
    #[serde(deserialize_with = "de::named", serialize_with = "de::ser_named")]
    pub cc: CcAlgorithm,
    /// Cubic only: leave slow start by Linux's HyStart, as Linux servers do by default
    /// (`tcp_cubic` module parameter `hystart = 1`). `false` is RFC 9438's plain slow start.
    pub hystart: bool,
    /// Cubic only: what undoing a spurious recovery restores. `linux` (the default, what real
    /// servers do): as `tcp_cubic`, only cwnd and ssthresh, so the reduced W_max stays and ends
    /// the 5%-per-RTT floor that follows a HyStart exit. `rfc9438`: W_max and the curve as
    /// before the reduction (RFC 9438 section 4.9; the default until the lab matrix decided,
    /// docs/validation.md, "The nested-CC matrix, simulator against the lab").
    #[serde(deserialize_with = "de::named", serialize_with = "de::ser_named")]
    pub cubic_undo: CubicUndo,
    /// DSACK (RFC 2883) and RACK's reordering window widening on it (RFC 8985 section 6.2
    /// step 4), as Linux does by default (`tcp_dsack = 1`; the simulator's default too). `false`
    /// keeps the window at min_RTT / 4 (the default until the lab matrix decided).
    pub dsack: bool,
    /// Proportional Rate Reduction (RFC 6937) in fast recovery, as Linux reduces for Reno and
    /// Cubic (`tcp_cwnd_reduction`; BBR sets its own window): the window falls to `ssthresh`
    /// over the recovery in proportion to what is delivered instead of at once. Applies to the
    /// end-to-end TCP and to kernel TCP tunnel paths (`tunnel.transport = "tcp"`). `false`: the
    /// controller's reduced window at once (the model before the lab matrix decided; docs/
    /// validation.md, "The nested-CC matrix, simulator against the lab").
    pub prr: bool,
    /// Linux's retransmission timeout, `srtt + max(4 * rttvar, min_rto)`: Linux keeps the
    /// variance term at least `tcp_rto_min` (`tcp_rtt_estimator`), so its RTO stays 200 ms above
    /// the smoothed RTT. `false`: RFC 6298's `max(min_rto, srtt + 4 * rttvar)`, which falls to
    /// the smoothed RTT on a steady path. Applies to the end-to-end TCP and kernel TCP paths.
    pub linux_rto: bool,
    /// Linux's partial undo of a spurious fast recovery (`tcp_try_undo_partial`): once an ACK
    /// echoing an original's timestamp advances `snd_una` with no retransmission in flight, the
    /// recovery is undone and every lost mark cleared (`tcp_undo_cwnd_reduction` with
    /// `unmark_loss`), so segments a reordering made look lost are not all retransmitted.
    /// `false`: the model before (undo only once no segment is still marked lost). Applies to
    /// the end-to-end TCP and kernel TCP paths.
    pub linux_undo: bool,
    /// Bytes to transfer. Section 4: a 300 MB download.
    pub bytes: u64,
    /// TCP payload per segment, bytes (1500-byte MTU minus IPv4, TCP and timestamps).
    pub mss_bytes: u32,
    /// RFC 6928: 10 segments.
    pub initial_window_pkts: u32,
    /// Receive window, bytes. Linux's default `tcp_rmem` maximum is 6 MiB.
    pub rwnd_bytes: u64,
    /// RFC 6298 recommends 1 s; Linux uses 200 ms (`TCP_RTO_MIN`), as the paper's hosts did.
    pub min_rto_ms: f64,
    /// RFC 1122 / RFC 5681 section 4.2 delayed ACKs.
    pub delayed_ack: bool,
    /// ACK at least every this many full segments (RFC 5681: 2).
    pub delack_segments: u32,
    /// Delayed-ACK timer, ms (Linux `TCP_DELACK_MIN`: 40 ms).
    pub delack_timeout_ms: f64,
    /// UDP sending rate, Mbit/s; unset means the server link rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub udp_rate_mbps: Option<f64>,
    /// UDP datagram size on the wire (IP packet), bytes.
    pub udp_packet_bytes: u32,
    /// BBRv2/v3 parameters of the server, read by `cc = "bbr2"` and `"bbr3"` ([`tuning`]).
    pub bbr2: Bbr2Table,
}

impl Default for E2eConfig {
    fn default() -> Self {
        E2eConfig {
            kind: E2eKind::Tcp,
            cc: CcAlgorithm::Cubic,
            hystart: true,
            cubic_undo: CubicUndo::Linux,
            dsack: true,
            prr: true,
            linux_rto: true,
            linux_undo: true,
            bytes: 300_000_000,
            mss_bytes: 1448,
            initial_window_pkts: 10,
            rwnd_bytes: 6 * 1024 * 1024,
            min_rto_ms: 200.0,
            delayed_ack: true,
            delack_segments: 2,
            delack_timeout_ms: 40.0,
            udp_rate_mbps: None,
            udp_packet_bytes: 1500,
            bbr2: Bbr2Table::default(),
        }
    }
}

/// Simulator settings: run control and traces, and what the model assumes happened before the
/// transfer starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimConfig {
    /// Stop the run after this much simulated time, s, finished or not.
    pub max_time_s: f64,
    /// Interval of the cwnd / queue traces, ms.
    pub sample_interval_ms: f64,
    /// Bin width of the throughput series, ms.
    pub bin_ms: f64,
    /// Link-layer bytes counted on every link per packet: an Ethernet header (14), as htb counts
    /// 1514-byte frames on the emulation testbed (docs/design.md section 7).
    pub framing_bytes: u32,
    /// The tunnel's paths were set up before the transfer, each with a handshake that measured
    /// its RTT: every tunnel sender starts with one RTT sample per path (the idle path's
    /// propagation RTT plus a 44-byte handshake packet's transmission each way), so its srtt and
    /// min_rtt know every path before data flows, as a TCP or DCCP subflow's do after its
    /// handshake. Off (the default, as the tables in docs/validation.md were produced), a path's
    /// first RTT sample comes with its first data.
    pub path_handshake: bool,
    /// What the tunnel's datagrams are on the wire ([`Wire`]): `plain` (the default) or
    /// `daemon`, Braid's daemon's encrypted messages. Written out only when it is `daemon`, so
    /// a scenario without it writes and hashes as before it existed.
    #[serde(
        deserialize_with = "de::named",
        serialize_with = "de::ser_named",
        skip_serializing_if = "Wire::is_plain"
    )]
    pub wire: Wire,
    /// The noise model that makes repetitions differ ([`NoiseConfig`], docs/design.md
    /// section 10). Off by default; written out only when it differs from the default, so a
    /// scenario without it writes, hashes and runs exactly as before the model existed.
    #[serde(skip_serializing_if = "NoiseConfig::is_off")]
    pub noise: NoiseConfig,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            max_time_s: 3600.0,
            sample_interval_ms: 10.0,
            bin_ms: 100.0,
            framing_bytes: 14,
            path_handshake: false,
            wire: Wire::Plain,
            noise: NoiseConfig::default(),
        }
    }
}

/// `[sim.noise]`: what makes two runs of one scenario with different seeds differ, as two runs
/// in the lab do (docs/design.md section 10). Each part is off at its default (zero, `false`)
/// and draws from its own random stream derived from the scenario's `seed`, so turning one on
/// does not change the draws of another, and the same seed gives the same run bit for bit.
/// [`NoiseConfig::host`] is the model `braid sweep` turns on by default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NoiseConfig {
    /// Mean extra delay of every packet leaving a host (server, proxy, UE), us: per-packet
    /// processing and scheduling latency, exponentially distributed and cut at
    /// `host_jitter_max_us`. Each host keeps its packets in order: a packet leaves at
    /// max(the previous packet's departure, its own time + the draw). 0 (the default) is off.
    pub host_jitter_us: f64,
    /// Largest host delay, us: the exponential draw is cut here (a VM stall beyond it is not
    /// modelled). Read only while `host_jitter_us` is above 0.
    pub host_jitter_max_us: f64,
    /// Host stalls per second at each host (server, proxy, UE): a host stops handling packets
    /// for a while and then sends what arrived meanwhile in one burst ([`crate::noise::Stalls`]).
    /// 0 (the default) is off.
    pub host_stall_rate_per_s: f64,
    /// Mean length of a host stall, us (exponential, cut at `host_stall_max_us`). Read only
    /// while `host_stall_rate_per_s` is above 0.
    pub host_stall_mean_us: f64,
    /// Longest host stall, us.
    pub host_stall_max_us: f64,
    /// The transfer starts at a uniformly random time in [0, this) ms after the tunnel and
    /// the links start; the DLCT is counted from the transfer's start. It changes a run only
    /// through what runs on the absolute clock: a capacity trace's position, the trace and
    /// throughput-bin grid (docs/design.md section 10). 0 (the default) starts at once.
    pub start_offset_ms: f64,
    /// Seed every congestion controller (the tunnel's paths in both directions and the
    /// end-to-end TCP sender) from the scenario's seed, so BBR's ProbeBW start phase and
    /// BBRv2/v3's probe waits differ between seeds, as the kernel's `prandom` makes them.
    /// `false` (the default) keeps the fixed seeds: BBRv1 0 on every path, BBRv2/v3 the path
    /// index, 0 end to end.
    pub cc_phase: bool,
}

impl Default for NoiseConfig {
    /// Off: every run of a scenario is the same run, whatever its seed (unless it has random
    /// loss).
    fn default() -> Self {
        NoiseConfig {
            host_jitter_us: 0.0,
            host_jitter_max_us: 1000.0,
            host_stall_rate_per_s: 0.0,
            host_stall_mean_us: 1000.0,
            host_stall_max_us: 6000.0,
            start_offset_ms: 0.0,
            cc_phase: false,
        }
    }
}

impl NoiseConfig {
    /// The host noise model of docs/design.md section 10, which `braid sweep` turns on unless
    /// a spec says `noise = false`: 20 us mean host jitter cut at 1 ms (the spread of a veth
    /// round trip between two network namespaces on the test VMs, docs/validation.md
    /// "Repetitions: the noise model"), a start within the first second, seeded controllers.
    pub fn host() -> Self {
        NoiseConfig {
            host_jitter_us: 20.0,
            host_jitter_max_us: 1000.0,
            host_stall_rate_per_s: 0.0,
            host_stall_mean_us: 1000.0,
            host_stall_max_us: 6000.0,
            start_offset_ms: 1000.0,
            cc_phase: true,
        }
    }

    /// Whether this is the default (no noise at all).
    pub fn is_off(&self) -> bool {
        *self == NoiseConfig::default()
    }

    /// `--set` overrides that turn this model on over any scenario (the sweep's `noise`).
    pub fn overrides(&self) -> Vec<String> {
        vec![
            format!("sim.noise.host_jitter_us={:?}", self.host_jitter_us),
            format!("sim.noise.host_jitter_max_us={:?}", self.host_jitter_max_us),
            format!("sim.noise.host_stall_rate_per_s={:?}", self.host_stall_rate_per_s),
            format!("sim.noise.host_stall_mean_us={:?}", self.host_stall_mean_us),
            format!("sim.noise.host_stall_max_us={:?}", self.host_stall_max_us),
            format!("sim.noise.start_offset_ms={:?}", self.start_offset_ms),
            format!("sim.noise.cc_phase={}", self.cc_phase),
        ]
    }
}

braid_core::named_enum! {
    /// What the tunnel's datagrams are on the wire (`sim.wire`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub enum Wire {
        what = "tunnel wire";
        /// Every data packet costs `tunnel.header_bytes` (outer IPv4 and UDP and a data header
        /// with its send timestamp), a feedback frame 28 bytes of outer headers besides itself,
        /// and nothing else travels: the model of Pieska et al. 2024's tables.
        #[default]
        Plain => "plain",
        /// Braid's daemon's encrypted messages over UDP paths (braid-core `wire/overhead.rs`):
        /// a first transmission goes as a compact message (48 bytes besides the packet, no
        /// send timestamp), a retransmission or a packet beyond the compact sequence reach as
        /// a full one (92); feedback costs 60 bytes besides the frame; and a time-sync datagram
        /// (84 bytes) follows a compact packet on its path every millisecond when the receiver
        /// follows the delays (adaptive wait, delay equalisation), every 10 ms otherwise: the
        /// receiver's one-way delays for compact packets.
        /// Windows are charged 48 bytes a packet, as the daemon's are, so `tunnel.header_bytes`
        /// is not read. Over kernel TCP paths (`tunnel.transport = "tcp"`) it changes nothing:
        /// a frame's stream overhead is `tunnel.tcp.frame_bytes`.
        Daemon => "daemon",
    }
}

impl Wire {
    /// Whether this is the default, [`Wire::Plain`] (not written out).
    pub fn is_plain(&self) -> bool {
        *self == Wire::Plain
    }
}

braid_core::named_enum! {
    /// The end-to-end flow type (`e2e.kind`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum E2eKind {
        what = "e2e traffic kind";
        /// A greedy TCP download of `e2e.bytes`.
        Tcp => "tcp",
        /// A constant-rate UDP flow of `e2e.bytes` at `e2e.udp_rate_mbps`.
        Udp => "udp",
    }
}

impl Scenario {
    /// Loads a scenario file, applies `--set` overrides and resolves it (see the module docs).
    pub fn load(path: impl AsRef<Path>, overrides: &[String]) -> Result<Scenario, ScenarioError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ScenarioError::Io { path: path.to_path_buf(), message: e.to_string() })?;
        Self::from_toml_source(&text, Some(path), overrides)
    }

    /// Parses scenario TOML, applies `--set` overrides and resolves it (see the module docs).
    pub fn from_toml_str(text: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
        Self::from_toml_source(text, None, overrides)
    }

    fn from_toml_source(
        text: &str,
        file: Option<&Path>,
        overrides: &[String],
    ) -> Result<Scenario, ScenarioError> {
        let file_table: toml::Table =
            text.parse().map_err(|e: toml::de::Error| ScenarioError::Syntax {
                file: file.map(Path::to_path_buf),
                message: e.to_string().trim_end().to_string(),
            })?;
        let mut table = de::defaults_table()?;
        de::merge(&mut table, file_table);
        for spec in overrides {
            overrides::apply(&mut table, spec)?;
        }
        let mut scenario = de::scenario_from_table(table)?;
        if let Some(dir) = file.and_then(Path::parent) {
            scenario.rebase_traces(dir);
        }
        scenario.resolved()
    }

    /// Validates, applies the scenario keys, validates the result and reads the trace files it
    /// names. Use this after building or editing a scenario in code; the loaders call it.
    pub fn resolved(mut self) -> Result<Scenario, ScenarioError> {
        self.validate()?;
        keys::apply(&mut self)?;
        self.validate()?;
        self.load_traces()?;
        Ok(self)
    }

    /// Every trace file the paths name, with its dotted field.
    fn trace_files_mut(&mut self) -> impl Iterator<Item = (String, &mut TraceFile)> {
        self.paths.iter_mut().enumerate().flat_map(|(i, p)| {
            let down = p.trace.as_mut().map(|t| (format!("paths.{i}.trace"), t));
            let up = p.uplink_trace.as_mut().map(|t| (format!("paths.{i}.uplink_trace"), t));
            down.into_iter().chain(up)
        })
    }

    /// Joins relative trace paths to `dir` (the scenario file's directory).
    fn rebase_traces(&mut self, dir: &Path) {
        for (_, trace) in self.trace_files_mut() {
            trace.rebase(dir);
        }
    }

    fn load_traces(&mut self) -> Result<(), ScenarioError> {
        for (field, trace) in self.trace_files_mut() {
            trace.load(&field)?;
        }
        Ok(())
    }

    /// Checks every field against its allowed range; the error names the first offending field
    /// (dotted, e.g. `paths.1.rate_mbps`) and the range.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        validate::scenario(self)
    }

    /// The scenario as TOML, every field written out; loads back to an equal scenario.
    pub fn to_toml_string(&self) -> Result<String, ScenarioError> {
        toml::to_string(self).map_err(|e| ScenarioError::Serialize { message: e.to_string() })
    }

    /// E2E round-trip propagation delay over path 1, ms (Table 2's n).
    pub fn e2e_rtt_ms(&self) -> f64 {
        self.server_link.rtt_ms + self.paths.first().map_or(0.0, |p| p.rtt_ms)
    }

    /// The UDP sending rate, Mbit/s: `e2e.udp_rate_mbps`, or the server link rate when unset.
    pub fn udp_rate_mbps(&self) -> f64 {
        self.e2e.udp_rate_mbps.unwrap_or(self.server_link.rate_mbps)
    }
}

#[cfg(test)]
mod tests;
