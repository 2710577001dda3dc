//! `braid lab` (a scenario run for real in network namespaces) and the hidden `braid
//! lab-transfer` (the bulk TCP sender/receiver, for spawning inside a namespace).

use std::fs;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{Context, Result};
use braid_lab::lab::{self, LabMode, LabOptions, LabOutput};
use braid_lab::netns::cleanup_stale;
use braid_lab::topology::{Emulator, TAG};
use braid_lab::transfer::{self, Receiver, ReceiverConfig, SenderConfig};
use braid_net::signal::TerminationSignals;
use braid_sim::Scenario;
use clap::{Args, Subcommand, ValueEnum};

use crate::output::{outln, write_atomic};

/// How long `braid linkem` may take to print its readiness line.
const LINKEM_READY_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Args)]
pub struct LabArgs {
    /// Scenario file (TOML), the same as `braid sim` reads.
    scenario: PathBuf,
    /// Override a field: --set e2e.cc=bbr, --set e2e.bytes=50000000.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
    /// Print one JSON object (the schema of `braid sim --json`, unmeasured fields left out).
    #[arg(long)]
    json: bool,
    /// Also run the single-path baseline and report the relative DLCT.
    #[arg(long)]
    baseline: bool,
    /// What the download runs over: path 1 alone (`baseline`), or two `braid tunnel` daemons
    /// bonding every path (`tunnel`).
    #[arg(long, value_enum, default_value_t = ModeArg::Baseline)]
    mode: ModeArg,
    /// Link emulator: tc htb (rate and buffer only) or `braid linkem` (delay, loss, CoDel too).
    #[arg(long, value_enum, default_value_t = EmulatorArg::Htb)]
    emulator: EmulatorArg,
    /// Write the resolved scenario, summary.json, transfer.json (all samples) and, in tunnel
    /// mode, tunnel_trace.csv (the proxy's paths every 100 ms, with the UE's wait limit and gaps given up) here.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// In tunnel mode, cut a path in both directions from FROM to TO seconds after the transfer
    /// started (e.g. wifi:3-6); the report's `cut` gives the failover gap and the rejoin time.
    #[arg(long, value_name = "PATH:FROM-TO")]
    cut: Option<String>,
    /// Run the tunnel daemons (and linkem) from this braid executable instead of this one, to
    /// measure another build side by side.
    #[arg(long, value_name = "PATH")]
    daemon: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModeArg {
    Baseline,
    Tunnel,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum EmulatorArg {
    Htb,
    Linkem,
}

/// The test bed's emulator for `arg`; linkem runs as this executable.
pub fn emulator(arg: EmulatorArg) -> Result<Emulator> {
    Ok(match arg {
        EmulatorArg::Htb => Emulator::Htb,
        EmulatorArg::Linkem => Emulator::Linkem {
            braid_exe: std::env::current_exe().context("locating the braid executable")?,
            ready_timeout: LINKEM_READY_TIMEOUT,
        },
    })
}

#[derive(Args)]
pub struct TransferArgs {
    #[command(subcommand)]
    side: Side,
}

#[derive(Subcommand)]
enum Side {
    /// Accept one connection, check the payload, print the receiver's JSON report.
    Recv {
        #[arg(long)]
        listen: SocketAddr,
        #[arg(long, default_value_t = 100.0)]
        bin_ms: f64,
        #[arg(long, default_value_t = 600.0)]
        timeout_s: f64,
    },
    /// Connect, send BYTES of payload with CC, print the sender's JSON report.
    Send {
        #[arg(long)]
        connect: SocketAddr,
        #[arg(long)]
        bytes: u64,
        /// reno, cubic or bbr.
        #[arg(long)]
        cc: String,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value_t = 100.0)]
        sample_ms: f64,
        #[arg(long, default_value_t = 600.0)]
        timeout_s: f64,
    },
}

/// Limit on a transfer side with no progress.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);

fn seconds(what: &str, s: f64) -> Result<Duration> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero())
        .with_context(|| format!("{what} must be a positive number of seconds, got {s}"))
}

/// SIGINT and SIGTERM as a flag the run polls (every blocking wait of the test bed has a time
/// limit): the first one makes the run return an error, and its guards remove namespaces and
/// processes; a second one exits at once (status 130), and `cleanup_stale` removes what that
/// leaves at the next start. Called before any thread starts.
pub fn stop_on_signals() -> Result<&'static std::sync::atomic::AtomicBool> {
    let signals = TerminationSignals::block().context("handling SIGINT/SIGTERM")?;
    signals.into_flag().context("handling SIGINT/SIGTERM")
}

