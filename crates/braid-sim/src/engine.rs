//! The event queue: a binary heap keyed by (time, insertion sequence), so that events at the
//! same instant run in the order they were scheduled and every run is reproducible.
//!
//! Components keep the heap small (htsim's discipline, docs/design.md section 8): a link schedules
//! only the end of its head packet's transmission and the arrival of the first packet on its
//! delay line; an endpoint has one timer slot beside the heap ([`EventQueue::arm`]). A timer
//! kept in the heap would leave a stale entry behind each time its deadline moves earlier (a
//! pacing deadline ahead of a 200 ms retransmission timeout): hundreds of them, which made the
//! heap 15-40 times larger than the live events and its pops a fifth of the run time.
//!
//! The slots keep the order those heap entries gave, exactly, so that runs stay bit for bit
//! what they were: a superseded deadline is remembered as a *ghost* key, and a timer re-armed
//! for the very instant of a ghost not yet passed takes the ghost's place in the order (the
//! stale entry used to pop first and, finding its slot at that instant, fire). Ties of that kind
//! are common (a retransmission deadline that did not move while pacing deadlines came and
//! went), and the runs of chaotic cells tip on them.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use braid_core::Instant;

/// Something that happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// A link finished serialising its head packet.
    TxDone(u16),
    /// The first packet on a link's delay line reaches the far end.
    Arrive(u16),
    /// An endpoint's timer.
    Timer(u16),
    /// Periodic sampling of traces.
    Sample,
    /// A host's head packet has waited out its host delay (noise model).
    Depart(u16),
    /// The transfer starts (noise model's start offset).
    Start,
}

