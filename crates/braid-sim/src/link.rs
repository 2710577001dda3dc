//! A one-direction link: random loss on entry, a FIFO bounded in packets (drop-tail, optionally
//! under CoDel), a server that empties it at a constant rate or at the delivery opportunities
//! of a Mahimahi trace, then a propagation delay line. The FIFO counts packets as Linux `pfifo`
//! does; the packet in service is not in the FIFO. Every frame also carries `framing_bytes` of
//! link-layer header (14 for Ethernet), as `htb` rates count 1514-byte frames (docs/design.md
//! section 7).
//!
//! Only two events per link are ever pending: the end of the head packet's service and the
//! arrival of the first packet on the delay line.
//!
//! # Scheduled links
//! A drop-tail link at a constant rate knows each packet's service when it is offered: it
//! starts when the packet ahead of it ends (or at once on an idle link) and lasts
//! `frame_bytes / rate`. [`Link::new`] builds such a link *scheduled*: the packet goes onto the
//! delay line with its arrival time at once, and the end of its service is kept beside it, so
//! the link needs no end-of-service event (they were 43% of a default run's events). The FIFO's
//! occupancy at any instant follows from the kept service times: a packet whose service ends at
//! `t` has left the FIFO for anything that happens at `t`, as the event queue runs ends of
//! service before all else at one instant (crate::engine), so the two ways give the same run.
//! The counters of a packet's service ([`LinkStats`]) are taken when its service has started by
//! the instant the link is next asked, and [`Link::settle`] brings them up to an instant before
//! they are read. [`Link::with_events`] keeps the event per service on any link.
//!
//! # Queue discipline
//! - Drop-tail: a packet finding `buffer_pkts` packets queued is dropped.
//! - CoDel (RFC 8289, [`braid_core::linkmodel::codel`]): the same tail limit (as Linux's `codel`
//!   qdisc keeps its `limit`), plus CoDel's verdict on each packet taken from the head. Its
//!   drops are counted apart ([`LinkStats::aqm_drops`]) and handed to the caller through
//!   [`Link::pop_aqm_drop`]. The backlog CoDel compares with one MTU counts frame bytes.
//!
//! # Capacity
//! - A constant rate: a frame takes `frame_bytes / rate` to serialise.
//! - A Mahimahi trace ([`braid_core::linkmodel::trace`]): bytes leave only at delivery
//!   opportunities, each carrying up to [`OPPORTUNITY_BYTES`] of frame bytes, as Mahimahi's
//!   `LinkQueue::rationalize` does. A frame larger than what is left of an opportunity takes the
//!   rest and continues in the next ones; it leaves the link at the opportunity that carries its
//!   last byte. What that opportunity has left over goes to the next queued packet at the same
//!   instant; if none is queued it is wasted, and so is every opportunity that passes while the
//!   queue is empty. A packet reaching an idle link waits for the next opportunity at or after
//!   its arrival.
//!
//! # Random loss
//! Drawn per packet offered, before the queue ([`braid_core::linkmodel::loss`]), from the RNG
//! the caller lends, so one seeded generator drives every link.

use std::collections::VecDeque;
use std::sync::Arc;

use braid_core::linkmodel::{
    CoDel, CoDelConfig, CoDelConfigError, LossConfig, LossConfigError, LossModel, MahimahiTrace,
    TraceCursor, Verdict, OPPORTUNITY_BYTES,
};
use braid_core::time::transmission_time;
use braid_core::Instant;
use rand::Rng;

use crate::metrics::MeanMax;
use crate::packet::PktId;

/// How fast a link empties its queue.
#[derive(Clone, Debug, PartialEq)]
pub enum Capacity {
    /// A constant rate.
    Rate { bytes_per_s: u64 },
    /// The delivery opportunities of a Mahimahi trace, repeated from time zero.
    Trace(Arc<MahimahiTrace>),
}

/// The queue discipline in front of the link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Aqm {
    DropTail,
    CoDel(CoDelConfig),
}

