//! Round-trip time estimation per RFC 6298 (smoothed RTT, RTT variance, RTO) plus the minimum
//! RTT over the path's lifetime.
//!
//! Linux computes the RTO differently ([`RttEstimator::linux`]): `tcp_rtt_estimator`
//! (net/ipv4/tcp_input.c) keeps the variance term it adds to the smoothed RTT, `rttvar_us`, at
//! least `tcp_rto_min` (200 ms), and `__tcp_set_rto` returns `srtt + rttvar_us`. So Linux's RTO
//! is at least 200 ms *above* the smoothed RTT, where RFC 6298 floors the whole RTO at 200 ms
//! (with a 1 s floor recommended). With a smoothed RTT of 200 ms and a steady path the two give
//! about 400 ms and 200 ms. Modelled: `srtt + max(4 * rttvar, min_rto)`; Linux's per-round-trip
//! decay of `rttvar_us` toward the round's largest deviation and its smaller gain for falling
//! RTTs are left out.

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
    /// Linux's rule: `min_rto` floors the variance term, not the RTO (module documentation).
    linux: bool,
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
            linux: false,
        }
    }

    /// An estimator whose RTO is Linux's: `srtt + max(4 * rttvar, min_rto)` (module
    /// documentation); before the first sample, 1 s as in RFC 6298 and Linux (`TCP_TIMEOUT_INIT`).
    pub fn linux(min_rto: Duration) -> Self {
        RttEstimator { linux: true, ..RttEstimator::new(min_rto) }
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
            Some(srtt) if self.linux => (srtt + self.min_rto.max(self.rttvar * 4)).min(MAX_RTO),
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

    /// A steady 200 ms path: RFC 6298's RTO converges to the smoothed RTT (the variance decays,
    /// the 200 ms floor is below it), Linux's keeps 200 ms above it.
    #[test]
    fn linux_keeps_the_rto_min_above_the_smoothed_rtt() {
        let (mut rfc, mut linux) =
            (RttEstimator::new(DEFAULT_MIN_RTO), RttEstimator::linux(DEFAULT_MIN_RTO));
        assert_eq!((rfc.rto(), linux.rto()), (INITIAL_RTO, INITIAL_RTO));
        for _ in 0..200 {
            rfc.update(ms(200));
            linux.update(ms(200));
        }
        assert_eq!(rfc.srtt(), Some(ms(200)));
        assert!(rfc.rto() < ms(202), "{:?}", rfc.rto());
        assert_eq!(linux.rto(), ms(400));
        // With a large variance both add 4 * rttvar.
        let mut jumpy = RttEstimator::linux(DEFAULT_MIN_RTO);
        jumpy.update(ms(100));
        assert_eq!(jumpy.rto(), ms(100) + ms(200), "first sample: rttvar = r / 2 = 50 ms, x4");
        jumpy.update(ms(500));
        assert!(jumpy.rto() > ms(150) + ms(400), "{:?}", jumpy.rto());
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
