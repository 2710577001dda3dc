//! Simulated packets: small plain records in a pool with a free list, referred to by index.

use braid_core::wire::{overhead, DataHeader, Feedback, TimeSync};
use braid_core::Instant;

use crate::tcp::{Ack, Segment};

/// Index of a packet in the [`PacketPool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PktId(pub u32);

/// Index of a tunnel feedback frame in the [`PacketPool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FeedbackId(pub u32);

/// What a packet carries.
///
/// A feedback frame (up to 16 ack ranges, some 300 bytes) lives in the pool's own free list and
/// the packet refers to it, so every packet stays small: packets are copied by value through
/// links, queues and the tunnel sender, which keeps each one until it is acknowledged.
#[derive(Clone, Copy, Debug)]
pub enum Payload {
    /// An end-to-end TCP data segment.
    Segment(Segment),
    /// An end-to-end TCP acknowledgement.
    Ack(Ack),
    /// A greedy UDP datagram.
    Udp,
    /// Tunnel feedback for the path it travels on (reverse direction of the data it acks).
    Feedback(FeedbackId),
    /// A segment of a kernel TCP path's connection (`tunnel.transport = "tcp"`), carrying
    /// part of the stream of frames; travels the path in the direction of its data.
    PathSegment(Segment),
    /// An ACK of a kernel TCP path's connection; travels against the data it acknowledges.
    PathAck(Ack),
    /// A time-sync frame behind a compact data packet on its path (`sim.wire = "daemon"`).
    TimeSync(TimeSync),
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub payload: Payload,
    /// Length of the end-to-end IP packet (or of the feedback frame with its outer headers).
    pub inner_len: u32,
    /// Present while the packet travels encapsulated between the tunnel endpoints.
    pub tunnel: Option<DataHeader>,
    /// When the packet entered the tunnel sender (protocol delay starts here).
    pub entered_tunnel: Instant,
    /// When the packet reached the tunnel receiver (head-of-line blocking starts here).
    pub reached_receiver: Instant,
    /// Downlink (server to UE) or uplink.
    pub downlink: bool,
}

impl Packet {
    pub fn new(payload: Payload, inner_len: u32, downlink: bool) -> Self {
        Packet {
            payload,
            inner_len,
            tunnel: None,
            entered_tunnel: Instant::ZERO,
            reached_receiver: Instant::ZERO,
            downlink,
        }
    }

    /// Bytes on the wire at the IP layer: the inner packet plus what the tunnel adds if
    /// encapsulated (a packet without a send timestamp travelled compact).
    pub fn ip_len(&self, wire: &WireOverhead) -> u32 {
        match self.tunnel {
            Some(h) if h.is_stamped() => self.inner_len + wire.full_data,
            Some(_) => self.inner_len + wire.compact_data,
            None => self.inner_len,
        }
    }
}

/// What the tunnel adds to each kind of datagram on a path, bytes: to a data packet sent
/// whole (with its data header) or compact, and to a control frame (feedback, time sync).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireOverhead {
    pub full_data: u32,
    pub compact_data: u32,
    pub control: u32,
}

impl WireOverhead {
    /// Outer IPv4 and UDP headers around a control frame on the plain wire.
    const PLAIN_CONTROL: u32 = overhead::IPV4_UDP_BYTES;

    /// The plain wire (`sim.wire = "plain"`): every data packet `header_bytes`, a control
    /// frame its outer headers; nothing travels compact.
    pub fn plain(header_bytes: u32) -> Self {
        WireOverhead {
            full_data: header_bytes,
            compact_data: header_bytes,
            control: Self::PLAIN_CONTROL,
        }
    }

    /// Braid's daemon's messages (`sim.wire = "daemon"`, braid-core `wire/overhead.rs`).
    pub const DAEMON: WireOverhead = WireOverhead {
        full_data: overhead::FULL_DATA_OVERHEAD,
        compact_data: overhead::COMPACT_DATA_OVERHEAD,
        control: overhead::CONTROL_OVERHEAD,
    };
}

/// A pool of packets reused through a free list: no allocation per packet once warm.
#[derive(Debug, Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
    live: usize,
    frames: Vec<Feedback>,
    free_frames: Vec<u32>,
}

impl PacketPool {
    pub fn with_capacity(n: usize) -> Self {
        PacketPool {
            slots: Vec::with_capacity(n),
            free: Vec::with_capacity(n),
            live: 0,
            frames: Vec::new(),
            free_frames: Vec::new(),
        }
    }

    /// A packet carrying feedback frame `fb`; the frame is freed with the packet.
    pub fn alloc_feedback(&mut self, fb: Feedback, inner_len: u32, downlink: bool) -> PktId {
        let f = if let Some(i) = self.free_frames.pop() {
            self.frames[i as usize] = fb;
            i
        } else {
            self.frames.push(fb);
            (self.frames.len() - 1) as u32
        };
        self.alloc(Packet::new(Payload::Feedback(FeedbackId(f)), inner_len, downlink))
    }

    #[inline]
    pub fn feedback(&self, id: FeedbackId) -> &Feedback {
        &self.frames[id.0 as usize]
    }

    pub fn alloc(&mut self, p: Packet) -> PktId {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            PktId(i)
        } else {
            self.slots.push(p);
            PktId((self.slots.len() - 1) as u32)
        }
    }

    pub fn free(&mut self, id: PktId) {
        self.live -= 1;
        if let Payload::Feedback(f) = self.slots[id.0 as usize].payload {
            self.free_frames.push(f.0);
        }
        self.free.push(id.0);
    }

    #[inline]
    pub fn get(&self, id: PktId) -> &Packet {
        &self.slots[id.0 as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id.0 as usize]
    }

    /// Packets allocated and not yet freed.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Most packets ever alive at once.
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid_core::wire::FLAG_UNSTAMPED;

    #[test]
    fn a_packet_on_the_wire_carries_what_its_message_adds() {
        let mut p = Packet::new(Payload::Udp, 1_400, true);
        let daemon = WireOverhead::DAEMON;
        assert_eq!(p.ip_len(&daemon), 1_400, "not encapsulated");
        p.tunnel = Some(DataHeader::default());
        assert_eq!(p.ip_len(&daemon), 1_400 + 92, "a full message");
        assert_eq!(p.ip_len(&WireOverhead::plain(60)), 1_460);
        p.tunnel = Some(DataHeader { flags: FLAG_UNSTAMPED, ..DataHeader::default() });
        assert_eq!(p.ip_len(&daemon), 1_400 + 48, "a compact message");
        assert_eq!(daemon.control, 60);
    }
}
