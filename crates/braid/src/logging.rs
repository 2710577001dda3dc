//! Logging of the long-running subcommands (`braid tunnel`, `braid lab`, `braid linkem`):
//! tracing events as text (or JSON lines) on stderr, filtered by `RUST_LOG`, by default at
//! info level. Without it the test bed's warnings (a namespace that could not be deleted, a
//! child that needed SIGKILL) would go nowhere.

use tracing_subscriber::EnvFilter;

/// The level when `RUST_LOG` is unset or does not parse.
const DEFAULT_FILTER: &str = "info";

/// Installs the subscriber for this process; `json` writes JSON lines instead of text.
pub fn init(json: bool) {
    let filter = filter(std::env::var("RUST_LOG").ok().as_deref());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
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
    fn rust_log_chooses_the_level_and_info_is_the_default() {
        assert_eq!(filter(None).max_level_hint(), Some(LevelFilter::INFO));
        assert_eq!(filter(Some("warn")).max_level_hint(), Some(LevelFilter::WARN));
        assert_eq!(filter(Some("warn,braid_net=debug")).max_level_hint(), Some(LevelFilter::DEBUG));
        // A value that does not parse falls back to the default, as EnvFilter's own
        // try_from_default_env does.
        assert_eq!(filter(Some("braid_net=loud")).max_level_hint(), Some(LevelFilter::INFO));
    }
}
