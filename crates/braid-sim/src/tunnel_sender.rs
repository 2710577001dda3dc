//! The simulator's tunnel sender: the core's [`TunnelSender`] holding packets by pool index
//! when the tunnel never copies them, by value when it may.
//!
//! A sender keeps every packet it has not sent yet (scheduler queue, pacing queues) and, on
//! reliable paths, every packet until it is acknowledged; the redundant scheduler and
//! retransmissions hand the same packet out more than once. A pool index cannot be handed out
//! twice (the first copy to arrive would free the slot under the others), so such a tunnel
//! holds the packets themselves (about 150 bytes each) and every departure takes a fresh pool
//! slot. Most tunnels never copy ([`TunnelConfig::copies_packets`]): they hold the 4-byte
//! index, and a packet stays in one slot from the proxy to the receiver. Copying 150-byte
//! packets through the queues made the default nested benchmark (`braid bench`) about 20%
//! slower, which is why both forms exist; they give identical results (tested below).

use std::time::Duration;

use braid_core::sched::SchedulerMetrics;
use braid_core::tunnel::{
    PathMetrics, PathStats, SenderStats, Transmit, TunnelConfig, TunnelSender,
};
use braid_core::wire::{DataHeader, Feedback, TimeSync, FLAG_UNSTAMPED};
use braid_core::Instant;

use crate::packet::{Packet, PacketPool, PktId};
use crate::tcp_tunnel::StreamTx;

/// One direction's tunnel sender.
pub enum SimSender {
    /// The tunnel never copies a packet: the sender holds pool indices.
    ByIndex(TunnelSender<PktId>),
    /// Retransmissions or redundant copies: the sender holds the packets.
    ByValue(TunnelSender<Packet>),
    /// Kernel TCP paths (`tunnel.transport = "tcp"`): the scheduler writes into each path's
    /// connection ([`StreamTx`]); the methods of datagram senders that have no meaning here
    /// (feedback, RTT seeds, pacing queues) do nothing.
    Stream(Box<StreamTx>),
}

/// A packet the sender put on a path, now in its own pool slot.
pub struct Departure {
    pub path: usize,
    pub id: PktId,
    /// A further copy of a packet that already left (redundant copy or retransmission).
    pub copy: bool,
    /// The time-sync frame to send right behind it on its path, when the core asked for one.
    pub time_sync: Option<TimeSync>,
}

/// The header the receiver gets with `tx`'s packet: as stamped, or, for a compact message,
/// without the send timestamp it has no room for, as the daemon's compact decoder hands it on
/// (braid-net `daemon.rs`, `on_compact`).
fn received_header<P>(tx: &Transmit<P>) -> DataHeader {
    if tx.compact {
        DataHeader { flags: tx.header.flags | FLAG_UNSTAMPED, send_ts_ns: 0, ..tx.header }
    } else {
        tx.header
    }
}

/// The time-sync frame the core asked to follow `tx`'s packet: that packet's send timestamp.
fn time_sync<P>(tx: &Transmit<P>) -> Option<TimeSync> {
    tx.time_sync.then_some(TimeSync {
        path_id: tx.path as u8,
        path_seq: tx.header.path_seq,
        send_ts_ns: tx.header.send_ts_ns,
    })
}

/// Calls the same method on whichever sender is inside.
macro_rules! each {
    ($self:expr, $s:ident => $call:expr, stream $t:ident => $scall:expr) => {
        match $self {
            SimSender::ByIndex($s) => $call,
            SimSender::ByValue($s) => $call,
            SimSender::Stream($t) => $scall,
        }
    };
}

impl SimSender {
    /// The form `config` needs: by value only when it may copy packets.
    pub fn new(config: &TunnelConfig) -> Self {
        if config.copies_packets() {
            SimSender::ByValue(TunnelSender::new(config))
        } else {
            SimSender::ByIndex(TunnelSender::new(config))
        }
    }

    /// The by-value form for any configuration; the simulator picks it only when `config`
    /// copies packets, and tests compare it with the by-index form.
    pub fn by_value(config: &TunnelConfig) -> Self {
        SimSender::ByValue(TunnelSender::new(config))
    }

    /// Offers the packet in slot `id`. A packet the full scheduler queue refuses is taken out
    /// of the pool and returned; otherwise the sender owns it until it departs.
    pub fn handle_packet(
        &mut self,
        now: Instant,
        pool: &mut PacketPool,
        id: PktId,
    ) -> Option<Packet> {
        match self {
            SimSender::ByIndex(s) => {
                let refused = s.handle_packet(now, id, pool.get(id).inner_len).err()?;
                let p = *pool.get(refused);
                pool.free(refused);
                Some(p)
            }
            SimSender::ByValue(s) => {
                let p = *pool.get(id);
                pool.free(id);
                s.handle_packet(now, p, p.inner_len).err()
            }
            SimSender::Stream(s) => {
                let refused = s.handle_packet(now, pool, id)?;
                let p = *pool.get(refused);
                pool.free(refused);
                Some(p)
            }
        }
    }

    /// A packet CoDel dropped from the scheduler queue, taken out of the pool. Call until
    /// `None`.
    pub fn poll_dropped(&mut self, pool: &mut PacketPool) -> Option<Packet> {
        let taken = |pool: &mut PacketPool, id: PktId| {
            let p = *pool.get(id);
            pool.free(id);
            p
        };
        match self {
            SimSender::ByIndex(s) => s.poll_dropped().map(|id| taken(pool, id)),
            SimSender::ByValue(s) => s.poll_dropped(),
            SimSender::Stream(s) => s.poll_dropped().map(|id| taken(pool, id)),
        }
    }

