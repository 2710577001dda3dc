//! What the Linux kernel tells about, and does for, a TCP socket: its state (`TCP_INFO`,
//! [`tcp_info`]) and its congestion control (`TCP_CONGESTION`, [`cc`]).
//!
//! Written once here for the tunnel's TCP paths (`tcp_path`) and the test bed (braid-lab), so
//! both read the kernel the same way. A leaf module: it imports nothing from the rest of
//! braid-net.

pub mod cc;
pub mod tcp_info;

pub use cc::{congestion_control, request_congestion_control, set_congestion_control, KernelCc};
pub use tcp_info::TcpInfo;
