//! The tunnel sender: scheduler queue, path selection, pacing, per-path loss detection, and
//! retransmission for reliable and partially reliable paths.
//!
//! # Partial reliability: is a retransmission still worth sending?
//! A partially reliable path ([`Reliability::Partial`]) sends a lost packet again only if the
//! copy can still arrive before the receiver gives up the packet's gap and releases what it
//! holds beyond it. The sender cannot see the receiver's wait limit, so it estimates both sides
//! from its own RTT estimates, taking one-way delay as half the smoothed RTT:
//!
//! ```text
//! gap given up  ~ scheduled_at + min over paths (srtt / 2) + wait limit
//! copy arrives  ~ now + srtt of this path / 2
//! ```
//!
//! where the later packets that open the gap arrive over the fastest path, and the wait limit is
//! the receiver's static wait, or for the adaptive policy the spread of the paths' one-way
//! delays plus the margin (the receiver's own formula, fed with the sender's estimates), or zero
//! for the `none` policy, which never waits. The copy is sent if it arrives no later than the
//! gap is given up; otherwise the packet is lost for good ([`SenderStats::expired`]).
//!
//! # Path exclusion for delay asymmetry
//! With [`TunnelConfig::max_rtt_spread`] set, a path whose minimum RTT exceeds the fastest
//! path's by more than the spread is offered to the scheduler as unusable, so it carries no new
//! packets (its retransmissions still leave). Every packet such a path carries arrives long
//! after the packets around it on the fast path: the receiver either holds everything behind
//! it (head-of-line blocking the end-to-end sender sees as a delay spike) or gives the gap up
//! (a loss the end-to-end sender repairs). The ASYM200 scenario of Pieska et al. 2024 shows both
//! costing more than the slow path's capacity brings. The minimum RTT is used, not the smoothed
//! one, because it measures the paths' structure, not their queues (which the schedulers already
//! see), and a path carrying nothing keeps its minimum rather than going stale upwards; a path
//! whose propagation delay shrinks while it is excluded is only rediscovered when the fast path's
//! own minimum rises to meet it. The same rule appears as "path exclusion" in bonding tools
//! and as the slow-path check of BLEST and ECF, here without their per-packet models.

use std::collections::VecDeque;
use std::time::Duration;

use super::config::{Reliability, TunnelConfig};
use super::controllers::PathControllers;
use super::loss::{Retained, SentTracker};
use super::sched_queue::{Popped, SchedQueue};
use crate::cc::{CcMetrics, CcParams, Counting};
use crate::reorder::{ReorderConfig, ReorderKind};
use crate::sched::{PathView, Scheduler, SchedulerMetrics};
use crate::time::{transmission_time, Instant};
use crate::wire::{DataHeader, Feedback};

/// A packet ready to leave on `path`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit<P> {
    pub path: usize,
    pub header: DataHeader,
    pub payload: P,
    /// Inner packet plus tunnel header bytes.
    pub wire_len: u32,
    /// A further copy of a packet already sent or queued: a retransmission or a redundant copy.
    pub copy: bool,
    /// Transmissions of this path sequence number before this one: 0 for a packet's first,
    /// 1 and up for its retransmissions on the path (which reuse the number).
    pub attempt: u8,
    /// With [`TunnelConfig::compact_seq_reach`]: the receiver expands this packet's path and
    /// global sequence numbers exactly from their low bits, so it may travel compact.
    pub compact: bool,
    /// With [`TunnelConfig::owd_sample_interval`]: follow this compact packet on its path with a
    /// time-sync frame carrying its path sequence number and `header.send_ts_ns`.
    pub time_sync: bool,
}

/// Counters of one path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathStats {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    /// Packets the sender's loss detection declared lost (possibly spuriously).
    pub lost_pkts: u64,
    pub rto_count: u64,
}

