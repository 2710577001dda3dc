//! Tunnel sender and receiver state machines.
//!
//! One direction of a tunnel is a [`TunnelSender`] at the ingress (the proxy for downlink
//! traffic, the UE for uplink) and a [`TunnelReceiver`] at the egress. The sender queues packets
//! in a bounded drop-tail scheduler queue, asks the scheduler for a path per packet, charges the
//! path's congestion controller, paces when the controller gives a rate, and detects losses per
//! path from the receiver's feedback. The receiver acknowledges per path, echoing the header
//! timestamp (taken when the packet was scheduled), and hands packets to the application in the order its reorder policy releases
//! them. Both are sans-I/O and generic over the payload handle `P`: the simulator passes packet
//! indices, the data plane passes buffer handles, and neither copies payload bytes here.
//!
//! ```text
//!  handle_packet ──▶ scheduler queue ──▶ Scheduler::select ──▶ path pacing queue ──▶ poll_transmit
//!                      (drop-tail)          (cwnd room)          (pacing rate)         (header)
//!  handle_feedback ──▶ per-path loss detection, RTT, delivery rate ──▶ MultipathController
//!
//!  handle_data ──▶ per-path ack ranges ──▶ poll_feedback (every 2nd packet or max delay;
//!              │                                         a duplicate at once, RFC 5681 4.2)
//!              └─▶ ReorderBuffer ──▶ poll_deliver
//! ```
//!
//! Over transports that do their own congestion control (kernel TCP paths), a
//! [`StreamSender`] replaces the [`TunnelSender`]: the same scheduler queue and schedulers, fed
//! with each path's window and in-flight bytes as the transport reports them.

mod config;
mod controllers;
mod loss;
mod reassembly;
mod receiver;
mod sched_queue;
mod sender;
mod stream_sender;

#[cfg(test)]
mod tests;

pub use config::{Reliability, TunnelConfig, TunnelConfigError, DEFAULT_REASSEMBLY_PKTS};
pub use receiver::{ReceiverStats, TunnelReceiver};
pub use sender::{PathMetrics, PathStats, SenderStats, Transmit, TunnelSender};
pub use stream_sender::{StreamPathState, StreamSender};
