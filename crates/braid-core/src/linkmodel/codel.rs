//! CoDel, the Controlled Delay AQM of RFC 8289, as a decision object consulted at dequeue.
//!
//! # Model
//! CoDel judges a queue by the sojourn time of the packets leaving it (RFC 8289 section 3.1,
//! "Estimator"). While every packet leaves within TARGET of its arrival, or at most one MTU is
//! left queued behind it (section 4.1, "Non-Starvation"; the `bytes() <= maxpacket` test of
//! `dodequeue`, section 5.6), nothing happens. Once the sojourn time has stayed at or above
//! TARGET for a whole INTERVAL, CoDel enters the dropping state and drops the head packet. In
//! the dropping state it drops again whenever the next drop is due, and each drop brings the
//! next one closer: the control law (section 3.3, "Control Loop"; `control_law` in section 5.6)
//! spaces the next drop INTERVAL / sqrt(count) after the previous one, with `count` the drops
//! made so far, so the drop rate grows until the senders slow down. The first packet whose
//! sojourn time is below TARGET (or that leaves at most one MTU behind it) ends the dropping
//! state.
//!
//! ```text
//!   Idle --(sojourn >= TARGET)--> Above(first_above_time = now + INTERVAL)
//!   Above --(sojourn < TARGET or backlog <= MTU)--> Idle
//!   Above --(still above at first_above_time)--> Dropping: drop, count = 1 (or carried over),
//!                                                drop_next = now + INTERVAL / sqrt(count)
//!   Dropping --(now >= drop_next)--> drop, count += 1, drop_next += INTERVAL / sqrt(count)
//!   Dropping --(sojourn < TARGET or backlog <= MTU, or queue empty)--> Idle
//! ```
//!
//! Re-entering the dropping state soon after leaving it restarts from the drop rate that
//! controlled the queue last time (section 5.5, the `else if (r.ok_to_drop)` branch of
//! `dequeue`, which adopts the Linux rule): with `delta = count - lastcount`, the drops of the
//! last episode after its entry drop, `count` becomes `delta` if `delta > 1` and
//! `now - drop_next < 16 * INTERVAL` (`drop_next` being the drop that was due next when that
//! episode ended), else 1.
//!
//! # Shape
//! The queue stays with the caller, which keeps each packet's enqueue time. For each packet it
//! removes from the head, the caller asks [`CoDel::on_dequeue`] with the time, the packet's
//! enqueue time and the bytes still queued behind it. On [`Verdict::Drop`] the caller discards
//! the packet, takes the next one at the same `now` and asks again: that is the RFC's dequeue
//! loop (section 5.5) unrolled one packet per call. When the queue is empty at a dequeue, it
//! calls [`CoDel::on_empty`] instead. A packet whose sojourn time is below TARGET is never
//! dropped, so a caller that sends a packet straight through an idle queue may still report it
//! (sojourn zero) to keep CoDel's state as the RFC's would be, knowing the verdict is Deliver.
//!
//! # Choices where the RFC leaves room
//! - The RFC pseudocode's `now >= first_above_time` (Linux `codel_should_drop` uses strictly
//!   after); the rest of sections 5.5 and 5.6 as written, including dropping the first packet
//!   on entry and delivering the next without a second test.
//! - The control law is computed as `interval_ns / sqrt(count)` in `f64`, truncated to whole
//!   nanoseconds. Linux keeps a Newton-iterated fixed-point reciprocal square root
//!   (`codel_Newton_step`), which differs from the exact value by well under a microsecond.
//! - The carry-over test `now - drop_next < 16 * INTERVAL` is signed, as Linux's
//!   `codel_time_before`: a `drop_next` still in the future counts as recent.
//! - No ECN marking: every decision is a drop. `count` saturates instead of wrapping.

use std::time::Duration;

use crate::time::{duration_nanos, Instant};

