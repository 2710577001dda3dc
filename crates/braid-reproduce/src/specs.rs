//! The sweep specs of the nested-cc reproduction, as the TOML text written into its folder, so
//! that `braid sweep DIR/matrix.toml --out DIR/matrix` reruns (or resumes) a part by hand.
//!
//! Every spec starts from `base.toml`, the default scenario (Table 1 of Pieska et al. 2024)
//! written beside them, so the folder needs nothing from the repository.

use braid_sweep::points::Point;

use crate::nested_cc::{combination, Combination, ContourSet, SCENARIOS, SCHEDULERS};
use crate::toml_text::{point_entries, quoted, string_fields, table_axis, Entry};

pub use crate::folder::BASE_FILE;

/// What the specs are made from.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecInputs<'a> {
    /// `e2e.bytes` of every run.
    pub bytes: u64,
    /// Repetitions of each matrix cell.
    pub reps: u32,
    pub combinations: &'a [&'a Combination],
}

fn combination_axis(combinations: &[&Combination]) -> String {
    let entries: Vec<Entry> =
        combinations.iter().map(|c| Entry::named(c.label, string_fields(&c.overrides()))).collect();
    table_axis("combination", &entries)
}

fn header(what: &str, reps: u32, bytes: u64) -> String {
    format!(
        "# {what}\n# Written by `braid reproduce nested-cc` (Pieska et al. 2024); rerun or resume \
         with `braid sweep`.\nbase = {}\nreps = {reps}\nbaseline = true\n\n[set]\n\
         \"e2e.bytes\" = {bytes}\n",
        quoted(BASE_FILE)
    )
}

/// Table 3 and Figure 10: every combination, with CPF and SRTT, over the 15 scenarios.
pub fn matrix(inputs: &SpecInputs) -> String {
    let scheds: Vec<String> = SCHEDULERS.iter().map(|s| quoted(s)).collect();
    let keys: Vec<String> = SCENARIOS.iter().map(|s| quoted(s)).collect();
    format!(
        "{}\n[axes]\n{}\"tunnel.scheduler\" = [{}]\nkeys = [{}]\n",
        header(
            "Table 3 and Figure 10: the CC combinations x CPF/SRTT x the 15 scenarios of Figure 10.",
            inputs.reps,
            inputs.bytes
        ),
        combination_axis(inputs.combinations),
        scheds.join(", "),
        keys.join(", ")
    )
}

/// One contour batch: its combinations with CPF, x its buffer sizes (when it has more than
/// Table 1's), x the points placed with its asymmetry, one run each.
pub fn contour(bytes: u64, set: &ContourSet, points: &[Point]) -> String {
    let combos: Vec<&Combination> = set
        .combinations
        .iter()
        .map(|l| combination(l).expect("contour combinations are Table 3's"))
        .collect();
    let buffer_axis = if set.buffers.is_empty() {
        String::new()
    } else {
        let entries: Vec<Entry> = set
            .buffers
            .iter()
            .map(|b| Entry {
                label: b.to_string(),
                fields: vec![
                    ("paths.0.buffer_pkts".into(), b.to_string()),
                    ("paths.1.buffer_pkts".into(), b.to_string()),
                ],
            })
            .collect();
        table_axis("buffer", &entries)
    };
    let axis = table_axis("point", &point_entries(points, set.asymmetry_ms));
    format!(
        "{}\"tunnel.scheduler\" = \"cpf\"\n\n[axes]\n{}{buffer_axis}{axis}",
        header(
            &format!(
                "{}: combinations x buffers x points (E2E RTT, tunnel share), CPF, path 2 {} ms \
                 above path 1.",
                set.figure, set.asymmetry_ms
            ),
            1,
            bytes
        ),
        combination_axis(&combos)
    )
}

#[cfg(test)]
mod tests {
    use braid_sweep::points::contour_points;

    use super::*;
    use crate::nested_cc::{COMBINATIONS, CONTOUR_SETS};
    use crate::test_support::parse_spec as parse;

    #[test]
    fn the_matrix_is_table_3_times_schedulers_times_scenarios() {
        let all: Vec<&Combination> = COMBINATIONS.iter().collect();
        let spec = parse(&matrix(&SpecInputs { bytes: 1000, reps: 10, combinations: &all }));
        assert_eq!(spec.runs(), 11 * 2 * 15 * 10);
        assert!(spec.baseline);
        assert_eq!(spec.set, ["e2e.bytes=1000"]);
        let names: Vec<&str> = spec.axes.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(names, ["combination", "tunnel.scheduler", "keys"]);
        assert_eq!(
            spec.axes[0].overrides(5),
            [
                "e2e.cc=\"cubic\"",
                "tunnel.cc=\"bbr2\"",
                "tunnel.reliability=\"reliable\"",
                "tunnel.reorder=\"static\""
            ]
        );
        braid_sweep::engine::check_cells(&spec).unwrap();
    }

    #[test]
    fn the_contour_spec_places_each_point() {
        let points = contour_points(5, 7, 0.02).unwrap();
        let fig5 = CONTOUR_SETS.iter().find(|s| s.name == "fig05").unwrap();
        let spec = parse(&contour(1000, fig5, &points));
        assert_eq!(spec.runs(), 10);
        assert_eq!(spec.set, ["e2e.bytes=1000", "tunnel.scheduler=\"cpf\""]);
        let point = &spec.axes[1];
        assert_eq!(point.key, "point");
        let (server, p1, p2) = points[3].rtts_ms(0.0);
        assert_eq!(p1, p2, "Figure 5 has no asymmetry");
        assert_eq!(
            point.overrides(3),
            [
                format!("server_link.rtt_ms={server:?}"),
                format!("paths.0.rtt_ms={p1:?}"),
                format!("paths.1.rtt_ms={p2:?}")
            ]
        );
        braid_sweep::engine::check_cells(&spec).unwrap();
    }

    #[test]
    fn a_contour_set_with_buffers_has_a_buffer_axis_on_both_paths() {
        let points = contour_points(4, 7, 0.02).unwrap();
        let fig8c = CONTOUR_SETS.iter().find(|s| s.name == "fig08c").unwrap();
        let spec = parse(&contour(1000, fig8c, &points));
        assert_eq!(spec.runs(), 3 * 3 * 4);
        let names: Vec<&str> = spec.axes.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(names, ["combination", "buffer", "point"]);
        assert_eq!(
            spec.axes[1].overrides(2),
            ["paths.0.buffer_pkts=1000", "paths.1.buffer_pkts=1000"]
        );
        let (_, p1, p2) = points[1].rtts_ms(20.0);
        assert_eq!(spec.axes[2].overrides(1)[2], format!("paths.1.rtt_ms={p2:?}"));
        assert!((p2 - p1 - 20.0).abs() < 1e-9);
        braid_sweep::engine::check_cells(&spec).unwrap();
    }
}
