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
//! # Quiet paths: the delay rule
//! The ordering argument needs a path's progress to be recent: a path that has delivered
//! nothing for a while may have been sent a number since. A path with an arrival in the last
//! [`PATH_SAMPLE_MAX_AGE`] (1 s) is *active* and bounds gaps by its highest number, as above. A
//! path silent for longer is *quiet*, and for it the detector asks instead whether the missing
//! packet could still be on its way. The missing numbers below the lowest held packet `n` were
//! numbered before `n`, so sent no later than `n` (a quiet path has nothing queued ahead of a
//! new packet); on quiet path `p` such a packet arrives by about `send(n) + owd(p)`. In the
//! receiver's clock, with `q` the path `n` arrived on and one-way delays taken as the paths'
//! latest samples (clock offset included; it cancels in the difference):
//!
//! ```text
//! expected(p) = arrival(n) + owd(p) - owd(q) + STALE_PATH_MARGIN
//! ```
//!
//! Until `expected(p)` a quiet path holds every gap above its highest number; after it, it
//! holds only gaps above `n` (numbers sent after `n`), so the gaps below `n` are given up and
//! `n` released, and the next held packet is judged the same way at the next arrival. Without a
//! delay sample of `p` or of `q` (a path never stamped, unstamped arrivals before a time-sync
//! frame) a quiet path holds nothing, as before this rule.
//!
//! Why it matters: a scheduler that uses a slower path sparsely (CPF or ACPF sending on the
//! costlier path only when the cheaper one's window is full) leaves that path silent for
//! seconds, then sends one packet on it. Under a pure freshness rule that packet's gap was given
//! up as soon as the fast path passed it, and the packet, arriving one delay difference later,
//! was released late: end-to-end TCP saw a loss, then a duplicate. Simulator, ASYM200 (path 2
//! 200 ms slower) without path exclusion, Cubic end to end over ACPF: 115% of the single-path
//! time with the freshness rule alone, 96% with the delay rule (docs/validation.md, "Fast loss
//! detection on quiet paths").
//!
//! # Other choices where the sources are vague
//! - *Start*: a path that has delivered nothing yet counts as active, and as possibly carrying
//!   any number, for 1 s after the first arrival on any path, then as silent (it has no delay
//!   sample, so the delay rule cannot hold a gap for it). Otherwise the first packets of the
//!   slower path would all be given up before it delivered its first.
//! - *Margin*: [`STALE_PATH_MARGIN`], Table 1's added margin of the adaptive wait limit (10 ms):
//!   the quiet path's delay may have grown by a little queueing since its last sample.
//! - *Duplicates count*: under redundant scheduling the slower path's copies are all duplicates,
//!   yet they show that path's progress; without them a gap on the fast path would be given up
//!   before the slow path's copy could fill it.
//! - *When*: on arrivals only. A path going stale, or a quiet path's expected arrival passing,
//!   lets a gap go only at the next arrival or at the wait limit, whichever comes first; no extra
//!   timer is kept for it.
//! - Fast loss detection is an extra reason to give a gap up; the wait limit still applies.
//!   Retransmitting tunnels (reliable per path) break the ordering argument above: a
//!   retransmission travels behind higher numbers on its path and is released late.

use std::time::Duration;

use super::path_delay::PATH_SAMPLE_MAX_AGE;
use super::DEFAULT_MARGIN;
use crate::time::Instant;

const PATH_SAMPLE_MAX_AGE_NS: u64 = PATH_SAMPLE_MAX_AGE.as_nanos() as u64;

/// Added to a quiet path's expected arrival (see the module documentation).
pub const STALE_PATH_MARGIN: Duration = DEFAULT_MARGIN;

const STALE_PATH_MARGIN_NS: i128 = STALE_PATH_MARGIN.as_nanos() as i128;

/// How far one path has got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PathProgress {
    highest_seq: u64,
    last_arrival: Instant,
    /// The path's latest one-way delay sample (receiver arrival minus sender timestamp, clock
    /// offset included), kept while the path is quiet.
    owd_ns: Option<i128>,
}