/// RFC 8289 section 4.3 ("Setting TARGET"; the constant in section 5.3): TARGET 5 ms, 5-10% of
/// INTERVAL, enough to keep a link busy.
pub const DEFAULT_TARGET: Duration = Duration::from_millis(5);
/// RFC 8289 section 4.2 ("Setting INTERVAL"; the constant in section 5.3): INTERVAL 100 ms, on
/// the order of a worst-case round trip through the bottleneck.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(100);
/// RFC 8289 section 5.3 names `maxpacket` and says it "SHOULD"
/// be the interface MTU; Linux `psched_mtu` counts the 1500-byte Ethernet MTU plus its 14-byte
/// header.
pub const DEFAULT_MTU_BYTES: u32 = 1514;
/// Re-entering within this many intervals of the last scheduled drop carries `count` over
/// (RFC 8289 section 5.5).
const CARRY_OVER_INTERVALS: u64 = 16;
/// Largest INTERVAL accepted: far beyond any round trip CoDel is meant to control.
const MAX_INTERVAL: Duration = Duration::from_secs(100);
/// Smallest MTU accepted: the IPv4 minimum (RFC 791).
const MIN_MTU_BYTES: u32 = 68;

/// CoDel's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoDelConfig {
    /// Acceptable standing sojourn time (RFC 8289: TARGET).
    pub target: Duration,
    /// Time the sojourn must stay above target before dropping starts, and the base of the
    /// control law (RFC 8289: INTERVAL).
    pub interval: Duration,
    /// At most this many bytes queued behind a packet never count as a standing queue (RFC 8289
    /// section 4.1: dropping with less than an MTU queued could starve the link; `maxpacket` of
    /// section 5.3).
    pub mtu_bytes: u32,
}

impl Default for CoDelConfig {
    /// RFC 8289's constants: TARGET 5 ms, INTERVAL 100 ms, an Ethernet MTU.
    fn default() -> Self {
        CoDelConfig {
            target: DEFAULT_TARGET,
            interval: DEFAULT_INTERVAL,
            mtu_bytes: DEFAULT_MTU_BYTES,
        }
    }
}

/// A CoDel parameter out of range.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CoDelConfigError {
    #[error("interval = {interval:?}: must be in (0, {max:?}]")]
    Interval { interval: Duration, max: Duration },
    #[error("target = {target:?}: must be in (0, interval = {interval:?}]")]
    Target { target: Duration, interval: Duration },
    #[error("mtu_bytes = {mtu_bytes}: must be in {min}..=65535")]
    Mtu { mtu_bytes: u32, min: u32 },
}

impl CoDelConfig {
    /// Checks `0 < interval <= 100 s`, `0 < target <= interval`, `68 <= mtu_bytes <= 65535`.
    pub fn validate(&self) -> Result<(), CoDelConfigError> {
        if self.interval.is_zero() || self.interval > MAX_INTERVAL {
            return Err(CoDelConfigError::Interval { interval: self.interval, max: MAX_INTERVAL });
        }
        if self.target.is_zero() || self.target > self.interval {
            return Err(CoDelConfigError::Target { target: self.target, interval: self.interval });
        }
        if !(MIN_MTU_BYTES..=65_535).contains(&self.mtu_bytes) {
            return Err(CoDelConfigError::Mtu { mtu_bytes: self.mtu_bytes, min: MIN_MTU_BYTES });
        }
        Ok(())
    }
}

/// What to do with the packet just taken from the head of the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Send it.
    Deliver,
    /// Discard it, take the next packet at the same instant and ask again.
    Drop,
}

/// Where the last call left the RFC's dequeue loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    /// The last verdict ended a dequeue.
    Nothing,
    /// The last verdict was the drop that entered the dropping state: the next packet is
    /// delivered (RFC 8289 section 5.5, the `else if (r.ok_to_drop)` branch).
    EntryDrop,
    /// The last verdict was a drop inside the dropping state: the next packet decides whether
    /// the state continues and whether another drop is due (the `while` loop).
    LoopDrop,
}

