//! braid-core: the sans-I/O protocol core of Braid, a multipath tunnel in the style of
//! MP-DCCP and 3GPP ATSSS.
//!
//! Nothing in this crate owns a socket, reads a clock, sleeps or spawns a thread. Time comes in
//! as an [`time::Instant`] (integer nanoseconds on the driver's clock); packets come in as opaque
//! payload handles plus parsed headers; transmissions and timer deadlines go out through
//! `poll_transmit` / `poll_timeout` (the quinn-proto shape). The discrete-event simulator
//! (`braid-sim`) and the Linux data plane are two drivers of the same state machines.
//!
//! Layers, bottom up:
//! - [`wire`]: the data header and the feedback frame, with strict decoding.
//! - [`path`]: per-path estimators shared by the tunnel and TCP models (RTT, delivery rate).
//! - [`cc`]: per-path congestion controllers behind one trait, and the multipath seam that
//!   coupled controllers plug into; they read the path estimators' samples.
//! - [`sched`]: which path carries the next packet.
//! - [`reorder`]: receiver-side release policies.
//! - [`tunnel`]: sender and receiver state machines tying the above together.
//! - [`linkmodel`]: bottleneck models (CoDel, random loss, Mahimahi capacity traces) shared by
//!   the simulator's links and a user-space link emulator.
//!
//! The crate forbids `unsafe` code, and clippy refuses `std::time::Instant::now` and
//! `SystemTime::now` in it (`clippy.toml` beside `Cargo.toml`), so the clock promise holds.

#![forbid(unsafe_code)]

pub mod cc;
mod config_error;
pub mod linkmodel;
pub mod names;
pub mod path;
pub mod reorder;
pub mod sched;
pub mod time;
pub mod tunnel;
pub mod wire;

pub use config_error::ConfigError;
pub use time::Instant;
