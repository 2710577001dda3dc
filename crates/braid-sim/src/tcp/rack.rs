//! RACK-TLP loss detection (RFC 8985): time-based loss inference from the most recently
//! delivered segment (RACK, section 6) and the Tail Loss Probe (TLP, section 7).
//!
//! # RACK
//! RACK remembers the transmission time of the most recently *sent* segment that has been
//! delivered (`RACK.xmit_ts`, `RACK.end_seq`). Any segment sent before it that is still not
//! delivered after `RACK.rtt + RACK.reo_wnd` has elapsed since its own transmission is lost.
//!
//! The RFC walks every unacknowledged segment in transmission order and stops at the first one
//! sent after `RACK.xmit_ts` (Linux walks `tsorted_sent_queue`). Here the two kinds of segment
//! are kept in two time-ordered sequences:
//! - segments never retransmitted sit in the scoreboard ring, whose sequence order is their
//!   transmission order. A scan pointer (`next_original`) marks the first one that may still
//!   need a verdict; everything below it is delivered, SACKed, already lost or retransmitted,
//!   so each segment is visited O(1) times over the connection and SACKed ranges are jumped over;
//! - retransmissions are queued in retransmission-time order. Entries that went stale (acked,
//!   SACKed, declared lost, retransmitted again) are dropped when they reach the front.
//!
//! Both scans stop at the first segment whose deadline is in the future: everything behind it
//! was sent later and expires later. This makes detection O(newly lost + 1) per ACK.
//!
//! # Choices where RFC 8985 leaves room or where the model is simpler
//! - `RACK.reo_wnd_mult` adapts to DSACKs (section 6.2 step 4) only when the receiver reports
//!   them ([`super::TcpConfig::dsack`], off by default); otherwise it stays 1.
//! - Section 6.2 step 2 discards a retransmitted segment's RTT when the ACK's timestamp echo
//!   predates the retransmission; ACKs here carry no echo, so only the other test of the RFC
//!   (and Linux `tcp_rack_advance`) applies: an RTT below min_RTT is the original's ACK.
//! - The reordering timer is armed for the *earliest* deadline among pending segments (the RFC
//!   arms it for the latest). Firing earlier only re-runs detection, which declares each
//!   segment lost exactly when its own deadline passes instead of when the last one does.

use std::collections::VecDeque;
use std::time::Duration;

use braid_core::time::Instant;

use super::scoreboard::{Scoreboard, SegState};

/// RFC 8985 section 6.2 step 4 (and RFC 6675's DupThresh): with this many segments SACKed and
/// no reordering seen, the reordering window is zero.
pub const DUP_THRESH_SEGS: u64 = 3;

/// Section 6.2 step 4: recoveries a widened reordering window persists without a DSACK.
pub const REO_WND_PERSIST: u32 = 16;

/// Largest `RACK.reo_wnd_mult` (Linux keeps `reo_wnd_steps` in a byte); SRTT caps the window
/// long before.
const MAX_REO_WND_MULT: u32 = 255;
/// RFC 8985 section 6.2 step 4: the reordering window is min_RTT / 4 ...
pub const REO_WND_MIN_RTT_DIVISOR: u32 = 4;
/// RFC 8985 section 7.2: PTO = 2 * SRTT.
pub const PTO_SRTT_MULTIPLIER: u32 = 2;
/// RFC 8985 section 7.2: worst-case delayed-ACK time added when a single segment is in flight
/// ("WCDelAckT ... RECOMMENDED 200 ms"; Linux adds `TCP_RTO_MIN`).
pub const WC_DEL_ACK_T: Duration = Duration::from_millis(200);
/// RFC 8985 section 7.2: PTO before any RTT sample.
pub const PTO_WITHOUT_SRTT: Duration = Duration::from_secs(1);

