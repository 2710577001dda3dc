//! The data receiver: in-order delivery to the application, cumulative ACKs with SACK blocks,
//! and delayed ACKs.
//!
//! # ACK policy (RFC 5681 section 4.2, RFC 1122 section 4.2.3.2)
//! - in-order segments are acknowledged every `delack_segments` segments (RFC 5681: "an ACK
//!   SHOULD be generated for at least every second full-sized segment"), or when the delayed-ACK
//!   timer (`delack_timeout`, started by the first unacknowledged segment) fires;
//! - an out-of-order segment, a segment that fills all or part of a gap, and a duplicate are
//!   acknowledged at once (RFC 5681 section 4.2: "an immediate ACK SHOULD be generated");
//! - with `delayed_ack = false` every segment is acknowledged;
//! - like Linux, the receiver starts in quick-ACK mode: the first [`QUICKACK_SEGMENTS`] in-order
//!   segments are acknowledged at once (`tcp_incr_quickack` on the first data segment, with
//!   `TCP_MAX_QUICKACKS`). Besides speeding up the first round trips as Linux does, this gives the
//!   sender a min_RTT from a lone segment, the same RTT a lone retransmission (a TLP probe)
//!   sees; with only paired samples min_RTT would exceed that RTT by one serialisation time and
//!   RACK would discard every lone retransmission's ACK as ambiguous (RFC 8985 6.2 step 2).
//!
//! Counting segments rather than bytes differs from Linux (`__tcp_ack_snd_check` ACKs once more
//! than one receive-MSS of data is unacknowledged) only for a short last segment.
//!
//! # SACK blocks (RFC 2018 section 4)
//! "The first SACK block MUST specify the contiguous block of data containing the segment which
//! triggered this ACK", and the following blocks repeat the most recently reported ones. Like
//! Linux (`tcp_sack_new_ofo_skb`, `selective_acks[4]`), the receiver keeps the blocks it reported
//! most recently, newest first, as one member segment each (blocks grow and merge, a member
//! stays inside its block), and reports up to [`MAX_SACK_BLOCKS`] of them.
//!
//! Out-of-order data is held as a sorted list of ranges, at most one per two segments of the
//! receive window, reserved up front.

use std::collections::BTreeMap;

use braid_core::time::Instant;

use super::ranges::RangeSet;
use super::{Ack, SackBlock, Segment, TcpConfig, MAX_SACK_BLOCKS};

/// SACK blocks remembered for repetition (Linux keeps 4 `selective_acks`).
pub const REMEMBERED_SACK_BLOCKS: usize = 4;
/// In-order segments acknowledged immediately at the start of the connection (Linux
/// `TCP_MAX_QUICKACKS`; `tcp_incr_quickack` allows min(16, rcv_wnd / (2 * rcv_mss)), which is
/// 16 with Linux's initial receive window).
pub const QUICKACK_SEGMENTS: u32 = 16;

/// Counters of the receiver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpReceiverMetrics {
    pub segments_received: u64,
    pub duplicate_segments: u64,
    pub out_of_order_segments: u64,
    pub acks_sent: u64,
    pub bytes_delivered: u64,
}

/// The receiving end of a greedy download ([`TcpReceiver::new`]) or of a byte stream
/// ([`TcpReceiver::stream`]).
#[derive(Debug)]
pub struct TcpReceiver {
    config: TcpConfig,
    total_segments: u64,
    /// Payload bytes of the out-of-order segments of a stream, whose lengths the download's
    /// fixed segmentation cannot give (`None` for a download).
    stream_lens: Option<BTreeMap<u64, u32>>,
    /// Next segment expected in order (`RCV.NXT`).
    rcv_nxt: u64,
    /// Received segments above `rcv_nxt`.
    out_of_order: RangeSet,
    /// A member segment of each recently reported SACK block, most recent first.
    recent: [u64; REMEMBERED_SACK_BLOCKS],
    recent_len: usize,
    /// In-order segments received since the last ACK.
    unacked_segments: u32,
    /// Immediate ACKs left in quick-ACK mode.
    quickacks_left: u32,
    ack_now: bool,
    delack_deadline: Option<Instant>,
    /// RFC 7323 section 4.3 `TS.Recent`, echoed as every ACK's TSecr.
    ts_recent: Instant,
    /// RFC 7323 `Last.ACK.sent`: the cumulative ACK of the latest ACK sent (Linux `rcv_wup`).
    last_ack_sent: u64,
    /// A duplicate segment arrived since the last ACK, to report by D-SACK ([`TcpConfig::dsack`]).
    dsack_pending: bool,
    metrics: TcpReceiverMetrics,
}

