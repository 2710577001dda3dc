//! `braid reproduce coupled-cubic` as a library call: writes the base scenario and the specs
//! into the output folder, runs both sweeps in-process with braid-sweep, runs the Figure 5
//! and 6 examples, and writes `utilisation.csv` and `reproduce.json`.
//!
//! The folder (docs/sweeps.md, "braid reproduce coupled-cubic"):
//!
//! | path | what |
//! | --- | --- |
//! | `base.toml` | the default scenario, the base of both specs |
//! | `utilisation.toml`, `single_path.toml` | the sweep specs, for `braid sweep` by hand |
//! | `utilisation/`, `single_path/` | their sweep folders (`runs.parquet`, `runs.jsonl`, ...) |
//! | `utilisation.csv` | see [`super::tables`] |
//! | `series/<label>/` | Figures 5 and 6: `scenario.toml`, `throughput.csv`, `trace.csv`, `summary.json` |
//! | `README.md`, `reproduce.json` | the reading of the paper, the options, what ran |
//!
//! Resumable as nested-cc is; other options into the same folder are refused.

use std::path::{Path, PathBuf};
use std::time::Instant;

use braid_sweep::{ProgressMode, Summary as SweepSummary};
use serde::Serialize;

use super::specs;
use super::tables::{utilisation_rows, HEADER};
use super::{
    bdp_pkts, series_examples, LOSS, OFFERED_MBPS, PACKET_BYTES, SERIES, SERIES_NOTE, SETUP_NOTE,
    SINGLE_PATH, SUBFLOWS, VARIANTS,
};
use crate::error::{OptionError, ReproduceError};
use crate::folder::{self, write, write_once, BASE_FILE};
use crate::series::{self, SeriesSummary};
use crate::sweeps;

/// `--reps`: repetitions of each variant.
pub const REPS: (u32, u32) = (1, braid_sweep::spec::MAX_REPS);
/// `--seconds`: traffic per run (the paper: 1000 s).
pub const SECONDS: (u32, u32) = (1, 1000);
/// `--jobs`: worker threads.
pub const JOBS: (usize, usize) = (1, 1024);
/// The default `--seconds`: what keeps the whole reproduction (default reps) to about two
/// minutes of wall time on two cores in a release build.
pub const DEFAULT_SECONDS: u32 = 60;
/// The default `--reps`.
pub const DEFAULT_REPS: u32 = 2;

/// How to run the reproduction.
#[derive(Debug, Clone)]
pub struct Options {
    pub out: PathBuf,
    /// Repetitions of each variant ([`REPS`]).
    pub reps: u32,
    /// Worker threads ([`JOBS`]).
    pub jobs: usize,
    /// Seconds of traffic per run ([`SECONDS`]).
    pub seconds: u32,
    /// Run the Figure 5 and 6 examples.
    pub series: bool,
    pub progress: ProgressMode,
}

impl Options {
    /// Every option inside its range, else the first that is not, named by its flag.
    pub fn validate(&self) -> Result<(), OptionError> {
        OptionError::check("--reps", self.reps, REPS.0, REPS.1)?;
        OptionError::check("--jobs", self.jobs, JOBS.0, JOBS.1)?;
        OptionError::check("--seconds", self.seconds, SECONDS.0, SECONDS.1)
    }
}

/// What an invocation did; also the `runs` part of `reproduce.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub utilisation: SweepSummary,
    pub single_path: SweepSummary,
    pub series_ran: usize,
    pub series_skipped: usize,
    pub wall_s: f64,
}

/// Runs (or resumes) the whole reproduction into `opts.out`.
pub fn coupled_cubic(opts: &Options) -> Result<Outcome, ReproduceError> {
    opts.validate()?;
    let start = Instant::now();
    let dir = &opts.out;
    folder::create(dir)?;
    write_once(&dir.join(BASE_FILE), &folder::default_scenario()?)?;
    let two_path = dir.join("utilisation.toml");
    write_once(&two_path, &specs::utilisation(opts.seconds, opts.reps))?;
    let one_path = dir.join("single_path.toml");
    write_once(&one_path, &specs::single_path(opts.seconds, opts.reps))?;
    write_readme(dir, opts)?;
    // One set of caches for every sweep of this reproduction (braid_sweep::Caches).
    let caches = std::sync::Arc::new(braid_sweep::Caches::default());

    let mut csv = String::from(HEADER);
    let mut summaries = Vec::new();
    for (which, spec_path) in [("utilisation", &two_path), ("single_path", &one_path)] {
        let (spec, summary) =
            sweeps::run(which, spec_path, dir.join(which), opts.jobs, opts.progress, &caches)?;
        let finished = sweeps::finished(which, &spec, &dir.join(which))?;
        csv += &utilisation_rows(&spec, &finished)
            .map_err(|source| ReproduceError::Tables { which: "utilisation table", source })?;
        summaries.push(summary);
    }
    write(&dir.join("utilisation.csv"), &csv)?;
    let SeriesSummary { ran, skipped } = if opts.series {
        let examples = series_examples(opts.seconds);
        series::run_all(&dir.join(BASE_FILE), &dir.join("series"), &examples, opts.jobs)?
    } else {
        SeriesSummary::default()
    };
    let single_path = summaries.pop().expect("two sweeps ran");
    let utilisation = summaries.pop().expect("two sweeps ran");
    let outcome = Outcome {
        utilisation,
        single_path,
        series_ran: ran,
        series_skipped: skipped,
        wall_s: start.elapsed().as_secs_f64(),
    };
    write_manifest(dir, opts, &outcome)?;
    Ok(outcome)
}

