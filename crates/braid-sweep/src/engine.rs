//! Running a sweep: check the spec's cells, run what the journal lacks on a pool of threads,
//! then turn the journal into the table. Also merging shard folders into one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;

use braid_sim::Scenario;
use serde::Serialize;

use crate::backend::Measure;
use crate::baseline::BaselineCache;
use crate::journal::{self, Finished, JOURNAL_FILE};
use crate::outdir::{self, SUMMARY_FILE, TABLE_FILE};
use crate::plan::{cell_overrides, run_key, selected_runs, RunKey, Shard};
use crate::progress::{Mode, Progress};
use crate::runner::{execute_with, RunCache};
use crate::spec::Spec;
use crate::{parquet_out, table, SweepError, BRAID_VERSION, GIT_COMMIT};

/// How to run a sweep.
#[derive(Clone)]
pub struct Options {
    /// The sweep folder.
    pub out: PathBuf,
    /// Worker threads, at least 1.
    pub jobs: usize,
    /// Run only this shard's runs.
    pub shard: Option<Shard>,
    pub progress: Mode,
    /// Caches to share with other sweeps of this process (`braid reproduce` runs a dozen
    /// whose cells overlap); `None`: this sweep's own.
    pub caches: Option<Arc<Caches>>,
    /// Measure the runs with this backend instead of simulating them, one at a time
    /// ([`crate::backend`]); `jobs` and the caches are then not used.
    pub backend: Option<Arc<dyn Measure>>,
}

/// The baselines and the reports by resolved scenario that sweeps run one after another in one
/// process can share: a baseline or a scenario another sweep already simulated is taken from
/// here, bit for bit what simulating it again would give (the simulator is deterministic given
/// the scenario and its seed), so sharing changes no row, only the time.
#[derive(Default)]
pub struct Caches {
    pub baselines: BaselineCache,
    pub runs: RunCache,
}

/// What an invocation did; also written to `DIR/sweep.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub spec_hash: String,
    /// Runs of the whole sweep.
    pub runs_total: u64,
    /// Runs in the table (this shard's, or the merged ones).
    pub rows: u64,
    /// Rows with status "error".
    pub failed: u64,
    /// Runs this invocation found already finished in the journal.
    pub skipped: u64,
    /// Runs this invocation simulated.
    pub ran: u64,
    pub baselines_simulated: u64,
    /// Distinct scenarios this invocation simulated: `ran` minus the runs whose resolved
    /// scenario an earlier run of this invocation already had.
    pub scenarios_simulated: u64,
    pub jobs: usize,
    pub shard: Option<String>,
    pub merged_from: Vec<PathBuf>,
    /// Wall time of this invocation, seconds.
    pub wall_s: f64,
    /// Runs simulated per second of wall time in this invocation.
    pub runs_per_s: f64,
    pub braid_version: &'static str,
    pub git_commit: &'static str,
}

/// Loads the first cell's scenario, and each axis value once, so that a misspelt key or a
/// value out of range fails before any run. (A combination of values that only fails
/// together is found by its run, which becomes an error row.)
pub fn check_cells(spec: &Spec) -> Result<(), SweepError> {
    let first = run_key(spec, 0);
    let load = |key: &RunKey| {
        let overrides = cell_overrides(spec, key);
        Scenario::load(&spec.base, &overrides)
            .map(drop)
            .map_err(|error| SweepError::Cell { overrides: overrides.join(" "), error })
    };
    let named = |a: usize, i: usize, e: SweepError| match (e, &spec.axes[a]) {
        (SweepError::Cell { error, .. }, axis) if axis.tables.is_some() => SweepError::Entry {
            axis: axis.key.clone(),
            index: i,
            label: axis.values[i].to_toml(),
            error: Box::new(error),
        },
        (e, _) => e,
    };
    load(&first).map_err(|e| match spec.axes.iter().position(|a| a.tables.is_some()) {
        // With one axis, the first cell is that axis's first entry (and [set]).
        Some(a) if spec.axes.len() == 1 => named(a, 0, e),
        _ => e,
    })?;
    for (a, axis) in spec.axes.iter().enumerate() {
        for i in 1..axis.values.len() {
            let mut key = first.clone();
            key.value_index[a] = i;
            load(&key).map_err(|e| named(a, i, e))?;
        }
    }
    Ok(())
}

/// The runs a sweep folder still lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// Run ids of the selection that the journal lacks, ascending.
    pub pending: Vec<u64>,
    /// Runs of the selection the journal already has.
    pub skipped: u64,
}

/// Checks the spec's cells, makes (or checks) the sweep folder `out`, and reads its journal:
/// what a sweep, or a shard of it, has left to run.
pub fn prepare(spec: &Spec, out: &Path, shard: Option<Shard>) -> Result<Pending, SweepError> {
    prepare_backend(spec, out, shard, None)
}

