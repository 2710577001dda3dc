//! `braid sweep`: the command-line front of braid-sweep (docs/sweeps.md), with the simulator
//! or the real namespace lab (`--backend lab`) running the runs.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{bail, Result};
use braid_lab::lab::{self, LabMode, LabOptions};
use braid_sim::Scenario;
use braid_sweep::{Measure, ProgressMode, Shard, Spec, SpecOverrides};
use clap::{Args, ValueEnum};

use crate::lab::{emulator, stop_on_signals, EmulatorArg};
use crate::output::outln;

#[derive(Args)]
pub struct SweepArgs {
    /// Sweep spec (TOML): base scenario, `[set]` overrides, `[axes]`, reps, baseline.
    spec: PathBuf,
    /// Folder of the journal (runs.jsonl) and the table (runs.parquet); resumes what is there.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Repetitions of each cell, in place of the spec's `reps` (1..=1000).
    #[arg(long, value_name = "N")]
    reps: Option<u32>,
    /// Whether each run also gets its single-path baseline, in place of the spec's `baseline`.
    #[arg(long, value_name = "BOOL")]
    baseline: Option<bool>,
    /// One more `[set]` override for every run, as `braid sim --set` takes it (repeatable). The
    /// folder's spec.toml records it; a key the spec's `[set]` or an axis gives is refused.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Worker threads [default: the number of CPUs].
    #[arg(long, value_name = "N")]
    jobs: Option<NonZeroUsize>,
    /// Run only the runs with run_id % N == I-1 (1 <= I <= N), e.g. one task of a job array.
    #[arg(long, value_name = "I/N", conflicts_with = "merge")]
    shard: Option<Shard>,
    /// Merge the journals of shard folders made by this spec into DIR and write the whole table
    /// (repeatable).
    #[arg(long, value_name = "SHARD_DIR")]
    merge: Vec<PathBuf>,
    /// What runs each run: the simulator, or the namespace lab (real kernel TCP end to end, two
    /// `braid tunnel` daemons, emulated links; needs root; one run at a time, each with its own
    /// baseline when the spec asks for one).
    #[arg(long, value_enum, default_value_t = BackendArg::Sim)]
    backend: BackendArg,
    /// The lab's link emulator (`--backend lab`): `braid linkem` (delay, loss, CoDel) or tc htb
    /// (rate and buffer only, no delay).
    #[arg(long, value_enum, default_value_t = EmulatorArg::Linkem)]
    emulator: EmulatorArg,
    /// What each lab run measures (`--backend lab`): the tunnel (two `braid tunnel` daemons over
    /// every path), or the single-path baseline alone (path 1, no tunnel), so that a matrix of
    /// tunnel cells can share one baseline sweep per scenario instead of measuring a baseline
    /// beside every run. A folder holds one mode's runs.
    #[arg(long, value_enum, default_value_t = LabModeArg::Tunnel)]
    lab_mode: LabModeArg,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LabModeArg {
    Tunnel,
    Baseline,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BackendArg {
    Sim,
    Lab,
}

/// The namespace lab as a sweep backend: each run is `braid lab --mode tunnel` of the run's
/// scenario (with `--baseline` when the spec has `baseline = true`), its report in the
/// simulator's schema plus the lab's own fields.
struct LabBackend {
    /// `lab` for tunnel runs, `lab-baseline` for baseline runs: the folder records it.
    name: &'static str,
    opts: LabOptions,
    cancel: &'static AtomicBool,
}

impl Measure for LabBackend {
    fn name(&self) -> &str {
        self.name
    }

    fn measure(&self, s: &Scenario, baseline: bool) -> Result<String, String> {
        let opts = LabOptions { with_baseline: baseline, ..self.opts.clone() };
        let out = lab::run(s, &opts, self.cancel).map_err(|e| format!("{e:#}"))?;
        serde_json::to_string(&out.report).map_err(|e| e.to_string())
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

pub fn run(args: SweepArgs) -> Result<()> {
    let overrides =
        SpecOverrides { reps: args.reps, baseline: args.baseline, set: args.set.clone() };
    let spec = Spec::load_with(&args.spec, &overrides)?;
    let backend: Option<Arc<dyn Measure>> = match args.backend {
        BackendArg::Sim => {
            if args.lab_mode != LabModeArg::Tunnel {
                bail!("--lab-mode is for --backend lab");
            }
            None
        }
        BackendArg::Lab => {
            if !args.merge.is_empty() || args.shard.is_some() {
                bail!("--backend lab runs a whole sweep in one place: no --shard or --merge");
            }
            let (name, mode) = match args.lab_mode {
                LabModeArg::Tunnel => ("lab", LabMode::Tunnel),
                LabModeArg::Baseline => {
                    if spec.baseline {
                        bail!(
                            "--lab-mode baseline measures the baseline itself: the spec must \
                             say baseline = false"
                        );
                    }
                    ("lab-baseline", LabMode::Baseline)
                }
            };
            crate::logging::init(false)?;
            let cancel = stop_on_signals()?;
            let removed = braid_lab::netns::cleanup_stale(braid_lab::topology::TAG)?;
            if !removed.is_empty() {
                eprintln!("removed namespaces of earlier killed runs: {}", removed.join(" "));
            }
            let opts = LabOptions {
                mode,
                emulator: emulator(args.emulator)?,
                braid_exe: std::env::current_exe()?,
                ..LabOptions::default()
            };
            Some(Arc::new(LabBackend { name, opts, cancel }))
        }
    };
    let lab = backend.is_some();
    let summary = if args.merge.is_empty() {
        let jobs = args
            .jobs
            .or_else(|| std::thread::available_parallelism().ok())
            .map_or(1, NonZeroUsize::get);
        let opts = braid_sweep::Options {
            out: args.out.clone(),
            jobs,
            shard: args.shard,
            progress: ProgressMode::for_stderr(),
            caches: None,
            backend,
        };
        braid_sweep::run(&spec, &opts)?
    } else {
        braid_sweep::merge(&spec, &args.out, &args.merge)?
    };
    outln!(
        "{}: {} rows ({} failed); {} runs {} now, {} found done, in {:.1} s",
        args.out.join(braid_sweep::outdir::TABLE_FILE).display(),
        summary.rows,
        summary.failed,
        summary.ran,
        if lab { "measured in the lab" } else { "simulated" },
        summary.skipped,
        summary.wall_s
    )?;
    Ok(())
}
