//! What can be wrong with one field of a configuration section. Every variant names the full
//! dotted key at fault (`tunnel.acpf.tick_ms`) and what would have been accepted. The drivers
//! wrap it in their own errors (the simulator's `ScenarioError`, the daemon's `ConfigError`).

/// An error in one field of a configuration table.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FieldError {
    /// A key that no section has (`deny_unknown_fields`); `field` is the full dotted key.
    #[error("unknown field {field}; expected one of: {allowed}")]
    UnknownField { field: String, allowed: String },

    /// A value of the wrong type or an unknown name, caught while deserializing `field`.
    #[error("{field}: {reason}")]
    BadField { field: String, reason: String },

    /// A value of the right type outside its allowed range, caught by validation.
    #[error("{field} = {value}: {allowed}")]
    InvalidValue { field: String, value: String, allowed: String },

    /// A section could not be written as TOML.
    #[error("cannot write the configuration as TOML: {message}")]
    Serialize { message: String },
}

impl FieldError {
    /// An out-of-range value; `allowed` reads as a predicate ("must be in (0, 100000]").
    pub fn invalid(
        field: impl Into<String>,
        value: impl std::fmt::Display,
        allowed: impl Into<String>,
    ) -> Self {
        FieldError::InvalidValue {
            field: field.into(),
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }

    /// A section that could not be turned into a TOML table.
    pub fn serialize(e: impl std::fmt::Display) -> Self {
        FieldError::Serialize { message: e.to_string() }
    }
}
