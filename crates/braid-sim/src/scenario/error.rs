//! What can go wrong while loading a scenario. Every variant names the file, the `--set`
//! argument, the dotted field or the scenario key at fault, and what would have been accepted.

use std::path::PathBuf;

use braid_config::FieldError;

/// An error from reading, overriding, deserializing, resolving or validating a scenario.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ScenarioError {
    /// The scenario file could not be read.
    #[error("cannot read scenario file {}: {message}", path.display())]
    Io { path: PathBuf, message: String },

    /// The text is not TOML. `file` is set when the text came from [`super::Scenario::load`].
    #[error("TOML syntax error in {}: {message}", file.as_ref().map_or_else(|| "scenario text".to_string(), |f| f.display().to_string()))]
    Syntax { file: Option<PathBuf>, message: String },

    /// A `--set` argument is not of the form `dotted.key=value`, or walks through a value that
    /// is not a table or an array.
    #[error("--set {given:?}: {reason}")]
    OverrideSyntax { given: String, reason: String },

    /// A `--set` argument indexes past the end of an array (`paths.2.rtt_ms` with two paths).
    #[error("--set {given:?}: index {index} is out of range: {array} has {len} entries")]
    OverrideIndex { given: String, array: String, index: usize, len: usize },

    /// An unknown key, a value of the wrong type or an unknown name, or a value out of its
    /// range; names the full dotted key ([`FieldError`], shared with the daemon's config).
    #[error(transparent)]
    Field(#[from] FieldError),

    /// A trace file named by `field` could not be read or is not a valid Mahimahi trace.
    #[error("{field}: trace file {}: {message}", path.display())]
    Trace { field: String, path: PathBuf, message: String },

    /// A scenario key that Table 2 does not define.
    #[error("unknown scenario key {key:?}; expected one of: {allowed}")]
    UnknownKey { key: String, allowed: String },

    /// Two keys of one group (two RTT keys, two placement keys, ...).
    #[error("scenario keys {first} and {second} both set the {group}; give at most one")]
    ConflictingKeys { group: &'static str, first: &'static str, second: &'static str },

    /// A known key that cannot be applied to this scenario.
    #[error("scenario key {key}: {reason}")]
    KeyNotApplicable { key: &'static str, reason: String },

    /// The scenario could not be written as TOML.
    #[error("cannot write the scenario as TOML: {message}")]
    Serialize { message: String },
}

impl ScenarioError {
    /// An out-of-range value; `allowed` reads as a predicate ("must be in (0, 100000]").
    pub(crate) fn invalid(
        field: impl Into<String>,
        value: impl std::fmt::Display,
        allowed: impl Into<String>,
    ) -> Self {
        ScenarioError::Field(FieldError::invalid(field, value, allowed))
    }
}
