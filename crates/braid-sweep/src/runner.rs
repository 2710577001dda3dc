//! One run: its cell's scenario, its seed, the simulation, its baseline, and the journal
//! record that says how it went. A run that fails (a bad combination of values, an incomplete
//! transfer, a broken invariant, even a panic) is a record with status "error", never the end
//! of the sweep.

use std::panic::{catch_unwind, AssertUnwindSafe};

use braid_sim::{run, Report, Scenario};

use crate::backend::Measure;
use crate::baseline::BaselineCache;
use crate::hash::fnv1a_hex;
use crate::journal::Record;
use crate::once_map::OnceMap;
use crate::plan::{cell_overrides, run_key};
use crate::spec::Spec;
use crate::{BRAID_VERSION, GIT_COMMIT};

/// A finished run: its journal line and whether it succeeded.
#[derive(Debug, Clone)]
pub struct Finished {
    pub id: u64,
    pub line: String,
    pub ok: bool,
    /// The measuring backend was asked to stop during the run: not a result, not journaled.
    pub cancelled: bool,
}

/// What a run produced, before it is written down.
#[derive(Default)]
struct Outcome {
    seed: Option<u64>,
    scenario_hash: Option<String>,
}

/// Reports by resolved scenario (its TOML, seed included, the `keys` list left out: after
/// resolution it only names overlays already applied to the fields, and nothing that simulates
/// reads it): two cells whose overrides resolve to the same scenario (a key that restates a
/// default, e.g. `BUF500` or `CDL0`) are simulated once, and both rows get that run's report,
/// which is the report a second simulation would give bit for bit (the simulator is
/// deterministic given the scenario and its seed).
pub type RunCache = OnceMap<Result<Report, String>>;

/// Runs run `id` of the sweep in the simulator and makes its journal record.
pub fn execute(spec: &Spec, id: u64, cache: &BaselineCache, runs: &RunCache) -> Finished {
    execute_with(spec, id, cache, runs, None)
}

/// Runs run `id` with `backend` (the simulator when `None`) and makes its journal record.
pub fn execute_with(
    spec: &Spec,
    id: u64,
    cache: &BaselineCache,
    runs: &RunCache,
    backend: Option<&dyn Measure>,
) -> Finished {
    let key = run_key(spec, id);
    let mut outcome = Outcome::default();
    let overrides = cell_overrides(spec, &key);
    let caught = catch_unwind(AssertUnwindSafe(|| match backend {
        // The simulator's report is serialized once; a backend's text is checked to be JSON.
        None => simulate(spec, &overrides, key.rep, cache, runs, &mut outcome)
            .and_then(|r| serde_json::value::to_raw_value(&r).map_err(|e| e.to_string())),
        Some(b) => measure(spec, &overrides, key.rep, b, &mut outcome).and_then(|text| {
            serde_json::value::RawValue::from_string(text).map_err(|e| format!("the report: {e}"))
        }),
    }));
    let result = match caught {
        Ok(result) => result,
        Err(panic) => Err(format!(
            "{} panicked: {}",
            backend.map_or("the simulator", |b| b.name()),
            panic_message(&panic)
        )),
    };
    let (report, error) = match &result {
        Ok(report) => (Some(report.as_ref()), None),
        Err(e) => (None, Some(e.as_str())),
    };
    let record = Record {
        run: id,
        rep: key.rep,
        seed: outcome.seed,
        status: if report.is_some() { "ok" } else { "error" },
        error,
        braid_version: BRAID_VERSION,
        git_commit: GIT_COMMIT,
        scenario_hash: outcome.scenario_hash.as_deref(),
        report,
    };
    let line = serde_json::to_string(&record).expect("a record serializes");
    let cancelled = backend.is_some_and(|b| b.cancelled());
    Finished { id, line, ok: report.is_some(), cancelled }
}

/// Seed of repetition `rep` of a cell whose resolved scenario has seed `seed`.
pub fn rep_seed(seed: u64, rep: u32) -> Result<u64, String> {
    seed.checked_add(u64::from(rep))
        .ok_or_else(|| format!("seed {seed} + rep {rep} does not fit in 64 bits; lower seed"))
}

/// The run's scenario, as [`simulate`] resolves it, measured by `backend`.
fn measure(
    spec: &Spec,
    overrides: &[String],
    rep: u32,
    backend: &dyn Measure,
    outcome: &mut Outcome,
) -> Result<String, String> {
    let s = resolve(spec, overrides, rep, outcome)?;
    backend.measure(&s, spec.baseline)
}

/// The run's scenario: the cell's, with its repetition's seed; records both in `outcome`.
fn resolve(
    spec: &Spec,
    overrides: &[String],
    rep: u32,
    outcome: &mut Outcome,
) -> Result<Scenario, String> {
    let mut s: Scenario = Scenario::load(&spec.base, overrides).map_err(|e| e.to_string())?;
    s.seed = rep_seed(s.seed, rep)?;
    outcome.seed = Some(s.seed);
    let toml = s.to_toml_string().map_err(|e| e.to_string())?;
    outcome.scenario_hash = Some(fnv1a_hex(&toml));
    Ok(s)
}

fn simulate(
    spec: &Spec,
    overrides: &[String],
    rep: u32,
    cache: &BaselineCache,
    runs: &RunCache,
    outcome: &mut Outcome,
) -> Result<Report, String> {
    let s = resolve(spec, overrides, rep, outcome)?;
    let unkeyed = Scenario { keys: Vec::new(), ..s.clone() };
    let run_key = unkeyed.to_toml_string().map_err(|e| e.to_string())?;
    let mut report = runs
        .get_or_compute(run_key, || run(&s, false).map(|o| o.report).map_err(|e| e.to_string()))?;
    if spec.baseline {
        // As braid_sim::run_with_baseline computes them.
        let base = cache.dlct_s(&s)?;
        report.baseline_dlct_s = Some(base);
        report.relative_dlct = Some(report.dlct_s / base);
    }
    Ok(report)
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rep_seeds_count_up_and_refuse_overflow() {
        assert_eq!(rep_seed(1, 0), Ok(1));
        assert_eq!(rep_seed(1, 2), Ok(3));
        assert!(rep_seed(u64::MAX, 1).unwrap_err().contains("64 bits"));
    }
}