/// RFC 8985 section 6.2, RACK_sent_after: whether (t1, seq1) was sent after (t2, seq2), with
/// the sequence number breaking ties between segments sent at the same instant.
pub fn sent_after(t1: Instant, seq1: u64, t2: Instant, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

/// Segments declared lost in one detection pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LossBatch {
    pub segments: u64,
    pub bytes: u64,
    /// Transmission time of the most recently sent segment among them.
    pub largest_sent_time: Instant,
}

impl LossBatch {
    fn add(&mut self, s: &SegState) {
        self.segments += 1;
        self.bytes += u64::from(s.charge_bytes);
        self.largest_sent_time = self.largest_sent_time.max(s.xmit_time());
    }

    pub fn is_empty(&self) -> bool {
        self.segments == 0
    }
}

/// RACK state (RFC 8985 section 5.2 `RACK.*`).
#[derive(Debug)]
pub struct Rack {
    /// `RACK.xmit_ts` and `RACK.end_seq` (exclusive end, in segments) of the most recently sent
    /// delivered segment; `None` until something is delivered.
    newest: Option<(Instant, u64)>,
    /// `RACK.rtt`: RTT of the most recently sent segment delivered by the latest ACK.
    rtt: Duration,
    /// Transmission time of the segment that set `rtt` during the current ACK: the RFC walks
    /// newly delivered segments in transmission order and keeps the last RTT; segments arrive
    /// here in sequence order, so only a later-sent segment may overwrite it.
    rtt_xmit_ts: Option<Instant>,
    /// `RACK.fack`: highest end_seq delivered.
    fack: u64,
    /// `RACK.reordering_seen`.
    reordering_seen: bool,
    /// First never-retransmitted segment still awaiting a verdict (see the module docs).
    next_original: u64,
    /// Retransmissions in order of transmission time: (segment, transmission time).
    retransmissions: VecDeque<(u64, Instant)>,
    /// `RACK.reo_wnd_mult`: the reordering window in steps of min_RTT / 4.
    reo_wnd_mult: u32,
    /// `RACK.reo_wnd_persist`: recoveries left before the window returns to one step.
    reo_wnd_persist: u32,
    /// `RACK.dsack_round`: `SND.NXT` when the window last widened; one step per round trip.
    dsack_round: Option<u64>,
}

impl Rack {
    pub fn new(window_segments: usize) -> Self {
        Rack {
            newest: None,
            rtt: Duration::ZERO,
            rtt_xmit_ts: None,
            fack: 0,
            reordering_seen: false,
            next_original: 0,
            retransmissions: VecDeque::with_capacity(window_segments + 1),
            reo_wnd_mult: 1,
            reo_wnd_persist: 0,
            dsack_round: None,
        }
    }

    pub fn reordering_seen(&self) -> bool {
        self.reordering_seen
    }

    /// Records reordering proved by other means than RACK's own test: an undone recovery
    /// (Linux `tcp_try_undo_partial` -> `tcp_check_sack_reordering` bumps `reord_seen`, which
    /// `tcp_rack_reo_wnd` reads).
    pub fn note_reordering(&mut self) {
        self.reordering_seen = true;
    }

    /// Section 6.2 step 4, the DSACK part of RACK_update_reo_wnd (Linux
    /// `tcp_rack_update_reo_wnd`): a DSACK in a round trip that has not seen one widens the
    /// window by a step and keeps it for [`REO_WND_PERSIST`] recoveries. Segments, as
    /// `snd_una` and `snd_nxt`.
    pub fn on_ack_dsack(&mut self, dsack: bool, snd_una: u64, snd_nxt: u64) {
        if self.dsack_round.is_some_and(|round| snd_una >= round) {
            self.dsack_round = None;
        }
        if dsack && self.dsack_round.is_none() {
            self.dsack_round = Some(snd_nxt);
            self.reo_wnd_mult = self.reo_wnd_mult.saturating_add(1).min(MAX_REO_WND_MULT);
            self.reo_wnd_persist = REO_WND_PERSIST;
        }
    }

