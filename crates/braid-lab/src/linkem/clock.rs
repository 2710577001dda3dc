//! The emulator's clock: `CLOCK_MONOTONIC` as a [`braid_core::Instant`] counted from the start,
//! and the conversion of the kernel's receive timestamps onto it.
//!
//! `SO_TIMESTAMPNS` stamps a frame with `CLOCK_REALTIME` when the kernel receives it (socket(7)),
//! which can be slewed or stepped by NTP. Each timestamp is mapped onto the monotonic clock by
//! the offset between the two clocks read together just before the mapping, so a step moves
//! only the frames received before it and read after it, and the result is capped at the
//! monotonic now: a frame never arrives in the future.
//!
//! Time zero is when the emulator starts, so a Mahimahi trace starts with it.

use braid_core::Instant;

fn read_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid out-pointer; both clocks exist on every Linux kernel.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    timespec_ns(&ts)
}

/// A timespec as nanoseconds (negative fields, which valid clocks never give, as zero).
pub fn timespec_ns(ts: &libc::timespec) -> u64 {
    (ts.tv_sec.max(0) as u64).saturating_mul(1_000_000_000).saturating_add(ts.tv_nsec.max(0) as u64)
}

/// `CLOCK_MONOTONIC` counted from the emulator's start.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    epoch_ns: u64,
}

impl Clock {
    /// A clock whose zero is now.
    pub fn start() -> Self {
        Clock { epoch_ns: read_ns(libc::CLOCK_MONOTONIC) }
    }

    pub fn now(&self) -> Instant {
        Instant::from_nanos(read_ns(libc::CLOCK_MONOTONIC).saturating_sub(self.epoch_ns))
    }

    /// Maps a `CLOCK_REALTIME` receive timestamp onto this clock, with the offset between the
    /// clocks read now.
    pub fn from_realtime_ns(&self, realtime_ns: u64) -> Instant {
        let real = read_ns(libc::CLOCK_REALTIME);
        let mono = read_ns(libc::CLOCK_MONOTONIC);
        Instant::from_nanos(map_realtime(realtime_ns, real, mono, self.epoch_ns))
    }
}

/// `stamp` (realtime) on the monotonic clock counted from `epoch`, given the two clocks read at
/// the same moment; never after that moment.
fn map_realtime(stamp: u64, real_now: u64, mono_now: u64, epoch: u64) -> u64 {
    let age = real_now.saturating_sub(stamp);
    mono_now.saturating_sub(age).saturating_sub(epoch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_keeps_its_age() {
        // Received 300 us before the clocks were read: 300 us before mono now, less the epoch.
        assert_eq!(map_realtime(1_000_000_000, 1_000_300_000, 5_000_000, 1_000_000), 3_700_000);
        // A stamp from the future (a clock step) is taken as now.
        assert_eq!(map_realtime(2_000_000_000, 1_000_000_000, 5_000_000, 1_000_000), 4_000_000);
        // Older than the epoch: time zero.
        assert_eq!(map_realtime(0, 1_000_000_000, 5_000_000, 1_000_000), 0);
    }

    #[test]
    fn the_clock_starts_at_zero_and_moves_forward() {
        let c = Clock::start();
        let t1 = c.now();
        let t2 = c.now();
        assert!(t1 <= t2);
        assert!(t1.as_nanos() < 1_000_000_000);
    }
}
