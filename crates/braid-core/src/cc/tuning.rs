//! The congestion-control parameters a tunnel configuration may change: what researchers vary
//! when they study "their own variations" of an algorithm, gathered in [`CcTuning`].
//!
//! Each algorithm keeps its full config next to its code ([`Bbr2Config`], [`WvegasConfig`],
//! [`CoupledCubicConfig`]); this file chooses which of their fields a configuration file may
//! set and validates them with the algorithms' own `validate` methods, so no range is written
//! twice. `Default` everywhere is the algorithms' default, so a tunnel that sets nothing runs
//! exactly as before.
//!
//! BBRv2 and BBRv3 share one table, [`Bbr2Tuning`]: the version comes from the algorithm's
//! name (`bbr2`, `bbr3`), and the fields exposed here have the same default in both versions
//! (draft-ietf-ccwg-bbr section 2 and the v2alpha / v3 kernels agree on them), so one set of
//! values overrides either version's defaults without touching the fields where they differ.

use std::time::Duration;

use super::bbr2::{self, Bbr2Config, Version};
use super::coupled::{CoupledCubicConfig, WvegasConfig};
use crate::ConfigError;

/// The range of [`Bbr2Tuning::probe_rtt_interval`]: up to the min_rtt filter window
/// ([`bbr2::config::MIN_RTT_WIN`]), whose min_rtt expiry makes ProbeRTT due anyway.
const PROBE_RTT_INTERVAL_ALLOWED: &str = "in (0, 10 s] (the min_rtt filter window)";

/// The BBRv2/v3 parameters a configuration may set; every other [`Bbr2Config`] field keeps
/// its version's default. `Default` is the draft's value of each (section 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bbr2Tuning {
    /// Highest per-round loss rate tolerated while probing, percent (`BBR.LossThresh`, 2).
    pub loss_thresh_percent: u64,
    /// Multiplicative decrease on a lossy round, percent (`BBR.Beta`, 70).
    pub beta_percent: u64,
    /// Share of `inflight_hi` left free after a lossy probe, percent (`BBR.Headroom`, 15).
    pub headroom_percent: u64,
    /// ProbeRTT is due when the ProbeRTT min filter is this old (`BBR.ProbeRTTInterval`, 5 s).
    pub probe_rtt_interval: Duration,
    /// Minimum time at the ProbeRTT cwnd (`BBR.ProbeRTTDuration`, 200 ms); zero disables
    /// ProbeRTT.
    pub probe_rtt_duration: Duration,
    /// Base of the wall-clock wait between bandwidth probes (`bbr_bw_probe_base_us`, 2 s).
    pub probe_wait_base: Duration,
    /// Upper bound of the random part added to that wait (`bbr_bw_probe_rand_us`, 1 s).
    pub probe_wait_rand: Duration,
    /// Upper bound of the Reno-coexistence probe interval, rounds (`bbr_bw_probe_max_rounds`,
    /// 63).
    pub bw_probe_max_rounds: u64,
}

impl Default for Bbr2Tuning {
    fn default() -> Self {
        Bbr2Tuning {
            loss_thresh_percent: bbr2::config::LOSS_THRESH_PERCENT,
            beta_percent: bbr2::config::BETA_PERCENT,
            headroom_percent: bbr2::config::HEADROOM_PERCENT,
            probe_rtt_interval: bbr2::config::PROBE_RTT_INTERVAL,
            probe_rtt_duration: bbr2::config::PROBE_RTT_DURATION,
            probe_wait_base: bbr2::config::PROBE_WAIT_BASE,
            probe_wait_rand: bbr2::config::PROBE_WAIT_RAND,
            bw_probe_max_rounds: bbr2::config::BW_PROBE_MAX_ROUNDS,
        }
    }
}

