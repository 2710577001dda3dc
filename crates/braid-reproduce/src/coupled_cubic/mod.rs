//! `braid reproduce coupled-cubic`: Lee et al. 2023, "Coupled CUBIC Congestion Control for
//! MPTCP in Broadband Networks" (Computer Systems Science and Engineering 45(1)), rerun in
//! braid-sim with the tunnel's two paths as the testbed's two subflows.
//!
//! - Figure 7: the average throughput of each subflow and their total, for single-path CUBIC
//!   on the large path alone, LIA, CCUBIC(alpha_1) and CCUBIC(alpha_2), plus uncoupled CUBIC
//!   and NewReno per path ([`VARIANTS`], [`SINGLE_PATH`]), over repetitions.
//! - Figures 5 and 6: each subflow's congestion window over time under LIA and under Coupled
//!   CUBIC ([`SERIES`]).
//!
//! This module says what runs, as data, with the reading of section 4.1 written into the
//! output ([`SETUP_NOTE`], [`SERIES_NOTE`]); [`specs`] writes the sweep specs, [`tables`] makes
//! `utilisation.csv`, and [`run`] does it all.

pub mod run;
pub mod specs;
pub mod tables;

use crate::series::Example;
use crate::toml_text::quoted;

/// One subflow's path of section 4.1 (Table 3 of the paper).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Subflow {
    /// The path's name in the scenario (and the CSV columns).
    pub name: &'static str,
    /// Bottleneck rate, Mbit/s, both directions.
    pub rate_mbps: f64,
    pub rtt_ms: f64,
}

/// Section 4.1: subflow 1 over 500 Mbit/s with 100 ms delay (the large-BDP path), subflow 2
/// over 100 Mbit/s with 20 ms (the small-BDP path). The delays are read as RTTs.
pub const SUBFLOWS: [Subflow; 2] = [
    Subflow { name: "subflow1", rate_mbps: 500.0, rtt_ms: 100.0 },
    Subflow { name: "subflow2", rate_mbps: 100.0, rtt_ms: 20.0 },
];

/// Section 4.1: "10^-6 ... was set in the subflow 1 and 2 bottleneck links".
pub const LOSS: f64 = 1e-6;

/// The greedy UDP source's rate, Mbit/s: above both paths' 600 Mbit/s, so the tunnel's
/// controller alone decides what each path carries (the paper's iperf TCP flow is the MPTCP
/// connection itself; here the tunnel carries a flow that never limits it).
pub const OFFERED_MBPS: f64 = 700.0;

/// The datagram size on the wire (IP packet) of the UDP source, bytes: the scenario default,
/// and the packet the windows are counted in (`cwnd_pkts` = bytes / this).
pub const PACKET_BYTES: u32 = 1500;

/// The server link's RTT, ms: next to nothing, so each subflow's RTT is its path's.
pub const SERVER_RTT_MS: f64 = 0.1;

/// One BDP of `PACKET_BYTES` packets, rounded up: "the buffer size of all intermediate points
/// ... was set to about 100% of the corresponding BDP" (4167 and 167 packets).
pub fn bdp_pkts(s: &Subflow) -> u32 {
    (s.rate_mbps * 1e6 / 8.0 * s.rtt_ms / 1e3 / f64::from(PACKET_BYTES)).ceil() as u32
}

/// One tunnel congestion control of Figure 7.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    /// The axis label.
    pub label: &'static str,
    /// `tunnel.cc`.
    pub tunnel_cc: &'static str,
    /// `tunnel.coupled_cubic.alpha_refinements` for Coupled CUBIC (0: alpha_1 only).
    pub alpha_refinements: Option<u32>,
}

/// The two-path variants: LIA, CCUBIC(alpha_1), CCUBIC(alpha_2) (Figure 7), and uncoupled CUBIC
/// and NewReno on each path for reference.
pub const VARIANTS: &[Variant] = &[
    Variant { label: "lia", tunnel_cc: "lia", alpha_refinements: None },
    Variant { label: "coupled_cubic_a1", tunnel_cc: "coupled_cubic", alpha_refinements: Some(0) },
    Variant { label: "coupled_cubic", tunnel_cc: "coupled_cubic", alpha_refinements: Some(1) },
    Variant { label: "cubic", tunnel_cc: "cubic", alpha_refinements: None },
    Variant { label: "newreno", tunnel_cc: "newreno", alpha_refinements: None },
];

