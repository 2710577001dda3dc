//! The time-series examples of the reproductions (Pieska et al. 2024, Figures 4, 8a and 9a;
//! Pieska et al. 2021, Figure 4; Lee et al. 2023, Figures 5 and 6): one run each, written as
//! `braid sim --out` writes a run: `series/<label>/scenario.toml`, `throughput.csv` (`t_s,
//! goodput_mbps, <path>_mbps...`, one row per `sim.bin_ms` bin), `trace.csv` (windows, in
//! flight, queues, the ACPF fraction, one row per `sim.sample_interval_ms`) and `summary.json`
//! (the report), the summary last, so a folder with a summary is finished and a rerun skips it.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use braid_sim::Scenario;
use braid_sweep::outdir::write_atomic;

/// The file whose presence marks a finished example.
pub const SUMMARY: &str = "summary.json";

/// One example: the folder name under `series/` and the `--set` overrides of its run over the
/// base scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    pub label: String,
    pub overrides: Vec<String>,
}

/// Why an example could not be run or written.
#[derive(Debug, thiserror::Error)]
pub enum SeriesError {
    #[error("series {label}: the scenario does not load: {source}")]
    Scenario { label: String, source: braid_sim::scenario::ScenarioError },
    #[error("series {label}: the simulation failed: {message}")]
    Run { label: String, message: String },
    #[error("series {label}: {source}")]
    Write { label: String, source: braid_sweep::outdir::OutDirError },
    #[error("series {label}: cannot create {}: {source}", dir.display())]
    Dir { label: String, dir: PathBuf, source: std::io::Error },
}

/// What the examples did: how many ran now and how many were found finished.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SeriesSummary {
    pub ran: usize,
    pub skipped: usize,
}

/// Runs the examples not yet finished under `dir`, `jobs` at a time.
pub fn run_all(
    base: &Path,
    dir: &Path,
    all: &[Example],
    jobs: usize,
) -> Result<SeriesSummary, SeriesError> {
    let pending: Vec<&Example> =
        all.iter().filter(|s| !dir.join(&s.label).join(SUMMARY).is_file()).collect();
    let skipped = all.len() - pending.len();
    let next = AtomicUsize::new(0);
    let first_error: Mutex<Option<SeriesError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1).min(pending.len()) {
            scope.spawn(|| {
                while let Some(s) = pending.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Err(e) = run_one(base, &dir.join(&s.label), s) {
                        first_error.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                        break;
                    }
                }
            });
        }
    });
    match first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(e) => Err(e),
        None => Ok(SeriesSummary { ran: pending.len(), skipped }),
    }
}

fn run_one(base: &Path, dir: &Path, s: &Example) -> Result<(), SeriesError> {
    let label = s.label.clone();
    let scenario = Scenario::load(base, &s.overrides)
        .map_err(|source| SeriesError::Scenario { label: label.clone(), source })?;
    let out = braid_sim::run(&scenario, false)
        .map_err(|e| SeriesError::Run { label: label.clone(), message: e.to_string() })?;
    fs::create_dir_all(dir).map_err(|source| SeriesError::Dir {
        label: label.clone(),
        dir: dir.to_path_buf(),
        source,
    })?;
    let write = |name: &str, text: &str| {
        write_atomic(&dir.join(name), text)
            .map_err(|source| SeriesError::Write { label: label.clone(), source })
    };
    let toml = scenario
        .to_toml_string()
        .map_err(|e| SeriesError::Run { label: label.clone(), message: e.to_string() })?;
    write("scenario.toml", &toml)?;
    write("throughput.csv", &out.series.throughput_csv())?;
    write("trace.csv", &out.series.trace_csv())?;
    let json = serde_json::to_string_pretty(&out.report).expect("a report serializes");
    write(SUMMARY, &format!("{json}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_example_runs_once_and_writes_its_files() {
        let dir =
            std::env::temp_dir().join(format!("braid-reproduce-series-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/default.toml");
        let one = [Example {
            label: "fig0_short".into(),
            overrides: vec!["e2e.bytes=300000".into(), "keys=\"SHORT\"".into()],
        }];
        assert_eq!(run_all(&base, &dir, &one, 2).unwrap(), SeriesSummary { ran: 1, skipped: 0 });
        let folder = dir.join("fig0_short");
        let csv = fs::read_to_string(folder.join("throughput.csv")).unwrap();
        assert!(csv.starts_with("t_s,goodput_mbps,wifi_mbps,cellular_mbps\n"), "{csv}");
        let trace = fs::read_to_string(folder.join("trace.csv")).unwrap();
        assert!(trace.starts_with("t_s,e2e_cwnd_bytes,"), "{trace}");
        assert!(trace.lines().count() > 2, "{trace}");
        let scenario = fs::read_to_string(folder.join("scenario.toml")).unwrap();
        assert!(scenario.contains("SHORT"), "{scenario}");
        assert_eq!(run_all(&base, &dir, &one, 2).unwrap(), SeriesSummary { ran: 0, skipped: 1 });
        let _ = fs::remove_dir_all(&dir);
    }
}
