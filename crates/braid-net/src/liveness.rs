//! Path liveness: which paths are usable, from what arrives on them.
//!
//! Anything authenticated that arrives on a path proves the path works in both directions' worth
//! of what matters here: the peer reached us on it. A path that has been quiet for its probe
//! interval gets a probe ([`braid_core::wire::Probe`]), which the peer answers at once; a path
//! quiet for its dead time is declared down, and the sender moves its waiting and in-flight
//! packets to the other paths ([`braid_core::tunnel::TunnelSender::set_path_up`]).
//!
//! Both times follow the path's own smoothed RTT once it is known, as a transport's timers do
//! (RFC 6298's RTO, RFC 9002 section 6.2's probe timeout): a working path answers a probe within
//! about one RTT, so silence for several RTTs means it is gone, and a path of 20 ms is declared
//! down in about 130 ms rather than after a fixed second. The probe interval is
//! `PROBE_RTTS x srtt` (at least `MIN_PROBE`), the dead time `DEAD_RTTS x srtt + DEAD_MARGIN`
//! (at least `MIN_DEAD`): at least two probes go unanswered before a path is declared down, and
//! the margin covers the peer's own delays (a busy event loop, a batch of feedback). The
//! configured `probe_interval` and `dead_after` are the upper bounds, and the times used until
//! an RTT is known. Down paths keep being
//! probed, and the first thing that arrives on one brings it back. This is the keep-alive and
//! path-failure detection MP-DCCP's path manager does with DCCP-Ack probes
//! (draft-ietf-tsvwg-multipath-dccp section 3.6; RFC 4340 section 11.6) and WireGuard's
//! passive keepalive (Donenfeld, NDSS 2017, section 6.5), per path.
//!
//! Sans-I/O: time comes in, decisions come out.

use std::time::Duration;

use braid_core::Instant;

use crate::config::LivenessConfig;

/// Probe a quiet path after this many smoothed RTTs of silence...
pub const PROBE_RTTS: u32 = 2;
/// ...but not more often than this.
pub const MIN_PROBE: Duration = Duration::from_millis(20);
/// Declare a path down after this many smoothed RTTs of silence...
pub const DEAD_RTTS: u32 = 4;
/// ...plus this margin...
pub const DEAD_MARGIN: Duration = Duration::from_millis(50);
/// ...and never sooner than this.
pub const MIN_DEAD: Duration = Duration::from_millis(100);