/// Figure 7's first bar: "TCP CUBIC operates alone along the high BDP path", here a one-path
/// tunnel over subflow 1's path with CUBIC.
pub const SINGLE_PATH: Variant =
    Variant { label: "cubic_single_path", tunnel_cc: "cubic", alpha_refinements: None };

impl Variant {
    /// The overrides this variant sets, as (dotted key, TOML value).
    pub fn fields(&self) -> Vec<(String, String)> {
        let mut out = vec![("tunnel.cc".to_string(), quoted(self.tunnel_cc))];
        if let Some(n) = self.alpha_refinements {
            out.push(("tunnel.coupled_cubic.alpha_refinements".to_string(), n.to_string()));
        }
        out
    }
}

/// The variant labelled `label`, single path included.
pub fn variant(label: &str) -> Option<&'static Variant> {
    VARIANTS.iter().chain(std::iter::once(&SINGLE_PATH)).find(|v| v.label == label)
}

/// The time-series sampling interval, ms: a window changes over seconds here.
pub const SERIES_SAMPLE_MS: f64 = 100.0;

/// The subflow fields of a path, as an inline TOML table's fields.
fn path_fields(s: &Subflow) -> Vec<(String, String)> {
    vec![
        ("name".into(), quoted(s.name)),
        ("rate_mbps".into(), format!("{:?}", s.rate_mbps)),
        ("uplink_rate_mbps".into(), format!("{:?}", s.rate_mbps)),
        ("rtt_ms".into(), format!("{:?}", s.rtt_ms)),
        ("buffer_pkts".into(), bdp_pkts(s).to_string()),
        ("loss".into(), format!("{LOSS:?}")),
    ]
}

/// The overrides every run has for `seconds` of traffic: the UDP source, the tunnel's
/// scheduler and, with `single_path`, only subflow 1's path, else both.
pub fn testbed_fields(seconds: u32, single_path: bool) -> Vec<(String, String)> {
    let bytes = (OFFERED_MBPS * 1e6 / 8.0 * f64::from(seconds)).round() as u64;
    let mut out = vec![
        ("e2e.kind".to_string(), quoted("udp")),
        ("e2e.udp_rate_mbps".to_string(), format!("{OFFERED_MBPS:?}")),
        ("e2e.udp_packet_bytes".to_string(), PACKET_BYTES.to_string()),
        ("e2e.bytes".to_string(), bytes.to_string()),
        ("sim.max_time_s".to_string(), format!("{:?}", 3.0 * f64::from(seconds) + 10.0)),
        ("server_link.rtt_ms".to_string(), format!("{SERVER_RTT_MS:?}")),
        ("tunnel.scheduler".to_string(), quoted("srtt")),
    ];
    let paths: &[Subflow] = if single_path { &SUBFLOWS[..1] } else { &SUBFLOWS };
    let tables: Vec<String> = paths
        .iter()
        .map(|s| {
            let f: Vec<String> = path_fields(s).iter().map(|(k, v)| format!("{k} = {v}")).collect();
            format!("{{ {} }}", f.join(", "))
        })
        .collect();
    out.push(("paths".to_string(), format!("[{}]", tables.join(", "))));
    out
}

/// One time-series run of Figures 5 and 6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesRun {
    /// The folder under `series/`.
    pub label: &'static str,
    pub figure: &'static str,
    /// One of [`VARIANTS`], by label.
    pub variant: &'static str,
}

/// Figure 5 (LIA) and Figure 6 (Coupled CUBIC, CCUBIC(alpha_2)).
pub const SERIES: &[SeriesRun] = &[
    SeriesRun { label: "fig5_lia", figure: "5", variant: "lia" },
    SeriesRun { label: "fig6_coupled_cubic", figure: "6", variant: "coupled_cubic" },
];

/// The Figure 5 and 6 runs as examples, `seconds` long.
pub fn series_examples(seconds: u32) -> Vec<Example> {
    SERIES
        .iter()
        .map(|r| {
            let v = variant(r.variant).expect("SERIES names VARIANTS");
            let mut fields = testbed_fields(seconds, false);
            fields.extend(v.fields());
            fields.push(("sim.sample_interval_ms".into(), format!("{SERIES_SAMPLE_MS:?}")));
            let overrides = fields.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
            Example { label: r.label.to_string(), overrides }
        })
        .collect()
}