/// Counters of the whole sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    pub enqueued_pkts: u64,
    /// Packets refused because the scheduler queue was full (drop-tail).
    pub sched_drops: u64,
    /// Packets CoDel dropped at the head of the scheduler queue
    /// ([`super::TunnelConfig::sched_codel`]).
    pub aqm_drops: u64,
    /// Copies a redundant scheduler made (beyond the first copy of each packet).
    pub redundant_copies: u64,
    /// Lost packets sent again (reliable and partial paths).
    pub retransmissions: u64,
    /// Lost packets a partial path gave up because a copy would arrive too late.
    pub expired: u64,
    /// Packets in flight on a path when it went down, handed to the other paths (reliable and
    /// partial paths keep copies; an unreliable path's are lost with it).
    pub failover_moved: u64,
}

impl SenderStats {
    /// Packets the sender put on (or queued for) the wire beyond one copy per packet.
    pub fn copies(&self) -> u64 {
        self.redundant_copies + self.retransmissions
    }
}

/// A snapshot of one path for schedulers, traces and metrics endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathMetrics {
    pub cc: CcMetrics,
    /// Charged bytes assigned to the path and not yet acknowledged or declared lost, including
    /// packets waiting for their pacing slot.
    pub in_flight_bytes: u64,
    pub srtt: Option<Duration>,
    pub min_rtt: Option<Duration>,
    /// Packets assigned to the path and waiting for their pacing slot.
    pub pacing_queue_pkts: usize,
}

#[derive(Debug)]
struct Assigned<P> {
    payload: P,
    len: u32,
    global_seq: u64,
    charge: u64,
    /// A redundant copy, not the packet's first copy.
    copy: bool,
    /// When the packet was scheduled onto the path: its header timestamp.
    scheduled_at: Instant,
}

#[derive(Debug)]
struct SenderPath<P> {
    cost: u32,
    next_path_seq: u64,
    pacing_queue: VecDeque<Assigned<P>>,
    /// Charged bytes waiting in `pacing_queue`.
    queued_bytes: u64,
    next_send_time: Instant,
    tracker: SentTracker<P>,
    stats: PathStats,
    /// Liveness as the caller sees it ([`TunnelSender::set_path_up`]); always true in the
    /// simulator.
    is_up: bool,
    /// When the path's receiver last got a send timestamp: a full header, or a time-sync.
    last_owd_sample: Option<Instant>,
}

impl<P> SenderPath<P> {
    /// What the scheduler counts against the window: on the network, waiting for pacing, and
    /// waiting to be sent again.
    fn in_flight_bytes(&self) -> u64 {
        self.tracker.outstanding_bytes + self.queued_bytes + self.tracker.resend_bytes
    }

    /// Whether the path has something to send once its pacing allows: new packets (admitted
    /// against the window when they were scheduled), or a retransmission the window has room
    /// for (`cwnd`: the path controller's window). As in TCP, a retransmission is sent only
    /// when the window allows, so an RTO's flight goes out again at slow-start pace.
    /// `cwnd` is asked for only when a retransmission waits (it is a virtual call, and this
    /// runs for every path on every poll).
    fn has_pending(&self, cwnd: impl FnOnce() -> u64, mss: u64) -> bool {
        self.is_up && (!self.pacing_queue.is_empty() || self.resend_allowed(cwnd, mss))
    }

    /// Whether path exclusion leaves the path out: its minimum RTT is above `too_slow`
    /// ([`TunnelSender::exclusion_threshold`]).
    fn is_excluded(&self, too_slow: Option<Duration>) -> bool {
        too_slow.is_some_and(|t| self.tracker.rtt.min_rtt().is_some_and(|m| m > t))
    }

    fn resend_allowed(&self, cwnd: impl FnOnce() -> u64, mss: u64) -> bool {
        self.tracker.has_resend() && self.tracker.outstanding_bytes + mss <= cwnd()
    }
}

/// Sender side of one tunnel direction. See the module documentation.
#[derive(Debug)]
pub struct TunnelSender<P> {
    queue: SchedQueue<P>,
    paths: Vec<SenderPath<P>>,
    cc: PathControllers,
    scheduler: Box<dyn Scheduler>,
    counting: Counting,
    mss_bytes: u64,
    header_bytes: u32,
    views: Vec<PathView>,
    stats: SenderStats,
    reliability: Reliability,
    reorder: ReorderConfig,
    pacing_catch_up: Duration,
    max_rtt_spread: Option<Duration>,
    compact_seq_reach: Option<u64>,
    owd_sample_interval: Option<Duration>,
    /// The highest global sequence number any path's feedback acknowledged.
    largest_acked_global: Option<u64>,
}