    /// A fast or RTO recovery ended (section 6.2 step 4): after [`REO_WND_PERSIST`] without a
    /// DSACK the window returns to one step.
    pub fn on_recovery_exit(&mut self) {
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
        if self.reo_wnd_persist == 0 {
            self.reo_wnd_mult = 1;
        }
    }

    /// A retransmission of `seq` left at `now`.
    pub fn on_retransmit(&mut self, seq: u64, now: Instant) {
        self.retransmissions.push_back((seq, now));
    }

    /// Starts processing an ACK (see `rtt_xmit_ts`).
    pub fn begin_ack(&mut self) {
        self.rtt_xmit_ts = None;
    }

    /// Section 6.2 steps 2 and 3 for one newly delivered (ACKed or SACKed) segment; call in
    /// ascending sequence order, after [`Self::begin_ack`]. `min_rtt` is the path's minimum RTT
    /// before this ACK.
    pub fn on_delivered(
        &mut self,
        seq: u64,
        s: &SegState,
        now: Instant,
        min_rtt: Option<Duration>,
    ) {
        let end_seq = seq + 1;
        // Step 3, RACK_detect_reordering: a never-retransmitted segment below the highest
        // delivered one arrived late.
        if end_seq > self.fack {
            self.fack = end_seq;
        } else if end_seq < self.fack && !s.ever_retransmitted {
            self.reordering_seen = true;
        }
        // Step 2, RACK_update.
        let rtt = now.saturating_since(s.xmit_time());
        if s.ever_retransmitted && min_rtt.is_some_and(|m| rtt < m) {
            // The ACK was for the original transmission (or is otherwise ambiguous).
            return;
        }
        if self.rtt_xmit_ts.is_none_or(|t| s.xmit_time() >= t) {
            self.rtt = rtt;
            self.rtt_xmit_ts = Some(s.xmit_time());
        }
        let newer = match self.newest {
            None => true,
            Some((t, e)) => sent_after(s.xmit_time(), end_seq, t, e),
        };
        if newer {
            self.newest = Some((s.xmit_time(), end_seq));
        }
    }

    /// Section 6.2 step 4, RACK_update_reo_wnd: min(reo_wnd_mult x min_RTT / 4, SRTT), or zero
    /// while no reordering was seen and recovery or DupThresh says loss.
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        sacked_segs: u64,
        min_rtt: Option<Duration>,
        srtt: Option<Duration>,
    ) -> Duration {
        if !self.reordering_seen && (in_recovery || sacked_segs >= DUP_THRESH_SEGS) {
            return Duration::ZERO;
        }
        let Some(min_rtt) = min_rtt else {
            return Duration::ZERO;
        };
        let wnd = min_rtt / REO_WND_MIN_RTT_DIVISOR * self.reo_wnd_mult;
        srtt.map_or(wnd, |s| wnd.min(s))
    }

    /// Section 6.2 step 5, RACK_detect_loss: declares lost every segment sent before the RACK
    /// segment whose deadline `xmit_ts + RACK.rtt + reo_wnd` has passed, adding them to `batch`.
    /// Returns when the reordering timer must fire next (section 6.3), if any segment will
    /// expire later.
    pub fn detect_loss(
        &mut self,
        board: &mut Scoreboard,
        now: Instant,
        reo_wnd: Duration,
        batch: &mut LossBatch,
    ) -> Option<Instant> {
        let (rack_ts, rack_end) = self.newest?;
        let wait = self.rtt + reo_wnd;
        let mut timer: Option<Instant> = None;

        // Never-retransmitted segments, in sequence (= transmission) order.
        let nxt = board.nxt();
        let mut seq = self.next_original.max(board.una());
        while seq < nxt {
            let s = *board.get(seq);
            if s.sacked {
                seq = board.sacked_range_end(seq);
                continue;
            }
            if s.ever_retransmitted || s.lost {
                seq += 1;
                continue;
            }
            if !sent_after(rack_ts, rack_end, s.xmit_time(), seq + 1) {
                break;
            }
            let deadline = s.xmit_time() + wait;
            if now < deadline {
                timer = Some(deadline);
                break;
            }
            board.mark_lost(seq);
            batch.add(&s);
            seq += 1;
        }
        self.next_original = seq;

        // Retransmissions, in retransmission-time order.
        while let Some(&(seq, t)) = self.retransmissions.front() {
            let stale = seq < board.una() || {
                let s = board.get(seq);
                !s.retrans_in_flight || s.xmit_time() != t
            };
            if stale {
                self.retransmissions.pop_front();
                continue;
            }
            if !sent_after(rack_ts, rack_end, t, seq + 1) {
                break;
            }
            let deadline = t + wait;
            if now < deadline {
                timer = Some(timer.map_or(deadline, |x| x.min(deadline)));
                break;
            }
            let s = *board.get(seq);
            board.mark_lost(seq);
            batch.add(&s);
            self.retransmissions.pop_front();
        }
        timer
    }

    /// RTO: every segment below `nxt` is now lost (and so has a verdict); no retransmission is
    /// in flight any more.
    pub fn on_rto(&mut self, nxt: u64) {
        self.next_original = nxt;
        self.retransmissions.clear();
    }
}