impl Bbr2Tuning {
    /// `base` (a version's defaults) with these values in place of its own.
    pub fn apply(&self, base: Bbr2Config) -> Bbr2Config {
        Bbr2Config {
            loss_thresh_percent: self.loss_thresh_percent,
            beta_percent: self.beta_percent,
            headroom_percent: self.headroom_percent,
            probe_rtt_interval: self.probe_rtt_interval,
            probe_rtt_duration: self.probe_rtt_duration,
            probe_wait_base: self.probe_wait_base,
            probe_wait_rand: self.probe_wait_rand,
            bw_probe_max_rounds: self.bw_probe_max_rounds,
            ..base
        }
    }

    /// The configuration a `version` controller runs with these values and `seed`.
    pub fn config(&self, version: Version, seed: u64) -> Bbr2Config {
        Bbr2Config { seed, ..self.apply(Bbr2Config::for_version(version)) }
    }

    /// Checks the values against [`Bbr2Config::validate`] on both versions' defaults.
    ///
    /// The ProbeRTT interval is checked first, against the min_rtt filter window that a tuning
    /// cannot change ([`bbr2::config::MIN_RTT_WIN`], 10 s in both versions): the config's own
    /// check states that bound as `min_rtt_win`, a field no configuration file can set, so
    /// this one states it as a number.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let interval = self.probe_rtt_interval;
        if interval.is_zero() || interval > bbr2::config::MIN_RTT_WIN {
            return Err(
                ConfigError::new("probe_rtt_interval", PROBE_RTT_INTERVAL_ALLOWED).scoped("bbr2.")
            );
        }
        self.config(Version::V2, 0).validate()?;
        self.config(Version::V3, 0).validate()
    }
}

/// The tunable parameters of every tunnel congestion control that has any; only the
/// configured algorithm reads its part.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CcTuning {
    /// Read by `bbr2` and `bbr3`.
    pub bbr2: Bbr2Tuning,
    /// Read by `wvegas`.
    pub wvegas: WvegasConfig,
    /// Read by `coupled_cubic`.
    pub coupled_cubic: CoupledCubicConfig,
}

impl CcTuning {
    /// Checks every algorithm's part; the error names the first field out of range.
    pub fn validate(&self) -> Result<(), CcTuningError> {
        self.bbr2.validate().map_err(CcTuningError::Bbr2)?;
        self.wvegas.validate().map_err(CcTuningError::Wvegas)?;
        self.coupled_cubic.validate().map_err(CcTuningError::CoupledCubic)
    }
}

/// A [`CcTuning`] value out of range; its `Display` reads `<algorithm>.<field>: must be ...`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CcTuningError {
    #[error(transparent)]
    Bbr2(ConfigError),
    #[error("wvegas.{0}")]
    Wvegas(ConfigError),
    #[error("coupled_cubic.{0}")]
    CoupledCubic(ConfigError),
}

