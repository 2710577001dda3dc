//! The sweep specs of `braid reproduce acpf`, as the TOML text written into its folder
//! (`braid sweep DIR/table.toml --out DIR/table` reruns or resumes one by hand). Both start
//! from `base.toml`, the default scenario written beside them.
//!
//! - `table.toml` (Figure 5): [`TUNNELS`] x [`DELAYS`] x [`E2E_CC`] x [`SCHEDULERS`] x reps.
//! - `contour.toml` (Figure 6): BBR over BBR tunnels, [`SCHEDULERS`] x the points, one run each.

use braid_sweep::points::Point;

use super::{
    common_fields, delay_fields, tunnel_fields, user_space, CONTOUR_PATH2_OFFSET_MS, DELAYS,
    E2E_CC, SCHEDULERS, TUNNELS,
};
use crate::folder::BASE_FILE;
use crate::toml_text::{point_entries, quoted, table_axis, Entry};

/// The axis of tunnel kinds (a table axis: protocol, reliability, rates and transfer size go
/// together).
pub const TUNNEL_AXIS: &str = "tunnel_setup";
/// The axis of delay sets.
pub const DELAYS_AXIS: &str = "delays";

fn header(what: &str, reps: u32, set: &[(String, String)]) -> String {
    let mut out = format!(
        "# {what}\n# Written by `braid reproduce acpf` (Pieska et al. 2021); rerun or resume with \
         `braid sweep`.\nbase = {}\nreps = {reps}\n\n[set]\n",
        quoted(BASE_FILE)
    );
    for (k, v) in set {
        out += &format!("{} = {v}\n", quoted(k));
    }
    out
}

fn list(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| quoted(v)).collect();
    format!("[{}]", quoted.join(", "))
}

/// Figure 5 and the tables: every tunnel kind, delay set, end-to-end CC and scheduler.
pub fn table(bytes: u64, reps: u32, buffer_pkts: u32) -> String {
    let tunnels: Vec<Entry> =
        TUNNELS.iter().map(|t| Entry::named(t.label, tunnel_fields(t, bytes))).collect();
    let delays: Vec<Entry> =
        DELAYS.iter().map(|d| Entry::named(d.label, delay_fields(d))).collect();
    format!(
        "{}\n[axes]\n{}{}\"e2e.cc\" = {}\n\"tunnel.scheduler\" = {}\n",
        header(
            "Figure 5: tunnel kind x delay set x end-to-end CC x CPF/ACPF.",
            reps,
            &common_fields(buffer_pkts)
        ),
        table_axis(TUNNEL_AXIS, &tunnels),
        table_axis(DELAYS_AXIS, &delays),
        list(E2E_CC),
        list(SCHEDULERS),
    )
}

/// Figure 6: BBR over BBR tunnels, CPF and ACPF, at every point.
pub fn contour(bytes: u64, buffer_pkts: u32, points: &[Point]) -> String {
    let (t, _) = user_space();
    let mut set = common_fields(buffer_pkts);
    set.extend(tunnel_fields(t, bytes));
    set.push(("e2e.cc".into(), quoted("bbr")));
    format!(
        "{}\n[axes]\n\"tunnel.scheduler\" = {}\n{}",
        header(
            "Figure 6: BBR over BBR, CPF/ACPF x points (E2E RTT, tunnel share), one run each.",
            1,
            &set
        ),
        list(SCHEDULERS),
        table_axis("point", &point_entries(points, CONTOUR_PATH2_OFFSET_MS)),
    )
}

#[cfg(test)]
mod tests {
    use braid_sweep::points::contour_points;

    use super::*;
    use crate::test_support::parse_spec as parse;

    #[test]
    fn the_table_is_tunnels_times_delays_times_cc_times_schedulers() {
        let spec = parse(&table(300_000_000, 10, 2000));
        assert_eq!(spec.runs(), 2 * 2 * 3 * 2 * 10);
        assert!(!spec.baseline);
        assert_eq!(spec.set, ["paths.0.buffer_pkts=2000", "paths.1.buffer_pkts=2000"]);
        let names: Vec<&str> = spec.axes.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(names, [TUNNEL_AXIS, DELAYS_AXIS, "e2e.cc", "tunnel.scheduler"]);
        let ccid5 = spec.axes[0].overrides(0);
        assert!(ccid5.contains(&"e2e.bytes=150000000".to_string()), "{ccid5:?}");
        assert!(ccid5.contains(&"paths.1.rate_mbps=25.0".to_string()), "{ccid5:?}");
        assert_eq!(spec.axes[1].overrides(1)[0], "server_link.rtt_ms=8.0");
        braid_sweep::engine::check_cells(&spec).unwrap();
    }

    #[test]
    fn the_contour_is_bbr_over_bbr_at_each_point_with_a_10_ms_asymmetry() {
        let points = contour_points(4, 7, 0.02).unwrap();
        let spec = parse(&contour(1_000_000, 2000, &points));
        assert_eq!(spec.runs(), 2 * 4);
        assert!(spec.set.contains(&"tunnel.cc=\"bbr\"".to_string()), "{:?}", spec.set);
        assert!(spec.set.contains(&"e2e.cc=\"bbr\"".to_string()), "{:?}", spec.set);
        let point = spec.axes[1].overrides(2);
        let (server, p1, _) = points[2].rtts_ms(10.0);
        assert_eq!(point[0], format!("server_link.rtt_ms={server:?}"));
        let p2: f64 = point[2].split('=').nth(1).unwrap().parse().unwrap();
        assert!((p2 - p1 - 10.0).abs() < 1e-9);
        braid_sweep::engine::check_cells(&spec).unwrap();
    }
}