/// Static description of a link.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub capacity: Capacity,
    pub delay_ns: u64,
    pub buffer_pkts: usize,
    pub framing_bytes: u32,
    pub aqm: Aqm,
    /// Random loss applied on entry.
    pub loss: LossConfig,
}

/// A link specification that cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LinkSpecError {
    #[error("rate_bytes_per_s = 0: a constant-rate link must have a positive rate")]
    ZeroRate,
    #[error("buffer_pkts = 0: the FIFO must hold at least one packet")]
    ZeroBuffer,
    #[error("codel: {0}")]
    CoDel(#[from] CoDelConfigError),
    #[error("loss: {0}")]
    Loss(#[from] LossConfigError),
}

impl LinkSpec {
    /// A drop-tail link at a constant rate without random loss.
    pub fn constant_rate(
        bytes_per_s: u64,
        delay_ns: u64,
        buffer_pkts: usize,
        framing_bytes: u32,
    ) -> Self {
        LinkSpec {
            capacity: Capacity::Rate { bytes_per_s },
            delay_ns,
            buffer_pkts,
            framing_bytes,
            aqm: Aqm::DropTail,
            loss: LossConfig::None,
        }
    }

    pub fn validate(&self) -> Result<(), LinkSpecError> {
        if self.capacity == (Capacity::Rate { bytes_per_s: 0 }) {
            return Err(LinkSpecError::ZeroRate);
        }
        if self.buffer_pkts == 0 {
            return Err(LinkSpecError::ZeroBuffer);
        }
        if let Aqm::CoDel(cfg) = &self.aqm {
            cfg.validate()?;
        }
        self.loss.validate()?;
        Ok(())
    }
}

/// Counters of one link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets that started service (left the FIFO or went straight through).
    pub tx_pkts: u64,
    /// Frame bytes served (IP length plus framing).
    pub tx_bytes: u64,
    /// Drop-tail drops at the FIFO.
    pub buffer_drops: u64,
    /// CoDel drops at the head of the FIFO.
    pub aqm_drops: u64,
    /// Random-loss drops.
    pub loss_drops: u64,
    pub max_queue_pkts: usize,
    /// Sum and maximum of the time served packets spent in the FIFO, ns.
    pub queue_delay_ns_sum: u64,
    pub queue_delay_ns_max: u64,
}

impl LinkStats {
    /// Every drop on this link: drop-tail, CoDel and random loss.
    pub fn drops(&self) -> u64 {
        self.buffer_drops + self.aqm_drops + self.loss_drops
    }

    fn count_service(&mut self, frame_bytes: u64, queue_delay_ns: u64) {
        self.tx_pkts += 1;
        self.tx_bytes += frame_bytes;
        self.queue_delay_ns_sum += queue_delay_ns;
        self.queue_delay_ns_max = self.queue_delay_ns_max.max(queue_delay_ns);
    }

    /// Mean and maximum FIFO sojourn of the packets served, ms.
    pub fn queue_delay_ms(&self) -> MeanMax {
        if self.tx_pkts == 0 {
            return MeanMax::default();
        }
        MeanMax {
            mean: self.queue_delay_ns_sum as f64 / self.tx_pkts as f64 * 1e-6,
            max: self.queue_delay_ns_max as f64 * 1e-6,
        }
    }
}

/// What happened to a packet offered to a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueue {
    /// The link was idle: service starts now and ends at the given time.
    Started(Instant),
    Queued,
    /// A scheduled link took the packet: it is on the delay line already. Carries the arrival
    /// time when the packet became the line's head (the caller schedules that arrival).
    Scheduled(Option<Instant>),
    DroppedBuffer,
    DroppedLoss,
}

#[derive(Clone, Copy, Debug)]
struct Queued {
    id: PktId,
    ip_len: u32,
    enqueued_at: Instant,
}

/// What empties the FIFO.
#[derive(Debug)]
enum Server {
    Rate {
        bytes_per_s: u64,
    },
    Trace {
        cursor: TraceCursor,
        /// Bytes left of the last opportunity used, which was at `credit_at`.
        credit_bytes: u32,
        credit_at: Instant,
    },
}

