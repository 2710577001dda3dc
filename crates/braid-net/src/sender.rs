//! The daemon's tunnel sender, whichever transport the paths use: braid-core's
//! [`TunnelSender`] over UDP, with the tunnel's own congestion control, pacing and loss
//! recovery, or its [`StreamSender`] over kernel TCP connections, which do all of that
//! themselves. Both take the same packets and hand out the same [`Transmit`]s.

use braid_core::tunnel::{
    PathMetrics, PathStats, SenderStats, StreamSender, Transmit, TunnelConfig, TunnelSender,
};
use braid_core::wire::Feedback;
use braid_core::Instant;

use crate::pool::Pkt;

pub enum Sender {
    Datagram(TunnelSender<Pkt>),
    Stream(StreamSender<Pkt>),
}

impl Sender {
    /// A new sender for kernel TCP paths (`stream`) or datagram paths.
    pub fn new(stream: bool, core: &TunnelConfig) -> Sender {
        if stream {
            Sender::Stream(StreamSender::new(core))
        } else {
            Sender::Datagram(TunnelSender::new(core))
        }
    }

    /// A new sender of the same kind, with nothing sent, queued or measured: for when the peer
    /// restarted and its receiver starts from nothing.
    pub fn fresh(&self, core: &TunnelConfig) -> Sender {
        Sender::new(matches!(self, Sender::Stream(_)), core)
    }

    pub fn handle_packet(&mut self, now: Instant, pkt: Pkt, len: u32) -> Result<(), Pkt> {
        match self {
            Sender::Datagram(tx) => tx.handle_packet(now, pkt, len),
            Sender::Stream(tx) => tx.handle_packet(now, pkt, len),
        }
    }

    pub fn set_path_up(&mut self, now: Instant, i: usize, up: bool) {
        match self {
            Sender::Datagram(tx) => tx.set_path_up(now, i, up),
            Sender::Stream(tx) => tx.set_path_up(i, up),
        }
    }

    /// An RTT sample of path `i` from a probe's echo. A TCP path's kernel measures its own.
    pub fn on_path_rtt_sample(&mut self, i: usize, rtt: std::time::Duration) {
        if let Sender::Datagram(tx) = self {
            tx.on_path_rtt_sample(i, rtt);
        }
    }

    /// The receiver's feedback on path `fb.path_id`. A TCP path's kernel has acknowledged
    /// everything already: feedback is dropped there.
    pub fn handle_feedback(&mut self, now: Instant, fb: &Feedback) {
        if let Sender::Datagram(tx) = self {
            tx.handle_feedback(now, fb);
        }
    }

    /// A packet CoDel dropped from the scheduler queue. Call until `None` (each returned
    /// packet's slot goes back to the pool when it is dropped).
    pub fn poll_dropped(&mut self) -> Option<Pkt> {
        match self {
            Sender::Datagram(tx) => tx.poll_dropped(),
            Sender::Stream(tx) => tx.poll_dropped(),
        }
    }

    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit<Pkt>> {
        match self {
            Sender::Datagram(tx) => tx.poll_transmit(now),
            Sender::Stream(tx) => tx.poll_transmit(now),
        }
    }

    /// The sender's own timers (pacing, loss detection); a stream sender has none.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self {
            Sender::Datagram(tx) => tx.poll_timeout(),
            Sender::Stream(_) => None,
        }
    }

    /// Fires the datagram sender's due timers (it skips paths whose timer is not due).
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Sender::Datagram(tx) = self {
            tx.handle_timeout(now);
        }
    }

    pub fn queue_len(&self) -> usize {
        match self {
            Sender::Datagram(tx) => tx.queue_len(),
            Sender::Stream(tx) => tx.queue_len(),
        }
    }

    pub fn stats(&self) -> SenderStats {
        match self {
            Sender::Datagram(tx) => tx.stats(),
            Sender::Stream(tx) => tx.stats(),
        }
    }

    pub fn path_metrics(&self, i: usize) -> PathMetrics {
        match self {
            Sender::Datagram(tx) => tx.path_metrics(i),
            Sender::Stream(tx) => tx.path_metrics(i),
        }
    }

    pub fn path_stats(&self, i: usize) -> PathStats {
        match self {
            Sender::Datagram(tx) => tx.path_stats(i),
            Sender::Stream(tx) => tx.path_stats(i),
        }
    }
}
