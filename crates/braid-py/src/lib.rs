//! `braid._native`: the simulator and the sweep engine inside the Python interpreter.
//!
//! The Python package (python/braid) is the interface researchers use; this module is its
//! engine room and keeps to plain values (paths, override strings, JSON text, columns as
//! lists), so that the Python side owns the API and pandas. Every call that simulates releases
//! the GIL (`Python::detach`), so Python threads, and a Dask worker's other tasks, keep running.

use pyo3::prelude::*;

mod error;
mod series;
mod simulate;
mod sweep;

pub use error::BraidError;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("BraidError", m.py().get_type::<BraidError>())?;
    m.add("__version__", braid_sweep::BRAID_VERSION)?;
    m.add("GIT_COMMIT", braid_sweep::GIT_COMMIT)?;
    m.add_function(wrap_pyfunction!(simulate::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep_local, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep_prepare, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep_execute, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep_record, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep_complete, m)?)?;
    Ok(())
}
