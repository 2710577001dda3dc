//! Pieces of sweep-spec text: quoted strings, table axes (docs/sweeps.md, "Table axes") and
//! the contour points as one. The reproductions write their specs as text, so that the folder
//! holds specs a reader can rerun with `braid sweep`, exactly as run.

use braid_sweep::points::Point;
use braid_sweep::spec::AxisValue;

/// `s` as a TOML string.
pub fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// One entry of a table axis: its label (TOML text: a quoted string or an integer) and its
/// overrides as (dotted key, TOML value text).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub label: String,
    pub fields: Vec<(String, String)>,
}

impl Entry {
    /// An entry labelled with a string.
    pub fn named(label: &str, fields: Vec<(String, String)>) -> Entry {
        Entry { label: quoted(label), fields }
    }
}

/// The table axis `name = [ { label = ..., "key" = value, ... }, ... ]`, one entry a line.
pub fn table_axis(name: &str, entries: &[Entry]) -> String {
    let mut out = format!("{name} = [\n");
    for e in entries {
        let fields: Vec<String> =
            e.fields.iter().map(|(k, v)| format!("{} = {v}", quoted(k))).collect();
        out += &format!("  {{ label = {}, {} }},\n", e.label, fields.join(", "));
    }
    out + "]\n"
}

/// The string overrides `(key, value)` as entry fields.
pub fn string_fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), quoted(v))).collect()
}

/// The contour points as entries labelled 0, 1, ...: each sets the server link's and path 1's
/// RTT from the point and path 2's as path 1's plus `path2_offset_ms` ([`Point::rtts_ms`]).
pub fn point_entries(points: &[Point], path2_offset_ms: f64) -> Vec<Entry> {
    points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let (server, path1, path2) = p.rtts_ms(path2_offset_ms);
            let float = |v: f64| AxisValue::Float(v).to_toml();
            Entry {
                label: i.to_string(),
                fields: vec![
                    ("server_link.rtt_ms".into(), float(server)),
                    ("paths.0.rtt_ms".into(), float(path1)),
                    ("paths.1.rtt_ms".into(), float(path2)),
                ],
            }
        })
        .collect()
}

/// `point, e2e_rtt_ms, tunnel_share, server_rtt_ms, path1_rtt_ms[, path2_rtt_ms]`, one row
/// per point; path 2 at path 1 plus `path2_offset_ms` when every batch has the same offset
/// (`None`: the batches differ, and each spec says its own).
pub fn points_csv(points: &[Point], path2_offset_ms: Option<f64>) -> String {
    let mut out = String::from("point,e2e_rtt_ms,tunnel_share,server_rtt_ms,path1_rtt_ms");
    out += if path2_offset_ms.is_some() { ",path2_rtt_ms\n" } else { "\n" };
    for (i, p) in points.iter().enumerate() {
        let (server, p1, p2) = p.rtts_ms(path2_offset_ms.unwrap_or(0.0));
        out += &format!("{i},{},{},{server},{p1}", p.e2e_rtt_ms, p.tunnel_share);
        out += &match path2_offset_ms {
            Some(_) => format!(",{p2}\n"),
            None => "\n".to_string(),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use braid_sweep::points::{contour_points, PATH2_OFFSET_MS};

    use super::*;

    #[test]
    fn a_table_axis_line_per_entry() {
        let e = [Entry::named("a/b", string_fields(&[("e2e.cc", "bbr")]))];
        assert_eq!(
            table_axis("combo", &e),
            "combo = [\n  { label = \"a/b\", \"e2e.cc\" = \"bbr\" },\n]\n"
        );
    }

    #[test]
    fn point_entries_match_the_sweeps_own_point_overrides_at_its_offset() {
        let points = contour_points(5, 7, 0.02).unwrap();
        for (p, e) in points.iter().zip(point_entries(&points, PATH2_OFFSET_MS)) {
            let want: Vec<(String, String)> =
                p.overrides(PATH2_OFFSET_MS).into_iter().map(|(k, v)| (k, v.to_toml())).collect();
            assert_eq!(e.fields, want);
        }
        let ten = point_entries(&points, 10.0);
        let (_, p1, _) = points[2].rtts_ms(0.0);
        let p2: f64 = ten[2].fields[2].1.parse().unwrap();
        assert!((p2 - p1 - 10.0).abs() < 1e-9, "{p2} {p1}");
        let csv = points_csv(&points, Some(10.0));
        assert_eq!(csv.lines().count(), 6);
        assert!(csv.lines().nth(3).unwrap().ends_with(&format!(",{p2}")), "{csv}");
        let without = points_csv(&points, None);
        assert!(without.starts_with("point,e2e_rtt_ms,tunnel_share,server_rtt_ms,path1_rtt_ms\n"));
        assert_eq!(without.lines().nth(3).unwrap().split(',').count(), 5);
    }
}
