//! Out-of-order Transmission for In-order Arrival Scheduling (OTIAS): Yang, Wang, Amer,
//! "Out-of-order transmission for in-order arrival scheduling for multipath TCP", AINA
//! Workshops 2014, section III; also the MP-DCCP kernel module `mpdccp_sched_otias.c`
//! (`mpdccp_otiassched`).
//!
//! Each path gets an estimate of when the packet would arrive if sent there:
//!
//! ```text
//! T_i = floor(ahead_i / cwnd_i) x srtt_i + srtt_i / 2
//! ```
//!
//! where `ahead_i` is what must leave path `i` before this packet and `cwnd_i` what leaves per
//! round trip: the packet waits `floor(ahead_i / cwnd_i)` rounds for window, then needs half an
//! RTT (one way) to arrive. The packet goes to the path with the earliest `T_i`, *even if that
//! path's window is full*: OTIAS would rather queue a packet behind a fast path than send it
//! now on a slow one and have it arrive late.
//!
//! # Mapping onto Braid
//! - `ahead_i` is the path's charged bytes in flight, which in Braid already include the
//!   packets assigned to the path and waiting for their pacing slot (OTIAS's per-subflow send
//!   queue), and `cwnd_i` the controller's window, both in bytes. With room in the window
//!   (`ahead_i + packet <= cwnd_i`) the wait is zero rounds, the kernel module's "free cwnd"
//!   case.
//! - Braid's path queues only take packets the window admits (a packet in a pacing queue is
//!   already charged), so a winner without room cannot take the packet now; the packet waits at
//!   the head of the scheduler queue, which plays the role of the winner's send queue. But
//!   OTIAS would also have queued the packets *behind* it, each raising the winner's `ahead` by
//!   one packet, until another path's estimate came first. So when the winner is full the
//!   scheduler counts how many of the queued packets (`queued_pkts`, the head included) the
//!   full paths would take before their estimates pass the earliest path with room; if that is
//!   fewer than the queue holds, one of these packets goes to that path now, and since global
//!   sequence numbers are assigned when a packet is scheduled it might as well be the head.
//!   Otherwise the head waits (`None`), as the paper's OTIAS would wait for the fast path.
//!   Counting the queue matters: without it a full fast path with a small window (2 packets
//!   over a lossy path in the sweep of docs/validation.md) held the whole queue while an idle
//!   path with room, whose estimate was 8 ms later, never got a packet, and a 100 MB download
//!   took 488 s instead of 17. The choice is not binding: every call recomputes the estimates.
//! - A path without an RTT sample counts `srtt = 0` (arrives "now"), so new paths get probed,
//!   as with [`super::LowestRtt`]. Ties go to the lower cost, then the lower index.

use std::time::Duration;

use super::{rank_srtt, PathView, Scheduler};
use crate::time::Instant;

#[derive(Clone, Copy, Debug, Default)]
pub struct Otias;

impl Otias {
    /// `T_i` for `path`; `None` for a path that cannot carry packets (down, or zero cwnd).
    pub fn estimated_arrival(path: &PathView) -> Option<Duration> {
        if !path.is_up || path.cc.cwnd_bytes == 0 {
            return None;
        }
        let srtt = rank_srtt(path);
        let rounds = path.in_flight_bytes / path.cc.cwnd_bytes;
        let rounds = u32::try_from(rounds).unwrap_or(u32::MAX);
        Some(srtt.saturating_mul(rounds).saturating_add(srtt / 2))
    }
}

impl Otias {
    /// How many more packets of `charge_bytes` each `path` (full) would take before its estimate
    /// passes `deadline`: the `k >= 0` with `T(ahead + k x charge) <= deadline`, from
    /// `floor((ahead + k x charge) / cwnd) <= R` where `R = floor((deadline - srtt/2) / srtt)`.
    /// Ties count for the full path, which won them at `k = 0` by cost or index.
    fn packets_before(path: &PathView, deadline: Duration) -> usize {
        let srtt = rank_srtt(path);
        if srtt.is_zero() {
            return usize::MAX;
        }
        let Some(slack) = deadline.checked_sub(srtt / 2) else { return 0 };
        let rounds = (slack.as_nanos() / srtt.as_nanos()) as u64;
        let limit = rounds.saturating_add(1).saturating_mul(path.cc.cwnd_bytes);
        let charge = path.charge_bytes.max(1);
        let room = limit.saturating_sub(path.in_flight_bytes);
        usize::try_from(room.div_ceil(charge)).unwrap_or(usize::MAX)
    }
}

impl Scheduler for Otias {
    fn select(&mut self, _now: Instant, paths: &[PathView], queued_pkts: usize) -> Option<usize> {
        let earliest = |room: bool| {
            paths
                .iter()
                .filter(|p| !room || p.has_room())
                .filter_map(|p| Some((Otias::estimated_arrival(p)?, p)))
                .min_by_key(|(t, p)| (*t, p.cost, p.index))
        };
        let (_, best) = earliest(false)?;
        if best.has_room() {
            return Some(best.index);
        }
        let (deadline, open) = earliest(true)?;
        let mut absorbed = 0usize;
        for full in paths.iter().filter(|p| !p.has_room()) {
            if Otias::estimated_arrival(full).is_some_and(|t| t <= deadline) {
                absorbed = absorbed.saturating_add(Otias::packets_before(full, deadline));
                if absorbed >= queued_pkts {
                    return None;
                }
            }
        }
        Some(open.index)
    }

