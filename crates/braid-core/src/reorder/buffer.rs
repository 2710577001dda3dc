//! The reorder buffer: refuses duplicates, optionally equalises path delays, holds packets that
//! arrived beyond a gap, releases them in global sequence order, and gives a gap up when the
//! oldest held packet has waited the wait limit or, with fast loss detection, when every active
//! path has delivered beyond it.
//!
//! Sources: Pieska et al. 2024, section 2.1 (the reordering module "can adjust the timing of
//! packets arriving earlier than expected, up to a predefined limit"); draft-amend-iccrg-multipath-
//! reordering; MP-DCCP's active reordering module, read for behaviour only (a ring indexed by
//! the overall sequence number, drained when the expected packet arrives or when the oldest
//! buffered packet times out). Policy choices (late packets, duplicates, the static default)
//! are listed in the module documentation (`mod.rs`); the parts in their own files.
//!
//! # Stages of `insert`
//! 1. Every arrival is a delay sample of its path (`PathDelays`, feeding the adaptive wait
//!    limit) and, with fast loss detection, progress of its path (`FastLossDetector`).
//! 2. The duplicate filter refuses numbers received before ([`Insert::Duplicate`]).
//! 3. With equalisation the packet waits in the delay line (`equalize.rs`) until its hold ends;
//!    a packet without hold whose path has nothing in the line goes straight on.
//! 4. The reorder stage below, which the packet *enters* at the end of its hold.
//!
//! # Rules of the reorder stage (`static` and `adaptive`)
//! - A packet with the next expected sequence number is released at once, with the run of
//!   consecutive held packets after it.
//! - A packet beyond a gap is held until `deadline = max(arrival + wait_limit(), entered)`, the
//!   limit read when the deadline is checked (it equals `arrival + wait_limit()` without
//!   equalisation: the hold counts as part of the wait, see `equalize.rs`). When the earliest
//!   deadline passes, every sequence number below that packet that is still missing is given up
//!   (`skipped_seqs`), the held packets below it and the packet itself are released
//!   (`released_on_timeout`), then the consecutive run after it.
//! - With fast loss detection, after every arrival and every packet entering from the delay
//!   line: every missing number below the bound `FastLossDetector::lost_below` (judged for
//!   quiet paths at the lowest held packet, `held_head`; capped at the
//!   lowest number still in the delay line, which has arrived) is given up, the held packets
//!   below it and the packet at the bound are released (`released_on_fast_loss`), then the
//!   consecutive run after it.
//! - With a repair wait, a held packet below which some path's repair window (the global
//!   numbers a reliable path may still deliver behind a loss it is repairing, set by the tunnel
//!   receiver) meets a missing number has `deadline = max(deadline, arrival + repair_wait)`.
//!   The window is an interval, so a number in it may already be held or released; the wait is
//!   then longer than it needs to be, never shorter. Deadlines stay ordered within a lane: the
//!   test only widens as the packet's number grows.
//! - A packet below the next expected number (its gap was given up) is released at once as
//!   `late`.
//! - At most `buffer_pkts` packets are held: those numbered `next_expected + 1 ..=
//!   next_expected + buffer_pkts`. A packet beyond that forces releases from the head, giving
//!   gaps up, until it fits (`released_on_overflow`).
//! - `none`: every packet goes straight out when it enters the stage, in entry order.
//!
//! # Time
//! Events (a hold ending, a deadline passing) are handled in time order, a hold ending first on
//! a tie, both by `poll_release(now)` and at the start of `insert(now)`; so a driver that polls
//! late sees what one that polls on time sees. `now` is expected not to decrease; if it does,
//! nothing panics and processing order stands in for time order.
//!
//! # Data structures (no allocation per packet once built)
//! - `ring`: `buffer_pkts` slots; sequence number `s` lives in slot `s % buffer_pkts`. The held
//!   numbers lie within `buffer_pkts` consecutive values, so they never share a slot, and the
//!   duplicate filter lets each number in once, so a slot is never claimed twice.
//! - `waiting`: per path (plus one lane shared by path indices beyond the tunnel's), a FIFO of
//!   `(global_seq, arrival, entered)` of held packets in entry order. Within a path both times
//!   only grow, so each lane is ordered by deadline and the earliest deadline is at the front of
//!   one of the lanes. A packet released in order leaves its entry behind; such entries are
//!   dropped when they reach the front, so every front is a held packet. Entries only cover
//!   numbers within `buffer_pkts` of their lane's front, so a lane holds at most
//!   `2 * buffer_pkts`.
//! - `ready`: packets released but not yet returned by `poll_release`. A caller that drains
//!   `poll_release` after every event never has more than `buffer_pkts + 1` there.
//! - The delay line holds at most `buffer_pkts` packets.
//!
//! Queues are allocated up front, the lanes with an even share of their bound; a lane that
//! carries most of the traffic grows a few times, amortised, up to its bound.

