//! The reorder buffer: holds packets that arrived beyond a gap, releases them in global
//! sequence order, and gives a gap up when the oldest held packet has waited the wait limit.
//!
//! Sources: seed 000 section 2.1 (the reordering module "can adjust the timing of packets
//! arriving earlier than expected, up to a predefined limit"); draft-amend-iccrg-multipath-
//! reordering; MP-DCCP's active reordering module, read for behaviour only (a ring indexed by
//! the overall sequence number, drained when the expected packet arrives or when the oldest
//! buffered packet times out). Policy choices (late packets, duplicates, the static default)
//! are listed in the module documentation (`mod.rs`).
//!
//! # Rules (`static` and `adaptive`)
//! - A packet with the next expected sequence number is released at once, with the run of
//!   consecutive held packets after it.
//! - A packet beyond a gap is held. It may wait at most the wait limit after its arrival:
//!   `deadline = arrival + wait_limit()`, the limit read when the deadline is checked. All held
//!   packets share the limit, so deadlines are ordered as arrivals are, and the oldest arrival
//!   holds the earliest deadline. When it passes, every sequence number below that packet that
//!   is still missing is given up (`skipped_seqs`), the held packets below it and the packet
//!   itself are released (`released_on_timeout`), then the consecutive run after it.
//! - A packet below the next expected number (its gap was given up) is released at once as
//!   `late`; a second copy of a held packet is handed back as a duplicate.
//! - At most `buffer_pkts` packets are held: those numbered `next_expected + 1 ..=
//!   next_expected + buffer_pkts`. A packet beyond that forces releases from the head, giving
//!   gaps up, until it fits (`released_on_overflow`).
//! - `none`: every packet goes straight out, in arrival order.
//!
//! # Data structures (no allocation per packet once built)
//! - `ring`: `buffer_pkts` slots; sequence number `s` lives in slot `s % buffer_pkts`. The held
//!   numbers lie within `buffer_pkts` consecutive values, so they never share a slot.
//! - `arrivals`: a FIFO of `(global_seq, arrival)` of held packets in arrival order. A packet
//!   released in order leaves its entry behind; such entries are dropped when they reach the
//!   front, so the front is always a held packet and gives the earliest deadline. Entries only
//!   cover numbers within `buffer_pkts` of the front's, so at most `2 * buffer_pkts` exist.
//! - `ready`: packets released but not yet returned by `poll_release`. A caller that drains
//!   `poll_release` after every event never has more than `buffer_pkts + 1` there.
//!
//! Both queues are allocated at their bound up front. `now` is expected not to decrease; if it
//! does, nothing panics and insertion order stands in for arrival order.

use std::collections::VecDeque;
use std::time::Duration;

use super::wait_limit::WaitLimit;
use super::{Insert, Released, ReorderConfig, ReorderKind, ReorderStats, MAX_BUFFER_PKTS};
use crate::time::Instant;

/// Why a packet left the buffer; selects the counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cause {
    InOrder,
    Timeout,
    Overflow,
    Late,
}

/// Receiver-side reorder buffer for payload handles `P`. See the module documentation.
#[derive(Debug)]
pub struct ReorderBuffer<P> {
    kind: ReorderKind,
    wait: WaitLimit,
    /// Held packets by `global_seq % ring.len()`; every held packet has
    /// `next_expected < global_seq <= next_expected + ring.len()`.
    ring: Box<[Option<Released<P>>]>,
    /// Packets in `ring`.
    held: usize,
    /// Lowest sequence number neither released nor given up. Never held: a packet carrying it is
    /// released on arrival.
    next_expected: u64,
    /// `(global_seq, arrival)` of held packets in arrival order; the front is always held.
    arrivals: VecDeque<(u64, Instant)>,
    ready: VecDeque<Released<P>>,
    stats: ReorderStats,
}

