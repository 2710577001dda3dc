//! Delivery-rate estimation, draft-cheng-iccrg-delivery-rate-estimation-02 (Linux
//! `net/ipv4/tcp_rate.c`): each sent packet remembers how much had been delivered when it left;
//! when it is acknowledged, the bytes delivered since then over the elapsed time give a rate
//! sample. The interval is the larger of the send and ACK intervals, so neither ACK compression
//! nor bursty sending overestimates the rate.
//!
//! For BBRv2/v3 each packet also remembers the data in flight when it left (`P.tx_in_flight`)
//! and the total declared lost so far (`P.lost`), so that its ACK can tell how much was lost
//! out of the flight it belonged to (draft-ietf-ccwg-bbr section "Per-packet (P) state";
//! Linux `tcp_rate_skb_sent` / `tcp_rate_gen`, `tx.in_flight` and `tx.lost`). The caller
//! reports losses with [`DeliveryRateEstimator::on_lost`].

use std::time::Duration;

use crate::time::Instant;

/// A delivery-rate sample, as defined by draft-cheng-iccrg-delivery-rate-estimation section 3.3
/// (Linux `struct rate_sample`). Produced by [`DeliveryRateEstimator`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateSample {
    /// Charged bytes delivered over `interval`.
    pub delivered_bytes: u64,
    /// Sampling interval: max(send elapsed, ack elapsed).
    pub interval: Duration,
    /// `C.delivered` when the packet that produced this sample was sent.
    pub prior_delivered_bytes: u64,
    /// Whether the packet that produced this sample was sent while the sender was app-limited.
    pub is_app_limited: bool,
    /// Charged bytes in flight just after that packet was sent, itself included (the BBR
    /// draft's `RS.tx_in_flight`, Linux `rs->tx_in_flight`). BBRv2/v3 compare losses with it
    /// and raise `inflight_hi` to it.
    pub tx_in_flight_bytes: u64,
    /// Charged bytes declared lost between that packet's transmission and this ACK (`RS.lost`,
    /// Linux `rs->lost`): the losses out of the flight above, so `lost_bytes /
    /// tx_in_flight_bytes` is the loss rate over the packet's round trip.
    pub lost_bytes: u64,
}

impl RateSample {
    /// Delivery rate in bytes per second, or `None` when the interval is zero.
    pub fn delivery_rate_bytes_per_s(&self) -> Option<u64> {
        let ns = self.interval.as_nanos();
        if ns == 0 {
            return None;
        }
        Some(((self.delivered_bytes as u128 * 1_000_000_000) / ns) as u64)
    }
}

/// What a sent packet must remember for rate sampling (the draft's per-packet `P.*` fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketRateInfo {
    pub delivered: u64,
    pub delivered_time: Instant,
    pub first_sent_time: Instant,
    pub sent_time: Instant,
    pub is_app_limited: bool,
    /// Charged bytes in flight once this packet left, itself included (`P.tx_in_flight`).
    pub tx_in_flight: u64,
    /// `C.lost` when this packet was sent (`P.lost`).
    pub lost: u64,
}

/// The connection-wide rate state (the draft's `C.*` fields) and the sample being built.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeliveryRateEstimator {
    delivered: u64,
    /// Charged bytes declared lost so far (`C.lost`).
    lost: u64,
    delivered_time: Instant,
    first_sent_time: Instant,
    /// Non-zero while app-limited: the `delivered` value that ends the app-limited phase.
    app_limited: u64,
    // Sample under construction for the current ACK.
    has_sample: bool,
    prior_delivered: u64,
    prior_time: Instant,
    send_elapsed: Duration,
    ack_elapsed: Duration,
    sample_app_limited: bool,
    sample_tx_in_flight: u64,
    sample_prior_lost: u64,
}

impl DeliveryRateEstimator {
    pub fn new() -> Self {
        Self::default()
    }

    /// Total charged bytes delivered (`C.delivered`).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// Total charged bytes declared lost (`C.lost`).
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// Records a transmission at `now` (draft 3.2). `in_flight_bytes` is what was outstanding
    /// before it: zero restarts the sampling clocks (Linux tests `packets_out`).
    /// `tx_in_flight_bytes` is the data in flight once it left, itself included (the BBR
    /// draft's `P.tx_in_flight`; Linux `tcp_packets_in_flight() + pcount`). The two differ
    /// for a sender that keeps packets marked lost outstanding until they are repaired.
    pub fn on_sent(
        &mut self,
        now: Instant,
        in_flight_bytes: u64,
        tx_in_flight_bytes: u64,
    ) -> PacketRateInfo {
        if in_flight_bytes == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        PacketRateInfo {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            is_app_limited: self.app_limited != 0,
            tx_in_flight: tx_in_flight_bytes,
            lost: self.lost,
        }
    }

    /// Packets of `bytes` charged bytes in all were declared lost (`C.lost += ...`). Call it
    /// before [`Self::take_sample`] of the ACK that revealed them, so the sample counts them.
    pub fn on_lost(&mut self, bytes: u64) {
        self.lost += bytes;
    }

    /// Marks the sender app-limited: it has nothing to send though the window has room (draft
    /// 3.4). `in_flight_bytes` is what is in flight now.
    pub fn on_app_limited(&mut self, in_flight_bytes: u64) {
        self.app_limited = (self.delivered + in_flight_bytes).max(1);
    }