impl Server {
    /// When a frame of `frame_bytes` whose service starts at `now` has left.
    fn service_end(&mut self, now: Instant, frame_bytes: u64) -> Instant {
        match self {
            Server::Rate { bytes_per_s } => now + transmission_time(frame_bytes, *bytes_per_s),
            Server::Trace { cursor, credit_bytes, credit_at } => {
                let mut need = frame_bytes;
                let mut end = now;
                if *credit_at == now {
                    let used = need.min(u64::from(*credit_bytes));
                    need -= used;
                    *credit_bytes -= used as u32;
                }
                while need > 0 {
                    cursor.next_at_or_after(now);
                    end = cursor.use_next();
                    let used = need.min(u64::from(OPPORTUNITY_BYTES));
                    need -= used;
                    *credit_bytes = OPPORTUNITY_BYTES - used as u32;
                    *credit_at = end;
                }
                end
            }
        }
    }

    /// The queue ran empty: what is left of the current opportunity is wasted.
    fn idle(&mut self) {
        if let Server::Trace { credit_bytes, .. } = self {
            *credit_bytes = 0;
        }
    }
}

/// A scheduled link's packet whose service had not ended when the link was last asked.
#[derive(Clone, Copy, Debug)]
struct Service {
    start: Instant,
    end: Instant,
    frame_bytes: u64,
    queue_delay_ns: u64,
}

#[derive(Debug)]
pub struct Link {
    pub spec: LinkSpec,
    /// Scheduled links (module comment): services not yet ended, in order; the last
    /// `uncounted` have not been counted in `stats` (their service had not started).
    schedule: Option<VecDeque<Service>>,
    uncounted: usize,
    fifo: VecDeque<Queued>,
    /// Frame bytes in the FIFO.
    backlog_bytes: u64,
    in_service: Option<PktId>,
    delay_line: VecDeque<(Instant, PktId)>,
    server: Server,
    codel: Option<CoDel>,
    loss: LossModel,
    /// CoDel's drops of the last dequeue, until the caller collects them.
    aqm_dropped: VecDeque<PktId>,
    pub stats: LinkStats,
}

impl Link {
    /// A link as `spec` describes it, scheduled when it is a constant-rate drop-tail link
    /// (module comment); validate the spec first ([`LinkSpec::validate`]).
    pub fn new(spec: LinkSpec) -> Self {
        let scheduled =
            matches!(spec.capacity, Capacity::Rate { .. }) && matches!(spec.aqm, Aqm::DropTail);
        let mut link = Link::with_events(spec);
        if scheduled {
            link.schedule = Some(VecDeque::with_capacity(link.spec.buffer_pkts.min(4096) + 1));
        }
        link
    }

    /// A link that ends each service with an event ([`Link::tx_done`]), whatever its spec.
    pub fn with_events(spec: LinkSpec) -> Self {
        let server = match &spec.capacity {
            Capacity::Rate { bytes_per_s } => Server::Rate { bytes_per_s: *bytes_per_s },
            Capacity::Trace(trace) => Server::Trace {
                cursor: TraceCursor::new(Arc::clone(trace)),
                credit_bytes: 0,
                credit_at: Instant::ZERO,
            },
        };
        let codel = match spec.aqm {
            Aqm::DropTail => None,
            Aqm::CoDel(cfg) => Some(CoDel::new(cfg)),
        };
        Link {
            schedule: None,
            uncounted: 0,
            fifo: VecDeque::with_capacity(spec.buffer_pkts.min(4096)),
            backlog_bytes: 0,
            in_service: None,
            delay_line: VecDeque::with_capacity(256),
            server,
            codel,
            loss: spec.loss.build(),
            aqm_dropped: VecDeque::with_capacity(16),
            stats: LinkStats::default(),
            spec,
        }
    }

    fn frame_bytes(&self, ip_len: u32) -> u64 {
        u64::from(ip_len + self.spec.framing_bytes)
    }

