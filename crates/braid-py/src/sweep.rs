//! Sweeps from Python: run locally on the engine's thread pool, or chunk by chunk under a
//! scheduler the Python side brings (Dask), through `braid_sweep::chunks`.

use std::path::{Path, PathBuf};

use braid_sweep::chunks::{self, Tally};
use braid_sweep::runner::Finished;
use braid_sweep::{Options, ProgressMode, Shard, Spec, Summary, SweepError};
use pyo3::prelude::*;

use crate::error::{to_py, BraidError};

/// A finished run as it crosses to Python and back: (run id, journal line, succeeded).
type RunLine = (u64, String, bool);

fn load(spec: &Path) -> PyResult<Spec> {
    Spec::load(spec).map_err(to_py)
}

fn summary_json(summary: Result<Summary, SweepError>) -> PyResult<String> {
    let summary = summary.map_err(to_py)?;
    serde_json::to_string(&summary).map_err(|e| BraidError::new_err(e.to_string()))
}

/// `braid sweep SPEC --out OUT [--jobs JOBS] [--shard I/N]` in-process, with the GIL
/// released; returns `sweep.json`'s contents.
#[pyfunction]
#[pyo3(signature = (spec, out, jobs, shard=None, progress=false))]
pub fn sweep_local(
    py: Python<'_>,
    spec: PathBuf,
    out: PathBuf,
    jobs: usize,
    shard: Option<String>,
    progress: bool,
) -> PyResult<String> {
    if jobs == 0 {
        return Err(BraidError::new_err("jobs: expected at least 1, found 0"));
    }
    let shard: Option<Shard> = shard.map(|s| s.parse()).transpose().map_err(to_py)?;
    let progress = if progress { ProgressMode::for_stderr() } else { ProgressMode::Quiet };
    py.detach(|| {
        let spec = load(&spec)?;
        summary_json(braid_sweep::run(
            &spec,
            &Options { out, jobs, shard, progress, caches: None, backend: None },
        ))
    })
}

/// Checks the spec, makes or checks the sweep folder, and returns (the run ids its journal
/// lacks, how many it has, the spec's hash).
#[pyfunction]
pub fn sweep_prepare(
    py: Python<'_>,
    spec: PathBuf,
    out: PathBuf,
) -> PyResult<(Vec<u64>, u64, String)> {
    py.detach(|| {
        let spec = load(&spec)?;
        let left = braid_sweep::prepare(&spec, &out, None).map_err(to_py)?;
        Ok((left.pending, left.skipped, spec.hash()))
    })
}

/// Simulates runs `ids` of the spec (a worker's chunk) and returns (their runs, baselines
/// simulated, scenarios simulated). `spec_hash` is the driver's: a worker that reads a
/// different spec (a file edited mid-sweep, another folder's copy) refuses to run.
#[pyfunction]
pub fn sweep_execute(
    py: Python<'_>,
    spec: PathBuf,
    ids: Vec<u64>,
    spec_hash: String,
) -> PyResult<(Vec<RunLine>, u64, u64)> {
    py.detach(|| {
        let loaded = load(&spec)?;
        if loaded.hash() != spec_hash {
            return Err(BraidError::new_err(format!(
                "{}: this worker reads a spec whose hash is {}, the sweep's is {spec_hash}; \
                 the workers must see the driver's spec file unchanged",
                spec.display(),
                loaded.hash()
            )));
        }
        let chunk = chunks::execute(&loaded, &ids).map_err(to_py)?;
        let runs = chunk.runs.into_iter().map(|r| (r.id, r.line, r.ok)).collect();
        Ok((runs, chunk.baselines_simulated, chunk.scenarios_simulated))
    })
}

/// Appends a chunk's runs to the sweep folder's journal.
#[pyfunction]
pub fn sweep_record(
    py: Python<'_>,
    spec: PathBuf,
    out: PathBuf,
    runs: Vec<RunLine>,
) -> PyResult<()> {
    py.detach(|| {
        let spec = load(&spec)?;
        let runs: Vec<Finished> = runs
            .into_iter()
            .map(|(id, line, ok)| Finished { id, line, ok, cancelled: false })
            .collect();
        chunks::record(&spec, &out, &runs).map_err(to_py)
    })
}

/// Writes the table and `sweep.json` once every run is in; returns `sweep.json`'s contents.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn sweep_complete(
    py: Python<'_>,
    spec: PathBuf,
    out: PathBuf,
    ran: u64,
    skipped: u64,
    baselines_simulated: u64,
    scenarios_simulated: u64,
    workers: usize,
    wall_s: f64,
) -> PyResult<String> {
    py.detach(|| {
        let spec = load(&spec)?;
        let tally =
            Tally { ran, skipped, baselines_simulated, scenarios_simulated, workers, wall_s };
        summary_json(chunks::complete(&spec, &out, tally))
    })
}
