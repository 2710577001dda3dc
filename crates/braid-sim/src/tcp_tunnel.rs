//! Kernel TCP tunnel paths (`tunnel.transport = "tcp"`): each path is one TCP connection per
//! direction, as `braid tunnel` runs them over real sockets (braid-net's `tcp_path`) and as the
//! user-space framework of Pieska et al. 2024 runs its MP-DCCP scheduler over "multiple TCP
//! tunnels (e.g., using TCP BBR)" (section 2.2).
//!
//! The tunnel keeps its scheduler (braid-core's [`StreamSender`], the daemon's own) and its
//! receiver's reordering across paths; each path's connection is the simulator's Linux-like
//! TCP ([`crate::tcp`]) in stream mode, running the kernel's controller for `tunnel.cc`, with
//! its own segments and ACKs on the path's links. A frame (inner packet plus
//! `tunnel.tcp.frame_bytes`) written into a connection leaves in MSS-sized segments cut from the
//! byte stream and reaches the receiving end only when every byte up to its last has arrived
//! in order: a lost segment holds back everything behind it on that path (head-of-line
//! blocking), and the tunnel receiver sees only whole frames, in path order.
//!
//! When a frame is written ([`TcpWriter`]):
//! - `cwnd` (the daemon's): while the connection's bytes in flight plus its unsent bytes stay
//!   under its congestion window, as the daemon reads them from `TCP_INFO`. Packets wait in the
//!   tunnel's scheduler queue.
//! - `sndbuf` (OpenVPN's and most user-space tunnels'): while the socket is writable. Linux
//!   sizes the send buffer at twice the window in skb memory (`tcp_sndbuf_expand`,
//!   net/ipv4/tcp_input.c: `2 * max(10, cwnd, reordering + 1) * per_mss`, never shrinking,
//!   capped at `tcp_wmem[2]`), a writer may write while the queued memory is below it, and a
//!   blocked writer is woken when a third is free again (`sk_stream_is_writeable`,
//!   include/net/sock.h). Everything written beyond the window waits unsent in the kernel.
//!
//! Left out: TCP Small Queues (they limit the bytes a socket has below TCP in its own host's
//! qdisc and device, which matters when the bottleneck is the sender's own interface; here, as
//! in `braid lab`, the bottleneck is a hop away and the sender's own link is unlimited), the
//! connection's handshake (connections start established), and ACKs riding on the reverse
//! direction's data (each direction's ACKs are their own packets).

use std::collections::VecDeque;

use braid_config::TcpWriter;
use braid_core::cc::Controller;
use braid_core::sched::SchedulerMetrics;
use braid_core::tunnel::{
    PathMetrics, PathStats, SenderStats, StreamPathState, StreamSender, TunnelConfig,
};
use braid_core::Instant;

use crate::packet::{PacketPool, PktId};
use crate::tcp::{Ack, LinuxCc, Segment, TcpConfig, TcpReceiver, TcpSender};

/// Linux's send-buffer memory per segment (`tcp_sndbuf_expand`): for a 1448-byte MSS on
/// x86-64, `roundup_pow_of_two(1448 + MAX_TCP_HEADER 320 + skb_shared_info 320)` = 4096 plus
/// the 256-byte `sk_buff`.
pub const PER_MSS_TRUESIZE_BYTES: u64 = 4352;
/// Send-buffer memory per byte of queued payload: the socket's `sk_wmem_queued` over its
/// unacknowledged-plus-unsent bytes, 1.02-1.03 measured on Linux 6.18 for a writer of 1534-byte
/// frames over a veth without offloads (`ss -tm`: `w` over Send-Q; docs/validation.md).
pub const QUEUED_MEMORY_PER_BYTE: f64 = 1.03;
/// The send buffer a connection starts with (`tcp_wmem[1]`, Linux's default 16 KiB).
pub const WMEM_DEFAULT_BYTES: u64 = 16 * 1024;

/// The paths' TCP: segment size, timers and ACK policy (the scenario's `e2e` TCP settings), the
/// kernel controller each connection runs (`tunnel.cc`, built as the end-to-end one is), and
/// how the tunnel writes.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpPathsConfig {
    pub tcp: TcpConfig,
    pub cc: LinuxCc,
    pub writer: TcpWriter,
    pub wmem_max_bytes: u64,
}

