//! What a kernel TCP socket tells the scheduler: its congestion control (`TCP_CONGESTION`) and
//! its state (`TCP_INFO`, Linux `tcp_get_info` in net/ipv4/tcp.c).
//!
//! The window the scheduler fills is the kernel's: `tcpi_snd_cwnd` segments of `tcpi_snd_mss`
//! bytes. In flight is what the kernel holds against it, as Linux's `tcp_packets_in_flight`
//! (include/net/tcp.h) counts segments: `packets_out - (sacked_out + lost_out) + retrans_out`,
//! which TCP_INFO exports as `tcpi_unacked`, `tcpi_sacked`, `tcpi_lost` and `tcpi_retrans`;
//! times the MSS, plus `tcpi_notsent_bytes`, the bytes written but not yet sent (held back by
//! the window or pacing), which the window will have to carry too. `tcpi_notsent_bytes`,
//! `tcpi_min_rtt` and `tcpi_delivery_rate` came with Linux 4.6 to 4.9; the kernel copies as much
//! of the structure as it has, so each is read only if the returned length covers it.

use std::io;
use std::mem::{offset_of, size_of};
use std::os::fd::RawFd;
use std::time::Duration;

use braid_core::cc::{CcPhase, TunnelCc};
use braid_core::tunnel::StreamPathState;
use socket2::Socket;

/// Linux `TCP_INFINITE_SSTHRESH`: no slow-start threshold set yet.
const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// A congestion control the kernel runs for a TCP path (`tunnel.cc` with `transport = "tcp"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelCc {
    Reno,
    Cubic,
    Bbr,
}

impl KernelCc {
    /// `tunnel.cc` values a TCP path can run, as configs spell them.
    pub const ALLOWED: &'static [&'static str] = &["newreno", "cubic", "bbr"];

    /// The kernel controller for a tunnel CC name, if the kernel has one.
    pub fn for_tunnel_cc(cc: TunnelCc) -> Option<KernelCc> {
        match cc {
            TunnelCc::NewReno => Some(KernelCc::Reno),
            TunnelCc::Cubic => Some(KernelCc::Cubic),
            TunnelCc::Bbr => Some(KernelCc::Bbr),
            _ => None,
        }
    }

    /// The kernel's name (`/proc/sys/net/ipv4/tcp_available_congestion_control`).
    pub fn name(self) -> &'static str {
        match self {
            KernelCc::Reno => "reno",
            KernelCc::Cubic => "cubic",
            KernelCc::Bbr => "bbr",
        }
    }
}

/// Sets the socket's congestion control and reads it back. An error means the kernel refused
/// (not built, or not in `tcp_allowed_congestion_control` without CAP_NET_ADMIN), or read back
/// another name.
pub fn set_congestion_control(sock: &Socket, cc: KernelCc) -> io::Result<()> {
    sock.set_tcp_congestion(cc.name().as_bytes())?;
    let got = congestion_control(sock)?;
    if got != cc.name() {
        return Err(io::Error::other(format!("the kernel runs {got:?} instead")));
    }
    Ok(())
}

/// The socket's congestion control name.
pub fn congestion_control(sock: &Socket) -> io::Result<String> {
    let raw = sock.tcp_congestion()?;
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    Ok(String::from_utf8_lossy(&raw[..end]).into_owned())
}

