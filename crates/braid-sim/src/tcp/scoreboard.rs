//! The sender's scoreboard: per-segment state for everything between `snd_una` and `snd_nxt`,
//! and the RFC 6675 `pipe` kept incrementally.
//!
//! # Layout
//! Segment state lives in a ring (`VecDeque`) indexed by `seq - snd_una`, with capacity reserved
//! for the receive window, so sending and acknowledging never allocate. Because new data is sent
//! in sequence order, the ring is also in order of *first* transmission; retransmissions are
//! tracked separately by [`super::rack`] in order of retransmission time.
//!
//! SACKed ranges are kept a second time as a sorted range set, so that the SACK blocks an ACK
//! repeats are skipped with a binary search and only newly SACKed segments are visited.
//!
//! # Pipe (RFC 6675 section 4, SetPipe)
//! "The estimated number of outstanding octets in the network": for every octet between
//! HighACK and HighData that is not SACKed, count one if it is not lost, and one more if it was
//! retransmitted. With "lost" decided by RACK (RFC 8985) rather than `IsLost()`'s DupThresh, this
//! is Linux's `packets_out - sacked_out - lost_out + retrans_out`. Each term is a running sum in
//! charged bytes ([`SegState::charge_bytes`]: the payload, or one MSS per segment for a sender
//! that counts packets as Linux does), updated on every state change, so `pipe()` is O(1).

use std::collections::VecDeque;

use braid_core::path::PacketRateInfo;
use braid_core::time::Instant;

use super::ranges::RangeSet;
use super::SackBlock;

/// State of one sent segment (Linux `tcp_skb_cb`: the `sacked` bits, `skb_mstamp`, rate fields).
#[derive(Clone, Copy, Debug)]
pub struct SegState {
    /// Rate-sampling snapshot at the most recent transmission; `rate.sent_time` is the most
    /// recent transmission time (RACK's `Segment.xmit_ts`).
    pub rate: PacketRateInfo,
    pub len_bytes: u32,
    /// What the segment counts for in the pipe, the window and the controller's byte counts:
    /// its payload, or one MSS whatever its payload when the sender counts packets
    /// ([`super::sender::TcpSender::stream`]).
    pub charge_bytes: u32,
    /// Selectively acknowledged (`TCPCB_SACKED_ACKED`).
    pub sacked: bool,
    /// Declared lost by RACK or the RTO (`TCPCB_LOST`); stays set once retransmitted.
    pub lost: bool,
    /// A retransmission of it is in flight (`TCPCB_SACKED_RETRANS`).
    pub retrans_in_flight: bool,
    /// Ever retransmitted (`TCPCB_EVER_RETRANS`): no Karn RTT sample, no reordering evidence.
    pub ever_retransmitted: bool,
}

impl SegState {
    pub fn xmit_time(&self) -> Instant {
        self.rate.sent_time
    }

    /// Lost and waiting for its retransmission.
    pub fn needs_retransmission(&self) -> bool {
        self.lost && !self.retrans_in_flight && !self.sacked
    }
}

/// Per-segment state between `snd_una` and `snd_nxt`, and the pipe.
#[derive(Debug)]
pub struct Scoreboard {
    segs: VecDeque<SegState>,
    una: u64,
    sacked: RangeSet,
    /// Payload bytes in `una..nxt`.
    outstanding_bytes: u64,
    sacked_bytes: u64,
    sacked_segs: u64,
    /// Bytes marked lost and not SACKed (whether retransmitted or not).
    lost_bytes: u64,
    /// Bytes of retransmissions in flight (not SACKed).
    retrans_bytes: u64,
    /// Segments lost and not yet retransmitted.
    lost_waiting: u64,
    /// No segment below this one needs a retransmission (a scan hint, Linux `retransmit_skb_hint`).
    retransmit_hint: u64,
}

impl Scoreboard {
    pub fn new(window_segments: usize) -> Self {
        Scoreboard {
            segs: VecDeque::with_capacity(window_segments + 1),
            una: 0,
            sacked: RangeSet::with_window(window_segments),
            outstanding_bytes: 0,
            sacked_bytes: 0,
            sacked_segs: 0,
            lost_bytes: 0,
            retrans_bytes: 0,
            lost_waiting: 0,
            retransmit_hint: 0,
        }
    }

