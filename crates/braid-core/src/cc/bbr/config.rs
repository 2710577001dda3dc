//! BBR's constants and tuning, with the values of Linux `net/ipv4/tcp_bbr.c`.
//!
//! The kernel's names are kept (upper-cased) so a reader can put this file beside `tcp_bbr.c`;
//! a unit suffix is added where the kernel's name lacks one. Gains stay in the kernel's
//! fixed point ([`BBR_UNIT`] = 256 means 1.0) so that every threshold compares exactly as the
//! kernel's does. [`BbrConfig::default`] equals these constants.

use std::time::Duration;

pub use crate::cc::bbr_common::ack_aggregation::{
    BBR_ACK_EPOCH_ACKED_RESET_THRESH_PKTS, BBR_EXTRA_ACKED_MAX_US,
};
pub use crate::cc::bbr_common::gain::{Gain, BBR_SCALE, BBR_UNIT};
use crate::cc::bbr_common::limits;
use crate::ConfigError;

/// Number of phases in the ProbeBW pacing-gain cycle (kernel `CYCLE_LEN`).
pub const CYCLE_LEN: usize = 8;
/// Window of the max-bandwidth filter in round trips: one gain cycle plus two rounds, so a
/// probe's high sample survives the drain and cruise phases that follow it.
pub const BBR_BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// Window of the min_rtt filter in seconds: long enough to span natural idle periods of most
/// applications, short enough to follow route changes.
pub const BBR_MIN_RTT_WIN_SEC: u64 = 10;
/// Minimum time at [`BBR_CWND_MIN_TARGET_PKTS`] in ProbeRTT: bounds the throughput cost of
/// ProbeRTT to about 2% (200 ms every 10 s).
pub const BBR_PROBE_RTT_MODE_MS: u64 = 200;
/// Pace about 1% below the estimated bandwidth so that the bottleneck queue drains on average.
pub const BBR_PACING_MARGIN_PERCENT: u64 = 1;

/// Startup pacing and cwnd gain, 2/ln(2) ~ 2.885: the smallest gain that doubles the delivery
/// rate every round, sending what an unpaced Reno slow start would.
pub const BBR_HIGH_GAIN: Gain = Gain(BBR_UNIT * 2885 / 1000 + 1);
/// Drain pacing gain, 1/high_gain: empties the queue Startup built in about one round.
pub const BBR_DRAIN_GAIN: Gain = Gain(BBR_UNIT * 1000 / 2885);
/// ProbeBW cwnd gain: twice the BDP tolerates delayed and stretched ACKs.
pub const BBR_CWND_GAIN: Gain = Gain(BBR_UNIT * 2);
/// ProbeBW pacing gains: probe for more bandwidth (1.25), drain the queue the probe made
/// (0.75), then cruise at the estimate for six rounds.
pub const BBR_PACING_GAIN: [Gain; CYCLE_LEN] = [
    Gain(BBR_UNIT * 5 / 4),
    Gain(BBR_UNIT * 3 / 4),
    Gain(BBR_UNIT),
    Gain(BBR_UNIT),
    Gain(BBR_UNIT),
    Gain(BBR_UNIT),
    Gain(BBR_UNIT),
    Gain(BBR_UNIT),
];
/// The first ProbeBW phase is drawn among this many phases (all but the 0.75 drain phase), so
/// that flows sharing a bottleneck do not probe in lock step.
pub const BBR_CYCLE_RAND: u64 = 7;

/// Smallest cwnd in packets: with delayed ACKs every other packet, four packets keep two
/// ACK-clocked pairs in flight.
pub const BBR_CWND_MIN_TARGET_PKTS: u64 = 4;

/// Startup continues while the bandwidth estimate grows by this factor (1.25) per round.
pub const BBR_FULL_BW_THRESH: Gain = Gain(BBR_UNIT * 5 / 4);
/// Rounds without that growth after which the pipe is judged full: one to grow the receive
/// window, one to fill it, one to see the higher delivery rate.
pub const BBR_FULL_BW_CNT: u32 = 3;

