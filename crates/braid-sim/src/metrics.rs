//! Measurement: what a run reports (docs/design.md section 5) and the collectors behind it.
//!
//! Definitions:
//! - DLCT: from the start of the transfer (time zero, the first SYN-equivalent) to the last
//!   byte delivered to the receiving application.
//! - Goodput: application bytes delivered over the DLCT.
//! - Per-path `bytes`: inner (end-to-end) bytes of tunnel data the path delivered downlink;
//!   `share` is that over all paths; `mean_mbps`: every frame the path's downlink carried
//!   (tunnel data, feedback, all headers and framing) over the DLCT.
//! - Protocol delay: from a packet entering the tunnel sender to its in-order delivery to the
//!   receiving application. Head-of-line blocking: the part spent in the reorder buffer
//!   (delivery minus arrival at the tunnel receiver).

use braid_core::reorder::OwdSummary;
use serde::Serialize;

/// Mean and maximum of a series of samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct MeanMax {
    pub mean: f64,
    pub max: f64,
}

/// Running mean and max, in f64 milliseconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stat {
    n: u64,
    sum: f64,
    max: f64,
}

impl Stat {
    #[inline]
    pub fn add(&mut self, v: f64) {
        self.n += 1;
        self.sum += v;
        if v > self.max {
            self.max = v;
        }
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean_max(&self) -> MeanMax {
        if self.n == 0 {
            return MeanMax::default();
        }
        MeanMax { mean: self.sum / self.n as f64, max: self.max }
    }
}

/// Per-path summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathReport {
    pub name: String,
    pub bytes: u64,
    pub share: f64,
    pub mean_mbps: f64,
    pub srtt_ms_mean: f64,
    pub srtt_ms_max: f64,
    /// Drops at this path's downlink bottleneck (drop-tail, CoDel and random loss).
    pub drops: u64,
    /// Time packets served by the downlink bottleneck waited in its FIFO, ms (a packet finding
    /// the link idle waited 0).
    pub queue_delay_ms_mean: f64,
    pub queue_delay_ms_max: f64,
    pub packets_sent: u64,
    /// Packets the tunnel sender's loss detection declared lost on this path.
    pub packets_lost_detected: u64,
    /// The path's congestion window, bytes, averaged over the periodic samples taken during
    /// the transfer (`sim.sample_interval_ms`): the average windows of Lee et al. 2023,
    /// Tables 4 and 5.
    pub cwnd_bytes_mean: f64,
    /// Over kernel TCP paths, the downlink connection's send queue (written and not yet
    /// acknowledged: `ss`'s Send-Q), bytes, averaged over the periodic samples.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send_queue_bytes_mean: Option<f64>,
    /// The downlink one-way delays the UE's tunnel receiver sampled on this path (RFC 3550
    /// jitter, mean above the smallest sample, standard deviation, range); absent in the
    /// baseline and over kernel TCP paths.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owd: Option<OwdSummary>,
}

/// Drops per named queue, over both directions.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Drops {
    /// Tunnel scheduler queues (drop-tail).
    pub scheduler: u64,
    /// Downlink bottleneck of each path, in path order: drop-tail, CoDel and random loss.
    pub bottleneck: Vec<u64>,
    /// Of those, the drops CoDel made, in path order.
    pub bottleneck_aqm: Vec<u64>,
    /// Uplink of each path: drop-tail, CoDel and random loss.
    pub uplink: Vec<u64>,
    /// Server link, both directions.
    pub server_link: u64,
    /// Reorder buffers (duplicates discarded).
    pub reorder: u64,
}

/// End-to-end transport summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct E2eReport {
    pub kind: String,
    pub cc: String,
    pub bytes_delivered: u64,
    pub retransmissions: u64,
    pub rto_count: u64,
    pub srtt_ms_mean: f64,
    /// The server's congestion window, bytes, averaged over the periodic samples taken during
    /// the transfer (0 for UDP): the server cwnd of Pieska et al. 2021, Figure 6c-d.
    pub cwnd_bytes_mean: f64,
}

/// The reorder buffer's activity at the downlink receiver.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReorderReport {
    pub released_on_timeout: u64,
    pub released_on_fast_loss: u64,
    pub released_on_overflow: u64,
    pub late: u64,
    pub skipped_seqs: u64,
    /// Second copies refused (redundant scheduling, spurious retransmissions), including
    /// `too_old`.
    pub duplicates: u64,
    /// Refused for lying below the duplicate window.
    pub too_old: u64,
    pub wait_limit_ms_mean: f64,
}

