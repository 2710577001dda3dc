//! What the daemon reports: a [`Snapshot`] the event loop publishes every 100 ms, served on a
//! local port as Prometheus text (`/metrics`) and JSON (`/status`), and printed as a table by
//! `braid tunnel status`; beside them the operator page (`/`, `operator_page.html`) and the
//! last five minutes it draws (`/history`, [`crate::history`]).
//!
//! Per-packet facts are counters in the snapshot, never log lines. The HTTP server is one
//! blocking thread (tiny_http), apart from the packet path; the exposition format is
//! prometheus-client's.

use std::fmt::Write as _;
use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use braid_core::reorder::OwdSummary;
use prometheus_client::encoding::{EncodeLabelSet, LabelSetEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use serde::{Deserialize, Serialize};

/// One path's state and counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PathSnapshot {
    pub name: String,
    /// The peer whose path this is, on a server with several (`None` with one peer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    pub up: bool,
    pub remote: Option<String>,
    pub cwnd_bytes: u64,
    pub in_flight_bytes: u64,
    pub srtt_ms: Option<f64>,
    pub min_rtt_ms: Option<f64>,
    pub pacing_rate_bps: Option<u64>,
    /// The controller's phase; on a TCP path the kernel's `tcpi_ca_state`.
    pub cc_phase: String,
    /// A TCP path's congestion control, read from its live socket (`TCP_CONGESTION`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_cc: Option<String>,
    pub pacing_queue_pkts: usize,
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    pub rx_pkts: u64,
    pub rx_bytes: u64,
    /// Packets the sender's loss detection declared lost; on a TCP path the segments the
    /// kernel retransmitted.
    pub lost_pkts: u64,
    pub rto_count: u64,
    /// Datagrams the socket refused (full send buffer).
    pub socket_drops: u64,
    /// Data packets sent as compact messages (4-byte header; `interface.compact`).
    #[serde(default)]
    pub compact_tx_pkts: u64,
    /// TCP path connections closed for a malformed stream (bad frame length).
    #[serde(default)]
    pub stream_errors: u64,
    /// One-way delays of the data this end received on the path, as its reorder buffer sampled
    /// them: RFC 3550 jitter, mean above the smallest sample, standard deviation and range
    /// (braid-core `reorder::OwdSummary`). Absent before the first timestamped packet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_owd: Option<OwdSummary>,
}

/// One peer's session and inner traffic.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PeerSnapshot {
    pub name: String,
    pub established: bool,
    pub handshakes: u64,
    /// Inner packets routed to this peer, and delivered from it.
    pub tun_rx_pkts: u64,
    pub tun_tx_pkts: u64,
    /// Inner packets from this peer whose source is not one of its allowed addresses.
    pub spoofed_pkts: u64,
}

/// The whole daemon's state and counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub interface: String,
    pub role: String,
    pub established: bool,
    pub uptime_s: f64,
    pub handshakes: u64,
    /// Handshake messages dropped for a wrong `mac1` (not made for this host's key).
    #[serde(default)]
    pub handshake_bad_mac1: u64,
    /// Cookie replies sent instead of handshakes while under load.
    #[serde(default)]
    pub cookie_replies: u64,
    /// Initiations refused by the handshake rate limits.
    #[serde(default)]
    pub handshakes_rate_limited: u64,
    /// Datagrams that failed authentication or were replays.
    pub rejected_datagrams: u64,
    /// Inner packets for a destination no peer may use (cryptokey routing).
    #[serde(default)]
    pub unrouted_pkts: u64,
    /// TCP SYNs read from the TUN device whose MSS option was lowered to fit the tunnel.
    #[serde(default)]
    pub mss_clamped_pkts: u64,
    pub tun_rx_pkts: u64,
    pub tun_tx_pkts: u64,
    pub sched_queue_pkts: usize,
    /// Inner packets dropped at the scheduler queue: full (drop-tail), or by CoDel when
    /// `tunnel.sched_codel_target_ms` is set.
    pub sched_drops: u64,
    pub reorder_pkts: usize,
    pub reorder_wait_limit_ms: f64,
    /// Inner packets the reorder buffer refused as duplicates.
    pub reorder_duplicates: u64,
    /// Inner packets released after their gap was given up.
    pub reorder_released_on_timeout: u64,
    /// Every peer's paths, peer by peer (one peer: just its paths).
    pub paths: Vec<PathSnapshot>,
    #[serde(default)]
    pub peers: Vec<PeerSnapshot>,
}

