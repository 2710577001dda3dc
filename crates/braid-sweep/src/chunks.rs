//! A sweep driven chunk by chunk from outside, by a scheduler this crate does not know (the
//! Python package hands chunks to a Dask cluster's workers):
//!
//! 1. the driver asks the sweep folder what is left ([`crate::engine::prepare`]);
//! 2. a worker simulates a chunk of run ids ([`execute`]) and returns their journal lines;
//! 3. the driver records each chunk's lines in the folder's journal as it arrives ([`record`]),
//!    so that an interrupted sweep resumes as a local one does;
//! 4. once every run is in, the driver writes the table and the summary ([`complete`]).
//!
//! The table is built from the journal alone and every run is deterministic given its id, so
//! the table equals the one `braid sweep` writes for the same spec, row for row and bit for
//! bit, however the runs were spread.

use std::path::Path;

use crate::baseline::BaselineCache;
use crate::engine::{self, Summary};
use crate::journal::{self, JOURNAL_FILE};
use crate::outdir;
use crate::runner::{self, Finished, RunCache};
use crate::spec::Spec;
use crate::{SweepError, BRAID_VERSION, GIT_COMMIT};

/// What one chunk produced.
#[derive(Debug, Clone)]
pub struct Chunk {
    /// One per run id asked for, in the order asked.
    pub runs: Vec<Finished>,
    /// Baselines this chunk simulated (its own cache: chunks on different workers do not
    /// share them; contiguous run ids share the most).
    pub baselines_simulated: u64,
    /// Distinct scenarios this chunk simulated.
    pub scenarios_simulated: u64,
}

/// Why a chunk's runs were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChunkError {
    #[error("run id {id} is outside this sweep's 0..{runs}")]
    RunId { id: u64, runs: u64 },
    #[error("the journal line of run {id} is not one line of JSON naming that run")]
    Line { id: u64 },
}

/// Simulates runs `ids` of `spec`, one after another on the calling thread. A run that fails
/// is a line with status "error", as in a local sweep; an id outside the sweep is refused
/// before anything runs.
pub fn execute(spec: &Spec, ids: &[u64]) -> Result<Chunk, ChunkError> {
    if let Some(&id) = ids.iter().find(|&&id| id >= spec.runs()) {
        return Err(ChunkError::RunId { id, runs: spec.runs() });
    }
    let cache = BaselineCache::new();
    let runs = RunCache::new();
    let done = ids.iter().map(|&id| runner::execute(spec, id, &cache, &runs)).collect();
    Ok(Chunk {
        runs: done,
        baselines_simulated: cache.simulated(),
        scenarios_simulated: runs.computed(),
    })
}

/// Appends the lines of `runs` that the journal of `out` lacks, and makes them durable. Each
/// line must be one line of JSON whose `run` is its id (what [`execute`] returns).
pub fn record(spec: &Spec, out: &Path, runs: &[Finished]) -> Result<(), SweepError> {
    outdir::check(out, spec)?;
    for r in runs {
        if r.id >= spec.runs() {
            return Err(ChunkError::RunId { id: r.id, runs: spec.runs() }.into());
        }
        if !line_names_run(&r.line, r.id) {
            return Err(ChunkError::Line { id: r.id }.into());
        }
    }
    let path = out.join(JOURNAL_FILE);
    let finished = journal::read(&path, spec.runs())?;
    let mut writer = journal::Writer::open(&path)?;
    for r in runs.iter().filter(|r| !finished.contains_key(&r.id)) {
        writer.append(&r.line)?;
    }
    writer.sync()?;
    Ok(())
}

fn line_names_run(line: &str, id: u64) -> bool {
    #[derive(serde::Deserialize)]
    struct RunId {
        run: u64,
    }
    !line.contains('\n') && serde_json::from_str::<RunId>(line).is_ok_and(|r| r.run == id)
}

/// How the runs of this invocation went, for the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    /// Runs simulated by this invocation's chunks.
    pub ran: u64,
    /// Runs the journal already had when this invocation started.
    pub skipped: u64,
    pub baselines_simulated: u64,
    pub scenarios_simulated: u64,
    /// Workers the chunks were spread over.
    pub workers: usize,
    /// Wall time of the whole invocation, seconds.
    pub wall_s: f64,
}

