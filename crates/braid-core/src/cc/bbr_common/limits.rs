//! Range checks for the tuning fields BBRv1's [`crate::cc::bbr::BbrConfig`] and BBRv2/v3's
//! [`crate::cc::bbr2::Bbr2Config`] share. Each check returns the field's name and its allowed
//! range as a [`ConfigError`], which the caller scopes to its algorithm.
//!
//! The ranges are Braid's, not a source's: wide enough for any study (gains up to 16, as far
//! as the kernel's 32-bit fixed point is meaningful for a pacing rate), narrow enough that
//! the arithmetic cannot overflow or divide by zero.

use std::time::Duration;

use super::gain::{Gain, BBR_UNIT};
use crate::ConfigError;

/// The largest gain a configuration may set (16.0).
pub(crate) const MAX_GAIN: Gain = Gain(BBR_UNIT * 16);

fn check(ok: bool, field: &'static str, allowed: &'static str) -> Result<(), ConfigError> {
    if ok {
        Ok(())
    } else {
        Err(ConfigError::new(field, allowed))
    }
}

/// The min_rtt filter window: (0, 1 h].
pub(crate) fn min_rtt_win(win: Duration) -> Result<(), ConfigError> {
    check(!win.is_zero() && win <= Duration::from_secs(3600), "min_rtt_win", "in (0, 3600 s]")
}

/// The pacing margin: 0 to 50%.
pub(crate) fn pacing_margin_percent(percent: u64) -> Result<(), ConfigError> {
    check(percent <= 50, "pacing_margin_percent", "in 0..=50")
}

/// The minimum cwnd: 1 to 1000 packets.
pub(crate) fn cwnd_min_target_pkts(pkts: u64) -> Result<(), ConfigError> {
    check((1..=1000).contains(&pkts), "cwnd_min_target_pkts", "in 1..=1000")
}

/// The full-pipe detector: growth factor in (1.0, 16.0], 1 to 100 rounds.
pub(crate) fn full_bw(thresh: Gain, cnt: u32) -> Result<(), ConfigError> {
    check(thresh > Gain::ONE && thresh <= MAX_GAIN, "full_bw_thresh", "in (1.0, 16.0]")?;
    check((1..=100).contains(&cnt), "full_bw_cnt", "in 1..=100")
}

/// The ACK-aggregation gain: 0 (off) to 16.0.
pub(crate) fn extra_acked_gain(gain: Gain) -> Result<(), ConfigError> {
    check(gain <= MAX_GAIN, "extra_acked_gain", "in 0..=16.0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_inclusive_where_stated_and_name_the_field() {
        assert_eq!(min_rtt_win(Duration::from_secs(3600)), Ok(()));
        assert_eq!(
            min_rtt_win(Duration::ZERO),
            Err(ConfigError::new("min_rtt_win", "in (0, 3600 s]"))
        );
        assert_eq!(pacing_margin_percent(50), Ok(()));
        assert_eq!(pacing_margin_percent(51).unwrap_err().field, "pacing_margin_percent");
        assert_eq!(cwnd_min_target_pkts(0).unwrap_err().field, "cwnd_min_target_pkts");
        assert_eq!(full_bw(Gain::ONE, 3).unwrap_err().field, "full_bw_thresh", "1.0 is not growth");
        assert_eq!(full_bw(Gain(320), 0).unwrap_err().field, "full_bw_cnt");
        assert_eq!(full_bw(MAX_GAIN, 100), Ok(()));
        assert_eq!(extra_acked_gain(Gain(0)), Ok(()));
        assert_eq!(extra_acked_gain(Gain(MAX_GAIN.0 + 1)).unwrap_err().field, "extra_acked_gain");
    }
}