/// Packets the sender emits per pacing release under [`SendQuantum::OnePacket`]: Braid's own
/// senders have no TSO/GSO and release one packet at a time (see the module documentation).
pub const BBR_TSO_SEGS_GOAL_PKTS: u64 = 1;

/// `sk_pacing_shift`'s default (`sock_init_data`): a TSO burst is about 1 ms of the pacing
/// rate, `pacing_rate >> 10`.
pub const LINUX_PACING_SHIFT: u32 = 10;
/// The largest burst `bbr_tso_segs_goal` allows: `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER`,
/// with `MAX_TCP_HEADER` = 320 on x86-64 (`L1_CACHE_ALIGN(128 + MAX_HEADER)`).
pub const LINUX_TSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// Below this pacing rate (`bbr_min_tso_rate`, 1.2 Mbit/s, in bytes/s) a burst is one
/// segment, above it at least two (`bbr_min_tso_segs`).
pub const LINUX_MIN_TSO_RATE_BYTES_PER_S: u64 = 1_200_000 / 8;
/// `bbr_tso_segs_goal` caps a burst at 127 segments (`0x7F`).
pub const LINUX_TSO_SEGS_MAX: u64 = 0x7F;

/// The send quantum BBR provisions its cwnd for: three of them in the quantization budget
/// (`bbr_quantization_budget`), one more in flight while probing (`bbr_packets_in_net_at_edt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendQuantum {
    /// One packet per pacing release: Braid's tunnel senders ([`BBR_TSO_SEGS_GOAL_PKTS`]).
    OnePacket,
    /// Linux's `bbr_tso_segs_goal` (net/ipv4/tcp_bbr.c): about 1 ms of the pacing rate in
    /// segments, `max(min(pacing_rate >> 10, 64 KB - 321) / mss, 2)`, one segment below
    /// 1.2 Mbit/s, at most 127. The kernel computes it from the pacing rate whether or not the
    /// device segments (it ignores the driver's `gso_max_size`), so a kernel TCP sender with
    /// offloads off still provisions for it: at 145 Mbit/s in Startup and a 1348-byte MSS,
    /// 13 segments, 39 packets of cwnd above gain x BDP.
    LinuxTso,
}

impl SendQuantum {
    /// Packets per release at `pacing_rate_bytes_per_s` with segments of `mss_bytes`.
    pub fn segs(self, pacing_rate_bytes_per_s: u64, mss_bytes: u64) -> u64 {
        match self {
            SendQuantum::OnePacket => BBR_TSO_SEGS_GOAL_PKTS,
            SendQuantum::LinuxTso => {
                let bytes =
                    (pacing_rate_bytes_per_s >> LINUX_PACING_SHIFT).min(LINUX_TSO_MAX_BYTES);
                let min_segs =
                    if pacing_rate_bytes_per_s < LINUX_MIN_TSO_RATE_BYTES_PER_S { 1 } else { 2 };
                (bytes / mss_bytes.max(1)).max(min_segs).min(LINUX_TSO_SEGS_MAX)
            }
        }
    }
}

/// Minimum round trips in a long-term (policer detection) sampling interval: enough to
/// average over a policer's token-bucket refills.
pub const BBR_LT_INTVL_MIN_RTTS: u32 = 4;
/// Loss ratio (in 1/256) above which an interval is lossy and may be policed: 50/256 ~ 20%.
pub const BBR_LT_LOSS_THRESH: u64 = 50;
/// Two intervals whose rates differ by at most this fraction (1/8) are consistent.
pub const BBR_LT_BW_RATIO: Gain = Gain(BBR_UNIT / 8);
/// ... or by at most this many bytes per second (4 kbit/s), for slow policers.
pub const BBR_LT_BW_DIFF_BYTES_PER_S: u64 = 4000 / 8;
/// Once a policer is detected, pace at its rate for this many round trips before probing
/// again.
pub const BBR_LT_BW_MAX_RTTS: u32 = 48;

