//! BBRv2 and BBRv3 constants and tuning.
//!
//! Each constant names its source: draft-ietf-ccwg-bbr ("the draft", BBRv3, section 2 lists
//! the parameters), Google's v3 `net/ipv4/tcp_bbr.c` ("v3") and v2alpha
//! `net/ipv4/tcp_bbr2.c` ("v2"). Gains keep the kernel's fixed point ([`Gain`], 1/256), so a
//! gain compares exactly as in the kernel. Fractions the draft states in percent (loss
//! threshold, beta, headroom) are kept as exact percentages: the kernel's 1/256 rounding
//! would make the 2% loss threshold 1.95% and beta 0.703.
//!
//! [`Bbr2Config::v2`] and [`Bbr2Config::v3`] give each version's defaults; the module
//! documentation of [`super`] explains every difference.

use std::time::Duration;

use crate::cc::bbr_common::gain::{Gain, BBR_UNIT};
use crate::cc::bbr_common::limits;
use crate::ConfigError;

/// Steady-state cwnd gain in ProbeBW and Drain (`BBR.DefaultCwndGain`): twice the BDP
/// tolerates delayed and stretched ACKs.
pub const CWND_GAIN: Gain = Gain(BBR_UNIT * 2);
/// ProbeBW_UP pacing gain: send 25% above the estimate to look for more bandwidth.
pub const PROBE_UP_PACING_GAIN: Gain = Gain(BBR_UNIT * 5 / 4);
/// ProbeRTT cwnd, as a fraction of the BDP (`BBR.ProbeRTTCwndGain`, v2/v3
/// `bbr_probe_rtt_cwnd_gain`): half the BDP drains the queue while keeping half the rate.
pub const PROBE_RTT_CWND_GAIN: Gain = Gain(BBR_UNIT / 2);
/// Startup continues while the bandwidth grows by 25% per round (`bbr_full_bw_thresh`).
pub const FULL_BW_THRESH: Gain = Gain(BBR_UNIT * 5 / 4);
/// Rounds without that growth after which the pipe is full (`bbr_full_bw_cnt`).
pub const FULL_BW_CNT: u32 = 3;
/// Highest per-round loss rate tolerated while probing, in percent (`BBR.LossThresh`).
pub const LOSS_THRESH_PERCENT: u64 = 2;
/// Multiplicative decrease on a lossy round, in percent (`BBR.Beta` = 0.7; v2/v3 keep
/// `1 - bbr_beta` with `bbr_beta` = 0.3): no harsher than CUBIC's 0.7.
pub const BETA_PERCENT: u64 = 70;
/// Share of `inflight_hi` left free for other flows after a lossy probe, in percent
/// (`BBR.Headroom`, `bbr_inflight_headroom`).
pub const HEADROOM_PERCENT: u64 = 15;
/// min_rtt filter window (`BBR.MinRTTFilterLen`): as in v1.
pub const MIN_RTT_WIN: Duration = Duration::from_secs(10);
/// ProbeRTT is due when the ProbeRTT min filter is this old (`BBR.ProbeRTTInterval`,
/// `bbr_probe_rtt_win_ms`); v1 waited for the 10 s min_rtt window.
pub const PROBE_RTT_INTERVAL: Duration = Duration::from_secs(5);
/// Minimum time at the ProbeRTT cwnd (`BBR.ProbeRTTDuration`, `bbr_probe_rtt_mode_ms`).
pub const PROBE_RTT_DURATION: Duration = Duration::from_millis(200);
/// Base of the wall-clock wait between bandwidth probes (`bbr_bw_probe_base_us`): long
/// enough for a 25 Mbit/s, 30 ms Reno flow to grow between two probes (1.9 s).
pub const PROBE_WAIT_BASE: Duration = Duration::from_secs(2);
/// The wait adds a uniform random part below this (`bbr_bw_probe_rand_us`), so flows mix.
pub const PROBE_WAIT_RAND: Duration = Duration::from_secs(1);
/// Upper bound of the Reno-coexistence probe interval in rounds (`bbr_bw_probe_max_rounds`).
pub const BW_PROBE_MAX_ROUNDS: u64 = 63;
/// The round count starts at a random value below this (`bbr_bw_probe_rand_rounds`), so the
/// bound is 62 or 63 rounds.
pub const BW_PROBE_RAND_ROUNDS: u64 = 2;
/// Pace 1% below the estimate so the bottleneck queue drains on average.
pub const PACING_MARGIN_PERCENT: u64 = 1;
/// Smallest cwnd, in packets (`BBR.MinPipeCwnd`, `bbr_cwnd_min_target`).
pub const CWND_MIN_TARGET_PKTS: u64 = 4;
/// Gain on the measured ACK aggregation (`bbr_extra_acked_gain`).
pub const EXTRA_ACKED_GAIN: Gain = Gain(BBR_UNIT);

