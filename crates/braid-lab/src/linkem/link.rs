//! One direction of the emulated link, sans-I/O: given frames and their arrival times, when
//! does each leave, or is it dropped.
//!
//! # Model
//! The simulator's link ([`braid_sim::link::Link`]) with the same code path, so that what a
//! scenario measures in `braid sim` is what the emulator reproduces: random loss on entry
//! ([`braid_core::linkmodel::loss`]), a FIFO bounded in packets, drop-tail or CoDel
//! ([`braid_core::linkmodel::codel`]), a server at a constant rate or following a Mahimahi trace
//! ([`braid_core::linkmodel::trace`]), then the propagation delay.
//!
//! The simulator drives that link from its event heap: it calls `tx_done` at the end of each
//! serialisation. Here the driver is wall-clock time, so this struct keeps the one pending
//! serialisation end itself and plays every end due by the time it is given before acting
//! (the simulator's events, replayed lazily in time order).
//!
//! # Shape (quinn's)
//! - [`EmulatedLink::handle_frame`]: a frame stored by the caller under a [`FrameId`] arrived.
//! - [`EmulatedLink::poll_transmit`]: the next frame whose delay has run out, with when it was
//!   due, so the caller can measure how late it sends it.
//! - [`EmulatedLink::poll_dropped`]: frames CoDel dropped at the head, for the caller to free.
//! - [`EmulatedLink::poll_timeout`]: when the next frame will be due.
//!
//! # Time
//! Times passed in must not go backwards; a time earlier than one already seen is taken as that
//! one (a frame read late, after a departure already played, enters the link at the departure's
//! time, never in its past). Frame arrival times should be the kernel's receive timestamps, and
//! the caller should hand over every frame received before asking for departures, so this
//! clamping only ever moves a frame by the few microseconds between the two.

use braid_core::Instant;
use braid_sim::link::{Enqueue, Link, LinkStats};
use braid_sim::packet::PktId;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use super::config::DirectionConfig;

/// The caller's handle on a frame it stores while the link holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FrameId(pub u32);

/// What happened to a frame offered to the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// On the link: it will come out of [`EmulatedLink::poll_transmit`] or, under CoDel,
    /// [`EmulatedLink::poll_dropped`].
    Accepted,
    /// The FIFO was full (drop-tail): the caller frees it.
    DroppedBuffer,
    /// Random loss: the caller frees it.
    DroppedLoss,
}

/// One direction of the emulated link.
#[derive(Debug)]
pub struct EmulatedLink {
    link: Link,
    /// When the frame being serialised finishes, if one is.
    service_end: Option<Instant>,
    /// The latest time seen.
    now: Instant,
    delay_ns: u64,
    rng: Pcg64Mcg,
}

impl EmulatedLink {
    /// A link as `config` describes it, its random loss seeded with `seed`. Validate the
    /// config first ([`DirectionConfig::validate`]).
    pub fn new(config: &DirectionConfig, seed: u64) -> Self {
        let spec = config.link_spec();
        EmulatedLink {
            delay_ns: spec.delay_ns,
            // Ends of serialisation played by `advance`, as the doc above says, whatever the
            // spec (a scheduled link would need the same settling on every read).
            link: Link::with_events(spec),
            service_end: None,
            now: Instant::ZERO,
            rng: Pcg64Mcg::seed_from_u64(seed),
        }
    }

    /// Plays every serialisation end due by `now`; returns `now`, or the latest time seen if
    /// that is later.
    fn advance(&mut self, now: Instant) -> Instant {
        self.now = self.now.max(now);
        while let Some(end) = self.service_end.filter(|&end| end <= self.now) {
            self.service_end = self.link.tx_done(end).0;
        }
        self.now
    }

    /// A frame of `frame_bytes` (its whole Ethernet length) arrived at `arrival`.
    pub fn handle_frame(&mut self, arrival: Instant, id: FrameId, frame_bytes: u32) -> Admission {
        let now = self.advance(arrival);
        match self.link.enqueue(now, PktId(id.0), frame_bytes, &mut self.rng) {
            Enqueue::Started(end) => {
                self.service_end = Some(end);
                Admission::Accepted
            }
            Enqueue::Queued | Enqueue::Scheduled(_) => Admission::Accepted,
            Enqueue::DroppedBuffer => Admission::DroppedBuffer,
            Enqueue::DroppedLoss => Admission::DroppedLoss,
        }
    }

