//! braid-sweep: parameter sweeps over braid-sim scenarios.
//!
//! A spec ([`spec`]) names a base scenario, overrides for every run and axes; the sweep runs
//! the cross product of the axes times the repetitions ([`plan`]) on a pool of threads
//! ([`engine`]), each run in-process ([`runner`]), each distinct baseline once ([`baseline`]) and each
//! distinct resolved scenario once ([`once_map`]).
//! Every finished run is appended to a journal ([`journal`]), so an interrupted sweep resumes
//! where it stopped; at the end the journal becomes `runs.parquet` ([`table`],
//! [`parquet_out`]). Shards (`run_id % N`) run apart and merge into the same table; an outside
//! scheduler (a Dask cluster, through the Python package) can drive a sweep chunk by chunk
//! ([`chunks`]) into the same table too. A [`Measure`] backend replaces the simulator, one run
//! at a time (the real lab, through the `braid` binary; [`backend`]).
//! docs/sweeps.md describes the format and the columns.
//!
//! The library has no command-line code, so other front ends (a Python binding) can reuse it.

pub mod axis;
pub mod backend;
pub mod baseline;
pub mod chunks;
pub mod engine;
pub mod flatten;
pub mod hash;
pub mod journal;
pub mod once_map;
pub mod outdir;
pub mod parquet_out;
pub mod plan;
pub mod points;
pub mod progress;
pub mod runner;
pub mod spec;
pub mod spec_overrides;
pub mod table;

use std::path::PathBuf;

pub use backend::Measure;
pub use engine::{merge, prepare, run, Caches, Options, Pending, Summary};
pub use plan::{Shard, ShardError};
pub use progress::Mode as ProgressMode;
pub use spec::{Spec, SpecError};
pub use spec_overrides::SpecOverrides;

/// This crate's version, recorded in every row.
pub const BRAID_VERSION: &str = env!("CARGO_PKG_VERSION");
/// The git commit this crate was built from ("unknown" outside a checkout), recorded in every
/// row.
pub const GIT_COMMIT: &str = env!("BRAID_GIT_COMMIT");

/// Why a sweep stopped.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    // The scenario's error is part of the message, not a `source`: the CLI prints an error's
    // chain, which would repeat it.
    #[error("the scenario of the cell with --set {overrides} does not load: {error}")]
    Cell { overrides: String, error: braid_sim::scenario::ScenarioError },
    #[error("axes.{axis}[{index}] (label {label}) does not load: {error}")]
    Entry {
        axis: String,
        index: usize,
        label: String,
        error: Box<braid_sim::scenario::ScenarioError>,
    },
    #[error(transparent)]
    OutDir(#[from] outdir::OutDirError),
    #[error("run journal: {0}")]
    Journal(#[from] journal::JournalError),
    #[error(transparent)]
    Table(#[from] table::TableError),
    #[error(transparent)]
    Parquet(#[from] parquet_out::ParquetOutError),
    #[error("--merge {}: not a sweep folder (it has no spec.hash)", dir.display())]
    NotAShard { dir: PathBuf },
    #[error(
        "the merged shards lack {missing} of {total} runs (run ids {first}...); what they have is \
         in {}: run the missing shards, or `braid sweep` into that folder to run the rest",
        dir.display()
    )]
    Incomplete { missing: u64, total: u64, first: String, dir: PathBuf },
    #[error(transparent)]
    Chunk(#[from] chunks::ChunkError),
}
