//! One scenario, simulated in-process: what `braid sim --json` prints, and the time series.

use std::path::PathBuf;

use braid_sim::{run, run_with_baseline, Scenario};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::error::to_py;
use crate::series;

/// Loads `scenario` with `overrides` (`dotted.key=value`, as `braid sim --set`), simulates it
/// (and, with `baseline`, its single-path baseline) with the GIL released, and returns the
/// report as `braid sim --json` prints it, the trace and throughput series as columns, and
/// the resolved scenario as TOML.
#[pyfunction]
#[pyo3(signature = (scenario, overrides, baseline=false))]
pub fn simulate<'py>(
    py: Python<'py>,
    scenario: PathBuf,
    overrides: Vec<String>,
    baseline: bool,
) -> PyResult<(String, Bound<'py, PyDict>, Bound<'py, PyDict>, String)> {
    let (s, out) = py.detach(|| {
        let s = Scenario::load(&scenario, &overrides).map_err(to_py)?;
        let out = if baseline { run_with_baseline(&s) } else { run(&s, false) };
        Ok::<_, PyErr>((s, out.map_err(to_py)?))
    })?;
    let report = serde_json::to_string(&out.report)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    let resolved = s.to_toml_string().map_err(to_py)?;
    let trace = series::trace_columns(py, &out.series)?;
    let throughput = series::throughput_columns(py, &out.series)?;
    Ok((report, trace, throughput, resolved))
}