impl<P> ReorderBuffer<P> {
    /// A buffer for a tunnel of `n_paths` paths. `config` should have passed
    /// [`ReorderConfig::validate`]; out-of-range values are clamped rather than panicking.
    pub fn new(config: ReorderConfig, n_paths: usize) -> Self {
        let capacity = config.buffer_pkts.clamp(1, MAX_BUFFER_PKTS);
        // Passthrough holds nothing; keep one slot so slot arithmetic never divides by zero.
        let (ring_len, fifo_len) = match config.kind {
            ReorderKind::None => (1, 0),
            ReorderKind::Static | ReorderKind::Adaptive => (capacity, 2 * capacity),
        };
        ReorderBuffer {
            kind: config.kind,
            wait: WaitLimit::new(&config, n_paths),
            ring: (0..ring_len).map(|_| None).collect(),
            held: 0,
            next_expected: 0,
            arrivals: VecDeque::with_capacity(fifo_len),
            ready: VecDeque::with_capacity(capacity + 1),
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
        self.wait.on_arrival(now, path, send_ts_ns);
        let packet = Released { payload, global_seq, arrival: now, path };
        if self.kind == ReorderKind::None {
            self.release(packet, Cause::InOrder);
            return Insert::Accepted;
        }
        if global_seq < self.next_expected {
            self.release(packet, Cause::Late);
            return Insert::Accepted;
        }
        if global_seq - self.next_expected > self.capacity() {
            self.make_room_for(global_seq);
        }
        if global_seq == self.next_expected {
            self.next_expected = global_seq.saturating_add(1);
            self.release(packet, Cause::InOrder);
            self.release_run();
            self.drop_stale_arrivals();
            return Insert::Accepted;
        }
        let slot = self.slot(global_seq);
        if self.ring[slot].is_some() {
            // Held numbers never share a slot, so this is the same number.
            self.stats.duplicates += 1;
            return Insert::Duplicate(packet.payload);
        }
        self.ring[slot] = Some(packet);
        self.held += 1;
        self.arrivals.push_back((global_seq, now));
        Insert::Accepted
    }

    /// Next packet ready for in-order delivery at `now` (call until `None`).
    pub fn poll_release(&mut self, now: Instant) -> Option<Released<P>> {
        loop {
            if let Some(p) = self.ready.pop_front() {
                return Some(p);
            }
            let &(oldest_seq, arrival) = self.arrivals.front()?;
            if now < self.deadline(arrival) {
                return None;
            }
            self.give_up_through(oldest_seq, Cause::Timeout);
        }
    }

    /// Earliest time `poll_release` may release something held (a wait-limit expiry), if any.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.arrivals.front().map(|&(_, arrival)| self.deadline(arrival))
    }

    /// The current wait limit (zero for `none`).
    pub fn wait_limit(&self) -> Duration {
        self.wait.current()
    }