impl CcTuningError {
    /// The algorithm's part of [`CcTuning`]: `bbr2`, `wvegas` or `coupled_cubic`.
    pub fn algorithm(&self) -> &'static str {
        match self {
            CcTuningError::Bbr2(_) => "bbr2",
            CcTuningError::Wvegas(_) => "wvegas",
            CcTuningError::CoupledCubic(_) => "coupled_cubic",
        }
    }

    /// The field out of range, as the algorithm's config names it.
    pub fn field(&self) -> &'static str {
        match self {
            CcTuningError::Bbr2(e) | CcTuningError::Wvegas(e) | CcTuningError::CoupledCubic(e) => {
                e.field
            }
        }
    }

    /// Its allowed range, e.g. `in 1..=50`.
    pub fn allowed(&self) -> &'static str {
        match self {
            CcTuningError::Bbr2(e) | CcTuningError::Wvegas(e) | CcTuningError::CoupledCubic(e) => {
                e.allowed
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_tuning_leaves_both_versions_as_they_were() {
        for version in [Version::V2, Version::V3] {
            let config = Bbr2Config::for_version(version);
            assert_eq!(Bbr2Tuning::default().apply(config), config, "{version:?}");
            assert_eq!(Bbr2Tuning::default().config(version, 7).seed, 7);
        }
        assert_eq!(CcTuning::default().validate(), Ok(()));
    }

    #[test]
    fn tuning_replaces_its_fields_and_keeps_the_version_specific_ones() {
        let tuning = Bbr2Tuning {
            loss_thresh_percent: 5,
            beta_percent: 50,
            headroom_percent: 0,
            probe_rtt_interval: Duration::from_secs(2),
            probe_rtt_duration: Duration::from_millis(50),
            probe_wait_base: Duration::from_millis(500),
            probe_wait_rand: Duration::ZERO,
            bw_probe_max_rounds: 10,
        };
        let v2 = tuning.config(Version::V2, 0);
        assert_eq!((v2.loss_thresh_percent, v2.beta_percent, v2.headroom_percent), (5, 50, 0));
        assert_eq!(
            (v2.probe_rtt_interval, v2.probe_rtt_duration),
            (tuning.probe_rtt_interval, tuning.probe_rtt_duration)
        );
        assert_eq!(
            (v2.probe_wait_base, v2.probe_wait_rand),
            (tuning.probe_wait_base, Duration::ZERO)
        );
        assert_eq!(v2.bw_probe_max_rounds, 10);
        // v2alpha's DOWN gain (0.75 = 192/256) and Startup loss exit (8 events) are not
        // tunables and stay; v3 keeps its 0.9 and 6.
        assert_eq!((v2.probe_down_pacing_gain.0, v2.full_loss_cnt), (192, 8));
        let v3 = tuning.config(Version::V3, 0);
        assert_eq!((v3.version, v3.full_loss_cnt, v3.loss_thresh_percent), (Version::V3, 6, 5));
    }

    #[test]
    fn errors_name_the_algorithm_and_the_field() {
        let bad = |edit: fn(&mut CcTuning)| {
            let mut t = CcTuning::default();
            edit(&mut t);
            t.validate().unwrap_err()
        };
        let e = bad(|t| t.bbr2.loss_thresh_percent = 0);
        assert_eq!(
            (e.algorithm(), e.field(), e.allowed()),
            ("bbr2", "loss_thresh_percent", "in 1..=50")
        );
        assert_eq!(e.to_string(), "bbr2.loss_thresh_percent: must be in 1..=50");
        // ProbeRTT due every 100 ms cannot last its default 200 ms.
        let e = bad(|t| t.bbr2.probe_rtt_interval = Duration::from_millis(100));
        assert_eq!(e.field(), "probe_rtt_duration");
        let e = bad(|t| t.wvegas.total_alpha_pkts = 0);
        assert_eq!(e.to_string(), "wvegas.total_alpha_pkts: must be at least 1");
        let e = bad(|t| t.coupled_cubic.alpha_exponent = 2.0);
        assert_eq!((e.algorithm(), e.field()), ("coupled_cubic", "alpha_exponent"));
        assert_eq!(e.to_string(), "coupled_cubic.alpha_exponent: must be in [0.5, 1]");
    }

    /// The bound is the 10 s min_rtt window of both versions, stated as a number: a tuning
    /// cannot set `min_rtt_win`, so an error naming it would name nothing the user can change.
    #[test]
    fn probe_rtt_interval_is_bounded_by_the_10_s_min_rtt_window_named_as_a_number() {
        for version in [Version::V2, Version::V3] {
            assert_eq!(Bbr2Config::for_version(version).min_rtt_win, Duration::from_secs(10));
        }
        let with = |interval| Bbr2Tuning { probe_rtt_interval: interval, ..Bbr2Tuning::default() };
        assert_eq!(with(Duration::from_secs(10)).validate(), Ok(()));
        for interval in [Duration::ZERO, Duration::from_secs(10) + Duration::from_nanos(1)] {
            let e = with(interval).validate().unwrap_err();
            assert_eq!(
                e.to_string(),
                "bbr2.probe_rtt_interval: must be in (0, 10 s] (the min_rtt filter window)"
            );
            assert!(!e.allowed.contains("min_rtt_win"), "{e}");
        }
    }
}