/// The downlink tunnel sender's own work beyond one copy per packet.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TunnelReport {
    /// Lost packets sent again (`reliable`, `partial`).
    pub retransmissions: u64,
    /// Lost packets a `partial` path gave up because a copy would arrive too late.
    pub expired: u64,
    /// Extra copies made by the `redundant` scheduler.
    pub redundant_copies: u64,
    /// The ACPF scheduler's live/raw window fraction averaged over the periodic samples taken
    /// during the transfer (Pieska et al. 2021, Figure 6b); absent for other schedulers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acpf_fraction_mean: Option<f64>,
}

/// The summary of one run: the `--json` output of `braid sim`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Report {
    pub dlct_s: f64,
    pub goodput_mbps: f64,
    pub paths: Vec<PathReport>,
    pub drops: Drops,
    pub protocol_delay_ms: MeanMax,
    pub hol_ms: MeanMax,
    pub e2e: E2eReport,
    pub reorder: ReorderReport,
    pub tunnel: TunnelReport,
    pub events: u64,
    pub simulated_packets: u64,
    pub wall_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_dlct_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative_dlct: Option<f64>,
}

/// One row of the periodic trace, one [`PathSample`] per path beside it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TraceRow {
    pub t_s: f64,
    pub e2e_cwnd_bytes: u64,
    pub e2e_in_flight_bytes: u64,
    pub e2e_srtt_ms: f64,
    /// The end-to-end sender's pacing rate (Mbit/s of payload), 0 when it does not pace: for
    /// BBR its `pacing_gain x bw` less the margin, so a trace shows the bw estimate it acts on.
    pub e2e_pacing_mbps: f64,
    /// The end-to-end sender's retransmitted segments so far (Linux `tcpi_total_retrans`).
    pub e2e_retransmissions: u64,
    pub sched_queue_pkts: usize,
    pub reorder_pkts: usize,
    pub wait_limit_ms: f64,
    /// The downlink ACPF scheduler's live/raw cwnd fraction (empty for other schedulers).
    pub acpf_fraction: Option<f64>,
    /// Mean and maximum head-of-line delay (ms) of the downlink packets delivered since the
    /// previous sample (empty when none was delivered).
    pub hol_ms: Option<MeanMax>,
    /// Downlink tunnel retransmissions so far (`reliable`, `partial`).
    pub tunnel_retransmissions: u64,
    /// Gaps the downlink reorder buffer has given up so far: on its wait limit, and on fast
    /// loss detection.
    pub released_on_timeout: u64,
    pub released_on_fast_loss: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PathSample {
    pub cwnd_bytes: u64,
    pub in_flight_bytes: u64,
    pub srtt_ms: f64,
    pub pacing_rate_mbps: f64,
    pub bottleneck_queue_pkts: usize,
    pub phase: &'static str,
    /// Drops at the downlink bottleneck so far: drop-tail, CoDel and random loss.
    pub drops: u64,
}

/// Time series of a run, for `--out`.
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub path_names: Vec<String>,
    pub trace: Vec<TraceRow>,
    /// `trace.len() * paths` samples, row-major.
    pub path_trace: Vec<PathSample>,
    pub bin_s: f64,
    /// Downlink frame bytes delivered per path per bin: `bins[path][bin]`.
    pub path_bins: Vec<Vec<u64>>,
    /// Application bytes delivered per bin.
    pub goodput_bins: Vec<u64>,
}

/// Averages of the periodic trace over the samples of one time window: [`Series::means`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceMeans {
    pub e2e_cwnd_bytes: f64,
    /// One per path, in path order.
    pub path_cwnd_bytes: Vec<f64>,
    /// `None` when no sample in the window has an ACPF fraction.
    pub acpf_fraction: Option<f64>,
}

impl Series {
    /// The mean end-to-end and per-path windows and ACPF fraction over the samples taken at
    /// times in `[from_s, to_s]`; zeros (and `None`) when there is none.
    pub fn means(&self, from_s: f64, to_s: f64) -> TraceMeans {
        let np = self.path_names.len();
        let mut e2e = Stat::default();
        let mut paths = vec![Stat::default(); np];
        let mut acpf = Stat::default();
        for (k, row) in self.trace.iter().enumerate() {
            if row.t_s < from_s || row.t_s > to_s {
                continue;
            }
            e2e.add(row.e2e_cwnd_bytes as f64);
            if let Some(f) = row.acpf_fraction {
                acpf.add(f);
            }
            for (stat, sample) in
                paths.iter_mut().zip(self.path_trace.get(k * np..(k + 1) * np).unwrap_or(&[]))
            {
                stat.add(sample.cwnd_bytes as f64);
            }
        }
        TraceMeans {
            e2e_cwnd_bytes: e2e.mean_max().mean,
            path_cwnd_bytes: paths.iter().map(|s| s.mean_max().mean).collect(),
            acpf_fraction: (acpf.count() > 0).then(|| acpf.mean_max().mean),
        }
    }

