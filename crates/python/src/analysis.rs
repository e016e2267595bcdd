//! The native half of `arbiter.setools.permmap`: setools 4.4.1's permission map files are
//! validated by the engine's parser (`arbiter_analysis::permmap`, the one `arbiter
//! infoflow` uses), so the Python `PermissionMap` and the CLI accept and refuse the same
//! files with the same `FILE:LINE:reason: token` messages.

use arbiter_analysis::permmap::{PermissionMap, SETOOLS_PERM_MAP};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Checks permission map text read from `path`; a refused map raises `ValueError(message)`
/// with setools' wording, which `permmap.py` turns into `PermissionMapParseError`.
#[pyfunction]
fn _check_perm_map(path: &str, text: &str) -> PyResult<()> {
    PermissionMap::parse(path, text)
        .map(|_| ())
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Where setools' own default map is installed (read from there, never shipped: see
/// `arbiter_analysis::permmap`).
#[pyfunction]
fn _default_perm_map() -> &'static str {
    SETOOLS_PERM_MAP
}

/// Adds the analysis functions to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_check_perm_map, m)?)?;
    m.add_function(wrap_pyfunction!(_default_perm_map, m)?)?;
    Ok(())
}
