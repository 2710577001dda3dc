//! Per-path sent-packet bookkeeping and loss detection for the tunnel sender.
//!
//! Loss detection follows RFC 9002 section 6.1 (as quinn-proto and the Linux RACK code do): a
//! packet is lost once a packet sent after it on the same path has been acknowledged and either
//! `packet_threshold` (3) later packets were acknowledged, or it was sent more than
//! 9/8 * max(srtt, latest RTT) before now. A retransmission timeout (RFC 6298) covers the tail:
//! when no feedback acknowledges anything for an RTO, every outstanding packet is declared lost.
//! In an unreliable tunnel (DCCP-like) a lost packet is only news for the congestion
//! controller. In a reliable or partially reliable one ([`super::Reliability`]) the tracker
//! keeps a copy of each packet ([`Retained`]) until it is acknowledged, and a lost packet waits
//! in a retransmission queue to be sent again on the same path with the same path sequence
//! number (TCP-like, so the receiver can reassemble the path in order). A retransmitted packet
//! cannot be judged by the packet threshold, since every later sequence number was
//! acknowledged long ago; as in RACK (RFC 8985 section 6.2), it is lost once a packet *sent*
//! after it was acknowledged and it has been outstanding for the loss delay.
//!
//! RTT samples follow RFC 9002 section 5.1: when feedback newly acknowledges the largest path
//! sequence number so far, `latest_rtt = now - time that packet was transmitted - hold time`
//! (the receiver's `ack_delay`; it holds for the newest packet, which on a FIFO path is the
//! largest). The transmission time is the tracker's own, not the header's timestamp, which is
//! taken earlier, at scheduling (see [`crate::wire::DataHeader::send_ts_ns`]).

use std::collections::VecDeque;
use std::time::Duration;

use crate::cc::{AckEvent, CongestionEvent, RateSample};
use crate::path::{CwndUsage, DeliveryRateEstimator, PacketRateInfo, RttEstimator};
use crate::time::Instant;
use crate::wire::Feedback;

/// RFC 9002 section 6.1.2: time threshold 9/8 of the RTT.
const TIME_THRESHOLD_NUM: u32 = 9;
const TIME_THRESHOLD_DEN: u32 = 8;
/// RFC 9002 section 6.1.2: the loss delay is at least the timer granularity.
const LOSS_DELAY_GRANULARITY: Duration = Duration::from_millis(1);
/// RTO backoff stops doubling here (RFC 6298 section 5.5 allows a cap).
const MAX_RTO_BACKOFF_SHIFT: u32 = 6;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Outstanding,
    Acked,
    /// Lost for good.
    Lost,
    /// Lost, and queued to be sent again.
    AwaitingRetransmission,
}

/// What a retransmitting path keeps of a packet until it is acknowledged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Retained<P> {
    pub payload: P,
    pub len: u32,
    pub global_seq: u64,
    /// When the packet was first scheduled (its first header timestamp).
    pub scheduled_at: Instant,
}

#[derive(Clone, Copy, Debug)]
struct SentPacket {
    sent_time: Instant,
    charge: u64,
    rate: PacketRateInfo,
    state: State,
    retransmitted: bool,
    /// Retransmissions so far (saturating).
    attempts: u8,
    global_seq: u64,
}

/// What processing one feedback frame produced for the controller.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FeedbackOutcome {
    pub ack: Option<AckEvent>,
    pub congestion: Option<CongestionEvent>,
    pub newly_lost_pkts: u64,
    /// The highest global sequence number among the packets this feedback acknowledged first:
    /// the receiver has seen at least that far.
    pub largest_acked_global: Option<u64>,
}