    /// The next frame to send by `now`, with the time it was due to leave.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<(FrameId, Instant)> {
        let now = self.advance(now);
        let due = self.link.next_arrival()?;
        let id = self.link.pop_arrived(now)?;
        Some((FrameId(id.0), due))
    }

    /// A frame CoDel dropped at the head of the FIFO, not yet collected.
    pub fn poll_dropped(&mut self) -> Option<FrameId> {
        self.link.pop_aqm_drop().map(|id| FrameId(id.0))
    }

    /// When [`EmulatedLink::poll_transmit`] will next yield a frame: the head of the delay
    /// line, or else the end of the frame being serialised plus the delay. `None` when the
    /// link is empty.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.link
            .next_arrival()
            .or_else(|| self.service_end.map(|end| end.add_nanos(self.delay_ns)))
    }

    /// The link's counters: frames served, drops by cause, FIFO high-water mark and sojourn.
    pub fn stats(&self) -> &LinkStats {
        &self.link.stats
    }

    /// Frames in the FIFO now.
    pub fn queue_len(&self) -> usize {
        self.link.queue_len(self.now)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use braid_core::linkmodel::{BernoulliConfig, CoDelConfig, LossConfig};

    use super::*;
    use crate::linkem::config::{AqmConfig, Rate};

    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;

    fn at(ns: u64) -> Instant {
        Instant::from_nanos(ns)
    }

    fn link(rate_bits_per_s: u64, delay_ms: u64, buffer_pkts: usize) -> EmulatedLink {
        let config = DirectionConfig {
            rate: Rate::BitsPerS(rate_bits_per_s),
            delay: Duration::from_millis(delay_ms),
            buffer_pkts,
            ..DirectionConfig::default()
        };
        EmulatedLink::new(&config, 1)
    }

    /// Every frame sent by `until`, with the time it was due.
    fn drain(l: &mut EmulatedLink, until: Instant) -> Vec<(u32, u64)> {
        let mut out = Vec::new();
        while let Some(due) = l.poll_timeout().filter(|&t| t <= until) {
            let (id, at) = l.poll_transmit(due).expect("due frame");
            assert_eq!(at, due);
            out.push((id.0, at.as_nanos()));
        }
        out
    }

    #[test]
    fn a_full_frame_leaves_after_serialisation_plus_delay() {
        // 1514 bytes at 50 Mbit/s = 1514 * 8 / 50e6 = 242.24 us; plus 10 ms of delay.
        let mut l = link(50_000_000, 10, 100);
        assert_eq!(l.handle_frame(at(MS), FrameId(7), 1514), Admission::Accepted);
        let due = at(MS + 242_240 + 10 * MS);
        assert_eq!(l.poll_timeout(), Some(due));
        assert_eq!(l.poll_transmit(at(due.as_nanos() - 1)), None);
        assert_eq!(l.poll_transmit(due), Some((FrameId(7), due)));
        assert_eq!(l.poll_timeout(), None);
    }

    #[test]
    fn back_to_back_frames_leave_one_serialisation_apart() {
        // Three 1000-byte frames at 8 Mbit/s (1 MB/s, 1 ms each) arriving together leave at
        // 1, 2 and 3 ms, plus 5 ms of delay.
        let mut l = link(8_000_000, 5, 100);
        for id in 0..3 {
            assert_eq!(l.handle_frame(at(0), FrameId(id), 1000), Admission::Accepted);
        }
        assert_eq!(drain(&mut l, at(100 * MS)), vec![(0, 6 * MS), (1, 7 * MS), (2, 8 * MS)]);
    }

    #[test]
    fn the_fifo_holds_buffer_pkts_besides_the_frame_in_service() {
        // Buffer 2: the first frame goes into service, two wait, the fourth is dropped. After
        // the first leaves (1 ms), one slot is free again.
        let mut l = link(8_000_000, 0, 2);
        let admissions: Vec<_> = (0..4).map(|i| l.handle_frame(at(0), FrameId(i), 1000)).collect();
        use Admission::*;
        assert_eq!(admissions, vec![Accepted, Accepted, Accepted, DroppedBuffer]);
        assert_eq!(l.handle_frame(at(MS), FrameId(4), 1000), Accepted);
        assert_eq!(l.handle_frame(at(MS), FrameId(5), 1000), DroppedBuffer);
        assert_eq!(l.stats().buffer_drops, 2);
        let ids: Vec<u32> = drain(&mut l, at(100 * MS)).into_iter().map(|(id, _)| id).collect();
        assert_eq!(ids, vec![0, 1, 2, 4]);
    }

    #[test]
    fn an_idle_gap_restarts_serialisation_at_the_arrival() {
        // A frame arriving after the link went idle starts at its own arrival, not at the end
        // of the previous one: 1 ms each, arrivals at 0 and 10 ms, no delay.
        let mut l = link(8_000_000, 0, 10);
        l.handle_frame(at(0), FrameId(0), 1000);
        l.handle_frame(at(10 * MS), FrameId(1), 1000);
        assert_eq!(drain(&mut l, at(100 * MS)), vec![(0, MS), (1, 11 * MS)]);
    }

    #[test]
    fn a_late_arrival_never_enters_in_the_past() {
        // Departure of frame 0 at 1 ms has been played when a frame stamped 0.5 ms is handed
        // over: it enters at 1 ms (the latest time seen) and leaves at 2 ms, never overlapping
        // frame 0's serialisation.
        let mut l = link(8_000_000, 0, 10);
        l.handle_frame(at(0), FrameId(0), 1000);
        assert_eq!(l.poll_transmit(at(MS)), Some((FrameId(0), at(MS))));
        l.handle_frame(at(MS / 2), FrameId(1), 1000);
        assert_eq!(drain(&mut l, at(100 * MS)), vec![(1, 2 * MS)]);
    }

    #[test]
    fn unlimited_rate_is_pure_delay() {
        let config = DirectionConfig { delay: Duration::from_micros(250), ..Default::default() };
        let mut l = EmulatedLink::new(&config, 1);
        // Serialisation at u64::MAX bytes/s rounds up to 1 ns per frame.
        for i in 0..5 {
            l.handle_frame(at(i * US), FrameId(i as u32), 1514);
        }
        let got = drain(&mut l, at(MS));
        let want: Vec<_> = (0..5).map(|i| (i as u32, i * US + 250 * US + 1)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn unlimited_rate_never_drops_at_the_buffer() {
        // 5000 frames handed over at one instant (a late run from the kernel) all pass, 1 ns
        // apart, whatever the configured limit.
        let config = DirectionConfig { buffer_pkts: 10, ..Default::default() };
        let mut l = EmulatedLink::new(&config, 1);
        for i in 0..5000 {
            assert_eq!(l.handle_frame(at(MS), FrameId(i), 1514), Admission::Accepted);
        }
        let sent = drain(&mut l, at(2 * MS));
        assert_eq!(sent.len(), 5000);
        assert_eq!(sent[4999], (4999, MS + 5000));
    }

    #[test]
    fn random_loss_uses_the_core_model() {
        // p = 1 loses everything (uniform draws lie below 1); the link counts it apart.
        let config = DirectionConfig {
            loss: LossConfig::Bernoulli(BernoulliConfig { p: 1.0 }),
            ..Default::default()
        };
        let mut l = EmulatedLink::new(&config, 1);
        assert_eq!(l.handle_frame(at(0), FrameId(0), 100), Admission::DroppedLoss);
        assert_eq!((l.stats().loss_drops, l.stats().tx_pkts), (1, 0));
        assert_eq!(l.poll_timeout(), None);
    }

    #[test]
    fn codel_drops_the_head_of_a_standing_queue() {
        // 8 Mbit/s, 1000-byte frames: 1 ms each. Two frames arrive every millisecond, so the
        // queue grows by one per ms and a frame served at t ms waited about t / 2 ms. Sojourn
        // first reaches TARGET = 5 ms near t = 10 ms; CoDel drops once it has stayed above
        // for INTERVAL = 100 ms, so the first drop comes between 100 and 120 ms, and never
        // before 100 ms.
        let config = DirectionConfig {
            rate: Rate::BitsPerS(8_000_000),
            buffer_pkts: 10_000,
            aqm: AqmConfig::CoDel(CoDelConfig::default()),
            ..Default::default()
        };
        let mut l = EmulatedLink::new(&config, 1);
        let mut first_drop_ms = None;
        let mut next_id = 0;
        for t in 0..300 {
            for _ in 0..2 {
                l.handle_frame(at(t * MS), FrameId(next_id), 1000);
                next_id += 1;
            }
            while l.poll_transmit(at(t * MS)).is_some() {}
            if l.poll_dropped().is_some() && first_drop_ms.is_none() {
                first_drop_ms = Some(t);
            }
            while l.poll_dropped().is_some() {}
        }
        let first = first_drop_ms.expect("CoDel never dropped");
        assert!((100..=120).contains(&first), "first CoDel drop at {first} ms");
        assert!(l.stats().aqm_drops > 1);
        assert_eq!(l.stats().buffer_drops, 0);
    }
}