impl<P: Clone> TunnelSender<P> {
    /// A sender for a validated configuration.
    pub fn new(config: &TunnelConfig) -> Self {
        let n = config.path_costs.len();
        let params = CcParams {
            mss_bytes: config.mss_bytes,
            initial_window_pkts: config.initial_window_pkts,
        };
        let paths = config
            .path_costs
            .iter()
            .map(|&cost| SenderPath {
                cost,
                next_path_seq: 0,
                pacing_queue: VecDeque::with_capacity(64),
                queued_bytes: 0,
                next_send_time: Instant::ZERO,
                tracker: SentTracker::new(
                    config.min_rto,
                    config.packet_threshold,
                    1024,
                    config.reliability.retransmits(),
                ),
                stats: PathStats::default(),
                is_up: true,
                last_owd_sample: None,
            })
            .collect();
        TunnelSender {
            queue: SchedQueue::new(config.sched_queue_pkts, config.sched_codel),
            paths,
            cc: PathControllers::new(config.cc.build_seeded(
                params,
                n,
                &config.cc_tuning,
                config.cc_seed,
            )),
            scheduler: config.scheduler.build(&config.sched, config.reorder.buffer_pkts),
            counting: config.counting.unwrap_or_else(|| config.cc.counting()),
            mss_bytes: config.mss_bytes,
            header_bytes: config.header_bytes,
            views: Vec::with_capacity(n),
            stats: SenderStats::default(),
            reliability: config.reliability,
            reorder: config.reorder.clone(),
            pacing_catch_up: config.pacing_catch_up,
            max_rtt_spread: config.max_rtt_spread,
            compact_seq_reach: config.compact_seq_reach,
            owd_sample_interval: config.owd_sample_interval,
            largest_acked_global: None,
        }
    }

    /// Offers an inner packet of `len` bytes. Returns it back when the scheduler queue is full
    /// (drop-tail; counted in [`SenderStats::sched_drops`]).
    pub fn handle_packet(&mut self, now: Instant, payload: P, len: u32) -> Result<(), P> {
        self.queue.offer(now, payload, len).inspect_err(|_| self.stats.sched_drops += 1)?;
        self.stats.enqueued_pkts += 1;
        Ok(())
    }

    /// A packet CoDel dropped from the scheduler queue (counted in
    /// [`SenderStats::aqm_drops`]), handed back to its owner. Call until `None`.
    pub fn poll_dropped(&mut self) -> Option<P> {
        self.queue.take_dropped()
    }

    /// Marks path `i` usable or not; the data plane's liveness check calls this, the simulator
    /// never does. A path going down hands the packets waiting for its pacing slot back to the
    /// front of the scheduler queue, in order and with their global sequence numbers, so they
    /// leave on the paths that remain instead of waiting for one that may not return (redundant
    /// copies are simply dropped: another path carries the packet). What is already on the
    /// network and kept for retransmission (reliable and partial paths) follows, ahead of them,
    /// and stays queued for retransmission on this path too; an unreliable path keeps no
    /// copies, so its packets in flight are lost with it. A path coming back starts again from the loss window,
    /// as a TCP connection does after an RTO (RFC 5681 section 3.1): its old window says nothing
    /// about the network it returns to. A path that has never sent anything (a server's path
    /// before the client has spoken on it) keeps its initial window. Indices out of range are
    /// ignored.
    pub fn set_path_up(&mut self, now: Instant, i: usize, up: bool) {
        let Some(path) = self.paths.get_mut(i) else { return };
        if path.is_up == up {
            return;
        }
        path.is_up = up;
        if up {
            if path.stats.sent_pkts > 0 {
                self.cc.on_rto(i, now);
            }
            return;
        }
        path.queued_bytes = 0;
        while let Some(a) = path.pacing_queue.pop_back() {
            if !a.copy {
                self.queue.give_back(now, a.payload, a.len, a.global_seq);
            }
        }
        // What was on the dead path goes out on the others at once, ahead of its unsent
        // packets (lower global sequence numbers first), rather than waiting for end-to-end
        // TCP to notice the loss: MPTCP's reinjection of a failed subflow's data
        // (RFC 8684 section 3.3.6; Linux `__mptcp_retrans`, net/mptcp/protocol.c). As there,
        // the path itself still sends its copies again when it returns (loss.rs `failover`).
        let moved = path.tracker.failover();
        self.stats.failover_moved += moved.len() as u64;
        for r in moved.into_iter().rev() {
            self.queue.give_back(now, r.payload, r.len, r.global_seq);
        }
    }