/// Where the event loop publishes and the server reads.
pub type Shared = Arc<Mutex<Snapshot>>;

/// A per-path metric: name, help, and how to read it from a path's snapshot (`None`: the
/// value is not known yet, and the path's series is left out).
type PathMetric<T> = (&'static str, &'static str, fn(&PathSnapshot) -> Option<T>);

/// A gauge of real values (seconds, rates).
type RealGauge = Gauge<f64, AtomicU64>;

/// The OpenMetrics text format's content type: what [`Snapshot::to_prometheus`] writes
/// (prometheus-client's encoder, ending in `# EOF`), which Prometheus negotiates and parses.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PeerLabel {
    peer: String,
}

/// A per-peer series: its name, help and value.
type PeerMetric = fn(&PeerSnapshot) -> u64;

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct PathLabel {
    /// The peer, on a server with several: a `peer` label then, none with one peer.
    peer: Option<String>,
    path: String,
}

impl EncodeLabelSet for PathLabel {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> Result<(), std::fmt::Error> {
        use prometheus_client::encoding::EncodeLabel;
        if let Some(peer) = &self.peer {
            ("peer", peer.as_str()).encode(encoder.encode_label())?;
        }
        ("path", self.path.as_str()).encode(encoder.encode_label())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: String,
    role: String,
}

impl Snapshot {
    /// The snapshot in the OpenMetrics text format, following Prometheus's naming rules
    /// (prometheus.io, "Metric and label naming"): every name starts `braid_`, values are in
    /// base units (seconds, bytes), counters end in `_total`, a value not known yet (a path's
    /// RTT before its first sample) is left out rather than given a sentinel, paths are a
    /// `path` label holding the configured name, and `braid_build_info` carries the version.
    pub fn to_prometheus(&self) -> String {
        let mut reg = Registry::with_prefix("braid");
        let gauge = |reg: &mut Registry, name: &str, help: &str, v: f64| {
            let g = RealGauge::default();
            g.set(v);
            reg.register(name, help, g);
        };
        let counter = |reg: &mut Registry, name: &str, help: &str, v: u64| {
            let c: Counter = Counter::default();
            c.inc_by(v);
            reg.register(name, help, c);
        };
        let info = Family::<BuildLabels, Gauge>::default();
        info.get_or_create(&BuildLabels {
            version: env!("CARGO_PKG_VERSION").to_string(),
            role: self.role.clone(),
        })
        .set(1);
        reg.register("build_info", "The daemon's version and role (always 1)", info);
        gauge(&mut reg, "established", "1 once the handshake completed", self.established.into());
        gauge(&mut reg, "uptime_seconds", "Time since the daemon started", self.uptime_s);
        counter(&mut reg, "handshakes", "Completed handshakes", self.handshakes);
        counter(
            &mut reg,
            "handshake_bad_mac1",
            "Handshake messages dropped for a wrong mac1, before any DH",
            self.handshake_bad_mac1,
        );
        counter(
            &mut reg,
            "cookie_replies",
            "Cookie replies sent instead of handshakes under load",
            self.cookie_replies,
        );
        counter(
            &mut reg,
            "handshakes_rate_limited",
            "Initiations refused by the handshake rate limits",
            self.handshakes_rate_limited,
        );
        counter(
            &mut reg,
            "rejected_datagrams",
            "Datagrams failing authentication or replays",
            self.rejected_datagrams,
        );
        counter(
            &mut reg,
            "tun_rx_packets",
            "Inner packets read from the TUN device",
            self.tun_rx_pkts,
        );
        counter(
            &mut reg,
            "tun_tx_packets",
            "Inner packets written to the TUN device",
            self.tun_tx_pkts,
        );
        gauge(
            &mut reg,
            "scheduler_queue_packets",
            "Packets in the scheduler queue",
            self.sched_queue_pkts as f64,
        );
        counter(
            &mut reg,
            "scheduler_drops",
            "Packets dropped at the scheduler queue (full, or by CoDel)",
            self.sched_drops,
        );
        gauge(
            &mut reg,
            "reorder_buffer_packets",
            "Packets held for reordering",
            self.reorder_pkts as f64,
        );
        gauge(
            &mut reg,
            "reorder_wait_limit_seconds",
            "Current reorder wait limit",
            self.reorder_wait_limit_ms / 1e3,
        );
        counter(
            &mut reg,
            "reorder_duplicates",
            "Duplicates the reorder buffer refused",
            self.reorder_duplicates,
        );
        counter(
            &mut reg,
            "reorder_released_on_timeout",
            "Packets released after a gap was given up",
            self.reorder_released_on_timeout,
        );

        let path_gauges: [PathMetric<f64>; 7] = [
            ("path_up", "1 while the path is live", |p| Some(p.up.into())),
            ("path_cwnd_bytes", "Congestion window", |p| Some(p.cwnd_bytes as f64)),
            ("path_in_flight_bytes", "Bytes in flight", |p| Some(p.in_flight_bytes as f64)),
            ("path_srtt_seconds", "Smoothed RTT", |p| p.srtt_ms.map(|v| v / 1e3)),
            ("path_min_rtt_seconds", "Minimum RTT", |p| p.min_rtt_ms.map(|v| v / 1e3)),
            ("path_pacing_rate_bytes_per_second", "Pacing rate", |p| {
                p.pacing_rate_bps.map(|v| v as f64 / 8.0)
            }),
            ("path_pacing_queue_packets", "Packets waiting for their pacing slot", |p| {
                Some(p.pacing_queue_pkts as f64)
            }),
        ];
        for (name, help, get) in path_gauges {
            let fam = Family::<PathLabel, RealGauge>::default();
            for p in &self.paths {
                if let Some(v) = get(p) {
                    fam.get_or_create(&PathLabel { peer: p.peer.clone(), path: p.name.clone() })
                        .set(v);
                }
            }
            reg.register(name, help, fam);
        }
        let path_counters: [PathMetric<u64>; 9] = [
            ("path_tx_packets", "Datagrams sent", |p| Some(p.tx_pkts)),
            ("path_tx_bytes", "Bytes sent", |p| Some(p.tx_bytes)),
            ("path_rx_packets", "Datagrams received", |p| Some(p.rx_pkts)),
            ("path_rx_bytes", "Bytes received", |p| Some(p.rx_bytes)),
            ("path_lost_packets", "Packets declared lost", |p| Some(p.lost_pkts)),
            ("path_rto", "Retransmission timeouts", |p| Some(p.rto_count)),
            ("path_socket_drops", "Datagrams the socket refused", |p| Some(p.socket_drops)),
            ("path_compact_packets", "Data packets sent as compact messages", |p| {
                Some(p.compact_tx_pkts)
            }),
            ("path_stream_errors", "TCP path connections closed for a malformed stream", |p| {
                Some(p.stream_errors)
            }),
        ];
        for (name, help, get) in path_counters {
            let fam = Family::<PathLabel, Counter>::default();
            for p in &self.paths {
                if let Some(v) = get(p) {
                    fam.get_or_create(&PathLabel { peer: p.peer.clone(), path: p.name.clone() })
                        .inc_by(v);
                }
            }
            reg.register(name, help, fam);
        }
        counter(
            &mut reg,
            "unrouted_packets",
            "Inner packets for a destination no peer may use",
            self.unrouted_pkts,
        );
        counter(
            &mut reg,
            "clamped_syn_packets",
            "TCP SYNs whose MSS was lowered to fit the tunnel's MTU",
            self.mss_clamped_pkts,
        );
        let peer_gauges: [(&str, &str, PeerMetric); 1] =
            [("peer_established", "1 once the peer's handshake completed", |p| {
                p.established.into()
            })];
        for (name, help, get) in peer_gauges {
            let fam = Family::<PeerLabel, RealGauge>::default();
            for p in &self.peers {
                fam.get_or_create(&PeerLabel { peer: p.name.clone() }).set(get(p) as f64);
            }
            reg.register(name, help, fam);
        }
        let peer_counters: [(&str, &str, PeerMetric); 4] = [
            ("peer_handshakes", "Completed handshakes with the peer", |p| p.handshakes),
            ("peer_tun_rx_packets", "Inner packets routed to the peer", |p| p.tun_rx_pkts),
            ("peer_tun_tx_packets", "Inner packets delivered from the peer", |p| p.tun_tx_pkts),
            (
                "peer_spoofed_packets",
                "Inner packets from the peer with a source outside its allowed_ips, dropped",
                |p| p.spoofed_pkts,
            ),
        ];
        for (name, help, get) in peer_counters {
            let fam = Family::<PeerLabel, Counter>::default();
            for p in &self.peers {
                fam.get_or_create(&PeerLabel { peer: p.name.clone() }).inc_by(get(p));
            }
            reg.register(name, help, fam);
        }
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &reg)
            .expect("writing to a String cannot fail");
        out
    }