/// Sent packets of one path in path-sequence order, from the oldest outstanding one.
#[derive(Debug)]
pub(crate) struct SentTracker<P> {
    /// Path sequence number of `sent[0]`.
    front_seq: u64,
    sent: VecDeque<SentPacket>,
    /// The kept copies, index-aligned with `sent`, on retransmitting paths only (empty
    /// otherwise, so an unreliable path's per-packet record stays small).
    copies: VecDeque<Option<Retained<P>>>,
    retain: bool,
    /// Charged bytes outstanding on the network (not acknowledged, not declared lost).
    pub(crate) outstanding_bytes: u64,
    /// Path sequence numbers waiting to be sent again, oldest first; entries whose packet was
    /// acknowledged meanwhile are skipped when read.
    resend: VecDeque<u64>,
    /// Charged bytes waiting to be sent again.
    pub(crate) resend_bytes: u64,
    largest_acked: Option<u64>,
    /// Send time of the most recently sent packet acknowledged so far (RACK's `xmit_ts`).
    largest_acked_sent_time: Option<Instant>,
    pub(crate) rtt: RttEstimator,
    pub(crate) rate: DeliveryRateEstimator,
    /// Whether the path's window was used, for the controller's growth (Linux
    /// `tcp_cwnd_validate`).
    usage: CwndUsage,
    /// Earliest time an outstanding packet crosses the time threshold.
    loss_time: Option<Instant>,
    last_progress: Instant,
    rto_backoff: u32,
    packet_threshold: u64,
}

impl<P> SentTracker<P> {
    /// `retain`: the path retransmits, so [`SentTracker::on_sent`] is given a copy of every
    /// packet.
    pub(crate) fn new(
        min_rto: Duration,
        packet_threshold: u64,
        capacity: usize,
        retain: bool,
    ) -> Self {
        SentTracker {
            front_seq: 0,
            sent: VecDeque::with_capacity(capacity),
            copies: VecDeque::with_capacity(if retain { capacity } else { 0 }),
            retain,
            outstanding_bytes: 0,
            resend: VecDeque::with_capacity(capacity),
            resend_bytes: 0,
            largest_acked: None,
            largest_acked_sent_time: None,
            rtt: RttEstimator::new(min_rto),
            rate: DeliveryRateEstimator::new(),
            usage: CwndUsage::new(),
            loss_time: None,
            last_progress: Instant::ZERO,
            rto_backoff: 0,
            packet_threshold,
        }
    }

    /// Records the departure of `path_seq` (always the next sequence number) carrying
    /// `global_seq`, keeping `retained` for a retransmission if the path retransmits.
    pub(crate) fn on_sent(
        &mut self,
        now: Instant,
        path_seq: u64,
        global_seq: u64,
        charge: u64,
        retained: Option<Retained<P>>,
    ) {
        debug_assert_eq!(path_seq, self.front_seq + self.sent.len() as u64);
        if self.outstanding_bytes == 0 {
            self.last_progress = now;
        }
        let rate = self.rate.on_sent(now, self.outstanding_bytes, self.outstanding_bytes + charge);
        self.sent.push_back(SentPacket {
            sent_time: now,
            charge,
            rate,
            state: State::Outstanding,
            retransmitted: false,
            attempts: 0,
            global_seq,
        });
        debug_assert_eq!(self.retain, retained.is_some());
        if self.retain {
            self.copies.push_back(retained);
        }
        self.outstanding_bytes += charge;
    }

    /// After new data left: whether the flight now fills `cwnd_bytes` (no room for one more
    /// `mss_bytes` packet), recorded per window of data as Linux's `tcp_cwnd_validate` does
    /// ([`CwndUsage`]). The oldest unsettled packet stands for `snd_una`.
    pub(crate) fn on_window_use(&mut self, cwnd_bytes: u64, mss_bytes: u64) {
        let next_seq = self.front_seq + self.sent.len() as u64;
        self.usage.on_sent(self.outstanding_bytes, cwnd_bytes, mss_bytes, self.front_seq, next_seq);
    }

    /// The largest path sequence number acknowledged so far.
    pub(crate) fn largest_acked(&self) -> Option<u64> {
        self.largest_acked
    }

    /// Whether packets wait to be sent again (possibly stale entries; see `next_resend`).
    pub(crate) fn has_resend(&self) -> bool {
        !self.resend.is_empty()
    }

    /// The oldest packet waiting to be sent again: its path sequence number, charge and copy.
    pub(crate) fn next_resend(&mut self) -> Option<(u64, u64, &Retained<P>)> {
        while let Some(&seq) = self.resend.front() {
            let idx = seq.checked_sub(self.front_seq).map(|i| i as usize);
            match idx.and_then(|i| self.sent.get(i)) {
                Some(p) if p.state == State::AwaitingRetransmission => break,
                _ => {
                    self.resend.pop_front();
                }
            }
        }
        let seq = *self.resend.front()?;
        let idx = (seq - self.front_seq) as usize;
        Some((seq, self.sent[idx].charge, self.copies.get(idx)?.as_ref()?))
    }

