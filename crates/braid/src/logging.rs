//! Logging of the long-running subcommands (`braid tunnel`, `braid lab`, `braid linkem`,
//! `braid sweep --backend lab`): tracing events as text (or JSON lines) on stderr, filtered by
//! `RUST_LOG`, by default at info level. Without it the test bed's warnings (a namespace that
//! could not be deleted, a child that needed SIGKILL) would go nowhere. A `RUST_LOG` that does
//! not parse is an error naming it, not a silent fall-back to the default.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// The level when `RUST_LOG` is unset or empty.
const DEFAULT_FILTER: &str = "info";

/// A `RUST_LOG` value that is not a tracing filter.
#[derive(Debug, thiserror::Error)]
#[error(
    "RUST_LOG = {value:?}: not a log filter ({reason}); use a level (error, warn, info, debug, \
     trace), optionally per module: \"warn,braid_net=debug\""
)]
pub struct LogFilterError {
    value: String,
    reason: String,
}

/// Installs the subscriber for this process; `json` writes JSON lines instead of text. Text
/// is coloured only on a terminal, and not even there with `NO_COLOR` set (no-color.org): a
/// log file or the journal gets plain lines.
pub fn init(json: bool) -> Result<(), LogFilterError> {
    let filter = filter(std::env::var("RUST_LOG").ok().as_deref())?;
    let colour = colour(std::io::stderr().is_terminal(), std::env::var_os("NO_COLOR").as_deref());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
    Ok(())
}

/// Whether to colour text logs: on a terminal, unless `NO_COLOR` is set to anything non-empty.
fn colour(terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

/// The filter of a `RUST_LOG` value: [`DEFAULT_FILTER`] when unset or empty, else its
/// directives, which must parse.
fn filter(rust_log: Option<&str>) -> Result<EnvFilter, LogFilterError> {
    match rust_log.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(EnvFilter::new(DEFAULT_FILTER)),
        Some(directives) => EnvFilter::try_new(directives)
            .map_err(|e| LogFilterError { value: directives.to_string(), reason: e.to_string() }),
    }
}

#[cfg(test)]
mod tests {
    use tracing_subscriber::filter::LevelFilter;

    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        use std::ffi::OsStr;
        assert!(colour(true, None));
        assert!(!colour(false, None), "a pipe or file gets no escape codes");
        assert!(!colour(true, Some(OsStr::new("1"))));
        assert!(colour(true, Some(OsStr::new(""))), "an empty NO_COLOR is unset (no-color.org)");
    }

    #[test]
    fn rust_log_chooses_the_level_and_info_is_the_default() {
        let level = |v| filter(v).unwrap().max_level_hint();
        assert_eq!(level(None), Some(LevelFilter::INFO));
        assert_eq!(level(Some("")), Some(LevelFilter::INFO), "empty is unset");
        assert_eq!(level(Some("warn")), Some(LevelFilter::WARN));
        assert_eq!(level(Some("warn,braid_net=debug")), Some(LevelFilter::DEBUG));
    }

    #[test]
    fn a_rust_log_that_does_not_parse_is_an_error_naming_it() {
        let err = filter(Some("braid_net=loud")).unwrap_err().to_string();
        assert!(err.starts_with("RUST_LOG = \"braid_net=loud\": not a log filter"), "{err}");
        assert!(err.contains("warn,braid_net=debug"), "{err}");
    }
}
