//! The tunnel receiver: per-path feedback and reordered delivery.
//!
//! Feedback follows DCCP's Ack Ratio (RFC 4341 section 6.1.2, ratio 2) with a bound on delay:
//! a path's receiver acknowledges at least every `feedback_every_pkts` packets and no later
//! than `feedback_max_delay` after the oldest unacknowledged arrival. Each frame carries the
//! path's most recent received ranges (QUIC-style, RFC 9000 section 19.3), the send timestamp
//! of the newest packet and how long the receiver held it, so that the sender's RTT sample
//! excludes the feedback delay.
//!
//! A packet the receiver cannot use is acknowledged at once, as TCP acknowledges a duplicate or
//! unacceptable segment immediately (RFC 9293 section 3.10.7.4: "If an incoming segment is not
//! acceptable, an acknowledgment should be sent in reply"; RFC 5681 section 4.2): a path
//! sequence number the path already received (the sender resent it because it missed the
//! acknowledgment, which only a new acknowledgment repairs), or a packet beyond a reliable path's
//! reassembly buffer. Without this, a path whose feedback was lost for longer than its
//! retransmission timeout stalled for good: every backed-off retransmission arrived as a
//! duplicate, and a duplicate alone never made the receiver speak. One such packet makes at most
//! one frame, and packets arriving before the next [`TunnelReceiver::poll_feedback`] share it.
//!
//! On reliable paths ([`super::Reliability::Reliable`]) packets first pass a per-path
//! reassembly buffer ([`super::reassembly`]) that releases them in path order; the reorder
//! buffer sees them when they leave it.

use std::collections::VecDeque;
use std::time::Duration;

use super::config::{Reliability, TunnelConfig};
use super::reassembly::{Reassembled, Reassembly};
use crate::reorder::{Insert, OwdSummary, Released, ReorderBuffer, ReorderStats};
use crate::time::Instant;
use crate::wire::{AckRange, AckRanges, DataHeader, Feedback, TimeSync, MAX_ACK_RANGES};

/// Counters of the receiver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    pub received_pkts: u64,
    /// Packets whose global sequence number was received before (held or already delivered)
    /// or lies below the duplicate window: refused so each is delivered at most once, and
    /// handed back to the caller, who counts them as reorder-queue drops.
    pub duplicate_pkts: u64,
    /// Packets naming a path this tunnel does not have.
    pub unknown_path_pkts: u64,
    /// Packets a reliable path refused because they fell beyond its reassembly buffer (not
    /// acknowledged; the sender sends them again).
    pub reassembly_drops: u64,
    pub feedback_frames: u64,
    pub reorder: ReorderStats,
}

/// Received path sequence numbers, as at most [`MAX_ACK_RANGES`] descending ranges; the
/// oldest range is forgotten when a new one is needed (the sender has declared that hole lost
/// long before).
#[derive(Clone, Copy, Debug, Default)]
struct ReceivedRanges {
    len: usize,
    ranges: [AckRange; MAX_ACK_RANGES],
    /// Every sequence number below this one was received (a reliable path's reassembly
    /// point; 0 otherwise). Always acknowledged, as TCP's cumulative ACK is: a reliable sender
    /// must learn of every delivery, however old, or it resends forever.
    floor: u64,
}

impl ReceivedRanges {
    /// Nothing received yet.
    fn is_empty(&self) -> bool {
        self.len == 0 && self.floor == 0
    }

