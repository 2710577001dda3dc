//! BBR's gains in the kernel's fixed point, shared by BBRv1 ([`crate::cc::bbr`]) and BBRv2/v3
//! ([`crate::cc::bbr2`]): [`BBR_UNIT`] = 256 means 1.0, so every threshold compares exactly as
//! the kernel's does (Linux `net/ipv4/tcp_bbr.c`, `BBR_SCALE` and `BBR_UNIT`).

/// Fixed-point shift for gains and fractions (kernel `BBR_SCALE`).
pub const BBR_SCALE: u32 = 8;
/// 1.0 in gain fixed point (kernel `BBR_UNIT`).
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// A gain or fraction in the kernel's fixed point: `Gain(BBR_UNIT)` is 1.0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Gain(pub u32);

impl Gain {
    pub const ONE: Gain = Gain(BBR_UNIT);

    /// `num / den`, rounded down to the fixed point.
    pub const fn from_ratio(num: u32, den: u32) -> Gain {
        Gain(BBR_UNIT * num / den)
    }

    /// The gain as a float, for traces and tests only.
    pub fn as_f64(self) -> f64 {
        f64::from(self.0) / f64::from(BBR_UNIT)
    }

    /// `x * gain`, rounded down (the kernel's `x * gain >> BBR_SCALE`).
    #[inline]
    pub fn apply(self, x: u64) -> u64 {
        let y = (u128::from(x) * u128::from(self.0)) >> BBR_SCALE;
        u64::try_from(y).unwrap_or(u64::MAX)
    }
}
