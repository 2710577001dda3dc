//! Tunnel configuration, with the defaults of Table 1 of Pieska et al. 2024.

use std::time::Duration;

use crate::cc::{CcTuning, Counting, TunnelCc};
use crate::linkmodel::CoDelConfig;
use crate::path::rtt::DEFAULT_MIN_RTO;
use crate::reorder::ReorderConfig;
use crate::sched::{SchedulerConfig, SchedulerKind};

/// Outer IPv4 (20) + UDP (8) + Braid data header (32): what each tunnelled packet costs.
pub const DEFAULT_HEADER_BYTES: u32 = 20 + 8 + crate::wire::DATA_HEADER_LEN as u32;

/// Per-path packets a reliable receiver holds while it waits for a path-sequence gap to fill.
pub const DEFAULT_REASSEMBLY_PKTS: usize = 4096;

crate::named_enum! {
    /// What a tunnel path does about a lost packet (`tunnel.reliability`).
    ///
    /// Pieska et al. 2024 compare TCP tunnels (NewReno, BBR, BBRv2: reliable, in order per path) with DCCP
    /// tunnels (CCID2, CCID5: unreliable), and names retransmission with a deadline as future work
    /// (section 6). The behaviours are in `tunnel/sender.rs` and `tunnel/reassembly.rs`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Reliability {
        what = "tunnel reliability";
        /// DCCP-like: a loss is news for the congestion controller only.
        Unreliable => "unreliable",
        /// TCP-like: a lost packet is sent again on its path, with its path sequence number,
        /// and each path delivers in path order (per-path head-of-line blocking included).
        Reliable => "reliable",
        /// A lost packet is sent again on its path only while it can still reach the receiver
        /// before the receiver gives its gap up; paths do not deliver in order.
        Partial => "partial",
    }
}

impl Reliability {
    /// Whether the sender keeps a copy of each packet until it is acknowledged.
    pub fn retransmits(self) -> bool {
        self != Reliability::Unreliable
    }
}

/// Configuration of one tunnel direction.
#[derive(Clone, Debug, PartialEq)]
pub struct TunnelConfig {
    pub scheduler: SchedulerKind,
    /// Parameters of the schedulers that have any (ACPF, BLEST, ECF).
    pub sched: SchedulerConfig,
    pub cc: TunnelCc,
    /// Parameters of the congestion controls that have any (BBRv2/v3, wVegas, Coupled CUBIC);
    /// `cc` reads its part.
    pub cc_tuning: CcTuning,
    /// CPF cost per path; its length is the number of paths.
    pub path_costs: Vec<u32>,
    /// Scheduler queue capacity in packets (Table 1: 1500).
    pub sched_queue_pkts: usize,
    /// Active queue management on the scheduler queue: CoDel (RFC 8289) judging each packet's
    /// time in the queue when it leaves for a path. `None` (the default, Table 1) is plain
    /// drop-tail at `sched_queue_pkts`. See `tunnel/sched_queue.rs`.
    pub sched_codel: Option<CoDelConfig>,
    /// Bytes each tunnelled packet adds to the inner packet on the wire.
    pub header_bytes: u32,
    /// Largest wire packet (inner MTU + header); the window unit and packet-counting charge.
    pub mss_bytes: u64,
    pub initial_window_pkts: u64,
    /// Floor of the per-path retransmission timeout (RFC 6298 section 2.4; 200 ms as Linux).
    pub min_rto: Duration,
    /// RFC 9002 section 6.1.1 packet threshold: a packet is lost once this many later packets
    /// on its path were acknowledged.
    pub packet_threshold: u64,
    /// Receiver sends feedback at least every this many packets per path (DCCP Ack Ratio 2).
    pub feedback_every_pkts: u32,
    /// ... and no later than this after the first unacknowledged arrival.
    pub feedback_max_delay: Duration,
    pub reorder: ReorderConfig,
    pub reliability: Reliability,
    /// Per-path reassembly buffer of a reliable receiver, in packets.
    pub reassembly_pkts: usize,
    /// How far a path's pacing clock may lag behind `now` and be caught up with a burst. The
    /// simulator calls the sender exactly when a pacing slot falls due and keeps this at zero;
    /// a real event loop wakes up late (100-150 us on this VM) and, without credit for the
    /// lateness, would send one packet per wake-up. Linux gives TCP the same credit for "OS
    /// jitter" (`tcp_update_skb_after_send` in net/ipv4/tcp_output.c) and fq a quantum of
    /// burst (net/sched/sch_fq.c).
    pub pacing_catch_up: Duration,
    /// Path exclusion for delay asymmetry: a path whose minimum RTT exceeds the fastest
    /// path's by more than this gets no new packets (see [`super::TunnelSender`]). `None` (the
    /// default, as in Pieska et al. 2024) offers every path to the scheduler.
    pub max_rtt_spread: Option<Duration>,
    /// Window counting for every path; `None` takes [`TunnelCc::counting`] (packets for the
    /// DCCP names, bytes otherwise).
    pub counting: Option<Counting>,
    /// Compact data messages (the data plane's 4-byte header, which carries sequence numbers
    /// as their low bits): `Some(reach)` makes the sender mark each packet whose path and global
    /// sequence numbers the receiver is sure to expand exactly, i.e. within `reach` of every
    /// value the receiver may expect ([`super::Transmit::compact`]). `None` (the default, and
    /// the simulator's) marks none.
    pub compact_seq_reach: Option<u64>,
    /// With compact messages: the sender asks for a time-sync frame ([`crate::wire::TimeSync`])
    /// after a compact packet on a path when this long has passed since the path's last one,
    /// so the receiver keeps sampling one-way delays. `None`: never.
    pub owd_sample_interval: Option<Duration>,
    /// Seed of the paths' controllers' random draws ([`crate::cc::TunnelCc::build_seeded`]).
    /// `None` (the default) keeps the fixed seeds, so runs replay the tables of
    /// docs/validation.md; the simulator's noise model (docs/design.md section 10) passes a
    /// seed derived from the scenario's. The core draws no seed of its own.
    pub cc_seed: Option<u64>,
}

