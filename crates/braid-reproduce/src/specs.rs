//! The sweep specs of the nested-cc reproduction, as the TOML text written into its folder, so
//! that `braid sweep DIR/matrix.toml --out DIR/matrix` reruns (or resumes) a part by hand.
//!
//! Both specs start from `base.toml`, the default scenario (Table 1 of Pieska et al. 2024)
//! written beside them, so the folder needs nothing from the repository.

use braid_sweep::points::{Point, PATH2_OFFSET_MS};

use crate::nested_cc::{Combination, SCENARIOS, SCHEDULERS};
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

/// The contour figures: some combinations with CPF, over the points, one run each.
pub fn contour(bytes: u64, combinations: &[&Combination], points: &[Point]) -> String {
    let axis = table_axis("point", &point_entries(points, PATH2_OFFSET_MS));
    format!(
        "{}\"tunnel.scheduler\" = \"cpf\"\n\n[axes]\n{}{axis}",
        header(
            "Contour figures 5, 8b-c and 9c: combinations x points (E2E RTT, tunnel share), CPF.",
            1,
            bytes
        ),
        combination_axis(combinations)
    )
}

#[cfg(test)]
mod tests {
    use braid_sweep::points::contour_points;

    use super::*;
    use crate::nested_cc::COMBINATIONS;
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
        let two: Vec<&Combination> = COMBINATIONS[..2].iter().collect();
        let spec = parse(&contour(1000, &two, &points));
        assert_eq!(spec.runs(), 10);
        assert_eq!(spec.set, ["e2e.bytes=1000", "tunnel.scheduler=\"cpf\""]);
        let point = &spec.axes[1];
        assert_eq!(point.key, "point");
        let (server, p1, p2) = points[3].rtts_ms();
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
}