    /// Records `seq`. Returns false if it was known received already (below the floor or in a
    /// remembered range): a duplicate on this path.
    fn insert(&mut self, seq: u64) -> bool {
        if seq < self.floor {
            return false;
        }
        let rs = &mut self.ranges;
        // Fast path: extends the newest range.
        if self.len > 0 && seq == rs[0].largest + 1 {
            rs[0].largest = seq;
            return true;
        }
        // Find the first range (descending) whose smallest is <= seq + 1.
        let mut i = 0;
        while i < self.len && rs[i].smallest > seq.saturating_add(1) {
            i += 1;
        }
        if i < self.len && rs[i].largest.saturating_add(1) >= seq {
            // Touches or contains range i.
            if seq >= rs[i].smallest && seq <= rs[i].largest {
                return false;
            }
            if seq == rs[i].largest + 1 {
                rs[i].largest = seq;
                if i > 0 && rs[i - 1].smallest == seq + 1 {
                    rs[i - 1].smallest = rs[i].smallest;
                    self.remove(i);
                }
            } else {
                rs[i].smallest = seq;
                if i + 1 < self.len && rs[i + 1].largest + 1 == seq {
                    rs[i].smallest = rs[i + 1].smallest;
                    self.remove(i + 1);
                }
            }
            return true;
        }
        if i > 0 && rs[i - 1].smallest == seq + 1 {
            rs[i - 1].smallest = seq;
            return true;
        }
        // New range at position i.
        if i == MAX_ACK_RANGES {
            return true; // older than everything we remember: not known as a duplicate
        }
        let last = self.len.min(MAX_ACK_RANGES - 1);
        let mut j = last;
        while j > i {
            rs[j] = rs[j - 1];
            j -= 1;
        }
        rs[i] = AckRange { smallest: seq, largest: seq };
        self.len = (self.len + 1).min(MAX_ACK_RANGES);
        true
    }

    /// The highest sequence number recorded: the newest range's top, or below the floor.
    fn largest(&self) -> Option<u64> {
        if self.len > 0 {
            Some(self.ranges[0].largest)
        } else {
            self.floor.checked_sub(1)
        }
    }

    /// Everything below `next` was received: forget the ranges that covers.
    fn advance_floor(&mut self, next: u64) {
        if next <= self.floor {
            return;
        }
        self.floor = next;
        while self.len > 0 && self.ranges[self.len - 1].largest < next {
            self.len -= 1;
        }
    }

    fn remove(&mut self, i: usize) {
        for j in i..self.len - 1 {
            self.ranges[j] = self.ranges[j + 1];
        }
        self.len -= 1;
    }

