//! Path liveness: which paths are usable, from what arrives on them.
//!
//! Anything authenticated that arrives on a path proves the path works in both directions' worth
//! of what matters here: the peer reached us on it. A path that has been quiet for
//! `probe_interval` gets a probe ([`braid_core::wire::Probe`]), which the peer answers at once;
//! a path quiet for `dead_after` is declared down, and the sender moves its waiting packets to
//! the other paths ([`braid_core::tunnel::TunnelSender::set_path_up`]). Down paths keep being
//! probed, and the first thing that arrives on one brings it back. This is the keep-alive and
//! path-failure detection MP-DCCP's path manager does with DCCP-Ack probes
//! (draft-ietf-tsvwg-multipath-dccp section 3.6; RFC 4340 section 11.6) and WireGuard's
//! passive keepalive (Donenfeld, NDSS 2017, section 6.5), per path.
//!
//! Sans-I/O: time comes in, decisions come out.

use braid_core::Instant;

use crate::config::LivenessConfig;

#[derive(Clone, Copy, Debug)]
struct PathLife {
    last_rx: Instant,
    last_probe: Option<Instant>,
    up: bool,
}

/// Liveness of every path of one tunnel.
#[derive(Clone, Debug)]
pub struct Liveness {
    cfg: LivenessConfig,
    paths: Vec<PathLife>,
}

/// A path changed state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Up(usize),
    Down(usize),
}

impl Liveness {
    /// `n` paths, all presumed up at `now` (a path that does not work is found out after
    /// `dead_after`, as one that stops working is).
    pub fn new(cfg: LivenessConfig, n: usize, now: Instant) -> Liveness {
        Liveness { cfg, paths: vec![PathLife { last_rx: now, last_probe: None, up: true }; n] }
    }

    /// Something authenticated arrived on path `i`. Returns [`Change::Up`] if that brings the
    /// path back.
    pub fn on_receive(&mut self, now: Instant, i: usize) -> Option<Change> {
        let p = self.paths.get_mut(i)?;
        p.last_rx = now;
        if p.up {
            return None;
        }
        p.up = true;
        Some(Change::Up(i))
    }

    /// A path due for a probe at `now`, marked as probed. Call until `None`.
    pub fn poll_probe(&mut self, now: Instant) -> Option<usize> {
        let interval = self.cfg.probe_interval;
        let (i, p) = self.paths.iter_mut().enumerate().find(|(_, p)| {
            p.last_rx + interval <= now && p.last_probe.is_none_or(|t| t + interval <= now)
        })?;
        p.last_probe = Some(now);
        Some(i)
    }

    /// A path that has just been silent for too long, marked down. Call until `None`.
    pub fn poll_change(&mut self, now: Instant) -> Option<Change> {
        let dead_after = self.cfg.dead_after;
        let (i, p) = self
            .paths
            .iter_mut()
            .enumerate()
            .find(|(_, p)| p.up && p.last_rx + dead_after <= now)?;
        p.up = false;
        Some(Change::Down(i))
    }

    /// When the next probe or down decision falls due.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let interval = self.cfg.probe_interval;
        self.paths
            .iter()
            .flat_map(|p| {
                let probe = match p.last_probe {
                    Some(t) => (p.last_rx + interval).max(t + interval),
                    None => p.last_rx + interval,
                };
                let down = p.up.then_some(p.last_rx + self.cfg.dead_after);
                std::iter::once(probe).chain(down)
            })
            .min()
    }

    /// Marks path `i` down without a [`Change`]: a server path whose client has not spoken yet.
    pub fn mark_down(&mut self, i: usize) {
        if let Some(p) = self.paths.get_mut(i) {
            p.up = false;
        }
    }

    pub fn is_up(&self, i: usize) -> bool {
        self.paths.get(i).is_some_and(|p| p.up)
    }

    /// Time since path `i` last heard from the peer.
    pub fn silence(&self, now: Instant, i: usize) -> Option<std::time::Duration> {
        self.paths.get(i).map(|p| now.saturating_since(p.last_rx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ms(v: u64) -> Instant {
        Instant::from_nanos(v * 1_000_000)
    }

    fn live() -> Liveness {
        let cfg = LivenessConfig {
            probe_interval: Duration::from_millis(100),
            dead_after: Duration::from_millis(500),
        };
        Liveness::new(cfg, 2, ms(0))
    }

    #[test]
    fn a_quiet_path_is_probed_once_per_interval_and_a_busy_one_never() {
        let mut l = live();
        assert_eq!(l.poll_probe(ms(99)), None);
        assert_eq!(l.poll_timeout(), Some(ms(100)));
        for t in (0..300).step_by(10) {
            l.on_receive(ms(t), 0);
        }
        // Path 0 heard at 290 ms; path 1 never: probed at 100 and 200, not in between.
        assert_eq!(l.poll_probe(ms(100)), Some(1));
        assert_eq!(l.poll_probe(ms(150)), None);
        assert_eq!(l.poll_probe(ms(200)), Some(1));
        assert_eq!(l.poll_probe(ms(200)), None);
        assert_eq!(l.poll_probe(ms(300)), Some(1));
        assert_eq!(l.poll_probe(ms(300)), None, "path 0 was heard 10 ms ago");
    }

    #[test]
    fn silence_for_dead_after_takes_a_path_down_and_any_arrival_brings_it_back() {
        let mut l = live();
        l.on_receive(ms(400), 0);
        assert_eq!(l.poll_change(ms(499)), None);
        assert_eq!(l.poll_change(ms(500)), Some(Change::Down(1)));
        assert_eq!(l.poll_change(ms(500)), None, "reported once");
        assert!(!l.is_up(1) && l.is_up(0));
        assert_eq!(l.poll_change(ms(900)), Some(Change::Down(0)));
        // A down path is still probed, so it can come back.
        assert!(l.poll_probe(ms(1000)).is_some());
        assert_eq!(l.on_receive(ms(1001), 1), Some(Change::Up(1)));
        assert_eq!(l.on_receive(ms(1002), 1), None);
        assert_eq!(l.silence(ms(1010), 1), Some(Duration::from_millis(8)));
    }

    #[test]
    fn the_timeout_is_the_earliest_probe_or_down_decision() {
        let mut l = live();
        l.on_receive(ms(50), 0);
        l.on_receive(ms(50), 1);
        assert_eq!(l.poll_timeout(), Some(ms(150)));
        assert_eq!(l.poll_probe(ms(150)), Some(0));
        assert_eq!(l.poll_probe(ms(150)), Some(1));
        assert_eq!(l.poll_timeout(), Some(ms(250)));
        assert_eq!(l.on_receive(ms(7), 9), None, "unknown paths are ignored");
        l.mark_down(1);
        assert!(!l.is_up(1));
        assert_eq!(l.poll_change(ms(10_000)), Some(Change::Down(0)), "no second report for 1");
        assert_eq!(l.poll_change(ms(10_000)), None);
        assert_eq!(l.on_receive(ms(10_001), 1), Some(Change::Up(1)));
    }
}
