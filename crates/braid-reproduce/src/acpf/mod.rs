//! `braid reproduce acpf`: Pieska et al. 2021, "Adaptive Cheapest Path First Scheduling in a
//! Transport-Layer Multi-Path Tunnel Context" (ANRW 2021), rerun in braid-sim.
//!
//! - Figure 5 and the throughput tables: goodput of CPF and ACPF per tunnel kind, delay set and
//!   end-to-end congestion control, over repetitions ([`TUNNELS`] x [`DELAYS`] x [`E2E_CC`] x
//!   [`SCHEDULERS`]); ACPF's gain over CPF.
//! - Figure 4: the throughput, live cwnd and server cwnd over time of six single runs
//!   ([`FIGURE4`]).
//! - Figure 6: BBR over BBR over the 400 contour points, CPF and ACPF: goodput, ACPF's live
//!   fraction, the server's cwnd.
//!
//! This module says what runs, as data, with the readings of the paper written into the
//! output ([`SETUP_NOTE`], [`FIGURE4_NOTE`], [`CONTOUR_NOTE`]); [`specs`] writes the sweep
//! specs, [`tables`] makes the CSV tables from their journals, and [`run`] does it all.

pub mod run;
pub mod specs;
pub mod tables;

use crate::series::Example;
use crate::toml_text::quoted;

/// One tunnel kind of section 5.1: the protocol and rate of both paths.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tunnel {
    /// The axis label.
    pub label: &'static str,
    /// `tunnel.cc`.
    pub cc: &'static str,
    /// `tunnel.reliability`: unreliable for DCCP, reliable for TCP.
    pub reliability: &'static str,
    /// Both paths' bottleneck rate, both directions, Mbit/s.
    pub rate_mbps: f64,
}

/// Section 5.1: "We set the bottleneck capacity for both paths to 25 (50) Mbps. DCCP-CCID5
/// (TCP-BBR) is used as tunneling protocol": the kernel framework's CCID5 tunnels at 25 Mbit/s,
/// the user-space framework's TCP-BBR tunnels at 50 Mbit/s.
pub const TUNNELS: &[Tunnel] = &[
    Tunnel { label: "ccid5", cc: "ccid5", reliability: "unreliable", rate_mbps: 25.0 },
    Tunnel { label: "bbr", cc: "bbr", reliability: "reliable", rate_mbps: 50.0 },
];

/// The rate the `--bytes` transfer is sized for: a tunnel at another rate moves
/// `bytes * rate / 50`, so that every set lasts about as long.
pub const REFERENCE_RATE_MBPS: f64 = 50.0;

/// One delay set of section 5.1, read as RTTs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Delays {
    pub label: &'static str,
    /// Anchor (proxy) to server.
    pub server_rtt_ms: f64,
    /// The primary (cheap) path.
    pub path1_rtt_ms: f64,
    /// The secondary path.
    pub path2_rtt_ms: f64,
}

/// Section 5.1: "4 ms latency between anchor and server, and 16 and 26 ms over the primary and
/// secondary path — our short scenario ... a long RTT scenario where the aforementioned delays
/// instead are 8 ms, 32 ms, and 42 ms".
pub const DELAYS: &[Delays] = &[
    Delays { label: "short", server_rtt_ms: 4.0, path1_rtt_ms: 16.0, path2_rtt_ms: 26.0 },
    Delays { label: "long", server_rtt_ms: 8.0, path1_rtt_ms: 32.0, path2_rtt_ms: 42.0 },
];

/// Section 5.2: "TCP-NewReno, TCP-Cubic, or TCP-BBR is used end-to-end".
pub const E2E_CC: &[&str] = &["newreno", "cubic", "bbr"];

/// The schedulers compared.
pub const SCHEDULERS: &[&str] = &["cpf", "acpf"];

/// Bottleneck buffer of both paths, packets: "large enough to not overflow from BBR"
/// (section 5.1) read as 2000 packets (BBR keeps about one BDP, 55-110 packets here, queued).
pub const DEFAULT_BUFFER_PKTS: u32 = 2000;

/// Path 2's RTT above path 1's on the contour points: section 5.1's "path latency asymmetry
/// of 10 ms" (the nested-cc contours use 20 ms).
pub const CONTOUR_PATH2_OFFSET_MS: f64 = 10.0;

/// The sampling interval of the Figure 4 traces, ms: ACPF's fraction moves by at most 0.02 in
/// 20 ms, so the trace misses nothing a figure shows, at half the rows of the default 10 ms.
pub const SERIES_SAMPLE_MS: f64 = 20.0;

