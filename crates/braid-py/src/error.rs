//! Errors as Python sees them: one exception type, the CLI's words.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::PyErr;

create_exception!(
    _native,
    BraidError,
    PyValueError,
    "Bad input or a failed run: the message is the one the `braid` command prints."
);

/// `err` and its sources joined by ": ", as the CLI prints an error (`error: {e:#}` of
/// anyhow), so a message can be searched for in either place.
pub fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// [`BraidError`] carrying `err`'s [`chain`].
pub fn to_py(err: impl std::error::Error + 'static) -> PyErr {
    BraidError::new_err(chain(&err))
}
