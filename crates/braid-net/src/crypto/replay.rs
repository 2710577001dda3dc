//! Anti-replay window over transport counters: RFC 6479, "IPsec Anti-Replay Algorithm without
//! Bit Shifting", section 2.
//!
//! Every transport message carries a 64-bit counter that is also its AEAD nonce. A receiver
//! accepts a counter at most once, and only if it is above the highest counter accepted so far
//! minus the window size. WireGuard does the same per key pair (paper section 5.4.6, "Subsequent
//! Messages: Transport Data Messages"). RFC 6479 keeps the seen-bits as a ring of 64-bit blocks:
//! advancing the window zeroes the blocks it enters instead of shifting the whole bitmap, so an
//! in-order packet costs one block write however large the window. One block of the ring is the
//! one being filled, so the window covers `(blocks - 1) * 64` counters (RFC 6479 section 2,
//! "the window size is (N - 1) * the size of a block").
//!
//! **Window size.** Braid sends one counter sequence over several paths, so the receiver sees
//! packets out of order by the paths' delay difference times the packet rate. 1400-byte datagrams
//! at 1 Gbit/s are 89,000 packets per second; a path 100 ms slower than another delivers its
//! packets 8,900 counters behind, and tens of thousands at the several Gbit/s the data plane is
//! built for (its target: 2 Gbit/s through one path). Single-path WireGuard windows (8,128 counters
//! in Linux, `COUNTER_WINDOW_SIZE` in drivers/net/wireguard/messages.h; 1,024 in boringtun) would
//! drop them as too old. We keep 2,048 blocks: a window of 131,008 counters (above 2^16 with room:
//! 100 ms of reordering up to 14 Gbit/s), 16 KiB per key pair.
//!
//! **Use.** [`ReplayWindow::check`] before decrypting (cheap rejection of obvious replays),
//! [`ReplayWindow::update`] only after the tag verified, so forged packets never move the window
//! (WireGuard paper section 5.4.6).

/// Blocks in the ring of a full transport message's window (a power of two, so a counter's
/// block is found with a mask).
const BLOCKS: usize = 2048;
const BITS_PER_BLOCK: u64 = u64::BITS as u64;
/// Counters the window covers behind the highest accepted one: RFC 6479's `(N - 1) * block bits`.
pub const REPLAY_WINDOW_PKTS: u64 = (BLOCKS as u64 - 1) * BITS_PER_BLOCK;

/// Why a counter was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error("counter already received (replay)")]
    Duplicate,
    #[error("counter is further behind the highest received than the window covers")]
    TooOld,
}

/// The seen-counters of one receive key (RFC 6479 section 2), in a ring of `B` blocks (a power
/// of two): `(B - 1) * 64` counters. The default is the full transport messages' window; each
/// path's compact messages keep a smaller one ([`super::keypair`]).
///
/// Starts with nothing seen: any first counter, zero included, is accepted.
#[derive(Clone)]
pub struct ReplayWindow<const B: usize = BLOCKS> {
    bitmap: [u64; B],
    /// Highest counter accepted so far (0 before any; bit 0 is then clear, so 0 is still new).
    highest: u64,
}

impl<const B: usize> Default for ReplayWindow<B> {
    fn default() -> Self {
        const { assert!(B.is_power_of_two() && B >= 2) };
        ReplayWindow { bitmap: [0; B], highest: 0 }
    }
}

impl<const B: usize> ReplayWindow<B> {
    /// Counters the window covers behind the highest accepted one.
    pub const WINDOW: u64 = (B as u64 - 1) * BITS_PER_BLOCK;

    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `counter` would be accepted, without recording it.
    pub fn check(&self, counter: u64) -> Result<(), ReplayError> {
        if counter > self.highest {
            return Ok(());
        }
        if self.highest - counter >= Self::WINDOW {
            return Err(ReplayError::TooOld);
        }
        let (block, bit) = position::<B>(counter);
        if self.bitmap[block] & bit != 0 {
            return Err(ReplayError::Duplicate);
        }
        Ok(())
    }

    /// Records `counter` as received if [`check`](Self::check) accepts it. Call only after the
    /// packet authenticated.
    pub fn update(&mut self, counter: u64) -> Result<(), ReplayError> {
        self.check(counter)?;
        if counter > self.highest {
            self.advance_to(counter);
        }
        let (block, bit) = position::<B>(counter);
        self.bitmap[block] |= bit;
        Ok(())
    }

    /// Highest counter accepted so far, 0 before any.
    pub fn highest(&self) -> u64 {
        self.highest
    }