    /// The snapshot as the table `braid tunnel status` prints.
    pub fn to_table(&self) -> String {
        let mut s = String::new();
        let state = if self.established { "established" } else { "handshaking" };
        let _ = writeln!(
            s,
            "{} ({}), {state}, up {:.0} s, {} handshakes, {} rejected datagrams",
            self.interface, self.role, self.uptime_s, self.handshakes, self.rejected_datagrams
        );
        let _ = writeln!(
            s,
            "scheduler queue {} pkts ({} drops), reorder buffer {} pkts (wait limit {:.1} ms, {} duplicates)",
            self.sched_queue_pkts,
            self.sched_drops,
            self.reorder_pkts,
            self.reorder_wait_limit_ms,
            self.reorder_duplicates
        );
        let _ = writeln!(
            s,
            "{:<10} {:<5} {:>11} {:>11} {:>8} {:>8} {:>10} {:>10} {:>8} {:>6}  remote",
            "path",
            "up",
            "cwnd",
            "in_flight",
            "srtt_ms",
            "min_rtt",
            "tx_pkts",
            "rx_pkts",
            "lost",
            "drops"
        );
        let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
        for p in &self.paths {
            // On a server with several peers each row is one peer's path: PEER/PATH.
            let name = p.peer.as_ref().map_or(p.name.clone(), |peer| format!("{peer}/{}", p.name));
            let _ = writeln!(
                s,
                "{:<10} {:<5} {:>11} {:>11} {:>8} {:>8} {:>10} {:>10} {:>8} {:>6}  {}",
                name,
                if p.up { "yes" } else { "no" },
                p.cwnd_bytes,
                p.in_flight_bytes,
                ms(p.srtt_ms),
                ms(p.min_rtt_ms),
                p.tx_pkts,
                p.rx_pkts,
                p.lost_pkts,
                p.socket_drops,
                p.remote.as_deref().unwrap_or("-")
            );
        }
        s
    }
}

