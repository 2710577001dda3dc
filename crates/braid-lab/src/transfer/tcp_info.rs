//! The kernel's `TCP_INFO` of a socket: cwnd, srtt, retransmissions, delivery rate.
//!
//! Layout: `struct tcp_info` in `include/uapi/linux/tcp.h`, filled by `tcp_get_info()` in
//! `net/ipv4/tcp.c`. The struct grew over the years; the kernel copies
//! `min(optlen, sizeof(struct tcp_info))` bytes, so we decode from the returned length and leave
//! fields that an older kernel did not return as `None`. Offsets are those of the header (all
//! members naturally aligned, no padding).

use std::io;
use std::os::fd::RawFd;

use serde::{Deserialize, Serialize};

const OFF_STATE: usize = 0;
const OFF_CA_STATE: usize = 1;
const OFF_SND_MSS: usize = 16;
/// `tcpi_unacked`, `tcpi_sacked`, `tcpi_lost`, `tcpi_retrans`: segments, from which Linux's
/// `tcp_packets_in_flight` is `unacked - sacked - lost + retrans`.
const OFF_UNACKED: usize = 24;
const OFF_SACKED: usize = 28;
const OFF_LOST: usize = 32;
const OFF_RETRANS: usize = 36;
const OFF_RTT_US: usize = 68;
const OFF_RTTVAR_US: usize = 72;
const OFF_SND_SSTHRESH: usize = 76;
const OFF_SND_CWND: usize = 80;
/// `tcpi_reordering`: the sender's reordering degree, segments (3 until it sees reordering).
const OFF_REORDERING: usize = 88;
const OFF_TOTAL_RETRANS: usize = 100;
/// `tcpi_pacing_rate` (Linux 4.0), bytes per second.
const OFF_PACING_RATE: usize = 104;
/// `tcpi_bytes_acked` (Linux 4.1).
const OFF_BYTES_ACKED: usize = 120;
/// `tcpi_min_rtt` (Linux 4.9), microseconds.
const OFF_MIN_RTT_US: usize = 148;
/// `tcpi_notsent_bytes` (Linux 4.6).
const OFF_NOTSENT_BYTES: usize = 144;
/// `tcpi_delivery_rate` (Linux 4.9), bytes per second.
const OFF_DELIVERY_RATE: usize = 160;
/// `tcpi_busy_time`, `tcpi_rwnd_limited`, `tcpi_sndbuf_limited` (Linux 4.10), microseconds:
/// how long the connection had data to send, and of that how long the receive window or the
/// send buffer (not cwnd) held it back (`tcp_chrono_*` in net/ipv4/tcp_output.c).
const OFF_BUSY_TIME_US: usize = 168;
const OFF_RWND_LIMITED_US: usize = 176;
const OFF_SNDBUF_LIMITED_US: usize = 184;
/// `tcpi_bytes_retrans` (Linux 4.19).
const OFF_BYTES_RETRANS: usize = 208;
/// `tcpi_dsack_dups` and `tcpi_reord_seen` (Linux 5.0): duplicate segments the receiver
/// reported by DSACK, and reordering events the sender detected.
const OFF_DSACK_DUPS: usize = 216;
const OFF_REORD_SEEN: usize = 220;
/// `tcpi_total_rto` (Linux 6.7): retransmission timeouts of the connection.
const OFF_TOTAL_RTO: usize = 240;
/// Size of `struct tcp_info` in Linux 6.7 and later; we ask for this much.
const TCP_INFO_LEN: usize = 248;
/// The original 2.6 struct, which every kernel returns at least.
const TCP_INFO_MIN_LEN: usize = 104;

/// What the test bed reads from `TCP_INFO`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpInfo {
    /// `TCP_ESTABLISHED` is 1 (include/net/tcp_states.h).
    pub state: u8,
    /// Open 0, Disorder 1, CWR 2, Recovery 3, Loss 4 (`enum tcp_ca_state`).
    pub ca_state: u8,
    pub snd_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    /// Smoothed RTT, microseconds.
    pub srtt_us: u32,
    pub rttvar_us: u32,
    pub snd_ssthresh: u32,
    /// Congestion window, packets.
    pub snd_cwnd: u32,
    /// Reordering degree, segments.
    pub reordering: u32,
    pub total_retrans: u32,
    pub pacing_rate_bytes_per_s: Option<u64>,
    pub bytes_acked: Option<u64>,
    pub min_rtt_us: Option<u32>,
    pub delivery_rate_bytes_per_s: Option<u64>,
    pub notsent_bytes: Option<u32>,
    pub busy_time_us: Option<u64>,
    pub rwnd_limited_us: Option<u64>,
    pub sndbuf_limited_us: Option<u64>,
    pub bytes_retrans: Option<u64>,
    pub dsack_dups: Option<u32>,
    pub reord_seen: Option<u32>,
    pub total_rto: Option<u16>,
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(off..off + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(off..off + 8)?.try_into().ok()?))
}

fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(off..off + 2)?.try_into().ok()?))
}

