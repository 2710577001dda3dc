//! The tunnel's side of a lab run in tunnel mode: the two daemons' status documents
//! ([`braid_net::metrics::Snapshot`]), sampled while the transfer runs and read once after it,
//! turned into the fields `braid sim --json` reports for the tunnel.
//!
//! The simulator samples the downlink sender (the proxy's) for each path's srtt and the
//! downlink receiver (the UE's) for the reorder wait limit every `sim.sample_interval_ms`
//! (braid-sim `topology.rs`, `Event::Sample`). The lab does the same from the daemons' `/status`
//! every [`SAMPLE_EVERY`]: a daemon refreshes its snapshot every 100 ms, so sampling faster
//! would count one value several times.
//!
//! Where the lab's number differs in meaning from the simulator's, the field says so:
//! - `paths[].bytes` is the inner bytes the proxy *sent* on the path (retransmitted copies and
//!   packets the path lost included), where the simulator counts the inner bytes the path
//!   delivered. The daemon counts each datagram's inner packet plus the tunnel header
//!   ([`braid_core::tunnel::TunnelSender`] `sent_bytes`); [`TUNNEL_HEADER_BYTES`] is taken off
//!   per packet.
//! - `reorder` carries only what the daemon counts: packets released on timeout, duplicates, and
//!   the mean wait limit.

use std::thread;
use std::time::Duration;

use braid_net::metrics::Snapshot;
use braid_sim::metrics::Stat;

use super::report::{LabReorderReport, LabReport};
use crate::netns::NetError;
use crate::tunnel::TunnelPair;

/// How often the daemons' status is sampled during the transfer: their refresh period.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(100);
/// Wait after the transfer before the final read, so the daemons have published their last
/// counters (they refresh every 100 ms).
const FINAL_READ_AFTER: Duration = Duration::from_millis(250);
/// Outer IPv4 (20) and UDP (8) headers, the compact header and the tag: what the daemon counts
/// for each inner packet on an IPv4 path with compact messages, its default
/// (`braid_net::config::DaemonConfig::core_config`). The test bed's paths are IPv4.
pub const TUNNEL_HEADER_BYTES: u64 = 28 + braid_net::crypto::COMPACT_OVERHEAD as u64;

/// One path of the proxy (the downlink sender) at one status sample: what `braid lab --out`
/// writes to `tunnel_trace.csv`, beside the simulator's per-path trace columns.
#[derive(Clone, Debug, PartialEq)]
pub struct PathTraceRow {
    /// Seconds since the transfer started.
    pub t_s: f64,
    pub path: String,
    pub cwnd_bytes: u64,
    pub in_flight_bytes: u64,
    pub srtt_ms: Option<f64>,
    /// The controller's phase; over TCP paths the kernel's `tcpi_ca_state`.
    pub phase: String,
    pub tx_pkts: u64,
    /// Over TCP paths the segments the kernel retransmitted.
    pub lost_pkts: u64,
    /// The downlink receiver's (UE's) wait limit and the gaps it gave up on so far, read at
    /// the same moment (empty when its status did not answer).
    pub rx_wait_limit_ms: Option<f64>,
    pub rx_released_on_timeout: Option<u64>,
}

impl PathTraceRow {
    /// The CSV header of [`PathTraceRow::csv_line`].
    pub const CSV_HEADER: &'static str = "t_s,path,cwnd_bytes,in_flight_bytes,srtt_ms,phase,\
        tx_pkts,lost_pkts,rx_wait_limit_ms,rx_released_on_timeout";

    /// The row as a CSV line (an unknown value is an empty field).
    pub fn csv_line(&self) -> String {
        let ms = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
        let n = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
        format!(
            "{:.3},{},{},{},{},{},{},{},{},{}",
            self.t_s,
            self.path,
            self.cwnd_bytes,
            self.in_flight_bytes,
            ms(self.srtt_ms),
            self.phase,
            self.tx_pkts,
            self.lost_pkts,
            ms(self.rx_wait_limit_ms),
            n(self.rx_released_on_timeout),
        )
    }
}

/// What the daemons reported over one transfer.
#[derive(Clone, Debug, Default)]
pub struct TunnelObservation {
    /// The proxy's (downlink sender's) status after the transfer.
    pub server: Snapshot,
    /// The UE's (downlink receiver's) status after the transfer.
    pub client: Snapshot,
    /// The proxy's srtt of each path, ms, one sample per [`SAMPLE_EVERY`] once measured.
    pub path_srtt_ms: Vec<Stat>,
    /// The UE's reorder wait limit, ms, one sample per [`SAMPLE_EVERY`].
    pub wait_limit_ms: Stat,
    /// The proxy's paths at every sample.
    pub trace: Vec<PathTraceRow>,
}