    /// The kernel-TCP sender inside, if this is one.
    pub fn as_stream(&self) -> Option<&StreamTx> {
        match self {
            SimSender::Stream(s) => Some(s),
            _ => None,
        }
    }

    /// The kernel-TCP sender inside, if this is one.
    pub fn as_stream_mut(&mut self) -> Option<&mut StreamTx> {
        match self {
            SimSender::Stream(s) => Some(s),
            _ => None,
        }
    }

    /// The next departure due at `now`, stamped with its tunnel header.
    pub fn poll_transmit(&mut self, now: Instant, pool: &mut PacketPool) -> Option<Departure> {
        match self {
            SimSender::ByIndex(s) => {
                let tx = s.poll_transmit(now)?;
                debug_assert!(!tx.copy, "a tunnel that copies packets must hold them by value");
                pool.get_mut(tx.payload).tunnel = Some(received_header(&tx));
                let time_sync = time_sync(&tx);
                Some(Departure { path: tx.path, id: tx.payload, copy: tx.copy, time_sync })
            }
            SimSender::ByValue(s) => {
                let tx = s.poll_transmit(now)?;
                let id = pool.alloc(Packet { tunnel: Some(received_header(&tx)), ..tx.payload });
                let time_sync = time_sync(&tx);
                Some(Departure { path: tx.path, id, copy: tx.copy, time_sync })
            }
            // Frames go into connections, not onto links: see `StreamTx::poll_write`.
            SimSender::Stream(_) => None,
        }
    }

    pub fn on_path_rtt_sample(&mut self, path: usize, rtt: Duration) {
        each!(self, s => s.on_path_rtt_sample(path, rtt), stream _t => {})
    }

    pub fn handle_feedback(&mut self, now: Instant, fb: &Feedback) {
        each!(self, s => s.handle_feedback(now, fb), stream _t => {})
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        each!(self, s => s.handle_timeout(now), stream t => t.handle_timeout(now))
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        each!(self, s => s.poll_timeout(), stream t => t.poll_timeout())
    }

    pub fn queue_len(&self) -> usize {
        each!(self, s => s.queue_len(), stream t => t.queue_len())
    }

    pub fn pacing_queue_len(&self, path: usize) -> usize {
        each!(self, s => s.pacing_queue_len(path), stream _t => 0)
    }

    pub fn path_metrics(&self, path: usize) -> PathMetrics {
        each!(self, s => s.path_metrics(path), stream t => t.path_metrics(path))
    }

    pub fn path_stats(&self, path: usize) -> PathStats {
        each!(self, s => s.path_stats(path), stream t => t.path_stats(path))
    }

    pub fn stats(&self) -> SenderStats {
        each!(self, s => s.stats(), stream t => t.stats())
    }

    pub fn scheduler_metrics(&self) -> SchedulerMetrics {
        each!(self, s => s.scheduler_metrics(), stream t => t.scheduler_metrics())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Payload;
    use braid_core::cc::TunnelCc;
    use braid_core::wire::overhead::COMPACT_SEQ_REACH;

    /// Over the daemon's wire (`sim.wire = "daemon"`) a first transmission leaves compact: its
    /// header reaches the receiver without a send timestamp, and a time-sync frame carrying
    /// that timestamp follows the first packet on a path and then one packet per interval.
    #[test]
    fn compact_packets_go_unstamped_and_one_per_interval_brings_a_time_sync_frame() {
        let config = TunnelConfig {
            cc: TunnelCc::NewReno,
            compact_seq_reach: Some(COMPACT_SEQ_REACH),
            owd_sample_interval: Some(Duration::from_millis(1)),
            ..TunnelConfig::default()
        };
        let mut pool = PacketPool::with_capacity(16);
        let mut sender = SimSender::new(&config);
        let mut departures = |at_us: u64| {
            let now = Instant::from_nanos(at_us * 1_000);
            let id = pool.alloc(Packet::new(Payload::Udp, 1_000, true));
            assert!(sender.handle_packet(now, &mut pool, id).is_none());
            let d = sender.poll_transmit(now, &mut pool).expect("a window with room");
            let header = pool.get(d.id).tunnel.expect("encapsulated");
            (d.path, header, d.time_sync)
        };
        let (path, header, ts) = departures(0);
        assert!(!header.is_stamped() && header.send_ts_ns == 0, "{header:?}");
        let ts = ts.expect("the path's first compact packet is followed");
        assert_eq!((ts.path_id as usize, ts.path_seq, ts.send_ts_ns), (path, header.path_seq, 0));
        let (_, header, ts) = departures(500);
        assert!(!header.is_stamped());
        assert!(ts.is_none(), "0.5 ms after the last frame");
        let (_, header, ts) = departures(1_000);
        assert!(!header.is_stamped());
        assert_eq!(ts.map(|t| t.send_ts_ns), Some(1_000_000), "1 ms after the last frame");
    }

    /// The plain wire (the default core: no compact messages) stamps every header and sends
    /// no time-sync frame.
    #[test]
    fn plain_packets_keep_their_timestamps() {
        let config = TunnelConfig { cc: TunnelCc::NewReno, ..TunnelConfig::default() };
        let mut pool = PacketPool::with_capacity(4);
        let mut sender = SimSender::new(&config);
        let now = Instant::from_nanos(7_000);
        let id = pool.alloc(Packet::new(Payload::Udp, 1_000, true));
        assert!(sender.handle_packet(now, &mut pool, id).is_none());
        let d = sender.poll_transmit(now, &mut pool).unwrap();
        let header = pool.get(d.id).tunnel.unwrap();
        assert!(header.is_stamped());
        assert_eq!(header.send_ts_ns, 7_000);
        assert!(d.time_sync.is_none());
    }
}
