//! Redundant scheduling: every packet on every path that can take it, so the first copy to
//! arrive wins and a loss or a delay spike on one path costs nothing while another path
//! delivers. This is what real-time users of bonding tools (voice, gaming, remote control) ask
//! for: latency and loss resilience bought with capacity.
//!
//! Source: the Linux MPTCP redundant scheduler (multipath-tcp/mptcp `net/mptcp/mptcp_redundant.c`,
//! read for behaviour only) and draft-bonaventure-iccrg-schedulers section 3 (the "redundant"
//! family). The receiver delivers each global sequence number once and counts the other copies
//! as duplicates ([`crate::reorder`]).
//!
//! # Choice where the sources differ
//! MPTCP keeps a per-subflow position in the send queue, so a subflow whose window was full
//! later sends the packets it missed (skipping those already acknowledged). Braid's tunnel
//! sender is simpler: when the packet at the head of the scheduler queue is scheduled, it is
//! copied to *every path with room in its window at that moment*; a path without room skips it.
//! Under light load (the real-time case) every path has room and every packet goes everywhere;
//! under saturation a path only carries what it had room for, so redundancy gives way to
//! aggregation instead of queueing stale copies behind a full window. The sender asks
//! [`Scheduler::duplicates`] and does the copying; [`Scheduler::select`] here answers the
//! cheapest path with room, for callers that want one path.

use super::{PathView, Scheduler};
use crate::time::Instant;

#[derive(Clone, Copy, Debug, Default)]
pub struct Redundant;

impl Scheduler for Redundant {
    fn select(&mut self, _now: Instant, paths: &[PathView], _queued_pkts: usize) -> Option<usize> {
        paths.iter().filter(|p| p.has_room()).min_by_key(|p| (p.cost, p.index)).map(|p| p.index)
    }

    fn duplicates(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "redundant"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_util::view;

    #[test]
    fn asks_for_copies_and_names_the_cheapest_path_with_room() {
        let mut s = Redundant;
        assert!(s.duplicates(), "the sender copies the packet to every path with room");
        // Costs 2 and 1, both open: the cheaper path 1 is the one path `select` names.
        let open = [view(0, 2, 10, 3, 20), view(1, 1, 10, 3, 60)];
        assert_eq!(s.select(Instant::ZERO, &open, 1), Some(1));
        // Path 1's window is full (10 of 10 packets): path 0 is the only one with room.
        let cheap_full = [view(0, 2, 10, 3, 20), view(1, 1, 10, 10, 60)];
        assert_eq!(s.select(Instant::ZERO, &cheap_full, 1), Some(0));
        // Equal costs go to the lower index.
        let tie = [view(0, 1, 10, 3, 60), view(1, 1, 10, 3, 20)];
        assert_eq!(s.select(Instant::ZERO, &tie, 1), Some(0));
    }

    #[test]
    fn a_down_path_or_a_full_window_takes_no_copy() {
        let mut s = Redundant;
        let mut down = view(0, 1, 10, 0, 20);
        down.is_up = false;
        assert_eq!(s.select(Instant::ZERO, &[down, view(1, 2, 10, 0, 60)], 1), Some(1));
        let full = [view(0, 1, 10, 10, 20), view(1, 2, 10, 10, 60)];
        assert_eq!(s.select(Instant::ZERO, &full, 1), None, "no path has room: the packet waits");
        assert!(!down.has_room(), "the sender's copy rule uses the same availability test");
    }
}
