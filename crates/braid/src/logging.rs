//! Logging of the long-running subcommands (`braid tunnel`, `braid lab`, `braid linkem`):
//! tracing events as text (or JSON lines) on stderr, filtered by `RUST_LOG`, by default at
//! info level. Without it the test bed's warnings (a namespace that could not be deleted, a
//! child that needed SIGKILL) would go nowhere.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// The level when `RUST_LOG` is unset or does not parse.
const DEFAULT_FILTER: &str = "info";

/// Installs the subscriber for this process; `json` writes JSON lines instead of text. Text
/// is coloured only on a terminal, and not even there with `NO_COLOR` set (no-color.org): a
/// log file or the journal gets plain lines.
pub fn init(json: bool) {
    let filter = filter(std::env::var("RUST_LOG").ok().as_deref());
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
}

/// Whether to colour text logs: on a terminal, unless `NO_COLOR` is set to anything non-empty.
fn colour(terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

/// The filter of a `RUST_LOG` value: its directives if they parse, else [`DEFAULT_FILTER`].
fn filter(rust_log: Option<&str>) -> EnvFilter {
    rust_log
        .and_then(|directives| EnvFilter::try_new(directives).ok())
        .unwrap_or_else(|| EnvFilter::new(DEFAULT_FILTER))
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
        assert_eq!(filter(None).max_level_hint(), Some(LevelFilter::INFO));
        assert_eq!(filter(Some("warn")).max_level_hint(), Some(LevelFilter::WARN));
        assert_eq!(filter(Some("warn,braid_net=debug")).max_level_hint(), Some(LevelFilter::DEBUG));
        // A value that does not parse falls back to the default, as EnvFilter's own
        // try_from_default_env does.
        assert_eq!(filter(Some("braid_net=loud")).max_level_hint(), Some(LevelFilter::INFO));
    }
}
