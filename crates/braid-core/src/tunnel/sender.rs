//! The tunnel sender: scheduler queue, path selection, pacing, per-path loss detection.

use std::collections::VecDeque;
use std::time::Duration;

use super::config::TunnelConfig;
use super::loss::SentTracker;
use crate::cc::{CcMetrics, CcParams, Counting, MultipathController};
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
struct Queued<P> {
    payload: P,
    len: u32,
}

#[derive(Debug)]
struct Assigned<P> {
    payload: P,
    len: u32,
    global_seq: u64,
    charge: u64,
}

#[derive(Debug)]
struct SenderPath<P> {
    cost: u32,
    next_path_seq: u64,
    pacing_queue: VecDeque<Assigned<P>>,
    /// Charged bytes waiting in `pacing_queue`.
    queued_bytes: u64,
    next_send_time: Instant,
    tracker: SentTracker,
    stats: PathStats,
}

impl<P> SenderPath<P> {
    /// What the scheduler counts against the window: on the network plus waiting for pacing.
    fn in_flight_bytes(&self) -> u64 {
        self.tracker.outstanding_bytes + self.queued_bytes
    }
}

/// Sender side of one tunnel direction. See the module documentation.
#[derive(Debug)]
pub struct TunnelSender<P> {
    queue: VecDeque<Queued<P>>,
    queue_cap: usize,
    paths: Vec<SenderPath<P>>,
    cc: Box<dyn MultipathController>,
    scheduler: Box<dyn Scheduler>,
    counting: Counting,
    mss_bytes: u64,
    header_bytes: u32,
    next_global_seq: u64,
    views: Vec<PathView>,
    stats: SenderStats,
}

impl<P> TunnelSender<P> {
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
                tracker: SentTracker::new(config.min_rto, config.packet_threshold, 1024),
                stats: PathStats::default(),
            })
            .collect();
        TunnelSender {
            queue: VecDeque::with_capacity(config.sched_queue_pkts),
            queue_cap: config.sched_queue_pkts,
            paths,
            cc: config.cc.build(params, n),
            scheduler: config.scheduler.build(&config.sched, config.reorder.buffer_pkts),
            counting: config.cc.counting(),
            mss_bytes: config.mss_bytes,
            header_bytes: config.header_bytes,
            next_global_seq: 0,
            views: Vec::with_capacity(n),
            stats: SenderStats::default(),
        }
    }

    /// Offers an inner packet of `len` bytes. Returns it back when the scheduler queue is full
    /// (drop-tail; counted in [`SenderStats::sched_drops`]).
    pub fn handle_packet(&mut self, _now: Instant, payload: P, len: u32) -> Result<(), P> {
        if self.queue.len() >= self.queue_cap {
            self.stats.sched_drops += 1;
            return Err(payload);
        }
        self.stats.enqueued_pkts += 1;
        self.queue.push_back(Queued { payload, len });
        Ok(())
    }

    /// Applies the receiver's feedback for one path. Frames naming an unknown path are ignored.
    pub fn handle_feedback(&mut self, now: Instant, fb: &Feedback) {
        let i = fb.path_id as usize;
        let Some(path) = self.paths.get_mut(i) else { return };
        let out = path.tracker.on_feedback(now, fb);
        path.stats.lost_pkts += out.newly_lost_pkts;
        if let Some(ev) = out.congestion {
            self.cc.on_congestion_event(i, &ev);
        }
        if let Some(ack) = out.ack {
            self.cc.on_ack(i, &ack);
        }
    }

    /// The next packet to put on the wire at `now`, if any. Call until `None`.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit<P>> {
        self.schedule(now);
        let (i, _) = self
            .paths
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.pacing_queue.is_empty() && p.next_send_time <= now)
            .min_by_key(|(i, p)| (p.next_send_time, *i))?;
        let a = self.paths[i].pacing_queue.pop_front()?;
        let path = &mut self.paths[i];
        path.queued_bytes -= a.charge;
        let path_seq = path.next_path_seq;
        path.next_path_seq += 1;
        path.tracker.on_sent(now, path_seq, a.charge);
        // The controller sees what is on the network, as a kernel socket's does; packets
        // waiting for their pacing slot count only towards the scheduler's view of the window.
        self.cc.on_sent(i, now, a.charge, path.tracker.outstanding_bytes);
        if let Some(rate) = self.cc.pacing_rate_bytes_per_s(i).filter(|&r| r > 0) {
            path.next_send_time = path.next_send_time.max(now) + transmission_time(a.charge, rate);
        } else {
            path.next_send_time = now;
        }
        let wire_len = a.len + self.header_bytes;
        path.stats.sent_pkts += 1;
        path.stats.sent_bytes += wire_len as u64;
        let header = DataHeader {
            flags: 0,
            path_id: i as u8,
            payload_len: a.len.min(u16::MAX as u32) as u16,
            global_seq: a.global_seq,
            path_seq,
            send_ts_ns: now.as_nanos(),
        };
        Some(Transmit { path: i, header, payload: a.payload, wire_len })
    }

    /// Moves packets from the scheduler queue to paths while the scheduler finds room.
    fn schedule(&mut self, now: Instant) {
        while let Some(head) = self.queue.front() {
            let wire_len = (head.len + self.header_bytes) as u64;
            let charge = self.counting.charge(wire_len, self.mss_bytes);
            self.views.clear();
            for (i, p) in self.paths.iter().enumerate() {
                self.views.push(PathView {
                    index: i,
                    cost: p.cost,
                    is_up: true,
                    in_flight_bytes: p.in_flight_bytes(),
                    charge_bytes: charge,
                    srtt: p.tracker.rtt.srtt(),
                    rttvar: p.tracker.rtt.rttvar(),
                    mss_bytes: self.mss_bytes,
                    cc: self.cc.metrics(i),
                });
            }
            let Some(i) = self.scheduler.select(now, &self.views, self.queue.len()) else { return };
            let Some(q) = self.queue.pop_front() else { return };
            let path = &mut self.paths[i];
            path.queued_bytes += charge;
            path.pacing_queue.push_back(Assigned {
                payload: q.payload,
                len: q.len,
                global_seq: self.next_global_seq,
                charge,
            });
            self.next_global_seq += 1;
        }
        // The queue is empty: paths with room are limited by the application, not the window
        // (draft-cheng-iccrg-delivery-rate-estimation section 3.4).
        for (i, p) in self.paths.iter_mut().enumerate() {
            let in_flight = p.in_flight_bytes();
            if p.pacing_queue.is_empty() && in_flight + self.mss_bytes <= self.cc.cwnd_bytes(i) {
                p.tracker.rate.on_app_limited(in_flight);
            }
        }
    }

    /// The earliest time the sender needs [`TunnelSender::handle_timeout`] or
    /// [`TunnelSender::poll_transmit`] again.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.paths
            .iter()
            .flat_map(|p| {
                let pacing = (!p.pacing_queue.is_empty()).then_some(p.next_send_time);
                [pacing, p.tracker.timeout()]
            })
            .flatten()
            .min()
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