    /// Starts serving a packet that waited `queue_delay_ns` in the FIFO; returns when its
    /// service ends.
    fn start(&mut self, now: Instant, id: PktId, ip_len: u32, queue_delay_ns: u64) -> Instant {
        let frame = self.frame_bytes(ip_len);
        self.in_service = Some(id);
        self.stats.count_service(frame, queue_delay_ns);
        self.server.service_end(now, frame)
    }

    /// A scheduled link's offered packet, after the loss draw.
    fn schedule(&mut self, now: Instant, id: PktId, ip_len: u32) -> Enqueue {
        self.settle(now);
        let frame_bytes = self.frame_bytes(ip_len);
        let schedule = self.schedule.as_mut().expect("a scheduled link");
        // What is left after settling has not ended: the head is in service, not in the FIFO.
        if schedule.len() > self.spec.buffer_pkts {
            self.stats.buffer_drops += 1;
            return Enqueue::DroppedBuffer;
        }
        let start = schedule.back().map_or(now, |s| s.end);
        let end = self.server.service_end(start, frame_bytes);
        let queue_delay_ns = start.nanos_since(now);
        let service = Service { start, end, frame_bytes, queue_delay_ns };
        schedule.push_back(service);
        if start == now {
            self.stats.count_service(frame_bytes, queue_delay_ns);
        } else {
            self.uncounted += 1;
            self.stats.max_queue_pkts = self.stats.max_queue_pkts.max(schedule.len() - 1);
        }
        let at = end.add_nanos(self.spec.delay_ns);
        let head = self.delay_line.is_empty();
        self.delay_line.push_back((at, id));
        Enqueue::Scheduled(head.then_some(at))
    }

    /// Brings a scheduled link to `now`: counts the services started by then and forgets
    /// those ended. Nothing to do on a link with events. Call it before reading `stats` for
    /// the counters of services (`tx_pkts`, `tx_bytes`, the queue delays); the drop counters
    /// are always current.
    pub fn settle(&mut self, now: Instant) {
        let Some(schedule) = self.schedule.as_mut() else { return };
        while self.uncounted > 0 {
            let s = schedule[schedule.len() - self.uncounted];
            if s.start > now {
                break;
            }
            self.stats.count_service(s.frame_bytes, s.queue_delay_ns);
            self.uncounted -= 1;
        }
        while schedule.front().is_some_and(|s| s.end <= now) {
            schedule.pop_front();
        }
    }

    /// Offers a packet of `ip_len` bytes; the random-loss draw, if any, comes from `rng`.
    pub fn enqueue<R: Rng + ?Sized>(
        &mut self,
        now: Instant,
        id: PktId,
        ip_len: u32,
        rng: &mut R,
    ) -> Enqueue {
        if self.loss.is_lost(rng) {
            self.stats.loss_drops += 1;
            return Enqueue::DroppedLoss;
        }
        if self.schedule.is_some() {
            return self.schedule(now, id, ip_len);
        }
        if self.in_service.is_none() {
            // Straight through an empty queue: a sojourn of zero is below any CoDel target, so
            // the verdict is Deliver; CoDel still sees the dequeue, as it would in the RFC.
            if let Some(codel) = &mut self.codel {
                codel.on_dequeue(now, now, 0);
            }
            return Enqueue::Started(self.start(now, id, ip_len, 0));
        }
        if self.fifo.len() >= self.spec.buffer_pkts {
            self.stats.buffer_drops += 1;
            return Enqueue::DroppedBuffer;
        }
        self.fifo.push_back(Queued { id, ip_len, enqueued_at: now });
        self.backlog_bytes += self.frame_bytes(ip_len);
        self.stats.max_queue_pkts = self.stats.max_queue_pkts.max(self.fifo.len());
        Enqueue::Queued
    }

    /// The packet in service finished at `now`. Returns (time the next service ends if another
    /// packet started, arrival time of the delay line's new head if the line was empty). CoDel
    /// may drop packets on the way to the next one: collect them with [`Link::pop_aqm_drop`].
    pub fn tx_done(&mut self, now: Instant) -> (Option<Instant>, Option<Instant>) {
        let mut arrival_event = None;
        if let Some(id) = self.in_service.take() {
            let at = now.add_nanos(self.spec.delay_ns);
            if self.delay_line.is_empty() {
                arrival_event = Some(at);
            }
            self.delay_line.push_back((at, id));
        }
        (self.dequeue(now), arrival_event)
    }

