//! `braid bench flood`: what a flood of datagrams at the server's path port costs a download
//! through the tunnel, and whether a new handshake still completes during it.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use braid_lab::flood::{flood_bench, FloodConfig, FloodKind};
use braid_lab::transfer::parse_kernel_cc;
use clap::Args;

use crate::output::outln;

#[derive(Args)]
pub struct BenchFloodArgs {
    /// Bytes of each download.
    #[arg(long, default_value_t = 50_000_000)]
    bytes: u64,
    /// End-to-end TCP congestion control: reno, cubic, bbr.
    #[arg(long, default_value = "cubic")]
    cc: String,
    /// Flood rates to try, datagrams per second, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1000,5000,20000,50000")]
    rates: Vec<u64>,
    /// Flood kinds, comma-separated: initiation (initiation-shaped random bytes), keyed (with a
    /// valid mac1, as from someone who knows the server's public key), junk (random bytes).
    #[arg(long, value_delimiter = ',', default_value = "initiation,keyed,junk")]
    kinds: Vec<String>,
    /// htb rate of each of the two paths, each way, Mbit/s.
    #[arg(long, default_value_t = 50)]
    path_rate_mbit: u32,
    /// Run the daemons from this braid executable instead of this one (to measure another
    /// build side by side).
    #[arg(long, value_name = "PATH")]
    daemon: Option<PathBuf>,
    /// Length of the `initiation` kind's datagrams, for a daemon build with another wire
    /// format (116 before handshake MACs, 156 before path tables); default: this build's
    /// initiation (284).
    #[arg(long)]
    initiation_bytes: Option<usize>,
    /// Do not restart the client during each flood (for daemon builds that cannot carry
    /// traffic after a peer restart).
    #[arg(long)]
    no_handshake: bool,
    /// Measurements of each kind and rate (this VM's downloads vary by 10-15% from one to the
    /// next: repeat for a spread).
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    /// Print one JSON object per line.
    #[arg(long)]
    json: bool,
}

pub fn run(args: BenchFloodArgs) -> Result<()> {
    let cc = parse_kernel_cc(&args.cc).map_err(|e| anyhow::anyhow!("--cc: {e}"))?;
    let kinds = args
        .kinds
        .iter()
        .map(|k| k.parse::<FloodKind>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("--kinds: {e}"))?;
    if let Some(r) = args.rates.iter().find(|&&r| !(1..=1_000_000).contains(&r)) {
        bail!("--rates: {r} is outside 1..=1000000 datagrams per second");
    }
    if !(1..=10_000).contains(&args.path_rate_mbit) {
        bail!("--path-rate-mbit: {} is outside 1..=10000", args.path_rate_mbit);
    }
    if !(1..=100).contains(&args.repeat) {
        bail!("--repeat: {} is outside 1..=100", args.repeat);
    }
    if args.bytes < 1_000_000 {
        bail!("--bytes: {} is below 1000000 (too short a download to measure)", args.bytes);
    }
    let default = FloodConfig::default();
    let initiation_len = args.initiation_bytes.unwrap_or(default.initiation_len);
    if !(8..=1400).contains(&initiation_len) {
        bail!("--initiation-bytes: {initiation_len} is outside 8..=1400");
    }
    let cfg = FloodConfig {
        bytes: args.bytes,
        cc,
        rates: args.rates,
        kinds,
        path_rate_mbit: args.path_rate_mbit,
        initiation_len,
        handshake: !args.no_handshake,
        repeat: args.repeat,
    };
    if cfg!(debug_assertions) && args.daemon.is_none() {
        eprintln!("warning: braid was built without optimisations; build with --release for benchmark figures");
    }
    if !args.json {
        outln!(
            "{:<10} {:>7} {:>9} {:>9} {:>9} {:>8} {:>9} {:>11} {:>9} {:>8} {:>8}",
            "kind",
            "rate",
            "pps_sent",
            "base_mbps",
            "mbps",
            "retained",
            "srv_cores",
            "handshake_s",
            "bad_mac1",
            "cookies",
            "limited"
        )?;
    }
    let exe = match args.daemon {
        Some(p) => p,
        None => std::env::current_exe().context("locating the braid executable")?,
    };
    let mut failed = Ok(());
    flood_bench(&exe, &cfg, |l| {
        let r = if args.json {
            serde_json::to_string(l).map_err(anyhow::Error::from).and_then(|j| outln!("{j}"))
        } else {
            let hs = l.handshake_s.map_or("none".to_string(), |s| format!("{s:.2}"));
            outln!(
                "{:<10} {:>7} {:>9.0} {:>9.1} {:>9.1} {:>8.3} {:>9.2} {:>11} {:>9} {:>8} {:>8}{}",
                l.kind.as_str(),
                l.rate_pps,
                l.pps_sent,
                l.baseline_mbps,
                l.goodput_mbps,
                l.retained,
                l.server_cpu_cores,
                hs,
                l.bad_mac1,
                l.cookie_replies,
                l.rate_limited,
                l.error.as_deref().map(|e| format!("  ({e})")).unwrap_or_default()
            )
        };
        if failed.is_ok() {
            failed = r;
        }
    })?;
    failed
}
