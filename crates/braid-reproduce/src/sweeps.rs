//! Running a spec a reproduction wrote into its folder, in-process with braid-sweep (the one
//! sweep engine: resumable from its journal), and reading the journal back for the tables.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use braid_sweep::journal::{self, Finished, JOURNAL_FILE};
use braid_sweep::{Caches, ProgressMode, Spec, Summary};

use crate::error::ReproduceError;

/// Loads the spec at `spec_path` and runs (or resumes) it into `out`; `which` names the sweep
/// in errors. The sweeps of one reproduction share `caches`: their cells overlap (the contour
/// batches repeat each point's baseline), and a shared result is the very same bits.
pub fn run(
    which: &'static str,
    spec_path: &Path,
    out: PathBuf,
    jobs: usize,
    progress: ProgressMode,
    caches: &Arc<Caches>,
) -> Result<(Spec, Summary), ReproduceError> {
    let spec = Spec::load(spec_path).map_err(|source| ReproduceError::Spec { which, source })?;
    let caches = Some(Arc::clone(caches));
    let opts = braid_sweep::Options { out, jobs, shard: None, progress, caches, backend: None };
    let summary =
        braid_sweep::run(&spec, &opts).map_err(|source| ReproduceError::Sweep { which, source })?;
    Ok((spec, summary))
}

/// The finished runs in the journal of the sweep folder `dir`.
pub fn finished(which: &'static str, spec: &Spec, dir: &Path) -> Result<Finished, ReproduceError> {
    journal::read(&dir.join(JOURNAL_FILE), spec.runs())
        .map_err(|e| ReproduceError::Sweep { which, source: e.into() })
}
