//! Round robin (draft-bonaventure-iccrg-schedulers section 3.3): paths take turns; a path whose
//! window is full is skipped for this turn.

use super::{PathView, Scheduler};
use crate::time::Instant;

#[derive(Clone, Copy, Debug, Default)]
pub struct RoundRobin {
    next: usize,
}

impl Scheduler for RoundRobin {
    fn select(&mut self, _now: Instant, paths: &[PathView], _queued_pkts: usize) -> Option<usize> {
        let n = paths.len();
        for k in 0..n {
            let i = (self.next + k) % n;
            if paths[i].has_room() {
                self.next = (i + 1) % n;
                return Some(paths[i].index);
            }
        }
        None
    }

    fn name(&self) -> &'static str {
        "rr"
    }

    fn waits_without_room(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_util::view;

    /// The contract the sender relies on to skip the call (`Scheduler::waits_without_room`):
    /// with no room anywhere the answer is `None` and the turn does not move.
    #[test]
    fn no_room_anywhere_leaves_the_turn_where_it_was() {
        let mut s = RoundRobin::default();
        let open = [view(0, 1, 10, 0, 20), view(1, 1, 10, 0, 40)];
        let full = [view(0, 1, 10, 10, 20), view(1, 1, 10, 10, 40)];
        assert_eq!(s.select(Instant::ZERO, &open, 1), Some(0));
        assert!(s.waits_without_room());
        assert_eq!(s.select(Instant::ZERO, &full, 1), None);
        assert_eq!(s.select(Instant::ZERO, &open, 1), Some(1), "still path 1's turn");
    }

    #[test]
    fn alternates_and_skips_full_paths() {
        let mut s = RoundRobin::default();
        let open = [view(0, 1, 10, 0, 20), view(1, 1, 10, 0, 40)];
        let picks: Vec<_> = (0..4).map(|_| s.select(Instant::ZERO, &open, 1).unwrap()).collect();
        assert_eq!(picks, vec![0, 1, 0, 1]);
        let one_full = [view(0, 1, 10, 10, 20), view(1, 1, 10, 0, 40)];
        assert_eq!(s.select(Instant::ZERO, &one_full, 1), Some(1));
        assert_eq!(s.select(Instant::ZERO, &one_full, 1), Some(1));
    }
}
