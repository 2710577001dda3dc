//! What the emulator counts, per direction, and how late it sent.
//!
//! Written by `braid linkem --stats-json FILE` on exit as
//! `{"ab": DirectionStats, "ba": DirectionStats}`.

use serde::Serialize;

/// Width of a lateness bucket, ns.
const LATENESS_BUCKET_NS: u64 = 10_000;
/// Buckets of [`LATENESS_BUCKET_NS`]; later sends share the last one (10 ms and more).
const LATENESS_BUCKETS: usize = 1000;

/// How late frames were put on the wire: a fixed histogram of 10 us buckets up to 10 ms, so
/// recording is allocation-free and percentiles come out at 10 us resolution.
#[derive(Clone, Debug)]
pub struct LatenessHistogram {
    counts: Box<[u64; LATENESS_BUCKETS]>,
    total: u64,
    sum_ns: u64,
    max_ns: u64,
}

impl Default for LatenessHistogram {
    fn default() -> Self {
        LatenessHistogram {
            counts: Box::new([0; LATENESS_BUCKETS]),
            total: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

impl LatenessHistogram {
    pub fn record(&mut self, late_ns: u64) {
        let bucket = ((late_ns / LATENESS_BUCKET_NS) as usize).min(LATENESS_BUCKETS - 1);
        self.counts[bucket] += 1;
        self.total += 1;
        self.sum_ns = self.sum_ns.saturating_add(late_ns);
        self.max_ns = self.max_ns.max(late_ns);
    }

    /// The upper edge of the bucket holding the `q`-quantile (0 < q <= 1), ns: at least a
    /// fraction `q` of the sends were at most this late. Zero when nothing was recorded.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank && i + 1 < LATENESS_BUCKETS {
                return ((i as u64 + 1) * LATENESS_BUCKET_NS).min(self.max_ns);
            }
        }
        self.max_ns
    }

    pub fn summary(&self) -> LatenessSummary {
        let us = |ns: u64| ns as f64 / 1e3;
        LatenessSummary {
            frames: self.total,
            mean_us: if self.total == 0 { 0.0 } else { us(self.sum_ns) / self.total as f64 },
            p50_us: us(self.quantile_ns(0.5)),
            p99_us: us(self.quantile_ns(0.99)),
            max_us: us(self.max_ns),
        }
    }
}

/// Lateness of sends after their due time, us (quantiles at 10 us resolution, rounded up).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LatenessSummary {
    pub frames: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// Counters of one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct DirectionStats {
    /// Frames read on the input interface (oversize ones included).
    pub frames: u64,
    /// Their bytes, whole Ethernet frames.
    pub bytes: u64,
    /// Frames sent on the output interface, and their bytes.
    pub sent_frames: u64,
    pub sent_bytes: u64,
    /// Dropped at the tail of the full FIFO.
    pub drops_buffer: u64,
    /// Dropped by random loss.
    pub drops_loss: u64,
    /// Dropped by CoDel at the head of the FIFO.
    pub drops_codel: u64,
    /// Read truncated: larger than the interface MTU allows, typically a GSO/TSO super-frame
    /// from a peer whose offloads are on. Not forwarded.
    pub drops_oversize: u64,
    /// Sends the kernel refused (interface down, no buffer space).
    pub send_errors: u64,
    /// Receive errors reported by the socket (interface went down).
    pub recv_errors: u64,
    /// Frames still on the link when the emulator stopped.
    pub in_flight_at_exit: u64,
    /// Most frames ever in the FIFO.
    pub max_queue_pkts: u64,
    /// How late frames were sent after their due time.
    pub lateness: LatenessSummary,
    /// The learned wake-up lateness of the sender thread, us.
    pub wakeup_latency_us: f64,
}

/// Both directions, as `--stats-json` writes them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LinkemStats {
    pub ab: DirectionStats,
    pub ba: DirectionStats,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_come_from_10_us_buckets() {
        let mut h = LatenessHistogram::default();
        // 90 sends 5 us late (bucket 0-10 us), 10 sends 250 us late (bucket 250-260 us).
        for _ in 0..90 {
            h.record(5_000);
        }
        for _ in 0..10 {
            h.record(250_000);
        }
        let s = h.summary();
        assert_eq!(s.frames, 100);
        // Mean (90 * 5 + 10 * 250) / 100 = 29.5 us.
        assert!((s.mean_us - 29.5).abs() < 1e-9);
        // The 50th of 100 is in bucket 0: at most 10 us. The 99th is in the 250-260 us
        // bucket, whose upper edge exceeds the maximum, so the maximum (250 us) is reported.
        assert_eq!((s.p50_us, s.p99_us, s.max_us), (10.0, 250.0, 250.0));
    }

    #[test]
    fn stalls_land_in_the_last_bucket_and_the_max_keeps_them() {
        let mut h = LatenessHistogram::default();
        h.record(50_000_000);
        assert_eq!(h.quantile_ns(0.5), 50_000_000);
        assert_eq!(LatenessHistogram::default().summary(), LatenessSummary::default());
    }
}
