//! Random packet loss: independent (Bernoulli) and bursty (Gilbert-Elliott).
//!
//! # Bernoulli
//! Every packet is lost with the same probability `p`, independently of the others.
//!
//! # Gilbert-Elliott
//! A two-state Markov chain, in the notation of Hasslinger and Hohlfeld, "The Gilbert-Elliott
//! Model for Packet Loss in Real Time Services on the Internet" (MMB 2008): transition
//! probabilities `p` and `r`, delivery probabilities `k` (Good) and `h` (Bad). Linux netem's
//! `loss gemodel p r 1-h 1-k` takes the same four (Salsano et al., "Definition of a general
//! and intuitive loss model for packet networks and its implementation in the Netem module in
//! the Linux kernel", 2012):
//!
//! ```text
//!            p = P(Good -> Bad)
//!    +------+ -----------------> +-----+
//!    | Good |                    | Bad |
//!    +------+ <----------------- +-----+
//!   loses 1-k  r = P(Bad -> Good)  loses 1-h
//! ```
//!
//! In Good a packet is lost with probability `1 - k`, in Bad with probability `1 - h`. The
//! stationary probabilities are `pi_G = r / (p + r)` and `pi_B = p / (p + r)`, so the mean loss
//! rate is `pi_B (1 - h) + pi_G (1 - k)`. The Gilbert model is the special case `k = 1` (no loss
//! in Good); with also `h = 0` every packet in Bad is lost, loss bursts are the sojourns in Bad
//! and their mean length is `1 / r` packets.
//!
//! # Choices where the sources leave room
//! - One step of the chain per packet offered (the chain runs in packet time, not wall time).
//! - A packet's fate is decided by the state it finds, and the chain moves once per packet, as
//!   in netem's `loss_gilb_ell` (Linux `net/sched/sch_netem.c`), and in the same draw order:
//!   each packet costs two uniform draws from the caller's RNG, first the transition, then the
//!   loss (judged by the state before the transition), whatever the state.
//! - The chain starts in Good, as netem's does.
//! - A Bernoulli model with `p = 0` draws nothing, so adding a lossless link does not shift
//!   the random stream of the other links sharing the RNG.
//!
//! The models draw from an RNG passed in at each call: the caller owns the seed, and one seeded
//! generator can drive every link of a simulation deterministically.

use rand::{Rng, RngExt};

/// Probability of losing each packet, independently.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BernoulliConfig {
    /// Loss probability, in [0, 1].
    pub p: f64,
}

/// The Gilbert-Elliott chain's parameters (Hasslinger and Hohlfeld 2008 notation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GilbertElliottConfig {
    /// P(Good -> Bad) per packet.
    pub p: f64,
    /// P(Bad -> Good) per packet.
    pub r: f64,
    /// Delivery probability in Bad: packets in Bad are lost with probability `1 - h`.
    pub h: f64,
    /// Delivery probability in Good: packets in Good are lost with probability `1 - k`.
    pub k: f64,
}

impl GilbertElliottConfig {
    /// The Gilbert model: everything lost in Bad, nothing in Good (`h = 0`, `k = 1`).
    pub fn gilbert(p: f64, r: f64) -> Self {
        GilbertElliottConfig { p, r, h: 0.0, k: 1.0 }
    }
}

/// A loss model's parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum LossConfig {
    /// No random loss.
    #[default]
    None,
    Bernoulli(BernoulliConfig),
    GilbertElliott(GilbertElliottConfig),
}

/// A loss parameter that is not a probability.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field} = {value}: must be a probability in [0, 1]")]
pub struct LossConfigError {
    /// `p`, `r`, `h` or `k`.
    pub field: &'static str,
    pub value: f64,
}

fn probability(field: &'static str, value: f64) -> Result<(), LossConfigError> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(LossConfigError { field, value })
    }
}

impl LossConfig {
    /// Checks that every parameter is a probability (NaN is not).
    pub fn validate(&self) -> Result<(), LossConfigError> {
        match *self {
            LossConfig::None => Ok(()),
            LossConfig::Bernoulli(BernoulliConfig { p }) => probability("p", p),
            LossConfig::GilbertElliott(GilbertElliottConfig { p, r, h, k }) => {
                probability("p", p)?;
                probability("r", r)?;
                probability("h", h)?;
                probability("k", k)
            }
        }
    }

    /// The long-run fraction of packets lost. For Gilbert-Elliott with `p = r = 0` the chain
    /// never leaves Good, so the rate is Good's.
    pub fn mean_loss_rate(&self) -> f64 {
        match *self {
            LossConfig::None => 0.0,
            LossConfig::Bernoulli(BernoulliConfig { p }) => p,
            LossConfig::GilbertElliott(GilbertElliottConfig { p, r, h, k }) => {
                if p + r == 0.0 {
                    return 1.0 - k;
                }
                let pi_bad = p / (p + r);
                pi_bad * (1.0 - h) + (1.0 - pi_bad) * (1.0 - k)
            }
        }
    }