/// A tunnel kind's overrides for a download of `bytes` (at [`REFERENCE_RATE_MBPS`]), as
/// (dotted key, TOML value).
pub fn tunnel_fields(t: &Tunnel, bytes: u64) -> Vec<(String, String)> {
    let mut out = vec![
        ("tunnel.cc".to_string(), quoted(t.cc)),
        ("tunnel.reliability".to_string(), quoted(t.reliability)),
    ];
    for i in 0..2 {
        out.push((format!("paths.{i}.rate_mbps"), format!("{:?}", t.rate_mbps)));
        out.push((format!("paths.{i}.uplink_rate_mbps"), format!("{:?}", t.rate_mbps)));
    }
    out.push(("e2e.bytes".to_string(), transfer_bytes(t, bytes).to_string()));
    out
}

/// The bytes a tunnel kind's runs download: `bytes` scaled by its rate.
pub fn transfer_bytes(t: &Tunnel, bytes: u64) -> u64 {
    (bytes as f64 * t.rate_mbps / REFERENCE_RATE_MBPS).round() as u64
}

/// A delay set's overrides, as (dotted key, TOML value).
pub fn delay_fields(d: &Delays) -> Vec<(String, String)> {
    vec![
        ("server_link.rtt_ms".to_string(), format!("{:?}", d.server_rtt_ms)),
        ("paths.0.rtt_ms".to_string(), format!("{:?}", d.path1_rtt_ms)),
        ("paths.1.rtt_ms".to_string(), format!("{:?}", d.path2_rtt_ms)),
    ]
}

/// The overrides every run has: both paths' bottleneck buffers.
pub fn common_fields(buffer_pkts: u32) -> Vec<(String, String)> {
    (0..2).map(|i| (format!("paths.{i}.buffer_pkts"), buffer_pkts.to_string())).collect()
}

/// The tunnel kind labelled `label`.
pub fn tunnel(label: &str) -> Option<&'static Tunnel> {
    TUNNELS.iter().find(|t| t.label == label)
}

/// The delay set labelled `label`.
pub fn delays(label: &str) -> Option<&'static Delays> {
    DELAYS.iter().find(|d| d.label == label)
}

/// One run of Figure 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Figure4Run {
    /// The folder under `series/`: panel, end-to-end CC, scheduler.
    pub label: &'static str,
    /// The panel of Figure 4 it mirrors.
    pub panel: &'static str,
    pub e2e_cc: &'static str,
    pub scheduler: &'static str,
}

const fn fig4(
    label: &'static str,
    panel: &'static str,
    e2e_cc: &'static str,
    scheduler: &'static str,
) -> Figure4Run {
    Figure4Run { label, panel, e2e_cc, scheduler }
}

/// Figure 4's six runs (TCP-BBR tunnels, short delays): CPF in a, c, e and ACPF in b, d, f;
/// NewReno, Cubic and BBR end to end in the order the text names them.
pub const FIGURE4: &[Figure4Run] = &[
    fig4("fig4a_newreno_cpf", "4a", "newreno", "cpf"),
    fig4("fig4b_newreno_acpf", "4b", "newreno", "acpf"),
    fig4("fig4c_cubic_cpf", "4c", "cubic", "cpf"),
    fig4("fig4d_cubic_acpf", "4d", "cubic", "acpf"),
    fig4("fig4e_bbr_cpf", "4e", "bbr", "cpf"),
    fig4("fig4f_bbr_acpf", "4f", "bbr", "acpf"),
];

/// The tunnel kind and delay set of Figure 4 and Figure 6: the user-space framework's BBR
/// tunnels, short delays.
pub fn user_space() -> (&'static Tunnel, &'static Delays) {
    (tunnel("bbr").expect("TUNNELS has bbr"), delays("short").expect("DELAYS has short"))
}

/// Figure 4's runs as examples: `bytes` (at 50 Mbit/s), `buffer_pkts` buffers.
pub fn figure4_examples(bytes: u64, buffer_pkts: u32) -> Vec<Example> {
    let (t, d) = user_space();
    FIGURE4
        .iter()
        .map(|r| {
            let mut fields = common_fields(buffer_pkts);
            fields.extend(tunnel_fields(t, bytes));
            fields.extend(delay_fields(d));
            fields.push(("e2e.cc".into(), quoted(r.e2e_cc)));
            fields.push(("tunnel.scheduler".into(), quoted(r.scheduler)));
            fields.push(("sim.sample_interval_ms".into(), format!("{SERIES_SAMPLE_MS:?}")));
            let overrides = fields.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
            Example { label: r.label.to_string(), overrides }
        })
        .collect()
}