pub fn run(args: LabArgs) -> Result<()> {
    crate::logging::init(false)?;
    let cancel = stop_on_signals()?;
    let s = Scenario::load(&args.scenario, &args.overrides)?;
    let removed = cleanup_stale(TAG)?;
    if !removed.is_empty() {
        eprintln!("removed namespaces of earlier killed runs: {}", removed.join(" "));
    }
    let emulator = emulator(args.emulator)?;
    let opts = LabOptions {
        mode: match args.mode {
            ModeArg::Baseline => LabMode::Baseline,
            ModeArg::Tunnel => LabMode::Tunnel,
        },
        emulator,
        with_baseline: args.baseline,
        braid_exe: match &args.daemon {
            Some(p) => p.clone(),
            None => std::env::current_exe().context("locating the braid executable")?,
        },
        cut: args
            .cut
            .as_deref()
            .map(str::parse)
            .transpose()
            .map_err(|e: String| anyhow::anyhow!("--cut: {e}"))?,
        ..LabOptions::default()
    };
    let out = lab::run(&s, &opts, cancel)?;
    for note in &out.report.lab.not_emulated {
        eprintln!("not emulated: {note}");
    }
    if let Some(dir) = &args.out {
        write_outputs(dir, &s, &out)?;
    }
    if args.json {
        outln!("{}", serde_json::to_string(&out.report)?)?;
    } else {
        print_summary(&out)?;
    }
    Ok(())
}

fn print_summary(out: &LabOutput) -> Result<()> {
    let r = &out.report;
    outln!(
        "{} over {} ({}): DLCT {:.2} s, goodput {:.2} Mbit/s",
        r.e2e.cc,
        r.lab.mode,
        r.lab.emulator,
        r.dlct_s,
        r.goodput_mbps
    )?;
    if let (Some(b), Some(rel)) = (r.baseline_dlct_s, r.relative_dlct) {
        outln!("baseline DLCT {b:.2} s (path 1, no tunnel); relative DLCT {:.1}%", rel * 100.0)?;
    }
    let show = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.2}"));
    let show_n = |v: Option<u64>| v.map_or("-".to_string(), |x| x.to_string());
    outln!("{:<10} {:>12} {:>10} {:>8} {:>10}", "path", "bytes", "mean_mbps", "drops", "frames")?;
    for p in &r.paths {
        outln!(
            "{:<10} {:>12} {:>10} {:>8} {:>10}",
            p.name,
            show_n(p.bytes),
            show(p.mean_mbps),
            show_n(p.drops),
            show_n(p.packets_sent)
        )?;
    }
    if let (Some(sent), Some(lost)) = (r.e2e.datagrams_sent, r.e2e.datagrams_lost) {
        outln!(
            "E2E UDP: {sent} datagrams sent, {lost} lost ({:.2}%); wall {:.1} s",
            lost as f64 * 100.0 / sent.max(1) as f64,
            r.wall_s
        )?;
        return Ok(());
    }
    outln!(
        "E2E: {} retransmissions, {} RTOs, mean srtt {} ms (TCP_CONGESTION {}); wall {:.1} s",
        show_n(r.e2e.retransmissions),
        show_n(r.e2e.rto_count),
        show(r.e2e.srtt_ms_mean),
        r.lab.cc_effective,
        r.wall_s
    )?;
    Ok(())
}

fn write_outputs(dir: &Path, s: &Scenario, out: &LabOutput) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let files = [
        ("scenario.toml", s.to_toml_string()?),
        ("summary.json", serde_json::to_string_pretty(&out.report)?),
        ("transfer.json", serde_json::to_string_pretty(&out.transfer)?),
    ];
    for (name, text) in files {
        write_atomic(&dir.join(name), &text)?;
    }
    if !out.tunnel_trace.is_empty() {
        let mut csv = String::from(braid_lab::lab::tunnel_side::PathTraceRow::CSV_HEADER);
        for row in &out.tunnel_trace {
            csv.push('\n');
            csv.push_str(&row.csv_line());
        }
        csv.push('\n');
        write_atomic(&dir.join("tunnel_trace.csv"), &csv)?;
    }
    Ok(())
}

pub fn transfer(args: TransferArgs) -> Result<()> {
    let stop = stop_on_signals()?;
    match args.side {
        Side::Recv { listen, bin_ms, timeout_s } => {
            let cfg = ReceiverConfig {
                listen,
                bin: seconds("--bin-ms", bin_ms / 1e3)?,
                timeout: seconds("--timeout-s", timeout_s)?,
                idle_timeout: IDLE_TIMEOUT,
            };
            let receiver = Receiver::bind(&cfg)?;
            outln!("lab-transfer: listening on {}", receiver.local_addr()?)?;
            let report = receiver.run(stop)?;
            outln!("{}", serde_json::to_string(&report)?)?;
        }
        Side::Send { connect, bytes, cc, seed, sample_ms, timeout_s } => {
            let cfg = SenderConfig {
                connect,
                bytes,
                cc: transfer::parse_kernel_cc(&cc)?,
                seed,
                sample_interval: seconds("--sample-ms", sample_ms / 1e3)?,
                timeout: seconds("--timeout-s", timeout_s)?,
                idle_timeout: IDLE_TIMEOUT,
            };
            let report = transfer::send(&cfg, stop)?;
            outln!("{}", serde_json::to_string(&report)?)?;
        }
    }
    if stop.load(Ordering::Relaxed) {
        anyhow::bail!("interrupted");
    }
    Ok(())
}
