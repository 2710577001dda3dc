//! From the model to the pacing rate and the BDP, computed alike by BBR v1 and v2/v3 (Linux
//! `bbr_bdp`, `bbr_rate_bytes_per_sec`/`bbr_bw_to_pacing_rate`, `bbr_init_pacing_rate_from_rtt`;
//! draft-ietf-ccwg-bbr `BDPMultiple`, `InitPacingRate`, `SetPacingRateWithGain`).
//!
//! Rates are bytes/s and gains the kernel's fixed point ([`Gain`]); products are taken in
//! 128 bits and saturate at `u64::MAX`.

use std::time::Duration;

use super::gain::{Gain, BBR_SCALE, BBR_UNIT};

/// RTT assumed for the initial pacing rate before any sample (the kernel's nominal 1 ms).
const DEFAULT_RTT: Duration = Duration::from_millis(1);

/// `bw * gain`, less `margin_percent`, in bytes/s: pacing slightly below the estimate lets
/// the bottleneck queue drain on average (`bbr_pacing_margin_percent`).
pub(crate) fn pacing_rate(bw: u64, gain: Gain, margin_percent: u64) -> u64 {
    let rate = u128::from(bw) * u128::from(gain.0) * u128::from(100 - margin_percent)
        / (u128::from(BBR_UNIT) * 100);
    u64::try_from(rate).unwrap_or(u64::MAX)
}

/// The rate a window of `cwnd_bytes` per `rtt` makes, with a nominal 1 ms before the first
/// RTT sample and at least 1 us after it; the initial pacing rate applies the Startup gain
/// to it.
pub(crate) fn initial_bw(cwnd_bytes: u64, rtt: Option<Duration>) -> u64 {
    let rtt = rtt.map_or(DEFAULT_RTT, |rtt| rtt.max(Duration::from_micros(1)));
    let bw = u128::from(cwnd_bytes) * 1_000_000_000 / rtt.as_nanos();
    u64::try_from(bw).unwrap_or(u64::MAX)
}

/// `gain * bw * min_rtt`, rounded up to a whole byte so that rounding cannot shrink the
/// window round after round.
pub(crate) fn bdp(bw: u64, min_rtt: Duration, gain: Gain) -> u64 {
    let w = u128::from(bw) * min_rtt.as_nanos();
    let bdp = ((w * u128::from(gain.0)) >> BBR_SCALE).div_ceil(1_000_000_000);
    u64::try_from(bdp).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pacing_rate_is_gain_times_bw_less_the_margin() {
        // 1.25 * 1 MB/s * 0.99 = 1 237 500 B/s; 0.75 * 2 MB/s, no margin = 1.5 MB/s.
        assert_eq!(pacing_rate(1_000_000, Gain(320), 1), 1_237_500);
        assert_eq!(pacing_rate(2_000_000, Gain(192), 0), 1_500_000);
        assert_eq!(pacing_rate(u64::MAX, Gain(4096), 0), u64::MAX, "saturates");
    }

    #[test]
    fn initial_bw_is_the_window_per_rtt() {
        // 10 kB per nominal 1 ms = 10 MB/s; per 100 ms = 100 kB/s; a 0 RTT counts as 1 us.
        assert_eq!(initial_bw(10_000, None), 10_000_000);
        assert_eq!(initial_bw(10_000, Some(Duration::from_millis(100))), 100_000);
        assert_eq!(initial_bw(10_000, Some(Duration::ZERO)), 10_000_000_000);
    }

    #[test]
    fn bdp_rounds_up_to_a_whole_byte() {
        // 1 MB/s * 100 ms = 100 000 B; times 2.0 = 200 000 B.
        assert_eq!(bdp(1_000_000, Duration::from_millis(100), Gain(512)), 200_000);
        // 1 000 B/s * 1.5 ms = 1.5 B -> 2 B.
        assert_eq!(bdp(1_000, Duration::from_micros(1500), Gain::ONE), 2);
    }
}
