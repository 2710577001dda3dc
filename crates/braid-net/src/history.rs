//! The last minutes of each path, one sample a second, for the operator page
//! (`operator_page.html`, served at `/` beside `/metrics`; its data at `/history`).
//!
//! The event loop records a [`Snapshot`] here once per [`HISTORY_INTERVAL`]; rates and losses
//! are the counters' differences over the interval, so the page needs no state of its own and
//! shows the last [`HISTORY_SAMPLES`] seconds the moment it opens. Prometheus keeps the long
//! history; this is the look an operator takes without one.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;

use crate::metrics::{PathSnapshot, Snapshot};

/// Time between two samples.
pub const HISTORY_INTERVAL: Duration = Duration::from_secs(1);
/// Samples kept per path: five minutes.
pub const HISTORY_SAMPLES: usize = 300;

/// The history, shared by the event loop (writer) and the HTTP thread (reader).
pub type SharedHistory = Arc<Mutex<History>>;

/// One path's samples, oldest first (each vector one entry per sample).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PathHistory {
    pub name: String,
    pub peer: Option<String>,
    pub t_s: VecDeque<f64>,
    pub up: VecDeque<bool>,
    pub tx_mbps: VecDeque<f64>,
    pub rx_mbps: VecDeque<f64>,
    pub srtt_ms: VecDeque<Option<f64>>,
    pub cwnd_bytes: VecDeque<u64>,
    /// Packets declared lost during the interval.
    pub lost_pkts: VecDeque<u64>,
    /// The counters at the last sample, for the next differences.
    #[serde(skip)]
    last: Option<(f64, PathSnapshot)>,
}

/// What `/history` serves.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct History {
    pub interface: String,
    pub role: String,
    pub established: bool,
    pub interval_s: f64,
    pub now_s: f64,
    pub paths: Vec<PathHistory>,
}

impl History {
    pub fn new() -> Self {
        History { interval_s: HISTORY_INTERVAL.as_secs_f64(), ..History::default() }
    }

    /// Adds `snap`'s sample (its `uptime_s` is the time axis). A path is known by its peer
    /// and name; the first sample of a path has no rates yet (zero) and no loss.
    pub fn record(&mut self, snap: &Snapshot) {
        self.interface.clone_from(&snap.interface);
        self.role.clone_from(&snap.role);
        self.established = snap.established;
        self.now_s = snap.uptime_s;
        for p in &snap.paths {
            let at = self.paths.iter().position(|h| h.name == p.name && h.peer == p.peer);
            let h = match at {
                Some(k) => &mut self.paths[k],
                None => {
                    let name = p.name.clone();
                    self.paths.push(PathHistory {
                        name,
                        peer: p.peer.clone(),
                        ..Default::default()
                    });
                    self.paths.last_mut().expect("just pushed")
                }
            };
            h.push(snap.uptime_s, p);
        }
    }
}

impl PathHistory {
    fn push(&mut self, t: f64, p: &PathSnapshot) {
        let (tx, rx, lost) = match &self.last {
            Some((t0, q)) if t > *t0 => {
                let mbps =
                    |now: u64, then: u64| now.saturating_sub(then) as f64 * 8.0 / (t - t0) / 1e6;
                (
                    mbps(p.tx_bytes, q.tx_bytes),
                    mbps(p.rx_bytes, q.rx_bytes),
                    p.lost_pkts.saturating_sub(q.lost_pkts),
                )
            }
            _ => (0.0, 0.0, 0),
        };
        if self.t_s.len() == HISTORY_SAMPLES {
            self.t_s.pop_front();
            self.up.pop_front();
            self.tx_mbps.pop_front();
            self.rx_mbps.pop_front();
            self.srtt_ms.pop_front();
            self.cwnd_bytes.pop_front();
            self.lost_pkts.pop_front();
        }
        self.t_s.push_back(t);
        self.up.push_back(p.up);
        self.tx_mbps.push_back(tx);
        self.rx_mbps.push_back(rx);
        self.srtt_ms.push_back(p.srtt_ms);
        self.cwnd_bytes.push_back(p.cwnd_bytes);
        self.lost_pkts.push_back(lost);
        self.last = Some((t, p.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(t: f64, tx_bytes: u64, lost: u64, up: bool) -> Snapshot {
        let path = PathSnapshot {
            name: "wifi".into(),
            up,
            tx_bytes,
            rx_bytes: tx_bytes / 2,
            lost_pkts: lost,
            srtt_ms: (t > 0.0).then_some(20.0),
            cwnd_bytes: 1000,
            ..PathSnapshot::default()
        };
        Snapshot {
            interface: "braid0".into(),
            uptime_s: t,
            paths: vec![path],
            ..Snapshot::default()
        }
    }

    #[test]
    fn rates_and_losses_are_differences_over_the_interval() {
        let mut h = History::new();
        h.record(&snap(0.0, 0, 0, true));
        // 1.25 MB in 1 s is 10 Mbit/s; 3 packets lost in that second.
        h.record(&snap(1.0, 1_250_000, 3, true));
        h.record(&snap(2.0, 1_250_000, 3, false));
        let p = &h.paths[0];
        assert_eq!(p.tx_mbps, [0.0, 10.0, 0.0]);
        assert_eq!(p.rx_mbps, [0.0, 5.0, 0.0]);
        assert_eq!(p.lost_pkts, [0, 3, 0]);
        assert_eq!(p.up, [true, true, false]);
        assert_eq!(p.srtt_ms, [None, Some(20.0), Some(20.0)]);
        assert_eq!((h.interface.as_str(), h.now_s), ("braid0", 2.0));
        let json = serde_json::to_value(&h).unwrap();
        assert_eq!(json["paths"][0]["srtt_ms"][0], serde_json::Value::Null);
        assert!(json["paths"][0].get("last").is_none());
    }

    #[test]
    fn five_minutes_are_kept_and_older_samples_go() {
        let mut h = History::new();
        for k in 0..HISTORY_SAMPLES + 20 {
            h.record(&snap(k as f64, 0, 0, true));
        }
        let p = &h.paths[0];
        assert_eq!(p.t_s.len(), HISTORY_SAMPLES);
        assert_eq!(p.cwnd_bytes.len(), HISTORY_SAMPLES);
        assert_eq!(p.t_s.front(), Some(&20.0));
    }
}