#[derive(Clone, Copy, Debug)]
struct PathLife {
    last_rx: Instant,
    last_probe: Option<Instant>,
    up: bool,
    /// The path's smoothed RTT, when known.
    srtt: Option<Duration>,
    /// When watching began: the first probe of a path whose RTT is unknown is due one
    /// `probe_interval` after.
    since: Instant,
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
        let life = PathLife { last_rx: now, last_probe: None, up: true, srtt: None, since: now };
        Liveness { cfg, paths: vec![life; n] }
    }

    /// Path `i`'s current smoothed RTT (from its sender's estimator), which sets its probe
    /// interval and dead time (module documentation).
    pub fn set_srtt(&mut self, i: usize, srtt: Option<Duration>) {
        if let Some(p) = self.paths.get_mut(i) {
            p.srtt = srtt;
        }
    }

    fn probe_interval(&self, p: &PathLife) -> Duration {
        p.srtt.map_or(self.cfg.probe_interval, |s| {
            (s * PROBE_RTTS).max(MIN_PROBE).min(self.cfg.probe_interval)
        })
    }

    fn dead_after(&self, p: &PathLife) -> Duration {
        p.srtt.map_or(self.cfg.dead_after, |s| {
            (s * DEAD_RTTS + DEAD_MARGIN).max(MIN_DEAD).min(self.cfg.dead_after)
        })
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
        let i = self.paths.iter().position(|p| self.probe_due(p) <= now)?;
        self.paths[i].last_probe = Some(now);
        Some(i)
    }

    /// When path `p` is due for a probe: quiet for its probe interval (and not probed for as
    /// long), or, while its RTT is unknown, every `probe_interval` whatever arrives: the peer's
    /// own probes keep a path from going quiet, but only our probes' echoes measure its RTT for
    /// us (a scheduler needs it before the path carries data).
    fn probe_due(&self, p: &PathLife) -> Instant {
        let interval = self.probe_interval(p);
        let quiet = match p.last_probe {
            Some(t) => (p.last_rx + interval).max(t + interval),
            None => p.last_rx + interval,
        };
        if p.srtt.is_some() {
            return quiet;
        }
        let unmeasured = p.last_probe.unwrap_or(p.since) + self.cfg.probe_interval;
        quiet.min(unmeasured)
    }

    /// A path that has just been silent for too long, marked down. Call until `None`.
    pub fn poll_change(&mut self, now: Instant) -> Option<Change> {
        let i = self.paths.iter().position(|p| p.up && p.last_rx + self.dead_after(p) <= now)?;
        self.paths[i].up = false;
        Some(Change::Down(i))
    }

    /// When the next probe or down decision falls due.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.paths
            .iter()
            .flat_map(|p| {
                let down = p.up.then_some(p.last_rx + self.dead_after(p));
                std::iter::once(self.probe_due(p)).chain(down)
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
        // A busy path has an RTT (from its feedback); without one it would be probed anyway.
        l.set_srtt(0, Some(Duration::from_millis(100)));
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
        // Both paths' RTTs are unknown: probed one interval after the start whatever arrived.
        assert_eq!(l.poll_timeout(), Some(ms(100)));
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

    /// Stated before writing it: with a 20 ms srtt a quiet path is probed every 40 ms and
    /// declared down 4 x 20 + 50 = 130 ms after it was last heard (the configured 100 ms and
    /// 500 ms are upper bounds); with a 300 ms srtt the configured bounds hold; a tiny srtt
    /// is floored at 20 ms probes and 100 ms dead time.
    #[test]
    fn a_known_rtt_sets_the_probe_interval_and_the_dead_time() {
        let mut l = live();
        l.set_srtt(0, Some(Duration::from_millis(20)));
        l.set_srtt(1, Some(Duration::from_millis(300)));
        l.on_receive(ms(1000), 0);
        l.on_receive(ms(1000), 1);
        assert_eq!(l.poll_timeout(), Some(ms(1040)));
        assert_eq!(l.poll_probe(ms(1039)), None);
        assert_eq!(l.poll_probe(ms(1040)), Some(0));
        assert_eq!(l.poll_probe(ms(1080)), Some(0));
        assert_eq!(l.poll_change(ms(1129)), None);
        assert_eq!(l.poll_change(ms(1130)), Some(Change::Down(0)));
        // The slow path keeps the configured bounds: probe at 100 ms, down at 500 ms.
        assert_eq!(l.poll_probe(ms(1100)), Some(1));
        assert_eq!(l.poll_change(ms(1499)), None);
        assert_eq!(l.poll_change(ms(1500)), Some(Change::Down(1)));
        let mut fast = live();
        fast.set_srtt(0, Some(Duration::from_micros(200)));
        fast.on_receive(ms(0), 0);
        fast.on_receive(ms(200), 1);
        assert_eq!(fast.poll_probe(ms(19)), None);
        assert_eq!(fast.poll_probe(ms(20)), Some(0));
        assert_eq!(fast.poll_change(ms(99)), None);
        assert_eq!(fast.poll_change(ms(100)), Some(Change::Down(0)));
        // Unknown paths are ignored.
        fast.set_srtt(9, Some(Duration::from_millis(1)));
    }

    /// The peer's probes keep a path from going quiet, but only our own probes' echoes give us
    /// its RTT: until one is known, a path is probed every `probe_interval` whatever arrives;
    /// once it is known, only when quiet.
    #[test]
    fn a_path_whose_rtt_is_unknown_is_probed_even_while_the_peer_keeps_it_busy() {
        let mut l = live();
        let mut probes = Vec::new();
        for t in (0..=400).step_by(10) {
            l.on_receive(ms(t), 0);
            l.on_receive(ms(t), 1);
            if t == 250 {
                l.set_srtt(0, Some(Duration::from_millis(20)));
            }
            while let Some(i) = l.poll_probe(ms(t)) {
                probes.push((t, i));
            }
        }
        assert_eq!(probes, vec![(100, 0), (100, 1), (200, 0), (200, 1), (300, 1), (400, 1)]);
    }
}