/// Which BBR the controller runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Version {
    /// BBRv2 as Google's v2alpha `tcp_bbr2.c`.
    V2,
    /// BBRv3 as draft-ietf-ccwg-bbr and Google's v3 `tcp_bbr.c`.
    V3,
}

/// BBRv2/v3 tuning. Build it with [`Bbr2Config::v2`] or [`Bbr2Config::v3`] and change a field
/// only to study its effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bbr2Config {
    /// The state-machine variant: where v2 and v3 differ in logic rather than in a number.
    pub version: Version,
    /// Startup pacing gain.
    pub startup_pacing_gain: Gain,
    /// Startup (and Drain) cwnd gain.
    pub startup_cwnd_gain: Gain,
    /// Drain pacing gain.
    pub drain_pacing_gain: Gain,
    /// ProbeBW cwnd gain in DOWN, CRUISE and REFILL ([`CWND_GAIN`]).
    pub cwnd_gain: Gain,
    /// ProbeBW_UP cwnd gain.
    pub probe_up_cwnd_gain: Gain,
    /// ProbeBW_DOWN pacing gain.
    pub probe_down_pacing_gain: Gain,
    /// ProbeBW_UP pacing gain ([`PROBE_UP_PACING_GAIN`]).
    pub probe_up_pacing_gain: Gain,
    /// ProbeRTT cwnd as a fraction of the BDP ([`PROBE_RTT_CWND_GAIN`]).
    pub probe_rtt_cwnd_gain: Gain,
    /// Growth per round that keeps Startup going ([`FULL_BW_THRESH`]).
    pub full_bw_thresh: Gain,
    /// Rounds without that growth that fill the pipe ([`FULL_BW_CNT`]).
    pub full_bw_cnt: u32,
    /// Loss events in a recovery round that, with the loss rate above the threshold, end
    /// Startup (`bbr_full_loss_cnt`); zero disables the loss exit.
    pub full_loss_cnt: u32,
    /// [`LOSS_THRESH_PERCENT`].
    pub loss_thresh_percent: u64,
    /// [`BETA_PERCENT`].
    pub beta_percent: u64,
    /// [`HEADROOM_PERCENT`].
    pub headroom_percent: u64,
    /// [`MIN_RTT_WIN`].
    pub min_rtt_win: Duration,
    /// [`PROBE_RTT_INTERVAL`].
    pub probe_rtt_interval: Duration,
    /// [`PROBE_RTT_DURATION`]; zero disables ProbeRTT, as in the kernel.
    pub probe_rtt_duration: Duration,
    /// [`PROBE_WAIT_BASE`].
    pub probe_wait_base: Duration,
    /// [`PROBE_WAIT_RAND`].
    pub probe_wait_rand: Duration,
    /// [`BW_PROBE_MAX_ROUNDS`].
    pub bw_probe_max_rounds: u64,
    /// [`PACING_MARGIN_PERCENT`].
    pub pacing_margin_percent: u64,
    /// [`CWND_MIN_TARGET_PKTS`].
    pub cwnd_min_target_pkts: u64,
    /// [`EXTRA_ACKED_GAIN`]; zero disables the aggregation allowance.
    pub extra_acked_gain: Gain,
    /// Seed of the generator behind the randomised probe wait. The kernel draws from
    /// `get_random_u32_below`; Braid derives the draws from this seed so runs replay
    /// exactly. Give flows sharing a bottleneck different seeds.
    pub seed: u64,
}

