//! Fast loss detection: a missing global sequence number is lost once every active path has
//! delivered a packet with a higher number.
//!
//! Sources: Pieska et al. 2024, section 2.1 ("a mechanism for fast loss detection analyses received
//! sequence numbers to identify lost packets, enabling the early release of delayed packets");
//! docs/design.md section 3 (a missing number is given up once every active path has delivered
//! a higher one); draft-amend-iccrg-multipath-reordering (fast packet loss detection from the
//! per-path sequence progress).
//!
//! # Why it is sound
//! The sender numbers packets globally when it assigns them to a path and sends each path's
//! packets in that order (`TunnelSender::schedule`, FIFO pacing queue); a path's bottleneck is a
//! FIFO. So a path that has delivered number `h` will never deliver a number below `h` that it
//! has not delivered yet: the copy sent on it was lost. If every path that could carry `m` has
//! delivered beyond `m`, `m` is lost everywhere and waiting for it only delays what is held.
//! With `highest[p]` the highest number path `p` has delivered, every missing number below
//! `min over active p of highest[p]` is lost ([`FastLossDetector::lost_below`]).
//!
//! # Choices where the sources are vague
//! - *Active paths* are the paths with an arrival in the last [`PATH_SAMPLE_MAX_AGE`] (1 s), the
//!   same freshness rule as the adaptive wait limit's delay samples (`path_delay.rs`). A path
//!   silent for longer cannot hold a gap open. A shorter window, such as the wait limit, would
//!   declare a CPF secondary path inactive between the sparse packets CPF sends on it, and every
//!   such packet would be given up (and then released late) as soon as the primary path
//!   delivered past it. The cost of the long window: while a path is merely quiet, gaps wait for
//!   the wait limit as without fast loss detection.
//! - *Start*: a path that has delivered nothing yet counts as active, and as possibly carrying
//!   any number, for 1 s after the first arrival on any path, then as silent. Otherwise the
//!   first packets of the slower path would all be given up before it delivered its first.
//! - *Duplicates count*: under redundant scheduling the slower path's copies are all duplicates,
//!   yet they show that path's progress; without them a gap on the fast path would be given up
//!   before the slow path's copy could fill it.
//! - *When*: on arrivals only. A path going stale lets a gap go only at the next arrival or at
//!   the wait limit, whichever comes first; no extra timer is kept for it.
//! - Fast loss detection is an extra reason to give a gap up; the wait limit still applies.
//!   Retransmitting tunnels (reliable per path) break the ordering argument above: a
//!   retransmission travels behind higher numbers on its path and is released late.

use super::path_delay::PATH_SAMPLE_MAX_AGE;
use crate::time::Instant;

const PATH_SAMPLE_MAX_AGE_NS: u64 = PATH_SAMPLE_MAX_AGE.as_nanos() as u64;

/// How far one path has got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PathProgress {
    highest_seq: u64,
    last_arrival: Instant,
}

/// Per-path progress in global sequence numbers. See the module documentation.
#[derive(Clone, Debug)]
pub struct FastLossDetector {
    paths: Vec<Option<PathProgress>>,
    /// The first arrival on any path.
    started: Option<Instant>,
}

impl FastLossDetector {
    pub fn new(n_paths: usize) -> Self {
        FastLossDetector { paths: vec![None; n_paths], started: None }
    }

    /// A packet numbered `global_seq` (first copy or duplicate) arrived on `path` at `now`.
    /// Path indices beyond `n_paths` are ignored.
    pub fn on_arrival(&mut self, now: Instant, path: usize, global_seq: u64) {
        let Some(slot) = self.paths.get_mut(path) else {
            return;
        };
        self.started.get_or_insert(now);
        let highest_seq = slot.map_or(global_seq, |p| p.highest_seq.max(global_seq));
        *slot = Some(PathProgress { highest_seq, last_arrival: now });
    }

    /// Every missing number below the returned one is lost: each path active at `now` has
    /// delivered a packet numbered at least that. `None` while no path is active, or while a
    /// path that has delivered nothing yet still counts as active.
    pub fn lost_below(&self, now: Instant) -> Option<u64> {
        let active = |at: Instant| now.nanos_since(at) <= PATH_SAMPLE_MAX_AGE_NS;
        let mut bound = None;
        for p in &self.paths {
            match p {
                Some(p) if active(p.last_arrival) => {
                    bound = Some(bound.map_or(p.highest_seq, |b: u64| b.min(p.highest_seq)));
                }
                Some(_) => {}
                None if self.started.is_some_and(active) => return None,
                None => {}
            }
        }
        bound
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn t_ms(ms: u64) -> Instant {
        Instant::from_nanos(ms * MS)
    }

    #[test]
    fn bound_is_the_slowest_active_paths_highest_number() {
        let mut d = FastLossDetector::new(2);
        assert_eq!(d.lost_below(t_ms(0)), None);
        d.on_arrival(t_ms(1), 0, 7);
        assert_eq!(d.lost_below(t_ms(1)), None, "path 1 has not delivered yet: may carry 0..7");
        d.on_arrival(t_ms(2), 1, 4);
        assert_eq!(d.lost_below(t_ms(2)), Some(4), "path 1 may still carry 5 and 6");
        d.on_arrival(t_ms(3), 1, 9);
        assert_eq!(d.lost_below(t_ms(3)), Some(7), "now path 0 may still carry 8");
        // A late or duplicate number does not move a path back.
        d.on_arrival(t_ms(4), 0, 2);
        assert_eq!(d.lost_below(t_ms(4)), Some(7));
    }

    #[test]
    fn a_path_silent_for_more_than_a_second_no_longer_holds_gaps_open() {
        let mut d = FastLossDetector::new(2);
        d.on_arrival(t_ms(0), 1, 3);
        d.on_arrival(t_ms(500), 0, 50);
        assert_eq!(d.lost_below(t_ms(1000)), Some(3), "exactly 1 s: path 1 still active");
        let later = Instant::from_nanos(t_ms(1000).as_nanos() + 1);
        assert_eq!(d.lost_below(later), Some(50));
        assert_eq!(d.lost_below(t_ms(1501)), None, "both silent");
        // Unknown path indices are ignored.
        d.on_arrival(t_ms(1600), 5, 1);
        assert_eq!(d.lost_below(t_ms(1600)), None);
    }

    #[test]
    fn a_path_that_never_delivered_counts_for_the_first_second_only() {
        let mut d = FastLossDetector::new(3);
        d.on_arrival(t_ms(100), 0, 10);
        d.on_arrival(t_ms(600), 1, 12);
        // Path 2 has delivered nothing: it might carry any number, until 1 s after the start.
        assert_eq!(d.lost_below(t_ms(1100)), None);
        let later = Instant::from_nanos(t_ms(1100).as_nanos() + 1);
        assert_eq!(d.lost_below(later), Some(12), "path 0 is stale too by then");
        // Arrivals on unknown paths do not start the clock.
        let mut d = FastLossDetector::new(2);
        d.on_arrival(t_ms(0), 7, 3);
        d.on_arrival(t_ms(1500), 0, 4);
        assert_eq!(d.lost_below(t_ms(1500)), None, "path 1 silent since the start at 1.5 s");
    }
}
