//! A sweep's finished runs grouped by cell (the repetitions of one combination of axis
//! values), for the tables every reproduction makes from its journals.
//!
//! A group holds the reports of its successful runs, as JSON, and counts the failed ones;
//! a table picks its numbers out of the reports by JSON pointer ([`number`]) and summarises
//! them with [`crate::stats`].

use std::collections::BTreeMap;

use braid_sweep::journal::Finished;
use braid_sweep::plan::run_key;
use braid_sweep::spec::AxisValue;
use braid_sweep::Spec;

/// Why a table could not be made from a journal.
#[derive(Debug, thiserror::Error)]
pub enum TablesError {
    #[error("the spec has no axis {axis}; it was not written by braid reproduce")]
    MissingAxis { axis: &'static str },
    #[error("the spec's {axis} value {label:?} is not one this reproduction writes")]
    UnknownLabel { axis: &'static str, label: String },
    #[error("journal record of run {id} cannot be read: {message}")]
    Record { id: u64, message: String },
}

/// The runs of one cell.
#[derive(Debug, Default, Clone)]
pub struct Group {
    /// The reports of the runs that succeeded, in run order.
    pub reports: Vec<serde_json::Value>,
    /// Runs that ended in an error.
    pub failed: u64,
}

impl Group {
    /// The number at `pointer` (e.g. `/paths/0/mean_mbps`) of every report that has one.
    pub fn values(&self, pointer: &str) -> Vec<f64> {
        self.reports.iter().filter_map(|r| number(r, pointer)).collect()
    }
}

/// A cell's key: for each axis of the spec, the index of the cell's value.
pub type CellKey = Vec<usize>;

/// The finished runs of `spec` grouped by cell. Cells without a finished run are absent.
pub fn group(spec: &Spec, finished: &Finished) -> Result<BTreeMap<CellKey, Group>, TablesError> {
    let mut groups: BTreeMap<CellKey, Group> = BTreeMap::new();
    for (&id, line) in finished {
        let record: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| TablesError::Record { id, message: e.to_string() })?;
        let group = groups.entry(run_key(spec, id).value_index).or_default();
        if record["status"] == "ok" {
            match record.get("report") {
                Some(r) if r.is_object() => group.reports.push(r.clone()),
                _ => {
                    let message = "an ok run without a report".to_string();
                    return Err(TablesError::Record { id, message });
                }
            }
        } else {
            group.failed += 1;
        }
    }
    Ok(groups)
}

/// The index of the axis named `name`.
pub fn axis(spec: &Spec, name: &'static str) -> Result<usize, TablesError> {
    spec.axes.iter().position(|a| a.key == name).ok_or(TablesError::MissingAxis { axis: name })
}

/// The `i`-th value of axis `a` as text: a table axis's label, a string as is.
pub fn label(spec: &Spec, a: usize, i: usize) -> String {
    match &spec.axes[a].values[i] {
        AxisValue::Str(s) => s.clone(),
        other => other.to_toml(),
    }
}

/// The finite number at `pointer` in `report`, if any.
pub fn number(report: &serde_json::Value, pointer: &str) -> Option<f64> {
    report.pointer(pointer).and_then(serde_json::Value::as_f64).filter(|v| v.is_finite())
}

/// A number for CSV: shortest exact form, empty when undefined.
pub fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_by_pointer_and_csv_form() {
        let r = serde_json::json!({"goodput_mbps": 12.5, "paths": [{"mean_mbps": 3}], "x": null});
        assert_eq!(number(&r, "/goodput_mbps"), Some(12.5));
        assert_eq!(number(&r, "/paths/0/mean_mbps"), Some(3.0));
        assert_eq!(number(&r, "/x"), None);
        assert_eq!(number(&r, "/paths/1/mean_mbps"), None);
        assert_eq!(num(0.25), "0.25");
        assert_eq!(num(f64::NAN), "");
        let g = Group { reports: vec![r.clone(), r], failed: 0 };
        assert_eq!(g.values("/goodput_mbps"), [12.5, 12.5]);
    }
}