    /// Packets held, including ones ready but not yet polled.
    pub fn len(&self) -> usize {
        self.held + self.ready.len()
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

    fn deadline(&self, arrival: Instant) -> Instant {
        arrival + self.wait.current()
    }

    fn release(&mut self, packet: Released<P>, cause: Cause) {
        match cause {
            Cause::InOrder => self.stats.in_order += 1,
            Cause::Timeout => self.stats.released_on_timeout += 1,
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

    /// Gives up every missing number up to the held packet `last`, releasing the held packets
    /// up to and including it for `cause`, then the consecutive run after it. The one place
    /// gaps are given up on purpose: fast loss detection, when it comes, decides earlier and
    /// calls this with its own cause.
    fn give_up_through(&mut self, last: u64, cause: Cause) {
        debug_assert!(self.is_held(last));
        loop {
            let seq = self.next_expected;
            match self.take_held(seq) {
                Some(p) => self.release(p, cause),
                None => self.stats.skipped_seqs += 1,
            }
            self.next_expected = seq.saturating_add(1);
            if seq >= last {
                break;
            }
        }
        self.release_run();
        self.drop_stale_arrivals();
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
        self.drop_stale_arrivals();
    }

    /// Pops arrival entries of packets no longer held, so the front gives the next deadline.
    fn drop_stale_arrivals(&mut self) {
        while let Some(&(seq, _)) = self.arrivals.front() {
            if self.is_held(seq) {
                break;
            }
            self.arrivals.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reorder::MAX_WAIT_LIMIT;
    use proptest::prelude::*;

    const MS: u64 = 1_000_000;

    fn t_ms(ms: u64) -> Instant {
        Instant::from_nanos(ms * MS)
    }

    fn buffer(kind: ReorderKind, buffer_pkts: usize) -> ReorderBuffer<u64> {
        let config = ReorderConfig { kind, buffer_pkts, ..ReorderConfig::default() };
        ReorderBuffer::new(config, 2)
    }

    /// Inserts `seq` on path 0 at `now` with a 10 ms one-way delay; the payload is `seq`.
    fn put(b: &mut ReorderBuffer<u64>, now: Instant, seq: u64) -> Insert<u64> {
        b.insert(now, 0, seq, now.as_nanos().saturating_sub(10 * MS), seq)
    }

    fn drain(b: &mut ReorderBuffer<u64>, now: Instant) -> Vec<u64> {
        std::iter::from_fn(|| b.poll_release(now)).map(|r| r.global_seq).collect()
    }

    #[test]
    fn in_order_packets_pass_straight_through() {
        let mut b = buffer(ReorderKind::Static, 8);
        for seq in 0..5 {
            assert_eq!(put(&mut b, t_ms(seq), seq), Insert::Accepted);
            assert_eq!(b.len(), 1, "ready until polled");
            assert_eq!(drain(&mut b, t_ms(seq)), vec![seq]);
            assert_eq!(b.poll_timeout(), None);
        }
        assert!(b.is_empty());
        assert_eq!(b.stats(), ReorderStats { in_order: 5, ..ReorderStats::default() });
    }

    #[test]
    fn gap_is_held_until_filled_then_everything_goes_in_order() {
        let mut b = buffer(ReorderKind::Static, 8);
        put(&mut b, t_ms(0), 0);
        assert_eq!(drain(&mut b, t_ms(0)), vec![0]);
        put(&mut b, t_ms(1), 2);
        put(&mut b, t_ms(2), 3);
        assert_eq!(drain(&mut b, t_ms(2)), Vec::<u64>::new());
        assert_eq!(b.len(), 2);
        put(&mut b, t_ms(3), 1);
        let released: Vec<_> = std::iter::from_fn(|| b.poll_release(t_ms(3))).collect();
        assert_eq!(released.iter().map(|r| r.global_seq).collect::<Vec<_>>(), vec![1, 2, 3]);
        // Arrival times survive for the head-of-line metric.
        assert_eq!(released[1].arrival, t_ms(1));
        assert!(b.is_empty());
        assert_eq!(b.poll_timeout(), None);
        assert_eq!(b.stats(), ReorderStats { in_order: 4, ..ReorderStats::default() });
    }

    #[test]
    fn unfilled_gap_is_skipped_after_exactly_the_static_wait() {
        let mut b = buffer(ReorderKind::Static, 8);
        put(&mut b, t_ms(0), 0);
        drain(&mut b, t_ms(0));
        put(&mut b, t_ms(1), 2);
        put(&mut b, t_ms(2), 3);
        put(&mut b, t_ms(3), 5);
        let deadline = t_ms(1) + Duration::from_millis(50);
        assert_eq!(b.poll_timeout(), Some(deadline));
        assert_eq!(drain(&mut b, Instant::from_nanos(deadline.as_nanos() - 1)), Vec::<u64>::new());
        assert_eq!(b.stats().skipped_seqs, 0);
        assert_eq!(drain(&mut b, deadline), vec![2, 3]);
        assert_eq!(b.next_expected(), 4);
        // Packet 5 keeps its own deadline, counted from its arrival.
        let deadline = t_ms(3) + Duration::from_millis(50);
        assert_eq!(b.poll_timeout(), Some(deadline));
        assert_eq!(drain(&mut b, Instant::from_nanos(deadline.as_nanos() - 1)), Vec::<u64>::new());
        assert_eq!(drain(&mut b, deadline), vec![5]);
        assert_eq!(
            b.stats(),
            ReorderStats {
                in_order: 2,
                released_on_timeout: 2,
                skipped_seqs: 2,
                ..ReorderStats::default()
            }
        );
    }

    #[test]
    fn expiry_of_the_oldest_arrival_releases_the_held_packets_below_it() {
        let mut b = buffer(ReorderKind::Static, 8);
        put(&mut b, t_ms(0), 3);
        put(&mut b, t_ms(5), 1);
        // The oldest arrival, not the lowest number, sets the deadline.
        assert_eq!(b.poll_timeout(), Some(t_ms(50)));
        assert_eq!(drain(&mut b, t_ms(50)), vec![1, 3]);
        assert_eq!(
            b.stats(),
            ReorderStats { released_on_timeout: 2, skipped_seqs: 2, ..ReorderStats::default() }
        );
    }

    #[test]
    fn poll_timeout_is_the_earliest_deadline() {
        let mut b = buffer(ReorderKind::Static, 16);
        assert_eq!(b.poll_timeout(), None);
        put(&mut b, t_ms(1), 5);
        put(&mut b, t_ms(2), 3);
        put(&mut b, t_ms(7), 8);
        assert_eq!(b.poll_timeout(), Some(t_ms(51)));
        // Filling 0, 1, 2 and 4 releases 0..=5; 8 (arrived at 7 ms) now gives the deadline.
        for seq in [0, 1, 2, 4] {
            put(&mut b, t_ms(10), seq);
        }
        assert_eq!(drain(&mut b, t_ms(10)), vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(b.poll_timeout(), Some(t_ms(57)));
        put(&mut b, t_ms(11), 6);
        put(&mut b, t_ms(11), 7);
        assert_eq!(drain(&mut b, t_ms(11)), vec![6, 7, 8]);
        assert_eq!(b.poll_timeout(), None);
    }

    #[test]
    fn adaptive_limit_converges_to_owd_difference_plus_margin() {
        let mut b = buffer(ReorderKind::Adaptive, 64);
        assert_eq!(b.wait_limit(), Duration::from_millis(10), "margin alone");
        // Path 0: 10 ms one-way delay; path 1: 30 ms. The sender's clock is 5 s behind.
        let offset = 5_000 * MS;
        let at = |ms: u64| Instant::from_nanos(offset + ms * MS);
        let arrive = |b: &mut ReorderBuffer<u64>, ms: u64, seq: u64, path: usize| {
            let owd_ms = [10, 30][path];
            b.insert(at(ms), path, seq, (ms - owd_ms) * MS, seq);
            drain(b, at(ms))
        };
        assert_eq!(arrive(&mut b, 10, 0, 0), vec![0]);
        assert_eq!(b.wait_limit(), Duration::from_millis(10), "one path: sample 0");
        assert_eq!(arrive(&mut b, 31, 1, 1), vec![1]);
        // 0.95 * 20 ms + 0.05 * 0 = 19 ms, plus the 10 ms margin.
        assert_eq!(b.wait_limit(), Duration::from_millis(29));
        assert_eq!(arrive(&mut b, 32, 2, 0), vec![2]);
        // 0.95 * 20 ms + 0.05 * 19 ms = 19.95 ms, plus the margin.
        assert_eq!(b.wait_limit(), Duration::from_micros(29_950));
        // Packet 3 goes on the slow path, 4 on the fast one: 4 arrives first and waits for 3.
        assert_eq!(arrive(&mut b, 34, 4, 0), Vec::<u64>::new());
        let deadline = b.poll_timeout().unwrap();
        assert_eq!(deadline, at(34) + b.wait_limit());
        assert!(deadline > at(53));
        assert_eq!(arrive(&mut b, 53, 3, 1), vec![3, 4]);
        for seq in 5..30 {
            arrive(&mut b, 60 + seq, seq, (seq % 2) as usize);
        }
        let limit = b.wait_limit().as_nanos() as i128;
        assert!((limit - 30 * MS as i128).abs() <= 1, "{limit}");
        assert_eq!(b.stats().released_on_timeout, 0);
        assert_eq!(b.stats().in_order, 30);
    }

    #[test]
    fn deadline_follows_the_limit_read_at_check_time() {
        let mut b = buffer(ReorderKind::Adaptive, 64);
        b.insert(t_ms(100), 0, 0, 90 * MS, 0); // OWD 10 ms
        b.insert(t_ms(101), 0, 2, 91 * MS, 2);
        assert_eq!(b.poll_timeout(), Some(t_ms(111)));
        // A slow path shows up: the held packet may now wait longer.
        b.insert(t_ms(102), 1, 9, 62 * MS, 9); // OWD 40 ms, spread 30 ms -> 28.5 ms estimate
        assert_eq!(b.wait_limit(), Duration::from_micros(38_500));
        assert_eq!(b.poll_timeout(), Some(t_ms(101) + Duration::from_micros(38_500)));
        assert_eq!(drain(&mut b, t_ms(111)), vec![0]);
    }

    #[test]
    fn overflow_forces_release_from_the_head_and_counts() {
        let mut b = buffer(ReorderKind::Static, 4);
        // Exactly buffer_pkts packets can be held: 1..=4 while 0 is missing.
        for seq in [1, 2, 4, 3] {
            put(&mut b, t_ms(0), seq);
        }
        assert_eq!(b.len(), 4);
        assert_eq!(drain(&mut b, t_ms(0)), Vec::<u64>::new());
        // 6 does not fit: give 0 up, release 1 for room, then 2..=4 follow in order.
        put(&mut b, t_ms(1), 6);
        assert_eq!(drain(&mut b, t_ms(1)), vec![1, 2, 3, 4]);
        assert_eq!(b.len(), 1);
        assert_eq!(
            b.stats(),
            ReorderStats {
                in_order: 3,
                released_on_overflow: 1,
                skipped_seqs: 1,
                ..ReorderStats::default()
            }
        );
        // Far ahead: 5 given up, 6 released, then the empty stretch skipped in one step.
        put(&mut b, t_ms(2), 1_000_000);
        assert_eq!(drain(&mut b, t_ms(2)), vec![6]);
        assert_eq!(b.next_expected(), 1_000_000 - 4);
        assert_eq!(b.stats().released_on_overflow, 2);
        assert_eq!(b.stats().skipped_seqs, 1 + (1_000_000 - 4 - 6));
        assert_eq!(b.len(), 1);
    }

    #[test]
    fn late_packets_are_released_at_once_and_counted() {
        let mut b = buffer(ReorderKind::Static, 8);
        put(&mut b, t_ms(0), 1);
        assert_eq!(drain(&mut b, t_ms(50)), vec![1]);
        assert_eq!(put(&mut b, t_ms(60), 0), Insert::Accepted);
        assert_eq!(drain(&mut b, t_ms(60)), vec![0]);
        assert_eq!(b.stats().late, 1);
        assert_eq!(b.stats().skipped_seqs, 1);
        assert!(b.is_empty());
    }

    #[test]
    fn duplicates_of_held_packets_are_handed_back() {
        let mut b = buffer(ReorderKind::Static, 8);
        put(&mut b, t_ms(0), 2);
        assert_eq!(b.insert(t_ms(1), 1, 2, 0, 77), Insert::Duplicate(77));
        assert_eq!(b.len(), 1);
        assert_eq!(b.stats().duplicates, 1);
        // Once released, a further copy is indistinguishable from a late packet.
        put(&mut b, t_ms(2), 0);
        put(&mut b, t_ms(2), 1);
        assert_eq!(drain(&mut b, t_ms(2)), vec![0, 1, 2]);
        assert_eq!(put(&mut b, t_ms(3), 2), Insert::Accepted);
        assert_eq!(drain(&mut b, t_ms(3)), vec![2]);
        assert_eq!(b.stats().late, 1);
    }

    #[test]
    fn passthrough_releases_in_arrival_order() {
        let mut b = buffer(ReorderKind::None, 8);
        for (i, seq) in [3, 1, 2, 1, 9].into_iter().enumerate() {
            assert_eq!(put(&mut b, t_ms(i as u64), seq), Insert::Accepted);
        }
        assert_eq!(b.len(), 5);
        assert_eq!(b.poll_timeout(), None);
        assert_eq!(b.wait_limit(), Duration::ZERO);
        assert_eq!(drain(&mut b, t_ms(5)), vec![3, 1, 2, 1, 9]);
        assert_eq!(b.stats(), ReorderStats { in_order: 5, ..ReorderStats::default() });
    }

    #[test]
    fn extreme_sequence_numbers_and_configs_do_not_panic() {
        for kind in [ReorderKind::Static, ReorderKind::Adaptive] {
            for cap in [0, 1, 3] {
                let mut b = buffer(kind, cap);
                for (i, seq) in
                    [u64::MAX, u64::MAX - 1, 0, u64::MAX, 5, u64::MAX - 2].into_iter().enumerate()
                {
                    b.insert(t_ms(i as u64), 9, seq, u64::MAX, seq);
                    drain(&mut b, t_ms(i as u64));
                }
                drain(&mut b, t_ms(20_000));
                assert!(b.is_empty());
            }
        }
    }

    /// `(global_seq, path, gap before arrival in ns)` per arrival: a jittered order (from nearly
    /// in order to a full shuffle) with random losses and a few duplicates.
    fn arrivals() -> impl Strategy<Value = Vec<(u64, usize, u64)>> {
        (1usize..150)
            .prop_flat_map(|n| {
                (
                    1..=n as u64,
                    prop::collection::vec(any::<u64>(), n),
                    prop::collection::vec(prop::bool::weighted(0.15), n),
                    prop::collection::vec((0..n as u64, 0..=n), 0..6),
                    prop::collection::vec((0usize..3, 0u64..4 * MS), n + 6),
                )
            })
            .prop_map(|(spread, jitter, lost, dups, paths)| {
                let mut order: Vec<(u64, u64)> = jitter
                    .iter()
                    .enumerate()
                    .map(|(i, j)| (i as u64 + j % spread, i as u64))
                    .collect();
                order.sort_unstable();
                let mut seqs: Vec<u64> =
                    order.into_iter().map(|(_, s)| s).filter(|&s| !lost[s as usize]).collect();
                for (seq, at) in dups {
                    seqs.insert(at.min(seqs.len()), seq);
                }
                seqs.into_iter().zip(paths).map(|(s, (p, gap))| (s, p, gap)).collect()
            })
    }

    fn config() -> impl Strategy<Value = ReorderConfig> {
        (0usize..3, 1usize..40, 0u64..60, 0u64..20).prop_map(
            |(k, buffer_pkts, wait_ms, margin_ms)| ReorderConfig {
                kind: [ReorderKind::None, ReorderKind::Static, ReorderKind::Adaptive][k],
                buffer_pkts,
                static_wait: Duration::from_millis(wait_ms),
                margin: Duration::from_millis(margin_ms),
                new_sample_weight: 0.95,
            },
        )
    }

    /// Polls as a driver would: at every deadline due by `now`, at its time, then at `now`.
    fn run_until(
        b: &mut ReorderBuffer<usize>,
        clock: &mut Instant,
        now: Instant,
        out: &mut Vec<(Instant, Released<usize>)>,
    ) -> Result<(), TestCaseError> {
        while let Some(due) = b.poll_timeout().filter(|&d| d <= now) {
            *clock = (*clock).max(due);
            let before = out.len();
            while let Some(r) = b.poll_release(*clock) {
                out.push((*clock, r));
            }
            prop_assert!(out.len() > before, "a due deadline released nothing");
        }
        *clock = now;
        while let Some(r) = b.poll_release(now) {
            out.push((now, r));
        }
        Ok(())
    }

    fn check_release_invariants(
        config: ReorderConfig,
        arrivals: &[(u64, usize, u64)],
    ) -> Result<(), TestCaseError> {
        const PATH_OWD_NS: [u64; 3] = [10 * MS, 25 * MS, 45 * MS];
        let kind = config.kind;
        let static_wait = config.static_wait;
        let cap = config.buffer_pkts;
        let mut b: ReorderBuffer<usize> = ReorderBuffer::new(config, 3);
        let mut clock = Instant::from_nanos(100 * MS);
        let mut accepted = vec![false; arrivals.len()];
        let mut late = vec![false; arrivals.len()];
        let mut out: Vec<(Instant, Released<usize>)> = Vec::new();
        let mut duplicates = 0;
        // Accepted minus released copies, by sequence number.
        let mut outstanding =
            vec![0i32; arrivals.iter().map(|a| a.0 as usize + 1).max().unwrap_or(0)];
        let mut counted = 0;

        for (id, &(seq, path, gap)) in arrivals.iter().enumerate() {
            let now = clock.add_nanos(gap);
            run_until(&mut b, &mut clock, now, &mut out)?;
            let late_before = b.stats().late;
            let send_ts = now.as_nanos() - PATH_OWD_NS[path];
            match b.insert(now, path, seq, send_ts, id) {
                Insert::Accepted => {
                    accepted[id] = true;
                    outstanding[seq as usize] += 1;
                }
                Insert::Duplicate(p) => {
                    prop_assert_eq!(p, id);
                    duplicates += 1;
                }
            }
            late[id] = b.stats().late > late_before;
            run_until(&mut b, &mut clock, now, &mut out)?;
            for (_, r) in &out[counted..] {
                outstanding[r.global_seq as usize] -= 1;
            }
            counted = out.len();
            prop_assert!(b.len() <= cap, "holds {} > {}", b.len(), cap);
            prop_assert!(b.poll_timeout().filter(|&d| d <= now).is_none());
            // Nothing releasable stays held: the next expected packet is never waiting.
            if let Some(&n) = outstanding.get(b.next_expected() as usize) {
                prop_assert!(kind == ReorderKind::None || n == 0, "next expected is held");
            }
        }
        let end = clock + MAX_WAIT_LIMIT + Duration::from_secs(1);
        run_until(&mut b, &mut clock, end, &mut out)?;
        prop_assert_eq!(b.len(), 0);
        prop_assert_eq!(b.poll_timeout(), None);

        let mut times_released = vec![0u32; arrivals.len()];
        for (_, r) in &out {
            times_released[r.payload] += 1;
            prop_assert_eq!(r.global_seq, arrivals[r.payload].0);
        }
        for id in 0..arrivals.len() {
            prop_assert_eq!(times_released[id], u32::from(accepted[id]), "packet {}", id);
        }
        if kind == ReorderKind::None {
            let ids: Vec<usize> = out.iter().map(|(_, r)| r.payload).collect();
            prop_assert!(ids.windows(2).all(|w| w[0] < w[1]), "passthrough keeps arrival order");
        } else {
            let in_seq: Vec<u64> =
                out.iter().filter(|(_, r)| !late[r.payload]).map(|(_, r)| r.global_seq).collect();
            prop_assert!(in_seq.windows(2).all(|w| w[0] < w[1]), "{:?}", in_seq);
        }
        if kind == ReorderKind::Static {
            for (at, r) in &out {
                prop_assert!(at.saturating_since(r.arrival) <= static_wait);
            }
        }
        let s = b.stats();
        prop_assert_eq!(s.released(), out.len() as u64);
        prop_assert_eq!(s.duplicates, duplicates);
        prop_assert_eq!(s.late, late.iter().filter(|&&l| l).count() as u64);
        Ok(())
    }

    proptest! {
        /// Random arrival orders with losses and duplicates: every accepted packet comes out
        /// exactly once, in increasing sequence order except the late ones, nothing releasable
        /// stays held, no packet waits beyond the static limit, and the buffer empties.
        #[test]
        fn every_accepted_packet_is_released_once_in_order_unless_late(
            config in config(),
            arrivals in arrivals(),
        ) {
            check_release_invariants(config, &arrivals)?;
        }
    }
}
