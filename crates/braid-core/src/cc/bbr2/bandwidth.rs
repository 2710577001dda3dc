//! The bandwidth half of the model: packet-timed rounds (draft `UpdateRound`), `max_bw` over
//! two ProbeBW cycles (`UpdateMaxBw`, `AdvanceMaxBwFilter`; kernel `bbr_take_max_bw_sample`,
//! `bbr_advance_max_bw_filter`), the one-round "latest" delivery signals
//! (`UpdateLatestDeliverySignals`, `AdvanceLatestDeliverySignals`) and the ACK-aggregation
//! allowance (`UpdateACKAggregation`, `bbr_update_ack_aggregation`).
//!
//! Unlike v1's 10-round max filter, `max_bw` keeps two slots: the max of the previous ProbeBW
//! cycle and the max of the current one. The window advances one round after a probe ends,
//! when the probe's samples have arrived, so an estimate lives one to two cycles (2-6 s)
//! however many rounds that is.

use super::Bbr2;
use crate::cc::{AckEvent, RateSample};

/// Rounds per half of the aggregation max filter after Startup (`bbr_extra_acked_win_rtts`);
/// in Startup the halves last one round (draft: "just remember 1 round").
const EXTRA_ACKED_WIN_RTTS: u32 = 5;

impl Bbr2 {
    /// The max delivery rate of this and the previous ProbeBW cycle (`bbr_max_bw`).
    pub(super) fn max_bw(&self) -> u64 {
        self.max_bw_bytes_per_s[0].max(self.max_bw_bytes_per_s[1])
    }

    /// The rate the controls use: `max_bw` bounded by the short-term `bw_lo` (draft
    /// `BoundBWForModel`, `bbr_bw`).
    pub(super) fn bw(&self) -> u64 {
        self.max_bw().min(self.bw_lo_bytes_per_s)
    }

    /// Counts a round when the sampled packet was sent after the current round began.
    pub(super) fn update_round(&mut self, rs: Option<&RateSample>) {
        self.round_start = false;
        self.sample_bw_bytes_per_s = 0;
        let Some((rs, bw)) = rs.and_then(|rs| Some((rs, rs.delivery_rate_bytes_per_s()?))) else {
            return; // not a valid observation
        };
        self.sample_bw_bytes_per_s = bw;
        if rs.prior_delivered_bytes >= self.next_round_delivered_bytes {
            self.start_round();
            self.round_count += 1;
            self.round_start = true;
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(255);
            self.cwnd_limited_last_round = self.cwnd_limited_this_round;
            self.cwnd_limited_this_round = false;
        }
    }

    /// The current round ends with the ACK of a packet sent from now on (`StartRound`).
    pub(super) fn start_round(&mut self) {
        self.next_round_delivered_bytes = self.delivered_bytes;
    }

