//! What a kernel TCP socket tells the scheduler: its `TCP_INFO` ([`crate::linux::TcpInfo`]) as
//! braid-core's [`StreamPathState`].
//!
//! The window the scheduler fills is the kernel's: `tcpi_snd_cwnd` segments of `tcpi_snd_mss`
//! bytes. In flight is what the kernel holds against it ([`TcpInfo::in_flight_bytes`]: Linux's
//! `tcp_packets_in_flight` times the MSS, plus the bytes written but not yet sent). Fields that
//! came with Linux 4.6 to 4.9 (`tcpi_notsent_bytes`, `tcpi_min_rtt`, `tcpi_delivery_rate`) count
//! as 0 (no sample) when the kernel did not write them.

use std::time::Duration;

use braid_core::cc::CcPhase;
use braid_core::tunnel::StreamPathState;

use crate::linux::tcp_info::{TcpInfo, INFINITE_SSTHRESH};

/// The socket's state as the stream sender takes it; `pending_bytes` written by the tunnel but
/// not yet taken by the socket count as in flight too.
pub fn path_state(info: &TcpInfo, pending_bytes: u64) -> StreamPathState {
    let us = |v: u32| Duration::from_micros(u64::from(v));
    let min_rtt_us = info.min_rtt_us.unwrap_or(0);
    let pacing_rate = info.pacing_rate_bytes_per_s.unwrap_or(0);
    let delivery_rate = info.delivery_rate_bytes_per_s.unwrap_or(0);
    StreamPathState {
        cwnd_bytes: u64::from(info.snd_cwnd) * u64::from(info.snd_mss),
        in_flight_bytes: info.in_flight_bytes() + pending_bytes,
        srtt: (info.srtt_us > 0).then(|| us(info.srtt_us)),
        rttvar: us(info.rttvar_us),
        min_rtt: (min_rtt_us > 0 && min_rtt_us != u32::MAX).then(|| us(min_rtt_us)),
        mss_bytes: u64::from(info.snd_mss),
        pacing_rate_bytes_per_s: (pacing_rate != u64::MAX && pacing_rate > 0)
            .then_some(pacing_rate),
        delivery_rate_bytes_per_s: (delivery_rate > 0).then_some(delivery_rate),
        phase: phase(info),
        is_up: true,
    }
}

/// The kernel's `tcpi_ca_state` (enum tcp_ca_state, include/uapi/linux/tcp.h) as a phase. The
/// kernel does not export its controller's own phase (BBR's startup or probe_bw), so the open
/// state is slow start while the window is below a set ssthresh or none is set (BBR never sets
/// one, and reads as slow start throughout), congestion avoidance after.
pub fn phase(info: &TcpInfo) -> CcPhase {
    match info.ca_state {
        2 | 3 => CcPhase::Recovery, // TCP_CA_CWR, TCP_CA_Recovery
        4 => CcPhase::Loss,         // TCP_CA_Loss
        _ if info.snd_ssthresh >= INFINITE_SSTHRESH || info.snd_cwnd < info.snd_ssthresh => {
            CcPhase::SlowStart
        }
        _ => CcPhase::CongestionAvoidance, // TCP_CA_Open, TCP_CA_Disorder
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_the_kernels_and_in_flight_includes_the_tunnels_pending_bytes() {
        // 16 segments of 1448 bytes in flight (see TcpInfo::in_flight_segments) = 23 168,
        // plus 5000 bytes written but not sent.
        let info = TcpInfo {
            snd_mss: 1448,
            snd_cwnd: 30,
            unacked: 20,
            sacked: 3,
            lost: 2,
            retrans: 1,
            notsent_bytes: Some(5000),
            ..TcpInfo::default()
        };
        let s = path_state(&info, 700);
        assert_eq!(s.cwnd_bytes, 30 * 1448);
        assert_eq!(s.in_flight_bytes, 23_168 + 5000 + 700, "the tunnel's own pending bytes too");
        assert!(s.is_up);
    }

    #[test]
    fn fields_the_kernel_did_not_write_are_no_samples() {
        let info = TcpInfo { snd_mss: 1448, ..TcpInfo::default() };
        let s = path_state(&info, 0);
        assert_eq!(
            (s.min_rtt, s.delivery_rate_bytes_per_s, s.pacing_rate_bytes_per_s),
            (None, None, None)
        );
        let info = TcpInfo {
            min_rtt_us: Some(20_000),
            delivery_rate_bytes_per_s: Some(6_000_000),
            pacing_rate_bytes_per_s: Some(u64::MAX),
            ..info
        };
        let s = path_state(&info, 0);
        assert_eq!(s.min_rtt, Some(Duration::from_millis(20)));
        assert_eq!(s.delivery_rate_bytes_per_s, Some(6_000_000));
        assert_eq!(s.pacing_rate_bytes_per_s, None, "u64::MAX: not paced");
        assert_eq!(s.srtt, None, "no RTT sample yet");
    }

    #[test]
    fn ca_states_map_to_phases() {
        let open = TcpInfo { snd_cwnd: 10, snd_ssthresh: INFINITE_SSTHRESH, ..TcpInfo::default() };
        assert_eq!(phase(&open), CcPhase::SlowStart);
        assert_eq!(phase(&TcpInfo { snd_ssthresh: 8, ..open }), CcPhase::CongestionAvoidance);
        assert_eq!(phase(&TcpInfo { snd_ssthresh: 20, ..open }), CcPhase::SlowStart);
        assert_eq!(phase(&TcpInfo { ca_state: 3, ..open }), CcPhase::Recovery);
        assert_eq!(phase(&TcpInfo { ca_state: 4, ..open }), CcPhase::Loss);
        assert_eq!(TcpInfo { ca_state: 4, ..open }.ca_state_name(), "loss");
    }
}
