//! The `braid` command: the simulator's front end and its benchmark.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod lab;
mod linkem;
mod logging;
mod output;
mod reproduce;
mod sweep;

use anyhow::{Context, Result};
use braid_sim::{run, run_with_baseline, RunOutput, Scenario};
use clap::{Parser, Subcommand};
use output::{outln, write_atomic, StdoutClosed};

mod bench_flood;
mod bench_tunnel;
mod keys;
mod tunnel;

#[derive(Parser)]
#[command(
    name = "braid",
    version,
    about = "Multipath tunnel and nested congestion control laboratory"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a scenario file and report DLCT, goodput and per-path metrics.
    Sim {
        /// Scenario file (TOML); see scenarios/default.toml.
        scenario: PathBuf,
        /// Override a field: --set tunnel.cc=bbr, --set paths.1.rtt_ms=60, --set keys=SHORT+NEAR.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        overrides: Vec<String>,
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
        /// Write the resolved scenario, summary and time series (CSV) into this directory.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Also run the same transfer over path 1 without the tunnel, and report relative DLCT.
        #[arg(long)]
        baseline: bool,
        /// Random seed (same scenario and seed give the same results).
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Run a sweep spec (axes x reps) in-process into DIR/runs.parquet; resumable, shardable
    /// (docs/sweeps.md).
    Sweep(sweep::SweepArgs),
    /// Reproduce a paper's experiments into DIR, resumably: `nested-cc` (Pieska et al. 2024),
    /// `acpf` (Pieska et al. 2021), `coupled-cubic` (Lee et al. 2023).
    Reproduce(reproduce::ReproduceArgs),
    /// The default scenario with CPF and SRTT for Cubic and BBR end to end, against the baseline.
    Demo {
        #[arg(default_value = "scenarios/default.toml")]
        scenario: PathBuf,
    },
    /// Run a scenario for real: namespaces, emulated links, kernel TCP (needs root).
    Lab(lab::LabArgs),
    #[command(hide = true)]
    LabTransfer(lab::TransferArgs),
    /// Run a tunnel endpoint (client or server) in the foreground, or show one's status.
    Tunnel(tunnel::TunnelArgs),
    /// Time the default nested scenario (BBR over BBR tunnels, CPF, 300 MB), or with
    /// `tunnel`, kernel TCP through a real tunnel path against the same transfer without it.
    #[command(args_conflicts_with_subcommands = true)]
    Bench {
        #[command(subcommand)]
        target: Option<BenchTarget>,
        /// Repetitions; the best and median wall times are reported.
        #[arg(long, default_value_t = 3)]
        repeat: u32,
    },
    /// Print a new tunnel private key (base64, like `wg genkey`).
    Genkey,
    /// Read a private key on stdin, print its public key (like `wg pubkey`).
    Pubkey,
    /// Emulate a link (rate, delay, buffer, loss, CoDel) between two interfaces, for kernels
    /// without tc netem.
    Linkem(Box<linkem::LinkemArgs>),
}

#[derive(Subcommand)]
enum BenchTarget {
    /// TCP through one `braid tunnel` path over an unlimited veth pair, next to the same
    /// transfer without the tunnel (needs root).
    Tunnel(bench_tunnel::BenchTunnelArgs),
    /// A download through a two-path tunnel while a third namespace floods the server's path
    /// port, next to the same download without the flood (needs root).
    Flood(bench_flood::BenchFloodArgs),
}

