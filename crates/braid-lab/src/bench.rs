//! `braid bench tunnel`: kernel TCP through one tunnel path over an unlimited veth pair, next to
//! the same transfer over the veth without the tunnel, with the tunnel's CPU cost.
//!
//! Two namespaces joined by one veth pair with the kernel's default offloads (an unlimited,
//! delay-free link: what the tunnel itself costs is all that is measured). The baseline is a
//! TCP download over the veth; the tunnel run is the same download to the client's tunnel
//! address through a `braid tunnel` pair with one path. CPU is the user + system time of both
//! daemons over the tunnel transfer (from `/proc/PID/stat`), per Gbit carried.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use braid_net::crypto::Cipher;
use serde::Serialize;

use crate::host::process_cpu_seconds;
use crate::netns::{unique_prefix, veth_pair, NetError, Netns};
use crate::topology::Endpoint;
use crate::transfer::{run_pair, KernelCc, ReceiverConfig, SenderConfig, TransferError};
use crate::tunnel::{TunnelPair, TunnelSpec};

const PORT: u16 = 5201;

/// What one benchmark run measured.
#[derive(Clone, Debug, Serialize)]
pub struct TunnelBench {
    pub bytes: u64,
    pub cc: String,
    pub tunnel_cc: String,
    /// The tunnel's AEAD (`interface.cipher`).
    pub cipher: String,
    pub baseline_gbps: f64,
    pub tunnel_gbps: f64,
    /// Tunnel throughput over baseline throughput.
    pub ratio: f64,
    /// CPU seconds of both daemons (user + system) per Gbit carried through the tunnel.
    pub cpu_s_per_gbit: f64,
    /// Both daemons' CPU over the transfer, in cores (1.0 = one core busy throughout).
    pub cpu_cores: f64,
}

/// An error of the benchmark.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Net(#[from] NetError),
    #[error(transparent)]
    Transfer(#[from] TransferError),
}

/// Runs the benchmark: `bytes` per transfer, E2E congestion control `cc`, the tunnel's
/// settings `tunnel` (a scenario's `[tunnel]` section) and AEAD `cipher`.
pub fn tunnel_bench(
    braid_exe: &std::path::Path,
    bytes: u64,
    cc: KernelCc,
    tunnel: &braid_config::TunnelConfig,
    cipher: Cipher,
) -> Result<TunnelBench, BenchError> {
    crate::netns::require_net_admin()?;
    let prefix = unique_prefix("bb");
    let a = Netns::create(&format!("{prefix}-a"))?;
    let b = Netns::create(&format!("{prefix}-b"))?;
    veth_pair(&a, "bv0", &b, "bv1")?;
    let end = |ns: &Netns, ifname: &str, host: u8| Endpoint {
        netns: ns.name().into(),
        ifname: ifname.into(),
        addr: std::net::Ipv4Addr::new(10, 89, 0, host),
        prefix_len: 24,
    };
    let (ea, eb) = (end(&a, "bv0", 1), end(&b, "bv1", 2));
    for (ns, e) in [(&a, &ea), (&b, &eb)] {
        ns.ip(&["addr", "add", &e.cidr(), "dev", &e.ifname])?;
        ns.ip(&["link", "set", &e.ifname, "up"])?;
    }
    let transfer = |to: std::net::Ipv4Addr| {
        let (send, recv) = download_configs((to, PORT).into(), bytes, cc, Duration::from_secs(120));
        run_pair(a.name(), b.name(), &send, &recv, &AtomicBool::new(false))
    };
    let baseline = transfer(eb.addr)?;

    let mut spec = TunnelSpec::new(a.name(), b.name(), vec![(ea.clone(), eb.clone())]);
    spec.tunnel = tunnel.clone();
    spec.cipher = cipher;
    let pair = TunnelPair::start(&spec, braid_exe, Duration::from_secs(10))?;
    let pids = [pair.server.pid(), pair.client.pid()];
    let cpu_before: f64 = pids.iter().map(|&p| process_cpu_seconds(p)).sum();
    let through = transfer(spec.client_addr)?;
    let cpu: f64 = pids.iter().map(|&p| process_cpu_seconds(p)).sum::<f64>() - cpu_before;
    drop(pair);

    let gbps = |dlct: f64| bytes as f64 * 8.0 / dlct / 1e9;
    let tunnel_gbps = gbps(through.receiver.dlct_s);
    let baseline_gbps = gbps(baseline.receiver.dlct_s);
    Ok(TunnelBench {
        bytes,
        cc: cc.as_str().into(),
        tunnel_cc: tunnel.cc.as_str().into(),
        cipher: cipher.as_str().into(),
        baseline_gbps,
        tunnel_gbps,
        ratio: tunnel_gbps / baseline_gbps,
        cpu_s_per_gbit: cpu / (bytes as f64 * 8.0 / 1e9),
        cpu_cores: cpu / through.receiver.dlct_s,
    })
}

/// A plain download of `bytes` to `to` with `cc`, limited to `timeout` in all and 10 s without
/// progress: the benchmarks' transfer.
pub(crate) fn download_configs(
    to: std::net::SocketAddr,
    bytes: u64,
    cc: KernelCc,
    timeout: Duration,
) -> (SenderConfig, ReceiverConfig) {
    let send = SenderConfig {
        connect: to,
        bytes,
        cc,
        seed: 1,
        sample_interval: Duration::from_millis(100),
        timeout,
        idle_timeout: Duration::from_secs(10),
    };
    let recv = ReceiverConfig {
        listen: to,
        bin: Duration::from_millis(100),
        timeout,
        idle_timeout: Duration::from_secs(10),
    };
    (send, recv)
}
