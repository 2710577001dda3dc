//! What Braid's daemon adds around each frame it sends over a UDP path: the sizes and rules a
//! model of its wire needs (the simulator's `sim.wire = "daemon"`). The daemon's encryption
//! (braid-net `crypto/`) defines them; its tests check that these agree with it.
//!
//! Every datagram travels in outer IPv4 (20) and UDP (8) headers and is one of:
//!
//! - a **full message**: a 16-byte envelope header, the frame (a data packet behind its 32-byte
//!   [`crate::wire::DataHeader`], or a control frame: feedback, time sync, probe) and the
//!   16-byte AEAD tag;
//! - a **compact data message**: a 4-byte header carrying the low bits of the path and global
//!   sequence numbers, the inner packet, the tag. It has no room for a send timestamp, so the
//!   receiver gets the packet unstamped ([`crate::wire::FLAG_UNSTAMPED`]) and samples the
//!   path's one-way delay from a time-sync frame ([`crate::wire::TimeSync`]) that follows a
//!   compact packet now and then ([`owd_sample_interval`]). A retransmission, or a packet whose
//!   sequence numbers the receiver could not expand exactly, goes as a full message.
//!
//! So a data packet costs 48 bytes compact and 92 full; a feedback or time-sync frame 60 bytes
//! besides itself (a time-sync frame, 24 bytes, is an 84-byte datagram).

use core::time::Duration;

use crate::reorder::{ReorderConfig, ReorderKind};

/// Outer IPv4 and UDP headers.
pub const IPV4_UDP_BYTES: u32 = 20 + 8;
/// A full message's envelope header and AEAD tag.
pub const FULL_MESSAGE_BYTES: u32 = 16 + 16;
/// A compact data message's header and AEAD tag.
pub const COMPACT_MESSAGE_BYTES: u32 = 4 + 16;
/// How far a compact header's truncated sequence numbers may lie from what the receiver
/// expects and still expand exactly (14 bits on the wire, half the range either way): the
/// sender's [`crate::tunnel::TunnelConfig::compact_seq_reach`].
pub const COMPACT_SEQ_REACH: u64 = 1 << 13;

/// A compact data packet on an IPv4 path: what it costs besides the inner packet.
pub const COMPACT_DATA_OVERHEAD: u32 = IPV4_UDP_BYTES + COMPACT_MESSAGE_BYTES;
/// A full data packet on an IPv4 path: outer headers, envelope, data header and tag.
pub const FULL_DATA_OVERHEAD: u32 =
    IPV4_UDP_BYTES + FULL_MESSAGE_BYTES + super::DATA_HEADER_LEN as u32;
/// A control frame (feedback, time sync) on an IPv4 path: what it costs besides the frame.
pub const CONTROL_OVERHEAD: u32 = IPV4_UDP_BYTES + FULL_MESSAGE_BYTES;

/// Time-sync frames for a receiver that follows each path's latest one-way delay (the
/// adaptive wait limit, delay equalisation): one per busy path per millisecond, 84 bytes
/// (0.7 Mbit/s, 1.3% of a 50 Mbit/s path), against the 44 bytes a compact header saves on
/// each of the 4 000 or so data packets such a path carries a second. At 5 ms the adaptive
/// receiver gave up more gaps than with a timestamp in every packet (lab, docs/validation.md)
/// and a flood on the server's port tipped downloads under the flood test's bar; 1 ms did not.
pub const OWD_SAMPLE_INTERVAL_FOLLOWING: Duration = Duration::from_millis(1);

/// The same for a receiver that does not follow the delays: a static wait limit, with or
/// without fast loss detection, reads a path's one-way delay only for a path that has gone
/// quiet ([`crate::reorder::fast_loss`], the delay rule) and for the metrics, and a sample
/// every 10 ms serves both: 0.13% of a busy 50 Mbit/s path.
pub const OWD_SAMPLE_INTERVAL_STATIC: Duration = Duration::from_millis(10);

/// How often the sender asks for a time-sync frame on each path, for the receiver `reorder`
/// describes ([`crate::tunnel::TunnelConfig::owd_sample_interval`]). Both ends of a tunnel
/// are expected to run the same reorder stage.
pub fn owd_sample_interval(reorder: &ReorderConfig) -> Duration {
    if reorder.kind == ReorderKind::Adaptive || reorder.equalize_delay {
        OWD_SAMPLE_INTERVAL_FOLLOWING
    } else {
        OWD_SAMPLE_INTERVAL_STATIC
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::TIME_SYNC_LEN;

    #[test]
    fn a_data_packet_costs_48_bytes_compact_and_92_full() {
        assert_eq!(COMPACT_DATA_OVERHEAD, 48);
        assert_eq!(FULL_DATA_OVERHEAD, 92);
        assert_eq!(CONTROL_OVERHEAD + TIME_SYNC_LEN as u32, 84);
    }

    #[test]
    fn only_a_receiver_that_follows_the_delays_samples_every_millisecond() {
        let of = |kind, equalize_delay| {
            owd_sample_interval(&ReorderConfig { kind, equalize_delay, ..Default::default() })
        };
        assert_eq!(of(ReorderKind::Adaptive, false), Duration::from_millis(1));
        assert_eq!(of(ReorderKind::Static, true), Duration::from_millis(1));
        assert_eq!(of(ReorderKind::Static, false), Duration::from_millis(10));
        assert_eq!(of(ReorderKind::None, false), Duration::from_millis(10));
    }
}
