//! `braid reproduce nested-cc | acpf | coupled-cubic`: the command-line front of
//! braid-reproduce (docs/sweeps.md, "braid reproduce"). Each runs a reproduction into a folder
//! (Pieska et al. 2024; Pieska et al. 2021; Lee et al. 2023), then draws the figures with the
//! Python module `braid.figures` when a Python can import it.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Result;
use braid_reproduce::acpf::run as acpf_run;
use braid_reproduce::coupled_cubic::run as cc_run;
use braid_reproduce::Options;
use braid_sweep::points::CONTOUR_POINTS;
use braid_sweep::ProgressMode;
use clap::{Args, Subcommand};

use crate::output::outln;

#[derive(Args)]
pub struct ReproduceArgs {
    #[command(subcommand)]
    experiment: Experiment,
}

#[derive(Subcommand)]
enum Experiment {
    /// Pieska et al. 2024: Table 3 and Figure 10 (11 CC combinations x CPF/SRTT x 15
    /// scenarios x reps), the contour figures (400 points) and the throughput examples.
    NestedCc(NestedCcArgs),
    /// Pieska et al. 2021 (ACPF): goodput of CPF and ACPF (Figure 5) over CCID5 and BBR
    /// tunnels x short/long delays x NewReno/Cubic/BBR x reps, the window traces of Figure 4
    /// and the contours of Figure 6 (400 points).
    Acpf(AcpfArgs),
    /// Lee et al. 2023 (Coupled CUBIC): per-subflow throughput and utilisation of LIA, Coupled
    /// CUBIC, CUBIC and NewReno tunnels on a 500 Mbit/s 100 ms + 100 Mbit/s 20 ms pair of paths
    /// (Figure 7), and the subflow windows over time (Figures 5 and 6).
    CoupledCubic(CoupledCubicArgs),
}

#[derive(Args)]
struct AcpfArgs {
    /// Output folder; running the same command again resumes what is there.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Repetitions of each set (tunnel x delays x e2e CC x scheduler).
    #[arg(long, default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(acpf_run::REPS.0 as i64..=acpf_run::REPS.1 as i64))]
    reps: u32,
    /// Worker threads [default: the number of CPUs].
    #[arg(long, value_name = "N")]
    jobs: Option<NonZeroUsize>,
    /// Bytes of every download over the 50 Mbit/s BBR tunnels (the 25 Mbit/s CCID5 ones
    /// download half).
    #[arg(long, value_name = "B", default_value_t = 300_000_000,
          value_parser = clap::value_parser!(u64).range(acpf_run::BYTES.0..=acpf_run::BYTES.1))]
    bytes: u64,
    /// Bottleneck buffer of both paths, packets ("large enough to not overflow from BBR").
    #[arg(long, value_name = "PKTS", default_value_t = braid_reproduce::acpf::DEFAULT_BUFFER_PKTS,
          value_parser = clap::value_parser!(u32).range(acpf_run::BUFFER_PKTS.0 as i64..=acpf_run::BUFFER_PKTS.1 as i64))]
    buffer_pkts: u32,
    /// A small run for trying the pipeline: 2 MB downloads, 2 repetitions, 10 contour points
    /// (overrides --bytes, --reps and --points).
    #[arg(long)]
    quick: bool,
    /// Contour points of Figure 6 (the paper's 400; the first N of the same set); 0 skips the
    /// contour sweep.
    #[arg(long, value_name = "N", default_value_t = CONTOUR_POINTS as u64,
          value_parser = clap::value_parser!(u64).range(acpf_run::POINTS.0 as u64..=acpf_run::POINTS.1 as u64))]
    points: u64,
    /// Do not run the Figure 4 examples.
    #[arg(long, hide = true)]
    no_series: bool,
    /// Do not draw the figures at the end.
    #[arg(long)]
    no_figures: bool,
}

