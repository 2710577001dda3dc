//! The algorithms' parameters as configuration tables: `[tunnel.acpf]`, `[tunnel.blest]`,
//! `[tunnel.ecf]` (schedulers), `[tunnel.bbr2]`, `[tunnel.wvegas]`, `[tunnel.coupled_cubic]`
//! (tunnel congestion control) and `[e2e.bbr2]` (the simulator's end-to-end BBRv2/v3).
//!
//! Where the core's config has only numbers and flags (BLEST, ECF, wVegas, Coupled CUBIC) the
//! table *is* the core's struct (serde derives behind braid-core's `serde` feature). Where it
//! has durations or an optional field (ACPF, BBRv2), a table here mirrors it field for field,
//! under the core's names, with durations as `*_ms` floats like the rest of the configuration;
//! its `Default` is converted from the core's `Default`, so a configuration without the table
//! runs exactly as before.
//!
//! Validation runs the core's own `validate`, so every range is written once, in the core; only
//! the core's field names are mapped to dotted keys (`acpf.tick` is `tunnel.acpf.tick_ms`), both
//! the field out of range and any field its range names (`in [tick, 3600 s]` reads
//! `in [tunnel.acpf.tick_ms, 3600 s]`). The algorithm's name elsewhere in the configuration
//! decides which table is read; every table is validated whichever runs.
//!
//! `[tunnel.bbr2]` is read by `tunnel.cc = "bbr2"` and `"bbr3"` alike (the version comes from
//! the name), `[e2e.bbr2]` by `e2e.cc = "bbr2"` and `"bbr3"`.

use std::time::Duration;

use braid_core::cc::{Bbr2Tuning, CcTuning};
use braid_core::sched::{AcpfConfig, SchedulerConfig};
use serde::{Deserialize, Serialize};
use toml::Value;

use crate::{FieldError, TunnelConfig};

/// A `*_ms` field as the core's duration, rounded to the nanosecond. NaN and negative values
/// become zero and huge ones saturate; [`check`] rejects them before they get here.
fn duration(ms: f64) -> Duration {
    Duration::from_nanos((ms * 1e6).round() as u64)
}

/// A core duration as a `*_ms` field; exact for every whole number of nanoseconds below 2^53.
fn ms(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

/// `[tunnel.acpf]`: [`AcpfConfig`] (Pieska et al. 2021, ACPF).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AcpfTable {
    /// The fraction grows while the scheduler queue holds more than this many packets.
    pub queue_threshold_pkts: u64,
    pub min_fraction: f64,
    pub max_fraction: f64,
    /// Fraction before the first management step; unset starts at `min_fraction`, as the
    /// core's default does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_fraction: Option<f64>,
    /// Interval of the management step, ms.
    pub tick_ms: f64,
    /// Time from `min_fraction` to `max_fraction` at the persistent-queue step, ms.
    pub ramp_up_ms: f64,
    /// A queue above the threshold for longer than this is persistent, ms.
    pub persistent_after_ms: f64,
    /// The transient-queue step is the persistent step divided by this.
    pub transient_step_divisor: u32,
    /// Time from `max_fraction` to `min_fraction` while the queue stays short, ms.
    pub ramp_down_ms: f64,
}

impl Default for AcpfTable {
    fn default() -> Self {
        let c = AcpfConfig::default();
        AcpfTable {
            queue_threshold_pkts: c.queue_threshold_pkts as u64,
            min_fraction: c.min_fraction,
            max_fraction: c.max_fraction,
            initial_fraction: (c.initial_fraction != c.min_fraction).then_some(c.initial_fraction),
            tick_ms: ms(c.tick),
            ramp_up_ms: ms(c.ramp_up),
            persistent_after_ms: ms(c.persistent_after),
            transient_step_divisor: c.transient_step_divisor,
            ramp_down_ms: ms(c.ramp_down),
        }
    }
}

impl AcpfTable {
    pub fn to_core(&self) -> AcpfConfig {
        AcpfConfig {
            queue_threshold_pkts: usize::try_from(self.queue_threshold_pkts).unwrap_or(usize::MAX),
            min_fraction: self.min_fraction,
            max_fraction: self.max_fraction,
            initial_fraction: self.initial_fraction.unwrap_or(self.min_fraction),
            tick: duration(self.tick_ms),
            ramp_up: duration(self.ramp_up_ms),
            persistent_after: duration(self.persistent_after_ms),
            transient_step_divisor: self.transient_step_divisor,
            ramp_down: duration(self.ramp_down_ms),
        }
    }
}