use std::collections::VecDeque;
use std::ops::Range;
use std::time::Duration;

use super::duplicate_filter::{DuplicateFilter, Seen};
use super::equalize::DelayLine;
use super::fast_loss::{FastLossDetector, HeldHead};
use super::path_delay::PathDelays;
use super::wait_limit::WaitLimit;
use super::{Insert, Released, ReorderConfig, ReorderKind, ReorderStats, MAX_BUFFER_PKTS};
use crate::time::Instant;

/// Why a packet left the buffer; selects the counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cause {
    InOrder,
    Timeout,
    FastLoss,
    Overflow,
    Late,
}

/// Something due at a point in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// The hold of the front packet of this delay-line lane ends.
    HoldEnds(usize),
    /// The deadline of this held packet passes.
    Expiry(u64),
}

/// A held packet's place in its path's deadline order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Waiting {
    seq: u64,
    arrival: Instant,
    entered: Instant,
}

/// Receiver-side reorder buffer for payload handles `P`. See the module documentation.
#[derive(Debug)]
pub struct ReorderBuffer<P> {
    kind: ReorderKind,
    filter: DuplicateFilter,
    delays: PathDelays,
    wait: WaitLimit,
    fast_loss: Option<FastLossDetector>,
    equalizer: Option<DelayLine<P>>,
    /// Most packets held in the delay line (and in the ring).
    buffer_pkts: usize,
    /// Held packets by `global_seq % ring.len()`; every held packet has
    /// `next_expected < global_seq <= next_expected + ring.len()`.
    ring: Box<[Option<Released<P>>]>,
    /// Packets in `ring`.
    held: usize,
    /// Lowest sequence number neither released nor given up. Never held: a packet carrying it is
    /// released when it enters the reorder stage.
    next_expected: u64,
    /// Per lane (path), held packets in entry order; every front is held.
    waiting: Box<[VecDeque<Waiting>]>,
    ready: VecDeque<Released<P>>,
    repair_wait: Option<Duration>,
    /// Per path, the global numbers it may still deliver behind a loss it is repairing
    /// (`start..end`); see [`ReorderBuffer::set_repair_window`].
    repairs: Box<[Option<Range<u64>>]>,
    /// Paths with a repair window.
    repairs_open: usize,
    /// Per path, the round-trip time the data plane measured before any data (its probes), for
    /// the adaptive wait limit's first estimate; see [`ReorderBuffer::on_path_rtt_sample`].
    rtt_priors: Box<[Option<Duration>]>,
    /// Two paths have had fresh delay samples at once: the priors are no longer used.
    spread_measured: bool,
    stats: ReorderStats,
}

impl<P> ReorderBuffer<P> {
    /// A buffer for a tunnel of `n_paths` paths. `config` should have passed
    /// [`ReorderConfig::validate`]; out-of-range values are clamped rather than panicking, and
    /// fast loss detection is ignored under `none`.
    pub fn new(config: ReorderConfig, n_paths: usize) -> Self {
        let capacity = config.buffer_pkts.clamp(1, MAX_BUFFER_PKTS);
        let lanes = n_paths + 1;
        // Passthrough holds nothing; keep one slot so slot arithmetic never divides by zero.
        let (ring_len, lane_len) = match config.kind {
            ReorderKind::None => (1, 0),
            ReorderKind::Static | ReorderKind::Adaptive => {
                (capacity, (2 * capacity).div_ceil(lanes))
            }
        };
        let fast_loss = (config.fast_loss_detection && config.kind != ReorderKind::None)
            .then(|| FastLossDetector::new(n_paths));
        ReorderBuffer {
            kind: config.kind,
            filter: DuplicateFilter::new(),
            delays: PathDelays::new(n_paths),
            wait: WaitLimit::new(&config),
            fast_loss,
            equalizer: config.equalize_delay.then(|| DelayLine::new(lanes, capacity)),
            buffer_pkts: capacity,
            ring: (0..ring_len).map(|_| None).collect(),
            held: 0,
            next_expected: 0,
            waiting: (0..lanes).map(|_| VecDeque::with_capacity(lane_len)).collect(),
            ready: VecDeque::with_capacity(capacity + 1),
            repair_wait: config.repair_wait.filter(|_| config.kind != ReorderKind::None),
            repairs: (0..n_paths).map(|_| None).collect(),
            repairs_open: 0,
            rtt_priors: vec![None; n_paths].into_boxed_slice(),
            spread_measured: false,
            stats: ReorderStats::default(),
        }
    }

