//! A socket's `TCP_INFO`: `struct tcp_info` of include/uapi/linux/tcp.h (`libc::tcp_info`),
//! filled by `tcp_get_info()` in net/ipv4/tcp.c.
//!
//! The structure grew over the years; the kernel copies `min(optlen, sizeof(struct tcp_info))`
//! bytes, so a field is read only if the returned length covers it. Fields after the original
//! 2.6 structure (104 bytes, which every kernel returns) are `None` when an older kernel did
//! not write them.
//!
//! In flight, as Linux's `tcp_packets_in_flight` (include/net/tcp.h) counts segments:
//! `packets_out - (sacked_out + lost_out) + retrans_out`, which TCP_INFO exports as
//! `tcpi_unacked`, `tcpi_sacked`, `tcpi_lost` and `tcpi_retrans`.

use std::io;
use std::mem::{offset_of, size_of};
use std::os::fd::RawFd;

use serde::{Deserialize, Serialize};

/// Linux `TCP_INFINITE_SSTHRESH`: no slow-start threshold set yet.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
/// The original 2.6 structure, up to `tcpi_total_retrans`, which every kernel returns at least.
pub const TCP_INFO_MIN_LEN: usize = offset_of!(libc::tcp_info, tcpi_pacing_rate);

/// The fields of `TCP_INFO` that the tunnel and the test bed read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcpInfo {
    /// `TCP_ESTABLISHED` is 1 (include/net/tcp_states.h).
    pub state: u8,
    /// Open 0, Disorder 1, CWR 2, Recovery 3, Loss 4 (`enum tcp_ca_state`).
    pub ca_state: u8,
    pub snd_mss: u32,
    /// `tcpi_unacked`, `tcpi_sacked`, `tcpi_lost`, `tcpi_retrans`: segments (module
    /// documentation).
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    /// Smoothed RTT (`tcpi_rtt`), microseconds; 0 before the first sample.
    pub srtt_us: u32,
    pub rttvar_us: u32,
    pub snd_ssthresh: u32,
    /// Congestion window, packets.
    pub snd_cwnd: u32,
    /// `tcpi_reordering`: the sender's reordering degree, segments (3 until it sees
    /// reordering).
    pub reordering: u32,
    pub total_retrans: u32,
    /// `tcpi_pacing_rate` (Linux 4.0), bytes per second; `u64::MAX` when the socket is not
    /// paced.
    pub pacing_rate_bytes_per_s: Option<u64>,
    /// `tcpi_bytes_acked` (Linux 4.1).
    pub bytes_acked: Option<u64>,
    /// `tcpi_min_rtt` (Linux 4.9), microseconds.
    pub min_rtt_us: Option<u32>,
    /// `tcpi_delivery_rate` (Linux 4.9), bytes per second.
    pub delivery_rate_bytes_per_s: Option<u64>,
    /// `tcpi_notsent_bytes` (Linux 4.6): written but not yet sent (held back by the window
    /// or pacing).
    pub notsent_bytes: Option<u32>,
    /// `tcpi_busy_time`, `tcpi_rwnd_limited`, `tcpi_sndbuf_limited` (Linux 4.10),
    /// microseconds: how long the connection had data to send, and of that how long the
    /// receive window or the send buffer (not cwnd) held it back (`tcp_chrono_*` in
    /// net/ipv4/tcp_output.c).
    pub busy_time_us: Option<u64>,
    pub rwnd_limited_us: Option<u64>,
    pub sndbuf_limited_us: Option<u64>,
    /// `tcpi_bytes_retrans` (Linux 4.19).
    pub bytes_retrans: Option<u64>,
    /// `tcpi_dsack_dups` and `tcpi_reord_seen` (Linux 5.0): duplicate segments the receiver
    /// reported by DSACK, and reordering events the sender detected.
    pub dsack_dups: Option<u32>,
    pub reord_seen: Option<u32>,
    /// `tcpi_total_rto` (Linux 6.7): retransmission timeouts of the connection.
    pub total_rto: Option<u16>,
}