/// `[tunnel.bbr2]` and `[e2e.bbr2]`: [`Bbr2Tuning`], the BBRv2/v3 parameters of
/// draft-ietf-ccwg-bbr section 2 that a study varies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Bbr2Table {
    /// Highest per-round loss rate tolerated while probing, percent (`BBR.LossThresh`).
    pub loss_thresh_percent: u64,
    /// Multiplicative decrease on a lossy round, percent (`BBR.Beta`).
    pub beta_percent: u64,
    /// Share of `inflight_hi` left free after a lossy probe, percent (`BBR.Headroom`).
    pub headroom_percent: u64,
    /// `BBR.ProbeRTTInterval`, ms.
    pub probe_rtt_interval_ms: f64,
    /// `BBR.ProbeRTTDuration`, ms; 0 disables ProbeRTT.
    pub probe_rtt_duration_ms: f64,
    /// Base of the wait between bandwidth probes, ms (`bbr_bw_probe_base_us`).
    pub probe_wait_base_ms: f64,
    /// Upper bound of the random part of that wait, ms (`bbr_bw_probe_rand_us`).
    pub probe_wait_rand_ms: f64,
    /// Upper bound of the Reno-coexistence probe interval, rounds.
    pub bw_probe_max_rounds: u64,
}

impl Default for Bbr2Table {
    fn default() -> Self {
        let c = Bbr2Tuning::default();
        Bbr2Table {
            loss_thresh_percent: c.loss_thresh_percent,
            beta_percent: c.beta_percent,
            headroom_percent: c.headroom_percent,
            probe_rtt_interval_ms: ms(c.probe_rtt_interval),
            probe_rtt_duration_ms: ms(c.probe_rtt_duration),
            probe_wait_base_ms: ms(c.probe_wait_base),
            probe_wait_rand_ms: ms(c.probe_wait_rand),
            bw_probe_max_rounds: c.bw_probe_max_rounds,
        }
    }
}

impl Bbr2Table {
    pub fn to_core(&self) -> Bbr2Tuning {
        Bbr2Tuning {
            loss_thresh_percent: self.loss_thresh_percent,
            beta_percent: self.beta_percent,
            headroom_percent: self.headroom_percent,
            probe_rtt_interval: duration(self.probe_rtt_interval_ms),
            probe_rtt_duration: duration(self.probe_rtt_duration_ms),
            probe_wait_base: duration(self.probe_wait_base_ms),
            probe_wait_rand: duration(self.probe_wait_rand_ms),
            bw_probe_max_rounds: self.bw_probe_max_rounds,
        }
    }
}

/// The scheduler parameters of `[tunnel.acpf]`, `[tunnel.blest]` and `[tunnel.ecf]`.
pub(crate) fn scheduler_config(t: &TunnelConfig) -> SchedulerConfig {
    SchedulerConfig { acpf: t.acpf.to_core(), blest: t.blest.clone(), ecf: t.ecf.clone() }
}

/// The congestion-control parameters of `[tunnel.bbr2]`, `[tunnel.wvegas]` and
/// `[tunnel.coupled_cubic]`.
pub(crate) fn cc_tuning(t: &TunnelConfig) -> CcTuning {
    CcTuning { bbr2: t.bbr2.to_core(), wvegas: t.wvegas, coupled_cubic: t.coupled_cubic }
}

/// Checks the tuning tables of `[tunnel]`; the error names the first bad field's dotted key.
pub(crate) fn validate_tunnel(t: &TunnelConfig) -> Result<(), FieldError> {
    check("tunnel.acpf", &t.acpf, |a| a.to_core().validate().map_err(|e| (e.field, e.allowed)))?;
    check("tunnel.blest", &t.blest, |b| b.validate().map_err(|e| (e.field, e.allowed)))?;
    check("tunnel.ecf", &t.ecf, |e| e.validate().map_err(|e| (e.field, e.allowed)))?;
    validate_bbr2("tunnel.bbr2", &t.bbr2)?;
    check("tunnel.wvegas", &t.wvegas, |w| w.validate().map_err(|e| (e.field, e.allowed)))?;
    check("tunnel.coupled_cubic", &t.coupled_cubic, |c| {
        c.validate().map_err(|e| (e.field, e.allowed))
    })
}

/// Checks a `bbr2` table at `prefix` (`tunnel.bbr2` or `e2e.bbr2`).
pub fn validate_bbr2(prefix: &str, table: &Bbr2Table) -> Result<(), FieldError> {
    check(prefix, table, |b| b.to_core().validate().map_err(|e| (e.field, e.allowed)))
}