/// How the runs read section 5.1 and what differs from it; written into the output.
pub const SETUP_NOTE: &str = "Pieska et al. 2021, section 5.1: Mininet, both paths 25 Mbit/s \
with DCCP-CCID5 tunnels (the kernel framework) or 50 Mbit/s with TCP-BBR tunnels (the user-space \
framework); 4 ms between anchor and server and 16 / 26 ms over the primary / secondary path \
(\"short\"), or 8 / 32 / 42 ms (\"long\"); bottleneck buffers \"large enough to not overflow from \
BBR\"; a greedy TCP iperf flow with NewReno, Cubic or BBR end to end. Read here as: the delays are \
RTTs (the paper does not say whether netem's delay was set in one direction or both); both paths' \
bottleneck buffers hold the --buffer-pkts packets (default 2000) and the rates hold in both \
directions; instead of an iperf run of unstated length, a download of --bytes over the 50 Mbit/s \
BBR tunnels and half as many bytes over the 25 Mbit/s CCID5 ones (the same duration); CCID5 \
tunnels are unreliable (DCCP), BBR tunnels reliable (TCP); the rest is Braid's default scenario \
(adaptive reordering, a 1500-packet scheduler queue, a 1000 Mbit/s server link). ACPF runs with \
section 4's parameters (queue threshold 10 packets, minimum fraction 0.47, its user-space variant's \
1 ms management step and 530 ms ramp) over both tunnel kinds; the kernel variant's per-packet \
update (eq. 2) is not modelled. Repetitions differ by the simulator's noise model (host jitter, \
start offset, CC phase), the paper's by the testbed; the paper averaged 5 (kernel, Figure 3) and \
10 (user-space, Figure 4) repetitions per set.";

/// How Figure 4 is read; written into the output.
pub const FIGURE4_NOTE: &str = "Figure 4 of Pieska et al. 2021 shows six single user-space runs \
(TCP-BBR tunnels), each with the throughput per path, the live cwnd per path and the server's \
cwnd over time: CPF in a, c and e, ACPF in b, d and f, \"carefully selected from a set of 10 \
repetitions each\" to show where CPF does badly. Here one run per panel, not selected, without the \
noise model, with the short delay set (the text says the test \"is otherwise the same as \
previous\"), NewReno, Cubic and BBR end to end in a-b, c-d and e-f (the order the text names \
them; the caption is lost). The live cwnd is the ACPF fraction times the tunnel controller's \
(raw) window; with CPF it is the raw window.";

/// How Figure 6 is read; written into the output.
pub const CONTOUR_NOTE: &str = "Figure 6 of Pieska et al. 2021 (section 5.3): BBR over BBR in the \
user-space framework at 400 random points (end-to-end RTT 0-100 ms, tunnel share of it 0-100%), \
contours of (a) the throughput, (b) ACPF's mean live cwnd as a percent of the raw cwnd and (c, d) \
the server's cwnd; the text does not say which scheduler each panel shows beyond that. Read here \
as: (a) goodput with CPF and with ACPF, (b) ACPF's mean fraction, (c) the server's mean cwnd with \
ACPF and (d) with CPF. The points are Braid's 400-point set (the nested-cc contours': seed 2024, \
least distance 0.02), path 2 at path 1 + 10 ms (section 5.1's asymmetry; the nested-cc contours \
use 20 ms), BBR tunnels (reliable) at 50 Mbit/s, the --buffer-pkts buffers, downloads of --bytes, \
one run per point and scheduler.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paper_sets_load_as_scenarios() {
        for t in TUNNELS {
            for d in DELAYS {
                let mut fields = common_fields(2000);
                fields.extend(tunnel_fields(t, 1_000_000));
                fields.extend(delay_fields(d));
                let sets: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let s = braid_sim::Scenario::from_toml_str("", &sets).unwrap();
                assert_eq!(s.paths[1].rate_mbps, t.rate_mbps);
                assert_eq!(s.paths[0].buffer_pkts, 2000);
                assert_eq!(
                    s.server_link.rtt_ms + s.paths[0].rtt_ms,
                    d.server_rtt_ms + d.path1_rtt_ms
                );
                assert_eq!(s.paths[1].rtt_ms - s.paths[0].rtt_ms, 10.0, "section 5.1's asymmetry");
            }
        }
        assert_eq!(transfer_bytes(tunnel("ccid5").unwrap(), 300_000_000), 150_000_000);
        assert_eq!(transfer_bytes(tunnel("bbr").unwrap(), 300_000_000), 300_000_000);
    }

    #[test]
    fn figure_4_pairs_cpf_and_acpf_for_each_e2e_cc() {
        let examples = figure4_examples(1_000_000, 2000);
        assert_eq!(examples.len(), 6);
        for (pair, cc) in examples.chunks(2).zip(E2E_CC) {
            for (ex, sched) in pair.iter().zip(SCHEDULERS) {
                let s = braid_sim::Scenario::from_toml_str("", &ex.overrides).unwrap();
                assert_eq!(s.tunnel.scheduler.as_str(), *sched, "{}", ex.label);
                assert_eq!(s.e2e.cc.as_str(), *cc, "{}", ex.label);
                assert_eq!(s.sim.sample_interval_ms, SERIES_SAMPLE_MS);
            }
        }
    }
}
