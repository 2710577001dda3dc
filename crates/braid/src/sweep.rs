//! `braid sweep`: the command-line front of braid-sweep (docs/sweeps.md).

use std::num::NonZeroUsize;
use std::path::PathBuf;

use anyhow::Result;
use braid_sweep::{ProgressMode, Shard, Spec};
use clap::Args;

use crate::output::outln;

#[derive(Args)]
pub struct SweepArgs {
    /// Sweep spec (TOML): base scenario, `[set]` overrides, `[axes]`, reps, baseline.
    spec: PathBuf,
    /// Folder of the journal (runs.jsonl) and the table (runs.parquet); resumes what is there.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
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
}

pub fn run(args: SweepArgs) -> Result<()> {
    let spec = Spec::load(&args.spec)?;
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
        };
        braid_sweep::run(&spec, &opts)?
    } else {
        braid_sweep::merge(&spec, &args.out, &args.merge)?
    };
    outln!(
        "{}: {} rows ({} failed); {} runs simulated now, {} found done, in {:.1} s",
        args.out.join(braid_sweep::outdir::TABLE_FILE).display(),
        summary.rows,
        summary.failed,
        summary.ran,
        summary.skipped,
        summary.wall_s
    )?;
    Ok(())
}
