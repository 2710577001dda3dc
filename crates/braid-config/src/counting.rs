//! How the tunnel's paths charge packets against their windows (`tunnel.counting`).

use std::fmt;
use std::str::FromStr;

use braid_core::cc::{Counting, UnknownName};

/// `auto` (the default) takes the counting of the `tunnel.cc` name: packets for `ccid2` and
/// `ccid5` (DCCP, RFC 4341 section 5), bytes for every other name. `bytes` and `packets`
/// override it, so any tunnel controller can run byte- or packet-counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CountingChoice {
    #[default]
    Auto,
    Bytes,
    Packets,
}

impl CountingChoice {
    pub const NAMES: &'static [&'static str] = &["auto", "bytes", "packets"];

    pub fn as_str(self) -> &'static str {
        match self {
            CountingChoice::Auto => "auto",
            CountingChoice::Bytes => "bytes",
            CountingChoice::Packets => "packets",
        }
    }

    /// The core's override: `None` for `auto`.
    pub fn to_core(self) -> Option<Counting> {
        match self {
            CountingChoice::Auto => None,
            CountingChoice::Bytes => Some(Counting::Bytes),
            CountingChoice::Packets => Some(Counting::Packets),
        }
    }
}

impl FromStr for CountingChoice {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(CountingChoice::Auto),
            "bytes" => Ok(CountingChoice::Bytes),
            "packets" => Ok(CountingChoice::Packets),
            _ => Err(UnknownName {
                what: "window counting",
                given: s.to_string(),
                allowed: Self::NAMES,
            }),
        }
    }
}

impl fmt::Display for CountingChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
