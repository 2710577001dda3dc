//! `braid reproduce acpf` as a library call: writes the base scenario and the specs into the
//! output folder, runs the table and contour sweeps in-process with braid-sweep, runs the
//! Figure 4 examples, and writes the tables and `reproduce.json`.
//!
//! The folder (docs/sweeps.md, "braid reproduce acpf"):
//!
//! | path | what |
//! | --- | --- |
//! | `base.toml` | the default scenario, the base of both specs |
//! | `table.toml`, `contour.toml` | the sweep specs, for `braid sweep` by hand |
//! | `table/`, `contour/` | their sweep folders (`runs.parquet`, `runs.jsonl`, ...) |
//! | `goodput.csv`, `gain.csv`, `contour.csv` | see [`super::tables`] |
//! | `contour_points.csv` | `point, e2e_rtt_ms, tunnel_share, server_rtt_ms, path1_rtt_ms, path2_rtt_ms` |
//! | `series/<label>/` | Figure 4: `scenario.toml`, `throughput.csv`, `trace.csv`, `summary.json` |
//! | `README.md`, `reproduce.json` | the readings of the paper, the options, what ran |
//!
//! Resumable as nested-cc is: the sweeps skip the runs in their journals, the examples those
//! with a summary; other options into the same folder are refused.

use std::path::{Path, PathBuf};
use std::time::Instant;

use braid_sweep::points::{contour_points, CONTOUR_SEED, MIN_DISTANCE};
use braid_sweep::{ProgressMode, Summary as SweepSummary};
use serde::Serialize;

use super::specs::{self, DELAYS_AXIS, TUNNEL_AXIS};
use super::tables;
use super::{
    figure4_examples, CONTOUR_NOTE, CONTOUR_PATH2_OFFSET_MS, DELAYS, E2E_CC, FIGURE4, FIGURE4_NOTE,
    SCHEDULERS, SETUP_NOTE, TUNNELS,
};
use crate::error::{OptionError, ReproduceError};
use crate::folder::{self, write, write_once, BASE_FILE};
use crate::series::{self, SeriesSummary};
use crate::sweeps;
use crate::toml_text::points_csv;

/// `--reps`: repetitions of each set (the paper: 5 kernel, 10 user-space).
pub const REPS: (u32, u32) = (1, braid_sweep::spec::MAX_REPS);
/// `--bytes`: the download over a 50 Mbit/s tunnel, 100 kB to 10 GB.
pub const BYTES: (u64, u64) = (100_000, 10_000_000_000);
/// `--buffer-pkts`: both paths' bottleneck buffers.
pub const BUFFER_PKTS: (u32, u32) = (10, 100_000);
/// `--points`: contour points (the paper's 400); 0 skips the contour sweep.
pub const POINTS: (usize, usize) = (0, 1000);
/// `--jobs`: worker threads.
pub const JOBS: (usize, usize) = (1, 1024);

/// How to run the reproduction.
#[derive(Debug, Clone)]
pub struct Options {
    pub out: PathBuf,
    /// Repetitions of each set ([`REPS`]).
    pub reps: u32,
    /// Worker threads ([`JOBS`]).
    pub jobs: usize,
    /// Bytes of a download over the 50 Mbit/s tunnels ([`BYTES`]); the 25 Mbit/s tunnels
    /// download half.
    pub bytes: u64,
    /// Both paths' bottleneck buffers ([`BUFFER_PKTS`]).
    pub buffer_pkts: u32,
    /// Contour points ([`POINTS`]); 0 skips the contour sweep.
    pub points: usize,
    /// Run the Figure 4 examples.
    pub series: bool,
    pub progress: ProgressMode,
}