/// Why the metrics endpoint could not start or be read.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("interface.metrics_listen: cannot listen on {addr}: {detail}")]
    Listen { addr: SocketAddr, detail: String },
    #[error("reading status from {addr}: {detail}")]
    Fetch { addr: SocketAddr, detail: String },
}

/// The operator page: one self-contained HTML file (no external resources), polling `history`.
const OPERATOR_PAGE: &str = include_str!("operator_page.html");

/// Serves `/metrics` and `/status` from `shared`, the operator page, and its `/history` as the
/// JSON `history` writes (crate::history, which reads this module's snapshots), on `addr`, on
/// a thread of its own that lives as long as the process.
pub fn serve(
    addr: SocketAddr,
    shared: Shared,
    history: impl Fn() -> String + Send + 'static,
) -> Result<(), MetricsError> {
    let server = tiny_http::Server::http(addr)
        .map_err(|e| MetricsError::Listen { addr, detail: e.to_string() })?;
    thread::Builder::new()
        .name("braid-metrics".into())
        .spawn(move || {
            for request in server.incoming_requests() {
                let snap = shared.lock().map(|s| s.clone()).unwrap_or_default();
                let (body, ctype) = match request.url() {
                    "/metrics" => (snap.to_prometheus(), OPENMETRICS_CONTENT_TYPE),
                    "/status" => {
                        (serde_json::to_string(&snap).unwrap_or_default(), "application/json")
                    }
                    "/" => (OPERATOR_PAGE.to_string(), "text/html; charset=utf-8"),
                    "/history" => (history(), "application/json"),
                    _ => {
                        let _ = request.respond(tiny_http::Response::empty(404));
                        continue;
                    }
                };
                let header = tiny_http::Header::from_bytes("Content-Type", ctype)
                    .expect("a valid static header");
                let _ = request.respond(tiny_http::Response::from_string(body).with_header(header));
            }
        })
        .map_err(|e| MetricsError::Listen { addr, detail: e.to_string() })?;
    Ok(())
}