/// [`prepare`] for the runs of `backend` (`None`: the simulator).
fn prepare_backend(
    spec: &Spec,
    out: &Path,
    shard: Option<Shard>,
    backend: Option<&str>,
) -> Result<Pending, SweepError> {
    check_cells(spec)?;
    outdir::prepare_backend(out, spec, backend)?;
    let finished = journal::read(&out.join(JOURNAL_FILE), spec.runs())?;
    let selected: Vec<u64> = selected_runs(spec, shard).collect();
    let pending: Vec<u64> =
        selected.iter().copied().filter(|id| !finished.contains_key(id)).collect();
    let skipped = (selected.len() - pending.len()) as u64;
    Ok(Pending { pending, skipped })
}

/// Runs a sweep (or one shard of it) into `opts.out`, resuming from its journal, and writes
/// `runs.parquet` and `sweep.json` there.
pub fn run(spec: &Spec, opts: &Options) -> Result<Summary, SweepError> {
    let start = std::time::Instant::now();
    let backend = opts.backend.as_deref();
    let Pending { pending, skipped } =
        prepare_backend(spec, &opts.out, opts.shard, backend.map(|b| b.name()))?;
    let jobs = if backend.is_some() { 1 } else { opts.jobs.max(1) };
    let journal_path = opts.out.join(JOURNAL_FILE);

    let writer = Mutex::new(journal::Writer::open(&journal_path)?);
    let own;
    let caches: &Caches = match &opts.caches {
        Some(shared) => shared,
        None => {
            own = Caches::default();
            &own
        }
    };
    let (cache, runs) = (&caches.baselines, &caches.runs);
    let (baselines_before, scenarios_before) = (cache.simulated(), runs.computed());
    let progress = Progress::new(opts.progress, pending.len() as u64, skipped);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let failure: Mutex<Option<journal::JournalError>> = Mutex::new(None);
    let (tick_tx, tick_rx) = mpsc::channel::<()>();
    thread::scope(|scope| {
        let progress = &progress;
        scope.spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) =
                tick_rx.recv_timeout(opts.progress.interval())
            {
                progress.draw(false);
            }
            progress.draw(true);
        });
        let workers: Vec<_> = (0..jobs.min(pending.len()))
            .map(|_| {
                scope.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        let Some(&id) = pending.get(next.fetch_add(1, Ordering::Relaxed)) else {
                            break;
                        };
                        let done = execute_with(spec, id, cache, runs, backend);
                        if done.cancelled {
                            stop.store(true, Ordering::Relaxed);
                            break;
                        }
                        let written =
                            writer.lock().unwrap_or_else(|e| e.into_inner()).append(&done.line);
                        if let Err(e) = written {
                            failure.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                            stop.store(true, Ordering::Relaxed);
                            break;
                        }
                        progress.finished(done.ok);
                    }
                })
            })
            .collect();
        for w in workers {
            // A worker catches its runs' panics; one that escapes is a bug worth seeing.
            if let Err(panic) = w.join() {
                std::panic::resume_unwind(panic);
            }
        }
        drop(tick_tx);
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e.into());
    }
    writer.into_inner().unwrap_or_else(|e| e.into_inner()).sync()?;

    let finished = journal::read(&journal_path, spec.runs())?;
    let ran = progress.done();
    let wall_s = start.elapsed().as_secs_f64();
    let summary = Summary {
        spec_hash: spec.hash(),
        runs_total: spec.runs(),
        rows: finished.len() as u64,
        failed: 0,
        skipped,
        ran,
        baselines_simulated: cache.simulated() - baselines_before,
        scenarios_simulated: runs.computed() - scenarios_before,
        jobs,
        shard: opts.shard.map(|s| s.to_string()),
        merged_from: Vec::new(),
        wall_s,
        runs_per_s: if wall_s > 0.0 { ran as f64 / wall_s } else { 0.0 },
        braid_version: BRAID_VERSION,
        git_commit: GIT_COMMIT,
    };
    finish(spec, &opts.out, &finished, summary)
}