    #[inline]
    pub fn add_bin(bins: &mut Vec<u64>, bin: usize, bytes: u64) {
        if bins.len() <= bin {
            bins.resize(bin + 1, 0);
        }
        bins[bin] += bytes;
    }

    /// Throughput series as CSV: `t_s,goodput_mbps,<path>_mbps...`.
    pub fn throughput_csv(&self) -> String {
        let mut out = csv_writer();
        let mut header = vec!["t_s".to_string(), "goodput_mbps".to_string()];
        header.extend(self.path_names.iter().map(|n| format!("{n}_mbps")));
        write_row(&mut out, &header);
        let len =
            self.path_bins.iter().map(Vec::len).chain([self.goodput_bins.len()]).max().unwrap_or(0);
        let to_mbps = |b: u64| b as f64 * 8.0 / self.bin_s / 1e6;
        for k in 0..len {
            let mut row = vec![
                format!("{:.3}", k as f64 * self.bin_s),
                format!("{:.3}", to_mbps(*self.goodput_bins.get(k).unwrap_or(&0))),
            ];
            for bins in &self.path_bins {
                row.push(format!("{:.3}", to_mbps(*bins.get(k).unwrap_or(&0))));
            }
            write_row(&mut out, &row);
        }
        csv_text(out)
    }

    /// The periodic trace as CSV, one row per sample with per-path columns.
    pub fn trace_csv(&self) -> String {
        let mut out = csv_writer();
        let mut header: Vec<String> = [
            "t_s",
            "e2e_cwnd_bytes",
            "e2e_in_flight_bytes",
            "e2e_srtt_ms",
            "e2e_pacing_mbps",
            "e2e_retransmissions",
            "sched_queue_pkts",
            "reorder_pkts",
            "wait_limit_ms",
            "acpf_fraction",
            "hol_ms_mean",
            "hol_ms_max",
            "tunnel_retransmissions",
            "released_on_timeout",
            "released_on_fast_loss",
        ]
        .map(String::from)
        .into();
        for n in &self.path_names {
            for c in [
                "cwnd_bytes",
                "in_flight_bytes",
                "srtt_ms",
                "pacing_mbps",
                "queue_pkts",
                "phase",
                "drops",
            ] {
                header.push(format!("{n}_{c}"));
            }
        }
        write_row(&mut out, &header);
        let np = self.path_names.len();
        let mut row = Vec::with_capacity(header.len());
        for (k, r) in self.trace.iter().enumerate() {
            row.clear();
            row.extend([
                format!("{:.3}", r.t_s),
                r.e2e_cwnd_bytes.to_string(),
                r.e2e_in_flight_bytes.to_string(),
                format!("{:.3}", r.e2e_srtt_ms),
                format!("{:.3}", r.e2e_pacing_mbps),
                r.e2e_retransmissions.to_string(),
                r.sched_queue_pkts.to_string(),
                r.reorder_pkts.to_string(),
                format!("{:.3}", r.wait_limit_ms),
                r.acpf_fraction.map_or(String::new(), |f| format!("{f:.4}")),
            ]);
            match r.hol_ms {
                Some(h) => row.extend([format!("{:.3}", h.mean), format!("{:.3}", h.max)]),
                None => row.extend([String::new(), String::new()]),
            }
            row.extend([
                r.tunnel_retransmissions.to_string(),
                r.released_on_timeout.to_string(),
                r.released_on_fast_loss.to_string(),
            ]);
            for p in &self.path_trace[k * np..(k + 1) * np] {
                row.extend([
                    p.cwnd_bytes.to_string(),
                    p.in_flight_bytes.to_string(),
                    format!("{:.3}", p.srtt_ms),
                    format!("{:.3}", p.pacing_rate_mbps),
                    p.bottleneck_queue_pkts.to_string(),
                    p.phase.to_string(),
                    p.drops.to_string(),
                ]);
            }
            write_row(&mut out, &row);
        }
        csv_text(out)
    }
}

/// A CSV writer into memory: fields are quoted only when they must be (a path name with a
/// comma, a quote or a line break), records end in `\n`.
fn csv_writer() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new())
}

fn write_row(out: &mut csv::Writer<Vec<u8>>, fields: &[String]) {
    // Writing to memory cannot fail, and every row has the header's number of fields.
    out.write_record(fields).expect("a CSV row in memory");
}

