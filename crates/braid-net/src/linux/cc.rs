//! The kernel's per-socket congestion control (`TCP_CONGESTION`, net/ipv4/tcp_cong.c).

use std::io;

use braid_core::cc::{CcAlgorithm, TunnelCc};
use serde::{Deserialize, Serialize};
use socket2::Socket;

braid_core::named_enum! {
    /// A congestion control the Linux kernel offers per socket: the tunnel's TCP paths run one
    /// (`tunnel.cc` with `transport = "tcp"`), and so does the test bed's end-to-end TCP. The
    /// names are those `TCP_CONGESTION` takes (`net/ipv4/tcp_cong.c`: `tcp_reno`, `cubictcp`,
    /// `tcp_bbr_cong_ops` register them; `/proc/sys/net/ipv4/tcp_available_congestion_control`
    /// lists them); `newreno`, the scenarios' name of `reno`, is accepted too.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum KernelCc {
        what = "kernel congestion control";
        Reno => "reno" | "newreno",
        Cubic => "cubic",
        Bbr => "bbr",
    }
}

impl KernelCc {
    /// The controller of a kernel name, or of `newreno` (the scenarios' name of `reno`).
    pub fn from_name(name: &str) -> Option<KernelCc> {
        name.parse().ok()
    }

    /// The kernel controller for a tunnel CC name, if the kernel has one (the mapping is
    /// braid-config's, which validation uses too).
    pub fn for_tunnel_cc(cc: TunnelCc) -> Option<KernelCc> {
        braid_config::transport::kernel_cc_name(cc).and_then(KernelCc::from_name)
    }

    /// The kernel algorithm for a scenario's `e2e.cc`: NewReno is the kernel's `reno` (which
    /// implements RFC 5681 with NewReno recovery, RFC 6582); BBRv2/v3 are not in mainline Linux.
    pub fn for_e2e_cc(cc: CcAlgorithm) -> Option<KernelCc> {
        match cc {
            CcAlgorithm::NewReno => Some(KernelCc::Reno),
            CcAlgorithm::Cubic => Some(KernelCc::Cubic),
            CcAlgorithm::Bbr => Some(KernelCc::Bbr),
            _ => None,
        }
    }
}

/// Asks for `cc` on the socket (`TCP_CONGESTION`). An error means the kernel refused: not
/// built, or not in `tcp_allowed_congestion_control` without CAP_NET_ADMIN.
pub fn request_congestion_control(sock: &Socket, cc: KernelCc) -> io::Result<()> {
    sock.set_tcp_congestion(cc.as_str().as_bytes())
}

/// Sets the socket's congestion control and reads it back. An error means the kernel refused
/// ([`request_congestion_control`]), or read back another name.
pub fn set_congestion_control(sock: &Socket, cc: KernelCc) -> io::Result<()> {
    request_congestion_control(sock, cc)?;
    let got = congestion_control(sock)?;
    if got != cc.as_str() {
        return Err(io::Error::other(format!("the kernel runs {got:?} instead")));
    }
    Ok(())
}

/// The socket's congestion control name (the kernel pads it with NULs).
pub fn congestion_control(sock: &Socket) -> io::Result<String> {
    let raw = sock.tcp_congestion()?;
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    Ok(String::from_utf8_lossy(&raw[..end]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_kernel_controllers_map_to_kernel_names() {
        assert_eq!(KernelCc::for_tunnel_cc(TunnelCc::NewReno).map(KernelCc::as_str), Some("reno"));
        assert_eq!(KernelCc::for_tunnel_cc(TunnelCc::Bbr).map(KernelCc::as_str), Some("bbr"));
        assert_eq!(KernelCc::for_tunnel_cc(TunnelCc::Bbr2), None);
        assert_eq!(KernelCc::for_tunnel_cc(TunnelCc::Ccid2), None);
        assert_eq!(KernelCc::for_e2e_cc(CcAlgorithm::NewReno), Some(KernelCc::Reno));
        assert_eq!(KernelCc::for_e2e_cc(CcAlgorithm::Cubic), Some(KernelCc::Cubic));
        assert_eq!(KernelCc::for_e2e_cc(CcAlgorithm::Bbr), Some(KernelCc::Bbr));
        assert_eq!(KernelCc::for_e2e_cc(CcAlgorithm::Bbr2), None);
    }

    #[test]
    fn names_parse_and_serialise_as_the_kernel_spells_them() {
        for cc in [KernelCc::Reno, KernelCc::Cubic, KernelCc::Bbr] {
            assert_eq!(KernelCc::from_name(cc.as_str()), Some(cc));
            assert_eq!(serde_json::to_string(&cc).unwrap(), format!("\"{}\"", cc.as_str()));
        }
        assert_eq!(KernelCc::from_name("newreno"), Some(KernelCc::Reno));
        assert_eq!(KernelCc::from_name("vegas"), None);
    }

    #[test]
    fn a_real_socket_runs_the_congestion_control_set_on_it() {
        let sock = Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        // reno is built into every kernel and always allowed.
        set_congestion_control(&sock, KernelCc::Reno).unwrap();
        assert_eq!(congestion_control(&sock).unwrap(), "reno");
    }
}