/// Merges the journals of shard folders (each made by this spec) into `out` and writes the
/// table, which then equals an unsharded sweep's. Fails, naming the missing run ids, when the
/// shards together lack runs; what they have is kept in `out`'s journal, so a plain
/// `braid sweep` into `out` runs just the rest.
pub fn merge(spec: &Spec, out: &Path, shards: &[PathBuf]) -> Result<Summary, SweepError> {
    let start = std::time::Instant::now();
    outdir::prepare(out, spec)?;
    let journal_path = out.join(JOURNAL_FILE);
    let mut finished = journal::read(&journal_path, spec.runs())?;
    let mut writer = journal::Writer::open(&journal_path)?;
    for shard in shards {
        if outdir::recorded_hash(shard)?.is_none() {
            return Err(SweepError::NotAShard { dir: shard.clone() });
        }
        outdir::check(shard, spec)?;
        for (id, line) in journal::read(&shard.join(JOURNAL_FILE), spec.runs())? {
            if let std::collections::btree_map::Entry::Vacant(slot) = finished.entry(id) {
                writer.append(&line)?;
                slot.insert(line);
            }
        }
    }
    writer.sync()?;
    require_every_run(spec, &finished, out)?;
    let summary = Summary {
        spec_hash: spec.hash(),
        runs_total: spec.runs(),
        rows: finished.len() as u64,
        failed: 0,
        skipped: 0,
        ran: 0,
        baselines_simulated: 0,
        scenarios_simulated: 0,
        jobs: 0,
        shard: None,
        merged_from: shards.to_vec(),
        wall_s: start.elapsed().as_secs_f64(),
        runs_per_s: 0.0,
        braid_version: BRAID_VERSION,
        git_commit: GIT_COMMIT,
    };
    finish(spec, out, &finished, summary)
}

