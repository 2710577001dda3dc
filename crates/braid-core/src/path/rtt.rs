//! Round-trip time estimation per RFC 6298 (smoothed RTT, RTT variance, RTO) plus the minimum
//! RTT over the path's lifetime.

use std::time::Duration;

/// RFC 6298 section 2.4: "Whenever RTO is computed, if it is less than 1 second, then the RTO
/// SHOULD be rounded up to 1 second"; Linux and the simulator's scenarios use 200 ms instead.
pub const DEFAULT_MIN_RTO: Duration = Duration::from_millis(200);
/// RFC 6298 section 2.5: a maximum value may be placed on RTO provided it is at least 60 s.
pub const MAX_RTO: Duration = Duration::from_secs(60);
/// RFC 6298 section 2.1: before any sample, RTO is 1 second.
pub const INITIAL_RTO: Duration = Duration::from_secs(1);
/// Clock granularity G of RFC 6298 section 2.
pub const CLOCK_GRANULARITY: Duration = Duration::from_millis(1);

/// Smoothed RTT, RTT variance and RTO (RFC 6298 section 2), and min_rtt.
#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    latest: Duration,
    min_rtt: Option<Duration>,
    min_rto: Duration,
    /// [`RttEstimator::rto`], recomputed with each sample: timers read it far more often
    /// than samples arrive.
    rto: Duration,
}

impl RttEstimator {
    pub fn new(min_rto: Duration) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            latest: Duration::ZERO,
            min_rtt: None,
            min_rto,
            rto: INITIAL_RTO.max(min_rto),
        }
    }

    /// Feeds one RTT measurement `r` (RFC 6298 sections 2.2 and 2.3).
    pub fn update(&mut self, r: Duration) {
        self.latest = r;
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                let delta = srtt.abs_diff(r);
                // RTTVAR <- (1 - beta) * RTTVAR + beta * |SRTT - R'|, beta = 1/4
                self.rttvar = (self.rttvar * 3 + delta) / 4;
                // SRTT <- (1 - alpha) * SRTT + alpha * R', alpha = 1/8
                self.srtt = Some((srtt * 7 + r) / 8);
            }
        }
        self.rto = self.compute_rto();
    }

    /// Smoothed RTT, if any sample arrived.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }

    pub fn latest(&self) -> Duration {
        self.latest
    }

    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// RTO = SRTT + max(G, 4 * RTTVAR), clamped to [min_rto, 60 s] (RFC 6298 section 2).
    pub fn rto(&self) -> Duration {
        self.rto
    }

    fn compute_rto(&self) -> Duration {
        match self.srtt {
            None => INITIAL_RTO.max(self.min_rto),
            Some(srtt) => {
                (srtt + CLOCK_GRANULARITY.max(self.rttvar * 4)).clamp(self.min_rto, MAX_RTO)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        let mut e = RttEstimator::new(DEFAULT_MIN_RTO);
        assert_eq!(e.rto(), INITIAL_RTO);
        e.update(ms(100));
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50));
        // 100 + 4 * 50 = 300 ms
        assert_eq!(e.rto(), ms(300));
    }

    #[test]
    fn later_samples_use_the_rfc_gains() {
        let mut e = RttEstimator::new(DEFAULT_MIN_RTO);
        e.update(ms(100));
        e.update(ms(200));
        // rttvar = 3/4 * 50 + 1/4 * 100 = 62.5; srtt = 7/8 * 100 + 1/8 * 200 = 112.5
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
        assert_eq!(e.min_rtt(), Some(ms(100)));
    }

    #[test]
    fn rto_never_drops_below_the_minimum() {
        let mut e = RttEstimator::new(DEFAULT_MIN_RTO);
        for _ in 0..50 {
            e.update(ms(10));
        }
        assert_eq!(e.rto(), DEFAULT_MIN_RTO);
    }
}