/// `reproduce.json`: the options, the reading of the paper, and what the last run did.
fn write_manifest(dir: &Path, opts: &Options, outcome: &Outcome) -> Result<(), ReproduceError> {
    let subflows: Vec<serde_json::Value> = SUBFLOWS
        .iter()
        .map(|s| {
            serde_json::json!({
                "name": s.name, "rate_mbps": s.rate_mbps, "rtt_ms": s.rtt_ms,
                "buffer_pkts": bdp_pkts(s), "loss": LOSS,
            })
        })
        .collect();
    let variants: Vec<serde_json::Value> = VARIANTS
        .iter()
        .chain([&SINGLE_PATH])
        .map(|v| {
            serde_json::json!({
                "label": v.label, "tunnel_cc": v.tunnel_cc,
                "alpha_refinements": v.alpha_refinements,
                "single_path": v.label == SINGLE_PATH.label,
            })
        })
        .collect();
    let series: Vec<serde_json::Value> = SERIES
        .iter()
        .map(|r| {
            serde_json::json!({
                "label": r.label, "figure": r.figure, "variant": r.variant,
                "dir": format!("series/{}", r.label),
            })
        })
        .collect();
    let manifest = serde_json::json!({
        "experiment": "coupled-cubic",
        "paper": "Lee et al. 2023, Coupled CUBIC Congestion Control for MPTCP in Broadband \
                  Networks, Computer Systems Science and Engineering 45(1)",
        "options": { "reps": opts.reps, "seconds": opts.seconds, "jobs": opts.jobs,
                     "series": opts.series },
        "paper_seconds": 1000,
        "subflows": subflows,
        "offered_mbps": OFFERED_MBPS,
        "packet_bytes": PACKET_BYTES,
        "scheduler": "srtt",
        "variants": variants,
        "setup_note": SETUP_NOTE,
        "series": series,
        "series_note": SERIES_NOTE,
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
        "# braid reproduce coupled-cubic\n\n\
         Lee et al. 2023, \"Coupled CUBIC Congestion Control for MPTCP in Broadband Networks\" \
         (Computer Systems Science and Engineering 45(1)), rerun in braid-sim: {} s of traffic \
         per run (the paper: 1000 s), {} repetitions per variant.\n\n\
         - `utilisation/`, `single_path/`: Figure 7, the sweeps of `utilisation.toml` (LIA, \
         CCUBIC(alpha_1), CCUBIC(alpha_2), uncoupled CUBIC and NewReno over both paths) and \
         `single_path.toml` (CUBIC over the large path alone); `utilisation.csv` summarises \
         them.\n\
         - `series/<label>/trace.csv`: Figures 5 and 6, each subflow's window over time.\n\
         - `index.html`: the figures and the table, with their captions.\n\
         - `reproduce.json`: the options, the reading of the paper, and what ran.\n\n\
         ## Set-up\n\n{SETUP_NOTE}\n\n## Figures 5 and 6\n\n{SERIES_NOTE}\n\n\
         Rerun the same `braid reproduce coupled-cubic` command to resume. Figures: \
         `python3 -m braid.figures coupled-cubic .`\n",
        opts.seconds, opts.reps
    );
    write(&dir.join("README.md"), &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_out_of_range_are_refused() {
        let opts = Options {
            out: PathBuf::from("/nonexistent"),
            reps: 2,
            jobs: 1,
            seconds: 0,
            series: false,
            progress: ProgressMode::Quiet,
        };
        let err = coupled_cubic(&opts).unwrap_err().to_string();
        assert_eq!(err, "--seconds = 0 is out of range: must be in 1..=1000");
        assert!(Options { seconds: 1000, ..opts.clone() }.validate().is_ok());
        assert_eq!(Options { jobs: 0, seconds: 5, ..opts }.validate().unwrap_err().flag, "--jobs");
    }
}
