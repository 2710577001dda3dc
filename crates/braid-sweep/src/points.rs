//! The point set of the contour figures of Pieska et al. 2024 (Figures 5, 8b-c and 9c-d).
//!
//! Section 5 of the paper: "We organized the results in batches of 400 tests, where both the
//! end-to-end RTT and the tunnel RTT were randomly selected. The former ranged from 0 to
//! 100 ms, and the latter was determined as a percentage of the end-to-end RTT, ranging from 0
//! to 100. To distribute the points more evenly, any point too close to a previous point was
//! discarded and regenerated. The same distribution of points was used for all batches."
//!
//! The paper gives neither the distance nor the generator. Here a point is drawn uniformly in
//! the unit square (E2E RTT / 100 ms, tunnel share) and redrawn while it lies closer than
//! `min_distance` to an earlier point, in those normalised units. [`MIN_DISTANCE`] = 0.02:
//! 400 discs of diameter 0.02 cover 400 * pi * 0.01^2 = 13% of the square, far below the 55%
//! at which random sequential placement jams, so a draw is rarely rejected (a few percent of
//! draws late in the set) while clumps closer than a fiftieth of either range are gone.
//! The generator is SplitMix64 (Steele, Lea and Flood 2014), written here so that the points
//! never change with a dependency's version: a fixed seed gives every batch, on every machine,
//! the same points.
//!
//! A point becomes a scenario as the paper's example says ("if the end-to-end RTT was 40 ms
//! and the tunnel RTT accounted for 25%, then the tunnel RTT was 10 ms and the RTT from proxy
//! to server was 30 ms"): path 1's RTT is the tunnel share of the E2E RTT, the server link the
//! rest, and path 2 is path 1 plus the figure's path asymmetry: none in Figure 5 (its caption),
//! 20 ms in Figure 8 (section 5.2's text; [`PATH2_OFFSET_MS`], also the offset of Table 2's
//! NEAR and DIST placement keys), the "A" values of Figure 9d.

use crate::axis::{Axis, AxisValue};

/// The paper's batch size.
pub const CONTOUR_POINTS: usize = 400;
/// The seed of the contour set: fixed, so every batch uses the same points.
pub const CONTOUR_SEED: u64 = 2024;
/// Least distance between two points, in units of the unit square (see the module docs).
pub const MIN_DISTANCE: f64 = 0.02;
/// Largest E2E RTT of a point, ms (the paper's range is 0 to 100 ms).
pub const MAX_E2E_RTT_MS: f64 = 100.0;
/// Path 2's RTT above path 1's, ms, where a figure says nothing else: section 5.2's asymmetry
/// for Figure 8, and the offset of Table 2's NEAR and DIST keys.
pub const PATH2_OFFSET_MS: f64 = 20.0;
/// Draws per point before giving up: a set that needs more is too dense to place.
const MAX_DRAWS_PER_POINT: usize = 10_000;

/// One contour point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// End-to-end RTT over path 1 (server link plus path 1), ms, in [0, 100).
    pub e2e_rtt_ms: f64,
    /// The tunnel's (path 1's) share of that RTT, in [0, 1).
    pub tunnel_share: f64,
}

/// Why a point set could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PointsError {
    #[error("min_distance = {value} must be a finite number >= 0")]
    MinDistance { value: f64 },
    #[error(
        "n = {n} points at min_distance = {min_distance} do not fit in the unit square: point \
         {placed} found no free place in {MAX_DRAWS_PER_POINT} draws; lower n or min_distance"
    )]
    TooDense { n: usize, min_distance: f64, placed: usize },
}

impl Point {
    /// The point in the unit square: (E2E RTT / 100 ms, tunnel share).
    fn normalised(self) -> (f64, f64) {
        (self.e2e_rtt_ms / MAX_E2E_RTT_MS, self.tunnel_share)
    }

    /// Distance to `other` in the unit square.
    pub fn distance(self, other: Point) -> f64 {
        let (a, b) = (self.normalised(), other.normalised());
        (a.0 - b.0).hypot(a.1 - b.1)
    }

    /// The RTTs this point sets, ms, rounded to whole microseconds so that they are short,
    /// exact in a spec's text: (server link, path 1, path 2), path 2 being path 1 plus
    /// `asymmetry_ms`. Server link plus path 1 is the E2E RTT to the microsecond.
    pub fn rtts_ms(self, asymmetry_ms: f64) -> (f64, f64, f64) {
        let e2e_us = (self.e2e_rtt_ms * 1000.0).round();
        let path1_us = (self.e2e_rtt_ms * self.tunnel_share * 1000.0).round().min(e2e_us);
        let server_us = e2e_us - path1_us;
        let path1 = path1_us / 1000.0;
        (server_us / 1000.0, path1, path1 + asymmetry_ms)
    }

    /// The overrides that place this point with path 2 `asymmetry_ms` above path 1:
    /// `server_link.rtt_ms`, `paths.0.rtt_ms` and `paths.1.rtt_ms`.
    pub fn overrides(self, asymmetry_ms: f64) -> Vec<(String, AxisValue)> {
        let (server, path1, path2) = self.rtts_ms(asymmetry_ms);
        vec![
            ("server_link.rtt_ms".into(), AxisValue::Float(server)),
            ("paths.0.rtt_ms".into(), AxisValue::Float(path1)),
            ("paths.1.rtt_ms".into(), AxisValue::Float(path2)),
        ]
    }
}

