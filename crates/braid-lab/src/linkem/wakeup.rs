//! How late a timed sleep wakes up, learned online, so the sender can sleep until a frame's
//! due time minus that lateness and spin the rest (docs/design.md section 7: on this VM a timer
//! wake-up arrives 100-150 us late at idle, which alone put a 40 ms RTT at 40.5-40.8 ms).
//!
//! # Estimator
//! An exponentially weighted mean of the lateness of every sleep that ended by its timer
//! (`actual wake - requested wake`), with RFC 6298's smoothing gain 1/8 (section 2, SRTT). The
//! sleep is cut short by that mean: about half the wake-ups then come early and spin until the
//! due time, the others are late by the jitter above the mean.
//!
//! # Choices
//! - The margin is the mean alone, not the mean plus deviations as RFC 6298's RTO adds. Measured
//!   on this VM with other jobs running (load average 3-6), forwarding 50 Mbit/s out of 75
//!   offered: mean alone, 15% of a core and 99% of frames sent within 60-370 us of their due
//!   time; mean plus one mean deviation, 39% of a core and 50 us; plus two, 94% and 920 us (the
//!   thread spins through most gaps between 242-us frames, and spinning competes with the
//!   very jobs whose scheduling delays it tries to absorb). Sends are never early either way.
//! - Samples are capped at [`MAX_SAMPLE_NS`]: a VM stall of several milliseconds (docs/design.md
//!   section 7) says nothing about the next wake-up, and would otherwise make every later sleep
//!   end early and spin for milliseconds.
//! - The margin is kept in [[`MIN_MARGIN_NS`], [`MAX_MARGIN_NS`]]: some spin is always left to
//!   absorb a small surprise, and no wake-up spins longer than a millisecond.
//! - The first estimate is [`INITIAL_LATENESS_NS`], the idle lateness measured on this VM
//!   (docs/design.md section 7), so the first frames are already on time; the first
//!   measurement then replaces it (RFC 6298 rule 2.2).

/// First guess of the wake-up lateness: the idle lateness measured on this VM (docs/design.md
/// section 7).
pub const INITIAL_LATENESS_NS: u64 = 150_000;
/// A lateness sample above this is a stall, not a wake-up: counted as this.
pub const MAX_SAMPLE_NS: u64 = 2_000_000;
/// Least margin: a little spin is always left before a due time.
pub const MIN_MARGIN_NS: u64 = 10_000;
/// Most margin: never spin longer than this before a due time.
pub const MAX_MARGIN_NS: u64 = 1_000_000;
/// RFC 6298's SRTT gain alpha = 1/8, as a shift.
const MEAN_GAIN_SHIFT: u32 = 3;

/// The learned lateness of timed wake-ups.
#[derive(Clone, Debug)]
pub struct WakeupLatency {
    mean_ns: u64,
    samples: u64,
}

impl Default for WakeupLatency {
    fn default() -> Self {
        WakeupLatency { mean_ns: INITIAL_LATENESS_NS, samples: 0 }
    }
}

impl WakeupLatency {
    /// A timed sleep that asked to wake at some instant woke `late_ns` after it.
    pub fn on_timer_wakeup(&mut self, late_ns: u64) {
        let sample = late_ns.min(MAX_SAMPLE_NS);
        self.mean_ns = if self.samples == 0 {
            sample
        } else {
            self.mean_ns - (self.mean_ns >> MEAN_GAIN_SHIFT) + (sample >> MEAN_GAIN_SHIFT)
        };
        self.samples += 1;
    }

    /// How long before a due time a sleep should end, leaving the rest to a spin.
    pub fn margin_ns(&self) -> u64 {
        self.mean_ns.clamp(MIN_MARGIN_NS, MAX_MARGIN_NS)
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
    fn starts_from_the_measured_idle_lateness_and_the_first_sample_replaces_it() {
        let mut w = WakeupLatency::default();
        assert_eq!(w.margin_ns(), 150_000);
        w.on_timer_wakeup(60_000);
        assert_eq!((w.mean_ns(), w.margin_ns(), w.samples()), (60_000, 60_000, 1));
    }

    #[test]
    fn later_samples_move_the_mean_by_one_eighth() {
        let mut w = WakeupLatency::default();
        w.on_timer_wakeup(80_000);
        w.on_timer_wakeup(160_000);
        // 7/8 * 80 + 1/8 * 160 = 70 + 20 = 90 us.
        assert_eq!(w.margin_ns(), 90_000);
    }

    #[test]
    fn a_stall_counts_as_two_milliseconds_and_the_margin_stays_bounded() {
        let mut w = WakeupLatency::default();
        w.on_timer_wakeup(50_000);
        w.on_timer_wakeup(30_000_000);
        // 7/8 * 50 + 1/8 * 2000 (the cap, not 30 ms) = 43.75 + 250 = 293.75 us.
        assert_eq!(w.mean_ns(), 293_750);
        for _ in 0..100 {
            w.on_timer_wakeup(30_000_000);
        }
        // The mean tends to the 2 ms cap; the margin stops at 1 ms.
        assert_eq!(w.margin_ns(), MAX_MARGIN_NS);
        for _ in 0..200 {
            w.on_timer_wakeup(0);
        }
        assert_eq!(w.margin_ns(), MIN_MARGIN_NS);
    }
}
