//! How late a timed sleep wakes up, learned online, so the sender can sleep until a frame's
//! due time minus that lateness and spin the rest (DESIGN.md section 7: on this VM a timer
//! wake-up arrives 100-150 us late at idle, which alone put a 40 ms RTT at 40.5-40.8 ms).
//!
//! # Estimator
//! The smoothed mean and mean deviation of RFC 6298 section 2 (gains 1/8 and 1/4), fed with
//! the lateness of every sleep that ended by its timer (`actual wake - requested wake`). The
//! sleep is cut short by `mean + K * deviation`, with K = 2 (RFC 6298 uses 4 because a
//! spurious retransmission timeout is costly; here waking early costs only spin time, and
//! waking late costs accuracy, so a smaller margin suffices).
//!
//! # Choices
//! - Samples are capped at [`MAX_SAMPLE_NS`]: a VM stall of several milliseconds (DESIGN.md
//!   section 7) says nothing about the next wake-up, and would otherwise make every later sleep
//!   end early and spin for milliseconds.
//! - The margin is kept in [[`MIN_MARGIN_NS`], [`MAX_MARGIN_NS`]]: some spin is always left to
//!   absorb a small surprise, and no wake-up spins longer than a millisecond.
//! - The first estimate is [`INITIAL_LATENESS_NS`], the idle lateness DESIGN.md measured, so
//!   the first frames are already on time.

/// First guess of the wake-up lateness: DESIGN.md section 7's measurement on this VM.
pub const INITIAL_LATENESS_NS: u64 = 150_000;
/// A lateness sample above this is a stall, not a wake-up: counted as this.
pub const MAX_SAMPLE_NS: u64 = 2_000_000;
/// Least margin: a little spin is always left before a due time.
pub const MIN_MARGIN_NS: u64 = 10_000;
/// Most margin: never spin longer than this before a due time.
pub const MAX_MARGIN_NS: u64 = 1_000_000;
/// RFC 6298's gains, as shifts: alpha = 1/8, beta = 1/4.
const MEAN_GAIN_SHIFT: u32 = 3;
const DEVIATION_GAIN_SHIFT: u32 = 2;
/// Deviations added to the mean lateness.
const DEVIATIONS_K: u64 = 2;

/// The learned lateness of timed wake-ups.
#[derive(Clone, Debug)]
pub struct WakeupLatency {
    mean_ns: u64,
    deviation_ns: u64,
    samples: u64,
}

impl Default for WakeupLatency {
    fn default() -> Self {
        WakeupLatency {
            mean_ns: INITIAL_LATENESS_NS,
            deviation_ns: INITIAL_LATENESS_NS / 2,
            samples: 0,
        }
    }
}

impl WakeupLatency {
    /// A timed sleep that asked to wake at some instant woke `late_ns` after it.
    pub fn on_timer_wakeup(&mut self, late_ns: u64) {
        let sample = late_ns.min(MAX_SAMPLE_NS);
        if self.samples == 0 {
            // RFC 6298 (2.2): the first measurement sets the mean, and half of it the deviation.
            self.mean_ns = sample;
            self.deviation_ns = sample / 2;
        } else {
            let error = self.mean_ns.abs_diff(sample);
            self.deviation_ns = self.deviation_ns - (self.deviation_ns >> DEVIATION_GAIN_SHIFT)
                + (error >> DEVIATION_GAIN_SHIFT);
            self.mean_ns =
                self.mean_ns - (self.mean_ns >> MEAN_GAIN_SHIFT) + (sample >> MEAN_GAIN_SHIFT);
        }
        self.samples += 1;
    }

    /// How long before a due time a sleep should end, leaving the rest to a spin.
    pub fn margin_ns(&self) -> u64 {
        (self.mean_ns + DEVIATIONS_K * self.deviation_ns).clamp(MIN_MARGIN_NS, MAX_MARGIN_NS)
    }

    /// The smoothed lateness, ns.
    pub fn mean_ns(&self) -> u64 {
        self.mean_ns
    }

    /// Timer wake-ups measured so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_from_the_measured_idle_lateness() {
        // 150 us + 2 * 75 us.
        assert_eq!(WakeupLatency::default().margin_ns(), 300_000);
    }

    #[test]
    fn the_first_sample_sets_mean_and_half_deviation() {
        let mut w = WakeupLatency::default();
        w.on_timer_wakeup(60_000);
        // RFC 6298 (2.2): mean 60 us, deviation 30 us, margin 60 + 2 * 30 = 120 us.
        assert_eq!((w.mean_ns(), w.margin_ns()), (60_000, 120_000));
    }

    #[test]
    fn steady_lateness_shrinks_the_margin_to_the_lateness() {
        let mut w = WakeupLatency::default();
        for _ in 0..200 {
            w.on_timer_wakeup(40_000);
        }
        // The deviation decays by 3/4 per sample towards zero; the margin tends to the mean
        // (40 us) and stays above the 10 us floor.
        assert_eq!(w.mean_ns(), 40_000);
        assert!((40_000..41_000).contains(&w.margin_ns()), "{}", w.margin_ns());
    }

    #[test]
    fn one_update_follows_rfc6298() {
        let mut w = WakeupLatency::default();
        w.on_timer_wakeup(80_000); // mean 80, deviation 40
        w.on_timer_wakeup(160_000);
        // deviation = 3/4 * 40 + 1/4 * |80 - 160| = 30 + 20 = 50 us
        // mean = 7/8 * 80 + 1/8 * 160 = 70 + 20 = 90 us; margin = 90 + 2 * 50 = 190 us.
        assert_eq!(w.margin_ns(), 190_000);
    }

    #[test]
    fn a_stall_counts_as_two_milliseconds_and_the_margin_stays_bounded() {
        let mut w = WakeupLatency::default();
        w.on_timer_wakeup(50_000);
        w.on_timer_wakeup(30_000_000);
        // mean = 7/8 * 50 + 1/8 * 2000 = 293.75 us; deviation = 3/4 * 25 + 1/4 * 1950 =
        // 506.25 us; mean + 2 deviations = 1306.25 us, capped at 1 ms.
        assert_eq!(w.mean_ns(), 293_750);
        assert_eq!(w.margin_ns(), MAX_MARGIN_NS);
        for _ in 0..100 {
            w.on_timer_wakeup(0);
        }
        assert_eq!(w.margin_ns(), MIN_MARGIN_NS);
    }
}