fn csv_text(out: csv::Writer<Vec<u8>>) -> String {
    let bytes = out.into_inner().expect("flushing CSV into memory");
    String::from_utf8(bytes).expect("UTF-8 fields make UTF-8 CSV")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_tracks_mean_and_max() {
        let mut s = Stat::default();
        assert_eq!(s.mean_max(), MeanMax::default());
        for v in [1.0, 5.0, 3.0] {
            s.add(v);
        }
        assert_eq!(s.mean_max(), MeanMax { mean: 3.0, max: 5.0 });
    }

    #[test]
    fn trace_means_average_the_samples_inside_the_window() {
        let row = |t_s: f64, cwnd: u64, acpf: Option<f64>| TraceRow {
            t_s,
            e2e_cwnd_bytes: cwnd,
            acpf_fraction: acpf,
            ..Default::default()
        };
        let path = |cwnd: u64| PathSample { cwnd_bytes: cwnd, ..Default::default() };
        let s = Series {
            path_names: vec!["a".into(), "b".into()],
            trace: vec![row(0.0, 100, None), row(1.0, 200, Some(0.5)), row(2.0, 400, Some(1.0))],
            path_trace: vec![path(1), path(2), path(10), path(20), path(30), path(40)],
            ..Default::default()
        };
        let m = s.means(0.5, 2.0);
        assert_eq!(m.e2e_cwnd_bytes, 300.0);
        assert_eq!(m.path_cwnd_bytes, [20.0, 30.0]);
        assert_eq!(m.acpf_fraction, Some(0.75));
        let none = s.means(5.0, 6.0);
        assert_eq!((none.e2e_cwnd_bytes, none.acpf_fraction), (0.0, None));
        assert_eq!(s.means(0.0, 0.0).acpf_fraction, None);
    }

    #[test]
    fn throughput_csv_converts_bins_to_mbps() {
        let s = Series {
            path_names: vec!["wifi".into()],
            bin_s: 0.1,
            path_bins: vec![vec![1_250_000]],
            goodput_bins: vec![625_000],
            ..Default::default()
        };
        assert_eq!(s.throughput_csv(), "t_s,goodput_mbps,wifi_mbps\n0.000,50.000,100.000\n");
    }

    #[test]
    fn trace_csv_writes_hol_counters_and_drops() {
        let s = Series {
            path_names: vec!["wifi".into()],
            trace: vec![
                TraceRow {
                    t_s: 0.01,
                    hol_ms: Some(MeanMax { mean: 2.5, max: 4.0 }),
                    tunnel_retransmissions: 3,
                    released_on_timeout: 1,
                    released_on_fast_loss: 2,
                    ..Default::default()
                },
                TraceRow { t_s: 0.02, ..Default::default() },
            ],
            path_trace: vec![
                PathSample { drops: 7, phase: "ca", ..Default::default() },
                PathSample { drops: 9, phase: "ca", ..Default::default() },
            ],
            ..Default::default()
        };
        let csv = s.trace_csv();
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| r.len() == header.len()));
        assert_eq!(rows[0][col("hol_ms_mean")], "2.500");
        assert_eq!(rows[0][col("hol_ms_max")], "4.000");
        assert_eq!(rows[0][col("tunnel_retransmissions")], "3");
        assert_eq!(rows[0][col("released_on_timeout")], "1");
        assert_eq!(rows[0][col("released_on_fast_loss")], "2");
        assert_eq!(rows[0][col("wifi_drops")], "7");
        // No delivery in the second interval: the HoL cells are empty, not zero.
        assert_eq!(rows[1][col("hol_ms_mean")], "");
        assert_eq!(rows[1][col("hol_ms_max")], "");
        assert_eq!(rows[1][col("wifi_drops")], "9");
    }

    #[test]
    fn path_names_that_need_quoting_stay_one_column() {
        let names = ["wi,fi", "say \"hi\""];
        let s = Series {
            path_names: names.map(String::from).into(),
            trace: vec![TraceRow { t_s: 0.01, ..Default::default() }],
            path_trace: vec![PathSample { drops: 7, ..Default::default() }; 2],
            bin_s: 0.1,
            path_bins: vec![vec![1_250_000], vec![0]],
            goodput_bins: vec![625_000],
        };
        // 15 fixed columns and 7 per path in the trace; 2 and 1 in the throughput series.
        for (csv, fixed, per_path, column) in
            [(s.trace_csv(), 15, 7, "wi,fi_cwnd_bytes"), (s.throughput_csv(), 2, 1, "wi,fi_mbps")]
        {
            let mut reader = csv::Reader::from_reader(csv.as_bytes());
            let header = reader.headers().unwrap().clone();
            assert_eq!(header.len(), fixed + 2 * per_path, "{csv}");
            assert_eq!(header.iter().nth(fixed), Some(column), "{csv}");
            assert!(header.iter().any(|h| h.starts_with("say \"hi\"_")), "{csv}");
            let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0].len(), header.len(), "{csv}");
        }
        assert!(s.trace_csv().contains(",\"wi,fi_cwnd_bytes\","));
        assert!(s.throughput_csv().contains(",\"say \"\"hi\"\"_mbps\"\n"));
    }
}
