//! The simulator's end-to-end TCP: a greedy bulk download between a [`TcpSender`] and a
//! [`TcpReceiver`], as sans-I/O state machines (the quinn-proto shape: `handle_*(now, input)`,
//! `poll_transmit(now)` / `poll_ack(now)`, `poll_timeout()`, `handle_timeout(now)`).
//!
//! The model never sees links or clocks; the engine moves [`Segment`]s and [`Ack`]s between the
//! two ends and calls the timers. What it models, and where each piece comes from:
//!
//! | piece | source | file |
//! |---|---|---|
//! | sequence space, SACK scoreboard, pipe | RFC 2018, RFC 6675 sections 2-4 | [`scoreboard`] |
//! | loss detection: RACK and Tail Loss Probe | RFC 8985 sections 6-7 | [`rack`] |
//! | retransmission timer | RFC 6298 | [`sender`] |
//! | congestion control, one recovery per episode | `braid_core::cc`, RFC 6675 | [`sender`] |
//! | delivery-rate samples | draft-cheng-iccrg-delivery-rate-estimation | [`sender`] |
//! | pacing | Linux `tcp_update_skb_after_send` | [`sender`] |
//! | cumulative + SACK ACKs | RFC 2018 section 4 | [`receiver`] |
//! | delayed ACKs | RFC 5681 section 4.2, RFC 1122 section 4.2.3.2 | [`receiver`] |
//!
//! # Units
//! Sequence numbers are **segment indices** (0-based), not bytes: every segment carries
//! `mss_bytes` of payload except the last one, which carries `total_bytes % mss_bytes` when that
//! is not zero. The congestion controller is charged **payload bytes** (Linux counts packets; at
//! one MSS per full segment, payload bytes are the byte-counted equivalent, and the window and
//! the pipe stay in the same unit as the receive window). Headers ([`TCP_IP_HEADER_BYTES`]) only
//! matter on the wire: [`Segment::wire_len`] and [`Ack::wire_len`] are what links serialise.
//!
//! # What is left out
//! No connection setup or teardown (the transfer starts with data at time zero), no window
//! scaling dynamics (the receive window is a constant `rwnd_bytes`, as an auto-tuned Linux
//! receiver reaches quickly), no F-RTO or undo after an RTO (fast recoveries are undone when
//! proved spurious, see [`sender`]), no Nagle, no PRR in the CWR state a repaired loss probe
//! or ECN would enter (only fast recovery reduces by PRR). DSACK ([`TcpConfig::dsack`]) and PRR
//! ([`LinuxCc::prr`]) are modelled and on by default, as in Linux.
//! The receiver's quick-ACK mode is modelled only at the start of the connection.

pub mod rack;
mod ranges;
pub mod receiver;
pub mod scoreboard;
pub mod sender;

#[cfg(test)]
mod tests;

use std::time::Duration;

use braid_core::cc::bbr::{Bbr, BbrConfig, SendQuantum};
use braid_core::cc::cubic::{Cubic, CubicConfig, CubicUndo};
use braid_core::cc::hystart::HystartConfig;
use braid_core::cc::newreno::{NewReno, NewRenoConfig};
use braid_core::cc::{Bbr2Tuning, CcAlgorithm, CcParams, Controller};
use braid_core::time::Instant;

pub use receiver::{TcpReceiver, TcpReceiverMetrics};
pub use sender::{TcpSender, TcpSenderMetrics};

/// IPv4 header (20) + TCP header (20) + timestamp option (12, RFC 7323 section 3 with two NOPs):
/// the overhead of every data segment and ACK.
pub const TCP_IP_HEADER_BYTES: u32 = 20 + 20 + 12;
/// SACK option kind + length bytes (RFC 2018 section 3).
pub const SACK_OPTION_BASE_BYTES: u32 = 2;
/// Bytes per SACK block: two 32-bit sequence numbers (RFC 2018 section 3).
pub const SACK_BLOCK_BYTES: u32 = 8;
/// SACK blocks that fit next to the timestamp option in 40 option bytes (RFC 2018 section 3:
/// "when the Timestamp option is used, a maximum of 3 SACK blocks").
pub const MAX_SACK_BLOCKS: usize = 3;

