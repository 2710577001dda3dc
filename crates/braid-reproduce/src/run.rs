//! `braid reproduce nested-cc` as a library call: writes the base scenario and the specs into
//! the output folder, runs the matrix and contour sweeps in-process with braid-sweep, runs
//! the time-series examples, and writes the tables and `reproduce.json`.
//!
//! The folder (docs/sweeps.md, "braid reproduce"):
//!
//! | path | what |
//! | --- | --- |
//! | `base.toml` | the default scenario (Table 1), the base of every spec |
//! | `matrix.toml`, `contour-<set>.toml` | the sweep specs, for `braid sweep` by hand |
//! | `matrix/`, `contour/<set>/` | their sweep folders (`runs.parquet`, `runs.jsonl`, ...) |
//! | `contour_points.csv` | `point, e2e_rtt_ms, tunnel_share, server_rtt_ms, path1_rtt_ms` (path 2: path 1 plus the set's asymmetry) |
//! | `series/<label>/` | `scenario.toml`, `throughput.csv`, `trace.csv`, `summary.json` |
//! | `table3.csv`, `table_scenarios.csv` | see [`crate::tables`] |
//! | `reproduce.json` | options, the scenario and contour readings, what ran, wall time |
//!
//! Everything is resumable: the sweeps skip the runs in their journals, the examples those with
//! a summary. Rerunning with other `--reps`, `--bytes` or points is refused rather than mixed
//! in: the specs written first must match.

use std::path::{Path, PathBuf};
use std::time::Instant;

use braid_sweep::points::{contour_points, CONTOUR_SEED, MIN_DISTANCE};
use braid_sweep::{ProgressMode, Summary as SweepSummary};
use serde::Serialize;

use crate::error::ReproduceError;
use crate::folder::{self, write, write_once};
use crate::nested_cc::{
    examples, Combination, COMBINATIONS, CONTOUR_NOTE, CONTOUR_SETS, SCENARIOS, SCENARIO_NOTE,
    SERIES,
};
use crate::series::{self, SeriesSummary};
use crate::specs::{self, SpecInputs, BASE_FILE};
use crate::sweeps;
use crate::tables;
use crate::toml_text::points_csv;

/// How to run the reproduction.
#[derive(Debug, Clone)]
pub struct Options {
    pub out: PathBuf,
    /// Repetitions of each matrix cell (the paper: 10).
    pub reps: u32,
    /// Worker threads, at least 1.
    pub jobs: usize,
    /// Bytes of every download (the paper: 300 MB).
    pub bytes: u64,
    /// Contour points (the paper: 400); 0 skips the contour sweeps.
    pub points: usize,
    /// Run the time-series examples.
    pub series: bool,
    pub progress: ProgressMode,
}

/// What an invocation did; also the `runs` part of `reproduce.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub matrix: SweepSummary,
    /// Each contour set's sweep, by set name (none when points = 0).
    pub contour: Vec<ContourOutcome>,
    pub series_ran: usize,
    pub series_skipped: usize,
    pub wall_s: f64,
}

/// One contour set's sweep.
#[derive(Debug, Clone, Serialize)]
pub struct ContourOutcome {
    pub set: &'static str,
    pub sweep: SweepSummary,
}

/// Runs (or resumes) the whole reproduction into `opts.out`.
pub fn nested_cc(opts: &Options) -> Result<Outcome, ReproduceError> {
    let start = Instant::now();
    let dir = &opts.out;
    folder::create(dir)?;
    write_once(&dir.join(BASE_FILE), &folder::default_scenario()?)?;

    let all: Vec<&Combination> = COMBINATIONS.iter().collect();
    let matrix_text =
        specs::matrix(&SpecInputs { bytes: opts.bytes, reps: opts.reps, combinations: &all });
    let matrix_path = dir.join("matrix.toml");
    write_once(&matrix_path, &matrix_text)?;
    let points = contour_points(opts.points, CONTOUR_SEED, MIN_DISTANCE)?;
    let contour_spec = |name: &str| dir.join(format!("contour-{name}.toml"));
    if !points.is_empty() {
        for set in CONTOUR_SETS {
            write_once(&contour_spec(set.name), &specs::contour(opts.bytes, set, &points))?;
        }
        write_once(&dir.join("contour_points.csv"), &points_csv(&points, None))?;
    }
    write_readme(dir, opts)?;
    // One set of caches for every sweep of this reproduction (braid_sweep::Caches).
    let caches = std::sync::Arc::new(braid_sweep::Caches::default());

    let (matrix_spec, matrix) =
        sweeps::run("matrix", &matrix_path, dir.join("matrix"), opts.jobs, opts.progress, &caches)?;
    let finished = sweeps::finished("matrix", &matrix_spec, &dir.join("matrix"))?;
    let (table3, by_scenario) = tables::tables(&matrix_spec, &finished)
        .map_err(|source| ReproduceError::Tables { which: "table 3", source })?;
    write(&dir.join("table3.csv"), &table3)?;
    write(&dir.join("table_scenarios.csv"), &by_scenario)?;

    let mut contour = Vec::new();
    if !points.is_empty() {
        for set in CONTOUR_SETS {
            let out = dir.join("contour").join(set.name);
            let (_, summary) = sweeps::run(
                "contour",
                &contour_spec(set.name),
                out,
                opts.jobs,
                opts.progress,
                &caches,
            )?;
            contour.push(ContourOutcome { set: set.name, sweep: summary });
        }
    }
    let SeriesSummary { ran, skipped } = if opts.series {
        let base_path = dir.join(BASE_FILE);
        series::run_all(&base_path, &dir.join("series"), &examples(opts.bytes), opts.jobs)?
    } else {
        SeriesSummary::default()
    };
    let outcome = Outcome {
        matrix,
        contour,
        series_ran: ran,
        series_skipped: skipped,
        wall_s: start.elapsed().as_secs_f64(),
    };
    write_manifest(dir, opts, &outcome)?;
    Ok(outcome)
}