/// Gain applied to the measured ACK aggregation when provisioning extra cwnd (1.0).
pub const BBR_EXTRA_ACKED_GAIN: Gain = Gain(BBR_UNIT);
/// The ACK-aggregation max filter spans 5 to 10 round trips, in two windows of this many.
pub const BBR_EXTRA_ACKED_WIN_RTTS: u32 = 5;

/// BBR tuning. The default is the kernel's; change a field only to study its effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BbrConfig {
    /// Startup pacing and cwnd gain; Drain keeps it as cwnd gain ([`BBR_HIGH_GAIN`]).
    pub high_gain: Gain,
    /// Drain pacing gain ([`BBR_DRAIN_GAIN`]).
    pub drain_gain: Gain,
    /// ProbeBW cwnd gain ([`BBR_CWND_GAIN`]).
    pub cwnd_gain: Gain,
    /// ProbeBW pacing-gain cycle ([`BBR_PACING_GAIN`]).
    pub pacing_gain_cycle: [Gain; CYCLE_LEN],
    /// Window of the max-bandwidth filter in round trips ([`BBR_BW_RTTS`]).
    pub bw_filter_rtts: u64,
    /// Window of the min_rtt filter ([`BBR_MIN_RTT_WIN_SEC`]).
    pub min_rtt_win: Duration,
    /// Minimum hold at the minimum cwnd in ProbeRTT ([`BBR_PROBE_RTT_MODE_MS`]); zero
    /// disables ProbeRTT, as in the kernel.
    pub probe_rtt_mode: Duration,
    /// Pacing margin below the estimate, in percent ([`BBR_PACING_MARGIN_PERCENT`]).
    pub pacing_margin_percent: u64,
    /// Smallest cwnd and the ProbeRTT cwnd, in packets ([`BBR_CWND_MIN_TARGET_PKTS`]).
    pub cwnd_min_target_pkts: u64,
    /// Growth per round that keeps Startup going ([`BBR_FULL_BW_THRESH`]).
    pub full_bw_thresh: Gain,
    /// Rounds without that growth that end Startup ([`BBR_FULL_BW_CNT`]).
    pub full_bw_cnt: u32,
    /// Gain on measured ACK aggregation; zero disables the allowance
    /// ([`BBR_EXTRA_ACKED_GAIN`]).
    pub extra_acked_gain: Gain,
    /// Seed for the ProbeBW starting phase. The kernel draws it from `prandom`; Braid derives
    /// it from this seed so runs replay exactly. Give flows sharing a bottleneck different
    /// seeds to keep their probing out of phase, as the kernel's randomness does.
    pub cycle_seed: u64,
    /// The send quantum the cwnd provisions for ([`SendQuantum::OnePacket`]; a model of a
    /// kernel TCP sender uses [`SendQuantum::LinuxTso`]).
    pub send_quantum: SendQuantum,
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig {
            high_gain: BBR_HIGH_GAIN,
            drain_gain: BBR_DRAIN_GAIN,
            cwnd_gain: BBR_CWND_GAIN,
            pacing_gain_cycle: BBR_PACING_GAIN,
            bw_filter_rtts: BBR_BW_RTTS,
            min_rtt_win: Duration::from_secs(BBR_MIN_RTT_WIN_SEC),
            probe_rtt_mode: Duration::from_millis(BBR_PROBE_RTT_MODE_MS),
            pacing_margin_percent: BBR_PACING_MARGIN_PERCENT,
            cwnd_min_target_pkts: BBR_CWND_MIN_TARGET_PKTS,
            full_bw_thresh: BBR_FULL_BW_THRESH,
            full_bw_cnt: BBR_FULL_BW_CNT,
            extra_acked_gain: BBR_EXTRA_ACKED_GAIN,
            cycle_seed: 0,
            send_quantum: SendQuantum::OnePacket,
        }
    }
}

