//! What `braid reproduce nested-cc` runs: the congestion-control combinations, scenarios and
//! examples of Pieska et al. 2024, "Performance Impact of Nested Congestion Control on
//! Transport-Layer Multipath Tunneling" (Future Internet 16, 233), as data.
//!
//! - [`COMBINATIONS`]: the 11 rows of Table 3, each run with CPF and SRTT ([`SCHEDULERS`]).
//!   The paper's TCP tunnels (NewReno, BBR, BBRv2) are reliable and its DCCP tunnels (CCID2,
//!   CCID5) unreliable (section 4: "the impact of having reliability over each tunnel path
//!   (when using TCP)"); "static" is the static reordering wait, the others adaptive.
//! - [`SCENARIOS`]: the 15 scenarios of Figure 10 (see [`SCENARIO_NOTE`]).
//! - [`CONTOUR_SETS`]: the batches of the contour figures 5, 8b-c and 9c-d, all with CPF,
//!   each with its path asymmetry and buffer sizes (see [`CONTOUR_NOTE`]).
//! - [`SERIES`]: the throughput-over-time examples of Figures 4, 8a and 9a.

use crate::series::Example;

/// One end-to-end over tunnel congestion-control combination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Combination {
    /// `e2e/tunnel`, with `-static` for the static reordering wait: the axis label.
    pub label: &'static str,
    /// `e2e.cc`: the server's congestion control.
    pub e2e_cc: &'static str,
    /// `tunnel.cc`: each tunnel path's congestion control.
    pub tunnel_cc: &'static str,
    /// `tunnel.reliability`: reliable for TCP-like tunnels, unreliable for DCCP ones.
    pub reliability: &'static str,
    /// `tunnel.reorder`: adaptive or static.
    pub reorder: &'static str,
}

impl Combination {
    /// The overrides this combination sets, as (dotted key, value).
    pub fn overrides(&self) -> [(&'static str, &'static str); 4] {
        [
            ("e2e.cc", self.e2e_cc),
            ("tunnel.cc", self.tunnel_cc),
            ("tunnel.reliability", self.reliability),
            ("tunnel.reorder", self.reorder),
        ]
    }
}

const fn combo(
    label: &'static str,
    e2e_cc: &'static str,
    tunnel_cc: &'static str,
    reorder: &'static str,
) -> Combination {
    // DCCP's CCIDs are unreliable; the TCP tunnels (NewReno, BBR, BBRv2) are reliable.
    let dccp = matches!(tunnel_cc.as_bytes(), b"ccid2" | b"ccid5");
    let reliability = if dccp { "unreliable" } else { "reliable" };
    Combination { label, e2e_cc, tunnel_cc, reliability, reorder }
}

/// Table 3's combinations, in the order the paper lists them.
pub const COMBINATIONS: &[Combination] = &[
    combo("cubic/ccid5", "cubic", "ccid5", "adaptive"),
    combo("cubic/bbr", "cubic", "bbr", "adaptive"),
    combo("cubic/ccid2", "cubic", "ccid2", "adaptive"),
    combo("cubic/newreno", "cubic", "newreno", "adaptive"),
    combo("cubic/newreno-static", "cubic", "newreno", "static"),
    combo("cubic/bbr2-static", "cubic", "bbr2", "static"),
    combo("bbr/newreno", "bbr", "newreno", "adaptive"),
    combo("bbr/ccid2", "bbr", "ccid2", "adaptive"),
    combo("bbr/bbr", "bbr", "bbr", "adaptive"),
    combo("bbr/ccid5", "bbr", "ccid5", "adaptive"),
    combo("bbr/bbr2", "bbr", "bbr2", "adaptive"),
];

/// The schedulers of Table 3.
pub const SCHEDULERS: &[&str] = &["cpf", "srtt"];

/// The 15 scenarios of Figure 10, as Table 2 scenario keys ("" = Table 1's default).
pub const SCENARIOS: &[&str] = &[
    "",
    "SHORT",
    "LONG",
    "SHORT+NEAR",
    "SHORT+DIST",
    "LONG+NEAR",
    "LONG+DIST",
    "BUF250",
    "BUF500",
    "BUF1000",
    "CDL0",
    "CDL1",
    "ASYM0",
    "ASYM40",
    "ASYM200",
];