impl TcpInfo {
    /// Decodes the bytes `getsockopt(TCP_INFO)` returned; `None` if shorter than the original
    /// struct.
    pub fn decode(b: &[u8]) -> Option<TcpInfo> {
        if b.len() < TCP_INFO_MIN_LEN {
            return None;
        }
        Some(TcpInfo {
            state: b[OFF_STATE],
            ca_state: b[OFF_CA_STATE],
            snd_mss: u32_at(b, OFF_SND_MSS)?,
            unacked: u32_at(b, OFF_UNACKED)?,
            sacked: u32_at(b, OFF_SACKED)?,
            lost: u32_at(b, OFF_LOST)?,
            retrans: u32_at(b, OFF_RETRANS)?,
            srtt_us: u32_at(b, OFF_RTT_US)?,
            rttvar_us: u32_at(b, OFF_RTTVAR_US)?,
            snd_ssthresh: u32_at(b, OFF_SND_SSTHRESH)?,
            snd_cwnd: u32_at(b, OFF_SND_CWND)?,
            reordering: u32_at(b, OFF_REORDERING)?,
            total_retrans: u32_at(b, OFF_TOTAL_RETRANS)?,
            pacing_rate_bytes_per_s: u64_at(b, OFF_PACING_RATE),
            bytes_acked: u64_at(b, OFF_BYTES_ACKED),
            min_rtt_us: u32_at(b, OFF_MIN_RTT_US),
            delivery_rate_bytes_per_s: u64_at(b, OFF_DELIVERY_RATE),
            notsent_bytes: u32_at(b, OFF_NOTSENT_BYTES),
            busy_time_us: u64_at(b, OFF_BUSY_TIME_US),
            rwnd_limited_us: u64_at(b, OFF_RWND_LIMITED_US),
            sndbuf_limited_us: u64_at(b, OFF_SNDBUF_LIMITED_US),
            bytes_retrans: u64_at(b, OFF_BYTES_RETRANS),
            dsack_dups: u32_at(b, OFF_DSACK_DUPS),
            reord_seen: u32_at(b, OFF_REORD_SEEN),
            total_rto: u16_at(b, OFF_TOTAL_RTO),
        })
    }

    /// Reads `TCP_INFO` of socket `fd`.
    pub fn read(fd: RawFd) -> io::Result<TcpInfo> {
        let mut buf = [0u8; TCP_INFO_LEN];
        let mut len = TCP_INFO_LEN as libc::socklen_t;
        let rc = unsafe {
            libc::getsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_INFO,
                buf.as_mut_ptr().cast(),
                &mut len,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        TcpInfo::decode(&buf[..len as usize]).ok_or_else(|| {
            io::Error::other(format!(
                "TCP_INFO returned {len} bytes, fewer than {TCP_INFO_MIN_LEN}"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    #[test]
    fn decodes_fields_at_the_uapi_offsets() {
        let mut b = vec![0u8; TCP_INFO_LEN];
        b[OFF_STATE] = 1;
        b[OFF_CA_STATE] = 3;
        b[OFF_SND_CWND..OFF_SND_CWND + 4].copy_from_slice(&42u32.to_ne_bytes());
        b[OFF_RTT_US..OFF_RTT_US + 4].copy_from_slice(&20_500u32.to_ne_bytes());
        b[OFF_TOTAL_RETRANS..OFF_TOTAL_RETRANS + 4].copy_from_slice(&7u32.to_ne_bytes());
        b[OFF_DELIVERY_RATE..OFF_DELIVERY_RATE + 8].copy_from_slice(&6_250_000u64.to_ne_bytes());
        b[OFF_TOTAL_RTO..OFF_TOTAL_RTO + 2].copy_from_slice(&2u16.to_ne_bytes());
        b[OFF_REORDERING..OFF_REORDERING + 4].copy_from_slice(&9u32.to_ne_bytes());
        b[OFF_RWND_LIMITED_US..OFF_RWND_LIMITED_US + 8].copy_from_slice(&1234u64.to_ne_bytes());
        b[OFF_REORD_SEEN..OFF_REORD_SEEN + 4].copy_from_slice(&5u32.to_ne_bytes());
        for (off, v) in [(OFF_UNACKED, 40u32), (OFF_SACKED, 12), (OFF_LOST, 3), (OFF_RETRANS, 2)] {
            b[off..off + 4].copy_from_slice(&v.to_ne_bytes());
        }
        let i = TcpInfo::decode(&b).unwrap();
        assert_eq!((i.reordering, i.rwnd_limited_us, i.reord_seen), (9, Some(1234), Some(5)));
        assert_eq!((i.unacked, i.sacked, i.lost, i.retrans), (40, 12, 3, 2));
        assert_eq!(
            (i.state, i.ca_state, i.snd_cwnd, i.srtt_us, i.total_retrans),
            (1, 3, 42, 20_500, 7)
        );
        assert_eq!(i.delivery_rate_bytes_per_s, Some(6_250_000));
        assert_eq!(i.total_rto, Some(2));
    }

    #[test]
    fn a_short_struct_leaves_newer_fields_out() {
        // A 2.6-era kernel returns only the first 104 bytes.
        let i = TcpInfo::decode(&[0u8; TCP_INFO_MIN_LEN]).unwrap();
        assert_eq!(i.pacing_rate_bytes_per_s, None);
        assert_eq!(i.delivery_rate_bytes_per_s, None);
        assert_eq!((i.busy_time_us, i.dsack_dups), (None, None));
        assert!(TcpInfo::decode(&[0u8; TCP_INFO_MIN_LEN - 1]).is_none());
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
    }
}