    /// Takes packets from the head until one is served or the FIFO is empty.
    fn dequeue(&mut self, now: Instant) -> Option<Instant> {
        loop {
            let Some(q) = self.fifo.pop_front() else {
                if let Some(codel) = &mut self.codel {
                    codel.on_empty();
                }
                self.server.idle();
                return None;
            };
            self.backlog_bytes -= self.frame_bytes(q.ip_len);
            if let Some(codel) = &mut self.codel {
                if codel.on_dequeue(now, q.enqueued_at, self.backlog_bytes) == Verdict::Drop {
                    self.stats.aqm_drops += 1;
                    self.aqm_dropped.push_back(q.id);
                    continue;
                }
            }
            return Some(self.start(now, q.id, q.ip_len, now.nanos_since(q.enqueued_at)));
        }
    }

    /// A packet CoDel dropped at the last dequeue, not yet collected.
    pub fn pop_aqm_drop(&mut self) -> Option<PktId> {
        self.aqm_dropped.pop_front()
    }

    /// Pops the next packet that has arrived by `now`.
    pub fn pop_arrived(&mut self, now: Instant) -> Option<PktId> {
        match self.delay_line.front() {
            Some(&(at, id)) if at <= now => {
                self.delay_line.pop_front();
                Some(id)
            }
            _ => None,
        }
    }

    /// Arrival time of the delay line's head.
    pub fn next_arrival(&self) -> Option<Instant> {
        self.delay_line.front().map(|&(at, _)| at)
    }

    /// Packets in the FIFO at `now` (not counting the one in service).
    pub fn queue_len(&self, now: Instant) -> usize {
        match &self.schedule {
            Some(schedule) => schedule.len() - schedule.partition_point(|s| s.start <= now),
            None => self.fifo.len(),
        }
    }