    /// Whether path `i` is marked usable.
    pub fn is_path_up(&self, i: usize) -> bool {
        self.paths.get(i).is_some_and(|p| p.is_up)
    }

    /// An RTT sample of path `i` measured without data: a path handshake, or a probe's echo on
    /// a quiet path ([`crate::wire::Probe`]). It feeds the path's RTT estimator (RFC 6298), so
    /// the scheduler's srtt and path exclusion's min_rtt know a path before it carries data, as a
    /// TCP subflow's srtt starts from its handshake (Linux `tcp_synack_rtt_meas`,
    /// net/ipv4/tcp_input.c). The congestion controller is not told: a handshake says nothing
    /// about the path's rate. Unknown paths and a zero sample are ignored.
    pub fn on_path_rtt_sample(&mut self, i: usize, rtt: Duration) {
        if let Some(path) = self.paths.get_mut(i).filter(|_| !rtt.is_zero()) {
            path.tracker.rtt.update(rtt);
        }
    }

    /// Applies the receiver's feedback for one path. Frames naming an unknown path are ignored.
    pub fn handle_feedback(&mut self, now: Instant, fb: &Feedback) {
        let i = fb.path_id as usize;
        let Some(path) = self.paths.get_mut(i) else { return };
        let out = path.tracker.on_feedback(now, fb);
        self.largest_acked_global = self.largest_acked_global.max(out.largest_acked_global);
        path.stats.lost_pkts += out.newly_lost_pkts;
        if let Some(ev) = out.congestion {
            self.cc.on_congestion_event(i, &ev);
        }
        if let Some(ack) = out.ack {
            self.cc.on_ack(i, &ack);
        }
    }