/// How [`SCENARIOS`] reads the paper; written into the output.
pub const SCENARIO_NOTE: &str = "Figure 10 of Pieska et al. 2024 averages 10 repetitions of \
15 scenarios per combination; its caption names SHORT and LONG (RTT), BUF (bottleneck buffer in \
packets, both paths), ASYM (path RTT difference), NEAR and DIST (proxy near or far from the user) \
and CDL0/CDL1 (CoDel off/on), each paired with its opposite, without listing the 15. Read here as: \
the default (Table 1), SHORT, LONG, SHORT+NEAR, SHORT+DIST, LONG+NEAR, LONG+DIST, BUF250, BUF500, \
BUF1000, CDL0, CDL1, ASYM0, ASYM40, ASYM200. SHORT (RTTs 20/20/40 ms), BUF500 and CDL0 restate \
Table 1's default (500-packet buffers, no AQM), so with the same seeds they repeat the default's \
runs; they are kept so that each pair of Figure 10 has both members and the mean weighs the \
scenarios as the paper's 15 do.";

/// One batch of contour plots: some combinations over the 400 points, with CPF, one path
/// asymmetry, and one panel per bottleneck buffer size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContourSet {
    /// The folder under `contour/` and the spec's name (`contour-<name>.toml`).
    pub name: &'static str,
    /// The paper's figure and panel, for captions.
    pub figure: &'static str,
    /// Table 3 labels of the combinations drawn.
    pub combinations: &'static [&'static str],
    /// Path 2's RTT above path 1's, ms.
    pub asymmetry_ms: f64,
    /// Bottleneck buffers of both paths, packets, one panel each; empty: Table 1's 500.
    pub buffers: &'static [u32],
}

/// The contour figures of Pieska et al. 2024 as batches (see [`CONTOUR_NOTE`]).
pub const CONTOUR_SETS: &[ContourSet] = &[
    ContourSet {
        name: "fig05",
        figure: "Figure 5",
        combinations: &["bbr/bbr", "bbr/ccid5"],
        asymmetry_ms: 0.0,
        buffers: &[],
    },
    ContourSet {
        name: "fig08b",
        figure: "Figure 8b",
        combinations: &["cubic/bbr"],
        asymmetry_ms: 10.0,
        buffers: &[250],
    },
    ContourSet {
        name: "fig08c",
        figure: "Figure 8c",
        combinations: &["cubic/bbr2-static", "cubic/bbr", "cubic/ccid5"],
        asymmetry_ms: 20.0,
        buffers: &[250, 500, 1000],
    },
    ContourSet {
        name: "fig09c",
        figure: "Figure 9c",
        combinations: &["bbr/newreno"],
        asymmetry_ms: 20.0,
        buffers: &[],
    },
    ContourSet {
        name: "fig09d-a0",
        figure: "Figure 9d (A0)",
        combinations: &["bbr/newreno"],
        asymmetry_ms: 0.0,
        buffers: &[250, 500, 1000],
    },
    ContourSet {
        name: "fig09d-a40",
        figure: "Figure 9d (A40)",
        combinations: &["bbr/newreno"],
        asymmetry_ms: 40.0,
        buffers: &[250, 500, 1000],
    },
];

/// Why [`CONTOUR_SETS`]; written into the output.
pub const CONTOUR_NOTE: &str = "The contour figures of Pieska et al. 2024, each over the same \
400 points (E2E RTT 0-100 ms, tunnel share 0-100%), all with CPF. Figure 5: BBR over BBR and \
over CCID5, no asymmetry (its caption), Table 1's 500-packet buffers. Figure 8b: Cubic over \
BBR, asymmetry 10 ms and 250-packet buffers (its caption; section 5.2's text says 20 ms for \
every plot of Figure 8; which tunnel 8b uses is not said, we take BBR). Figure 8c: Cubic over \
BBRv2 (Table 3's static wait), BBR and CCID5 (the rows the text names: BBRv2 on top) x buffers \
of 250, 500 and 1000 packets (the text's arcs: 25, 50 and no arc), asymmetry 20 ms. Figure 9c: \
BBR over NewReno, asymmetry 20 ms, 500-packet buffers (not given; our reading). Figure 9d: six \
plots whose asymmetries (A) and buffers (B) are in its labels, which the text we have lost; we \
read them as A0 and A40 (Table 2's ASYM0 and ASYM40, either side of 9c's 20 ms) x B250, B500 \
and B1000 (our reading).";

/// The Table 3 combinations of every contour set, each once, in first-use order.
pub fn contour_combinations() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = Vec::new();
    for set in CONTOUR_SETS {
        for c in set.combinations {
            if !all.contains(c) {
                all.push(c);
            }
        }
    }
    all
}

/// One throughput-over-time example.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Series {
    /// The folder name under `series/`: figure, combination and scenario keys.
    pub label: &'static str,
    /// The figure it illustrates.
    pub figure: &'static str,
    /// One of [`COMBINATIONS`], by label.
    pub combination: &'static str,
    /// Table 2 scenario keys.
    pub keys: &'static str,
}

