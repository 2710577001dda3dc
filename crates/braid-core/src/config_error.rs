//! The one error every configuration's `validate` returns in the congestion controllers
//! ([`crate::cc`]) and the schedulers ([`crate::sched`]): which field is out of range and what
//! it must be.

/// A configuration value out of range: `field` as its config struct names it, `allowed` the
/// range it must lie in (e.g. `in 1..=50`). `Display` reads `<scope><field>: must be
/// <allowed>`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{scope}{field}: must be {allowed}")]
pub struct ConfigError {
    pub field: &'static str,
    pub allowed: &'static str,
    /// Printed before `field`, dot included (`bbr.`, `bbr2.`), by configs whose messages name
    /// their algorithm; empty where the field's name says it (`blest.lambda_max`) or the
    /// caller adds the context (`wvegas.` in [`crate::cc::CcTuningError`]).
    pub scope: &'static str,
}

impl ConfigError {
    /// `field` out of range, printed without a scope.
    pub const fn new(field: &'static str, allowed: &'static str) -> Self {
        ConfigError { field, allowed, scope: "" }
    }

    /// The same error, printed with `scope` (dot included) before the field.
    pub const fn scoped(self, scope: &'static str) -> Self {
        ConfigError { scope, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_field_and_its_range_after_the_scope() {
        let e = ConfigError::new("abc_limit_segments", "at least 1");
        assert_eq!(e.to_string(), "abc_limit_segments: must be at least 1");
        let e = ConfigError::new("drain_gain", "in (0, 1.0]").scoped("bbr.");
        assert_eq!(e.to_string(), "bbr.drain_gain: must be in (0, 1.0]");
        assert_eq!((e.field, e.allowed), ("drain_gain", "in (0, 1.0]"));
    }
}