    /// Every packet on the link: queued, in service, propagating, or dropped by CoDel and not
    /// yet collected.
    pub fn packets(&self) -> impl Iterator<Item = PktId> + '_ {
        self.fifo
            .iter()
            .map(|q| q.id)
            .chain(self.in_service)
            .chain(self.delay_line.iter().map(|&(_, id)| id))
            .chain(self.aqm_dropped.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use braid_core::linkmodel::{BernoulliConfig, GilbertElliottConfig};
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    use super::*;

    const MS: u64 = 1_000_000;

    fn rng() -> Pcg64Mcg {
        Pcg64Mcg::seed_from_u64(1)
    }

    fn spec() -> LinkSpec {
        LinkSpec::constant_rate(1_000_000, 10_000_000, 2, 0)
    }

    fn at(ns: u64) -> Instant {
        Instant::from_nanos(ns)
    }

    #[test]
    fn serialises_then_delays_and_drops_at_the_tail() {
        let mut l = Link::with_events(spec());
        let r = &mut rng();
        let t0 = Instant::ZERO;
        // 1000 bytes at 1 MB/s = 1 ms.
        assert_eq!(l.enqueue(t0, PktId(0), 1000, r), Enqueue::Started(at(1_000_000)));
        assert_eq!(l.enqueue(t0, PktId(1), 1000, r), Enqueue::Queued);
        assert_eq!(l.enqueue(t0, PktId(2), 1000, r), Enqueue::Queued);
        assert_eq!(l.enqueue(t0, PktId(3), 1000, r), Enqueue::DroppedBuffer);
        let (next, arr) = l.tx_done(at(1_000_000));
        assert_eq!(next, Some(at(2_000_000)));
        assert_eq!(arr, Some(at(11_000_000)));
        assert_eq!(l.pop_arrived(at(10_999_999)), None);
        assert_eq!(l.pop_arrived(at(11_000_000)), Some(PktId(0)));
        assert_eq!(l.stats.buffer_drops, 1);
        assert_eq!(l.packets().count(), 2);
        // PktId(1) waited 1 ms in the FIFO; PktId(0) none.
        assert_eq!(l.stats.queue_delay_ms(), MeanMax { mean: 0.5, max: 1.0 });
    }

    /// A scheduled link gives what the same link with an event per end of service gives when
    /// those events run before anything else at their instant (crate::engine's rule): the same
    /// verdicts, the same arrivals at the far end, the same FIFO length at every instant and,
    /// once settled, the same counters. Offered: bursts at random instants, often at the very
    /// nanosecond a service ends, with random loss.
    #[test]
    fn a_scheduled_link_runs_as_the_link_with_events() {
        use rand::RngExt;
        /// Every packet that has reached the far end by `now`, with its arrival time.
        fn arrivals(l: &mut Link, now: Instant, out: &mut Vec<(PktId, Instant)>) {
            while let Some(due) = l.next_arrival().filter(|&d| d <= now) {
                out.push((l.pop_arrived(now).unwrap(), due));
            }
        }
        let spec = LinkSpec {
            loss: LossConfig::Bernoulli(BernoulliConfig { p: 0.05 }),
            ..LinkSpec::constant_rate(1_000_000, 3 * MS, 8, 14)
        };
        let mut scheduled = Link::new(spec.clone());
        let mut events = Link::with_events(spec);
        assert!(scheduled.schedule.is_some() && events.schedule.is_none());
        let (mut r1, mut r2) = (rng(), rng());
        let mut traffic = Pcg64Mcg::seed_from_u64(7);
        let mut service_end: Option<Instant> = None;
        let (mut arrived_s, mut arrived_e) = (Vec::new(), Vec::new());
        let mut now = Instant::ZERO;
        let mut ends_hit = 0;
        for id in 0..5_000u32 {
            now = match (traffic.random_range(0..4), service_end) {
                (0, Some(end)) => {
                    ends_hit += 1;
                    end
                }
                _ => now.add_nanos(traffic.random_range(0..1_500_000)),
            };
            // The event link's ends of service due by `now` run first.
            while let Some(end) = service_end.filter(|&e| e <= now) {
                service_end = events.tx_done(end).0;
            }
            arrivals(&mut events, now, &mut arrived_e);
            arrivals(&mut scheduled, now, &mut arrived_s);
            assert_eq!(scheduled.queue_len(now), events.queue_len(now), "FIFO at {now:?}");
            let ip_len = traffic.random_range(40..1500);
            let a = scheduled.enqueue(now, PktId(id), ip_len, &mut r1);
            match (a, events.enqueue(now, PktId(id), ip_len, &mut r2)) {
                (Enqueue::Scheduled(_), Enqueue::Started(end)) => service_end = Some(end),
                (Enqueue::Scheduled(_), Enqueue::Queued) => {}
                (a, b) => assert_eq!(a, b, "packet {id} at {now:?}"),
            }
        }
        assert!(ends_hit > 500, "offers at the instant a service ends: {ends_hit}");
        assert!(events.stats.buffer_drops > 100 && events.stats.loss_drops > 100);
        assert!(events.stats.max_queue_pkts == 8);
        scheduled.settle(now);
        assert_eq!(scheduled.stats, events.stats);
        let later = now.add_nanos(1_000 * MS);
        while let Some(end) = service_end {
            service_end = events.tx_done(end).0;
        }
        arrivals(&mut events, later, &mut arrived_e);
        arrivals(&mut scheduled, later, &mut arrived_s);
        scheduled.settle(later);
        assert_eq!(scheduled.stats, events.stats);
        assert!(arrived_e.len() > 3_000);
        assert_eq!(arrived_s, arrived_e);
        assert_eq!((scheduled.queue_len(later), scheduled.packets().count()), (0, 0));
    }

    #[test]
    fn bernoulli_one_loses_everything_and_zero_nothing() {
        let r = &mut rng();
        let lossy = LossConfig::Bernoulli(BernoulliConfig { p: 1.0 });
        let mut l = Link::with_events(LinkSpec { loss: lossy, ..spec() });
        assert_eq!(l.enqueue(Instant::ZERO, PktId(0), 100, r), Enqueue::DroppedLoss);
        assert_eq!((l.stats.loss_drops, l.stats.drops()), (1, 1));
        let mut clean = Link::with_events(LinkSpec {
            loss: LossConfig::Bernoulli(BernoulliConfig { p: 0.0 }),
            ..spec()
        });
        assert!(matches!(clean.enqueue(Instant::ZERO, PktId(0), 100, r), Enqueue::Started(_)));
    }

    #[test]
    fn gilbert_elliott_loses_in_bursts_on_the_link() {
        // Gilbert with p = 1, r = 0: the first packet finds Good, every later one Bad.
        let ge = LossConfig::GilbertElliott(GilbertElliottConfig::gilbert(1.0, 0.0));
        let mut l = Link::with_events(LinkSpec { loss: ge, buffer_pkts: 100, ..spec() });
        let r = &mut rng();
        assert!(matches!(l.enqueue(Instant::ZERO, PktId(0), 100, r), Enqueue::Started(_)));
        for i in 1..10 {
            assert_eq!(l.enqueue(Instant::ZERO, PktId(i), 100, r), Enqueue::DroppedLoss);
        }
    }

    fn trace_link(opportunities_ms: Vec<u64>) -> Link {
        let trace = Arc::new(MahimahiTrace::from_opportunities_ms(opportunities_ms).unwrap());
        Link::with_events(LinkSpec {
            capacity: Capacity::Trace(trace),
            delay_ns: 0,
            buffer_pkts: 100,
            framing_bytes: 0,
            aqm: Aqm::DropTail,
            loss: LossConfig::None,
        })
    }

    #[test]
    fn a_trace_link_serves_whole_mtus_at_opportunities() {
        // One opportunity per ms (period 1 ms: at 1, 2, 3, ... ms).
        let mut l = trace_link(vec![1]);
        let r = &mut rng();
        // Arriving at 0.5 ms, a 1500-byte packet leaves with the opportunity at 1 ms.
        assert_eq!(l.enqueue(at(MS / 2), PktId(0), 1500, r), Enqueue::Started(at(MS)));
        assert_eq!(l.enqueue(at(MS / 2), PktId(1), 1500, r), Enqueue::Queued);
        assert_eq!(l.tx_done(at(MS)).0, Some(at(2 * MS)));
        // The queue is then empty: the opportunity at 3 ms passes unused; a packet arriving at
        // 3.5 ms takes the one at 4 ms.
        assert_eq!(l.tx_done(at(2 * MS)).0, None);
        assert_eq!(l.enqueue(at(3 * MS + MS / 2), PktId(2), 1500, r), Enqueue::Started(at(4 * MS)));
    }

    #[test]
    fn a_trace_link_splits_frames_across_opportunities_and_shares_leftovers() {
        // Opportunities every ms. Frames of 1000 bytes: the first takes 1000 of the 1 ms
        // opportunity; the second the 500 left there and 500 of the 2 ms one, leaving at 2 ms;
        // the third the 1000 left at 2 ms, also leaving at 2 ms; the fourth needs the 3 ms one.
        let mut l = trace_link(vec![1]);
        let r = &mut rng();
        assert_eq!(l.enqueue(Instant::ZERO, PktId(0), 1000, r), Enqueue::Started(at(MS)));
        for i in 1..4 {
            assert_eq!(l.enqueue(Instant::ZERO, PktId(i), 1000, r), Enqueue::Queued);
        }
        assert_eq!(l.tx_done(at(MS)).0, Some(at(2 * MS)));
        assert_eq!(l.tx_done(at(2 * MS)).0, Some(at(2 * MS)));
        assert_eq!(l.tx_done(at(2 * MS)).0, Some(at(3 * MS)));
        // The queue then runs empty and the 500 bytes left at 3 ms are wasted: a 3000-byte frame
        // arriving at 3 ms takes the whole 4 and 5 ms opportunities.
        assert_eq!(l.tx_done(at(3 * MS)).0, None);
        assert_eq!(l.enqueue(at(3 * MS), PktId(4), 3000, r), Enqueue::Started(at(5 * MS)));
    }

    #[test]
    fn a_trace_link_carries_its_trace_rate_when_backlogged() {
        // Two opportunities per ms: 3000 bytes/ms. 1514-byte frames, kept backlogged for 1 s,
        // leave at 3000 / 1514 = 1.98 per ms: 1981 frames by 1000 ms (3000 * 1000 / 1514).
        let mut l = trace_link(vec![1, 1]);
        let r = &mut rng();
        let mut next_id = 0;
        let mut end = match l.enqueue(Instant::ZERO, PktId(next_id), 1514, r) {
            Enqueue::Started(end) => end,
            other => panic!("{other:?}"),
        };
        let mut served = 0;
        while end <= at(1000 * MS) {
            next_id += 1;
            l.enqueue(end, PktId(next_id), 1514, r);
            served += 1;
            end = l.tx_done(end).0.expect("backlogged");
        }
        assert_eq!(served, 3000 * 1000 / 1514);
    }

    fn codel_link() -> Link {
        let codel = CoDelConfig {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            mtu_bytes: 1500,
        };
        // 1500 bytes at 1.5 MB/s: one packet per ms.
        Link::with_events(LinkSpec {
            aqm: Aqm::CoDel(codel),
            buffer_pkts: 1000,
            ..LinkSpec::constant_rate(1_500_000, 0, 1000, 0)
        })
    }

    #[test]
    fn codel_drops_at_the_head_once_the_standing_queue_lasts_an_interval() {
        // Two packets arrive per ms and one leaves: the queue grows by one per ms, so sojourn
        // passes the 5 ms target after about 10 ms. First drop at the dequeue at or after
        // first_above_time (about 10 + 100 ms): between 105 and 115 ms.
        let mut l = codel_link();
        let r = &mut rng();
        let mut id = 0;
        let mut end = None;
        let mut first_drop = None;
        for ms in 0..300u64 {
            let now = at(ms * MS);
            if end == Some(now) {
                end = l.tx_done(now).0;
            }
            for _ in 0..2 {
                if let Enqueue::Started(e) = l.enqueue(now, PktId(id), 1500, r) {
                    end = Some(e);
                }
                id += 1;
            }
            if first_drop.is_none() && l.stats.aqm_drops > 0 {
                first_drop = Some(ms);
                assert!(l.pop_aqm_drop().is_some());
            }
        }
        let first = first_drop.expect("CoDel dropped");
        assert!((105..=115).contains(&first), "first drop at {first} ms");
        assert_eq!(l.stats.buffer_drops, 0);
        assert!(l.stats.aqm_drops > 1);
        // Every packet offered was served (or is in service), is queued, or was dropped by CoDel;
        // the drops not collected are still among the link's packets.
        let queued = l.queue_len(Instant::ZERO) as u64;
        assert_eq!(u64::from(id), l.stats.tx_pkts + queued + l.stats.aqm_drops);
        // Served packets sit on the (never emptied) delay line, one is in service.
        let uncollected = l.stats.aqm_drops - 1;
        assert_eq!(l.packets().count() as u64, queued + l.stats.tx_pkts + uncollected);
    }

    #[test]
    fn validation_names_the_part_at_fault() {
        let mut s = spec();
        s.capacity = Capacity::Rate { bytes_per_s: 0 };
        assert_eq!(s.validate(), Err(LinkSpecError::ZeroRate));
        let mut s = spec();
        s.aqm = Aqm::CoDel(CoDelConfig { target: Duration::ZERO, ..CoDelConfig::default() });
        assert!(s.validate().unwrap_err().to_string().starts_with("codel: target = 0ns"));
        let mut s = spec();
        s.loss = LossConfig::Bernoulli(BernoulliConfig { p: 1.5 });
        assert!(s.validate().unwrap_err().to_string().starts_with("loss: p = 1.5"));
        spec().validate().unwrap();
    }
}