    fn name(&self) -> &'static str {
        "otias"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_util::view;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn estimate_counts_whole_rounds_of_queued_data() {
        // 25 packets ahead, cwnd 10: floor(25 / 10) = 2 rounds of 20 ms, plus 10 ms one way.
        assert_eq!(Otias::estimated_arrival(&view(0, 1, 10, 25, 20)), Some(ms(50)));
        // 9 ahead, cwnd 10: the packet fits now, so only the one-way time: 20 ms.
        assert_eq!(Otias::estimated_arrival(&view(1, 1, 10, 9, 40)), Some(ms(20)));
        // 10 ahead, cwnd 10: it waits exactly one round: 40 + 20 = 60 ms.
        assert_eq!(Otias::estimated_arrival(&view(1, 1, 10, 10, 40)), Some(ms(60)));
    }

    #[test]
    fn picks_the_earliest_arrival_among_open_paths() {
        // Both open: T_0 = 10 ms, T_1 = 20 ms.
        let paths = [view(0, 1, 10, 5, 20), view(1, 1, 10, 0, 40)];
        assert_eq!(Otias.select(Instant::ZERO, &paths, 1), Some(0));
    }

    #[test]
    fn the_lower_srtt_path_loses_to_its_queue() {
        // Path 0: srtt 20 ms, cwnd 10, 25 ahead -> 2 x 20 + 10 = 50 ms.
        // Path 1: srtt 40 ms, cwnd 10, 3 ahead  -> 0 x 40 + 20 = 20 ms.
        let paths = [view(0, 1, 10, 25, 20), view(1, 2, 10, 3, 40)];
        assert_eq!(Otias.select(Instant::ZERO, &paths, 1), Some(1));
        // With a window that holds those 25 packets (cwnd 30), path 0 wins again: 10 ms.
        let paths = [view(0, 1, 30, 25, 20), view(1, 2, 10, 3, 40)];
        assert_eq!(Otias.select(Instant::ZERO, &paths, 1), Some(0));
    }

    #[test]
    fn waits_for_a_full_path_that_still_delivers_first() {
        // Path 0: srtt 10 ms, cwnd 10, 10 ahead (full) -> 1 x 10 + 5 = 15 ms.
        // Path 1: srtt 40 ms, empty                     -> 20 ms.
        // Path 0 wins but has no room: the packet waits for it rather than going to path 1.
        let paths = [view(0, 1, 10, 10, 10), view(1, 2, 10, 0, 40)];
        assert_eq!(Otias.select(Instant::ZERO, &paths, 1), None);
        // Once path 0 is 30 ahead (3 x 10 + 5 = 35 ms), path 1 arrives first.
        let paths = [view(0, 1, 10, 30, 10), view(1, 2, 10, 0, 40)];
        assert_eq!(Otias.select(Instant::ZERO, &paths, 1), Some(1));
    }

    #[test]
    fn the_packets_behind_a_waiting_head_spill_to_a_path_with_room() {
        // Path 0: srtt 40 ms, cwnd 2, 2 ahead (full) -> 1 x 40 + 20 = 60 ms.
        // Path 1: srtt 136 ms, empty                 -> 68 ms.
        // OTIAS queues packets on path 0 while floor((2 + k) / 2) x 40 + 20 <= 68, i.e. while
        // floor((2 + k) / 2) <= floor((68 - 20) / 40) = 1: k = 0 and 1, two packets. The third
        // packet of the queue would go to path 1.
        let paths = [view(0, 1, 2, 2, 40), view(1, 2, 100, 0, 136)];
        assert_eq!(Otias.select(Instant::ZERO, &paths, 1), None, "one packet waits for path 0");
        assert_eq!(
            Otias.select(Instant::ZERO, &paths, 2),
            None,
            "two still fit path 0's next round"
        );
        assert_eq!(Otias.select(Instant::ZERO, &paths, 3), Some(1));
        assert_eq!(Otias.select(Instant::ZERO, &paths, 500), Some(1));
        // With every path full there is nothing to spill to.
        let full = [view(0, 1, 2, 2, 40), view(1, 2, 10, 10, 136)];
        assert_eq!(Otias.select(Instant::ZERO, &full, 500), None);
    }

    #[test]
    fn down_paths_and_zero_windows_are_never_chosen() {
        let mut down = view(0, 1, 10, 0, 1);
        down.is_up = false;
        let shut = view(1, 1, 0, 0, 1);
        assert_eq!(Otias::estimated_arrival(&shut), None);
        assert_eq!(Otias.select(Instant::ZERO, &[down, shut, view(2, 3, 10, 0, 90)], 1), Some(2));
    }
}