/// `reproduce.json`: the options, the readings of the paper, and what the last run did.
fn write_manifest(dir: &Path, opts: &Options, outcome: &Outcome) -> Result<(), ReproduceError> {
    let series: Vec<serde_json::Value> = SERIES
        .iter()
        .map(|s| {
            serde_json::json!({
                "label": s.label, "figure": s.figure, "combination": s.combination,
                "keys": s.keys, "scheduler": "cpf", "dir": format!("series/{}", s.label),
            })
        })
        .collect();
    let combinations: Vec<serde_json::Value> = COMBINATIONS
        .iter()
        .map(|c| {
            serde_json::json!({
                "label": c.label, "e2e_cc": c.e2e_cc, "tunnel_cc": c.tunnel_cc,
                "reliability": c.reliability, "reorder": c.reorder,
            })
        })
        .collect();
    let contour_sets: Vec<serde_json::Value> = CONTOUR_SETS
        .iter()
        .map(|s| {
            serde_json::json!({
                "name": s.name, "figure": s.figure, "combinations": s.combinations,
                "asymmetry_ms": s.asymmetry_ms, "buffers_pkts": s.buffers,
                "spec": format!("contour-{}.toml", s.name), "dir": format!("contour/{}", s.name),
            })
        })
        .collect();
    let manifest = serde_json::json!({
        "experiment": "nested-cc",
        "paper": "Pieska et al. 2024, Performance Impact of Nested Congestion Control on \
                  Transport-Layer Multipath Tunneling, Future Internet 16, 233",
        "options": { "reps": opts.reps, "bytes": opts.bytes, "points": opts.points,
                     "jobs": opts.jobs, "series": opts.series },
        "combinations": combinations,
        "schedulers": crate::nested_cc::SCHEDULERS,
        "scenarios": SCENARIOS,
        "scenarios_note": SCENARIO_NOTE,
        "contour": {
            "sets": contour_sets,
            "note": CONTOUR_NOTE,
            "points": opts.points,
            "seed": CONTOUR_SEED,
            "min_distance": MIN_DISTANCE,
        },
        "series": series,
        "ci95": "Student t: t(0.975, n-1) * sd / sqrt(n), sample sd",
        "runs": outcome,
        "braid_version": braid_sweep::BRAID_VERSION,
        "git_commit": braid_sweep::GIT_COMMIT,
    });
    let text = serde_json::to_string_pretty(&manifest).expect("a manifest serializes");
    write(&dir.join("reproduce.json"), &format!("{text}\n"))
}

/// `README.md`: what the folder holds and how it was made, for a reader without the docs.
fn write_readme(dir: &Path, opts: &Options) -> Result<(), ReproduceError> {
    let text = format!(
        "# braid reproduce nested-cc\n\n\
         Pieska et al. 2024, \"Performance Impact of Nested Congestion Control on Transport-Layer \
         Multipath Tunneling\" (Future Internet 16, 233), rerun in braid-sim: {} MB downloads, \
         {} repetitions per matrix cell, {} contour points.\n\n\
         - `matrix/`: Table 3 and Figure 10, the sweep of `matrix.toml` (11 combinations x CPF, \
         SRTT x 15 scenarios x reps); `table3.csv` and `table_scenarios.csv` summarise its \
         relative DLCT.\n\
         - `contour/<set>/`: the contour figures, one sweep per batch (`contour-<set>.toml`) \
         over the points in `contour_points.csv`.\n\
         - `series/<label>/throughput.csv` (and `trace.csv`): the throughput-over-time examples.\n\
         - `reproduce.json`: the options, which scenarios and combinations were read from the \
         paper, and what ran.\n\n\
         ## Scenarios\n\n{SCENARIO_NOTE}\n\n## Contour figures\n\n{CONTOUR_NOTE}\n\n\
         Rerun the same `braid reproduce nested-cc` command to resume; a sweep alone resumes with \
         `braid sweep matrix.toml --out matrix`. Figures: `python3 -m braid.figures nested-cc .`\n",
        opts.bytes as f64 / 1e6,
        opts.reps,
        opts.points
    );
    write(&dir.join("README.md"), &text)
}