/// Fails naming the missing run ids (the first ten) unless `finished`, the journal of `out`,
/// has every run of `spec`.
pub(crate) fn require_every_run(
    spec: &Spec,
    finished: &Finished,
    out: &Path,
) -> Result<(), SweepError> {
    let missing: Vec<u64> = (0..spec.runs()).filter(|id| !finished.contains_key(id)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(SweepError::Incomplete {
        missing: missing.len() as u64,
        total: spec.runs(),
        first: missing.iter().take(10).map(u64::to_string).collect::<Vec<_>>().join(", "),
        dir: out.to_path_buf(),
    })
}

/// Writes the table and the summary.
pub(crate) fn finish(
    spec: &Spec,
    out: &Path,
    finished: &Finished,
    mut summary: Summary,
) -> Result<Summary, SweepError> {
    let columns = table::build(spec, finished)?;
    let status = columns.iter().find(|c| c.name == "status" || c.name == "result.status");
    summary.failed = status.map_or(0, |c| {
        c.values.iter().filter(|v| **v != crate::flatten::Scalar::Str("ok".into())).count() as u64
    });
    parquet_out::write(&out.join(TABLE_FILE), &columns)?;
    let json = serde_json::to_string_pretty(&summary).expect("a summary serializes");
    outdir::write_atomic(&out.join(SUMMARY_FILE), &format!("{json}\n"))?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flatten::Scalar;

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("braid-sweep-engine-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn relative_dlct_is_run_with_baselines_bit_for_bit() {
        let dir = temp("relative");
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let text = "base = \"scenarios/default.toml\"\nreps = 2\nbaseline = true\n\
                    [set]\n\"e2e.bytes\" = 1000000\n[axes]\n\"tunnel.scheduler\" = [\"cpf\", \"srtt\"]\n";
        let spec = Spec::parse(text, &repo.join("spec.toml"), &repo).unwrap();
        let opts = Options {
            out: dir.join("out"),
            jobs: 2,
            shard: None,
            progress: Mode::Quiet,
            caches: None,
            backend: None,
        };
        let summary = run(&spec, &opts).unwrap();
        assert_eq!((summary.rows, summary.failed, summary.ran), (4, 0, 4));
        // Two schedulers share each rep's baseline.
        assert_eq!(summary.baselines_simulated, 2);

        let finished = journal::read(&opts.out.join(JOURNAL_FILE), spec.runs()).unwrap();
        let columns = table::build(&spec, &finished).unwrap();
        let relative = &columns.iter().find(|c| c.name == "relative_dlct").unwrap().values;
        for id in 0..spec.runs() {
            let key = run_key(&spec, id);
            let mut s = Scenario::load(&spec.base, &cell_overrides(&spec, &key)).unwrap();
            s.seed += u64::from(key.rep);
            let want = braid_sim::run_with_baseline(&s).unwrap().report.relative_dlct.unwrap();
            assert_eq!(relative[id as usize], Scalar::Float(want), "run {id}");
            let Scalar::Float(got) = relative[id as usize] else { unreachable!() };
            assert_eq!(got.to_bits(), want.to_bits(), "run {id}");
        }
    }

    /// BUF500 and CDL0 restate Table 1's buffer and drop-tail queues: the same scenario as no
    /// key, simulated once (noise on, as sweeps default to), each row with the same report.
    #[test]
    fn cells_that_resolve_to_one_scenario_are_simulated_once() {
        let dir = temp("dedupe");
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let text = "base = \"scenarios/default.toml\"\nbaseline = true\n\
                    [set]\n\"e2e.bytes\" = 1000000\n[axes]\nkeys = [\"\", \"BUF500\", \"CDL0\", \"BUF250\"]\n";
        let spec = Spec::parse(text, &repo.join("spec.toml"), &repo).unwrap();
        let opts = Options {
            out: dir.join("out"),
            jobs: 2,
            shard: None,
            progress: Mode::Quiet,
            caches: None,
            backend: None,
        };
        let summary = run(&spec, &opts).unwrap();
        assert_eq!((summary.rows, summary.failed, summary.ran), (4, 0, 4));
        assert_eq!(summary.scenarios_simulated, 2, "BUF250 differs, the other three are one");
        let finished = journal::read(&opts.out.join(JOURNAL_FILE), spec.runs()).unwrap();
        let columns = table::build(&spec, &finished).unwrap();
        let dlct = &columns.iter().find(|c| c.name == "dlct_s").unwrap().values;
        assert_eq!((&dlct[1], &dlct[2]), (&dlct[0], &dlct[0]));
        // And each equals its own simulation.
        let key = run_key(&spec, 1);
        let mut s = Scenario::load(&spec.base, &cell_overrides(&spec, &key)).unwrap();
        s.seed += u64::from(key.rep);
        let want = braid_sim::run(&s, false).unwrap().report.dlct_s;
        assert_eq!(dlct[1], Scalar::Float(want));
    }

    /// Two sweeps sharing caches: the second simulates only the baselines and scenarios the
    /// first did not, and its table is byte for byte the one it writes alone.
    #[test]
    fn sweeps_sharing_caches_simulate_only_what_is_new_and_write_the_same_tables() {
        let dir = temp("shared");
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let spec = |schedulers: &str| {
            let text = format!(
                "base = \"scenarios/default.toml\"\nbaseline = true\n[set]\n\"e2e.bytes\" = 500000\n\
                 [axes]\n\"tunnel.scheduler\" = [{schedulers}]\n\"paths.0.rtt_ms\" = [10, 30]\n"
            );
            Spec::parse(&text, &repo.join("spec.toml"), &repo).unwrap()
        };
        let (first, second) = (spec("\"cpf\""), spec("\"cpf\", \"srtt\""));
        let caches = Arc::new(Caches::default());
        let opts = |out: &str, caches: Option<Arc<Caches>>| Options {
            out: dir.join(out),
            jobs: 2,
            shard: None,
            progress: Mode::Quiet,
            caches,
            backend: None,
        };
        let a = run(&first, &opts("a", Some(Arc::clone(&caches)))).unwrap();
        assert_eq!((a.baselines_simulated, a.scenarios_simulated), (2, 2));
        let b = run(&second, &opts("b", Some(Arc::clone(&caches)))).unwrap();
        // Both RTTs' baselines and the CPF cells came from the first sweep.
        assert_eq!((b.ran, b.baselines_simulated, b.scenarios_simulated), (4, 0, 2));
        let alone = run(&second, &opts("alone", None)).unwrap();
        assert_eq!((alone.baselines_simulated, alone.scenarios_simulated), (2, 4));
        let table = |d: &str| std::fs::read(dir.join(d).join(TABLE_FILE)).unwrap();
        assert_eq!(table("b"), table("alone"));
    }

    #[test]
    fn a_table_entry_that_does_not_load_is_named() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let text = "base = \"scenarios/default.toml\"\n[axes]\nc = [{ label = \"ok\", \"e2e.cc\" = \"bbr\" }, \
                    { label = \"bad\", \"tunnel.nope\" = 1 }]\nseed = [1, 2]\n";
        let spec = Spec::parse(text, &repo.join("spec.toml"), &repo).unwrap();
        let err = check_cells(&spec).unwrap_err().to_string();
        assert!(err.starts_with("axes.c[1] (label \"bad\") does not load"), "{err}");
        assert!(err.contains("tunnel.nope"), "{err}");
    }

    #[test]
    fn a_second_invocation_runs_nothing_and_rewrites_the_same_table() {
        let dir = temp("again");
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let text = "base = \"scenarios/default.toml\"\n[set]\n\"e2e.bytes\" = 500000\n";
        let spec = Spec::parse(text, &repo.join("spec.toml"), &repo).unwrap();
        let opts = Options {
            out: dir.clone(),
            jobs: 1,
            shard: None,
            progress: Mode::Quiet,
            caches: None,
            backend: None,
        };
        run(&spec, &opts).unwrap();
        let first = std::fs::read(dir.join(TABLE_FILE)).unwrap();
        let again = run(&spec, &opts).unwrap();
        assert_eq!((again.ran, again.skipped), (0, 1));
        assert_eq!(std::fs::read(dir.join(TABLE_FILE)).unwrap(), first);
    }
}