/// Default receive window: 6 MiB, what Linux autotuning reaches for a bulk download
/// (`tcp_rmem` max 6 MiB).
pub const DEFAULT_RWND_BYTES: u64 = 6 * 1024 * 1024;
/// Default download size of the reference experiment (Pieska et al. 2024: a 300 MB greedy
/// download).
pub const DEFAULT_TOTAL_BYTES: u64 = 300_000_000;

/// The congestion control of a Linux-like connection, as a scenario names it: Linux's Cubic
/// (`tcp_cubic.c`, [`CubicConfig::linux`]) with HyStart switched by `hystart` and `cubic_undo`
/// choosing what undoing a spurious recovery restores; Linux's `reno` (braid-core's NewReno
/// halving `cwnd` on a loss, [`NewRenoConfig::linux`]), Linux's BBR ([`LinuxCc::bbr`]), and
/// braid-core's BBRv2/v3 with `bbr2`. The end-to-end TCP and kernel TCP tunnel paths
/// ([`crate::tcp_tunnel`]) both build theirs here.
#[derive(Clone, Debug, PartialEq)]
pub struct LinuxCc {
    pub cc: CcAlgorithm,
    pub hystart: bool,
    pub cubic_undo: CubicUndo,
    pub bbr2: Bbr2Tuning,
    /// Proportional Rate Reduction in fast recovery ([`LinuxCc::reduces_with_prr`]).
    pub prr: bool,
}

impl LinuxCc {
    /// Whether the connection reduces its window in fast recovery by PRR (RFC 6937): when
    /// `prr` is on and the controller is one Linux reduces that way. Linux's
    /// `tcp_cong_control` calls `tcp_cwnd_reduction` for every controller without its own
    /// `cong_control` hook (Reno, Cubic); BBR (and BBRv2/v3) set the window themselves.
    pub fn reduces_with_prr(&self) -> bool {
        self.prr && matches!(self.cc, CcAlgorithm::NewReno | CcAlgorithm::Cubic)
    }

    /// Linux's BBRv1: the kernel's parameters, a cwnd provisioned for TSO bursts of about 1 ms
    /// of the pacing rate (`bbr_tso_segs_goal`, [`SendQuantum::LinuxTso`]), and the ProbeBW
    /// phase drawn from `phase_seed` (0 without noise, as `CcAlgorithm::build_tuned` does).
    pub fn bbr(phase_seed: Option<u64>) -> BbrConfig {
        BbrConfig {
            cycle_seed: phase_seed.unwrap_or(0),
            send_quantum: SendQuantum::LinuxTso,
            ..BbrConfig::default()
        }
    }

    /// A fresh controller; `phase_seed` draws a random controller phase (the noise model's
    /// `cc_phase`) for the algorithms that have one.
    pub fn build(&self, params: CcParams, phase_seed: Option<u64>) -> Box<dyn Controller> {
        match (self.cc, phase_seed) {
            (CcAlgorithm::Cubic, _) => {
                let hystart = self.hystart.then(HystartConfig::default);
                let config = CubicConfig { hystart, undo: self.cubic_undo, ..CubicConfig::linux() };
                Box::new(Cubic::with_config(params, config))
            }
            (CcAlgorithm::NewReno, _) => {
                Box::new(NewReno::with_config(params, NewRenoConfig::linux()))
            }
            (CcAlgorithm::Bbr, seed) => Box::new(Bbr::with_config(params, Self::bbr(seed))),
            (cc, Some(seed)) => cc.build_randomized(params, seed, &self.bbr2),
            (cc, None) => cc.build_tuned(params, 0, &self.bbr2),
        }
    }
}

