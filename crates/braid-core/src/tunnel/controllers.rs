//! The tunnel sender's path controllers, with every path's [`CcMetrics`] kept from one
//! controller event to the next.
//!
//! The scheduler reads each path's metrics for every packet it places ([`PathView::cc`]), and
//! most scheduling passes follow an event that did not touch any controller (a packet entering
//! the scheduler queue while every window is full, a pacing timer). Asking the controllers
//! again each time was about a twentieth of the simulator's work in the nested default; the
//! metrics a controller reports change only when one of its events runs, so they are taken once
//! after each change, and only for the path the event concerned: most events are a departure
//! or an ACK of one path, and asking the other paths again was half of what remained. A
//! coupled controller's event may change every path's metrics (LIA's increase reads all
//! windows), so there any event refreshes all of them ([`MultipathController::is_coupled`]).
//!
//! [`PathView::cc`]: crate::sched::PathView::cc

use crate::cc::{AckEvent, CcMetrics, CongestionEvent, MultipathController};
use crate::time::Instant;

#[derive(Debug)]
pub(super) struct PathControllers {
    cc: Box<dyn MultipathController>,
    /// Each path's metrics as of its last refresh; valid where `stale` is false.
    metrics: Vec<CcMetrics>,
    /// Paths with a controller event since their metrics were taken.
    stale: Vec<bool>,
    /// Whether any path is stale (so that a refresh with nothing to do is one test).
    any_stale: bool,
    coupled: bool,
}

impl PathControllers {
    pub(super) fn new(cc: Box<dyn MultipathController>) -> Self {
        let n = cc.path_count();
        let metrics = (0..n).map(|i| cc.metrics(i)).collect();
        let coupled = cc.is_coupled();
        PathControllers { cc, metrics, stale: vec![false; n], any_stale: false, coupled }
    }

    /// Path `path`'s controller is about to change: its metrics (all paths' if coupled) must
    /// be taken again before they are read.
    fn touch(&mut self, path: usize) {
        if self.coupled {
            self.stale.fill(true);
        } else if let Some(s) = self.stale.get_mut(path) {
            *s = true;
        }
        self.any_stale = true;
    }

    pub(super) fn on_sent(&mut self, path: usize, now: Instant, bytes: u64, in_flight: u64) {
        self.touch(path);
        self.cc.on_sent(path, now, bytes, in_flight);
    }

    pub(super) fn on_ack(&mut self, path: usize, ack: &AckEvent) {
        self.touch(path);
        self.cc.on_ack(path, ack);
    }

    pub(super) fn on_congestion_event(&mut self, path: usize, event: &CongestionEvent) {
        self.touch(path);
        self.cc.on_congestion_event(path, event);
    }

    pub(super) fn on_rto(&mut self, path: usize, now: Instant) {
        self.touch(path);
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

    /// Takes the metrics of every path with a controller event since the last time; then
    /// [`PathControllers::current`] reads them.
    pub(super) fn refresh(&mut self) {
        if !self.any_stale {
            return;
        }
        for (i, stale) in self.stale.iter_mut().enumerate() {
            if std::mem::take(stale) {
                self.metrics[i] = self.cc.metrics(i);
            }
        }
        self.any_stale = false;
    }

    /// Path `path`'s metrics as of the last [`PathControllers::refresh`].
    pub(super) fn current(&self, path: usize) -> CcMetrics {
        debug_assert!(!self.stale[path], "metrics read without a refresh since a controller event");
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

    /// Interleaved events on both paths, for an uncoupled and a coupled (LIA) controller: after
    /// every refresh each path's cached metrics are the controller's own.
    #[test]
    fn per_path_refresh_matches_the_controllers_for_coupled_and_uncoupled_control() {
        let params = CcParams { mss_bytes: 1200, initial_window_pkts: 10 };
        for tunnel_cc in [TunnelCc::Bbr, TunnelCc::Lia] {
            let mut c = PathControllers::new(tunnel_cc.build(params, 2, &CcTuning::default()));
            assert_eq!(c.coupled, tunnel_cc == TunnelCc::Lia);
            let mut in_flight = [0u64; 2];
            for step in 0..200u64 {
                let path = usize::from(step % 3 == 0);
                let now = Instant::from_nanos(1_000_000 * (step + 1));
                if step % 2 == 0 {
                    in_flight[path] += 1200;
                    c.on_sent(path, now, 1200, in_flight[path]);
                } else if in_flight[path] > 0 {
                    let prior = in_flight[path];
                    in_flight[path] -= 1200;
                    c.on_ack(
                        path,
                        &AckEvent {
                            now,
                            newly_acked_bytes: 1200,
                            newly_lost_bytes: 0,
                            largest_acked_sent_time: now - Duration::from_millis(1),
                            rtt: Some(Duration::from_millis(20)),
                            min_rtt: Some(Duration::from_millis(20)),
                            prior_in_flight_bytes: prior,
                            in_flight_bytes: in_flight[path],
                            delivered_bytes: 1200 * step,
                            rate: None,
                            app_limited: false,
                            cwnd_limited: true,
                            max_in_flight_bytes: prior,
                        },
                    );
                }
                c.refresh();
                for i in 0..2 {
                    assert_eq!(c.current(i), c.metrics(i), "{tunnel_cc:?}, step {step}, path {i}");
                }
            }
        }
    }
}
