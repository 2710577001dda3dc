//! What carries a path's frames (`tunnel.transport`) and, for kernel TCP paths, the
//! `[tunnel.tcp]` table and the rules a `[tunnel]` section must follow over TCP.
//!
//! Over `"udp"` the tunnel runs each path's congestion control, pacing and loss recovery itself.
//! Over `"tcp"` each path is one kernel TCP connection, as in the user-space framework of
//! Pieska et al. 2024 (section 2.2, "multiple TCP tunnels (e.g., using TCP BBR)"): the kernel
//! does the path's congestion control (`tunnel.cc`, one Linux has), pacing and retransmission,
//! and the tunnel keeps its scheduler and the receiver's reordering across paths. The
//! simulator models such a path with its own Linux-like TCP; the daemon opens real sockets.

use std::time::Duration;

use braid_core::cc::TunnelCc;
use braid_core::tunnel::Reliability;
use serde::{Deserialize, Serialize};

use crate::range::int;
use crate::{FieldError, TunnelConfig};

braid_core::named_enum! {
    /// What carries each path's frames.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub enum Transport {
        what = "transport";
        /// One UDP datagram per frame; the tunnel's own congestion control, pacing and
        /// reliability.
        #[default]
        Udp => "udp",
        /// One kernel TCP connection per path, which does the path's congestion control
        /// (`tunnel.cc`: newreno, cubic or bbr), pacing and reliability.
        Tcp => "tcp",
    }
}

braid_core::named_enum! {
    /// When the tunnel writes a frame into a path's TCP socket.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub enum TcpWriter {
        what = "TCP writer";
        /// While the path's congestion window has room for it: the kernel's bytes in flight
        /// plus its unsent bytes, from `TCP_INFO`, stay under `tcpi_snd_cwnd` (Braid's daemon).
        /// Packets wait in the tunnel's scheduler queue, where the scheduler still chooses.
        #[default]
        Cwnd => "cwnd",
        /// While the socket is writable: the unacknowledged bytes fit the send buffer, which
        /// Linux autotunes to about twice the congestion window (`tcp_sndbuf_expand`), up to
        /// `tcp_wmem`'s maximum. What OpenVPN and most user-space tunnels do; the bytes beyond
        /// the window wait inside the kernel, a queue the scheduler cannot see or reorder.
        Sndbuf => "sndbuf",
    }
}

/// `[tunnel.tcp]`: how a kernel TCP path is used, read with `tunnel.transport = "tcp"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TcpTable {
    #[serde(deserialize_with = "crate::de::named", serialize_with = "crate::de::ser_named")]
    pub writer: TcpWriter,
    /// Stream bytes each packet adds besides itself: Braid's 2-byte length prefix and 32-byte
    /// data header (the daemon adds its 32 bytes of encryption envelope; the simulator, like its
    /// UDP `header_bytes`, leaves encryption out). OpenVPN without encryption adds about 6.
    pub frame_bytes: u32,
    /// The most the send buffer may grow to, bytes (Linux `net.ipv4.tcp_wmem`'s third value,
    /// 4 MiB by default). Read by `writer = "sndbuf"`.
    pub wmem_max_bytes: u64,
}

/// Linux's default `tcp_wmem` maximum (`net/ipv4/tcp.c`, `tcp_init`: 4 MiB).
pub const LINUX_WMEM_MAX_BYTES: u64 = 4 << 20;
/// Braid's stream framing per packet: 2-byte length prefix plus the 32-byte data header.
pub const BRAID_FRAME_BYTES: u32 = 2 + braid_core::wire::DATA_HEADER_LEN as u32;

impl Default for TcpTable {
    fn default() -> Self {
        TcpTable {
            writer: TcpWriter::Cwnd,
            frame_bytes: BRAID_FRAME_BYTES,
            wmem_max_bytes: LINUX_WMEM_MAX_BYTES,
        }
    }
}

/// The Linux name of the congestion control a kernel TCP path runs for `tunnel.cc`, if Linux
/// has it (NewReno is the kernel's `reno`, RFC 5681 with RFC 6582 recovery).
pub fn kernel_cc_name(cc: TunnelCc) -> Option<&'static str> {
    match cc {
        TunnelCc::NewReno => Some("reno"),
        TunnelCc::Cubic => Some("cubic"),
        TunnelCc::Bbr => Some("bbr"),
        _ => None,
    }
}