impl TcpReceiver {
    pub fn new(config: TcpConfig) -> Self {
        Self::with(config, config.total_segments(), None)
    }

    /// The receiving end of a stream ([`super::TcpSender::stream`]): segments of any length,
    /// never complete. `config.total_bytes` is not read.
    pub fn stream(config: TcpConfig) -> Self {
        Self::with(config, u64::MAX, Some(BTreeMap::new()))
    }

    fn with(
        config: TcpConfig,
        total_segments: u64,
        stream_lens: Option<BTreeMap<u64, u32>>,
    ) -> Self {
        TcpReceiver {
            config,
            total_segments,
            stream_lens,
            rcv_nxt: 0,
            out_of_order: RangeSet::with_window(config.window_segments()),
            recent: [0; REMEMBERED_SACK_BLOCKS],
            recent_len: 0,
            unacked_segments: 0,
            quickacks_left: QUICKACK_SEGMENTS,
            ack_now: false,
            delack_deadline: None,
            ts_recent: Instant::ZERO,
            last_ack_sent: 0,
            dsack_pending: false,
            metrics: TcpReceiverMetrics::default(),
        }
    }

    /// Payload bytes delivered in order to the application.
    pub fn bytes_delivered(&self) -> u64 {
        self.metrics.bytes_delivered
    }

    /// Next segment expected in order (`RCV.NXT`, in segments).
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Every byte of the transfer was delivered.
    pub fn is_complete(&self) -> bool {
        self.rcv_nxt >= self.total_segments
    }

    pub fn metrics(&self) -> TcpReceiverMetrics {
        self.metrics
    }

