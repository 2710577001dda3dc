//! Cheapest Path First: strict priority by configured cost (Pieska et al. 2024, section 2.3;
//! draft-bonaventure-iccrg-schedulers section 3.1, "strict priority").
//!
//! The cheapest path with room in its congestion window gets the packet; a dearer path is used
//! only while every cheaper one is window-limited. Ties in cost go to the lower path index, so
//! the configured order decides and runs are deterministic.

use super::{PathView, Scheduler};
use crate::time::Instant;

#[derive(Clone, Copy, Debug, Default)]
pub struct CheapestPathFirst;

impl Scheduler for CheapestPathFirst {
    fn select(&mut self, _now: Instant, paths: &[PathView], _queued_pkts: usize) -> Option<usize> {
        paths.iter().filter(|p| p.has_room()).min_by_key(|p| (p.cost, p.index)).map(|p| p.index)
    }

    fn name(&self) -> &'static str {
        "cpf"
    }

    fn waits_without_room(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_util::view;

    #[test]
    fn prefers_the_cheapest_path_with_room() {
        let mut s = CheapestPathFirst;
        let paths = [view(0, 10, 10, 3, 50), view(1, 1, 10, 9, 80)];
        assert_eq!(s.select(Instant::ZERO, &paths, 1), Some(1));
    }

    #[test]
    fn spills_to_the_dearer_path_only_when_the_cheap_window_is_full() {
        let mut s = CheapestPathFirst;
        let paths = [view(0, 1, 10, 10, 20), view(1, 2, 10, 0, 40)];
        assert_eq!(s.select(Instant::ZERO, &paths, 1), Some(1));
        let paths = [view(0, 1, 10, 10, 20), view(1, 2, 10, 10, 40)];
        assert_eq!(s.select(Instant::ZERO, &paths, 1), None);
    }

    #[test]
    fn a_path_is_available_only_if_the_whole_packet_fits() {
        let mut s = CheapestPathFirst;
        let mut p0 = view(0, 1, 10, 9, 20);
        p0.in_flight_bytes += 1; // 9001 + 1000 > 10 000
        assert_eq!(s.select(Instant::ZERO, &[p0, view(1, 2, 10, 0, 40)], 1), Some(1));
    }
}