/// SplitMix64: a tiny, well-mixed 64-bit generator whose sequence is fixed by its definition.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), from the top 53 bits.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `n` points, uniform in E2E RTT [0, 100) ms and tunnel share [0, 1), each redrawn while it
/// is closer than `min_distance` (unit-square units) to an earlier one. The same arguments
/// give the same points.
pub fn contour_points(n: usize, seed: u64, min_distance: f64) -> Result<Vec<Point>, PointsError> {
    if !(min_distance.is_finite() && min_distance >= 0.0) {
        return Err(PointsError::MinDistance { value: min_distance });
    }
    let mut rng = SplitMix64(seed);
    let mut points: Vec<Point> = Vec::with_capacity(n);
    while points.len() < n {
        let mut draws = 0;
        let point = loop {
            if draws == MAX_DRAWS_PER_POINT {
                return Err(PointsError::TooDense { n, min_distance, placed: points.len() });
            }
            draws += 1;
            let candidate =
                Point { e2e_rtt_ms: rng.unit() * MAX_E2E_RTT_MS, tunnel_share: rng.unit() };
            if points.iter().all(|p| p.distance(candidate) >= min_distance) {
                break candidate;
            }
        };
        points.push(point);
    }
    Ok(points)
}

/// The table axis `name` of `points` with path 2 `asymmetry_ms` above path 1: entry `i` has
/// label `i` and the point's overrides.
pub fn points_axis(name: &str, points: &[Point], asymmetry_ms: f64) -> Axis {
    Axis {
        key: name.to_string(),
        values: (0..points.len()).map(|i| AxisValue::Int(i as i64)).collect(),
        tables: Some(points.iter().map(|p| p.overrides(asymmetry_ms)).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paper_set() -> Vec<Point> {
        contour_points(CONTOUR_POINTS, CONTOUR_SEED, MIN_DISTANCE).unwrap()
    }

    #[test]
    fn count_bounds_and_spacing() {
        let points = paper_set();
        assert_eq!(points.len(), 400);
        for p in &points {
            assert!((0.0..100.0).contains(&p.e2e_rtt_ms), "{p:?}");
            assert!((0.0..1.0).contains(&p.tunnel_share), "{p:?}");
        }
        let mut least = f64::INFINITY;
        for (i, a) in points.iter().enumerate() {
            for b in &points[..i] {
                least = least.min(a.distance(*b));
            }
        }
        assert!(least >= MIN_DISTANCE, "closest pair {least}");
    }

    #[test]
    fn the_same_seed_gives_the_same_points_and_another_seed_others() {
        assert_eq!(paper_set(), paper_set());
        let other = contour_points(CONTOUR_POINTS, CONTOUR_SEED + 1, MIN_DISTANCE).unwrap();
        assert_ne!(paper_set(), other);
        // A shorter set is the start of the longer one: fewer points for a quick run are the
        // paper set's first points.
        assert_eq!(contour_points(10, CONTOUR_SEED, MIN_DISTANCE).unwrap(), paper_set()[..10]);
    }

    #[test]
    fn points_spread_over_the_whole_square() {
        let points = paper_set();
        let mut quadrants = [0; 4];
        for p in &points {
            let q = usize::from(p.e2e_rtt_ms >= 50.0) * 2 + usize::from(p.tunnel_share >= 0.5);
            quadrants[q] += 1;
        }
        assert!(quadrants.iter().all(|&c| (60..=140).contains(&c)), "{quadrants:?}");
    }

    #[test]
    fn rtts_follow_the_papers_example() {
        let p = Point { e2e_rtt_ms: 40.0, tunnel_share: 0.25 };
        assert_eq!(p.rtts_ms(PATH2_OFFSET_MS), (30.0, 10.0, 30.0));
        assert_eq!(p.rtts_ms(0.0), (30.0, 10.0, 10.0), "Figure 5: no asymmetry");
        let p = Point { e2e_rtt_ms: 33.3333333, tunnel_share: 0.7777777 };
        let (server, path1, path2) = p.rtts_ms(10.0);
        assert!((server + path1 - 33.333).abs() < 1e-9, "{server} + {path1}");
        assert!((path2 - path1 - 10.0).abs() < 1e-9, "{path1} {path2}");
    }

    #[test]
    fn errors_name_the_field() {
        let err = contour_points(3, 1, f64::NAN).unwrap_err();
        assert!(err.to_string().starts_with("min_distance = NaN"), "{err}");
        let err = contour_points(10, 1, 1.5).unwrap_err();
        assert!(matches!(err, PointsError::TooDense { placed: 1, .. }), "{err}");
    }

    #[test]
    fn the_axis_labels_points_by_index() {
        let points = contour_points(3, CONTOUR_SEED, MIN_DISTANCE).unwrap();
        let axis = points_axis("point", &points, 20.0);
        assert_eq!(axis.values[2], AxisValue::Int(2));
        assert_eq!(axis.overrides(0).len(), 3);
        assert!(axis.overrides(0)[0].starts_with("server_link.rtt_ms="));
    }
}