/// One direction's sending end: the tunnel's scheduler and each path's TCP sender.
#[derive(Debug)]
pub struct StreamTx {
    sched: StreamSender<PktId>,
    conns: Vec<TcpSender>,
    writer: TcpWriter,
    wmem_max_bytes: u64,
    /// Largest frame the tunnel writes: one inner MSS plus the framing.
    max_frame_bytes: u64,
    /// Per path: the send buffer (skb memory), and whether a `sndbuf` writer waits for space.
    sndbuf: Vec<u64>,
    blocked: Vec<bool>,
}

/// A frame written into path `path`'s stream: the world hands it to the receiving end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    pub path: usize,
    pub id: PktId,
    /// Stream offset just past the frame's last byte.
    pub end: u64,
}

impl StreamTx {
    /// A sender for `config` (the core's, adapted to streams) whose path `i` runs `ccs[i]`.
    pub fn new(
        config: &TunnelConfig,
        paths: &TcpPathsConfig,
        ccs: Vec<Box<dyn Controller>>,
    ) -> Self {
        let n = ccs.len();
        StreamTx {
            sched: StreamSender::new(config),
            conns: ccs
                .into_iter()
                .map(|cc| TcpSender::stream(paths.tcp, cc).with_prr(paths.cc.reduces_with_prr()))
                .collect(),
            writer: paths.writer,
            wmem_max_bytes: paths.wmem_max_bytes,
            max_frame_bytes: config.mss_bytes,
            sndbuf: vec![WMEM_DEFAULT_BYTES; n],
            blocked: vec![false; n],
        }
    }

    /// Offers the packet in slot `id`; a packet the full scheduler queue refuses is returned.
    pub fn handle_packet(&mut self, now: Instant, pool: &PacketPool, id: PktId) -> Option<PktId> {
        self.sched.handle_packet(now, id, pool.get(id).inner_len).err()
    }

    /// A packet CoDel dropped from the scheduler queue. Call until `None`.
    pub fn poll_dropped(&mut self) -> Option<PktId> {
        self.sched.poll_dropped()
    }

    /// Refreshes what the scheduler sees of each connection (the daemon's `TCP_INFO` read).
    pub fn update_paths(&mut self) {
        for i in 0..self.conns.len() {
            let state = self.path_state(i);
            self.sched.update_path(i, state);
        }
    }

    fn path_state(&mut self, i: usize) -> StreamPathState {
        let c = &self.conns[i];
        let m = c.metrics();
        let mss = u64::from(c.config().mss_bytes);
        let (cwnd_bytes, in_flight_bytes) = match self.writer {
            TcpWriter::Cwnd => (m.cwnd_bytes, m.in_flight_bytes + c.notsent_bytes()),
            TcpWriter::Sndbuf => {
                let segments = (m.cwnd_bytes / mss).max(10);
                let wanted = 2 * segments * PER_MSS_TRUESIZE_BYTES;
                self.sndbuf[i] = self.sndbuf[i].max(wanted.min(self.wmem_max_bytes));
                let capacity = (self.sndbuf[i] as f64 / QUEUED_MEMORY_PER_BYTE) as u64;
                let unacked = c.unacked_bytes();
                if self.blocked[i] {
                    self.blocked[i] = 3 * unacked > 2 * capacity;
                } else {
                    self.blocked[i] = unacked + self.max_frame_bytes > capacity;
                }
                (capacity, if self.blocked[i] { capacity } else { unacked })
            }
        };
        StreamPathState {
            cwnd_bytes,
            in_flight_bytes,
            srtt: m.srtt,
            rttvar: c.rttvar(),
            min_rtt: m.min_rtt,
            mss_bytes: mss,
            pacing_rate_bytes_per_s: m.pacing_rate_bytes_per_s,
            delivery_rate_bytes_per_s: m.cc.bw_estimate_bytes_per_s,
            phase: m.cc.phase,
            is_up: true,
        }
    }

    /// The next frame the scheduler writes at `now` (stamping the packet's tunnel header), or
    /// `None` when the queue is empty or no path takes more. Call [`StreamTx::update_paths`]
    /// first.
    pub fn poll_write(&mut self, now: Instant, pool: &mut PacketPool) -> Option<Written> {
        let tx = self.sched.poll_transmit(now)?;
        pool.get_mut(tx.payload).tunnel = Some(tx.header);
        let conn = &mut self.conns[tx.path];
        conn.write(u64::from(tx.wire_len));
        Some(Written { path: tx.path, id: tx.payload, end: conn.written_bytes() })
    }

