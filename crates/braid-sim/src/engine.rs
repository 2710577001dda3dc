//! The event queue: a binary heap keyed by (time, insertion sequence), so that events at the
//! same instant run in the order they were scheduled and every run is reproducible.
//!
//! Components keep the heap small (htsim's discipline, docs/design.md section 8): a link schedules
//! only the end of its head packet's transmission and the arrival of the first packet on its
//! delay line; an endpoint schedules only its earliest deadline.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

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

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<Entry>>,
    next_seq: u64,
    popped: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(64), next_seq: 0, popped: 0 }
    }

    pub fn schedule(&mut self, at: Instant, event: Event) {
        let key = (u128::from(at.as_nanos()) << 64) | u128::from(self.next_seq);
        self.heap.push(Reverse(Entry { key, event }));
        self.next_seq += 1;
    }

    pub fn pop(&mut self) -> Option<(Instant, Event)> {
        let Reverse(Entry { key, event }) = self.heap.pop()?;
        self.popped += 1;
        Some((Instant::from_nanos((key >> 64) as u64), event))
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
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
}