    /// `path_seq`, the packet [`SentTracker::next_resend`] returned, leaves again now; returns
    /// how many times it has been sent again, this time included (saturating at 255).
    pub(crate) fn on_retransmit(&mut self, now: Instant, path_seq: u64) -> u8 {
        self.resend.pop_front();
        if self.outstanding_bytes == 0 {
            self.last_progress = now;
        }
        let idx = (path_seq - self.front_seq) as usize;
        let charge = self.sent[idx].charge;
        let rate = self.rate.on_sent(now, self.outstanding_bytes, self.outstanding_bytes + charge);
        let p = &mut self.sent[idx];
        debug_assert_eq!(p.state, State::AwaitingRetransmission);
        p.state = State::Outstanding;
        p.retransmitted = true;
        p.attempts = p.attempts.saturating_add(1);
        p.sent_time = now;
        p.rate = rate;
        self.resend_bytes -= p.charge;
        self.outstanding_bytes += p.charge;
        p.attempts
    }

    /// Gives up `path_seq`, the packet [`SentTracker::next_resend`] returned: lost for good.
    pub(crate) fn expire(&mut self, path_seq: u64) {
        self.resend.pop_front();
        let idx = (path_seq - self.front_seq) as usize;
        let p = &mut self.sent[idx];
        p.state = State::Lost;
        self.resend_bytes -= p.charge;
        self.copies[idx] = None;
        self.pop_settled();
    }

    /// The path failed: every packet still on it (outstanding, or already waiting to be sent
    /// again) is declared lost and queued to be sent again *on this path* once it returns, as
    /// at an RTO: a reliable path's receiver hands its packets on strictly in path order
    /// (reassembly.rs), so the path's own stream must be made whole whatever else carries the
    /// data. A copy of each is returned, oldest first, for the other paths to carry now; the
    /// receiver drops whichever copy arrives second. An unreliable path keeps no copies:
    /// nothing comes back and its packets are lost with it. Timers stop until the path sends
    /// again.
    pub(crate) fn failover(&mut self) -> Vec<Retained<P>>
    where
        P: Clone,
    {
        self.rate.on_lost(self.outstanding_bytes);
        for idx in 0..self.sent.len() {
            if self.sent[idx].state == State::Outstanding {
                self.mark_lost(idx);
            }
        }
        self.loss_time = None;
        let out = self
            .sent
            .iter()
            .zip(&self.copies)
            .filter(|(p, _)| p.state == State::AwaitingRetransmission)
            .filter_map(|(_, c)| c.clone())
            .collect();
        self.pop_settled();
        out
    }

    /// Declares an outstanding packet lost: queued to be sent again if a copy was kept.
    fn mark_lost(&mut self, idx: usize) {
        let seq = self.front_seq + idx as u64;
        let kept = self.copies.get(idx).is_some_and(Option::is_some);
        let p = &mut self.sent[idx];
        self.outstanding_bytes -= p.charge;
        if kept {
            p.state = State::AwaitingRetransmission;
            self.resend_bytes += p.charge;
            self.resend.push_back(seq);
        } else {
            p.state = State::Lost;
        }
    }

