//! The scheduler queue: inner packets waiting for the scheduler to find a path with room,
//! bounded and drop-tail (Pieska et al. 2024, Table 1: 1500 packets), and the source of the global
//! sequence numbers the receiver reorders by.
//!
//! A packet gets its global sequence number when it leaves the queue for a path, so the numbers
//! on the wire are contiguous in scheduling order. A packet a failed path hands back
//! ([`SchedQueue::give_back`]) goes to the front and keeps the number it already had, so the
//! receiver sees no gap for it. Both tunnel senders ([`super::TunnelSender`] and
//! [`super::StreamSender`]) keep their queue here.

use std::collections::VecDeque;

#[derive(Debug)]
struct Queued<P> {
    payload: P,
    len: u32,
    /// Set for a packet handed back by a failed path.
    global_seq: Option<u64>,
}

/// A packet leaving the queue for a path.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Dequeued<P> {
    pub payload: P,
    pub len: u32,
    pub global_seq: u64,
}

#[derive(Debug)]
pub(crate) struct SchedQueue<P> {
    queue: VecDeque<Queued<P>>,
    cap_pkts: usize,
    next_global_seq: u64,
}

impl<P> SchedQueue<P> {
    pub(crate) fn new(cap_pkts: usize) -> Self {
        SchedQueue { queue: VecDeque::with_capacity(cap_pkts), cap_pkts, next_global_seq: 0 }
    }

    /// Appends a packet of `len` bytes, or hands it back when the queue is full (drop-tail).
    pub(crate) fn offer(&mut self, payload: P, len: u32) -> Result<(), P> {
        if self.queue.len() >= self.cap_pkts {
            return Err(payload);
        }
        self.queue.push_back(Queued { payload, len, global_seq: None });
        Ok(())
    }

    /// Length of the packet at the head, if any.
    pub(crate) fn front_len(&self) -> Option<u32> {
        self.queue.front().map(|q| q.len)
    }

    /// Takes the head packet with its global sequence number: the one it kept, or the next.
    pub(crate) fn pop(&mut self) -> Option<Dequeued<P>> {
        let q = self.queue.pop_front()?;
        let global_seq = q.global_seq.unwrap_or_else(|| {
            self.next_global_seq += 1;
            self.next_global_seq - 1
        });
        Some(Dequeued { payload: q.payload, len: q.len, global_seq })
    }

    /// Puts a packet a failed path gave back at the head, keeping its global sequence number.
    /// Hand packets back newest first so they keep their order. The capacity is not checked:
    /// these packets were admitted before.
    pub(crate) fn give_back(&mut self, payload: P, len: u32, global_seq: u64) {
        self.queue.push_front(Queued { payload, len, global_seq: Some(global_seq) });
    }

    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_tail_at_capacity_and_numbers_in_leaving_order() {
        let mut q = SchedQueue::new(2);
        assert_eq!(q.offer('a', 100), Ok(()));
        assert_eq!(q.offer('b', 200), Ok(()));
        assert_eq!(q.offer('c', 300), Err('c'), "the third packet finds the queue full");
        assert_eq!(q.front_len(), Some(100));
        assert_eq!(q.pop(), Some(Dequeued { payload: 'a', len: 100, global_seq: 0 }));
        assert_eq!(q.pop(), Some(Dequeued { payload: 'b', len: 200, global_seq: 1 }));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn a_packet_given_back_leaves_first_with_its_old_number() {
        let mut q = SchedQueue::new(4);
        q.offer('a', 1).unwrap();
        q.offer('b', 1).unwrap();
        let a = q.pop().unwrap();
        // 'a' went to a path that failed: it comes back ahead of 'b', still number 0, and the
        // next fresh number is 1, not 2.
        q.give_back(a.payload, a.len, a.global_seq);
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop().map(|d| (d.payload, d.global_seq)), Some(('a', 0)));
        assert_eq!(q.pop().map(|d| (d.payload, d.global_seq)), Some(('b', 1)));
    }
}
