//! What `braid linkem` emulates: two interfaces and, for each direction, a link.
//!
//! A direction's link is the simulator's ([`braid_sim::link`]): random loss on entry, a FIFO
//! bounded in packets (drop-tail, or CoDel with the tail limit kept), a server at a constant
//! rate or following a Mahimahi trace, then a propagation delay. The emulator reads whole
//! Ethernet frames, so a frame's size on the link is its Ethernet length (header included, no
//! FCS) and no framing is added: a 1500-byte IP packet weighs 1514 bytes, as it does for `htb`
//! and in the simulator (docs/design.md section 7).
//!
//! # Choices
//! - Rates are whole bytes per second on the link (the simulator's unit): a rate in bit/s is
//!   divided by 8 and rounded down, so `1001bit` runs at 1000 bit/s.
//! - No rate means no serialisation limit: the link then serves frames at `u64::MAX` bytes/s,
//!   one nanosecond per frame, and its FIFO limit is lifted. Such a link never holds a standing
//!   queue; but the kernel sometimes hands the emulator a run of frames late, and those enter
//!   the link together at the time they are read, where a finite limit would drop them as if
//!   the link were slow.
//! - The default buffer is 1000 packets, Linux's default `txqueuelen` (the `pfifo` limit a
//!   device gets when nothing else is configured).
//! - The FIFO counts packets as `pfifo` does; the frame being serialised is not in it.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use braid_core::linkmodel::{
    BernoulliConfig, CoDelConfig, CoDelConfigError, GilbertElliottConfig, LossConfig,
    LossConfigError, MahimahiTrace,
};
use braid_sim::link::{Aqm, Capacity, LinkSpec};

/// Linux's default `txqueuelen`, which `ether_setup` (net/ethernet/eth.c) gives every Ethernet
/// device as `DEFAULT_TX_QUEUE_LEN`: 1000 packets.
pub const DEFAULT_BUFFER_PKTS: usize = 1000;
/// Largest buffer accepted: one million frames, about 1.5 GB of memory at full size.
pub const MAX_BUFFER_PKTS: usize = 1_000_000;
/// Slowest rate accepted: one byte per second.
pub const MIN_RATE_BITS_PER_S: u64 = 8;
/// Fastest rate accepted: far beyond what a user-space bridge can forward.
pub const MAX_RATE_BITS_PER_S: u64 = 100_000_000_000;
/// Longest one-way delay accepted: longer than any path we model (geostationary is 0.25 s).
pub const MAX_DELAY: Duration = Duration::from_secs(10);
/// Linux `IFNAMSIZ` less the terminating NUL.
pub const MAX_IFNAME_BYTES: usize = 15;

/// One direction of the emulated link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Frames read on interface A, sent on B.
    AToB,
    /// Frames read on interface B, sent on A.
    BToA,
}

impl Direction {
    /// The suffix of the direction's command-line options and its key in the statistics.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::AToB => "ab",
            Direction::BToA => "ba",
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How fast a direction serves its FIFO.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Rate {
    /// No serialisation limit.
    #[default]
    Unlimited,
    /// A constant rate, bit/s, whole Ethernet frames counted.
    BitsPerS(u64),
    /// Mahimahi delivery opportunities, time zero being when the emulator starts.
    Trace(Arc<MahimahiTrace>),
}

/// The queue discipline of a direction.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum AqmConfig {
    #[default]
    DropTail,
    CoDel(CoDelConfig),
}

/// One direction's link.
#[derive(Clone, Debug, PartialEq)]
pub struct DirectionConfig {
    pub rate: Rate,
    /// One-way propagation delay, added after serialisation.
    pub delay: Duration,
    /// FIFO limit, packets (the frame being serialised not counted).
    pub buffer_pkts: usize,
    /// Random loss, drawn for each frame before the FIFO.
    pub loss: LossConfig,
    pub aqm: AqmConfig,
}

