//! The tunnel sender for paths whose transport does its own congestion control, pacing and
//! reliability: one kernel TCP connection per path, as in the user-space framework of
//! Pieska et al. 2024 ("multiple TCP tunnels (e.g., using TCP BBR)", section 2.2), where the
//! MP-DCCP scheduler and reorder modules run over single-path sockets.
//!
//! What is left to the tunnel is scheduling: the scheduler queue (drop-tail, as
//! [`super::TunnelSender`]'s), the configured scheduler, the global sequence number and the
//! data header of each packet. The scheduler sees each path through the window the transport
//! reports ([`StreamPathState`], from Linux `TCP_INFO` in the daemon): a path has room while its
//! bytes in flight plus the packet fit under its cwnd (Pieska et al. 2024, section 2.3).
//!
//! The transport's state is only as fresh as the caller's last [`StreamSender::update_path`].
//! Between updates every packet handed out adds its wire length to the path's in-flight bytes,
//! so one burst cannot overfill a window the sender has not seen move; the next update
//! replaces that estimate with the transport's own count. When no path has room, packets stay
//! queued: the caller asks again after its next update (the sender has no timers, since only
//! the transport knows when its window opens).
//!
//! Choices where the paper is silent: the path sequence number counts the frames handed to one
//! path (the receiver needs no more: the transport delivers them in order); the header
//! timestamp is the time the frame is handed out, which is when it enters the transport; a
//! redundant scheduler copies a packet to every path with room at that moment, as
//! [`super::TunnelSender`] does.

use std::collections::VecDeque;
use std::time::Duration;

use super::config::TunnelConfig;
use super::sched_queue::{Popped, SchedQueue};

/// What one scheduling decision did.
enum Step<T> {
    Sent(T),
    /// CoDel dropped the head of the scheduler queue.
    Dropped,
    /// No packet, or no path with room.
    Nothing,
}
use super::sender::{PathMetrics, PathStats, SenderStats, Transmit};
use crate::cc::{CcMetrics, CcPhase};
use crate::sched::{PathView, Scheduler, SchedulerMetrics};
use crate::time::Instant;
use crate::wire::DataHeader;

/// What the transport reports about one path (the daemon reads it from `TCP_INFO`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamPathState {
    /// Congestion window in bytes (Linux: `tcpi_snd_cwnd * tcpi_snd_mss`).
    pub cwnd_bytes: u64,
    /// Bytes the transport holds: on the network and written but not yet sent.
    pub in_flight_bytes: u64,
    pub srtt: Option<Duration>,
    pub rttvar: Duration,
    pub min_rtt: Option<Duration>,
    /// The transport's segment size: the unit in which BLEST and ECF count windows.
    pub mss_bytes: u64,
    pub pacing_rate_bytes_per_s: Option<u64>,
    /// The transport's latest delivery rate sample.
    pub delivery_rate_bytes_per_s: Option<u64>,
    /// The transport controller's state, for metrics.
    pub phase: CcPhase,
    /// Whether the transport can take data (a TCP connection is established).
    pub is_up: bool,
}

impl Default for StreamPathState {
    /// A path whose transport is not up yet.
    fn default() -> Self {
        StreamPathState {
            cwnd_bytes: 0,
            in_flight_bytes: 0,
            srtt: None,
            rttvar: Duration::ZERO,
            min_rtt: None,
            mss_bytes: 0,
            pacing_rate_bytes_per_s: None,
            delivery_rate_bytes_per_s: None,
            phase: CcPhase::SlowStart,
            is_up: false,
        }
    }
}

#[derive(Debug)]
struct StreamPath {
    cost: u32,
    state: StreamPathState,
    /// Wire bytes handed out since the last update.
    sent_since_update: u64,
    /// Liveness as the caller sees it ([`StreamSender::set_path_up`]).
    live: bool,
    next_path_seq: u64,
    stats: PathStats,
}

impl StreamPath {
    fn in_flight_bytes(&self) -> u64 {
        self.state.in_flight_bytes + self.sent_since_update
    }

    fn is_up(&self) -> bool {
        self.live && self.state.is_up
    }
}

/// Sender side of one tunnel direction over self-controlled transports. See the module
/// documentation.
#[derive(Debug)]
pub struct StreamSender<P> {
    queue: SchedQueue<P>,
    paths: Vec<StreamPath>,
    scheduler: Box<dyn Scheduler>,
    header_bytes: u32,
    /// The window unit for schedulers before a path's transport has reported its own.
    default_mss_bytes: u64,
    views: Vec<PathView>,
    /// Further copies of the last packet a redundant scheduler duplicated.
    copies: VecDeque<Transmit<P>>,
    stats: SenderStats,
}

