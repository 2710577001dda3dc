//! braid-sim: a deterministic discrete-event simulator that runs braid-core's tunnel with
//! end-to-end TCP and UDP models over the topology of Pieska et al. 2024 (Figure 1).
//!
//! - [`engine`]: the event queue (time, then event kind and component: a fixed order of ties).
//! - [`link`]: random loss, a FIFO (drop-tail or CoDel), a constant rate or a Mahimahi
//!   capacity trace, propagation delay.
//! - [`tcp`]: the end-to-end TCP model (SACK, RACK-TLP, RTO, delayed ACKs, pacing).
//! - [`tcp_tunnel`]: kernel TCP tunnel paths (`tunnel.transport = "tcp"`), one connection of
//!   that TCP model per path and direction under the tunnel's scheduler.
//! - [`udp`]: a greedy UDP source.
//! - [`topology`]: server, proxy, paths and UE wired together; the tunnel endpoints.
//! - [`scenario`]: TOML scenario files, Table 2 keys, `--set` overrides, validation.
//! - [`metrics`]: the report and time series.
//! - [`noise`]: the noise model that makes repetitions differ (off by default).
//! - [`run`](mod@run): scenario to report, with the accounting invariant.
//!
//! Same scenario and seed give the same report, bit for bit (wall time aside).

pub mod engine;
pub mod link;
pub mod metrics;
pub mod noise;
pub mod packet;
pub mod run;
pub mod scenario;
pub mod tcp;
pub mod tcp_tunnel;
pub mod topology;
pub mod tunnel_sender;
pub mod udp;

pub use metrics::Report;
pub use run::{run, run_with_baseline, RunOutput, SimError};
pub use scenario::Scenario;