/// The lowest packet the reorder buffer holds: the first number above the head-of-line gap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldHead {
    pub seq: u64,
    pub arrival: Instant,
    /// The path it arrived on.
    pub path: usize,
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

    /// A packet numbered `global_seq` (first copy or duplicate) arrived on `path` at `now`,
    /// with one-way delay `owd_ns` (clock offset included) when it had a send timestamp or its
    /// path a fresh sample. Path indices beyond `n_paths` are ignored.
    pub fn on_arrival(&mut self, now: Instant, path: usize, global_seq: u64, owd_ns: Option<i128>) {
        let Some(slot) = self.paths.get_mut(path) else {
            return;
        };
        self.started.get_or_insert(now);
        let (highest_seq, owd_ns) = match *slot {
            Some(p) => (p.highest_seq.max(global_seq), owd_ns.or(p.owd_ns)),
            None => (global_seq, owd_ns),
        };
        *slot = Some(PathProgress { highest_seq, last_arrival: now, owd_ns });
    }

    /// Every missing number below the returned one is lost: each path active at `now` has
    /// delivered a packet numbered at least that, and each quiet path with a delay sample could
    /// no longer bring one (the delay rule, judged at the lowest held packet `head`). `None`
    /// while no path bounds anything, or while a path that has delivered nothing yet still
    /// counts as active.
    pub fn lost_below(&self, now: Instant, head: Option<HeldHead>) -> Option<u64> {
        let active = |at: Instant| now.nanos_since(at) <= PATH_SAMPLE_MAX_AGE_NS;
        // The head's path's delay, against which a quiet path's is compared.
        let head_owd = head.and_then(|h| self.paths.get(h.path).copied().flatten()?.owd_ns);
        let mut bound: Option<u64> = None;
        let mut limit = |b: u64| bound = Some(bound.map_or(b, |x| x.min(b)));
        for p in &self.paths {
            match p {
                Some(p) if active(p.last_arrival) => limit(p.highest_seq),
                Some(p) => {
                    let (Some(h), Some(owd_q), Some(owd_p)) = (head, head_owd, p.owd_ns) else {
                        continue;
                    };
                    let expected =
                        i128::from(h.arrival.as_nanos()) + owd_p - owd_q + STALE_PATH_MARGIN_NS;
                    if i128::from(now.as_nanos()) < expected {
                        limit(p.highest_seq);
                    } else {
                        limit(p.highest_seq.max(h.seq));
                    }
                }
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
        assert_eq!(d.lost_below(t_ms(0), None), None);
        d.on_arrival(t_ms(1), 0, 7, None);
        assert_eq!(
            d.lost_below(t_ms(1), None),
            None,
            "path 1 has not delivered yet: may carry 0..7"
        );
        d.on_arrival(t_ms(2), 1, 4, None);
        assert_eq!(d.lost_below(t_ms(2), None), Some(4), "path 1 may still carry 5 and 6");
        d.on_arrival(t_ms(3), 1, 9, None);
        assert_eq!(d.lost_below(t_ms(3), None), Some(7), "now path 0 may still carry 8");
        // A late or duplicate number does not move a path back.
        d.on_arrival(t_ms(4), 0, 2, None);
        assert_eq!(d.lost_below(t_ms(4), None), Some(7));
    }

    #[test]
    fn a_path_silent_for_more_than_a_second_no_longer_holds_gaps_open() {
        let mut d = FastLossDetector::new(2);
        d.on_arrival(t_ms(0), 1, 3, None);
        d.on_arrival(t_ms(500), 0, 50, None);
        assert_eq!(d.lost_below(t_ms(1000), None), Some(3), "exactly 1 s: path 1 still active");
        let later = Instant::from_nanos(t_ms(1000).as_nanos() + 1);
        assert_eq!(d.lost_below(later, None), Some(50));
        assert_eq!(d.lost_below(t_ms(1501), None), None, "both silent");
        // Unknown path indices are ignored.
        d.on_arrival(t_ms(1600), 5, 1, None);
        assert_eq!(d.lost_below(t_ms(1600), None), None);
    }

    #[test]
    fn a_path_that_never_delivered_counts_for_the_first_second_only() {
        let mut d = FastLossDetector::new(3);
        d.on_arrival(t_ms(100), 0, 10, None);
        d.on_arrival(t_ms(600), 1, 12, None);
        // Path 2 has delivered nothing: it might carry any number, until 1 s after the start.
        assert_eq!(d.lost_below(t_ms(1100), None), None);
        let later = Instant::from_nanos(t_ms(1100).as_nanos() + 1);
        assert_eq!(d.lost_below(later, None), Some(12), "path 0 is stale too by then");
        // Arrivals on unknown paths do not start the clock.
        let mut d = FastLossDetector::new(2);
        d.on_arrival(t_ms(0), 7, 3, None);
        d.on_arrival(t_ms(1500), 0, 4, None);
        assert_eq!(d.lost_below(t_ms(1500), None), None, "path 1 silent since the start at 1.5 s");
    }

    /// Two paths: 0 with a one-way delay of 20 ms, 1 of 220 ms (the sender's clock runs
    /// 1000 s behind the receiver's; only differences matter). Path 1 delivered number 3 at
    /// 0.5 s and has been quiet since.
    fn quiet_slow_path() -> FastLossDetector {
        let owd = |ms: u64| Some(i128::from((1_000_000 + ms) * MS));
        let mut d = FastLossDetector::new(2);
        d.on_arrival(t_ms(100), 0, 1, owd(20));
        d.on_arrival(t_ms(500), 1, 3, owd(220));
        for (i, ms) in (1600..1700).step_by(10).enumerate() {
            d.on_arrival(t_ms(ms), 0, 100 + i as u64, owd(20));
        }
        d
    }

    #[test]
    fn a_quiet_path_holds_a_gap_until_its_packet_could_have_arrived() {
        let d = quiet_slow_path();
        // Number 100 arrived on path 0 at 1.6 s, sent at about 1.58 s; a gap below it (say
        // 99, sent on path 1 no later) could arrive on path 1 until 1.58 + 0.22 = 1.8 s,
        // 1.81 s with the margin.
        let head = Some(HeldHead { seq: 100, arrival: t_ms(1600), path: 0 });
        assert_eq!(d.lost_below(t_ms(1700), head), Some(3), "path 1 may still bring 4..100");
        assert_eq!(d.lost_below(t_ms(1809), head), Some(3));
        assert_eq!(
            d.lost_below(t_ms(1810), head),
            Some(100),
            "path 1's packet would have arrived: the gaps below 100 go, 100 is released"
        );
        // A later head was sent later: it is judged by its own arrival.
        let later = Some(HeldHead { seq: 105, arrival: t_ms(1650), path: 0 });
        assert_eq!(d.lost_below(t_ms(1810), later), Some(3));
        assert_eq!(d.lost_below(t_ms(1860), later), Some(105));
        // Without a head, or under the freshness rule alone, a quiet path holds nothing.
        assert_eq!(d.lost_below(t_ms(1700), None), Some(109));
    }

    #[test]
    fn a_quiet_path_without_a_delay_sample_holds_nothing() {
        let mut d = FastLossDetector::new(2);
        d.on_arrival(t_ms(100), 0, 1, None);
        d.on_arrival(t_ms(500), 1, 3, None);
        d.on_arrival(t_ms(1600), 0, 100, Some(0));
        let head = Some(HeldHead { seq: 100, arrival: t_ms(1600), path: 0 });
        assert_eq!(d.lost_below(t_ms(1600), head), Some(100), "path 1 has no sample");
        // An unstamped arrival keeps the path's earlier sample.
        let mut d = quiet_slow_path();
        d.on_arrival(t_ms(1700), 1, 4, None);
        d.on_arrival(t_ms(2800), 0, 200, Some(i128::from((1_000_000 + 20) * MS)));
        let head = Some(HeldHead { seq: 200, arrival: t_ms(2800), path: 0 });
        assert_eq!(d.lost_below(t_ms(2800), head), Some(4), "path 1's 220 ms sample is kept");
    }
}