/// The receiver acknowledges per path for the UDP sender's loss detection; over TCP nothing
/// reads its feedback, so it is made as rarely as the core allows and dropped.
const TCP_FEEDBACK_EVERY_PKTS: u32 = 64;
const TCP_FEEDBACK_MAX_DELAY: Duration = Duration::from_secs(1);

/// The core configuration for TCP paths, from the UDP one: each packet costs `frame_bytes` on
/// the stream besides itself (the kernel's window counts stream bytes, so outer headers are not
/// charged); the receiver needs no per-path reassembly (TCP delivers in order, and a gap left
/// by a broken connection must not hold its path back forever: the reorder buffer's wait limit
/// gives it up); and its feedback is made rarely, since nothing sends it.
pub fn adapt_core_for_tcp(
    core: &mut braid_core::tunnel::TunnelConfig,
    frame_bytes: u32,
    largest_inner_bytes: u32,
) {
    core.header_bytes = frame_bytes;
    core.mss_bytes = u64::from(largest_inner_bytes) + u64::from(frame_bytes);
    core.reliability = Reliability::Unreliable;
    core.feedback_every_pkts = TCP_FEEDBACK_EVERY_PKTS;
    core.feedback_max_delay = TCP_FEEDBACK_MAX_DELAY;
}

/// The `tunnel.cc` names a kernel TCP path can run, in the names' order.
fn kernel_tunnel_cc_names() -> Vec<&'static str> {
    let runs = |n: &&str| n.parse::<TunnelCc>().ok().and_then(kernel_cc_name).is_some();
    TunnelCc::NAMES.iter().copied().filter(runs).collect()
}

/// The `[tunnel]` keys only the UDP transport reads, with the reason. Over TCP the scheduler's
/// keys (`scheduler`, `sched_queue_pkts`, `[tunnel.acpf]`, `[tunnel.blest]`, `[tunnel.ecf]`)
/// and the receiver's reordering keys are read; the keys below reach no code, so a value other
/// than the default is refused rather than ignored.
const UDP_ONLY_KEYS: [(&str, &str); 9] = [
    ("bbr2", KERNEL_CC),
    ("wvegas", KERNEL_CC),
    ("coupled_cubic", KERNEL_CC),
    ("counting", KERNEL_CC),
    ("max_rtt_spread_ms", "path exclusion is part of the UDP sender only"),
    ("repair_wait_ms", "the kernel repairs each path unseen and hands on only what is in order"),
    ("feedback_every_pkts", NO_FEEDBACK),
    ("feedback_max_delay_ms", NO_FEEDBACK),
    ("header_bytes", "a frame's stream overhead is tunnel.tcp.frame_bytes"),
];
const KERNEL_CC: &str = "the kernel runs each path's congestion control (tunnel.cc) with its own \
                         parameters and window counting";
const NO_FEEDBACK: &str = "the kernel acknowledges each path and the tunnel sends no feedback";

/// Checks `[tunnel.tcp]`'s ranges, and, over `transport = "tcp"`, a congestion control the
/// kernel has, reliable paths (TCP is), and none of the UDP-only keys changed.
pub(crate) fn validate(t: &TunnelConfig) -> Result<(), FieldError> {
    int("tunnel.tcp.frame_bytes", t.tcp.frame_bytes, 0..=200)?;
    int("tunnel.tcp.wmem_max_bytes", t.tcp.wmem_max_bytes, 4096..=(1 << 30))?;
    if t.transport != Transport::Tcp {
        return Ok(());
    }
    if kernel_cc_name(t.cc).is_none() {
        let names = kernel_tunnel_cc_names();
        return Err(FieldError::invalid(
            "tunnel.cc",
            t.cc.as_str(),
            format!(
                "over the TCP transport a kernel TCP congestion control: one of {}",
                names.join(", ")
            ),
        ));
    }
    if t.reliability != Reliability::Reliable {
        return Err(FieldError::invalid(
            "tunnel.reliability",
            t.reliability.as_str(),
            "TCP paths are reliable: over the TCP transport it must be \"reliable\"",
        ));
    }
    if let Some((field, why)) = changed_udp_only_key(t)? {
        return Err(FieldError::BadField {
            field,
            reason: format!("applies to the UDP transport only; over TCP {why}: remove it"),
        });
    }
    Ok(())
}