/// A scheduled event, ordered by time then insertion sequence, packed into one `u128` key
/// (time in the high 64 bits) so each heap comparison is a single integer comparison. The
/// order is written out on the key alone: derived on `(key, event)` it is the same order
/// (keys are unique) but made `braid bench` about 10% slower.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// How many endpoints may have a timer ([`Event::Timer`]'s index is below this).
pub const TIMERS: usize = 8;

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<Entry>>,
    /// Each endpoint's pending timer as a heap key (`u128::MAX`: none), ordered with the
    /// heap's entries by the same (time, sequence) rule.
    timers: [u128; TIMERS],
    /// The earliest of `timers` and its index, kept current by `arm` and `pop`.
    next_timer: (u128, usize),
    /// Each timer's superseded keys not yet passed (see the module comment).
    ghosts: [BTreeSet<u128>; TIMERS],
    /// The key of the last event popped: every key below it has passed.
    last: u128,
    next_seq: u64,
    popped: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(64),
            timers: [u128::MAX; TIMERS],
            next_timer: (u128::MAX, 0),
            ghosts: Default::default(),
            last: 0,
            next_seq: 0,
            popped: 0,
        }
    }

    fn key(&mut self, at: Instant) -> u128 {
        let key = (u128::from(at.as_nanos()) << 64) | u128::from(self.next_seq);
        self.next_seq += 1;
        key
    }

    pub fn schedule(&mut self, at: Instant, event: Event) {
        let key = self.key(at);
        self.heap.push(Reverse(Entry { key, event }));
    }

    /// Sets endpoint `timer`'s deadline to `at` if that is earlier than its pending one (or it
    /// has none); returns whether it did. A later deadline needs nothing: when the pending one
    /// fires, the endpoint runs and re-arms. The timer fires once, as [`Event::Timer`].
    pub fn arm(&mut self, timer: u16, at: Instant) -> bool {
        let i = usize::from(timer);
        let at_ns = u128::from(at.as_nanos());
        if (self.timers[i] >> 64) <= at_ns {
            return false;
        }
        let ghosts = &mut self.ghosts[i];
        while ghosts.first().is_some_and(|&g| g < self.last) {
            ghosts.pop_first();
        }
        let same_instant = (at_ns << 64)..=((at_ns << 64) | u128::from(u64::MAX));
        let ghost = ghosts.range(same_instant).next().copied();
        if let Some(g) = ghost {
            ghosts.remove(&g);
        }
        if self.timers[i] != u128::MAX {
            ghosts.insert(self.timers[i]);
        }
        let key = ghost.unwrap_or_else(|| self.key(at));
        self.timers[i] = key;
        if key < self.next_timer.0 {
            self.next_timer = (key, i);
        } else if self.next_timer.1 == i {
            self.next_timer = earliest(&self.timers);
        }
        true
    }

    /// Endpoint `timer`'s pending deadline.
    pub fn timer(&self, timer: u16) -> Option<Instant> {
        let key = self.timers[usize::from(timer)];
        (key != u128::MAX).then(|| Instant::from_nanos((key >> 64) as u64))
    }

    pub fn pop(&mut self) -> Option<(Instant, Event)> {
        let heap_key = self.heap.peek().map_or(u128::MAX, |Reverse(e)| e.key);
        let (key, event) = if self.next_timer.0 < heap_key {
            let (key, i) = self.next_timer;
            self.timers[i] = u128::MAX;
            self.next_timer = earliest(&self.timers);
            (key, Event::Timer(i as u16))
        } else {
            let Reverse(Entry { key, event }) = self.heap.pop()?;
            (key, event)
        };
        self.popped += 1;
        self.last = key;
        Some((Instant::from_nanos((key >> 64) as u64), event))
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }

    /// Events pending: the heap's and the armed timers.
    pub fn len(&self) -> usize {
        self.heap.len() + self.timers.iter().filter(|&&k| k != u128::MAX).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The smallest key of `timers` and its index.
fn earliest(timers: &[u128; TIMERS]) -> (u128, usize) {
    let mut best = (u128::MAX, 0);
    for (i, &k) in timers.iter().enumerate() {
        if k < best.0 {
            best = (k, i);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_and_fifo_among_equal_times() {
        let mut q = EventQueue::new();
        let t = |ns| Instant::from_nanos(ns);
        q.schedule(t(5), Event::Timer(1));
        q.schedule(t(3), Event::Timer(2));
        q.schedule(t(5), Event::Timer(0));
        q.schedule(t(3), Event::Sample);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (t(3), Event::Timer(2)),
                (t(3), Event::Sample),
                (t(5), Event::Timer(1)),
                (t(5), Event::Timer(0)),
            ]
        );
        assert_eq!(q.processed(), 4);
    }

    #[test]
    fn a_timer_keeps_its_earliest_deadline_and_orders_with_the_heap_by_arming_time() {
        let mut q = EventQueue::new();
        let t = |ns| Instant::from_nanos(ns);
        assert!(q.arm(1, t(10)));
        assert!(!q.arm(1, t(12)), "a later deadline waits for the pending one");
        assert!(!q.arm(1, t(10)), "so does an equal one");
        q.schedule(t(7), Event::Sample);
        assert!(q.arm(1, t(7)), "an earlier one replaces it, sequenced after the Sample");
        q.schedule(t(7), Event::TxDone(0));
        assert!(q.arm(0, t(9)));
        assert_eq!(q.timer(1), Some(t(7)));
        assert_eq!(q.len(), 4);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (t(7), Event::Sample),
                (t(7), Event::Timer(1)),
                (t(7), Event::TxDone(0)),
                (t(9), Event::Timer(0)),
            ],
            "the replaced deadline at 10 never fires"
        );
        assert_eq!(q.timer(1), None);
        assert!(q.arm(1, t(12)), "a fired timer arms again");
    }

    #[test]
    fn a_timer_re_armed_for_a_superseded_instant_keeps_that_instants_place() {
        // The heap-only queue this replaces left a stale entry at 50 when the deadline moved to
        // 20; re-armed at 50 later, the stale entry (sequenced before the TxDone) fired first.
        let mut q = EventQueue::new();
        let t = |ns| Instant::from_nanos(ns);
        q.arm(2, t(50));
        q.schedule(t(50), Event::TxDone(3));
        q.arm(2, t(20));
        assert_eq!(q.pop(), Some((t(20), Event::Timer(2))));
        assert!(q.arm(2, t(50)));
        assert_eq!(q.pop(), Some((t(50), Event::Timer(2))));
        assert_eq!(q.pop(), Some((t(50), Event::TxDone(3))));
        // Once 50 has passed, re-arming there is an ordinary new entry.
        q.schedule(t(50), Event::Sample);
        assert!(q.arm(2, t(50)));
        assert_eq!(q.pop(), Some((t(50), Event::Sample)));
        assert_eq!(q.pop(), Some((t(50), Event::Timer(2))));
        assert_eq!(q.pop(), None);
    }
}
