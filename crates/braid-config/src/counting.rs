//! How the tunnel's paths charge packets against their windows (`tunnel.counting`).

use braid_core::cc::Counting;

braid_core::named_enum! {
    /// `auto` (the default) takes the counting of the `tunnel.cc` name: packets for `ccid2` and
    /// `ccid5` (DCCP, RFC 4341 section 5), bytes for every other name. `bytes` and `packets`
    /// override it, so any tunnel controller can run byte- or packet-counted.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub enum CountingChoice {
        what = "window counting";
        #[default]
        Auto => "auto",
        Bytes => "bytes",
        Packets => "packets",
    }
}

impl CountingChoice {
    /// The core's override: `None` for `auto`.
    pub fn to_core(self) -> Option<Counting> {
        match self {
            CountingChoice::Auto => None,
            CountingChoice::Bytes => Some(Counting::Bytes),
            CountingChoice::Packets => Some(Counting::Packets),
        }
    }
}
