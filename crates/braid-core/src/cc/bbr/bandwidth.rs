//! The bandwidth half of BBR's model: packet-timed rounds, the windowed max of delivery-rate
//! samples (`bbr_update_bw`), and the ACK-aggregation allowance
//! (`bbr_update_ack_aggregation`).

use super::config::BBR_EXTRA_ACKED_WIN_RTTS;
use super::{Bbr, Gain};
use crate::cc::{AckEvent, RateSample};

impl Bbr {
    /// The windowed max delivery rate, in bytes/s (`bbr_max_bw`).
    pub(super) fn max_bw(&self) -> u64 {
        self.bw_filter.get()
    }

    /// The bandwidth the controls use: the policed rate if a policer was detected, else the
    /// windowed max (`bbr_bw`).
    pub(super) fn bw(&self) -> u64 {
        if self.long_term.use_bw {
            self.long_term.bw_bytes_per_s
        } else {
            self.max_bw()
        }
    }

    /// Counts rounds and feeds the sample into the max filter (`bbr_update_bw`).
    pub(super) fn update_bw(&mut self, ack: &AckEvent, rs: Option<&RateSample>) {
        self.round_start = false;
        let Some((rs, bw)) = rs.and_then(|rs| Some((rs, rs.delivery_rate_bytes_per_s()?))) else {
            return; // not a valid observation
        };

        // A round ends when a packet sent after the previous round ended is acknowledged.
        if rs.prior_delivered_bytes >= self.next_round_delivered_bytes {
            self.next_round_delivered_bytes = ack.delivered_bytes;
            self.round_count += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }

        self.lt_bw_sampling(ack.newly_lost_bytes, rs.is_app_limited);

        // An app-limited sample measures the application, not the path: it may raise the
        // estimate but never lower it, so the estimate holds through app-limited periods.
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw_filter.update(self.round_count, bw);
        }
    }

    /// Measures how much data ACKs deliver beyond what `bw` explains, to provision cwnd for
    /// ACK aggregation (`bbr_update_ack_aggregation`). v1 times the epoch by the delivery
    /// clock and keeps the max over windows of 5 rounds.
    pub(super) fn update_ack_aggregation(&mut self, ack: &AckEvent, rs: Option<&RateSample>) {
        let valid = rs.and_then(RateSample::delivery_rate_bytes_per_s).is_some();
        if self.config.extra_acked_gain == Gain(0) || ack.newly_acked_bytes == 0 || !valid {
            return;
        }
        if self.round_start {
            self.ack_aggregation.on_round_start(BBR_EXTRA_ACKED_WIN_RTTS);
        }
        let (bw, cwnd) = (self.bw(), self.out.cwnd_bytes);
        let acked = ack.newly_acked_bytes;
        self.ack_aggregation.update(self.delivered_time, bw, acked, cwnd, self.mss_bytes);
    }

    /// Extra cwnd for ACK aggregation, once the pipe is full (`bbr_ack_aggregation_cwnd`).
    pub(super) fn ack_aggregation_cwnd(&self) -> u64 {
        if self.config.extra_acked_gain == Gain(0) || !self.full_bw_reached {
            return 0;
        }
        self.ack_aggregation.cwnd_bytes(self.config.extra_acked_gain, self.bw())
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{ms, params, Ack, Driver, MSS};
    use super::super::{Bbr, BbrConfig, Gain, Mode};

    const RTT: std::time::Duration = ms(100);

    #[test]
    fn bw_filter_forgets_a_sample_after_10_rounds() {
        let mut d = Driver::new(Bbr::new(params()));
        d.round(1_000_000, RTT, 100 * MSS, false);
        assert_eq!(d.bbr.bw(), 1_000_000);
        for r in 1..=10 {
            d.round(500_000, RTT, 100 * MSS, false);
            assert_eq!(
                d.bbr.bw(),
                1_000_000,
                "{r} rounds after the peak it is still in the window"
            );
        }
        d.round(500_000, RTT, 100 * MSS, false);
        assert_eq!(d.bbr.bw(), 500_000, "11 rounds after the peak it is gone");
    }

    #[test]
    fn app_limited_samples_do_not_lower_the_estimate() {
        let mut d = Driver::new(Bbr::new(params()));
        d.round(1_000_000, RTT, 100 * MSS, false);
        for _ in 0..30 {
            d.round(200_000, RTT, 10 * MSS, true);
        }
        assert_eq!(d.bbr.bw(), 1_000_000, "30 app-limited rounds left the estimate alone");
        // ... but an app-limited sample above the estimate is a real observation.
        d.round(1_500_000, RTT, 10 * MSS, true);
        assert_eq!(d.bbr.bw(), 1_500_000);
    }

    #[test]
    fn a_round_ends_only_when_a_packet_sent_after_it_began_is_acked() {
        let mut d = Driver::new(Bbr::new(params()));
        d.round(1_000_000, RTT, 100 * MSS, false);
        assert_eq!(d.bbr.round_count, 1);
        for _ in 0..50 {
            d.ack(Ack { bw: Some(1_000_000), ..Ack::default() });
            assert!(!d.bbr.round_start);
        }
        assert_eq!(d.bbr.round_count, 1, "ACKs for the previous round's packets");
        d.ack(Ack { bw: Some(1_000_000), ends_round: true, ..Ack::default() });
        assert_eq!(d.bbr.round_count, 2);
        assert!(d.bbr.round_start);
    }

    #[test]
    fn ack_aggregation_adds_the_excess_acked_to_the_cwnd_target() {
        // 1 MB/s over 100 ms: BDP 100 packets, ProbeBW target 2 * 100 + 3 -> 204 packets (+2
        // in the probe phase). ACKs then arrive in 20-packet bursts every 20 ms: on average
        // at `bw`, but 20 packets ahead of it right after each burst.
        let mut d = Driver::new(Bbr::new(params()));
        d.clocked(1_000_000, RTT, 100 * MSS, ms(600));
        assert_eq!(d.bbr.mode, Mode::ProbeBw);
        let probe_extra = |b: &Bbr| if b.cycle_idx == 0 { 2 * MSS } else { 0 };
        assert_eq!(d.bbr.out.cwnd_bytes, 204 * MSS + probe_extra(&d.bbr));
        for i in 0..100 {
            d.ack(Ack {
                after: ms(20),
                acked: 20 * MSS,
                bw: Some(1_000_000),
                ends_round: i % 5 == 0,
                ..Ack::default()
            });
        }
        // 200 + 20 + 3 packets, rounded up to an even count.
        assert_eq!(d.bbr.out.cwnd_bytes, 224 * MSS + probe_extra(&d.bbr));

        // Without the allowance (extra_acked_gain 0) the same ACKs leave the target alone.
        let config = BbrConfig { extra_acked_gain: Gain(0), ..BbrConfig::default() };
        let mut d = Driver::new(Bbr::with_config(params(), config));
        d.clocked(1_000_000, RTT, 100 * MSS, ms(600));
        for i in 0..100 {
            let ends_round = i % 5 == 0;
            d.ack(Ack {
                after: ms(20),
                acked: 20 * MSS,
                bw: Some(1_000_000),
                ends_round,
                ..Ack::default()
            });
        }
        assert_eq!(d.bbr.out.cwnd_bytes, 204 * MSS + probe_extra(&d.bbr));
    }
}