    /// A packet arrived on `path` at `now`, carrying `global_seq` and the sender's send timestamp
    /// `send_ts_ns` (sender clock; only differences between paths matter).
    pub fn insert(
        &mut self,
        now: Instant,
        path: usize,
        global_seq: u64,
        send_ts_ns: u64,
        payload: P,
    ) -> Insert<P> {
        self.advance(now);
        let owd_ns = self.delays.on_arrival(now, path, send_ts_ns);
        if owd_ns.is_some() {
            let spread = self.spread_sample(now);
            self.wait.on_spread_sample(spread);
        }
        self.insert_sampled(now, path, global_seq, owd_ns, payload)
    }

    /// A packet without a send timestamp (a compact message of the data plane) arrived on
    /// `path` at `now`: it takes its path's latest one-way delay for delay equalisation and
    /// gives no sample of its own; [`ReorderBuffer::sample_delay`] brings the samples.
    pub fn insert_unstamped(
        &mut self,
        now: Instant,
        path: usize,
        global_seq: u64,
        payload: P,
    ) -> Insert<P> {
        self.advance(now);
        let owd_ns = self.delays.latest(now, path);
        self.insert_sampled(now, path, global_seq, owd_ns, payload)
    }

    /// A one-way-delay sample of `path` taken apart from an insert: a packet that arrived at
    /// `arrived` was sent at `send_ts_ns` (sender clock), as a time-sync frame says
    /// ([`crate::wire::TimeSync`]); `now` is when that became known.
    pub fn sample_delay(&mut self, now: Instant, arrived: Instant, path: usize, send_ts_ns: u64) {
        self.advance(now);
        if self.delays.on_arrival(arrived, path, send_ts_ns).is_some() {
            let spread = self.spread_sample(now);
            self.wait.on_spread_sample(spread);
        }
    }

    /// The data plane measured path `path`'s round-trip time `rtt` (a probe's, before or beside
    /// the data). Until two paths have delivered data within a second of each other, the
    /// adaptive wait limit has no measured delay difference: each arrival's sample is 0 and the
    /// limit is the bare margin. The first packets a scheduler sends on a slower path then find
    /// the packets of the faster path given up on before they arrive (with Table 1's paths the
    /// one-way delays differ by 10 ms, the margin's size, plus any queue), and end-to-end TCP
    /// sees them reordered: a spurious fast retransmit in slow start, after which Linux's
    /// Cubic keeps `last_max_cwnd` at that window and grows from it by its cubic curve for
    /// seconds (docs/validation.md). So until then the sample is half the spread of the
    /// paths' round-trip times, an estimate of their one-way delay difference on symmetric
    /// paths (draft-amend-iccrg-multipath-reordering derives the expiration timer from the
    /// delay difference between the fastest and the slowest path); real samples replace it for
    /// good once two paths are fresh together. Zero samples and unknown paths are ignored.
    pub fn on_path_rtt_sample(&mut self, path: usize, rtt: Duration) {
        if self.spread_measured || rtt.is_zero() {
            return;
        }
        let Some(slot) = self.rtt_priors.get_mut(path) else { return };
        *slot = Some(rtt);
        if let Some(spread) = self.prior_spread() {
            self.wait.on_spread_sample(spread);
        }
    }

    /// The spread sample of an arrival at `now`: the measured spread once two paths are fresh,
    /// before that the priors' (see [`ReorderBuffer::on_path_rtt_sample`]), else 0.
    fn spread_sample(&mut self, now: Instant) -> Duration {
        if self.delays.fresh_paths(now) >= 2 {
            self.spread_measured = true;
            return self.delays.spread(now);
        }
        if self.spread_measured {
            return Duration::ZERO;
        }
        self.prior_spread().unwrap_or(Duration::ZERO)
    }