/// Tail Loss Probe state (RFC 8985 section 7.1 `TLP.*`) and the probe timer.
#[derive(Debug, Default)]
pub struct Tlp {
    /// `TLP.end_seq`: `SND.NXT` when the probe was sent; `None` when no probe is outstanding.
    pub end_seq: Option<u64>,
    /// `TLP.is_retrans`: the probe was a retransmission (no new data could be sent).
    pub is_retrans: bool,
    /// When the probe timer (PTO) fires.
    pub deadline: Option<Instant>,
    /// The PTO fired; the probe goes out with the next `poll_transmit`.
    pub probe_pending: bool,
    /// For a retransmitted probe: the original's transmission time and charged length, to report the
    /// loss the probe repaired.
    pub repaired_sent_time: Instant,
    pub repaired_charge_bytes: u32,
}

/// What an ACK tells about an outstanding loss probe (RFC 8985 section 7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlpAckOutcome {
    /// No probe outstanding, or the ACK does not settle it yet.
    Pending,
    /// The probe episode ended without evidence of a loss.
    NoLoss,
    /// The retransmitted probe repaired a loss: congestion control must react.
    RepairedLoss,
}

impl Tlp {
    /// Section 7.2, TLP_calc_PTO, before the cap by the RTO deadline.
    pub fn pto(srtt: Option<Duration>, flight_segments: u64) -> Duration {
        match srtt {
            None => PTO_WITHOUT_SRTT,
            Some(srtt) => {
                let pto = srtt * PTO_SRTT_MULTIPLIER;
                if flight_segments == 1 {
                    pto + WC_DEL_ACK_T
                } else {
                    pto
                }
            }
        }
    }

    /// Forgets any probe episode (on entering recovery or RTO).
    pub fn reset(&mut self) {
        self.end_seq = None;
        self.is_retrans = false;
        self.deadline = None;
        self.probe_pending = false;
    }