const fn series(
    label: &'static str,
    figure: &'static str,
    combination: &'static str,
    keys: &'static str,
) -> Series {
    Series { label, figure, combination, keys }
}

/// The examples of Figures 4 (BBR over BBR and CCID5, proxy near and far), 8a (Cubic over BBR
/// and CCID5, short and long tunnel) and 9a (BBR over NewReno and CCID2, short and long RTT),
/// with CPF.
pub const SERIES: &[Series] = &[
    series("fig4_bbr-bbr_short-dist", "4", "bbr/bbr", "SHORT+DIST"),
    series("fig4_bbr-bbr_short-near", "4", "bbr/bbr", "SHORT+NEAR"),
    series("fig4_bbr-ccid5_short-dist", "4", "bbr/ccid5", "SHORT+DIST"),
    series("fig4_bbr-ccid5_short-near", "4", "bbr/ccid5", "SHORT+NEAR"),
    series("fig8a_cubic-bbr_short-near", "8a", "cubic/bbr", "SHORT+NEAR"),
    series("fig8a_cubic-bbr_long-dist", "8a", "cubic/bbr", "LONG+DIST"),
    series("fig8a_cubic-ccid5_short-near", "8a", "cubic/ccid5", "SHORT+NEAR"),
    series("fig8a_cubic-ccid5_long-dist", "8a", "cubic/ccid5", "LONG+DIST"),
    series("fig9a_bbr-newreno_short", "9a", "bbr/newreno", "SHORT"),
    series("fig9a_bbr-newreno_long", "9a", "bbr/newreno", "LONG"),
    series("fig9a_bbr-ccid2_short", "9a", "bbr/ccid2", "SHORT"),
    series("fig9a_bbr-ccid2_long", "9a", "bbr/ccid2", "LONG"),
];

/// The examples as runs: each one's combination, CPF, the transfer size and its keys.
pub fn examples(bytes: u64) -> Vec<Example> {
    SERIES
        .iter()
        .map(|s| {
            let c = combination(s.combination).expect("SERIES names Table 3 combinations");
            let mut overrides: Vec<String> =
                c.overrides().iter().map(|(k, v)| format!("{k}={v:?}")).collect();
            overrides.push("tunnel.scheduler=\"cpf\"".into());
            overrides.push(format!("e2e.bytes={bytes}"));
            overrides.push(format!("keys={:?}", s.keys));
            Example { label: s.label.to_string(), overrides }
        })
        .collect()
}

/// The combination with label `label`.
pub fn combination(label: &str) -> Option<&'static Combination> {
    COMBINATIONS.iter().find(|c| c.label == label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_3_has_eleven_distinct_rows_and_reliability_follows_the_protocol() {
        assert_eq!(COMBINATIONS.len(), 11);
        for (i, c) in COMBINATIONS.iter().enumerate() {
            assert!(COMBINATIONS[..i].iter().all(|d| d.label != c.label), "{c:?}");
            let dccp = c.tunnel_cc.starts_with("ccid");
            assert_eq!(c.reliability == "unreliable", dccp, "{c:?}");
        }
        let statics: Vec<&str> =
            COMBINATIONS.iter().filter(|c| c.reorder == "static").map(|c| c.label).collect();
        assert_eq!(statics, ["cubic/newreno-static", "cubic/bbr2-static"]);
        assert_eq!(COMBINATIONS.iter().filter(|c| c.e2e_cc == "bbr").count(), 5);
    }

    #[test]
    fn fifteen_scenarios_that_the_simulator_accepts() {
        assert_eq!(SCENARIOS.len(), 15);
        for keys in SCENARIOS {
            braid_sim::Scenario::from_toml_str("", &[format!("keys={keys:?}")])
                .unwrap_or_else(|e| panic!("{keys}: {e}"));
        }
    }

    #[test]
    fn contour_and_series_name_table_3_combinations() {
        for label in contour_combinations() {
            assert!(combination(label).is_some(), "{label}");
        }
        let mut names: Vec<&str> = CONTOUR_SETS.iter().map(|s| s.name).collect();
        names.dedup();
        assert_eq!(names.len(), CONTOUR_SETS.len(), "set names are folder names: unique");
        for s in SERIES {
            assert!(combination(s.combination).is_some(), "{s:?}");
            let keys = format!("keys={:?}", s.keys);
            braid_sim::Scenario::from_toml_str("", &[keys]).unwrap();
        }
        let examples = examples(1000);
        assert_eq!(examples.len(), SERIES.len());
        let s = braid_sim::Scenario::from_toml_str("", &examples[0].overrides).unwrap();
        assert_eq!(s.e2e.bytes, 1000);
    }
}