    /// The next packet to put on the wire at `now`, if any. Call until `None`.
    #[inline]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit<P>> {
        self.schedule(now);
        loop {
            let (i, _) = self
                .paths
                .iter()
                .enumerate()
                .filter(|(i, p)| {
                    p.next_send_time <= now
                        && p.has_pending(|| self.cc.cwnd_bytes(*i), self.mss_bytes)
                })
                .min_by_key(|(i, p)| (p.next_send_time, *i))?;
            // Retransmissions go first, as TCP repairs holes before sending new data.
            if let Some(t) = self.retransmit(now, i) {
                return Some(t);
            }
            if let Some(t) = self.transmit_new(now, i) {
                return Some(t);
            }
            // The path held only packets a partial path gave up, or stale queue entries.
        }
    }

    /// Sends the first packet of path `i`'s pacing queue.
    fn transmit_new(&mut self, now: Instant, i: usize) -> Option<Transmit<P>> {
        let a = self.paths[i].pacing_queue.pop_front()?;
        let cwnd = self.cc.cwnd_bytes(i);
        let path = &mut self.paths[i];
        path.queued_bytes -= a.charge;
        let path_seq = path.next_path_seq;
        path.next_path_seq += 1;
        let retained = self.reliability.retransmits().then(|| Retained {
            payload: a.payload.clone(),
            len: a.len,
            global_seq: a.global_seq,
            scheduled_at: a.scheduled_at,
        });
        path.tracker.on_sent(now, path_seq, a.global_seq, a.charge, retained);
        path.tracker.on_window_use(cwnd, self.mss_bytes);
        let header = DataHeader::for_packet(i, a.len, a.global_seq, path_seq, a.scheduled_at);
        Some(self.depart(now, i, a.charge, header, a.payload, a.len, (a.copy, 0)))
    }

    /// Sends path `i`'s oldest lost packet again, unless a partial path judges it too late.
    fn retransmit(&mut self, now: Instant, i: usize) -> Option<Transmit<P>> {
        if !self.paths[i].resend_allowed(|| self.cc.cwnd_bytes(i), self.mss_bytes) {
            return None;
        }
        let deadline = (self.reliability == Reliability::Partial).then(|| self.gap_estimate(i));
        let path = &mut self.paths[i];
        loop {
            let (seq, charge, r) = path.tracker.next_resend()?;
            if let Some((owd_here, fastest_owd, wait)) = deadline {
                if now + owd_here > r.scheduled_at + fastest_owd + wait {
                    path.tracker.expire(seq);
                    self.stats.expired += 1;
                    continue;
                }
            }
            let (payload, len, global_seq) = (r.payload.clone(), r.len, r.global_seq);
            let attempt = path.tracker.on_retransmit(now, seq);
            self.stats.retransmissions += 1;
            // The header timestamp is the retransmission's own scheduling time, so the
            // receiver's one-way-delay samples stay samples of the path.
            let header = DataHeader::for_packet(i, len, global_seq, seq, now);
            return Some(self.depart(now, i, charge, header, payload, len, (true, attempt)));
        }
    }

    /// The controller and pacing bookkeeping of one departure on path `i`.
    #[allow(clippy::too_many_arguments, reason = "one call site each for new and resent data")]
    fn depart(
        &mut self,
        now: Instant,
        i: usize,
        charge: u64,
        header: DataHeader,
        payload: P,
        len: u32,
        (copy, attempt): (bool, u8),
    ) -> Transmit<P> {
        // A retransmission reuses its path sequence number, and a compact message's nonce is
        // the path's (sequence, attempt) slot, which the sealing end must never move back to
        // (braid-net crypto/keypair.rs `seal_compact`): resent data travels as a full message,
        // whose nonce is fresh. (Before this, the daemon's retransmissions were refused by the
        // seal and silently never left; a reliable path that timed out stalled for good.)
        let compact = attempt == 0 && self.compact_fits(i, &header);
        let path = &mut self.paths[i];
        let time_sync = compact
            && self.owd_sample_interval.is_some_and(|every| {
                path.last_owd_sample.is_none_or(|last| now.saturating_since(last) >= every)
            });
        if time_sync || !compact {
            path.last_owd_sample = Some(now);
        }
        // The controller sees what is on the network, as a kernel socket's does; packets
        // waiting for their pacing slot count only towards the scheduler's view of the window.
        self.cc.on_sent(i, now, charge, path.tracker.outstanding_bytes);
        if let Some(rate) = self.cc.pacing_rate_bytes_per_s(i).filter(|&r| r > 0) {
            let earliest = now - self.pacing_catch_up;
            path.next_send_time =
                path.next_send_time.max(earliest) + transmission_time(charge, rate);
        } else {
            path.next_send_time = now;
        }
        let wire_len = len + self.header_bytes;
        path.stats.sent_pkts += 1;
        path.stats.sent_bytes += wire_len as u64;
        Transmit { path: i, header, payload, wire_len, copy, attempt, compact, time_sync }
    }

    /// Whether the receiver is sure to expand `header`'s sequence numbers from their low bits
    /// ([`TunnelConfig::compact_seq_reach`]): each lies within reach of every value the
    /// receiver may expect next. On path `i` the receiver expects at least one above the largest
    /// acknowledged number (0 before any) and at most one above the highest sent; across paths,
    /// at least one above the largest global number acknowledged anywhere and at most one above
    /// the highest scheduled.
    fn compact_fits(&self, i: usize, header: &DataHeader) -> bool {
        let Some(reach) = self.compact_seq_reach else { return false };
        let within = |value: u64, lowest: u64, highest: u64| {
            value.saturating_sub(lowest) < reach && highest.saturating_sub(value) < reach
        };
        let path = &self.paths[i];
        let path_lowest = path.tracker.largest_acked().map_or(0, |l| l + 1);
        let global_lowest = self.largest_acked_global.map_or(0, |l| l + 1);
        let global_highest = self.queue.next_global_seq();
        within(header.path_seq, path_lowest, path.next_path_seq)
            && within(header.global_seq, global_lowest, global_highest)
    }

    /// For a partial path `i`: (one-way delay of path `i`, of the fastest path, the receiver's
    /// wait limit), all estimated as the module documentation says.
    fn gap_estimate(&self, i: usize) -> (Duration, Duration, Duration) {
        let owd = |p: &SenderPath<P>| p.tracker.rtt.srtt().map(|r| r / 2);
        let known = || self.paths.iter().filter_map(owd);
        let here = owd(&self.paths[i]).unwrap_or_default();
        let fastest = known().min().unwrap_or_default();
        let slowest = known().max().unwrap_or_default();
        let wait = match self.reorder.kind {
            ReorderKind::None => Duration::ZERO,
            ReorderKind::Static => self.reorder.static_wait,
            ReorderKind::Adaptive => slowest - fastest + self.reorder.margin,
        };
        (here, fastest, wait)
    }

    /// The minimum RTT beyond which a path is excluded: the fastest usable path's minimum plus
    /// [`TunnelConfig::max_rtt_spread`]; `None` when exclusion is off or nothing is measured.
    fn exclusion_threshold(&self) -> Option<Duration> {
        let spread = self.max_rtt_spread?;
        let fastest =
            self.paths.iter().filter(|p| p.is_up).filter_map(|p| p.tracker.rtt.min_rtt()).min()?;
        Some(fastest + spread)
    }

    /// Moves packets from the scheduler queue to paths while the scheduler finds room.
    fn schedule(&mut self, now: Instant) {
        // RTT samples arrive only with feedback, so the threshold holds for this whole pass.
        let too_slow = self.exclusion_threshold();
        while let Some(head_len) = self.queue.front_len() {
            self.cc.refresh();
            let wire_len = (head_len + self.header_bytes) as u64;
            let charge = self.counting.charge(wire_len, self.mss_bytes);
            if self.scheduler.waits_without_room() && !self.any_room(too_slow, charge) {
                return;
            }
            self.views.clear();
            for (i, p) in self.paths.iter().enumerate() {
                let excluded = p.is_excluded(too_slow);
                self.views.push(PathView {
                    index: i,
                    cost: p.cost,
                    is_up: p.is_up && !excluded,
                    in_flight_bytes: p.in_flight_bytes(),
                    charge_bytes: charge,
                    srtt: p.tracker.rtt.srtt(),
                    rttvar: p.tracker.rtt.rttvar(),
                    mss_bytes: self.mss_bytes,
                    cc: self.cc.current(i),
                });
            }
            if self.scheduler.duplicates() {
                if !self.views.iter().any(PathView::has_room) {
                    return;
                }
                let q = match self.pop_head(now) {
                    Popped::Packet(q) => q,
                    Popped::Dropped => continue,
                    Popped::Empty => return,
                };
                let global_seq = q.global_seq;
                let mut first = true;
                for v in self.views.iter().filter(|v| v.has_room()) {
                    let path = &mut self.paths[v.index];
                    path.queued_bytes += charge;
                    path.pacing_queue.push_back(Assigned {
                        payload: q.payload.clone(),
                        len: q.len,
                        global_seq,
                        charge,
                        copy: !first,
                        scheduled_at: now,
                    });
                    self.stats.redundant_copies += u64::from(!first);
                    first = false;
                }
            } else {
                let Some(i) = self.scheduler.select(now, &self.views, self.queue.len()) else {
                    return;
                };
                let q = match self.pop_head(now) {
                    Popped::Packet(q) => q,
                    Popped::Dropped => continue,
                    Popped::Empty => return,
                };
                let global_seq = q.global_seq;
                let path = &mut self.paths[i];
                path.queued_bytes += charge;
                path.pacing_queue.push_back(Assigned {
                    payload: q.payload,
                    len: q.len,
                    global_seq,
                    charge,
                    copy: false,
                    scheduled_at: now,
                });
            }
        }
        self.queue.note_empty();
        // The queue is empty: paths with room are limited by the application, not the window
        // (draft-cheng-iccrg-delivery-rate-estimation section 3.4).
        for (i, p) in self.paths.iter_mut().enumerate() {
            let in_flight = p.in_flight_bytes();
            let cwnd = self.cc.cwnd_bytes(i);
            if !p.has_pending(|| cwnd, self.mss_bytes) && in_flight + self.mss_bytes <= cwnd {
                p.tracker.rate.on_app_limited(in_flight);
            }
        }
    }

    /// Whether any path would have room for a packet charged `charge`, as its [`PathView`]
    /// would say ([`PathView::has_room`]), with paths whose minimum RTT is above `too_slow`
    /// excluded; the controllers' metrics must be fresh.
    fn any_room(&self, too_slow: Option<Duration>, charge: u64) -> bool {
        self.paths.iter().enumerate().any(|(i, p)| {
            p.is_up
                && !p.is_excluded(too_slow)
                && p.in_flight_bytes() + charge <= self.cc.current(i).cwnd_bytes
        })
    }

    /// Takes the scheduler queue's head at `now`, counting a CoDel drop.
    fn pop_head(&mut self, now: Instant) -> Popped<P> {
        let popped = self.queue.pop(now);
        if matches!(popped, Popped::Dropped) {
            self.stats.aqm_drops += 1;
        }
        popped
    }

    /// The earliest time the sender needs [`TunnelSender::handle_timeout`] or
    /// [`TunnelSender::poll_transmit`] again.
    #[inline]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut earliest: Option<Instant> = None;
        let mut consider = |t: Instant| earliest = Some(earliest.map_or(t, |e| e.min(t)));
        for (i, p) in self.paths.iter().enumerate() {
            if p.has_pending(|| self.cc.cwnd_bytes(i), self.mss_bytes) {
                consider(p.next_send_time);
            }
            if let Some(t) = p.tracker.timeout() {
                consider(t);
            }
        }
        earliest
    }

    /// Fires due loss and retransmission timers.
    pub fn handle_timeout(&mut self, now: Instant) {
        for i in 0..self.paths.len() {
            let path = &mut self.paths[i];
            if path.tracker.timeout().is_none_or(|t| t > now) {
                continue;
            }
            let (ev, rto, lost) = path.tracker.on_timeout(now);
            path.stats.lost_pkts += lost;
            if let Some(ev) = ev {
                self.cc.on_congestion_event(i, &ev);
            }
            if rto {
                path.stats.rto_count += 1;
                self.cc.on_rto(i, now);
            }
        }
    }

    pub fn path_count(&self) -> usize {
        self.paths.len()
    }

    /// Packets waiting in the scheduler queue.
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// Packets assigned to `path` and waiting for pacing.
    pub fn pacing_queue_len(&self, path: usize) -> usize {
        self.paths[path].pacing_queue.len()
    }

    pub fn path_metrics(&self, path: usize) -> PathMetrics {
        let p = &self.paths[path];
        PathMetrics {
            cc: self.cc.metrics(path),
            in_flight_bytes: p.in_flight_bytes(),
            srtt: p.tracker.rtt.srtt(),
            min_rtt: p.tracker.rtt.min_rtt(),
            pacing_queue_pkts: p.pacing_queue.len(),
        }
    }

    pub fn path_stats(&self, path: usize) -> PathStats {
        self.paths[path].stats
    }

    pub fn stats(&self) -> SenderStats {
        self.stats
    }

    /// The scheduler's internal state (ACPF's cwnd fraction, ...), for traces.
    pub fn scheduler_metrics(&self) -> SchedulerMetrics {
        self.scheduler.metrics()
    }
}