impl Default for DirectionConfig {
    /// A transparent link: unlimited rate, no delay, no loss, drop-tail with the default
    /// buffer.
    fn default() -> Self {
        DirectionConfig {
            rate: Rate::Unlimited,
            delay: Duration::ZERO,
            buffer_pkts: DEFAULT_BUFFER_PKTS,
            loss: LossConfig::None,
            aqm: AqmConfig::DropTail,
        }
    }
}

/// A direction's parameter out of range.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FieldError {
    #[error(
        "rate = {0} bit/s: must be in [{MIN_RATE_BITS_PER_S} bit/s, {MAX_RATE_BITS_PER_S} bit/s] \
         (8bit to 100gbit), or absent for no limit"
    )]
    Rate(u64),
    #[error("delay = {0:?}: must be in [0, {MAX_DELAY:?}]")]
    Delay(Duration),
    #[error("buffer_pkts = {0}: must be in [1, {MAX_BUFFER_PKTS}]")]
    BufferPkts(usize),
    #[error("loss: {0}")]
    Loss(#[from] LossConfigError),
    #[error("codel: {0}")]
    CoDel(#[from] CoDelConfigError),
}

/// Checks a rate in bit/s against [`MIN_RATE_BITS_PER_S`]..=[`MAX_RATE_BITS_PER_S`].
pub fn check_rate(bits_per_s: u64) -> Result<(), FieldError> {
    if (MIN_RATE_BITS_PER_S..=MAX_RATE_BITS_PER_S).contains(&bits_per_s) {
        Ok(())
    } else {
        Err(FieldError::Rate(bits_per_s))
    }
}

/// Checks a one-way delay against [`MAX_DELAY`].
pub fn check_delay(delay: Duration) -> Result<(), FieldError> {
    if delay <= MAX_DELAY {
        Ok(())
    } else {
        Err(FieldError::Delay(delay))
    }
}

/// Checks a FIFO limit against 1..=[`MAX_BUFFER_PKTS`].
pub fn check_buffer_pkts(buffer_pkts: usize) -> Result<(), FieldError> {
    if (1..=MAX_BUFFER_PKTS).contains(&buffer_pkts) {
        Ok(())
    } else {
        Err(FieldError::BufferPkts(buffer_pkts))
    }
}

impl DirectionConfig {
    pub fn validate(&self) -> Result<(), FieldError> {
        if let Rate::BitsPerS(bits_per_s) = self.rate {
            check_rate(bits_per_s)?;
        }
        check_delay(self.delay)?;
        check_buffer_pkts(self.buffer_pkts)?;
        self.loss.validate()?;
        if let AqmConfig::CoDel(codel) = &self.aqm {
            codel.validate()?;
        }
        Ok(())
    }

    /// The simulator's description of this link: Ethernet frames are passed whole, so no
    /// framing is added.
    pub fn link_spec(&self) -> LinkSpec {
        let capacity = match &self.rate {
            Rate::Unlimited => Capacity::Rate { bytes_per_s: u64::MAX },
            Rate::BitsPerS(bits_per_s) => Capacity::Rate { bytes_per_s: bits_per_s / 8 },
            Rate::Trace(trace) => Capacity::Trace(Arc::clone(trace)),
        };
        let buffer_pkts = match self.rate {
            Rate::Unlimited => usize::MAX,
            _ => self.buffer_pkts,
        };
        LinkSpec {
            capacity,
            delay_ns: braid_core::time::duration_nanos(self.delay),
            buffer_pkts,
            framing_bytes: 0,
            aqm: match self.aqm {
                AqmConfig::DropTail => Aqm::DropTail,
                AqmConfig::CoDel(cfg) => Aqm::CoDel(cfg),
            },
            loss: self.loss,
        }
    }
}

/// The whole emulator.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkemConfig {
    /// Interface A (frames read here go through `ab` and leave on B).
    pub if_a: String,
    /// Interface B.
    pub if_b: String,
    pub ab: DirectionConfig,
    pub ba: DirectionConfig,
    /// Seed of the random loss; the two directions draw from separate streams.
    pub seed: u64,
}

