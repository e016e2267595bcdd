//! The native half of `arbiter.setools.checker.PolicyChecker`: sechecker 4.4.1's checks
//! (`arbiter_analysis::checker`) run on a policy, with the report's body returned to
//! Python, which adds the timestamps and writes to its `output` file object.

use arbiter_analysis::checker::{CheckerError, PolicyChecker, Report};
use arbiter_policy::Policy;
use arbiter_query::Index;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::Arc;

/// A validated checker configuration bound to its policy.
#[pyclass(frozen, module = "arbiter._native")]
pub struct CheckerDb {
    model: Arc<Policy>,
    checker: PolicyChecker,
}

/// The exception family a configuration error maps to on the Python side, and its text:
/// raised as `ValueError((kind, message))` and translated by `checker.py`.
fn refused(e: &CheckerError) -> PyErr {
    let kind = match e {
        CheckerError::MissingCheckType { .. } | CheckerError::UnknownCheckType { .. } => "module",
        CheckerError::InvalidOption { .. } => "option",
        CheckerError::InvalidValue(_) => "value",
        CheckerError::Interpolation(_) => "interpolation",
        _ => "config",
    };
    PyValueError::new_err((kind, e.to_string(), e.location()))
}

#[pymethods]
impl CheckerDb {
    /// Reads the policy (`bytes` image or path) and validates the configuration file
    /// `config` against it.
    #[new]
    fn new(py: Python<'_>, policy: &Bound<'_, PyAny>, config: String) -> PyResult<CheckerDb> {
        let model = if let Ok(b) = policy.cast::<PyBytes>() {
            let bytes = b.as_bytes().to_vec();
            py.detach(move || Policy::from_bytes(&bytes))
        } else {
            let path: std::path::PathBuf = policy.extract()?;
            py.detach(move || Policy::open(path))
        }
        .map_err(|e| PyValueError::new_err(("policy", e.to_string(), String::new())))?;
        let checker = {
            let index = Index::new(&model);
            PolicyChecker::open(&index, &config).map_err(|e| refused(&e))?
        };
        Ok(CheckerDb {
            model: Arc::new(model),
            checker,
        })
    }

    /// The checks: `(name, check_type, desc, disable)` in file order.
    fn checks(&self) -> Vec<(String, &'static str, Option<String>, Option<String>)> {
        self.checker
            .checks
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    c.kind.type_name(),
                    c.desc.clone(),
                    c.disable.clone(),
                )
            })
            .collect()
    }

    /// Runs every check: the report between its header and footer, and the failure count.
    fn run(&self, py: Python<'_>, config: String, policy: String) -> PyResult<(String, usize)> {
        let model = Arc::clone(&self.model);
        let checker = &self.checker;
        py.detach(move || {
            let index = Index::new(&model);
            let results = checker.run(&index);
            let report = Report {
                config: &config,
                policy: &policy,
                results: &results,
            };
            let mut body = Vec::new();
            report
                .write_checks(&mut body)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            Ok((
                String::from_utf8_lossy(&body).into_owned(),
                report.failures(),
            ))
        })
    }
}

/// Registers the class on the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CheckerDb>()
}