impl TcpInfo {
    /// Reads the socket's `TCP_INFO`.
    pub fn read(fd: RawFd) -> io::Result<TcpInfo> {
        // SAFETY: tcp_info is plain integers, for which all zeroes is a valid value.
        let mut raw: libc::tcp_info = unsafe { std::mem::zeroed() };
        let mut len = size_of::<libc::tcp_info>() as libc::socklen_t;
        // SAFETY: a valid descriptor; the kernel writes at most `len` bytes into `raw`.
        let r = unsafe {
            libc::getsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_INFO,
                (&mut raw as *mut libc::tcp_info).cast(),
                &mut len,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        TcpInfo::from_raw(&raw, len as usize).ok_or_else(|| {
            io::Error::other(format!(
                "TCP_INFO returned {len} bytes, fewer than {TCP_INFO_MIN_LEN}"
            ))
        })
    }

    /// The fields of `raw` of which the kernel wrote the first `len` bytes; `None` if shorter
    /// than the original structure.
    pub fn from_raw(raw: &libc::tcp_info, len: usize) -> Option<TcpInfo> {
        if len < TCP_INFO_MIN_LEN {
            return None;
        }
        macro_rules! newer {
            ($field:ident) => {{
                let end = offset_of!(libc::tcp_info, $field) + std::mem::size_of_val(&raw.$field);
                (end <= len).then_some(raw.$field)
            }};
        }
        Some(TcpInfo {
            state: raw.tcpi_state,
            ca_state: raw.tcpi_ca_state,
            snd_mss: raw.tcpi_snd_mss,
            unacked: raw.tcpi_unacked,
            sacked: raw.tcpi_sacked,
            lost: raw.tcpi_lost,
            retrans: raw.tcpi_retrans,
            srtt_us: raw.tcpi_rtt,
            rttvar_us: raw.tcpi_rttvar,
            snd_ssthresh: raw.tcpi_snd_ssthresh,
            snd_cwnd: raw.tcpi_snd_cwnd,
            reordering: raw.tcpi_reordering,
            total_retrans: raw.tcpi_total_retrans,
            pacing_rate_bytes_per_s: newer!(tcpi_pacing_rate),
            bytes_acked: newer!(tcpi_bytes_acked),
            min_rtt_us: newer!(tcpi_min_rtt),
            delivery_rate_bytes_per_s: newer!(tcpi_delivery_rate),
            notsent_bytes: newer!(tcpi_notsent_bytes),
            busy_time_us: newer!(tcpi_busy_time),
            rwnd_limited_us: newer!(tcpi_rwnd_limited),
            sndbuf_limited_us: newer!(tcpi_sndbuf_limited),
            bytes_retrans: newer!(tcpi_bytes_retrans),
            dsack_dups: newer!(tcpi_dsack_dups),
            reord_seen: newer!(tcpi_reord_seen),
            total_rto: newer!(tcpi_total_rto),
        })
    }

    /// Segments in flight, as Linux's `tcp_packets_in_flight` (module documentation).
    pub fn in_flight_segments(&self) -> u32 {
        (self.unacked + self.retrans).saturating_sub(self.sacked + self.lost)
    }

    /// Bytes in flight: [`TcpInfo::in_flight_segments`] times the MSS, plus the bytes written
    /// but not yet sent (`tcpi_notsent_bytes`, which the window will have to carry too).
    pub fn in_flight_bytes(&self) -> u64 {
        u64::from(self.in_flight_segments()) * u64::from(self.snd_mss)
            + u64::from(self.notsent_bytes.unwrap_or(0))
    }

    /// The kernel's name of `tcpi_ca_state` (`enum tcp_ca_state`, include/uapi/linux/tcp.h).
    pub fn ca_state_name(&self) -> &'static str {
        match self.ca_state {
            0 => "open",
            1 => "disorder",
            2 => "cwr",
            3 => "recovery",
            4 => "loss",
            _ => "unknown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    #[test]
    fn libc_lays_the_structure_out_at_the_uapi_offsets() {
        // The offsets of include/uapi/linux/tcp.h (all members naturally aligned, no padding).
        let offsets = [
            (offset_of!(libc::tcp_info, tcpi_ca_state), 1),
            (offset_of!(libc::tcp_info, tcpi_snd_mss), 16),
            (offset_of!(libc::tcp_info, tcpi_unacked), 24),
            (offset_of!(libc::tcp_info, tcpi_sacked), 28),
            (offset_of!(libc::tcp_info, tcpi_lost), 32),
            (offset_of!(libc::tcp_info, tcpi_retrans), 36),
            (offset_of!(libc::tcp_info, tcpi_rtt), 68),
            (offset_of!(libc::tcp_info, tcpi_rttvar), 72),
            (offset_of!(libc::tcp_info, tcpi_snd_ssthresh), 76),
            (offset_of!(libc::tcp_info, tcpi_snd_cwnd), 80),
            (offset_of!(libc::tcp_info, tcpi_reordering), 88),
            (offset_of!(libc::tcp_info, tcpi_total_retrans), 100),
            (offset_of!(libc::tcp_info, tcpi_pacing_rate), 104),
            (offset_of!(libc::tcp_info, tcpi_bytes_acked), 120),
            (offset_of!(libc::tcp_info, tcpi_notsent_bytes), 144),
            (offset_of!(libc::tcp_info, tcpi_min_rtt), 148),
            (offset_of!(libc::tcp_info, tcpi_delivery_rate), 160),
            (offset_of!(libc::tcp_info, tcpi_busy_time), 168),
            (offset_of!(libc::tcp_info, tcpi_rwnd_limited), 176),
            (offset_of!(libc::tcp_info, tcpi_sndbuf_limited), 184),
            (offset_of!(libc::tcp_info, tcpi_bytes_retrans), 208),
            (offset_of!(libc::tcp_info, tcpi_dsack_dups), 216),
            (offset_of!(libc::tcp_info, tcpi_reord_seen), 220),
            (offset_of!(libc::tcp_info, tcpi_total_rto), 240),
        ];
        for (libc_offset, uapi_offset) in offsets {
            assert_eq!(libc_offset, uapi_offset);
        }
        assert_eq!(TCP_INFO_MIN_LEN, 104);
    }

    fn raw_sample() -> libc::tcp_info {
        // SAFETY: plain integers.
        let mut raw: libc::tcp_info = unsafe { std::mem::zeroed() };
        raw.tcpi_state = 1;
        raw.tcpi_ca_state = 3;
        raw.tcpi_snd_mss = 1448;
        raw.tcpi_snd_cwnd = 42;
        raw.tcpi_rtt = 20_500;
        raw.tcpi_total_retrans = 7;
        raw.tcpi_reordering = 9;
        (raw.tcpi_unacked, raw.tcpi_sacked, raw.tcpi_lost, raw.tcpi_retrans) = (40, 12, 3, 2);
        raw.tcpi_pacing_rate = 7_000_000;
        raw.tcpi_notsent_bytes = 999;
        raw.tcpi_min_rtt = 20_000;
        raw.tcpi_delivery_rate = 6_250_000;
        raw.tcpi_rwnd_limited = 1234;
        raw.tcpi_dsack_dups = 4;
        raw.tcpi_reord_seen = 5;
        raw.tcpi_total_rto = 2;
        raw
    }

    #[test]
    fn decodes_every_field_the_kernel_wrote() {
        let i = TcpInfo::from_raw(&raw_sample(), size_of::<libc::tcp_info>()).unwrap();
        assert_eq!(
            (i.state, i.ca_state, i.snd_cwnd, i.srtt_us, i.total_retrans),
            (1, 3, 42, 20_500, 7)
        );
        assert_eq!((i.unacked, i.sacked, i.lost, i.retrans), (40, 12, 3, 2));
        assert_eq!((i.reordering, i.rwnd_limited_us, i.reord_seen), (9, Some(1234), Some(5)));
        assert_eq!((i.dsack_dups, i.total_rto), (Some(4), Some(2)));
        assert_eq!((i.notsent_bytes, i.min_rtt_us), (Some(999), Some(20_000)));
        assert_eq!(i.delivery_rate_bytes_per_s, Some(6_250_000));
        assert_eq!(i.ca_state_name(), "recovery");
    }

    #[test]
    fn fields_the_kernel_did_not_write_read_as_absent() {
        let raw = raw_sample();
        // An old kernel's structure ends before tcpi_notsent_bytes.
        let i = TcpInfo::from_raw(&raw, offset_of!(libc::tcp_info, tcpi_notsent_bytes)).unwrap();
        assert_eq!(i.pacing_rate_bytes_per_s, Some(7_000_000));
        assert_eq!(
            (i.notsent_bytes, i.min_rtt_us, i.delivery_rate_bytes_per_s),
            (None, None, None)
        );
        // A 2.6-era kernel returns only the first 104 bytes.
        let i = TcpInfo::from_raw(&raw, TCP_INFO_MIN_LEN).unwrap();
        assert_eq!((i.pacing_rate_bytes_per_s, i.busy_time_us, i.dsack_dups), (None, None, None));
        assert_eq!(i.snd_cwnd, 42);
        assert!(TcpInfo::from_raw(&raw, TCP_INFO_MIN_LEN - 1).is_none());
    }

    #[test]
    fn in_flight_counts_segments_as_tcp_packets_in_flight_plus_unsent_bytes() {
        // 20 segments out, 3 SACKed, 2 marked lost, 1 of them retransmitted: 20 - 5 + 1 = 16
        // segments of 1448 bytes = 23 168, plus 5000 bytes written but not sent.
        let info = TcpInfo {
            snd_mss: 1448,
            unacked: 20,
            sacked: 3,
            lost: 2,
            retrans: 1,
            notsent_bytes: Some(5000),
            ..TcpInfo::default()
        };
        assert_eq!(info.in_flight_segments(), 16);
        assert_eq!(info.in_flight_bytes(), 23_168 + 5000);
        assert_eq!(TcpInfo { notsent_bytes: None, ..info }.in_flight_bytes(), 23_168);
    }

    #[test]
    fn a_live_connection_reads_as_established_with_an_mss() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (_s, _) = l.accept().unwrap();
        let i = TcpInfo::read(c.as_raw_fd()).unwrap();
        assert_eq!(i.state, 1);
        // Loopback MTU 65536: the MSS is tens of kilobytes, never zero; cwnd starts at IW10.
        assert!(i.snd_mss > 1000, "{i:?}");
        assert_eq!(i.snd_cwnd, 10);
        assert_eq!(i.in_flight_segments(), 0, "nothing sent yet");
        assert!(i.delivery_rate_bytes_per_s.is_some(), "Linux 4.9 and later: {i:?}");
    }
}