/// Checks the table at `prefix`: every `*_ms` field a finite, non-negative number, then the
/// core's `validate`, whose error (the core's field name, perhaps prefixed by the algorithm's
/// as `acpf.tick`, and its allowed range) is reported under the table's dotted key.
fn check<T: Serialize>(
    prefix: &str,
    table: &T,
    core_validate: impl FnOnce(&T) -> Result<(), (&'static str, &'static str)>,
) -> Result<(), FieldError> {
    let values = toml::Table::try_from(table).map_err(FieldError::serialize)?;
    for (key, value) in &values {
        if let (true, Value::Float(v)) = (key.ends_with("_ms"), value) {
            if !(v.is_finite() && *v >= 0.0) {
                return Err(FieldError::invalid(
                    format!("{prefix}.{key}"),
                    v,
                    "must be a finite duration of at least 0 ms",
                ));
            }
        }
    }
    let Err((core_field, allowed)) = core_validate(table) else { return Ok(()) };
    let name = prefix.rsplit('.').next().unwrap_or(prefix);
    let field =
        core_field.strip_prefix(name).and_then(|f| f.strip_prefix('.')).unwrap_or(core_field);
    let allowed = format!("must be {}", with_dotted_keys(allowed, prefix, &values));
    match key_of(&values, field) {
        Some(key) => {
            Err(FieldError::invalid(format!("{prefix}.{key}"), show(&values[key]), allowed))
        }
        None => Err(FieldError::BadField { field: format!("{prefix}.{field}"), reason: allowed }),
    }
}

/// The table's key for the core's field `name`: the same name, or `name_ms` for a duration.
fn key_of<'a>(values: &'a toml::Table, name: &str) -> Option<&'a str> {
    let ms_key = format!("{name}_ms");
    values.get_key_value(name).or_else(|| values.get_key_value(&ms_key)).map(|(k, _)| k.as_str())
}

