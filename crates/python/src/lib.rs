//! arbiter for Python: the security server, its access vector cache and policy reading,
//! as the extension module `arbiter` (PyO3; built and installed by maturin with
//! `pip install ./crates/python`).
//!
//! ```python
//! import arbiter
//! srv = arbiter.Server(arbiter.Policy.open("/etc/selinux/default/policy/policy.33"))
//! v = srv.check("system_u:system_r:httpd_t:s0", "system_u:object_r:httpd_sys_content_t:s0",
//!               "file", ["read", "open"])
//! assert v.allowed and bool(v)
//! ```
//!
//! Every object is immutable from Python's side (`frozen`) and holds the engine behind an
//! `Arc`, so one `Server` or `Avc` can be shared by any number of Python threads; the batch
//! calls release the GIL and run on every core (the `batch` module explains how). Engine errors
//! become exceptions of one hierarchy ([`errors`]), and no Rust panic crosses into Python.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod analysis;
mod avc;
mod batch;
mod bsm;
mod build;
mod checker;
mod decision;
mod denials;
pub mod errors;
mod explanation;
mod fleet;
mod landlock;
mod policy;
mod server;
pub mod setools;

pub use avc::Avc;
pub use decision::{AvDecision, Verdict};
pub use explanation::Explanation;
pub use policy::Policy;
pub use server::Server;

use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;

/// Panics inside the boundary guard, so the tests can pin that a panic becomes
/// `arbiter.Error` instead of unwinding into the interpreter. Not part of the API.
#[pyfunction]
fn _panic_for_tests() -> PyResult<()> {
    errors::guard(|| -> PyResult<()> { panic!("deliberate panic for the tests") })
}

/// The extension module `arbiter._native`, re-exported by the package `arbiter`.
///
/// Only what every `arbiter.setools` script uses is made at import: the exception
/// hierarchy and setools' classes and functions. The other groups of names (the security
/// server and cache, denials, BSM, Landlock, the compiler, the analyses) are made on first
/// use through the module's `__getattr__` (PEP 562; `from arbiter._native import X` ends
/// there too), so a setools script never builds their type objects nor runs their
/// registration code: its pages of the extension stay unread.
#[pymodule]
#[pyo3(name = "_native")]
fn arbiter_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    m.add_class::<setools::PolicyDb>()?;
    m.add_class::<setools::TeResults>()?;
    setools::register(m)?;
    m.add_function(wrap_pyfunction!(module_getattr, m)?)?;
    m.add_function(wrap_pyfunction!(module_dir, m)?)?;
    Ok(())
}

/// A group of the module's names registered together on first use: its names (each must
/// be one its function adds; `tests/test_native_lazy.py` holds the lists to the functions)
/// and its registration function.
type LazyGroup = (
    &'static [&'static str],
    fn(&Bound<'_, PyModule>) -> PyResult<()>,
);

/// The names made on first use, by group.
const LAZY: &[LazyGroup] = &[
    (
        &[
            "Policy",
            "Server",
            "Avc",
            "Verdict",
            "AvDecision",
            "Explanation",
            "_panic_for_tests",
        ],
        register_engine,
    ),
    (
        &["LogError", "Denials", "Report", "Denial", "Digest"],
        denials::register,
    ),
    (&["CheckerDb"], checker::register),
    (
        &["Dta", "InfoFlow", "_check_perm_map", "_default_perm_map"],
        analysis::register,
    ),
    (
        &[
            "_fleet_digest",
            "_fleet_digest_ranges",
            "_fleet_merge",
            "_fleet_finish",
        ],
        fleet::register,
    ),
    (
        &[
            "TrailError",
            "Token",
            "Record",
            "PrintReport",
            "ReduceReport",
            "Selection",
            "_bsm_records",
            "_bsm_praudit",
            "_bsm_reduce",
            "_bsm_preselect",
            "_bsm_digest",
        ],
        bsm::register,
    ),
    (
        &[
            "LandlockConfigError",
            "Landlock",
            "Evaluation",
            "_landlock_load",
        ],
        landlock::register,
    ),
    (&["CompileError", "Build", "compile"], build::register),
];

/// The security server, its cache and their results.
fn register_engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Policy>()?;
    m.add_class::<Server>()?;
    m.add_class::<Avc>()?;
    m.add_class::<Verdict>()?;
    m.add_class::<AvDecision>()?;
    m.add_class::<Explanation>()?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    Ok(())
}

/// The module's `__getattr__` (PEP 562), called for a name not yet in its namespace:
/// registers the group that holds `name` and returns it; `AttributeError` for any other.
#[pyfunction]
#[pyo3(pass_module, name = "__getattr__")]
fn module_getattr<'py>(m: &Bound<'py, PyModule>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    if let Some((_, register)) = LAZY.iter().find(|(names, _)| names.contains(&name)) {
        register(m)?;
        // Read from the namespace, not `getattr`: a name its group failed to add must not
        // come back here.
        if let Some(value) = m.dict().get_item(name)? {
            return Ok(value);
        }
    }
    Err(PyAttributeError::new_err(format!(
        "module 'arbiter._native' has no attribute '{name}'"
    )))
}

/// The module's `__dir__`: its namespace and the names made on first use.
#[pyfunction]
#[pyo3(pass_module, name = "__dir__")]
fn module_dir(m: &Bound<'_, PyModule>) -> PyResult<Vec<String>> {
    let mut names: Vec<String> = m.dict().keys().extract()?;
    names.extend(
        LAZY.iter()
            .flat_map(|(n, _)| n.iter().map(|s| s.to_string())),
    );
    names.sort_unstable();
    names.dedup();
    Ok(names)
}