/// A configuration that cannot run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error("{direction}: {error}")]
    Direction { direction: Direction, error: FieldError },
    #[error("interface {which} = {name:?}: must be 1 to {MAX_IFNAME_BYTES} bytes, no '/', no whitespace")]
    InterfaceName { which: &'static str, name: String },
    #[error("interfaces a and b are both {0:?}: the emulator needs two different interfaces")]
    SameInterface(String),
}

fn check_ifname(which: &'static str, name: &str) -> Result<(), ConfigError> {
    let ok = (1..=MAX_IFNAME_BYTES).contains(&name.len())
        && !name.bytes().any(|b| b == b'/' || b == 0 || b.is_ascii_whitespace());
    if ok {
        Ok(())
    } else {
        Err(ConfigError::InterfaceName { which, name: name.to_string() })
    }
}

impl LinkemConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_ifname("a", &self.if_a)?;
        check_ifname("b", &self.if_b)?;
        if self.if_a == self.if_b {
            return Err(ConfigError::SameInterface(self.if_a.clone()));
        }
        for (direction, cfg) in [(Direction::AToB, &self.ab), (Direction::BToA, &self.ba)] {
            cfg.validate().map_err(|error| ConfigError::Direction { direction, error })?;
        }
        Ok(())
    }

    /// The loss seed of a direction: the configured seed for `ab`, and for `ba` the seed
    /// passed through one SplitMix64 step (Steele, Lea and Flood, OOPSLA 2014), so the two
    /// directions never share a random stream, whatever the seed.
    pub fn direction_seed(&self, direction: Direction) -> u64 {
        match direction {
            Direction::AToB => self.seed,
            Direction::BToA => splitmix64(self.seed),
        }
    }
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A loss specification as the command line writes it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{given:?}: expected a probability in [0, 1] (Bernoulli loss, as in 0.01) or \
     ge:p=P,r=R[,h=H][,k=K] (Gilbert-Elliott; h defaults to 0 and k to 1)"
)]
pub struct LossSpecError {
    pub given: String,
}

/// Parses `0.01` (Bernoulli, `0` meaning none) or `ge:p=0.01,r=0.3[,h=0][,k=1]`
/// (Gilbert-Elliott in the notation of [`braid_core::linkmodel::loss`]), and checks that
/// every parameter is a probability.
pub fn parse_loss(text: &str) -> Result<LossConfig, LossSpecError> {
    let err = || LossSpecError { given: text.to_string() };
    let config = match text.trim().strip_prefix("ge:") {
        None => {
            let p: f64 = text.trim().parse().map_err(|_| err())?;
            if p == 0.0 {
                LossConfig::None
            } else {
                LossConfig::Bernoulli(BernoulliConfig { p })
            }
        }
        Some(params) => {
            let (mut p, mut r, mut h, mut k) = (None, None, 0.0, 1.0);
            for pair in params.split(',') {
                let (key, value) = pair.split_once('=').ok_or_else(err)?;
                let value: f64 = value.trim().parse().map_err(|_| err())?;
                match key.trim() {
                    "p" => p = Some(value),
                    "r" => r = Some(value),
                    "h" => h = value,
                    "k" => k = value,
                    _ => return Err(err()),
                }
            }
            let (Some(p), Some(r)) = (p, r) else { return Err(err()) };
            LossConfig::GilbertElliott(GilbertElliottConfig { p, r, h, k })
        }
    };
    config.validate().map_err(|_| err())?;
    Ok(config)
}

/// The queue discipline names of the command line: `droptail` or `codel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AqmName {
    DropTail,
    CoDel,
}

/// An unknown queue discipline name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}: must be droptail or codel")]
pub struct AqmNameError(pub String);