    /// The next segment path `path`'s connection sends at `now`.
    pub fn poll_segment(&mut self, now: Instant, path: usize) -> Option<Segment> {
        self.conns[path].poll_transmit(now)
    }

    pub fn handle_ack(&mut self, now: Instant, path: usize, ack: &Ack) {
        self.conns[path].handle_ack(now, ack);
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        self.conns.iter().filter_map(TcpSender::poll_timeout).min()
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        for c in &mut self.conns {
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
        }
    }

    pub fn path_count(&self) -> usize {
        self.conns.len()
    }

    pub fn queue_len(&self) -> usize {
        self.sched.queue_len()
    }

    /// Path `i` as its connection sees itself: the kernel's cwnd, pipe, srtt and controller.
    pub fn path_metrics(&self, i: usize) -> PathMetrics {
        let m = self.conns[i].metrics();
        PathMetrics {
            cc: m.cc,
            in_flight_bytes: m.in_flight_bytes,
            srtt: m.srtt,
            min_rtt: m.min_rtt,
            pacing_queue_pkts: 0,
        }
    }

    /// Frames and bytes written to path `i`, with the segments its connection declared lost
    /// and its retransmission timeouts.
    pub fn path_stats(&self, i: usize) -> PathStats {
        let m = self.conns[i].metrics();
        PathStats { lost_pkts: m.lost_segments, rto_count: m.rto_count, ..self.sched.path_stats(i) }
    }

    /// Bytes written to path `i` and not yet acknowledged (`ss`'s Send-Q).
    pub fn send_queue_bytes(&self, i: usize) -> u64 {
        self.conns[i].unacked_bytes()
    }

    /// The scheduler's counters. The tunnel itself never copies a packet: the connections
    /// resend segments, which carry bytes of frames, not packets.
    pub fn stats(&self) -> SenderStats {
        self.sched.stats()
    }

    pub fn scheduler_metrics(&self) -> SchedulerMetrics {
        self.sched.scheduler_metrics()
    }
}

/// One direction's receiving end: each path's TCP receiver and the frames its stream carries.
#[derive(Debug)]
pub struct StreamRx {
    conns: Vec<TcpReceiver>,
    /// Per path, frames written and not yet whole at this end: (end offset, packet).
    frames: Vec<VecDeque<(u64, PktId)>>,
    /// Frames complete and in order, for the tunnel receiver.
    ready: VecDeque<(usize, PktId)>,
}

impl StreamRx {
    pub fn new(tcp: TcpConfig, paths: usize) -> Self {
        StreamRx {
            conns: (0..paths).map(|_| TcpReceiver::stream(tcp)).collect(),
            frames: vec![VecDeque::new(); paths],
            ready: VecDeque::new(),
        }
    }

    /// The sending end wrote frame `w`: its bytes are on their way in the stream.
    pub fn expect(&mut self, w: Written) {
        self.frames[w.path].push_back((w.end, w.id));
    }

    /// A segment of path `path`'s stream arrived; frames it completes in order become ready.
    pub fn handle_segment(&mut self, now: Instant, path: usize, seg: &Segment) {
        let conn = &mut self.conns[path];
        conn.handle_segment(now, seg);
        let delivered = conn.bytes_delivered();
        let frames = &mut self.frames[path];
        while let Some(&(_, id)) = frames.front().filter(|(end, _)| *end <= delivered) {
            frames.pop_front();
            self.ready.push_back((path, id));
        }
    }

    /// The next whole frame, with its path.
    pub fn poll_frame(&mut self) -> Option<(usize, PktId)> {
        self.ready.pop_front()
    }

    /// The ACK path `path`'s receiver sends now, if one is due.
    pub fn poll_ack(&mut self, now: Instant, path: usize) -> Option<Ack> {
        self.conns[path].poll_ack(now)
    }

    pub fn path_count(&self) -> usize {
        self.conns.len()
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        self.conns.iter().filter_map(TcpReceiver::poll_timeout).min()
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        for c in &mut self.conns {
            c.handle_timeout(now);
        }
    }

