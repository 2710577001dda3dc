//! `braid reproduce nested-cc`: the command-line front of braid-reproduce (docs/sweeps.md,
//! "braid reproduce"). It runs the reproduction of Pieska et al. 2024 into a folder, then draws
//! the figures with the Python module `braid.figures` when `python3` can import it.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Result;
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
    }
}

fn nested_cc(args: NestedCcArgs) -> Result<()> {
    let jobs = args
        .jobs
        .or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, NonZeroUsize::get);
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
    let m = &outcome.matrix;
    outln!(
        "matrix: {} rows ({} failed); {} runs simulated now, {} found done",
        m.rows,
        m.failed,
        m.ran,
        m.skipped
    )?;
    for braid_reproduce::run::ContourOutcome { set, sweep: c } in &outcome.contour {
        outln!(
            "contour {set}: {} rows ({} failed); {} runs simulated now, {} found done",
            c.rows,
            c.failed,
            c.ran,
            c.skipped
        )?;
    }
    outln!("series: {} run now, {} found done", outcome.series_ran, outcome.series_skipped)?;
    outln!(
        "{}: tables in table3.csv and table_scenarios.csv, in {:.1} s",
        args.out.display(),
        outcome.wall_s
    )?;
    if args.no_figures {
        outln!("figures: skipped (--no-figures)")?;
    } else {
        match figures(&args.out) {
            Ok(()) => outln!("figures: drawn by python3 -m braid.figures")?,
            Err(why) => outln!("figures: skipped: {why}")?,
        }
    }
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

/// Runs `python -m braid.figures nested-cc DIR` ([`python_interpreter`]), if it can import the
/// module; the error says why the figures were not drawn.
fn figures(dir: &Path) -> Result<(), String> {
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
        python(&["-m".as_ref(), "braid.figures".as_ref(), "nested-cc".as_ref(), dir.as_os_str()])
            .map_err(|e| format!("python3 -m braid.figures failed to start ({e})"))?;
    if out.status.success() {
        Ok(())
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        Err(format!("python3 -m braid.figures failed ({})", stderr.lines().last().unwrap_or("")))
    }
}