impl TunnelObservation {
    /// Adds the status samples of one moment, `t_s` seconds into the transfer.
    pub fn add_samples(&mut self, t_s: f64, server: Option<&Snapshot>, client: Option<&Snapshot>) {
        let rx_wait_limit_ms = client.map(|c| c.reorder_wait_limit_ms);
        let rx_released_on_timeout = client.map(|c| c.reorder_released_on_timeout);
        if let Some(s) = server {
            self.trace.extend(s.paths.iter().map(|p| PathTraceRow {
                t_s,
                path: p.name.clone(),
                cwnd_bytes: p.cwnd_bytes,
                in_flight_bytes: p.in_flight_bytes,
                srtt_ms: p.srtt_ms,
                phase: p.cc_phase.clone(),
                tx_pkts: p.tx_pkts,
                lost_pkts: p.lost_pkts,
                rx_wait_limit_ms,
                rx_released_on_timeout,
            }));
            if self.path_srtt_ms.len() < s.paths.len() {
                self.path_srtt_ms.resize(s.paths.len(), Stat::default());
            }
            for (stat, p) in self.path_srtt_ms.iter_mut().zip(&s.paths) {
                if let Some(srtt) = p.srtt_ms {
                    stat.add(srtt);
                }
            }
        }
        if let Some(c) = client {
            self.wait_limit_ms.add(c.reorder_wait_limit_ms);
        }
    }

    /// Fills `report`'s tunnel fields: per path bytes, share, srtt, losses; scheduler and
    /// reorder drops; the reorder summary.
    pub fn fill(&self, report: &mut LabReport) {
        let inner_bytes: Vec<u64> = self
            .server
            .paths
            .iter()
            .map(|p| p.tx_bytes.saturating_sub(p.tx_pkts * TUNNEL_HEADER_BYTES))
            .collect();
        let total: u64 = inner_bytes.iter().sum();
        for (i, path) in report.paths.iter_mut().enumerate() {
            let Some(sp) = self.server.paths.get(i) else { continue };
            path.bytes = Some(inner_bytes[i]);
            path.share = (total > 0).then(|| inner_bytes[i] as f64 / total as f64);
            if let Some(stat) = self.path_srtt_ms.get(i).filter(|s| s.count() > 0) {
                let mm = stat.mean_max();
                path.srtt_ms_mean = Some(mm.mean);
                path.srtt_ms_max = Some(mm.max);
            }
            path.packets_lost_detected = Some(sp.lost_pkts);
            // Downlink data is received at the UE, the client.
            path.owd = self.client.paths.get(i).and_then(|p| p.rx_owd);
        }
        // Both directions, as the simulator's `drops.scheduler` and `drops.reorder`.
        report.drops.scheduler = Some(self.server.sched_drops + self.client.sched_drops);
        report.drops.reorder =
            Some(self.server.reorder_duplicates + self.client.reorder_duplicates);
        report.reorder = Some(LabReorderReport {
            released_on_timeout: Some(self.client.reorder_released_on_timeout),
            duplicates: Some(self.client.reorder_duplicates),
            wait_limit_ms_mean: (self.wait_limit_ms.count() > 0)
                .then(|| self.wait_limit_ms.mean_max().mean),
        });
    }
}