    /// Whether the cwnd limited sending in this or the last round (`tp->is_cwnd_limited`).
    pub(super) fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited_this_round || self.cwnd_limited_last_round
    }

    /// Adds a sample to the current cycle's slot. An app-limited sample measures the
    /// application, not the path: it may raise the estimate but never lower it.
    pub(super) fn take_max_bw_sample(&mut self, rs: &RateSample) {
        let bw = self.sample_bw_bytes_per_s;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.max_bw_bytes_per_s[1] = self.max_bw_bytes_per_s[1].max(bw);
        }
    }

    /// Starts a new cycle slot; a cycle without samples keeps the old one.
    pub(super) fn advance_max_bw_filter(&mut self) {
        if self.max_bw_bytes_per_s[1] == 0 {
            return;
        }
        self.max_bw_bytes_per_s = [self.max_bw_bytes_per_s[1], 0];
    }

    /// Updates the one-round maxima of rate and delivered volume, and detects the end of a
    /// loss round (a round that begins at the first loss, `bbr_note_loss`).
    pub(super) fn update_latest_delivery_signals(
        &mut self,
        ack: &AckEvent,
        rs: Option<&RateSample>,
    ) {
        self.loss_round_start = false;
        let Some(rs) = rs.filter(|_| ack.newly_acked_bytes > 0 && self.sample_bw_bytes_per_s > 0)
        else {
            return;
        };
        self.bw_latest_bytes_per_s = self.bw_latest_bytes_per_s.max(self.sample_bw_bytes_per_s);
        self.inflight_latest_bytes = self.inflight_latest_bytes.max(rs.delivered_bytes);
        if rs.prior_delivered_bytes >= self.loss_round_delivered_bytes {
            self.loss_round_delivered_bytes = self.delivered_bytes;
            self.loss_round_start = true;
        }
    }

    /// After a loss round ends, the one-round maxima restart from this ACK's sample.
    pub(super) fn advance_latest_delivery_signals(&mut self, rs: Option<&RateSample>) {
        if let Some(rs) = rs.filter(|_| self.loss_round_start) {
            self.bw_latest_bytes_per_s = self.sample_bw_bytes_per_s;
            self.inflight_latest_bytes = rs.delivered_bytes;
        }
    }

    /// Measures how much data ACKs deliver beyond what `bw` explains, to provision cwnd for
    /// ACK aggregation. v2/v3 time the epoch by the ACK's arrival, and in Startup the max
    /// filter remembers only the last round or two.
    pub(super) fn update_ack_aggregation(&mut self, ack: &AckEvent, rs: Option<&RateSample>) {
        if self.config.extra_acked_gain.0 == 0
            || ack.newly_acked_bytes == 0
            || rs.is_none()
            || self.sample_bw_bytes_per_s == 0
        {
            return;
        }
        if self.round_start {
            let win = if self.full_bw_reached { EXTRA_ACKED_WIN_RTTS } else { 1 };
            self.ack_aggregation.on_round_start(win);
        }
        let (bw, cwnd) = (self.bw(), self.out.cwnd_bytes);
        self.ack_aggregation.update(ack.now, bw, ack.newly_acked_bytes, cwnd, self.mss_bytes);
    }

    /// Extra cwnd for ACK aggregation, in Startup too (`bbr_ack_aggregation_cwnd`).
    pub(super) fn ack_aggregation_cwnd(&self) -> u64 {
        if self.config.extra_acked_gain.0 == 0 {
            return 0;
        }
        self.ack_aggregation.cwnd_bytes(self.config.extra_acked_gain, self.bw())
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{ms, params, Ack, Driver, MSS};
    use super::super::{Bbr2, Version};

    #[test]
    fn max_bw_spans_the_current_and_the_previous_cycle() {
        let mut bbr = Bbr2::new(params(), Version::V3);
        bbr.max_bw_bytes_per_s = [900, 0];
        bbr.advance_max_bw_filter();
        assert_eq!(bbr.max_bw(), 900, "a cycle without samples keeps the old slot");
        bbr.max_bw_bytes_per_s[1] = 500;
        assert_eq!(bbr.max_bw(), 900);
        bbr.advance_max_bw_filter();
        assert_eq!(bbr.max_bw_bytes_per_s, [500, 0]);
        assert_eq!(bbr.max_bw(), 500, "900 was two cycles ago");
    }

    #[test]
    fn bw_is_max_bw_bounded_by_bw_lo() {
        let mut d = Driver::new(Bbr2::new(params(), Version::V3));
        d.round(1_000_000, ms(100), 100 * MSS, false);
        assert_eq!(d.bbr.bw(), 1_000_000);
        d.bbr.bw_lo_bytes_per_s = 700_000;
        assert_eq!(d.bbr.bw(), 700_000);
    }

    #[test]
    fn app_limited_samples_only_raise_max_bw() {
        let mut d = Driver::new(Bbr2::new(params(), Version::V3));
        d.round(1_000_000, ms(100), 100 * MSS, false);
        for _ in 0..5 {
            d.round(200_000, ms(100), 10 * MSS, true);
        }
        assert_eq!(d.bbr.max_bw(), 1_000_000);
        d.round(1_500_000, ms(100), 10 * MSS, true);
        assert_eq!(d.bbr.max_bw(), 1_500_000);
    }

    #[test]
    fn a_round_ends_only_when_a_packet_sent_after_it_began_is_acked() {
        let mut d = Driver::new(Bbr2::new(params(), Version::V3));
        d.round(1_000_000, ms(100), 100 * MSS, false);
        let rounds = d.bbr.round_count;
        for _ in 0..20 {
            d.ack(Ack { bw: Some(1_000_000), ..Ack::default() });
            assert!(!d.bbr.round_start);
        }
        d.ack(Ack { bw: Some(1_000_000), ends_round: true, ..Ack::default() });
        assert_eq!(d.bbr.round_count, rounds + 1);
    }
}