fn main() -> ExitCode {
    match real_main() {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of stdout has gone: end quietly, as the `output` module explains.
        Err(e) if e.is::<StdoutClosed>() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn real_main() -> Result<()> {
    match Cli::parse().command {
        Command::Sim { scenario, mut overrides, json, out, baseline, seed } => {
            if let Some(seed) = seed {
                overrides.push(format!("seed={seed}"));
            }
            let s = Scenario::load(&scenario, &overrides)?;
            let result = if baseline { run_with_baseline(&s)? } else { run(&s, false)? };
            if let Some(dir) = out {
                write_outputs(&dir, &s, &result)?;
            }
            if json {
                outln!("{}", serde_json::to_string(&result.report)?)?;
            } else {
                print_summary(&result)?;
            }
            Ok(())
        }
        Command::Sweep(args) => sweep::run(args),
        Command::Reproduce(args) => reproduce::run(args),
        Command::Demo { scenario } => demo(&scenario),
        Command::Bench { target: None, repeat } => bench(repeat.max(1)),
        Command::Bench { target: Some(BenchTarget::Tunnel(args)), .. } => bench_tunnel::run(args),
        Command::Bench { target: Some(BenchTarget::Flood(args)), .. } => bench_flood::run(args),
        Command::Lab(args) => lab::run(args),
        Command::LabTransfer(args) => lab::transfer(args),
        Command::Genkey => keys::genkey(),
        Command::Pubkey => keys::pubkey(),
        Command::Linkem(args) => linkem::run(*args),
        Command::Tunnel(args) => tunnel::run(args),
    }
}

fn print_summary(r: &RunOutput) -> Result<()> {
    let rep = &r.report;
    outln!("DLCT {:.2} s, goodput {:.2} Mbit/s", rep.dlct_s, rep.goodput_mbps)?;
    if let (Some(b), Some(rel)) = (rep.baseline_dlct_s, rep.relative_dlct) {
        outln!("baseline DLCT {b:.2} s (path 1, no tunnel); relative DLCT {:.1}%", rel * 100.0)?;
    }
    outln!(
        "{:<10} {:>12} {:>7} {:>10} {:>10} {:>10} {:>8}",
        "path",
        "bytes",
        "share",
        "mean_mbps",
        "srtt_ms",
        "srtt_max",
        "drops"
    )?;
    for p in &rep.paths {
        outln!(
            "{:<10} {:>12} {:>6.1}% {:>10.2} {:>10.1} {:>10.1} {:>8}",
            p.name,
            p.bytes,
            p.share * 100.0,
            p.mean_mbps,
            p.srtt_ms_mean,
            p.srtt_ms_max,
            p.drops
        )?;
    }
    outln!(
        "protocol delay mean {:.1} ms max {:.1} ms; HoL mean {:.2} ms max {:.1} ms; scheduler drops {}; E2E retransmissions {}",
        rep.protocol_delay_ms.mean, rep.protocol_delay_ms.max, rep.hol_ms.mean, rep.hol_ms.max, rep.drops.scheduler, rep.e2e.retransmissions
    )?;
    outln!("{} events in {:.3} s", rep.events, rep.wall_s)?;
    Ok(())
}

fn write_outputs(dir: &Path, s: &Scenario, r: &RunOutput) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    write_atomic(&dir.join("scenario.toml"), &s.to_toml_string()?)?;
    write_atomic(&dir.join("summary.json"), &serde_json::to_string_pretty(&r.report)?)?;
    write_atomic(&dir.join("trace.csv"), &r.series.trace_csv())?;
    write_atomic(&dir.join("throughput.csv"), &r.series.throughput_csv())?;
    Ok(())
}

fn demo(scenario: &Path) -> Result<()> {
    outln!(
        "{:<6} {:<6} {:<6} {:>8} {:>10} {:>12} {:>9} {:>9}",
        "e2e",
        "tunnel",
        "sched",
        "dlct_s",
        "goodput",
        "relative",
        "share_p1",
        "share_p2"
    )?;
    for e2e in ["cubic", "bbr"] {
        let mut baseline = None;
        for sched in ["cpf", "srtt"] {
            let s = Scenario::load(
                scenario,
                &[format!("e2e.cc={e2e}"), format!("tunnel.scheduler={sched}")],
            )?;
            let b = match baseline {
                Some(b) => b,
                None => {
                    let b = run(&s, true)?.report.dlct_s;
                    baseline = Some(b);
                    b
                }
            };
            let r = run(&s, false)?.report;
            let share = |i: usize| r.paths.get(i).map_or(0.0, |p| p.share * 100.0);
            outln!(
                "{:<6} {:<6} {:<6} {:>8.2} {:>10.2} {:>11.1}% {:>8.1}% {:>8.1}%",
                e2e,
                s.tunnel.cc.as_str(),
                sched,
                r.dlct_s,
                r.goodput_mbps,
                r.dlct_s / b * 100.0,
                share(0),
                share(1)
            )?;
        }
    }
    outln!("relative = DLCT over the tunnel / DLCT over path 1 alone without a tunnel (50% = perfect aggregation)")?;
    Ok(())
}

/// Peak resident set size of this process in KiB (VmHWM), where /proc offers it.
fn peak_rss_kib() -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn bench(repeat: u32) -> Result<()> {
    let overrides =
        ["e2e.cc=bbr".to_string(), "tunnel.cc=bbr".into(), "tunnel.scheduler=cpf".into()];
    let s = Scenario::from_toml_str("", &overrides)?;
    if cfg!(debug_assertions) {
        eprintln!("warning: braid was built without optimisations; build with --release for benchmark figures");
    }
    let mut walls = Vec::new();
    let mut last = None;
    for _ in 0..repeat {
        let r = run(&s, false)?.report;
        walls.push(r.wall_s);
        last = Some(r);
    }
    let r = last.context("no run")?;
    walls.sort_by(f64::total_cmp);
    let best = walls[0];
    let median = walls[walls.len() / 2];
    outln!(
        "scenario: default nested (BBR over BBR tunnels, CPF, {} MB download)",
        s.e2e.bytes / 1_000_000
    )?;
    outln!("simulated: DLCT {:.2} s, goodput {:.2} Mbit/s", r.dlct_s, r.goodput_mbps)?;
    outln!("wall time: best {best:.3} s, median {median:.3} s over {repeat} runs")?;
    outln!("events: {} ({:.2} M events/s)", r.events, r.events as f64 / best / 1e6)?;
    outln!(
        "simulated packets: {} link traversals ({:.2} M packets/s)",
        r.simulated_packets,
        r.simulated_packets as f64 / best / 1e6
    )?;
    if let Some(kib) = peak_rss_kib() {
        outln!("peak memory (VmHWM): {:.1} MiB", kib as f64 / 1024.0)?;
    }
    Ok(())
}