    /// The model, in its initial state.
    pub fn build(&self) -> LossModel {
        match *self {
            LossConfig::None => LossModel::None,
            LossConfig::Bernoulli(cfg) => LossModel::Bernoulli(Bernoulli::new(cfg)),
            LossConfig::GilbertElliott(cfg) => LossModel::GilbertElliott(GilbertElliott::new(cfg)),
        }
    }
}

/// A loss model with its state.
#[derive(Clone, Debug, PartialEq)]
pub enum LossModel {
    None,
    Bernoulli(Bernoulli),
    GilbertElliott(GilbertElliott),
}

impl LossModel {
    /// Decides the fate of the next packet offered.
    #[inline]
    pub fn is_lost<R: Rng + ?Sized>(&mut self, rng: &mut R) -> bool {
        match self {
            LossModel::None => false,
            LossModel::Bernoulli(m) => m.is_lost(rng),
            LossModel::GilbertElliott(m) => m.is_lost(rng),
        }
    }
}

/// Independent loss with probability `p`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bernoulli {
    p: f64,
}

impl Bernoulli {
    pub fn new(config: BernoulliConfig) -> Self {
        Bernoulli { p: config.p }
    }

    /// Draws one uniform number in [0, 1) unless `p` is zero; lost when it falls below `p`.
    #[inline]
    pub fn is_lost<R: Rng + ?Sized>(&mut self, rng: &mut R) -> bool {
        self.p > 0.0 && rng.random::<f64>() < self.p
    }
}

/// The state of a Gilbert-Elliott chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelState {
    Good,
    Bad,
}

/// The Gilbert-Elliott chain and its current state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GilbertElliott {
    config: GilbertElliottConfig,
    state: ChannelState,
}

impl GilbertElliott {
    /// Starts in Good.
    pub fn new(config: GilbertElliottConfig) -> Self {
        GilbertElliott { config, state: ChannelState::Good }
    }

    pub fn state(&self) -> ChannelState {
        self.state
    }

