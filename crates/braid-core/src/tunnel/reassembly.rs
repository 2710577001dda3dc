//! In-order delivery per path, for reliable tunnel paths.
//!
//! A reliable path behaves like the TCP tunnels of Pieska et al. 2024 (section 2.2): the sender
//! sends a lost packet again with the same path sequence number, and the receiving end of the path
//! hands packets on strictly in path-sequence order, so one loss holds back every later packet
//! of that path until the retransmission arrives (per-path head-of-line blocking). Only then do
//! they reach the reorder buffer, which restores the global order across paths.
//!
//! The buffer is a fixed ring indexed by path sequence number modulo its capacity (no
//! allocation after construction). A packet that falls beyond the ring is refused and must not
//! be acknowledged, so the sender sends it again later, as a TCP receiver drops what falls
//! outside its window.

use crate::wire::DataHeader;

/// What [`Reassembly::insert`] did with a packet.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reassembled<P> {
    /// Held (or ready): read it back with [`Reassembly::pop_ready`].
    Accepted,
    /// Already received (an earlier copy was held or delivered): handed back.
    Duplicate(P),
    /// Beyond the buffer: handed back, and not to be acknowledged.
    Overflow(P),
}

#[derive(Debug)]
pub(crate) struct Reassembly<P> {
    /// Next path sequence number to deliver.
    next: u64,
    slots: Vec<Option<(DataHeader, P)>>,
    held: usize,
}

impl<P> Reassembly<P> {
    pub(crate) fn new(capacity: usize) -> Self {
        Reassembly { next: 0, slots: (0..capacity).map(|_| None).collect(), held: 0 }
    }

    fn slot(&self, seq: u64) -> usize {
        (seq % self.slots.len() as u64) as usize
    }

    pub(crate) fn insert(&mut self, header: DataHeader, payload: P) -> Reassembled<P> {
        let seq = header.path_seq;
        if seq < self.next {
            return Reassembled::Duplicate(payload);
        }
        if seq - self.next >= self.slots.len() as u64 {
            return Reassembled::Overflow(payload);
        }
        let i = self.slot(seq);
        if self.slots[i].is_some() {
            return Reassembled::Duplicate(payload);
        }
        self.slots[i] = Some((header, payload));
        self.held += 1;
        Reassembled::Accepted
    }

    /// The next packet in path order, if it has arrived.
    pub(crate) fn pop_ready(&mut self) -> Option<(DataHeader, P)> {
        let i = self.slot(self.next);
        let ready = self.slots[i].take()?;
        self.next += 1;
        self.held -= 1;
        Some(ready)
    }

    /// Packets held waiting for an earlier one.
    pub(crate) fn len(&self) -> usize {
        self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(path_seq: u64) -> DataHeader {
        DataHeader {
            flags: 0,
            path_id: 0,
            payload_len: 0,
            global_seq: 100 + path_seq,
            path_seq,
            send_ts_ns: 0,
        }
    }

    fn drain(r: &mut Reassembly<u64>) -> Vec<u64> {
        std::iter::from_fn(|| r.pop_ready().map(|(_, p)| p)).collect()
    }

    #[test]
    fn a_gap_holds_back_every_later_packet_until_it_fills() {
        let mut r = Reassembly::new(8);
        assert_eq!(r.insert(h(0), 0), Reassembled::Accepted);
        assert_eq!(drain(&mut r), vec![0]);
        for s in [2, 3, 4] {
            assert_eq!(r.insert(h(s), s), Reassembled::Accepted);
        }
        assert_eq!(drain(&mut r), Vec::<u64>::new(), "1 is missing: nothing moves");
        assert_eq!(r.len(), 3);
        assert_eq!(r.insert(h(1), 1), Reassembled::Accepted); // the retransmission
        assert_eq!(drain(&mut r), vec![1, 2, 3, 4]);
        assert_eq!(r.len(), 0);
    }

    #[test]
    fn duplicates_and_packets_beyond_the_ring_are_handed_back() {
        let mut r = Reassembly::new(4);
        assert_eq!(r.insert(h(0), 0), Reassembled::Accepted);
        assert_eq!(r.insert(h(2), 2), Reassembled::Accepted);
        assert_eq!(r.insert(h(2), 22), Reassembled::Duplicate(22));
        assert_eq!(drain(&mut r), vec![0]);
        assert_eq!(r.insert(h(0), 10), Reassembled::Duplicate(10), "already delivered");
        // next = 1, ring of 4: 1..=4 fit, 5 does not.
        assert_eq!(r.insert(h(5), 5), Reassembled::Overflow(5));
        assert_eq!(r.insert(h(4), 4), Reassembled::Accepted);
        assert_eq!(r.insert(h(1), 1), Reassembled::Accepted);
        assert_eq!(r.insert(h(3), 3), Reassembled::Accepted);
        assert_eq!(drain(&mut r), vec![1, 2, 3, 4]);
    }
}