    /// A packet of `bytes` charged bytes was delivered (acknowledged or selectively
    /// acknowledged) at `now` (draft 3.3, UpdateRateSample).
    pub fn on_delivered(&mut self, now: Instant, bytes: u64, p: &PacketRateInfo) {
        self.delivered += bytes;
        self.delivered_time = now;
        if !self.has_sample || p.delivered > self.prior_delivered {
            self.has_sample = true;
            self.prior_delivered = p.delivered;
            self.prior_time = p.delivered_time;
            self.sample_app_limited = p.is_app_limited;
            self.send_elapsed = p.sent_time.saturating_since(p.first_sent_time);
            self.ack_elapsed = self.delivered_time.saturating_since(p.delivered_time);
            self.first_sent_time = p.sent_time;
            self.sample_tx_in_flight = p.tx_in_flight;
            self.sample_prior_lost = p.lost;
        }
    }

    /// Finishes the sample for this ACK (draft 3.3, GenerateRateSample). Samples whose interval
    /// is shorter than `min_rtt` are discarded, as the draft specifies.
    pub fn take_sample(&mut self, min_rtt: Option<Duration>) -> Option<RateSample> {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if !self.has_sample {
            return None;
        }
        self.has_sample = false;
        let interval = self.send_elapsed.max(self.ack_elapsed);
        if interval.is_zero() || min_rtt.is_some_and(|m| interval < m) {
            return None;
        }
        Some(RateSample {
            delivered_bytes: self.delivered - self.prior_delivered,
            interval,
            prior_delivered_bytes: self.prior_delivered,
            is_app_limited: self.sample_app_limited,
            tx_in_flight_bytes: self.sample_tx_in_flight,
            lost_bytes: self.lost.saturating_sub(self.sample_prior_lost),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_ms(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    #[test]
    fn steady_flow_measures_its_sending_rate() {
        // One 1000-byte packet per ms, each acknowledged 50 ms after it left: 1 MB/s.
        let mut est = DeliveryRateEstimator::new();
        let mut sent: Vec<PacketRateInfo> = Vec::new();
        let mut in_flight = 0;
        let mut last = None;
        for t in 0..200u64 {
            if t >= 50 {
                let p = sent[(t - 50) as usize];
                est.on_delivered(at_ms(t), 1000, &p);
                in_flight -= 1000;
                last = est.take_sample(Some(Duration::from_millis(50)));
            }
            sent.push(est.on_sent(at_ms(t), in_flight, in_flight + 1000));
            in_flight += 1000;
        }
        let s = last.expect("steady-state ACKs give samples");
        assert_eq!(s.interval, Duration::from_millis(50));
        assert_eq!(s.delivered_bytes, 50_000);
        assert_eq!(s.delivery_rate_bytes_per_s(), Some(1_000_000));
        assert!(!s.is_app_limited);
    }

    #[test]
    fn first_flight_is_measured_over_the_whole_round_trip() {
        // Ten packets sent back to back at t=0 and acked together at 50 ms: 10 000 bytes over
        // the ACK interval of 50 ms, not over the zero-length send interval.
        let mut est = DeliveryRateEstimator::new();
        let sent: Vec<_> =
            (0..10u64).map(|i| est.on_sent(at_ms(0), i * 1000, (i + 1) * 1000)).collect();
        for p in &sent {
            est.on_delivered(at_ms(50), 1000, p);
        }
        let s = est.take_sample(Some(Duration::from_millis(50))).unwrap();
        assert_eq!(s.delivery_rate_bytes_per_s(), Some(200_000));
    }

    #[test]
    fn samples_shorter_than_min_rtt_are_discarded() {
        let mut est = DeliveryRateEstimator::new();
        let p = est.on_sent(at_ms(0), 0, 1000);
        est.on_delivered(at_ms(5), 1000, &p);
        assert_eq!(est.take_sample(Some(Duration::from_millis(10))), None);
    }

    #[test]
    fn app_limited_marking_ends_once_the_marked_data_is_delivered() {
        let mut est = DeliveryRateEstimator::new();
        let p1 = est.on_sent(at_ms(0), 0, 1000);
        est.on_app_limited(1000);
        assert!(est.is_app_limited());
        let p2 = est.on_sent(at_ms(1), 1000, 2000);
        assert!(p2.is_app_limited);
        est.on_delivered(at_ms(10), 1000, &p1);
        let _ = est.take_sample(None);
        assert!(est.is_app_limited(), "delivered == mark: still app-limited");
        est.on_delivered(at_ms(11), 1000, &p2);
        let s = est.take_sample(None).unwrap();
        assert!(s.is_app_limited);
        assert!(!est.is_app_limited());
    }

    #[test]
    fn a_sample_carries_its_flight_and_the_losses_declared_during_it() {
        // Three 1000-byte packets back to back: 1000, 2000 and 3000 bytes in flight once each
        // left. The first is declared lost after the second's ACK; the third's ACK reports that
        // 1000 of the 3000 bytes in its flight were lost. A fourth packet, sent after the loss
        // was declared, reports none.
        let mut est = DeliveryRateEstimator::new();
        let _p1 = est.on_sent(at_ms(0), 0, 1000);
        let p2 = est.on_sent(at_ms(0), 1000, 2000);
        let p3 = est.on_sent(at_ms(0), 2000, 3000);
        est.on_delivered(at_ms(50), 1000, &p2);
        assert_eq!(est.take_sample(None).unwrap().lost_bytes, 0);
        est.on_lost(1000);
        est.on_delivered(at_ms(51), 1000, &p3);
        let s = est.take_sample(None).unwrap();
        assert_eq!((s.tx_in_flight_bytes, s.lost_bytes), (3000, 1000));
        assert_eq!(est.lost(), 1000);
        let p4 = est.on_sent(at_ms(50), 0, 1000);
        est.on_delivered(at_ms(100), 1000, &p4);
        let s = est.take_sample(None).unwrap();
        assert_eq!((s.tx_in_flight_bytes, s.lost_bytes), (1000, 0));
    }
}