/// Fetches a running daemon's `/status` (what `braid tunnel status` shows).
pub fn fetch_status(addr: SocketAddr) -> Result<Snapshot, MetricsError> {
    let fail = |detail: String| MetricsError::Fetch { addr, detail };
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))
        .map_err(|e| fail(e.to_string()))?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).map_err(|e| fail(e.to_string()))?;
    use std::io::Write;
    write!(stream, "GET /status HTTP/1.0\r\nHost: {addr}\r\n\r\n")
        .map_err(|e| fail(e.to_string()))?;
    let mut response = String::new();
    stream.read_to_string(&mut response).map_err(|e| fail(e.to_string()))?;
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b)
        .ok_or_else(|| fail("no HTTP body".into()))?;
    serde_json::from_str(body).map_err(|e| fail(format!("not a status document: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Snapshot {
        Snapshot {
            interface: "braid0".into(),
            role: "client".into(),
            established: true,
            sched_drops: 3,
            paths: vec![
                PathSnapshot {
                    name: "wifi".into(),
                    up: true,
                    cwnd_bytes: 14600,
                    srtt_ms: Some(20.5),
                    tx_pkts: 7,
                    ..Default::default()
                },
                PathSnapshot { name: "cell".into(), up: false, ..Default::default() },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn prometheus_text_carries_per_path_labels_and_values() {
        let text = sample().to_prometheus();
        assert!(text.contains("braid_path_cwnd_bytes{path=\"wifi\"} 14600.0"), "{text}");
        assert!(text.contains("braid_path_up{path=\"cell\"} 0.0"), "{text}");
        // Base units: 20.5 ms is 0.0205 s.
        assert!(text.contains("braid_path_srtt_seconds{path=\"wifi\"} 0.0205"), "{text}");
        assert!(text.contains("braid_path_tx_packets_total{path=\"wifi\"} 7"), "{text}");
        assert!(text.contains("braid_scheduler_drops_total 3"), "{text}");
        assert!(text.contains("braid_build_info{version=\"0.1.0\",role=\"client\"} 1"), "{text}");
        assert!(text.ends_with("# EOF\n"));
    }

    /// A value not known yet is left out, never a sentinel: the path without an RTT sample has
    /// no srtt series, the one with a sample has one; no value anywhere is negative.
    #[test]
    fn unknown_values_are_left_out_and_names_follow_prometheus_rules() {
        let text = sample().to_prometheus();
        assert!(!text.contains("braid_path_srtt_seconds{path=\"cell\"}"), "{text}");
        assert!(!text.contains("braid_path_pacing_rate_bytes_per_second{path=\"cell\"}"), "{text}");
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (name, value) = line.rsplit_once(' ').unwrap();
            assert!(name.starts_with("braid_"), "{line}");
            assert!(!value.starts_with('-'), "a negative sample: {line}");
            // No units other than the base ones.
            for unit in ["_microseconds", "_milliseconds", "_bits", "_ms"] {
                assert!(!name.contains(unit), "{line}");
            }
        }
        // Every counter ends in _total.
        for line in text.lines().filter(|l| l.starts_with("# TYPE") && l.ends_with(" counter")) {
            let name = line.split(' ').nth(2).unwrap();
            assert!(text.contains(&format!("{name}_total")), "{line}");
        }
    }

    /// Every series packaging/grafana-dashboard.json queries is one the daemon exports (a
    /// renamed metric would leave a panel silently empty), and every per-path gauge and
    /// counter the daemon exports has a panel.
    #[test]
    fn the_grafana_dashboard_queries_only_exported_series() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../packaging/grafana-dashboard.json");
        let dashboard: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let exprs: Vec<String> = dashboard["panels"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p["targets"].as_array().unwrap().iter())
            .map(|t| t["expr"].as_str().unwrap().to_string())
            .collect();
        let names_in = |text: &str| -> Vec<String> {
            let mut names = Vec::new();
            let mut rest = text;
            while let Some(at) = rest.find("braid_") {
                let tail = &rest[at..];
                let end = tail
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(tail.len());
                names.push(tail[..end].to_string());
                rest = &tail[end..];
            }
            names
        };
        // Every optional value known, so that every series is exported.
        let mut sample = sample();
        for p in &mut sample.paths {
            p.srtt_ms = Some(40.0);
            p.min_rtt_ms = Some(30.0);
            p.pacing_rate_bps = Some(8_000_000);
        }
        let exported: std::collections::BTreeSet<String> = sample
            .to_prometheus()
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split(['{', ' ']).next().unwrap().to_string())
            .collect();
        let queried: std::collections::BTreeSet<String> =
            exprs.iter().flat_map(|e| names_in(e)).collect();
        assert!(queried.len() >= 15, "{queried:?}");
        for name in &queried {
            assert!(exported.contains(name), "the dashboard queries {name}, which is not exported");
        }
        for name in exported.iter().filter(|n| n.starts_with("braid_path_")) {
            assert!(queried.contains(name), "no panel shows {name}");
        }
    }

    #[test]
    fn the_server_answers_metrics_and_status_and_status_round_trips() {
        let shared: Shared = Arc::new(Mutex::new(sample()));
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = probe.local_addr().unwrap();
        drop(probe);
        serve(addr, Arc::clone(&shared), || "{\"paths\":[]}".to_string()).unwrap();
        assert_eq!(fetch_status(addr).unwrap(), sample());
        let get = |path: &str| {
            let mut s = TcpStream::connect(addr).unwrap();
            std::io::Write::write_all(&mut s, format!("GET {path} HTTP/1.0\r\n\r\n").as_bytes())
                .unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            out
        };
        let page = get("/");
        assert!(page.contains("Content-Type: text/html; charset=utf-8"), "{page}");
        assert!(page.contains("fetch(\"history\""), "the page polls its history");
        let history = get("/history");
        assert!(history.contains("application/json") && history.ends_with("{\"paths\":[]}"));
        assert!(
            get("/nothing").starts_with("HTTP/1.1 404")
                || get("/nothing").starts_with("HTTP/1.0 404")
        );
        shared.lock().unwrap().sched_drops = 9;
        assert_eq!(fetch_status(addr).unwrap().sched_drops, 9, "serves the latest snapshot");
        let table = sample().to_table();
        assert!(table.lines().any(|l| l.starts_with("wifi") && l.contains("14600")), "{table}");
    }
}
