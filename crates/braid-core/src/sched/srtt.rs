//! Lowest smoothed RTT first (SRTT, also called MinRTT): the default scheduler of the Linux
//! MPTCP stack and of MP-DCCP's `srtt` scheduler (draft-bonaventure-iccrg-schedulers section
//! 3.2). Among the paths with room in their window, the one with the lowest smoothed RTT gets
//! the packet; a path without an RTT sample yet counts as fastest so that it gets probed.

use super::{PathView, Scheduler};
use crate::time::Instant;

#[derive(Clone, Copy, Debug, Default)]
pub struct LowestRtt;

impl Scheduler for LowestRtt {
    fn select(&mut self, _now: Instant, paths: &[PathView], _queued_pkts: usize) -> Option<usize> {
        paths
            .iter()
            .filter(|p| p.has_room())
            .min_by_key(|p| (p.srtt.unwrap_or_default(), p.cost, p.index))
            .map(|p| p.index)
    }

    fn name(&self) -> &'static str {
        "srtt"
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
    fn picks_the_lowest_srtt_among_paths_with_room() {
        let mut s = LowestRtt;
        let paths = [view(0, 1, 10, 0, 60), view(1, 2, 10, 0, 40)];
        assert_eq!(s.select(Instant::ZERO, &paths, 1), Some(1));
        let paths = [view(0, 1, 10, 0, 60), view(1, 2, 10, 10, 40)];
        assert_eq!(s.select(Instant::ZERO, &paths, 1), Some(0));
    }

    #[test]
    fn a_path_without_samples_is_tried_first() {
        let mut s = LowestRtt;
        let mut fresh = view(1, 2, 10, 0, 0);
        fresh.srtt = None;
        assert_eq!(s.select(Instant::ZERO, &[view(0, 1, 10, 0, 20), fresh], 1), Some(1));
    }
}