impl Default for TunnelConfig {
    fn default() -> Self {
        TunnelConfig {
            scheduler: SchedulerKind::Cpf,
            sched: SchedulerConfig::default(),
            cc: TunnelCc::Bbr,
            cc_tuning: CcTuning::default(),
            path_costs: vec![1, 2],
            sched_queue_pkts: 1500,
            sched_codel: None,
            header_bytes: DEFAULT_HEADER_BYTES,
            mss_bytes: 1500 + DEFAULT_HEADER_BYTES as u64,
            initial_window_pkts: 10,
            min_rto: DEFAULT_MIN_RTO,
            packet_threshold: 3,
            feedback_every_pkts: 2,
            feedback_max_delay: Duration::from_millis(1),
            reorder: ReorderConfig::default(),
            reliability: Reliability::Unreliable,
            reassembly_pkts: DEFAULT_REASSEMBLY_PKTS,
            pacing_catch_up: Duration::ZERO,
            max_rtt_spread: None,
            counting: None,
            compact_seq_reach: None,
            owd_sample_interval: None,
            cc_seed: None,
        }
    }
}

/// A tunnel configuration value out of range.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field}: {detail}")]
pub struct TunnelConfigError {
    pub field: &'static str,
    pub detail: String,
}

impl TunnelConfig {
    /// Configures this direction for compact data messages ([`crate::wire::overhead`]): the
    /// sender marks the packets whose sequence numbers the receiver can expand, and asks for a
    /// time-sync frame as often as this configuration's receiver needs one. The daemon and the
    /// simulator's model of its wire both configure their cores with it.
    pub fn use_compact_messages(&mut self) {
        use crate::wire::overhead;
        self.compact_seq_reach = Some(overhead::COMPACT_SEQ_REACH);
        self.owd_sample_interval = Some(overhead::owd_sample_interval(&self.reorder));
    }

    /// Whether a [`super::TunnelSender`] built from this configuration may hand out a payload
    /// more than once: retransmissions on reliable and partial paths, copies of the redundant
    /// scheduler. Without either, each payload offered leaves exactly once (or is dropped), so
    /// a caller whose payloads are handles to its own storage can hand the sender its handle
    /// and need not copy the packet.
    pub fn copies_packets(&self) -> bool {
        self.reliability.retransmits() || self.scheduler == SchedulerKind::Redundant
    }

    pub fn validate(&self) -> Result<(), TunnelConfigError> {
        let err =
            |field, detail: &str| Err(TunnelConfigError { field, detail: detail.to_string() });
        if self.path_costs.is_empty() || self.path_costs.len() > 255 {
            return err("path_costs", "need 1..=255 paths");
        }
        if !(1..=1_000_000).contains(&self.sched_queue_pkts) {
            return err("sched_queue_pkts", "must be in 1..=1000000");
        }
        if !(64..=65_535).contains(&self.mss_bytes) {
            return err("mss_bytes", "must be in 64..=65535");
        }
        if !(1..=1000).contains(&self.initial_window_pkts) {
            return err("initial_window_pkts", "must be in 1..=1000");
        }
        if self.packet_threshold == 0 {
            return err("packet_threshold", "must be at least 1");
        }
        if !(1..=64).contains(&self.feedback_every_pkts) {
            return err("feedback_every_pkts", "must be in 1..=64");
        }
        if self.feedback_max_delay > Duration::from_secs(1) {
            return err("feedback_max_delay", "must be at most 1 s");
        }
        if !(1..=1_000_000).contains(&self.reassembly_pkts) {
            return err("reassembly_pkts", "must be in 1..=1000000");
        }
        if self.pacing_catch_up > Duration::from_millis(100) {
            return err("pacing_catch_up", "must be at most 100 ms");
        }
        let spread_range = Duration::from_millis(1)..=Duration::from_secs(10);
        if self.max_rtt_spread.is_some_and(|s| !spread_range.contains(&s)) {
            return err("max_rtt_spread", "must be between 1 ms and 10 s");
        }
        if self.compact_seq_reach.is_some_and(|r| !(2..=1 << 62).contains(&r)) {
            return err("compact_seq_reach", "must be in 2..=2^62");
        }
        if self.owd_sample_interval.is_some_and(|d| d.is_zero() || d > Duration::from_secs(1)) {
            return err("owd_sample_interval", "must be in (0, 1 s]");
        }
        if let Some(codel) = &self.sched_codel {
            codel
                .validate()
                .map_err(|e| TunnelConfigError { field: "sched_codel", detail: e.to_string() })?;
        }
        self.sched
            .validate()
            .map_err(|e| TunnelConfigError { field: "sched", detail: e.to_string() })?;
        self.cc_tuning
            .validate()
            .map_err(|e| TunnelConfigError { field: "cc_tuning", detail: e.to_string() })?;
        self.reorder
            .validate()
            .map_err(|e| TunnelConfigError { field: "reorder", detail: e.to_string() })
    }
}