    /// Applies one feedback frame.
    pub(crate) fn on_feedback(&mut self, now: Instant, fb: &Feedback) -> FeedbackOutcome {
        let prior_in_flight = self.outstanding_bytes;
        let mut newly_acked = 0u64;
        let mut largest_newly_acked: Option<(u64, Instant, bool)> = None;
        let mut largest_acked_global: Option<u64> = None;
        let end_seq = self.front_seq + self.sent.len() as u64;
        for range in fb.ranges.as_slice() {
            if range.largest < self.front_seq || range.smallest >= end_seq {
                continue;
            }
            let lo = range.smallest.max(self.front_seq);
            let hi = range.largest.min(end_seq - 1);
            for seq in lo..=hi {
                let idx = (seq - self.front_seq) as usize;
                let p = &mut self.sent[idx];
                if p.state != State::Acked {
                    largest_acked_global = largest_acked_global.max(Some(p.global_seq));
                }
                match p.state {
                    State::Outstanding => {
                        p.state = State::Acked;
                        if let Some(c) = self.copies.get_mut(idx) {
                            *c = None;
                        }
                        self.outstanding_bytes -= p.charge;
                        newly_acked += p.charge;
                        let (info, sent_time, retx) = (p.rate, p.sent_time, p.retransmitted);
                        self.rate.on_delivered(now, p.charge, &info);
                        if largest_newly_acked.is_none_or(|(s, _, _)| seq > s) {
                            largest_newly_acked = Some((seq, sent_time, retx));
                        }
                        if self.largest_acked_sent_time.is_none_or(|t| sent_time > t) {
                            self.largest_acked_sent_time = Some(sent_time);
                        }
                    }
                    State::Lost => {
                        // Spuriously declared lost; it arrived after all. It left in-flight
                        // when it was declared lost, so nothing more to account.
                        p.state = State::Acked;
                    }
                    State::AwaitingRetransmission => {
                        // The original arrived before its retransmission left: no need to send.
                        p.state = State::Acked;
                        if let Some(c) = self.copies.get_mut(idx) {
                            *c = None;
                        }
                        self.resend_bytes -= p.charge;
                    }
                    State::Acked => {}
                }
            }
        }
        let Some((largest_seq, largest_sent_time, largest_retransmitted)) = largest_newly_acked
        else {
            self.pop_settled();
            return FeedbackOutcome {
                ack: None,
                congestion: None,
                newly_lost_pkts: 0,
                largest_acked_global,
            };
        };
        let mut rtt_sample = None;
        if self.largest_acked.is_none_or(|l| largest_seq > l) {
            self.largest_acked = Some(largest_seq);
        }
        // Karn: an acknowledged retransmission does not say which copy arrived.
        if !largest_retransmitted && self.largest_acked == Some(largest_seq) {
            let elapsed = now.nanos_since(largest_sent_time);
            if elapsed > fb.hold_time_ns {
                let r = Duration::from_nanos(elapsed - fb.hold_time_ns);
                self.rtt.update(r);
                rtt_sample = Some(r);
            }
        }
        self.last_progress = now;
        self.rto_backoff = 0;
        let (lost_pkts, lost_bytes, largest_lost_sent) = self.detect_lost(now);
        self.pop_settled();
        let min_rtt = self.rtt.min_rtt();
        let rate: Option<RateSample> = self.rate.take_sample(min_rtt);
        let congestion = largest_lost_sent.map(|t| CongestionEvent {
            now,
            largest_lost_sent_time: t,
            lost_bytes,
            in_flight_bytes: self.outstanding_bytes,
        });
        let ack = AckEvent {
            now,
            newly_acked_bytes: newly_acked,
            newly_lost_bytes: lost_bytes,
            largest_acked_sent_time: largest_sent_time,
            rtt: rtt_sample,
            min_rtt,
            prior_in_flight_bytes: prior_in_flight,
            in_flight_bytes: self.outstanding_bytes,
            delivered_bytes: self.rate.delivered(),
            rate,
            app_limited: rate.is_some_and(|r| r.is_app_limited),
            cwnd_limited: self.usage.is_cwnd_limited(),
            max_in_flight_bytes: self.usage.max_in_flight_bytes(),
        };
        FeedbackOutcome {
            ack: Some(ack),
            congestion,
            newly_lost_pkts: lost_pkts,
            largest_acked_global,
        }
    }

    fn loss_delay(&self) -> Duration {
        let rtt = self.rtt.srtt().unwrap_or(self.rtt.latest()).max(self.rtt.latest());
        (rtt * TIME_THRESHOLD_NUM / TIME_THRESHOLD_DEN).max(LOSS_DELAY_GRANULARITY)
    }

