//! The multipath seam: a tunnel talks to one [`MultipathController`] for all its paths.
//!
//! Coupled algorithms (RFC 6356 LIA and its successors) need every path's window and RTT to
//! compute one path's increase, so they cannot hide behind per-path [`Controller`]s. Instead the
//! tunnel addresses the controller by path index, and [`Uncoupled`] adapts independent
//! controllers to the same interface.

use super::{AckEvent, CcMetrics, CongestionEvent, Controller};
use crate::time::Instant;

/// Congestion control for all paths of one tunnel, addressed by path index.
pub trait MultipathController: std::fmt::Debug + Send {
    fn on_sent(&mut self, path: usize, now: Instant, bytes: u64, in_flight_bytes: u64);
    fn on_ack(&mut self, path: usize, ack: &AckEvent);
    fn on_congestion_event(&mut self, path: usize, event: &CongestionEvent);
    fn on_rto(&mut self, path: usize, now: Instant);
    fn cwnd_bytes(&self, path: usize) -> u64;
    fn pacing_rate_bytes_per_s(&self, path: usize) -> Option<u64>;
    fn metrics(&self, path: usize) -> CcMetrics;
    fn name(&self) -> &'static str;
    fn path_count(&self) -> usize;
    /// Whether an event of one path may change another path's state (a coupled increase
    /// reads every window). Callers that cache per-path metrics refresh all paths after any
    /// event when this is true, only the event's path otherwise. Conservatively true unless an
    /// implementation knows better.
    fn is_coupled(&self) -> bool {
        true
    }
}

/// Independent per-path controllers behind the multipath interface.
#[derive(Debug)]
pub struct Uncoupled {
    paths: Vec<Box<dyn Controller>>,
}

impl Uncoupled {
    pub fn new(paths: Vec<Box<dyn Controller>>) -> Self {
        Uncoupled { paths }
    }
}

impl MultipathController for Uncoupled {
    fn on_sent(&mut self, path: usize, now: Instant, bytes: u64, in_flight_bytes: u64) {
        self.paths[path].on_sent(now, bytes, in_flight_bytes)
    }
    fn on_ack(&mut self, path: usize, ack: &AckEvent) {
        self.paths[path].on_ack(ack)
    }
    fn on_congestion_event(&mut self, path: usize, event: &CongestionEvent) {
        self.paths[path].on_congestion_event(event)
    }
    fn on_rto(&mut self, path: usize, now: Instant) {
        self.paths[path].on_rto(now)
    }
    fn cwnd_bytes(&self, path: usize) -> u64 {
        self.paths[path].cwnd_bytes()
    }
    fn pacing_rate_bytes_per_s(&self, path: usize) -> Option<u64> {
        self.paths[path].pacing_rate_bytes_per_s()
    }
    fn metrics(&self, path: usize) -> CcMetrics {
        self.paths[path].metrics()
    }
    fn name(&self) -> &'static str {
        self.paths.first().map_or("none", |c| c.name())
    }
    fn path_count(&self) -> usize {
        self.paths.len()
    }
    fn is_coupled(&self) -> bool {
        false
    }
}