/// A core range with every field of the table it names (`in [tick, 3600 s]`, `at most
/// probe_rtt_interval`) written as the dotted key the user sets (`tunnel.acpf.tick_ms`,
/// `tunnel.bbr2.probe_rtt_interval_ms`); other words are kept.
fn with_dotted_keys(allowed: &str, prefix: &str, values: &toml::Table) -> String {
    let mut out = String::with_capacity(allowed.len() + 64);
    let mut rest = allowed;
    while let Some(start) = rest.find(|c: char| c.is_ascii_alphanumeric() || c == '_') {
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end =
            rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        let word = &rest[..end];
        match key_of(values, word) {
            Some(key) => {
                out.push_str(prefix);
                out.push('.');
                out.push_str(key);
            }
            None => out.push_str(word),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// A value as the other scenario errors print it (floats by Rust's `Display`: `0.5`, `1`).
fn show(value: &Value) -> String {
    match value {
        Value::Float(v) => v.to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid_core::cc::bbr2::{Bbr2Config, Version};

    #[test]
    fn default_tables_are_the_core_defaults() {
        let t = TunnelConfig::default();
        assert_eq!(scheduler_config(&t), SchedulerConfig::default());
        assert_eq!(cc_tuning(&t), CcTuning::default());
        assert_eq!(t.acpf.initial_fraction, None, "the core starts ACPF at its minimum");
        // The table's durations are the draft's: 5 s, 200 ms, 2 s, 1 s.
        let b = Bbr2Table::default();
        assert_eq!(
            (
                b.probe_rtt_interval_ms,
                b.probe_rtt_duration_ms,
                b.probe_wait_base_ms,
                b.probe_wait_rand_ms
            ),
            (5000.0, 200.0, 2000.0, 1000.0)
        );
        assert_eq!(b.to_core().config(Version::V3, 0), Bbr2Config::v3());
        validate_tunnel(&t).unwrap();
    }

    #[test]
    fn ms_fields_round_to_the_nanosecond() {
        // 0.3 ms is 299 999.999... ns in binary; rounding keeps it 300 000 ns.
        assert_eq!(duration(0.3), Duration::from_nanos(300_000));
        assert_eq!(duration(530.0), Duration::from_millis(530));
        assert_eq!(ms(Duration::from_millis(530)), 530.0);
        assert_eq!(duration(f64::NAN), Duration::ZERO, "never a panic; validation rejects it");
        assert_eq!(duration(-5.0), Duration::ZERO);
    }

    #[test]
    fn unset_initial_fraction_follows_min_fraction() {
        let acpf = AcpfTable { min_fraction: 0.6, ..AcpfTable::default() };
        assert_eq!(acpf.to_core().initial_fraction, 0.6);
        let acpf = AcpfTable { initial_fraction: Some(0.8), ..acpf };
        assert_eq!(acpf.to_core().initial_fraction, 0.8);
    }

    /// The validation error of the default tunnel section after `edit`.
    fn err(edit: fn(&mut TunnelConfig)) -> String {
        let mut t = TunnelConfig::default();
        edit(&mut t);
        validate_tunnel(&t).unwrap_err().to_string()
    }

    #[test]
    fn core_errors_are_reported_under_the_dotted_key() {
        assert_eq!(
            err(|t| t.acpf.min_fraction = 0.0),
            "tunnel.acpf.min_fraction = 0: must be in (0, 1]"
        );
        assert_eq!(
            err(|t| t.acpf.tick_ms = 0.0),
            "tunnel.acpf.tick_ms = 0: must be in [1 us, 1 s]"
        );
        assert_eq!(
            err(|t| t.blest.lambda_max = 0.5),
            "tunnel.blest.lambda_max = 0.5: must be in [tunnel.blest.lambda_min, 10]"
        );
        assert_eq!(err(|t| t.ecf.beta = -1.0), "tunnel.ecf.beta = -1: must be in [0, 10]");
        assert_eq!(
            err(|t| t.bbr2.loss_thresh_percent = 51),
            "tunnel.bbr2.loss_thresh_percent = 51: must be in 1..=50"
        );
        assert_eq!(
            err(|t| t.bbr2.probe_rtt_duration_ms = 6000.0),
            "tunnel.bbr2.probe_rtt_duration_ms = 6000: must be at most tunnel.bbr2.probe_rtt_interval_ms"
        );
        assert_eq!(
            err(|t| t.wvegas.total_alpha_pkts = 0),
            "tunnel.wvegas.total_alpha_pkts = 0: must be at least 1"
        );
        assert_eq!(
            err(|t| t.coupled_cubic.beta = 1.0),
            "tunnel.coupled_cubic.beta = 1: must be in the open interval (0, 1)"
        );
        // A negative or NaN duration never reaches the core's conversion.
        assert_eq!(
            err(|t| t.acpf.persistent_after_ms = -1.0),
            "tunnel.acpf.persistent_after_ms = -1: must be a finite duration of at least 0 ms"
        );
        assert!(err(|t| t.bbr2.probe_wait_rand_ms = f64::NAN)
            .starts_with("tunnel.bbr2.probe_wait_rand_ms = NaN"));
        assert!(validate_bbr2("e2e.bbr2", &Bbr2Table { beta_percent: 0, ..Bbr2Table::default() })
            .unwrap_err()
            .to_string()
            .starts_with("e2e.bbr2.beta_percent = 0: must be in 1..=99"));
    }

    /// A range bounded by another field names that field's dotted key, never a core name the
    /// scenario does not have (`min_rtt_win`, `tick`, `probe_rtt_interval`).
    #[test]
    fn ranges_name_scenario_keys_only() {
        assert_eq!(
            err(|t| t.bbr2.probe_rtt_interval_ms = 20000.0),
            "tunnel.bbr2.probe_rtt_interval_ms = 20000: must be in (0, 10 s] (the min_rtt filter window)"
        );
        assert_eq!(
            err(|t| t.bbr2.probe_rtt_interval_ms = 0.0),
            "tunnel.bbr2.probe_rtt_interval_ms = 0: must be in (0, 10 s] (the min_rtt filter window)"
        );
        // 0.5 ms is below the 1 ms tick.
        assert_eq!(
            err(|t| t.acpf.ramp_up_ms = 0.5),
            "tunnel.acpf.ramp_up_ms = 0.5: must be in [tunnel.acpf.tick_ms, 3600 s]"
        );
        assert_eq!(
            err(|t| t.acpf.ramp_down_ms = 0.5),
            "tunnel.acpf.ramp_down_ms = 0.5: must be in [tunnel.acpf.tick_ms, 3600 s]"
        );
        // 0.3 is below the 0.47 minimum.
        assert_eq!(
            err(|t| t.acpf.max_fraction = 0.3),
            "tunnel.acpf.max_fraction = 0.3: must be in [tunnel.acpf.min_fraction, 1]"
        );
        assert_eq!(
            err(|t| t.acpf.initial_fraction = Some(0.2)),
            "tunnel.acpf.initial_fraction = 0.2: must be in [tunnel.acpf.min_fraction, tunnel.acpf.max_fraction]"
        );
        assert_eq!(
            err(|t| t.blest.lambda_initial = 2.0),
            "tunnel.blest.lambda_initial = 2: must be in [tunnel.blest.lambda_min, tunnel.blest.lambda_max]"
        );
        let e2e = Bbr2Table { probe_rtt_duration_ms: 6000.0, ..Bbr2Table::default() };
        assert_eq!(
            validate_bbr2("e2e.bbr2", &e2e).unwrap_err().to_string(),
            "e2e.bbr2.probe_rtt_duration_ms = 6000: must be at most e2e.bbr2.probe_rtt_interval_ms"
        );
        // Words of a range that are not fields stay as they are.
        let values = toml::Table::try_from(Bbr2Table::default()).unwrap();
        assert_eq!(
            with_dotted_keys("in (0, 10 s] (the min_rtt filter window)", "x", &values),
            "in (0, 10 s] (the min_rtt filter window)"
        );
    }
}