    /// Lowest unacknowledged segment (`SND.UNA`).
    pub fn una(&self) -> u64 {
        self.una
    }

    /// Next segment never sent (`SND.NXT`).
    pub fn nxt(&self) -> u64 {
        self.una + self.segs.len() as u64
    }

    /// RFC 6675 pipe in payload bytes.
    pub fn pipe(&self) -> u64 {
        self.outstanding_bytes - self.sacked_bytes - self.lost_bytes + self.retrans_bytes
    }

    /// Payload bytes between `snd_una` and `snd_nxt` (Linux `packets_out`, in bytes).
    pub fn outstanding_bytes(&self) -> u64 {
        self.outstanding_bytes
    }

    pub fn outstanding_segments(&self) -> u64 {
        self.segs.len() as u64
    }

    /// Bytes marked lost and not yet delivered by any transmission (Linux `lost_out`).
    pub fn lost_bytes(&self) -> u64 {
        self.lost_bytes
    }

    /// Bytes of retransmissions in flight (Linux `retrans_out`).
    pub fn retrans_in_flight_bytes(&self) -> u64 {
        self.retrans_bytes
    }

    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }

    /// Segments SACKed above `snd_una` (RACK's `RACK.segs_sacked`, Linux `sacked_out`).
    pub fn sacked_segments(&self) -> u64 {
        self.sacked_segs
    }

    pub fn get(&self, seq: u64) -> &SegState {
        &self.segs[(seq - self.una) as usize]
    }

    fn get_mut(&mut self, seq: u64) -> &mut SegState {
        &mut self.segs[(seq - self.una) as usize]
    }

    /// Records the first transmission of segment `nxt()`.
    pub fn push_new(&mut self, len_bytes: u32, charge_bytes: u32, rate: PacketRateInfo) {
        self.segs.push_back(SegState {
            rate,
            len_bytes,
            charge_bytes,
            sacked: false,
            lost: false,
            retrans_in_flight: false,
            ever_retransmitted: false,
        });
        self.outstanding_bytes += u64::from(charge_bytes);
    }

    /// Records a retransmission of `seq`, whether it was marked lost or is a TLP probe.
    pub fn on_retransmit(&mut self, seq: u64, rate: PacketRateInfo) {
        let s = self.get_mut(seq);
        debug_assert!(!s.sacked);
        let (was_waiting, was_in_flight, len) =
            (s.needs_retransmission(), s.retrans_in_flight, u64::from(s.charge_bytes));
        s.rate = rate;
        s.retrans_in_flight = true;
        s.ever_retransmitted = true;
        if was_waiting {
            self.lost_waiting -= 1;
        }
        if !was_in_flight {
            self.retrans_bytes += len;
        }
    }

    /// Declares `seq` lost (RFC 8985 6.2 step 5: `Segment.lost = TRUE`); a retransmission in
    /// flight is declared lost with it. Returns false if there was nothing to declare.
    pub fn mark_lost(&mut self, seq: u64) -> bool {
        let s = self.get_mut(seq);
        if s.sacked || s.needs_retransmission() {
            return false;
        }
        let (was_lost, was_in_flight, len) =
            (s.lost, s.retrans_in_flight, u64::from(s.charge_bytes));
        s.lost = true;
        s.retrans_in_flight = false;
        if was_in_flight {
            self.retrans_bytes -= len;
        }
        if !was_lost {
            self.lost_bytes += len;
        }
        self.lost_waiting += 1;
        self.retransmit_hint = self.retransmit_hint.min(seq);
        true
    }

    /// RTO (RFC 6298 section 5 with Linux `tcp_enter_loss`): every segment not SACKed is lost
    /// and no retransmission is considered in flight any more. O(window); RTOs are rare.
    /// Returns how many segments (or retransmissions in flight) were newly declared lost.
    pub fn mark_all_lost(&mut self) -> u64 {
        let (mut lost_segs, mut newly_lost) = (0, 0);
        for s in self.segs.iter_mut().filter(|s| !s.sacked) {
            if !s.lost || s.retrans_in_flight {
                newly_lost += 1;
            }
            s.lost = true;
            s.retrans_in_flight = false;
            lost_segs += 1;
        }
        self.lost_bytes = self.outstanding_bytes - self.sacked_bytes;
        self.retrans_bytes = 0;
        self.lost_waiting = lost_segs;
        self.retransmit_hint = self.una;
        newly_lost
    }

    /// Undo of a spurious recovery (Linux `tcp_undo_cwnd_reduction` with `unmark_loss`: clears
    /// `TCPCB_LOST` on every segment, `lost_out = 0`): the segments marked lost count in flight
    /// again and wait for no retransmission; a retransmission still in flight stays counted, as
    /// Linux's `retrans_out` does. O(window); undos are rare.
    pub fn unmark_lost(&mut self) {
        if self.lost_bytes == 0 && self.lost_waiting == 0 {
            return;
        }
        for s in self.segs.iter_mut() {
            s.lost = false;
        }
        self.lost_bytes = 0;
        self.lost_waiting = 0;
        self.retransmit_hint = self.una;
    }

    /// The lowest segment waiting for a retransmission.
    pub fn next_to_retransmit(&mut self) -> Option<u64> {
        if self.lost_waiting == 0 {
            return None;
        }
        let mut seq = self.retransmit_hint.max(self.una);
        let nxt = self.nxt();
        while seq < nxt {
            if self.get(seq).needs_retransmission() {
                self.retransmit_hint = seq;
                return Some(seq);
            }
            seq += 1;
        }
        debug_assert!(false, "lost_waiting = {} but nothing to retransmit", self.lost_waiting);
        None
    }

    /// Removes `snd_una` after a cumulative ACK covered it; returns its index and final state.
    pub fn pop_acked(&mut self) -> Option<(u64, SegState)> {
        let s = self.segs.pop_front()?;
        let seq = self.una;
        self.una += 1;
        let len = u64::from(s.charge_bytes);
        self.outstanding_bytes -= len;
        if s.sacked {
            self.sacked_bytes -= len;
            self.sacked_segs -= 1;
        } else {
            if s.lost {
                self.lost_bytes -= len;
            }
            if s.needs_retransmission() {
                self.lost_waiting -= 1;
            }
            if s.retrans_in_flight {
                self.retrans_bytes -= len;
            }
        }
        Some((seq, s))
    }

    /// Forgets SACKed ranges below `snd_una`; call once after a run of [`Self::pop_acked`].
    pub fn trim_sacked_ranges(&mut self) {
        self.sacked.remove_below(self.una);
    }

    /// The next sub-range of `pos..end` not yet SACKed (the part of a SACK block that is news).
    pub fn next_unsacked_gap(&self, pos: u64, end: u64) -> Option<(u64, u64)> {
        self.sacked.next_gap(pos, end)
    }

    /// Marks one segment SACKed; returns its state before the change.
    pub fn mark_sacked(&mut self, seq: u64) -> SegState {
        let s = self.get_mut(seq);
        debug_assert!(!s.sacked);
        let before = *s;
        s.sacked = true;
        s.lost = false;
        s.retrans_in_flight = false;
        let len = u64::from(before.charge_bytes);
        self.sacked_bytes += len;
        self.sacked_segs += 1;
        if before.lost {
            self.lost_bytes -= len;
        }
        if before.needs_retransmission() {
            self.lost_waiting -= 1;
        }
        if before.retrans_in_flight {
            self.retrans_bytes -= len;
        }
        before
    }

    /// Records that `start..end` is SACKed (after its new segments went through
    /// [`Self::mark_sacked`]).
    pub fn insert_sacked_range(&mut self, start: u64, end: u64) -> SackBlock {
        self.sacked.insert(start, end)
    }

    /// End of the SACKed range containing `seq`, or `seq` if it is not SACKed.
    pub fn sacked_range_end(&self, seq: u64) -> u64 {
        self.sacked.find(seq).map_or(seq, |r| r.end)
    }

    /// Recomputes the pipe terms from scratch; a test oracle for the running sums.
    #[cfg(test)]
    pub fn check_invariants(&self) {
        let (mut out, mut sacked, mut lost, mut retrans, mut waiting) = (0, 0, 0, 0, 0);
        for (i, s) in self.segs.iter().enumerate() {
            let len = u64::from(s.charge_bytes);
            out += len;
            if s.sacked {
                sacked += len;
                assert!(self.sacked.find(self.una + i as u64).is_some());
            } else {
                assert!(self.sacked.find(self.una + i as u64).is_none());
                if s.lost {
                    lost += len;
                }
                if s.retrans_in_flight {
                    retrans += len;
                }
                if s.needs_retransmission() {
                    waiting += 1;
                }
            }
        }
        assert_eq!(
            (out, sacked, lost, retrans, waiting),
            (
                self.outstanding_bytes,
                self.sacked_bytes,
                self.lost_bytes,
                self.retrans_bytes,
                self.lost_waiting
            )
        );
        assert_eq!(self.sacked.covered_from(self.una), self.sacked_segs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board_with(n: u64) -> Scoreboard {
        let mut b = Scoreboard::new(64);
        for _ in 0..n {
            b.push_new(1000, 1000, PacketRateInfo::default());
        }
        b
    }

    fn sack(b: &mut Scoreboard, start: u64, end: u64) -> u64 {
        let mut newly = 0;
        let mut pos = start;
        while let Some((a, z)) = b.next_unsacked_gap(pos, end) {
            for seq in a..z {
                b.mark_sacked(seq);
                newly += 1;
            }
            pos = z;
        }
        b.insert_sacked_range(start, end);
        newly
    }

    #[test]
    fn pipe_follows_rfc_6675_through_sack_loss_and_retransmission() {
        let mut b = board_with(10);
        assert_eq!(b.pipe(), 10_000);
        assert_eq!(sack(&mut b, 3, 6), 3);
        assert_eq!(sack(&mut b, 3, 7), 1, "a repeated block only reports what is new");
        assert_eq!(b.pipe(), 6_000);
        assert!(b.mark_lost(1));
        assert!(b.mark_lost(2));
        assert!(!b.mark_lost(2), "already waiting for a retransmission");
        assert_eq!(b.pipe(), 4_000);
        assert_eq!(b.next_to_retransmit(), Some(1));
        b.on_retransmit(1, PacketRateInfo::default());
        assert_eq!(b.pipe(), 5_000, "a retransmission in flight counts again");
        assert_eq!(b.next_to_retransmit(), Some(2));
        // The retransmission of 1 is itself lost: it waits again, the pipe shrinks.
        assert!(b.mark_lost(1));
        assert_eq!(b.pipe(), 4_000);
        assert_eq!(b.next_to_retransmit(), Some(1));
        b.check_invariants();
        // Cumulative ACK up to 7: everything below goes.
        let popped: Vec<u64> =
            std::iter::from_fn(|| b.pop_acked().map(|(s, _)| s)).take(7).collect();
        assert_eq!(popped, (0..7).collect::<Vec<_>>());
        b.trim_sacked_ranges();
        assert_eq!(b.pipe(), 3_000);
        assert_eq!(b.next_to_retransmit(), None);
        b.check_invariants();
    }

    #[test]
    fn rto_marks_everything_not_sacked_lost() {
        let mut b = board_with(6);
        sack(&mut b, 4, 5);
        b.on_retransmit(5, PacketRateInfo::default()); // a TLP probe in flight
        b.mark_all_lost();
        assert_eq!(b.pipe(), 0);
        assert_eq!(b.next_to_retransmit(), Some(0));
        b.check_invariants();
        b.on_retransmit(0, PacketRateInfo::default());
        assert_eq!(b.pipe(), 1000);
        assert_eq!(b.next_to_retransmit(), Some(1));
        b.check_invariants();
    }

    #[test]
    fn an_undo_unmarks_every_loss_and_counts_the_segments_in_flight_again() {
        // Linux `tcp_undo_cwnd_reduction(sk, true)`: lost_out = 0, no TCPCB_LOST left.
        let mut b = board_with(8);
        sack(&mut b, 6, 8);
        for seq in 0..6 {
            assert!(b.mark_lost(seq));
        }
        assert_eq!(b.pipe(), 0);
        assert_eq!(b.next_to_retransmit(), Some(0));
        b.unmark_lost();
        assert_eq!((b.lost_bytes(), b.pipe()), (0, 6_000));
        assert_eq!(b.next_to_retransmit(), None, "nothing waits for a retransmission");
        b.check_invariants();
        // A later loss is marked and retransmitted as before.
        assert!(b.mark_lost(3));
        assert_eq!(b.next_to_retransmit(), Some(3));
        b.check_invariants();
    }
}