    /// Half the spread of the paths' prior round-trip times, once two paths have one.
    fn prior_spread(&self) -> Option<Duration> {
        let mut priors = self.rtt_priors.iter().flatten();
        let first = *priors.next()?;
        let (lo, hi, n) =
            priors.fold((first, first, 1), |(lo, hi, n), &r| (lo.min(r), hi.max(r), n + 1));
        (n >= 2).then(|| (hi - lo) / 2)
    }

    fn insert_sampled(
        &mut self,
        now: Instant,
        path: usize,
        global_seq: u64,
        owd_ns: Option<i128>,
        payload: P,
    ) -> Insert<P> {
        if let Some(f) = &mut self.fast_loss {
            f.on_arrival(now, path, global_seq, owd_ns);
        }
        let verdict = match self.filter.check_and_mark(global_seq) {
            Seen::New => {
                let hold = match (&self.equalizer, owd_ns) {
                    (Some(_), Some(o)) => self.delays.lag_behind_slowest(now, o),
                    _ => Duration::ZERO,
                };
                let packet = Released { payload, global_seq, arrival: now, hold_end: now, path };
                self.accept(now, hold, packet);
                Insert::Accepted
            }
            Seen::Duplicate => {
                self.stats.duplicates += 1;
                Insert::Duplicate(payload)
            }
            Seen::TooOld => {
                self.stats.duplicates += 1;
                self.stats.too_old += 1;
                Insert::Duplicate(payload)
            }
        };
        // A duplicate is progress of its path too.
        self.detect_losses(now);
        verdict
    }

    /// Next packet ready for in-order delivery at `now` (call until `None`).
    pub fn poll_release(&mut self, now: Instant) -> Option<Released<P>> {
        loop {
            if let Some(p) = self.ready.pop_front() {
                return Some(p);
            }
            if !self.step(now) {
                return None;
            }
        }
    }

