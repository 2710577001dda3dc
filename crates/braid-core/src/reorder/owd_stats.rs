//! One path's one-way-delay samples summarised, for reports: how far the delay varies over a
//! transfer and from one packet to the next. The reorder policies do not read it; it says how
//! much variation the adaptive wait limit had to cover, so that the simulator's paths and the
//! data plane's real ones can be compared sample for sample.
//!
//! - *Jitter*: the interarrival jitter of RTP (RFC 3550 section 6.4.1), computed on the packets
//!   that carry a send timestamp: `D = owd(j) - owd(i)` for consecutive samples i, j, and
//!   `J += (|D| - J) / 16`. The clocks' offset cancels in `D`.
//! - *Above the minimum*: the mean of `owd - min(owd)` over the run, the delay the path's
//!   samples carried beyond its fastest one (queueing, and the hosts' own delays).
//! - *Standard deviation* and *range* of the samples: the slow variation (queues filling and
//!   draining) that the jitter's 1/16 gain smooths away.
//!
//! All of them are differences of samples, so the unknown clock offset between sender and
//! receiver (the same for every sample) drops out.
//!
//! *Spacing*: a path's samples are taken at most one per [`SAMPLE_SPACING`] (1 ms). The daemon's
//! compact data messages carry no timestamp, and a time-sync frame brings one sample per path
//! and millisecond; without compact messages (and in the simulator) every data packet is a
//! sample, four a millisecond on a 50 Mbit/s path. The jitter of samples 1 ms apart also holds
//! the slow variation of that millisecond, so only samples taken at the same spacing compare.

use std::time::Duration;

use crate::time::Instant;

/// At most one sample per path per this interval enters the summary (see the module
/// documentation).
pub const SAMPLE_SPACING: Duration = Duration::from_millis(1);

/// The running summary of one path's samples.
#[derive(Clone, Copy, Debug, Default)]
pub struct OwdStats {
    samples: u64,
    /// When the last sample entered.
    last_at: Option<Instant>,
    /// The first sample, ns (clock offset included): the others are kept relative to it, so the
    /// floating-point sums stay small.
    first_ns: i128,
    /// Welford's running mean and sum of squared deviations of `owd - first`, ns.
    mean_ns: f64,
    m2: f64,
    min_ns: i128,
    max_ns: i128,
    prev_ns: i128,
    jitter_ns: f64,
}

/// What a report shows of one path's one-way delays (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OwdSummary {
    /// Timestamped packets sampled.
    pub samples: u64,
    /// RFC 3550 interarrival jitter at the end of the run, ms.
    pub jitter_ms: f64,
    /// Mean delay beyond the path's smallest sample, ms.
    pub mean_above_min_ms: f64,
    /// Standard deviation of the samples, ms.
    pub sd_ms: f64,
    /// Largest minus smallest sample, ms.
    pub range_ms: f64,
}

impl OwdStats {
    /// Offers the sample of a packet that arrived at `at`, ns (clock offset included); it enters
    /// unless the last one entered less than [`SAMPLE_SPACING`] before.
    pub fn add(&mut self, at: Instant, owd_ns: i128) {
        if self.last_at.is_some_and(|last| at.saturating_since(last) < SAMPLE_SPACING) {
            return;
        }
        self.last_at = Some(at);
        if self.samples == 0 {
            (self.first_ns, self.min_ns, self.max_ns, self.prev_ns) =
                (owd_ns, owd_ns, owd_ns, owd_ns);
        }
        self.samples += 1;
        let x = (owd_ns - self.first_ns) as f64;
        let delta = x - self.mean_ns;
        self.mean_ns += delta / self.samples as f64;
        self.m2 += delta * (x - self.mean_ns);
        self.min_ns = self.min_ns.min(owd_ns);
        self.max_ns = self.max_ns.max(owd_ns);
        let d = (owd_ns - self.prev_ns).abs() as f64;
        self.jitter_ns += (d - self.jitter_ns) / 16.0;
        self.prev_ns = owd_ns;
    }

    /// The summary so far; `None` before any sample.
    pub fn summary(&self) -> Option<OwdSummary> {
        (self.samples > 0).then(|| {
            let ms = |ns: f64| ns * 1e-6;
            let variance = if self.samples > 1 { self.m2 / (self.samples - 1) as f64 } else { 0.0 };
            OwdSummary {
                samples: self.samples,
                jitter_ms: ms(self.jitter_ns),
                mean_above_min_ms: ms(self.mean_ns - (self.min_ns - self.first_ns) as f64),
                sd_ms: ms(variance.sqrt()),
                range_ms: ms((self.max_ns - self.min_ns) as f64),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i128 = 1_000_000;
    /// A clock offset between sender and receiver: nothing reported may depend on it.
    const OFFSET: i128 = -1_000_000 * MS;

    /// One sample a millisecond.
    fn stats(owds_ms: &[i128]) -> OwdSummary {
        let mut s = OwdStats::default();
        for (i, &o) in owds_ms.iter().enumerate() {
            s.add(Instant::from_nanos(i as u64 * 1_000_000), OFFSET + o * MS);
        }
        s.summary().unwrap()
    }

    #[test]
    fn a_constant_delay_has_no_jitter_spread_or_excess() {
        let s = stats(&[20; 50]);
        assert_eq!(s, OwdSummary { samples: 50, ..OwdSummary::default() });
    }

    #[test]
    fn jitter_follows_rfc_3550_and_the_rest_the_samples() {
        // Alternating 20 and 30 ms: |D| = 10 ms each time after the first.
        let owds: Vec<i128> = (0..200).map(|i| if i % 2 == 0 { 20 } else { 30 }).collect();
        let s = stats(&owds);
        // J_n = 10 (1 - (15/16)^(n-1)) ms after n samples.
        let expected = 10.0 * (1.0 - (15.0f64 / 16.0).powi(199));
        assert!((s.jitter_ms - expected).abs() < 1e-9, "{s:?}");
        assert!((s.mean_above_min_ms - 5.0).abs() < 1e-9);
        assert!((s.range_ms - 10.0).abs() < 1e-12);
        // Sample standard deviation of 100 x 20 and 100 x 30.
        let sd = (200.0 * 25.0 / 199.0f64).sqrt();
        assert!((s.sd_ms - sd).abs() < 1e-9, "{s:?}");
        assert_eq!(OwdStats::default().summary(), None);
    }

    #[test]
    fn samples_closer_than_the_spacing_do_not_enter() {
        let mut s = OwdStats::default();
        // Every 0.25 ms, alternating 20 and 30 ms: only every fourth enters, all at 20 ms.
        for i in 0..400u64 {
            let owd = if i % 2 == 0 { 20 } else { 30 };
            s.add(Instant::from_nanos(i * 250_000), OFFSET + owd * MS);
        }
        let s = s.summary().unwrap();
        assert_eq!((s.samples, s.jitter_ms, s.range_ms), (100, 0.0, 0.0));
    }

    #[test]
    fn a_slow_ramp_shows_in_spread_not_in_jitter() {
        // A queue filling by 0.1 ms per packet: large range, jitter of 0.1 ms.
        let mut s = OwdStats::default();
        for i in 0..500 {
            s.add(Instant::from_nanos(i as u64 * 1_000_000), OFFSET + 20 * MS + i * MS / 10);
        }
        let s = s.summary().unwrap();
        assert!((s.jitter_ms - 0.1).abs() < 1e-6, "{s:?}");
        assert!((s.range_ms - 49.9).abs() < 1e-9);
        assert!(s.sd_ms > 14.0 && s.sd_ms < 15.0, "{s:?}");
    }
}