    /// RFC 9002 section 6.1: declares lost the outstanding packets sent before the largest
    /// acknowledged one that crossed the packet or time threshold. Returns (packets, charged
    /// bytes, send time of the newest lost packet).
    fn detect_lost(&mut self, now: Instant) -> (u64, u64, Option<Instant>) {
        self.loss_time = None;
        let Some(largest) = self.largest_acked else { return (0, 0, None) };
        let loss_delay = self.loss_delay();
        // Packets sent at or before this instant crossed the time threshold; none did while
        // less than one loss delay has passed since the driver's epoch.
        let lost_send_before = now.as_nanos().checked_sub(crate::time::duration_nanos(loss_delay));
        let (mut pkts, mut bytes, mut newest) = (0, 0, None);
        let end = largest.saturating_sub(self.front_seq).min(self.sent.len() as u64) as usize;
        for i in 0..end {
            let seq = self.front_seq + i as u64;
            let p = &self.sent[i];
            if p.state != State::Outstanding {
                continue;
            }
            let too_old = lost_send_before.is_some_and(|t| p.sent_time.as_nanos() <= t);
            let lost = if p.retransmitted {
                // RACK: only once something sent after it was acknowledged.
                if self.largest_acked_sent_time.is_none_or(|t| t <= p.sent_time) {
                    continue;
                }
                too_old
            } else {
                too_old || seq + self.packet_threshold <= largest
            };
            if lost {
                pkts += 1;
                bytes += p.charge;
                newest = Some(p.sent_time);
                self.mark_lost(i);
            } else {
                let t = p.sent_time + loss_delay;
                self.loss_time = Some(self.loss_time.map_or(t, |l| l.min(t)));
            }
        }
        self.rate.on_lost(bytes);
        (pkts, bytes, newest)
    }

    fn pop_settled(&mut self) {
        while self.sent.front().is_some_and(|p| matches!(p.state, State::Acked | State::Lost)) {
            self.sent.pop_front();
            self.copies.pop_front();
            self.front_seq += 1;
        }
    }

    /// Current retransmission timeout with backoff.
    fn rto(&self) -> Duration {
        match self.rto_backoff {
            0 => self.rtt.rto(),
            n => self.rtt.rto() * (1u32 << n.min(MAX_RTO_BACKOFF_SHIFT)),
        }
    }

    /// Earliest timer: the time-threshold loss timer or the RTO.
    pub(crate) fn timeout(&self) -> Option<Instant> {
        if self.outstanding_bytes == 0 {
            return None;
        }
        let rto = self.last_progress + self.rto();
        Some(self.loss_time.map_or(rto, |l| l.min(rto)))
    }