/// The fields of `TCP_INFO` the tunnel uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpInfo {
    pub ca_state: u8,
    pub snd_mss: u32,
    pub snd_cwnd: u32,
    pub snd_ssthresh: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub total_retrans: u32,
    pub rtt_us: u32,
    pub rttvar_us: u32,
    /// 0 when the kernel has no sample or no such field.
    pub min_rtt_us: u32,
    pub notsent_bytes: u32,
    /// Bytes per second; `u64::MAX` when the socket is not paced.
    pub pacing_rate: u64,
    pub delivery_rate: u64,
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
        Ok(TcpInfo::from_raw(&raw, len as usize))
    }

    /// The fields of `raw` of which the kernel wrote `len` bytes.
    fn from_raw(raw: &libc::tcp_info, len: usize) -> TcpInfo {
        let has = |offset: usize, size: usize| offset + size <= len;
        let min_rtt = offset_of!(libc::tcp_info, tcpi_min_rtt);
        let notsent = offset_of!(libc::tcp_info, tcpi_notsent_bytes);
        let delivery = offset_of!(libc::tcp_info, tcpi_delivery_rate);
        TcpInfo {
            ca_state: raw.tcpi_ca_state,
            snd_mss: raw.tcpi_snd_mss,
            snd_cwnd: raw.tcpi_snd_cwnd,
            snd_ssthresh: raw.tcpi_snd_ssthresh,
            unacked: raw.tcpi_unacked,
            sacked: raw.tcpi_sacked,
            lost: raw.tcpi_lost,
            retrans: raw.tcpi_retrans,
            total_retrans: raw.tcpi_total_retrans,
            rtt_us: raw.tcpi_rtt,
            rttvar_us: raw.tcpi_rttvar,
            min_rtt_us: if has(min_rtt, 4) { raw.tcpi_min_rtt } else { 0 },
            notsent_bytes: if has(notsent, 4) { raw.tcpi_notsent_bytes } else { 0 },
            pacing_rate: raw.tcpi_pacing_rate,
            delivery_rate: if has(delivery, 8) { raw.tcpi_delivery_rate } else { 0 },
        }
    }

    /// Bytes in flight as the module documentation says.
    pub fn in_flight_bytes(&self) -> u64 {
        let segs = (self.unacked + self.retrans).saturating_sub(self.sacked + self.lost);
        u64::from(segs) * u64::from(self.snd_mss) + u64::from(self.notsent_bytes)
    }

    /// The socket's state as the stream sender takes it; `pending_bytes` written by the tunnel
    /// but not yet taken by the socket count as in flight too.
    pub fn path_state(&self, pending_bytes: u64) -> StreamPathState {
        let us = |v: u32| Duration::from_micros(u64::from(v));
        StreamPathState {
            cwnd_bytes: u64::from(self.snd_cwnd) * u64::from(self.snd_mss),
            in_flight_bytes: self.in_flight_bytes() + pending_bytes,
            srtt: (self.rtt_us > 0).then(|| us(self.rtt_us)),
            rttvar: us(self.rttvar_us),
            min_rtt: (self.min_rtt_us > 0 && self.min_rtt_us != u32::MAX)
                .then(|| us(self.min_rtt_us)),
            mss_bytes: u64::from(self.snd_mss),
            pacing_rate_bytes_per_s: (self.pacing_rate != u64::MAX && self.pacing_rate > 0)
                .then_some(self.pacing_rate),
            delivery_rate_bytes_per_s: (self.delivery_rate > 0).then_some(self.delivery_rate),
            phase: self.phase(),
            is_up: true,
        }
    }

    /// The kernel's `tcpi_ca_state` (enum tcp_ca_state, include/uapi/linux/tcp.h) as a phase.
    /// The kernel does not export its controller's own phase (BBR's startup or probe_bw), so
    /// the open state is slow start while the window is below a set ssthresh or none is set
    /// (BBR never sets one, and reads as slow start throughout), congestion avoidance after.
    pub fn phase(&self) -> CcPhase {
        match self.ca_state {
            2 | 3 => CcPhase::Recovery, // TCP_CA_CWR, TCP_CA_Recovery
            4 => CcPhase::Loss,         // TCP_CA_Loss
            _ if self.snd_ssthresh >= INFINITE_SSTHRESH || self.snd_cwnd < self.snd_ssthresh => {
                CcPhase::SlowStart
            }
            _ => CcPhase::CongestionAvoidance, // TCP_CA_Open, TCP_CA_Disorder
        }
    }

    /// The kernel's name of `tcpi_ca_state`, for the status page.
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

    #[test]
    fn in_flight_counts_segments_as_tcp_packets_in_flight_plus_unsent_bytes() {
        // 20 segments out, 3 SACKed, 2 marked lost, 1 of them retransmitted: 20 - 5 + 1 = 16
        // segments of 1448 bytes = 23 168, plus 5000 bytes written but not sent.
        let info = TcpInfo {
            snd_mss: 1448,
            snd_cwnd: 30,
            unacked: 20,
            sacked: 3,
            lost: 2,
            retrans: 1,
            notsent_bytes: 5000,
            ..TcpInfo::default()
        };
        assert_eq!(info.in_flight_bytes(), 23_168 + 5000);
        let s = info.path_state(700);
        assert_eq!(s.cwnd_bytes, 30 * 1448);
        assert_eq!(s.in_flight_bytes, 23_168 + 5000 + 700, "the tunnel's own pending bytes too");
        assert!(s.is_up);
    }

    #[test]
    fn fields_the_kernel_did_not_write_read_as_absent() {
        let mut raw: libc::tcp_info = unsafe { std::mem::zeroed() };
        raw.tcpi_snd_mss = 1448;
        raw.tcpi_notsent_bytes = 999;
        raw.tcpi_min_rtt = 20_000;
        raw.tcpi_delivery_rate = 6_000_000;
        // An old kernel's structure ends before tcpi_notsent_bytes.
        let old = offset_of!(libc::tcp_info, tcpi_notsent_bytes);
        let info = TcpInfo::from_raw(&raw, old);
        assert_eq!((info.notsent_bytes, info.min_rtt_us, info.delivery_rate), (0, 0, 0));
        let info = TcpInfo::from_raw(&raw, size_of::<libc::tcp_info>());
        assert_eq!((info.notsent_bytes, info.min_rtt_us), (999, 20_000));
        let s = info.path_state(0);
        assert_eq!(s.min_rtt, Some(Duration::from_millis(20)));
        assert_eq!(s.delivery_rate_bytes_per_s, Some(6_000_000));
        assert_eq!(s.srtt, None, "no RTT sample yet");
    }

    #[test]
    fn ca_states_map_to_phases() {
        let open = TcpInfo { snd_cwnd: 10, snd_ssthresh: INFINITE_SSTHRESH, ..TcpInfo::default() };
        assert_eq!(open.phase(), CcPhase::SlowStart);
        assert_eq!(TcpInfo { snd_ssthresh: 8, ..open }.phase(), CcPhase::CongestionAvoidance);
        assert_eq!(TcpInfo { snd_ssthresh: 20, ..open }.phase(), CcPhase::SlowStart);
        assert_eq!(TcpInfo { ca_state: 3, ..open }.phase(), CcPhase::Recovery);
        assert_eq!(TcpInfo { ca_state: 4, ..open }.phase(), CcPhase::Loss);
        assert_eq!(TcpInfo { ca_state: 4, ..open }.ca_state_name(), "loss");
    }

    #[test]
    fn only_kernel_controllers_map_to_kernel_names() {
        assert_eq!(KernelCc::for_tunnel_cc(TunnelCc::NewReno).map(KernelCc::name), Some("reno"));
        assert_eq!(KernelCc::for_tunnel_cc(TunnelCc::Bbr).map(KernelCc::name), Some("bbr"));
        assert_eq!(KernelCc::for_tunnel_cc(TunnelCc::Bbr2), None);
        assert_eq!(KernelCc::for_tunnel_cc(TunnelCc::Ccid2), None);
    }

    #[test]
    fn a_real_socket_runs_the_congestion_control_set_on_it() {
        let sock = Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        // reno is built into every kernel and always allowed.
        set_congestion_control(&sock, KernelCc::Reno).unwrap();
        assert_eq!(congestion_control(&sock).unwrap(), "reno");
    }
}