impl Bbr2Config {
    /// BBRv2 as v2alpha `tcp_bbr2.c`: Startup gains 2/ln2 for both pacing and cwnd
    /// (`bbr_high_gain`, `bbr_startup_cwnd_gain`), Drain 1/2.885 (`bbr_drain_gain`),
    /// ProbeBW_DOWN 0.75 (`bbr_pacing_gain[1]`), cwnd gain 2 in every ProbeBW phase,
    /// Startup loss exit after 8 loss events (`bbr_full_loss_cnt`).
    pub fn v2() -> Self {
        Bbr2Config {
            version: Version::V2,
            startup_pacing_gain: Gain(BBR_UNIT * 2885 / 1000 + 1),
            startup_cwnd_gain: Gain(BBR_UNIT * 2885 / 1000 + 1),
            drain_pacing_gain: Gain(BBR_UNIT * 1000 / 2885),
            probe_up_cwnd_gain: CWND_GAIN,
            probe_down_pacing_gain: Gain(BBR_UNIT * 3 / 4),
            full_loss_cnt: 8,
            ..Self::v3()
        }
    }

    /// BBRv3 as draft-ietf-ccwg-bbr: Startup pacing gain 4 ln 2 = 2.77
    /// (`BBR.StartupPacingGain`, v3 `bbr_startup_pacing_gain`) with cwnd gain 2
    /// (`BBR.DefaultCwndGain`), Drain 0.5 (`BBR.DrainPacingGain`), ProbeBW_DOWN 0.90,
    /// ProbeBW_UP cwnd gain 2.25, Startup loss exit after 6 loss events
    /// (`BBRStartupFullLossCnt`).
    pub fn v3() -> Self {
        Bbr2Config {
            version: Version::V3,
            startup_pacing_gain: Gain(BBR_UNIT * 277 / 100 + 1),
            startup_cwnd_gain: CWND_GAIN,
            drain_pacing_gain: Gain(BBR_UNIT / 2),
            cwnd_gain: CWND_GAIN,
            probe_up_cwnd_gain: Gain(BBR_UNIT * 9 / 4),
            probe_down_pacing_gain: Gain::from_ratio(9, 10),
            probe_up_pacing_gain: PROBE_UP_PACING_GAIN,
            probe_rtt_cwnd_gain: PROBE_RTT_CWND_GAIN,
            full_bw_thresh: FULL_BW_THRESH,
            full_bw_cnt: FULL_BW_CNT,
            full_loss_cnt: 6,
            loss_thresh_percent: LOSS_THRESH_PERCENT,
            beta_percent: BETA_PERCENT,
            headroom_percent: HEADROOM_PERCENT,
            min_rtt_win: MIN_RTT_WIN,
            probe_rtt_interval: PROBE_RTT_INTERVAL,
            probe_rtt_duration: PROBE_RTT_DURATION,
            probe_wait_base: PROBE_WAIT_BASE,
            probe_wait_rand: PROBE_WAIT_RAND,
            bw_probe_max_rounds: BW_PROBE_MAX_ROUNDS,
            pacing_margin_percent: PACING_MARGIN_PERCENT,
            cwnd_min_target_pkts: CWND_MIN_TARGET_PKTS,
            extra_acked_gain: EXTRA_ACKED_GAIN,
            seed: 0,
        }
    }

    /// The defaults of `version`.
    pub fn for_version(version: Version) -> Self {
        match version {
            Version::V2 => Self::v2(),
            Version::V3 => Self::v3(),
        }
    }
}

