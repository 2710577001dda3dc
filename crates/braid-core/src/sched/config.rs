//! Parameters of the schedulers that have any, validated in one place.
//!
//! Each algorithm owns its config struct next to its code ([`AcpfConfig`], [`BlestConfig`],
//! [`EcfConfig`]); this file gathers them for the tunnel configuration. Their `validate`
//! methods return a [`ConfigError`] whose `field` is spelled `<scheduler>.<field>`.

use super::{AcpfConfig, BlestConfig, EcfConfig};
use crate::ConfigError;

/// Parameters of every scheduler; only the configured kind reads its part.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SchedulerConfig {
    pub acpf: AcpfConfig,
    pub blest: BlestConfig,
    pub ecf: EcfConfig,
}

impl SchedulerConfig {
    /// Checks every scheduler's parameters; the error names the first field out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.acpf.validate()?;
        self.blest.validate()?;
        self.ecf.validate()
    }
}

/// `Err` naming `field` (spelled `<scheduler>.<field>`) and its allowed range, for the
/// `validate` methods.
pub(crate) fn out_of_range(field: &'static str, allowed: &'static str) -> Result<(), ConfigError> {
    Err(ConfigError::new(field, allowed))
}

/// Whether `x` lies in `[lo, hi]`; false for NaN.
pub(crate) fn within(x: f64, lo: f64, hi: f64) -> bool {
    x >= lo && x <= hi
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_the_first_bad_field_is_named() {
        assert_eq!(SchedulerConfig::default().validate(), Ok(()));
        let mut c = SchedulerConfig::default();
        c.ecf.beta = -1.0;
        c.blest.lambda_max = 0.5;
        let e = c.validate().unwrap_err();
        assert_eq!(e.field, "blest.lambda_max", "BLEST is checked before ECF");
        assert!(e.to_string().starts_with("blest.lambda_max: must be"), "{e}");
    }

    #[test]
    fn nan_is_out_of_every_range() {
        assert!(!within(f64::NAN, 0.0, 1.0));
        assert!(within(1.0, 0.0, 1.0));
    }
}
