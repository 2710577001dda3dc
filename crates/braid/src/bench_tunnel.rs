//! `braid bench tunnel`: the data plane's throughput and CPU cost, measured side by side with
//! the same kernel TCP transfer without the tunnel.

use anyhow::{Context, Result};
use braid_lab::bench::tunnel_bench;
use braid_lab::transfer::parse_kernel_cc;
use braid_net::crypto::Cipher;
use braid_sim::Scenario;
use clap::Args;

use crate::output::outln;

#[derive(Args)]
pub struct BenchTunnelArgs {
    /// Bytes per transfer.
    #[arg(long, default_value_t = 1_000_000_000)]
    bytes: u64,
    /// End-to-end TCP congestion control: reno, cubic, bbr.
    #[arg(long, default_value = "cubic")]
    cc: String,
    /// The tunnel's AEAD: aes-256-gcm or chacha20-poly1305.
    #[arg(long, default_value = "aes-256-gcm")]
    cipher: String,
    /// Tunnel settings as scenario overrides, e.g. --set tunnel.cc=cubic.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
    /// Repetitions (the VM stalls now and then: report the spread).
    #[arg(long, default_value_t = 3)]
    repeat: u32,
    /// Print one JSON object per run.
    #[arg(long)]
    json: bool,
}

pub fn run(args: BenchTunnelArgs) -> Result<()> {
    let cc = parse_kernel_cc(&args.cc).map_err(|e| anyhow::anyhow!("--cc: {e}"))?;
    let cipher: Cipher = args.cipher.parse().map_err(|e| anyhow::anyhow!("--cipher: {e}"))?;
    let s = Scenario::from_toml_str("", &args.overrides)?;
    let exe = std::env::current_exe().context("locating the braid executable")?;
    if cfg!(debug_assertions) {
        eprintln!("warning: braid was built without optimisations; build with --release for benchmark figures");
    }
    if !args.json {
        outln!(
            "cipher {cipher}, end-to-end cc {}, tunnel cc {}",
            cc.as_str(),
            s.tunnel.cc.as_str()
        )?;
        outln!(
            "{:>4} {:>10} {:>12} {:>12} {:>7} {:>14} {:>10}",
            "run",
            "bytes",
            "base_gbps",
            "tunnel_gbps",
            "ratio",
            "cpu_s_per_gbit",
            "cpu_cores"
        )?;
    }
    for i in 1..=args.repeat.max(1) {
        let r = tunnel_bench(&exe, args.bytes, cc, &s.tunnel, cipher)?;
        if args.json {
            outln!("{}", serde_json::to_string(&r)?)?;
        } else {
            outln!(
                "{:>4} {:>10} {:>12.2} {:>12.2} {:>7.3} {:>14.3} {:>10.2}",
                i,
                r.bytes,
                r.baseline_gbps,
                r.tunnel_gbps,
                r.ratio,
                r.cpu_s_per_gbit,
                r.cpu_cores
            )?;
        }
    }
    Ok(())
}