/// Configuration of one end-to-end TCP connection (both ends use the same values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpConfig {
    /// Sender maximum segment size: payload bytes per full segment (1448 = 1500 - 52).
    pub mss_bytes: u32,
    /// Initial window in segments (RFC 6928: 10); handed to the controller via [`Self::cc_params`].
    pub initial_window_pkts: u32,
    /// Receive window in bytes; the sender never has more than this beyond `snd_una`.
    pub rwnd_bytes: u64,
    /// Floor of the retransmission timeout (RFC 6298 section 2.4 says 1 s; Linux uses 200 ms).
    pub min_rto: Duration,
    /// Whether the receiver delays ACKs (RFC 5681 section 4.2); if false it ACKs every segment.
    pub delayed_ack: bool,
    /// Acknowledge at least every this many in-order segments (RFC 5681 section 4.2: 2).
    pub delack_segments: u32,
    /// Delayed-ACK timer (RFC 5681 section 4.2: under 500 ms; Linux's minimum is 40 ms).
    pub delack_timeout: Duration,
    /// Size of the greedy download in payload bytes.
    pub total_bytes: u64,
    /// DSACK (RFC 2883): the receiver reports a duplicate segment, and the sender's RACK widens
    /// its reordering window per round trip that sees one (RFC 8985 section 6.2 step 4, Linux
    /// `tcp_rack_update_reo_wnd`). Linux does both by default (`tcp_dsack = 1`); the scenario's
    /// `e2e.dsack` sets it (default on); off in `TcpConfig::default`, which unit tests use.
    pub dsack: bool,
    /// Linux's RTO, `srtt + max(4 * rttvar, min_rto)` ([`braid_core::path::RttEstimator::linux`]),
    /// instead of RFC 6298's `max(min_rto, srtt + 4 * rttvar)`.
    pub linux_rto: bool,
    /// Linux's partial undo, which clears every lost mark (the sender module's "Undo of
    /// spurious recoveries"); `false` undoes only once nothing is still marked lost.
    pub linux_undo: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss_bytes: 1448,
            initial_window_pkts: 10,
            rwnd_bytes: DEFAULT_RWND_BYTES,
            min_rto: Duration::from_millis(200),
            delayed_ack: true,
            delack_segments: 2,
            delack_timeout: Duration::from_millis(40),
            total_bytes: DEFAULT_TOTAL_BYTES,
            dsack: false,
            linux_rto: false,
            linux_undo: true,
        }
    }
}

/// A TCP configuration value out of range.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("tcp.{field}: {detail}")]
pub struct TcpConfigError {
    pub field: &'static str,
    pub detail: &'static str,
}

impl TcpConfig {
    /// Checks every field against its allowed range.
    pub fn validate(&self) -> Result<(), TcpConfigError> {
        let err = |field, detail| Err(TcpConfigError { field, detail });
        if !(64..=65_483).contains(&self.mss_bytes) {
            return err("mss_bytes", "must be in 64..=65483 (IP datagram of at most 65535 bytes)");
        }
        if !(1..=1000).contains(&self.initial_window_pkts) {
            return err("initial_window_pkts", "must be in 1..=1000");
        }
        if self.rwnd_bytes < u64::from(self.mss_bytes) || self.rwnd_bytes > 1 << 30 {
            return err("rwnd_bytes", "must be in mss_bytes..=1 GiB (RFC 7323 window scale 14)");
        }
        if self.min_rto.is_zero() || self.min_rto > Duration::from_secs(60) {
            return err("min_rto", "must be in (0, 60 s] (RFC 6298 section 2.5)");
        }
        if !(1..=64).contains(&self.delack_segments) {
            return err("delack_segments", "must be in 1..=64");
        }
        if self.delack_timeout.is_zero() || self.delack_timeout >= Duration::from_millis(500) {
            return err("delack_timeout", "must be in (0, 500 ms) (RFC 5681 section 4.2)");
        }
        if self.total_bytes == 0 {
            return err("total_bytes", "must be at least 1");
        }
        Ok(())
    }

    /// Parameters for the congestion controller of this connection.
    pub fn cc_params(&self) -> CcParams {
        CcParams {
            mss_bytes: u64::from(self.mss_bytes),
            initial_window_pkts: u64::from(self.initial_window_pkts),
        }
    }

    /// Number of segments in the transfer.
    pub fn total_segments(&self) -> u64 {
        self.total_bytes.div_ceil(u64::from(self.mss_bytes))
    }

    /// Payload bytes of segment `seq` (the last one may be short).
    pub fn segment_len(&self, seq: u64) -> u32 {
        let start = seq * u64::from(self.mss_bytes);
        (self.total_bytes.saturating_sub(start)).min(u64::from(self.mss_bytes)) as u32
    }

    /// Payload bytes in segments `0..seq`.
    pub fn bytes_before(&self, seq: u64) -> u64 {
        (seq * u64::from(self.mss_bytes)).min(self.total_bytes)
    }

    /// Segments the receive window spans, rounded up: the sizing of per-segment state.
    pub(crate) fn window_segments(&self) -> usize {
        self.rwnd_bytes.div_ceil(u64::from(self.mss_bytes)) as usize
    }
}