/// Writes the table and `sweep.json` of `out` once its journal has every run; otherwise fails
/// naming the missing run ids (and keeps the journal, so the rest can still be run).
pub fn complete(spec: &Spec, out: &Path, tally: Tally) -> Result<Summary, SweepError> {
    outdir::check(out, spec)?;
    let finished = journal::read(&out.join(JOURNAL_FILE), spec.runs())?;
    engine::require_every_run(spec, &finished, out)?;
    let summary = Summary {
        spec_hash: spec.hash(),
        runs_total: spec.runs(),
        rows: finished.len() as u64,
        failed: 0,
        skipped: tally.skipped,
        ran: tally.ran,
        baselines_simulated: tally.baselines_simulated,
        scenarios_simulated: tally.scenarios_simulated,
        jobs: tally.workers,
        shard: None,
        merged_from: Vec::new(),
        wall_s: tally.wall_s,
        runs_per_s: if tally.wall_s > 0.0 { tally.ran as f64 / tally.wall_s } else { 0.0 },
        braid_version: BRAID_VERSION,
        git_commit: GIT_COMMIT,
    };
    engine::finish(spec, out, &finished, summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{prepare, run, Options};
    use crate::outdir::TABLE_FILE;
    use crate::progress::Mode;
    use std::path::PathBuf;

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("braid-sweep-chunks-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn spec() -> Spec {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let text = "base = \"scenarios/default.toml\"\nreps = 2\nbaseline = true\n\
                    [set]\n\"e2e.bytes\" = 500000\n[axes]\n\"tunnel.scheduler\" = [\"cpf\", \"srtt\"]\n";
        Spec::parse(text, &repo.join("spec.toml"), &repo).unwrap()
    }

    /// Chunks run out of order, one recorded twice, give the local sweep's table byte for byte.
    #[test]
    fn chunks_in_any_order_give_the_local_table() {
        let (spec, dir) = (spec(), temp("order"));
        let local = dir.join("local");
        let opts = Options {
            out: local.clone(),
            jobs: 2,
            shard: None,
            progress: Mode::Quiet,
            caches: None,
            backend: None,
        };
        run(&spec, &opts).unwrap();

        let out = dir.join("chunked");
        let left = prepare(&spec, &out, None).unwrap();
        assert_eq!(left.pending, vec![0, 1, 2, 3]);
        let late = execute(&spec, &[3, 1]).unwrap();
        let early = execute(&spec, &[0, 2]).unwrap();
        assert_eq!(late.runs.iter().map(|r| r.id).collect::<Vec<_>>(), vec![3, 1]);
        record(&spec, &out, &late.runs).unwrap();
        // Not complete yet: the missing ids are named.
        let err = complete(&spec, &out, Tally::default()).unwrap_err().to_string();
        assert!(err.contains("lack 2 of 4 runs (run ids 0, 2"), "{err}");
        record(&spec, &out, &early.runs).unwrap();
        record(&spec, &out, &late.runs).unwrap();
        assert_eq!(prepare(&spec, &out, None).unwrap().pending, Vec::<u64>::new());
        let summary = complete(&spec, &out, Tally { ran: 4, workers: 2, ..Tally::default() });
        assert_eq!(summary.unwrap().rows, 4);
        let table = |d: &Path| std::fs::read(d.join(TABLE_FILE)).unwrap();
        assert_eq!(table(&out), table(&local));
    }

    #[test]
    fn ids_outside_the_sweep_and_foreign_lines_are_refused() {
        let (spec, dir) = (spec(), temp("refused"));
        let err = execute(&spec, &[0, 4]).unwrap_err();
        assert_eq!(err, ChunkError::RunId { id: 4, runs: 4 });
        let out = dir.join("out");
        prepare(&spec, &out, None).unwrap();
        let mut chunk = execute(&spec, &[0]).unwrap();
        chunk.runs[0].id = 1;
        let err = record(&spec, &out, &chunk.runs).unwrap_err().to_string();
        assert_eq!(err, "the journal line of run 1 is not one line of JSON naming that run");
        // Nothing was written.
        assert_eq!(prepare(&spec, &out, None).unwrap().pending.len(), 4);
    }
}