/// The dotted key of the first UDP-only key whose value differs from the default (for a
/// table, its first differing field: `tunnel.bbr2.beta_percent`), with the reason.
fn changed_udp_only_key(t: &TunnelConfig) -> Result<Option<(String, &'static str)>, FieldError> {
    let given = toml::Table::try_from(t).map_err(FieldError::serialize)?;
    let default = toml::Table::try_from(TunnelConfig::default()).map_err(FieldError::serialize)?;
    for (key, why) in UDP_ONLY_KEYS {
        let (g, d) = (given.get(key), default.get(key));
        if g == d {
            continue;
        }
        let field = match (g, d) {
            (Some(toml::Value::Table(g)), Some(toml::Value::Table(d))) => {
                let differs = |k: &&String| g.get(k.as_str()) != d.get(k.as_str());
                match g.keys().chain(d.keys()).find(differs) {
                    Some(sub) => format!("tunnel.{key}.{sub}"),
                    None => format!("tunnel.{key}"),
                }
            }
            _ => format!("tunnel.{key}"),
        };
        return Ok(Some((field, why)));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(cc: TunnelCc) -> TunnelConfig {
        TunnelConfig {
            transport: Transport::Tcp,
            cc,
            reliability: Reliability::Reliable,
            ..TunnelConfig::default()
        }
    }

    fn field_of(t: &TunnelConfig) -> String {
        match t.validate().unwrap_err() {
            FieldError::InvalidValue { field, .. } | FieldError::BadField { field, .. } => field,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn over_tcp_only_kernel_controllers_and_reliable_paths_pass() {
        for cc in [TunnelCc::NewReno, TunnelCc::Cubic, TunnelCc::Bbr] {
            tcp(cc).validate().unwrap();
        }
        assert_eq!(kernel_tunnel_cc_names(), ["newreno", "cubic", "bbr"]);
        let err = tcp(TunnelCc::Bbr2).validate().unwrap_err().to_string();
        assert!(err.starts_with("tunnel.cc") && err.contains("newreno, cubic, bbr"), "{err}");
        let t = TunnelConfig { reliability: Reliability::Partial, ..tcp(TunnelCc::Bbr) };
        assert_eq!(field_of(&t), "tunnel.reliability");
        // The same values over UDP are fine.
        TunnelConfig { transport: Transport::Udp, ..tcp(TunnelCc::Bbr2) }.validate().unwrap();
    }

    #[test]
    fn over_tcp_a_changed_udp_only_key_is_named() {
        let t = TunnelConfig { header_bytes: 40, ..tcp(TunnelCc::Cubic) };
        assert_eq!(field_of(&t), "tunnel.header_bytes");
        let mut t = tcp(TunnelCc::Cubic);
        t.bbr2.beta_percent = 50;
        assert_eq!(field_of(&t), "tunnel.bbr2.beta_percent");
        let t = TunnelConfig { repair_wait_ms: Some(30.0), ..tcp(TunnelCc::Cubic) };
        let err = t.validate().unwrap_err().to_string();
        assert!(
            err.contains("tunnel.repair_wait_ms") && err.contains("UDP transport only"),
            "{err}"
        );
    }

    #[test]
    fn the_tcp_table_reads_by_name_and_checks_its_ranges() {
        let t = TunnelConfig::from_table_over(
            &TunnelConfig::default(),
            "transport = \"tcp\"\ncc = \"cubic\"\nreliability = \"reliable\"\n\
             [tcp]\nwriter = \"sndbuf\"\nframe_bytes = 6\n"
                .parse()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            (t.transport, t.tcp.writer, t.tcp.frame_bytes),
            (Transport::Tcp, TcpWriter::Sndbuf, 6)
        );
        assert_eq!(t.tcp.wmem_max_bytes, LINUX_WMEM_MAX_BYTES, "unset keys keep the default");
        t.validate().unwrap();
        let err = TunnelConfig::from_table_over(
            &TunnelConfig::default(),
            "[tcp]\nwriter = \"socket\"\n".parse().unwrap(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("tunnel.tcp.writer") && err.contains("cwnd, sndbuf"), "{err}");
        let mut t = tcp(TunnelCc::Bbr);
        t.tcp.wmem_max_bytes = 10;
        assert_eq!(field_of(&t), "tunnel.tcp.wmem_max_bytes");
    }
}
