//! The tunnel sender's path controllers, with every path's [`CcMetrics`] kept from one
//! controller event to the next.
//!
//! The scheduler reads each path's metrics for every packet it places ([`PathView::cc`]), and
//! most scheduling passes follow an event that did not touch any controller (a packet entering
//! the scheduler queue while every window is full, a pacing timer). Asking the controllers
//! again each time was about a twentieth of the simulator's work in the nested default; the
//! metrics a controller reports change only when one of its events runs, so they are taken once
//! after each change. A coupled controller's event may change every path's metrics (LIA's
//! increase reads all windows), so any event refreshes all of them.
//!
//! [`PathView::cc`]: crate::sched::PathView::cc

use crate::cc::{AckEvent, CcMetrics, CongestionEvent, MultipathController};
use crate::time::Instant;

#[derive(Debug)]
pub(super) struct PathControllers {
    cc: Box<dyn MultipathController>,
    /// Each path's metrics as of the last refresh; valid while `fresh`.
    metrics: Vec<CcMetrics>,
    fresh: bool,
}

impl PathControllers {
    pub(super) fn new(cc: Box<dyn MultipathController>) -> Self {
        PathControllers { cc, metrics: Vec::new(), fresh: false }
    }

    pub(super) fn on_sent(&mut self, path: usize, now: Instant, bytes: u64, in_flight: u64) {
        self.fresh = false;
        self.cc.on_sent(path, now, bytes, in_flight);
    }

    pub(super) fn on_ack(&mut self, path: usize, ack: &AckEvent) {
        self.fresh = false;
        self.cc.on_ack(path, ack);
    }

    pub(super) fn on_congestion_event(&mut self, path: usize, event: &CongestionEvent) {
        self.fresh = false;
        self.cc.on_congestion_event(path, event);
    }

    pub(super) fn on_rto(&mut self, path: usize, now: Instant) {
        self.fresh = false;
        self.cc.on_rto(path, now);
    }

    pub(super) fn cwnd_bytes(&self, path: usize) -> u64 {
        self.cc.cwnd_bytes(path)
    }

    pub(super) fn pacing_rate_bytes_per_s(&self, path: usize) -> Option<u64> {
        self.cc.pacing_rate_bytes_per_s(path)
    }

    /// Path `path`'s metrics, asked of its controller.
    pub(super) fn metrics(&self, path: usize) -> CcMetrics {
        self.cc.metrics(path)
    }

    /// Takes every path's metrics again if a controller event ran since the last time; then
    /// [`PathControllers::current`] reads them.
    pub(super) fn refresh(&mut self) {
        if !self.fresh {
            let cc = &self.cc;
            self.metrics.clear();
            self.metrics.extend((0..cc.path_count()).map(|i| cc.metrics(i)));
            self.fresh = true;
        }
    }

    /// Path `path`'s metrics as of the last [`PathControllers::refresh`].
    pub(super) fn current(&self, path: usize) -> CcMetrics {
        debug_assert!(self.fresh, "metrics read without a refresh since a controller event");
        self.metrics[path]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CcParams, CcTuning, TunnelCc};
    use std::time::Duration;

    fn controllers() -> PathControllers {
        let params = CcParams { mss_bytes: 1200, initial_window_pkts: 10 };
        PathControllers::new(TunnelCc::NewReno.build(params, 2, &CcTuning::default()))
    }

    #[test]
    fn metrics_follow_every_controller_event_and_match_the_controllers_own() {
        let mut c = controllers();
        c.refresh();
        let before = c.current(0);
        assert_eq!(before, c.metrics(0));
        let t = Instant::from_nanos(1_000_000);
        c.on_sent(0, t, 1200, 1200);
        let ack = AckEvent {
            now: t + Duration::from_millis(20),
            newly_acked_bytes: 1200,
            newly_lost_bytes: 0,
            largest_acked_sent_time: t,
            rtt: Some(Duration::from_millis(20)),
            min_rtt: Some(Duration::from_millis(20)),
            prior_in_flight_bytes: 1200,
            in_flight_bytes: 0,
            delivered_bytes: 1200,
            rate: None,
            app_limited: false,
            cwnd_limited: true,
            max_in_flight_bytes: 0,
        };
        c.on_ack(0, &ack);
        c.refresh();
        assert_eq!(c.current(0), c.metrics(0));
        assert!(c.current(0).cwnd_bytes > before.cwnd_bytes, "slow start grew path 0's window");
        assert_eq!(c.current(1), c.metrics(1));
        c.on_rto(1, t);
        c.refresh();
        assert_eq!(c.current(1), c.metrics(1));
        assert!(c.current(1).cwnd_bytes < before.cwnd_bytes, "an RTO collapses path 1's window");
    }
}