impl BbrConfig {
    /// Checks every field; the error names the first field out of range and prints it as
    /// `bbr.<field>`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.check().map_err(|e| e.scoped("bbr."))
    }

    fn check(&self) -> Result<(), ConfigError> {
        let err = |field, allowed| Err(ConfigError::new(field, allowed));
        let max_gain = limits::MAX_GAIN;
        if !(Gain::ONE..=max_gain).contains(&self.high_gain) {
            return err("high_gain", "in 1.0..=16.0");
        }
        if !(Gain(1)..=Gain::ONE).contains(&self.drain_gain) {
            return err("drain_gain", "in (0, 1.0]");
        }
        if !(Gain::ONE..=max_gain).contains(&self.cwnd_gain) {
            return err("cwnd_gain", "in 1.0..=16.0");
        }
        if self.pacing_gain_cycle.iter().any(|g| !(Gain(1)..=max_gain).contains(g)) {
            return err("pacing_gain_cycle", "gains in (0, 16.0]");
        }
        if !(1..=1000).contains(&self.bw_filter_rtts) {
            return err("bw_filter_rtts", "in 1..=1000");
        }
        limits::min_rtt_win(self.min_rtt_win)?;
        if self.probe_rtt_mode > self.min_rtt_win {
            return err("probe_rtt_mode", "at most min_rtt_win");
        }
        limits::pacing_margin_percent(self.pacing_margin_percent)?;
        limits::cwnd_min_target_pkts(self.cwnd_min_target_pkts)?;
        limits::full_bw(self.full_bw_thresh, self.full_bw_cnt)?;
        limits::extra_acked_gain(self.extra_acked_gain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_tso_bursts_are_a_millisecond_of_the_pacing_rate_within_the_kernel_bounds() {
        let linux = |rate, mss| SendQuantum::LinuxTso.segs(rate, mss);
        // Startup at 145 Mbit/s with a 1348-byte MSS (the lab's tunnel): 17 700 B per ms.
        assert_eq!(linux(145_000_000 / 8, 1348), 13);
        // ProbeBW at 50 Mbit/s, 1448-byte MSS: 6 103 B per ms.
        assert_eq!(linux(50_000_000 / 8, 1448), 4);
        // Slow: one segment below 1.2 Mbit/s, two from there on.
        assert_eq!(linux(100_000, 1448), 1);
        assert_eq!(linux(150_000, 1448), 2);
        // Fast: at most 64 KB less the header room, and never more than 127 segments.
        assert_eq!(linux(10_000_000_000 / 8, 1448), (65_536 - 1 - 320) / 1448);
        assert_eq!(linux(10_000_000_000 / 8, 100), 127);
        // Braid's own senders release one packet at a time, whatever the rate.
        assert_eq!(SendQuantum::OnePacket.segs(145_000_000 / 8, 1348), 1);
    }

    #[test]
    fn kernel_gains_in_fixed_point() {
        assert_eq!(BBR_HIGH_GAIN.0, 739, "256 * 2885 / 1000 + 1");
        assert!((BBR_HIGH_GAIN.as_f64() - 2.0 / std::f64::consts::LN_2).abs() < 0.002);
        assert_eq!(BBR_DRAIN_GAIN.0, 88, "256 * 1000 / 2885");
        assert_eq!(BBR_PACING_GAIN[0].as_f64(), 1.25);
        assert_eq!(BBR_PACING_GAIN[1].as_f64(), 0.75);
        assert_eq!(BBR_CWND_GAIN.as_f64(), 2.0);
        assert_eq!(BBR_BW_RTTS, 10);
        assert_eq!(Gain::from_ratio(5, 4), BBR_PACING_GAIN[0]);
    }

    #[test]
    fn default_validates_and_errors_name_the_field() {
        assert_eq!(BbrConfig::default().validate(), Ok(()));
        let bad = BbrConfig { drain_gain: Gain(0), ..BbrConfig::default() };
        let e = bad.validate().unwrap_err();
        assert_eq!(e.to_string(), "bbr.drain_gain: must be in (0, 1.0]");
        let bad = BbrConfig { full_bw_thresh: Gain::ONE, ..BbrConfig::default() };
        assert_eq!(bad.validate().unwrap_err().field, "full_bw_thresh");
    }
}