/// A data segment of the download.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Segment index, 0-based.
    pub seq: u64,
    /// Payload bytes: `mss_bytes` except maybe for the last segment.
    pub len_bytes: u32,
    /// Whether this transmission is a retransmission (including a TLP retransmission).
    pub retransmission: bool,
    /// The timestamp option's TSval (RFC 7323 section 3): when this transmission left. The
    /// model keeps nanoseconds where Linux keeps milliseconds or microseconds (`tcp_usec_ts`);
    /// only order comparisons are made, so the finer clock only breaks ties Linux would call
    /// equal.
    pub ts_val: Instant,
}

impl Segment {
    /// Bytes on the wire: payload plus IPv4, TCP and timestamp-option headers.
    pub fn wire_len(&self) -> u32 {
        self.len_bytes + TCP_IP_HEADER_BYTES
    }
}

/// A SACK block: the half-open range `start..end` of segment indices received.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SackBlock {
    pub start: u64,
    pub end: u64,
}

impl SackBlock {
    pub fn contains(&self, seq: u64) -> bool {
        self.start <= seq && seq < self.end
    }

    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

/// An acknowledgment: cumulative ACK plus up to [`MAX_SACK_BLOCKS`] SACK blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ack {
    /// Next expected segment index: every segment below it was received.
    pub cum_ack: u64,
    /// SACK blocks; the first `sack_count` are valid, the first one holds the most recently
    /// received segment (RFC 2018 section 4).
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    pub sack_count: u8,
    /// The timestamp option's TSecr: the receiver's `TS.Recent` (RFC 7323 section 4.3), the
    /// TSval of the segment that most recently advanced the left edge of the window.
    pub ts_ecr: Instant,
    /// The ACK reports a duplicate segment (RFC 2883's D-SACK block, sent first; only its
    /// presence is modelled).
    pub dsack: bool,
}

impl Ack {
    /// The valid SACK blocks.
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..usize::from(self.sack_count).min(MAX_SACK_BLOCKS)]
    }

    /// Bytes on the wire: headers, plus the SACK option (2 + 8n bytes, the D-SACK block
    /// included) padded to a multiple of 4 with NOPs when any block is present (RFC 2018
    /// section 3; RFC 9293 section 3.1).
    pub fn wire_len(&self) -> u32 {
        let n = self.sack_blocks().len() as u32 + u32::from(self.dsack);
        if n == 0 {
            return TCP_IP_HEADER_BYTES;
        }
        let option = SACK_OPTION_BASE_BYTES + SACK_BLOCK_BYTES * n;
        TCP_IP_HEADER_BYTES + option.next_multiple_of(4)
    }
}

#[cfg(test)]
mod wire_tests {
    use super::*;

    #[test]
    fn segment_lengths_cover_the_transfer_exactly() {
        let cfg = TcpConfig { total_bytes: 10 * 1448 + 100, ..TcpConfig::default() };
        assert_eq!(cfg.total_segments(), 11);
        assert_eq!(cfg.segment_len(0), 1448);
        assert_eq!(cfg.segment_len(10), 100);
        let sum: u64 = (0..11).map(|s| u64::from(cfg.segment_len(s))).sum();
        assert_eq!(sum, cfg.total_bytes);
        assert_eq!(cfg.bytes_before(11), cfg.total_bytes);
        let seg = Segment { seq: 0, len_bytes: 1448, retransmission: false, ts_val: Instant::ZERO };
        assert_eq!(seg.wire_len(), 1500);
    }

    #[test]
    fn ack_length_pads_the_sack_option_to_four_bytes() {
        let mut ack = Ack::default();
        assert_eq!(ack.wire_len(), 52);
        ack.sack_count = 1;
        assert_eq!(ack.wire_len(), 52 + 12); // 10 -> 12
        ack.sack_count = 2;
        assert_eq!(ack.wire_len(), 52 + 20); // 18 -> 20
        ack.sack_count = 3;
        assert_eq!(ack.wire_len(), 52 + 28); // 26 -> 28
    }

    #[test]
    fn validation_names_the_field() {
        assert_eq!(TcpConfig::default().validate(), Ok(()));
        let bad = TcpConfig { delack_segments: 0, ..TcpConfig::default() };
        assert_eq!(bad.validate().unwrap_err().field, "delack_segments");
        let bad = TcpConfig { rwnd_bytes: 100, ..TcpConfig::default() };
        assert!(bad.validate().unwrap_err().to_string().starts_with("tcp.rwnd_bytes"));
    }
}