    /// Earliest time `poll_release` may release something held (a hold ending or a wait-limit
    /// expiry), if any.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.next_event().map(|(at, _)| at)
    }

    /// `path` holds back packets behind a loss it is repairing, and may still deliver any global
    /// number in `window` (above the last number it delivered, up to the highest it holds
    /// back); `None` once it holds nothing back. Only read with a repair wait; unknown paths are
    /// ignored.
    pub fn set_repair_window(&mut self, path: usize, window: Option<Range<u64>>) {
        let Some(slot) = self.repairs.get_mut(path) else {
            return;
        };
        let window = window.filter(|w| !w.is_empty());
        self.repairs_open =
            self.repairs_open + usize::from(window.is_some()) - usize::from(slot.is_some());
        *slot = window;
    }

    /// The current wait limit (zero for `none`).
    pub fn wait_limit(&self) -> Duration {
        self.wait.current()
    }

    /// Path `path`'s one-way-delay samples so far, summarised ([`super::OwdSummary`]).
    pub fn path_owd(&self, path: usize) -> Option<super::OwdSummary> {
        self.delays.summary(path)
    }

    /// Packets held, including ones in the delay line and ones ready but not yet polled.
    pub fn len(&self) -> usize {
        self.held + self.ready.len() + self.equalizer.as_ref().map_or(0, DelayLine::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lowest global sequence number neither released nor given up (0 for `none`).
    pub fn next_expected(&self) -> u64 {
        self.next_expected
    }

    pub fn stats(&self) -> ReorderStats {
        self.stats
    }

    fn capacity(&self) -> u64 {
        self.ring.len() as u64
    }

    fn slot(&self, seq: u64) -> usize {
        (seq % self.capacity()) as usize
    }

    /// Lane of a path: its own, or the shared last one for indices beyond the tunnel's.
    fn lane(&self, path: usize) -> usize {
        path.min(self.waiting.len() - 1)
    }

    #[inline]
    fn deadline(&self, w: &Waiting) -> Instant {
        let deadline = (w.arrival + self.wait.current()).max(w.entered);
        if self.repairs_open == 0 {
            return deadline;
        }
        self.deadline_for_repair(deadline, w)
    }

    /// `deadline` extended by the repair wait when a path's repair window meets the missing
    /// numbers below `w` (`next_expected..w.seq`). Out of line: it runs only while a reliable
    /// path holds packets back.
    #[inline(never)]
    fn deadline_for_repair(&self, deadline: Instant, w: &Waiting) -> Instant {
        let Some(repair) = self.repair_wait else {
            return deadline;
        };
        let next = self.next_expected;
        if self.repairs.iter().flatten().any(|r| r.start < w.seq && r.end > next) {
            deadline.max(w.arrival + repair)
        } else {
            deadline
        }
    }

    /// Handles every event due by `now`.
    fn advance(&mut self, now: Instant) {
        while self.step(now) {}
    }

    /// Handles the earliest event if it is due by `now`; false when none is.
    fn step(&mut self, now: Instant) -> bool {
        let Some((at, event)) = self.next_event().filter(|&(at, _)| at <= now) else {
            return false;
        };
        match event {
            Event::HoldEnds(lane) => {
                if let Some((_, packet)) = self.equalizer.as_mut().and_then(|e| e.pop(lane)) {
                    self.enter(at, packet);
                    self.detect_losses(at);
                }
            }
            Event::Expiry(seq) => self.give_up_below(seq.saturating_add(1), Cause::Timeout),
        }
        true
    }

    /// The earliest pending event; a hold ending goes first on a tie, so the packet it frees
    /// can still fill a gap whose deadline is the same instant.
    fn next_event(&self) -> Option<(Instant, Event)> {
        let hold = self.equalizer.as_ref().and_then(DelayLine::next_exit);
        // Every lane's front is held, so with nothing held no deadline is pending (most
        // arrivals on in-order paths find the buffer so).
        let expiry = (self.held > 0)
            .then(|| {
                self.waiting
                    .iter()
                    .filter_map(|lane| lane.front())
                    .map(|w| (self.deadline(w), w.seq))
                    .min_by_key(|&(at, _)| at)
            })
            .flatten();
        match (hold, expiry) {
            (Some((h, lane)), Some((e, _))) if h <= e => Some((h, Event::HoldEnds(lane))),
            (_, Some((e, seq))) => Some((e, Event::Expiry(seq))),
            (Some((h, lane)), None) => Some((h, Event::HoldEnds(lane))),
            (None, None) => None,
        }
    }

    /// Stage 3: a new packet enters the delay line, or the reorder stage when it has no hold and
    /// nothing of its path is in the line.
    fn accept(&mut self, now: Instant, hold: Duration, packet: Released<P>) {
        let lane = self.lane(packet.path);
        let Some(line) = self.equalizer.as_mut() else {
            self.enter(now, packet);
            return;
        };
        if hold.is_zero() && line.lane_is_empty(lane) {
            self.enter(now, packet);
            return;
        }
        let early = if line.len() >= self.buffer_pkts {
            line.next_exit().and_then(|(_, l)| line.pop(l))
        } else {
            None
        };
        line.push(lane, now + hold, packet);
        if let Some((_, p)) = early {
            self.enter(now, p);
        }
    }

    /// Stage 4: `packet` reaches the reorder stage at `at`.
    fn enter(&mut self, at: Instant, mut packet: Released<P>) {
        packet.hold_end = at;
        let seq = packet.global_seq;
        if self.kind == ReorderKind::None {
            self.release(packet, Cause::InOrder);
            return;
        }
        if seq < self.next_expected {
            self.release(packet, Cause::Late);
            return;
        }
        if seq - self.next_expected > self.capacity() {
            self.make_room_for(seq);
        }
        if seq == self.next_expected {
            self.next_expected = seq.saturating_add(1);
            self.release(packet, Cause::InOrder);
            self.release_run();
            self.drop_stale_waiting();
            return;
        }
        let slot = self.slot(seq);
        debug_assert!(self.ring[slot].is_none(), "the duplicate filter lets {seq} in once");
        let lane = self.lane(packet.path);
        self.waiting[lane].push_back(Waiting { seq, arrival: packet.arrival, entered: at });
        self.ring[slot] = Some(packet);
        self.held += 1;
    }

    /// Fast loss detection: gives up every missing number every active path has passed, except
    /// numbers still in the delay line (they have arrived).
    fn detect_losses(&mut self, now: Instant) {
        if self.held == 0 {
            return;
        }
        let Some(f) = self.fast_loss.as_ref() else {
            return;
        };
        let Some(mut bound) = f.lost_below(now, self.held_head()) else {
            return;
        };
        if let Some(lowest) = self.equalizer.as_ref().and_then(DelayLine::lowest_seq) {
            bound = bound.min(lowest);
        }
        if bound > self.next_expected {
            // The packet at the bound is held unless the bound was capped by the delay line;
            // it goes out with the packets the give-up released.
            let end = if self.is_held(bound) { bound.saturating_add(1) } else { bound };
            self.give_up_below(end, Cause::FastLoss);
        }
    }

    /// The lowest held packet: each lane's front is its lowest held number (a path's packets
    /// enter in the order they were sent), so the lowest of the fronts.
    fn held_head(&self) -> Option<HeldHead> {
        self.waiting
            .iter()
            .enumerate()
            .filter_map(|(lane, w)| w.front().map(|w| (lane, w)))
            .min_by_key(|(_, w)| w.seq)
            .map(|(lane, w)| HeldHead { seq: w.seq, arrival: w.arrival, path: lane })
    }

    fn release(&mut self, packet: Released<P>, cause: Cause) {
        match cause {
            Cause::InOrder => self.stats.in_order += 1,
            Cause::Timeout => self.stats.released_on_timeout += 1,
            Cause::FastLoss => self.stats.released_on_fast_loss += 1,
            Cause::Overflow => self.stats.released_on_overflow += 1,
            Cause::Late => self.stats.late += 1,
        }
        self.ready.push_back(packet);
    }

    /// Removes and returns the held packet numbered `seq`, if any.
    fn take_held(&mut self, seq: u64) -> Option<Released<P>> {
        let slot = self.slot(seq);
        if self.ring[slot].as_ref().is_some_and(|p| p.global_seq == seq) {
            self.held -= 1;
            self.ring[slot].take()
        } else {
            None
        }
    }

    fn is_held(&self, seq: u64) -> bool {
        seq > self.next_expected
            && self.ring[self.slot(seq)].as_ref().is_some_and(|p| p.global_seq == seq)
    }

    /// Releases the consecutive held packets starting at `next_expected`.
    fn release_run(&mut self) {
        while self.held > 0 {
            let Some(p) = self.take_held(self.next_expected) else {
                break;
            };
            self.next_expected = self.next_expected.saturating_add(1);
            self.release(p, Cause::InOrder);
        }
    }

    /// Gives up every missing number below `end`, releasing the held packets below it for
    /// `cause`, then the consecutive run from `end` on. The one place gaps are given up on
    /// purpose: by a deadline (`end` = the expired packet's number + 1) or by fast loss
    /// detection.
    fn give_up_below(&mut self, end: u64, cause: Cause) {
        while self.next_expected < end {
            if self.held == 0 {
                self.stats.skipped_seqs += end - self.next_expected;
                self.next_expected = end;
                break;
            }
            let seq = self.next_expected;
            match self.take_held(seq) {
                Some(p) => self.release(p, cause),
                None => self.stats.skipped_seqs += 1,
            }
            self.next_expected = seq + 1;
        }
        self.release_run();
        self.drop_stale_waiting();
    }

    /// Releases from the head, giving gaps up, until `seq` fits: `seq - next_expected <=
    /// capacity`.
    fn make_room_for(&mut self, seq: u64) {
        let target = seq - self.capacity();
        while self.next_expected < target {
            if self.held == 0 {
                self.stats.skipped_seqs += target - self.next_expected;
                self.next_expected = target;
                break;
            }
            let head = self.next_expected;
            match self.take_held(head) {
                Some(p) => self.release(p, Cause::Overflow),
                None => self.stats.skipped_seqs += 1,
            }
            self.next_expected = head + 1;
        }
        self.release_run();
        self.drop_stale_waiting();
    }

    /// Pops entries of packets no longer held from the lane fronts, so each front gives its
    /// lane's next deadline.
    fn drop_stale_waiting(&mut self) {
        for i in 0..self.waiting.len() {
            while let Some(&w) = self.waiting[i].front() {
                if self.is_held(w.seq) {
                    break;
                }
                self.waiting[i].pop_front();
            }
        }
    }
}

#[cfg(test)]
mod tests;