#[derive(Args)]
struct CoupledCubicArgs {
    /// Output folder; running the same command again resumes what is there.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Repetitions of each tunnel CC variant.
    #[arg(long, default_value_t = cc_run::DEFAULT_REPS,
          value_parser = clap::value_parser!(u32).range(cc_run::REPS.0 as i64..=cc_run::REPS.1 as i64))]
    reps: u32,
    /// Worker threads [default: the number of CPUs].
    #[arg(long, value_name = "N")]
    jobs: Option<NonZeroUsize>,
    /// Seconds of traffic per run (the paper: 1000).
    #[arg(long, value_name = "S", default_value_t = cc_run::DEFAULT_SECONDS,
          value_parser = clap::value_parser!(u32).range(cc_run::SECONDS.0 as i64..=cc_run::SECONDS.1 as i64))]
    seconds: u32,
    /// A small run for trying the pipeline: 2 s of traffic, 2 repetitions (overrides --seconds
    /// and --reps).
    #[arg(long)]
    quick: bool,
    /// Do not run the Figure 5 and 6 examples.
    #[arg(long, hide = true)]
    no_series: bool,
    /// Do not draw the figures at the end.
    #[arg(long)]
    no_figures: bool,
}

#[derive(Args)]
struct NestedCcArgs {
    /// Output folder; running the same command again resumes what is there.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Repetitions of each matrix cell.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    reps: u32,
    /// Worker threads [default: the number of CPUs].
    #[arg(long, value_name = "N")]
    jobs: Option<NonZeroUsize>,
    /// Bytes of every download.
    #[arg(long, value_name = "B", default_value_t = 300_000_000)]
    bytes: u64,
    /// A small run for trying the pipeline: 2 MB downloads, 1 repetition, 20 contour points
    /// (overrides --bytes, --reps and --points).
    #[arg(long)]
    quick: bool,
    /// Contour points (the paper's 400); 0 skips the contour sweep.
    #[arg(long, hide = true, default_value_t = CONTOUR_POINTS)]
    points: usize,
    /// Do not run the throughput-over-time examples.
    #[arg(long, hide = true)]
    no_series: bool,
    /// Do not draw the figures at the end.
    #[arg(long)]
    no_figures: bool,
}

pub fn run(args: ReproduceArgs) -> Result<()> {
    match args.experiment {
        Experiment::NestedCc(args) => nested_cc(args),
        Experiment::Acpf(args) => acpf(args),
        Experiment::CoupledCubic(args) => coupled_cubic(args),
    }
}

/// `--jobs`, else the number of CPUs.
fn jobs(given: Option<NonZeroUsize>) -> usize {
    given.or_else(|| std::thread::available_parallelism().ok()).map_or(1, NonZeroUsize::get)
}

/// One line on a sweep the reproduction ran.
fn sweep_line(name: &str, s: &braid_sweep::Summary) -> Result<()> {
    outln!(
        "{name}: {} rows ({} failed); {} runs simulated now, {} found done",
        s.rows,
        s.failed,
        s.ran,
        s.skipped
    )
}

/// Draws the figures of `experiment` unless `--no-figures`, saying which.
fn draw(experiment: &str, dir: &Path, skip: bool) -> Result<()> {
    if skip {
        return outln!("figures: skipped (--no-figures)");
    }
    match figures(experiment, dir) {
        Ok(()) => outln!("figures: drawn by python3 -m braid.figures {experiment}"),
        Err(why) => outln!("figures: skipped: {why}"),
    }
}

fn acpf(args: AcpfArgs) -> Result<()> {
    let (bytes, reps, points) =
        if args.quick { (2_000_000, 2, 10) } else { (args.bytes, args.reps, args.points as usize) };
    let opts = acpf_run::Options {
        out: args.out.clone(),
        reps,
        jobs: jobs(args.jobs),
        bytes,
        buffer_pkts: args.buffer_pkts,
        points,
        series: !args.no_series,
        progress: ProgressMode::for_stderr(),
    };
    let outcome = acpf_run::acpf(&opts)?;
    sweep_line("table", &outcome.table)?;
    if let Some(c) = &outcome.contour {
        sweep_line("contour", c)?;
    }
    outln!("series: {} run now, {} found done", outcome.series_ran, outcome.series_skipped)?;
    outln!(
        "{}: tables in goodput.csv, gain.csv and contour.csv, in {:.1} s",
        args.out.display(),
        outcome.wall_s
    )?;
    draw("acpf", &args.out, args.no_figures)?;
    Ok(())
}