impl Bbr2Config {
    /// Checks every field; the error names the first field out of range and prints it as
    /// `bbr2.<field>`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.check().map_err(|e| e.scoped("bbr2."))
    }

    fn check(&self) -> Result<(), ConfigError> {
        let err = |field, allowed| Err(ConfigError::new(field, allowed));
        let max_gain = limits::MAX_GAIN;
        let gain_at_least_one = [
            ("startup_pacing_gain", self.startup_pacing_gain),
            ("startup_cwnd_gain", self.startup_cwnd_gain),
            ("cwnd_gain", self.cwnd_gain),
            ("probe_up_cwnd_gain", self.probe_up_cwnd_gain),
            ("probe_up_pacing_gain", self.probe_up_pacing_gain),
        ];
        for (field, gain) in gain_at_least_one {
            if !(Gain::ONE..=max_gain).contains(&gain) {
                return err(field, "in 1.0..=16.0");
            }
        }
        if !(Gain(1)..=Gain::ONE).contains(&self.drain_pacing_gain) {
            return err("drain_pacing_gain", "in (0, 1.0]");
        }
        if !(Gain(1)..=Gain::ONE).contains(&self.probe_down_pacing_gain) {
            return err("probe_down_pacing_gain", "in (0, 1.0]");
        }
        if !(Gain(1)..=Gain::ONE).contains(&self.probe_rtt_cwnd_gain) {
            return err("probe_rtt_cwnd_gain", "in (0, 1.0]");
        }
        limits::full_bw(self.full_bw_thresh, self.full_bw_cnt)?;
        if self.full_loss_cnt > 15 {
            return err("full_loss_cnt", "in 0..=15");
        }
        if !(1..=50).contains(&self.loss_thresh_percent) {
            return err("loss_thresh_percent", "in 1..=50");
        }
        if !(1..=99).contains(&self.beta_percent) {
            return err("beta_percent", "in 1..=99");
        }
        if self.headroom_percent > 50 {
            return err("headroom_percent", "in 0..=50");
        }
        limits::min_rtt_win(self.min_rtt_win)?;
        if self.probe_rtt_interval.is_zero() || self.probe_rtt_interval > self.min_rtt_win {
            return err("probe_rtt_interval", "in (0, min_rtt_win]");
        }
        if self.probe_rtt_duration > self.probe_rtt_interval {
            return err("probe_rtt_duration", "at most probe_rtt_interval");
        }
        if self.probe_wait_base > Duration::from_secs(3600) {
            return err("probe_wait_base", "at most 3600 s");
        }
        if self.probe_wait_rand > Duration::from_secs(3600) {
            return err("probe_wait_rand", "at most 3600 s");
        }
        if !(1..=255).contains(&self.bw_probe_max_rounds) {
            return err("bw_probe_max_rounds", "in 1..=255");
        }
        limits::pacing_margin_percent(self.pacing_margin_percent)?;
        limits::cwnd_min_target_pkts(self.cwnd_min_target_pkts)?;
        limits::extra_acked_gain(self.extra_acked_gain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_gains_in_fixed_point() {
        let (v2, v3) = (Bbr2Config::v2(), Bbr2Config::v3());
        // v3: 256 * 277 / 100 + 1 = 710 (2.773); cwnd 2.0 = 512.
        assert_eq!((v3.startup_pacing_gain.0, v3.startup_cwnd_gain.0), (710, 512));
        // v2: 256 * 2885 / 1000 + 1 = 739 (2.887) for both.
        assert_eq!((v2.startup_pacing_gain.0, v2.startup_cwnd_gain.0), (739, 739));
        // Drain: v3 0.5 = 128, v2 256 * 1000 / 2885 = 88.
        assert_eq!((v3.drain_pacing_gain.0, v2.drain_pacing_gain.0), (128, 88));
        // DOWN: v3 256 * 9 / 10 = 230 (0.898), v2 0.75 = 192; UP cwnd: 2.25 = 576 vs 2.0.
        assert_eq!((v3.probe_down_pacing_gain.0, v2.probe_down_pacing_gain.0), (230, 192));
        assert_eq!((v3.probe_up_cwnd_gain.0, v2.probe_up_cwnd_gain.0), (576, 512));
        assert_eq!((v3.full_loss_cnt, v2.full_loss_cnt), (6, 8));
        // Shared: 1.25 probe, 0.5 ProbeRTT cwnd, 5 s / 200 ms ProbeRTT.
        for c in [v2, v3] {
            assert_eq!(c.probe_up_pacing_gain.as_f64(), 1.25);
            assert_eq!(c.probe_rtt_cwnd_gain.as_f64(), 0.5);
            assert_eq!(c.probe_rtt_interval, Duration::from_secs(5));
            assert_eq!(c.probe_rtt_duration, Duration::from_millis(200));
            assert_eq!((c.loss_thresh_percent, c.beta_percent, c.headroom_percent), (2, 70, 15));
        }
    }

    #[test]
    fn defaults_validate_and_errors_name_the_field() {
        assert_eq!(Bbr2Config::v2().validate(), Ok(()));
        assert_eq!(Bbr2Config::v3().validate(), Ok(()));
        let bad = Bbr2Config { loss_thresh_percent: 0, ..Bbr2Config::v3() };
        assert_eq!(
            bad.validate().unwrap_err().to_string(),
            "bbr2.loss_thresh_percent: must be in 1..=50"
        );
        let bad = Bbr2Config { probe_rtt_interval: Duration::from_secs(11), ..Bbr2Config::v3() };
        assert_eq!(bad.validate().unwrap_err().field, "probe_rtt_interval");
        let bad = Bbr2Config { probe_down_pacing_gain: Gain(300), ..Bbr2Config::v2() };
        assert_eq!(bad.validate().unwrap_err().field, "probe_down_pacing_gain");
    }
}