impl<P: Clone> StreamSender<P> {
    /// A sender for a validated configuration: its paths (`path_costs`), scheduler, scheduler
    /// queue capacity and `header_bytes`, the bytes each packet adds on the transport. Its
    /// congestion control, reliability and pacing settings are the transport's business and
    /// not read.
    pub fn new(config: &TunnelConfig) -> Self {
        let n = config.path_costs.len();
        let paths = config
            .path_costs
            .iter()
            .map(|&cost| StreamPath {
                cost,
                state: StreamPathState::default(),
                sent_since_update: 0,
                live: true,
                next_path_seq: 0,
                stats: PathStats::default(),
            })
            .collect();
        StreamSender {
            queue: SchedQueue::new(config.sched_queue_pkts, config.sched_codel),
            paths,
            scheduler: config.scheduler.build(&config.sched, config.reorder.buffer_pkts),
            header_bytes: config.header_bytes,
            default_mss_bytes: config.mss_bytes,
            views: Vec::with_capacity(n),
            copies: VecDeque::with_capacity(n),
            stats: SenderStats::default(),
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

    /// The transport's latest state of path `i`; forgets the bytes handed out since the last
    /// update (the transport's in-flight count includes them). Indices out of range are
    /// ignored.
    pub fn update_path(&mut self, i: usize, state: StreamPathState) {
        if let Some(p) = self.paths.get_mut(i) {
            p.state = state;
            p.sent_since_update = 0;
        }
    }

    /// Marks path `i` usable or not (the data plane's liveness check). A path is scheduled
    /// only while it is both live and its transport is up. Indices out of range are ignored.
    pub fn set_path_up(&mut self, i: usize, up: bool) {
        if let Some(p) = self.paths.get_mut(i) {
            p.live = up;
        }
    }

    /// Whether path `i` is live and its transport up.
    pub fn is_path_up(&self, i: usize) -> bool {
        self.paths.get(i).is_some_and(StreamPath::is_up)
    }

    /// The next packet to hand to a path's transport at `now`, while the scheduler finds a path
    /// with room. Call until `None`.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit<P>> {
        if let Some(t) = self.copies.pop_front() {
            return Some(t);
        }
        loop {
            match self.schedule_one(now) {
                Step::Sent(t) => return Some(t),
                Step::Dropped => self.stats.aqm_drops += 1,
                Step::Nothing => return None,
            }
        }
    }

    /// One scheduling decision: the head packet to a path with room (`Empty` when there is no
    /// packet or no room), or the head dropped by CoDel.
    fn schedule_one(&mut self, now: Instant) -> Step<Transmit<P>> {
        let Some(front_len) = self.queue.front_len() else {
            self.queue.note_empty();
            return Step::Nothing;
        };
        let wire_len = front_len + self.header_bytes;
        self.views.clear();
        for (i, p) in self.paths.iter().enumerate() {
            self.views.push(PathView {
                index: i,
                cost: p.cost,
                is_up: p.is_up(),
                in_flight_bytes: p.in_flight_bytes(),
                charge_bytes: u64::from(wire_len),
                srtt: p.state.srtt,
                rttvar: p.state.rttvar,
                mss_bytes: if p.state.mss_bytes > 0 {
                    p.state.mss_bytes
                } else {
                    self.default_mss_bytes
                },
                cc: metrics_of(&p.state),
            });
        }
        let chosen = if self.scheduler.duplicates() {
            self.views.iter().position(PathView::has_room)
        } else {
            self.scheduler.select(now, &self.views, self.queue.len())
        };
        let Some(first) = chosen else { return Step::Nothing };
        let q = match self.queue.pop(now) {
            Popped::Packet(q) => q,
            Popped::Dropped => return Step::Dropped,
            Popped::Empty => return Step::Nothing,
        };
        if !self.scheduler.duplicates() {
            return Step::Sent(self.depart(now, first, q.payload, q.len, q.global_seq, false));
        }
        for k in first + 1..self.views.len() {
            if self.views[k].has_room() {
                let copy = self.depart(now, k, q.payload.clone(), q.len, q.global_seq, true);
                self.copies.push_back(copy);
                self.stats.redundant_copies += 1;
            }
        }
        Step::Sent(self.depart(now, first, q.payload, q.len, q.global_seq, false))
    }

    /// Builds path `i`'s frame header and charges the path.
    fn depart(
        &mut self,
        now: Instant,
        i: usize,
        payload: P,
        len: u32,
        global_seq: u64,
        copy: bool,
    ) -> Transmit<P> {
        let path = &mut self.paths[i];
        let path_seq = path.next_path_seq;
        path.next_path_seq += 1;
        let wire_len = len + self.header_bytes;
        path.sent_since_update += u64::from(wire_len);
        path.stats.sent_pkts += 1;
        path.stats.sent_bytes += u64::from(wire_len);
        let header = DataHeader::for_packet(i, len, global_seq, path_seq, now);
        // A kernel TCP path frames whole data headers into its stream: never compact.
        Transmit {
            path: i,
            header,
            payload,
            wire_len,
            copy,
            attempt: 0,
            compact: false,
            time_sync: false,
        }
    }

    pub fn path_count(&self) -> usize {
        self.paths.len()
    }

    /// Packets waiting in the scheduler queue.
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// Path `i` as its transport last reported it, with the bytes handed out since counted in
    /// flight.
    pub fn path_metrics(&self, i: usize) -> PathMetrics {
        let p = &self.paths[i];
        PathMetrics {
            cc: metrics_of(&p.state),
            in_flight_bytes: p.in_flight_bytes(),
            srtt: p.state.srtt,
            min_rtt: p.state.min_rtt,
            pacing_queue_pkts: 0,
        }
    }

    /// Packets and bytes handed to path `i` (losses and timeouts are the transport's, and not
    /// counted here).
    pub fn path_stats(&self, i: usize) -> PathStats {
        self.paths[i].stats
    }

    pub fn stats(&self) -> SenderStats {
        self.stats
    }

    /// The scheduler's internal state (ACPF's cwnd fraction, ...), for traces.
    pub fn scheduler_metrics(&self) -> SchedulerMetrics {
        self.scheduler.metrics()
    }
}

fn metrics_of(s: &StreamPathState) -> CcMetrics {
    CcMetrics {
        cwnd_bytes: s.cwnd_bytes,
        ssthresh_bytes: None,
        pacing_rate_bytes_per_s: s.pacing_rate_bytes_per_s,
        bw_estimate_bytes_per_s: s.delivery_rate_bytes_per_s,
        min_rtt: s.min_rtt,
        phase: s.phase,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::SchedulerKind;

    /// 66 header bytes (length prefix, envelope, data header): a 934-byte inner packet is a
    /// 1000-byte frame, so windows below count in frames of 1000 bytes.
    const HEADER: u32 = 66;
    const INNER: u32 = 1000 - HEADER;

    fn sender(scheduler: SchedulerKind, queue: usize) -> StreamSender<u32> {
        let config = TunnelConfig {
            scheduler,
            path_costs: vec![1, 2],
            sched_queue_pkts: queue,
            header_bytes: HEADER,
            ..TunnelConfig::default()
        };
        StreamSender::new(&config)
    }

    fn open(cwnd_frames: u64, in_flight_frames: u64) -> StreamPathState {
        StreamPathState {
            cwnd_bytes: cwnd_frames * 1000,
            in_flight_bytes: in_flight_frames * 1000,
            srtt: Some(Duration::from_millis(20)),
            mss_bytes: 1448,
            is_up: true,
            ..StreamPathState::default()
        }
    }

    fn offer(s: &mut StreamSender<u32>, n: u32) {
        for k in 0..n {
            s.handle_packet(Instant::ZERO, k, INNER).unwrap();
        }
    }

    fn drain(s: &mut StreamSender<u32>) -> Vec<Transmit<u32>> {
        std::iter::from_fn(|| s.poll_transmit(Instant::ZERO)).collect()
    }

    #[test]
    fn cpf_fills_the_cheap_path_up_to_its_cwnd_then_spills() {
        let mut s = sender(SchedulerKind::Cpf, 100);
        s.update_path(0, open(10, 0));
        s.update_path(1, open(10, 0));
        offer(&mut s, 15);
        let paths: Vec<usize> = drain(&mut s).iter().map(|t| t.path).collect();
        // Path 0 takes 10 frames of 1000 bytes (10 000 = its cwnd), the other 5 spill to 1.
        assert_eq!(paths, [vec![0; 10], vec![1; 5]].concat());
        assert_eq!(s.path_metrics(0).in_flight_bytes, 10_000);
        assert_eq!(s.path_stats(1).sent_bytes, 5_000);
    }

    #[test]
    fn a_packet_waits_without_room_and_leaves_once_an_update_opens_it() {
        let mut s = sender(SchedulerKind::Cpf, 100);
        // Path 0: 2 frames of window, 1 in flight; path 1: full.
        s.update_path(0, open(2, 1));
        s.update_path(1, open(3, 3));
        offer(&mut s, 3);
        assert_eq!(drain(&mut s).len(), 1, "one frame fits under path 0's window");
        assert_eq!(s.queue_len(), 2);
        assert!(s.poll_transmit(Instant::ZERO).is_none(), "still no room");
        // The transport acknowledged everything on path 0: in flight 0 of 2 frames.
        s.update_path(0, open(2, 0));
        let out = drain(&mut s);
        assert_eq!(out.iter().map(|t| t.path).collect::<Vec<_>>(), vec![0, 0]);
        assert_eq!(s.queue_len(), 0);
    }

    #[test]
    fn global_sequence_numbers_are_contiguous_and_path_sequence_counts_per_path() {
        let mut s = sender(SchedulerKind::RoundRobin, 100);
        s.update_path(0, open(100, 0));
        s.update_path(1, open(100, 0));
        offer(&mut s, 20);
        let out = drain(&mut s);
        let global: Vec<u64> = out.iter().map(|t| t.header.global_seq).collect();
        assert_eq!(global, (0..20).collect::<Vec<_>>());
        for path in 0..2 {
            let seqs: Vec<u64> =
                out.iter().filter(|t| t.path == path).map(|t| t.header.path_seq).collect();
            assert_eq!(seqs, (0..10).collect::<Vec<_>>(), "path {path}");
        }
        assert!(out.iter().all(|t| t.wire_len == 1000 && u32::from(t.header.payload_len) == INNER));
    }

    #[test]
    fn a_down_path_gets_nothing() {
        let mut s = sender(SchedulerKind::Cpf, 100);
        s.update_path(0, open(10, 0));
        s.update_path(1, open(10, 0));
        s.set_path_up(0, false);
        offer(&mut s, 4);
        assert!(drain(&mut s).iter().all(|t| t.path == 1), "liveness took path 0 down");
        // The transport going down (a closed connection) has the same effect.
        s.set_path_up(0, true);
        s.update_path(0, StreamPathState { is_up: false, ..open(10, 0) });
        offer(&mut s, 4);
        assert!(drain(&mut s).iter().all(|t| t.path == 1), "path 0's connection is closed");
        assert!(!s.is_path_up(0) && s.is_path_up(1));
    }

    #[test]
    fn the_scheduler_queue_is_drop_tail() {
        let mut s = sender(SchedulerKind::Cpf, 2);
        offer(&mut s, 2);
        assert_eq!(s.handle_packet(Instant::ZERO, 99, INNER), Err(99));
        assert_eq!(s.stats().sched_drops, 1);
        assert_eq!(s.stats().enqueued_pkts, 2);
    }

    #[test]
    fn redundant_copies_each_packet_to_every_path_with_room() {
        let mut s = sender(SchedulerKind::Redundant, 100);
        s.update_path(0, open(2, 0));
        s.update_path(1, open(1, 0));
        offer(&mut s, 2);
        let out: Vec<(usize, u64, bool)> =
            drain(&mut s).iter().map(|t| (t.path, t.header.global_seq, t.copy)).collect();
        // Packet 0 fits on both paths; packet 1 only on path 0, whose window holds two.
        assert_eq!(out, vec![(0, 0, false), (1, 0, true), (0, 1, false)]);
        assert_eq!(s.stats().redundant_copies, 1);
    }

    #[test]
    fn metrics_show_the_transport_state() {
        let mut s = sender(SchedulerKind::Cpf, 100);
        let state = StreamPathState {
            pacing_rate_bytes_per_s: Some(6_250_000),
            min_rtt: Some(Duration::from_millis(18)),
            phase: CcPhase::Recovery,
            ..open(10, 4)
        };
        s.update_path(0, state);
        offer(&mut s, 1);
        drain(&mut s);
        let m = s.path_metrics(0);
        assert_eq!(m.cc.cwnd_bytes, 10_000);
        assert_eq!(m.in_flight_bytes, 5_000, "4 frames reported plus 1 handed out since");
        assert_eq!(m.cc.pacing_rate_bytes_per_s, Some(6_250_000));
        assert_eq!(m.min_rtt, Some(Duration::from_millis(18)));
        assert_eq!(m.cc.phase, CcPhase::Recovery);
    }
}