/// How the runs read section 4.1 and what differs from it; written into the output.
pub const SETUP_NOTE: &str = "Lee et al. 2023, section 4.1 and Table 3: an MPTCP connection with \
subflow 1 over a 500 Mbit/s path with 100 ms delay and subflow 2 over 100 Mbit/s with 20 ms, \
bottleneck buffers of about one BDP, packet loss 1e-6 on both, an iperf flow for 1000 s (MSS \
1460), and a single-path TCP flow competing on subflow 2's path. Read here as: the tunnel's two \
paths are the two subflows (delays read as RTTs, rates in both directions, buffers of one BDP of \
1500-byte packets: 4167 and 167, Bernoulli loss 1e-6 on both), the tunnel's congestion control is \
the MPTCP controller under test, and it carries greedy UDP offered at 700 Mbit/s (more than the \
paths' 600) so the controller alone decides each path's rate; the scheduler is SRTT (MinRTT, \
MPTCP's default); the server link adds 0.1 ms. Runs last --seconds of traffic instead of 1000 s, \
to keep the whole reproduction to about two minutes on two cores: long runs are what the paper's \
LIA numbers rest on (its window grows for 240 s before the first loss), so the shortened runs \
favour LIA, whose slow start fills the large path before the first loss. Not reproduced: the \
competing single-path TCP on subflow 2's path (Braid's topology has no cross traffic), and the \
virtual Reno and virtual LIA windows of Figure 6c-d (the controller does not export them). \
Throughputs are wire rates (every header counted), as the paper's Wireshark captures; \
utilisation is that over the path's rate. Repetitions differ by the simulator's noise model and \
the seed of the random loss; the paper ran one experiment per algorithm.";

/// How Figures 5 and 6 are read; written into the output.
pub const SERIES_NOTE: &str =
    "Figures 5 and 6 of Lee et al. 2023 plot the congestion windows over \
the 1000 s run: Figure 5 LIA's on subflow 1 (a) and subflow 2 (b); Figure 6 subflow 1's CUBIC \
window (a), its coupled CUBIC window (b), the virtual Reno (c) and virtual LIA (d) windows, and \
subflow 2's LIA window (e). Here each subflow's window (the controller's cwnd, in 1500-byte \
packets) over one run of --seconds under LIA and under Coupled CUBIC (CCUBIC(alpha_2)), sampled \
every 100 ms; for Coupled CUBIC subflow 1's window is the coupled CUBIC window of Figure 6b.";

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(fields: &[(String, String)]) -> braid_sim::Scenario {
        let sets: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
        braid_sim::Scenario::from_toml_str("", &sets).unwrap()
    }

    #[test]
    fn the_testbed_has_one_bdp_buffers_and_the_loss_on_both_paths() {
        assert_eq!((bdp_pkts(&SUBFLOWS[0]), bdp_pkts(&SUBFLOWS[1])), (4167, 167));
        let s = scenario(&testbed_fields(10, false));
        assert_eq!(s.paths.len(), 2);
        assert_eq!(
            (s.paths[0].rate_mbps, s.paths[0].rtt_ms, s.paths[0].buffer_pkts),
            (500.0, 100.0, 4167)
        );
        assert_eq!(
            (s.paths[1].rate_mbps, s.paths[1].rtt_ms, s.paths[1].buffer_pkts),
            (100.0, 20.0, 167)
        );
        assert_eq!(s.paths[1].name, "subflow2");
        assert_eq!(s.e2e.bytes, 875_000_000);
        let one = scenario(&testbed_fields(10, true));
        assert_eq!(one.paths.len(), 1);
        assert_eq!(one.paths[0].uplink_rate_mbps, 500.0);
    }

    #[test]
    fn variants_load_and_coupled_cubic_sets_its_refinements() {
        for v in VARIANTS.iter().chain([&SINGLE_PATH]) {
            let mut fields = testbed_fields(1, v.label == SINGLE_PATH.label);
            fields.extend(v.fields());
            scenario(&fields);
        }
        let a1 = variant("coupled_cubic_a1").unwrap().fields();
        assert_eq!(a1[1], ("tunnel.coupled_cubic.alpha_refinements".to_string(), "0".to_string()));
        assert_eq!(series_examples(5).len(), 2);
        braid_sim::Scenario::from_toml_str("", &series_examples(5)[1].overrides).unwrap();
    }
}
