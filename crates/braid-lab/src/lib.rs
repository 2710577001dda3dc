//! Braid's test bed on one Linux machine: network namespaces and veth links, the user-space link
//! emulator (`braid linkem`) for kernels without netem, and lab runs of real kernel TCP through
//! the tunnel (`braid lab`).

pub mod bench;
pub mod flood;
pub mod host;
pub mod lab;
pub mod linkem;
pub mod multi_client;
pub mod netns;
pub mod offload;
pub mod topology;
pub mod transfer;
pub mod tunnel;
