//! The event queue: a binary heap keyed by (time, event kind, component index), so that every
//! run is reproducible and the order of events at one instant follows a fixed rule that does not
//! depend on when they were scheduled.
//!
//! At one instant, events run in the order of [`Event`]'s variants: ends of serialisation
//! first (a packet that finishes being sent at `t` has left its queue for anything else that
//! happens at `t`), then arrivals, timers, trace samples, host departures and the start. Among
//! events of one kind, the lower component index runs first. Each component has at most one
//! event of each kind pending (a link its head's end of service and its delay line's first
//! arrival, an endpoint one timer, a host its head's departure), so the key is unique and the
//! order total. Because the rule depends only on the events, a link whose departures are known
//! in advance can skip its end-of-service events altogether and get the same run
//! (crate::link's scheduled links).
//!
//! Components keep the heap small (htsim's discipline, docs/design.md section 8): a link schedules
//! only the end of its head packet's transmission and the arrival of the first packet on its
//! delay line; an endpoint has one timer slot beside the heap ([`EventQueue::arm`]). A timer
//! kept in the heap would leave a stale entry behind each time its deadline moves earlier (a
//! pacing deadline ahead of a 200 ms retransmission timeout): hundreds of them, which made the
//! heap 15-40 times larger than the live events and its pops a fifth of the run time.
//!
//! Until 2026-11 ties went by insertion order, which needed the superseded timer deadlines kept
//! as "ghosts" to stay reproducible and made a link's end-of-service events impossible to skip
//! without changing results; docs/performance.md has the change's effect on results.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use braid_core::Instant;

/// Something that happens at an instant. The variants' order is the order of events at one
/// instant (module comment).
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

/// A scheduled event's heap key: time in nanoseconds in the high 64 bits, the event
/// ([`Event::code`]) in the low 19: the key orders exactly as the module comment says, each
/// comparison is one integer comparison and each heap entry 16 bytes.
const EVENT_BITS: u32 = 19;

impl Event {
    /// The event as 19 bits: the variant in the top 3, its index in the low 16.
    fn code(self) -> u128 {
        let (variant, index) = match self {
            Event::TxDone(i) => (0, i),
            Event::Arrive(i) => (1, i),
            Event::Timer(i) => (2, i),
            Event::Sample => (3, 0),
            Event::Depart(i) => (4, i),
            Event::Start => (5, 0),
        };
        (variant << 16) | u128::from(index)
    }

    fn from_code(code: u128) -> Event {
        let index = (code & 0xffff) as u16;
        match (code >> 16) & 0b111 {
            0 => Event::TxDone(index),
            1 => Event::Arrive(index),
            2 => Event::Timer(index),
            3 => Event::Sample,
            4 => Event::Depart(index),
            _ => Event::Start,
        }
    }

    /// The heap key of this event at `at`.
    fn key(self, at: Instant) -> u128 {
        (u128::from(at.as_nanos()) << 64) | self.code()
    }
}

/// How many endpoints may have a timer ([`Event::Timer`]'s index is below this).
pub const TIMERS: usize = 8;

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<u128>>,
    /// Each endpoint's pending timer as a heap key (`u128::MAX`: none), ordered with the
    /// heap's entries by the same rule.
    timers: [u128; TIMERS],
    /// The earliest of `timers` and its index, kept current by `arm` and `pop`.
    next_timer: (u128, usize),
    popped: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(64),
            timers: [u128::MAX; TIMERS],
            next_timer: (u128::MAX, 0),
            popped: 0,
        }
    }

    pub fn schedule(&mut self, at: Instant, event: Event) {
        self.heap.push(Reverse(event.key(at)));
    }

    /// Sets endpoint `timer`'s deadline to `at` if that is earlier than its pending one (or it
    /// has none); returns whether it did. A later deadline needs nothing: when the pending one
    /// fires, the endpoint runs and re-arms. The timer fires once, as [`Event::Timer`].
    pub fn arm(&mut self, timer: u16, at: Instant) -> bool {
        let i = usize::from(timer);
        let key = Event::Timer(timer).key(at);
        if self.timers[i] <= key {
            return false;
        }
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
        let heap_key = self.heap.peek().map_or(u128::MAX, |&Reverse(k)| k);
        let (key, event) = if self.next_timer.0 < heap_key {
            let (key, i) = self.next_timer;
            self.timers[i] = u128::MAX;
            self.next_timer = earliest(&self.timers);
            (key, Event::Timer(i as u16))
        } else {
            let Reverse(key) = self.heap.pop()?;
            (key, Event::from_code(key & ((1 << EVENT_BITS) - 1)))
        };
        self.popped += 1;
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
    fn every_event_survives_its_packing_into_the_key() {
        let events = [
            Event::TxDone(0),
            Event::TxDone(u16::MAX),
            Event::Arrive(5),
            Event::Timer(7),
            Event::Sample,
            Event::Depart(3),
            Event::Start,
        ];
        for e in events {
            assert_eq!(Event::from_code(e.code()), e);
            assert!(e.code() < 1 << EVENT_BITS);
        }
    }

    #[test]
    fn pops_in_time_order_then_by_kind_and_index_whatever_the_scheduling_order() {
        let mut q = EventQueue::new();
        let t = |ns| Instant::from_nanos(ns);
        q.schedule(t(5), Event::Depart(0));
        q.schedule(t(3), Event::Sample);
        q.schedule(t(5), Event::Arrive(4));
        q.schedule(t(3), Event::TxDone(2));
        q.schedule(t(5), Event::Arrive(1));
        q.schedule(t(5), Event::TxDone(9));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (t(3), Event::TxDone(2)),
                (t(3), Event::Sample),
                (t(5), Event::TxDone(9)),
                (t(5), Event::Arrive(1)),
                (t(5), Event::Arrive(4)),
                (t(5), Event::Depart(0)),
            ]
        );
        assert_eq!(q.processed(), 6);
    }

    #[test]
    fn a_timer_keeps_its_earliest_deadline_and_orders_with_the_heap_by_kind() {
        let mut q = EventQueue::new();
        let t = |ns| Instant::from_nanos(ns);
        assert!(q.arm(1, t(10)));
        assert!(!q.arm(1, t(12)), "a later deadline waits for the pending one");
        assert!(!q.arm(1, t(10)), "so does an equal one");
        q.schedule(t(7), Event::Sample);
        assert!(q.arm(1, t(7)), "an earlier one replaces it");
        q.schedule(t(7), Event::TxDone(0));
        assert!(q.arm(0, t(9)));
        assert!(q.arm(3, t(7)));
        assert_eq!(q.timer(1), Some(t(7)));
        assert_eq!(q.len(), 5);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (t(7), Event::TxDone(0)),
                (t(7), Event::Timer(1)),
                (t(7), Event::Timer(3)),
                (t(7), Event::Sample),
                (t(9), Event::Timer(0)),
            ],
            "the replaced deadline at 10 never fires"
        );
        assert_eq!(q.timer(1), None);
        assert!(q.arm(1, t(12)), "a fired timer arms again");
    }
}