/// Runs `transfer` on its own thread while sampling `pair`'s status every [`SAMPLE_EVERY`] on
/// this one; after it ends, reads both daemons' final status. The transfer's result comes back
/// whatever the status reads did; a failed final read is the second result's error.
pub fn observe<T: Send>(
    pair: &TunnelPair,
    transfer: impl FnOnce() -> T + Send,
) -> (T, Result<TunnelObservation, NetError>) {
    let mut obs = TunnelObservation::default();
    let started = std::time::Instant::now();
    let result = thread::scope(|sc| {
        let worker = sc.spawn(transfer);
        while !worker.is_finished() {
            // A sample the daemon does not answer in time is skipped; the final read decides.
            let (s, c) = (pair.server_status().ok(), pair.client_status().ok());
            obs.add_samples(started.elapsed().as_secs_f64(), s.as_ref(), c.as_ref());
            thread::sleep(SAMPLE_EVERY);
        }
        match worker.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    });
    thread::sleep(FINAL_READ_AFTER);
    let finals = pair.server_status().and_then(|s| Ok((s, pair.client_status()?)));
    let obs = finals.map(|(server, client)| TunnelObservation { server, client, ..obs });
    (result, obs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::report::LabPathReport;
    use braid_net::metrics::PathSnapshot;

    fn path(srtt_ms: Option<f64>, tx_pkts: u64, inner_bytes_per_pkt: u64) -> PathSnapshot {
        PathSnapshot {
            srtt_ms,
            tx_pkts,
            tx_bytes: tx_pkts * (inner_bytes_per_pkt + TUNNEL_HEADER_BYTES),
            lost_pkts: tx_pkts / 100,
            ..Default::default()
        }
    }

    #[test]
    fn the_header_is_what_the_daemon_adds_on_an_ipv4_path() {
        // The daemon's own derivation, from a minimal IPv4 client config.
        let text = "[interface]\nname = \"b\"\nrole = \"client\"\nprivate_key = \"k\"\n\
                    [peer]\npublic_key = \"p\"\n\
                    [[path]]\nname = \"a\"\nbind = \"10.0.0.2:0\"\nremote = \"10.0.0.1:1\"\n";
        let cfg = braid_net::config::DaemonConfig::from_toml_str(text).unwrap();
        assert_eq!(TUNNEL_HEADER_BYTES, u64::from(cfg.core_config().header_bytes));
        // 28 outer + 4 compact header + 16 tag.
        assert_eq!(TUNNEL_HEADER_BYTES, 48);
    }

    #[test]
    fn srtt_samples_count_once_measured_and_fill_mean_and_max() {
        let mut obs = TunnelObservation::default();
        let snap =
            |a, b| Snapshot { paths: vec![path(a, 0, 0), path(b, 0, 0)], ..Default::default() };
        let client = |w| Snapshot { reorder_wait_limit_ms: w, ..Default::default() };
        obs.add_samples(0.0, Some(&snap(None, None)), Some(&client(12.0)));
        obs.add_samples(0.1, Some(&snap(Some(20.0), Some(40.0))), Some(&client(14.0)));
        obs.add_samples(0.2, Some(&snap(Some(30.0), None)), None);
        // Every sample of the server's paths is a trace row, unmeasured srtt an empty field.
        assert_eq!(obs.trace.len(), 6);
        assert_eq!(obs.trace[2].t_s, 0.1);
        assert_eq!(obs.trace[0].csv_line().split(',').nth(4), Some(""));
        assert_eq!(obs.trace[2].csv_line().split(',').nth(4), Some("20.000"));
        assert_eq!(
            PathTraceRow::CSV_HEADER.split(',').count(),
            obs.trace[0].csv_line().split(',').count()
        );
        // Path 1: samples 20 and 30 (the unmeasured first one skipped): mean 25, max 30.
        // Path 2: one sample, 40. Wait limit: (12 + 14) / 2 = 13.
        obs.server = Snapshot {
            paths: vec![path(Some(30.0), 300, 1400), path(None, 100, 1400)],
            sched_drops: 2,
            reorder_duplicates: 1,
            ..Default::default()
        };
        // The UE (client) sampled path 1's one-way delays, not path 2's.
        let owd =
            braid_core::reorder::OwdSummary { samples: 7, jitter_ms: 0.5, ..Default::default() };
        obs.client = Snapshot {
            sched_drops: 3,
            reorder_duplicates: 4,
            reorder_released_on_timeout: 5,
            paths: vec![PathSnapshot { rx_owd: Some(owd), ..Default::default() }],
            ..Default::default()
        };
        let mut r = LabReport {
            paths: vec![
                LabPathReport { name: "wifi".into(), ..Default::default() },
                LabPathReport { name: "cellular".into(), ..Default::default() },
            ],
            ..Default::default()
        };
        obs.fill(&mut r);
        let p1 = &r.paths[0];
        assert_eq!((p1.srtt_ms_mean, p1.srtt_ms_max), (Some(25.0), Some(30.0)));
        assert_eq!(r.paths[1].srtt_ms_mean, Some(40.0));
        // 300 and 100 packets of 1400 inner bytes: 420 000 and 140 000 bytes, shares 3/4, 1/4.
        assert_eq!((p1.bytes, p1.share), (Some(420_000), Some(0.75)));
        assert_eq!((r.paths[1].bytes, r.paths[1].share), (Some(140_000), Some(0.25)));
        assert_eq!(p1.packets_lost_detected, Some(3));
        assert_eq!((p1.owd, r.paths[1].owd), (Some(owd), None));
        // Both directions: scheduler 2 + 3, reorder duplicates 1 + 4.
        assert_eq!((r.drops.scheduler, r.drops.reorder), (Some(5), Some(5)));
        let reorder = r.reorder.unwrap();
        assert_eq!(reorder.released_on_timeout, Some(5));
        assert_eq!(reorder.duplicates, Some(4));
        assert_eq!(reorder.wait_limit_ms_mean, Some(13.0));
    }

    #[test]
    fn a_path_never_measured_leaves_its_srtt_out() {
        let obs = TunnelObservation {
            server: Snapshot { paths: vec![path(None, 0, 0)], ..Default::default() },
            ..Default::default()
        };
        let mut r = LabReport { paths: vec![LabPathReport::default()], ..Default::default() };
        obs.fill(&mut r);
        assert_eq!(r.paths[0].srtt_ms_mean, None);
        // Nothing sent: no share can be computed.
        assert_eq!((r.paths[0].bytes, r.paths[0].share), (Some(0), None));
        assert_eq!(r.reorder.unwrap().wait_limit_ms_mean, None);
    }
}
