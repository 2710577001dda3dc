//! Delay equalisation: hold each packet by how far its path's one-way delay lags behind the
//! slowest path's, so packets of all paths reach the reorder stage with the same delay.
//!
//! Sources: Pieska et al. 2024, section 2.1 ("enforcing delay equalization [10], which artificially
//! delays packets received via the faster path by the difference in path delay experienced. For
//! instance, if two paths exhibit delays of 10 and 30 ms, packets [...] over the shorter path are
//! delayed by an additional 20 ms"); its reference [10], Evensen et al., "A network-layer proxy
//! for bandwidth aggregation and reduction of IP packet reordering", IEEE LCN 2009.
//!
//! # Rule
//! For a packet with one-way delay `owd` (arrival minus send timestamp, `path_delay.rs`):
//! `hold = max(owd of the fresh paths' latest samples) - owd`, at least 0, at most 10 s
//! ([`PathDelays::lag_behind_slowest`]). It leaves the delay line at
//! `exit = max(arrival + hold, exit of the previous packet of its path)`: a path's packets leave
//! in arrival order, which they had in sending order too, so a hold that shrinks (the slow path's
//! queue drains) never reorders a path against itself. Packets of the slowest path get a hold of
//! 0 and go straight on.
//!
//! # Choices where the sources are vague
//! - *Where*: at the receiver, which measures the delays from the send timestamps without any
//!   feedback. (The paper's example phrases it as delaying packets sent on the shorter path; the
//!   release order is the same.)
//! - *Which delay*: the packet's own one-way delay against each path's latest sample, not a
//!   smoothed one: equalisation is meant to absorb jitter as well as the mean difference (Evensen
//!   et al.), and the adaptive wait limit already smooths for the wait.
//! - *Interplay with the wait limit*: the delay line sits in front of the reorder stage; a packet
//!   reaches the reorder stage (`Released::hold_end`) when its hold ends. The wait limit keeps
//!   counting from the packet's arrival at the receiver: the hold is part of the wait, not added
//!   to it. The adaptive limit measures the same delay difference that the hold compensates for,
//!   so counting from the end of the hold would wait for the difference twice. A packet beyond a
//!   gap therefore leaves no later than `max(arrival + wait limit, exit)`: with the adaptive
//!   limit about one margin after its hold; with a static limit the static wait bounds the total.
//! - *Bound*: the delay line holds at most `buffer_pkts` packets; when full, the packet due first
//!   goes on to the reorder stage early to make room.
//! - Equalisation works under every policy; with `none` it is pure equalisation (packets leave
//!   in exit order, nothing else is waited for).
//!
//! [`PathDelays::lag_behind_slowest`]: super::PathDelays::lag_behind_slowest

use std::collections::VecDeque;

use super::Released;
use crate::time::Instant;

/// A packet in the delay line and when it leaves.
#[derive(Debug)]
struct Delayed<P> {
    exit: Instant,
    packet: Released<P>,
}

/// The delay line: one FIFO (lane) per path, each ordered by exit time.
#[derive(Debug)]
pub(crate) struct DelayLine<P> {
    lanes: Box<[VecDeque<Delayed<P>>]>,
    len: usize,
}

impl<P> DelayLine<P> {
    /// `lanes` FIFOs, each allocated with an even share of `capacity` (a busier lane grows once,
    /// amortised; the caller keeps the total within `capacity`).
    pub(crate) fn new(lanes: usize, capacity: usize) -> Self {
        let share = capacity.div_ceil(lanes.max(1));
        DelayLine { lanes: (0..lanes).map(|_| VecDeque::with_capacity(share)).collect(), len: 0 }
    }

    /// Queues `packet` on `lane` to leave at `exit`, or at the previous exit of the lane if that
    /// is later. Lanes beyond the last share the last.
    pub(crate) fn push(&mut self, lane: usize, exit: Instant, packet: Released<P>) {
        let lane = lane.min(self.lanes.len() - 1);
        let q = &mut self.lanes[lane];
        let exit = q.back().map_or(exit, |prev| prev.exit.max(exit));
        q.push_back(Delayed { exit, packet });
        self.len += 1;
    }

    /// Whether `lane` holds nothing: a packet with no hold may then bypass the line.
    pub(crate) fn lane_is_empty(&self, lane: usize) -> bool {
        self.lanes.get(lane.min(self.lanes.len() - 1)).is_none_or(VecDeque::is_empty)
    }

    /// The earliest exit and its lane (the lowest lane on ties).
    pub(crate) fn next_exit(&self) -> Option<(Instant, usize)> {
        let mut best: Option<(Instant, usize)> = None;
        for (lane, q) in self.lanes.iter().enumerate() {
            if let Some(d) = q.front() {
                if best.is_none_or(|(t, _)| d.exit < t) {
                    best = Some((d.exit, lane));
                }
            }
        }
        best
    }

    /// Removes the front packet of `lane`, with its exit time.
    pub(crate) fn pop(&mut self, lane: usize) -> Option<(Instant, Released<P>)> {
        let d = self.lanes.get_mut(lane)?.pop_front()?;
        self.len -= 1;
        Some((d.exit, d.packet))
    }

    /// The lowest global sequence number at the front of a lane. Each path delivers in sending
    /// order, so this is the lowest number in the line; fast loss detection must not give it up.
    pub(crate) fn lowest_seq(&self) -> Option<u64> {
        self.lanes.iter().filter_map(|q| q.front()).map(|d| d.packet.global_seq).min()
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn t_ms(ms: u64) -> Instant {
        Instant::from_nanos(ms * MS)
    }

    fn packet(seq: u64, path: usize, at: Instant) -> Released<u64> {
        Released { payload: seq, global_seq: seq, arrival: at, hold_end: at, path }
    }

    #[test]
    fn lanes_keep_arrival_order_and_the_earliest_exit_goes_first() {
        let mut d = DelayLine::new(3, 8);
        assert_eq!(d.next_exit(), None);
        d.push(0, t_ms(30), packet(4, 0, t_ms(10)));
        // The hold shrank: this packet may not overtake the one ahead on its lane.
        d.push(0, t_ms(25), packet(6, 0, t_ms(11)));
        d.push(1, t_ms(28), packet(5, 1, t_ms(28)));
        // Lanes beyond the last share it.
        d.push(7, t_ms(40), packet(9, 9, t_ms(12)));
        assert_eq!(d.len(), 4);
        assert_eq!(d.lowest_seq(), Some(4));
        let mut order = Vec::new();
        while let Some((exit, lane)) = d.next_exit() {
            let (at, p) = d.pop(lane).unwrap();
            assert_eq!(at, exit);
            order.push((p.global_seq, at));
        }
        assert_eq!(order, vec![(5, t_ms(28)), (4, t_ms(30)), (6, t_ms(30)), (9, t_ms(40))]);
        assert_eq!(d.len(), 0);
        assert_eq!(d.lowest_seq(), None);
        assert!(d.lane_is_empty(0) && d.lane_is_empty(9));
    }

    #[test]
    fn ties_go_to_the_lowest_lane() {
        let mut d = DelayLine::new(2, 4);
        d.push(1, t_ms(5), packet(1, 1, t_ms(0)));
        d.push(0, t_ms(5), packet(2, 0, t_ms(0)));
        assert_eq!(d.next_exit(), Some((t_ms(5), 0)));
        assert!(!d.lane_is_empty(1));
    }
}
