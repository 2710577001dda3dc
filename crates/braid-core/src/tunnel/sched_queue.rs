//! The scheduler queue: inner packets waiting for the scheduler to find a path with room,
//! bounded and drop-tail (Pieska et al. 2024, Table 1: 1500 packets), optionally under CoDel, and
//! the source of the global sequence numbers the receiver reorders by.
//!
//! A packet gets its global sequence number when it leaves the queue for a path, so the numbers
//! on the wire are contiguous in scheduling order. A packet a failed path hands back
//! ([`SchedQueue::give_back`]) goes to the front and keeps the number it already had, so the
//! receiver sees no gap for it. Both tunnel senders ([`super::TunnelSender`] and
//! [`super::StreamSender`]) keep their queue here.
//!
//! # CoDel on the scheduler queue
//! The queue sits between the end-to-end senders and the paths' congestion windows: when the
//! end-to-end window exceeds what the paths hold, the excess waits here, and a drop-tail queue of
//! 1500 packets lets it grow to hundreds of milliseconds (the end-to-end RTT inflation measured
//! with Cubic over the bonded paths). With [`CoDelConfig`] given, each packet leaving for a path
//! is judged by [`CoDel`] (RFC 8289, sections 3-5) on its sojourn time, exactly as a router's
//! CoDel judges packets leaving for its link: a standing queue above TARGET for an INTERVAL
//! makes CoDel drop at the head, at the control law's increasing rate, until the end-to-end
//! senders slow down. A dropped packet never gets a global sequence number, so the receiver
//! sees no gap and waits for nothing; the end-to-end transport sees one loss, as behind any
//! AQM router. Drop-tail at capacity stays as the backstop. The "dequeue" CoDel needs is a
//! packet leaving for a path ([`SchedQueue::pop`]); the scheduler finding the queue empty is
//! its empty dequeue ([`SchedQueue::note_empty`]). Packets handed back by a failed path are not
//! judged again: they already left once. The backlog CoDel compares with one MTU is the inner
//! bytes still queued behind the packet.

use std::collections::VecDeque;

use crate::linkmodel::{CoDel, CoDelConfig, Verdict};
use crate::time::Instant;

#[derive(Debug)]
struct Queued<P> {
    payload: P,
    len: u32,
    /// When the packet entered the queue (its sojourn time starts here).
    enqueued_at: Instant,
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

/// What one dequeue attempt gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Popped<P> {
    Packet(Dequeued<P>),
    /// CoDel dropped the head packet (it is in [`SchedQueue::take_dropped`]); look at the new
    /// head and try again.
    Dropped,
    Empty,
}

#[derive(Debug)]
pub(crate) struct SchedQueue<P> {
    queue: VecDeque<Queued<P>>,
    cap_pkts: usize,
    /// Inner bytes queued.
    bytes: u64,
    next_global_seq: u64,
    codel: Option<CoDel>,
    /// Packets CoDel dropped, for the caller to take back (its handles, its counters).
    dropped: VecDeque<P>,
}

impl<P> SchedQueue<P> {
    pub(crate) fn new(cap_pkts: usize, codel: Option<CoDelConfig>) -> Self {
        SchedQueue {
            queue: VecDeque::with_capacity(cap_pkts),
            cap_pkts,
            bytes: 0,
            next_global_seq: 0,
            codel: codel.map(CoDel::new),
            dropped: VecDeque::new(),
        }
    }

    /// Appends a packet of `len` bytes at `now`, or hands it back when the queue is full
    /// (drop-tail).
    pub(crate) fn offer(&mut self, now: Instant, payload: P, len: u32) -> Result<(), P> {
        if self.queue.len() >= self.cap_pkts {
            return Err(payload);
        }
        self.queue.push_back(Queued { payload, len, enqueued_at: now, global_seq: None });
        self.bytes += u64::from(len);
        Ok(())
    }

    /// Length of the packet at the head, if any.
    pub(crate) fn front_len(&self) -> Option<u32> {
        self.queue.front().map(|q| q.len)
    }

    /// Takes the head packet at `now` with its global sequence number (the one it kept, or the
    /// next), unless CoDel drops it.
    pub(crate) fn pop(&mut self, now: Instant) -> Popped<P> {
        let Some(q) = self.queue.pop_front() else {
            self.note_empty();
            return Popped::Empty;
        };
        self.bytes -= u64::from(q.len);
        if let (Some(codel), None) = (self.codel.as_mut(), q.global_seq) {
            if codel.on_dequeue(now, q.enqueued_at, self.bytes) == Verdict::Drop {
                self.dropped.push_back(q.payload);
                return Popped::Dropped;
            }
        }
        let global_seq = q.global_seq.unwrap_or_else(|| {
            self.next_global_seq += 1;
            self.next_global_seq - 1
        });
        Popped::Packet(Dequeued { payload: q.payload, len: q.len, global_seq })
    }

    /// The scheduler looked for a packet and found none: CoDel's empty dequeue (no standing
    /// queue any more).
    pub(crate) fn note_empty(&mut self) {
        if let Some(codel) = self.codel.as_mut() {
            codel.on_empty();
        }
    }

    /// The next packet CoDel dropped, oldest first.
    pub(crate) fn take_dropped(&mut self) -> Option<P> {
        self.dropped.pop_front()
    }

