//! The daemon's configuration parser (`DaemonConfig::from_toml_str`) on arbitrary text: it
//! must refuse with an error naming the field, never panic. A config that parses must also
//! pass the checks the daemon runs before opening anything (its core configuration).
//!
//! Key files are not read here (`from_toml_str` only parses; `keys()` reads them), so the
//! fuzzer cannot make the target read `/dev/zero`.
#![no_main]

use braid_net::config::DaemonConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Ok(text) = std::str::from_utf8(input) else { return };
    match DaemonConfig::from_toml_str(text) {
        Ok(config) => {
            let _ = config.core_config();
            assert!(!config.paths.is_empty(), "a config without paths parsed");
        }
        Err(e) => {
            assert!(!e.to_string().is_empty());
        }
    }
});