/// The state of CoDel on one queue (RFC 8289 section 5.2).
#[derive(Clone, Debug)]
pub struct CoDel {
    target_ns: u64,
    interval_ns: u64,
    mtu_bytes: u64,
    /// When the sojourn time, above target since shortly before, will have been so for an
    /// interval; `None` while below target.
    first_above_time: Option<Instant>,
    /// When the next drop is due in the dropping state.
    drop_next: Instant,
    /// Drops in the current episode (the entry drop counts one), or the carried-over count.
    count: u32,
    /// `count` at the last entry into the dropping state.
    last_count: u32,
    dropping: bool,
    pending: Pending,
}

impl CoDel {
    /// CoDel with `config`. Validate the config first: out-of-range values do not panic but
    /// do not control a queue either.
    pub fn new(config: CoDelConfig) -> Self {
        CoDel {
            target_ns: duration_nanos(config.target),
            interval_ns: duration_nanos(config.interval),
            mtu_bytes: u64::from(config.mtu_bytes),
            first_above_time: None,
            drop_next: Instant::ZERO,
            count: 0,
            last_count: 0,
            dropping: false,
            pending: Pending::Nothing,
        }
    }

    /// The packet at the head of the queue, which entered it at `enqueued_at`, is being
    /// dequeued at `now`, leaving `backlog_bytes` queued behind it.
    pub fn on_dequeue(
        &mut self,
        now: Instant,
        enqueued_at: Instant,
        backlog_bytes: u64,
    ) -> Verdict {
        let ok_to_drop = self.ok_to_drop(now, enqueued_at, backlog_bytes);
        match std::mem::replace(&mut self.pending, Pending::Nothing) {
            Pending::EntryDrop => Verdict::Deliver,
            Pending::LoopDrop => {
                if !ok_to_drop {
                    self.dropping = false;
                    return Verdict::Deliver;
                }
                self.drop_next = self.control_law(self.drop_next);
                self.drop_if_due(now)
            }
            Pending::Nothing if self.dropping => {
                if !ok_to_drop {
                    self.dropping = false;
                    return Verdict::Deliver;
                }
                self.drop_if_due(now)
            }
            Pending::Nothing if ok_to_drop => {
                self.enter_dropping(now);
                Verdict::Drop
            }
            Pending::Nothing => Verdict::Deliver,
        }
    }

    /// A dequeue found the queue empty (RFC 8289 `dodequeue` returning no packet): the sojourn
    /// time is no longer above target, and a dropping state that has not just begun ends.
    pub fn on_empty(&mut self) {
        self.first_above_time = None;
        if self.pending != Pending::EntryDrop {
            self.dropping = false;
        }
        self.pending = Pending::Nothing;
    }

    /// Whether CoDel is in the dropping state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// Drops in the current (or last) dropping episode, the carried-over start included.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// When the next drop is due, while in the dropping state.
    pub fn drop_next(&self) -> Option<Instant> {
        self.dropping.then_some(self.drop_next)
    }

    /// RFC 8289 `dodequeue` (section 5.6): has the sojourn time been at or above target for an
    /// interval, with more than one MTU left behind the packet?
    fn ok_to_drop(&mut self, now: Instant, enqueued_at: Instant, backlog_bytes: u64) -> bool {
        let sojourn_ns = now.nanos_since(enqueued_at);
        if sojourn_ns < self.target_ns || backlog_bytes <= self.mtu_bytes {
            self.first_above_time = None;
            return false;
        }
        match self.first_above_time {
            None => {
                self.first_above_time = Some(now.add_nanos(self.interval_ns));
                false
            }
            Some(first_above_time) => now >= first_above_time,
        }
    }

    /// Drops the head packet when the next drop is due.
    fn drop_if_due(&mut self, now: Instant) -> Verdict {
        if now < self.drop_next {
            return Verdict::Deliver;
        }
        self.count = self.count.saturating_add(1);
        self.pending = Pending::LoopDrop;
        Verdict::Drop
    }