    /// Puts a packet a failed path gave back at the head, keeping its global sequence number.
    /// Hand packets back newest first so they keep their order. The capacity is not checked:
    /// these packets were admitted before. It counts as just queued.
    pub(crate) fn give_back(&mut self, now: Instant, payload: P, len: u32, global_seq: u64) {
        self.bytes += u64::from(len);
        self.queue.push_front(Queued {
            payload,
            len,
            enqueued_at: now,
            global_seq: Some(global_seq),
        });
    }

    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// The global sequence number the next fresh packet will get.
    pub(crate) fn next_global_seq(&self) -> u64 {
        self.next_global_seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const T0: Instant = Instant::ZERO;

    fn ms(v: u64) -> Instant {
        Instant::from_nanos(v * 1_000_000)
    }

    fn packet(p: Popped<char>) -> Option<(char, u64)> {
        match p {
            Popped::Packet(d) => Some((d.payload, d.global_seq)),
            _ => None,
        }
    }

    #[test]
    fn drop_tail_at_capacity_and_numbers_in_leaving_order() {
        let mut q = SchedQueue::new(2, None);
        assert_eq!(q.offer(T0, 'a', 100), Ok(()));
        assert_eq!(q.offer(T0, 'b', 200), Ok(()));
        assert_eq!(q.offer(T0, 'c', 300), Err('c'), "the third packet finds the queue full");
        assert_eq!(q.front_len(), Some(100));
        assert_eq!(q.pop(T0), Popped::Packet(Dequeued { payload: 'a', len: 100, global_seq: 0 }));
        assert_eq!(q.pop(T0), Popped::Packet(Dequeued { payload: 'b', len: 200, global_seq: 1 }));
        assert_eq!(q.pop(T0), Popped::Empty);
    }

    #[test]
    fn a_packet_given_back_leaves_first_with_its_old_number() {
        let mut q = SchedQueue::new(4, None);
        q.offer(T0, 'a', 1).unwrap();
        q.offer(T0, 'b', 1).unwrap();
        let Popped::Packet(a) = q.pop(T0) else { panic!("a packet") };
        // 'a' went to a path that failed: it comes back ahead of 'b', still number 0, and the
        // next fresh number is 1, not 2.
        q.give_back(T0, a.payload, a.len, a.global_seq);
        assert_eq!(q.len(), 2);
        assert_eq!(packet(q.pop(T0)), Some(('a', 0)));
        assert_eq!(packet(q.pop(T0)), Some(('b', 1)));
    }

    /// RFC 8289 sections 3.2-3.3: a sojourn time at or above TARGET for a whole INTERVAL drops
    /// the head; the dropped packet takes no global number, so the numbers stay contiguous.
    #[test]
    fn codel_drops_a_standing_queue_at_the_head_without_a_gap_in_the_numbers() {
        let codel = CoDelConfig {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            mtu_bytes: 1514,
        };
        let mut q = SchedQueue::new(1000, Some(codel));
        // A packet of 1500 bytes arrives every ms; one leaves every 2 ms: the queue grows.
        let mut next = 0u64;
        let mut dropped = 0;
        let mut first_drop_at = None;
        for t in 0..400u64 {
            q.offer(ms(t), char::from_u32(t as u32 % 26 + 97).unwrap(), 1500).unwrap();
            if t % 2 == 1 {
                loop {
                    match q.pop(ms(t)) {
                        Popped::Packet(d) => {
                            assert_eq!(d.global_seq, next, "contiguous numbers");
                            next += 1;
                            break;
                        }
                        Popped::Dropped => {
                            dropped += 1;
                            first_drop_at.get_or_insert(t);
                        }
                        Popped::Empty => break,
                    }
                }
            }
        }
        let first = first_drop_at.expect("CoDel dropped");
        // The sojourn reaches 5 ms at about 10 ms and stays above: the first drop comes one
        // INTERVAL later, not before.
        assert!((100..=120).contains(&first), "first drop at {first} ms");
        assert!(dropped >= 2, "the control law keeps dropping: {dropped}");
        let mut taken = 0;
        while q.take_dropped().is_some() {
            taken += 1;
        }
        assert_eq!(taken, dropped, "every dropped packet is handed back");
    }

    /// Drop-tail alone (no CoDel): a standing queue is never dropped at the head.
    #[test]
    fn without_codel_a_standing_queue_is_kept() {
        let mut q = SchedQueue::new(1000, None);
        for t in 0..400u64 {
            q.offer(ms(t), 'x', 1500).unwrap();
            if t % 2 == 1 {
                assert!(matches!(q.pop(ms(t)), Popped::Packet(_)));
            }
        }
        assert_eq!(q.len(), 200);
        assert!(q.take_dropped().is_none());
    }

    /// A packet handed back by a failed path left once already: CoDel does not judge it.
    #[test]
    fn codel_does_not_judge_packets_handed_back() {
        let mut q = SchedQueue::new(10, Some(CoDelConfig::default()));
        q.offer(T0, 'a', 1500).unwrap();
        q.offer(T0, 'b', 1500).unwrap();
        let Popped::Packet(a) = q.pop(T0) else { panic!("a packet") };
        q.give_back(T0, a.payload, a.len, a.global_seq);
        // Long after, with a standing queue: the handed-back packet still leaves.
        assert_eq!(packet(q.pop(ms(10_000))), Some(('a', 0)));
    }
}
