//! Why a reproduction stopped: one error type for every experiment, since they share the
//! folder, sweep and example machinery.

use std::path::PathBuf;

use braid_sweep::points::PointsError;
use braid_sweep::SweepError;

use crate::cells::TablesError;
use crate::series::SeriesError;

/// An option outside the range a reproduction accepts (the command line checks the same
/// ranges; this catches a library caller).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{flag} = {value} is out of range: must be in {range}")]
pub struct OptionError {
    /// The command-line flag, e.g. `--reps`.
    pub flag: &'static str,
    pub value: String,
    /// The accepted range as the message shows it, e.g. `1..=1000`.
    pub range: String,
}

impl OptionError {
    /// `Ok` when `value` lies in `lo..=hi`, else the error naming `flag` and the range.
    pub fn check<T: PartialOrd + std::fmt::Display>(
        flag: &'static str,
        value: T,
        lo: T,
        hi: T,
    ) -> Result<(), OptionError> {
        if value >= lo && value <= hi {
            Ok(())
        } else {
            Err(OptionError { flag, value: value.to_string(), range: format!("{lo}..={hi}") })
        }
    }
}

/// Why the reproduction stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReproduceError {
    #[error(
        "{} exists with other contents: this folder was made with other options (--reps, \
         --bytes, --seconds, contour points ...) or by another braid version; use another --out \
         folder",
        path.display()
    )]
    Changed { path: PathBuf },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{which} sweep: {source}")]
    Sweep { which: &'static str, source: SweepError },
    #[error("{which} spec: {source}")]
    Spec { which: &'static str, source: braid_sweep::SpecError },
    #[error(transparent)]
    Option(#[from] OptionError),
    #[error(transparent)]
    Points(#[from] PointsError),
    #[error(transparent)]
    Series(#[from] SeriesError),
    #[error("{which}: {source}")]
    Tables { which: &'static str, source: TablesError },
    #[error("the default scenario does not serialize: {0}")]
    Base(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_errors_name_the_flag_and_the_range() {
        assert!(OptionError::check("--reps", 3u32, 1, 1000).is_ok());
        let e = OptionError::check("--reps", 0u32, 1, 1000).unwrap_err();
        assert_eq!(e.to_string(), "--reps = 0 is out of range: must be in 1..=1000");
        let e =
            ReproduceError::from(OptionError::check("--seconds", 2000u32, 1, 1000).unwrap_err());
        assert_eq!(e.to_string(), "--seconds = 2000 is out of range: must be in 1..=1000");
    }
}
