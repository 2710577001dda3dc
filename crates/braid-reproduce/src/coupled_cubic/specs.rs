//! The sweep specs of `braid reproduce coupled-cubic`, as the TOML text written into its
//! folder, both from `base.toml` (the default scenario) with the testbed in `[set]`:
//!
//! - `utilisation.toml`: the two-path [`VARIANTS`] x reps;
//! - `single_path.toml`: [`SINGLE_PATH`], CUBIC over subflow 1's path alone, x reps.

use super::{testbed_fields, Variant, SINGLE_PATH, VARIANTS};
use crate::folder::BASE_FILE;
use crate::toml_text::{quoted, table_axis, Entry};

/// The table axis of the variants.
pub const VARIANT_AXIS: &str = "variant";

fn spec(what: &str, reps: u32, set: &[(String, String)], variants: &[&Variant]) -> String {
    let mut out = format!(
        "# {what}\n# Written by `braid reproduce coupled-cubic` (Lee et al. 2023); rerun or resume \
         with `braid sweep`.\nbase = {}\nreps = {reps}\n\n[set]\n",
        quoted(BASE_FILE)
    );
    for (k, v) in set {
        out += &format!("{} = {v}\n", quoted(k));
    }
    let entries: Vec<Entry> = variants.iter().map(|v| Entry::named(v.label, v.fields())).collect();
    out + "\n[axes]\n" + &table_axis(VARIANT_AXIS, &entries)
}

/// Figure 7's two-path bars: every variant over both subflows, `seconds` of traffic each.
pub fn utilisation(seconds: u32, reps: u32) -> String {
    let all: Vec<&Variant> = VARIANTS.iter().collect();
    spec(
        "Figure 7: tunnel CC variants over the 500 Mbit/s 100 ms and 100 Mbit/s 20 ms paths.",
        reps,
        &testbed_fields(seconds, false),
        &all,
    )
}

/// Figure 7's first bar: CUBIC over subflow 1's path alone.
pub fn single_path(seconds: u32, reps: u32) -> String {
    spec(
        "Figure 7, first bar: CUBIC alone over the 500 Mbit/s 100 ms path.",
        reps,
        &testbed_fields(seconds, true),
        &[&SINGLE_PATH],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::parse_spec;

    #[test]
    fn the_specs_parse_and_their_cells_load() {
        let two = parse_spec(&utilisation(10, 3));
        assert_eq!(two.runs(), VARIANTS.len() as u64 * 3);
        assert_eq!(two.axes[0].key, VARIANT_AXIS);
        assert!(two.set.iter().any(|s| s.starts_with("paths=[{")), "{:?}", two.set);
        braid_sweep::engine::check_cells(&two).unwrap();
        let one = parse_spec(&single_path(10, 2));
        assert_eq!(one.runs(), 2);
        braid_sweep::engine::check_cells(&one).unwrap();
    }
}