    /// Fires due timers. Returns the congestion event of a time-threshold loss, and whether an
    /// RTO fired (every outstanding packet declared lost).
    pub(crate) fn on_timeout(&mut self, now: Instant) -> (Option<CongestionEvent>, bool, u64) {
        if self.loss_time.is_some_and(|t| t <= now) {
            let (pkts, bytes, newest) = self.detect_lost(now);
            self.pop_settled();
            let ev = newest.map(|t| CongestionEvent {
                now,
                largest_lost_sent_time: t,
                lost_bytes: bytes,
                in_flight_bytes: self.outstanding_bytes,
            });
            return (ev, false, pkts);
        }
        if self.outstanding_bytes > 0 && self.last_progress + self.rto() <= now {
            self.rate.on_lost(self.outstanding_bytes);
            let mut pkts = 0;
            for i in 0..self.sent.len() {
                if self.sent[i].state == State::Outstanding {
                    self.mark_lost(i);
                    pkts += 1;
                }
            }
            debug_assert_eq!(self.outstanding_bytes, 0);
            self.loss_time = None;
            self.rto_backoff += 1;
            self.last_progress = now;
            self.pop_settled();
            return (None, true, pkts);
        }
        (None, false, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{AckRange, AckRanges};

    fn ms(v: u64) -> Instant {
        Instant::from_nanos(v * 1_000_000)
    }

    fn feedback(ranges: &[(u64, u64)], echo_ms: u64) -> Feedback {
        let mut r = AckRanges::new();
        for &(smallest, largest) in ranges {
            assert!(r.push(AckRange { smallest, largest }));
        }
        Feedback { path_id: 0, ranges: r, echo_ts_ns: ms(echo_ms).as_nanos(), hold_time_ns: 0 }
    }

    #[test]
    fn acks_measure_rtt_from_the_transmission_time_minus_hold_time() {
        // Scheduled at 3 ms (the header timestamp the receiver echoes), transmitted at 10 ms
        // after waiting for pacing, acknowledged at 52 ms after a 2 ms hold: the RTT is 40 ms,
        // not the 47 ms the echo would give.
        let mut t: SentTracker<()> = SentTracker::new(Duration::from_millis(200), 3, 16, false);
        t.on_sent(ms(10), 0, 0, 1000, None);
        let mut fb = feedback(&[(0, 0)], 3);
        fb.hold_time_ns = 2_000_000;
        let out = t.on_feedback(ms(52), &fb);
        assert_eq!(t.rtt.srtt(), Some(Duration::from_millis(40)));
        assert_eq!(out.ack.unwrap().rtt, Some(Duration::from_millis(40)));
        assert_eq!(out.ack.unwrap().newly_acked_bytes, 1000);
        assert_eq!(t.outstanding_bytes, 0);
    }

    #[test]
    fn third_later_ack_declares_a_hole_lost() {
        let mut t: SentTracker<()> = SentTracker::new(Duration::from_millis(200), 3, 16, false);
        for seq in 0..5 {
            t.on_sent(ms(seq), seq, seq, 1000, None);
        }
        // Packet 0 missing, 1..=2 acked: not yet lost (only two later packets acked).
        let out = t.on_feedback(ms(21), &feedback(&[(1, 2)], 2));
        assert!(out.congestion.is_none());
        let out = t.on_feedback(ms(22), &feedback(&[(1, 3)], 3));
        let ev = out.congestion.expect("packet 0 crosses the packet threshold");
        assert_eq!(ev.lost_bytes, 1000);
        assert_eq!(ev.largest_lost_sent_time, ms(0));
        assert_eq!(out.newly_lost_pkts, 1);
        assert_eq!(t.outstanding_bytes, 1000); // packet 4
    }

    #[test]
    fn time_threshold_declares_loss_via_the_timer() {
        let mut t: SentTracker<()> = SentTracker::new(Duration::from_millis(200), 3, 16, false);
        t.on_sent(ms(0), 0, 0, 1000, None);
        t.on_sent(ms(1), 1, 1, 1000, None);
        let out = t.on_feedback(ms(21), &feedback(&[(1, 1)], 1));
        assert!(out.congestion.is_none());
        // loss delay = 9/8 * 20 ms = 22.5 ms after packet 0 was sent.
        let deadline = t.timeout().unwrap();
        assert_eq!(deadline, Instant::from_nanos(22_500_000));
        let (ev, rto, pkts) = t.on_timeout(deadline);
        assert!(ev.is_some() && !rto);
        assert_eq!(pkts, 1);
        assert_eq!(t.timeout(), None);
    }

    #[test]
    fn rto_declares_the_whole_flight_lost_and_backs_off() {
        let mut t: SentTracker<()> = SentTracker::new(Duration::from_millis(200), 3, 16, false);
        t.on_sent(ms(0), 0, 0, 1000, None);
        t.on_sent(ms(0), 1, 1, 1000, None);
        // No RTT sample yet: initial RTO of 1 s.
        assert_eq!(t.timeout(), Some(ms(1000)));
        let (_, rto, pkts) = t.on_timeout(ms(1000));
        assert!(rto);
        assert_eq!(pkts, 2);
        assert_eq!(t.outstanding_bytes, 0);
        t.on_sent(ms(1000), 2, 2, 1000, None);
        assert_eq!(t.timeout(), Some(ms(3000)), "backoff doubles the RTO");
    }

    #[test]
    fn repeated_feedback_does_not_double_count() {
        let mut t: SentTracker<()> = SentTracker::new(Duration::from_millis(200), 3, 16, false);
        t.on_sent(ms(0), 0, 0, 1000, None);
        t.on_sent(ms(0), 1, 1, 1000, None);
        let fb = feedback(&[(0, 1)], 0);
        assert!(t.on_feedback(ms(20), &fb).ack.is_some());
        assert!(t.on_feedback(ms(21), &fb).ack.is_none());
        assert_eq!(t.rate.delivered(), 2000);
    }
}