    /// Steps the chain and decides the packet's fate by the state it found.
    #[inline]
    pub fn is_lost<R: Rng + ?Sized>(&mut self, rng: &mut R) -> bool {
        let GilbertElliottConfig { p, r, h, k } = self.config;
        let (loss_probability, leave_probability, other) = match self.state {
            ChannelState::Good => (1.0 - k, p, ChannelState::Bad),
            ChannelState::Bad => (1.0 - h, r, ChannelState::Good),
        };
        if rng.random::<f64>() < leave_probability {
            self.state = other;
        }
        rng.random::<f64>() < loss_probability
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    const DRAWS: usize = 1_000_000;

    fn loss_rate(config: LossConfig, seed: u64) -> f64 {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut m = config.build();
        (0..DRAWS).filter(|_| m.is_lost(&mut rng)).count() as f64 / DRAWS as f64
    }

    #[test]
    fn bernoulli_zero_never_drops_and_one_always_drops() {
        let never = LossConfig::Bernoulli(BernoulliConfig { p: 0.0 });
        let always = LossConfig::Bernoulli(BernoulliConfig { p: 1.0 });
        assert_eq!(loss_rate(never, 1), 0.0);
        // Uniform draws lie in [0, 1), so all fall below 1.
        assert_eq!(loss_rate(always, 1), 1.0);
        assert_eq!(loss_rate(LossConfig::None, 1), 0.0);
    }

    #[test]
    fn bernoulli_loss_rate_is_p() {
        // p = 0.1 over 1e6 draws: standard error sqrt(0.1 * 0.9 / 1e6) = 0.0003; the
        // tolerance 0.0015 is five of them.
        let rate = loss_rate(LossConfig::Bernoulli(BernoulliConfig { p: 0.1 }), 2);
        assert!((rate - 0.1).abs() < 0.0015, "{rate}");
    }

    #[test]
    fn bernoulli_zero_draws_nothing() {
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let mut reference = rng.clone();
        let mut m = Bernoulli::new(BernoulliConfig { p: 0.0 });
        for _ in 0..10 {
            assert!(!m.is_lost(&mut rng));
        }
        assert_eq!(rng.random::<u64>(), reference.random::<u64>());
    }

    #[test]
    fn gilbert_elliott_loss_rate_matches_the_stationary_formula() {
        // p = 0.05, r = 0.3, h = 0.2, k = 0.99:
        //   pi_B = 0.05 / 0.35 = 0.142857, pi_G = 0.857143
        //   loss = 0.142857 * 0.8 + 0.857143 * 0.01 = 0.114286 + 0.008571 = 0.122857.
        // Tolerance: successive losses are correlated through the chain. The loss indicator
        // has variance m(1 - m) = 0.107763; its state part g(S) (0.8 in Bad, 0.01 in Good) has
        // variance pi_B pi_G 0.79^2 = 0.076421 and autocorrelation lambda^j with
        // lambda = 1 - p - r = 0.65, so the long-run variance per draw is
        // 0.107763 + 2 * 0.076421 * 0.65 / 0.35 = 0.391612 and the standard error of the mean of
        // 1e6 draws is sqrt(0.391612 / 1e6) = 0.000626. 0.004 is more than six of them, yet far
        // below what a wrong formula gives (swapping h and k: 0.687).
        let cfg = GilbertElliottConfig { p: 0.05, r: 0.3, h: 0.2, k: 0.99 };
        let config = LossConfig::GilbertElliott(cfg);
        assert!((config.mean_loss_rate() - 0.122857).abs() < 1e-6);
        for seed in [1, 2, 3] {
            let rate = loss_rate(config, seed);
            assert!((rate - 0.122857).abs() < 0.004, "seed {seed}: {rate}");
        }
    }

    #[test]
    fn gilbert_mean_burst_length_is_one_over_r() {
        // h = 0, k = 1: losses are exactly the packets sent in Bad; a burst is one sojourn in
        // Bad, geometric with mean 1 / r = 4 packets and variance (1 - r) / r^2 = 12. With
        // p = 0.01, 1e6 draws hold about 1e6 * pi_B * r = 1e6 * (0.01 / 0.26) * 0.25 = 9615
        // bursts: standard error sqrt(12 / 9615) = 0.035; the tolerance 0.2 is 5.7 of them.
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let mut m = GilbertElliott::new(GilbertElliottConfig::gilbert(0.01, 0.25));
        let (mut bursts, mut lost, mut in_burst) = (0u64, 0u64, false);
        for _ in 0..DRAWS {
            let l = m.is_lost(&mut rng);
            if l {
                lost += 1;
                bursts += u64::from(!in_burst);
            }
            in_burst = l;
        }
        let mean_burst = lost as f64 / bursts as f64;
        assert!((mean_burst - 4.0).abs() < 0.2, "{mean_burst} over {bursts} bursts");
        assert!((8_000..11_500).contains(&bursts), "{bursts}");
    }

    #[test]
    fn gilbert_elliott_starts_good_and_stays_while_p_is_zero() {
        let mut rng = Pcg64Mcg::seed_from_u64(9);
        let mut m = GilbertElliott::new(GilbertElliottConfig::gilbert(0.0, 0.5));
        assert!((0..10_000).all(|_| !m.is_lost(&mut rng)));
        assert_eq!(m.state(), ChannelState::Good);
        // p = 1, r = 0: into Bad after the first packet and never out.
        let mut m = GilbertElliott::new(GilbertElliottConfig::gilbert(1.0, 0.0));
        assert!(!m.is_lost(&mut rng));
        assert!((0..10_000).all(|_| m.is_lost(&mut rng)));
    }

    #[test]
    fn validation_rejects_non_probabilities() {
        let ge = |p, r, h, k| LossConfig::GilbertElliott(GilbertElliottConfig { p, r, h, k });
        assert_eq!(
            ge(0.1, 1.5, 0.0, 1.0).validate(),
            Err(LossConfigError { field: "r", value: 1.5 })
        );
        assert_eq!(ge(0.1, 0.5, -0.1, 1.0).validate().unwrap_err().field, "h");
        assert_eq!(ge(0.1, 0.5, 0.0, f64::NAN).validate().unwrap_err().field, "k");
        let err = LossConfig::Bernoulli(BernoulliConfig { p: 2.0 }).validate().unwrap_err();
        assert_eq!(err.to_string(), "p = 2: must be a probability in [0, 1]");
        ge(0.0, 1.0, 1.0, 0.0).validate().unwrap();
        LossConfig::None.validate().unwrap();
    }

    #[test]
    fn mean_loss_rate_of_degenerate_chains() {
        // Never leaves Good: Good's loss, 1 - k = 0.25.
        let stuck = GilbertElliottConfig { p: 0.0, r: 0.0, h: 0.0, k: 0.75 };
        assert_eq!(LossConfig::GilbertElliott(stuck).mean_loss_rate(), 0.25);
        // Gilbert with p = r: half the time in Bad, where all is lost.
        let half = LossConfig::GilbertElliott(GilbertElliottConfig::gilbert(0.2, 0.2));
        assert_eq!(half.mean_loss_rate(), 0.5);
    }
}