impl FromStr for AqmName {
    type Err = AqmNameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "droptail" => Ok(AqmName::DropTail),
            "codel" => Ok(AqmName::CoDel),
            _ => Err(AqmNameError(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> LinkemConfig {
        LinkemConfig {
            if_a: "veth-a".into(),
            if_b: "veth-b".into(),
            ab: DirectionConfig::default(),
            ba: DirectionConfig::default(),
            seed: 1,
        }
    }

    #[test]
    fn errors_name_the_direction_the_field_and_the_range() {
        let mut c = config();
        c.ba.delay = Duration::from_secs(11);
        assert_eq!(c.validate().unwrap_err().to_string(), "ba: delay = 11s: must be in [0, 10s]");
        let mut c = config();
        c.ab.buffer_pkts = 0;
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "ab: buffer_pkts = 0: must be in [1, 1000000]"
        );
        let mut c = config();
        c.ab.rate = Rate::BitsPerS(7);
        assert!(c.validate().unwrap_err().to_string().starts_with("ab: rate = 7 bit/s"));
        let mut c = config();
        c.ab.aqm = AqmConfig::CoDel(CoDelConfig {
            target: Duration::from_millis(200),
            ..CoDelConfig::default()
        });
        assert!(c.validate().unwrap_err().to_string().starts_with("ab: codel: target = 200ms"));
        let mut c = config();
        c.if_b = "veth-a".into();
        assert_eq!(c.validate(), Err(ConfigError::SameInterface("veth-a".into())));
        c.if_b = "sixteen-bytes-xx".into();
        assert!(matches!(c.validate(), Err(ConfigError::InterfaceName { which: "b", .. })));
        config().validate().unwrap();
    }

    #[test]
    fn the_link_spec_counts_whole_frames_at_the_rate_in_bytes() {
        let d = DirectionConfig {
            rate: Rate::BitsPerS(50_000_000),
            delay: Duration::from_millis(10),
            buffer_pkts: 500,
            ..DirectionConfig::default()
        };
        let spec = d.link_spec();
        // 50 Mbit/s = 6.25 MB/s; frames are read with their Ethernet header, no framing added.
        assert_eq!(spec.capacity, Capacity::Rate { bytes_per_s: 6_250_000 });
        assert_eq!((spec.delay_ns, spec.buffer_pkts, spec.framing_bytes), (10_000_000, 500, 0));
        let unlimited = DirectionConfig::default().link_spec();
        assert_eq!(unlimited.capacity, Capacity::Rate { bytes_per_s: u64::MAX });
        assert_eq!(unlimited.buffer_pkts, usize::MAX);
    }

    #[test]
    fn the_directions_draw_from_different_streams() {
        let c = config();
        assert_eq!(c.direction_seed(Direction::AToB), 1);
        assert_ne!(c.direction_seed(Direction::BToA), 1);
        // SplitMix64's first output for state 0 (the reference implementation's known value).
        assert_eq!(splitmix64(0), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn loss_specs() {
        assert_eq!(parse_loss("0"), Ok(LossConfig::None));
        assert_eq!(parse_loss("0.01"), Ok(LossConfig::Bernoulli(BernoulliConfig { p: 0.01 })));
        assert_eq!(
            parse_loss("ge:p=0.01,r=0.3"),
            Ok(LossConfig::GilbertElliott(GilbertElliottConfig::gilbert(0.01, 0.3)))
        );
        assert_eq!(
            parse_loss("ge:p=0.05, r=0.3, h=0.2, k=0.99"),
            Ok(LossConfig::GilbertElliott(GilbertElliottConfig {
                p: 0.05,
                r: 0.3,
                h: 0.2,
                k: 0.99
            }))
        );
        for bad in ["1.5", "-0.1", "NaN", "ge:p=0.1", "ge:p=0.1,r=2", "ge:p=0.1,r=0.2,x=1", "10%"] {
            assert_eq!(parse_loss(bad), Err(LossSpecError { given: bad.into() }), "{bad}");
        }
    }

    #[test]
    fn aqm_names() {
        assert_eq!("codel".parse(), Ok(AqmName::CoDel));
        assert_eq!("droptail".parse(), Ok(AqmName::DropTail));
        assert_eq!(
            "fq_codel".parse::<AqmName>().unwrap_err().to_string(),
            "\"fq_codel\": must be droptail or codel"
        );
    }
}