impl Options {
    /// Every option inside its range, else the first that is not, named by its flag.
    pub fn validate(&self) -> Result<(), OptionError> {
        OptionError::check("--reps", self.reps, REPS.0, REPS.1)?;
        OptionError::check("--jobs", self.jobs, JOBS.0, JOBS.1)?;
        OptionError::check("--bytes", self.bytes, BYTES.0, BYTES.1)?;
        OptionError::check("--buffer-pkts", self.buffer_pkts, BUFFER_PKTS.0, BUFFER_PKTS.1)?;
        OptionError::check("--points", self.points, POINTS.0, POINTS.1)
    }
}

/// What an invocation did; also the `runs` part of `reproduce.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub table: SweepSummary,
    pub contour: Option<SweepSummary>,
    pub series_ran: usize,
    pub series_skipped: usize,
    pub wall_s: f64,
}

/// Runs (or resumes) the whole reproduction into `opts.out`.
pub fn acpf(opts: &Options) -> Result<Outcome, ReproduceError> {
    opts.validate()?;
    let start = Instant::now();
    let dir = &opts.out;
    folder::create(dir)?;
    write_once(&dir.join(BASE_FILE), &folder::default_scenario()?)?;
    let table_path = dir.join("table.toml");
    write_once(&table_path, &specs::table(opts.bytes, opts.reps, opts.buffer_pkts))?;
    let points = contour_points(opts.points, CONTOUR_SEED, MIN_DISTANCE)?;
    let contour_path = dir.join("contour.toml");
    if !points.is_empty() {
        write_once(&contour_path, &specs::contour(opts.bytes, opts.buffer_pkts, &points))?;
        write_once(
            &dir.join("contour_points.csv"),
            &points_csv(&points, Some(CONTOUR_PATH2_OFFSET_MS)),
        )?;
    }
    write_readme(dir, opts)?;
    // One set of caches for every sweep of this reproduction (braid_sweep::Caches).
    let caches = std::sync::Arc::new(braid_sweep::Caches::default());

    let (table_spec, table) =
        sweeps::run("table", &table_path, dir.join("table"), opts.jobs, opts.progress, &caches)?;
    let finished = sweeps::finished("table", &table_spec, &dir.join("table"))?;
    let (goodput, gain) = tables::goodput_tables(&table_spec, &finished)
        .map_err(|source| ReproduceError::Tables { which: "goodput table", source })?;
    write(&dir.join("goodput.csv"), &goodput)?;
    write(&dir.join("gain.csv"), &gain)?;

    let contour = if points.is_empty() {
        None
    } else {
        let (spec, summary) = sweeps::run(
            "contour",
            &contour_path,
            dir.join("contour"),
            opts.jobs,
            opts.progress,
            &caches,
        )?;
        let finished = sweeps::finished("contour", &spec, &dir.join("contour"))?;
        let csv = tables::contour_table(&spec, &finished)
            .map_err(|source| ReproduceError::Tables { which: "contour table", source })?;
        write(&dir.join("contour.csv"), &csv)?;
        Some(summary)
    };
    let SeriesSummary { ran, skipped } = if opts.series {
        let examples = figure4_examples(opts.bytes, opts.buffer_pkts);
        series::run_all(&dir.join(BASE_FILE), &dir.join("series"), &examples, opts.jobs)?
    } else {
        SeriesSummary::default()
    };
    let outcome = Outcome {
        table,
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
    let tunnels: Vec<serde_json::Value> = TUNNELS
        .iter()
        .map(|t| {
            serde_json::json!({
                "label": t.label, "tunnel_cc": t.cc, "reliability": t.reliability,
                "rate_mbps": t.rate_mbps, "bytes": super::transfer_bytes(t, opts.bytes),
            })
        })
        .collect();
    let delays: Vec<serde_json::Value> = DELAYS
        .iter()
        .map(|d| {
            serde_json::json!({
                "label": d.label, "server_rtt_ms": d.server_rtt_ms,
                "path1_rtt_ms": d.path1_rtt_ms, "path2_rtt_ms": d.path2_rtt_ms,
            })
        })
        .collect();
    let series: Vec<serde_json::Value> = FIGURE4
        .iter()
        .map(|r| {
            serde_json::json!({
                "label": r.label, "figure": r.panel, "e2e_cc": r.e2e_cc,
                "scheduler": r.scheduler, "tunnel": "bbr", "delays": "short",
                "dir": format!("series/{}", r.label),
            })
        })
        .collect();
    let manifest = serde_json::json!({
        "experiment": "acpf",
        "paper": "Pieska et al. 2021, Adaptive Cheapest Path First Scheduling in a \
                  Transport-Layer Multi-Path Tunnel Context, ANRW 2021",
        "options": { "reps": opts.reps, "bytes": opts.bytes, "buffer_pkts": opts.buffer_pkts,
                     "points": opts.points, "jobs": opts.jobs, "series": opts.series },
        "axes": { "tunnel": TUNNEL_AXIS, "delays": DELAYS_AXIS },
        "tunnels": tunnels,
        "delays": delays,
        "e2e_cc": E2E_CC,
        "schedulers": SCHEDULERS,
        "setup_note": SETUP_NOTE,
        "series": series,
        "series_note": FIGURE4_NOTE,
        "contour": {
            "note": CONTOUR_NOTE,
            "points": opts.points,
            "seed": CONTOUR_SEED,
            "min_distance": MIN_DISTANCE,
            "path2_offset_ms": CONTOUR_PATH2_OFFSET_MS,
        },
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
        "# braid reproduce acpf\n\n\
         Pieska et al. 2021, \"Adaptive Cheapest Path First Scheduling in a Transport-Layer \
         Multi-Path Tunnel Context\" (ANRW 2021), rerun in braid-sim: {} MB downloads over the \
         50 Mbit/s tunnels, {}-packet buffers, {} repetitions per set, {} contour points.\n\n\
         - `table/`: Figure 5, the sweep of `table.toml` (2 tunnel kinds x 2 delay sets x 3 \
         end-to-end CCs x CPF, ACPF x reps); `goodput.csv` and `gain.csv` summarise it.\n\
         - `contour/`: Figure 6, the sweep of `contour.toml` over the points in \
         `contour_points.csv`; `contour.csv` has its values.\n\
         - `series/<label>/`: Figure 4's runs (`throughput.csv`, `trace.csv`).\n\
         - `index.html`: the figures and tables, with their captions.\n\
         - `reproduce.json`: the options, the readings of the paper, and what ran.\n\n\
         ## Set-up\n\n{SETUP_NOTE}\n\n## Figure 4\n\n{FIGURE4_NOTE}\n\n## Figure 6\n\n\
         {CONTOUR_NOTE}\n\n\
         Rerun the same `braid reproduce acpf` command to resume; a sweep alone resumes with \
         `braid sweep table.toml --out table`. Figures: `python3 -m braid.figures acpf .`\n",
        opts.bytes as f64 / 1e6,
        opts.buffer_pkts,
        opts.reps,
        opts.points
    );
    write(&dir.join("README.md"), &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Options {
        Options {
            out: PathBuf::from("/nonexistent"),
            reps: 2,
            jobs: 1,
            bytes: 1_000_000,
            buffer_pkts: 2000,
            points: 3,
            series: false,
            progress: ProgressMode::Quiet,
        }
    }

    #[test]
    fn options_out_of_range_are_refused_before_anything_is_written() {
        assert!(options().validate().is_ok());
        let bad = Options { buffer_pkts: 5, ..options() };
        let err = acpf(&bad).unwrap_err().to_string();
        assert_eq!(err, "--buffer-pkts = 5 is out of range: must be in 10..=100000");
        assert!(!Path::new("/nonexistent").exists());
        let err = Options { reps: 0, ..options() }.validate().unwrap_err();
        assert_eq!(err.flag, "--reps");
        assert_eq!(Options { bytes: 10, ..options() }.validate().unwrap_err().flag, "--bytes");
    }
}
