//! A one-direction link: a drop-tail FIFO bounded in packets, serialisation at a fixed rate,
//! then a propagation delay line. The FIFO counts packets as Linux `pfifo` does; the packet in
//! service is not in the FIFO. Every frame also carries `framing_bytes` of link-layer header
//! (14 for Ethernet), as `htb` rates count 1514-byte frames (DESIGN.md section 7).
//!
//! Only two events per link are ever pending: the end of the head packet's transmission and
//! the arrival of the first packet on the delay line.

use std::collections::VecDeque;

use braid_core::time::transmission_time;
use braid_core::Instant;

use crate::packet::PktId;

/// Static description of a link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkSpec {
    pub rate_bytes_per_s: u64,
    pub delay_ns: u64,
    pub buffer_pkts: usize,
    pub framing_bytes: u32,
    /// Bernoulli drop probability applied on entry.
    pub loss: f64,
}

/// Counters of one link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub tx_pkts: u64,
    /// Frame bytes serialised (IP length plus framing).
    pub tx_bytes: u64,
    /// Drop-tail drops at the FIFO.
    pub buffer_drops: u64,
    /// Random-loss drops.
    pub loss_drops: u64,
    pub max_queue_pkts: usize,
}

/// What happened to a packet offered to a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueue {
    /// The link was idle: transmission starts now and ends at the given time.
    Started(Instant),
    Queued,
    DroppedBuffer,
    DroppedLoss,
}

#[derive(Debug)]
pub struct Link {
    pub spec: LinkSpec,
    fifo: VecDeque<(PktId, u32)>,
    in_service: Option<(PktId, u32)>,
    delay_line: VecDeque<(Instant, PktId)>,
    pub stats: LinkStats,
}

impl Link {
    pub fn new(spec: LinkSpec) -> Self {
        Link {
            spec,
            fifo: VecDeque::with_capacity(spec.buffer_pkts.min(4096)),
            in_service: None,
            delay_line: VecDeque::with_capacity(256),
            stats: LinkStats::default(),
        }
    }

    fn start(&mut self, now: Instant, id: PktId, ip_len: u32) -> Instant {
        let frame = (ip_len + self.spec.framing_bytes) as u64;
        self.in_service = Some((id, ip_len));
        self.stats.tx_pkts += 1;
        self.stats.tx_bytes += frame;
        now + transmission_time(frame, self.spec.rate_bytes_per_s)
    }

    /// Offers a packet of `ip_len` bytes; `lost` is the outcome of the random-loss draw.
    pub fn enqueue(&mut self, now: Instant, id: PktId, ip_len: u32, lost: bool) -> Enqueue {
        if lost {
            self.stats.loss_drops += 1;
            return Enqueue::DroppedLoss;
        }
        if self.in_service.is_none() {
            return Enqueue::Started(self.start(now, id, ip_len));
        }
        if self.fifo.len() >= self.spec.buffer_pkts {
            self.stats.buffer_drops += 1;
            return Enqueue::DroppedBuffer;
        }
        self.fifo.push_back((id, ip_len));
        self.stats.max_queue_pkts = self.stats.max_queue_pkts.max(self.fifo.len());
        Enqueue::Queued
    }

    /// The head packet finished serialising at `now`. Returns (time of the next transmission
    /// end if another packet started, arrival time of the delay line's new head if the line was
    /// empty).
    pub fn tx_done(&mut self, now: Instant) -> (Option<Instant>, Option<Instant>) {
        let mut arrival_event = None;
        if let Some((id, _)) = self.in_service.take() {
            let at = now.add_nanos(self.spec.delay_ns);
            if self.delay_line.is_empty() {
                arrival_event = Some(at);
            }
            self.delay_line.push_back((at, id));
        }
        let next = self.fifo.pop_front().map(|(id, len)| self.start(now, id, len));
        (next, arrival_event)
    }

    /// Pops the next packet that has arrived by `now`.
    pub fn pop_arrived(&mut self, now: Instant) -> Option<PktId> {
        match self.delay_line.front() {
            Some(&(at, id)) if at <= now => {
                self.delay_line.pop_front();
                Some(id)
            }
            _ => None,
        }
    }

    /// Arrival time of the delay line's head.
    pub fn next_arrival(&self) -> Option<Instant> {
        self.delay_line.front().map(|&(at, _)| at)
    }

    pub fn queue_len(&self) -> usize {
        self.fifo.len()
    }

    /// Every packet on the link: queued, in service, propagating.
    pub fn packets(&self) -> impl Iterator<Item = PktId> + '_ {
        self.fifo
            .iter()
            .map(|&(id, _)| id)
            .chain(self.in_service.map(|(id, _)| id))
            .chain(self.delay_line.iter().map(|&(_, id)| id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> LinkSpec {
        LinkSpec {
            rate_bytes_per_s: 1_000_000,
            delay_ns: 10_000_000,
            buffer_pkts: 2,
            framing_bytes: 0,
            loss: 0.0,
        }
    }

    #[test]
    fn serialises_then_delays_and_drops_at_the_tail() {
        let mut l = Link::new(spec());
        let t0 = Instant::ZERO;
        // 1000 bytes at 1 MB/s = 1 ms.
        assert_eq!(
            l.enqueue(t0, PktId(0), 1000, false),
            Enqueue::Started(Instant::from_nanos(1_000_000))
        );
        assert_eq!(l.enqueue(t0, PktId(1), 1000, false), Enqueue::Queued);
        assert_eq!(l.enqueue(t0, PktId(2), 1000, false), Enqueue::Queued);
        assert_eq!(l.enqueue(t0, PktId(3), 1000, false), Enqueue::DroppedBuffer);
        let (next, arr) = l.tx_done(Instant::from_nanos(1_000_000));
        assert_eq!(next, Some(Instant::from_nanos(2_000_000)));
        assert_eq!(arr, Some(Instant::from_nanos(11_000_000)));
        assert_eq!(l.pop_arrived(Instant::from_nanos(10_999_999)), None);
        assert_eq!(l.pop_arrived(Instant::from_nanos(11_000_000)), Some(PktId(0)));
        assert_eq!(l.stats.buffer_drops, 1);
        assert_eq!(l.packets().count(), 2);
    }
}
