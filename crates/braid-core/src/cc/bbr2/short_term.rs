//! The short-term model, `bw_lo` and `inflight_lo` (draft "When not Probing for Bandwidth":
//! `UpdateCongestionSignals`, `AdaptLowerBoundsFromCongestion`, `LossLowerBounds`; kernel
//! `bbr_update_congestion_signals`, `bbr_adapt_lower_bounds`).
//!
//! Outside the accelerating phases (Startup, REFILL, UP), a round in which a loss was
//! declared means the path now carries less than BBR assumed, perhaps because another flow
//! arrived. At the end of each such loss round both bounds shrink to
//! `max(latest, beta * bound)`: at most 30% per round, and never below what the path
//! delivered in the last round. They start from `max_bw` and the cwnd on the first lossy
//! round, and are forgotten (set to infinity) when the next probe begins (REFILL) or
//! ProbeRTT ends.

use super::{Bbr2, Mode, ProbeBwPhase, UNSET};
use crate::cc::{AckEvent, RateSample};

impl Bbr2 {
    /// Whether BBR is accelerating on purpose, so losses are the probe's own doing
    /// (`IsProbingBW`, `bbr_is_probing_bandwidth`).
    pub(super) fn is_probing_bw(&self) -> bool {
        matches!(self.mode, Mode::Startup | Mode::ProbeBw(ProbeBwPhase::Refill | ProbeBwPhase::Up))
    }

    /// Feeds the max filter, notes losses, and once per loss round adapts the short-term
    /// bounds.
    pub(super) fn update_congestion_signals(&mut self, ack: &AckEvent, rs: Option<&RateSample>) {
        let Some(rs) = rs.filter(|_| ack.newly_acked_bytes > 0 && self.sample_bw_bytes_per_s > 0)
        else {
            return; // not a valid observation
        };
        self.take_max_bw_sample(rs);
        self.loss_in_round |= ack.newly_lost_bytes > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds();
        self.loss_in_round = false;
    }

    /// Marks the current round as lossy; the first loss starts a loss round that ends one
    /// round trip later (`NoteLoss`, `bbr_note_loss`).
    pub(super) fn note_loss(&mut self) {
        if !self.loss_in_round {
            self.loss_round_delivered_bytes = self.delivered_bytes;
        }
        self.loss_in_round = true;
    }

    /// Once per loss round: `bw_lo = max(bw_latest, beta * bw_lo)` and the same for
    /// inflight, unless BBR is probing.
    fn adapt_lower_bounds(&mut self) {
        if self.is_probing_bw() || !self.loss_in_round {
            return;
        }
        if self.bw_lo_bytes_per_s == UNSET {
            self.bw_lo_bytes_per_s = self.max_bw();
        }
        if self.inflight_lo_bytes == UNSET {
            self.inflight_lo_bytes = self.out.cwnd_bytes;
        }
        let beta =
            |x: u64| x / 100 * self.config.beta_percent + x % 100 * self.config.beta_percent / 100;
        self.bw_lo_bytes_per_s =
            self.bw_latest_bytes_per_s.max(beta(self.bw_lo_bytes_per_s)).max(1);
        self.inflight_lo_bytes = self.inflight_latest_bytes.max(beta(self.inflight_lo_bytes));
    }

    /// Forgets the short-term bounds so inflight can rise again (`ResetShortTermModel`,
    /// `bbr_reset_lower_bounds`).
    pub(super) fn reset_lower_bounds(&mut self) {
        self.bw_lo_bytes_per_s = UNSET;
        self.inflight_lo_bytes = UNSET;
    }

    /// Forgets this cycle's loss signals before a phase that adapts to them
    /// (`ResetCongestionSignals`, `bbr_reset_congestion_signals`).
    pub(super) fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.bw_latest_bytes_per_s = 0;
        self.inflight_latest_bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{ms, params, Ack, Driver, MSS};
    use super::super::{Bbr2, Mode, ProbeBwPhase, Version, UNSET};

    /// A driver in ProbeBW_CRUISE at 1 MB/s and 100 ms.
    fn cruising() -> Driver {
        let mut d = Driver::new(Bbr2::new(params(), Version::V3));
        d.clocked(1_000_000, ms(100), 100 * MSS, ms(1000));
        d.bbr.mode = Mode::ProbeBw(ProbeBwPhase::Cruise);
        d
    }

    #[test]
    fn a_lossy_round_cuts_bw_lo_and_inflight_lo_to_beta_but_not_below_latest() {
        let mut d = cruising();
        assert_eq!(d.bbr.bw_lo_bytes_per_s, UNSET);
        // The path slows down: a round at 500 kB/s delivering 50 packets per sample, so the
        // one-round maxima ("latest") restart at those values.
        let a = Ack { bw: Some(500_000), delivered: Some(50 * MSS), ..Ack::default() };
        for _ in 0..10 {
            d.ack(a);
        }
        d.ack(Ack { ends_round: true, ..a });
        assert_eq!(d.bbr.bw_latest_bytes_per_s, 500_000);
        let cwnd = d.bbr.out.cwnd_bytes;
        // A loss, then the rest of its round.
        d.loss(MSS);
        for _ in 0..10 {
            d.ack(a);
        }
        assert_eq!(d.bbr.bw_lo_bytes_per_s, UNSET, "the loss round has not ended");
        d.ack(Ack { ends_round: true, ..a });
        // bw_lo = max(500 000, 0.7 * 1 000 000) = 700 000; inflight_lo = max(50 000, 0.7 cwnd).
        assert_eq!(d.bbr.bw_lo_bytes_per_s, 700_000);
        assert_eq!(d.bbr.inflight_lo_bytes, (cwnd * 7 / 10).max(50 * MSS));
        assert_eq!(d.bbr.bw(), 700_000);

        // A second lossy round: 0.7 * 700 000 = 490 000 < 500 000 latest, so 500 000.
        d.loss(MSS);
        for _ in 0..10 {
            d.ack(a);
        }
        d.ack(Ack { ends_round: true, ..a });
        assert_eq!(d.bbr.bw_lo_bytes_per_s, 500_000);

        // A round without loss leaves the bounds alone.
        for _ in 0..10 {
            d.ack(a);
        }
        d.ack(Ack { ends_round: true, ..a });
        assert_eq!(d.bbr.bw_lo_bytes_per_s, 500_000);
    }

    #[test]
    fn losses_while_probing_leave_the_short_term_bounds_alone() {
        let mut d = cruising();
        d.bbr.mode = Mode::ProbeBw(ProbeBwPhase::Refill);
        d.loss(MSS);
        for _ in 0..10 {
            d.ack(Ack { bw: Some(500_000), ..Ack::default() });
        }
        d.ack(Ack { bw: Some(500_000), ends_round: true, ..Ack::default() });
        assert_eq!(d.bbr.bw_lo_bytes_per_s, UNSET);
        assert_eq!(d.bbr.inflight_lo_bytes, UNSET);
    }
}
