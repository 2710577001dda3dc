//! Exactly-once delivery: a sliding window over the most recent global sequence numbers that
//! tells a first copy from a duplicate, whatever the reorder policy.
//!
//! Sources: RFC 4303 section 3.4.3 (IPsec ESP anti-replay: a window of recently received
//! sequence numbers; anything left of the window is rejected) and RFC 6479 section 2 (the
//! window kept as a ring of bitmap blocks with one spare block, so advancing clears whole blocks
//! instead of shifting bits). Redundant scheduling sends every packet on every path; without the
//! filter the second copy of a packet the reorder buffer had already released would be delivered
//! again.
//!
//! # Rules
//! `top` is the highest number seen. A number `s`
//! - above `top` (or the first number ever) is new; `top` moves to `s`;
//! - within the window, `top - s < DUPLICATE_WINDOW_SEQS`, is new unless seen before;
//! - below the window is *too old*: whether it was seen can no longer be told, so it is refused
//!   like a duplicate. Delivering it could deliver a packet twice; refusing it loses, at worst, a
//!   packet more than [`DUPLICATE_WINDOW_SEQS`] numbers late, which the reorder buffer gave up
//!   on long before (its wait limit is at most 10 s and it holds at most `buffer_pkts`).
//!
//! # Data structure
//! `WINDOW_BLOCKS` = 8192 / 64 + 1 = 129 blocks of 64 bits; number `s` is bit `s % 64` of block
//! `(s / 64) % 129`. The spare block (RFC 6479's trick) means the 8192 numbers of the window never
//! share a bit, and moving `top` up clears exactly the blocks between the old and the new top's
//! block: every number they held lies below the new window. 1032 bytes, no allocation, O(1) per
//! packet (a jump clears at most 129 blocks).
//!
//! # Choice of the window
//! 8192 numbers: at the reference scenarios' aggregate rate (two 50 Mbit/s paths, about 8300
//! packets of 1500 bytes per second) that is about 1 s of traffic, five times the largest
//! delay difference of the reference scenarios (ASYM200: 200 ms), and five times the default
//! reorder buffer (1500 packets). A copy that arrives more than 8192 numbers behind the newest
//! packet is refused as too old.

/// How many of the most recent global sequence numbers the filter remembers.
pub const DUPLICATE_WINDOW_SEQS: u64 = 8192;

const BLOCK_BITS: u64 = u64::BITS as u64;
/// The window in blocks plus RFC 6479's spare block.
const WINDOW_BLOCKS: usize = (DUPLICATE_WINDOW_SEQS / BLOCK_BITS) as usize + 1;

/// What the filter makes of a global sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    /// First copy: deliver it.
    New,
    /// Seen before, within the window.
    Duplicate,
    /// Below the window: cannot be told from a duplicate, refused.
    TooOld,
}

/// Sliding-window duplicate filter over global sequence numbers. See the module documentation.
#[derive(Clone, Debug)]
pub struct DuplicateFilter {
    /// Highest number seen; `None` before the first.
    top: Option<u64>,
    blocks: [u64; WINDOW_BLOCKS],
}

impl Default for DuplicateFilter {
    fn default() -> Self {
        DuplicateFilter { top: None, blocks: [0; WINDOW_BLOCKS] }
    }
}