    /// Accepts a segment; returns the payload bytes it newly delivered in order.
    pub fn handle_segment(&mut self, now: Instant, seg: &Segment) -> u64 {
        self.metrics.segments_received += 1;
        let seq = seg.seq;
        // RFC 7323 section 4.3 (Linux `tcp_replace_ts_recent`): echo the TSval of the segment
        // that advanced the left edge, so a hole filled by a late original echoes the original's
        // send time and a hole filled by a retransmission echoes the retransmission's.
        if seq <= self.last_ack_sent && seg.ts_val >= self.ts_recent {
            self.ts_recent = seg.ts_val;
        }
        let beyond_window = (seq.saturating_sub(self.rcv_nxt)) * u64::from(self.config.mss_bytes)
            >= self.config.rwnd_bytes;
        if seq >= self.total_segments || beyond_window {
            // Not acceptable (RFC 9293 section 3.10.7.4): drop it, but send an ACK.
            self.ack_now = true;
            return 0;
        }
        if seq < self.rcv_nxt || self.out_of_order.find(seq).is_some() {
            self.metrics.duplicate_segments += 1;
            self.dsack_pending = self.config.dsack;
            self.ack_now = true;
            return 0;
        }
        if seq > self.rcv_nxt {
            self.metrics.out_of_order_segments += 1;
            if let Some(lens) = self.stream_lens.as_mut() {
                lens.insert(seq, seg.len_bytes);
            }
            let block = self.out_of_order.insert(seq, seq + 1);
            self.remember_block(seq, block);
            self.ack_now = true;
            return 0;
        }
        // In order.
        let filled_gap = !self.out_of_order.is_empty();
        let before = self.rcv_nxt;
        self.rcv_nxt += 1;
        if let Some(next) = self.out_of_order.pop_first_at(self.rcv_nxt) {
            self.rcv_nxt = next.end;
        }
        let newly = match self.stream_lens.as_mut() {
            None => self.config.bytes_before(self.rcv_nxt) - self.config.bytes_before(before),
            Some(lens) => {
                let mut newly = u64::from(seg.len_bytes);
                while let Some(e) = lens.first_entry().filter(|e| *e.key() < self.rcv_nxt) {
                    newly += u64::from(e.remove());
                }
                newly
            }
        };
        self.metrics.bytes_delivered += newly;
        if filled_gap || !self.config.delayed_ack {
            self.ack_now = true;
        } else if self.quickacks_left > 0 {
            self.quickacks_left -= 1;
            self.ack_now = true;
        } else {
            self.unacked_segments += 1;
            if self.unacked_segments >= self.config.delack_segments {
                self.ack_now = true;
            } else if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + self.config.delack_timeout);
            }
        }
        newly
    }

    /// Puts `seq` (now part of `block`) first among the remembered blocks, dropping the entries
    /// of the same block and those at the end.
    fn remember_block(&mut self, seq: u64, block: SackBlock) {
        let mut kept = [0; REMEMBERED_SACK_BLOCKS];
        kept[0] = seq;
        let mut n = 1;
        for &m in &self.recent[..self.recent_len] {
            if n == REMEMBERED_SACK_BLOCKS {
                break;
            }
            if m >= self.rcv_nxt && !block.contains(m) {
                kept[n] = m;
                n += 1;
            }
        }
        self.recent = kept;
        self.recent_len = n;
    }

    /// The ACK to send now, if one is due; call until `None`.
    pub fn poll_ack(&mut self, _now: Instant) -> Option<Ack> {
        if !self.ack_now {
            return None;
        }
        self.ack_now = false;
        self.unacked_segments = 0;
        self.delack_deadline = None;
        self.metrics.acks_sent += 1;
        Some(self.build_ack())
    }

    fn build_ack(&mut self) -> Ack {
        self.last_ack_sent = self.rcv_nxt;
        let dsack = std::mem::take(&mut self.dsack_pending);
        let mut ack =
            Ack { cum_ack: self.rcv_nxt, ts_ecr: self.ts_recent, dsack, ..Ack::default() };
        // RFC 2883 section 4: the D-SACK block goes first and takes one of the option's slots.
        let max_blocks = MAX_SACK_BLOCKS - usize::from(dsack);
        let mut n = 0;
        let mut kept = 0;
        for i in 0..self.recent_len {
            let m = self.recent[i];
            let Some(block) = self.out_of_order.find(m).filter(|_| m >= self.rcv_nxt) else {
                continue; // delivered in order since
            };
            self.recent[kept] = m;
            kept += 1;
            if n < max_blocks && !ack.sack[..n].contains(&block) {
                ack.sack[n] = block;
                n += 1;
            }
        }
        self.recent_len = kept;
        ack.sack_count = n as u8;
        ack
    }

    /// When the delayed-ACK timer fires, if it is running.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.delack_deadline
    }

    /// Runs the delayed-ACK timer.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.delack_deadline.is_some_and(|t| t <= now) {
            self.delack_deadline = None;
            self.ack_now = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn seg(seq: u64) -> Segment {
        Segment { seq, len_bytes: 1448, retransmission: false, ts_val: Instant::from_nanos(seq) }
    }

    fn cfg(segments: u64) -> TcpConfig {
        TcpConfig { total_bytes: segments * 1448, ..TcpConfig::default() }
    }

    /// A receiver that already delivered `n` segments and left quick-ACK mode.
    fn receiver_after(config: TcpConfig, n: u64) -> TcpReceiver {
        let mut r = TcpReceiver::new(config);
        for s in 0..n {
            r.handle_segment(Instant::ZERO, &seg(s));
            while r.poll_ack(Instant::ZERO).is_some() {}
        }
        r
    }

    fn blocks(ack: &Ack) -> Vec<(u64, u64)> {
        ack.sack_blocks().iter().map(|b| (b.start, b.end)).collect()
    }

    const Q: u64 = QUICKACK_SEGMENTS as u64;

    fn seg_at(seq: u64, sent_ns: u64) -> Segment {
        Segment { ts_val: Instant::from_nanos(sent_ns), ..seg(seq) }
    }

    #[test]
    fn the_echoed_timestamp_is_that_of_the_segment_that_filled_the_hole() {
        // RFC 7323 section 4.3: out-of-order segments do not update TS.Recent; the segment
        // that advances the left edge does, whether an original or a retransmission.
        let mut r = receiver_after(cfg(Q + 10), Q);
        r.handle_segment(Instant::ZERO, &seg_at(Q + 1, 500));
        assert_eq!(r.poll_ack(Instant::ZERO).unwrap().ts_ecr, Instant::from_nanos(Q - 1));
        r.handle_segment(Instant::ZERO, &seg_at(Q, 400)); // the late original
        assert_eq!(r.poll_ack(Instant::ZERO).unwrap().ts_ecr, Instant::from_nanos(400));

        let mut r = receiver_after(cfg(Q + 10), Q);
        r.handle_segment(Instant::ZERO, &seg_at(Q + 1, 500));
        r.poll_ack(Instant::ZERO);
        r.handle_segment(Instant::ZERO, &seg_at(Q, 900)); // its retransmission
        assert_eq!(r.poll_ack(Instant::ZERO).unwrap().ts_ecr, Instant::from_nanos(900));
        r.handle_segment(Instant::ZERO, &seg_at(Q, 400)); // the original, now a duplicate
        assert_eq!(r.poll_ack(Instant::ZERO).unwrap().ts_ecr, Instant::from_nanos(900));
    }

    #[test]
    fn quick_ack_mode_acknowledges_the_first_segments_at_once() {
        let mut r = TcpReceiver::new(cfg(40));
        for s in 0..Q {
            r.handle_segment(Instant::ZERO, &seg(s));
            assert_eq!(r.poll_ack(Instant::ZERO).map(|a| a.cum_ack), Some(s + 1));
        }
        r.handle_segment(Instant::ZERO, &seg(Q));
        assert_eq!(r.poll_ack(Instant::ZERO), None, "delayed from now on");
    }

    #[test]
    fn every_second_segment_is_acknowledged_and_a_lone_one_after_the_timer() {
        let mut r = receiver_after(cfg(Q + 3), Q);
        let t0 = Instant::from_nanos(1_000);
        assert_eq!(r.handle_segment(t0, &seg(Q)), 1448);
        assert_eq!(r.poll_ack(t0), None);
        assert_eq!(r.poll_timeout(), Some(t0 + Duration::from_millis(40)));
        r.handle_segment(t0, &seg(Q + 1));
        assert_eq!(r.poll_ack(t0).map(|a| a.cum_ack), Some(Q + 2));
        assert_eq!(r.poll_ack(t0), None);
        assert_eq!(r.poll_timeout(), None);
        r.handle_segment(t0, &seg(Q + 2));
        assert_eq!(r.poll_ack(t0), None);
        let due = r.poll_timeout().unwrap();
        r.handle_timeout(due - Duration::from_nanos(1));
        assert_eq!(r.poll_ack(due), None, "not before the timer");
        r.handle_timeout(due);
        assert_eq!(r.poll_ack(due).map(|a| a.cum_ack), Some(Q + 3));
        assert!(r.is_complete());
        assert_eq!(r.bytes_delivered(), (Q + 3) * 1448);
    }

    #[test]
    fn without_delayed_acks_every_segment_is_acknowledged() {
        let mut r = receiver_after(TcpConfig { delayed_ack: false, ..cfg(Q + 3) }, Q);
        for s in Q..Q + 3 {
            r.handle_segment(Instant::ZERO, &seg(s));
            assert_eq!(r.poll_ack(Instant::ZERO).map(|a| a.cum_ack), Some(s + 1));
        }
    }

    #[test]
    fn first_sack_block_holds_the_most_recent_segment() {
        let mut r = receiver_after(cfg(Q + 20), Q);
        let now = Instant::ZERO;
        let b = |x: u64, y: u64| (Q + x, Q + y);
        for s in [0, 2, 4, 6, 8] {
            r.handle_segment(now, &seg(Q + s));
        }
        let ack = r.poll_ack(now).unwrap();
        assert_eq!(ack.cum_ack, Q + 1);
        assert_eq!(blocks(&ack), vec![b(8, 9), b(6, 7), b(4, 5)]);
        // 3 joins 2 and 4: its block comes first, the others follow most recent first.
        r.handle_segment(now, &seg(Q + 3));
        assert_eq!(blocks(&r.poll_ack(now).unwrap()), vec![b(2, 5), b(8, 9), b(6, 7)]);
        // 1 fills the first hole: ACK at once, cumulative ACK jumps over 2..5.
        assert_eq!(r.handle_segment(now, &seg(Q + 1)), 4 * 1448);
        let ack = r.poll_ack(now).unwrap();
        assert_eq!((ack.cum_ack, blocks(&ack)), (Q + 5, vec![b(8, 9), b(6, 7)]));
        // A duplicate is acknowledged at once and delivers nothing.
        assert_eq!(r.handle_segment(now, &seg(Q + 2)), 0);
        assert!(r.poll_ack(now).is_some());
        assert_eq!(r.metrics().duplicate_segments, 1);
    }

    #[test]
    fn a_duplicate_is_reported_by_dsack_first_only_when_enabled() {
        let now = Instant::ZERO;
        for dsack in [false, true] {
            let mut r = receiver_after(TcpConfig { dsack, ..cfg(Q + 20) }, Q);
            // Three holes open: three SACK blocks.
            for s in [Q + 1, Q + 3, Q + 5] {
                r.handle_segment(now, &seg(s));
            }
            let ack = r.poll_ack(now).unwrap();
            assert_eq!((ack.dsack, blocks(&ack).len()), (false, 3));
            r.handle_segment(now, &seg(Q - 1)); // delivered before: a duplicate
            let ack = r.poll_ack(now).expect("a duplicate is acknowledged at once");
            assert_eq!(ack.dsack, dsack);
            // With the D-SACK block first, two SACK blocks still fit the option.
            assert_eq!(blocks(&ack).len(), if dsack { 2 } else { 3 });
            assert_eq!(
                ack.wire_len(),
                Ack { dsack: false, ..ack }.wire_len() + 8 * u32::from(dsack)
            );
            r.handle_segment(now, &seg(Q + 7));
            assert!(!r.poll_ack(now).unwrap().dsack, "reported once");
        }
    }

    #[test]
    fn a_segment_filling_part_of_a_gap_is_acknowledged_at_once() {
        let mut r = receiver_after(cfg(Q + 20), Q);
        let now = Instant::ZERO;
        r.handle_segment(now, &seg(Q));
        r.handle_segment(now, &seg(Q + 1));
        r.poll_ack(now).unwrap();
        r.handle_segment(now, &seg(Q + 5));
        r.poll_ack(now).unwrap();
        r.handle_segment(now, &seg(Q + 2)); // in order, but a hole remains above
        let ack = r.poll_ack(now).expect("immediate ACK while a gap is open");
        assert_eq!((ack.cum_ack, blocks(&ack)), (Q + 3, vec![(Q + 5, Q + 6)]));
    }

    #[test]
    fn segments_beyond_the_window_are_dropped_but_acknowledged() {
        let mut r = TcpReceiver::new(cfg(10_000));
        let far = super::super::DEFAULT_RWND_BYTES / 1448 + 1;
        assert_eq!(r.handle_segment(Instant::ZERO, &seg(far)), 0);
        assert_eq!(r.poll_ack(Instant::ZERO).map(|a| a.sack_count), Some(0));
    }
}