    fn to_ack_ranges(self) -> AckRanges {
        let mut out = AckRanges::new();
        let mut rs = self.ranges;
        let mut n = self.len;
        if self.floor > 0 {
            if n > 0 && rs[n - 1].smallest <= self.floor {
                rs[n - 1].smallest = 0;
            } else {
                // The cumulative range goes last, in place of the oldest one if all are used.
                n = n.min(MAX_ACK_RANGES - 1);
                rs[n] = AckRange { smallest: 0, largest: self.floor - 1 };
                n += 1;
            }
        }
        for r in &rs[..n] {
            out.push(*r);
        }
        out
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct ReceiverPath {
    ranges: ReceivedRanges,
    unacked_pkts: u32,
    first_unacked_arrival: Instant,
    /// Arrival of the oldest packet not yet acknowledged that calls for feedback at once (a
    /// duplicate or a packet beyond the reassembly buffer; see the module documentation).
    ack_now_since: Option<Instant>,
    newest_send_ts_ns: u64,
    newest_arrival: Instant,
    /// Path sequence number of the newest new packet, for time-sync frames to find it.
    newest_path_seq: Option<u64>,
    /// Reliable paths: one above the last global number the path handed on in order, and one
    /// above the highest it received; while it holds packets back behind a loss, it may still
    /// deliver any global number between the two (the loss itself and what waits behind it).
    repair_from: u64,
    received_to: u64,
}

impl ReceiverPath {
    /// A packet the path cannot use arrived at `now`: feedback falls due at once (RFC 9293
    /// section 3.10.7.4, RFC 5681 section 4.2). The pending frame, if one is already due,
    /// carries it: no more than one frame per such packet.
    fn ack_now(&mut self, now: Instant) {
        self.ack_now_since.get_or_insert(now);
    }

    fn feedback_due_at(&self, max_delay: Duration) -> Option<Instant> {
        let ratio = (self.unacked_pkts > 0).then(|| self.first_unacked_arrival + max_delay);
        match (self.ack_now_since, ratio) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Receiver side of one tunnel direction. See the module documentation.
#[derive(Debug)]
pub struct TunnelReceiver<P> {
    paths: Vec<ReceiverPath>,
    reorder: ReorderBuffer<P>,
    /// Per-path in-order delivery, for reliable paths only.
    reassembly: Vec<Reassembly<P>>,
    /// Duplicates found while a reassembly buffer drained into the reorder buffer.
    rejected: VecDeque<P>,
    feedback_every_pkts: u32,
    feedback_max_delay: Duration,
    /// Reliable paths report what they are repairing to the reorder buffer (its repair wait).
    reports_repairs: bool,
    /// Highest global sequence number received, for expanding compact headers.
    highest_global_seq: Option<u64>,
    stats: ReceiverStats,
}

impl<P> TunnelReceiver<P> {
    pub fn new(config: &TunnelConfig) -> Self {
        let n = config.path_costs.len();
        TunnelReceiver {
            paths: vec![ReceiverPath::default(); n],
            reorder: ReorderBuffer::new(config.reorder.clone(), n),
            reassembly: match config.reliability {
                Reliability::Reliable => {
                    (0..n).map(|_| Reassembly::new(config.reassembly_pkts)).collect()
                }
                _ => Vec::new(),
            },
            rejected: VecDeque::with_capacity(64),
            feedback_every_pkts: config.feedback_every_pkts,
            feedback_max_delay: config.feedback_max_delay,
            reports_repairs: config.reliability == Reliability::Reliable
                && config.reorder.repair_wait.is_some(),
            highest_global_seq: None,
            stats: ReceiverStats::default(),
        }
    }

    /// A data packet arrived. Returns the payload back when it is not accepted: an unknown
    /// path, a global sequence number received before (redundant scheduling sends every packet
    /// on every path; the first copy is delivered, the others come back here), or a packet
    /// beyond a reliable path's reassembly buffer. A duplicate is still acknowledged on its
    /// path: the path did deliver it. A path sequence number the path received before, or one
    /// beyond its reassembly buffer, makes feedback due at once (see the module documentation).
    /// Duplicates found later, when a reliable path's buffer
    /// drains, come back through [`TunnelReceiver::poll_rejected`].
    pub fn handle_data(&mut self, now: Instant, header: &DataHeader, payload: P) -> Option<P> {
        let i = header.path_id as usize;
        let Some(path) = self.paths.get_mut(i) else {
            self.stats.unknown_path_pkts += 1;
            return Some(payload);
        };
        self.stats.received_pkts += 1;
        self.highest_global_seq = self.highest_global_seq.max(Some(header.global_seq));
        let payload = match self.reassembly.get_mut(i) {
            None => Some(payload),
            Some(r) => match r.insert(*header, payload) {
                Reassembled::Accepted => {
                    path.received_to = path.received_to.max(header.global_seq.saturating_add(1));
                    None
                }
                Reassembled::Duplicate(p) => {
                    // Acknowledge it again, at once: the sender resent it because it missed the
                    // first acknowledgment (RFC 9293 section 3.10.7.4, RFC 5681 section 4.2).
                    path.ranges.insert(header.path_seq);
                    path.ack_now(now);
                    self.stats.duplicate_pkts += 1;
                    return Some(p);
                }
                Reassembled::Overflow(p) => {
                    // Not recorded, so the sender sends it again; but answered at once, as TCP
                    // answers a segment outside its window (RFC 9293 section 3.10.7.4), so the
                    // sender hears where the path stands.
                    path.ack_now(now);
                    self.stats.reassembly_drops += 1;
                    return Some(p);
                }
            },
        };
        if path.ranges.insert(header.path_seq) {
            if path.unacked_pkts == 0 {
                path.first_unacked_arrival = now;
            }
            path.unacked_pkts += 1;
            if header.is_stamped() {
                path.newest_send_ts_ns = header.send_ts_ns;
            }
            path.newest_arrival = now;
            path.newest_path_seq = Some(header.path_seq);
        } else {
            // Received on this path before (a partial path's retransmission whose original
            // arrived): the sender missed the acknowledgment, so acknowledge at once (RFC 5681
            // section 4.2). The echoed timestamp and hold time stay the newest new packet's,
            // which the sender's RTT sample pairs with the largest acknowledged number (RFC
            // 9002 section 13.2.5: ack_delay is for the largest acknowledged packet).
            path.ack_now(now);
        }
        let Some(payload) = payload else {
            while let Some((h, p)) = self.reassembly[i].pop_ready() {
                path.ranges.advance_floor(h.path_seq + 1);
                path.repair_from = path.repair_from.max(h.global_seq.saturating_add(1));
                if let Insert::Duplicate(p) = insert(&mut self.reorder, now, i, &h, p) {
                    self.stats.duplicate_pkts += 1;
                    self.rejected.push_back(p);
                }
            }
            if self.reports_repairs {
                let holds_back = self.reassembly[i].len() > 0;
                let window = holds_back.then_some(path.repair_from..path.received_to);
                self.reorder.set_repair_window(i, window);
            }
            return None;
        };
        match insert(&mut self.reorder, now, i, header, payload) {
            Insert::Accepted => None,
            Insert::Duplicate(p) => {
                self.stats.duplicate_pkts += 1;
                Some(p)
            }
        }
    }

    /// Makes feedback for path `i` fall due at once if it has received anything: the data plane
    /// could not send the frames polled so far (a server that has not yet validated the peer's
    /// address on the path drops them). Feedback acknowledges cumulatively, so the next frame
    /// covers what arrived before; without it the sender waits for its retransmission timeout,
    /// which on a packet-counted window leaves the path one packet wide just as a transfer
    /// starts (docs/validation.md, "Cells traced"). Unknown paths are ignored.
    pub fn request_feedback(&mut self, now: Instant, i: usize) {
        if let Some(p) = self.paths.get_mut(i).filter(|p| !p.ranges.is_empty()) {
            p.ack_now(now);
        }
    }

    /// The data plane measured path `i`'s round-trip time (a probe's): the reorder buffer's
    /// first estimate of the paths' delay difference until data arrives on two paths
    /// ([`ReorderBuffer::on_path_rtt_sample`]).
    pub fn on_path_rtt_sample(&mut self, i: usize, rtt: Duration) {
        self.reorder.on_path_rtt_sample(i, rtt);
    }

    /// A time-sync frame ([`TimeSync`]) arrived on path `ts.path_id`: the send timestamp of a
    /// data packet that came without one. It follows that packet on the same path, so it pairs
    /// with the path's newest packet; one that finds another packet there (a loss, or a newer
    /// packet overtook it) gives no sample.
    pub fn handle_time_sync(&mut self, now: Instant, ts: &TimeSync) {
        let i = usize::from(ts.path_id);
        let Some(path) = self.paths.get_mut(i) else { return };
        if path.newest_path_seq != Some(ts.path_seq) {
            return;
        }
        path.newest_send_ts_ns = ts.send_ts_ns;
        self.reorder.sample_delay(now, path.newest_arrival, i, ts.send_ts_ns);
    }

    /// The next path sequence number expected on path `i`: one above the highest it recorded
    /// (and acknowledges), 0 before any. A compact header's truncated number is expanded
    /// around it.
    pub fn expected_path_seq(&self, i: usize) -> u64 {
        self.paths.get(i).and_then(|p| p.ranges.largest()).map_or(0, |h| h.saturating_add(1))
    }

    /// The next global sequence number expected: one above the highest received on any path, 0
    /// before any. A compact header's truncated number is expanded around it.
    pub fn expected_global_seq(&self) -> u64 {
        self.highest_global_seq.map_or(0, |h| h.saturating_add(1))
    }

    /// A feedback frame due at `now`, if any. Call until `None`.
    pub fn poll_feedback(&mut self, now: Instant) -> Option<Feedback> {
        let every = self.feedback_every_pkts;
        let max_delay = self.feedback_max_delay;
        let (i, path) = self.paths.iter_mut().enumerate().find(|(_, p)| {
            p.ack_now_since.is_some()
                || p.unacked_pkts > 0
                    && (p.unacked_pkts >= every || p.first_unacked_arrival + max_delay <= now)
        })?;
        path.unacked_pkts = 0;
        path.ack_now_since = None;
        self.stats.feedback_frames += 1;
        Some(Feedback {
            path_id: i as u8,
            ranges: path.ranges.to_ack_ranges(),
            echo_ts_ns: path.newest_send_ts_ns,
            hold_time_ns: now.nanos_since(path.newest_arrival),
        })
    }

    /// The next packet released for delivery to the application. Call until `None`.
    pub fn poll_deliver(&mut self, now: Instant) -> Option<Released<P>> {
        self.reorder.poll_release(now)
    }

    /// Earliest time a feedback frame or a reorder release falls due.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let fb = self.paths.iter().filter_map(|p| p.feedback_due_at(self.feedback_max_delay)).min();
        match (fb, self.reorder.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Packets held in the reorder buffer.
    pub fn reorder_len(&self) -> usize {
        self.reorder.len()
    }

    /// Packets held in the reorder buffer and in reliable paths' reassembly buffers.
    pub fn held_len(&self) -> usize {
        self.reorder.len() + self.reassembly.iter().map(Reassembly::len).sum::<usize>()
    }

    /// A packet refused after [`TunnelReceiver::handle_data`] returned (a duplicate found when
    /// a reliable path's reassembly buffer drained). Call until `None` after each arrival.
    pub fn poll_rejected(&mut self) -> Option<P> {
        self.rejected.pop_front()
    }

    /// The reorder buffer's current wait limit.
    pub fn wait_limit(&self) -> Duration {
        self.reorder.wait_limit()
    }

    /// Path `i`'s one-way delays as this receiver sampled them, summarised.
    pub fn path_owd(&self, i: usize) -> Option<OwdSummary> {
        self.reorder.path_owd(i)
    }

    pub fn stats(&self) -> ReceiverStats {
        ReceiverStats { reorder: self.reorder.stats(), ..self.stats }
    }
}

/// Hands a packet to the reorder stage with its send timestamp, or without one when its header
/// says it came without ([`crate::wire::FLAG_UNSTAMPED`]).
fn insert<P>(
    reorder: &mut ReorderBuffer<P>,
    now: Instant,
    path: usize,
    header: &DataHeader,
    payload: P,
) -> Insert<P> {
    if header.is_stamped() {
        reorder.insert(now, path, header.global_seq, header.send_ts_ns, payload)
    } else {
        reorder.insert_unstamped(now, path, header.global_seq, payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(r: &ReceivedRanges) -> Vec<(u64, u64)> {
        r.ranges[..r.len].iter().map(|r| (r.smallest, r.largest)).collect()
    }

    #[test]
    fn received_ranges_merge_and_stay_descending() {
        let mut r = ReceivedRanges::default();
        for s in [0, 1, 2, 5, 6, 9] {
            r.insert(s);
        }
        assert_eq!(ranges(&r), vec![(9, 9), (5, 6), (0, 2)]);
        r.insert(4);
        r.insert(3);
        assert_eq!(ranges(&r), vec![(9, 9), (0, 6)]);
        r.insert(8);
        r.insert(7);
        assert_eq!(ranges(&r), vec![(0, 9)]);
        r.insert(5);
        assert_eq!(ranges(&r), vec![(0, 9)]);
    }

    #[test]
    fn redundant_copies_are_delivered_once_and_handed_back() {
        use crate::reorder::{ReorderConfig, ReorderKind};
        for kind in [ReorderKind::None, ReorderKind::Static, ReorderKind::Adaptive] {
            let config = TunnelConfig {
                reorder: ReorderConfig { kind, ..ReorderConfig::default() },
                ..TunnelConfig::default()
            };
            let mut rx: TunnelReceiver<u32> = TunnelReceiver::new(&config);
            let header = |path_id: u8, global_seq: u64| DataHeader {
                flags: 0,
                path_id,
                payload_len: 100,
                global_seq,
                path_seq: global_seq,
                send_ts_ns: 0,
            };
            let now = Instant::from_nanos(1_000_000);
            let mut delivered = Vec::new();
            // Each of 0..3 on path 0, then on path 1: the second copies come back.
            for seq in 0..3 {
                assert_eq!(rx.handle_data(now, &header(0, seq), seq as u32), None, "{kind:?}");
                delivered.extend(std::iter::from_fn(|| rx.poll_deliver(now)).map(|r| r.payload));
            }
            for seq in 0..3 {
                let payload = 10 + seq as u32;
                assert_eq!(rx.handle_data(now, &header(1, seq), payload), Some(payload));
            }
            delivered.extend(std::iter::from_fn(|| rx.poll_deliver(now)).map(|r| r.payload));
            assert_eq!(delivered, vec![0, 1, 2], "{kind:?}");
            let s = rx.stats();
            assert_eq!((s.received_pkts, s.duplicate_pkts, s.reorder.duplicates), (6, 3, 3));
            // Both paths acknowledge what they carried, duplicates included.
            let fb: Vec<_> = std::iter::from_fn(|| rx.poll_feedback(now)).collect();
            assert_eq!(fb.len(), 2);
            for (f, path_id) in fb.iter().zip([0, 1]) {
                let r: Vec<(u64, u64)> = f.ranges.iter().map(|r| (r.smallest, r.largest)).collect();
                assert_eq!((f.path_id, r), (path_id, vec![(0, 2)]), "{kind:?}");
            }
        }
    }

    /// Path 0 loses global 1 (its path sequence 1) and repairs it at 50 ms; path 1 delivers
    /// global 2 at 1 ms, which waits for 1. Returns the delivered numbers and how many gaps
    /// were given up.
    fn loss_repaired_at_50_ms(repair_wait: Option<Duration>) -> (Vec<u64>, u64) {
        use crate::reorder::{ReorderConfig, ReorderKind};
        let config = TunnelConfig {
            reliability: Reliability::Reliable,
            reorder: ReorderConfig {
                kind: ReorderKind::Static,
                static_wait: Duration::from_millis(10),
                repair_wait,
                ..ReorderConfig::default()
            },
            ..TunnelConfig::default()
        };
        let mut rx: TunnelReceiver<u64> = TunnelReceiver::new(&config);
        let header = |path_id: u8, path_seq: u64, global_seq: u64| DataHeader {
            flags: 0,
            path_id,
            payload_len: 100,
            global_seq,
            path_seq,
            send_ts_ns: 0,
        };
        let mut delivered = Vec::new();
        let mut at = |rx: &mut TunnelReceiver<u64>, ms: u64, h: Option<DataHeader>| {
            let now = Instant::from_nanos(ms * 1_000_000);
            if let Some(h) = h {
                assert_eq!(rx.handle_data(now, &h, h.global_seq), None);
            }
            delivered.extend(std::iter::from_fn(|| rx.poll_deliver(now)).map(|r| r.payload));
        };
        at(&mut rx, 0, Some(header(0, 0, 0)));
        at(&mut rx, 1, Some(header(1, 0, 2)));
        at(&mut rx, 2, Some(header(0, 2, 3))); // held behind path 0's hole at path_seq 1
        at(&mut rx, 30, None);
        at(&mut rx, 50, Some(header(0, 1, 1))); // the retransmission
        at(&mut rx, 200, None);
        (delivered, rx.stats().reorder.skipped_seqs)
    }

    #[test]
    fn a_gap_a_reliable_path_is_repairing_waits_for_the_repair_wait() {
        let (delivered, skipped) = loss_repaired_at_50_ms(None);
        assert_eq!(skipped, 1, "the 10 ms wait gives global 1 up at 11 ms");
        assert_eq!(delivered, vec![0, 2, 1, 3], "1 arrives late, after its gap was given up");
        let (delivered, skipped) = loss_repaired_at_50_ms(Some(Duration::from_millis(100)));
        assert_eq!(skipped, 0, "path 0 may still deliver 1: the gap waits for the repair");
        assert_eq!(delivered, vec![0, 1, 2, 3]);
        let (delivered, skipped) = loss_repaired_at_50_ms(Some(Duration::from_millis(20)));
        assert_eq!(skipped, 1, "a repair wait shorter than the repair gives the gap up at 21 ms");
        assert_eq!(delivered, vec![0, 2, 1, 3]);
    }

    /// The largest recorded number, which compact headers are expanded around: the newest
    /// range's top, a late packet below it changes nothing, and a floor alone counts.
    #[test]
    fn received_ranges_know_their_largest() {
        let mut r = ReceivedRanges::default();
        assert_eq!(r.largest(), None);
        r.insert(7);
        r.insert(3);
        assert_eq!(r.largest(), Some(7));
        r.insert(8);
        assert_eq!(r.largest(), Some(8));
        let mut floor_only = ReceivedRanges::default();
        floor_only.advance_floor(40);
        assert_eq!(floor_only.largest(), Some(39));
    }

    #[test]
    fn the_reliable_floor_is_always_acknowledged() {
        let mut r = ReceivedRanges::default();
        // 20 holes: more ranges than fit, so the oldest are forgotten.
        for k in 0..(MAX_ACK_RANGES as u64 + 4) {
            r.insert(k * 2);
        }
        let wire = |r: &ReceivedRanges| {
            r.to_ack_ranges().as_slice().iter().map(|a| (a.smallest, a.largest)).collect::<Vec<_>>()
        };
        assert!(wire(&r).iter().all(|&(lo, _)| lo > 0), "0 was forgotten");
        // The reassembly point passes 11: everything below 12 is known received.
        r.advance_floor(12);
        let w = wire(&r);
        assert_eq!(*w.last().unwrap(), (0, 12), "the floor range merges with the range at 12");
        assert!(w.len() <= MAX_ACK_RANGES);
        r.insert(5);
        assert_eq!(wire(&r), w, "below the floor nothing changes");
        // A floor with a gap above it goes last, even when every slot is used.
        let mut r = ReceivedRanges::default();
        for k in 0..(MAX_ACK_RANGES as u64 + 4) {
            r.insert(100 + k * 2);
        }
        r.advance_floor(50);
        let w = wire(&r);
        assert_eq!(w.len(), MAX_ACK_RANGES);
        assert_eq!(*w.last().unwrap(), (0, 49));
    }

    fn data(path_seq: u64) -> DataHeader {
        DataHeader {
            flags: 0,
            path_id: 0,
            payload_len: 100,
            global_seq: path_seq,
            path_seq,
            send_ts_ns: 0,
        }
    }

    fn wire(fb: &Feedback) -> Vec<(u64, u64)> {
        fb.ranges.iter().map(|r| (r.smallest, r.largest)).collect()
    }

    fn receiver(reliability: Reliability, reassembly_pkts: usize) -> TunnelReceiver<u64> {
        let config = TunnelConfig { reliability, reassembly_pkts, ..TunnelConfig::default() };
        TunnelReceiver::new(&config)
    }

    /// The normal rhythm (DCCP Ack Ratio 2, RFC 4341 section 6.1.2, and the delay bound) is
    /// unchanged: a new packet alone waits for a second one or for the maximum delay.
    #[test]
    fn new_packets_are_acknowledged_every_second_packet_or_after_the_delay() {
        for reliability in [Reliability::Unreliable, Reliability::Reliable, Reliability::Partial] {
            let mut rx = receiver(reliability, 64);
            let t0 = Instant::from_nanos(1_000_000);
            assert_eq!(rx.handle_data(t0, &data(0), 0), None);
            assert!(rx.poll_feedback(t0).is_none(), "{reliability:?}: one packet waits");
            assert_eq!(rx.poll_timeout(), Some(t0 + Duration::from_millis(1)));
            assert_eq!(rx.handle_data(t0, &data(1), 1), None);
            let fb = rx.poll_feedback(t0).expect("the second packet");
            assert_eq!(wire(&fb), vec![(0, 1)]);
            assert!(rx.poll_feedback(t0).is_none());
            assert_eq!(rx.handle_data(t0, &data(2), 2), None);
            let later = t0 + Duration::from_micros(999);
            assert!(rx.poll_feedback(later).is_none());
            let due = t0 + Duration::from_millis(1);
            assert_eq!(wire(&rx.poll_feedback(due).expect("the delay bound")), vec![(0, 2)]);
            assert_eq!(rx.stats().feedback_frames, 2);
        }
    }

    /// A frame the data plane could not send (no address for the peer on the path yet) is
    /// asked for again once it can: the next frame comes at once and still acknowledges the
    /// packet; a path that has received nothing gives none.
    #[test]
    fn requested_feedback_comes_at_once_and_acknowledges_what_arrived_before() {
        for reliability in [Reliability::Unreliable, Reliability::Reliable] {
            let mut rx = receiver(reliability, 64);
            let t0 = Instant::from_nanos(1_000_000);
            rx.request_feedback(t0, 0);
            rx.request_feedback(t0, 9);
            assert!(rx.poll_feedback(t0).is_none(), "{reliability:?}: nothing received yet");
            assert_eq!(rx.handle_data(t0, &data(0), 0), None);
            let due = t0 + Duration::from_millis(1);
            assert_eq!(wire(&rx.poll_feedback(due).expect("the delay bound")), vec![(0, 0)]);
            // That frame was dropped by the data plane; 40 ms later the path is usable.
            let later = t0 + Duration::from_millis(40);
            assert!(rx.poll_feedback(later).is_none(), "{reliability:?}: nothing new");
            rx.request_feedback(later, 0);
            assert_eq!(rx.poll_timeout(), Some(later));
            assert_eq!(wire(&rx.poll_feedback(later).expect("requested")), vec![(0, 0)]);
            assert!(rx.poll_feedback(later).is_none(), "{reliability:?}: one frame");
        }
    }

    /// The stall of a path whose feedback was lost: the sender resends a packet the receiver
    /// already has and acknowledged, and only a new acknowledgment lets the sender move on. A
    /// lone duplicate makes that frame at once (RFC 9293 section 3.10.7.4, RFC 5681 section
    /// 4.2), on any path; before, a reliable path's duplicate made none, ever.
    #[test]
    fn a_lone_duplicate_is_acknowledged_at_once() {
        for reliability in [Reliability::Unreliable, Reliability::Reliable, Reliability::Partial] {
            let mut rx = receiver(reliability, 64);
            let t0 = Instant::from_nanos(1_000_000);
            let mut frames = 0;
            for seq in 0..4 {
                assert_eq!(rx.handle_data(t0, &data(seq), seq), None);
                frames += std::iter::from_fn(|| rx.poll_feedback(t0)).count();
            }
            assert_eq!(frames, 2);
            // The acknowledgments were lost; 3 comes again, 10 s later, and nothing else.
            let t1 = t0 + Duration::from_secs(10);
            assert_eq!(rx.handle_data(t1, &data(3), 33), Some(33), "{reliability:?}");
            assert_eq!(rx.poll_timeout(), Some(t1), "{reliability:?}: due at once");
            let fb = rx.poll_feedback(t1).expect("a duplicate makes feedback");
            assert_eq!((fb.path_id, wire(&fb)), (0, vec![(0, 3)]), "{reliability:?}");
            // Its hold time is the newest new packet's: the sender's RTT sample stays right.
            assert_eq!(fb.hold_time_ns, 10_000_000_000, "{reliability:?}");
            assert!(rx.poll_feedback(t1).is_none(), "one frame, no more");
            assert_eq!(rx.poll_timeout(), None);
        }
    }

    /// Feedback stays bounded: duplicates arriving before the next poll share one frame.
    #[test]
    fn duplicates_before_a_poll_share_one_frame() {
        let mut rx = receiver(Reliability::Reliable, 64);
        let t0 = Instant::from_nanos(1_000_000);
        for seq in 0..2 {
            rx.handle_data(t0, &data(seq), seq);
        }
        assert_eq!(std::iter::from_fn(|| rx.poll_feedback(t0)).count(), 1);
        for k in 0..5 {
            assert_eq!(rx.handle_data(t0, &data(k % 2), 10 + k), Some(10 + k));
        }
        assert_eq!(std::iter::from_fn(|| rx.poll_feedback(t0)).count(), 1);
        assert_eq!(rx.stats().feedback_frames, 2);
    }

    /// A packet beyond a reliable path's reassembly buffer is not recorded (the sender must send
    /// it again), but it is answered at once, as TCP answers a segment outside its window (RFC
    /// 9293 section 3.10.7.4).
    #[test]
    fn a_packet_beyond_the_reassembly_buffer_is_answered_at_once_without_acknowledging_it() {
        let mut rx = receiver(Reliability::Reliable, 4);
        let t0 = Instant::from_nanos(1_000_000);
        // 1 is lost: 2, 3, 4 wait behind it; the ring of 4 from 1 holds 1..=4.
        let mut frames = 0;
        for seq in [0, 2, 3, 4] {
            assert_eq!(rx.handle_data(t0, &data(seq), seq), None);
            frames += std::iter::from_fn(|| rx.poll_feedback(t0)).count();
        }
        assert_eq!(frames, 2);
        assert_eq!(rx.handle_data(t0, &data(5), 5), Some(5));
        assert_eq!(rx.stats().reassembly_drops, 1);
        let fb = rx.poll_feedback(t0).expect("answered at once");
        assert_eq!(wire(&fb), vec![(2, 4), (0, 0)], "5 is not acknowledged");
        assert!(rx.poll_feedback(t0).is_none());
    }

    #[test]
    fn received_ranges_forget_the_oldest_when_full() {
        let mut r = ReceivedRanges::default();
        for k in 0..(MAX_ACK_RANGES as u64 + 3) {
            r.insert(k * 2);
        }
        let got = ranges(&r);
        assert_eq!(got.len(), MAX_ACK_RANGES);
        assert_eq!(got[0], (2 * (MAX_ACK_RANGES as u64 + 2), 2 * (MAX_ACK_RANGES as u64 + 2)));
        assert!(r.to_ack_ranges().len() == MAX_ACK_RANGES);
    }
}
