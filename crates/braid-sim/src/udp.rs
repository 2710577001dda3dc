//! A greedy UDP source: sends fixed-size datagrams back to back at a rate cap until it has
//! offered its byte budget. With the cap at or above the access capacity it is "as fast as the
//! access allows": the excess is dropped at the first full queue, as a real greedy UDP sender's
//! would be.

use braid_core::time::transmission_time;
use braid_core::Instant;

#[derive(Debug)]
pub struct UdpSource {
    packet_bytes: u32,
    rate_bytes_per_s: u64,
    remaining_bytes: u64,
    next_send: Instant,
    sent_pkts: u64,
}

impl UdpSource {
    pub fn new(packet_bytes: u32, rate_bytes_per_s: u64, total_bytes: u64) -> Self {
        UdpSource {
            packet_bytes,
            rate_bytes_per_s,
            remaining_bytes: total_bytes,
            next_send: Instant::ZERO,
            sent_pkts: 0,
        }
    }

    /// The size of the next datagram due at `now`, if any.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<u32> {
        if self.remaining_bytes == 0 || self.next_send > now {
            return None;
        }
        let len = self.packet_bytes.min(self.remaining_bytes.min(u32::MAX as u64) as u32);
        self.remaining_bytes -= len as u64;
        self.next_send =
            self.next_send.max(now) + transmission_time(len as u64, self.rate_bytes_per_s);
        self.sent_pkts += 1;
        Some(len)
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        (self.remaining_bytes > 0).then_some(self.next_send)
    }

    pub fn is_done(&self) -> bool {
        self.remaining_bytes == 0
    }

    pub fn sent_pkts(&self) -> u64 {
        self.sent_pkts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paces_at_the_cap_and_stops_at_the_budget() {
        // 1000-byte datagrams at 1 MB/s: one per ms; 3500 bytes = 4 datagrams.
        let mut s = UdpSource::new(1000, 1_000_000, 3500);
        let ms = |v: u64| Instant::from_nanos(v * 1_000_000);
        assert_eq!(s.poll_transmit(ms(0)), Some(1000));
        assert_eq!(s.poll_transmit(ms(0)), None);
        assert_eq!(s.poll_timeout(), Some(ms(1)));
        assert_eq!(s.poll_transmit(ms(1)), Some(1000));
        assert_eq!(s.poll_transmit(ms(2)), Some(1000));
        assert_eq!(s.poll_transmit(ms(3)), Some(500));
        assert!(s.is_done());
        assert_eq!(s.poll_timeout(), None);
    }
}