    /// RFC 6479 section 2: zero the blocks between the old highest's block (exclusive) and the
    /// new one's (inclusive), at most the whole ring, then move the top.
    fn advance_to(&mut self, counter: u64) {
        let current_block = self.highest / BITS_PER_BLOCK;
        let new_block = counter / BITS_PER_BLOCK;
        let to_clear = (new_block - current_block).min(B as u64);
        for i in 1..=to_clear {
            self.bitmap[((current_block + i) as usize) & (B - 1)] = 0;
        }
        self.highest = counter;
    }
}

/// Ring index of `counter`'s block and its bit mask within the block.
fn position<const B: usize>(counter: u64) -> (usize, u64) {
    let block = ((counter / BITS_PER_BLOCK) as usize) & (B - 1);
    (block, 1u64 << (counter % BITS_PER_BLOCK))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    const W: u64 = REPLAY_WINDOW_PKTS;

    #[test]
    fn window_is_at_least_two_to_the_sixteen() {
        // (2048 - 1) * 64 = 131,008.
        assert_eq!(W, 131_008);
        const { assert!(W >= 1 << 16) };
    }

    #[test]
    fn first_counter_zero_then_duplicate() {
        let mut w: ReplayWindow = ReplayWindow::new();
        assert_eq!(w.update(0), Ok(()));
        assert_eq!(w.update(0), Err(ReplayError::Duplicate));
        assert_eq!(w.update(1), Ok(()));
        assert_eq!(w.check(1), Err(ReplayError::Duplicate));
    }

    #[test]
    fn boundary_of_the_window() {
        let mut w: ReplayWindow = ReplayWindow::new();
        w.update(W).unwrap();
        // highest - counter = W - 1 is inside, = W is outside.
        assert_eq!(w.update(1), Ok(()));
        assert_eq!(w.check(0), Err(ReplayError::TooOld));
        assert_eq!(w.update(1), Err(ReplayError::Duplicate));
    }

    #[test]
    fn reordered_by_tens_of_thousands_is_accepted_once() {
        // Two paths 100 ms apart at ~2 Gbit/s: every even counter arrives 20,000 counters late.
        let mut w: ReplayWindow = ReplayWindow::new();
        for c in (1..=100_000u64).filter(|c| c % 2 == 1) {
            w.update(c).unwrap();
        }
        for c in (80_000..=100_000u64).filter(|c| c % 2 == 0) {
            assert_eq!(w.update(c), Ok(()), "late counter {c}");
            assert_eq!(w.update(c), Err(ReplayError::Duplicate));
        }
    }

    #[test]
    fn a_jump_past_the_whole_ring_forgets_everything_behind() {
        let mut w: ReplayWindow = ReplayWindow::new();
        for c in 0..1000 {
            w.update(c).unwrap();
        }
        let far = 10 * W;
        w.update(far).unwrap();
        // The ring was wholly cleared: counters just behind `far` that share ring slots with the
        // old ones are new.
        assert_eq!(w.update(far - 1), Ok(()));
        assert_eq!(w.update(far - W + 1), Ok(()));
        assert_eq!(w.check(999), Err(ReplayError::TooOld));
    }

    /// How to pick the next counter from the model's state.
    #[derive(Clone, Debug)]
    enum Step {
        Ahead(u64),
        BehindInWindow(u64),
        NearEdge(u64),
        Repeat(usize),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (1u64..200).prop_map(Step::Ahead),
            (1u64..3 * W).prop_map(Step::Ahead),
            (0u64..W).prop_map(Step::BehindInWindow),
            (0u64..4).prop_map(Step::NearEdge),
            any::<usize>().prop_map(Step::Repeat),
        ]
    }

    proptest! {
        /// Against a plain set: accept iff never seen and (nothing seen, above the highest, or
        /// less than W behind it).
        #[test]
        fn matches_the_set_model(steps in proptest::collection::vec(step(), 1..300)) {
            let mut w: ReplayWindow = ReplayWindow::new();
            let mut seen = BTreeSet::new();
            for s in steps {
                let highest = seen.last().copied().unwrap_or(0);
                let counter = match s {
                    Step::Ahead(d) => highest + d,
                    Step::BehindInWindow(d) => highest.saturating_sub(d),
                    // W - 2 .. W + 1 behind: both sides of the edge.
                    Step::NearEdge(d) => highest.saturating_sub(W - 2 + d),
                    Step::Repeat(i) if !seen.is_empty() => {
                        *seen.iter().nth(i % seen.len()).unwrap()
                    }
                    Step::Repeat(_) => 0,
                };
                let model_accepts = !seen.contains(&counter)
                    && (seen.is_empty() || counter > highest || highest - counter < W);
                prop_assert_eq!(w.check(counter).is_ok(), model_accepts, "check {}", counter);
                prop_assert_eq!(w.update(counter).is_ok(), model_accepts, "update {}", counter);
                if model_accepts {
                    seen.insert(counter);
                }
            }
        }
    }
}