    /// Section 7.4, TLP_process_ack, for an ACK with cumulative point `cum_ack`. `advanced`:
    /// the ACK acknowledged anything new (cumulatively or selectively). Without DSACK, a pure
    /// duplicate ACK at or beyond the probe's end is the evidence that both the original and
    /// the probe arrived (the receiver ACKs duplicates at once), as in Linux
    /// `tcp_process_tlp_ack`; an ACK beyond the probe's end without that evidence means the
    /// probe repaired a loss.
    pub fn on_ack(&mut self, cum_ack: u64, advanced: bool) -> TlpAckOutcome {
        let Some(end) = self.end_seq else {
            return TlpAckOutcome::Pending;
        };
        if cum_ack < end {
            return TlpAckOutcome::Pending;
        }
        if !self.is_retrans {
            self.end_seq = None;
            return TlpAckOutcome::NoLoss;
        }
        if !advanced {
            self.end_seq = None;
            return TlpAckOutcome::NoLoss;
        }
        if cum_ack > end {
            self.end_seq = None;
            return TlpAckOutcome::RepairedLoss;
        }
        TlpAckOutcome::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid_core::path::PacketRateInfo;

    fn at_ms(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    /// Ten segments sent 1 ms apart from t = 0.
    fn board() -> Scoreboard {
        let mut b = Scoreboard::new(64);
        for i in 0..10 {
            b.push_new(1000, 1000, PacketRateInfo { sent_time: at_ms(i), ..Default::default() });
        }
        b
    }

    fn sack(b: &mut Scoreboard, rack: &mut Rack, seq: u64, now: Instant) {
        let s = b.mark_sacked(seq);
        b.insert_sacked_range(seq, seq + 1);
        rack.begin_ack();
        rack.on_delivered(seq, &s, now, Some(Duration::from_millis(40)));
    }

    #[test]
    fn a_hole_below_three_sacked_segments_is_lost_at_once() {
        let (mut b, mut rack) = (board(), Rack::new(64));
        let min_rtt = Some(Duration::from_millis(40));
        // Segment 0 lost; 1 SACKed at 41 ms: not yet lost, reordering timer armed.
        sack(&mut b, &mut rack, 1, at_ms(41));
        let reo = rack.reo_wnd(false, b.sacked_segments(), min_rtt, min_rtt);
        assert_eq!(reo, Duration::from_millis(10));
        let mut batch = LossBatch::default();
        let timer = rack.detect_loss(&mut b, at_ms(41), reo, &mut batch);
        assert!(batch.is_empty());
        // Deadline: xmit 0 + RACK.rtt 40 + reo_wnd 10.
        assert_eq!(timer, Some(at_ms(50)));
        // Two more SACKs: DupThresh reached, reo_wnd = 0, segment 0 is lost.
        sack(&mut b, &mut rack, 2, at_ms(42));
        sack(&mut b, &mut rack, 3, at_ms(43));
        let reo = rack.reo_wnd(false, b.sacked_segments(), min_rtt, min_rtt);
        assert_eq!(reo, Duration::ZERO);
        let timer = rack.detect_loss(&mut b, at_ms(43), reo, &mut batch);
        assert_eq!((batch.segments, batch.largest_sent_time), (1, at_ms(0)));
        assert_eq!(timer, None, "segments 4.. were sent after the RACK segment");
        assert!(b.get(0).lost);
        assert!(!rack.reordering_seen());
    }

    #[test]
    fn the_reordering_timer_declares_the_loss_when_it_fires() {
        let (mut b, mut rack) = (board(), Rack::new(64));
        sack(&mut b, &mut rack, 1, at_ms(41));
        let reo = Duration::from_millis(10);
        let mut batch = LossBatch::default();
        assert_eq!(rack.detect_loss(&mut b, at_ms(41), reo, &mut batch), Some(at_ms(50)));
        assert_eq!(rack.detect_loss(&mut b, at_ms(50), reo, &mut batch), None);
        assert_eq!(batch.segments, 1);
    }

    #[test]
    fn dsacks_widen_the_window_a_step_per_round_trip_until_sixteen_clean_recoveries() {
        let mut rack = Rack::new(64);
        rack.note_reordering();
        let (min_rtt, srtt) = (Some(Duration::from_millis(40)), Some(Duration::from_millis(100)));
        let wnd = |rack: &Rack| rack.reo_wnd(false, 0, min_rtt, srtt).as_millis();
        assert_eq!(wnd(&rack), 10, "one step: min_RTT / 4");
        rack.on_ack_dsack(true, 0, 100);
        assert_eq!(wnd(&rack), 20);
        rack.on_ack_dsack(true, 50, 120);
        assert_eq!(wnd(&rack), 20, "a second DSACK in the same round trip changes nothing");
        rack.on_ack_dsack(false, 100, 150); // the round ends
        rack.on_ack_dsack(true, 110, 160);
        assert_eq!(wnd(&rack), 30);
        for round in 0..20u64 {
            rack.on_ack_dsack(true, 200 + 100 * round, 250 + 100 * round);
        }
        assert_eq!(wnd(&rack), 100, "capped at SRTT");
        for _ in 0..REO_WND_PERSIST - 1 {
            rack.on_recovery_exit();
        }
        assert_eq!(wnd(&rack), 100, "15 recoveries without a DSACK keep it");
        rack.on_recovery_exit();
        assert_eq!(wnd(&rack), 10, "the 16th returns it to one step");
    }

    #[test]
    fn a_late_original_reveals_reordering_and_widens_the_window() {
        let (mut b, mut rack) = (board(), Rack::new(64));
        let min_rtt = Some(Duration::from_millis(40));
        for seq in 1..5 {
            sack(&mut b, &mut rack, seq, at_ms(41 + seq));
        }
        sack(&mut b, &mut rack, 0, at_ms(46)); // arrives late, never retransmitted
        assert!(rack.reordering_seen());
        assert_eq!(
            rack.reo_wnd(true, 5, min_rtt, Some(Duration::from_millis(20))),
            Duration::from_millis(10),
            "min_rtt / 4, bounded by srtt, even in recovery once reordering was seen"
        );
    }

    #[test]
    fn a_lost_retransmission_is_detected_from_later_deliveries() {
        let (mut b, mut rack) = (board(), Rack::new(64));
        b.mark_lost(0);
        b.on_retransmit(0, PacketRateInfo { sent_time: at_ms(45), ..Default::default() });
        rack.on_retransmit(0, at_ms(45));
        // A segment sent at 50 ms (new data) is SACKed at 90 ms: the retransmission sent at 45
        // ms should have been delivered by 45 + 40.
        b.push_new(1000, 1000, PacketRateInfo { sent_time: at_ms(50), ..Default::default() });
        sack(&mut b, &mut rack, 10, at_ms(90));
        let mut batch = LossBatch::default();
        rack.detect_loss(&mut b, at_ms(90), Duration::ZERO, &mut batch);
        // Originals 1..=9 (sent 1..9 ms) are lost too; the retransmission of 0 as well.
        assert_eq!(batch.segments, 10);
        assert_eq!(b.next_to_retransmit(), Some(0));
        b.check_invariants();
    }

    #[test]
    fn pto_is_two_srtt_plus_the_delayed_ack_allowance_for_a_single_segment() {
        let srtt = Some(Duration::from_millis(40));
        assert_eq!(Tlp::pto(srtt, 5), Duration::from_millis(80));
        assert_eq!(Tlp::pto(srtt, 1), Duration::from_millis(280));
        assert_eq!(Tlp::pto(None, 5), Duration::from_secs(1));
    }

    #[test]
    fn a_retransmitted_probe_reports_the_loss_it_repaired() {
        let mut tlp = Tlp { end_seq: Some(10), is_retrans: true, ..Default::default() };
        assert_eq!(tlp.on_ack(9, true), TlpAckOutcome::Pending);
        assert_eq!(tlp.on_ack(10, true), TlpAckOutcome::Pending);
        assert_eq!(tlp.on_ack(12, true), TlpAckOutcome::RepairedLoss);
        let mut tlp = Tlp { end_seq: Some(10), is_retrans: true, ..Default::default() };
        assert_eq!(tlp.on_ack(10, true), TlpAckOutcome::Pending);
        assert_eq!(tlp.on_ack(10, false), TlpAckOutcome::NoLoss, "duplicate: both arrived");
    }
}
