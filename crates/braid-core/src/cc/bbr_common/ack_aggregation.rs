//! The ACK-aggregation estimator (Linux `bbr_update_ack_aggregation`, `bbr_extra_acked`,
//! `bbr_ack_aggregation_cwnd`; draft-ietf-ccwg-bbr `UpdateACKAggregation`).
//!
//! Wi-Fi, cellular links and receivers that delay or stretch ACKs deliver acknowledgements in
//! bursts: for a while less arrives than `bw` explains, then more. If the cwnd held only
//! `cwnd_gain * BDP`, the sender would stall while waiting for the next burst. The estimator
//! counts the bytes ACKed since an epoch began, subtracts what `bw` would have delivered in
//! that time, and keeps the max of that excess over two windows of rounds; the cwnd target
//! then adds it, capped at 100 ms of `bw`. v1 and v2/v3 run the same estimator; they differ
//! in which clock times the epoch and how many rounds a window lasts, which the caller
//! passes in.

use std::time::Duration;

use super::gain::Gain;
use crate::time::{bytes_in, Instant};

/// An aggregation epoch that has counted this many packets is restarted (the kernel's field
/// is 20 bits wide), so one very old epoch cannot inflate the estimate.
pub const BBR_ACK_EPOCH_ACKED_RESET_THRESH_PKTS: u64 = 1 << 20;
/// The aggregation allowance never exceeds what the estimated bandwidth carries in 100 ms.
pub const BBR_EXTRA_ACKED_MAX_US: u64 = 100_000;

/// How far ACKed data ran ahead of `bw` in the current epoch, and the max of that excess
/// over two windows.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct AckAggregation {
    epoch_start: Instant,
    epoch_acked_bytes: u64,
    extra_acked_bytes: [u64; 2],
    win_rtts: u32,
    win_idx: usize,
}

impl AckAggregation {
    /// Starts a new sampling epoch at `now`.
    pub fn start(&mut self, now: Instant) {
        self.epoch_start = now;
        self.epoch_acked_bytes = 0;
    }

    /// Counts a round; after `win_rtts` rounds the older window is cleared and becomes the
    /// current one, so the max spans `win_rtts` to `2 * win_rtts` rounds.
    pub fn on_round_start(&mut self, win_rtts: u32) {
        self.win_rtts = (self.win_rtts + 1).min(31);
        if self.win_rtts >= win_rtts {
            self.win_rtts = 0;
            self.win_idx ^= 1;
            self.extra_acked_bytes[self.win_idx] = 0;
        }
    }

    /// Adds an ACK of `acked_bytes` at `now`, against the model rate `bw` (bytes/s). The
    /// excess is capped at `cwnd_bytes`. The epoch restarts when ACKs fall behind the model,
    /// or when it has counted 2^20 packets (the kernel's counter is 20 bits wide), so one
    /// very old epoch cannot inflate the estimate.
    pub fn update(&mut self, now: Instant, bw: u64, acked_bytes: u64, cwnd_bytes: u64, mss: u64) {
        let reset_bytes = BBR_ACK_EPOCH_ACKED_RESET_THRESH_PKTS * mss;
        // Data the bandwidth model expects to have been ACKed since the epoch began.
        let mut expected = bytes_in(bw, now.saturating_since(self.epoch_start));
        if self.epoch_acked_bytes <= expected || self.epoch_acked_bytes + acked_bytes >= reset_bytes
        {
            self.start(now);
            expected = 0;
        }
        self.epoch_acked_bytes = (self.epoch_acked_bytes + acked_bytes).min(reset_bytes - 1);
        let extra = self.epoch_acked_bytes.saturating_sub(expected).min(cwnd_bytes);
        let slot = &mut self.extra_acked_bytes[self.win_idx];
        *slot = (*slot).max(extra);
    }

    /// The cwnd allowance: `gain` times the max excess of the two windows, capped at what
    /// `bw` carries in 100 ms (`bbr_extra_acked_max_us`).
    pub fn cwnd_bytes(&self, gain: Gain, bw: u64) -> u64 {
        let extra = self.extra_acked_bytes[0].max(self.extra_acked_bytes[1]);
        let cap = bytes_in(bw, Duration::from_micros(BBR_EXTRA_ACKED_MAX_US));
        gain.apply(extra).min(cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn at(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    #[test]
    fn the_excess_is_what_was_acked_beyond_bw_since_the_epoch_began() {
        // 1 MB/s. Epoch at 0; an ACK of 10 kB at 0 ms restarts it (0 <= 0 expected) and
        // counts 10 kB: excess 10 kB. At 5 ms, 5 kB expected, 20 kB acked: excess 15 kB.
        let mut agg = AckAggregation::default();
        agg.update(at(0), 1_000_000, 10 * MSS, 1_000 * MSS, MSS);
        assert_eq!(agg.cwnd_bytes(Gain::ONE, 1_000_000), 10 * MSS);
        agg.update(at(5), 1_000_000, 10 * MSS, 1_000 * MSS, MSS);
        assert_eq!(agg.cwnd_bytes(Gain::ONE, 1_000_000), 15 * MSS);
        // At 40 ms, 40 kB were expected but only 20 kB acked: a new epoch starts, the max
        // holds.
        agg.update(at(40), 1_000_000, MSS, 1_000 * MSS, MSS);
        assert_eq!(agg.cwnd_bytes(Gain::ONE, 1_000_000), 15 * MSS);
        // Gain 2 doubles it; the 100 ms cap at 100 kB/s is 10 kB; a 12 kB cwnd caps the
        // excess itself.
        assert_eq!(agg.cwnd_bytes(Gain(512), 1_000_000), 30 * MSS);
        assert_eq!(agg.cwnd_bytes(Gain::ONE, 100_000), 10 * MSS);
        let mut small = AckAggregation::default();
        small.update(at(0), 1_000_000, 20 * MSS, 12 * MSS, MSS);
        assert_eq!(small.cwnd_bytes(Gain::ONE, 1_000_000), 12 * MSS);
    }

    #[test]
    fn a_window_of_five_rounds_keeps_the_max_for_five_to_ten_rounds() {
        let mut agg = AckAggregation::default();
        agg.update(at(0), 1_000_000, 30 * MSS, 1_000 * MSS, MSS);
        // The 30 kB excess sits in window 0. The fifth round makes the (empty) window 1
        // current; the tenth makes window 0 current again and clears it.
        for round in 1..=9 {
            agg.on_round_start(5);
            assert_eq!(agg.cwnd_bytes(Gain::ONE, 1_000_000), 30 * MSS, "round {round}");
        }
        agg.on_round_start(5);
        assert_eq!(agg.cwnd_bytes(Gain::ONE, 1_000_000), 0, "ten rounds later");
    }
}