fn coupled_cubic(args: CoupledCubicArgs) -> Result<()> {
    let (seconds, reps) = if args.quick { (2, 2) } else { (args.seconds, args.reps) };
    let opts = cc_run::Options {
        out: args.out.clone(),
        reps,
        jobs: jobs(args.jobs),
        seconds,
        series: !args.no_series,
        progress: ProgressMode::for_stderr(),
    };
    let outcome = cc_run::coupled_cubic(&opts)?;
    sweep_line("utilisation", &outcome.utilisation)?;
    sweep_line("single_path", &outcome.single_path)?;
    outln!("series: {} run now, {} found done", outcome.series_ran, outcome.series_skipped)?;
    outln!("{}: table in utilisation.csv, in {:.1} s", args.out.display(), outcome.wall_s)?;
    draw("coupled-cubic", &args.out, args.no_figures)?;
    Ok(())
}

fn nested_cc(args: NestedCcArgs) -> Result<()> {
    let jobs = jobs(args.jobs);
    let (bytes, reps, points) =
        if args.quick { (2_000_000, 1, 20) } else { (args.bytes, args.reps, args.points) };
    let opts = Options {
        out: args.out.clone(),
        reps,
        jobs,
        bytes,
        points,
        series: !args.no_series,
        progress: ProgressMode::for_stderr(),
    };
    let outcome = braid_reproduce::run_nested_cc(&opts)?;
    sweep_line("matrix", &outcome.matrix)?;
    for braid_reproduce::run::ContourOutcome { set, sweep } in &outcome.contour {
        sweep_line(&format!("contour {set}"), sweep)?;
    }
    outln!("series: {} run now, {} found done", outcome.series_ran, outcome.series_skipped)?;
    outln!(
        "{}: tables in table3.csv and table_scenarios.csv, in {:.1} s",
        args.out.display(),
        outcome.wall_s
    )?;
    draw("nested-cc", &args.out, args.no_figures)?;
    Ok(())
}

/// Folders that may hold the `braid` Python package: `python/` under the current directory,
/// and under the repository this binary was built from.
fn python_paths() -> Vec<PathBuf> {
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python");
    [PathBuf::from("python"), built_from].into_iter().filter(|p| p.is_dir()).collect()
}

/// The Python that draws the figures: `$BRAID_PYTHON`, else the repository's `.venv` (made by
/// `make python`, which installs python/requirements.txt) under the current directory or the
/// one this binary was built from, else `python3` from `PATH`.
fn python_interpreter() -> PathBuf {
    if let Some(p) = std::env::var_os("BRAID_PYTHON") {
        return PathBuf::from(p);
    }
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    [PathBuf::from(".venv/bin/python"), built_from]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("python3"))
}

/// Runs `python -m braid.figures EXPERIMENT DIR` ([`python_interpreter`]), if it can import the
/// module; the error says why the figures were not drawn.
fn figures(experiment: &str, dir: &Path) -> Result<(), String> {
    let mut path: Vec<PathBuf> = python_paths();
    if let Some(existing) = std::env::var_os("PYTHONPATH") {
        path.extend(std::env::split_paths(&existing));
    }
    let pythonpath = std::env::join_paths(path).map_err(|e| e.to_string())?;
    let interpreter = python_interpreter();
    let python = |args: &[&std::ffi::OsStr]| {
        Command::new(&interpreter).args(args).env("PYTHONPATH", &pythonpath).output()
    };
    let probe = python(&["-c".as_ref(), "import braid.figures".as_ref()])
        .map_err(|e| format!("python3 cannot be started ({e})"))?;
    if !probe.status.success() {
        let stderr = String::from_utf8_lossy(&probe.stderr);
        let last = stderr.lines().last().unwrap_or("no message");
        return Err(format!("python3 cannot import braid.figures ({last})"));
    }
    let out =
        python(&["-m".as_ref(), "braid.figures".as_ref(), experiment.as_ref(), dir.as_os_str()])
            .map_err(|e| format!("python3 -m braid.figures failed to start ({e})"))?;
    if out.status.success() {
        Ok(())
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        Err(format!("python3 -m braid.figures failed ({})", stderr.lines().last().unwrap_or("")))
    }
}