    /// Frames written into a stream and not yet whole at this end.
    pub fn held_len(&self) -> usize {
        self.frames.iter().map(VecDeque::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Packet, Payload};
    use braid_core::cc::cubic::CubicUndo;
    use braid_core::cc::CcAlgorithm;

    fn paths(writer: TcpWriter) -> TcpPathsConfig {
        TcpPathsConfig {
            tcp: TcpConfig::default(),
            cc: LinuxCc {
                cc: CcAlgorithm::NewReno,
                hystart: false,
                cubic_undo: CubicUndo::default(),
                bbr2: Default::default(),
                prr: false,
            },
            writer,
            wmem_max_bytes: braid_config::transport::LINUX_WMEM_MAX_BYTES,
        }
    }

    /// 200 packets of 1000 bytes queued at a one-path sender, then one write round.
    fn written_after_one_round(writer: TcpWriter) -> (u64, u64) {
        let t = braid_config::TunnelConfig {
            transport: braid_config::Transport::Tcp,
            reliability: braid_core::tunnel::Reliability::Reliable,
            cc: braid_core::cc::TunnelCc::NewReno,
            ..Default::default()
        };
        let core = t.to_core(&[1], 1500);
        let p = paths(writer);
        let cc = p.cc.build(p.tcp.cc_params(), None);
        let mut tx = StreamTx::new(&core, &p, vec![cc]);
        let mut pool = PacketPool::with_capacity(256);
        for _ in 0..200 {
            let id = pool.alloc(Packet::new(Payload::Udp, 1000, true));
            assert!(tx.handle_packet(Instant::ZERO, &pool, id).is_none());
        }
        tx.update_paths();
        let mut frames = 0;
        while let Some(w) = tx.poll_write(Instant::ZERO, &mut pool) {
            frames += 1;
            assert_eq!(w.end, frames * 1034, "each frame adds the 34 bytes of framing");
        }
        (tx.send_queue_bytes(0), tx.conns[0].metrics().cwnd_bytes)
    }

    #[test]
    fn the_cwnd_writer_fills_the_window_and_the_sndbuf_writer_the_send_buffer() {
        // Initial window 10 x 1448 = 14 480 bytes: 14 frames of 1034 bytes fit.
        let (cwnd_q, cwnd) = written_after_one_round(TcpWriter::Cwnd);
        assert_eq!(cwnd, 14_480);
        assert_eq!(cwnd_q, 14 * 1034);
        // The send buffer starts at 2 x max(10, cwnd) x 4352 = 87 040 bytes of skb memory,
        // 84 504 bytes of payload at 1.03: 81 frames fit.
        let (buf_q, _) = written_after_one_round(TcpWriter::Sndbuf);
        assert_eq!(buf_q, 81 * 1034);
    }

    #[test]
    fn a_frame_is_whole_only_when_every_byte_up_to_its_end_arrived_in_order() {
        let tcp = TcpConfig { delayed_ack: false, ..TcpConfig::default() };
        let mut rx = StreamRx::new(tcp, 1);
        let mut pool = PacketPool::with_capacity(4);
        let ids: Vec<PktId> =
            (0..3).map(|_| pool.alloc(Packet::new(Payload::Udp, 966, true))).collect();
        for (k, &id) in ids.iter().enumerate() {
            rx.expect(Written { path: 0, id, end: 1000 * (k as u64 + 1) });
        }
        let seg = |seq, len_bytes| Segment {
            seq,
            len_bytes,
            retransmission: false,
            ts_val: Instant::ZERO,
        };
        // Segment 0 (bytes 0..1448) completes frame 1; segment 2 (2896..3000) arrives before
        // segment 1 and completes nothing; segment 1 releases frames 2 and 3 together.
        rx.handle_segment(Instant::ZERO, 0, &seg(0, 1448));
        assert_eq!(rx.poll_frame(), Some((0, ids[0])));
        assert_eq!(rx.poll_frame(), None);
        rx.handle_segment(Instant::ZERO, 0, &seg(2, 104));
        assert_eq!((rx.poll_frame(), rx.held_len()), (None, 2), "head-of-line blocked");
        rx.handle_segment(Instant::ZERO, 0, &seg(1, 1448));
        assert_eq!(rx.poll_frame(), Some((0, ids[1])));
        assert_eq!(rx.poll_frame(), Some((0, ids[2])));
        assert_eq!(rx.held_len(), 0);
    }
}