    /// Enters the dropping state with the drop being made at `now` (RFC 8289 section 5.5).
    fn enter_dropping(&mut self, now: Instant) {
        self.dropping = true;
        let delta = self.count.saturating_sub(self.last_count);
        let recent = now < self.drop_next.add_nanos(CARRY_OVER_INTERVALS * self.interval_ns);
        self.count = if delta > 1 && recent { delta } else { 1 };
        self.drop_next = self.control_law(now);
        self.last_count = self.count;
        self.pending = Pending::EntryDrop;
    }

    /// RFC 8289 `control_law` (section 5.6, from the control loop of section 3.3): the next
    /// drop `interval / sqrt(count)` after `t`.
    fn control_law(&self, t: Instant) -> Instant {
        let spacing_ns = self.interval_ns as f64 / f64::from(self.count.max(1)).sqrt();
        t.add_nanos(spacing_ns as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    /// Far more than one MTU queued, so only the sojourn time decides.
    const DEEP_BACKLOG_BYTES: u64 = 100 * 1514;
    /// Test times are offsets from this instant, so that packets may have entered the queue
    /// before offset zero.
    const EPOCH_NS: u64 = 1_000_000_000;

    fn at(ns: u64) -> Instant {
        Instant::from_nanos(EPOCH_NS + ns)
    }

    /// Asks about one packet dequeued at `now` that waited `sojourn_ns`.
    fn packet(c: &mut CoDel, now: u64, sojourn_ns: u64, backlog_bytes: u64) -> Verdict {
        let now = at(now);
        c.on_dequeue(now, Instant::from_nanos(now.as_nanos() - sojourn_ns), backlog_bytes)
    }

    /// One dequeue of the RFC: packets with sojourn `sojourn_ns` are taken at `now` until one
    /// is delivered. Returns how many were dropped first.
    fn dequeue(c: &mut CoDel, now: u64, sojourn_ns: u64) -> u32 {
        let mut drops = 0;
        while packet(c, now, sojourn_ns, DEEP_BACKLOG_BYTES) == Verdict::Drop {
            drops += 1;
            assert!(drops < 1000, "CoDel kept dropping");
        }
        drops
    }

    /// Dequeues every millisecond from `from_ms` to `to_ms` inclusive with a constant sojourn;
    /// returns the times (ns) at which drops happened, one entry per drop.
    fn drops_between(c: &mut CoDel, from_ms: u64, to_ms: u64, sojourn_ns: u64) -> Vec<u64> {
        let mut times = Vec::new();
        for t in from_ms..=to_ms {
            for _ in 0..dequeue(c, t * MS, sojourn_ns) {
                times.push(t * MS);
            }
        }
        times
    }

    /// Enters the dropping state at exactly 100 ms: above target from t = 0, so
    /// first_above_time = 0 + 100 ms and the dequeue at 100 ms drops.
    fn dropping_from_100_ms() -> CoDel {
        let mut c = CoDel::new(CoDelConfig::default());
        assert_eq!(drops_between(&mut c, 0, 100, 20 * MS), vec![100 * MS]);
        assert!(c.dropping());
        assert_eq!((c.count(), c.drop_next()), (1, Some(at(200 * MS))));
        c
    }

    #[test]
    fn defaults_are_the_rfc_constants_and_validate() {
        let cfg = CoDelConfig::default();
        assert_eq!((cfg.target, cfg.interval), (Duration::from_millis(5), DEFAULT_INTERVAL));
        cfg.validate().unwrap();
    }

    #[test]
    fn invalid_configs_name_the_parameter() {
        let bad = |edit: fn(&mut CoDelConfig)| {
            let mut cfg = CoDelConfig::default();
            edit(&mut cfg);
            cfg.validate().unwrap_err()
        };
        assert!(matches!(bad(|c| c.interval = Duration::ZERO), CoDelConfigError::Interval { .. }));
        assert!(matches!(
            bad(|c| c.interval = Duration::from_secs(101)),
            CoDelConfigError::Interval { .. }
        ));
        assert!(matches!(bad(|c| c.target = Duration::ZERO), CoDelConfigError::Target { .. }));
        let err = bad(|c| c.target = Duration::from_millis(101));
        assert_eq!(err.to_string(), "target = 101ms: must be in (0, interval = 100ms]");
        assert!(matches!(bad(|c| c.mtu_bytes = 67), CoDelConfigError::Mtu { .. }));
        assert!(matches!(bad(|c| c.mtu_bytes = 65_536), CoDelConfigError::Mtu { .. }));
    }

    #[test]
    fn no_drop_while_sojourn_stays_below_target() {
        let mut c = CoDel::new(CoDelConfig::default());
        // 4.999999 ms is below the 5 ms target: ten seconds of it never drops.
        assert!(drops_between(&mut c, 0, 10_000, 5 * MS - 1).is_empty());
        assert!(!c.dropping());
    }

    #[test]
    fn no_drop_when_at_most_one_mtu_is_queued() {
        // Section 4.1: a sojourn far above target with one MTU behind the packet is not a
        // standing queue (the link may be slower than one MTU per TARGET).
        let mut c = CoDel::new(CoDelConfig::default());
        for t in 0..=1000 {
            assert_eq!(packet(&mut c, t * MS, 50 * MS, 1514), Verdict::Deliver);
        }
        assert!(!c.dropping());
        // One byte more and the same sojourn drops after an interval: above from 1001 ms, so
        // first_above_time = 1101 ms.
        let drops: Vec<u64> = (1001..=1200)
            .filter(|t| packet(&mut c, t * MS, 50 * MS, 1515) == Verdict::Drop)
            .collect();
        assert_eq!(drops[0], 1101);
    }

    #[test]
    fn first_drop_comes_once_sojourn_stayed_above_target_for_an_interval() {
        // Above target from 0 ms: first_above_time = 100 ms, so 99 ms does not drop and
        // 100 ms does (RFC pseudocode: now >= first_above_time).
        let mut c = CoDel::new(CoDelConfig::default());
        assert!(drops_between(&mut c, 0, 99, 20 * MS).is_empty());
        assert!(!c.dropping());
        assert_eq!(packet(&mut c, 100 * MS, 20 * MS, DEEP_BACKLOG_BYTES), Verdict::Drop);
        assert!(c.dropping());
        // The packet after the entry drop is delivered although its sojourn is as high.
        assert_eq!(packet(&mut c, 100 * MS, 20 * MS, DEEP_BACKLOG_BYTES), Verdict::Deliver);
        assert_eq!((c.count(), c.drop_next()), (1, Some(at(200 * MS))));
    }

    #[test]
    fn a_dip_below_target_restarts_the_interval() {
        let mut c = CoDel::new(CoDelConfig::default());
        assert!(drops_between(&mut c, 0, 50, 20 * MS).is_empty());
        assert!(drops_between(&mut c, 51, 51, MS).is_empty());
        // Above again from 52 ms: first_above_time = 152 ms.
        assert_eq!(drops_between(&mut c, 52, 200, 20 * MS), vec![152 * MS]);
    }

    #[test]
    fn subsequent_drops_are_spaced_interval_over_sqrt_count() {
        let mut c = dropping_from_100_ms();
        // drop_next after the entry drop (count 1): 100 + 100/sqrt(1) = 200 ms. Each drop
        // increments count, then the next is 100 ms / sqrt(count) later, truncated to ns:
        //   count 2: 100e6 / 1.41421356 = 70_710_678.1 -> 200_000_000 + 70_710_678 = 270_710_678
        //   count 3: 100e6 / 1.73205081 = 57_735_026.9 -> 328_445_704
        //   count 4: 100e6 / 2          = 50_000_000   -> 378_445_704
        //   count 5: 100e6 / 2.23606798 = 44_721_359.5 -> 423_167_063
        let drops_due = [200_000_000, 270_710_678, 328_445_704, 378_445_704, 423_167_063];
        for (i, &due) in drops_due.iter().enumerate() {
            assert_eq!(dequeue(&mut c, due - 1, 20 * MS), 0, "one ns before drop {i}");
            assert_eq!(dequeue(&mut c, due, 20 * MS), 1, "at drop {i}");
            assert_eq!(c.count(), i as u32 + 2);
        }
        // count 6: 100e6 / 2.44948974 = 40_824_829.0 -> 463_991_892.
        assert_eq!(c.drop_next(), Some(at(463_991_892)));
    }

    #[test]
    fn a_late_dequeue_drops_every_overdue_packet_in_one_go() {
        let mut c = dropping_from_100_ms();
        // count 2, next drop due at 270.710678 ms.
        assert_eq!(dequeue(&mut c, 200 * MS, 20 * MS), 1);
        // At 400 ms the drops due at 270.7, 328.4 and 378.4 ms are all overdue; the one due at
        // 423.2 ms is not: three drops, then a delivery.
        assert_eq!(dequeue(&mut c, 400 * MS, 20 * MS), 3);
        assert_eq!((c.count(), c.drop_next()), (5, Some(at(423_167_063))));
    }

    #[test]
    fn leaves_dropping_state_when_sojourn_falls_below_target() {
        let mut c = dropping_from_100_ms();
        assert_eq!(dequeue(&mut c, 200 * MS, 20 * MS), 1);
        assert_eq!(dequeue(&mut c, 210 * MS, 4 * MS), 0);
        assert!(!c.dropping());
        // Above target again from 211 ms: no drop before another full interval (311 ms), even
        // though drop_next (270.7 ms) passes meanwhile.
        assert_eq!(drops_between(&mut c, 211, 400, 20 * MS)[0], 311 * MS);
    }

    #[test]
    fn leaves_dropping_state_when_a_drop_empties_the_queue() {
        let mut c = dropping_from_100_ms();
        assert_eq!(packet(&mut c, 200 * MS, 20 * MS, DEEP_BACKLOG_BYTES), Verdict::Drop);
        c.on_empty();
        assert!(!c.dropping());
    }

    #[test]
    fn the_entry_drop_emptying_the_queue_keeps_the_dropping_state() {
        // RFC 8289 section 5.5 sets dropping after the entry drop whatever the next dequeue
        // finds; the next non-empty dequeue then decides.
        let mut c = CoDel::new(CoDelConfig::default());
        drops_between(&mut c, 0, 99, 20 * MS);
        assert_eq!(packet(&mut c, 100 * MS, 20 * MS, DEEP_BACKLOG_BYTES), Verdict::Drop);
        c.on_empty();
        assert!(c.dropping());
        // The queue restarts empty, so the next packet's sojourn is small: dropping ends.
        assert_eq!(packet(&mut c, 150 * MS, 0, 0), Verdict::Deliver);
        assert!(!c.dropping());
    }

    #[test]
    fn reentry_soon_after_carries_the_drop_rate_over() {
        let mut c = dropping_from_100_ms();
        // Drops at 200, 270.7, 328.4 ms: count 4 (lastcount 1 from the entry).
        for due in [200_000_000, 270_710_678, 328_445_704] {
            assert_eq!(dequeue(&mut c, due, 20 * MS), 1);
        }
        assert_eq!(dequeue(&mut c, 340 * MS, MS), 0);
        assert!(!c.dropping());
        // Above again from 341 ms: re-entry at 441 ms, within 16 intervals of drop_next
        // (378.4 ms). delta = count - lastcount = 4 - 1 = 3 > 1, so count = 3 and the next
        // drop is 100 / sqrt(3) = 57.735026 ms later, not 100 ms.
        assert_eq!(drops_between(&mut c, 341, 441, 20 * MS), vec![441 * MS]);
        assert_eq!(c.count(), 3);
        assert_eq!(c.drop_next(), Some(at(441 * MS + 57_735_026)));
    }

    /// An episode entered at 100 ms with drops at 200 and 270.710678 ms (count 3, lastcount 1,
    /// so delta = 2), left at 300 ms with drop_next = 270.710678 + 100 / sqrt(3) =
    /// 328.445704 ms.
    fn left_after_two_loop_drops() -> CoDel {
        let mut c = dropping_from_100_ms();
        for due in [200_000_000, 270_710_678] {
            assert_eq!(dequeue(&mut c, due, 20 * MS), 1);
        }
        assert_eq!(dequeue(&mut c, 300 * MS, MS), 0);
        assert!(!c.dropping());
        c
    }

    /// Re-enters the dropping state at `entry_ns`: above target from one interval before it.
    fn reenter_at(c: &mut CoDel, entry_ns: u64) {
        assert_eq!(dequeue(c, entry_ns - 100 * MS, 20 * MS), 0);
        assert_eq!(dequeue(c, entry_ns, 20 * MS), 1);
        assert!(c.dropping());
    }

    #[test]
    fn reentry_carries_count_over_only_within_16_intervals_of_drop_next() {
        // RFC 8289 section 5.5: count = delta if delta > 1 and now - drop_next < 16 * INTERVAL.
        // delta = 3 - 1 = 2, drop_next = 328.445704 ms, 16 * INTERVAL = 1600 ms.
        // One ns inside the window (now = 1928.445703 ms): count 2, next drop 100 / sqrt(2) =
        // 70.710678 ms later. The pre-RFC Linux rule `delta | 1` would have given 3.
        let inside = 328_445_704 + 1_600 * MS - 1;
        let mut c = left_after_two_loop_drops();
        reenter_at(&mut c, inside);
        assert_eq!((c.count(), c.drop_next()), (2, Some(at(inside + 70_710_678))));
        // Exactly 16 intervals after drop_next is no longer recent: count 1, next in 100 ms.
        let edge = 328_445_704 + 1_600 * MS;
        let mut c = left_after_two_loop_drops();
        reenter_at(&mut c, edge);
        assert_eq!((c.count(), c.drop_next()), (1, Some(at(edge + 100 * MS))));
    }

    #[test]
    fn reentry_after_one_loop_drop_starts_over_at_count_one() {
        // Entry at 100 ms, one loop drop at 200 ms (count 2, lastcount 1): delta = 1 is not
        // > 1, so a prompt re-entry (drop_next 270.710678 ms, well within 16 intervals) starts
        // over at count 1, the next drop a full interval later.
        let mut c = dropping_from_100_ms();
        assert_eq!(dequeue(&mut c, 200 * MS, 20 * MS), 1);
        assert_eq!(dequeue(&mut c, 210 * MS, MS), 0);
        assert!(!c.dropping());
        reenter_at(&mut c, 400 * MS);
        assert_eq!((c.count(), c.drop_next()), (1, Some(at(500 * MS))));
    }

    #[test]
    fn reentry_long_after_starts_over_at_count_one() {
        let mut c = dropping_from_100_ms();
        for due in [200_000_000, 270_710_678, 328_445_704] {
            assert_eq!(dequeue(&mut c, due, 20 * MS), 1);
        }
        assert_eq!(dequeue(&mut c, 340 * MS, MS), 0);
        // drop_next was 378.445704 ms; re-entering 16 intervals after it or later resets.
        let back = 378 * MS + 1_600 * MS;
        assert_eq!(dequeue(&mut c, back, 20 * MS), 0);
        assert_eq!(dequeue(&mut c, back + 100 * MS, 20 * MS), 1);
        assert_eq!((c.count(), c.drop_next()), (1, Some(at(back + 200 * MS))));
    }

    #[test]
    fn a_packet_below_target_is_never_dropped_whatever_the_state() {
        // Walk through every state (idle, above, entry, dropping with overdue drops) and
        // check that a below-target packet is delivered from each.
        for probe_ms in [50, 100, 150, 200, 250, 400] {
            let mut c = CoDel::new(CoDelConfig::default());
            for t in 0..probe_ms {
                dequeue(&mut c, t * MS, 20 * MS);
            }
            // Leave a pending loop drop behind when one is due right now.
            let _ = packet(&mut c, probe_ms * MS, 20 * MS, 1 << 20);
            let v = packet(&mut c, probe_ms * MS, MS, 1 << 20);
            assert_eq!(v, Verdict::Deliver, "probe at {probe_ms} ms");
        }
    }
}