impl DuplicateFilter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Classifies `seq` and remembers it when it is new.
    pub fn check_and_mark(&mut self, seq: u64) -> Seen {
        match self.top {
            Some(top) if seq <= top => {
                if top - seq >= DUPLICATE_WINDOW_SEQS {
                    return Seen::TooOld;
                }
                let (block, bit) = Self::position(seq);
                if self.blocks[block] & bit != 0 {
                    return Seen::Duplicate;
                }
                self.blocks[block] |= bit;
                Seen::New
            }
            Some(top) => {
                self.advance(top, seq);
                self.mark(seq)
            }
            None => self.mark(seq),
        }
    }

    /// Highest number seen so far.
    pub fn top(&self) -> Option<u64> {
        self.top
    }

    fn mark(&mut self, seq: u64) -> Seen {
        self.top = Some(seq);
        let (block, bit) = Self::position(seq);
        self.blocks[block] |= bit;
        Seen::New
    }

    /// Clears the blocks after `top`'s up to and including `new_top`'s (all of them for a jump
    /// of a whole ring or more).
    fn advance(&mut self, top: u64, new_top: u64) {
        let from = top / BLOCK_BITS;
        let steps = (new_top / BLOCK_BITS - from).min(WINDOW_BLOCKS as u64);
        for i in 1..=steps {
            self.blocks[((from + i) % WINDOW_BLOCKS as u64) as usize] = 0;
        }
    }

    fn position(seq: u64) -> (usize, u64) {
        let block = ((seq / BLOCK_BITS) % WINDOW_BLOCKS as u64) as usize;
        (block, 1 << (seq % BLOCK_BITS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    const W: u64 = DUPLICATE_WINDOW_SEQS;

    #[test]
    fn first_copies_pass_and_second_copies_do_not() {
        let mut f = DuplicateFilter::new();
        assert_eq!(f.top(), None);
        for seq in [5, 3, 9, 4, 0] {
            assert_eq!(f.check_and_mark(seq), Seen::New, "{seq}");
        }
        assert_eq!(f.top(), Some(9));
        for seq in [5, 3, 9, 4, 0] {
            assert_eq!(f.check_and_mark(seq), Seen::Duplicate, "{seq}");
        }
        assert_eq!(f.check_and_mark(6), Seen::New);
    }

    #[test]
    fn window_holds_exactly_8192_numbers() {
        let mut f = DuplicateFilter::new();
        let top = 100_000;
        f.check_and_mark(top);
        // top - 8191 is the oldest number inside the window, top - 8192 the newest outside.
        assert_eq!(f.check_and_mark(top - (W - 1)), Seen::New);
        assert_eq!(f.check_and_mark(top - (W - 1)), Seen::Duplicate);
        assert_eq!(f.check_and_mark(top - W), Seen::TooOld);
        // One step up pushes the oldest out.
        assert_eq!(f.check_and_mark(top + 1), Seen::New);
        assert_eq!(f.check_and_mark(top - (W - 1)), Seen::TooOld);
    }

    #[test]
    fn advancing_forgets_exactly_what_leaves_the_window() {
        let mut f = DuplicateFilter::new();
        for seq in 0..W {
            assert_eq!(f.check_and_mark(seq), Seen::New);
        }
        // Move the top up in odd steps (61 does not divide the block size): the oldest number
        // inside the window is still remembered, the one just below it is too old.
        for new_top in (W..2 * W).step_by(61) {
            assert_eq!(f.check_and_mark(new_top), Seen::New);
            let oldest = new_top - (W - 1);
            assert_eq!(f.check_and_mark(oldest), Seen::Duplicate, "top {new_top}");
            assert_eq!(f.check_and_mark(oldest - 1), Seen::TooOld, "top {new_top}");
        }
    }

    #[test]
    fn jumps_clear_stale_bits_and_extreme_numbers_do_not_panic() {
        let mut f = DuplicateFilter::new();
        f.check_and_mark(7);
        // A jump by exactly one ring of bits lands on the bit 7 used: it must read as new.
        let ring_bits = WINDOW_BLOCKS as u64 * BLOCK_BITS;
        assert_eq!(f.check_and_mark(7 + ring_bits), Seen::New);
        assert_eq!(f.check_and_mark(7 + ring_bits - 1), Seen::New);
        assert_eq!(f.check_and_mark(7), Seen::TooOld);
        assert_eq!(f.check_and_mark(u64::MAX), Seen::New);
        assert_eq!(f.check_and_mark(u64::MAX), Seen::Duplicate);
        assert_eq!(f.check_and_mark(u64::MAX - (W - 1)), Seen::New);
        assert_eq!(f.check_and_mark(0), Seen::TooOld);
    }

    /// The specification the bitmap must match: a set of every number seen, the window rule
    /// applied to the highest.
    #[derive(Default)]
    struct Model {
        seen: HashSet<u64>,
        top: Option<u64>,
    }

    impl Model {
        fn check_and_mark(&mut self, seq: u64) -> Seen {
            let verdict = match self.top {
                Some(top) if seq <= top && top - seq >= W => Seen::TooOld,
                _ if self.seen.contains(&seq) => Seen::Duplicate,
                _ => Seen::New,
            };
            if verdict == Seen::New {
                self.seen.insert(seq);
                self.top = Some(self.top.map_or(seq, |t| t.max(seq)));
            }
            verdict
        }
    }

    /// A step relative to the highest number seen so far: small moves back and forth (reorder
    /// and duplicates), moves around the window edge, and jumps of whole rings.
    fn steps() -> impl Strategy<Value = Vec<(u8, u64)>> {
        prop::collection::vec((0u8..6, 0u64..3 * W), 1..400)
    }

    proptest! {
        #[test]
        fn bitmap_matches_the_set_model(start in 0u64..u64::MAX / 2, steps in steps()) {
            let mut f = DuplicateFilter::new();
            let mut m = Model::default();
            let mut released = HashSet::new();
            let mut history: Vec<u64> = Vec::new();
            let (mut new, mut refused) = (0u64, 0u64);
            for (kind, x) in steps {
                let top = m.top.unwrap_or(start);
                let seq = match kind {
                    0 => top.saturating_add(x % 8),                  // next few, in order
                    1 => top.saturating_sub(x % 64),                 // a little late
                    2 => top.saturating_sub(W - 4 + x % 8),          // around the window edge
                    3 => top.saturating_add(x),                      // jump up to three windows
                    4 => history.get(x as usize % history.len().max(1)).copied().unwrap_or(top),
                    _ => top.saturating_sub(x),                      // anywhere below
                };
                history.push(seq);
                let got = f.check_and_mark(seq);
                prop_assert_eq!(got, m.check_and_mark(seq), "seq {}", seq);
                prop_assert_eq!(f.top(), m.top);
                if got == Seen::New {
                    prop_assert!(released.insert(seq), "{} passed twice", seq);
                    new += 1;
                } else {
                    refused += 1;
                }
            }
            prop_assert_eq!(new + refused, history.len() as u64);
            prop_assert_eq!(new, released.len() as u64);
        }
    }
}
