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
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

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

/// A scheduled event's heap key: time in nanoseconds in the high 64 bits, then the insertion
/// sequence (45 bits), then the event itself ([`Event::code`], 19 bits). Keys are unique (the
/// sequence is), so the event bits never decide an order, and the heap holds bare `u128`s: each
/// comparison is one integer comparison and each entry 16 bytes (a separate `Event` field made
/// entries 32 bytes and each pop about a fifth more instructions).
const EVENT_BITS: u32 = 19;
const SEQ_LIMIT: u64 = 1 << (64 - EVENT_BITS);

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
}

/// How many endpoints may have a timer ([`Event::Timer`]'s index is below this).
pub const TIMERS: usize = 8;

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<u128>>,
    /// Each endpoint's pending timer as a heap key (`u128::MAX`: none), ordered with the
    /// heap's entries by the same (time, sequence) rule.
    timers: [u128; TIMERS],
    /// The earliest of `timers` and its index, kept current by `arm` and `pop`.
    next_timer: (u128, usize),
    /// Each timer's superseded keys not yet passed (see the module comment).
    ghosts: [Ghosts; TIMERS],
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

    /// A fresh key at `at` with the event bits clear.
    fn key(&mut self, at: Instant) -> u128 {
        // 2^45 events is months of simulation at millions of events a second.
        debug_assert!(self.next_seq < SEQ_LIMIT, "more than 2^45 events scheduled");
        let key = (u128::from(at.as_nanos()) << 64) | (u128::from(self.next_seq) << EVENT_BITS);
        self.next_seq += 1;
        key
    }

    pub fn schedule(&mut self, at: Instant, event: Event) {
        let key = self.key(at) | event.code();
        self.heap.push(Reverse(key));
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
        let ghost = ghosts.take(at.as_nanos(), self.last);
        if self.timers[i] != u128::MAX {
            ghosts.insert(self.timers[i], self.last);
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

/// One timer's superseded keys, found by their instant. A timer has at most one ghost per
/// instant (re-arming at a ghost's instant takes the ghost), so a map from instant to key holds
/// them. Ghosts that pass unused stay until the map has grown to twice its size after the last
/// sweep, which then drops every passed one: with a deadline that moves later on every ACK (a
/// retransmission timeout) hundreds of ghosts are pending at once, so an ordered set (a tree, a
/// sorted vector) cost more per arming than the map's amortised sweep.
#[derive(Debug, Default)]
struct Ghosts {
    by_instant: HashMap<u64, u128, BuildHasherDefault<InstantHasher>>,
    sweep_above: usize,
}

impl Ghosts {
    /// The ghost at instant `at_ns` if it has not passed (its key is not below `last`), removed.
    fn take(&mut self, at_ns: u64, last: u128) -> Option<u128> {
        self.by_instant.remove(&at_ns).filter(|&g| g >= last)
    }

    /// Remembers the superseded key `key`.
    fn insert(&mut self, key: u128, last: u128) {
        if self.by_instant.len() >= self.sweep_above {
            self.by_instant.retain(|_, g| *g >= last);
            self.sweep_above = (2 * self.by_instant.len()).max(64);
        }
        let replaced = self.by_instant.insert((key >> 64) as u64, key);
        debug_assert!(replaced.is_none_or(|g| g < last), "two live ghosts at one instant");
    }
}

/// Hashes an instant in nanoseconds (a `u64` key only): a multiply and a fold, where the
/// standard library's SipHash costs several times more on this path.
#[derive(Debug, Default)]
struct InstantHasher(u64);

impl Hasher for InstantHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        let h = (n ^ (n >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }

    fn finish(&self) -> u64 {
        self.0
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
